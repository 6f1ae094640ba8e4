#!/usr/bin/env bash
# dev60: checks on the start-over code: cuda_check (sanitizer, hybrid incl. default_pool and restart), the reference's tests on CUDA in both modes
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1
HVM4G_BIN=./hvm4g timeout 330 bash scripts/cuda_check.sh $OUT/cuda-check > /dev/null 2>&1
tail -n 14 $OUT/cuda-check/summary.txt > $OUT/checks60.txt
ls $OUT/cuda-check/ | head -3 >> $OUT/checks60.txt
for m in owner atomic; do
  HVM4G_BIN=./hvm4g JOBS=5 timeout 110 bash tests/conformance.sh .ref/test --device=cuda --dup=$m --dev-heap=1G > $OUT/conformance60_$m.txt 2>&1
  say "conformance $m: $(tail -n 1 $OUT/conformance60_$m.txt)" >> $OUT/checks60.txt
done
cat $OUT/checks60.txt
