// take32.h: heap words as two 32-bit halves, for devices without 64-bit
// atomic exchange or compare-and-swap (Apple GPUs). Portable dialect.
//
// A term word is SUB(1)|TAG(7)|EXT(24) in its high half and VAL(32) in its
// low half (little-endian: the high half is the second u32). BUSY's high
// half (tag 127) belongs to no term, so the high half alone says "held".
// Every access goes through the halves:
//
//   load     high half (acquire); BUSY_HI there: the word is BUSY; else the
//            low half (acquire).
//   store    low half, then high half (release): whoever sees the new high
//            half sees the new low half.
//   take     exchange the high half with BUSY_HI. BUSY_HI back: another
//            lane holds the slot. Anything else: the slot is ours, and its
//            low half is the one its last holder stored (nobody else
//            writes a held slot).
//   release  (the holder) store low, then exchange high: a store.
//   cas      on the low half; only for words whose high half never
//            changes (heap word 0, the fresh-label count).
//
// A load may mix a high half with a low half stored later by the next
// holder of the slot (a torn word). Such a word never has SUB set (a SUB
// is final: no holder writes a slot after its SUB), is never BUSY (that is
// decided by the high half alone) and the core only tests it for SUB and
// BUSY before taking the slot, which returns a whole word. docs/gpu.md
// ("32-bit DUP take") has the argument.
//
// The backend defines, before including this file:
//   T32              the type of an atomic 32-bit word (u32; MSL atomic_uint)
//   T32_LD(p)        atomic load, acquire
//   T32_ST(p, v)     atomic store, release
//   T32_XCHG(p, v)   atomic exchange, acquire and release; returns the old
//   T32_CAS(p, o, n) atomic compare-and-swap; returns the old

#ifndef HVM4G_GPU_TAKE32_H
#define HVM4G_GPU_TAKE32_H

#include "../term.h"

#define BUSY_HI        ((u32)(BUSY >> 32))
#define T32_LO(h, loc) ((DEV T32 *)(h) + 2 * (u64)(loc))
#define T32_HI(h, loc) ((DEV T32 *)(h) + 2 * (u64)(loc) + 1)
#define T32_WORD(hi, lo) (((Term)(hi) << 32) | (Term)(u32)(lo))

FN Term t32_ld(DEV Term *h, u32 loc) {
  u32 hi = T32_LD(T32_HI(h, loc));
  if (hi == BUSY_HI) {
    return BUSY;
  }
  return T32_WORD(hi, T32_LD(T32_LO(h, loc)));
}

FN void t32_st(DEV Term *h, u32 loc, Term t) {
  T32_ST(T32_LO(h, loc), (u32)t);
  T32_ST(T32_HI(h, loc), (u32)(t >> 32));
}

// HEAP_XCHG: t == BUSY takes the slot (returns the word taken, or BUSY
// when another lane holds it); any other t is the holder's release
// (returns BUSY, the word it replaced).
FN Term t32_xchg(DEV Term *h, u32 loc, Term t) {
  if (t == BUSY) {
    u32 hi = T32_XCHG(T32_HI(h, loc), BUSY_HI);
    if (hi == BUSY_HI) {
      return BUSY;
    }
    return T32_WORD(hi, T32_LD(T32_LO(h, loc)));
  }
  T32_ST(T32_LO(h, loc), (u32)t);
  u32 hi = T32_XCHG(T32_HI(h, loc), (u32)(t >> 32));
  return hi == BUSY_HI ? BUSY : T32_WORD(hi, (u32)t);
}

// HEAP_CAS on a word whose high half is fixed (word 0: hi(o) == hi(n)).
FN Term t32_cas(DEV Term *h, u32 loc, Term o, Term n) {
  u32 lo = T32_CAS(T32_LO(h, loc), (u32)o, (u32)n);
  return T32_WORD(T32_LD(T32_HI(h, loc)), lo);
}

#endif
