// test_park.c: pool_park, which leaves the CUDA context's thread a core
// while it is made (gpu.c's warm_start). While parked, the pool's last
// thread runs no task; once unparked it runs them again. Three threads:
// the test's own (which only pushes and waits) and two pool threads.

#include <time.h>
#include "cpu/cpu.h"
#include "cpu/pool.h"
#include "check.h"
#include "heap/rt.h"
#include "cpu/cpu_rt.h"

#define TASKS 64

static PoolWorker   WK[3];
static _Atomic u32  DONE      = 0;
static _Atomic u32  BY[3]     = { 0, 0, 0 };   // tasks each thread ran

static void nap(void) {
  struct timespec t = { 0, 200000 };   // 0.2 ms: long enough to be stolen
  nanosleep(&t, NULL);
}

static void run_job(Wnf *w, u64 task) {
  (void)w; (void)task;
  nap();
  atomic_fetch_add(&BY[pool_tid()], 1);
  atomic_fetch_add(&DONE, 1);
}

static void run_spark(Wnf *w, u64 task) { (void)w; (void)task; }

// Pushes TASKS tasks from this thread (which runs none) and waits for them.
static void round_of_tasks(void) {
  atomic_store(&DONE, 0);
  for (u32 i = 0; i < 3; i++) atomic_store(&BY[i], 0);
  for (u32 i = 0; i < TASKS; i++) pool_push(POOL_TASK(1, i));
  while (atomic_load(&DONE) < TASKS) nap();
}

int main(void) {
  if (heap_init(1u << 20) != 0) {
    printf("heap_init failed\n");
    return 1;
  }
  cpu_rt_open();
  for (u32 i = 0; i < 3; i++) cpu_wnf_init(&WK[i].w, 1u << 10);
  pool_init(3, WK, 4, run_job, run_spark);
  pool_wake();   // a job in progress: the pool's threads look for tasks

  pool_park(1);
  round_of_tasks();
  CHECK(atomic_load(&BY[2]) == 0);                 // parked: none
  CHECK(atomic_load(&BY[1]) == TASKS);             // thread 1 ran them all

  pool_park(0);
  round_of_tasks();                                // both take part again
  CHECK(atomic_load(&BY[1]) + atomic_load(&BY[2]) == TASKS);
  CHECK(atomic_load(&BY[2]) > 0);

  pool_rest();
  return check_done();
}
