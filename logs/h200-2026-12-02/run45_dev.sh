#!/bin/bash
# run45 (final tree): lanes 4 / 8 (default) / 16 waves on the wide
# programs, both modes, interleaved; the one-run table for the programs
# whose copy out changed (shared wide) and the wide map; then
# h200_check's checks (cuda_check with the sanitizer, the reference's
# tests on CUDA in both modes).
set -u
exec > >(tee "$OUT/run45.txt") 2>&1
T0=$(date +%s); say() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
: # the reference binary .ref/hvm4ref was built on that machine from its own sources, outside this repository (the build line is not kept here)
make -j16 -s hvm4g 2>&1 | tail -3
git log -1 --format='%h %s' | cut -c1-80
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
    /^- Device copy out:/ { c = $5; printf ", copy out %.2f ms (%s ahead, %s behind MB)", c * 1000, substr($7, 2), $13 }
    /^wall/               { w = $0 }
    END { if (t > 0) printf " (%.1f%% of device)", 100 * (p + c) / t;
          printf ", %s\n", w }'
}
ST=.ref/bench/par/sup_tree.hvm4
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
say "lanes: 540672 / 1081344 (default) / 2162688, --dev-heap=4G"
for f in bench/gpu_wide_map.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_sup_search.hvm4 bench/gpu_tree_map.hvm4; do
  for r in 1 2; do for m in owner atomic; do for l in 540672 1081344 2162688; do
    run ./hvm4g "$f" -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G --lanes=$l
  done; done; done
done
say "one-run table: --gpu (defaults), -T16, --gpu -T16, reference -T16"
for f in bench/gpu_shared_wide.hvm4 bench/gpu_wide_map.hvm4 $ST; do
  for r in 1 2; do
    run ./hvm4g "$f" -S -s --gpu
    run ./hvm4g "$f" -S -s -T16
    run ./hvm4g "$f" -S -s --gpu -T16
    run .ref/hvm4ref "$f" -S -T16
  done
done
say "checks"
OUT=$OUT/chk HVM4_REF=.ref/hvm4ref HVM4_REF_TESTS=.ref/test HVM4_REF_BENCH=.ref/bench bash scripts/h200_check.sh checks > /dev/null 2>&1
tail -n 14 $OUT/chk/h200_check.txt
say done
