#!/usr/bin/env bash
# dev59: --gpu alone (pool of every core, then the device; starting over past --take-max) against --restart=0, --cpu-first=0, -T16 and the reference's -T16
set -u
T0=$(date +%s)
: # the reference binary .ref/hvm4ref was built on that machine from its own sources, outside this repository (the build line is not kept here)
.ref/hvm4ref bench/gpu_tree_map.hvm4 -S -T16 > /dev/null 2>&1
OUT=$OUT/h200 HVM4_REF=.ref/hvm4ref HVM4_REF_BENCH=.ref/bench timeout 530 bash scripts/h200_check.sh default > /dev/null 2>&1
cut -c1-330 $OUT/h200/h200_check.txt
