// sanitize.h: SANITIZED is defined in a host build under AddressSanitizer
// or ThreadSanitizer (clang's and gcc's tests): the few things such a
// build must not do (sched.c's heir, reclaim.c's load-time choice of code)
// are left out there.

#ifndef HVM4G_SANITIZE_H
#define HVM4G_SANITIZE_H

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#endif

#endif
