// sim.c: the simulated device. The pass kernel (lane.h) run by CPU threads
// in blocks of lanes, on the host heap itself, with real C11 atomics for
// try_take. It runs everywhere, so CI exercises the device path with it.
//
// One pass: thread t runs blocks t, t+T, t+2T, ...; inside a block the
// lanes take turns, one entry each, so lanes of one block interleave too.
// The lane segments are then concatenated in lane order (deterministic).
//
// The lanes allocate from the host heap itself; at the end the live words
// are packed down to the run's starting top (compact.h) like any backend's,
// so the host heap grows by the live result alone and CI runs the packing.
//
// Its state is the runtime's (RT->dev->sim, struct SimRt below), so
// runtimes simulate at once, each on its own heap.
//
// --warp-model: a pass's lanes run instead as coroutines on the calling
// thread, in lock step by warps of 32 (warp.c), and the heap primitives
// and the core's step marks (WNF_WARP_STEP) report to the model.

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "core/tune.h"
#include "heap/heap.h"
#include "dev/dev.h"
#include "dev/reach.h"
#include "dev/warp.h"
#include "heap/rt.h"
#include "dev/dev_rt.h"

// The run's settings that its lanes read (SimLane), set by sim_open and
// sim_pass.
typedef struct {
  int  t32;           // --take=32
  int  poison;        // the unreached words hold POISON (HVM4G_SIM_POISON)
  u64  poison_reads;  // loads of one, summed over the lanes at a pass's end
  u32  arena;         // words a refill takes
  u32  wait;          // polls of a held DUP slot (HEAP_WAIT_POLLS)
  u64  align;         // owner mode: region words (arenas whole regions)
  u64  cap;           // the device heap's end: allocations stay below it
} SimLaneRun;

// Heap primitives of core.h on the shared host heap, as functions of the
// lane whose Wnf they are given (SimLane, defined after lane.h, which
// calls them). --take=32 runs Apple's scheme instead: every word as two
// 32-bit halves, DUP slots taken by an exchange on the high half
// (take32.h), so the many-lane races here check it against the CPU.
#define T32                 u32
#define T32_LD(p)           __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define T32_ST(p, v)        __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define T32_XCHG(p, v)      __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)
#define T32_CAS(p, o, n)    sim_cas32((p), (o), (n))
#define T32_FENCE()         __atomic_thread_fence(__ATOMIC_ACQ_REL)

// Inlined as macros would be: they are most of a lane's heap traffic.
#define SIM_HOT static inline __attribute__((always_inline))

SIM_HOT Term sim_ld(Wnf *w, u32 loc);
SIM_HOT void sim_st(Wnf *w, u32 loc, Term t);
SIM_HOT Term sim_xchg(Wnf *w, u32 loc, Term t);
SIM_HOT Term sim_cas_at(Wnf *w, u32 loc, Term o, Term n);
static inline int sim_refill(Wnf *w, u32 n);
SIM_HOT u32  sim_wait(Wnf *w);
SIM_HOT void sim_warp_step(Wnf *w, u32 branch);
static inline void sim_counter_atomic(void);

#define HEAP_LD(w, loc)        sim_ld((w), (loc))
#define HEAP_ST(w, loc, t)     sim_st((w), (loc), (t))
#define HEAP_XCHG(w, loc, t)   sim_xchg((w), (loc), (t))
#define HEAP_CAS(w, loc, o, n) sim_cas_at((w), (loc), (o), (n))
#define HEAP_REFILL(w, n)      sim_refill((w), (n))
#define HEAP_WAIT_POLLS(w)     sim_wait(w)
// Under the warp model a poll is a step: the holder, another lane of
// this thread, may give the slot back meanwhile.
#define HEAP_PAUSE(w, loc)     sim_warp_step((w), WARP_LANE_POLL)
#define WNF_WARP_STEP(w, b)    sim_warp_step((w), (b))

// The counters' atomics (lane.h), counted by the warp model.
#define GPU_ADD64(p, v)    (sim_counter_atomic(), __atomic_fetch_add((p), (v), __ATOMIC_RELAXED))
#define GPU_ADD32(p, v)    __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define GPU_OR32(p, v)     (sim_counter_atomic(), __atomic_fetch_or((p), (v), __ATOMIC_ACQ_REL))
#define GPU_POPC32(x)      ((u32)__builtin_popcount(x))
#define GPU_CAS32(p, o, n) (sim_counter_atomic(), sim_cas32((p), (o), (n)))

static inline u32 sim_cas32(u32 *p, u32 o, u32 n) {
  __atomic_compare_exchange_n(p, &o, n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return o;
}

#include "core/take32.h"
#include "core/lane.h"
#include "core/compact.h"

// A simulated lane: its Lane first, and the Lane's Wnf first in it (the
// core reaches the lane from the Wnf the same way), so that the heap
// primitives find the lane, and its run, from the Wnf. What they test at
// every access is copied into the lane, one word: nothing (the common
// case), or the modes below.
#define MODE_T32    1u   // --take=32
#define MODE_POISON 2u   // count the loads of POISON
#define MODE_WARP   4u   // report to the warp model (--warp-model)

typedef struct {
  Lane        lane;
  u32         mode;          // MODE_*, the run's
  u32         wait;          // the pass's polls of a held DUP slot
  u64         poison_reads;  // this lane's loads of POISON
  SimLaneRun *run;           // the rest (refills)
  WarpLane   *warp;          // MODE_WARP: its record in the model
} SimLane;

// HVM4G_SIM_POISON=1: a check that the copy in's walk (reach.c) is
// complete. A run overwrites each word below the top that the walk did not
// reach with POISON (tag 126: no term has it) and counts every load of one;
// at the end it puts the words back, and a read, or a poisoned word
// changed, ends the process with status 70 (docs/gpu.md).
#define POISON TERM(0x7E, 0xBADBAD, 0xDEADBEEF)

SIM_HOT Term sim_seen(Wnf *w, u32 mode, Term t) {
  if ((mode & MODE_POISON) && t == POISON) ((SimLane *)w)->poison_reads++;
  return t;
}

// A heap access, for the warp model.
SIM_HOT void sim_warp_access(Wnf *w, u32 mode, u32 loc, u32 kind) {
  if (mode & MODE_WARP) warp_access(((SimLane *)w)->warp, loc, kind);
}

SIM_HOT void sim_warp_step(Wnf *w, u32 branch) {
  if (((SimLane *)w)->mode & MODE_WARP) warp_step(((SimLane *)w)->warp, branch);
}

SIM_HOT Term sim_ld(Wnf *w, u32 loc) {
  u32 m = ((SimLane *)w)->mode;
  if (!m) return __atomic_load_n(&w->heap[loc], __ATOMIC_ACQUIRE);
  sim_warp_access(w, m, loc, WARP_LOAD);
  return sim_seen(w, m, m & MODE_T32 ? t32_ld(w->heap, loc)
                                     : __atomic_load_n(&w->heap[loc], __ATOMIC_ACQUIRE));
}

SIM_HOT void sim_st(Wnf *w, u32 loc, Term t) {
  sim_warp_access(w, ((SimLane *)w)->mode, loc, WARP_STORE);
  if (((SimLane *)w)->mode & MODE_T32) {
    t32_st(w->heap, loc, t);
  } else {
    __atomic_store_n(&w->heap[loc], t, __ATOMIC_RELEASE);
  }
}

SIM_HOT Term sim_xchg(Wnf *w, u32 loc, Term t) {
  u32 m = ((SimLane *)w)->mode;
  if (!m) return __atomic_exchange_n(&w->heap[loc], t, __ATOMIC_ACQ_REL);
  sim_warp_access(w, m, loc, WARP_ATOMIC);
  return sim_seen(w, m, m & MODE_T32 ? t32_xchg(w->heap, loc, t)
                                     : __atomic_exchange_n(&w->heap[loc], t, __ATOMIC_ACQ_REL));
}

SIM_HOT Term sim_cas_at(Wnf *w, u32 loc, Term o, Term n) {
  u32 m = ((SimLane *)w)->mode;
  sim_warp_access(w, m, loc, WARP_ATOMIC);
  if (m & MODE_T32) return sim_seen(w, m, t32_cas(w->heap, loc, o, n));
  __atomic_compare_exchange_n(&w->heap[loc], &o, n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return sim_seen(w, m, o);
}

SIM_HOT u32 sim_wait(Wnf *w) {
  return ((SimLane *)w)->wait;
}

// A fresh arena from the global top: one atomic per refill, none per node.
// Owner mode: arenas are whole regions (`align` words, aligned), so each
// region a pass allocates in has exactly one allocating lane.
static inline int sim_refill(Wnf *w, u32 n) {
  const SimLaneRun *r   = ((SimLane *)w)->run;
  u64               top = atomic_load(&RT->heap.top);
  for (;;) {
    sim_warp_access(w, ((SimLane *)w)->mode, 0, WARP_SHARED);
    u64 at  = top;
    u64 get = n > r->arena ? n : r->arena;
    if (r->align) {
      at  = (top + r->align - 1) & ~(r->align - 1);
      get = ((u64)n + r->align - 1) & ~(r->align - 1);
    }
    if (at + get > r->cap) {
      at  = top;
      get = n;                      // last words: exactly what is needed
      if (at + get > r->cap) return 0;
    }
    if (atomic_compare_exchange_weak(&RT->heap.top, &top, at + get)) {
      w->next = (u32)at;
      w->end  = (u32)(at + get);
      return 1;
    }
  }
}

// The phases of the packing that are a loop over items (sim_par).
typedef struct {
  u32   phase;
  u64   lo;      // items [lo, hi)
  u64   hi;
  u32  *sums;    // PH_COUNT: per rank chunk; PH_RANK: its base
  Term *dst;     // PH_COPY: the live words; PH_ROOT: the roots' values
} SimPhase;

// RT's simulated device (RT->dev->sim): one run at a time, made at the
// first (sim_part) and freed at the runtime's close (sim_release).
typedef struct SimRt SimRt;
struct SimRt {
  SimLaneRun  lane;  // what the lanes read (sim_of)
  PassArgs    a;
  CompactArgs c;
  SimPhase    ph;
  u32      lanes;
  u32      block;
  u32      threads;
  u32      stride;   // threads running this pass
  u32      kind;     // what a pass runs: PASS_SNF or PASS_MARK
  u64     *in;       // frontier
  u64      in_cap;
  u64     *keep;     // the frontier, kept aside while a reclaim marks
  u64      keep_cap;
  u64     *nx;       // the next level (mark levels; swapped with `in`)
  u64      nx_cap;
  u64     *outs;     // lanes * cap
  u64      outs_cap;
  u32     *out_n;    // per lane
  u32     *arena;    // per lane: next, end
  Term    *stacks;   // lanes * stack_cap
  u32     *seen;     // one bit per heap word (stuck DUP slots claimed)
  u64      seen_bytes;
  Term    *shadow;   // [0, top0) when the run began
  u64      top0;
  u32     *live;     // compaction: one bit per word of [top0, dtop)
  u32     *rank;     // compaction: per bitmap word
  u32     *roots;    // compaction: changed words below top0
  u32      nroots;
  u32      bad;
  u32      cut;      // packing: lanes of the last mark pass cut short
  u64      live_words; // bitmap words of live and rank
  u32      n;        // entries in `in`
  PassCtl *ctl;
  Reach    reach;    // the words the run may read (sparse: the walk ended)
  int      sparse;   // the shadow and the diff cover the reached words only
  int      whole;    // sparse, but the shadow holds all of [0, top)
  int      poisoned; // the unreached words hold POISON (lane.poison)
  u64      want;     // device heap words after a grow (0: none yet)
  WarpModel *warp;   // --warp-model: the model its passes run in
  SimLane  *warp_lanes;   // and their lanes
  u64      bal[2];   // LANE_BALANCE: interactions, and warps' 32 * busiest
};

// An atomic on a counter (lane.h's GPU_*), in the lane the model runs now:
// those calls do not know their lane. Mark passes run outside the model.
static inline void sim_counter_atomic(void) {
  WarpModel *m = RT->dev->sim->warp;
  WarpLane  *l = m ? warp_running(m) : NULL;
  if (l) warp_access(l, 0, WARP_SHARED);
}

// RT's part, made at its first run (NULL: out of memory, said in `err`).
static SimRt *sim_part(char *err, unsigned errlen) {
  if (!RT->dev->sim) RT->dev->sim = gpu_part_new(sizeof(SimRt), err, errlen);
  return RT->dev->sim;
}

#define PASS_SNF  0
#define PASS_MARK 1

static int sim_avail(void) {
  return 1;
}

static u32 sim_lanes(void) {
  SimRt *S = RT->dev->sim;
  return S->lanes;
}

static void *zmap(u64 bytes) {
  void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static void zunmap(void *p, u64 bytes) {
  if (p) munmap(p, bytes ? bytes : 1);
}

static int grow(u64 **p, u64 *cap, u64 need) {
  if (need <= *cap) return 0;
  u64 c = *cap ? *cap : 1024;
  while (c < need) c *= 2;
  u64 *q = realloc(*p, c * sizeof(u64));
  if (!q) return -1;
  *p = q; *cap = c;
  return 0;
}

static void poison_restore(void);

static void sim_free(void) {
  SimRt *S = RT->dev->sim;
  poison_restore();
  if (S->warp) {
    const WarpCounts *c = warp_counts(S->warp);
    WarpCounts       *t = &RT->dev->stats.warp;
    t->steps   += c->steps;
    t->lanes   += c->lanes;
    t->loads   += c->loads;
    t->stores  += c->stores;
    t->atomics += c->atomics;
    t->lines   += c->lines;
    t->waits   += c->waits;
    warp_free(S->warp);
    free(S->warp_lanes);
    S->warp       = NULL;
    S->warp_lanes = NULL;
  }
  reach_free(&S->reach);
  S->sparse = 0;
  S->whole  = 0;
  free(S->in);     S->in = NULL;     S->in_cap = 0;
  free(S->nx);     S->nx = NULL;     S->nx_cap = 0;
  free(S->keep);   S->keep = NULL;   S->keep_cap = 0;
  free(S->outs);   S->outs = NULL;   S->outs_cap = 0;
  free(S->out_n);  S->out_n = NULL;
  free(S->arena);  S->arena = NULL;
  zunmap(S->stacks, (u64)S->lanes * S->a.stack_cap * sizeof(Term));
  zunmap(S->seen, S->seen_bytes);
  zunmap(S->shadow, S->top0 * sizeof(Term));
  zunmap(S->roots, S->top0 * sizeof(u32));
  zunmap(S->live, S->live_words * sizeof(u32));
  zunmap(S->rank, S->live_words * sizeof(u32));
  S->stacks = NULL; S->seen = NULL; S->shadow = NULL; S->roots = NULL;
  S->live = NULL; S->rank = NULL; S->live_words = 0;
}

// What a run and a packing both need: lanes, threads, the shadow of
// [0, top) (the copy the changed words are found against, as a device's
// copy in: of the reached words alone when sparse), the lane counts and
// a frontier. 0, or -1 with a message.
static int sim_begin(u32 lanes, char *err, unsigned errlen) {
  SimRt *S = RT->dev->sim;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  S->lanes   = lanes;
  S->block   = RT->dev->conf.block ? RT->dev->conf.block : 32;
  S->threads = RT->dev->conf.threads ? RT->dev->conf.threads : (u32)(cpus < 2 ? 2 : cpus);
  S->top0    = gpu_top();
  S->out_n   = calloc(S->lanes, sizeof(u32));
  S->shadow  = zmap(S->top0 * sizeof(Term));
  if (!S->out_n || !S->shadow || grow(&S->in, &S->in_cap, 1)) {
    snprintf(err, errlen, "out of host memory for %u lanes", S->lanes);
    sim_free();
    return -1;
  }
  if (!S->sparse || S->whole) {
    memcpy(S->shadow, RT->heap.at, S->top0 * sizeof(Term));
    return 0;
  }
  u64 at = 0, lo, n;
  while (reach_run(&S->reach, &at, &lo, &n)) {
    memcpy(S->shadow + lo, RT->heap.at + lo, n * sizeof(Term));
  }
  return 0;
}

// The unreached words below the top, poisoned (shadow taken), or put
// back: a read of one was counted, a write is seen here.
static void poison_apply(void) {
  SimRt *S = RT->dev->sim;
  for (u64 i = 0; i < S->top0; i++) {
    if (!reach_has(&S->reach, i)) RT->heap.at[i] = POISON;
  }
  S->lane.poison_reads = 0;
  S->lane.poison       = 1;
  S->poisoned          = 1;
}

static void poison_restore(void) {
  SimRt *S = RT->dev->sim;
  if (!S->poisoned) return;
  u64 wrote = 0;
  for (u64 i = 0; i < S->top0; i++) {
    if (reach_has(&S->reach, i)) continue;
    wrote  += RT->heap.at[i] != POISON;
    RT->heap.at[i] = S->shadow[i];
  }
  S->lane.poison = 0;
  S->poisoned    = 0;
  if (S->lane.poison_reads || wrote) {
    fprintf(stderr, "hvm4g: sim poison: the run read %llu and wrote %llu "
            "words below the top that the copy in's walk skipped (a bug: "
            "src/dev/reach.c)\n", (unsigned long long)S->lane.poison_reads,
            (unsigned long long)wrote);
    exit(70);
  }
}

// The simulated device's heap is the host's, from its start up to
// --dev-heap words (as a device's: at least twice the words in use and
// SIM_HEAP_MIN more), else all of it. A smaller one reclaims more often,
// and grows (sim_grow) as CUDA's does. For tests, HVM4G_SIM_ROOM=SIZE
// gives the first run SIZE words above the words in use (4K at least),
// so that small programs reclaim often and grow; HVM4G_DEV_HEAP_START
// works as on CUDA.
#define SIM_HEAP_MIN (1ull << 20)
#define SIM_ROOM_MIN 4096u

static u64 sim_cap(u64 top) {
  const char *rv   = getenv("HVM4G_SIM_ROOM");
  u64         room = rv ? heap_parse_size(rv) : 0;
  u64         min  = 2 * top + SIM_HEAP_MIN;
  u64         cap  = RT->heap.cap;
  if (RT->dev->conf.dev_heap) {
    cap = RT->dev->conf.dev_heap > min ? RT->dev->conf.dev_heap : min;
  } else if (RT->dev->sim->want) {
    cap = RT->dev->sim->want;
  } else if (room) {
    cap = top + (room > SIM_ROOM_MIN ? room : SIM_ROOM_MIN);
  } else if (gpu_heap_start()) {
    cap = gpu_heap_start() > min ? gpu_heap_start() : min;
  }
  return cap < RT->heap.cap ? cap : RT->heap.cap;
}

static int sim_open(const u32 *roots, u32 nroot, char *err, unsigned errlen) {
  SimRt *S = sim_part(err, errlen);
  if (!S) return -1;
  // The copy in as a device's: the reached words when the walk pays
  // (reach.h); under HVM4G_SIM_POISON always, and the rest poisoned.
  const char *pv = getenv("HVM4G_SIM_POISON");
  int poison = pv && *pv && strcmp(pv, "0") != 0;
  u64 top    = gpu_top();
  u64 budget = poison ? top : reach_budget(top);
  double lim = poison ? 0 : reach_limit_s(top);
  S->sparse  = budget > 0 && reach_walk(&S->reach, RT->heap.at, top, roots, nroot, RT->heap.book,
                   RT->heap.book_len, gpu_book_cnt(), budget, lim) == 1;
  S->whole   = S->sparse && poison;   // the poisoned words are put back from it
  if (sim_begin(RT->dev->conf.lanes ? RT->dev->conf.lanes : 128, err, errlen) != 0) return -1;
  GpuOpen o;
  if (gpu_open_args(&o, roots, nroot, RT->heap.at, RT->heap.book, RT->heap.book_len,
                    S->lanes, 1u << 15, 0, err, errlen) != 0) {
    sim_free();
    return -1;
  }
  S->a          = o.a;
  S->lane.cap   = sim_cap(top);
  S->lane.arena = o.arena;
  S->lane.align = o.align;
  S->lane.t32   = RT->dev->conf.take == 32;
  RT->dev->stats.in_top   += top;
  RT->dev->stats.in_words += S->sparse ? S->reach.words : top;
  S->arena      = calloc(2 * (u64)S->lanes, sizeof(u32));
  S->stacks     = zmap((u64)S->lanes * S->a.stack_cap * sizeof(Term));
  S->seen_bytes = (RT->heap.cap / 32 + 1) * sizeof(u32);
  S->seen       = zmap(S->seen_bytes);
  if (RT->dev->conf.warp_model) {
    S->warp       = warp_new(S->lanes, RT->dev->conf.warp_wait);
    S->warp_lanes = malloc(S->lanes * sizeof(SimLane));
  }
  if (!S->arena || !S->stacks || !S->seen ||
      (RT->dev->conf.warp_model && (!S->warp || !S->warp_lanes))) {
    snprintf(err, errlen, "out of host memory for %u lanes", S->lanes);
    sim_free();
    return -1;
  }
  if (grow(&S->in, &S->in_cap, nroot)) {
    snprintf(err, errlen, "out of host memory for %u roots", nroot);
    sim_free();
    return -1;
  }
  memcpy(S->in, o.ent, (u64)nroot * sizeof(u64));
  S->n = nroot;
  if (S->whole) poison_apply();
  return 0;
}

// For a backend that copies its whole heap back (metal.c): the
// simulator's packing then runs over the host heap, from a snapshot of
// [0, top) taken here, before that backend's run.
int sim_pack_open(char *err, unsigned errlen) {
  if (!sim_part(err, errlen)) return -1;
  sim_free();
  return sim_begin(128, err, errlen);
}

typedef struct {
  u32 tid;
  Rt *rt;    // the runtime of the run (the thread's RT)
} SimArg;

#if LANE_BALANCE
// LANE_BALANCE (tune.h): as cuda.cu's, a warp being 32 consecutive lanes.
static void sim_balance(SimRt *S, const SimLane *L, u32 nl) {
  for (u32 w0 = 0; w0 < nl; w0 += 32) {
    u64 sum = 0, top = 0;
    for (u32 j = w0; j < nl && j < w0 + 32; j++) {
      sum += L[j].lane.w.itrs;
      top  = L[j].lane.w.itrs > top ? L[j].lane.w.itrs : top;
    }
    __atomic_fetch_add(&S->bal[0], sum, __ATOMIC_RELAXED);
    __atomic_fetch_add(&S->bal[1], 32 * top, __ATOMIC_RELAXED);
  }
}
#endif

// A lane's settings for this pass; `warp`: its record in the model (NULL:
// the lane runs outside it).
static void sim_lane_init(SimRt *S, SimLane *l, WarpLane *warp) {
  l->mode         = (S->lane.t32 ? MODE_T32 : 0) | (S->lane.poison ? MODE_POISON : 0) |
                    (warp ? MODE_WARP : 0);
  l->wait         = S->lane.wait;
  l->poison_reads = 0;
  l->run          = &S->lane;
  l->warp         = warp;
}

// Runs every block b with b % threads == tid.
static void *sim_worker(void *arg) {
  RT         = ((SimArg *)arg)->rt;
  SimRt *S   = RT->dev->sim;
  u32 tid    = ((SimArg *)arg)->tid;
  u32 lanes  = S->lanes;
  u32 blocks = (lanes + S->block - 1) / S->block;
  u32 mark   = S->kind == PASS_MARK;
  SimLane  *L = malloc(S->block * sizeof(SimLane));
  MarkLane *M = malloc(S->block * sizeof(MarkLane));
  if (!L || !M) {
    free(L);
    free(M);
    return NULL;
  }
  for (u32 j = 0; j < S->block; j++) sim_lane_init(S, &L[j], NULL);
  for (u32 b = tid; b < blocks; b += S->stride) {
    u32 l0 = b * S->block;
    u32 nl = lanes - l0 < S->block ? lanes - l0 : S->block;
    for (u32 j = 0; j < nl; j++) {
      if (mark) mark_begin(&M[j], &S->c, l0 + j, S->outs);
      else      lane_begin(&L[j].lane, &S->a, l0 + j, S->stacks, S->arena, S->outs);
    }
    // Round r: lane l takes entry l + r * lanes.
    for (u64 r = 0;; r++) {
      int any = 0;
      for (u32 j = 0; j < nl; j++) {
        u64 i = (u64)(l0 + j) + r * lanes;
        if (i >= S->n) continue;
        any = 1;
        u32 rem = (u32)((S->n - 1 - i) / lanes);
        if (mark) mark_entry(&M[j], &S->c, S->in[i], rem);
        else      lane_entry(&L[j].lane, &S->a, S->seen, S->ctl, S->in[i], rem);
      }
      if (!any) break;
    }
#if LANE_BALANCE
    if (!mark) sim_balance(S, L, nl);
#endif
    for (u32 j = 0; j < nl; j++) {
      if (mark) mark_end(&M[j], &S->c, S->out_n, l0 + j);
      else      lane_end(&L[j].lane, S->arena, l0 + j, S->out_n, S->ctl);
    }
  }
  u64 reads = 0;
  for (u32 j = 0; j < S->block; j++) reads += L[j].poison_reads;
  if (reads) __atomic_fetch_add(&S->lane.poison_reads, reads, __ATOMIC_RELAXED);
  free(L);
  free(M);
  return NULL;
}

// The warp model
// ===============

// Lane j's share of the pass, as cuda.cu's kernel runs it: entries j,
// j + lanes, ..., then its end.
static void sim_warp_lane(void *arg, u32 j) {
  SimRt   *S = arg;
  SimLane *L = &S->warp_lanes[j];
  for (u64 i = j; i < S->n; i += S->lanes) {
    u32 rem = (u32)((S->n - 1 - i) / S->lanes);
    lane_entry(&L->lane, &S->a, S->seen, S->ctl, S->in[i], rem);
  }
  lane_end(&L->lane, S->arena, j, S->out_n, S->ctl);
}

// A pass in the model: the lanes that have an entry run in lock step;
// the others end at once, outside it (a GPU lane without an entry
// returns before its first step). 0, or -1 with a message.
static int sim_warp_pass(char *err, unsigned errlen) {
  SimRt *S    = RT->dev->sim;
  u32    busy = S->n < S->lanes ? S->n : S->lanes;
  for (u32 j = 0; j < S->lanes; j++) {
    SimLane *L = &S->warp_lanes[j];
    sim_lane_init(S, L, j < busy ? warp_lane(S->warp, j) : NULL);
    lane_begin(&L->lane, &S->a, j, S->stacks, S->arena, S->outs);
    if (j >= busy) lane_end(&L->lane, S->arena, j, S->out_n, S->ctl);
  }
  int rc = warp_run(S->warp, busy, sim_warp_lane, S);
  for (u32 j = 0; j < busy; j++) S->lane.poison_reads += S->warp_lanes[j].poison_reads;
  if (rc != 0) snprintf(err, errlen, "out of host memory for the warp model's records");
  return rc;
}

// Runs fn(tid) on `threads` CPU threads (the calling one included).
static void sim_spread(u32 threads, void *(*fn)(void *)) {
  pthread_t th[threads];
  SimArg    args[threads];
  u8        own[threads];
  for (u32 t = 1; t < threads; t++) {
    args[t].tid = t;
    args[t].rt  = RT;
    own[t] = pthread_create(&th[t], NULL, fn, &args[t]) == 0;
  }
  args[0].tid = 0;
  args[0].rt  = RT;
  fn(&args[0]);
  for (u32 t = 1; t < threads; t++) {
    if (own[t]) pthread_join(th[t], NULL);
    else        fn(&args[t]);   // no thread: run its share here
  }
}

// The kind an entry starts in (ENT_KIND), read after the pass: no lane runs.
static u32 entry_kind(u64 e) {
  return ENT_KIND(e, TAG(__atomic_load_n(&RT->heap.at[ENT_LOC(e)], __ATOMIC_RELAXED)));
}

// A step pass's pushes into in[0, ...) in the order CUDA leaves them
// (k_gather: per 32 lanes, push by push; then cu_sort_tags: stably by
// kind), so that the warp model meets a device's frontier. A counting
// sort: two reads of the segments, no buffer.
static void gather_by_kind(u32 cap) {
  SimRt *S = RT->dev->sim;
  u64 at[ENT_KINDS] = {0};
  for (u32 l = 0; l < S->lanes; l++) {
    const u64 *seg = S->outs + (u64)l * cap;
    for (u32 i = 0; i < S->out_n[l]; i++) at[entry_kind(seg[i])]++;
  }
  u64 sum = 0;
  for (u32 k = 0; k < ENT_KINDS; k++) {
    u64 c = at[k];
    at[k] = sum;
    sum  += c;
  }
  for (u32 g = 0; g < S->lanes; g += 32) {
    u32 end  = g + 32 < S->lanes ? g + 32 : S->lanes;
    int more = 1;
    for (u32 j = 0; more; j++) {
      more = 0;
      for (u32 l = g; l < end; l++) {
        if (j >= S->out_n[l]) continue;
        u64 e = S->outs[(u64)l * cap + j];
        S->in[at[entry_kind(e)]++] = e;
        more = 1;
      }
    }
  }
}

// One pass of the run's kind over the first n entries of its frontier
// `in`, with segments of `cap`; the `keep` entries after them wait, behind
// the pass's pushes.
static long long sim_lanes_pass(u32 n, u32 keep, u32 cap, char *err,
                                unsigned errlen) {
  SimRt *S = RT->dev->sim;
  S->n = n;
  if (grow(&S->outs, &S->outs_cap, (u64)S->lanes * cap)) {
    snprintf(err, errlen, "out of host memory for a frontier of %u", n);
    return -1;
  }
  u32 blocks = (S->lanes + S->block - 1) / S->block;
  S->stride   = S->threads < blocks ? S->threads : blocks;
  if (S->warp && S->kind == PASS_SNF) {
    if (sim_warp_pass(err, errlen) != 0) return -1;
  } else {
    sim_spread(S->stride, sim_worker);
  }
  // Next frontier: lane segments in lane order, then the waiting entries.
  u64 m = keep;
  for (u32 l = 0; l < S->lanes; l++) m += S->out_n[l];
  if (m > 0xFFFFFFFFull || grow(&S->in, &S->in_cap, m ? m : 1)) {
    snprintf(err, errlen, "out of host memory for a frontier of %llu",
             (unsigned long long)m);
    return -1;
  }
  memmove(S->in + (m - keep), S->in + n, (u64)keep * sizeof(u64));
  if (S->kind == PASS_SNF) {
    gather_by_kind(cap);
  } else {
    u64 at = 0;
    for (u32 l = 0; l < S->lanes; l++) {
      memcpy(S->in + at, S->outs + (u64)l * cap, S->out_n[l] * sizeof(u64));
      at += S->out_n[l];
    }
  }
  S->n = (u32)m;
  return (long long)m;
}

static long long sim_pass(u32 n, u32 run, PassCtl *ctl, char *err,
                          unsigned errlen) {
  SimRt *S = RT->dev->sim;
  S->ctl  = ctl;
  S->kind = PASS_SNF;
  S->lane.wait = gpu_pass_shape(&S->a, run, S->lanes, 0);
  long long m = sim_lanes_pass(run, n - run, S->a.cap, err, errlen);
  ctl->top = gpu_top();
  return m;
}

// Compaction
// ==========

// The phases that are a loop over items: thread t takes chunks of
// SIM_CHUNK items t, t+T, ...
#define SIM_CHUNK 4096u
#define PH_DIFF  0
#define PH_COUNT 1
#define PH_RANK  2
#define PH_COPY  3
#define PH_ROOT  4


static void *sim_phase(void *arg) {
  RT       = ((SimArg *)arg)->rt;
  SimRt *S = RT->dev->sim;
  u32 tid  = ((SimArg *)arg)->tid;
  u64 words = S->live_words;
  for (u64 c = S->ph.lo + (u64)tid * SIM_CHUNK; c < S->ph.hi;
       c += (u64)S->stride * SIM_CHUNK) {
    u64 end = c + SIM_CHUNK < S->ph.hi ? c + SIM_CHUNK : S->ph.hi;
    for (u64 i = c; i < end; i++) {
      switch (S->ph.phase) {
        case PH_DIFF:  compact_diff(&S->c, i); break;
        case PH_COUNT: S->ph.sums[i] = compact_count(&S->c, i, words); break;
        case PH_RANK:  compact_rank(&S->c, i, words, S->ph.sums[i]); break;
        case PH_COPY:  compact_copy(&S->c, i, S->ph.dst); break;
        case PH_ROOT:  compact_root(&S->c, i, S->ph.dst); break;
      }
    }
  }
  return NULL;
}

static void sim_par(u32 phase, u64 lo, u64 hi) {
  SimRt *S = RT->dev->sim;
  S->ph.phase  = phase;
  S->ph.lo     = lo;
  S->ph.hi     = hi;
  S->stride = S->threads;
  if (hi > lo) sim_spread(S->threads, sim_phase);
}

static void pack_free(void);

static long long sim_roots(char *err, unsigned errlen) {
  SimRt *S = RT->dev->sim;
  u64 dtop = gpu_top();
  pack_free();   // a reclaim whose marking failed left its buffers
  S->live_words = (dtop - S->top0) / 32 + 1;
  S->roots  = zmap(S->top0 * sizeof(u32));
  S->live   = zmap(S->live_words * sizeof(u32));
  S->rank   = zmap(S->live_words * sizeof(u32));
  S->nroots = 0;
  S->bad    = 0;
  if (!S->roots || !S->live || !S->rank) {
    snprintf(err, errlen, "out of host memory for packing the result");
    return -1;
  }
  S->c.heap      = RT->heap.at;
  S->c.shadow    = S->shadow;
  S->c.top0      = S->top0;
  S->c.dtop      = dtop;
  S->c.live      = S->live;
  S->c.rank      = S->rank;
  S->c.roots     = S->roots;
  S->c.nroots    = &S->nroots;
  S->c.roots_cap = S->top0 > 0xFFFFFFFFull ? 0xFFFFFFFFu : (u32)S->top0;
  S->c.bad       = &S->bad;
  S->c.cut       = &S->cut;
  poison_restore();
  if (S->sparse) {
    // the run changed none of the words it could not reach
    u64 at = 0, lo, n;
    while (reach_run(&S->reach, &at, &lo, &n)) {
      for (u64 i = lo > 0 ? lo : 1; i < lo + n; i++) compact_diff(&S->c, i);
    }
  } else {
    sim_par(PH_DIFF, 1, S->top0);
  }
  if (grow(&S->in, &S->in_cap, S->nroots ? S->nroots : 1)) {
    snprintf(err, errlen, "out of host memory for %u roots", S->nroots);
    return -1;
  }
  for (u32 i = 0; i < S->nroots; i++) S->in[i] = RT->heap.at[S->roots[i]];   // mark entries: terms
  RT->dev->stats.changed += S->nroots;
  return S->nroots;
}

// Mark levels of a narrow frontier (compact.h, mark_level): the one block
// is the calling thread. *cut: the frontier left (a spine's few entries
// then read as cut walks by the mark budget's rule).
static long long sim_mark_levels(u32 n, u32 *cut, char *err, unsigned errlen) {
  SimRt *S = RT->dev->sim;
  while (MARK_BLOCK(n)) {
    if (grow(&S->nx, &S->nx_cap, (u64)n * MARK_SPAN)) {
      snprintf(err, errlen, "out of host memory for a frontier of %u", n);
      return -1;
    }
    u32 cnt = 0;
    for (u32 i = 0; i < n; i++) mark_level(&S->c, S->in[i], S->nx, &cnt);
    u64 *t = S->in; S->in = S->nx; S->nx = t;
    u64  c = S->in_cap; S->in_cap = S->nx_cap; S->nx_cap = c;
    n = cnt;
  }
  S->n  = n;
  *cut = n;
  return n;
}

static long long sim_mark(u32 n, u32 budget, u32 *cut, char *err,
                          unsigned errlen) {
  SimRt *S = RT->dev->sim;
  if (RT->dev->conf.mark_levels && MARK_BLOCK(n)) return sim_mark_levels(n, cut, err, errlen);
  S->kind     = PASS_MARK;
  S->c.budget = budget;
  S->c.cap    = gpu_mark_cap(n, S->lanes, budget);
  S->cut      = 0;
  long long next = sim_lanes_pass(n, 0, S->c.cap, err, errlen);
  *cut = S->cut;
  return next;
}

// Zeroes heap words [lo, hi). With give_back, whole pages are handed back
// to the system (they read as zero again) and the ends are cleared by
// hand; without, a run that goes on allocates there next, and giving the
// pages back would only fault them in again.
static void clear_words(u64 lo, u64 hi, int give_back) {
  u64 page = (u64)sysconf(_SC_PAGESIZE) / sizeof(Term);
  u64 a    = (lo + page - 1) / page * page;
  u64 b    = hi / page * page;
  if (a >= b || !give_back) {
    memset(RT->heap.at + lo, 0, (hi - lo) * sizeof(Term));
    return;
  }
  memset(RT->heap.at + lo, 0, (a - lo) * sizeof(Term));
  if (madvise(RT->heap.at + a, (b - a) * sizeof(Term), MADV_DONTNEED) != 0) {
    memset(RT->heap.at + a, 0, (b - a) * sizeof(Term));
  }
  memset(RT->heap.at + b, 0, (hi - b) * sizeof(Term));
}

// Ranks the marked words and packs them, relocated, into a buffer: the
// live words, then the changed words' new values; the ranking's time is
// added to *rank_s. NULL (message in `err`) when memory or the packing
// failed; the heap is not written.
static Term *sim_pack(u64 *live_out, double *rank_s, char *err,
                      unsigned errlen) {
  SimRt *S = RT->dev->sim;
  double t0     = gpu_now();
  u64    words  = S->live_words;
  u64    chunks = (words + RANK_CHUNK - 1) / RANK_CHUNK;
  u32   *sums   = malloc((chunks ? chunks : 1) * sizeof(u32));
  if (!sums) {
    snprintf(err, errlen, "out of host memory for packing the result");
    return NULL;
  }
  S->ph.sums = sums;
  sim_par(PH_COUNT, 0, chunks);
  u64 live = 0;
  for (u64 c = 0; c < chunks; c++) {
    u32 k   = sums[c];
    sums[c] = (u32)live;
    live   += k;
  }
  sim_par(PH_RANK, 0, chunks);
  free(sums);
  *rank_s += gpu_now() - t0;
  Term *dst  = malloc((live + S->nroots + 1) * sizeof(Term));
  if (!dst) {
    snprintf(err, errlen, "out of host memory for %llu live words",
             (unsigned long long)live);
    return NULL;
  }
  S->ph.dst = dst;
  sim_par(PH_COPY, 0, words);
  S->ph.dst = dst + live;
  sim_par(PH_ROOT, 0, S->nroots);
  *live_out = live;
  return dst;
}

// The packed words written down at top0, the changed words' values in
// place; the words left above the new top are cleared, as fresh heap words
// are (clear_words: at the run's end, whole pages go back to the system).
static void sim_unpack(const Term *dst, u64 live, int end) {
  SimRt *S = RT->dev->sim;
  for (u32 i = 0; i < S->nroots; i++) RT->heap.at[S->roots[i]] = dst[live + i];
  memcpy(RT->heap.at + S->top0, dst, live * sizeof(Term));
  u64 top = S->top0 + live;
  clear_words(top, S->c.dtop, end);
  atomic_store(&RT->heap.top, top);
}

static int sim_bad(char *err, unsigned errlen) {
  SimRt *S = RT->dev->sim;
  if (!S->bad) return 0;
  snprintf(err, errlen, "packing the result met %u pointers to words "
           "it did not mark (a bug); the run's heap is kept", S->bad);
  return -1;
}

static int sim_close(char *err, unsigned errlen) {
#if LANE_BALANCE
  gpu_balance_print(RT->dev->sim->bal[0], RT->dev->sim->bal[1]);
#endif
  double t0   = gpu_now();
  u64    live = 0;
  Term  *dst  = sim_pack(&live, &RT->dev->stats.rank_s, err, errlen);
  if (!dst || sim_bad(err, errlen)) {
    free(dst);
    sim_free();
    return -1;
  }
  RT->dev->stats.compact_s += gpu_now() - t0;
  t0 = gpu_now();
  sim_unpack(dst, live, 1);
  RT->dev->stats.live += live;
  RT->dev->stats.out_s += gpu_now() - t0;
  free(dst);
  sim_free();
  return 0;
}

// Reclaiming in place (pass.c)
// ============================
// The simulator's, and that of a backend that copies its heap back to the
// host (sim_pack_open; metal.c): it hands its frontier and stuck DUP
// claims in and takes them back relocated, so one packing serves both.

// The packing's buffers, dropped after a reclaim (sim_roots makes them).
static void pack_free(void) {
  SimRt *S = RT->dev->sim;
  zunmap(S->roots, S->top0 * sizeof(u32));
  zunmap(S->live, S->live_words * sizeof(u32));
  zunmap(S->rank, S->live_words * sizeof(u32));
  S->roots = NULL; S->live = NULL; S->rank = NULL; S->live_words = 0;
}

long long sim_reclaim_frontier(const u64 *front, u32 n, char *err,
                               unsigned errlen) {
  SimRt *S = RT->dev->sim;
  if (grow(&S->keep, &S->keep_cap, n ? n : 1)) {
    snprintf(err, errlen, "out of host memory for a frontier of %u", n);
    return -1;
  }
  memcpy(S->keep, front, (u64)n * sizeof(u64));
  u64 changed = RT->dev->stats.changed;   // counted by the run's end alone
  long long m = sim_roots(err, errlen);
  RT->dev->stats.changed = changed;
  if (m < 0 || grow(&S->in, &S->in_cap, (u64)m + n + 1)) {
    if (m >= 0) snprintf(err, errlen, "out of host memory for %u roots", n);
    pack_free();
    return -1;
  }
  for (u32 i = 0; i < n; i++) S->in[m + i] = compact_slot(S->keep[i]);
  return m + n;
}

static long long sim_reclaim_roots(u32 n, char *err, unsigned errlen) {
  SimRt *S = RT->dev->sim;
  return sim_reclaim_frontier(S->in, n, err, errlen);
}

int sim_squeeze_host(u32 n, u32 *seen, u64 cap, u32 region_shift, u64 *front,
                     u64 *low, GpuReclaim *r, char *err, unsigned errlen) {
  SimRt *S = RT->dev->sim;
  u64    live = 0;
  double rank = 0;   // part of the reclaim's time (pass.c)
  Term  *dst  = sim_pack(&live, &rank, err, errlen);
  u64    w0   = S->top0 >> 5;   // the claims' bitmap words from top0 on
  u64    nw   = (S->c.dtop >> 5) + 1 - w0;
  u32   *old  = dst ? malloc(nw * sizeof(u32)) : NULL;
  if (dst && !old) snprintf(err, errlen, "out of host memory for packing");
  if (!old || sim_bad(err, errlen)) {
    free(dst);
    free(old);
    pack_free();
    return -1;
  }
  for (u32 i = 0; i < n; i++) {
    front[i] = compact_entry(&S->c, S->keep[i], region_shift);
  }
  // The claims above top0 move with their slots; those below stay.
  memcpy(old, seen + w0, nw * sizeof(u32));
  seen[w0] &= (1u << (S->top0 & 31u)) - 1u;
  memset(seen + w0 + 1, 0, (nw - 1) * sizeof(u32));
  for (u64 w = 0; w < S->live_words; w++) {
    compact_claims(&S->c, old, w0, seen, w);
  }
  free(old);
  *low = S->top0;
  for (u32 i = 0; i < S->nroots; i++) {
    if (S->roots[i] < *low) *low = S->roots[i];
  }
  sim_unpack(dst, live, 0);
  free(dst);
  r->live  = live;
  r->room  = cap - S->top0;
  r->freed = S->c.dtop - S->top0 - live;
  pack_free();
  return 0;
}

static int sim_squeeze(u32 n, GpuReclaim *r, char *err, unsigned errlen) {
  SimRt *S = RT->dev->sim;
  u64 low = 0;
  // The mark levels swap `in` with a buffer of their own: room again for
  // the frontier.
  if (grow(&S->in, &S->in_cap, n ? n : 1)) {
    snprintf(err, errlen, "out of host memory for packing");
    pack_free();
    return -1;
  }
  if (sim_squeeze_host(n, S->seen, S->lane.cap, S->a.region_shift, S->in, &low, r,
                       err, errlen) != 0) {
    return -1;
  }
  memset(S->arena, 0, 2 * (u64)S->lanes * sizeof(u32));   // refill from the top
  S->n = n;
  return 0;
}

static void sim_abandon(void) {
  sim_free();
}

// At the runtime's close: its buffers (a run that ended frees them, but
// not the part itself).
static void sim_release(void) {
  if (!RT->dev->sim) return;
  sim_free();
  free(RT->dev->sim);
  RT->dev->sim = NULL;
}

// After a run whose live words did not fit its heap's room (pass.c): a
// heap twice as large, within the host's, unless --dev-heap fixed it (the
// CPU then finishes); none when it was the host's whole heap already.
static int sim_grow(void) {
  SimRt *S = RT->dev->sim;
  if (S->lane.cap >= RT->heap.cap) return GROW_NONE;
  if (RT->dev->conf.dev_heap) return -1;
  S->want = 2 * S->lane.cap < RT->heap.cap ? 2 * S->lane.cap : RT->heap.cap;
  return 0;
}

const GpuBackend GPU_SIM = {
  .name        = "sim",
  .avail       = sim_avail,
  .warm        = NULL,
  .open        = sim_open,
  .pass        = sim_pass,
  .roots       = sim_roots,
  .mark        = sim_mark,
  .close       = sim_close,
  .abandon     = sim_abandon,
  .grow        = sim_grow,
  .lanes       = sim_lanes,
  .narrow_rate = 0,
  .why         = NULL,
  .reclaim_roots = sim_reclaim_roots,
  .squeeze     = sim_squeeze,
  .release     = sim_release,
};
