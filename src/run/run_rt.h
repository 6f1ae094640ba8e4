// run_rt.h: the run/ layer's part of a runtime's context (RT->run,
// heap/rt.h): every piece of this layer's state that outlives a call.

#ifndef HVM4G_RUN_RT_H
#define HVM4G_RUN_RT_H

#include "heap/rt.h"
#include "run/sched.h"

struct RunRt {
  SchedConf conf;   // the scheduler's settings (the options' sched part)
};

// RT's part from the runtime's open to its close: run_rt_open runs once
// the heap exists (0, or -1: out of memory); run_rt_close ends its handles
// and frees what the part holds.
int  run_rt_open(void);
void run_rt_close(void);

#endif
