#!/bin/bash
# run42: cuda_check with the cuda-gnf phase (pin_release before the copy
# in); the old binary on the new test; copy out in 8 pieces (>= 8 MB)
# against 16 (>= 4 MB).
set -u
exec > >(tee "$OUT/run42.txt") 2>&1
T0=$(date +%s); say() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
make -j16 -s hvm4g 2>&1 | tail -3
for b in .ref/bins/old ./hvm4g; do
  echo "== $b pack_gnf_twice_big --device=cuda:"; (cd tests/gpu && ../../$b pack_gnf_twice_big.hvm4 --device=cuda -s 2>&1 | grep -E "^\[|hvm4g:|Device (runs|copy in|stopped)")
done
say "pieces: 8 (new) against 16 (p16), atomic"
for f in .ref/bench/par/sup_tree.hvm4 bench/gpu_shared_tree.hvm4 bench/gpu_shared_wide.hvm4; do
  for r in 1 2 3; do for b in .ref/bins/new .ref/bins/p16; do
    o=$($b $f -S -s --gpu --dup=atomic 2>&1)
    echo "  $(basename $b) $(basename $f): $(printf '%s\n' "$o" | grep -E 'Device time|Device packing|Device copy out' | sed 's/^- //; s/ (marking[^)]*)//' | tr '\n' ' ')"
  done; done
done
say "cuda_check"
HVM4G_BIN=./hvm4g bash scripts/cuda_check.sh "$OUT/cuda-check" > /dev/null 2>&1
tail -n 10 "$OUT/cuda-check/summary.txt"; grep FAIL "$OUT/cuda-check/summary.txt" | head; say done
