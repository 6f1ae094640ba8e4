// api.h: what the hvm4g program needs of the library (run/api.c) beyond
// include/hvm4g.h.

#ifndef HVM4G_API_H
#define HVM4G_API_H

#include "core/term.h"

// Address space the runtime reserves besides the heap and its seen set,
// with `threads` CPU threads: the default heap is sized from what is left.
u64  api_reserved_besides(u32 threads);
// The process's peak resident memory in bytes (0: unknown).
u64  api_peak_rss(void);
// Whether -C's -s counts are dimmed with terminal colour codes.
void api_color(int on);

#endif
