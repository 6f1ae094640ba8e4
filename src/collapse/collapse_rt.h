// collapse_rt.h: the collapse/ layer's part of a runtime's context (RT->col,
// heap/rt.h): every piece of this layer's state that outlives a call.

#ifndef HVM4G_COLLAPSE_RT_H
#define HVM4G_COLLAPSE_RT_H

#include "heap/rt.h"


struct ColRt {

};

// RT's part from the runtime's open to its close: collapse_rt_open runs once
// the heap exists (0, or -1: out of memory); collapse_rt_close ends its work
// and frees what the part holds.
int  collapse_rt_open(void);
void collapse_rt_close(void);

#endif
