// prim.h: the host primitives (%log, %nf, %gnf, the I/O ones), which the WNF core hands
// to the CPU evaluator (WNF_HOST) and the scheduler installs there
// (eval_set_host).

#ifndef HVM4G_PRIM_H
#define HVM4G_PRIM_H

#include <pthread.h>
#include "core/core.h"

// Handle families: kinds that number their ids apart (prim_task.c).
#define PRIM_FAMILIES 5

// The table of handles a program opened (prim_task.c, prim_in.h): every
// slot, and for each family its handles' slots, under one lock.
typedef struct {
  struct Slot    *slots;                       // slot 0 unused
  u32             slot_next, slot_cap;
  u32            *family_slot[PRIM_FAMILIES];  // a handle's id -> its slot
  u32             family_next[PRIM_FAMILIES];  // the next id (ids start at 1)
  u32             family_cap[PRIM_FAMILIES];
  pthread_mutex_t lock;
} PrimHandles;

// The primitives' part of a runtime (RT->run->prim).
typedef struct {
  int          argc;      // %argv: the program's arguments (prim_set_args)
  char       **argv;
  _Atomic u64  rand;      // %rand's state (0: not seeded yet)
  PrimHandles  handles;
} PrimRt;

// The primitives' part from the runtime's open (0, or -1) to its close,
// which ends what the program left open: its files and connections are
// closed, and its child processes are ended (prim_procs_end).
int  prim_open(void);
void prim_close(void);
// Ends the child processes the program started and did not wait for: each
// (its process group: a shell's commands too) is asked to stop (SIGTERM),
// killed if it has not within a moment, and reaped; none outlives the
// runtime, nor the hvm4g program after an error or an interrupt.
void prim_procs_end(void);

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
