#!/bin/bash
# run35: WNF_JOIN (reconvergence per step) A/B, hugepages A/B, then join correctness
set -u
exec > >(tee "$OUT/run35.txt") 2>&1
T0=$(date +%s)
say() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
say "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled) defrag: $(cat /sys/kernel/mm/transparent_hugepage/defrag)"
: # the reference binary .ref/hvm4ref was built on that machine from its own sources, outside this repository (the build line is not kept here)
refpid=$!
keys='Itrs:|Device time|Device perf|Device packing|Device copy in|Device copy out|^- Time'
run() { local b=$1; shift; local o; o=$( /usr/bin/time -f "wall %e rss %MKB" "$b" "$@" 2>&1 )
  echo "  $(basename $b) $*: $(printf '%s\n' "$o" | grep -E "$keys|wall" | sed 's/^- //' | tr '\n' ' ')"; }
J=.ref/bins/join; N=.ref/bins/nojoin
$J bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
say "join A/B, device only"
for f in bench/gpu_wide_map.hvm4 bench/gpu_tree_map.hvm4 .ref/bench/par/sup_tree.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_sup_search.hvm4; do
  for r in 1 2; do for m in atomic owner; do for b in $N $J; do
    run $b $f -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G
  done; done; done
done
say "ncu join"
ncu --clock-control none -k k_step -s 8 -c 1 --section SpeedOfLight --section Occupancy --section WarpStateStats \
  --metrics smsp__thread_inst_executed_per_inst_executed.ratio $J bench/gpu_wide_map.hvm4 -S --gpu --dup=atomic --cpu-first=0 --dev-heap=4G > "$OUT/ncu_join.txt" 2>&1
grep -E "Duration|Active Threads|Cycles Per Issued|thread_inst_executed|Achieved Occ" "$OUT/ncu_join.txt" | head
wait $refpid
say "hugepages A/B (join binary)"
for r in 1 2; do for h in 0 1; do
  HVM4G_HUGEPAGES=$h run $J bench/gpu_shared_wide.hvm4 -S -s --gpu --dup=atomic --cpu-first=0 --dev-heap=4G
  HVM4G_HUGEPAGES=$h run $J .ref/bench/par/sup_tree.hvm4 -S -s --gpu --dup=atomic --cpu-first=0 --dev-heap=4G
  HVM4G_HUGEPAGES=$h run $J bench/gpu_tree_map.hvm4 -S -s --gpu
  HVM4G_HUGEPAGES=$h run $J bench/gpu_tree_map.hvm4 -S -s -T16
  HVM4G_HUGEPAGES=$h run $J bench/gpu_wide_map.hvm4 -S -s -T16
  HVM4G_HUGEPAGES=$h run $J bench/gpu_wide_map.hvm4 -S -s --gpu -T16
done; done
run .ref/hvm4ref bench/gpu_wide_map.hvm4 -S -T16
run .ref/hvm4ref bench/gpu_tree_map.hvm4 -S -T16
say "join correctness: conformance both modes, sanitizer"
for m in atomic owner; do
  HVM4G_BIN=$PWD/$J JOBS=8 bash tests/conformance.sh .ref/test --device=cuda --dup=$m > "$OUT/conf_join_$m.txt" 2>&1
  say "conformance join $m: $(tail -n 1 "$OUT/conf_join_$m.txt")"
  grep '^\[FAIL' "$OUT/conf_join_$m.txt" | head
done
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n1)
for p in wide_tree shared_tree; do for tool in memcheck racecheck; do for dup in owner atomic; do
  r=$(cd tests/gpu && timeout -k 5 120 "$SAN" --tool $tool --error-exitcode 99 ../../$J $p.hvm4 -G --device=cuda --dup=$dup --lanes=512 --stack=1024 2>&1)
  echo "  san $p $tool $dup rc=$?: $(printf '%s\n' "$r" | grep -E 'SUMMARY' | tr '\n' ' ')"
done; done; done
say "done"
