#!/usr/bin/env bash
# dev125: the pass budget and the lane count again, on the kernel that
# clones numbers at once (deferrals and the warps' balance changed with
# it): --budget 1024/2048/4096 (the default), --lanes at four and sixteen
# waves against eight (the default, 1,081,344), both modes, one round,
# then the best against the default once more.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
say "built" >> $OUT/build.txt
rate() { timeout 30 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s device, %s passes %.1f ms, %s defers", p, n, t*1000, d}'; }
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map; do for m in owner atomic; do
  for x in "--budget=4096" "--budget=1024" "--budget=2048" "--lanes=540672" "--lanes=2162688" "--budget=4096"; do
    echo "  $f $m $x: $(rate ./hvm4g bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m $x)"
  done
done; done > $OUT/sweep.txt
say "sweep" >> $OUT/build.txt
