// dev.h: the host side of the device normal form (host code only).
//
// gpu.c parses the flags and keeps the statistics; pass.c runs the pass
// loop; each backend (sim.c, cuda.cu) implements GpuBackend.

#ifndef HVM4G_GPU_DEV_H
#define HVM4G_GPU_DEV_H

#include <stdio.h>
#include "../term.h"
#include "../core.h"
#include "kern.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DEV_SIM   0
#define DEV_CUDA  1
#define DEV_METAL 2
#define DEV_AUTO  3

// Tuning and choices (command line).
typedef struct {
  int  requested;    // -G / --gpu
  int  device;       // DEV_*
  u32  dup_mode;     // DUP_OWNER / DUP_ATOMIC
  u32  take;         // --take=64|32: DUP take by 64-bit exchange, or by a
                     // 32-bit exchange on the high half (take32.h)
  u32  region_shift; // --region-shift=N
  u32  lanes;        // --lanes=N (0: backend default)
  u32  block;        // lanes per block (sim: one thread runs a block)
  u32  budget;       // --budget=N interactions per entry
  u32  stack;        // --stack=N words of WNF stack per lane
  u32  arena;        // --arena=N words taken per refill
  u32  walk;         // extra output slots per lane (spine walking)
  u32  threads;      // --sim-threads=N (sim: CPU threads)
  u32  max_passes;   // --max-passes=N (0: unlimited)
  u64  dev_heap;     // --dev-heap=SIZE words of device heap (0: auto)
  const char *trace; // --trace FILE
} GpuConf;

extern GpuConf GPU;

// Statistics over every device run of this process.
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
  double xfer_s;     // time copying in and out
  u32    stop;       // last stop reason (0: never stopped)
  u32    stop_loc;
  u32    stop_err;
  u32    stop_pri;
  u64    stop_pass;
  u64    stops;      // runs that the CPU had to finish
  u32    lanes;      // lanes used by the last run
  const char *backend;
} GpuStats;

extern GpuStats GPU_STATS;

// A backend. The frontier lives in the backend's memory; the host loop
// only sees counts and counters.
typedef struct {
  const char *name;
  // 1 if usable on this machine (prints nothing).
  int  (*avail)(void);
  // Prepares a run rooted at entry `root`: buffers, heap copied in.
  // Returns 0, or -1 with a message in `err`.
  int  (*open)(u64 root, char *err, unsigned errlen);
  // Runs one pass over the current frontier (n entries) into the next;
  // fills ctl, returns the size of the next frontier, or -1 (out of
  // buffer memory: `err` says why).
  long long (*pass)(u32 n, PassCtl *ctl, char *err, unsigned errlen);
  // Copies the heap back, raises HEAP_TOP over the device's allocations.
  // -1 (message in `err`) when the copy failed: the host heap is then the
  // one the run started from.
  int  (*close)(char *err, unsigned errlen);
  // Lanes the last open chose.
  u32  (*lanes)(void);
} GpuBackend;

extern const GpuBackend GPU_SIM;
#ifdef HVM4G_CUDA
extern const GpuBackend GPU_CUDA;
#endif
#ifdef HVM4G_METAL
extern const GpuBackend GPU_METAL;
#endif

// pass.c: the host pass loop over a backend. Returns the stop reason
// (0: the device finished the normal form).
u32 gpu_run(const GpuBackend *b, u32 loc);

double gpu_now(void);  // seconds, monotonic

// Shared helpers for backends (pass.c), callable from C++ host code
// (cuda.cu) without heap.h's C11 atomics.
u32  gpu_book_cnt(void);             // book ids in use
u32  gpu_out_cap(u32 n, u32 lanes);  // output slots per lane for n entries
// Budget and segment size of a pass over n entries with `lanes` lanes.
void gpu_pass_shape(PassArgs *a, u32 n, u32 lanes);
Term *gpu_heap(void);                // HEAP
u64  gpu_heap_words(void);           // HEAP_WORDS
u32 *gpu_book(void);                 // BOOK
u32 *gpu_book_len(void);             // BOOK_LEN
u64  gpu_top(void);                  // HEAP_TOP
void gpu_top_raise(u64 top);         // HEAP_TOP = max(HEAP_TOP, top)

#ifdef __cplusplus
}
#endif

#endif
