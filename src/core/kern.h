// kern.h: what the host and the device lanes share (portable dialect):
// frontier entries, pass arguments, pass counters. No WNF core here, so
// host code can include it.

#ifndef HVM4G_KERN_H
#define HVM4G_KERN_H

#include "core/core.h"

// Entries
// =======
// bits  0..31  loc      the heap slot to normalize
// bits 32..55  owner    the region this entry acts for (loc >> shift at
//                       first; the slot's region after a deferral)
// bits 56..61  tries    deferrals in a row (saturates at 63); children
//                       inherit it
// bit  62      SPK      `loc` is an offered operand (a spark, wnf.h): the
//                       lane claims it if it is still marked, reduces it
//                       to WNF only, and stores it back (lane_spark)
// bit  63      DPX      `loc` is the expression slot of a stuck DUP,
//                       reached from its DP0/DP1. DP0 and DP1 share that
//                       slot, so it is normalized once (claimed in the
//                       `seen` bitmap) and held with BUSY while the lane
//                       reduces it, as a DP0/DP1 elsewhere may take it.
// Owners need 24 bits: region_shift >= 8.

#define ENT_DPX         ((u64)1 << 63)
#define ENT_SPK         ((u64)1 << 62)
#define ENT_OWN_MASK    0xFFFFFFu
#define ENT_TRIES_MAX   63u
#define ENT(own, loc)   ((((u64)(own) & ENT_OWN_MASK) << 32) | (u64)(u32)(loc))
#define ENT_T(own, loc, tries) (ENT(own, loc) | ((u64)(tries) << 56))
#define ENT_LOC(e)      ((u32)(e))
#define ENT_OWN(e)      ((u32)((e) >> 32) & ENT_OWN_MASK)
#define ENT_TRIES(e)    ((u32)((e) >> 56) & ENT_TRIES_MAX)
#define ENT_IS_DPX(e)   (((e) & ENT_DPX) != 0)
#define ENT_IS_SPK(e)   (((e) & ENT_SPK) != 0)

// The next frontier's order after a step pass (CUDA's k_tag_keys, the
// simulator's gather_by_kind): entries grouped by the tag of the term they
// start at, so that a warp's lanes start in the same rule; sparks and
// stuck DUPs' slots apart. `tag` is the backend's read of TAG(heap[loc]).
#define ENT_KIND_SPK    126u
#define ENT_KIND_DPX    127u
#define ENT_KINDS       128u
#define ENT_KIND(e, tag) (ENT_IS_SPK(e) ? ENT_KIND_SPK : ENT_IS_DPX(e) ? ENT_KIND_DPX : (u32)(tag))

// Owner mode: an entry deferred this many times in a row takes DUP slots
// atomically on its next try. Nested DUPs whose slots live in different
// regions need both owners at once; without this they would bounce
// between the two owners forever. Once is enough: an entry that its
// owner must defer again is one such bounce, and each waits a pass (more
// tries made owner mode much slower than atomic on a SUP search). The
// children an entry walks or pushes keep its tries: below a node that was
// contended once (a tree another consumer copies through DUPs), each level
// would otherwise defer again and wait a pass.
#define ENT_ESCALATE    1u

// Most children one WNF can have (C16), plus the entry itself.
#define LANE_KIDS 17u

// Mark frontiers of at most this many entries are taken as spines (a
// list, a DUP chain) rather than a tree: pass.c's mark budget, compact.h's
// levels.
#define MARK_SPINES 8u

// Why the device stopped (PassCtl.stop): 0 = running, else a WNF_* status
// (HOST, OOM, STACK, ERROR) or one of these.
#define STOP_STALL 16  // passes made no progress (host loop decides)
#define STOP_SPACE 17  // frontier buffers could not grow (host loop decides)
#define STOP_FAULT 18  // the device failed (copy back, kernel fault)
#define STOP_LIMIT 19  // the run's heap growth passed GpuConf.grow (-C)
#define STOP_PASSES 20 // --max-passes reached
#define STOP_NARROW 21 // the frontier stayed too narrow to pay (--handoff)
#define STOP_NODEV 23    // no usable device: the CPU normalizes
#define STOP_UNSCOPED 22 // the program has unscoped binders: the CPU
                         // normalizes it, in one thread's order (gpu.c)
#define STOP_HEAP 24     // the live words do not fit the heap, which is the
                         // host's too (the simulator): the run ends with
                         // "heap exhausted: N live words"

// Counters of one pass, summed over lanes (atomics, once per lane).
typedef struct {
  u64 itrs;      // interactions
  u64 defers;    // entries deferred to an owner
  u64 pushes;    // entries pushed to the next frontier
  u64 done;      // entries that reached WNF (progress)
  u64 again;     // entries pushed back (budget, full segment, busy slot)
  u64 local;     // owner mode: deferrals resolved by the allocating lane
  u32 stop;      // first stop reason (0 = none)
  u32 stop_loc;  // where
  u32 stop_err;  // ERR_* when stop == WNF_ERROR
  u32 stop_pri;  // primitive id when stop == WNF_HOST
  u64 top;       // the device's heap top after the pass (backend fills)
  u64 oom;       // entries that found the heap full: rebuilt and pushed
                 // again, for the pass after a reclaim (pass.c)
} PassCtl;

// What every lane of a pass shares.
typedef struct {
  DEV Term      *heap;
  DEV const u32 *book;
  DEV const u32 *book_len;
  u32            book_cnt;
  u32            dup_mode;     // DUP_OWNER or DUP_ATOMIC
  u32            region_shift;
  u32            budget;       // interactions per entry (walk included)
  u32            stack_cap;    // words of stack per lane
  u32            cap;          // words of output segment per lane
  u32            shallow_inc;  // -C: leave what is under ↑, and stuck DUPs'
                               // expressions, as they are (the
                               // collapser reads them lazily, as on the CPU)
  u32            spark_gap;    // interactions between a lane's offers of
                               // strict operands (Wnf.offer; 0: none)
} PassArgs;

#endif
