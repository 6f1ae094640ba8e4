#!/usr/bin/env bash
# dev115: ENTER and APPLY as one loop, each step's read before the
# phase's dispatch (wnf.h WNF_STEP_READ): one volatile load through either
# address on CUDA (`hvm4g`), or the two loads of before, the frame's plain
# (`hvm4g_split`, -DCU_STEP_READ_SPLIT), against a39a216's kernel (base/).
# Device-only rates, two rounds interleaved; outputs against -T16; then,
# if a build is 3% faster on the wide map in both modes, the checks of it.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
(cd base && make -j16 -s hvm4g > /dev/null 2>&1 && cp hvm4g ../hvm4g_base) &
variants split=-DCU_STEP_READ_SPLIT >> $OUT/build.txt 2>&1
wait
say "built" >> $OUT/build.txt
rate() { timeout 30 "$@" 2>&1 | awk '/^- Device perf:/{p=$4} END{printf "%s", p}'; }
BINS="hvm4g_base hvm4g hvm4g_split"
for r in 1 2; do
  for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do for m in owner atomic; do
    for b in $BINS; do
      echo "$r $f $m $b $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
    done
  done; done
done > $OUT/rates.txt
say "rates" >> $OUT/build.txt
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_shared_tree gpu_spin_tree; do
  c=$(./hvm4g bench/$f.hvm4 -T16 | md5sum | cut -c1-12)
  for m in owner atomic; do for b in hvm4g hvm4g_split; do
    g=$(./$b bench/$f.hvm4 --gpu --cpu-first=0 --dup=$m | md5sum | cut -c1-12)
    echo "$f $m $b: cpu $c gpu $g $([ $c = $g ] && echo same || echo DIFFERENT)"
  done; done
done >> $OUT/build.txt
say "outputs" >> $OUT/build.txt
wall() { timeout 30 "$@" 2>&1 | awk '/^- Perf:/{p=$3} END{printf "%s", p}'; }
for r in 1 2; do for t in "gpu_tree_map -T1" "gpu_tree_map -T16" "fib_tree -T16" "list_map -T1"; do set -- $t
  for b in hvm4g_base hvm4g; do echo "$r $1 $2 $b $(wall ./$b bench/$1.hvm4 -S -s $2)"; done
done; done > $OUT/cpu.txt
say "cpu" >> $OUT/build.txt
# the build to check: the faster on the wide map, if 3% over base in both modes
win=$(awk '$2=="gpu_wide_map"{s[$4" "$3]+=$5} END{
  b="";
  for (x in s) {}
  if (s["hvm4g owner"] >= 1.03*s["hvm4g_base owner"] && s["hvm4g atomic"] >= 1.03*s["hvm4g_base atomic"]) b="hvm4g";
  if (s["hvm4g_split owner"] >= 1.03*s["hvm4g_base owner"] && s["hvm4g_split atomic"] >= 1.03*s["hvm4g_base atomic"] &&
      (b=="" || s["hvm4g_split owner"]+s["hvm4g_split atomic"] > s["hvm4g owner"]+s["hvm4g atomic"])) b="hvm4g_split";
  print b }' $OUT/rates.txt)
say "to check: '${win}'" >> $OUT/build.txt
[ -n "$win" ] || exit 0
HVM4G_BIN=./$win bash scripts/cuda_check.sh /tmp/cc > /dev/null 2>&1
tail -n 10 /tmp/cc/summary.txt >> $OUT/build.txt
say "cuda_check" >> $OUT/build.txt
for m in owner atomic; do
  HVM4G_BIN=./$win JOBS=6 bash tests/conformance.sh .ref/test --device=cuda --dup=$m --dev-heap=1G > $OUT/conformance_$m.txt 2>&1 &
done; wait
for m in owner atomic; do say "conformance $m: $(tail -n 1 $OUT/conformance_$m.txt)" >> $OUT/build.txt; done
