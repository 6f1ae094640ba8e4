// flags.c: the command-line table and its one parser (flags.h), on the
// program's side of the library: it fills an Options (run/api.h) and the
// Cli, and may exit (help, version, a bad flag).
//
// A flag is a row of FLAGS: the parser, --help, --help=tuning and the
// Markdown tables of the docs all read the rows, so a flag is described in
// one place. A flag's bounds are checked here, once. A default is the
// field's value before parsing: the module that owns the field says it
// once (eval_conf_default, gpu_conf_default, sched_conf_default).

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <hvm4g.h>
#include "cli/flags.h"
#include "run/api.h"
#include "run/sched.h"
#include "run/prim.h"
#include "heap/heap.h"
#include "cpu/eval.h"
#include "dev/gpu.h"
#include "dev/dev.h"

#define USAGE "Usage: hvm4g <file.hvm4 | - | -e TERM> [flags] [-- args]  (see hvm4g --help)\n"
#define WIDTH 80   // --help's lines, a terminal's width

typedef enum {
  FL_SWITCH,    // int field set to 1
  FL_COUNT,     // u32 field, a number in [lo, hi]
  FL_SIZE,      // u64 field, words (digits, then K/M/G) in [lo, hi]
  FL_CHOICE,    // u32 field, one of the words of `meta` ("a|b"): its index
                // in `values`
  FL_TEXT,      // const char * field, a non-empty string
  FL_LOAD,      // FfiLoads field: appends the value, a folder when `lo` is 1
  FL_OPTCOUNT,  // `given` set; a count attached (-C10, --collapse=10) goes
                // into a long long field
  FL_OPTWORD,   // int field: 1 alone; 2 + i with the i-th word of `meta`
                // ("[=a|b]") attached (--stats=json)
  FL_HELP,
  FL_VERSION,
} FlagType;

typedef struct {
  const char *name;      // "--lanes"
  const char *alias;     // "-T": its value attached (-T4) or next (-T 4)
  FlagType    type;
  size_t      field;     // offsetof(Command, ...): where the value goes
  u64         lo, hi;    // FL_COUNT, FL_SIZE, FL_OPTCOUNT
  const char *meta;      // the value's name in help; FL_CHOICE: the words
  const u32  *values;    // FL_CHOICE: the value of each word
  size_t      given;     // an int set to 1 when the flag is given (NONE: no such)
  const char *deflt;     // the default in words, where the field's value
                         // does not say it (NULL: the field's value)
  int         tuning;    // 0: a user flag (--help), 1: --help=tuning
  const char *help;
} Flag;

static const u32 DEVICES[] = { DEV_SIM, DEV_CUDA, DEV_METAL, DEV_AUTO };
static const u32 DUPS[]    = { DUP_OWNER, DUP_ATOMIC };
static const u32 TAKES[]   = { 64, 32 };

#define O(f)  offsetof(Command, opt.f)
#define C(f)  offsetof(Command, cli.f)
#define NONE  ((size_t)-1)
#define K(n) ((u64)(n) << 10)
#define G4   ((u64)1 << 32)

static const Flag FLAGS[] = {
  // name, alias, type, field, lo, hi, meta, values, given, default, tuning, help
  { "--stats", "-s", FL_OPTWORD, O(eval.stats), 0, 0, "[=json]", NULL, NONE, NULL, 0,
    "statistics after the result: interactions, time, rate, memory; =json: one JSON "
    "object; with -C, each line ends in #N, the interactions done when it was printed" },
  { "--silent", "-S", FL_SWITCH, O(eval.silent), 0, 0, NULL, NULL, NONE, NULL, 0,
    "print the interaction count, not the result" },
  { "--collapse", "-C", FL_OPTCOUNT, C(limit), 0, (u64)1 << 62, "[=N]", NULL,
    C(collapse), "all", 0,
    "collapse: one line per superposition branch, at most N" },
  { "--threads", "-T", FL_COUNT, O(eval.threads), 1, 1024, "N", NULL,
    C(threads_set), NULL, 0,
    "threads; the output is the one-thread output" },
  { "--step-by-step", "-D", FL_SWITCH, O(eval.debug), 0, 0, NULL, NULL, NONE, NULL, 0,
    "print each reduction step (one thread; not with -C or --gpu)" },
  { "--debug", "-d", FL_SWITCH, O(eval.debug), 0, 0, NULL, NULL, NONE, NULL, 0,
    "HVM4's debug trace of each reduction: here the same as -D" },
  { "--heap", "-M", FL_SIZE, O(heap), K(1), G4, "SIZE", NULL, NONE,
    "what fits in memory", 0, "heap capacity in 64-bit words, suffix K/M/G" },
  { "--gpu", "-G", FL_SWITCH, O(sched.requested), 0, 0, NULL, NULL, NONE, NULL, 0,
    "normal form on the GPU (the CPU's cores until it is ready)" },
  { "--device", NULL, FL_CHOICE, O(gpu.device), 0, 0, "sim|cuda|metal|auto",
    DEVICES, C(device_set), NULL, 0,
    "the device of --gpu and %gnf: auto is a usable GPU (else the CPU); sim the simulated one" },
  { "--dup", NULL, FL_CHOICE, O(gpu.dup_mode), 0, 0, "owner|atomic", DUPS, C(dup_set),
    NULL, 0, "how a device lane takes a DUP node: its region's owner, or anyone" },
  { "--trace", NULL, FL_TEXT, O(gpu.trace), 0, 0, "FILE", NULL, NONE, "none", 0,
    "one CSV row per device pass and per CPU phase of a hybrid run (--gpu or %gnf)" },
  { "--eval", "-e", FL_TEXT, C(eval), 0, 0, "TERM", NULL, NONE, NULL, 0,
    "run TERM as @main (leading #include \"file\" lines allowed); - as FILE: stdin" },
  { "--progress", NULL, FL_SWITCH, C(progress), 0, 0, NULL, NULL, NONE,
    "on a terminal", 0, "a progress line on stderr, refreshed every 0.5 s" },
  { "--warn-undefined", NULL, FL_SWITCH, C(warn_undefined), 0, 0, NULL, NULL, NONE, NULL, 0,
    "warn on stderr of references to names never defined (printed as written)" },
  { "--ffi", NULL, FL_LOAD, O(ffi), 0, 0, "LIB", NULL, NONE, "none", 0,
    "load a library of primitives (HVM4's FFI; runs its code), repeatable" },
  { "--ffi-dir", NULL, FL_LOAD, O(ffi), 1, 0, "DIR", NULL, NONE, "none", 0,
    "load every .so and .dylib file of DIR, in name order, repeatable" },
  { "--help", "-h", FL_HELP, NONE, 0, 0, "[=tuning|man]", NULL, NONE, NULL, 0,
    "this list; =tuning: the tuning flags; =man: the man page (roff)" },
  { "--version", "-v", FL_VERSION, NONE, 0, 0, NULL, NULL, NONE, NULL, 0,
    "the version, commit, backends and CUDA architectures" },

  { "--sparks", NULL, FL_COUNT, O(eval.sparks), 0, 1024, "N", NULL, NONE, NULL, 1,
    "under -T: strict operands each thread keeps on offer (0: none)" },
  { "--spark-gap", NULL, FL_COUNT, O(eval.spark_gap), 1, 1u << 30, "K", NULL, NONE,
    NULL, 1, "under -T: interactions between a thread's offers" },
  { "--reclaim-gap", NULL, FL_SIZE, O(eval.reclaim_gap), 64, (u64)1 << 30, "SIZE", NULL, NONE,
    "auto", 1, "words handed out between CPU heap collections (at least a quarter "
    "of the live words) and the largest arena (small: collections often, to test them)" },
  { "--fresh-cost", NULL, FL_COUNT, O(eval.fresh_ns), 1, 1000, "NS", NULL, NONE,
    "measured", 1, "ns a fresh CPU heap word costs (its page's fault and clear): the "
    "cheaper, the longer the gap between collections" },
  { "--cpu-first", NULL, FL_COUNT, O(sched.cpu_first), 0, 1u << 31, "N", NULL,
    O(sched.cpu_first_set), NULL, 1,
    "--gpu: pool tasks before the context is made and the device takes over (0: the device at once)" },
  { "--warm-after", NULL, FL_COUNT, O(sched.warm_after), 0, 1u << 30, "MS", NULL,
    NONE, NULL, 1, "--gpu: ms of CPU work, besides --cpu-first's tasks, before the CUDA context is made" },
  { "--take-max", NULL, FL_SIZE, O(sched.take_max), 0, G4, "SIZE", NULL, NONE,
    NULL, 1, "--gpu: host heap words past which the device does not take over" },
  { "--restart", NULL, FL_COUNT, O(sched.restart), 0, 1, "0|1", NULL, NONE, NULL, 1,
    "--gpu: a run past --take-max starts over on the device (1) or stays (0)" },
  { "--handoff", NULL, FL_COUNT, O(gpu.handoff), 0, 1u << 30, "K", NULL, NONE,
    NULL, 1, "narrow device passes in a row that hand a run to the CPU (0: never)" },
  { "--narrow-rate", NULL, FL_COUNT, O(gpu.narrow_rate), 0, 1u << 20, "M", NULL,
    O(gpu.narrow_rate_set), "the backend's", 1,
    "a device pass under M million interactions/s is slow" },
  { "--take", NULL, FL_CHOICE, O(gpu.take), 0, 0, "64|32", TAKES, NONE, NULL, 1,
    "a DUP slot taken by a 64-bit exchange, or 32-bit on its high half" },
  { "--lanes", NULL, FL_COUNT, O(gpu.lanes), 1, 1u << 22, "N", NULL, NONE,
    "the device's", 1, "device lanes" },
  { "--budget", NULL, FL_COUNT, O(gpu.budget), 1, 1u << 30, "N", NULL, NONE, NULL, 1,
    "interactions per frontier entry in a wide pass" },
  { "--narrow-share", NULL, FL_COUNT, O(gpu.narrow_share), 1, 1u << 20, "F", NULL,
    NONE, NULL, 1, "a frontier under lanes/F entries gets the short budget" },
  { "--region-shift", NULL, FL_COUNT, O(gpu.region_shift), 8, 31, "N", NULL,
    O(gpu.shift_set), NULL, 1, "DUP owner regions of 2^N heap words" },
  { "--stack", NULL, FL_COUNT, O(gpu.stack), 64, 1u << 26, "N", NULL, NONE,
    "the backend's", 1, "words of WNF stack per lane" },
  { "--arena", NULL, FL_COUNT, O(gpu.arena), 64, 1u << 24, "N", NULL,
    O(gpu.arena_set), NULL, 1, "heap words a lane takes per refill" },
  { "--walk", NULL, FL_COUNT, O(gpu.walk), 0, 1u << 20, "N", NULL, NONE, NULL, 1,
    "extra output slots per lane (spine walking)" },
  { "--gpu-spark-gap", NULL, FL_COUNT, O(gpu.spark_gap), 0, 1u << 30, "K", NULL,
    NONE, NULL, 1, "interactions between a lane's offers in a narrow pass (0: none)" },
  { "--dup-wait", NULL, FL_COUNT, O(gpu.dup_wait), 0, 1u << 16, "N", NULL,
    O(gpu.dup_wait_set), "the backend's", 1,
    "polls of a held DUP slot before a lane defers" },
  { "--max-passes", NULL, FL_COUNT, O(gpu.max_passes), 1, 1u << 30, "N", NULL, NONE,
    "none", 1, "device passes before a run stops" },
  { "--mark-levels", NULL, FL_COUNT, O(gpu.mark_levels), 0, 1, "0|1", NULL, NONE,
    NULL, 1, "narrow mark frontiers marked level by level in one block" },
  { "--sim-threads", NULL, FL_COUNT, O(gpu.threads), 1, 1024, "N", NULL, NONE,
    "the cores", 1, "CPU threads of the simulated device" },
  { "--warp-model", NULL, FL_SWITCH, O(gpu.warp_model), 0, 0, NULL, NULL, NONE, NULL, 1,
    "simulated device: its lanes step in lock step on one thread, in warps of 32, and "
    "-s counts warp steps, active lanes, heap words and cache lines (docs/gpu.md)" },
  { "--warp-wait", NULL, FL_COUNT, O(gpu.warp_wait), 0, 1u << 20, "N", NULL, NONE, NULL, 1,
    "warp model: a lane whose next branch is not its warp's most common one sits out, "
    "up to N rounds in a row (0: never)" },
  { "--dev-heap", NULL, FL_SIZE, O(gpu.dev_heap), (u64)1 << 20, G4, "SIZE", NULL,
    NONE, "the host heap's, within 60% of the free device memory", 1,
    "device heap words: reclaimed in place when full, doubled when the "
    "live words do not fit (CUDA, Metal; the simulator's lies in the host heap)" },
  { "--pin-ahead", NULL, FL_SIZE, O(gpu.pin_ahead), 0, G4, "SIZE", NULL, NONE,
    NULL, 1, "CUDA: host heap words pinned for the result's copy out" },
  { "--gpu-grow", NULL, FL_SIZE, O(gpu.grow_limit), K(1), G4, "SIZE", NULL, NONE,
    NULL, 1, "-C --gpu: words a device run may allocate (or 4x the heap in use)" },
};

#define NFLAGS (sizeof FLAGS / sizeof FLAGS[0])

// The field of a row in the command being filled.
#define FIELD(cmd, f, type) ((type *)((char *)(cmd) + (f)->field))

static void out_check(FILE *f) {
  if (fflush(f) != 0 || ferror(f)) {
    fprintf(stderr, "hvm4g: cannot write the output\n");
    exit(HVM4G_ERR_IO);
  }
}

// The one format of a command-line error: "hvm4g: <what>", exit status
// `rc`;
// `usage`: the usage line after it (the command itself is malformed).
__attribute__((noreturn, format(printf, 3, 4)))
static void flag_fail(int rc, int usage, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "hvm4g: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  if (usage) fputs(USAGE, stderr);
  exit(rc);
}

#define usage_error(...)  flag_fail(HVM4G_ERR_USAGE, 1, __VA_ARGS__)
#define device_error(...) flag_fail(HVM4G_ERR_DEVICE, 0, __VA_ARGS__)

// A whole string of digits, at most max (no sign, spaces or wrap-around);
// 0 if it is not one.
static int parse_count(const char *s, u64 max, u64 *out) {
  u64 n = 0;
  const char *p = s;
  for (; *p >= '0' && *p <= '9'; p++) {
    n = n * 10 + (u64)(*p - '0');
    if (n > max) return 0;
  }
  *out = n;
  return p != s && *p == '\0';
}

// Words as written on the command line: 65536 -> 64K.
static void size_text(u64 w, char *buf, size_t cap) {
  const char *suf = "";
  if (w && w % ((u64)1 << 30) == 0)      { w >>= 30; suf = "G"; }
  else if (w && w % ((u64)1 << 20) == 0) { w >>= 20; suf = "M"; }
  else if (w && w % ((u64)1 << 10) == 0) { w >>= 10; suf = "K"; }
  snprintf(buf, cap, "%llu%s", (unsigned long long)w, suf);
}

// The word of a FL_CHOICE value, from `meta` ("a|b|c"), into buf.
static void choice_text(const Flag *f, u32 v, char *buf, size_t cap) {
  const char *p = f->meta;
  for (u32 i = 0; *p; i++) {
    size_t n = strcspn(p, "|");
    if (f->values[i] == v) {
      snprintf(buf, cap, "%.*s", (int)n, p);
      return;
    }
    p += n + (p[n] == '|');
  }
  snprintf(buf, cap, "?");
}

// The default as --help says it, or "" for a flag that has none to say.
static void default_text(const Command *cmd, const Flag *f, char *buf, size_t cap) {
  buf[0] = '\0';
  if (f->deflt) {
    snprintf(buf, cap, "%s", f->deflt);
    return;
  }
  switch (f->type) {
    case FL_COUNT: snprintf(buf, cap, "%u", *FIELD(cmd, f, const u32)); break;
    case FL_SIZE:  size_text(*FIELD(cmd, f, const u64), buf, cap); break;
    case FL_CHOICE: choice_text(f, *FIELD(cmd, f, const u32), buf, cap); break;
    default: break;
  }
}

// "-T, --threads N" as the help's left column.
static void spelling(const Flag *f, char *buf, size_t cap) {
  const char *meta = f->type == FL_CHOICE ? f->meta : f->meta ? f->meta : "";
  const char *sep  = *meta == '\0' || *meta == '[' ? "" : f->type == FL_CHOICE ? "=" : " ";
  snprintf(buf, cap, "%s%s%s%s%s", f->alias ? f->alias : "", f->alias ? ", " : "",
           f->name, sep, meta);
}

// The rows of one kind (user or tuning), each as its spelling and its
// default in words: what --help and the Markdown tables print.
typedef struct {
  char spelling[64];
  char deflt[96];
} RowText;

static u32 rows_of(const Command *cmd, int tuning, const Flag **rows, RowText *text) {
  u32 n = 0;
  for (u32 i = 0; i < NFLAGS; i++) {
    if (FLAGS[i].tuning != tuning) continue;
    rows[n] = &FLAGS[i];
    spelling(&FLAGS[i], text[n].spelling, sizeof text[n].spelling);
    default_text(cmd, &FLAGS[i], text[n].deflt, sizeof text[n].deflt);
    n++;
  }
  return n;
}

// What --help and the man page show as examples: a command, what it does.
static const char *const EXAMPLES[][2] = {
  { "hvm4g examples/hello.hvm4", "prints the normal form of @main" },
  { "hvm4g -e '2 * 21'", "a term as @main (prints 42)" },
  { "hvm4g examples/search.hvm4 -C", "one line per superposition branch" },
  { "hvm4g prog.hvm4 -T4 -s", "on four threads, then the statistics" },
  { "hvm4g prog.hvm4 --gpu -s", "on the GPU where there is one (else the CPU's cores); -s "
    "says which side ran what" },
  { "hvm4g -- -odd.hvm4 a b", "a file whose name starts with -, its %argv [\"a\", \"b\"]" },
};

#define NEXAMPLES (sizeof EXAMPLES / sizeof EXAMPLES[0])
#define HELP_COL  25   // where --help's descriptions start

// Writes text from column `col` (already reached), broken at spaces
// before WIDTH, its further lines starting at column `indent`.
static void wrap(FILE *out, const char *t, int col, int indent) {
  for (;;) {
    size_t n = strlen(t), room = col < WIDTH ? (size_t)(WIDTH - col) : 1, cut = n;
    if (n > room) {
      cut = room;
      while (cut > 0 && t[cut] != ' ') cut--;
      if (cut == 0) cut = strcspn(t, " ");   // a word longer than the line
    }
    fprintf(out, "%.*s\n", (int)cut, t);
    t += cut;
    while (*t == ' ') t++;
    if (!*t) return;
    fprintf(out, "%*s", indent, "");
    col = indent;
  }
}

// "  left    text...": the left column, then text wrapped at HELP_COL (on
// the next line where the left column is too long).
static void help_row(FILE *out, const char *left, const char *text) {
  if (strlen(left) > HELP_COL - 3) fprintf(out, "  %s\n%*s", left, HELP_COL, "");
  else fprintf(out, "  %-*s ", HELP_COL - 3, left);
  wrap(out, text, HELP_COL, HELP_COL);
}

static void help(const Command *cmd, FILE *out, int tuning) {
  const Flag *rows[NFLAGS];
  RowText     text[NFLAGS];
  u32         n = rows_of(cmd, tuning, rows, text);
  fputs(USAGE, out);
  fputs(tuning ? "\nTuning flags (the defaults are the chosen values):\n\n"
               : "\nRuns an HVM4 program: prints the normal form of @main.\n\n",
        out);
  for (u32 i = 0; i < n; i++) {
    help_row(out, text[i].spelling, rows[i]->help);
    if (text[i].deflt[0]) {
      char d[128];
      snprintf(d, sizeof d, "(default: %s)", text[i].deflt);
      fprintf(out, "%*s", HELP_COL, "");
      wrap(out, d, HELP_COL, HELP_COL);
    }
  }
  if (tuning) return;
  fputs("\nExamples:\n", out);
  for (u32 i = 0; i < NEXAMPLES; i++) {
    fprintf(out, "  %s\n      ", EXAMPLES[i][0]);
    wrap(out, EXAMPLES[i][1], 6, 6);
  }
  fputs("\nhvm4g --help=tuning: the tuning flags; hvm4g --help=man: the man page.\n", out);
}

static void markdown(const Command *cmd, FILE *out, int tuning) {
  const Flag *rows[NFLAGS];
  RowText     text[NFLAGS];
  u32         n = rows_of(cmd, tuning, rows, text);
  fprintf(out, "| flag | meaning | default |\n|------|---------|---------|\n");
  for (u32 i = 0; i < n; i++) {
    fputs("| `", out);
    for (const char *c = text[i].spelling; *c; c++) {   // a | inside a cell ends it
      if (*c == '|') fputc('\\', out);
      fputc(*c, out);
    }
    fprintf(out, "` | %s | %s |\n", rows[i]->help, text[i].deflt);
  }
}

// roff text: a backslash or a leading dot or quote would be a request.
static void roff(FILE *out, const char *t) {
  if (*t == '.' || *t == '\'') fputs("\\&", out);
  for (; *t; t++) {
    if (*t == '\\') fputs("\\e", out);
    else if (*t == '-') fputs("\\-", out);
    else fputc(*t, out);
  }
}

// The man page hvm4g.1 (--help=man; `make install` writes it): the flags
// from the same rows as --help, the exit statuses from hvm4g.h.
static void man_page(const Command *cmd, FILE *out) {
  fprintf(out, ".TH HVM4G 1 \"\" \"hvm4g %s\" \"User Commands\"\n", HVM4G_VERSION);
  fputs(".SH NAME\nhvm4g \\- run HVM4 programs (the Interaction Calculus) on the CPU or a GPU\n"
        ".SH SYNOPSIS\n.B hvm4g\n\\fIfile.hvm4\\fR [\\fIflags\\fR] [\\fB\\-\\-\\fR \\fIargs\\fR]\n"
        ".br\n.B hvm4g \\-\n[\\fIflags\\fR] [\\fB\\-\\-\\fR \\fIargs\\fR] < \\fIfile.hvm4\\fR\n"
        ".br\n.B hvm4g \\-e\n\\fIterm\\fR [\\fIflags\\fR] [\\fB\\-\\-\\fR \\fIargs\\fR]\n"
        ".SH DESCRIPTION\nPrints the strong normal form of\n.BR @main ,\n"
        "or with \\-C its collapse, one line per superposition branch.\n"
        "A file of \\- is read from standard input.\n"
        "What follows \\-\\- is the program's, for %argv; where no program "
        "was given before it, its first word is the program.\n", out);
  for (int tuning = 0; tuning <= 1; tuning++) {
    fputs(tuning ? ".SH TUNING FLAGS\nFor measuring and testing the device; "
                   "the defaults are the chosen values.\n" : ".SH FLAGS\n", out);
    for (u32 i = 0; i < NFLAGS; i++) {
      const Flag *f = &FLAGS[i];
      if (f->tuning != tuning) continue;
      char sp[64], d[96];
      spelling(f, sp, sizeof sp);
      default_text(cmd, f, d, sizeof d);
      fputs(".TP\n.B ", out);
      roff(out, sp);
      fputc('\n', out);
      roff(out, f->help);
      if (d[0]) {
        fputs(" (default: ", out);
        roff(out, d);
        fputc(')', out);
      }
      fputc('\n', out);
    }
  }
  fprintf(out, ".SH EXIT STATUS\n.TP\n%d\nsuccess\n.TP\n%d\na runtime error "
          "(RUNTIME_ERROR)\n.TP\n%d\na usage error: a bad flag or argument\n"
          ".TP\n%d\na parse error, an unreadable file, or no @main\n.TP\n%d\n"
          "the heap (or the memory) is exhausted\n.TP\n%d\nthe output could not "
          "be written\n.TP\n%d\nthe device asked for is not usable\n",
          HVM4G_OK, HVM4G_ERR_RUNTIME, HVM4G_ERR_USAGE, HVM4G_ERR_PARSE,
          HVM4G_ERR_HEAP, HVM4G_ERR_IO, HVM4G_ERR_DEVICE);
  fprintf(out, ".TP\n%d\n\\-\\-ffi: a library or folder cannot be read\n.TP\n%d\n"
          "\\-\\-ffi: not a shared library this system loads\n.TP\n%d\n"
          "\\-\\-ffi: a library without hvm_ffi_init\n.TP\n%d\n"
          "\\-\\-ffi: a library refused the runtime (its ABI version) or "
          "registered what hvm4g cannot hold\n.TP\n%d\n"
          "a library's primitive raised an error (RUNTIME_ERROR)\n.TP\n%d\n"
          "interrupted by SIGINT or SIGTERM (after \\-s's figures, if asked)\n",
          HVM4G_ERR_FFI_FILE, HVM4G_ERR_FFI_LOAD, HVM4G_ERR_FFI_INIT, HVM4G_ERR_FFI_ABI,
          HVM4G_ERR_FFI_PRIM, HVM4G_INTERRUPTED);
  fputs(".SH ENVIRONMENT\n.TP\nNO_COLOR\nwhen set and not empty, no colour "
        "(colour is used only on a terminal anyway)\n.SH EXAMPLES\n", out);
  for (u32 i = 0; i < NEXAMPLES; i++) {
    fputs(".TP\n.B ", out);
    roff(out, EXAMPLES[i][0]);
    fputc('\n', out);
    roff(out, EXAMPLES[i][1]);
    fputc('\n', out);
  }
  fputs(".SH SEE ALSO\n.BR pkg-config (1)\nwith the package hvm4g, and the header "
        "hvm4g.h (installed with the program) for the C library. The source tree's "
        "README.md and docs/ (the language, every flag, the device) are not installed.\n",
        out);
}

// The row a command-line word names: its value, if attached, in *val.
static const Flag *lookup(const char *a, const char **val) {
  *val = NULL;
  for (u32 i = 0; i < NFLAGS; i++) {
    const Flag *f = &FLAGS[i];
    size_t n = strlen(f->name);
    if (strncmp(a, f->name, n) == 0 && (a[n] == '\0' || a[n] == '=')) {
      if (a[n] == '=') *val = a + n + 1;
      return f;
    }
    if (f->alias && strncmp(a, f->alias, 2) == 0) {
      // every flag with a value takes it attached (-T4, -e'2*21'), as docs/flags.md says
      int takes = f->type != FL_SWITCH && f->type != FL_OPTWORD && f->type != FL_HELP &&
                  f->type != FL_VERSION;
      if (a[2] == '\0') return f;
      if (takes) {
        *val = a + 2;
        return f;
      }
    }
  }
  return NULL;
}

static void set_value(Command *cmd, const Flag *f, const char *v) {
  u64 n = 0;
  switch (f->type) {
    case FL_COUNT:
      if (!parse_count(v, f->hi, &n) || n < f->lo) {
        usage_error("%s expects a number in [%llu, %llu], got '%s'", f->name,
                   (unsigned long long)f->lo, (unsigned long long)f->hi, v);
      }
      *FIELD(cmd, f, u32) = (u32)n;
      break;
    case FL_OPTCOUNT:
      if (!parse_count(v, f->hi, &n)) usage_error("%s expects a count, got '%s'", f->name, v);
      *FIELD(cmd, f, long long) = (long long)n;
      break;
    case FL_SIZE: {
      n = heap_parse_size(v);
      if ((n == 0 && strcmp(v, "0") != 0) || n < f->lo || n > f->hi) {
        char lo[32], hi[32];
        size_text(f->lo, lo, sizeof lo);
        size_text(f->hi, hi, sizeof hi);
        usage_error("%s expects a size in words, %s..%s (suffix K/M/G), got '%s'",
                   f->name, lo, hi, v);
      }
      *FIELD(cmd, f, u64) = n;
      break;
    }
    case FL_CHOICE: {
      const char *p = f->meta;
      size_t len = strlen(v);
      for (u32 i = 0; *p; i++) {
        size_t k = strcspn(p, "|");
        if (k == len && strncmp(p, v, k) == 0) {
          *FIELD(cmd, f, u32) = f->values[i];
          return;
        }
        p += k + (p[k] == '|');
      }
      usage_error("%s expects %s, got '%s'", f->name, f->meta, v);
    }
    case FL_OPTWORD: {
      const char *p = f->meta + 2;   // past "[="
      size_t len = strlen(v);
      for (int i = 0; *p && *p != ']'; i++) {
        size_t k = strcspn(p, "|]");
        if (k == len && strncmp(p, v, k) == 0) {
          *FIELD(cmd, f, int) = 2 + i;
          return;
        }
        p += k + (p[k] == '|');
      }
      usage_error("%s expects nothing or %.*s, got '%s'", f->name,
                 (int)strlen(f->meta) - 2, f->meta + 1, v);
    }
    case FL_TEXT:
      if (!*v) usage_error("%s expects %s", f->name, f->meta);
      if (*FIELD(cmd, f, const char *)) {   // the last one would win unseen
        usage_error("%s given twice ('%s', '%s'); give one", f->name,
                    *FIELD(cmd, f, const char *), v);
      }
      *FIELD(cmd, f, const char *) = v;
      break;
    case FL_LOAD: {
      FfiLoads *l = FIELD(cmd, f, FfiLoads);
      if (!*v) usage_error("%s expects %s", f->name, f->meta);
      if (l->count == FFI_LOADS_MAX) {
        usage_error("more than %d --ffi and --ffi-dir", FFI_LOADS_MAX);
      }
      l->at[l->count++] = (FfiLoad){ .path = v, .dir = f->lo == 1 };
      break;
    }
    default:
      break;
  }
}

// What this binary cannot do, said before anything runs.
static void check_device(const Command *cmd) {
  if (cmd->opt.gpu.device == DEV_CUDA && !gpu_cuda_compiled()) {
    device_error("--device=cuda: this binary was built without CUDA (no nvcc "
                "at build time)");
  }
  if (cmd->opt.gpu.device == DEV_METAL && !gpu_metal_compiled()) {
#if defined(__APPLE__)
    device_error("--device=metal: this binary was built without the Metal "
                "backend (no `xcrun metal` at build time: install Xcode and "
                "its Metal toolchain, then rebuild); use --device=sim");
#else
    device_error("--device=metal: Metal is not available on this platform "
                "(Apple GPUs only); use --device=sim or --device=cuda");
#endif
  }
}

void flags_defaults(Command *cmd) {
  api_options_default(&cmd->opt);
  cmd->cli = (Cli){ .file = NULL, .eval = NULL, .collapse = 0, .limit = -1 };
}

void flags_parse(int argc, char **argv, Command *cmd) {
  Cli     *cli = &cmd->cli;
  Options *o   = &cmd->opt;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v;
    if (strcmp(a, "--") == 0) {
      // what follows is the program's, for %argv; with no program yet,
      // its first word is the program (a file named "-x.hvm4")
      if (!cli->file && !cli->eval && i + 1 < argc) cli->file = argv[++i];
      o->argc = argc - i - 1;
      o->argv = argv + i + 1;
      break;
    }
    if (a[0] != '-' || a[1] == '\0') {
      if (cli->file) usage_error("more than one program given ('%s', '%s')", cli->file, a);
      cli->file = a;
      continue;
    }
    const Flag *f = lookup(a, &v);
    if (!f) usage_error("unknown flag '%s'", a);
    if (f->given != NONE) *(int *)((char *)cmd + f->given) = 1;
    switch (f->type) {
      case FL_HELP:
        if (v && strcmp(v, "tuning") == 0) help(cmd, stdout, 1);
        else if (v && strcmp(v, "markdown") == 0) markdown(cmd, stdout, 0);
        else if (v && strcmp(v, "markdown-tuning") == 0) markdown(cmd, stdout, 1);
        else if (v && strcmp(v, "man") == 0) man_page(cmd, stdout);
        else if (v) usage_error("--help expects nothing, =tuning or =man, got '%s'", v);
        else help(cmd, stdout, 0);
        out_check(stdout);
        exit(0);
      case FL_VERSION:
        printf("%s\n", hvm4g_version());
        out_check(stdout);
        exit(0);
      case FL_SWITCH:
        if (v) usage_error("%s takes no value, got '%s'", f->name, v);
        *FIELD(cmd, f, int) = 1;
        break;
      case FL_OPTCOUNT:
        if (v) set_value(cmd, f, v);
        break;
      case FL_OPTWORD:
        *FIELD(cmd, f, int) = 1;
        if (v) set_value(cmd, f, v);
        break;
      default:
        if (!v) {
          if (i + 1 >= argc) usage_error("missing value after %s", a);
          v = argv[++i];
        }
        set_value(cmd, f, v);
        break;
    }
  }
  if (cli->file && cli->eval) usage_error("a program file and -e given; give one");
  if (cli->file == NULL && cli->eval == NULL) usage_error("no program given");
  check_device(cmd);
  if (o->eval.debug && cli->collapse) usage_error("-D is not supported with -C");
  if (o->eval.debug && o->sched.requested) {
    usage_error("-D prints the CPU's steps; it cannot be combined with --gpu");
  }
  // --gpu alone: the pool takes every core for what ends before the
  // device pays; -T N says otherwise.
  if (!cli->threads_set && !o->eval.debug) {
    u32 n = sched_pool_threads(&o->sched, &o->gpu, cli->collapse);
    if (n > 1) o->eval.threads = n;
  }
  if (o->eval.debug && o->eval.threads > 1) {
    fprintf(stderr, "hvm4g: -D forces one thread\n");
    o->eval.threads = 1;
  }
}
