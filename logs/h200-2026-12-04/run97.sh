#!/usr/bin/env bash
# dev97: run96 again after its fixes (a chain followed only through raw DP0/DP1 words; a SUB at the top only one slot up, by compare-and-swap; the exchanges stop at a word that leads nowhere): DUP-NOD of a leaf without taking its slot
# one relaxed exchange a slot, up a chain of clones) against the take as
# it was (-DHVM4G_NO_LEAF_DUP), and with leaf SUBs given back relaxed
# (-DHVM4G_GIVE_LEAF_RELAXED); device-only rates, two rounds interleaved;
# then the reference's tests on CUDA in both modes (default build).
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants noleaf=-DHVM4G_NO_LEAF_DUP giveleaf=-DHVM4G_GIVE_LEAF_RELAXED >> $OUT/build.txt 2>&1
make -s cuda-regs 2>&1 | grep k_step >> $OUT/build.txt
say "built" | tee -a $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
rate() { timeout 30 "$@" 2>&1 | awk '/^- Itrs:/{i=$3} /^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} /^- Device deferrals:/{d=$4} END{printf "%s M/s %s passes %.1f ms, %s defers, %s itrs", p, n, t*1000, d, i}'; }
for r in 1 2; do
for f in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do
  for m in owner atomic; do for b in hvm4g hvm4g_noleaf hvm4g_giveleaf; do
    echo "  $r $f $m $b: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
  done; done
done
done > $OUT/rates.txt
say "rates done" | tee -a $OUT/build.txt
for f in gpu_tree_map gpu_sup_search gpu_shared_wide; do
  want=$(./hvm4g bench/$f.hvm4 -T16 | md5sum)
  for m in owner atomic; do for b in hvm4g hvm4g_giveleaf; do
    got=$(timeout 60 ./$b bench/$f.hvm4 --gpu --cpu-first=0 --dup=$m | md5sum)
    [ "$got" = "$want" ] && echo "same $f $m $b" || echo "DIFFERS $f $m $b"
  done; done
done >> $OUT/build.txt
say "outputs done" | tee -a $OUT/build.txt
for m in owner atomic; do
  JOBS=8 timeout 100 bash tests/conformance.sh .ref/test --device=cuda --dup=$m --dev-heap=1G 2>&1 | tail -n 2 | sed "s/^/$m: /"
  JOBS=8 timeout 100 bash tests/conformance.sh .ref/test --device=cuda --dup=$m --lanes=64 --dup-wait=4096 --dev-heap=1G 2>&1 | tail -n 2 | sed "s/^/wait $m: /"
done >> $OUT/build.txt
say "done" | tee -a $OUT/build.txt
