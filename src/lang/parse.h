// parse.h: HVM4 source text -> book templates in the heap.
//
// parse_file reads a program (following `#include "file"`, each file once,
// resolved relative to the including file), checks bindings and affinity as
// HVM4 does, and writes every definition `@name = term` as a template:
// RT->heap.book[id] = loc, RT->heap.book_len[id] = len (id = table_id(name)). Errors print
// HVM4's `PARSE_ERROR (file:line:col)` report on stderr (the column counts
// characters, not bytes; a leading UTF-8 byte-order mark is skipped); the
// result is then non-zero. Call heap_init first.
//
// Template layout (docs/architecture.md): `len` words, word 0 = root (a
// match's header and case spans after it: term.h), then the nodes, linked:
// a VAR holds its LAM's node location (the body slot), DP0/DP1 hold the
// location of their DUP node [expr, body]; LAM EXT is 0 or LAM_ERA (binder
// never used). Node layouts, by tag:
//
//   APP [fun, arg]          DRY [fun, arg]  (^(f x))   NAM ext=nick, val 0
//   LAM [body]              SUP ext=label [a, b]        ERA, ANY: val 0
//   DUP ext=label [expr, body]: a binder in term position; WNF continues
//       with body; DP0/DP1 (ext = label) point at the node. A DUP whose
//       vars are unused is kept (HVM4 keeps it too).
//   REF ext=book id, val 0  NUM val=u32
//   C00+n ext=ctor id [field0 .. field(n-1)]  (C00: val 0, no node)
//   MAT ext=ctor id [hit, miss]   SWI ext=number [hit, miss]
//       `λ{#A:a; #B:b; d}` = MAT(A)[a, MAT(B)[b, d]]: right-nested, `miss`
//       is the next case or the default; a chain with no default ends in
//       NUM 0 (as HVM4: a miss there is not defined). `λ{0:a; d}` is SWI
//       ext=0 [a, d].
//       Patterns `[]` `<>` `0n` `1n+` are MAT on #NIL #CON #ZER #SUC
//       (names.h CTR_x); `'c'` is SWI on the code point.
//   USE [fun]               `λ{f}`;  `λ{}` is ERA.
//   OP2 ext=OP_x [lhs, rhs] EQL/AND/OR [lhs, rhs] (=== .&. .|.)
//   RED [lhs, rhs]          (lhs ~> rhs)
//   INC [term]              (↑term)
//   PRI ext=PRIM_x [arg0 .. arg(PRIM_ARITY-1)]  (`%add(a,b)`, `%log(s)`)
//   DSU [lab, a, b]         `&(lab){a,b}`
//   DDU [lab, val, body]    `!x&(lab) = val; t`: body is the template of
//       λa.λb.t, two LAMs whose vars are x₀ (a) and x₁ (b). Once lab is a
//       NUM n, it means ((body X₀) X₁) with X a fresh DUP of val, label n
//       (the R_DDU_* rules, src/core/wnf.h wnf_run).
//   UNS [body]              `! f = λ v; t` (`!${f,v}; t`): body is the
//       template of λf.λv.t (LAM node F [LAM V], V [t]); t may use f and v
//       once each (VAR to F's and V's node). WNF UNS: take two fresh words
//       x, y; build X = LAM at x with body VAR(y), Y = LAM at y with body
//       X (so Y = λy.λx.y, where x's var escapes); the result is
//       APP(APP(body, Y), VAR(x)), i.e. t[f := λy.λx.y, v := x].
//
// Sugar is expanded as HVM4 does: lets are APP(LAM, val) (`!!` adds USE),
// `&x` binders get automatic DUP chains with fresh labels (from 0x800000,
// counting across the whole program), forks become λx.!X&L=x; ... &L{A,B},
// lists/strings/chars/nats become #CON/#NIL/#CHR/#SUC/#ZER constructors.
// The template may hold a few unreachable words (scratch slots); they are
// relocated like the rest and never read.

#ifndef HVM4G_PARSE_H
#define HVM4G_PARSE_H

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include "core/term.h"

// The parser's state, RT's (RT->lang->parse, lang/lang_rt.h). A zeroed one
// is ready: the scratch arrays grow on first use and are kept from one
// definition (and one program) to the next; parse_free frees them.
typedef struct {
  // What the program read so far tells (parse_used, parse_unscoped,
  // automatic labels), until parse_reset
  char      **seen;        // files already parsed (real paths)
  u32         seen_len;
  u32         fresh;       // automatic labels taken
  u8          used[PRIM_COUNT];   // primitives the program calls
  int         unscoped;    // the program has an unscoped binder
  FILE       *errs;        // parse_set_errors (NULL: stderr)
  u32         hide_at, hide_len;   // parse_hide, for the next program's text
  // One definition's scratch (parse.c)
  Term       *w;           // words, laid out as the template
  u32         w_len, w_cap;
  struct Bind *b;          // binder records
  u32         b_len, b_cap;
  u32        *scope;       // binders in scope, innermost last
  u32         scope_len, scope_cap;
  Term       *args;        // pending constructor fields
  u32         args_len, args_cap;
  Term       *walk;        // explicit stack for term walks
  u32         walk_cap;
  u32        *span;        // a match template's case spans
  u32         span_cap;
  u32        *forks;       // a fork's binders (forks do not nest)
  u32         forks_cap;
  int         fork_side;   // -1 outside forks, else the branch
  int         renames;     // auto-dups wait for rename_dups
  // One parse_file / parse_text call
  jmp_buf     fail;        // where a parse error goes
  struct Src *cur;         // the text being read, for messages
  uintptr_t   stack_lo;    // lowest safe stack address
  char      **texts;       // the included files being read, innermost last
  u32         texts_cap;
  u32         include_depth;   // texts being read
} Parse;

// 0 on success; otherwise an error was printed on stderr.
int parse_file(const char *path);

// Parses source text held in memory, `file` naming it in messages and
// anchoring relative includes. Same result as parse_file.
int parse_text(const char *file, const char *src);

// Where messages go (NULL: stderr). Messages carry no colour: a terminal's
// caller adds it.
void parse_set_errors(FILE *out);

// The next program's text (parse_text's or parse_file's, not its
// includes') has bytes [at, at + len) that its user did not write, such as
// the `@main = ` that `hvm4g -e` puts before the term: message positions do
// not count them.
void parse_hide(u32 at, u32 len);

// Forgets the files seen and restarts fresh labels, so the next program
// parses as in a new process (book and names are kept). For tests.
void parse_reset(void);

// Whether the program read calls primitive `prim` (PRIM_x, term.h).
int parse_used(u32 prim);

// Whether the program read has an unscoped binder (`! f = λ v; t`): its
// variable may be bound after the normal form's walk passed its uses.
int parse_unscoped(void);

// Frees RT's parser state (lang_rt_close).
void parse_free(void);

#endif
