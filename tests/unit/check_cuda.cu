// check_cuda.cu: compiles the WNF core as CUDA device code, to keep wnf.h
// inside the portable dialect. Not built by default:
//   nvcc -x cu -arch=sm_90 -Isrc -c tests/unit/check_cuda.cu -o /tmp/check_cuda.o

// The HEAP_* primitives below are device-only, so the core is too.
#define FN static __device__ inline
#include "core.h"

#define HEAP_LD(w, loc)      ((w)->heap[(loc)])
#define HEAP_ST(w, loc, t)   ((w)->heap[(loc)] = (t))
#define HEAP_XCHG(w, loc, t) \
  ((Term)atomicExch((unsigned long long *)&(w)->heap[(loc)], (unsigned long long)(t)))
#define HEAP_CAS(w, loc, o, n) \
  ((Term)atomicCAS((unsigned long long *)&(w)->heap[(loc)], \
                   (unsigned long long)(o), (unsigned long long)(n)))
#define HEAP_REFILL(w, n) check_refill((w), (n))

// A lane's arena comes from one shared bump counter (heap[0] here).
__device__ static inline u32 check_refill(Wnf *w, u32 n) {
  u32 want = n > 4096u ? n : 4096u;
  unsigned long long at = atomicAdd((unsigned long long *)&w->heap[0], (unsigned long long)want);
  if (at + want > 0xFFFFFFFFull) {
    return 0;
  }
  w->next = (u32)at;
  w->end  = (u32)at + want;
  return 1;
}

#include "wnf.h"

// One lane per root: WNF of heap[roots[i]] with the lane's own stack.
__global__ void check_wnf(Term *heap, const u32 *book, const u32 *book_len, u32 book_cnt,
                          Term *stacks, u32 stack_cap, const u32 *roots, u32 n, u32 *status) {
  u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Wnf w = {};
  w.heap      = heap;
  w.book      = book;
  w.book_len  = book_len;
  w.book_cnt  = book_cnt;
  w.stack     = stacks + (u64)i * stack_cap;
  w.stack_cap = stack_cap;
  w.budget    = 1000;
  w.dup_mode  = DUP_ATOMIC;
  w.on_device = 1;
  heap[roots[i]] = wnf_run(&w, heap[roots[i]]);
  status[i] = w.status;
}
