// effects.c: whole lines of output for the host primitives (effects.h).

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "run/effects.h"
#include "cpu/eval.h"

void effect_line_put(EffectLine *l, const char *s, size_t n) {
  if (l->len + n > l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 64;
    while (cap < l->len + n) cap *= 2;
    char *nb = realloc(l->buf, cap);
    if (!nb) eval_die("out of memory writing a line");
    l->buf = nb;
    l->cap = cap;
  }
  memcpy(l->buf + l->len, s, n);
  l->len += n;
}

void effect_line_write(EffectLine *l) {
  effect_line_put(l, "\n", 1);
  flockfile(stdout);
  fwrite(l->buf, 1, l->len, stdout);
  int failed = ferror(stdout);
  funlockfile(stdout);
  free(l->buf);
  *l = (EffectLine){0};
  if (failed) eval_out_check();   // a closed pipe ends an endless %log too
}
