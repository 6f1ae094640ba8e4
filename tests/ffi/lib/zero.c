// zero.c: %zero takes no argument, which HVM4's parser never accepts at
// a call: registered, and not callable.

#include <hvm4g_ffi.h>

static const HvmApi *H;

static Term zero(Term *args) {
  (void)args;
  return H->term_new_num(0);
}

void hvm_ffi_init(const HvmApi *api) {
  H = api;
  H->register_prim("zero", 4, 0, zero);
}
