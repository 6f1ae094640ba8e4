// refuse.c: built for a table version no runtime has: refuses the
// runtime in its hvm_ffi_init.

#include <hvm4g_ffi.h>

void hvm_ffi_init(const HvmApi *api) {
  if (api->abi_version != ABI_VERSION + 1) api->runtime_error("FFI ABI mismatch");
}
