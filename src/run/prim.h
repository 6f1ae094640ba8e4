// prim.h: the host primitives (%log, %nf, %gnf, the I/O ones), which the WNF core hands
// to the CPU evaluator (WNF_HOST) and the scheduler installs there
// (eval_set_host).

#ifndef HVM4G_PRIM_H
#define HVM4G_PRIM_H

#include "core/core.h"

// The result of the primitive application `pri`, reduced by worker w.
Term prim_host(Wnf *w, Term pri);

// The I/O primitives (prim_io.c): files, the environment, the arguments.
Term prim_io(Wnf *w, Term pri);

// Whether the program calls a primitive with an effect (%log, a file, ..):
// the device does not start such a run over (sched.c); a run that starts
// over lazily replays its effects instead (journal.h).
int prim_effects_used(void);

// The program's arguments after `--`, which %argv returns.
void prim_set_args(int argc, char **argv);

#endif
