// names.h: names as the term's 24-bit EXT field holds them.
//
// - Constructors (`#Name`) and references (`@name`) are told apart by their
//   full spelling, as today's HVM4 does: each has a table that gives every
//   distinct spelling its own id, and the term holds the id. The printer
//   reads the tables back; the core and the device see only ids.
// - Labels (`&L`) and `^name` keep their spelling in the field itself, as
//   a nick: base 64 over `_a-zA-Z0-9$` (`_` = 0), 6 bits a character, so a
//   nick holds 4 characters; the parser refuses a longer one.

#ifndef HVM4G_NAMES_H
#define HVM4G_NAMES_H

#include <stdio.h>
#include "core/term.h"

// Constructors the core and the runtime build and test, at fixed ids: each
// table starts with them in this order (lang_rt_open; test_names checks).
// #NIL #CON #CHR #ZER #SUC are the list, string and nat sugar (capitals as
// in HVM4; `#Nil` is an ordinary user constructor); #OK #ERR #BYT are the
// primitives' results and bytes; #T #F their booleans.
#define CTR_NIL 0u
#define CTR_CON 1u
#define CTR_CHR 2u
#define CTR_ZER 3u
#define CTR_SUC 4u
#define CTR_OK  5u
#define CTR_ERR 6u
#define CTR_BYT 7u
#define CTR_T   8u
#define CTR_F   9u
#define CTR_BUILTINS 10u
#define CTR_BUILTIN_NAMES {"NIL", "CON", "CHR", "ZER", "SUC", "OK", "ERR", "BYT", "T", "F"}

// A table of names: spelling <-> dense id. Open addressing over full
// spellings.
typedef struct {
  char **name;       // id -> name
  u32    len, cap;   // ids given, room in `name`
  u32   *slot;       // hash slot -> id + 1 (0 = empty)
  u32    slots;      // slots, a power of two
  u32    limit;      // ids it may give (0: NAMES_LIMIT); tests lower it
} Names;

// Ids a table gives at most: what the EXT field holds.
#define NAMES_LIMIT (1u << 24)

// Constructor names, RT's (RT->lang->ctrs). A table of its own, apart from
// the references': reference ids are book ids, which index the book and
// must stay dense, and a constructor's id must not spend a book slot.
// Found or added under RT->lang->ctr_lock, since libraries of primitives
// ask for names from the pool's threads while the program runs.
u32         ctr_id(const char *s, u32 len);   // find or add; ~0u when full
u32         ctr_find(const char *s, u32 len); // find only; ~0u if absent
const char *ctr_name(u32 id);                 // NULL if id unknown
u32         ctr_count(void);
u32         ctr_limit(void);                  // ids it may give

// Nicks (labels, `^name`)
#define NICK_CHARS 4u                    // characters a nick holds
int  nick_digit(int c);                  // 0..63, or -1 if not a name char
u32  nick_of(const char *s, u32 len);    // encode (a longer name: its last NICK_CHARS)
void nick_print(FILE *f, u32 nick);      // decode: shortest spelling
int  nick_str(u32 nick, char *buf);      // same into buf (>= 5 bytes); length

// Reference table: name <-> book id, RT's (RT->lang->names), made as
// names come and freed by lang_rt_close; ids are dense (book ids). Used
// while loading, on the loading thread.
u32         table_id(const char *s, u32 len); // find or add; ~0u when full
u32         table_find(const char *s, u32 len); // find only; ~0u if absent
const char *table_name(u32 id);          // NULL if id unknown
u32         table_count(void);
u32         table_limit(void);           // ids it may give

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
