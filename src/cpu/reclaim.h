// reclaim.h: heap words reclaimed while a program runs (cpu/reclaim.c).
//
// A collection stops every CPU thread at a safe point (its WNF run folded
// back into the heap), marks what the threads can still reach, and hands
// the unmarked words out again as arenas (heap_take). Nothing moves, so a
// location the C code holds stays valid: it only has to be a root.

#ifndef HVM4G_RECLAIM_H
#define HVM4G_RECLAIM_H

#include <stdatomic.h>
#include "core/core.h"
#include "heap/heap.h"

// A term (or a heap slot) the C code holds across a safe point: each
// thread keeps a list of them, innermost first (eval.c, snf.c).
typedef struct RootFrame {
  Term             *term;   // a term held outside the heap, or NULL
  u32               loc;    // a heap slot, or 0
  struct RootFrame *up;
} RootFrame;

// Per thread: the head of its list, a cache line each (every thread
// moves its own head at each slot it normalizes).
typedef struct {
  _Alignas(64) RootFrame *head;
} RootList;

extern RootList    *RECLAIM_ROOTS;
extern u32          RECLAIM_THREADS;
extern _Atomic int  RECLAIM_STOP;   // a collection is under way: park
extern u64          RECLAIM_NEXT;   // heap_given() at which one is due
extern u32          RECLAIM_ARENA;  // words of an arena (cpu.h's CPU_ARENA,
                                    // or less: --reclaim-gap, a small heap)
extern _Atomic int  RECLAIM_HOSTS;  // host primitives in flight (none: a
                                    // collection may run)
extern int          RECLAIM_HELP;   // the threads parked for a collection
                                    // mark and sweep with the collector
                                    // (reclaim_init: with several threads;
                                    // a unit test compares without)

// Thread tid's list as it stands, and set back to one it stood at (an
// error's catch frame unwinds to it). NULL for a thread with no list.
static inline RootFrame *reclaim_top(u32 tid) {
  return RECLAIM_ROOTS && tid < RECLAIM_THREADS ? RECLAIM_ROOTS[tid].head : NULL;
}

static inline void reclaim_unwind(u32 tid, RootFrame *top) {
  if (RECLAIM_ROOTS && tid < RECLAIM_THREADS) RECLAIM_ROOTS[tid].head = top;
}

// Thread tid holds f (its term or slot) until reclaim_drop: f goes on top
// of its list. No list (a unit test's bare pool): nothing to hold.
static inline void reclaim_hold(u32 tid, RootFrame *f) {
  f->up = reclaim_top(tid);
  reclaim_unwind(tid, f);
}

static inline void reclaim_drop(u32 tid, RootFrame *f) {
  reclaim_unwind(tid, f->up);
}

void reclaim_init(u32 threads);   // eval_init or pool_init, the first
// From now on collections may run: the words below the top stay (the
// book, the program's root), the rest is reclaimed when unreachable.
// sched.c arms it for a CPU normal form and the CPU phases of a hybrid
// one, not for -C, -D or the device.
void reclaim_arm(void);
void reclaim_disarm(void);
// A WNF run of thread tid stopped with WNF_OOM (its term rebuilt and held
// in a root frame): joins or runs a collection. 2: retry (it was due, or
// another thread's); 1: retry, the heap was full and has room again (a
// second time with no interaction between is the end); 0: no room.
int  reclaim_oom(u32 tid);
// A safe point (nothing of this thread's outside the heap or its root
// frames): parks while a collection is under way.
void reclaim_park(u32 tid);
static inline void reclaim_poll(u32 tid) {
  if (atomic_load_explicit(&RECLAIM_STOP, memory_order_relaxed)) reclaim_park(tid);
}
// Thread tid sleeps outside every task (1) or wakes (0) (pool.c).
void reclaim_away(u32 tid, int away);
// A host primitive starts (+1) or ends (-1): no collection meanwhile, its
// C code holds locations no root frame names.
void reclaim_host(int d);
// For -s and the exhausted heap's message.
typedef struct {
  u64    runs;      // collections
  u64    freed;     // words found no longer live, summed
  u64    live;      // live words after the last one (0: none ran)
  double secs;      // time spent collecting
  u64    helped;    // phases of a collection a parked thread took part in
  double fresh_ns;  // a fresh word's cost as measured (0: not measured)
} ReclaimStats;
ReclaimStats reclaim_stats(void);
// The gap's factor after a collection whose walk took `walk` seconds,
// `since` seconds after the last one ended (reclaim.c's COST_SHARE).
u64 reclaim_cost_factor(u64 factor, double walk, double since);
// The gap's factor where a fresh word costs `fresh_ns` (reclaim.c's FRESH).
u64 reclaim_fresh_factor(double fresh_ns);
// A refill took the arena [at, at + n): measures a fresh word's cost on it
// once heap_given() passes RECLAIM_PROBE (cpu_refill).
extern u64 RECLAIM_PROBE;
void reclaim_probe(u32 at, u32 n);

// Whether a refill must stop its run for a collection (cpu.h). Not while
// a host primitive is in flight: no collection can run then, and each stop
// costs the run a rebuild of its WNF stack, so a deep stack stopped every
// gap for nothing would make the run quadratic.
static inline int reclaim_due(void) {
  return atomic_load_explicit(&RECLAIM_STOP, memory_order_relaxed) ||
         (heap_given() >= RECLAIM_NEXT &&
          atomic_load_explicit(&RECLAIM_HOSTS, memory_order_relaxed) == 0);
}

#endif
