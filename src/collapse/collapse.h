// collapse.h: -C / -CN, the collapsed normal form, each branch of the
// term's superpositions printed as a line (collapse.c).

#ifndef HVM4G_COLLAPSE_H
#define HVM4G_COLLAPSE_H

#include <stdio.h>
#include "core/core.h"

// Collapses RT->heap.at[loc] and prints its branches, at most `limit` (-1: all).
void collapse_print(u32 loc, long long limit);

// Where collapse_print writes (stdout until set), and whether the -s
// counts after each line are dimmed with terminal colour codes.
void collapse_set_out(FILE *out, int color);

// A check each line goes through before it is printed (NULL: none): it
// gets the line's text (without the -s count) and says whether to print it
// (0: it was printed before, by a run that started over).
typedef int (*CollapseLineCheck)(const char *text, size_t n);
void collapse_set_line_check(CollapseLineCheck check);

// After an error took the caller out of collapse_print: the pool stops
// collapsing ahead, and this returns once none of that runs.
void collapse_stop(void);
// Idle work for the -T pool while collapse_print runs: collapses branches
// ahead of it (1 when it found some).
int collapse_help(Wnf *w);

#endif
