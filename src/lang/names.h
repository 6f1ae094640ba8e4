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

// A name character's digit (nick_digit's) as a constant expression, and
// the nick of a three-character name.
#define NICK_DIGIT(c) ((c) == '_' ? 0 : (c) >= 'a' && (c) <= 'z' ? 1 + (c) - 'a' : \
                       (c) >= 'A' && (c) <= 'Z' ? 27 + (c) - 'A' :              \
                       (c) >= '0' && (c) <= '9' ? 53 + (c) - '0' : 63)
#define NICK3(a, b, c) ((u32)(NICK_DIGIT(a) << 12 | NICK_DIGIT(b) << 6 | NICK_DIGIT(c)))

// Builtin constructor nicks (#NIL #CON #CHR #ZER #SUC, capitals as in
// HVM4; `#Nil` is an ordinary user constructor).
#define NICK_NIL NICK3('N', 'I', 'L')
#define NICK_CON NICK3('C', 'O', 'N')
#define NICK_CHR NICK3('C', 'H', 'R')
#define NICK_ZER NICK3('Z', 'E', 'R')
#define NICK_SUC NICK3('S', 'U', 'C')

// Nothing to set up: the nicks above are constants and the reference table
// lives in RT->lang (lang_rt.h). Kept until its callers drop it.
static inline void names_init(void) {}

// Nicks
int  nick_digit(int c);                  // 0..63, or -1 if not a name char
u32  nick_of(const char *s, u32 len);    // encode (keeps the last 4 chars)
void nick_print(FILE *f, u32 nick);      // decode: shortest spelling
int  nick_str(u32 nick, char *buf);      // same into buf (>= 5 bytes); length

// Reference table: name <-> book id, RT's (RT->lang->names), made as
// names come and freed by lang_rt_close. Open addressing over full names;
// ids are dense (book ids).
typedef struct {
  char **name;       // id -> name
  u32    len, cap;   // ids given, room in `name`
  u32   *slot;       // hash slot -> id + 1 (0 = empty)
  u32    slots;      // slots, a power of two
} Names;

u32         table_id(const char *s, u32 len); // find or add; ~0u when full
u32         table_find(const char *s, u32 len); // find only; ~0u if absent
const char *table_name(u32 id);          // NULL if id unknown
u32         table_count(void);

// Operators: OP_x -> its infix spelling ("+", "<<", ..); NULL if unknown.
const char *op_name(u32 op);

// Primitives: `%name` -> PRIM_x id (term.h); ~0u when unknown.
u32         prim_id(const char *s, u32 len);
const char *prim_name(u32 id);

// Primitives a layer above registers while a runtime opens (run/ffi.c's
// libraries): asked before the built-in names, so that a library's `%log`
// overrides the built-in one.
typedef struct PrimHooks {
  // 1 when s[0..len) is registered, with its PRI ext in *id (~0u: it
  // cannot be called); 0 when it is not
  int         (*find)(const char *s, u32 len, u32 *id);
  const char *(*name)(u32 id);   // a registered id's name, or NULL
} PrimHooks;

// RT's hooks from now on (NULL: none).
void names_set_prims(const PrimHooks *h);

#endif
