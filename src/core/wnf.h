// wnf.h: the WNF core. Reduces a term to weak normal form with an explicit
// stack, every HVM4 interaction, and a rebuild that makes early stops safe.
//
// Portable dialect (docs/architecture.md, docs/gpu.md): no goto,
// recursion, function pointers, VLAs or libc; every heap access through the
// backend's HEAP_* primitives (core.h); every function FN, or FN_COLD
// for the rare rules kept out of the hot loop (term.h). (A CUDA backend
// whose primitives are device-only defines FN as `static __device__ inline`
// before including term.h: see tests/unit/check_cuda.cu.)
//
// Shape of wnf_run: ENTER walks the head of `next`, pushing eliminators as
// frames, until a value (`whnf`) shows up; APPLY pops one frame and performs
// the interaction of that frame with `whnf`, producing either a new value
// (stay in APPLY) or a term to enter (back to ENTER). Frames are heap nodes
// the term already has (an APP frame is the APP term itself), so rebuilding
// the term on an early stop writes `cur` back into one slot per frame and
// never allocates.

#ifndef HVM4G_WNF_H
#define HVM4G_WNF_H

#include "core/core.h"
#include "core/rules.h"

// -D wants the name of each interaction: a build that defines WNF_RULES
// (cpu/step.c) records its id in Wnf.rule; the others pay nothing for it.
#ifdef WNF_RULES
#define WNF_RULE(r)    (rule = (r))
#define WNF_RULE_AT(r) (*rule = (r))
#define WNF_RULE_OUT() (w->rule = rule)
#define WNF_RULE_LOCAL u32 rule = R_NONE;   // the last interaction run
#define WNF_RULE_PARAM , THR u32 *rule
#define WNF_RULE_ARG   , &rule
#else
#define WNF_RULE(r)    ((void)0)
#define WNF_RULE_AT(r) ((void)0)
#define WNF_RULE_OUT() ((void)0)
#define WNF_RULE_LOCAL
#define WNF_RULE_PARAM
#define WNF_RULE_ARG
#endif

#if !defined(HEAP_LD) || !defined(HEAP_ST) || !defined(HEAP_XCHG) || \
    !defined(HEAP_CAS) || !defined(HEAP_REFILL)
#error "wnf.h: the backend must define HEAP_LD/ST/XCHG/CAS/REFILL first"
#endif

// Publishes the worker's interaction count. A backend whose other threads
// read the counts while it runs (the CPU pool) makes this an atomic store.
#ifndef WNF_PUT_ITRS
#define WNF_PUT_ITRS(w, n) ((w)->itrs = (n))
#endif

// Whether the WNF stack is full at depth sp. The devices compare with the
// capacity the machine holds in a register (`cap`); the CPU reads it from
// the worker at each push, which leaves gcc a register for the stack's base
// in the machine's loop (fewer instructions, measured: cpu.h).
#ifndef WNF_STACK_FULL
#define WNF_STACK_FULL(w, sp, cap) ((sp) == (cap))
#endif

// Releases a DUP slot this task holds (BUSY) with its new word, so that
// what was built before is visible to whoever reads the slot after. An
// exchange always does it; a backend whose HEAP_ST is a release store (the
// CPU's) defines this as that store, without a locked instruction.
#ifndef HEAP_PUT_HELD
#define HEAP_PUT_HELD(w, loc, t) ((void)HEAP_XCHG(w, loc, t))
#endif

// Whether the DUP slot `loc`, holding `c` (no SUB, not BUSY), is known to be
// stuck, so that its DP0/DP1 is neutral without walking down `c` again. A
// backend that remembers what its normalizer found stuck defines it (the
// CPU's: a chain of N stuck DUPs would otherwise be walked once per use).
#ifndef WNF_STUCK
#define WNF_STUCK(w, loc, c) 0
#endif

// A DUP slot another worker holds (BUSY) is loaded again up to
// HEAP_WAIT_POLLS(w) times, HEAP_PAUSE(w, loc) before each, until it is
// given back. The holder is most often reducing a small expression (a
// number a sibling also needs), and deferring costs the entry a rebuild, a
// walk down again and a pass; a backend whose workers run at once (CUDA)
// polls. Bounded, so two workers each waiting on the other's slot still
// both defer. The default polls never.
#ifndef HEAP_WAIT_POLLS
#define HEAP_WAIT_POLLS(w)  0u
#define HEAP_PAUSE(w, loc)  ((void)0)
#endif


// A lane's next step begins, running `branch` (WARP_*, core.h): only a
// backend that models warps (sim.c under --warp-model) does anything.
#ifndef WNF_WARP_STEP
#define WNF_WARP_STEP(w, branch) ((void)0)
#endif

#ifndef HEAP_LD_BOOK
#define HEAP_LD_BOOK(w, loc)   HEAP_LD(w, loc)
#endif
#ifndef HEAP_ST_NEW
#define HEAP_ST_NEW(w, loc, t) HEAP_ST(w, loc, t)
#endif


// The rules every strict position shares, inside wnf_run's frame switch,
// `tw` being the tag of the value `whnf` just reached: an ERA erases the
// node waiting on it, a SUP splits that node in two (on_sup builds them),
// a ↑ moves above it (on_inc). Each counts an interaction and ends the case.
// A frame whose SUP rule is its own handles SUP before this (on_sup unused).
#define WNF_LIFT(r_era, r_sup, on_sup, r_inc, on_inc) \
  if (tw == ERA) { itrs++; WNF_RULE(r_era); whnf = WNF_ERA; continue; }  \
  if (tw == SUP) { itrs++; WNF_RULE(r_sup); whnf = (on_sup); continue; } \
  if (tw == INC) { itrs++; WNF_RULE(r_inc); whnf = (on_inc); continue; }

// Sparks
// ======
// A binary operator needs both operands once its left one is a number, so
// while a worker reduces the left one another may reduce the right one.
// Offers are lazy: every w->offer interactions the worker looks at its
// stack, oldest frame first, for an OP2 whose right operand is work
// (wnf_worth) and offers it: the backend's WNF_OFFER(w, slot, b) may mark
// b's slot (AS_SUB(b): no operand slot holds a SUB otherwise) and publish
// it. So only operands whose left side has run a while are offered, and
// the oldest, nearest the root, first (wnf_offer_oldest). A
// worker claims a marked slot by exchanging it with BUSY (a word it finds
// unmarked it puts back), reduces it and stores its WNF back, plain. The
// offering worker, once the left operand is a value, takes its offer back
// the same way and stores it plain (WNF_TOOK_BACK), or finds BUSY and
// defers until the claimer is done. Exchanges only: the 32-bit take of
// Apple GPUs (take32.h) has no compare-and-swap on a whole word.
// Every rule that reads the right operand runs after that, so no marked or
// BUSY word leaves the node. (docs/architecture.md, "Sparks".)
#ifndef WNF_OFFER
#define WNF_OFFER(w, slot, b)  ((void)0)
#define WNF_TOOK_BACK(w, slot) ((void)0)
#endif

// Frame tags
// ==========
// A word on the WNF stack says what waits for the term being reduced. Most
// are the waiting node itself, under its own tag: APP, OP2, EQL, AND, OR,
// DSU, DDU (whose field 0 is being reduced) and DP0/DP1 (whose dup
// expression is). The waits below have no node tag to use, so they take
// tags past every term tag. `val` names the node holding what they need.

#define F_MAT  64  // a match, for its argument         val: app [mat, arg]
#define F_ARED 65  // f ~> g applied to x, for g        val: app [red, x]; red [f, g]
#define F_RMAT 66  // (f ~> match) x, for x             val: app [red, x]; red [f, mat]
#define F_RUSE 67  // (f ~> λ{u}) x, for x              val: as F_RMAT, with a USE
#define F_OP2R 68  // #n op y, for y                    ext: op; val: op2 [#n, y]
#define F_EQLR 69  // a === b, for b                    val: eql [a, b]
#define F_MREF 70  // @f x, @f a match, for x           ext: f's id; val: app [@f, x]

// Words one interaction may allocate at most (APP-RED-MAT-CTR on a C16
// needs 68). APPLY makes sure the arena has this much before each step,
// so interactions bump-allocate without checks.
#define WNF_RESERVE 128u

// Built-in constructors that EQL treats specially, by the fixed ids the
// name table gives them: CTR_SUC / CTR_CON of names.h (test_wnf checks).
#define WNF_NAM_SUC 4u  // #SUC{p}: EQL wraps the comparison in ↑
#define WNF_NAM_CON 1u  // #CON{h,t}: EQL wraps tail and whole in ↑

// Terms
// =====

// Whether reducing t is work enough to offer (a spark): a call or an
// operation; not a value, a variable, a marked or BUSY word, nor a DUP
// projection (mostly a copy of a value, and reducing one early changes the
// order in which copies meet, and with it the interaction count).
FN u32 wnf_worth(Term t) {
  if (IS_SUB(t)) {
    return 0;
  }
  switch (TAG(t)) {
    case APP: case REF: case OP2: case EQL: case AND: case OR: case PRI:
      return 1;
    default:
      return 0;
  }
}

// Offers the right operand of the oldest OP2 frame in stk[*scan, sp) that
// has work there. Frames below *scan were looked at already. A worker that
// waits for what it offered (w->offer_twice: CPU threads) offers it only
// once the frame was the one found at the offer point before (*seen, its
// node) too: its left operand has then run a whole gap, so both sides go
// on side by side. A left operand that ends sooner (a list's head before
// its tail's sum) leaves its worker waiting at once for the taker, and
// the run would only move from thread to thread.
FN_COLD void wnf_offer_oldest(THR Wnf *w, DEV Term *stk, u32 sp, THR u32 *scan, THR u32 *seen) {
  u32 i = *scan < sp ? *scan : sp;
  for (; i < sp; i++) {
    Term f = stk[i];
    if (TAG(f) == OP2) {
      Term b = HEAP_LD(w, VAL(f) + 1);
      if (wnf_worth(b)) {
        if (!w->offer_twice || *seen == VAL(f)) {
          WNF_OFFER(w, VAL(f) + 1, b);
          *seen = 0;
          i++;
        } else {
          *seen = VAL(f);
        }
        break;
      }
    }
  }
  *scan = i;
}

#define WNF_ERA TERM(ERA, 0, 0)
#define WNF_NUM(n) TERM(NUM, 0, (u32)(n))

// A template word moved by off: `off` added to its location (modulo
// 2^32), if it has one.
FN Term wnf_inst(Term t, u32 off) {
  return HAS_LOC(TAG(t)) ? ((t & ~VAL_MASK) | (Term)(u32)(VAL(t) + off)) : t;
}

// Allocation
// ==========

// Makes sure the arena holds n more words; refills it from the heap when it
// does not. 0 when the heap is exhausted.
FN u32 wnf_room(THR Wnf *w, u32 n) {
  if (w->end - w->next >= n) {
    return 1;
  }
  return HEAP_REFILL(w, n) ? 1u : 0u;
}

// n words from the arena, unchecked: callers made room first.
FN u32 wnf_bump(THR Wnf *w, u32 n) {
  u32 at  = w->next;
  w->next = at + n;
  return at;
}

// Numbers
// =======

// #a op #b (u32, wrapping; division by zero gives 0; shifts use the low 5
// bits of the amount, as x86 does).
FN u32 wnf_op(u32 op, u32 a, u32 b) {
  switch (op) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_DIV: return b ? a / b : 0u;
    case OP_MOD: return b ? a % b : 0u;
    case OP_AND: return a & b;
    case OP_OR:  return a | b;
    case OP_XOR: return a ^ b;
    case OP_LSH: return a << (b & 31u);
    case OP_RSH: return a >> (b & 31u);
    case OP_NOT: return ~b;
    case OP_EQ:  return a == b;
    case OP_NE:  return a != b;
    case OP_LT:  return a <  b;
    case OP_LE:  return a <= b;
    case OP_GT:  return a >  b;
    case OP_GE:  return a >= b;
    default:     return 0u;
  }
}

// Fields of a node that DUP-NOD copies one by one.
FN u32 wnf_nod_arity(u32 tag) {
  u32 copied = IS_CTR(tag) || tag == MAT || tag == SWI || tag == OP2 || tag == USE ||
               tag == INC || tag == DSU || tag == DDU;
  return copied ? term_arity(TERM(tag, 0, 0)) : 0;
}

FN u32 wnf_is_nam(u32 tag) {
  return tag == NAM || tag == BJV || tag == BJ0 || tag == BJ1;
}

// DUP slots
// =========

// Writes a DUP expression slot this task holds: a SUB (the interaction) or
// the expression itself (rebuild, stuck). When others may read the slot,
// it releases BUSY (HEAP_PUT_HELD).
FN void wnf_put(THR Wnf *w, u32 mode, u32 loc, Term t) {
  if (mode == DUP_SOLO) {
    HEAP_ST(w, loc, t);
  } else {
    HEAP_PUT_HELD(w, loc, t);
  }
}

// Interactions (the rarer ones, out of the main switch)
// =====================================================
// Each takes the nodes involved, performs the rewrite with bump allocation
// (room was made) and returns the resulting term. Names follow HVM4's
// docs/hvm4/interactions/*.md. Nodes consumed by an interaction are reused
// in place where the shapes fit: terms are affine, so a node reached as a
// value has no other reader.

// A clone of a number made at once: both copies get the number itself
// instead of the two sides of a new DUP slot holding it. HVM4 clones
// lazily and counts a DUP-NOD when the first copy is read; the caller
// counts that DUP-NOD now, so the counts agree unless neither copy is
// ever read. What it saves is the slot: on a device, a take and a give
// at each level of a chain of clones of clones (OP2-SUP cloning an
// operation's constant down a SUP tree, level after level). -D (step.c,
// WNF_RULES) shows HVM4's interactions one at a time: it clones lazily.
// t is the word to clone, or 0 (an APP word, never a number) where the
// caller has not read it.
#if defined(WNF_RULES) || defined(WNF_LAZY_BOOK)
#define WNF_CLONE_NOW(t) 0u
#else
#define WNF_CLONE_NOW(t) (TAG(t) == NUM)
#endif

// A call to a definition that is a match reduces its argument before
// copying the definition, then copies only the case the argument takes
// (F_MREF). -D copies it whole, as HVM4 shows it; the lazy copy
// (WNF_LAZY_BOOK) copies a node at a time anyway.
#if defined(WNF_RULES) || defined(WNF_LAZY_BOOK)
#define WNF_CASE_COPY 0
#else
#define WNF_CASE_COPY 1
#endif

// &L{x0,x1} <op> b, for the binary eliminators OP2/EQL/AND/OR with the SUP
// on the left: ! B &L = b; &L{(x0 op B₀), (x1 op B₁)}. The eliminator node
// `nd` [_, b] keeps b as the DUP slot; the SUP node becomes the left copy.
// (A number b is cloned at once by the OP2 case's lift, before this.)
FN Term wnf_bin_sup_l(THR Wnf *w, u32 tag, u32 ext, u32 nd, Term sup) {
  u32 lab = EXT(sup);
  u32 s   = VAL(sup);
  Term x1 = HEAP_LD(w, s + 1);
  u32 n   = wnf_bump(w, 4);
  HEAP_ST(w, s + 1, TERM(DP0, lab, nd + 1));
  HEAP_ST(w, n + 0, x1);
  HEAP_ST(w, n + 1, TERM(DP1, lab, nd + 1));
  HEAP_ST(w, n + 2, TERM(tag, ext, s));
  HEAP_ST(w, n + 3, TERM(tag, ext, n));
  return TERM(SUP, lab, n + 2);
}

// a <op> &L{y0,y1}, the SUP on the right: ! A &L = a; &L{(A₀ op y0),
// (A₁ op y1)}. The node `nd` [a, _] keeps a as the DUP slot. `a` is the
// node's left side as the caller read it (or 0).
FN Term wnf_bin_sup_r(THR Wnf *w, u32 tag, u32 ext, u32 nd, Term sup, Term a) {
  u32 lab = EXT(sup);
  u32 s   = VAL(sup);
  u32 now = WNF_CLONE_NOW(a);
  Term y0 = HEAP_LD(w, s + 0);
  Term y1 = HEAP_LD(w, s + 1);
  u32 n   = wnf_bump(w, 4);
  HEAP_ST(w, s + 0, now ? a : TERM(DP0, lab, nd));
  HEAP_ST(w, s + 1, y0);
  HEAP_ST(w, n + 0, now ? a : TERM(DP1, lab, nd));
  HEAP_ST(w, n + 1, y1);
  HEAP_ST(w, n + 2, TERM(tag, ext, s));
  HEAP_ST(w, n + 3, TERM(tag, ext, n));
  return TERM(SUP, lab, n + 2);
}

// ↑x <op> b / a <op> ↑y (and every other "INC passes up" rule): the node
// `nd` gets x at field `i` and goes inside the INC node.
FN Term wnf_inc_up(THR Wnf *w, u32 tag, u32 ext, u32 nd, u32 i, Term inc) {
  u32 c = VAL(inc);
  HEAP_ST(w, nd + i, HEAP_LD(w, c));
  HEAP_ST(w, c, TERM(tag, ext, nd));
  return TERM(INC, 0, c);
}

// (λ{#K:h; m} &L{a,b}) -> ! M &L = mat; &L{(M₀ a), (M₁ b)}  (APP-MAT-SUP,
// USE-SUP clones the USE the same way). `app` is the node [mat, arg].
FN Term wnf_mat_sup(THR Wnf *w, u32 app, Term mat, Term sup) {
  u32 lab = EXT(sup);
  u32 s   = VAL(sup);
  Term a  = HEAP_LD(w, s + 0);
  Term b  = HEAP_LD(w, s + 1);
  u32 n   = wnf_bump(w, 3);
  HEAP_ST(w, n + 0, mat);
  HEAP_ST(w, app + 0, TERM(DP0, lab, n));
  HEAP_ST(w, app + 1, a);
  HEAP_ST(w, n + 1, TERM(DP1, lab, n));
  HEAP_ST(w, n + 2, b);
  HEAP_ST(w, s + 0, TERM(APP, 0, app));
  HEAP_ST(w, s + 1, TERM(APP, 0, n + 1));
  return TERM(SUP, lab, s);
}

// (λ{f} &L{a,b}) -> ! F &L = f; &L{(λ{F₀} a), (λ{F₁} b)}  (USE-SUP). The
// USE node [f] becomes the DUP slot.
FN Term wnf_use_sup(THR Wnf *w, u32 app, Term use, Term sup) {
  u32 lab = EXT(sup);
  u32 s   = VAL(sup);
  u32 u   = VAL(use);
  Term a  = HEAP_LD(w, s + 0);
  Term b  = HEAP_LD(w, s + 1);
  u32 n   = wnf_bump(w, 4);
  HEAP_ST(w, n + 0, TERM(DP0, lab, u));
  HEAP_ST(w, n + 1, TERM(DP1, lab, u));
  HEAP_ST(w, app + 0, TERM(USE, 0, n + 0));
  HEAP_ST(w, app + 1, a);
  HEAP_ST(w, n + 2, TERM(USE, 0, n + 1));
  HEAP_ST(w, n + 3, b);
  HEAP_ST(w, s + 0, TERM(APP, 0, app));
  HEAP_ST(w, s + 1, TERM(APP, 0, n + 2));
  return TERM(SUP, lab, s);
}

// (#K{a..} === #K{b..}) and friends (EQL-CTR): the comparison of the fields,
// as ANDs of EQLs (SUC and CON get ↑ for collapse priority). `nd` is the
// EQL node, reused for the first comparison.
FN Term wnf_eql_ctr(THR Wnf *w, u32 nd, Term a, Term b) {
  u32 tag = TAG(a);
  if (tag != TAG(b) || EXT(a) != EXT(b)) {
    return WNF_NUM(0);
  }
  u32 ari = CTR_ARITY(tag);
  if (ari == 0) {
    return WNF_NUM(1);
  }
  u32 la = VAL(a);
  u32 lb = VAL(b);
  HEAP_ST(w, nd + 0, HEAP_LD(w, la));
  HEAP_ST(w, nd + 1, HEAP_LD(w, lb));
  Term res = TERM(EQL, 0, nd);
  if (EXT(a) == WNF_NAM_SUC && ari == 1) {
    u32 n = wnf_bump(w, 1);
    HEAP_ST(w, n, res);
    return TERM(INC, 0, n);
  }
  if (EXT(a) == WNF_NAM_CON && ari == 2) {
    u32 n = wnf_bump(w, 6);
    HEAP_ST(w, n + 0, HEAP_LD(w, la + 1));
    HEAP_ST(w, n + 1, HEAP_LD(w, lb + 1));
    HEAP_ST(w, n + 2, TERM(EQL, 0, n));
    HEAP_ST(w, n + 3, res);
    HEAP_ST(w, n + 4, TERM(INC, 0, n + 2));
    HEAP_ST(w, n + 5, TERM(AND, 0, n + 3));
    return TERM(INC, 0, n + 5);
  }
  for (u32 i = 1; i < ari; i++) {
    u32 n = wnf_bump(w, 4);
    HEAP_ST(w, n + 0, HEAP_LD(w, la + i));
    HEAP_ST(w, n + 1, HEAP_LD(w, lb + i));
    HEAP_ST(w, n + 2, res);
    HEAP_ST(w, n + 3, TERM(EQL, 0, n));
    res = TERM(AND, 0, n + 2);
  }
  return res;
}

// (x0 === y0) .&. (x1 === y1) for two binary nodes (EQL-MAT, EQL-DRY); the
// EQL node `nd` holds the first comparison.
FN Term wnf_eql_pair(THR Wnf *w, u32 nd, u32 la, u32 lb) {
  u32 n = wnf_bump(w, 4);
  HEAP_ST(w, nd + 0, HEAP_LD(w, la + 0));
  HEAP_ST(w, nd + 1, HEAP_LD(w, lb + 0));
  HEAP_ST(w, n + 0, HEAP_LD(w, la + 1));
  HEAP_ST(w, n + 1, HEAP_LD(w, lb + 1));
  HEAP_ST(w, n + 2, TERM(EQL, 0, nd));
  HEAP_ST(w, n + 3, TERM(EQL, 0, n));
  return TERM(AND, 0, n + 2);
}

// EQL on two values, neither ERA, SUP, INC (handled before): the term to
// enter next. Counts one interaction, as HVM4 does for each case.
FN_COLD Term wnf_eql(THR Wnf *w, u32 nd, Term a, Term b) {
  u32 ta = TAG(a);
  u32 tb = TAG(b);
  if (ta == ANY || tb == ANY) {
    return WNF_NUM(1);
  }
  if (ta == NUM && tb == NUM) {
    return WNF_NUM(VAL(a) == VAL(b));
  }
  if (ta == LAM && tb == LAM) {
    // Both binders become one fresh name, unique by the first lambda's
    // location (NAM val is 0 for names written by the user).
    u32 la  = VAL(a);
    u32 lb  = VAL(b);
    Term nm = TERM(NAM, la & EXT_MASK, la);
    HEAP_ST(w, nd + 0, HEAP_LD(w, la));
    HEAP_ST(w, nd + 1, HEAP_LD(w, lb));
    HEAP_ST(w, la, AS_SUB(nm));
    HEAP_ST(w, lb, AS_SUB(nm));
    return TERM(EQL, 0, nd);
  }
  if (IS_CTR(ta) && IS_CTR(tb)) {
    return wnf_eql_ctr(w, nd, a, b);
  }
  if ((ta == MAT || ta == SWI) && (tb == MAT || tb == SWI)) {
    if (EXT(a) != EXT(b)) {
      return WNF_NUM(0);
    }
    return wnf_eql_pair(w, nd, VAL(a), VAL(b));
  }
  if (ta == USE && tb == USE) {
    HEAP_ST(w, nd + 0, HEAP_LD(w, VAL(a)));
    HEAP_ST(w, nd + 1, HEAP_LD(w, VAL(b)));
    return TERM(EQL, 0, nd);
  }
  if (wnf_is_nam(ta) && wnf_is_nam(tb)) {
    return WNF_NUM(ta == tb && EXT(a) == EXT(b) && VAL(a) == VAL(b));
  }
  if (ta == DRY && tb == DRY) {
    return wnf_eql_pair(w, nd, VAL(a), VAL(b));
  }
  return WNF_NUM(0);
}

// wnf_inert's bounds, which wnf_inert_copy keeps too: pending slots of its
// depth-first walk, and words of constructor fields (the copy's 1 + 48
// words fit WNF_RESERVE beside the RED rules' own).
#define INERT_STACK 16u
#define INERT_WORDS 48u

// Whether t can never reduce nor be consumed: numbers, names, erasure, book
// refs (instantiated per use), unbound variables, and constructors of
// those (48 words at most), and a DUP's side whose value is an atom (every
// reader of it gets that same atom). Looks at 16 nodes at most.
FN u32 wnf_inert(THR Wnf *w, Term t) {
  Term stk[INERT_STACK];
  u32  sp = 0, nodes = 0, words = 0;
  stk[sp++] = t;
  while (sp > 0) {
    Term x  = stk[--sp];
    u32  tx = TAG(x);
    if (tx == NUM || tx == ERA || tx == NAM || tx == REF || tx == C00) {
      continue;
    }
    if (++nodes > 16) {
      return 0;
    }
    if (tx == DP0 || tx == DP1) {
      // a copy of a DUP's side: inert only when every reader gets the
      // same atom (a node read through it would be shared again)
      u32 tc = TAG(NO_SUB(HEAP_LD(w, VAL(x))));
      if (tc != NUM && tc != ERA && tc != NAM && tc != C00) return 0;
      continue;
    }
    if (tx == VAR) {
      Term c = HEAP_LD(w, VAL(x));
      if (!IS_SUB(c)) continue;
      if (sp == INERT_STACK) return 0;
      stk[sp++] = NO_SUB(c);
      continue;
    }
    if (!IS_CTR(tx) || sp + CTR_ARITY(tx) > INERT_STACK) {
      return 0;
    }
    words += CTR_ARITY(tx);
    if (words > INERT_WORDS) {
      return 0;
    }
    for (u32 i = 0; i < CTR_ARITY(tx); i++) {
      stk[sp++] = NO_SUB(HEAP_LD(w, VAL(x) + i));
    }
  }
  return 1;
}

// Labels of the DUPs the core makes itself: LAB_OWN and up (term.h),
// taken from the top down and cycling through that range. The count lives
// in heap word 0, which no term uses, so every thread, lane and pass shares
// it; taking one is a compare-and-swap (retried only when another thread
// took one meanwhile).
#define WNF_LAB_COUNT 0
FN u32 wnf_fresh_lab(THR Wnf *w) {
  Term old = HEAP_LD(w, WNF_LAB_COUNT);
  for (;;) {
    Term was = HEAP_CAS(w, WNF_LAB_COUNT, old, old + 1);
    if (was == old) {
      return (u32)(EXT_MASK - old % (EXT_MASK + 1 - LAB_OWN));
    }
    old = was;
  }
}

// A copy of inert x (wnf_inert: constructors over atoms, free variables
// and atom-valued DUP sides), made in the same depth-first order.
FN Term wnf_inert_copy(THR Wnf *w, Term x) {
  u32  dst[INERT_STACK];
  Term src[INERT_STACK];
  u32  sp   = 0;
  u32  used = 0;   // words of nodes copied
  u32  root = wnf_bump(w, 1);
  dst[sp] = root; src[sp] = x; sp++;
  while (sp > 0) {
    sp--;
    u32  d = dst[sp];
    Term t = src[sp];
    while (TAG(t) == VAR && IS_SUB(HEAP_LD(w, VAL(t)))) {
      t = NO_SUB(HEAP_LD(w, VAL(t)));
    }
    u32 tt = TAG(t);
    // (the walk and the words stay within wnf_inert's bounds: past them,
    // on a heap changed meanwhile, the rest is shared, not copied)
    if (!IS_CTR(tt) || CTR_ARITY(tt) == 0 || sp + CTR_ARITY(tt) > INERT_STACK ||
        used + CTR_ARITY(tt) > INERT_WORDS) {
      HEAP_ST(w, d, t);
      continue;
    }
    u32 ari = CTR_ARITY(tt);
    used += ari;
    u32 n   = wnf_bump(w, ari);
    HEAP_ST(w, d, TERM(tt, EXT(t), n));
    for (u32 i = 0; i < ari; i++) {
      dst[sp] = n + i;
      src[sp] = NO_SUB(HEAP_LD(w, VAL(t) + i));
      sp++;
    }
  }
  return HEAP_LD(w, root);
}

// RED rules hand x to both sides of the new RED. HVM4 shares it as is (its
// nodes are never updated in place: each side reduces its own view). Here
// nodes are reused and lambdas consumed as they reduce, so a shared x that
// can reduce would be corrupted for the second side: it is split by a DUP
// (a lazy copy) instead; the DUP needs a label no SUP it may meet carries
// (wnf_fresh_lab). An inert x is printed as HVM4 prints it, whole on each
// side: the second side gets its own copy. Shared, its nodes were one
// side's to reuse: DUP-NOD on that side made their fields DUP slots in
// place, so the other side printed `A₁` where HVM4 prints `a`, and which
// side got there first (threads, the device) changed the output.
FN void wnf_red_share(THR Wnf *w, Term x, THR Term *a, THR Term *b) {
  if (wnf_inert(w, x)) {
    *a = x;
    *b = wnf_inert_copy(w, x);
    return;
  }
  u32 lab = wnf_fresh_lab(w);
  u32 d   = wnf_bump(w, 1);
  HEAP_ST(w, d, x);
  *a = TERM(DP0, lab, d);
  *b = TERM(DP1, lab, d);
}

// ((f x) ~> (g x)) in the words of `app` and `red`, x split by
// wnf_red_share.
FN Term wnf_red_both(THR Wnf *w, u32 app, u32 red, Term f, Term g, Term x) {
  Term x0, x1;
  wnf_red_share(w, x, &x0, &x1);
  u32 n = wnf_bump(w, 2);
  HEAP_ST(w, n + 0, g);
  HEAP_ST(w, n + 1, x1);
  HEAP_ST(w, app + 0, f);
  HEAP_ST(w, app + 1, x0);
  HEAP_ST(w, red + 0, TERM(APP, 0, app));
  HEAP_ST(w, red + 1, TERM(APP, 0, n));
  return TERM(RED, 0, red);
}

// ((f ~> g) x) once g is a value, for the g that need no further reduction
// (F_ARED): the result, or 0 when g is MAT/SWI/USE (the caller reduces x).
// `app` is [red, x], `red` is [f, g_old]. *itrs: 1 when it interacted (a
// count of its own: the caller's stays in a register).
FN_COLD Term wnf_app_red(THR Wnf *w, THR u32 *itrs WNF_RULE_PARAM, u32 app, u32 red, Term g) {
  Term f = HEAP_LD(w, red + 0);
  Term x = HEAP_LD(w, app + 1);
  u32  tg = TAG(g);
  if (tg == ERA) {                                     // APP-RED-ERA
    *itrs += 1;
    WNF_RULE_AT(R_APP_RED_ERA);
    return WNF_ERA;
  }
  if (tg == SUP) {                                     // APP-RED-SUP
    // ! F &L = f; ! A &L = x; &L{((F₀ ~> g0) A₀), ((F₁ ~> g1) A₁)}
    *itrs += 1;
    WNF_RULE_AT(R_APP_RED_SUP);
    u32 lab = EXT(g);
    u32 s   = VAL(g);
    Term g0 = HEAP_LD(w, s + 0);
    Term g1 = HEAP_LD(w, s + 1);
    u32 n   = wnf_bump(w, 8);
    HEAP_ST(w, n + 0, TERM(DP0, lab, red));
    HEAP_ST(w, n + 1, g0);
    HEAP_ST(w, n + 2, TERM(DP1, lab, red));
    HEAP_ST(w, n + 3, g1);
    HEAP_ST(w, n + 4, TERM(RED, 0, n + 0));
    HEAP_ST(w, n + 5, TERM(DP0, lab, app + 1));
    HEAP_ST(w, n + 6, TERM(RED, 0, n + 2));
    HEAP_ST(w, n + 7, TERM(DP1, lab, app + 1));
    HEAP_ST(w, s + 0, TERM(APP, 0, n + 4));
    HEAP_ST(w, s + 1, TERM(APP, 0, n + 6));
    return TERM(SUP, lab, s);
  }
  if (tg == INC) {                                     // APP-RED-INC
    // ↑((f ~> g') x): red and app nodes go inside the INC
    *itrs += 1;
    WNF_RULE_AT(R_APP_RED_INC);
    u32 c = VAL(g);
    HEAP_ST(w, red + 1, HEAP_LD(w, c));
    HEAP_ST(w, c, TERM(APP, 0, app));
    return TERM(INC, 0, c);
  }
  if (tg == LAM) {                                     // APP-RED-LAM
    // x ← arg; (f x) ~> body  (x split: wnf_red_share)
    *itrs += 1;
    WNF_RULE_AT(R_APP_RED_LAM);
    u32 l    = VAL(g);
    Term bod = HEAP_LD(w, l);
    Term x0, x1;
    wnf_red_share(w, x, &x0, &x1);
    HEAP_ST(w, l, AS_SUB(x1));
    HEAP_ST(w, app + 0, f);
    HEAP_ST(w, app + 1, x0);
    HEAP_ST(w, red + 0, TERM(APP, 0, app));
    HEAP_ST(w, red + 1, bod);
    return TERM(RED, 0, red);
  }
  if (tg == RED) {                                     // APP-RED-RED
    // ((f x) ~> (g x))  (x split: wnf_red_share)
    *itrs += 1;
    WNF_RULE_AT(R_APP_RED_RED);
    return wnf_red_both(w, app, red, f, g, x);
  }
  if (tg == MAT || tg == SWI || tg == USE) {
    return 0;
  }
  HEAP_ST(w, red + 1, g);
  if (wnf_is_nam(tg) || tg == DRY || IS_CTR(tg)) {     // APP-RED-NAM/DRY/CTR
    *itrs += 1;
    WNF_RULE_AT(tg == DRY ? R_APP_RED_DRY : IS_CTR(tg) ? R_APP_RED_CTR : R_APP_RED_NAM);
    return TERM(DRY, 0, app);
  }
  return TERM(APP, 0, app);
}

// ((f ~> e) v), v a value, e an eliminator: a match λ{..} (MAT, SWI: F_RMAT)
// or a use λ{g} (USE: F_RUSE). Returns the term to enter. `app` is
// [red, v_old], `red` is [f, e]; e's node holds its branches (a match: the
// hit and the miss, a use: g). *itrs as for wnf_app_red.
FN_COLD Term wnf_red_elim(THR Wnf *w, THR u32 *itrs WNF_RULE_PARAM, u32 app, u32 red, Term v) {
  Term f   = HEAP_LD(w, red + 0);
  Term e   = HEAP_LD(w, red + 1);
  u32  m   = VAL(e);
  u32  tv  = TAG(v);
  u32  use = TAG(e) == USE;
  u32  br  = use ? 1 : 2;                              // e's branches
  if (tv == ERA) {                                     // APP-RED-MAT/USE-ERA
    *itrs += 1;
    WNF_RULE_AT(use ? R_APP_RED_USE_ERA : R_APP_RED_MAT_ERA);
    return WNF_ERA;
  }
  if (tv == SUP) {                                     // APP-RED-MAT/USE-SUP
    // ! F &L = f; ! E &L = e (each branch);
    // &L{((F₀ ~> E₀) a), ((F₁ ~> E₁) b)}
    *itrs += 1;
    WNF_RULE_AT(use ? R_APP_RED_USE_SUP : R_APP_RED_MAT_SUP);
    u32 lab = EXT(v);
    u32 s   = VAL(v);
    Term a  = HEAP_LD(w, s + 0);
    Term b  = HEAP_LD(w, s + 1);
    u32 n   = wnf_bump(w, 2 * br + 6);
    u32 r   = n + 2 * br;       // [F₀, E₀, F₁, E₁, app₁]
    // DUP slots: red+0 (f) and e's branches
    for (u32 i = 0; i < br; i++) {
      HEAP_ST(w, n + i,      TERM(DP0, lab, m + i));
      HEAP_ST(w, n + br + i, TERM(DP1, lab, m + i));
    }
    HEAP_ST(w, r + 0, TERM(DP0, lab, red));
    HEAP_ST(w, r + 1, TERM(TAG(e), EXT(e), n + 0));
    HEAP_ST(w, r + 2, TERM(DP1, lab, red));
    HEAP_ST(w, r + 3, TERM(TAG(e), EXT(e), n + br));
    HEAP_ST(w, app + 0, TERM(RED, 0, r + 0));
    HEAP_ST(w, app + 1, a);
    HEAP_ST(w, r + 4, TERM(RED, 0, r + 2));
    HEAP_ST(w, r + 5, b);
    HEAP_ST(w, s + 0, TERM(APP, 0, app));
    HEAP_ST(w, s + 1, TERM(APP, 0, r + 4));
    return TERM(SUP, lab, s);
  }
  if (tv == INC) {                                     // APP-RED-MAT/USE-INC
    *itrs += 1;
    WNF_RULE_AT(use ? R_APP_RED_USE_INC : R_APP_RED_MAT_INC);
    return wnf_inc_up(w, APP, 0, app, 1, v);
  }
  if (use && !wnf_is_nam(tv) && tv != DRY) {
    // (f v) ~> (g v)  (v split: wnf_red_share)          APP-RED-USE-VAL
    *itrs += 1;
    WNF_RULE_AT(R_APP_RED_USE_VAL);
    return wnf_red_both(w, app, red, f, HEAP_LD(w, m), v);
  }
  if (!use && IS_CTR(tv)) {
    *itrs += 1;
    WNF_RULE_AT(EXT(e) == EXT(v) ? R_APP_RED_MAT_CTR_MAT : R_APP_RED_MAT_CTR_MIS);
    if (EXT(e) == EXT(v)) {                            // APP-RED-MAT-CTR-MAT
      // ((λa..λz.(f #K{a..z}) ~> h) a..z)
      u32 ari = CTR_ARITY(tv);
      u32 c   = VAL(v);
      u32 n   = wnf_bump(w, 4 + 4 * ari);
      u32 lam = n + 4;        // ari lambda body slots
      u32 fld = lam + ari;    // ari fields of the new constructor
      u32 aps = fld + ari;    // ari application nodes
      for (u32 i = 0; i < ari; i++) {
        HEAP_ST(w, fld + i, TERM(VAR, 0, lam + i));
      }
      HEAP_ST(w, n + 0, f);
      HEAP_ST(w, n + 1, TERM(tv, EXT(v), ari ? fld : 0u));
      Term bod = TERM(APP, 0, n);
      for (u32 i = ari; i > 0; i--) {
        HEAP_ST(w, lam + i - 1, bod);
        bod = TERM(LAM, 0, lam + i - 1);
      }
      HEAP_ST(w, n + 2, bod);
      HEAP_ST(w, n + 3, HEAP_LD(w, m + 0));
      Term res = TERM(RED, 0, n + 2);
      for (u32 i = 0; i < ari; i++) {
        HEAP_ST(w, aps + 2 * i + 0, res);
        HEAP_ST(w, aps + 2 * i + 1, HEAP_LD(w, c + i));
        res = TERM(APP, 0, aps + 2 * i);
      }
      return res;
    }
    HEAP_ST(w, red + 1, HEAP_LD(w, m + 1));            // APP-RED-MAT-CTR-MIS
    HEAP_ST(w, app + 1, v);
    return TERM(APP, 0, app);
  }
  if (!use && tv == NUM) {
    *itrs += 1;
    WNF_RULE_AT(EXT(e) == VAL(v) ? R_APP_RED_MAT_NUM_MAT : R_APP_RED_MAT_NUM_MIS);
    if (EXT(e) == VAL(v)) {                            // APP-RED-MAT-NUM-MAT
      // (f #n) ~> z
      HEAP_ST(w, app + 0, f);
      HEAP_ST(w, app + 1, v);
      HEAP_ST(w, red + 0, TERM(APP, 0, app));
      HEAP_ST(w, red + 1, HEAP_LD(w, m + 0));
      return TERM(RED, 0, red);
    }
    // ((λp.(f p) ~> m) #k)                              APP-RED-MAT-NUM-MIS
    u32 n = wnf_bump(w, 3);
    HEAP_ST(w, n + 0, TERM(APP, 0, n + 1));
    HEAP_ST(w, n + 1, f);
    HEAP_ST(w, n + 2, TERM(VAR, 0, n + 0));
    HEAP_ST(w, red + 0, TERM(LAM, 0, n + 0));
    HEAP_ST(w, red + 1, HEAP_LD(w, m + 1));
    HEAP_ST(w, app + 1, v);
    return TERM(APP, 0, app);
  }
  // stuck: ^(f v), e dropped (not an interaction)
  HEAP_ST(w, app + 0, f);
  HEAP_ST(w, app + 1, v);
  return TERM(DRY, 0, app);
}

// DUP of a value v whose rule makes two copies: returns them in *r0/*r1
// (each side then takes one), 0 when v has no such rule (stuck or atom).
// Counted by the caller. The fields of the copied node become the DUP
// slots of its fields: the node itself is consumed.
FN u32 wnf_dup_val(THR Wnf *w, u32 lab, Term v, THR Term *r0, THR Term *r1) {
  u32 tv = TAG(v);
  u32 x  = VAL(v);
#ifdef WNF_LAZY_BOOK
  // HVM4 clones a node's fields from fresh slots, leaving the node as it
  // was; a run that reads it again (the lazy core's) must find it so.
  if (tv != LAM || (EXT(v) & LAM_ERA)) {
    u32 ari = tv == SUP || tv == LAM ? (tv == SUP ? 2u : 1u)
            : (tv == DRY || tv == RED) ? 2u : wnf_nod_arity(tv);
    if (ari == 0) return 0;
    u32 c = wnf_bump(w, ari);
    for (u32 i = 0; i < ari; i++) HEAP_ST(w, c + i, HEAP_LD(w, x + i));
    x = c;
  }
#endif
  if (tv == SUP) {
    // different labels (same label is handled by the caller)
    u32 n = wnf_bump(w, 4);
    HEAP_ST(w, n + 0, TERM(DP0, lab, x + 0));
    HEAP_ST(w, n + 1, TERM(DP0, lab, x + 1));
    HEAP_ST(w, n + 2, TERM(DP1, lab, x + 0));
    HEAP_ST(w, n + 3, TERM(DP1, lab, x + 1));
    *r0 = TERM(SUP, EXT(v), n + 0);
    *r1 = TERM(SUP, EXT(v), n + 2);
    return 1;
  }
  if (tv == LAM) {
    u32 ext = EXT(v);
    if (ext & LAM_ERA) {
      // the body slot turns into the DUP slot of the body
      u32 n = wnf_bump(w, 2);
      HEAP_ST(w, n + 0, TERM(DP0, lab, x));
      HEAP_ST(w, n + 1, TERM(DP1, lab, x));
      *r0 = TERM(LAM, ext, n + 0);
      *r1 = TERM(LAM, ext, n + 1);
      return 1;
    }
    // λx.b -> λx0.B₀, λx1.B₁ with x ← &L{x0,x1} and ! B &L = b
    u32 n = wnf_bump(w, 5);
    HEAP_ST(w, n + 4, HEAP_LD(w, x));
    HEAP_ST(w, n + 0, TERM(DP0, lab, n + 4));
    HEAP_ST(w, n + 1, TERM(DP1, lab, n + 4));
    HEAP_ST(w, n + 2, TERM(VAR, 0, n + 0));
    HEAP_ST(w, n + 3, TERM(VAR, 0, n + 1));
    HEAP_ST(w, x, AS_SUB(TERM(SUP, lab, n + 2)));
    *r0 = TERM(LAM, ext, n + 0);
    *r1 = TERM(LAM, ext, n + 1);
    return 1;
  }
  u32 ari = (tv == DRY || tv == RED) ? 2u : wnf_nod_arity(tv);
  if (ari == 0) {
    return 0;
  }
  u32 n = wnf_bump(w, 2 * ari);
  for (u32 i = 0; i < ari; i++) {
    HEAP_ST(w, n + i,       TERM(DP0, lab, x + i));
    HEAP_ST(w, n + ari + i, TERM(DP1, lab, x + i));
  }
  *r0 = TERM(tv, EXT(v), n);
  *r1 = TERM(tv, EXT(v), n + ari);
  return 1;
}

// Book
// ====

// Copies the book words [lo, hi) to fresh heap, relocating every word with
// a location, and returns root relocated the same way: a definition's
// template (docs/architecture.md), or the one case of a match's that a
// call takes. 0 when the heap is exhausted.
FN Term wnf_instance(THR Wnf *w, Term root, u32 lo, u32 hi) {
  if (lo >= hi) {
    return root;
  }
  u32 len = hi - lo;
  if (!wnf_room(w, len)) {
    return 0;
  }
  u32 at  = wnf_bump(w, len);
  u32 off = at - lo;
  u32 i   = 0;
  // Four words loaded before any is stored: on a GPU their loads are then
  // in flight together instead of one latency each.
  for (; i + 4 <= len; i += 4) {
    Term t0 = HEAP_LD_BOOK(w, lo + i + 0);
    Term t1 = HEAP_LD_BOOK(w, lo + i + 1);
    Term t2 = HEAP_LD_BOOK(w, lo + i + 2);
    Term t3 = HEAP_LD_BOOK(w, lo + i + 3);
    HEAP_ST_NEW(w, at + i + 0, wnf_inst(t0, off));
    HEAP_ST_NEW(w, at + i + 1, wnf_inst(t1, off));
    HEAP_ST_NEW(w, at + i + 2, wnf_inst(t2, off));
    HEAP_ST_NEW(w, at + i + 3, wnf_inst(t3, off));
  }
  for (; i < len; i++) {
    HEAP_ST_NEW(w, at + i, wnf_inst(HEAP_LD_BOOK(w, lo + i), off));
  }
  return wnf_inst(root, off);
}

// APP-MAT-CTR-MAT's result: the case r applied to the fields of the
// constructor c, in order; the application nodes are fl and fresh ones.
FN Term wnf_mat_fields(THR Wnf *w, u32 fl, Term r, Term c) {
  u32 ari = CTR_ARITY(TAG(c));
  u32 cl  = VAL(c);
  if (ari == 0) {
    return r;
  }
  HEAP_ST(w, fl + 0, r);
  HEAP_ST(w, fl + 1, HEAP_LD(w, cl));
  r = TERM(APP, 0, fl);
  if (ari > 1) {
    u32 n = wnf_bump(w, 2 * (ari - 1));
    for (u32 i = 1; i < ari; i++) {
      HEAP_ST(w, n + 0, r);
      HEAP_ST(w, n + 1, HEAP_LD(w, cl + i));
      r = TERM(APP, 0, n);
      n += 2;
    }
  }
  return r;
}

// (@f v), @f's template a match (term.h, "Match templates"): node fl =
// [@f, v], v a value. A number or a constructor picks its case in the
// book, running the APP-MAT-* of each case on the way (at most `left`;
// the rest of the chain then), and only that case is copied: the result
// is the term to go on with, *n the interactions. Anything else meets
// the whole match: it is copied into fl, v stays in fl + 1, *n = 0 (the
// caller goes on as F_MAT). 0 when the heap is exhausted.
FN Term wnf_case_call(THR Wnf *w, THR u32 *n, u32 fl, u32 id, Term v, u64 left) {
  u32  tpl = w->book[id];
  Term m   = HEAP_LD_BOOK(w, tpl);
  u32  lo  = tpl + TPL_SPAN0 + VAL(HEAP_LD_BOOK(w, tpl + 1));
  u32  hi  = tpl + w->book_len[id];
  u32  tv  = TAG(v);
  u32  hit = 0;
  u32  k   = 0;
  Term r   = m;
  if (tv == NUM || IS_CTR(tv)) {
    u32 key = tv == NUM ? VAL(v) : EXT(v);
    for (;;) {
      k++;
      hit = EXT(m) == key;
      r   = HEAP_LD_BOOK(w, VAL(m) + 1 - hit);
      if (hit || !TPL_IS_MATCH(r)) {
        Term span = HEAP_LD_BOOK(w, tpl + TPL_SPAN0 + k - hit);
        lo = VAL(span);
        hi = lo + EXT(span);
        break;
      }
      if (k >= left) {
        break;   // the budget ends here: the rest of the chain, from a whole copy
      }
      m = r;
    }
  }
  // room for the case and, past APPLY's reserve, the fields' applications
  if (!wnf_room(w, hi - lo + (hit && tv != NUM ? 2 * CTR_ARITY(tv) : 0))) {
    return 0;
  }
  r  = wnf_instance(w, r, lo, hi);
  *n = k;
  if (k == 0 || !hit) {                            // F_MAT / APP-MAT-*-MIS
    HEAP_ST(w, fl + 0, r);
    HEAP_ST(w, fl + 1, v);
    return TERM(APP, 0, fl);
  }
  return tv == NUM ? r : wnf_mat_fields(w, fl, r, v);
}

// Folds the frames stk[0, sp) back into the heap around cur, the term an
// early stop left (wnf_run's REBUILD): the result is the term the run
// started from, with the work done so far. w->host_at gets the slot that
// holds cur (the innermost frame's).
FN_COLD Term wnf_rebuild(THR Wnf *w, DEV Term *stk, u32 sp, u32 mode, Term cur) {
  u32 first = 1;
  u32 leave = cur == BUSY;   // store nothing at this frame: the innermost
                             // field is another worker's (BUSY), or wnf_put
                             // released the DUP slot
  while (sp > 0) {
    Term f    = stk[--sp];
    u32  fl   = VAL(f);
    u32  slot = fl;          // the field of f's node that holds cur
    Term up   = f;           // the term that holds f's node
    switch (TAG(f)) {
      case DP0:
      case DP1: {            // a DUP slot this run holds: released
        wnf_put(w, mode, fl, cur);
        leave = 1;
        break;
      }
      case F_MAT:
      case F_MREF:
      case F_RMAT:
      case F_RUSE: {
        slot = fl + 1;
        up   = TERM(APP, 0, fl);
        break;
      }
      case F_ARED: {
        slot = VAL(HEAP_LD(w, fl)) + 1;
        up   = TERM(APP, 0, fl);
        break;
      }
      case F_OP2R: {
        slot = fl + 1;
        up   = TERM(OP2, EXT(f), fl);
        break;
      }
      case F_EQLR: {
        slot = fl + 1;
        up   = TERM(EQL, 0, fl);
        break;
      }
      default: {             // APP OP2 EQL AND OR DSU DDU: field 0
        break;
      }
    }
    if (!leave) {
      HEAP_ST(w, slot, cur);
    }
    cur   = up;
    leave = 0;
    if (first) {
      w->host_at = slot;
      first      = 0;
    }
  }
  return cur;
}

// Copying the book lazily
// =======================
// HVM4 copies a definition a node at a time: a book term not yet copied is
// a thunk, ALO (template slot, env), the env binding each template binder
// met on the way (a lambda's body slot, a DUP's expression slot) to its
// copy. Entering a thunk copies one node, whose children are thunks, and
// does not store the copy back: a slot read twice gives two copies. Only a
// run that reads a DUP slot again while it reduces it (ERR_DUP_AGAIN) can
// tell that from copying a whole definition at once; such a run starts over
// with this core (WNF_LAZY_BOOK, cpu/lazy.c) to give HVM4's result. An env
// entry is two words: [template binder | copy << 32, next entry].
#ifdef WNF_LAZY_BOOK
#define WNF_ALO_ROOM 40u   // a C16's node and thunks, the most one copy makes
#ifndef WNF_LAZY_MOVED
#define WNF_LAZY_MOVED(w, from, to)   // a stuck DUP's expression moved (the backend may watch)
#endif

FN Term wnf_alo_new(THR Wnf *w, u32 slot, u32 env) {
  u32 p = wnf_bump(w, 1);
  HEAP_ST(w, p, (Term)slot | ((Term)env << 32));
  return TERM(ALO, 0, p);
}

FN u32 wnf_env_find(THR Wnf *w, u32 env, u32 key) {
  while (env != 0) {
    Term e = HEAP_LD(w, env);
    if ((u32)e == key) return (u32)(e >> 32);
    env = (u32)HEAP_LD(w, env + 1);
  }
  return 0;
}

FN u32 wnf_env_bind(THR Wnf *w, u32 env, u32 key, u32 copy) {
  u32 e = wnf_bump(w, 2);
  HEAP_ST(w, e + 0, (Term)key | ((Term)copy << 32));
  HEAP_ST(w, e + 1, (Term)env);
  return e;
}

// The template word at slot as a child under env: a bound variable as its
// copy's, a leaf as it is, a node or a binder as a thunk.
FN Term wnf_alo_child(THR Wnf *w, u32 slot, u32 env) {
  Term t  = HEAP_LD_BOOK(w, slot);
  u32  tg = TAG(t);
  if (tg == VAR || tg == DP0 || tg == DP1) {
    u32 at = wnf_env_find(w, env, VAL(t));
    return at ? TERM(tg, EXT(t), at) : t;   // templates are closed
  }
  return HAS_LOC(tg) ? wnf_alo_new(w, slot, env) : t;
}

// Enters the thunk whose pair is at p: the term to go on with (a DUP's is
// its body's, the DUP made), 0 when the heap is exhausted.
FN Term wnf_alo_enter(THR Wnf *w, u32 p) {
  if (!wnf_room(w, WNF_ALO_ROOM)) return 0;
  Term pr   = HEAP_LD(w, p);
  u32  slot = (u32)pr;
  u32  env  = (u32)(pr >> 32);
  Term t    = HEAP_LD_BOOK(w, slot);
  u32  tg   = TAG(t);
  if (tg == LAM) {
    u32 b = wnf_bump(w, 1);
    u32 e = wnf_env_bind(w, env, VAL(t), b);
    HEAP_ST(w, b, wnf_alo_child(w, VAL(t), e));
    return TERM(LAM, EXT(t), b);
  }
  if (tg == DUP) {
    u32 c = wnf_bump(w, 1);
    HEAP_ST(w, c, wnf_alo_child(w, VAL(t) + 0, env));
    u32 e = wnf_env_bind(w, env, VAL(t), c);
    return wnf_alo_child(w, VAL(t) + 1, e);
  }
  if (tg == VAR || tg == DP0 || tg == DP1 || !HAS_LOC(tg)) {
    return wnf_alo_child(w, slot, env);
  }
  u32 ari = term_arity(t);
  u32 n   = wnf_bump(w, ari);
  for (u32 i = 0; i < ari; i++) {
    HEAP_ST(w, n + i, wnf_alo_child(w, VAL(t) + i, env));
  }
  return TERM(tg, EXT(t), n);
}
#endif

// Whether one of the frames stk[0, sp) is a DP0/DP1 of slot loc: this run
// holds that DUP slot itself.
FN u32 wnf_holds(DEV Term *stk, u32 sp, u32 loc) {
  for (u32 i = sp; i > 0; i--) {
    Term f = stk[i - 1];
    if ((TAG(f) == DP0 || TAG(f) == DP1) && VAL(f) == loc) return 1;
  }
  return 0;
}

// Whether a DUP is under reduction in these frames (any DP0/DP1 frame).
FN u32 wnf_in_dup(DEV Term *stk, u32 sp) {
  for (u32 i = sp; i > 0; i--) {
    if (TAG(stk[i - 1]) == DP0 || TAG(stk[i - 1]) == DP1) return 1;
  }
  return 0;
}

// The machine
// ===========

// The tags whose ENTER case reads the word at their location (wnf_run).
#define WNF_ENTER_READS ((1u << APP) | (1u << VAR) | (1u << DP0) | (1u << DP1) | \
                         (1u << OP2) | (1u << EQL) | (1u << AND) | (1u << OR) | \
                         (1u << DSU) | (1u << DDU))

// Reduces t to weak normal form. w->status says how it ended; with any
// status but WNF_OK the returned term is t rebuilt: a valid term graph equal
// to t with the work done so far, no DUP slot left BUSY. For WNF_HOST,
// w->host is the primitive to run and w->host_at the heap slot that holds
// it inside the returned term (0: the returned term is w->host itself).
FN Term wnf_run(THR Wnf *w, Term t) {
  DEV Term *stk  = w->stack;
  u32       cap  = w->stack_cap;
  u32       mode = w->dup_mode;
  u64       itrs = w->itrs;
  WNF_RULE_LOCAL
  u64       lim  = w->budget;
  u32       scan = 0;      // stack frames looked at for offers (sparks)
  u32       seen = 0;      // the OP2 node found at the last offer point
  u64       from = itrs;   // offers only after w->offer interactions here
  if (w->offer && itrs + w->offer < lim) {
    lim = itrs + w->offer;
  }
  u32       sp   = 0;
  u32       st   = WNF_OK;
  Term      next = t;
  Term      whnf = 0;
  Term      cur  = 0;

  for (;;) {
    // ENTER
    // -----
    for (;;) {
      u32  loc = VAL(next);
      u32  tg  = TAG(next);
      WNF_WARP_STEP(w, WARP_ENTER | tg);
      // The word at loc, for every tag whose case reads it, read before the
      // dispatch: a GPU warp's lanes then issue it at one instruction
      // whatever their tags, and wait for it once instead of once a branch.
      Term at  = (tg < 32u && ((WNF_ENTER_READS >> tg) & 1u)) ? HEAP_LD(w, loc) : 0;
      switch (tg) {
        case APP: case OP2: case EQL: case AND: case OR: case DSU: case DDU: {
          if (WNF_STACK_FULL(w, sp, cap)) {
            st = WNF_STACK;
            break;
          }
          stk[sp++] = next;
          next = at;
          continue;
        }
        case VAR: {
          Term c = at;
          if (IS_SUB(c)) {
            next = NO_SUB(c);
            continue;
          }
          break;
        }
        case DP0:
        case DP1: {
          Term c = at;
          for (u32 i = HEAP_WAIT_POLLS(w); i > 0 && c == BUSY; i--) {
            HEAP_PAUSE(w, loc);
            c = HEAP_LD(w, loc);
          }
          if (IS_SUB(c)) {
            next = NO_SUB(c);
            continue;
          }
          if (c != BUSY && WNF_STUCK(w, loc, c)) {
            break;   // neutral: as the stuck rule below would leave it
          }
          // A slot this run holds itself (a DUP that reaches one of its own
          // copies, two copies under one label): waiting would never end,
          // and the one-thread reading HVM4 gives depends on its lazy copy
          // of the book, which only the lazy core reproduces.
          if (c == BUSY && wnf_holds(stk, sp, loc)) {
            st     = WNF_ERROR;
            w->err = ERR_DUP_AGAIN;
            break;
          }
          if (mode != DUP_SOLO) {
            // take the slot: leave BUSY there while we reduce it
            if (c == BUSY || (mode == DUP_OWNER && REGION_OF(w, loc) != w->owner)) {
              st = WNF_DEFER;
              break;
            }
            c = HEAP_XCHG(w, loc, BUSY);
            if (IS_SUB(c)) {
              HEAP_ST(w, loc, c);
              next = NO_SUB(c);
              continue;
            }
            if (c == BUSY) {
              st = WNF_DEFER;
              break;
            }
            if (WNF_STACK_FULL(w, sp, cap)) {
              wnf_put(w, mode, loc, c);
              st = WNF_STACK;
              break;
            }
          } else if (WNF_STACK_FULL(w, sp, cap)) {
            st = WNF_STACK;
            break;
          }
          // A DUP whose expression is one of its own copies (two copies
          // given one label meet): its WNF is an endless descent.
          if ((TAG(c) == DP0 || TAG(c) == DP1) && VAL(c) == loc) {
            if (mode != DUP_SOLO) wnf_put(w, mode, loc, c);
            st     = WNF_ERROR;
            w->err = ERR_DUP_SELF;
            break;
          }
#ifndef WNF_LAZY_BOOK
          // One thread marks the slot held too, so that meeting it again
          // while it is reduced is seen (above); every way out of this frame
          // stores over the mark. The lazy core reads it again, as HVM4.
          if (mode == DUP_SOLO) HEAP_ST(w, loc, BUSY);
#endif
          stk[sp++] = next;
          next = c;
          continue;
        }
        case DUP: {
          next = HEAP_LD(w, loc + 1);
          continue;
        }
        case REF: {
          u32 id  = EXT(next);
          u32 tpl = id < w->book_cnt ? w->book[id] : 0u;
          if (tpl == 0) {
            break;   // undefined: a stuck name
          }
#ifdef WNF_LAZY_BOOK
          if (!wnf_room(w, 1)) {
            st = WNF_OOM;
            break;
          }
          next = wnf_alo_new(w, tpl, 0);
          continue;
#endif
          Term root = HEAP_LD_BOOK(w, tpl);
          u32  lo   = tpl + 1;
          if (TPL_IS_MATCH(root)) {
            Term hdr = HEAP_LD_BOOK(w, tpl + 1);
            lo = tpl + TPL_SPAN0 + VAL(hdr);
            if (WNF_CASE_COPY && EXT(hdr) && sp > 0 && TAG(stk[sp - 1]) == APP) {
              // (@f x), @f a match: x first, then only the case it takes
              u32 fl = VAL(stk[sp - 1]);
              HEAP_ST(w, fl, next);   // it may have come through a variable
              stk[sp - 1] = TERM(F_MREF, id, fl);
              next        = HEAP_LD(w, fl + 1);
              continue;
            }
          }
          Term r = wnf_instance(w, root, lo, tpl + w->book_len[id]);
          if (r == 0) {
            st = WNF_OOM;
            break;
          }
          next = r;
          continue;
        }
        case ALO: {
#ifdef WNF_LAZY_BOOK
          Term r = wnf_alo_enter(w, loc);
          if (r == 0) {
            st = WNF_OOM;
            break;
          }
          next = r;
          continue;
#else
          break;   // made only by the lazy core
#endif
        }
        case PRI: {
          u32 id = EXT(next);
          if (id >= PRIM_OP && id < PRIM_COUNT) {
            next = TERM(OP2, id - PRIM_OP, loc);   // same [a, b] node
            continue;
          }
          if (id == PRIM_GNF && w->on_device) {
            next = HEAP_LD(w, loc);
            continue;
          }
#ifdef WNF_LAZY_BOOK
          // HVM4 runs a primitive inside the DUP reduction that met it, and
          // its result there depends on how that DUP is met again; the stop
          // for the host folds the DUP's frame back into the heap, which
          // gives another. An effect there is refused; %nf, %gnf and
          // %compact (not HVM4's) are not effects.
          if (((id < PRIM_OP && id != PRIM_NF && id != PRIM_GNF && id != PRIM_COMPACT) ||
               PRIM_IS_FFI(id)) && wnf_in_dup(stk, sp)) {
            st     = WNF_ERROR;
            w->err = ERR_DUP_HOST;
            break;
          }
#endif
          if (id < PRIM_OP || PRIM_IS_FFI(id)) {   // a library's: the host's too
            st      = WNF_HOST;
            w->host = next;
            break;
          }
          st     = WNF_ERROR;
          w->err = ERR_PRIM;
          break;
        }
        case UNS: {
          // ! ${f, v}; t  ->  (t λy.λ$x.y $x)           WNF-UNS
          if (itrs >= w->budget) {
            st = WNF_BUDGET;
            break;
          }
          if (!wnf_room(w, 6)) {
            st = WNF_OOM;
            break;
          }
          itrs++;
          WNF_RULE(R_WNF_UNS);
          u32 n = wnf_bump(w, 6);
          HEAP_ST(w, n + 0, TERM(VAR, 0, n + 1));    // λ$x.y   (body slot n)
          HEAP_ST(w, n + 1, TERM(LAM, 0, n + 0));    // λy.λ$x.y (slot n+1)
          HEAP_ST(w, n + 2, HEAP_LD(w, loc));
          HEAP_ST(w, n + 3, TERM(LAM, 0, n + 1));
          HEAP_ST(w, n + 4, TERM(APP, 0, n + 2));
          HEAP_ST(w, n + 5, TERM(VAR, 0, n + 0));
          next = TERM(APP, 0, n + 4);
          continue;
        }
        default: {
          // A field another worker holds (BUSY: a host primitive's slot in
          // a DUP expression both sides reach) is no value: wait for it.
          // At the top (sp == 0) the caller read a held slot; it decides.
          if (next == BUSY && sp > 0) {
            st = WNF_DEFER;
          }
          break;
        }
      }
      break;
    }
    if (st != WNF_OK) {
      cur = next;
      break;
    }
    whnf = next;

    // APPLY
    // -----
    for (;;) {
      if (sp == 0) {
        WNF_PUT_ITRS(w, itrs);
        WNF_RULE_OUT();
        w->status = WNF_OK;
        return whnf;
      }
      if (itrs >= lim) {
        // an offer point, and the budget's end too: what stops here goes
        // on later, so its oldest operand may as well go on elsewhere (a
        // budget shorter than the gap offers nothing: its entries are
        // too small to split)
        if (w->offer && itrs - from >= w->offer) {
          wnf_offer_oldest(w, stk, sp, &scan, &seen);
        }
        if (itrs < w->budget) {
          lim = itrs + w->offer < w->budget ? itrs + w->offer : w->budget;
          continue;
        }
        st = WNF_BUDGET;
        break;
      }
      if (w->end - w->next < WNF_RESERVE && !HEAP_REFILL(w, WNF_RESERVE)) {
        st = WNF_OOM;
        break;
      }
      Term f  = stk[--sp];
      u32  fl = VAL(f);
      u32  tw = TAG(whnf);
      WNF_WARP_STEP(w, WARP_APPLY | (TAG(f) << 7) | tw);

      switch (TAG(f)) {
        // (□ x): the function is a value
        case APP: {
          if (tw == LAM) {                                  // APP-LAM
            u32 l = VAL(whnf);
            itrs++;
            WNF_RULE(R_APP_LAM);
            next = HEAP_LD(w, l);
            if (!(EXT(whnf) & LAM_ERA)) {
              HEAP_ST(w, l, AS_SUB(HEAP_LD(w, fl + 1)));
            }
            break;
          }
          if (tw == SUP) {                                  // APP-SUP
            // (&L{a,b} x) -> ! X &L = x; &L{(a X₀), (b X₁)}
            u32  lab = EXT(whnf);
            u32  s   = VAL(whnf);
            u32  n   = wnf_bump(w, 3);
            Term x   = HEAP_LD(w, fl + 1);
            u32  now = WNF_CLONE_NOW(x);
            itrs += 1u + now;                               // + its DUP-NOD
            WNF_RULE(R_APP_SUP);
            HEAP_ST(w, n + 2, x);                           // the slot: unread if now
            HEAP_ST(w, n + 0, HEAP_LD(w, s + 1));
            HEAP_ST(w, n + 1, now ? x : TERM(DP1, lab, n + 2));
            HEAP_ST(w, s + 1, now ? x : TERM(DP0, lab, n + 2));
            HEAP_ST(w, fl + 0, TERM(APP, 0, s));
            HEAP_ST(w, fl + 1, TERM(APP, 0, n));
            whnf = TERM(SUP, lab, fl);
            continue;
          }
          switch (tw) {
            case ERA: {                                     // APP-ERA
              itrs++;
              WNF_RULE(R_APP_ERA);
              whnf = WNF_ERA;
              continue;
            }
            case NAM: case BJV: case BJ0: case BJ1: case DRY: {
              HEAP_ST(w, fl, whnf);                         // ^(f x)
              whnf = TERM(DRY, 0, fl);
              continue;
            }
            case INC: {                                     // APP-INC
              itrs++;
              WNF_RULE(R_APP_INC);
              whnf = wnf_inc_up(w, APP, 0, fl, 0, whnf);
              continue;
            }
            case MAT: case SWI: case USE: {
              HEAP_ST(w, fl, whnf);
              stk[sp++] = TERM(F_MAT, 0, fl);
              next = HEAP_LD(w, fl + 1);
              break;
            }
            case RED: {
              HEAP_ST(w, fl, whnf);
              stk[sp++] = TERM(F_ARED, 0, fl);
              next = HEAP_LD(w, VAL(whnf) + 1);
              break;
            }
            case NUM: {
              sp++;
              st     = WNF_ERROR;
              w->err = ERR_APP_NUM;
              break;
            }
            default: {
              if (IS_CTR(tw)) {
                sp++;
                st     = WNF_ERROR;
                w->err = ERR_APP_CTR;
                break;
              }
#ifdef WNF_LAZY_BOOK
              if (wnf_room(w, 2)) {   // HVM4 makes a new node: the old one
                u32 n = wnf_bump(w, 2);   // may be read again
                HEAP_ST(w, n + 0, whnf);
                HEAP_ST(w, n + 1, HEAP_LD(w, fl + 1));
                whnf = TERM(APP, 0, n);
                continue;
              }
#endif
              HEAP_ST(w, fl, whnf);                         // stuck
              whnf = f;
              continue;
            }
          }
          break;
        }

        // ! X &L = □: the DUP expression is a value
        case DP0:
        case DP1: {
          u32  lab  = EXT(f);
          u32  side = TAG(f) - DP0;
          Term r0;
          Term r1;
          if (tw == SUP && EXT(whnf) == lab) {              // DUP-SUP (same)
            u32 s = VAL(whnf);
            itrs++;
            WNF_RULE(R_DUP_SUP);
            r0 = HEAP_LD(w, s + 0);
            r1 = HEAP_LD(w, s + 1);
            wnf_put(w, mode, fl, AS_SUB(side ? r0 : r1));
            next = side ? r1 : r0;
            break;
          }
          if (tw == NUM || tw == ERA || tw == ANY || tw == C00 || wnf_is_nam(tw)) {
            itrs++;                                         // DUP-NOD/NAM
            WNF_RULE(R_DUP + tw);
            wnf_put(w, mode, fl, AS_SUB(whnf));
            continue;
          }
          if (wnf_dup_val(w, lab, whnf, &r0, &r1)) {        // DUP-SUP/LAM/...
            itrs++;
            WNF_RULE(R_DUP + tw);
            wnf_put(w, mode, fl, AS_SUB(side ? r0 : r1));
            next = side ? r1 : r0;
            break;
          }
#ifdef WNF_LAZY_BOOK
          {
            // HVM4 moves a stuck expression to a fresh slot and leaves the
            // other side there: a run that meets this DUP again, inside
            // itself, reads that side.
            u32 c = wnf_bump(w, 1);
            HEAP_ST(w, c, whnf);
            HEAP_ST(w, fl, AS_SUB(TERM(side ? DP0 : DP1, lab, c)));
            WNF_LAZY_MOVED(w, fl, c);
            whnf = TERM(side ? DP1 : DP0, lab, c);
            continue;
          }
#endif
          wnf_put(w, mode, fl, whnf);                       // stuck
          whnf = f;
          continue;
        }

        // (@f □), @f's template a match: node fl = [@f, arg]; ext: f's id
        case F_MREF: {
          u32 n = 0;
          next  = wnf_case_call(w, &n, fl, EXT(f), whnf, lim - itrs);
          if (next == 0) {
            sp++;
            st = WNF_OOM;
            break;
          }
          if (n == 0) {                                     // the whole match
            stk[sp++] = TERM(F_MAT, 0, fl);
            continue;
          }
          itrs += n;
          break;
        }

        // (mat □) / (use □): the argument is a value; node fl = [mat, arg]
        case F_MAT: {
          Term mat = HEAP_LD(w, fl);
          u32  m   = VAL(mat);
          WNF_LIFT(TAG(mat) == USE ? R_USE_ERA : R_APP_ERA,                 // APP-ERA, APP-MAT-SUP, MAT-INC
                   TAG(mat) == USE ? R_USE_SUP : R_APP_MAT_SUP,
                   TAG(mat) == USE ? wnf_use_sup(w, fl, mat, whnf) : wnf_mat_sup(w, fl, mat, whnf),
                   TAG(mat) == USE ? R_USE_INC : R_MAT_INC, wnf_inc_up(w, APP, 0, fl, 1, whnf));
          if (tw == RED) {                                  // drop the guard
            stk[sp++] = f;
            next = HEAP_LD(w, VAL(whnf) + 1);
            break;
          }
          if (TAG(mat) == USE) {                            // USE-VAL
            itrs++;
            WNF_RULE(R_USE_VAL);
            HEAP_ST(w, fl + 0, HEAP_LD(w, m));
            HEAP_ST(w, fl + 1, whnf);
            next = TERM(APP, 0, fl);
            break;
          }
          if (IS_CTR(tw)) {
            itrs++;
            WNF_RULE(EXT(mat) == EXT(whnf) ? R_APP_MAT_CTR_MAT : R_APP_MAT_CTR_MIS);
            if (EXT(mat) == EXT(whnf)) {                    // APP-MAT-CTR-MAT
              next = wnf_mat_fields(w, fl, HEAP_LD(w, m), whnf);
              break;
            }
            HEAP_ST(w, fl + 0, HEAP_LD(w, m + 1));          // APP-MAT-CTR-MIS
            HEAP_ST(w, fl + 1, whnf);
            next = TERM(APP, 0, fl);
            break;
          }
          if (tw == NUM) {
            itrs++;
            WNF_RULE(EXT(mat) == VAL(whnf) ? R_APP_MAT_NUM_MAT : R_APP_MAT_NUM_MIS);
            if (EXT(mat) == VAL(whnf)) {                    // APP-MAT-NUM-MAT
              next = HEAP_LD(w, m);
              break;
            }
            HEAP_ST(w, fl + 0, HEAP_LD(w, m + 1));          // APP-MAT-NUM-MIS
            HEAP_ST(w, fl + 1, whnf);
            next = TERM(APP, 0, fl);
            break;
          }
          HEAP_ST(w, fl + 1, whnf);                         // stuck
          whnf = (wnf_is_nam(tw) || tw == DRY) ? TERM(DRY, 0, fl) : TERM(APP, 0, fl);
          continue;
        }

        // (x <op> y): x is a value; node fl = [x, y]
        case OP2: {
          u32  op = EXT(f);
          Term y  = HEAP_LD(w, fl + 1);
          if (IS_SUB(y) || y == BUSY) {                     // b was offered
            if (y != BUSY) {
              y = HEAP_XCHG(w, fl + 1, BUSY);              // take it back
            }
            if (y == BUSY) {                                // being reduced
              stk[sp++] = f;
              next = TERM(VAR, 0, fl + 1);
              st   = WNF_DEFER;
              break;
            }
            wnf_put(w, mode, fl + 1, NO_SUB(y));            // plain again
            if (IS_SUB(y)) {
              // Taken back: a spark entry for fl + 1 may still wait (a
              // device lane's, in a later pass) and claims whatever word
              // there has the SUB bit. The rules below may make that slot
              // a DUP slot (OP2-SUP-L, DUP-NOD of a stuck node), whose
              // resolved SUB it would reduce and store over, so the node
              // is left behind with the slot plain (fuzz seed 765522320).
              WNF_TOOK_BACK(w, fl + 1);
              u32 nn = wnf_bump(w, 2);
              HEAP_ST(w, nn + 1, NO_SUB(y));
              fl = nn;
              f  = TERM(OP2, op, nn);
            }
            y = NO_SUB(y);
          }
          if (tw == NUM) {
            if (TAG(y) == NUM) {                            // OP2-NUM-NUM
              itrs++;
              WNF_RULE(R_OP2_NUM_NUM);
              whnf = WNF_NUM(wnf_op(op, VAL(whnf), VAL(y)));
              continue;
            }
            HEAP_ST(w, fl, whnf);
            stk[sp++] = TERM(F_OP2R, op, fl);
            next = y;
            break;
          }
          if (tw == SUP && WNF_CLONE_NOW(y)) {
            // OP2-SUP with a number on the right, the number cloned at
            // once (counted with it), then again for each waiting frame while it is an
            // operation whose other side is a number (OP2 with it on the
            // right, F_OP2R on the left): arithmetic on a superposed
            // value, as a shared body's chain of operations lifted through
            // each level of a SUP tree. Each level counts its OP2-SUP
            // (OP2-NUM-SUP) and the number's clone and makes the same two
            // copies, the left one in place of the node it consumes (the
            // SUP's, then the frame's: nothing else reaches them); only
            // the last level's SUP is written, since the next level would
            // read each other one back at once and take it apart: 3 stores
            // a level instead of 5, and no load of the SUP just made.
            u32  lab = EXT(whnf);
            u32  s   = VAL(whnf);
            Term r   = HEAP_LD(w, s + 1);
            u32  n   = wnf_bump(w, 2);
            HEAP_ST(w, s + 1, y);
            HEAP_ST(w, n + 0, r);
            HEAP_ST(w, n + 1, y);
            Term l = TERM(OP2, op, s);
            r      = TERM(OP2, op, n);
            itrs  += 2;
            while (itrs < lim && sp > 0 && w->end - w->next >= WNF_RESERVE) {
              Term g    = stk[sp - 1];
              u32  side = TAG(g) == OP2;                   // the number's field
              if (!side && TAG(g) != F_OP2R) {
                break;
              }
              u32  gl = VAL(g);
              Term z  = HEAP_LD(w, gl + side);
              if (IS_SUB(z) || TAG(z) != NUM) {           // work, offered, held
                break;
              }
              sp--;
              n = wnf_bump(w, 2);
              HEAP_ST(w, gl + 1 - side, l);
              HEAP_ST(w, n + 1 - side, r);
              HEAP_ST(w, n + side, z);
              l     = TERM(OP2, EXT(g), gl);
              r     = TERM(OP2, EXT(g), n);
              itrs += 2;
            }
            n = wnf_bump(w, 2);
            HEAP_ST(w, n + 0, l);
            HEAP_ST(w, n + 1, r);
            whnf = TERM(SUP, lab, n);
            continue;
          }
          WNF_LIFT(R_OP2_ERA, R_OP2_SUP, wnf_bin_sup_l(w, OP2, op, fl, whnf),   // OP2-ERA/SUP/INC-X
                   R_OP2_INC_X, wnf_inc_up(w, OP2, op, fl, 0, whnf));
          HEAP_ST(w, fl, whnf);                             // stuck
          whnf = f;
          continue;
        }

        // (#x <op> □): node fl = [#x, y]
        case F_OP2R: {
          u32 op = EXT(f);
          if (tw == NUM) {                                  // OP2-NUM-NUM
            itrs++;
            WNF_RULE(R_OP2_NUM_NUM);
            whnf = WNF_NUM(wnf_op(op, VAL(HEAP_LD(w, fl)), VAL(whnf)));
            continue;
          }
          // OP2-NUM-SUP counts the DUP-NOD of the number #x it clones at once
          Term x;
          WNF_LIFT(R_OP2_NUM_ERA, R_OP2_NUM_SUP, (x = HEAP_LD(w, fl), itrs += WNF_CLONE_NOW(x), wnf_bin_sup_r(w, OP2, op, fl, whnf, x)),
                   R_OP2_INC_Y, wnf_inc_up(w, OP2, op, fl, 1, whnf));   // OP2-NUM-ERA/SUP, OP2-INC-Y
          if (tw == RED) {                                  // drop the guard
            stk[sp++] = f;
            next = HEAP_LD(w, VAL(whnf) + 1);
            break;
          }
          HEAP_ST(w, fl + 1, whnf);                         // stuck
          whnf = TERM(OP2, op, fl);
          continue;
        }

        // (a === b): a is a value
        case EQL: {
          WNF_LIFT(R_EQL_ERA_L, R_EQL_SUP_L, wnf_bin_sup_l(w, EQL, 0, fl, whnf),   // EQL-ERA/SUP/INC-L
                   R_EQL_INC_L, wnf_inc_up(w, EQL, 0, fl, 0, whnf));
          if (tw == ANY) {                                  // EQL-ANY-L
            itrs++;
            WNF_RULE(R_EQL_ANY);
            whnf = WNF_NUM(1);
            continue;
          }
          HEAP_ST(w, fl, whnf);
          stk[sp++] = TERM(F_EQLR, 0, fl);
          next = HEAP_LD(w, fl + 1);
          break;
        }

        // (a === □): node fl = [a, b], a a value
        case F_EQLR: {
          WNF_LIFT(R_EQL_ERA_R, R_EQL_SUP_R, wnf_bin_sup_r(w, EQL, 0, fl, whnf, 0),   // EQL-ERA/SUP/INC-R
                   R_EQL_INC_R, wnf_inc_up(w, EQL, 0, fl, 1, whnf));
          if (tw == ANY) {                                  // EQL-ANY-R
            itrs++;
            WNF_RULE(R_EQL_ANY);
            whnf = WNF_NUM(1);
            continue;
          }
          itrs++;                                           // EQL-*
          WNF_RULE(R_EQL + (TAG(HEAP_LD(w, fl)) << 7) + tw);
          next = wnf_eql(w, fl, HEAP_LD(w, fl), whnf);
          break;
        }

        // (a .&. b) / (a .|. b): a is a value
        case AND:
        case OR: {
          u32 tg = TAG(f);
          if (tw == NUM) {
            itrs++;
            WNF_RULE((VAL(whnf) != 0) + (tg == OR ? R_OR_ZER : R_AND_ZER));
            u32 one = VAL(whnf) != 0;
            if (one == (tg == OR)) {                        // AND-ZER, OR-ONE
              whnf = WNF_NUM(one);
              continue;
            }
            next = HEAP_LD(w, fl + 1);                      // AND-ONE, OR-ZER
            break;
          }
          WNF_LIFT(tg == OR ? R_OR_ERA : R_AND_ERA,                         // AND/OR-ERA/SUP/INC
                   tg == OR ? R_OR_SUP : R_AND_SUP, wnf_bin_sup_l(w, tg, 0, fl, whnf),
                   tg == OR ? R_OR_INC : R_AND_INC, wnf_inc_up(w, tg, 0, fl, 0, whnf));
          HEAP_ST(w, fl, whnf);                             // stuck
          whnf = f;
          continue;
        }

        // &(□){a, b} / ! X &(□) = v; b: the label is a value;
        // node fl = [lab, a, b] / [lab, v, b]
        case DSU:
        case DDU: {
          u32 tg = TAG(f);
          if (tw == NUM) {
            u32 lab = VAL(whnf) & EXT_MASK;   // modulo 2^24, as HVM4
            if (lab >= LAB_OWN) {             // would meet the core's own DUPs
              sp++;
              st     = WNF_ERROR;
              w->err = ERR_LABEL_OWN;
              break;
            }
            itrs++;
            WNF_RULE(tg == DSU ? R_DSU_NUM : R_DDU_NUM);
            if (tg == DSU) {                                // DSU-NUM
              whnf = TERM(SUP, lab, fl + 1);
              continue;
            }
            // DDU-NUM: ! X &lab = v; (b X₀ X₁), v staying in its slot
            u32 n = wnf_bump(w, 4);
            HEAP_ST(w, n + 0, HEAP_LD(w, fl + 2));
            HEAP_ST(w, n + 1, TERM(DP0, lab, fl + 1));
            HEAP_ST(w, n + 2, TERM(APP, 0, n));
            HEAP_ST(w, n + 3, TERM(DP1, lab, fl + 1));
            next = TERM(APP, 0, n + 2);
            break;
          }
          if (tw == SUP) {                                  // DSU/DDU-SUP
            // ! A &L = a; ! B &L = b;
            // &L{&(x){A₀,B₀}, &(y){A₁,B₁}}, a and b kept in their slots
            u32 lab = EXT(whnf);
            u32 s   = VAL(whnf);
            u32 n   = wnf_bump(w, 6);
            itrs++;
            WNF_RULE(tg == DSU ? R_DSU_SUP : R_DDU_SUP);
            HEAP_ST(w, n + 0, HEAP_LD(w, s + 0));
            HEAP_ST(w, n + 1, TERM(DP0, lab, fl + 1));
            HEAP_ST(w, n + 2, TERM(DP0, lab, fl + 2));
            HEAP_ST(w, n + 3, HEAP_LD(w, s + 1));
            HEAP_ST(w, n + 4, TERM(DP1, lab, fl + 1));
            HEAP_ST(w, n + 5, TERM(DP1, lab, fl + 2));
            HEAP_ST(w, s + 0, TERM(tg, 0, n + 0));
            HEAP_ST(w, s + 1, TERM(tg, 0, n + 3));
            whnf = TERM(SUP, lab, s);
            continue;
          }
          WNF_LIFT(tg == DSU ? R_DSU_ERA : R_DDU_ERA, 0, whnf,               // DSU/DDU-ERA/INC (SUP above)
                   tg == DSU ? R_DSU_INC : R_DDU_INC, wnf_inc_up(w, tg, 0, fl, 0, whnf));
          HEAP_ST(w, fl, whnf);                             // stuck
          whnf = f;
          continue;
        }

        // ((f ~> □) x): node fl = [red, x]
        case F_ARED: {
          u32  red = VAL(HEAP_LD(w, fl));
          u32  hit = 0;
          Term r   = wnf_app_red(w, &hit WNF_RULE_ARG, fl, red, whnf);
          itrs    += hit;
          if (r != 0) {     // every result of wnf_app_red is a value
            whnf = r;
            continue;
          }
          HEAP_ST(w, red + 1, whnf);                        // guarded MAT/USE
          stk[sp++] = TERM(TAG(whnf) == USE ? F_RUSE : F_RMAT, 0, fl);
          next = HEAP_LD(w, fl + 1);
          break;
        }

        // ((f ~> mat) □) / ((f ~> use) □): node fl = [red, arg]
        case F_RMAT:
        case F_RUSE: {
          if (tw == RED) {                                  // drop the guard
            stk[sp++] = f;
            next = HEAP_LD(w, VAL(whnf) + 1);
            break;
          }
          u32 red = VAL(HEAP_LD(w, fl));
          u32 hit = 0;
          next  = wnf_red_elim(w, &hit WNF_RULE_ARG, fl, red, whnf);
          itrs += hit;
          break;
        }

        default: {
          continue;
        }
      }
      break;
    }
    if (st != WNF_OK) {
      cur = whnf;
      break;
    }
  }

  // REBUILD: fold the frames back into the heap around cur
  // ------------------------------------------------------
  WNF_PUT_ITRS(w, itrs);
  WNF_RULE_OUT();
  w->status  = st;
  w->host_at = 0;
  if (st == WNF_DEFER) {   // (w->defers: the caller counts)
    w->defer = next == BUSY ? w->owner : REGION_OF(w, VAL(next));
  }
  return wnf_rebuild(w, stk, sp, mode, cur);
}

#endif
