#!/usr/bin/env bash
# dev61: where the start over's time goes (full -s), a pool of 15 against 16, and a longer wide map (leaf loop 72: 4x the interactions)
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1
sed 's/@loop(18, x)/@loop(72, x)/' bench/gpu_wide_map.hvm4 > $OUT/long_map.hvm4
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
for r in 1 2; do
  for a in "--gpu" "--gpu -T15" "--gpu --warm-after=0"; do
    for f in bench/gpu_wide_map.hvm4 bench/gpu_shared_wide.hvm4; do
      echo "== $f $a" >> $OUT/full.txt
      /usr/bin/time -f "wall %e s" ./hvm4g $f -S -s $a 2>&1 | grep -v "Itrs\[" >> $OUT/full.txt
    done
  done
done
say "long map"
for r in 1 2; do
  run ./hvm4g $OUT/long_map.hvm4 -S -s --gpu
  run ./hvm4g $OUT/long_map.hvm4 -S -s --gpu -T15
  run ./hvm4g $OUT/long_map.hvm4 -S -s --gpu --restart=0
  run ./hvm4g $OUT/long_map.hvm4 -S -s --gpu --cpu-first=0
  run ./hvm4g $OUT/long_map.hvm4 -S -s -T16
done
grep -E "^==|Device setup|started over|Device time|wall|not used" $OUT/full.txt
