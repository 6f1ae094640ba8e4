// parse.h: HVM4 source text -> book templates in the heap.
//
// parse_file reads a program (following `#include "file"`, each file once,
// resolved relative to the including file), checks bindings and affinity as
// HVM4 does, and writes every definition `@name = term` as a template:
// RT->heap.book[id] = loc, RT->heap.book_len[id] = len (id = table_id(name)). Errors print
// HVM4's `PARSE_ERROR (file:line:col)` report on stderr; the result is then
// non-zero. Call heap_init and names_init first.
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
//   C00+n ext=ctor nick [field0 .. field(n-1)]  (C00: val 0, no node)
//   MAT ext=ctor nick [hit, miss]   SWI ext=number [hit, miss]
//       `λ{#A:a; #B:b; d}` = MAT(A)[a, MAT(B)[b, d]]: right-nested, `miss`
//       is the next case or the default; a chain with no default ends in
//       NUM 0 (as HVM4: a miss there is not defined). `λ{0:a; d}` is SWI
//       ext=0 [a, d].
//       Patterns `[]` `<>` `0n` `1n+` are MAT on #NIL #CON #ZER #SUC
//       (names.h NICK_x); `'c'` is SWI on the code point.
//   USE [fun]               `λ{f}`;  `λ{}` is ERA.
//   OP2 ext=OP_x [lhs, rhs] EQL/AND/OR [lhs, rhs] (=== .&. .|.)
//   RED [lhs, rhs]          (lhs ~> rhs)
//   INC [term]              (↑term)
//   PRI ext=PRIM_x [arg0 .. arg(PRIM_ARITY-1)]  (`%add(a,b)`, `%log(s)`)
//   DSU [lab, a, b]         `&(lab){a,b}`
//   DDU [lab, val, body]    `!x&(lab) = val; t`: body is the template of
//       λa.λb.t, two LAMs whose vars are x₀ (a) and x₁ (b). Once lab is a
//       NUM n, it means ((body X₀) X₁) with X a fresh DUP of val, label n
//       (docs/hvm4/interactions/ddu_*.md).
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

#include <stdio.h>
#include "core/term.h"

// 0 on success; otherwise an error was printed on stderr.
int parse_file(const char *path);

// Parses source text held in memory, `file` naming it in messages and
// anchoring relative includes. Same result as parse_file.
int parse_text(const char *file, const char *src);

// Where messages go (NULL: stderr). Messages carry no colour: a terminal's
// caller adds it.
void parse_set_errors(FILE *out);

// Forgets the files seen and restarts fresh labels, so the next program
// parses as in a new process (book and names are kept). For tests.
void parse_reset(void);

// Whether the program read calls primitive `prim` (PRIM_x, term.h).
int parse_used(u32 prim);

// Whether the program read has an unscoped binder (`! f = λ v; t`): its
// variable may be bound after the normal form's walk passed its uses.
int parse_unscoped(void);

#endif
