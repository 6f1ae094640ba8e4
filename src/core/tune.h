// tune.h: the build's tunables that a build may override, and its
// diagnostic switches (as Lua's luaconf.h). What it holds: the device
// pass's and the CUDA kernels' parameters and the diagnostics below. A
// module's other tunables, which no build overrides, stand at the top of
// the module that uses them, each with one line of reason (cpu/reclaim.c,
// cpu/eval.c, dev/pass.c, dev/gpu.c, dev/cuda/cuda.cu, run/sched.c).
//
// Each here is a default: a build overrides one with -DNAME=value, or any
// of them in a header of its own named by the one switch,
// -DHVM4G_USER_H='"myknobs.h"', which is included first. The values are the
// ones chosen by measurement (git history and docs/gpu.md hold the
// figures). Portable dialect: no libc, no host headers; the CUDA backend
// includes it.

#ifndef HVM4G_TUNE_H
#define HVM4G_TUNE_H

#ifdef HVM4G_USER_H
#include HVM4G_USER_H
#endif

// --- Device passes (pass.c) -------------------------------------------------

// Interaction budget of a lane's entry in a narrow pass (a frontier under
// lanes / --narrow-share): short, so the frontier widens fast, yet long
// enough that each pass widens it much.
#ifndef NARROW_BUDGET
#define NARROW_BUDGET 256u
#endif

// --- CUDA step kernel (cuda.cu) ---------------------------------------------

// Threads per block: one warp, since a block holds its multiprocessor's
// slots until its slowest lane ends.
#ifndef LANE_TPB
#define LANE_TPB 32
#endif

// Blocks a multiprocessor must hold at once (__launch_bounds__): ptxas fits
// the registers to it, 64 at 1024 threads, trading spills for warps
// (`make cuda-regs`).
#ifndef K_STEP_BLOCKS
#define K_STEP_BLOCKS (1024 / LANE_TPB)
#endif

// Nanoseconds between polls of a held DUP slot (--dup-wait).
#ifndef WAIT_NS
#define WAIT_NS 256
#endif

// --- CUDA copy out (cuda.cu, cu_close) --------------------------------------

// The copy out goes in up to PIECES pieces of at least PIECE_MIN bytes, each
// copied while the next is packed: more pieces overlap more, each costs a
// kernel launch and a copy.
#ifndef PIECES
#define PIECES 8u
#endif
#ifndef PIECE_MIN
#define PIECE_MIN (8ull << 20)
#endif

// --- Diagnostics (0 off, 1 on) ----------------------------------------------

// How evenly a warp's lanes share a pass's interactions (their sum against
// 32 times the busiest lane's), printed to stderr when the device run
// closes. CUDA and the simulator.
#ifndef LANE_BALANCE
#define LANE_BALANCE 0
#endif

// Each CUDA step pass's lanes timed with the global timer, printed to
// stderr per pass: whether a pass lasts as long as its longest lane or as
// its work over the machine's throughput.
#ifndef LANE_CLOCK
#define LANE_CLOCK 0
#endif

#endif
