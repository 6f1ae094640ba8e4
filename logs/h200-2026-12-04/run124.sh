#!/usr/bin/env bash
# dev124: the kept kernel (numbers cloned at once, 2048 polls):
# bench/run.sh GPU=1 THREADS=16 on the wide programs, the reference in the
# same run; then the wide map's walls, three rounds: --gpu, --gpu
# --cpu-first=0, -T16, the reference -T16. Expects HVM4_REF (built on the
# device machine by the call's command, never by this project).
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
say "built" >> $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1   # warm up
THREADS=16 GPU=1 DEVICE=cuda TIMEOUT=30 bash bench/run.sh bench/gpu_wide_map.hvm4 bench/gpu_sup_search.hvm4 \
  bench/gpu_shared_wide.hvm4 bench/gpu_tree_map.hvm4 bench/gpu_spin_tree.hvm4 > $OUT/bench_run.txt 2>&1
say "bench" >> $OUT/build.txt
for r in 1 2 3; do
  run ./hvm4g bench/gpu_wide_map.hvm4 -S -s --gpu
  run ./hvm4g bench/gpu_wide_map.hvm4 -S -s --gpu --cpu-first=0
  run ./hvm4g bench/gpu_wide_map.hvm4 -S -s -T16
  run "$HVM4_REF" bench/gpu_wide_map.hvm4 -S -T16
done > $OUT/walls.txt 2>&1
say "walls" >> $OUT/build.txt
