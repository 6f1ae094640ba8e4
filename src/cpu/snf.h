// snf.h: the strong normal form, in place, on one CPU thread or on the -T
// pool (snf.c).

#ifndef HVM4G_SNF_H
#define HVM4G_SNF_H

#include "core/core.h"

void snf_init(void);        // after the workers exist (eval_init)
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
// For a collection (reclaim.c, every thread parked): each slot the
// normalizer holds (its slot stacks, the stuck DUPs its jobs left for the
// sequential phase) to `root`; snf_forget drops the seen set's marks of
// the words [lo, hi), freed.
void snf_roots(void (*root)(u32 loc));
void snf_forget(u32 lo, u64 hi);

#endif
