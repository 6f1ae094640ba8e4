#!/usr/bin/env bash
# scripts/cuda_check.sh: checks the CUDA backend on a machine with an NVIDIA
# GPU (sm_90+, e.g. the H200). Builds hvm4g, runs every tests/golden and
# tests/gpu program on the CPU and with --device=cuda in both DUP modes,
# and with main on the CPU and each %gnf a CUDA run (outputs must be
# identical), and with a small device heap (--dev-heap=1M: reclaims in
# place, docs/memory.md), then compute-sanitizer memcheck and racecheck on
# a few tests/gpu programs and on a small heap's reclaims. Logs go to
# OUTDIR.
#
#   scripts/cuda_check.sh [OUTDIR]      (default: $OUT, else ./cuda-check)
#
# Environment: HVM4G_BIN (use this binary, skip the build), JOBS (parallel
# runs, default 6; the CUDA phases at most one per 28 GiB of GPU memory),
# TEST_TIMEOUT (seconds per program, default 30),
# SAN_TIMEOUT (seconds per sanitizer run, default 120), SKIP_SAN=1,
# PHASES (which to run, default all: owner atomic gnf tight small hybrid
# san; the cpu phase runs with any of the first five, which compare with
# it),
# SAN_PROGRAMS (the tests/gpu programs the sanitizer runs), PROGRAMS (the
# files the phases run, default tests/golden/*.hvm4 tests/gpu/*.hvm4).
# The last line is "N passed, N failed"; exit status non-zero on failure.

set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
OUTDIR=${1:-${OUT:-$ROOT/cuda-check}}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
JOBS=${JOBS:-6}
export TEST_TIMEOUT=${TEST_TIMEOUT:-30}
SAN_TIMEOUT=${SAN_TIMEOUT:-120}
RES=$OUTDIR/res
SUM=$OUTDIR/summary.txt
rm -rf "$RES"; mkdir -p "$RES"
: > "$SUM"
START=$(date +%s)

say() { printf '%s\n' "$*" | tee -a "$SUM"; }
PHASES=${PHASES:-owner atomic gnf tight small hybrid san}
want() { case " $PHASES " in *" $1 "*) return 0 ;; esac; return 1; }
# A phase's counts as soon as it ends: a run cut short still says them.
tally() {
  local d=$RES/$1
  [ -d "$d" ] || return 0
  say "$(printf '  %-12s %4d passed, %4d failed, %d skipped' "$1" \
    "$(find "$d" -name '*.pass' | wc -l)" "$(find "$d" -name '*.fail' | wc -l)" \
    "$(find "$d" -name '*.skip' | wc -l)")"
}

say "== cuda_check: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
{ nvidia-smi 2>&1 || echo "nvidia-smi: not available"; } > "$OUTDIR/nvidia-smi.txt"
say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n1)"

# --- build ------------------------------------------------------------------

if [ -n "${HVM4G_BIN:-}" ]; then
  BIN=$(cd "$(dirname "$HVM4G_BIN")" && pwd)/$(basename "$HVM4G_BIN")
  say "binary: $BIN (given)"
else
  if ! command -v nvcc > /dev/null 2>&1; then
    for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
      [ -x "$d/nvcc" ] && export PATH=$d:$PATH && break
    done
  fi
  command -v nvcc > /dev/null 2>&1 || say "warning: no nvcc: the build has no CUDA backend"
  if ! make -s -j"$(nproc)" BUILD=build-cuda hvm4g > "$OUTDIR/build.log" 2>&1; then
    say "build failed (see build.log):"; tail -n 20 "$OUTDIR/build.log" | tee -a "$SUM"
    say "0 passed, 1 failed"; exit 1
  fi
  BIN=$ROOT/hvm4g
  say "binary: built ($(grep -c nvcc "$OUTDIR/build.log" 2>/dev/null || echo 0) nvcc steps)"
fi

# The binary must see the device, else every cuda run below would fail the
# same way: say it once, clearly.
printf '@main = [1, 2]\n' > "$RES/probe.hvm4"
probe=$("$BIN" "$RES/probe.hvm4" -G --device=cuda -T1 -s 2>&1)
printf '%s\n' "$probe" > "$OUTDIR/probe.txt"
if ! printf '%s\n' "$probe" | grep -q 'Device: cuda'; then
  say "cuda device not usable by $BIN:"; printf '%s\n' "$probe" | head -n 5 | tee -a "$SUM"
  say "0 passed, 1 failed"; exit 1
fi

# --- cpu vs cuda ------------------------------------------------------------

LIST=$RES/programs.list
for f in ${PROGRAMS:-tests/golden/*.hvm4 tests/gpu/*.hvm4}; do
  case "$(basename "$f")" in _*) continue ;; esac
  printf '%s\n' "$ROOT/$f"
done > "$LIST"
say "programs: $(wc -l < "$LIST")"

par() { xargs -d '\n' -r -P "$P" -I{} bash "$ROOT/tests/lib.sh" "$@"; }

# A CUDA run here holds up to about 28 GiB (DH's 1G-word heap and its
# bitmaps, 8.4 GB; the lane stacks: 17.7 GB for the H200's 1.08M lanes, at
# most an eighth of the free memory; the default heap, the host's 2^32
# words, would take 36 GB more): more runs at once than the GPU holds
# leave one without a heap, and it falls back to the CPU with a message,
# which the equality check counts as a failure. So the CUDA phases run at
# most that many, each with a heap of DH words (the programs here need
# far less; a run that fills a given heap stops and the CPU finishes).
DH=--dev-heap=1G
CJOBS=$JOBS
MIB=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -n1 | tr -dc 0-9)
if [ -n "$MIB" ]; then
  fit=$(( MIB / 28672 )); [ "$fit" -lt 1 ] && fit=1
  [ "$CJOBS" -gt "$fit" ] && CJOBS=$fit
fi
say "jobs: $JOBS (CUDA phases: $CJOBS)"

# The CUDA phases compare with the CPU's outputs: only they need them.
# A program whose own args ask for --gpu uses the device here too, so no
# more run at once than in the CUDA phases (more left one without a device
# heap: tests/gpu/reach_slots fell back with a message).
if want owner || want atomic || want gnf || want tight || want small; then
  P=$CJOBS par check cpu "$BIN" {} "$RES" < "$LIST"
  tally cpu
fi
# -T1: the device from the start (--gpu alone starts on a pool of every
# core, and short programs never reach the device); a program's own
# `// args: -T4 ...` still wins.
for dup in owner atomic; do
  want "$dup" || continue
  P=$CJOBS par same "cuda-$dup" cpu "$BIN" {} "$RES" -G --device=cuda -T1 "--dup=$dup" "$DH" < "$LIST"
  tally "cuda-$dup"
done
# Main on the CPU, each %gnf a device run (no --gpu): runs one after
# another in a process, a later one copying in over pages an earlier one
# pinned (tests/gpu/pack_gnf_twice_big.hvm4).
if want gnf; then
  # only the programs with a %gnf: --device names nothing to run otherwise
  grep -l '%gnf' $(cat "$LIST") > "$LIST.gnf" || true
  P=$CJOBS par same "cuda-gnf" cpu "$BIN" {} "$RES" --device=cuda "$DH" < "$LIST.gnf"
  tally cuda-gnf
fi
# Small lanes and regions: more deferrals and races per program.
if want tight; then
  P=$CJOBS par same "cuda-tight" cpu "$BIN" {} "$RES" -G --device=cuda -T1 --dup=owner "$DH" \
    --lanes=256 --region-shift=8 --budget=64 < "$LIST"
  tally cuda-tight
fi
# A small device heap (SMALL_DH; raised to what a run takes at least:
# twice the words in use and 1M more): the runs that allocate more reclaim
# in place between passes and go on (docs/memory.md); a run whose live
# words do not fit hands the rest to the CPU. 8,192 lanes keep the lanes'
# arenas within the heap.
# Such a run holds well under a GiB (its lane stacks 134 MB, its heap a few
# MB), so these phases run JOBS at once; the GPU is time-sliced among them,
# and each run's time limit grows by as much.
SMALL_DH=--dev-heap=1M
SMALL_TIMEOUT=$(( TEST_TIMEOUT * JOBS / CJOBS ))
for dup in owner atomic; do
  want small || continue
  P=$JOBS TEST_TIMEOUT=$SMALL_TIMEOUT par same "cuda-small-$dup" cpu "$BIN" {} "$RES" -G --device=cuda -T1 "--dup=$dup" \
    "$SMALL_DH" --lanes=8192 < "$LIST"
  tally "cuda-small-$dup"
done

# --- hybrid: when the context is made (--warm-after) -------------------------

# Under --gpu -T N the context is made only after --warm-after ms of CPU
# work: a run the pool ends sooner must not make one, and one that runs
# longer must be taken over by the device, with the CPU's output.
if want hybrid; then
mkdir -p "$RES/hybrid"
hyb() {   # name, expected -s pattern, args...
  local name=$1 want=$2; shift 2
  local got; got=$(timeout -k 5 "$TEST_TIMEOUT" "$BIN" "$@" -s 2>&1)
  if printf '%s\n' "$got" | grep -q -- "$want"; then : > "$RES/hybrid/$name.pass"
  else { echo "no '$want' in:"; printf '%s\n' "$got" | tail -n 20; } > "$RES/hybrid/$name.fail"; fi
}
# hyb_same NAME PATTERN WANT ARGS...: as hyb, and the same run's output
# (its -s lines left out) is the one whose md5 WANT holds (-T4's).
hyb_same() {
  local name=$1 pat=$2 w=$3; shift 3
  local got; got=$(timeout -k 5 "$TEST_TIMEOUT" "$BIN" "$@" -s 2>&1)
  if ! printf '%s\n' "$got" | grep -q -- "$pat"; then
    { echo "no '$pat' in:"; printf '%s\n' "$got" | tail -n 20; } > "$RES/hybrid/$name.fail"
  elif [ "$(printf '%s\n' "$got" | grep -v '^- ' | md5sum)" != "$w" ]; then
    echo "output differs from -T4's" > "$RES/hybrid/$name.fail"
  else
    : > "$RES/hybrid/$name.pass"
  fi
}
hyb short_no_context 'Device: not used (the CPU finished before the device could pay: --warm-after, --cpu-first; no context made)' "$RES/probe.hvm4" -G -T4
hyb at_once_context 'Device: not used (the CPU finished first; context started 0.000' "$RES/probe.hvm4" -G -T4 --warm-after=0
want=$("$BIN" "$ROOT/bench/gpu_tree_map.hvm4" -T4 2>&1 | md5sum)
hyb_same long_taken_over 'Device took over from the CPU: 1 run' "$want" \
  "$ROOT/bench/gpu_tree_map.hvm4" -G -T4 --warm-after=1 --cpu-first=1024 --take-max=4G
# A wide run whose tasks are each long makes --cpu-first tasks only near
# its end: once the pool has run a second, a 64th of them is enough
# (sched.c, LONG_TURN). 16,384 leaves of a 1,000-step loop: about 5 s on
# four cores, a second of it before the device takes over.
sed 's/@loop(4460, x), @gen(16, 0)/@loop(1000, x), @gen(14, 0)/' "$ROOT/bench/big_long_loops.hvm4" > "$RES/long_leaves.hvm4"
hyb_same long_leaves_taken 'Device started over from the program: 1 run' \
  "$("$BIN" "$RES/long_leaves.hvm4" -T4 2>&1 | md5sum)" "$RES/long_leaves.hvm4" -G -T4
# --gpu alone starts on a pool of every core: the probe ends there.
hyb default_pool 'Device: not used (the CPU finished before the device could pay' "$RES/probe.hvm4" -G
# Past --take-max the device starts over from the program (--restart),
# with the CPU's output.
# -T2: the pool needs about 0.5 s, the context 0.25 s.
hyb_same restart_taken 'Device started over from the program: 1 run' "$want" \
  "$ROOT/bench/gpu_tree_map.hvm4" -G -T2 --warm-after=1 --cpu-first=1024 --take-max=1M

# A device heap that fills grows, and the next run goes on from what the
# last one packed: its copy in once failed (the first run's pinned pages
# at the heap's start, "heap copy in: invalid argument", run41b).
# HVM4G_DEV_HEAP_START makes the first heap small (32M words; the tree map
# allocates 125M on sim), and 65,536 lanes keep the lanes' arenas and
# regions well inside it, so that the first run packs a partial result of
# several MB before the heap grows. Same output as -T4's, and no message.
# tree_same NAME PATTERN [ENV=V ...] -- ARGS...: the tree map on CUDA with
# ARGS and -s prints the -s line PATTERN (grep -E), no hvm4g: message, and
# the output of -T4 (want).
tree_same() {
  local name=$1 pat=$2 got; shift 2
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  got=$(env "${envs[@]}" timeout -k 5 "$TEST_TIMEOUT" "$BIN" "$ROOT/bench/gpu_tree_map.hvm4" -G --device=cuda -T1 "$@" -s 2>&1)
  if printf '%s\n' "$got" | grep -Eq -- "$pat" &&
     ! printf '%s\n' "$got" | grep -q '^hvm4g:' &&
     [ "$(printf '%s\n' "$got" | grep -v '^- ' | md5sum)" = "$want" ]; then
    : > "$RES/hybrid/$name.pass"
  else { echo "no /$pat/, a message, or another output:"; printf '%s\n' "$got" | tail -n 30; } > "$RES/hybrid/$name.fail"; fi
}
# A small first heap either reclaims in place (its live words fit half of
# it) or grows (they do not): either way the output of -T4 and no message.
tree_same grown_heap '^- Device (runs: [2-5]|reclaims: [1-9][0-9]* in place)' HVM4G_DEV_HEAP_START=32M -- --lanes=65536

# A heap that cannot grow (--dev-heap) reclaims in place between passes
# and goes on in one run (pass.c, docs/memory.md): the wide map with a
# leaf loop of 72 at depth 12 allocates about 6.3M words; 4M hold it with
# reclaims, with the output of -T4. --handoff=0: 128 lanes run under the
# slow-pass rate (pass.c), which would hand the run to the CPU before the
# heap fills.
sed 's/@loop(18, x)/@loop(72, x)/; s/@gen(21, 0)/@gen(12, 0)/' "$ROOT/bench/gpu_wide_map.hvm4" > "$RES/long_map.hvm4"
lwant=$("$BIN" "$RES/long_map.hvm4" -T4 2>&1 | md5sum)
got=$(timeout -k 5 "$TEST_TIMEOUT" "$BIN" "$RES/long_map.hvm4" -G --device=cuda -T1 --dev-heap=4M --lanes=128 --handoff=0 -s 2>&1)
if printf '%s\n' "$got" | grep -Eq '^- Device runs: 1$' &&
   printf '%s\n' "$got" | grep -Eq '^- Device reclaims: [1-9][0-9]* in place' &&
   [ "$(printf '%s\n' "$got" | grep -v '^- ' | md5sum)" = "$lwant" ]; then
  : > "$RES/hybrid/heap_again.pass"
else { echo "not one run with reclaims, or another output:"; printf '%s\n' "$got" | tail -n 30; } > "$RES/hybrid/heap_again.fail"; fi

# The strict loop and the repeated tree at a size the device finishes in
# seconds (14M and 40M words allocated), in a 16M-word host heap and a 2M
# device heap: reclaims in place, the CPU's output and interaction count.
for p in mem_dev_loop mem_dev_tree; do
  for dup in owner atomic; do
    f=$ROOT/tests/gpu/$p.hvm4
    cw=$("$BIN" "$f" -T1 -s 2>&1 | grep -E '^[^-]|^- Itrs:' | md5sum)
    got=$(timeout -k 5 "$TEST_TIMEOUT" "$BIN" "$f" -G --device=cuda -T1 "--dup=$dup" --heap=16M --dev-heap=2M --handoff=0 -s 2>&1)
    if printf '%s\n' "$got" | grep -Eq '^- Device reclaims: [1-9][0-9]* in place' &&
       [ "$(printf '%s\n' "$got" | grep -E '^[^-]|^- Itrs:' | md5sum)" = "$cw" ]; then
      : > "$RES/hybrid/reclaim_$p-$dup.pass"
    else { echo "no reclaim, or another output or count:"; printf '%s\n' "$got" | tail -n 30; } > "$RES/hybrid/reclaim_$p-$dup.fail"; fi
  done
done

# A result larger than the pages pinned ahead: its tail is faulted in and
# pinned on a thread while the copy kernels run (c48b556). --pin-ahead=0
# makes the whole 6.3 MB result that tail; 512K words (one 4 MB chunk)
# leave 2.3 MB of it.
for pa in 0 512K; do
  tree_same "tail_behind_$pa" 'MB into pages pinned ahead, [1-9][0-9.]* MB pinned behind the packing' \
    -- "$DH" --pin-ahead=$pa
done
tally hybrid
fi

# --- compute-sanitizer -------------------------------------------------------

SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n1)
if [ "${SKIP_SAN:-0}" = 1 ] || ! want san; then
  say "compute-sanitizer: skipped (SKIP_SAN=1 or not in PHASES)"
elif [ -z "$SAN" ]; then
  say "compute-sanitizer: not found, skipped"
else
  mkdir -p "$RES/sanitizer"
  # san_run NAME TOOL DIR WANT ARGS...: hvm4g ARGS under the sanitizer's
  # TOOL, run in DIR; passes with no error or hazard and, unless WANT is
  # empty, a log line matching WANT (grep -E).
  san_run() {
    local name=$1 tool=$2 dir=$3 want=$4; shift 4
    local log=$OUTDIR/san-$name.log rc
    (cd "$dir" && timeout -k 5 "$SAN_TIMEOUT" "$SAN" --tool "$tool" \
       --error-exitcode 99 "$BIN" "$@") > "$log" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -q 'ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards' "$log" &&
       { [ -z "$want" ] || grep -Eq -- "$want" "$log"; }; then
      : > "$RES/sanitizer/$name.pass"
    elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
      echo "timeout (${SAN_TIMEOUT}s)" > "$RES/sanitizer/$name.fail"
    else
      { echo "exit $rc"; grep -m3 -E 'ERROR|Invalid|hazard|SUMMARY|reclaims' "$log"; } > "$RES/sanitizer/$name.fail"
    fi
  }
  # A small device heap's reclaims in place among them (few rounds, so that
  # the checked run stays within SAN_TIMEOUT).
  sed 's/@rep(300, 0)/@rep(20, 0)/' tests/gpu/mem_dev_tree.hvm4 > "$RES/mem_san_tree.hvm4"
  # One line a run (name tool dir want args...), run SAN_JOBS at once: a
  # checked run is slow, and with 512 lanes and a heap of SAN_DH words it
  # holds a few GiB with the sanitizer's shadow memory.
  SAN_DH=--dev-heap=64M
  SAN_JOBS=$JOBS
  [ -n "$MIB" ] && [ "$SAN_JOBS" -gt $(( MIB / 8192 + 1 )) ] && SAN_JOBS=$(( MIB / 8192 + 1 ))
  for tool in memcheck racecheck; do
    for dup in owner atomic; do
      for p in ${SAN_PROGRAMS:-wide_tree shared_tree church_nc gnf_log list_spine pack_gnf_shared pack_stop_passes cpu_first_sparks}; do
        [ -f "tests/gpu/$p.hvm4" ] || continue
        echo "$p-$tool-$dup $tool tests/gpu '' $p.hvm4 -G --device=cuda -T1 --dup=$dup $SAN_DH --lanes=512 --stack=1024"
      done
      echo "mem_san_tree-$tool-$dup $tool $RES '^- Device reclaims: [1-9]' mem_san_tree.hvm4 -G --device=cuda -T1 --dup=$dup --dev-heap=1M --lanes=512 --stack=1024 --handoff=0 -s"
    done
  done > "$RES/san.list"
  export -f san_run
  export SAN SAN_TIMEOUT BIN OUTDIR RES
  xargs -d '\n' -r -P "$SAN_JOBS" -I{} bash -c 'eval "san_run $1"' san {} < "$RES/san.list"
  say "compute-sanitizer: $(wc -l < "$RES/san.list") runs, $SAN_JOBS at once"
  # Keep the folder small: one combined sanitizer log.
  cat "$OUTDIR"/san-*.log > "$OUTDIR/sanitizer.log" 2>/dev/null && rm -f "$OUTDIR"/san-*.log
fi

# --- report -----------------------------------------------------------------

pass=0; fail=0
for phase in cpu cuda-owner cuda-atomic cuda-gnf cuda-tight cuda-small-owner cuda-small-atomic hybrid sanitizer; do
  [ -d "$RES/$phase" ] || continue
  p=$(find "$RES/$phase" -name '*.pass' | wc -l)
  f=$(find "$RES/$phase" -name '*.fail' | wc -l)
  for fl in $(find "$RES/$phase" -name '*.fail' | sort); do
    say "[FAIL] $phase/$(basename "$fl" .fail): $(head -n1 "$fl")"
  done
  tally "$phase"
  # CPU failures are the evaluator's, not the device's: reported, not counted.
  [ "$phase" = cpu ] && continue
  pass=$((pass + p)); fail=$((fail + f))
done
# Per-program failure details in one file.
find "$RES" -name '*.fail' | sort | while read -r fl; do
  echo "== ${fl#"$RES"/}"; cat "$fl"
done > "$OUTDIR/failures.txt"
# Few files: the per-program results as one archive.
tar czf "$OUTDIR/results.tar.gz" -C "$OUTDIR" res && rm -rf "$RES"
say "time: $(( $(date +%s) - START )) s"
say "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
