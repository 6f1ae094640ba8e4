// api.h: what the hvm4g program needs of the library (run/api.c) beyond
// include/hvm4g.h: every setting of a runtime in one struct, applied once
// by api_open.

#ifndef HVM4G_API_H
#define HVM4G_API_H

#include <hvm4g.h>
#include "core/term.h"
#include "cpu/eval.h"
#include "dev/dev.h"
#include "run/ffi.h"
#include "run/sched.h"

// A runtime's options: what hvm4g_config says (threads, heap, device: in
// eval, heap and gpu) and the tuning the program's flags reach. Bounds are
// the flag table's (cli/flags.c); hvm4g_open checks a config's.
typedef struct {
  u64        heap;     // heap capacity in words (0: what fits this machine)
  EvalConf   eval;
  GpuConf    gpu;
  SchedConf  sched;
  int        argc;     // the program's own arguments (%argv)
  char     **argv;
  int        color;    // -C's -s counts dimmed with terminal colour codes
  FfiLoads   ffi;      // --ffi, --ffi-dir: libraries api_open loads, in order
} Options;

void api_options_default(Options *o);
// hvm4g_open with every option: HVM4G_OK, or an error whose message
// hvm4g_error(*out) gives (*out is then a closed runtime, for the message
// alone: hvm4g_close frees it).
int  api_open(hvm4g **out, const Options *o);
// A context with its options applied and no heap yet (the unit tests
// build a runtime a module at a time on it).
struct Rt *api_context(const Options *o);
// This thread works for h from now on (the program's threads: its main
// thread between calls, the watcher that prints the progress line).
void api_use(hvm4g *h);
// Address space the runtime reserves besides the heap and its seen set,
// with `threads` CPU threads: the default heap is sized from what is left.
u64  api_reserved_besides(u32 threads);
// ... and per heap word (the stacks sized from the heap).
u64  api_reserved_per_word(u32 threads);
// The process's peak resident memory in bytes (0: unknown).
u64  api_peak_rss(void);

#endif
