#!/usr/bin/env bash
# tests/conformance.sh: runs an HVM4 test folder with hvm4g as HVM4's own
# runner (its test/_all_.sh) runs it, and reports how many pass.
#
#   tests/conformance.sh [DIR] [--device=sim|cuda|metal] [--dup=owner|atomic]
#                        [--pending=FILE] [--other-hvm4g-flag...]
#
# DIR (or $HVM4_REF_TESTS) is the folder: its *.hvm and *.hvm4 programs and
# those of DIR/ffi/; files starting with _ are helpers. Convention (in
# full in tests/lib.sh, `upstream`): the trailing // lines are the expected
# output, stdout and stderr together; -C unless a //! line is among them;
# collapse_*/enum_* run with -C<expected lines>; leading `//! ARGS` or
# `//!-ARGS` lines add arguments; `//EXPECT_PREFIX:`/`//EXPECT_CONTAINS:`
# judge a part; an expected PARSE_ERROR needs the output to start with it;
# the exit status is not judged. A program NAME of DIR/ffi/ loads NAME.c
# built as a library (--ffi), or each .c of the folder NAME/ (--ffi-dir),
# compiled here against include/hvm4g_ffi.h. Names listed in DIR/skip.txt
# (NAME REASON, a line each) are skipped with their reason. Names listed
# in --pending's FILE (the same format) are known failures whose fix is on
# its way: they still run, a failure is shown as [PEND] and does not fail
# the run, and a pass fails it until the name leaves FILE. With --device
# the programs run with --gpu on that device; other flags pass to hvm4g
# (e.g. -T4, or --dev-heap=1G when runs share a GPU); all of them come
# after the file, before -C, where HVM4's runner puts its shared flags.
# HVM4G_BIN picks the binary (default ./hvm4g, built if missing); JOBS
# sets parallel runs; UPSTREAM_TIMEOUT the seconds a program may take
# (default 20; HVM4's runner allows 2 on its own machine).
# Exit status 0 only when every program neither skipped nor pending passes.

set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${HVM4_REF_TESTS:-}
DEVICE=""; DUP=""; PENDING=""; MORE=()
for a in "$@"; do
  case "$a" in
    --device=*) DEVICE=$a ;;
    --dup=*)    DUP=$a ;;
    --pending=*) PENDING=${a#--pending=} ;;
    -h|--help)  sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
mkdir -p "$TMP/ffi"

# skipped names, and pending ones, with their reasons
declare -A SKIP=() PEND=()
read_names() {   # array name, file of NAME REASON lines
  local -n into=$1
  local name why
  while read -r name why; do
    case "$name" in ''|'#'*) continue ;; esac
    into[$name]=$why
  done < "$2"
}
[ -f "$DIR/skip.txt" ] && read_names SKIP "$DIR/skip.txt"
if [ -n "$PENDING" ]; then
  [ -f "$PENDING" ] || { echo "conformance: no file $PENDING (--pending)" >&2; exit 2; }
  read_names PEND "$PENDING"
fi

shopt -s nullglob
for f in "$DIR"/*.hvm "$DIR"/*.hvm4 "$DIR"/ffi/*.hvm; do
  case "$(basename "$f")" in _*) continue ;; esac
  printf '%s\n' "$f"
done > "$TMP/all"
shopt -u nullglob
: > "$TMP/list"
while IFS= read -r f; do
  name=${f##*/}; name=${name%.hvm4}; name=${name%.hvm}
  [ -n "${SKIP[$name]+x}" ] || printf '%s\n' "$f" >> "$TMP/list"
done < "$TMP/all"

# The ffi/ programs' libraries, built once before the runs.
if grep -q '/ffi/[^/]*$' "$TMP/list"; then
  . "$ROOT/tests/upstream/ffi/lib.sh"
  while IFS= read -r f; do
    name=$(basename "$f" .hvm)
    if ffi_build "$f" "$TMP/ffi" 2> "$TMP/ffi/$name.err"; then
      printf '%s\n' "${FFI_ARGS[@]}" > "$TMP/ffi/$name.args"
    fi
  done < <(grep '/ffi/[^/]*$' "$TMP/list")
fi

echo "conformance: $BIN ${DEV[*]:-(cpu)} on $DIR"
UPSTREAM_FFI=$TMP/ffi xargs -d '\n' -r -P "$JOBS" -I{} \
  bash "$ROOT/tests/lib.sh" upstream run "$BIN" {} "$TMP" "${DEV[@]}" < "$TMP/list"

pass=0; fail=0; skip=0; pend=0
while IFS= read -r f; do
  name=${f##*/}; name=${name%.hvm4}; name=${name%.hvm}
  if [ -n "${SKIP[$name]+x}" ]; then
    echo "[SKIP] $name: ${SKIP[$name]}"; skip=$((skip + 1))
  elif [ -n "${PEND[$name]+x}" ] && [ -f "$TMP/run/$name.pass" ]; then
    echo "[FAIL] $name: passes: take it out of $PENDING"; fail=$((fail + 1))
  elif [ -n "${PEND[$name]+x}" ]; then
    echo "[PEND] $name: ${PEND[$name]} ($(head -n1 "$TMP/run/$name.fail" 2>/dev/null))"
    pend=$((pend + 1))
  elif [ -f "$TMP/run/$name.pass" ]; then
    echo "[PASS] $name"; pass=$((pass + 1))
  else
    echo "[FAIL] $name: $(head -n1 "$TMP/run/$name.fail" 2>/dev/null)"
    [ "${VERBOSE:-0}" = 1 ] && tail -n +2 "$TMP/run/$name.fail"
    fail=$((fail + 1))
  fi
done < <(sort "$TMP/all")
total=$((pass + fail + pend))
awk -v p=$pass -v t=$total -v s=$skip -v n=$pend 'BEGIN {
  printf "conformance: %d/%d passed (%.1f%%)", p, t, t ? 100 * p / t : 0
  if (n) printf ", %d pending", n
  if (s) printf ", %d skipped", s; print "" }'
[ $fail -eq 0 ]
