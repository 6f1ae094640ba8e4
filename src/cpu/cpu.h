// cpu.h: the CPU backend of the WNF core (host code).
//
// Defines core.h's heap primitives over the host heap (heap.h) and includes
// the one WNF core. Loads acquire and stores release: under -T a thread may
// reach a node through a word another thread stored (a DUP slot's SUB, a
// collapsed branch), and must then see the node's words too. On x86 these
// are plain moves, as relaxed ones would be (no slower). DUP
// slots are taken with an exchange and handed back with a release store
// (HEAP_PUT_HELD, wnf.h).
#ifndef HVM4G_CPU_H
#define HVM4G_CPU_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "heap/heap.h"
#include "core/core.h"
#include "cpu/eval.h"
#include "cpu/reclaim.h"

// Words a worker takes from the heap per refill of its arena: 2 MiB, the
// span of one page-table page, so that threads faulting in fresh memory do
// not contend on the same page-table lock (smaller arenas cost system time
// under -T).
#define CPU_ARENA (1u << 18)

// The capacity from memory, not the machine's register copy (wnf.h): one
// live value fewer in its loop, and gcc keeps the stack's base in a register.
#define WNF_STACK_FULL(w, sp, cap) ((void)(cap), (sp) == (w)->stack_cap)

#define HEAP_LD(w, loc)      __atomic_load_n(&(w)->heap[(loc)], __ATOMIC_ACQUIRE)
#define HEAP_ST(w, loc, t)   __atomic_store_n(&(w)->heap[(loc)], (t), __ATOMIC_RELEASE)
#define HEAP_XCHG(w, loc, t) __atomic_exchange_n(&(w)->heap[(loc)], (t), __ATOMIC_ACQ_REL)
#define HEAP_CAS(w, loc, old, new) cpu_cas((w), (loc), (old), (new))
#define HEAP_REFILL(w, n)    cpu_refill((w), (n))
// HEAP_ST releases: enough to hand back a DUP slot (wnf.h)
#define HEAP_PUT_HELD(w, loc, t) HEAP_ST(w, loc, t)
// eval_itrs() sums every thread's count while the pool runs
#define WNF_PUT_ITRS(w, n)   __atomic_store_n(&(w)->itrs, (n), __ATOMIC_RELAXED)

// While this thread runs a sequential strong normal form, the DUP slots it
// found stuck stay so for the rest of it (snf.c, "Stuck DUP chains"): a
// DP0/DP1 of one is neutral at once. SNF_STUCK_EP is that normalization's
// epoch, 0 outside one.
extern _Thread_local u16 SNF_STUCK_EP;
int snf_stuck(u32 loc, Term c);

// The job whose task this thread runs (snf.c; POOL_ANY outside one). A
// task waiting on a slot helps only its own job meanwhile (eval.c).
extern _Thread_local u32 SNF_JOB;
#define WNF_STUCK(w, loc, c) (SNF_STUCK_EP != 0 && snf_stuck((loc), (c)))

// Compare-and-swap on RT->heap.at[loc]: returns the word that was there.
static inline Term cpu_cas(Wnf *w, u32 loc, Term old, Term new_) {
  __atomic_compare_exchange_n(&w->heap[loc], &old, new_, 0,
                              __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return old;
}

// The core's refill (eval.c): a collection due or under way stops the run
// too (WNF_OOM, rebuilt), and the driver joins it (reclaim.c). Out of line
// and cold: the machine inlines every allocation site, and this rare path
// would otherwise take loop registers from the hot one.
__attribute__((cold)) u32 cpu_refill(Wnf *w, u32 n);

// Sparks under -T (wnf.h "Sparks"; the pool in snf.c keeps the offers).
void pool_offer(Wnf *w, u32 slot, Term b);
void pool_took_back(Wnf *w, u32 slot);
#define WNF_OFFER(w, slot, b)  pool_offer((w), (slot), (b))
#define WNF_TOOK_BACK(w, slot) pool_took_back((w), (slot))

#include "core/wnf.h"
#include "heap/rt.h"

// Sets up a CPU evaluator over the host heap and book: single-thread DUP
// mode, no budget, an empty arena, and a stack of stack_cap frames reserved
// lazily (pages are committed on first use). Exits if it cannot reserve.
static inline void cpu_wnf_init(Wnf *w, u32 stack_cap) {
  *w = (Wnf){0};
  void *stk = mmap(NULL, (size_t)stack_cap * sizeof(Term), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (stk == MAP_FAILED) {
    eval_fatal("hvm4g: ", "cannot reserve a WNF stack");
  }
  // Huge pages for the heap: the evaluator touches fresh heap at a high
  // rate, and 4K page faults would otherwise cost more than the work.
  // (Advice only; harmless where unsupported.)
  madvise(RT->heap.at, (size_t)RT->heap.cap * sizeof(Term), MADV_HUGEPAGE);
  w->heap         = RT->heap.at;
  w->book         = RT->heap.book;
  w->book_len     = RT->heap.book_len;
  w->book_cnt     = RT->heap.book_cap;
  w->stack        = (Term *)stk;
  w->stack_cap    = stack_cap;
  w->budget       = ~0ull;
  w->dup_mode     = DUP_SOLO;
  w->region_shift = 31;
}

// Releases the stack of cpu_wnf_init.
static inline void cpu_wnf_free(Wnf *w) {
  if (w->stack) {
    munmap(w->stack, (size_t)w->stack_cap * sizeof(Term));
  }
  w->stack = NULL;
}

#endif
