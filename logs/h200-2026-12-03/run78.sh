#!/usr/bin/env bash
# dev78: a field held BUSY by another worker makes the WNF wait (wnf.h
# ENTER, wnf_rebuild): the CUDA backend's checks and the device rates
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
make -s cuda-regs 2>&1 | grep -E "k_step" >> $OUT/build.txt
say "built" >> $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
rate() { timeout 30 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} END{printf "%s M/s %s passes %.1f ms", p, n, t*1000}'; }
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do
  for m in owner atomic; do
    echo "  $f $m: $(rate ./hvm4g bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)" >> $OUT/rates.txt
  done
done
say "rates done" >> $OUT/build.txt
HVM4G_BIN=./hvm4g timeout 230 bash scripts/cuda_check.sh /tmp/cc > /dev/null 2>&1
cp /tmp/cc/summary.txt $OUT/cuda_check_summary.txt
grep -l -i fail /tmp/cc/res/* 2>/dev/null | head -20 > $OUT/cuda_check_failures.txt
say "done" >> $OUT/build.txt
