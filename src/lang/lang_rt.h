// lang_rt.h: the lang/ layer's part of a runtime's context (RT->lang,
// heap/rt.h): every piece of this layer's state that outlives a call. Each
// module's share is defined in its header: the name tables (names.h),
// the parser's scratch and what it learnt of the program (parse.h), the
// printer's stack and name maps (print.h).

#ifndef HVM4G_LANG_RT_H
#define HVM4G_LANG_RT_H

#include <pthread.h>
#include "heap/rt.h"
#include "lang/names.h"
#include "lang/parse.h"
#include "lang/print.h"

typedef struct LangRt {
  Names   names;   // @name <-> book id
  Names   ctrs;    // #Name <-> constructor id (CTR_x first)
  pthread_mutex_t ctr_lock;   // ctrs' finds and adds (names.h)
  Parse   parse;   // the parser's
  Printer print;   // the printer's
  const struct PrimHooks *prims;   // names_set_prims (names.h): the FFI's primitives
} LangRt;

// RT's part from the runtime's open to its close: lang_rt_open runs once
// the heap exists (0, or -1: out of memory); lang_rt_close ends nothing running
// and frees what the part holds. A zeroed part works unopened.
int  lang_rt_open(void);
void lang_rt_close(void);

#endif
