// api.c: a primitive for each entry of the table (include/hvm4g_ffi.h),
// so that the programs of tests/ffi/ check what each reads and builds:
// constructors and labels named as the program names them, lambdas and
// their variables, applications, tags and EXT fields in HVM4's numbers,
// a call of many arguments, and the errors a library may raise.

#include <hvm4g_ffi.h>

static const HvmApi *H;
static u32 PAIR;   // #Pair
static u32 LAB;    // &A

static Term num_arg(Term *args, u32 i, const char *who) {
  Term n = H->wnf(args[i]);
  if (H->term_tag(n) != NUM) H->runtime_error(who);
  return n;
}

// %pair(a, b): #Pair{a, b}, its fields unreduced
static Term pair(Term *args) {
  return H->term_new_ctr(PAIR, 2, args);
}

// %fst(p): the first field of a #Pair
static Term fst(Term *args) {
  Term p = H->wnf(args[0]);
  if (H->term_tag(p) != C02 || H->term_ext(p) != PAIR) H->runtime_error("%fst expects a #Pair");
  return H->heap_read(H->term_val(p));
}

// %sum5(a, b, c, d, e)
static Term sum5(Term *args) {
  u32 s = 0;
  for (u32 i = 0; i < 5; i++) s += (u32)H->term_val(num_arg(args, i, "%sum5 expects numbers"));
  return H->term_new_num(s);
}

// %sup(a, b): &A{a, b}
static Term sup(Term *args) {
  return H->term_new_sup(LAB, args[0], args[1]);
}

// %konst(x): λ_. x
static Term konst(Term *args) {
  return H->term_new_lam(args[0]);
}

// %ident(_): λx. x, its binder's slot taken first
static Term ident(Term *args) {
  (void)args;
  u64 slot = H->heap_alloc(1);
  return H->term_new_lam_at(slot, H->term_new_var(slot));
}

// %apply(f, x): f(x), left to the runtime to reduce
static Term apply(Term *args) {
  return H->term_new_app(args[0], args[1]);
}

// %tag(t), %ext(t): of t's weak normal form, as numbers
static Term tag(Term *args) {
  return H->term_new_num(H->term_tag(H->wnf(args[0])));
}

static Term ext(Term *args) {
  return H->term_new_num(H->term_ext(H->wnf(args[0])));
}

// %sum_list(xs): the sum of a list of numbers, read cell by cell
static Term sum_list(Term *args) {
  u32  s    = 0;
  Term cell = H->wnf(args[0]);
  while (H->term_tag(cell) == C02) {
    u64 at = H->term_val(cell);
    Term x = H->wnf(H->heap_read(at));
    if (H->term_tag(x) != NUM) H->runtime_error("%sum_list expects numbers");
    s += (u32)H->term_val(x);
    cell = H->wnf(H->heap_read(at + 1));
  }
  if (H->term_tag(cell) != C00) H->runtime_error("%sum_list expects a list");
  return H->term_new_num(s);
}

// %fail(_): an error of the library's
static Term fail(Term *args) {
  (void)args;
  H->runtime_error("failed on purpose");
  return 0;
}

// %bad(_): a word that is no term
static Term bad(Term *args) {
  (void)args;
  return ~(Term)0;
}

// %late(_): registers a primitive while the program runs
static Term late(Term *args) {
  H->register_prim("too_late", 8, 1, late);
  return args[0];
}

void hvm_ffi_init(const HvmApi *api) {
  H = api;
  if (H->abi_version != ABI_VERSION) H->runtime_error("FFI ABI mismatch");
  PAIR = H->name_from_str("Pair", 4);
  LAB  = 27;   // &A: a label is its name in base 64 ('A' is digit 27); the table is constructors'
  H->register_prim("pair", 4, 2, pair);
  H->register_prim("fst", 3, 1, fst);
  H->register_prim("sum5", 4, 5, sum5);
  H->register_prim("sup", 3, 2, sup);
  H->register_prim("konst", 5, 1, konst);
  H->register_prim("ident", 5, 1, ident);
  H->register_prim("apply", 5, 2, apply);
  H->register_prim("tag", 3, 1, tag);
  H->register_prim("ext", 3, 1, ext);
  H->register_prim("sum_list", 8, 1, sum_list);
  H->register_prim("fail", 4, 1, fail);
  H->register_prim("bad", 3, 1, bad);
  H->register_prim("late", 4, 1, late);
}
