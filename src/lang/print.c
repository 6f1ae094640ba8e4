// print.c: an explicit-stack printer for linked and quoted terms.
//
// Work items are popped and printed in order; a node prints its opening
// text at once and pushes the rest (children, separators) in reverse.
// Lists and match chains push one "rest" item at a time, so the stack
// grows with nesting depth only, never with length.

#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include "heap/heap.h"
#include "lang/names.h"
#include "lang/print.h"
#include "heap/rt.h"
#include "lang/lang_rt.h"

enum {
  I_TERM,    // print t at depth
  I_STR,     // print s
  I_ELEMS,   // list elements from cons cell t (first: no comma)
  I_ELEMS1,  // list elements from cons cell t, comma first
  I_CASES,   // match/switch cases from t (not the first)
  I_CONS,    // improper list from cons cell t: head<>rest
};

typedef struct PrintItem {
  u8          kind;
  u32         depth;
  Term        t;
  const char *s;
} Item;

typedef struct PrintDup { u32 loc, lab, name; } Dup;

// Output. run() holds the stream's lock for a whole term and writes with
// putc_unlocked: stdio's own calls lock the stream each time once the pool's
// threads exist, which made printing most of a large result's time.
static void out_c(int c, FILE *f) {
  putc_unlocked(c, f);
}

static void out_s(const char *s, FILE *f) {
  while (*s) putc_unlocked(*s++, f);
}

static void out_u(u32 n, FILE *f) {
  char b[10];
  u32  i = 0;
  do {
    b[i++] = (char)('0' + n % 10);
    n /= 10;
  } while (n);
  while (i) putc_unlocked(b[--i], f);
}


static void push(Printer *p, u8 kind, Term t, u32 depth, const char *s) {
  if (p->stk_len == p->stk_cap) {
    u32   cap = p->stk_cap ? p->stk_cap * 2 : 1024;
    Item *n   = realloc(p->stk, (size_t)cap * sizeof(Item));
    if (!n) { p->failed = 1; return; }
    p->stk = n;
    p->stk_cap = cap;
  }
  p->stk[p->stk_len++] = (Item){kind, depth, t, s};
}

static void push_t(Printer *p, Term t, u32 d)  { push(p, I_TERM, t, d, NULL); }
static void push_s(Printer *p, const char *s)  { push(p, I_STR, 0, 0, s); }

// Name maps
// =========

static u32 *map_slot(u32 *m, u32 cap, u32 key) {
  u32 i = (key * 2654435761u) & (cap - 1);
  while (m[2 * i] && m[2 * i] != key) i = (i + 1) & (cap - 1);
  return &m[2 * i];
}

// Finds key (loc + 1) in map; adds it with value `val` if absent. Returns
// the value, or 0 when out of memory.
static u32 map_get(Printer *p, u32 **m, u32 *cap, u32 *len, u32 key, u32 val) {
  if ((*len + 1) * 2 > *cap) {
    u32  nc = *cap ? *cap * 2 : 1024;
    u32 *nm = calloc((size_t)nc * 2, sizeof(u32));
    if (!nm) { p->failed = 1; return 0; }
    for (u32 i = 0; i < *cap; i++) {
      if ((*m)[2 * i]) {
        u32 *s = map_slot(nm, nc, (*m)[2 * i]);
        s[0] = (*m)[2 * i];
        s[1] = (*m)[2 * i + 1];
      }
    }
    free(*m);
    *m = nm;
    *cap = nc;
  }
  u32 *s = map_slot(*m, *cap, key);
  if (!s[0]) { s[0] = key; s[1] = val; (*len)++; }
  return s[1];
}

// The name of the LAM at loc: the one it already has, else `name`.
static u32 lam_name_or(Printer *p, u32 loc, u32 name) {
  return map_get(p, &p->lams, &p->lams_cap, &p->lams_len, loc + 1, name);
}

static u32 lam_name(Printer *p, u32 loc) {
  return lam_name_or(p, loc, p->lams_len + 1);
}

// A name the runtime made (EQL-LAM's, val: the location that makes it
// unique) prints as the nth fresh name of the term, n counted in the
// order they are printed, spelled as HVM4 spells its nth fresh name; so
// the spelling does not depend on where a backend allocated (the CPU and
// the device print the same term the same way).
static u32 nam_fresh(Printer *p, u32 val) {
  return map_get(p, &p->nams, &p->nams_cap, &p->nams_len, val + 1, p->nams_len + 1);
}

static u32 dup_name(Printer *p, u32 loc, u32 lab) {
  u32 idx = map_get(p, &p->dupm, &p->dupm_cap, &p->dupm_len, loc + 1, p->dups_len + 1);
  if (idx == p->dups_len + 1) {
    if (p->dups_len == p->dups_cap) {
      u32  cap = p->dups_cap ? p->dups_cap * 2 : 256;
      Dup *n   = realloc(p->dups, (size_t)cap * sizeof(Dup));
      if (!n) { p->failed = 1; return 0; }
      p->dups = n;
      p->dups_cap = cap;
    }
    p->dups[p->dups_len] = (Dup){loc, lab, p->dups_len + 1};
    p->dups_len++;
  }
  return idx;
}

// Text pieces
// ===========

// Binder number n as a name in bijective base 26 over base..base+25: with
// base 'a', the 26 one-letter names come first, then the 676 two-letter
// ones, and so on. 0, a binder out of scope, is `_`.
static void print_alpha(FILE *f, u32 n, char base) {
  if (n == 0) {
    out_c('_', f);
    return;
  }
  u64 first = 1, count = 26;   // names of `len` letters: first .. first+count-1
  u32 len   = 1;
  while (n >= first + count) {
    first += count;
    count *= 26;
    len++;
  }
  u64 rank = n - first;
  for (u64 w = count / 26; len > 0; len--, w /= 26) out_c(base + (char)(rank / w % 26), f);
}

// `!A&L=`, the opening of dup binding number n under label lab.
static void dup_open(FILE *f, u32 n, u32 lab) {
  out_c('!', f);
  print_alpha(f, n, 'A');
  out_c('&', f);
  nick_print(f, lab);
  out_c('=', f);
}

u32 utf8_encode(u32 c, char b[4]) {
  static const u8 lead[5] = {0, 0, 0xC0, 0xE0, 0xF0};
  if (c < 0x80) {
    b[0] = (char)c;
    return 1;
  }
  u32 n = c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  for (u32 i = n - 1; i > 0; i--, c >>= 6) b[i] = (char)(0x80 | (c & 0x3F));
  b[0] = (char)(lead[n] | c);
  return n;
}

// A code point as UTF-8, unescaped.
static void print_utf8(FILE *f, u32 c) {
  char b[4];
  u32  n = utf8_encode(c, b);
  for (u32 i = 0; i < n; i++) out_c((u8)b[i], f);
}

// Can code point c appear in a char (quote '\'') or string (quote '"')?
static int can_esc(u32 c, char quote) {
  if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  if (c == '\n' || c == '\t' || c == '\r' || c == 0 || c == '\\') return 1;
  if (c == (u32)quote) return 1;
  return !(c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F));
}

static void print_esc(FILE *f, u32 c, char quote) {
  switch (c) {
    case '\n': out_s("\\n", f);  return;
    case '\t': out_s("\\t", f);  return;
    case '\r': out_s("\\r", f);  return;
    case 0:    out_s("\\0", f);  return;
    case '\\': out_s("\\\\", f); return;
  }
  if (c == (u32)quote) { out_c('\\', f); out_c(quote, f); return; }
  print_utf8(f, c);
}

// RT->heap.at[loc], once no thread holds it: under -T -C, threads collapsing
// ahead take the DUP slots this branch shares BUSY for a moment.
static Term word(u32 loc) {
  Term t;
  while ((t = __atomic_load_n(&RT->heap.at[loc], __ATOMIC_ACQUIRE)) == BUSY) sched_yield();
  return t;
}

static Term at(u32 loc) { return NO_SUB(word(loc)); }

static int is_ctr(Term t, u32 ar, u32 id) {
  return TAG(t) == C00 + ar && EXT(t) == id;
}

static int is_chr(Term h, char quote) {
  return is_ctr(h, 1, CTR_CHR) && TAG(at(VAL(h))) == NUM && can_esc(VAL(at(VAL(h))), quote);
}

// A constructor's name, from its table; an id no name was given (a library
// of primitives may build one) prints as a nick.
static void ctr_print(FILE *f, u32 id) {
  const char *n = ctr_name(id);
  if (n) out_s(n, f);
  else   nick_print(f, id);
}

// A case's key: a number for SWI; for MAT the builtin constructors in their
// sugar (0n, 1n+, [], <>), any other as #Name.
static void print_key(FILE *f, Term cas) {
  if (TAG(cas) == SWI) {
    out_u(EXT(cas), f);
    return;
  }
  const u32   key[4] = {CTR_ZER, CTR_SUC, CTR_NIL, CTR_CON};
  const char *text[4] = {"0n", "1n+", "[]", "<>"};
  for (u32 i = 0; i < 4; i++) {
    if (EXT(cas) == key[i]) {
      out_s(text[i], f);
      return;
    }
  }
  out_c('#', f);
  ctr_print(f, EXT(cas));
}

// Pushes "a0,a1,..,an-1" then `close` for the n words at loc.
static void push_args(Printer *p, u32 loc, u32 n, u32 d, const char *close) {
  push_s(p, close);
  for (u32 i = n; i > 0; i--) {
    push_t(p, at(loc + i - 1), d);
    if (i > 1) push_s(p, ",");
  }
}

// Constructors, with the nat, char, string and list sugar.
static void print_ctr(Printer *p, FILE *f, Term t, u32 d) {
  u32 id = EXT(t), loc = VAL(t), ar = CTR_ARITY(TAG(t));
  if (is_ctr(t, 0, CTR_ZER) || is_ctr(t, 1, CTR_SUC)) {
    u32 n = 0;
    while (is_ctr(t, 1, CTR_SUC)) { n++; t = at(VAL(t)); }
    out_u(n, f);
    out_c('n', f);
    if (!is_ctr(t, 0, CTR_ZER)) { out_c('+', f); push_t(p, t, d); }
    return;
  }
  if (is_chr(t, '\'')) {
    out_c('\'', f);
    print_esc(f, VAL(at(loc)), '\'');
    out_c('\'', f);
    return;
  }
  if (id == CTR_NIL || id == CTR_CON) {
    Term end = t;
    int  str = id == CTR_CON;
    while (is_ctr(end, 2, CTR_CON)) {
      if (str && !is_chr(at(VAL(end)), '"')) str = 0;
      end = at(VAL(end) + 1);
    }
    if (is_ctr(end, 0, CTR_NIL)) {
      if (str) {
        out_c('"', f);
        for (Term x = t; is_ctr(x, 2, CTR_CON); x = at(VAL(x) + 1)) {
          print_esc(f, VAL(at(VAL(at(VAL(x))))), '"');
        }
        out_c('"', f);
        return;
      }
      out_c('[', f);
      push_s(p, "]");
      if (id == CTR_CON) push(p, I_ELEMS, t, d, NULL);
      return;
    }
    if (is_ctr(t, 2, CTR_CON)) {   // improper: h<>h<>..<>tail
      push(p, I_CONS, t, d, NULL);
      return;
    }
  }
  out_c('#', f);
  ctr_print(f, id);
  out_c('{', f);
  push_args(p, loc, ar, d, "}");
}

// Match/switch cases from t: "case:hit" items then the tail.
static void print_cases(Printer *p, FILE *f, Term t, u32 d) {
  u32 loc = VAL(t);
  print_key(f, t);
  out_c(':', f);
  Term next = at(loc + 1);
  u32  nt   = TAG(next);
  if (nt == MAT || nt == SWI) {
    push(p, I_CASES, next, d, NULL);
    push_s(p, ";");
  } else if (nt == NUM && VAL(next) == 0) {
    // no default
  } else if (nt == USE) {
    push_t(p, at(VAL(next)), d);
    push_s(p, ";");
  } else {
    push_t(p, next, d);
    push_s(p, ";");
  }
  push_t(p, at(loc), d);
}

// An application spine of APP and DRY nodes as f(a,b,..), a lambda head in
// parentheses. At most SPINE arguments share one pair of parentheses (the
// rest print as (..)(..), as HVM4 does). Walking down from the outermost
// node meets the arguments last first, the order the stack wants them.
#define SPINE 256
static void print_app(Printer *p, FILE *f, Term t, u32 d) {
  push_s(p, ")");
  for (u32 n = 0; (TAG(t) == APP || TAG(t) == DRY) && n < SPINE; n++) {
    if (n > 0) push_s(p, ",");
    push_t(p, at(VAL(t) + 1), d);
    t = at(VAL(t));
  }
  if (TAG(t) == LAM) out_c('(', f);
  push_s(p, TAG(t) == LAM ? ")(" : "(");
  push_t(p, t, d);
}

static void print_one(Printer *p, FILE *f, Term t, u32 d) {
  t = NO_SUB(t);
  u32 tg = TAG(t), loc = VAL(t);
  if (IS_CTR(tg)) { print_ctr(p, f, t, d); return; }
  switch (tg) {
    case VAR: {
      if (loc && IS_SUB(word(loc))) { push_t(p, at(loc), d); return; }
      print_alpha(f, lam_name(p, loc), 'a');
      return;
    }
    case DP0: case DP1: {
      // A runtime dup (LAB_OWN) stands for a term HVM4 shares as it is: the
      // term prints at each use, as there.
      if (loc && (IS_SUB(word(loc)) || EXT(t) >= LAB_OWN)) { push_t(p, at(loc), d); return; }
      print_alpha(f, dup_name(p, loc, EXT(t)), 'A');
      out_s(tg == DP0 ? "₀" : "₁", f);
      return;
    }
    case BJV: case BJ0: case BJ1: {
      u32 n = loc <= d ? loc : 0;
      if (tg == BJV) { print_alpha(f, n, 'a'); return; }
      print_alpha(f, n, 'A');
      out_s(tg == BJ0 ? "₀" : "₁", f);
      return;
    }
    case LAM: {
      out_s("λ", f);
      // quoted: named by depth; a LAM that -C left as it was (under a ↑
      // inside the term) keeps that name for its variables
      print_alpha(f, p->quoted ? lam_name_or(p, loc, d + 1) : lam_name(p, loc), 'a');
      out_c('.', f);
      push_t(p, at(loc), d + 1);
      return;
    }
    case APP: case DRY: print_app(p, f, t, d); return;
    case SUP: {
      out_c('&', f);
      nick_print(f, EXT(t));
      out_c('{', f);
      push_args(p, loc, 2, d, "}");
      return;
    }
    case DUP: {
      // a DUP node is left only where -C did not go (under a ↑ inside the
      // term): its DP0/DP1 name it, as without -C
      dup_name(p, loc, EXT(t));
      push_t(p, at(loc + 1), d);
      return;
    }
    case ALO: {   // a book term not yet copied: HVM4's @{term}
      out_s("@{", f);
      push_s(p, "}");
      push_t(p, RT->heap.at[(u32)RT->heap.at[loc]], d);
      return;
    }
    case REF: {
      const char *n = table_name(EXT(t));
      out_c('@', f);
      if (n) out_s(n, f);
      else   nick_print(f, EXT(t));
      return;
    }
    case NAM: nick_print(f, loc ? nam_fresh(p, loc) : EXT(t)); return;
    case ERA: out_s("&{}", f); return;
    case ANY: out_c('*', f); return;
    case NUM: out_u(loc, f); return;
    case MAT: case SWI: {
      out_s("λ{", f);
      push_s(p, "}");
      print_cases(p, f, t, d);
      return;
    }
    case USE: {
      out_s("λ{", f);
      push_s(p, "}");
      push_t(p, at(loc), d);
      return;
    }
    case OP2: {
      u32 op = EXT(t);
      if (op >= OP_COUNT) { fprintf(f, "(?%u)", op); return; }
      out_c('(', f);
      push_s(p, ")");
      push_t(p, at(loc + 1), d);
      push_s(p, " ");
      push_s(p, op_name(op));
      push_s(p, " ");
      push_t(p, at(loc), d);
      return;
    }
    case EQL: case AND: case OR: {
      out_c('(', f);
      push_s(p, ")");
      push_t(p, at(loc + 1), d);
      push_s(p, tg == EQL ? " === " : tg == AND ? " .&. " : " .|. ");
      push_t(p, at(loc), d);
      return;
    }
    case RED: {
      push_t(p, at(loc + 1), d);
      push_s(p, " ~> ");
      push_t(p, at(loc), d);
      return;
    }
    case INC: out_s("↑", f); push_t(p, at(loc), d); return;
    case DSU: {
      out_s("&(", f);
      push_s(p, "}");
      push_t(p, at(loc + 2), d);
      push_s(p, ",");
      push_t(p, at(loc + 1), d);
      push_s(p, "){");
      push_t(p, at(loc), d);
      return;
    }
    case DDU: {
      out_s("!(", f);
      push_t(p, at(loc + 2), d);
      push_s(p, ";");
      push_t(p, at(loc + 1), d);
      push_s(p, ")=");
      push_t(p, at(loc), d);
      return;
    }
    case UNS: {
      Term lf = at(loc);
      Term lv = TAG(lf) == LAM ? at(VAL(lf)) : 0;
      if (TAG(lf) != LAM || TAG(lv) != LAM) {
        out_s("!${", f);
        push_s(p, "}");
        push_t(p, lf, d);
        return;
      }
      out_s("! ", f);
      print_alpha(f, lam_name(p, VAL(lf)), 'a');
      out_s(" = λ ", f);
      print_alpha(f, lam_name(p, VAL(lv)), 'a');
      out_s(" ; ", f);
      push_t(p, at(VAL(lv)), d + 2);
      return;
    }
    case PRI: {
      const char *n = prim_name(EXT(t));
      out_c('%', f);
      if (n) out_s(n, f);
      else   fprintf(f, "?%u", EXT(t));
      if (EXT(t) >= PRIM_COUNT && !PRIM_IS_FFI(EXT(t))) return;
      out_c('(', f);
      push_args(p, loc, PRIM_ARITY(EXT(t)), d, ")");
      return;
    }
    default: fprintf(f, "?%u", tg); return;
  }
}

static void drain(Printer *p, FILE *f) {
  while (p->stk_len > 0 && !p->failed) {
    Item it = p->stk[--p->stk_len];
    switch (it.kind) {
      case I_TERM: print_one(p, f, it.t, it.depth); break;
      case I_STR:  out_s(it.s, f); break;
      case I_ELEMS: case I_ELEMS1: {
        if (!is_ctr(it.t, 2, CTR_CON)) break;
        if (it.kind == I_ELEMS1) out_c(',', f);
        push(p, I_ELEMS1, at(VAL(it.t) + 1), it.depth, NULL);
        push_t(p, at(VAL(it.t)), it.depth);
        break;
      }
      case I_CASES: print_cases(p, f, it.t, it.depth); break;
      case I_CONS: {
        Term tl = at(VAL(it.t) + 1);
        if (is_ctr(tl, 2, CTR_CON)) push(p, I_CONS, tl, it.depth, NULL);
        else                         push_t(p, tl, it.depth);
        push_s(p, "<>");
        push_t(p, at(VAL(it.t)), it.depth);
        break;
      }
    }
  }
}

static void run(FILE *f, Term t, int quoted) {
  Printer *p = &RT->lang->print;
  p->stk_len = 0;
  p->lams_len = p->nams_len = p->dupm_len = p->dups_len = 0;
  if (p->lams) memset(p->lams, 0, (size_t)p->lams_cap * 2 * sizeof(u32));
  if (p->nams) memset(p->nams, 0, (size_t)p->nams_cap * 2 * sizeof(u32));
  if (p->dupm) memset(p->dupm, 0, (size_t)p->dupm_cap * 2 * sizeof(u32));
  p->quoted = quoted;
  p->failed = 0;
  flockfile(f);
  push_t(p, t, 0);
  drain(p, f);
  // Dup definitions float after the term; printing one may find more.
  for (u32 i = 0; i < p->dups_len && !p->failed; i++) {
    if (i == 0) out_c(';', f);
    Dup dp = p->dups[i];
    dup_open(f, dp.name, dp.lab);
    push_t(p, at(dp.loc), 0);
    drain(p, f);
    out_c(';', f);
  }
  if (p->failed) out_s("<out of memory>", f);
  funlockfile(f);
}

void print_term(FILE *f, Term t)   { run(f, t, 0); }

// Infinite terms
// ==============
// What print_term follows without a name to stop at: a node's fields, and
// the term a variable or a copy stands for (its slot's SUB, a runtime
// dup's expression). A stuck DUP's expression prints once, by its name, so
// it starts a walk of its own. A depth-first walk over slots, each grey
// while on the path: one met grey again is a cycle. With `dups`, every
// copy's DUP is followed into, stuck or not: what reducing the term does
// (print_cyclic).
static int infinite(Term t, int dups) {
  u64 n   = heap_used();
  u8 *col = calloc(n + 1, 1);                  // 0 white, 1 grey, 2 black
  u32 cap = 1024, len = 0, rcap = 1024, rlen = 0;
  u64 *stk  = malloc(cap * sizeof(u64));       // slot | next field << 32
  u32 *roots = malloc(rcap * sizeof(u32));
  int cyc = 0;
  if (!col || !stk || !roots) { free(col); free(stk); free(roots); return 0; }
  roots[rlen++] = (u32)n;   // t itself, a slot past the heap's words
  while (rlen > 0 && !cyc) {
    u32 r = roots[--rlen];
    if (col[r]) continue;
    col[r] = 1;
    stk[len++] = r;
    while (len > 0 && !cyc) {
      u32  slot = (u32)stk[len - 1];
      u32  i    = (u32)(stk[len - 1] >> 32);
      Term w    = slot == n ? t : RT->heap.at[slot];
      Term v    = NO_SUB(w);
      u32  tg   = TAG(v), ari = 0;
      u32  kid  = 0;
      if (tg == VAR || tg == DP0 || tg == DP1) {
        u32 at = VAL(v);
        int follow = at && at < n && (IS_SUB(RT->heap.at[at]) || (tg != VAR && (dups || EXT(v) >= LAB_OWN)));
        if (follow) { ari = 1; kid = at; }
        else if (tg != VAR && at && at < n && !col[at]) {
          if (rlen == rcap) { rcap *= 2; u32 *m = realloc(roots, rcap * sizeof(u32)); if (!m) break; roots = m; }
          roots[rlen++] = at;
        }
      } else if (HAS_LOC(tg)) {
        ari = term_arity(v);
        kid = VAL(v) + i;
      }
      if (i >= ari || kid >= n) {
        col[slot] = 2;
        len--;
        continue;
      }
      stk[len - 1] += (u64)1 << 32;
      if (col[kid] == 1) { cyc = 1; break; }
      if (col[kid] == 2) continue;
      col[kid] = 1;
      if (len == cap) { cap *= 2; u64 *m = realloc(stk, cap * sizeof(u64)); if (!m) break; stk = m; }
      stk[len++] = kid;
    }
    len = 0;
  }
  free(col); free(stk); free(roots);
  return cyc;
}

int print_infinite(Term t) { return infinite(t, 0); }
int print_cyclic(Term t)   { return infinite(t, 1); }
void print_quoted(FILE *f, Term t) { run(f, t, 1); }

void print_free(void) {
  Printer *p = &RT->lang->print;
  free(p->stk);
  free(p->lams);
  free(p->nams);
  free(p->dupm);
  free(p->dups);
  *p = (Printer){0};
}
