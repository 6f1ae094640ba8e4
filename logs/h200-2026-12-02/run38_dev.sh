#!/bin/bash
# run38: packing inflation diagnosis: new (tpb32, 8 waves) default lanes / 540672 lanes; old128 at 540672
set -u
mkdir -p $OUT/s
exec > >(tee "$OUT/run38.txt") 2>&1
.ref/bins/new bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
i=0
for r in 1 2; do
for f in bench/gpu_tree_map.hvm4 bench/gpu_shared_tree.hvm4; do for m in owner atomic; do
  for cfg in "new" "new --lanes=540672" "old128 --lanes=540672"; do
    set -- $cfg; b=$1; shift
    i=$((i+1))
    .ref/bins/$b $f -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G "$@" --trace=$OUT/s/$i.csv > $OUT/s/$i.txt 2>&1
    echo "$i $b $* $(basename $f) $m: $(grep -E 'Device: |Device time|Device packing|Device setup' $OUT/s/$i.txt | sed 's/^- //' | tr '\n' ' ')"
  done
done; done; done
