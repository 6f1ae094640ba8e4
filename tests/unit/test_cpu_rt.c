// test_cpu_rt.c: the cpu/ layer's part of a runtime is a value
// (cpu/cpu_rt.h). A runtime's CPU side opens, normalizes a tree on a -T4
// pool and closes a thousand times in one process: each close joins the
// pool's threads (none is left) and frees what the part made (the memory
// stays flat). And two runtimes, each with its own pool, normalize at the
// same time on two threads, each getting its own tree back.

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "heap/heap.h"
#include "cpu/cpu.h"
#include "cpu/eval.h"
#include "cpu/snf.h"
#include "check.h"
#include "heap/rt.h"
#include "cpu/cpu_rt.h"

#define DEPTH  10     // a tree of 2^DEPTH additions
#define ROUNDS 1000
#define BOTH   40     // rounds of the two runtimes at once

// A field of the process's /proc/self/status (Threads:, VmRSS: in kB).
static long status_field(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long v = -1;
  size_t n = strlen(key);
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, key, n) == 0) {
      v = atol(line + n);
      break;
    }
  }
  fclose(f);
  return v;
}

// #N{..} pairs down to DEPTH, the leaves `i + 1` (i counting from 0)
// still to add.
static Term tree(u32 depth, u32 *leaf) {
  if (depth == 0) {
    u32 i = (*leaf)++;
    return node2(OP2, OP_ADD, TERM(NUM, 0, i), TERM(NUM, 0, 1));
  }
  Term a = tree(depth - 1, leaf);
  Term b = tree(depth - 1, leaf);
  return node2(C00 + 2, 0, a, b);
}

// The sum of the normal form's leaves, or ~0 when one is not a number.
static u64 leaves(Term t) {
  if (TAG(t) == NUM) return VAL(t);
  if (TAG(t) != C00 + 2) return ~0ull;
  u64 a = leaves(RT->heap.at[VAL(t)]), b = leaves(RT->heap.at[VAL(t) + 1]);
  return a == ~0ull || b == ~0ull ? ~0ull : a + b;
}

// One runtime's life on this thread (RT): open, normalize, close. 1 when
// the tree came back whole; *helped: interactions the pool's threads ran.
static int one_life(u64 *helped) {
  if (heap_init(1u << 20) != 0) return 0;
  cpu_rt_open();
  RT->cpu->conf.threads = 4;
  eval_init();
  snf_init();
  u32 leaf = 0;
  u32 root = nodes(1);
  RT->heap.at[root] = tree(DEPTH, &leaf);
  snf_at(root);
  u64 want = (u64)leaf * (leaf + 1) / 2;
  int ok   = leaves(RT->heap.at[root]) == want;
  for (u32 i = 1; i < 4; i++) *helped += eval_worker(i)->itrs;
  cpu_rt_close();
  heap_free();
  return ok;
}


static _Atomic int BOTH_OK = 0;
static Rt         *SECOND;    // the second runtime's context

static void *other(void *arg) {
  (void)arg;
  RT = SECOND;   // the second runtime, on this thread only
  u64 helped = 0;
  int ok = 1;
  for (u32 r = 0; r < BOTH; r++) ok &= one_life(&helped);
  atomic_fetch_add(&BOTH_OK, ok);
  return NULL;
}

static void *nothing(void *arg) {
  return arg;
}

int main(void) {
  // a thread started and joined first: what starts with a process's first
  // thread (a sanitizer's own) is counted before the runtime's
  pthread_t first;
  pthread_create(&first, NULL, nothing, NULL);
  pthread_join(first, NULL);
  long threads = status_field("Threads:");
  u64  helped  = 0;
  int  whole   = 0, alone = 0;
  long rss_early = 0;
  for (u32 r = 0; r < ROUNDS; r++) {
    whole += one_life(&helped);
    alone += status_field("Threads:") == threads;   // every thread joined
    if (r == ROUNDS / 10) rss_early = status_field("VmRSS:");
  }
  long rss_late = status_field("VmRSS:");
  CHECK(whole == ROUNDS);
  CHECK(alone == ROUNDS);
  CHECK(helped > 0);                          // the pool did take part
#ifndef __SANITIZE_ADDRESS__
  // (AddressSanitizer keeps what is freed in quarantine for a while: there
  // its leak check says it instead)
  CHECK(rss_late - rss_early < 16 * 1024);    // kB: flat, not a leak a round
#endif
  printf("rss after %u rounds: %ld kB, after %u: %ld kB\n", ROUNDS / 10 + 1, rss_early,
         ROUNDS, rss_late);

  // two runtimes at once, each on its own thread with its own pool
  Options o;
  api_options_default(&o);
  SECOND = api_context(&o);
  pthread_t th;
  pthread_create(&th, NULL, other, NULL);
  u64 h  = 0;
  int ok = 1;
  for (u32 r = 0; r < BOTH; r++) ok &= one_life(&h);
  pthread_join(th, NULL);
  CHECK(ok && atomic_load(&BOTH_OK) == 1);
  CHECK(status_field("Threads:") == threads);
  return check_done();
}
