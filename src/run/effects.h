// effects.h: how the host primitives' effects reach the output.
//
// A line of output (%log's) is written whole: threads that print at once
// (the pool's, collapsing ahead) never interleave their characters. Their
// order is the one-thread order, which the CPU evaluator keeps (snf.c,
// "Effects and errors under -T").
#ifndef HVM4G_EFFECTS_H
#define HVM4G_EFFECTS_H

#include <stddef.h>

// A line being built: characters appended, then written whole.
typedef struct {
  char  *buf;
  size_t len, cap;
} EffectLine;

void effect_line_put(EffectLine *l, const char *s, size_t n);
void effect_line_write(EffectLine *l);   // writes it and a newline, frees it

#endif
