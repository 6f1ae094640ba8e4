// reach.h: the heap words a device run may read (host code; docs/gpu.md,
// "Copying the heap in").
//
// A device run reads only what it can reach: the words of every node
// reachable from its root slot, every book template (a REF instantiates
// one: wnf_instance copies it, relocated to fresh words, so its pointers
// are not followed), and word 0 (the fresh-label count). Every location
// the run holds is one of those, or one it allocated above the host's top,
// so that set is closed: the device never reads nor writes another word
// below the top. The copy in may skip the rest.
//
// The walk keeps one bit per heap word of [0, top) and a summary bit per
// 64 of them (runs are found by skipping empty summary words), and an
// explicit stack of terms: no recursion.

#ifndef HVM4G_REACH_H
#define HVM4G_REACH_H

#include "core/term.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  u64  *bits;    // one bit per word of [0, top): reached
  u64  *sum;     // one bit per word of bits: not zero
  u64   top;
  u64   words;   // words reached
  Term *stk;     // the walk's pending terms
  u64   cap;     // their room
} Reach;

// The cost rule (docs/gpu.md, "Copying the heap in"). A reached word costs
// the walk several times what copying a word of the used range costs: a
// few times on a heap in allocation order (what bump allocation leaves),
// more when shuffled within the caches, a DRAM miss a word beyond them. So
// it pays only when few words are reached: it gives up past
// top / REACH_RATIO, or once it has taken as long as the copy it would
// save (the DRAM case), so that a walk that does not pay costs at most
// about one copy. Under REACH_MIN words in use nothing pays: one copy is
// short.
#define REACH_MIN     (1ull << 16)
#define REACH_RATIO   16u
#define REACH_COPY_NS 0.84
u64    reach_budget(u64 top);    // words; 0: do not walk
double reach_limit_s(u64 top);   // seconds

// Marks what a run rooted at the slots locs[0..nloc) may read (a run
// from the CPU pool's unfinished slots has many roots), giving up past `budget`
// words or `limit_s` seconds (0: none). 1: done (r->bits holds the set);
// 0: gave up (the copy in takes the whole range); -1: out of host memory
// or a bad root (the same).
int  reach_walk(Reach *r, const Term *heap, u64 top, const u32 *locs, u32 nloc,
                const u32 *book, const u32 *book_len, u32 book_cnt,
                u64 budget, double limit_s);

// Whether word i was reached.
static inline int reach_has(const Reach *r, u64 i) {
  return (int)((r->bits[i >> 6] >> (i & 63)) & 1u);
}

// The first run of reached words at or after *at: [*lo, *lo + *n), and
// *at moves past it. 0 when there is none.
int  reach_run(const Reach *r, u64 *at, u64 *lo, u64 *n);

void reach_free(Reach *r);

#ifdef __cplusplus
}
#endif

#endif
