// pool.c: the -T pool (pool.h): threads, deques, sparks, help, halt.
//
// N-1 threads are started once and sleep while no job is in progress; the
// thread that asks for a normal form works with them. Deques are
// Chase-Lev (deque.h: lock-free; the owner pushes and takes at the bottom,
// thieves steal at the top). What a task means is its kind's: jobs are
// the strong normal form's (snf.c), sparks the evaluator's (eval.c).

#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <pthread.h>
#include <sched.h>
#include "cpu/pool.h"
#include "heap/rt.h"
#include "cpu/deque.h"
#include "cpu/eval.h"
#include "cpu/reclaim.h"

_Thread_local u32 POOL_TID = 0;
static u32               NTHREADS = 1;

static PoolWorker     *WORKERS = NULL;  // thread i reduces with WORKERS[i].w
static u32             OFFERS  = 0;     // sparks a thread keeps queued
static PoolRun         RUN_JOB, RUN_SPARK;
static Deque          *DQ      = NULL;
static pthread_t      *THREADS = NULL;
static _Atomic u32     ACTIVE  = 0;     // jobs in progress (and holds)
static pthread_mutex_t IDLE_LOCK = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t  IDLE_COND = PTHREAD_COND_INITIALIZER;

u32 pool_size(void) {
  return NTHREADS;
}

// Tasks
// =====

void pool_push(u64 task) {
  if (!dq_push(&DQ[POOL_TID], task)) {
    eval_fatal("RUNTIME_ERROR: ", "out of memory in the normalizer");
  }
}

int pool_find(u32 only, u64 *x) {
  if (dq_take(&DQ[POOL_TID], x)) {
    if (only == POOL_ANY || POOL_KIND(*x) == only) return 1;
    dq_push(&DQ[POOL_TID], *x);   // back where it was: no growth, cannot fail
  }
  for (u32 k = 1; k < NTHREADS; k++) {
    if (dq_steal_if(&DQ[(POOL_TID + k) % NTHREADS], only, x)) return 1;
  }
  return 0;
}

int pool_find_for(u32 job, u64 *x) {
  return pool_find(job, x) || (job < POOL_SPARK && pool_find(POOL_SPARK, x));
}

void pool_run(Wnf *w, u64 task) {
  (POOL_KIND(task) == POOL_SPARK ? RUN_SPARK : RUN_JOB)(w, task);
}

void pool_idle_wait(u32 *idle) {
  if (++*idle < 256) {
    cpu_relax();
  } else {
    sched_yield();
  }
}

// Sparks
// ======
// A thread keeps at most OFFERS (--sparks) offers in its deque: the oldest (the
// largest operands, offered nearest the root) are what thieves take; more
// would only be taken back. An offer its thread took back is dropped from
// the deque's bottom, where it usually still is; one that is not there is
// dropped by whoever meets it (eval_spark finds its slot unmarked).

void pool_offer(Wnf *w, u32 slot, Term b) {
  Deque  *q = &DQ[POOL_TID];
  int64_t n = atomic_load_explicit(&q->bottom, memory_order_relaxed) -
              atomic_load_explicit(&q->top, memory_order_relaxed);
  if (n >= (int64_t)OFFERS || atomic_load_explicit(&ACTIVE, memory_order_relaxed) == 0) {
    return;
  }
  __atomic_store_n(&w->heap[slot], AS_SUB(b), __ATOMIC_RELAXED);
  if (!dq_push(q, POOL_TASK(POOL_SPARK, slot))) {
    __atomic_store_n(&w->heap[slot], b, __ATOMIC_RELAXED);   // not offered
  }
}

void pool_took_back(Wnf *w, u32 slot) {
  (void)w;
  u64 x;
  if (DQ && dq_take(&DQ[POOL_TID], &x) && x != POOL_TASK(POOL_SPARK, slot)) {
    dq_push(&DQ[POOL_TID], x);
  }
}

// Halting
// =======
// Stopping the pool (snf_at_until): HALT keeps threads from starting tasks;
// IN_TASK says which thread may be running one. A thread sets its flag and
// then reads HALT; the stopping thread sets HALT and then reads the flags
// (both sequentially consistent), so one of them sees the other.
typedef struct {
  _Alignas(64) _Atomic u32 on;
} InTask;

static InTask     *IN_TASK = NULL;
static _Atomic int HALT    = 0;

int pool_halting(void) {
  return atomic_load_explicit(&HALT, memory_order_relaxed);
}

// Sets HALT and waits until no other thread runs a task (sparks end their
// slice early, eval_spark); pool_resume clears it.
void pool_halt(void) {
  atomic_store(&HALT, 1);
  for (u32 i = 1; i < NTHREADS; i++) {
    u32 idle = 0;
    while (atomic_load(&IN_TASK[i].on)) pool_idle_wait(&idle);
  }
}

void pool_resume(void) {
  atomic_store(&HALT, 0);
}

void pool_roots(void (*root)(u32 loc)) {
  if (!DQ) return;   // before pool_init: no queue yet
  for (u32 i = 0; i < NTHREADS; i++) {
    Deque  *q   = &DQ[i];
    Ring   *r   = atomic_load(&q->ring);
    int64_t top = atomic_load(&q->top), bot = atomic_load(&q->bottom);
    for (int64_t k = top; k < bot; k++) root((u32)atomic_load(RING_AT(r, k)));
  }
}

void pool_drop(void) {
  u64 x;
  for (u32 i = 0; i < NTHREADS; i++) {
    while (dq_steal(&DQ[i], &x)) {}
  }
}

// Threads
// =======

// The holder's work for threads with no task (pool_hold); NULL: none.
static int (*_Atomic IDLE_WORK)(Wnf *w);

static int idle_work(Wnf *w) {
  int (*f)(Wnf *) = atomic_load_explicit(&IDLE_WORK, memory_order_acquire);
  return f && f(w);
}

// Runs one task (or the holder's idle work) if there is one to find.
static void work_once(Wnf *w, u32 *idle) {
  u64 t;
  reclaim_poll(POOL_TID);   // between tasks: a safe point
  atomic_store(&IN_TASK[POOL_TID].on, 1);
  if (atomic_load(&HALT)) {
    atomic_store_explicit(&IN_TASK[POOL_TID].on, 0, memory_order_release);
    pool_idle_wait(idle);
    return;
  }
  int got = pool_find(POOL_ANY, &t);
  if (got) pool_run(w, t);
  atomic_store_explicit(&IN_TASK[POOL_TID].on, 0, memory_order_release);
  if (got) {
    *idle = 0;
  } else if (idle_work(w)) {
    *idle = 0;
  } else {
    pool_idle_wait(idle);
  }
}

// Parking (pool_park): the last thread sleeps between tasks while PARK is
// set, so that a thread outside the pool gets a core.
static _Atomic int PARK = 0;

static int parked(void) {
  return NTHREADS > 2 && POOL_TID == NTHREADS - 1 && atomic_load_explicit(&PARK, memory_order_relaxed);
}

void pool_park(int on) {
  pthread_mutex_lock(&IDLE_LOCK);
  atomic_store(&PARK, on);
  pthread_cond_broadcast(&IDLE_COND);
  pthread_mutex_unlock(&IDLE_LOCK);
}

static void *pool_main(void *arg) {
  PoolWorker *me = arg;
  RT       = me->rt;
  POOL_TID = me->tid;
  Wnf *w = &WORKERS[POOL_TID].w;
  for (;;) {
    reclaim_away(POOL_TID, 1);   // asleep: no collection waits for it
    pthread_mutex_lock(&IDLE_LOCK);
    while (atomic_load(&ACTIVE) == 0 || parked()) {
      pthread_cond_wait(&IDLE_COND, &IDLE_LOCK);
    }
    pthread_mutex_unlock(&IDLE_LOCK);
    reclaim_away(POOL_TID, 0);
    u32 idle = 0;
    while (atomic_load_explicit(&ACTIVE, memory_order_relaxed) > 0 && !parked()) {
      work_once(w, &idle);
    }
  }
  return NULL;
}

// Wakes the pool for a job already queued (one more job in progress).
void pool_wake(void) {
  // Threads sleep only while ACTIVE is 0 (or parked): with a job already in
  // progress they are awake, and a nested job (%nf) needs no broadcast.
  if (atomic_fetch_add(&ACTIVE, 1) > 0) return;
  pthread_mutex_lock(&IDLE_LOCK);
  pthread_cond_broadcast(&IDLE_COND);
  pthread_mutex_unlock(&IDLE_LOCK);
}

void pool_rest(void) {
  atomic_fetch_sub(&ACTIVE, 1);
}

// Helping while waiting (eval.c: an offered operand or a DUP slot being
// reduced elsewhere): one task, of the kind `only` says (eval_help: a
// spark for a thread that holds a slot BUSY or works ahead, a task of its
// own job inside one, any outside). HELP_DEPTH bounds the nesting.
#define HELP_DEPTH 8

static _Thread_local u32 HELPING = 0;

int pool_help(Wnf *w, u32 only) {
  u64 t;
  if (NTHREADS <= 1 || HELPING >= HELP_DEPTH ||
      !pool_find_for(only, &t)) {
    return 0;
  }
  HELPING++;
  pool_run(w, t);
  HELPING--;
  return 1;
}

void pool_hold(int (*idle)(Wnf *w)) {
  if (NTHREADS <= 1) return;
  atomic_store_explicit(&IDLE_WORK, idle, memory_order_release);
  if (idle) {
    pool_wake();
  } else {
    atomic_fetch_sub(&ACTIVE, 1);
  }
}

int pool_busy(void) {
  return atomic_load(&ACTIVE) > 0;
}

void pool_init(u32 threads, PoolWorker *workers, u32 offers, PoolRun job, PoolRun spark) {
  NTHREADS  = threads > 1 ? threads : 1;
  reclaim_init(NTHREADS);
  WORKERS   = workers;
  for (u32 i = 0; i < NTHREADS; i++) {
    workers[i].rt  = RT;
    workers[i].tid = i;
  }
  OFFERS    = offers;
  RUN_JOB   = job;
  RUN_SPARK = spark;
  DQ       = aligned_alloc(64, NTHREADS * sizeof(Deque));
  IN_TASK  = aligned_alloc(64, NTHREADS * sizeof(InTask));
  THREADS  = calloc(NTHREADS, sizeof(pthread_t));
  if (!DQ || !IN_TASK || !THREADS) {
    eval_fatal("hvm4g: ", "out of memory");
  }
  for (u32 i = 0; i < NTHREADS; i++) {
    atomic_init(&IN_TASK[i].on, 0);
    if (!dq_init(&DQ[i], 1 << 12)) {
      eval_fatal("hvm4g: ", "out of memory");
    }
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, (size_t)64 << 20);
  for (u32 i = 1; i < NTHREADS; i++) {
    if (pthread_create(&THREADS[i], &attr, pool_main, &workers[i])) {
      eval_fatal("hvm4g: ", "cannot start a thread");
    }
    pthread_detach(THREADS[i]);
  }
  pthread_attr_destroy(&attr);
}
