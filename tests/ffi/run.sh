#!/usr/bin/env bash
# tests/ffi/run.sh: hvm4g's own checks of libraries of primitives (--ffi,
# --ffi-dir; docs/ffi.md): the table's entries, the load order, and each
# failure's message and exit status. Upstream's FFI programs run in
# tests/upstream/ffi/, under its convention.
#
# Each program here is in the golden format (tests/README.md): expected
# output in the trailing `//` lines (`//!`: a run without -C), stdout and
# stderr together; directives at the top:
#
#   // load: ARGS     how the libraries are loaded: @NAME.c is the library
#                     built from lib/NAME.c, @FOLDER the folder of libraries
#                     built from lib/FOLDER/*.c, $DIR this folder
#   // args: ARGS     more arguments
#   // exit: N        the exit status (default 0)
#   // prefix: TEXT   the output starts with TEXT (paths vary), instead of
#                     the trailing lines
#
# $DIR in the expected output is this folder too. The programs run in
# this folder, named by their file names.
#   // cpu-only: WHY  not run on the simulated device
#
# examples/ffi/ is checked too: its library builds and its program prints
# its trailing `//!` line.
#
# Every program runs on one thread (mode cpu), under -T4 (t4) and on the
# simulated device (sim: --gpu --device=sim, not with SKIP_SIM=1); each
# must give the same output and status.
#
# Usage: tests/ffi/run.sh [BIN]   (default ./hvm4g). Prints [PASS],
# [FAIL] or [SKIP] per program and mode (NAME.MODE), then "N passed, M
# failed"; exit 1 on a failure.

set -uo pipefail
DIR="$(cd "$(dirname "$0")" && pwd)"
BIN="$(cd "$(dirname "${1:-$DIR/../../hvm4g}")" && pwd)/$(basename "${1:-hvm4g}")"
CC="${CC:-cc}"
LIMIT="${FFI_TIMEOUT:-60}"
case "$(uname -s)" in
  Darwin*) EXT=.dylib; LDFLAGS=(-dynamiclib -fPIC) ;;
  *)       EXT=.so;    LDFLAGS=(-shared -fPIC) ;;
esac
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
pass=0
fail=0

build() {   # SRC DEST
  "$CC" "${LDFLAGS[@]}" -Wall -Wextra -Werror -I "$DIR/../../include" -o "$2" "$1"
}

for src in "$DIR"/lib/*.c; do
  build "$src" "$OUT/$(basename "${src%.c}")$EXT" || { echo "[FAIL] build $src"; exit 1; }
done
for folder in "$DIR"/lib/*/; do
  name=$(basename "$folder")
  mkdir -p "$OUT/$name"
  for src in "$folder"*.c; do
    build "$src" "$OUT/$name/$(basename "${src%.c}")$EXT" || { echo "[FAIL] build $src"; exit 1; }
  done
done

# One argument of `// load:`, as the command line gets it.
load_arg() {
  case "$1" in
    @*.c) echo "$OUT/$(basename "${1#@}" .c)$EXT" ;;
    @*)   echo "$OUT/${1#@}" ;;
    *)    echo "${1//\$DIR/$DIR}" ;;
  esac
}

check() {   # FILE MODE ARGS...
  local file=$1 mode=$2 name line key val expected="" lines=0 nocollapse=0
  local exit_want=0 prefix="" cpu_only="" load=() args=()
  shift 2
  name=$(basename "${file%.hvm4}")
  while IFS= read -r line; do
    [[ "$line" == "// "*": "* ]] || break
    key=${line#// }; key=${key%%:*}; val=${line#*: }
    case "$key" in
      load)     for w in $val; do load+=("$(load_arg "$w")"); done ;;
      args)     read -r -a more <<< "$val"; args+=("${more[@]}") ;;
      exit)     exit_want=$val ;;
      prefix)   prefix=$val ;;
      cpu-only) cpu_only=$val ;;
    esac
  done < "$file"
  if [ "$mode" = sim ] && [ -n "$cpu_only" ]; then
    echo "[SKIP] $name.$mode ($cpu_only)"
    return
  fi
  while IFS= read -r line; do
    [[ "$line" == //* ]] || break
    [[ "$line" == "// "*": "* ]] && break
    if [[ "$line" == "//!"* ]]; then nocollapse=1; line=${line#//!}; else line=${line#//}; fi
    if [ "$lines" -eq 0 ]; then expected=$line; else expected=$line$'\n'$expected; fi
    lines=$((lines + 1))
  done < <(tac "$file")
  expected=${expected//\$DIR/$DIR}
  prefix=${prefix//\$DIR/$DIR}
  # run in this folder, the program by its name: messages name it so
  local cmd=("$BIN" "$name.hvm4" "$@" "${args[@]}" "${load[@]}")
  [ "$nocollapse" -eq 0 ] && cmd+=(-C)
  local actual status ok=0
  actual="$(cd "$DIR" && timeout -k 5 "$LIMIT" "${cmd[@]}" < /dev/null 2>&1)"
  status=$?
  if [ "$status" -eq "$exit_want" ]; then
    if [ -n "$prefix" ]; then
      [[ "$actual" == "$prefix"* ]] && ok=1
    else
      [ "$actual" = "$expected" ] && ok=1
    fi
  fi
  if [ "$ok" -eq 1 ]; then
    echo "[PASS] $name.$mode"
    pass=$((pass + 1))
  else
    echo "[FAIL] $name.$mode (exit $status, expected $exit_want)"
    echo "  expected: ${prefix:-$expected}"
    echo "  detected: $actual"
    fail=$((fail + 1))
  fi
}

for file in "$DIR"/*.hvm4; do
  check "$file" cpu
  check "$file" t4 -T4
  [ "${SKIP_SIM:-0}" = 1 ] || check "$file" sim --gpu --device=sim
done

# The example: its library as its comment builds it, its program as run.
example="$DIR/../../examples/ffi"
want=$(sed -n 's#^//!##p' "$example/main.hvm4")
if build "$example/mathlib.c" "$OUT/mathlib$EXT" &&
   got=$("$BIN" "$example/main.hvm4" --ffi "$OUT/mathlib$EXT" 2>&1) && [ "$got" = "$want" ]; then
  echo "[PASS] example.cpu"
  pass=$((pass + 1))
else
  echo "[FAIL] example.cpu (examples/ffi)"
  echo "  expected: $want"
  echo "  detected: ${got:-}"
  fail=$((fail + 1))
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
