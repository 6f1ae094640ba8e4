// term.h: the 64-bit term word, its tags and the names that read it.
//
// Portable dialect (docs/architecture.md): compiled as C11, as CUDA device code
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

// FN for the core's cold rules (equality, RED, sparks, rebuild;
// take32.h's 32-bit take, a cross-check on CUDA): out of line on CUDA, so
// that the hot loop they would join holds fewer registers (more lanes
// resident; `make cuda-regs`). Inline on the CPU (out of line there was
// no better) and on Metal (MSL documents no way to ask for it).
#ifndef FN_COLD
#if defined(__CUDACC__)
#define FN_COLD static __device__ __noinline__
#else
#define FN_COLD FN
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
// APP is 0 so that a zeroed word reads as an application at location 0,
// a node no allocation ever returns. DP0/DP1 and BJ0/BJ1 are adjacent: a
// side is `tag - DP0`. C00..C16 are contiguous: a constructor's arity is
// its tag minus C00. The other numbers carry no meaning.

#define APP  0   // node [fun, arg]
#define LAM  1   // ext: LAM_ERA flag; node [body]
#define VAR  2   // val: the lambda's body slot (a SUB once applied)
#define SUP  3   // ext: label; node [a, b]
#define DUP  4   // ext: label; node [expr, body]
#define DP0  5   // ext: label; val: the shared expr slot
#define DP1  6   // ext: label; val: the shared expr slot
#define ERA  7   // erasure &{}
#define NUM  8   // val: u32
#define REF  9   // ext: book id
#define MAT  10  // ext: ctor name; node [hit, miss]
#define SWI  11  // ext: number; node [zero, succ]
#define USE  12  // node [fun]
#define OP2  13  // ext: operator; node [lhs, rhs]
#define EQL  14  // node [lhs, rhs]  (===)
#define AND  15  // node [lhs, rhs]  (.&.)
#define OR   16  // node [lhs, rhs]  (.|.)
#define RED  17  // node [lhs, rhs]  (~>)
#define NAM  18  // ext: name; the stuck head ^name
#define DRY  19  // node [fun, arg]; the stuck application ^(f x)
#define INC  20  // node [term]      (↑)
#define DSU  21  // node [lab, a, b]
#define DDU  22  // node [lab, val, body]
#define UNS  23  // node [body]      (unscoped binding)
#define ANY  24  // wildcard *
#define PRI  25  // ext: primitive id; node [arg0..argN-1]
#define BJV  26  // quoted lambda var; val: de Bruijn level
#define BJ0  27  // quoted dup var 0; ext: label; val: level
#define BJ1  28  // quoted dup var 1; ext: label; val: level
#define ALO  29  // val: a word [template slot | env << 32]; a book term
                 // not yet copied (wnf.h, "Copying the book lazily")
#define C00  32  // constructors: ext = name, node [fields]
#define C16  48
#define TAG_COUNT 49

#define IS_CTR(tag)   ((tag) >= C00 && (tag) <= C16)
#define CTR_ARITY(tg) ((tg) - C00)

// Labels from LAB_OWN up are the runtime's own, for the dups it makes
// itself (wnf_red_share). Spelled as names they are four characters that
// start with `$`, which the parser refuses, so no program's SUP or DUP
// carries one.
#define LAB_OWN 0xFC0000u

// Lambda EXT flags
#define LAM_ERA 0x800000u   // body never uses the binder

// Operators (EXT of OP2)
// ======================
// Comparisons, arithmetic, bitwise; names.c gives each its spelling, the
// parser's table its precedence.

#define OP_EQ  0
#define OP_NE  1
#define OP_LT  2
#define OP_LE  3
#define OP_GT  4
#define OP_GE  5
#define OP_ADD 6
#define OP_SUB 7
#define OP_MUL 8
#define OP_DIV 9
#define OP_MOD 10
#define OP_AND 11
#define OP_OR  12
#define OP_XOR 13
#define OP_LSH 14
#define OP_RSH 15
#define OP_NOT 16   // infix, ignores its left operand
#define OP_COUNT 17

// Primitives (EXT of PRI)
// =======================
// The arithmetic ones take two arguments and mean exactly the OP2 of the
// same operator.

#define PRIM_LOG         0   // %log(str): host prints, yields #Nil
#define PRIM_GNF         1   // %gnf(t): strong normal form on the device
#define PRIM_NF          2   // %nf(t): strong normal form on the CPU pool
// The host's I/O primitives (src/run/prim.c, docs/language.md): each runs
// on the CPU, where a device run that meets one hands it back, as %log.
#define PRIM_ARGV        3   // %argv(_): the program's arguments after --
#define PRIM_ENV         4   // %env(name)
#define PRIM_CWD         5   // %cwd(_)
#define PRIM_CHDIR       6   // %chdir(path)
#define PRIM_READ_FILE   7   // %read_file(path): UTF-8 text
#define PRIM_READ_BYTES  8   // %read_bytes(path)
#define PRIM_WRITE_FILE  9   // %write_file(path, str)
#define PRIM_WRITE_BYTES 10  // %write_bytes(path, bytes)
#define PRIM_PANIC       11  // %panic(str): prints str, ends the run, exit 1
#define PRIM_RAND        12  // %rand(_): a pseudo-random number
#define PRIM_COMPACT     13  // %compact(t): the normal form of t, copied
#define PRIM_STREAM_STDIN_OPEN 14  // %stream_stdin_open(_)
#define PRIM_STREAM_FILE_OPEN  15  // %stream_file_open(path)
#define PRIM_STREAM_POLL       16  // %stream_poll(strm)
#define PRIM_STREAM_WAIT       17  // %stream_wait(strm)
#define PRIM_STREAM_CLOSE      18  // %stream_close(strm)
#define PRIM_TIMER_START       19  // %timer_start(ms)
#define PRIM_TIMER_POLL        20  // %timer_poll(time)
#define PRIM_TIMER_WAIT        21  // %timer_wait(time)
#define PRIM_PROCESS_SPAWN     22  // %process_spawn(cmd): /bin/sh -c cmd
#define PRIM_PROCESS_POLL      23  // %process_poll(proc)
#define PRIM_PROCESS_WAIT      24  // %process_wait(proc)
#define PRIM_PROCESS_KILL      25  // %process_kill(proc)
#define PRIM_TCP_CONNECT       26  // %tcp_connect(#TcpReq{host,port,opts})
#define PRIM_TCP_CONNECT_POLL  27  // %tcp_connect_poll(tcp)
#define PRIM_TCP_CONNECT_WAIT  28  // %tcp_connect_wait(tcp)
#define PRIM_TCP_RECV_POLL     29  // %tcp_recv_poll(tcp, max_bytes)
#define PRIM_TCP_RECV_WAIT     30  // %tcp_recv_wait(tcp, max_bytes)
#define PRIM_TCP_SEND_POLL     31  // %tcp_send_poll(tcp, bytes)
#define PRIM_TCP_SEND_WAIT     32  // %tcp_send_wait(tcp, bytes)
#define PRIM_TCP_CLOSE         33  // %tcp_close(tcp)
#define PRIM_HTTP_REQUEST      34  // %http_request(#Req{method,url,headers,body,opts})
#define PRIM_HTTP_POLL         35  // %http_poll(http)
#define PRIM_HTTP_WAIT         36  // %http_wait(http)
#define PRIM_HTTP_CANCEL       37  // %http_cancel(http)
#define PRIM_OP          38  // PRIM_OP + OP_x: %add %sub %mul %div %mod %and %or
                             // %xor %lsh %rsh %not %eq %ne %lt %le %gt %ge
#define PRIM_COUNT (PRIM_OP + OP_COUNT)
// A primitive a library registered (run/ffi.c, docs/ffi.md): EXT is
// PRIM_FFI | arity << 16 | its row, so that every walk over nodes (here,
// on the device) knows a call's arity without the runtime's table.
#define PRIM_FFI            0x800000u
#define PRIM_FFI_ARITY_MAX  127u      // the 7 bits above the row
#define PRIM_FFI_INDEX_MAX  0xFFFFu   // the row's 16 bits
#define PRIM_IS_FFI(id)     (((id) & PRIM_FFI) != 0)
#define PRIM_FFI_ID(i, ar)  (PRIM_FFI | (u32)(ar) << 16 | (u32)(i))
#define PRIM_FFI_INDEX(id)  ((id) & PRIM_FFI_INDEX_MAX)
// Host primitives of two arguments, one bit each; the others take one.
#define PRIM_TWO_ARGS \
  (((u64)1 << PRIM_WRITE_FILE) | ((u64)1 << PRIM_WRITE_BYTES) | \
   ((u64)1 << PRIM_TCP_RECV_POLL) | ((u64)1 << PRIM_TCP_RECV_WAIT) | \
   ((u64)1 << PRIM_TCP_SEND_POLL) | ((u64)1 << PRIM_TCP_SEND_WAIT))
#define PRIM_ARITY(id) \
  (PRIM_IS_FFI(id) ? ((u32)(id) >> 16) & PRIM_FFI_ARITY_MAX : \
   (id) < PRIM_OP ? (u32)((PRIM_TWO_ARGS >> (id)) & 1u) + 1u : 2u)

// Nodes
// =====

// Tags whose VAL is a heap location (a node or a binder slot): book
// templates are relocated by adding an offset to exactly these words.
// Constructors C01..C16 (tags C00+1..C16) are the 16 bits above C00.
#define LOC_MASK \
  (((u64)1<<APP)|((u64)1<<VAR)|((u64)1<<LAM)|((u64)1<<DP0)|((u64)1<<DP1)|((u64)1<<SUP)| \
   ((u64)1<<DUP)|((u64)1<<DRY)|((u64)1<<MAT)|((u64)1<<SWI)|((u64)1<<USE)|((u64)1<<OP2)| \
   ((u64)1<<EQL)|((u64)1<<AND)|((u64)1<<OR)|((u64)1<<RED)|((u64)1<<INC)|((u64)1<<DSU)| \
   ((u64)1<<DDU)|((u64)1<<UNS)|((u64)1<<PRI)|((u64)0xFFFF << (C00 + 1)))
#define HAS_LOC(tag) ((tag) < 64 && ((LOC_MASK >> (tag)) & 1))

// The words of t's node: every child a walk over the whole term visits
// (the parser's copies, the strong normal form, the device's lanes). VAR
// and DP0/DP1 point at a binder's slot, not a node of their own: 0.
FN u32 term_arity(Term t) {
  u32 tag = TAG(t);
  if (IS_CTR(tag)) return CTR_ARITY(tag);
  switch (tag) {
    case LAM: case USE: case INC: case UNS:
      return 1;
    case APP: case SUP: case DUP: case DRY: case MAT: case SWI:
    case OP2: case EQL: case AND: case OR:  case RED:
      return 2;
    case DSU: case DDU:
      return 3;
    case PRI:
      return EXT(t) < PRIM_COUNT || PRIM_IS_FFI(EXT(t)) ? PRIM_ARITY(EXT(t)) : 0;
    default:
      return 0;
  }
}

// Match templates
// ===============
// A book template whose root is a match (MAT/SWI) carries, after the root,
// a header and the word span of each case the match can go on with, so a
// call that meets a number or constructor copies only the case it takes
// (docs/architecture.md, "Book templates"):
//   word 1          NUM: ext 1 when the spans may be used, val k
//   words 2..2+k-1  NUM: ext = length, val = first word: the span of case
//                   i's hit (i < k-1), then of the last miss (the default)
// The nodes follow them.
#define TPL_IS_MATCH(root) (TAG(root) == MAT || TAG(root) == SWI)
#define TPL_SPAN0          2u   // the first span's word

// Special words
// =============

// Left in a DUP expression slot by the task that holds it (try_take).
// A word no term can be: tag 127 is never assigned.
#define BUSY TERM(0x7F, 0xFFFFFF, 0xFFFFFFFF)

#endif
