#!/usr/bin/env bash
# dev52: warp-wide rank and copy (packk), lanes fetching (fetch), then one-run walls (--gpu, -T16, the reference -T16)
T0=$(date +%s); source scripts/h200_lib.sh
: # the reference binary .ref/hvm4ref was built on that machine from its own sources, outside this repository (the build line is not kept here)
{ say "equality: CUDA (owner, atomic) against the CPU, tests/gpu and sup_tree"; bad=0; k=0
for f in tests/gpu/*.hvm4 .ref/bench/par/sup_tree.hvm4 bench/gpu_tree_map.hvm4; do
  want=$(timeout 20 ./hvm4g $f 2>&1 | md5sum)
  for m in owner atomic; do k=$((k+1))
    got=$(timeout 20 ./hvm4g $f --gpu --dup=$m --cpu-first=0 --handoff=0 2>&1 | md5sum)
    [ "$got" = "$want" ] || { bad=$((bad+1)); echo "  DIFFERS: $f $m"; }
  done
done; say "equality: $k runs, $bad differ"; } > $OUT/equal.txt 2>&1
OUT=$OUT HVM4_REF_BENCH=.ref/bench timeout 330 bash scripts/h200_check.sh packk fetch > /dev/null 2>&1
wait
ST=.ref/bench/par/sup_tree.hvm4
export -f say run; export ST OUT T0
timeout 200 bash -c '{
say "walls"
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu > /dev/null 2>&1; .ref/hvm4ref bench/gpu_tree_map.hvm4 -S -T16 > /dev/null 2>&1
for f in bench/gpu_wide_map.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_sup_search.hvm4 bench/gpu_tree_map.hvm4 bench/gpu_shared_tree.hvm4 bench/gpu_spin_tree.hvm4 $ST; do
  for r in 1 2; do
    run ./hvm4g $f -S -s --gpu
    run ./hvm4g $f -S -s -T16
    run ./hvm4g $f -S -s --gpu --dup=atomic
    run .ref/hvm4ref $f -S -T16
  done
done
say done
} > $OUT/walls52.txt 2>&1'
rm -f $OUT/*.ncu-rep
