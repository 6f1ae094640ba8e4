#!/usr/bin/env bash
# dev117: 72 registers (-DK_STEP_BLOCKS=28) on 29c7bb7's kernel (ENTER's
# read before the dispatch), against the default 64: device-only rates,
# two rounds interleaved. A measurement for the next session (the lead
# "72 registers, mixed" of runs 102-106); not a change.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants b28=-DK_STEP_BLOCKS=28 >> $OUT/build.txt 2>&1
say "built" >> $OUT/build.txt
rate() { timeout 30 "$@" 2>&1 | awk '/^- Device perf:/{p=$4} END{printf "%s", p}'; }
for r in 1 2; do
  for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do for m in owner atomic; do
    for b in hvm4g hvm4g_b28; do
      echo "$r $f $m $b $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
    done
  done; done
done > $OUT/rates.txt
say "rates" >> $OUT/build.txt
