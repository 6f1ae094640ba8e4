#!/usr/bin/env bash
# dev49: checks on the final tree, then one-run walls: --gpu, -T16, the reference -T16
T0=$(date +%s); source scripts/h200_lib.sh
: # the reference binary .ref/hvm4ref was built on that machine from its own sources, outside this repository (the build line is not kept here)
OUT=$OUT HVM4_REF_TESTS=.ref/test HVM4_REF_BENCH=.ref/bench timeout 330 bash scripts/h200_check.sh checks > /dev/null 2>&1
cp $OUT/h200_check.txt $OUT/h200_check_49.txt
wait
ST=.ref/bench/par/sup_tree.hvm4
export -f say run; export ST OUT T0
timeout 100 bash -c '{
say "walls: $(git log -1 --format=%h)"
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu > /dev/null 2>&1; .ref/hvm4ref bench/gpu_tree_map.hvm4 -S -T16 > /dev/null 2>&1
for f in bench/gpu_wide_map.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_sup_search.hvm4 bench/gpu_tree_map.hvm4 bench/gpu_spin_tree.hvm4 $ST; do
  for r in 1 2; do
    run ./hvm4g $f -S -s --gpu
    run ./hvm4g $f -S -s -T16
    run .ref/hvm4ref $f -S -T16
  done
done
say done
} > $OUT/walls49.txt 2>&1' 
