// threads.c: two runtimes at the same time. Two threads each open a
// runtime of their own (one with a pool of two threads) and run programs
// in it at once: normal forms, a collapse, an error that comes back as a
// value; each result is checked.
//
//   cc threads.c $(pkg-config --cflags --libs hvm4g) -lpthread -o threads && ./threads
//
// Prints one line, "threads: ..., ok" or what went wrong; exits 0 or 1.

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hvm4g.h>

#define ROUNDS 50   // programs each thread runs

static const char *PROGRAM =
  "@sum  = λ{0: 0; λ&k. k + @sum(k - 1)}\n"
  "@tree = λ{0: 1; λ&d. #N{@tree(d - 1), @tree(d - 1)}}\n"
  "@size = λ{#N: λa. λb. @size(a) + @size(b); λx. 1}\n"
  "@pairs = &L{#P{1, 2}, #P{3, 4}}\n"
  "@oops = 1(2)\n";

typedef struct {
  unsigned pool;      // the runtime's threads
  int      seed;      // which programs it runs
  char     why[256];  // the first failure (empty: none)
} Worker;

// @name's normal form printed into got; 0, or the status with w->why.
static int normal(Worker *w, hvm4g *h, const char *name, char *got, size_t cap) {
  int rc = hvm4g_normalize(h, name, HVM4G_CPU);
  if (rc == HVM4G_OK && hvm4g_print(h, got, cap) < 0) rc = HVM4G_ERR_STATE;
  if (rc != HVM4G_OK) snprintf(w->why, sizeof w->why, "@%s: %d %s", name, rc, hvm4g_error(h));
  return rc;
}

static int round_of(Worker *w, int r) {
  int  n = (w->seed * 37 + r * 11) % 300, d = (w->seed + r) % 12;
  char src[512], got[64], want[64];
  hvm4g_config c;
  hvm4g_config_init(&c);
  c.threads    = w->pool;
  c.heap_words = 1 << 20;
  hvm4g *h;
  int rc = hvm4g_open(&h, &c);
  if (rc != HVM4G_OK) {
    snprintf(w->why, sizeof w->why, "open: %d %s", rc, hvm4g_error(h));
    hvm4g_close(h);
    return 1;
  }
  snprintf(src, sizeof src, "%s@a = @sum(%d)\n@b = @size(@tree(%d))\n", PROGRAM, n, d);
  int bad = hvm4g_load_string(h, "threads", src) != HVM4G_OK;
  if (bad) snprintf(w->why, sizeof w->why, "load: %s", hvm4g_error(h));
  // @sum(n) = n(n + 1)/2; a full tree of depth d has 2^d leaves
  if (!bad && !(bad = normal(w, h, "a", got, sizeof got) != HVM4G_OK)) {
    snprintf(want, sizeof want, "%d", n * (n + 1) / 2);
    if ((bad = strcmp(got, want) != 0)) snprintf(w->why, sizeof w->why, "@a: %s, not %s", got, want);
  }
  if (!bad && !(bad = normal(w, h, "b", got, sizeof got) != HVM4G_OK)) {
    snprintf(want, sizeof want, "%d", 1 << d);
    if ((bad = strcmp(got, want) != 0)) snprintf(w->why, sizeof w->why, "@b: %s, not %s", got, want);
  }
  if (!bad) {
    char  *text = NULL;
    size_t len  = 0;
    FILE  *out  = open_memstream(&text, &len);
    rc = out ? hvm4g_collapse(h, "pairs", -1, HVM4G_CPU, out) : HVM4G_ERR_IO;
    if (out) fclose(out);
    if ((bad = rc != HVM4G_OK || !text || strcmp(text, "#P{1,2}\n#P{3,4}\n") != 0)) {
      snprintf(w->why, sizeof w->why, "collapse: %d %s", rc, text ? text : hvm4g_error(h));
    }
    free(text);
  }
  if (!bad) {
    rc = hvm4g_normalize(h, "oops", HVM4G_CPU);
    if ((bad = rc != HVM4G_ERR_RUNTIME || !strstr(hvm4g_error(h), "RUNTIME_ERROR"))) {
      snprintf(w->why, sizeof w->why, "@oops: %d %s", rc, hvm4g_error(h));
    }
  }
  hvm4g_close(h);
  return bad;
}

static void *work(void *arg) {
  Worker *w = arg;
  for (int r = 0; r < ROUNDS && !w->why[0]; r++) round_of(w, r);
  return NULL;
}

int main(void) {
  Worker    w[2] = { { .pool = 1, .seed = 1 }, { .pool = 2, .seed = 2 } };
  pthread_t th[2];
  for (int i = 0; i < 2; i++) {
    if (pthread_create(&th[i], NULL, work, &w[i]) != 0) {
      printf("threads: cannot start a thread\n");
      return 1;
    }
  }
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  int bad = 0;
  for (int i = 0; i < 2; i++) {
    if (w[i].why[0]) {
      printf("threads: runtime %d (%u threads): %s\n", i + 1, w[i].pool, w[i].why);
      bad = 1;
    }
  }
  if (!bad) printf("threads: 2 runtimes at once, %d rounds each, ok\n", ROUNDS);
  return bad;
}
