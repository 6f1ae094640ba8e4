#!/usr/bin/env bash
# dev54: the device takes the slots the CPU pool left: hybrid walls; then cuda_check (sanitizer included)
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1
ST=.ref/bench/par/sup_tree.hvm4
export -f say run; export ST OUT T0
timeout 75 bash -c '{
say "hybrid walls: --gpu, -T16, --gpu -T16 (take-max 64M), take-max 4G, take-max 4G with the context at once"
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu > /dev/null 2>&1
for f in bench/gpu_wide_map.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_tree_map.hvm4 $ST bench/gpu_sup_search.hvm4; do
  run ./hvm4g $f -S -s --gpu
  run ./hvm4g $f -S -s -T16
  run ./hvm4g $f -S -s --gpu -T16
  run ./hvm4g $f -S -s --gpu -T16 --take-max=4G
  run ./hvm4g $f -S -s --gpu -T16 --take-max=4G --warm-after=0
done
say done
} > $OUT/hybrid54.txt 2>&1'
HVM4G_BIN=./hvm4g timeout 225 bash scripts/cuda_check.sh $OUT/cuda-check > /dev/null 2>&1
tail -n 12 $OUT/cuda-check/summary.txt
