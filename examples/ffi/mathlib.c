// mathlib.c: a small library of primitives for hvm4g (and HVM4): %gcd on
// numbers, %swap on a constructor. Build and run (from the repository):
//
//   cc -shared -fPIC -I include -o mathlib.so examples/ffi/mathlib.c
//   ./hvm4g examples/ffi/main.hvm4 --ffi ./mathlib.so
//
// (-dynamiclib and mathlib.dylib on macOS.) docs/ffi.md describes the
// table of functions a library is given.

#include <hvm4g_ffi.h>

static const HvmApi *H;
static u32 PAIR;   // the constructor #Pair, as the program spells it

// A number argument, or the run ends with the message `why`.
static u32 number(Term t, const char *why) {
  Term v = H->wnf(t);
  if (H->term_tag(v) != NUM) H->runtime_error(why);
  return (u32)H->term_val(v);
}

// %gcd(a, b): the greatest common divisor of two numbers.
static Term gcd(Term *args) {
  u32 a = number(args[0], "%gcd expects numbers");
  u32 b = number(args[1], "%gcd expects numbers");
  while (b != 0) {
    u32 r = a % b;
    a = b;
    b = r;
  }
  return H->term_new_num(a);
}

// %swap(#Pair{a, b}): #Pair{b, a}. Its fields are not reduced: they move.
static Term swap(Term *args) {
  Term p = H->wnf(args[0]);
  if (H->term_tag(p) != C02 || H->term_ext(p) != PAIR) H->runtime_error("%swap expects a #Pair");
  u64  at        = H->term_val(p);
  Term fields[2] = { H->heap_read(at + 1), H->heap_read(at) };
  return H->term_new_ctr(PAIR, 2, fields);
}

void hvm_ffi_init(const HvmApi *api) {
  H = api;
  if (H->abi_version != ABI_VERSION) H->runtime_error("mathlib: FFI ABI mismatch");
  PAIR = H->name_from_str("Pair", 4);
  H->register_prim("gcd", 3, 2, gcd);
  H->register_prim("swap", 4, 1, swap);
}
