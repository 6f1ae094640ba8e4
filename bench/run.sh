#!/usr/bin/env bash
# bench/run.sh: the HVM4 reference and hvm4g side by side.
#
#   HVM4_REF=/path/to/reference/binary \
#   HVM4_REF_BENCH=/path/to/ref/bench:/path/to/ref/bench/par \
#   THREADS=1 GPU=0 TIMEOUT=300 bash bench/run.sh [FILE.hvm4 ...]
#
# Programs: the given files, or else every *.hvm4 under each folder of
# HVM4_REF_BENCH (colon-separated; the reference's programs are not copied
# into this repository) and our own bench/*.hvm4. Flags follow the
# reference's bench script: gen_* run with -C1, collapse_* with -C, the rest
# with no collapse; every run adds -s, and -T$THREADS when THREADS > 1.
# With GPU=1 hvm4g also runs with --gpu (the hybrid a user gets), and with
# --gpu --dup=owner and --gpu --dup=atomic from the start (--cpu-first=0:
# no CPU pool first, so those columns are the device's; DEVICE=sim|cuda|metal
# adds --device=... to the last two). Runs go one after the other, never
# in parallel. REPEAT=N runs each N times, the columns interleaved round
# by round, and reports the run of median time (for noisy machines).
# HVM4G_BASE=/path/to/an/older/hvm4g adds that build's run beside hvm4g's
# (same flags, same rounds, the pair's order swapped every round) and the
# column new/base: hvm4g's wall over the older build's (above 1: slower).
# PIN=LIST runs every command on those cores (taskset -c LIST, e.g. PIN=5):
# on a shared host, unpinned one-thread walls of a single binary spread by
# up to 30% from run to run, so compare builds at THREADS=1 pinned.
# The reference binary is only run, never built here.
#
# Prints the machine, the date and each command, then a table: program,
# interactions, M interactions/s of each run (over its whole wall time),
# with GPU=1 the device's own M interactions/s (over the passes' time
# alone: "owner dev", "atomic dev") and its passes/deferrals, then the
# process walls of hvm4g's CPU run, --gpu and the device from the start
# (owner) side by side, and whether --gpu met its rule: at most 1.1 times
# the faster of the other two, plus 0.03 s; then the ratio hvm4g/reference,
# and whether the printed results are equal (stat lines excluded).

set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REF=${HVM4_REF:-}
BIN=${HVM4G_BIN:-$ROOT/hvm4g}
BASE=${HVM4G_BASE:-}
[[ "$BASE" == */* ]] && BASE=$(realpath -m "$BASE")
[[ "$BIN" == */* ]] && BIN=$(realpath -m "$BIN")
[[ "$REF" == */* ]] && REF=$(realpath -m "$REF")
THREADS=${THREADS:-1}
TIMEOUT=${TIMEOUT:-300}
REPEAT=${REPEAT:-1}
GPU=${GPU:-0}
DEVICE=${DEVICE:-}
PIN=${PIN:-}

if [ -z "${HVM4G_BIN:-}" ]; then
  make -C "$ROOT" -s hvm4g || { echo "bench: build failed" >&2; exit 1; }
fi
if [ -n "$REF" ] && [ ! -x "$REF" ]; then
  echo "bench: HVM4_REF=$REF is not an executable" >&2; exit 1
fi
if [ -n "$BASE" ] && [ ! -x "$BASE" ]; then
  echo "bench: HVM4G_BASE=$BASE is not an executable" >&2; exit 1
fi
pin=()
if [ -n "$PIN" ]; then
  if ! [[ "$PIN" =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]]; then
    echo "bench: PIN=$PIN is not a list of cores (taskset -c)" >&2; exit 1
  fi
  command -v taskset > /dev/null || { echo "bench: PIN needs taskset (util-linux)" >&2; exit 1; }
  pin=(taskset -c "$PIN")
fi

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  IFS=: read -r -a dirs <<< "${HVM4_REF_BENCH:-}"
  for d in "${dirs[@]}"; do
    [ -d "$d" ] && for f in "$d"/*.hvm4; do [ -f "$f" ] && files+=("$f"); done
  done
  for f in "$ROOT"/bench/*.hvm4; do [ -f "$f" ] && files+=("$f"); done
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/hvm4g-bench.XXXXXX")
: > "$TMP/cmds"
# The commands are printed at the end, also when the script is stopped.
finish() {
  echo
  echo "Commands run:"
  cat "$TMP/cmds"
  rm -rf "$TMP"
}
trap finish EXIT
trap 'echo "(stopped)"; exit 130' INT TERM

tflag=(); [ "$THREADS" -gt 1 ] && tflag=("-T$THREADS")
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')
echo "# hvm4g benchmark"
echo "- date:    $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- machine: $(nproc) cores, ${cpu:-unknown cpu}, $(uname -sm)"
command -v nvidia-smi > /dev/null 2>&1 &&
  echo "- gpu:     $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1)"
echo "- command: THREADS=$THREADS GPU=$GPU${DEVICE:+ DEVICE=$DEVICE}${BASE:+ HVM4G_BASE=$BASE} TIMEOUT=$TIMEOUT REPEAT=$REPEAT${PIN:+ PIN=$PIN} bash bench/run.sh $*"
echo "- ref:     ${REF:-(none: HVM4_REF unset)}"
echo "- hvm4g:   $BIN ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?'))"
[ -n "$BASE" ] && echo "- base:    $BASE ($("$BASE" --version 2>/dev/null | sed -n 's/^commit: //p' | head -n1))"
echo

# run LABEL FILE ARGS...: runs once; leaves ITRS, MIPS, SECS, STATUS, and the
# result (stat lines removed) in $TMP/LABEL.out.
run() {
  local label=$1 file=$2; shift 2
  local dir base out rc
  dir=$(dirname "$file"); base=$(basename "$file")
  echo "  \$ (cd $dir && ${pin[*]:+${pin[*]} }$* $base $(flags_of "$base"))" >> "$TMP/cmds"
  # shellcheck disable=SC2046
  local t0 t1
  t0=$(date +%s.%N)
  out=$(cd "$dir" && timeout -k 5 "$TIMEOUT" "${pin[@]}" "$@" "$base" $(flags_of "$base") 2>&1)
  rc=$?
  t1=$(date +%s.%N)
  WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  out=$(printf '%s\n' "$out" | sed 's/\x1b\[[0-9;]*m//g')
  ITRS=$(printf '%s\n' "$out" | awk '/^- Itrs:/ { print $3; exit }')
  SECS=$(printf '%s\n' "$out" | awk '/^- Time:/ { print $3; exit }')
  MIPS=$(printf '%s\n' "$out" | awk '/^- Perf:/ { print $3; exit }')
  # Device runs: passes and deferrals ("passes/deferrals").
  PD=$(printf '%s\n' "$out" | awk '/^- Device passes:/ { p = $4 } /^- Device deferrals:/ { d = $4 }
                                    END { if (p != "") print p "/" d; else print "-" }')
  # Device runs: interactions a second of device time alone (the passes).
  DEVM=$(printf '%s\n' "$out" | awk '/^- Device perf:/ { print $4; exit }')
  # Without a Perf line, derive it from Itrs and Time.
  if [ -z "$MIPS" ] && [ -n "$ITRS" ] && [ -n "$SECS" ]; then
    MIPS=$(awk -v i="$ITRS" -v s="$SECS" 'BEGIN { if (s > 0) printf "%.2f", i / s / 1e6 }')
  fi
  if   [ $rc -eq 124 ] || [ $rc -eq 137 ]; then STATUS=timeout
  elif [ $rc -ne 0 ]; then STATUS="error($rc)"
  else STATUS=ok; fi
  # The result: everything but stat lines ("- ...") and collapse counters ("#N").
  printf '%s\n' "$out" | grep -Ev '^- |^#[0-9]+$' | sed -E 's/ ?#[0-9]+$//' > "$TMP/$label.out"
}

# keep LABEL: after run, files the run under LABEL's round results when
# it ended well. median LABEL: of those, the run of median time, as run
# leaves it (ITRS, MIPS, SECS, WALL, PD, DEVM, STATUS, $TMP/LABEL.out).
# The median, not the best: it damps a noisy machine without crediting a
# -T collapse whose threads happened to meet a result early.
declare -A NKEPT=()
keep() {
  local label=$1 n=${NKEPT[$1]:-0}
  [ "$STATUS" = ok ] || return
  printf '%s %s %s %s %s %s\n' "${SECS:-0}" "$ITRS" "$MIPS" "$WALL" "$PD" "${DEVM:--}" > "$TMP/$label.r$n"
  cp "$TMP/$label.out" "$TMP/$label.o$n"
  NKEPT[$label]=$((n + 1))
}
median() {
  local label=$1 n=${NKEPT[$1]:-0} m
  if [ "$n" -eq 0 ]; then
    STATUS=${STATUS_LAST[$label]:-error}; ITRS=; MIPS=; SECS=; WALL=; PD=-; DEVM=-
    return
  fi
  m=$(for ((r = 0; r < n; r++)); do echo "$(cut -d' ' -f1 "$TMP/$label.r$r") $r"; done |
      sort -g | awk -v k=$(((n - 1) / 2)) 'NR == k + 1 { print $2 }')
  read -r SECS ITRS MIPS WALL PD DEVM < "$TMP/$label.r$m"
  STATUS=ok
  cp "$TMP/$label.o$m" "$TMP/$label.out"
}
declare -A STATUS_LAST=()

flags_of() {
  case "$1" in
    gen_*)      printf '%s ' -s -C1 ;;
    collapse_*) printf '%s ' -s -C ;;
    *)          printf '%s ' -s ;;
  esac
  printf '%s ' "${tflag[@]}"
}

cols=(ref cpu)
[ -n "$BASE" ] && cols+=(base)
[ "$GPU" = 1 ] && cols+=(gpu owner atomic)
dev=(--gpu --cpu-first=0); [ -n "$DEVICE" ] && dev+=("--device=$DEVICE")

printf '| %-24s | %12s |' program "ref itrs"
for c in "${cols[@]}"; do printf ' %10s |' "$c M/s"; done
[ "$GPU" = 1 ] && printf ' %10s | %10s | %15s | %15s | %8s | %8s | %8s | %4s |' "owner dev" "atomic dev" \
  "owner pass/def" "atomic pass/def" "cpu s" "--gpu s" "dev s" rule
[ -n "$BASE" ] && printf ' %8s |' new/base
printf ' %7s | %7s | %5s |\n' ratio time same
printf '|%s|%s|' "$(printf -- '-%.0s' {1..26})" "$(printf -- '-%.0s' {1..14})"
for c in "${cols[@]}"; do printf '%s|' "$(printf -- '-%.0s' {1..12})"; done
[ "$GPU" = 1 ] && printf '%s|%s|%s|%s|%s|%s|%s|%s|' "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..12})" \
  "$(printf -- '-%.0s' {1..17})" "$(printf -- '-%.0s' {1..17})" "$(printf -- '-%.0s' {1..10})" \
  "$(printf -- '-%.0s' {1..10})" "$(printf -- '-%.0s' {1..10})" "$(printf -- '-%.0s' {1..6})"
[ -n "$BASE" ] && printf '%s|' "$(printf -- '-%.0s' {1..10})"
printf '%s|%s|%s|\n' "$(printf -- '-%.0s' {1..9})" "$(printf -- '-%.0s' {1..9})" "$(printf -- '-%.0s' {1..7})"

for f in "${files[@]}"; do
  name=$(basename "$f" .hvm4)
  declare -A M=() S=() W=()
  NKEPT=(); STATUS_LAST=()
  # the columns interleaved: each round runs every one once
  for ((r = 0; r < REPEAT; r++)); do
    if [ -n "$REF" ]; then run ref "$f" "$REF"; STATUS_LAST[ref]=$STATUS; keep ref; fi
    if [ -n "$BASE" ] && [ $((r % 2)) -eq 1 ]; then run base "$f" "$BASE"; STATUS_LAST[base]=$STATUS; keep base; fi
    run cpu "$f" "$BIN"; STATUS_LAST[cpu]=$STATUS; keep cpu
    if [ -n "$BASE" ] && [ $((r % 2)) -eq 0 ]; then run base "$f" "$BASE"; STATUS_LAST[base]=$STATUS; keep base; fi
    if [ "$GPU" = 1 ]; then
      run gpu "$f" "$BIN" --gpu; STATUS_LAST[gpu]=$STATUS; keep gpu
      run owner "$f" "$BIN" "${dev[@]}" --dup=owner; STATUS_LAST[owner]=$STATUS; keep owner
      run atomic "$f" "$BIN" "${dev[@]}" --dup=atomic; STATUS_LAST[atomic]=$STATUS; keep atomic
    fi
  done
  ref_itrs="-"
  if [ -n "$REF" ]; then
    median ref
    M[ref]=${MIPS:--}; S[ref]=$STATUS; ref_itrs=${ITRS:--}; ref_secs=${SECS:-}
  else
    M[ref]="-"; S[ref]="-"; ref_secs=""
  fi
  median cpu
  M[cpu]=${MIPS:--}; S[cpu]=$STATUS; cpu_secs=${SECS:-}; W[cpu]=${WALL:--}
  if [ -n "$BASE" ]; then
    median base
    M[base]=${MIPS:--}; S[base]=$STATUS; W[base]=${WALL:--}
    vs_base=$(awk -v a="${W[cpu]}" -v b="${W[base]}" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }')
  fi
  if [ "$GPU" = 1 ]; then
    median gpu
    M[gpu]=${MIPS:--}; S[gpu]=$STATUS; W[gpu]=${WALL:--}
    median owner
    M[owner]=${MIPS:--}; S[owner]=$STATUS; PDO=$PD; DVO=${DEVM:--}; W[owner]=${WALL:--}
    median atomic
    M[atomic]=${MIPS:--}; S[atomic]=$STATUS; PDA=$PD; DVA=${DEVM:--}
    # --gpu's rule: within 1.1x of the faster of the CPU and the device, + 0.03 s
    rule=$(awk -v g="${W[gpu]}" -v c="${W[cpu]}" -v d="${W[owner]}" 'BEGIN {
      if (g + 0 <= 0 || c + 0 <= 0 || d + 0 <= 0) { print "-"; exit }
      m = c < d ? c : d; print (g <= 1.1 * m + 0.03) ? "yes" : "NO" }')
  fi
  # Equal results: every hvm4g run against the reference (or the CPU run).
  same=yes
  basecol=ref; [ -z "$REF" ] && basecol=cpu
  for c in "${cols[@]}"; do
    [ "$c" = "$basecol" ] && continue
    [ "$c" = ref ] && [ -z "$REF" ] && continue   # no reference run
    [ "${S[$c]}" = ok ] && [ "${S[$basecol]}" = ok ] || { same="-"; continue; }
    # -T N collapses print in the reference in any order: compare as sets
    if [ "$THREADS" -gt 1 ] && [[ "$name" == collapse_* ]]; then
      cmp -s <(sort "$TMP/$basecol.out") <(sort "$TMP/$c.out") || same=NO
    else
      cmp -s "$TMP/$basecol.out" "$TMP/$c.out" || same=NO
    fi
  done
  ratio=$(awk -v a="${M[cpu]}" -v b="${M[ref]}" 'BEGIN { if (b + 0 > 0 && a + 0 > 0) printf "%.2fx", a / b; else print "-" }')
  # wall time of the reference over hvm4g's (the runs' own Time lines): the
  # fair figure where -T changes the work (the first hit of a -C1 search)
  speed=$(awk -v a="$cpu_secs" -v b="$ref_secs" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", b / a; else print "-" }')
  printf '| %-24s | %12s |' "$name" "$ref_itrs"
  for c in "${cols[@]}"; do
    if [ "${S[$c]}" = ok ] || [ "${S[$c]}" = "-" ]; then printf ' %10s |' "${M[$c]}"
    else printf ' %10s |' "${S[$c]}"; fi
  done
  [ "$GPU" = 1 ] && printf ' %10s | %10s | %15s | %15s | %8s | %8s | %8s | %4s |' "$DVO" "$DVA" "$PDO" "$PDA" \
    "${W[cpu]}" "${W[gpu]}" "${W[owner]}" "$rule"
  [ -n "$BASE" ] && printf ' %8s |' "$vs_base"
  printf ' %7s | %7s | %5s |\n' "$ratio" "$speed" "$same"
  unset M S W
done

