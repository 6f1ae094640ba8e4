// test_wnf.c: the WNF core (wnf.h through cpu.h) on term graphs built by
// hand: each interaction family (result and interaction count, the counts
// taken from HVM4's reference on the same programs), book instantiation,
// primitives, and the early stops with their rebuild: budget (stop at every
// step, store back, resume), DUP slot held elsewhere (defer), stack and
// heap exhaustion; two threads racing for shared DUP slots. Linked with
// src/ (tests/run.sh). Last line: "N passed, N failed".

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "cpu/cpu.h"
#include "lang/names.h"
#include "lang/parse.h"

#include "check.h"
#include "heap/rt.h"
#include "cpu/cpu_rt.h"

#define CHECK_STR(got, want) do { \
  if (strcmp((got), (want)) == 0) { PASS++; } \
  else { FAIL++; printf("FAIL %s:%d: got %s, want %s\n", __FILE__, __LINE__, (got), (want)); } \
} while (0)

static Wnf W;

// Building terms (host side, outside the worker's arena)
// ======================================================


static Term node1(u32 tag, u32 ext, Term a) {
  u32 at = nodes(1);
  RT->heap.at[at] = a;
  return TERM(tag, ext, at);
}

static Term node3(u32 tag, u32 ext, Term a, Term b, Term c) {
  u32 at = nodes(3);
  RT->heap.at[at] = a;
  RT->heap.at[at + 1] = b;
  RT->heap.at[at + 2] = c;
  return TERM(tag, ext, at);
}

static Term num(u32 n)                { return TERM(NUM, 0, n); }
static Term era(void)                 { return TERM(ERA, 0, 0); }
static Term any(void)                 { return TERM(ANY, 0, 0); }
static Term nam(u32 n)                { return TERM(NAM, n, 0); }
static Term app(Term f, Term x)       { return node2(APP, 0, f, x); }
static Term sup(u32 l, Term a, Term b){ return node2(SUP, l, a, b); }
static Term op2(u32 op, Term a, Term b){ return node2(OP2, op, a, b); }
static Term eql(Term a, Term b)       { return node2(EQL, 0, a, b); }
static Term and_(Term a, Term b)      { return node2(AND, 0, a, b); }
static Term or_(Term a, Term b)       { return node2(OR, 0, a, b); }
static Term red(Term a, Term b)       { return node2(RED, 0, a, b); }
static Term dry(Term f, Term x)       { return node2(DRY, 0, f, x); }
static Term mat(u32 k, Term h, Term m){ return node2(MAT, k, h, m); }
static Term swi(u32 n, Term z, Term s){ return node2(SWI, n, z, s); }
static Term use(Term f)               { return node1(USE, 0, f); }
static Term inc(Term t)               { return node1(INC, 0, t); }
static Term dsu(Term l, Term a, Term b){ return node3(DSU, 0, l, a, b); }
static Term ddu(Term l, Term v, Term b){ return node3(DDU, 0, l, v, b); }
static Term ctr0(u32 k)               { return TERM(C00, k, 0); }
static Term ctr1(u32 k, Term a)       { return node1(C00 + 1, k, a); }
static Term ctr2(u32 k, Term a, Term b){ return node2(C00 + 2, k, a, b); }

// Binders: open a slot, use VAR(slot) / DP0(l, slot) / DP1(l, slot), close.
static u32  slot(void)                { return nodes(1); }
static Term var(u32 s)                { return TERM(VAR, 0, s); }
static Term lam(u32 s, Term body)     { RT->heap.at[s] = body; return TERM(LAM, 0, s); }
static Term lam_era(Term body)        { return node1(LAM, LAM_ERA, body); }
static u32  dup(Term v)               { u32 s = nodes(1); RT->heap.at[s] = v; return s; }
static Term dp0(u32 l, u32 s)         { return TERM(DP0, l, s); }
static Term dp1(u32 l, u32 s)         { return TERM(DP1, l, s); }

// Strong normal form and printing (host side; recursion is fine here)
// ===================================================================

static u32 RUN_STATUS;
static int STEPWISE = 0;        // snf stops after every interaction, resumes
static u32 MODE     = DUP_SOLO; // DUP mode of the interaction tests

// WNF; with STEPWISE, one interaction per run, the rebuilt term resumed.
static Term wnf_step(Term t) {
  if (!STEPWISE) {
    return wnf_run(&W, t);
  }
  u64 lim = W.budget;
  for (;;) {
    W.budget = W.itrs + 1 < lim ? W.itrs + 1 : lim;
    t = wnf_run(&W, t);
    if (W.status != WNF_BUDGET || W.itrs >= lim) break;
  }
  W.budget = lim;
  return t;
}

static Term snf(Term t) {
  t = wnf_step(t);
  if (W.status != WNF_OK) {
    RUN_STATUS = W.status;
    return t;
  }
  u32 loc = VAL(t);
  u32 ari = term_arity(t);
  for (u32 i = 0; i < ari; i++) {
    RT->heap.at[loc + i] = snf(RT->heap.at[loc + i]);
  }
  return t;
}

static char OUT[4096];
static u32  OUT_LEN;
static u32  LAMS[64];
static u32  DEPTH;

static void put(const char *s) {
  while (*s && OUT_LEN < sizeof(OUT) - 1) OUT[OUT_LEN++] = *s++;
  OUT[OUT_LEN] = 0;
}

static void putf(const char *fmt, u32 n) {
  char b[64];
  snprintf(b, sizeof b, fmt, n);
  put(b);
}

static void show(Term t) {
  u32 tag = TAG(t);
  u32 loc = VAL(t);
  if (tag == VAR && IS_SUB(RT->heap.at[loc])) {
    show(NO_SUB(RT->heap.at[loc]));
    return;
  }
  switch (tag) {
    case NUM: putf("%u", loc); return;
    case ERA: put("&{}"); return;
    case ANY: put("*"); return;
    case NAM: putf("^%u", EXT(t)); return;
    case REF: putf("@%u", EXT(t)); return;
    case VAR: {
      for (u32 i = 0; i < DEPTH; i++) {
        if (LAMS[i] == loc) { putf("v%u", i); return; }
      }
      putf("free%u", loc);
      return;
    }
    case DP0: case DP1: putf(tag == DP0 ? "d0_%u" : "d1_%u", EXT(t)); return;
    case LAM: {
      putf("λv%u.", DEPTH);
      LAMS[DEPTH++] = loc;
      show(RT->heap.at[loc]);
      DEPTH--;
      return;
    }
    case SUP: putf("&%u{", EXT(t)); show(RT->heap.at[loc]); put(","); show(RT->heap.at[loc + 1]); put("}"); return;
    case APP: put("("); show(RT->heap.at[loc]); put(" "); show(RT->heap.at[loc + 1]); put(")"); return;
    case DRY: put("^("); show(RT->heap.at[loc]); put(" "); show(RT->heap.at[loc + 1]); put(")"); return;
    case OP2: put("("); show(RT->heap.at[loc]); put(" "); put(op_name(EXT(t) % OP_COUNT));
              put(" "); show(RT->heap.at[loc + 1]); put(")"); return;
    case EQL: put("("); show(RT->heap.at[loc]); put(" === "); show(RT->heap.at[loc + 1]); put(")"); return;
    case AND: put("("); show(RT->heap.at[loc]); put(" .&. "); show(RT->heap.at[loc + 1]); put(")"); return;
    case OR:  put("("); show(RT->heap.at[loc]); put(" .|. "); show(RT->heap.at[loc + 1]); put(")"); return;
    case RED: put("("); show(RT->heap.at[loc]); put(" ~> "); show(RT->heap.at[loc + 1]); put(")"); return;
    case INC: put("↑"); show(RT->heap.at[loc]); return;
    case USE: put("λ{"); show(RT->heap.at[loc]); put("}"); return;
    case MAT: case SWI: putf(tag == MAT ? "λ{#%u:" : "λ{%u:", EXT(t)); show(RT->heap.at[loc]);
              put(";"); show(RT->heap.at[loc + 1]); put("}"); return;
    default: break;
  }
  if (IS_CTR(tag)) {
    putf("#%u{", EXT(t));
    for (u32 i = 0; i < CTR_ARITY(tag); i++) {
      if (i) put(",");
      show(RT->heap.at[loc + i]);
    }
    put("}");
    return;
  }
  putf("?%u", tag);
}

static const char *str(Term t) {
  OUT_LEN = 0;
  OUT[0]  = 0;
  DEPTH   = 0;
  show(t);
  return OUT;
}

// Resets the worker between tests.
static void fresh(void) {
  W.itrs     = 0;
  W.budget   = ~0ull;
  W.status   = WNF_OK;
  W.dup_mode = MODE;
  W.on_device = 0;
}

// Whether some heap word is still BUSY (a DUP slot taken and not released).
static int busy_left(void) {
  u64 top = heap_used();
  for (u64 i = 1; i < top; i++) {
    if (RT->heap.at[i] == BUSY) return 1;
  }
  return 0;
}

// Normal form of t as a string, checking the interaction count.
static void expect(Term t, const char *want, u64 itrs, int line) {
  fresh();
  RUN_STATUS = WNF_OK;
  Term r = snf(t);
  const char *got = str(r);
  if (busy_left()) {
    FAIL++;
    printf("FAIL line %d: BUSY left in the heap\n", line);
  }
  if (RUN_STATUS != WNF_OK || strcmp(got, want) != 0 || W.itrs != itrs) {
    FAIL++;
    printf("FAIL line %d: got %s (%llu itrs, status %u), want %s (%llu itrs)\n",
           line, got, (unsigned long long)W.itrs, RUN_STATUS, want, (unsigned long long)itrs);
  } else {
    PASS++;
  }
}
#define EXPECT(t, want, itrs) expect((t), (want), (itrs), __LINE__)

// Interaction families
// ====================
// Counts are HVM4's (hvm4ref -s on the program in the comment).

#define K_FOO 100
#define K_BAR 101
#define K_P   102
#define L_A   1
#define L_B   2

static void test_app(void) {
  u32 x;
  // (λx.x)(5)
  x = slot(); EXPECT(app(lam(x, var(x)), num(5)), "5", 1);
  // (λx.7)(5)
  EXPECT(app(lam_era(num(7)), num(5)), "7", 1);
  // &A{λx.x, λy.(y+1)}(5)
  x = slot(); u32 y = slot();
  EXPECT(app(sup(L_A, lam(x, var(x)), lam(y, op2(OP_ADD, var(y), num(1)))), num(5)),
         "&1{5,6}", 5);
  // &{}(5)
  EXPECT(app(era(), num(5)), "&{}", 1);
  // ^foo(1)
  EXPECT(app(nam(7), num(1)), "^(^7 1)", 0);
  // ^(^foo 1)(2): a DRY applied stays dry
  EXPECT(app(dry(nam(7), num(1)), num(2)), "^(^(^7 1) 2)", 0);
  // ↑f(x) -> ↑(f x)
  x = slot(); EXPECT(app(inc(lam(x, var(x))), num(3)), "↑3", 2);
  // a free variable applied is stuck
  x = slot(); EXPECT(lam(x, app(var(x), num(1))), "λv0.(v0 1)", 0);

  // errors: 5(1), #Foo{}(1)
  fresh();
  Term t = app(num(5), num(1));
  Term r = wnf_run(&W, t);
  CHECK(W.status == WNF_ERROR && W.err == ERR_APP_NUM);
  CHECK(r == t && RT->heap.at[VAL(t)] == num(5));
  fresh();
  t = app(app(ctr0(K_FOO), num(1)), num(2));
  r = wnf_run(&W, t);
  CHECK(W.status == WNF_ERROR && W.err == ERR_APP_CTR);
  CHECK_STR(str(r), "((#100{} 1) 2)");
}

static void test_mat(void) {
  u32 a, b, x, n;
  // λ{#Foo: λa.λb.(a+b); λx.0}(#Foo{1,2})
  a = slot(); b = slot(); x = slot();
  EXPECT(app(mat(K_FOO, lam(a, lam(b, op2(OP_ADD, var(a), var(b)))), lam(x, num(0))),
             ctr2(K_FOO, num(1), num(2))), "3", 4);
  // λ{#Foo: λa.λb.(a+b); λx.7}(#Bar{1,2})
  a = slot(); b = slot();
  EXPECT(app(mat(K_FOO, lam(a, lam(b, op2(OP_ADD, var(a), var(b)))), lam_era(num(7))),
             ctr2(K_BAR, num(1), num(2))), "7", 2);
  // nullary constructor hit
  EXPECT(app(mat(K_FOO, num(9), lam_era(num(7))), ctr0(K_FOO)), "9", 1);
  // λ{0: 10; λn.(n*2)}(0) and (4)
  n = slot(); EXPECT(app(swi(0, num(10), lam(n, op2(OP_MUL, var(n), num(2)))), num(0)), "10", 1);
  n = slot(); EXPECT(app(swi(0, num(10), lam(n, op2(OP_MUL, var(n), num(2)))), num(4)), "8", 3);
  // λ{λx.(x+1)}(4)
  x = slot(); EXPECT(app(use(lam(x, op2(OP_ADD, var(x), num(1)))), num(4)), "5", 3);
  // λ{0: 10; λn.(n*2)}(&A{0, 3})
  n = slot();
  EXPECT(app(swi(0, num(10), lam(n, op2(OP_MUL, var(n), num(2)))), sup(L_A, num(0), num(3))),
         "&1{10,6}", 11);
  // λ{0: 10; λn.(n*2)}(&{})
  n = slot(); EXPECT(app(swi(0, num(10), lam(n, op2(OP_MUL, var(n), num(2)))), era()), "&{}", 1);
  // matching a name is stuck (dry)
  EXPECT(app(mat(K_FOO, num(1), num(2)), nam(5)), "^(λ{#100:1;2} ^5)", 0);
  // λ{..}(↑x) -> ↑(λ{..} x)
  EXPECT(app(swi(0, num(10), num(11)), inc(num(0))), "↑10", 2);
  // USE on a SUP, ERA, INC
  x = slot();
  EXPECT(app(use(lam(x, op2(OP_ADD, var(x), num(1)))), sup(L_A, num(1), num(2))), "&1{2,3}", 11);
  EXPECT(app(use(lam_era(num(1))), era()), "&{}", 1);
  // the argument's guard is dropped: λ{0:1;2}(g ~> 0)
  EXPECT(app(swi(0, num(1), num(2)), red(nam(3), num(0))), "1", 1);
}

static void test_dup(void) {
  u32 d, x;
  // !F&A = λx.(x+1); #P{F₀(1), F₁(2)}
  x = slot(); d = dup(lam(x, op2(OP_ADD, var(x), num(1))));
  EXPECT(ctr2(K_P, app(dp0(L_A, d), num(1)), app(dp1(L_A, d), num(2))), "#102{2,3}", 8);
  // !X&A = &A{1,2}; #P{X₀,X₁}
  d = dup(sup(L_A, num(1), num(2)));
  EXPECT(ctr2(K_P, dp0(L_A, d), dp1(L_A, d)), "#102{1,2}", 1);
  // !X&A = &B{1,2}
  d = dup(sup(L_B, num(1), num(2)));
  EXPECT(ctr2(K_P, dp0(L_A, d), dp1(L_A, d)), "#102{&2{1,2},&2{1,2}}", 3);
  // !X&A = 3; (X₀ + X₁)
  d = dup(num(3));
  EXPECT(op2(OP_ADD, dp0(L_A, d), dp1(L_A, d)), "6", 2);
  // !X&A = &{}
  d = dup(era());
  EXPECT(ctr2(K_P, dp0(L_A, d), dp1(L_A, d)), "#102{&{},&{}}", 1);
  // !X&A = #Foo{1,2}
  d = dup(ctr2(K_FOO, num(1), num(2)));
  EXPECT(ctr2(K_P, dp0(L_A, d), dp1(L_A, d)), "#102{#100{1,2},#100{1,2}}", 3);
  // !X&A = ^foo
  d = dup(nam(9));
  EXPECT(ctr2(K_P, dp0(L_A, d), dp1(L_A, d)), "#102{^9,^9}", 1);
  // !X&A = ^(^foo 1)
  d = dup(dry(nam(9), num(1)));
  EXPECT(ctr2(K_P, dp0(L_A, d), dp1(L_A, d)), "#102{^(^9 1),^(^9 1)}", 3);
  // !X&A = (^foo ~> 1)
  d = dup(red(nam(9), num(1)));
  EXPECT(ctr2(K_P, dp0(L_A, d), dp1(L_A, d)), "#102{(^9 ~> 1),(^9 ~> 1)}", 3);
  // !X&A = λ{0:1;2}: a node copied field by field
  d = dup(swi(0, num(1), num(2)));
  EXPECT(ctr2(K_P, app(dp0(L_A, d), num(0)), app(dp1(L_A, d), num(0))), "#102{1,1}", 4);
  // !X&A = λx.7 (erasing lambda)
  d = dup(lam_era(num(7)));
  EXPECT(ctr2(K_P, app(dp0(L_A, d), num(0)), app(dp1(L_A, d), num(0))), "#102{7,7}", 4);
  // stuck expression: λx. !Y&A = x; #P{Y₀,Y₁}
  x = slot(); d = dup(var(x));
  EXPECT(lam(x, ctr2(K_P, dp0(L_A, d), dp1(L_A, d))), "λv0.#102{d0_1,d1_1}", 0);
}

static void test_op2(void) {
  // ((3 + 4) * (10 - 2))
  EXPECT(op2(OP_MUL, op2(OP_ADD, num(3), num(4)), op2(OP_SUB, num(10), num(2))), "56", 3);
  EXPECT(op2(OP_ADD, sup(L_A, num(1), num(2)), num(10)), "&1{11,12}", 4);
  EXPECT(op2(OP_ADD, num(10), sup(L_A, num(1), num(2))), "&1{11,12}", 4);
  EXPECT(op2(OP_ADD, era(), num(10)), "&{}", 1);
  EXPECT(op2(OP_ADD, num(10), era()), "&{}", 1);
  EXPECT(op2(OP_ADD, inc(num(3)), num(4)), "↑7", 2);
  EXPECT(op2(OP_ADD, num(3), inc(num(4))), "↑7", 2);
  EXPECT(op2(OP_SUB, num(3), red(nam(1), num(1))), "2", 1);
  // every operator
  u32 want[OP_COUNT] = {
    [OP_ADD] = 13, [OP_SUB] = 7,  [OP_MUL] = 30, [OP_DIV] = 3,  [OP_MOD] = 1,
    [OP_AND] = 2,  [OP_OR]  = 11, [OP_XOR] = 9,  [OP_LSH] = 80, [OP_RSH] = 1,
    [OP_NOT] = ~3u, [OP_EQ] = 0,  [OP_NE]  = 1,  [OP_LT]  = 0,  [OP_LE]  = 0,
    [OP_GT]  = 1,  [OP_GE]  = 1,
  };
  for (u32 op = 0; op < OP_COUNT; op++) {
    char b[16];
    snprintf(b, sizeof b, "%u", want[op]);
    EXPECT(op2(op, num(10), num(3)), b, 1);
  }
  EXPECT(op2(OP_DIV, num(1), num(0)), "0", 1);
  EXPECT(op2(OP_MOD, num(1), num(0)), "0", 1);
  EXPECT(op2(OP_LSH, num(1), num(33)), "2", 1);
  // stuck on a free variable, both sides
  u32 x = slot();
  EXPECT(lam(x, op2(OP_ADD, var(x), num(1))), "λv0.(v0 + 1)", 0);
  x = slot();
  EXPECT(lam(x, op2(OP_ADD, num(1), var(x))), "λv0.(1 + v0)", 0);
  // primitive arithmetic: %mul(6, 7)
  EXPECT(node2(PRI, PRIM_OP + OP_MUL, num(6), num(7)), "42", 1);
}

static void test_eql(void) {
  EXPECT(eql(num(3), num(3)), "1", 1);
  EXPECT(eql(num(3), num(4)), "0", 1);
  EXPECT(eql(ctr2(K_FOO, num(1), num(2)), ctr2(K_FOO, num(1), num(2))), "1", 4);
  EXPECT(eql(ctr2(K_FOO, num(1), num(2)), ctr2(K_BAR, num(1), num(2))), "0", 1);
  u32 x = slot(), y = slot();
  EXPECT(eql(lam(x, var(x)), lam(y, var(y))), "1", 2);
  EXPECT(eql(any(), num(3)), "1", 1);
  EXPECT(eql(num(3), any()), "1", 1);
  EXPECT(eql(era(), num(3)), "&{}", 1);
  EXPECT(eql(num(3), era()), "&{}", 1);
  EXPECT(eql(sup(L_A, num(1), num(2)), num(2)), "&1{0,1}", 4);
  EXPECT(eql(num(2), sup(L_A, num(1), num(2))), "&1{0,1}", 4);
  EXPECT(eql(nam(4), nam(4)), "1", 1);
  EXPECT(eql(nam(4), nam(5)), "0", 1);
  EXPECT(eql(num(1), nam(5)), "0", 1);
  EXPECT(eql(dry(nam(1), num(2)), dry(nam(1), num(2))), "1", 4);
  EXPECT(eql(use(num(1)), use(num(1))), "1", 2);
  EXPECT(eql(mat(K_FOO, num(1), num(2)), mat(K_FOO, num(1), num(2))), "1", 4);
  // #SUC{0} === #SUC{0}: ↑(0 === 0)
  EXPECT(eql(ctr1(WNF_NAM_SUC, num(0)), ctr1(WNF_NAM_SUC, num(0))), "↑1", 2);
  EXPECT(eql(inc(num(1)), num(1)), "↑1", 2);
  // AND / OR
  EXPECT(and_(eql(num(1), num(1)), eql(num(2), num(3))), "0", 3);
  EXPECT(and_(num(0), num(9)), "0", 1);
  EXPECT(or_(eql(num(1), num(2)), eql(num(2), num(2))), "1", 3);
  EXPECT(or_(num(5), num(9)), "1", 1);
  EXPECT(and_(era(), num(1)), "&{}", 1);
  EXPECT(or_(sup(L_A, num(0), num(1)), num(7)), "&1{7,1}", 4);
  EXPECT(and_(inc(num(1)), num(7)), "↑7", 2);
}

static void test_dyn(void) {
  // &(3){1,2}
  EXPECT(dsu(num(3), num(1), num(2)), "&3{1,2}", 1);
  EXPECT(dsu(era(), num(1), num(2)), "&{}", 1);
  EXPECT(dsu(sup(L_A, num(3), num(4)), num(1), num(2)), "&1{&3{1,2},&4{1,2}}", 5);
  EXPECT(dsu(inc(num(3)), num(1), num(2)), "↑&3{1,2}", 2);
  // !X&(3) = 5; (X₀ + X₁): body is λa.λb.(a + b)
  u32 a = slot(), b = slot();
  EXPECT(ddu(num(3), num(5), lam(a, lam(b, op2(OP_ADD, var(a), var(b))))), "10", 5);
  a = slot(); b = slot();
  EXPECT(ddu(era(), num(5), lam(a, lam(b, op2(OP_ADD, var(a), var(b))))), "&{}", 1);
  // a label that is not a number leaves the DSU stuck (as HVM4)
  EXPECT(dsu(nam(1), num(1), num(2)), "?21", 0);
}

static void test_red(void) {
  u32 x, y, f;
  // ((λx.x ~> λy.(y+1)) 4) -> ((λx.x 4) ~> 5)  APP-RED-LAM
  x = slot(); y = slot();
  EXPECT(app(red(lam(x, var(x)), lam(y, op2(OP_ADD, var(y), num(1)))), num(4)),
         "(4 ~> 5)", 3);
  // ((^f ~> λ{0:1;2}) 0) -> (^f 0) ~> 1
  EXPECT(app(red(nam(1), swi(0, num(1), num(2))), num(0)), "(^(^1 0) ~> 1)", 1);
  // ((^f ~> λ{0:1;λn.n}) 3) -> ((λp.(^f p) ~> λn.n) 3) -> APP-RED-LAM
  f = slot();
  EXPECT(app(red(nam(1), swi(0, num(1), lam(f, var(f)))), num(3)),
         "(^(^1 3) ~> 3)", 3);
  // ((^f ~> λ{#Foo:λa.λb.a; 0}) #Foo{1,2})
  x = slot(); y = slot();
  EXPECT(app(red(nam(1), mat(K_FOO, lam(x, lam(y, var(x))), num(0))), ctr2(K_FOO, num(1), num(2))),
         "(^(^1 #100{1,2}) ~> 1)", 5);
  // ((^f ~> &{}) 1), ((^f ~> ^g) 1), ((^f ~> #K{}) 1)
  EXPECT(app(red(nam(1), era()), num(1)), "&{}", 1);
  EXPECT(app(red(nam(1), nam(2)), num(1)), "^((^1 ~> ^2) 1)", 1);
  EXPECT(app(red(nam(1), ctr0(K_FOO)), num(1)), "^((^1 ~> #100{}) 1)", 1);
  // ((^f ~> &A{λx.x, λy.y}) 1)
  x = slot(); y = slot();
  EXPECT(app(red(nam(1), sup(L_A, lam(x, var(x)), lam(y, var(y)))), num(1)),
         "&1{(^(^1 1) ~> 1),(^(^1 1) ~> 1)}", 5);
  // ((^f ~> λ{λx.x}) 2) -> (^f 2) ~> (λx.x 2)
  x = slot();
  EXPECT(app(red(nam(1), use(lam(x, var(x)))), num(2)), "(^(^1 2) ~> 2)", 2);
  // ((^f ~> λ{0:1;2}) &{})
  EXPECT(app(red(nam(1), swi(0, num(1), num(2))), era()), "&{}", 1);
  // ((^f ~> ↑g) 1) -> ↑((^f ~> g) 1)
  EXPECT(app(red(nam(1), inc(nam(2))), num(1)), "↑^((^1 ~> ^2) 1)", 2);
  // ((^f ~> (^g ~> ^h)) 1) -> ((^f 1) ~> ((^g ~> ^h) 1))
  EXPECT(app(red(nam(1), red(nam(2), nam(3))), num(1)),
         "(^(^1 1) ~> ^((^2 ~> ^3) 1))", 2);
}

static void test_uns(void) {
  // ! f = λ v; #P{f(1), v}: body λf.λv.#P{(f 1), v}
  u32 f = slot(), v = slot();
  Term body = lam(f, lam(v, ctr2(K_P, app(var(f), num(1)), var(v))));
  fresh();
  Term r = snf(node1(UNS, 0, body));
  CHECK(W.itrs == 4);
  CHECK(TAG(r) == C00 + 2);
  Term k = RT->heap.at[VAL(r)];
  CHECK(TAG(k) == LAM && TAG(RT->heap.at[VAL(k)]) == NUM && VAL(RT->heap.at[VAL(k)]) == 1);
}

// Book: @id = λx.x ; @k = λa.λb.a ; @main = @k(@id(5), 6)
static void test_book(void) {
  u32 id_id = 1, id_k = 2, id_none = 3;
  u32 t = nodes(2);                 // λx.x: root, body slot
  RT->heap.at[t + 0] = TERM(LAM, 0, t + 1);
  RT->heap.at[t + 1] = TERM(VAR, 0, t + 1);
  RT->heap.book[id_id] = t; RT->heap.book_len[id_id] = 2;
  t = nodes(3);                     // λa.λb.a
  RT->heap.at[t + 0] = TERM(LAM, 0, t + 1);
  RT->heap.at[t + 1] = TERM(LAM, LAM_ERA, t + 2);
  RT->heap.at[t + 2] = TERM(VAR, 0, t + 1);
  RT->heap.book[id_k] = t; RT->heap.book_len[id_k] = 3;
  u32 cnt = W.book_cnt;
  W.book_cnt = 16;
  Term k = TERM(REF, id_k, 0);
  EXPECT(app(app(k, app(TERM(REF, id_id, 0), num(5))), num(6)), "5", 3);
  // the template is untouched and can be used again
  EXPECT(app(app(k, num(1)), num(2)), "1", 2);
  // undefined references are stuck names
  EXPECT(app(TERM(REF, id_none, 0), num(1)), "(@3 1)", 0);
  W.book_cnt = cnt;
}

// wnf_instance on templates of every length around its batches of four:
// each word copied, relocated when it has a location, the template kept.
static void test_instance(void) {
  for (u32 len = 1; len <= 11; len++) {
    u32 t = nodes(len);
    RT->heap.at[t] = len > 1 ? TERM(LAM, 0, t + 1) : num(7);
    for (u32 i = 1; i < len; i++) {
      // alternately a word with a location (pointing inside) and one without
      RT->heap.at[t + i] = (i & 1) ? TERM(VAR, 0, t + len - i) : num(100 + i);
    }
    Term root = wnf_instance(&W, RT->heap.at[t], t + 1, t + len);
    if (len == 1) {
      CHECK(root == num(7));
      continue;
    }
    u32 at  = VAL(root);   // the root points at word 1, copied first
    u32 off = at - (t + 1);
    CHECK(TAG(root) == LAM && at != t);
    u32 ok = 1;
    for (u32 i = 1; i < len; i++) {
      Term want = (i & 1) ? TERM(VAR, 0, t + len - i + off) : num(100 + i);
      Term orig = (i & 1) ? TERM(VAR, 0, t + len - i) : num(100 + i);
      ok &= RT->heap.at[at + i - 1] == want && RT->heap.at[t + i] == orig;
    }
    CHECK(ok);
  }
}

static void test_prim(void) {
  // %log(x) at the head: WNF_HOST, the PRI in place
  fresh();
  Term p = node1(PRI, PRIM_LOG, num(1));
  Term t = app(p, num(2));
  Term r = wnf_run(&W, t);
  CHECK(W.status == WNF_HOST && W.host == p && r == t);
  CHECK(W.host_at == VAL(t) && RT->heap.at[W.host_at] == p);
  // the host substitutes and resumes
  u32 x = slot();
  RT->heap.at[W.host_at] = lam(x, op2(OP_ADD, var(x), num(1)));
  r = wnf_run(&W, r);
  CHECK(W.status == WNF_OK && r == num(3));
  // %gnf on the device is the identity; on the CPU it needs the host
  fresh();
  p = node1(PRI, PRIM_GNF, num(4));
  r = wnf_run(&W, p);
  CHECK(W.status == WNF_HOST && W.host_at == 0 && r == p);
  W.on_device = 1;
  r = wnf_run(&W, p);
  CHECK(W.status == WNF_OK && r == num(4));
  W.on_device = 0;
  // unknown primitive
  fresh();
  r = wnf_run(&W, node1(PRI, PRIM_COUNT + 5, num(1)));
  CHECK(W.status == WNF_ERROR && W.err == ERR_PRIM);
}

// Rebuild
// =======

// A term with a deep WNF stack: nested APPs over OP2 over DUP over SUP,
// with a fresh copy per call.
//   ((λa.λb.(a * b)) ((!X&A = &B{3, 4}; (X₀ + X₁)) + 1)) (2 + (λx.x)(&B{5,6}))
static Term deep(void) {
  u32 a = slot(), b = slot(), x = slot();
  u32 d = dup(sup(L_B, num(3), num(4)));
  Term lhs = op2(OP_ADD, op2(OP_ADD, dp0(L_A, d), dp1(L_A, d)), num(1));
  Term rhs = op2(OP_ADD, num(2), app(lam(x, var(x)), sup(L_B, num(5), num(6))));
  Term f   = lam(a, lam(b, op2(OP_MUL, var(a), var(b))));
  return app(app(f, lhs), rhs);
}

static void test_rebuild_budget(void) {
  fresh();
  RUN_STATUS = WNF_OK;
  Term r0 = snf(deep());
  char want[256];
  snprintf(want, sizeof want, "%s", str(r0));
  u64 total = W.itrs;
  CHECK(RUN_STATUS == WNF_OK && total > 8);

  // stop after b interactions, store back, finish: same result, same count
  // (a step may end one past b: an interaction that clones a number at
  // once counts the clone's DUP-NOD with it, wnf.h WNF_CLONE_NOW)
  for (u64 b = 0; b <= total; b++) {
    fresh();
    W.budget = b;
    Term t = wnf_run(&W, deep());
    CHECK(W.itrs <= b + 1);
    if (W.status == WNF_BUDGET) {
      CHECK(W.itrs == b || W.itrs == b + 1);
    } else {
      CHECK(W.status == WNF_OK);
    }
    W.budget = ~0ull;
    RUN_STATUS = WNF_OK;
    Term r = snf(t);
    CHECK(RUN_STATUS == WNF_OK);
    CHECK_STR(str(r), want);
    CHECK(W.itrs == total);
  }

  // one interaction at a time, storing back after every step
  fresh();
  u32 root = nodes(1);
  RT->heap.at[root] = deep();
  u32 stops = 0;
  for (;;) {
    W.budget   = W.itrs + 1;
    RT->heap.at[root] = wnf_run(&W, RT->heap.at[root]);
    if (W.status == WNF_OK) break;
    CHECK(W.status == WNF_BUDGET);
    if (++stops > 1000) break;
  }
  W.budget = ~0ull;
  Term r = snf(RT->heap.at[root]);
  CHECK_STR(str(r), want);
  CHECK(W.itrs == total);
  CHECK(stops > 3);
}

static void test_rebuild_stack(void) {
  fresh();
  Term r0 = snf(deep());
  char want[256];
  snprintf(want, sizeof want, "%s", str(r0));
  u64 total = W.itrs;
  // a stack of 2 frames: stops, rebuilt; resumed with room, same result
  u32 cap = W.stack_cap;
  for (u32 c = 0; c < 6; c++) {
    fresh();
    W.stack_cap = c;
    Term t = wnf_run(&W, deep());
    u32 st = W.status;
    CHECK(st == WNF_STACK || st == WNF_OK);
    W.stack_cap = cap;
    Term r = snf(t);
    CHECK_STR(str(r), want);
    CHECK(W.itrs == total);
  }
  W.stack_cap = cap;
}

// DUP_SHARED: a slot held by someone else (BUSY) defers; released, resumes.
static void test_defer(void) {
  u32 d = dup(op2(OP_ADD, num(1), num(2)));
  Term t = op2(OP_MUL, num(10), app(lam_era(dp0(L_A, d)), num(0)));
  Term e = RT->heap.at[d];
  RT->heap.at[d] = BUSY;
  fresh();
  W.dup_mode = DUP_SHARED;
  Term r = wnf_run(&W, t);
  CHECK(W.status == WNF_DEFER && W.defer == REGION_OF(&W, d));
  CHECK(RT->heap.at[d] == BUSY);        // not ours: untouched
  // the other holder releases it; we resume
  RT->heap.at[d] = e;
  r = wnf_run(&W, r);
  CHECK(W.status == WNF_OK && r == num(30));
  CHECK(IS_SUB(RT->heap.at[d]) && NO_SUB(RT->heap.at[d]) == num(3));
  // the twin reads the SUB without taking
  r = wnf_run(&W, dp1(L_A, d));
  CHECK(W.status == WNF_OK && r == num(3));

  // holding a slot when the budget ends: the partial expression goes back
  d = dup(op2(OP_ADD, op2(OP_ADD, num(1), num(2)), num(3)));
  fresh();
  W.dup_mode = DUP_SHARED;
  W.budget = 1;
  r = wnf_run(&W, dp0(L_A, d));
  CHECK(W.status == WNF_BUDGET && r == dp0(L_A, d));
  CHECK(RT->heap.at[d] != BUSY && TAG(RT->heap.at[d]) == OP2);
  W.budget = ~0ull;
  r = wnf_run(&W, r);
  CHECK(W.status == WNF_OK && r == num(6));
  r = wnf_run(&W, dp1(L_A, d));
  CHECK(r == num(6));

  // DUP_OWNER: a slot of another region defers to its owner
  d = dup(num(7));
  fresh();
  W.dup_mode     = DUP_OWNER;
  W.region_shift = 4;
  W.owner        = REGION_OF(&W, d) + 1;
  r = wnf_run(&W, dp0(L_A, d));
  CHECK(W.status == WNF_DEFER && W.defer == REGION_OF(&W, d) && RT->heap.at[d] == num(7));
  W.owner = REGION_OF(&W, d);
  r = wnf_run(&W, r);
  CHECK(W.status == WNF_OK && r == num(7) && RT->heap.at[d] == AS_SUB(num(7)));
  W.region_shift = 31;
  W.owner = 0;
}

// A chain of clones of one leaf (the shape OP2-SUP leaves: a DUP slot
// holding a DP0/DP1 of another): each slot gets the leaf's SUB, each
// DUP-NOD counted once, in every mode, whether the top is the raw leaf or
// a SUB left for this side; a held slot on the way defers and is put back.
static void test_dup_chain(void) {
  u32 modes[3] = {DUP_SOLO, DUP_SHARED, DUP_ATOMIC};
  for (u32 m = 0; m < 3; m++) {
    // !A = 5; !B = A₀; !C = B₁: C₀ is 5, three DUP-NODs, then C₁, B₀, A₁ free
    u32 a = dup(num(5));
    u32 b = dup(dp0(L_A, a));
    u32 c = dup(dp1(L_A, b));
    fresh();
    W.dup_mode = modes[m];
    Term r = wnf_run(&W, dp0(L_A, c));
    CHECK(W.status == WNF_OK && r == num(5) && W.itrs == 3);
    CHECK(RT->heap.at[a] == AS_SUB(num(5)) && RT->heap.at[b] == AS_SUB(num(5)) && RT->heap.at[c] == AS_SUB(num(5)));
    CHECK(wnf_run(&W, dp1(L_A, c)) == num(5) && wnf_run(&W, dp0(L_A, b)) == num(5));
    CHECK(wnf_run(&W, dp1(L_A, a)) == num(5) && W.itrs == 3);
    // a SUB at the top one slot up, left for this side (a DUP-SUP's):
    // !A = &A{1,2} with A₁ taken; !B = A₀: B₀ is 1, one DUP-NOD
    a = dup(AS_SUB(num(1)));
    b = dup(dp0(L_A, a));
    fresh();
    W.dup_mode = modes[m];
    r = wnf_run(&W, dp0(L_A, b));
    CHECK(W.status == WNF_OK && r == num(1) && W.itrs == 1 && RT->heap.at[b] == AS_SUB(num(1)));
    // two slots up
    a = dup(AS_SUB(num(1)));
    b = dup(dp0(L_A, a));
    c = dup(dp1(L_A, b));
    fresh();
    W.dup_mode = modes[m];
    r = wnf_run(&W, dp1(L_A, c));
    CHECK(W.status == WNF_OK && r == num(1) && W.itrs == 2 && !busy_left());
    // a held slot on the chain: deferred, the chain put back
    if (modes[m] != DUP_SOLO) {
      a = dup(BUSY);
      b = dup(dp0(L_A, a));
      fresh();
      W.dup_mode = modes[m];
      r = wnf_run(&W, dp0(L_A, b));
      CHECK(W.status == WNF_DEFER && RT->heap.at[b] == dp0(L_A, a) && W.itrs == 0);
      RT->heap.at[a] = num(8);
      r = wnf_run(&W, r);
      CHECK(W.status == WNF_OK && r == num(8) && W.itrs == 2);
    }
  }
}

// DUP_SHARED under real contention: two threads force the two sides of the
// same DUP slots (nested: each expression duplicates an inner one), in the
// same order, retrying on WNF_DEFER. Both must see the same numbers.
#define RACE_N 20000
static u32  RACE_SLOT[RACE_N];
static Term RACE_OUT[2][RACE_N];
static u64  RACE_ITRS[2];
static _Atomic u32 RACE_GO;   // both threads start together

static void *race_side(void *arg) {
  RT = TEST_RT;   // a thread of the test's runtime
  u32 side = (u32)(uintptr_t)arg;
  Wnf w;
  cpu_wnf_init(&w, 1u << 12);
  w.dup_mode = DUP_SHARED;
  atomic_fetch_add(&RACE_GO, 1);
  while (atomic_load(&RACE_GO) < 2) {
  }
  for (u32 k = 0; k < RACE_N; k++) {
    u32 i = k;
    Term t = side ? dp1(L_A, RACE_SLOT[i]) : dp0(L_A, RACE_SLOT[i]);
    for (;;) {
      t = wnf_run(&w, t);
      if (w.status != WNF_DEFER) break;
    }
    RACE_OUT[side][i] = w.status == WNF_OK ? t : 0;
  }
  RACE_ITRS[side] = w.itrs;
  cpu_wnf_free(&w);
  return NULL;
}

// Labels of the core's own DUPs (wnf_red_share): distinct, counted down
// from the top of the label space, kept in heap word 0.
static void test_fresh_lab(void) {
  Term at0 = RT->heap.at[0];
  u32  a   = wnf_fresh_lab(&W);
  u32  b   = wnf_fresh_lab(&W);
  CHECK(a == (u32)(EXT_MASK - (at0 & EXT_MASK)));
  CHECK(b == a - 1);
  CHECK(RT->heap.at[0] == at0 + 2);
}

static void test_race(int chains) {
  // slot i: !X&A = ((!Y&B = i; (Y₀ + Y₁)) * 3); the inner Y's twin is
  // dropped into an erasing lambda so both inner sides get forced. With
  // chains, slot i is a chain of clones of the number 6i instead: both
  // sides race up it, and each DUP-NOD is counted once.
  for (u32 i = 0; i < RACE_N; i++) {
    if (chains) {
      u32 s = dup(num(6 * i));
      for (u32 k = 0; k < i % 40; k++) {
        s = dup(k % 2 ? dp1(L_B, s) : dp0(L_B, s));
      }
      RACE_SLOT[i] = s;
      continue;
    }
    u32 in = dup(num(i));
    Term e = op2(OP_MUL, op2(OP_ADD, dp0(L_B, in), dp1(L_B, in)), num(3));
    RACE_SLOT[i] = dup(e);
  }
  pthread_t th[2];
  for (uintptr_t s = 0; s < 2; s++) {
    pthread_create(&th[s], NULL, race_side, (void *)s);
  }
  for (u32 s = 0; s < 2; s++) {
    pthread_join(th[s], NULL);
  }
  int ok = 1;
  for (u32 i = 0; i < RACE_N; i++) {
    Term want = num(6 * i);
    if (RACE_OUT[0][i] != want || RACE_OUT[1][i] != want) ok = 0;
  }
  CHECK(ok);
  CHECK(!busy_left());
  if (chains) {   // 1 + i % 40 DUP-NODs for slot i, whoever ran them
    u64 want = 0;
    for (u32 i = 0; i < RACE_N; i++) {
      want += 1 + i % 40;
    }
    CHECK(RACE_ITRS[0] + RACE_ITRS[1] == want);
  }
}

// Heap exhausted: WNF_OOM with a valid rebuilt term.
static void test_oom(void) {
  // sup tree of depth 30 under a lambda: (λx. !X&A=x; &B{X₀,X₁})... grows
  // without end: @grow = λx.(@grow &A{x,x}) as a book entry
  u32 gid = 4;
  u32 t = nodes(6);
  // root: λx.(@grow &A{x0, x1}) with !X&A = x   -- words: [root][body][app][app+1][sup][sup+1]
  RT->heap.at[t + 0] = TERM(LAM, 0, t + 1);
  RT->heap.at[t + 1] = TERM(APP, 0, t + 2);
  RT->heap.at[t + 2] = TERM(REF, gid, 0);
  RT->heap.at[t + 3] = TERM(SUP, L_A, t + 4);
  RT->heap.at[t + 4] = TERM(VAR, 0, t + 1);
  RT->heap.at[t + 5] = num(0);
  RT->heap.book[gid] = t; RT->heap.book_len[gid] = 6;
  u32 cnt = W.book_cnt;
  W.book_cnt = 16;
  fresh();
  W.budget = ~0ull;
  u64 top = RT->heap.cap;
  Term r = wnf_run(&W, app(TERM(REF, gid, 0), num(1)));
  CHECK(W.status == WNF_OOM);
  CHECK(TAG(r) == APP);
  CHECK(heap_used() <= top);
  W.book_cnt = cnt;
}

// The core's builtin nicks agree with names.c's.
static void test_consts(void) {
  CHECK(WNF_NAM_SUC == CTR_SUC && WNF_NAM_CON == CTR_CON);
}

// A number cloned at once (wnf.h, WNF_CLONE_NOW): OP2-SUP, OP2-NUM-SUP and
// APP-SUP put the number itself in both copies, with no DUP slot between,
// and count the DUP-NOD that slot would have cost (HVM4's count).
static void test_clone_now(void) {
  // &A{1,2} * 7 -> &A{1 * 7, 2 * 7}
  fresh();
  Term r = wnf_run(&W, op2(OP_MUL, sup(L_A, num(1), num(2)), num(7)));
  CHECK(W.status == WNF_OK && TAG(r) == SUP && W.itrs == 2);
  for (u32 i = 0; i < 2; i++) {
    Term k = RT->heap.at[VAL(r) + i];
    CHECK(TAG(k) == OP2 && RT->heap.at[VAL(k) + 1] == num(7));
  }
  // 100 - &A{1,2} -> &A{100 - 1, 100 - 2}
  fresh();
  r = wnf_run(&W, op2(OP_SUB, num(100), sup(L_A, num(1), num(2))));
  CHECK(W.status == WNF_OK && TAG(r) == SUP && W.itrs == 2);
  for (u32 i = 0; i < 2; i++) {
    Term k = RT->heap.at[VAL(r) + i];
    CHECK(TAG(k) == OP2 && RT->heap.at[VAL(k)] == num(100));
  }
  // (&A{f,g} 10) -> &A{(f 10), (g 10)}
  fresh();
  u32 a = slot(), b = slot();
  r = wnf_run(&W, app(sup(L_A, lam(a, var(a)), lam(b, var(b))), num(10)));
  CHECK(W.status == WNF_OK && TAG(r) == SUP && W.itrs == 2);
  for (u32 i = 0; i < 2; i++) {
    Term k = RT->heap.at[VAL(r) + i];
    CHECK(TAG(k) == APP && RT->heap.at[VAL(k) + 1] == num(10));
  }
  CHECK_STR(str(snf(r)), "&1{10,10}");   // L_A prints as its number
}

// A SUP rising through a run of operations with numbers on the right
// (wnf.h, the OP2 frame's lift): ((&A{1,2} * 7) + 3) % 1009 is three
// levels, an OP2-SUP and its clone each, one SUP written for the three.
static Term lift_run(void) {
  Term s = sup(L_A, num(1), num(2));
  return op2(OP_MOD, op2(OP_ADD, op2(OP_MUL, s, num(7)), num(3)), num(1009));
}

static void test_lift_run(void) {
  fresh();
  Term t0 = lift_run();
  if (W.end - W.next < 2 * WNF_RESERVE) (void)wnf_room(&W, 2 * WNF_RESERVE);
  u32  at = W.next;                           // no refill in this run
  Term r  = wnf_run(&W, t0);
  CHECK(W.status == WNF_OK && TAG(r) == SUP && EXT(r) == L_A && W.itrs == 6);
  CHECK(W.next - at == 3 * 2 + 2);            // a copy a level, one SUP
  for (u32 i = 0; i < 2; i++) {
    Term k = RT->heap.at[VAL(r) + i];                // ((x * 7) + 3) % 1009
    CHECK(TAG(k) == OP2 && EXT(k) == OP_MOD && RT->heap.at[VAL(k) + 1] == num(1009));
    Term a = RT->heap.at[VAL(k)];
    CHECK(TAG(a) == OP2 && EXT(a) == OP_ADD && RT->heap.at[VAL(a) + 1] == num(3));
    Term m = RT->heap.at[VAL(a)];
    CHECK(TAG(m) == OP2 && EXT(m) == OP_MUL && RT->heap.at[VAL(m)] == num(1 + i));
  }
  CHECK_STR(str(snf(r)), "&1{10,17}");
  // stopped at every count: the term left goes on to the same result
  for (u64 b = 0; b <= 6; b++) {
    fresh();
    W.budget = b;
    Term t = wnf_run(&W, lift_run());
    CHECK(W.itrs == (b + 1) / 2 * 2);   // a level counts 2, as unlifted
    CHECK(W.status == (W.itrs < 6 ? WNF_BUDGET : WNF_OK));
    W.budget = ~0ull;
    CHECK_STR(str(snf(t)), "&1{10,17}");
    CHECK(W.itrs == 12);
  }
  // A number on the left (1000 - ...) continues the run: OP2-NUM-SUP's
  // copies, the left one in that frame's node too.
  fresh();
  t0 = op2(OP_SUB, num(1000), lift_run());
  if (W.end - W.next < 2 * WNF_RESERVE) (void)wnf_room(&W, 2 * WNF_RESERVE);
  at = W.next;
  r  = wnf_run(&W, t0);
  CHECK(W.status == WNF_OK && TAG(r) == SUP && W.itrs == 8);
  CHECK(W.next - at == 4 * 2 + 2);
  for (u32 i = 0; i < 2; i++) {
    Term k = RT->heap.at[VAL(r) + i];                // 1000 - (...)
    CHECK(TAG(k) == OP2 && EXT(k) == OP_SUB && RT->heap.at[VAL(k)] == num(1000));
    CHECK(TAG(RT->heap.at[VAL(k) + 1]) == OP2 && EXT(RT->heap.at[VAL(k) + 1]) == OP_MOD);
  }
  CHECK_STR(str(snf(r)), "&1{990,983}");
  // Work on the right (... * (2 + 2)) ends the run: OP2-SUP clones the
  // work through a DUP slot, as before.
  fresh();
  Term w = op2(OP_ADD, num(2), num(2));
  r = wnf_run(&W, op2(OP_MUL, op2(OP_ADD, sup(L_A, num(1), num(2)), num(3)), w));
  CHECK(W.status == WNF_OK && TAG(r) == SUP && W.itrs == 3);
  CHECK_STR(str(snf(r)), "&1{16,20}");
}

// Calls to a definition that is a match (wnf.h, F_MREF): the argument is
// reduced first and only the case it takes is copied from the book. Each
// call must give what the same match built by hand gives, result and
// count, in every pass (stopped after every interaction too, where a walk
// down the cases stops half way); the whole match where the argument is
// no number or constructor.
static const char *CASE_SRC =
  "@f = λ{0: λx.(x + 100); 1: λx.(x * 2); λn.λx.(n + x)}\n"
  "@g = λ{#A: λa.(a + 1); #B: λa.λb.(a * b); λc.#Z{c}}\n";
static u32 F_ID, G_ID, K_A, K_B, K_C, K_Z;

static void case_book(void) {
  if (F_ID) return;
  CHECK(parse_text("case.hvm4", CASE_SRC) == 0);
  F_ID = table_find("f", 1);
  G_ID = table_find("g", 1);
  K_A  = ctr_id("A", 1);
  K_B  = ctr_id("B", 1);
  K_C  = ctr_id("C", 1);
  K_Z  = ctr_id("Z", 1);
  CHECK(F_ID != ~0u && G_ID != ~0u);
  W.book_cnt = table_count();
}

static Term f_by_hand(void) {
  u32 x0 = slot(), x1 = slot(), n = slot(), x2 = slot();
  return swi(0, lam(x0, op2(OP_ADD, var(x0), num(100))),
         swi(1, lam(x1, op2(OP_MUL, var(x1), num(2))),
             lam(n, lam(x2, op2(OP_ADD, var(n), var(x2))))));
}

static Term g_by_hand(void) {
  u32 a0 = slot(), a1 = slot(), b1 = slot(), c = slot();
  return mat(K_A, lam(a0, op2(OP_ADD, var(a0), num(1))),
         mat(K_B, lam(a1, lam(b1, op2(OP_MUL, var(a1), var(b1)))),
             lam(c, ctr1(K_Z, var(c)))));
}

// t must give what ref gives: the same normal form and count.
static void expect_same(Term t, Term ref, int line) {
  fresh();
  RUN_STATUS = WNF_OK;
  Term r = snf(ref);
  char want[512];
  snprintf(want, sizeof want, "%s", str(r));
  expect(t, want, W.itrs, line);
}
#define EXPECT_SAME(t, ref) expect_same((t), (ref), __LINE__)

static Term f_arg(u32 i) {
  switch (i) {
    case 0:  return num(0);
    case 1:  return num(1);
    case 2:  return num(7);                       // past both cases
    case 3:  return op2(OP_SUB, num(3), num(2));  // work first
    case 4:  return sup(L_A, num(0), num(7));     // the whole match
    case 5:  return era();
    default: return inc(num(1));
  }
}

static Term g_arg(u32 i) {
  switch (i) {
    case 0:  return ctr1(K_A, num(3));
    case 1:  return ctr2(K_B, num(3), num(4));
    case 2:  return ctr1(K_C, num(9));            // the default
    case 3:  return num(0);                       // a number: no case
    default: return sup(L_B, ctr1(K_A, num(1)), ctr2(K_B, num(2), num(3)));
  }
}

static void test_case_copy(void) {
  case_book();
  Term f = TERM(REF, F_ID, 0), g = TERM(REF, G_ID, 0);
  for (u32 i = 0; i < 7; i++) {
    EXPECT_SAME(app(app(f, f_arg(i)), num(5)), app(app(f_by_hand(), f_arg(i)), num(5)));
  }
  for (u32 i = 0; i < 5; i++) {
    EXPECT_SAME(app(g, g_arg(i)), app(g_by_hand(), g_arg(i)));
  }
  // through a variable: (λh.(h 1 5) @f)
  u32 h = slot(), k = slot();
  EXPECT_SAME(app(lam(h, app(app(var(h), num(1)), num(5))), f),
              app(lam(k, app(app(var(k), num(1)), num(5))), f_by_hand()));
  // a name: stuck on the whole match
  EXPECT_SAME(app(g, nam(5)), app(g_by_hand(), nam(5)));
}

// The template's header and spans (term.h, "Match templates"), and what a
// call copies: the case taken alone.
static void test_case_words(void) {
  case_book();
  u32  t   = RT->heap.book[F_ID];
  Term hdr = RT->heap.at[t + 1];
  CHECK(TAG(RT->heap.at[t]) == SWI && TAG(hdr) == NUM && EXT(hdr) == 1 && VAL(hdr) == 3);
  u32 lens[3] = {3, 3, 4};                       // λx.(x+100), λx.(x*2), λn.λx.(n+x)
  for (u32 i = 0; i < 3; i++) {
    Term sp = RT->heap.at[t + TPL_SPAN0 + i];
    CHECK(TAG(sp) == NUM && EXT(sp) == lens[i]);
    CHECK(VAL(sp) >= t + TPL_SPAN0 + 3 && VAL(sp) + EXT(sp) <= t + RT->heap.book_len[F_ID]);
  }
  Term calls[3] = {num(0), num(1), num(9)};
  Term want[3]  = {num(105), num(10), num(14)};
  for (u32 i = 0; i < 3; i++) {
    fresh();
    Term c = app(app(TERM(REF, F_ID, 0), calls[i]), num(5));
    if (W.end - W.next < 2 * WNF_RESERVE) (void)wnf_room(&W, 2 * WNF_RESERVE);
    u32  at = W.next;                            // no refill in this run
    Term r  = wnf_run(&W, c);
    CHECK(W.status == WNF_OK && r == want[i]);
    CHECK(W.next - at == lens[i]);
  }
  CHECK(EXT(RT->heap.at[RT->heap.book[G_ID] + 1]) == 1 && VAL(RT->heap.at[RT->heap.book[G_ID] + 1]) == 3);
  // a budget of one stops the walk after the first case: two misses, two
  // APP-LAM and an OP2 in all, as the match built by hand counts
  fresh();
  W.budget = 1;
  Term r = wnf_run(&W, app(app(TERM(REF, F_ID, 0), num(9)), num(5)));
  CHECK(W.status == WNF_BUDGET && W.itrs == 1);
  W.budget = ~0ull;
  r = wnf_run(&W, r);
  CHECK(W.status == WNF_OK && r == num(14) && W.itrs == 5);
  // a long case and a constructor of 16 fields: the copy and the fields'
  // applications come out of the arena in one step, past APPLY's reserve
  char src[512];
  snprintf(src, sizeof src, "@p = λ{#B: λa.λb.λc.λd.λe.λf.λg.λh.λi.λj.λk.λl.λm.λn.λo.λq.\"%030d\"; λz.z}\n", 0);
  CHECK(parse_text("p.hvm4", src) == 0);
  u32  pid  = table_find("p", 1);
  u32  plen = EXT(RT->heap.at[RT->heap.book[pid] + TPL_SPAN0]);
  CHECK(plen > WNF_RESERVE - 2 * 16 && plen <= WNF_RESERVE);
  W.book_cnt = table_count();
  Term flds[16];
  for (u32 i = 0; i < 16; i++) flds[i] = num(i);
  u32 cn = nodes(16);
  memcpy(&RT->heap.at[cn], flds, sizeof flds);
  fresh();
  (void)wnf_room(&W, 2 * WNF_RESERVE);
  W.end = W.next + WNF_RESERVE;                // the reserve, no more
  r = wnf_run(&W, app(TERM(REF, pid, 0), TERM(C00 + 16, K_B, cn)));
  CHECK(W.status == WNF_OK && W.itrs == 17 && W.next <= W.end);
  CHECK(TAG(r) == C00 + 2 && EXT(r) == CTR_CON);
  // a header without spans (ext 0: a case the parser found pointing
  // outside its words): calls copy the whole match, the header left out.
  // @h = λ{0: 10; λ_.20}
  u32 hid = table_id("h", 1);
  u32 t2  = nodes(5);
  RT->heap.at[t2 + 0] = TERM(SWI, 0, t2 + 2);
  RT->heap.at[t2 + 1] = TERM(NUM, 0, 0);
  RT->heap.at[t2 + 2] = num(10);
  RT->heap.at[t2 + 3] = TERM(LAM, LAM_ERA, t2 + 4);
  RT->heap.at[t2 + 4] = num(20);
  RT->heap.book[hid] = t2; RT->heap.book_len[hid] = 5;
  W.book_cnt = table_count();
  for (u32 i = 0; i < 2; i++) {
    fresh();
    if (W.end - W.next < 2 * WNF_RESERVE) (void)wnf_room(&W, 2 * WNF_RESERVE);
    u32 at = W.next;
    r = wnf_run(&W, app(TERM(REF, hid, 0), num(3 * i)));
    CHECK(W.status == WNF_OK && r == num(i ? 20 : 10) && W.itrs == 1 + i);
    CHECK(W.next - at == 3);
  }
}

// The heap runs out while a call copies its case: the run stops with the
// call as it was (its argument reduced) and the count of what it ran.
// @grow's case is a long string, so most of what a step allocates is
// that copy; its 400 digits put the heap's end inside a copy, not in a
// step's 128-word reserve (the last refill takes all the words left).
// Last: it takes a small heap of its own.
static void test_case_oom(void) {
  heap_free();
  CHECK(heap_init(1u << 16) == 0);
  cpu_wnf_init(&W, 1u << 12);
  char src[1024];
  snprintf(src, sizeof src, "@grow = λ{0: λx.@grow(1 - 1, #P{x, \"%0400d\"})}\n", 0);
  CHECK(parse_text("grow.hvm4", src) == 0);
  u32 id = table_find("grow", 4);
  W.book_cnt = table_count();
  fresh();
  Term r = wnf_run(&W, app(app(TERM(REF, id, 0), num(0)), num(1)));
  CHECK(W.status == WNF_OOM);
  // (@grow 0 x): the call, rebuilt around its argument
  Term fn = RT->heap.at[VAL(r)];
  CHECK(TAG(r) == APP && TAG(fn) == APP && RT->heap.at[VAL(fn)] == TERM(REF, id, 0));
  CHECK(RT->heap.at[VAL(fn) + 1] == num(0));
  // each step runs OP2 (1 - 1), APP-MAT-NUM-MAT and APP-LAM
  CHECK(W.itrs > 0 && W.itrs % 3 == 0);
}

// A field held by someone else (BUSY: a host primitive's slot that another
// thread reached through a shared DUP expression) defers too, and the
// rebuild leaves the field to its holder: taken for a value, it made
// `(5 - 2)` look stuck (tests/golden/thread_nf_shared_field.hvm4).
static void test_defer_field(void) {
  Term inner = op2(OP_SUB, num(5), num(2));
  Term t     = op2(OP_MUL, num(10), inner);
  u32  at    = VAL(inner);
  RT->heap.at[at]   = BUSY;
  fresh();
  W.dup_mode = DUP_SHARED;
  Term r = wnf_run(&W, t);
  CHECK(W.status == WNF_DEFER && r == t);
  CHECK(RT->heap.at[at] == BUSY);       // not ours: untouched
  CHECK(W.itrs == 0);
  RT->heap.at[at] = num(5);             // the holder stores its result
  r = wnf_run(&W, r);
  CHECK(W.status == WNF_OK && r == num(30));
  // At the top the caller read the held word itself: returned as it is.
  fresh();
  W.dup_mode = DUP_SHARED;
  r = wnf_run(&W, BUSY);
  CHECK(W.status == WNF_OK && r == BUSY);
}

int main(void) {
  if (heap_init(1u << 24) != 0) {
    printf("heap_init failed\n");
    return 1;
  }
  cpu_rt_open();
  cpu_wnf_init(&W, 1u << 16);
  W.book_cnt = 0;
  test_consts();
  // every family three ways: plain; stopped and rebuilt after every
  // interaction; with shared DUP slots (exchange with BUSY)
  for (int pass = 0; pass < 3; pass++) {
    STEPWISE = pass == 1;
    MODE     = pass == 2 ? DUP_SHARED : DUP_SOLO;
    test_app();
    test_mat();
    test_dup();
    test_op2();
    test_eql();
    test_dyn();
    test_red();
    test_uns();
    test_book();
    test_case_copy();
  }
  STEPWISE = 0;
  MODE     = DUP_SOLO;
  test_instance();
  test_prim();
  test_rebuild_budget();
  test_rebuild_stack();
  test_defer();
  test_defer_field();
  test_clone_now();
  test_lift_run();
  test_case_words();
  test_fresh_lab();
  test_race(0);
  test_race(1);
  test_dup_chain();
  test_oom();
  test_case_oom();
  return check_done();
}
