// metal.c: the Metal backend (host code, plain C). A run: the used heap,
// the book and the root entry go into device buffers; each pass is one
// command buffer of five dispatches (step, segment sums, their scan,
// segment offsets, gather) and one small read back (MtlRes); the heap
// comes back whole at the end, and the simulator's packing (compact.h on
// CPU threads, sim_pack_open) keeps its live words. A heap that fills is
// reclaimed between passes the same way: the heap, frontier and claims
// come back, are packed on the host and go in again (mt_squeeze). Packing
// on the device itself, as CUDA does, is not built. The device calls
// (md_*, metal.h) are Metal on a Mac (metal_dev.m) and CPU threads under
// `make metal-check`.
//
// Built only with HVM4G_METAL (the Makefile sets it on macOS where `xcrun
// metal` exists, and for the metal-check binary).

#ifdef HVM4G_METAL

#include <stdlib.h>
#include <string.h>
#include "dev/dev.h"
#include "dev/metal/metal.h"
#include "dev/dev_rt.h"

// RT's part of the backend (RT->dev->metal): its run, made at the first
// (mt_part) and freed at the runtime's close (mt_release).
typedef struct MtRt {
  int     fault;     // a pass failed: the device heap is not trusted
  u32     lanes;
  u32     stack;
  u64     cap;       // device heap words
  u64     want;      // device heap words after a grow (0: none yet)
  u64     top0;      // the host's top when the run began
  u64    *front;     // the frontier on the host, while a reclaim packs
                     // (or a bounded pass's waiting entries, mt_pass)
  MtlArgs m;
} MtRt;

static MtRt *mt_part(char *err, unsigned errlen) {
  if (!RT->dev->metal) RT->dev->metal = gpu_part_new(sizeof(MtRt), err, errlen);
  return RT->dev->metal;
}

// The device, opened once for the process (md_init; probed under the
// device's lock, gpu.c): whether it can run.
static struct {
  int probed;
  int ok;
} MTL_DEVICE;

static int mt_avail(void) {
  if (!MTL_DEVICE.probed) {
    char err[256];
    MTL_DEVICE.probed = 1;
    MTL_DEVICE.ok     = md_init(err, sizeof err) == 0;
  }
  return MTL_DEVICE.ok;
}

static u32 mt_lanes(void) {
  return RT->dev->metal->lanes;
}

#define MT(call, what)                                                    \
  do {                                                                    \
    if ((call) != 0) {                                                    \
      snprintf(err, errlen, "%s: out of device memory", what);            \
      return -1;                                                          \
    }                                                                     \
  } while (0)

// The largest device heap: the host's capacity, what one buffer may hold,
// and u32 locations (below 2^32 words).
static u64 mt_heap_max(void) {
  u64 words = gpu_heap_words();
  u64 max   = md_max_bytes() / sizeof(Term) - MTL_HDR;
  u64 cap   = words < max ? words : max;
  return (cap < 0xFFFFFFFFull ? cap : 0xFFFFFFFFull) & ~31ull;
}

// The device heap: --dev-heap words, else the size a grow asked for, else
// HVM4G_DEV_HEAP_START's (tests: a small heap that still grows), else the
// largest; half as much when that fails, down to what the run needs.
static int mt_heap(u64 top, char *err, unsigned errlen) {
  MtRt *M = RT->dev->metal;
  u64 words = gpu_heap_words();
  u64 start = gpu_heap_start();
  u64 cap   = RT->dev->conf.dev_heap ? RT->dev->conf.dev_heap : M->want ? M->want
            : start ? start : words;
  u64 min   = top + (1ull << 20) < words ? top + (1ull << 20) : words;
  if (cap > mt_heap_max()) cap = mt_heap_max();
  if (cap < min) cap = min;
  cap &= ~31ull;
  while (md_need(MB_HEAP, (MTL_HDR + cap) * sizeof(Term)) != 0 ||
         md_need(MB_SEEN, (cap / 32 + 1) * sizeof(u32)) != 0) {
    if ((cap = gpu_cap_halve(cap, min, err, errlen)) == 0) return -1;
  }
  M->cap = cap;
  return 0;
}

static int mt_open(const u32 *roots, u32 nroot, char *err, unsigned errlen) {
  MtRt *M = mt_part(err, errlen);
  if (!M) return -1;
  u64 top = gpu_top();
  u32 bc  = gpu_book_cnt();
  RT->dev->conf.take     = 32;   // the only DUP take Apple GPUs have (-s says so)
  RT->dev->stats.backend = md_name();
  GpuOpen o;   // the heap and book are the kernels' buffers
  if (gpu_open_args(&o, roots, nroot, NULL, NULL, NULL, 0, 4096, 0, err, errlen) != 0) {
    return -1;
  }
  M->fault = 0;
  M->top0  = top;
  M->lanes = RT->dev->conf.lanes ? RT->dev->conf.lanes : md_lanes();
  M->stack = o.a.stack_cap;
  if (mt_heap(top, err, errlen) != 0) return -1;
  if (sim_pack_open(err, errlen) != 0) return -1;
  if (top + 1024 > M->cap) {
    snprintf(err, errlen, "heap in use (%llu words) does not fit the device "
             "heap (%llu words)", (unsigned long long)top,
             (unsigned long long)M->cap);
    return -1;
  }
  u32 g[2 * MTL_HDR] = {0};
  g[MTL_G_TOP]   = (u32)top;
  g[MTL_G_CAP]   = (u32)M->cap;
  g[MTL_G_ARENA] = o.arena;
  g[MTL_G_ALIGN] = (u32)o.align;
  MT(md_put(MB_HEAP, 0, g, sizeof g), "heap header");
  // The whole used range: the heap comes back whole over the host's
  // (mt_roots), so a word left out here would come back as garbage.
  MT(md_put(MB_HEAP, MTL_HDR * sizeof(Term), gpu_heap(), top * sizeof(Term)),
     "heap copy in");
  RT->dev->stats.in_top   += top;
  RT->dev->stats.in_words += top;
  MT(md_zero(MB_SEEN, 0, (M->cap / 32 + 1) * sizeof(u32)), "seen bitmap");
  MT(md_need(MB_BOOK, (bc + 1) * sizeof(u32)), "book");
  MT(md_need(MB_BOOK_LEN, (bc + 1) * sizeof(u32)), "book");
  if (bc) {
    MT(md_put(MB_BOOK, 0, gpu_book(), bc * sizeof(u32)), "book");
    MT(md_put(MB_BOOK_LEN, 0, gpu_book_len(), bc * sizeof(u32)), "book");
  }
  MT(md_need(MB_STACKS, (u64)M->lanes * M->stack * sizeof(Term)),
     "lane stacks (lower --lanes or --stack)");
  MT(md_need(MB_ARENA, 2 * (u64)M->lanes * sizeof(u32)), "lane arenas");
  MT(md_zero(MB_ARENA, 0, 2 * (u64)M->lanes * sizeof(u32)), "lane arenas");
  MT(md_need(MB_OUT_N, (u64)M->lanes * sizeof(u32)), "lane counts");
  MT(md_need(MB_OFF, (u64)M->lanes * sizeof(u32)), "lane offsets");
  MT(md_need(MB_PART, MTL_SCAN_T * sizeof(u32)), "scan");
  MT(md_need(MB_RES, sizeof(MtlRes)), "counters");
  MT(md_need(MB_ARGS, sizeof(MtlArgs)), "arguments");
  MT(md_need(MB_IN, (u64)nroot * sizeof(u64)) ||
     md_put(MB_IN, 0, o.ent, (u64)nroot * sizeof(u64)), "frontier");
  M->m.book_cnt     = o.a.book_cnt;
  M->m.dup_mode     = o.a.dup_mode;
  M->m.region_shift = o.a.region_shift;
  M->m.shallow_inc  = o.a.shallow_inc;
  M->m.spark_gap    = o.a.spark_gap;
  M->m.stack_cap    = o.a.stack_cap;
  return 0;
}

// The frontier's copy on the host: a reclaim's (one whose marking failed
// left it), or a bounded pass's waiting entries.
static void mt_front_free(void) {
  MtRt *M = RT->dev->metal;
  free(M->front);
  M->front = NULL;
}

// The entries [run, n) of a bounded pass (pass.c) wait on the host while
// it runs, and go in behind its pushes: a copy out and in, which only a
// run short of room pays.
static long long mt_pass(u32 n, u32 run, PassCtl *ctl, char *err,
                         unsigned errlen) {
  MtRt *M = RT->dev->metal;
  PassArgs a;
  u32 act  = run < M->lanes ? run : M->lanes;   // lanes with entries this pass
  u64 keep = (u64)(n - run) * sizeof(u64);
  (void)gpu_pass_shape(&a, run, M->lanes, 0);   // no HEAP_WAIT_POLLS in MSL
  M->m.n         = run;
  M->m.lanes     = act;
  M->m.cap       = a.cap;
  M->m.budget    = a.budget;
  M->m.spark_gap = a.spark_gap;
  u64 segs   = (u64)act * a.cap * sizeof(u64);
  if (md_need(MB_OUTS, segs) != 0 || md_need(MB_NEXT, segs + keep) != 0) {
    snprintf(err, errlen, "out of device memory for a frontier of %u", n);
    return -1;
  }
  mt_front_free();
  M->front = keep ? malloc(keep) : NULL;
  if (keep && (!M->front || md_get(MB_IN, (u64)run * sizeof(u64), M->front, keep) != 0)) {
    snprintf(err, errlen, "%s", M->front ? "frontier copy out failed"
             : "out of host memory for the frontier");
    return -1;
  }
  MT(md_put(MB_ARGS, 0, &M->m, sizeof M->m), "arguments");
  MT(md_zero(MB_RES, 0, sizeof(MtlRes)), "counters");
  MtlCall calls[MK_COUNT] = {
    { MK_STEP,   act        },
    { MK_SUM,    MTL_SCAN_T },
    { MK_SCAN,   1          },
    { MK_OFF,    MTL_SCAN_T },
    { MK_GATHER, act        },
  };
  if (md_run(calls, MK_COUNT, err, errlen) != 0) {
    M->fault = 1;
    return -1;
  }
  MtlRes r;
  u32    g[2 * MTL_HDR];
  MT(md_get(MB_RES, 0, &r, sizeof r), "counters");
  MT(md_get(MB_HEAP, 0, g, sizeof g), "heap header");
  *ctl     = r.ctl;
  ctl->top = g[MTL_G_TOP];   // the heap growth bound under -C reads it
  md_swap(MB_IN, MB_NEXT);
  MT(keep && md_put(MB_IN, (u64)r.total * sizeof(u64), M->front, keep), "frontier");
  mt_front_free();
  return (long long)r.total + (n - run);
}

// The device heap's [0, top) copied whole over the host's, whose top is
// raised to it. 0, or -1 (message in `err`) with nothing copied.
static int mt_heap_back(char *err, unsigned errlen) {
  MtRt *M = RT->dev->metal;
  u32 g[2 * MTL_HDR];
  if (md_get(MB_HEAP, 0, g, sizeof g) != 0) {
    snprintf(err, errlen, "heap header copy out failed");
    return -1;
  }
  u64 top = g[MTL_G_TOP] < M->cap ? g[MTL_G_TOP] : M->cap;
  if (md_get(MB_HEAP, MTL_HDR * sizeof(Term), gpu_heap(),
             top * sizeof(Term)) != 0) {
    // Part of the host heap may be the device's: neither graph is whole.
    fprintf(stderr, "hvm4g: device (metal): the heap copy back failed "
            "midway; cannot go on\n");
    exit(1);
  }
  gpu_top_raise(top);
  return 0;
}

// After a fault the device heap is dropped: the host heap is still the
// one copied in, or the one the last reclaim packed (a valid term graph
// either way), and the CPU normalizes from there. Otherwise the heap comes
// back whole; the packing's roots follow.
static long long mt_roots(char *err, unsigned errlen) {
  MtRt *M = RT->dev->metal;
  if (M->fault) {
    snprintf(err, errlen, "a pass failed; the device's work is dropped");
    return -1;
  }
  if (mt_heap_back(err, errlen) != 0) return -1;
  return GPU_SIM.roots(err, errlen);
}

static long long mt_mark(u32 n, u32 budget, u32 *cut, char *err,
                         unsigned errlen) {
  return GPU_SIM.mark(n, budget, cut, err, errlen);
}

static int mt_close(char *err, unsigned errlen) {
  mt_front_free();
  return GPU_SIM.close(err, errlen);
}

static void mt_abandon(void) {
  mt_front_free();
  GPU_SIM.abandon();
}

// At the runtime's close: the part (a run's end leaves only it).
static void mt_release(void) {
  if (!RT->dev->metal) return;
  mt_front_free();
  free(RT->dev->metal);
  RT->dev->metal = NULL;
}

// Reclaiming in place (pass.c)
// ============================
// On the host: the heap comes back whole (as for the run's end), with the
// frontier; the simulator's packing marks from the changed words and the
// entries' slots (sim_reclaim_frontier, then GPU_SIM.mark) and packs the
// host's copy (sim_squeeze_host), the claims of the seen bitmap moved
// with their slots. What it wrote goes back: the words from the lowest
// changed one to the new top, the claims, the frontier, the top; the
// lanes' arenas are emptied so that refills take the freed words.

static long long mt_reclaim_roots(u32 n, char *err, unsigned errlen) {
  MtRt *M = RT->dev->metal;
  if (mt_heap_back(err, errlen) != 0) return -1;
  mt_front_free();
  M->front = malloc((n ? n : 1) * sizeof(u64));
  if (!M->front || md_get(MB_IN, 0, M->front, (u64)n * sizeof(u64)) != 0) {
    snprintf(err, errlen, "%s", M->front ? "frontier copy out failed"
             : "out of host memory for the frontier");
    return -1;
  }
  return sim_reclaim_frontier(M->front, n, err, errlen);
}

// Once the device's buffers are being written, a failure leaves them
// neither graph: the run is dropped (M->fault) and the CPU goes on from the
// host heap, which holds the packed graph.
static int mt_squeeze(u32 n, GpuReclaim *r, char *err, unsigned errlen) {
  MtRt *M = RT->dev->metal;
  u64  dtop = gpu_top();
  u64  w0   = M->top0 >> 5;        // the claims' bitmap words moved
  u64  nw   = (dtop >> 5) + 1 - w0;
  u64  low  = 0;
  // Whole-heap indices as sim_squeeze_host wants them; the words below w0
  // are neither read nor written.
  u32 *seen = malloc(((dtop >> 5) + 1) * sizeof(u32));
  if (!seen || md_get(MB_SEEN, w0 * sizeof(u32), seen + w0,
                      nw * sizeof(u32)) != 0) {
    snprintf(err, errlen, "%s", seen ? "seen bitmap copy out failed"
             : "out of host memory for the seen bitmap");
    free(seen);
    return -1;
  }
  if (sim_squeeze_host(n, seen, M->cap, M->m.region_shift, M->front, &low, r,
                       err, errlen) != 0) {
    free(seen);
    return -1;
  }
  u64 top   = gpu_top();
  u32 top32 = (u32)top;
  int fail  = md_put(MB_HEAP, (MTL_HDR + low) * sizeof(Term), gpu_heap() + low,
                     (top - low) * sizeof(Term)) ||
              md_put(MB_SEEN, w0 * sizeof(u32), seen + w0, nw * sizeof(u32)) ||
              md_put(MB_IN, 0, M->front, (u64)n * sizeof(u64)) ||
              md_zero(MB_ARENA, 0, 2 * (u64)M->lanes * sizeof(u32)) ||
              md_put(MB_HEAP, MTL_G_TOP * sizeof(u32), &top32, sizeof top32);
  free(seen);
  mt_front_free();
  if (fail) {
    M->fault = 1;
    snprintf(err, errlen, "copying the packed heap in failed");
    return -1;
  }
  return 0;
}

// After a run whose live words a reclaim could not fit in the heap's
// room (pass.c, RECLAIM_FREE): the next run gets twice as much, within the
// largest heap. -1 when it is that already, or --dev-heap fixed the size:
// the CPU finishes, in the host's heap (as CUDA's).
static int mt_grow(void) {
  MtRt *M = RT->dev->metal;
  u64 max = mt_heap_max();
  if (RT->dev->conf.dev_heap || M->cap >= max) return -1;
  M->want = 2 * M->cap < max ? 2 * M->cap : max;
  return 0;
}

// Under `make metal-check` (HVM4G_METAL_CPU) the kernels run on CPU
// threads, whose pass rate says nothing of a device's, as the simulator's.
#ifdef HVM4G_METAL_CPU
#define MT_NARROW_RATE 0u
#else
#define MT_NARROW_RATE NARROW_RATE_DEVICE
#endif

const GpuBackend GPU_METAL = {
  .name        = "metal",
  .avail       = mt_avail,
  .warm        = NULL,
  .open        = mt_open,
  .pass        = mt_pass,
  .roots       = mt_roots,
  .mark        = mt_mark,
  .close       = mt_close,
  .abandon     = mt_abandon,
  .grow        = mt_grow,
  .lanes       = mt_lanes,
  .narrow_rate = MT_NARROW_RATE,
  .why         = NULL,
  .reclaim_roots = mt_reclaim_roots,
  .squeeze     = mt_squeeze,
  .release     = mt_release,
};

#endif
