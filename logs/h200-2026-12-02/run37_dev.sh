#!/bin/bash
# run37: final tree: h200_check checks + rates (with -T16 and the reference) + ncu
set -u
(cd .ref/clang && cc -O2 -w -o ../hvm4ref main.c -lpthread) || echo "ref build failed"
OUT=$OUT HVM4_REF=.ref/hvm4ref HVM4_REF_TESTS=.ref/test HVM4_REF_BENCH=.ref/bench bash scripts/h200_check.sh checks rates ncu
