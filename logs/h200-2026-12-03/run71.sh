#!/usr/bin/env bash
# dev71: relaxed takes as the default, against acquire; entries sorted by
# tag; relaxed number SUBs on top; the narrow-budget share; cuda_check
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants acq=-DHVM4G_TAKE_ACQUIRE sort=-DHVM4G_SORT_TAGS subimm=-DHVM4G_SUB_IMM_RELAXED >> $OUT/build.txt 2>&1
make -s cuda-regs 2>&1 | grep -E "k_step" >> $OUT/build.txt
ls hvm4g_* ; say "built"
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
rate() { timeout 60 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} END{printf "%s M/s %s passes %.1f ms", p, n, t*1000}'; }
{
for r in 1 2; do
  for f in gpu_wide_map gpu_spin_tree gpu_tree_map gpu_sup_search gpu_shared_wide; do
    for b in hvm4g hvm4g_acq hvm4g_sort hvm4g_subimm; do
      for m in owner atomic; do
        echo "  $f $b $m: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
      done
    done
  done
done
} > $OUT/rates.txt
say "rates done"
{
for fr in 1 8 2; do
  for f in gpu_wide_map gpu_tree_map gpu_sup_search gpu_spin_tree gpu_shared_wide; do
    for m in owner atomic; do
      echo "  F=$fr $f $m: $(HVM4G_NARROW_FRAC=$fr rate ./hvm4g bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
    done
  done
done
} > $OUT/frac.txt
say "frac done"
{
for f in bench/gpu_tree_map.hvm4 bench/gpu_shared_tree.hvm4 .ref/bench/par/sup_tree.hvm4 tests/gpu/wide_tree.hvm4 tests/gpu/shared_tree.hvm4; do
  ./hvm4g $f -T4 > /tmp/cpu.txt 2>&1
  for b in hvm4g hvm4g_sort hvm4g_subimm; do
    for m in owner atomic; do
      timeout 60 ./$b $f --gpu --cpu-first=0 --dup=$m > /tmp/dev.txt 2>&1
      cmp -s /tmp/cpu.txt /tmp/dev.txt && echo "  $f $b $m: equal" || echo "  $f $b $m: DIFFERENT"
    done
  done
done
if command -v ncu > /dev/null; then
  for b in hvm4g hvm4g_sort; do
    echo "ncu $b: k_step, wide map, owner, launch 11"
    timeout 120 ncu --clock-control none -k regex:k_step -s 10 -c 1 --section SpeedOfLight --section WarpStateStats \
      --metrics 'smsp__thread_inst_executed_per_inst_executed.ratio,regex:smsp__average_warps_issue_stalled_(long_scoreboard|membar|wait)_per_issue_active\.ratio' \
      ./$b bench/gpu_wide_map.hvm4 -S --gpu --cpu-first=0 --dev-heap=4G 2>&1 | grep -E "Duration|Active Threads|Cycles Per Issued|thread_inst_executed|stalled"
  done
fi
} > $OUT/outputs_ncu.txt 2>&1
say "outputs, ncu done"
HVM4G_BIN=./hvm4g timeout 280 bash scripts/cuda_check.sh /tmp/cc > /dev/null 2>&1
cp /tmp/cc/summary.txt $OUT/cuda_check_summary.txt
grep -l -i fail /tmp/cc/res/* 2>/dev/null | head -20 > $OUT/cuda_check_failures.txt
tail -n 3 $OUT/cuda_check_summary.txt
say "done"
