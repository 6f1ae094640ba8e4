// flags.h: the command line, one table (run/flags.c): each flag is a row
// with its name, the field it sets, its bounds, its default (the field's
// value before parsing) and one line of help; user flags are listed by
// --help, tuning flags by --help=tuning.

#ifndef HVM4G_FLAGS_H
#define HVM4G_FLAGS_H

#include <stdio.h>
#include "core/term.h"

// What the command line says beyond the modules' own settings (EVAL, GPU,
// SCHED, which the table writes into directly).
typedef struct {
  const char *file;        // the program ("-": stdin)
  const char *eval;        // -e TERM: the program is this term
  int         collapse;    // -C
  long long   limit;       // -CN: at most N lines (-1: all)
  u64         heap;        // --heap words (0: what fits this machine)
  int         threads_set; // -T given
  int         progress;    // --progress
} Cli;

extern Cli CLI;

// Parses argv into CLI and the modules' settings. Prints help or the
// version and exits 0 when asked; on a bad flag prints one line
// ("hvm4g: ...") and the usage, and exits HVM4G_ERR_USAGE (2).
void flags_parse(int argc, char **argv);

// The user flags (tuning = 0) or the tuning flags as a Markdown table, from
// the same rows as --help (--help=markdown, --help=markdown-tuning):
// README.md and docs/flags.md hold these tables (scripts/flag_docs.sh).
void flags_markdown(FILE *out, int tuning);

#endif
