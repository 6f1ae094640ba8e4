// run_rt.h: the run/ layer's part of a runtime's context (RT->run,
// heap/rt.h): every piece of this layer's state that outlives a call, a
// sub-struct per module, defined in that module's header.

#ifndef HVM4G_RUN_RT_H
#define HVM4G_RUN_RT_H

#include "heap/rt.h"
#include "run/ffi.h"
#include "run/sched.h"
#include "run/journal.h"
#include "run/prim.h"

struct RunRt {
  SchedConf  conf;      // the scheduler's settings (the options' sched part)
  SchedState sched;     // sched.h: the hybrid's state, what -s says of it
  Journal    journal;   // journal.h: the effects of a run that may start over
  PrimRt     prim;      // prim.h: handles, %argv, %rand
  FfiRt      ffi;       // ffi.h: the libraries of primitives
};

// RT's part from the runtime's open to its close (sched.c): run_rt_open
// runs once the heap exists (0, or -1: out of memory); run_rt_close ends
// the program's handles (prim_close) and frees what the part holds.
int  run_rt_open(void);
void run_rt_close(void);

#endif
