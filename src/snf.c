// snf.c: strong normal form in place, on one CPU thread or on the -T pool.
//
// Order (HVM4's): depth first, left to right. Visiting a slot reduces it to
// WNF and stores the result back; then its first child is visited at once
// and the others are queued, last child deepest. A stuck DP0/DP1 continues
// into its DUP's expression slot. A slot is visited once per normalization
// (SEEN, below): after a stuck DUP is copied, both copies share subterms.
//
// Pool (-T N, N > 1): N-1 threads started once, sleeping when idle, plus the
// thread that asks for a normal form. Every normalization is a job: its root
// goes into the asking thread's deque, which the owner pops last-in first and
// the others steal from first-in. The asking thread works on the pool until
// its job's count of pending tasks reaches zero; a %nf met by a pool thread
// is a nested job served the same way, so the pool is reused, never grown.
// A job may also be K independent calls (snf_pool_run, the -C waves).
// The evaluators run in DUP_SHARED mode: taking a DUP slot is an atomic
// exchange with BUSY, and a thread that meets BUSY retries (eval_wnf).
//
// Stuck DUPs. A DP0/DP1 whose expression is stuck (a variable, a stuck
// application) stays in the normal form, and its expression must be
// normalized in place, where the other side of the DUP may copy it again at
// any time (and a normal form may even refer to its own DUP from inside the
// expression). So the parallel phase only records the expression slots of
// stuck DUPs, and once it has finished the asking thread visits them alone,
// in HVM4's sequential way. Slots that a later copy replaced by a SUB are
// skipped: the copy is visited where it went.

#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include "eval.h"
#include "heap.h"
#include "print.h"

// Which CPU thread this is (0: the thread running the program).
static _Thread_local u32 TID  = 0;

Wnf *eval_self(void) {
  return eval_worker(TID);
}

// Seen set
// ========
// One u16 per heap word, the epoch of the last normalization that visited
// it. Reserved for the whole heap, committed where touched. Epochs are not
// reused until the array is wiped, so no wipe is needed between jobs.

static _Atomic u16 *SEEN = NULL;
static u32          EPOCH = 0;
static pthread_mutex_t EPOCH_LOCK = PTHREAD_MUTEX_INITIALIZER;

static u16 epoch_new(void) {
  pthread_mutex_lock(&EPOCH_LOCK);
  if (++EPOCH > 0xFFFF) {
    madvise((void *)SEEN, HEAP_WORDS * sizeof(u16), MADV_DONTNEED);
    EPOCH = 1;
  }
  u16 e = (u16)EPOCH;
  pthread_mutex_unlock(&EPOCH_LOCK);
  return e;
}

static int seen_add(Wnf *w, u32 loc, u16 ep) {
  if (w->dup_mode == DUP_SOLO) {
    if (atomic_load_explicit(&SEEN[loc], memory_order_relaxed) == ep) return 0;
    atomic_store_explicit(&SEEN[loc], ep, memory_order_relaxed);
    return 1;
  }
  return atomic_exchange_explicit(&SEEN[loc], ep, memory_order_relaxed) != ep;
}

// Visiting a slot
// ===============

// Children a normal form has; the normalizer visits each.
static u32 snf_arity(Term t) {
  u32 tag = TAG(t);
  if (IS_CTR(tag)) return CTR_ARITY(tag);
  switch (tag) {
    case LAM: case USE: case INC: case UNS: return 1;
    case APP: case SUP: case DRY: case MAT: case SWI: case OP2: case RED:
    case EQL: case AND: case OR:  case DUP: return 2;
    case DSU: case DDU: return 3;
    case PRI: return PRIM_ARITY(EXT(t));
    default:  return 0;
  }
}

static int is_whnf(u32 tag) {
  switch (tag) {
    case RED: case NAM: case BJV: case BJ0: case BJ1: case DRY: case ERA:
    case SUP: case LAM: case NUM: case MAT: case SWI: case USE: case INC:
      return 1;
    default:
      return IS_CTR(tag);
  }
}

static u32  STEP_ROOT = 0;    // -D: the root printed after each step
static void step_at(Wnf *w, u32 loc);

// HEAP[loc] to WNF, stored back.
static Term wnf_at(Wnf *w, u32 loc) {
  Term t = __atomic_load_n(&HEAP[loc], __ATOMIC_RELAXED);
  if (is_whnf(TAG(t))) return t;
  if (EVAL.debug) {
    step_at(w, loc);
    return HEAP[loc];
  }
  Term r = eval_wnf(w, t);
  if (r != t) __atomic_store_n(&HEAP[loc], r, __ATOMIC_RELAXED);
  return r;
}

// Sequential normalization
// ========================
// A stack of slots per thread, re-entrant (a %nf inside works above the
// caller's entries), so it is indexed, never pointed into.

static _Thread_local u32 *SS     = NULL;
static _Thread_local u32  SS_LEN = 0;
static _Thread_local u32  SS_CAP = 0;

static void ss_push(u32 loc) {
  if (SS_LEN == SS_CAP) {
    u32  cap = SS_CAP ? SS_CAP * 2 : 4096;
    u32 *ns  = realloc(SS, (size_t)cap * sizeof(u32));
    if (!ns) eval_die("out of memory in the normalizer");
    SS = ns; SS_CAP = cap;
  }
  SS[SS_LEN++] = loc;
}

static void snf_seq(Wnf *w, u32 root, u16 ep) {
  u32 base = SS_LEN;
  ss_push(root);
  while (SS_LEN > base) {
    u32 loc = SS[--SS_LEN];
    while (seen_add(w, loc, ep)) {
      Term t   = wnf_at(w, loc);
      u32  tag = TAG(t);
      if (tag == DP0 || tag == DP1) {
        loc = VAL(t);
        continue;
      }
      u32 ari = snf_arity(t);
      if (ari == 0) break;
      for (u32 i = ari; i > 1; i--) ss_push(VAL(t) + i - 1);
      loc = VAL(t);
    }
  }
}

// The pool
// ========

typedef struct {
  _Atomic int64_t pending;   // tasks queued or running
  u16             ep;
  PoolFn          fn;        // a generic job (snf_pool_run); NULL: a normal form
  void           *arg;
  pthread_mutex_t lock;      // guards the stuck DUP slots below
  u32            *dups;
  u32             ndup, cap;
} Job;

static void job_dup(Job *job, u32 d) {
  pthread_mutex_lock(&job->lock);
  if (job->ndup == job->cap) {
    job->cap  = job->cap ? job->cap * 2 : 256;
    job->dups = realloc(job->dups, (size_t)job->cap * sizeof(u32));
    if (!job->dups) eval_die("out of memory in the normalizer");
  }
  job->dups[job->ndup++] = d;
  pthread_mutex_unlock(&job->lock);
}

typedef struct {
  u32  loc;
  Job *job;
} Task;

typedef struct {
  atomic_flag lock;
  Task *buf;
  u64   head, tail, cap;   // ring [head, tail); owner works at the tail
  char  pad[64];
} Deque;

static Deque          *DQ       = NULL;
static u32             NTHREADS = 1;
static pthread_t      *THREADS  = NULL;
static _Atomic u32     ACTIVE   = 0;     // jobs in progress
static pthread_mutex_t IDLE_LOCK = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t  IDLE_COND = PTHREAD_COND_INITIALIZER;

static void dq_lock(Deque *q) {
  while (atomic_flag_test_and_set_explicit(&q->lock, memory_order_acquire)) {
    cpu_relax();
  }
}

static void dq_unlock(Deque *q) {
  atomic_flag_clear_explicit(&q->lock, memory_order_release);
}

// head and tail are read without the lock to skip empty deques quickly, so
// every access to them is atomic (relaxed: the lock orders the rest).
#define LD(x)    __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

static void dq_push(Deque *q, Task t) {
  dq_lock(q);
  u64 head = LD(q->head), tail = LD(q->tail);
  if (tail - head == q->cap) {
    u64   cap = q->cap ? q->cap * 2 : 4096;
    Task *nb  = malloc(cap * sizeof(Task));
    if (!nb) {
      dq_unlock(q);
      eval_die("out of memory in the normalizer");
    }
    for (u64 i = head; i < tail; i++) nb[i - head] = q->buf[i & (q->cap - 1)];
    free(q->buf);
    tail -= head; head = 0;
    q->buf = nb; q->cap = cap;
    ST(q->head, head);
  }
  q->buf[tail & (q->cap - 1)] = t;
  ST(q->tail, tail + 1);
  dq_unlock(q);
}

static int dq_pop(Deque *q, Task *t) {
  if (LD(q->tail) == LD(q->head)) return 0;
  dq_lock(q);
  u64 tail = LD(q->tail);
  int ok   = tail > LD(q->head);
  if (ok) {
    *t = q->buf[(tail - 1) & (q->cap - 1)];
    ST(q->tail, tail - 1);
  }
  dq_unlock(q);
  return ok;
}

static int dq_steal(Deque *q, Task *t) {
  if (LD(q->tail) == LD(q->head)) return 0;
  dq_lock(q);
  u64 head = LD(q->head);
  int ok   = LD(q->tail) > head;
  if (ok) {
    *t = q->buf[head & (q->cap - 1)];
    ST(q->head, head + 1);
  }
  dq_unlock(q);
  return ok;
}

static int find_task(u32 me, Task *t) {
  if (dq_pop(&DQ[me], t)) return 1;
  for (u32 k = 1; k < NTHREADS; k++) {
    if (dq_steal(&DQ[(me + k) % NTHREADS], t)) return 1;
  }
  return 0;
}

// Visits a task's slot and its first descendants; queues the other children.
static void run_task(Wnf *w, Task t) {
  Job *job = t.job;
  u32  loc = t.loc;
  if (job->fn) {
    job->fn(w, job->arg, loc);
    atomic_fetch_sub_explicit(&job->pending, 1, memory_order_acq_rel);
    return;
  }
  while (seen_add(w, loc, job->ep)) {
    Term v   = wnf_at(w, loc);
    u32  tag = TAG(v);
    if (tag == DP0 || tag == DP1) {
      job_dup(job, VAL(v));
      break;
    }
    u32 ari = snf_arity(v);
    if (ari == 0) break;
    for (u32 i = ari; i > 1; i--) {
      atomic_fetch_add_explicit(&job->pending, 1, memory_order_relaxed);
      dq_push(&DQ[TID], (Task){ VAL(v) + i - 1, job });
    }
    loc = VAL(v);
  }
  atomic_fetch_sub_explicit(&job->pending, 1, memory_order_acq_rel);
}

// Runs one task if there is one to find; else backs off (spin, then yield).
static void work_once(Wnf *w, u32 *idle) {
  Task t;
  if (find_task(TID, &t)) {
    run_task(w, t);
    *idle = 0;
  } else if (++*idle < 256) {
    cpu_relax();
  } else {
    sched_yield();
  }
}

static void *pool_main(void *arg) {
  TID = (u32)(uintptr_t)arg;
  Wnf *w = eval_self();
  for (;;) {
    pthread_mutex_lock(&IDLE_LOCK);
    while (atomic_load(&ACTIVE) == 0) {
      pthread_cond_wait(&IDLE_COND, &IDLE_LOCK);
    }
    pthread_mutex_unlock(&IDLE_LOCK);
    u32 idle = 0;
    while (atomic_load_explicit(&ACTIVE, memory_order_relaxed) > 0) {
      work_once(w, &idle);
    }
  }
  return NULL;
}

// Wakes the pool for `job` (already queued) and works on it until done.
static void job_wait(Wnf *w, Job *job) {
  pthread_mutex_lock(&IDLE_LOCK);
  atomic_fetch_add(&ACTIVE, 1);
  pthread_cond_broadcast(&IDLE_COND);
  pthread_mutex_unlock(&IDLE_LOCK);
  u32 idle = 0;
  while (atomic_load_explicit(&job->pending, memory_order_acquire) > 0) {
    work_once(w, &idle);
  }
  atomic_fetch_sub(&ACTIVE, 1);
}

static void snf_par(Wnf *w, u32 root) {
  Job job = { .ep = epoch_new(), .dups = NULL, .ndup = 0, .cap = 0 };
  atomic_store(&job.pending, 1);
  pthread_mutex_init(&job.lock, NULL);
  dq_push(&DQ[TID], (Task){ root, &job });
  job_wait(w, &job);
  // stuck DUPs, alone (see the top of this file)
  for (u32 i = 0; i < job.ndup; i++) {
    u32 d = job.dups[i];
    if (!IS_SUB(HEAP[d])) snf_seq(w, d, job.ep);
  }
  free(job.dups);
  pthread_mutex_destroy(&job.lock);
}

void snf_pool_run(PoolFn fn, void *arg, u32 n) {
  Wnf *w = eval_self();
  // Fewer tasks than threads: waking the pool costs more than it saves
  // (collapse waves of one or two pairs in narrow searches).
  if (NTHREADS <= 1 || n < NTHREADS) {
    for (u32 i = 0; i < n; i++) fn(w, arg, i);
    return;
  }
  Job job = { .fn = fn, .arg = arg };
  atomic_store(&job.pending, (int64_t)n);
  pthread_mutex_init(&job.lock, NULL);
  for (u32 i = n; i > 0; i--) dq_push(&DQ[TID], (Task){ i - 1, &job });
  job_wait(w, &job);
  pthread_mutex_destroy(&job.lock);
}

int snf_pool_busy(void) {
  return atomic_load(&ACTIVE) > 0;
}

void snf_init(void) {
  SEEN = mmap(NULL, HEAP_WORDS * sizeof(u16), PROT_READ | PROT_WRITE,
              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (SEEN == MAP_FAILED) {
    fprintf(stderr, "Error: cannot reserve the normalizer's seen set\n");
    exit(1);
  }
  NTHREADS = EVAL.threads > 1 ? EVAL.threads : 1;
  DQ = calloc(NTHREADS, sizeof(Deque));
  THREADS = calloc(NTHREADS, sizeof(pthread_t));
  if (!DQ || !THREADS) {
    fprintf(stderr, "Error: out of memory\n");
    exit(1);
  }
  for (u32 i = 0; i < NTHREADS; i++) atomic_flag_clear(&DQ[i].lock);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, (size_t)64 << 20);
  for (u32 i = 1; i < NTHREADS; i++) {
    if (pthread_create(&THREADS[i], &attr, pool_main, (void *)(uintptr_t)i)) {
      fprintf(stderr, "Error: cannot start thread %u\n", i);
      exit(1);
    }
    pthread_detach(THREADS[i]);
  }
  pthread_attr_destroy(&attr);
}

// -D
// ==
// Normalizes one interaction at a time (a budget of 1), printing the whole
// term after each, as HVM4 does.

static void step_at(Wnf *w, u32 loc) {
  for (;;) {
    u64 before = w->itrs;
    w->budget = before + 1;
    Term r = eval_wnf_named(w, HEAP[loc]);
    w->budget = ~0ull;
    HEAP[loc] = r;
    if (w->itrs == before) return;
    if (!EVAL.silent && STEP_ROOT) {
      const char *name = eval_rule_name(w->rule);
      for (int i = 0; i < 40; i++) putchar('-');
      if (name) printf(" %s", name);
      putchar('\n');
      print_term(stdout, HEAP[STEP_ROOT]);
      putchar('\n');
    }
  }
}

void eval_snf_at(u32 loc) {
  Wnf *w = eval_self();
  if (EVAL.debug && !STEP_ROOT) {
    STEP_ROOT = loc;
    if (!EVAL.silent) {
      print_term(stdout, HEAP[loc]);
      putchar('\n');
    }
    snf_seq(w, loc, epoch_new());
    STEP_ROOT = 0;
    return;
  }
  if (NTHREADS > 1) {
    snf_par(w, loc);
  } else {
    snf_seq(w, loc, epoch_new());
  }
}
