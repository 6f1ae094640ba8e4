// collapse_in.h: what the sequential collapser (collapse.c) and the -T
// engine (collapse_par.c) share; private to the two.

#ifndef HVM4G_COLLAPSE_IN_H
#define HVM4G_COLLAPSE_IN_H

#include "collapse.h"

#define KEYS 64   // branch keys: a SUP's sides go one key up, a ↑ lowers it

extern u64 COLLAPSE_PRINTED;   // branches printed so far ..
extern u64 COLLAPSE_LIMIT;     // .. and at most (-CN)

void collapse_oom(void);                     // "out of memory in collapse", exit
void collapse_branch(Wnf *w, u32 loc);       // HEAP[loc] collapsed in place
Term collapse_read(u32 loc, u32 *incs);      // that branch under its INCs, and how many
int  collapse_use(Term t);                   // prints it; 1: a SUP to queue
u32  collapse_key(u32 key, u32 incs);        // the key a SUP's sides go to
u32  collapse_mark(void);                    // this thread's cnf stack, to put back ..
void collapse_reset(u32 sp);                 // .. after a caught error
void collapse_par(Wnf *w, u32 root);         // the -T engine (collapse_par.c)

#endif
