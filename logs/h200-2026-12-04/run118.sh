#!/usr/bin/env bash
# dev118: a chain of DUP slots read ahead (wnf.h, ENTER's DP0/DP1 case:
# the word of the slot a taken expression names is loaded beside the
# take, not after it). Against HEAD's kernel (base/, `git archive
# 9a1809f`): device-only rates, two rounds interleaved; the CPU (-T1,
# -T16) on the same binaries; outputs against -T16 (md5); then, if the
# wide map gains 2% in both modes, compute-sanitizer (cuda_check.sh's 32
# runs) and the reference's tests on CUDA in both modes.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
(cd base && make -j16 -s hvm4g > /dev/null 2>&1 && cp hvm4g ../hvm4g_base) &
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
wait
say "built" >> $OUT/build.txt
rate() { timeout 30 "$@" 2>&1 | awk '/^- Itrs:/{i=$3} /^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Perf:/{q=$3} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s device, %s M/s wall, %s passes %.1f ms, %s defers, %s itrs", p, q, n, t*1000, d, i}'; }
for r in 1 2; do
  for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do for m in owner atomic; do
    for b in hvm4g_base hvm4g; do
      echo "  $r $f $m $b: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
    done
  done; done
done > $OUT/rates.txt
say "rates" >> $OUT/build.txt
for r in 1 2; do
  for f in gpu_tree_map gpu_wide_map fib_tree; do for t in 1 16; do for b in hvm4g_base hvm4g; do
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
ok=$(awk '$2=="gpu_wide_map"{b=$4; sub(":","",b); s[b" "$3]+=$5} END{
  print (s["hvm4g owner"] >= 1.02*s["hvm4g_base owner"] && s["hvm4g atomic"] >= 1.02*s["hvm4g_base atomic"]) ? "yes" : "no" }' $OUT/rates.txt)
say "check: $ok" >> $OUT/build.txt
[ "$ok" = yes ] || exit 0
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | head -n1)
for p in wide_tree shared_tree church_nc gnf_log list_spine pack_gnf_shared pack_stop_passes cpu_first_sparks; do
  for tool in memcheck racecheck; do for dup in owner atomic; do echo "$p $tool $dup"; done; done
done | xargs -P 8 -L 1 bash -c 'cd tests/gpu && if timeout -k 5 150 '"$SAN"' --tool $1 --error-exitcode 99 ../../hvm4g $0.hvm4 -G --device=cuda -T1 --dup=$2 --dev-heap=1G --lanes=512 --stack=1024 > /tmp/san-$0-$1-$2.log 2>&1 && grep -q "ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards" /tmp/san-$0-$1-$2.log; then echo "pass $0 $1 $2"; else echo "FAIL $0 $1 $2"; fi' > $OUT/sanitizer.txt
say "sanitizer: $(grep -c ^pass $OUT/sanitizer.txt) passed, $(grep -c ^FAIL $OUT/sanitizer.txt) failed" >> $OUT/build.txt
for m in owner atomic; do
  HVM4G_BIN=./hvm4g JOBS=6 bash tests/conformance.sh .ref/test --device=cuda --dup=$m --dev-heap=1G > $OUT/conformance_$m.txt 2>&1 &
done; wait
for m in owner atomic; do say "conformance $m: $(tail -n 1 $OUT/conformance_$m.txt)" >> $OUT/build.txt; done
