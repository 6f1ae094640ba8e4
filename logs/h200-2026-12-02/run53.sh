#!/usr/bin/env bash
# run53 (stopped by its 500 s limit inside the equality loop: tests/gpu holds -C and runaway programs that run until their 20 s timeout without their // args lines; no result): the device takes the slots the CPU pool left (not the root): equality, then hybrid walls
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1
{ say "equality: CUDA take-overs (-T4 --cpu-first=32/64, both modes) and device-only against the CPU"; bad=0; k=0
for f in tests/gpu/*.hvm4 .ref/bench/par/sup_tree.hvm4; do
  want=$(timeout 20 ./hvm4g $f 2>&1 | md5sum)
  for m in owner atomic; do for a in "--cpu-first=0 --handoff=0" "-T4 --cpu-first=32" "-T16 --cpu-first=64 --take-max=4G"; do k=$((k+1))
    got=$(timeout 20 ./hvm4g $f --gpu --dup=$m $a 2>&1 | md5sum)
    [ "$got" = "$want" ] || { bad=$((bad+1)); echo "  DIFFERS: $f $m $a"; }
  done; done
done; say "equality: $k runs, $bad differ"; } > $OUT/equal.txt 2>&1
ST=.ref/bench/par/sup_tree.hvm4
{
say "hybrid walls"
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu > /dev/null 2>&1; ./hvm4g bench/gpu_tree_map.hvm4 -S -T16 > /dev/null 2>&1
for f in bench/gpu_wide_map.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_sup_search.hvm4 bench/gpu_tree_map.hvm4 bench/gpu_spin_tree.hvm4 $ST; do
  for r in 1 2; do
    run ./hvm4g $f -S -s --gpu
    run ./hvm4g $f -S -s -T16
    run ./hvm4g $f -S -s --gpu -T16
    run ./hvm4g $f -S -s --gpu -T16 --take-max=1G
    run ./hvm4g $f -S -s --gpu -T16 --take-max=4G
    run ./hvm4g $f -S -s --gpu -T16 --take-max=4G --warm-after=0
  done
done
say done
} > $OUT/hybrid53.txt 2>&1
