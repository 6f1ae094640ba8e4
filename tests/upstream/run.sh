#!/usr/bin/env bash
# tests/upstream/run.sh: runs the HigherOrderCO/HVM4 test programs kept in
# this folder under that repository's own conventions (its test/_all_.sh):
#
#   - the expected output is the run of `//` lines at the end of the file;
#     a `//!` line among them means a run without -C (otherwise -C);
#   - among those lines, `//FLAGS: ARGS` adds arguments, `//EXPECT_PREFIX:
#     TEXT` and `//EXPECT_CONTAINS: TEXT` check the output's start or a part
#     of it instead of all of it (for paths, ids, times);
#   - leading lines `//! ARGS` or `//!-ARGS` before the program add
#     arguments (`//! -- a b` passes program arguments);
#   - an expected `PARSE_ERROR` matches any output that starts with it;
#   - the output is stdout and stderr together, colour codes removed.
#
# The net_* programs are hvm4g's own (upstream's tcp and http tests need
# no peer): they run against _peer.py, which this script starts. The
# programs of ffi/ load libraries of primitives, which ffi/lib.sh builds
# from their C sources first, as upstream's runner does.
#
# Usage: tests/upstream/run.sh [BIN [EXTRA ARGS...]]   (default ./hvm4g)
# EXTRA ARGS go after the file on every run (e.g. -T16, --gpu). Prints
# [PASS]/[FAIL] per program and "N passed, M failed"; exit 1 on a failure.

set -uo pipefail
DIR="$(cd "$(dirname "$0")" && pwd)"
BIN="${1:-$DIR/../../hvm4g}"
shift || true
SHARED=("$@")
LIMIT="${UPSTREAM_TIMEOUT:-20}"
pass=0
fail=0
. "$DIR/ffi/lib.sh"
FFI_OUT="$(mktemp -d)"
trap 'rm -rf "$FFI_OUT"' EXIT

# The network tests (net_*) talk to a peer on 127.0.0.1 (_peer.py), started
# here for the whole run; its ports reach them as HVM4G_PEER_PORT (plain)
# and HVM4G_PEER_TLS_PORT (https).
if command -v python3 > /dev/null 2>&1; then
  peer_out="$(mktemp)"
  python3 "$DIR/_peer.py" > "$peer_out" 2> /dev/null &
  peer_pid=$!
  trap 'kill "$peer_pid" 2> /dev/null; rm -f "$peer_out"; rm -rf "$FFI_OUT"' EXIT
  for _ in $(seq 100); do [ "$(wc -l < "$peer_out")" -ge 2 ] && break; sleep 0.1; done
  HVM4G_PEER_PORT="$(sed -n 1p "$peer_out")"
  HVM4G_PEER_TLS_PORT="$(sed -n 2p "$peer_out")"
  export HVM4G_PEER_PORT HVM4G_PEER_TLS_PORT
fi

shopt -s nullglob
for file in "$DIR"/*.hvm "$DIR"/*.hvm4 "$DIR"/ffi/*.hvm; do
  name="$(basename "$file")"
  name="${name%.*}"
  case "$name" in _*) continue ;; esac

  lead=()
  while IFS= read -r line; do
    if [[ "$line" == "//! "* ]]; then
      read -r -a more <<< "${line#//! }"
      lead+=("${more[@]}")
    elif [[ "$line" == "//!-"* ]]; then
      read -r -a more <<< "${line#//!}"
      lead+=("${more[@]}")
    elif [[ -n "$line" ]]; then
      break
    fi
  done < "$file"

  expected=""
  lines=0
  nocollapse=0
  prefix=""
  contains=""
  flags=()
  while IFS= read -r line; do
    [[ "$line" == //* ]] || break
    case "$line" in
      "//FLAGS:"*)          read -r -a more <<< "${line#//FLAGS:}"; flags=("${more[@]}" "${flags[@]}"); continue ;;
      "//EXPECT_PREFIX:"*)   prefix="${line#//EXPECT_PREFIX:}"; continue ;;
      "//EXPECT_CONTAINS:"*) contains="${line#//EXPECT_CONTAINS:}"; continue ;;
    esac
    if [[ "$line" == "//!"* ]]; then
      nocollapse=1
      content="${line#//!}"
    else
      content="${line#//}"
    fi
    if [ "$lines" -eq 0 ]; then expected="$content"; else expected="$content"$'\n'"$expected"; fi
    lines=$((lines + 1))
  done < <(tac "$file")

  if [ "$lines" -eq 0 ] && [ -z "$prefix" ] && [ -z "$contains" ]; then
    echo "[FAIL] $name (no expected output)"
    fail=$((fail + 1))
    continue
  fi

  ffi=()
  if [[ "$file" == "$DIR/ffi/"* ]]; then
    if ! ffi_build "$file" "$FFI_OUT"; then
      echo "[FAIL] $name (its library does not build)"
      fail=$((fail + 1))
      continue
    fi
    ffi=("${FFI_ARGS[@]}")
  fi

  cmd=("$BIN" "$file" "${SHARED[@]}")
  [ "$nocollapse" -eq 0 ] && cmd+=(-C)
  cmd+=("${flags[@]}" "${lead[@]}" "${ffi[@]}")
  actual="$(timeout -k 5 "$LIMIT" "${cmd[@]}" < /dev/null 2>&1)"
  status=$?
  actual="$(printf '%s' "$actual" | sed 's/\x1b\[[0-9;]*m//g')"

  ok=0
  if [ "$status" -ge 124 ]; then
    ok=0   # timed out or killed by a signal
  elif [ -n "$prefix" ]; then
    [[ "$actual" == "$prefix"* ]] && ok=1
  elif [ -n "$contains" ]; then
    [[ "$actual" == *"$contains"* ]] && ok=1
  elif [ "$expected" = "PARSE_ERROR" ]; then
    [[ "$actual" == PARSE_ERROR* ]] && ok=1
  else
    [ "$actual" = "$expected" ] && ok=1
  fi
  if [ "$ok" -eq 1 ]; then
    echo "[PASS] $name"
    pass=$((pass + 1))
  else
    echo "[FAIL] $name (exit $status)"
    echo "  expected: ${prefix:-${contains:-$expected}}"
    echo "  detected: $actual"
    fail=$((fail + 1))
  fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
