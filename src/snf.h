// snf.h: the strong normal form, in place, on one CPU thread or on the -T
// pool (snf.c).

#ifndef HVM4G_SNF_H
#define HVM4G_SNF_H

#include "core.h"

void snf_init(void);        // after the workers exist (eval_init)
void snf_at(u32 loc);       // strong normal form of HEAP[loc], in place
int  snf_pool_busy(void);   // other CPU threads may be reducing

// Keeps the -T pool awake, its threads that find no task calling `idle`
// (1 when it found work), until released with NULL. The -C enumeration
// holds it with collapse_help.
void snf_pool_hold(int (*idle)(Wnf *w));

#endif
