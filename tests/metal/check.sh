#!/usr/bin/env bash
# tests/metal/check.sh BIN: `make metal-check`. BIN is hvm4g built with the
# Metal backend over the CPU shim (the Metal kernel source compiled as C++,
# run on CPU threads). Every golden program and tests/gpu program must give
# the CPU's output and exit status on --device=metal, in both DUP modes, at
# the default shape and at a racy one (many lanes, tiny regions and
# budgets; on the shim, a yield before one atomic access in 256, so that a
# broken 32-bit take shows: HVM4G_MTL_YIELD). Ends with "N passed, N
# failed".
#
# Environment: JOBS (parallel runs), ONLY=<glob>, TEST_TIMEOUT, CPU_BIN
# (the CPU side, default ./hvm4g), DEVICE (default "--device=metal"; e.g.
# "--device=cuda --take=32" runs the same scheme on an NVIDIA GPU).

set -u
BIN=$(realpath "$1")
cd "$(dirname "$0")/../.."
ROOT=$PWD
CPU=$(realpath "${CPU_BIN:-$ROOT/hvm4g}")
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
ONLY=${ONLY:-*}
DEVICE=${DEVICE:---device=metal}
export TEST_TIMEOUT=${TEST_TIMEOUT:-60}
export HVM4G_MTL_THREADS=${HVM4G_MTL_THREADS:-4}
RES=$(mktemp -d "${TMPDIR:-/tmp}/hvm4g-metal.XXXXXX")
trap 'rm -rf "$RES"' EXIT

for f in tests/golden/$ONLY.hvm4 tests/gpu/$ONLY.hvm4; do
  [ -f "$f" ] || continue
  case "$(basename "$f")" in _*) continue ;; esac
  printf '%s\n' "$ROOT/$f"
done > "$RES/list"

par() { xargs -d '\n' -r -P "$JOBS" -I{} bash "$ROOT/tests/lib.sh" "$@"; }

# MSL has no long long (nor unsigned long long): the kernel source and every
# header it includes must not name the type or write a literal of it.
lint=0
CXX=${MTL_CXX:-$(command -v clang++ || command -v g++)}
deps=$("$CXX" -std=c++17 -Itests/metal -Isrc -MM -x c++ src/dev/metal/metal_kern.metal 2>&1 |
       tr ' \\' '\n\n' | grep -E '^src/.*\.(h|metal)$')
if [ -z "$deps" ]; then
  echo "[FAIL] lint: could not list the kernel's headers"; lint=1
elif grep -nE '\b(0[xX][0-9A-Fa-f]+|[0-9]+)[uU]?(ll|LL)[uU]?\b|long long' $deps; then
  echo "[FAIL] lint: long long in the Metal kernel's sources (above)"; lint=1
fi

par check cpu "$CPU" {} "$RES" < "$RES/list"
for dup in owner atomic; do
  # shellcheck disable=SC2086  # DEVICE is a word list
  par same "metal-$dup" cpu "$BIN" {} "$RES" --gpu $DEVICE "--dup=$dup" < "$RES/list"
  # shellcheck disable=SC2086
  HVM4G_MTL_YIELD=256 \
  par same "metal-$dup-racy" cpu "$BIN" {} "$RES" --gpu $DEVICE "--dup=$dup" \
    --lanes=64 --region-shift=8 --budget=16 --arena=64 < "$RES/list"
done

# A small device heap fills and is reclaimed in place between passes
# (docs/memory.md): -s counts the reclaims, one run at least, and the
# output and interaction count are the CPU's.
mkdir -p "$RES/metal-reclaim"
result() { awk '!/^- / || /^- Itrs:/'; }   # the output and -s's interactions
reclaim_check() {
  local name=$1 dup=$2 cpu dev n why=""
  cpu=$(cd tests/gpu && timeout -k 5 "$TEST_TIMEOUT" "$CPU" "$name.hvm4" -s 2>&1 | result)
  # shellcheck disable=SC2086  # DEVICE is a word list
  dev=$(cd tests/gpu && timeout -k 5 "$TEST_TIMEOUT" "$BIN" "$name.hvm4" -s --gpu $DEVICE \
        "--dup=$dup" --dev-heap=1M --handoff=0 2>&1)
  n=$(printf '%s\n' "$dev" | sed -n 's/^- Device reclaims: \([0-9]*\) in place.*/\1/p')
  if [ "${n:-0}" -eq 0 ]; then why="no reclaim in place"
  elif [ "$cpu" != "$(printf '%s\n' "$dev" | result)" ]; then why="output or interactions differ from the CPU's"
  fi
  if [ -z "$why" ]; then : > "$RES/metal-reclaim/$name-$dup.pass"
  else printf '%s\n%s\n' "$why" "$dev" | head -n 20 > "$RES/metal-reclaim/$name-$dup.fail"
  fi
}
for name in mem_dev_loop mem_dev_tree; do
  # shellcheck disable=SC2254  # ONLY is a glob
  case "$name" in $ONLY) ;; *) continue ;; esac
  for dup in owner atomic; do reclaim_check "$name" "$dup"; done
done

pass=0; fail=0
for d in "$RES"/metal-*; do
  p=$(find "$d" -name '*.pass' | wc -l)
  f=$(find "$d" -name '*.fail' | wc -l)
  for fl in $(find "$d" -name '*.fail' | sort); do
    printf '[FAIL] %s/%s: %s\n' "$(basename "$d")" "$(basename "$fl" .fail)" "$(head -n1 "$fl")"
  done
  printf '  %-18s %4d passed, %4d failed\n' "$(basename "$d")" "$p" "$f"
  pass=$((pass + p)); fail=$((fail + f))
done
if [ "$lint" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
