#!/usr/bin/env bash
# dev122: --dup-wait swept on the kernel that clones numbers at once
# (run121: the wide map's atomic mode 4580 M/s at 32 polls, 5580 at
# 2048), on the five wide programs and the shared tree, both modes: the
# default to choose. One round, then a second of 32 against the best.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
say "built" >> $OUT/build.txt
rate() { timeout 30 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s device, %s passes %.1f ms, %s defers", p, n, t*1000, d}'; }
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree gpu_shared_tree; do for m in owner atomic; do
  for x in 32 128 512 2048 8192; do
    echo "  1 $f $m $x: $(rate ./hvm4g bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m --dup-wait=$x)"
  done
done; done > $OUT/sweep.txt
say "sweep" >> $OUT/build.txt
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree gpu_shared_tree; do for m in owner atomic; do
  for x in 32 512 2048; do
    echo "  2 $f $m $x: $(rate ./hvm4g bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m --dup-wait=$x)"
  done
done; done >> $OUT/sweep.txt
say "round 2" >> $OUT/build.txt
