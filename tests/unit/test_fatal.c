// test_fatal.c: a fatal error is reported once, whatever the number of
// threads that fail together (eval_fatal). Under -T4 two workers could both
// print "RUNTIME_ERROR: ..." before the first exit() ended the process
// (fuzz seed 460302654 case 1780, 2 runs in 60). Here 8 threads fail at the
// same instant in a child process whose stderr is a pipe, many times over.

#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cpu/eval.h"
#include "check.h"

#define NTH 8

static pthread_barrier_t GO;

static void *fail(void *arg) {
  RT = TEST_RT;   // a thread of the test's runtime
  (void)arg;
  pthread_barrier_wait(&GO);
  eval_fatal("RUNTIME_ERROR: ", "boom");
  return NULL;
}

// Runs the failing threads in a child; returns the lines it printed, or -1
// when it did not exit with status 1.
static int child_lines(void) {
  int fd[2];
  if (pipe(fd) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 2);
    close(fd[0]);
    pthread_barrier_init(&GO, NULL, NTH);
    pthread_t th[NTH];
    for (int i = 1; i < NTH; i++) pthread_create(&th[i], NULL, fail, NULL);
    fail(NULL);
    _exit(0);   // not reached
  }
  close(fd[1]);
  char buf[4096];
  size_t n = 0;
  ssize_t r;
  while ((r = read(fd[0], buf + n, sizeof buf - 1 - n)) > 0) n += (size_t)r;
  close(fd[0]);
  buf[n] = 0;
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 1) return -1;
  int lines = 0;
  for (char *p = buf; (p = strstr(p, "RUNTIME_ERROR: boom\n")); p++) lines++;
  return lines;
}

int main(void) {
  int once = 0;
  for (int i = 0; i < 50; i++) once += child_lines() == 1;
  CHECK(once == 50);
  return check_done();
}
