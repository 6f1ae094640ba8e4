// dev_rt.h: the dev/ layer's part of a runtime's context (RT->dev,
// heap/rt.h): every piece of this layer's state that outlives a call.
//
// A zeroed part is a valid one: a test's context is never opened, and
// each backend makes its own part (defined in its file, whose types the
// others need not see) at its first run. What is one per process (the
// device, its context and the buffers kept on it) is not here: gpu.c,
// cuda.cu and metal.c say what, and why.

#ifndef HVM4G_DEV_RT_H
#define HVM4G_DEV_RT_H

#include "heap/rt.h"
#include "dev/dev.h"

// gpu.c: the backend chosen and the run in progress.
typedef struct {
  const char *why_not;  // why the last choice found no device (gpu_why_not)
  int         in_run;   // a device run is in progress (a nested one is
                        // refused)
} DevChoice;

// pass.c: the trace (--trace FILE), written a row at a time.
typedef struct {
  u64    run;      // the normal form its rows belong to (gpu_trace_run)
  double t0;       // when the first normal form began, once `timed`
  int    timed;
  int    started;  // the header is written: later rows append
  int    err;      // errno of the first failed write (0: none); no rows after
} DevTrace;

typedef struct DevRt DevRt;
struct DevRt {
  GpuConf         conf;    // the device's settings (the options' gpu part)
  GpuStats        stats;   // what the device did, for -s
  DevChoice       choice;
  DevTrace        trace;
  u64            *ent;     // pass.c: the first frontier (gpu_open_args)
  u64             ent_cap;
  struct SimRt   *sim;     // sim.c's part, made at its first run
  struct CuRt    *cuda;    // cuda.cu's (gpu_cuda_part)
  struct MtRt    *metal;   // metal.c's
  char            notice[256];   // a run the CPU took back, and why (the
                                 // runtime's notice: the library never prints)
};

// RT's part from the runtime's open to its close: dev_rt_open runs once
// the heap exists (0, or -1: out of memory); dev_rt_close waits for the
// context this runtime started making, and frees what the part holds
// (each backend's part: the simulator's buffers, the host pages pinned
// for CUDA's copy out).
int  dev_rt_open(void);
void dev_rt_close(void);

#endif
