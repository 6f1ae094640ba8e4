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
  for (u32 i = 0; i < NWORKERS; i++) n += WORKERS[i].itrs;
  return n;
}

// stdout is flushed by exit(), after the message, as HVM4 does.
void eval_die(const char *msg) {
  fprintf(stderr, "RUNTIME_ERROR: %s\n", msg);
  exit(1);
}

static void die_plain(const char *msg) {
  fprintf(stderr, "Error: %s\n", msg);
  exit(1);
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

Term eval_wnf(Wnf *w, Term t) {
  u32 spins = 0;
  for (;;) {
    t = wnf_run(w, t);
    switch (w->status) {
      case WNF_OK: {
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
        Term r = prim_host(w, pri);
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
