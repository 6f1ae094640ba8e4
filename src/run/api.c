// api.c: the library (include/hvm4g.h) over the runtime's modules. The
// hvm4g program is one of its clients (main.c).
//
// The runtime reports a fatal error by calling eval_fatal; the library
// installs a hook (eval_set_fatal) that, on the thread of an API call,
// records the message and jumps back to that call's frame, which returns
// the error's code. The hook never prints nor exits: an error met where no
// call's frame is (a thread the runtime started) is recorded on the
// runtime, and the call in progress returns it. A runtime's state is its
// context (heap/rt.h), allocated here in one block with its handle; each
// call works for its runtime on the caller's thread (RT) and leaves the
// thread as it found it. Nothing here is shared between runtimes.

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <hvm4g.h>
#include "run/api.h"
#include "run/sched.h"
#include "heap/heap.h"
#include "lang/names.h"
#include "lang/parse.h"
#include "lang/print.h"
#include "cpu/eval.h"
#include "cpu/snf.h"
#include "cpu/pool.h"
#include "cpu/reclaim.h"
#include "run/prim.h"
#include "run/ffi.h"
#include "run/journal.h"
#include "collapse/collapse.h"
#include "dev/gpu.h"
#include "dev/dev.h"
#include "lang/lang_rt.h"
#include "collapse/collapse_rt.h"
#include "heap/rt.h"
#include "cpu/cpu_rt.h"
#include "dev/dev_rt.h"
#include "run/run_rt.h"

#ifndef HVM4G_COMMIT
#define HVM4G_COMMIT "unknown"
#endif

#define ERR_CAP  1024   // a message: a parse report is a few lines

// An error raised on a thread with no call's frame (on_fatal).
typedef struct {
  atomic_int state;         // LATE_NONE, LATE_WRITING, LATE_HELD
  int        panic;         // a %panic: msg is the program's output
  char       kind[32];
  char       msg[ERR_CAP];
} Late;

enum { LATE_NONE, LATE_WRITING, LATE_HELD };

struct hvm4g {
  Rt    *rt;            // the context (NULL: the open failed; only err holds)
  char   err[ERR_CAP];
  char   warn[ERR_CAP];
  int    ready;         // eval and the normalizer are set up (first run)
  int    color;         // Options.color
  int    opened;        // the layers' parts opened (runtime_close closes them)
  u32    result;        // the heap slot of the last normal form (0: none)
  u64    program_top;   // the heap's top when the first run began (0: none
                        // began): the words above are runs', freed by the next
  double secs;          // the last run's wall time
  Late   late;
};

// A runtime in one allocation: its handle, its context and each layer's part.
typedef struct {
  hvm4g         h;
  Rt            rt;
  struct LangRt lang;
  struct CpuRt  cpu;
  struct DevRt  dev;
  struct ColRt  col;
  struct RunRt  run;
} Runtime;

// The frame of the API call in progress on this thread (NULL: none).
typedef struct {
  jmp_buf env;
  hvm4g  *h;
  int     code;
} Call;

// Per thread: each thread is in at most one API call at a time.
static _Thread_local Call *CALL = NULL;

// The handle of the runtime whose context is rt (every context is made by
// runtime_new, in a Runtime).
static hvm4g *handle_of(Rt *rt) {
  return &((Runtime *)((char *)rt - offsetof(Runtime, rt)))->h;
}

static int starts(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

// An "hvm4g: " message that says the heap (or the memory) ran out is its
// own status; a RUNTIME_ERROR is the program's.
static int fatal_code(const char *kind, const char *msg) {
  if (starts(kind, "RUNTIME_ERROR")) {
    return ffi_raised() ? HVM4G_ERR_FFI_PRIM : HVM4G_ERR_RUNTIME;
  }
  if (strstr(msg, "heap exhausted") || strstr(msg, "out of memory") ||
      strstr(msg, "cannot reserve")) {
    return HVM4G_ERR_HEAP;
  }
  if (strstr(msg, "cannot write")) return HVM4G_ERR_IO;
  // more threads asked for than the system starts: the request's fault,
  // not the program's
  if (strstr(msg, "cannot start a thread")) return HVM4G_ERR_USAGE;
  if (starts(msg, SCHED_NO_CUDA ":") || starts(msg, SCHED_NO_METAL ":")) return HVM4G_ERR_DEVICE;
  return HVM4G_ERR_RUNTIME;
}

// The error as the call's result: its message in h->err, its status
// returned. A %panic's (no kind) is the program's own text, returned as
// it is with the runtime error's status: the library writes nothing of it
// (the hvm4g program prints it as the run's last line of output).
static int take_error(hvm4g *h, const char *kind, const char *msg) {
  size_t k = kind ? strlen(kind) : 0;
  if (k >= ERR_CAP) k = ERR_CAP - 1;
  memcpy(h->err, kind ? kind : "", k);
  snprintf(h->err + k, ERR_CAP - k, "%s", msg);   // cut at ERR_CAP
  return kind ? fatal_code(kind, msg) : HVM4G_ERR_RUNTIME;
}

// No call's frame on this thread: the first such error is kept on the
// runtime for the call in progress (late_error), the others dropped, and
// the thread goes back to eval_fatal, which parks it.
static void hold_late(const char *kind, const char *msg) {
  if (!RT) return;
  Late *l    = &handle_of(RT)->late;
  int   none = LATE_NONE;
  if (!atomic_compare_exchange_strong(&l->state, &none, LATE_WRITING)) return;
  l->panic = !kind;
  snprintf(l->kind, sizeof l->kind, "%s", kind ? kind : "");
  snprintf(l->msg, sizeof l->msg, "%s", msg);
  atomic_store(&l->state, LATE_HELD);
}

static void on_fatal(const char *kind, const char *msg) {
  Call *c = CALL;
  if (!c) {
    hold_late(kind, msg);
    return;
  }
  c->code = take_error(c->h, kind, msg);
  CALL    = NULL;
  longjmp(c->env, 1);
}

// The error an unframed thread kept during the call that ends (rc: the
// call's own status, which wins), then none.
static int late_error(hvm4g *h, int rc) {
  Late *l = &h->late;
  if (atomic_load(&l->state) != LATE_HELD) return rc;
  if (rc == HVM4G_OK) rc = take_error(h, l->panic ? NULL : l->kind, l->msg);
  atomic_store(&l->state, LATE_NONE);
  return rc;
}

static int fail(hvm4g *h, int code, const char *fmt, const char *arg) {
  snprintf(h->err, ERR_CAP, fmt, arg);
  return code;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

// Setup
// =====

void hvm4g_config_init(hvm4g_config *c) {
  c->threads    = 1;
  c->heap_words = 0;
  c->device     = HVM4G_DEVICE_AUTO;
}

void api_options_default(Options *o) {
  *o = (Options){ 0 };
  eval_conf_default(&o->eval);
  gpu_conf_default(&o->gpu);
  sched_conf_default(&o->sched);
}

static u32 device_of(int d) {
  switch (d) {
    case HVM4G_DEVICE_SIM:   return DEV_SIM;
    case HVM4G_DEVICE_CUDA:  return DEV_CUDA;
    case HVM4G_DEVICE_METAL: return DEV_METAL;
    default:                 return DEV_AUTO;
  }
}

// A runtime with its options applied, before its heap.
static Runtime *runtime_new(const Options *o) {
  Runtime *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  Rt *rt        = &r->rt;
  r->h.rt       = rt;
  r->h.color    = o->color;
  rt->lang      = &r->lang;
  rt->cpu       = &r->cpu;
  rt->dev       = &r->dev;
  rt->col       = &r->col;
  rt->run       = &r->run;
  rt->cpu->conf = o->eval;
  rt->dev->conf = o->gpu;
  rt->run->conf = o->sched;
  return r;
}

Rt *api_context(const Options *o) {
  Runtime *r = runtime_new(o);
  return r ? &r->rt : NULL;
}

// Each layer's part, bottom up: the number opened, all of them when each
// open succeeded (RT is r's).
#define LAYERS 5

static int layers_open(void) {
  int n = 0;
  if (lang_rt_open() != 0) return n;
  n++;
  if (cpu_rt_open() != 0) return n;
  n++;
  if (dev_rt_open() != 0) return n;
  n++;
  if (collapse_rt_open() != 0) return n;
  n++;
  if (run_rt_open() != 0) return n;
  return n + 1;
}

// Every layer's part that opened ended, top down (each joins the threads
// it started and frees what it holds), then the heap, then the block; RT
// is r's.
static void runtime_close(Runtime *r) {
  int n = r->h.opened;
  // The pool's threads first: an idle one may be helping the collapser,
  // whose memory collapse_rt_close frees.
  if (n >= 2) cpu_rt_stop();
  if (n >= 5) run_rt_close();
  if (n >= 4) collapse_rt_close();
  if (n >= 3) dev_rt_close();
  if (n >= 2) cpu_rt_close();
  if (n >= 1) lang_rt_close();
  heap_free();
  free(r);
}

// A handle that holds only why the open failed (hvm4g_error reads it):
// `msg` as it is.
static int failed_with(hvm4g **out, int code, const char *msg) {
  hvm4g *h = calloc(1, sizeof *h);
  if (h) snprintf(h->err, ERR_CAP, "%s", msg);
  *out = h;
  return code;
}

// The same with "hvm4g: " and fmt's text of arg.
static int failed_open(hvm4g **out, int code, const char *fmt, const char *arg) {
  char msg[ERR_CAP];
  int  n = snprintf(msg, sizeof msg, "hvm4g: ");
  snprintf(msg + n, sizeof msg - (size_t)n, fmt, arg);
  return failed_with(out, code, msg);
}

int hvm4g_open(hvm4g **out, const hvm4g_config *c) {
  if (!out) return HVM4G_ERR_USAGE;
  *out = NULL;
  hvm4g_config dflt;
  if (!c) {
    hvm4g_config_init(&dflt);
    c = &dflt;
  }
  if (c->threads > 1024) {
    return failed_open(out, HVM4G_ERR_USAGE, "%s", "threads is at most 1024");
  }
  if ((c->heap_words && c->heap_words < 1024) || c->heap_words > ((u64)1 << 32)) {
    return failed_open(out, HVM4G_ERR_USAGE, "%s", "heap_words is 0 (what fits) or from 1024 to 2^32");
  }
  if (c->device < HVM4G_DEVICE_AUTO || c->device > HVM4G_DEVICE_METAL) {
    return failed_open(out, HVM4G_ERR_USAGE, "%s", "device is one of HVM4G_DEVICE_*");
  }
  Options o;
  api_options_default(&o);
  o.eval.threads = c->threads ? c->threads : 1;
  o.heap         = c->heap_words;
  o.gpu.device   = device_of(c->device);
  return api_open(out, &o);
}

int api_open(hvm4g **out, const Options *o) {
  *out = NULL;
  if (o->gpu.device == DEV_CUDA && !gpu_cuda_compiled()) {
    return failed_open(out, HVM4G_ERR_DEVICE, "%s", SCHED_NO_CUDA ": this library was built without CUDA");
  }
  if (o->gpu.device == DEV_METAL && !gpu_metal_compiled()) {
    return failed_open(out, HVM4G_ERR_DEVICE, "%s", SCHED_NO_METAL ": this library was built without Metal");
  }
  Runtime *r = runtime_new(o);
  if (!r) return failed_open(out, HVM4G_ERR_HEAP, "%s", "out of memory for a runtime");
  hvm4g *h  = &r->h;
  Rt    *rt = &r->rt;
  Rt   *was = RT;
  RT = rt;
  int by_space = 0;
  u64 words    = o->heap ? o->heap
                         : heap_default_words(api_reserved_besides(o->eval.threads),
                                              api_reserved_per_word(o->eval.threads), &by_space);
  if (heap_init(words) != 0) {
    RT = was;
    free(r);
    char size[32];
    snprintf(size, sizeof size, "%llu", (unsigned long long)words);
    return failed_open(out, HVM4G_ERR_HEAP, "no room for a heap of %s words", size);
  }
  rt->heap.by_space = by_space;
  h->opened = layers_open();
  if (h->opened < LAYERS) {
    runtime_close(r);
    RT = was;
    return failed_open(out, HVM4G_ERR_HEAP, "%s", "out of memory for a runtime");
  }
  prim_set_args(o->argc, o->argv);
  eval_set_fatal(on_fatal);
  sched_init();
  // The libraries the command line names: their primitives are names the
  // program may use, so before it is read. Loading one runs its code.
  char why[ERR_CAP];
  int  rc = ffi_load_all(&o->ffi, why, sizeof why);
  // what the loads warned of is the caller's to show (hvm4g_warning)
  char warned[ERR_CAP];
  snprintf(warned, sizeof warned, "%s", ffi_warnings() ? ffi_warnings() : "");
  if (rc != HVM4G_OK) {
    runtime_close(r);   // frees r
    RT = was;
    rc = failed_with(out, rc, why);
    if (*out) snprintf((*out)->warn, ERR_CAP, "%s", warned);
    return rc;
  }
  snprintf(h->warn, ERR_CAP, "%s", warned);
  sched_start();   // the device's context, made while the program is read
  RT = was;
  *out = h;
  return HVM4G_OK;
}

void api_use(hvm4g *h) {
  RT = h ? h->rt : NULL;
}

void hvm4g_close(hvm4g *h) {
  if (!h) return;
  if (!h->rt) {   // a failed open's message
    free(h);
    return;
  }
  Rt *rt  = h->rt;
  Rt *was = RT;
  RT = rt;
  runtime_close((Runtime *)((char *)rt - offsetof(Runtime, rt)));
  RT = was == rt ? NULL : was;   // a thread that worked for it works for none
}

u64 api_reserved_besides(u32 threads) {
  u64 per    = ((u64)64 << 20) * 2;                // a pool stack, a malloc arena
  u64 levels = threads > 1 ? (u64)512 << 20 : 0;   // -T collapse tables
  // the book, and malloc's slack (the program's thread and the code are
  // reserved already: heap_default_words counts them)
  return (u64)threads * per + levels + ((u64)1 << 27) + ((u64)256 << 20);
}

// A WNF stack a thread, of a word a heap word (eval.c's eval_stack_words).
u64 api_reserved_per_word(u32 threads) {
  return (u64)threads * sizeof(Term);
}

// Loading
// =======

// Parse messages go to a memory stream, then into h->err.
static int load(hvm4g *h, const char *path, const char *name, const char *src) {
  h->err[0]  = '\0';
  h->warn[0] = '\0';
  if (h->ready) {
    return fail(h, HVM4G_ERR_STATE, "hvm4g: %s", "a program is loaded before the first run");
  }
  char  *msg = NULL;
  size_t len = 0;
  FILE  *errs = open_memstream(&msg, &len);
  parse_set_errors(errs);
  Call c = { .h = h, .code = 0 };
  int rc;
  if (setjmp(c.env) == 0) {
    CALL = &c;
    rc   = path ? parse_file(path) : parse_text(name, src);
    CALL = NULL;
  } else {
    rc = c.code;   // the heap ran out while loading
  }
  parse_set_errors(NULL);
  if (errs) fclose(errs);
  if (rc != 0 && msg && h->err[0] == '\0') {
    while (len > 0 && msg[len - 1] == '\n') msg[--len] = '\0';
    snprintf(h->err, ERR_CAP, "%s", msg);
  }
  free(msg);
  if (rc != 0) return strstr(h->err, "heap exhausted") ? HVM4G_ERR_HEAP : HVM4G_ERR_PARSE;
  // A reference to a name never defined stays as written in the output,
  // as HVM4 prints it: worth a warning a caller may show (the hvm4g
  // program shows it under --warn-undefined).
  size_t at = 0;
  u32    n  = 0;
  for (u32 id = 0; id < table_count() && id < RT->heap.book_cap; id++) {
    const char *nm = table_name(id);
    if (RT->heap.book[id] != 0 || !nm) continue;
    if (n++ == 0) at = (size_t)snprintf(h->warn, ERR_CAP, "hvm4g: warning: undefined reference");
    if (at < ERR_CAP) at += (size_t)snprintf(h->warn + at, ERR_CAP - at, "%s @%s", n > 1 ? "," : "", nm);
  }
  if (n && at < ERR_CAP) snprintf(h->warn + at, ERR_CAP - at, " (printed as written)");
  return HVM4G_OK;
}

// Each call below works for h's runtime on this thread (RT) for its length.
#define ON(h, fail, call) do {                                   \
    if (!(h) || !(h)->rt) return (fail);                         \
    Rt *was_ = RT;                                               \
    RT = (h)->rt;                                                \
    __typeof__(call) r_ = (call);                                \
    RT = was_;                                                   \
    return r_;                                                   \
  } while (0)

int hvm4g_load_file(hvm4g *h, const char *path) {
  if (h && !path) return fail(h, HVM4G_ERR_USAGE, "hvm4g: %s", "hvm4g_load_file needs a path");
  ON(h, HVM4G_ERR_STATE, load(h, path, NULL, NULL));
}

int hvm4g_load_string(hvm4g *h, const char *name, const char *src) {
  if (h && !src) return fail(h, HVM4G_ERR_USAGE, "hvm4g: %s", "hvm4g_load_string needs a source");
  ON(h, HVM4G_ERR_STATE, load(h, NULL, name ? name : "<string>", src));
}

// Running
// =======

// The root slot of a run of @name; 0 after setting the error.
static u32 run_root(hvm4g *h, const char *name) {
  if (!name) name = "main";
  u32 id = table_find(name, (u32)strlen(name));
  if (id == ~0u || id >= RT->heap.book_cap || RT->heap.book[id] == 0) {
    fail(h, HVM4G_ERR_PARSE, "hvm4g: @%s not defined", name);
    return 0;
  }
  if (!h->ready) {
    sched_loaded();
    eval_init();
    snf_init();
    h->ready = 1;
  }
  u32 root = heap_alloc(1);
  if (!root) {
    fail(h, HVM4G_ERR_HEAP, "hvm4g: %s", "heap exhausted");
    return 0;
  }
  RT->heap.at[root] = TERM(REF, id, 0);
  return root;
}

// Whether @name, or a definition it names through the book, has an
// unscoped binder: only those are copied when a run starts over, so an
// unused one refuses nothing. Templates are scanned word by word (a
// match's header read as UNS only refuses, as any unscoped binder did).
static int reaches_unscoped(const char *name) {
  if (!parse_unscoped()) return 0;
  if (!name) name = "main";
  u32  n    = table_count();
  u32  root = table_find(name, (u32)strlen(name));
  u8  *seen = calloc(n + 1, 1);
  u32 *todo = malloc(((size_t)n + 1) * sizeof(u32));
  int  uns  = !seen || !todo;   // no room to look: refused, as before
  u32  sp   = 0;
  if (!uns && root < n) {
    seen[root]  = 1;
    todo[sp++] = root;
  }
  while (!uns && sp > 0) {
    u32 id  = todo[--sp];
    u32 tpl = id < RT->heap.book_cap ? RT->heap.book[id] : 0;
    u32 len = tpl ? RT->heap.book_len[id] : 0;
    for (u32 i = 0; i < len && !uns; i++) {
      Term t = RT->heap.at[tpl + i];
      u32  r = EXT(t);
      if (TAG(t) == UNS) uns = 1;
      if (TAG(t) == REF && r < n && !seen[r]) {
        seen[r]    = 1;
        todo[sp++] = r;
      }
    }
  }
  free(seen);
  free(todo);
  return uns;
}

// Whether a run may start over, as far as the program and the flags say;
// such a run journals its effects and -C lines (journal.h) while it goes.
// Refused: -D, whose steps already printed would show twice and which has
// no journal of its own; an unscoped binder, whose variables the lazy copy
// of the book does not bind.
static int may_restart(const char *name) {
  return !RT->cpu->conf.debug && !reaches_unscoped(name);
}

// A run that met a DUP again while reducing it (eval_met_again) starts
// over from the program with the lazy core, on one thread and the CPU.
// What it did shows once: the effects it performed and the lines it
// printed are replayed from the journal, not done again; a journal that
// does not hold them all as data (a result that is not data, or one past
// its bound) refuses.
static int may_start_over(const char *name) {
  return may_restart(name) && journal_replay();
}

// A run that met a DUP again and may not start over: its error says why.
static void refused_why(hvm4g *h, const char *name) {
  const char *why = RT->cpu->conf.debug     ? "a run step by step does not start over"
                  : reaches_unscoped(name) ? "a definition it runs has an unscoped binder, which the "
                                             "lazy copy of the book does not bind"
                                           : journal_refusal();
  size_t n = strlen(h->err);
  if (why && n < ERR_CAP) snprintf(h->err + n, ERR_CAP - n, " (%s)", why);
}

// Back to the heap as the program left it (top): the book's templates are
// only read, so the words above are all a run made. Every thread of the
// pool stops first (work ahead of -C, sparks), and what it held is dropped.
static void start_over_lazily(u64 top) {
  collapse_stop();
  pool_halt();
  pool_drop();
  eval_rewind();
  reclaim_disarm();   // the lazy core's thunks are words no collection traces
  HeapSnap program = { NULL, top };
  heap_rewind(&program);
  pool_resume();
  eval_lazy_book(1);
}

// Every word an earlier run made is garbage once a new run begins (its
// result's slot goes with it), and so is whatever an error left behind:
// the pool's queued tasks, a collapse's threads. The heap goes back to
// the program; a runtime runs any number of times in its heap.
static void drop_earlier_runs(hvm4g *h) {
  if (!h->program_top) {
    h->program_top = heap_used();
    return;
  }
  collapse_stop();
  pool_halt();
  pool_drop();
  reclaim_restart(h->program_top);
  pool_resume();
}

// Runs @name's normal form (collapse: its collapse to `out`) in a frame
// that takes the runtime's fatal errors.
static int run(hvm4g *h, const char *name, int where, int collapse,
               long long limit, FILE *out) {
  h->err[0] = '\0';
  h->result = 0;
  if (where != HVM4G_CPU && where != HVM4G_DEVICE) {
    return fail(h, HVM4G_ERR_USAGE, "hvm4g: %s", "where is HVM4G_CPU or HVM4G_DEVICE");
  }
  Call c = { .h = h, .code = 0 };
  double t0  = now();
  volatile u64 top  = 0;
  volatile int lazy = 0;
  journal_start(may_restart(name));
  if (setjmp(c.env) != 0) {
    // no collection reads what the failed call held (eval_fatal dropped
    // its root frames; its pool tasks end at the next run's start)
    reclaim_disarm();
    int again = !lazy && eval_met_again();
    if (again && may_start_over(name)) {
      lazy      = 1;
      h->err[0] = '\0';
      start_over_lazily(top);
    } else {
      if (again) refused_why(h, name);
      if (lazy) eval_lazy_book(0);
      journal_end();
      collapse_set_line_check(NULL);
      h->secs = now() - t0;
      collapse_set_out(stdout, 0);   // not the caller's stream, which may go
      return late_error(h, c.code);
    }
  }
  CALL = &c;
  if (!lazy) {
    drop_earlier_runs(h);   // inside the frame: the pool's kept error returns
    top = heap_used();
  }
  u32 root = run_root(h, name);
  if (!root) {
    CALL = NULL;
    journal_end();
    return strstr(h->err, "heap") ? HVM4G_ERR_HEAP : HVM4G_ERR_PARSE;
  }
  RT->run->conf.requested = where == HVM4G_DEVICE && !lazy;
  if (collapse) {
    collapse_set_out(out, h->color);
    collapse_set_line_check(journal_line);
    sched_collapse(root, limit);
    collapse_set_line_check(NULL);
    collapse_set_out(stdout, 0);
  } else {
    sched_normalize(root);
    // Copied lazily, a DUP that holds its own copy leaves a cycle (HVM4
    // prints forever): the error one-thread reduction gives it instead.
    if (lazy && print_infinite(RT->heap.at[root])) {
      eval_die(SNF_INFINITE);
    }
    h->result = root;
  }
  if (lazy) journal_check_done();
  if (lazy) eval_lazy_book(0);
  journal_end();
  CALL    = NULL;
  h->secs = now() - t0;
  return late_error(h, HVM4G_OK);
}

int hvm4g_normalize(hvm4g *h, const char *name, int where) {
  ON(h, HVM4G_ERR_STATE, run(h, name, where, 0, -1, NULL));
}

int hvm4g_collapse(hvm4g *h, const char *name, long long limit, int where, FILE *out) {
  if (h && !out) return fail(h, HVM4G_ERR_USAGE, "hvm4g: %s", "hvm4g_collapse needs a stream");
  ON(h, HVM4G_ERR_STATE, run(h, name, where, 1, limit, out));
}

// Results
// =======

static int print_file(hvm4g *h, FILE *out) {
  if (!h->result) return fail(h, HVM4G_ERR_STATE, "hvm4g: %s", "no normal form to print");
  print_term(out, RT->heap.at[h->result]);
  return ferror(out) ? fail(h, HVM4G_ERR_IO, "hvm4g: %s", "cannot write the output") : HVM4G_OK;
}

int hvm4g_print_file(hvm4g *h, FILE *out) {
  ON(h, HVM4G_ERR_STATE, print_file(h, out));
}

static long long print_buf(hvm4g *h, char *buf, size_t cap) {
  char  *text = NULL;
  size_t len  = 0;
  FILE  *mem  = open_memstream(&text, &len);
  if (!mem) return fail(h, HVM4G_ERR_HEAP, "hvm4g: %s", "out of memory"), -1;
  int rc = print_file(h, mem);
  fclose(mem);
  if (rc == HVM4G_OK && cap > 0) {
    size_t n = len < cap - 1 ? len : cap - 1;
    memcpy(buf, text, n);
    buf[n] = '\0';
  }
  free(text);
  return rc == HVM4G_OK ? (long long)len : -1;
}

long long hvm4g_print(hvm4g *h, char *buf, size_t cap) {
  ON(h, -1, print_buf(h, buf, cap));
}

u64 api_peak_rss(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
#ifdef __APPLE__
  return (u64)ru.ru_maxrss;          // bytes there
#else
  return (u64)ru.ru_maxrss << 10;    // KiB on Linux
#endif
}

static int get_stats(hvm4g *h, hvm4g_stats *s) {
  s->device_interactions = gpu_itrs();
  s->interactions        = h->ready ? eval_itrs() + s->device_interactions
                                    : s->device_interactions;
  s->seconds             = h->secs;
  s->heap_words          = heap_used();
  s->peak_rss_bytes      = api_peak_rss();
  return 0;
}

void hvm4g_get_stats(hvm4g *h, hvm4g_stats *s) {
  memset(s, 0, sizeof *s);
  if (!h || !h->rt) return;
  Rt *was = RT;
  RT = h->rt;
  get_stats(h, s);
  RT = was;
}

const char *hvm4g_error(const hvm4g *h) {
  return h ? h->err : "hvm4g: no runtime (out of memory)";
}

const char *hvm4g_warning(const hvm4g *h) {
  return h && h->warn[0] ? h->warn : NULL;
}

const char *hvm4g_notice(const hvm4g *h) {
  if (!h || !h->rt) return NULL;
  Rt *was = RT;
  RT = h->rt;
  const char *n = sched_notice();
  RT = was;
  return n;
}

// Per process: the build's text, the same for every runtime, written once.
static struct {
  pthread_once_t once;
  char           text[512];
} VERSION = { .once = PTHREAD_ONCE_INIT };

static void version_write(void) {
  const char *archs = gpu_cuda_archs() ? gpu_cuda_archs() : "";
  int cuda = gpu_cuda_compiled(), metal = gpu_metal_compiled();
  snprintf(VERSION.text, sizeof VERSION.text,
           "hvm4g %s\ncommit: %s\nbackends: cpu, sim%s%s\n"
           "cuda architectures: %s\nmetal: %s",
           HVM4G_VERSION, HVM4G_COMMIT, cuda ? ", cuda" : "", metal ? ", metal" : "",
           !cuda ? "none (built without nvcc)" : archs[0] ? archs : "nvcc's default",
           metal ? "compiled in" : "not compiled in (macOS with Xcode's Metal toolchain only)");
}

const char *hvm4g_version(void) {
  pthread_once(&VERSION.once, version_write);
  return VERSION.text;
}
