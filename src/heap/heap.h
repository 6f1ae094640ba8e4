// heap.h: the CPU-side heap and book (host code, not the portable core).
//
// The heap is one array of 64-bit words addressed by 32-bit locations.
// heap_init reserves the whole address range up front but commits nothing:
// pages become real memory only when first written (MAP_NORESERVE), so a
// 2^32-word heap starts on a small machine. Location 0 is never handed out,
// so 0 can mean "none".

#ifndef HVM4G_HEAP_H
#define HVM4G_HEAP_H

#include <stdatomic.h>
#include <stdint.h>
#include "core/term.h"

// A runtime's heap and book (its context's `heap`, heap/rt.h).
typedef struct Heap {
  Term        *at;        // the words
  u64          cap;       // capacity in words (<= 2^32)
  _Atomic u64  top;       // first never-allocated word
  // Book: definitions as templates in the heap (see docs/architecture.md).
  u32         *book;      // book id -> template loc (0 = undefined)
  u32         *book_len;  // book id -> template length in words
  u32          book_cap;  // entries in book/book_len (= 2^24, one per id)
  // Words handed out, and the free chunks of the last collection: each a
  // word (start << 32 | length), taken by index, never split nor given
  // back (a chunk too short for a request is skipped until the next one).
  _Atomic u64  given;
  u64         *free;
  u64          free_n;
  u64          free_cap;
  _Atomic u64  free_at;
  int          by_space;  // the default size, cut by the address-space limit
} Heap;

int  heap_init(u64 words);   // RT's heap: 0 on success; prints nothing
// What fits this machine (heap.c): `other` bytes to be reserved besides,
// `per_word` bytes more for each heap word; *by_space: ulimit -v cut it.
u64  heap_default_words(u64 other, u64 per_word, int *by_space);
void heap_free(void);        // RT's heap and book, unmapped
u32  heap_alloc(u32 n);      // host bump allocation; 0 when exhausted
// An evaluator's arena: a free chunk a collection left (cpu/reclaim.c) of
// at least n words, else `want` (or just n) words bumped from the top. Its
// start, and in *got its length; 0 when the heap has neither.
u32  heap_take(u32 n, u32 want, u32 *got);
// What the last collection freed: chunks (start, length) below `top`, the
// new top (no thread may be allocating). heap_take hands them out in order.
void heap_set_free(const u64 *chunks, u64 n, u64 top);
// Forgets those chunks; the top stays (threads may be allocating from it).
void heap_drop_free(void);
u64  heap_given(void);       // words handed to arenas and heap_alloc so far
u64  heap_used(void);        // words in use (HEAP_TOP)
u64  heap_parse_size(const char *s); // "1G", "512M", "65536" -> words; 0 = bad
// Lowest address this thread's recursion may reach: its stack's low end
// plus `margin` bytes; 0 when the stack is unknown (parse.c, prim.c).
uintptr_t stack_floor(uintptr_t margin);

// A copy of the heap in use, [0, top), to go back to (--gpu's start over,
// main.c): heap_snap makes it (0, or -1 without the memory), heap_rewind
// puts the words and the top back (no thread may be allocating); a snap
// without words (NULL) puts back only the top.
typedef struct {
  Term *words;
  u64   top;
} HeapSnap;
int  heap_snap(HeapSnap *s);
void heap_rewind(const HeapSnap *s);
void heap_snap_free(HeapSnap *s);

#endif
