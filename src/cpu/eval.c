// eval.c: the CPU driver around the WNF core: one Wnf per CPU thread, host
// services (primitives, deferral), errors, interaction counts.

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <unistd.h>
#include <stdatomic.h>
#include "cpu/eval.h"
#include "cpu/pool.h"
#include "heap/heap.h"
#include "lang/names.h"
#include "cpu/cpu.h"

EvalConf EVAL = { .threads = 1, .sparks = 4, .spark_gap = 1024 };

static EvalHost HOST = NULL;  // eval_set_host

void eval_set_host(EvalHost host) {
  HOST = host;
}

static Wnf *WORKERS = NULL;   // one per CPU thread
static u32  NWORKERS = 0;

// WNF stack entries per thread (reserved, committed when touched).
#define STACK_WORDS (1u << 27)

static void die_plain(const char *msg);

_Thread_local Term *CPU_HELD     = NULL;
_Thread_local u32   CPU_HELD_CAP = 0;

// A thread's CPU_HELD is freed when the thread ends.
static pthread_key_t  HELD_KEY;
static pthread_once_t HELD_ONCE = PTHREAD_ONCE_INIT;

static void held_key(void) {
  pthread_key_create(&HELD_KEY, free);
}

void cpu_held_put(u32 i, Term c) {
  u32 cap = CPU_HELD_CAP ? CPU_HELD_CAP : 1024;
  while (cap <= i) cap *= 2;
  Term *n = realloc(CPU_HELD, (size_t)cap * sizeof(Term));
  if (!n) die_plain("out of memory for the WNF stack");
  pthread_once(&HELD_ONCE, held_key);
  pthread_setspecific(HELD_KEY, n);
  CPU_HELD     = n;
  CPU_HELD_CAP = cap;
  CPU_HELD[i]  = c;
}

// A frame stands for a node on the path from the root, and a path of an
// acyclic graph visits each node once: a stack deeper than the heap is a
// cycle, which then ends within --heap instead of after STACK_WORDS frames.
static u32 eval_stack_words(void) {
  u64 heap = HEAP_WORDS < (1u << 16) ? (1u << 16) : HEAP_WORDS;
  return heap < STACK_WORDS ? (u32)heap : STACK_WORDS;
}

Wnf *eval_self(void) {
  return eval_worker(pool_tid());
}

Wnf *eval_worker(u32 tid) {
  return tid < NWORKERS ? &WORKERS[tid] : NULL;
}

u64 eval_itrs(void) {
  u64 n = 0;
  for (u32 i = 0; i < NWORKERS; i++) n += __atomic_load_n(&WORKERS[i].itrs, __ATOMIC_RELAXED);
  return n;
}

u64 eval_rewind(void) {
  u64 n = 0;
  for (u32 i = 0; i < NWORKERS; i++) {
    n += WORKERS[i].itrs;
    WORKERS[i].itrs = 0;
    WORKERS[i].next = 0;
    WORKERS[i].end  = 0;
  }
  return n;
}

// Errors
// ======

static _Thread_local EvalCatch *CATCH = NULL;
static _Thread_local u32        NEST  = 0;
// Host primitives' slots held BUSY while the host runs them (eval_loop),
// innermost first: a caught error puts those primitives back, or other
// threads would wait on their slots forever.
typedef struct HostHold {
  u32              at;
  Term             pri;
  struct HostHold *up;
} HostHold;

static _Thread_local HostHold *HOLDS = NULL;

EvalCatch *eval_catch_push(EvalCatch *c) {
  EvalCatch *up = CATCH;
  c->nest     = NEST;
  c->holds    = HOLDS;
  c->stuck_ep = SNF_STUCK_EP;
  c->job      = SNF_JOB;
  CATCH       = c;
  return up;
}

void eval_catch_pop(EvalCatch *up) {
  CATCH = up;
}

void eval_nest(int d) {
  NEST += d;
}

int eval_holding(void) {
  return HOLDS != NULL;
}

static void die_with(const char *msg, int plain) {
  if (CATCH && CATCH->nest == NEST) {
    EvalCatch *c = CATCH;
    for (HostHold *h = HOLDS; h != c->holds; h = h->up) {
      atomic_store_explicit((_Atomic Term *)&HEAP[h->at], h->pri, memory_order_release);
    }
    HOLDS        = c->holds;
    SNF_STUCK_EP = c->stuck_ep;
    SNF_JOB      = c->job;
    snprintf(c->msg, sizeof c->msg, "%s", msg);
    c->plain = plain;
    CATCH    = NULL;   // the frame's owner pops it
    longjmp(c->env, 1);
  }
  if (plain == 2) eval_fatal(NULL, msg);
  eval_fatal(plain ? "hvm4g: " : "RUNTIME_ERROR: ", msg);
}

static EvalFatal FATAL = NULL;   // eval_set_fatal

void eval_set_fatal(EvalFatal hook) {
  FATAL = hook;
}

void eval_fatal(const char *kind, const char *msg) {
  if (FATAL) FATAL(kind, msg);   // returns only when it did not take it
  // Under -T several threads can fail at once: the first one reports and
  // exits; the others park, so that the error is printed once, as on one
  // thread.
  static atomic_int dying = 0;
  if (atomic_exchange(&dying, 1)) {
    for (;;) pause();
  }
  // stdout is flushed by exit(), after the message, as HVM4 does; a
  // %panic's message (no kind) is program output, in order on stdout.
  if (kind) fprintf(stderr, "%s%s\n", kind, msg);
  else printf("%s\n", msg);
  exit(1);
}

void eval_die(const char *msg) {
  die_with(msg, 0);
}

void eval_panic(const char *msg) {
  die_with(msg, 2);
}

void eval_out_check(void) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    if (FATAL) FATAL("hvm4g: ", "cannot write the output");
    fprintf(stderr, "hvm4g: cannot write the output\n");
    _exit(1);   // exit() would flush stdout again
  }
}

static void die_plain(const char *msg) {
  die_with(msg, 1);
}

void eval_rethrow(const EvalCatch *c) {
  die_with(c->msg, c->plain);
}

// Work ahead
// ==========

// A slice doubles each time one WNF outlasts it: stopping to check costs a
// rebuild of the WNF stack, so a deep stack must not pay it too often.
#define AHEAD_SLICE     (1ull << 20)
#define AHEAD_SLICE_MAX (1ull << 26)

static _Thread_local int AHEAD      = 0;
static _Atomic int       STOP_AHEAD = 0;

static _Thread_local u32 HOLD_EFFECTS = 0;   // > 0: effects and errors stop
static _Thread_local int HELD_STOP    = 0;   // the last reduction stopped so

void eval_hold_effects(int on) {
  if (on) HOLD_EFFECTS++;
  else    HOLD_EFFECTS--;
}

int eval_held_stop(void) {
  int s = HELD_STOP;
  HELD_STOP = 0;
  return s;
}

// Interactions between w's offers (sparks; 0: none): only under -T, and
// not in work ahead, which may never be needed.
static u32 eval_offer_gap(Wnf *w, int ahead) {
  int on = w->dup_mode != DUP_SOLO && EVAL.sparks > 0 && !EVAL.debug && !ahead;
  return on ? EVAL.spark_gap : 0;
}

void eval_ahead(int on) {
  AHEAD = on;
  Wnf *w = eval_self();
  w->offer = eval_offer_gap(w, on);
}

void eval_stop_ahead(int on) {
  atomic_store_explicit(&STOP_AHEAD, on, memory_order_relaxed);
}

// Ends work ahead once stopped, when this thread's catch frame takes it.
static void ahead_check(void) {
  if (atomic_load_explicit(&STOP_AHEAD, memory_order_relaxed) &&
      CATCH && CATCH->nest == NEST) {
    die_with("stopped", 1);
  }
}

int eval_refill(Wnf *w, u32 n) {
  return (int)cpu_refill(w, n);
}

u32 eval_alloc(Wnf *w, u32 n) {
  if (w->end - w->next < n && !eval_refill(w, n)) {
    die_plain("heap exhausted (use --heap=SIZE for a larger heap)");
  }
  u32 at = w->next;
  w->next += n;
  return at;
}

void eval_init(void) {
  u32 n = EVAL.threads ? EVAL.threads : 1;
  WORKERS = calloc(n, sizeof(Wnf));
  if (!WORKERS) die_plain("out of memory");
  NWORKERS = n;
  for (u32 i = 0; i < n; i++) {
    Wnf *w = &WORKERS[i];
    cpu_wnf_init(w, eval_stack_words());
    w->book_cnt = table_count();
    w->dup_mode = n > 1 ? DUP_SHARED : DUP_SOLO;
    w->offer    = eval_offer_gap(w, 0);
  }
}

static const char *err_msg(u32 err) {
  switch (err) {
    case ERR_APP_NUM: return "cannot apply a number";
    case ERR_APP_CTR: return "cannot apply a constructor";
    case ERR_PRIM:    return "unknown primitive";
    case ERR_LABEL:   return "dynamic label is not a number";
    case ERR_LABEL_OWN:
      return "dynamic label is reserved: labels 16515072 to 16777215 (taken "
             "modulo 2^24; named '$___' to '$$$$') belong to the runtime";
    case ERR_DUP_SELF:
      return "a DUP holds one of its own copies (two copies met under one "
             "label): the term is infinite";
    default:          return "evaluation failed";
  }
}

// While a slot is held elsewhere: one pool task, a spark only while this
// thread holds a host slot or works ahead. Inside a job's task, only a task
// of that job (or a spark): a task of another job may wait on a %nf slot
// whose holder waits for this job, which cannot end while this thread's
// task lies under it (thread_nf_held_cross hung 1 run in 400 at -T4 with
// the device simulated). The task runs one nesting level down, so that an
// error in it is not taken by a catch frame of ours.
static int eval_help(Wnf *w) {
  NEST++;
  int ran = pool_help(w, eval_holding() || AHEAD ? POOL_SPARK : SNF_JOB);
  NEST--;
  return ran;
}

// The driver loop, instantiated twice: with the plain core and, for -D,
// with the core that records each interaction's name (step.c), so that the
// plain one compiles exactly as if -D did not exist.
typedef Term (*WnfRun)(Wnf *w, Term t);

static inline Term eval_loop(Wnf *w, Term t, WnfRun run) {
  u32 spins  = 0;
  // Work ahead runs in budgeted slices (to be stopped); so does any run
  // while EVAL.live asks for the counts (a long WNF writes its count only
  // when it returns), unless the caller set a budget of its own.
  int sliced = (AHEAD || (EVAL.live && w->budget == ~0ull)) && !EVAL.debug;
  u64 slice  = AHEAD_SLICE;
  for (;;) {
    if (sliced) {
      if (AHEAD) ahead_check();
      w->budget = w->itrs + slice;
    }
    t = run(w, t);
    switch (w->status) {
      case WNF_OK: {
        if (sliced) w->budget = ~0ull;
        return t;
      }
      case WNF_HOST: {
        if (HOLD_EFFECTS) {   // left for the one-thread replay (snf.c)
          HELD_STOP = 1;
          return t;
        }
        // The primitive sits at HEAP[host_at] inside t (or is t). Under
        // DUP_SHARED that slot may be a DUP expression another thread can
        // reach: hold it BUSY while the host works, so it runs once.
        Term pri = w->host;
        u32  at  = w->host_at;
        if (at && w->dup_mode != DUP_SOLO) {
          Term old = pri;
          if (!atomic_compare_exchange_strong((_Atomic Term *)&HEAP[at], &old, BUSY)) {
            continue;
          }
        }
        HostHold hold = { at, pri, HOLDS };
        if (at && w->dup_mode != DUP_SOLO) HOLDS = &hold;
        if (!HOST) eval_die("a primitive needs the host, and none is installed");
        Term r = HOST(w, pri);
        HOLDS = hold.up;
        if (at) {
          atomic_store_explicit((_Atomic Term *)&HEAP[at], r, memory_order_release);
        } else {
          t = r;
        }
        continue;
      }
      case WNF_DEFER: {
        // Another CPU thread holds a DUP slot or reduces an operand we
        // offered: help the pool meanwhile, then retry.
        w->defers++;
        if (eval_help(w)) {
          spins = 0;
        } else if (++spins < 64) {
          cpu_relax();
        } else {
          sched_yield();
        }
        continue;
      }
      case WNF_BUDGET: {
        if (sliced) {
          if (slice < AHEAD_SLICE_MAX) slice *= 2;
          continue;
        }
        return t;
      }
      case WNF_OOM:
      case WNF_STACK: {
        // A pool task has no frame to return to: the one-thread replay
        // meets the same end on the caller's thread, which reports it.
        if (HOLD_EFFECTS) {
          HELD_STOP = 1;
          return t;
        }
        die_plain(w->status == WNF_OOM ? "heap exhausted (use --heap=SIZE for a larger heap)"
                                  : "evaluation stack exhausted");
        return t;
      }
      default: {
        if (HOLD_EFFECTS) {   // reported, if at all, in one-thread order
          HELD_STOP = 1;
          return t;
        }
        eval_die(err_msg(w->err));
        return t;
      }
    }
  }
}

// Sparks
// ======

// Tries a spark this many times while its reduction meets BUSY slots, then
// leaves the rest to the worker that offered it.
#define SPARK_TRIES 4096
// Interactions between a spark's checks for a stop of the pool.
#define SPARK_SLICE (1u << 16)

void eval_spark(Wnf *w, u64 task) {
  u32           slot = (u32)task;
  _Atomic Term *at = (_Atomic Term *)&HEAP[slot];
  Term y = atomic_load_explicit(at, memory_order_acquire);
  if (!IS_SUB(y) || !atomic_compare_exchange_strong(at, &y, BUSY)) {
    return;   // taken back, or claimed by another worker
  }
  // Whatever stops it (an error, a host primitive, a slot held elsewhere)
  // stops it here: the offering worker meets it again in its own order.
  u64  budget = w->budget;
  Term t      = NO_SUB(y);
  Term keep   = 0;   // still on offer: a stop of the pool is under way
  u32  tries  = 0, idle = 0;
  for (;;) {
    w->budget = w->itrs + SPARK_SLICE;
    t = wnf_run(w, t);
    if (w->status == WNF_BUDGET) {
      if (pool_halting()) {
        keep = SUB_BIT;
        break;
      }
      continue;
    }
    if (w->status != WNF_DEFER || eval_holding() || ++tries >= SPARK_TRIES) break;
    w->defers++;
    pool_idle_wait(&idle);
  }
  w->budget = budget;
  atomic_store_explicit(at, t | keep, memory_order_release);
}

Term eval_wnf(Wnf *w, Term t) {
  return eval_loop(w, t, wnf_run);
}

Term eval_wnf_named(Wnf *w, Term t) {
  return eval_loop(w, t, eval_wnf_run_rules);
}
