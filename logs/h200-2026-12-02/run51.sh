#!/usr/bin/env bash
# dev51: the packing kernel by kernel (sup_tree owner, spin tree atomic); the fixed cost of --gpu
T0=$(date +%s); source scripts/h200_lib.sh
OUT=$OUT HVM4_REF_BENCH=.ref/bench timeout 400 bash scripts/h200_check.sh packk > /dev/null 2>&1
{
say "fixed cost: hello, CPU and --gpu, three runs each; then one -s"
for r in 1 2 3; do run ./hvm4g examples/hello.hvm4 -s; run ./hvm4g examples/hello.hvm4 -s --gpu; done
/usr/bin/time -f "wall %e s" ./hvm4g examples/hello.hvm4 -s --gpu 2>&1 | grep -E "setup|wall|time|copy|packing"
for r in 1 2; do /usr/bin/time -f "wall %e s" ./hvm4g bench/gpu_tree_map.hvm4 -S -s --gpu 2>&1 | grep -E "setup|wall|Device time|packing"; done
say done
} > $OUT/fixed.txt 2>&1
rm -f $OUT/*.ncu-rep
