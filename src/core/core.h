// core.h: the contract between the WNF core (wnf.h) and the backends that
// compile it (CPU: cpu/cpu.h; device: dev/sim.c, dev/cuda/, dev/metal/).
// Portable dialect.
//
// A backend defines, BEFORE including wnf.h:
//   HEAP_LD(w, loc)            plain load of heap word `loc`
//   HEAP_ST(w, loc, t)         plain store
//   HEAP_XCHG(w, loc, t)       atomic exchange, returns the old word
//   HEAP_CAS(w, loc, old, new) atomic compare-and-swap, returns the old word
//   HEAP_REFILL(w, n)          give `w` a fresh arena of at least n words:
//                              sets w->next/w->end, returns 1, or 0 if the
//                              heap is exhausted (core then stops with WNF_OOM)
// and may define (the core falls back on HEAP_LD and HEAP_ST):
//   HEAP_LD_BOOK(w, loc)       load of a word of a book template, which
//                              nothing writes while the core runs
//   HEAP_ST_NEW(w, loc, t)     store of `t` (no SUB) into a node this worker
//                              allocated and has not published yet
// The core never calls libc, never recurses, never uses function pointers.

#ifndef HVM4G_CORE_H
#define HVM4G_CORE_H

#include "core/term.h"

// Address space of pointers to a worker's own data (the Wnf, out
// parameters). Empty in C and CUDA; Metal defines it as `thread`.
#ifndef THR
#define THR
#endif

// Status of a WNF run (Wnf.status). Anything but WNF_OK leaves the term the
// run started from rebuilt into a valid term graph (see wnf_run).
#define WNF_OK     0  // reached weak normal form
#define WNF_BUDGET 1  // interaction budget spent
#define WNF_DEFER  2  // a DUP slot is held elsewhere; Wnf.defer = its owner
#define WNF_HOST   3  // needs the host: Wnf.host = the term (PRI/GNF) to run
#define WNF_OOM    4  // heap exhausted
#define WNF_STACK  5  // evaluation stack exhausted
#define WNF_ERROR  6  // runtime error; Wnf.err = one of ERR_*

// Runtime errors (Wnf.err).
#define ERR_APP_NUM  1  // cannot apply a number
#define ERR_APP_CTR  2  // cannot apply a constructor
#define ERR_PRIM     3  // unknown primitive or bad argument
#define ERR_LABEL    4  // dynamic label is not a number
#define ERR_OTHER    5
#define ERR_LABEL_OWN 6 // dynamic label in the runtime's own range (LAB_OWN)
#define ERR_DUP_SELF 7  // a DUP's expression is one of its own copies
#define ERR_DUP_AGAIN 8 // a DUP met again while this run reduces it (wnf.h)
#define ERR_DUP_HOST 9  // the lazy core met an effect inside a DUP's reduction

// How DP0/DP1 take a DUP expression slot (Wnf.dup_mode).
#define DUP_SOLO   0  // one thread owns the heap: plain load/store
#define DUP_SHARED 1  // CPU pool: atomic exchange with BUSY; BUSY -> WNF_DEFER
#define DUP_OWNER  2  // device option 1: only the slot region's owner takes
#define DUP_ATOMIC 3  // device option 2: anyone takes; the loser defers

// One evaluator: a CPU thread or a device lane.
typedef struct {
  DEV Term      *heap;     // the heap (HEAP_* primitives may ignore it)
  DEV const u32 *book;     // book id -> template loc in the heap (0 = none)
  DEV const u32 *book_len; // book id -> template size in words
  u32            book_cnt; // number of book ids
  DEV Term      *stack;    // explicit WNF stack
  u32            stack_cap;
  u32            next;     // allocation arena [next, end)
  u32            end;
  u64            itrs;     // interactions performed (accumulates)
  u64            budget;   // stop (WNF_BUDGET) once itrs reaches this
  u32            dup_mode; // DUP_*
  u32            owner;    // region owner this task acts for (device)
  u32            region_shift; // region_id = loc >> region_shift
  u32            on_device;    // 1: %gnf is the identity; PRI -> WNF_HOST
  u32            status;   // WNF_*
  u32            err;      // ERR_* when status == WNF_ERROR
  u32            defer;    // owner to defer to when status == WNF_DEFER
  Term           host;     // the term needing the host when WNF_HOST
  u64            defers;   // deferrals counted (statistics)
  u32            host_at;  // heap slot holding `host` in the returned term
                           // (0: the returned term is `host` itself)
  u32            rule;     // last interaction run (R_*, rules.h): WNF_RULES builds
  u32            offer;    // interactions between offers of strict operands
                           // to other workers (sparks, wnf.h); 0: none
  u32            offer_twice;  // 1: only an operand found at two offer
                               // points in a row (wnf_offer_oldest)
  DEV u32       *stuck;    // device: one bit per heap word, the DUP slots
                           // this run found stuck (lane.h's WNF_STUCK)
} Wnf;

#define REGION_OF(w, loc) ((u32)(loc) >> (w)->region_shift)

// Warp model (the simulator's --warp-model, docs/gpu.md): a backend that
// steps its lanes in lock step defines WNF_WARP_STEP(w, branch), which the
// core and lane.h call where a lane's next step begins, naming the branch
// it runs; lanes of one warp at different branches in one round diverge.
// The other backends leave it empty (wnf.h's default).
#define WARP_ENTER      0x00000u  // | the tag entered (ENTER's switch)
#define WARP_APPLY      0x10000u  // | frame tag << 7 | value tag (APPLY's)
#define WARP_LANE_TAKE  0x20001u  // lane.h: read an entry's slot, check room
#define WARP_LANE_PUT   0x20002u  // lane.h: store a WNF, push its children
#define WARP_LANE_SPARK 0x20003u  // lane.h: claim an offered operand
#define WARP_LANE_END   0x20004u  // lane.h: save the arena, add the counters
#define WARP_LANE_POLL  0x20005u  // one more poll of a held DUP slot

#endif
