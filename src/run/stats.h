// stats.h: what -s and -S print after the result (run/stats.c).

#ifndef HVM4G_STATS_H
#define HVM4G_STATS_H

// RT->cpu->conf.stats: 0 none, 1 -s (text lines), STATS_JSON --stats=json.
#define STATS_JSON 2

// -s: interactions (per thread under -T), time, rate, peak memory, then
// the device's and the scheduler's lines; --stats=json: the same figures
// as one JSON object on one line; -S: the interaction count alone.
// `secs`: the normalization's wall time; `interrupted`: it was stopped.
void stats_print(double secs, int interrupted);

#endif
