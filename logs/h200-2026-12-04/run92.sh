#!/usr/bin/env bash
# dev92: device sparks only in passes whose frontier leaves lanes idle
# (pass.c -DSPARK_SHARE=F: offers in a pass of n entries only when
# n * F < lanes; 2 = the narrow passes, 16) against sparks in every pass
# (the default then) and a gap of 1024; the wide programs and fib_tree
# (256 strict recursions: width only from sparks), device from the start
# and --handoff=0 (fib_tree stays on the device); two rounds interleaved.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
link=$(make -s -n -B hvm4g | tail -n 1)
for s in 2 16; do
  ( make -s BUILD=build-ss$s CFLAGS="-O2 -g -DSPARK_SHARE=$s" build-ss$s/src/gpu/pass.o &&
    c=${link/-o hvm4g /-o hvm4g_ss$s } && eval "${c/build\/src\/gpu\/pass.o/build-ss$s/src/gpu/pass.o}" ) >> $OUT/build.txt 2>&1 &
done; wait
say "built" >> $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
rate() { timeout 30 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device widest/{w=$5} END{printf "%s M/s %s passes widest %s %.1f ms", p, n, w, t*1000}'; }
for r in 1 2; do
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree fib_tree; do
  for m in owner atomic; do
    for c in "hvm4g 64" "hvm4g 1024" "hvm4g_ss2 64" "hvm4g_ss16 64"; do
      set -- $c
      echo "  $r $f $m $1 gap=$2: $(rate ./$1 bench/$f.hvm4 -S -s --gpu --cpu-first=0 --handoff=0 --dup=$m --gpu-spark-gap=$2)"
    done
  done
done
done > $OUT/rates.txt
say "done" >> $OUT/build.txt
