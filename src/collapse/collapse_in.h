// collapse_in.h: what the sequential collapser (collapse.c) and the -T
// engine (collapse_par.c) share, their one allocator (collapse_mem.c)
// included; private to the three.

#ifndef HVM4G_COLLAPSE_IN_H
#define HVM4G_COLLAPSE_IN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include "collapse/collapse.h"

#define KEYS 64   // branch keys: a SUP's sides go one key up, a ↑ lowers it

extern u64 COLLAPSE_PRINTED;   // branches printed so far ..
extern u64 COLLAPSE_LIMIT;     // .. and at most (-CN)

int  collapse_branch(Wnf *w, u32 loc);       // RT->heap.at[loc] collapsed in place;
                                             // 1: effects held (collapse.c)
Term collapse_read(u32 loc, u32 *incs);      // that branch under its INCs, and how many
int  collapse_use(Term t);                   // prints it; 1: a SUP to queue
u32  collapse_key(u32 key, u32 incs);        // the key a SUP's sides go to
u32  collapse_mark(void);                    // this thread's cnf stack, to put back ..
void collapse_reset(u32 sp);                 // .. after a caught error
void collapse_par(Wnf *w, u32 root);         // the -T engine (collapse_par.c)

// Memory (collapse_mem.c)
// ======
// Everything the collapser allocates comes from here, and a failure ends
// the run with "out of memory in collapse".
//
// collapse_grow: an array of one thread's (cnf's stack, a queue bucket),
// grown by doubling from MEM_LEAST elements.
//
// Mem: a store of blocks of one size for the -T engine's threads, by
// handles 1, 2, ... (0 is none). Blocks live in slabs of 2^bits that never
// move, so mem_at needs no lock; a block let go is reused, and mem_drop
// frees every slab at once when a collapse is over (no thread may hold a
// handle then). A free block's first 4 bytes are the store's.

#define MEM_LEAST 256

typedef struct {
  u32             size;    // bytes in a block
  u32             bits;    // a slab holds 2^bits blocks
  u32             slabs;   // at most (then "too many collapse branches")
  _Atomic u32     id;      // index of the threads' own free lists (0: none yet)
  u32             gen;     // mem_drop calls: older thread lists are void
  u32             len;     // handles made (lock)
  u32             free;    // shared free list (lock)
  void          **slab;    // slab table, made on first use (lock)
  pthread_mutex_t lock;
} Mem;

#define MEM(type, bits, slabs) \
  { sizeof(type), bits, slabs, 0, 0, 0, 0, NULL, PTHREAD_MUTEX_INITIALIZER }

void  collapse_oom(void);                                      // the message, exit 1
void *collapse_grow(void *buf, u64 *cap, u64 need, size_t size);  // buf with room for need
u32   mem_new(Mem *m);                                         // a block's handle
void  mem_del(Mem *m, u32 h);                                  // let go of it
void  mem_drop(Mem *m);                                        // every block, at once

static inline void *mem_at(Mem *m, u32 h) {
  u32 i = h - 1;
  return (char *)m->slab[i >> m->bits] + (size_t)(i & ((1u << m->bits) - 1)) * m->size;
}

#endif
