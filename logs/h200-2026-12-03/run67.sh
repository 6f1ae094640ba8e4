#!/usr/bin/env bash
# dev67: the take-over poll reading the pool's task count only when the device could take over (A/B against cce48c0's gpu.c/snf.c), then cuda_check on the final code
set -u
T0=$(date +%s); source scripts/h200_lib.sh
# the old binary: cce48c0's sources, built on the 2-core machine (same nvcc)
cp .ref/hvm4g_old ./hvm4g_old
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
./hvm4g bench/gpu_tree_map.hvm4 -S -T16 > /dev/null 2>&1
say "A/B: --gpu old / --gpu new / -T16, five rounds"
for r in 1 2 3 4 5; do
  for f in bench/gpu_tree_map.hvm4 bench/gpu_shared_tree.hvm4 .ref/bench/par/sup_tree.hvm4 bench/gpu_wide_map.hvm4 bench/gpu_sup_search.hvm4; do
    run ./hvm4g_old $f -S -s --gpu
    run ./hvm4g $f -S -s --gpu
    run ./hvm4g $f -S -s -T16
  done
done > $OUT/ab.txt
awk '{ match($0, /wall [0-9.]+ s/); w = substr($0, RSTART + 5, RLENGTH - 7); t = ($0 ~ / -T16/) ? "T16" : "gpu"; v[$1 " " $2 " " t] = v[$1 " " $2 " " t] " " w } END { for (k in v) print k ":" v[k] }' $OUT/ab.txt | sort
for f in bench/gpu_tree_map.hvm4 bench/gpu_wide_map.hvm4 bench/gpu_sup_search.hvm4; do
  a=$(./hvm4g $f -T16 | md5sum); b=$(./hvm4g $f --gpu | md5sum); [ "$a" = "$b" ] && echo "same: $f" || echo "DIFFERS: $f"
done
say "cuda_check"
HVM4G_BIN=./hvm4g timeout 240 bash scripts/cuda_check.sh $OUT/cc > /dev/null 2>&1
tail -n 11 $OUT/cc/summary.txt
head -c 3000 $OUT/cc/failures.txt
rm -rf $OUT/cc/results.tar.gz ./hvm4g_old
say "done"
