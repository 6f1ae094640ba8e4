// lane.h: one device lane's share of a pass (portable dialect).
//
// Compiled by every device backend (sim.c as C11, cuda.cu as CUDA, the
// Metal kernels as MSL: THR marks pointers to the lane's own data). The
// backend defines, BEFORE including this file, the HEAP_* primitives of
// core.h and:
//   GPU_ADD64(p, v)     atomic add on a u64 counter
//   GPU_OR32(p, v)      atomic or on a u32 word, returns the old word
//   GPU_CAS32(p, o, n)  atomic compare-and-swap on a u32, returns the old
// then includes this file, which includes the one WNF core (wnf.h).
//
// A pass gives each lane the entries lane, lane+lanes, lane+2*lanes, ... of
// the frontier. Each entry is reduced to WNF under a budget; its children
// go to the lane's own output segment, which the host (or a scan kernel)
// concatenates in lane order: the next frontier has a fixed order.

#ifndef HVM4G_LANE_H
#define HVM4G_LANE_H

#include "core/core.h"
#include "core/kern.h"

// One lane during a pass.
typedef struct {
  Wnf         w;     // first: the core's offers reach the lane through it
  DEV u64    *out;   // this lane's output segment [0, cap)
  u32         cnt;   // entries written to it
  u32         room;  // entries offers may still add in this WNF run
  u32         defers; // counts of this pass (u32: fewer registers)
  u32         pushes;
  u32         done;
  u32         again;
  u32         local;  // deferrals to the lane's own arena region
  u32         oom;    // entries pushed again after the heap filled
} Lane;

FN void lane_begin(THR Lane *L, THR const PassArgs *a, u32 lane,
                   DEV Term *stacks, DEV u32 *arena, DEV u64 *outs) {
  THR Wnf *w      = &L->w;
  w->heap         = a->heap;
  w->book         = a->book;
  w->book_len     = a->book_len;
  w->book_cnt     = a->book_cnt;
  w->stack        = stacks + (u64)lane * a->stack_cap;
  w->stack_cap    = a->stack_cap;
  w->next         = arena[2 * lane + 0];
  w->end          = arena[2 * lane + 1];
  w->itrs         = 0;
  w->budget       = 0;
  w->dup_mode     = a->dup_mode;
  w->owner        = 0;
  w->region_shift = a->region_shift;
  // Under -C a %gnf is a boundary: its whole normal form, effects in its
  // order, comes before the collapse goes on, as on the CPU; so the lane
  // hands it to the host instead of reading through it.
  w->on_device    = a->shallow_inc ? 0u : 1u;
  w->status       = WNF_OK;
  w->err          = 0;
  w->defer        = 0;
  w->host         = 0;
  w->defers       = 0;
  w->offer        = a->spark_gap;
  w->offer_twice  = 0;   // a lane goes on with other entries meanwhile
  w->stuck        = 0;   // lane_entry's run bitmap
  L->out          = outs + (u64)lane * a->cap;
  L->cnt          = 0;
  L->room         = 0;
  L->defers       = 0;
  L->pushes       = 0;
  L->done         = 0;
  L->again        = 0;
  L->local        = 0;
  L->oom          = 0;
}

FN void lane_push(THR Lane *L, u64 e) {
  L->out[L->cnt++] = e;
  L->pushes++;
}

// Sparks (wnf.h): an offered operand becomes a frontier entry of the next
// pass, pushed within the room the lane kept for offers. No other lane
// sees it before then; the offering lane may take it back meanwhile.
FN void lane_offer(THR Wnf *w, u32 slot, Term b) {
  THR Lane *L = (THR Lane *)w;
  if (L->room == 0u) {
    return;
  }
  L->room--;
  HEAP_ST(w, slot, AS_SUB(b));
  lane_push(L, ENT_SPK | ENT(REGION_OF(w, slot), slot));
}

#define WNF_OFFER(w, slot, b)  lane_offer((w), (slot), (b))
#define WNF_TOOK_BACK(w, slot) ((void)0)

// Whether DUP slot loc, holding c, is known stuck: a lane claimed it in
// this run (lane_claim: a WNF had just found it stuck) and c is a neutral
// that walking would only retrace (a copy of a copy, an application).
// Nothing binds the variable below it meanwhile, so a chain of N stuck
// DUPs costs each use O(1), not a walk down the chain (dup_chain_built).
#define WNF_STUCK(w, loc, c)                                        \
  ((TAG(c) == DP0 || TAG(c) == DP1 || TAG(c) == APP) && (w)->stuck && \
   (((w)->stuck[(loc) >> 5] >> ((loc) & 31u)) & 1u))

#include "core/wnf.h"

// Records the first stop of the pass; later ones are dropped.
FN void lane_stop(DEV PassCtl *ctl, u32 why, u32 loc, u32 err, u32 pri) {
  if (GPU_CAS32(&ctl->stop, 0u, why) == 0u) {
    ctl->stop_loc = loc;
    ctl->stop_err = err;
    ctl->stop_pri = pri;
  }
}

// The children a run visits after a term's WNF r: [*first, *first + n).
// Under -C (shallow_inc), as the collapser's cnf: none under ↑, only a
// RED's right side (cnf drops the left), and none of a stuck application
// or operation, which cnf normalizes where it stands but which, copied by a
// DUP when cnf lifts a SUP beside it, prints as found: normalized ahead by
// the device it showed resolved DUPs that the CPU prints pending (`[&A{0,1},
// &B{λx.0,2} .|. 6]`: `B₀` there, `6` here; tests/golden/collapse_*).
FN u32 lane_children(THR const PassArgs *a, Term r, THR u32 *first) {
  u32 tag = TAG(r);
  *first  = VAL(r);
  if (!a->shallow_inc) {
    return term_arity(r);
  }
  if (tag == RED) {
    *first += 1;
    return 1;
  }
  if (tag == INC || tag == APP || tag == OP2 || tag == EQL || tag == AND ||
      tag == OR || tag == DSU || tag == DDU) {
    return 0;
  }
  return term_arity(r);
}

// A word already in strong normal form with nothing under it: its slot
// needs no entry (WNF would return it unchanged).
FN int lane_leaf(Term t) {
  u32 tag = TAG(t);
  return !IS_SUB(t) && (tag == NUM || tag == ERA || tag == ANY ||
         tag == NAM || tag == BJV || tag == BJ0 || tag == BJ1 ||
         tag == C00);
}

// Bit 0 of seen[0] (location 0 is never allocated) says whether any
// lane claimed a slot in this run. Until one has, a lane gives its core no
// bitmap (w->stuck), and a DP0/DP1 that finds an application or a copy in
// its slot does not read the bitmap: on the wide programs that read was a
// DRAM round trip on every take, a large share of the step kernel's
// stalls. A lane that reads the bit before another's claim is visible
// treats that slot as not stuck, which is what it did before the claim.
#define SEEN_ANY 1u

// Claims a stuck DUP's expression slot for normalization: 1 for the first
// lane that asks, in this run.
FN int lane_claim(DEV u32 *seen, u32 loc) {
  u32 bit = 1u << (loc & 31u);
  if ((GPU_OR32(&seen[loc >> 5], bit) & bit) != 0u) {
    return 0;
  }
  if ((seen[0] & SEEN_ANY) == 0u) {
    GPU_OR32(&seen[0], SEEN_ANY);
  }
  return 1;
}

// A spark entry: claims the offered operand if it is still marked and
// reduces it to WNF. Stopped by its budget or a slot held elsewhere, it
// stays on offer (marked, its entry pushed again); any other stop (an
// error, a host primitive, the heap) leaves it plain, for the offering
// lane to meet in its own order. `left`: free entries in the segment.
FN_COLD void lane_spark(THR Lane *L, THR const PassArgs *a, u64 e, u32 left, u32 rem) {
  THR Wnf *w   = &L->w;
  u32     loc  = ENT_LOC(e);
  u32     own  = ENT_OWN(e);
  u32     tries = ENT_TRIES(e);
  WNF_WARP_STEP(w, WARP_LANE_SPARK);
  if (left < rem + LANE_KIDS) {
    lane_push(L, e);
    L->again++;
    return;
  }
  Term y = HEAP_LD(w, loc);
  if (!IS_SUB(y)) {
    return;                        // taken back, or claimed this pass
  }
  y = HEAP_XCHG(w, loc, BUSY);
  if (y == BUSY) {
    return;                        // claimed this pass
  }
  if (!IS_SUB(y)) {
    HEAP_PUT_HELD(w, loc, y);      // taken back meanwhile: as it was
    return;
  }
  w->owner    = own;
  w->dup_mode = (a->dup_mode == DUP_OWNER && tries >= ENT_ESCALATE)
              ? DUP_ATOMIC : a->dup_mode;
  w->budget   = w->itrs + a->budget;
  w->status   = WNF_OK;
  L->room     = left - rem - LANE_KIDS;
  Term r      = wnf_run(w, NO_SUB(y));
  WNF_WARP_STEP(w, WARP_LANE_PUT);
  L->room     = 0;
  u32  st     = w->status;
  HEAP_PUT_HELD(w, loc, (st == WNF_BUDGET || st == WNF_DEFER) ? AS_SUB(r) : r);
  if (st == WNF_BUDGET) {
    lane_push(L, ENT_SPK | ENT(own, loc));
    L->again++;
  } else if (st == WNF_DEFER) {
    u32 n = tries < ENT_TRIES_MAX ? tries + 1 : tries;
    lane_push(L, ENT_SPK | ENT_T(w->defer, loc, n));
    L->defers++;
  } else if (st == WNF_OK) {
    L->done++;
  }
}

// Reduces entry `e` and walks down one child at a time while budget and
// segment space last. `rem`: entries this lane still has after this one
// (each needs one free slot, so the segment never overflows).
FN void lane_entry(THR Lane *L, THR const PassArgs *a, DEV u32 *seen,
                   DEV PassCtl *ctl, u64 e, u32 rem) {
  THR Wnf *w = &L->w;
  if (ENT_IS_SPK(e)) {
    lane_spark(L, a, e, a->cap - L->cnt, rem);
    return;
  }
  u32 loc   = ENT_LOC(e);
  u32 own   = ENT_OWN(e);
  u32 dpx   = ENT_IS_DPX(e) ? 1u : 0u;
  u32 tries = ENT_TRIES(e);
  u64 start = w->itrs;
  u64 slots = 0;   // slots visited: a walk that needs no interaction (a
                   // book reference unfolding) still spends budget
  w->stuck  = (seen[0] & SEEN_ANY) ? seen : 0;
  for (;;) {
    WNF_WARP_STEP(w, WARP_LANE_TAKE);
    u64 dflag = dpx ? ENT_DPX : (u64)0;
    u32 left  = a->cap - L->cnt;
    u64 spent = w->itrs - start + slots;
    slots++;
    // No room to push every child, or no budget to go on: retry later.
    if (left < rem + LANE_KIDS || spent >= a->budget) {
      lane_push(L, dflag | ENT_T(own, loc, tries));
      L->again++;
      return;
    }
    Term t;
    if (dpx) {
      t = HEAP_XCHG(w, loc, BUSY);
      if (t == BUSY) {             // held by a DP0/DP1 this pass
        lane_push(L, dflag | ENT_T(own, loc, tries));
        L->again++;
        return;
      }
      if (IS_SUB(t)) {             // resolved meanwhile: nothing left here
        HEAP_ST(w, loc, t);
        return;
      }
    } else {
      t = HEAP_LD(w, loc);
      if (t == BUSY) {             // a field of a shared inert node (below)
        lane_push(L, ENT_T(own, loc, tries));
        L->again++;
        return;
      }
    }
    w->owner    = own;
    w->dup_mode = (a->dup_mode == DUP_OWNER && tries >= ENT_ESCALATE)
                ? DUP_ATOMIC : a->dup_mode;
    w->budget = w->itrs + (a->budget - spent);
    w->status = WNF_OK;
    L->room   = left - rem - LANE_KIDS;
    Term r    = wnf_run(w, t);
    WNF_WARP_STEP(w, WARP_LANE_PUT);
    L->room   = 0;
    if (dpx) {
      HEAP_PUT_HELD(w, loc, r);    // store and release
    } else if (r != t) {
      // A node reached twice whose fields DUP-NOD made DUP slots in place
      // (a RED's inert argument, when its sides shared it) shows the walk
      // a DUP slot as a field: it waits while another lane holds it (BUSY,
      // above) and never stores there, its weak normal form being itself.
      // A store put BUSY back over a released slot, or an expression over
      // a SUB (red_sum_stuck hung on CUDA in atomic mode). REDs now copy
      // such an argument (wnf_red_share); the guard stays.
      HEAP_ST(w, loc, r);
    }
    switch (w->status) {
      case WNF_OK: break;
      case WNF_BUDGET: {
        lane_push(L, dflag | ENT(own, loc));
        L->again++;
        return;
      }
      case WNF_DEFER: {
        // Owner mode: the slot lies in the region this lane allocates in
        // (its arena is that whole region): the lane acts for that region
        // and goes on now, instead of a pass later.
        if (a->dup_mode == DUP_OWNER && w->defer != own && w->end > w->next &&
            w->defer == REGION_OF(w, w->end - 1)) {
          own = w->defer;
          L->local++;
          continue;
        }
        u32 n = tries < ENT_TRIES_MAX ? tries + 1 : tries;
        lane_push(L, dflag | ENT_T(w->defer, loc, n));
        L->defers++;
        return;
      }
      case WNF_OOM: {
        // The core rebuilt the term, as for a budget: the entry waits in
        // the frontier while the host loop reclaims the heap (pass.c).
        lane_push(L, dflag | ENT_T(own, loc, tries));
        L->oom++;
        return;
      }
      default: {
        u32 pri = TAG(w->host) == PRI ? EXT(w->host) : 0xFFFFFFu;
        lane_stop(ctl, w->status, loc, w->err, pri);
        return;
      }
    }
    L->done++;
    u32 tag = TAG(r);
    if (tag == DP0 || tag == DP1) {
      // -C: the collapser prints a stuck DUP's expression as it finds it
      // (after its weak normal form, which this WNF took), so the device
      // leaves it too; normalizing it could also never end. It is claimed
      // all the same: the claim is what makes later uses of the slot O(1)
      // (WNF_STUCK), and -C programs build long stuck chains too.
      u32 slot = VAL(r);
      if (!lane_claim(seen, slot)) {
        return;
      }
      w->stuck = seen;
      if (a->shallow_inc) {
        return;
      }
      loc   = slot;
      own   = REGION_OF(w, slot);
      dpx   = 1;
      tries = 0;
      continue;
    }
    u32 base;
    u32 n    = lane_children(a, r, &base);
    u32 last = 0;
    u32 has  = 0;
    for (u32 i = 0; i < n; i++) {
      u32 k = base + i;
      if (lane_leaf(HEAP_LD(w, k))) {
        continue;
      }
      if (has) {   // children keep the entry's tries (kern.h, ENT_ESCALATE)
        lane_push(L, ENT_T(REGION_OF(w, last), last, tries));
      }
      last = k;
      has  = 1;
    }
    if (!has) {
      return;
    }
    loc   = last;
    own   = REGION_OF(w, last);
    dpx   = 0;
  }
}

// Ends the lane's pass: saves its arena and adds its counters.
FN void lane_end(THR Lane *L, DEV u32 *arena, u32 lane, DEV u32 *out_n,
                 DEV PassCtl *ctl) {
  WNF_WARP_STEP(&L->w, WARP_LANE_END);
  arena[2 * lane + 0] = L->w.next;
  arena[2 * lane + 1] = L->w.end;
  out_n[lane]         = L->cnt;
  if (L->w.itrs) GPU_ADD64(&ctl->itrs,   L->w.itrs);
  if (L->defers) GPU_ADD64(&ctl->defers, L->defers);
  if (L->pushes) GPU_ADD64(&ctl->pushes, L->pushes);
  if (L->done)   GPU_ADD64(&ctl->done,   L->done);
  if (L->again)  GPU_ADD64(&ctl->again,  L->again);
  if (L->local)  GPU_ADD64(&ctl->local,  L->local);
  if (L->oom)    GPU_ADD64(&ctl->oom,    L->oom);
}

#endif
