// prim.c: the host primitives, which the WNF core hands to the CPU driver
// (WNF_HOST): %log, %nf, %gnf, %compact here, the I/O ones in prim_io.c,
// and the reading of string arguments they share (prim_in.h).
//
// A string argument is forced head first. The prefix read so far is kept
// as a heap function acc = λt.(#Con{#Chr{#n}, ..t}), as HVM4 keeps it, so
// that the interaction counts equal HVM4's: the string is finally read by
// applying acc to #Nil (one APP-LAM per character, plus one), and a
// superposition met on the way splits the call, each side the primitive
// on a clone of acc applied to that side (the rest of the list cloned with
// the SUP's label); an erasure yields &{}; a ↑ moves above the call.

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "run/prim.h"
#include "run/prim_in.h"
#include "run/effects.h"
#include "run/ffi.h"
#include "run/journal.h"
#include "run/sched.h"
#include "cpu/eval.h"
#include "cpu/snf.h"
#include "heap/heap.h"
#include "lang/names.h"
#include "lang/parse.h"
#include "lang/print.h"
#include "heap/rt.h"

// Terms
// =====

// Found or added: a result's constructor may be one the program never
// spells.
u32 prim_ctr_id(const char *name) {
  u32 id = ctr_id(name, (u32)strlen(name));
  if (id == ~0u) eval_die("the constructor name table is full");
  return id;
}

Term prim_ctr(Wnf *w, u32 id, u32 ari, const Term *args) {
  if (ari == 0) return TERM(C00, id, 0);
  u32 loc = eval_alloc(w, ari);
  for (u32 i = 0; i < ari; i++) RT->heap.at[loc + i] = args[i];
  return TERM(C00 + ari, id, loc);
}

Term prim_ctr1(Wnf *w, u32 id, Term arg) {
  return prim_ctr(w, id, 1, &arg);
}

static Term chr_con(Wnf *w, Term code, Term tail) {
  Term ht[2] = { prim_ctr1(w, CTR_CHR, code), tail };
  return prim_ctr(w, CTR_CON, 2, ht);
}

// Decodes one UTF-8 sequence at s[*i]: the code point, or ~0u for a byte
// that starts no valid sequence (overlong, surrogate, past U+10FFFF or cut
// short), *i moved past what was read.
static u32 utf8_next(const u8 *s, size_t n, size_t *i) {
  u8  b = s[*i];
  u32 need, cp, min;
  if (b < 0x80) { *i += 1; return b; }
  if ((b & 0xE0) == 0xC0)      { need = 1; cp = b & 0x1F; min = 0x80; }
  else if ((b & 0xF0) == 0xE0) { need = 2; cp = b & 0x0F; min = 0x800; }
  else if ((b & 0xF8) == 0xF0) { need = 3; cp = b & 0x07; min = 0x10000; }
  else { *i += 1; return ~0u; }
  if (*i + need >= n) { *i += 1; return ~0u; }
  for (u32 k = 1; k <= need; k++) {
    u8 c = s[*i + k];
    if ((c & 0xC0) != 0x80) { *i += 1; return ~0u; }
    cp = (cp << 6) | (c & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) { *i += 1; return ~0u; }
  *i += need + 1;
  return cp;
}

// The list is built from its end, so each cell is written once.
Term prim_string(Wnf *w, const char *s, size_t n) {
  u32   *cps = malloc((n + 1) * sizeof *cps);
  size_t k   = 0;
  if (!cps) eval_die("out of memory reading a string");
  for (size_t i = 0; i < n;) {
    u32 cp = utf8_next((const u8 *)s, n, &i);
    cps[k++] = cp == ~0u ? 0xFFFD : cp;   // HVM4 replaces a bad byte so
  }
  Term list = TERM(C00, CTR_NIL, 0);
  while (k > 0) list = chr_con(w, TERM(NUM, 0, cps[--k]), list);
  free(cps);
  return list;
}

Term prim_ok(Wnf *w, Term t) {
  return prim_ctr1(w, CTR_OK, t);
}

Term prim_ok_nil(Wnf *w) {
  return prim_ok(w, TERM(C00, CTR_NIL, 0));
}

static Term vstringf(Wnf *w, const char *fmt, va_list ap) {
  char msg[1024 + 256];
  int  n = vsnprintf(msg, sizeof msg, fmt, ap);
  if (n < 0) n = 0;
  if ((size_t)n >= sizeof msg) n = (int)sizeof msg - 1;
  return prim_string(w, msg, (size_t)n);
}

Term prim_stringf(Wnf *w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  Term s = vstringf(w, fmt, ap);
  va_end(ap);
  return s;
}

Term prim_err(Wnf *w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  Term s = vstringf(w, fmt, ap);
  va_end(ap);
  return prim_ctr1(w, CTR_ERR, s);
}

char *prim_utf8(const u32 *codes, u32 len, u32 *bad, size_t *bytes) {
  char *s = malloc((size_t)len * 4 + 1);
  u32   n = 0;
  if (!s) eval_die("out of memory reading a string");
  for (u32 i = 0; i < len; i++) {
    u32 c = codes[i];
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
      free(s);
      *bad = i;
      return NULL;
    }
    n += utf8_encode(c, s + n);
  }
  s[n] = 0;
  if (bytes) *bytes = n;
  return s;
}

// String arguments
// ================

static Term app(Wnf *w, Term f, Term x) {
  u32 loc = eval_alloc(w, 2);
  RT->heap.at[loc + 0] = f;
  RT->heap.at[loc + 1] = x;
  return TERM(APP, 0, loc);
}

// λt.(acc #Con{#Chr{code}, t})
static Term acc_cons(Wnf *w, Term acc, Term code) {
  u32 lam = eval_alloc(w, 1);
  RT->heap.at[lam] = app(w, acc, chr_con(w, code, TERM(VAR, 0, lam)));
  return TERM(LAM, 0, lam);
}

// ! K &lab = t: writes the two copies to k.
static void clone(Wnf *w, u32 lab, Term t, Term k[2]) {
  u32 loc = eval_alloc(w, 1);
  RT->heap.at[loc] = t;
  k[0] = TERM(DP0, lab, loc);
  k[1] = TERM(DP1, lab, loc);
}

// pri's primitive again, with argument `arg` replaced by x and the other
// argument (if any) by `other`.
static Term call_again(Wnf *w, Term pri, u32 arg, Term x, Term other) {
  u32 id  = EXT(pri);
  u32 ari = PRIM_ARITY(id);
  u32 loc = eval_alloc(w, ari);
  for (u32 i = 0; i < ari; i++) RT->heap.at[loc + i] = i == arg ? x : other;
  return TERM(PRI, id, loc);
}

// The result when the list's cell, head or code is ↑x or &L{x,y}: the
// call on acc applied to x (and y), which go back in place of the rest of
// the list (hole == 0), or, as HVM4 does for both the head and its code
// point, as #Chr{x} followed by `tail` (hole == 1). Without acc (0), the
// call on x and y themselves: an argument that is not a string.
static Term str_split(Wnf *w, Term pri, u32 arg, Term acc, Term got, int hole, Term tail) {
  u32  ari   = PRIM_ARITY(EXT(pri));
  Term other = ari > 1 ? RT->heap.at[VAL(pri) + (1 - arg)] : 0;
  if (TAG(got) == INC) {
    u32  il  = VAL(got);
    Term x   = RT->heap.at[il];
    Term rst = hole ? chr_con(w, x, tail) : x;
    RT->heap.at[il] = call_again(w, pri, arg, acc ? app(w, acc, rst) : rst, other);
    return TERM(INC, 0, il);
  }
  u32  lab = EXT(got);
  Term x   = RT->heap.at[VAL(got) + 0];
  Term y   = RT->heap.at[VAL(got) + 1];
  Term a[2] = { 0, 0 }, o[2] = { 0, 0 };
  if (acc) clone(w, lab, acc, a);
  if (ari > 1) clone(w, lab, other, o);
  Term r0  = x, r1 = y;
  if (hole) {
    Term t[2];
    clone(w, lab, tail, t);
    r0 = chr_con(w, x, t[0]);
    r1 = chr_con(w, y, t[1]);
  }
  u32 s = eval_alloc(w, 2);
  RT->heap.at[s + 0] = call_again(w, pri, arg, acc ? app(w, a[0], r0) : r0, o[0]);
  RT->heap.at[s + 1] = call_again(w, pri, arg, acc ? app(w, a[1], r1) : r1, o[1]);
  return TERM(SUP, lab, s);
}

int prim_lift(Wnf *w, Term pri, u32 arg, Term *val, Term *out) {
  Term v = eval_wnf(w, RT->heap.at[VAL(pri) + arg]);
  // kept, so that lifting the other argument clones this value, not the
  // work (and the effects) that made it
  RT->heap.at[VAL(pri) + arg] = v;
  *val = v;
  if (TAG(v) == ERA) {
    *out = v;
    return 1;
  }
  if (TAG(v) != INC && TAG(v) != SUP) return 0;
  *out = str_split(w, pri, arg, 0, v, 0, 0);
  return 1;
}

// The code points of the string (acc #Nil), which holds only known
// characters.
static u32 *str_codes(Wnf *w, Term acc, u32 *len) {
  u32  cap = 64, n = 0;
  u32 *cps = malloc(cap * sizeof *cps);
  Term cur = eval_wnf(w, app(w, acc, TERM(C00, CTR_NIL, 0)));
  while (cps && TAG(cur) == C00 + 2 && EXT(cur) == CTR_CON) {
    Term head = eval_wnf(w, RT->heap.at[VAL(cur) + 0]);
    Term code = eval_wnf(w, RT->heap.at[VAL(head)]);
    if (n == cap) {
      u32 *more = realloc(cps, (cap *= 2) * sizeof *cps);
      if (!more) free(cps);
      cps = more;
      if (!cps) break;
    }
    cps[n++] = VAL(code);
    cur = eval_wnf(w, RT->heap.at[VAL(cur) + 1]);
  }
  if (!cps) eval_die("out of memory reading a string");
  *len = n;
  return cps;
}

StrRead prim_str_arg(Wnf *w, Term pri, u32 arg, u32 **codes, u32 *len, Term *out) {
  u32  id   = eval_alloc(w, 1);
  Term acc  = TERM(LAM, 0, id);   // λt.t
  Term list = RT->heap.at[VAL(pri) + arg];
  RT->heap.at[id]  = TERM(VAR, 0, id);
  for (;;) {
    list = eval_wnf(w, list);
    u32 tag = TAG(list);
    if (tag == ERA) { *out = list; return STR_LIFTED; }
    if (tag == INC || tag == SUP) {
      *out = str_split(w, pri, arg, acc, list, 0, 0);
      return STR_LIFTED;
    }
    if (tag == C00 && EXT(list) == CTR_NIL) {
      *codes = str_codes(w, acc, len);
      return STR_DONE;
    }
    if (!(tag == C00 + 2 && EXT(list) == CTR_CON)) { *len = 0; return STR_SHAPE; }
    Term head = eval_wnf(w, RT->heap.at[VAL(list) + 0]);
    Term tail = RT->heap.at[VAL(list) + 1];
    u32  ht   = TAG(head);
    if (ht == ERA) { *out = head; return STR_LIFTED; }
    if (ht == INC || ht == SUP) {
      *out = str_split(w, pri, arg, acc, head, 1, tail);
      return STR_LIFTED;
    }
    if (!(ht == C00 + 1 && EXT(head) == CTR_CHR)) { *len = 1; return STR_SHAPE; }
    Term code = eval_wnf(w, RT->heap.at[VAL(head)]);
    u32  ct   = TAG(code);
    if (ct == ERA) { *out = code; return STR_LIFTED; }
    if (ct == INC || ct == SUP) {
      *out = str_split(w, pri, arg, acc, code, 1, tail);
      return STR_LIFTED;
    }
    if (ct != NUM) { *len = 2; return STR_SHAPE; }
    acc  = acc_cons(w, acc, code);
    list = tail;
  }
}

// Strings that are fields, and as UTF-8
// =====================================

// The code points of `list`, without lifting: STR_DONE, or STR_SHAPE with
// the place that broke it in *len (as prim_str_arg).
static StrRead str_codes_of(Wnf *w, Term list, u32 **codes, u32 *len) {
  u32  cap = 16, n = 0;
  u32 *cps = malloc(cap * sizeof *cps);
  if (!cps) eval_die("out of memory reading a string");
  for (;;) {
    list = eval_wnf(w, list);
    if (TAG(list) == C00 && EXT(list) == CTR_NIL) break;
    *len = 0;
    if (TAG(list) == C00 + 2 && EXT(list) == CTR_CON) {
      Term head = eval_wnf(w, RT->heap.at[VAL(list) + 0]);
      *len = 1;
      if (TAG(head) == C00 + 1 && EXT(head) == CTR_CHR) {
        Term code = eval_wnf(w, RT->heap.at[VAL(head)]);
        *len = 2;
        if (TAG(code) == NUM) {
          if (n == cap) {
            u32 *more = realloc(cps, (cap *= 2) * sizeof *cps);
            if (!more) eval_die("out of memory reading a string");
            cps = more;
          }
          cps[n++] = VAL(code);
          list = RT->heap.at[VAL(list) + 1];
          continue;
        }
      }
    }
    free(cps);
    return STR_SHAPE;
  }
  *codes = cps;
  *len   = n;
  return STR_DONE;
}

int prim_str_utf8(Wnf *w, StrRead r, const char *prim, const char *what, u32 *codes, u32 len,
                  char **s, size_t *n, Term *out) {
  u32 bad;
  if (r != STR_DONE) {
    *out = prim_err(w, "ERROR(%s): invalid `%s`; expected #NIL or #CON(#CHR{NUM}, tail)",
                    prim, what);
    return 0;
  }
  // A C string ends at its first NUL: one inside would cut the path,
  // name or command short, and the call would act on another one.
  for (u32 i = 0; !n && i < len; i++) {
    if (codes[i] == 0) {
      *out = prim_err(w, "ERROR(%s): E%u invalid `%s`; a NUL character at index %u",
                      prim, E_BAD_ARG, what, i);
      free(codes);
      return 0;
    }
  }
  *s = prim_utf8(codes, len, &bad, n);
  if (!*s) {
    *out = prim_err(w, "ERROR(%s): invalid UTF-32 codepoint U+%08X at `%s` index %u",
                    prim, codes[bad], what, bad);
  }
  free(codes);
  return *s != NULL;
}

int prim_str_field(Wnf *w, Term str, const char *prim, const char *what, char **s, size_t *n,
                   Term *out) {
  u32    *codes = NULL, len;
  StrRead r     = str_codes_of(w, str, &codes, &len);
  return prim_str_utf8(w, r, prim, what, codes, len, s, n, out);
}

// Bytes
// =====

BytesRead prim_bytes_arg(Wnf *w, Term list, size_t max, u8 **buf, size_t *n, u32 *bad) {
  u32    byt = CTR_BYT;
  size_t cap = 0, len = 0;
  u8    *out = NULL;
  BytesRead r = BYTES_DONE;
  for (;;) {
    list = eval_wnf(w, list);
    if (TAG(list) == C00 && EXT(list) == CTR_NIL) break;
    r = BYTES_SHAPE;
    if (!(TAG(list) == C00 + 2 && EXT(list) == CTR_CON)) break;
    Term head = eval_wnf(w, RT->heap.at[VAL(list)]);
    if (!(TAG(head) == C00 + 1 && EXT(head) == byt)) break;
    Term b = eval_wnf(w, RT->heap.at[VAL(head)]);
    r = BYTES_NUM;
    if (TAG(b) != NUM) break;
    r = BYTES_RANGE;
    if (VAL(b) > 0xFF) {
      *bad = VAL(b);
      break;
    }
    r = BYTES_LONG;
    if (len == max) break;
    if (len == cap) {
      u8 *more = realloc(out, cap = cap ? cap * 2 : 256);
      if (!more) eval_die("out of memory reading bytes");
      out = more;
    }
    out[len++] = (u8)VAL(b);
    list = RT->heap.at[VAL(list) + 1];
    r = BYTES_DONE;
  }
  *n = len;
  if (r != BYTES_DONE) {
    free(out);
    return r;
  }
  *buf = out;
  return r;
}

// Built from the end, so each cell is written once.
Term prim_bytes_list(Wnf *w, const u8 *buf, size_t n) {
  u32  byt  = CTR_BYT;
  Term list = TERM(C00, CTR_NIL, 0);
  for (size_t i = n; i > 0; i--) {
    Term ht[2] = { prim_ctr1(w, byt, TERM(NUM, 0, buf[i - 1])), list };
    list = prim_ctr(w, CTR_CON, 2, ht);
  }
  return list;
}

// %log and %panic
// ===============

static Term prim_log(Wnf *w, Term pri) {
  static const char *SHAPE[3] = {
    "%log expected a string list", "%log expected #Chr head",
    "%log expected a numeric codepoint",
  };
  u32 *codes, len;
  Term out;
  switch (prim_str_arg(w, pri, 0, &codes, &len, &out)) {
    case STR_LIFTED: return out;
    case STR_SHAPE:  eval_die(SHAPE[len]); return 0;
    case STR_DONE:   break;
  }
  if (journal_effect(w, pri, journal_hash(JOURNAL_SEED, codes, (size_t)len * sizeof *codes), &out)) {
    free(codes);
    return out;
  }
  EffectLine line = {0};   // written whole: no other thread's line inside it
  for (u32 i = 0; i < len; i++) {
    char b[4];
    effect_line_put(&line, b, utf8_encode(codes[i], b));
  }
  effect_line_write(&line);
  free(codes);
  return TERM(C00, CTR_NIL, 0);
}

// %panic(s): s printed as %log prints it, then the run ends (exit 1) with
// nothing printed after it. Its string is lifted over SUP/INC/ERA as any
// string argument, so the panic happens where that branch is reduced.
static Term prim_panic(Wnf *w, Term pri) {
  u32 *codes, len;
  Term out;
  switch (prim_str_arg(w, pri, 0, &codes, &len, &out)) {
    case STR_LIFTED: return out;
    case STR_SHAPE:  eval_die("%panic expected a string"); return 0;
    case STR_DONE:   break;
  }
  char  *msg = malloc((size_t)len * 4 + 1);
  size_t n   = 0;
  if (!msg) eval_die("out of memory reading a string");
  for (u32 i = 0; i < len; i++) n += utf8_encode(codes[i], msg + n);
  msg[n] = 0;
  free(codes);
  eval_panic(msg);
  return 0;
}

// %nf, %gnf, %compact
// ===================

// Nested host primitives recurse on the C stack: a primitive reads its
// arguments through WNF, which may meet another primitive (%log(@f(n)),
// %nf(%nf(..)), a library's call inside another's). Past the thread's
// stack, less a margin for one more level, a runtime error instead of a
// crash (millions of nested levels overflowed it; tests/run.sh, cli
// nf_nested_deep, prim_nested_deep).
// Per thread: the floor of this thread's own stack (0: not measured yet;
// 1: unknown, no check).
static _Thread_local uintptr_t PRIM_STACK_LO = 0;

static void prim_stack_check(Term pri) {
  char here;
  if (PRIM_STACK_LO == 0) {
    PRIM_STACK_LO = stack_floor((uintptr_t)1 << 20);
    if (PRIM_STACK_LO == 0) PRIM_STACK_LO = 1;
  }
  if ((uintptr_t)&here < PRIM_STACK_LO) {
    const char *name = prim_name(EXT(pri));
    char msg[160];
    snprintf(msg, sizeof msg, "%%%s nested too deeply (out of stack)", name ? name : "?");
    eval_die(msg);
  }
}

// Strong normal form of `t` in a fresh slot: %nf (and %compact) on the
// CPU, %gnf where the scheduler puts it. %compact is HVM4's normal form
// copied out of its nursery; this heap has no nursery to reclaim, so the
// normal form itself is the result.
static Term prim_nf(Wnf *w, Term pri, int dev) {
  u32 slot = eval_alloc(w, 1);
  RT->heap.at[slot] = RT->heap.at[VAL(pri)];
  if (dev) {
    sched_gnf(slot);
  } else {
    sched_nf(slot);
  }
  return RT->heap.at[slot];
}

// Dispatch
// ========

int prim_effects_used(void) {
  if (ffi_count() > 0) return 1;   // a library's primitive may do anything
  for (u32 id = 0; id < PRIM_OP; id++) {
    if (id != PRIM_NF && id != PRIM_GNF && id != PRIM_COMPACT && parse_used(id)) return 1;
  }
  return 0;
}

Term prim_host(Wnf *w, Term pri) {
  // one host step: -D's budget of one interaction must not cut it short
  u64  budget = w->budget;
  Term r;
  w->budget = ~0ull;
  prim_stack_check(pri);
  journal_call();
  if (PRIM_IS_FFI(EXT(pri))) {   // a library's (run/ffi.c), a built-in's name included
    r = ffi_call(w, pri);
    w->budget = budget;
    return journal_result(r);
  }
  switch (EXT(pri)) {
    case PRIM_LOG:     r = prim_log(w, pri); break;
    case PRIM_PANIC:   r = prim_panic(w, pri); break;
    case PRIM_NF:
    case PRIM_COMPACT: w->budget = budget; return prim_nf(w, pri, 0);
    case PRIM_GNF:     w->budget = budget; return prim_nf(w, pri, 1);
    default: {
      if (EXT(pri) < PRIM_OP) {
        r = prim_io(w, pri);
        break;
      }
      const char *name = prim_name(EXT(pri));
      char msg[128];
      snprintf(msg, sizeof msg, "unknown primitive '%%%s'", name ? name : "?");
      eval_die(msg);
      return 0;
    }
  }
  w->budget = budget;
  return journal_result(r);
}
