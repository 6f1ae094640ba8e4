#!/bin/bash
# run44: lanes done early take warp-mates' entries (--steal=1, the new
# default) against --steal=0, interleaved, both modes; lane balance with
# and without; the tail of a large result pinned behind the packing
# (shared wide); then h200_check's checks (cuda_check with the sanitizer,
# the reference's tests on CUDA in both modes) on this tree.
set -u
exec > >(tee "$OUT/run44.txt") 2>&1
T0=$(date +%s); say() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
: # the reference binary .ref/hvm4ref was built on that machine from its own sources, outside this repository (the build line is not kept here)
make -j16 -s hvm4g 2>&1 | tail -3
make -s cuda-regs 2>&1 | grep -E "k_step|lane_steal"
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
    /^- Device steals:/   { printf ", %s steals", $4 }
    /^- Lane balance:/    { printf ", balance %s", $4 }
    /^- Device packing:/  { p = $4; printf ", packing %.2f ms", p * 1000 }
    /^- Device copy out:/ { c = $5; printf ", copy out %.2f ms (%s ahead, %s behind MB)", c * 1000, substr($7, 2), $13 }
    /^wall/               { w = $0 }
    END { if (t > 0) printf " (%.1f%% of device)", 100 * (p + c) / t;
          printf ", %s\n", w }'
}
ST=.ref/bench/par/sup_tree.hvm4
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
say "steal: --steal=0 / 1, device only, --dev-heap=4G"
for f in bench/gpu_wide_map.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_sup_search.hvm4 bench/gpu_tree_map.hvm4 bench/gpu_shared_tree.hvm4 bench/gpu_spin_tree.hvm4 $ST; do
  for r in 1 2; do for m in owner atomic; do for s in 0 1; do
    run ./hvm4g "$f" -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G --steal=$s
  done; done; done
done
say "balance (-DLANE_BALANCE build), steal 0 / 1"
for f in bench/gpu_wide_map.hvm4 bench/gpu_tree_map.hvm4; do
  for m in owner atomic; do for s in 0 1; do
    run .ref/bins/bal "$f" -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G --steal=$s
  done; done
done
say "checks"
OUT=$OUT/chk HVM4_REF=.ref/hvm4ref HVM4_REF_TESTS=.ref/test HVM4_REF_BENCH=.ref/bench bash scripts/h200_check.sh checks > /dev/null 2>&1
tail -n 14 $OUT/chk/h200_check.txt
say done
