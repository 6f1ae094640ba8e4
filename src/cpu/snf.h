// snf.h: the strong normal form, in place, on one CPU thread or on the -T
// pool (snf.c).

#ifndef HVM4G_SNF_H
#define HVM4G_SNF_H

#include <pthread.h>
#include <stdatomic.h>
#include "core/core.h"

// The normalizer's state, a runtime's (RT->cpu->snf; snf.c).
typedef struct {
  _Atomic u16      *seen;        // per heap word: the epoch of its last visit
  u64               seen_words;  // words it was reserved for
  u8               *seen_dirty;  // per page of seen: a mark was set there
  u32               epoch;       // the last normalization's
  pthread_mutex_t   epoch_lock;
  int               unscoped;    // the program has an unscoped binder
  struct SnfWorker *workers;     // per thread: its slot stack, its chain
  u32               nworkers;
  struct Job       *jobs;        // job slots (snf.c's MAX_JOBS)
  u32              *job_free;    // free slots, a stack
  u32               job_nfree;
  pthread_mutex_t   job_lock;
  void             *counts;      // the jobs' per-thread counters, one block
  struct Job       *polled;      // the job whose yield is polled (snf_made)
  u32              *left;        // what the last stopped job left (snf_left)
  u32               nleft;
  int               left_dups;
  u16               lazy_ep;     // the epoch of the walk under the lazy core
  u32              *rereads;     // its DUPs read again: [slot + 1, count] pairs,
  u32               rereads_cap; // open addressing (snf_lazy_moved)
  u32               rereads_len;
  int               endless;     // one was read again past the bound
} Snf;

// The error of a term that holds a DUP among its own copies: printing or
// normalizing it would never end.
#define SNF_INFINITE "a DUP holds one of its own copies (two copies met under one label): the term is infinite"

void snf_init(void);        // after the workers exist (eval_init)
void snf_close(void);       // cpu_rt_close: frees what snf_init made
void snf_at(u32 loc);       // strong normal form of RT->heap.at[loc], in place
// The same on the -T pool, stopping early at task boundaries once yield()
// says so (the device takes over: gpu_take_over), polled every 8 tasks
// by the calling thread; snf_made() inside yield: the tasks the job has
// made so far (a cache line per thread read: yield asks only when needed).
// 1 when it stopped early: the heap is then a valid term graph holding the
// work done, and no CPU thread touches it until the next normalization.
int  snf_at_until(u32 loc, int (*yield)(void));
u64  snf_made(void);
// After snf_at_until stopped early: the slots its tasks left unvisited
// (*n of them). Every slot the pool visited holds a weak normal form whose
// children were visited or are among these, so normalizing these finishes
// the job, but for the stuck DUPs it met (*dups): their expressions wait
// for the sequential phase, which a later snf_at(loc) runs.
const u32 *snf_left(u32 *n, int *dups);
void snf_task(Wnf *w, u64 task);   // runs a job's task (pool.c)
// The lazy core moved a stuck DUP's expression from one slot to another
// (WNF_LAZY_MOVED, lazy.c): counted when the walk had already visited it.
void snf_lazy_moved(u32 from, u32 to);

#endif
