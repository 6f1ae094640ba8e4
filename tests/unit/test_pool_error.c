// test_pool_error.c: a runtime error met on a thread of the -T pool comes
// back from the library call that entered the runtime, as one met on the
// calling thread does, instead of ending the process (cpu/pool.h, "Errors
// on the pool's threads"). A -T4 runtime normalizes a wide tree whose job
// tasks, on a thread of the pool, raise an error (a job's task is wrapped
// for the test); the call returns that error, and the pool's threads can
// still be ended and joined.

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <hvm4g.h>
#include "run/api.h"
#include "cpu/cpu.h"
#include "cpu/eval.h"
#include "cpu/pool.h"
#include "check.h"
#include "heap/rt.h"
#include "cpu/cpu_rt.h"

static const char *TREE =
  "@t = λ{0: 1; λ&d. #N{@t(d - 1), @t(d - 1)}}\n"
  "@main = @t(14)\n";

static hvm4g      *RUNTIME;         // the test's (a sanitizer sees it kept)
static PoolRun     REAL_JOB;        // the pool's own (snf_task)
static _Atomic int RAISED    = 0;   // a thread of the pool raised the error
static _Atomic int CALLER_IN = 0;   // the calling thread ran a task

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

// A job's task: on a thread of the pool, the first one raises an error; on
// the calling thread, the first one waits (a while at most) until a thread
// of the pool has taken a task and failed, so that the error is surely
// met there, not by the calling thread finishing the job alone.
static void failing_job(Wnf *w, u64 task) {
  if (pool_tid() != 0 && !atomic_exchange(&RAISED, 1)) {
    eval_die("a task on a thread of the pool failed");
  }
  REAL_JOB(w, task);
  if (pool_tid() == 0 && !atomic_exchange(&CALLER_IN, 1)) {
    double until = seconds() + 20;
    while (!eval_failed() && seconds() < until) usleep(100);
  }
}

static void *nothing(void *arg) {
  return arg;
}

// The threads of this process. A thread is started and joined first, so
// that what starts with a process's first thread (a sanitizer's own) is
// counted before the runtime's.
static long threads_now(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long v = -1;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "Threads:", 8) == 0) v = atol(line + 8);
  }
  fclose(f);
  return v;
}

int main(void) {
  pthread_t first;
  pthread_create(&first, NULL, nothing, NULL);
  pthread_join(first, NULL);
  long before = threads_now();
  hvm4g_config c;
  hvm4g_config_init(&c);
  c.threads    = 4;
  c.heap_words = 1u << 24;
  hvm4g *h = NULL;
  CHECK(hvm4g_open(&h, &c) == HVM4G_OK);
  RUNTIME = h;
  CHECK(hvm4g_load_string(h, "tree", TREE) == HVM4G_OK);
  CHECK(hvm4g_normalize(h, NULL, HVM4G_CPU) == HVM4G_OK);   // the pool is up
  long up = threads_now();
  CHECK(up >= before + 3);

  api_use(h);
  REAL_JOB              = RT->cpu->pool.run_job;
  RT->cpu->pool.run_job = failing_job;
  int rc = hvm4g_normalize(h, NULL, HVM4G_CPU);
  CHECK(atomic_load(&RAISED) == 1);
  CHECK(rc == HVM4G_ERR_RUNTIME);
  CHECK(strcmp(hvm4g_error(h), "RUNTIME_ERROR: a task on a thread of the pool failed") == 0);
  printf("%s\n", hvm4g_error(h));

  // every thread of the pool, the failed one included, ends when asked
  api_use(h);
  cpu_rt_stop();
  CHECK(threads_now() == up - 3);
  api_use(NULL);
  hvm4g_close(RUNTIME);
  return check_done();
}
