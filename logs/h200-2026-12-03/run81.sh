#!/usr/bin/env bash
# dev81: the narrow rule by work and by rate (pass.c) on CUDA:
# dup_chain_built in the configurations that crawled in run80, then
# cuda_check (the tight phase included, compute-sanitizer); then two
# measurement builds against the default: the frontier sorted by tag and
# heap block (-DHVM4G_SORT_LOC), all of L1/shared as L1 (-DHVM4G_MAX_L1)
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
say "built" >> $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
P=tests/golden/dup_chain_built.hvm4
{
for cfg in "tight:--dup=owner --lanes=256 --region-shift=8 --budget=64" \
           "lanes256:--dup=owner --lanes=256" "lanes256A:--dup=atomic --lanes=256" \
           "region8:--dup=owner --lanes=256 --region-shift=8" "owner:--dup=owner"; do
  name=${cfg%%:*}; args=${cfg#*:}
  for i in 1 2 3; do
    s=$(date +%s%N)
    o=$(timeout 25 ./hvm4g $P -S -G --device=cuda -T1 --dev-heap=1G $args -s 2>&1); rc=$?
    e=$(date +%s%N)
    echo "$name $i rc=$rc wall=$(( (e - s) / 1000000 )) ms | $(echo "$o" | grep -E 'Device passes|Device time|Device stopped' | tr '\n' ' ')"
  done
done
} > $OUT/dup_chain.txt 2>&1
say "dup_chain done" >> $OUT/build.txt
rate() { timeout 30 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device stopped:/{s=$4} END{printf "%s M/s %s passes %.1f ms stopped %s", p, n, t*1000, s}'; }
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do
  for m in owner atomic; do
    echo "  $f $m: $(rate ./hvm4g bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)" >> $OUT/rates.txt
  done
done
say "rates done" >> $OUT/build.txt
HVM4G_BIN=./hvm4g timeout 300 bash scripts/cuda_check.sh /tmp/cc > /dev/null 2>&1
cp /tmp/cc/summary.txt $OUT/cuda_check_summary.txt
say "cuda_check done" >> $OUT/build.txt
variants sortloc=-DHVM4G_SORT_LOC l1=-DHVM4G_MAX_L1 >> $OUT/build.txt 2>&1
ls -la hvm4g_sortloc hvm4g_l1 >> $OUT/build.txt 2>&1
say "variants built" >> $OUT/build.txt
for r in 1 2; do
for f in gpu_wide_map gpu_shared_wide gpu_sup_search gpu_tree_map; do
  for m in owner atomic; do
    for b in hvm4g hvm4g_sortloc hvm4g_l1; do
      echo "  $f $m $b: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
    done
  done
done
done > $OUT/ab.txt
say "done" >> $OUT/build.txt
