// reclaim.h: heap words reclaimed while a program runs (cpu/reclaim.c).
//
// A collection stops every CPU thread at a safe point (its WNF run folded
// back into the heap), marks what the threads can still reach, and hands
// the unmarked words out again as arenas (heap_take). A location the C
// code holds stays valid: it only has to be a root. When the garbage lies
// in runs too short to reuse, the collection slides the live words
// together (reclaim.c, Compaction): a slot a root names stays where it
// is, and a root frame's term is rewritten in place.

#ifndef HVM4G_RECLAIM_H
#define HVM4G_RECLAIM_H

#include <pthread.h>
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

// What a collection measures, for -s and the exhausted heap's message.
typedef struct {
  u64    runs;      // collections
  u64    freed;     // words found no longer live, summed
  u64    live;      // live words after the last one (0: none ran)
  double secs;      // time spent collecting
  u64    helped;    // phases of a collection a parked thread took part in
  double fresh_ns;  // a fresh word's cost as measured (0: not measured)
  u64    compactions; // collections that also slid the live words together
  u64    peak_live;   // the most live words a collection counted
} ReclaimStats;

// A module that holds heap slots outside the root frames (snf.c's slot
// stacks, pool.c's queued tasks) names each to `root` when asked.
typedef void (*ReclaimRoot)(u32 loc);
typedef void (*ReclaimEach)(ReclaimRoot root);
#define RECLAIM_SOURCES 4   // modules that register their roots (snf, pool)

// A counter on a cache line of its own (the padding keeps its neighbours
// off its line however the part is aligned): read by every marking thread
// at every node, it must not share a line that others write.
typedef struct {
  char        before[64];
  _Atomic u64 n;
  char        after[56];
} ReclaimLine;

// The collector's state, a runtime's (RT->cpu->reclaim). The first fields
// are read by the inline functions below; the rest is reclaim.c's.
typedef struct {
  RootList    *roots;       // per thread: its root frames
  u32          threads;     // threads with a list
  _Atomic int  stop;        // a collection is under way: park
  u64          next;        // heap_given() at which one is due
  u32          arena;       // words of an arena (cpu.h's CPU_ARENA, or
                            // less: --reclaim-gap, a small heap)
  _Atomic int  hosts;       // host primitives in flight (as many as
                            // hosts_rooted: a collection may run)
  _Atomic int  hosts_rooted; // those that hold every location in a root
                            // frame (reclaim_rooted_host)
  int          help;        // the threads parked for a collection mark and
                            // sweep with the collector (reclaim_init: with
                            // several threads; a unit test compares without)
  u64          probe;       // heap_given() at which to measure a fresh word
  // what else holds slots (reclaim_add_roots), and what forgets freed words
  ReclaimEach  each[RECLAIM_SOURCES];
  u32          neach;
  void       (*forget)(u32 lo, u64 hi);
  // stopping the threads
  struct ReclaimAway *away; // per thread: parked or asleep
  u32          collector;   // the thread running a collection, + 1 (0: none)
  _Atomic int  abandoned;   // a thread that took part left it (reclaim_leave)
  // pacing (reclaim.c's gap_after)
  int          armed;
  u64          base;        // words below stay
  int          low;         // the last collection left little room
  ReclaimStats stats;
  u64          used_live;   // live words above base, last counted
  u64          used_given;  // heap_given() then
  u64         *itrs_then;   // per thread: its interactions then
  u64          sparse;      // the gap's factor from sparse garbage
  u64          worked;      // threads that worked between the last two
  u64          cost;        // the gap's factor from the walks' cost
  double       ran_from;    // when the last collection ended (or arming)
  u64          fresh;       // the gap's factor from the fresh words' cost
  double       fresh_ns;    // a fresh word's cost, ns (0: not measured)
  u64          high;        // the highest top a collection began at
  u64          armed_at;    // heap_given() at arming
  double       sys_armed;   // the process's system time at arming, s
  u64          top_armed;   // heap_used() at arming
  _Atomic u32  probe_taken;
  _Atomic u32  probe_done;
  _Atomic u64  probe_ns;
  _Atomic u64  probe_words;
  // marking
  u64         *live;        // one bit per heap word, reserved lazily
  u64          live_words;  // its size in words (reserved)
  u64          top;         // the heap's top when the collection began
  struct ReclaimWork *work; // per thread: its stack and swept chunks
  _Atomic u64  helped;      // phases a parked thread took part in
  pthread_mutex_t share_lock;
  u64         *shared;      // the shared pool of terms to trace
  u64          shared_cap;
  _Atomic u64  shared_n;
  _Atomic u32  marking;     // marking threads holding terms
  ReclaimLine  hungry;      // marking threads waiting for terms
  // clearing and sweeping
  ReclaimLine  cursor;      // the next unit of the clear or the sweep
  struct SweptRange *ranges;
  u64          range_n;
  u64          range_cap;
  u64          range_words;
  u64         *chunks;      // the ranges' chunks, in address order
  u64          chunk_n;
  u64          chunk_cap;
  _Atomic u64  phase;       // phases opened, times 4, + the kind
  _Atomic u32  joined;      // parked threads inside the phase
  // compacting (reclaim.c's Compaction): per 64-word group above the base
  u32         *group_to;    // where its first live word goes
  u8          *group_pin;   // its live words stay (a root names one)
  u64          group_cap;
} Reclaim;

// Thread tid's list as it stands, and set back to one it stood at (an
// error's catch frame unwinds to it). NULL for a thread with no list.
// The collector is the caller's runtime's (&RT->cpu->reclaim), passed in:
// a caller that loops reads it once.
static inline RootFrame *reclaim_top(Reclaim *r, u32 tid) {
  return r->roots && tid < r->threads ? r->roots[tid].head : NULL;
}

static inline void reclaim_unwind(Reclaim *r, u32 tid, RootFrame *top) {
  if (r->roots && tid < r->threads) r->roots[tid].head = top;
}

// Thread tid holds f (its term or slot) until reclaim_drop: f goes on top
// of its list. No list (a unit test's bare pool): nothing to hold.
static inline void reclaim_hold(Reclaim *r, u32 tid, RootFrame *f) {
  f->up = reclaim_top(r, tid);
  reclaim_unwind(r, tid, f);
}

static inline void reclaim_drop(Reclaim *r, u32 tid, RootFrame *f) {
  reclaim_unwind(r, tid, f->up);
}

void reclaim_init(u32 threads);   // eval_init or pool_init, the first
// cpu_rt_close: frees what the collector holds.
void reclaim_close(void);
// A module that holds slots outside the root frames registers how to name
// them (snf_init, pool_init), and one that keeps marks of heap words how
// to forget freed ones (snf_forget): a collection calls them, so that
// this file depends on no module above it.
void reclaim_add_roots(ReclaimEach each);
void reclaim_add_forget(void (*forget)(u32 lo, u64 hi));
// From now on collections may run: the words below the top stay (the
// book, the program's root), the rest is reclaimed when unreachable.
// sched.c arms it for a CPU normal form and the CPU phases of a hybrid
// one, not for -C, -D or the device.
void reclaim_arm(void);
void reclaim_disarm(void);
// A new run in the runtime (run/api.c): every word above `top` (the heap
// the program left) is an earlier run's, its result included, so the top
// goes back there and no evaluator keeps an arena above it. No thread may
// be allocating (the pool halted, its queues dropped).
void reclaim_restart(u64 top);
// A WNF run of thread tid stopped with WNF_OOM (its term rebuilt and held
// in a root frame): joins or runs a collection. 2: retry (it was due, or
// another thread's); 1: retry, the heap was full and has room again (a
// second time with no interaction between is the end); 0: no room.
int  reclaim_oom(u32 tid);
// A safe point (nothing of this thread's outside the heap or its root
// frames): parks while a collection is under way. 1 when it parked: a
// heap word the caller read before may have moved (Compaction), so a
// location it holds outside its root frames must be read again.
void reclaim_park(u32 tid);
static inline int reclaim_poll(Reclaim *r, u32 tid) {
  if (!atomic_load_explicit(&r->stop, memory_order_relaxed)) return 0;
  reclaim_park(tid);
  return 1;
}
// Thread tid sleeps outside every task (1) or wakes (0) (pool.c).
void reclaim_away(u32 tid, int away);
// Thread tid's work ends with an error (eval.c, eval_thread_reset): its
// root frames go, and a collection it ran or took part in is dropped,
// nothing freed (the heap is as it was; the parked threads go on).
void reclaim_leave(u32 tid);
// A host primitive starts (+1) or ends (-1): no collection meanwhile, its
// C code holds locations no root frame names.
void reclaim_host(int d);
// A host primitive whose C code holds no location but `slot` (run/sched.c's
// %nf, and %gnf on the CPU) lets collections run while it normalizes: the
// slot goes in f, a root frame of this thread. 1 when it does (armed, a
// thread of the pool), and then reclaim_rooted_host_end(f) before the
// primitive returns.
int  reclaim_rooted_host(RootFrame *f, u32 slot);
void reclaim_rooted_host_end(RootFrame *f);
ReclaimStats reclaim_stats(void);
// The exhausted heap's message: what was live, the heap's size, and why
// no collection helped.
void reclaim_exhausted(char *msg, size_t n);
// The gap's factor after a collection whose walk took `walk` seconds,
// `since` seconds after the last one ended (reclaim.c's COST_SHARE).
u64 reclaim_cost_factor(u64 factor, double walk, double since);
// The gap's factor where a fresh word costs `fresh_ns` (reclaim.c's FRESH).
u64 reclaim_fresh_factor(double fresh_ns);
// A refill took the arena [at, at + n): measures a fresh word's cost on it
// once heap_given() passes the collector's probe (cpu_refill).
void reclaim_probe(u32 at, u32 n);

// Whether a collection may run: every host primitive in flight is rooted.
static inline int reclaim_unblocked(const Reclaim *r) {
  return atomic_load_explicit(&r->hosts, memory_order_relaxed) ==
         atomic_load_explicit(&r->hosts_rooted, memory_order_relaxed);
}

// Whether a refill must stop its run for a collection (cpu.h). Not while
// a host primitive that is not rooted is in flight: no collection can run
// then, and each stop costs the run a rebuild of its WNF stack, so a deep
// stack stopped every gap for nothing would make the run quadratic.
static inline int reclaim_due(const Reclaim *r) {
  return atomic_load_explicit(&r->stop, memory_order_relaxed) ||
         (heap_given() >= r->next && reclaim_unblocked(r));
}

#endif
