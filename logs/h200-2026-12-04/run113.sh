#!/usr/bin/env bash
# dev113: the checks on db76afb's kernel (ENTER's read before the
# dispatch): cuda_check.sh with compute-sanitizer, the reference's tests
# on CUDA in both modes; then the wide map's stalls by source line (atomic,
# launch 10: a wide pass).
set -u
H=/tmp/h
HVM4_REF_TESTS=.ref/test OUT=$H bash scripts/h200_check.sh checks > /dev/null 2>&1
cp $H/h200_check.txt $OUT/checks.txt
NCUSRC_PROGS=gpu_wide_map NCUSRC_SKIP=9 OUT=$H bash scripts/h200_check.sh ncusrc > /dev/null 2>&1
cp $H/h200_check.txt $OUT/ncusrc.txt
cp $H/cuda-check/summary.txt $OUT/cuda_check_summary.txt
cp $H/conformance_owner.txt $H/conformance_atomic.txt $OUT/
