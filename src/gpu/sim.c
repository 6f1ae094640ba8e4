// sim.c: the simulated device. The pass kernel (lane.h) run by CPU threads
// in blocks of lanes, on the host heap itself, with real C11 atomics for
// try_take. It runs everywhere, so CI exercises the device path with it.
//
// One pass: thread t runs blocks t, t+T, t+2T, ...; inside a block the
// lanes take turns, one entry each, so lanes of one block interleave too.
// The lane segments are then concatenated in lane order (deterministic).

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "../heap.h"
#include "dev.h"

// Heap primitives of core.h on the shared host heap. --take=32 (SIM_T32)
// runs Apple's scheme instead: every word as two 32-bit halves, DUP slots
// taken by an exchange on the high half (take32.h), so the many-lane races
// here check it against the CPU.
#define T32                 u32
#define T32_LD(p)           __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define T32_ST(p, v)        __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define T32_XCHG(p, v)      __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)
#define T32_CAS(p, o, n)    sim_cas32((p), (o), (n))
#define T32_FENCE()         __atomic_thread_fence(__ATOMIC_ACQ_REL)
static int SIM_T32 = 0;

#define HEAP_LD(w, loc)        (SIM_T32 ? t32_ld((w)->heap, (loc)) : \
  __atomic_load_n(&(w)->heap[(loc)], __ATOMIC_ACQUIRE))
#define HEAP_ST(w, loc, t)     (SIM_T32 ? t32_st((w)->heap, (loc), (t)) : \
  __atomic_store_n(&(w)->heap[(loc)], (t), __ATOMIC_RELEASE))
#define HEAP_XCHG(w, loc, t)   (SIM_T32 ? t32_xchg((w)->heap, (loc), (t)) : \
  __atomic_exchange_n(&(w)->heap[(loc)], (t), __ATOMIC_ACQ_REL))
#define HEAP_CAS(w, loc, o, n) (SIM_T32 ? t32_cas((w)->heap, (loc), (o), (n)) : \
  sim_cas(&(w)->heap[(loc)], (o), (n)))
#define HEAP_REFILL(w, n)      sim_refill((w), (n))

#define GPU_ADD64(p, v)    __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define GPU_OR32(p, v)     __atomic_fetch_or((p), (v), __ATOMIC_ACQ_REL)
#define GPU_CAS32(p, o, n) sim_cas32((p), (o), (n))

static u32 SIM_ARENA = 2048;

static inline Term sim_cas(Term *p, Term o, Term n) {
  __atomic_compare_exchange_n(p, &o, n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return o;
}

static inline u32 sim_cas32(u32 *p, u32 o, u32 n) {
  __atomic_compare_exchange_n(p, &o, n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return o;
}

#include "take32.h"

// A fresh arena from the global top: one atomic per refill, none per node.
// Owner mode: arenas are whole regions (SIM_ALIGN words, aligned), so each
// region a pass allocates in has exactly one allocating lane.
static u64 SIM_ALIGN = 0;

static inline int sim_refill(Wnf *w, u32 n) {
  u64 top = atomic_load(&HEAP_TOP);
  for (;;) {
    u64 at  = top;
    u64 get = n > SIM_ARENA ? n : SIM_ARENA;
    if (SIM_ALIGN) {
      at  = (top + SIM_ALIGN - 1) & ~(SIM_ALIGN - 1);
      get = ((u64)n + SIM_ALIGN - 1) & ~(SIM_ALIGN - 1);
    }
    if (at + get > HEAP_WORDS) {
      at  = top;
      get = n;                      // last words: exactly what is needed
      if (at + get > HEAP_WORDS) return 0;
    }
    if (atomic_compare_exchange_weak(&HEAP_TOP, &top, at + get)) {
      w->next = (u32)at;
      w->end  = (u32)(at + get);
      return 1;
    }
  }
}

#include "lane.h"

// State of the simulated device (one run at a time).
static struct {
  PassArgs a;
  u32      lanes;
  u32      block;
  u32      threads;
  u32      stride;   // threads running this pass
  u64     *in;       // frontier
  u64      in_cap;
  u64     *outs;     // lanes * cap
  u64      outs_cap;
  u32     *out_n;    // per lane
  u32     *arena;    // per lane: next, end
  Term    *stacks;   // lanes * stack_cap
  u32     *seen;     // one bit per heap word (stuck DUP slots claimed)
  u64      seen_bytes;
  u32      n;        // entries in `in`
  PassCtl *ctl;
} S;

static int sim_avail(void) {
  return 1;
}

static u32 sim_lanes(void) {
  return S.lanes;
}

static void *zmap(u64 bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static int grow(u64 **p, u64 *cap, u64 need) {
  if (need <= *cap) return 0;
  u64 c = *cap ? *cap : 1024;
  while (c < need) c *= 2;
  u64 *q = realloc(*p, c * sizeof(u64));
  if (!q) return -1;
  *p = q; *cap = c;
  return 0;
}

static void sim_free(void) {
  free(S.in);     S.in = NULL;     S.in_cap = 0;
  free(S.outs);   S.outs = NULL;   S.outs_cap = 0;
  free(S.out_n);  S.out_n = NULL;
  free(S.arena);  S.arena = NULL;
  if (S.stacks) munmap(S.stacks, (u64)S.lanes * S.a.stack_cap * sizeof(Term));
  if (S.seen)   munmap(S.seen, S.seen_bytes);
  S.stacks = NULL; S.seen = NULL;
}

static int sim_open(u64 root, char *err, unsigned errlen) {
  long cpus    = sysconf(_SC_NPROCESSORS_ONLN);
  S.lanes      = GPU.lanes ? GPU.lanes : 128;
  S.block      = GPU.block ? GPU.block : 32;
  S.threads    = GPU.threads ? GPU.threads : (u32)(cpus < 2 ? 2 : cpus);
  SIM_ARENA    = GPU.arena;
  SIM_ALIGN    = GPU.dup_mode == DUP_OWNER ? (1ull << GPU.region_shift) : 0;
  SIM_T32      = GPU.take == 32;
  S.a.heap         = HEAP;
  S.a.book         = BOOK;
  S.a.book_len     = BOOK_LEN;
  S.a.book_cnt     = gpu_book_cnt();
  S.a.dup_mode     = GPU.dup_mode;
  S.a.region_shift = GPU.region_shift;
  S.a.budget       = GPU.budget;
  S.a.stack_cap    = GPU.stack ? GPU.stack : (1u << 15);
  S.a.cap          = 0;
  S.out_n      = calloc(S.lanes, sizeof(u32));
  S.arena      = calloc(2 * (u64)S.lanes, sizeof(u32));
  S.stacks     = zmap((u64)S.lanes * S.a.stack_cap * sizeof(Term));
  S.seen_bytes = (HEAP_WORDS / 32 + 1) * sizeof(u32);
  S.seen       = zmap(S.seen_bytes);
  if (!S.out_n || !S.arena || !S.stacks || !S.seen || grow(&S.in, &S.in_cap, 1)) {
    snprintf(err, errlen, "out of host memory for %u lanes", S.lanes);
    sim_free();
    return -1;
  }
  S.in[0] = root;
  S.n     = 1;
  return 0;
}

typedef struct {
  u32 tid;
} SimArg;

// Runs every block b with b % threads == tid.
static void *sim_worker(void *arg) {
  u32 tid    = ((SimArg *)arg)->tid;
  u32 lanes  = S.lanes;
  u32 blocks = (lanes + S.block - 1) / S.block;
  Lane *L    = malloc(S.block * sizeof(Lane));
  if (!L) return NULL;
  for (u32 b = tid; b < blocks; b += S.stride) {
    u32 l0 = b * S.block;
    u32 nl = lanes - l0 < S.block ? lanes - l0 : S.block;
    for (u32 j = 0; j < nl; j++) {
      lane_begin(&L[j], &S.a, l0 + j, S.stacks, S.arena, S.outs);
    }
    // Round r: lane l takes entry l + r * lanes.
    for (u64 r = 0;; r++) {
      int any = 0;
      for (u32 j = 0; j < nl; j++) {
        u64 i = (u64)(l0 + j) + r * lanes;
        if (i >= S.n) continue;
        any = 1;
        u32 rem = (u32)((S.n - 1 - i) / lanes);
        lane_entry(&L[j], &S.a, S.seen, S.ctl, S.in[i], rem);
      }
      if (!any) break;
    }
    for (u32 j = 0; j < nl; j++) {
      lane_end(&L[j], S.arena, l0 + j, S.out_n, S.ctl);
    }
  }
  free(L);
  return NULL;
}

static long long sim_pass(u32 n, PassCtl *ctl, char *err, unsigned errlen) {
  S.n     = n;
  S.ctl   = ctl;
  gpu_pass_shape(&S.a, n, S.lanes);
  if (grow(&S.outs, &S.outs_cap, (u64)S.lanes * S.a.cap)) {
    snprintf(err, errlen, "out of host memory for a frontier of %u", n);
    return -1;
  }
  u32 blocks = (S.lanes + S.block - 1) / S.block;
  u32 T      = S.threads < blocks ? S.threads : blocks;
  pthread_t th[T];
  SimArg    args[T];
  u8        own[T];
  S.stride = T;
  for (u32 t = 1; t < T; t++) {
    args[t].tid = t;
    own[t] = pthread_create(&th[t], NULL, sim_worker, &args[t]) == 0;
  }
  args[0].tid = 0;
  sim_worker(&args[0]);
  for (u32 t = 1; t < T; t++) {
    if (own[t]) pthread_join(th[t], NULL);
    else        sim_worker(&args[t]);  // no thread: run its blocks here
  }
  // Next frontier: lane segments in lane order.
  u64 m = 0;
  for (u32 l = 0; l < S.lanes; l++) m += S.out_n[l];
  if (grow(&S.in, &S.in_cap, m ? m : 1)) {
    snprintf(err, errlen, "out of host memory for a frontier of %llu",
             (unsigned long long)m);
    return -1;
  }
  u64 at = 0;
  for (u32 l = 0; l < S.lanes; l++) {
    memcpy(S.in + at, S.outs + (u64)l * S.a.cap, S.out_n[l] * sizeof(u64));
    at += S.out_n[l];
  }
  S.n = (u32)m;
  return (long long)m;
}

static int sim_close(char *err, unsigned errlen) {
  // The lanes allocated straight from HEAP_TOP: nothing to copy.
  sim_free();
  return 0;
}

const GpuBackend GPU_SIM = {
  .name   = "sim",
  .avail  = sim_avail,
  .open   = sim_open,
  .pass   = sim_pass,
  .close  = sim_close,
  .lanes  = sim_lanes,
};
