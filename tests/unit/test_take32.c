// test_take32.c: the 32-bit DUP take (src/core/take32.h), which the Metal
// backend runs and the simulator runs with --take=32.
//
// 1. The protocol alone: many threads take, update and release one slot,
//    while others load it. A take is exclusive (no increment lost), a
//    taken word is whole, a SUB loaded is whole, BUSY is never torn.
// 2. Through the WNF core: many lanes run DP0 of one DUP slot at once,
//    both device modes: one interaction, every lane gets its copy, the
//    slot ends as a SUB with no BUSY half left.
// 3. Programs with sharing on the simulator with --take=32, many lanes,
//    tiny regions and budgets: output equal to the CPU's.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <sys/wait.h>
#include "heap/heap.h"
#include "lang/names.h"
#include "lang/parse.h"
#include "lang/print.h"
#include "cpu/eval.h"
#include "cpu/snf.h"
#include "dev/gpu.h"
#include "dev/dev.h"
#include "run/prim.h"
#include "check.h"
#include "run_prog.h"

// The 32-bit scheme on the host heap, relaxed halves and fences, as the
// Metal kernels run it. Before each access a thread may yield (one in
// eight, at random), so that two cores see the interleavings many GPU
// threads would: a take that were a load and a store, or a release that
// stored the high half first, fails here.
static __thread u32 SEED;

static inline void t_point(void) {
  SEED = SEED * 1103515245u + 12345u;
  if (((SEED >> 16) & 7) == 0) sched_yield();
}

#define T32              u32
#define T32_LD(p)        (t_point(), __atomic_load_n((p), __ATOMIC_RELAXED))
#define T32_ST(p, v)     (t_point(), __atomic_store_n((p), (v), __ATOMIC_RELAXED))
#define T32_XCHG(p, v)   (t_point(), __atomic_exchange_n((p), (v), __ATOMIC_RELAXED))
#define T32_CAS(p, o, n) (t_point(), t_cas32((p), (o), (n)))
#define T32_FENCE()      __atomic_thread_fence(__ATOMIC_SEQ_CST)

static inline u32 t_cas32(u32 *p, u32 o, u32 n) {
  __atomic_compare_exchange_n(p, &o, n, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return o;
}

#include "core/take32.h"

#define HEAP_LD(w, loc)        t32_ld((w)->heap, (loc))
#define HEAP_ST(w, loc, t)     t32_st((w)->heap, (loc), (t))
#define HEAP_XCHG(w, loc, t)   t32_xchg((w)->heap, (loc), (t))
#define HEAP_CAS(w, loc, o, n) t32_cas((w)->heap, (loc), (o), (n))
#define HEAP_REFILL(w, n)      t_refill((w), (n))

static inline int t_refill(Wnf *w, u32 n) {
  u32 want = n > 256 ? n : 256;
  u32 at   = heap_alloc(want);
  if (!at) return 0;
  w->next = at;
  w->end  = at + want;
  return 1;
}

#include "core/wnf.h"
#include "heap/rt.h"

#define THREADS 16

static volatile int GO;

// 1. The protocol
// ===============
// The slot holds a counter word: EXT = count, VAL = a hash of the count,
// so a word mixing two writes shows. Each successful take adds one and
// releases; the last one (count == TAKES) leaves a SUB.

#define TAKES 20000u

static u32  P_SLOT[4];   // two words; the slot is word 1 (8-byte aligned)
static u32  P_HELD;      // holders right now (must stay <= 1)
static u32  P_BAD;       // torn or shared observations
static u32  P_DONE;      // takes performed
static u64  P_BUSY;      // takes that found BUSY

#define P_HEAP ((Term *)P_SLOT)
#define HASH(n) ((u32)(n) * 2654435761u + 12345u)
#define P_WORD(n, sub) ((sub) ? AS_SUB(TERM(C00 + 1, (n), HASH(n))) \
                              : TERM(C00 + 1, (n), HASH(n)))

static int p_whole(Term t) {
  return TAG(t) == C00 + 1 && VAL(t) == HASH(EXT(t));
}

// Attempts per thread before it gives up (a broken take loses counts,
// and the SUB would never come).
#define TRIES (8u * TAKES)

static void *p_taker(void *arg) {
  RT = TEST_RT;   // a thread of the test's runtime
  SEED = (u32)(uintptr_t)arg;
  while (!GO) sched_yield();
  for (u32 i = 0; i < TRIES; i++) {
    Term t = t32_xchg(P_HEAP, 1, BUSY);
    if (t == BUSY) {
      __atomic_fetch_add(&P_BUSY, 1, __ATOMIC_RELAXED);
      Term s = t32_ld(P_HEAP, 1);
      if (s != BUSY && IS_SUB(s)) {
        if (!p_whole(NO_SUB(s))) __atomic_fetch_add(&P_BAD, 1, __ATOMIC_RELAXED);
        return NULL;
      }
      sched_yield();
      continue;
    }
    if (__atomic_fetch_add(&P_HELD, 1, __ATOMIC_RELAXED) != 0 || !p_whole(NO_SUB(t))) {
      __atomic_fetch_add(&P_BAD, 1, __ATOMIC_RELAXED);
    }
    if (IS_SUB(t)) {          // finished: put the SUB back, as the core does
      __atomic_fetch_sub(&P_HELD, 1, __ATOMIC_RELAXED);
      t32_st(P_HEAP, 1, t);
      return NULL;
    }
    u32 n = EXT(t) + 1;
    P_DONE++;                 // only a holder writes it
    if ((n & 63) == 0) {
      sched_yield();          // hold it a while: others find it BUSY
    }
    __atomic_fetch_sub(&P_HELD, 1, __ATOMIC_RELAXED);
    t32_xchg(P_HEAP, 1, P_WORD(n, n == TAKES));
  }
  return NULL;
}

static void *p_reader(void *arg) {
  RT = TEST_RT;   // a thread of the test's runtime
  SEED = (u32)(uintptr_t)arg;
  while (!GO) sched_yield();
  for (u32 i = 0; i < TRIES; i++) {
    Term s = t32_ld(P_HEAP, 1);
    if ((i & 1023) == 0) {
      sched_yield();
    }
    if (s == BUSY) continue;
    if ((u32)(s >> 32) == BUSY_HI) __atomic_fetch_add(&P_BAD, 1, __ATOMIC_RELAXED);
    if (IS_SUB(s)) {          // a SUB is whole
      if (!p_whole(NO_SUB(s))) __atomic_fetch_add(&P_BAD, 1, __ATOMIC_RELAXED);
      return NULL;
    }
  }
  return NULL;
}

static void protocol(void) {
  pthread_t th[THREADS];
  GO = 0;
  t32_st(P_HEAP, 1, P_WORD(0, 0));
  for (u32 i = 0; i < THREADS; i++) {
    pthread_create(&th[i], NULL, i % 4 == 3 ? p_reader : p_taker,
                   (void *)(uintptr_t)(i + 1));
  }
  GO = 1;
  for (u32 i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  Term s = t32_ld(P_HEAP, 1);
  CHECK(P_BAD == 0);
  CHECK(P_DONE == TAKES);
  CHECK(IS_SUB(s) && p_whole(NO_SUB(s)) && EXT(s) == TAKES);
  printf("protocol: %u takes, %llu found BUSY\n", P_DONE,
         (unsigned long long)P_BUSY);
}

// The label count (word 0): a CAS on its low half, many threads at once.
static void *c_count(void *arg) {
  RT = TEST_RT;   // a thread of the test's runtime
  Wnf *w = arg;
  while (!GO) sched_yield();
  for (u32 i = 0; i < 1000; i++) wnf_fresh_lab(w);
  return NULL;
}

static void label_count(void) {
  pthread_t th[THREADS];
  Wnf w[THREADS];
  GO = 0;
  P_SLOT[0] = P_SLOT[1] = 0;
  for (u32 i = 0; i < THREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].heap = P_HEAP;
    pthread_create(&th[i], NULL, c_count, &w[i]);
  }
  GO = 1;
  for (u32 i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  CHECK(t32_ld(P_HEAP, 0) == THREADS * 1000u);
}

// 2. Through the core: DP0 of one DUP slot on many lanes
// =======================================================

#define LANES 64

static struct {
  u32  slot;
  u32  mode;
  Term res[LANES];
  u64  itrs[LANES];
  Term stack[LANES][256];
} C;

static void *c_lane(void *arg) {
  RT = TEST_RT;   // a thread of the test's runtime
  u32 i = (u32)(uintptr_t)arg;
  SEED = i + 1;
  Wnf w;
  memset(&w, 0, sizeof w);
  w.heap = RT->heap.at; w.book = RT->heap.book; w.book_len = RT->heap.book_len;
  w.stack = C.stack[i]; w.stack_cap = 256; w.budget = ~0ull;
  w.dup_mode = C.mode; w.region_shift = 8; w.on_device = 1;
  u32 own = C.slot >> 8;
  w.owner = (i & 1) ? own : own + 1;   // half act for the slot's region
  while (!GO) sched_yield();
  Term t = TERM(DP0, 7, C.slot);
  for (;;) {
    Term r = wnf_run(&w, t);
    if (w.status == WNF_OK) { C.res[i] = r; break; }
    if (w.status != WNF_DEFER) { C.res[i] = 0; break; }
    w.owner = w.defer;                  // retried for the slot's owner
    t = r;
    sched_yield();
  }
  C.itrs[i] = w.itrs;
  return NULL;
}

static void core_one_slot(u32 mode) {
  memset(&C, 0, sizeof C);
  C.mode = mode;
  // ! X &7 = #P{1, 2}; the DUP's expression slot is C.slot.
  u32 pair = heap_alloc(2);
  RT->heap.at[pair + 0] = TERM(NUM, 0, 1);
  RT->heap.at[pair + 1] = TERM(NUM, 0, 2);
  u32 dup = heap_alloc(2);
  RT->heap.at[dup + 0] = TERM(C00 + 2, 5, pair);
  RT->heap.at[dup + 1] = TERM(ERA, 0, 0);
  C.slot = dup;
  pthread_t th[LANES];
  GO = 0;
  for (u32 i = 0; i < LANES; i++) {
    pthread_create(&th[i], NULL, c_lane, (void *)(uintptr_t)i);
  }
  GO = 1;
  u64 itrs = 0;
  u32 bad  = 0;
  for (u32 i = 0; i < LANES; i++) {
    pthread_join(th[i], NULL);
    itrs += C.itrs[i];
    if (TAG(C.res[i]) != C00 + 2) bad++;
  }
  Term s = RT->heap.at[C.slot];
  CHECK(bad == 0);
  CHECK(itrs == 1);
  CHECK(IS_SUB(s) && TAG(s) == C00 + 2);
  CHECK((u32)(s >> 32) != BUSY_HI);
}

// 3. Programs on the simulator with --take=32
// ===========================================

static RunOut R0, R1;
static char   O0[1 << 16], O1[1 << 16];

static void sim_take32(const char *src) {
  u32 dups[2] = {DUP_OWNER, DUP_ATOMIC};
  RunConf cpu = {0, DUP_OWNER, 0, 8, 0, 4, 0, 0};
  run(src, cpu, &R0);
  term_of(&R0, O0, sizeof O0);
  CHECK(R0.ok);
  for (u32 k = 0; k < 2; k++) {
    u32 shapes[2][2] = {{1024, 16}, {1, 1}};
    for (u32 s = 0; s < 2; s++) {
      RunConf dev = {1, dups[k], shapes[s][0], 8, shapes[s][1], 4, 32, 0};
      run(src, dev, &R1);
      term_of(&R1, O1, sizeof O1);
      CHECK(R1.ok && strcmp(O0, O1) == 0);
      if (strcmp(O0, O1) != 0) {
        printf("  dup=%s lanes=%u budget=%u: cpu '%.100s' device '%.100s'\n",
               k ? "atomic" : "owner", shapes[s][0], shapes[s][1], O0, O1);
      }
    }
  }
}

int main(void) {
  double t0 = gpu_now();
  protocol();
  label_count();
  if (heap_init(1u << 22) != 0) {
    printf("heap_init failed\n0 passed, 1 failed\n");
    return 1;
  }
  for (u32 r = 0; r < 10; r++) {
    core_one_slot(DUP_OWNER);
    core_one_slot(DUP_ATOMIC);
  }
  double t1 = gpu_now();
  sim_take32(P_SHARED);
  sim_take32(P_CHURCH);
  printf("times: protocol and core %.2f s, programs %.2f s\n", t1 - t0,
         gpu_now() - t1);
  return check_done();
}
