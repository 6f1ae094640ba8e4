#!/usr/bin/env bash
# tests/mem/fit.sh BIN [FILE...]: every program runs in a heap of 8x its
# peak live words (issue 62): at -T1, -T4 and on the simulated device, with
# the output of the default heap and status 0. The peak is -s's "Live"
# line of a run that collects every PEAK_GAP words: the true peak is at
# most that figure plus the gap, which is what is multiplied.
# Files: the given ones, else bench/*.hvm4 (not big_*: hours on the CPU;
# MEM_FIT_BIG=1 adds them) and tests/gpu/*.hvm4 that set no heap of their
# own and expect status 0. One line a program: [PASS] name, [FAIL] name why,
# [OPEN] name why for a program tests/mem/open.txt names.

set -u
BIN=$1; shift
cd "$(dirname "$0")/../.."
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hvm4g-fit.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
PEAK_GAP=262144
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  for f in bench/*.hvm4 tests/gpu/*.hvm4; do
    case "$(basename "$f")" in big_*) [ "${MEM_FIT_BIG:-0}" = 1 ] || continue ;; esac
    grep -q '^// args:.*--heap' "$f" && continue
    grep -q '^// exit:' "$f" && continue
    files+=("$f")
  done
fi
LIMIT=${TEST_TIMEOUT:-120}
pass=0; fail=0; open=0
# tests/mem/open.txt: the programs known not to fit yet, with the reason
open_why() { awk -v n="$1" '$1 == n { $1 = ""; sub(/^ +/, ""); print; exit }' tests/mem/open.txt; }
for f in "${files[@]}"; do
  name=$(basename "$f" .hvm4)
  args=$(sed -n '1s|^// args: ||p' "$f")
  # the tests' convention (tests/lib.sh): expected lines (trailing //
  # lines) without //! are collapsed (-C; -C<lines> for collapse_*)
  if tail -n1 "$f" | grep -q '^//' && ! grep -q '^//!' "$f"; then
    case "$name" in
      collapse_*|enum_*) args="$args -C$(tac "$f" | awk '/^\/\//{n++; next} {exit} END{print n+0}')" ;;
      *) args="$args -C" ;;
    esac
  fi
  timeout "$LIMIT" "$BIN" $args "$f" > "$TMP/want" 2> /dev/null
  if [ $? -ne 0 ]; then echo "[FAIL] $name: the default heap's run failed"; fail=$((fail + 1)); continue; fi
  timeout "$LIMIT" "$BIN" $args -T1 -s --reclaim-gap=$PEAK_GAP "$f" > "$TMP/stats" 2> "$TMP/err"
  # no collection ran: every word the run used counts
  peak=$(sed -n 's/^- Live: at most \([0-9]*\) words.*/\1/p' "$TMP/stats")
  [ -n "$peak" ] || peak=$(sed -n 's/^- Memory: .*; \([0-9]*\) heap words in use$/\1/p' "$TMP/stats")
  if [ -z "$peak" ]; then echo "[FAIL] $name: no peak from -s: $(head -c 200 "$TMP/err")"; fail=$((fail + 1)); continue; fi
  heap=$(( 8 * (peak + PEAK_GAP) ))
  why=""
  for mode in "-T1" "-T4" "--gpu --device=sim"; do
    timeout "$LIMIT" "$BIN" $args $mode --heap="$heap" "$f" > "$TMP/got" 2> "$TMP/err"
    rc=$?
    if [ $rc -ne 0 ]; then why="$mode --heap=$heap: status $rc: $(head -n1 "$TMP/err" | head -c 200)"; break; fi
    if ! cmp -s "$TMP/want" "$TMP/got"; then why="$mode --heap=$heap: output differs"; break; fi
  done
  known=$(open_why "$name")
  if [ -n "$known" ] && [ -z "$why" ]; then
    echo "[FAIL] $name: passes: take it out of tests/mem/open.txt"; fail=$((fail + 1))
  elif [ -n "$known" ]; then echo "[OPEN] $name: $known ($why)"; open=$((open + 1))
  elif [ -z "$why" ]; then echo "[PASS] $name (peak $peak)"; pass=$((pass + 1))
  else echo "[FAIL] $name: $why"; fail=$((fail + 1)); fi
done
echo "$pass passed, $fail failed, $open open"
