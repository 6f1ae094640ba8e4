// test_reclaim.c: collections of the CPU heap (cpu/reclaim.c). Graphs are
// built by hand above the base, some garbage beside them; a collection
// runs; then every word it handed back is taken and overwritten, and the
// live graphs must read as before: sharing (two projections of one DUP), a
// SUB chain, a stuck DUP held by the host in a root frame, a slot held as a
// root, a queued task; a thread's records of the DUP slots its frames took
// are forgotten; a tiny gap still hands out chunks the core can use; a
// host primitive in flight stops no run for a collection, unless it is
// rooted (%nf), whose slot then stays a root. And a heap too
// full to go on says so; the gap's cost factor follows the walks' time.

#include <string.h>
#include "heap/heap.h"
#include "cpu/cpu.h"
#include "cpu/eval.h"
#include "cpu/snf.h"
#include "cpu/pool.h"
#include "cpu/reclaim.h"
#include "check.h"
#include "heap/rt.h"
#include "cpu/cpu_rt.h"

// n words of garbage: nodes nothing points to.
static void garbage(u32 n) {
  u32 at = nodes(n);
  for (u32 i = 0; i < n; i++) RT->heap.at[at + i] = TERM(SUP, 1, at);
}

// Takes every word the collection handed back and overwrites it: what is
// still read later must not be among them.
static u64 scribble(void) {
  u64 words = 0;
  u32 got;
  u32 at;
  while ((at = heap_take(1, RT->cpu->reclaim.arena, &got)) != 0) {
    for (u32 i = 0; i < got; i++) RT->heap.at[at + i] = TERM(NUM, 0, 0xDEAD);
    words += got;
  }
  return words;
}

int main(void) {
  if (heap_init(1u << 20) != 0) {
    printf("heap_init failed\n");
    return 1;
  }
  cpu_rt_open();
  Reclaim *rc = &RT->cpu->reclaim;
  RT->cpu->conf.threads     = 1;
  RT->cpu->conf.reclaim_gap = 4096;   // arenas and chunks of 4096 words
  eval_init();
  reclaim_arm();             // the base: nothing built yet
  u32 tid = 0;

  // Sharing: a DUP slot read by both projections.
  garbage(5000);
  u32  slot = nodes(1);
  RT->heap.at[slot] = node2(SUP, 7, TERM(NUM, 0, 1), TERM(NUM, 0, 2));
  Term pair  = node2(C00 + 2, 3, TERM(DP0, 7, slot), TERM(DP1, 7, slot));
  garbage(5000);

  // A SUB chain: a variable whose binder slot holds, substituted, another
  // variable whose slot holds a number.
  u32 b1 = nodes(1), b2 = nodes(1);
  RT->heap.at[b2] = AS_SUB(TERM(NUM, 0, 42));
  RT->heap.at[b1] = AS_SUB(TERM(VAR, 0, b2));
  Term chain = TERM(VAR, 0, b1);
  garbage(5000);

  // A stuck DUP held by the host: a projection of a DUP of a free
  // variable (its lambda's body slot holds no SUB).
  u32 lam  = nodes(1);
  u32 dslot = nodes(1);
  RT->heap.at[dslot] = TERM(VAR, 0, lam);
  RT->heap.at[lam]   = TERM(DP0, 9, dslot);
  Term stuck  = TERM(DP1, 9, dslot);
  garbage(5000);

  // A slot held as a root, pointing to an application.
  u32 held = nodes(1);
  RT->heap.at[held] = node2(APP, 0, TERM(NUM, 0, 5), TERM(ERA, 0, 0));
  garbage(5000);

  // A queued task of this thread (its deque is a root).
  snf_init();
  u32 queued = nodes(1);
  RT->heap.at[queued] = node2(OP2, OP_ADD, TERM(NUM, 0, 3), TERM(NUM, 0, 4));
  pool_push(POOL_TASK(0, queued));
  garbage(5000);

  Term root_pair = pair, root_chain = chain, root_stuck = stuck;
  RootFrame f1 = { &root_pair, 0, NULL }, f2 = { &root_chain, 0, NULL };
  RootFrame f3 = { &root_stuck, 0, NULL }, f4 = { NULL, held, NULL };
  reclaim_hold(rc, tid, &f1);
  reclaim_hold(rc, tid, &f2);
  reclaim_hold(rc, tid, &f3);
  reclaim_hold(rc, tid, &f4);

  u64 top = heap_used();
  CHECK(reclaim_oom(tid) != 0);
  ReclaimStats r = reclaim_stats();
  CHECK(r.runs == 1);
  CHECK(r.freed >= 25000);                 // the garbage, less the short runs
  CHECK(r.live < 64);                      // the graphs' few words
  CHECK(heap_used() < top);                // the top dropped to the last live word
  CHECK(scribble() >= 20000);

  // every live graph reads as it was built
  CHECK(root_pair == pair);
  CHECK(TAG(RT->heap.at[VAL(pair)]) == DP0 && TAG(RT->heap.at[VAL(pair) + 1]) == DP1);
  CHECK(VAL(RT->heap.at[VAL(pair)]) == slot && VAL(RT->heap.at[VAL(pair) + 1]) == slot);
  Term sup = RT->heap.at[slot];
  CHECK(TAG(sup) == SUP && EXT(sup) == 7);
  CHECK(RT->heap.at[VAL(sup)] == TERM(NUM, 0, 1) && RT->heap.at[VAL(sup) + 1] == TERM(NUM, 0, 2));
  CHECK(RT->heap.at[b1] == AS_SUB(TERM(VAR, 0, b2)));
  CHECK(RT->heap.at[b2] == AS_SUB(TERM(NUM, 0, 42)));
  CHECK(RT->heap.at[dslot] == TERM(VAR, 0, lam));
  CHECK(RT->heap.at[lam] == TERM(DP0, 9, dslot));
  Term app = RT->heap.at[held];
  CHECK(TAG(app) == APP && RT->heap.at[VAL(app)] == TERM(NUM, 0, 5));
  Term add = RT->heap.at[queued];
  CHECK(TAG(add) == OP2 && RT->heap.at[VAL(add) + 1] == TERM(NUM, 0, 4));

  // Dropping the frames makes their graphs garbage at the next collection.
  reclaim_drop(rc, tid, &f4);
  reclaim_drop(rc, tid, &f3);
  reclaim_drop(rc, tid, &f2);
  reclaim_drop(rc, tid, &f1);
  u64 x;
  while (pool_find(POOL_ANY, &x)) {}
  CHECK(reclaim_oom(tid) != 0);
  CHECK(reclaim_stats().runs == 2);
  CHECK(reclaim_stats().live < r.live);    // the held graphs are gone
  CHECK(heap_used() <= top - 30000);

  // A tiny gap: every chunk still holds the core's refill (a shorter one
  // would be skipped by every refill, the heap growing from the top), and
  // the next collection waits for at least a quarter of the live words.
  reclaim_disarm();
  RT->cpu->conf.reclaim_gap = 64;
  reclaim_arm();
  CHECK(rc->arena >= 2 * WNF_RESERVE);
  u32 keep = nodes(1);
  u32 lst2 = nodes(40000);
  for (u32 i = 0; i + 1 < 40000; i++) RT->heap.at[lst2 + i] = TERM(C00 + 1, 1, lst2 + i + 1);
  RT->heap.at[lst2 + 39999] = TERM(NUM, 0, 0);
  RT->heap.at[keep] = TERM(C00 + 1, 1, lst2);
  // garbage runs between live links, so that the free runs lie below the
  // last live word and become chunks
  u32 link = keep;
  for (u32 i = 0; i < 8; i++) {
    garbage(3000);
    u32 next = nodes(1);
    RT->heap.at[next] = RT->heap.at[link];
    RT->heap.at[link] = TERM(C00 + 1, 1, next);
    link = next;
  }
  RootFrame fk = { NULL, keep, NULL };
  reclaim_hold(rc, tid, &fk);
  CHECK(reclaim_oom(tid) != 0);
  CHECK(rc->next - heap_given() >= 40000 / 4);
  u64 top2 = heap_used();
  u32 got2, short_chunks = 0, chunks = 0, at2;
  while ((at2 = heap_take(WNF_RESERVE, WNF_RESERVE, &got2)) != 0 && at2 < top2) {
    chunks++;
    if (got2 < WNF_RESERVE) short_chunks++;
  }
  CHECK(chunks >= 1 && short_chunks == 0);
  CHECK(RT->heap.at[link] == TERM(C00 + 1, 1, lst2) && RT->heap.at[lst2 + 39999] == TERM(NUM, 0, 0));
  reclaim_drop(rc, tid, &fk);
  RT->cpu->conf.reclaim_gap = 4096;

  // A host primitive in flight: no collection can run, so the gap does not
  // stop a refill; a run that stopped for it just before retries, and no
  // collection runs; once the primitive returns, the due one does.
  u64 runs = reclaim_stats().runs;
  reclaim_host(1);
  rc->next = heap_given();
  CHECK(!reclaim_due(rc));
  CHECK(reclaim_oom(tid) == 2);
  CHECK(reclaim_stats().runs == runs);
  CHECK(rc->next > heap_given());
  reclaim_host(-1);
  rc->next = heap_given();
  CHECK(reclaim_due(rc));
  CHECK(reclaim_oom(tid) == 2);
  CHECK(reclaim_stats().runs == runs + 1);
  CHECK(!reclaim_due(rc));

  // A rooted primitive in flight (%nf on the CPU): collections run, and
  // its slot stays where it is with what it holds; a primitive that starts
  // inside it and is not rooted (a %log) blocks them until it returns.
  reclaim_host(1);
  RootFrame rooted;
  garbage(5000);
  u32 nf_slot = nodes(1);
  Term nf_val = node2(C00 + 2, 4, TERM(NUM, 0, 5), TERM(NUM, 0, 6));
  RT->heap.at[nf_slot] = nf_val;
  garbage(5000);
  CHECK(reclaim_rooted_host(&rooted, nf_slot));
  rc->next = heap_given();
  CHECK(reclaim_due(rc));
  reclaim_host(1);
  CHECK(!reclaim_due(rc));
  CHECK(reclaim_oom(tid) == 2);
  CHECK(reclaim_stats().runs == runs + 1);
  reclaim_host(-1);
  rc->next = heap_given();
  CHECK(reclaim_oom(tid) == 2);
  CHECK(reclaim_stats().runs == runs + 2);
  scribble();
  Term nf_now = RT->heap.at[nf_slot];
  CHECK(TAG(nf_now) == C00 + 2 && RT->heap.at[VAL(nf_now)] == TERM(NUM, 0, 5) &&
        RT->heap.at[VAL(nf_now) + 1] == TERM(NUM, 0, 6));
  reclaim_rooted_host_end(&rooted);
  rc->next = heap_given();
  CHECK(!reclaim_due(rc));
  reclaim_host(-1);
  CHECK(reclaim_due(rc));
  CHECK(reclaim_oom(tid) == 2);
  CHECK(!reclaim_due(rc));

  // A heap whose words are all live leaves no room: 0, the end of the run.
  reclaim_disarm();
  reclaim_arm();
  u32  big  = nodes(1);
  u64  fill = RT->heap.cap - heap_used() - 16;
  u32  lst  = nodes((u32)fill);
  for (u64 i = 0; i + 1 < fill; i++) RT->heap.at[lst + i] = TERM(C00 + 1, 1, lst + i + 1);
  RT->heap.at[lst + fill - 1] = TERM(NUM, 0, 0);
  RT->heap.at[big] = TERM(C00 + 1, 1, lst);
  RootFrame fb = { NULL, big, NULL };
  reclaim_hold(rc, tid, &fb);
  rc->next = ~0ull;   // not due: the heap is full
  CHECK(reclaim_oom(tid) == 0);
  reclaim_drop(rc, tid, &fb);

  // The gap's cost factor: a walk over a sixteenth of the time since the
  // last collection doubles it (up to its cap), one under a sixty-fourth
  // halves it back, one between keeps it.
  CHECK(reclaim_cost_factor(1, 1.0, 10.0) == 2);
  CHECK(reclaim_cost_factor(8, 1.0, 10.0) == 16);
  CHECK(reclaim_cost_factor(64, 1.0, 10.0) == 64);
  CHECK(reclaim_cost_factor(4, 0.2, 10.0) == 4);
  CHECK(reclaim_cost_factor(4, 0.01, 10.0) == 2);
  CHECK(reclaim_cost_factor(1, 0.01, 10.0) == 1);

  // The gap's fresh-word factor: none where a fresh word costs as much as
  // a walk's share or more, or is not measured; the ratio where it costs
  // less, up to its cap.
  CHECK(reclaim_fresh_factor(0) == 1);
  CHECK(reclaim_fresh_factor(30) == 1);
  CHECK(reclaim_fresh_factor(15) == 1);
  CHECK(reclaim_fresh_factor(5) == 3);
  CHECK(reclaim_fresh_factor(3.5) == 4);
  CHECK(reclaim_fresh_factor(0.5) == 16);
  return check_done();
}
