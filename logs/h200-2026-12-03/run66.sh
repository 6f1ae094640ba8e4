#!/usr/bin/env bash
# dev66: the race (--restart=2) and the same-heap rerun: cuda_check (new hybrid checks), --gpu walls (race / --restart=1 / 0 / device / -T16 / ref), the long map
set -u
T0=$(date +%s); source scripts/h200_lib.sh
: # the reference binary .ref/hvm4ref was built on that machine from its own sources, outside this repository (the build line is not kept here)
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
.ref/hvm4ref bench/gpu_tree_map.hvm4 -S -T16 > /dev/null 2>&1
say "cuda_check"
HVM4G_BIN=./hvm4g timeout 230 bash scripts/cuda_check.sh $OUT/cc > /dev/null 2>&1
tail -n 11 $OUT/cc/summary.txt
for f in $OUT/cc/failures.txt; do head -c 3000 $f; done
say "long map"
sed 's/@loop(18, x)/@loop(72, x)/' bench/gpu_wide_map.hvm4 > $OUT/long_map.hvm4
for a in "--gpu --cpu-first=0 -T16" "--gpu"; do
  echo "== $a" >> $OUT/long_map.txt
  /usr/bin/time -f "wall %e s rss %M KB" timeout 60 ./hvm4g $OUT/long_map.hvm4 -S -s $a > $OUT/lm_out.txt 2>> $OUT/long_map.txt; echo "rc=$?" >> $OUT/long_map.txt
  grep -v "Itrs\[" $OUT/lm_out.txt | tail -n 30 >> $OUT/long_map.txt
  md5sum < $OUT/lm_out.txt | cut -c1-8 >> $OUT/long_map.txt
done
grep -E "^==|rc=|wall|Itrs:|Device (time|heap|stopped|runs|passes|copy in|raced|started)|rror" $OUT/long_map.txt
say "default"
OUT=$OUT/h200 HVM4_REF=.ref/hvm4ref HVM4_REF_BENCH=.ref/bench timeout 240 bash scripts/h200_check.sh default > /dev/null 2>&1
grep -E "same|DIFF" $OUT/h200/h200_check.txt | grep -v "^  same:"
grep -E "hvm4" $OUT/h200/h200_check.txt | awk '{ match($0, /wall [0-9.]+ s/); w = substr($0, RSTART, RLENGTH); so = ($0 ~ /started over/) ? " SO" : ""; nu = ($0 ~ /not used/) ? " cpu" : ""; rc = ""; if (match($0, /raced: won [0-9]+ lost [0-9]+/)) rc = " " substr($0, RSTART, RLENGTH); sub(/:.*/, ""); print $0, w so nu rc }'
rm -f $OUT/lm_out.txt $OUT/long_map.hvm4
say "done"
