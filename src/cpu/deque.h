// deque.h: a Chase-Lev work-stealing deque of 64-bit words (host code).
//
// One owner pushes and takes at the bottom without locks; any thread may
// steal at the top with one compare-and-swap. The memory orders are those
// of Le, Pop, Cohen and Zappa Nardelli, "Correct and Efficient Work-Stealing
// for Weak Memory Models" (PPoPP 2013). The ring grows by doubling; the ring
// it replaces is kept (a thief may still be reading it), linked from the new
// one and freed with the deque.

#ifndef HVM4G_DEQUE_H
#define HVM4G_DEQUE_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include "core/term.h"

typedef struct Ring {
  int64_t      cap;    // a power of two
  struct Ring *old;    // the ring this one replaced
  _Atomic u64  buf[];
} Ring;

typedef struct Deque {
  _Alignas(64) _Atomic int64_t top;
  _Alignas(64) _Atomic int64_t bottom;
  _Atomic(Ring *)              ring;
  char                         pad[56];
} Deque;

#define RING_AT(r, i) (&(r)->buf[(i) & ((r)->cap - 1)])

static inline Ring *ring_new(int64_t cap, Ring *old) {
  Ring *r = malloc(sizeof(Ring) + (size_t)cap * sizeof(u64));
  if (r) {
    r->cap = cap;
    r->old = old;
  }
  return r;
}

// An empty deque with room for cap words (a power of two); 0 if no memory.
static inline int dq_init(Deque *q, int64_t cap) {
  Ring *r = ring_new(cap, NULL);
  atomic_init(&q->top, 0);
  atomic_init(&q->bottom, 0);
  atomic_init(&q->ring, r);
  return r != NULL;
}

// Frees the rings (no thread may use the deque any more).
static inline void dq_free(Deque *q) {
  Ring *r = atomic_load_explicit(&q->ring, memory_order_relaxed);
  while (r) {
    Ring *old = r->old;
    free(r);
    r = old;
  }
  atomic_store_explicit(&q->ring, NULL, memory_order_relaxed);
}

// Owner only. Returns 0 when the ring must grow and there is no memory.
static inline int dq_push(Deque *q, u64 x) {
  int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
  int64_t t = atomic_load_explicit(&q->top, memory_order_acquire);
  Ring   *r = atomic_load_explicit(&q->ring, memory_order_relaxed);
  if (b - t > r->cap - 1) {
    Ring *g = ring_new(r->cap * 2, r);
    if (!g) return 0;
    for (int64_t i = t; i < b; i++) {
      atomic_store_explicit(RING_AT(g, i),
        atomic_load_explicit(RING_AT(r, i), memory_order_relaxed), memory_order_relaxed);
    }
    atomic_store_explicit(&q->ring, g, memory_order_release);
    r = g;
  }
  atomic_store_explicit(RING_AT(r, b), x, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  // release also on the store (free on x86 and ARM), which is what thread
  // sanitizers see: they do not model fences
  atomic_store_explicit(&q->bottom, b + 1, memory_order_release);
  return 1;
}

// Owner only: the last word pushed, if any is left.
static inline int dq_take(Deque *q, u64 *x) {
  int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed) - 1;
  Ring   *r = atomic_load_explicit(&q->ring, memory_order_relaxed);
  atomic_store_explicit(&q->bottom, b, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  int64_t t  = atomic_load_explicit(&q->top, memory_order_relaxed);
  int     ok = t <= b;
  if (ok) {
    *x = atomic_load_explicit(RING_AT(r, b), memory_order_relaxed);
    if (t == b) {
      // the last one: a thief may race for it
      ok = atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1,
             memory_order_seq_cst, memory_order_relaxed);
      atomic_store_explicit(&q->bottom, b + 1, memory_order_relaxed);
    }
  } else {
    atomic_store_explicit(&q->bottom, b + 1, memory_order_relaxed);
  }
  return ok;
}

// Any thread: how many words the deque holds, and the index of the oldest.
static inline int64_t dq_size(Deque *q, int64_t *top) {
  int64_t t = atomic_load_explicit(&q->top, memory_order_acquire);
  int64_t b = atomic_load_explicit(&q->bottom, memory_order_acquire);
  *top = t;
  return b > t ? b - t : 0;
}
// Any thread: the oldest word, if its high half is `hi` (~0u: any word);
// 0 also when another thread won it.
static inline int dq_steal_if(Deque *q, u32 hi, u64 *x) {
  int64_t t = atomic_load_explicit(&q->top, memory_order_acquire);
  atomic_thread_fence(memory_order_seq_cst);
  int64_t b = atomic_load_explicit(&q->bottom, memory_order_acquire);
  if (t >= b) return 0;
  Ring *r = atomic_load_explicit(&q->ring, memory_order_acquire);
  *x = atomic_load_explicit(RING_AT(r, t), memory_order_relaxed);
  if (hi != ~0u && (u32)(*x >> 32) != hi) return 0;
  return atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1,
           memory_order_seq_cst, memory_order_relaxed);
}

static inline int dq_steal(Deque *q, u64 *x) {
  return dq_steal_if(q, ~0u, x);
}

#endif
