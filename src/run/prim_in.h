// prim_in.h: what the host primitives' files (prim.c, prim_io.c) share:
// building terms on a worker's arena, and reading a string argument.

#ifndef HVM4G_PRIM_IN_H
#define HVM4G_PRIM_IN_H

#include "core/core.h"

// Terms
Term prim_ctr(Wnf *w, u32 nick, u32 ari, const Term *args);
Term prim_ctr1(Wnf *w, u32 nick, Term arg);          // #NICK{arg}
Term prim_string(Wnf *w, const char *s, size_t n);   // UTF-8 bytes -> "..."
Term prim_err(Wnf *w, const char *fmt, ...)          // #ERR{"..."}
  __attribute__((format(printf, 2, 3)));
Term prim_ok(Wnf *w, Term t);                        // #OK{t}
Term prim_ok_nil(Wnf *w);                            // #OK{[]}

// String arguments
// ================
// A string argument is a list of #CHR{n}, read head first. Where a cell, a
// head or a code point is &L{a,b}, ↑a or &{}, the call is lifted over it:
// &L{%p(.. a ..), %p(.. b ..)} (the call's other arguments cloned with L),
// ↑%p(.. a ..), or &{}, as HVM4 lifts its primitives.
typedef enum {
  STR_DONE,    // the whole string: its code points in *codes (malloc'd)
  STR_LIFTED,  // *out holds the lifted call (or &{})
  STR_SHAPE,   // not a list of #CHR{number}
} StrRead;

// Reads argument `arg` (0 or 1) of the primitive `pri` as a string.
StrRead prim_str_arg(Wnf *w, Term pri, u32 arg, u32 **codes, u32 *len, Term *out);

// Argument `arg` of pri in weak normal form, in *val: 0. Or, where it is
// &{}, ↑x or &L{x,y}, 1 with the call lifted over it in *out.
int prim_lift(Wnf *w, Term pri, u32 arg, Term *val, Term *out);

// The code points as a NUL-terminated UTF-8 string (malloc'd); NULL when one
// is not a Unicode scalar value (*bad: its index).
char *prim_utf8(const u32 *codes, u32 len, u32 *bad);

// Argument 0 of pri, a path (or a command), as prim_io reads it: 1 with
// the UTF-8 string in *s (malloc'd), or 0 with the result in *out.
int prim_str_path(Wnf *w, Term pri, char **s, Term *out);

// The handle primitives (prim_task.c): streams, timers, processes; 0 for
// any other primitive.
Term prim_task(Wnf *w, Term pri);

#endif
