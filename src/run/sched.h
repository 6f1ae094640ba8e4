// sched.h: the scheduler, the one owner of every CPU/device decision: when
// the device's context is made, which side normalizes @main and each
// %gnf, when the device takes a run over from the CPU pool, starts it
// over, or hands it back (run/sched.c; docs/gpu.md, "CPU first").

#ifndef HVM4G_SCHED_H
#define HVM4G_SCHED_H

#include <stdio.h>
#include "core/term.h"
#include "dev/dev.h"

typedef struct {
  int requested;     // --gpu: @main's normal form on the device
  u32 cpu_first;     // --cpu-first=N: pool tasks before the device takes
                     // over a run that started on the CPU (0: never start
                     // there)
  int cpu_first_set; // given on the command line
  u32 warm_after;    // --warm-after=MS: CPU work before the context is made
  u64 take_max;      // --take-max=SIZE: the device takes over only while
                     // the host heap holds at most this many words
  u32 restart;       // --restart=0|1: a run past --take-max starts over on
                     // the device (1) or stays on the CPU (0)
} SchedConf;

void sched_conf_default(SchedConf *c);   // the defaults (--help's)

// The scheduler's part of a runtime (RT->run->sched): the hybrid's state
// and what -s reports of it.
typedef struct {
  double      warm_at;       // when the context was started, after sched_start (-1: never)
  u64         taken;         // runs the device took over from the CPU
  u64         left;          // the slots the pool left them (their roots)
  int         too_big;       // a take-over was refused: the heap passed --take-max
  u64         restarts;      // runs the device started over from the program
  u64         dropped;       // the pool's interactions those dropped
  u64         dropped_w;     // and the heap words they had allocated
  const char *nodev;         // why no device is usable, once known
  int         warm_due;      // the context is deferred until the CPU has run
  double      warm_t0;       // when it was deferred
  double      turn_t0;       // when the pool's turn began
  int         restart_armed; // the caller holds a copy of the heap
  int         restart_due;   // the pool stopped for a start over
  char        notice[256];   // the device asked for is not usable (sched_notice)
} SchedState;

// Installs the hooks the lower layers call up through (the host
// primitives of the CPU evaluator). Once, before any evaluation.
void sched_init(void);

// What the runtime did otherwise than asked and goes on with: the device
// asked for (HVM4G_DEVICE) is not usable and the CPU runs instead, or a
// device run could not go on and the CPU took it back (dev/pass.c), or NULL.
// The library prints nothing: its caller shows it (the hvm4g program as
// "hvm4g: --gpu: ...").
const char *sched_notice(void);

// Threads for --gpu without -T: every core when the run may use CUDA, so
// the pool runs what ends before the context pays (-C excluded: its order
// is one thread's); 0: leave -T's default.
u32  sched_pool_threads(const SchedConf *s, const GpuConf *g, int collapse);

// The heap exists, the program is not read yet: with --gpu the context is
// made meanwhile (or deferred, see sched.c).
void sched_start(void);
// The program is read: one that calls %gnf gets its context made too.
void sched_loaded(void);

// A device asked for by name that cannot run ends the run with a fatal
// message "hvm4g: the CUDA device: <why>" (or the Metal one), which the
// library answers with HVM4G_ERR_DEVICE.
#define SCHED_NO_CUDA  "the CUDA device"
#define SCHED_NO_METAL "the Metal device"

// Strong normal form of RT->heap.at[root] in place: on the CPU, or with --gpu on
// the device and the CPU pool in turns.
void sched_normalize(u32 root);
// -C: the collapse of RT->heap.at[root], at most `limit` lines (-1: all); with
// --gpu the device goes first within a bound.
void sched_collapse(u32 root, long long limit);
// %gnf's strong normal form of RT->heap.at[slot], on the device when it may run.
void sched_gnf(u32 slot);
// A host primitive's strong normal form of RT->heap.at[slot] on the CPU (%nf,
// a %gnf the device left), collecting as the normal form around it does.
void sched_nf(u32 slot);

// Whether a pool's turn that made `made` tasks in `ran` seconds is wide
// enough for the device to take over: --cpu-first tasks, or a share of
// them once the turn has run long (each task long: the device pays).
int  sched_wide_enough(u64 made, double ran);

void sched_print_stats(FILE *out);   // -s: which side ran what, and why
// The hvm4g program's (the library never exits): the output is written;
// ends the process at once with status rc if a device context exists or
// is being made (its teardown is the kernel's); else returns.
void sched_exit(int rc);

#endif
