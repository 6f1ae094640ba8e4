#!/usr/bin/env bash
# dev104: (1) ncu source counters of wide passes of the wide map (atomic,
# the 10th launch; owner, the 11th: run103 profiled the 9th, a narrow
# pass with sparks), with the kernel's SASS and line table (nvdisasm -g)
# to put stalls on source lines; (2) the stuck-mark word read with the
# DUP slot (-DLANE_STUCK_EARLY) against after it, at 64 and 72 registers.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants early=-DLANE_STUCK_EARLY b28=-DK_STEP_BLOCKS=28 early_b28="-DLANE_STUCK_EARLY -DK_STEP_BLOCKS=28" >> $OUT/build.txt 2>&1
nvcc -O3 -arch=sm_90 -Isrc -lineinfo -cubin -o /tmp/k.cubin src/gpu/cuda.cu >> $OUT/build.txt 2>&1
nvdisasm -g -c /tmp/k.cubin 2>&1 | gzip > $OUT/k_step_sass_lines.txt.gz
say "built" >> $OUT/build.txt
BINS="hvm4g hvm4g_early hvm4g_b28 hvm4g_early_b28"
rate() { timeout 30 "$@" 2>&1 | awk '/^- Itrs:/{i=$3} /^- Device: /{l=$4} /^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s %s lanes %s passes %.1f ms, %s defers, %s itrs", p, l, n, t*1000, d, i}'; }
for r in 1 2; do
  for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do for m in owner atomic; do for b in $BINS; do
    echo "  $r $f $m $b: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
  done; done; done
done > $OUT/rates.txt
say "rates" >> $OUT/build.txt
for ms in atomic:9 owner:10; do
  m=${ms%:*}; s=${ms#*:}
  ncu --clock-control none -k regex:k_step -s $s -c 1 --section SourceCounters --section SpeedOfLight \
    --section WarpStateStats --section Occupancy --section LaunchStats --import-source yes -f -o /tmp/src_$m ./hvm4g bench/gpu_wide_map.hvm4 -S --gpu \
    --dup=$m --cpu-first=0 > $OUT/ncu_${m}_run.txt 2>&1
  ncu -i /tmp/src_$m.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > $OUT/ncu_${m}_sass.csv.gz
  ncu -i /tmp/src_$m.ncu-rep --page details > $OUT/ncu_${m}_details.txt 2>&1
  say "ncu $m" >> $OUT/build.txt
done
./hvm4g bench/gpu_wide_map.hvm4 -S --gpu --cpu-first=0 --dup=atomic --trace $OUT/trace_atomic.csv > /dev/null 2>&1
./hvm4g bench/gpu_wide_map.hvm4 -S --gpu --cpu-first=0 --dup=owner --trace $OUT/trace_owner.csv > /dev/null 2>&1
say "traces" >> $OUT/build.txt
