// rt.h: a runtime's context. All of a runtime's state lives in its Rt:
// the heap and book here, and each layer's part behind a pointer, defined
// in that layer (its *_rt.h), so that a layer sees only its own part and
// those below. Any number of runtimes live in one process, one after
// another or at once on different threads.

#ifndef HVM4G_RT_H
#define HVM4G_RT_H

#include "heap/heap.h"

typedef struct Rt {
  Heap           heap;   // heap/heap.h: the words and the book
  struct LangRt *lang;   // lang/lang_rt.h: names, parser, printer
  struct CpuRt  *cpu;    // cpu/cpu_rt.h: evaluators, pool, reclamation, normal form
  struct DevRt  *dev;    // dev/dev_rt.h: the device's host side
  struct ColRt  *col;    // collapse/collapse_rt.h: -C
  struct RunRt  *run;    // run/run_rt.h: scheduler, primitives, journal
} Rt;

// The runtime this thread works for. Each library call sets it for its
// length on the caller's thread; a thread a runtime starts (the -T pool,
// the simulated device's lanes, the device's context) sets it for its life.
// Hot loops read it once into a local (or work through their Wnf).
extern _Thread_local Rt *RT;

#endif
