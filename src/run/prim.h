// prim.h: the host primitives (%log, %nf, %gnf), which the WNF core hands
// to the CPU evaluator (WNF_HOST) and the scheduler installs there
// (eval_set_host).

#ifndef HVM4G_PRIM_H
#define HVM4G_PRIM_H

#include "core/core.h"

// The result of the primitive application `pri`, reduced by worker w.
Term prim_host(Wnf *w, Term pri);

#endif
