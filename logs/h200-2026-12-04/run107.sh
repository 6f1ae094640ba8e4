#!/usr/bin/env bash
# dev107 (7c35627, SEEN_ANY kept): h200_check.sh checks (cuda_check under
# compute-sanitizer memcheck and racecheck, the reference's tests on CUDA
# in both DUP modes), then bench/run.sh GPU=1 THREADS=16 on the wide
# programs: the reference -T16, hvm4g -T16, the device in both modes.
# Expects HVM4_REF (the reference, built on the device machine from its
# clang/ sources by the call's command, never by this project).
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
make -s cuda-regs 2>&1 | grep k_step >> $OUT/build.txt
say "built" >> $OUT/build.txt
mkdir -p $OUT/more
OUT=$OUT/more HVM4_REF_TESTS=.ref/test timeout 420 bash scripts/h200_check.sh checks > /dev/null 2>&1
cp $OUT/more/cuda-check/summary.txt $OUT/cuda_check_summary.txt 2>/dev/null
grep -l -i fail $OUT/more/cuda-check/res/* 2>/dev/null | head -20 > $OUT/cuda_check_failures.txt
cp $OUT/more/h200_check.txt $OUT/h200_check.txt
say "checks" >> $OUT/build.txt
THREADS=16 GPU=1 DEVICE=cuda TIMEOUT=30 bash bench/run.sh bench/gpu_wide_map.hvm4 bench/gpu_sup_search.hvm4 \
  bench/gpu_shared_wide.hvm4 bench/gpu_tree_map.hvm4 bench/gpu_spin_tree.hvm4 > $OUT/bench_run.txt 2>&1
say "bench" >> $OUT/build.txt
rm -rf $OUT/more/cuda-check; tar czf $OUT/more.tgz -C $OUT more; rm -rf $OUT/more
