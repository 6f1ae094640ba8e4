#!/usr/bin/env bash
# dev103: the WNF stack's top frame in a register (-DWNF_TOS: APPLY's pop
# needs no load), alone and with the register bound at 72 / 80 (28 / 24
# one-warp blocks a multiprocessor); device-only rates, two rounds; then
# ncu source counters (per CUDA line) of the wide map, default and tos_b28.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants tos=-DWNF_TOS b28=-DK_STEP_BLOCKS=28 tos_b28="-DWNF_TOS -DK_STEP_BLOCKS=28" \
  b24=-DK_STEP_BLOCKS=24 tos_b24="-DWNF_TOS -DK_STEP_BLOCKS=24" >> $OUT/build.txt 2>&1
ls -la hvm4g* >> $OUT/build.txt
say "built" >> $OUT/build.txt
BINS="hvm4g hvm4g_tos hvm4g_b28 hvm4g_tos_b28 hvm4g_b24 hvm4g_tos_b24"
rate() { timeout 30 "$@" 2>&1 | awk '/^- Itrs:/{i=$3} /^- Device: /{l=$4} /^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s %s lanes %s passes %.1f ms, %s defers, %s itrs", p, l, n, t*1000, d, i}'; }
for r in 1 2; do
  PROGS="gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree"
  [ $r = 2 ] && PROGS="gpu_wide_map gpu_sup_search gpu_tree_map"
  for f in $PROGS; do for m in owner atomic; do for b in $BINS; do
    echo "  $r $f $m $b: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
  done; done; done
done > $OUT/rates.txt
say "rates" >> $OUT/build.txt
for b in hvm4g hvm4g_tos_b28; do
  ncu --clock-control none -k regex:k_step -s 8 -c 1 --section SourceCounters \
    --import-source yes -f -o /tmp/src_$b ./$b bench/gpu_wide_map.hvm4 -S --gpu \
    --dup=atomic --cpu-first=0 > $OUT/ncu_${b}_run.txt 2>&1
  ncu -i /tmp/src_$b.ncu-rep --page source --csv --print-source cuda 2>&1 | gzip > $OUT/ncu_${b}_cuda.csv.gz
  ncu -i /tmp/src_$b.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > $OUT/ncu_${b}_sass.csv.gz
  say "ncu $b" >> $OUT/build.txt
done
