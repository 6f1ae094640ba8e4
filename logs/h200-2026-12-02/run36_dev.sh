#!/bin/bash
# run36: async pinned copy out A/B; L1 carveout A/B; budget and lanes sweeps; sup_tree trace
set -u
exec > >(tee "$OUT/run36.txt") 2>&1
T0=$(date +%s)
say() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
run() { local b=$1; shift; local o; o=$( /usr/bin/time -f "wall %e rss %MKB" "$b" "$@" 2>&1 )
  printf '  %s %s:' "$(basename "$b")" "$*"
  printf '%s\n' "$o" | awk '
    /^- Device time:/     { t = $4; printf " device %.1f ms", t * 1000 }
    /^- Device perf:/     { printf ", %s M/s", $4 }
    /^- Device packing:/  { p = $4; printf ", packing %.2f ms", p * 1000 }
    /^- Device copy out:/ { c = $5; printf ", copy out %.2f ms (%s MB pinned)", c * 1000, substr($7, 2) }
    /^wall/               { w = $0 }
    END { if (t > 0) printf " (%.1f%%)", 100 * (p + c) / t; printf ", %s\n", w }'; }
B=.ref/bins/base58; A=.ref/bins/asynccopy; C=.ref/bins/carve
$A bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
say "copy out: base58 against asynccopy"
for f in .ref/bench/par/sup_tree.hvm4 bench/gpu_shared_tree.hvm4 bench/gpu_tree_map.hvm4 bench/gpu_wide_map.hvm4; do
  for r in 1 2 3; do for m in atomic owner; do for b in $B $A; do
    run $b $f -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G
  done; done; done
done
say "L1 carveout (unset, 0, 100)"
for f in bench/gpu_wide_map.hvm4 bench/gpu_tree_map.hvm4 bench/gpu_sup_search.hvm4; do
  for r in 1 2; do for m in atomic owner; do for cv in "" 0 100; do
    HVM4G_CARVEOUT=$cv run $C $f -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G
    [ -z "$cv" ] && echo "    (unset)"
  done; done; done
done
say "budget sweep (wide map, tree map)"
for f in bench/gpu_wide_map.hvm4 bench/gpu_tree_map.hvm4; do for m in atomic owner; do for bu in 1024 4096 16384 65536; do
  run $A $f -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G --budget=$bu
done; done; done
say "lanes sweep (wide map)"
for m in atomic owner; do for l in 169000 338000 676000 1352000; do
  run $A bench/gpu_wide_map.hvm4 -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G --lanes=$l
done; done
say "sup_tree trace"
$A .ref/bench/par/sup_tree.hvm4 -S -s --gpu --dup=atomic --cpu-first=0 --dev-heap=4G --trace=$OUT/sup_tree_trace.csv > $OUT/sup_tree_s.txt 2>&1
$A bench/gpu_wide_map.hvm4 -S -s --gpu --dup=atomic --cpu-first=0 --dev-heap=4G --trace=$OUT/wide_map_trace.csv > $OUT/wide_map_s.txt 2>&1
cat $OUT/sup_tree_trace.csv
say "done"
