#!/usr/bin/env bash
# dev102: the step kernel's register bound again, on the kept kernel (its
# spills grew to 104/128 B at 64 registers): 28 and 24 blocks of one
# warp a multiprocessor (-DK_STEP_BLOCKS, about 72 and 80 registers)
# against 32 (64, the default). Device-only rates, two rounds.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants b28=-DK_STEP_BLOCKS=28 b24=-DK_STEP_BLOCKS=24 >> $OUT/build.txt 2>&1
for n in 28 24; do make -s NVFLAGS="-O3 -arch=sm_90 -Isrc -lineinfo -DK_STEP_BLOCKS=$n" cuda-regs 2>&1 | grep 't64::k_step' | sed "s/^/blocks $n: /"; done >> $OUT/build.txt
say "built" >> $OUT/build.txt
rate() { timeout 30 "$@" 2>&1 | awk '/^- Itrs:/{i=$3} /^- Device: /{l=$4} /^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s %s lanes %s passes %.1f ms, %s defers, %s itrs", p, l, n, t*1000, d, i}'; }
for r in 1 2; do
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do
  for m in owner atomic; do for b in hvm4g hvm4g_b28 hvm4g_b24; do
    echo "  $r $f $m $b: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
  done; done
done
done > $OUT/rates.txt
say "done" >> $OUT/build.txt
