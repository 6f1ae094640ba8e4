// pool.h: the -T pool: N-1 threads started once plus the calling one,
// each with a work-stealing deque of tasks (host code). What a task means
// is its kind's: a job's slot to normalize (snf.c) or a spark (an offered
// operand, wnf.h "Sparks", run by eval_spark).

#ifndef HVM4G_POOL_H
#define HVM4G_POOL_H

#include <pthread.h>
#include "core/core.h"

// A task is a word: its kind (a job slot, or POOL_SPARK), then a location.
#define POOL_ANY       (~0u)        // pool_find: a task of any kind
#define POOL_SPARK     (~0u - 1)    // the kind of sparks
#define POOL_TASK(k, x) (((u64)(k) << 32) | (u32)(x))
#define POOL_KIND(t)   ((u32)((t) >> 32))

// What a task of each kind means, given by the modules that make them:
// a job's task (snf.c) and a spark (eval.c). The pool calls nothing else.
typedef void (*PoolRun)(Wnf *w, u64 task);

// A thread's evaluator on cache lines of its own: the machine reads its
// fields at every step, and a neighbour's writes to a shared line would
// make each of those reads a miss under -T (docs/performance.md).
typedef struct {
  _Alignas(64) Wnf w;
  struct Rt   *rt;    // the runtime it works for (its thread's RT)
  u32          tid;   // its thread's index (POOL_TID)
  int          lazy;  // it copies the book lazily (eval_lazy_book): read
                      // at every eval_wnf, from the worker at hand
} PoolWorker;

// The pool's state, a runtime's (RT->cpu->pool; pool.c).
typedef struct {
  u32              threads;     // threads in the pool (1 until pool_init)
  PoolWorker      *workers;     // thread i reduces with workers[i].w
  u32              offers;      // sparks a thread keeps queued
  PoolRun          run_job;     // what a job's task means (snf_task)
  PoolRun          run_spark;   // what a spark means (eval_spark)
  struct Deque    *dq;          // one per thread
  struct PoolFlag *in_task;     // per thread: it may be running a task
  struct Thief    *thief;       // per thread: the lone task it waits on
  pthread_t       *ids;         // the threads started, joined at the close
  u32              started;     // how many of them (threads - 1 once up)
  _Atomic u32      active;      // jobs in progress (and holds)
  pthread_mutex_t  idle_lock;   // the sleeping threads' (pool_main)
  pthread_cond_t   idle_cond;
  pthread_cond_t   nap_cond;    // threads napping with no task (pool_nap)
  _Atomic u32      nappers;     // how many: a push wakes one
  _Atomic int      halt;        // pool_halt: no task starts
  _Atomic int      park;        // pool_park: the last thread sleeps
  _Atomic int      stop;        // no task is handed out any more: an
                                // error on a thread (eval_fatal), the close
  _Atomic int      quit;        // the close: the threads end
  int (*_Atomic    idle_work)(Wnf *w);   // pool_hold's
} Pool;

// Starts threads-1 threads; thread i reduces with workers[i].w. A thread
// keeps at most `offers` sparks in its deque (pool_offer).
void pool_init(u32 threads, PoolWorker *workers, u32 offers, PoolRun job, PoolRun spark);
// cpu_rt_close (cpu_rt_stop): the threads end (each joined: one stops at
// its next wait, or after the task it is in) and what the pool holds is
// freed; a second call finds nothing to do.
void pool_close(void);
u32  pool_size(void);               // threads in the pool
// This thread's index (0: the program's). Inline: each slot the normal
// form visits reads it. Per thread: each thread reduces with its own
// worker (the thread that enters the runtime is 0 in each runtime).
extern _Thread_local u32 POOL_TID;
static inline u32 pool_tid(void) { return POOL_TID; }

void pool_push(u64 task);           // on this thread's deque
// A task for this thread: its own newest, else the oldest of another's;
// with `only` (a kind, not POOL_ANY) only a task of that kind.
int  pool_find(u32 only, u64 *task);
// A task of job `job`, else a spark; any task with POOL_ANY, a spark with
// POOL_SPARK (a thread waiting inside a job, job_finish and pool_help).
int  pool_find_for(u32 job, u64 *task);
void pool_run(Wnf *w, u64 task);    // a spark here, a job's task in snf.c
void pool_idle_wait(u32 *idle);     // found nothing: spin a while, then yield

// Jobs in progress keep the pool's threads awake: pool_wake says one more
// is queued, pool_rest that one ended.
void pool_wake(void);
void pool_rest(void);
int  pool_busy(void);               // other CPU threads may be reducing

// Keeps the pool awake, its threads that find no task calling `idle` (1
// when it found work), until released with NULL. The -C enumeration holds
// it with collapse_help.
void pool_hold(int (*idle)(Wnf *w));

// Runs one task while waiting for something (eval.c: a slot another
// thread holds): any with POOL_ANY, a spark with POOL_SPARK, else a task
// of that job or a spark. 1 if it ran one. The caller hides its catch
// frames from the task (eval_nest).
int  pool_help(Wnf *w, u32 only);

// Stopping (snf_at_until): no thread starts a task until pool_resume;
// pool_halt returns once no other thread runs one. Sparks running check
// pool_halting every slice and stay on offer.
void pool_halt(void);
void pool_resume(void);
int  pool_halting(void);
// Parks the pool's last thread between tasks (on = 1; with 3 threads or
// more) until pool_park(0): while the CUDA context is made on a thread of
// its own (gpu.c), the pool leaves it a core.
void pool_park(int on);
// While halted: drops every queued task (the sparks a stopped job left,
// whose slots a heap put back to an earlier state no longer holds).
void pool_drop(void);

// Errors on the pool's threads (eval_fatal): a thread pool_init started
// (a helper, pool_helper) that fails does not end the process nor take
// the library's hook: the error is kept for the thread that entered the
// runtime (eval_check raises it there, where it waits on the pool),
// pool_stop stops the pool handing out tasks, and pool_unwind takes the
// helper back to its loop, where it sleeps until the close.
int  pool_helper(void);
void pool_stop(void);
// A thread waiting for a word another thread holds (a DUP slot, an
// offered operand, a primitive's slot) naps while it still holds `held`
// and no task waits; whoever stores the word calls pool_gave_back, which
// wakes the nappers (cheap when none naps). A nap ends within a bound.
void pool_nap_on(const _Atomic u64 *word, u64 held);
void pool_gave_back(void);
int  pool_stopping(void);           // stopped (such an error, or the close)
_Noreturn void pool_unwind(void);

#if defined(__x86_64__)
#define cpu_relax() __asm__ __volatile__("pause")
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#else
#define cpu_relax() ((void)0)
#endif

#endif
