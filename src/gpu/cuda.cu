// cuda.cu: the CUDA backend (sm_90 and newer). The same pass kernel as the
// simulator (lane.h, which includes the one WNF core), one launch per pass,
// the host loop in pass.c.
//
// Device memory: the heap (as large as HEAP_WORDS, or what fits), the book
// tables, two frontiers, one output segment per lane, the lane stacks and
// arenas, the `seen` bitmap. A run copies the used heap range [0, top) in
// and [0, device top) out, and the book's used ids.
//
// A pass: step kernel (one thread = one lane), a one-block scan of the
// segment sizes, a gather kernel that concatenates the segments in lane
// order, and one small copy back (counters + next frontier size).

#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#define FN static __device__ inline
#include "dev.h"

// Heap primitives of core.h. Loads and stores are volatile: other blocks
// write SUBs during the pass, and L1 is not coherent across SMs. The
// exchanges are fenced on both sides: the nodes a SUB points to are
// visible before the SUB is, and what a take reads is current.
__device__ unsigned long long D_TOP;   // global heap top (words)
__device__ unsigned long long D_CAP;   // heap capacity (words)
__device__ unsigned int       D_ARENA; // words per refill

__device__ inline Term cu_xchg(Term *p, Term t) {
  __threadfence();
  Term r = (Term)atomicExch((unsigned long long *)p, (unsigned long long)t);
  __threadfence();
  return r;
}

__device__ inline Term cu_cas(Term *p, Term o, Term n) {
  __threadfence();
  Term r = (Term)atomicCAS((unsigned long long *)p, (unsigned long long)o,
                           (unsigned long long)n);
  __threadfence();
  return r;
}

__device__ inline void cu_st(Term *p, Term t) {
  if (IS_SUB(t)) __threadfence();   // a SUB publishes what it points to
  *(volatile Term *)p = t;
}

// Owner mode (D_ALIGN != 0): arenas are whole regions, aligned, so each
// region a pass allocates in has exactly one allocating lane.
__device__ unsigned long long D_ALIGN;

__device__ inline int cu_refill(Wnf *w, u32 n) {
  unsigned long long al = D_ALIGN;
  unsigned long long at, want;
  if (al == 0) {
    want = n > D_ARENA ? n : D_ARENA;
    at   = atomicAdd(&D_TOP, want);
  } else {
    want = ((unsigned long long)n + al - 1) & ~(al - 1);
    unsigned long long top = *(volatile unsigned long long *)&D_TOP;
    for (;;) {
      at = (top + al - 1) & ~(al - 1);
      unsigned long long old = atomicCAS(&D_TOP, top, at + want);
      if (old == top) break;
      top = old;
    }
  }
  if (at + want > D_CAP) {
    return 0;   // D_TOP stays past the end: every later refill fails too
  }
  w->next = (u32)at;
  w->end  = (u32)(at + want);
  return 1;
}

// --take=32 (D_TAKE32): Apple's scheme, every word as two 32-bit halves
// and DUP slots taken on the high half (take32.h), as a cross-check of it
// on real hardware.
__constant__ int D_TAKE32;

#define T32              unsigned int
#define T32_LD(p)        (*(volatile unsigned int *)(p))
#define T32_ST(p, v)     (*(volatile unsigned int *)(p) = (v))
#define T32_XCHG(p, v)   atomicExch((p), (v))
#define T32_CAS(p, o, n) atomicCAS((p), (o), (n))
#define T32_FENCE()      __threadfence()
#include "take32.h"

#define HEAP_LD(w, loc)        (D_TAKE32 ? t32_ld((w)->heap, (loc)) : \
  *(volatile Term *)&(w)->heap[(loc)])
#define HEAP_ST(w, loc, t)     (D_TAKE32 ? t32_st((w)->heap, (loc), (t)) : \
  cu_st(&(w)->heap[(loc)], (t)))
#define HEAP_XCHG(w, loc, t)   (D_TAKE32 ? t32_xchg((w)->heap, (loc), (t)) : \
  cu_xchg(&(w)->heap[(loc)], (t)))
#define HEAP_CAS(w, loc, o, n) (D_TAKE32 ? t32_cas((w)->heap, (loc), (o), (n)) : \
  cu_cas(&(w)->heap[(loc)], (o), (n)))
#define HEAP_REFILL(w, n)      cu_refill((w), (n))

#define GPU_ADD64(p, v)    atomicAdd((unsigned long long *)(p), (unsigned long long)(v))
#define GPU_OR32(p, v)     atomicOr((unsigned int *)(p), (unsigned int)(v))
#define GPU_CAS32(p, o, n) atomicCAS((unsigned int *)(p), (unsigned int)(o), (unsigned int)(n))

#include "lane.h"

// Kernels
// =======

// Counters of a pass and the size of the next frontier: one copy back.
struct PassRes {
  PassCtl ctl;
  u32     total;
};

__global__ void k_step(PassArgs a, const u64 *in, u32 n, u32 lanes,
                       u64 *outs, u32 *out_n, u32 *arena, Term *stacks,
                       u32 *seen, PassCtl *ctl) {
  u32 lane = blockIdx.x * blockDim.x + threadIdx.x;
  if (lane >= lanes) return;
  Lane L;
  lane_begin(&L, &a, lane, stacks, arena, outs);
  for (u64 i = lane; i < n; i += lanes) {
    u32 rem = (u32)((n - 1 - i) / lanes);
    lane_entry(&L, &a, seen, ctl, in[i], rem);
  }
  lane_end(&L, arena, lane, out_n, ctl);
}

// Exclusive scan of the segment sizes (one block of 1024 threads).
#define SCAN_T 1024
__global__ void k_scan(const u32 *cnt, u32 *off, u32 lanes, PassRes *res) {
  __shared__ unsigned long long part[SCAN_T];
  u32 t   = threadIdx.x;
  u32 per = (lanes + SCAN_T - 1) / SCAN_T;
  u32 lo  = t * per;
  u32 hi  = lo + per < lanes ? lo + per : lanes;
  unsigned long long s = 0;
  for (u32 i = lo; i < hi; i++) s += cnt[i];
  part[t] = s;
  __syncthreads();
  for (u32 d = 1; d < SCAN_T; d <<= 1) {
    unsigned long long v = t >= d ? part[t - d] : 0;
    __syncthreads();
    part[t] += v;
    __syncthreads();
  }
  unsigned long long base = t ? part[t - 1] : 0;
  for (u32 i = lo; i < hi; i++) {
    off[i] = (u32)base;
    base  += cnt[i];
  }
  if (t == SCAN_T - 1) {
    res->total = part[t] > 0xFFFFFFFFull ? 0xFFFFFFFFu : (u32)part[t];
  }
}

// Concatenates the lane segments in lane order: one warp per segment.
__global__ void k_gather(const u64 *outs, u32 cap, const u32 *cnt,
                         const u32 *off, u32 lanes, u64 *next) {
  u32 warp  = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  u32 me    = threadIdx.x & 31u;
  u32 warps = (gridDim.x * blockDim.x) >> 5;
  for (u32 l = warp; l < lanes; l += warps) {
    const u64 *src = outs + (u64)l * cap;
    u64 *dst = next + off[l];
    for (u32 i = me; i < cnt[l]; i += 32) dst[i] = src[i];
  }
}

// Host side
// =========

static struct {
  int        probed;
  int        ok;
  Term      *heap;     // device heap
  u64        cap;      // its words
  u32       *book;
  u32       *book_len;
  u32        book_cnt;
  u32        book_max; // allocated entries
  u64       *in;
  u64        in_cap;
  u64       *outs;
  u64        outs_cap;
  u32       *out_n;
  u32       *off;
  u32       *arena;
  Term      *stacks;
  u32       *seen;
  PassRes   *res;
  u32        lanes;
  u32        req_lanes; // lanes asked for (lanes: what fit)
  u32        stack_cap;
  u64        top0;     // host top when the run began
  PassArgs   a;
} C;

#define CK(call, what)                                                   \
  do {                                                                   \
    cudaError_t e_ = (call);                                             \
    if (e_ != cudaSuccess) {                                             \
      snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(e_));     \
      return -1;                                                         \
    }                                                                    \
  } while (0)

static int cu_avail(void) {
  if (!C.probed) {
    C.probed = 1;
    int n = 0;
    if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
      cudaDeviceProp p;
      // Create the context now, so its cost is not counted as transfer.
      if (cudaGetDeviceProperties(&p, 0) == cudaSuccess && p.major >= 9 &&
          cudaSetDevice(0) == cudaSuccess && cudaFree(0) == cudaSuccess) {
        C.ok = 1;
      }
    }
    cudaGetLastError();   // clear a "no driver" error
  }
  return C.ok;
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

static int cu_open(u64 root, char *err, unsigned errlen) {
  Term *host  = gpu_heap();
  u64   words = gpu_heap_words();
  u64   top   = gpu_top();
  u32   lanes = GPU.lanes ? GPU.lanes : 32768;
  u32   stack = GPU.stack ? GPU.stack : 4096;
  CK(cudaSetDevice(0), "cudaSetDevice");
  // Per-run buffers sized by lanes and stack: reallocated when they change.
  if (lanes != C.req_lanes || stack != C.stack_cap) {
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
  }
  if (!C.res) CK(cudaMalloc(&C.res, sizeof(PassRes)), "counters");
  // The heap: --dev-heap words, else the host's capacity up to 2^30 words
  // (8 GiB) and 60% of free device memory; when that fails (other
  // processes on the GPU), half as much, down to what the run needs.
  if (C.heap && C.cap < top + (1ull << 20) && C.cap < words) {
    cudaFree(C.heap);
    cudaFree(C.seen);
    C.heap = NULL;
    C.seen = NULL;
  }
  if (!C.heap) {
    size_t fr = 0, tot = 0;
    CK(cudaMemGetInfo(&fr, &tot), "cudaMemGetInfo");
    u64 cap = GPU.dev_heap ? GPU.dev_heap : words;
    u64 fit = (u64)(fr * 0.6) / (sizeof(Term) + 1);   // + seen bitmap
    if (!GPU.dev_heap && cap > (1ull << 30)) cap = 1ull << 30;
    if (cap > words) cap = words;
    u64 min = top + (1ull << 20) < words ? top + (1ull << 20) : words;
    if (cap > fit) cap = fit & ~31ull;
    if (cap < min) cap = min;
    for (;;) {
      if (cudaMalloc(&C.heap, cap * sizeof(Term)) == cudaSuccess) {
        if (cudaMalloc(&C.seen, (cap / 32 + 1) * sizeof(u32)) == cudaSuccess) {
          break;
        }
        cudaFree(C.heap);
      }
      cudaGetLastError();
      C.heap = NULL;
      C.seen = NULL;
      if (cap / 2 < min) {
        snprintf(err, errlen, "device heap: out of memory for %llu words",
                 (unsigned long long)min);
        return -1;
      }
      cap = (cap / 2) & ~31ull;
    }
    C.cap = cap;
  }
  if (top + 1024 > C.cap) {
    snprintf(err, errlen, "heap in use (%llu words) does not fit the device "
             "heap (%llu words)", (unsigned long long)top,
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
  C.book_cnt = bc;
  if (bc) {
    CK(cudaMemcpy(C.book, gpu_book(), bc * sizeof(u32),
                  cudaMemcpyHostToDevice), "book copy");
    CK(cudaMemcpy(C.book_len, gpu_book_len(), bc * sizeof(u32),
                  cudaMemcpyHostToDevice), "book copy");
  }
  // Heap: the used range only.
  CK(cudaMemcpy(C.heap, host, top * sizeof(Term), cudaMemcpyHostToDevice),
     "heap copy in");
  unsigned long long dtop = top, dcap = C.cap;
  unsigned int arena = GPU.arena;
  CK(cudaMemcpyToSymbol(D_TOP, &dtop, sizeof dtop), "top");
  CK(cudaMemcpyToSymbol(D_CAP, &dcap, sizeof dcap), "cap");
  CK(cudaMemcpyToSymbol(D_ARENA, &arena, sizeof arena), "arena");
  unsigned long long align = GPU.dup_mode == DUP_OWNER ? (1ull << GPU.region_shift) : 0;
  CK(cudaMemcpyToSymbol(D_ALIGN, &align, sizeof align), "align");
  int take32 = GPU.take == 32;
  CK(cudaMemcpyToSymbol(D_TAKE32, &take32, sizeof take32), "take");
  CK(cudaMemset(C.arena, 0, 2 * (u64)C.lanes * sizeof(u32)), "arenas");
  CK(cudaMemset(C.seen, 0, (C.cap / 32 + 1) * sizeof(u32)), "seen");
  if (cu_grow((void **)&C.in, &C.in_cap, 1, sizeof(u64))) {
    snprintf(err, errlen, "frontier: out of device memory");
    return -1;
  }
  CK(cudaMemcpy(C.in, &root, sizeof root, cudaMemcpyHostToDevice),
     "frontier");
  C.top0           = top;
  C.a.heap         = C.heap;
  C.a.book         = C.book;
  C.a.book_len     = C.book_len;
  C.a.book_cnt     = bc;
  C.a.dup_mode     = GPU.dup_mode;
  C.a.region_shift = GPU.region_shift;
  C.a.budget       = GPU.budget;
  C.a.stack_cap    = C.stack_cap;
  C.a.cap          = 0;
  return 0;
}

static long long cu_pass(u32 n, PassCtl *ctl, char *err, unsigned errlen) {
  u32 lanes = n < C.lanes ? n : C.lanes;   // active lanes this pass
  gpu_pass_shape(&C.a, n, C.lanes);
  if (cu_grow((void **)&C.outs, &C.outs_cap, (u64)lanes * C.a.cap,
              sizeof(u64))) {
    snprintf(err, errlen, "out of device memory for a frontier of %u", n);
    return -1;
  }
  CK(cudaMemset(C.res, 0, sizeof(PassRes)), "counters");
  u32 tpb = 128;
  k_step<<<(lanes + tpb - 1) / tpb, tpb>>>(C.a, C.in, n, lanes, C.outs,
      C.out_n, C.arena, C.stacks, C.seen, &C.res->ctl);
  CK(cudaGetLastError(), "step kernel launch");
  k_scan<<<1, SCAN_T>>>(C.out_n, C.off, lanes, C.res);
  CK(cudaGetLastError(), "scan kernel launch");
  PassRes r;
  CK(cudaMemcpy(&r, C.res, sizeof r, cudaMemcpyDeviceToHost), "step kernel");
  *ctl = r.ctl;
  if (r.total == 0) return 0;
  // The frontier just read is dead: the next one may replace it.
  if (cu_grow((void **)&C.in, &C.in_cap, r.total, sizeof(u64))) {
    snprintf(err, errlen, "out of device memory for a frontier of %u",
             r.total);
    return -1;
  }
  u32 blocks = (lanes * 32u + 255u) / 256u;
  if (blocks > 65535u) blocks = 65535u;
  k_gather<<<blocks, 256>>>(C.outs, C.a.cap, C.out_n, C.off, lanes, C.in);
  CK(cudaGetLastError(), "gather kernel launch");
  return (long long)r.total;
}

// After a device fault the copy fails: the host heap is then still the
// one copied in (a valid term graph), and the CPU normalizes from there.
static int cu_close(char *err, unsigned errlen) {
  unsigned long long dtop = 0;
  cudaError_t e = cudaMemcpyFromSymbol(&dtop, D_TOP, sizeof dtop);
  if (e == cudaSuccess) {
    if (dtop > C.cap) dtop = C.cap;
    e = cudaMemcpy(gpu_heap(), C.heap, dtop * sizeof(Term),
                   cudaMemcpyDeviceToHost);
  }
  if (e != cudaSuccess) {
    snprintf(err, errlen, "heap copy out: %s; the device's work is dropped",
             cudaGetErrorString(e));
    cudaGetLastError();
    return -1;
  }
  gpu_top_raise(dtop);
  return 0;
}

extern "C" const GpuBackend GPU_CUDA = {
  "cuda", cu_avail, cu_open, cu_pass, cu_close, cu_lanes,
};
