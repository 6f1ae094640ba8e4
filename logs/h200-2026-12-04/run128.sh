#!/usr/bin/env bash
# dev128 (prepared 2026-12-04 22:10; no device was lent that session): a
# SUP lifted through a run of OP2 frames whose right operands are numbers
# at once (wnf.h, committed with this script): 3 stores a level instead of
# 5 and no load back of the SUP each level made. On the simulator the wide
# map at depth 14 did 27% fewer heap loads and stores (13.5M + 15.9M ->
# 10.8M + 10.7M for 6.6M interactions) and the tree map allocated 41%
# fewer words (211M -> 125M). k_step: 64 registers, 104/128 B spilled,
# as before (make cuda-regs). base = this tree with run128_lift.diff taken
# back; ahead = this tree with run128_ahead.diff (each level reads the
# next frame and its number before its own stores: volatile accesses keep
# their order, so read after them the number's round trip follows the
# stores'; also 64 registers, 104/128 B). Device-only rates of the five
# wide programs, both modes, two rounds, base, new and ahead; wide map walls (new --gpu, --cpu-first=0,
# -T16, base -T16, the reference -T16 when HVM4_REF is set); interaction
# counts against the reference's. Then run129.sh: the checks.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
D=logs/h200-2026-12-04
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
cp hvm4g hvm4g_new
rm -rf v && mkdir -p v/base v/ahead && cp -r src Makefile scripts v/base/ && cp -r src Makefile scripts v/ahead/
(cd v/base && patch -s -R -p1 < ../../$D/run128_lift.diff && make -j8 -s hvm4g && cp hvm4g ../../hvm4g_base) >> $OUT/build.txt 2>&1 &
(cd v/ahead && patch -s -p1 < ../../$D/run128_ahead.diff && make -j8 -s hvm4g && cp hvm4g ../../hvm4g_ahead) >> $OUT/build.txt 2>&1 &
wait
[ -x hvm4g_base ] && [ -x hvm4g_ahead ] || { cat $OUT/build.txt; exit 1; }
for t in . v/base v/ahead; do (cd $t && make -s cuda-regs 2>&1 | grep k_step | sed "s|^|$t |"); done >> $OUT/build.txt
say "built" >> $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1   # warm up
for r in 1 2; do
  for p in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do
    for m in owner atomic; do
      for b in base new ahead; do
        run ./hvm4g_$b bench/$p.hvm4 -S -s --gpu --cpu-first=0 --dup=$m
      done
    done
  done
done > $OUT/rates.txt 2>&1
say "rates" >> $OUT/build.txt
W=bench/gpu_wide_map.hvm4
for r in 1 2 3; do
  run ./hvm4g_new $W -S -s --gpu
  run ./hvm4g_new $W -S -s --gpu --cpu-first=0
  run ./hvm4g_new $W -S -s -T16
  run ./hvm4g_base $W -S -s -T16
  [ -n "${HVM4_REF:-}" ] && run "$HVM4_REF" $W -S -T16
done > $OUT/walls.txt 2>&1
say "walls" >> $OUT/build.txt
itrs() { timeout 60 "$@" 2>&1 | awk '/^- Itrs:/{print $3; exit}'; }
for f in bench/gpu_wide_map.hvm4 bench/gpu_sup_search.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_tree_map.hvm4; do
  echo "$f: ref $([ -n "${HVM4_REF:-}" ] && itrs $HVM4_REF $f -S -s -T16) cpu $(itrs ./hvm4g $f -S -s -T16) owner $(itrs ./hvm4g $f -S -s --gpu --cpu-first=0 --dup=owner) atomic $(itrs ./hvm4g $f -S -s --gpu --cpu-first=0 --dup=atomic)"
done > $OUT/counts.txt 2>&1
say "counts" >> $OUT/build.txt
