/*
** hvm4g_ffi.h: the C interface of a library of primitives (HVM4's FFI).
**
** A library is a shared object that exports one function,
**
**   void hvm_ffi_init(const HvmApi *api);
**
** which the runtime calls once when the command line loads the library
** (`hvm4g prog.hvm --ffi ./lib.so`, `--ffi-dir DIR`). It keeps `api` and
** registers its primitives by name and arity; the program then calls each
** as `%name(a, b, ..)`. A primitive receives its argument terms unreduced
** and uses the table to reduce them (wnf), read them (term_tag, term_ext,
** term_val, heap_read), build its result (term_new_*) or fail
** (runtime_error):
**
**   static const HvmApi *api;
**   static Term add(Term *args) {
**     Term a = api->wnf(args[0]), b = api->wnf(args[1]);
**     if (api->term_tag(a) != NUM || api->term_tag(b) != NUM)
**       api->runtime_error("%add2 expected numbers");
**     return api->term_new_num((u32)(api->term_val(a) + api->term_val(b)));
**   }
**   void hvm_ffi_init(const HvmApi *a) {
**     api = a;
**     if (api->abi_version != ABI_VERSION) api->runtime_error("FFI ABI mismatch");
**     api->register_prim("add2", 4, 2, add);
**   }
**
**   cc -shared -fPIC -I include lib.c -o lib.so
**
** The table, its version and the tag numbers are HVM4's (HigherOrderCO/
** HVM4, clang/hvm_ffi.h): a library compiled against HVM4's header loads
** into hvm4g unchanged, and one compiled against this header loads into
** HVM4. docs/ffi.md says what each entry does in hvm4g, and where hvm4g
** differs.
**
** hvm4g's runtime defines HVM4G_FFI_RUNTIME before including this header,
** after its own term.h: it then gets the table and the HVM_TAG_* numbers,
** without the short names (APP, NUM, u32, Term, ..) its own headers define.
*/

#ifndef HVM4G_HVM4G_FFI_H
#define HVM4G_HVM4G_FFI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the table below. A library compares it with the version
** it was built for and refuses a runtime with another (runtime_error). */
#define HVM_ABI_VERSION 1

#ifndef HVM4G_FFI_RUNTIME
typedef uint8_t  u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

/* A term: a 64-bit word, read and built only through the table. */
typedef u64 Term;
#endif

/* A primitive: its arguments, as many as it was registered with. */
typedef Term (*HvmPrimFn)(Term *args);

/* The runtime's side, in this order (the order is the ABI). */
typedef struct {
  u32 abi_version;                    /* HVM_ABI_VERSION */

  /* Registers `%name` (name[0..len), not NUL-terminated) taking `arity`
  ** arguments; a name already taken (a built-in, or an earlier library's)
  ** is overridden, with a warning. Only from hvm_ffi_init. */
  u32  (*register_prim)(const char *name, u32 len, u32 arity, HvmPrimFn fun);

  /* The weak normal form of a term. */
  Term (*wnf)(Term term);

  /* New terms. A name is a number from name_from_str (or term_ext of a
  ** term that has one); a label `&L` is L's spelling in base 64 (`_` 0,
  ** a-z 1.., A-Z 27.., 0-9 53.., `$` 63; four characters at most); a
  ** location is a number from heap_alloc. */
  Term (*term_new_num)(u32 n);                            /* n */
  Term (*term_new_ctr)(u32 name, u32 arity, Term *args);  /* #name{args..}, arity <= 16 */
  Term (*term_new_sup)(u32 label, Term a, Term b);        /* &label{a, b} */
  Term (*term_new_dup)(u32 label, Term expr, Term body);  /* a DUP node [expr, body] */
  Term (*term_new_app)(Term f, Term x);                   /* f(x) */
  Term (*term_new_lam_at)(u64 loc, Term body);            /* λ with its body at loc */
  Term (*term_new_lam)(Term body);                        /* λ with a fresh body slot */
  Term (*term_new_var)(u64 loc);                          /* the variable of the λ at loc */

  /* Reading a term: its tag (the HVM_TAG_* numbers), its EXT (a name, a
  ** label, LAM's flags, an operator) and its VAL (a number, a location). */
  u8   (*term_tag)(Term t);
  u32  (*term_ext)(Term t);
  u64  (*term_val)(Term t);

  /* Heap words: a node's fields are at term_val(t) + 0, 1, .. */
  Term (*heap_read)(u64 loc);
  void (*heap_set)(u64 loc, Term t);
  u64  (*heap_alloc)(u64 words);

  /* The number of the constructor name spelled name[0..len), found or
  ** added (both entries; from any thread). */
  u32  (*table_find)(const char *name, u32 len);
  u32  (*name_from_str)(const char *name, u32 len);

  /* Ends the run with "RUNTIME_ERROR: msg"; does not return. */
  void (*runtime_error)(const char *msg);
} HvmApi;

/* Tags, as term_tag returns them. Every tag of HVM4 has one in hvm4g. */
#define HVM_TAG_APP  0
#define HVM_TAG_VAR  1
#define HVM_TAG_LAM  2
#define HVM_TAG_DP0  3
#define HVM_TAG_DP1  4
#define HVM_TAG_SUP  5
#define HVM_TAG_DUP  6
#define HVM_TAG_ALO  7
#define HVM_TAG_REF  8
#define HVM_TAG_NAM  9
#define HVM_TAG_DRY 10
#define HVM_TAG_ERA 11
#define HVM_TAG_MAT 12
#define HVM_TAG_C00 13   /* a constructor of arity k is HVM_TAG_C00 + k */
#define HVM_TAG_C16 29
#define HVM_TAG_NUM 30
#define HVM_TAG_SWI 31
#define HVM_TAG_USE 32
#define HVM_TAG_OP2 33
#define HVM_TAG_DSU 34
#define HVM_TAG_DDU 35
#define HVM_TAG_EQL 36
#define HVM_TAG_AND 37
#define HVM_TAG_OR  38
#define HVM_TAG_UNS 39
#define HVM_TAG_ANY 40
#define HVM_TAG_INC 41
#define HVM_TAG_BJV 42
#define HVM_TAG_BJ0 43
#define HVM_TAG_BJ1 44
#define HVM_TAG_PRI 45

/* hvm4g's own, outside HVM4's numbers: a guarded reduction `f ~> g`, and
** a word that is no term (a slot another thread holds while it works). */
#define HVM4G_TAG_RED   0x70
#define HVM4G_TAG_OTHER 0x7F

/* term_ext of a LAM: its binder is not used in its body. */
#define HVM_LAM_ERA_MASK 0x20000

/* The names HVM4's header gives them, for libraries. */
#ifndef HVM4G_FFI_RUNTIME
#define ABI_VERSION  HVM_ABI_VERSION
#define APP HVM_TAG_APP
#define VAR HVM_TAG_VAR
#define LAM HVM_TAG_LAM
#define DP0 HVM_TAG_DP0
#define DP1 HVM_TAG_DP1
#define SUP HVM_TAG_SUP
#define DUP HVM_TAG_DUP
#define ALO HVM_TAG_ALO
#define REF HVM_TAG_REF
#define NAM HVM_TAG_NAM
#define DRY HVM_TAG_DRY
#define ERA HVM_TAG_ERA
#define MAT HVM_TAG_MAT
#define C00 (HVM_TAG_C00 + 0)
#define C01 (HVM_TAG_C00 + 1)
#define C02 (HVM_TAG_C00 + 2)
#define C03 (HVM_TAG_C00 + 3)
#define C04 (HVM_TAG_C00 + 4)
#define C05 (HVM_TAG_C00 + 5)
#define C06 (HVM_TAG_C00 + 6)
#define C07 (HVM_TAG_C00 + 7)
#define C08 (HVM_TAG_C00 + 8)
#define C09 (HVM_TAG_C00 + 9)
#define C10 (HVM_TAG_C00 + 10)
#define C11 (HVM_TAG_C00 + 11)
#define C12 (HVM_TAG_C00 + 12)
#define C13 (HVM_TAG_C00 + 13)
#define C14 (HVM_TAG_C00 + 14)
#define C15 (HVM_TAG_C00 + 15)
#define C16 (HVM_TAG_C00 + 16)
#define NUM HVM_TAG_NUM
#define SWI HVM_TAG_SWI
#define USE HVM_TAG_USE
#define OP2 HVM_TAG_OP2
#define DSU HVM_TAG_DSU
#define DDU HVM_TAG_DDU
#define EQL HVM_TAG_EQL
#define AND HVM_TAG_AND
#define OR  HVM_TAG_OR
#define UNS HVM_TAG_UNS
#define ANY HVM_TAG_ANY
#define INC HVM_TAG_INC
#define BJV HVM_TAG_BJV
#define BJ0 HVM_TAG_BJ0
#define BJ1 HVM_TAG_BJ1
#define PRI HVM_TAG_PRI
#define LAM_ERA_MASK HVM_LAM_ERA_MASK
#endif

/* The library's entry, called once per runtime that loads it; exported
** even from a library built with -fvisibility=hidden. */
#ifndef HVM4G_FFI_RUNTIME
#if defined(__GNUC__)
__attribute__((visibility("default")))
#endif
void hvm_ffi_init(const HvmApi *api);
#endif

#ifdef __cplusplus
}
#endif

#endif
