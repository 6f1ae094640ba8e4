// noinit.c: a shared library without hvm_ffi_init.

int noinit_marker(void);

int noinit_marker(void) {
  return 1;
}
