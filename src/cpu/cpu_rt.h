// cpu_rt.h: the cpu/ layer's part of a runtime's context (RT->cpu,
// heap/rt.h): every piece of this layer's state that outlives a call, a
// struct per module, each defined in its module's header.

#ifndef HVM4G_CPU_RT_H
#define HVM4G_CPU_RT_H

#include "heap/rt.h"
#include "cpu/eval.h"
#include "cpu/pool.h"
#include "cpu/reclaim.h"
#include "cpu/snf.h"
#include "cpu/step.h"

struct CpuRt {
  EvalConf conf;      // the evaluator's settings (the options' eval part)
  int      opened;    // cpu_rt_open ran (its locks are made)
  Eval     eval;      // eval.c: the workers, host services, errors
  Pool     pool;      // pool.c: the -T threads and their deques
  Reclaim  reclaim;   // reclaim.c: collections
  Snf      snf;       // snf.c: the seen set, jobs, slot stacks
  Step     step;      // step.c: -D
};

typedef struct CpuRt CpuRt;

// RT's part from the runtime's open to its close: cpu_rt_open runs once
// the heap exists (0, or -1: out of memory) and sets the part's locks and
// defaults; cpu_rt_close ends its threads (cpu_rt_stop) and frees what the
// part holds, leaving it as the runtime's calloc did but for conf (a
// second close does nothing; a new cpu_rt_open may follow).
int  cpu_rt_open(void);
void cpu_rt_close(void);
// Ends the part's threads (the -T pool's, each joined) and nothing else:
// the close does it first, and a layer above whose work those threads may
// run (collapse_help, handed to the pool) can have them ended before it
// frees that work's memory. A second call does nothing.
void cpu_rt_stop(void);

#endif
