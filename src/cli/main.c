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
#include "heap/heap.h"
#include "cpu/eval.h"
#include "dev/gpu.h"
#include "dev/dev.h"

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

// Prints a library message on stderr; PARSE_ERROR in red on a terminal.
static void report(const char *msg) {
  if (!msg[0]) return;   // a %panic's message went to the output
  if (strncmp(msg, "PARSE_ERROR", 11) == 0 && colour_on(2)) {
    fprintf(stderr, "\033[1;31mPARSE_ERROR\033[0m%s\n", msg + 11);
  } else {
    fprintf(stderr, "%s\n", msg);
  }
}

// The watcher
// ===========

static pthread_mutex_t LINE = PTHREAD_MUTEX_INITIALIZER;
static int    SHOWN  = 0;   // a progress line is on the screen
static int    DONE   = 0;   // the run ended: no more progress lines
static _Atomic double RUN_T0 = 0;   // the run's start (0: not started); the watcher reads it
static int    PROGRESS = 0; // the progress line is drawn
static Command CMD;         // the command line (flags.h)
static hvm4g * _Atomic RUNTIME = NULL;   // the runtime, once open (the watcher's)

static void line_clear(void) {
  if (SHOWN) fputs("\r\033[K", stderr);
  SHOWN = 0;
}

// Ends the progress line before the result is printed.
static void progress_end(void) {
  pthread_mutex_lock(&LINE);
  DONE = 1;
  line_clear();
  pthread_mutex_unlock(&LINE);
}

static void human(double v, char *buf, size_t cap) {
  const char *unit[] = { "", "K", "M", "G", "T" };
  int u = 0;
  while (v >= 1000 && u < 4) { v /= 1000; u++; }
  snprintf(buf, cap, u ? "%.2f%s" : "%.0f%s", v, unit[u]);
}

// "hvm4g: 1.23G interactions, 41.50M/s, heap 12.0 MiB, CPU x4"
static void progress_draw(double *last_t, u64 *last_n, u64 *last_dev) {
  double t = now();
  u64 dev = gpu_itrs(), n = eval_itrs() + dev;
  double rate = t > *last_t ? (double)(n - *last_n) / (t - *last_t) : 0;
  const char *side = dev != *last_dev ? "device" : "CPU";
  char a[32], r[32];
  human((double)n, a, sizeof a);
  human(rate, r, sizeof r);
  pthread_mutex_lock(&LINE);
  if (!DONE) {
    fprintf(stderr, "\r\033[Khvm4g: %s interactions, %s/s, heap %.1f MiB, %s",
            a, r, (double)heap_used() * 8 / (1 << 20), side);
    if (side[0] == 'C' && CMD.opt.eval.threads > 1) fprintf(stderr, " x%u", CMD.opt.eval.threads);
    fflush(stderr);
    SHOWN = 1;
  }
  pthread_mutex_unlock(&LINE);
  *last_t = t;
  *last_n = n;
  *last_dev = dev;
}

static void *watcher(void *unused) {
  int progress = PROGRESS;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  struct timespec tick = { 0, WATCH_MS * 1000000L };
  double shown = now(), last_t = now();
  u64    last_n = 0, last_dev = 0;
  int    using = 0;
  for (;;) {
    if (!using && RUNTIME) {   // the counters below are the runtime's
      api_use(RUNTIME);
      using = 1;
    }
    int sig = sigtimedwait(&set, NULL, &tick);
    if (sig == SIGINT || sig == SIGTERM) {
      pthread_mutex_lock(&LINE);
      DONE = 1;
      line_clear();
      pthread_mutex_unlock(&LINE);
      fprintf(stderr, "hvm4g: interrupted (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
      if (RUN_T0 > 0) stats_print(now() - RUN_T0, 1);
      fflush(NULL);
      _exit(HVM4G_INTERRUPTED);
    }
    if (progress && RUN_T0 > 0 && now() - shown >= PROGRESS_MS / 1e3) {
      shown = now();
      progress_draw(&last_t, &last_n, &last_dev);
    }
  }
  return NULL;
}

// The program
// ===========

// -e TERM: leading `#include "file"` directives stay as they are, the rest
// is @main's term.
static char *eval_source(const char *text) {
  const char *p = text;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (strncmp(p, "#include", 8) != 0) break;
    const char *q = strchr(p, '"');
    q = q ? strchr(q + 1, '"') : NULL;
    if (!q) break;   // the parser reports it
    p = q + 1;
  }
  size_t head = (size_t)(p - text), len = strlen(text) + 16;
  char  *src  = malloc(len);
  // on the term's own line, so that messages keep the user's line numbers
  if (src) snprintf(src, len, "%.*s@main = %s\n", (int)head, text, p);
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

static int load(hvm4g *h) {
  if (CMD.cli.eval || strcmp(CMD.cli.file, "-") == 0) {
    char *src = CMD.cli.eval ? eval_source(CMD.cli.eval) : read_stdin();
    if (!src) {
      fprintf(stderr, "hvm4g: cannot read the program from %s (%s)\n",
              CMD.cli.eval ? "-e" : "stdin", strerror(errno ? errno : ENOMEM));
      return HVM4G_ERR_PARSE;
    }
    // no slash in the name: its #includes are relative to this directory
    int rc = hvm4g_load_string(h, CMD.cli.eval ? "<-e>" : "<stdin>", src);
    free(src);
    return rc;
  }
  return hvm4g_load_file(h, CMD.cli.file);
}

static int fail(hvm4g *h, int rc) {
  progress_end();
  report(hvm4g_error(h));
  fflush(stdout);
  return rc;
}

static int run(int argc, char **argv) {
  flags_defaults(&CMD);
  flags_parse(argc, argv, &CMD);
  CMD.opt.color     = colour_on(1);
  CMD.opt.eval.live = PROGRESS || CMD.opt.eval.stats;   // the watcher reads the counts

  hvm4g *h;
  int rc = api_open(&h, &CMD.opt);
  if (rc != HVM4G_OK) {
    fprintf(stderr, "%s%s\n", hvm4g_error(h),
            rc == HVM4G_ERR_HEAP ? " (try a smaller --heap)" : "");
    hvm4g_close(h);
    return rc;
  }
  api_use(h);   // this thread's own calls below (stats, exit) are h's
  RUNTIME = h;
  if ((rc = load(h)) != HVM4G_OK) return fail(h, rc);
  if (hvm4g_warning(h)) fprintf(stderr, "%s\n", hvm4g_warning(h));

  int where = CMD.opt.sched.requested ? HVM4G_DEVICE : HVM4G_CPU;
  RUN_T0 = now();
  if (CMD.cli.collapse) {
    rc = hvm4g_collapse(h, NULL, CMD.cli.limit, where, stdout);
  } else {
    rc = hvm4g_normalize(h, NULL, where);
  }
  double secs = now() - RUN_T0;
  progress_end();
  if (rc != HVM4G_OK) return fail(h, rc);
  if (!CMD.cli.collapse && !CMD.opt.eval.silent && !CMD.opt.eval.debug) {
    rc = hvm4g_print_file(h, stdout);
    putchar('\n');
    if (rc != HVM4G_OK) return fail(h, rc);
  }
  stats_print(secs, 0);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "hvm4g: cannot write the output\n");
    _exit(HVM4G_ERR_IO);   // exit() would flush stdout again
  }
  int trace = gpu_finish();
  if (trace != 0) return trace == -2 ? HVM4G_ERR_IO : HVM4G_ERR_USAGE;
  hvm4g_close(h);
  sched_exit(0);
  return 0;
}

typedef struct {
  int    argc;
  char **argv;
  int    rc;
} Main;

static void *main_thread(void *p) {
  Main *m = p;
  m->rc = run(m->argc, m->argv);
  return NULL;
}

int main(int argc, char **argv) {
  // Every thread started from here on leaves these signals to the watcher.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
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
  PROGRESS = progress;
  pthread_t watch;
  pthread_create(&watch, NULL, watcher, NULL);
  pthread_detach(watch);

  Main m = { argc, argv, 1 };
  pthread_attr_t attr;
  pthread_t      th;
  pthread_attr_init(&attr);
  if (pthread_attr_setstacksize(&attr, (size_t)MAIN_STACK) != 0 ||
      pthread_create(&th, &attr, main_thread, &m) != 0) {
    // no big thread: run here
    return run(argc, argv);
  }
  pthread_join(th, NULL);
  pthread_attr_destroy(&attr);
  return m.rc;
}
