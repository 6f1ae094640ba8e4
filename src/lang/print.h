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

void print_term(FILE *f, Term t);
void print_quoted(FILE *f, Term t);
// Whether print_term(t) would never end: t's graph has a cycle that no
// name breaks (a DUP that came to hold one of its own copies).
int  print_infinite(Term t);

// Code point c as UTF-8 in b: the byte count (1..4). A value past U+10FFFF
// keeps the four-byte pattern, each byte cut to 8 bits.
u32 utf8_encode(u32 c, char b[4]);

#endif
