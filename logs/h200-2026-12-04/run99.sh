#!/usr/bin/env bash
# dev99: the kept change (a give of a leaf's SUB is a relaxed store,
# cu_give) against the release it was (-DHVM4G_GIVE_RELEASE): device-only
# rates, two rounds; then h200_check.sh checks (cuda_check with
# compute-sanitizer, the reference's tests on CUDA in both modes) and
# default (walls: --gpu, -T16, the reference's -T16).
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants release=-DHVM4G_GIVE_RELEASE >> $OUT/build.txt 2>&1
make -s cuda-regs 2>&1 | grep k_step >> $OUT/build.txt
: # the reference built on the device machine from its clang/ sources (not in this project)
say "built" | tee -a $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
rate() { timeout 30 "$@" 2>&1 | awk '/^- Itrs:/{i=$3} /^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s %s passes %.1f ms, %s defers, %s itrs", p, n, t*1000, d, i}'; }
for r in 1 2; do
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do
  for m in owner atomic; do for b in hvm4g hvm4g_release; do
    echo "  $r $f $m $b: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
  done; done
done
done > $OUT/rates.txt
say "rates done" | tee -a $OUT/build.txt
OUT=$OUT HVM4_REF_TESTS=.ref/test HVM4_REF=$PWD/.ref/hvm4ref timeout 470 bash scripts/h200_check.sh checks default > /dev/null 2>&1
cp $OUT/cuda-check/summary.txt $OUT/cuda_check_summary.txt 2>/dev/null; grep -l -i fail $OUT/cuda-check/res/* 2>/dev/null | head -20 > $OUT/cuda_check_failures.txt
rm -rf $OUT/cuda-check
say "done" | tee -a $OUT/build.txt
