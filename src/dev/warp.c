// warp.c: the warp model (warp.h). Each lane is a ucontext coroutine with
// a stack of its own; the scheduler resumes the unfinished lanes in lane
// order, each until it begins its next step (warp_step yields), which
// makes a round. After the round the steps the lanes ended are grouped by
// warp and branch: one warp step per group, as a SIMT machine serializes
// the branches its lanes diverged to. One thread, a fixed order: the same
// counts, and the same heap, on every run.
//
// Waiting for the warp (warp_new's `wait`): a lane whose next step's
// branch is not its warp's most common one sits a round out, as a kernel
// that votes on the branch before each step would mask it off, unless it
// has sat out `wait` rounds in a row (a lane the others wait for, a DUP
// slot's holder, must run). Lanes in one loop at different points of it
// fall in step this way, and stay so.

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/mman.h>
#include "dev/warp.h"

// A lane's C stack: lane_entry and wnf_run keep their frames on the
// explicit WNF stack, so a few pages would do; the rest is never touched.
#define WARP_STACK_BYTES ((u64)256 << 10)

// One (group, line) pair of a round: group = warp << 32 | branch.
typedef struct {
  u64 group;
  u64 line;
} WarpTouch;

struct WarpLane {
  ucontext_t ctx;
  WarpModel *model;
  u32        index;
  u32        branch;   // the open step's
  u32        next;     // the step it waits to begin (when open)
  u32        waited;   // rounds sat out in a row
  int        open;     // a step has begun and not ended
  int        done;     // the body returned
  u64       *lines;    // lines the open step touched (repeats dropped
  u32        nlines;   // when consecutive; the round sorts out the rest)
  u32        lines_cap;
};

struct WarpModel {
  ucontext_t  sched;
  WarpLane   *lanes;
  u32         nlanes;
  u8         *stacks;     // nlanes stacks, each above a guard page
  u64         stack_span; // a stack and its guard page
  WarpLane   *running;
  void      (*body)(void *arg, u32 lane);
  void       *arg;
  u64        *groups;     // the round's steps, one group key per lane
  u32         ngroups;
  WarpTouch  *touch;      // the round's lines
  u64         ntouch;
  u64         touch_cap;
  int         failed;     // out of memory while recording: counts low
  u32         wait;       // rounds a lane may sit out (0: none)
  u32        *votes;      // a warp's next branches, sorted to find the most common
  WarpCounts  counts;
};

WarpModel *warp_new(u32 lanes, u32 wait) {
  WarpModel *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  u64 page      = (u64)sysconf(_SC_PAGESIZE);
  m->nlanes     = lanes;
  m->wait       = wait;
  m->stack_span = WARP_STACK_BYTES + page;
  m->lanes      = calloc(lanes ? lanes : 1, sizeof(WarpLane));
  m->groups     = calloc(lanes ? lanes : 1, sizeof(u64));
  m->votes      = calloc(WARP_LANES, sizeof(u32));
  void *st = mmap(NULL, m->stack_span * (lanes ? lanes : 1), PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  m->stacks = st == MAP_FAILED ? NULL : st;
  if (!m->lanes || !m->groups || !m->votes || !m->stacks) {
    warp_free(m);
    return NULL;
  }
  // A lane that overran its stack faults instead of writing its neighbour's.
  for (u32 i = 0; i < lanes; i++) {
    mprotect(m->stacks + i * m->stack_span, page, PROT_NONE);
  }
  return m;
}

void warp_free(WarpModel *m) {
  if (!m) return;
  if (m->lanes) {
    for (u32 i = 0; i < m->nlanes; i++) free(m->lanes[i].lines);
  }
  if (m->stacks) munmap(m->stacks, m->stack_span * (m->nlanes ? m->nlanes : 1));
  free(m->lanes);
  free(m->groups);
  free(m->votes);
  free(m->touch);
  free(m);
}

WarpLane *warp_lane(WarpModel *m, u32 lane) {
  return &m->lanes[lane];
}

WarpLane *warp_running(WarpModel *m) {
  return m->running;
}

const WarpCounts *warp_counts(const WarpModel *m) {
  return &m->counts;
}

// makecontext passes ints: the lane's address in two halves.
static void lane_main(unsigned hi, unsigned lo) {
  WarpLane  *l = (WarpLane *)(((uintptr_t)hi << 32) | (uintptr_t)lo);
  WarpModel *m = l->model;
  m->body(m->arg, l->index);
  l->done = 1;   // returning resumes the scheduler (uc_link)
}

void warp_step(WarpLane *l, u32 branch) {
  l->next = branch;
  if (l->open) swapcontext(&l->ctx, &l->model->sched);
  l->open   = 1;
  l->branch = branch;
}

void warp_access(WarpLane *l, u64 word, u32 kind) {
  WarpModel *m = l->model;
  switch (kind) {
    case WARP_LOAD:  m->counts.loads++; break;
    case WARP_STORE: m->counts.stores++; break;
    default:         m->counts.atomics++; break;
  }
  if (kind == WARP_SHARED) return;
  u64 line = word / WARP_LINE_WORDS;
  if (l->nlines && l->lines[l->nlines - 1] == line) return;
  if (l->nlines == l->lines_cap) {
    u32  cap = l->lines_cap ? 2 * l->lines_cap : 16;
    u64 *p   = realloc(l->lines, cap * sizeof(u64));
    if (!p) {
      m->failed = 1;
      return;
    }
    l->lines     = p;
    l->lines_cap = cap;
  }
  l->lines[l->nlines++] = line;
}

static int cmp_u64(const void *a, const void *b) {
  u64 x = *(const u64 *)a, y = *(const u64 *)b;
  return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b) {
  u32 x = *(const u32 *)a, y = *(const u32 *)b;
  return x < y ? -1 : x > y;
}

static int cmp_touch(const void *a, const void *b) {
  const WarpTouch *x = a, *y = b;
  if (x->group != y->group) return x->group < y->group ? -1 : 1;
  return x->line < y->line ? -1 : x->line > y->line;
}

// The step lane l just ended goes into the round's groups and lines.
static void record_step(WarpModel *m, WarpLane *l) {
  u64 group = (u64)(l->index / WARP_LANES) << 32 | l->branch;
  m->groups[m->ngroups++] = group;
  if (m->ntouch + l->nlines > m->touch_cap) {
    u64        cap = m->touch_cap ? m->touch_cap : 1024;
    while (cap < m->ntouch + l->nlines) cap *= 2;
    WarpTouch *p   = realloc(m->touch, cap * sizeof(WarpTouch));
    if (!p) {
      m->failed = 1;
      l->nlines = 0;
      return;
    }
    m->touch     = p;
    m->touch_cap = cap;
  }
  for (u32 i = 0; i < l->nlines; i++) {
    m->touch[m->ntouch].group  = group;
    m->touch[m->ntouch++].line = l->lines[i];
  }
  l->nlines = 0;
}

// The round's warp steps (distinct groups), active lanes (steps ended)
// and lines (distinct pairs).
static void end_round(WarpModel *m) {
  qsort(m->groups, m->ngroups, sizeof(u64), cmp_u64);
  for (u32 i = 0; i < m->ngroups; i++) {
    if (i == 0 || m->groups[i] != m->groups[i - 1]) m->counts.steps++;
  }
  m->counts.lanes += m->ngroups;
  qsort(m->touch, m->ntouch, sizeof(WarpTouch), cmp_touch);
  for (u64 i = 0; i < m->ntouch; i++) {
    if (i == 0 || cmp_touch(&m->touch[i], &m->touch[i - 1]) != 0) m->counts.lines++;
  }
  m->ngroups = 0;
  m->ntouch  = 0;
}

// The most common next branch among the open lanes of warp [lo, hi) (the
// lowest of those tied); ~0u when none is open.
static u32 warp_vote(WarpModel *m, u32 lo, u32 hi) {
  u32 n = 0;
  for (u32 i = lo; i < hi; i++) {
    if (!m->lanes[i].done && m->lanes[i].open) m->votes[n++] = m->lanes[i].next;
  }
  if (n == 0) return ~0u;
  qsort(m->votes, n, sizeof(u32), cmp_u32);
  u32 best = m->votes[0], most = 0;
  for (u32 i = 0, run = 0; i < n; i++) {
    run = i > 0 && m->votes[i] == m->votes[i - 1] ? run + 1 : 1;
    if (run > most) {
      most = run;
      best = m->votes[i];
    }
  }
  return best;
}

// Whether lane l runs this round, its warp's vote being `vote`.
static int runs_now(WarpModel *m, WarpLane *l, u32 vote) {
  if (m->wait == 0 || !l->open || l->next == vote || l->waited >= m->wait) {
    l->waited = 0;
    return 1;
  }
  l->waited++;
  m->counts.waits++;
  return 0;
}

// getcontext and swapcontext return twice, as setjmp does: they stay out
// of warp_run (noinline), whose loop counters live across them.

// Lane i's coroutine, to start at lane_main.
__attribute__((noinline)) static void start_lane(WarpModel *m, u32 i) {
  WarpLane *l = &m->lanes[i];
  u64       p = (u64)(uintptr_t)l;
  l->model  = m;
  l->index  = i;
  l->open   = 0;
  l->waited = 0;
  l->done   = 0;
  l->nlines = 0;
  getcontext(&l->ctx);
  l->ctx.uc_stack.ss_sp   = m->stacks + i * m->stack_span + (m->stack_span - WARP_STACK_BYTES);
  l->ctx.uc_stack.ss_size = WARP_STACK_BYTES;
  l->ctx.uc_link          = &m->sched;
  makecontext(&l->ctx, (void (*)(void))lane_main, 2, (unsigned)(p >> 32), (unsigned)p);
}

// Runs lane l until it begins its next step or returns.
__attribute__((noinline)) static void resume_lane(WarpModel *m, WarpLane *l) {
  m->running = l;
  swapcontext(&m->sched, &l->ctx);
  m->running = NULL;
}

int warp_run(WarpModel *m, u32 n, void (*body)(void *arg, u32 lane), void *arg) {
  if (n > m->nlanes) return -1;
  m->body = body;
  m->arg  = arg;
  for (u32 i = 0; i < n; i++) start_lane(m, i);
  for (u32 left = n; left > 0;) {
    u32 vote = ~0u;
    for (u32 i = 0; i < n; i++) {
      WarpLane *l = &m->lanes[i];
      if (m->wait && i % WARP_LANES == 0) {
        vote = warp_vote(m, i, i + WARP_LANES < n ? i + WARP_LANES : n);
      }
      if (l->done || !runs_now(m, l, vote)) continue;
      resume_lane(m, l);
      if (l->open) record_step(m, l);
      if (l->done) {
        l->open = 0;
        left--;
      }
    }
    end_round(m);
  }
  return m->failed ? -1 : 0;
}
