#!/usr/bin/env bash
# dev55: the checks on the current code: cuda_check (sanitizer included), the reference's tests on CUDA in both modes
OUT=$OUT HVM4_REF_TESTS=.ref/test timeout 560 bash scripts/h200_check.sh checks > /dev/null 2>&1
cp -r $OUT/cuda-check/summary.txt $OUT/cuda_check_summary.txt 2>/dev/null
tail -n 30 $OUT/h200_check.txt
