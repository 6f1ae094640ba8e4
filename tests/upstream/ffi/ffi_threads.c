// ffi_threads.c: %ffi_inc(n) is n + 1, called from a program run on four
// threads (ffi_threads.hvm): the table's functions work on any thread the
// runtime calls a primitive from.

#include <hvm4g_ffi.h>

static const HvmApi *H;

static Term inc(Term *args) {
  Term n = H->wnf(args[0]);
  if (H->term_tag(n) != NUM) H->runtime_error("%ffi_inc expects a number");
  return H->term_new_num((u32)H->term_val(n) + 1);
}

void hvm_ffi_init(const HvmApi *api) {
  H = api;
  if (H->abi_version != ABI_VERSION) H->runtime_error("FFI ABI mismatch");
  H->register_prim("ffi_inc", 7, 1, inc);
}
