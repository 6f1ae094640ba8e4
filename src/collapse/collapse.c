// collapse.c: `-C` / `-CN`, the collapsed normal form (HVM4's collapser).
//
// One collapse step, cnf(t), takes t to WNF and, if a SUP lies anywhere in
// the result, brings the first one it finds up to the root; it does not go
// into the two branches that SUP creates. So its answer is a SUP, ERA or INC
// at the root, or a term free of all three. Lambdas are quoted on the way
// down (the variable becomes BJV(level), the LAM takes the level in its
// EXT), which lets DUP-NAM copy a dup of that variable away. An ERA erases
// the term around it; of a RED only the right side is kept.
//
// The enumerator keeps branches in a queue of 64 key buckets, lower keys
// first, FIFO within a key: a SUP's two sides go in at key+1, an INC (↑)
// lowers the key of what it wraps. A branch with neither is printed. Being
// lazy, it works on infinite superpositions (enum_* tests).
//
// cnf walks the term with an explicit stack (no C recursion).
//
// -T N (collapse_par.c): the calling thread uses branches in the same
// order as the single-thread loop here, while the pool collapses ahead of
// it the branches it has queued; branches are independent, and the DUPs
// they share are taken atomically (DUP_SHARED). The output is thus the same
// for any -T; only work past the limit is wasted. Both use cnf and the
// branch steps below, and allocate through collapse_mem.c (collapse_in.h).

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include "cpu/eval.h"
#include "collapse/collapse.h"
#include "collapse/collapse_in.h"
#include "heap/heap.h"
#include "lang/print.h"
#include "heap/rt.h"
#include "cpu/cpu_rt.h"
#include "collapse/collapse_rt.h"
#include "cpu/pool.h"
#include "cpu/snf.h"

// cnf's explicit stack
// ====================

typedef struct CFrame {
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

// Each thread's own (ColThread, collapse_in.h), re-entrant: a %nf inside
// cnf may run another branch's cnf on this thread (pool work), which
// stacks its frames above cs_sp.
u32  collapse_mark(void)   { return col_thread()->cs_sp; }
void collapse_reset(u32 sp) { col_thread()->cs_sp = sp; }

static void cs_grow(ColThread *th, u32 need) {
  if (need > th->cs_cap) th->cs = collapse_grow(th->cs, &th->cs_cap, need, sizeof(CFrame));
}

// Children cnf visits; 0 for leaves and for what it never enters.
static u32 cnf_arity(Term t) {
  u32 tag = TAG(t);
  return tag == LAM || tag == INC || tag == SUP || tag == RED ? 0 : term_arity(t);
}

// Rebuilds a node whose child `sup` is a SUP as SUP(node0, node1): node0
// reuses the node's own words, node1 is fresh; the other children are cloned
// with the SUP's label.
static Term cnf_lift(Wnf *w, CFrame *f) {
  u32  tag = TAG(f->term), ext = EXT(f->term);
  u32  loc = f->loc, ari = f->ari;
  Term sup = RT->heap.at[loc + (u32)f->sup];
  u32  lab = EXT(sup);
  Term a   = RT->heap.at[VAL(sup) + 0];
  Term b   = RT->heap.at[VAL(sup) + 1];
  u32  n1  = eval_alloc(w, ari);
  for (u32 i = 0; i < ari; i++) {
    if ((int)i == f->sup) {
      RT->heap.at[loc + i] = a;
      RT->heap.at[n1 + i]  = b;
    } else {
      u32 c = eval_alloc(w, 1);
      RT->heap.at[c]       = RT->heap.at[loc + i];
      RT->heap.at[loc + i] = TERM(DP0, lab, c);
      RT->heap.at[n1 + i]  = TERM(DP1, lab, c);
    }
  }
  u32 s = eval_alloc(w, 2);
  RT->heap.at[s + 0] = TERM(tag, ext, loc);
  RT->heap.at[s + 1] = TERM(tag, ext, n1);
  return TERM(SUP, lab, s);
}

// Finishes a quoted LAM of `level` whose collapsed body is `body`.
static Term cnf_lam(Wnf *w, u32 level, Term body) {
  u32 bl = eval_alloc(w, 1);
  RT->heap.at[bl] = body;
  Term lam = TERM(LAM, level, bl);
  switch (TAG(body)) {
    case ERA: {
      return body;
    }
    case INC: {
      // ↑ moves above the lambda: λx.↑t  ~>  ↑λx.t
      RT->heap.at[bl] = RT->heap.at[VAL(body)];
      u32 il = eval_alloc(w, 1);
      RT->heap.at[il] = lam;
      return TERM(INC, 0, il);
    }
    case SUP: {
      u32 l0 = eval_alloc(w, 1), l1 = eval_alloc(w, 1);
      RT->heap.at[l0] = RT->heap.at[VAL(body) + 0];
      RT->heap.at[l1] = RT->heap.at[VAL(body) + 1];
      u32 s = eval_alloc(w, 2);
      RT->heap.at[s + 0] = TERM(LAM, level, l0);
      RT->heap.at[s + 1] = TERM(LAM, level, l1);
      return TERM(SUP, EXT(body), s);
    }
    default: {
      return lam;
    }
  }
}

// Whether a stuck DP0/DP1 of label `lab` is one of the DUPs the core makes
// to share the argument of a RED between its sides (wnf_red_share, wnf.h:
// labels counted down from the top of the label space, the count in heap
// word 0). Such a DUP stands for its value on both sides, and its DP0 only
// ever sits in a RED's left side, which cnf drops: cnf shares the value.
static int red_share(u32 lab) {
  u64 n = __atomic_load_n(&RT->heap.at[0], __ATOMIC_ACQUIRE);
  return (u64)lab + n > EXT_MASK;
}

// Copied lazily (after a DUP was met again), a DUP that holds one of its
// own copies unrolls into a branch without end, each turn through fresh
// slots (nothing is read again, as the normal form's walk counts). cnf
// then goes ever deeper: from this depth on, and again at each doubling,
// it asks whether the term left reaches itself so (print_cyclic), and ends
// with the error the normal form gives. The checks cost at most the term's
// size each, and no check runs above this depth or without the lazy core.
#define CNF_CYCLE_DEPTH 4096u

// cnf of `t` at binder depth `depth`. A reduction that stopped at an
// effect held (eval_hold_effects: a branch collapsed ahead) is left as it
// is, a leaf, and *held set: lifting a SUP out of it (%gnf(&A{..})) would
// change when its effects run; the one-thread order collapses it later.
static Term cnf(Wnf *w, Term t, u32 depth, int *held) {
  ColThread *th = col_thread();
  u32  base = th->cs_sp;
  u32  sp   = base;
  u32  deep = eval_lazy() ? CNF_CYCLE_DEPTH : ~0u;
  Term res;
  descend:
  for (;;) {
    th->cs_sp = sp;
    t = eval_wnf(w, t);
    if (eval_held_stop()) {
      *held = 1;
      res   = t;
      break;
    }
    u32 tag = TAG(t);
    if (tag == RED) {
      t = RT->heap.at[VAL(t) + 1];
      continue;
    }
    if ((tag == DP0 || tag == DP1) && red_share(EXT(t))) {
      // stuck: resolve it to its value (BUSY: another thread has it now)
      Term v = __atomic_load_n(&RT->heap.at[VAL(t)], __ATOMIC_ACQUIRE);
      if (v != BUSY && !IS_SUB(v)) {
        __atomic_compare_exchange_n(&RT->heap.at[VAL(t)], &v, AS_SUB(v), 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
      }
      continue;
    }
    if (tag == LAM) {
      u32 lvl  = depth + 1;
      u32 loc  = VAL(t);
      Term bod = RT->heap.at[loc];
      RT->heap.at[loc] = AS_SUB(TERM(BJV, 0, lvl));
      cs_grow(th, sp + 1);
      th->cs[sp++] = (CFrame){ t, loc, 1, 0, -1, lvl, CF_LAMB };
      t = bod;
      depth = lvl;
      continue;
    }
    u32 ari = cnf_arity(t);
    if (ari == 0) {
      res = t;
      break;
    }
    if (sp - base >= deep) {
      deep = deep < 0x80000000u ? deep * 2 : ~0u;
      if (print_cyclic(t)) eval_die(SNF_INFINITE);
    }
    cs_grow(th, sp + 1);
    th->cs[sp++] = (CFrame){ t, VAL(t), ari, 0, -1, depth, CF_NODE };
    t = RT->heap.at[VAL(t)];
  }
  // ascend: hand `res` to the frame above
  while (sp > base) {
    CFrame *f = &th->cs[sp - 1];
    if (f->kind == CF_LAMB) {
      sp--;
      res = cnf_lam(w, f->depth, res);
      continue;
    }
    RT->heap.at[f->loc + f->i] = res;
    if (*held) {
      // the children after a held effect, and a SUP before it, wait for
      // the one-thread order: lifting it now would run that effect in
      // each of the SUP's branches, after lines printed meanwhile
      sp--;
      res = f->term;
      continue;
    }
    if (TAG(res) == ERA) {
      sp--;
      continue;
    }
    if (f->sup < 0 && TAG(res) == SUP) {
      f->sup = (int)f->i;
    }
    if (++f->i < f->ari) {
      t     = RT->heap.at[f->loc + f->i];
      depth = f->depth;
      goto descend;
    }
    sp--;
    res = f->sup < 0 ? f->term : cnf_lift(w, f);
  }
  th->cs_sp = base;
  return res;
}

// Branch queue
// ============
// 64 FIFO buckets of tasks; a task is two locations (the sides of a SUP).


// Doubles a full bucket's ring: task i was at i mod the old size, and
// moves up by it if it is not at i mod the new one.
static void q_grow(ColBucket *b) {
  u64 old = b->cap;
  b->buf  = collapse_grow(b->buf, &b->cap, old + 1, sizeof(u64));
  for (u64 i = b->head; i < b->tail; i++) {
    if (i & old) b->buf[i & (b->cap - 1)] = b->buf[i & (old - 1)];
  }
}

static void q_push(ColRt *c, u32 key, u64 task) {
  if (key >= KEYS) key = KEYS - 1;
  ColBucket *b = &c->q[key];
  if (b->tail - b->head == b->cap) q_grow(b);
  b->buf[b->tail++ & (b->cap - 1)] = task;
  c->q_mask |= 1ull << key;
}

// The lowest non-empty bucket (clearing the bits of empty ones); 0 if none.
static int q_low(ColRt *c, u32 *key) {
  while (c->q_mask) {
    u32 k = (u32)__builtin_ctzll(c->q_mask);
    if (c->q[k].head != c->q[k].tail) {
      *key = k;
      return 1;
    }
    c->q_mask &= ~(1ull << k);
  }
  return 0;
}

static int q_pop(ColRt *c, u32 *key, u64 *task) {
  if (!q_low(c, key)) return 0;
  ColBucket *b = &c->q[*key];
  *task = b->buf[b->head++ & (b->cap - 1)];
  return 1;
}

static void q_free(ColRt *c) {
  for (u32 k = 0; k < KEYS; k++) {
    free(c->q[k].buf);
    c->q[k] = (ColBucket){0};
  }
  c->q_mask = 0;
}

// Branches
// ========

// Collapses the branch at `loc` in place until it is an ERA, a SUP or
// neither; each INC on the way stays in the heap (RT->heap.at[loc] = ↑ the rest).
// 1: effects were held, and the branch is to be collapsed again.
int collapse_branch(Wnf *w, u32 loc) {
  int held = 0;
  for (;;) {
    Term t = cnf(w, RT->heap.at[loc], 0, &held);
    RT->heap.at[loc] = t;
    if (held || TAG(t) != INC) return held;
    loc = VAL(t);
  }
}

// Key `key` lowered by n INCs.
static u32 key_down(u32 key, u32 n) {
  return key > n ? key - n : 0;
}

// The key a SUP's sides go to, from a branch at `key` under `incs` INCs.
u32 collapse_key(u32 key, u32 incs) {
  u32 k = key_down(key, incs) + 1;
  return k < KEYS ? k : KEYS - 1;
}

// The collapsed branch at loc: the term under its INCs, and how many.
Term collapse_read(u32 loc, u32 *incs) {
  Term t = RT->heap.at[loc];
  *incs  = 0;
  while (TAG(t) == INC) {
    t = RT->heap.at[VAL(t)];
    ++*incs;
  }
  return t;
}

void collapse_set_out(FILE *out, int color) {
  RT->col->out   = out;
  RT->col->color = color;
}

void collapse_set_line_check(CollapseLineCheck check) {
  RT->col->line_check = check;
}

// t's line written to line_out, passed to line_check, then to out if it
// says so: 1 when it was printed.
static int line_checked(ColRt *c, Term t) {
  if (!c->line_out && !(c->line_out = open_memstream(&c->line_text, &c->line_size))) {
    eval_die("out of memory printing a line");
  }
  rewind(c->line_out);
  print_quoted(c->line_out, t);
  off_t n = ftello(c->line_out);
  if (fflush(c->line_out) != 0 || n < 0) eval_die("out of memory printing a line");
  if (!c->line_check(c->line_text, (size_t)n)) return 0;
  fwrite(c->line_text, 1, (size_t)n, c->out);
  return 1;
}

static void out_check(ColRt *c) {
  if (c->out == stdout) {
    eval_out_check();
  } else if (fflush(c->out) != 0 || ferror(c->out)) {
    eval_fatal("hvm4g: ", "cannot write the output");
  }
}

// Consumes a collapsed branch (a SUP, an ERA or a quoted term): prints it,
// unless it is an ERA or a SUP (then returns 1: the caller queues its sides
// one key above the branch's).
int collapse_use(Term t) {
  switch (TAG(t)) {
    case SUP: {
      return 1;
    }
    case ERA: {
      return 0;
    }
    default: {
      ColRt *c = RT->col;
      if (c->printed++ < c->limit && !RT->cpu->conf.silent) {
        if (!c->line_check) {
          print_quoted(c->out, t);
        } else if (!line_checked(c, t)) {
          return 0;
        }
        if (RT->cpu->conf.stats) {
          const char *on = c->color ? "\033[2m" : "", *off = c->color ? "\033[0m" : "";
          fprintf(c->out, " %s#%llu%s", on, (unsigned long long)eval_itrs(), off);
        }
        fputc('\n', c->out);
        if (ferror(c->out)) out_check(c);   // an endless -C stops too
      }
      return 0;
    }
  }
}

static void collapse_seq(ColRt *c, Wnf *w) {
  u32 key;
  u64 task;
  while (c->printed < c->limit && q_pop(c, &key, &task)) {
    for (u32 j = 0; j < 2; j++) {
      u32 loc = j ? (u32)(task >> 32) : (u32)task;
      if (!loc) continue;
      collapse_branch(w, loc);
      u32  incs;
      Term t = collapse_read(loc, &incs);
      if (collapse_use(t)) {
        u32 s = VAL(t);
        q_push(c, collapse_key(key, incs), ((u64)(s + 1) << 32) | s);
      }
    }
  }
}

void collapse_print(u32 loc, long long limit) {
  ColRt *c = RT->col;
  if (!c->out) c->out = stdout;
  if (limit == 0) return;
  c->limit   = limit < 0 ? ~0ull : (u64)limit;
  c->printed = 0;
  // What a collapse an error left keeps nothing: its pool work joined, its
  // queue and stacks emptied.
  collapse_par_join();
  q_free(c);
  u32 threads = RT->cpu->conf.threads, tid = pool_tid();
  if (pool_size() > threads) threads = pool_size();
  collapse_threads(c, tid >= threads ? tid + 1 : threads);
  if (RT->cpu->conf.threads > 1 && !eval_lazy()) {
    collapse_par(eval_self(), loc);
  } else {
    q_push(c, 0, loc);
    collapse_seq(c, eval_worker(0));
    q_free(c);
  }
  out_check(c);
}

// The part
// ========

int collapse_rt_open(void) {
  collapse_par_open(&RT->col->par);
  return 0;
}

// Every collapse's work is joined first (the pool's threads are still
// there: cpu/ closes after this layer).
void collapse_rt_close(void) {
  ColRt *c = RT->col;
  collapse_stop();
  collapse_par_close(&c->par);
  q_free(c);
  for (u32 i = 0; i < c->thr_n; i++) free(c->thr[i].cs);
  free(c->thr);
  c->thr   = NULL;
  c->thr_n = 0;
  if (c->line_out) fclose(c->line_out);
  free(c->line_text);
  c->line_out  = NULL;
  c->line_text = NULL;
}
