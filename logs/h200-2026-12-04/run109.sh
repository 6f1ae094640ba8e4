#!/usr/bin/env bash
# dev109: the pass queue (lane.h): children pushed in a wide pass go to one
# queue that lanes done with their own entries take from. Against HEAD's
# kernel (base/, built from `git archive 7dd0114`), the new kernel with no
# queue (HVM4G_QUEUE=0: its code shape only), and 1, 4 (default), 16 slots
# a lane; device-only rates, two rounds; outputs against -T16 (md5).
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
(cd base && make -j16 -s hvm4g) >> $OUT/build.txt 2>&1 && cp base/hvm4g hvm4g_base
say "built" >> $OUT/build.txt
rate() { timeout 30 "$@" 2>&1 | awk '/^- Itrs:/{i=$3} /^- Device: /{l=$4} /^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s %s lanes %s passes %.1f ms, %s defers, %s itrs", p, l, n, t*1000, d, i}'; }
for r in 1 2; do
  for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do for m in owner atomic; do
    A="bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m"
    echo "  $r $f $m base: $(rate ./hvm4g_base $A)"
    for q in 0 1 4 16; do echo "  $r $f $m q$q: $(rate env HVM4G_QUEUE=$q ./hvm4g $A)"; done
  done; done
done > $OUT/rates.txt
say "rates" >> $OUT/build.txt
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_shared_tree gpu_spin_tree; do
  p=bench/$f.hvm4
  c=$(./hvm4g $p -T16 | md5sum | cut -c1-12)
  for m in owner atomic; do for q in 1 4; do
    g=$(HVM4G_QUEUE=$q ./hvm4g $p --gpu --cpu-first=0 --dup=$m | md5sum | cut -c1-12)
    echo "$f q$q $m: cpu $c gpu $g $([ $c = $g ] && echo same || echo DIFFERENT)"
  done; done
done >> $OUT/build.txt
say "outputs" >> $OUT/build.txt
