// stats.c: the -s and -S report (stats.h).

#include <stdio.h>
#include <sys/resource.h>
#include "heap/heap.h"
#include "cpu/reclaim.h"
#include "run/stats.h"
#include "run/sched.h"
#include "cpu/eval.h"
#include "dev/gpu.h"

// Peak resident memory, and what the CPU heap handed out and took back.
static void stats_memory(void) {
  struct rusage ru;
  double peak = getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss / 1024.0 : 0.0;
  ReclaimStats r = reclaim_stats();
  printf("- Memory: %.1f MiB peak resident\n", peak);
  printf("- Heap: %llu words allocated, %llu reclaimed in %llu collections (%.3f seconds)\n",
         (unsigned long long)heap_given(), (unsigned long long)r.freed,
         (unsigned long long)r.runs, r.secs);
}

void stats_print(double secs) {
  u64 itrs = eval_itrs() + gpu_itrs();
  if (!EVAL.stats) {
    if (EVAL.silent) printf("- Itrs: %llu interactions\n", (unsigned long long)itrs);
    return;
  }
  printf("- Itrs: %llu interactions\n", (unsigned long long)itrs);
  if (EVAL.threads > 1) {
    for (u32 t = 0; t < EVAL.threads; t++) {
      printf("- Itrs[%u]: %llu interactions\n", t,
             (unsigned long long)__atomic_load_n(&eval_worker(t)->itrs, __ATOMIC_RELAXED));
    }
  }
  printf("- Time: %.3f seconds\n", secs);
  printf("- Perf: %.2f M interactions/s\n", secs > 0 ? (double)itrs / secs / 1e6 : 0.0);
  stats_memory();
  sched_print_stats(stdout);
}
