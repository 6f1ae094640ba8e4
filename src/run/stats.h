// stats.h: what -s and -S print after the result (run/stats.c).

#ifndef HVM4G_STATS_H
#define HVM4G_STATS_H

// -s: interactions (per thread under -T), time, rate, then the device's
// and the scheduler's lines; -S: the interaction count alone. `secs`: the
// normalization's wall time.
void stats_print(double secs);

#endif
