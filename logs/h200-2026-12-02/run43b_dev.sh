#!/bin/bash
# run43b: k_step with 64-lane blocks at 48 and 40 registers (r48: -DLANE_TPB=64
# -DK_STEP_BLOCKS=20, r40: 24 blocks) against the default (base: 32-lane
# blocks, 32 a multiprocessor, 64 registers; Hopper's 32-block limit caps
# 1-warp blocks at 50% occupancy), interleaved; gpu_spin_tree; owner region
# sweep; the one-run table (--gpu, -T16, --gpu -T16, the reference -T16).
set -u
exec > >(tee "$OUT/run43b.txt") 2>&1
T0=$(date +%s); say() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
: # the reference binary .ref/hvm4ref was built on that machine from its own sources, outside this repository (the build line is not kept here)
make -j16 -s hvm4g 2>&1 | tail -3
run() {
  local b=$1; shift
  local o
  o=$(/usr/bin/time -f "wall %e s, rss %M KB" "$b" "$@" 2>&1)
  printf '  %s %s:' "$(basename "$b")" "$*"
  printf '%s\n' "$o" | awk '
    /^- Itrs:/            { printf " %s itrs", $3 }
    /^- Device time:/     { t = $4; printf ", device %.1f ms", t * 1000 }
    /^- Device perf:/     { printf ", %s M itrs/s", $4 }
    /^- Device passes:/   { printf ", %s passes", $4 }
    /^- Device packing:/  { p = $4; printf ", packing %.2f ms", p * 1000 }
    /^- Device copy out:/ { c = $5; printf ", copy out %.2f ms", c * 1000 }
    /^- Device took over/ { printf ", took over %s", $8 }
    /^wall/               { w = $0 }
    END { if (t > 0) printf " (%.1f%% of device)", 100 * (p + c) / t;
          printf ", %s\n", w }'
}
ST=.ref/bench/par/sup_tree.hvm4
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
say "registers: base / r48 / r40, device only, --dev-heap=4G"
for f in bench/gpu_wide_map.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_sup_search.hvm4 bench/gpu_tree_map.hvm4 $ST; do
  for r in 1 2; do for m in owner atomic; do for b in base r48 r40; do
    run .ref/bins/$b "$f" -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G
  done; done; done
done
say "owner regions: --region-shift 8 / 9 / 10"
for f in bench/gpu_shared_wide.hvm4 bench/gpu_wide_map.hvm4; do
  for r in 1 2; do for k in 8 9 10; do
    run ./hvm4g "$f" -S -s --gpu --dup=owner --cpu-first=0 --region-shift=$k
  done; done
done
say "one-run table: --gpu (defaults), -T16, --gpu -T16, reference -T16"
for f in bench/gpu_wide_map.hvm4 bench/gpu_sup_search.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_tree_map.hvm4 bench/gpu_shared_tree.hvm4 bench/gpu_spin_tree.hvm4 $ST; do
  for r in 1 2; do
    run ./hvm4g "$f" -S -s --gpu
    run ./hvm4g "$f" -S -s -T16
    run ./hvm4g "$f" -S -s --gpu -T16
    run .ref/hvm4ref "$f" -S -T16
  done
  for m in owner atomic; do run ./hvm4g "$f" -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G; done
done
say done
