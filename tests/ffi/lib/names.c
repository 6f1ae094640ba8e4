// names.c: constructor names asked for while the program runs, from
// whichever thread calls the primitive (-T4 runs calls on the pool's
// threads at once). %named(n) is #Seen<n mod 4>{n} (names the program
// spells too) wrapped in a constructor that only the library names,
// #Lib_only_<n mod 8>; every id a name was given is kept, and a name given
// two ids is an error: the table gives each spelling one id on any thread.

#include <hvm4g_ffi.h>

static const HvmApi *H;
static u32 IDS[2][8];   // the id each name got first, plus one (0: none yet)

static u32 name_of(u32 kind, u32 k) {
  char nm[16] = "Seen0";
  u32  len = 5;
  if (kind == 1) {
    const char *p = "Lib_only_0";
    for (len = 0; p[len]; len++) nm[len] = p[len];
  }
  nm[len - 1] = (char)('0' + k);
  u32 id  = H->name_from_str(nm, len);
  u32 was = 0;
  if (!__atomic_compare_exchange_n(&IDS[kind][k], &was, id + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) &&
      was != id + 1) {
    H->runtime_error("%named: one name got two ids");
  }
  if (H->table_find(nm, len) != id) H->runtime_error("%named: table_find and name_from_str differ");
  return id;
}

static Term named(Term *args) {
  Term n = H->wnf(args[0]);
  if (H->term_tag(n) != NUM) H->runtime_error("%named expects a number");
  u32  v     = (u32)H->term_val(n);
  Term inner = H->term_new_ctr(name_of(0, v % 4), 1, &n);
  return H->term_new_ctr(name_of(1, v % 8), 1, &inner);
}

void hvm_ffi_init(const HvmApi *api) {
  H = api;
  if (H->abi_version != ABI_VERSION) H->runtime_error("FFI ABI mismatch");
  H->register_prim("named", 5, 1, named);
}
