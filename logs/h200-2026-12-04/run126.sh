#!/usr/bin/env bash
# dev126: where the kept kernel's wide pass waits (numbers cloned at once,
# 2048 polls): ncu --clock-control none on k_step's tenth launch (a wide
# pass) of the wide map, atomic then owner: issue-stall reasons, threads a
# warp instruction, occupancy.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
say "built" >> $OUT/build.txt
for m in atomic owner; do
  timeout 120 ncu --clock-control none -k regex:k_step -s 9 -c 1 --section SpeedOfLight \
    --section Occupancy --section WarpStateStats --section LaunchStats \
    --metrics 'smsp__thread_inst_executed_per_inst_executed.ratio,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    ./hvm4g bench/gpu_wide_map.hvm4 -S --gpu --dup=$m --cpu-first=0 --dev-heap=4G > $OUT/ncu_$m.txt 2>&1
  say "ncu $m" >> $OUT/build.txt
done
