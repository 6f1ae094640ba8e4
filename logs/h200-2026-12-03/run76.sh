#!/usr/bin/env bash
# dev76: 6a34edc again (the drain of run75 reverted): device-only rate
# against lanes on the wide programs, both modes; the default rates twice
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
say "built" | tee -a $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
rate() { timeout 40 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} END{printf "%s M/s %s passes %.1f ms", p, n, t*1000}'; }
{
for r in 1 2; do
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do
  for m in owner atomic; do
    echo "  $f default $m: $(rate ./hvm4g bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
  done
done
done
} > $OUT/rates.txt
say "rates done" | tee -a $OUT/build.txt
{
for f in gpu_wide_map gpu_sup_search gpu_shared_wide; do
  for l in 32768 65536 131072 262144 524288 1081344 2097152; do
    for m in owner atomic; do
      echo "  $f lanes=$l $m: $(rate ./hvm4g bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m --lanes=$l)"
    done
  done
done
} > $OUT/lanes.txt
say "done" | tee -a $OUT/build.txt
