#!/usr/bin/env bash
# dev50: subimm A/B, sup_tree's packing kernels, source counters on the wide map
OUT=$OUT HVM4_REF_BENCH=.ref/bench NCUSRC_PROGS=gpu_wide_map timeout 560 bash scripts/h200_check.sh subimm packk ncusrc > /dev/null 2>&1
rm -f $OUT/*.ncu-rep
ls -la $OUT
