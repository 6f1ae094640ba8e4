// check.h: the unit tests' counters. CHECK(c) counts c as a pass or prints
// the failing line; check_done() prints the last line, "N passed, N
// failed", and gives the exit status.

#ifndef HVM4G_CHECK_H
#define HVM4G_CHECK_H

#include <stdio.h>

static int PASS = 0;
static int FAIL = 0;

#define CHECK(c) do { \
  if (c) { PASS++; } \
  else   { FAIL++; printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); } \
} while (0)

static inline int check_done(void) {
  printf("%d passed, %d failed\n", PASS, FAIL);
  return FAIL != 0;
}

#endif
