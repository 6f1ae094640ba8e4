#!/usr/bin/env bash
# dev106 (on 7c35627 + two measurement flags): a DP0/DP1 taking its slot
# with its first access in wide passes (-DLANE_TAKE_FIRST: an exchange,
# not a load then an exchange), and the first K frames of the WNF stack in
# shared memory (-DCU_SH_FRAMES=K: APPLY's pop was 9-11% of k_step's
# stall samples, run104), each at 64 and 72 registers; device-only rates,
# two rounds; outputs against -T16 (md5).
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants b28=-DK_STEP_BLOCKS=28 tf=-DLANE_TAKE_FIRST tf_b28="-DLANE_TAKE_FIRST -DK_STEP_BLOCKS=28" \
  sh8=-DCU_SH_FRAMES=8 sh8_b28="-DCU_SH_FRAMES=8 -DK_STEP_BLOCKS=28" sh16=-DCU_SH_FRAMES=16 \
  tfsh8_b28="-DLANE_TAKE_FIRST -DCU_SH_FRAMES=8 -DK_STEP_BLOCKS=28" >> $OUT/build.txt 2>&1
say "built" >> $OUT/build.txt
BINS="hvm4g hvm4g_b28 hvm4g_tf hvm4g_tf_b28 hvm4g_sh8 hvm4g_sh8_b28 hvm4g_sh16 hvm4g_tfsh8_b28"
rate() { timeout 30 "$@" 2>&1 | awk '/^- Itrs:/{i=$3} /^- Device: /{l=$4} /^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s %s lanes %s passes %.1f ms, %s defers, %s itrs", p, l, n, t*1000, d, i}'; }
for r in 1 2; do
  for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map; do for m in owner atomic; do for b in $BINS; do
    echo "  $r $f $m $b: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
  done; done; done
done > $OUT/rates.txt
say "rates" >> $OUT/build.txt
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map; do
  c=$(./hvm4g bench/$f.hvm4 -T16 | md5sum | cut -c1-12)
  for b in hvm4g_tf_b28 hvm4g_sh8_b28 hvm4g_tfsh8_b28; do for m in owner atomic; do
    g=$(./$b bench/$f.hvm4 --gpu --cpu-first=0 --dup=$m | md5sum | cut -c1-12)
    echo "$f $b $m: $([ $c = $g ] && echo same || echo DIFFERENT cpu $c gpu $g)"
  done; done
done >> $OUT/build.txt
say "outputs" >> $OUT/build.txt
