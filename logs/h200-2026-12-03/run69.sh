#!/usr/bin/env bash
# dev69: why --gpu leaves gpu_spin_tree on the CPU (full -s), and --cpu-first=8192 against the default 65536 on it and on the narrow programs
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
./hvm4g bench/gpu_tree_map.hvm4 -S -T16 > /dev/null 2>&1
./hvm4g bench/gpu_spin_tree.hvm4 -S -s --gpu 2>&1 | grep -E "^- (Device|Itrs:|Time)" | grep -v "Itrs\["
for r in 1 2; do
  for f in bench/gpu_spin_tree.hvm4 .ref/bench/par/spin_tree.hvm4 bench/fib_tree.hvm4 bench/list_map.hvm4 bench/bitonic.hvm4 bench/fib_deep.hvm4 bench/gpu_sup_search.hvm4; do
    run ./hvm4g $f -S -s --gpu
    run ./hvm4g $f -S -s --gpu --cpu-first=8192
    run ./hvm4g $f -S -s -T16
  done
done | awk '{ match($0, /wall [0-9.]+ s/); w = substr($0, RSTART, RLENGTH); so = ($0 ~ /started over/) ? " SO" : ""; nu = ($0 ~ /not used/) ? " cpu" : ""; to = ($0 ~ /took over 1/) ? " TO" : ""; sub(/:.*/, ""); print $0, w so nu to }'
say "done"
