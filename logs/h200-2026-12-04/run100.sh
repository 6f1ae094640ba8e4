#!/usr/bin/env bash
# dev100: after run99's relaxed leaf gives, what fences are left worth:
# a SUB of a leaf stored relaxed by HEAP_ST too (APP-LAM's number
# argument; -DHVM4G_SUB_IMM_RELAXED, run50's subimm), and the no-fence
# ceiling (-DHVM4G_NOFENCE, never shipped). Device-only rates, two rounds.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants subimm=-DHVM4G_SUB_IMM_RELAXED nofence=-DHVM4G_NOFENCE >> $OUT/build.txt 2>&1
say "built" | tee -a $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
rate() { timeout 30 "$@" 2>&1 | awk '/^- Itrs:/{i=$3} /^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s %s passes %.1f ms, %s defers, %s itrs", p, n, t*1000, d, i}'; }
for r in 1 2; do
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do
  for m in owner atomic; do for b in hvm4g hvm4g_subimm hvm4g_nofence; do
    echo "  $r $f $m $b: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
  done; done
done
done > $OUT/rates.txt
say "done" | tee -a $OUT/build.txt
