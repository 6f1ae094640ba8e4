// pass.c: the host pass loop, shared by every backend (host code).
//
//   frontier = [entry(root)]
//   while frontier not empty:
//     next = step(frontier)     # one pass: one launch / dispatch
//     frontier = next           # lane segments concatenated in lane order
//
// A pass that records a stop (primitive, error, arena or stack exhausted)
// ends the run; gpu_snf_at then lets the CPU finish from the root.

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "dev/gpu.h"
#include "dev/dev.h"
#include "heap/heap.h"
#include "lang/names.h"
#include "heap/rt.h"
#include "dev/dev_rt.h"

// Passes in a row with no interaction and no entry reaching WNF before the
// run is declared stalled (owner deferrals that chase each other).
#define STALL_PASSES 8

// Narrow phases go to the CPU. One device lane reduces far slower than a
// CPU core (docs/gpu.md), so a frontier of fewer than about NARROW_WIDTH
// entries leaves the device behind the host's threads; on few lanes (the
// simulator) the bar is a sixteenth of them. A tree widens past it within
// a few passes, so only RT->dev->conf.handoff (--handoff) narrow passes in a row end
// the run: the CPU finishes (its -T pool, if any). So do NARROW_TIME
// seconds of passes in a row that are narrow or slow (under the backend's
// narrow_rate): a frontier whose entries each walk far before they defer
// (a long stuck DUP chain waiting on one slot) makes long passes that do
// little, wider than the bar, for thousands of passes.
#define NARROW_SHARE 16u
#define NARROW_WIDTH 2048u
#define NARROW_TIME  0.1

// A pass is narrow by its frontier or by its work: fewer than NARROW_ITRS
// interactions for each lane of the bar is narrow however many entries ran
// (less than a CPU core would do in a narrow pass's time). A stuck DUP
// chain built while reducing (tests/golden/dup_chain_built) swings between
// a few entries and a few dozen that defer at once: the frontier alone
// never stays under the bar, and the run would crawl on the device.
#define NARROW_ITRS 16u

static int narrow(u32 n, u64 itrs, u32 lanes) {
  u32 w = lanes / NARROW_SHARE;
  if (w > NARROW_WIDTH) w = NARROW_WIDTH;
  if (w == 0) w = 1;
  return n < w || itrs < (u64)w * NARROW_ITRS;
}

u32 gpu_book_cnt(void) {
  u32 n = table_count();
  return n ? n : RT->heap.book_cap;
}

u32 gpu_out_cap(u32 n, u32 lanes) {
  u64 k = ((u64)n + lanes - 1) / lanes;
  u64 c = k + LANE_KIDS + RT->dev->conf.walk;
  return c > 0xFFFFFFFFull ? 0xFFFFFFFFu : (u32)c;
}

// A mark pass's segments: a lane's depth-first walk keeps on its stack what
// it has not scanned yet, and a spine with side branches (a comb, such as
// a DUP chain's levels) leaves one per level. So a narrow pass's lanes get
// room for their budget, within MARK_ROOM entries in all: with the normal
// form's segments a long chain's walk stopped every few dozen levels, for
// a pass each.
#define MARK_ROOM (1u << 22)

u32 gpu_mark_cap(u32 n, u32 lanes, u32 budget) {
  u32 cap    = gpu_out_cap(n, lanes);
  u32 active = n < lanes ? n : lanes;
  u32 room   = MARK_ROOM / (active ? active : 1);
  u64 c      = (u64)cap + (budget < room ? budget : room);
  return c > 0xFFFFFFFFull ? 0xFFFFFFFFu : (u32)c;
}

// A pass is narrow when its frontier has fewer entries than lanes /
// --narrow-share (default 2: with every lane as the bar, wide programs
// never got the full budget). A narrow pass leaves lanes idle, so:
// - its budget is NARROW_BUDGET (tune.h): walking lanes push siblings and
//   widen the frontier fast, instead of one lane finishing a big entry
//   alone; a wide pass gets the full budget;
// - only it offers sparks (docs/gpu.md, "Sparks on the device"): in a wide
//   pass every lane has an entry, and an offer costs a deferral when its
//   operand was claimed;
// - its lanes never wait for a held DUP slot (wnf.h, HEAP_WAIT_POLLS): the
//   holder is most often a lane that defers itself.

u32 gpu_pass_shape(PassArgs *a, u32 n, u32 lanes, u32 wait) {
  u32 thin     = (u64)n * RT->dev->conf.narrow_share < lanes;
  a->cap       = gpu_out_cap(n, lanes);
  a->budget    = RT->dev->conf.budget;
  a->spark_gap = thin ? RT->dev->conf.spark_gap : 0;
  if (thin && a->budget > NARROW_BUDGET) {
    a->budget = NARROW_BUDGET;
  }
  return thin ? 0 : RT->dev->conf.dup_wait_set ? RT->dev->conf.dup_wait : wait;
}

// What the lanes hold idle is bounded, so that with many lanes most of
// the room is left to the run's nodes. Owner mode: each lane's arena is a
// whole region, so the region shrinks (to 2^REGION_MIN words) until the
// lanes' regions, one a lane, take at most 1/REGION_SHARE of the room.
// Atomic mode: each lane holds an arena across passes, which shrinks (to
// ARENA_MIN words) until they take at most 1/ARENA_SHARE of it.
#define REGION_SHARE 4
#define REGION_MIN   8
#define ARENA_SHARE  16
#define ARENA_MIN    256

int gpu_open_args(GpuOpen *o, const u32 *roots, u32 n, Term *heap,
                  const u32 *book, const u32 *book_len, u32 lanes, u32 stack,
                  u64 room, char *err, unsigned errlen) {
  DevRt         *d     = RT->dev;
  const GpuConf *c     = &d->conf;
  u32            shift = c->region_shift;
  u32            arena = c->arena;
  u64            top   = gpu_top();
  while (room && c->dup_mode == DUP_OWNER && !c->shift_set && shift > REGION_MIN &&
         ((u64)lanes << shift) > room / REGION_SHARE) {
    shift--;
  }
  while (room && !c->arena_set && arena > ARENA_MIN &&
         (u64)lanes * arena * ARENA_SHARE > room) {
    arena /= 2;
  }
  if (n > d->ent_cap) {
    u64 *e = realloc(d->ent, (u64)n * sizeof(u64));
    if (!e) {
      snprintf(err, errlen, "frontier: out of memory for %u roots", n);
      return -1;
    }
    d->ent     = e;
    d->ent_cap = n;
  }
  for (u32 i = 0; i < n; i++) d->ent[i] = ENT(roots[i] >> shift, roots[i]);
  o->a = (PassArgs){
    .heap         = heap,
    .book         = book,
    .book_len     = book_len,
    .book_cnt     = gpu_book_cnt(),
    .dup_mode     = c->dup_mode,
    .region_shift = shift,
    .budget       = c->budget,
    .stack_cap    = c->stack ? c->stack : stack,
    .cap          = 0,
    .shallow_inc  = (u32)c->collapse,
    .spark_gap    = c->spark_gap,
  };
  o->align = c->dup_mode == DUP_OWNER ? 1ull << shift : 0;
  o->dtop  = o->align ? (top + o->align - 1) & ~(o->align - 1) : top;
  o->arena = arena;
  o->ent   = d->ent;
  d->stats.shift = shift;
  return 0;
}

// Default lanes: LANE_WAVES times what the multiprocessors hold at once
// (`wave`, registers limiting it), so that lanes that finish early are
// replaced and a pass's long entries overlap (8 waves: more lanes help the
// wide programs more than they cost the SUP search). The stacks stay
// within 1/STACK_SHARE of the free device memory (free: 0 when unknown),
// one wave at least, so that a GPU shared with other processes gets fewer
// lanes instead of a failed run; whole blocks of whole warps.
#define LANE_WAVES  8
#define STACK_SHARE 8
#define LANES_MAX   (1u << 21)

u32 gpu_default_lanes(u32 wave, u64 free, u32 stack) {
  u64 lanes = (u64)wave * LANE_WAVES;
  u64 fit   = free / STACK_SHARE / ((u64)(stack ? stack : 1) * sizeof(Term));
  if (free && lanes > fit) lanes = fit > wave ? fit : wave;
  if (lanes > LANES_MAX) lanes = LANES_MAX;
  lanes &= ~1023ull;
  return lanes ? (u32)lanes : 1024u;
}

void *gpu_part_new(size_t bytes, char *err, unsigned errlen) {
  void *p = calloc(1, bytes);
  if (!p) snprintf(err, errlen, "out of host memory for the run's state");
  return p;
}

u64 gpu_cap_halve(u64 cap, u64 min, char *err, unsigned errlen) {
  if (cap / 2 < min) {
    snprintf(err, errlen, "device heap: out of memory for %llu words",
             (unsigned long long)min);
    return 0;
  }
  return (cap / 2) & ~31ull;
}

u32 gpu_pieces(const u32 *at, u32 n, u64 chunks, u32 chunk_words, u64 words,
               u64 min_live, GpuPiece *out) {
  u32 k = 0;
  for (u32 p = 0, q; p < n; p = q) {
    q = p + 1;
    while (q < n && (u64)(at[q] - at[p]) < min_live) q++;
    u64 w0 = (u64)p * chunks / n * chunk_words;
    u64 w1 = q == n ? words : (u64)q * chunks / n * chunk_words;
    out[k].w0 = w0 < words ? w0 : words;
    out[k].w1 = w1 < words ? w1 : words;
    out[k].r0 = at[p];
    out[k].r1 = at[q];
    k++;
  }
  return k;
}

u64 gpu_heap_start(void) {
  const char *v = getenv("HVM4G_DEV_HEAP_START");
  u64         n = v ? heap_parse_size(v) : 0;
  return n >= (1u << 20) ? n : 0;
}

void gpu_balance_print(u64 sum, u64 top) {
  if (top == 0) return;
  fprintf(stderr, "- Lane balance: %.1f%% (%llu of %llu lane interactions)\n",
          100.0 * (double)sum / (double)top, (unsigned long long)sum,
          (unsigned long long)top);
}

Term *gpu_heap(void)       { return RT->heap.at; }
u64   gpu_heap_words(void) { return RT->heap.cap; }
u32  *gpu_book(void)       { return RT->heap.book; }
u32  *gpu_book_len(void)   { return RT->heap.book_len; }
u64   gpu_top(void)        { return atomic_load(&RT->heap.top); }

void gpu_top_raise(u64 top) {
  u64 cur = atomic_load(&RT->heap.top);
  if (top > RT->heap.cap) top = RT->heap.cap;
  while (cur < top && !atomic_compare_exchange_weak(&RT->heap.top, &cur, top)) {
  }
}

// The trace (--trace FILE): one CSV row per device pass, per mark pass of
// the packing, and per CPU phase of a hybrid normal form (gpu_trace_cpu).
// `run` numbers the normal forms (gpu_trace_run: @main's, each %gnf's), so
// the rows of two runs, and the sides that took turns on one, stay apart;
// `start_us` is the row's start since the first normal form began. The
// first write that failed stops the trace; gpu_finish reports it.
static void trace_fail(void) {
  DevTrace *t = &RT->dev->trace;
  if (!t->err) t->err = errno ? errno : EIO;
}

int gpu_trace_errno(void) {
  return RT->dev->trace.err;
}

static void trace_timed(DevTrace *t) {
  if (t->timed) return;
  t->t0    = gpu_now();
  t->timed = 1;
}

static FILE *trace_open(void) {
  DevTrace *t = &RT->dev->trace;
  if (!RT->dev->conf.trace || t->err) return NULL;
  FILE *f = fopen(RT->dev->conf.trace, t->started ? "a" : "w");
  if (!f) {
    trace_fail();
    return NULL;
  }
  if (!t->started) {
    fprintf(f, "pass,entries,interactions,deferrals,pushes,time_us,phase,run,side,start_us\n");
    t->started = 1;
  }
  trace_timed(t);
  if (t->run == 0) t->run = 1;   // a device run outside any normal form
  return f;
}

static void trace_close(FILE *tr) {
  if (tr && (ferror(tr) | fclose(tr))) trace_fail();
}

// The columns after `phase`, for a row that started at time t0.
static void trace_tail(FILE *tr, const char *side, double t0) {
  const DevTrace *t = &RT->dev->trace;
  fprintf(tr, ",%llu,%s,%.0f\n", (unsigned long long)t->run, side,
          (t0 - t->t0) * 1e6);
}

void gpu_trace_run(void) {
  if (!RT->dev->conf.trace) return;
  trace_timed(&RT->dev->trace);
  RT->dev->trace.run++;
}

void gpu_trace_cpu(u32 threads, u64 itrs, double t0, double t1) {
  FILE *tr = trace_open();
  if (!tr) return;
  // entries: the CPU's threads; the pass column counts nothing here
  fprintf(tr, "0,%u,%llu,0,0,%.0f,cpu", threads, (unsigned long long)itrs,
          (t1 - t0) * 1e6);
  trace_tail(tr, "cpu", t0);
  trace_close(tr);
}

// Mark passes. A wide frontier gets MARK_BUDGET. A narrow one, by what the
// last pass left (`cut`: lanes it stopped with words still to scan):
// - a few cut walks (MARK_SPINES at most): spines, such as a list, a DUP
//   chain, or a comb of small side branches on one spine. Their budget
//   doubles each pass, so a long spine is walked in few passes (not
//   read from the frontier's size, which a comb's side branches inflate);
// - many, and the frontier widening: a tree fanning out gets short passes,
//   so it spreads over the lanes within a few;
// - many, the frontier not widening (a tree's last subtrees): the budget
//   doubles only up to MARK_DRAIN_MAX. A pass lasts as long as its longest
//   walk, and doubling here made the last passes of a packing long ones
//   with few lanes busy.
#define MARK_BUDGET      4096u
#define MARK_NARROW_MIN  32u
#define MARK_DRAIN_MAX   128u
#define MARK_CHAIN_MAX   (1u << 20)

u32 gpu_mark_budget(u32 n, u32 lanes, u32 prev_n, u32 prev_budget, u32 cut) {
  if (n >= lanes) return MARK_BUDGET;
  if (prev_budget < MARK_NARROW_MIN) return MARK_NARROW_MIN;
  if (cut <= MARK_SPINES) {
    return prev_budget < MARK_CHAIN_MAX ? 2 * prev_budget : MARK_CHAIN_MAX;
  }
  if (n > prev_n) return MARK_NARROW_MIN;
  return prev_budget < MARK_DRAIN_MAX ? 2 * prev_budget : prev_budget;
}

// Mark passes from the n roots the backend's frontier holds, until none
// is left, counted in *passes; 0, or -1 (message in `err`).
static int mark_all(const GpuBackend *b, long long n, u64 *passes, char *err,
                    unsigned errlen) {
  u32       prev = 0, budget = 0, cut = 0, pass = 0;
  FILE     *tr = trace_open();
  while (n > 0) {
    budget = gpu_mark_budget((u32)n, b->lanes(), prev, budget, cut);
    prev   = (u32)n;
    double p0 = gpu_now();
    n      = b->mark((u32)n, budget, &cut, err, errlen);
    (*passes)++;
    if (tr) {   // pushes: the terms left to mark (the next mark frontier)
      fprintf(tr, "%u,%u,0,0,%lld,%.0f,mark", ++pass, prev,
              n > 0 ? n : 0, (gpu_now() - p0) * 1e6);
      trace_tail(tr, "device", p0);
    }
  }
  trace_close(tr);
  return n < 0 ? -1 : 0;
}

// The run's end: the live words it allocated go to the host (compact.h).
// 0, or -1 when the packing failed (the backend left a valid heap).
static int pack(const GpuBackend *b, char *err, unsigned errlen) {
  GpuStats *s  = &RT->dev->stats;
  double    t0 = gpu_now();
  long long n  = b->roots(err, errlen);
  double    m0 = gpu_now();
  s->roots_s  += m0 - t0;
  int       rc = n < 0 ? -1 : mark_all(b, n, &s->marks, err, errlen);
  s->mark_s    += gpu_now() - m0;
  s->compact_s += gpu_now() - t0;
  if (rc != 0) {
    b->abandon();
    return -1;
  }
  return b->close(err, errlen);
}

// Reclaiming
// ==========
// A pass whose lanes found the heap full pushed their entries again
// (lane.h). Between two passes no lane holds anything but the frontier, so
// the heap is packed in place there: the words the run allocated that
// neither a changed word below the run's top nor a frontier entry reaches
// are given back, and the run goes on in the same heap with its frontier
// relocated. Sharing, SUB chains, stuck DUPs and labels are the words they
// were, moved in order (compact.h), and no interaction is redone.
//
// The run goes on while the live words leave at least a quarter of the
// room it allocates in (RECLAIM_FREE): each reclaim then copies at most
// three live words for each word it gives back, so the copying costs a
// small multiple of the allocating. Else the run stops with WNF_OOM
// (gpu.c: a larger device heap, or the end).
#define RECLAIM_FREE 4

// A frontier bounded by memory
// =============================
// A pass runs every entry, and each pushes its children: the run expands
// breadth first, and its live words hold a whole level of pending work
// (gpu_tree_map: 4.3M live words where the CPU's depth-first peak is
// 0.8M). So once a reclaim finds the live words past 1/BOUND_SHARE of the
// room, the passes run only the frontier's first entries: the newest (a
// pass's pushes come first, ahead of the entries that waited: dev.h,
// GpuBackend.pass), which finish the subtrees they began instead of
// widening them, so the run turns depth first and its live words stop
// growing. The other entries wait in the frontier buffer, as an entry
// pushed again does (relocated by each reclaim). The bound starts at an
// entry a lane (BOUND_LANES), or the frontier's size where that is less,
// and halves at each reclaim that finds the live words still past the line
// and grown by a BOUND_GROWTH share of the room since it last changed (a
// reclaim comes each time the room fills, so in a small heap the growth
// from one to the next is small however steady it is): with many
// lanes and a small heap, an entry a lane is no bound at all. Passes so
// bounded are no sign of a narrow frontier (--handoff). A reclaim that
// finds the live words under half of the line again lifts it (the
// hysteresis keeps a run near the line from switching every reclaim).
// The cost: more passes, each as long as its longest entry, and the
// waiting entries copied behind every pass's pushes; a run with room never
// pays it.
//   BOUND_SHARE 4: the live words of a breadth-first run (gpu_sup_search)
//     may double between two reclaims; bounded from a quarter of the room
//     on, they stay under RECLAIM_FREE's line.
//   BOUND_LANES 1: an entry a lane; more entries a pass widen the live set
//     again, fewer leave lanes idle.
//   BOUND_GROWTH 32: growth at that pace reaches RECLAIM_FREE's line from
//     BOUND_SHARE's in a few reclaims; slower growth (the waiting entries'
//     own results) halving the bound only slowed the run.
#define BOUND_SHARE  4
#define BOUND_LANES  1
#define BOUND_GROWTH 32

int gpu_reclaim_next(u64 live, u64 room, u32 lanes, u32 n, GpuBound *b) {
  if (live * BOUND_SHARE > room) {
    u64 k = (u64)lanes * BOUND_LANES;
    if (k > n) k = n;   // within a u32, as n is
    if (b->run == 0) {
      b->run  = k == 0 ? 1 : (u32)k;
      b->live = live;
    } else if (live > b->live + room / BOUND_GROWTH && b->run > 1) {
      b->run /= 2;
      b->live = live;
    }
  } else if (live * BOUND_SHARE * 2 <= room) {
    b->run = 0;
  }
  return live * RECLAIM_FREE <= room * (RECLAIM_FREE - 1) ? 1 : 0;
}

// 0: reclaimed, the frontier of n entries relocated (r says what it
// found); -1: the packing failed (message in `err`).
static int reclaim(const GpuBackend *b, u32 n, GpuReclaim *r, char *err,
                   unsigned errlen) {
  GpuStats *s  = &RT->dev->stats;
  double    t0 = gpu_now();
  long long m  = b->reclaim_roots(n, err, errlen);
  int       rc = m < 0 ? -1 : mark_all(b, m, &s->reclaim_marks, err, errlen);
  if (rc == 0) rc = b->squeeze(n, r, err, errlen);
  s->reclaim_s += gpu_now() - t0;
  if (rc != 0) return -1;
  s->reclaims++;
  s->reclaimed += r->freed;
  return 0;
}

// A backend that could not go on: the first such reason is the runtime's
// notice (sched_notice), which the program prints.
static void fell_back(const GpuBackend *b, const char *err, const char *then) {
  if (RT->dev->notice[0]) return;
  snprintf(RT->dev->notice, sizeof RT->dev->notice, "hvm4g: device (%s): %s; %s",
           b->name, err, then);
}

static void stop_at(GpuStats *s, u32 stop, const PassCtl *ctl, u64 pass) {
  s->stops++;
  s->stop      = stop;
  s->stop_loc  = ctl->stop_loc;
  s->stop_err  = ctl->stop_err;
  s->stop_pri  = ctl->stop_pri;
  s->stop_pass = pass;
}

u32 gpu_run(const GpuBackend *b, const u32 *roots, u32 nroot) {
  u32 loc = roots[0];   // where -s places a stop of the run as a whole
  GpuStats *s = &RT->dev->stats;
  char err[256] = {0};
  s->runs++;
  s->backend = b->name;

  double t0   = gpu_now();
  u64    top0 = gpu_top();
  if (b->open(roots, nroot, err, sizeof err) != 0) {
    fell_back(b, err, "the CPU normalizes instead");
    PassCtl none = { .stop_loc = loc };
    stop_at(s, STOP_SPACE, &none, 0);
    return STOP_SPACE;
  }
  s->in_s += gpu_now() - t0;
  s->lanes = b->lanes();

  FILE  *tr     = trace_open();
  u32    n      = nroot;
  u32    stop   = 0;
  u32    stall  = 0;
  u32    thin   = 0;   // narrow passes in a row
  double thin_s = 0;   // their time, and that of slow passes
  double rate   = 1e6 * (RT->dev->conf.narrow_rate_set ? RT->dev->conf.narrow_rate
                                             : b->narrow_rate);
  u64    pass   = 0;
  u64    dtop   = top0;
  u64    base   = top0;   // the top after the last reclaim
  int    fresh  = 0;      // the last pass ended with a reclaim
  GpuBound bound = { 0, 0 };   // gpu_reclaim_next
  while (n > 0) {
    PassCtl ctl;
    memset(&ctl, 0, sizeof ctl);
    u32 run = bound.run && bound.run < n ? bound.run : n;
    double p0 = gpu_now();
    long long m = b->pass(n, run, &ctl, err, sizeof err);
    double dt = gpu_now() - p0;
    pass++;
    s->passes++;
    s->bounded += run < n;
    s->entries += run;
    s->itrs    += ctl.itrs;
    s->defers  += ctl.defers;
    s->pushes  += ctl.pushes;
    s->again   += ctl.again;
    s->local   += ctl.local;
    s->dev_s   += dt;
    if (ctl.top > dtop) dtop = ctl.top;
    if (n > s->widest) s->widest = n;
    if (tr) {
      fprintf(tr, "%llu,%u,%llu,%llu,%llu,%.0f,step", (unsigned long long)pass,
              run, (unsigned long long)ctl.itrs,
              (unsigned long long)ctl.defers,
              (unsigned long long)ctl.pushes, dt * 1e6);
      trace_tail(tr, "device", p0);
    }
    if (m >= 0 && ctl.oom && !ctl.stop) {
      // Lanes found the heap full; a backend that reclaims goes on, unless
      // the pass after its last reclaim did nothing (a node larger than
      // the room a reclaim leaves).
      int idle = fresh && ctl.itrs == 0 && ctl.done == 0;
      int r    = 0;
      if (b->squeeze && !idle) {
        GpuReclaim rc = { 0, 0, 0 };
        r = reclaim(b, (u32)m, &rc, err, sizeof err);
        if (r == 0) {   // the words allocated so far are counted
          s->alloc    += dtop - base;
          base         = top0 + rc.live;
          dtop         = base;
          s->heap_live = base;   // the host's words below top0 count too
          r            = gpu_reclaim_next(rc.live, rc.room, s->lanes, (u32)m, &bound);
        }
      }
      fresh = r > 0;
      if (r < 0) {
        m = -1;
      } else if (r == 0) {
        ctl.stop     = WNF_OOM;
        ctl.stop_loc = loc;
      }
    } else {
      fresh = 0;
    }
    if (m < 0) {
      fell_back(b, err, "the CPU finishes");
      stop = STOP_SPACE;
      ctl.stop_loc = loc;
    } else if (ctl.stop) {
      stop = ctl.stop;
    } else if (ctl.itrs == 0 && ctl.done == 0) {
      stall = stall + 1;
      if (stall >= STALL_PASSES) {
        stop = STOP_STALL;
        ctl.stop_loc = loc;
      }
    } else {
      stall = 0;
    }
    if (!stop && m > 0 && RT->dev->conf.max_passes && pass >= RT->dev->conf.max_passes) {
      stop = STOP_PASSES;
      ctl.stop_loc = loc;
    }
    // a pass bounded by memory is narrow by choice: the frontier is not
    int bounded = run < n;
    thin   = !bounded && narrow(run, ctl.itrs, s->lanes) ? thin + 1 : 0;
    thin_s = !bounded && (thin || (double)ctl.itrs < rate * dt) ? thin_s + dt : 0;
    if (!stop && m > 0 && RT->dev->conf.handoff &&
        (thin >= RT->dev->conf.handoff || thin_s >= NARROW_TIME)) {
      stop = STOP_NARROW;
      ctl.stop_loc = loc;
    }
    if (!stop && m > 0 && RT->dev->conf.grow && dtop - top0 > RT->dev->conf.grow) {
      stop = STOP_LIMIT;
      ctl.stop_loc = loc;
    }
    if (stop) {
      stop_at(s, stop, &ctl, pass);
      break;
    }
    n = (u32)m;
  }
  trace_close(tr);

  s->alloc += dtop - base;
  if (pack(b, err, sizeof err) != 0) {
    fell_back(b, err, "the CPU normalizes instead");
    if (!stop) {
      s->stops++;
      s->stop_pass = pass;
    }
    stop         = STOP_FAULT;
    s->stop      = STOP_FAULT;
    s->stop_loc  = loc;
  }
  return stop;
}
