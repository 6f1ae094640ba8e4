#!/usr/bin/env bash
# dev123: the checks on the kernel that clones numbers at once (and waits
# 2048 polls): cuda_check.sh with compute-sanitizer (memcheck, racecheck),
# the reference's tests on CUDA in both modes; then the interaction counts
# of hvm4g (-T16, device owner/atomic) against the reference's, on the new
# golden program and the wide programs. Expects HVM4_REF (built on the
# device machine by the call's command, never by this project).
set -u
H=/tmp/h
HVM4_REF_TESTS=.ref/test OUT=$H bash scripts/h200_check.sh checks > /dev/null 2>&1
cp $H/h200_check.txt $OUT/checks.txt
cp $H/cuda-check/summary.txt $OUT/cuda_check_summary.txt
cp $H/conformance_owner.txt $H/conformance_atomic.txt $OUT/
itrs() { timeout 60 "$@" 2>&1 | awk '/^- Itrs:/{print $3; exit}'; }
for f in tests/golden/clone_num.hvm4 bench/gpu_wide_map.hvm4 bench/gpu_sup_search.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_tree_map.hvm4 bench/gpu_shared_tree.hvm4; do
  echo "$f: ref $(itrs $HVM4_REF $f -S -s -T16) cpu $(itrs ./hvm4g $f -S -s -T16) owner $(itrs ./hvm4g $f -S -s --gpu --cpu-first=0 --dup=owner) atomic $(itrs ./hvm4g $f -S -s --gpu --cpu-first=0 --dup=atomic)"
done > $OUT/counts.txt 2>&1
