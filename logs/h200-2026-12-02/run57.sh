#!/usr/bin/env bash
# dev57: final code: walls (--gpu, -T16, --gpu -T16, the reference's -T16) with device rates in both modes; cuda_check; the reference's tests on CUDA
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1
: # the reference binary .ref/hvm4ref was built on that machine from its own sources, outside this repository (the build line is not kept here)
ST=.ref/bench/par/sup_tree.hvm4
export -f say run; export ST OUT T0
timeout 100 bash -c '{
say "walls on $(git log -1 --format=%h): --gpu (owner), --gpu --dup=atomic, -T16, --gpu -T16, reference -T16"
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu > /dev/null 2>&1; .ref/hvm4ref bench/gpu_tree_map.hvm4 -S -T16 > /dev/null 2>&1
for f in bench/gpu_wide_map.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_sup_search.hvm4 bench/gpu_tree_map.hvm4 $ST bench/gpu_shared_tree.hvm4 bench/gpu_spin_tree.hvm4; do
  run ./hvm4g $f -S -s --gpu
  run ./hvm4g $f -S -s --gpu --dup=atomic
  run ./hvm4g $f -S -s -T16
  run ./hvm4g $f -S -s --gpu -T16
  run .ref/hvm4ref $f -S -T16
done
say done
} > $OUT/walls57.txt 2>&1'
HVM4G_BIN=./hvm4g timeout 250 bash scripts/cuda_check.sh $OUT/cuda-check > /dev/null 2>&1
tail -n 12 $OUT/cuda-check/summary.txt > $OUT/cuda_check57.txt
for m in owner atomic; do
  HVM4G_BIN=./hvm4g JOBS=5 timeout 110 bash tests/conformance.sh .ref/test --device=cuda --dup=$m --dev-heap=1G > $OUT/conformance57_$m.txt 2>&1
  say "conformance $m: $(tail -n 1 $OUT/conformance57_$m.txt)" >> $OUT/cuda_check57.txt
done
cat $OUT/walls57.txt | cut -c1-400; cat $OUT/cuda_check57.txt
