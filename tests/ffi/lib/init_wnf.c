// init_wnf.c: reduces a term in its hvm_ffi_init, before any program
// exists to reduce: refused.

#include <hvm4g_ffi.h>

void hvm_ffi_init(const HvmApi *api) {
  api->wnf(api->term_new_num(1));
}
