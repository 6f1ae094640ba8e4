// heap.c: reserve the heap lazily, bump-allocate from it.

#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "heap/heap.h"
#include "heap/rt.h"

// Per thread: each thread works for one runtime at a time (heap/rt.h).
_Thread_local Rt *RT = NULL;

// One id per name: names are 24 bits (lang/names.h).
#define BOOK_IDS (1u << 24)

static void *reserve(u64 bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

int heap_init(u64 words) {
  Heap *h = &RT->heap;
  if (words < 1024 || words > (1ull << 32)) {
    return -1;
  }
  h->book_cap = BOOK_IDS;
  h->cap      = words;
  h->at       = reserve(words * sizeof(Term));
  h->book     = reserve((u64)h->book_cap * sizeof(u32));
  h->book_len = reserve((u64)h->book_cap * sizeof(u32));
  atomic_store(&h->top, 1);
  if (!h->at || !h->book || !h->book_len) {
    heap_free();
    return -1;
  }
  return 0;
}

void heap_free(void) {
  Heap *h = &RT->heap;
  if (h->at)       munmap(h->at, h->cap * sizeof(Term));
  if (h->book)     munmap(h->book, (u64)h->book_cap * sizeof(u32));
  if (h->book_len) munmap(h->book_len, (u64)h->book_cap * sizeof(u32));
  free(h->free);
  h->at = NULL; h->book = NULL; h->book_len = NULL; h->free = NULL;
  h->free_n = h->free_cap = 0;
}

// What one heap word costs in memory once touched, with what is sized
// from the heap: the word (8 bytes), the normalizer's seen set (2) and room
// for the collapse queue, the printer's maps and the WNF stacks (4).
#define WORD_COST 14

// The memory this process may use: physical memory, or the cgroup's limit
// when lower (containers); 0 if unknown.
static u64 mem_limit(void) {
  long pages = sysconf(_SC_PHYS_PAGES);
  long psize = sysconf(_SC_PAGESIZE);
  u64  mem   = pages > 0 && psize > 0 ? (u64)pages * (u64)psize : 0;
  const char *paths[] = { "/sys/fs/cgroup/memory.max",
                          "/sys/fs/cgroup/memory/memory.limit_in_bytes" };
  for (u32 i = 0; i < 2; i++) {
    FILE *f = fopen(paths[i], "r");
    unsigned long long cg = 0;
    if (!f) continue;
    if (fscanf(f, "%llu", &cg) == 1 && cg > 0 && (mem == 0 || cg < mem)) mem = cg;
    fclose(f);
  }
  return mem;
}

// The bytes this process has reserved so far (its address space in use,
// which RLIMIT_AS bounds); 0 if unknown.
static u64 space_in_use(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  if (!f) return 0;
  if (fscanf(f, "%llu", &pages) != 1) pages = 0;
  fclose(f);
  long psize = sysconf(_SC_PAGESIZE);
  return psize > 0 ? (u64)pages * (u64)psize : 0;
}

// Where space_in_use cannot tell: the program's thread's stack, code and
// the libraries.
#define SPACE_UNKNOWN ((u64)1 << 30)

// The default capacity: 2^32 words, or fewer so that the heap and what is
// sized from it fit in 3/4 of the memory we may use, and their reservations
// (heap, seen set and live bits, WORD_SPACE bytes a word, and `per_word`
// more a word of stacks sized from the heap) in the address space RLIMIT_AS
// leaves after what is reserved now and `other` bytes to come (stacks,
// book). A runaway program then ends with "heap exhausted", not with the
// system's out-of-memory killer (3/4 of memory as heap alone, the rest sized
// from it added, nearly filled memory). *by_space: the address-space limit
// made it smaller.
#define WORD_SPACE 11
u64 heap_default_words(u64 other, u64 per_word, int *by_space) {
  u64 words = 1ull << 32;
  u64 mem   = mem_limit();
  if (by_space) *by_space = 0;
  if (mem > 0 && mem / 4 * 3 / WORD_COST < words) words = mem / 4 * 3 / WORD_COST;
  struct rlimit as;
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    u64 now  = space_in_use();
    u64 used = (now ? now : SPACE_UNKNOWN) + other;
    u64 room = (u64)as.rlim_cur > used ? (u64)as.rlim_cur - used : 0;
    u64 fit  = room / (WORD_SPACE + per_word);
    if (fit < words) {
      words = fit;
      if (by_space) *by_space = 1;
    }
  }
  return words < 1024 ? 1024 : words;
}

// A compare-and-swap, never an add undone when it overshoots: the undo can
// land after another thread's add that the overshoot's own undo let fit
// below it, and the top then falls under that thread's words, which the
// next allocation hands out again (test_heap.c). `most` words from the
// top, or as many as are left if at least `least` are; *got says how many.
static u32 heap_bump(u32 least, u32 most, u32 *got) {
  Heap *h = &RT->heap;
  u64 at = atomic_load_explicit(&h->top, memory_order_relaxed);
  u64 n;
  do {
    n = h->cap > at ? h->cap - at : 0;
    if (n < least) return 0;
    if (n > most) n = most;
  } while (!atomic_compare_exchange_weak(&h->top, &at, at + n));
  atomic_fetch_add_explicit(&h->given, n, memory_order_relaxed);
  *got = (u32)n;
  return (u32)at;
}

u32 heap_alloc(u32 n) {
  u32 got;
  return heap_bump(n, n, &got);
}

u32 heap_take(u32 n, u32 want, u32 *got) {
  Heap *h = &RT->heap;
  while (atomic_load_explicit(&h->free_at, memory_order_relaxed) < h->free_n) {
    u64 i = atomic_fetch_add_explicit(&h->free_at, 1, memory_order_relaxed);
    if (i >= h->free_n) break;
    u32 len = (u32)h->free[i];
    if (len >= n) {
      atomic_fetch_add_explicit(&h->given, len, memory_order_relaxed);
      *got = len;
      return (u32)(h->free[i] >> 32);
    }
  }
  // where fewer than `want` words are left, all of them: an arena of just
  // n would hold one rule's words, and what its next refill leaves unused
  // of it would fill the heap
  return heap_bump(n, want > n ? want : n, got);
}

void heap_set_free(const u64 *chunks, u64 n, u64 top) {
  Heap *h = &RT->heap;
  if (n > h->free_cap) {
    u64 *f = realloc(h->free, n * sizeof(u64));
    if (!f) n = h->free_cap;   // fewer chunks reused: still correct
    else { h->free = f; h->free_cap = n; }
  }
  if (n > 0) memcpy(h->free, chunks, n * sizeof(u64));
  h->free_n = n;
  atomic_store(&h->free_at, 0);
  atomic_store(&h->top, top);
}

void heap_drop_free(void) {
  RT->heap.free_n = 0;
  atomic_store(&RT->heap.free_at, 0);
}

u64 heap_given(void) {
  return atomic_load_explicit(&RT->heap.given, memory_order_relaxed);
}

u64 heap_used(void) {
  return atomic_load(&RT->heap.top);
}

int heap_snap(HeapSnap *s) {
  s->top   = atomic_load(&RT->heap.top);
  s->words = malloc(s->top * sizeof(Term));
  if (!s->words) return -1;
  memcpy(s->words, RT->heap.at, s->top * sizeof(Term));
  return 0;
}

void heap_rewind(const HeapSnap *s) {
  if (s->words) memcpy(RT->heap.at, s->words, s->top * sizeof(Term));
  heap_drop_free();   // chunks of a later heap
  atomic_store(&RT->heap.top, s->top);
}

void heap_snap_free(HeapSnap *s) {
  free(s->words);
  s->words = NULL;
}

// Digits only (strtoull would take a sign, spaces and wrap around), then
// an optional suffix; at most 2^32 words.
u64 heap_parse_size(const char *s) {
  u64 n = 0;
  const char *p = s;
  for (; *p >= '0' && *p <= '9'; p++) {
    n = n * 10 + (u64)(*p - '0');
    if (n > (1ull << 32)) return 0;
  }
  if (p == s) return 0;
  u64 mul = 1;
  if (*p == 'K' || *p == 'k') { mul = 1ull << 10; p++; }
  else if (*p == 'M' || *p == 'm') { mul = 1ull << 20; p++; }
  else if (*p == 'G' || *p == 'g') { mul = 1ull << 30; p++; }
  if (*p != '\0' || n > (1ull << 32) / mul) return 0;
  return n * mul;
}

uintptr_t stack_floor(uintptr_t margin) {
  pthread_attr_t at;
  void  *lo = NULL;
  size_t sz = 0;
  uintptr_t r = 0;
  if (pthread_getattr_np(pthread_self(), &at) == 0) {
    if (pthread_attr_getstack(&at, &lo, &sz) == 0 && lo) r = (uintptr_t)lo + margin;
    pthread_attr_destroy(&at);
  }
  return r;
}
