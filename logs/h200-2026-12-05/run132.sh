#!/usr/bin/env bash
# dev132 (2026-12-05 02:17, run as the call's command, kept here): the
# final kernel through bench/run.sh on the wide programs, the reference in
# the same run (HVM4_REF built on the device machine by the call).
#   cc -O2 -o .ref/hvm4ref .ref/clang/main.c -lpthread -lm && export HVM4_REF=$PWD/.ref/hvm4ref
set -u
make -j16 -s hvm4g > /dev/null 2>&1
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1   # warm up
THREADS=16 GPU=1 DEVICE=cuda TIMEOUT=30 bash bench/run.sh bench/gpu_wide_map.hvm4 bench/gpu_sup_search.hvm4 \
  bench/gpu_shared_wide.hvm4 bench/gpu_tree_map.hvm4 bench/gpu_spin_tree.hvm4 > $OUT/bench_run.txt 2>&1
