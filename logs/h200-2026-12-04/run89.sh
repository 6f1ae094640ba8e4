#!/usr/bin/env bash
# dev89: waits for a held DUP slot apart for wide and narrow passes
# (--dup-wait, --dup-wait-narrow) and owner mode taking atomically in
# narrow passes (--narrow-atomic=1); device-only rates, two rounds
# interleaved; traces of the wide map; outputs against -T16.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
say "built" >> $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
CF=("A --dup-wait=0 --dup-wait-narrow=0" "B --dup-wait=32 --dup-wait-narrow=0"
    "C --dup-wait=0 --dup-wait-narrow=256" "D --dup-wait=0 --dup-wait-narrow=1024"
    "E --dup-wait=0 --dup-wait-narrow=4096" "F --dup-wait=16 --dup-wait-narrow=1024"
    "G --narrow-atomic=1 --dup-wait=0 --dup-wait-narrow=0" "H --narrow-atomic=1 --dup-wait=16 --dup-wait-narrow=1024")
for m in owner atomic; do for c in A D H; do
  set -- ${CF[$(printf '%d' "'$c")-65]}; shift
  ./hvm4g bench/gpu_wide_map.hvm4 -S --gpu --cpu-first=0 --dup=$m "$@" --trace /tmp/t.csv > /dev/null 2>&1
  echo "== wide_map $m $c"; grep step /tmp/t.csv
done; done > $OUT/traces.txt
say "traces" >> $OUT/build.txt
rate() { timeout 30 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s %s passes %s defers %.1f ms", p, n, d, t*1000}'; }
for r in 1 2; do
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do
  for m in owner atomic; do
    for c in "${CF[@]}"; do
      set -- $c; k=$1; shift
      [ $m = atomic ] && [[ $k == G || $k == H ]] && continue
      echo "  $r $f $m $k: $(rate ./hvm4g bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m "$@")"
    done
  done
done
done > $OUT/rates.txt
say "rates done" >> $OUT/build.txt
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map; do
  echo "$f T16 $(./hvm4g bench/$f.hvm4 -T16 | md5sum)"
  for m in owner atomic; do
    echo "$f $m H $(./hvm4g bench/$f.hvm4 --gpu --cpu-first=0 --dup=$m --narrow-atomic=1 --dup-wait=16 --dup-wait-narrow=1024 | md5sum)"
  done
done > $OUT/outputs.txt
say "done" >> $OUT/build.txt
