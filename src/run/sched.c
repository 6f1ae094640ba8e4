// sched.c: the scheduler (sched.h). Every choice of who normalizes what
// is made here; the CPU runtime (cpu/) and the device (dev/) only do what
// they are asked, and never call each other.
//
// --gpu is a hybrid. The run starts on the CPU pool while the device's
// context is made; the device takes the normal form over once the pool
// has made --cpu-first tasks (a normal form that wide pays the copies),
// copying in only what the slots the pool left reach; a run whose
// frontier stays narrow on the device comes back to the pool (STOP_NARROW),
// up to MAX_TURNS turns. One thread, or --cpu-first=0, puts the run on
// the device from the start.
//
// The context waits for width: under a pool it is made only once the pool
// has made --cpu-first tasks of a run the device could take over (and,
// with --warm-after=MS, worked that long), and the device takes the run
// as soon as the context is ready. A narrow run (a list spine, a strict
// recursion, a few loops) never makes them and never pays for a context's
// setup. A device named with --device=cuda gets
// its context at once, and a run fails with the reason if it cannot be
// used.
//
// No usable device (built without CUDA, no driver, no GPU, one too old):
// the runtime leaves a notice (sched_notice; the program prints it on
// stderr) and the CPU normalizes, on every core; a %gnf is normalized by
// the CPU. The simulator runs only when asked for (--device=sim).
//
// Starting over: the device heap shadows all the pool allocated, and on a
// tree shared through DUPs the slots the pool left reach most of it, so
// past --take-max the run is started over on the device from the program
// (a copy of the heap kept before the pool began) and the pool's work is
// dropped. Only on the first turn, and only for a program without %log,
// whose output the pool may have printed already.

#define _GNU_SOURCE   // clone
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include "run/sched.h"
#include "run/prim.h"
#include "run/journal.h"
#include "core/kern.h"
#include "heap/heap.h"
#include "heap/sanitize.h"
#include "lang/parse.h"
#include "cpu/eval.h"
#include "cpu/snf.h"
#include "cpu/pool.h"
#include "cpu/reclaim.h"
#include "collapse/collapse.h"
#include "dev/gpu.h"
#include "dev/dev.h"
#include "cpu/cpu_rt.h"
#include "dev/dev_rt.h"
#include "run/run_rt.h"

void sched_conf_default(SchedConf *c) {
  *c = (SchedConf){
    .requested  = 0,
    .cpu_first  = 1u << 10,
    .warm_after = 0,
    .take_max   = 64ull << 20,
    .restart    = 1,
  };
}

// Turns the CPU and the device take on one normal form; value chosen by
// tests (a program that needs more alternates between narrow and wide
// phases, and the CPU finishes it).
#define MAX_TURNS 4

// A wide run whose tasks are each long (a leaf loop of thousands of steps:
// bench/big_long_loops.hvm4) makes a large --cpu-first's tasks only near
// its end, on the CPU at a fraction of the device's pace. A turn that has
// run LONG_TURN seconds (a few contexts' time: what taking it costs is
// small beside what is left) is taken once it made a LONG_SHARE of them,
// and LONG_MIN at least (64 a thread of a 16-core pool: a few long loops
// stay on the CPU, which runs each faster than a lane).
#define LONG_TURN  1.0
#define LONG_SHARE 64
#define LONG_MIN   1024

// This runtime's scheduler state (sched.h).
#define ST (RT->run->sched)

void sched_init(void) {
  eval_set_host(prim_host);
}

// A device asked for where none can run: the CPU normalizes, on every
// core, and the runtime leaves a notice saying so (sched_notice).
static void no_device(const char *why) {
  if (ST.nodev) return;
  ST.nodev = why;
  if (RT->run->conf.requested) {
    snprintf(ST.notice, sizeof ST.notice, "hvm4g: no usable GPU (%s); running on the CPU "
             "with %u thread%s", why, RT->cpu->conf.threads, RT->cpu->conf.threads == 1 ? "" : "s");
  }
}

const char *sched_notice(void) {
  if (ST.notice[0]) return ST.notice;
  return RT->dev->notice[0] ? RT->dev->notice : NULL;
}

// The device's answers for a runtime not yet open (the pool's size is one
// of its options): asked of a context that holds the device's settings alone.
static int pool_wanted(const SchedConf *s, const GpuConf *g) {
  struct DevRt *dev = calloc(1, sizeof *dev);
  if (!dev) return 0;
  dev->conf = *g;
  Rt  probe = { .dev = dev };
  Rt *was   = RT;
  RT = &probe;
  int pool = (g->device == DEV_AUTO && gpu_absent() != NULL) ||
             (s->cpu_first > 0 && gpu_cuda_likely());
  RT = was;
  free(dev);
  return pool;
}

u32 sched_pool_threads(const SchedConf *s, const GpuConf *g, int collapse) {
  if (!s->requested || collapse) return 0;
  if (!pool_wanted(s, g)) return 0;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 2 ? 0 : n > 64 ? 64 : (u32)n;
}

static void context_ready(void) {
  pool_park(0);
}

// A pool on every core slows the context about 2x: one of its threads
// waits while the context is made.
static void warm_start(void) {
  ST.warm_due = 0;
  ST.warm_at  = gpu_now() - ST.warm_t0;
  pool_park(1);
  if (!gpu_context_start(context_ready)) pool_park(0);
}

static void prepare(void) {
  if (!gpu_cuda_compiled() || gpu_context_live() || ST.warm_due) return;
  if (RT->dev->conf.device == DEV_SIM) return;
  ST.warm_t0 = gpu_now();
  if (RT->dev->conf.device == DEV_AUTO && gpu_cuda_likely() && RT->cpu->conf.threads > 1 &&
      RT->run->conf.cpu_first > 0) {
    ST.warm_due = 1;   // take_over starts it (or the first device run)
    return;
  }
  warm_start();
}

void sched_start(void) {
  if (!RT->run->conf.requested) return;
  const char *why = gpu_absent();
  if (why && RT->dev->conf.device == DEV_CUDA) return;   // sched_normalize says why
  if (why) {
    no_device(why);
  } else {
    prepare();
  }
}

void sched_loaded(void) {
  if (!RT->run->conf.requested && parse_used(PRIM_GNF)) prepare();
}

// A device asked for by name (--device=cuda, metal) that cannot run ends
// the run with the device's status, whichever side would finish first.
static int device_named(void) {
  return RT->dev->conf.device == DEV_CUDA || RT->dev->conf.device == DEV_METAL;
}

static void device_named_fail(void) {
  if (!device_named()) return;
  char msg[320];
  snprintf(msg, sizeof msg, "%s: %s", RT->dev->conf.device == DEV_CUDA ? SCHED_NO_CUDA : SCHED_NO_METAL,
           gpu_why_not());
  eval_fatal("hvm4g: ", msg);
}

// Before a --gpu run: the device named must be usable.
static void device_require(void) {
  if (RT->run->conf.requested && device_named() && !gpu_usable()) device_named_fail();
}

// A device run's stop; STOP_NODEV also records why there is no device.
static u32 device_stop(u32 stop) {
  if (stop == STOP_NODEV) {
    device_named_fail();
    no_device(gpu_why_not());
  }
  if (stop == STOP_HEAP) {   // the device's heap was the host's (gpu.c)
    char msg[160];
    snprintf(msg, sizeof msg, "heap exhausted: %llu live words in a heap of %llu words%s",
             (unsigned long long)RT->dev->stats.heap_live, (unsigned long long)RT->heap.cap,
             RT->heap.by_space ? ", sized by the address-space limit" : "");
    eval_fatal("hvm4g: ", msg);
  }
  return stop;
}

// An unscoped binder's variables are bound in one thread's order (snf.c):
// such a program stays on the CPU, which this records as the device's stop.
static int unscoped(void) {
  if (!parse_unscoped()) return 0;
  RT->dev->stats.stop = STOP_UNSCOPED;
  return 1;
}

// Whoever needs the device now makes its context itself.
static u32 device_at(u32 loc) {
  if (ST.nodev) return STOP_NODEV;
  ST.warm_due = 0;
  if (unscoped()) return STOP_UNSCOPED;
  return device_stop(gpu_snf_at(loc));
}

// A run starts on the CPU pool when the context is still to be made or
// being made, or when --cpu-first=N was given (any device: the tests
// drive the hand-off on the simulator with it). One CPU thread has no
// pool to stop at a task boundary: it waits for the device.
static int cpu_first(void) {
  if (RT->cpu->conf.threads <= 1 || RT->run->conf.cpu_first == 0) return 0;
  return RT->run->conf.cpu_first_set || ST.warm_due || gpu_context_making();
}

int sched_wide_enough(u64 made, double ran) {
  u64 need = RT->run->conf.cpu_first;
  return made >= need || (ran >= LONG_TURN && made >= LONG_MIN && made >= need / LONG_SHARE);
}

// The pool's yield (snf_at_until), polled every 8 tasks. The cheap tests
// come first: the pool's task count reads a cache line per thread, which
// its threads keep writing.
static int take_over(void) {
  SchedState *st = &ST;
  if (st->warm_due && gpu_now() - st->warm_t0 < RT->run->conf.warm_after / 1e3) return 0;
  if (gpu_context_making() || st->nodev) return 0;
  if (!sched_wide_enough(snf_made(), gpu_now() - st->turn_t0)) return 0;
  int big = heap_used() > RT->run->conf.take_max;
  if (big && !st->restart_armed) {
    st->too_big = 1;   // the CPU keeps the run
    return 0;
  }
  // The context is made only for a run the device could take.
  if (st->warm_due) warm_start();
  int ready = !st->warm_due && !gpu_context_making();
  if (ready && !gpu_usable()) {   // the context found no device
    no_device(gpu_why_not());
    return 0;
  }
  if (ready) st->restart_due = big;
  return ready;
}

static int may_return(u32 stop) {
  return stop == STOP_NARROW && RT->run->conf.cpu_first > 0 && RT->cpu->conf.threads > 1;
}

static int restart_arm(int on) {
  ST.restart_armed = on && RT->run->conf.restart && !prim_effects_used();
  return ST.restart_armed;
}

// After the pool stopped: whether it stopped so that the device starts
// over (none left: the pool had ended, nothing to start over).
static int restart_now(void) {
  int due = ST.restart_due;
  ST.restart_due = 0;
  if (!due) return 0;
  u32 n;
  int dups;
  snf_left(&n, &dups);
  return n > 0;
}

// The heap goes back to the program, and what the pool did is dropped
// (its threads' arenas and counts, the sparks still queued).
static u32 restart_on_device(u32 root, const HeapSnap *snap) {
  u64 words = heap_used() - snap->top;
  u64 itrs  = eval_rewind();
  pool_drop();
  heap_rewind(snap);
  ST.restarts++;
  ST.dropped   += itrs;
  ST.dropped_w += words;
  return device_at(root);
}

// The device takes the slots the pool left, not the root: what the pool
// made normal is neither copied in nor walked again. What it leaves is its
// stop, and, when *dups, the stuck DUPs the pool met (a later snf_at of the
// root finishes them).
static u32 device_from_pool(int *dups) {
  u32        n;
  const u32 *left = snf_left(&n, dups);
  if (n == 0) return 0;   // the pool had just ended
  ST.taken++;
  ST.left += n;
  ST.warm_due = 0;
  if (unscoped()) return STOP_UNSCOPED;
  return device_stop(gpu_snf_roots(left, n));
}

// The CPU's part of a hybrid normal form, a row of the trace (--trace).
static int cpu_traced(int left, double t0, u64 itrs0) {
  gpu_trace_cpu(RT->cpu->conf.threads, eval_itrs() - itrs0, t0, gpu_now());
  return left;
}

// The CPU's phases of a hybrid normal form reclaim too, each armed on its
// own: the words below the top when it starts (what the device wrote back,
// the snapshot a restart rewinds to) stay, and no free chunk outlives the
// phase (reclaim_disarm), so the device never meets a reused word.
static void normalize_hybrid(u32 root) {
  gpu_trace_run();
  u32 stop = 0;
  int cpu  = cpu_first();
  if (!cpu) {
    stop = device_at(root);
    cpu  = may_return(stop);
  }
  HeapSnap snap = { NULL, 0 };
  if (cpu && restart_arm(1) && heap_snap(&snap) != 0) restart_arm(0);
  int dups = 0;
  for (u32 turn = 0; cpu && turn < MAX_TURNS; turn++) {
    double t0 = gpu_now();
    u64    i0 = eval_itrs();
    ST.turn_t0 = t0;
    reclaim_arm();
    int left = cpu_traced(snf_at_until(root, take_over), t0, i0);
    reclaim_disarm();
    restart_arm(0);   // later turns: the copy is no longer the program
    if (!left) {      // the CPU finished
      stop = 0;
      dups = 0;
      break;
    }
    if (restart_now()) {
      dups = 0;
      stop = restart_on_device(root, &snap);
    } else {
      stop = device_from_pool(&dups);
    }
    cpu = may_return(stop);
  }
  heap_snap_free(&snap);
  // The CPU finishes what the device left, and the stuck DUPs the pool met.
  if (stop || dups) {
    double t0 = gpu_now();
    u64    i0 = eval_itrs();
    reclaim_arm();
    snf_at(root);
    reclaim_disarm();
    cpu_traced(0, t0, i0);
  }
}

void sched_normalize(u32 root) {
  device_require();
  if (RT->run->conf.requested && !ST.nodev) {
    normalize_hybrid(root);
  } else {
    // a CPU normal form reclaims the words it no longer reaches (not -D,
    // whose steps print from locations it keeps, nor the lazy core, whose
    // thunks' words no collection traces)
    if (!RT->cpu->conf.debug && !eval_lazy()) reclaim_arm();
    snf_at(root);
    reclaim_disarm();
  }
}

void sched_collapse(u32 root, long long limit) {
  // The collapser's queues are no collection's roots: a CPU run that an
  // error ended armed (its pool idle now) gives its chunks up here.
  reclaim_disarm();
  device_require();
  if (RT->run->conf.requested && !ST.nodev) {
    ST.warm_due = 0;
    gpu_trace_run();
    if (!unscoped()) device_stop(gpu_snf_bounded(root));   // the collapser goes on either way
  }
  collapse_print(root, limit);
}

// The device needs the heap to itself (a device run copies the heap back
// when it ends), so a %gnf met while the -T pool is reducing is normalized
// by the pool instead: the same result, on the CPU. Under -D it is
// normalized on the CPU too, one step at a time, so its steps are shown.
void sched_gnf(u32 slot) {
  if (RT->cpu->conf.debug || pool_busy() || eval_lazy()) {
    snf_at(slot);
    return;
  }
  gpu_trace_run();
  if (device_at(slot)) {
    double t0 = gpu_now();
    u64    i0 = eval_itrs();
    sched_nf(slot);
    cpu_traced(0, t0, i0);
  }
}

// Not rooted while the pool is busy (a collapse's work ahead beside it,
// unarmed anyway): only the pool idle around the primitive was checked
// (cpu/reclaim.c, Rooted primitives).
void sched_nf(u32 slot) {
  RootFrame f;
  int rooted = !pool_busy() && reclaim_rooted_host(&f, slot);
  snf_at(slot);
  if (rooted) reclaim_rooted_host_end(&f);
}

void sched_print_stats(FILE *out) {
  if (!RT->dev->stats.runs) {
    // --gpu -T N: the pool may end a run before the device is worth it
    if (!RT->run->conf.requested) return;
    if (ST.nodev) {
      fprintf(out, "- Device: not used (no usable GPU: %s; the CPU ran it)\n", ST.nodev);
      return;
    }
    if (RT->dev->stats.stop == STOP_UNSCOPED) {
      fprintf(out, "- Device: not used (the program has an unscoped binder: "
              "the CPU normalizes it in one thread's order)\n");
      return;
    }
    const char *why =
        ST.too_big     ? "the CPU's heap passed --take-max before the device "
                         "could take over"
      : ST.warm_at < 0 ? "the CPU finished before the device could pay: "
                         "--warm-after, --cpu-first"
      :                  "the CPU finished first";
    if (ST.warm_at >= 0) {
      fprintf(out, "- Device: not used (%s; context started %.3f s in)\n",
              why, ST.warm_at);
    } else {
      fprintf(out, "- Device: not used (%s; no context made)\n", why);
    }
    return;
  }
  gpu_print_stats(out);
  if (ST.warm_at >= 0) {
    fprintf(out, "- Device context: started %.3f s in\n", ST.warm_at);
  }
  fprintf(out, "- Device took over from the CPU: %llu run(s) (--cpu-first); "
          "the CPU ran %llu interactions; the pool left %llu slots "
          "unvisited (the runs' roots)\n", (unsigned long long)ST.taken,
          (unsigned long long)eval_itrs(), (unsigned long long)ST.left);
  if (ST.restarts) {
    fprintf(out, "- Device started over from the program: %llu run(s) (the "
            "CPU's heap passed --take-max; --restart): the pool's %llu "
            "interactions and %llu heap words dropped\n",
            (unsigned long long)ST.restarts, (unsigned long long)ST.dropped,
            (unsigned long long)ST.dropped_w);
  }
}

// Sanitizer builds keep the plain exit: their runtimes act on every
// thread's state, which a process sharing the memory would disturb.
#if defined(__linux__) && !defined(SANITIZED)
#include <sys/syscall.h>
#define HEIR_STACK 16384   // heir() keeps a few words: a page would do

// The heir of the process's memory and files: it lets go of the standard
// streams (a pipe's reader sees the end of the output now), waits for the
// process to end, then ends itself, and the device's release is its. Raw
// system calls only: it shares the memory, and the thread-local state
// (errno, the C library's) of the thread that made it. `gate` is the
// pipe's two ends, at the bottom of its stack's block.
static int heir(void *gate) {
  const int *fd = gate;
  char byte;
  syscall(SYS_close, fd[1]);
  for (int std = 0; std < 3; std++) syscall(SYS_close, std);
  while (syscall(SYS_read, fd[0], &byte, 1) > 0) {}
  syscall(SYS_exit, 0);
  return 0;
}

// The kernel's release of a device context (or of one still being made)
// takes tens of milliseconds after the output is written. A process that
// shares the memory and holds the files (clone with CLONE_VM, no fork's
// copy of the page tables, no atfork handlers) keeps both alive, so the
// process the shell waits for ends at once and the release is the heir's.
// Its stack is never freed: the memory goes with the heir.
static void release_in_heir(void) {
  if (!gpu_driver_touched()) return;
  int *block = aligned_alloc(16, HEIR_STACK);
  if (!block || pipe(block) != 0) return;
  if (clone(heir, (char *)block + HEIR_STACK, CLONE_VM | SIGCHLD, block) < 0) return;
  close(block[0]);   // the heir reads the end of the gate once this process is gone
}
#else
static void release_in_heir(void) {}
#endif

void sched_exit(int rc) {
  if (gpu_context_live()) {
    // The output is written: ending the process now skips the driver's
    // teardown, or its setup still under way (the CPU finished first).
    fflush(NULL);
    release_in_heir();
    _exit(rc);
  }
}

// The part
// ========

int run_rt_open(void) {
  ST.warm_at = -1;
  if (journal_open() != 0) return -1;
  if (prim_open() != 0) {
    journal_close();
    return -1;
  }
  return 0;
}

void run_rt_close(void) {
  ffi_close();
  prim_close();
  journal_close();
}
