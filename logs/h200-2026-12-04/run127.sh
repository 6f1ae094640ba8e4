#!/usr/bin/env bash
# dev127 (prepared 2026-12-04 21:40; no device was lent that session): the
# passes' host time, and the held slot's polls. Builds, from the tree it
# runs in (base):
#   pinv = run127_pin.diff: chunks pinned ahead only as far as the last
#          pass's time (less its own pinning) would hide them, instead of
#          one 4 MB chunk (about 1 ms of the host's) every pass;
#   new  = pinv and run127_prealloc.diff: the wide-pass frontier buffers
#          made at setup instead of doubled by the first passes (each a
#          cudaFree, which waits for the device, and a cudaMalloc);
#   bo7, bo4 = new and run127_backoff.diff with -DHVM4G_BACKOFF=7 / 4: the
#          pause before each poll of a held slot doubles up to 256 ns << S,
#          so fewer polls wait about the same 0.5 ms.
# Wide map with --trace, both modes, three rounds (base with
# --pin-ahead=0 too: no pinning, the bound; new under
# CUDA_MODULE_LOADING=EAGER: whether the first pass's 1.5 ms is the
# module's load); the other wide programs, base against new; walls; the
# backoff sweep; the base under -DLANE_CLOCK (each pass's kernel span
# beside its wall in the trace: pinning or lanes in the first passes, and
# the longest lane of atomic mode's first wide pass).
set -u
T0=$(date +%s); source scripts/h200_lib.sh
D=logs/h200-2026-12-04
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
cp hvm4g hvm4g_base
mk() {   # mk NAME DIFF...: a copy of src/ and the Makefile, patched, built
  local n=$1; shift
  rm -rf v/$n && mkdir -p v/$n && cp -r src Makefile v/$n/
  for d in "$@"; do (cd v/$n && patch -s -p1 < ../../$D/run127_$d.diff) || return 1; done
  (cd v/$n && make -j6 -s hvm4g && cp hvm4g ../../hvm4g_$n)
}
mk pinv pin >> $OUT/build.txt 2>&1 &
mk new pin prealloc >> $OUT/build.txt 2>&1 &
mk bo pin prealloc backoff >> $OUT/build.txt 2>&1 &
wait
(cd v/bo && for s in 7 4; do
   rm -f hvm4g
   make -j16 -s BUILD=build-bo$s NVFLAGS="-O3 -arch=sm_90 -Isrc -lineinfo -DHVM4G_BACKOFF=$s" hvm4g &&
   cp hvm4g ../../hvm4g_bo$s || exit 1
 done) >> $OUT/build.txt 2>&1
variants clk=-DLANE_CLOCK >> $OUT/build.txt 2>&1
ls -la hvm4g_* >> $OUT/build.txt
say "built" >> $OUT/build.txt
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1   # warm up
W=bench/gpu_wide_map.hvm4
for r in 1 2 3; do
  for m in owner atomic; do
    for b in base pinv new; do
      run ./hvm4g_$b $W -S -s --gpu --cpu-first=0 --dup=$m --trace=$OUT/trace_${b}_${m}_$r.csv
    done
    run ./hvm4g_base $W -S -s --gpu --cpu-first=0 --dup=$m --pin-ahead=0 --trace=$OUT/trace_nopin_${m}_$r.csv
    (export CUDA_MODULE_LOADING=EAGER; run ./hvm4g_new $W -S -s --gpu --cpu-first=0 --dup=$m --trace=$OUT/trace_eager_${m}_$r.csv)
  done
done > $OUT/wide_map.txt 2>&1
for m in owner atomic; do
  ./hvm4g_clk $W -S -s --gpu --cpu-first=0 --dup=$m --trace=$OUT/trace_clk_$m.csv > $OUT/clock_$m.txt 2>&1
done
say "wide map" >> $OUT/build.txt
for r in 1 2; do
  for p in gpu_sup_search gpu_shared_wide gpu_tree_map gpu_spin_tree; do
    for m in owner atomic; do
      for b in base new; do
        run ./hvm4g_$b bench/$p.hvm4 -S -s --gpu --cpu-first=0 --dup=$m
      done
    done
  done
done > $OUT/others.txt 2>&1
say "others" >> $OUT/build.txt
for r in 1 2; do
  for b in base new; do
    run ./hvm4g_$b $W -S -s --gpu
    run ./hvm4g_$b $W -S -s --gpu --cpu-first=0
  done
done > $OUT/walls.txt 2>&1
say "walls" >> $OUT/build.txt
for r in 1 2; do
  for m in atomic owner; do
    run ./hvm4g_new $W -S -s --gpu --cpu-first=0 --dup=$m
    run ./hvm4g_bo7 $W -S -s --gpu --cpu-first=0 --dup=$m --dup-wait=22
    run ./hvm4g_bo7 $W -S -s --gpu --cpu-first=0 --dup=$m --dup-wait=40
    run ./hvm4g_bo4 $W -S -s --gpu --cpu-first=0 --dup=$m --dup-wait=128
  done
done > $OUT/backoff.txt 2>&1
say "backoff" >> $OUT/build.txt
