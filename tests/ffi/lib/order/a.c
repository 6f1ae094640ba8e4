// a.c: %which(_) is 1. order/a.c and order/b.c register it
// too: of a folder, the library whose name sorts last wins; a later
// --ffi overrides a folder loaded before it.

#include <hvm4g_ffi.h>

static const HvmApi *H;

static Term which(Term *args) {
  (void)args;
  return H->term_new_num(1);
}

void hvm_ffi_init(const HvmApi *api) {
  H = api;
  H->register_prim("which", 5, 1, which);
}
