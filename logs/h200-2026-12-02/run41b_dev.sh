#!/bin/bash
# run41b: timing. Old (37939d5, .ref/bins/old) against new, interleaved;
# the default device heap; the one-run table with -T16 and the reference.
set -u
exec > >(tee "$OUT/run41b.txt") 2>&1
T0=$(date +%s); say() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
say "run41b $(git log -1 --format=%h)"
make -j16 -s hvm4g 2>&1 | tail -3
cp hvm4g .ref/bins/new
: # the reference binary .ref/hvm4ref was built on that machine from its own sources, outside this repository (the build line is not kept here)
run() {
  local b=$1; shift
  local o
  o=$(/usr/bin/time -f "wall %e s, rss %M KB" "$b" "$@" 2>&1)
  printf '  %s %s:' "$(basename "$b")" "$*"
  printf '%s\n' "$o" | awk '
    /^- Itrs:/            { printf " %s itrs", $3 }
    /^- Device time:/     { t = $4; printf ", device %.1f ms", t * 1000 }
    /^- Device perf:/     { printf ", %s M itrs/s", $4 }
    /^- Device setup/     { printf ", setup: %s", substr($0, 16) }
    /^- Device packing:/  { p = $4; printf ", packing %.2f ms", p * 1000 }
    /^- Device copy out:/ { c = $5; printf ", copy out %.2f ms (%s MB pinned)", c * 1000, substr($7, 2) }
    /^- Device stopped/   { printf ", %s", substr($0, 3) }
    /^wall/               { w = $0 }
    END { if (t > 0) printf " (%.1f%% of device)", 100 * (p + c) / t;
          printf ", %s\n", w }'
}
N=.ref/bins/new; O=.ref/bins/old
$N bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
say "old binary, wide map, default heap (2^30), full -s"
/usr/bin/time -f "wall %e s, rss %M KB" $O bench/gpu_wide_map.hvm4 -S -s --gpu --dup=owner 2>&1 | grep -v "^#"
say "new binary, wide map, default heap (host's)"
for m in owner atomic; do run $N bench/gpu_wide_map.hvm4 -S -s --gpu --dup=$m; done
say "hello: setup with the default heap against --dev-heap=1G"
for r in 1 2 3; do for h in "" "--dev-heap=1G"; do run $N examples/hello.hvm4 -s --gpu $h; done; done
say "A/B old vs new, device only, --dev-heap=4G"
P=(bench/gpu_wide_map.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_sup_search.hvm4 bench/gpu_tree_map.hvm4 bench/gpu_shared_tree.hvm4 .ref/bench/par/sup_tree.hvm4)
for f in "${P[@]}"; do for r in 1 2; do for m in owner atomic; do for b in $O $N; do
  run $b $f -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G
done; done; done; done
say "table: --gpu (defaults), -T16, --gpu -T16, reference -T16"
for f in "${P[@]}"; do
  run $N $f -S -s --gpu
  run $N $f -S -T16
  run $N $f -S -s --gpu -T16
  run .ref/hvm4ref $f -S -T16
done
say done
