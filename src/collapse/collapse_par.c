// collapse_par.c: -C under -T N, the pool collapsing branches ahead of
// the calling thread while that thread uses them in collapse.c's
// single-thread order (see "Collapsing ahead" below).

#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "collapse/collapse_in.h"
#include "cpu/eval.h"
#include "heap/heap.h"
#include "cpu/snf.h"
#include "cpu/pool.h"
#include "cpu/cpu_rt.h"
#include "heap/rt.h"

// Collapsing ahead (-T N)
// =======================
// The calling thread, the consumer, uses branches in collapse_seq's order,
// so the output is the same for any N. Its queue is shared: per key, a
// level of chunks of entries in queue order, which the pool's threads claim
// ahead of it, a share at a time from the level's `take` (a
// compare-and-swap), lowest key first, and collapse, leaving each result in
// its entry.
//
// The thread that finishes a chunk summarizes it: while its pairs are
// clean (each side an ERA, or a SUP whose sides go to the same key or one
// above), it gathers their sides into new chunks, one list per key. The
// consumer splices those lists into their levels instead of reading each
// entry, so a wide search costs it a few steps per chunk, not per branch.
// The rest of the chunk (a line to print, an error, a SUP under ↑↑ whose
// sides drop below the chunk's key) it reads pair by pair, as collapse_seq.
//
// A chunk the consumer reaches before it is finished it reads pair by pair
// (WALK): a pair no one has claimed it claims and collapses itself; while
// one is being collapsed, it helps the pool.
//
// A SUP under ↑ sends its sides below the key being read: the consumer
// will need them next, and their sides after them, one narrow level at a
// time. So a pool thread that finds such a SUP makes it a kid (a pair of
// entries for its sides) and offers it at once; idle threads collapse kids
// first, and the sides of SUPs found in kids too, up to KID_DEPTH. When
// the SUP is queued, its entries come from the kid: done, or still
// running (FWD: read from the kid once done), or taken back (MOVED) if no
// one has started them.
//
// The pool may collapse branches the consumer never reaches (past the
// limit): an error there is kept (ERR) and raised only if the consumer
// reaches it; at the limit, eval_stop_ahead(1) ends what is still running.

#define ENT_NEW  0u
#define ENT_DONE 1u   // | ENT_KID | incs << 3
#define ENT_ERR  2u   // t: the handle in ColPar.errs
#define ENT_FWD  3u   // loc: the running kid whose entries these are
#define ENT_KID  4u   // with DONE, a SUP: loc is the kid of its sides
#define ENT_HELD (ENT_ERR | ENT_KID)   // stopped at an effect or an error,
                                       // left for the consumer (entry_run)
#define ENT_KIND(s) ((s) & 3u)
#define ENT_INCS(s) ((s) >> 3)

typedef struct {
  u32         loc;     // the branch (0: none, written DONE as an ERA)
  _Atomic u32 state;
  Term        t;       // DONE: the collapsed term under its INCs
} Entry;

// Kids
// ----
// A kid is referenced once by its SUP's entry (then by the entries it
// fills: FWD) and once by the stack of kids to run, until popped; the last
// of the two to let go frees it. Handles are 1-based indices.

#define KID_DEPTH 4    // kids of kids, at most (deeper ran more kids than
                       // were used, and was slower)

#define KID_FREE  0u   // not started
#define KID_RUN   1u
#define KID_DONE  2u
#define KID_MOVED 3u   // queued as new entries instead

typedef struct {
  Entry       e[2];
  _Atomic u32 claim;
  u32         key;     // of its entries
  u32         depth;
  u32         next;    // in the stack of kids to run
} Kid;


static Kid *kid_at(ColPar *p, u32 h) {
  return mem_at(&p->kids, h);
}

// A kid of the SUP at s (sides s, s + 1), at `key`, offered to the pool.
static u32 kid_new(ColPar *p, u32 key, u32 depth, u32 s) {
  u32  h = mem_new(&p->kids);
  Kid *k = kid_at(p, h);
  for (u32 j = 0; j < 2; j++) {
    k->e[j].loc = s + j;
    atomic_store_explicit(&k->e[j].state, ENT_NEW, memory_order_relaxed);
  }
  atomic_store_explicit(&k->claim, KID_FREE, memory_order_relaxed);
  k->key   = key;
  k->depth = depth;
  pthread_mutex_lock(&p->kid_lock);
  k->next  = p->kid_stack;
  p->kid_stack = h;
  atomic_fetch_add_explicit(&p->kid_waiting, 1, memory_order_relaxed);
  pthread_mutex_unlock(&p->kid_lock);
  return h;
}

static void kid_free(ColPar *p, u32 h) {
  mem_del(&p->kids, h);
}

static void kids_reset(ColPar *p) {
  mem_drop(&p->kids);
  p->kid_stack = 0;
  atomic_store(&p->kid_waiting, 0);
}

// Chunks
// ------

#define CHUNK 128      // entries in a chunk (whole pairs)

#define CH_OPEN 0u     // being collapsed
#define CH_WALK 1u     // the consumer reads it pair by pair
#define CH_SUMM 2u     // its last finisher is summarizing it
#define CH_DONE 3u     // finished; summarized unless walked

typedef struct Chunk Chunk;
struct Chunk {
  Chunk      *next;       // in a list (kids)
  u32         self;       // its handle in CHUNKS
  _Atomic u32 n;          // entries (fixed once in a level)
  u32         key;        // its level
  u32         sum;        // entries [0, sum) are summarized in kids
  Chunk      *kids[2];    // their sides: chunks at key, at key + 1
  _Atomic u64 base;       // entries before it in its level
  _Alignas(64) _Atomic u32 left;   // entries not finished
  _Atomic u32 mode;
  _Alignas(64) Entry e[CHUNK];
};


static Chunk *chunk_new(ColPar *p, u32 key) {
  u32    h = mem_new(&p->chunks);
  Chunk *c = mem_at(&p->chunks, h);
  c->self = h;
  c->next = NULL;
  c->key  = key;
  c->sum  = 0;
  c->kids[0] = c->kids[1] = NULL;
  atomic_store_explicit(&c->n, 0, memory_order_relaxed);
  atomic_store_explicit(&c->mode, CH_OPEN, memory_order_relaxed);
  return c;
}

static void chunk_free(ColPar *p, Chunk *c) {
  mem_del(&p->chunks, c->self);
}

// Fills d[0], d[1] with the sides of e, a collapsed SUP: new entries, or
// its kid's (MOVED: taken back; DONE: copied; running: FWD).
static void sides_put(ColPar *p, Entry *d, Entry *e) {
  u32 s  = VAL(e->t);
  u32 st = atomic_load_explicit(&e->state, memory_order_relaxed);
  if (st & ENT_KID) {
    Kid *k  = kid_at(p, e->loc);
    u32  cl = KID_FREE;
    if (!atomic_compare_exchange_strong(&k->claim, &cl, KID_MOVED)) {
      if (cl == KID_DONE) {
        for (u32 j = 0; j < 2; j++) {
          d[j].loc = k->e[j].loc;
          d[j].t   = k->e[j].t;
          atomic_store_explicit(&d[j].state, atomic_load_explicit(&k->e[j].state, memory_order_relaxed),
                                memory_order_relaxed);
        }
        kid_free(p, e->loc);
      } else {
        for (u32 j = 0; j < 2; j++) {
          d[j].loc = e->loc;
          atomic_store_explicit(&d[j].state, ENT_FWD, memory_order_relaxed);
        }
      }
      return;
    }
  }
  for (u32 j = 0; j < 2; j++) {
    d[j].loc = s + j;
    atomic_store_explicit(&d[j].state, ENT_NEW, memory_order_relaxed);
  }
}

// Adds the sides of e, a collapsed SUP, to chunk c.
static void chunk_sides(ColPar *p, Chunk *c, Entry *e) {
  u32 n = atomic_load_explicit(&c->n, memory_order_relaxed);
  sides_put(p, &c->e[n], e);
  atomic_store_explicit(&c->n, n + 2, memory_order_relaxed);
}

// Adds the pair of branches at l0 and l1 (0: none) to chunk c.
static void chunk_add(Chunk *c, u32 l0, u32 l1) {
  u32 n = atomic_load_explicit(&c->n, memory_order_relaxed);
  for (u32 j = 0; j < 2; j++) {
    Entry *e = &c->e[n + j];
    e->loc = j ? l1 : l0;
    if (e->loc) {
      atomic_store_explicit(&e->state, ENT_NEW, memory_order_relaxed);
    } else {
      e->t = TERM(ERA, 0, 0);
      atomic_store_explicit(&e->state, ENT_DONE, memory_order_relaxed);
    }
  }
  atomic_store_explicit(&c->n, n + 2, memory_order_relaxed);
}

// A level holds up to 2^32 chunks, in segments of chunk pointers (SEGM's
// blocks, made and let go by the consumer), indexed from 0 for ever:
// [head, take) are claimed, [take, tail) offered (all appended chunks are),
// and `open` is the chunk the consumer is filling, not yet appended.
// `take` is a chunk index and an entry: chunk << TAKE_BITS | entry.
#define SEG_BITS  12
#define SEG       (1u << SEG_BITS)
#define SEGS      (1u << (32 - SEG_BITS))
#define TAKE_BITS 16

typedef struct ColLevel {
  _Alignas(64) _Atomic u64 take;   // next entry to claim
  _Alignas(64) _Atomic u64 tail;   // chunks offered
  _Atomic u64              sent;   // entries offered
  _Alignas(64) u64         head;   // next chunk to use (consumer)
  u64                      end;    // chunks appended (consumer)
  u64                      ents;   // entries appended (consumer)
  u32                      pos;    // next entry of chunk head (consumer)
  int                      seen;   // chunk head reached (consumer)
  Chunk                   *open;   // chunk being filled (consumer)
  u32                     *seg;    // segment handles, reserved lazily
} Level;


// Level lv's chunk slot i.
static _Atomic(Chunk *) *chunk_slot(ColPar *p, Level *lv, u64 i) {
  _Atomic(Chunk *) *sg = mem_at(&p->segm, lv->seg[i >> SEG_BITS]);
  return &sg[i & (SEG - 1)];
}

static Chunk *chunk_at(ColPar *p, Level *lv, u64 i) {
  return atomic_load_explicit(chunk_slot(p, lv, i), memory_order_relaxed);
}

// Errors kept by the pool, by handle.

static u32 err_keep(ColPar *p, const EvalCatch *c) {
  u32 h = mem_new(&p->errs);
  *(EvalCatch *)mem_at(&p->errs, h) = *c;
  return h;
}

static void err_raise(ColPar *p, u32 h) {
  EvalCatch c = *(EvalCatch *)mem_at(&p->errs, h);
  eval_rethrow(&c);
}

// Collapses a claimed entry, of a level or kid at `key`, on this thread,
// keeping an error. With `kids`, a SUP that sends its sides below `key`
// (or any SUP, in a kid of depth below KID_DEPTH) gets a kid.
//
// Effects are held (eval_hold_effects): a branch whose collapse meets a
// host primitive (%log) or a runtime error stops there, its terms rebuilt
// (HELD), and the consumer collapses it again when the one-thread order
// reaches it (pair_use), so -T N performs -T1's effects in -T1's order,
// between the same lines.
static void entry_run(ColPar *p, Wnf *w, Entry *e, u32 key, u32 depth, int kids) {
  EvalCatch  c;
  u32        sp = collapse_mark();
  eval_hold_effects(1);   // before the frame, which restores this level
  EvalCatch *up = eval_catch_push(&c);
  u32        st;
  eval_ahead(1);
  eval_held_stop();
  if (setjmp(c.env) == 0) {
    if (collapse_branch(w, e->loc)) {
      st = ENT_HELD;
    } else {
      u32 incs;
      e->t = collapse_read(e->loc, &incs);
      st   = ENT_DONE | incs << 3;
      u32 to = collapse_key(key, incs);
      if (kids && TAG(e->t) == SUP && (depth ? depth < KID_DEPTH : to < key)) {
        e->loc = kid_new(p, to, depth + 1, VAL(e->t));
        st    |= ENT_KID;
      }
    }
  } else {
    collapse_reset(sp);
    e->t  = err_keep(p, &c);
    st    = ENT_ERR;
  }
  eval_hold_effects(0);
  eval_ahead(0);
  eval_catch_pop(up);
  atomic_store_explicit(&e->state, st, memory_order_release);
}

// A HELD entry, reached in the one-thread order: collapsed again by the
// consumer, effects and errors now performed (an error is raised here).
static void entry_again(Wnf *w, Entry *e) {
  u32 incs;
  collapse_branch(w, e->loc);
  e->t = collapse_read(e->loc, &incs);
  atomic_store_explicit(&e->state, ENT_DONE | incs << 3, memory_order_relaxed);
}

// Where the sides of entry e, in a chunk at `key`, go: 1 and *to if it is a
// SUP sent to key or key + 1, 1 and *to = KEYS if an ERA, 0 otherwise.
static int entry_clean(Entry *e, u32 key, u32 *to) {
  u32 st = atomic_load_explicit(&e->state, memory_order_relaxed);
  if (ENT_KIND(st) != ENT_DONE) return 0;
  switch (TAG(e->t)) {
    case ERA: *to = KEYS; return 1;
    case SUP: *to = collapse_key(key, ENT_INCS(st)); return *to >= key;
    default:  return 0;
  }
}

// Gathers the sides of chunk c's clean pairs, up to the first one that is
// not, into c->kids.
static void chunk_sum(ColPar *p, Chunk *c) {
  u32    key  = c->key;
  u32    n    = atomic_load_explicit(&c->n, memory_order_relaxed);
  Chunk *last[2] = { NULL, NULL };
  u32    i;
  for (i = 0; i < n; i += 2) {
    u32 to[2];
    if (!entry_clean(&c->e[i], key, &to[0]) || !entry_clean(&c->e[i + 1], key, &to[1])) break;
    for (u32 j = 0; j < 2; j++) {
      if (to[j] == KEYS) continue;
      u32 d = to[j] - key;
      if (!last[d] || atomic_load_explicit(&last[d]->n, memory_order_relaxed) == CHUNK) {
        Chunk *k = chunk_new(p, to[j]);
        if (last[d]) last[d]->next = k; else c->kids[d] = k;
        last[d] = k;
      }
      chunk_sides(p, last[d], &c->e[i + j]);
    }
  }
  c->sum = i;
}

// Entries [i, i + m) of chunk c were claimed and collapsed; the thread
// finishing the last ones summarizes the chunk, unless the consumer walks it.
static void chunk_finish(ColPar *p, Chunk *c, u32 m) {
  if (atomic_fetch_sub_explicit(&c->left, m, memory_order_acq_rel) != m) return;
  u32 mode = CH_OPEN;
  if (atomic_compare_exchange_strong(&c->mode, &mode, CH_SUMM)) chunk_sum(p, c);
  atomic_store_explicit(&c->mode, CH_DONE, memory_order_release);
}

// Collapses the claimed entries [i, i + m) of chunk c (with kids: see
// entry_run).
static void chunk_run(ColPar *p, Wnf *w, Chunk *c, u32 i, u32 m, int kids) {
  for (u32 j = i; j < i + m; j++) {
    // stopped: no one waits for this chunk any more
    if (!atomic_load_explicit(&p->spec_on, memory_order_relaxed)) return;
    Entry *e = &c->e[j];
    if (atomic_load_explicit(&e->state, memory_order_relaxed) == ENT_NEW) {
      entry_run(p, w, e, c->key, 0, kids);
    }
  }
  chunk_finish(p, c, m);
}

// Offers level k's appended chunks to the pool.
static void level_offer(ColPar *p, u32 k) {
  Level *lv = &p->lv[k];
  atomic_store_explicit(&lv->sent, lv->ents, memory_order_relaxed);
  atomic_store_explicit(&lv->tail, lv->end, memory_order_release);
  atomic_fetch_or_explicit(&p->open, 1ull << k, memory_order_release);
  p->unoffered &= ~(1ull << k);
}

// Appends chunk c (not empty) to level k; the caller offers it.
static void level_append(ColPar *p, u32 k, Chunk *c) {
  Level *lv = &p->lv[k];
  u64    i  = lv->end;
  if (i >> 32) eval_die("too many collapse branches");
  if ((i & (SEG - 1)) == 0) lv->seg[i >> SEG_BITS] = mem_new(&p->segm);
  u32 n = atomic_load_explicit(&c->n, memory_order_relaxed);
  atomic_store_explicit(&c->left, n, memory_order_relaxed);
  atomic_store_explicit(&c->base, lv->ents, memory_order_relaxed);
  lv->ents += n;
  atomic_store_explicit(chunk_slot(p, lv, i), c, memory_order_relaxed);
  lv->end = i + 1;
  p->full      |= 1ull << k;
  p->unoffered |= 1ull << k;
}

// Appends level k's open chunk, if it has entries.
static void level_close(ColPar *p, u32 k) {
  Level *lv = &p->lv[k];
  if (!(p->filling >> k & 1)) return;
  level_append(p, k, lv->open);
  lv->open = NULL;
  p->filling &= ~(1ull << k);
}

static void offer_all(ColPar *p) {
  while (p->filling) level_close(p, (u32)__builtin_ctzll(p->filling));
  while (p->unoffered) level_offer(p, (u32)__builtin_ctzll(p->unoffered));
}

// Level k's open chunk, with room for a pair (consumer); level_filled
// then counts the pair in.
static Chunk *level_room(ColPar *p, u32 k) {
  Level *lv = &p->lv[k];
  if (!lv->open) lv->open = chunk_new(p, k);
  return lv->open;
}

static void level_filled(ColPar *p, u32 k) {
  p->full    |= 1ull << k;
  p->filling |= 1ull << k;
  if (atomic_load_explicit(&p->lv[k].open->n, memory_order_relaxed) == CHUNK) {
    level_close(p, k);
    level_offer(p, k);
  }
}

// Appends a list of chunks to level k, after what was queued before.
static void level_splice(ColPar *p, u32 k, Chunk *c) {
  if (!c) return;
  level_close(p, k);
  while (c) {
    Chunk *nx = c->next;
    level_append(p, k, c);
    c = nx;
  }
  level_offer(p, k);
}

// Claims a share of the lowest open level and collapses it; 0 if there was
// nothing to claim. Shares are up to `max` entries of consecutive pairs in
// one chunk, at most the whole chunk: neighbouring branches share DUPs and
// data, which stay in one thread's cache (smaller shares were slower).
#define SPEC_BATCH CHUNK

// With more than one pool thread, the consumer helps in small shares: it
// must be back soon, as consuming in order is then the bottleneck (with
// one, it is half the workforce, and takes whole shares).
#define CONSUMER_BATCH(threads) ((threads) > 2 ? 8 : SPEC_BATCH)

// Pops a kid and collapses it; 0 if there was none to start.
static int kid_run(ColPar *p, Wnf *w) {
  if (!atomic_load_explicit(&p->kid_waiting, memory_order_relaxed)) return 0;
  Kid *k = NULL;
  pthread_mutex_lock(&p->kid_lock);
  while (p->kid_stack && !k) {
    u32 h   = p->kid_stack;
    Kid *top = kid_at(p, h);
    p->kid_stack = top->next;
    atomic_fetch_sub_explicit(&p->kid_waiting, 1, memory_order_relaxed);
    u32 cl = KID_FREE;
    if (atomic_compare_exchange_strong(&top->claim, &cl, KID_RUN)) {
      k = top;
    } else {
      // MOVED: the SUP's entry let go already
      kid_free(p, h);
    }
  }
  pthread_mutex_unlock(&p->kid_lock);
  if (!k) return 0;
  for (u32 j = 0; j < 2; j++) entry_run(p, w, &k->e[j], k->key, k->depth, 1);
  atomic_store_explicit(&k->claim, KID_DONE, memory_order_release);
  return 1;
}

static int spec_help(ColPar *p, Wnf *w, u32 max) {
  // idle threads poll here: only plain loads until there is something
  if (!atomic_load_explicit(&p->spec_on, memory_order_relaxed) ||
      (!atomic_load_explicit(&p->open, memory_order_relaxed) &&
       !atomic_load_explicit(&p->kid_waiting, memory_order_relaxed))) {
    return 0;
  }
  // spec_running up, then spec_on read (both seq_cst): the stop (spec_on
  // off, then spec_running read) waits for this call or stops it.
  atomic_fetch_add(&p->spec_running, 1);
  int ran = atomic_load(&p->spec_on) && kid_run(p, w);
  u64 m   = !ran && atomic_load(&p->spec_on) ? atomic_load_explicit(&p->open, memory_order_acquire) : 0;
  while (m && !ran) {
    u32    k  = (u32)__builtin_ctzll(m);
    Level *lv = &p->lv[k];
    u64    t  = atomic_load_explicit(&lv->take, memory_order_relaxed);
    u64    tl = atomic_load_explicit(&lv->tail, memory_order_acquire);
    u64    ci = t >> TAKE_BITS;
    if (ci >= tl) {
      // closed, unless the consumer offered more meanwhile
      atomic_fetch_and_explicit(&p->open, ~(1ull << k), memory_order_relaxed);
      if (atomic_load(&lv->tail) > atomic_load(&lv->take) >> TAKE_BITS) {
        atomic_fetch_or_explicit(&p->open, 1ull << k, memory_order_relaxed);
      }
      m &= ~(1ull << k);
      continue;
    }
    // c and its n are only trusted if the claim succeeds: `take` never
    // goes back, so the chunk is then still queued
    Chunk *c    = chunk_at(p, lv, ci);
    u32    off  = (u32)(t & ((1u << TAKE_BITS) - 1));
    u32    n    = atomic_load_explicit(&c->n, memory_order_relaxed);
    if (off >= n) continue;
    u64    done = atomic_load_explicit(&c->base, memory_order_relaxed) + off;
    u64    sent = atomic_load_explicit(&lv->sent, memory_order_relaxed);
    u64    rest = sent > done ? sent - done : n - off;
    u64    sh   = rest / (2 * (u64)p->threads) & ~1ull;   // whole pairs
    if (sh < 2)       sh = 2;
    if (sh > max)     sh = max;
    if (sh > n - off) sh = n - off;
    u64 nt = off + sh == n ? (ci + 1) << TAKE_BITS : t + sh;
    if (!atomic_compare_exchange_weak(&lv->take, &t, nt)) continue;
    chunk_run(p, w, c, off, (u32)sh, 1);
    ran = 1;
  }
  atomic_fetch_sub(&p->spec_running, 1);
  return ran;
}

int collapse_help(Wnf *w) {
  return spec_help(&RT->col->par, w, SPEC_BATCH);
}

// Claims for the consumer the entries of chunk c, head of level lv, from
// `take` up to `end`, unless someone claimed them: 1 and *off, the first
// one claimed. The entries before `end` that the consumer has read were
// done (from a kid) or absent, so no one else needed to claim them.
static int head_claim(Level *lv, Chunk *c, u32 end, u32 *off) {
  u64 at = lv->head << TAKE_BITS | end;
  u64 nt = end == atomic_load_explicit(&c->n, memory_order_relaxed)
         ? (lv->head + 1) << TAKE_BITS : at;
  u64 t  = atomic_load(&lv->take);
  while (t < at) {
    if (atomic_compare_exchange_weak(&lv->take, &t, nt)) {
      *off = (u32)(t & ((1u << TAKE_BITS) - 1));
      return 1;
    }
  }
  return 0;
}

// The pair at entries i, i + 1 of chunk c, head of level lv, collapsed: by
// the consumer if no one has claimed it, else by the pool, helped
// meanwhile. Claims take whole pairs, whose sides usually share DUPs: on
// two threads at once, one would wait for the other.
static void pair_wait(ColPar *p, Wnf *w, Level *lv, Chunk *c, u32 i) {
  Entry *e0 = &c->e[i], *e1 = &c->e[i + 1];
  if (atomic_load_explicit(&e0->state, memory_order_relaxed) == ENT_FWD) {
    Kid *k = kid_at(p, e0->loc);
    while (atomic_load_explicit(&k->claim, memory_order_acquire) != KID_DONE) {
      if (!spec_help(p, w, CONSUMER_BATCH(p->threads))) cpu_relax();
      eval_check();   // a pool thread that failed leaves its entry unfinished
    }
    return;
  }
  if (atomic_load_explicit(&e0->state, memory_order_acquire) != ENT_NEW &&
      atomic_load_explicit(&e1->state, memory_order_acquire) != ENT_NEW) {
    return;
  }
  offer_all(p);
  u32 off;
  if (head_claim(lv, c, i + 2, &off)) {
    chunk_run(p, w, c, off, i + 2 - off, 0);   // needed now: no kids
    return;
  }
  while (atomic_load_explicit(&e0->state, memory_order_acquire) == ENT_NEW ||
         atomic_load_explicit(&e1->state, memory_order_acquire) == ENT_NEW) {
    if (!spec_help(p, w, CONSUMER_BATCH(p->threads))) cpu_relax();
    eval_check();   // a pool thread that failed leaves its entry unfinished
  }
}

// Uses the pair at entries i, i + 1 of chunk c, at key k (both collapsed).
static void pair_use(ColPar *p, Wnf *w, u32 k, Chunk *c, u32 i) {
  Entry *es  = &c->e[i];
  u32    fwd = 0;
  if (atomic_load_explicit(&es->state, memory_order_relaxed) == ENT_FWD) {
    fwd = es->loc;
    es  = kid_at(p, fwd)->e;
  }
  for (u32 j = 0; j < 2; j++) {
    Entry *e = &es[j];
    u32    s = atomic_load_explicit(&e->state, memory_order_relaxed);
    if (s == ENT_ERR) err_raise(p, (u32)e->t);
    if (s == ENT_HELD) {
      entry_again(w, e);
      s = atomic_load_explicit(&e->state, memory_order_relaxed);
    }
    if (collapse_use(e->t)) {
      u32 to = collapse_key(k, ENT_INCS(s));
      chunk_sides(p, level_room(p, to), e);
      level_filled(p, to);
    }
  }
  if (fwd) kid_free(p, fwd);
}

// Waits until chunk c is finished (and summarized, unless walked).
static void chunk_wait(Chunk *c) {
  while (atomic_load_explicit(&c->mode, memory_order_acquire) != CH_DONE) {
    cpu_relax();
    eval_check();   // a pool thread that failed leaves its chunk unfinished
  }
}

// The consumer reaches chunk c, head of level k: it splices the summarized
// part, if the chunk was finished first, else takes it to walk; returns
// the first entry left to read pair by pair.
static u32 chunk_reach(ColPar *p, u32 k, Chunk *c) {
  u32 mode = CH_OPEN;
  if (atomic_compare_exchange_strong(&c->mode, &mode, CH_WALK)) return 0;
  chunk_wait(c);
  level_splice(p, k, c->kids[0]);
  if (k + 1 < KEYS) level_splice(p, k + 1, c->kids[1]);
  return c->sum;
}

// Frees level k's used chunk head and moves to the next one.
static void level_next(ColPar *p, u32 k, Chunk *c) {
  Level *lv = &p->lv[k];
  // a walked chunk may end with pairs no one claimed (done when read):
  // claimed now, so that it finishes
  u32 n = atomic_load_explicit(&c->n, memory_order_relaxed), off;
  if (head_claim(lv, c, n, &off)) chunk_finish(p, c, n - off);
  // a walked chunk is freed once its last finisher is done with it
  chunk_wait(c);
  chunk_free(p, c);
  lv->head++;
  lv->pos  = 0;
  lv->seen = 0;
  if ((lv->head & (SEG - 1)) == 0) mem_del(&p->segm, lv->seg[(lv->head - 1) >> SEG_BITS]);
  if (lv->head == lv->end && !(p->filling >> k & 1)) p->full &= ~(1ull << k);
}

// Waits for the pool to leave the last collapse, then frees what it used.
static void collapse_join(ColPar *p) {
  if (!p->stopped) return;
  // a pool thread that failed inside spec_help stays counted
  while (atomic_load(&p->spec_running) > 0 && !eval_failed()) cpu_relax();
  eval_stop_ahead(0);
  for (u32 k = 0; k < KEYS; k++) {
    Level *lv = &p->lv[k];
    atomic_store(&lv->take, 0);
    atomic_store(&lv->tail, 0);
    lv->head = lv->end = lv->ents = 0;
    atomic_store(&lv->sent, 0);
    lv->pos  = 0;
    lv->seen = 0;
    lv->open = NULL;
  }
  mem_drop(&p->segm);
  mem_drop(&p->chunks);
  mem_drop(&p->errs);
  kids_reset(p);
  atomic_store(&p->open, 0);
  p->full = p->filling = p->unoffered = 0;
  p->stopped = 0;
}

void collapse_par_join(void) {
  collapse_join(&RT->col->par);
}

void collapse_stop(void) {
  ColPar *p = &RT->col->par;
  if (atomic_load(&p->spec_on)) {   // an error left collapse_par
    atomic_store(&p->spec_on, 0);
    eval_stop_ahead(1);
    pool_hold(NULL);
    p->stopped = 1;
  }
  collapse_join(p);
}

void collapse_par_open(ColPar *p) {
  mem_init(&p->kids,   sizeof(Kid), 12, 1u << 20, 0);
  mem_init(&p->chunks, sizeof(Chunk), 5, 1u << 20, 1);
  mem_init(&p->segm,   sizeof(_Atomic(Chunk *)[SEG]), 2, 1u << 20, 2);
  mem_init(&p->errs,   sizeof(EvalCatch), 4, 1u << 20, 3);
  pthread_mutex_init(&p->kid_lock, NULL);
  p->ready = 1;
}

void collapse_par_close(ColPar *p) {
  if (!p->ready) return;
  for (u32 k = 0; p->lv && k < KEYS; k++) {
    if (p->lv[k].seg) munmap(p->lv[k].seg, SEGS * sizeof(*p->lv[k].seg));
  }
  free(p->lv);
  p->lv = NULL;
  mem_close(&p->kids);
  mem_close(&p->chunks);
  mem_close(&p->segm);
  mem_close(&p->errs);
  pthread_mutex_destroy(&p->kid_lock);
  p->ready = 0;
}

// The levels and their segment tables (reserved, not committed: each may
// index 2^32 chunks), made by the runtime's first -T collapse.
static void levels_make(ColPar *p) {
  p->lv = aligned_alloc(_Alignof(Level), KEYS * sizeof(Level));
  if (!p->lv) collapse_oom();
  memset(p->lv, 0, KEYS * sizeof(Level));
  for (u32 k = 0; k < KEYS; k++) {
    void *seg = mmap(NULL, SEGS * sizeof(*p->lv[k].seg), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (seg == MAP_FAILED) collapse_oom();
    p->lv[k].seg = seg;
  }
}

void collapse_par(Wnf *w, u32 root) {
  ColRt  *c = RT->col;
  ColPar *p = &c->par;
  collapse_join(p);
  if (!p->ready) collapse_par_open(p);   // a context never opened (tests)
  if (!p->lv) levels_make(p);
  p->threads = RT->cpu->conf.threads;
  atomic_store(&p->spec_on, 1);
  pool_hold(collapse_help);
  chunk_add(level_room(p, 0), root, 0);
  level_filled(p, 0);
  while (c->printed < c->limit && p->full) {
    u32    k  = (u32)__builtin_ctzll(p->full);
    Level *lv = &p->lv[k];
    if (lv->head == lv->end) {
      // only the open chunk is left: offered only if the consumer waits
      // (pair_wait), as it claims the first pair itself
      level_close(p, k);
    }
    Chunk *ch = chunk_at(p, lv, lv->head);
    if (!lv->seen) {
      lv->seen = 1;
      lv->pos  = chunk_reach(p, k, ch);
    }
    u32 n = atomic_load_explicit(&ch->n, memory_order_relaxed);
    if (lv->pos < n) {
      u32 i = lv->pos;
      if (i + 16 < n) __builtin_prefetch(&ch->e[i + 16]);
      pair_wait(p, w, lv, ch, i);
      lv->pos = i + 2;
      pair_use(p, w, k, ch, i);   // may queue below k: back to the top
      continue;
    }
    level_next(p, k, ch);
  }
  // The answer is complete: stop the pool, but do not wait for it. What it
  // still runs ends at its next check (work ahead runs in slices that can
  // be long), and only a later collapse waits for that (collapse_join).
  atomic_store(&p->spec_on, 0);
  eval_stop_ahead(1);
  pool_hold(NULL);
  p->stopped = 1;
}

