// prim.c: the host primitives, which the WNF core hands to the CPU driver
// (WNF_HOST): %log, %nf and %gnf.
//
// %log(s) forces the string s (a list of #Chr{#n}) head first. The prefix
// read so far is kept as a heap function acc = λt.(#Con{#Chr{#n}, ..t}), as
// HVM4 keeps it, so that the interaction counts equal HVM4's: printing
// applies acc to #Nil (one APP-LAM per character, plus one), and a
// superposition met on the way splits the call, each side a %log of a clone
// of acc applied to that side (the rest of the list cloned with the SUP's
// label); an erasure yields &{}; a ↑ moves above the call.

#include <stdio.h>
#include <stdlib.h>
#include "run/prim.h"
#include "run/effects.h"
#include "run/sched.h"
#include "cpu/eval.h"
#include "cpu/snf.h"
#include "heap/heap.h"
#include "lang/names.h"
#include "lang/print.h"

static Term ctr(Wnf *w, u32 nick, u32 ari, const Term *args) {
  if (ari == 0) return TERM(C00, nick, 0);
  u32 loc = eval_alloc(w, ari);
  for (u32 i = 0; i < ari; i++) HEAP[loc + i] = args[i];
  return TERM(C00 + ari, nick, loc);
}

static Term chr_con(Wnf *w, Term code, Term tail) {
  Term chr = ctr(w, NICK_CHR, 1, &code);
  Term ht[2] = { chr, tail };
  return ctr(w, NICK_CON, 2, ht);
}

static Term app(Wnf *w, Term f, Term x) {
  u32 loc = eval_alloc(w, 2);
  HEAP[loc + 0] = f;
  HEAP[loc + 1] = x;
  return TERM(APP, 0, loc);
}

static Term log_new(Wnf *w, Term arg) {
  u32 loc = eval_alloc(w, 1);
  HEAP[loc] = arg;
  return TERM(PRI, PRIM_LOG, loc);
}

// λt.(acc #Con{#Chr{code}, t})
static Term acc_cons(Wnf *w, Term acc, Term code) {
  u32 lam = eval_alloc(w, 1);
  HEAP[lam] = app(w, acc, chr_con(w, code, TERM(VAR, 0, lam)));
  return TERM(LAM, 0, lam);
}

// ! K &lab = t: writes the two copies to k.
static void clone(Wnf *w, u32 lab, Term t, Term k[2]) {
  u32 loc = eval_alloc(w, 1);
  HEAP[loc] = t;
  k[0] = TERM(DP0, lab, loc);
  k[1] = TERM(DP1, lab, loc);
}

// The result when the list's cell, head or code is ↑x or &L{x,y}: %log of
// acc applied to x (and y), which go back in place of the rest of the list
// (hole == 0), or, as HVM4 does for both the head and its code point, as
// #Chr{x} followed by `tail` (hole == 1).
static Term log_split(Wnf *w, Term acc, Term got, int hole, Term tail) {
  if (TAG(got) == INC) {
    u32  il  = VAL(got);
    Term x   = HEAP[il];
    Term rst = hole ? chr_con(w, x, tail) : x;
    HEAP[il] = log_new(w, app(w, acc, rst));
    return TERM(INC, 0, il);
  }
  u32  lab = EXT(got);
  Term x   = HEAP[VAL(got) + 0];
  Term y   = HEAP[VAL(got) + 1];
  Term a[2];
  clone(w, lab, acc, a);
  Term r0  = x, r1 = y;
  if (hole) {
    Term t[2];
    clone(w, lab, tail, t);
    r0 = chr_con(w, x, t[0]);
    r1 = chr_con(w, y, t[1]);
  }
  u32 s = eval_alloc(w, 2);
  HEAP[s + 0] = log_new(w, app(w, a[0], r0));
  HEAP[s + 1] = log_new(w, app(w, a[1], r1));
  return TERM(SUP, lab, s);
}

// Prints the string (acc #Nil), which holds only known characters, as one
// whole line.
static void log_print(Wnf *w, Term acc) {
  EffectLine line = {0};
  Term cur = eval_wnf(w, app(w, acc, TERM(C00, NICK_NIL, 0)));
  while (TAG(cur) == C00 + 2 && EXT(cur) == NICK_CON) {
    Term head = eval_wnf(w, HEAP[VAL(cur) + 0]);
    Term code = eval_wnf(w, HEAP[VAL(head)]);
    char b[4];
    effect_line_put(&line, b, utf8_encode(VAL(code), b));
    cur = eval_wnf(w, HEAP[VAL(cur) + 1]);
  }
  effect_line_write(&line);
}

static Term prim_log(Wnf *w, Term pri) {
  u32  id   = eval_alloc(w, 1);
  Term acc  = TERM(LAM, 0, id);   // λt.t
  Term list = HEAP[VAL(pri)];
  HEAP[id]  = TERM(VAR, 0, id);
  for (;;) {
    list = eval_wnf(w, list);
    u32 tag = TAG(list);
    if (tag == ERA) return list;
    if (tag == INC || tag == SUP) return log_split(w, acc, list, 0, 0);
    if (tag == C00 && EXT(list) == NICK_NIL) {
      log_print(w, acc);
      return TERM(C00, NICK_NIL, 0);
    }
    if (!(tag == C00 + 2 && EXT(list) == NICK_CON)) {
      eval_die("%log expected a string list");
    }
    Term head = eval_wnf(w, HEAP[VAL(list) + 0]);
    Term tail = HEAP[VAL(list) + 1];
    u32  ht   = TAG(head);
    if (ht == ERA) return head;
    if (ht == INC || ht == SUP) return log_split(w, acc, head, 1, tail);
    if (!(ht == C00 + 1 && EXT(head) == NICK_CHR)) {
      eval_die("%log expected #Chr head");
    }
    Term code = eval_wnf(w, HEAP[VAL(head)]);
    u32  ct   = TAG(code);
    if (ct == ERA) return code;
    if (ct == INC || ct == SUP) return log_split(w, acc, code, 1, tail);
    if (ct != NUM) {
      eval_die("%log expected a numeric codepoint");
    }
    acc  = acc_cons(w, acc, code);
    list = tail;
  }
}

// Nested %nf/%gnf recurse on the C stack (each runs a normal form that may
// meet another): past the thread's stack, less a margin for one more level,
// a runtime error instead of a crash (millions of nested levels overflowed
// it; tests/run.sh, cli nf_nested_deep).
static _Thread_local uintptr_t NF_STACK_LO = 0;   // 1: unknown, no check

static void nf_stack_check(void) {
  char here;
  if (NF_STACK_LO == 0) {
    NF_STACK_LO = stack_floor((uintptr_t)1 << 20);
    if (NF_STACK_LO == 0) NF_STACK_LO = 1;
  }
  if ((uintptr_t)&here < NF_STACK_LO) {
    eval_die("%nf/%gnf nested too deeply (out of stack)");
  }
}

// Strong normal form of `t` in a fresh slot: %nf on the CPU, %gnf where
// the scheduler puts it.
static Term prim_nf(Wnf *w, Term pri, int dev) {
  nf_stack_check();
  u32 slot = eval_alloc(w, 1);
  HEAP[slot] = HEAP[VAL(pri)];
  if (dev) {
    sched_gnf(slot);
  } else {
    snf_at(slot);
  }
  return HEAP[slot];
}

Term prim_host(Wnf *w, Term pri) {
  switch (EXT(pri)) {
    case PRIM_LOG: {
      // one host step: -D's budget of one interaction must not cut it short
      u64  budget = w->budget;
      w->budget = ~0ull;
      Term r = prim_log(w, pri);
      w->budget = budget;
      return r;
    }
    case PRIM_NF:  return prim_nf(w, pri, 0);
    case PRIM_GNF: return prim_nf(w, pri, 1);
    default: {
      const char *name = prim_name(EXT(pri));
      char msg[128];
      snprintf(msg, sizeof msg, "unknown primitive '%%%s'", name ? name : "?");
      eval_die(msg);
      return 0;
    }
  }
}
