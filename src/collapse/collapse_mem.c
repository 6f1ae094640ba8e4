// collapse_mem.c: the collapser's one allocator (collapse_in.h, "Memory"):
// growable arrays for what one thread owns (cnf's stack, the sequential
// queue), and blocks by handle for what the -T engine's threads share
// (kids, chunks, level segments, kept errors).

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collapse/collapse_in.h"
#include "cpu/eval.h"
#include "heap/rt.h"

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
// store (ColThread.mine), and trades MEM_BATCH at a time with the shared
// list under the lock (the -T consumer frees most chunks, the pool makes
// most). A thread's lists from before the last mem_drop are void (`gen`).

#define MEM_BATCH  32

#define NEXT(m, h) (*(u32 *)mem_at(m, h))

static MemMine *mine(Mem *m) {
  MemMine *my = &col_thread()->mine[m->store];
  if (my->gen != m->gen) *my = (MemMine){ 0, 0, m->gen };
  return my;
}

void mem_init(Mem *m, u32 size, u32 bits, u32 slabs, u32 store) {
  *m = (Mem){ .size = size, .bits = bits, .slabs = slabs, .store = store };
  pthread_mutex_init(&m->lock, NULL);
}

void mem_close(Mem *m) {
  mem_drop(m);
  free(m->slab);
  m->slab = NULL;
  pthread_mutex_destroy(&m->lock);
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

// Threads
// -------

void collapse_threads(ColRt *c, u32 n) {
  if (n > c->thr_n) {
    ColThread *t = aligned_alloc(_Alignof(ColThread), (size_t)n * sizeof(ColThread));
    if (!t) collapse_oom();
    memset(t, 0, (size_t)n * sizeof(ColThread));
    if (c->thr_n) memcpy(t, c->thr, (size_t)c->thr_n * sizeof(ColThread));
    free(c->thr);
    c->thr   = t;
    c->thr_n = n;
  }
  for (u32 i = 0; i < c->thr_n; i++) c->thr[i].cs_sp = 0;
}
