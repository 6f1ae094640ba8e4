// eval.h: the CPU evaluator around the WNF core (host code).

#ifndef HVM4G_EVAL_H
#define HVM4G_EVAL_H

#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include "core/core.h"
#include "cpu/pool.h"

// Options the command line sets before evaluation.
typedef struct {
  u32 threads;     // -T N (1 = single thread)
  int stats;       // -s
  int silent;      // -S
  int debug;       // -D: print each step
  u32 sparks;      // --sparks=N: offers a -T thread keeps open (0: none)
  u32 spark_gap;   // --spark-gap=K: interactions between a thread's offers
  u64 reclaim_gap; // --reclaim-gap=SIZE: words handed out between collections
                   // and the largest arena (0: chosen by reclaim.c)
  u32 fresh_ns;    // --fresh-cost=NS: a fresh heap word's cost (0: measured)
  int live;        // the counts are read while a run goes on (progress,
                   // an interrupt's -s): eval_itrs stays within a slice
} EvalConf;

void eval_conf_default(EvalConf *c);   // the defaults (--help's)

void eval_init(void);                // after heap_init and parse
// The host primitives (%log, %nf, %gnf): the layer above installs them
// (run/sched.c), since they normalize on either side. The result of `pri`.
typedef Term (*EvalHost)(Wnf *w, Term pri);
void eval_set_host(EvalHost host);
Term eval_wnf(Wnf *w, Term t);       // WNF with host services; exits on error
// eval_wnf of t read from RT->heap.at[slot], the slot a root meanwhile (one root
// frame for both: the normal form's every visit holds one)
Term eval_wnf_slot(Wnf *w, Term t, u32 slot);
Term eval_wnf_named(Wnf *w, Term t); // eval_wnf setting Wnf.rule (for -D)
u64  eval_itrs(void);                // interactions so far, all threads
// While the pool is halted, before the heap goes back to an earlier state
// (heap_rewind): every thread's arena and interaction count dropped.
// Returns the interactions dropped.
u64  eval_rewind(void);
Wnf *eval_worker(u32 tid);           // the evaluator of CPU thread tid
PoolWorker *eval_workers(void);      // all of them, for the pool

// Prints "RUNTIME_ERROR: <msg>" (as HVM4 does) and exits non-zero.
void eval_die(const char *msg);

// Ends the run as %panic does: msg on stdout, exit 1 (caught like eval_die
// in work done ahead, so it happens only where one thread would reach it).
// msg is malloc'd, and eval_panic's to free.
void eval_panic(char *msg);

// Prints "<kind><msg>" (kind NULL: msg on stdout) and exits non-zero, once per process: a second
// thread that fails meanwhile waits for the first one's exit. On a thread
// of the -T pool it does neither (pool.h, "Errors on the pool's threads"):
// the error is kept, and raised on the runtime's calling thread where that
// thread waits on the pool (eval_check).
void eval_fatal(const char *kind, const char *msg);

// A hook eval_fatal calls first (the library's, run/api.c), on the thread
// that entered the runtime: it may take the error (a longjmp out of the
// runtime, never returning), or return to let eval_fatal print and exit.
// This thread's evaluator state is set back first (eval_thread_reset).
typedef void (*EvalFatal)(const char *kind, const char *msg);
void eval_set_fatal(EvalFatal hook);

// An error a thread of the pool met (eval_fatal): whether one is kept;
// and, where a thread waits on other threads (pool_idle_wait, pool_help, a
// collection's waits; collapse/'s waits should too), whether to end the
// wait: once the pool stopped (such an error, or the close), a helper goes
// back to its loop and the runtime's calling thread raises the error there
// through eval_fatal. After it the runtime can only be closed.
int  eval_failed(void);
void eval_check(void);
// This thread's evaluator state back to what a thread outside the runtime
// has (an error left the runtime from the middle of it): its catch frames,
// its pool nesting, the host slots it held BUSY (put back), the effects it
// held, its root frames and a collection it ran (reclaim_leave).
void eval_thread_reset(void);

// Flushes stdout; if it failed (a full disk, a closed pipe), says so and
// exits non-zero.
void eval_out_check(void);

// Errors in speculative work (-C branches collapsed ahead under -T) are caught, so that
// they surface only if the single-thread order reaches that work. A frame
// catches what is raised on its thread at its nesting level (not inside a
// nested pool job, whose bookkeeping a jump would skip): eval_die and the
// other fatal errors jump back to it with the message. Usage:
//   EvalCatch c; EvalCatch *up = eval_catch_push(&c);
//   if (setjmp(c.env) == 0) { ...work... } else { ...c.msg... }
//   eval_catch_pop(up);
typedef struct {
  jmp_buf env;
  u32     nest;       // the thread's pool nesting when pushed
  void   *holds;      // the host slots held BUSY when pushed (eval.c)
  u16     stuck_ep;   // SNF_STUCK_EP when pushed (cpu.h): a jump out of a
                      // normalization ends its stuck DUP memo
  u32     job;        // SNF_JOB when pushed (cpu.h)
  void   *roots;      // the thread's root frames when pushed (reclaim.h)
  int     hosts;      // host primitives it ran when pushed
  u32     hold;       // the thread's eval_hold_effects level when pushed
  int     plain;      // 1: an "hvm4g:" (not a RUNTIME_ERROR) message;
                      // 2: a %panic's
  char    msg[160];
} EvalCatch;

EvalCatch *eval_catch_push(EvalCatch *c);  // returns the frame it hides
void       eval_catch_pop(EvalCatch *up);
void       eval_rethrow(const EvalCatch *c); // prints c's error, exits
void       eval_nest(int d);              // the pool's nesting (snf.c)
int        eval_holding(void);            // this thread holds a host slot BUSY

// Work done ahead (-C branches under -T): eval_ahead(1) marks this thread's next
// reductions as such; eval_stop_ahead(1) makes every such reduction, on any
// thread, end soon by raising an error its catch frame takes (a check every
// eval_wnf call, and within one every 2^20 interactions, a slice that
// doubles up to 2^26). eval_stop_ahead(0) clears it.
void eval_ahead(int on);
void eval_stop_ahead(int on);

// Effects in one-thread order (snf.c, "Effects and errors under -T"): while
// this thread holds effects (eval_hold_effects(1), nested), a reduction that
// meets a host primitive or a runtime error does not run or report it: it
// stops, leaving its term rebuilt (valid, equal to the input), and
// eval_held_stop() then returns 1 once (and clears it).
void eval_hold_effects(int on);
// Per thread: the last reduction on this thread stopped so.
extern _Thread_local int EVAL_HELD_STOP;
static inline int eval_held_stop(void) {   // inline: cnf asks at every step
  if (!EVAL_HELD_STOP) return 0;
  EVAL_HELD_STOP = 0;
  return 1;
}

// A DUP met again while it was reduced (two copies under one label) gives
// a result that depends on how the book is copied: HVM4 copies it a node
// at a time, and only the lazy core (cpu/lazy.c) does too. The error that
// ends such a run sets a flag eval_met_again() returns (and clears); the
// run may then start over from the program with eval_lazy_book(1): every
// reduction uses the lazy core, one thread's DUP mode, and the
// normalizers walk in one thread's order (eval_lazy()).
int  eval_met_again(void);
void eval_lazy_book(int on);
int  eval_lazy(void);

// The evaluator's state, a runtime's (RT->cpu->eval; eval.c)
// ==========================================================

// The first error a thread of the pool met (eval_fatal), kept for the
// runtime's calling thread (eval_check).
typedef struct {
  _Atomic int  state;      // 0: none; 1: being written; 2: kept
  const char  *kind;       // eval_fatal's kind (a literal; NULL: a %panic)
  char         msg[256];
} EvalFailure;

typedef struct {
  EvalHost     host;        // eval_set_host
  EvalFatal    fatal;       // eval_set_fatal
  PoolWorker  *workers;     // one per CPU thread
  u32          nworkers;    // set last (the watcher thread may count)
  _Atomic int  stop_ahead;  // eval_stop_ahead
  int          lazy;        // eval_lazy_book
  atomic_int   met_again;   // the last error was a DUP met again
  EvalFailure  failure;
} Eval;

// cpu_rt_close: the workers' stacks unmapped and the workers freed.
void eval_close(void);

// Inside the CPU evaluator (eval.c, snf.c, collapse.c, prim.c)
// ==========================================================

u32  eval_alloc(Wnf *w, u32 n);       // n fresh heap words from w's arena
int  eval_refill(Wnf *w, u32 n);      // new arena of >= n words; 0 if none
Term eval_wnf_run_rules(Wnf *w, Term t); // wnf_run setting Wnf.rule (step.c)
Term eval_wnf_run_lazy(Wnf *w, Term t);  // wnf_run copying the book lazily (lazy.c)
Wnf *eval_self(void);                 // the calling CPU thread's evaluator
void eval_spark(Wnf *w, u64 task);    // reduces an offered operand (wnf.h)


#endif
