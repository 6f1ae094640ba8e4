// prim.c: the host primitives, which the WNF core hands to the CPU driver
// (WNF_HOST): %log, %nf and %gnf.
//
// %log(s) forces the string s (a list of #Chr{#n}) head first. Once the whole
// list is known it prints it, UTF-8 encoded, and a newline, and yields #Nil.
// A superposition met on the way splits the call: each side becomes a %log of
// the prefix already read followed by that side (the rest of the list cloned
// with the SUP's label); an erasure yields &{}; a ↑ moves above the call.
// This is HVM4's log_go_0/1/2 machine, with the prefix kept as host numbers.

#include <stdio.h>
#include <stdlib.h>
#include "eval.h"
#include "heap.h"
#include "names.h"
#include "gpu/gpu.h"

// Code points read so far.
typedef struct {
  u32 *buf;
  u32  len, cap;
} Codes;

static void codes_push(Codes *c, u32 x) {
  if (c->len == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 64;
    c->buf = realloc(c->buf, (size_t)c->cap * sizeof(u32));
    if (!c->buf) eval_die("out of memory in %log");
  }
  c->buf[c->len++] = x;
}

static void put_utf8(u32 c) {
  if (c < 0x80) {
    putchar((int)c);
  } else if (c < 0x800) {
    putchar((int)(0xC0 | (c >> 6)));
    putchar((int)(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    putchar((int)(0xE0 | (c >> 12)));
    putchar((int)(0x80 | ((c >> 6) & 0x3F)));
    putchar((int)(0x80 | (c & 0x3F)));
  } else {
    putchar((int)((0xF0 | (c >> 18)) & 0xFF));
    putchar((int)(0x80 | ((c >> 12) & 0x3F)));
    putchar((int)(0x80 | ((c >> 6) & 0x3F)));
    putchar((int)(0x80 | (c & 0x3F)));
  }
}

static Term ctr(Wnf *w, u32 nick, u32 ari, const Term *args) {
  if (ari == 0) return TERM(C00, nick, 0);
  u32 loc = eval_alloc(w, ari);
  for (u32 i = 0; i < ari; i++) HEAP[loc + i] = args[i];
  return TERM(C00 + ari, nick, loc);
}

static Term chr_con(Wnf *w, Term code, Term tail) {
  Term chr = ctr(w, NICK_CHR, 1, &code);
  Term ht[2] = { chr, tail };
  return ctr(w, NICK_CON, 2, ht);
}

// %log(prefix ++ rest)
static Term log_of(Wnf *w, const Codes *c, Term rest) {
  for (u32 i = c->len; i > 0; i--) {
    rest = chr_con(w, TERM(NUM, 0, c->buf[i - 1]), rest);
  }
  u32 loc = eval_alloc(w, 1);
  HEAP[loc] = rest;
  return TERM(PRI, PRIM_LOG, loc);
}

// The result when the list's cell, head or code is ↑x or &L{x,y}: x and y
// go back in place of the rest of the list (hole == 0), or, as HVM4 does for
// both the head and its code point, as #Chr{x} followed by `tail` (hole == 1).
static Term log_split(Wnf *w, const Codes *c, Term got, int hole, Term tail) {
  if (TAG(got) == INC) {
    u32  il  = VAL(got);
    Term x   = HEAP[il];
    Term rst = hole ? chr_con(w, x, tail) : x;
    HEAP[il] = log_of(w, c, rst);
    return TERM(INC, 0, il);
  }
  u32  lab = EXT(got);
  Term x   = HEAP[VAL(got) + 0];
  Term y   = HEAP[VAL(got) + 1];
  Term r0  = x, r1 = y;
  if (hole) {
    u32 tl = eval_alloc(w, 1);
    HEAP[tl] = tail;
    r0 = chr_con(w, x, TERM(DP0, lab, tl));
    r1 = chr_con(w, y, TERM(DP1, lab, tl));
  }
  u32 s = eval_alloc(w, 2);
  HEAP[s + 0] = log_of(w, c, r0);
  HEAP[s + 1] = log_of(w, c, r1);
  return TERM(SUP, lab, s);
}

static Term prim_log(Wnf *w, Term pri) {
  Codes c    = {0};
  Term  list = HEAP[VAL(pri)];
  Term  res;
  for (;;) {
    list = eval_wnf(w, list);
    u32 tag = TAG(list);
    if (tag == ERA) { res = list; break; }
    if (tag == INC || tag == SUP) { res = log_split(w, &c, list, 0, 0); break; }
    if (tag == C00 && EXT(list) == NICK_NIL) {
      for (u32 i = 0; i < c.len; i++) put_utf8(c.buf[i]);
      putchar('\n');
      res = TERM(C00, NICK_NIL, 0);
      break;
    }
    if (!(tag == C00 + 2 && EXT(list) == NICK_CON)) {
      eval_die("%log expected a string list");
    }
    Term head = eval_wnf(w, HEAP[VAL(list) + 0]);
    Term tail = HEAP[VAL(list) + 1];
    u32  ht   = TAG(head);
    if (ht == ERA) { res = head; break; }
    if (ht == INC || ht == SUP) { res = log_split(w, &c, head, 1, tail); break; }
    if (!(ht == C00 + 1 && EXT(head) == NICK_CHR)) {
      eval_die("%log expected #Chr head");
    }
    Term code = eval_wnf(w, HEAP[VAL(head)]);
    u32  ct   = TAG(code);
    if (ct == ERA) { res = code; break; }
    if (ct == INC || ct == SUP) { res = log_split(w, &c, code, 1, tail); break; }
    if (ct != NUM) {
      eval_die("%log expected a numeric codepoint");
    }
    codes_push(&c, VAL(code));
    list = tail;
  }
  free(c.buf);
  return res;
}

// Strong normal form of `t` in a fresh slot, on the CPU or on the device.
// The device needs the heap to itself (a device run copies the heap back
// when it ends), so a %gnf met while the -T pool is reducing is normalized
// by the pool instead: the same result, on the CPU.
static Term prim_nf(Wnf *w, Term pri, int dev) {
  u32 slot = eval_alloc(w, 1);
  HEAP[slot] = HEAP[VAL(pri)];
  if (dev && !snf_pool_busy()) gpu_snf_at(slot);
  else                         eval_snf_at(slot);
  return HEAP[slot];
}

Term prim_host(Wnf *w, Term pri) {
  switch (EXT(pri)) {
    case PRIM_LOG: return prim_log(w, pri);
    case PRIM_NF:  return prim_nf(w, pri, 0);
    case PRIM_GNF: return prim_nf(w, pri, 1);
    default: {
      const char *name = prim_name(EXT(pri));
      char msg[128];
      snprintf(msg, sizeof msg, "unknown primitive '%%%s'", name ? name : "?");
      eval_die(msg);
      return 0;
    }
  }
}
