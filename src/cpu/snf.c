// snf.c: strong normal form in place, on one CPU thread or on the -T pool.
//
// Order (HVM4's): depth first, left to right. Visiting a slot reduces it to
// WNF and stores the result back; then its first child is visited at once
// and the others are queued, last child deepest. A stuck DP0/DP1 continues
// into its DUP's expression slot. A slot is visited once per normalization
// (the seen set, below): after a stuck DUP is copied, both copies share
// subterms.
//
// Under -T N (N > 1) every normalization is a job on the pool (pool.c),
// unless the program has an unscoped binder (see "Stuck DUP chains"):
// its root goes into the asking thread's deque, which the owner pops
// last-in first and the others steal from first-in. The asking thread
// works on the pool until its job has no task left (counted per thread,
// see "Jobs on the pool"); a %nf met by a pool thread is a nested job
// served the same way, so the pool is reused, never grown.
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
#include <string.h>
#include <stdatomic.h>
#include <pthread.h>
#include <sys/mman.h>
#include "cpu/eval.h"
#include "cpu/snf.h"
#include "cpu/step.h"
#include "heap/heap.h"
#include "lang/print.h"
#include "cpu/pool.h"
#include "lang/parse.h"
#include "cpu/reclaim.h"
#include "heap/rt.h"
#include "cpu/cpu_rt.h"

// Seen set
// ========
// One u16 per heap word, the epoch of the last normalization that visited
// it. Reserved for the whole heap, committed where touched. Epochs are not
// reused until the array is wiped, so no wipe is needed between jobs.
// Epochs fit in 15 bits: the pool marks a DUP slot it found stuck with its
// epoch plus FOUND (see "Stuck DUP chains").

#define FOUND 0x8000

static Snf *me(void) {
  return &RT->cpu->snf;
}

static u16 epoch_new(Snf *s) {
  pthread_mutex_lock(&s->epoch_lock);
  if (++s->epoch >= FOUND) {
    madvise((void *)s->seen, s->seen_words * sizeof(u16), MADV_DONTNEED);
    s->epoch = 1;
  }
  u16 e = (u16)s->epoch;
  pthread_mutex_unlock(&s->epoch_lock);
  return e;
}

// One byte per page of the seen set (Snf.seen_dirty): whether a mark was
// set there since it was last cleared, so that snf_forget clears only the
// pages the normal form visited (a collection forgets every freed run;
// most were never seen).
#define SEEN_PAGE_WORDS (4096 / sizeof(u16))

static void seen_dirty(Snf *s, u32 loc) {
  u8 *dirty = &s->seen_dirty[loc / SEEN_PAGE_WORDS];
  if (!__atomic_load_n(dirty, __ATOMIC_RELAXED)) __atomic_store_n(dirty, 1, __ATOMIC_RELAXED);
}

static int seen_add(Snf *s, Wnf *w, u32 loc, u16 ep) {
  seen_dirty(s, loc);
  if (w->dup_mode == DUP_SOLO) {
    if (atomic_load_explicit(&s->seen[loc], memory_order_relaxed) == ep) return 0;
    atomic_store_explicit(&s->seen[loc], ep, memory_order_relaxed);
    return 1;
  }
  return atomic_exchange_explicit(&s->seen[loc], ep, memory_order_relaxed) != ep;
}

// Visiting a slot
// ===============

static int is_whnf(u32 tag) {
  switch (tag) {
    case RED: case NAM: case BJV: case BJ0: case BJ1: case DRY: case ERA:
    case SUP: case LAM: case NUM: case MAT: case SWI: case USE: case INC:
      return 1;
    default:
      return IS_CTR(tag);
  }
}


// RT->heap.at[loc] to WNF, stored back. The slot is a root meanwhile: a
// collection may run while its term is reduced (reclaim.c).
static Term wnf_at(Wnf *w, u32 loc) {
  Term t = __atomic_load_n(&RT->heap.at[loc], __ATOMIC_RELAXED);
  if (is_whnf(TAG(t))) return t;
  if (RT->cpu->conf.debug) {
    step_wnf_at(w, loc);
    return RT->heap.at[loc];
  }
  Term r = eval_wnf_slot(w, t, loc);
  if (r != t) __atomic_store_n(&RT->heap.at[loc], r, __ATOMIC_RELAXED);
  return r;
}

// Sequential normalization
// ========================
// A stack of slots per thread (per worker: the thread that reduces with
// it), re-entrant (a %nf inside works above the caller's entries), so it
// is indexed, never pointed into. Its chain scratch (chain_visit) too.
// A cache line each: every thread moves its own stack's length.

typedef struct SnfWorker {
  _Alignas(64) u32 *ss;   // the slot stack
  u32  len;
  u32  cap;
  u32 *chain;             // chain_visit's links
  u32  chain_cap;
} SnfWorker;

static void ss_push(SnfWorker *k, u32 loc) {
  if (k->len == k->cap) {
    u32  cap = k->cap ? k->cap * 2 : 4096;
    u32 *ns  = realloc(k->ss, (size_t)cap * sizeof(u32));
    if (!ns) eval_die("out of memory in the normalizer");
    k->ss = ns; k->cap = cap;
  }
  k->ss[k->len++] = loc;
}

// Stuck DUP chains
// -----------------
// A λ&f used N times in a lambda that is never applied is a chain of N
// DUPs, each copying the one below, down to the free variable f. Reducing
// a use walks the chain down to f: N uses cost O(N^2). Two things make it
// O(N). A DUP slot this normalization visited and found neutral stays
// stuck for the rest of it (nothing binds f meanwhile), so the WNF core
// stops at its DP0/DP1 (snf_stuck, cpu.h's WNF_STUCK; on once the
// normalization met a stuck DUP): a use whose link was visited costs
// O(1), also for chains built while reducing
// (bench/dup_chain_built.hvm4). And the first use of a chain met top down
// visits its links bottom up (chain_visit), so that each is then known
// stuck (bench/dup_chain.hvm4).
// Under the pool a slot is marked seen before its term is reduced, so
// "seen" there does not mean "found stuck": a task marks the DUP slots it
// found stuck with ep | FOUND instead (the memo's key, SNF_STUCK_EP, in its
// thread), and leaves their visit to the sequential phase, whose memo
// takes both marks (bench/dup_chain_built.hvm4 under -T2).
// "Nothing binds f meanwhile" fails for an unscoped variable (`! f = λ v;`):
// v is bound where f is applied, maybe after the walk passed a DUP of v.
// In a program with one, a use is then reduced again where one thread's
// walk meets it (as in HVM4), so the memo trusts only what it can check
// again (a variable still free) and the normalization runs in that order,
// on one thread (tests/golden/unscoped_late_bind.hvm4).

// Per thread: the normalization this thread is inside (cpu.h).
_Thread_local u16 SNF_STUCK_EP = 0;
_Thread_local u32 SNF_JOB      = POOL_ANY;

static Term load(u32 loc) {
  return __atomic_load_n(&RT->heap.at[loc], __ATOMIC_ACQUIRE);
}

// Whether slot d carries mark m, or m | FOUND.
static int marked(Snf *s, u32 d, u16 m) {
  u16 e = atomic_load_explicit(&s->seen[d], memory_order_relaxed);
  return e == m || e == (m | FOUND);
}

// Whether DUP slot d, holding c (no SUB, not BUSY), is known stuck under
// key m (an epoch, or an epoch | FOUND in a pool task): the normalization
// reduced it (c is its WNF) and c is neutral (a variable still free, a
// stuck DP0/DP1 or application).
static int slot_stuck(Snf *s, u32 d, Term c, u16 m) {
  if (!marked(s, d, m)) return 0;
  if (TAG(c) == VAR) {
    Term b = load(VAL(c));
    return !IS_SUB(b) && b != BUSY;
  }
  return !s->unscoped && !is_whnf(TAG(c));
}

// Only links and stuck applications are worth a look: a variable is one
// step away, and the seen set is not read for every DUP a program makes.
int snf_stuck(u32 loc, Term c) {
  u32 tc = TAG(c);
  return (tc == DP0 || tc == DP1 || tc == APP) && slot_stuck(me(), loc, c, SNF_STUCK_EP);
}

// The head of t's application spine.
static Term spine_head(Term t) {
  while (TAG(t) == APP) t = load(VAL(t));
  return t;
}

// Whether t is known to be stuck under key m without reducing it, looking
// `hops` DUPs deep: its head is a free variable, or a DP0/DP1 of a DUP slot
// this normalization already reduced to a neutral term (not a value).
static int stuck_within(Snf *s, Term t, u16 m, u32 hops) {
  for (u32 h = 0; h < hops; h++) {
    t = spine_head(t);
    u32 tag = TAG(t);
    if (tag == VAR) {
      Term c = load(VAL(t));
      return !IS_SUB(c) && c != BUSY;
    }
    if (tag != DP0 && tag != DP1) return 0;
    Term c = load(VAL(t));
    if (c == BUSY || IS_SUB(c)) return 0;
    if (slot_stuck(s, VAL(t), c, m)) return 1;
    t = c;
  }
  return 0;
}

static int known_stuck(Snf *s, Term t, u16 m) {
  return stuck_within(s, t, m, 2);
}

// Whether t's head is a DP0/DP1 whose DUP copies a free variable, or a
// copy of a copy of one (a link of a chain), not yet reduced. Anything else
// (a variable bound by now, a value) the pool reduces as usual.
static int chain_link(Term t) {
  t = spine_head(t);
  for (u32 hops = 0; hops < 3; hops++) {
    if (TAG(t) == VAR) return hops > 0 && !IS_SUB(load(VAL(t)));
    if (TAG(t) != DP0 && TAG(t) != DP1) return 0;
    t = load(VAL(t));
    if (t == BUSY || IS_SUB(t)) return 0;
  }
  return 1;
}

// Marks the unmarked DUP slots below t's head with m, bottom up, when they
// form a chain of copies down to a free variable (each then stuck in O(1)),
// and turns the memo on.
// A DUP may come to hold one of its own copies (two copies given one label
// by a self-applied λ&f): the walk keeps a checkpoint slot, moved at each
// power of two (Brent), and a chain that comes back to it is a cycle, not
// a chain down to a variable, so nothing is marked. The walk, from t's
// head, a DP0/DP1 (chain_visit).
static __attribute__((noinline)) void chain_walk(Snf *s, SnfWorker *k, Wnf *w, Term t, u16 m) {
  u32 n = 0, mark = 0, next_mark = 1;
  while (TAG(t) == DP0 || TAG(t) == DP1) {
    u32  d  = VAL(t);
    if (n > 0 && d == mark) return;
    if (n + 1 == next_mark) { mark = d; next_mark *= 2; }
    Term c  = load(d);
    u32  tc = TAG(c);
    // only links (a copy of a variable): their slots have nothing to visit
    if (c == BUSY || IS_SUB(c) || (tc != VAR && tc != DP0 && tc != DP1) || marked(s, d, m)) break;
    if (n == k->chain_cap) {
      u32  cap = k->chain_cap ? k->chain_cap * 2 : 256;
      u32 *nc  = realloc(k->chain, (size_t)cap * sizeof(u32));
      if (!nc) return;   // an optimization: not needed to go on
      k->chain = nc; k->chain_cap = cap;
    }
    k->chain[n++] = d;
    t = c;
  }
  // The last link must copy what leaves nothing to visit: a free variable,
  // or a DUP this normalization visited and found stuck (one hop). Two hops
  // also take a DUP of a stuck application never visited, whose arguments
  // are still to normalize: marking the links above it seen left them
  // unreduced (a redex printed, a runtime error missed:
  // tests/golden/dup_chain_stuck_app.hvm4).
  if (n == 0 || !stuck_within(s, t, m, 1)) return;
  SNF_STUCK_EP = m;
  while (n > 0) {
    u32 d = k->chain[--n];
    if (!known_stuck(s, load(d), m)) return;
    seen_add(s, w, d, m);
  }
}

// Inline: every visit asks, and few heads are a DP0/DP1.
static inline void chain_visit(Snf *s, SnfWorker *k, Wnf *w, Term t, u16 m) {
  t = spine_head(t);
  if (TAG(t) == DP0 || TAG(t) == DP1) chain_walk(s, k, w, t, m);
}

// Under the lazy core
// -------------------
// The lazy core, as HVM4, reads a stuck DUP anew whenever a copy of it is
// read: its expression moves to a fresh slot (wnf.h). A DUP that holds one
// of its own copies is then read again from inside what the walk visits of
// it, at a new slot each time, and the walk never ends. So the walk counts,
// along each DUP's moves, the reads of a slot it already visited; past the
// bound the term is infinite. A table entry is [slot + 1, reads, epoch].
#define LAZY_REREADS_MAX 4096   // far above a DUP's two copies and the spines that read one again

static u32 reread_find(const Snf *s, u32 slot) {
  u32 mask = s->rereads_cap - 1;
  for (u32 i = (slot * 2654435761u) & mask;; i = (i + 1) & mask) {
    u32 key = s->rereads[3 * i];
    if (key == 0 || key == slot + 1) return i;
  }
}

// Room for one more entry; 0 without memory (the bound is then not kept:
// an endless walk ends when the heap does).
static int reread_room(Snf *s) {
  if (2 * (s->rereads_len + 1) <= s->rereads_cap) return 1;
  u32  cap  = s->rereads_cap ? s->rereads_cap * 2 : 1024;
  u32 *old  = s->rereads;
  u32  ocap = s->rereads_cap;
  u32 *more = calloc((size_t)cap * 3, sizeof(u32));
  if (!more) return 0;
  s->rereads     = more;
  s->rereads_cap = cap;
  for (u32 i = 0; i < ocap; i++) {
    if (old[3 * i] == 0) continue;
    u32 j = reread_find(s, old[3 * i] - 1);
    memcpy(&more[3 * j], &old[3 * i], 3 * sizeof(u32));
  }
  free(old);
  return 1;
}

// A DUP's count goes with it through every move; a read of a slot the walk
// visited adds one.
void snf_lazy_moved(u32 from, u32 to) {
  Snf *s  = me();
  u16  ep = s->lazy_ep;
  if (ep == 0 || !reread_room(s)) return;
  u32 i     = reread_find(s, from);
  u32 reads = s->rereads[3 * i] && s->rereads[3 * i + 2] == ep ? s->rereads[3 * i + 1] : 0;
  reads    += atomic_load_explicit(&s->seen[from], memory_order_relaxed) == ep;
  if (reads == 0) return;
  if (reads > LAZY_REREADS_MAX) s->endless = 1;
  u32 j = reread_find(s, to);
  if (s->rereads[3 * j] == 0) s->rereads_len++;
  s->rereads[3 * j + 0] = to + 1;
  s->rereads[3 * j + 1] = reads;
  s->rereads[3 * j + 2] = ep;
}

static void reread_clear(Snf *s) {
  if (s->rereads) memset(s->rereads, 0, (size_t)s->rereads_cap * 3 * sizeof(u32));
  s->rereads_len = 0;
  s->endless     = 0;
}

// Returns 1 when, with effects held (eval_hold_effects), a slot's reduction
// stopped at one: that slot is left as it is, its children unvisited.
static int snf_seq(Wnf *w, u32 root, u16 ep) {
  Snf       *s    = me();
  SnfWorker *k    = &s->workers[pool_tid()];
  u16        up   = SNF_STUCK_EP;   // a %nf inside runs its own normalization
  u32        base = k->len;
  int        held = 0;
  int        memo = !eval_lazy();   // the lazy core reads a stuck DUP again,
                                    // as HVM4, whose copies may then differ
  SNF_STUCK_EP = 0;                 // on at the first stuck DUP met
  u16 lazy_up = s->lazy_ep;
  if (!memo) {
    if (lazy_up == 0) reread_clear(s);
    s->lazy_ep = ep;
  }
  ss_push(k, root);
  while (k->len > base) {
    u32 loc = k->ss[--k->len];
    while (seen_add(s, w, loc, ep)) {
      Term t   = load(loc);
      if (memo) chain_visit(s, k, w, t, ep);
      if (!memo || !known_stuck(s, t, ep)) t = wnf_at(w, loc);
      if (s->endless) {
        k->len     = base;
        s->lazy_ep = 0;
        reread_clear(s);
        eval_die(SNF_INFINITE);
      }
      if (eval_held_stop()) {
        held = 1;
        break;
      }
      u32  tag = TAG(t);
      if (tag == DP0 || tag == DP1) {
        if (memo) SNF_STUCK_EP = ep;
        loc = VAL(t);
        continue;
      }
      u32 ari = term_arity(t);
      if (ari == 0) break;
      for (u32 i = ari; i > 1; i--) ss_push(k, VAL(t) + i - 1);
      loc = VAL(t);
    }
  }
  SNF_STUCK_EP = up;
  s->lazy_ep   = lazy_up;
  return held;
}

// Effects and errors under -T
// ---------------------------
// -T N prints what -T1 prints: the same %log lines in the same order, the
// same first error, after the same lines. Tasks run in no fixed order, so a
// task does not run a host primitive (%log, and %nf/%gnf, whose effects and
// errors would come out of order too) nor report a runtime error: its
// reduction stops there (eval_hold_effects), leaves the slot's term rebuilt
// and visits nothing below it. The stuck DUPs' phase holds them the same
// way. If anything was held, the asking thread then walks the whole result
// again alone, a fresh one-thread normalization: what the tasks reduced is
// already a normal form, and the held slots are reduced in one thread's
// order, effects and errors included.

// Jobs on the pool
// ================
// Every normalization under -T is a job (pool.c runs its tasks: a task is
// its job's slot, then a heap location).
//
// A job ends when every task it made is done. Counting that with one shared
// counter costs two contended atomics per task, which is what limited
// scaling on wide trees; so each thread counts the tasks it made and the
// tasks it finished, in its own cache line, and the waiting thread sums
// them: all `done` first, then all `made`. A task's `done` is published
// (release) after the `made` of its children, and reaches a thief only
// after its own `made`, so done == made means the job is quiescent.

typedef struct {
  _Alignas(64) _Atomic u64 made;
  _Atomic u64              done;
} Count;

typedef struct Job {
  u16             ep;
  _Atomic int     stop;      // stopped early (snf_at_until): tasks end
  _Atomic int     found;     // a task marked a stuck DUP: the memo is on
  _Atomic int     held;      // a task stopped at an effect or an error
  Count          *cnt;       // one per thread
  pthread_mutex_t lock;      // guards the stuck DUP slots and left slots
  u32            *dups;
  u32             ndup, cap;
  u32            *left;      // stopped: the slots its tasks did not visit
  u32             nleft, lcap;
} Job;

// Job slots (Snf.jobs): tasks name their job by slot. A thread that finds
// none free normalizes alone (jobs nest only through %nf inside a
// normalization).
#define MAX_JOBS 1024

static Job *job_new(Snf *s, u32 *slot) {
  pthread_mutex_lock(&s->job_lock);
  Job *job = NULL;
  if (s->job_nfree > 0) {
    *slot = s->job_free[--s->job_nfree];
    job   = &s->jobs[*slot];
  }
  pthread_mutex_unlock(&s->job_lock);
  if (!job) return NULL;
  Count *cnt = job->cnt;
  for (u32 i = 0; i < pool_size(); i++) {
    atomic_store_explicit(&cnt[i].made, 0, memory_order_relaxed);
    atomic_store_explicit(&cnt[i].done, 0, memory_order_relaxed);
  }
  *job = (Job){ .cnt = cnt };
  pthread_mutex_init(&job->lock, NULL);
  return job;
}

static void job_free(Snf *s, u32 slot) {
  Job *job = &s->jobs[slot];
  free(job->dups);
  free(job->left);
  job->dups = NULL; job->ndup  = 0;   // no longer a collection's roots
  job->left = NULL; job->nleft = 0;
  pthread_mutex_destroy(&job->lock);
  pthread_mutex_lock(&s->job_lock);
  s->job_free[s->job_nfree++] = slot;
  pthread_mutex_unlock(&s->job_lock);
}

// Appends d to a job's list (*v, *n, *cap) under its lock.
static void job_list_add(Job *job, u32 **v, u32 *n, u32 *cap, u32 d) {
  pthread_mutex_lock(&job->lock);
  if (*n == *cap) {
    *cap = *cap ? *cap * 2 : 256;
    *v   = realloc(*v, (size_t)*cap * sizeof(u32));
    if (!*v) eval_die("out of memory in the normalizer");
  }
  (*v)[(*n)++] = d;
  pthread_mutex_unlock(&job->lock);
}

static void job_dup(Job *job, u32 d) {
  job_list_add(job, &job->dups, &job->ndup, &job->cap, d);
}

// Only this thread writes its own counters.
static void count_add(_Atomic u64 *c, u64 k) {
  u64 v = atomic_load_explicit(c, memory_order_relaxed);
  atomic_store_explicit(c, v + k, memory_order_release);
}

// The tasks `job` made so far (also a stop's poll).
static u64 job_made(Job *job) {
  u64 n = 0;
  for (u32 i = 0; i < pool_size(); i++) {
    n += atomic_load_explicit(&job->cnt[i].made, memory_order_acquire);
  }
  return n;
}

static int job_quiet(Job *job) {
  u64 done = 0;
  for (u32 i = 0; i < pool_size(); i++) {
    done += atomic_load_explicit(&job->cnt[i].done, memory_order_acquire);
  }
  atomic_thread_fence(memory_order_seq_cst);
  return done == job_made(job);
}

// Queues a task of `job` on this thread's deque, counted first.
static void task_push(Job *job, u32 slot, u32 x) {
  count_add(&job->cnt[pool_tid()].made, 1);
  pool_push(POOL_TASK(slot, x));
}

// Runs a task: a slot's visit and its first descendants (the other
// children are queued).
void snf_task(Wnf *w, u64 task) {
  Snf *s    = me();
  u32  slot = POOL_KIND(task);
  u32  loc  = (u32)task;
  Job *job  = &s->jobs[slot];
  u16  ep   = job->ep;
  u16  m    = ep | FOUND;
  u16  up   = SNF_STUCK_EP;   // this thread may be inside another normalization
  u32  upj  = SNF_JOB;
  SNF_STUCK_EP = atomic_load_explicit(&job->found, memory_order_relaxed) ? m : 0;
  SNF_JOB      = slot;
  eval_hold_effects(1);
  for (;;) {
    if (atomic_load_explicit(&job->stop, memory_order_relaxed)) {
      // Stopped (the device takes over): this slot and what hangs from
      // it are the device's, unless another task visits it meanwhile.
      if (atomic_load_explicit(&s->seen[loc], memory_order_relaxed) != ep) {
        job_list_add(job, &job->left, &job->nleft, &job->lcap, loc);
      }
      break;
    }
    if (!seen_add(s, w, loc, ep)) break;
    Term t = load(loc);
    if (chain_link(t)) {
      // marked bottom up, visited by the sequential phase (see above)
      chain_visit(s, &s->workers[pool_tid()], w, t, m);
      atomic_store_explicit(&s->seen[loc], 0, memory_order_relaxed);
      job_dup(job, loc);
      break;
    }
    eval_held_stop();
    Term v   = wnf_at(w, loc);
    if (eval_held_stop()) {   // left to the replay, with what hangs from it
      atomic_store_explicit(&job->held, 1, memory_order_relaxed);
      break;
    }
    u32  tag = TAG(v);
    if (tag == DP0 || tag == DP1) {
      seen_dirty(s, VAL(v));
      atomic_store_explicit(&s->seen[VAL(v)], m, memory_order_relaxed);
      SNF_STUCK_EP = m;
      job_dup(job, VAL(v));
      break;
    }
    u32 ari = term_arity(v);
    if (ari == 0) break;
    for (u32 i = ari; i > 1; i--) task_push(job, slot, VAL(v) + i - 1);
    loc = VAL(v);
  }
  eval_hold_effects(0);
  if (SNF_STUCK_EP) atomic_store_explicit(&job->found, 1, memory_order_relaxed);
  SNF_STUCK_EP = up;
  SNF_JOB      = upj;
  count_add(&job->cnt[pool_tid()].done, 1);   // the last touch of job
}

u64 snf_made(void) {
  Job *job = me()->polled;   // the job whose yield is being polled
  return job ? job_made(job) : 0;
}

// Works on the pool until `job` (in slot `slot`) is done; then the job no
// longer counts as in progress. A thread that holds a host primitive's slot
// BUSY (a %nf inside a DUP) runs only its own job's tasks (and sparks)
// meanwhile: a task of an enclosing job may reach that slot and would wait
// on it forever. With `yield`, it polls whether to stop the job early.
static void job_finish(Wnf *w, Job *job, u32 slot, int (*yield)(void)) {
  Snf     *s    = me();
  Reclaim *r    = &RT->cpu->reclaim;
  u32      idle = 0;
  u32      only = eval_holding() ? slot : POOL_ANY;
  u32      poll = 0;
  eval_nest(1);
  for (;;) {
    u64 t;
    reclaim_poll(r, pool_tid());   // between tasks: a safe point
    if (yield && (++poll & 7) == 0 && !atomic_load(&job->stop)) {
      s->polled = job;
      if (yield()) atomic_store(&job->stop, 1);
      s->polled = NULL;
    }
    if (pool_find_for(only, &t)) {
      pool_run(w, t);
      idle = 0;
      continue;
    }
    if (job_quiet(job)) break;
    pool_idle_wait(&idle);
  }
  eval_nest(-1);
  pool_rest();
}

// The root task runs on this thread first: a job that small (a %nf of a
// number) then never crosses to another thread, where an idle one stole
// the root and this one waited for it.
static void job_wait(Wnf *w, Job *job, u32 slot, u32 root, int (*yield)(void)) {
  count_add(&job->cnt[pool_tid()].made, 1);
  pool_wake();
  eval_nest(1);
  snf_task(w, POOL_TASK(slot, root));
  eval_nest(-1);
  if (job_quiet(job)) {   // the root task made no other: nothing to find
    pool_rest();
    return;
  }
  job_finish(w, job, slot, yield);
}

const u32 *snf_left(u32 *n, int *dups) {
  Snf *s = me();
  *n    = s->nleft;
  *dups = s->left_dups;
  return s->left;
}

// 1 when yield stopped it early (snf_at_until).
static int snf_par(Wnf *w, u32 root, int (*yield)(void)) {
  Snf *s   = me();
  u32  slot;
  Job *job = job_new(s, &slot);
  u16  ep  = epoch_new(s);
  if (!job) {
    snf_seq(w, root, ep);
    return 0;
  }
  job->ep = ep;
  job_wait(w, job, slot, root, yield);
  // A job that held an effect or an error is finished by the one-thread
  // replay below, not by the device: its held slots are in no left list.
  if (atomic_load(&job->stop) && !atomic_load(&job->held)) {
    // the rest is the device's: no thread may touch the heap meanwhile
    pool_halt();
    free(s->left);
    s->left      = job->left;
    s->nleft     = job->nleft;
    s->left_dups = job->ndup > 0;
    job->left    = NULL;
    job_free(s, slot);
    return 1;
  }
  // stuck DUPs, alone (see the top of this file), in the order tasks
  // found them: their effects and errors are held too
  int held = atomic_load(&job->held);
  eval_hold_effects(1);
  for (u32 i = 0; i < job->ndup && !held; i++) {
    u32 d = job->dups[i];
    if (!IS_SUB(RT->heap.at[d])) held = snf_seq(w, d, ep);
  }
  eval_hold_effects(0);
  job_free(s, slot);
  // the one-thread replay: what was done stays done, and the walk meets the
  // held effects and errors in one thread's order
  if (held) snf_seq(w, root, epoch_new(s));
  return 0;
}

// Collections
// ===========

// For a collection (reclaim.c, every thread parked): each slot the
// normalizer holds (its slot stacks, the stuck DUPs its jobs left for the
// sequential phase) to `root` (registered with the collector by snf_init).
static void snf_roots(ReclaimRoot root) {
  Snf *s = me();
  for (u32 i = 0; i < s->nworkers; i++) {
    SnfWorker *k = &s->workers[i];
    for (u32 j = 0; j < k->len; j++) root(k->ss[j]);
  }
  for (u32 j = 0; s->jobs && j < MAX_JOBS; j++) {
    for (u32 k = 0; k < s->jobs[j].ndup; k++) root(s->jobs[j].dups[k]);
    for (u32 k = 0; k < s->jobs[j].nleft; k++) root(s->jobs[j].left[k]);
  }
}

// A freed word's mark would say a slot reused there was visited (or found
// stuck) by this normalization: the words [lo, hi), freed, are forgotten.
// The ends are cleared in place. The whole pages between are given back in
// one call where there are FORGET_CALL_PAGES of them (a clean page among
// them reads as zero either way), else cleared in place: each call
// interrupts every core the process runs on (a TLB shootdown), and a call
// a page made a collection under -T2 four times slower than at -T1.
#define FORGET_CALL_PAGES 64

static void forget_page(Snf *s, u64 p, u64 a, u64 b) {
  if (!s->seen_dirty[p]) return;
  memset((void *)(s->seen + a), 0, (b - a) * sizeof(u16));
  if (b - a == SEEN_PAGE_WORDS) s->seen_dirty[p] = 0;
}

static void snf_forget(u32 lo, u64 hi) {
  Snf *s = me();
  if (!s->seen || lo >= hi) return;
  const u64 page  = SEEN_PAGE_WORDS;
  u64       first = (lo + page - 1) / page;   // the whole pages: [first, last)
  u64       last  = hi / page;
  if (first > last) {   // inside one page
    forget_page(s, last, lo, hi);
    return;
  }
  if (lo < first * page) forget_page(s, first - 1, lo, first * page);
  if (last * page < hi) forget_page(s, last, last * page, hi);
  if (last - first >= FORGET_CALL_PAGES) {
    madvise((void *)(s->seen + first * page), (last - first) * page * sizeof(u16), MADV_DONTNEED);
    memset(s->seen_dirty + first, 0, last - first);
    return;
  }
  for (u64 p = first; p < last; p++) forget_page(s, p, p * page, (p + 1) * page);
}

void snf_init(void) {
  Snf *s = me();
  reclaim_add_roots(snf_roots);
  reclaim_add_forget(snf_forget);
  void *seen = mmap(NULL, RT->heap.cap * sizeof(u16), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (seen == MAP_FAILED) {
    eval_fatal("hvm4g: ", "cannot reserve the normalizer's seen set");
  }
  s->seen       = seen;
  s->seen_words = RT->heap.cap;
  s->seen_dirty = calloc(RT->heap.cap / SEEN_PAGE_WORDS + 1, 1);
  if (!s->seen_dirty) {
    eval_fatal("hvm4g: ", "cannot reserve the normalizer's seen set");
  }
  s->unscoped = parse_unscoped();
  pool_init(RT->cpu->conf.threads, eval_workers(), RT->cpu->conf.sparks, snf_task, eval_spark);
  u32 n = pool_size();
  s->jobs     = calloc(MAX_JOBS, sizeof(Job));
  s->job_free = calloc(MAX_JOBS, sizeof(u32));
  s->counts   = aligned_alloc(64, (size_t)MAX_JOBS * n * sizeof(Count));
  s->workers  = aligned_alloc(64, n * sizeof(SnfWorker));
  if (!s->jobs || !s->job_free || !s->counts || !s->workers) {
    eval_fatal("hvm4g: ", "out of memory");
  }
  memset(s->workers, 0, n * sizeof(SnfWorker));
  s->nworkers = n;
  Count *cnt  = s->counts;
  for (u32 j = 0; j < MAX_JOBS; j++) {
    s->jobs[j].cnt = cnt + (size_t)j * n;
    s->job_free[j] = MAX_JOBS - 1 - j;
  }
  s->job_nfree = MAX_JOBS;
}

void snf_close(void) {
  Snf *s = me();
  for (u32 j = 0; s->jobs && j < MAX_JOBS; j++) {
    free(s->jobs[j].dups);
    free(s->jobs[j].left);
  }
  for (u32 i = 0; s->workers && i < s->nworkers; i++) {
    free(s->workers[i].ss);
    free(s->workers[i].chain);
  }
  if (s->seen) munmap((void *)s->seen, s->seen_words * sizeof(u16));
  free(s->seen_dirty);
  free(s->jobs);
  free(s->job_free);
  free(s->counts);
  free(s->workers);
  free(s->left);
  free(s->rereads);
  s->rereads  = NULL; s->rereads_cap = 0; s->rereads_len = 0;
  s->seen     = NULL; s->seen_dirty = NULL; s->jobs = NULL; s->job_free = NULL;
  s->counts   = NULL; s->workers    = NULL; s->left = NULL;
  s->nworkers = 0;    s->nleft      = 0;    s->job_nfree = 0;
}

int snf_at_until(u32 loc, int (*yield)(void)) {
  pool_resume();
  if (pool_size() <= 1 || RT->cpu->conf.debug || me()->unscoped || eval_lazy()) {
    snf_at(loc);
    return 0;
  }
  return snf_par(eval_self(), loc, yield);
}

void snf_at(u32 loc) {
  Wnf *w = eval_self();
  Snf *s = me();
  if (RT->cpu->conf.debug && step_begin(loc)) {
    snf_seq(w, loc, epoch_new(s));
    step_end();
    return;
  }
  pool_resume();
  if (pool_size() > 1 && !s->unscoped && !eval_lazy()) {
    snf_par(w, loc, NULL);
  } else {
    snf_seq(w, loc, epoch_new(s));
  }
}
