#!/usr/bin/env bash
# dev70: where a pass's time goes (-DLANE_CLOCK, per pass) and the ordering
# ceilings (relaxed takes, weak heap loads, no fences, relaxed number SUBs)
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants clock=-DLANE_CLOCK takerel=-DHVM4G_TAKE_RELAXED weakld=-DHVM4G_WEAK_LD \
  nofence=-DHVM4G_NOFENCE subimm=-DHVM4G_SUB_IMM_RELAXED >> $OUT/build.txt 2>&1
ls hvm4g_* ; say "built"
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
for b in clock; do
  for f in gpu_wide_map gpu_spin_tree gpu_tree_map; do
    for bud in 4096 1024; do
      say "clock $f budget $bud"
      timeout 60 ./hvm4g_clock bench/$f.hvm4 -S -s --gpu --cpu-first=0 --budget=$bud --trace=$OUT/trace_${f}_$bud.csv 2>&1 | grep -E "Lane clock|Device (time|perf|passes)"
    done
  done
done
say "narrow budget only below lanes/F (HVM4G_NARROW_FRAC), clock build, owner then atomic"
for fr in 1 8 4 2; do
  for f in gpu_wide_map gpu_tree_map gpu_sup_search gpu_spin_tree gpu_shared_wide; do
    for m in owner atomic; do
      echo "  F=$fr $f $m: $(HVM4G_NARROW_FRAC=$fr timeout 60 ./hvm4g bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} END{printf "%s M/s %s passes %.1f ms", p, n, t*1000}')"
    done
  done
done
HVM4G_NARROW_FRAC=8 timeout 60 ./hvm4g_clock bench/gpu_wide_map.hvm4 -S -s --gpu --cpu-first=0 --trace=$OUT/trace_wide_frac8.csv 2>&1 | grep -E "Lane clock|Device (time|perf|passes)"
say "rates"
rate() { timeout 60 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} END{printf "%s M/s %s passes %.1f ms", p, n, t*1000}'; }
for r in 1 2; do
  for f in gpu_wide_map gpu_spin_tree gpu_tree_map gpu_sup_search gpu_shared_wide; do
    for b in hvm4g hvm4g_takerel hvm4g_weakld hvm4g_nofence hvm4g_subimm; do
      for m in owner atomic; do
        [ $m = atomic ] && [ $b = hvm4g_subimm ] && continue
        echo "  $f $b $m: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
      done
    done
  done
done
say "outputs (tree map, shared tree, sup_tree; each binary against -T4)"
for f in bench/gpu_tree_map.hvm4 bench/gpu_shared_tree.hvm4 .ref/bench/par/sup_tree.hvm4; do
  ./hvm4g $f -T4 > /tmp/cpu.txt 2>&1
  for b in hvm4g hvm4g_takerel hvm4g_weakld hvm4g_nofence; do
    for m in owner atomic; do
      timeout 60 ./$b $f --gpu --cpu-first=0 --dup=$m > /tmp/dev.txt 2>&1
      cmp -s /tmp/cpu.txt /tmp/dev.txt && echo "  $f $b $m: equal" || echo "  $f $b $m: DIFFERENT"
    done
  done
done
if command -v ncu > /dev/null; then
  for fr in 1 8; do
    say "ncu: k_step, wide map, owner, launch 11, F=$fr"
    HVM4G_NARROW_FRAC=$fr timeout 120 ncu --clock-control none -k regex:k_step -s 10 -c 1 --section SpeedOfLight \
      --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
      --metrics 'smsp__thread_inst_executed_per_inst_executed.ratio,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
      ./hvm4g bench/gpu_wide_map.hvm4 -S --gpu --cpu-first=0 --dev-heap=4G > "$OUT/ncu_f$fr.txt" 2>&1
    grep -E "Duration|Throughput|Occupancy|Active Threads|Cycles Per Issued|thread_inst_executed|Hit Rate" "$OUT/ncu_f$fr.txt" | head -24
  done
fi
say "done"
