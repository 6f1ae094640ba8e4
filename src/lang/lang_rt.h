// lang_rt.h: the lang/ layer's part of a runtime's context (RT->lang,
// heap/rt.h): every piece of this layer's state that outlives a call.

#ifndef HVM4G_LANG_RT_H
#define HVM4G_LANG_RT_H

#include "heap/rt.h"


struct LangRt {

};

// RT's part from the runtime's open to its close: lang_rt_open runs once
// the heap exists (0, or -1: out of memory); lang_rt_close ends nothing running
// and frees what the part holds.
int  lang_rt_open(void);
void lang_rt_close(void);

#endif
