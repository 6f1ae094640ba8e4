#!/usr/bin/env bash
# dev48: wnf_instance's batched read-only template copy: A/B, then the spin
# tree's source counters again.
T0=$(date +%s); source scripts/h200_lib.sh
HVM4G_BASE=.ref/bins/hvm4g_base OUT=$OUT HVM4_REF_BENCH=.ref/bench timeout 400 bash scripts/h200_check.sh book > /dev/null 2>&1
cp $OUT/h200_check.txt $OUT/h200_check_48.txt
say "ncu spin tree" >> $OUT/ncu48.txt
ncu --clock-control none -k regex:k_step -s 8 -c 1 --section SourceCounters -f -o $OUT/ncu48 \
  ./hvm4g bench/gpu_spin_tree.hvm4 -S --gpu --dup=atomic --cpu-first=0 --dev-heap=4G >> $OUT/ncu48.txt 2>&1
ncu -i $OUT/ncu48.ncu-rep --page source --csv --print-source sass > $OUT/ncu48_sass.csv 2>&1
rm -f $OUT/ncu48.ncu-rep
say done >> $OUT/ncu48.txt
