// collapse_rt.h: the collapse/ layer's part of a runtime's context (RT->col,
// heap/rt.h): every piece of this layer's state that outlives a call. The
// output and the single-thread queue are collapse.c's, ColPar is the -T
// engine's (collapse_par.c), the block stores and the per-thread parts
// are collapse_mem.c's; collapse_in.h says how they work.

#ifndef HVM4G_COLLAPSE_RT_H
#define HVM4G_COLLAPSE_RT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include "heap/rt.h"
#include "collapse/collapse.h"

#define KEYS 64   // branch keys: a SUP's sides go one key up, a ↑ lowers it

// A store of blocks of one size, by handle (collapse_in.h, "Memory").
typedef struct {
  u32             size;    // bytes in a block
  u32             bits;    // a slab holds 2^bits blocks
  u32             slabs;   // at most (then "too many collapse branches")
  u32             store;   // its index among the threads' own free lists
  u32             gen;     // mem_drop calls: older thread lists are void
  u32             len;     // handles made (lock)
  u32             free;    // shared free list (lock)
  void          **slab;    // slab table, made on first use (lock)
  pthread_mutex_t lock;
} Mem;

// The -T engine's state (collapse_par.c, "Collapsing ahead").
typedef struct {
  Mem              kids;          // Kid blocks
  u32              kid_stack;     // kids to run, last first (kid_lock)
  _Atomic u32      kid_waiting;   // kids in the stack
  pthread_mutex_t  kid_lock;
  Mem              chunks;        // Chunk blocks
  Mem              segm;          // level segments
  Mem              errs;          // errors kept by the pool
  struct ColLevel *lv;            // KEYS levels, made by the first -T collapse
  _Atomic u64      open;          // bit k: level k may have offered entries
  u64              full;          // bit k: level k has chunks to use (consumer)
  u64              filling;       // bit k: level k's open chunk has entries (consumer)
  u64              unoffered;     // bit k: level k has chunks not offered (consumer)
  _Atomic int      spec_on;       // the pool may claim entries
  _Atomic u32      spec_running;  // threads inside spec_help
  u32              threads;       // the pool's threads, this collapse
  int              stopped;       // the last collapse's pool work is not joined yet
  int              ready;         // opened: the stores and the lock exist
} ColPar;

// A FIFO bucket of the single-thread queue: tasks are two locations.
typedef struct {
  u64 *buf;
  u64  head, tail, cap;   // ring: [head, tail)
} ColBucket;

typedef struct ColRt {
  // Output (collapse_set_out, collapse_set_line_check)
  FILE             *out;          // NULL until set: stdout
  int               color;        // the -s counts dimmed
  CollapseLineCheck line_check;
  FILE             *line_out;     // a line's text, for line_check ..
  char             *line_text;    // .. in memory
  size_t            line_size;
  u64               printed;      // branches printed so far ..
  u64               limit;        // .. and at most (-CN)
  // The single-thread queue (collapse.c)
  ColBucket         q[KEYS];
  u64               q_mask;       // bit k: bucket k non-empty
  // Each CPU thread's own (by pool_tid): cnf's stack, its free block lists
  struct ColThread *thr;
  u32               thr_n;
  ColPar            par;
} ColRt;

// RT's part from the runtime's open to its close: collapse_rt_open runs once
// the heap exists (0, or -1: out of memory); collapse_rt_close ends its work
// and frees what the part holds.
int  collapse_rt_open(void);
void collapse_rt_close(void);

#endif
