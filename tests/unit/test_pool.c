// test_pool.c: what a thread waiting on a slot may help with (pool_help);
// dropping queued tasks and putting the heap back (a start over).
// A task of another job may wait on a %nf slot whose holder waits for the
// waiting thread's own job, which cannot end while the waiting task lies
// under the helped one: so inside a job's task only that job's tasks and
// sparks are taken (eval.c's eval_help; tests/golden/thread_nf_held_cross
// hung about 1 run in 400 at -T4 before). The pool's other thread is never
// woken here, so no task is stolen and every check is deterministic.

#include "cpu/cpu.h"
#include "cpu/pool.h"
#include "check.h"
#include "heap/rt.h"
#include "cpu/cpu_rt.h"

static PoolWorker WK[2];
static u64 RAN_JOB   = 0;   // the last task each callback ran (0: none)
static u64 RAN_SPARK = 0;

static void run_job(Wnf *w, u64 task)   { (void)w; RAN_JOB = task; }
static void run_spark(Wnf *w, u64 task) { (void)w; RAN_SPARK = task; }

int main(void) {
  if (heap_init(1u << 20) != 0) {
    printf("heap_init failed\n");
    return 1;
  }
  cpu_rt_open();
  for (u32 i = 0; i < 2; i++) cpu_wnf_init(&WK[i].w, 1u << 10);
  pool_init(2, WK, 4, run_job, run_spark);
  Wnf *w = &WK[0].w;
  u64  a = POOL_TASK(3, 100), b = POOL_TASK(7, 200), s = POOL_TASK(POOL_SPARK, 300);

  // a task of job 3 is not taken by a thread inside job 7, nor as a spark
  pool_push(a);
  CHECK(pool_help(w, 7) == 0 && RAN_JOB == 0);
  CHECK(pool_help(w, POOL_SPARK) == 0 && RAN_JOB == 0);
  // inside job 3 it is; outside any job too
  CHECK(pool_help(w, 3) == 1 && RAN_JOB == a);
  pool_push(b);
  CHECK(pool_help(w, POOL_ANY) == 1 && RAN_JOB == b);

  // inside a job, a spark is taken when no task of the job is queued
  RAN_JOB = 0;
  pool_push(a);
  pool_push(s);
  CHECK(pool_help(w, 7) == 1 && RAN_SPARK == s && RAN_JOB == 0);
  CHECK(pool_help(w, 7) == 0);
  CHECK(pool_help(w, 3) == 1 && RAN_JOB == a);
  CHECK(pool_help(w, POOL_ANY) == 0);   // nothing left

  // pool_drop (--gpu's start over, main.c): while halted, every queued
  // task goes, job tasks and sparks alike
  RAN_JOB = RAN_SPARK = 0;
  pool_push(a);
  pool_push(s);
  pool_halt();
  pool_drop();
  pool_resume();
  CHECK(pool_help(w, POOL_ANY) == 0 && RAN_JOB == 0 && RAN_SPARK == 0);

  // heap_snap / heap_rewind: the words in use and the top come back, and
  // the next allocation starts where the copy's top was
  u32 x = heap_alloc(4);
  RT->heap.at[x] = 11;
  RT->heap.at[x + 3] = 44;
  HeapSnap snap;
  CHECK(heap_snap(&snap) == 0 && snap.top == (u64)x + 4);
  RT->heap.at[x] = 99;
  u32 y = heap_alloc(100);
  RT->heap.at[y] = 5;
  heap_rewind(&snap);
  CHECK(RT->heap.at[x] == 11 && RT->heap.at[x + 3] == 44 && heap_used() == (u64)x + 4);
  CHECK(heap_alloc(1) == x + 4);
  heap_snap_free(&snap);
  return check_done();
}
