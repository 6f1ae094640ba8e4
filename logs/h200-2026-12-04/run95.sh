#!/usr/bin/env bash
# dev95: the final defaults' wait (--dup-wait=32 in wide passes) against
# none (--dup-wait=0), both with sparks in narrow passes only; device-only
# rates, two rounds interleaved.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
say "built" >> $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
rate() { timeout 30 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} END{printf "%s M/s %s passes %.1f ms", p, n, t*1000}'; }
for r in 1 2; do
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do
  for m in owner atomic; do for w in 32 0; do
    echo "  $r $f $m wait=$w: $(rate ./hvm4g bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m --dup-wait=$w)"
  done; done
done
done > $OUT/rates.txt
say "done" >> $OUT/build.txt
