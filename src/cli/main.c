// main.c: hvm4g, the command-line program, a client of the library
// (include/hvm4g.h): reads the flags and the program, normalizes @main,
// prints the result, exits with the status of hvm4g.h (HVM4G_ERR_*).
//
// Three threads of its own: main, which blocks SIGINT and SIGTERM for
// every thread it starts; the program's, with a 1 GiB stack (committed
// only where touched) so deep terms cannot overflow the parser or
// printer; and the watcher, which takes those signals (sigtimedwait) and
// draws the progress line. An interrupt prints -s from the counters and
// ends the process at once: the runtime has no safe point to unwind to.
//
// The library names no flag in its messages and prints nothing of its
// own; this program shows its notice and errors, with the flag that
// helps where there is one (report).

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <hvm4g.h>
#include "run/api.h"
#include "cli/flags.h"
#include "run/sched.h"
#include "run/stats.h"
#include "run/prim.h"
#include "heap/heap.h"
#include "cpu/eval.h"
#include "dev/gpu.h"
#include "dev/dev.h"
#include "dev/dev_rt.h"
#include "lang/parse.h"

#define MAIN_STACK   ((u64)1 << 30)   // the program's thread (see the top)
#define WATCH_MS     100              // the watcher's poll: an interrupt ends within it
#define PROGRESS_MS  500              // the progress line's refresh

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

// Colour on a terminal only, never with NO_COLOR set (no-color.org).
static int colour_on(int fd) {
  const char *no = getenv("NO_COLOR");
  return isatty(fd) && !(no && *no);
}

static int starts(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

#define OURS "hvm4g: "   // the start of the library's own messages

// "heap exhausted: N live words" counts what the last collection kept,
// not what the run allocated after it: a second line says so, with the
// heap's size.
static void heap_hint(const char *msg) {
  fprintf(stderr, "%s (use --heap=SIZE for a larger heap)\n", msg);
  if (!strstr(msg, "live words")) return;
  fprintf(stderr, OURS "(live words: those reachable at the last collection, not counting "
          "what the run allocated after it; the heap holds %llu words)\n",
          (unsigned long long)RT->heap.cap);
}

// Prints a library message on stderr, with the flag that helps where it
// says what one changes; PARSE_ERROR in red on a terminal. A runtime
// error that is none of the library's messages is a %panic's text: an
// error as any other, after the output printed before it.
static void report(const char *msg, int rc, u32 threads) {
  if (rc == HVM4G_ERR_RUNTIME && !starts(msg, "RUNTIME_ERROR") && !starts(msg, OURS)) {
    fflush(stdout);
    fprintf(stderr, "%s\n", msg);
    return;
  }
  if (!msg[0]) return;
  if (starts(msg, "PARSE_ERROR") && colour_on(2)) {
    fprintf(stderr, "\033[1;31mPARSE_ERROR\033[0m%s\n", msg + 11);
  } else if (rc == HVM4G_ERR_HEAP && starts(msg, OURS "heap exhausted") &&
             strstr(msg, "address-space limit")) {
    fprintf(stderr, "%s (raise the limit, ulimit -v, for a larger heap)\n", msg);
  } else if (rc == HVM4G_ERR_HEAP && starts(msg, OURS "heap exhausted") && !strstr(msg, "--heap")) {
    heap_hint(msg);
  } else if ((rc == HVM4G_ERR_USAGE && starts(msg, OURS "cannot start a thread")) ||
             (threads > 1 && starts(msg, OURS "cannot reserve a WNF stack"))) {
    fprintf(stderr, "%s: the system has no room for -T %u threads (use fewer)\n", msg, threads);
  } else if (rc == HVM4G_ERR_DEVICE && starts(msg, OURS SCHED_NO_CUDA ": ")) {
    fprintf(stderr, OURS "--device=cuda: %s; use --device=sim for the simulated device\n",
            msg + strlen(OURS SCHED_NO_CUDA ": "));
  } else if (rc == HVM4G_ERR_DEVICE && starts(msg, OURS SCHED_NO_METAL ": ")) {
    fprintf(stderr, OURS "--device=metal: %s; use --device=sim for the simulated device\n",
            msg + strlen(OURS SCHED_NO_METAL ": "));
  } else {
    fprintf(stderr, "%s\n", msg);
  }
}

// The program's state, shared by its threads. It lives in main's frame,
// which lasts until the process ends (main ends it with exit).
typedef struct {
  Command         cmd;        // the command line (flags.h)
  pthread_mutex_t line;       // the progress line, and the watcher's use of the runtime
  int             shown;      // a progress line is on the screen
  int             done;       // the run ended: no more progress lines
  int             progress;   // the progress line is drawn
  int             noticed;    // the runtime's notice is printed
  _Atomic double  run_t0;     // the run's start (0: not started); the watcher reads it
  hvm4g          *runtime;    // the watcher reads its counters (under line; NULL: none)
  int             argc;
  char          **argv;
  int             rc;
} Prog;

// The runtime chose otherwise than asked (no usable GPU: the CPU runs):
// said once, as --gpu's consequence.
static void notice(Prog *p, hvm4g *h) {
  const char *n = hvm4g_notice(h);
  if (!n || p->noticed) return;
  p->noticed = 1;
  fprintf(stderr, OURS "--gpu: %s\n", starts(n, OURS) ? n + strlen(OURS) : n);
}

// The watcher
// ===========

static void line_clear(Prog *p) {
  if (p->shown) fputs("\r\033[K", stderr);
  p->shown = 0;
}

// Ends the progress line before the result is printed.
static void progress_end(Prog *p) {
  pthread_mutex_lock(&p->line);
  p->done = 1;
  line_clear(p);
  pthread_mutex_unlock(&p->line);
}

static void human(double v, char *buf, size_t cap) {
  const char *unit[] = { "", "K", "M", "G", "T" };
  int u = 0;
  while (v >= 1000 && u < 4) { v /= 1000; u++; }
  snprintf(buf, cap, u ? "%.2f%s" : "%.0f%s", v, unit[u]);
}

// "hvm4g: 1.23G interactions, 41.50M/s, heap 12.0 MiB, CPU x4"
static void progress_draw(Prog *p, double *last_t, u64 *last_n, u64 *last_dev) {
  pthread_mutex_lock(&p->line);
  if (!p->done && p->runtime) {
    api_use(p->runtime);   // the counters below are the runtime's
    double t = now();
    u64 dev = gpu_itrs(), n = eval_itrs() + dev;
    double rate = t > *last_t ? (double)(n - *last_n) / (t - *last_t) : 0;
    const char *side = dev != *last_dev ? "device" : "CPU";
    char a[32], r[32];
    human((double)n, a, sizeof a);
    human(rate, r, sizeof r);
    fprintf(stderr, "\r\033[Khvm4g: %s interactions, %s/s, heap %.1f MiB, %s",
            a, r, (double)heap_used() * 8 / (1 << 20), side);
    if (side[0] == 'C' && p->cmd.opt.eval.threads > 1) fprintf(stderr, " x%u", p->cmd.opt.eval.threads);
    fflush(stderr);
    p->shown  = 1;
    *last_t   = t;
    *last_n   = n;
    *last_dev = dev;
  }
  pthread_mutex_unlock(&p->line);
}

static void *watcher(void *arg) {
  Prog *p = arg;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  struct timespec tick = { 0, WATCH_MS * 1000000L };
  double shown = now(), last_t = now();
  u64    last_n = 0, last_dev = 0;
  for (;;) {
    int sig = sigtimedwait(&set, NULL, &tick);
    if (sig == SIGINT || sig == SIGTERM) {
      pthread_mutex_lock(&p->line);   // held to the end: the runtime stays open
      p->done = 1;
      line_clear(p);
      fprintf(stderr, "hvm4g: interrupted (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
      if (p->runtime) {
        api_use(p->runtime);
        if (p->run_t0 > 0) stats_print(now() - p->run_t0, 1);
        prim_procs_end();   // the program's children end with it
      }
      fflush(NULL);
      _exit(HVM4G_INTERRUPTED);
    }
    if (p->progress && p->run_t0 > 0 && now() - shown >= PROGRESS_MS / 1e3) {
      shown = now();
      progress_draw(p, &last_t, &last_n, &last_dev);
    }
  }
  return NULL;
}

// The program
// ===========

#define EVAL_MAIN "@main = "

// -e TERM: leading `#include "file"` directives stay as they are, the rest
// is @main's term; *main_at: where EVAL_MAIN went, which messages skip.
static char *eval_source(const char *text, size_t *main_at) {
  const char *p = text;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (strncmp(p, "#include", 8) != 0) break;
    const char *q = strchr(p, '"');
    q = q ? strchr(q + 1, '"') : NULL;
    if (!q) break;   // the parser reports it
    p = q + 1;
  }
  size_t head = (size_t)(p - text), len = strlen(text) + sizeof EVAL_MAIN + 1;
  char  *src  = malloc(len);
  // on the term's own line, so that messages keep the user's line numbers
  if (src) snprintf(src, len, "%.*s" EVAL_MAIN "%s\n", (int)head, text, p);
  *main_at = head;
  return src;
}

static char *read_stdin(void) {
  size_t cap = 1 << 16, n = 0;
  char  *buf = malloc(cap + 1);
  while (buf) {
    n += fread(buf + n, 1, cap - n, stdin);
    if (n < cap) break;
    char *nb = realloc(buf, cap * 2 + 1);
    if (!nb) { free(buf); return NULL; }
    buf = nb;
    cap *= 2;
  }
  if (buf && ferror(stdin)) { free(buf); return NULL; }
  if (buf) buf[n] = '\0';
  return buf;
}

static int load(Prog *p, hvm4g *h) {
  const Cli *cli = &p->cmd.cli;
  if (cli->eval || strcmp(cli->file, "-") == 0) {
    size_t main_at = 0;
    char  *src     = cli->eval ? eval_source(cli->eval, &main_at) : read_stdin();
    if (!src) {
      fprintf(stderr, "hvm4g: cannot read the program from %s (%s)\n",
              cli->eval ? "-e" : "stdin", strerror(errno ? errno : ENOMEM));
      return HVM4G_ERR_PARSE;
    }
    // positions count what the user wrote (this thread works for h)
    if (cli->eval) parse_hide((u32)main_at, (u32)strlen(EVAL_MAIN));
    // no slash in the name: its #includes are relative to this directory
    int rc = hvm4g_load_string(h, cli->eval ? "<-e>" : "<stdin>", src);
    free(src);
    return rc;
  }
  return hvm4g_load_file(h, cli->file);
}

// The runtime is left open: the process ends with threads that may not
// be joinable after an error.
static int fail(Prog *p, hvm4g *h, int rc) {
  progress_end(p);
  prim_procs_end();   // the program's children end with it
  notice(p, h);
  report(hvm4g_error(h), rc, p->cmd.opt.eval.threads);
  if (p->run_t0 > 0) stats_print(now() - p->run_t0, 0);   // -s, as after an interrupt
  fflush(stdout);
  return rc;
}

// --device, --dup and --trace act on --gpu and %gnf: said before the run
// where neither comes, and so is a trace file that cannot be written.
static int device_flags(const Command *cmd) {
  const char *trace = cmd->opt.gpu.trace;
  const char *idle  = cmd->cli.device_set ? "--device" : cmd->cli.dup_set ? "--dup"
                    : trace ? "--trace" : NULL;
  if (idle && !cmd->opt.sched.requested && !parse_used(PRIM_GNF)) {
    fprintf(stderr, OURS "%s acts on --gpu and %%gnf, and this program calls no "
            "%%gnf: add --gpu\n", idle);
    return HVM4G_ERR_USAGE;
  }
  FILE *t = trace ? fopen(trace, "a") : NULL;
  if (trace && !t) {
    fprintf(stderr, OURS "cannot write trace file '%s': %s\n", trace, strerror(errno));
    return HVM4G_ERR_IO;
  }
  if (t) fclose(t);
  return HVM4G_OK;
}

static int run(Prog *p) {
  Command *cmd = &p->cmd;
  flags_defaults(cmd);
  flags_parse(p->argc, p->argv, cmd);
  cmd->opt.color     = colour_on(1);
  cmd->opt.eval.live = p->progress || cmd->opt.eval.stats;   // the watcher reads the counts

  hvm4g *h;
  int rc = api_open(&h, &cmd->opt);
  // the libraries' warnings (a primitive overridden), as HVM4 prints them
  if (hvm4g_warning(h)) fprintf(stderr, "%s\n", hvm4g_warning(h));
  if (rc != HVM4G_OK) {
    fprintf(stderr, "%s%s\n", hvm4g_error(h),
            rc == HVM4G_ERR_HEAP ? " (try a smaller --heap)" : "");
    hvm4g_close(h);
    return rc;
  }
  api_use(h);   // this thread's own calls below (stats, exit) are h's
  notice(p, h);
  pthread_mutex_lock(&p->line);
  p->runtime = h;
  pthread_mutex_unlock(&p->line);
  if ((rc = load(p, h)) != HVM4G_OK) return fail(p, h, rc);
  // silent by default, as HVM4: an undefined reference prints as written
  if (cmd->cli.warn_undefined && hvm4g_warning(h)) fprintf(stderr, "%s\n", hvm4g_warning(h));
  if ((rc = device_flags(cmd)) != HVM4G_OK) return rc;

  int where = cmd->opt.sched.requested ? HVM4G_DEVICE : HVM4G_CPU;
  p->run_t0 = now();
  if (cmd->cli.collapse) {
    rc = hvm4g_collapse(h, NULL, cmd->cli.limit, where, stdout);
  } else {
    rc = hvm4g_normalize(h, NULL, where);
  }
  double secs = now() - p->run_t0;
  progress_end(p);
  if (rc != HVM4G_OK) return fail(p, h, rc);
  notice(p, h);
  if (!cmd->cli.collapse && !cmd->opt.eval.silent && !cmd->opt.eval.debug) {
    rc = hvm4g_print_file(h, stdout);
    putchar('\n');
    if (rc != HVM4G_OK) return fail(p, h, rc);
  }
  stats_print(secs, 0);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "hvm4g: cannot write the output\n");
    _exit(HVM4G_ERR_IO);   // exit() would flush stdout again
  }
  if (cmd->opt.gpu.trace && cmd->opt.sched.requested && !RT->dev->stats.runs &&
      !gpu_trace_errno()) {   // --gpu given: not a mistake, the CPU was done first
    fprintf(stderr, OURS "--trace %s: the CPU ran the whole program; no device pass "
            "to trace\n", cmd->opt.gpu.trace);
  } else {
    int trace = gpu_finish();
    if (trace != 0) return trace == -2 ? HVM4G_ERR_IO : HVM4G_ERR_USAGE;
  }
  sched_exit(0);   // a device context: the process ends here
  pthread_mutex_lock(&p->line);   // the watcher is done with the runtime
  p->runtime = NULL;
  pthread_mutex_unlock(&p->line);
  hvm4g_close(h);
  return 0;
}

static void *main_thread(void *arg) {
  Prog *p = arg;
  p->rc = run(p);
  return NULL;
}

int main(int argc, char **argv) {
  // Every thread started from here on leaves these signals to the watcher.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  // A reader that goes (`| head -c1`) is a write that fails (EPIPE): the
  // run ends with the output error's status and message, not killed.
  signal(SIGPIPE, SIG_IGN);
  // Progress on a terminal or with --progress (read here: the watcher
  // starts before the flags are parsed, on the program's thread).
  int progress = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--progress") == 0) progress = 1;
  }
  if (!progress && isatty(2)) {
    progress = 1;
    for (int i = 1; i < argc; i++) {   // a run that prints as it goes keeps the terminal
      if (strncmp(argv[i], "-C", 2) == 0 || strncmp(argv[i], "--collapse", 10) == 0 ||
          strcmp(argv[i], "-D") == 0 || strcmp(argv[i], "--step-by-step") == 0) {
        progress = 0;
      }
    }
  }
  Prog p = { .progress = progress, .argc = argc, .argv = argv, .rc = 1 };
  pthread_mutex_init(&p.line, NULL);
  pthread_t watch;
  pthread_create(&watch, NULL, watcher, &p);
  pthread_detach(watch);

  pthread_attr_t attr;
  pthread_t      th;
  pthread_attr_init(&attr);
  if (pthread_attr_setstacksize(&attr, (size_t)MAIN_STACK) != 0 ||
      pthread_create(&th, &attr, main_thread, &p) != 0) {
    exit(run(&p));   // no big thread: run here
  }
  pthread_join(th, NULL);
  pthread_attr_destroy(&attr);
  exit(p.rc);   // not a return: p, which the watcher reads, stays
}
