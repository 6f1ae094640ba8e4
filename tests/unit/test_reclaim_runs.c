// test_reclaim_runs.c: one runtime, many runs, in a small heap (issue 63,
// points 2 and 3). Every word an earlier run made is garbage once the
// next run begins, so a runtime that fits one run fits any number of them;
// and an error leaves nothing a later collection would read as a root
// (no root frame, no host primitive counted, the collector disarmed), so
// the run after an error collects as the first one did.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hvm4g.h>
#include "check.h"
#include "cpu/cpu_rt.h"

static const char *SRC =
  // strict: a few live words, 12 words handed out a step
  "@loop = λ{0: λacc. acc; λ&k. λacc. @next(k, ((acc * 31) + k) % 65521)}\n"
  "@next = λ&k. λ{0: @loop(k - 1, 0); λp. @loop(k - 1, p)}\n"
  "@big = @loop(300000, 0)\n"
  "@sum = λ{[]: 0; <>: λh. λt. h + @sum(t)}\n"
  "@gen = λ{0: []; λ&n. n <> @gen(n - 1)}\n"
  "@sg = @sum(@gen(10))\n"
  // errors: on the program's thread, in a pool task beside a long loop,
  // inside a host primitive, inside %nf, and a heap too small
  "@bad = #P{@loop(3000, 1), #A{1}(2)}\n"
  "@e = λ{0: #A{1}(2); λ&d. #N{@e(d - 1), @e(d - 1)}}\n"
  "@inpool = #P{@loop(100000, 0), @e(10)}\n"
  "@inlog = %log(#P{@loop(3000, 1), #A{1}(2)})\n"
  "@innf = %nf(#P{@loop(3000, 1), #A{1}(2)})\n"
  "@t = λ{0: 0; λ&d. #N{@t(d - 1), @t(d - 1)}}\n"
  "@full = @t(22)\n"
  // restarts under a collapse: the DUP met again starts over lazily
  "@c2 = λ&f. λx. f(f(x))\n"
  "@restart = &A{&B{@c2(@c2, λy. #P{y}, 0), 1}, &B{2, 3}}\n";

static hvm4g *open_rt(unsigned threads, unsigned long long words) {
  hvm4g_config c;
  hvm4g_config_init(&c);
  c.threads    = threads;
  c.heap_words = words;
  hvm4g *h = NULL;
  if (hvm4g_open(&h, &c) != HVM4G_OK || hvm4g_load_string(h, "runs", SRC) != HVM4G_OK) {
    printf("open: %s\n", h ? hvm4g_error(h) : "?");
    exit(1);
  }
  return h;
}

// @name's normal form printed, or "" (rc: the call's status).
static const char *norm(hvm4g *h, const char *name, int *rc) {
  static char buf[64];
  buf[0] = '\0';
  *rc    = hvm4g_normalize(h, name, HVM4G_CPU);
  if (*rc == HVM4G_OK) hvm4g_print(h, buf, sizeof buf);
  return buf;
}

static u64 in_use(hvm4g *h) {
  hvm4g_stats s;
  hvm4g_get_stats(h, &s);
  return s.heap_words;
}

// What a collection of h's runtime would start from holds nothing of a
// call that ended: no root frame of the caller's thread, no host primitive
// in flight, no collection under way or armed. (A pool thread may still
// finish a task of the failed call, in frames of its own, until the next
// run halts the pool.)
static int roots_clean(hvm4g *h) {
  Rt *was = RT;
  api_use(h);
  Reclaim *r  = &RT->cpu->reclaim;
  int      ok = atomic_load(&r->hosts) == 0 && atomic_load(&r->stop) == 0 && !r->armed &&
                r->roots[0].head == NULL;
  RT = was;
  return ok;
}

int main(void) {
  int rc;
  // Point 3: after each kind of error, at -T1, -T2 and -T4, the runtime's
  // roots are clean and the next run collects its way through 3.6M words
  // in a heap of 1M.
  const char *errors[] = { "bad", "inpool", "inlog", "innf", "full" };
  for (unsigned t = 1; t <= 4; t *= 2) {
    hvm4g *h = open_rt(t, 1 << 20);
    for (int round = 0; round < 2; round++) {
      for (u32 e = 0; e < sizeof errors / sizeof *errors; e++) {
        norm(h, errors[e], &rc);
        CHECK(rc != HVM4G_OK);
        CHECK(roots_clean(h));
        const char *out = norm(h, "big", &rc);
        CHECK(rc == HVM4G_OK && strcmp(out, "60986") == 0);
        if (rc != HVM4G_OK) printf("T%u after @%s: %s\n", t, errors[e], hvm4g_error(h));
      }
    }
    hvm4g_close(h);
  }

  // Point 2: a 1M-word runtime gives the strict loop's result every time.
  hvm4g *h = open_rt(1, 1 << 20);
  for (int i = 0; i < 10; i++) {
    const char *out = norm(h, "big", &rc);
    CHECK(rc == HVM4G_OK && strcmp(out, "60986") == 0);
  }
  hvm4g_close(h);

  // @sum(@gen(10)) 1000 times in 4M words: never fails, the heap in use
  // the same after each call.
  h = open_rt(1, 4 << 20);
  u64 first = 0;
  int fails = 0, grew = 0;
  for (int i = 0; i < 1000; i++) {
    const char *out = norm(h, "sg", &rc);
    fails += rc != HVM4G_OK || strcmp(out, "55") != 0;
    if (i == 0) first = in_use(h);
    grew += in_use(h) != first;
  }
  CHECK(fails == 0);
  CHECK(grew == 0);
  hvm4g_close(h);

  // A collapse that starts over lazily leaves no more in use than the one
  // before it.
  for (unsigned t = 1; t <= 2; t++) {
    h = open_rt(t, 4 << 20);
    FILE *sink = fopen("/dev/null", "w");
    u64   used[3];
    for (int i = 0; i < 3; i++) {
      CHECK(hvm4g_collapse(h, "restart", -1, HVM4G_CPU, sink) == HVM4G_OK);
      used[i] = in_use(h);
    }
    CHECK(used[1] == used[0] && used[2] == used[0]);
    fclose(sink);
    hvm4g_close(h);
  }
  return check_done();
}
