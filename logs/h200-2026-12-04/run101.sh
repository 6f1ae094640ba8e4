#!/usr/bin/env bash
# dev101: the profile of the kept kernel (leaf gives relaxed, 3d4e2b1):
# ncu summary and source counters on the wide map, atomic, ninth launch,
# digested by scripts/ncu_summary.py, against run94's; then --dup-wait
# 0 / 32 (the default) / 128 again now that a leaf's slot is given back
# without a fence. Device-only rates, two rounds.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
say "built" >> $OUT/build.txt
OUT=$OUT NCUSRC_PROGS=gpu_wide_map timeout 200 bash scripts/h200_check.sh ncu ncusrc > /dev/null 2>&1
python3 scripts/ncu_summary.py $OUT/ncu_src_gpu_wide_map_sass.csv 20 > $OUT/ncu_wide_map_summary.txt 2>&1
rm -f $OUT/*.ncu-rep $OUT/*_cuda.csv $OUT/*_sass.csv
say "profiled" >> $OUT/build.txt
rate() { timeout 30 "$@" 2>&1 | awk '/^- Itrs:/{i=$3} /^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s %s passes %.1f ms, %s defers, %s itrs", p, n, t*1000, d, i}'; }
for r in 1 2; do
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do
  for m in owner atomic; do for w in 32 0 128; do
    echo "  $r $f $m wait=$w: $(rate ./hvm4g bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m --dup-wait=$w)"
  done; done
done
done > $OUT/rates.txt
say "done" >> $OUT/build.txt
