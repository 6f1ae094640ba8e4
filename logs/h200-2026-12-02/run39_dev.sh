#!/bin/bash
# run39: packing against lane count (new binary): 540672, 731177, 1081344
set -u
exec > >(tee "$OUT/run39.txt") 2>&1
.ref/bins/new bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
for r in 1 2; do
for fm in "bench/gpu_tree_map.hvm4 owner" "bench/gpu_shared_tree.hvm4 atomic" ".ref/bench/par/sup_tree.hvm4 atomic" "bench/gpu_wide_map.hvm4 owner"; do
  set -- $fm; f=$1; m=$2
  for l in 540672 731177 1081344 1048576; do
    o=$(.ref/bins/new $f -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G --lanes=$l 2>&1)
    echo "$l $(basename $f) $m: $(printf '%s\n' "$o" | grep -E 'Device time|Device packing|Device setup|Device heap|Device copy out' | sed 's/^- //' | tr '\n' ' ')"
  done
done; done
