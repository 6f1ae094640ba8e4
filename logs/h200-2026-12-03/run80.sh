#!/usr/bin/env bash
# dev80: dup_chain_built in cuda_check's tight phase after the narrow-by-work fix (its
# passes traced), and the pass budget against the device rate
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
say "built" >> $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
mkdir -p /tmp/tr
P=tests/golden/dup_chain_built.hvm4
{
for cfg in "tight:--dup=owner --lanes=256 --region-shift=8 --budget=64" \
           "tightA:--dup=atomic --lanes=256 --region-shift=8 --budget=64" \
           "owner:--dup=owner" "lanes256:--dup=owner --lanes=256" \
           "budget64:--dup=owner --budget=64" "region8:--dup=owner --lanes=256 --region-shift=8"; do
  name=${cfg%%:*}; args=${cfg#*:}
  for i in 1 2 3 4; do
    s=$(date +%s.%N)
    o=$(timeout 25 ./hvm4g $P -S -G --device=cuda -T1 --dev-heap=1G $args -s --trace /tmp/tr/${name}_$i.csv 2>&1); rc=$?
    e=$(date +%s.%N)
    echo "$name $i rc=$rc wall=$(echo "$e - $s" | bc) | $(echo "$o" | grep -E 'Device passes|Device widest|Device stopped|Itrs:' | tr '\n' ' ')"
  done
done
} > $OUT/dup_chain.txt 2>&1
( cd /tmp/tr && tar czf $OUT/dup_chain_traces.tar.gz . )
say "dup_chain done" >> $OUT/build.txt
rate() { timeout 30 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} END{printf "%s M/s %s passes %.1f ms", p, n, t*1000}'; }
{
for r in 1 2; do
for f in gpu_wide_map gpu_shared_wide gpu_sup_search gpu_tree_map; do
  for m in owner atomic; do
    for b in 1024 4096 16384; do
      echo "  $f $m budget $b: $(rate ./hvm4g bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m --budget=$b)"
    done
  done
done
done
} > $OUT/budget.txt
say "done" >> $OUT/build.txt
