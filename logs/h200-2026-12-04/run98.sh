#!/usr/bin/env bash
# dev98: run97's leaf DUP-NOD lost 6-24% on the maps (its walk up the
# chain loads before it takes). Which part pays: a leaf in the slot itself
# only (LEAF_HOPS=0: no load more than before), one slot up (1), the full
# walk (32, the build as committed); each with leaf SUBs given back
# relaxed (-DHVM4G_GIVE_LEAF_RELAXED), and that alone on the take as it
# was. Device-only rates, two rounds.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants noleaf=-DHVM4G_NO_LEAF_DUP give=-DHVM4G_NO_LEAF_DUP\ -DHVM4G_GIVE_LEAF_RELAXED \
  h0=-DLEAF_HOPS=0 h0give=-DLEAF_HOPS=0\ -DHVM4G_GIVE_LEAF_RELAXED \
  h1give=-DLEAF_HOPS=1\ -DHVM4G_GIVE_LEAF_RELAXED >> $OUT/build.txt 2>&1
ls hvm4g_* >> $OUT/build.txt
say "built" | tee -a $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
rate() { timeout 30 "$@" 2>&1 | awk '/^- Itrs:/{i=$3} /^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s %s passes %.1f ms, %s defers, %s itrs", p, n, t*1000, d, i}'; }
for r in 1 2; do
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do
  for m in owner atomic; do for b in hvm4g_noleaf hvm4g_give hvm4g_h0 hvm4g_h0give hvm4g_h1give; do
    echo "  $r $f $m $b: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
  done; done
done
done > $OUT/rates.txt
say "done" | tee -a $OUT/build.txt
