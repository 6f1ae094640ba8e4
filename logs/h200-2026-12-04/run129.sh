#!/usr/bin/env bash
# dev129 (prepared 2026-12-04; run after run128.sh): the checks on the
# kernel with the OP2 lift: scripts/cuda_check.sh with compute-sanitizer
# (memcheck, racecheck) and the reference's tests on CUDA in both DUP
# modes (scripts/h200_check.sh checks; HVM4_REF_TESTS=.ref/test, carried).
set -u
H=/tmp/h
HVM4_REF_TESTS=.ref/test OUT=$H bash scripts/h200_check.sh checks > /dev/null 2>&1
cp $H/h200_check.txt $OUT/checks.txt
cp $H/cuda-check/summary.txt $OUT/cuda_check_summary.txt
cp $H/conformance_owner.txt $H/conformance_atomic.txt $OUT/
