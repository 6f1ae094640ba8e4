// eval.c: the CPU driver around the WNF core: one Wnf per CPU thread, host
// services (primitives, deferral), errors, interaction counts.

#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <stdatomic.h>
#include "eval.h"
#include "heap.h"
#include "names.h"
#include "cpu.h"
#include "rules.h"

EvalConf EVAL = { .threads = 1 };

static Wnf *WORKERS = NULL;   // one per CPU thread
static u32  NWORKERS = 0;

// WNF stack entries per thread (reserved, committed when touched).
#define STACK_WORDS (1u << 27)

Wnf *eval_worker(u32 tid) {
  return tid < NWORKERS ? &WORKERS[tid] : NULL;
}

u64 eval_itrs(void) {
  u64 n = 0;
  for (u32 i = 0; i < NWORKERS; i++) n += __atomic_load_n(&WORKERS[i].itrs, __ATOMIC_RELAXED);
  return n;
}

// -D names
// ========
// The names HVM4 prints after each step's separator line.

static const char *RULE_NAMES[R_FIXED] = {
  [R_APP_LAM]         = "APP-LAM",         [R_APP_SUP]         = "APP-SUP",
  [R_APP_ERA]         = "APP-ERA",         [R_APP_INC]         = "APP-INC",
  [R_APP_MAT_SUP]     = "APP-MAT-SUP",     [R_MAT_INC]         = "MAT-INC",
  [R_USE_VAL]         = "USE-VAL",         [R_USE_SUP]         = "USE-SUP",
  [R_USE_ERA]         = "USE-ERA",         [R_USE_INC]         = "USE-INC",
  [R_APP_MAT_CTR_MAT] = "APP-MAT-CTR-MAT", [R_APP_MAT_CTR_MIS] = "APP-MAT-CTR-MIS",
  [R_APP_MAT_NUM_MAT] = "APP-MAT-NUM-MAT", [R_APP_MAT_NUM_MIS] = "APP-MAT-NUM-MIS",
  [R_DUP_SUP]         = "DUP-SUP",         [R_OP2_NUM_NUM]     = "OP2-NUM-NUM",
  [R_OP2_SUP]         = "OP2-SUP",         [R_OP2_ERA]         = "OP2-ERA",
  [R_OP2_INC_X]       = "OP2-INC-X",       [R_OP2_NUM_SUP]     = "OP2-NUM-SUP",
  [R_OP2_NUM_ERA]     = "OP2-NUM-ERA",     [R_OP2_INC_Y]       = "OP2-INC-Y",
  [R_EQL_ERA_L]       = "EQL-ERA-L",       [R_EQL_ANY]         = "1",
  [R_EQL_SUP_L]       = "EQL-SUP-L",       [R_EQL_INC_L]       = "EQL-INC-L",
  [R_EQL_ERA_R]       = "EQL-ERA-R",       [R_EQL_SUP_R]       = "EQL-SUP-R",
  [R_EQL_INC_R]       = "EQL-INC-R",
  [R_AND_ZER]         = "AND-ZER",         [R_AND_ONE]         = "AND-ONE",
  [R_OR_ZER]          = "OR-ZER",          [R_OR_ONE]          = "OR-ONE",
  [R_AND_ERA]         = "AND-ERA",         [R_OR_ERA]          = "OR-ERA",
  [R_AND_SUP]         = "AND-SUP",         [R_OR_SUP]          = "OR-SUP",
  [R_AND_INC]         = "AND-INC",         [R_OR_INC]          = "OR-INC",
  [R_DSU_NUM]         = "DSU-NUM",         [R_DDU_NUM]         = "DDU-NUM",
  [R_DSU_SUP]         = "DSU-SUP",         [R_DDU_SUP]         = "DDU-SUP",
  [R_DSU_ERA]         = "DSU-ERA",         [R_DDU_ERA]         = "DDU-ERA",
  [R_DSU_INC]         = "DSU-INC",         [R_DDU_INC]         = "DDU-INC",
  [R_APP_RED_ERA]     = "APP-RED-ERA",     [R_APP_RED_SUP]     = "APP-RED-SUP",
  [R_APP_RED_INC]     = "APP-RED-INC",     [R_APP_RED_LAM]     = "APP-RED-LAM",
  [R_APP_RED_RED]     = "APP-RED-RED",     [R_APP_RED_NAM]     = "APP-RED-NAM",
  [R_APP_RED_DRY]     = "APP-RED-DRY",     [R_APP_RED_CTR]     = "APP-RED-CTR",
  [R_APP_RED_MAT_ERA] = "APP-RED-MAT-ERA", [R_APP_RED_MAT_SUP] = "APP-RED-MAT-SUP",
  [R_APP_RED_MAT_INC] = "APP-RED-MAT-INC",
  [R_APP_RED_MAT_CTR_MAT] = "APP-RED-MAT-CTR-MAT",
  [R_APP_RED_MAT_CTR_MIS] = "APP-RED-MAT-CTR-MIS",
  [R_APP_RED_MAT_NUM_MAT] = "APP-RED-MAT-NUM-MAT",
  [R_APP_RED_MAT_NUM_MIS] = "APP-RED-MAT-NUM-MIS",
  [R_APP_RED_USE_ERA] = "APP-RED-USE-ERA", [R_APP_RED_USE_SUP] = "APP-RED-USE-SUP",
  [R_APP_RED_USE_INC] = "APP-RED-USE-INC", [R_APP_RED_USE_VAL] = "APP-RED-USE-VAL",
  [R_WNF_UNS]         = "WNF-UNS",
};

// DUP of a value: named by the value's tag.
static const char *dup_name(u32 t) {
  switch (t) {
    case SUP: return "DUP-SUP";
    case LAM: return "DUP-LAM";
    case DRY: return "DUP-DRY";
    case RED: return "DUP-RED";
    default:  return wnf_is_nam(t) ? "DUP-NAM" : "DUP-NOD";
  }
}

// (a === b) of two values: named by both tags.
static const char *eql_name(u32 a, u32 b) {
  if (a == ANY || b == ANY)                     return "1";
  if (a == NUM && b == NUM)                     return "EQL-NUM";
  if (a == LAM && b == LAM)                     return "EQL-LAM";
  if (IS_CTR(a) && IS_CTR(b))                   return "EQL-CTR-MIS";
  if ((a == MAT || a == SWI) && (b == MAT || b == SWI)) return "EQL-MAT-MIS";
  if (a == USE && b == USE)                     return "EQL-USE";
  if (wnf_is_nam(a) && wnf_is_nam(b))           return "-";
  if (a == DRY && b == DRY)                     return "EQL-DRY";
  return "EQL-NOT";
}

const char *eval_rule_name(u32 rule) {
  if (rule >= R_EQL) return eql_name((rule - R_EQL) >> 7, (rule - R_EQL) & 0x7F);
  if (rule >= R_DUP) return dup_name(rule - R_DUP);
  return rule < R_FIXED ? RULE_NAMES[rule] : NULL;
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
  c->nest  = NEST;
  c->holds = HOLDS;
  CATCH    = c;
  return up;
}

void eval_catch_pop(EvalCatch *up) {
  CATCH = up;
}

void eval_nest(int d) {
  NEST += d;
}

static void die_with(const char *msg, int plain) {
  if (CATCH && CATCH->nest == NEST) {
    EvalCatch *c = CATCH;
    for (HostHold *h = HOLDS; h != c->holds; h = h->up) {
      atomic_store_explicit((_Atomic Term *)&HEAP[h->at], h->pri, memory_order_release);
    }
    HOLDS = c->holds;
    snprintf(c->msg, sizeof c->msg, "%s", msg);
    c->plain = plain;
    CATCH    = NULL;   // the frame's owner pops it
    longjmp(c->env, 1);
  }
  // stdout is flushed by exit(), after the message, as HVM4 does.
  fprintf(stderr, plain ? "Error: %s\n" : "RUNTIME_ERROR: %s\n", msg);
  exit(1);
}

void eval_die(const char *msg) {
  die_with(msg, 0);
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

void eval_ahead(int on) {
  AHEAD = on;
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
    cpu_wnf_init(w, STACK_WORDS);
    w->book_cnt = table_count();
    w->dup_mode = n > 1 ? DUP_SHARED : DUP_SOLO;
  }
  snf_init();
}

static const char *err_msg(u32 err) {
  switch (err) {
    case ERR_APP_NUM: return "cannot apply a number";
    case ERR_APP_CTR: return "cannot apply a constructor";
    case ERR_PRIM:    return "unknown primitive";
    case ERR_LABEL:   return "dynamic label is not a number";
    default:          return "evaluation failed";
  }
}

// The driver loop, instantiated twice: with the plain core and, for -D,
// with the core that records each interaction's name (step.c), so that the
// plain one compiles exactly as if -D did not exist.
typedef Term (*WnfRun)(Wnf *w, Term t);

static inline Term eval_loop(Wnf *w, Term t, WnfRun run) {
  u32 spins  = 0;
  int sliced = AHEAD && !EVAL.debug;   // work ahead: in budgeted slices
  u64 slice  = AHEAD_SLICE;
  for (;;) {
    if (sliced) {
      ahead_check();
      w->budget = w->itrs + slice;
    }
    t = run(w, t);
    switch (w->status) {
      case WNF_OK: {
        if (sliced) w->budget = ~0ull;
        return t;
      }
      case WNF_HOST: {
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
        Term r = prim_host(w, pri);
        HOLDS = hold.up;
        if (at) {
          atomic_store_explicit((_Atomic Term *)&HEAP[at], r, memory_order_release);
        } else {
          t = r;
        }
        continue;
      }
      case WNF_DEFER: {
        // Another CPU thread holds a DUP slot: it finishes soon; retry.
        w->defers++;
        if (++spins < 64) {
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
      case WNF_OOM: {
        die_plain("heap exhausted (use --heap=SIZE for a larger heap)");
        return t;
      }
      case WNF_STACK: {
        die_plain("evaluation stack exhausted");
        return t;
      }
      default: {
        eval_die(err_msg(w->err));
        return t;
      }
    }
  }
}

Term eval_wnf(Wnf *w, Term t) {
  return eval_loop(w, t, wnf_run);
}

Term eval_wnf_named(Wnf *w, Term t) {
  return eval_loop(w, t, eval_wnf_run_rules);
}
