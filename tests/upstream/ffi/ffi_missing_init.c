// ffi_missing_init.c: a shared library without hvm_ffi_init, which the
// runtime refuses to load (ffi_missing_init.hvm).

int ffi_missing_init_marker(void);

int ffi_missing_init_marker(void) {
  return 7;
}
