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

int main(void) {
  CHECK(panic_child(1, 0) == 0);
  CHECK(panic_child(1, 1) == 0);
  CHECK(panic_child(4, 1) == 0);
  return check_done();
}
