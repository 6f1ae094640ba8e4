// print.h: terms as text, in HVM4's output format.
//
// print_term prints a linked heap term (a normal form, or any term: a book
// template too): lambdas named a, b, .. in order of appearance, dup nodes
// A, B, .. with their definitions `!A&L=v;` after the term; VAR/DP0/DP1
// whose slot holds a SUB word print the substituted term. print_quoted
// prints a quoted (collapsed) term, names by binder level. Both use an
// explicit stack: any depth or length is fine. Neither prints a newline.

#ifndef HVM4G_PRINT_H
#define HVM4G_PRINT_H

#include <stdio.h>
#include "core/term.h"

// The printer's state, RT's (RT->lang->print, lang/lang_rt.h): its work
// stack and name maps, kept from one term to the next (a collapse prints
// many) and freed by print_free. A zeroed one is ready.
typedef struct {
  struct PrintItem *stk;    // work items (print.c)
  u32               stk_len, stk_cap;
  u32              *lams;   // open addressing: (loc + 1, name) pairs
  u32               lams_cap, lams_len;
  u32              *nams;   // fresh names: (val + 1, number) pairs
  u32               nams_cap, nams_len;
  u32              *dupm;   // loc + 1 -> index + 1 into dups
  u32               dupm_cap, dupm_len;
  struct PrintDup  *dups;   // dup nodes named, in order
  u32               dups_len, dups_cap;
  int               quoted; // print_quoted: lambdas named by depth
  int               failed; // out of memory: print what we can, then stop
} Printer;

void print_term(FILE *f, Term t);
void print_quoted(FILE *f, Term t);
// Whether print_term(t) would never end: t's graph has a cycle that no
// name breaks (a DUP that came to hold one of its own copies).
int  print_infinite(Term t);
// Whether t reaches itself through what reducing it reads: a DUP that holds
// one of its own copies, which a copy of it unrolls without end.
int  print_cyclic(Term t);

// Code point c as UTF-8 in b: the byte count (1..4). A value past U+10FFFF
// keeps the four-byte pattern, each byte cut to 8 bits.
u32 utf8_encode(u32 c, char b[4]);

// Frees RT's printer state (lang_rt_close).
void print_free(void);

#endif
