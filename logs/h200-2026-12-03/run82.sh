#!/usr/bin/env bash
# dev82: cuda_check's heap_again with --handoff=0 (run81: the slow-pass
# rule handed its 128-lane run to the CPU before the heap filled), then
# cuda_check on the final code
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
say "built" >> $OUT/build.txt
sed 's/@loop(18, x)/@loop(72, x)/; s/@gen(21, 0)/@gen(12, 0)/' bench/gpu_wide_map.hvm4 > /tmp/long_map.hvm4
for h in "" "--handoff=0"; do
  echo "== heap_again $h" >> $OUT/heap_again.txt
  timeout 30 ./hvm4g /tmp/long_map.hvm4 -G --device=cuda -T1 --dev-heap=8M --lanes=128 $h -s 2>&1 | grep -E "Device runs|Device passes|Device stopped|Device time|Device perf" >> $OUT/heap_again.txt
done
say "heap_again done" >> $OUT/build.txt
HVM4G_BIN=./hvm4g timeout 240 bash scripts/cuda_check.sh /tmp/cc > /dev/null 2>&1
cp /tmp/cc/summary.txt $OUT/cuda_check_summary.txt
say "done" >> $OUT/build.txt
