// ffi_abi_mismatch.c: a library built for a table version the runtime
// does not have: it refuses the runtime in its hvm_ffi_init, before it
// registers anything (ffi_abi_mismatch.hvm).

#include <hvm4g_ffi.h>

#define BUILT_FOR (ABI_VERSION + 1)   // a version no runtime offers yet

static const HvmApi *H;

static Term zero(Term *args) {
  (void)args;
  return H->term_new_num(0);
}

void hvm_ffi_init(const HvmApi *api) {
  H = api;
  if (H->abi_version != BUILT_FOR) H->runtime_error("FFI ABI mismatch");
  H->register_prim("ffi_dummy", 9, 0, zero);
}
