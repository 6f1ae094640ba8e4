#!/usr/bin/env bash
# dev56: owner mode, children inherit the escalation (A/B against the parent commit), the fixed part, pass traces
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 && cp hvm4g /tmp/hvm4g_inh
git apply -R .ref/inh.diff   # inh.diff: the change of this commit (src/gpu/lane.h) && make -j16 -s hvm4g >> $OUT/build.txt 2>&1 && cp hvm4g /tmp/hvm4g_orig
git apply .ref/inh.diff && make -j16 -s hvm4g >> $OUT/build.txt 2>&1
ST=.ref/bench/par/sup_tree.hvm4
export -f say run; export ST OUT T0
timeout 200 bash -c '{
say "owner mode: orig (children start at tries 0) / inh (children inherit tries) / atomic"
/tmp/hvm4g_inh bench/gpu_tree_map.hvm4 -S --gpu > /dev/null 2>&1
for r in 1 2; do
for f in bench/gpu_wide_map.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_sup_search.hvm4 $ST bench/gpu_tree_map.hvm4 bench/gpu_shared_tree.hvm4 bench/gpu_spin_tree.hvm4; do
  run /tmp/hvm4g_orig $f -S -s --gpu
  run /tmp/hvm4g_inh $f -S -s --gpu
  run /tmp/hvm4g_inh $f -S -s --gpu --dup=atomic
done; done
say done
} > $OUT/ab56.txt 2>&1'
for b in orig inh; do /tmp/hvm4g_$b bench/gpu_shared_wide.hvm4 -S -s --gpu --trace=$OUT/trace_sw_$b.csv | grep -E "Device (passes|deferrals|owner|time)" > $OUT/trace_sw_$b.txt; done
./hvm4g bench/gpu_shared_wide.hvm4 -S --gpu --dup=atomic --trace=$OUT/trace_sw_atomic.csv > /dev/null
OUT=$OUT timeout 100 bash scripts/h200_check.sh fixed > /dev/null 2>&1; mv $OUT/h200_check.txt $OUT/fixed56.txt
cat $OUT/ab56.txt
