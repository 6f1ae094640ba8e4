// ffi.h: libraries of primitives (HVM4's FFI, include/hvm4g_ffi.h):
// loading them (--ffi, --ffi-dir), the table of the primitives they
// register, and the calls the dispatch (prim.c) hands to them.
//
// A library's primitive is a PRI whose ext is PRIM_FFI_ID(index, arity)
// (term.h): the index is its row here, the arity travels with the term so
// that every walk over nodes knows it without this table.

#ifndef HVM4G_FFI_H
#define HVM4G_FFI_H

#include <setjmp.h>
#include <stdatomic.h>
#include <stddef.h>
#include "core/core.h"

// What the command line asks to load, in its order (Options.ffi).
#define FFI_LOADS_MAX 64   // a command line names a few; the flag table refuses more

typedef struct {
  const char *path;
  int         dir;    // 1: every library in the folder (--ffi-dir)
} FfiLoad;

typedef struct {
  FfiLoad at[FFI_LOADS_MAX];
  u32     count;
} FfiLoads;

// A registered primitive. The type is HvmPrimFn's (hvm4g_ffi.h).
typedef Term (*FfiFn)(Term *args);

typedef struct {
  char *name;    // NUL-terminated copy
  u32   len;
  u32   arity;   // 0: registered but not callable (HVM4's parser refuses it too)
  FfiFn fn;
} FfiPrim;

// The run layer's FFI state (RT->run->ffi). The table is written only
// while libraries load, before the program is read, so the calls read it
// from any thread without a lock.
typedef struct {
  FfiPrim   *prim;       // by index
  u32        prims, prim_cap;
  void     **lib;        // dlopen handles, closed by ffi_close
  u32        libs, lib_cap;
  jmp_buf   *init;       // while a library's hvm_ffi_init runs: where its
                         // failure jumps (NULL: no library is loading)
  const char *loading;   // that library's path, as given
  char      *why;        // its failure's message and status
  size_t     why_cap;
  int        why_code;
  atomic_int raised;     // a library's primitive called runtime_error
  char      *warned;     // the loads' warnings, a line each ('\n' between),
  size_t     warned_len; // for the caller to show (the library prints none)
} FfiRt;

// Loads the libraries `l` names, in order, into RT's runtime: after its
// layers are open, before the program is read. HVM4G_OK, or
// an HVM4G_ERR_FFI_* status (hvm4g.h) with a one-line message in why.
int  ffi_load_all(const FfiLoads *l, char *why, size_t cap);

// What the loads warned of (a library overriding a primitive), in
// HVM4's words, a line each with '\n' between; NULL when nothing.
const char *ffi_warnings(void);

// The result of `pri`, a call of a library's primitive (PRIM_IS_FFI), on
// w: the host dispatch's (prim_host).
Term ffi_call(Wnf *w, Term pri);

// Primitives the libraries registered (0: none, or no library loaded).
u32  ffi_count(void);

// Whether the runtime error being reported was raised by a library's
// primitive (its exit status is then HVM4G_ERR_FFI_PRIM, api.c); asking
// clears it, for the runtime's next run.
int  ffi_raised(void);

// Closes the libraries and frees the table (run_rt_close).
void ffi_close(void);

#endif
