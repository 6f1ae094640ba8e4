#!/usr/bin/env bash
# dev46: one-loop wnf_run with warp meeting variants vs base; CPU A/B
T0=$(date +%s); source scripts/h200_lib.sh
HVM4G_BASE=.ref/bins/hvm4g_base OUT=$OUT HVM4_REF_BENCH=.ref/bench timeout 480 bash scripts/h200_check.sh warp > /dev/null 2>&1
say "cpu A/B"
for i in 1 2; do for f in bench/gpu_tree_map.hvm4 bench/fib.hvm4 bench/gpu_sup_search.hvm4; do
  for b in .ref/bins/hvm4g_base ./hvm4g; do run $b $f -S -s; run $b $f -S -s -T16; done
done; done > $OUT/cpu_ab.txt 2>&1
cat $OUT/cpu_ab.txt
# The `warp` part of scripts/h200_check.sh this ran (removed after: the
# variants are not kept; src/ changes in run46_one_loop_warp.diff):
#   for v in 1 2 3; do
#     variant /tmp/h200_check_w$v -DHVM4G_WARP=$v
#     make -s cuda-regs NVFLAGS="-O3 -arch=sm_90 -Isrc -lineinfo -DHVM4G_WARP=$v" | grep 't64::k_step'
#   done
#   ab /tmp/h200_check_w1 /tmp/h200_check_w2 /tmp/h200_check_w3 .ref/bins/hvm4g_base
# (ab: each binary's outputs against ./hvm4g's, then all timed interleaved)
