// test_reach.c: the copy in's walk (src/dev/reach.c): which heap words a
// device run rooted at a slot may read, the runs it packs them into, and
// its budget.
//
// Each case lays out a small heap by hand in an array of its own (no
// host heap): the root slot, what it reaches, and garbage it must not.

#include <stdlib.h>
#include <string.h>
#include "dev/reach.h"
#include "check.h"

#define WORDS 5000u
static Term H[WORDS];
static u32  BK[4];      // book: template locs
static u32  BL[4];      // and lengths
static Reach R;

static void clear(void) {
  memset(H, 0, sizeof H);
  memset(BK, 0, sizeof BK);
  memset(BL, 0, sizeof BL);
  for (u32 i = 1; i < WORDS; i++) H[i] = TERM(SUP, 1, 3);   // garbage
}

static int walk(u32 loc, u64 top, u64 budget) {
  return reach_walk(&R, H, top, &loc, 1, BK, BL, 4, budget, 0);
}

// The reached words, as a string of runs "lo+n lo+n ...".
static const char *runs(void) {
  static char s[512];
  u64 at = 0, lo, n;
  s[0] = 0;
  while (reach_run(&R, &at, &lo, &n)) {
    char one[48];
    snprintf(one, sizeof one, "%s%llu+%llu", s[0] ? " " : "",
             (unsigned long long)lo, (unsigned long long)n);
    strncat(s, one, sizeof s - strlen(s) - 1);
  }
  return s;
}

// A node reached twice is marked once; words beside it are not.
static void sharing(void) {
  clear();
  H[10] = TERM(C00 + 2, 7, 20);          // root: #P{a, b}
  H[20] = TERM(SUP, 1, 30);              // a
  H[21] = TERM(SUP, 1, 30);              // b: the same SUP node
  H[30] = TERM(NUM, 0, 1);
  H[31] = TERM(NUM, 0, 2);
  CHECK(walk(10, 100, 100) == 1);
  CHECK(strcmp(runs(), "0+1 10+1 20+2 30+2") == 0);
  CHECK(R.words == 6);
  CHECK(reach_has(&R, 30) && !reach_has(&R, 32) && !reach_has(&R, 19));
}

// Several roots (the slots a stopped CPU pool left): the union of what
// each reaches, a node two of them share marked once; a root past the top
// is a bad root.
static void many_roots(void) {
  clear();
  H[10] = TERM(C00 + 2, 7, 20);          // root 1: #P{a, b}
  H[20] = TERM(SUP, 1, 40);
  H[21] = TERM(NUM, 0, 4);
  H[12] = TERM(VAR, 0, 40);              // root 2: shares a's SUP node
  H[14] = TERM(LAM, 0, 60);              // root 3: λx.x
  H[40] = TERM(NUM, 0, 1);
  H[41] = TERM(NUM, 0, 2);
  H[60] = TERM(VAR, 0, 60);
  u32 roots[3] = { 10, 12, 14 };
  CHECK(reach_walk(&R, H, 100, roots, 3, BK, BL, 4, 100, 0) == 1);
  CHECK(strcmp(runs(), "0+1 10+1 12+1 14+1 20+2 40+2 60+1") == 0);
  CHECK(R.words == 9);
  u32 bad[2] = { 10, 100 };
  CHECK(reach_walk(&R, H, 100, bad, 2, BK, BL, 4, 100, 0) == -1);
  CHECK(reach_walk(&R, H, 100, roots, 0, BK, BL, 4, 100, 0) == -1);
}

// A variable reads its binder's slot alone, and a SUB there is followed:
// the lambda that held the slot is gone (a chain of two substitutions).
static void sub_chain(void) {
  clear();
  H[5]  = TERM(VAR, 0, 40);
  H[40] = AS_SUB(TERM(VAR, 0, 50));      // x := y
  H[41] = TERM(NUM, 0, 9);               // beside the slot: not read
  H[50] = AS_SUB(TERM(APP, 0, 60));      // y := (f a)
  H[60] = TERM(LAM, 0, 70);
  H[61] = TERM(NUM, 0, 3);
  H[70] = TERM(VAR, 0, 70);              // λv.v: its body slot
  CHECK(walk(5, 100, 100) == 1);
  CHECK(strcmp(runs(), "0+1 5+1 40+1 50+1 60+2 70+1") == 0);
}

// DUP projections read the shared expression slot (not the DUP's body);
// a DUP node read as a term is read whole; the expression is followed.
static void dup_slots(void) {
  clear();
  H[1]  = TERM(C00 + 3, 2, 100);
  H[100] = TERM(DP0, 5, 200);
  H[101] = TERM(DP1, 5, 200);
  H[102] = TERM(DUP, 6, 300);
  H[200] = TERM(SUP, 4, 210);            // the shared expression
  H[201] = TERM(NUM, 0, 77);             // another node's word
  H[210] = TERM(ERA, 0, 0);
  H[211] = AS_SUB(TERM(NUM, 0, 8));
  H[300] = TERM(NUM, 0, 1);              // DUP [expr, body]
  H[301] = TERM(DP1, 6, 300);
  CHECK(walk(1, 400, 400) == 1);
  CHECK(strcmp(runs(), "0+2 100+3 200+1 210+2 300+2") == 0);
}

// Book templates are taken whole, and their words not followed (a REF
// instantiates them relocated); word 0 always; pointers at or past the
// top, and template ends past it, are cut there.
static void templates(void) {
  clear();
  BK[1] = 1000; BL[1] = 5;
  BK[2] = 2000; BL[2] = 1;
  BK[3] = 4990; BL[3] = 20;              // past the top (4995)
  H[1000] = TERM(LAM, 0, 3000);          // a template word: not followed
  H[7]  = TERM(C00 + 2, 1, 8);
  H[8]  = TERM(REF, 1, 0);
  H[9]  = TERM(APP, 0, 4994);            // the node's second word is past top
  H[4994] = TERM(NUM, 0, 5);
  CHECK(walk(7, 4995, 4995) == 1);
  CHECK(strcmp(runs(), "0+1 7+3 1000+5 2000+1 4990+5") == 0);
  CHECK(!reach_has(&R, 3000));
}

// A list of n cells: 2n words reached; over the budget the walk gives up.
static void budget(void) {
  clear();
  u32 n = 1000;
  H[3] = TERM(C00 + 2, 1, 10);
  for (u32 i = 0; i < n; i++) {
    u32 at = 10 + 3 * i;                 // a word of garbage between cells
    H[at]     = TERM(NUM, 0, i);
    H[at + 1] = i + 1 < n ? TERM(C00 + 2, 1, at + 3) : TERM(C00, 2, 0);
  }
  CHECK(walk(3, WORDS, 10000) == 1);
  CHECK(R.words == 2 + 2 * n);
  CHECK(reach_has(&R, 10 + 3 * 999 + 1) && !reach_has(&R, 12));
  CHECK(walk(3, WORDS, 2 * n) == 0);      // 2n + 2 > 2n
  CHECK(walk(3, WORDS, 2 * n + 2) == 1);
  CHECK(walk(WORDS, WORDS, 10) == -1);   // a root past the top
  CHECK(reach_budget(REACH_MIN - 1) == 0);
  CHECK(reach_budget(1ull << 20) == (1ull << 20) / REACH_RATIO);
  CHECK(reach_limit_s(1ull << 30) > 0.5 && reach_limit_s(1ull << 30) < 1.5);
}

// Runs across bitmap words and summary words (64 and 4096 words).
static void run_edges(void) {
  clear();
  u32 at[] = { 63, 64, 65, 127, 128, 4095, 4096, 4999 };
  u32 k    = sizeof at / sizeof at[0];
  // root: a chain of one-word INC nodes through those locations
  H[1] = TERM(INC, 0, at[0]);
  for (u32 i = 0; i < k; i++) {
    H[at[i]] = i + 1 < k ? TERM(INC, 0, at[i + 1]) : TERM(NUM, 0, 1);
  }
  CHECK(walk(1, WORDS, WORDS) == 1);
  CHECK(strcmp(runs(), "0+2 63+3 127+2 4095+2 4999+1") == 0);
}

int main(void) {
  sharing();
  many_roots();
  sub_chain();
  dup_slots();
  templates();
  budget();
  run_edges();
  reach_free(&R);
  return check_done();
}
