// check.h: the unit tests' counters. CHECK(c) counts c as a pass or prints
// the failing line; check_done() prints the last line, "N passed, N
// failed", and gives the exit status.

#ifndef HVM4G_CHECK_H
#define HVM4G_CHECK_H

#include <stdio.h>
#include "heap/rt.h"
#include "run/api.h"

// Every test program works in one runtime's context, made before main
// with the defaults (a test sets the options it needs in RT's parts).
// `used`: a test that never reads it must keep it, and its context reachable
__attribute__((used)) static Rt *TEST_RT;
__attribute__((constructor)) static void test_context(void) {
  Options o;
  api_options_default(&o);
  TEST_RT = RT = api_context(&o);
}

static int PASS = 0;
static int FAIL = 0;

#define CHECK(c) do { \
  if (c) { PASS++; } \
  else   { FAIL++; printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); } \
} while (0)

static inline int check_done(void) {
  printf("%d passed, %d failed\n", PASS, FAIL);
  return FAIL != 0;
}

#ifdef HVM4G_HEAP_H
#include <stdlib.h>
// n fresh heap words for a node built by hand (tests that use the heap)
static inline u32 nodes(u32 n) {
  u32 at = heap_alloc(n);
  if (at == 0) {
    printf("test heap exhausted\n");
    exit(1);
  }
  return at;
}

// A node of two fields built by hand: TAG(tag, ext) over [a, b].
static inline Term node2(u32 tag, u32 ext, Term a, Term b) {
  u32 at = nodes(2);
  RT->heap.at[at]     = a;
  RT->heap.at[at + 1] = b;
  return TERM(tag, ext, at);
}
#endif

#endif
