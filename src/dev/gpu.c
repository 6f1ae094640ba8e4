// gpu.c: the device normal form as the CPU runtime sees it: flags,
// backend choice, statistics (host code).

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "dev/gpu.h"
#include "dev/dev.h"
#include "heap/heap.h"
#include "cpu/eval.h"
#include "cpu/snf.h"
#include "cpu/pool.h"
#include "lang/parse.h"
#include "lang/names.h"

GpuConf GPU = {
  .requested    = 0,
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
  .cpu_first    = 1u << 16,
  .warm_after   = 200,
  .take_max     = 64ull << 20,
  .restart      = 1,
  .pin_ahead    = 8ull << 20,
  .mark_levels  = 1,
  .handoff      = 64,
  .spark_gap    = 64,
  .dev_heap     = 0,
  .grow         = 0,
  .trace        = NULL,
};

GpuStats GPU_STATS = { .warm_at = -1 };

// --gpu-grow: words a run under a collapse may allocate (gpu_snf_bounded).
static u64 GPU_GROW = 1ull << 24;

double gpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *msg, const char *arg) {
  fprintf(stderr, "hvm4g: %s%s\n", msg, arg ? arg : "");
  exit(1);
}

// "--name=N" with N in [lo, hi]; exits with a message otherwise.
static u32 num_arg(const char *flag, const char *val, u64 lo, u64 hi) {
  char *end = NULL;
  unsigned long long n = strtoull(val, &end, 10);
  if (end == val || *end != '\0' || n < lo || n > hi) {
    fprintf(stderr, "hvm4g: %s expects a number in [%llu, %llu], got '%s'\n",
            flag, (unsigned long long)lo, (unsigned long long)hi, val);
    exit(1);
  }
  return (u32)n;
}

static int cuda_compiled(void) {
#ifdef HVM4G_CUDA
  return 1;
#else
  return 0;
#endif
}

#ifdef HVM4G_CUDA
static int cuda_usable(void) {
  return GPU_CUDA.avail();
}
#endif

// `--key=value` or `--key value`: the value, and how many argv it used.
static const char *opt_val(int argc, char **argv, int i, const char *key,
                           int *used) {
  size_t k = strlen(key);
  const char *a = argv[i];
  if (strncmp(a, key, k) != 0) return NULL;
  if (a[k] == '=') { *used = 1; return a + k + 1; }
  if (a[k] == '\0') {
    if (i + 1 >= argc) die("missing value after ", key);
    *used = 2;
    return argv[i + 1];
  }
  return NULL;
}

// The numeric device flags: --name=N, N in [lo, hi], into a field (and
// `set` noted where the default depends on whether it was given).
static const struct {
  const char *name;
  u32        *field;
  u32         lo, hi;
  int        *set;
} NUM_FLAGS[] = {
  { "--region-shift",  &GPU.region_shift, 8,  31,        &GPU.shift_set       },
  { "--lanes",         &GPU.lanes,        1,  1u << 22,  NULL                 },
  { "--budget",        &GPU.budget,       1,  1u << 30,  NULL                 },
  { "--narrow-share",  &GPU.narrow_share, 1,  1u << 20,  NULL                 },
  { "--stack",         &GPU.stack,        64, 1u << 26,  NULL                 },
  { "--arena",         &GPU.arena,        64, 1u << 24,  &GPU.arena_set       },
  { "--walk",          &GPU.walk,         0,  1u << 20,  NULL                 },
  { "--sim-threads",   &GPU.threads,      1,  1024,      NULL                 },
  { "--gpu-spark-gap", &GPU.spark_gap,    0,  1u << 30,  NULL                 },
  { "--cpu-first",     &GPU.cpu_first,    0,  1u << 31,  &GPU.cpu_first_set   },
  { "--handoff",       &GPU.handoff,      0,  1u << 30,  NULL                 },
  { "--narrow-rate",   &GPU.narrow_rate,  0,  1u << 20,  &GPU.narrow_rate_set },
  { "--dup-wait",      &GPU.dup_wait,     0,  1u << 16,  &GPU.dup_wait_set    },
  { "--warm-after",    &GPU.warm_after,   0,  1u << 30,  NULL                 },
  { "--max-passes",    &GPU.max_passes,   1,  1u << 30,  NULL                 },
  { "--mark-levels",   &GPU.mark_levels,  0,  1,         NULL                 },
  { "--restart",       &GPU.restart,      0,  1,         NULL                 },
};

// Sizes in words (heap_parse_size: digits, then K/M/G); 0 is a value
// only where lo is 0.
static const struct {
  const char *name;
  u64        *field;
  u64         lo;
  const char *lo_s;
} SIZE_FLAGS[] = {
  { "--dev-heap",  &GPU.dev_heap,  1u << 20, "1M" },
  { "--take-max",  &GPU.take_max,  0,        "0"  },
  { "--pin-ahead", &GPU.pin_ahead, 0,        "0"  },
  { "--gpu-grow",  &GPU_GROW,      1024,     "1K" },
};

int gpu_flag(int argc, char **argv, int i) {
  const char *a = argv[i];
  const char *v;
  int used = 0;
  if (strcmp(a, "-G") == 0 || strcmp(a, "--gpu") == 0) {
    GPU.requested = 1;
    return 1;
  }
  if ((v = opt_val(argc, argv, i, "--device", &used))) {
    if (strcmp(v, "sim") == 0) {
      GPU.device = DEV_SIM;
    } else if (strcmp(v, "cuda") == 0) {
      if (!cuda_compiled()) {
        die("--device=cuda: this binary was built without CUDA (no nvcc "
            "at build time)", NULL);
      }
      GPU.device = DEV_CUDA;
    } else if (strcmp(v, "metal") == 0) {
#if defined(HVM4G_METAL)
      GPU.device = DEV_METAL;
#elif defined(__APPLE__)
      die("--device=metal: this binary was built without the Metal backend "
          "(no `xcrun metal` at build time: install Xcode and its Metal "
          "toolchain, then rebuild); use --device=sim", NULL);
#else
      die("--device=metal: Metal is not available on this platform "
          "(Apple GPUs only); use --device=sim or --device=cuda", NULL);
#endif
    } else if (strcmp(v, "auto") == 0) {
      GPU.device = DEV_AUTO;
    } else {
      die("--device expects sim, cuda or metal, got ", v);
    }
    return used;
  }
  if ((v = opt_val(argc, argv, i, "--dup", &used))) {
    if      (strcmp(v, "owner")  == 0) GPU.dup_mode = DUP_OWNER;
    else if (strcmp(v, "atomic") == 0) GPU.dup_mode = DUP_ATOMIC;
    else die("--dup expects owner or atomic, got ", v);
    return used;
  }
  if ((v = opt_val(argc, argv, i, "--take", &used))) {
    if      (strcmp(v, "64") == 0) GPU.take = 64;
    else if (strcmp(v, "32") == 0) GPU.take = 32;
    else die("--take expects 64 or 32, got ", v);
    return used;
  }
  if ((v = opt_val(argc, argv, i, "--trace", &used))) {
    if (!*v) die("--trace expects a file name", NULL);
    GPU.trace = v;
    return used;
  }
  for (u32 f = 0; f < sizeof NUM_FLAGS / sizeof NUM_FLAGS[0]; f++) {
    if ((v = opt_val(argc, argv, i, NUM_FLAGS[f].name, &used))) {
      *NUM_FLAGS[f].field = num_arg(NUM_FLAGS[f].name, v, NUM_FLAGS[f].lo, NUM_FLAGS[f].hi);
      if (NUM_FLAGS[f].set) *NUM_FLAGS[f].set = 1;
      return used;
    }
  }
  for (u32 f = 0; f < sizeof SIZE_FLAGS / sizeof SIZE_FLAGS[0]; f++) {
    if ((v = opt_val(argc, argv, i, SIZE_FLAGS[f].name, &used))) {
      u64 n = heap_parse_size(v);
      if ((n == 0 && strcmp(v, "0") != 0) || n < SIZE_FLAGS[f].lo) {
        fprintf(stderr, "hvm4g: %s expects a size in words, %s..4G (suffix "
                "K/M/G), got '%s'\n", SIZE_FLAGS[f].name, SIZE_FLAGS[f].lo_s, v);
        exit(1);
      }
      *SIZE_FLAGS[f].field = n;
      return used;
    }
  }
  return 0;
}

int gpu_requested(void) {
  return GPU.requested;
}

// The context and buffers made ahead (gpu_prepare): backend() waits for
// them before it asks the backend anything.
//
// Deferred warm-up. Under --gpu -T N the run starts on the CPU pool, and
// the context (0.2 s on the H200) is made only once the CPU has worked
// --warm-after milliseconds (200) on a run the device could take over
// (gpu_take_over): a run the pool ends sooner, or one too narrow or too
// large to hand over, never pays for a device it would not use. A context
// still being made when the process ends delays its exit by 0.05-0.1 s
// (the driver finishes its set-up before it can release the device),
// which made `--gpu -T16` 1.5x `-T16` on programs the CPU ends in 0.15 s. The deferral is the
// ski-rental rule: wait about as long as the context costs, then pay.
// One thread (no pool to start on), --warm-after=0 and --cpu-first=0
// warm up at once.
static pthread_t   warm_th;
static int         warming = 0;
static _Atomic int warm_done = 0;   // the warm-up thread has finished
static int         warm_due  = 0;   // deferred: start once the CPU has run
static double      warm_t0   = 0;   // when gpu_prepare deferred it

static void *warm_main(void *p) {
  const GpuBackend *b = p;
  double t0 = gpu_now();
  int    ok = b->avail();
  GPU_STATS.ctx_s += gpu_now() - t0;
  if (ok && b->warm) b->warm();
  atomic_store(&warm_done, 1);
  pool_park(0);
  return NULL;
}

static void warm_join(void) {
  warm_due = 0;   // whoever needs the device now makes its context itself
  if (!warming) return;
  double t0 = gpu_now();
  pthread_join(warm_th, NULL);
  warming = 0;
  GPU_STATS.wait_s += gpu_now() - t0;
}

// The process may exit (a parse error, a program that never reaches the
// device) while the context is being made: wait for it first, since the
// driver's teardown must not race its setup.
static void warm_exit(void) {
  warm_join();
}

void gpu_done(int rc) {
  if (warming || GPU_STATS.runs) {
    // The output is written: ending the process now skips the driver's
    // teardown (0.1 s), or its setup still under way (the CPU finished
    // first); the kernel releases the device either way.
    fflush(NULL);
    _exit(rc);
  }
}

static void warm_start(void) {
#ifdef HVM4G_CUDA
  warm_due = 0;
  GPU_STATS.warm_at = gpu_now() - warm_t0;
  // A pool on every core slowed the context 2x (0.42-0.63 s against
  // 0.22-0.25 s with a core free, run61): one of its threads waits.
  pool_park(1);
  warming = pthread_create(&warm_th, NULL, warm_main, (void *)&GPU_CUDA) == 0;
  if (!warming) pool_park(0);
  static int hooked = 0;
  if (warming && !hooked) hooked = atexit(warm_exit) == 0;
#endif
}

void gpu_prepare(void) {
#ifdef HVM4G_CUDA
  if (warming || warm_due || GPU.device == DEV_SIM) return;
  warm_t0 = gpu_now();
  // No NVIDIA device node: the probe fails at once, nothing to defer.
  int maybe = GPU.device == DEV_CUDA || access("/dev/nvidiactl", F_OK) == 0;
  if (maybe && EVAL.threads > 1 && GPU.cpu_first > 0 && GPU.warm_after > 0) {
    warm_due = 1;   // gpu_take_over starts it (or backend(), if needed first)
    return;
  }
  warm_start();
#endif
}

// The backend of this run: the one asked for, else CUDA where a GPU is
// present and the backend was compiled in, else the simulator.
static const GpuBackend *backend(void) {
  warm_join();
  switch (GPU.device) {
    case DEV_SIM: return &GPU_SIM;
#ifdef HVM4G_CUDA
    case DEV_CUDA: {
      if (!GPU_CUDA.avail()) {
        die("--device=cuda: no usable CUDA device or driver on this "
            "machine; use --device=sim", NULL);
      }
      return &GPU_CUDA;
    }
#endif
#ifdef HVM4G_METAL
    case DEV_METAL: {
      if (!GPU_METAL.avail()) {
        die("--device=metal: no usable Metal device on this machine; use "
            "--device=sim", NULL);
      }
      return &GPU_METAL;
    }
#endif
    default: break;
  }
#ifdef HVM4G_CUDA
  if (cuda_usable()) return &GPU_CUDA;
#endif
#if defined(HVM4G_METAL) && defined(__APPLE__)
  if (GPU_METAL.avail()) return &GPU_METAL;
#endif
  return &GPU_SIM;
}

// A run starts on the CPU pool when the device is still warming up (CUDA,
// gpu_prepare), or when --cpu-first=N was given (any device: the tests
// drive the hand-off on the simulator with it). One CPU thread has no
// pool to stop at a task boundary: it waits for the device.
int gpu_cpu_first(void) {
  if (EVAL.threads <= 1 || GPU.cpu_first == 0) return 0;
  return GPU.cpu_first_set || warm_due || (warming && !atomic_load(&warm_done));
}

u32 gpu_snf_from_cpu(int *dups) {
  u32        n;
  const u32 *left = snf_left(&n, dups);
  if (n == 0) return 0;   // the pool left nothing (it had just ended)
  GPU_STATS.taken++;
  GPU_STATS.left += n;
  return gpu_snf_roots(left, n);
}

int gpu_may_return(u32 stop) {
  return stop == STOP_NARROW && GPU.cpu_first > 0 && EVAL.threads > 1;
}

// Starting over. The take-over copies in what the slots the pool left
// reach, and the device heap shadows all the pool allocated: on a tree
// shared through DUPs those slots reach most of the 5-8 GB a wide program
// builds in 0.4 s of -T16, about 1 s of copy in on the H200. Past
// --take-max the run is therefore started over on the device from the
// program (the heap as the pool found it, a copy main.c keeps), and the
// pool's work is dropped: at most --warm-after and the context's time of
// it, which a device that outruns the pool on a wide program makes up.
// Only on the first turn (the copy is the program's), and only for a
// program without %log, whose output the pool may have printed already.
// --restart=0: the CPU keeps such a run, as before.
static int restart_armed = 0;   // the caller holds a copy of the heap
static int restart_due   = 0;   // the pool stopped for a start over

int gpu_restart_arm(int on) {
  restart_armed = on && GPU.restart && !parse_used(PRIM_LOG);
  return restart_armed;
}

int gpu_restart_due(void) {
  int due = restart_due;
  restart_due = 0;
  if (!due) return 0;
  u32 n;
  int dups;
  snf_left(&n, &dups);
  return n > 0;   // none left: the pool had ended, nothing to start over
}

u32 gpu_snf_restart(u32 root, u64 itrs, u64 words) {
  GPU_STATS.restarts++;
  GPU_STATS.dropped   += itrs;
  GPU_STATS.dropped_w += words;
  return gpu_snf_at(root);
}

u32 gpu_pool_threads(int collapse) {
#ifdef HVM4G_CUDA
  if (!GPU.requested || collapse || GPU.cpu_first == 0) return 0;
  if (GPU.device != DEV_CUDA && (GPU.device != DEV_AUTO ||
                                 access("/dev/nvidiactl", F_OK) != 0)) {
    return 0;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 2 ? 0 : n > 64 ? 64 : (u32)n;
#else
  (void)collapse;
  return 0;
#endif
}

// Polled every 8 tasks. The cheap tests come first: the pool's task count
// reads a cache line per thread, which its threads keep writing, and
// `--gpu` on the tree map (ended by the pool in 0.14-0.19 s, before the
// context is due) took 0.01 s more than -T16 while each poll read it
// (run63, run65, run66).
int gpu_take_over(void) {
  if (warm_due && gpu_now() - warm_t0 < GPU.warm_after / 1e3) return 0;
  if (warming && !atomic_load(&warm_done)) return 0;   // being made
  if (snf_made() < GPU.cpu_first) return 0;   // not wide enough yet
  int big = gpu_top() > GPU.take_max;
  if (big && !restart_armed) {
    GPU_STATS.too_big = 1;   // the CPU keeps the run
    return 0;
  }
  // So the context is made only for a run the device could take, and
  // --warm-after ms in: a narrow one (spin_tree's 256 loops) made it for
  // nothing, and paid for it at exit (0.05-0.1 s).
  if (warm_due) warm_start();   // --warm-after has passed (above)
  int ready = !warm_due && (!warming || atomic_load(&warm_done));
  if (ready) restart_due = big;
  return ready;
}

// Nested %gnf on the device is flattened by the core (on_device); a %gnf
// met on the CPU while a device run is in progress cannot happen (the CPU
// waits), but guard anyway: the caller then normalizes on the CPU.
static int in_run = 0;

u32 gpu_snf_at(u32 loc) {
  return gpu_snf_roots(&loc, 1);
}

#define RERUNS 8

u32 gpu_snf_roots(const u32 *roots, u32 n) {
  if (in_run) {
    return STOP_SPACE;
  }
  if (parse_unscoped()) {   // the CPU's order binds it (snf.c)
    GPU_STATS.stop = STOP_UNSCOPED;
    return STOP_UNSCOPED;
  }
  in_run = 1;
  const GpuBackend *b = backend();
  u32 stop = gpu_run(b, roots, n);
  // A full device heap: the run packed what it did; a larger heap goes on
  // from there, or the same one once the packing freed most of it, while
  // the backend's grow allows (at most RERUNS times).
  for (u32 k = 0; stop == WNF_OOM && b->grow && k < RERUNS && b->grow() == 0; k++) {
    GPU_STATS.stops--;
    stop = gpu_run(b, roots, n);
  }
  in_run = 0;
  return stop;
}

// Under a collapse the normal form may be infinite (the collapser
// enumerates it lazily): the run may allocate GPU_GROW words, or four times
// the heap in use if more, before it stops and the collapser goes on; and
// never more than half the host heap's free words, which the collapser
// needs (with --heap=16M the device filled the heap first: 11.7M
// interactions in 12,172 passes on sim, where the CPU needed 815).
u32 gpu_snf_bounded(u32 loc) {
  u64 top  = gpu_top();
  u64 room = gpu_heap_words() > top ? (gpu_heap_words() - top) / 2 : 0;
  u64 save = GPU.grow;
  GPU.grow     = GPU_GROW > 4 * top ? GPU_GROW : 4 * top;
  if (GPU.grow > room) GPU.grow = room > 0 ? room : 1;
  GPU.collapse = 1;
  u32 stop = gpu_snf_at(loc);
  GPU.grow     = save;
  GPU.collapse = 0;
  return stop;
}

int gpu_finish(void) {
  if (GPU.trace && !GPU_STATS.runs) {
    fprintf(stderr, "hvm4g: --trace %s: no device run to trace (use --gpu, "
            "or a program that calls %%gnf)\n", GPU.trace);
    return -1;
  }
  return 0;
}

u64 gpu_itrs(void) {
  return GPU_STATS.itrs;
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
    default:         return "unknown";
  }
}

void gpu_print_stats(FILE *out) {
  GpuStats *s = &GPU_STATS;
  if (!s->runs) {
    // --gpu -T N: the pool may end a run before the device is worth it
    if (!GPU.requested) return;
    if (s->stop == STOP_UNSCOPED) {
      fprintf(out, "- Device: not used (the program has an unscoped binder: "
              "the CPU normalizes it in one thread's order)\n");
      return;
    }
    const char *why =
        s->too_big     ? "the CPU's heap passed --take-max before the device "
                         "could take over"
      : s->warm_at < 0 ? "the CPU finished before the device could pay: "
                         "--warm-after, --cpu-first"
      :                  "the CPU finished first";
    if (s->warm_at >= 0) {
      fprintf(out, "- Device: not used (%s; context started %.3f s in)\n",
              why, s->warm_at);
    } else {
      fprintf(out, "- Device: not used (%s; no context made)\n", why);
    }
    return;
  }
  double ips = s->dev_s > 0 ? (double)s->itrs / s->dev_s : 0.0;
  fprintf(out, "- Device: %s, %u lanes, dup=%s, take=%u, region=2^%u "
          "words, budget=%u\n", s->backend ? s->backend : "?", s->lanes,
          GPU.dup_mode == DUP_OWNER ? "owner" : "atomic", GPU.take,
          s->shift, GPU.budget);
  fprintf(out, "- Device runs: %llu\n", (unsigned long long)s->runs);
  fprintf(out, "- Device itrs: %llu\n", (unsigned long long)s->itrs);
  fprintf(out, "- Device passes: %llu\n", (unsigned long long)s->passes);
  fprintf(out, "- Device deferrals: %llu\n", (unsigned long long)s->defers);
  if (GPU.dup_mode == DUP_OWNER) {
    fprintf(out, "- Device owner hand-offs: %llu (slots in the lane's own "
            "arena region)\n", (unsigned long long)s->local);
  }
  fprintf(out, "- Device widest frontier: %llu\n",
          (unsigned long long)s->widest);
  fprintf(out, "- Device time: %.6f s\n", s->dev_s);
  fprintf(out, "- Device perf: %.2f M itrs/s\n", ips / 1e6);
  fprintf(out, "- Device setup: %.6f s (context %.6f s, buffers %.6f s; "
          "%.6f s of it waited for; started %.3f s in)\n", s->ctx_s + s->buf_s,
          s->ctx_s, s->buf_s, s->wait_s, s->warm_at > 0 ? s->warm_at : 0.0);
  // field 5 stays the seconds (scripts/h200_check.sh)
  fprintf(out, "- Device copy in: %.6f s (%llu of %llu words in use: %s)\n",
          s->in_s, (unsigned long long)s->in_words,
          (unsigned long long)s->in_top,
          s->in_words < s->in_top ? "those a run may reach" : "all");
  // fields 4, 7 and 10 stay the seconds, marking and passes (h200_lib.sh)
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
  fprintf(out, "- Device took over from the CPU: %llu run(s) (--cpu-first); "
          "the CPU ran %llu interactions; the pool left %llu slots "
          "unvisited (the runs' roots)\n", (unsigned long long)s->taken,
          (unsigned long long)eval_itrs(), (unsigned long long)s->left);
  if (s->restarts) {
    fprintf(out, "- Device started over from the program: %llu run(s) (the "
            "CPU's heap passed --take-max; --restart): the pool's %llu "
            "interactions and %llu heap words dropped\n",
            (unsigned long long)s->restarts, (unsigned long long)s->dropped,
            (unsigned long long)s->dropped_w);
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
