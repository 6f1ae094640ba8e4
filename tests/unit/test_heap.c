// test_heap.c: the heap's bump allocation from several threads at once
// when it is nearly full. Threads ask for arenas (heap_take: a large
// `want`, else what is left, if n) while the top runs into the end, as -T
// workers do when the heap fills; every range handed out must lie in the heap and
// overlap no other. (A failed add undone with a subtract can let the top
// fall under words another thread was just given: two workers would then
// build nodes in the same words.)

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include "heap/heap.h"
#include "check.h"

#define THREADS 4
#define ROUNDS  400
#define GRANTS  4096   // ranges one thread may be given in a round

typedef struct {
  u32 at[GRANTS];
  u32 len[GRANTS];
  u32 n;
  u32 seed;
} Grants;

static Grants          GOT[THREADS];
static _Atomic int     GO;
static _Atomic int     READY;

static u32 next_rand(u32 *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 16;
}

static void *taker(void *arg) {
  RT = TEST_RT;   // a thread of the test's runtime
  Grants *g = arg;
  atomic_fetch_add(&READY, 1);
  while (!atomic_load(&GO)) { }
  u32 fails = 0;
  while (g->n < GRANTS && fails < 64) {
    u32 n    = 1 + next_rand(&g->seed) % 96;
    u32 want = next_rand(&g->seed) % 2 ? 4096 : n;   // arenas and single nodes
    u32 len  = 0;
    u32 at   = heap_take(n, want, &len);
    if (at == 0) {
      fails++;
      continue;
    }
    g->at[g->n]  = at;
    g->len[g->n] = len;
    g->n++;
  }
  return NULL;
}

static int by_start(const void *a, const void *b) {
  const u64 *x = a, *y = b;
  return *x < *y ? -1 : *x > *y;
}

int main(void) {
  if (heap_init(1u << 16) != 0) {
    printf("heap_init failed\n");
    return 1;
  }
  static u64 ranges[THREADS * GRANTS];
  int overlaps = 0, outside = 0, full = 0;
  for (u32 round = 0; round < ROUNDS; round++) {
    // the top starts near the end: a few arenas' room left
    atomic_store(&RT->heap.top, RT->heap.cap - 3 * 4096 - round % 512);
    atomic_store(&GO, 0);
    atomic_store(&READY, 0);
    pthread_t th[THREADS];
    for (u32 i = 0; i < THREADS; i++) {
      GOT[i].n    = 0;
      GOT[i].seed = round * THREADS + i + 1;
      pthread_create(&th[i], NULL, taker, &GOT[i]);
    }
    while (atomic_load(&READY) < THREADS) { }
    atomic_store(&GO, 1);
    for (u32 i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    u64 n = 0, words = 0;
    for (u32 i = 0; i < THREADS; i++) {
      for (u32 j = 0; j < GOT[i].n; j++) {
        u64 at = GOT[i].at[j], len = GOT[i].len[j];
        if (at == 0 || at + len > RT->heap.cap) outside++;
        ranges[n++] = at << 32 | len;   // sorts by start
        words += len;
      }
    }
    qsort(ranges, n, sizeof(u64), by_start);
    for (u64 k = 1; k < n; k++) {
      u64 end = (ranges[k - 1] >> 32) + (ranges[k - 1] & 0xFFFFFFFFu);
      if (end > ranges[k] >> 32) overlaps++;
    }
    // what was handed out is exactly what the top moved by
    if (words + (RT->heap.cap - 3 * 4096 - round % 512) == atomic_load(&RT->heap.top)) full++;
  }
  CHECK(overlaps == 0);
  CHECK(outside == 0);
  CHECK(full == ROUNDS);
  if (overlaps || outside || full != ROUNDS) {
    printf("%d overlapping ranges, %d outside the heap, %d of %d rounds with the top where the grants end\n",
           overlaps, outside, full, ROUNDS);
  }
  heap_free();
  return check_done();
}
