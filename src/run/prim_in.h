// prim_in.h: what the host primitives' files (prim*.c) share:
// building terms on a worker's arena, and reading a string argument.

#ifndef HVM4G_PRIM_IN_H
#define HVM4G_PRIM_IN_H

#include <stddef.h>
#include <sys/types.h>
#include "core/core.h"

// Terms
u32  prim_ctr_id(const char *name);                   // #name's id (names.h ctr_id)
Term prim_ctr(Wnf *w, u32 id, u32 ari, const Term *args);
Term prim_ctr1(Wnf *w, u32 id, Term arg);            // #Name{arg}
Term prim_string(Wnf *w, const char *s, size_t n);   // UTF-8 bytes -> "..."
Term prim_stringf(Wnf *w, const char *fmt, ...)      // printf -> "..."
  __attribute__((format(printf, 2, 3)));
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

// The code points as a NUL-terminated UTF-8 string (malloc'd; *bytes, if
// asked, its length, NULs inside counted); NULL when one is not a Unicode
// scalar value (*bad: its index).
char *prim_utf8(const u32 *codes, u32 len, u32 *bad, size_t *bytes);

// Argument 0 of pri, a path (or a command), as prim_io reads it: 1 with
// the UTF-8 string in *s (malloc'd), or 0 with the result in *out.
int prim_str_path(Wnf *w, Term pri, char **s, Term *out);

// Byte arguments
// ==============
// A list of #BYT{n}, read whole (no lifting inside it).
typedef enum {
  BYTES_DONE,   // *buf (malloc'd, may be NULL when *n is 0), *n bytes
  BYTES_SHAPE,  // not a list of #BYT{..}
  BYTES_NUM,    // a #BYT whose field is not a number
  BYTES_RANGE,  // a byte past 255: *n its index, *bad its value
  BYTES_LONG,   // more than `max` bytes
} BytesRead;

BytesRead prim_bytes_arg(Wnf *w, Term list, size_t max, u8 **buf, size_t *n, u32 *bad);

// The list [#BYT{b}, ..] of n bytes.
Term prim_bytes_list(Wnf *w, const u8 *buf, size_t n);

// A string that is a field of an argument (not lifted): 1 with the UTF-8
// string in *s (malloc'd); 0 with HVM4's #ERR naming `prim` and `what`.
// n as prim_str_utf8's.
int prim_str_field(Wnf *w, Term str, const char *prim, const char *what, char **s, size_t *n,
                   Term *out);

// The code points read for `what` as UTF-8 (prim_str_arg's STR_DONE or
// STR_SHAPE): 1 with *s; 0 with the #ERR HVM4 gives. Frees codes. With n,
// text whose length (NULs included) goes to *n; without, a C string (a
// path, a name, a command), where a NUL is an error (E1): cut there, the
// call would act on another string.
int prim_str_utf8(Wnf *w, StrRead r, const char *prim, const char *what, u32 *codes, u32 len,
                  char **s, size_t *n, Term *out);

// Handles
// =======
// The handle primitives (prim_task.c: streams, timers, processes;
// prim_net.c: tcp, http) share the runtime's table of slots (prim.h,
// PrimHandles); each family of kinds
// numbers its handles from 1. A handle is #Name{id,seq}: seq counts the
// calls made on it, each call taking handle
// seq and giving back seq+1, so a handle used twice is refused as stale.
// Errors carry HVM4's codes.
enum { E_BAD_ARG = 1, E_BAD_HANDLE = 2, E_STALE = 3, E_FULL = 4, E_IO = 5 };

typedef enum { K_STDIN = 1, K_FILE, K_TIMER, K_PROC, K_TCP, K_HTTP } HandleKind;

typedef struct Slot {
  u8    kind;      // HandleKind; 0: never opened
  u8    closed;    // a stream after %stream_close
  u8    finished;  // a process reaped: `signaled` and `code` hold how
  u8    signaled;
  u8    state;     // a tcp connection's (prim_net.c)
  u8    ending;    // a process whose group prim_procs_end asked to stop
  u32   seq;       // the seq the next call must bring
  u32   code;      // exit status or signal
  int   fd;        // a stream's, a tcp connection's
  pid_t pid;       // a process's
  u64   due_ns;    // a timer's end; a tcp connect's start (CLOCK_MONOTONIC)
  u32   limit_ms[3];  // tcp timeouts: connect, read, write (0: none)
  void *data;      // an http exchange (prim_net.c), owned by the slot
} Slot;

// #ERR{"ERROR(prim): E<code> msg"}
Term prim_coded_err(Wnf *w, Term pri, u32 code, const char *msg);
Term prim_handle(Wnf *w, u32 kind, u32 id, u32 seq);               // #Name{id,seq}
Term prim_ready(Wnf *w, u32 kind, u32 id, u32 seq, Term payload);  // #Rdy{handle, payload}
Term prim_pending(Wnf *w, u32 kind, u32 id, u32 seq);              // #Pend{handle}

// A new slot from `init`, for pri: #OK{its handle}, *id its id; or, the
// table full, E4 and *id 0.
Term prim_opened(Wnf *w, Term pri, const Slot *init, u32 *id);

// `v`, an argument of pri in weak normal form, as a `kind` handle (K_STDIN
// also takes K_FILE) of a slot that exists: 1 with *id, *seq; else 0 with
// the #ERR (E2) in *out.
int prim_handle_of(Wnf *w, Term pri, Term v, u32 kind, u32 *id, u32 *seq, Term *out);

// Claims the slot of `kind` handle id (one prim_handle_of accepted) with
// seq: 1 with a copy of the slot in *s (its seq moved on); else 0 with the
// stale error (E3) in *out.
int prim_take(Wnf *w, Term pri, u32 kind, u32 id, u32 seq, Slot *s, Term *out);

// CLOCK_MONOTONIC in nanoseconds.
u64 prim_now_ns(void);

// For a call whose one argument is a handle: lifts it, reads it as a
// `kind` handle and claims its slot: 1 with a copy of the slot in *s, its
// id and seq; else 0 with the lifted call or the #ERR in *out.
int prim_claim(Wnf *w, Term pri, u32 kind, Slot *s, u32 *id, u32 *seq, Term *out);

// Writes back a claimed slot's fields (not its seq).
void prim_slot_update(u32 id, const Slot *s);

// The handle primitives of prim_task.c and prim_net.c; 0 for any other.
Term prim_task(Wnf *w, Term pri);
Term prim_net(Wnf *w, Term pri);

// What a tcp or http slot holds, released when the runtime closes.
void prim_net_release(Slot *s);

#endif
