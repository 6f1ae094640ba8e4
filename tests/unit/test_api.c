// test_api.c: the library returns every error to its caller, never ending
// the process, whichever thread meets it, with a message that names no
// flag of the hvm4g program (the program adds those). Each case runs in a
// child process that exits with 100 + the call's status (NAMES_FLAG: a
// message or the notice names a flag); a library that exits instead gives
// its own status. An open that fails says why.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <hvm4g.h>
#include "check.h"

// A tree of 2^18 leaves: far more than a 64K-word heap holds, and wide
// enough for the -T pool's tasks to meet the end first.
static const char *TREE =
  "@t = λ{0: 0; λ&d. #N{@t(d - 1), @t(d - 1)}}\n"
  "@main = @t(18)\n";

// A runtime error behind slow work, under pool tasks.
static const char *STUCK =
  "@w = λ{0: 0; λ&n. n + @w(n - 1)}\n"
  "@t = λ{0: 0; λ&d. #N{@t(d - 1), @t(d - 1)}}\n"
  "@main = #P{@t(12), (@w(20000) * 0)(1), @t(12), #A{1}(2)}\n";

#define NAMES_FLAG 97

// A library message names no flag ("--heap", "--device=sim"): those are
// the program's (cli/main.c adds them).
static int names_flag(const char *msg) {
  return msg && strstr(msg, "--") != NULL;
}

// Runs src's @main on `where` (HVM4G_CPU, HVM4G_DEVICE) in a runtime of
// `threads`, `heap` words and `device`.
static int child(const char *src, unsigned threads, unsigned long long heap, int device,
                 int where) {
  pid_t pid = fork();
  if (pid == 0) {
    hvm4g_config c;
    hvm4g_config_init(&c);
    c.threads    = threads;
    c.heap_words = heap;
    c.device     = device;
    hvm4g *h;
    int rc = hvm4g_open(&h, &c);
    if (rc == HVM4G_OK) rc = hvm4g_load_string(h, "test", src);
    if (rc == HVM4G_OK) {
      rc = hvm4g_normalize(h, NULL, where);
      if (rc != HVM4G_OK && !hvm4g_error(h)[0]) rc = 99;   // an error needs its message
    }
    if (names_flag(hvm4g_error(h)) || names_flag(hvm4g_notice(h))) _exit(NAMES_FLAG);
    _exit(100 + rc);
  }
  int st = 0;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

int main(void) {
  // A pipe for stderr would hide nothing: a library that exits prints too.
  for (int i = 0; i < 20; i++) {
    CHECK(child(TREE, 4, 1 << 16, HVM4G_DEVICE_AUTO, HVM4G_CPU) == 100 + HVM4G_ERR_HEAP);
    CHECK(child(STUCK, 4, 1 << 24, HVM4G_DEVICE_AUTO, HVM4G_CPU) == 100 + HVM4G_ERR_RUNTIME);
  }
  CHECK(child(TREE, 1, 1 << 16, HVM4G_DEVICE_AUTO, HVM4G_CPU) == 100 + HVM4G_ERR_HEAP);
  // CUDA asked for by name: it runs (a GPU here) or says why it cannot.
  int cuda = child("@main = [1, 2]\n", 1, 1 << 20, HVM4G_DEVICE_CUDA, HVM4G_DEVICE);
  CHECK(cuda == 100 + HVM4G_OK || cuda == 100 + HVM4G_ERR_DEVICE);
  // Any device: a GPU runs it, or the CPU does and the notice says why.
  CHECK(child("@main = [1, 2]\n", 2, 1 << 20, HVM4G_DEVICE_AUTO, HVM4G_DEVICE) == 100 + HVM4G_OK);

  // An open that fails leaves why in a handle that close frees.
  hvm4g_config c;
  hvm4g_config_init(&c);
  c.threads = 5000;
  hvm4g *h  = NULL;
  CHECK(hvm4g_open(&h, &c) == HVM4G_ERR_USAGE && h && strstr(hvm4g_error(h), "threads"));
  hvm4g_close(h);
  hvm4g_config_init(&c);
  c.heap_words = 100;
  CHECK(hvm4g_open(&h, &c) == HVM4G_ERR_USAGE && h && strstr(hvm4g_error(h), "heap_words"));
  hvm4g_close(h);

  // NULL where a path, a source or a runtime belongs: an error, not a crash.
  hvm4g_config_init(&c);
  c.heap_words = 1 << 20;
  CHECK(hvm4g_open(&h, &c) == HVM4G_OK);
  CHECK(hvm4g_load_string(h, "x", NULL) == HVM4G_ERR_USAGE && strstr(hvm4g_error(h), "source"));
  CHECK(hvm4g_load_file(h, NULL) == HVM4G_ERR_USAGE && strstr(hvm4g_error(h), "path"));
  CHECK(hvm4g_normalize(NULL, NULL, HVM4G_CPU) == HVM4G_ERR_STATE);
  CHECK(hvm4g_load_file(NULL, "x.hvm4") == HVM4G_ERR_STATE);
  char buf[16];
  CHECK(hvm4g_load_string(h, "x", "@main = 42") == HVM4G_OK &&
        hvm4g_normalize(h, NULL, HVM4G_CPU) == HVM4G_OK &&
        hvm4g_print(h, buf, sizeof buf) == 2 && strcmp(buf, "42") == 0);
  hvm4g_close(h);
  return check_done();
}
