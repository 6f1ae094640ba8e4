#!/usr/bin/env bash
# dev58: repeats on the final code: the small programs' walls (--gpu, -T16, --gpu -T16, the reference's -T16), three runs; the SUP search and shared wide in both modes, three runs
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1
: # the reference binary .ref/hvm4ref was built on that machine from its own sources, outside this repository (the build line is not kept here)
ST=.ref/bench/par/sup_tree.hvm4
export -f say run; export ST OUT T0
timeout 150 bash -c '{
say "small programs: --gpu, -T16, --gpu -T16, reference -T16; three rounds"
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu > /dev/null 2>&1; .ref/hvm4ref bench/gpu_tree_map.hvm4 -S -T16 > /dev/null 2>&1
for r in 1 2 3; do
for f in bench/gpu_tree_map.hvm4 $ST bench/gpu_shared_tree.hvm4; do
  run ./hvm4g $f -S -s --gpu
  run ./hvm4g $f -S -s -T16
  run ./hvm4g $f -S -s --gpu -T16
  run .ref/hvm4ref $f -S -T16
done; done
say "both modes, three rounds"
for r in 1 2 3; do
for f in bench/gpu_sup_search.hvm4 bench/gpu_shared_wide.hvm4; do
  run ./hvm4g $f -S -s --gpu
  run ./hvm4g $f -S -s --gpu --dup=atomic
done; done
say done
} > $OUT/rep58.txt 2>&1'
cat $OUT/rep58.txt | cut -c1-300
