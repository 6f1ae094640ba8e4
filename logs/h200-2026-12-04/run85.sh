#!/usr/bin/env bash
# dev85: the heap's base and heap accesses (cuda.cu): -DHVM4G_HEAP_AT (the
# base from constant memory inside each address's computation: no reload
# from the lane's frame after every heap store), -DHVM4G_HEAP_ASM (plain
# heap accesses as ld.relaxed.gpu.global / st.global asm in place of
# volatile generic ones at system scope), and both; rates two rounds
# interleaved, then cuda_check (compute-sanitizer included) on both.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants at=-DHVM4G_HEAP_AT asm=-DHVM4G_HEAP_ASM atasm="-DHVM4G_HEAP_AT -DHVM4G_HEAP_ASM" >> $OUT/build.txt 2>&1
for v in at asm atasm; do make -s cuda-regs NVFLAGS="-O3 -arch=sm_90 -Isrc -lineinfo $([ $v = at ] && echo -DHVM4G_HEAP_AT; [ $v = asm ] && echo -DHVM4G_HEAP_ASM; [ $v = atasm ] && echo -DHVM4G_HEAP_AT -DHVM4G_HEAP_ASM)" 2>&1 | grep t64::k_step | sed "s/^/$v /"; done >> $OUT/build.txt
say "built" >> $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
rate() { timeout 30 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} END{printf "%s M/s %s passes %.1f ms", p, n, t*1000}'; }
for r in 1 2; do
for f in gpu_wide_map gpu_shared_wide gpu_sup_search gpu_tree_map gpu_spin_tree; do
  for m in owner atomic; do
    for b in hvm4g hvm4g_at hvm4g_asm hvm4g_atasm; do
      echo "  $r $f $m $b: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
    done
  done
done
done > $OUT/rates.txt
say "rates done" >> $OUT/build.txt
for f in gpu_wide_map gpu_sup_search gpu_shared_wide; do
  for b in hvm4g hvm4g_atasm; do
    echo "$f $b $(./$b bench/$f.hvm4 --gpu --cpu-first=0 --dup=atomic | md5sum)"
  done
done > $OUT/outputs.txt
HVM4G_BIN=./hvm4g_atasm timeout 300 bash scripts/cuda_check.sh /tmp/cc > /dev/null 2>&1
cp /tmp/cc/summary.txt $OUT/cuda_check_atasm.txt
say "done" >> $OUT/build.txt
