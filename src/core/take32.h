// take32.h: heap words as two 32-bit halves, for devices without 64-bit
// atomic exchange or compare-and-swap (Apple GPUs). Portable dialect.
//
// A term word is SUB(1)|TAG(7)|EXT(24) in its high half and VAL(32) in its
// low half (little-endian: the high half is the second u32). BUSY's high
// half (tag 127) belongs to no term, so the high half alone says "held".
// Every access goes through the halves, high half last on a store and
// first on a load:
//
//   load     high half; BUSY_HI there: the word is BUSY. A SUB there:
//            fence (acquire), then the low half, which is then the SUB's
//            own, and so is every word the SUB's writer stored before it.
//   store    low half; fence (release) when the word is a SUB; high half.
//   take     fence, exchange the high half with BUSY_HI, fence. BUSY_HI
//            back: another lane holds the slot. Anything else: the slot is
//            ours, and its low half is the one its last holder stored
//            (nobody else writes a held slot).
//   release  (the holder) low half, fence, exchange of the high half.
//   cas      on the low half; only for words whose high half never
//            changes (heap word 0, the fresh-label count).
//
// Ordering is needed only where the core hands data from lane to lane in
// a pass: a DUP slot taken or released, and a SUB (a DUP slot's result, a
// substituted variable), as in the CUDA backend's fences. A load may mix a
// high half with a low half stored later by the next holder of the slot
// (a torn word). Such a word has no SUB (a SUB is final: no holder writes
// a slot after its SUB), is never BUSY (the high half alone says so), and
// the core only tests it for SUB and BUSY before it takes the slot, which
// returns a whole word. docs/gpu.md ("The 32-bit DUP take") argues it.
//
// The backend defines, before including this file:
//   T32              the type of an atomic 32-bit word (u32; MSL atomic_uint)
//   T32_LD(p)        atomic load, returns a u32
//   T32_ST(p, v)     atomic store
//   T32_XCHG(p, v)   atomic exchange, returns the old
//   T32_CAS(p, o, n) atomic compare-and-swap, returns the old
//   T32_FENCE()      a fence ordering the lane's heap accesses before it
//                    against those after it, for every lane of the device
//                    (release and acquire)
// The accesses themselves may be relaxed.

#ifndef HVM4G_TAKE32_H
#define HVM4G_TAKE32_H

#include "core/term.h"

#define BUSY_HI        ((u32)(BUSY >> 32))
#define SUB_HI         ((u32)(SUB_BIT >> 32))
#define T32_LO(h, loc) ((DEV T32 *)(h) + 2 * (u64)(loc))
#define T32_HI(h, loc) ((DEV T32 *)(h) + 2 * (u64)(loc) + 1)
#define T32_WORD(hi, lo) (((Term)(hi) << 32) | (Term)(u32)(lo))

// FN_COLD: CUDA runs these only as a cross-check (--take=32), so they stay
// out of its 64-bit hot loop; on Metal, whose take they are, FN_COLD is FN.
FN_COLD Term t32_ld(DEV Term *h, u32 loc) {
  u32 hi = T32_LD(T32_HI(h, loc));
  if (hi == BUSY_HI) {
    return BUSY;
  }
  if (hi & SUB_HI) {
    T32_FENCE();
  }
  return T32_WORD(hi, T32_LD(T32_LO(h, loc)));
}

FN_COLD void t32_st(DEV Term *h, u32 loc, Term t) {
  T32_ST(T32_LO(h, loc), (u32)t);
  if (IS_SUB(t)) {
    T32_FENCE();
  }
  T32_ST(T32_HI(h, loc), (u32)(t >> 32));
}

// HEAP_XCHG: t == BUSY takes the slot (returns the word taken, or BUSY
// when another lane holds it); any other t is the holder's release
// (returns BUSY, the word it replaced).
FN_COLD Term t32_xchg(DEV Term *h, u32 loc, Term t) {
  if (t == BUSY) {
    T32_FENCE();
    u32 hi = T32_XCHG(T32_HI(h, loc), BUSY_HI);
    T32_FENCE();
    if (hi == BUSY_HI) {
      return BUSY;
    }
    return T32_WORD(hi, T32_LD(T32_LO(h, loc)));
  }
  T32_ST(T32_LO(h, loc), (u32)t);
  T32_FENCE();
  u32 hi = T32_XCHG(T32_HI(h, loc), (u32)(t >> 32));
  return hi == BUSY_HI ? BUSY : T32_WORD(hi, (u32)t);
}

// HEAP_CAS on a word whose high half is fixed (word 0: hi(o) == hi(n)).
FN_COLD Term t32_cas(DEV Term *h, u32 loc, Term o, Term n) {
  T32_FENCE();
  u32 lo = T32_CAS(T32_LO(h, loc), (u32)o, (u32)n);
  T32_FENCE();
  return T32_WORD(T32_LD(T32_HI(h, loc)), lo);
}

#endif
