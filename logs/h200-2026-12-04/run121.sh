#!/usr/bin/env bash
# dev121: why the wide map's atomic mode lost 8% with numbers cloned at
# once (run120) while every other program gained: --dup-wait and
# --budget swept on the new kernel, atomic; per-pass traces of the wide
# map, base (HEAD) and new, both modes.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
(cd base && make -j16 -s hvm4g > /dev/null 2>&1 && cp hvm4g ../hvm4g_base) &
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
wait
say "built" >> $OUT/build.txt
rate() { timeout 30 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s device, %s passes %.1f ms, %s defers", p, n, t*1000, d}'; }
for r in 1 2; do
  for x in "--dup-wait=0" "--dup-wait=32" "--dup-wait=128" "--dup-wait=512" "--dup-wait=2048" "--budget=1024" "--budget=16384" "--narrow-share=4" "--arena=512"; do
    echo "  $r atomic $x: $(rate ./hvm4g bench/gpu_wide_map.hvm4 -S -s --gpu --cpu-first=0 --dup=atomic $x)"
  done
  for x in "--dup-wait=0" "--dup-wait=128"; do
    echo "  $r owner $x: $(rate ./hvm4g bench/gpu_wide_map.hvm4 -S -s --gpu --cpu-first=0 --dup=owner $x)"
  done
done > $OUT/sweep.txt
say "sweep" >> $OUT/build.txt
for b in hvm4g_base hvm4g; do for m in owner atomic; do
  ./$b bench/gpu_wide_map.hvm4 -S -s --gpu --cpu-first=0 --dup=$m --trace $OUT/trace_${b}_$m.csv > /dev/null 2>&1
done; done
say "traces" >> $OUT/build.txt
