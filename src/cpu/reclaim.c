// reclaim.c: collections of the CPU heap while a normal form runs
// (reclaim.h; docs/memory.md says why this scheme).
//
// A collection, on the thread whose refill found the heap full (or the
// words handed out since the last one past the gap):
//
//   1. stop:   the collector's stop flag is raised; every other thread
//              parks at its next safe point (a WNF run stopped and rebuilt,
//              a pool thread between tasks) or is already away (asleep, no
//              task)
//   2. roots:  the words below the base (the book and the program's root),
//              each thread's root frames (terms and slots the C code holds),
//              and what the modules that registered (reclaim_add_roots)
//              name: the strong normal form's slot stacks and stuck DUP
//              lists, every queued task and spark
//   3. mark:   one bit per word, from the roots through every node (all of
//              its words), as the device's packing marks (compact.h)
//   4. sweep:  the unmarked runs become chunks that heap_take hands out as
//              arenas; the top drops to the last live word; the seen set
//              forgets the freed words (reclaim_add_forget)
//
// Steps 3 and 4 (and the clearing of the last collection's bits) are
// shared with the threads parked in step 1: they help while they wait
// (Phases, below). Threads asleep in the pool do not.
//
//   5. compact (only when less than half the garbage is in reusable runs):
//              the live words slide together in address order around the
//              slots the roots name, every location rewritten (Compaction)
//
// Either way the rules' sharing (two projections of one DUP), SUB chains,
// stuck nodes and labels are the same graph they were. A collection that
// cannot run (a host primitive in flight holds locations in C, the pool is
// not armed) is skipped. %nf and %gnf on the CPU hold theirs in root
// frames, so their normal forms collect (Rooted primitives).
//
// All of it is the runtime's (RT->cpu->reclaim, reclaim.h's Reclaim).

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include "cpu/reclaim.h"
#include "cpu/eval.h"
#include "cpu/pool.h"
#include "cpu/cpu.h"
#include "heap/rt.h"
#include "heap/sanitize.h"
#include "cpu/cpu_rt.h"

// Words handed out between collections when little is live: a collection
// costs a walk of the live words and a scan of one bit per word, so the gap
// keeps that small beside the work, and the touched heap within the caches'
// reach of a few levels (docs/memory.md).
#define GAP_MIN   (1ull << 22)
// Free runs shorter than this stay unused until a later collection: an
// arena shorter than a few nodes would cost a refill every few rules, and
// one shorter than the core's refill request (WNF_RESERVE) is never taken:
// every refill would skip it and bump the top, the heap growing as if
// nothing were reclaimed. Also the smallest arena --reclaim-gap may ask.
#define MIN_CHUNK 256u
_Static_assert(MIN_CHUNK >= 2 * WNF_RESERVE, "a chunk must hold the core's refills");
#define ARENA_SHARE 16   // a thread's arena: at most this share of the heap

typedef struct ReclaimAway {
  _Alignas(64) _Atomic int on;
} Away;

// One thread's part of a collection: its own stack of terms to mark and
// the chunks it swept, a cache line apart from the other threads' parts.
typedef struct ReclaimWork {
  _Alignas(64) u64 *stk;   // terms whose nodes are still to mark
  int  in_phase;           // it takes part in a phase (help)
  u64  stk_lo;             // [stk_lo, stk_n) are left: the bottom was shared
  u64  stk_n;
  u64  stk_cap;
  u64 *chunks;             // the free chunks it swept, in address order
  u64  chunk_n;
  u64  chunk_cap;
} ThreadWork;

static int help(Reclaim *r, u32 tid, u64 *joined);

static Reclaim *me(void) {
  return &RT->cpu->reclaim;
}

// An arena is at most an ARENA_SHARE of the heap per thread: in a small
// heap one thread's arena would otherwise hold every free word, and the
// others would find it full however little is live. Sized from the first
// run on, armed or not: a collapse, which runs unarmed, would otherwise
// ask for CPU_ARENA words, get just its refill's few where the heap is
// smaller, and fill the heap with the rest of each arena left unused.
static void size_arena(Reclaim *r) {
  u64 gap   = RT->cpu->conf.reclaim_gap;
  u64 arena = gap && gap < CPU_ARENA ? gap : CPU_ARENA;
  u64 share = RT->heap.cap / ((u64)ARENA_SHARE * r->threads);
  if (arena > share) arena = share;
  r->arena  = (u32)(arena > MIN_CHUNK ? arena : MIN_CHUNK);
}

void reclaim_init(u32 threads) {
  Reclaim *r = me();
  if (r->roots) return;   // eval_init's, before the pool's
  u32 n      = threads ? threads : 1;
  r->roots     = aligned_alloc(64, n * sizeof(RootList));
  r->away      = aligned_alloc(64, n * sizeof(Away));
  r->itrs_then = calloc(n, sizeof(u64));
  r->work      = aligned_alloc(64, n * sizeof(ThreadWork));
  if (!r->roots || !r->away || !r->itrs_then || !r->work) {
    eval_fatal("hvm4g: ", "out of memory");
  }
  for (u32 i = 0; i < n; i++) r->roots[i].head = NULL;
  memset(r->work, 0, n * sizeof(ThreadWork));
  r->help = n > 1;
  // the pool's threads start asleep; the program's thread is the one
  // that runs the normal form
  for (u32 i = 0; i < n; i++) atomic_init(&r->away[i].on, i > 0);
  r->threads = n;
  size_arena(r);
}

void reclaim_close(void) {
  Reclaim *r = me();
  for (u32 i = 0; r->work && i < r->threads; i++) {
    free(r->work[i].stk);
    free(r->work[i].chunks);
  }
  free(r->work);
  free(r->roots);
  free(r->away);
  free(r->itrs_then);
  free(r->shared);
  free(r->ranges);
  free(r->chunks);
  free(r->group_to);
  free(r->group_pin);
  r->group_to = NULL; r->group_pin = NULL; r->group_cap = 0;
  if (r->live) munmap(r->live, r->live_words * sizeof(u64));
  r->work = NULL; r->roots = NULL; r->away = NULL; r->itrs_then = NULL;
  r->shared = NULL; r->ranges = NULL; r->chunks = NULL; r->live = NULL;
  r->threads = 0;
}

void reclaim_add_roots(ReclaimEach each) {
  Reclaim *r = me();
  for (u32 i = 0; i < r->neach; i++) {
    if (r->each[i] == each) return;
  }
  if (r->neach == RECLAIM_SOURCES) eval_fatal("hvm4g: ", "too many root sources");
  r->each[r->neach++] = each;
}

void reclaim_add_forget(void (*forget)(u32 lo, u64 hi)) {
  me()->forget = forget;
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
// SPARSE_MAX), and a productive collection sets it back (Reclaim.sparse).
// A full heap still collects whatever the gap (reclaim_oom), so --heap
// stays the bound.
#define SPARSE_SHARE  8
#define SPARSE_GROWTH 4
#define SPARSE_MAX    256
// A collection whose walk took more than a COST_SHARE of the time since
// the last one ended costs the run more than the fresh pages it saves
// (they cost a clear each, the walk a cache miss a live word): the gap
// doubles (Reclaim.cost), up to COST_MAX times, and halves back once
// collections cost under a quarter of that share. Measured in wall time,
// so the rule follows the machine: where fresh pages are dear the gap
// stays small.
#define COST_SHARE 16
#define COST_MAX   64
// What a fresh word costs (the kernel's fault and clear of its page) sets
// how much a gap can save: a collection over L live words costs L walks and
// saves at most the words it frees, each a fresh word not faulted in. The
// base gap (GAP_LIVE times the live words) saves PAYBACK times its walk
// where a fresh word costs PAYBACK * WALK_NS / GAP_LIVE or more; where it
// costs less (huge pages, a fast clear) the gap grows (Reclaim.fresh)
// until it does again, up to FRESH_MAX. Measured once a runtime, on the
// first fresh arenas past half the first gap (reclaim_probe);
// --fresh-cost sets it.
#define WALK_NS   30   // a live word's walk on one thread: a cache miss (28 ns measured)
#define PAYBACK   4
#define FRESH_MAX 16   // value chosen by tests: at 4, gpu_shared_tree's
                       // one late collection cost it a fifth on the H100 host

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

static u64 gap_after(Reclaim *r, u64 live) {
  u64 gap = RT->cpu->conf.reclaim_gap;
  if (gap) {
    u64 floor = live / GAP_LIVE_TINY;
    return gap > floor ? gap : floor;
  }
  return r->fresh * r->worked * r->sparse * r->cost *
         (GAP_LIVE * live > GAP_MIN ? GAP_LIVE * live : GAP_MIN);
}

// The arena [at, at + n) a refill just took: the first PROBE_N past the
// probe's point are timed, a store a page (the faults their first use
// would take anyway), and their mean cost sets the fresh factor, the first
// gap with it. Several: the kernel maps some ranges ahead of their first
// touch.
#define PROBE_N 8
// Fresh words past which the system time since the arming is a measure too
// (its clock ticks in milliseconds).
#define PROBE_SYS_MIN (1u << 20)

static double sys_secs(void) {
  struct rusage u;
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec / 1e6;
}

void reclaim_probe(u32 at, u32 n) {
  Reclaim *r = me();
  if (at < r->high || n < MIN_CHUNK) return;
  if (atomic_fetch_add(&r->probe_taken, 1) >= PROBE_N) return;
  const u32 page = 4096 / sizeof(Term);
  double    t0   = now();
  for (u32 i = 0; i < n; i += page) __atomic_store_n(&RT->heap.at[at + i], 0, __ATOMIC_RELAXED);
  atomic_fetch_add(&r->probe_ns, (u64)((now() - t0) * 1e9));
  atomic_fetch_add(&r->probe_words, n);
  if (atomic_fetch_add(&r->probe_done, 1) + 1 < PROBE_N) return;
  r->probe    = ~0ull;
  r->fresh_ns = (double)atomic_load(&r->probe_ns) / (double)atomic_load(&r->probe_words);
  // The kernel's time since the arming, over the fresh words since: on a
  // VM or gVisor a fault maps ahead, so the timed touches above meet pages
  // mapped already, while the run pays the mapping in system time.
  double sys   = sys_secs() - r->sys_armed;
  u64    fresh = heap_used() > r->top_armed ? heap_used() - r->top_armed : 0;
  if (fresh >= PROBE_SYS_MIN && r->stats.runs == 0 && sys * 1e9 / (double)fresh > r->fresh_ns) {
    r->fresh_ns = sys * 1e9 / (double)fresh;
  }
  r->fresh    = reclaim_fresh_factor(r->fresh_ns);
  if (r->stats.runs == 0 && r->armed) r->next = r->armed_at + gap_after(r, 0);
}

void reclaim_arm(void) {
  Reclaim *r  = me();
  r->base     = heap_used();
  r->sparse   = 1;
  r->cost     = 1;
  r->ran_from = now();
  // The first gap counts every thread as working: a short wide run under
  // -T N would otherwise stop N threads for a walk of its live data after
  // one thread's gap, and often end soon after.
  r->worked   = r->threads;
  r->armed    = 1;
  r->armed_at = heap_given();
  r->sys_armed = sys_secs();
  r->top_armed = heap_used();
  size_arena(r);
  u64 gap     = RT->cpu->conf.reclaim_gap;
  r->used_live  = 0;
  r->used_given = heap_given();
  if (RT->cpu->conf.fresh_ns) {
    r->fresh_ns = RT->cpu->conf.fresh_ns;
    r->fresh    = reclaim_fresh_factor(r->fresh_ns);
  }
  r->next = heap_given() + gap_after(r, 0);
  // measured once a run has handed out half its first gap: a short run
  // never pays for the probe's touch
  if (r->fresh_ns == 0 && !gap) r->probe = heap_given() + gap_after(r, 0) / 2;
}

// The free chunks go with the arming: whatever runs next (a device run
// that writes back above the top, a collapse) takes words from the top.
void reclaim_disarm(void) {
  Reclaim *r = me();
  // not armed: nothing to drop, and no write that a thread still running
  // after an error (it reads armed in collect) could race with
  if (!r->armed) return;
  r->armed   = 0;
  r->next    = ~0ull;
  r->probe   = ~0ull;
  heap_drop_free();
  // an error left the runtime from inside a rooted primitive
  atomic_store(&r->hosts_rooted, 0);
}

void reclaim_restart(u64 top) {
  Reclaim *r = me();
  reclaim_disarm();
  HeapSnap program = { NULL, top };
  heap_rewind(&program);
  for (u32 i = 0; i < r->threads; i++) {
    Wnf *w = eval_worker(i);
    if (w) w->next = w->end = 0;
  }
  r->used_live = 0;
}

void reclaim_host(int d) {
  atomic_fetch_add(&me()->hosts, d);
}

// Rooted primitives
// =================
// A host primitive's C code holds locations no root frame names, so while
// one is in flight no collection runs. %nf (and %gnf where the CPU runs
// it) holds one: the slot its normal form is made in, which f names while
// that normal form runs, and collects there as any normal form does. What
// the stack below it holds is in root frames too: the WNF run that met the
// primitive stopped with WNF_HOST and rebuilt its term, held in eval.c's
// root frame; the host call's frame there names the slot the result goes
// to and the term an error puts back; the outer normal form's slot stacks
// are snf.c's roots. So a collection inside may free and move any word the
// outer run made as well. A primitive that is not rooted (%log, a
// library's, one that holds this %nf in its argument) keeps blocking: the
// hosts in flight then outnumber the rooted ones. Not for a thread outside
// the pool (no root frames, not stopped), nor unarmed (-D, the lazy core,
// a collapse: no collection), nor while the pool runs a job (run/sched.c).
int reclaim_rooted_host(RootFrame *f, u32 slot) {
  Reclaim *r   = me();
  u32      tid = pool_tid();
  if (!r->armed || tid >= r->threads) return 0;
  *f = (RootFrame){ NULL, slot, NULL };
  reclaim_hold(r, tid, f);
  atomic_fetch_add(&r->hosts_rooted, 1);
  return 1;
}

void reclaim_rooted_host_end(RootFrame *f) {
  Reclaim *r = me();
  // first: a collection must not run once the slot is no root
  if (r->armed) atomic_fetch_sub(&r->hosts_rooted, 1);
  reclaim_drop(r, pool_tid(), f);
}

ReclaimStats reclaim_stats(void) {
  Reclaim     *r = me();
  ReclaimStats s = r->stats;
  s.helped   = atomic_load_explicit(&r->helped, memory_order_relaxed);
  s.fresh_ns = r->fresh_ns;
  return s;
}

// What was live when the heap ran out, as far as it is known: the words
// the last collection found live, or, where none could run (a host
// primitive in flight, a collapse, a run too short), every word in use.
// A run that collects nothing (never armed) says so first: an earlier
// run's collection tells nothing of its words, and its words in use are
// every word it made, far more than its live ones.
void reclaim_exhausted(char *msg, size_t n) {
  Reclaim     *r   = me();
  ReclaimStats s   = reclaim_stats();
  unsigned long long cap = RT->heap.cap, used = heap_used();
  const char  *why = RT->heap.by_space ? ", sized by the address-space limit" : "";
  if (!r->armed) {
    snprintf(msg, n, "heap exhausted: %llu words in use in a heap of %llu words%s "
             "(none collected: a collapse, -D and the lazy core run no collection)",
             used, cap, why);
  } else if (!reclaim_unblocked(r)) {
    snprintf(msg, n, "heap exhausted: %llu live words at most in a heap of %llu words%s "
             "(no collection can run inside %%log, a library's or another primitive "
             "that holds heap locations)", used, cap, why);
  } else if (s.runs) {
    snprintf(msg, n, "heap exhausted: %llu live words in a heap of %llu words%s",
             (unsigned long long)s.live, cap, why);
  } else {
    snprintf(msg, n, "heap exhausted: %llu live words at most in a heap of %llu words%s "
             "(no collection ran)", used, cap, why);
  }
}

// Stopping the threads
// ====================
// A thread clears its flag and then reads the stop flag; the collector
// raises the stop flag and then reads the flags (both sequentially
// consistent), so one of them sees the other.

// Every wait here also asks whether a pool thread failed (eval_check): a
// thread that ended with an error while it took part would be waited for
// forever.
static void wait_a_while(u32 *idle) {
  eval_check();
  if (++*idle < 256) {
    cpu_relax();
  } else {
    sched_yield();
  }
}

// A parked thread helps the collection (Phases, below) while it waits.
void reclaim_park(u32 tid) {
  Reclaim *r    = me();
  u64   joined  = 0;   // the last phase it took part in
  for (;;) {
    atomic_store(&r->away[tid].on, 1);
    u32 idle = 0;
    while (atomic_load(&r->stop)) {
      if (help(r, tid, &joined)) idle = 0;
      else wait_a_while(&idle);
    }
    atomic_store(&r->away[tid].on, 0);
    if (!atomic_load(&r->stop)) break;
  }
}

void reclaim_away(u32 tid, int away) {
  Reclaim *r = me();
  if (away) {
    atomic_store(&r->away[tid].on, 1);
    return;
  }
  atomic_store(&r->away[tid].on, 0);
  if (atomic_load(&r->stop)) reclaim_park(tid);
}

// Marking
// =======
// With one thread (or Reclaim.help off) the collector marks and sweeps
// alone, as plain loads and stores. With more, the threads parked for the
// collection take part (help): a word is claimed live by an atomic or, and
// only the thread whose or set its bit traces the word's content.
//
// The shared pool (Reclaim.shared): terms a marking thread handed over for
// threads whose own stacks ran dry, and the roots at the start. shared_n
// and marking are changed under share_lock and peeked at without it;
// hungry counts the marking threads waiting for terms.

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

// What a marking thread reads at every word, kept in locals by drain.
typedef struct {
  const Term *heap;
  u64        *live;
  u64         base;
  u64         top;
} Marking;

// Marks word `loc` live; its content, if it points somewhere, is traced.
static inline __attribute__((always_inline))
void mark_word(ThreadWork *w, const Marking *m, u64 loc, int shared) {
  if (loc < m->base || loc >= m->top) return;
  u64  bit  = 1ull << (loc & 63);
  u64 *word = &m->live[loc >> 6];
  if (shared) {
    // the plain load skips the locked or for a word already marked
    if (__atomic_load_n(word, __ATOMIC_RELAXED) & bit) return;
    if (__atomic_fetch_or(word, bit, __ATOMIC_RELAXED) & bit) return;
  } else {
    if (*word & bit) return;
    *word |= bit;
  }
  Term c = NO_SUB(m->heap[loc]);
  if (HAS_LOC(TAG(c))) push(w, c);
}

// Marks the words of the node `t` points into: a variable or a DUP
// projection points at one binder slot, anything else at a whole node.
static inline __attribute__((always_inline))
void trace(ThreadWork *w, const Marking *m, Term t, int shared) {
  t = NO_SUB(t);
  u32 tag = TAG(t);
  if (!HAS_LOC(tag)) return;
  u32 n = (tag == VAR || tag == DP0 || tag == DP1) ? 1 : term_arity(t);
  for (u32 j = 0; j < n; j++) mark_word(w, m, (u64)VAL(t) + j, shared);
}

static void shared_add(Reclaim *r, const u64 *terms, u64 k) {
  u64 n = atomic_load_explicit(&r->shared_n, memory_order_relaxed);
  if (n + k > r->shared_cap) {
    u64 cap = r->shared_cap ? r->shared_cap : 1 << 12;
    while (cap < n + k) cap *= 2;
    u64 *s = realloc(r->shared, cap * sizeof(u64));
    if (!s) out_of_memory();
    r->shared     = s;
    r->shared_cap = cap;
  }
  memcpy(r->shared + n, terms, k * sizeof(u64));
  atomic_store_explicit(&r->shared_n, n + k, memory_order_relaxed);
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
static __attribute__((noinline)) void give(Reclaim *r, ThreadWork *w) {
  if (atomic_load_explicit(&r->shared_n, memory_order_relaxed) >= GIVE_MAX) return;
  u64 k = (w->stk_n - w->stk_lo) / 2;
  if (k > GIVE_MAX) k = GIVE_MAX;
  pthread_mutex_lock(&r->share_lock);
  shared_add(r, w->stk + w->stk_lo, k);
  pthread_mutex_unlock(&r->share_lock);
  w->stk_lo += k;
}

// Live words lie scattered over the heap, so tracing is a cache miss a
// node: a term waits in a short queue while its node and live bits are
// fetched, and the misses of the queued terms overlap.
#define PREFETCH_QUEUE 16
static inline __attribute__((always_inline))
void drain(Reclaim *r, ThreadWork *w, int shared) {
  const Marking m = { RT->heap.at, r->live, r->base, r->top };
  Term queue[PREFETCH_QUEUE];
  u32  head = 0, n = 0;
  while (w->stk_n > w->stk_lo || n > 0) {
    if (shared && w->stk_n - w->stk_lo >= GIVE_MIN &&
        atomic_load_explicit(&r->hungry.n, memory_order_relaxed) > 0) {
      give(r, w);
    }
    if (w->stk_n > w->stk_lo && n < PREFETCH_QUEUE) {
      Term t   = w->stk[--w->stk_n];
      u64  loc = VAL(NO_SUB(t));
      __builtin_prefetch(&m.heap[loc]);
      if (shared) {
        __builtin_prefetch(&m.live[loc >> 6], 1);
      } else {
        __builtin_prefetch(&m.live[loc >> 6]);
      }
      queue[(head + n++) % PREFETCH_QUEUE] = t;
      continue;
    }
    Term t = queue[head];
    head   = (head + 1) % PREFETCH_QUEUE;
    n--;
    trace(w, &m, t, shared);
  }
  w->stk_lo = 0;
  w->stk_n  = 0;
}

static void drain_alone(Reclaim *r, ThreadWork *w)  { drain(r, w, 0); }
static void drain_shared(Reclaim *r, ThreadWork *w) { drain(r, w, 1); }

// The roots go to the shared pool first, as terms to trace (a slot as a
// variable pointing at it: trace marks that one word). Together, the
// threads take them from there; alone, the collector's stack does.
static void share_slot(u32 loc) {
  Term t = TERM(VAR, 0, loc);
  shared_add(me(), &t, 1);
}

static void share_roots(Reclaim *r) {
  atomic_store(&r->shared_n, 0);
  for (u64 i = 1; i < r->base; i++) {
    Term t = RT->heap.at[i];
    if (HAS_LOC(TAG(NO_SUB(t)))) shared_add(r, &t, 1);
  }
  for (u32 i = 0; i < r->threads; i++) {
    for (RootFrame *f = r->roots[i].head; f; f = f->up) {
      if (f->term) shared_add(r, f->term, 1);
      if (f->loc) share_slot(f->loc);
    }
  }
  for (u32 i = 0; i < r->neach; i++) r->each[i](share_slot);
}

static void mark_alone(Reclaim *r, ThreadWork *w) {
  share_roots(r);
  u64 n = atomic_load_explicit(&r->shared_n, memory_order_relaxed);
  stack_room(w, n);
  if (n > 0) memcpy(w->stk + w->stk_n, r->shared, n * sizeof(u64));
  w->stk_n += n;
  atomic_store_explicit(&r->shared_n, 0, memory_order_relaxed);
  drain_alone(r, w);
}

// w's stack ran dry: refills it from the shared pool, waiting while other
// threads still mark (they may share more). 0: the pool is empty and no
// thread holds a term, so nothing is left to mark (a thread holds terms
// only while counted in marking, and is counted again only by taking
// some), or the collection was abandoned (reclaim_leave).
static int take(Reclaim *r, ThreadWork *w, u64 phase) {
  pthread_mutex_lock(&r->share_lock);
  atomic_fetch_sub_explicit(&r->marking, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&r->hungry.n, 1, memory_order_relaxed);
  u32 idle = 0;
  for (;;) {
    u64 n = atomic_load_explicit(&r->shared_n, memory_order_relaxed);
    if (n > 0) {
      u64 k = (n + 1) / 2;
      if (k > TAKE_MAX) k = TAKE_MAX;
      stack_room(w, k);
      memcpy(w->stk + w->stk_n, r->shared + n - k, k * sizeof(u64));
      w->stk_n += k;
      atomic_store_explicit(&r->shared_n, n - k, memory_order_relaxed);
      atomic_fetch_add_explicit(&r->marking, 1, memory_order_relaxed);
      atomic_fetch_sub_explicit(&r->hungry.n, 1, memory_order_relaxed);
      pthread_mutex_unlock(&r->share_lock);
      return 1;
    }
    if (atomic_load_explicit(&r->marking, memory_order_relaxed) == 0 ||
        atomic_load_explicit(&r->phase, memory_order_relaxed) != phase ||
        atomic_load_explicit(&r->abandoned, memory_order_relaxed)) {
      atomic_fetch_sub_explicit(&r->hungry.n, 1, memory_order_relaxed);
      pthread_mutex_unlock(&r->share_lock);
      return 0;
    }
    pthread_mutex_unlock(&r->share_lock);
    while (atomic_load_explicit(&r->shared_n, memory_order_relaxed) == 0 &&
           atomic_load_explicit(&r->marking, memory_order_relaxed) != 0 &&
           atomic_load_explicit(&r->phase, memory_order_relaxed) == phase &&
           !atomic_load_explicit(&r->abandoned, memory_order_relaxed)) {
      wait_a_while(&idle);
    }
    pthread_mutex_lock(&r->share_lock);
  }
}

// A thread's part of the mark, the collector's or a helper's: it joins
// busy with nothing, so its first take waits for terms like any other.
static void mark_part(Reclaim *r, ThreadWork *w) {
  u64 phase = atomic_load(&r->phase);
  atomic_fetch_add(&r->marking, 1);
  do {
    drain_shared(r, w);
  } while (take(r, w, phase));
}

// Clearing
// ========

// Words of the live bits a thread clears at a time.
#define CLEAR_UNIT (1u << 15)

static void clear_part(Reclaim *r) {
  u64 words = r->top / 64 + 1;
  for (;;) {
    u64 lo = atomic_fetch_add(&r->cursor.n, 1) * CLEAR_UNIT;
    if (lo >= words) return;
    u64 n = words - lo < CLEAR_UNIT ? words - lo : CLEAR_UNIT;
    memset(r->live + lo, 0, n * sizeof(u64));
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

// The free run [lo, hi): arenas of at most an arena's words. Threads
// forget disjoint runs at once: snf_forget clears a page's dirty byte only
// for a page inside its run, which no other run touches.
// [lo, hi) as chunks of at most an arena's words, none under MIN_CHUNK.
static void cut_arenas(Reclaim *r, ThreadWork *w, u64 lo, u64 hi) {
  while (hi - lo >= MIN_CHUNK) {
    u64 len = hi - lo < r->arena ? hi - lo : r->arena;
    chunk_add(w, lo, len);
    lo += len;
  }
}

static void free_run(Reclaim *r, ThreadWork *w, u64 lo, u64 hi) {
  if (hi - lo < MIN_CHUNK) return;   // not reused: its seen marks wait with it
  if (r->forget) r->forget((u32)lo, hi);
  cut_arenas(r, w, lo, hi);
}

// The first word of [at, lim) whose bit is `want`, else lim.
static u64 next_bit(const u64 *live, u64 at, u64 lim, int want) {
  while (at < lim) {
    u64 w = live[at >> 6];
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
// else the top; *live: the live words of [lo, hi).
static u64 sweep_range(Reclaim *r, ThreadWork *w, u64 lo, u64 hi, u64 *live) {
  const u64 *bits = r->live;
  u64        top  = r->top;
  u64        at   = lo;
  *live = 0;
  if (lo > r->base && !(bits[(lo - 1) >> 6] >> ((lo - 1) & 63) & 1)) at = next_bit(bits, lo, hi, 1);
  while (at < hi) {
    u64 on = next_bit(bits, at, top, 1);
    if (on >= top) {
      if (r->forget) r->forget((u32)at, top);
      return at;
    }
    if (on > at) free_run(r, w, at, on);
    if (on >= hi) break;
    u64 off = next_bit(bits, on, top, 0);
    *live  += (off < hi ? off : hi) - on;
    at      = off;
  }
  return top;
}

// Together, [base, top) is cut into ranges that the threads take in
// address order, so each thread's chunks are in address order and each
// range's lie together in one thread's list.
typedef struct SweptRange {
  u32 tid;       // the thread that swept it
  u64 first;     // its chunks: [first, first + n) of that thread's list
  u64 n;
  u64 live;
  u64 top;       // sweep_range's result
} SweptRange;

#define SWEEP_RANGE_MIN (1u << 16)   // words: a range's own cost stays small
#define SWEEP_RANGES    4            // ranges a thread, for the balance

static void sweep_part(Reclaim *r, u32 tid) {
  ThreadWork *w = &r->work[tid];
  for (;;) {
    u64 i = atomic_fetch_add(&r->cursor.n, 1);
    if (i >= r->range_n) return;
    u64 lo = r->base + i * r->range_words;
    u64 hi = r->top - lo < r->range_words ? r->top : lo + r->range_words;
    SweptRange *s = &r->ranges[i];
    s->tid   = tid;
    s->first = w->chunk_n;
    s->top   = sweep_range(r, w, lo, hi, &s->live);
    s->n     = w->chunk_n - s->first;
  }
}

static void sweep_ranges(Reclaim *r) {
  u64 words      = r->top - r->base;
  u64 parts      = (u64)r->threads * SWEEP_RANGES;
  r->range_words = (words + parts - 1) / parts;
  if (r->range_words < SWEEP_RANGE_MIN) r->range_words = SWEEP_RANGE_MIN;
  r->range_n = (words + r->range_words - 1) / r->range_words;
  if (r->range_n > r->range_cap) {
    SweptRange *s = realloc(r->ranges, r->range_n * sizeof(SweptRange));
    if (!s) out_of_memory();
    r->ranges    = s;
    r->range_cap = r->range_n;
  }
  for (u32 i = 0; i < r->threads; i++) r->work[i].chunk_n = 0;
}

// The ranges' chunks, in address order (Reclaim.chunks).
static u64 sweep_merge(Reclaim *r, u64 *new_top) {
  u64 live = 0, top = r->top;
  r->chunk_n = 0;
  for (u64 i = 0; i < r->range_n; i++) {
    SweptRange *s = &r->ranges[i];
    live += s->live;
    if (s->top < top) top = s->top;
    if (s->n == 0) continue;   // (its thread may have no list at all)
    if (r->chunk_n + s->n > r->chunk_cap) {
      u64 cap = r->chunk_cap ? r->chunk_cap : 1024;
      while (cap < r->chunk_n + s->n) cap *= 2;
      u64 *c = realloc(r->chunks, cap * sizeof(u64));
      if (!c) continue;   // these runs stay unused: still correct
      r->chunks = c; r->chunk_cap = cap;
    }
    memcpy(r->chunks + r->chunk_n, r->work[s->tid].chunks + s->first, s->n * sizeof(u64));
    r->chunk_n += s->n;
  }
  *new_top = top;
  return live;
}

// Compaction
// ==========
// A sweep reuses free runs of MIN_CHUNK words or more: the core bumps
// through an arena and asks for WNF_RESERVE contiguous words before each
// interaction, so shorter runs cannot serve it. A program that keeps a
// word every few dozen (a result tree built while its leaves' work is
// garbage) leaves most of its garbage in such runs. When a sweep finds
// less than half of the garbage reusable, the collection also slides the
// live words together (in address order, so a node stays contiguous and
// the heap's order is kept), and every location is rewritten through a
// forwarding function computed from the live bits: no forwarding word is
// stored anywhere.
//
// What may move: a word above the base that no root names as a slot. The
// C code holds slots (a root frame's loc, the strong normal form's slot
// stacks and job lists, the pool's tasks) and writes back to them, so
// those stay where they are: a 64-word group holding one is pinned, with
// every group its live runs reach into (a node never straddles a moving
// and a staying group). A root frame's term is rewritten in place (its
// holder reads it back after the stop); the words below the base and
// every live word are rewritten in the same pass that moves them. The
// normal form's seen marks (snf.c) move with their words.
//
// Forwarding a location L above the base: L itself if its group is
// pinned or L is not live, else the group's destination plus the live
// words before L in its group (a popcount).

#define GROUP_WORDS 64
// snf.c's page of seen marks (SEEN_PAGE_WORDS): its dirty byte says a
// mark was set there, which snf_forget reads.
#define SEEN_PAGE (4096 / sizeof(u16))

typedef struct {
  const u64 *live;
  const u32 *to;
  const u8  *pin;
  u64        base, top, g0;
} Forward;

static inline u32 forward(const Forward *f, u32 loc) {
  if (loc < f->base || loc >= f->top) return loc;
  u64 g   = loc >> 6;
  u64 bit = 1ull << (loc & 63);
  if (!(f->live[g] & bit) || f->pin[g - f->g0]) return loc;
  return f->to[g - f->g0] + (u32)__builtin_popcountll(f->live[g] & (bit - 1));
}

static inline Term forward_term(const Forward *f, Term t) {
  if (!HAS_LOC(TAG(NO_SUB(t)))) return t;
  return (t & ~VAL_MASK) | forward(f, VAL(t));
}

static void pin_slot(u32 loc) {
  Reclaim *r = me();
  if (loc >= r->base && loc < r->top) r->group_pin[loc / GROUP_WORDS - r->base / GROUP_WORDS] = 1;
}

// Room for the tables of n groups; 0 when there is none (no compaction).
static int group_room(Reclaim *r, u64 n) {
  if (n <= r->group_cap) return 1;
  u32 *to  = realloc(r->group_to, n * sizeof(u32));
  if (to) r->group_to = to;
  u8  *pin = to ? realloc(r->group_pin, n) : NULL;
  if (pin) r->group_pin = pin;
  if (!to || !pin) return 0;
  r->group_cap = n;
  return 1;
}

// Pins the groups that hold a root's slot, then every group a live run
// of a pinned group reaches into, both ways.
static void pin_groups(Reclaim *r, u64 g0, u64 n) {
  memset(r->group_pin, 0, n);
  for (u32 i = 0; i < r->threads; i++) {
    for (RootFrame *f = r->roots[i].head; f; f = f->up) {
      if (f->loc) pin_slot(f->loc);
    }
  }
  for (u32 i = 0; i < r->neach; i++) r->each[i](pin_slot);
  const u64 *live = r->live;
  u8        *pin  = r->group_pin;
  for (u64 i = 0; i + 1 < n; i++) {
    if (pin[i] && (live[g0 + i] >> 63) && (live[g0 + i + 1] & 1)) pin[i + 1] = 1;
  }
  for (u64 i = n - 1; i > 0; i--) {
    if (pin[i] && (live[g0 + i] & 1) && (live[g0 + i - 1] >> 63)) pin[i - 1] = 1;
  }
}

// The seen mark of `from` goes to `to` (snf.c's seen set, when it has one).
static inline void seen_move(_Atomic u16 *seen, u8 *dirty, u32 from, u32 to) {
  u16 m = atomic_load_explicit(&seen[from], memory_order_relaxed);
  atomic_store_explicit(&seen[to], m, memory_order_relaxed);
  if (m) dirty[to / SEEN_PAGE] = 1;
}

// Slides the live words of [base, top) together around the pinned groups:
// sets the free chunks (the collector's list: the gaps before pinned
// groups) and the new top. 0 when its tables cannot be had (nothing moved).
// Each moved pointer costs a popcount (forward): compiled twice where the
// compiler can, the POPCNT instruction's copy chosen at load time on a CPU
// that has it (x86-64's baseline has none, and libgcc's is a call). Not
// under a sanitizer, whose runtime starts after the choice is made.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__POPCNT__) && \
    !defined(SANITIZED)
__attribute__((target_clones("popcnt", "default")))
#endif
static int compact(Reclaim *r, u32 tid, u64 *new_top, const u64 **chunks, u64 *n) {
  u64 g0 = r->base / GROUP_WORDS, g1 = (r->top + GROUP_WORDS - 1) / GROUP_WORDS;
  if (!group_room(r, g1 - g0)) return 0;
  pin_groups(r, g0, g1 - g0);
  const u64 *live = r->live;
  ThreadWork *w   = &r->work[tid];
  w->chunk_n      = 0;
  // where each group's live words go; the gaps left before pinned ones
  u64 dest = r->base;
  for (u64 g = g0; g < g1; g++) {
    u64 bits = live[g];
    if (!r->group_pin[g - g0]) {
      r->group_to[g - g0] = (u32)dest;
      dest += (u64)__builtin_popcountll(bits);
    } else if (bits) {
      u64 first = g * GROUP_WORDS + (u64)__builtin_ctzll(bits);
      cut_arenas(r, w, dest, first);   // marks forgotten after the moves
      dest = g * GROUP_WORDS + 64 - (u64)__builtin_clzll(bits);
    }
  }
  Forward f = { live, r->group_to, r->group_pin, r->base, r->top, g0 };
  Term   *heap  = RT->heap.at;
  Snf    *snf   = &RT->cpu->snf;
  _Atomic u16 *seen = snf->seen && snf->seen_words >= r->top ? snf->seen : NULL;
  for (u64 i = 1; i < r->base; i++) heap[i] = forward_term(&f, heap[i]);
  for (u32 i = 0; i < r->threads; i++) {
    for (RootFrame *fr = r->roots[i].head; fr; fr = fr->up) {
      if (fr->term) *fr->term = forward_term(&f, *fr->term);
    }
  }
  // in address order, each word to a place at or below its own: every
  // word a move overwrites was read before
  for (u64 g = g0; g < g1; g++) {
    u64 bits = live[g];
    int pinned = r->group_pin[g - g0];
    u32 to     = r->group_to[g - g0];
    while (bits) {
      u32 loc = (u32)(g * GROUP_WORDS + (u64)__builtin_ctzll(bits));
      bits &= bits - 1;
      Term c = forward_term(&f, heap[loc]);
      if (pinned || to == loc) {
        heap[loc] = c;
      } else {
        heap[to] = c;
        if (seen) seen_move(seen, snf->seen_dirty, loc, to);
      }
      to++;
    }
  }
  // the freed words' marks go only now: the moves read them first
  for (u64 i = 0; i < w->chunk_n && r->forget; i++) {
    u64 lo = w->chunks[i] >> 32;
    r->forget((u32)lo, lo + (u32)w->chunks[i]);
  }
  if (r->forget && dest < r->top) r->forget((u32)dest, r->top);
  *new_top = dest;
  *chunks  = w->chunks;
  *n       = w->chunk_n;
  r->stats.compactions++;
  return 1;
}

// Phases
// ======
// The collector opens a phase; a parked thread that sees it open joins it
// (joined), takes units of its work until none is left, and leaves. To
// end a phase the collector closes it and waits for the joined ones to
// leave: one that joins as it closes sees it closed (joined is raised and
// then phase read; phase is written and then joined read). Only then is
// the next phase's work set up.

enum { PHASE_CLOSED, PHASE_CLEAR, PHASE_MARK, PHASE_SWEEP };

static void phase_open(Reclaim *r, u32 kind) {
  u64 p = atomic_load(&r->phase);
  atomic_store(&r->phase, ((p >> 2) + 1) << 2 | kind);
}

static void phase_close(Reclaim *r) {
  atomic_store(&r->phase, atomic_load(&r->phase) & ~3ull);
  u32 idle = 0;
  while (atomic_load(&r->joined) != 0) wait_a_while(&idle);
}

static void take_part(Reclaim *r, u32 tid, u64 kind) {
  switch (kind) {
    case PHASE_CLEAR: clear_part(r);              break;
    case PHASE_MARK:  mark_part(r, &r->work[tid]); break;
    case PHASE_SWEEP: sweep_part(r, tid);         break;
  }
}

// A parked thread joins the phase under way, once: 1 if it took part.
static int help(Reclaim *r, u32 tid, u64 *joined) {
  u64 p = atomic_load(&r->phase);
  if ((p & 3) == PHASE_CLOSED || p == *joined || tid >= r->threads) return 0;
  atomic_fetch_add(&r->joined, 1);
  int in = atomic_load(&r->phase) == p;
  if (in) {
    r->work[tid].in_phase = 1;
    take_part(r, tid, p & 3);
    r->work[tid].in_phase = 0;
    atomic_fetch_add_explicit(&r->helped, 1, memory_order_relaxed);
    *joined = p;
  }
  atomic_fetch_sub(&r->joined, 1);
  return in;
}

// The collection's marking and sweeping, which `clear` the live bits
// first (the first collection finds them fresh): sets the live words of
// [base, top), the new top and the free chunks. 0 when a thread that took
// part left it (reclaim_leave): its part undone, nothing may be freed.
static int collect_alone(Reclaim *r, u32 tid, u64 *live, u64 *new_top, int clear,
                         const u64 **chunks, u64 *n) {
  ThreadWork *w = &r->work[tid];
  if (clear) memset(r->live, 0, (r->top / 64 + 1) * sizeof(u64));
  mark_alone(r, w);
  *live      = 0;
  w->chunk_n = 0;
  *new_top   = sweep_range(r, w, r->base, r->top, live);
  *chunks    = w->chunks;
  *n         = w->chunk_n;
  return 1;
}

static int left(Reclaim *r) {
  return atomic_load(&r->abandoned);
}

static int collect_together(Reclaim *r, u32 tid, u64 *live, u64 *new_top, int clear,
                            const u64 **chunks, u64 *n) {
  if (clear) {
    atomic_store(&r->cursor.n, 0);
    phase_open(r, PHASE_CLEAR);
    clear_part(r);
    phase_close(r);
  }
  atomic_store(&r->marking, 0);
  atomic_store(&r->hungry.n, 0);
  share_roots(r);
  phase_open(r, PHASE_MARK);
  mark_part(r, &r->work[tid]);
  phase_close(r);
  if (left(r)) return 0;
  sweep_ranges(r);
  atomic_store(&r->cursor.n, 0);
  phase_open(r, PHASE_SWEEP);
  sweep_part(r, tid);
  phase_close(r);
  if (left(r)) return 0;
  *live   = sweep_merge(r, new_top);
  *chunks = r->chunks;
  *n      = r->chunk_n;
  return 1;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

// Less than half the garbage of [base, top) is reusable: the rest lies in
// runs too short for an arena, between live words (Compaction).
#define REUSE_SHARE 2

static int fragmented(const Reclaim *r, u64 live, u64 top, const u64 *chunks, u64 n) {
  u64 room = r->top - top;
  for (u64 i = 0; i < n; i++) room += (u32)chunks[i];
  u64 garbage = r->top - r->base - live;
  return room * REUSE_SHARE < garbage;
}

static void run(Reclaim *r, u32 tid) {
  double t0 = now();
  r->top = heap_used();
  if (r->top > r->high) r->high = r->top;
  int clear = r->live != NULL;   // reserved now: fresh, all clear
  if (!r->live) {
    u64  words = RT->heap.cap / 64 + 1;
    void *bits = mmap(NULL, words * sizeof(u64), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (bits == MAP_FAILED) eval_fatal("hvm4g: ", "cannot reserve the heap's live bits");
    r->live       = bits;
    r->live_words = words;
  }
  const u64 *chunks;
  u64        chunk_n, top, live;
  int        done = r->help ? collect_together(r, tid, &live, &top, clear, &chunks, &chunk_n)
                            : collect_alone(r, tid, &live, &top, clear, &chunks, &chunk_n);
  if (!done) {   // dropped: the next one is a gap away
    r->next = heap_given() + gap_after(r, r->stats.live);
    return;
  }
  if (fragmented(r, live, top, chunks, chunk_n)) compact(r, tid, &top, &chunks, &chunk_n);
  heap_set_free(chunks, chunk_n, top);
  r->worked = 0;
  for (u32 i = 0; i < r->threads; i++) {
    Wnf *w  = eval_worker(i);
    w->next = 0;   // arenas were in the swept words: taken again
    w->end  = 0;
    u64 itrs = __atomic_load_n(&w->itrs, __ATOMIC_RELAXED);
    r->worked += itrs != r->itrs_then[i];
    r->itrs_then[i] = itrs;
  }
  if (r->worked == 0) r->worked = 1;
  u64 room = r->top - top;   // what the evaluators may take again
  for (u64 i = 0; i < chunk_n; i++) room += (u32)chunks[i];
  r->low = RT->heap.cap - r->top + room < RT->heap.cap / 16;
  // reclaimed: the words in use (live after the last collection, plus
  // those handed out since) that are no longer live
  u64 used = r->used_live + (heap_given() - r->used_given);
  if (room < (heap_given() - r->used_given) / SPARSE_SHARE) {
    if (r->sparse < SPARSE_MAX) r->sparse *= SPARSE_GROWTH;
  } else {
    r->sparse = 1;
  }
  double walk = now() - t0;
  r->cost = reclaim_cost_factor(r->cost, walk, t0 - r->ran_from);
  r->stats.runs++;
  r->stats.freed += used > live ? used - live : 0;
  r->used_live    = live;
  r->used_given   = heap_given();
  r->stats.live   = r->base + live;
  if (r->stats.live > r->stats.peak_live) r->stats.peak_live = r->stats.live;
  r->stats.secs  += walk;
  r->next         = heap_given() + gap_after(r, r->base + live);
  r->ran_from     = now();
}

// Runs a collection: 1 if it ran, 0 if it could not, -1 if another
// thread's was under way (this one parked through it).
static int collect(Reclaim *r, u32 tid) {
  // not armed (a collapse, a device run): nothing may be collected, and a
  // stop would wait for threads that never park (the collapse's consumer)
  if (!r->armed) return 0;
  // a host primitive in flight: no collection can run, so the others are
  // not stopped (each stop costs them a rebuild)
  if (!reclaim_unblocked(r) && !atomic_load(&r->stop)) return 0;
  int idle = 0;
  if (!atomic_compare_exchange_strong(&r->stop, &idle, 1)) {
    reclaim_park(tid);
    return -1;
  }
  r->collector = tid + 1;
  atomic_store(&r->abandoned, 0);
  for (u32 i = 0; i < r->threads; i++) {
    u32 spins = 0;
    while (i != tid && !atomic_load(&r->away[i].on)) wait_a_while(&spins);
  }
  int ok = r->armed && reclaim_unblocked(r);
  if (ok) {
    run(r, tid);
  }
  r->collector = 0;
  atomic_store(&r->stop, 0);
  return ok;
}

// A thread that leaves is away as it was first (reclaim_init): the
// program's thread counts as running, a pool thread as asleep.
void reclaim_leave(u32 tid) {
  Reclaim *r = me();
  if (!r->roots || tid >= r->threads) return;
  r->roots[tid].head = NULL;
  atomic_store(&r->away[tid].on, tid > 0);
  if (r->work[tid].in_phase) {   // the collector drops what it ran
    r->work[tid].in_phase = 0;
    atomic_store(&r->abandoned, 1);
    atomic_fetch_sub(&r->joined, 1);
  }
  if (r->collector != tid + 1) return;
  r->collector = 0;
  atomic_store(&r->abandoned, 1);
  atomic_store(&r->phase, atomic_load(&r->phase) & ~3ull);
  atomic_store(&r->stop, 0);
}

int reclaim_oom(u32 tid) {
  Reclaim *r = me();
  if (tid >= r->threads) return 0;
  if (atomic_load(&r->stop)) {
    reclaim_park(tid);
    return 2;
  }
  // the gap alone: a run stopped for it before a host primitive began has
  // room, and retries (the gap starting over below)
  int due = heap_given() >= r->next;
  int c   = collect(r, tid);
  if (c < 0) return 2;
  if (c == 0) {
    // not now: the gap starts over, and a full heap is full
    if (r->armed) r->next = heap_given() + gap_after(r, r->stats.live);
    return due ? 2 : 0;
  }
  return due ? 2 : !r->low;
}
