// heap.c: reserve the heap lazily, bump-allocate from it.

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "heap.h"

Term       *HEAP       = NULL;
u64         HEAP_WORDS = 0;
_Atomic u64 HEAP_TOP   = 1;
u32        *BOOK       = NULL;
u32        *BOOK_LEN   = NULL;
u32         BOOK_CAP   = 1u << 24;

static void *reserve(u64 bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

int heap_init(u64 words) {
  if (words < 1024 || words > (1ull << 32)) {
    return -1;
  }
  HEAP     = reserve(words * sizeof(Term));
  BOOK     = reserve((u64)BOOK_CAP * sizeof(u32));
  BOOK_LEN = reserve((u64)BOOK_CAP * sizeof(u32));
  if (!HEAP || !BOOK || !BOOK_LEN) {
    return -1;
  }
  HEAP_WORDS = words;
  atomic_store(&HEAP_TOP, 1);
  return 0;
}

void heap_free(void) {
  if (HEAP)     munmap(HEAP, HEAP_WORDS * sizeof(Term));
  if (BOOK)     munmap(BOOK, (u64)BOOK_CAP * sizeof(u32));
  if (BOOK_LEN) munmap(BOOK_LEN, (u64)BOOK_CAP * sizeof(u32));
  HEAP = NULL; BOOK = NULL; BOOK_LEN = NULL;
}

// The default capacity: 2^32 words, or three quarters of physical memory
// when that is less, so a runaway program ends with "heap exhausted" rather
// than with the system's out-of-memory killer.
u64 heap_default_words(void) {
  long pages = sysconf(_SC_PHYS_PAGES);
  long psize = sysconf(_SC_PAGESIZE);
  u64  words = 1ull << 32;
  if (pages > 0 && psize > 0) {
    u64 fit = (u64)pages * (u64)psize / 4 * 3 / sizeof(Term);
    if (fit < words) words = fit;
  }
  return words < 1024 ? 1024 : words;
}

u32 heap_alloc(u32 n) {
  u64 at = atomic_fetch_add(&HEAP_TOP, n);
  if (at + n > HEAP_WORDS) {
    atomic_fetch_sub(&HEAP_TOP, n);
    return 0;
  }
  return (u32)at;
}

u64 heap_used(void) {
  return atomic_load(&HEAP_TOP);
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
