// stats.c: the -s, --stats=json and -S report (stats.h).

#include <stdio.h>
#include "run/stats.h"
#include "run/api.h"
#include "run/sched.h"
#include "heap/heap.h"
#include "cpu/eval.h"
#include "cpu/reclaim.h"
#include "dev/gpu.h"
#include "dev/dev.h"
#include "cpu/cpu_rt.h"
#include "dev/dev_rt.h"

static u64 worker_itrs(u32 t) {
  Wnf *w = eval_worker(t);
  return w ? __atomic_load_n(&w->itrs, __ATOMIC_RELAXED) : 0;
}

// The figures of -s as one JSON object on one line.
static void print_json(FILE *out, double secs, int interrupted) {
  u64 itrs = eval_itrs() + gpu_itrs();
  ReclaimStats r = reclaim_stats();
  fprintf(out, "{\"interactions\": %llu, \"threads\": [", (unsigned long long)itrs);
  for (u32 t = 0; t < RT->cpu->conf.threads; t++) {
    fprintf(out, "%s%llu", t ? ", " : "", (unsigned long long)worker_itrs(t));
  }
  fprintf(out, "], \"seconds\": %.6f, \"mips\": %.3f, \"heap_words\": %llu, "
          "\"peak_rss_bytes\": %llu, \"device_runs\": %llu, "
          "\"device_interactions\": %llu, \"device_passes\": %llu, "
          "\"device_seconds\": %.6f, \"words_allocated\": %llu, "
          "\"words_reclaimed\": %llu, \"collections\": %llu, "
          "\"reclaim_seconds\": %.6f, \"fresh_word_ns\": %.1f, \"device_reclaims\": %llu, "
          "\"device_words_reclaimed\": %llu, \"device_reclaim_seconds\": %.6f, "
          "\"interrupted\": %s}\n",
          secs, secs > 0 ? (double)itrs / secs / 1e6 : 0.0,
          (unsigned long long)heap_used(), (unsigned long long)api_peak_rss(),
          (unsigned long long)RT->dev->stats.runs, (unsigned long long)gpu_itrs(),
          (unsigned long long)RT->dev->stats.passes, RT->dev->stats.dev_s,
          (unsigned long long)heap_given(), (unsigned long long)r.freed,
          (unsigned long long)r.runs, r.secs, r.fresh_ns, (unsigned long long)RT->dev->stats.reclaims,
          (unsigned long long)RT->dev->stats.reclaimed, RT->dev->stats.reclaim_s,
          interrupted ? "true" : "false");
}

void stats_print(double secs, int interrupted) {
  u64 itrs = eval_itrs() + gpu_itrs();
  if (!RT->cpu->conf.stats) {
    if (RT->cpu->conf.silent) printf("- Itrs: %llu interactions\n", (unsigned long long)itrs);
    return;
  }
  if (RT->cpu->conf.stats == STATS_JSON) {
    print_json(stdout, secs, interrupted);
    return;
  }
  printf("- Itrs: %llu interactions\n", (unsigned long long)itrs);
  if (RT->cpu->conf.threads > 1) {
    for (u32 t = 0; t < RT->cpu->conf.threads; t++) {
      printf("- Itrs[%u]: %llu interactions\n", t, (unsigned long long)worker_itrs(t));
    }
  }
  printf("- Time: %.3f seconds\n", secs);
  printf("- Perf: %.2f M interactions/s\n", secs > 0 ? (double)itrs / secs / 1e6 : 0.0);
  printf("- Memory: %.1f MiB peak resident; %llu heap words in use\n",
         (double)api_peak_rss() / (1 << 20), (unsigned long long)heap_used());
  ReclaimStats r = reclaim_stats();
  printf("- Heap: %llu words allocated, %llu reclaimed in %llu collections (%.3f seconds)",
         (unsigned long long)heap_given(), (unsigned long long)r.freed,
         (unsigned long long)r.runs, r.secs);
  if (r.fresh_ns > 0) printf("; a fresh word %.1f ns", r.fresh_ns);
  printf("\n");
  // the most any collection found live: what a heap must hold, less the
  // words handed out between two collections
  if (r.runs) {
    printf("- Live: at most %llu words at a collection; %llu collections compacted\n",
           (unsigned long long)r.peak_live, (unsigned long long)r.compactions);
  }
  if (interrupted) printf("- Interrupted: the run was stopped before its end\n");
  sched_print_stats(stdout);
}
