// mtl_cpu.cpp: the Metal device layer (metal.h) on CPU threads, for `make
// metal-check` on machines without Apple GPUs. It compiles the Metal
// kernel source itself (src/dev/metal/metal_kern.metal) as C++ against
// the MSL shim (tests/metal/metal_stdlib) and runs its kernels as
// metal_dev.m dispatches them: buffers at fixed indices, the calls of a
// pass in order.
//
// The step kernel's grid is spread over HVM4G_MTL_THREADS threads (default
// 4; lanes t, t+T, ...), so lanes race on DUP slots as GPU threads do; the
// other kernels are small and run on the calling thread. HVM4G_MTL_YIELD=N
// yields before one atomic access in N (metal_stdlib), widening races.

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dev/metal/metal_kern.metal"
#include "dev/metal/metal.h"

// The buffers, once for the process as on a device (metal_dev.m's).
static struct {
  void *p[MB_COUNT];
  u64   cap[MB_COUNT];   // bytes
} D;

static u32 env_u32(const char *name, u32 dflt) {
  const char *v = getenv(name);
  return v && *v ? (u32)strtoul(v, NULL, 10) : dflt;
}

uint metal::SHIM_YIELD = 0;

extern "C" int md_init(char *err, unsigned errlen) {
  metal::SHIM_YIELD = env_u32("HVM4G_MTL_YIELD", 0);
  return 0;
}

extern "C" const char *md_name(void) {
  return "metal kernels on CPU threads (shim)";
}

extern "C" u32 md_lanes(void) {
  return 256;
}

extern "C" u64 md_max_bytes(void) {
  return 1ull << 28;   // 32M words: the tests need far less
}

extern "C" int md_need(u32 b, u64 bytes) {
  if (bytes <= D.cap[b]) return 0;
  u64 c = D.cap[b] ? D.cap[b] : 4096;
  while (c < bytes) c *= 2;
  if (D.p[b]) munmap(D.p[b], D.cap[b]);
  D.p[b]   = NULL;
  D.cap[b] = 0;
  void *p = mmap(NULL, c, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return -1;
  D.p[b]   = p;
  D.cap[b] = c;
  return 0;
}

extern "C" int md_put(u32 b, u64 off, const void *src, u64 bytes) {
  if (off + bytes > D.cap[b]) return -1;
  memcpy((char *)D.p[b] + off, src, bytes);
  return 0;
}

extern "C" int md_get(u32 b, u64 off, void *dst, u64 bytes) {
  if (off + bytes > D.cap[b]) return -1;
  memcpy(dst, (char *)D.p[b] + off, bytes);
  return 0;
}

extern "C" int md_zero(u32 b, u64 off, u64 bytes) {
  if (off + bytes > D.cap[b]) return -1;
  memset((char *)D.p[b] + off, 0, bytes);
  return 0;
}

extern "C" void md_swap(u32 a, u32 b) {
  void *p = D.p[a]; D.p[a] = D.p[b]; D.p[b] = p;
  u64   c = D.cap[a]; D.cap[a] = D.cap[b]; D.cap[b] = c;
}

// A buffer as the kernel's argument type (MSL: [[buffer(i)]]).
template <typename T> static device T *buf(u32 b) {
  return (device T *)D.p[b];
}

static constant MtlArgs &args(void) {
  return *(constant MtlArgs *)D.p[MB_ARGS];
}

// One thread of kernel k's grid.
static void run_one(u32 k, u32 gid) {
  switch (k) {
    case MK_STEP:
      k_step(buf<Term>(MB_HEAP), buf<const u32>(MB_BOOK),
             buf<const u32>(MB_BOOK_LEN), buf<const u64>(MB_IN),
             buf<u64>(MB_OUTS), buf<u32>(MB_OUT_N), buf<u32>(MB_ARENA),
             buf<Term>(MB_STACKS), buf<u32>(MB_SEEN), buf<MtlRes>(MB_RES),
             args(), gid);
      break;
    case MK_SUM:
      k_sum(buf<const u32>(MB_OUT_N), buf<u32>(MB_PART), args(), gid);
      break;
    case MK_SCAN:
      k_scan(buf<u32>(MB_PART), buf<MtlRes>(MB_RES), gid);
      break;
    case MK_OFF:
      k_off(buf<const u32>(MB_OUT_N), buf<u32>(MB_OFF),
            buf<const u32>(MB_PART), args(), gid);
      break;
    case MK_GATHER:
      k_gather(buf<const u64>(MB_OUTS), buf<const u32>(MB_OUT_N),
               buf<const u32>(MB_OFF), buf<u64>(MB_NEXT), args(), gid);
      break;
  }
}

typedef struct {
  u32 k, t, T, n;
} Grid;

static void *grid_part(void *arg) {
  Grid *g = (Grid *)arg;
  for (u32 i = g->t; i < g->n; i += g->T) run_one(g->k, i);
  return NULL;
}

extern "C" int md_run(const MtlCall *calls, u32 n, char *err,
                      unsigned errlen) {
  u32 T = env_u32("HVM4G_MTL_THREADS", 4);
  if (T < 1) T = 1;
  if (T > 64) T = 64;
  for (u32 c = 0; c < n; c++) {
    u32 k = calls[c].fn, m = calls[c].threads;
    if (k != MK_STEP || T == 1 || m < 2) {
      for (u32 i = 0; i < m; i++) run_one(k, i);
      continue;
    }
    pthread_t th[64];
    Grid      g[64];
    int       made[64];
    for (u32 t = 0; t < T; t++) {
      g[t]    = Grid{k, t, T, m};
      made[t] = t > 0 && pthread_create(&th[t], NULL, grid_part, &g[t]) == 0;
    }
    grid_part(&g[0]);
    for (u32 t = 1; t < T; t++) {
      if (made[t]) pthread_join(th[t], NULL);
      else         grid_part(&g[t]);
    }
  }
  return 0;
}
