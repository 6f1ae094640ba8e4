#!/bin/bash
# run37a: threads per block of k_step (128/8 blocks, 64/16, 32/32) x lanes (default, 1,081,344)
set -u
exec > >(tee "$OUT/run37a.txt") 2>&1
T0=$(date +%s)
say() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
run() { local b=$1; shift; local o; o=$( /usr/bin/time -f "wall %e rss %MKB" "$b" "$@" 2>&1 )
  printf '  %s %s:' "$(basename "$b")" "$*"
  printf '%s\n' "$o" | awk '
    /^- Device time:/     { printf " device %.1f ms", $4 * 1000 }
    /^- Device perf:/     { printf ", %s M/s", $4 }
    /^- Device: /         { printf ", %s lanes", $4 }
    /^wall/               { w = $0 }
    END { printf ", %s\n", w }'; }
.ref/bins/tpb128 bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
for f in bench/gpu_wide_map.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_sup_search.hvm4 bench/gpu_tree_map.hvm4 .ref/bench/par/sup_tree.hvm4; do
  say "$f"
  for m in owner atomic; do for l in "" --lanes=1081344; do for b in tpb128 tpb64 tpb32; do
    run .ref/bins/$b $f -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G $l
  done; done; done
done
say "second round, wide map and shared wide"
for f in bench/gpu_wide_map.hvm4 bench/gpu_shared_wide.hvm4; do
  for m in owner atomic; do for l in "" --lanes=1081344; do for b in tpb32 tpb64 tpb128; do
    run .ref/bins/$b $f -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G $l
  done; done; done
done
say "done"
