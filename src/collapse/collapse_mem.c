// collapse_mem.c: the collapser's one allocator (collapse_in.h, "Memory"):
// growable arrays for what one thread owns (cnf's stack, the sequential
// queue), and blocks by handle for what the -T engine's threads share
// (kids, chunks, level segments, kept errors).

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include "collapse/collapse_in.h"
#include "cpu/eval.h"

void collapse_oom(void) {
  eval_fatal("hvm4g: ", "out of memory in collapse");
}

void *collapse_grow(void *buf, u64 *cap, u64 need, size_t size) {
  if (need <= *cap) return buf;
  u64 n = *cap ? *cap * 2 : MEM_LEAST;
  while (n < need) n *= 2;
  void *nb = realloc(buf, (size_t)n * size);
  if (!nb) collapse_oom();
  *cap = n;
  return nb;
}

// Blocks
// ------
// A free block's first word links the free list: the next free handle.
// Each thread keeps its own list of up to 2 * MEM_BATCH free blocks per
// store, and trades MEM_BATCH at a time with the shared list under the
// lock (the -T consumer frees most chunks, the pool makes most). A thread's
// lists from before the last mem_drop are void (`gen`).

#define MEM_STORES 8    // stores in the process
#define MEM_BATCH  32

typedef struct {
  u32 top, len, gen;
} MemMine;

static _Thread_local MemMine MINE[MEM_STORES];
static u32                   STORES;            // ids given out
static pthread_mutex_t       STORES_LOCK = PTHREAD_MUTEX_INITIALIZER;

#define NEXT(m, h) (*(u32 *)mem_at(m, h))

static MemMine *mine(Mem *m) {
  u32 id = atomic_load_explicit(&m->id, memory_order_acquire);
  if (!id) {
    pthread_mutex_lock(&STORES_LOCK);
    id = atomic_load_explicit(&m->id, memory_order_relaxed);
    if (!id) {
      if (STORES == MEM_STORES) {
        pthread_mutex_unlock(&STORES_LOCK);
        eval_die("collapse: too many block stores");
      }
      id = ++STORES;
      atomic_store_explicit(&m->id, id, memory_order_release);
    }
    pthread_mutex_unlock(&STORES_LOCK);
  }
  MemMine *my = &MINE[id - 1];
  if (my->gen != m->gen) *my = (MemMine){ 0, 0, m->gen };
  return my;
}

// A fresh handle, its slab made if new (m->lock held).
static u32 mem_fresh(Mem *m) {
  u32 h = m->len + 1;
  u32 g = (h - 1) >> m->bits;
  if (g >= m->slabs || h == 0) {
    pthread_mutex_unlock(&m->lock);
    eval_die("too many collapse branches");
  }
  if (!m->slab) {
    m->slab = calloc(m->slabs, sizeof(void *));
    if (!m->slab) collapse_oom();
  }
  if (!m->slab[g]) {
    size_t bytes = (((size_t)m->size << m->bits) + 63) & ~(size_t)63;
    m->slab[g] = aligned_alloc(64, bytes);
    if (!m->slab[g]) collapse_oom();
  }
  m->len = h;
  return h;
}

u32 mem_new(Mem *m) {
  MemMine *my = mine(m);
  if (!my->top) {
    pthread_mutex_lock(&m->lock);
    for (u32 i = 0; i < MEM_BATCH; i++) {
      u32 h = m->free;
      if (h) {
        m->free = NEXT(m, h);
      } else {
        h = mem_fresh(m);
      }
      NEXT(m, h) = my->top;
      my->top    = h;
      my->len++;
    }
    pthread_mutex_unlock(&m->lock);
  }
  u32 h   = my->top;
  my->top = NEXT(m, h);
  my->len--;
  return h;
}

void mem_del(Mem *m, u32 h) {
  MemMine *my = mine(m);
  NEXT(m, h) = my->top;
  my->top    = h;
  if (++my->len < 2 * MEM_BATCH) return;
  pthread_mutex_lock(&m->lock);
  for (u32 i = 0; i < MEM_BATCH; i++) {
    u32 f   = my->top;
    my->top = NEXT(m, f);
    NEXT(m, f) = m->free;
    m->free    = f;
  }
  my->len -= MEM_BATCH;
  pthread_mutex_unlock(&m->lock);
}

void mem_drop(Mem *m) {
  if (m->slab) {
    for (u32 g = 0; g < m->slabs && m->slab[g]; g++) {
      free(m->slab[g]);
      m->slab[g] = NULL;
    }
  }
  m->len  = 0;
  m->free = 0;
  m->gen++;
}
