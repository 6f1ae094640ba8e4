// main.c: hvm4g, the command-line program: reads the flags and the
// program, has the scheduler normalize @main, prints the result.
//
// The program runs on a thread with a 1 GiB stack (committed only where
// touched), so deep terms cannot overflow the parser or printer.

#include <stdio.h>
#include <time.h>
#include <pthread.h>
#include "run/flags.h"
#include "run/sched.h"
#include "run/stats.h"
#include "heap/heap.h"
#include "lang/names.h"
#include "lang/parse.h"
#include "lang/print.h"
#include "cpu/eval.h"
#include "cpu/snf.h"
#include "dev/gpu.h"

#define MAIN_STACK ((u64)1 << 30)   // the program's thread (see the top)

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

static int run(int argc, char **argv) {
  flags_parse(argc, argv);

  u64 words = CLI.heap ? CLI.heap : heap_default_words(reserved_besides(EVAL.threads));
  if (heap_init(words) != 0) {
    fprintf(stderr, "Error: cannot reserve a heap of %llu words\n",
            (unsigned long long)words);
    return 1;
  }
  names_init();
  sched_init();

  sched_start();   // the device's context, made while the program is read
  if (parse_file(CLI.file) != 0) return 1;
  sched_loaded();

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

  if (CLI.collapse) {
    sched_collapse(root, CLI.limit);
  } else {
    sched_normalize(root);
    if (!EVAL.silent && !EVAL.debug) {
      print_term(stdout, HEAP[root]);
      putchar('\n');
    }
  }

  stats_print(seconds_since(t0));
  eval_out_check();
  if (gpu_finish() != 0) return 1;
  sched_exit(0);
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
