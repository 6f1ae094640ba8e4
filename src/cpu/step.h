// step.h: -D, reduction one interaction at a time with the term printed
// after each step (step.c).

#ifndef HVM4G_STEP_H
#define HVM4G_STEP_H

#include "core/core.h"

// -D's state, a runtime's (RT->cpu->step).
typedef struct {
  u32 root;   // the term printed after each step; 0: not stepping
} Step;

// Starts stepping from RT->heap.at[root] (printed now, and after every step) and
// returns 1; 0, doing nothing, when a stepping run is already on.
int  step_begin(u32 root);
void step_end(void);

// RT->heap.at[loc] to WNF, one interaction per eval_wnf call, stored back.
void step_wnf_at(Wnf *w, u32 loc);

#endif
