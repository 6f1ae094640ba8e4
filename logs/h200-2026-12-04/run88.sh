#!/usr/bin/env bash
# dev88: waiting for a held DUP slot (--dup-wait, wnf.h HEAP_WAIT) against
# deferring at once (--dup-wait=0), and -DHVM4G_HEAP_GLOBAL (every heap
# access as global space, LDG/STG); traces of the wide map per pass;
# device-only rates, two rounds interleaved; outputs against -T16.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants glob=-DHVM4G_HEAP_GLOBAL ns64=-DWAIT_NS=64 ns1k=-DWAIT_NS=1024 >> $OUT/build.txt 2>&1
make -s cuda-regs 2>&1 | grep k_step >> $OUT/build.txt
say "built" >> $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
for m in owner atomic; do for w in 0 32; do
  ./hvm4g bench/gpu_wide_map.hvm4 -S --gpu --cpu-first=0 --dup=$m --dup-wait=$w --trace /tmp/t.csv > /dev/null 2>&1
  echo "== wide_map $m wait=$w"; cat /tmp/t.csv
done; done > $OUT/traces.txt
say "traces" >> $OUT/build.txt
rate() { timeout 30 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s %s passes %s defers %.1f ms", p, n, d, t*1000}'; }
for r in 1 2; do
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do
  for m in owner atomic; do
    for v in "hvm4g 0" "hvm4g 8" "hvm4g 32" "hvm4g 128" "hvm4g 512" "hvm4g_ns64 32" "hvm4g_ns64 128" "hvm4g_ns1k 32" "hvm4g_glob 0" "hvm4g_glob 32"; do
      set -- $v
      echo "  $r $f $m $1 wait=$2: $(rate ./$1 bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m --dup-wait=$2)"
    done
  done
done
done > $OUT/rates.txt
say "rates done" >> $OUT/build.txt
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map; do
  echo "$f T16 $(./hvm4g bench/$f.hvm4 -T16 | md5sum)"
  for m in owner atomic; do for w in 0 32 512; do
    echo "$f $m wait=$w $(./hvm4g bench/$f.hvm4 --gpu --cpu-first=0 --dup=$m --dup-wait=$w | md5sum)"
  done; done
done > $OUT/outputs.txt
say "done" >> $OUT/build.txt
