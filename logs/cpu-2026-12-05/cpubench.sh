#!/usr/bin/env bash
# A/B of two hvm4g builds on the CPU, interleaved, the order of each pair
# swapped every round (the first run of a pair is often the slower one on
# the 2-core machine): BASE NEW THREADS ROUNDS PROGRAMS...
base=$1 new=$2 t=$3 rounds=$4; shift 4
for r in $(seq $rounds); do
  order="base new"; [ $((r % 2)) = 0 ] && order="new base"
  for f in "$@"; do
    for b in $order; do
      bin=$base; [ $b = new ] && bin=$new
      s=$( { /usr/bin/time -f "%e" $bin $f -S -s -T$t > /tmp/cb.out; } 2>&1 | tail -1)
      i=$(awk '/^- Itrs:/{print $3}' /tmp/cb.out); p=$(awk '/^- Perf:/{print $3}' /tmp/cb.out)
      echo "$(basename $f) T$t $b wall $s s, $i itrs, $p M/s"
    done
  done
done
