#!/usr/bin/env bash
# dev105: the stuck bitmap read only once the run has a claim (SEEN_ANY,
# lane.h) against the read at every take (-DLANE_STUCK_ALWAYS, as before),
# at 64 and 72 registers (-DK_STEP_BLOCKS=28); device-only rates, two
# rounds; outputs of the new default against -T16 (md5).
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants always=-DLANE_STUCK_ALWAYS b28=-DK_STEP_BLOCKS=28 always_b28="-DLANE_STUCK_ALWAYS -DK_STEP_BLOCKS=28" >> $OUT/build.txt 2>&1
say "built" >> $OUT/build.txt
BINS="hvm4g_always hvm4g hvm4g_always_b28 hvm4g_b28"
rate() { timeout 30 "$@" 2>&1 | awk '/^- Itrs:/{i=$3} /^- Device: /{l=$4} /^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s %s lanes %s passes %.1f ms, %s defers, %s itrs", p, l, n, t*1000, d, i}'; }
for r in 1 2; do
  for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do for m in owner atomic; do for b in $BINS; do
    echo "  $r $f $m $b: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
  done; done; done
done > $OUT/rates.txt
say "rates" >> $OUT/build.txt
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map; do
  c=$(./hvm4g bench/$f.hvm4 -T16 | md5sum | cut -c1-12)
  for b in hvm4g hvm4g_b28; do for m in owner atomic; do
    g=$(./$b bench/$f.hvm4 --gpu --cpu-first=0 --dup=$m | md5sum | cut -c1-12)
    echo "$f $b $m: cpu $c gpu $g $([ $c = $g ] && echo same || echo DIFFERENT)"
  done; done
done >> $OUT/build.txt
for f in tests/golden/dup_chain_built.hvm4 tests/golden/dup_stuck_chain.hvm4 tests/golden/dup_chain_stuck_app.hvm4; do
  for m in owner atomic; do echo "$f $m: $(/usr/bin/time -f '%e s' ./hvm4g $f -S --gpu --cpu-first=0 --dup=$m -s 2>&1 | grep -E '^- (Itrs|Device perf)|s$' | tr '\n' ' ')"; done
done >> $OUT/build.txt
say "outputs" >> $OUT/build.txt
