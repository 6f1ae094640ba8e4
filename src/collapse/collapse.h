// collapse.h: -C / -CN, the collapsed normal form, each branch of the
// term's superpositions printed as a line (collapse.c).

#ifndef HVM4G_COLLAPSE_H
#define HVM4G_COLLAPSE_H

#include <stdio.h>
#include "core/core.h"

// Collapses HEAP[loc] and prints its branches, at most `limit` (-1: all).
void collapse_print(u32 loc, long long limit);

// Where collapse_print writes (stdout until set), and whether the -s
// counts after each line are dimmed with terminal colour codes.
void collapse_set_out(FILE *out, int color);

// Idle work for the -T pool while collapse_print runs: collapses branches
// ahead of it (1 when it found some).
int collapse_help(Wnf *w);

#endif
