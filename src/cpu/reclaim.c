// reclaim.c: collections of the CPU heap while a normal form runs
// (reclaim.h; docs/memory.md says why this scheme).
//
// A collection, on the thread whose refill found the heap full (or the
// words handed out since the last one past the gap):
//
//   1. stop:   RECLAIM_STOP is raised; every other thread parks at its next
//              safe point (a WNF run stopped and rebuilt, a pool thread
//              between tasks) or is already away (asleep, no task)
//   2. roots:  the words below the base (the book and the program's root),
//              each thread's root frames (terms and slots the C code holds),
//              the strong normal form's slot stacks and stuck DUP lists,
//              and every queued task and spark (snf_roots, pool_roots)
//   3. mark:   one bit per word, from the roots through every node (all of
//              its words), as the device's packing marks (compact.h)
//   4. sweep:  the unmarked runs become chunks that heap_take hands out as
//              arenas; the top drops to the last live word; the seen set
//              forgets the freed words (snf_forget)
//
// Nothing moves: a location held anywhere stays valid, so the rules' sharing
// (two projections of one DUP), SUB chains, stuck nodes and labels are the
// words they were. A collection that cannot run (a host primitive in flight
// holds locations in C, the pool is not armed) is skipped.

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include "cpu/reclaim.h"
#include "cpu/eval.h"
#include "cpu/pool.h"
#include "cpu/snf.h"
#include "cpu/cpu.h"

RootList    *RECLAIM_ROOTS = NULL;
u32          RECLAIM_THREADS = 0;
_Atomic int  RECLAIM_STOP  = 0;
u64          RECLAIM_NEXT  = ~0ull;
u32          RECLAIM_ARENA = CPU_ARENA;
_Atomic int  RECLAIM_HOSTS = 0;

// Words handed out between collections when little is live: a collection
// costs a walk of the live words and a scan of one bit per word, so the gap
// keeps that small beside the work, and the touched heap within the caches'
// reach of a few levels (docs/memory.md).
#define GAP_MIN   (1ull << 25)
// Free runs shorter than this stay unused until a later collection: an
// arena shorter than a few nodes would cost a refill every few rules, and
// one shorter than the core's refill request (WNF_RESERVE) is never taken:
// every refill would skip it and bump the top, the heap growing as if
// nothing were reclaimed. Also the smallest arena --reclaim-gap may ask.
#define MIN_CHUNK 256u
_Static_assert(MIN_CHUNK >= 2 * WNF_RESERVE, "a chunk must hold the core's refills");

typedef struct {
  _Alignas(64) _Atomic int on;
} Away;

static Away        *AWAY     = NULL;   // per thread: parked or asleep
static u32          NTHR     = 0;
static int          ARMED    = 0;
static u64          BASE     = 0;      // words below stay
static int          LOW      = 0;      // the last collection left little room
static ReclaimStats STATS    = {0};
static u64          USED_LIVE  = 0;    // live words above BASE, last counted
static u64          USED_GIVEN = 0;    // heap_given() then
static u64         *ITRS_THEN  = NULL; // per thread: its interactions then

void reclaim_init(u32 threads) {
  if (RECLAIM_ROOTS) return;   // eval_init's, before the pool's
  NTHR          = threads ? threads : 1;
  RECLAIM_ROOTS = aligned_alloc(64, NTHR * sizeof(RootList));
  AWAY          = aligned_alloc(64, NTHR * sizeof(Away));
  ITRS_THEN     = calloc(NTHR, sizeof(u64));
  if (!RECLAIM_ROOTS || !AWAY || !ITRS_THEN) {
    eval_fatal("hvm4g: ", "out of memory");
  }
  for (u32 i = 0; i < NTHR; i++) RECLAIM_ROOTS[i].head = NULL;
  // the pool's threads start asleep; the program's thread is the one
  // that runs the normal form
  for (u32 i = 0; i < NTHR; i++) atomic_init(&AWAY[i].on, i > 0);
  RECLAIM_THREADS = NTHR;
}

// Words handed out before the next collection: GAP_LIVE times what is
// live and at least GAP_MIN, times the threads that worked since the last
// one. A collection's cost is the live words' walk, a cache miss a word
// where handing a word out costs a store: amortized over several times as
// many words handed out. The walk runs on one thread while every worker
// waits, and the live words grow with the workers (each holds its own
// work), so the gap grows with them too: a collection then costs each
// worker the share it costs one thread alone. --reclaim-gap (the tests'
// frequent collections) sets the gap, but never below the live words over
// GAP_LIVE_TINY: a gap fixed while the live data grows would make every
// collection walk the live data for a few interactions, quadratic work.
#define GAP_LIVE      8
#define GAP_LIVE_TINY 4
// A collection whose reusable room (chunks and the top's drop) is under a
// SPARSE_SHARE of the words handed out since the last one found its garbage
// in runs too short to reuse, between live words: the next few would only
// cost their walk. The gap then grows SPARSE_GROWTH times (up to
// SPARSE_MAX), and a productive collection sets it back. A full heap still
// collects whatever the gap (reclaim_oom), so --heap stays the bound.
#define SPARSE_SHARE  8
#define SPARSE_GROWTH 4
#define SPARSE_MAX    256
static u64 SPARSE = 1;   // the gap's factor now
static u64 WORKED = 1;   // threads that worked between the last two
// A collection whose walk took more than a COST_SHARE of the time since
// the last one ended costs the run more than the fresh pages it saves
// (they cost a clear each, the walk a cache miss a live word): the gap
// doubles, up to COST_MAX times, and halves back once collections cost
// under a quarter of that share. Measured in wall time, so the rule
// follows the machine: where fresh pages are dear the gap stays small.
#define COST_SHARE 16
#define COST_MAX   64
static u64    COST     = 1;   // the gap's factor from the walks' cost
static double RAN_FROM = 0;   // when the last collection ended (or arming)
#define ARENA_SHARE   16

u64 reclaim_cost_factor(u64 factor, double walk, double since) {
  if (walk * COST_SHARE > since) return factor < COST_MAX ? factor * 2 : factor;
  if (walk * COST_SHARE * 4 < since && factor > 1) return factor / 2;
  return factor;
}

static double now(void);

static u64 gap_after(u64 live) {
  if (EVAL.reclaim_gap) {
    u64 floor = live / GAP_LIVE_TINY;
    return EVAL.reclaim_gap > floor ? EVAL.reclaim_gap : floor;
  }
  return WORKED * SPARSE * COST * (GAP_LIVE * live > GAP_MIN ? GAP_LIVE * live : GAP_MIN);
}

void reclaim_arm(void) {
  BASE          = heap_used();
  SPARSE        = 1;
  COST          = 1;
  RAN_FROM      = now();
  // The first gap counts every thread as working: a short wide run under
  // -T N would otherwise stop N threads for a walk of its live data after
  // one thread's gap, and often end soon after.
  WORKED        = NTHR;
  ARMED         = 1;
  // An arena is at most an ARENA_SHARE of the heap per thread: in a small
  // heap one thread's arena would otherwise hold every free word, and the
  // others would find it full however little is live.
  u64 arena     = EVAL.reclaim_gap && EVAL.reclaim_gap < CPU_ARENA ? EVAL.reclaim_gap : CPU_ARENA;
  u64 share     = HEAP_WORDS / ((u64)ARENA_SHARE * NTHR);
  if (arena > share) arena = share;
  RECLAIM_ARENA = (u32)(arena > MIN_CHUNK ? arena : MIN_CHUNK);
  USED_LIVE     = 0;
  USED_GIVEN    = heap_given();
  RECLAIM_NEXT  = heap_given() + gap_after(0);
}

// The free chunks go with the arming: whatever runs next (a device run
// that writes back above the top, a collapse) takes words from the top.
void reclaim_disarm(void) {
  ARMED        = 0;
  RECLAIM_NEXT = ~0ull;
  heap_set_free(NULL, 0, heap_used());
}

void reclaim_host(int d) {
  atomic_fetch_add(&RECLAIM_HOSTS, d);
}

ReclaimStats reclaim_stats(void) {
  return STATS;
}

// Stopping the threads
// ====================
// A thread clears its flag and then reads RECLAIM_STOP; the collector
// raises RECLAIM_STOP and then reads the flags (both sequentially
// consistent), so one of them sees the other.

static void wait_a_while(u32 *idle) {
  if (++*idle < 256) {
    cpu_relax();
  } else {
    sched_yield();
  }
}

void reclaim_park(u32 tid) {
  for (;;) {
    atomic_store(&AWAY[tid].on, 1);
    u32 idle = 0;
    while (atomic_load(&RECLAIM_STOP)) wait_a_while(&idle);
    atomic_store(&AWAY[tid].on, 0);
    if (!atomic_load(&RECLAIM_STOP)) break;
  }
}

void reclaim_away(u32 tid, int away) {
  if (away) {
    atomic_store(&AWAY[tid].on, 1);
    return;
  }
  atomic_store(&AWAY[tid].on, 0);
  if (atomic_load(&RECLAIM_STOP)) reclaim_park(tid);
}

// Marking
// =======

static u64 *LIVE    = NULL;   // one bit per heap word, reserved lazily
static u64 *STK     = NULL;   // terms whose nodes are still to mark
static u64  STK_N   = 0;
static u64  STK_CAP = 0;
static u64  TOP     = 0;      // the heap's top when the collection began

static void push(Term t) {
  if (STK_N == STK_CAP) {
    u64  cap = STK_CAP ? STK_CAP * 2 : 1 << 16;
    u64 *s   = realloc(STK, cap * sizeof(u64));
    if (!s) eval_fatal("hvm4g: ", "out of memory while reclaiming the heap");
    STK = s; STK_CAP = cap;
  }
  STK[STK_N++] = t;
}

// Marks word `loc` live; its content, if it points somewhere, is traced.
static void mark_word(u64 loc) {
  if (loc < BASE || loc >= TOP) return;
  u64 bit = 1ull << (loc & 63);
  if (LIVE[loc >> 6] & bit) return;
  LIVE[loc >> 6] |= bit;
  Term c = NO_SUB(HEAP[loc]);
  if (HAS_LOC(TAG(c))) push(c);
}

// Marks the words of the node `t` points into: a variable or a DUP
// projection points at one binder slot, anything else at a whole node.
static void trace(Term t) {
  t = NO_SUB(t);
  u32 tag = TAG(t);
  if (!HAS_LOC(tag)) return;
  u32 n = (tag == VAR || tag == DP0 || tag == DP1) ? 1 : term_arity(t);
  for (u32 j = 0; j < n; j++) mark_word((u64)VAL(t) + j);
}

// Live words lie scattered over the heap, so tracing is a cache miss a
// node: a term waits in a short queue while its node and live bits are
// fetched, and the misses of the queued terms overlap.
#define PREFETCH_QUEUE 16
static void drain(void) {
  Term queue[PREFETCH_QUEUE];
  u32  head = 0, n = 0;
  while (STK_N > 0 || n > 0) {
    if (STK_N > 0 && n < PREFETCH_QUEUE) {
      Term t   = STK[--STK_N];
      u64  loc = VAL(NO_SUB(t));
      __builtin_prefetch(&HEAP[loc]);
      __builtin_prefetch(&LIVE[loc >> 6]);
      queue[(head + n++) % PREFETCH_QUEUE] = t;
      continue;
    }
    Term t = queue[head];
    head   = (head + 1) % PREFETCH_QUEUE;
    n--;
    trace(t);
  }
}

static void root_slot(u32 loc) {
  mark_word(loc);
  drain();
}

static void mark_roots(void) {
  for (u64 i = 1; i < BASE; i++) {
    trace(HEAP[i]);
    drain();
  }
  for (u32 i = 0; i < NTHR; i++) {
    for (RootFrame *f = RECLAIM_ROOTS[i].head; f; f = f->up) {
      if (f->term) trace(*f->term);
      if (f->loc) mark_word(f->loc);
      drain();
    }
  }
  snf_roots(root_slot);
  pool_roots(root_slot);
}

// Sweeping
// ========

static u64 *CHUNKS    = NULL;
static u64  CHUNK_N   = 0;
static u64  CHUNK_CAP = 0;

static void chunk_add(u64 lo, u64 len) {
  if (CHUNK_N == CHUNK_CAP) {
    u64  cap = CHUNK_CAP ? CHUNK_CAP * 2 : 1024;
    u64 *c   = realloc(CHUNKS, cap * sizeof(u64));
    if (!c) return;   // this run stays unused: still correct
    CHUNKS = c; CHUNK_CAP = cap;
  }
  CHUNKS[CHUNK_N++] = (lo << 32) | len;
}

// The free run [lo, hi): arenas of at most RECLAIM_ARENA words.
static void free_run(u64 lo, u64 hi) {
  u64 min = MIN_CHUNK;
  if (hi - lo < min) return;   // not reused: its seen marks wait with it
  snf_forget((u32)lo, hi);
  while (lo < hi) {
    u64 len = hi - lo < RECLAIM_ARENA ? hi - lo : RECLAIM_ARENA;
    if (len < min) break;
    chunk_add(lo, len);
    lo += len;
  }
}

// The first word of [at, lim) whose bit is `want`, else lim.
static u64 next_bit(u64 at, u64 lim, int want) {
  while (at < lim) {
    u64 w = LIVE[at >> 6];
    if (!want) w = ~w;
    w &= ~0ull << (at & 63);
    if (w) {
      u64 i = (at & ~63ull) + (u64)__builtin_ctzll(w);
      return i < lim ? i : lim;
    }
    at = (at & ~63ull) + 64;
  }
  return lim;
}

// Returns the live words of [BASE, TOP); sets the new top.
static u64 sweep(u64 *new_top) {
  u64 live = 0, last = BASE, at = BASE;
  CHUNK_N = 0;
  while (at < TOP) {
    u64 on = next_bit(at, TOP, 1);
    if (on >= TOP) break;
    if (on > at) free_run(at, on);
    u64 off = next_bit(on, TOP, 0);
    live += off - on;
    last  = off;
    at    = off;
  }
  snf_forget((u32)last, TOP);
  *new_top = last;
  return live;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void run(void) {
  double t0 = now();
  TOP = heap_used();
  if (!LIVE) {
    LIVE = mmap(NULL, (HEAP_WORDS / 64 + 1) * sizeof(u64), PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (LIVE == MAP_FAILED) eval_fatal("hvm4g: ", "cannot reserve the heap's live bits");
  } else {
    memset(LIVE, 0, (TOP / 64 + 1) * sizeof(u64));
  }
  mark_roots();
  u64 top;
  u64 live = sweep(&top);
  heap_set_free(CHUNKS, CHUNK_N, top);
  WORKED = 0;
  for (u32 i = 0; i < NTHR; i++) {
    Wnf *w  = eval_worker(i);
    w->next = 0;   // arenas were in the swept words: taken again
    w->end  = 0;
    u64 itrs = __atomic_load_n(&w->itrs, __ATOMIC_RELAXED);
    WORKED  += itrs != ITRS_THEN[i];
    ITRS_THEN[i] = itrs;
  }
  if (WORKED == 0) WORKED = 1;
  u64 room = TOP - top;   // what the evaluators may take again
  for (u64 i = 0; i < CHUNK_N; i++) room += (u32)CHUNKS[i];
  LOW = HEAP_WORDS - TOP + room < HEAP_WORDS / 16;
  // reclaimed: the words in use (live after the last collection, plus
  // those handed out since) that are no longer live
  u64 used = USED_LIVE + (heap_given() - USED_GIVEN);
  if (room < (heap_given() - USED_GIVEN) / SPARSE_SHARE) {
    if (SPARSE < SPARSE_MAX) SPARSE *= SPARSE_GROWTH;
  } else {
    SPARSE = 1;
  }
  double walk = now() - t0;
  COST = reclaim_cost_factor(COST, walk, t0 - RAN_FROM);
  STATS.runs++;
  STATS.freed += used > live ? used - live : 0;
  USED_LIVE    = live;
  USED_GIVEN   = heap_given();
  STATS.live   = BASE + live;
  STATS.secs  += walk;
  RECLAIM_NEXT = heap_given() + gap_after(BASE + live);
  RAN_FROM     = now();
}

// Runs a collection: 1 if it ran, 0 if it could not, -1 if another
// thread's was under way (this one parked through it).
static int collect(u32 tid) {
  // a host primitive in flight: no collection can run, so the others are
  // not stopped (each stop costs them a rebuild)
  if (atomic_load(&RECLAIM_HOSTS) != 0 && !atomic_load(&RECLAIM_STOP)) return 0;
  int idle = 0;
  if (!atomic_compare_exchange_strong(&RECLAIM_STOP, &idle, 1)) {
    reclaim_park(tid);
    return -1;
  }
  for (u32 i = 0; i < NTHR; i++) {
    u32 spins = 0;
    while (i != tid && !atomic_load(&AWAY[i].on)) wait_a_while(&spins);
  }
  int ok = ARMED && atomic_load(&RECLAIM_HOSTS) == 0;
  if (ok) {
    run();
  }
  atomic_store(&RECLAIM_STOP, 0);
  return ok;
}

int reclaim_oom(u32 tid) {
  if (tid >= NTHR) return 0;
  if (atomic_load(&RECLAIM_STOP)) {
    reclaim_park(tid);
    return 2;
  }
  // the gap alone: a run stopped for it before a host primitive began has
  // room, and retries (the gap starting over below)
  int due = heap_given() >= RECLAIM_NEXT;
  int r   = collect(tid);
  if (r < 0) return 2;
  if (r == 0) {
    // not now: the gap starts over, and a full heap is full
    if (ARMED) RECLAIM_NEXT = heap_given() + gap_after(STATS.live);
    return due ? 2 : 0;
  }
  return due ? 2 : !LOW;
}
