// test_term.c: the term word (term.h): packing, fields, SUB bit, HAS_LOC,
// BUSY. Prints one line per failure; last line "N passed, N failed".

#include <stdio.h>
#include "core/term.h"

#include "check.h"

// Every tag a heap word can have (terms, constructors).
static int is_term_tag(u32 tag) {
  return tag <= BJ1 || (tag >= C00 && tag <= C16);
}

static void test_pack(void) {
  u32 exts[] = {0, 1, 0x123456, EXT_MASK};
  u32 vals[] = {0, 1, 0xDEADBEEF, 0xFFFFFFFF};
  for (u32 tag = 0; tag < TAG_COUNT; tag++) {
    for (u32 i = 0; i < 4; i++) {
      for (u32 j = 0; j < 4; j++) {
        Term t = TERM(tag, exts[i], vals[j]);
        CHECK(TAG(t) == tag && EXT(t) == exts[i] && VAL(t) == vals[j]);
        CHECK(!IS_SUB(t));
        Term s = AS_SUB(t);
        CHECK(IS_SUB(s) && NO_SUB(s) == t);
        CHECK(TAG(s) == tag && EXT(s) == exts[i] && VAL(s) == vals[j]);
      }
    }
  }
  // fields are masked, never bleed into each other
  Term t = TERM(0xFFu, 0xFFFFFFFFu, 0x1FFFFFFFFull);
  CHECK(TAG(t) == 0x7F && EXT(t) == EXT_MASK && VAL(t) == 0xFFFFFFFFu);
  CHECK(!IS_SUB(t));
  CHECK(TERM(APP, 0, 0) == 0);   // 0 is "APP at location 0": never a node
}

static void test_has_loc(void) {
  u32 with[]    = {APP, VAR, LAM, DP0, DP1, SUP, DUP, DRY, MAT, SWI, USE,
                   OP2, EQL, AND, OR, RED, INC, DSU, DDU, UNS, PRI};
  u32 without[] = {REF, NAM, ERA, ANY, NUM, BJV, BJ0, BJ1, C00};
  for (u32 i = 0; i < sizeof(with) / sizeof(with[0]); i++) {
    CHECK(HAS_LOC(with[i]));
  }
  for (u32 i = 0; i < sizeof(without) / sizeof(without[0]); i++) {
    CHECK(!HAS_LOC(without[i]));
  }
  for (u32 a = 1; a <= 16; a++) {
    CHECK(HAS_LOC(C00 + a) && IS_CTR(C00 + a) && CTR_ARITY(C00 + a) == a);
  }
  CHECK(IS_CTR(C00) && CTR_ARITY(C00) == 0);
  CHECK(!IS_CTR(C00 - 1) && !IS_CTR(C16 + 1));
  CHECK(!HAS_LOC(0x7F) && !HAS_LOC(C16 + 1));
}

static void test_busy(void) {
  // BUSY is no term a heap word can hold, with or without SUB
  CHECK(!is_term_tag(TAG(BUSY)));
  CHECK(BUSY != 0);
  for (u32 tag = 0; tag < TAG_COUNT; tag++) {
    if (!is_term_tag(tag)) continue;
    CHECK(TAG(TERM(tag, EXT_MASK, 0xFFFFFFFF)) != TAG(BUSY));
    CHECK(NO_SUB(BUSY) != NO_SUB(TERM(tag, EXT_MASK, 0xFFFFFFFF)));
  }
  CHECK(!IS_SUB(BUSY));
}

static void test_prims(void) {
  CHECK(PRIM_ARITY(PRIM_LOG) == 1 && PRIM_ARITY(PRIM_NF) == 1);
  CHECK(PRIM_ARITY(PRIM_GNF) == 1);
  for (u32 op = 0; op < OP_COUNT; op++) {
    CHECK(PRIM_ARITY(PRIM_OP + op) == 2);
  }
  CHECK(PRIM_COUNT == PRIM_OP + OP_COUNT);
  CHECK(PRIM_COUNT - 1 <= EXT_MASK);
}

int main(void) {
  test_pack();
  test_has_loc();
  test_busy();
  test_prims();
  return check_done();
}
