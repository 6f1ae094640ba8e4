#!/usr/bin/env bash
# dev91: device sparks' gap (--gpu-spark-gap 0 = none, 64 = the default,
# 256, 1024) and the narrow passes' budget (pass.c NARROW_BUDGET 128 and
# 512 against 256), each on the defaults otherwise (--dup-wait=32);
# device-only rates, two rounds interleaved.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
link=$(make -s -n -B hvm4g | tail -n 1)
for nb in 128 512; do
  ( make -s BUILD=build-nb$nb CFLAGS="-O2 -g -DNARROW_BUDGET=$nb" build-nb$nb/src/gpu/pass.o &&
    c=${link/-o hvm4g /-o hvm4g_nb$nb } && eval "${c/build\/src\/gpu\/pass.o/build-nb$nb/src/gpu/pass.o}" ) >> $OUT/build.txt 2>&1 &
done; wait
say "built" >> $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
rate() { timeout 30 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s %s passes %s defers %.1f ms", p, n, d, t*1000}'; }
for r in 1 2; do
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do
  for m in owner atomic; do
    for c in "hvm4g 64" "hvm4g 0" "hvm4g 256" "hvm4g 1024" "hvm4g_nb128 64" "hvm4g_nb512 64"; do
      set -- $c
      echo "  $r $f $m $1 gap=$2: $(rate ./$1 bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m --gpu-spark-gap=$2)"
    done
  done
done
done > $OUT/rates.txt
say "done" >> $OUT/build.txt
