#!/usr/bin/env bash
# dev94: the profile of this stop's final kernel (dff51e3: the wait in wide
# passes, sparks in narrow passes only): ncu summary (stalls, threads an
# instruction) and source counters on the wide map, atomic, ninth launch;
# the digest by scripts/ncu_summary.py, against run87's
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
say "built" >> $OUT/build.txt
OUT=$OUT NCUSRC_PROGS=gpu_wide_map timeout 200 bash scripts/h200_check.sh ncu ncusrc > /dev/null 2>&1
python3 scripts/ncu_summary.py $OUT/ncu_src_gpu_wide_map_sass.csv 20 > $OUT/ncu_wide_map_summary.txt 2>&1
rm -f $OUT/*.ncu-rep $OUT/*_cuda.csv $OUT/*_sass.csv
say "done" >> $OUT/build.txt
