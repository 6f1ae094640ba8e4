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
// cnf walks the term with an explicit stack (no C recursion). Collapse runs
// on CPU thread 0 in the single-thread order, so the output is the same for
// any -T; WNF inside it may still call %nf on the pool.

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

static CFrame *CS     = NULL;
static u32     CS_CAP = 0;

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
  u32  sp = 0;
  Term res;
  descend:
  for (;;) {
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
  while (sp > 0) {
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

static void q_push(u32 key, u64 task) {
  if (key >= KEYS) key = KEYS - 1;
  Bucket *b = &Q[key];
  if (b->tail - b->head == b->cap) {
    u64  cap = b->cap ? b->cap * 2 : 256;
    u64 *nb  = malloc(cap * sizeof(u64));
    if (!nb) {
      fprintf(stderr, "Error: out of memory in collapse\n");
      exit(1);
    }
    for (u64 i = b->head; i < b->tail; i++) {
      nb[i - b->head] = b->buf[i & (b->cap - 1)];
    }
    free(b->buf);
    b->tail -= b->head; b->head = 0;
    b->buf = nb; b->cap = cap;
  }
  b->buf[b->tail++ & (b->cap - 1)] = task;
  Q_MASK |= 1ull << key;
}

static int q_pop(u32 *key, u64 *task) {
  while (Q_MASK) {
    u32 k = (u32)__builtin_ctzll(Q_MASK);
    Bucket *b = &Q[k];
    if (b->head == b->tail) {
      Q_MASK &= ~(1ull << k);
      continue;
    }
    *key  = k;
    *task = b->buf[b->head++ & (b->cap - 1)];
    return 1;
  }
  return 0;
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

// Collapses the branch at `loc` until it is printed, dropped (ERA) or split
// into two queued branches (SUP).
static void branch(Wnf *w, u32 key, u32 loc) {
  for (;;) {
    Term t = cnf(w, HEAP[loc], 0);
    HEAP[loc] = t;
    switch (TAG(t)) {
      case INC: {
        loc = VAL(t);
        HEAP[loc] = cnf(w, HEAP[loc], 0);
        if (key > 0) key--;
        continue;
      }
      case SUP: {
        u32 s = VAL(t);
        q_push(key + 1, ((u64)(s + 1) << 32) | s);
        return;
      }
      case ERA: {
        return;
      }
      default: {
        if (PRINTED++ < LIMIT && !EVAL.silent) {
          print_quoted(stdout, t);
          if (EVAL.stats) {
            printf(" \033[2m#%llu\033[0m", (unsigned long long)eval_itrs());
          }
          putchar('\n');
        }
        return;
      }
    }
  }
}

void eval_collapse(u32 loc, long long limit) {
  if (limit == 0) return;
  Wnf *w = eval_worker(0);
  LIMIT   = limit < 0 ? ~0ull : (u64)limit;
  PRINTED = 0;
  q_push(0, loc);
  u32 key;
  u64 task;
  while (PRINTED < LIMIT && q_pop(&key, &task)) {
    u32 l0 = (u32)task, l1 = (u32)(task >> 32);
    if (l0) branch(w, key, l0);
    if (l1) branch(w, key, l1);
  }
  q_free();
  fflush(stdout);
}
