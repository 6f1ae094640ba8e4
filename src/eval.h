// eval.h: the CPU evaluator around the WNF core (host code).

#ifndef HVM4G_EVAL_H
#define HVM4G_EVAL_H

#include <stdio.h>
#include "core.h"

// Options the command line sets before evaluation.
typedef struct {
  u32 threads;     // -T N (1 = single thread)
  int stats;       // -s
  int silent;      // -S
  int debug;       // -D: print each step
} EvalConf;

extern EvalConf EVAL;

void eval_init(void);                // after heap_init and parse
Term eval_wnf(Wnf *w, Term t);       // WNF with host services; exits on error
Term eval_wnf_named(Wnf *w, Term t); // eval_wnf setting Wnf.rule (for -D)
void eval_snf_at(u32 loc);           // strong normal form of HEAP[loc], in place
void eval_collapse(u32 loc, long long limit); // -C / -CN: print each branch
u64  eval_itrs(void);                // interactions so far, all threads
Wnf *eval_worker(u32 tid);           // the evaluator of CPU thread tid
const char *eval_rule_name(u32 rule); // HVM4's name of interaction Wnf.rule

// Prints "RUNTIME_ERROR: <msg>" (as HVM4 does) and exits non-zero.
void eval_die(const char *msg);

// Inside the CPU evaluator (eval.c, snf.c, collapse.c, prim.c)
// ==========================================================

u32  eval_alloc(Wnf *w, u32 n);       // n fresh heap words from w's arena
int  eval_refill(Wnf *w, u32 n);      // new arena of >= n words; 0 if none
Term prim_host(Wnf *w, Term pri);     // result of a host primitive (%log..)
Term eval_wnf_run_rules(Wnf *w, Term t); // wnf_run setting Wnf.rule (step.c)
void snf_init(void);                  // after the workers exist
int  snf_pool_busy(void);             // other CPU threads may be reducing
Wnf *eval_self(void);                 // the calling CPU thread's evaluator

// Runs fn(w, arg, i) for i < n on the -T pool (w: the running thread's
// evaluator) and returns when all are done; in order on one thread if -T 1.
typedef void (*PoolFn)(Wnf *w, void *arg, u32 i);
void snf_pool_run(PoolFn fn, void *arg, u32 n);
// The same in two steps: start queues the calls and returns at once (the
// caller may do other work meanwhile); join works on them until all are
// done. A start of fewer calls than threads runs them at once (join: no-op).
u32  snf_pool_start(PoolFn fn, void *arg, u32 n);
void snf_pool_join(u32 handle);

#if defined(__x86_64__)
#define cpu_relax() __asm__ __volatile__("pause")
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#else
#define cpu_relax() ((void)0)
#endif

#endif
