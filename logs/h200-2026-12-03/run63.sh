#!/usr/bin/env bash
# dev63: --gpu's pool on every core, its last thread parked while the context is made: walls of the seven programs (three rounds), then cuda_check
set -u
T0=$(date +%s); source scripts/h200_lib.sh
: # the reference binary .ref/hvm4ref was built on that machine from its own sources, outside this repository (the build line is not kept here)
.ref/hvm4ref bench/gpu_tree_map.hvm4 -S -T16 > /dev/null 2>&1
OUT=$OUT/h200 HVM4_REF=.ref/hvm4ref HVM4_REF_BENCH=.ref/bench timeout 260 bash scripts/h200_check.sh default > /dev/null 2>&1
/usr/bin/time -f "wall %e s" ./hvm4g bench/gpu_wide_map.hvm4 -S -s --gpu 2>&1 | grep -E "setup|started over|wall" > $OUT/setup.txt
HVM4G_BIN=./hvm4g timeout 240 bash scripts/cuda_check.sh $OUT/cuda-check > /dev/null 2>&1
tail -n 12 $OUT/cuda-check/summary.txt
cat $OUT/cuda-check/failures.txt 2>/dev/null | head -20
cat $OUT/setup.txt
grep -E "same|DIFF|^\[" $OUT/h200/h200_check.txt
grep -E "hvm4" $OUT/h200/h200_check.txt | awk '{ match($0, /wall [0-9.]+ s/); w = substr($0, RSTART, RLENGTH); so = ($0 ~ /started over/) ? " SO" : ""; nu = ($0 ~ /not used/) ? " cpu" : ""; sub(/:.*/, ""); print $0, w so nu }'
