// pool.c: the -T pool (pool.h): threads, deques, sparks, help, halt.
//
// N-1 threads are started once and sleep while no job is in progress; the
// thread that asks for a normal form works with them. Deques are
// Chase-Lev (deque.h: lock-free; the owner pushes and takes at the bottom,
// thieves steal at the top). What a task means is its kind's: jobs are
// the strong normal form's (snf.c), sparks the evaluator's (eval.c).
// Its state is the runtime's (RT->cpu->pool); the threads end, joined, at
// the runtime's close (pool_close).

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include "cpu/pool.h"
#include "heap/rt.h"
#include "cpu/deque.h"
#include "cpu/eval.h"
#include "cpu/reclaim.h"
#include "cpu/cpu_rt.h"

_Thread_local u32 POOL_TID = 0;

// Per thread: the loop of a thread the pool started, where an error on it
// unwinds to (pool_unwind); NULL on every other thread.
static _Thread_local jmp_buf *LOOP = NULL;

static Pool *me(void) {
  return &RT->cpu->pool;
}

u32 pool_size(void) {
  return me()->threads;
}

// Tasks
// =====

// Napping
// =======
// A thread that found no task for a while sleeps (pool_nap) instead of
// spinning, so that threads a program cannot use cost it no core. A push
// wakes one napper: the pusher publishes its task, then reads nappers; a
// napper counts itself, then looks at the deques, under nap_lock, so one
// of the two sees the other (both sides fence). The timeout bounds a
// wake-up nobody sends: work a holder offers (pool_hold), a halt's end.

// Idle rounds (pool_idle_wait's) before a thread naps: past the spins
// and some yields, so a task pushed right after the last still finds it awake.
#define NAP_AFTER 512
// The longest nap, in nanoseconds.
#define NAP_NS 1000000L

static void wake_napper(Pool *p) {
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_load_explicit(&p->nappers, memory_order_relaxed) == 0) return;
  pthread_mutex_lock(&p->idle_lock);
  pthread_cond_signal(&p->nap_cond);
  pthread_mutex_unlock(&p->idle_lock);
}

// A deque's lone task is not a reason to stay awake (see "Lone tasks").
static int any_task(Pool *p) {
  for (u32 i = 0; i < p->threads; i++) {
    Deque *q = &p->dq[i];
    if (atomic_load(&q->bottom) > atomic_load(&q->top) + 1) return 1;
  }
  return 0;
}

// A push wakes a napper only once the pusher's deque holds two tasks.
static void wake_for_spare(Pool *p) {
  int64_t top;
  if (dq_size(&p->dq[POOL_TID], &top) >= 2) wake_napper(p);
}

// Naps while no task waits and, given a word, while it still holds `held`.
static void nap(Pool *p, const _Atomic u64 *word, u64 held) {
  reclaim_away(POOL_TID, 1);   // asleep: no collection waits for it
  pthread_mutex_lock(&p->idle_lock);
  atomic_fetch_add(&p->nappers, 1);
  atomic_thread_fence(memory_order_seq_cst);
  if (!any_task(p) && !atomic_load(&p->stop) && atomic_load(&p->active) > 0 &&
      (!word || atomic_load_explicit(word, memory_order_relaxed) == held)) {
    struct timespec at;
    clock_gettime(CLOCK_REALTIME, &at);
    at.tv_nsec += NAP_NS;
    if (at.tv_nsec >= 1000000000L) { at.tv_sec++; at.tv_nsec -= 1000000000L; }
    pthread_cond_timedwait(&p->nap_cond, &p->idle_lock, &at);
  }
  atomic_fetch_sub(&p->nappers, 1);
  pthread_mutex_unlock(&p->idle_lock);
  reclaim_away(POOL_TID, 0);
}

// Wakes every napper: the pool stops, or work appears that no push names.
static void wake_nappers(Pool *p) {
  pthread_mutex_lock(&p->idle_lock);
  pthread_cond_broadcast(&p->nap_cond);
  pthread_mutex_unlock(&p->idle_lock);
}

void pool_nap_on(const _Atomic u64 *word, u64 held) {
  Pool *p = me();
  if (p->threads > 1) nap(p, word, held);
}

void pool_gave_back(void) {
  Pool *p = me();
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_load_explicit(&p->nappers, memory_order_relaxed)) wake_nappers(p);
}

void pool_push(u64 task) {
  Pool *p = me();
  if (!dq_push(&p->dq[POOL_TID], task)) {
    eval_fatal("RUNTIME_ERROR: ", "out of memory in the normalizer");
  }
  wake_for_spare(p);
}

// Lone tasks
// ==========
// A deque that holds one task is most often a walk that pushed a child and
// is about to take it back (a chain: each level's task makes the next).
// Stolen at once, every level of a chain crosses threads, and a push that
// wakes a napper costs a system call: -T16 ran a chain 4x slower than -T1.
// So a thief takes a lone task only once it has seen it stay there, the same
// task (its deque's top index unchanged) for LONE_AGE_NS; a push wakes a
// napper only when its deque holds two tasks, and a napper still finds a
// lone task at its next wake (NAP_NS). A deque with two tasks is stolen from
// at once, as before.
#define LONE_AGE_NS 10000

typedef struct Thief {
  _Alignas(64) u32 from;   // the deque of the lone task it waits on, or NONE
  int64_t          top;    // that task's index
  u64              since;  // when it was first seen there
  int              waits;  // the last find saw it still there, not yet due
} Thief;
#define LONE_NONE 0xFFFFFFFFu

static u64 now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (u64)t.tv_sec * 1000000000ull + (u64)t.tv_nsec;
}

// Whether the lone task at `top` of deque v may be stolen now.
static int lone_due(Thief *th, u32 v, int64_t top) {
  if (th->from == v && th->top == top) {
    th->waits = now_ns() - th->since < LONE_AGE_NS;
    return !th->waits;
  }
  if (th->from == v || th->from == LONE_NONE) {   // a new one: start its clock
    th->from  = v;
    th->top   = top;
    th->since = now_ns();
  }
  return 0;
}

static int find(Pool *p, u32 only, u64 *x) {
  if (atomic_load_explicit(&p->stop, memory_order_relaxed)) return 0;
  Deque *dq = p->dq;
  u32    n  = p->threads;
  Thief *th = &p->thief[POOL_TID];
  if (dq_take(&dq[POOL_TID], x)) {
    if (only == POOL_ANY || POOL_KIND(*x) == only) return 1;
    dq_push(&dq[POOL_TID], *x);   // back where it was: no growth, cannot fail
  }
  th->waits = 0;
  for (u32 k = 1; k < n; k++) {
    u32     v = (POOL_TID + k) % n;
    int64_t top;
    int64_t size = dq_size(&dq[v], &top);
    if (size != 1 && th->from == v) th->from = LONE_NONE;
    if (size == 0 || (size == 1 && !lone_due(th, v, top))) continue;
    if (dq_steal_if(&dq[v], only, x)) {
      if (th->from == v) th->from = LONE_NONE;
      return 1;
    }
  }
  return 0;
}

int pool_find(u32 only, u64 *x) {
  return find(me(), only, x);
}

int pool_find_for(u32 job, u64 *x) {
  Pool *p = me();
  return find(p, job, x) || (job < POOL_SPARK && find(p, POOL_SPARK, x));
}

void pool_run(Wnf *w, u64 task) {
  Pool *p = me();
  (POOL_KIND(task) == POOL_SPARK ? p->run_spark : p->run_job)(w, task);
}

// Once the pool stopped, a wait ends (eval_check): a helper's back to its
// loop; on the thread that entered the runtime, the error a helper met is
// raised.
void pool_idle_wait(u32 *idle) {
  if (atomic_load_explicit(&me()->stop, memory_order_relaxed)) eval_check();
  if (++*idle < 256) {
    cpu_relax();
  } else {
    sched_yield();
  }
}

// Sparks
// ======
// A thread keeps at most `offers` (--sparks) offers in its deque: the
// oldest (the largest operands, offered nearest the root) are what thieves
// take; more would only be taken back. An offer its thread took back is
// dropped from the deque's bottom, where it usually still is; one that is
// not there is dropped by whoever meets it (eval_spark finds its slot
// unmarked).

void pool_offer(Wnf *w, u32 slot, Term b) {
  Pool   *p = me();
  Deque  *q = &p->dq[POOL_TID];
  int64_t n = atomic_load_explicit(&q->bottom, memory_order_relaxed) -
              atomic_load_explicit(&q->top, memory_order_relaxed);
  if (n >= (int64_t)p->offers || atomic_load_explicit(&p->active, memory_order_relaxed) == 0) {
    return;
  }
  __atomic_store_n(&w->heap[slot], AS_SUB(b), __ATOMIC_RELAXED);
  if (!dq_push(q, POOL_TASK(POOL_SPARK, slot))) {
    __atomic_store_n(&w->heap[slot], b, __ATOMIC_RELAXED);   // not offered
    return;
  }
  wake_for_spare(p);
}

void pool_took_back(Wnf *w, u32 slot) {
  (void)w;
  Pool *p = me();
  u64   x;
  if (p->dq && dq_take(&p->dq[POOL_TID], &x) && x != POOL_TASK(POOL_SPARK, slot)) {
    dq_push(&p->dq[POOL_TID], x);
  }
}

// Halting
// =======
// Stopping the pool (snf_at_until): halt keeps threads from starting
// tasks; in_task says which thread may be running one. A thread sets its
// flag and then reads halt; the stopping thread sets halt and then reads
// the flags (both sequentially consistent), so one of them sees the other.
typedef struct PoolFlag {
  _Alignas(64) _Atomic u32 on;
} InTask;

int pool_halting(void) {
  Pool *p = me();
  return atomic_load_explicit(&p->halt, memory_order_relaxed) ||
         atomic_load_explicit(&p->stop, memory_order_relaxed);
}

// Sets halt and waits until no other thread runs a task (sparks end their
// slice early, eval_spark); pool_resume clears it.
void pool_halt(void) {
  Pool *p = me();
  atomic_store(&p->halt, 1);
  for (u32 i = 1; i < p->threads; i++) {
    u32 idle = 0;
    while (atomic_load(&p->in_task[i].on)) pool_idle_wait(&idle);
  }
}

void pool_resume(void) {
  Pool *p = me();
  atomic_store(&p->halt, 0);
  if (atomic_load(&p->nappers)) wake_nappers(p);
}

// For a collection (reclaim.c, every thread parked): the location of each
// queued task and spark to `root` (registered by pool_init).
static void pool_roots(ReclaimRoot root) {
  Pool *p = me();
  for (u32 i = 0; p->dq && i < p->threads; i++) {
    Deque  *q   = &p->dq[i];
    Ring   *r   = atomic_load(&q->ring);
    int64_t top = atomic_load(&q->top), bot = atomic_load(&q->bottom);
    for (int64_t k = top; k < bot; k++) root((u32)atomic_load(RING_AT(r, k)));
  }
}

void pool_drop(void) {
  Pool *p = me();
  u64   x;
  for (u32 i = 0; p->dq && i < p->threads; i++) {
    while (dq_steal(&p->dq[i], &x)) {}
  }
}

// Threads
// =======

// Runs one task (or the holder's idle work) if there is one to find.
static void work_once(Pool *p, Reclaim *r, Wnf *w, u32 *idle) {
  u64 t;
  reclaim_poll(r, POOL_TID);   // between tasks: a safe point
  atomic_store(&p->in_task[POOL_TID].on, 1);
  if (atomic_load(&p->halt)) {
    atomic_store_explicit(&p->in_task[POOL_TID].on, 0, memory_order_release);
    pool_idle_wait(idle);
    return;
  }
  int got = find(p, POOL_ANY, &t);
  if (got) pool_run(w, t);
  atomic_store_explicit(&p->in_task[POOL_TID].on, 0, memory_order_release);
  int (*f)(Wnf *) = got || atomic_load_explicit(&p->stop, memory_order_relaxed)
                  ? NULL : atomic_load_explicit(&p->idle_work, memory_order_acquire);
  if (got) {
    *idle = 0;
  } else if (f && f(w)) {   // the holder's work for threads with no task
    *idle = 0;
  } else if (*idle >= NAP_AFTER && !p->thief[POOL_TID].waits) {
    nap(p, NULL, 0);
  } else {
    pool_idle_wait(idle);
  }
}

// Parking (pool_park): the last thread sleeps between tasks while park is
// set, so that a thread outside the pool gets a core.
static int parked(Pool *p) {
  return p->threads > 2 && POOL_TID == p->threads - 1 &&
         atomic_load_explicit(&p->park, memory_order_relaxed);
}

void pool_park(int on) {
  Pool *p = me();
  pthread_mutex_lock(&p->idle_lock);
  atomic_store(&p->park, on);
  pthread_cond_broadcast(&p->idle_cond);
  pthread_mutex_unlock(&p->idle_lock);
}

// HELPING's depth (pool_help), per thread: a thread's own nesting.
#define HELP_DEPTH 8
static _Thread_local u32 HELPING = 0;

static void *pool_main(void *arg) {
  PoolWorker *self = arg;
  RT       = self->rt;
  POOL_TID = self->tid;
  Pool    *p = &RT->cpu->pool;
  Reclaim *r = &RT->cpu->reclaim;
  Wnf     *w = &self->w;
  jmp_buf  loop;
  if (setjmp(loop) != 0) {
    // back from an error (eval_fatal) or a stop met while waiting: what
    // this thread was doing is abandoned (eval_thread_reset)
    HELPING   = 0;
    w->budget = ~0ull;
    atomic_store(&p->in_task[POOL_TID].on, 0);
  }
  LOOP = &loop;
  for (;;) {
    reclaim_away(POOL_TID, 1);   // asleep: no collection waits for it
    pthread_mutex_lock(&p->idle_lock);
    while (!atomic_load(&p->quit) &&
           (atomic_load(&p->active) == 0 || parked(p) || atomic_load(&p->stop))) {
      pthread_cond_wait(&p->idle_cond, &p->idle_lock);
    }
    pthread_mutex_unlock(&p->idle_lock);
    if (atomic_load(&p->quit)) break;
    reclaim_away(POOL_TID, 0);
    u32 idle = 0;
    while (atomic_load_explicit(&p->active, memory_order_relaxed) > 0 && !parked(p) &&
           !atomic_load_explicit(&p->stop, memory_order_relaxed)) {
      work_once(p, r, w, &idle);
    }
  }
  LOOP = NULL;
  return NULL;
}

int pool_helper(void) {
  return LOOP != NULL;
}

void pool_stop(void) {
  Pool *p = me();
  atomic_store(&p->stop, 1);
  if (atomic_load(&p->nappers)) wake_nappers(p);
}

int pool_stopping(void) {
  return atomic_load_explicit(&me()->stop, memory_order_acquire);
}

void pool_unwind(void) {
  eval_thread_reset();
  longjmp(*LOOP, 1);
}

// Wakes the pool for a job already queued (one more job in progress).
void pool_wake(void) {
  Pool *p = me();
  // Threads sleep only while active is 0 (or parked): with a job already
  // in progress they are awake, and a nested job (%nf) needs no broadcast.
  if (atomic_fetch_add(&p->active, 1) > 0) return;
  pthread_mutex_lock(&p->idle_lock);
  pthread_cond_broadcast(&p->idle_cond);
  pthread_mutex_unlock(&p->idle_lock);
}

void pool_rest(void) {
  atomic_fetch_sub(&me()->active, 1);
}

// Helping while waiting (eval.c: an offered operand or a DUP slot being
// reduced elsewhere): one task, of the kind `only` says (eval_help: a
// spark for a thread that holds a slot BUSY or works ahead, a task of its
// own job inside one, any outside). HELP_DEPTH bounds the nesting.
int pool_help(Wnf *w, u32 only) {
  Pool *p = me();
  u64   t;
  if (p->threads <= 1) return 0;
  if (atomic_load_explicit(&p->stop, memory_order_relaxed)) eval_check();
  if (HELPING >= HELP_DEPTH) return 0;
  if (!find(p, only, &t) && !(only < POOL_SPARK && find(p, POOL_SPARK, &t))) return 0;
  HELPING++;
  pool_run(w, t);
  HELPING--;
  return 1;
}

void pool_hold(int (*idle)(Wnf *w)) {
  Pool *p = me();
  if (p->threads <= 1) return;
  atomic_store_explicit(&p->idle_work, idle, memory_order_release);
  if (idle) {
    wake_nappers(p);
    pool_wake();
  } else {
    atomic_fetch_sub(&p->active, 1);
  }
}

int pool_busy(void) {
  return atomic_load(&me()->active) > 0;
}

void pool_init(u32 threads, PoolWorker *workers, u32 offers, PoolRun job, PoolRun spark) {
  if (!RT->cpu->opened) cpu_rt_open();   // as eval_init
  Pool *p    = me();
  u32   n    = threads > 1 ? threads : 1;
  p->threads = n;
  reclaim_init(n);
  reclaim_add_roots(pool_roots);
  p->workers = workers;
  for (u32 i = 0; i < n; i++) {
    workers[i].rt  = RT;
    workers[i].tid = i;
  }
  p->offers    = offers;
  p->run_job   = job;
  p->run_spark = spark;
  p->dq        = aligned_alloc(64, n * sizeof(Deque));
  p->in_task   = aligned_alloc(64, n * sizeof(InTask));
  p->thief     = aligned_alloc(64, n * sizeof(Thief));
  p->ids       = calloc(n, sizeof(pthread_t));
  if (!p->dq || !p->in_task || !p->thief || !p->ids) {
    eval_fatal("hvm4g: ", "out of memory");
  }
  for (u32 i = 0; i < n; i++) {
    atomic_init(&p->in_task[i].on, 0);
    p->thief[i] = (Thief){ .from = LONE_NONE };
    atomic_init(&p->dq[i].ring, NULL);
  }
  for (u32 i = 0; i < n; i++) {
    if (!dq_init(&p->dq[i], 1 << 12)) {
      eval_fatal("hvm4g: ", "out of memory");
    }
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, (size_t)64 << 20);
  for (u32 i = 1; i < n; i++) {
    if (pthread_create(&p->ids[i], &attr, pool_main, &workers[i])) {
      pthread_attr_destroy(&attr);
      eval_fatal("hvm4g: ", "cannot start a thread");
    }
    p->started = i;
  }
  pthread_attr_destroy(&attr);
}

void pool_close(void) {
  Pool *p = me();
  if (p->started) {
    pthread_mutex_lock(&p->idle_lock);
    atomic_store(&p->stop, 1);
    atomic_store(&p->quit, 1);
    pthread_cond_broadcast(&p->idle_cond);
    pthread_cond_broadcast(&p->nap_cond);
    pthread_mutex_unlock(&p->idle_lock);
    for (u32 i = 1; i <= p->started; i++) pthread_join(p->ids[i], NULL);
    p->started = 0;
  }
  for (u32 i = 0; p->dq && i < p->threads; i++) dq_free(&p->dq[i]);
  free(p->dq);
  free(p->in_task);
  free(p->thief);
  free(p->ids);
  p->dq      = NULL;
  p->in_task = NULL;
  p->thief   = NULL;
  p->ids     = NULL;
  p->threads = 1;
}
