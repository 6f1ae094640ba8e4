#!/bin/bash
# run40: default lanes sized once: rates with the default, then the reference's tests on CUDA (owner)
set -u
exec > >(tee "$OUT/run40.txt") 2>&1
B=.ref/bins/fix
$B bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
for r in 1 2; do
for fm in "bench/gpu_wide_map.hvm4 owner" "bench/gpu_wide_map.hvm4 atomic" "bench/gpu_shared_wide.hvm4 owner" "bench/gpu_shared_wide.hvm4 atomic" "bench/gpu_tree_map.hvm4 owner" "bench/gpu_tree_map.hvm4 atomic" "bench/gpu_shared_tree.hvm4 atomic" ".ref/bench/par/sup_tree.hvm4 owner" ".ref/bench/par/sup_tree.hvm4 atomic" "bench/gpu_sup_search.hvm4 owner"; do
  set -- $fm; f=$1; m=$2
  o=$($B $f -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G 2>&1)
  echo "$(basename $f) $m: $(printf '%s\n' "$o" | grep -E 'Device: |Device perf|Device time|Device packing|Device setup|Device copy out' | sed 's/^- //; s/(context [^)]*)//; s/ (marking[^)]*)//; s/, take=.*//' | tr '\n' ' ')"
done; done
HVM4G_BIN=$PWD/$B JOBS=5 bash tests/conformance.sh .ref/test --device=cuda --dup=owner > "$OUT/conf_owner.txt" 2>&1
echo "conformance owner: $(tail -n 1 $OUT/conf_owner.txt)"; grep '^\[FAIL' $OUT/conf_owner.txt | head
