// names.h: nicks (constructor names, labels) and the reference name table.
//
// A nick packs a name into 24 bits: base 64 over `_a-zA-Z0-9$` (`_` = 0),
// 6 bits a character, so only the last 4 characters survive, as in HVM4
// (`#Foobar` and `#obar` are the same constructor, `&(5)` and `&e` the same
// label). References (`@name`) keep their full names in a hashed table whose
// ids are book ids.

#ifndef HVM4G_NAMES_H
#define HVM4G_NAMES_H

#include <stdio.h>
#include "core/term.h"

// Builtin constructor nicks (#NIL #CON #CHR #ZER #SUC, capitals as in
// HVM4), set by names_init().
extern u32 NICK_NIL, NICK_CON, NICK_CHR, NICK_ZER, NICK_SUC;

void names_init(void);

// Nicks
int  nick_digit(int c);                  // 0..63, or -1 if not a name char
u32  nick_of(const char *s, u32 len);    // encode (keeps the last 4 chars)
void nick_print(FILE *f, u32 nick);      // decode: shortest spelling
int  nick_str(u32 nick, char *buf);      // same into buf (>= 5 bytes); length

// Reference table: name <-> book id
u32         table_id(const char *s, u32 len); // find or add; ~0u when full
u32         table_find(const char *s, u32 len); // find only; ~0u if absent
const char *table_name(u32 id);          // NULL if id unknown
u32         table_count(void);

// Operators: OP_x -> its infix spelling ("+", "<<", ..); NULL if unknown.
const char *op_name(u32 op);

// Primitives: `%name` -> PRIM_x id (term.h); ~0u when unknown.
u32         prim_id(const char *s, u32 len);
const char *prim_name(u32 id);

#endif
