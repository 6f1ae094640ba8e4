#!/usr/bin/env bash
# dev112: on top of run111's ENTER read (base/: that tree), a DUP's body
# read with it (loc + 1), and APPLY reading a SUP's second side before its
# dispatch (wnf.h s1, passed to wnf_bin_sup_l/r). Device-only rates, three
# rounds interleaved; the CPU (-T1, -T16); outputs against -T16 (md5).
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
(cd base && make -j16 -s -B hvm4g) >> $OUT/build.txt 2>&1 && cp base/hvm4g hvm4g_base
say "built" >> $OUT/build.txt
rate() { timeout 30 "$@" 2>&1 | awk '/^- Itrs:/{i=$3} /^- Device: /{l=$4} /^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Perf:/{q=$3} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s device, %s M/s wall, %s passes %.1f ms, %s defers, %s itrs", p, q, n, t*1000, d, i}'; }
for r in 1 2 3; do
  for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do for m in owner atomic; do
    for b in hvm4g_base hvm4g; do
      echo "  $r $f $m $b: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
    done
  done; done
done > $OUT/rates.txt
say "rates" >> $OUT/build.txt
for r in 1 2 3; do
  for f in gpu_tree_map gpu_wide_map fib_tree list_map; do for t in 1 16; do for b in hvm4g_base hvm4g; do
    [ $t = 1 ] && [ $f = gpu_wide_map ] && continue
    echo "  $r $f T$t $b: $(rate ./$b bench/$f.hvm4 -S -s -T$t)"
  done; done; done
done > $OUT/cpu.txt
say "cpu" >> $OUT/build.txt
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_shared_tree gpu_spin_tree; do
  c=$(./hvm4g bench/$f.hvm4 -T16 | md5sum | cut -c1-12)
  for m in owner atomic; do
    g=$(./hvm4g bench/$f.hvm4 --gpu --cpu-first=0 --dup=$m | md5sum | cut -c1-12)
    echo "$f $m: cpu $c gpu $g $([ $c = $g ] && echo same || echo DIFFERENT)"
  done
done >> $OUT/build.txt
say "outputs" >> $OUT/build.txt
