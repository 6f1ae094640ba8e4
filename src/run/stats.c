// stats.c: the -s and -S report (stats.h).

#include <stdio.h>
#include "run/stats.h"
#include "run/sched.h"
#include "cpu/eval.h"
#include "dev/gpu.h"

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
  sched_print_stats(stdout);
}
