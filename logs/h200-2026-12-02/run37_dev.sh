#!/bin/bash
# run37: final tree: h200_check checks + rates (with -T16 and the reference) + ncu
set -u
: # the reference binary .ref/hvm4ref was built on that machine from its own sources, outside this repository (the build line is not kept here)
OUT=$OUT HVM4_REF=.ref/hvm4ref HVM4_REF_TESTS=.ref/test HVM4_REF_BENCH=.ref/bench bash scripts/h200_check.sh checks rates ncu
