// gpu.h: the device normal form, as the layers above it see it (host
// code). The device never decides when it runs: the scheduler
// (run/sched.c) does, through these calls.

#ifndef HVM4G_GPU_H
#define HVM4G_GPU_H

#include <stdio.h>
#include "core/term.h"

// What was compiled in, and whether CUDA is likely to be usable here (the
// backend asked for, or a GPU device node present): a cheap test, no
// context made.
int  gpu_cuda_compiled(void);
int  gpu_metal_compiled(void);
int  gpu_cuda_likely(void);
// Why the device asked for (CUDA, or auto) is surely not usable here,
// found without making a context (built without CUDA, no NVIDIA driver);
// NULL when it may be.
const char *gpu_absent(void);
// Whether a device can run here (waits for a context being made; a device
// asked for by name that cannot run ends the process with the reason).
int  gpu_usable(void);
// After a run returned STOP_NODEV, or gpu_usable 0: why no device was usable.
const char *gpu_why_not(void);
// The CUDA architectures compiled in ("sm_80 sm_90 compute_120"), or NULL.
const char *gpu_cuda_archs(void);

// The CUDA context and buffers, made ahead on a thread of their own so that
// they overlap parsing and CPU work; `ready` (may be NULL) is called on that
// thread once they are made. 1 if a thread was started. The first run
// waits for it; without it the first run makes them itself.
int  gpu_context_start(void (*ready)(void));
int  gpu_context_making(void);   // started and not finished yet
// A context exists or is being made (or a device run happened): the
// process should end without the driver's teardown (sched_exit).
int  gpu_context_live(void);
// A driver (CUDA, Metal) was asked for a device: its context, if any, is
// released by the kernel at the process's exit (sched_exit).
int  gpu_driver_touched(void);

// Strong normal form of RT->heap.at[loc] on the device, in place. It runs
// what it is given: a program the CPU must order (an unscoped binder) is
// the scheduler's to keep off it. Returns 0 when the device finished it,
// else why it stopped early (a primitive, an error, a full heap, ...): the
// heap is then a valid term graph holding the work done, and the caller
// finishes on the CPU. STOP_NODEV: no usable device (--device=auto),
// nothing done; a device asked for by name that cannot run here ends the
// process with the reason.
u32  gpu_snf_at(u32 loc);
// The same for several slots at once (the slots a CPU pool left).
u32  gpu_snf_roots(const u32 *roots, u32 n);
// The same, for a collapse (-C): the normal form may be infinite, so the
// run stops once it has allocated --gpu-grow words or four times the heap
// in use, whichever is more; the collapser goes on from what it did.
u32  gpu_snf_bounded(u32 loc);

// --trace: a new normal form begins (its rows get the next run number),
// and one CPU phase of it (`threads` threads, `itrs` interactions, from
// t0 to t1 in gpu_now seconds) as a row of side `cpu`. Nothing without
// --trace.
void gpu_trace_run(void);
void gpu_trace_cpu(u32 threads, u64 itrs, double t0, double t1);
// The errno of the trace's first failed write (0: none); tracing stopped there.
int  gpu_trace_errno(void);

void gpu_print_stats(FILE *out);   // -s after device runs (none: nothing)
// At the end: 0; -1 after printing why the device flags were not met
// (--trace FILE given, but no device run happened to write it); -2 after
// printing why the trace could not be written.
int  gpu_finish(void);
u64  gpu_itrs(void);               // interactions done on the device

#endif
