// test_wait.c: the WNF core's wait for a held DUP slot (wnf.h,
// HEAP_WAIT_POLLS). The core is compiled here with one poll and a scripted
// pause: the "holder" gives the slot back with a word of the test's
// choosing while the core waits, or keeps it. A word given back is used as if the core had loaded it (a SUB
// is followed, an expression taken and reduced); a slot still held
// defers, leaving it untouched. Last line: "N passed, N failed".

#include <stdio.h>
#include "heap/heap.h"
#include "core/core.h"

static u32  WAITS;      // pauses before a poll
static u32  WAIT_LOC;   // the slot of the last one
static Term GIVE;       // what the holder stores meanwhile (BUSY: keeps it)

#define HEAP_WAIT_POLLS(w)  1u
#define HEAP_PAUSE(w, loc)  test_pause((w), (loc))
static void test_pause(Wnf *w, u32 loc);

#include "cpu/cpu.h"
#include "check.h"
#include "heap/rt.h"
#include "cpu/cpu_rt.h"

static void test_pause(Wnf *w, u32 loc) {
  WAITS++;
  WAIT_LOC = loc;
  w->heap[loc] = GIVE;
}

static Wnf W;

static Term num(u32 n) { return TERM(NUM, 0, n); }

// (10 * DP0(d)) with d's slot held by another worker, given back as `give`.
static Term run_held(u32 mode, Term give, u32 *d) {
  *d       = nodes(1);
  RT->heap.at[*d] = BUSY;
  Term t   = node2(OP2, OP_MUL, num(10), TERM(DP0, 1, *d));
  WAITS    = 0;
  GIVE     = give;
  W.itrs   = 0;
  W.budget = ~0ull;
  W.status = WNF_OK;
  W.dup_mode = mode;
  W.owner  = REGION_OF(&W, *d);
  return wnf_run(&W, t);
}

int main(void) {
  if (heap_init(1u << 20) != 0) {
    printf("heap_init failed\n");
    return 1;
  }
  cpu_rt_open();
  cpu_wnf_init(&W, 1u << 12);
  W.book_cnt = 0;
  u32  modes[3] = { DUP_SHARED, DUP_OWNER, DUP_ATOMIC };
  for (u32 i = 0; i < 3; i++) {
    u32 d;
    // given back resolved: the SUB is followed, no take
    Term r = run_held(modes[i], AS_SUB(num(4)), &d);
    CHECK(WAITS == 1 && WAIT_LOC == d);
    CHECK(W.status == WNF_OK && r == num(40) && W.itrs == 1);
    CHECK(RT->heap.at[d] == AS_SUB(num(4)));
    // given back as an expression: taken, reduced, resolved here
    u32  e = nodes(2);
    RT->heap.at[e] = num(3); RT->heap.at[e + 1] = num(4);
    r = run_held(modes[i], TERM(OP2, OP_ADD, e), &d);
    CHECK(WAITS == 1);
    CHECK(W.status == WNF_OK && r == num(70) && W.itrs == 3);
    CHECK(RT->heap.at[d] == AS_SUB(num(7)));
    // still held after the wait: defer, the slot left to its holder
    r = run_held(modes[i], BUSY, &d);
    CHECK(WAITS == 1 && W.status == WNF_DEFER && RT->heap.at[d] == BUSY);
    CHECK(TAG(r) == OP2 && W.itrs == 0);
  }
  // a slot not held is never waited for
  u32 d = nodes(1);
  RT->heap.at[d] = num(5);
  Term t  = node2(OP2, OP_MUL, num(10), TERM(DP0, 1, d));
  WAITS = 0;
  W.itrs = 0; W.status = WNF_OK; W.dup_mode = DUP_ATOMIC;
  Term r = wnf_run(&W, t);
  CHECK(WAITS == 0 && W.status == WNF_OK && r == num(50));
  return check_done();
}
