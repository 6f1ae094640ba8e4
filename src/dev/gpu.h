// gpu.h: the device normal form, as the CPU runtime sees it (host code).

#ifndef HVM4G_GPU_H
#define HVM4G_GPU_H

#include <stdio.h>
#include "core/term.h"

// Consumes one command-line argument that belongs to the device
// (-G/--gpu, --device=sim|cuda|metal, --dup=owner|atomic, --trace FILE,
// ...). Returns how many argv entries it used (0: not a device flag).
int  gpu_flag(int argc, char **argv, int i);
int  gpu_requested(void);   // -G/--gpu given: normalize @main on the device
// Creates the device's context and buffers on a background thread, so that
// it overlaps parsing and CPU work (called once the heap exists, when the
// program asks for the device). Without it the first run does it.
void gpu_prepare(void);
// Strong normal form of HEAP[loc] on the device, in place. Returns 0 when
// the device finished it, else why it stopped early (a primitive, an error,
// a full heap, ...): the heap is then a valid term graph holding the work
// done, and the caller finishes on the CPU. Safe to call from the CPU
// evaluator for %gnf (the CPU waits meanwhile).
u32  gpu_snf_at(u32 loc);
// The same for several slots at once (the run's first frontier).
u32  gpu_snf_roots(const u32 *roots, u32 n);
// CPU first (--cpu-first=N): while the device warms up, the -T pool starts
// the normal form; it hands the rest to the device once the device is
// ready and the pool has made N tasks (a normal form that wide pays the
// copies). gpu_cpu_first: whether this run starts on the CPU.
// gpu_take_over(): whether the device should take over now (the pool's
// yield: snf_made() gives the tasks).
int  gpu_cpu_first(void);
int  gpu_take_over(void);
// After the pool stopped (snf_at_until): the slots it left unvisited
// (snf_left), normalized on the device; what is left to the CPU is its
// stop (gpu_snf_at's), and, when *dups, the stuck DUPs the pool met (a
// later snf_at of the root).
u32  gpu_snf_from_cpu(int *dups);
// Starting over (--restart, gpu.c): a run the pool grew past --take-max
// is not taken over but started again on the device from the program, the
// pool's work dropped. gpu_restart_arm(1) before the pool starts: 1 if
// this run may (the caller then holds a copy of the heap, heap_snap);
// gpu_restart_arm(0) once it may not. gpu_restart_due, after the pool
// stopped: 1 if the device starts over (the pool left slots to do); the
// caller then puts the heap
// back (dropping `itrs` interactions and `words` words of the pool's) and
// calls gpu_snf_restart(root), which counts them and runs the device.
int  gpu_restart_arm(int on);
int  gpu_restart_due(void);
u32  gpu_snf_restart(u32 root, u64 itrs, u64 words);
// Threads for --gpu without -T: the machine's cores when the run may use
// CUDA, so the pool runs what ends before the context pays (-C excluded:
// its order is one thread's); 0: leave -T's default.
u32  gpu_pool_threads(int collapse);
// Whether a run that stopped with `stop` ended a narrow phase (--handoff)
// the CPU may hand back once it is wide again (--cpu-first > 0, -T > 1).
int  gpu_may_return(u32 stop);
// The same, for a collapse (-C): the normal form may be infinite, so the
// run stops once it has allocated --gpu-grow words (default 2^24) or four
// times the heap in use, whichever is more; the collapser goes on from
// what the device did.
u32  gpu_snf_bounded(u32 loc);
void gpu_print_stats(FILE *out);   // -s after a device run
// At the end: 0, or -1 after printing why the device flags were not met
// (--trace FILE given, but no device run happened to write it).
int  gpu_finish(void);
// The output is written: ends the process at once with status rc if a
// device context exists or is being made (its teardown is the kernel's);
// else returns.
void gpu_done(int rc);
u64  gpu_itrs(void);               // interactions done on the device

#endif
