#!/usr/bin/env bash
# dev68: cuda_check's heap_again, fixed (its outputs were -S's: the count only), in both modes; the long map with --gpu on the final code
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
sed 's/@loop(18, x)/@loop(72, x)/; s/@gen(21, 0)/@gen(12, 0)/' bench/gpu_wide_map.hvm4 > /tmp/lm12.hvm4
want=$(./hvm4g /tmp/lm12.hvm4 -T4 2>&1 | md5sum)
for m in owner atomic; do for l in 128 4096; do for h in 8M 12M; do
  got=$(./hvm4g /tmp/lm12.hvm4 -G --device=cuda -T1 --dev-heap=$h --lanes=$l --dup=$m -s 2>&1)
  echo "$m lanes=$l dev-heap=$h: $(printf '%s\n' "$got" | grep -E '^- Device (runs|stopped)' | tr '\n' ' ') $([ "$(printf '%s\n' "$got" | grep -v '^- ' | md5sum)" = "$want" ] && echo same || echo DIFFERS) $(printf '%s\n' "$got" | grep '^hvm4g' | head -2)"
done; done; done
say "long map --gpu"
sed 's/@loop(18, x)/@loop(72, x)/' bench/gpu_wide_map.hvm4 > /tmp/long_map.hvm4
run ./hvm4g /tmp/long_map.hvm4 -S -s --gpu
say "done"
