// api_seq.c: the fuzzer's driver of library call sequences (fuzz.py's
// gen_api). One runtime, in a small heap, loads a program and makes the
// calls named on the command line in turn; each call must give what the
// same call gives in a runtime of its own: the same status, message and
// result, whatever the calls before it did (errors, a heap exhausted, a
// %panic, a run that started over). Exits 1 at the first call that does
// not, saying which and how.
//
//   api_seq FILE HEAP_WORDS THREADS CALL...
//   CALL: n:NAME (normalize @NAME, its result printed) or c:NAME (collapse
//   @NAME, its lines).

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hvm4g.h>

#define OUT_CAP 4096   // of a result or a collapse's lines, compared

typedef struct {
  int  rc;
  char msg[512];
  char out[OUT_CAP];
} Answer;

// A message with its figures as '#' (live words, sizes): a runtime that
// ran before may count other words and still be right. Digits inside a
// word (hvm4g) stay.
static void no_figures(char *s) {
  char *w    = s;
  int   word = 0;   // the last character kept is a letter or a digit kept
  for (; *s; s++) {
    int digit = *s >= '0' && *s <= '9';
    if (digit && !word) {
      if (w == s || w[-1] != '#') *w++ = '#';
      continue;
    }
    word = digit || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z');
    *w++ = *s;
  }
  *w = '\0';
}

// Lines as one ('|' for each newline), for a one-line report.
static void one_line(char *s) {
  for (; *s; s++) {
    if (*s == '\n') *s = '|';
  }
}

static void call(hvm4g *h, const char *what, Answer *a) {
  memset(a, 0, sizeof *a);
  const char *name = what + 2;
  if (what[0] == 'c') {
    char  *text = NULL;
    size_t len  = 0;
    FILE  *mem  = open_memstream(&text, &len);
    a->rc = hvm4g_collapse(h, name, 64, HVM4G_CPU, mem);
    fclose(mem);
    snprintf(a->out, OUT_CAP, "%s", text ? text : "");
    free(text);
  } else {
    a->rc = hvm4g_normalize(h, name, HVM4G_CPU);
    if (a->rc == HVM4G_OK && hvm4g_print(h, a->out, OUT_CAP) < 0) a->rc = -1;
  }
  if (a->rc != HVM4G_OK) {
    snprintf(a->msg, sizeof a->msg, "%s", hvm4g_error(h));
    no_figures(a->msg);
  }
  one_line(a->out);
}

static hvm4g *open_loaded(const char *path, unsigned long long heap, unsigned threads) {
  hvm4g_config c;
  hvm4g_config_init(&c);
  c.heap_words = heap;
  c.threads    = threads;
  hvm4g *h;
  if (hvm4g_open(&h, &c) != HVM4G_OK || hvm4g_load_file(h, path) != HVM4G_OK) {
    fprintf(stderr, "api_seq: cannot open or load %s: %s\n", path, hvm4g_error(h));
    exit(2);
  }
  return h;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: api_seq FILE HEAP_WORDS THREADS CALL...\n");
    return 2;
  }
  unsigned long long heap    = strtoull(argv[2], NULL, 10);
  unsigned           threads = (unsigned)atoi(argv[3]);
  hvm4g *kept = open_loaded(argv[1], heap, threads);
  static Answer got, want;
  for (int i = 4; i < argc; i++) {
    call(kept, argv[i], &got);
    hvm4g *fresh = open_loaded(argv[1], heap, threads);
    call(fresh, argv[i], &want);
    hvm4g_close(fresh);
    if (got.rc != want.rc || strcmp(got.msg, want.msg) != 0 || strcmp(got.out, want.out) != 0) {
      printf("api_seq: call %d (%s) after %d calls: status %d '%s' [%.200s], "
             "in a runtime of its own %d '%s' [%.200s]\n",
             i - 3, argv[i], i - 4, got.rc, got.msg, got.out, want.rc, want.msg, want.out);
      hvm4g_close(kept);
      return 1;
    }
  }
  hvm4g_close(kept);
  printf("api_seq: %d calls as in runtimes of their own\n", argc - 4);
  return 0;
}
