// collapse.c: `-C` / `-CN`, the collapsed normal form (HVM4's collapser).
//
// cnf(t) reduces t to WNF and lifts the first SUP found in it to the top,
// without entering the branches: the result is a SUP, an ERA or an INC at the
// root, or a term with none of them anywhere. On the way it quotes: a LAM's
// variable becomes BJV(level) and the LAM a quoted LAM (EXT = level), so a
// DUP of that variable is copied away by DUP-NAM. ERA propagates upward, RED
// keeps its right side.
//
// The enumerator keeps branches in a queue of 64 key buckets, lower keys
// first, FIFO within a key: a SUP's two sides go in at key+1, an INC (↑)
// lowers the key of what it wraps. A branch with neither is printed. Being
// lazy, it works on infinite superpositions (enum_* tests).
//
// cnf walks the term with an explicit stack (no C recursion).
//
// -T N: the queue is worked in waves. A wave is up to max pairs taken from
// the head of the lowest bucket, the pairs the single-thread loop would pop
// next; their branches are collapsed at once on the pool (DUPs they share are
// taken atomically, DUP_SHARED), and consumed on this thread in queue order,
// each pair once both its branches are done: push, print, count. Meanwhile
// the pool already collapses the next wave of the same bucket. A branch whose
// INCs send its sides below the wave's key would be popped before the rest
// of the wave by the sequential loop, so the rest (and the next wave) goes
// back to the head of its bucket, already collapsed. Branches collapsed
// ahead keep their errors until consumed and are stopped at the limit. The
// output is thus the same for any -T; only work past the limit is wasted.

#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include "eval.h"
#include "heap.h"
#include "print.h"

// cnf's explicit stack
// ====================

typedef struct {
  Term term;   // the node (NODE) or the original LAM (LAMB)
  u32  loc;    // node location
  u32  ari;    // children
  u32  i;      // child being collapsed
  int  sup;    // first child that became a SUP, or -1
  u32  depth;  // binder depth at this node (LAMB: its level)
  u32  kind;
} CFrame;

#define CF_NODE 0
#define CF_LAMB 1

// Per thread, re-entrant: a %nf inside cnf may run another branch's cnf on
// this thread (pool work), which stacks its frames above CS_SP.
static _Thread_local CFrame *CS     = NULL;
static _Thread_local u32     CS_CAP = 0;
static _Thread_local u32     CS_SP  = 0;

static void cs_grow(u32 need) {
  if (need <= CS_CAP) return;
  u32 cap = CS_CAP ? CS_CAP * 2 : 1024;
  while (cap < need) cap *= 2;
  CFrame *ns = realloc(CS, (size_t)cap * sizeof(CFrame));
  if (!ns) {
    fprintf(stderr, "Error: out of memory in collapse\n");
    exit(1);
  }
  CS = ns; CS_CAP = cap;
}

// Children cnf visits; 0 for leaves and for what it never enters.
static u32 cnf_arity(Term t) {
  u32 tag = TAG(t);
  if (IS_CTR(tag)) return CTR_ARITY(tag);
  switch (tag) {
    case APP: case DRY: case MAT: case SWI: case OP2:
    case EQL: case AND: case OR:  case DUP: return 2;
    case USE: case UNS: return 1;
    case DSU: case DDU: return 3;
    case PRI: return PRIM_ARITY(EXT(t));
    default:  return 0;
  }
}

// Rebuilds a node whose child `sup` is a SUP as SUP(node0, node1): node0
// reuses the node's own words, node1 is fresh; the other children are cloned
// with the SUP's label.
static Term cnf_lift(Wnf *w, CFrame *f) {
  u32  tag = TAG(f->term), ext = EXT(f->term);
  u32  loc = f->loc, ari = f->ari;
  Term sup = HEAP[loc + (u32)f->sup];
  u32  lab = EXT(sup);
  Term a   = HEAP[VAL(sup) + 0];
  Term b   = HEAP[VAL(sup) + 1];
  u32  n1  = eval_alloc(w, ari);
  for (u32 i = 0; i < ari; i++) {
    if ((int)i == f->sup) {
      HEAP[loc + i] = a;
      HEAP[n1 + i]  = b;
    } else {
      u32 c = eval_alloc(w, 1);
      HEAP[c]       = HEAP[loc + i];
      HEAP[loc + i] = TERM(DP0, lab, c);
      HEAP[n1 + i]  = TERM(DP1, lab, c);
    }
  }
  u32 s = eval_alloc(w, 2);
  HEAP[s + 0] = TERM(tag, ext, loc);
  HEAP[s + 1] = TERM(tag, ext, n1);
  return TERM(SUP, lab, s);
}

// Finishes a quoted LAM of `level` whose collapsed body is `body`.
static Term cnf_lam(Wnf *w, u32 level, Term body) {
  u32 bl = eval_alloc(w, 1);
  HEAP[bl] = body;
  Term lam = TERM(LAM, level, bl);
  switch (TAG(body)) {
    case ERA: {
      return body;
    }
    case INC: {
      // ↑ moves above the lambda: λx.↑t  ~>  ↑λx.t
      HEAP[bl] = HEAP[VAL(body)];
      u32 il = eval_alloc(w, 1);
      HEAP[il] = lam;
      return TERM(INC, 0, il);
    }
    case SUP: {
      u32 l0 = eval_alloc(w, 1), l1 = eval_alloc(w, 1);
      HEAP[l0] = HEAP[VAL(body) + 0];
      HEAP[l1] = HEAP[VAL(body) + 1];
      u32 s = eval_alloc(w, 2);
      HEAP[s + 0] = TERM(LAM, level, l0);
      HEAP[s + 1] = TERM(LAM, level, l1);
      return TERM(SUP, EXT(body), s);
    }
    default: {
      return lam;
    }
  }
}

// cnf of `t` at binder depth `depth`.
static Term cnf(Wnf *w, Term t, u32 depth) {
  u32  base = CS_SP;
  u32  sp   = base;
  Term res;
  descend:
  for (;;) {
    CS_SP = sp;
    t = eval_wnf(w, t);
    u32 tag = TAG(t);
    if (tag == RED) {
      t = HEAP[VAL(t) + 1];
      continue;
    }
    if (tag == LAM) {
      u32 lvl  = depth + 1;
      u32 loc  = VAL(t);
      Term bod = HEAP[loc];
      HEAP[loc] = AS_SUB(TERM(BJV, 0, lvl));
      cs_grow(sp + 1);
      CS[sp++] = (CFrame){ t, loc, 1, 0, -1, lvl, CF_LAMB };
      t = bod;
      depth = lvl;
      continue;
    }
    u32 ari = cnf_arity(t);
    if (ari == 0) {
      res = t;
      break;
    }
    cs_grow(sp + 1);
    CS[sp++] = (CFrame){ t, VAL(t), ari, 0, -1, depth, CF_NODE };
    t = HEAP[VAL(t)];
  }
  // ascend: hand `res` to the frame above
  while (sp > base) {
    CFrame *f = &CS[sp - 1];
    if (f->kind == CF_LAMB) {
      sp--;
      res = cnf_lam(w, f->depth, res);
      continue;
    }
    HEAP[f->loc + f->i] = res;
    if (TAG(res) == ERA) {
      sp--;
      continue;
    }
    if (f->sup < 0 && TAG(res) == SUP) {
      f->sup = (int)f->i;
    }
    if (++f->i < f->ari) {
      t     = HEAP[f->loc + f->i];
      depth = f->depth;
      goto descend;
    }
    sp--;
    res = f->sup < 0 ? f->term : cnf_lift(w, f);
  }
  CS_SP = base;
  return res;
}

// Branch queue
// ============
// 64 FIFO buckets of tasks; a task is two locations (the sides of a SUP).

#define KEYS 64

typedef struct {
  u64 *buf;
  u64  head, tail, cap;   // ring: [head, tail)
} Bucket;

static Bucket Q[KEYS];
static u64    Q_MASK;     // bit k: bucket k non-empty

// Doubles a full bucket's ring (indices are taken modulo 2^64: q_unpop may
// wrap head below zero).
static void q_grow(Bucket *b) {
  u64  len = b->tail - b->head;
  u64  cap = b->cap ? b->cap * 2 : 256;
  u64 *nb  = malloc(cap * sizeof(u64));
  if (!nb) {
    fprintf(stderr, "Error: out of memory in collapse\n");
    exit(1);
  }
  for (u64 i = 0; i < len; i++) nb[i] = b->buf[(b->head + i) & (b->cap - 1)];
  free(b->buf);
  b->head = 0; b->tail = len;
  b->buf  = nb; b->cap = cap;
}

static void q_push(u32 key, u64 task) {
  if (key >= KEYS) key = KEYS - 1;
  Bucket *b = &Q[key];
  if (b->tail - b->head == b->cap) q_grow(b);
  b->buf[b->tail++ & (b->cap - 1)] = task;
  Q_MASK |= 1ull << key;
}

// The lowest non-empty bucket (clearing the bits of empty ones); 0 if none.
static int q_low(u32 *key) {
  while (Q_MASK) {
    u32 k = (u32)__builtin_ctzll(Q_MASK);
    if (Q[k].head != Q[k].tail) {
      *key = k;
      return 1;
    }
    Q_MASK &= ~(1ull << k);
  }
  return 0;
}

static int q_pop(u32 *key, u64 *task) {
  if (!q_low(key)) return 0;
  Bucket *b = &Q[*key];
  *task = b->buf[b->head++ & (b->cap - 1)];
  return 1;
}

static void q_free(void) {
  for (u32 k = 0; k < KEYS; k++) {
    free(Q[k].buf);
    Q[k] = (Bucket){0};
  }
  Q_MASK = 0;
}

// Enumeration
// ===========

static u64 PRINTED;
static u64 LIMIT;

// A collapsed branch: its term (SUP, ERA or a quoted term) and its key.
typedef struct {
  Term t;
  u32  key;
} Res;

// A wave collapses branches the single-thread loop may never reach (past
// the limit), so an error in one is kept as its result (key ERR, t the
// index in ERRS) and raised only if it is consumed.
#define ERR KEYS

static EvalCatch      *ERRS     = NULL;
static u32             ERRS_LEN = 0, ERRS_CAP = 0;
static pthread_mutex_t ERRS_LOCK = PTHREAD_MUTEX_INITIALIZER;

static Res err_keep(const EvalCatch *c) {
  pthread_mutex_lock(&ERRS_LOCK);
  if (ERRS_LEN == ERRS_CAP) {
    ERRS_CAP = ERRS_CAP ? ERRS_CAP * 2 : 16;
    ERRS     = realloc(ERRS, ERRS_CAP * sizeof(EvalCatch));
    if (!ERRS) {
      fprintf(stderr, "Error: out of memory in collapse\n");
      exit(1);
    }
  }
  u32 at = ERRS_LEN++;
  ERRS[at] = *c;
  pthread_mutex_unlock(&ERRS_LOCK);
  return (Res){ at, ERR };
}

// Collapses the branch at `loc` until it is an ERA, a SUP or neither; an INC
// lowers the key.
static Res branch_eval(Wnf *w, u32 key, u32 loc) {
  for (;;) {
    Term t = cnf(w, HEAP[loc], 0);
    HEAP[loc] = t;
    if (TAG(t) != INC) return (Res){ t, key };
    loc = VAL(t);
    HEAP[loc] = cnf(w, HEAP[loc], 0);
    if (key > 0) key--;
  }
}

// Consumes a collapsed branch: queues a SUP's sides, prints the others.
// Returns the key the sides went to, or KEYS.
static u32 branch_use(Res r) {
  if (r.key == ERR) {
    eval_rethrow(&ERRS[r.t]);
  }
  switch (TAG(r.t)) {
    case SUP: {
      u32 s = VAL(r.t);
      q_push(r.key + 1, ((u64)(s + 1) << 32) | s);
      return r.key + 1;
    }
    case ERA: {
      return KEYS;
    }
    default: {
      if (PRINTED++ < LIMIT && !EVAL.silent) {
        print_quoted(stdout, r.t);
        if (EVAL.stats) {
          printf(" \033[2m#%llu\033[0m", (unsigned long long)eval_itrs());
        }
        putchar('\n');
      }
      return KEYS;
    }
  }
}

static void collapse_seq(Wnf *w) {
  u32 key;
  u64 task;
  while (PRINTED < LIMIT && q_pop(&key, &task)) {
    u32 l0 = (u32)task, l1 = (u32)(task >> 32);
    if (l0) branch_use(branch_eval(w, key, l0));
    if (l1) branch_use(branch_eval(w, key, l1));
  }
}

// Waves (-T N)
// ============
// A queued task with DONE set is a pair already collapsed by a wave that
// stopped early: its index in DONE_RES (two results; ERA for no side).

#define DONE (1ull << 63)

static Res *DONE_RES = NULL;
static u64  DONE_LEN = 0, DONE_CAP = 0;

static u64 done_add(Res a, Res b) {
  if (DONE_LEN + 2 > DONE_CAP) {
    DONE_CAP = DONE_CAP ? DONE_CAP * 2 : 256;
    DONE_RES = realloc(DONE_RES, DONE_CAP * sizeof(Res));
    if (!DONE_RES) {
      fprintf(stderr, "Error: out of memory in collapse\n");
      exit(1);
    }
  }
  DONE_RES[DONE_LEN]     = a;
  DONE_RES[DONE_LEN + 1] = b;
  DONE_LEN += 2;
  return DONE | (DONE_LEN - 2);
}

// Puts a task back at the head of bucket `key` (it was just popped there).
static void q_unpop(u32 key, u64 task) {
  Bucket *b = &Q[key];
  if (b->tail - b->head == b->cap) q_grow(b);
  b->buf[--b->head & (b->cap - 1)] = task;
  Q_MASK |= 1ull << key;
}

typedef struct {
  u32          key;
  u32          n;
  u64         *tasks;   // the wave's pairs
  Res         *res;     // two per pair
  _Atomic u8  *ready;   // per result: set once res[i] is written
  u32          pool;    // its pool job (snf_pool_start)
  u64          itrs;    // eval_itrs() when it started
} Wave;

static void wave_job(Wnf *w, void *arg, u32 i) {
  Wave *wv   = arg;
  u64   task = wv->tasks[i / 2];
  if (task & DONE) return;
  u32 loc = i % 2 ? (u32)(task >> 32) : (u32)task;
  if (!loc) {
    wv->res[i] = (Res){ TERM(ERA, 0, 0), 0 };
  } else {
    EvalCatch  c;
    u32        sp = CS_SP;
    EvalCatch *up = eval_catch_push(&c);
    eval_ahead(1);
    if (setjmp(c.env) == 0) {
      wv->res[i] = branch_eval(w, wv->key, loc);
    } else {
      CS_SP      = sp;
      wv->res[i] = err_keep(&c);
    }
    eval_ahead(0);
    eval_catch_pop(up);
  }
  atomic_store_explicit(&wv->ready[i], 1, memory_order_release);
}

// Takes up to max pairs from the head of bucket `key` into wv and starts
// collapsing them on the pool; the results of pairs collapsed earlier
// (DONE) are copied in at once.
static void wave_start(Wave *wv, u32 key, u32 max) {
  Bucket *b = &Q[key];
  wv->key = key;
  wv->n   = 0;
  while (wv->n < max && b->head != b->tail) {
    u32 i    = 2 * wv->n;
    u64 task = b->buf[b->head++ & (b->cap - 1)];
    u8  done = (task & DONE) != 0;
    if (done) {
      u64 at = task & ~DONE;
      wv->res[i]     = DONE_RES[at];
      wv->res[i + 1] = DONE_RES[at + 1];
    }
    atomic_store_explicit(&wv->ready[i], done, memory_order_relaxed);
    atomic_store_explicit(&wv->ready[i + 1], done, memory_order_relaxed);
    wv->tasks[wv->n++] = task;
  }
  wv->itrs = eval_itrs();
  wv->pool = snf_pool_start(wave_job, wv, 2 * wv->n);
}

// Waits for a wave's last tasks; returns the interactions done meanwhile.
static u64 wave_join(Wave *wv) {
  snf_pool_join(wv->pool);
  return eval_itrs() - wv->itrs;
}

// Puts pairs [from, n) of a joined wave back at the head of its bucket.
static void wave_unpop(Wave *wv, u32 from) {
  for (u32 j = wv->n; j > from; j--) {
    q_unpop(wv->key, done_add(wv->res[2 * j - 2], wv->res[2 * j - 1]));
  }
}

// Consumes a wave in queue order, each pair as soon as both its results are
// ready (helping the pool meanwhile); returns how many pairs, fewer when the
// limit is hit or a pair sent its sides below the wave's key (the
// sequential loop would pop those first).
static u32 wave_use(Wave *wv) {
  u32 i = 0;
  while (i < wv->n && PRINTED < LIMIT) {
    while (!atomic_load_explicit(&wv->ready[2 * i], memory_order_acquire) ||
           !atomic_load_explicit(&wv->ready[2 * i + 1], memory_order_acquire)) {
      if (!snf_pool_help()) cpu_relax();
    }
    u32 k0 = branch_use(wv->res[2 * i]);
    u32 k1 = branch_use(wv->res[2 * i + 1]);
    i++;
    if (k0 < wv->key || k1 < wv->key) break;
  }
  return i;
}

// Wave sizes: from 2 pairs per thread (a search under -CN whose branches
// are costly wastes little past its limit) up to 256 per thread, doubling
// while a wave costs fewer than WAVE_ITRS interactions per thread (cheap
// branches: the pool's wake-up and the serial consume would dominate).
#define WAVE_MIN  2
#define WAVE_MAX  256
#define WAVE_ITRS 8192

// Two waves are in flight: the one being consumed, and the next pairs of
// the same bucket, which the sequential loop pops next unless the consumed
// wave sends sides to a lower bucket (then they go back, collapsed). At the
// limit, eval_stop_ahead(1) ends the collapses still running.
static void collapse_par(u32 threads) {
  u32  max = WAVE_MIN * threads;
  u32  cap = WAVE_MAX * threads;
  Wave w2[2];
  for (u32 k = 0; k < 2; k++) {
    w2[k].tasks = malloc(cap * sizeof(u64));
    w2[k].res   = malloc(2 * cap * sizeof(Res));
    w2[k].ready = malloc(2 * cap * sizeof(_Atomic u8));
    if (!w2[k].tasks || !w2[k].res || !w2[k].ready) {
      fprintf(stderr, "Error: out of memory in collapse\n");
      exit(1);
    }
  }
  Wave *cur = &w2[0], *nxt = &w2[1];
  int   live = 0;    // cur is started
  eval_stop_ahead(0);
  while (PRINTED < LIMIT && (Q_MASK || live)) {
    if (!live) {
      u32 key;
      if (!q_low(&key)) break;
      wave_start(cur, key, max);
      live = 1;
    }
    int ahead = Q[cur->key].head != Q[cur->key].tail;
    if (ahead) wave_start(nxt, cur->key, max);
    u32 used = wave_use(cur);
    if (PRINTED >= LIMIT) {
      eval_stop_ahead(1);
      wave_join(cur);
      if (ahead) wave_join(nxt);
      break;
    }
    u64 itrs = wave_join(cur);
    if (cur->n == max && itrs < (u64)WAVE_ITRS * threads && max < cap) {
      max *= 2;
    } else if (itrs > (u64)4 * WAVE_ITRS * threads && max > WAVE_MIN * threads) {
      max /= 2;
    }
    live = 0;
    if (used < cur->n) {
      // a lower bucket comes first now: what was taken waits at the head
      if (ahead) {
        wave_join(nxt);
        wave_unpop(nxt, 0);
      }
      wave_unpop(cur, used);
    } else if (ahead) {
      Wave *t = cur; cur = nxt; nxt = t;
      live = 1;
    }
    if (!Q_MASK && !live) DONE_LEN = 0;
  }
  for (u32 k = 0; k < 2; k++) {
    free(w2[k].tasks);
    free(w2[k].res);
    free(w2[k].ready);
  }
  free(DONE_RES);
  DONE_RES = NULL;
  DONE_LEN = DONE_CAP = 0;
}

void eval_collapse(u32 loc, long long limit) {
  if (limit == 0) return;
  LIMIT   = limit < 0 ? ~0ull : (u64)limit;
  PRINTED = 0;
  q_push(0, loc);
  if (EVAL.threads > 1) {
    collapse_par(EVAL.threads);
  } else {
    collapse_seq(eval_worker(0));
  }
  q_free();
  fflush(stdout);
}
