// test_spark.c: the claim protocol of sparks (wnf.h "Sparks") on CPU
// threads. An OP2 node's right operand is offered (its slot marked, as the
// pool's pool_offer does); many threads race to claim it (eval_spark) while
// the offering worker reduces the left operand and takes its offer back or
// waits for the claimer. Whoever wins, the operand is reduced exactly once:
// the value and the interactions summed over every thread are those of one
// thread alone. Also: an operand whose reduction fails is left, rebuilt,
// for the offering worker, which then meets the error itself.

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include "cpu/cpu.h"
#include "cpu/eval.h"
#include "check.h"
#include "heap/rt.h"
#include "cpu/cpu_rt.h"

#define THIEVES 4
#define ROUNDS  400

static Wnf              WK[THIEVES + 1];
static _Atomic u32      SLOT;          // the offered slot of this round
static _Atomic u32      ROUND;         // thieves wait for each round
static _Atomic u32      ARRIVED;
static _Atomic int      QUIT;


static Term op2(u32 op, Term a, Term b) {
  u32 at = nodes(2);
  RT->heap.at[at] = a;
  RT->heap.at[at + 1] = b;
  return TERM(OP2, op, at);
}

// ((1 + 2) + 3) + ... + n: n - 1 interactions, value n(n+1)/2
static Term chain(u32 n) {
  Term t = TERM(NUM, 0, 1);
  for (u32 i = 2; i <= n; i++) t = op2(OP_ADD, t, TERM(NUM, 0, i));
  return t;
}

// (1 2) + ... : applying a number fails after n - 1 additions
static Term failing(u32 n) {
  u32 at = nodes(2);
  RT->heap.at[at] = TERM(NUM, 0, 1);
  RT->heap.at[at + 1] = TERM(NUM, 0, 2);
  Term t = TERM(APP, 0, at);
  for (u32 i = 2; i <= n; i++) t = op2(OP_ADD, t, TERM(NUM, 0, i));
  return t;
}

static u64 itrs_all(void) {
  u64 n = 0;
  for (u32 i = 0; i <= THIEVES; i++) n += WK[i].itrs;
  return n;
}

static void *thief(void *arg) {
  RT = TEST_RT;   // a thread of the test's runtime
  Wnf *w    = &WK[(uintptr_t)arg];
  u32  seen = 0;
  while (!atomic_load(&QUIT)) {
    u32 r = atomic_load(&ROUND);
    if (r == seen) {
      sched_yield();
      continue;
    }
    seen = r;
    atomic_fetch_add(&ARRIVED, 1);
    eval_spark(w, atomic_load(&SLOT));
  }
  return NULL;
}

// The offering worker: reduces `a + b` with b offered; returns its value.
static Term race(Term a, Term b, u32 *status) {
  Term t  = op2(OP_ADD, a, b);
  u32 fl = VAL(t);
  RT->heap.at[fl + 1] = AS_SUB(b);
  atomic_store(&SLOT, fl + 1);
  atomic_store(&ARRIVED, 0);
  atomic_fetch_add(&ROUND, 1);
  Wnf *w = &WK[0];
  for (;;) {
    t = wnf_run(w, t);
    if (w->status != WNF_DEFER) break;
  }
  *status = w->status;
  while (atomic_load(&ARRIVED) < THIEVES) sched_yield();   // every thief tried
  return t;
}

int main(void) {
  if (heap_init(1u << 26) != 0) {
    printf("heap_init failed\n");
    return 1;
  }
  cpu_rt_open();
  for (u32 i = 0; i <= THIEVES; i++) {
    cpu_wnf_init(&WK[i], 1u << 16);
    WK[i].book_cnt = 0;
    WK[i].dup_mode = DUP_SHARED;
  }
  pthread_t th[THIEVES];
  for (uintptr_t i = 0; i < THIEVES; i++) pthread_create(&th[i], NULL, thief, (void *)(i + 1));

  // the value and the count, whoever reduces the operand; sizes from the
  // left operand's being much shorter (the thieves win) to much longer
  u32 ok = 0, counted = 0, plain = 0;
  for (u32 r = 0; r < ROUNDS; r++) {
    u32 na = 1 + (r * 37) % 600, nb = 2 + (r * 53) % 600, st;
    u64 before = itrs_all();
    Term v = race(chain(na), chain(nb), &st);
    u64 want = (u64)na * (na + 1) / 2 + (u64)nb * (nb + 1) / 2;
    ok      += st == WNF_OK && TAG(v) == NUM && VAL(v) == (u32)want;
    counted += itrs_all() - before == (u64)(na - 1) + (nb - 1) + 1;
    plain   += !IS_SUB(RT->heap.at[atomic_load(&SLOT)]);
  }
  CHECK(ok == ROUNDS);
  CHECK(counted == ROUNDS);
  CHECK(plain == ROUNDS);   // no offer is left marked
  u64 stolen = 0;
  for (u32 i = 1; i <= THIEVES; i++) stolen += WK[i].itrs;
  printf("thieves ran %llu of %llu interactions\n", (unsigned long long)stolen,
         (unsigned long long)itrs_all());

  // a failing operand: the offering worker meets the error itself
  u32 errs = 0;
  for (u32 r = 0; r < 50; r++) {
    u32 st;
    race(chain(1 + r * 7), failing(2 + r * 11), &st);
    errs += st == WNF_ERROR && WK[0].err == ERR_APP_NUM;
  }
  CHECK(errs == 50);

  atomic_store(&QUIT, 1);
  for (u32 i = 0; i < THIEVES; i++) pthread_join(th[i], NULL);
  return check_done();
}
