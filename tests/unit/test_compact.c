// test_compact.c: packing a device run's live result (src/core/compact.h)
// through the simulated device's roots, mark and close.
//
// Each case builds a host heap [1, top0), opens a sim run (which takes the
// shadow copy), then plays the device: allocates above top0 (garbage and
// live nodes) and changes words below top0. After packing, the host heap
// must hold exactly the live words at top0, with every pointer moved and
// sharing kept.

#include <stdlib.h>
#include <string.h>
#include "heap/heap.h"
#include "dev/dev.h"
#include "check.h"
#include "heap/rt.h"
#include "dev/dev_rt.h"

static u64 TOP0;

// A fresh heap of `host` words in use; opens a sim run over it.
static void begin(u32 host, u32 lanes) {
  memset(RT->heap.at, 0, (atomic_load(&RT->heap.top) + 64) * sizeof(Term));
  atomic_store(&RT->heap.top, 1);
  for (u32 i = 1; i < host; i++) {
    RT->heap.at[heap_alloc(1)] = TERM(NUM, 0, i);   // inert host words
  }
  TOP0 = atomic_load(&RT->heap.top);
  RT->dev->conf.lanes   = lanes;
  RT->dev->conf.threads = 4;
  char err[128];
  u32 root = 1;
  CHECK(GPU_SIM.open(&root, 1, err, sizeof err) == 0);
}

// The device allocates n words (garbage until written).
static u32 dev_alloc(u32 n) {
  u32 at = heap_alloc(n);
  for (u32 i = 0; i < n; i++) RT->heap.at[at + i] = TERM(APP, 0, 0xDEAD);
  return at;
}

// Packs; returns 0 on success. PASSES: its mark passes.
static u32 PASSES = 0;

static int pack(void) {
  char err[256];
  long long n = GPU_SIM.roots(err, sizeof err);
  u32 prev = 0, b = 0, cut = 0;
  PASSES = 0;
  while (n > 0) {
    PASSES++;
    b    = gpu_mark_budget((u32)n, GPU_SIM.lanes(), prev, b, cut);
    prev = (u32)n;
    n    = GPU_SIM.mark((u32)n, b, &cut, err, sizeof err);
  }
  if (n < 0) {
    printf("mark failed: %s\n", err);
    GPU_SIM.abandon();
    return -1;
  }
  int rc = GPU_SIM.close(err, sizeof err);
  if (rc) printf("close failed: %s\n", err);
  return rc;
}

static u64 grew(void) {
  return atomic_load(&RT->heap.top) - TOP0;
}

// A node reached twice is copied once; garbage is dropped.
static void shared_node(void) {
  begin(100, 32);
  u32 root = 5;
  dev_alloc(1000);                                 // garbage
  u32 sup = dev_alloc(2);
  RT->heap.at[sup + 0] = TERM(NUM, 0, 1);
  RT->heap.at[sup + 1] = TERM(NUM, 0, 2);
  dev_alloc(77);                                   // garbage
  u32 pair = dev_alloc(2);
  RT->heap.at[pair + 0] = TERM(SUP, 3, sup);
  RT->heap.at[pair + 1] = TERM(SUP, 3, sup);
  RT->heap.at[root] = TERM(C00 + 2, 9, pair);
  CHECK(pack() == 0);
  CHECK(grew() == 4);
  Term r = RT->heap.at[root];
  CHECK(TAG(r) == C00 + 2 && EXT(r) == 9 && VAL(r) >= TOP0 && VAL(r) < TOP0 + 4);
  Term a = RT->heap.at[VAL(r)], b = RT->heap.at[VAL(r) + 1];
  CHECK(a == b && TAG(a) == SUP && EXT(a) == 3);
  CHECK(RT->heap.at[VAL(a)] == TERM(NUM, 0, 1) && RT->heap.at[VAL(a) + 1] == TERM(NUM, 0, 2));
  CHECK(RT->heap.at[TOP0 + 4] == 0);                      // above the top: cleared
}

// A variable whose binder slot holds a SUB of a variable whose slot holds
// a SUB: the chain is kept, each link moved.
static void sub_chain(void) {
  begin(50, 8);
  u32 root = 7;
  u32 l2 = dev_alloc(1);
  dev_alloc(500);
  u32 l1 = dev_alloc(1);
  RT->heap.at[l2] = AS_SUB(TERM(NUM, 0, 42));
  RT->heap.at[l1] = AS_SUB(TERM(VAR, 0, l2));
  RT->heap.at[root] = TERM(VAR, 0, l1);
  CHECK(pack() == 0);
  CHECK(grew() == 2);
  Term v1 = RT->heap.at[root];
  CHECK(TAG(v1) == VAR && VAL(v1) >= TOP0);
  Term s1 = RT->heap.at[VAL(v1)];
  CHECK(IS_SUB(s1) && TAG(s1) == VAR && VAL(s1) >= TOP0);
  CHECK(RT->heap.at[VAL(s1)] == AS_SUB(TERM(NUM, 0, 42)));
}

// A stuck DUP: DP0 in the result, DP1 in a host word the run changed (the
// host still holds it); both end at the one moved expression slot, and a
// DUP node referenced whole elsewhere stays whole.
static void stuck_dup(int whole) {
  begin(64, 16);
  u32 root = 3, held = 40;
  dev_alloc(300);
  u32 dup = dev_alloc(2);                          // [expr, body]
  u32 lam = dev_alloc(1);
  RT->heap.at[lam] = TERM(VAR, 0, lam);                   // λx.x
  RT->heap.at[dup + 0] = TERM(LAM, 0, lam);
  RT->heap.at[dup + 1] = TERM(NUM, 0, 9);
  RT->heap.at[root] = TERM(DP0, 5, dup);
  RT->heap.at[held] = TERM(DP1, 5, dup);
  u32 other = 20;
  if (whole) RT->heap.at[other] = TERM(DUP, 5, dup);      // the whole node
  CHECK(pack() == 0);
  CHECK(grew() == (whole ? 3 : 2));
  CHECK(VAL(RT->heap.at[root]) == VAL(RT->heap.at[held]));
  Term e = RT->heap.at[VAL(RT->heap.at[root])];
  CHECK(TAG(e) == LAM && RT->heap.at[VAL(e)] == TERM(VAR, 0, VAL(e)));
  CHECK(TAG(RT->heap.at[root]) == DP0 && TAG(RT->heap.at[held]) == DP1);
  if (whole) {
    CHECK(VAL(RT->heap.at[other]) == VAL(RT->heap.at[root]));
    CHECK(RT->heap.at[VAL(RT->heap.at[other]) + 1] == TERM(NUM, 0, 9));
  }
}

// Only changed words are roots: device words reachable from an unchanged
// host word cannot exist, and a host word pointing below top0 stays.
static void host_pointers(void) {
  begin(64, 4);
  RT->heap.at[10] = TERM(C00 + 2, 1, 30);                 // host node, unchanged
  GPU_SIM.abandon();
  char err[128];
  u32 root = 1;
  CHECK(GPU_SIM.open(&root, 1, err, sizeof err) == 0);
  dev_alloc(100);
  u32 n = dev_alloc(1);
  RT->heap.at[n] = TERM(NUM, 0, 5);
  RT->heap.at[31] = TERM(INC, 0, n);                      // changed, into the device
  RT->heap.at[0]  = TERM(APP, 0, (u32)TOP0 + 50);         // the label count: no term
  CHECK(pack() == 0);
  CHECK(grew() == 1);
  CHECK(RT->heap.at[10] == TERM(C00 + 2, 1, 30));
  CHECK(RT->heap.at[31] == TERM(INC, 0, (u32)TOP0) && RT->heap.at[TOP0] == TERM(NUM, 0, 5));
  CHECK(RT->heap.at[0] == TERM(APP, 0, (u32)TOP0 + 50));
  RT->heap.at[0] = 0;
}

// A long list spread over many rank chunks and lanes, with garbage between
// the cells: order, count and links survive; a deep spine is walked.
// A list of `cells` cells at RT->heap.at[root], with garbage between them; with
// `comb`, each cell's head is a node of its own (a side branch) instead of
// a number.
static void build_list(u32 root, u32 cells, int comb) {
  Term next = TERM(C00, 2, 0);                     // #Nil{}
  for (u32 i = 0; i < cells; i++) {
    dev_alloc(i % 13);
    Term head = TERM(NUM, 0, i);
    if (comb) {
      u32 leaf = dev_alloc(2);
      RT->heap.at[leaf + 0] = TERM(NUM, 0, i);
      RT->heap.at[leaf + 1] = TERM(NUM, 0, 1);
      head = TERM(SUP, 1, leaf);
    }
    u32 c = dev_alloc(2);
    RT->heap.at[c + 0] = head;
    RT->heap.at[c + 1] = next;
    next = TERM(C00 + 2, 3, c);
  }
  RT->heap.at[root] = next;
}

static void long_list(u32 lanes) {
  begin(200, lanes);
  u32 root = 150;
  u32 cells = 50000;
  build_list(root, cells, 0);
  CHECK(pack() == 0);
  CHECK(grew() == 2ull * cells);
  u32 i = cells;
  u32 ok = 1;
  Term t = RT->heap.at[root];
  while (TAG(t) == C00 + 2) {
    i--;
    if (RT->heap.at[VAL(t)] != TERM(NUM, 0, i) || VAL(t) < TOP0 ||
        VAL(t) >= TOP0 + 2ull * cells) ok = 0;
    t = RT->heap.at[VAL(t) + 1];
  }
  CHECK(ok && i == 0 && t == TERM(C00, 2, 0));
  CHECK(PASSES <= 24);   // the spine's budget doubles: 100,000 words
}

// A tree of `node` nodes (a SUP, or a 16-field constructor), d levels
// below its root, numbered leaves; each node followed by d garbage words.
static u32 tree(Term node, u32 d, u32 *leaves) {
  u32 k = term_arity(node);
  u32 n = dev_alloc(k);
  dev_alloc(d);
  for (u32 j = 0; j < k; j++) {
    if (d == 0) RT->heap.at[n + j] = TERM(NUM, 0, (*leaves)++);
    else        RT->heap.at[n + j] = node | (Term)tree(node, d - 1, leaves);
  }
  return n;
}

static u32 tree_sum(Term t) {
  if (TAG(t) == NUM) return VAL(t);
  u32 s = 0;
  for (u32 j = 0; j < term_arity(t); j++) s += tree_sum(RT->heap.at[VAL(t) + j]);
  return s;
}

// Packs the tree of `node` nodes (`depth` levels below the root, at 9):
// `nodes` of them, each kept whole, the rest garbage.
static void packed_tree(Term node, u32 depth, u32 lanes, u64 nodes) {
  begin(32, lanes);
  u32 leaves = 0;
  RT->heap.at[9] = node | (Term)tree(node, depth, &leaves);
  u32 want = tree_sum(RT->heap.at[9]);
  CHECK(pack() == 0);
  CHECK(grew() == term_arity(node) * nodes);
  CHECK(tree_sum(RT->heap.at[9]) == want);
}

// A wide tree: many lanes mark at once (atomic or on shared bitmap words).
static void wide_tree(void) {
  packed_tree(TERM(SUP, 1, 0), 14, 1024, (1u << 15) - 1);
}

// A tree of 16-field constructors: a mark level's entries each push their
// whole node (MARK_SPAN), and the levels hand a frontier wider than
// MARK_BLOCK_MAX back to mark passes (16^4 = 65,536 nodes at depth 4).
static void wide_tree16(void) {
  packed_tree(TERM(C16, 0, 0), 4, 64, 1 + 16 + 256 + 4096 + 65536);
}

// The mark budget: short passes while the frontier widens or drains, a
// doubling budget while it keeps its size (a spine), MARK_BUDGET when wide.
static void mark_budget_rule(void) {
  u32 b = 0;
  for (u32 i = 0; i < 20; i++) {          // one spine: one walk cut a pass
    b = gpu_mark_budget(1, 1000, 1, b, 1);
  }
  CHECK(b == (1u << 20));
  b = 0;
  for (u32 i = 0; i < 20; i++) {          // a comb: b / 2 side branches
    b = gpu_mark_budget(b / 2 + 1, 1u << 30, b / 4 + 1, b, 1);
  }
  CHECK(b == (1u << 20));
  b = 0;
  u32 prev = 0, most = 0;
  for (u32 n = 900; n > 0; n -= 30) {      // a tree's last subtrees
    b    = gpu_mark_budget(n, 1000, prev, b, n / 2);
    prev = n;
    if (b > most) most = b;
  }
  CHECK(most == 128);
  CHECK(gpu_mark_budget(50, 1000, 10, 1024, 10) == 32);   // widening again
  CHECK(gpu_mark_budget(2000, 1000, 10, 64, 10) == 4096);  // wide
}

// A comb: a list whose every cell also points at a small node of its own,
// so each pass leaves one cut walk (the spine) and many side branches.
static void comb_list(void) {
  begin(200, 256);
  u32 root  = 150;
  u32 cells = 30000;
  build_list(root, cells, 1);
  CHECK(pack() == 0);
  CHECK(grew() == 4ull * cells);
  CHECK(PASSES <= 30);   // was 1,500-2,000 passes when read from the frontier
}

int main(void) {
  // The cases play a device that writes words its root cannot reach: the
  // poison check (sim.c) would rightly stop them.
  unsetenv("HVM4G_SIM_POISON");
  if (heap_init(1u << 26) != 0) {
    printf("heap_init failed\n0 passed, 1 failed\n");
    return 1;
  }
  RT->dev->conf.device = DEV_SIM;
  RT->dev->conf.mark_levels = 0;   // one pass per level first (the default is 1)
  shared_node();
  sub_chain();
  stuck_dup(0);
  stuck_dup(1);
  host_pointers();
  long_list(1);
  long_list(256);
  wide_tree();
  wide_tree16();
  RT->dev->conf.mark_levels = 1;   // the same, narrow frontiers marked level by level
  wide_tree();
  wide_tree16();
  long_list(256);
  comb_list();
  RT->dev->conf.mark_levels = 0;
  mark_budget_rule();
  comb_list();
  return check_done();
}
