// pool.h: the -T pool: N-1 threads started once plus the calling one,
// each with a work-stealing deque of tasks (host code). What a task means
// is its kind's: a job's slot to normalize (snf.c) or a spark (an offered
// operand, wnf.h "Sparks", run by eval_spark).

#ifndef HVM4G_POOL_H
#define HVM4G_POOL_H

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
} PoolWorker;

// Starts threads-1 threads; thread i reduces with workers[i].w. A thread
// keeps at most `offers` sparks in its deque (pool_offer).
void pool_init(u32 threads, PoolWorker *workers, u32 offers, PoolRun job, PoolRun spark);
u32  pool_size(void);               // threads in the pool
// This thread's index (0: the program's). Inline: each slot the normal
// form visits reads it.
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
// For a collection (reclaim.c, every thread parked): the location of each
// queued task and spark to `root`.
void pool_roots(void (*root)(u32 loc));

#if defined(__x86_64__)
#define cpu_relax() __asm__ __volatile__("pause")
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#else
#define cpu_relax() ((void)0)
#endif

#endif
