// gpu.c: the device normal form as the rest of the runtime sees it: the
// backend choice, the context made ahead on a thread of its own, the runs
// and their statistics (host code). Who runs what is the scheduler's
// (run/sched.c); this file only does what it is asked.

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "dev/gpu.h"
#include "dev/dev.h"
#include "heap/heap.h"
#include "lang/names.h"
#include "dev/dev_rt.h"

void gpu_conf_default(GpuConf *c) {
  *c = (GpuConf){
    .device       = DEV_AUTO,
    .dup_mode     = DUP_OWNER,
    .take         = 64,
    .region_shift = 12,
    .lanes        = 0,
    .block        = 32,
    .budget       = 4096,
    .narrow_share = 2,
    .stack        = 0,
    .arena        = 2048,
    .walk         = 64,
    .threads      = 0,
    .max_passes   = 0,
    .pin_ahead    = 8ull << 20,
    .mark_levels  = 1,
    .handoff      = 64,
    .spark_gap    = 64,
    .dev_heap     = 0,
    .grow_limit   = 1ull << 24,
    .grow         = 0,
    .trace        = NULL,
  };
}

GpuConf      *gpu_conf(void)      { return &RT->dev->conf; }
GpuStats     *gpu_stats(void)     { return &RT->dev->stats; }
struct CuRt **gpu_cuda_part(void) { return &RT->dev->cuda; }

double gpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int gpu_cuda_compiled(void) {
#ifdef HVM4G_CUDA
  return 1;
#else
  return 0;
#endif
}

int gpu_metal_compiled(void) {
#ifdef HVM4G_METAL
  return 1;
#else
  return 0;
#endif
}

const char *gpu_cuda_archs(void) {
#ifdef HVM4G_CUDA_ARCHS
  return HVM4G_CUDA_ARCHS;
#else
  return NULL;
#endif
}

const char *gpu_absent(void) {
  if (RT->dev->conf.device == DEV_SIM || RT->dev->conf.device == DEV_METAL) return NULL;
#if defined(HVM4G_METAL) && defined(__APPLE__)
  if (RT->dev->conf.device == DEV_AUTO) return NULL;
#endif
  if (!gpu_cuda_compiled()) return "this binary was built without CUDA (no nvcc at build time)";
  if (access("/dev/nvidiactl", F_OK) != 0) return "no NVIDIA driver (no /dev/nvidiactl)";
  return NULL;
}

int gpu_cuda_likely(void) {
#ifdef HVM4G_CUDA
  if (RT->dev->conf.device == DEV_CUDA) return 1;
  // No NVIDIA device node: the probe would fail at once.
  return RT->dev->conf.device == DEV_AUTO && access("/dev/nvidiactl", F_OK) == 0;
#else
  return 0;
#endif
}

// The device is one per process (dev.h), and so is what is made for it:
// the context, made ahead on a thread of its own for the runtime that asks
// first, and the buffers a backend keeps on the device between runs. A run
// on it, and the context's making, hold `run` (a second runtime's run
// waits); `join` guards the thread's start and join. A context still being
// made when the process ends is waited for (ctx_exit): the driver's
// teardown must not race its setup.
static struct {
  pthread_mutex_t run;
  pthread_mutex_t join;
  pthread_t       th;
  _Atomic int     started;   // a thread was started (not joined)
  _Atomic int     done;      // that thread has finished
  _Atomic int     probed;    // a driver was asked for a device (probe)
  int             hooked;    // ctx_exit is registered
  Rt             *owner;     // the runtime the thread works for
  void          (*ready)(void);
} DEVICE = { .run = PTHREAD_MUTEX_INITIALIZER, .join = PTHREAD_MUTEX_INITIALIZER };

// Asks backend b for its device: from here on the process may hold a
// driver's context.
static int probe(const GpuBackend *b) {
  atomic_store(&DEVICE.probed, 1);
  return b->avail();
}

int gpu_driver_touched(void) {
  return atomic_load(&DEVICE.probed);
}

static void device_lock(void)   { pthread_mutex_lock(&DEVICE.run); }
static void device_unlock(void) { pthread_mutex_unlock(&DEVICE.run); }

#ifdef HVM4G_CUDA
static void *ctx_main(void *p) {
  RT = p;   // its time counts in the runtime that asked for it
  const GpuBackend *b = &GPU_CUDA;
  device_lock();   // another runtime's run ends first
  double t0 = gpu_now();
  int    ok = probe(b);
  RT->dev->stats.ctx_s += gpu_now() - t0;
  if (ok && b->warm) b->warm();
  device_unlock();
  atomic_store(&DEVICE.done, 1);
  if (DEVICE.ready) DEVICE.ready();
  return NULL;
}
#endif

// Waits for the context's thread: any thread's (owner NULL), or only the
// one working for `owner`. The wait counts in RT's statistics, but for
// none at the process's exit, where RT may be a runtime already closed.
static void ctx_join(const Rt *owner, int count) {
  if (!atomic_load(&DEVICE.started)) return;
  pthread_mutex_lock(&DEVICE.join);
  if (atomic_load(&DEVICE.started) && (!owner || DEVICE.owner == owner)) {
    double t0 = gpu_now();
    pthread_join(DEVICE.th, NULL);
    atomic_store(&DEVICE.started, 0);
    DEVICE.owner = NULL;
    if (count) RT->dev->stats.wait_s += gpu_now() - t0;
  }
  pthread_mutex_unlock(&DEVICE.join);
}

static void ctx_exit(void) {
  ctx_join(NULL, 0);
}

int gpu_context_start(void (*ready)(void)) {
#ifdef HVM4G_CUDA
  int started = 0;
  pthread_mutex_lock(&DEVICE.join);
  if (!atomic_load(&DEVICE.started) && !atomic_load(&DEVICE.done)) {
    DEVICE.ready = ready;
    DEVICE.owner = RT;
    started      = pthread_create(&DEVICE.th, NULL, ctx_main, RT) == 0;
    atomic_store(&DEVICE.started, started);
    if (!started) DEVICE.owner = NULL;
    if (started && !DEVICE.hooked) DEVICE.hooked = atexit(ctx_exit) == 0;
  }
  pthread_mutex_unlock(&DEVICE.join);
  return started;
#else
  (void)ready;
  return 0;
#endif
}

int gpu_context_making(void) {
  return atomic_load(&DEVICE.started) && !atomic_load(&DEVICE.done);
}

int gpu_context_live(void) {
  return atomic_load(&DEVICE.started) || atomic_load(&DEVICE.done) || RT->dev->stats.runs > 0;
}

static const char *why(const GpuBackend *b) {
  const char *w = b->why ? b->why() : NULL;
  return w && *w ? w : "no usable device";
}

// A backend asked for by name that cannot run: none, and why (the
// scheduler ends the run with the device's status; nothing falls back).
static const GpuBackend *required(const GpuBackend *b) {
  DevChoice *c = &RT->dev->choice;
  c->why_not = gpu_absent();   // the plainer reason, found without a probe
  if (!c->why_not && probe(b)) return b;
  if (!c->why_not) c->why_not = why(b);
  return NULL;
}

// A device (not the simulator): CUDA or Metal where a usable GPU is
// present and the backend was compiled in, or the one asked for; else
// none (the CPU normalizes). Probes under the device's lock.
static const GpuBackend *device(void) {
  DevChoice *c = &RT->dev->choice;
  switch (RT->dev->conf.device) {
#ifdef HVM4G_CUDA
    case DEV_CUDA: return required(&GPU_CUDA);
#endif
#ifdef HVM4G_METAL
    case DEV_METAL: return required(&GPU_METAL);
#endif
    default: break;
  }
  c->why_not = gpu_absent();
#ifdef HVM4G_CUDA
  if (probe(&GPU_CUDA)) return &GPU_CUDA;
  c->why_not = why(&GPU_CUDA);
#endif
#if defined(HVM4G_METAL) && defined(__APPLE__)
  if (probe(&GPU_METAL)) return &GPU_METAL;
  c->why_not = why(&GPU_METAL);
#endif
  return NULL;
}

// The backend of this run: the simulator only when asked for. The context
// made ahead is waited for before a device is asked anything.
static const GpuBackend *backend(void) {
  if (RT->dev->conf.device == DEV_SIM) return &GPU_SIM;
  ctx_join(NULL, 1);
  device_lock();
  const GpuBackend *b = device();
  device_unlock();
  return b;
}

int gpu_usable(void) {
  return backend() != NULL;
}

const char *gpu_why_not(void) {
  const char *w = RT->dev->choice.why_not;
  return w ? w : "no usable device";
}

u32 gpu_snf_at(u32 loc) {
  return gpu_snf_roots(&loc, 1);
}

// Reruns after a full device heap (below); value chosen by tests.
#define RERUNS 8

// Nested %gnf on the device is flattened by the core (on_device); a %gnf
// met on the CPU while a device run is in progress cannot happen (the CPU
// waits), but guard anyway: the caller then normalizes on the CPU.
u32 gpu_snf_roots(const u32 *roots, u32 n) {
  DevRt *d = RT->dev;
  if (d->choice.in_run) {
    return STOP_SPACE;
  }
  const GpuBackend *b = backend();
  if (!b) return STOP_NODEV;
  int one = b != &GPU_SIM;   // the process's device: one run at a time
  if (one) device_lock();
  d->choice.in_run = 1;
  u32 stop = gpu_run(b, roots, n);
  // A full device heap whose live words a reclaim could not fit (pass.c):
  // the run packed what it did; a larger heap goes on from there, while
  // the backend's grow allows (at most RERUNS times). A device heap that
  // was the host's whole heap (the simulator's) leaves no side room.
  int grown = -1;
  for (u32 k = 0; stop == WNF_OOM && b->grow && k < RERUNS && (grown = b->grow()) == 0; k++) {
    d->stats.stops--;
    stop = gpu_run(b, roots, n);
  }
  if (stop == WNF_OOM && grown == GROW_NONE) {
    stop          = STOP_HEAP;
    d->stats.stop = STOP_HEAP;
  }
  d->choice.in_run = 0;
  if (one) device_unlock();
  return stop;
}

// Under a collapse the normal form may be infinite (the collapser
// enumerates it lazily): the run may allocate --gpu-grow words, or four
// times the heap in use if more, before it stops and the collapser goes
// on; and never more than half the host heap's free words, which the
// collapser needs (a device run that filled the heap first left the
// collapser crawling).
u32 gpu_snf_bounded(u32 loc) {
  u64 top  = gpu_top();
  u64 room = gpu_heap_words() > top ? (gpu_heap_words() - top) / 2 : 0;
  u64 save = RT->dev->conf.grow;
  RT->dev->conf.grow     = RT->dev->conf.grow_limit > 4 * top ? RT->dev->conf.grow_limit : 4 * top;
  if (RT->dev->conf.grow > room) RT->dev->conf.grow = room > 0 ? room : 1;
  RT->dev->conf.collapse = 1;
  u32 stop = gpu_snf_at(loc);
  RT->dev->conf.grow     = save;
  RT->dev->conf.collapse = 0;
  return stop;
}

int gpu_finish(void) {
  if (gpu_trace_errno()) {
    fprintf(stderr, "hvm4g: cannot write trace file '%s': %s\n", RT->dev->conf.trace,
            strerror(gpu_trace_errno()));
    return -2;
  }
  if (RT->dev->conf.trace && !RT->dev->stats.runs) {
    fprintf(stderr, "hvm4g: --trace %s: no device run to trace (use --gpu, "
            "or a program that calls %%gnf)\n", RT->dev->conf.trace);
    return -1;
  }
  return 0;
}

u64 gpu_itrs(void) {
  return RT->dev->stats.itrs;
}

static const char *stop_name(u32 s) {
  switch (s) {
    case WNF_HOST:   return "primitive needs the host";
    case WNF_OOM:    return "device heap exhausted";
    case WNF_STACK:  return "lane stack exhausted";
    case WNF_ERROR:  return "runtime error";
    case STOP_STALL: return "no progress (deferrals only)";
    case STOP_SPACE: return "device buffers exhausted";
    case STOP_FAULT: return "device fault";
    case STOP_LIMIT: return "heap growth limit under -C (--gpu-grow)";
    case STOP_PASSES: return "--max-passes reached";
    case STOP_NARROW: return "frontier too narrow to pay (--handoff)";
    case STOP_UNSCOPED: return "the program has an unscoped binder (the CPU normalizes it)";
    case STOP_NODEV: return "no usable device";
    case STOP_HEAP:  return "heap exhausted (the live words do not fit)";
    default:         return "unknown";
  }
}

void gpu_print_stats(FILE *out) {
  GpuStats *s = &RT->dev->stats;
  if (!s->runs) return;
  double ips = s->dev_s > 0 ? (double)s->itrs / s->dev_s : 0.0;
  fprintf(out, "- Device: %s, %u lanes, dup=%s, take=%u, region=2^%u "
          "words, budget=%u\n", s->backend ? s->backend : "?", s->lanes,
          RT->dev->conf.dup_mode == DUP_OWNER ? "owner" : "atomic", RT->dev->conf.take,
          s->shift, RT->dev->conf.budget);
  fprintf(out, "- Device runs: %llu\n", (unsigned long long)s->runs);
  fprintf(out, "- Device itrs: %llu\n", (unsigned long long)s->itrs);
  fprintf(out, "- Device passes: %llu\n", (unsigned long long)s->passes);
  fprintf(out, "- Device deferrals: %llu\n", (unsigned long long)s->defers);
  if (RT->dev->conf.dup_mode == DUP_OWNER) {
    fprintf(out, "- Device owner hand-offs: %llu (slots in the lane's own "
            "arena region)\n", (unsigned long long)s->local);
  }
  fprintf(out, "- Device widest frontier: %llu\n",
          (unsigned long long)s->widest);
  fprintf(out, "- Device time: %.6f s\n", s->dev_s);
  fprintf(out, "- Device perf: %.2f M itrs/s\n", ips / 1e6);
  fprintf(out, "- Device setup: %.6f s (context %.6f s, buffers %.6f s; "
          "%.6f s of it waited for)\n", s->ctx_s + s->buf_s,
          s->ctx_s, s->buf_s, s->wait_s);
  fprintf(out, "- Device copy in: %.6f s (%llu of %llu words in use: %s)\n",
          s->in_s, (unsigned long long)s->in_words,
          (unsigned long long)s->in_top,
          s->in_words < s->in_top ? "those a run may reach" : "all");
  fprintf(out, "- Device packing: %.6f s (marking %.6f s in %llu passes; "
          "diff %.6f s, ranking %.6f s; %llu changed words below the "
          "host's top)\n", s->compact_s, s->mark_s,
          (unsigned long long)s->marks, s->roots_s, s->rank_s,
          (unsigned long long)s->changed);
  fprintf(out, "- Device copy out: %.6f s (%.1f MB into pages pinned ahead, "
          "%.1f MB pinned behind the packing)\n", s->out_s,
          (double)s->pinned / 1e6, (double)s->behind / 1e6);
  fprintf(out, "- Device heap: %llu words allocated, %llu live: the host "
          "heap grew by %llu words (%.1f MB)\n",
          (unsigned long long)s->alloc, (unsigned long long)s->live,
          (unsigned long long)s->live, (double)s->live * 8 / 1e6);
  fprintf(out, "- Device reclaims: %llu in place (%llu words given back, "
          "%.6f s, %llu mark passes; %llu live words at the last; %llu "
          "passes bounded)\n",
          (unsigned long long)s->reclaims, (unsigned long long)s->reclaimed,
          s->reclaim_s, (unsigned long long)s->reclaim_marks,
          (unsigned long long)s->heap_live, (unsigned long long)s->bounded);
  if (s->warp.steps) {
    double itrs = s->itrs ? (double)s->itrs : 1.0;
    fprintf(out, "- Warp model: %llu warp steps, %.2f active lanes per warp step "
            "(of %u), %.2f loads, %.2f stores, %.2f atomics per interaction, %.2f "
            "cache lines per warp step (%.2f per interaction)\n",
            (unsigned long long)s->warp.steps,
            (double)s->warp.lanes / (double)s->warp.steps, WARP_LANES,
            (double)s->warp.loads / itrs, (double)s->warp.stores / itrs,
            (double)s->warp.atomics / itrs, (double)s->warp.lines / (double)s->warp.steps,
            (double)s->warp.lines / itrs);
    if (s->warp.waits) {
      fprintf(out, "- Warp model waits: %llu lane rounds sat out (%.2f per interaction)\n",
              (unsigned long long)s->warp.waits, (double)s->warp.waits / itrs);
    }
  }
  if (!s->stops) {
    fprintf(out, "- Device stopped: no\n");
    return;
  }
  fprintf(out, "- Device stopped: %llu run(s); last at pass %llu, loc %u: "
          "%s", (unsigned long long)s->stops,
          (unsigned long long)s->stop_pass, s->stop_loc, stop_name(s->stop));
  if (s->stop == WNF_HOST) fprintf(out, " (%%%s)", prim_name(s->stop_pri));
  if (s->stop == WNF_ERROR) fprintf(out, " (error %u)", s->stop_err);
  fprintf(out, "; the CPU went on from there\n");
}

// Nothing to make: a zeroed part is a valid one (dev_rt.h).
int dev_rt_open(void) {
  return 0;
}

// The backends compiled in, whose parts a runtime's close frees.
static const GpuBackend *const BACKENDS[] = {
  &GPU_SIM,
#ifdef HVM4G_CUDA
  &GPU_CUDA,
#endif
#ifdef HVM4G_METAL
  &GPU_METAL,
#endif
};

void dev_rt_close(void) {
  ctx_join(RT, 1);   // a thread working for this runtime ends first
  for (u32 i = 0; i < sizeof BACKENDS / sizeof BACKENDS[0]; i++) {
    if (BACKENDS[i]->release) BACKENDS[i]->release();
  }
  free(RT->dev->ent);
  RT->dev->ent     = NULL;
  RT->dev->ent_cap = 0;
}
