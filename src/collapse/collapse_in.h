// collapse_in.h: what the sequential collapser (collapse.c) and the -T
// engine (collapse_par.c) share, their one allocator (collapse_mem.c)
// included; private to the three.

#ifndef HVM4G_COLLAPSE_IN_H
#define HVM4G_COLLAPSE_IN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include "collapse/collapse.h"
#include "collapse/collapse_rt.h"
#include "cpu/pool.h"

int  collapse_branch(Wnf *w, u32 loc);       // RT->heap.at[loc] collapsed in place;
                                             // 1: effects held (collapse.c)
Term collapse_read(u32 loc, u32 *incs);      // that branch under its INCs, and how many
int  collapse_use(Term t);                   // prints it; 1: a SUP to queue
u32  collapse_key(u32 key, u32 incs);        // the key a SUP's sides go to
u32  collapse_mark(void);                    // this thread's cnf stack, to put back ..
void collapse_reset(u32 sp);                 // .. after a caught error
void collapse_par(Wnf *w, u32 root);         // the -T engine (collapse_par.c)
void collapse_par_join(void);                // waits for the pool to leave the last one
void collapse_par_open(ColPar *p);           // RT's engine, from the part's open ..
void collapse_par_close(ColPar *p);          // .. to its close (joined first)

// Memory (collapse_mem.c)
// ======
// Everything the collapser allocates comes from here, and a failure ends
// the run with "out of memory in collapse".
//
// collapse_grow: an array of one thread's (cnf's stack, a queue bucket),
// grown by doubling from MEM_LEAST elements.
//
// Mem (collapse_rt.h): a store of blocks of one size for the -T engine's
// threads, by handles 1, 2, ... (0 is none). Blocks live in slabs of 2^bits
// that never move, so mem_at needs no lock; a block let go is reused, and
// mem_drop frees every slab at once when a collapse is over (no thread may
// hold a handle then). A free block's first 4 bytes are the store's.
//
// ColThread: what each CPU thread of the runtime (by pool_tid) has of its
// own: cnf's stack (re-entrant: a %nf inside cnf may run another branch's
// cnf on this thread, which stacks its frames above cs_sp) and its free
// block lists, one per store. collapse_threads makes them, for every
// thread, before a collapse lets the pool in.

#define MEM_LEAST  256
#define MEM_STORES 4    // the -T engine's stores: kids, chunks, segments, errors

typedef struct {
  u32 top, len, gen;    // a thread's free list in one store: head, length, mem_drop count
} MemMine;

// Cache lines of its own: each thread writes its part at every cnf step.
typedef struct ColThread {
  _Alignas(64) struct CFrame *cs;   // cnf's stack (collapse.c)
  u64                         cs_cap;
  u32                         cs_sp;
  MemMine                     mine[MEM_STORES];   // by Mem.store
} ColThread;

// This thread's part; it works for RT, whose collapse sized them.
static inline ColThread *col_thread(void) {
  return &RT->col->thr[pool_tid()];
}

// Makes a part for n threads, every part's stack emptied (no thread may be
// collapsing).
void collapse_threads(ColRt *c, u32 n);

void  collapse_oom(void);                                      // the message, exit 1
void *collapse_grow(void *buf, u64 *cap, u64 need, size_t size);  // buf with room for need
void  mem_init(Mem *m, u32 size, u32 bits, u32 slabs, u32 store);  // an empty store
void  mem_close(Mem *m);                                       // every block and the table freed
u32   mem_new(Mem *m);                                         // a block's handle
void  mem_del(Mem *m, u32 h);                                  // let go of it
void  mem_drop(Mem *m);                                        // every block, at once

static inline void *mem_at(Mem *m, u32 h) {
  u32 i = h - 1;
  return (char *)m->slab[i >> m->bits] + (size_t)(i & ((1u << m->bits) - 1)) * m->size;
}

#endif
