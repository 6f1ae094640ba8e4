// eval.c: the CPU driver around the WNF core: one Wnf per CPU thread, host
// services (primitives, deferral), errors, interaction counts; and the
// cpu/ layer's part of a runtime (cpu_rt.h): its open and its close.

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <unistd.h>
#include <stdatomic.h>
#include "cpu/eval.h"
#include "cpu/pool.h"
#include "heap/heap.h"
#include "lang/names.h"
#include "cpu/cpu.h"
#include "cpu/reclaim.h"
#include "cpu/snf.h"
#include "heap/rt.h"
#include "cpu/cpu_rt.h"

void eval_conf_default(EvalConf *c) {
  *c = (EvalConf){ .threads = 1, .sparks = 4, .spark_gap = 1024 };
}

static Eval *me(void) {
  return &RT->cpu->eval;
}

void eval_set_host(EvalHost host) {
  me()->host = host;
}

// WNF stack entries per thread (reserved, committed when touched).
#define STACK_WORDS (1u << 27)

static void die_plain(const char *msg);

// A frame stands for a node on the path from the root, and a path of an
// acyclic graph visits each node once: a stack deeper than the heap is a
// cycle, which then ends within --heap instead of after STACK_WORDS frames.
static u32 eval_stack_words(void) {
  u64 heap = RT->heap.cap < (1u << 16) ? (1u << 16) : RT->heap.cap;
  return heap < STACK_WORDS ? (u32)heap : STACK_WORDS;
}

Wnf *eval_self(void) {
  return eval_worker(pool_tid());
}

Wnf *eval_worker(u32 tid) {
  Eval *e = me();
  return tid < e->nworkers ? &e->workers[tid].w : NULL;
}

PoolWorker *eval_workers(void) {
  return me()->workers;
}

u64 eval_itrs(void) {
  Eval *e = me();
  u64   n = 0;
  // the watcher thread (a progress line, an interrupt) may ask while
  // eval_init runs: the workers are counted once they are made
  u32 nw = __atomic_load_n(&e->nworkers, __ATOMIC_ACQUIRE);
  for (u32 i = 0; i < nw; i++) n += __atomic_load_n(&e->workers[i].w.itrs, __ATOMIC_RELAXED);
  return n;
}

u64 eval_rewind(void) {
  Eval *e = me();
  u64   n = 0;
  for (u32 i = 0; i < e->nworkers; i++) {
    Wnf *w = &e->workers[i].w;
    n += w->itrs;
    w->itrs = 0;
    w->next = 0;
    w->end  = 0;
  }
  return n;
}

// Errors
// ======

// A thread's place in the evaluator: the catch frames on its stack, its
// nesting in pool tasks, the host slots it holds, the effects it holds.
// Per thread, as a C stack is: each describes frames of this thread's.
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
static _Thread_local int       HOSTS = 0;   // host primitives running here
static _Thread_local u32       HOLD_EFFECTS = 0;   // > 0: effects and errors stop
// Per thread: this thread's reductions are work ahead (eval_ahead).
static _Thread_local int       AHEAD = 0;

EvalCatch *eval_catch_push(EvalCatch *c) {
  EvalCatch *up = CATCH;
  c->nest     = NEST;
  c->holds    = HOLDS;
  c->stuck_ep = SNF_STUCK_EP;
  c->job      = SNF_JOB;
  c->roots    = reclaim_top(&RT->cpu->reclaim, pool_tid());
  c->hosts    = HOSTS;
  c->hold     = HOLD_EFFECTS;
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

// Puts back the host primitives this thread holds BUSY above `to`.
static void holds_put_back(HostHold *to) {
  for (HostHold *h = HOLDS; h != to; h = h->up) {
    atomic_store_explicit((_Atomic Term *)&RT->heap.at[h->at], h->pri, memory_order_release);
  }
  HOLDS = to;
}

static void die_with(const char *msg, int plain) {
  if (CATCH && CATCH->nest == NEST) {
    EvalCatch *c = CATCH;
    holds_put_back(c->holds);
    reclaim_unwind(&RT->cpu->reclaim, pool_tid(), c->roots);
    reclaim_host(c->hosts - HOSTS);
    HOSTS        = c->hosts;
    HOLD_EFFECTS = c->hold;
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

void eval_set_fatal(EvalFatal hook) {
  me()->fatal = hook;
}

void eval_thread_reset(void) {
  if (RT && RT->cpu) {
    holds_put_back(NULL);
    if (HOSTS) reclaim_host(-HOSTS);
    reclaim_leave(pool_tid());
  }
  HOLDS          = NULL;
  HOSTS          = 0;
  HOLD_EFFECTS   = 0;
  AHEAD          = 0;
  EVAL_HELD_STOP = 0;
  CATCH          = NULL;
  NEST           = 0;
  SNF_STUCK_EP   = 0;
  SNF_JOB        = POOL_ANY;
}

// The first error on a thread of the pool is kept, whole, before it is
// seen (state 2); a later one is dropped, as a second error on one thread
// would never be reached.
static void fail_keep(const char *kind, const char *msg) {
  EvalFailure *f    = &me()->failure;
  int          none = 0;
  if (!atomic_compare_exchange_strong(&f->state, &none, 1)) return;
  f->kind = kind;
  snprintf(f->msg, sizeof f->msg, "%s", msg);
  atomic_store_explicit(&f->state, 2, memory_order_release);
}

int eval_failed(void) {
  return atomic_load_explicit(&me()->failure.state, memory_order_acquire) == 2;
}

void eval_check(void) {
  if (!RT || !RT->cpu || !pool_stopping()) return;
  if (pool_helper()) pool_unwind();   // an error on a helper, or the close
  if (!eval_failed()) return;
  EvalFailure *f = &me()->failure;
  eval_fatal(f->kind, f->msg);
}

// A thread of the pool keeps its error for the calling thread and goes
// back to its loop; it never calls the hook, which has no call to return
// to from there.
static void fail_on_helper(const char *kind, const char *msg) {
  if (!RT || !RT->cpu || !pool_helper()) return;
  fail_keep(kind, msg);
  pool_stop();
  pool_unwind();
}

void eval_fatal(const char *kind, const char *msg) {
  fail_on_helper(kind, msg);
  eval_thread_reset();
  EvalFatal hook = RT && RT->cpu ? me()->fatal : NULL;
  if (hook) hook(kind, msg);   // returns only when it did not take it
  // Under -T several threads can fail at once: the first one reports and
  // exits; the others park, so that the error is printed once, as on one
  // thread. Per process: it is the process that ends.
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

// Every taker of the message but the process's own end (a catch frame, a
// pool thread's kept failure, the library's hook) copies at most
// PANIC_KEPT bytes of it and jumps away, where it could no longer be
// freed: those get a copy on this stack.
#define PANIC_KEPT 1024   // the library's ERR_CAP, the largest taker
void eval_panic(char *msg) {
  int taken = (CATCH && CATCH->nest == NEST) || pool_helper() || me()->fatal;
  if (!taken) die_with(msg, 2);   // printed whole, and the process ends
  char kept[PANIC_KEPT];
  snprintf(kept, sizeof kept, "%s", msg);
  free(msg);
  die_with(kept, 2);
}

void eval_out_check(void) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fail_on_helper("hvm4g: ", "cannot write the output");
    eval_thread_reset();
    EvalFatal hook = RT && RT->cpu ? me()->fatal : NULL;
    if (hook) hook("hvm4g: ", "cannot write the output");
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

_Thread_local int EVAL_HELD_STOP = 0;

void eval_hold_effects(int on) {
  if (on) HOLD_EFFECTS++;
  else    HOLD_EFFECTS--;
}

// Interactions between w's offers (sparks; 0: none): only under -T, and
// not in work ahead, which may never be needed.
static u32 eval_offer_gap(Wnf *w, int ahead) {
  int on = w->dup_mode != DUP_SOLO && RT->cpu->conf.sparks > 0 && !RT->cpu->conf.debug && !ahead;
  return on ? RT->cpu->conf.spark_gap : 0;
}

void eval_ahead(int on) {
  AHEAD = on;
  Wnf *w = eval_self();
  w->offer = eval_offer_gap(w, on);
}

void eval_stop_ahead(int on) {
  atomic_store_explicit(&me()->stop_ahead, on, memory_order_relaxed);
}

// Ends work ahead once stopped, when this thread's catch frame takes it.
static void ahead_check(void) {
  if (atomic_load_explicit(&me()->stop_ahead, memory_order_relaxed) &&
      CATCH && CATCH->nest == NEST) {
    die_with("stopped", 1);
  }
}

// A fresh arena: a chunk a collection freed, else max(n, Reclaim.arena)
// words from the top (just n when the heap is short).
static u32 cpu_take(Wnf *w, u32 n) {
  u32 arena = RT->cpu->reclaim.arena;
  u32 want  = n > arena ? n : arena;
  u32 got  = 0;
  u32 at   = heap_take(n, want, &got);
  if (at == 0) {
    return 0;
  }
  w->next = at;
  w->end  = at + got;
  return 1;
}

u32 cpu_refill(Wnf *w, u32 n) {
  Reclaim *r = &RT->cpu->reclaim;
  if (reclaim_due(r) || !cpu_take(w, n)) return 0;
  if (heap_given() >= r->probe) reclaim_probe(w->next, w->end - w->next);
  return 1;
}

// Outside a WNF run no collection may stop the caller (it holds what it
// builds in C): only the heap's room counts.
int eval_refill(Wnf *w, u32 n) {
  return (int)cpu_take(w, n);
}

static void die_exhausted(void) {
  char msg[200];
  reclaim_exhausted(msg, sizeof msg);
  die_plain(msg);
}

u32 eval_alloc(Wnf *w, u32 n) {
  if (w->end - w->next < n && !eval_refill(w, n)) {
    die_exhausted();
  }
  u32 at = w->next;
  w->next += n;
  return at;
}

void eval_init(void) {
  // a context made without the library's open (api_context: the unit
  // tests) is opened here, so that its defaults and locks are set
  if (!RT->cpu->opened) cpu_rt_open();
  Eval *e = me();
  u32   n = RT->cpu->conf.threads ? RT->cpu->conf.threads : 1;
  PoolWorker *wk = aligned_alloc(_Alignof(PoolWorker), n * sizeof(PoolWorker));
  if (!wk) die_plain("out of memory");
  memset(wk, 0, n * sizeof(PoolWorker));
  e->workers = wk;
  reclaim_init(n);
  for (u32 i = 0; i < n; i++) {
    Wnf *w = &wk[i].w;
    cpu_wnf_init(w, eval_stack_words());
    w->book_cnt = table_count();
    w->dup_mode = n > 1 ? DUP_SHARED : DUP_SOLO;
    w->offer    = eval_offer_gap(w, 0);
    w->offer_twice = 1;   // a thread waits for what it offered
    wk[i].rt    = RT;
    wk[i].tid   = i;
    wk[i].lazy  = e->lazy;
  }
  __atomic_store_n(&e->nworkers, n, __ATOMIC_RELEASE);
}

void eval_close(void) {
  Eval *e = me();
  for (u32 i = 0; e->workers && i < e->nworkers; i++) cpu_wnf_free(&e->workers[i].w);
  free(e->workers);
  e->workers  = NULL;
  e->nworkers = 0;
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
    case ERR_DUP_HOST:
      return "an effect inside a DUP's reduction, in a run started over "
             "copying the book lazily (a DUP was met again): HVM4's result "
             "there depends on its heap";
    case ERR_DUP_AGAIN:
      // fits EvalCatch.msg with its kind (-C under -T reports it from there)
      return "a DUP was met again while it was reduced (two copies met under "
             "one label), in a run that cannot start over copying the book "
             "lazily";
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

// Rounds of waiting for a held word (a DEFER) before a thread naps: DUP
// slots are mostly held briefly; a wait this long is for a large operand.
#define DEFER_NAP_AFTER 1024

// The driver loop, instantiated twice: with the plain core and, for -D,
// with the core that records each interaction's name (step.c), so that the
// plain one compiles exactly as if -D did not exist.
typedef Term (*WnfRun)(Wnf *w, Term t);

// The term under reduction sits in a root frame, with the heap slot it
// came from (0: none) and goes back to: whenever the core has stopped
// (rebuilt), a collection may run and must see both (reclaim.c).
static inline Term eval_loop(Wnf *w, Term t, u32 slot, WnfRun run) {
  CpuRt   *cpu   = RT->cpu;
  Reclaim *rc    = &cpu->reclaim;
  u32      tid   = (u32)((PoolWorker *)w - cpu->eval.workers);   // w is its worker's first field
  u32      spins = 0;
  // Work ahead runs in budgeted slices (to be stopped); so does any run
  // while conf.live asks for the counts (a long WNF writes its count only
  // when it returns), unless the caller set a budget of its own.
  int sliced = (AHEAD || (cpu->conf.live && w->budget == ~0ull)) && !cpu->conf.debug;
  u64 slice  = AHEAD_SLICE;
  u64 oom_at = ~0ull;                  // interactions at the last full heap
  RootFrame rf = { &t, slot, NULL };
  reclaim_hold(rc, tid, &rf);
  // A slice's budget is this loop's own: a run nested on this worker (a
  // host primitive's, a pool task eval_help runs) or the caller's next one
  // would take it for a budget of its caller's and return at it unfinished.
#define EVAL_RETURN(x) do {                \
    if (sliced) w->budget = ~0ull;         \
    reclaim_drop(rc, tid, &rf);            \
    return (x);                            \
  } while (0)
  for (;;) {
    if (sliced) {
      if (AHEAD) ahead_check();
      w->budget = w->itrs + slice;
    }
    t = run(w, t);
    switch (w->status) {
      case WNF_OK: {
        EVAL_RETURN(t);
      }
      case WNF_HOST: {
        if (HOLD_EFFECTS) {   // left for the one-thread replay (snf.c)
          EVAL_HELD_STOP = 1;
          EVAL_RETURN(t);
        }
        // The primitive sits at RT->heap.at[host_at] inside t (or is t). Under
        // DUP_SHARED that slot may be a DUP expression another thread can
        // reach: hold it BUSY while the host works, so it runs once.
        Term pri = w->host;
        u32  at  = w->host_at;
        if (at && w->dup_mode != DUP_SOLO) {
          Term old = pri;
          if (!atomic_compare_exchange_strong((_Atomic Term *)&RT->heap.at[at], &old, BUSY)) {
            continue;
          }
        }
        HostHold hold = { at, pri, HOLDS };
        if (at && w->dup_mode != DUP_SOLO) HOLDS = &hold;
        EvalHost host = cpu->eval.host;
        if (!host) eval_die("a primitive needs the host, and none is installed");
        // a collection inside a rooted primitive (reclaim.c) keeps the slot
        // the result goes to, and moves the term an error puts back
        RootFrame hf = { &hold.pri, at, NULL };
        reclaim_hold(rc, tid, &hf);
        reclaim_host(1);
        HOSTS++;
        if (sliced) w->budget = ~0ull;
        Term r = host(w, pri);
        HOSTS--;
        reclaim_host(-1);
        reclaim_drop(rc, tid, &hf);
        HOLDS = hold.up;
        if (at) {
          atomic_store_explicit((_Atomic Term *)&RT->heap.at[at], r, memory_order_release);
          pool_gave_back();
        } else {
          t = r;
        }
        continue;
      }
      case WNF_DEFER: {
        // Another CPU thread holds a DUP slot or reduces an operand we
        // offered: help the pool meanwhile, then retry. A safe point.
        // w->defer is the held slot (the CPU's regions are single words;
        // 0: not known): a retry before it is given back would rebuild
        // the whole stack again for nothing, which grows with its depth.
        // A long wait naps: the holder is reducing a large operand.
        u32           held = w->defer;
        _Atomic Term *word = (_Atomic Term *)&RT->heap.at[held];
        w->defers++;
        if (sliced) w->budget = ~0ull;
        do {
          // a collection may have moved the held word (compaction): the
          // retry rebuilds from t, which the root frame has rewritten
          if (rc->roots && tid < cpu->eval.nworkers && reclaim_poll(rc, tid)) break;
          if (AHEAD) ahead_check();
          if (eval_help(w)) {
            spins = 0;
          } else if (++spins < 64) {
            cpu_relax();
          } else if (spins < DEFER_NAP_AFTER || !held || tid >= cpu->eval.nworkers) {
            sched_yield();
          } else {
            u64 runs = rc->stats.runs;   // no collection ends while this thread is here
            pool_nap_on(word, BUSY);     // asleep, it is away: one may run meanwhile
            if (rc->stats.runs != runs) break;
          }
        } while (held && !pool_stopping() &&
                 atomic_load_explicit(word, memory_order_acquire) == BUSY);
        continue;
      }
      case WNF_BUDGET: {
        if (sliced) {
          if (slice < AHEAD_SLICE_MAX) slice *= 2;
          continue;
        }
        EVAL_RETURN(t);
      }
      case WNF_OOM: {
        // Full, or a collection is due or under way: t is rebuilt and in
        // its root frame. A second full heap with no interaction between
        // is the end.
        int again = w->itrs == oom_at;
        int r     = reclaim_oom(tid);
        oom_at    = w->itrs;
        if (r == 2 || (r == 1 && !again)) continue;
        // A pool task has no frame to return to: the one-thread replay
        // meets the same end on the caller's thread, which reports it.
        if (HOLD_EFFECTS) {
          EVAL_HELD_STOP = 1;
          EVAL_RETURN(t);
        }
        die_exhausted();
        EVAL_RETURN(t);
      }
      case WNF_STACK: {
        if (HOLD_EFFECTS) {
          EVAL_HELD_STOP = 1;
          EVAL_RETURN(t);
        }
        die_plain("evaluation stack exhausted");
        EVAL_RETURN(t);
      }
      default: {
        if (HOLD_EFFECTS) {   // reported, if at all, in one-thread order
          EVAL_HELD_STOP = 1;
          EVAL_RETURN(t);
        }
        // Met in the whole-definition order, a DUP's own copy (held, or
        // its expression by now) is one symptom: the same message whatever
        // the order of -T or the device showed it by.
        if (!cpu->eval.lazy && (w->err == ERR_DUP_AGAIN || w->err == ERR_DUP_SELF)) {
          atomic_store(&cpu->eval.met_again, 1);
          eval_die(err_msg(ERR_DUP_AGAIN));
        }
        eval_die(err_msg(w->err));
        EVAL_RETURN(t);
      }
    }
  }
#undef EVAL_RETURN
}

// Sparks
// ======

// Tries a spark this many times while its reduction meets BUSY slots, then
// leaves the rest to the worker that offered it.
#define SPARK_TRIES 4096
// Interactions between a spark's checks for a stop of the pool: doubling
// each time, as work ahead's slices, since a check rebuilds the stack.
#define SPARK_SLICE (1u << 16)

void eval_spark(Wnf *w, u64 task) {
  u32           slot = (u32)task;
  _Atomic Term *at = (_Atomic Term *)&RT->heap.at[slot];
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
  u32  tid    = pool_tid();
  Reclaim *rc = &RT->cpu->reclaim;
  RootFrame rf = { &t, slot, NULL };   // t, and the slot it goes back to
                                       // (it stays put: reclaim.c's Compaction)
  reclaim_hold(rc, tid, &rf);
  u64  slice  = SPARK_SLICE;
  for (;;) {
    w->budget = w->itrs + slice;
    t = wnf_run(w, t);
    if (w->status == WNF_BUDGET) {
      if (pool_halting()) {
        keep = SUB_BIT;
        break;
      }
      if (slice < AHEAD_SLICE_MAX) slice *= 2;
      continue;
    }
    // a collection due: joined (once; a full heap is the offering
    // worker's to report)
    if (w->status == WNF_OOM && ++tries < SPARK_TRIES && reclaim_oom(tid) == 2) continue;
    if (w->status != WNF_DEFER || eval_holding() || ++tries >= SPARK_TRIES ||
        atomic_load_explicit(&rc->stop, memory_order_relaxed)) break;
    w->defers++;
    pool_idle_wait(&idle);
  }
  reclaim_drop(rc, tid, &rf);
  w->budget = budget;
  atomic_store_explicit(at, t | keep, memory_order_release);
  pool_gave_back();
}

Term eval_wnf_slot(Wnf *w, Term t, u32 slot) {
  if (((PoolWorker *)w)->lazy) return eval_loop(w, t, slot, eval_wnf_run_lazy);
  return eval_loop(w, t, slot, wnf_run);
}

Term eval_wnf(Wnf *w, Term t) {
  return eval_wnf_slot(w, t, 0);
}

void eval_lazy_book(int on) {
  Eval *e = me();
  e->lazy = on;
  for (u32 i = 0; i < e->nworkers; i++) {
    e->workers[i].w.dup_mode = on || e->nworkers == 1 ? DUP_SOLO : DUP_SHARED;
    e->workers[i].lazy       = on;
  }
}

int eval_lazy(void) {
  return me()->lazy;
}

int eval_met_again(void) {
  return atomic_exchange(&me()->met_again, 0);
}

Term eval_wnf_named(Wnf *w, Term t) {
  return eval_loop(w, t, 0, eval_wnf_run_rules);
}

// The part
// ========

int cpu_rt_open(void) {
  CpuRt *cpu = RT->cpu;
  cpu->pool.threads   = 1;
  cpu->reclaim.next   = ~0ull;
  cpu->reclaim.probe  = ~0ull;
  cpu->reclaim.arena  = CPU_ARENA;
  cpu->reclaim.sparse = 1;
  cpu->reclaim.worked = 1;
  cpu->reclaim.cost   = 1;
  cpu->reclaim.fresh  = 1;
  pthread_mutex_init(&cpu->reclaim.share_lock, NULL);
  pthread_mutex_init(&cpu->pool.idle_lock, NULL);
  pthread_cond_init(&cpu->pool.idle_cond, NULL);
  pthread_cond_init(&cpu->pool.nap_cond, NULL);
  pthread_mutex_init(&cpu->snf.epoch_lock, NULL);
  pthread_mutex_init(&cpu->snf.job_lock, NULL);
  cpu->opened = 1;
  return 0;
}

void cpu_rt_stop(void) {
  if (!RT || !RT->cpu) return;
  eval_stop_ahead(1);   // work ahead on the pool ends at its next check
  pool_close();
}

void cpu_rt_close(void) {
  CpuRt *cpu = RT->cpu;
  cpu_rt_stop();
  snf_close();
  reclaim_close();
  eval_close();
  if (cpu->opened) {
    pthread_mutex_destroy(&cpu->reclaim.share_lock);
    pthread_mutex_destroy(&cpu->pool.idle_lock);
    pthread_cond_destroy(&cpu->pool.idle_cond);
    pthread_cond_destroy(&cpu->pool.nap_cond);
    pthread_mutex_destroy(&cpu->snf.epoch_lock);
    pthread_mutex_destroy(&cpu->snf.job_lock);
  }
  // as the runtime's calloc left it, but for the settings: a second close
  // finds nothing to free
  EvalConf conf = cpu->conf;
  memset(cpu, 0, sizeof *cpu);
  cpu->conf = conf;
}
