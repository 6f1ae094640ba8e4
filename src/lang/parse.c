// parse.c: recursive descent over HVM4 source, building book templates.
//
// A definition is built in a scratch array of words laid out exactly like
// the final template (nodes at scratch indices, word 0 = root), with one
// difference: variable occurrences are OCC words naming a binder record and
// a side. When the definition is done, the scratch is copied into the heap,
// relocating node words and resolving each OCC to VAR/DP0/DP1 of its binder.
//
// Recursion follows the nesting of the source; its depth is bounded by the
// room left on the C stack (measured, not guessed), so very deep terms end
// in a clear PARSE_ERROR instead of a crash. All walks over built terms
// (auto-dup, copies) use explicit stacks.

#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heap/heap.h"
#include "lang/names.h"
#include "lang/parse.h"
#include "heap/rt.h"
#include "lang/lang_rt.h"

// Rare constructs keep their locals off the recursion path of plain terms.
#define NOINLINE __attribute__((noinline))

#define OCC      0x70       // scratch-only tag: ext = side, val = binder
#define SIDE_ANY 2          // OCC side of a plain (lambda) variable
#define MAX_FLD  16         // constructor fields, fork names

// Binders
// =======

enum { B_LAM, B_DUP, B_DYN, B_SIDE };

// A variable's name as written: where it is in the definition's text and
// its length (variables are told apart by their full spelling, as today's
// HVM4 does), with its nick, which tells most names apart at once.
typedef struct {
  const char *at;
  u32         len, nick;
} VarName;

static int same_name(VarName a, VarName b) {
  return a.nick == b.nick && a.len == b.len && memcmp(a.at, b.at, a.len) == 0;
}

typedef struct Bind {
  VarName name;  // as written
  u8  kind;      // B_LAM: lambda/let; B_DUP: static dup; B_DYN: dynamic dup;
                 // B_SIDE: `x` of `! &L{x,y} = v`, side `lab` of dup loc[0]
  u8  forked;    // bound by a fork: a bare use picks the branch's side
  u8  cloned;    // `&x`: many uses allowed (auto-dup)
  u32 lab;       // B_DUP label
  u32 loc[2];    // B_LAM: LAM node; B_DUP: DUP node; B_DYN: the two LAMs
  u32 uses[2];   // occurrences seen (B_LAM counts in uses[0]) ..
  u32 again[2];  // .. where the second of each was, and the last (byte
  u32 last[2];   // offsets), which an affinity message points at
  u32 chain[2];  // auto-dup: first binder of the chain for side 0/1 ..
  u32 links[2];  // .. and its length (0: none)
  u32 seen[2];   // occurrences renamed so far (rename_dups)
} Bind;

// Cursor
// ======

// Where the parser stands in one source text. A message's line and column
// are counted from the text when it is printed (src_where), not kept as the
// cursor moves.
typedef struct Src {
  const char *txt;    // the text ..
  u32         end;    // .. and its length in bytes
  u32         at;     // the next byte
  u32         start;  // the first byte after a byte-order mark
  u32         hide_at, hide_len;   // bytes the user did not write (parse_hide)
  const char *path;   // the file, for messages and relative includes
} Src;

// Automatic labels count up from here, as HVM4 numbers them (Parse.fresh).
#define FRESH_BASE 0x800000u

// The parser state of the runtime this thread works for.
static Parse *ps(void) { return &RT->lang->parse; }

// Where messages go (parse_set_errors).
static FILE *err_out(void) {
  FILE *f = ps()->errs;
  return f ? f : stderr;
}
#define ERR_OUT err_out()

static void die(void) { longjmp(ps()->fail, 1); }

static void oom(void) {
  fprintf(ERR_OUT, "PARSE_ERROR: out of memory\n");
  die();
}

// Room for `need` items of `sz` bytes in *buf (capacity *cap), doubling. The
// capacity stays a u32: a need past that is out of memory, never a wrap.
static void *grow(void *buf, u32 *cap, u64 need, size_t sz) {
  if (need <= *cap) return buf;
  if (need > UINT32_MAX) oom();
  u64 c = *cap ? *cap : 256;
  while (c < need) c <<= 1;
  if (c > UINT32_MAX) c = UINT32_MAX;
  void *q = realloc(buf, (size_t)c * sz);
  if (!q) oom();
  *cap = (u32)c;
  return q;
}

// Errors
// ======

// The line and column of byte `at` as the user sees the text: a column
// counts characters (UTF-8 code points, so `λ` is one), and neither a
// byte-order mark nor the hidden bytes count.
static void src_where(const Src *s, u32 at, u32 *row, u32 *col) {
  *row = 1;
  *col = 1;
  for (u32 i = s->start; i < at && i < s->end; i++) {
    u8 b = (u8)s->txt[i];
    int hidden = i >= s->hide_at && i - s->hide_at < s->hide_len;
    if (b == '\n') { (*row)++; *col = 1; }
    else if ((b & 0xC0) != 0x80 && !hidden) (*col)++;
  }
}

static void err_head(Src *s) {
  u32 row, col;
  src_where(s, s->at, &row, &col);
  fprintf(ERR_OUT, "PARSE_ERROR (%s:%u:%u)\n", s->path, row, col);
}

// The character at the cursor, whole (all the bytes of its code point).
static void put_detected(Src *s) {
  u32 n = 1;
  while (s->at + n < s->end && ((u8)s->txt[s->at + n] & 0xC0) == 0x80 && n < 4) n++;
  if (s->at >= s->end || s->txt[s->at] == 0) fprintf(ERR_OUT, "- detected: EOF\n");
  else fprintf(ERR_OUT, "- detected: '%.*s'\n", (int)n, s->txt + s->at);
}

static void err_expected(Src *s, const char *exp) {
  err_head(s);
  fprintf(ERR_OUT, "- expected: %s\n", exp);
  put_detected(s);
  die();
}

static void err_msg(Src *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  err_head(s);
  fputs("- ", ERR_OUT);
  vfprintf(ERR_OUT, fmt, ap);
  fputc('\n', ERR_OUT);
  va_end(ap);
  die();
}

// `at`: the byte of the use that broke the rule.
static void err_affine(Src *s, VarName v, int side, u32 uses, u32 at) {
  Src use = *s;
  use.at  = at;
  err_head(&use);
  fprintf(ERR_OUT, "- variable '%.*s%s' used %u times\n", (int)v.len, v.at,
          side == 0 ? "₀" : side == 1 ? "₁" : "", uses);
  fprintf(ERR_OUT, "- hint: declare variable as '&%.*s' to allow multiple uses\n", (int)v.len, v.at);
  die();
}

// Lexing
// ======

// The byte k places ahead of the cursor; 0 past the end.
static char ch(Src *s, u32 k) {
  u64 i = (u64)s->at + k;
  return i < s->end ? s->txt[i] : 0;
}

static char cur(Src *s) { return ch(s, 0); }

static void step(Src *s) {
  if (s->at < s->end) s->at++;
}

static void steps(Src *s, u32 n) {
  while (n-- > 0) step(s);
}

// Does the text at the cursor begin with w?
static int ahead(Src *s, const char *w) {
  u32 k = 0;
  while (w[k] && ch(s, k) == w[k]) k++;
  return w[k] == 0;
}

// Steps over w when the text begins with it.
static int take(Src *s, const char *w) {
  if (!ahead(s, w)) return 0;
  steps(s, (u32)strlen(w));
  return 1;
}

// Steps over white space and `//` comments.
static void blank(Src *s) {
  for (;;) {
    char c = cur(s);
    if (c == '/' && ch(s, 1) == '/') {
      while (s->at < s->end && cur(s) != '\n') step(s);
    } else if (c != 0 && strchr(" \t\r\n", c)) {
      step(s);
    } else {
      return;
    }
  }
}

// w, with blanks either side, or a parse error.
static void need(Src *s, const char *w) {
  blank(s);
  if (!take(s, w)) err_expected(s, w);
  blank(s);
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_init(char c)  { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Brackets
// ========

// An opening bracket's text [at, at + len) (`(`, `[`, `#Foo{`), which a
// message about its missing closer names and places.
typedef struct {
  u32 at, len;
} Open;

static Open open_from(Src *s, u32 at) { return (Open){at, s->at - at}; }

static void err_unclosed(Src *s, const char *close, Open o) {
  u32 row, col;
  src_where(s, o.at, &row, &col);
  err_head(s);
  fprintf(ERR_OUT, "- expected: %s to close '%.*s' at line %u, column %u\n", close,
          (int)o.len, s->txt + o.at, row, col);
  put_detected(s);
  die();
}

// `close`, with blanks either side, or an error naming the opening.
static void need_close(Src *s, const char *close, Open o) {
  blank(s);
  if (!take(s, close)) err_unclosed(s, close, o);
  blank(s);
}

// Whether a term may start at the cursor (parse_atom's first characters).
static int term_starts(Src *s) {
  char c = cur(s);
  if (c == 0) return 0;
  return strchr("!&#@%^*([\'\"`", c) || is_digit(c) || is_init(c) || ahead(s, "λ") || ahead(s, "↑");
}

// Before an item of a bracketed sequence: 0 at its closer; when no term
// can start here, the closer is what is missing.
static int seq_more(Src *s, const char *close, Open o) {
  blank(s);
  if (ahead(s, close)) return 0;
  if (!term_starts(s)) err_unclosed(s, close, o);
  return 1;
}

// A name of any kind, whole: start and length in the source.
static u32 name_span(Src *s, u32 *len) {
  blank(s);
  if (!is_init(cur(s))) err_expected(s, "name");
  u32 at = s->at;
  while (nick_digit((u8)cur(s)) >= 0) step(s);
  *len = s->at - at;
  return at;
}

// A variable's name.
static VarName var_name(Src *s) {
  u32 len, at = name_span(s, &len);
  blank(s);
  return (VarName){s->txt + at, len, nick_of(s->txt + at, len)};
}

// A label's or a `^name`'s name (`what`), as a nick: one that does not fit
// the field is an error, not a truncation.
static u32 nick_name(Src *s, const char *what) {
  blank(s);
  Src from = *s;   // a message points at the name
  u32 len, at = name_span(s, &len);
  if (len > NICK_CHARS) {
    err_msg(&from, "%s '%.*s' is too long: a %s holds at most %u characters (its 24-bit field)",
            what, (int)len, s->txt + at, what, NICK_CHARS);
  }
  blank(s);
  return nick_of(s->txt + at, len);
}

// A constructor's (sigil '#') or a reference's ('@') name, as its id in
// its table (names.h); a table that is full is an error, not a wrap.
static u32 named_id(Src *s, char sigil) {
  blank(s);
  Src from = *s;   // a message points at the name
  u32 len, at = name_span(s, &len);
  const char *nm  = s->txt + at;
  int         ctr = sigil == '#';
  u32 id = ctr ? ctr_id(nm, len) : table_id(nm, len);
  if (id == ~0u) {
    err_msg(&from, "too many %s: '%c%.*s' would be distinct name number %u, and the name field holds %u",
            ctr ? "constructor names" : "definitions", sigil, (int)len, nm,
            (ctr ? ctr_count() : table_count()) + 1, ctr ? ctr_limit() : table_limit());
  }
  blank(s);
  return id;
}

static u32 utf8(Src *s) {
  u8 b0 = (u8)cur(s);
  step(s);
  u32 n = (b0 & 0xE0) == 0xC0 ? 1 : (b0 & 0xF0) == 0xE0 ? 2 : (b0 & 0xF8) == 0xF0 ? 3 : 0;
  if (n == 0 || s->at + n - 1 >= s->end) return b0;
  u32 c = b0 & (0x3F >> n);
  for (u32 i = 0; i < n; i++) {
    c = (c << 6) | ((u8)cur(s) & 0x3F);
    step(s);
  }
  return c;
}

static u32 char_esc(Src *s) {
  if (cur(s) == 0) err_expected(s, "character");
  if (cur(s) != '\\') return utf8(s);
  step(s);
  if (s->at >= s->end) err_expected(s, "character");
  char c = cur(s);
  step(s);
  switch (c) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case '0': return 0;
    default:  return (u8)c;   // \\ \' \" and any other byte verbatim
  }
}

static u32 char_lit(Src *s) {
  step(s);
  u32 c = char_esc(s);
  if (cur(s) != '\'') err_expected(s, "'");
  step(s);
  return c;
}

// Scratch terms
// =============

// n zeroed words of scratch. The scratch becomes a template in the heap,
// so a definition that outgrows the heap's free room stops here, before
// its memory is spent (a nat literal or a string as large as the heap).
static u32 salloc(u32 n) {
  Parse *p = ps();
  u64 need = (u64)p->w_len + n;
  if (need > RT->heap.cap - heap_used()) err_msg(p->cur, "heap exhausted while loading the program");
  p->w = grow(p->w, &p->w_cap, need, sizeof(Term));
  u32 at = p->w_len;
  memset(p->w + at, 0, (size_t)n * sizeof(Term));
  p->w_len += n;
  return at;
}

static Term node(u8 tag, u32 ext, u32 n, const Term *kids) {
  Parse *p = ps();
  u32 at = salloc(n);
  for (u32 i = 0; i < n; i++) p->w[at + i] = kids[i];
  return TERM(tag, ext, at);
}

static Term node2(u8 tag, u32 ext, Term a, Term b) {
  Term k[2] = {a, b};
  return node(tag, ext, 2, k);
}

static Term node1(u8 tag, u32 ext, Term a) { return node(tag, ext, 1, &a); }

static Term ctr0(u32 id)          { return TERM(C00, id, 0); }
static Term ctr1(u32 id, Term a)  { return node1(C00 + 1, id, a); }
static Term ctr2(u32 id, Term a, Term b) { return node2(C00 + 2, id, a, b); }

// Binders
// =======

static u32 bind_new(VarName nm, u8 kind, u32 lab, u8 forked, u8 cloned) {
  Parse *p = ps();
  p->b = grow(p->b, &p->b_cap, (u64)p->b_len + 1, sizeof(Bind));
  p->b[p->b_len] = (Bind){nm, kind, forked, cloned, lab, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0},
                          {0, 0}, {0, 0}};
  return p->b_len++;
}

static void scope_push(u32 b) {
  Parse *p = ps();
  p->scope = grow(p->scope, &p->scope_cap, (u64)p->scope_len + 1, sizeof(u32));
  p->scope[p->scope_len++] = b;
}

static void scope_pop(void) { ps()->scope_len--; }

static void walk_push(u32 *n, Term t) {
  Parse *p = ps();
  p->walk = grow(p->walk, &p->walk_cap, (u64)*n + 1, sizeof(Term));
  p->walk[(*n)++] = t;
}

// One more use of side `side` of binder b, at byte `at`.
static void count_use(Bind *b, int side, u32 at) {
  if (++b->uses[side] == 2) b->again[side] = at;
  b->last[side] = at;
}

// A deep copy of a scratch term (dynamic labels shared by several nodes).
// Copied occurrences count as uses, as the shared term does in HVM4.
static Term copy_term(Term t) {
  Parse *p = ps();
  u32 root = salloc(1);
  p->w[root] = t;
  u32 n = 0;
  walk_push(&n, TERM(0, 0, root));
  while (n > 0) {
    u32  at = VAL(p->walk[--n]);
    Term x  = p->w[at];
    if (TAG(x) == OCC) {
      count_use(&p->b[VAL(x)], EXT(x) == 1, p->cur->at);
      continue;
    }
    u32 ar = term_arity(x);
    if (ar == 0) continue;
    u32 nw = salloc(ar);
    for (u32 i = 0; i < ar; i++) {
      p->w[nw + i] = p->w[VAL(x) + i];
      walk_push(&n, TERM(0, 0, nw + i));
    }
    p->w[at] = TERM(TAG(x), EXT(x), nw);
  }
  return p->w[root];
}

// n automatic labels, counted up from 0x800000 as HVM4 numbers them; they
// must stay below the runtime's own (LAB_OWN).
static u32 fresh_labs(u32 n) {
  Parse *p = ps();
  if ((u64)FRESH_BASE + p->fresh + n > LAB_OWN) err_msg(p->cur, "too many automatic labels");
  u32 lab = FRESH_BASE + p->fresh;
  p->fresh += n;
  return lab;
}

// Auto-dup: the `uses` occurrences of (binder b, side) in body, in preorder
// (HVM4's order), become d0₀, d1₀, .., d(n-1)₀, d(n-1)₁ of a new chain
// !d0&=x; !d1&=d0₁; ..; body, n = uses-1, with fresh labels. Returns the
// chain, which replaces body. The chain is built (and its labels taken) at
// once; the occurrences are renamed by one walk over the whole definition
// when it is done (rename_dups), which visits them in the same order, so
// nested cloned binders cost one walk instead of one each. The chain's own
// x is an alias of b, which that walk leaves alone.
static Term auto_dup(Term body, u32 b, u32 side, u32 uses) {
  Parse *p = ps();
  if (uses <= 1) return body;
  u32 n   = uses - 1;
  u32 lab = fresh_labs(n);
  u32 si  = side == 1;
  u32 als = bind_new(p->b[b].name, p->b[b].kind, p->b[b].lab, 0, 0);
  p->b[als].loc[0] = p->b[b].loc[0];
  p->b[als].loc[1] = p->b[b].loc[1];
  u32 d0  = p->b_len;
  for (u32 i = 0; i < n; i++) {
    bind_new(p->b[b].name, B_DUP, (lab + i) & EXT_MASK, 0, 0);
  }
  // Chain nodes, outermost first; body goes into the last.
  u32 loc = salloc(2 * n);
  for (u32 i = 0; i < n; i++) {
    p->b[d0 + i].loc[0] = loc + 2 * i;
    p->w[loc + 2 * i] = i == 0 ? TERM(OCC, side, als) : TERM(OCC, 1, d0 + i - 1);
    p->w[loc + 2 * i + 1] = i + 1 < n ? TERM(DUP, (lab + i + 1) & EXT_MASK, loc + 2 * (i + 1)) : body;
  }
  p->b[b].chain[si] = d0;
  p->b[b].links[si] = n;
  p->renames = 1;
  return TERM(DUP, lab & EXT_MASK, loc);
}

// Renames the occurrences of auto-duplicated binders (see auto_dup).
static void rename_dups(void) {
  Parse *p = ps();
  u32 k = 0;
  walk_push(&k, TERM(0, 0, 0));
  while (k > 0) {
    u32  at = VAL(p->walk[--k]);
    Term x  = p->w[at];
    if (TAG(x) == OCC) {
      Bind *b  = &p->b[VAL(x)];
      u32   si = EXT(x) == 1;
      u32   n  = b->links[si];
      if (n) {
        u32 i  = b->seen[si]++;
        u32 d0 = b->chain[si];
        p->w[at]  = i < n ? TERM(OCC, 0, d0 + i) : TERM(OCC, 1, d0 + n - 1);
      }
      continue;
    }
    for (u32 i = term_arity(x); i > 0; i--) walk_push(&k, TERM(0, 0, VAL(x) + i - 1));
  }
}

// Terms
// =====

static Term parse_term(Src *s);
static Term parse_atom(Src *s);
static Term parse_lam(Src *s);
static Term lam_rest(Src *s);

static void guard(Src *s) {
  Parse *p = ps();
  char here;
  if ((uintptr_t)&here < p->stack_lo) err_msg(s, "term nested too deeply");
}

// Infix operators
// ===============
// Each symbol takes the term on its left when the level being read is at
// most `lhs`, and reads its right operand at level `rhs`. Arithmetic and
// comparisons climb the precedence levels (1 `||` .. 8 `^`; `~` only at
// level 0); `~>`, `<>`, `===`, `.&.` and `.|.` take their left side at any
// level (LOOSE). The longest symbol at the cursor wins (`===` over `==`,
// `~>` over `~`, `<>` over `<`).

#define LOOSE 9      // above every level an operand is read at
#define CONS  0xFF   // `<>`: a #CON cell, not a node tag of its own

typedef struct {
  const char *sym;   // NULL for OP2: op_name(op)
  u8          tag;   // OP2, EQL, AND, OR, RED or CONS
  u8          op;    // OP2's operator
  u8          lhs;
  u8          rhs;
} Infix;

static const Infix INFIX[] = {
  {NULL,  OP2, OP_OR,  1, 2}, {NULL,  OP2, OP_AND, 2, 3},
  {NULL,  OP2, OP_EQ,  3, 4}, {NULL,  OP2, OP_NE,  3, 4},
  {NULL,  OP2, OP_LT,  4, 5}, {NULL,  OP2, OP_LE,  4, 5},
  {NULL,  OP2, OP_GT,  4, 5}, {NULL,  OP2, OP_GE,  4, 5},
  {NULL,  OP2, OP_LSH, 5, 6}, {NULL,  OP2, OP_RSH, 5, 6},
  {NULL,  OP2, OP_ADD, 6, 7}, {NULL,  OP2, OP_SUB, 6, 7},
  {NULL,  OP2, OP_MUL, 7, 8}, {NULL,  OP2, OP_DIV, 7, 8},
  {NULL,  OP2, OP_MOD, 7, 8}, {NULL,  OP2, OP_XOR, 8, 9},
  {NULL,  OP2, OP_NOT, 0, 1},
  {"===", EQL, 0, LOOSE, 4},  {".&.", AND, 0, LOOSE, 2},
  {".|.", OR,  0, LOOSE, 1},  {"~>",  RED, 0, LOOSE, 0},
  {"<>",  CONS, 0, LOOSE, 0},
};

static const char *infix_sym(const Infix *x) {
  return x->sym ? x->sym : op_name(x->op);
}

// The infix symbol at the cursor (after blanks), or NULL.
static const Infix *infix_at(Src *s) {
  blank(s);
  const Infix *best = NULL;
  size_t       blen = 0;
  for (size_t i = 0; i < sizeof INFIX / sizeof INFIX[0]; i++) {
    const char *sym = infix_sym(&INFIX[i]);
    size_t      n   = strlen(sym);
    if (n > blen && ahead(s, sym)) { best = &INFIX[i]; blen = n; }
  }
  return best;
}

// `f(a, b, ..)` after f: one APP per argument; commas are optional.
static Term parse_call(Src *s, Term f) {
  blank(s);
  u32 at = s->at;
  need(s, "(");
  Open o = open_from(s, at);
  while (seq_more(s, ")", o)) {
    f = node2(APP, 0, f, parse_term(s));
    blank(s);
    take(s, ",");
    blank(s);
  }
  need(s, ")");
  return f;
}

// Calls and infix operators after `f`, at level `lvl` (see INFIX).
static Term parse_post(Src *s, Term f, int lvl) {
  for (;;) {
    const Infix *op = infix_at(s);
    if (op && op->lhs >= lvl) {
      steps(s, (u32)strlen(infix_sym(op)));
      Term rhs = parse_post(s, parse_atom(s), op->rhs);
      f = op->tag == CONS ? ctr2(CTR_CON, f, rhs) : node2(op->tag, op->op, f, rhs);
    } else if (cur(s) == '(') {
      f = parse_call(s, f);
    } else {
      return f;
    }
  }
}

static Term parse_term(Src *s) {
  guard(s);
  return parse_post(s, parse_atom(s), 0);
}

// An occurrence of binder bi (side: its subscript, -1 for none) at byte
// `at`, counted.
static Term occ_of(u32 bi, int side, u32 at) {
  Parse *p = ps();
  Bind *b = &p->b[bi];
  if (b->kind == B_SIDE) {
    count_use(&p->b[b->loc[0]], (int)b->lab, at);
    return TERM(OCC, b->lab, b->loc[0]);
  }
  if (b->kind == B_LAM) { count_use(b, 0, at); return TERM(OCC, SIDE_ANY, bi); }
  int sd = side == -1 && b->forked ? p->fork_side : side;
  if (sd < 0) sd = 0;
  count_use(b, sd, at);
  return TERM(OCC, (u32)sd, bi);
}

// Variables: `x`, `x₀`, `x₁`.
static NOINLINE Term parse_var(Src *s) {
  Parse *p = ps();
  blank(s);
  Src  use  = *s;   // a message points at the use, not past it
  VarName nm = var_name(s);
  blank(s);
  int side = take(s, "₀") ? 0 : take(s, "₁") ? 1 : -1;
  blank(s);
  int skipped = 0;
  for (u32 i = p->scope_len; i > 0; i--) {
    Bind *b = &p->b[p->scope[i - 1]];
    if (!same_name(b->name, nm)) continue;
    if (side == -1 && b->kind != B_LAM && b->kind != B_SIDE && !b->forked) {
      skipped = 1;
      continue;
    }
    if (side != -1 && b->kind == B_LAM)               { skipped = 1; continue; }
    if (b->kind == B_SIDE && side != -1)              { skipped = 1; continue; }
    return occ_of(p->scope[i - 1], side, use.at);
  }
  int n = (int)nm.len;
  err_head(&use);
  if (side == -1 && skipped) {
    fprintf(ERR_OUT, "- dup variable '%.*s' requires subscript ₀ or ₁\n", n, nm.at);
  } else if (side != -1 && skipped) {
    fprintf(ERR_OUT, "- non-dup variable '%.*s' must be used without subscript (₀ or ₁)\n", n, nm.at);
  } else {
    fprintf(ERR_OUT, "- undefined variable '%.*s'\n", n, nm.at);
  }
  die();
  return 0;
}

// Closes a lambda-like binder: checks affinity or inserts auto-dups.
static Term close_lam(Src *s, u32 b, Term body) {
  Parse *p = ps();
  u32 uses = p->b[b].uses[0];
  if (p->b[b].cloned) return auto_dup(body, b, SIDE_ANY, uses);
  if (uses > 1) err_affine(s, p->b[b].name, -1, uses, p->b[b].again[0]);
  return body;
}

// Closes a dup binder: checks affinity or inserts auto-dups, side `first`
// first (a static dup: side 1, as HVM4 numbers the labels; a dynamic one: 0).
static Term close_dup_sides(Src *s, u32 b, Term body, u32 first) {
  Parse *p = ps();
  u32 u0 = p->b[b].uses[0], u1 = p->b[b].uses[1];
  if (p->b[b].cloned) {
    body = auto_dup(body, b, first, first ? u1 : u0);
    return auto_dup(body, b, 1 - first, first ? u0 : u1);
  }
  if (u0 > 1) err_affine(s, p->b[b].name, 0, u0, p->b[b].again[0]);
  if (u1 > 1) err_affine(s, p->b[b].name, 1, u1, p->b[b].again[1]);
  return body;
}

static Term lam_at(u32 loc, Term body, u32 uses) {
  Parse *p = ps();
  p->w[loc] = body;
  return TERM(LAM, uses == 0 ? LAM_ERA : 0, loc);
}

// λnm.body, the body read by lam_rest (more binders) or parse_term.
static Term lam_scope(Src *s, VarName nm, u8 cloned, int more) {
  Parse *p = ps();
  u32 b   = bind_new(nm, B_LAM, 0, 0, cloned);
  u32 loc = salloc(1);
  p->b[b].loc[0] = loc;
  scope_push(b);
  Term body = more ? lam_rest(s) : parse_term(s);
  scope_pop();
  u32 uses = p->b[b].uses[0];
  return lam_at(loc, close_lam(s, b, body), uses);
}

// Labels and dups
// ===============

// A label after `&`: a name, `(term)` for a dynamic one, or nothing when
// one of the bytes in `fresh` follows, which takes the next automatic one.
typedef struct {
  int  dyn;
  u32  lab;    // static label
  Term term;   // dynamic label's term
} Label;

static Label read_label(Src *s, const char *fresh) {
  Label l = {0, 0, 0};
  blank(s);
  char c = cur(s);
  if (c == '(') {
    need(s, "(");
    l.dyn  = 1;
    l.term = parse_term(s);
    need(s, ")");
  } else if (c != 0 && strchr(fresh, c)) {
    l.lab = fresh_labs(1);
  } else {
    // a name starts with a letter, so a label of at most four characters
    // stays below LAB_OWN (term.h), the runtime's own
    l.lab = nick_name(s, "label");
  }
  blank(s);
  return l;
}

// A dup binder under label l, with its two words: a DUP node's [expr, body]
// or, for a dynamic label, the two lambda slots that bind x₀ and x₁.
static u32 dup_bind(VarName nm, const Label *l, u8 forked, u8 cloned) {
  Parse *p = ps();
  u32 dn = salloc(2);
  u32 b  = bind_new(nm, l->dyn ? B_DYN : B_DUP, l->lab, forked, cloned);
  p->b[b].loc[0] = dn;
  p->b[b].loc[1] = dn + 1;
  return b;
}

// The term that binds dup b to `val` in `body` (already closed): a DUP node,
// or DDU(label, val, λx₀.λx₁.body) for a dynamic label.
static Term dup_of(u32 b, const Label *l, Term val, Term body) {
  Parse *p = ps();
  u32 dn = p->b[b].loc[0];
  if (!l->dyn) {
    p->w[dn]     = val;
    p->w[dn + 1] = body;
    return TERM(DUP, l->lab, dn);
  }
  Term x1   = lam_at(dn + 1, body, p->b[b].uses[1]);
  Term k[3] = {l->term, val, lam_at(dn, x1, p->b[b].uses[0])};
  return node(DDU, 0, 3, k);
}

// Lambdas
// =======

// The key of a match case (`#K`, `[]`, `<>`, `0n`, `1n+`, a number or a
// char, each before `:`) read into *tag and *ext; 0 when the text at the
// cursor is no key (the caller puts the cursor back).
static int case_key(Src *s, u8 *tag, u32 *ext) {
  char c = cur(s);
  *tag = MAT;
  if (c == '#')       { step(s); *ext = named_id(s, '#'); return 1; }
  if (take(s, "[]"))  { *ext = CTR_NIL; return 1; }
  if (take(s, "<>"))  { *ext = CTR_CON; return 1; }
  if (c == '\'')      { *tag = SWI; *ext = char_lit(s); blank(s); return 1; }
  if (!is_digit(c)) return 0;
  u32 num = 0;
  for (; is_digit(cur(s)); step(s)) num = num * 10 + (u32)(cur(s) - '0');
  blank(s);
  if (cur(s) == ':') { *tag = SWI; *ext = num; return 1; }
  if (cur(s) != 'n') return 0;
  int plus = ch(s, 1) == '+';
  if (num == 0 && !plus) { step(s);     *ext = CTR_ZER; return 1; }
  if (num == 1 && plus)  { steps(s, 2); *ext = CTR_SUC; return 1; }
  return 0;
}

// `λ{...}` after the `λ`: `λ{}` erases, `λ{f}` is a use, and cases
// `key: term;` chain into MAT/SWI nodes, each case's miss slot holding the
// next case, then the default (`_:` optional) or NUM 0 for none.
static NOINLINE Term parse_lam_block(Src *s) {
  Parse *p = ps();
  blank(s);
  Open o = {s->at, 1};
  need(s, "{");
  if (cur(s) == '}') {
    need(s, "}");
    return TERM(ERA, 0, 0);
  }
  u32 head = salloc(1), tip = head, cases = 0;
  p->w[head] = TERM(NUM, 0, 0);
  for (;; cases++) {
    blank(s);
    Src back = *s;
    u8  tag;
    u32 ext;
    if (!case_key(s, &tag, &ext)) {
      *s = back;
      break;
    }
    need(s, ":");
    Term hit = parse_term(s);
    blank(s);
    take(s, ";");
    Term cas = node2(tag, ext & EXT_MASK, hit, TERM(NUM, 0, 0));
    p->w[tip] = cas;
    tip    = VAL(cas) + 1;
  }
  if (cases == 0) {
    Term f = parse_term(s);
    need_close(s, "}", o);
    return node1(USE, 0, f);
  }
  if (cur(s) != '}') {
    if (take(s, "_")) need(s, ":");
    Term dflt = parse_term(s);
    p->w[tip] = dflt;
  }
  need_close(s, "}", o);
  return p->w[head];
}

// After a binder: `, y...` continues a multi-argument lambda, `. body` ends it.
static Term lam_rest(Src *s) {
  if (take(s, ",")) return parse_lam(s);
  need(s, ".");
  return parse_term(s);
}

// `λx&L.`, `λx&.` and `λx&(e).` after the second `&`: the lambda's
// variable goes straight into a dup, λv.!x&L = v; body.
static NOINLINE Term parse_lam_dup(Src *s, VarName nm, u8 cloned) {
  Parse *p = ps();
  Label l   = read_label(s, ",.");
  u32   loc = salloc(1);
  u32   v   = bind_new(nm, B_LAM, 0, 0, 0);
  p->b[v].loc[0]  = loc;
  p->b[v].uses[0] = 1;
  u32 b = dup_bind(nm, &l, 0, cloned);
  scope_push(b);
  Term body = lam_rest(s);
  scope_pop();
  body = close_dup_sides(s, b, body, !l.dyn);
  return lam_at(loc, dup_of(b, &l, TERM(OCC, SIDE_ANY, v), body), 1);
}

static NOINLINE Term parse_uns_lam(Src *s);

static NOINLINE Term parse_lam(Src *s) {
  guard(s);
  blank(s);
  if (cur(s) == '{') return parse_lam_block(s);
  if (take(s, "$")) return parse_uns_lam(s);
  u8  cloned = (u8)take(s, "&");
  VarName nm = var_name(s);
  if (take(s, "&")) return parse_lam_dup(s, nm, cloned);
  return lam_scope(s, nm, cloned, 1);
}

// Superpositions and forks
// ========================

// The two branches of a fork, `A; B}` after its `{`, with `&₀:`/`&₁:`
// prefixes allowed; left[i]: the uses of bs[i]'s side 0 in A.
static void fork_branches(Src *s, Term br[2], const u32 *bs, u32 n, u32 *left) {
  Parse *p = ps();
  for (int k = 0; k < 2; k++) {
    if (take(s, k ? "&₁" : "&₀")) need(s, ":");
    p->fork_side = k;
    br[k] = parse_term(s);
    p->fork_side = -1;
    blank(s);
    take(s, ";");
    blank(s);
    for (u32 i = 0; i < n && k == 0; i++) left[i] = p->b[bs[i]].uses[0];
  }
  need(s, "}");
}

// `&L!{A;B}` and `&(e)!{A;B}` after the `!`: a fork of the whole context.
// Each variable in scope that a bare name reaches (lambda and let binders,
// destructured dup sides; not dup variables, which need a subscript) is
// duplicated under the label and cloned, so A and B each use their own
// side of it as often as they like: &L[&x,&y,..]{A;B} in HVM4's words.
static NOINLINE Term parse_autofork(Src *s, const Label *l) {
  Parse *p = ps();
  if (p->fork_side != -1) err_msg(s, "nested forks are not allowed");
  need(s, "{");
  // vs: the forked binders; bs: their dups; left: fork_branches' counts.
  // Forks do not nest, so one scratch serves them all.
  p->forks = grow(p->forks, &p->forks_cap, 3 * ((u64)p->scope_len + 1), sizeof(u32));
  u32 n = 0, *vs = p->forks;
  u32 *bs = vs + p->scope_len + 1, *left = bs + p->scope_len + 1;
  for (u32 i = p->scope_len; i > 0; i--) {
    Bind *b = &p->b[p->scope[i - 1]];
    if (b->kind != B_LAM && b->kind != B_SIDE) continue;
    int shadowed = 0;
    for (u32 j = i; j < p->scope_len && !shadowed; j++) shadowed = same_name(p->b[p->scope[j]].name, b->name);
    if (!shadowed) vs[n++] = p->scope[i - 1];
  }
  for (u32 i = 0; i < n; i++) {
    bs[i] = dup_bind(p->b[vs[i]].name, l, 1, 1);
    scope_push(bs[i]);
  }
  Term br[2];
  fork_branches(s, br, bs, n, left);
  for (u32 i = 0; i < n; i++) scope_pop();
  Term k[3] = {l->term, br[0], br[1]};
  Term body = l->dyn ? node(DSU, 0, 3, k) : node2(SUP, l->lab, br[0], br[1]);
  for (u32 i = n; i-- > 0;) {
    body = close_dup_sides(s, bs[i], body, !l->dyn);
    Label li = *l;
    if (li.dyn) li.term = copy_term(l->term);
    body = dup_of(bs[i], &li, occ_of(vs[i], -1, s->at), body);
  }
  return body;
}

// `&L λx,y{A;B}` and `&(e) λx,y{A;B}` after the `λ`: each variable is
// duplicated under the label and the body is the superposition of A and B,
// where a bare `x` stands for x₀ in A and x₁ in B.
static NOINLINE Term parse_fork(Src *s, const Label *l) {
  Parse *p = ps();
  if (p->fork_side != -1) err_msg(s, "nested forks are not allowed");
  VarName nms[MAX_FLD];
  u32     n = 0;
  do {
    if (n == MAX_FLD) err_expected(s, "at most 16 fork variables");
    nms[n++] = var_name(s);
    take(s, ",");
    blank(s);
  } while (cur(s) != '{');
  need(s, "{");
  u32 bs[MAX_FLD] = {0}, lams[MAX_FLD];
  for (u32 i = 0; i < n; i++) {
    lams[i] = salloc(1);
    bs[i]   = dup_bind(nms[i], l, 1, 0);
    scope_push(bs[i]);
  }
  Term br[2];
  u32  left[MAX_FLD];   // x₀ uses in the left branch
  fork_branches(s, br, bs, n, left);
  for (u32 i = 0; i < n; i++) scope_pop();
  // HVM4 counts fork variables one binder off from where it binds them:
  // with a static label its check never fires; with a dynamic one it counts
  // x₀ in the right branch and calls it x₁. Kept: the same programs are
  // accepted and rejected.
  for (u32 i = 0; i < n && l->dyn; i++) {
    u32 u = p->b[bs[i]].uses[0] - left[i];
    if (u > 1) err_affine(s, nms[i], 1, u, p->b[bs[i]].last[0]);
  }
  Term k[3] = {l->term, br[0], br[1]};
  Term body = l->dyn ? node(DSU, 0, 3, k) : node2(SUP, l->lab, br[0], br[1]);
  for (u32 i = n; i-- > 0;) {
    u32 v = bind_new(nms[i], B_LAM, 0, 0, 0);
    p->b[v].loc[0] = lams[i];
    Label li = *l;
    if (li.dyn) li.term = copy_term(l->term);
    body = lam_at(lams[i], dup_of(bs[i], &li, TERM(OCC, SIDE_ANY, v), body), 1);
  }
  return body;
}

// `&...` after the `&`: `&{}` (erasure), `&L{a,b}`, `&(e){a,b}`, or a fork.
static NOINLINE Term parse_sup(Src *s) {
  blank(s);
  if (cur(s) == '{') {
    need(s, "{");
    need(s, "}");
    return TERM(ERA, 0, 0);
  }
  Label l = read_label(s, "");
  if (take(s, "λ")) return parse_fork(s, &l);
  if (take(s, "!")) return parse_autofork(s, &l);
  blank(s);
  Open o = {s->at, 1};
  need(s, "{");
  Term k[3] = {l.term, 0, 0};
  for (int i = 1; i <= 2; i++) {
    if (!seq_more(s, "}", o)) err_expected(s, "the superposition's second side");
    k[i] = parse_term(s);
    blank(s);
    take(s, ",");
  }
  need_close(s, "}", o);
  return l.dyn ? node(DSU, 0, 3, k) : node2(SUP, l.lab, k[1], k[2]);
}

// Bindings
// ========

// `!f = λv; body` after the `;`: an unscoped lambda pair, each affine.
static NOINLINE Term parse_uns(Src *s, VarName fnm, VarName vnm) {
  Parse *p = ps();
  u32 b[2] = {bind_new(fnm, B_LAM, 0, 0, 0), bind_new(vnm, B_LAM, 0, 0, 0)};
  u32 at   = salloc(2);
  for (u32 i = 0; i < 2; i++) {
    p->b[b[i]].loc[0] = at + i;
    scope_push(b[i]);
  }
  Term t = parse_term(s);
  scope_pop();
  scope_pop();
  for (u32 i = 0; i < 2; i++) {
    if (p->b[b[i]].uses[0] > 1) {
      err_affine(s, p->b[b[i]].name, -1, p->b[b[i]].uses[0], p->b[b[i]].again[0]);
    }
  }
  for (u32 i = 2; i-- > 0;) t = lam_at(at + i, t, p->b[b[i]].uses[0]);
  p->unscoped = 1;
  return node1(UNS, 0, t);
}

// `λ$x. body` and `λ$x,y. body` after the `$`: `!f = λx; f(body)` with a
// fresh f that no name reaches; x is unscoped, later binders scoped.
static NOINLINE Term parse_uns_lam(Src *s) {
  Parse *p = ps();
  VarName vnm = var_name(s);
  u32     f   = bind_new(vnm, B_LAM, 0, 0, 0);
  u32     v   = bind_new(vnm, B_LAM, 0, 0, 0);
  u32 at    = salloc(2);
  p->b[f].loc[0] = at;
  p->b[v].loc[0] = at + 1;
  scope_push(v);
  Term body = lam_rest(s);
  scope_pop();
  if (p->b[v].uses[0] > 1) err_affine(s, vnm, -1, p->b[v].uses[0], p->b[v].again[0]);
  p->b[f].uses[0] = 1;
  Term t = node2(APP, 0, TERM(OCC, SIDE_ANY, f), body);
  t = lam_at(at + 1, t, p->b[v].uses[0]);
  t = lam_at(at, t, 1);
  p->unscoped = 1;
  return node1(UNS, 0, t);
}

// `! &L{x,y} = v; body`, `! &{x,y} = v; body` and `! &(e){x,y} = v; body`
// after the `{`: one dup of v under the label, x standing for its side 0
// and y for its side 1 without subscripts; `&x` lets a side be used many
// times (auto-dup), each side on its own. `&L{x₀,x₁}` names the dup x.
static NOINLINE Term parse_dup_pattern(Src *s, const Label *l, int strict) {
  Parse *p = ps();
  if (strict) err_msg(s, "a dup pattern takes `!`, not `!!`");
  VarName nms[2];
  int     subs[2];
  u8  cloned[2];
  for (int i = 0; i < 2; i++) {
    blank(s);
    cloned[i] = (u8)take(s, "&");
    nms[i]    = var_name(s);
    blank(s);
    subs[i] = take(s, "₀") ? 0 : take(s, "₁") ? 1 : -1;
    blank(s);
    if (i == 0) need(s, ",");
  }
  need(s, "}");
  need(s, "=");
  Term val = parse_term(s);
  blank(s);
  take(s, ";");
  int named = subs[0] == 0 && subs[1] == 1 && same_name(nms[0], nms[1]);
  if (!named && (subs[0] != -1 || subs[1] != -1)) {
    err_msg(s, "a dup pattern binds plain names, or x₀ and x₁ of one name");
  }
  u32 b = dup_bind(nms[0], l, 0, (u8)(named && cloned[0]));
  u32 sides[2];
  if (named) {
    scope_push(b);
  } else {
    for (u32 i = 0; i < 2; i++) {
      sides[i] = bind_new(nms[i], B_SIDE, i, 0, 0);
      p->b[sides[i]].loc[0] = b;
      scope_push(sides[i]);
    }
  }
  Term body = parse_term(s);
  for (u32 i = named ? 1 : 2; i > 0; i--) scope_pop();
  if (named) return dup_of(b, l, val, close_dup_sides(s, b, body, !l->dyn));
  // each side by its own binder's rule, in close_dup_sides' order
  for (u32 k = 0; k < 2; k++) {
    u32 i = l->dyn ? k : 1 - k;
    u32 u = p->b[b].uses[i];
    if (cloned[i]) {
      p->b[b].name = nms[i];
      body = auto_dup(body, b, i, u);
    } else if (u > 1) {
      err_affine(s, nms[i], -1, u, p->b[b].again[i]);
    }
  }
  return dup_of(b, l, val, body);
}

// `!x = v; body` after the `=`: (λx.body)(v), with `!!` (strict) λ{λx.body}.
// `!f = λv; body` is an unscoped lambda instead; as in HVM4 a name must
// follow that λ, so `!f = λ{..}` is an error.
static NOINLINE Term parse_let(Src *s, VarName nm, int strict, u8 cloned) {
  blank(s);
  Src probe = *s;
  if (take(&probe, "λ")) {
    VarName vnm = var_name(&probe);
    if (take(&probe, ";")) {
      *s = probe;
      return parse_uns(s, nm, vnm);
    }
  }
  Term val = parse_term(s);
  blank(s);
  take(s, ";");
  Term lam = lam_scope(s, nm, cloned, 0);
  if (strict) lam = node1(USE, 0, lam);
  return node2(APP, 0, lam, val);
}

// `!x&L = v; body`, `!x& = v; body` or `!x&(e) = v; body` after the `&`.
static NOINLINE Term parse_dup(Src *s, VarName nm, u8 cloned) {
  Label l = read_label(s, "=");
  u32   b = dup_bind(nm, &l, 0, cloned);
  need(s, "=");
  Term val = parse_term(s);
  blank(s);
  take(s, ";");
  scope_push(b);
  Term body = parse_term(s);
  scope_pop();
  body = close_dup_sides(s, b, body, !l.dyn);
  return dup_of(b, &l, val, body);
}

// `!...` after the `!`: a let (`!!` strict, `!&x` cloned), an unscoped
// lambda, or a dup.
static NOINLINE Term parse_bang(Src *s) {
  blank(s);
  int strict = take(s, "!");
  blank(s);
  u8  cloned = (u8)take(s, "&");
  if (cloned) {
    // `&{`, `&(` or `&L{`: a dup pattern, not a cloned name
    blank(s);
    Src probe = *s;
    if (cur(&probe) != '{' && cur(&probe) != '(') {
      u32 len;
      name_span(&probe, &len);
      blank(&probe);
    }
    if (cur(&probe) == '{' || cur(s) == '(') {
      Label l = cur(s) == '{' ? (Label){0, fresh_labs(1), 0} : read_label(s, "");
      need(s, "{");
      return parse_dup_pattern(s, &l, strict);
    }
  }
  VarName nm = var_name(s);
  if (take(s, "=")) return parse_let(s, nm, strict, cloned);
  need(s, "&");
  return parse_dup(s, nm, cloned);
}

static NOINLINE Term parse_ctr(Src *s) {
  Parse *p = ps();
  u32 hash = s->at - 1;   // parse_atom took the `#`
  u32 id   = named_id(s, '#');
  u32 n    = 0;
  blank(s);
  if (take(s, "{")) {
    Open o = open_from(s, hash);
    // Fields wait on Parse.args (not in this frame: nesting depth costs stack).
    u32 base = p->args_len;
    while (seq_more(s, "}", o)) {
      if (n == MAX_FLD) err_expected(s, "at most 16 constructor fields");
      Term fld = parse_term(s);
      p->args = grow(p->args, &p->args_cap, (u64)p->args_len + 1, sizeof(Term));
      p->args[p->args_len++] = fld;
      n++;
      blank(s);
      take(s, ",");
      blank(s);
    }
    need(s, "}");
    p->args_len = base;
    if (n > 0) return node((u8)(C00 + n), id, n, p->args + base);
  }
  return ctr0(id);
}

static NOINLINE Term parse_pri(Src *s) {
  Parse *p = ps();
  u32 len, at = name_span(s, &len);
  u32 id = prim_id(s->txt + at, len);
  blank(s);
  if (id == ~0u) err_expected(s, "known primitive");
  if (id < PRIM_COUNT) p->used[id] = 1;   // a library's (PRIM_FFI) is not counted here
  if (cur(s) != '(') err_expected(s, "primitive application");
  Open o = {s->at, 1};
  need(s, "(");
  // Arguments wait on Parse.args, as a constructor's fields: a library's
  // primitive takes up to PRIM_FFI_ARITY_MAX.
  u32 ar = PRIM_ARITY(id), base = p->args_len;
  for (u32 i = 0; i < ar; i++) {
    if (!seq_more(s, ")", o)) err_expected(s, "argument");
    Term arg = parse_term(s);
    p->args = grow(p->args, &p->args_cap, (u64)p->args_len + 1, sizeof(Term));
    p->args[p->args_len++] = arg;
    blank(s);
    take(s, ",");
  }
  if (seq_more(s, ")", o)) err_expected(s, "end of argument list");
  need(s, ")");
  p->args_len = base;
  return node(PRI, id, ar, p->args + base);
}

static NOINLINE Term parse_list(Src *s) {
  Parse *p = ps();
  step(s);
  Open o = open_from(s, s->at - 1);
  blank(s);
  if (cur(s) == ']') { step(s); return ctr0(CTR_NIL); }
  // Elements chain as they come: each Con's tail slot is filled next.
  u32 head = salloc(1), tip = head;
  while (seq_more(s, "]", o)) {
    Term el  = parse_term(s);
    Term con = ctr2(CTR_CON, el, 0);
    p->w[tip] = con;
    tip    = VAL(con) + 1;
    blank(s);
    take(s, ",");
    blank(s);
  }
  need(s, "]");
  p->w[tip] = ctr0(CTR_NIL);
  return p->w[head];
}

static NOINLINE Term parse_str(Src *s) {
  Parse *p = ps();
  char fence = cur(s);
  step(s);
  Open o = open_from(s, s->at - 1);
  u32 head = salloc(1), tip = head;
  while (cur(s) != fence) {
    if (s->at >= s->end) err_unclosed(s, fence == '"' ? "\"" : "`", o);
    u32  c   = char_esc(s);
    Term con = ctr2(CTR_CON, ctr1(CTR_CHR, TERM(NUM, 0, c)), 0);
    p->w[tip] = con;
    tip    = VAL(con) + 1;
  }
  step(s);
  p->w[tip] = ctr0(CTR_NIL);
  return p->w[head];
}

// Digits: a u32 (wrapping, as HVM4 reads it), or before `n` a nat: `3n` is
// #SUC{#SUC{#SUC{#ZER}}} and `2n+t` two #SUCs over t. Each #SUC is a word,
// so a nat beyond the heap's free room is refused before it is built.
static NOINLINE Term parse_number(Src *s) {
  u32 k = 0, num = 0;
  u64 big = 0;
  for (char c; is_digit(c = ch(s, k)); k++) {
    num = num * 10 + (u32)(c - '0');
    if (big <= UINT32_MAX) big = big * 10 + (u64)(c - '0');
  }
  steps(s, k);
  if (!take(s, "n")) {
    blank(s);
    return TERM(NUM, 0, num);
  }
  if (big > RT->heap.cap - heap_used()) {
    err_msg(s, "nat literal %.*sn is larger than the heap's %llu free words", (int)k,
            s->txt + s->at - k - 1, (unsigned long long)(RT->heap.cap - heap_used()));
  }
  Term t = take(s, "+") ? parse_term(s) : ctr0(CTR_ZER);
  for (u64 i = 0; i < big; i++) t = ctr1(CTR_SUC, t);
  return t;
}

static Term parse_atom(Src *s) {
  guard(s);
  blank(s);
  if (take(s, "λ")) return parse_lam(s);
  if (take(s, "!")) return parse_bang(s);
  if (take(s, "&")) return parse_sup(s);
  if (take(s, "#")) return parse_ctr(s);
  if (take(s, "@")) {
    return TERM(REF, named_id(s, '@'), 0);
  }
  if (take(s, "%")) return parse_pri(s);
  if (take(s, "^")) {
    blank(s);
    if (cur(s) == '(') {
      need(s, "(");
      Term f = parse_term(s);
      Term x = parse_term(s);
      need(s, ")");
      return node2(DRY, 0, f, x);
    }
    return TERM(NAM, nick_name(s, "name"), 0);
  }
  if (take(s, "↑")) return node1(INC, 0, parse_atom(s));
  if (take(s, "*")) return TERM(ANY, 0, 0);
  if (take(s, "(")) {
    Open o = open_from(s, s->at - 1);
    Term t = parse_term(s);
    need_close(s, ")", o);
    return t;
  }
  char c = cur(s);
  if (c == '[')              return parse_list(s);
  if (c == '\'')             return ctr1(CTR_CHR, TERM(NUM, 0, char_lit(s)));
  if (c == '"' || c == '`')  return parse_str(s);
  if (is_digit(c))           return parse_number(s);
  return parse_var(s);
}

// Definitions
// ===========

// The scratch index a word points at: an occurrence's binder slot (a
// lambda's, a dup's node, a dynamic dup's slot for its side) or a located
// word's node; 0 for none (nothing points at word 0, the root's).
static u32 w_target(Term t) {
  Parse *p = ps();
  if (TAG(t) == OCC) {
    Bind *b = &p->b[VAL(t)];
    return b->kind == B_DYN ? b->loc[EXT(t) == 1] : b->loc[0];
  }
  return HAS_LOC(TAG(t)) ? VAL(t) : 0;
}

// The scratch words [*lo, *hi) that hold every node of the case term t
// (empty when it has none); 0 when a word there points outside them, and
// the case cannot be copied on its own.
static int case_span(Term t, u32 *lo, u32 *hi) {
  Parse *p = ps();
  u32 a = ~0u, z = 0, n = 0;
  walk_push(&n, t);
  while (n > 0) {
    Term x  = p->walk[--n];
    u32  ar = TAG(x) == OCC ? 0 : term_arity(x);
    if (ar == 0) continue;
    a = VAL(x) < a ? VAL(x) : a;
    z = VAL(x) + ar > z ? VAL(x) + ar : z;
    for (u32 i = 0; i < ar; i++) walk_push(&n, p->w[VAL(x) + i]);
  }
  if (z == 0) a = 0;
  *lo = a;
  *hi = z;
  u32 to = w_target(t);
  if (to && (to < a || to >= z)) return 0;
  for (u32 i = a; i < z; i++) {
    to = w_target(p->w[i]);
    if (to && (to < a || to >= z)) return 0;
  }
  return z - a <= EXT_MASK;
}

// The spans of a match root's cases into Parse.span (term.h, "Match
// templates"): each hit, then the last miss. Their count, or 0 when one
// of them cannot be copied on its own.
static u32 match_spans(void) {
  Parse *p = ps();
  u32  k = 0, ok = 1;
  Term m = p->w[0];
  for (;;) {
    Term hit  = p->w[VAL(m) + 0];
    Term miss = p->w[VAL(m) + 1];
    int  last = !TPL_IS_MATCH(miss);
    p->span = grow(p->span, &p->span_cap, 2 * ((u64)k + 2), sizeof(u32));
    ok &= case_span(hit, &p->span[2 * k], &p->span[2 * k + 1]);
    k++;
    if (last) {
      ok &= case_span(miss, &p->span[2 * k], &p->span[2 * k + 1]);
      k++;
      return ok ? k : 0;
    }
    m = miss;
  }
}

// Copies the scratch into the heap as the template of book entry `id`:
// word 0, a match root's header and spans, then the scratch's other words.
static void emit(Src *s, u32 id) {
  Parse *p = ps();
  u32 match = TPL_IS_MATCH(p->w[0]);
  u32 k     = match ? match_spans() : 0;
  u32 pre   = match ? 1 + k : 0;           // words put after the root
  u32 base  = heap_alloc(p->w_len + pre);
  if (base == 0) err_msg(s, "heap exhausted while loading the program");
  u32 at = base + pre;                     // where scratch index i goes: at + i
  for (u32 i = 0; i < p->w_len; i++) {
    Term t  = p->w[i];
    u32  tg = TAG(t);
    if (tg == OCC) {
      Bind *b   = &p->b[VAL(t)];
      u32   loc = at + w_target(t);
      if (b->kind == B_DUP) t = TERM(EXT(t) == 1 ? DP1 : DP0, b->lab, loc);
      else                  t = TERM(VAR, 0, loc);
    } else if (HAS_LOC(tg)) {
      t = TERM(tg, EXT(t), VAL(t) + at);
    }
    RT->heap.at[i == 0 ? base : at + i] = t;
  }
  if (match) {
    RT->heap.at[base + 1] = TERM(NUM, k > 0, k);
    for (u32 i = 0; i < k; i++) {
      u32 lo = p->span[2 * i], hi = p->span[2 * i + 1];
      RT->heap.at[base + TPL_SPAN0 + i] = TERM(NUM, hi - lo, at + lo);
    }
  }
  RT->heap.book[id]     = base;
  RT->heap.book_len[id] = p->w_len + pre;
}

static int parse_defs(Src *s);

// Source files are read whole, up to SRC_MAX bytes: a larger one (or an
// endless one, /dev/zero) is refused before it can take the machine's
// memory. NULL after a message.
#define SRC_MAX (256u << 20)

// `from`: the #include that names the file (NULL: the program itself),
// which a message points at.
static void file_error(const Src *from, const char *what, const char *path,
                       const char *why) {
  if (from) {
    u32 row, col;
    src_where(from, from->at, &row, &col);
    fprintf(ERR_OUT, "hvm4g: %s:%u:%u: %s '%s' (#include): %s\n", from->path,
            row, col, what, path, why);
  } else {
    fprintf(ERR_OUT, "hvm4g: %s '%s': %s\n", what, path, why);
  }
}

static char *read_file(const char *path, u32 *len, const Src *from) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    file_error(from, "cannot open", path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char  *buf = NULL;
  int    big = 0;
  for (;;) {
    char *nb = realloc(buf, cap + 1);
    if (!nb) break;
    buf = nb;
    n  += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    if (cap >= SRC_MAX) { big = 1; break; }
    cap *= 2;
  }
  int bad = ferror(f);
  int err = errno;
  fclose(f);
  if (big || bad || !buf) {
    char limit[64];
    snprintf(limit, sizeof limit, "larger than the input size limit (%u MiB)", SRC_MAX >> 20);
    if (big)       file_error(from, "cannot read", path, limit);
    else if (!buf) file_error(from, "cannot read", path, "out of memory");
    else           file_error(from, "cannot read", path, strerror(err));
    free(buf);
    return NULL;
  }
  buf[n] = 0;
  *len = (u32)n;
  return buf;
}

static int seen(const char *path) {
  Parse *p = ps();
  for (u32 i = 0; i < p->seen_len; i++) {
    if (strcmp(p->seen[i], path) == 0) return 1;
  }
  char **ns = realloc(p->seen, (p->seen_len + 1) * sizeof(char *));
  if (!ns) oom();
  p->seen = ns;
  p->seen[p->seen_len] = strdup(path);
  if (!p->seen[p->seen_len]) oom();
  p->seen_len++;
  return 0;
}

// Parses `src` (named `file`, which must stay alive) to its end; the
// program's own text takes the span parse_hide named, an included one none.
static void parse_src(const char *file, const char *src, u32 len, int top) {
  Parse *p = ps();
  // an editor's UTF-8 byte-order mark is no part of the program
  u32  bom = len >= 3 && memcmp(src, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
  Src  s   = {.txt = src, .end = len, .at = bom, .start = bom, .path = file};
  if (top) {
    s.hide_at  = p->hide_at;
    s.hide_len = p->hide_len;
  }
  Src *out = p->cur;
  p->cur = &s;
  parse_defs(&s);
  p->cur = out;
}

// Includes nest on the C stack (parse_include -> parse_src -> parse_defs), so
// their depth is bounded; a chain deeper than this is refused, not followed.
#define INCLUDE_DEPTH_MAX 128

static void parse_include(Src *s) {
  Parse *p = ps();
  blank(s);
  Src here = *s;   // a file that cannot be read is reported here
  need(s, "\"");
  u32 at = s->at;
  while (cur(s) != '"' && s->at < s->end) step(s);
  u32 len = s->at - at;
  need(s, "\"");
  if (p->include_depth >= INCLUDE_DEPTH_MAX) {
    err_msg(s, "includes nested deeper than %u files: '%.*s'", INCLUDE_DEPTH_MAX, (int)len, s->txt + at);
  }
  // The joined path is built on the heap and checked against PATH_MAX:
  // cut short, it could name a different file that exists.
  const char *slash = strrchr(s->path, '/');
  int   dir  = (s->txt[at] == '/' || !slash) ? 0 : (int)(slash - s->path);
  char *path = NULL;
  int   plen = dir ? asprintf(&path, "%.*s/%.*s", dir, s->path, (int)len, s->txt + at)
                   : asprintf(&path, "%.*s", (int)len, s->txt + at);
  if (plen < 0) oom();
  if (plen >= PATH_MAX) {
    err_head(s);
    fprintf(stderr, "- include path of %d bytes is longer than the system allows (%d): '%s'\n", plen, PATH_MAX, path);
    free(path);
    die();
  }
  // Files are known by their real path, so `a/../b.hvm4` and cycles through
  // different spellings are still read once.
  char *real = realpath(path, NULL);
  if (real) {
    free(path);
    path = real;
  }
  int again = seen(path);
  free(path);
  if (again) return;
  u32   n;
  char *src = read_file(p->seen[p->seen_len - 1], &n, &here);
  if (!src) die();
  (void)n;
  // kept in Parse.texts while read, so that an error inside frees it
  p->texts = grow(p->texts, &p->texts_cap, (u64)p->include_depth + 1, sizeof(char *));
  p->texts[p->include_depth++] = src;
  parse_src(p->seen[p->seen_len - 1], src, (u32)strlen(src), 0);
  p->include_depth--;
  free(src);
}

static int parse_defs(Src *s) {
  Parse *p = ps();
  for (;;) {
    blank(s);
    if (s->at >= s->end) return 0;
    if (take(s, "#include")) { parse_include(s); continue; }
    if (!take(s, "@")) err_expected(s, "definition or #include");
    u32 id = named_id(s, '@');
    need(s, "=");
    p->w_len = 0;
    p->b_len = 0;
    p->args_len = 0;
    p->scope_len = 0;
    p->fork_side = -1;
    p->renames = 0;
    salloc(1);
    Term root = parse_term(s);
    p->w[0] = root;
    if (p->renames) rename_dups();
    emit(s, id);
  }
}

// Lowest address recursion may reach: the thread's stack minus a margin.
static void stack_limit(void) {
  Parse *p = ps();
  char here;
  uintptr_t top = (uintptr_t)&here;
  p->stack_lo = stack_floor(256u << 10);
  if (p->stack_lo == 0) p->stack_lo = top - (7u << 20);   // unknown: assume 8 MiB
  if (p->stack_lo > top) p->stack_lo = top;
}

static int run(const char *file, const char *src) {
  Parse *p = ps();
  stack_limit();
  if (setjmp(p->fail)) {
    while (p->include_depth > 0) free(p->texts[--p->include_depth]);
    p->fork_side = -1;
    p->cur       = NULL;
    p->hide_at   = p->hide_len = 0;
    return 1;
  }
  seen(file);
  parse_src(p->seen[p->seen_len - 1], src, (u32)strlen(src), 1);
  p->hide_at = p->hide_len = 0;
  return 0;
}

void parse_hide(u32 at, u32 len) {
  ps()->hide_at  = at;
  ps()->hide_len = len;
}

void parse_set_errors(FILE *out) {
  ps()->errs = out;
}

void parse_reset(void) {
  Parse *p = ps();
  p->fresh = 0;
  memset(p->used, 0, sizeof p->used);
  for (u32 i = 0; i < p->seen_len; i++) free(p->seen[i]);
  p->seen_len = 0;
}

int parse_text(const char *file, const char *src) {
  return run(file, src);
}

int parse_file(const char *path) {
  u32   len;
  char *src = read_file(path, &len, NULL);
  if (!src) return 1;
  char *abs = realpath(path, NULL);
  int   rc  = run(abs ? abs : path, src);
  free(abs);
  free(src);
  return rc;
}

int parse_used(u32 prim) {
  return prim < PRIM_COUNT && ps()->used[prim];
}

int parse_unscoped(void) {
  return ps()->unscoped;
}

void parse_free(void) {
  Parse *p = ps();
  parse_reset();
  free(p->seen);
  free(p->w);
  free(p->b);
  free(p->scope);
  free(p->args);
  free(p->walk);
  free(p->span);
  free(p->forks);
  free(p->texts);
  *p = (Parse){0};
}
