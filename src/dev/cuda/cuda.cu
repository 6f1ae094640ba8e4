// cuda.cu: the CUDA backend (sm_90 and newer). The same pass kernel as the
// simulator (lane.h, which includes the one WNF core), one launch per pass,
// the host loop in pass.c.
//
// Device memory, allocated once per process (cu_warm, on a background
// thread when the program asks for the device early): the heap (as large
// as RT->heap.cap, or what fits), the book tables, two frontiers, one output
// segment per lane, the lane stacks and arenas, the `seen` bitmap and the
// packing's `live` and `rank` bitmaps. A run copies the used heap range
// [0, top) in, keeps a copy of it at the heap's end (the shadow the changed
// words are found against), and copies out only the live words it
// allocated and the words below top it changed (compact.h), through a
// pinned staging buffer. Where the run can reach few of the used words,
// only those are copied in (reach.h, copy_in).
//
// A pass: step kernel (one thread = one lane), a scan of the segment
// sizes (CUB), a gather kernel that concatenates the segments in lane
// order, and one small copy back (counters + next frontier size). Mark
// passes of the packing run the same way with the mark kernel.

#include <cuda_runtime.h>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FN static __device__ inline
#include "core/tune.h"
#include "dev/dev.h"
#include "dev/reach.h"

// Heap primitives of core.h (docs/gpu.md, "Memory ordering").
//
// Lanes share heap words in one pass only through DUP slots and the SUBs
// written into binder slots, and every such hand-over is a release by the
// writer (the store that gives a slot back, or the store of a SUB): its
// earlier stores reach L2 before the word that publishes them (but for the
// SUB of a number or another word with no location, which publishes
// nothing: cu_give). The reader
// reads that word (the exchange that takes a slot, or the load that finds
// a SUB) and then only locations computed from it, with volatile loads
// that L1 never serves (L1 is not coherent across SMs): each is issued
// after the word it depends on has come back, and L2 serves it. So
// compare-and-swaps are acq_rel at GPU scope, takes relaxed, a SUB is
// stored with release, loads are volatile.
__device__ unsigned long long D_TOP;   // global heap top (words)
__device__ unsigned long long D_CAP;   // heap capacity (words)
__device__ unsigned int       D_ARENA; // words per refill

__device__ inline Term cu_xchg(Term *p, Term t) {
  unsigned long long r;
  asm volatile("atom.acq_rel.gpu.global.exch.b64 %0, [%1], %2;"
               : "=l"(r) : "l"(p), "l"((unsigned long long)t) : "memory");
  return (Term)r;
}

// Taking a DUP slot (an exchange against BUSY) is relaxed: BUSY publishes
// nothing (no release), and what the slot's last holder published is read
// as every SUB a VAR finds is: by volatile loads, which L1 never serves,
// of locations computed from the word taken (docs/gpu.md, "Memory
// ordering"). An acquire there would only invalidate the multiprocessor's
// L1 (CCTL.IVALL) under every lane's stack, which made every program slower.
__device__ inline Term cu_take(Term *p) {
  unsigned long long r;
  asm volatile("atom.relaxed.gpu.global.exch.b64 %0, [%1], %2;"
               : "=l"(r) : "l"(p), "l"((unsigned long long)BUSY) : "memory");
  return (Term)r;
}

// A release store: what the lane wrote before is seen by whoever reads
// `t` with an acquire. Giving back a slot the lane holds (BUSY) is one: no
// other lane writes the slot meanwhile, so no read-modify-write is needed.
// But the SUB of a word with no location (a number, an eraser, a name)
// points nowhere: its reader reads nothing through it, so nothing needs
// publishing, and it is a relaxed store, without the fence. That covers a
// DUP-NOD's give and, through cu_st, APP-LAM's substitution of a number
// (the fence it saves is a large share of a lane's time).
__device__ inline void cu_give(Term *p, Term t) {
  if (IS_SUB(t) && !HAS_LOC(TAG(t))) {
    *(volatile Term *)p = t;
    return;
  }
  asm volatile("st.release.gpu.global.b64 [%0], %1;"
               :: "l"(p), "l"((unsigned long long)t) : "memory");
}

__device__ inline Term cu_cas(Term *p, Term o, Term n) {
  unsigned long long r;
  asm volatile("atom.acq_rel.gpu.global.cas.b64 %0, [%1], %2, %3;"
               : "=l"(r) : "l"(p), "l"((unsigned long long)o),
                 "l"((unsigned long long)n) : "memory");
  return (Term)r;
}

// A SUB publishes what it points to: cu_give's store (a release, but for
// a SUB that points nowhere); any other word is the lane's own until a
// release publishes it.
__device__ inline void cu_st(Term *p, Term t) {
  if (IS_SUB(t)) {
    cu_give(p, t);
    return;
  }
  *(volatile Term *)p = t;
}

// Owner mode (D_ALIGN != 0): arenas are whole regions, so each region a
// pass allocates in has exactly one allocating lane. The run's top starts
// aligned (cu_open) and grows by whole regions, so a refill is one add.
__device__ unsigned long long D_ALIGN;

// Out of line: rare, and its atomic and arithmetic would hold registers in
// k_step's hot loop (`make cuda-regs`).
__device__ __noinline__ int cu_refill(Wnf *w, u32 n) {
  unsigned long long al = D_ALIGN;
  unsigned long long want = al == 0 ? (n > D_ARENA ? n : D_ARENA)
                                    : ((unsigned long long)n + al - 1) & ~(al - 1);
  unsigned long long at = atomicAdd(&D_TOP, want);
  if (at + want > D_CAP) {
    return 0;   // D_TOP stays past the end: every later refill fails too
  }
  w->next = (u32)at;
  w->end  = (u32)(at + want);
  return 1;
}

// --take=32: Apple's scheme, every word as two 32-bit halves and DUP
// slots taken on the high half (take32.h), as a cross-check of it on real
// hardware. The WNF core is compiled twice below, D_TAKE32 a constant in
// each: t64::k_step for the 64-bit take, t32::k_step for this one. A
// runtime flag tested at every heap access instead made k_step several
// times larger, with more spills.

#define T32              unsigned int
#define T32_LD(p)        (*(volatile unsigned int *)(p))
#define T32_ST(p, v)     (*(volatile unsigned int *)(p) = (v))
#define T32_XCHG(p, v)   atomicExch((p), (v))
#define T32_CAS(p, o, n) atomicCAS((p), (o), (n))
#define T32_FENCE()      __threadfence()
#include "core/take32.h"

// The heap's base: the Wnf's, for the 32-bit take's cross-check; the
// 64-bit take reads it from constant memory inside each address's own
// computation (cu_heap_at). Read from the Wnf, it was a load from the
// lane's frame before every heap access: the frame's address goes to the
// rules kept out of line, so each heap store (through a pointer that might
// reach the frame) and each "memory" clobber made the compiler read it
// again (a third of k_step's local loads). As one asm that loads the
// constant and computes the address, a pure function of loc, nothing
// invalidates it. (A __constant__ base the compiler kept in registers, or
// read with a volatile asm at each use, was slower.)
#define HEAP_BASE(w)           ((w)->heap)
__constant__ Term *D_HEAP;
__device__ inline Term *cu_heap_at(u32 loc) {
  Term *p;
  asm("{ .reg .u64 b; ld.const.u64 b, [D_HEAP]; mad.wide.u32 %0, %1, 8, b; }"
      : "=l"(p) : "r"(loc));
  return p;
}
#define HEAP_AT(w, loc)        cu_heap_at(loc)

#define HEAP_LD(w, loc)        (D_TAKE32 ? t32_ld(HEAP_BASE(w), (loc)) : \
  *(volatile Term *)HEAP_AT(w, loc))
#define HEAP_ST(w, loc, t)     (D_TAKE32 ? t32_st(HEAP_BASE(w), (loc), (t)) : \
  cu_st(HEAP_AT(w, loc), (t)))
#define HEAP_XCHG(w, loc, t)   (D_TAKE32 ? t32_xchg(HEAP_BASE(w), (loc), (t)) : \
  (t) == BUSY ? cu_take(HEAP_AT(w, loc)) : cu_xchg(HEAP_AT(w, loc), (t)))
#define HEAP_PUT_HELD(w, loc, t) (D_TAKE32 ? (void)t32_xchg(HEAP_BASE(w), (loc), (t)) : \
  cu_give(HEAP_AT(w, loc), (t)))
#define HEAP_CAS(w, loc, o, n) (D_TAKE32 ? t32_cas(HEAP_BASE(w), (loc), (o), (n)) : \
  cu_cas(HEAP_AT(w, loc), (o), (n)))
#define HEAP_REFILL(w, n)      cu_refill((w), (n))

// Book templates are written before the kernel and only read during it:
// loads through the read-only path, which need not be volatile (so the
// four of wnf_instance are in flight together). A fresh node's words are
// the lane's own until a release publishes them: plain stores, without
// cu_st's test for a SUB (a predicated fence in front of each).
#define HEAP_LD_BOOK(w, loc)   (D_TAKE32 ? t32_ld(HEAP_BASE(w), (loc)) : \
  (Term)__ldg((const unsigned long long *)HEAP_AT(w, loc)))
#define HEAP_ST_NEW(w, loc, t) (D_TAKE32 ? t32_st(HEAP_BASE(w), (loc), (t)) : \
  (void)(*HEAP_AT(w, loc) = (t)))

// --dup-wait=N (wnf.h, HEAP_WAIT_POLLS): a lane that finds a DUP slot held
// polls it up to N times, about WAIT_NS (tune.h) apart, before it defers.
__constant__ u32 D_WAIT;
#define HEAP_WAIT_POLLS(w)  D_WAIT
#define HEAP_PAUSE(w, loc)  __nanosleep(WAIT_NS)

#define GPU_ADD64(p, v)    atomicAdd((unsigned long long *)(p), (unsigned long long)(v))
#define GPU_ADD32(p, v)    atomicAdd((unsigned int *)(p), (unsigned int)(v))
#define GPU_POPC32(x)      ((u32)__popc(x))
#define GPU_OR32(p, v)     atomicOr((unsigned int *)(p), (unsigned int)(v))
#define GPU_CAS32(p, o, n) atomicCAS((unsigned int *)(p), (unsigned int)(o), (unsigned int)(n))

// The step kernel's core, once a take: lane.h (and wnf.h in it) read
// D_TAKE32 through the HEAP_* macros above. Their include guards are
// lifted between the two; what they include is already in.
#include "core/core.h"
#include "core/rules.h"
#include "core/kern.h"
namespace t64 {
#define D_TAKE32 0
#include "core/lane.h"
}
#undef D_TAKE32
#undef HVM4G_LANE_H
#undef HVM4G_WNF_H
namespace t32 {
#define D_TAKE32 1
#include "core/lane.h"
}
#undef D_TAKE32
#include "core/compact.h"


// Kernels
// =======

// Counters of a pass and the size of the next frontier: one copy back.
struct PassRes {
  PassCtl ctl;
  u32     total;
  u32     nroots;  // packing: changed words found (k_diff)
  u32     bad;     // packing: pointers to unmarked words (must stay 0)
  u32     cut;     // packing: lanes a mark pass left with words to scan
  u32     side;    // mark levels: which buffer holds the frontier left
};

// The step kernel's shape: LANE_TPB threads a block, K_STEP_BLOCKS blocks a
// multiprocessor holds at once (tune.h); ptxas fits the registers to that
// (`make cuda-regs`), trading a few spills for more warps. An architecture
// holds at most ARCH_BLOCKS blocks a multiprocessor (the CUDA guide's
// table; an unknown newer one gets the smallest, which is always valid).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || \
    __CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1030
#define ARCH_BLOCKS 32
#elif __CUDA_ARCH__ == 890 || __CUDA_ARCH__ == 1200 || __CUDA_ARCH__ == 1210
#define ARCH_BLOCKS 24
#else
#define ARCH_BLOCKS 16
#endif
#define K_STEP_MIN_BLOCKS (K_STEP_BLOCKS < ARCH_BLOCKS ? K_STEP_BLOCKS : ARCH_BLOCKS)

// The sum and the maximum of v over the lanes of warp mask m: one
// instruction from sm_80 on, a shuffle from each lane before it (Turing).
static __device__ __forceinline__ u32 warp_sum(u32 m, u32 v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(m, v);
#else
  u32 s = 0;
  for (u32 i = 0; i < 32; i++) {
    u32 x = __shfl_sync(m, v, (int)i);
    if ((m >> i) & 1u) s += x;
  }
  return s;
#endif
}

#if LANE_BALANCE
static __device__ __forceinline__ u32 warp_max(u32 m, u32 v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_max_sync(m, v);
#else
  u32 t = 0;
  for (u32 i = 0; i < 32; i++) {
    u32 x = __shfl_sync(m, v, (int)i);
    if (((m >> i) & 1u) && x > t) t = x;
  }
  return t;
#endif
}
#endif

// LANE_BALANCE (tune.h, a diagnostic): how evenly a warp's lanes share a
// pass's interactions: their sum against 32 times the busiest lane's, over
// every warp of every pass, printed when the run closes. The warp's lanes
// meet at __syncwarp first: __activemask() alone, where lanes arrive at
// different times, would name each lane alone.
#if LANE_BALANCE
__device__ unsigned long long D_BAL[2];
static __device__ void lane_balance(u32 m, u64 itrs) {
  __syncwarp(m);
  u32 v   = itrs > 0xFFFFFFFFull ? 0xFFFFFFFFu : (u32)itrs;
  u32 sum = warp_sum(m, v);
  u32 top = warp_max(m, v);
  if ((threadIdx.x & 31u) == (u32)__ffs(m) - 1u) {
    atomicAdd(&D_BAL[0], (unsigned long long)sum);
    atomicAdd(&D_BAL[1], 32ull * top);
  }
}
static void balance_report(void) {
  unsigned long long b[2] = { 0, 0 };
  cudaDeviceSynchronize();
  if (cudaMemcpyFromSymbol(b, D_BAL, sizeof b) == cudaSuccess) {
    gpu_balance_print(b[0], b[1]);
  }
}
#endif
// LANE_CLOCK (tune.h, a diagnostic): each pass's lanes timed with the global
// timer, printed per pass: when the first and last lanes started, when
// the last ended, the longest lane, the mean of lanes with work, and lane
// time per interaction. Whether a pass lasts as long as its longest lane
// (a serial tail) or as its work over the machine's throughput.
#if LANE_CLOCK
__device__ unsigned long long D_CLK[7];  // min start, max start, max end,
                                         // longest, sum, itrs, lanes
static __device__ u64 clk_now(void) {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// Combines v over the warp's first n lanes (op 0 min, 1 max, 2 sum).
static __device__ u64 clk_warp(u32 m, u32 n, u64 v, int op) {
  u32 me = threadIdx.x & 31u;
  for (u32 off = 16; off; off >>= 1) {
    u64 o = __shfl_down_sync(m, v, off);
    if (me + off < n) v = op == 0 ? (o < v ? o : v) : op == 1 ? (o > v ? o : v) : v + o;
  }
  return v;
}
static __device__ void lane_clock(u32 m, u64 t0, u64 itrs) {
  __syncwarp(m);
  u64 t1   = clk_now();
  u32 n    = (u32)__popc(m);
  u64 d    = itrs ? t1 - t0 : 0;
  u64 mn   = clk_warp(m, n, t0, 0);
  u64 ms   = clk_warp(m, n, t0, 1);
  u64 me   = clk_warp(m, n, t1, 1);
  u64 lg   = clk_warp(m, n, d, 1);
  u64 sm   = clk_warp(m, n, d, 2);
  u64 it   = clk_warp(m, n, itrs, 2);
  u64 nw   = clk_warp(m, n, itrs ? 1 : 0, 2);
  if ((threadIdx.x & 31u) == 0u) {
    atomicMin(&D_CLK[0], mn);
    atomicMax(&D_CLK[1], ms);
    atomicMax(&D_CLK[2], me);
    atomicMax(&D_CLK[3], lg);
    atomicAdd(&D_CLK[4], sm);
    atomicAdd(&D_CLK[5], it);
    atomicAdd(&D_CLK[6], nw);
  }
}
static void clock_begin(void) {
  unsigned long long z[7] = { ~0ull, 0, 0, 0, 0, 0, 0 };
  cudaMemcpyToSymbol(D_CLK, z, sizeof z);
}
static void clock_print(u32 n, unsigned *pass) {
  unsigned long long c[7];
  if (cudaMemcpyFromSymbol(c, D_CLK, sizeof c) != cudaSuccess || !c[6]) return;
  fprintf(stderr, "- Lane clock: pass %u, %u entries, %llu lanes with work, "
          "%llu itrs, span %.0f us, starts over %.0f us, longest %.0f us, "
          "mean %.0f us, %.0f lane-ns/itr\n", ++*pass, n, c[6], c[5],
          (c[2] - c[0]) / 1e3, (c[1] - c[0]) / 1e3, c[3] / 1e3,
          c[4] / 1e3 / c[6], c[5] ? (double)c[4] / c[5] : 0.0);
}
#endif
namespace t64 {
#include "dev/cuda/cuda_step.cuh"
}
namespace t32 {
#include "dev/cuda/cuda_step.cuh"
}

__global__ void k_mark(CompactArgs c, const u64 *in, u32 n, u32 lanes,
                       u64 *outs, u32 *out_n) {
  u32 lane = blockIdx.x * blockDim.x + threadIdx.x;
  if (lane >= lanes) return;
  MarkLane M;
  mark_begin(&M, &c, lane, outs);
  for (u64 i = lane; i < n; i += lanes) {
    u32 rem = (u32)((n - 1 - i) / lanes);
    mark_entry(&M, &c, in[i], rem);
  }
  mark_end(&M, &c, out_n, lane);
}

// Mark levels of a narrow frontier in one block (compact.h, mark_level):
// `lv[0]` holds the n entries; the frontier left (0 entries, a spine's
// few, or more than MARK_BLOCK_MAX) ends in lv[res->side], res->total long.
#define MARK_BLOCK_TPB 1024
__global__ void __launch_bounds__(MARK_BLOCK_TPB)
k_mark_levels(CompactArgs c, u64 *lv0, u64 *lv1, u32 n, PassRes *res) {
  __shared__ u32 cnt;
  u64 *cur = lv0, *nxt = lv1;
  while (MARK_BLOCK(n)) {
    if (threadIdx.x == 0) cnt = 0;
    __syncthreads();
    for (u32 i = threadIdx.x; i < n; i += blockDim.x) {
      mark_level(&c, cur[i], nxt, &cnt);
    }
    __syncthreads();
    n = cnt;
    u64 *t = cur; cur = nxt; nxt = t;
    __syncthreads();   // every thread has read cnt before it is cleared
  }
  if (threadIdx.x == 0) {
    res->total = n;
    res->side  = cur == lv1;
  }
}

// Grid-stride loops of the packing (compact.h), one item per thread.
__global__ void k_diff(CompactArgs c) {
  u64 step = (u64)gridDim.x * blockDim.x;
  for (u64 i = 1 + blockIdx.x * (u64)blockDim.x + threadIdx.x; i < c.top0;
       i += step) {
    compact_diff(&c, i);
  }
}

// The first mark frontier: the changed words' values (compact.h).
__global__ void k_roots(const Term *heap, const u32 *roots, u32 n, u64 *in) {
  u64 step = (u64)gridDim.x * blockDim.x;
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += step) {
    in[i] = heap[roots[i]];
  }
}

// Count and rank a warp at a time (compact.h's compact_count and
// compact_rank, one thread a chunk, left each lane's loads and stores 1 KB
// from its neighbours', uncoalesced). A warp's lanes take 32 consecutive bitmap
// words; grid-stride by warps, so every lane of a warp runs the same
// iterations and the full-mask shuffles are safe.
#define WARP_ID    ((blockIdx.x * (u64)blockDim.x + threadIdx.x) >> 5)
#define WARPS      (((u64)gridDim.x * blockDim.x) >> 5)
#define LANE       (threadIdx.x & 31u)
#define FULL_MASK  0xFFFFFFFFu

// Live words per rank chunk: sums[c] = compact_count(c).
__global__ void k_count(CompactArgs c, u64 chunks, u64 words, u32 *sums) {
  for (u64 ch = WARP_ID; ch < chunks; ch += WARPS) {
    u32 s = 0;
    for (u64 w = ch * RANK_CHUNK + LANE; w < (ch + 1) * RANK_CHUNK; w += 32) {
      if (w < words) s += __popc(c.live[w]);
    }
    s = warp_sum(FULL_MASK, s);
    if (LANE == 0) sums[ch] = s;
  }
}

// Each bitmap word's rank, from its chunk's (compact_rank).
__global__ void k_rank(CompactArgs c, u64 chunks, u64 words,
                       const u32 *base) {
  for (u64 ch = WARP_ID; ch < chunks; ch += WARPS) {
    u32 at = base[ch];
    for (u64 w = ch * RANK_CHUNK + LANE; w < (ch + 1) * RANK_CHUNK; w += 32) {
      u32 n = w < words ? __popc(c.live[w]) : 0;
      u32 incl = n;   // inclusive scan over the warp
      for (u32 d = 1; d < 32; d <<= 1) {
        u32 t = __shfl_up_sync(FULL_MASK, incl, d);
        if (LANE >= d) incl += t;
      }
      if (w < words) c.rank[w] = at + incl - n;
      at += __shfl_sync(FULL_MASK, incl, 31);
    }
  }
}

// Bitmap words [lo, hi): one piece of the copy out (cu_close). A lane a
// bitmap word: a warp a bitmap word, a lane a live word, was coalesced but
// slower on dense results.
__global__ void k_copy(CompactArgs c, u64 lo, u64 hi, Term *dst) {
  u64 step = (u64)gridDim.x * blockDim.x;
  for (u64 i = lo + blockIdx.x * (u64)blockDim.x + threadIdx.x; i < hi;
       i += step) {
    compact_copy(&c, i, dst);
  }
}

__global__ void k_root_vals(CompactArgs c, u32 n, Term *vals) {
  u64 step = (u64)gridDim.x * blockDim.x;
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += step) {
    compact_root(&c, i, vals);
  }
}

// Reclaiming in place (pass.c, compact.h): the frontier's slots as mark
// roots, the entries relocated, the claims moved, the roots' values put.
__global__ void k_slots(const u64 *keep, u32 n, u64 *in) {
  u64 step = (u64)gridDim.x * blockDim.x;
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += step) {
    in[i] = compact_slot(keep[i]);
  }
}

__global__ void k_entries(CompactArgs c, const u64 *keep, u32 n, u32 shift,
                          u64 *in) {
  u64 step = (u64)gridDim.x * blockDim.x;
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += step) {
    in[i] = compact_entry(&c, keep[i], shift);
  }
}

__global__ void k_claims(CompactArgs c, const u32 *old, u64 old_w0,
                         u32 *seen, u64 words) {
  u64 step = (u64)gridDim.x * blockDim.x;
  for (u64 w = blockIdx.x * (u64)blockDim.x + threadIdx.x; w < words;
       w += step) {
    compact_claims(&c, old, old_w0, seen, w);
  }
}

__global__ void k_put_roots(Term *heap, const u32 *roots, u32 n,
                            const Term *vals) {
  u64 step = (u64)gridDim.x * blockDim.x;
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += step) {
    heap[roots[i]] = vals[i];
  }
}

// The sum of n counts after their exclusive scan, to *total (saturated at
// 2^32 - 1), and the device's top to res->ctl.top.
__global__ void k_total(const u32 *cnt, const u32 *off, u64 n, u32 *total,
                        PassRes *res) {
  unsigned long long s = n ? (unsigned long long)off[n - 1] + cnt[n - 1] : 0;
  *total       = s > 0xFFFFFFFFull ? 0xFFFFFFFFu : (u32)s;
  res->ctl.top = D_TOP;
}

// The copy out's pieces (cu_close): piece p's live words start at
// at[p], the rank of rank chunk p * n / PIECES; at[PIECES] is the total.
// PIECES and PIECE_MIN (bytes): tune.h.

__global__ void k_pieces(const u32 *base, u64 n, const PassRes *res,
                         u32 *at) {
  for (u32 p = 0; p < PIECES; p++) at[p] = n ? base[p * n / PIECES] : 0u;
  at[PIECES] = res->total;
}

// Gathers the lanes' output segments into the next frontier. A lane's
// segment holds what its walk pushed, biggest first: the siblings it left
// on the way down, from near the root of its entry to near the leaves. A
// pass hands entry i to lane i % lanes, so copied segment after segment a
// warp took one segment. Each warp here takes 32 segments and lays them
// out push by push (every segment's first entry, then every second...),
// in their same range of the frontier, so that a warp of the next pass
// gets entries pushed at the same depth (less divergence than segment
// order).
__global__ void k_gather(const u64 *outs, u32 cap, const u32 *cnt,
                         const u32 *off, u32 lanes, u64 *next) {
  u32 warp  = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  u32 me    = threadIdx.x & 31u;
  u32 warps = (gridDim.x * blockDim.x) >> 5;
  u32 below = (1u << me) - 1u;
  for (u32 g = warp * 32u; g < lanes; g += warps * 32u) {
    u32 l    = g + me;
    u32 c    = l < lanes ? cnt[l] : 0u;
    u32 at   = off[g];
    const u64 *src = outs + (u64)l * cap;
    for (u32 j = 0;; j++) {
      u32 has = __ballot_sync(0xFFFFFFFFu, j < c);
      if (has == 0u) break;
      if (j < c) next[at + (u32)__popc(has & below)] = src[j];
      at += (u32)__popc(has);
    }
  }
}

// Host side
// =========

// Pin ahead (pin_start): the chunks of the host heap above the run's top
// pinned so far, for its copy out.
typedef struct {
  char *lo;      // first page (it may hold host words below the top)
  u64   want;    // bytes to pin
  u32   n;       // chunks pinned: [lo, lo + n * PIN_CHUNK)
  int   done;    // no more (reached want, or pinning failed)
} PinAhead;

// RT's part of the backend (RT->dev->cuda, reached through gpu_cuda_part):
// its run, and the pages of its host heap pinned for the copy out, which
// stay pinned until its next run or its close (cu_release). Made at its
// first run or context (cu_part).
struct CuRt {
  u64         want;   // heap words the next run asks for (after a full one)
  u64         top0;   // host top when the run began
  u64         dcap;   // allocation limit of this run (the shadow above)
  PassArgs    a;
  u32         wait;   // D_WAIT as last set (~0: not yet this run)
  CompactArgs c;
  u64         nroots; // packing: changed words found
  Reach       reach;  // copy in: the words the run may read
  PinAhead    pin;
  char       *tail;   // the result's tail past the chunks, pinned behind
                      // the packing (tail_pin)
  unsigned    clock_pass;  // LANE_CLOCK: passes printed
};

static CuRt *cu_rt(void) {
  return *gpu_cuda_part();
}

// RT's part, made at its first run (NULL: out of memory, said in `err`).
static CuRt *cu_part(char *err, unsigned errlen) {
  CuRt **p = gpu_cuda_part();
  if (!*p) *p = (CuRt *)gpu_part_new(sizeof(CuRt), err, errlen);
  return *p;
}

// The device's buffers and what the probe found: one set for the process,
// since the device is (dev.h); a run, the probe and the context's making
// use them under the device's lock (gpu.c), one at a time. The sizes the
// buffers were made for (lanes, stacks, heap) and the bitmap words the last
// run may have set (seen_used, live_used) go with them.
static struct {
  int        probed;
  int        ok;
  char       why[192];  // why the device is not usable (cu_why), once
                        // cu_avail has said so
  int        sms;       // multiprocessors
  u32        dflt_lanes; // lanes when --lanes is not given (0: not sized)
  Term      *heap;      // device heap
  u64        cap;       // its words
  u32       *book;
  u32       *book_len;
  u32        book_max;  // allocated entries
  u64       *in;
  u64        in_cap;
  u64       *outs;
  u64        outs_cap;
  u32       *out_n;
  u32       *off;
  u32       *arena;
  Term      *stacks;
  u32       *seen;      // one bit per heap word: cap / 32 + 1 words
  u32       *live;      // packing, same size
  u32       *rank;      // packing, same size
  u64        seen_used; // bitmap words the last run may have set
  u64        live_used;
  u32       *roots;     // packing: changed words
  u64        roots_cap;
  u64       *lv[2];     // packing: the mark levels' two frontiers
  u32       *sums;      // packing: per rank chunk
  u64        sums_cap;
  Term      *dst;       // packing: the live words, when not in the heap
  u64        dst_cap;
  u64       *keep;      // reclaiming: the frontier, kept aside; a
                        // bounded pass: its waiting entries (cu_pass)
  u64        keep_cap;
  u32       *claims;    // reclaiming: the claims of the run's words
  u64        claims_cap;
  void      *scan_tmp;  // CUB's scan buffer
  u64        scan_cap;  // its bytes
  unsigned char *key[2]; // the frontier's tags, sorted from [0] (cu_sort_tags)
  u64        key_cap[2];
  u64       *alt;       // the sort's second buffer of entries
  u64        alt_cap;
  void      *sort_tmp;  // CUB's sort buffer
  u64        sort_cap;  // its bytes
  Term      *stage;     // pinned host staging buffer
  u64        stage_cap; // bytes
  PassRes   *res;
  cudaStream_t out;     // copies out, behind the packing's pieces
  cudaEvent_t  done[PIECES]; // a piece packed
  u32        lanes;
  u32        req_lanes; // lanes asked for (lanes: what fit)
  u32        stack_cap;
} C;

#define CK(call, what)                                                   \
  do {                                                                   \
    cudaError_t e_ = (call);                                             \
    if (e_ != cudaSuccess) {                                             \
      snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(e_));     \
      cudaGetLastError();                                                \
      return -1;                                                         \
    }                                                                    \
  } while (0)

// The first device, if this binary can run on it: compute capability 7.5
// or later, and code for it (SASS, or PTX the driver compiles) in the
// binary. Any other outcome leaves the reason in C.why.
static int cu_probe(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0)) {
    snprintf(C.why, sizeof C.why, "no CUDA device");
    return 0;
  }
  if (e == cudaErrorInsufficientDriver) {
    snprintf(C.why, sizeof C.why, "the NVIDIA driver is older than this build's CUDA %d.%d",
             CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
    return 0;
  }
  if (e != cudaSuccess) {
    snprintf(C.why, sizeof C.why, "no usable NVIDIA driver (%s)", cudaGetErrorString(e));
    return 0;
  }
  cudaDeviceProp p;
  if ((e = cudaGetDeviceProperties(&p, 0)) != cudaSuccess) {
    snprintf(C.why, sizeof C.why, "cannot read the GPU's properties (%s)", cudaGetErrorString(e));
    return 0;
  }
  if (p.major * 10 + p.minor < 75) {
    snprintf(C.why, sizeof C.why, "%s has compute capability %d.%d; hvm4g needs 7.5 or later",
             p.name, p.major, p.minor);
    return 0;
  }
  if ((e = cudaSetDevice(0)) != cudaSuccess || (e = cudaFree(0)) != cudaSuccess) {
    snprintf(C.why, sizeof C.why, "cannot make a CUDA context on %s (%s)", p.name,
             cudaGetErrorString(e));
    return 0;
  }
  cudaFuncAttributes fa;
  if ((e = cudaFuncGetAttributes(&fa, t64::k_step)) != cudaSuccess) {
    snprintf(C.why, sizeof C.why, "this binary has no code for %s (compute capability "
             "%d.%d; rebuild with make CUDA_ARCHS=native)", p.name, p.major, p.minor);
    return 0;
  }
  C.sms = p.multiProcessorCount;
  return 1;
}

static int cu_avail(void) {
  if (!C.probed) {
    C.probed = 1;
    C.ok     = cu_probe();
    cudaGetLastError();   // clear a "no driver" error
  }
  return C.ok;
}

static const char *cu_why(void) {
  return C.why;
}

static u32 cu_lanes(void) {
  return C.lanes;
}

// (Re)allocates a device buffer to hold at least `need` elements.
static int cu_grow(void **p, u64 *cap, u64 need, size_t elem) {
  if (need <= *cap) return 0;
  u64 c = *cap ? *cap : 4096;
  while (c < need) c *= 2;
  if (*p) cudaFree(*p);
  *p = NULL;
  *cap = 0;
  if (cudaMalloc(p, c * elem) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  *cap = c;
  return 0;
}

// Grid of a grid-stride loop over n items.
static u32 grid_of(u64 n) {
  u64 b = (n + 255) / 256;
  u64 most = (u64)(C.sms > 0 ? C.sms : 132) * 8;
  if (b > most) b = most;
  return b ? (u32)b : 1;
}

// Default lanes (gpu_default_lanes, pass.c): from one wave of this kernel
// and the free memory.
static u32 default_lanes(u32 stack) {
  int per = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, t64::k_step, LANE_TPB, 0)
      != cudaSuccess || per <= 0 || C.sms <= 0) {
    cudaGetLastError();
    return 32768;
  }
  size_t fr = 0, tot = 0;
  if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) {
    cudaGetLastError();
    fr = 0;
  }
  return gpu_default_lanes((u32)C.sms * (u32)per * LANE_TPB, (u64)fr, stack);
}

// Lane buffers sized by lanes and stack: made again when those change.
static int lane_buffers(char *err, unsigned errlen) {
  // 2048 words a lane by default (16 KiB); a deeper WNF stops the lane
  // (WNF_STACK) and the CPU finishes.
  u32 stack = gpu_conf()->stack ? gpu_conf()->stack : 2048;
  // The default is sized once, from the memory free at the first setup:
  // sized again at a later one (the heap and the stacks then taken), it
  // came out smaller and remade the stacks at every run.
  if (!gpu_conf()->lanes && !C.dflt_lanes) C.dflt_lanes = default_lanes(stack);
  u32 lanes = gpu_conf()->lanes ? gpu_conf()->lanes : C.dflt_lanes;
  if (lanes == C.req_lanes && stack == C.stack_cap) return 0;
  u32 req = lanes;
  C.req_lanes = 0;
  if (C.out_n)  cudaFree(C.out_n);
  if (C.off)    cudaFree(C.off);
  if (C.arena)  cudaFree(C.arena);
  if (C.stacks) cudaFree(C.stacks);
  C.out_n = C.off = C.arena = NULL;
  C.stacks = NULL;
  C.lanes = 0;
  // Stacks first (the largest): fewer lanes when memory is short.
  while (cudaMalloc(&C.stacks, (u64)lanes * stack * sizeof(Term)) != cudaSuccess) {
    cudaGetLastError();
    C.stacks = NULL;
    if (lanes <= 256) {
      snprintf(err, errlen, "lane stacks: out of device memory (lower "
               "--lanes or --stack)");
      return -1;
    }
    lanes /= 2;
  }
  CK(cudaMalloc(&C.out_n, lanes * sizeof(u32)), "lane counts");
  CK(cudaMalloc(&C.off, (lanes + 1) * sizeof(u32)), "lane offsets");
  CK(cudaMalloc(&C.arena, 2 * (u64)lanes * sizeof(u32)), "lane arenas");
  C.lanes     = lanes;
  C.req_lanes = req;
  C.stack_cap = stack;
  return 0;
}

// The heap and its three bitmaps: --dev-heap words, else the host's
// capacity, within 60% of free device memory; when that fails (other
// processes on the GPU), half as much, down to `min`. A run that fills it
// asks for twice as much (cu_grow_heap) and goes on from what it packed,
// up to the host's capacity. A smaller default, so that parallel runs
// would not starve each other, made a wide program fill it and run many
// times slower; parallel runs (scripts/cuda_check.sh) pass a --dev-heap
// of their own instead.
static int heap_buffers(u64 min, char *err, unsigned errlen) {
  CuRt *rt = cu_rt();
  u64 words = gpu_heap_words();
  if (rt->want > min) min = rt->want;
  if (C.heap && C.cap >= min) return 0;
  if (C.heap) {
    cudaFree(C.heap); cudaFree(C.seen); cudaFree(C.live); cudaFree(C.rank);
    C.heap = NULL; C.seen = C.live = C.rank = NULL;
  }
  size_t fr = 0, tot = 0;
  CK(cudaMemGetInfo(&fr, &tot), "cudaMemGetInfo");
  u64 cap = gpu_conf()->dev_heap ? gpu_conf()->dev_heap : words;
  // A small first heap that still grows (HVM4G_DEV_HEAP_START), so that
  // scripts/cuda_check.sh runs the growth on a small program (a grown
  // run's copy in is a path of its own).
  u64 start = gpu_conf()->dev_heap || rt->want ? 0 : gpu_heap_start();
  if (start) cap = start;
  u64 fit = (u64)(fr * 0.6) / (sizeof(Term) + 3 * sizeof(u32) / 32.0 + 1);
  if (cap > words) cap = words;
  if (min > words) min = words;
  if (cap > fit) cap = fit & ~31ull;
  if (cap < min) cap = min;
  for (;;) {
    u64 bm = (cap / 32 + 1) * sizeof(u32);
    if (cudaMalloc(&C.heap, cap * sizeof(Term)) == cudaSuccess) {
      if (cudaMalloc(&C.seen, bm) == cudaSuccess) {
        if (cudaMalloc(&C.live, bm) == cudaSuccess) {
          if (cudaMalloc(&C.rank, bm) == cudaSuccess) break;
          cudaFree(C.live);
        }
        cudaFree(C.seen);
      }
      cudaFree(C.heap);
    }
    cudaGetLastError();
    C.heap = NULL; C.seen = C.live = C.rank = NULL;
    if ((cap = gpu_cap_halve(cap, min, err, errlen)) == 0) return -1;
  }
  C.cap = cap;
  // Cleared once; afterwards each run clears what it used.
  u64 bm = (cap / 32 + 1) * sizeof(u32);
  CK(cudaMemset(C.seen, 0, bm), "seen");
  CK(cudaMemset(C.live, 0, bm), "live");
  C.seen_used = 0;
  C.live_used = 0;
  return 0;
}

#define PIN_MIN (1ull << 20)   // bytes: the staging buffer; fewer are staged

static int cu_setup(u64 min, char *err, unsigned errlen) {
  double t0 = gpu_now();
  CK(cudaSetDevice(0), "cudaSetDevice");
  if (lane_buffers(err, errlen) || heap_buffers(min, err, errlen)) return -1;
  if (!C.res) {
    CK(cudaMalloc(&C.res, sizeof(PassRes)), "counters");
    // Non-blocking: the legacy stream 0 would wait for it, and each piece's
    // copy kernel for the copy out before it.
    CK(cudaStreamCreateWithFlags(&C.out, cudaStreamNonBlocking), "stream");
    for (u32 i = 0; i < PIECES; i++) {
      CK(cudaEventCreateWithFlags(&C.done[i], cudaEventDisableTiming), "event");
    }
  }
  // The staging buffer of small copies out, made here (on the warm-up
  // thread when there is one), not at the first copy out, which would
  // wait for it.
  if (!C.stage) {
    CK(cudaMallocHost((void **)&C.stage, PIN_MIN), "pinned staging buffer");
    C.stage_cap = PIN_MIN;
  }
  gpu_stats()->buf_s += gpu_now() - t0;
  return 0;
}

// Ahead of the first run (a background thread): context and buffers.
static void cu_warm(void) {
  char err[256];
  if (!cu_part(err, sizeof err)) return;   // the run reports it
  (void)cu_setup(1u << 20, err, sizeof err);   // the run tries again and reports
}

// Copies n bytes from the device to host memory `to`. Large copies pin
// the destination pages for the copy (cudaHostRegister; then the copy
// runs at full speed) instead of copying into pageable memory never
// touched, which is much slower; small ones, or when pinning fails, go
// through the pinned staging buffer.

// Faulting in fresh pages is most of what pinning them costs; threads
// fault disjoint chunks in parallel first.
// MADV_POPULATE_WRITE (Linux 5.14) maps them without touching their bytes
// (the range's first page may hold live host words).
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define FAULT_MIN     (1ull << 20)     // bytes: fewer are faulted inline
#define FAULT_SHARE   (256ull << 10)   // bytes per thread at least
#define FAULT_THREADS 16

typedef struct {
  char *lo, *hi;
} FaultRange;

static void *fault_in(void *p) {
  FaultRange *r = (FaultRange *)p;
  if (madvise(r->lo, (size_t)(r->hi - r->lo), MADV_POPULATE_WRITE) != 0) {
    for (volatile char *q = r->lo; q < r->hi; q += 4096) *q = *q;
  }
  return NULL;
}

static void fault_range(char *lo, char *hi) {
  u64 n = (u64)(hi - lo);
  if (n < FAULT_MIN) return;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  u64  most = n / FAULT_SHARE;
  u32  k    = ncpu > FAULT_THREADS ? FAULT_THREADS : (ncpu > 1 ? (u32)ncpu : 1u);
  if (k > most) k = (u32)most;
  u64  step = ((n / k) + 4095) & ~4095ull;
  pthread_t  th[FAULT_THREADS];
  FaultRange rg[FAULT_THREADS];
  int        up[FAULT_THREADS];
  for (u32 i = 0; i < k; i++) {
    char *a = lo + (u64)i * step;
    char *b = (i + 1 == k || a + step > hi) ? hi : a + step;
    rg[i] = (FaultRange){ a < hi ? a : hi, b };
    up[i] = pthread_create(&th[i], NULL, fault_in, &rg[i]) == 0;
    if (!up[i]) fault_in(&rg[i]);   // no thread: this one does it
  }
  for (u32 i = 0; i < k; i++) {
    if (up[i]) pthread_join(th[i], NULL);
  }
}

// Faults in and pins the whole pages of [to, to + n): their first page,
// or NULL when pinning failed.
static char *pin_pages(void *to, u64 n) {
  char *lo = (char *)((u64)to & ~4095ull);
  char *hi = (char *)(((u64)to + n + 4095) & ~4095ull);
  fault_range(lo, hi);
  if (cudaHostRegister(lo, (size_t)(hi - lo), cudaHostRegisterDefault) ==
      cudaSuccess) {
    return lo;
  }
  cudaGetLastError();
  return NULL;
}

static int stage_out(void *to, const void *from, u64 n, char *err,
                     unsigned errlen) {
  if (n == 0) return 0;
  char *lo = n >= PIN_MIN ? pin_pages(to, n) : NULL;
  if (lo) {
    cudaError_t e = cudaMemcpy(to, from, n, cudaMemcpyDeviceToHost);
    cudaHostUnregister(lo);
    CK(e, "copy out");
    return 0;
  }
  for (u64 at = 0; at < n;) {
    if (!C.stage) {
      CK(cudaMallocHost((void **)&C.stage, PIN_MIN), "pinned staging buffer");
      C.stage_cap = PIN_MIN;
    }
    u64 k = n - at < C.stage_cap ? n - at : C.stage_cap;
    CK(cudaMemcpy(C.stage, (const char *)from + at, k,
                  cudaMemcpyDeviceToHost), "copy out");
    memcpy((char *)to + at, C.stage, k);
    at += k;
  }
  return 0;
}

// Pin ahead. While a pass runs, the host only waits on the device; after
// launching one, it faults in and pins the next 4 MB of the host heap above
// the run's top, where the packed result lands, so that the copy out is one
// DMA at full speed: a fresh page costs more to fault and to pin than to
// copy. At most --pin-ahead words (8M: 64 MB of resident memory). The same
// thread does it, between launch and wait: a second thread pinning
// larger chunks held the driver's lock while passes waited.
#define PIN_CHUNK  (4ull << 20)   // bytes per pass
#define PIN_CHUNKS 1024u

// The chunks stay pinned after the copy out (the process usually ends
// soon after, and unpinning would add to every run's copy out);
// the next run unpins them first, as its own range overlaps them. So does
// the tail.
static void pin_release(void) {
  CuRt *rt = cu_rt();
  for (u32 i = 0; i < rt->pin.n; i++) cudaHostUnregister(rt->pin.lo + (u64)i * PIN_CHUNK);
  rt->pin.n    = 0;
  rt->pin.done = 1;
  if (rt->tail) cudaHostUnregister(rt->tail);
  rt->tail = NULL;
}

// After pin_release (cu_open, before its copy in).
static void pin_start(void) {
  CuRt *rt = cu_rt();
  Term *host = gpu_heap();
  char *lo   = (char *)((u64)(host + rt->top0) & ~4095ull);
  char *end  = (char *)(host + gpu_heap_words());
  u64   want = gpu_conf()->pin_ahead * sizeof(Term);
  if (lo + want > end) want = (u64)(end - lo);
  rt->pin.lo   = lo;
  rt->pin.want = want;
  rt->pin.n    = 0;
  rt->pin.done = want < PIN_CHUNK;
}

// One chunk more, while the device runs a pass (registering faults the
// pages in).
static void pin_step(void) {
  CuRt *rt = cu_rt();
  if (rt->pin.done) return;
  char *a = rt->pin.lo + (u64)rt->pin.n * PIN_CHUNK;
  if (cudaHostRegister(a, PIN_CHUNK, cudaHostRegisterDefault) != cudaSuccess) {
    cudaGetLastError();
    rt->pin.done = 1;
    return;
  }
  rt->pin.n++;
  rt->pin.done = rt->pin.n >= PIN_CHUNKS || (u64)(rt->pin.n + 1) * PIN_CHUNK > rt->pin.want;
}

// The tail of a result larger than the pages pinned ahead: faulted in and
// pinned on a thread of its own while the copy kernels run, instead of
// after them (stage_out), so that faulting and pinning fresh pages (most
// of a large copy out) overlap the packing. The copy kernels are all
// queued by then, so the driver's lock that pinning takes delays no
// launch.
typedef struct {
  char     *to;        // the tail
  u64       n;         // its bytes
  char     *lo;        // its first page once pinned, else NULL
  pthread_t th;
  int       up;        // the thread runs
} TailPin;

static void *tail_pin(void *p) {
  TailPin *t = (TailPin *)p;
  t->lo = pin_pages(t->to, t->n);
  return NULL;
}

static void tail_start(TailPin *t, char *to, u64 n) {
  t->to = to;
  t->n  = n;
  t->lo = NULL;
  t->up = n >= PIN_MIN && pthread_create(&t->th, NULL, tail_pin, t) == 0;
}

// Waits for the tail's pinning; 1 when it is pinned (and then kept pinned
// until pin_release, as the chunks are).
static int tail_wait(TailPin *t) {
  CuRt *rt = cu_rt();
  if (!t->up) return 0;
  pthread_join(t->th, NULL);
  t->up = 0;
  rt->tail = t->lo;
  return t->lo != NULL;
}

// Queues on stream `s` the copy of what of [to, to + n) the pinned chunks
// cover; returns its bytes (a prefix of the range). One asynchronous copy
// a chunk (a copy may not span two registrations), one wait for all
// (cu_close), since a synchronous call a chunk ran well under the link's
// speed. *e keeps the first error.
static u64 pin_queue(char *to, const char *from, u64 n, cudaStream_t s,
                     cudaError_t *e) {
  CuRt *rt = cu_rt();
  u64 done = 0;
  for (u32 i = 0; i < rt->pin.n && done < n && *e == cudaSuccess; i++) {
    char *b = rt->pin.lo + (u64)(i + 1) * PIN_CHUNK;
    if (b <= to + done) continue;
    u64 k = (u64)(b - (to + done));
    if (k > n - done) k = n - done;
    *e = cudaMemcpyAsync(to + done, from + done, k, cudaMemcpyDeviceToHost, s);
    done += k;
  }
  return done;
}

// Copy in
// =======
// The words a run may read (reach.h), when the walk pays: packed as runs
// into the pinned staging buffer, copied to scratch above the top (the
// run's allocations have not begun) and scattered by k_scatter, a chunk at
// a time. The words left out keep whatever the device heap held: the run
// never reads them, and the shadow copy below takes them as they are, so
// k_diff finds them unchanged (docs/gpu.md, "Copying the heap in").

typedef struct {
  u32 lo;    // first heap word
  u32 n;     // words
  u32 at;    // the first's index in the chunk's words
  u32 pad;
} InRun;

// One warp per run.
__global__ void k_scatter(Term *heap, const InRun *runs, u32 nruns,
                          const Term *words) {
  u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
  u32 lane  = threadIdx.x & 31u;
  for (u64 r = ((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < nruns;
       r += warps) {
    InRun x = runs[r];
    for (u32 j = lane; j < x.n; j += 32u) {
      heap[(u64)x.lo + j] = words[(u64)x.at + j];
    }
  }
}

// One chunk: its words, then its runs, to the scratch; then the scatter.
static int scatter(Term *scr, u64 wcap, u32 nw, u32 nr, char *err,
                   unsigned errlen) {
  if (nr == 0) return 0;
  InRun *runs = (InRun *)(C.stage + wcap);
  CK(cudaMemcpy(scr, C.stage, (u64)nw * sizeof(Term),
                cudaMemcpyHostToDevice), "heap copy in");
  CK(cudaMemcpy(scr + wcap, runs, (u64)nr * sizeof(InRun),
                cudaMemcpyHostToDevice), "heap copy in");
  k_scatter<<<grid_of((u64)nr * 32u), 256>>>(C.heap, (const InRun *)(scr + wcap),
                                             nr, scr);
  CK(cudaGetLastError(), "scatter kernel launch");
  return 0;
}

// [0, top) of the host heap into the device heap: the reached words, or
// all of them (pageable memory).
static int copy_in(const u32 *roots, u32 nroot, u64 top, char *err,
                   unsigned errlen) {
  CuRt *rt = cu_rt();
  Term *host  = gpu_heap();
  u64   base  = (top + 31) & ~31ull;
  u64   room  = rt->dcap > base ? rt->dcap - base : 0;   // scratch words
  u64   words = C.stage_cap / sizeof(Term);              // a chunk's
  if (words > room) words = room;
  u64   wcap  = words / 4 * 3;                           // its words,
  u64   rcap  = (words - wcap) * sizeof(Term) / sizeof(InRun);  // its runs
  u64   bud   = reach_budget(top);
  gpu_stats()->in_top += top;
  if (bud == 0 || rcap < 64 || !C.stage ||
      reach_walk(&rt->reach, host, top, roots, nroot, gpu_book(), gpu_book_len(),
                 gpu_book_cnt(), bud, reach_limit_s(top)) != 1) {
    reach_free(&rt->reach);
    gpu_stats()->in_words += top;
    CK(cudaMemcpy(C.heap, host, top * sizeof(Term), cudaMemcpyHostToDevice),
       "heap copy in");
    return 0;
  }
  gpu_stats()->in_words += rt->reach.words;
  Term  *scr  = C.heap + base;
  InRun *runs = (InRun *)(C.stage + wcap);
  u32    nw   = 0, nr = 0;
  u64    at   = 0, lo, n;
  int    rc   = 0;
  while (rc == 0 && reach_run(&rt->reach, &at, &lo, &n)) {
    while (n > 0) {
      if (nw == wcap || nr == rcap) {
        if ((rc = scatter(scr, wcap, nw, nr, err, errlen)) != 0) break;
        nw = nr = 0;
      }
      u32 k = n < wcap - nw ? (u32)n : (u32)(wcap - nw);
      memcpy(C.stage + nw, host + lo, (u64)k * sizeof(Term));
      runs[nr++] = InRun{ (u32)lo, k, nw, 0 };
      nw += k;
      lo += k;
      n  -= k;
    }
  }
  if (rc == 0) rc = scatter(scr, wcap, nw, nr, err, errlen);
  reach_free(&rt->reach);
  return rc;
}

static int cu_open(const u32 *roots, u32 nroot, char *err, unsigned errlen) {
  CuRt *rt   = cu_part(err, errlen);
  if (!rt) return -1;
  u64   top  = gpu_top();
  // Room for the run's own allocations, and the shadow of [0, top).
  u64   min  = 2 * top + (1ull << 20);
  if (cu_setup(min, err, errlen) != 0) return -1;
  if (2 * top + 1024 > C.cap) {
    snprintf(err, errlen, "heap in use (%llu words) does not fit the device "
             "heap (%llu words) with its copy", (unsigned long long)top,
             (unsigned long long)C.cap);
    return -1;
  }
  // Book: only the ids in use.
  u32 bc = gpu_book_cnt();
  if (bc > C.book_max) {
    if (C.book)     cudaFree(C.book);
    if (C.book_len) cudaFree(C.book_len);
    C.book = C.book_len = NULL;
    C.book_max = 0;
    CK(cudaMalloc(&C.book, (bc + 1) * sizeof(u32)), "book");
    CK(cudaMalloc(&C.book_len, (bc + 1) * sizeof(u32)), "book lengths");
    C.book_max = bc;
  }
  if (bc) {
    CK(cudaMemcpy(C.book, gpu_book(), bc * sizeof(u32),
                  cudaMemcpyHostToDevice), "book copy");
    CK(cudaMemcpy(C.book_len, gpu_book_len(), bc * sizeof(u32),
                  cudaMemcpyHostToDevice), "book copy");
  }
  // Heap: the used range, and its shadow at the heap's end, which the
  // run's allocations stay below. The last run's pinned chunks go first:
  // they lie in [0, top) now, and one copy from host memory that starts in
  // a registration and runs past it fails ("invalid argument": the grown
  // run after a full heap copies the whole range in over the first run's
  // chunks; cuda_check's grown_heap check).
  pin_release();
  rt->dcap = C.cap - top;
  if (copy_in(roots, nroot, top, err, errlen) != 0) return -1;
  CK(cudaMemcpy(C.heap + rt->dcap, C.heap, top * sizeof(Term),
                cudaMemcpyDeviceToDevice), "heap shadow");
  // The lanes' arguments, regions, arenas and frontier, their arenas
  // sharing the heap below the shadow (gpu_open_args).
  GpuOpen o;
  if (gpu_open_args(&o, roots, nroot, C.heap, C.book, C.book_len, C.lanes,
                    C.stack_cap, rt->dcap, err, errlen) != 0) {
    return -1;
  }
  unsigned long long dtop  = o.dtop;
  unsigned long long dcap  = rt->dcap;
  unsigned long long align = o.align;
  unsigned int       arena = o.arena;
  CK(cudaMemcpyToSymbol(D_TOP, &dtop, sizeof dtop), "top");
  CK(cudaMemcpyToSymbol(D_CAP, &dcap, sizeof dcap), "cap");
  CK(cudaMemcpyToSymbol(D_ARENA, &arena, sizeof arena), "arena");
  CK(cudaMemcpyToSymbol(D_ALIGN, &align, sizeof align), "align");
  CK(cudaMemset(C.arena, 0, 2 * (u64)C.lanes * sizeof(u32)), "arenas");
  if (cu_grow((void **)&C.in, &C.in_cap, nroot, sizeof(u64))) {
    snprintf(err, errlen, "frontier: out of memory for %u roots", nroot);
    return -1;
  }
  CK(cudaMemcpy(C.in, o.ent, (u64)nroot * sizeof(u64), cudaMemcpyHostToDevice),
     "frontier");
  CK(cudaMemcpyToSymbol(D_HEAP, &C.heap, sizeof C.heap), "heap base");
  rt->top0 = top;
  rt->a    = o.a;
  rt->wait = ~0u;   // D_WAIT is set by the run's first pass
  pin_start();
  return 0;
}

// Exclusive scan of n counts into off (CUB's single-pass scan: a pass's
// one-block scan of the lane counts was slow), then k_total. The
// counts' sum must fit 32 bits: the callers' buffers bound it.
static int cu_scan(const u32 *cnt, u32 *off, u64 n, char *err,
                   unsigned errlen) {
  size_t need = 0;
  CK(cub::DeviceScan::ExclusiveSum(NULL, need, cnt, off, (int)n), "scan");
  if (cu_grow(&C.scan_tmp, &C.scan_cap, need, 1)) {
    snprintf(err, errlen, "out of device memory for a scan of %llu counts",
             (unsigned long long)n);
    return -1;
  }
  CK(cub::DeviceScan::ExclusiveSum(C.scan_tmp, need, cnt, off, (int)n), "scan");
  k_total<<<1, 1>>>(cnt, off, n, &C.res->total, C.res);
  CK(cudaGetLastError(), "total kernel launch");
  return 0;
}

// Entries grouped by kind: the next frontier stably sorted by the tag of
// the term at each entry (sparks and stuck DUPs' slots apart), so that a
// warp's lanes start in the same rule; within a tag the gather's order
// (by push depth) stays. Less divergence pays for the sort's own time on
// the wide programs.
__global__ void k_tag_keys(const Term *heap, const u64 *in, u32 n,
                           unsigned char *key) {
  u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  u64 e = in[i];
  key[i] = (unsigned char)ENT_KIND(e, TAG(*(volatile const Term *)&heap[ENT_LOC(e)]));
}
static int cu_sort_tags(u32 n, char *err, unsigned errlen) {
  if (n < 2) return 0;
  if (cu_grow((void **)&C.key[0], &C.key_cap[0], n, 1) ||
      cu_grow((void **)&C.key[1], &C.key_cap[1], n, 1) ||
      cu_grow((void **)&C.alt, &C.alt_cap, n, sizeof(u64))) {
    snprintf(err, errlen, "out of device memory for sorting %u entries", n);
    return -1;
  }
  k_tag_keys<<<(n + 255) / 256, 256>>>(C.heap, C.in, n, C.key[0]);
  cub::DoubleBuffer<unsigned char> keys(C.key[0], C.key[1]);
  cub::DoubleBuffer<unsigned long long> vals((unsigned long long *)C.in,
                                             (unsigned long long *)C.alt);
  size_t need = 0;
  CK(cub::DeviceRadixSort::SortPairs(NULL, need, keys, vals, (int)n, 0, 7), "sort");
  if (cu_grow(&C.sort_tmp, &C.sort_cap, need, 1)) {
    snprintf(err, errlen, "out of device memory for sorting %u entries", n);
    return -1;
  }
  CK(cub::DeviceRadixSort::SortPairs(C.sort_tmp, need, keys, vals, (int)n, 0, 7), "sort");
  if ((void *)vals.Current() != (void *)C.in) {
    CK(cudaMemcpyAsync(C.in, vals.Current(), (u64)n * sizeof(u64),
                       cudaMemcpyDeviceToDevice), "sort");
  }
  return 0;
}

// After a kernel that filled lane segments of `cap` (counts in out_n):
// scans them, reads the counters back, gathers the next frontier (sorted
// by tag after a step pass), then the `keep` entries that waited (a
// bounded pass's, in C.keep: cu_pass).
static long long cu_next(u32 lanes, u32 cap, PassCtl *ctl, u32 *cut,
                         u32 keep, char *err, unsigned errlen) {
  if (cu_scan(C.out_n, C.off, lanes, err, errlen)) return -1;
  PassRes r;
  CK(cudaMemcpy(&r, C.res, sizeof r, cudaMemcpyDeviceToHost), "pass");
  if (ctl) *ctl = r.ctl;
  if (cut) *cut = r.cut;
  u64 total = (u64)r.total + keep;
  if (total == 0) return 0;
  // The frontier just read is dead: the next one may replace it.
  if (total > 0xFFFFFFFFull ||
      cu_grow((void **)&C.in, &C.in_cap, total, sizeof(u64))) {
    snprintf(err, errlen, "out of device memory for a frontier of %llu",
             (unsigned long long)total);
    return -1;
  }
  if (r.total) {
    u32 blocks = (lanes + 255u) / 256u;   // a warp per 32 segments
    if (blocks > 65535u) blocks = 65535u;
    k_gather<<<blocks, 256>>>(C.outs, cap, C.out_n, C.off, lanes, C.in);
    CK(cudaGetLastError(), "gather kernel launch");
  }
  if (ctl && cu_sort_tags(r.total, err, errlen)) return -1;   // step passes
  if (keep) {
    CK(cudaMemcpyAsync(C.in + r.total, C.keep, (u64)keep * sizeof(u64),
                       cudaMemcpyDeviceToDevice), "frontier");
  }
  return (long long)total;
}

static int cu_segments(u32 lanes, u32 cap, u32 n, char *err,
                       unsigned errlen) {
  // Segment offsets are 32-bit (cu_scan).
  if ((u64)lanes * cap > 0xFFFFFFFFull ||
      cu_grow((void **)&C.outs, &C.outs_cap, (u64)lanes * cap, sizeof(u64))) {
    snprintf(err, errlen, "out of device memory for a frontier of %u", n);
    return -1;
  }
  CK(cudaMemset(C.res, 0, sizeof(PassRes)), "counters");
  return 0;
}

// The entries [run, n) of a bounded pass (pass.c) wait in C.keep (free
// between reclaims) and go in behind the pass's pushes.
static long long cu_pass(u32 n, u32 run, PassCtl *ctl, char *err,
                         unsigned errlen) {
  CuRt *rt = cu_rt();
  u32 keep  = n - run;
  u32 lanes = run < C.lanes ? run : C.lanes;   // active lanes this pass
  u32 wait  = gpu_pass_shape(&rt->a, run, C.lanes, DUP_WAIT_DEVICE);
  if (wait != rt->wait) {
    rt->wait = wait;
    CK(cudaMemcpyToSymbolAsync(D_WAIT, &rt->wait, sizeof rt->wait), "dup wait");
  }
  if (cu_segments(lanes, rt->a.cap, run, err, errlen)) return -1;
  if (keep) {
    if (cu_grow((void **)&C.keep, &C.keep_cap, keep, sizeof(u64))) {
      snprintf(err, errlen, "out of device memory for a frontier of %u", n);
      return -1;
    }
    CK(cudaMemcpyAsync(C.keep, C.in + run, (u64)keep * sizeof(u64),
                       cudaMemcpyDeviceToDevice), "frontier");
  }
  u32 tpb = LANE_TPB;
  // the kernel of the run's DUP take (--take=32: Apple's, as a cross-check)
  auto step = gpu_conf()->take == 32 ? t32::k_step : t64::k_step;
#if LANE_CLOCK
  clock_begin();
#endif
  step<<<(lanes + tpb - 1) / tpb, tpb>>>(rt->a, C.in, run, lanes, C.outs,
      C.out_n, C.arena, C.stacks, C.seen, &C.res->ctl);
  CK(cudaGetLastError(), "step kernel launch");
  pin_step();
  long long next = cu_next(lanes, rt->a.cap, ctl, NULL, keep, err, errlen);
#if LANE_CLOCK
  clock_print(run, &rt->clock_pass);
#endif
  return next;
}

// Packing
// =======

static long long cu_roots(char *err, unsigned errlen) {
  CuRt *rt = cu_rt();
  unsigned long long dtop = 0;
  CK(cudaMemcpyFromSymbol(&dtop, D_TOP, sizeof dtop), "device top");
  if (dtop > rt->dcap) dtop = rt->dcap;   // a refill past the end: not used
  C.seen_used = dtop / 32 + 1;
  rt->c.heap   = C.heap;
  rt->c.shadow = C.heap + rt->dcap;
  rt->c.top0   = rt->top0;
  rt->c.dtop   = dtop;
  rt->c.live   = C.live;
  rt->c.rank   = C.rank;
  rt->c.nroots = &C.res->nroots;
  rt->c.bad    = &C.res->bad;
  rt->c.cut    = &C.res->cut;
  C.live_used  = (dtop - rt->top0) / 32 + 1;
  if (cu_grow((void **)&C.roots, &C.roots_cap, 4096, sizeof(u32))) {
    snprintf(err, errlen, "out of device memory for the changed words");
    return -1;
  }
  for (;;) {
    rt->c.roots     = C.roots;
    rt->c.roots_cap = C.roots_cap > 0xFFFFFFFFull ? 0xFFFFFFFFu : (u32)C.roots_cap;
    CK(cudaMemset(C.res, 0, sizeof(PassRes)), "counters");
    k_diff<<<grid_of(rt->top0), 256>>>(rt->c);
    CK(cudaGetLastError(), "diff kernel launch");
    u32 n = 0;
    CK(cudaMemcpy(&n, &C.res->nroots, sizeof n, cudaMemcpyDeviceToHost),
       "changed words");
    if (n > C.roots_cap) {
      if (cu_grow((void **)&C.roots, &C.roots_cap, n, sizeof(u32))) {
        snprintf(err, errlen, "out of device memory for %u changed words", n);
        return -1;
      }
      continue;
    }
    if (cu_grow((void **)&C.in, &C.in_cap, n ? n : 1, sizeof(u64))) {
      snprintf(err, errlen, "out of device memory for %u changed words", n);
      return -1;
    }
    if (n) k_roots<<<grid_of(n), 256>>>(C.heap, C.roots, n, C.in);
    CK(cudaGetLastError(), "roots kernel launch");
    gpu_stats()->changed += n;
    rt->nroots = n;
    return n;
  }
}

// Mark levels (k_mark_levels): the frontier is copied to the first level
// buffer and the one left back to the frontier. *cut: its size, as
// sim_mark_levels.
static long long cu_mark_levels(u32 n, u32 *cut, char *err, unsigned errlen) {
  CuRt *rt = cu_rt();
  u64 words = (u64)MARK_BLOCK_MAX * MARK_SPAN;
  for (int i = 0; i < 2; i++) {
    if (!C.lv[i]) CK(cudaMalloc(&C.lv[i], words * sizeof(u64)), "mark levels");
  }
  CK(cudaMemcpy(C.lv[0], C.in, (u64)n * sizeof(u64), cudaMemcpyDeviceToDevice),
     "mark levels");
  CK(cudaMemset(C.res, 0, sizeof(PassRes)), "counters");
  k_mark_levels<<<1, MARK_BLOCK_TPB>>>(rt->c, C.lv[0], C.lv[1], n, C.res);
  CK(cudaGetLastError(), "mark levels kernel launch");
  PassRes r;
  CK(cudaMemcpy(&r, C.res, sizeof r, cudaMemcpyDeviceToHost), "mark levels");
  if (r.total) {
    if (cu_grow((void **)&C.in, &C.in_cap, r.total, sizeof(u64))) {
      snprintf(err, errlen, "out of device memory for a frontier of %u",
               r.total);
      return -1;
    }
    CK(cudaMemcpy(C.in, C.lv[r.side], (u64)r.total * sizeof(u64),
                  cudaMemcpyDeviceToDevice), "mark levels");
  }
  *cut = r.total;
  return r.total;
}

static long long cu_mark(u32 n, u32 budget, u32 *cut, char *err,
                         unsigned errlen) {
  CuRt *rt = cu_rt();
  if (gpu_conf()->mark_levels && MARK_BLOCK(n)) return cu_mark_levels(n, cut, err, errlen);
  u32 lanes = n < C.lanes ? n : C.lanes;
  rt->c.budget = budget;
  rt->c.cap    = gpu_mark_cap(n, C.lanes, budget);
  if (cu_segments(lanes, rt->c.cap, n, err, errlen)) return -1;
  u32 tpb = 128;
  k_mark<<<(lanes + tpb - 1) / tpb, tpb>>>(rt->c, C.in, n, lanes, C.outs,
                                           C.out_n);
  CK(cudaGetLastError(), "mark kernel launch");
  return cu_next(lanes, rt->c.cap, NULL, cut, 0, err, errlen);
}

// Clears what this run set in the bitmaps, for the next run.
static int cu_clear(char *err, unsigned errlen) {
  if (C.seen_used) CK(cudaMemset(C.seen, 0, C.seen_used * sizeof(u32)), "seen");
  if (C.live_used) CK(cudaMemset(C.live, 0, C.live_used * sizeof(u32)), "live");
  C.seen_used = 0;
  C.live_used = 0;
  return 0;
}

static void cu_abandon(void) {
  pin_release();
  char err[256];
  cu_clear(err, sizeof err);
}

// Ranks, packs and copies out. After a device fault a step fails: the
// host heap is then still the one the run began with (a valid term
// graph), and the CPU normalizes from there.
static int cu_close(char *err, unsigned errlen) {
  CuRt *rt = cu_rt();
#if LANE_BALANCE
  balance_report();
#endif
  double t0     = gpu_now();
  u64    words  = C.live_used;
  u64    chunks = (words + RANK_CHUNK - 1) / RANK_CHUNK;
  u32    nroots = (u32)rt->nroots;
  if (cu_grow((void **)&C.sums, &C.sums_cap, 2 * (chunks + 1) + PIECES + 1,
              sizeof(u32))) {
    snprintf(err, errlen, "out of device memory for packing");
    return -1;
  }
  u32 *base = C.sums + chunks + 1;
  u32 *at   = base + chunks + 1;   // the pieces' first ranks, and the total
  CK(cudaMemset(C.res, 0, sizeof(PassRes)), "counters");
  k_count<<<grid_of(chunks * 32), 256>>>(rt->c, chunks, words, C.sums);
  if (cu_scan(C.sums, base, chunks, err, errlen)) return -1;
  k_rank<<<grid_of(chunks * 32), 256>>>(rt->c, chunks, words, base);
  k_pieces<<<1, 1>>>(base, chunks, C.res, at);
  CK(cudaGetLastError(), "rank kernels");
  u32 piece[PIECES + 1];
  CK(cudaMemcpy(piece, at, sizeof piece, cudaMemcpyDeviceToHost),
     "live words");
  u32 live = piece[PIECES];
  gpu_stats()->rank_s += gpu_now() - t0;
  if (rt->top0 + live > gpu_heap_words()) {
    snprintf(err, errlen, "the result (%u words) does not fit the host heap",
             live);
    cu_abandon();
    return -1;
  }
  // The packed words: above the run's top in the device heap when they
  // fit there, else in a buffer of their own; the roots' values after.
  Term *dst = C.heap + rt->c.dtop;
  if (rt->c.dtop + live + nroots > rt->dcap) {
    if (cu_grow((void **)&C.dst, &C.dst_cap, (u64)live + nroots + 1,
                sizeof(Term))) {
      snprintf(err, errlen, "out of device memory for %u live words", live);
      return -1;
    }
    dst = C.dst;
  }
  // Copy out behind the copy kernel, piece by piece (PIECES of the rank
  // chunks, joined up to PIECE_MIN bytes): each piece's pinned part goes
  // on the copy stream once its kernel is done, while the next piece is
  // packed. What the pinned chunks do not cover follows, in one go.
  Term       *host = gpu_heap();
  char       *to   = (char *)(host + rt->top0);
  u64         bytes = (u64)live * sizeof(Term);
  u64         pinned = 0;   // bytes queued: a prefix of the result
  int         more   = 1;   // the pinned chunks cover all queued so far
  cudaError_t e      = cudaSuccess;
  GpuPiece pc[PIECES];
  u32      np = gpu_pieces(piece, PIECES, chunks, RANK_CHUNK, words,
                           PIECE_MIN / sizeof(Term), pc);
  for (u32 i = 0; i < np; i++) {
    if (pc[i].w1 > pc[i].w0) {
      k_copy<<<grid_of(pc[i].w1 - pc[i].w0), 256>>>(rt->c, pc[i].w0, pc[i].w1, dst);
    }
    u64 lo = (u64)pc[i].r0 * sizeof(Term);
    u64 n  = (u64)(pc[i].r1 - pc[i].r0) * sizeof(Term);
    if (!more || n == 0 || e != cudaSuccess) continue;
    e = cudaEventRecord(C.done[i], 0);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(C.out, C.done[i], 0);
    if (e != cudaSuccess) break;
    u64 k = pin_queue(to + lo, (const char *)dst + lo, n, C.out, &e);
    pinned += k;
    more    = k == n;
  }
  if (nroots) k_root_vals<<<grid_of(nroots), 256>>>(rt->c, nroots, dst + live);
  TailPin tail;
  tail_start(&tail, to + pinned, bytes - pinned);
  cudaError_t ek = cudaGetLastError();
  PassRes r;
  if (ek == cudaSuccess) {
    ek = cudaMemcpy(&r, C.res, sizeof r, cudaMemcpyDeviceToHost);
  }
  gpu_stats()->compact_s += gpu_now() - t0;
  t0 = gpu_now();
  if (e == cudaSuccess) e = cudaStreamSynchronize(C.out);
  int behind = tail_wait(&tail);   // joined on every path
  CK(ek, "packing");
  if (e != cudaSuccess) {
    snprintf(err, errlen, "copy out: %s", cudaGetErrorString(e));
    cudaGetLastError();
    return -1;
  }
  if (r.bad) {
    snprintf(err, errlen, "packing the result met %u pointers to words it "
             "did not mark (a bug)", r.bad);
    return -1;
  }
  gpu_stats()->pinned += pinned;
  if (behind) {
    CK(cudaMemcpy(to + pinned, (const char *)dst + pinned, bytes - pinned,
                  cudaMemcpyDeviceToHost), "copy out");
    gpu_stats()->behind += bytes - pinned;
    pinned = bytes;
  }
  Term *vals = (Term *)malloc(((u64)nroots + 1) * sizeof(Term));
  u32  *locs = (u32 *)malloc(((u64)nroots + 1) * sizeof(u32));
  int   ok   = vals && locs &&
    stage_out(to + pinned, (const char *)dst + pinned, bytes - pinned, err,
              errlen) == 0 &&
    stage_out(vals, dst + live, (u64)nroots * sizeof(Term), err, errlen) == 0 &&
    stage_out(locs, C.roots, (u64)nroots * sizeof(u32), err, errlen) == 0 &&
    stage_out(host, C.heap, sizeof(Term), err, errlen) == 0;   // label count
  if (!vals || !locs) snprintf(err, errlen, "out of host memory for packing");
  if (ok) {
    for (u32 i = 0; i < nroots; i++) host[locs[i]] = vals[i];
    gpu_top_raise(rt->top0 + live);
    gpu_stats()->live += live;
  }
  free(vals);
  free(locs);
  gpu_stats()->out_s += gpu_now() - t0;
  if (!ok) {
    // Part of the live words may be written above the host's top: unused.
    return -1;
  }
  return cu_clear(err, errlen);
}

// Reclaiming in place
// ===================

// A buffer grown with its first `used` elements kept.
static int cu_grow_keep(void **p, u64 *cap, u64 need, u64 used, size_t elem) {
  if (need <= *cap) return 0;
  void *q = NULL;
  u64   c = 0;
  if (cu_grow(&q, &c, need, elem)) return -1;
  if (used && cudaMemcpy(q, *p, used * elem, cudaMemcpyDeviceToDevice) != cudaSuccess) {
    cudaGetLastError();
    cudaFree(q);
    return -1;
  }
  if (*p) cudaFree(*p);
  *p   = q;
  *cap = c;
  return 0;
}

static long long cu_reclaim_roots(u32 n, char *err, unsigned errlen) {
  if (cu_grow((void **)&C.keep, &C.keep_cap, n ? n : 1, sizeof(u64))) {
    snprintf(err, errlen, "out of device memory for a frontier of %u", n);
    return -1;
  }
  CK(cudaMemcpy(C.keep, C.in, (u64)n * sizeof(u64), cudaMemcpyDeviceToDevice),
     "frontier");
  u64 changed = gpu_stats()->changed;   // counted by the run's end alone
  long long m = cu_roots(err, errlen);
  gpu_stats()->changed = changed;
  if (m < 0) return -1;
  if (cu_grow_keep((void **)&C.in, &C.in_cap, (u64)m + n + 1, (u64)m,
                   sizeof(u64))) {
    snprintf(err, errlen, "out of device memory for %llu roots",
             (unsigned long long)m + n);
    return -1;
  }
  if (n) k_slots<<<grid_of(n), 256>>>(C.keep, n, C.in + m);
  CK(cudaGetLastError(), "slots kernel launch");
  return m + n;
}

// Packs the marked words into a buffer (above the run's top when they fit
// there), relocates the frontier and the claims, then writes the words
// down at top0 and the roots' values in place. Until the write nothing of
// the heap changed: a failure leaves the run's heap as it was.
static int cu_squeeze(u32 n, GpuReclaim *r, char *err, unsigned errlen) {
  CuRt *rt = cu_rt();
  u64    words  = C.live_used;
  u64    chunks = (words + RANK_CHUNK - 1) / RANK_CHUNK;
  u32    nroots = (u32)rt->nroots;
  u64    dtop   = rt->c.dtop;
  if (cu_grow((void **)&C.sums, &C.sums_cap, 2 * (chunks + 1), sizeof(u32))) {
    snprintf(err, errlen, "out of device memory for packing");
    return -1;
  }
  u32 *base = C.sums + chunks + 1;
  CK(cudaMemset(C.res, 0, sizeof(PassRes)), "counters");
  k_count<<<grid_of(chunks * 32), 256>>>(rt->c, chunks, words, C.sums);
  if (cu_scan(C.sums, base, chunks, err, errlen)) return -1;
  k_rank<<<grid_of(chunks * 32), 256>>>(rt->c, chunks, words, base);
  CK(cudaGetLastError(), "rank kernels");
  PassRes pr;
  CK(cudaMemcpy(&pr, C.res, sizeof pr, cudaMemcpyDeviceToHost), "live words");
  u64 live = chunks ? pr.total : 0;
  Term *dst = C.heap + dtop;
  if (dtop + live + nroots > rt->dcap) {
    if (cu_grow((void **)&C.dst, &C.dst_cap, live + nroots + 1, sizeof(Term))) {
      snprintf(err, errlen, "out of device memory for %llu live words",
               (unsigned long long)live);
      return -1;
    }
    dst = C.dst;
  }
  u64 w0 = rt->top0 >> 5;   // the claims' bitmap words from top0 on
  u64 nw = (dtop >> 5) + 1 - w0;
  if (cu_grow((void **)&C.claims, &C.claims_cap, nw, sizeof(u32))) {
    snprintf(err, errlen, "out of device memory for packing");
    return -1;
  }
  if (words) k_copy<<<grid_of(words), 256>>>(rt->c, 0, words, dst);
  if (nroots) k_root_vals<<<grid_of(nroots), 256>>>(rt->c, nroots, dst + live);
  if (n) k_entries<<<grid_of(n), 256>>>(rt->c, C.keep, n, rt->a.region_shift, C.in);
  CK(cudaGetLastError(), "packing kernels");
  CK(cudaMemcpy(&pr, C.res, sizeof pr, cudaMemcpyDeviceToHost), "packing");
  if (pr.bad) {
    snprintf(err, errlen, "packing the heap met %u pointers to words it "
             "did not mark (a bug)", pr.bad);
    return -1;
  }
  // The claims above top0 move with their slots; those below stay.
  u32 first = 0;
  CK(cudaMemcpy(C.claims, C.seen + w0, nw * sizeof(u32),
                cudaMemcpyDeviceToDevice), "claims");
  CK(cudaMemcpy(&first, C.seen + w0, sizeof first, cudaMemcpyDeviceToHost),
     "claims");
  first &= (1u << (rt->top0 & 31u)) - 1u;
  CK(cudaMemcpy(C.seen + w0, &first, sizeof first, cudaMemcpyHostToDevice),
     "claims");
  if (nw > 1) CK(cudaMemset(C.seen + w0 + 1, 0, (nw - 1) * sizeof(u32)), "claims");
  if (words) k_claims<<<grid_of(words), 256>>>(rt->c, C.claims, w0, C.seen, words);
  CK(cudaGetLastError(), "claims kernel launch");
  if (live) {
    CK(cudaMemcpy(C.heap + rt->top0, dst, live * sizeof(Term),
                  cudaMemcpyDeviceToDevice), "packed words");
  }
  if (nroots) k_put_roots<<<grid_of(nroots), 256>>>(C.heap, C.roots, nroots, dst + live);
  CK(cudaGetLastError(), "roots kernel launch");
  CK(cudaMemset(C.live, 0, C.live_used * sizeof(u32)), "live");
  C.live_used = 0;
  // Owner mode: the top stays on a region's start (cu_refill).
  unsigned long long align = gpu_conf()->dup_mode == DUP_OWNER ? (1ull << rt->a.region_shift) : 0;
  unsigned long long top   = rt->top0 + live;
  if (align) top = (top + align - 1) & ~(align - 1);
  CK(cudaMemcpyToSymbol(D_TOP, &top, sizeof top), "top");
  CK(cudaMemset(C.arena, 0, 2 * (u64)C.lanes * sizeof(u32)), "arenas");
  CK(cudaDeviceSynchronize(), "reclaim");
  r->live  = live;
  r->room  = rt->dcap - rt->top0;
  r->freed = dtop - rt->top0 - live;
  return 0;
}

// After a run whose live words a reclaim in place could not fit in the
// heap's room (pass.c, RECLAIM_FREE): the next one gets twice as much, if the
// host's heap and the device's memory allow, and goes on from what the run
// packed. -1 when they do not (or --dev-heap fixed the size): the CPU
// finishes, in the host's heap.
static int cu_grow_heap(void) {
  CuRt *rt = cu_rt();
  u64 words = gpu_heap_words();
  if (gpu_conf()->dev_heap || C.cap >= words) return -1;
  size_t fr = 0, tot = 0;
  if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  u64 want = 2 * C.cap < words ? 2 * C.cap : words;
  // The old heap is freed first: what is free then counts it too.
  if ((double)want * 8.4 > (double)fr * 0.6 + (double)C.cap * 8.4) return -1;
  rt->want = want;
  return 0;
}

// At the runtime's close: the pages of its heap still pinned, and the part.
static void cu_release(void) {
  CuRt *rt = cu_rt();
  if (!rt) return;
  pin_release();
  reach_free(&rt->reach);
  free(rt);
  *gpu_cuda_part() = NULL;
}

extern "C" const GpuBackend GPU_CUDA = {
  "cuda", cu_avail, cu_warm, cu_open, cu_pass, cu_roots, cu_mark, cu_close,
  cu_abandon, cu_grow_heap, cu_lanes, NARROW_RATE_DEVICE, cu_why,
  cu_reclaim_roots, cu_squeeze, cu_release,
};
