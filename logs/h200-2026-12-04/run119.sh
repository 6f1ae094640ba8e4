#!/usr/bin/env bash
# dev119: the frontier sorted by the tag of the term at each entry and
# then by the tag of the word at its location (-DHVM4G_SORT_HEAD: an
# application's function, a variable's binder, a DUP slot), so that
# entries that start the same rule but lead to different work (a map's
# node against a leaf's loop, both applications) fall in different warps.
# Against the tag alone (./hvm4g): device-only rates, two rounds
# interleaved; outputs against -T16 (md5).
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants sorthead=-DHVM4G_SORT_HEAD >> $OUT/build.txt 2>&1
say "built" >> $OUT/build.txt
rate() { timeout 30 "$@" 2>&1 | awk '/^- Itrs:/{i=$3} /^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} /^- Lane balance:/{b=$4} END{printf "%s M/s device, %s passes %.1f ms, %s defers, %s itrs", p, n, t*1000, d, i}'; }
for r in 1 2; do
  for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree gpu_shared_tree; do for m in owner atomic; do
    for b in hvm4g hvm4g_sorthead; do
      echo "  $r $f $m $b: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
    done
  done; done
done > $OUT/rates.txt
say "rates" >> $OUT/build.txt
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_shared_tree gpu_spin_tree; do
  c=$(./hvm4g bench/$f.hvm4 -T16 | md5sum | cut -c1-12)
  for m in owner atomic; do
    g=$(./hvm4g_sorthead bench/$f.hvm4 --gpu --cpu-first=0 --dup=$m | md5sum | cut -c1-12)
    echo "$f $m: cpu $c gpu $g $([ $c = $g ] && echo same || echo DIFFERENT)"
  done
done >> $OUT/build.txt
say "outputs" >> $OUT/build.txt
