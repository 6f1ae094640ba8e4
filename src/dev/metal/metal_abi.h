// metal_abi.h: what the Metal host code and the Metal kernels share
// (portable dialect): buffer and kernel numbers, the heap buffer's header,
// the per-pass scalars and the counters read back after a pass.

#ifndef HVM4G_METAL_ABI_H
#define HVM4G_METAL_ABI_H

#include "core/kern.h"

// Buffers: a kernel's [[buffer(i)]] argument is buffer i, the same for
// every kernel, so the host binds each buffer at its own index.
#define MB_HEAP     0   // MTL_HDR header words, then the heap
#define MB_BOOK     1   // book id -> template loc
#define MB_BOOK_LEN 2   // book id -> template words
#define MB_IN       3   // this pass's frontier
#define MB_NEXT     4   // the next frontier (gathered); swapped with MB_IN
#define MB_OUTS     5   // lane segments, `cap` entries each
#define MB_OUT_N    6   // entries per segment
#define MB_OFF      7   // segment offsets in the next frontier
#define MB_ARENA    8   // per lane: arena next, end
#define MB_STACKS   9   // per lane: WNF stack
#define MB_SEEN     10  // one bit per heap word: stuck DUP slots claimed
#define MB_RES      11  // MtlRes: pass counters, next frontier size
#define MB_PART     12  // MTL_SCAN_T partial sums of segment sizes
#define MB_ARGS     13  // MtlArgs
#define MB_COUNT    14

// Kernels, in the order a pass runs them.
#define MK_STEP     0   // one thread per lane: the lane's entries
#define MK_SUM      1   // MTL_SCAN_T threads: sums of segment sizes
#define MK_SCAN     2   // one thread: exclusive scan of the sums, total
#define MK_OFF      3   // MTL_SCAN_T threads: segment offsets
#define MK_GATHER   4   // one thread per lane: its segment into MB_NEXT
#define MK_COUNT    5

#define MTL_SCAN_T  256u

// The heap buffer starts with MTL_HDR words of header, as u32s: the
// device's heap top, capacity and arena size, and the owner-mode arena
// alignment (0: none). The header rides with the heap so that HEAP_REFILL
// reaches it from the lane's heap pointer (MSL has no mutable globals).
#define MTL_HDR     4u
#define MTL_G_TOP   0
#define MTL_G_CAP   1
#define MTL_G_ARENA 2
#define MTL_G_ALIGN 3

// Scalars of a pass (constant buffer MB_ARGS).
typedef struct {
  u32 n;            // entries in MB_IN
  u32 lanes;        // lanes running this pass (<= n)
  u32 cap;          // entries per lane segment
  u32 budget;       // interactions per entry
  u32 stack_cap;    // stack words per lane
  u32 book_cnt;
  u32 dup_mode;
  u32 region_shift;
  u32 shallow_inc;  // PassArgs.shallow_inc
  u32 spark_gap;    // PassArgs.spark_gap
} MtlArgs;

// Read back after a pass (MB_RES).
typedef struct {
  PassCtl ctl;
  u32     total;    // entries in the next frontier (saturated)
  u32     pad;
} MtlRes;

#endif
