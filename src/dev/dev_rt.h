// dev_rt.h: the dev/ layer's part of a runtime's context (RT->dev,
// heap/rt.h): every piece of this layer's state that outlives a call.

#ifndef HVM4G_DEV_RT_H
#define HVM4G_DEV_RT_H

#include "heap/rt.h"
#include "dev/dev.h"

struct DevRt {
  GpuConf  conf;    // the device's settings (the options' gpu part)
  GpuStats stats;   // what the device did, for -s
};

// RT's part from the runtime's open to its close: dev_rt_open runs once
// the heap exists (0, or -1: out of memory); dev_rt_close ends its threads
// and frees what the part holds.
int  dev_rt_open(void);
void dev_rt_close(void);

#endif
