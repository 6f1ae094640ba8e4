#!/usr/bin/env bash
# dev130 (prepared 2026-12-05 01:00; no device was lent that session):
# calls to a definition that is a match copy only the case they take
# (wnf.h F_MREF, parse.c match spans; run130_case.diff is that change),
# on top of the OP2 lift (run128_lift.diff, 2026-12-04), neither measured
# on the H200 yet. Three builds: base = neither (both diffs taken back),
# nocase = the lift alone, new = this tree. On the simulator the case copy
# cut the words allocated by 7% (wide map), 6% (tree map), 17% (shared
# wide) and 37% (spin tree); k_step went from 104/128 B spilled to
# 140/148 B (64 registers), so the device may not gain what the words
# say. Device-only rates of the five wide programs, both modes, two
# rounds; wide map walls (new --gpu, --cpu-first=0, -T16; nocase and base
# -T16; the reference's -T16 when HVM4_REF is set); interaction counts
# against the reference's. off = this tree's CUDA backend built with
# -DWNF_CASE_COPY=0: the same kernel code (and spills) with every call
# copying the whole match, so new/off is what the fewer words give and
# off/nocase what the new code costs. Supersedes run128.sh (its "ahead"
# variant is left for later). Then run129.sh (logs/h200-2026-12-04).
set -u
T0=$(date +%s); source scripts/h200_lib.sh
D=logs/h200-2026-12-05
D4=logs/h200-2026-12-04
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
cp hvm4g hvm4g_new
rm -rf v && mkdir -p v/nocase v/base
for b in nocase base; do cp -r src Makefile scripts v/$b/; done
(cd v/nocase && patch -s -R -p1 < ../../$D/run130_case.diff &&
   make -j8 -s hvm4g && cp hvm4g ../../hvm4g_nocase) >> $OUT/build.txt 2>&1 &
(cd v/base && patch -s -R -p1 < ../../$D/run130_case.diff &&
   patch -s -R -p1 < ../../$D4/run128_lift.diff &&
   make -j8 -s hvm4g && cp hvm4g ../../hvm4g_base) >> $OUT/build.txt 2>&1 &
wait
variants off=-DWNF_CASE_COPY=0 >> $OUT/build.txt 2>&1
[ -x hvm4g_base ] && [ -x hvm4g_nocase ] && [ -x hvm4g_off ] || { cat $OUT/build.txt; exit 1; }
for t in . v/nocase v/base; do (cd $t && make -s cuda-regs 2>&1 | grep k_step | sed "s|^|$t |"); done >> $OUT/build.txt
say "built" >> $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1   # warm up
for r in 1 2; do
  for p in gpu_wide_map gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do
    for m in owner atomic; do
      for b in base nocase off new; do
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
  run ./hvm4g_nocase $W -S -s -T16
  run ./hvm4g_base $W -S -s -T16
  [ -n "${HVM4_REF:-}" ] && run "$HVM4_REF" $W -S -T16
done > $OUT/walls.txt 2>&1
say "walls" >> $OUT/build.txt
itrs() { timeout 60 "$@" 2>&1 | awk '/^- Itrs:/{print $3; exit}'; }
for f in bench/gpu_wide_map.hvm4 bench/gpu_sup_search.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_tree_map.hvm4 bench/gpu_spin_tree.hvm4; do
  echo "$f: ref $([ -n "${HVM4_REF:-}" ] && itrs $HVM4_REF $f -S -s -T16) cpu $(itrs ./hvm4g $f -S -s -T16) owner $(itrs ./hvm4g $f -S -s --gpu --cpu-first=0 --dup=owner) atomic $(itrs ./hvm4g $f -S -s --gpu --cpu-first=0 --dup=atomic)"
done > $OUT/counts.txt 2>&1
say "counts" >> $OUT/build.txt
