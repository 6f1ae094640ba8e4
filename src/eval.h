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
void eval_snf_at(u32 loc);           // strong normal form of HEAP[loc], in place
void eval_collapse(u32 loc, long long limit); // -C / -CN: print each branch
u64  eval_itrs(void);                // interactions so far, all threads
Wnf *eval_worker(u32 tid);           // the evaluator of CPU thread tid

// Prints "RUNTIME_ERROR: <msg>" (as HVM4 does) and exits non-zero.
void eval_die(const char *msg);

#endif
