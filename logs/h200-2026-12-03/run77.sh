#!/usr/bin/env bash
# dev77: the step kernel's profile at 963fa61 (6a34edc's kernel): ncu
# summary and source counters on the wide map (atomic, ninth launch)
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
say "built" >> $OUT/build.txt
OUT=$OUT NCUSRC_PROGS=gpu_wide_map timeout 400 bash scripts/h200_check.sh ncu ncusrc > /dev/null 2>&1
rm -f $OUT/*.ncu-rep
gzip -f $OUT/*.csv
ls -la $OUT >> $OUT/build.txt
say "done" >> $OUT/build.txt
