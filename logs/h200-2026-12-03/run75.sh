#!/usr/bin/env bash
# dev75: lanes that take back their own children in wide passes (--drain=1)
# against --drain=0; with budgets 2048 / 8192 beside the default 4096;
# outputs of --drain=1 against -T4's; a pass trace each
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants bal=-DLANE_BALANCE keep1=-DDRAIN_KEEP=1 >> $OUT/build.txt 2>&1
make -s cuda-regs 2>&1 | grep -E "k_step" >> $OUT/build.txt
say "built" | tee -a $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
rate() { timeout 40 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Lane balance:/{b=$4} END{printf "%s M/s %s passes %.1f ms %s", p, n, t*1000, b}'; }
P="gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree gpu_shared_tree"
{
for r in 1 2; do
for f in $P; do
  for m in owner atomic; do
    for d in 0 1; do
      echo "  $f drain=$d $m: $(rate ./hvm4g bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m --drain=$d)"
    done
    echo "  $f keep1 $m: $(rate ./hvm4g_keep1 bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
  done
done
done
} > $OUT/rates.txt
say "rates done" | tee -a $OUT/build.txt
{
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map; do
  for b in 1024 2048 8192 16384; do
    echo "  $f drain=1 budget=$b owner: $(rate ./hvm4g bench/$f.hvm4 -S -s --gpu --cpu-first=0 --budget=$b)"
  done
  for d in 0 1; do
    echo "  $f balance drain=$d owner: $(rate ./hvm4g_bal bench/$f.hvm4 -S -s --gpu --cpu-first=0 --drain=$d)"
  done
done
} > $OUT/budget_balance.txt
say "budgets done" | tee -a $OUT/build.txt
for f in gpu_wide_map gpu_sup_search; do
  for d in 0 1; do
    timeout 40 ./hvm4g bench/$f.hvm4 -S --gpu --cpu-first=0 --drain=$d --trace=$OUT/trace_${f}_drain$d.csv > /dev/null 2>&1
  done
done
{
for f in bench/gpu_tree_map.hvm4 bench/gpu_shared_tree.hvm4 .ref/bench/par/sup_tree.hvm4 tests/gpu/wide_tree.hvm4 tests/gpu/shared_tree.hvm4 bench/gpu_sup_search.hvm4; do
  timeout 60 ./hvm4g $f -T4 > /tmp/cpu.txt 2>&1
  for m in owner atomic; do
    timeout 60 ./hvm4g $f --gpu --cpu-first=0 --dup=$m --drain=1 > /tmp/dev.txt 2>&1
    cmp -s /tmp/cpu.txt /tmp/dev.txt && echo "  $f $m: equal" || echo "  $f $m: DIFFERENT"
  done
done
} > $OUT/outputs.txt 2>&1
say "outputs done" | tee -a $OUT/build.txt
HVM4G_BIN=./hvm4g timeout 250 bash scripts/cuda_check.sh /tmp/cc > /dev/null 2>&1
cp /tmp/cc/summary.txt $OUT/cuda_check_summary.txt
grep -l -i fail /tmp/cc/res/* 2>/dev/null | head -20 >> $OUT/outputs.txt
say "cuda_check done" | tee -a $OUT/build.txt
[ $(( $(date +%s) - T0 )) -lt 470 ] && for m in owner atomic; do
  HVM4G_BIN=./hvm4g JOBS=5 timeout 60 bash tests/conformance.sh .ref/test --device=cuda --dup=$m --dev-heap=1G > /tmp/conf_$m.txt 2>&1
  echo "conformance $m: $(tail -n 1 /tmp/conf_$m.txt)" >> $OUT/build.txt
  grep -v '^\[PASS\]' /tmp/conf_$m.txt | grep '^\[' | head >> $OUT/build.txt
done
say "done" | tee -a $OUT/build.txt
