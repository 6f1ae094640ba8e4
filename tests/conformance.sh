#!/usr/bin/env bash
# tests/conformance.sh: runs the HVM4 reference's test programs with hvm4g
# and reports how many pass.
#
#   tests/conformance.sh [DIR] [--device=sim|cuda|metal] [--dup=owner|atomic]
#                        [--other-hvm4g-flag...]
#
# DIR (or $HVM4_REF_TESTS) is the reference's test/ folder; files starting
# with _ are helpers. Convention: the trailing // lines are the expected
# output; -C unless a //! line is present; collapse_*/enum_* run with
# -C<expected lines>; an expected PARSE_ERROR only needs the output to start
# with PARSE_ERROR. With --device the programs run with --gpu on that device;
# other flags pass to hvm4g (e.g. --dev-heap=1G when runs share a GPU).
# HVM4G_BIN picks the binary (default ./hvm4g, built if missing); JOBS sets
# parallel runs. Exit status 0 only when every program passes.

set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${HVM4_REF_TESTS:-}
DEVICE=""; DUP=""; MORE=()
for a in "$@"; do
  case "$a" in
    --device=*) DEVICE=$a ;;
    --dup=*)    DUP=$a ;;
    -h|--help)  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*)         MORE+=("$a") ;;
    *)          DIR=$a ;;
  esac
done
DEV=()
if [ -n "$DEVICE$DUP" ]; then   # --dup alone means the simulated device
  DEV=(--gpu "${DEVICE:---device=sim}" -T1)   # -T1: the device from the start
  [ -n "$DUP" ] && DEV+=("$DUP")
fi
DEV+=("${MORE[@]}")
if [ -z "$DIR" ] || [ ! -d "$DIR" ]; then
  echo "usage: $0 DIR [--device=sim] [--dup=owner|atomic]  (or set HVM4_REF_TESTS)" >&2
  exit 2
fi
DIR=$(cd "$DIR" && pwd)
BIN=${HVM4G_BIN:-$ROOT/hvm4g}
[[ "$BIN" == */* ]] && BIN=$(realpath -m "$BIN")
if [ -z "${HVM4G_BIN:-}" ] && [ ! -x "$BIN" ]; then
  make -C "$ROOT" -s hvm4g || exit 1
fi
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/hvm4g-conf.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

for f in "$DIR"/*.hvm4; do
  case "$(basename "$f")" in _*) continue ;; esac
  printf '%s\n' "$f"
done > "$TMP/list"

echo "conformance: $BIN ${DEV[*]:-(cpu)} on $DIR"
export DROP_WARNINGS=1   # lib.sh: the reference prints no warnings
xargs -d '\n' -r -P "$JOBS" -I{} bash "$ROOT/tests/lib.sh" check run "$BIN" {} "$TMP" "${DEV[@]}" < "$TMP/list"

pass=0; fail=0
while IFS= read -r f; do
  name=$(basename "$f" .hvm4)
  if [ -f "$TMP/run/$name.pass" ]; then
    echo "[PASS] $name"; pass=$((pass + 1))
  else
    echo "[FAIL] $name: $(head -n1 "$TMP/run/$name.fail" 2>/dev/null)"
    [ "${VERBOSE:-0}" = 1 ] && tail -n +2 "$TMP/run/$name.fail"
    fail=$((fail + 1))
  fi
done < <(sort "$TMP/list")
total=$((pass + fail))
awk -v p=$pass -v t=$total 'BEGIN { printf "conformance: %d/%d passed (%.1f%%)\n", p, t, t ? 100 * p / t : 0 }'
[ $fail -eq 0 ]
