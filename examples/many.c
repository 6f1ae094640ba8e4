// many.c: a runtime is a value. 1,000 programs in one process, each in a
// runtime of its own, opened before and closed after it (every other one
// with a pool of two threads); each result is checked, and what a closed
// runtime held must be given back: the resident memory after the last run
// is within RSS_SLACK of what it was after the 100th, and no thread of
// theirs is left.
//
//   cc many.c $(pkg-config --cflags --libs hvm4g) -o many && ./many
//
// Prints one line, "many: ..., ok" or what went wrong; exits 0 or 1.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/resource.h>
#include <hvm4g.h>

#define RUNS      1000
#define FIRST     100               // the runs before the first measure
#define RSS_SLACK (2 << 20)         // bytes: a runtime that kept 2 KiB would pass it

// The resident memory of this process in bytes: /proc's count of pages
// where there is one, else the peak (which a leak raises too).
static long long rss(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long long size, pages;
  if (f) {
    int got = fscanf(f, "%lld %lld", &size, &pages);
    fclose(f);
    if (got == 2) return pages * sysconf(_SC_PAGESIZE);
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
#ifdef __APPLE__
  return (long long)ru.ru_maxrss;
#else
  return (long long)ru.ru_maxrss << 10;
#endif
}

// The threads of this process (-1: unknown here).
static int threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

// Run i: the sum 1 + .. + n in a fresh runtime; 0, or 1 with a message.
static int one(int i) {
  int  n = i % 200;
  char src[160], want[32], got[32];
  snprintf(src, sizeof src, "@sum = λ{0: 0; λ&k. k + @sum(k - 1)}\n@main = @sum(%d)\n", n);
  snprintf(want, sizeof want, "%d", n * (n + 1) / 2);
  hvm4g_config c;
  hvm4g_config_init(&c);
  c.heap_words = 1 << 18;   // 2 MiB
  c.threads    = 1 + i % 2;
  hvm4g *h;
  int rc = hvm4g_open(&h, &c);
  if (rc == HVM4G_OK) rc = hvm4g_load_string(h, "many", src);
  if (rc == HVM4G_OK) rc = hvm4g_normalize(h, NULL, HVM4G_CPU);
  if (rc == HVM4G_OK && hvm4g_print(h, got, sizeof got) < 0) rc = HVM4G_ERR_STATE;
  if (rc != HVM4G_OK) {
    printf("many: run %d failed (%d): %s\n", i, rc, hvm4g_error(h));
  } else if (strcmp(got, want) != 0) {
    printf("many: run %d printed %s, not %s\n", i, got, want);
    rc = 1;
  }
  hvm4g_close(h);
  return rc != HVM4G_OK;
}

// Under AddressSanitizer freed memory waits in its quarantine, so the
// resident memory says nothing; its leak check at exit says it instead.
#if defined(__SANITIZE_ADDRESS__)
#define RSS_CHECKED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSS_CHECKED 0
#endif
#endif
#ifndef RSS_CHECKED
#define RSS_CHECKED 1
#endif

int main(void) {
  // measured after the first runs too: a sanitizer starts threads of its
  // own once the first ones run
  int       before = 0;
  long long first  = 0;
  for (int i = 0; i < RUNS; i++) {
    if (one(i)) return 1;
    if (i + 1 == FIRST) {
      first  = rss();
      before = threads();
    }
  }
  long long last = rss();
  int       after = threads();
  if (after != before) {
    printf("many: %d threads after %d closed runtimes (%d after %d)\n", after, RUNS, before, FIRST);
    return 1;
  }
  if (RSS_CHECKED && last - first > RSS_SLACK) {
    printf("many: resident memory grew %lld KiB from run %d to run %d (at most %d KiB)\n",
           (last - first) >> 10, FIRST, RUNS, RSS_SLACK >> 10);
    return 1;
  }
  printf("many: %d runtimes, resident memory %+lld KiB from run %d to run %d, ok\n", RUNS,
         (last - first) >> 10, FIRST, RUNS);
  return 0;
}
