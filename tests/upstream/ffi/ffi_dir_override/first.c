// first.c: one of two libraries of a folder that both register
// %ffi_same (ffi_dir_override.hvm): the one loaded second overrides the
// first, with a warning. Both give 7, so either order gives the output.

#include <hvm4g_ffi.h>

static const HvmApi *H;

static Term seven(Term *args) {
  (void)args;
  return H->term_new_num(7);
}

void hvm_ffi_init(const HvmApi *api) {
  H = api;
  if (H->abi_version != ABI_VERSION) H->runtime_error("FFI ABI mismatch");
  H->register_prim("ffi_same", 8, 1, seven);
}
