// flags.h: the command line, one table (cli/flags.c): each flag is a row
// with its name, the field it sets, its bounds, its default (the field's
// value before parsing) and one line of help; user flags are listed by
// --help, tuning flags by --help=tuning.

#ifndef HVM4G_FLAGS_H
#define HVM4G_FLAGS_H

#include <stdio.h>
#include "core/term.h"
#include "run/api.h"

// What the command line says beyond the runtime's options.
typedef struct {
  const char *file;        // the program ("-": stdin)
  const char *eval;        // -e TERM: the program is this term
  int         collapse;    // -C
  long long   limit;       // -CN: at most N lines (-1: all)
  int         threads_set; // -T given
  int         progress;    // --progress
  int         warn_undefined;   // --warn-undefined: print the load's warning
  int         device_set;  // --device given
  int         dup_set;     // --dup given
} Cli;

// A command line: the runtime's options (api_open applies them) and the rest.
typedef struct {
  Options opt;
  Cli     cli;
} Command;

// The defaults, before any flag.
void flags_defaults(Command *cmd);

// Parses argv into cmd (from flags_defaults). Prints help or the version
// and exits 0 when asked; on a bad flag prints one line ("hvm4g: ...") and
// the usage, and exits HVM4G_ERR_USAGE (2). --help=markdown and
// --help=markdown-tuning print the user or tuning flags as a Markdown
// table: README.md and docs/flags.md hold these (scripts/flag_docs.sh).
void flags_parse(int argc, char **argv, Command *cmd);

#endif
