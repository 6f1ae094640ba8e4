#!/usr/bin/env bash
# dev65: HEAD (d55a22a's pool, 3e1977a) on the H200: the long map's stop (full -s, exit codes), --gpu default walls, cuda_check
set -u
T0=$(date +%s); source scripts/h200_lib.sh
: # the reference binary .ref/hvm4ref was built on that machine from its own sources, outside this repository (the build line is not kept here)
make -j16 -s hvm4g > $OUT/build.txt 2>&1
sed 's/@loop(18, x)/@loop(72, x)/' bench/gpu_wide_map.hvm4 > $OUT/long_map.hvm4
.ref/hvm4ref bench/gpu_tree_map.hvm4 -S -T16 > /dev/null 2>&1
say "long map"
for a in "-T16" "--gpu --cpu-first=0 -T16"; do
  echo "== $a" >> $OUT/long_map.txt
  /usr/bin/time -f "wall %e s rss %M KB" timeout 60 ./hvm4g $OUT/long_map.hvm4 -S -s $a > $OUT/lm_out.txt 2>> $OUT/long_map.txt; echo "rc=$?" >> $OUT/long_map.txt
  grep -v "Itrs\[" $OUT/lm_out.txt | tail -n 30 >> $OUT/long_map.txt
done
say "default"
OUT=$OUT/h200 HVM4_REF=.ref/hvm4ref HVM4_REF_BENCH=.ref/bench timeout 270 bash scripts/h200_check.sh default > /dev/null 2>&1
say "cuda_check"
HVM4G_BIN=./hvm4g timeout 200 bash scripts/cuda_check.sh $OUT/cuda-check > /dev/null 2>&1
tail -n 12 $OUT/cuda-check/summary.txt
cat $OUT/cuda-check/failures.txt 2>/dev/null | head -20
grep -E "same|DIFF|^\[" $OUT/h200/h200_check.txt
grep -E "hvm4" $OUT/h200/h200_check.txt | awk '{ match($0, /wall [0-9.]+ s/); w = substr($0, RSTART, RLENGTH); so = ($0 ~ /started over/) ? " SO" : ""; nu = ($0 ~ /not used/) ? " cpu" : ""; sub(/:.*/, ""); print $0, w so nu }'
grep -E "^==|rc=|wall|Itrs:|Device (time|heap|stopped|runs|passes)|Error|rror" $OUT/long_map.txt
say "done"
