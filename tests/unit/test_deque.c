// test_deque.c: the Chase-Lev deque of the -T pool (src/deque.h).
//
// One owner pushes words and takes some back while thieves steal; every
// word must come out exactly once, whoever gets it, also across ring
// growth and when owner and thieves race for the last word.

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "cpu/deque.h"

#include "check.h"

#define N       200000
#define THIEVES 3

static Deque        Q;
static _Atomic u32  SEEN[N + 1];     // times each word came out
static _Atomic int  DONE;            // the owner pushed everything

static void got(u64 x) {
  if (x >= 1 && x <= N) atomic_fetch_add(&SEEN[x], 1);
}

static void *thief(void *arg) {
  RT = TEST_RT;   // a thread of the test's runtime
  (void)arg;
  u64 x;
  for (;;) {
    if (dq_steal(&Q, &x)) {
      got(x);
    } else if (atomic_load(&DONE) &&
               atomic_load(&Q.top) >= atomic_load(&Q.bottom)) {
      return NULL;
    }
  }
}

// The owner pushes 1..N from a small ring (it grows many times), taking one
// back after every third push; thieves steal all along.
static void test_race(void) {
  memset((void *)SEEN, 0, sizeof SEEN);
  atomic_store(&DONE, 0);
  CHECK(dq_init(&Q, 4));
  pthread_t th[THIEVES];
  for (int i = 0; i < THIEVES; i++) pthread_create(&th[i], NULL, thief, NULL);
  u64 x;
  u32 lost = 0;
  for (u64 i = 1; i <= N; i++) {
    if (!dq_push(&Q, i)) lost++;
    if (i % 3 == 0 && dq_take(&Q, &x)) got(x);
  }
  CHECK(lost == 0);
  while (dq_take(&Q, &x)) got(x);
  atomic_store(&DONE, 1);
  for (int i = 0; i < THIEVES; i++) pthread_join(th[i], NULL);
  u32 once = 0, other = 0;
  for (u32 i = 1; i <= N; i++) {
    if (atomic_load(&SEEN[i]) == 1) once++;
    else other++;
  }
  CHECK(once == N);
  CHECK(other == 0);
  dq_free(&Q);
}

// Alone: LIFO for the owner, FIFO for a thief, empty is empty.
static void test_order(void) {
  u64 x = 0;
  CHECK(dq_init(&Q, 2));
  CHECK(!dq_take(&Q, &x));
  CHECK(!dq_steal(&Q, &x));
  for (u64 i = 1; i <= 5; i++) CHECK(dq_push(&Q, i));
  CHECK(dq_take(&Q, &x) && x == 5);
  CHECK(dq_steal(&Q, &x) && x == 1);
  CHECK(dq_steal(&Q, &x) && x == 2);
  CHECK(dq_take(&Q, &x) && x == 4);
  CHECK(dq_take(&Q, &x) && x == 3);
  CHECK(!dq_take(&Q, &x));
  CHECK(!dq_steal(&Q, &x));
  dq_free(&Q);
}

int main(void) {
  test_order();
  for (int round = 0; round < 3; round++) test_race();
  return check_done();
}
