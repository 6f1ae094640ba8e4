// ffi_add.c: %c_add(a, b), the sum of two numbers (ffi_add.hvm).

#include <hvm4g_ffi.h>

static const HvmApi *H;

static Term c_add(Term *args) {
  Term a = H->wnf(args[0]);
  Term b = H->wnf(args[1]);
  if (H->term_tag(a) != NUM || H->term_tag(b) != NUM) {
    H->runtime_error("%c_add expects two numbers");
  }
  return H->term_new_num((u32)(H->term_val(a) + H->term_val(b)));
}

void hvm_ffi_init(const HvmApi *api) {
  H = api;
  if (H->abi_version != ABI_VERSION) H->runtime_error("FFI ABI mismatch");
  H->register_prim("c_add", 5, 2, c_add);
}
