// ffi.c: libraries of primitives (HVM4's FFI): loading them, the table of
// what they register, the calls into them, and the table of functions
// they reach the runtime through (include/hvm4g_ffi.h, docs/ffi.md).
//
// Loading: once the runtime's layers are open and before the program is
// read, each library named on the command line is opened (dlopen) and its
// hvm_ffi_init called with API, which registers primitives by name. The
// parser resolves `%name` through this table before the built-in one
// (names.c's hook), so a library overrides a built-in of the same name, to
// a PRI that carries the row and the arity (term.h, PRIM_FFI). The WNF
// core hands such a PRI to the host as any effect; prim_host passes it to
// ffi_call, on whichever CPU thread met it.
//
// Terms cross the boundary as hvm4g's own words. A library reads and
// builds them only through API, which gives HVM4's numbers where hvm4g's
// differ: the tags, LAM's unused-binder flag, the operators.
//
// A failure while a library loads (its own runtime_error, a registration
// hvm4g cannot hold) jumps back to the loader (FfiRt.init), which returns
// its status; one during a call is a runtime error of the run (eval_die).

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <hvm4g.h>
#include "run/ffi.h"
#include "run/journal.h"
#include "run/run_rt.h"
#include "cpu/eval.h"
#include "lang/names.h"
#include "heap/heap.h"
#include "heap/rt.h"

// The library interface, after term.h: its types are hvm4g's (u32, Term),
// its tag numbers HVM4's under the HVM_TAG_ names.
#define HVM4G_FFI_RUNTIME
#include <hvm4g_ffi.h>

typedef void (*FfiInit)(const HvmApi *api);

// The evaluator of the library call running on this thread (NULL: none):
// per thread, since each CPU thread runs the calls it meets itself. A
// runtime error in a call jumps past its restore; the next call sets it.
static _Thread_local Wnf *CALL_W = NULL;

// Failing
// =======

static FfiRt *ffi(void) {
  return &RT->run->ffi;
}

// A failure of the library now loading: its message and status, then back
// to the loader.
__attribute__((noreturn, format(printf, 2, 3)))
static void load_fail(int code, const char *fmt, ...) {
  FfiRt  *f = ffi();
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->why, f->why_cap, fmt, ap);
  va_end(ap);
  f->why_code = code;
  longjmp(*f->init, 1);
}

// A library used the table wrongly, or raised an error: while it loads,
// its load fails (status `code`); in a call, the run ends with a runtime
// error; anywhere else (a thread of the library's own, with no runtime)
// the process ends, as HVM4's runtime_error ends it.
__attribute__((noreturn, format(printf, 3, 4)))
static void lib_fail(int code, int raw, const char *fmt, ...) {
  char    msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (RT && RT->run && ffi()->init) {
    if (raw) load_fail(code, "RUNTIME_ERROR: %s", msg);
    load_fail(code, "hvm4g: FFI library '%s': %s", ffi()->loading, msg);
  }
  if (RT && RT->run && CALL_W) {
    atomic_store(&ffi()->raised, 1);
    eval_die(msg);
  }
  // No runtime holds a message here and no call returns to a caller: a
  // thread of the library's own ends the process (as HVM4's runtime_error
  // does), and stderr is the only place left to say why.
  fprintf(stderr, raw ? "RUNTIME_ERROR: %s\n" : "hvm4g: FFI: %s\n", msg);
  exit(HVM4G_ERR_FFI_PRIM);
}

#define misuse(...) lib_fail(HVM4G_ERR_FFI_ABI, 0, __VA_ARGS__)

// Terms from a library
// ====================

// Whether t is a word the runtime may reduce: a tag hvm4g has, and a
// location inside the heap where the tag has one. What a library hands
// back is checked, so that a wrong word is its error, not a crash.
static int term_ok(Term t) {
  u32 tag = TAG(t);
  if (IS_SUB(t) || (!IS_CTR(tag) && tag > ALO)) return 0;   // BUSY's tag too
  if (!HAS_LOC(tag)) return 1;
  u64 loc = VAL(t);
  return loc != 0 && loc < atomic_load_explicit(&RT->heap.top, memory_order_relaxed);
}

static Term check(Term t, const char *fn) {
  if (!term_ok(t)) misuse("%s got a word that is not a term (%#llx)", fn, (unsigned long long)t);
  return t;
}

static u32 check_loc(u64 loc, const char *fn) {
  if (loc == 0 || loc >= atomic_load_explicit(&RT->heap.top, memory_order_relaxed)) {
    misuse("%s got location %llu, outside the heap in use", fn, (unsigned long long)loc);
  }
  return (u32)loc;
}

// n fresh words: from the calling thread's arena in a call, from the top
// of the heap while a library loads (no evaluator exists yet).
static u32 alloc(u64 n, const char *fn) {
  if (n > ((u64)1 << 31)) misuse("%s asked for %llu words", fn, (unsigned long long)n);
  if (CALL_W) return eval_alloc(CALL_W, (u32)n);
  if (!RT || !RT->run || !ffi()->init) misuse("%s is called outside a primitive", fn);
  u32 at = heap_alloc((u32)n);
  if (at == 0 && n > 0) {
    load_fail(HVM4G_ERR_HEAP, "hvm4g: FFI library '%s': heap exhausted", ffi()->loading);
  }
  return at;
}

static Term node(u32 tag, u32 ext, u32 n, const Term *kids, const char *fn) {
  for (u32 i = 0; i < n; i++) check(kids[i], fn);
  u32 at = alloc(n, fn);
  for (u32 i = 0; i < n; i++) RT->heap.at[at + i] = kids[i];
  return TERM(tag, ext, at);
}

// Labels: the number the parser gives `&name` (its spelling in base 64).
static u32 label_of(u32 label, const char *fn) {
  if ((label & EXT_MASK) >= LAB_OWN) misuse("%s got label %u, one of the runtime's own", fn, label);
  return label & EXT_MASK;
}

// The table (HvmApi)
// ==================

static Term api_wnf(Term t) {
  if (!CALL_W) misuse("wnf is called outside a primitive (no evaluator yet)");
  return eval_wnf(CALL_W, check(t, "wnf"));
}

static Term api_num(u32 n) {
  return TERM(NUM, 0, n);
}

static Term api_ctr(u32 name, u32 arity, Term *args) {
  if (arity > CTR_ARITY(C16)) misuse("term_new_ctr got arity %u (at most 16)", arity);
  if (arity == 0) return TERM(C00, name & EXT_MASK, 0);
  return node(C00 + arity, name & EXT_MASK, arity, args, "term_new_ctr");
}

static Term api_sup(u32 label, Term a, Term b) {
  Term k[2] = { a, b };
  return node(SUP, label_of(label, "term_new_sup"), 2, k, "term_new_sup");
}

static Term api_dup(u32 label, Term expr, Term body) {
  Term k[2] = { expr, body };
  return node(DUP, label_of(label, "term_new_dup"), 2, k, "term_new_dup");
}

static Term api_app(Term f, Term x) {
  Term k[2] = { f, x };
  return node(APP, 0, 2, k, "term_new_app");
}

static Term api_lam_at(u64 loc, Term body) {
  u32 at = check_loc(loc, "term_new_lam_at");
  RT->heap.at[at] = check(body, "term_new_lam_at");
  return TERM(LAM, 0, at);
}

static Term api_lam(Term body) {
  return node(LAM, 0, 1, &body, "term_new_lam");
}

static Term api_var(u64 loc) {
  return TERM(VAR, 0, check_loc(loc, "term_new_var"));
}

// hvm4g's tag -> HVM4's number (hvm4g_ffi.h).
static u8 api_tag(Term t) {
  u32 tag = TAG(t);
  if (IS_CTR(tag)) return (u8)(HVM_TAG_C00 + CTR_ARITY(tag));
  switch (tag) {
    case APP: return HVM_TAG_APP;  case VAR: return HVM_TAG_VAR;
    case LAM: return HVM_TAG_LAM;  case DP0: return HVM_TAG_DP0;
    case DP1: return HVM_TAG_DP1;  case SUP: return HVM_TAG_SUP;
    case DUP: return HVM_TAG_DUP;  case ALO: return HVM_TAG_ALO;
    case REF: return HVM_TAG_REF;  case NAM: return HVM_TAG_NAM;
    case DRY: return HVM_TAG_DRY;  case ERA: return HVM_TAG_ERA;
    case MAT: return HVM_TAG_MAT;  case NUM: return HVM_TAG_NUM;
    case SWI: return HVM_TAG_SWI;  case USE: return HVM_TAG_USE;
    case OP2: return HVM_TAG_OP2;  case DSU: return HVM_TAG_DSU;
    case DDU: return HVM_TAG_DDU;  case EQL: return HVM_TAG_EQL;
    case AND: return HVM_TAG_AND;  case OR:  return HVM_TAG_OR;
    case UNS: return HVM_TAG_UNS;  case ANY: return HVM_TAG_ANY;
    case INC: return HVM_TAG_INC;  case BJV: return HVM_TAG_BJV;
    case BJ0: return HVM_TAG_BJ0;  case BJ1: return HVM_TAG_BJ1;
    case PRI: return HVM_TAG_PRI;  case RED: return HVM4G_TAG_RED;
    default:  return HVM4G_TAG_OTHER;   // BUSY: a slot another thread holds
  }
}

// hvm4g's operator -> HVM4's number (its OP_ADD 0 .. OP_GE 16).
static const u8 OP_OUT[OP_COUNT] = {
  [OP_ADD] = 0,  [OP_SUB] = 1,  [OP_MUL] = 2,  [OP_DIV] = 3,  [OP_MOD] = 4,
  [OP_AND] = 5,  [OP_OR]  = 6,  [OP_XOR] = 7,  [OP_LSH] = 8,  [OP_RSH] = 9,
  [OP_NOT] = 10, [OP_EQ]  = 11, [OP_NE]  = 12, [OP_LT]  = 13, [OP_LE]  = 14,
  [OP_GT]  = 15, [OP_GE]  = 16,
};

static u32 api_ext(Term t) {
  switch (TAG(t)) {
    case LAM: return EXT(t) & LAM_ERA ? HVM_LAM_ERA_MASK : 0;
    case OP2: return EXT(t) < OP_COUNT ? OP_OUT[EXT(t)] : EXT(t);
    default:  return EXT(t);
  }
}

static u64 api_val(Term t) {
  return VAL(t);
}

static Term api_read(u64 loc) {
  u32 at = check_loc(loc, "heap_read");
  return atomic_load_explicit((_Atomic Term *)&RT->heap.at[at], memory_order_acquire);
}

// A word read from the heap may go back as it was (a binder slot's SUB
// mark included).
static void api_set(u64 loc, Term t) {
  u32 at = check_loc(loc, "heap_set");
  check(NO_SUB(t), "heap_set");
  atomic_store_explicit((_Atomic Term *)&RT->heap.at[at], t, memory_order_release);
}

// Fresh words, zeroed (a library may read one before it writes it).
static u64 api_alloc(u64 words) {
  u32 at = alloc(words, "heap_alloc");
  if (words) memset(&RT->heap.at[at], 0, words * sizeof(Term));
  return at;
}

// A constructor's name: its id in the program's table (names.h ctr_id),
// added when new, so the number the program's `#name` has. Both entries of
// the table give it, as HVM4's do.
static u32 api_name(const char *s, u32 len) {
  if (!s || len == 0) misuse("name_from_str got an empty name");
  u32 id = ctr_id(s, len);
  if (id == ~0u) misuse("name_from_str: the name table is full (%u names)", ctr_limit());
  return id;
}

static void api_error(const char *msg) {
  lib_fail(HVM4G_ERR_FFI_ABI, 1, "%s", msg ? msg : "(null)");
}

static u32 api_register(const char *name, u32 len, u32 arity, HvmPrimFn fun);

static const HvmApi API = {
  .abi_version     = HVM_ABI_VERSION,
  .register_prim   = api_register,
  .wnf             = api_wnf,
  .term_new_num    = api_num,
  .term_new_ctr    = api_ctr,
  .term_new_sup    = api_sup,
  .term_new_dup    = api_dup,
  .term_new_app    = api_app,
  .term_new_lam_at = api_lam_at,
  .term_new_lam    = api_lam,
  .term_new_var    = api_var,
  .term_tag        = api_tag,
  .term_ext        = api_ext,
  .term_val        = api_val,
  .heap_read       = api_read,
  .heap_set        = api_set,
  .heap_alloc      = api_alloc,
  .table_find      = api_name,
  .name_from_str   = api_name,
  .runtime_error   = api_error,
};

// Registering
// ===========

// The row registered under name[0..len), or -1.
static long row_of(const char *s, u32 len) {
  FfiRt *f = ffi();
  for (u32 i = 0; i < f->prims; i++) {
    if (f->prim[i].len == len && memcmp(f->prim[i].name, s, len) == 0) return (long)i;
  }
  return -1;
}

// The parser's view (names.h's PrimHooks): a registered name is this
// table's even where a built-in has it.
static int hook_find(const char *s, u32 len, u32 *id) {
  if (!RT || !RT->run) return 0;
  long i = row_of(s, len);
  if (i < 0) return 0;
  u32 ar = ffi()->prim[i].arity;
  *id = ar ? PRIM_FFI_ID((u32)i, ar) : ~0u;
  return 1;
}

static const char *hook_name(u32 id) {
  u32 i = PRIM_FFI_INDEX(id);
  return RT && RT->run && i < ffi()->prims ? ffi()->prim[i].name : NULL;
}

static const PrimHooks HOOKS = { hook_find, hook_name };

// Keeps a warning line for the caller (ffi_warnings).
__attribute__((format(printf, 2, 3)))
static void warn(FfiRt *f, const char *fmt, ...) {
  char    line[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  size_t len  = strnlen(line, sizeof line - 1);
  size_t need = f->warned_len + (f->warned_len > 0) + len + 1;
  char  *more = realloc(f->warned, need);
  if (!more) load_fail(HVM4G_ERR_HEAP, "hvm4g: out of memory for a library's primitives");
  if (f->warned_len > 0) more[f->warned_len++] = '\n';
  memcpy(more + f->warned_len, line, len + 1);
  f->warned     = more;
  f->warned_len += len;
}

const char *ffi_warnings(void) {
  FfiRt *f = ffi();
  return f->warned_len ? f->warned : NULL;
}

static u32 api_register(const char *name, u32 len, u32 arity, HvmPrimFn fun) {
  if (!RT || !RT->run || !ffi()->init) misuse("register_prim is called from hvm_ffi_init only");
  FfiRt *f = ffi();
  if (!name || len == 0) misuse("register_prim got an empty name");
  if (!fun) misuse("register_prim got no function for '%%%.*s'", (int)len, name);
  if (arity > PRIM_FFI_ARITY_MAX) {
    misuse("'%%%.*s' takes %u arguments; hvm4g's limit is %u", (int)len, name, arity,
           PRIM_FFI_ARITY_MAX);
  }
  long i = row_of(name, len);
  if (i >= 0 || prim_id(name, len) != ~0u) {
    // HVM4's warning, in its words: a later library (or a built-in's
    // name) replaces what the name meant
    warn(f, "WARNING: overriding primitive '%%%.*s'", (int)len, name);
  }
  if (i < 0) {
    if (f->prims > PRIM_FFI_INDEX_MAX) misuse("more than %u primitives", PRIM_FFI_INDEX_MAX + 1);
    if (f->prims == f->prim_cap) {
      u32      cap  = f->prim_cap ? f->prim_cap * 2 : 16;
      FfiPrim *more = realloc(f->prim, cap * sizeof *more);
      if (!more) load_fail(HVM4G_ERR_HEAP, "hvm4g: out of memory for a library's primitives");
      f->prim     = more;
      f->prim_cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) load_fail(HVM4G_ERR_HEAP, "hvm4g: out of memory for a library's primitives");
    memcpy(copy, name, len);
    copy[len] = '\0';
    i = f->prims++;
    f->prim[i] = (FfiPrim){ .name = copy, .len = len };
  }
  f->prim[i].arity = arity;
  f->prim[i].fn    = fun;
  names_set_prims(&HOOKS);
  return PRIM_FFI_ID((u32)i, arity);
}

// Loading
// =======

static int keep_lib(void *h) {
  FfiRt *f = ffi();
  if (f->libs == f->lib_cap) {
    u32    cap  = f->lib_cap ? f->lib_cap * 2 : 8;
    void **more = realloc(f->lib, cap * sizeof *more);
    if (!more) return 0;
    f->lib     = more;
    f->lib_cap = cap;
  }
  f->lib[f->libs++] = h;
  return 1;
}

static int say(char *why, size_t cap, int code, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));

static int say(char *why, size_t cap, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, cap, fmt, ap);
  va_end(ap);
  return code;
}

// Its hvm_ffi_init, with a way back for a failure inside it.
static int run_init(FfiInit init, const char *shown, char *why, size_t cap) {
  FfiRt  *f = ffi();
  jmp_buf env;
  f->init     = &env;
  f->loading  = shown;
  f->why      = why;
  f->why_cap  = cap;
  f->why_code = HVM4G_OK;
  if (setjmp(env) == 0) init(&API);
  f->init    = NULL;
  f->loading = NULL;
  return f->why_code;
}

// The library at `path` (`shown` in messages: the path as given). The
// messages that HVM4 also gives keep its words ("ERROR: ..."); its test
// programs compare them.
static int load_file(const char *path, const char *shown, char *why, size_t cap) {
  struct stat st;
  if (stat(path, &st) != 0 || access(path, R_OK) != 0) {
    return say(why, cap, HVM4G_ERR_FFI_FILE, "ERROR: failed to load FFI library '%s': %s",
               shown, strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    return say(why, cap, HVM4G_ERR_FFI_FILE, "ERROR: failed to load FFI library '%s': a "
               "folder (--ffi-dir loads the libraries in a folder)", shown);
  }
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    return say(why, cap, HVM4G_ERR_FFI_LOAD, "ERROR: failed to load FFI library '%s': %s",
               shown, e ? e : "not a shared library");
  }
  dlerror();
  void       *sym = dlsym(h, "hvm_ffi_init");
  const char *e   = dlerror();
  if (!sym) {
    int rc = say(why, cap, HVM4G_ERR_FFI_INIT, "ERROR: missing hvm_ffi_init in '%s': %s",
                 shown, e ? e : "the symbol is null");
    dlclose(h);
    return rc;
  }
  if (!keep_lib(h)) {
    dlclose(h);
    return say(why, cap, HVM4G_ERR_HEAP, "hvm4g: out of memory loading '%s'", shown);
  }
  return run_init((FfiInit)sym, shown, why, cap);
}

// A name without a slash is a file in the current directory, as on every
// other command line; dlopen would look it up among the system's libraries.
static int load_path(const char *path, char *why, size_t cap) {
  if (strchr(path, '/')) return load_file(path, path, why, cap);
  size_t n     = strlen(path) + 3;
  char  *local = malloc(n);
  if (!local) return say(why, cap, HVM4G_ERR_HEAP, "hvm4g: out of memory loading '%s'", path);
  snprintf(local, n, "./%s", path);
  int rc = load_file(local, path, why, cap);
  free(local);
  return rc;
}

static int is_library(const char *name) {
  size_t n = strlen(name);
  return (n > 3 && strcmp(name + n - 3, ".so") == 0) ||
         (n > 6 && strcmp(name + n - 6, ".dylib") == 0);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

// Every regular file of `dir` named *.so or *.dylib (as HVM4 picks them),
// in byte order of their names, so that the last of two libraries that
// register one name wins on every system. Not recursive.
static int load_dir(const char *dir, char *why, size_t cap) {
  DIR *d = opendir(dir);
  if (!d) {
    return say(why, cap, HVM4G_ERR_FFI_FILE, "ERROR: could not open FFI dir '%s': %s", dir,
               strerror(errno));
  }
  char  **names = NULL;
  size_t  n = 0, room = 0;
  int     rc = HVM4G_OK;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!is_library(e->d_name)) continue;
    if (n == room) {
      room = room ? room * 2 : 16;
      char **more = realloc(names, room * sizeof *more);
      if (!more) { rc = HVM4G_ERR_HEAP; break; }
      names = more;
    }
    if (!(names[n] = strdup(e->d_name))) { rc = HVM4G_ERR_HEAP; break; }
    n++;
  }
  closedir(d);
  if (rc != HVM4G_OK) say(why, cap, rc, "hvm4g: out of memory reading '%s'", dir);
  if (n) qsort(names, n, sizeof *names, by_name);
  for (size_t i = 0; i < n && rc == HVM4G_OK; i++) {
    size_t len  = strlen(dir) + strlen(names[i]) + 2;
    char  *path = malloc(len);
    if (!path) {
      rc = say(why, cap, HVM4G_ERR_HEAP, "hvm4g: out of memory reading '%s'", dir);
      break;
    }
    snprintf(path, len, "%s/%s", dir, names[i]);
    struct stat st;
    if (stat(path, &st) != 0) {
      rc = say(why, cap, HVM4G_ERR_FFI_FILE, "ERROR: could not stat FFI library '%s': %s",
               path, strerror(errno));
    } else if (S_ISREG(st.st_mode)) {
      rc = load_file(path, path, why, cap);
    }
    free(path);
  }
  for (size_t i = 0; i < n; i++) free(names[i]);
  free(names);
  return rc;
}

int ffi_load_all(const FfiLoads *l, char *why, size_t cap) {
  if (cap) why[0] = '\0';
  for (u32 i = 0; l && i < l->count; i++) {
    const FfiLoad *at = &l->at[i];
    int rc = at->dir ? load_dir(at->path, why, cap) : load_path(at->path, why, cap);
    if (rc != HVM4G_OK) return rc;
  }
  return HVM4G_OK;
}

// Calls
// =====

// A call whose arguments reach another call nests on the C stack (the
// library's wnf runs the evaluator, which calls the library again): past
// the thread's stack, less a margin for one more level, a runtime error
// instead of a crash. Per thread: each thread's own stack.
static _Thread_local uintptr_t STACK_LO = 0;   // 1: unknown, no check

static void stack_check(const char *name) {
  char here;
  if (STACK_LO == 0) {
    STACK_LO = stack_floor((uintptr_t)1 << 20);
    if (STACK_LO == 0) STACK_LO = 1;
  }
  if ((uintptr_t)&here < STACK_LO) {
    char msg[160];
    snprintf(msg, sizeof msg, "%%%s nested too deeply (out of stack)", name);
    eval_die(msg);
  }
}

Term ffi_call(Wnf *w, Term pri) {
  FfiRt *f  = ffi();
  u32    id = EXT(pri), i = PRIM_FFI_INDEX(id), ar = PRIM_ARITY(id);
  if (i >= f->prims || f->prim[i].arity != ar) {
    eval_die("unknown primitive");   // a PRI no library registered: none is parsed
    return 0;
  }
  const FfiPrim *p = &f->prim[i];
  stack_check(p->name);
  // An effect of unknown kind: a run that starts over (journal.h) gets
  // its result back instead of calling the library again.
  Term out;
  if (journal_effect(w, pri, journal_hash_word(JOURNAL_SEED, id), &out)) return out;
  Term args[PRIM_FFI_ARITY_MAX];
  for (u32 k = 0; k < ar; k++) args[k] = RT->heap.at[VAL(pri) + k];
  Wnf *up = CALL_W;
  CALL_W  = w;
  Term r  = p->fn(args);
  CALL_W  = up;
  if (!term_ok(r)) {
    char msg[160];
    snprintf(msg, sizeof msg, "%%%s returned a word that is not a term (%#llx)", p->name,
             (unsigned long long)r);
    atomic_store(&f->raised, 1);
    eval_die(msg);
  }
  return r;
}

u32 ffi_count(void) {
  return RT && RT->run ? ffi()->prims : 0;
}

int ffi_raised(void) {
  return RT && RT->run && atomic_exchange(&ffi()->raised, 0);
}

void ffi_close(void) {
  FfiRt *f = ffi();
  if (f->prims) names_set_prims(NULL);
  for (u32 i = 0; i < f->prims; i++) free(f->prim[i].name);
  free(f->prim);
  // the last loaded first: a library may use one loaded before it
  for (u32 i = f->libs; i > 0; i--) dlclose(f->lib[i - 1]);
  free(f->lib);
  free(f->warned);
  *f = (FfiRt){ 0 };
}
