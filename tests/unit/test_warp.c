// test_warp.c: the simulator's warp model (src/dev/warp.c), on cases whose
// counts are known by hand: lanes that report steps and accesses of their
// own, then the WNF core's lanes (lane.h) over a backend wired to the
// model as sim.c wires it, on 32 entries of one shape or of two.
// Prints "N passed, N failed"; non-zero exit on failure.

#include <stdlib.h>
#include <string.h>
#include "dev/warp.h"
#include "core/term.h"
#include "core/core.h"

// The model of the running test: lane.h's counter atomics do not know
// their lane, and ask it which one runs (warp_running), as sim.c does.
static WarpModel *MODEL;

// A backend of the core over a heap array, reporting to the model.
static Term t_ld(Wnf *w, u32 loc);
static void t_st(Wnf *w, u32 loc, Term t);
static Term t_xchg(Wnf *w, u32 loc, Term t);
static Term t_cas(Wnf *w, u32 loc, Term o, Term n);
static void t_step(Wnf *w, u32 branch);
static void t_counter(void);

#define HEAP_LD(w, loc)        t_ld((w), (loc))
#define HEAP_ST(w, loc, t)     t_st((w), (loc), (t))
#define HEAP_XCHG(w, loc, t)   t_xchg((w), (loc), (t))
#define HEAP_CAS(w, loc, o, n) t_cas((w), (loc), (o), (n))
#define HEAP_REFILL(w, n)      0   // the test's arenas are large enough
#define WNF_WARP_STEP(w, b)    t_step((w), (b))
#define GPU_ADD64(p, v)        (t_counter(), *(p) += (v))
#define GPU_OR32(p, v)         (t_counter(), t_or32((p), (v)))
#define GPU_CAS32(p, o, n)     (t_counter(), t_cas32((p), (o), (n)))

static inline u32 t_or32(u32 *p, u32 v) {
  u32 o = *p;
  *p |= v;
  return o;
}

static inline u32 t_cas32(u32 *p, u32 o, u32 n) {
  u32 was = *p;
  if (was == o) *p = n;
  return was;
}

#include "core/lane.h"
#include "check.h"

typedef struct {
  Lane      lane;   // first: the core's Wnf is the lane's
  WarpLane *warp;
} TLane;

static Term t_ld(Wnf *w, u32 loc) {
  warp_access(((TLane *)w)->warp, loc, WARP_LOAD);
  return w->heap[loc];
}

static void t_st(Wnf *w, u32 loc, Term t) {
  warp_access(((TLane *)w)->warp, loc, WARP_STORE);
  w->heap[loc] = t;
}

static Term t_xchg(Wnf *w, u32 loc, Term t) {
  warp_access(((TLane *)w)->warp, loc, WARP_ATOMIC);
  Term o = w->heap[loc];
  w->heap[loc] = t;
  return o;
}

static Term t_cas(Wnf *w, u32 loc, Term o, Term n) {
  warp_access(((TLane *)w)->warp, loc, WARP_ATOMIC);
  Term was = w->heap[loc];
  if (was == o) w->heap[loc] = n;
  return was;
}

static void t_step(Wnf *w, u32 branch) {
  warp_step(((TLane *)w)->warp, branch);
}

static void t_counter(void) {
  warp_access(warp_running(MODEL), 0, WARP_SHARED);
}

// Lanes of our own
// ================

// What each lane of a scripted run does: `steps` steps, step s of lane l
// running branch branch(l, s) and loading word word(l, s); the order in
// which the lanes ran, as lane * 100 + step.
typedef struct {
  u32  shape;      // SH_*
  u32  lanes;
  u32  wait;       // warp_new's
  u32  order[1024];
  u32  ran;
} Script;

#define SH_CONTIGUOUS 0   // 3 steps; lane l loads word l: 2 lines a step
#define SH_SCATTERED  1   // 3 steps; lane l loads word 16 * l: 32 lines
#define SH_DIVERGENT  2   // 1 step; even lanes run branch 1, odd ones 2
#define SH_UNEVEN     3   // lane l runs 1 + l % 2 steps
#define SH_PHASED     4   // 40 steps of one loop of 4 branches, lane l
                          // starting at its point l % 4

static u32 script_steps(const Script *s, u32 l) {
  switch (s->shape) {
    case SH_DIVERGENT: return 1;
    case SH_UNEVEN:    return 1 + l % 2;
    case SH_PHASED:    return 40;
    default:           return 3;
  }
}

static void script_lane(void *arg, u32 l) {
  Script   *s = arg;
  WarpLane *w = warp_lane(MODEL, l);
  for (u32 i = 0; i < script_steps(s, l); i++) {
    warp_step(w, s->shape == SH_DIVERGENT ? 1 + l % 2 : s->shape == SH_PHASED ? 1 + (l + i) % 4 : 7);
    if (s->ran < 1024) s->order[s->ran++] = l * 100 + i;
    warp_access(w, s->shape == SH_SCATTERED ? 16 * l : l, WARP_LOAD);
  }
}

static WarpCounts script_run(u32 shape, u32 lanes, u32 wait, Script *s) {
  memset(s, 0, sizeof *s);
  s->shape = shape;
  s->lanes = lanes;
  s->wait  = wait;
  MODEL    = warp_new(lanes, wait);
  CHECK(MODEL != NULL);
  CHECK(warp_run(MODEL, lanes, script_lane, s) == 0);
  WarpCounts c = *warp_counts(MODEL);
  warp_free(MODEL);
  MODEL = NULL;
  return c;
}

static void test_script(void) {
  Script    *s = malloc(sizeof *s);
  WarpCounts c = script_run(SH_CONTIGUOUS, 32, 0, s);
  CHECK(c.steps == 3 && c.lanes == 96);   // 32 active each step
  CHECK(c.loads == 96 && c.stores == 0 && c.atomics == 0);
  CHECK(c.lines == 6);                    // words 0..31: lines 0 and 1
  // Lock step: every lane's step i before any lane's step i + 1.
  int lock = s->ran == 96;
  for (u32 i = 0; lock && i < 96; i++) lock = s->order[i] == (i % 32) * 100 + i / 32;
  CHECK(lock);

  c = script_run(SH_SCATTERED, 32, 0, s);
  CHECK(c.steps == 3 && c.lanes == 96 && c.lines == 96);   // 32 lines a step

  c = script_run(SH_DIVERGENT, 32, 0, s);
  CHECK(c.steps == 2 && c.lanes == 32);   // two branches: 16 active each
  CHECK(c.lines == 4);                    // lines 0, 1 in each branch

  c = script_run(SH_UNEVEN, 32, 0, s);
  CHECK(c.steps == 2 && c.lanes == 48);   // 32 active, then the 16 odd

  c = script_run(SH_CONTIGUOUS, 64, 0, s);   // two warps: a warp step each
  CHECK(c.steps == 6 && c.lanes == 192);
  CHECK(c.lines == 12);                   // lanes 32..63: lines 2 and 3

  // One loop, lanes at four points of it: every round runs all four
  // branches, 8 lanes each. Waiting for the warp's branch, the lanes fall
  // in step within a loop's length and then run 32 at a time; a wait of
  // one round is too short for the last quarter to catch up.
  c = script_run(SH_PHASED, 32, 0, s);
  CHECK(c.steps == 4 * 40 && c.lanes == 32 * 40 && c.waits == 0);
  c = script_run(SH_PHASED, 32, 8, s);
  CHECK(c.lanes == 32 * 40);              // every step still run once
  CHECK(c.steps < 40 + 8 && c.waits > 0);
  WarpCounts one = script_run(SH_PHASED, 32, 1, s);
  CHECK(one.steps > c.steps && one.lanes == 32 * 40);
  free(s);
}

// The core's lanes
// ================

#define CORE_LANES 32u
#define CORE_HEAP  (1u << 16)
#define CORE_BASE  64u                   // the terms' first word
#define CORE_ARENA (CORE_HEAP / 2)       // the lanes' arenas from here
#define CORE_CAP   64u                   // output entries per lane

typedef struct {
  Term     heap[CORE_HEAP];
  u32      seen[CORE_HEAP / 32 + 1];
  Term     stacks[CORE_LANES * 64];
  u32      arena[2 * CORE_LANES];
  u64      outs[CORE_LANES * CORE_CAP];
  u32      out_n[CORE_LANES];
  u32      book[1];
  PassArgs a;
  PassCtl  ctl;
  TLane    lane[CORE_LANES];
  u64      ent[CORE_LANES];
} Core;

static void core_lane(void *arg, u32 l) {
  Core *k = arg;
  lane_entry(&k->lane[l].lane, &k->a, k->seen, &k->ctl, k->ent[l], 0);
  lane_end(&k->lane[l].lane, k->arena, l, k->out_n, &k->ctl);
}

// Lane l's entry is the slot at CORE_BASE + l * stride: (λx.x 5) there,
// or the number 5 alone where `num_every` divides l + 1 (0: nowhere).
static WarpCounts core_run(Core *k, u32 stride, u32 num_every) {
  memset(k, 0, sizeof *k);
  for (u32 l = 0; l < CORE_LANES; l++) {
    u32 b = CORE_BASE + l * stride;
    if (num_every && (l + 1) % num_every == 0) {
      k->heap[b] = TERM(NUM, 0, 5);
    } else {
      k->heap[b + 0] = TERM(APP, 0, b + 1);
      k->heap[b + 1] = TERM(LAM, 0, b + 3);
      k->heap[b + 2] = TERM(NUM, 0, 5);
      k->heap[b + 3] = TERM(VAR, 0, b + 3);
    }
    k->ent[l]          = ENT(0, b);
    k->arena[2 * l]     = CORE_ARENA + l * 1024;
    k->arena[2 * l + 1] = CORE_ARENA + (l + 1) * 1024;
  }
  k->a.heap         = k->heap;
  k->a.book         = k->book;
  k->a.book_len     = k->book;
  k->a.dup_mode     = DUP_ATOMIC;
  k->a.region_shift = 31;
  k->a.budget       = 1000;
  k->a.stack_cap    = 64;
  k->a.cap          = CORE_CAP;
  MODEL = warp_new(CORE_LANES, 0);
  CHECK(MODEL != NULL);
  for (u32 l = 0; l < CORE_LANES; l++) {
    lane_begin(&k->lane[l].lane, &k->a, l, k->stacks, k->arena, k->outs);
    k->lane[l].warp = warp_lane(MODEL, l);
  }
  CHECK(warp_run(MODEL, CORE_LANES, core_lane, k) == 0);
  WarpCounts c = *warp_counts(MODEL);
  warp_free(MODEL);
  MODEL = NULL;
  int all5 = 1;
  for (u32 l = 0; l < CORE_LANES; l++) all5 &= k->heap[CORE_BASE + l * stride] == TERM(NUM, 0, 5);
  CHECK(all5);
  CHECK(k->ctl.stop == 0);
  return c;
}

// A lane on (λx.x 5) runs 8 steps: take the entry (1 load), enter the APP
// (1 load), enter the LAM, APP-LAM (2 loads, a store), enter the VAR (1
// load), enter the 5, put the 5 in the entry's slot (a store), end (two
// counter atomics: the interactions and the entries done).
static void test_core_same(void) {
  Core      *k = malloc(sizeof *k);
  WarpCounts c = core_run(k, 4, 0);
  CHECK(c.steps == 8 && c.lanes == 8 * CORE_LANES);   // 32 active each step
  CHECK(c.loads == 5 * CORE_LANES && c.stores == 2 * CORE_LANES);
  CHECK(c.atomics == 2 * CORE_LANES);
  // Four words a lane, contiguous: 128 words, 8 lines, in each of the 5
  // steps that touch the heap.
  CHECK(c.lines == 5 * 8);
  WarpCounts far = core_run(k, 16, 0);   // a line a lane: 32 lines a step
  CHECK(far.steps == 8 && far.lines == 5 * 32);
  free(k);
}

// Every other lane's entry is the 5 itself: take, enter the 5, put
// (nothing to store), end. Rounds: take (1 warp step), then APP | 5, LAM
// | put, APP-LAM | end (2 each), then the APP lanes' last 4 steps alone.
static void test_core_divergent(void) {
  Core      *k = malloc(sizeof *k);
  WarpCounts c = core_run(k, 4, 2);
  CHECK(c.steps == 1 + 2 + 2 + 2 + 4);
  CHECK(c.lanes == 16 * 8 + 16 * 4);
  CHECK(c.lanes < c.steps * CORE_LANES);   // under 32 active a step
  free(k);
}

int main(void) {
  test_script();
  test_core_same();
  test_core_divergent();
  return check_done();
}
