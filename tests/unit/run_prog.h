// run_prog.h: unit tests that run whole programs (test_gpu.c, test_take32.c)
// share this. A program runs in a forked child (a fresh heap per run), on
// the CPU or on the simulated device; the parent gets what it printed: the
// normal form, then a line of device counters ("stops=.. passes=..").
// Include after heap.h, names.h, parse.h, print.h, eval.h, snf.h,
// dev/gpu.h, dev/dev.h and run/prim.h.

#ifndef HVM4G_TEST_RUN_PROG_H
#define HVM4G_TEST_RUN_PROG_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "heap/rt.h"
#include "cpu/cpu_rt.h"
#include "dev/dev_rt.h"

typedef struct {
  int  mode;      // 0: CPU, 1: device (sim); 2, 3: the -T pool (threads)
                  // stopped after stop_after tasks, then the slots it left
                  // normalized on the CPU (2) or the device (3)
  u32  dup;       // DUP_OWNER / DUP_ATOMIC
  u32  lanes;
  u32  shift;     // region shift
  u32  budget;
  u32  threads;   // sim CPU threads
  u32  take;      // 64, or 32 (--take=32); 0: the default
  u32  stop_after;
} RunConf;

static u64 STOP_AFTER = 0;

static int stop_after(void) {
  return snf_made() >= STOP_AFTER;
}

// Modes 2 and 3: "left=N distinct=0|1 dups=0|1" after the counters.
static char LEFT_LINE[96];

// Whether the n slots are distinct.
static int all_distinct(const u32 *v, u32 n) {
  for (u32 i = 0; i < n; i++) {
    for (u32 j = i + 1; j < n; j++) {
      if (v[i] == v[j]) return 0;
    }
  }
  return 1;
}

typedef struct {
  char out[1 << 16];
  int  ok;
} RunOut;

static void run_child(const char *src, RunConf c) {
  if (heap_init(1u << 24) != 0) _exit(2);
  cpu_rt_open();
  if (parse_text("test.hvm4", src) != 0) _exit(3);
  u32 id = table_find("main", 4);
  if (id == ~0u || RT->heap.book[id] == 0) _exit(4);
  if (c.mode >= 2) RT->cpu->conf.threads = c.threads;
  eval_init();
  eval_set_host(prim_host);
  snf_init();
  u32 root = heap_alloc(1);
  RT->heap.at[root] = TERM(REF, id, 0);
  LEFT_LINE[0] = 0;
  if (c.mode >= 2) {
    RT->dev->conf.device   = DEV_SIM;
    RT->dev->conf.dup_mode = c.dup;
    RT->dev->conf.lanes    = c.lanes;
    STOP_AFTER   = c.stop_after;
    u32 stop = 0, n = 0;
    int dups = 0;
    if (snf_at_until(root, stop_after)) {
      const u32 *left = snf_left(&n, &dups);
      snprintf(LEFT_LINE, sizeof LEFT_LINE, " left=%u distinct=%d dups=%d",
               n, all_distinct(left, n), dups);
      if (c.mode == 3) {
        stop = n ? gpu_snf_roots(left, n) : 0;   // as the scheduler hands over
      } else {
        for (u32 i = 0; i < n; i++) snf_at(left[i]);
      }
      if (stop || dups) snf_at(root);
    }
  } else if (c.mode) {
    RT->dev->conf.device       = DEV_SIM;
    RT->dev->conf.dup_mode     = c.dup;
    RT->dev->conf.lanes        = c.lanes;
    RT->dev->conf.region_shift = c.shift;
    RT->dev->conf.budget       = c.budget;
    RT->dev->conf.handoff      = 0;   // under load, slow passes would hand back (pass.c)
    RT->dev->conf.threads      = c.threads;
    if (c.take) RT->dev->conf.take = c.take;
    if (gpu_snf_at(root)) snf_at(root);   // the CPU finishes
  } else {
    snf_at(root);
  }
  print_term(stdout, RT->heap.at[root]);
  GpuStats *s = &RT->dev->stats;
  printf("\nstops=%llu stop=%u pri=%u defers=%llu passes=%llu local=%llu "
         "reclaims=%llu itrs=%llu%s\n",
         (unsigned long long)s->stops, s->stop, s->stop_pri,
         (unsigned long long)s->defers, (unsigned long long)s->passes,
         (unsigned long long)s->local, (unsigned long long)s->reclaims,
         (unsigned long long)(eval_itrs() + gpu_itrs()), LEFT_LINE);
  fflush(stdout);
  _exit(0);
}

static void run(const char *src, RunConf c, RunOut *r) {
  int fd[2];
  r->ok = 0;
  r->out[0] = 0;
  if (pipe(fd) != 0) return;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    dup2(fd[1], 1);
    run_child(src, c);
  }
  close(fd[1]);
  size_t n = 0;
  ssize_t k;
  while ((k = read(fd[0], r->out + n, sizeof r->out - 1 - n)) > 0) n += k;
  r->out[n] = 0;
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  r->ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

// The printed term: everything before the counters' line.
static void term_of(const RunOut *r, char *buf, size_t cap) {
  const char *e = strstr(r->out, "\nstops=");
  size_t n = e ? (size_t)(e - r->out) : strlen(r->out);
  if (n >= cap) n = cap - 1;
  memcpy(buf, r->out, n);
  buf[n] = 0;
}

static unsigned long long stat_of(const RunOut *r, const char *key) {
  const char *p = strstr(r->out, "\nstops=");
  if (!p) return ~0ull;
  p = strstr(p, key);
  return p ? strtoull(p + strlen(key), NULL, 10) : ~0ull;
}

// Programs with sharing that both tests run.
static const char *P_SHARED =
  "@tree = λ{0: λ&i.i * 3; λ&d.λ&i.#N{@tree(d - 1, i * 2), @tree(d - 1, i * 2 + 1)}}\n"
  "@sum  = λ{#N: λa.λb.@sum(a) + @sum(b); λn.n}\n"
  "@rep  = λ&x.λ{0: []; λ&n.x <> @rep(x, n - 1)}\n"
  "@main = ! t &T = @tree(5, 1); [@sum(t₀), @rep(t₁, 40)]\n";

static const char *P_CHURCH =
  "@c2   = λs.!S&C = s; λx.S₀(S₁(x))\n"
  "@k2   = λs.!S&K = s; λx.S₀(S₁(x))\n"
  "@main = [@c2(@k2), λy. !f&L = λx.#P{x, y}; #Q{f₀(1), f₁(2)}]\n";

#endif
