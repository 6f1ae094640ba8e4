// test_api_rel.c: what the library gives back across runs and errors
// (issue 63): a %panic's message is the call's error, and the library
// writes none of it itself; a runtime keeps working after errors of
// every kind. Each case runs in a child whose stdout is a file, so that
// what the library wrote there is seen.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <hvm4g.h>
#include "check.h"

#define BAD_STATUS   90   // the call's status was not the one expected
#define BAD_MESSAGE  91   // nor its message
#define WROTE_OUTPUT 92   // the library wrote to stdout

// A panic inside a collapse's second branch under `threads`, and one in a
// plain normal form: each returns HVM4G_ERR_RUNTIME with the program's
// text as the message, and stdout (a file) stays empty.
static int panic_child(unsigned threads, int collapse) {
  char path[] = "/tmp/hvm4g-test-api-rel.XXXXXX";
  int  fd     = mkstemp(path);
  if (fd < 0) return -1;
  unlink(path);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd, 1);
    hvm4g_config c;
    hvm4g_config_init(&c);
    c.threads = threads;
    hvm4g *h;
    int rc = hvm4g_open(&h, &c);
    if (rc == HVM4G_OK) {
      rc = hvm4g_load_string(h, "test", "@main = &L{1, !!x = %panic(\"stop here\"); 3}\n");
    }
    if (rc == HVM4G_OK) {
      FILE *sink = fopen("/dev/null", "w");
      rc = collapse ? hvm4g_collapse(h, NULL, -1, HVM4G_CPU, sink)
                    : hvm4g_normalize(h, NULL, HVM4G_CPU);
      fclose(sink);
    }
    fflush(stdout);
    if (rc != HVM4G_ERR_RUNTIME) _exit(BAD_STATUS);
    if (strcmp(hvm4g_error(h), "stop here") != 0) _exit(BAD_MESSAGE);
    struct stat st;
    if (fstat(1, &st) != 0 || st.st_size != 0) _exit(WROTE_OUTPUT);
    _exit(0);
  }
  close(fd);
  int st = 0;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

// The fuzzer's library sequence (seed 294338688 case 8), in a runtime of a
// 64K-word heap on `threads`: @ok's collapse as its first call once ran out
// of heap (the arenas kept the size meant for a large heap until a normal
// form sized them) where the same collapse after a normal form gave
// 500500; and each %panic's message leaked (the ASan unit phase reports
// it: this runs in the test's own process, which ends with exit).
static const char *SMALL =
  "@gen = λ{0: #N; λ&n. #C{n, @gen(n - 1)}}\n"
  "@sum = λ{#N: 0; #C: λh. λt. h + @sum(t)}\n"
  "@ok = @sum(@gen(1000))\n"
  "@panic = #P{1, %panic(\"stop here\")}\n";

// @ok's collapse in h: its lines, as "500500\n" when right.
static int collapse_ok(hvm4g *h, char *out, size_t cap) {
  char  *text = NULL;
  size_t len  = 0;
  FILE  *mem  = open_memstream(&text, &len);
  int    rc   = hvm4g_collapse(h, "ok", -1, HVM4G_CPU, mem);
  fclose(mem);
  snprintf(out, cap, "%s", text ? text : "");
  free(text);
  return rc;
}

static void small_heap_seq(unsigned threads) {
  hvm4g_config c;
  hvm4g_config_init(&c);
  c.heap_words = 65536;
  c.threads    = threads;
  hvm4g *h;
  CHECK(hvm4g_open(&h, &c) == HVM4G_OK);
  CHECK(hvm4g_load_string(h, "small", SMALL) == HVM4G_OK);
  char out[64];
  CHECK(collapse_ok(h, out, sizeof out) == HVM4G_OK && strcmp(out, "500500\n") == 0);
  CHECK(hvm4g_normalize(h, "panic", HVM4G_CPU) == HVM4G_ERR_RUNTIME);
  CHECK(strcmp(hvm4g_error(h), "stop here") == 0);
  CHECK(collapse_ok(h, out, sizeof out) == HVM4G_OK && strcmp(out, "500500\n") == 0);
  hvm4g_close(h);
}

int main(void) {
  small_heap_seq(1);
  small_heap_seq(2);
  CHECK(panic_child(1, 0) == 0);
  CHECK(panic_child(1, 1) == 0);
  CHECK(panic_child(4, 1) == 0);
  return check_done();
}
