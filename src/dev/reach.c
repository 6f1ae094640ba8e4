// reach.c: the heap words a device run may read (reach.h).

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dev/reach.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// Words marked between looks at the clock.
#define REACH_TICK (1u << 16)

u64 reach_budget(u64 top) {
  return top < REACH_MIN ? 0 : top / REACH_RATIO;
}

double reach_limit_s(u64 top) {
  return (double)top * REACH_COPY_NS * 1e-9;
}

void reach_free(Reach *r) {
  free(r->bits);
  free(r->sum);
  free(r->stk);
  memset(r, 0, sizeof *r);
}

// Marks word i; 1 if it was not marked yet.
static inline int mark(Reach *r, u64 i) {
  u64 w = i >> 6, b = 1ull << (i & 63);
  if (r->bits[w] & b) {
    return 0;
  }
  r->bits[w]      |= b;
  r->sum[w >> 6]  |= 1ull << (w & 63);
  r->words++;
  return 1;
}

static int push(Reach *r, u64 *sp, Term t) {
  if (*sp == r->cap) {
    u64   c = r->cap ? 2 * r->cap : 4096;
    Term *s = realloc(r->stk, c * sizeof(Term));
    if (!s) return -1;
    r->stk = s;
    r->cap = c;
  }
  r->stk[(*sp)++] = t;
  return 0;
}

int reach_walk(Reach *r, const Term *heap, u64 top, const u32 *locs, u32 nloc,
               const u32 *book, const u32 *book_len, u32 book_cnt,
               u64 budget, double limit_s) {
  double t0 = limit_s > 0 ? now_s() : 0;
  reach_free(r);
  if (top == 0 || nloc == 0) return -1;
  for (u32 i = 0; i < nloc; i++) {
    if (locs[i] >= top) return -1;
  }
  u64 nb = (top + 63) / 64;
  r->top  = top;
  // calloc: fresh zero pages, touched only where a word is reached
  r->bits = calloc(nb, sizeof(u64));
  r->sum  = calloc((nb + 63) / 64, sizeof(u64));
  if (!r->bits || !r->sum) {
    reach_free(r);
    return -1;
  }
  u64 sp = 0;
  mark(r, 0);   // the fresh-label count
  for (u32 i = 0; i < nloc; i++) {
    if (mark(r, locs[i]) && push(r, &sp, heap[locs[i]]) != 0) {
      reach_free(r);
      return -1;
    }
  }
  u64 tick = r->words + REACH_TICK;
  while (sp > 0 && r->words <= budget) {
    if (r->words >= tick) {
      tick = r->words + REACH_TICK;
      if (limit_s > 0 && now_s() - t0 > limit_s) return 0;
    }
    Term t = r->stk[--sp];
    if (!HAS_LOC(TAG(t))) continue;
    // A variable or a DUP projection reads one binder slot, anything else
    // its whole node (compact_span); the slot's content (a SUB, a body, a
    // DUP's expression) is a term followed in turn.
    u32 tag = TAG(t);
    u64 lo  = VAL(t);
    u64 n   = tag == VAR || tag == DP0 || tag == DP1 ? 1 : term_arity(t);
    if (lo >= top) continue;
    if (n > top - lo) n = top - lo;
    for (u64 j = 0; j < n; j++) {
      if (!mark(r, lo + j)) continue;
      Term c = heap[lo + j];
      if (HAS_LOC(TAG(c)) && push(r, &sp, c) != 0) {
        reach_free(r);
        return -1;
      }
    }
  }
  // Templates: copied (relocated) whole by wnf_instance, so not followed;
  // marked last, so that a word the walk reaches in one is followed.
  for (u32 id = 0; id < book_cnt && r->words <= budget; id++) {
    u64 at = book[id];
    if (at == 0) continue;
    u64 end = at + book_len[id];
    for (u64 i = at; i < end && i < top; i++) mark(r, i);
  }
  return r->words <= budget;
}

// First set bit at or after i (top when none).
static u64 next_set(const Reach *r, u64 i) {
  if (i >= r->top) return r->top;
  u64 nb = (r->top + 63) / 64;
  u64 w  = i >> 6;
  u64 x  = r->bits[w] & (~0ull << (i & 63));
  if (!x) {
    // the next bitmap word that is not zero, through the summary
    u64 ns = (nb + 63) / 64;
    u64 s  = (w + 1) >> 6;
    u64 y  = s < ns ? r->sum[s] & (~0ull << ((w + 1) & 63)) : 0;
    while (!y) {
      if (++s >= ns) return r->top;
      y = r->sum[s];
    }
    w = s * 64 + (u64)__builtin_ctzll(y);
    x = r->bits[w];
  }
  u64 at = w * 64 + (u64)__builtin_ctzll(x);
  return at < r->top ? at : r->top;
}

// First clear bit at or after i (top when none).
static u64 next_clear(const Reach *r, u64 i) {
  u64 nb = (r->top + 63) / 64;
  u64 w  = i >> 6;
  u64 x  = ~r->bits[w] & (~0ull << (i & 63));
  while (!x) {
    if (++w >= nb) return r->top;
    x = ~r->bits[w];
  }
  u64 at = w * 64 + (u64)__builtin_ctzll(x);
  return at < r->top ? at : r->top;
}

int reach_run(const Reach *r, u64 *at, u64 *lo, u64 *n) {
  u64 a = next_set(r, *at);
  if (a >= r->top) {
    *at = r->top;
    return 0;
  }
  u64 b = next_clear(r, a);
  *lo = a;
  *n  = b - a;
  *at = b;
  return 1;
}
