// dev.h: the host side of the device normal form (host code only).
//
// gpu.c chooses the backend and keeps the statistics; pass.c runs the pass
// loop; each backend (sim.c, cuda.cu, metal.c) implements GpuBackend.
//
// The device is one per process: a run on CUDA or Metal holds a
// process-wide lock (gpu.c) from the backend's choice to the run's end, so
// a second runtime's device run waits for the first to finish, and so
// does the making of the context ahead (gpu_context_start). The
// simulator's runs, on the host heap of their own runtime, do not wait.

#ifndef HVM4G_DEV_H
#define HVM4G_DEV_H

#include <stdio.h>
#include "core/term.h"
#include "core/core.h"
#include "core/kern.h"
#include "core/tune.h"
#include "dev/warp.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DEV_SIM   0
#define DEV_CUDA  1
#define DEV_METAL 2
#define DEV_AUTO  3

// Tuning and choices (command line).
typedef struct {
  u32  device;       // DEV_*
  u32  dup_mode;     // DUP_OWNER / DUP_ATOMIC
  u32  take;         // --take=64|32: DUP take by 64-bit exchange, or by a
                     // 32-bit exchange on the high half (take32.h)
  u32  region_shift; // --region-shift=N
  int  shift_set;    // given on the command line (else the backend may
                     // lower it so that lanes * region fits the heap)
  u32  lanes;        // --lanes=N (0: backend default)
  u32  block;        // lanes per block (sim: one thread runs a block)
  u32  budget;       // --budget=N interactions per entry
  u32  narrow_share; // --narrow-share=F: frontiers under lanes/F get NARROW_BUDGET
  u32  stack;        // --stack=N words of WNF stack per lane
  u32  arena;        // --arena=N words taken per refill
  int  arena_set;    // given (else the backend may lower it for many lanes)
  u32  walk;         // extra output slots per lane (spine walking)
  u32  threads;      // --sim-threads=N (sim: CPU threads)
  u32  max_passes;   // --max-passes=N (0: unlimited)
  u32  spark_gap;    // --gpu-spark-gap=K: interactions between a lane's
                     // offers of strict operands (sparks; 0: none)
  u64  pin_ahead;    // --pin-ahead=SIZE: words of host heap above the
                     // run's top faulted in and pinned while the passes
                     // run, for the copy out (CUDA; 0: none)
  u32  mark_levels;  // --mark-levels=0|1 (default 1): narrow mark
                     // frontiers marked level by level in one block
                     // (compact.h; 0: one pass per level)
  u32  handoff;      // --handoff=K: narrow passes in a row before the CPU
                     // takes over (0: never; see pass.c)
  u32  narrow_rate;  // --narrow-rate=M: a pass under M million
                     // interactions a second counts toward the handoff's
                     // time bound (pass.c); set: given, else the backend's
  int  narrow_rate_set;
  u32  dup_wait;     // --dup-wait=N: polls of a held DUP slot before a
                     // lane defers (wnf.h, HEAP_WAIT_POLLS) in a wide
                     // pass; set: given, else the backend's
  int  dup_wait_set;
  u64  dev_heap;     // --dev-heap=SIZE words of device heap (0: auto)
  int  collapse;     // the run is a collapse's (-C): see PassArgs.shallow_inc
  u64  grow_limit;   // --gpu-grow=SIZE: words a run under -C may
                     // allocate, at least (gpu_snf_bounded)
  u64  grow;         // words a run may allocate before it stops (0: no
                     // limit; set by gpu_snf_bounded)
  int  warp_model;   // --warp-model: the simulator steps its lanes in
                     // lock step, warps of 32, and counts (warp.h)
  u32  warp_wait;    // --warp-wait=N: rounds a lane of the model may sit
                     // out waiting for its warp's branch (warp.c)
  const char *trace; // --trace FILE
} GpuConf;

// The settings of the defaults (--help's), and RT's own: the C++ and
// Objective-C backends reach the context through these.
void      gpu_conf_default(GpuConf *c);
GpuConf  *gpu_conf(void);

// Statistics over every device run of a runtime.
typedef struct {
  u64    runs;       // gpu_snf_at calls that used the device
  u64    passes;
  u64    itrs;
  u64    defers;
  u64    pushes;
  u64    again;
  u64    local;      // owner mode: deferrals the allocating lane took over
  u64    entries;    // entries processed, all passes
  u64    widest;     // largest frontier
  double dev_s;      // time in passes
  double ctx_s;      // creating the context and buffers (overlaps parsing)
  double wait_s;     // of that, what the first run waited for (the
                     // context made ahead: gpu_context_start)
  double buf_s;      // of that, allocating and clearing the buffers
  double in_s;       // copying the heap in
  u64    in_top;     // words in use when the runs began (all runs)
  u64    in_words;   // of those, words copied in: the reached ones where
                     // the walk paid (reach.h), else all
  double compact_s;  // finding and packing the live words
  double roots_s;    // of that, finding the changed words (the diff)
  double mark_s;     // of that, the mark passes
  double rank_s;     // of that, ranking the live words (count, scan, rank)
  u64    marks;      // mark passes
  double out_s;      // copying them out
  u64    pinned;     // of those, bytes copied into pages pinned ahead
  u64    behind;     // and bytes pinned behind the packing (the tail)
  u64    alloc;      // words the device allocated, all runs
  u64    live;       // of those, live at the end: the host heap's growth
  u64    changed;    // words below the host's top the device changed
  u64    reclaims;   // reclaims in place while a run went on (pass.c)
  u64    reclaimed;  // words they gave back
  double reclaim_s;  // their time (marking included)
  u64    reclaim_marks; // their mark passes
  u64    heap_live;  // words in use after the last reclaim (the message
                     // of a heap that does not hold them)
  u64    bounded;    // passes that ran part of their frontier (pass.c)
  u32    stop;       // last stop reason (0: never stopped)
  u32    stop_loc;
  u32    stop_err;
  u32    stop_pri;
  u64    stop_pass;
  u64    stops;      // runs that the CPU had to finish
  u32    lanes;      // lanes used by the last run
  u32    shift;      // region shift of the last run
  WarpCounts warp;   // --warp-model's counts, all runs (sim.c)
  const char *backend;
} GpuStats;

GpuStats *gpu_stats(void);   // RT's

// A device pass slower than this (million interactions a second) does
// less than a quarter of one CPU core's work in its time.
#define NARROW_RATE_DEVICE 16u

// Polls of a held DUP slot before a CUDA lane defers in a wide pass
// (--dup-wait; docs/gpu.md, "Waiting for a held DUP slot"): 2048, about
// half a millisecond, since numbers are cloned at once; value chosen by
// measurement.
#define DUP_WAIT_DEVICE 2048u

#define GROW_NONE (-2)

// What a reclaim in place found (GpuBackend.squeeze): the words the run
// allocated that are live, the room it allocates in (from the host's top
// to the device heap's end) and the words given back.
typedef struct {
  u64 live;
  u64 room;
  u64 freed;
} GpuReclaim;

// A backend. The frontier lives in the backend's memory; the host loop
// only sees counts and counters. After the passes the host loop packs the
// live result (compact.h): roots, mark passes, then close.
typedef struct {
  const char *name;
  // 1 if usable on this machine (prints nothing).
  int  (*avail)(void);
  // Optional (NULL): creates the context and the buffers ahead of the first
  // run; runs on a background thread (gpu_context_start); avail/open wait
  // for it.
  void (*warm)(void);
  // Prepares a run rooted at the heap slots roots[0..n) (one, or the CPU
  // pool's unfinished slots when the device takes over): buffers, heap
  // copied in, frontier = their entries. Returns 0, or -1 with a message
  // in `err`.
  int  (*open)(const u32 *roots, u32 n, char *err, unsigned errlen);
  // Runs one pass over the current frontier's first `run` entries (of n)
  // into the next: the pass's pushes, then the entries [run, n) as they
  // were (pass.c, "A frontier bounded by memory"); fills ctl, returns the
  // size of the next frontier, or -1 (out of buffer memory: `err` says
  // why).
  long long (*pass)(u32 n, u32 run, PassCtl *ctl, char *err, unsigned errlen);
  // Makes the frontier the words below the host's top that the run
  // changed; returns how many, or -1.
  long long (*roots)(char *err, unsigned errlen);
  // One mark pass over n words, each lane scanning up to `budget`;
  // returns the size of the next frontier, or -1; *cut: the lanes it left
  // with words to scan.
  long long (*mark)(u32 n, u32 budget, u32 *cut, char *err, unsigned errlen);
  // Ranks and packs the live words, copies them to the host heap at its
  // top and the changed words to their places; RT->heap.top = top + live.
  // -1 (message in `err`) when that failed: the host heap is then a valid
  // term graph (the one the run started from, or the run's own).
  int  (*close)(char *err, unsigned errlen);
  // Drops the run's state without packing (after a failed pass or mark):
  // the host heap is left a valid term graph, as for close's failure.
  void (*abandon)(void);
  // Optional (NULL): after a run whose live words a reclaim could not fit
  // (pass.c), makes the next run's heap larger; 0 if it will be, -1 if it
  // cannot grow (the CPU finishes), GROW_NONE if the device heap is the
  // host's whole heap already (no side has room: the run ends).
  int  (*grow)(void);
  // Lanes the last open chose.
  u32  (*lanes)(void);
  // Million interactions a second under which a pass counts toward the
  // narrow phase's time bound (pass.c): a device's, or 0 for the
  // simulator, whose passes are CPU threads and say nothing of whether a
  // device pays (--narrow-rate overrides).
  u32  narrow_rate;
  // Optional (NULL): after avail() returned 0, why, in a few words.
  const char *(*why)(void);
  // Optional (NULL: a full heap ends the run): reclaiming between passes
  // (pass.c). reclaim_roots keeps the step frontier's n entries aside and
  // makes the mark frontier the changed words below the host's top and
  // the entries' slots; returns its size, or -1. After the mark passes,
  // squeeze packs the live words down to the host's top in the device
  // heap, relocates the changed words, the n entries (the frontier again)
  // and the stuck DUP claims, empties the lanes' arenas, and fills `r`;
  // 0, or -1 (message in `err`) with nothing written: the heap is the
  // run's, a valid term graph, and the run ends there.
  long long (*reclaim_roots)(u32 n, char *err, unsigned errlen);
  int  (*squeeze)(u32 n, GpuReclaim *r, char *err, unsigned errlen);
  // Optional (NULL): frees RT's part of the backend, made at its first
  // run (dev_rt_close); nothing when it made none.
  void (*release)(void);
} GpuBackend;

extern const GpuBackend GPU_SIM;
// sim.c: the simulator's packing for a backend that copies its whole heap
// back (its roots, mark, close and abandon then serve): call before the
// run; 0, or -1 with a message.
int sim_pack_open(char *err, unsigned errlen);
// sim.c: a reclaim in place for such a backend, on the host heap, which
// holds the device heap's [0, top) (copied back, RT->heap.top raised to its
// top). sim_reclaim_frontier: reclaim_roots with the frontier's n entries
// given (copied); then GPU_SIM.mark's passes. sim_squeeze_host: squeeze
// on the host heap, with `seen` the claims bitmap (whole-heap word
// indices; the words from the run's starting top to its top hold the
// device's, and are relocated), `cap` the device heap's words; the n
// entries relocated into `front`, and *low the lowest heap word written
// (the words [*low, RT->heap.top) go back to the device). 0, or -1 (message
// in `err`) with nothing written.
long long sim_reclaim_frontier(const u64 *front, u32 n, char *err,
                               unsigned errlen);
int sim_squeeze_host(u32 n, u32 *seen, u64 cap, u32 region_shift, u64 *front,
                     u64 *low, GpuReclaim *r, char *err, unsigned errlen);
#ifdef HVM4G_CUDA
extern const GpuBackend GPU_CUDA;
#endif
#ifdef HVM4G_METAL
extern const GpuBackend GPU_METAL;
#endif

// pass.c: the host pass loop over a backend, then the packing of the live
// result. Returns the stop reason (0: the device finished the normal form).
u32 gpu_run(const GpuBackend *b, const u32 *roots, u32 n);

// A run's frontier bound (pass.c, "A frontier bounded by memory"): the
// most entries a pass runs (0: all), and the live words when it was set.
typedef struct {
  u32 run;
  u64 live;
} GpuBound;

// After a reclaim that found `live` words in `room`, with `lanes` lanes
// and a frontier of n entries: 1 if the run goes on, 0 if it stops; *b
// becomes the bound of the passes after it.
int gpu_reclaim_next(u64 live, u64 room, u32 lanes, u32 n, GpuBound *b);

// Budget of a mark pass over n words with `lanes` lanes, after a pass over
// prev_n words with prev_budget that left `cut` lanes with words to scan
// (0, 0, 0 for the first).
u32 gpu_mark_budget(u32 n, u32 lanes, u32 prev_n, u32 prev_budget, u32 cut);

double gpu_now(void);  // seconds, monotonic

// Shared helpers for backends (pass.c), callable from C++ host code
// (cuda.cu) without heap.h's C11 atomics.
u32  gpu_book_cnt(void);             // book ids in use
u32  gpu_out_cap(u32 n, u32 lanes);  // output slots per lane for n entries
u32  gpu_mark_cap(u32 n, u32 lanes, u32 budget);  // the same, mark passes
// Lanes when --lanes is not given: `wave` lanes fill the device once,
// `free` bytes of its memory are free (0: unknown), stacks of `stack`
// words a lane (pass.c says how).
u32  gpu_default_lanes(u32 wave, u64 free, u32 stack);
// Budget and segment size of a pass over n entries with `lanes` lanes.
// Returns the pass's polls of a held DUP slot before a lane defers
// (wnf.h, HEAP_WAIT_POLLS): none in a narrow pass, else --dup-wait if given,
// else `wait`, the backend's. (Not a PassArgs field: the step kernel
// copies those into every lane's frame.)
u32 gpu_pass_shape(PassArgs *a, u32 n, u32 lanes, u32 wait);
// What every backend's open computes alike (gpu_open_args): the lanes'
// arguments from the settings, the owner regions, where the run's
// allocations start and the first frontier. The backend supplies what is
// its own (the heap and book its lanes see, its lanes and stacks, the room
// their arenas share) and makes its device calls with what this holds.
typedef struct {
  PassArgs   a;      // the lanes' arguments (gpu_pass_shape sets a
                     // pass's cap and budget)
  u64        align;  // owner mode: a region's words, each lane's arenas
                     // whole regions; 0: atomic mode
  u64        dtop;   // where the run allocates from: the host's top,
                     // a region's start in owner mode
  u32        arena;  // words a refill takes (atomic mode)
  const u64 *ent;    // the roots' entries, the first frontier (valid
                     // until the next open)
} GpuOpen;
// For a run rooted at roots[0..n), whose lanes see `heap`, `book` and
// `book_len`: `lanes` lanes of `stack` words each unless --stack is given.
// room > 0: the words the lanes' arenas share, which the region and the
// arena shrink to fit unless given (pass.c says how); 0: both stay as
// given. Records the region size (stats.shift). 0, or -1 with a message
// (out of host memory).
int  gpu_open_args(GpuOpen *o, const u32 *roots, u32 n, Term *heap,
                   const u32 *book, const u32 *book_len, u32 lanes, u32 stack,
                   u64 room, char *err, unsigned errlen);
// A backend's part of RT (RT->dev->sim, cuda, metal), made zeroed at its
// first run: NULL with a message when out of memory.
void *gpu_part_new(size_t bytes, char *err, unsigned errlen);
// A device heap of cap words could not be allocated: the next size to try
// (half, a multiple of 32), or 0 with a message when that is under min.
u64  gpu_cap_halve(u64 cap, u64 min, char *err, unsigned errlen);
// The copy out's pieces (cuda.cu's cu_close): `chunks` rank chunks of
// `chunk_words` bitmap words (the last may end early, at `words`) cut in
// n parts, part p from chunk p * chunks / n, whose live words start at
// at[p] (at[n]: their total); parts are joined until each holds at least
// min_live live words (the last takes what is left). Each piece: its
// bitmap words [w0, w1) and live words [r0, r1); they tile [0, words) and
// [0, at[n]) in order. Returns how many (at most n).
typedef struct {
  u64 w0, w1;
  u32 r0, r1;
} GpuPiece;
u32  gpu_pieces(const u32 *at, u32 n, u64 chunks, u32 chunk_words, u64 words,
                u64 min_live, GpuPiece *out);
// The first device heap's words when --dev-heap is not given: those of
// HVM4G_DEV_HEAP_START (tests only: a small heap that still grows), else 0
// (the host's).
u64  gpu_heap_start(void);
// -DLANE_BALANCE's line on stderr: the lanes' interactions (sum) against
// 32 times each warp's busiest lane's (top), over the run; none if top is 0.
void gpu_balance_print(u64 sum, u64 top);
// RT's part of the CUDA backend (RT->dev->cuda; cuda.cu defines it and
// makes it at its first run): the C++ file reaches it through this.
struct CuRt;
struct CuRt **gpu_cuda_part(void);
Term *gpu_heap(void);                // RT->heap.at
u64  gpu_heap_words(void);           // RT->heap.cap
u32 *gpu_book(void);                 // RT->heap.book
u32 *gpu_book_len(void);             // RT->heap.book_len
u64  gpu_top(void);                  // RT->heap.top
void gpu_top_raise(u64 top);         // RT->heap.top = max(RT->heap.top, top)

#ifdef __cplusplus
}
#endif

#endif
