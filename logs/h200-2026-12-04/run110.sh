#!/usr/bin/env bash
# dev110: does the span of the lanes' stacks matter (address translation)?
# The default stack is 2048 words a lane: 17.7 GB for 1.08M lanes, over
# which a pass's lanes' tops are spread. --stack=512/256/128 shrink that
# span 4-16x. Device-only rates, two rounds; then rate against lanes at
# 2048 and 256 words a lane (wide map).
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
say "built" >> $OUT/build.txt
rate() { timeout 30 "$@" 2>&1 | awk '/^- Itrs:/{i=$3} /^- Device: /{l=$4} /^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} /^- Device stopped:/{s=$0} END{printf "%s M/s %s lanes %s passes %.1f ms, %s defers, %s itrs, %s", p, l, n, t*1000, d, i, s}'; }
for r in 1 2; do
  for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do for m in owner atomic; do
    for s in 2048 512 256 128; do
      echo "  $r $f $m stack$s: $(rate ./hvm4g bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m --stack=$s)"
    done
  done; done
done > $OUT/rates.txt
say "rates" >> $OUT/build.txt
for m in owner atomic; do for s in 2048 256; do for l in 135168 270336 540672 1081344 2097152; do
  echo "  $m stack$s lanes$l: $(rate ./hvm4g bench/gpu_wide_map.hvm4 -S -s --gpu --cpu-first=0 --dup=$m --stack=$s --lanes=$l)"
done; done; done > $OUT/lanes.txt
say "lanes" >> $OUT/build.txt
