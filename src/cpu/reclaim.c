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
// Steps 3 and 4 (and the clearing of the last collection's bits) are
// shared with the threads parked in step 1: they help while they wait
// (Phases, below). Threads asleep in the pool do not.
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
#include <pthread.h>
#include "cpu/reclaim.h"
#include "cpu/eval.h"
#include "cpu/pool.h"
#include "cpu/snf.h"
#include "cpu/cpu.h"
#include "heap/rt.h"
#include "cpu/cpu_rt.h"

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

// One thread's part of a collection: its own stack of terms to mark and
// the chunks it swept, a cache line apart from the other threads' parts.
typedef struct {
  _Alignas(64) u64 *stk;   // terms whose nodes are still to mark
  u64  stk_lo;             // [stk_lo, stk_n) are left: the bottom was shared
  u64  stk_n;
  u64  stk_cap;
  u64 *chunks;             // the free chunks it swept, in address order
  u64  chunk_n;
  u64  chunk_cap;
} ThreadWork;

static ThreadWork  *WORK     = NULL;   // per thread
static _Atomic u64  HELPED   = 0;      // phases a parked thread took part in
static int help(u32 tid, u64 *joined);

void reclaim_init(u32 threads) {
  if (RECLAIM_ROOTS) return;   // eval_init's, before the pool's
  NTHR          = threads ? threads : 1;
  RECLAIM_ROOTS = aligned_alloc(64, NTHR * sizeof(RootList));
  AWAY          = aligned_alloc(64, NTHR * sizeof(Away));
  ITRS_THEN     = calloc(NTHR, sizeof(u64));
  WORK          = aligned_alloc(64, NTHR * sizeof(ThreadWork));
  if (!RECLAIM_ROOTS || !AWAY || !ITRS_THEN || !WORK) {
    eval_fatal("hvm4g: ", "out of memory");
  }
  for (u32 i = 0; i < NTHR; i++) RECLAIM_ROOTS[i].head = NULL;
  memset(WORK, 0, NTHR * sizeof(ThreadWork));
  RECLAIM_HELP = NTHR > 1;
  // the pool's threads start asleep; the program's thread is the one
  // that runs the normal form
  for (u32 i = 0; i < NTHR; i++) atomic_init(&AWAY[i].on, i > 0);
  RECLAIM_THREADS = NTHR;
}

// Words handed out before the next collection: GAP_LIVE times what is
// live and at least GAP_MIN, times the threads that worked since the last
// one. A collection's cost is the live words' walk, a cache miss a word
// where handing a word out costs a store: amortized over several times as
// many words handed out. The walk stops every worker (the parked ones
// help, but a narrow graph is walked by one), and the live words grow
// with the workers (each holds its own work), so the gap grows with them
// too: a collection then costs each worker at most the share it costs one
// thread alone. --reclaim-gap (the tests' frequent collections) sets the
// gap, but never below the live words over GAP_LIVE_TINY: a gap fixed
// while the live data grows would make every collection walk the live
// data for a few interactions, quadratic work.
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
// What a fresh word costs (the kernel's fault and clear of its page) sets
// how much a gap can save: a collection over L live words costs L walks and
// saves at most the words it frees, each a fresh word not faulted in. The
// base gap (GAP_LIVE times the live words) saves PAYBACK times its walk
// where a fresh word costs PAYBACK * WALK_NS / GAP_LIVE or more; where it
// costs less (huge pages, a fast clear) the gap grows by FRESH until it
// does again, up to FRESH_MAX. Measured once a process, on the first fresh
// arenas past half the first gap (reclaim_probe); --fresh-cost sets it.
#define WALK_NS   30   // a live word's walk on one thread: a cache miss (28 ns measured)
#define PAYBACK   4
#define FRESH_MAX 16   // value chosen by tests: at 4, gpu_shared_tree's
                       // one late collection cost it a fifth on the H100 host
static u64    FRESH    = 1;      // the gap's factor from the fresh words' cost
static double FRESH_NS = 0;      // a fresh word's cost, ns (0: not measured)
static u64    HIGH     = 0;      // the highest top a collection began at:
                                 // words above it were never handed out
static u64    ARMED_AT = 0;      // heap_given() at arming
u64           RECLAIM_PROBE = ~0ull;   // heap_given() at which to measure

u64 reclaim_fresh_factor(double fresh_ns) {
  if (fresh_ns <= 0) return 1;
  double f = (double)PAYBACK * WALK_NS / ((double)GAP_LIVE * fresh_ns);
  if (f <= 1) return 1;
  return f >= FRESH_MAX ? FRESH_MAX : (u64)(f + 0.5);
}

u64 reclaim_cost_factor(u64 factor, double walk, double since) {
  if (walk * COST_SHARE > since) return factor < COST_MAX ? factor * 2 : factor;
  if (walk * COST_SHARE * 4 < since && factor > 1) return factor / 2;
  return factor;
}

static double now(void);

static u64 gap_after(u64 live) {
  if (RT->cpu->conf.reclaim_gap) {
    u64 floor = live / GAP_LIVE_TINY;
    return RT->cpu->conf.reclaim_gap > floor ? RT->cpu->conf.reclaim_gap : floor;
  }
  return FRESH * WORKED * SPARSE * COST * (GAP_LIVE * live > GAP_MIN ? GAP_LIVE * live : GAP_MIN);
}

// The arena [at, at + n) a refill just took: the first PROBE_N past the
// probe's point are timed, a store a page (the faults their first use
// would take anyway), and their mean cost sets FRESH, the first gap with
// it. Several: the kernel maps some ranges ahead of their first touch.
#define PROBE_N 8
static _Atomic u32 PROBE_TAKEN = 0;
static _Atomic u32 PROBE_DONE  = 0;
static _Atomic u64 PROBE_NS    = 0;
static _Atomic u64 PROBE_WORDS = 0;

void reclaim_probe(u32 at, u32 n) {
  if (at < HIGH || n < MIN_CHUNK) return;
  if (atomic_fetch_add(&PROBE_TAKEN, 1) >= PROBE_N) return;
  const u32 page = 4096 / sizeof(Term);
  double    t0   = now();
  for (u32 i = 0; i < n; i += page) __atomic_store_n(&RT->heap.at[at + i], 0, __ATOMIC_RELAXED);
  atomic_fetch_add(&PROBE_NS, (u64)((now() - t0) * 1e9));
  atomic_fetch_add(&PROBE_WORDS, n);
  if (atomic_fetch_add(&PROBE_DONE, 1) + 1 < PROBE_N) return;
  RECLAIM_PROBE = ~0ull;
  FRESH_NS      = (double)atomic_load(&PROBE_NS) / (double)atomic_load(&PROBE_WORDS);
  FRESH         = reclaim_fresh_factor(FRESH_NS);
  if (STATS.runs == 0 && ARMED) RECLAIM_NEXT = ARMED_AT + gap_after(0);
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
  ARMED_AT      = heap_given();
  // An arena is at most an ARENA_SHARE of the heap per thread: in a small
  // heap one thread's arena would otherwise hold every free word, and the
  // others would find it full however little is live.
  u64 arena     = RT->cpu->conf.reclaim_gap && RT->cpu->conf.reclaim_gap < CPU_ARENA ? RT->cpu->conf.reclaim_gap : CPU_ARENA;
  u64 share     = RT->heap.cap / ((u64)ARENA_SHARE * NTHR);
  if (arena > share) arena = share;
  RECLAIM_ARENA = (u32)(arena > MIN_CHUNK ? arena : MIN_CHUNK);
  USED_LIVE     = 0;
  USED_GIVEN    = heap_given();
  if (RT->cpu->conf.fresh_ns) {
    FRESH_NS = RT->cpu->conf.fresh_ns;
    FRESH    = reclaim_fresh_factor(FRESH_NS);
  }
  RECLAIM_NEXT  = heap_given() + gap_after(0);
  // measured once a run has handed out half its first gap: a short run
  // never pays for the probe's touch
  if (FRESH_NS == 0 && !RT->cpu->conf.reclaim_gap) RECLAIM_PROBE = heap_given() + gap_after(0) / 2;
}

// The free chunks go with the arming: whatever runs next (a device run
// that writes back above the top, a collapse) takes words from the top.
void reclaim_disarm(void) {
  ARMED         = 0;
  RECLAIM_NEXT  = ~0ull;
  RECLAIM_PROBE = ~0ull;
  heap_drop_free();
}

void reclaim_host(int d) {
  atomic_fetch_add(&RECLAIM_HOSTS, d);
}

ReclaimStats reclaim_stats(void) {
  ReclaimStats r = STATS;
  r.helped   = atomic_load_explicit(&HELPED, memory_order_relaxed);
  r.fresh_ns = FRESH_NS;
  return r;
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

// A parked thread helps the collection (Phases, below) while it waits.
void reclaim_park(u32 tid) {
  u64 joined = 0;   // the last phase it took part in
  for (;;) {
    atomic_store(&AWAY[tid].on, 1);
    u32 idle = 0;
    while (atomic_load(&RECLAIM_STOP)) {
      if (help(tid, &joined)) idle = 0;
      else wait_a_while(&idle);
    }
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
// With one thread (or RECLAIM_HELP off) the collector marks and sweeps
// alone, as plain loads and stores. With more, the threads parked for the
// collection take part (help): a word is claimed live by an atomic or, and
// only the thread whose or set its bit traces the word's content.

static u64 *LIVE = NULL;   // one bit per heap word, reserved lazily
static u64  TOP  = 0;      // the heap's top when the collection began

int RECLAIM_HELP = 0;

// The shared pool: terms a marking thread handed over for threads whose
// own stacks ran dry, and the roots at the start. SHARED_N and MARKING are
// changed under SHARE_LOCK and peeked at without it.
static pthread_mutex_t SHARE_LOCK = PTHREAD_MUTEX_INITIALIZER;
static u64            *SHARED     = NULL;
static u64             SHARED_CAP = 0;
static _Atomic u64     SHARED_N   = 0;
static _Atomic u32     MARKING    = 0;   // marking threads holding terms
// Marking threads waiting for terms: read at every node by the others, so
// on a line of its own, which the lock's writes do not take away.
static struct { _Alignas(64) _Atomic u32 n; } HUNGRY;

static void out_of_memory(void) {
  eval_fatal("hvm4g: ", "out of memory while reclaiming the heap");
}

// Room for `more` terms above the stack's top. A bottom half given away
// is taken back by moving the rest down; a smaller one would be moved
// again at every push near the top.
static __attribute__((noinline)) void stack_room(ThreadWork *w, u64 more) {
  if (w->stk_lo > 0 && w->stk_lo >= w->stk_cap / 2) {
    memmove(w->stk, w->stk + w->stk_lo, (w->stk_n - w->stk_lo) * sizeof(u64));
    w->stk_n -= w->stk_lo;
    w->stk_lo = 0;
  }
  if (w->stk_n + more <= w->stk_cap) return;
  u64 cap = w->stk_cap ? w->stk_cap : 1 << 16;
  while (cap < w->stk_n + more) cap *= 2;
  u64 *s = realloc(w->stk, cap * sizeof(u64));
  if (!s) out_of_memory();
  w->stk     = s;
  w->stk_cap = cap;
}

static inline void push(ThreadWork *w, Term t) {
  if (w->stk_n == w->stk_cap) stack_room(w, 1);
  w->stk[w->stk_n++] = t;
}

// Marks word `loc` live; its content, if it points somewhere, is traced.
static inline __attribute__((always_inline))
void mark_word(ThreadWork *w, u64 loc, int shared) {
  if (loc < BASE || loc >= TOP) return;
  u64  bit  = 1ull << (loc & 63);
  u64 *word = &LIVE[loc >> 6];
  if (shared) {
    // the plain load skips the locked or for a word already marked
    if (__atomic_load_n(word, __ATOMIC_RELAXED) & bit) return;
    if (__atomic_fetch_or(word, bit, __ATOMIC_RELAXED) & bit) return;
  } else {
    if (*word & bit) return;
    *word |= bit;
  }
  Term c = NO_SUB(RT->heap.at[loc]);
  if (HAS_LOC(TAG(c))) push(w, c);
}

// Marks the words of the node `t` points into: a variable or a DUP
// projection points at one binder slot, anything else at a whole node.
static inline __attribute__((always_inline))
void trace(ThreadWork *w, Term t, int shared) {
  t = NO_SUB(t);
  u32 tag = TAG(t);
  if (!HAS_LOC(tag)) return;
  u32 n = (tag == VAR || tag == DP0 || tag == DP1) ? 1 : term_arity(t);
  for (u32 j = 0; j < n; j++) mark_word(w, (u64)VAL(t) + j, shared);
}

static void shared_add(const u64 *terms, u64 k) {
  u64 n = atomic_load_explicit(&SHARED_N, memory_order_relaxed);
  if (n + k > SHARED_CAP) {
    u64 cap = SHARED_CAP ? SHARED_CAP : 1 << 12;
    while (cap < n + k) cap *= 2;
    u64 *s = realloc(SHARED, cap * sizeof(u64));
    if (!s) out_of_memory();
    SHARED     = s;
    SHARED_CAP = cap;
  }
  memcpy(SHARED + n, terms, k * sizeof(u64));
  atomic_store_explicit(&SHARED_N, n + k, memory_order_relaxed);
}

// A stack this short is kept: handing over a term or two at a time would
// cost a lock per node on a list, where there is nothing to share.
#define GIVE_MIN 4
// At most this many terms go to the shared pool at a time, and none while
// it holds this many already: the hungry threads take those first.
#define GIVE_MAX 1024
// At most this many terms are taken at a time (half the pool, less).
#define TAKE_MAX 256

// Another thread waits for terms: the bottom half of w's stack (the terms
// pushed first, the largest subtrees of a tree) goes to the shared pool.
static __attribute__((noinline)) void give(ThreadWork *w) {
  if (atomic_load_explicit(&SHARED_N, memory_order_relaxed) >= GIVE_MAX) return;
  u64 k = (w->stk_n - w->stk_lo) / 2;
  if (k > GIVE_MAX) k = GIVE_MAX;
  pthread_mutex_lock(&SHARE_LOCK);
  shared_add(w->stk + w->stk_lo, k);
  pthread_mutex_unlock(&SHARE_LOCK);
  w->stk_lo += k;
}

// Live words lie scattered over the heap, so tracing is a cache miss a
// node: a term waits in a short queue while its node and live bits are
// fetched, and the misses of the queued terms overlap.
#define PREFETCH_QUEUE 16
static inline __attribute__((always_inline)) void drain(ThreadWork *w, int shared) {
  Term queue[PREFETCH_QUEUE];
  u32  head = 0, n = 0;
  while (w->stk_n > w->stk_lo || n > 0) {
    if (shared && w->stk_n - w->stk_lo >= GIVE_MIN &&
        atomic_load_explicit(&HUNGRY.n, memory_order_relaxed) > 0) {
      give(w);
    }
    if (w->stk_n > w->stk_lo && n < PREFETCH_QUEUE) {
      Term t   = w->stk[--w->stk_n];
      u64  loc = VAL(NO_SUB(t));
      __builtin_prefetch(&RT->heap.at[loc]);
      if (shared) {
        __builtin_prefetch(&LIVE[loc >> 6], 1);
      } else {
        __builtin_prefetch(&LIVE[loc >> 6]);
      }
      queue[(head + n++) % PREFETCH_QUEUE] = t;
      continue;
    }
    Term t = queue[head];
    head   = (head + 1) % PREFETCH_QUEUE;
    n--;
    trace(w, t, shared);
  }
  w->stk_lo = 0;
  w->stk_n  = 0;
}

static void drain_alone(ThreadWork *w)  { drain(w, 0); }
static void drain_shared(ThreadWork *w) { drain(w, 1); }

// The roots go to the shared pool first, as terms to trace (a slot as a
// variable pointing at it: trace marks that one word). Together, the
// threads take them from there; alone, the collector's stack does.
static void share_slot(u32 loc) {
  Term t = TERM(VAR, 0, loc);
  shared_add(&t, 1);
}

static void share_roots(void) {
  atomic_store(&SHARED_N, 0);
  for (u64 i = 1; i < BASE; i++) {
    Term t = RT->heap.at[i];
    if (HAS_LOC(TAG(NO_SUB(t)))) shared_add(&t, 1);
  }
  for (u32 i = 0; i < NTHR; i++) {
    for (RootFrame *f = RECLAIM_ROOTS[i].head; f; f = f->up) {
      if (f->term) shared_add(f->term, 1);
      if (f->loc) share_slot(f->loc);
    }
  }
  snf_roots(share_slot);
  pool_roots(share_slot);
}

static void mark_alone(ThreadWork *w) {
  share_roots();
  u64 n = atomic_load_explicit(&SHARED_N, memory_order_relaxed);
  stack_room(w, n);
  if (n > 0) memcpy(w->stk + w->stk_n, SHARED, n * sizeof(u64));
  w->stk_n += n;
  atomic_store_explicit(&SHARED_N, 0, memory_order_relaxed);
  drain_alone(w);
}

// w's stack ran dry: refills it from the shared pool, waiting while other
// threads still mark (they may share more). 0: the pool is empty and no
// thread holds a term, so nothing is left to mark (a thread holds terms
// only while counted in MARKING, and is counted again only by taking some).
static int take(ThreadWork *w) {
  pthread_mutex_lock(&SHARE_LOCK);
  atomic_fetch_sub_explicit(&MARKING, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&HUNGRY.n, 1, memory_order_relaxed);
  u32 idle = 0;
  for (;;) {
    u64 n = atomic_load_explicit(&SHARED_N, memory_order_relaxed);
    if (n > 0) {
      u64 k = (n + 1) / 2;
      if (k > TAKE_MAX) k = TAKE_MAX;
      stack_room(w, k);
      memcpy(w->stk + w->stk_n, SHARED + n - k, k * sizeof(u64));
      w->stk_n += k;
      atomic_store_explicit(&SHARED_N, n - k, memory_order_relaxed);
      atomic_fetch_add_explicit(&MARKING, 1, memory_order_relaxed);
      atomic_fetch_sub_explicit(&HUNGRY.n, 1, memory_order_relaxed);
      pthread_mutex_unlock(&SHARE_LOCK);
      return 1;
    }
    if (atomic_load_explicit(&MARKING, memory_order_relaxed) == 0) {
      atomic_fetch_sub_explicit(&HUNGRY.n, 1, memory_order_relaxed);
      pthread_mutex_unlock(&SHARE_LOCK);
      return 0;
    }
    pthread_mutex_unlock(&SHARE_LOCK);
    while (atomic_load_explicit(&SHARED_N, memory_order_relaxed) == 0 &&
           atomic_load_explicit(&MARKING, memory_order_relaxed) != 0) {
      wait_a_while(&idle);
    }
    pthread_mutex_lock(&SHARE_LOCK);
  }
}

// A thread's part of the mark, the collector's or a helper's: it joins
// busy with nothing, so its first take waits for terms like any other.
static void mark_part(ThreadWork *w) {
  atomic_fetch_add(&MARKING, 1);
  do {
    drain_shared(w);
  } while (take(w));
}

// Clearing
// ========

// The next unit of the clear or the sweep, a line of its own.
static struct { _Alignas(64) _Atomic u64 n; } CURSOR;

// Words of the live bits a thread clears at a time.
#define CLEAR_UNIT (1u << 15)

static void clear_part(void) {
  u64 words = TOP / 64 + 1;
  for (;;) {
    u64 lo = atomic_fetch_add(&CURSOR.n, 1) * CLEAR_UNIT;
    if (lo >= words) return;
    u64 n = words - lo < CLEAR_UNIT ? words - lo : CLEAR_UNIT;
    memset(LIVE + lo, 0, n * sizeof(u64));
  }
}

// Sweeping
// ========

static void chunk_add(ThreadWork *w, u64 lo, u64 len) {
  if (w->chunk_n == w->chunk_cap) {
    u64  cap = w->chunk_cap ? w->chunk_cap * 2 : 1024;
    u64 *c   = realloc(w->chunks, cap * sizeof(u64));
    if (!c) return;   // this run stays unused: still correct
    w->chunks = c; w->chunk_cap = cap;
  }
  w->chunks[w->chunk_n++] = (lo << 32) | len;
}

// The free run [lo, hi): arenas of at most RECLAIM_ARENA words. Threads
// forget disjoint runs at once: snf_forget clears a page's dirty byte only
// for a page inside its run, which no other run touches.
static void free_run(ThreadWork *w, u64 lo, u64 hi) {
  u64 min = MIN_CHUNK;
  if (hi - lo < min) return;   // not reused: its seen marks wait with it
  snf_forget((u32)lo, hi);
  while (lo < hi) {
    u64 len = hi - lo < RECLAIM_ARENA ? hi - lo : RECLAIM_ARENA;
    if (len < min) break;
    chunk_add(w, lo, len);
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

// Sweeps the free runs that begin in [lo, hi) into w's chunks: a run may
// end past hi, and one that began below lo is the range's below. Returns
// where the free run up to the top begins if it begins here (the new top),
// else TOP; *live: the live words of [lo, hi).
static u64 sweep_range(ThreadWork *w, u64 lo, u64 hi, u64 *live) {
  u64 at = lo;
  *live = 0;
  if (lo > BASE && !(LIVE[(lo - 1) >> 6] >> ((lo - 1) & 63) & 1)) at = next_bit(lo, hi, 1);
  while (at < hi) {
    u64 on = next_bit(at, TOP, 1);
    if (on >= TOP) {
      snf_forget((u32)at, TOP);
      return at;
    }
    if (on > at) free_run(w, at, on);
    if (on >= hi) break;
    u64 off = next_bit(on, TOP, 0);
    *live  += (off < hi ? off : hi) - on;
    at      = off;
  }
  return TOP;
}

// Together, [BASE, TOP) is cut into ranges that the threads take in
// address order, so each thread's chunks are in address order and each
// range's lie together in one thread's list.
typedef struct {
  u32 tid;       // the thread that swept it
  u64 first;     // its chunks: [first, first + n) of that thread's list
  u64 n;
  u64 live;
  u64 top;       // sweep_range's result
} SweptRange;

#define SWEEP_RANGE_MIN (1u << 16)   // words: a range's own cost stays small
#define SWEEP_RANGES    4            // ranges a thread, for the balance
static SweptRange *RANGES      = NULL;
static u64         RANGE_N     = 0;
static u64         RANGE_CAP   = 0;
static u64         RANGE_WORDS = 0;

static void sweep_part(u32 tid) {
  ThreadWork *w = &WORK[tid];
  for (;;) {
    u64 r = atomic_fetch_add(&CURSOR.n, 1);
    if (r >= RANGE_N) return;
    u64 lo = BASE + r * RANGE_WORDS;
    u64 hi = TOP - lo < RANGE_WORDS ? TOP : lo + RANGE_WORDS;
    SweptRange *s = &RANGES[r];
    s->tid   = tid;
    s->first = w->chunk_n;
    s->top   = sweep_range(w, lo, hi, &s->live);
    s->n     = w->chunk_n - s->first;
  }
}

static void sweep_ranges(void) {
  u64 words   = TOP - BASE;
  RANGE_WORDS = (words + (u64)NTHR * SWEEP_RANGES - 1) / ((u64)NTHR * SWEEP_RANGES);
  if (RANGE_WORDS < SWEEP_RANGE_MIN) RANGE_WORDS = SWEEP_RANGE_MIN;
  RANGE_N = (words + RANGE_WORDS - 1) / RANGE_WORDS;
  if (RANGE_N > RANGE_CAP) {
    SweptRange *r = realloc(RANGES, RANGE_N * sizeof(SweptRange));
    if (!r) out_of_memory();
    RANGES    = r;
    RANGE_CAP = RANGE_N;
  }
  for (u32 i = 0; i < NTHR; i++) WORK[i].chunk_n = 0;
}

// The ranges' chunks, in address order.
static u64 *CHUNKS    = NULL;
static u64  CHUNK_N   = 0;
static u64  CHUNK_CAP = 0;

static u64 sweep_merge(u64 *new_top) {
  u64 live = 0, top = TOP;
  CHUNK_N = 0;
  for (u64 r = 0; r < RANGE_N; r++) {
    SweptRange *s = &RANGES[r];
    live += s->live;
    if (s->top < top) top = s->top;
    if (s->n == 0) continue;   // (its thread may have no list at all)
    if (CHUNK_N + s->n > CHUNK_CAP) {
      u64 cap = CHUNK_CAP ? CHUNK_CAP : 1024;
      while (cap < CHUNK_N + s->n) cap *= 2;
      u64 *c = realloc(CHUNKS, cap * sizeof(u64));
      if (!c) continue;   // these runs stay unused: still correct
      CHUNKS = c; CHUNK_CAP = cap;
    }
    memcpy(CHUNKS + CHUNK_N, WORK[s->tid].chunks + s->first, s->n * sizeof(u64));
    CHUNK_N += s->n;
  }
  *new_top = top;
  return live;
}

// Phases
// ======
// The collector opens a phase; a parked thread that sees it open joins it
// (JOINED), takes units of its work until none is left, and leaves. To
// end a phase the collector closes it and waits for the joined ones to
// leave: one that joins as it closes sees it closed (JOINED is raised and
// then PHASE read; PHASE is written and then JOINED read). Only then is
// the next phase's work set up.

enum { PHASE_CLOSED, PHASE_CLEAR, PHASE_MARK, PHASE_SWEEP };
static _Atomic u64 PHASE  = 0;   // a count of phases opened, times 4, + the kind
static _Atomic u32 JOINED = 0;

static void phase_open(u32 kind) {
  u64 p = atomic_load(&PHASE);
  atomic_store(&PHASE, ((p >> 2) + 1) << 2 | kind);
}

static void phase_close(void) {
  atomic_store(&PHASE, atomic_load(&PHASE) & ~3ull);
  u32 idle = 0;
  while (atomic_load(&JOINED) != 0) wait_a_while(&idle);
}

static void take_part(u32 tid, u64 kind) {
  switch (kind) {
    case PHASE_CLEAR: clear_part();         break;
    case PHASE_MARK:  mark_part(&WORK[tid]); break;
    case PHASE_SWEEP: sweep_part(tid);      break;
  }
}

// A parked thread joins the phase under way, once: 1 if it took part.
static int help(u32 tid, u64 *joined) {
  u64 p = atomic_load(&PHASE);
  if ((p & 3) == PHASE_CLOSED || p == *joined || tid >= NTHR) return 0;
  atomic_fetch_add(&JOINED, 1);
  int in = atomic_load(&PHASE) == p;
  if (in) {
    take_part(tid, p & 3);
    atomic_fetch_add_explicit(&HELPED, 1, memory_order_relaxed);
    *joined = p;
  }
  atomic_fetch_sub(&JOINED, 1);
  return in;
}

// The collection's marking and sweeping, which `clear` the live bits
// first (the first collection finds them fresh): returns the live words of
// [BASE, TOP), sets the new top and the free chunks.
static u64 collect_alone(u32 tid, u64 *new_top, int clear, const u64 **chunks, u64 *n) {
  ThreadWork *w = &WORK[tid];
  if (clear) memset(LIVE, 0, (TOP / 64 + 1) * sizeof(u64));
  mark_alone(w);
  u64 live   = 0;
  w->chunk_n = 0;
  *new_top   = sweep_range(w, BASE, TOP, &live);
  *chunks    = w->chunks;
  *n         = w->chunk_n;
  return live;
}

static u64 collect_together(u32 tid, u64 *new_top, int clear, const u64 **chunks, u64 *n) {
  if (clear) {
    atomic_store(&CURSOR.n, 0);
    phase_open(PHASE_CLEAR);
    clear_part();
    phase_close();
  }
  atomic_store(&MARKING, 0);
  atomic_store(&HUNGRY.n, 0);
  share_roots();
  phase_open(PHASE_MARK);
  mark_part(&WORK[tid]);
  phase_close();
  sweep_ranges();
  atomic_store(&CURSOR.n, 0);
  phase_open(PHASE_SWEEP);
  sweep_part(tid);
  phase_close();
  u64 live = sweep_merge(new_top);
  *chunks  = CHUNKS;
  *n       = CHUNK_N;
  return live;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void run(u32 tid) {
  double t0 = now();
  TOP = heap_used();
  if (TOP > HIGH) HIGH = TOP;
  int clear = LIVE != NULL;   // reserved now: fresh, all clear
  if (!LIVE) {
    LIVE = mmap(NULL, (RT->heap.cap / 64 + 1) * sizeof(u64), PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (LIVE == MAP_FAILED) eval_fatal("hvm4g: ", "cannot reserve the heap's live bits");
  }
  const u64 *chunks;
  u64        chunk_n, top;
  u64        live = RECLAIM_HELP ? collect_together(tid, &top, clear, &chunks, &chunk_n)
                                 : collect_alone(tid, &top, clear, &chunks, &chunk_n);
  heap_set_free(chunks, chunk_n, top);
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
  for (u64 i = 0; i < chunk_n; i++) room += (u32)chunks[i];
  LOW = RT->heap.cap - TOP + room < RT->heap.cap / 16;
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
  // not armed (a collapse, a device run): nothing may be collected, and a
  // stop would wait for threads that never park (the collapse's consumer)
  if (!ARMED) return 0;
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
    run(tid);
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
