#!/usr/bin/env bash
# dev83: stragglers yield (lane.h): device-only rates with --yield=N
# (lanes of a warp done before the rest stop) and --yield-gap against the
# default (no yield), both modes, the five wide programs, two rounds
# interleaved; a few with more lanes or a longer budget beside a yield.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/build.txt
make -j16 -s hvm4g >> $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
make -s cuda-regs 2>&1 | grep k_step >> $OUT/build.txt
say "built" >> $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
rate() { timeout 30 "$@" 2>&1 | awk '/^- Itrs:/{i=$3} /^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device stopped:/{s=$4} END{printf "%s M/s %s passes %.1f ms itrs %s stopped %s", p, n, t*1000, i, s}'; }
for r in 1 2; do
for f in gpu_wide_map gpu_shared_wide gpu_sup_search gpu_tree_map gpu_spin_tree; do
  for m in owner atomic; do
    for cfg in "--yield=0" "--yield=16" "--yield=24" "--yield=28" "--yield=31" \
               "--yield=24 --yield-gap=256" "--yield=24 --yield-gap=16" \
               "--yield=24 --lanes=2162688" "--yield=24 --budget=16384"; do
      echo "  $r $f $m $cfg: $(rate ./hvm4g bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m $cfg)"
    done
  done
done
say "round $r" >> $OUT/build.txt
done > $OUT/rates.txt
say "done" >> $OUT/build.txt
