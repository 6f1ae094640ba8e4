#!/bin/bash
# run41a: checks on the new tree (t64/t32 step kernels, pipelined copy out,
# default device heap = host's): cuda_check (sanitizer), --take=32 on CUDA,
# the reference's tests both modes, memcheck on multi-piece copy outs.
set -u
exec > >(tee "$OUT/run41a.txt") 2>&1
T0=$(date +%s); say() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
say "run41a $(git log -1 --format=%h)"
make -j16 -s hvm4g 2>&1 | tail -3
make -s cuda-regs 2>&1 | grep -E "k_step|k_copy"
HVM4G_BIN=./hvm4g bash scripts/cuda_check.sh "$OUT/cuda-check" > /dev/null 2>&1
tail -n 9 "$OUT/cuda-check/summary.txt"; say "cuda_check done"
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | head -n1)
for ma in "owner --pin-ahead=2M" "atomic"; do
  set -- $ma; m=$1
  f=.ref/bench/par/sup_tree.hvm4
  timeout 120 $SAN --tool memcheck --error-exitcode 99 ./hvm4g $f -S -s --gpu --dup=$ma --cpu-first=0 --dev-heap=2G --lanes=65536 > "$OUT/san_$m.log" 2>&1
  echo "memcheck $ma sup_tree: rc $? $(grep -E 'ERROR SUMMARY' "$OUT/san_$m.log") $(grep -E 'Device copy out|Itrs' "$OUT/san_$m.log" | tr '\n' ' ')"
done
say "memcheck done"
CPU_BIN=./hvm4g DEVICE="--device=cuda --take=32 --dev-heap=1G" JOBS=5 TEST_TIMEOUT=60 timeout 170 bash tests/metal/check.sh ./hvm4g > "$OUT/take32.txt" 2>&1
echo "take32 on cuda: rc $? $(tail -n 1 $OUT/take32.txt)"; grep -i fail "$OUT/take32.txt" | head -5
say "take32 done"
for m in owner atomic; do
  HVM4G_BIN=./hvm4g JOBS=5 bash tests/conformance.sh .ref/test --device=cuda --dup=$m --dev-heap=1G > "$OUT/conf_$m.txt" 2>&1
  say "conformance $m: $(tail -n 1 $OUT/conf_$m.txt)"; grep '^\[FAIL' $OUT/conf_$m.txt | head
done
