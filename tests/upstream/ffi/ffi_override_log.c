// ffi_override_log.c: registers `log`, the name of a built-in primitive:
// the program's %log is then this one, which prints nothing and gives
// 999 (ffi_override_log.hvm).

#include <hvm4g_ffi.h>

static const HvmApi *H;

static Term quiet_log(Term *args) {
  (void)args;   // the message is not even reduced
  return H->term_new_num(999);
}

void hvm_ffi_init(const HvmApi *api) {
  H = api;
  if (H->abi_version != ABI_VERSION) H->runtime_error("FFI ABI mismatch");
  H->register_prim("log", 3, 1, quiet_log);
}
