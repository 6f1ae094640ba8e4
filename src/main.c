// main.c: the command line.
//
//   hvm4g FILE [-s] [-S] [-C[N]] [-T N | -TN] [-D] [--heap=SIZE | -M SIZE]
//         [device flags: see gpu_flag]
//
// The program runs on a thread with a 1 GiB stack (committed only where
// touched), so deep terms cannot overflow the parser or printer.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include "cpu/eval.h"
#include "cpu/snf.h"
#include "collapse/collapse.h"
#include "heap/heap.h"
#include "lang/names.h"
#include "lang/parse.h"
#include "cpu/pool.h"
#include "lang/print.h"
#include "dev/gpu.h"

#define VERSION "0.1.0"

#define MAIN_STACK ((u64)1 << 30)   // the program's thread (see the top)

#define USAGE \
  "Usage: hvm4g <file.hvm4> [-s] [-S] [-D] [-C[N]] [-T<N>] [--heap=SIZE]\n" \
  "             [-G|--gpu] [device flags]\n"

// --help: USAGE and what each flag does (README.md has the same tables).
#define HELP \
  "Runs an HVM4 program: prints the normal form of @main.\n" \
  "\n" \
  "  -s             statistics: interactions, time, interactions per second\n" \
  "  -S             silent: print only the interaction count\n" \
  "  -C, -CN        collapse: one line per superposition branch (at most N)\n" \
  "  -T N, -TN      N threads (1..1024); the output is the -T1 output\n" \
  "  -D             print each reduction step (one thread, not with -C)\n" \
  "  --sparks=N     under -T: operands each thread offers to the others\n" \
  "                 (default 4; 0: none), one per --spark-gap=K interactions\n" \
  "                 (default 1024)\n" \
  "  --heap=SIZE    heap in 64-bit words, suffix K/M/G, 1K..4G\n" \
  "  -M SIZE        the same (default: what fits in this machine's memory)\n" \
  "  -G, --gpu      normal form on the device (with CUDA: on the CPU's\n" \
  "                 cores first; --cpu-first=0 or -T1: the device at once)\n" \
  "  --device=sim|cuda|metal, --dup=owner|atomic, --trace FILE and the\n" \
  "  tuning flags of docs/gpu.md: the device\n" \
  "  --help         this text\n" \
  "  --version      the version\n"

typedef struct {
  const char *file;
  int         collapse;   // -C
  long long   limit;      // -CN: at most N lines (-1: all)
  u64         heap;       // heap words
} Cli;

static void fail(const char *msg, const char *arg) {
  fprintf(stderr, "Error: ");
  fprintf(stderr, msg, arg);
  fputc('\n', stderr);
  exit(1);
}

// A whole string of digits, at most max (no sign, spaces or wrap-around,
// which strtol would take); 0 if it is not one.
static int parse_count(const char *s, u64 max, u64 *out) {
  u64 n = 0;
  const char *p = s;
  for (; *p >= '0' && *p <= '9'; p++) {
    n = n * 10 + (u64)(*p - '0');
    if (n > max) return 0;
  }
  *out = n;
  return p != s && *p == '\0';
}

static u32 parse_threads(const char *s) {
  u64 n = 0;
  if (!parse_count(s, 1024, &n) || n < 1) {
    fail("bad thread count '%s' (expected 1..1024)", s);
  }
  return (u32)n;
}

// -CN: at most 2^62 lines.
static long long parse_limit(const char *a) {
  u64 n = 0;
  if (!parse_count(a + 2, 1ull << 62, &n)) fail("bad collapse limit '%s' (0..2^62)", a);
  return (long long)n;
}

static u64 parse_heap(const char *s) {
  u64 w = heap_parse_size(s);
  if (w < 1024) {
    fail("bad heap size '%s' (words, 1K..4G, suffix K/M/G)", s);
  }
  return w;
}

static Cli parse_args(int argc, char **argv) {
  Cli c = { .file = NULL, .collapse = 0, .limit = -1, .heap = 0 };
  EVAL.threads = 1;
  int threads_set = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int used = gpu_flag(argc, argv, i);
    if (used > 0) {
      i += used - 1;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(USAGE "\n" HELP, stdout);
      eval_out_check();
      exit(0);
    } else if (strcmp(a, "--version") == 0) {
      printf("hvm4g %s\n", VERSION);
      eval_out_check();
      exit(0);
    } else if (strcmp(a, "-s") == 0) {
      EVAL.stats = 1;
    } else if (strcmp(a, "-S") == 0) {
      EVAL.silent = 1;
    } else if (strcmp(a, "-D") == 0) {
      EVAL.debug = 1;
    } else if (strncmp(a, "-C", 2) == 0) {
      c.collapse = 1;
      if (a[2] != '\0') c.limit = parse_limit(a);
    } else if (strncmp(a, "-T", 2) == 0) {
      threads_set = 1;
      if (a[2] != '\0') {
        EVAL.threads = parse_threads(a + 2);
      } else if (i + 1 < argc) {
        EVAL.threads = parse_threads(argv[++i]);
      } else {
        fail("missing thread count after -T%s", "");
      }
    } else if (strncmp(a, "--sparks=", 9) == 0) {
      u64 n;
      if (!parse_count(a + 9, 1024, &n)) fail("bad spark count: %s (0..1024)", a + 9);
      EVAL.sparks = (u32)n;
    } else if (strncmp(a, "--spark-gap=", 12) == 0) {
      u64 n;
      if (!parse_count(a + 12, 1u << 30, &n) || n == 0) fail("bad spark gap: %s (1..2^30)", a + 12);
      EVAL.spark_gap = (u32)n;
    } else if (strncmp(a, "--heap=", 7) == 0) {
      c.heap = parse_heap(a + 7);
    } else if (strcmp(a, "-M") == 0 || strcmp(a, "--heap") == 0) {
      if (i + 1 >= argc) fail("missing size after %s", a);
      c.heap = parse_heap(argv[++i]);
    } else if (a[0] == '-' && a[1] != '\0') {
      fprintf(stderr, "Unknown option: %s\n", a);
      fputs(USAGE, stderr);
      exit(1);
    } else if (c.file == NULL) {
      c.file = a;
    } else {
      fail("multiple input files specified (%s)", a);
    }
  }
  if (c.file == NULL) {
    fputs(USAGE, stderr);
    exit(1);
  }
  if (EVAL.debug && c.collapse) {
    fail("-D is not supported with -C%s", "");
  }
  if (EVAL.debug && gpu_requested()) {
    fail("-D prints the CPU's steps; it cannot be combined with --gpu%s", "");
  }
  // --gpu alone: the pool takes every core for what ends before the
  // device pays (docs/gpu.md, "CPU first"); -T N says otherwise.
  if (!threads_set && !EVAL.debug) {
    u32 n = gpu_pool_threads(c.collapse);
    if (n > 1) EVAL.threads = n;
  }
  if (EVAL.debug && EVAL.threads > 1) {
    fprintf(stderr, "Warning: -D forces single-threaded mode\n");
    EVAL.threads = 1;
  }
  return c;
}

// Address space reserved besides the heap and its seen set: this thread's
// stack, a WNF stack and a pool stack per thread, the -T collapse's level
// and slab tables (collapse_par.c, under 512 MiB), the book, and a margin
// for code and malloc.
static u64 reserved_besides(u32 threads) {
  u64 per    = ((u64)1 << 30) + ((u64)64 << 20);
  u64 levels = threads > 1 ? (u64)512 << 20 : 0;
  return MAIN_STACK + (u64)threads * per + levels + ((u64)1 << 27) + ((u64)256 << 20);
}

static double seconds_since(struct timespec t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

// --gpu: the device and the CPU pool take turns, each on the phases it
// runs faster: the pool first while the device warms up, the device once
// the normal form is wide, the pool again when the device's frontier stays
// narrow, and back (docs/gpu.md, "CPU first" and "Narrow phases").
#define MAX_TURNS 4

// The pool stopped so that the device starts over (gpu_restart_due): the
// heap goes back to the program, and what the pool did is dropped (its
// threads' arenas and counts, the sparks still queued).
static u32 restart_on_device(u32 root, const HeapSnap *snap) {
  u64 words = heap_used() - snap->top;
  u64 itrs  = eval_rewind();
  pool_drop();
  heap_rewind(snap);
  return gpu_snf_restart(root, itrs, words);
}

static void normalize_hybrid(u32 root) {
  u32 stop = 0;
  int cpu  = gpu_cpu_first();
  if (!cpu) {
    stop = gpu_snf_at(root);
    cpu  = gpu_may_return(stop);
  }
  HeapSnap snap = { NULL, 0 };
  if (cpu && gpu_restart_arm(1) && heap_snap(&snap) != 0) gpu_restart_arm(0);
  int dups = 0;
  for (u32 turn = 0; cpu && turn < MAX_TURNS; turn++) {
    int left = snf_at_until(root, gpu_take_over);
    gpu_restart_arm(0);   // later turns: the copy is no longer the program
    if (!left) {          // the CPU finished
      stop = 0;
      dups = 0;
      break;
    }
    if (gpu_restart_due()) {
      dups = 0;
      stop = restart_on_device(root, &snap);
    } else {
      // The device takes the slots the pool left, not the root: what the
      // pool made normal is neither copied in nor walked again.
      stop = gpu_snf_from_cpu(&dups);
    }
    cpu = gpu_may_return(stop);
  }
  heap_snap_free(&snap);
  // The CPU finishes what the device left, and the stuck DUPs the pool met.
  if (stop || dups) snf_at(root);
}

static int run(int argc, char **argv) {
  Cli c = parse_args(argc, argv);

  if (c.heap == 0) c.heap = heap_default_words(reserved_besides(EVAL.threads));
  if (heap_init(c.heap) != 0) {
    fprintf(stderr, "Error: cannot reserve a heap of %llu words\n",
            (unsigned long long)c.heap);
    return 1;
  }
  names_init();

  if (gpu_requested()) gpu_prepare();   // the device's buffers, made meanwhile
  if (parse_file(c.file) != 0) return 1;
  if (!gpu_requested() && parse_used(PRIM_GNF)) gpu_prepare();

  u32 main_id = table_find("main", 4);
  if (main_id == ~0u || main_id >= BOOK_CAP || BOOK[main_id] == 0) {
    fprintf(stderr, "Error: @main not defined\n");
    return 1;
  }

  eval_init();
  snf_init();

  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);

  u32 root = heap_alloc(1);
  if (!root) {
    fprintf(stderr, "Error: heap exhausted\n");
    return 1;
  }
  HEAP[root] = TERM(REF, main_id, 0);

  int gpu = gpu_requested();
  if (c.collapse) {
    if (gpu) gpu_snf_bounded(root);   // the collapser goes on either way
    collapse_print(root, c.limit);
  } else {
    if (gpu) {
      normalize_hybrid(root);
    } else {
      snf_at(root);
    }
    if (!EVAL.silent && !EVAL.debug) {
      print_term(stdout, HEAP[root]);
      putchar('\n');
    }
  }

  double dt   = seconds_since(t0);
  u64    itrs = eval_itrs() + gpu_itrs();
  if (EVAL.stats) {
    printf("- Itrs: %llu interactions\n", (unsigned long long)itrs);
    if (EVAL.threads > 1) {
      for (u32 t = 0; t < EVAL.threads; t++) {
        printf("- Itrs[%u]: %llu interactions\n", t,
               (unsigned long long)__atomic_load_n(&eval_worker(t)->itrs, __ATOMIC_RELAXED));
      }
    }
    printf("- Time: %.3f seconds\n", dt);
    printf("- Perf: %.2f M interactions/s\n", dt > 0 ? (double)itrs / dt / 1e6 : 0.0);
    if (gpu || gpu_itrs() > 0) gpu_print_stats(stdout);   // -G or %gnf
  } else if (EVAL.silent) {
    printf("- Itrs: %llu interactions\n", (unsigned long long)itrs);
  }
  eval_out_check();
  if (gpu_finish() != 0) return 1;
  gpu_done(0);
  return 0;
}

typedef struct {
  int    argc;
  char **argv;
  int    rc;
} Main;

static void *main_thread(void *p) {
  Main *m = p;
  m->rc = run(m->argc, m->argv);
  return NULL;
}

int main(int argc, char **argv) {
  Main m = { argc, argv, 1 };
  pthread_attr_t attr;
  pthread_t      th;
  pthread_attr_init(&attr);
  if (pthread_attr_setstacksize(&attr, (size_t)MAIN_STACK) != 0 ||
      pthread_create(&th, &attr, main_thread, &m) != 0) {
    // no big thread: run here
    return run(argc, argv);
  }
  pthread_join(th, NULL);
  pthread_attr_destroy(&attr);
  return m.rc;
}
