// inc.c: %ffi_inc(n) is n + 1; double.c, loaded from the same folder,
// gives %ffi_double (ffi_dir_two_libs.hvm).

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
