// ffi_arity_mismatch.c: %ffi_one(n) takes one argument; the program
// gives it two, which the parser refuses (ffi_arity_mismatch.hvm).

#include <hvm4g_ffi.h>

static const HvmApi *H;

static Term one(Term *args) {
  Term n = H->wnf(args[0]);
  if (H->term_tag(n) != NUM) H->runtime_error("%ffi_one expects a number");
  return n;
}

void hvm_ffi_init(const HvmApi *api) {
  H = api;
  if (H->abi_version != ABI_VERSION) H->runtime_error("FFI ABI mismatch");
  H->register_prim("ffi_one", 7, 1, one);
}
