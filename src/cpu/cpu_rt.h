// cpu_rt.h: the cpu/ layer's part of a runtime's context (RT->cpu,
// heap/rt.h): every piece of this layer's state that outlives a call.

#ifndef HVM4G_CPU_RT_H
#define HVM4G_CPU_RT_H

#include "heap/rt.h"
#include "cpu/eval.h"

struct CpuRt {
  EvalConf conf;   // the evaluator's settings (the options' eval part)
};

// RT's part from the runtime's open to its close: cpu_rt_open runs once
// the heap exists (0, or -1: out of memory); cpu_rt_close ends its threads
// and frees what the part holds.
int  cpu_rt_open(void);
void cpu_rt_close(void);

#endif
