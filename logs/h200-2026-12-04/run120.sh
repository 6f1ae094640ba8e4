#!/usr/bin/env bash
# dev120: a clone of a number made at once (wnf.h, WNF_CLONE_NOW: OP2-SUP,
# OP2-NUM-SUP and APP-SUP put a number operand into both copies and count
# the DUP-NOD its slot would have cost, instead of a DUP slot each copy
# reads through), and `fields` (-DWNF_CLONE_FIELDS) the same for a copied
# node's number fields (DUP-SUP of other labels, DUP-NOD of a node).
# Against HEAD's kernel (base/, `git archive 9a1809f`): device-only rates
# and walls, two rounds interleaved; the CPU (-T1, -T16) on the same
# binaries; outputs against the old -T16 (md5).
set -u
T0=$(date +%s); source scripts/h200_lib.sh
(cd base && make -j16 -s hvm4g > /dev/null 2>&1 && cp hvm4g ../hvm4g_base) &
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants fields=-DWNF_CLONE_FIELDS >> $OUT/build.txt 2>&1
wait
say "built" >> $OUT/build.txt
rate() { timeout 30 "$@" 2>&1 | awk '/^- Itrs:/{i=$3} /^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Time:/{q=$3} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s device, %.3f s wall, %s passes %.1f ms, %s defers, %s itrs", p, q, n, t*1000, d, i}'; }
for r in 1 2; do
  for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree gpu_shared_tree; do for m in owner atomic; do
    for b in hvm4g_base hvm4g hvm4g_fields; do
      echo "  $r $f $m $b: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
    done
  done; done
done > $OUT/rates.txt
say "rates" >> $OUT/build.txt
for r in 1 2; do
  for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map fib_tree; do for t in 1 16; do for b in hvm4g_base hvm4g; do
    [ $t = 1 ] && [ $f != gpu_tree_map ] && [ $f != fib_tree ] && continue
    echo "  $r $f T$t $b: $(rate ./$b bench/$f.hvm4 -S -s -T$t)"
  done; done; done
  for f in gpu_wide_map gpu_sup_search gpu_shared_wide; do for b in hvm4g_base hvm4g; do
    echo "  $r $f gpu-default $b: $(rate ./$b bench/$f.hvm4 -S -s --gpu)"
  done; done
done > $OUT/cpu.txt
say "cpu" >> $OUT/build.txt
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_shared_tree gpu_spin_tree; do
  c=$(./hvm4g_base bench/$f.hvm4 -T16 | md5sum | cut -c1-12)
  for m in owner atomic; do for b in hvm4g hvm4g_fields; do
    g=$(./$b bench/$f.hvm4 --gpu --cpu-first=0 --dup=$m | md5sum | cut -c1-12)
    echo "$f $m $b: cpu $c gpu $g $([ $c = $g ] && echo same || echo DIFFERENT)"
  done; done
  g=$(./hvm4g bench/$f.hvm4 -T16 | md5sum | cut -c1-12)
  echo "$f -T16 new: $g $([ $c = $g ] && echo same || echo DIFFERENT)"
done >> $OUT/build.txt
say "outputs" >> $OUT/build.txt
