// warp.h: the warp model of the simulated device (--warp-model;
// docs/gpu.md, "The warp model"). Lanes run as coroutines on the calling
// thread, one step each per round, so that what a GPU warp of 32 lanes
// would issue together can be counted, the same on every run.
//
// A lane marks where each of its steps begins (warp_step, naming the
// branch it runs: WARP_*, core.h) and reports its heap accesses
// (warp_access). After each round the lanes of a warp are grouped by
// branch: each group is one warp step, its size the active lanes, and the
// distinct 128-byte lines its lanes touched in that step its cache lines.

#ifndef HVM4G_WARP_H
#define HVM4G_WARP_H

#include "core/term.h"

#define WARP_LANES      32u   // lanes of a warp (NVIDIA's)
#define WARP_LINE_WORDS 16u   // heap words of a 128-byte cache line

// What an access is (warp_access).
#define WARP_LOAD   0u
#define WARP_STORE  1u
#define WARP_ATOMIC 2u   // an exchange or CAS on a heap word
#define WARP_SHARED 3u   // an atomic on a counter outside the heap (no line)

// Sums over the modelled passes.
typedef struct {
  u64 steps;    // warp steps: (warp, round, branch) groups
  u64 lanes;    // active lanes, summed over the warp steps
  u64 loads;    // heap words loaded
  u64 stores;   // heap words stored
  u64 atomics;  // atomics, on heap words and on counters
  u64 lines;    // distinct 128-byte lines, summed over the warp steps
  u64 waits;    // rounds lanes sat out waiting for their warp (warp_new)
} WarpCounts;

typedef struct WarpModel WarpModel;
typedef struct WarpLane  WarpLane;

// A model for up to `lanes` lanes (their coroutine stacks); NULL: no
// memory. With `wait` > 0 a lane whose next branch is not its warp's most
// common one sits the round out, up to `wait` rounds in a row (warp.c).
WarpModel *warp_new(u32 lanes, u32 wait);
void       warp_free(WarpModel *m);

// Runs body(arg, lane) for lanes [0, n) in lock step; returns when every
// body has returned. The counts go into m's (warp_counts). 0, or -1 when n
// exceeds the lanes of warp_new or memory for the records ran out (the
// lanes ran all the same; the counts are short).
int warp_run(WarpModel *m, u32 n, void (*body)(void *arg, u32 lane), void *arg);

// Lane `lane`'s record (its body passes it to warp_step and warp_access).
WarpLane *warp_lane(WarpModel *m, u32 lane);

// Called by a running lane: a new step begins, running `branch`; the
// lane's previous step, if any, ends here and the lane waits for the next
// round.
void warp_step(WarpLane *l, u32 branch);

// Called by a running lane: it accesses heap word `word` (WARP_LOAD, ...;
// `word` is unused for WARP_SHARED).
void warp_access(WarpLane *l, u64 word, u32 kind);

// The lane running now (NULL outside warp_run): for accesses whose code
// does not know its lane (the counters' atomics).
WarpLane *warp_running(WarpModel *m);

const WarpCounts *warp_counts(const WarpModel *m);

#endif
