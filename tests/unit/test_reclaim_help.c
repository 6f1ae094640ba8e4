// test_reclaim_help.c: a collection that the parked threads help with
// (cpu/reclaim.c's phases) finds what the collector finds alone: the same
// live words, the same chunks in the same order, the same top. A random
// graph (sharing, cycles, SUB chains, a long list, roots below the base
// and in every thread's frames, garbage runs of every length, some across
// the sweep's ranges) is collected from the same heap three ways: alone,
// through the shared path with no helper, and with three parked helpers.
// A plain marking written here checks the live words of the first.

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include "heap/heap.h"
#include "cpu/cpu.h"
#include "cpu/eval.h"
#include "cpu/reclaim.h"
#include "check.h"
#include "heap/rt.h"
#include "cpu/cpu_rt.h"

#define THREADS 4
#define PRE_BASE 200      // words below the base, rewritten as roots
#define MAX_PICK (1u << 20)
#define HELP_WAIT 60.0    // seconds: a loaded machine may run no helper for long

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static u64 RNG = 0x9E3779B97F4A7C15ull;
static u64 rnd(void) {
  RNG ^= RNG << 13;
  RNG ^= RNG >> 7;
  RNG ^= RNG << 17;
  return RNG;
}

// What the graph's terms may point at: nodes of two words, one-word slots.
static u32 NODES[MAX_PICK], SLOTS[MAX_PICK];
static u32 NODE_N, SLOT_N;

static Term some_term(void) {
  switch (rnd() % 6) {
    case 0:  return TERM(NUM, 0, (u32)rnd());
    case 1:  return SLOT_N ? TERM(VAR, 0, SLOTS[rnd() % SLOT_N]) : TERM(ERA, 0, 0);
    case 2:  return SLOT_N ? TERM(rnd() & 1 ? DP0 : DP1, 5, SLOTS[rnd() % SLOT_N]) : TERM(ERA, 0, 0);
    default: return NODE_N ? TERM(C00 + 2, 0, NODES[rnd() % NODE_N]) : TERM(NUM, 0, 1);
  }
}

static void garbage(u32 n) {
  u32 at = nodes(n);
  for (u32 i = 0; i < n; i++) RT->heap.at[at + i] = some_term();
}

// A garbage run's length: mostly short (between live words: not reused),
// some a few chunks long, a few across several sweep ranges.
static u32 garbage_len(void) {
  u64 r = rnd() % 1000;
  if (r < 700) return (u32)(rnd() % 64);
  if (r < 995) return (u32)(rnd() % 3000);
  return 70000 + (u32)(rnd() % 150000);
}

static RootFrame FRAMES[THREADS][8];
static Term      FRAME_TERMS[THREADS][8];

// Builds a graph above the base and holds some of it in every thread's
// frames; returns the base.
static u64 build(u32 words, int live_top) {
  u32 pre = nodes(PRE_BASE);
  for (u32 i = 0; i < PRE_BASE; i++) RT->heap.at[pre + i] = TERM(NUM, 0, i);
  reclaim_arm();
  u64 base = heap_used();
  NODE_N = SLOT_N = 0;
  while (heap_used() < base + words) {
    garbage(garbage_len());
    if (rnd() % 4 == 0) {
      u32 s = nodes(1);
      RT->heap.at[s] = rnd() & 1 ? AS_SUB(some_term()) : some_term();
      if (SLOT_N < MAX_PICK) SLOTS[SLOT_N++] = s;
    } else {
      Term a = some_term(), b = some_term();
      u32  n = nodes(2);
      RT->heap.at[n] = a; RT->heap.at[n + 1] = b;
      if (NODE_N < MAX_PICK) NODES[NODE_N++] = n;
    }
  }
  // a long list, contiguous: a live run across sweep ranges, and a deep
  // chain for the mark
  u32 len  = 60000;
  u32 list = nodes(2 * len);
  for (u32 i = 0; i < len; i++) {
    RT->heap.at[list + 2 * i]     = some_term();
    RT->heap.at[list + 2 * i + 1] = i + 1 < len ? TERM(C00 + 2, 0, list + 2 * i + 2) : TERM(NUM, 0, 0);
  }
  // forward pointers: cycles, and words reached from later nodes
  for (u32 i = 0; i < NODE_N / 8; i++) RT->heap.at[NODES[rnd() % NODE_N] + (rnd() & 1)] = some_term();
  for (u32 i = 0; i < PRE_BASE; i += 3) RT->heap.at[pre + i] = some_term();
  RT->heap.at[pre + 1] = TERM(C00 + 2, 0, list);
  for (u32 t = 0; t < THREADS; t++) {
    for (u32 k = 0; k < 8; k++) {
      RootFrame *f = &FRAMES[t][k];
      FRAME_TERMS[t][k] = some_term();
      f->term = k % 3 == 0 ? NULL : &FRAME_TERMS[t][k];
      f->loc  = k % 2 == 0 && SLOT_N ? SLOTS[rnd() % SLOT_N] : 0;
      reclaim_hold(&RT->cpu->reclaim, t, f);
    }
  }
  if (live_top) {
    u32 s = nodes(1);
    RT->heap.at[s] = TERM(NUM, 0, 7);
    FRAMES[0][0].loc = s;
  } else {
    garbage(5000);
  }
  return base;
}

static void drop_frames(void) {
  for (u32 t = 0; t < THREADS; t++) {
    for (u32 k = 8; k-- > 0;) reclaim_drop(&RT->cpu->reclaim, t, &FRAMES[t][k]);
  }
}

// The live words as marked plainly: the words in [base, top) reached.
static u64 *REF_LIVE;
static u64 *REF_STK;

static void ref_trace(Term t, u64 base, u64 top, u64 *n) {
  t = NO_SUB(t);
  u32 tag = TAG(t);
  if (!HAS_LOC(tag)) return;
  u32 arity = (tag == VAR || tag == DP0 || tag == DP1) ? 1 : term_arity(t);
  for (u32 j = 0; j < arity; j++) {
    u64 loc = (u64)VAL(t) + j;
    if (loc < base || loc >= top || (REF_LIVE[loc >> 6] >> (loc & 63) & 1)) continue;
    REF_LIVE[loc >> 6] |= 1ull << (loc & 63);
    REF_STK[(*n)++] = RT->heap.at[loc];
  }
}

static u64 ref_mark(u64 base, u64 top) {
  memset(REF_LIVE, 0, (RT->heap.cap / 64 + 1) * sizeof(u64));
  u64 n = 0;
  for (u64 i = 1; i < base; i++) ref_trace(RT->heap.at[i], base, top, &n);
  for (u32 t = 0; t < THREADS; t++) {
    for (RootFrame *f = reclaim_top(&RT->cpu->reclaim, t); f; f = f->up) {
      if (f->term) ref_trace(*f->term, base, top, &n);
      if (f->loc) ref_trace(TERM(VAR, 0, f->loc), base, top, &n);
    }
  }
  while (n > 0) ref_trace(REF_STK[--n], base, top, &n);
  u64 live = 0;
  for (u64 i = 0; i <= RT->heap.cap / 64; i++) live += (u64)__builtin_popcountll(REF_LIVE[i]);
  return live;
}

// What a collection left: the top, the live words, the chunks in order.
typedef struct {
  u64  top;
  u64  live;
  u64  n;
  u64 *chunks;
} Outcome;

static Outcome outcome(void) {
  Outcome o = { heap_used(), reclaim_stats().live, 0, NULL };
  o.chunks  = malloc(RT->heap.cap / 64 * sizeof(u64));
  u32 got, at;
  while ((at = heap_take(1, RT->cpu->reclaim.arena, &got)) != 0 && at < o.top) {
    o.chunks[o.n++] = (u64)at << 32 | got;
  }
  return o;
}

static int same(const Outcome *a, const Outcome *b) {
  return a->top == b->top && a->live == b->live && a->n == b->n &&
         memcmp(a->chunks, b->chunks, a->n * sizeof(u64)) == 0;
}

// Three threads parked at their safe points while the collection runs.
static _Atomic int HELPERS_STOP = 0;
static _Atomic int HELPERS_IN   = 0;

static void *helper(void *arg) {
  RT = TEST_RT;   // a thread of the test's runtime
  u32 tid = (u32)(uintptr_t)arg;
  reclaim_away(tid, 0);
  atomic_fetch_add(&HELPERS_IN, 1);
  while (!atomic_load(&HELPERS_STOP)) {
    reclaim_poll(&RT->cpu->reclaim, tid);
    sched_yield();
  }
  reclaim_away(tid, 1);
  return NULL;
}

static void collect_helped(void) {
  pthread_t th[THREADS];
  atomic_store(&HELPERS_STOP, 0);
  atomic_store(&HELPERS_IN, 0);
  for (u32 t = 1; t < THREADS; t++) pthread_create(&th[t], NULL, helper, (void *)(uintptr_t)t);
  while (atomic_load(&HELPERS_IN) < THREADS - 1) sched_yield();
  CHECK(reclaim_oom(0) != 0);
  atomic_store(&HELPERS_STOP, 1);
  for (u32 t = 1; t < THREADS; t++) pthread_join(th[t], NULL);
}

int main(void) {
  if (heap_init(1u << 23) != 0) {
    printf("heap_init failed\n");
    return 1;
  }
  cpu_rt_open();
  RT->cpu->conf.threads = THREADS;
  eval_init();
  // each thread's evaluator starts a cache line of its own (pool.h)
  for (u32 t = 0; t < THREADS; t++) CHECK((uintptr_t)eval_worker(t) % 64 == 0);
  REF_LIVE = calloc(RT->heap.cap / 64 + 1, sizeof(u64));
  REF_STK  = malloc(RT->heap.cap * sizeof(u64));
  HeapSnap empty;
  CHECK(heap_snap(&empty) == 0);
  CHECK(RT->cpu->reclaim.help == 1);

  u32 gaps[] = { 0, 4096, 0, 64, 0, 4096 };
  for (u32 round = 0; round < 6; round++) {
    heap_rewind(&empty);
    RT->cpu->conf.reclaim_gap = gaps[round];
    u64 base = build(2000000 + round * 700000, round % 2);
    u64 top  = heap_used();
    HeapSnap snap;
    CHECK(heap_snap(&snap) == 0);
    u64 ref = ref_mark(base, top);

    RT->cpu->reclaim.help = 0;
    CHECK(reclaim_oom(0) != 0);
    Outcome alone = outcome();
    CHECK(alone.live == base + ref);
    CHECK(alone.n > 10);
    // no chunk holds a live word
    int clean = 1;
    for (u64 i = 0; i < alone.n; i++) {
      u64 lo = alone.chunks[i] >> 32, n = (u32)alone.chunks[i];
      for (u64 w = lo; w < lo + n; w++) clean &= !(REF_LIVE[w >> 6] >> (w & 63) & 1);
    }
    CHECK(clean);

    RT->cpu->reclaim.help = 1;
    heap_rewind(&snap);
    CHECK(reclaim_oom(0) != 0);
    Outcome shared = outcome();
    CHECK(same(&alone, &shared));

    // the helpers may come late to a busy machine (CI): the last round
    // tries again, for up to HELP_WAIT seconds, until one takes part
    u64    before = reclaim_stats().helped;
    double until  = seconds() + (round == 5 ? HELP_WAIT : 0);
    for (u32 tries = 0; tries == 0 || seconds() < until; tries++) {
      heap_rewind(&snap);
      collect_helped();
      Outcome helped = outcome();
      CHECK(same(&alone, &helped));
      free(helped.chunks);
      if (reclaim_stats().helped > before) break;
    }

    free(alone.chunks);
    free(shared.chunks);
    heap_snap_free(&snap);
    drop_frames();
    reclaim_disarm();
  }
  heap_snap_free(&empty);
  CHECK(reclaim_stats().helped > 0);
  printf("phases helped: %llu\n", (unsigned long long)reclaim_stats().helped);
  return check_done();
}
