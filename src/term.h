// term.h: the 64-bit term word, its tags and the names that read it.
//
// Portable dialect (docs/design.md §1): compiled as C11, as CUDA device code
// and as Metal. No libc, fixed-width integers only.
//
// Layout (HVM4 docs/hvm4/memory.md):  SUB(1) | TAG(7) | EXT(24) | VAL(32)

#ifndef HVM4G_TERM_H
#define HVM4G_TERM_H

#if defined(__METAL_VERSION__)
typedef uchar  u8;
typedef ushort u16;
typedef uint   u32;
typedef ulong  u64;
#else
#include <stdint.h>
typedef uint8_t  u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
#endif

typedef u64 Term;

// Address space of pointers into the heap (Metal: `device`).
#ifndef DEV
#define DEV
#endif

// Inline function marker for every backend.
#ifndef FN
#if defined(__CUDACC__)
#define FN static __device__ __host__ inline
#else
#define FN static inline
#endif
#endif

// Bit layout
// ==========

#define SUB_SHIFT 63
#define TAG_SHIFT 56
#define EXT_SHIFT 32
#define TAG_MASK  ((u64)0x7F)
#define EXT_MASK  ((u64)0xFFFFFF)
#define VAL_MASK  ((u64)0xFFFFFFFF)
#define SUB_BIT   ((u64)1 << SUB_SHIFT)

#define TERM(tag, ext, val) \
  ((((Term)(tag) & TAG_MASK) << TAG_SHIFT) | \
   (((Term)(ext) & EXT_MASK) << EXT_SHIFT) | ((Term)(val) & VAL_MASK))
#define TAG(t)      ((u32)(((t) >> TAG_SHIFT) & TAG_MASK))
#define EXT(t)      ((u32)(((t) >> EXT_SHIFT) & EXT_MASK))
#define VAL(t)      ((u32)((t) & VAL_MASK))
#define IS_SUB(t)   (((t) & SUB_BIT) != 0)
#define AS_SUB(t)   ((t) | SUB_BIT)
#define NO_SUB(t)   ((t) & ~SUB_BIT)

// Tags
// ====
// Hot tags first. C00..C16 are contiguous: a constructor's arity is TAG - C00.

#define APP  0   // node [fun, arg]
#define VAR  1   // val: lambda body slot (or SUB there)
#define LAM  2   // ext: level|flags; node [body]
#define DP0  3   // ext: label; val: dup expr slot
#define DP1  4   // ext: label; val: dup expr slot
#define SUP  5   // ext: label; node [a, b]
#define DUP  6   // ext: label; node [expr, body]
#define ALO  7   // lazy book instantiation (layout chosen by wnf.h)
#define REF  8   // ext: book id
#define NAM  9   // ext: name; stuck head ^name
#define DRY  10  // node [fun, arg]; stuck application ^(f x)
#define ERA  11  // erasure &{}
#define MAT  12  // ext: ctor name; node [hit, miss]
#define SWI  13  // ext: number; node [zero, succ]
#define USE  14  // node [fun]
#define OP2  15  // ext: op code; node [lhs, rhs]
#define EQL  16  // node [lhs, rhs]  (===)
#define AND  17  // node [lhs, rhs]  (.&.)
#define OR   18  // node [lhs, rhs]  (.|.)
#define RED  19  // node [lhs, rhs]  (~>)
#define INC  20  // node [term]      (↑)
#define DSU  21  // node [lab, a, b]
#define DDU  22  // node [lab, val, body]
#define UNS  23  // node [body]      (unscoped binding)
#define ANY  24  // wildcard *
#define NUM  25  // val: u32
#define PRI  26  // ext: primitive id; node [arg0..argN-1]
#define BJV  27  // quoted lambda var; val: de Bruijn level
#define BJ0  28  // quoted dup var 0; ext: label; val: level
#define BJ1  29  // quoted dup var 1; ext: label; val: level
#define C00  32  // constructors: ext = name, node [fields]
#define C16  48
#define TAG_COUNT 49

#define IS_CTR(tag)   ((tag) >= C00 && (tag) <= C16)
#define CTR_ARITY(tg) ((tg) - C00)

// Lambda EXT flags
#define LAM_ERA 0x800000u   // body never uses the binder

// Operators (EXT of OP2)
// ======================

#define OP_ADD 0
#define OP_SUB 1
#define OP_MUL 2
#define OP_DIV 3
#define OP_MOD 4
#define OP_AND 5
#define OP_OR  6
#define OP_XOR 7
#define OP_LSH 8
#define OP_RSH 9
#define OP_NOT 10   // infix, ignores its left operand
#define OP_EQ  11
#define OP_NE  12
#define OP_LT  13
#define OP_LE  14
#define OP_GT  15
#define OP_GE  16
#define OP_COUNT 17

// Special words
// =============

// Left in a DUP expression slot by the task that holds it (try_take).
// A word no term can be: tag 127 is never assigned.
// Primitives (EXT of PRI). Arity in PRIM_ARITY. The arithmetic ones take
// two arguments and mean exactly the OP2 of the same operator.
#define PRIM_LOG  0   // %log(str): host prints, yields #Nil
#define PRIM_GNF  1   // %gnf(t): strong normal form on the device
#define PRIM_NF   2   // %nf(t): strong normal form on the CPU pool
#define PRIM_OP   3   // PRIM_OP + OP_x: %add %sub %mul %div %mod %and %or
                      // %xor %lsh %rsh %not %eq %ne %lt %le %gt %ge
#define PRIM_COUNT (PRIM_OP + OP_COUNT)
#define PRIM_ARITY(id) ((id) < PRIM_OP ? 1u : 2u)

#define BUSY TERM(0x7F, 0xFFFFFF, 0xFFFFFFFF)

#endif

// Tags whose VAL is a heap location (a node or a binder slot). Book
// templates are relocated by adding an offset to exactly these words.
#define LOC_TAGS \
  (((u64)1<<APP)|((u64)1<<VAR)|((u64)1<<LAM)|((u64)1<<DP0)|((u64)1<<DP1)|((u64)1<<SUP)| \
   ((u64)1<<DUP)|((u64)1<<DRY)|((u64)1<<MAT)|((u64)1<<SWI)|((u64)1<<USE)|((u64)1<<OP2)| \
   ((u64)1<<EQL)|((u64)1<<AND)|((u64)1<<OR)|((u64)1<<RED)|((u64)1<<INC)|((u64)1<<DSU)| \
   ((u64)1<<DDU)|((u64)1<<UNS)|((u64)1<<PRI)|((u64)1<<ALO))
#define HAS_LOC(tag) \
  (((tag) > C00 && (tag) <= C16) || ((tag) < 64 && ((LOC_TAGS >> (tag)) & 1)))
