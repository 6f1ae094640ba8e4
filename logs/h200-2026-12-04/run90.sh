#!/usr/bin/env bash
# dev90: the WNF stack in local memory (-DCU_LOCAL_STACK=N: interleaved
# across the warp by the hardware, written back through L1) against the
# global lane stacks; the wide-pass wait (--dup-wait, default 32) against
# none; device-only rates, two rounds interleaved; outputs against -T16.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants l256=-DCU_LOCAL_STACK=256 l2k=-DCU_LOCAL_STACK=2048 >> $OUT/build.txt 2>&1
for v in 256 2048; do make -s cuda-regs NVFLAGS="-O3 -arch=sm_90 -Isrc -lineinfo -DCU_LOCAL_STACK=$v" 2>&1 | grep t64::k_step | sed "s/^/local $v: /"; done >> $OUT/build.txt
say "built" >> $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
./hvm4g_l2k bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
rate() { timeout 30 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device stopped:/{s=$4} END{printf "%s M/s %s passes %.1f ms stopped %s", p, n, t*1000, s}'; }
for r in 1 2; do
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do
  for m in owner atomic; do
    for c in "hvm4g 0" "hvm4g 32" "hvm4g_l256 32" "hvm4g_l2k 32"; do
      set -- $c
      echo "  $r $f $m $1 wait=$2: $(rate ./$1 bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m --dup-wait=$2)"
    done
  done
done
done > $OUT/rates.txt
say "rates done" >> $OUT/build.txt
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map; do
  echo "$f T16 $(./hvm4g bench/$f.hvm4 -T16 | md5sum)"
  for m in owner atomic; do for b in hvm4g hvm4g_l256 hvm4g_l2k; do
    echo "$f $m $b $(./$b bench/$f.hvm4 --gpu --cpu-first=0 --dup=$m | md5sum)"
  done; done
done > $OUT/outputs.txt
say "done" >> $OUT/build.txt
