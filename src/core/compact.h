// compact.h: the live part of a device run, packed for the host (portable
// dialect, like lane.h; docs/gpu.md "Copying back the result").
//
// A device run allocates [top0, dtop) and rewrites some words below top0
// (the host's top when the run began). Most of what it allocated is garbage
// by the end. The host can only reach device words through a word below
// top0 that the run changed: every term the host holds lives below top0,
// and an unchanged word there was written before the run, so it points
// below top0 too. So:
//
//   1. roots:  the words below top0 that differ from the copy taken when
//              the run began (word 0, the fresh-label count, is no term:
//              the host takes it as it is)
//   2. mark:   every word of [top0, dtop) reachable from the roots, one bit
//              per word; passes of lanes, each taking a term and marking
//              the node it points to (all of its words: nodes stay whole)
//   3. rank:   live words before each bitmap word (popcounts and a scan)
//   4. copy:   each live word, relocated, to top0 + its rank; each root's
//              new value, relocated
//
// Relocation keeps the order of live words, so a node stays contiguous and
// two pointers to one node still meet. The host heap grows by the live
// words alone.
//
// The backend defines GPU_OR32 (returns the old word) and GPU_ADD32
// (returns the old value), and may define GPU_POPC32; then includes this
// file after lane.h.

#ifndef HVM4G_COMPACT_H
#define HVM4G_COMPACT_H

#include "core/kern.h"

// Bitmap words per rank chunk: a chunk's popcount is one scan element.
#define RANK_CHUNK 256u

typedef struct {
  DEV Term       *heap;    // the heap after the run
  DEV const Term *shadow;  // [0, top0) as it was when the run began
  u64             top0;    // the host's top when the run began
  u64             dtop;    // the device's top when it ended
  DEV u32        *live;    // one bit per word of [top0, dtop)
  DEV u32        *rank;    // per bitmap word: live words before it
  DEV u32        *roots;   // changed words below top0
  DEV u32        *nroots;  // how many (may exceed roots_cap: then redo)
  u32             roots_cap;
  u32             cap;     // output segment words per lane (mark passes)
  u32             budget;  // nodes a lane marks per mark pass
  DEV u32        *bad;     // pointers to unmarked words met (must stay 0)
  DEV u32        *cut;     // lanes a mark pass left with nodes to mark
} CompactArgs;

#ifndef GPU_POPC32
FN u32 compact_popc(u32 x) {
  x = x - ((x >> 1) & 0x55555555u);
  x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
  x = (x + (x >> 4)) & 0x0F0F0F0Fu;
  return (x * 0x01010101u) >> 24;
}
#define GPU_POPC32(x) compact_popc(x)
#endif

// Words of the node that `t` points into, from VAL(t): a variable or a
// DUP projection points at one binder slot, anything else at a whole node.
FN u32 compact_span(Term t) {
  u32 tag = TAG(t);
  if (tag == VAR || tag == DP0 || tag == DP1) {
    return 1;
  }
  return term_arity(t);
}

// 1: `t` points into what the device allocated.
FN int compact_inside(const CompactArgs *a, Term t) {
  return HAS_LOC(TAG(t)) && VAL(t) >= a->top0 && VAL(t) < a->dtop;
}

// 1. Word i (1 <= i < top0) changed: it is a root.
FN void compact_diff(const CompactArgs *a, u64 i) {
  if (a->heap[i] == a->shadow[i]) {
    return;
  }
  u32 k = GPU_ADD32(a->nroots, 1u);
  if (k < a->roots_cap) {
    a->roots[k] = (u32)i;
  }
}

// 2. One lane's share of a mark pass. Its output segment is its stack:
// entries are terms that point into the run's words, whose nodes are
// still to be marked (the first pass: the changed words' values).
typedef struct {
  DEV u64 *out;
  u32      cnt;
  u32      spent;
} MarkLane;

FN void mark_begin(MarkLane *M, const CompactArgs *a, u32 lane,
                   DEV u64 *outs) {
  M->out   = outs + (u64)lane * a->cap;
  M->cnt   = 0;
  M->spent = 0;
}

// Marks the node that `t` points into (all of its words: nodes stay
// whole) and pushes each word that was not marked yet and points into the
// run's words itself. A word's load does not wait for its bit's claim, so
// a walk pays one memory latency per level, not three (the entries were
// locations, each loaded again when popped). Leaves (numbers, erasures,
// pointers to host words) are marked, never pushed: a list's spine then
// leaves one entry per pass, not one per element, which the mark budget's
// rule reads as a spine (pass.c).
// Marks word j of the node `t` points into: 1 when its bit was clear and
// its content, in *c, points into the run's words (to be marked in turn).
FN int mark_word(const CompactArgs *a, Term t, u32 j, THR Term *c) {
  u64 k   = (u64)VAL(t) + j - a->top0;
  u32 bit = 1u << (k & 31u);
  *c      = a->heap[VAL(t) + j];
  return (GPU_OR32(&a->live[k >> 5], bit) & bit) == 0u && compact_inside(a, *c);
}

// Words to mark of the node `t` points into: none outside the run's words.
FN u32 mark_span(const CompactArgs *a, Term t) {
  return compact_inside(a, t) ? compact_span(t) : 0u;
}

FN void mark_node(MarkLane *M, const CompactArgs *a, Term t) {
  u32 n = mark_span(a, t);
  for (u32 j = 0; j < n; j++) {
    Term c;
    if (mark_word(a, t, j, &c)) {
      M->out[M->cnt++] = (u64)c;
    }
  }
}

// Takes entry `e` (a term to mark); marks depth first while budget lasts
// and the segment keeps room for `rem` more entries plus one node.
FN void mark_entry(MarkLane *M, const CompactArgs *a, u64 e, u32 rem) {
  M->out[M->cnt++] = e;
  while (M->cnt > 0 && M->spent < a->budget &&
         a->cap - M->cnt >= rem + LANE_KIDS) {
    mark_node(M, a, (Term)M->out[--M->cnt]);
    M->spent++;
  }
}

// A narrow mark frontier, level by level within one block (a workgroup),
// with no trip to the host between levels: each lane marks the nodes of
// its entries of a level and appends what they point to, to be marked, to
// the next level at the block's count `cnt` (the order of a mark frontier
// does not matter: it marks a set). A level of n entries makes at most
// n * MARK_SPAN. The block takes frontiers wider than a spine (MARK_SPINES)
// up to MARK_BLOCK_MAX entries: a tree's first and last levels. A spine
// goes to mark passes, whose depth-first walks with a budget that doubles
// take it at less than a level's cost a word.
#define MARK_BLOCK_MAX  4096u
#define MARK_SPAN       (LANE_KIDS - 1u)   // words of the largest node
#define MARK_BLOCK(n)   ((n) > MARK_SPINES && (n) <= MARK_BLOCK_MAX)

FN void mark_level(const CompactArgs *a, u64 e, DEV u64 *next, DEV u32 *cnt) {
  Term t = (Term)e;
  u32  n = mark_span(a, t);
  for (u32 j = 0; j < n; j++) {
    Term c;
    if (mark_word(a, t, j, &c)) {
      next[GPU_ADD32(cnt, 1u)] = (u64)c;
    }
  }
}

// A lane's end of a mark pass: its entries for the next one, and whether
// its walk was cut short (budget or room). How many lanes were cut tells
// the mark budget's rule a few spines from a tree (pass.c).
FN void mark_end(const MarkLane *M, const CompactArgs *a, DEV u32 *out_n,
                 u32 lane) {
  out_n[lane] = M->cnt;
  if (M->cnt > 0u) {
    GPU_ADD32(a->cut, 1u);
  }
}

// 3. Live words in rank chunk c (bitmap words [c*RANK_CHUNK, ...)). CUDA
// counts and ranks a chunk on a warp's lanes instead (cuda.cu k_count,
// k_rank: the same sums, read and written 32 consecutive words at a time).
FN u32 compact_count(const CompactArgs *a, u64 c, u64 words) {
  u64 lo = c * RANK_CHUNK;
  u64 hi = lo + RANK_CHUNK < words ? lo + RANK_CHUNK : words;
  u32 s  = 0;
  for (u64 w = lo; w < hi; w++) {
    s += GPU_POPC32(a->live[w]);
  }
  return s;
}

// Ranks of chunk c's bitmap words, from the chunk's base (its scan).
FN void compact_rank(const CompactArgs *a, u64 c, u64 words, u32 base) {
  u64 lo = c * RANK_CHUNK;
  u64 hi = lo + RANK_CHUNK < words ? lo + RANK_CHUNK : words;
  for (u64 w = lo; w < hi; w++) {
    a->rank[w] = base;
    base      += GPU_POPC32(a->live[w]);
  }
}

// 4. Where a word the device allocated goes: top0 + its rank.
FN Term compact_reloc(const CompactArgs *a, Term t) {
  if (!compact_inside(a, t)) {
    return t;
  }
  u64 k    = (u64)VAL(t) - a->top0;
  u32 bits = a->live[k >> 5];
  u32 bit  = 1u << (k & 31u);
  if ((bits & bit) == 0u) {
    GPU_ADD32(a->bad, 1u);
  }
  u32 at = (u32)a->top0 + a->rank[k >> 5] + GPU_POPC32(bits & (bit - 1u));
  return (t & ~VAL_MASK) | (Term)at;
}

// Bitmap word w's live words, relocated, to dst[rank...]. Only the set
// bits are visited: most bitmap words of a run are empty.
FN void compact_copy(const CompactArgs *a, u64 w, DEV Term *dst) {
  u32 bits = a->live[w];
  if (bits == 0u) {
    return;
  }
  u32 at = a->rank[w];
  while (bits != 0u) {
    u32 low = bits & (0u - bits);   // the lowest set bit
    u32 b   = GPU_POPC32(low - 1u);
    dst[at++] = compact_reloc(a, a->heap[a->top0 + w * 32u + b]);
    bits ^= low;
  }
}

// Root i's new value.
FN void compact_root(const CompactArgs *a, u64 i, DEV Term *vals) {
  vals[i] = compact_reloc(a, a->heap[a->roots[i]]);
}

// Reclaiming in place
// ===================
// A run whose heap fills reclaims it between two passes and goes on
// (pass.c): the same four steps, with the frontier's entries as roots too,
// and the live words packed down to top0 within the device heap. An entry
// names one slot (a node's field, a stuck DUP's expression, an offered
// operand), so its mark root is that one word, as a variable's binder slot.

FN Term compact_slot(u64 e) {
  return TERM(VAR, 0, ENT_LOC(e));
}

// Entry e after the packing: its slot relocated, and acting for the region
// the slot is in now (as a fresh entry; a take is an exchange in both DUP
// modes, so an owner is a choice of who tries first, never a lock), its
// flags and tries kept.
FN u64 compact_entry(const CompactArgs *a, u64 e, u32 region_shift) {
  u32 loc  = VAL(compact_reloc(a, compact_slot(e)));
  u64 keep = e & (ENT_DPX | ENT_SPK | ((u64)ENT_TRIES_MAX << 56));
  return keep | ENT(loc >> region_shift, loc);
}

// The stuck DUP slots claimed in bitmap word w's live words (compact.h's
// live bitmap), set again at their new places in `seen`: a claim is what
// keeps a shared expression normalized by one lane (lane.h, lane_claim).
// `old` holds the claims of [top0, dtop) as they were, from bitmap word
// old_w0 of `seen` on; `seen` has those words cleared.
FN void compact_claims(const CompactArgs *a, DEV const u32 *old, u64 old_w0,
                       DEV u32 *seen, u64 w) {
  u32 bits = a->live[w];
  while (bits != 0u) {
    u32 low = bits & (0u - bits);
    u64 loc = a->top0 + w * 32u + GPU_POPC32(low - 1u);
    bits   ^= low;
    if ((old[(loc >> 5) - old_w0] >> (loc & 31u) & 1u) == 0u) {
      continue;
    }
    u32 at = VAL(compact_reloc(a, TERM(VAR, 0, (u32)loc)));
    GPU_OR32(&seen[at >> 5], 1u << (at & 31u));
  }
}

#endif
