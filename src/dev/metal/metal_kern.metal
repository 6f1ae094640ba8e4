// metal_kern.metal: the Metal kernels (MSL 3.2). The same pass kernel as
// the simulator and CUDA (lane.h, which includes the one WNF core), with
// the heap primitives of core.h in MSL; the host side is metal.c over
// metal_dev.m.
//
// Apple GPUs have no 64-bit atomic exchange or compare-and-swap (Apple8
// and Apple9 only have 64-bit min/max, without a result), so every heap
// word is two atomic_uint halves and a DUP slot is taken by an exchange
// on its high half (take32.h; docs/gpu.md, "The 32-bit DUP take"). The
// accesses are relaxed; take32.h places device-scope fences where one lane
// hands data to another within a dispatch (a take, a release, a SUB).
//
// `make metal-check` compiles this file as C++ against a shim of MSL
// (tests/metal/metal_stdlib) and runs it on CPU threads.

#include <metal_stdlib>
using namespace metal;

#if __METAL_VERSION__ < 320
#error "hvm4g's Metal kernels need MSL 3.2 (atomic_thread_fence): macOS 15"
#endif

#define DEV device
#define THR thread

#include "dev/metal/metal_abi.h"

FN u32 mtl_cas32(DEV atomic_uint *p, u32 o, u32 n) {
  u32 e = o;
  while (!atomic_compare_exchange_weak_explicit(p, &e, n, memory_order_relaxed,
                                                memory_order_relaxed)) {
    if (e != o) {
      return e;
    }
    e = o;   // failed spuriously: try again
  }
  return o;
}

#define T32              atomic_uint
#define T32_LD(p)        atomic_load_explicit((p), memory_order_relaxed)
#define T32_ST(p, v)     atomic_store_explicit((p), (v), memory_order_relaxed)
#define T32_XCHG(p, v)   atomic_exchange_explicit((p), (v), memory_order_relaxed)
#define T32_CAS(p, o, n) mtl_cas32((p), (o), (n))
#define T32_FENCE()      atomic_thread_fence(mem_flags::mem_device, \
                           memory_order_seq_cst, thread_scope_device)

#include "core/take32.h"

// The header words in front of the heap (metal_abi.h).
FN DEV atomic_uint *mtl_glob(DEV Term *heap) {
  return (DEV atomic_uint *)(heap - MTL_HDR);
}

// A fresh arena from the device's top: one compare-and-swap per refill.
// Owner mode: whole regions, aligned. The top never passes the capacity,
// so a failed refill leaves it for others; the last words of the heap go
// to exactly what one refill needs.
FN int mtl_refill(THR Wnf *w, u32 n) {
  DEV atomic_uint *g = mtl_glob(w->heap);
  u64 cap   = atomic_load_explicit(&g[MTL_G_CAP], memory_order_relaxed);
  u64 arena = atomic_load_explicit(&g[MTL_G_ARENA], memory_order_relaxed);
  u64 al    = atomic_load_explicit(&g[MTL_G_ALIGN], memory_order_relaxed);
  u32 top   = atomic_load_explicit(&g[MTL_G_TOP], memory_order_relaxed);
  for (;;) {
    u64 at  = top;
    u64 get = n > arena ? n : arena;
    if (al) {
      at  = (at + al - 1) & ~(al - 1);
      get = ((u64)n + al - 1) & ~(al - 1);
    }
    if (at + get > cap) {
      at  = top;
      get = n;
      if (at + get > cap) {
        return 0;
      }
    }
    u32 was = mtl_cas32(&g[MTL_G_TOP], top, (u32)(at + get));
    if (was == top) {
      w->next = (u32)at;
      w->end  = (u32)(at + get);
      return 1;
    }
    top = was;
  }
}

#define HEAP_LD(w, loc)        t32_ld((w)->heap, (loc))
#define HEAP_ST(w, loc, t)     t32_st((w)->heap, (loc), (t))
#define HEAP_XCHG(w, loc, t)   t32_xchg((w)->heap, (loc), (t))
#define HEAP_CAS(w, loc, o, n) t32_cas((w)->heap, (loc), (o), (n))
#define HEAP_REFILL(w, n)      mtl_refill((w), (n))

// A u64 counter as two atomic halves: the carry of the low half goes to
// the high half. The host reads it after the dispatch.
FN void mtl_add64(DEV u64 *p, u64 v) {
  DEV atomic_uint *h = (DEV atomic_uint *)p;
  u32 lo  = (u32)v;
  u32 old = atomic_fetch_add_explicit(&h[0], lo, memory_order_relaxed);
  u32 hi  = (u32)(v >> 32) + ((u32)(old + lo) < old ? 1u : 0u);
  if (hi) {
    atomic_fetch_add_explicit(&h[1], hi, memory_order_relaxed);
  }
}

#define GPU_ADD64(p, v)    mtl_add64((p), (v))
#define GPU_OR32(p, v)     atomic_fetch_or_explicit((DEV atomic_uint *)(p), \
                             (v), memory_order_relaxed)
#define GPU_CAS32(p, o, n) mtl_cas32((DEV atomic_uint *)(p), (o), (n))

#include "core/lane.h"

// Kernels
// =======
// Each takes the buffers it uses at their fixed indices (metal_abi.h).

// One thread per lane: entries lane, lane + lanes, ... of the frontier.
kernel void k_step(device Term          *hbuf     [[buffer(MB_HEAP)]],
                   device const u32     *book     [[buffer(MB_BOOK)]],
                   device const u32     *book_len [[buffer(MB_BOOK_LEN)]],
                   device const u64     *in       [[buffer(MB_IN)]],
                   device u64           *outs     [[buffer(MB_OUTS)]],
                   device u32           *out_n    [[buffer(MB_OUT_N)]],
                   device u32           *arena    [[buffer(MB_ARENA)]],
                   device Term          *stacks   [[buffer(MB_STACKS)]],
                   device u32           *seen     [[buffer(MB_SEEN)]],
                   device MtlRes        *res      [[buffer(MB_RES)]],
                   constant MtlArgs     &m        [[buffer(MB_ARGS)]],
                   uint                  lane     [[thread_position_in_grid]]) {
  if (lane >= m.lanes) {
    return;
  }
  PassArgs a;
  a.heap         = hbuf + MTL_HDR;
  a.book         = book;
  a.book_len     = book_len;
  a.book_cnt     = m.book_cnt;
  a.dup_mode     = m.dup_mode;
  a.region_shift = m.region_shift;
  a.budget       = m.budget;
  a.stack_cap    = m.stack_cap;
  a.cap          = m.cap;
  a.shallow_inc  = m.shallow_inc;
  a.spark_gap    = m.spark_gap;
  device PassCtl *ctl = &res->ctl;
  Lane L;
  lane_begin(&L, &a, lane, stacks, arena, outs);
  for (u64 i = lane; i < m.n; i += m.lanes) {
    u32 rem = (u32)((m.n - 1 - i) / m.lanes);
    lane_entry(&L, &a, seen, ctl, in[i], rem);
  }
  lane_end(&L, arena, lane, out_n, ctl);
}

// Lanes per scan thread.
FN u32 mtl_per(u32 lanes) {
  return (lanes + MTL_SCAN_T - 1) / MTL_SCAN_T;
}

// Thread t: the number of entries in segments [t*per, (t+1)*per).
kernel void k_sum(device const u32 *out_n [[buffer(MB_OUT_N)]],
                  device u32       *part  [[buffer(MB_PART)]],
                  constant MtlArgs &m     [[buffer(MB_ARGS)]],
                  uint              t     [[thread_position_in_grid]]) {
  if (t >= MTL_SCAN_T) {
    return;
  }
  u32 per = mtl_per(m.lanes);
  u64 lo  = (u64)t * per;
  u64 hi  = lo + per < m.lanes ? lo + per : m.lanes;
  u32 s   = 0;
  for (u64 i = lo; i < hi; i++) {
    s += out_n[i];
  }
  part[t] = s;
}

// One thread: the sums become the offsets of each thread's first segment;
// the total is the next frontier's size.
kernel void k_scan(device u32    *part [[buffer(MB_PART)]],
                   device MtlRes *res  [[buffer(MB_RES)]],
                   uint           t    [[thread_position_in_grid]]) {
  if (t != 0) {
    return;
  }
  u64 at = 0;
  for (u32 i = 0; i < MTL_SCAN_T; i++) {
    u32 s   = part[i];
    part[i] = (u32)at;
    at     += s;
  }
  res->total = at > 0xFFFFFFFFu ? 0xFFFFFFFFu : (u32)at;
}

// Thread t: the offsets of its segments.
kernel void k_off(device const u32 *out_n [[buffer(MB_OUT_N)]],
                  device u32       *off   [[buffer(MB_OFF)]],
                  device const u32 *part  [[buffer(MB_PART)]],
                  constant MtlArgs &m     [[buffer(MB_ARGS)]],
                  uint              t     [[thread_position_in_grid]]) {
  if (t >= MTL_SCAN_T) {
    return;
  }
  u32 per = mtl_per(m.lanes);
  u64 lo  = (u64)t * per;
  u64 hi  = lo + per < m.lanes ? lo + per : m.lanes;
  u32 at  = part[t];
  for (u64 i = lo; i < hi; i++) {
    off[i] = at;
    at    += out_n[i];
  }
}

// One thread per lane: its segment into the next frontier, in lane order.
kernel void k_gather(device const u64 *outs  [[buffer(MB_OUTS)]],
                     device const u32 *out_n [[buffer(MB_OUT_N)]],
                     device const u32 *off   [[buffer(MB_OFF)]],
                     device u64       *next  [[buffer(MB_NEXT)]],
                     constant MtlArgs &m     [[buffer(MB_ARGS)]],
                     uint              lane  [[thread_position_in_grid]]) {
  if (lane >= m.lanes) {
    return;
  }
  device const u64 *src = outs + (u64)lane * m.cap;
  device u64       *dst = next + off[lane];
  for (u32 i = 0; i < out_n[lane]; i++) {
    dst[i] = src[i];
  }
}
