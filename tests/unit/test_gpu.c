// test_gpu.c: the device normal form on the simulated device.
//
// Linked with every src/ file but main.c (tests/run.sh). Programs run in a
// forked child each (a fresh heap per run); the parent compares outputs.
// Prints "N passed, N failed"; non-zero exit on failure.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/wait.h>
#include "heap/heap.h"
#include "heap/rt.h"
#include "run/api.h"

// The test's runtime context, made before main with the defaults.
// `used`: a test that never reads it must keep it, and its context reachable
__attribute__((used)) static Rt *TEST_RT;
__attribute__((constructor)) static void test_context(void) {
  Options o;
  api_options_default(&o);
  TEST_RT = RT = api_context(&o);
}
#include "lang/names.h"
#include "lang/parse.h"
#include "lang/print.h"
#include "cpu/eval.h"
#include "cpu/snf.h"
#include "dev/gpu.h"
#include "dev/dev.h"
#include "run/prim.h"
#include "run/sched.h"
#include "run_prog.h"

// A backend of the WNF core for this test: C11 atomics on the host heap,
// arenas from heap_alloc (the same primitives as the simulator).
#define HEAP_LD(w, loc)        __atomic_load_n(&(w)->heap[(loc)], __ATOMIC_ACQUIRE)
#define HEAP_ST(w, loc, t)     __atomic_store_n(&(w)->heap[(loc)], (t), __ATOMIC_RELEASE)
#define HEAP_XCHG(w, loc, t)   __atomic_exchange_n(&(w)->heap[(loc)], (t), __ATOMIC_ACQ_REL)
#define HEAP_CAS(w, loc, o, n) t_cas(&(w)->heap[(loc)], (o), (n))
#define HEAP_REFILL(w, n)      t_refill((w), (n))

static inline Term t_cas(Term *p, Term o, Term n) {
  __atomic_compare_exchange_n(p, &o, n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return o;
}

static inline int t_refill(Wnf *w, u32 n) {
  u32 want = n > 256 ? n : 256;
  u32 at   = heap_alloc(want);
  if (!at) return 0;
  w->next = at;
  w->end  = at + want;
  return 1;
}

#define GPU_ADD64(p, v)    __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define GPU_OR32(p, v)     __atomic_fetch_or((p), (v), __ATOMIC_ACQ_REL)
#define GPU_CAS32(p, o, n) t_cas32((p), (o), (n))

static inline u32 t_cas32(u32 *p, u32 o, u32 n) {
  __atomic_compare_exchange_n(p, &o, n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return o;
}

#include "core/lane.h"   // the device lanes over this backend (and wnf.h)
#include "heap/rt.h"
#include "dev/dev_rt.h"
#include "run/run_rt.h"

static int PASS = 0, FAIL = 0;

#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (cond) { PASS++; }                                             \
    else { FAIL++; printf("FAIL %s:%d: ", __FILE__, __LINE__);        \
           printf(__VA_ARGS__); printf("\n"); }                       \
  } while (0)

// Running programs: tests/unit/run_prog.h

static RunOut R0, R1;
static char   T0[1 << 16], T1[1 << 16];

static RunConf cpu(void) {
  RunConf c = {0, DUP_OWNER, 0, 12, 4096, 2, 0, 0};
  return c;
}

static RunConf sim(u32 dup, u32 lanes, u32 shift, u32 budget) {
  RunConf c = {1, dup, lanes, shift, budget, 4, 0, 0};
  return c;
}

// Device output equals the CPU's.
static void same_as_cpu(const char *name, const char *src, RunConf c) {
  run(src, cpu(), &R0);
  run(src, c, &R1);
  term_of(&R0, T0, sizeof T0);
  term_of(&R1, T1, sizeof T1);
  CHECK(R0.ok && R1.ok && strcmp(T0, T1) == 0,
        "%s (dup=%s lanes=%u shift=%u budget=%u): cpu '%.200s' device '%.200s'",
        name, c.dup == DUP_OWNER ? "owner" : "atomic", c.lanes, c.shift,
        c.budget, T0, T1);
}

// Tests
// =====

static void test_entries(void) {
  u64 e = ENT_T(0xABCDEFu, 0xDEADBEEFu, 5);
  CHECK(ENT_LOC(e) == 0xDEADBEEFu, "loc");
  CHECK(ENT_OWN(e) == 0xABCDEFu, "owner");
  CHECK(ENT_TRIES(e) == 5, "tries");
  CHECK(!ENT_IS_DPX(e), "no dpx");
  u64 d = ENT_DPX | ENT_T(7, 42, ENT_TRIES_MAX);
  CHECK(ENT_IS_DPX(d) && ENT_LOC(d) == 42 && ENT_OWN(d) == 7 &&
        ENT_TRIES(d) == ENT_TRIES_MAX, "dpx entry");
  CHECK(ENT_OWN(ENT(0x1FFFFFFu, 1)) == 0xFFFFFFu, "owner masked");
  CHECK(ENT(1u << 20, 0) == (1ull << 52), "owner << 32");
  // The root entry of a run: owner = region of the loc.
  u32 loc = 123456;
  CHECK(ENT_OWN(ENT(loc >> 12, loc)) == 30, "region of a loc");
}

// Many lanes on one DUP slot: threads run DP0 of the same slot at once.
// Exactly one performs the DUP interaction; the others read the SUB it
// leaves, or find BUSY and defer (never spin), and succeed on a retry.

#define MANY 64

static struct {
  u32  slot;       // DUP expression slot
  u32  mode;
  u32  shift;
  Term res[MANY];
  u32  defers[MANY];
  u64  itrs[MANY];
  Term stack[MANY][256];
  volatile int go;
} M;

static void *many_lane(void *arg) {
  RT = TEST_RT;   // a thread of the test's runtime
  u32 i = (u32)(uintptr_t)arg;
  Wnf w;
  memset(&w, 0, sizeof w);
  w.heap = RT->heap.at; w.book = RT->heap.book; w.book_len = RT->heap.book_len; w.book_cnt = 0;
  w.stack = M.stack[i]; w.stack_cap = 256; w.budget = ~0ull;
  w.dup_mode = M.mode; w.region_shift = M.shift; w.on_device = 1;
  // Half the lanes act for the slot's region, half for another one.
  u32 own = M.slot >> M.shift;
  w.owner = (i & 1) ? own : own + 1;
  while (!M.go) {}
  Term t = TERM(DP0, 7, M.slot);
  for (;;) {
    Term r = wnf_run(&w, t);
    if (w.status == WNF_OK) { M.res[i] = r; break; }
    if (w.status != WNF_DEFER) { M.res[i] = 0; break; }
    M.defers[i]++;
    w.owner = w.defer;     // the deferral: retried acting for that owner
    t = r;
  }
  M.itrs[i] = w.itrs;
  return NULL;
}

static void many_on_one_slot(u32 mode) {
  memset(&M, 0, sizeof M);
  M.mode  = mode;
  M.shift = 8;
  // ! X &7 = #P{1, 2}: node [expr, body]; the pair node.
  u32 pair = heap_alloc(2);
  RT->heap.at[pair + 0] = TERM(NUM, 0, 1);
  RT->heap.at[pair + 1] = TERM(NUM, 0, 2);
  u32 dup = heap_alloc(2);
  RT->heap.at[dup + 0] = TERM(C00 + 2, 5, pair);
  RT->heap.at[dup + 1] = TERM(ERA, 0, 0);
  M.slot = dup;
  pthread_t th[MANY];
  for (u32 i = 0; i < MANY; i++) {
    pthread_create(&th[i], NULL, many_lane, (void *)(uintptr_t)i);
  }
  M.go = 1;
  for (u32 i = 0; i < MANY; i++) pthread_join(th[i], NULL);
  const char *mn = mode == DUP_OWNER ? "owner" : "atomic";
  u64 itrs = 0, defers = 0;
  u32 bad = 0;
  for (u32 i = 0; i < MANY; i++) {
    itrs += M.itrs[i];
    defers += M.defers[i];
    if (TAG(M.res[i]) != C00 + 2) bad++;
  }
  Term s = RT->heap.at[M.slot];
  CHECK(bad == 0, "%s: every lane got a pair (%u did not)", mn, bad);
  CHECK(itrs == 1, "%s: one DUP interaction in all, got %llu", mn,
        (unsigned long long)itrs);
  CHECK(IS_SUB(s) && TAG(s) == C00 + 2, "%s: the slot holds the SUB", mn);
  CHECK(s != BUSY, "%s: no BUSY left", mn);
  if (mode == DUP_OWNER) {
    // The non-owner lanes that found no SUB deferred to the slot's owner.
    u32 non_owner_defers = 0;
    for (u32 i = 0; i < MANY; i += 2) non_owner_defers += M.defers[i];
    CHECK(defers >= non_owner_defers, "owner: deferrals counted");
  }
}

// Sparks (wnf.h, lane.h): lanes that each hold an entry for one offered
// operand race the lane that offered it, which reduces the other operand
// and then takes the offer back or defers. Whoever wins, the operand is
// reduced once: the value and the interactions are one lane's, and no
// marked or BUSY word is left. Deferred entries run again until none is
// left, as passes would run them.

#define SPK_LANES 32
#define SPK_CAP   64

static struct {
  PassArgs a;
  PassCtl  ctl;
  u32      arena[2 * SPK_LANES];
  u32      seen[1 << 17];
  u64      outs[SPK_LANES * SPK_CAP];
  Term     stacks[SPK_LANES * 4096];
  u64      in[SPK_LANES];
  Lane     L[SPK_LANES];
  volatile int go;
} SP;

// Clears SP for a test whose lanes share one pass's arguments: mode, regions
// of 2^8 words, a budget no test reaches, no sparks offered.
static void sp_reset(u32 mode) {
  memset(&SP, 0, sizeof SP);
  SP.a = (PassArgs){ .heap = RT->heap.at, .book = RT->heap.book, .book_len = RT->heap.book_len, .book_cnt = 0,
                     .dup_mode = mode, .region_shift = 8, .budget = 1u << 30,
                     .stack_cap = 4096, .cap = SPK_CAP, .spark_gap = 0 };
}

static void *spark_lane(void *arg) {
  RT = TEST_RT;   // a thread of the test's runtime
  u32 i = (u32)(uintptr_t)arg;
  while (!SP.go) {}
  lane_entry(&SP.L[i], &SP.a, SP.seen, &SP.ctl, SP.in[i], 0);
  return NULL;
}

// ((1 + 2) + 3) + ... + n: n - 1 interactions
static Term sum_chain(u32 n) {
  Term t = TERM(NUM, 0, 1);
  for (u32 i = 2; i <= n; i++) {
    u32 at = heap_alloc(2);
    RT->heap.at[at] = t;
    RT->heap.at[at + 1] = TERM(NUM, 0, i);
    t = TERM(OP2, OP_ADD, at);
  }
  return t;
}

static void sparks_on_one_operand(u32 mode, u32 na, u32 nb) {
  sp_reset(mode);
  u32 op = heap_alloc(2), root = heap_alloc(1);
  Term b = sum_chain(nb);
  RT->heap.at[op]     = sum_chain(na);
  RT->heap.at[op + 1] = AS_SUB(b);                       // offered
  RT->heap.at[root]   = TERM(OP2, OP_ADD, op);
  for (u32 i = 0; i < SPK_LANES; i++) {
    lane_begin(&SP.L[i], &SP.a, i, SP.stacks, SP.arena, SP.outs);
    SP.in[i] = i == 0 ? ENT(root >> 8, root) : (ENT_SPK | ENT((op + 1) >> 8, op + 1));
  }
  pthread_t th[SPK_LANES];
  for (u32 i = 0; i < SPK_LANES; i++) pthread_create(&th[i], NULL, spark_lane, (void *)(uintptr_t)i);
  SP.go = 1;
  for (u32 i = 0; i < SPK_LANES; i++) pthread_join(th[i], NULL);
  // later passes, one lane at a time: what was deferred or pushed again
  u32 rounds = 0;
  for (int more = 1; more && rounds < 100; rounds++) {
    more = 0;
    for (u32 i = 0; i < SPK_LANES; i++) {
      u32 n = SP.L[i].cnt;
      u64 e[SPK_CAP];
      memcpy(e, SP.L[i].out, n * sizeof(u64));
      SP.L[i].cnt = 0;
      for (u32 k = 0; k < n; k++) lane_entry(&SP.L[i], &SP.a, SP.seen, &SP.ctl, e[k], n - 1 - k);
      more |= SP.L[i].cnt > 0;
    }
  }
  u64 itrs = 0;
  for (u32 i = 0; i < SPK_LANES; i++) itrs += SP.L[i].w.itrs;
  u64 want = (u64)na * (na + 1) / 2 + (u64)nb * (nb + 1) / 2;
  const char *mn = mode == DUP_OWNER ? "owner" : "atomic";
  CHECK(TAG(RT->heap.at[root]) == NUM && VAL(RT->heap.at[root]) == (u32)want,
        "%s %u+%u: the sum, got tag %u val %u", mn, na, nb, TAG(RT->heap.at[root]), VAL(RT->heap.at[root]));
  CHECK(itrs == (u64)(na - 1) + (nb - 1) + 1, "%s %u+%u: one reduction of each operand, got %llu itrs",
        mn, na, nb, (unsigned long long)itrs);
  CHECK(!IS_SUB(RT->heap.at[op + 1]) && RT->heap.at[op + 1] != BUSY, "%s: the offer is closed", mn);
  CHECK(rounds < 100, "%s: the deferred entries end", mn);
}

// The run's stuck marks: until a lane claims a stuck DUP's slot, lanes give
// their core no bitmap (no read of it at a DP0/DP1); the first claim sets
// SEEN_ANY (bit 0 of seen[0]) and every entry after it reads the marks.
static void stuck_marks(void) {
  sp_reset(DUP_ATOMIC);
  lane_begin(&SP.L[0], &SP.a, 0, SP.stacks, SP.arena, SP.outs);
  u32 plain = heap_alloc(1);
  RT->heap.at[plain] = sum_chain(3);
  lane_entry(&SP.L[0], &SP.a, SP.seen, &SP.ctl, ENT(plain >> 8, plain), 0);
  CHECK(RT->heap.at[plain] == TERM(NUM, 0, 6), "stuck marks: the plain entry ran");
  CHECK(SP.seen[0] == 0 && SP.L[0].w.stuck == NULL,
        "stuck marks: none claimed, no bitmap (seen[0] %u)", SP.seen[0]);
  // ! Y &A = (x 1); Y₀ with x free: the DUP is stuck, its slot claimed
  u32 x = heap_alloc(1), ap = heap_alloc(2), d = heap_alloc(1), r = heap_alloc(1);
  RT->heap.at[x]      = TERM(NUM, 0, 0);
  RT->heap.at[ap]     = TERM(VAR, 0, x);
  RT->heap.at[ap + 1] = TERM(NUM, 0, 1);
  RT->heap.at[d]      = TERM(APP, 0, ap);
  RT->heap.at[r]      = TERM(DP0, 1, d);
  lane_entry(&SP.L[0], &SP.a, SP.seen, &SP.ctl, ENT(r >> 8, r), 0);
  CHECK(RT->heap.at[r] == TERM(DP0, 1, d) && RT->heap.at[d] == TERM(APP, 0, ap),
        "stuck marks: the stuck DUP is left as it was");
  CHECK((SP.seen[d >> 5] >> (d & 31u)) & 1u, "stuck marks: the slot is claimed");
  CHECK(SP.seen[0] & SEEN_ANY, "stuck marks: the run has claims");
  CHECK(SP.L[0].w.stuck == SP.seen, "stuck marks: the claiming lane reads them");
  lane_begin(&SP.L[1], &SP.a, 1, SP.stacks, SP.arena, SP.outs);
  RT->heap.at[plain] = sum_chain(2);
  lane_entry(&SP.L[1], &SP.a, SP.seen, &SP.ctl, ENT(plain >> 8, plain), 0);
  CHECK(SP.L[1].w.stuck == SP.seen, "stuck marks: a later entry reads them");
  // a DP1 of the claimed slot is neutral at once, without a look inside:
  // x bound now (which a run never does under a stuck DUP) stays unseen
  u32 id = heap_alloc(1);
  RT->heap.at[id] = TERM(VAR, 0, id);
  RT->heap.at[x]  = AS_SUB(TERM(LAM, 0, id));
  u64 itrs = SP.L[1].w.itrs;
  RT->heap.at[r] = TERM(DP1, 1, d);
  lane_entry(&SP.L[1], &SP.a, SP.seen, &SP.ctl, ENT(r >> 8, r), 0);
  CHECK(RT->heap.at[d] == TERM(APP, 0, ap) && SP.L[1].w.itrs == itrs,
        "stuck marks: the marked slot is not taken again (%llu itrs)",
        (unsigned long long)(SP.L[1].w.itrs - itrs));
  // the same DP1 in a run with no claims is taken and reduced
  memset(SP.seen, 0, sizeof SP.seen);
  lane_begin(&SP.L[2], &SP.a, 2, SP.stacks, SP.arena, SP.outs);
  lane_entry(&SP.L[2], &SP.a, SP.seen, &SP.ctl, ENT(r >> 8, r), 0);
  CHECK(SP.L[2].w.itrs > 0 && RT->heap.at[d] != TERM(APP, 0, ap),
        "stuck marks: unmarked, the slot is taken and reduced");
}

// Owner mode: an entry that escalated (deferred ENT_ESCALATE times) passes
// its tries down to the children it pushes, so the walk below a contended
// node takes slots atomically instead of deferring again at each level;
// an entry that never deferred pushes children at 0 tries.
static void escalation_inherited(void) {
  for (u32 tries = 0; tries <= ENT_ESCALATE; tries++) {
    sp_reset(DUP_OWNER);
    // #P{1 + 2, 1 + 2}: two children to walk, the first one pushed
    u32 pair = heap_alloc(2), root = heap_alloc(1);
    RT->heap.at[pair + 0] = sum_chain(2);
    RT->heap.at[pair + 1] = sum_chain(2);
    RT->heap.at[root]     = TERM(C00 + 2, 5, pair);
    lane_begin(&SP.L[0], &SP.a, 0, SP.stacks, SP.arena, SP.outs);
    lane_entry(&SP.L[0], &SP.a, SP.seen, &SP.ctl, ENT_T(root >> 8, root, tries), 0);
    CHECK(SP.L[0].cnt == 1 && ENT_LOC(SP.L[0].out[0]) == pair,
          "escalation: one child pushed (%u entries)", SP.L[0].cnt);
    CHECK(ENT_TRIES(SP.L[0].out[0]) == tries,
          "escalation: a child of an entry at %u tries starts at %u", tries,
          ENT_TRIES(SP.L[0].out[0]));
    CHECK(RT->heap.at[pair + 1] == TERM(NUM, 0, 3), "escalation: the walk went on");
  }
}

// A deferral deep inside a WNF stack: (((X₀ + 1) + 1) ... + 1), 200 frames
// deep, where X's slot is in another region. The run stops with
// WNF_DEFER to that region and returns the term rebuilt (same root, same
// nodes); the retry as the owner finishes with the right number.
static void deep_deferral(void) {
  const u32 D = 200;
  Term stack[512];
  u32 dup = heap_alloc(2);
  RT->heap.at[dup + 0] = TERM(OP2, OP_ADD, 0);      // patched below: 40 + 2
  u32 nd = heap_alloc(2);
  RT->heap.at[nd + 0] = TERM(NUM, 0, 40);
  RT->heap.at[nd + 1] = TERM(NUM, 0, 2);
  RT->heap.at[dup + 0] = TERM(OP2, OP_ADD, nd);
  RT->heap.at[dup + 1] = TERM(ERA, 0, 0);
  Term t = TERM(DP0, 3, dup);
  u32 nodes[200];
  for (u32 i = 0; i < D; i++) {
    u32 n = heap_alloc(2);
    RT->heap.at[n + 0] = t;
    RT->heap.at[n + 1] = TERM(NUM, 0, 1);
    nodes[i] = n;
    t = TERM(OP2, OP_ADD, n);
  }
  Term root = t;
  Wnf w;
  memset(&w, 0, sizeof w);
  w.heap = RT->heap.at; w.book = RT->heap.book; w.book_len = RT->heap.book_len;
  w.stack = stack; w.stack_cap = 512; w.budget = ~0ull;
  w.dup_mode = DUP_OWNER; w.region_shift = 8; w.on_device = 1;
  w.owner = (dup >> 8) + 1;                  // not the slot's region
  Term r = wnf_run(&w, root);
  CHECK(w.status == WNF_DEFER, "deep: status %u, want WNF_DEFER", w.status);
  CHECK(w.defer == (dup >> 8), "deep: defers to the slot's region");
  CHECK(r == root, "deep: rebuilt to the same root term");
  u32 intact = 1;
  for (u32 i = 1; i < D; i++) {
    if (RT->heap.at[nodes[i] + 0] != TERM(OP2, OP_ADD, nodes[i - 1])) intact = 0;
  }
  CHECK(intact && RT->heap.at[nodes[0] + 0] == TERM(DP0, 3, dup),
        "deep: every frame folded back in place");
  CHECK(RT->heap.at[dup] == TERM(OP2, OP_ADD, nd), "deep: the slot is untouched");
  w.owner = w.defer;
  r = wnf_run(&w, r);
  CHECK(w.status == WNF_OK && r == TERM(NUM, 0, 42 + D),
        "deep: retry as owner gives %u (status %u, got %u)", 42 + D,
        w.status, VAL(r));
  // Same with a budget: stop in the middle, rebuild, resume.
  dup = heap_alloc(2);
  RT->heap.at[dup + 0] = TERM(NUM, 0, 5);
  RT->heap.at[dup + 1] = TERM(ERA, 0, 0);
  t = TERM(DP1, 3, dup);
  for (u32 i = 0; i < D; i++) {
    u32 n = heap_alloc(2);
    RT->heap.at[n + 0] = t;
    RT->heap.at[n + 1] = TERM(NUM, 0, 1);
    t = TERM(OP2, OP_ADD, n);
  }
  w.owner  = dup >> 8;
  w.budget = w.itrs + 50;
  r = wnf_run(&w, t);
  CHECK(w.status == WNF_BUDGET, "budget: status %u", w.status);
  u32 rounds = 0;
  while (w.status == WNF_BUDGET && rounds < 100) {
    w.budget = w.itrs + 50;
    r = wnf_run(&w, r);
    rounds++;
  }
  CHECK(w.status == WNF_OK && r == TERM(NUM, 0, 5 + D),
        "budget: resumed to %u (got %u)", 5 + D, VAL(r));
}

static const char *P_WIDE =
  "@fib  = λ{0: 0; 1: 1; λ&n.@fib(n - 1) + @fib(n - 2)}\n"
  "@tree = λ{0: λ&i.@fib(5 + (i % 7)); λ&d.λ&i.#N{@tree(d - 1, i * 2), @tree(d - 1, i * 2 + 1)}}\n"
  "@main = @tree(5, 0)\n";

static const char *P_LOG =
  "@main = [1 + 2, %log(\"hi\"), #A{3 * 4}]\n";

static const char *P_NEST =
  "@main = [%gnf([%gnf(2 * 3), 4]), %gnf(5)]\n";

// Many lanes, both modes, on programs with sharing, through the simulator.
static void sim_programs(void) {
  u32 dups[2] = {DUP_OWNER, DUP_ATOMIC};
  for (u32 k = 0; k < 2; k++) {
    u32 d = dups[k];
    same_as_cpu("wide",   P_WIDE,   sim(d, 128, 12, 4096));
    same_as_cpu("shared", P_SHARED, sim(d, 1024, 8, 64));
    same_as_cpu("shared", P_SHARED, sim(d, 1, 8, 1));
    same_as_cpu("church", P_CHURCH, sim(d, 1024, 8, 16));
    same_as_cpu("nest",   P_NEST,   sim(d, 32, 12, 4096));
  }
  // Owner mode with tiny regions defers.
  run(P_SHARED, sim(DUP_OWNER, 1024, 8, 64), &R1);
  unsigned long long df = stat_of(&R1, "defers=");
  CHECK(R1.ok && df > 0 && df != ~0ull, "owner mode deferred (%llu)", df);
  // Owner mode: DUPs a lane creates live in its own arena region; the
  // lane takes those deferrals over itself (hand-off), no pass lost.
  run(P_WIDE, sim(DUP_OWNER, 32, 8, 4096), &R1);
  unsigned long long lo = stat_of(&R1, "local=");
  CHECK(R1.ok && lo > 0 && lo != ~0ull, "owner hand-offs happen (%llu)", lo);
}

// Reclaiming in place (pass.c, docs/memory.md): with 8K words of device
// heap above the words in use (HVM4G_SIM_ROOM) the runs fill it many
// times; each reclaims between passes and goes on, with the CPU's normal
// form and interaction count. P_SHARED keeps a DUP's tree live across
// reclaims (sharing), P_STUCK stuck DUP chains (claims relocated), P_LOOP a
// strict loop of one entry, P_CHURCH SUB chains through λs.
static const char *P_LOOP =
  "@loop = λ{0: λacc. acc; λ&k. λacc. @next(k, ((acc * 31) + k) % 65521)}\n"
  "@next = λ&k. λ{0: @loop(k - 1, 0); λp. @loop(k - 1, p)}\n"
  "@main = @loop(20000, 1)\n";

static const char *P_STUCK =
  "@gen  = λ{0: #L{1}; λ&d.#T{@gen(d - 1), @gen(d - 1)}}\n"
  "@main = λf. !x&A = f; !y&B = x₀; [y₀, y₁, x₁, @gen(9), λg. !z&C = g; [z₀, z₁, @gen(8)]]\n";

static void reclaim_in_place(void) {
  const char *progs[5] = { P_LOOP, P_SHARED, P_STUCK, P_WIDE, P_CHURCH };
  const char *names[5] = { "loop", "shared", "stuck", "wide", "church" };
  u32 dups[2] = {DUP_OWNER, DUP_ATOMIC};
  setenv("HVM4G_SIM_ROOM", "8K", 1);
  for (u32 p = 0; p < 5; p++) {
    for (u32 k = 0; k < 2; k++) {
      RunConf c = sim(dups[k], 64, 8, 256);
      same_as_cpu(names[p], progs[p], c);
      unsigned long long a = stat_of(&R0, "itrs="), b = stat_of(&R1, "itrs=");
      unsigned long long r = stat_of(&R1, "reclaims=");
      CHECK(a == b, "%s: interactions %llu on the CPU, %llu with reclaims",
            names[p], a, b);
      CHECK(p == 4 || (r > 0 && r != ~0ull), "%s: reclaimed (%llu)", names[p], r);
    }
  }
  unsetenv("HVM4G_SIM_ROOM");
}

// The -T pool stopped after a few tasks leaves slots (distinct, none
// visited); normalizing those, on the CPU or on the device, and then the
// stuck DUPs it met, gives the CPU's normal form (main.c's hybrid).
static const char *P_WIDER =
  "@fib  = λ{0: 0; 1: 1; λ&n.@fib(n - 1) + @fib(n - 2)}\n"
  "@tree = λ{0: λ&i.@fib(8 + (i % 7)); λ&d.λ&i.#N{@tree(d - 1, i * 2), @tree(d - 1, i * 2 + 1)}}\n"
  "@main = @tree(9, 0)\n";

static void pool_left(void) {
  const char *progs[4] = { P_WIDER, P_WIDE, P_SHARED, P_CHURCH };
  const char *names[4] = { "wider", "wide", "shared", "church" };
  for (u32 p = 0; p < 4; p++) {
    run(progs[p], cpu(), &R0);
    term_of(&R0, T0, sizeof T0);
    for (u32 m = 2; m <= 3; m++) {
      for (u32 k = 0; k < 2; k++) {
        RunConf c = {(int)m, k ? DUP_ATOMIC : DUP_OWNER, 64, 12, 4096, 4, 0, 4};
        run(progs[p], c, &R1);
        unsigned long long n = stat_of(&R1, "left=");
        // a loaded machine can deschedule the stopping thread until the
        // pool has ended: the run is tried again (up to 20 times)
        for (u32 again = 0; p == 0 && R1.ok && n == 0 && again < 20; again++) {
          run(progs[p], c, &R1);
          n = stat_of(&R1, "left=");
        }
        term_of(&R1, T1, sizeof T1);
        CHECK(R1.ok && strcmp(T0, T1) == 0 && stat_of(&R1, "distinct=") != 0,
              "%s, the pool's left slots on the %s (%s): left=%llu, cpu "
              "'%.120s' got '%.120s'", names[p], m == 2 ? "CPU" : "device",
              k ? "atomic" : "owner", n, T0, T1);
        // 512 leaves of @fib: the pool polls the stop every 8 tasks it
        // runs, long before it could end, so it stops and leaves slots
        // (the smaller programs may end first)
        if (p == 0) {
          CHECK(n != ~0ull && n > 0, "wider: the pool left slots (%llu)", n);
        }
      }
    }
  }
}

// %log stops the device; the CPU finishes and prints it.
static void log_stops(void) {
  u32 dups[2] = {DUP_OWNER, DUP_ATOMIC};
  for (u32 k = 0; k < 2; k++) {
    run(P_LOG, cpu(), &R0);
    run(P_LOG, sim(dups[k], 64, 12, 4096), &R1);
    term_of(&R0, T0, sizeof T0);
    term_of(&R1, T1, sizeof T1);
    CHECK(R1.ok && strcmp(T0, T1) == 0, "log: cpu '%s' device '%s'", T0, T1);
    CHECK(strncmp(T1, "hi\n", 3) == 0, "log: printed once, first: '%s'", T1);
    CHECK(stat_of(&R1, "stops=") == 1, "log: the device stopped once");
    CHECK(stat_of(&R1, "stop=") == WNF_HOST, "log: stopped for the host");
    CHECK(stat_of(&R1, "pri=") == PRIM_LOG, "log: stopped at %%log");
  }
}

// The same program, many times, many lanes: the same output each time.
static void repeated(void) {
  u32 dups[2] = {DUP_OWNER, DUP_ATOMIC};
  for (u32 k = 0; k < 2; k++) {
    run(P_SHARED, sim(dups[k], 1024, 8, 32), &R0);
    term_of(&R0, T0, sizeof T0);
    u32 same = R0.ok;
    for (u32 i = 0; i < 6; i++) {
      run(P_SHARED, sim(dups[k], 1024, 8, 32), &R1);
      term_of(&R1, T1, sizeof T1);
      if (!R1.ok || strcmp(T0, T1) != 0) same = 0;
    }
    CHECK(same, "repeated (%s): outputs differ", k ? "atomic" : "owner");
  }
}

// The default lane count (gpu_default_lanes), with the H200's figures: 132
// multiprocessors of 32 blocks of 32 lanes (a wave of 135,168), 16 KiB
// stacks.
static void default_lanes(void) {
  u32 wave = 132u * 32u * 32u;
  CHECK(gpu_default_lanes(wave, 150000000000ull, 2048) == 1081344,
        "H200, memory free: 8 waves");
  CHECK(gpu_default_lanes(wave, 0, 2048) == 1081344, "free unknown: 8 waves");
  // the stacks within an eighth of the free memory, whole blocks: 95.8 GB
  // was what a second setup saw (run38), 731,177 lanes before the rounding
  u32 n = gpu_default_lanes(wave, 95800000000ull, 2048);
  CHECK(n == 730112 && n % 1024 == 0, "95.8 GB free: %u lanes", n);
  CHECK(gpu_default_lanes(wave, 1ull << 30, 2048) == wave, "1 GiB free: one wave");
  CHECK(gpu_default_lanes(1u << 20, 0, 2048) == (1u << 21), "at most 2^21");
  CHECK(gpu_default_lanes(100, 0, 2048) == 1024, "tiny device: one block");
}

// The hybrid's take-over rule (sched_wide_enough): --cpu-first tasks at any
// time; a 64th of them only once the pool's turn has run a second.
static void take_over_width(void) {
  SchedConf keep = RT->run->conf;
  RT->run->conf.cpu_first = 65536;
  CHECK(sched_wide_enough(65536, 0.2), "--cpu-first tasks: taken at once");
  CHECK(!sched_wide_enough(65535, 0.5), "fewer, early: the CPU keeps it");
  CHECK(!sched_wide_enough(60000, 0.99), "fewer, under a second: kept");
  CHECK(sched_wide_enough(1024, 1.0), "a 64th after a second: taken");
  CHECK(!sched_wide_enough(1023, 30.0), "a few long loops: kept however long");
  RT->run->conf.cpu_first = 262144;
  CHECK(!sched_wide_enough(4095, 1.0) && sched_wide_enough(4096, 1.0), "a 64th of a larger one");
  SchedConf def;
  sched_conf_default(&def);
  RT->run->conf.cpu_first = def.cpu_first;   // the default: its tasks at once, no fewer later
  CHECK(sched_wide_enough(def.cpu_first, 0.0), "the default's tasks: taken at once");
  CHECK(!sched_wide_enough(def.cpu_first / 64, 30.0) && !sched_wide_enough(def.cpu_first - 1, 30.0),
        "fewer than the default's: kept however long");
  RT->run->conf.cpu_first = 1;   // the tests' --cpu-first=1
  CHECK(sched_wide_enough(1, 0.0) && !sched_wide_enough(0, 0.5), "--cpu-first=1");
  RT->run->conf = keep;
}

// A pass's shape: narrow passes (fewer entries than lanes/narrow-share)
// get the short budget, offer sparks and wait for no held DUP slot; wide
// ones the full budget, no offers, and the backend's wait or --dup-wait.
static void pass_shape(void) {
  GpuConf  keep = RT->dev->conf;
  PassArgs a;
  RT->dev->conf.budget = 4096; RT->dev->conf.narrow_share = 2; RT->dev->conf.spark_gap = 64;
  RT->dev->conf.dup_wait_set = 0;
  u32 w = gpu_pass_shape(&a, 100, 1024, 32);
  CHECK(w == 0 && a.budget == 256 && a.spark_gap == 64, "narrow: wait %u, budget %u, gap %u",
        w, a.budget, a.spark_gap);
  w = gpu_pass_shape(&a, 512, 1024, 32);
  CHECK(w == 32 && a.budget == 4096 && a.spark_gap == 0, "wide: wait %u, budget %u, gap %u",
        w, a.budget, a.spark_gap);
  RT->dev->conf.dup_wait = 7; RT->dev->conf.dup_wait_set = 1;
  CHECK(gpu_pass_shape(&a, 512, 1024, 32) == 7, "--dup-wait=7 in a wide pass");
  CHECK(gpu_pass_shape(&a, 511, 1024, 32) == 0, "no wait in a narrow pass");
  RT->dev->conf = keep;
}

// The copy out's pieces tile the bitmap words and the live words in
// order, hold at least min_live live words each but the last, and cut
// only at the n parts' boundaries.
static void pieces_tile(const u32 *at, u32 n, u64 chunks, u64 words,
                        u64 min_live, const char *what) {
  GpuPiece pc[16];
  u32 k  = gpu_pieces(at, n, chunks, 256, words, min_live, pc);
  int ok = k >= 1 && k <= n && pc[0].w0 == 0 && pc[0].r0 == at[0] &&
           pc[k - 1].w1 == words && pc[k - 1].r1 == at[n];
  for (u32 i = 0; ok && i < k; i++) {
    ok = pc[i].w0 <= pc[i].w1 && pc[i].r0 <= pc[i].r1 &&
         (i == 0 || (pc[i].w0 == pc[i - 1].w1 && pc[i].r0 == pc[i - 1].r1)) &&
         (i == k - 1 || pc[i].r1 - pc[i].r0 >= min_live);
  }
  CHECK(ok, "pieces %s: %u pieces", what, k);
}

static void pieces(void) {
  // 8 chunks of 256 bitmap words, the last ending at 2000; 10 live words
  // a chunk
  u32 at[9] = { 0, 10, 20, 30, 40, 50, 60, 70, 80 };
  GpuPiece pc[8];
  u32 k = gpu_pieces(at, 8, 8, 256, 2000, 1, pc);
  CHECK(k == 8 && pc[1].w0 == 256 && pc[1].w1 == 512 && pc[7].w1 == 2000 &&
        pc[3].r0 == 30 && pc[3].r1 == 40, "one piece a part: %u", k);
  k = gpu_pieces(at, 8, 8, 256, 2000, 25, pc);
  CHECK(k == 3 && pc[0].r1 == 30 && pc[1].w0 == 768 && pc[1].r1 == 60 &&
        pc[2].r0 == 60 && pc[2].r1 == 80, "joined to 25 live words: %u", k);
  k = gpu_pieces(at, 8, 8, 256, 2000, 1000, pc);
  CHECK(k == 1 && pc[0].w1 == 2000 && pc[0].r1 == 80, "one piece: %u", k);
  pieces_tile(at, 8, 8, 2000, 1, "8 chunks");
  pieces_tile(at, 8, 8, 2000, 25, "joined");
  // fewer chunks than parts: parts of no chunk are empty
  u32 few[9] = { 0, 0, 0, 7, 7, 7, 9, 9, 9 };
  pieces_tile(few, 8, 3, 600, 1, "3 chunks");
  u32 none[9] = { 0 };
  k = gpu_pieces(none, 8, 0, 256, 0, 1, pc);
  CHECK(k == 1 && pc[0].w0 == 0 && pc[0].w1 == 0 && pc[0].r1 == 0,
        "nothing live: one empty piece (%u)", k);
  // random counts
  u32 seed = 12345;
  for (u32 t = 0; t < 200; t++) {
    u32 r[9];
    r[0] = 0;
    for (u32 i = 1; i <= 8; i++) {
      seed = seed * 1103515245u + 12345u;
      r[i] = r[i - 1] + (seed >> 16) % 50;
    }
    u64 chunks = 1 + (seed >> 8) % 40;
    pieces_tile(r, 8, chunks, chunks * 256 - (seed >> 4) % 256,
                1 + (seed >> 12) % 120, "random");
  }
}

// A frontier bounded by memory (pass.c, gpu_reclaim_next): a reclaim that
// finds the live words past a quarter of the room bounds the passes to an
// entry a lane (or the frontier's size, if less); one that finds them
// still past it and grown by a 32nd of the room since the bound last
// changed halves it; one under an eighth lifts it; one between keeps what
// was. The run goes on while a quarter of the room is left free.
static void pass_bound(void) {
  GpuBound b = { 0, 0 };
  CHECK(gpu_reclaim_next(100, 1000, 128, 500, &b) == 1 && b.run == 0, "room: none (%u)", b.run);
  CHECK(gpu_reclaim_next(200, 1000, 128, 500, &b) == 1 && b.run == 0, "between: kept none (%u)", b.run);
  CHECK(gpu_reclaim_next(251, 1000, 128, 500, &b) == 1 && b.run == 128, "a quarter: bound (%u)", b.run);
  CHECK(gpu_reclaim_next(270, 1000, 128, 500, &b) == 1 && b.run == 128, "slow growth: kept (%u)", b.run);
  CHECK(gpu_reclaim_next(283, 1000, 128, 500, &b) == 1 && b.run == 64,
        "a 32nd more than when set: halved (%u)", b.run);
  CHECK(gpu_reclaim_next(300, 1000, 128, 500, &b) == 1 && b.run == 64, "growth since halved: kept (%u)", b.run);
  CHECK(gpu_reclaim_next(200, 1000, 128, 500, &b) == 1 && b.run == 64, "between: kept (%u)", b.run);
  CHECK(gpu_reclaim_next(125, 1000, 128, 500, &b) == 1 && b.run == 0, "an eighth: lifted (%u)", b.run);
  b = (GpuBound){ 0, 0 };
  CHECK(gpu_reclaim_next(300, 1000, 8192, 700, &b) == 1 && b.run == 700,
        "more lanes than entries: the frontier's size (%u)", b.run);
  CHECK(gpu_reclaim_next(340, 1000, 8192, 700, &b) == 1 && b.run == 350, "steady growth: halved (%u)", b.run);
  for (u64 live = 380; live < 740; live += 40) gpu_reclaim_next(live, 1000, 8192, 700, &b);
  CHECK(b.run == 1, "halved down to one entry (%u)", b.run);
  b = (GpuBound){ 0, 0 };
  CHECK(gpu_reclaim_next(600, 1000, 128, 500, &b) == 1 && b.run == 128,
        "past half: bound, and on (%u)", b.run);
  CHECK(gpu_reclaim_next(750, 1000, 128, 500, &b) == 1, "three quarters: on");
  CHECK(gpu_reclaim_next(751, 1000, 128, 500, &b) == 0, "past three quarters: stop");
  b = (GpuBound){ 0, 0 };
  CHECK(gpu_reclaim_next(500, 1000, 0, 500, &b) == 1 && b.run == 1, "no lanes: one entry (%u)", b.run);
}

// A runtime's close frees its device part (dev_rt_close): the simulator's
// part and the first frontier's buffer go, and a later run makes them
// again, with the same result. In a child: the program's definitions stay
// out of the other tests' book.
static void close_frees_part(void) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    if (parse_text("close.hvm4", "@main = #P{1 + 2, 3 * 4, λx.x}") != 0) _exit(2);
    u32 id = table_find("main", 4);
    eval_init();
    eval_set_host(prim_host);
    RT->dev->conf.device  = DEV_SIM;
    RT->dev->conf.handoff = 0;   // a loaded machine's slow passes would hand back (pass.c)
    for (u32 i = 0; i < 100; i++) {
      u32 root = heap_alloc(1);
      RT->heap.at[root] = TERM(REF, id, 0);
      if (gpu_snf_at(root) != 0 || !RT->dev->sim || !RT->dev->ent) _exit(3);
      Term t = RT->heap.at[root];
      if (TAG(t) != C00 + 3 || RT->heap.at[VAL(t)] != TERM(NUM, 0, 3) ||
          RT->heap.at[VAL(t) + 1] != TERM(NUM, 0, 12)) {
        _exit(4);
      }
      dev_rt_close();
      if (RT->dev->sim || RT->dev->ent || RT->dev->ent_cap) _exit(5);
    }
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
        "close: the part freed and made again (child status %d)",
        WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

// HVM4G_DEV_HEAP_START: words (K/M/G), at least 1M; else 0 (the host's).
static void heap_start(void) {
  unsetenv("HVM4G_DEV_HEAP_START");
  CHECK(gpu_heap_start() == 0, "unset: the host's");
  setenv("HVM4G_DEV_HEAP_START", "2M", 1);
  CHECK(gpu_heap_start() == (2u << 20), "2M words");
  setenv("HVM4G_DEV_HEAP_START", "4096", 1);
  CHECK(gpu_heap_start() == 0, "under 1M: ignored");
  setenv("HVM4G_DEV_HEAP_START", "lots", 1);
  CHECK(gpu_heap_start() == 0, "not a size: ignored");
  unsetenv("HVM4G_DEV_HEAP_START");
}

int main(void) {
  test_entries();
  default_lanes();
  take_over_width();
  pass_shape();
  heap_start();
  pieces();
  pass_bound();
  if (heap_init(1u << 22) != 0) {
    printf("heap_init failed\n0 passed, 1 failed\n");
    return 1;
  }
  many_on_one_slot(DUP_ATOMIC);
  many_on_one_slot(DUP_OWNER);
  for (u32 m = 0; m < 2; m++) {
    u32 mode = m ? DUP_OWNER : DUP_ATOMIC;
    sparks_on_one_operand(mode, 2, 3000);     // the lanes win
    sparks_on_one_operand(mode, 3000, 2);     // the offering lane wins
    sparks_on_one_operand(mode, 800, 800);
  }
  escalation_inherited();
  stuck_marks();
  deep_deferral();
  close_frees_part();
  sim_programs();
  reclaim_in_place();
  pool_left();
  log_stops();
  repeated();
  printf("%d passed, %d failed\n", PASS, FAIL);
  return FAIL ? 1 : 0;
}
