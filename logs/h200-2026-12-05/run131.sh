#!/usr/bin/env bash
# dev131 (2026-12-05 02:20): the final kernel (the lift and the case copy):
# device rate against lanes on the wide map, both modes (the curve issue 9
# asks for), and ncu --clock-control none on k_step's tenth launch (a wide
# pass) of the wide map in both modes, as run126 did before the lift.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
say "built" >> $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1   # warm up
for m in owner atomic; do
  for l in 32768 65536 131072 262144 540672 1081344 2162688; do
    run ./hvm4g bench/gpu_wide_map.hvm4 -S -s --gpu --cpu-first=0 --dup=$m --lanes=$l
  done
done > $OUT/lanes.txt 2>&1
say "lanes" >> $OUT/build.txt
for m in atomic owner; do
  timeout 120 ncu --clock-control none -k regex:k_step -s 9 -c 1 --section SpeedOfLight \
    --section Occupancy --section WarpStateStats --section LaunchStats \
    --metrics 'smsp__thread_inst_executed_per_inst_executed.ratio,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    ./hvm4g bench/gpu_wide_map.hvm4 -S --gpu --dup=$m --cpu-first=0 --dev-heap=4G > $OUT/ncu_$m.txt 2>&1
  say "ncu $m" >> $OUT/build.txt
done
