#!/usr/bin/env bash
# tests/run.sh: every test of hvm4g (`make test`, CI). The last line is
# "N passed, N failed"; the exit status is non-zero if anything failed.
#
# Phases (tests/README.md explains each):
#   build      make ./hvm4g
#   layers     `make layers`: the layer rule (STYLE.md)
#   unit       tests/unit/test_*.c, one program each, linked with the
#              runtime's library (libhvm4g.a, built without CUDA)
#   examples   examples/*.c against that library, and the example in
#              include/hvm4g.h's comment (as C and C++)
#   cpu        tests/golden/*.hvm4, tests/gpu/*.hvm4 and generated programs,
#              on the CPU
#   sim-owner  the same on the simulated device (--dup=owner): output must
#   sim-atomic equal the CPU run's (--dup=atomic likewise)
#   warp-*     the same with the lanes in lock step (--warp-model), both
#              DUP modes (atomic: lanes waiting for their warp, --warp-wait)
#   spark-*    every program on sim with a spark offered after every
#              interaction (--gpu-spark-gap=1), both DUP modes
#   wait-*     every program on sim with lanes that wait for held DUP
#              slots (--dup-wait=4096, four threads), both DUP modes
#   poison-*   the device programs on sim with the words the copy in skips
#              poisoned (HVM4G_SIM_POISON), both DUP modes
#   metal-*    the Metal kernels on CPU threads (build-metal/hvm4g-mtl):
#              output must equal the CPU run's, both DUP modes
#   ref-*      the reference's tests, when HVM4_REF_TESTS is set
#   upstream*  tests/upstream/ (today's HVM4's newest programs) by its runner
#   clang-*    HVM4's clang-era test folder (tests/upstream/clang) as its own
#              runner runs it: -T1, -T4, sim in both DUP modes
#   spec-*     hvm4-spec's test folder (tests/upstream/hvm4-spec) likewise
#   asan-*     an ASan+UBSan build re-runs unit, examples (leaks reported)
#              and cpu (SKIP_ASAN=1 skips)
#   tsan-*     thread-sanitizer builds run the examples and the thread_*
#              programs (-T)
#   mem-limits the default heap under ulimit -v, the exhausted heap's message
#   mem-fit    every bench/ and tests/gpu/ program in a heap of 8x its peak
#              live words (tests/mem/fit.sh; not in QUICK)
#
# Environment: HVM4G_BIN (test this binary instead of building ./hvm4g), JOBS (parallel runs, default nproc), TEST_TIMEOUT (seconds
# per program), SKIP_ASAN=1 or RUN_SANITIZE=0, SKIP_SIM=1, SKIP_METAL=1, HVM4_REF_TESTS,
# ONLY=<glob> (golden names to run, e.g. ONLY='dup_*'), VERBOSE=1,
# QUICK=1 (`make check`: build, layers, unit, examples, cpu, and one program in four
# on the simulated device in each DUP mode, free and in lock step, upstream, clang-t1, spec-t1, ffi).

set -u
# A relative HVM4G_BIN is relative to where we were called from.
[[ "${HVM4G_BIN:-}" == */* ]] && HVM4G_BIN=$(realpath -m "$HVM4G_BIN")
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
RUN_SANITIZE=${RUN_SANITIZE:-1}
[ "${SKIP_ASAN:-0}" = 1 ] && RUN_SANITIZE=0
QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then RUN_SANITIZE=0; SKIP_METAL=1; fi
ONLY=${ONLY:-*}
CC=${CC:-cc}
export TEST_TIMEOUT=${TEST_TIMEOUT:-120}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/hvm4g-tests.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
RES=$TMP/res
mkdir -p "$RES"
PHASES=()

say() { printf '%s\n' "$*"; }

# Records a single pass/fail for a phase-level step (build, unit program).
record() {
  local phase=$1 name=$2 ok=$3 why=${4:-}
  mkdir -p "$RES/$phase"
  if [ "$ok" = 1 ]; then : > "$RES/$phase/$name.pass"
  else printf '%s\n' "$why" > "$RES/$phase/$name.fail"; fi
}

add_phase() { PHASES+=("$1"); mkdir -p "$RES/$1"; }

# Prints a phase's failures and its counts.
report_phase() {
  local phase=$1 p f s n
  p=$(find "$RES/$phase" -name '*.pass' | wc -l)
  f=$(find "$RES/$phase" -name '*.fail' | wc -l)
  s=$(find "$RES/$phase" -name '*.skip' | wc -l)
  local fl
  for fl in $(find "$RES/$phase" -name '*.fail' | sort); do
    say "[FAIL] $phase/$(basename "$fl" .fail): $(head -n1 "$fl")"
    [ "${VERBOSE:-0}" = 1 ] && tail -n +2 "$fl"
  done
  if [ "${VERBOSE:-0}" = 1 ]; then
    for fl in $(find "$RES/$phase" -name '*.skip' | sort); do
      say "[SKIP] $phase/$(basename "$fl" .skip): $(cat "$fl")"
    done
  fi
  printf '  %-13s %4d passed, %4d failed' "$phase" "$p" "$f"
  [ "$s" -gt 0 ] && printf ', %d skipped (VERBOSE=1 says why)' "$s"
  printf '\n'
}

# --- test programs --------------------------------------------------------

# Golden programs (files starting with _ are helpers, not tests), and the
# device stress programs of tests/gpu/ (same format).
golden_list() {
  local f
  for f in tests/golden/$ONLY.hvm4 tests/gpu/$ONLY.hvm4; do
    [ -f "$f" ] || continue
    case "$(basename "$f")" in _*) continue ;; esac
    printf '%s\n' "$ROOT/$f"
  done
}

# N nested copies of OPEN around ATOM, closed by CLOSE, on one line.
nest() {
  awk -v n="$1" -v o="$2" -v a="$3" -v c="$4" \
    'BEGIN { for (i = 0; i < n; i++) printf "%s", o; printf "%s", a;
             for (i = 0; i < n; i++) printf "%s", c; print "" }'
}

# Generated programs: too big to keep in the repository.
gen_programs() {
  local g=$TMP/gen
  mkdir -p "$g"
  # A 200,000-deep parenthesised term: must not crash (a clean error is ok).
  {
    echo '// match: nocrash'
    printf '@main = '
    nest 200000 '(' 1 ')'
    echo '//1'
  } > "$g/gen_deep_parens.hvm4"
  # A 100,000-deep constructor nest, printed back (deep printer recursion).
  {
    echo '// match: nocrash'
    printf '@main = '
    nest 100000 '#S{' '#Z' '}'
    printf '//'
    nest 100000 '#S{' '#Z{}' '}'
  } > "$g/gen_deep_ctr.hvm4"
  # A 100,000-element list literal.
  {
    echo '// match: nocrash'
    printf '@main = ['
    awk 'BEGIN { for (i = 0; i < 100000; i++) printf "%d,", i % 10; print "7]" }'
    printf '//['
    awk 'BEGIN { for (i = 0; i < 100000; i++) printf "%d,", i % 10; print "7]" }'
  } > "$g/gen_long_list.hvm4"
  # Random trees of SUPs, ↑ and ↑↑ (thread_rand_*): their -T output must be
  # the -T1 output of the binary under test, which the file then expects.
  # They drive the -T collapse through chunks, summaries and kids. With
  # errors (thread_rand_err_*): the lines before the first error in
  # single-thread order, then that error, whatever the pool ran ahead.
  local seed
  for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do
    if [ $((seed % 2)) = 1 ]; then rand_test "$g" thread_rand_$seed "$seed" 14 0 -C 3
    else                           rand_test "$g" thread_rand_$seed "$seed" 19 0 -C200 5; fi
  done
  for seed in 1 2 4 5; do
    rand_test "$g" thread_rand_err_$seed "$seed" 16 1 -C 4
  done
  # 1,024 branches sharing stuck DUPs, which threads collapsing ahead take
  # BUSY while the printer reads them (printed '?127' in 6-12 runs of 20).
  t1_test "$g" thread_shared_dups -C 4 20 <<'EOF'
// Collapsing ahead while the printer reads the DUPs the branches share.
@t = λ{0: λ&a.a; λ&n.λ&a.@up(&B{@t(n - 1, a * 2), @t(n - 1, a * 2 + 1)}, a)}
@main = @t(10, 1)
EOF
  # A λ&f used 80,000 times in a lambda never applied: a chain of stuck
  # DUPs (31 s when each use walked the chain; now well under 1 s). -S:
  # normalized, not printed (the test is of time). On sim too: the device
  # walked the chain once per use (45 s in atomic mode), now 0.5 s.
  {
    echo '// timeout: 10'
    echo '// args: -S'
    printf '@main = λ&f.'
    nest 80000 'f(' 1 ')'
    echo '//!- Itrs: 0 interactions'
  } > "$g/gen_dup_chain.hvm4"
  # The same chain under a collapse (-C1): the device left stuck DUPs to
  # the collapser without claiming them, so nothing made a use O(1) (16 s
  # on sim in both modes, fuzz seed 460302654 case 1859; now 0.15 s).
  {
    echo '// timeout: 10'
    echo '// args: -S'
    printf '@main = λ&f.'
    nest 80000 'f(' 1 ')'
    echo '//- Itrs: 79999 interactions'
  } > "$g/gen_dup_chain_c.hvm4"
  # An include path longer than PATH_MAX ends in the name of a file that
  # exists once cut short; it is an error naming the path, never that file.
  mkdir -p "$g/_chain"
  echo '@main = 7' > "$g/_chain/inc_target.hvm4"
  {
    echo '// exit: nonzero'
    echo '// match: regex'
    printf '#include "'
    awk 'BEGIN { for (i = 0; i < 2100; i++) printf "./"; print "_chain/inc_target.hvm4.EXPECTED\"" }'
    echo '@main = 1'
    echo '//longer than the system allows.*inc_target\.hvm4\.EXPECTED'
  } > "$g/err_include_path_long.hvm4"
  # A chain of 3,000 nested includes: refused at a bounded depth with a
  # message, not followed down the C stack (SIGSEGV under a 1 GB limit).
  awk -v d="$g/_chain" 'BEGIN { for (i = 0; i < 3000; i++) printf "#include \"c%d.hvm4\"\n", i + 1 > (d "/c" i ".hvm4");
                               print "@main = 1" > (d "/c3000.hvm4") }'
  {
    echo '// exit: nonzero'
    echo '// match: regex'
    echo '#include "_chain/c0.hvm4"'
    echo '//c[0-9]+\.hvm4:[0-9]+:[0-9]+'
    echo '//includes nested deeper than [0-9]+ files'
  } > "$g/err_include_deep.hvm4"
  # A chain within the bound reads every file.
  awk -v d="$g/_chain" 'BEGIN { for (i = 0; i < 100; i++) printf "#include \"s%d.hvm4\"\n", i + 1 > (d "/s" i ".hvm4");
                               print "@main = 100" > (d "/s100.hvm4") }'
  printf '#include "_chain/s0.hvm4"\n//!100\n' > "$g/include_chain_100.hvm4"
  if [ "$ONLY" = '*' ]; then
    printf '%s\n' "$g"/*.hvm4
  fi
}

# rand_test DIR NAME SEED DEPTH ERR LIMIT THREADS: a rand_tree as a t1_test.
rand_test() {
  {
    [ "$5" = 1 ] && echo "// cpu-only: --gpu normalizes (and meets an error) before collapsing"
    echo "// Random tree (seed $3): the expected lines are this binary's -T1 output."
    rand_tree "$3" "$4" "$5"
  } | t1_test "$1" "$2" "$6" "$7" 1
}

# t1_test DIR NAME LIMIT THREADS REPEAT: writes DIR/NAME.hvm4, the program
# on stdin run REPEAT times with -TTHREADS LIMIT, expecting this binary's
# -T1 output.
t1_test() {
  local f=$1/$2.hvm4
  { echo "// args: -T$4 $3"; echo "// repeat: $5"; cat; } > "$f.src"
  (cd "$1" && "$BIN" "$f.src" $3 -T1 2>&1) | sed 's|^|//|' > "$f.out"
  cat "$f.src" "$f.out" > "$f"
  rm -f "$f.src" "$f.out"
}

# rand_tree SEED DEPTH [ERR]: an @main of SUPs (four labels), ↑, ↑↑,
# numbered leaves and erasures, drawn with awk's generator from SEED; the
# top three levels are SUPs. With ERR=1, some leaves apply a number: a
# runtime error once the collapse reaches one.
rand_tree() {
  awk -v seed="$1" -v depth="$2" -v err="${3:-0}" '
    function t(d,   r, lab) {
      r = depth - d < 3 ? 1 : rand()   # SUPs at the top: many branches
      if (d == 0 || r < 0.15) {
        n++; x = rand()
        if (x < (err ? 0.85 : 0.9)) return "#L{" n "}"
        return !err || x < 0.97 ? "&{}" : "1(2)"
      }
      if (r < 0.35) return "↑" t(d - 1)
      if (r < 0.45) return "↑↑" t(d - 1)
      lab = substr("ABCD", int(rand() * 4) + 1, 1)
      return "&" lab "{" t(d - 1) "," t(d - 1) "}"
    }
    BEGIN { srand(seed); print "@main = " t(depth) }'
}

# Runs lib.sh over a list of files in parallel.
par() { xargs -d '\n' -r -P "$JOBS" -I{} bash "$ROOT/tests/lib.sh" "$@"; }

# --- phase: build ---------------------------------------------------------

say "== hvm4g tests: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $JOBS jobs"
add_phase build
if [ -n "${HVM4G_BIN:-}" ]; then
  record build hvm4g 1          # a given binary (e.g. the reference) is used as is
elif make -s hvm4g > "$TMP/build.log" 2>&1 && [ -x ./hvm4g ]; then
  record build hvm4g 1
else
  record build hvm4g 0 "make failed: $(grep -m1 -iE 'error|\*\*\*' "$TMP/build.log")"
  tail -n 20 "$TMP/build.log"
fi
# `make CFLAGS=...` replaces the user's flags only: every compile (a dry run
# here) still has the project's own (-std=gnu11 -Isrc ...).
if make -s -n -B CFLAGS=-O0 build/src/heap/heap.o 2>&1 | grep -q -- '-std=gnu11.*-Isrc'; then
  record build make-cflags 1
else
  record build make-cflags 0 "make CFLAGS=-O0 drops the required flags"
fi
# Builds with other tunables (src/core/tune.h) still compile: one with
# tests/tune_user.h as HVM4G_USER_H, which overrides each of them and turns
# the diagnostics on (the simulator and the pass loop; where nvcc exists,
# the CUDA backend, PTX only). tune-user checks that the override applies.
if [ "$QUICK" != 1 ]; then
variant_check() {   # name, compiler command...
  local name=$1; shift
  if "$@" > "$TMP/variant-$name.log" 2>&1; then record build "$name" 1
  else record build "$name" 0 "$(grep -m1 -iE 'error' "$TMP/variant-$name.log")"; fi
}
USER_H=(-Isrc -Iinclude -Itests '-DHVM4G_USER_H="tune_user.h"')
printf '#include "core/tune.h"\n_Static_assert(NARROW_BUDGET == 128u && LANE_CLOCK, "");\n' \
  > "$TMP/tune_user.c"
variant_check tune-user "$CC" -std=gnu11 "${USER_H[@]}" -fsyntax-only "$TMP/tune_user.c"
for f in src/dev/sim.c src/dev/pass.c; do
  n=$(basename "$f" .c)
  variant_check "tune-$n" "$CC" -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
    -Wno-unused-function -Werror "${USER_H[@]}" -fsyntax-only "$f"
done
NVCC_BIN=$(command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
# Built where no GPU is visible, the binary holds code for every GPU
# architecture from 7.5 on that nvcc has (at least five), and PTX.
if [ -n "$NVCC_BIN" ] && ./hvm4g --version | grep -q '^cuda architectures: [sc]' && ! nvidia-smi -L > /dev/null 2>&1; then
  codes=$(python3 tests/fatbin_archs.py ./hvm4g)
  sass=$(printf '%s\n' "$codes" | grep -c '^sm_')
  ptx=$(printf '%s\n' "$codes" | grep -c '^compute_')
  if [ "$sass" -ge 5 ] && [ "$ptx" -ge 1 ]; then record build cuda-archs 1
  else record build cuda-archs 0 "./hvm4g holds code for $sass GPU architectures and $ptx PTX (want >= 5, >= 1): $(echo $codes)"; fi
fi
if [ -n "$NVCC_BIN" ]; then
  variant_check tune-cuda "$NVCC_BIN" -arch=sm_90 "${USER_H[@]}" -ptx -o /dev/null src/dev/cuda/cuda.cu
fi
fi
BIN=${HVM4G_BIN:-$ROOT/hvm4g}

# --- phase: layers ----------------------------------------------------------

add_phase layers
if make -s layers > "$TMP/layers.log" 2>&1; then
  record layers rule 1
else
  record layers rule 0 "$(grep -m1 'layers:' "$TMP/layers.log")"
  cat "$TMP/layers.log"
fi

# --- phase: unit ------------------------------------------------------------

# Each tests/unit/test_X.c is a standalone program linked with every src/
# file except main.c; it passes when it exits 0 and ends with
# "N passed, 0 failed".
# The library of a unit phase: built by make in its own folder (kept
# between runs), without CUDA, whose runtime the tests do not link.
unit_lib() {   # phase, cflags -> the archive's path, or nothing
  local dir=$ROOT/build-$1
  if make -s NVCC= METAL= BUILD="$dir" CFLAGS="$2" "$dir/libhvm4g.a" > "$TMP/$1-lib.log" 2>&1; then
    printf '%s\n' "$dir/libhvm4g.a"
  fi
}

unit_phase() {
  local phase=$1 cflags=$2 t name exe log
  add_phase "$phase"
  mkdir -p "$TMP/$phase"
  local lib
  lib=$(unit_lib "$phase" "$cflags")
  if [ -z "$lib" ]; then
    record "$phase" library 0 "make libhvm4g.a failed: $(grep -m1 -iE 'error|\*\*\*' "$TMP/$phase-lib.log")"
    return
  fi
  for t in tests/unit/test_*.c; do
    [ -f "$t" ] || continue
    name=$(basename "$t" .c)
    exe=$TMP/$phase/$name; log=$TMP/$phase/$name.log
    (
      # shellcheck disable=SC2086
      if ! $CC -std=gnu11 $cflags -Isrc -Iinclude -Itests/unit -o "$exe" "$t" "$lib" \
           -lpthread -lm -ldl > "$log" 2>&1; then
        record "$phase" "$name" 0 "compile failed: $(grep -m1 'error' "$log")"
        exit
      fi
      timeout -k 5 "$((TEST_TIMEOUT * 3))" "$exe" > "$log.run" 2>&1
      rc=$?
      last=$(tail -n 1 "$log.run")
      if grep -Eq 'ERROR: (Address|Leak)Sanitizer|: runtime error: ' "$log.run"; then
        record "$phase" "$name" 0 "sanitizer report: $(grep -m1 -E 'Sanitizer|runtime error' "$log.run")"
      elif [ $rc -ne 0 ]; then
        record "$phase" "$name" 0 "exit status $rc; last line: $last"
      elif [[ "$last" =~ ^[0-9]+\ passed,\ 0\ failed$ ]]; then
        record "$phase" "$name" 1
      else
        record "$phase" "$name" 0 "last line is not 'N passed, 0 failed': $last"
      fi
      [ "${VERBOSE:-0}" = 1 ] && sed "s/^/  $name: /" "$log.run"
    ) &
    # Keep at most JOBS compilers running.
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  done
  wait
}

UNIT_CFLAGS="-O1 -g -Wall -Wextra -Wno-unused-parameter -Wno-unused-function"
unit_phase unit "$UNIT_CFLAGS"

# --- phase: examples --------------------------------------------------------
# The library's examples (examples/*.c), built by make against a unit
# phase's libhvm4g.a with the public header alone, each run: embed (its
# built-in program), many (1,000 runtimes one after another: each result,
# flat resident memory, no thread left), threads (two runtimes at once);
# and the example in include/hvm4g.h's comment, as C and as C++ (its
# extern "C"), which must print 42.

# The header's example as a program.
header_example() {
  printf '#include <stdio.h>\n#include <hvm4g.h>\nint main(void) {\n'
  awk '/^\*\*   hvm4g_config c;/ { on = 1 }
       on { sub(/^\*\*   /, ""); print }
       on && /hvm4g_close\(h\);$/ { exit }' include/hvm4g.h
  printf '  return 0;\n}\n'
}

# example_run PHASE NAME REGEX CMD..: CMD exits 0 with no sanitizer report
# and a line of its output matching REGEX.
example_run() {
  local phase=$1 name=$2 re=$3 out rc
  shift 3
  out=$(timeout -k 5 "$TEST_TIMEOUT" "$@" 2>&1); rc=$?
  if printf '%s\n' "$out" | grep -Eq '(ERROR|WARNING): (Address|Leak|Thread)Sanitizer|: runtime error: '; then
    record "$phase" "$name" 0 "sanitizer report: $(printf '%s\n' "$out" | grep -m1 -E 'Sanitizer|runtime error')"
  elif [ $rc -ne 0 ]; then
    record "$phase" "$name" 0 "exit status $rc: $(printf '%s' "$out" | tail -n 2)"
  elif ! printf '%s\n' "$out" | grep -Eq -- "$re"; then
    record "$phase" "$name" 0 "no line matches /$re/: $(printf '%s' "$out" | head -n 2)"
  else
    record "$phase" "$name" 1
  fi
}

examples_phase() {   # phase, build folder (a unit phase's), cflags
  local phase=$1 dir=$2 cflags=$3 cxx
  add_phase "$phase"
  mkdir -p "$TMP/$phase"
  if ! make -s NVCC= METAL= BUILD="$dir" CFLAGS="$cflags" examples > "$TMP/$phase.log" 2>&1; then
    record "$phase" build 0 "make examples failed: $(grep -m1 -iE 'error|\*\*\*' "$TMP/$phase.log")"
    return
  fi
  example_run "$phase" embed '^oops: 1 RUNTIME_ERROR' "$dir/examples/embed"
  example_run "$phase" many '^many: .*, ok$' "$dir/examples/many"
  example_run "$phase" threads '^threads: .*, ok$' "$dir/examples/threads"
  header_example > "$TMP/$phase/header.c"
  # shellcheck disable=SC2086
  if $CC -std=gnu11 $cflags -Iinclude -o "$TMP/$phase/header" "$TMP/$phase/header.c" \
       "$dir/libhvm4g.a" -lpthread -lm -ldl > "$TMP/$phase/header.log" 2>&1; then
    example_run "$phase" header '^42$' "$TMP/$phase/header"
  else
    record "$phase" header 0 "the header's example does not compile: $(grep -m1 error "$TMP/$phase/header.log")"
  fi
  cxx=$(command -v c++ 2>/dev/null || command -v g++ 2>/dev/null || command -v clang++ 2>/dev/null)
  if [ -n "$cxx" ]; then
    # shellcheck disable=SC2086
    if "$cxx" $cflags -x c++ -Iinclude -o "$TMP/$phase/header_cxx" "$TMP/$phase/header.c" -x none \
         "$dir/libhvm4g.a" -lpthread -lm -ldl > "$TMP/$phase/header_cxx.log" 2>&1; then
      example_run "$phase" header_cxx '^42$' "$TMP/$phase/header_cxx"
    else
      record "$phase" header_cxx 0 "the header's example does not compile as C++: $(grep -m1 error "$TMP/$phase/header_cxx.log")"
    fi
  fi
}

examples_phase examples "$ROOT/build-unit" "$UNIT_CFLAGS"

# --- phase: cpu -----------------------------------------------------------

golden_list > "$TMP/golden.list"
gen_programs >> "$TMP/golden.list"
add_phase cpu
# Results are keyed by file name: two programs with one name would collide.
for dup in $(sed 's|.*/||' "$TMP/golden.list" | sort | uniq -d); do
  record cpu "duplicate-name-$dup" 0 "two test programs are named $dup"
done
par check cpu "$BIN" {} "$RES" < "$TMP/golden.list"

if [ "$QUICK" != 1 ]; then
# --- phase: cli ------------------------------------------------------------
# Flags that are not programs: --help, --version, a failed write of the
# output (a full disk), which must not exit 0, even for an endless -C, and
# the default heap's fit.

add_phase cli
cli_check() {
  local name=$1 want_rc=$2 re=$3; shift 3
  local out rc
  out=$(cd "$TMP" && timeout -k 5 "$TEST_TIMEOUT" "$@" 2>&1); rc=$?
  if { [ "$want_rc" = 0 ] && [ $rc -ne 0 ]; } || { [ "$want_rc" != 0 ] && { [ $rc -eq 0 ] || [ $rc -ge 124 ]; }; }; then
    record cli "$name" 0 "exit status $rc: $(printf '%s' "$out" | head -n 2)"
  elif ! printf '%s\n' "$out" | grep -Eq -- "$re"; then
    record cli "$name" 0 "no line matches /$re/: $(printf '%s' "$out" | head -n 2)"
  else
    record cli "$name" 1
  fi
}
printf '@main = [1, 2, 3]\n' > "$TMP/cli_list.hvm4"
printf '@nats = λ&n.&A{n, @nats(n + 1)}\n@main = @nats(0)\n' > "$TMP/cli_nats.hvm4"
cli_check help        0 '^  -M, --heap SIZE'       "$BIN" --help
cli_check help_tuning 0 '^  --lanes N'             "$BIN" --help=tuning
# --help lists the user flags only: at most 20 (the rest: --help=tuning)
cli_check help_short  0 '^ok$' sh -c 'n=$("$0" --help | grep -c "^  -"); [ "$n" -le 20 ] && echo ok' "$BIN"
# Where no GPU can be used (no NVIDIA driver here), --gpu says so in one
# line and the CPU gives the same output; --device=cuda is an error.
if [ ! -e /dev/nvidiactl ]; then
  cli_check gpu_absent_notice 0 '^hvm4g: --gpu: no usable GPU \((no NVIDIA driver|this binary was built without CUDA)' \
    "$BIN" cli_list.hvm4 --gpu
  cli_check gpu_absent_same 0 '^same$' sh -c 'a=$("$0" cli_list.hvm4 --gpu 2>/dev/null); b=$("$0" cli_list.hvm4)
    [ "$a" = "$b" ] && echo same' "$BIN"
  cli_check gpu_absent_stats 0 '^- Device: not used \(no usable GPU' "$BIN" cli_list.hvm4 --gpu -s
  cli_check gpu_absent_cuda 1 '^hvm4g: --device=cuda: (no NVIDIA driver|this binary was built without CUDA)' \
    "$BIN" cli_list.hvm4 --gpu --device=cuda
fi
cli_check flag_unknown 1 "^hvm4g: unknown flag '--frobnicate'" "$BIN" cli_list.hvm4 --frobnicate
cli_check flag_long_aliases 0 '^- Itrs: ' "$BIN" cli_list.hvm4 --stats --threads 2 --collapse=3
# The flag tables of README.md and docs/flags.md are the table's rows
# (scripts/flag_docs.sh writes them)
cli_check flag_docs   0 '^ok$' sh -c '"$0/scripts/flag_docs.sh" --check "$1" && echo ok' "$ROOT" "$BIN"
cli_check version     0 '^hvm4g [0-9]+\.[0-9]+'   "$BIN" --version
# A newcomer's first hour (issue 64). rc_is WANT RE CMD..: prints ok when
# CMD exits with status WANT and a line of its output matches RE.
printf '#!/bin/sh\nwant=$1 re=$2; shift 2\nout=$("$@" 2>&1); rc=$?\nif [ "$rc" = "$want" ] && printf "%%s\\n" "$out" | grep -Eq -- "$re"; then echo ok; else echo "exit $rc: $(printf "%%s" "$out" | head -n 3)"; fi\n' > "$TMP/rc_is"
# 1: every doc link and anchor resolves; the README's first program prints
# what it says; its commands print no 25 MB result; it sets --gpu's expectation
cli_check doc_links 0 '^ok [0-9]+ links$' python3 "$ROOT/tests/doc_check.py" links "$ROOT"
cli_check readme_first 0 '^1048576$' sh -c 'sed -n "/^\/\/ sum.hvm4/,/^@main/p" "$1" > sum.hvm4 && "$0" sum.hvm4' "$BIN" "$ROOT/README.md"
cli_check readme_bench_silent 0 '^ok$' sh -c 'grep -E "^\./hvm4g bench/" "$0/README.md" | grep -v -- " -S" | grep -q . || echo ok' "$ROOT"
cli_check readme_gpu_expect 0 'is not always faster than `-T16`' cat "$ROOT/README.md"
cli_check readme_check_nvcc 0 '^make check NVCC= ' cat "$ROOT/README.md"
# 2: flags that would do nothing are refused before the run; a trace file
# is checked before the run; --gpu's trace with no device pass is no error
cli_check device_no_gpu 0 '^ok$' sh "$TMP/rc_is" 2 '^hvm4g: --device acts on --gpu and %gnf' "$BIN" cli_list.hvm4 --device=sim
cli_check dup_no_gpu 0 '^ok$' sh "$TMP/rc_is" 2 '^hvm4g: --dup acts on --gpu' "$BIN" cli_list.hvm4 --dup=atomic
cli_check trace_no_gpu 0 '^ok$' sh "$TMP/rc_is" 2 '^hvm4g: --trace acts on --gpu' "$BIN" cli_list.hvm4 --trace t0.csv
printf '@main = %%gnf([1, 2])\n' > "$TMP/cli_gnf.hvm4"
cli_check device_gnf 0 '^\[1,2\]$' "$BIN" cli_gnf.hvm4 --device=sim --dup=atomic
cli_check trace_unwritable 0 '^ok$' sh "$TMP/rc_is" 5 "^hvm4g: cannot write trace file '/nonexistent/t.csv'" \
  timeout 20 "$BIN" cli_nats.hvm4 -M1M --gpu --device=sim --trace /nonexistent/t.csv
if [ ! -e /dev/nvidiactl ]; then
  cli_check trace_cpu_only 0 '^ok$' sh "$TMP/rc_is" 0 'the CPU ran the whole program' "$BIN" cli_list.hvm4 --gpu --trace t1.csv
fi
cli_check hello_no_sim 0 '^ok$' sh -c 'grep -qi simulat "$0/examples/hello.hvm4" || echo ok' "$ROOT"
# 3: the language guide's examples and traps print what it says
cli_check doc_examples 0 '^ok [0-9]+ examples$' python3 "$ROOT/tests/doc_check.py" examples "$ROOT" "$BIN"
cli_check doc_traps 0 '^ok 3 programs$' python3 "$ROOT/tests/doc_check.py" traps "$ROOT" "$BIN" "$TMP"
cli_check doc_sections 0 '^4$' sh -c 'grep -cE "^## (Precedence|Numbers|Typing it in ASCII|Traps)$" "$0/docs/language.md"' "$ROOT"
# 4: a parse error points at the mistake, in characters of what the user
# wrote: an affine variable's second use, columns past a λ, -e's term
# without the hidden `@main = `, the bracket an unclosed term misses; a
# UTF-8 byte-order mark is skipped
printf '@f = λt. [t, t]\n@main = @f(1)\n' > "$TMP/pos_affine.hvm4"
printf '@main = λa.λb.λc.y\n' > "$TMP/pos_chars.hvm4"
printf '@main = #Foo{1, 2\n' > "$TMP/pos_unclosed.hvm4"
printf '@k = 1\n' > "$TMP/pos_lib.hvm4"
printf '\357\273\277@main = [1, 2]\n' > "$TMP/pos_bom.hvm4"
printf '\357\273\277@main = y\n' > "$TMP/pos_bom_err.hvm4"
cli_check pos_affine 0 '^ok$' sh "$TMP/rc_is" 3 '^PARSE_ERROR \(.*pos_affine.hvm4:1:14\)$' "$BIN" pos_affine.hvm4
cli_check pos_chars 0 '^ok$' sh "$TMP/rc_is" 3 '^PARSE_ERROR \(.*pos_chars.hvm4:1:18\)$' "$BIN" pos_chars.hvm4
cli_check pos_eval 0 '^ok$' sh "$TMP/rc_is" 3 '^PARSE_ERROR \(<-e>:1:7\)$' "$BIN" -e '(λx.x 42)'
cli_check pos_eval_include 0 '^ok$' sh "$TMP/rc_is" 3 '^PARSE_ERROR \(<-e>:2:5\)$' "$BIN" -e '#include "pos_lib.hvm4"
 λx.y'
cli_check pos_unclosed 0 '^ok$' sh "$TMP/rc_is" 3 "^- expected: \\} to close '#Foo\\{' at line 1, column 9$" "$BIN" pos_unclosed.hvm4
cli_check pos_bom 0 '^\[1,2\]$' "$BIN" pos_bom.hvm4
cli_check pos_bom_err 0 '^ok$' sh "$TMP/rc_is" 3 '^PARSE_ERROR \(.*pos_bom_err.hvm4:1:9\)$' "$BIN" pos_bom_err.hvm4
# 5: heap exhaustion explains its live words and prints -s and --stats=json
cli_check heap_live_why 0 '^ok$' sh "$TMP/rc_is" 4 '^hvm4g: \(live words: those reachable at the last collection, .*the heap holds 65536 words\)$' "$BIN" cli_nats.hvm4 -M64K
cli_check heap_stats 0 '^ok$' sh "$TMP/rc_is" 4 '^- Itrs: [0-9]+ interactions' "$BIN" cli_nats.hvm4 -M64K -s
cli_check heap_stats_json 0 '^ok$' sh "$TMP/rc_is" 4 '^\{"interactions": [0-9]+' "$BIN" cli_nats.hvm4 -M64K --stats=json
# 6: attached values, a repeated -e, a file named -x after --, the usage
# line after a bad value, 80-column help with examples, the man page in
# the tree (its first line names the version), -C -s's #N explained
printf '@main = %%argv(0)\n' > "$TMP/-x.hvm4"
cli_check eval_attached 0 '^42$' "$BIN" '-e2*21'
cli_check eval_twice 0 '^ok$' sh "$TMP/rc_is" 2 '^hvm4g: --eval given twice' "$BIN" -e 1 -e 2
cli_check dashdash_file 0 '^\["a","b"\]$' "$BIN" -- -x.hvm4 a b
cli_check value_usage 0 '^ok$' sh "$TMP/rc_is" 2 '^Usage: hvm4g' "$BIN" cli_list.hvm4 -T x
cli_check help_width 0 '^ok$' sh -c '{ "$0" --help; "$0" --help=tuning; } | awk "length > 80 { bad = 1 } END { if (!bad) print \"ok\" }"' "$BIN"
cli_check help_examples 0 '^Examples:$' "$BIN" --help
cli_check man_in_tree 0 '^same$' sh -c '"$0" --help=man | tail -n +2 > m.1 && tail -n +2 "$1" | cmp -s - m.1 && echo same' "$BIN" "$ROOT/docs/hvm4g.1"
cli_check man_synopsis 0 '^ok$' sh -c 'grep -qF "[\\fB\\-\\-\\fR \\fIargs\\fR]" "$0" && ! grep -A3 "^.SH SEE ALSO" "$0" | grep -q "docs/flags.md" && echo ok' "$ROOT/docs/hvm4g.1"
cli_check stats_collapse_why 0 'with -C, each line ends in #N' "$BIN" --help=markdown
# bench/run.sh against an older build (HVM4G_BASE): a wall ratio and the
# same output as hvm4g's, and an unusable base refused.
cli_check bench_base  0 '^\| cli_list +\|.*\| +[0-9]+\.[0-9]{2} \|.*\| +yes \|$' \
  env HVM4G_BIN="$BIN" HVM4G_BASE="$BIN" REPEAT=2 bash "$ROOT/bench/run.sh" cli_list.hvm4
cli_check bench_base_bad 1 'HVM4G_BASE=.* is not an executable' \
  env HVM4G_BIN="$BIN" HVM4G_BASE=/nonexistent bash "$ROOT/bench/run.sh" cli_list.hvm4
# PIN=LIST: every command runs on those cores; a list taskset would refuse
# is refused first.
cli_check bench_pin   0 '^  \$ \(cd .* && taskset -c 0 .*hvm4g cli_list\.hvm4' \
  env HVM4G_BIN="$BIN" PIN=0 bash "$ROOT/bench/run.sh" cli_list.hvm4
cli_check bench_pin_bad 1 'PIN=zero is not a list of cores' \
  env HVM4G_BIN="$BIN" PIN=zero bash "$ROOT/bench/run.sh" cli_list.hvm4
cli_check full        1 'cannot write'            sh -c '"$0" cli_list.hvm4 > /dev/full' "$BIN"
cli_check full_nats   1 'cannot write'            sh -c '"$0" cli_nats.hvm4 -C > /dev/full' "$BIN"
cli_check full_help   1 'cannot write'            sh -c '"$0" --help > /dev/full' "$BIN"
# The default heap and what is sized from it fit the memory we may use
# (here the address space): a runaway program ends with "heap exhausted".
cli_check mem_default 1 'heap exhausted'          sh -c 'ulimit -v 3000000; exec "$0" cli_nats.hvm4' "$BIN"
cli_check mem_t2_c    1 'heap exhausted'          sh -c 'ulimit -v 5500000; exec "$0" cli_nats.hvm4 -T2 -C' "$BIN"
# Sparks keep the interaction count of one thread (and --sparks is checked).
for g in spark_nested spark_sup spark_gnf; do
  cli_check "count_$g" 0 '^same$' sh -c 'a=$("$0" "$1" -S -T1); b=$("$0" "$1" -S -T4); c=$("$0" "$1" -S -T3 --sparks=64)
    [ "$a" = "$b" ] && [ "$a" = "$c" ] && echo same || echo "$a / $b / $c"' "$BIN" "$ROOT/tests/golden/$g.hvm4"
done
cli_check sparks_bad  1 'sparks expects a number in \[0, 1024\]'         "$BIN" cli_list.hvm4 --sparks=x
# The device takes over from the CPU pool only while the host heap is at
# most --take-max words (the take-over copies in what the pool left):
# past it the device starts over from the program (--restart), or, with
# --restart=0, the CPU keeps the run; the output is the same.
# A tree of 4096 loops: the pool makes thousands of tasks, so the rule is
# polled long before the CPU could end the run.
CFT=$TMP/cli_take.hvm4
sed 's/@gen(7, 0)/@gen(12, 0)/' "$ROOT/tests/gpu/cpu_first_tree.hvm4" | grep -v '^//' > "$CFT"
cli_check take_max_kept 0 "^- Device: not used \\(the CPU's heap passed --take-max" \
  "$BIN" "$CFT" -G --device=sim -T4 --cpu-first=64 --take-max=1K --restart=0 -s
cli_check take_max_restart 0 '^- Device started over from the program: 1 run' \
  "$BIN" "$CFT" -G --device=sim -T4 --cpu-first=64 --take-max=1K -s
# The pool's dropped interactions are not counted: the run's are the device's.
cli_check take_max_restart_itrs 0 '^same$' sh -c 'a=$("$0" "$1" -T4 -s | grep "^- Itrs:"); b=$("$0" "$1" -G --device=sim -T4 --cpu-first=64 --take-max=1K -s | grep "^- Itrs:")
  [ "$a" = "$b" ] && echo same || echo "$a / $b"' "$BIN" "$CFT"
cli_check restart_bad 1 'restart expects a number in \[0, 1\]' "$BIN" cli_list.hvm4 --gpu --restart=2
# A device heap that fills reclaims in place between passes and goes on
# in the same run (pass.c, docs/memory.md): the wide map with a leaf loop
# of 72 at depth 12 allocates 6.3M words, which a 5M heap holds in one run
# with reclaims (the CPU alone runs out), with the output of a heap large
# enough.
LMAP=$TMP/cli_long_map.hvm4
sed 's/@loop(18, x)/@loop(72, x)/; s/@gen(21, 0)/@gen(12, 0)/' "$ROOT/bench/gpu_wide_map.hvm4" > "$LMAP"
cli_check heap_again_runs 0 '^- Device runs: 1$' \
  "$BIN" "$LMAP" -S -G --device=sim --cpu-first=0 --heap=5M -s
cli_check heap_again_reclaims 0 '^- Device reclaims: [1-9][0-9]* in place' \
  "$BIN" "$LMAP" -S -G --device=sim --cpu-first=0 --heap=5M -s
cli_check heap_again_json 0 '"device_reclaims": [1-9][0-9]*, "device_words_reclaimed": [1-9]' \
  "$BIN" "$LMAP" -S -G --device=sim --cpu-first=0 --heap=5M --stats=json
# Live words that outgrow the heap: an accumulator never forced keeps
# three pending operations a step. The simulator's heap is the host's: the
# run ends with the live words counted (status 4), not a kill; with a
# --dev-heap of its own, the CPU finishes in the host's heap instead.
LAZY=$TMP/cli_lazy_acc.hvm4
printf '%s\n' '@loop = λ{0: λacc. acc; λ&k. λacc. @loop(k - 1, ((acc * 31) + k) % 65521)}' \
  '@main = @loop(20000000, 1)' > "$LAZY"
cli_check sim_heap_exhausted 4 '^hvm4g: heap exhausted: [0-9]+ live words (at most )?in a heap of 1048576 words.*\(use --heap=SIZE' \
  "$BIN" "$LAZY" -G --device=sim --cpu-first=0 --handoff=0 --heap=1M
cli_check sim_dev_heap_cpu 0 '^same$' sh -c 'sed "s/20000000/200000/" "$1" > lz.hvm4; a=$("$0" lz.hvm4 -T1); b=$("$0" lz.hvm4 -G --device=sim --cpu-first=0 --handoff=0 --dev-heap=1M -s 2>&1)
  echo "$b" | grep -q "^- Device stopped: .*device heap exhausted; the CPU went on" && [ "$a" = "$(echo "$b" | grep -v "^- ")" ] && echo same || echo "$a / $b"' "$BIN" "$LAZY"
# A device run that cannot start (no memory for its lanes) goes to the
# CPU: the library leaves the reason in the runtime's notice, which the
# program prints on stderr once; the result is the CPU's, on stdout.
# %panic's message is an error: on stderr, after the output before it.
cli_check panic_stderr 0 '^out=\[\] err=\[bad input\] rc=1$' \
  sh -c '"$0" -e "%panic(\"bad input\")" > out.txt 2> err.txt; rc=$?; echo "out=[$(cat out.txt)] err=[$(cat err.txt)] rc=$rc"' "$BIN"
cli_check sim_fell_back 0 '^832040 / hvm4g: --gpu: device \(sim\): out of host memory for 4194304 lanes; the CPU normalizes instead$' \
  sh -c 'ulimit -v 3000000; "$0" "$1" -G --device=sim --cpu-first=0 --lanes=4194304 2> err.txt > out.txt; echo "$(cat out.txt) / $(cat err.txt)"' \
  "$BIN" "$ROOT/bench/fib.hvm4"
# A live tree larger than half a small device heap (HVM4G_SIM_ROOM: 4K
# words above the words in use): the heap grows and the next run goes on
# from what the first packed, with the CPU's output.
cli_check sim_heap_grows 0 '^same$' sh -c 'a=$("$0" "$1" -T1); b=$(HVM4G_SIM_ROOM=4K "$0" "$1" -G --device=sim --cpu-first=0 --handoff=0 --gpu-spark-gap=0 -s 2>&1)
  echo "$b" | grep -Eq "^- Device runs: [2-9]$" && [ "$a" = "$(echo "$b" | grep -v "^- ")" ] && echo same || echo "$a / $b"' "$BIN" "$ROOT/tests/gpu/mem_dev_shared.hvm4"
cli_check heap_again_same 0 '^same$' sh -c 'a=$("$0" "$1" -T2); b=$("$0" "$1" -G --device=sim --cpu-first=0 --heap=5M)
  [ "$a" = "$b" ] && echo same || echo differs' "$BIN" "$LMAP"
# --narrow-share: a frontier under lanes/F entries gets the short budget
# (256). The first pass has one entry on one lane, so its interactions
# do not depend on the threads' timing (the pass count does: an entry may
# walk further before a sibling is pushed): within 256 at F=2, and past
# it with F past the lane count, where no pass is narrow.
WT=$ROOT/tests/gpu/wide_tree.hvm4
cli_check narrow_share_budget 0 '^narrow wide$' sh -c 'p() { "$0" "$1" -G --device=sim --cpu-first=0 --lanes=256 --narrow-share=$2 --trace "$3" > /dev/null 2>&1; sed -n "2s/^1,1,\([0-9]*\),.*/\1/p" "$3"; }
  a=$(p "$1" 2 t2.csv); b=$(p "$1" 1048576 t3.csv)
  [ "$a" -le 256 ] && [ "$b" -gt 256 ] && echo narrow wide || echo "$a $b"' "$BIN" "$WT"
cli_check narrow_share_same 0 '^same$' sh -c 'a=$("$0" "$1" -T1); b=$("$0" "$1" -G --device=sim --cpu-first=0 --lanes=256 --narrow-share=1048576)
  [ "$a" = "$b" ] && echo same || echo differs' "$BIN" "$WT"
cli_check narrow_share_bad 1 'narrow-share expects a number in \[1, 1048576\]' "$BIN" cli_list.hvm4 --gpu --narrow-share=0
# A pass narrow by its work: on 256 lanes (bar 16 entries, 256
# interactions) this chain's frontier holds 44 entries of about 5
# interactions each; before the rule it ran 2,345 passes on the device.
# The stop comes at pass 64 (--handoff), or sooner on a loaded machine,
# where those narrow passes reach the 0.1 s bound first (a CI run beside
# two compiles ended it earlier); either way the passes counted as narrow.
cli_check narrow_by_work 0 'last at pass ([1-9]|[1-5][0-9]|6[0-4]), .*too narrow to pay' \
  "$BIN" "$ROOT/tests/golden/dup_chain_built.hvm4" -S -G --device=sim --cpu-first=0 --lanes=256 --dup=atomic -s
# A slow pass (--narrow-rate; the simulator's default is 0) counts toward
# the handoff's 0.1 s: at 10^12 interactions a second every pass is slow,
# and a map of some 0.8 s of passes goes to the CPU; at 0 it runs out.
# (At depth 14 the passes took about 0.1 s in all once a SUP was lifted
# through a run of operations at once, and a CI run ended them first.)
SMAP=$TMP/cli_slow_map.hvm4
sed 's/@loop(18, x)/@loop(72, x)/; s/@gen(21, 0)/@gen(16, 0)/' "$ROOT/bench/gpu_wide_map.hvm4" > "$SMAP"
cli_check narrow_rate_slow 0 '^- Device stopped: .*too narrow to pay' \
  "$BIN" "$SMAP" -S -G --device=sim --cpu-first=0 --lanes=256 --narrow-rate=1048576 -s
cli_check narrow_rate_none 0 '^- Device stopped: no' \
  "$BIN" "$SMAP" -S -G --device=sim --cpu-first=0 --lanes=256 -s
cli_check narrow_rate_bad 1 'narrow-rate expects a number in \[0, 1048576\]' "$BIN" cli_list.hvm4 --gpu --narrow-rate=2000000
cli_check dup_wait_bad 1 'dup-wait expects a number in \[0, 65536\]' "$BIN" cli_list.hvm4 --gpu --dup-wait=70000
# scripts/ncu_summary.py (the device profile's digest) on a two-instruction
# page: 12 thread instructions over 4 warp instructions, one local access.
printf '%s\n' '"Kernel Name","k"' \
  '"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed","Thread Instructions Executed","Avg. Threads Executed","Address Space","L2 Theoretical Sectors Global","L2 Theoretical Sectors Global Excessive","L2 Theoretical Sectors Local","stall_long_sb","stall_membar"' \
  '"0x10","LDG.E R1, [R2]","10","2","4","2","Global","8","4","0","9","0"' \
  '"0x20","STL [R1], R3","5","2","8","4","Local","0","0","2","0","5"' > "$TMP/ncu_sass.csv"
cli_check ncu_summary 0 '3.00 threads an instruction, 15 stall samples' python3 "$ROOT/scripts/ncu_summary.py" "$TMP/ncu_sass.csv"
cli_check ncu_summary_local 0 'local-memory instructions: 1 static, 2 executed \(50.0% of warp' python3 "$ROOT/scripts/ncu_summary.py" "$TMP/ncu_sass.csv"
cli_check take_max_within 0 '^- Device took over from the CPU: 1 run' \
  "$BIN" "$CFT" -G --device=sim -T4 --cpu-first=64 --take-max=1G -s
cli_check take_max_same 0 '^same$' sh -c 'a=$("$0" "$1" -T4); b=$("$0" "$1" -G --device=sim -T4 --cpu-first=64 --take-max=1K)
  [ "$a" = "$b" ] && echo same || echo differs' "$BIN" "$CFT"
# The device takes the slots the stopped pool left, not the root (so it
# neither copies in nor walks again what the pool made normal), and the
# output is -T4's.
cli_check take_left 0 'pool left [1-9][0-9]* slots' \
  "$BIN" "$CFT" -G --device=sim -T4 --cpu-first=64 --take-max=1G -s
cli_check take_left_same 0 '^same$' sh -c 'a=$("$0" "$1" -T4); b=$("$0" "$1" -G --device=sim -T4 --cpu-first=64 --take-max=1G)
  [ "$a" = "$b" ] && echo same || echo differs' "$BIN" "$CFT"
cli_check take_max_bad 1 'take-max expects a size' "$BIN" cli_list.hvm4 --gpu --take-max=x
# --reclaim-gap is a size like --heap: suffixes, and its bounds in the message.
cli_check reclaim_gap_bad 1 'reclaim-gap expects a size in words, 64\.\.1G' "$BIN" cli_list.hvm4 --reclaim-gap=2G
cli_check reclaim_gap_suffix 0 '^same$' sh -c 'a=$("$0" "$1"); b=$("$0" "$1" --reclaim-gap=1K)
  [ "$a" = "$b" ] && echo same || echo differs' "$BIN" cli_list.hvm4
# A gap counts every thread that worked (reclaim.c): a list map (about 48M
# words handed out) collects 3 times alone; a tree sum (about 26M, on both
# threads under -T2) 6 times alone (4 where a loaded machine's slower
# walks double the cost factor: reclaim_cost_factor) and under -T2 at most
# 3 times.
# Fresh words as dear as a walk's share keep the base gap; cheap ones (a
# nanosecond) lengthen it past the run's end.
cli_check reclaim_first_gap_t1 0 '^- Heap: [0-9]+ words allocated, [0-9]+ reclaimed in 3 collections' \
  "$BIN" "$ROOT/bench/list_map.hvm4" -T1 -S -s --fresh-cost=30
cli_check reclaim_gap_sum_t1 0 '^- Heap: [0-9]+ words allocated, [0-9]+ reclaimed in [4-6] collections' \
  "$BIN" "$ROOT/bench/tree_sum.hvm4" -T1 -S -s --fresh-cost=30
cli_check reclaim_first_gap_t2 0 '^- Heap: [0-9]+ words allocated, [0-9]+ reclaimed in [0-3] collections' \
  "$BIN" "$ROOT/bench/tree_sum.hvm4" -T2 -S -s --fresh-cost=30
# Where a fresh word costs what it does on a VM (12 ns: the system time
# over the fresh words of a run there), the default heap reuses its memory
# on a depth-16 tree map (28M words handed out, 0.2M live): it collected
# never, its first gap being 32M words (issue 62).
printf '%s\n' '@gen  = λ{0: λ&i.#L{i}; λ&d.λ&i.#T{@gen(d - 1, i * 2), @gen(d - 1, i * 2 + 1)}}' \
  '@loop = λ{0: λx.x; λ&n.λ&x.@loop(n - 1, (x * 7 + 3) % 1009)}' \
  '@map  = λ&f.λ{#L: λx.#L{f(x)}; #T: λa.λb.#T{@map(f, a), @map(f, b)}}' \
  '@sum  = λ{#L: λx.x; #T: λa.λb.@sum(a) + @sum(b)}' \
  '@main = @sum(@map(λx.@loop(18, x), @gen(16, 0)))' > "$TMP/cli_tree_map16.hvm4"
cli_check reclaim_default_reuses 0 '^- Heap: [0-9]+ words allocated, [0-9]+ reclaimed in [1-9][0-9]* collections' \
  "$BIN" cli_tree_map16.hvm4 -T1 -s --fresh-cost=12
cli_check reclaim_fresh_cheap 0 '^- Heap: [0-9]+ words allocated, 0 reclaimed in 0 collections \([0-9.]+ seconds\); a fresh word 1\.0 ns$' \
  "$BIN" "$ROOT/bench/list_map.hvm4" -T1 -S -s --fresh-cost=1
cli_check reclaim_fresh_bad 1 'fresh-cost expects' "$BIN" cli_list.hvm4 --fresh-cost=0
# tests/conformance.sh passes flags it does not know to hvm4g (the H200's
# runs give --dev-heap=1G): a bad --heap makes every program fail.
mkdir -p "$TMP/conf"
printf '@main = [1, 2]\n//![1,2]\n' > "$TMP/conf/list.hvm4"
printf '@main = &A{1, 2}\n//1\n//2\n' > "$TMP/conf/sup.hvm4"
cli_check conformance_flags 0 '^conformance: 2/2 passed' env HVM4G_BIN="$BIN" \
  bash "$ROOT/tests/conformance.sh" "$TMP/conf" --dup=owner --dev-heap=1G
cli_check conformance_flags_reach 1 '^conformance: 0/2 passed' env HVM4G_BIN="$BIN" \
  bash "$ROOT/tests/conformance.sh" "$TMP/conf" --heap=bad
# HVM4's runner's directives, in .hvm files: a leading //!-ARGS line (after
# -C), //EXPECT_PREFIX:, //EXPECT_CONTAINS:, a skip.txt; expected lines end
# at a blank line (none left: a failure), and a part not found fails.
mkdir -p "$TMP/confup" "$TMP/confup_bad"
printf '//!-C1\n@main = &A{1, 2}\n//1\n' > "$TMP/confup/lead.hvm"
printf '@main = &A{1, 2}\n//EXPECT_PREFIX:1\n' > "$TMP/confup/prefix.hvm"
printf '@main = &A{1, 2}\n//EXPECT_CONTAINS:2\n' > "$TMP/confup/contains.hvm"
printf '@main = 1\n//2\n' > "$TMP/confup/wrong.hvm"
printf 'wrong  expects what it does not print\n' > "$TMP/confup/skip.txt"
printf '@main = 1\n//1' > "$TMP/confup/no_newline.hvm"   # its last line still counts
printf '@main = 1\n//1\n\n' > "$TMP/confup_bad/blank_tail.hvm"
printf '@main = &A{1, 2}\n//EXPECT_CONTAINS:3\n' > "$TMP/confup_bad/contains.hvm"
cli_check conformance_hvm 0 '^conformance: 4/4 passed \(100.0%\), 1 skipped$' env HVM4G_BIN="$BIN" \
  bash "$ROOT/tests/conformance.sh" "$TMP/confup"
cli_check conformance_hvm_fail 1 '^conformance: 0/2 passed' env HVM4G_BIN="$BIN" \
  bash "$ROOT/tests/conformance.sh" "$TMP/confup_bad"
# --pending FILE: a listed failure does not fail the run; a listed pass does.
printf 'blank_tail  its fix is on its way\ncontains  likewise\n' > "$TMP/conf_pend_bad.txt"
printf 'lead  passes already\n' > "$TMP/conf_pend_lead.txt"
cli_check conformance_pending 0 '^conformance: 0/2 passed \(0.0%\), 2 pending$' env HVM4G_BIN="$BIN" \
  bash "$ROOT/tests/conformance.sh" "$TMP/confup_bad" --pending="$TMP/conf_pend_bad.txt"
cli_check conformance_pending_passes 1 '^\[FAIL\] lead: passes: take it out of ' env HVM4G_BIN="$BIN" \
  bash "$ROOT/tests/conformance.sh" "$TMP/confup" --pending="$TMP/conf_pend_lead.txt"
# %nf nested millions deep (60,000 levels of 100 each, from the fuzzer)
# overflowed the C stack: now a runtime error, not a crash.
NFD=$TMP/cli_nf_deep.hvm4
{ printf '@rep = λ{0: λf.λx.x; λ&n. λ&f.λx. f(@rep(n - 1, f, '
  for i in $(seq 100); do printf '%%nf('; done; printf 'x'
  for i in $(seq 100); do printf ')'; done; printf '))}\n'
  printf '@main = λ&f. @rep(60000, f, 1)\n'; } > "$NFD"
cli_check nf_nested_deep 1 'nested too deeply' "$BIN" "$NFD"
# A run that meets a DUP again after an effect whose result passes the
# journal's bound (a 6 MB file read whole: 18M words) cannot start over,
# and its error says why.
head -c 6000000 /dev/zero | tr '\0' a > "$TMP/cli_big.txt"
{ printf '@c2 = λ&f.λx.f(f(x))\n'
  printf '@main = λ{#OK: λs. #R{s, @c2(@c2, λy.#P{y}, 0)}; #ERR: λe. e}(%%read_file("cli_big.txt"))\n'
} > "$TMP/cli_journal_full.hvm4"
cli_check journal_full 1 "cannot start over .*passed the journal's bound" "$BIN" cli_journal_full.hvm4
# Any host primitive nested millions deep (%log reading an argument that
# is another %log) overflowed the C stack (exit 139): the guard %nf has,
# for every primitive, with the primitive's name.
printf '@f = λ{0: "x"; λ&n. %%log(@f(n - 1))}\n@main = @f(5000000)\n' > "$TMP/cli_log_deep.hvm4"
cli_check prim_nested_deep 1 '^RUNTIME_ERROR: %log nested too deeply' "$BIN" cli_log_deep.hvm4
# Under -C the device leaves half the heap's free words to the collapser:
# with a 16M heap it filled the heap first (26,262 passes on sim).
cli_check collapse_grow_room 0 'heap growth limit under -C' \
  "$BIN" cli_nats.hvm4 -C20 --heap=16M --gpu --device=sim --dup=atomic --handoff=0 -s
# --trace: a row per pass, then the packing's mark passes, whose first
# row starts from the changed words (the root slot) and the last leaves none.
cli_check trace_phases 0 '^ok$' sh -c '"$0" "$1" -G --device=sim --trace t.csv > /dev/null &&
  head -n 1 t.csv | grep -qx "pass,entries,interactions,deferrals,pushes,time_us,phase,run,side,start_us" &&
  grep -q ",step,1,device," t.csv && grep ",mark," t.csv | head -n 1 | grep -q "^1,1," &&
  grep ",mark," t.csv | tail -n 1 | grep -q "^[0-9]*,[0-9]*,0,0,0," && echo ok' "$BIN" "$CFT"

# --- phase: package ----------------------------------------------------------
# What a user of the program and of the library meets (README, "Exit
# statuses"; include/hvm4g.h): the exit statuses, stdin and -e, an
# interrupt, colour, --stats=json, the trace's runs and its picture, and
# `make install` with a program built against the installed tree.

add_phase package
# pkg_check NAME RC REGEX CMD..: CMD exits with exactly RC and some line of
# its output (stdout and stderr) matches REGEX.
pkg_check() {
  local name=$1 want_rc=$2 re=$3; shift 3
  local out rc
  out=$(cd "$TMP" && timeout -k 5 "$TEST_TIMEOUT" "$@" 2>&1); rc=$?
  if [ "$rc" != "$want_rc" ]; then
    record package "$name" 0 "exit status $rc, not $want_rc: $(printf '%s' "$out" | head -n 3)"
  elif ! printf '%s\n' "$out" | grep -Eq -- "$re"; then
    record package "$name" 0 "no line matches /$re/: $(printf '%s' "$out" | head -n 3)"
  else
    record package "$name" 1
  fi
}
printf '@main = 1(2)\n' > "$TMP/pk_runtime.hvm4"
printf '@main = λx.y\n' > "$TMP/pk_parse.hvm4"
printf '@main = @foo(1)\n' > "$TMP/pk_undef.hvm4"
printf '#include "pk_nope.hvm4"\n@main = 1\n' > "$TMP/pk_inc.hvm4"
printf '@k = 41\n' > "$TMP/pk_lib.hvm4"
printf '@loop = λ{0: 0; λn. @loop(n - 1)}\n@main = @loop(4000000000)\n' > "$TMP/pk_long.hvm4"
pkg_check exit_ok       0 '^\[1,2,3\]$'                    "$BIN" cli_list.hvm4
pkg_check exit_runtime  1 '^RUNTIME_ERROR: cannot apply a number$' "$BIN" pk_runtime.hvm4
pkg_check exit_usage    2 "^hvm4g: unknown flag '--frob'"   "$BIN" cli_list.hvm4 --frob
pkg_check exit_usage_none 2 '^hvm4g: no program given'      "$BIN"
pkg_check exit_parse    3 '^PARSE_ERROR \(.*pk_parse.hvm4:1:12\)$' "$BIN" pk_parse.hvm4
pkg_check exit_missing  3 "^hvm4g: cannot open 'pk_none.hvm4': No such file or directory$" "$BIN" pk_none.hvm4
pkg_check exit_include  3 "pk_inc.hvm4:1:10: cannot open '.*pk_nope.hvm4' \(#include\): No such file" "$BIN" pk_inc.hvm4
pkg_check exit_no_main  3 '^hvm4g: @main not defined$'      "$BIN" pk_lib.hvm4
pkg_check exit_heap     4 '^hvm4g: heap exhausted'          "$BIN" cli_nats.hvm4 --heap=64K
pkg_check exit_io       5 'cannot write the output'         sh -c '"$0" cli_list.hvm4 > /dev/full' "$BIN"
# More threads than the system starts (-T1024 in 8 GB of address space,
# 64 MiB of stack each) is the request's fault: a usage error that says
# so, not a runtime error; where the threads' WNF stacks are what does
# not fit, the heap's status, saying the same.
pkg_check exit_threads  2 'cannot start a thread: the system has no room for -T 1024 threads' \
  sh -c 'ulimit -v 8000000; "$0" cli_list.hvm4 -T1024' "$BIN"
pkg_check exit_threads_stacks 4 'cannot reserve a WNF stack: the system has no room for -T 1024 threads' \
  sh -c 'ulimit -v 8000000; "$0" cli_list.hvm4 -T1024 --heap=1M' "$BIN"
# A reader that goes (`| head -c1`) is the same output error, status 5 as
# the README says, not a SIGPIPE (141): for -C's lines and %log's.
printf '@l = λ&n. !!x = %%log("a line"); @l(n + 1)\n@main = @l(0)\n' > "$TMP/pk_log_loop.hvm4"
pkg_check exit_io_pipe  5 'cannot write the output' \
  bash -c '"$0" cli_nats.hvm4 -C | head -c1 > /dev/null; exit "${PIPESTATUS[0]}"' "$BIN"
pkg_check exit_io_pipe_log 5 'cannot write the output' \
  bash -c '"$0" pk_log_loop.hvm4 | head -c1 > /dev/null; exit "${PIPESTATUS[0]}"' "$BIN"
if [ "$(uname -s)" != Darwin ]; then
  pkg_check exit_device 6 '^hvm4g: --device=metal: '      "$BIN" cli_list.hvm4 --gpu --device=metal
fi
# An undefined reference: silent by default, as upstream; one warning with --warn-undefined
pkg_check undef_warn    0 '^ok$' sh -c 'o=$("$0" pk_undef.hvm4 2>e.txt) && [ "$o" = "@foo(1)" ] && [ ! -s e.txt ] &&
  o=$("$0" pk_undef.hvm4 --warn-undefined 2>e.txt) && [ "$o" = "@foo(1)" ] &&
  [ "$(grep -c "^hvm4g: warning: undefined reference @foo" e.txt)" = 1 ] && echo ok' "$BIN"
pkg_check stdin         0 '^42$' sh -c 'echo "@main = (40 + 2)" | "$0" -' "$BIN"
pkg_check eval          0 '^42$'                            "$BIN" -e '(40 + 2)'
pkg_check eval_include  0 '^42$'                            "$BIN" -e '#include "pk_lib.hvm4" (@k + 1)'
pkg_check eval_parse    3 '^PARSE_ERROR \(<-e>:1:'          "$BIN" -e 'λx.y'
# Colour: never when piped or with NO_COLOR; on a terminal (script(1)
# gives one) PARSE_ERROR is red unless NO_COLOR is set.
pkg_check color_pipe    0 '^plain$' sh -c '"$0" pk_parse.hvm4 2>&1 | grep -q "$(printf "\033")" && echo coloured || echo plain' "$BIN"
if command -v script > /dev/null 2>&1; then
  pkg_check color_tty   0 '^coloured$' sh -c 'script -qec "\"$0\" pk_parse.hvm4" /dev/null | grep -q "$(printf "\033")\[1;31mPARSE_ERROR" && echo coloured || echo plain' "$BIN"
  pkg_check no_color_tty 0 '^plain$' sh -c 'NO_COLOR=1 script -qec "\"$0\" pk_parse.hvm4" /dev/null | grep -q "$(printf "\033")\[1;31m" && echo coloured || echo plain' "$BIN"
fi
# --stats=json: one object that parses, with the -s figures.
pkg_check stats_json    0 '^ok$' sh -c '"$0" cli_list.hvm4 --stats=json -T2 | tail -n 1 | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d[\"interactions\"] >= 0 and len(d[\"threads\"]) == 2 and d[\"peak_rss_bytes\"] > 0
print(\"ok\")"' "$BIN"
pkg_check stats_memory  0 '^- Memory: [0-9.]+ MiB peak resident' "$BIN" cli_list.hvm4 -s
pkg_check stats_bad     2 "stats expects nothing or =json, got 'xml'" "$BIN" cli_list.hvm4 --stats=xml
# SIGINT stops a long run within 0.2 s, with -s's figures and status 130.
pkg_check interrupt     0 '^ok ' sh -c '"$0" pk_long.hvm4 -s > int.out 2> int.err & p=$!
  sleep 1; t0=$(date +%s%N); kill -INT $p; wait $p; rc=$?; t1=$(date +%s%N)
  ms=$(( (t1 - t0) / 1000000 ))
  [ $rc = 130 ] && [ $ms -le 200 ] && grep -q "^- Itrs: [1-9]" int.out &&
  grep -q "^- Interrupted" int.out && grep -q "interrupted (SIGINT)" int.err && echo "ok ${ms}ms" ||
  echo "rc=$rc ${ms}ms $(head -c 300 int.out)"' "$BIN"
pkg_check terminate     0 '^ok$' sh -c '"$0" pk_long.hvm4 > /dev/null 2>&1 & p=$!
  sleep 0.5; kill -TERM $p; wait $p; [ $? = 130 ] && echo ok' "$BIN"
# A child the program started and did not wait for ends with hvm4g: after
# the run, after a runtime error, after an interrupt (it outlived hvm4g,
# a shell's `sleep` too). The child writes its pid, then the program waits
# 300 ms for it; a pid still there after hvm4g is a leak.
for how in ok err int; do
  case $how in
    ok)  tail='%timer_wait(t)' ;;
    err) tail='λ{#OK: λx. 1(2); #ERR: λe. e}(%timer_wait(t))' ;;
    int) tail='λ{#OK: λx. @spin(0); #ERR: λe. e}(%timer_wait(t))' ;;
  esac
  { printf '@bind = λr. λk. λ{#OK: λx. k(x); #ERR: λe. #ERR{e}}(r)\n'
    printf '@spin = λ&n. @spin(n + 1)\n'
    printf '@main = @bind(%%process_spawn("echo $$ > kid_%s.pid; sleep 60; exit"), λp.\n' "$how"
    printf '  @bind(%%timer_start(300), λt. %s))\n' "$tail"; } > "$TMP/pk_kid_$how.hvm4"
done
kid_gone='sleep 0.2; k=$(cat kid_$1.pid 2>/dev/null); [ -n "$k" ] && ! kill -0 "$k" 2>/dev/null && echo gone || echo "child ${k:-never started} left running"'
pkg_check spawn_reaped     0 '^gone$' sh -c '"$0" pk_kid_ok.hvm4 > /dev/null 2>&1; '"$kid_gone" "$BIN" ok
pkg_check spawn_reaped_err 0 '^gone$' sh -c '"$0" pk_kid_err.hvm4 > /dev/null 2>&1; '"$kid_gone" "$BIN" err
pkg_check spawn_reaped_int 0 '^gone$' sh -c '"$0" pk_kid_int.hvm4 > /dev/null 2>&1 & p=$!
  sleep 1; kill -INT $p; wait $p; '"$kid_gone" "$BIN" int
# --progress: a line with the interactions, the rate, the heap and the side.
pkg_check progress      130 'hvm4g: [0-9.]+[KMGT]? interactions, [0-9.]+[KMGT]?/s, heap [0-9.]+ MiB, CPU' \
  sh -c '"$0" pk_long.hvm4 --progress 2>&1 >/dev/null & p=$!; sleep 1.3; kill -INT $p; wait $p' "$BIN"
# --trace: two %gnf runs get two run numbers; a hybrid run has CPU rows.
printf '@gen = λ{0: λx.x; λ&n.λ&x.&A{@gen(n - 1, x * 2), @gen(n - 1, x * 2 + 1)}}\n@main = #P{%%gnf(@gen(6, 1)), %%gnf(@gen(5, 3))}\n' > "$TMP/pk_gnf2.hvm4"
pkg_check trace_runs    0 '^runs 1 2$' sh -c '"$0" pk_gnf2.hvm4 --device=sim --trace tr2.csv > /dev/null &&
  echo "runs $(awk -F, "NR > 1 && \$9 == \"device\" { print \$8 }" tr2.csv | sort -u | tr "\n" " " | sed "s/ \$//")"' "$BIN"
pkg_check trace_hybrid  0 '^ok$' sh -c '"$0" "$1" -G --device=sim -T2 --cpu-first=64 --take-max=1G --trace trh.csv > /dev/null &&
  grep -q ",cpu,1,cpu," trh.csv && grep -q ",step,1,device," trh.csv && echo ok' "$BIN" "$CFT"
# scripts/plot-trace.py draws a simulator trace as a non-empty PNG.
# (the first python3 with matplotlib: apt's goes to /usr/bin, which a
# python3 of pyenv or a venv earlier on the PATH does not see)
PLOT_PY=""
for py in python3 /usr/bin/python3; do
  if "$py" -c 'import matplotlib' > /dev/null 2>&1; then PLOT_PY=$py; break; fi
done
if [ -n "$PLOT_PY" ]; then
  pkg_check plot_trace  0 '^ok$' sh -c '"$1" "$0/scripts/plot-trace.py" trh.csv trh.png > /dev/null &&
    [ -s trh.png ] && head -c 8 trh.png | od -An -c | grep -q "P   N   G" && echo ok' "$ROOT" "$PLOT_PY"
else
  echo "package: plot_trace skipped: python3 has no matplotlib (apt-get install python3-matplotlib; .ci/run does)"
  : > "$RES/package/plot_trace.skip"
fi
# make install into a DESTDIR, a program built against it with pkg-config
# (its prefix moved to the DESTDIR: --define-variable), its output equal
# to the binary's, then make uninstall, which leaves no file.
if command -v pkg-config > /dev/null 2>&1; then
  pkg_check install     0 '^ok$' sh -c 'cd "$0" && d=$1/dest && rm -rf "$d" &&
    make -s install DESTDIR="$d" PREFIX=/opt/hvm4g > "$1/install.log" 2>&1 &&
    for f in bin/hvm4g lib/libhvm4g.a include/hvm4g.h include/hvm4g_ffi.h lib/pkgconfig/hvm4g.pc share/man/man1/hvm4g.1; do
      [ -s "$d/opt/hvm4g/$f" ] || { echo "missing $f"; exit 1; }; done &&
    cc -o "$1/embed" examples/embed.c $(PKG_CONFIG_PATH=$d/opt/hvm4g/lib/pkgconfig \
      pkg-config --define-variable=prefix="$d/opt/hvm4g" --cflags --libs hvm4g) &&
    "$1/embed" > "$1/embed.out" && grep -qx 42 "$1/embed.out" &&
    grep -qx "oops: 1 RUNTIME_ERROR: cannot apply a number" "$1/embed.out" &&
    [ "$("$1/embed" tests/golden/prog_fib.hvm4 2>/dev/null | head -n 1)" = "$("$d/opt/hvm4g/bin/hvm4g" tests/golden/prog_fib.hvm4)" ] &&
    make -s uninstall DESTDIR="$d" PREFIX=/opt/hvm4g > /dev/null 2>&1 &&
    [ -z "$(find "$d" -type f)" ] && echo ok' "$ROOT" "$TMP"
  # Programs kept outside the repository (the reference's tests, when
  # HVM4_REF_TESTS names them; else the goldens without flags) give the
  # same output and status through the library (embed -C) and hvm4g -C;
  # collapse_* and enum_* are left out (some are endless without -CN).
  pkg_check embed_same  0 '^same [1-9]' sh -c 'n=0; for f in "$1"/*.hvm4; do
      case ${f##*/} in _*|collapse_*|enum_*) continue ;; esac
      grep -q "^// args:" "$f" && continue
      a=$(timeout 20 "$0/embed" -C "$f" 2>&1); ra=$?
      b=$(timeout 20 "$2" "$f" -C 2>&1); rb=$?
      [ $ra -ge 124 ] || [ $rb -ge 124 ] && continue
      [ "$a" = "$b" ] && [ $ra = $rb ] || { echo "differs: $f ($ra, $rb)"; exit 1; }
      n=$((n + 1)); done; echo "same $n"' "$TMP" "${HVM4_REF_TESTS:-$ROOT/tests/golden}" "$BIN"
else
  record package install 0 "no pkg-config (apt-get install pkg-config; .ci/run does)"
fi
fi   # QUICK

# --- phases: sim-owner, sim-atomic ---------------------------------------

# Owner mode runs the defaults (narrow phases handed to the CPU); atomic
# mode keeps every program on the device to its end (--handoff=0).
if [ "$QUICK" = 1 ]; then
  awk 'NR % 4 == 1' "$TMP/golden.list" > "$TMP/sim.list"
else
  cp "$TMP/golden.list" "$TMP/sim.list"
fi
if [ "${SKIP_SIM:-0}" != 1 ]; then
  add_phase sim-owner
  par same sim-owner cpu "$BIN" {} "$RES" --gpu --device=sim --dup=owner < "$TMP/sim.list"
  add_phase sim-atomic
  par same sim-atomic cpu "$BIN" {} "$RES" --gpu --device=sim --dup=atomic --handoff=0 < "$TMP/sim.list"
fi
# The warp model (--warp-model, docs/gpu.md): one thread steps the lanes in
# lock step, an order no threaded run takes; the device to the end. One
# program in four, and not the tests of time (`// timeout:`): a step at a
# time, a long narrow chain or 300 rounds of a tree take minutes.
if [ "${SKIP_SIM:-0}" != 1 ]; then
  awk 'NR % 4 == 1' "$TMP/golden.list" | while IFS= read -r f; do
    grep -q '^// timeout:' "$f" 2>/dev/null || printf '%s\n' "$f"
  done > "$TMP/warp.list"
  # The atomic phase's lanes also wait for their warp's branch (--warp-wait):
  # another order of the lanes' steps, the same results.
  for dup in owner atomic; do
    add_phase "warp-$dup"
    wait_flag=--warp-wait=0; [ "$dup" = atomic ] && wait_flag=--warp-wait=8
    par same "warp-$dup" cpu "$BIN" {} "$RES" --gpu --device=sim "--dup=$dup" --handoff=0 \
      --warp-model "$wait_flag" < "$TMP/warp.list"
  done
fi
if [ "${SKIP_SIM:-0}" != 1 ] && [ "$QUICK" != 1 ]; then
  # Sparks after every interaction (the default gap is 64, which small
  # programs seldom reach): an offer taken back whose slot the rules then
  # reused printed wrong numbers on the device (fuzz seed 765522320).
  for dup in owner atomic; do
    add_phase "spark-$dup"
    par same "spark-$dup" cpu "$BIN" {} "$RES" --gpu --device=sim "--dup=$dup" --handoff=0 \
      --gpu-spark-gap=1 < "$TMP/golden.list"
  done
  # Lanes that wait for a held DUP slot (wnf.h, HEAP_WAIT_POLLS; CUDA's default,
  # the simulator's only with --dup-wait, and only in wide passes): four
  # blocks of lanes on four threads, so that a holder on another thread
  # gives slots back while a lane waits (about 7,500 waits over these
  # programs in atomic mode, 6,000 of them given back).
  for dup in owner atomic; do
    add_phase "wait-$dup"
    par same "wait-$dup" cpu "$BIN" {} "$RES" --gpu --device=sim "--dup=$dup" --handoff=0 \
      --lanes=128 --sim-threads=4 --region-shift=8 --dup-wait=4096 < "$TMP/golden.list"
  done
fi

# --- phases: poison-owner, poison-atomic ----------------------------------

# The copy in's walk must find every word a device run reads (src/gpu/
# reach.c): the device programs and the golden ones that call %gnf, on sim
# with every word below the top that the walk skipped poisoned
# (HVM4G_SIM_POISON: a read or a write of one exits with status 70).
if [ "${SKIP_SIM:-0}" != 1 ] && [ "$QUICK" != 1 ]; then
  while IFS= read -r f; do
    case "$f" in
      */tests/gpu/*) printf '%s\n' "$f" ;;
      *) if grep -q '%gnf' "$f"; then printf '%s\n' "$f"; fi ;;
    esac
  done < "$TMP/golden.list" > "$TMP/poison.list"
  for dup in owner atomic; do
    add_phase "poison-$dup"
    HVM4G_SIM_POISON=1 \
    par same "poison-$dup" cpu "$BIN" {} "$RES" --gpu --device=sim "--dup=$dup" < "$TMP/poison.list"
  done
fi

# --- phases: metal-owner, metal-atomic ------------------------------------

# The Metal kernel source compiled as C++ against an MSL shim and run on
# CPU threads (`make metal-check` has more shapes; docs/metal.md): many
# lanes, tiny regions and budgets, and a yield before one atomic access in
# 256, so the 32-bit DUP take races.
if [ "${SKIP_METAL:-0}" != 1 ] && [ -z "${HVM4G_BIN:-}" ]; then
  add_phase metal-build
  if make -s build-metal/hvm4g-mtl > "$TMP/metal-build.log" 2>&1; then
    record metal-build hvm4g-mtl 1
    golden_list > "$TMP/metal.list"
    for dup in owner atomic; do
      add_phase "metal-$dup"
      HVM4G_MTL_YIELD=${MTL_YIELD:-256} \
      par same "metal-$dup" cpu "$ROOT/build-metal/hvm4g-mtl" {} "$RES" --gpu \
        --device=metal "--dup=$dup" --lanes=64 --region-shift=8 --budget=16 \
        < "$TMP/metal.list"
    done
    # The shim's lanes are CPU threads (HVM4G_METAL_CPU): no pass of theirs
    # is slow (pass.c's --narrow-rate is 0, as on the simulator), so this
    # map, at about 3 M interactions a second on 64 lanes, runs out on the
    # device; under a device's rate it went to the CPU after 0.1 s.
    sed 's/@loop(18, x)/@loop(72, x)/; s/@gen(21, 0)/@gen(11, 0)/' "$ROOT/bench/gpu_wide_map.hvm4" > "$TMP/metal_map.hvm4"
    cli_check metal_narrow_rate 0 '^- Device stopped: no' "$ROOT/build-metal/hvm4g-mtl" \
      "$TMP/metal_map.hvm4" -S -G --device=metal --cpu-first=0 --lanes=64 --budget=16 --region-shift=8 -s
    # A small device heap that fills is reclaimed in place between passes
    # (metal.c, mt_squeeze) and the run goes on to the CPU's output.
    cli_check metal_reclaims 0 '^- Device reclaims: [1-9][0-9]* in place' "$ROOT/build-metal/hvm4g-mtl" \
      "$ROOT/tests/gpu/mem_dev_loop.hvm4" -G --device=metal --cpu-first=0 --dev-heap=1M --handoff=0 -s
    cli_check metal_reclaims_same 0 '^same$' sh -c 'a=$("$0" "$1" -T1); b=$("$0" "$1" -G --device=metal --cpu-first=0 --dev-heap=1M --handoff=0)
      [ "$a" = "$b" ] && echo same || echo "$a / $b"' "$ROOT/build-metal/hvm4g-mtl" "$ROOT/tests/gpu/mem_dev_loop.hvm4"
    # Live words past half a small first heap (HVM4G_DEV_HEAP_START): an
    # accumulator never forced. The heap grows and the next run goes on from
    # what the first packed (mt_grow), with the CPU's output.
    printf '%s\n' '@loop = λ{0: λacc. acc; λ&k. λacc. @loop(k - 1, ((acc * 31) + k) % 65521)}' \
      '@main = @loop(200000, 1)' > "$TMP/metal_lazy.hvm4"
    cli_check metal_heap_grows 0 '^same$' sh -c 'a=$("$0" "$1" -T1); b=$(HVM4G_DEV_HEAP_START=1M "$0" "$1" -G --device=metal --cpu-first=0 --handoff=0 -s 2>&1)
      echo "$b" | grep -Eq "^- Device runs: [2-9]$" && [ "$a" = "$(echo "$b" | grep -v "^- ")" ] && echo same || echo "$a / $b"' \
      "$ROOT/build-metal/hvm4g-mtl" "$TMP/metal_lazy.hvm4"
  else
    record metal-build hvm4g-mtl 0 "make build-metal/hvm4g-mtl failed: $(grep -m1 -iE 'error|\*\*\*' "$TMP/metal-build.log")"
    tail -n 20 "$TMP/metal-build.log"
  fi
fi

# --- phases: the reference's tests ------------------------------------------

if [ -n "${HVM4_REF_TESTS:-}" ]; then
  for f in "$HVM4_REF_TESTS"/*.hvm4; do
    case "$(basename "$f")" in _*) continue ;; esac
    printf '%s\n' "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")"
  done > "$TMP/ref.list"
  export DROP_WARNINGS=1   # lib.sh: the reference prints none
  add_phase ref-cpu
  par check ref-cpu "$BIN" {} "$RES" < "$TMP/ref.list"
  if [ "${SKIP_SIM:-0}" != 1 ]; then
    add_phase ref-sim
    par check ref-sim "$BIN" {} "$RES" --gpu --device=sim --dup=owner < "$TMP/ref.list"
  fi
  unset DROP_WARNINGS
fi

# --- phases: upstream, upstream-t4, upstream-sim ----------------------------
# HigherOrderCO/HVM4's test programs (tests/upstream/), judged by its own
# directives by tests/upstream/run.sh; one result per program. The same
# programs under -T4 and on the simulated device must pass as on one
# thread (effects in one thread's order; the device hands primitives back).

upstream_phase() {   # phase, extra args
  local phase=$1 line name
  shift
  add_phase "$phase"
  bash "$ROOT/tests/upstream/run.sh" "$BIN" "$@" > "$TMP/$phase.log" 2>&1
  while IFS= read -r line; do
    case "$line" in
      "[PASS] "*) record "$phase" "${line#\[PASS\] }" 1 ;;
      "[FAIL] "*) name=${line#\[FAIL\] }; record "$phase" "${name%% *}" 0 "${name#* }" ;;
    esac
  done < "$TMP/$phase.log"
  grep -q ' passed, 0 failed$' "$TMP/$phase.log" || record "$phase" runner 0 "$(tail -n1 "$TMP/$phase.log")"
}

upstream_phase upstream
if [ "$QUICK" != 1 ]; then
  upstream_phase upstream-t4 -T4
  [ "${SKIP_SIM:-0}" != 1 ] && upstream_phase upstream-sim --gpu --device=sim
fi

# --- phases: clang-*, spec-* --------------------------------------------------
# HVM4's whole test folders, each run by tests/conformance.sh as HVM4's own
# runner runs it: HigherOrderCO/HVM4's clang-era test/ (tests/upstream/clang,
# its ffi/ programs included) and hvm4-spec's test/ (tests/upstream/hvm4-spec,
# less the programs its skip.txt names), on one thread, under -T4 and on the
# simulated device in both DUP modes. make check runs the one-thread phases.
# One result per program.

conformance_phase() {   # phase, folder, conformance.sh args
  local phase=$1 dir=$2 line name
  shift 2
  add_phase "$phase"
  HVM4G_BIN="$BIN" bash "$ROOT/tests/conformance.sh" "$ROOT/$dir" "$@" > "$TMP/$phase.log" 2>&1
  while IFS= read -r line; do
    case "$line" in
      "[PASS] "*) record "$phase" "${line#\[PASS\] }" 1 ;;
      "[FAIL] "*) name=${line#\[FAIL\] }; record "$phase" "${name%%:*}" 0 "${name#*: }" ;;
      "[SKIP] "*) name=${line#\[SKIP\] }; printf '%s\n' "${name#*: }" > "$RES/$phase/${name%%:*}.skip" ;;
    esac
  done < "$TMP/$phase.log"
  grep -q '^conformance: ' "$TMP/$phase.log" || record "$phase" runner 0 "$(tail -n1 "$TMP/$phase.log")"
}

conformance_phase clang-t1 tests/upstream/clang -T1
conformance_phase spec-t1 tests/upstream/hvm4-spec -T1
if [ "$QUICK" != 1 ]; then
  conformance_phase clang-t4 tests/upstream/clang -T4
  conformance_phase spec-t4 tests/upstream/hvm4-spec -T4
  if [ "${SKIP_SIM:-0}" != 1 ]; then
    conformance_phase clang-sim-owner tests/upstream/clang --dup=owner
    conformance_phase clang-sim-atomic tests/upstream/clang --dup=atomic
    conformance_phase spec-sim-owner tests/upstream/hvm4-spec --dup=owner
    conformance_phase spec-sim-atomic tests/upstream/hvm4-spec --dup=atomic
  fi
fi

# --- phase: ffi -------------------------------------------------------------
# Libraries of primitives (--ffi, --ffi-dir): tests/ffi/run.sh builds its
# libraries and runs each program on one thread, under -T4 and (not in
# make check) on the simulated device; one result per program and mode.

add_phase ffi
ffi_sim=${SKIP_SIM:-0}
[ "$QUICK" = 1 ] && ffi_sim=1
SKIP_SIM=$ffi_sim bash "$ROOT/tests/ffi/run.sh" "$BIN" > "$TMP/ffi.log" 2>&1
while IFS= read -r line; do
  case "$line" in
    "[PASS] "*) record ffi "${line#\[PASS\] }" 1 ;;
    "[FAIL] "*) name=${line#\[FAIL\] }; record ffi "${name%% *}" 0 "${name#* }" ;;
    "[SKIP] "*) name=${line#\[SKIP\] }; printf '%s\n' "${name#* }" > "$RES/ffi/${name%% *}.skip" ;;
  esac
done < "$TMP/ffi.log"
grep -q ' passed, 0 failed$' "$TMP/ffi.log" || record ffi runner 0 "$(tail -n1 "$TMP/ffi.log")"

# --- phase: mem-limits ------------------------------------------------------
# The default heap follows the address space it is given (ulimit -v), and a
# run that ends for want of memory says what was live and the heap's size
# (docs/memory.md, issue 62 point 3, issue 63 point 9).

add_phase mem-limits
mem_check() {   # name, wanted status, regex, command...
  local name=$1 want_rc=$2 re=$3; shift 3
  local out rc
  out=$(cd "$TMP" && timeout -k 5 "$TEST_TIMEOUT" "$@" 2>&1); rc=$?
  if [ "$rc" != "$want_rc" ]; then
    record mem-limits "$name" 0 "exit status $rc: $(printf '%s' "$out" | head -n 2)"
  elif ! printf '%s\n' "$out" | grep -Eq -- "$re"; then
    record mem-limits "$name" 0 "no line matches /$re/: $(printf '%s' "$out" | head -n 2)"
  else
    record mem-limits "$name" 1
  fi
}
printf '@gen = λ{0: #L{1}; λ&d. #T{@gen(d - 1), @gen(d - 1)}}\n@sum = λ{#L: λx.x; #T: λa.λb.@sum(a) + @sum(b)}\n@main = @sum(@gen(12))\n' \
  > "$TMP/mem_tree12.hvm4"
printf '@loop = λ{0: λacc. acc; λ&k. λacc. @next(k, ((acc * 31) + k) %% 65521)}\n@next = λ&k. λ{0: @loop(k - 1, 0); λp. @loop(k - 1, p)}\n@main = %%nf(@loop(300000, 1))\n' \
  > "$TMP/mem_in_nf.hvm4"
printf '@loop = λ{0: λacc. acc; λ&k. λacc. @next(k, ((acc * 31) + k) %% 65521)}\n@next = λ&k. λ{0: @loop(k - 1, 0); λp. @loop(k - 1, p)}\n@main = %%log(#CON{#CHR{@loop(300000, 1)}, #NIL})\n' \
  > "$TMP/mem_in_log.hvm4"
printf '@gen = λ{0: #L{1}; λ&d. #T{@gen(d - 1), @gen(d - 1)}}\n@main = @gen(16)\n' > "$TMP/mem_big_tree.hvm4"
mem_check hello_as_1g 0 '^#Hi\{"hvm4g",65536\}' sh -c 'ulimit -v 1000000 && exec "$0" "$1"' "$BIN" "$ROOT/examples/hello.hvm4"
mem_check tree_as_4g_t2 0 '^4096$' sh -c 'ulimit -v 4000000 && exec "$0" "$1" -T2' "$BIN" mem_tree12.hvm4
mem_check tree_as_4g_t4 0 '^4096$' sh -c 'ulimit -v 4000000 && exec "$0" "$1" -T4' "$BIN" mem_tree12.hvm4
mem_check exhausted_says_heap 4 '^hvm4g: heap exhausted: [0-9]+ live words in a heap of 65536 words' \
  "$BIN" mem_big_tree.hvm4 --heap=64K
# %log holds locations in C while it reads its argument: no collection
mem_check exhausted_in_log 4 '^hvm4g: heap exhausted: [0-9]+ live words at most in a heap of 1048576 words \(no collection can run' \
  "$BIN" mem_in_log.hvm4 --heap=1M
# %nf holds its slot in a root frame: its normal form collects
mem_check nf_collects 0 '^50764$' "$BIN" mem_in_nf.hvm4 --heap=1M
mem_check nf_collects_t2 0 '^50764$' "$BIN" mem_in_nf.hvm4 --heap=1M -T2
# a runaway under the limit: the message says what sized the heap
printf '@loop = λ{0: λacc. acc; λ&k. λacc. @loop(k - 1, ((acc * 31) + k) %% 65521)}\n@main = @loop(200000000, 1)\n' \
  > "$TMP/mem_runaway.hvm4"
mem_check exhausted_by_space 4 'in a heap of [0-9]+ words, sized by the address-space limit \(raise the limit, ulimit -v' \
  sh -c 'ulimit -v 1000000 && exec "$0" "$1" -T1' "$BIN" mem_runaway.hvm4

# --- phase: mem-fit ---------------------------------------------------------
# Every program of bench/ (but big_*) and tests/gpu/ runs in a heap of 8x
# its peak live words at -T1, -T4 and on the simulated device, with the
# default heap's output (tests/mem/fit.sh, issue 62). `make test` only:
# the bench programs take minutes on the CPU.

if [ "$QUICK" != 1 ]; then
  add_phase mem-fit
  bash "$ROOT/tests/mem/fit.sh" "$BIN" > "$TMP/mem-fit.log" 2>&1
  while IFS= read -r line; do
    case "$line" in
      "[PASS] "*) name=${line#\[PASS\] }; record mem-fit "${name%% *}" 1 ;;
      "[FAIL] "*) name=${line#\[FAIL\] }; name=${name%%:*}; record mem-fit "$name" 0 "${line#*: }" ;;
      "[OPEN] "*) name=${line#\[OPEN\] }; printf '%s\n' "${name#*: }" > "$RES/mem-fit/${name%%:*}.skip" ;;
    esac
  done < "$TMP/mem-fit.log"
  grep -q ' passed, 0 failed, [0-9]* open$' "$TMP/mem-fit.log" || record mem-fit runner 0 "$(tail -n1 "$TMP/mem-fit.log")"
fi

# --- phases: sanitizers -----------------------------------------------------

if [ "$RUN_SANITIZE" = 1 ]; then
  ASAN_CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer"
  add_phase asan-build
  if make -s asan > "$TMP/asan-build.log" 2>&1; then
    record asan-build hvm4g 1
  else
    record asan-build hvm4g 0 "make failed: $(grep -m1 -iE 'error|\*\*\*' "$TMP/asan-build.log")"
    tail -n 20 "$TMP/asan-build.log"
  fi
  unit_phase asan-unit "$ASAN_CFLAGS"
  TEST_TIMEOUT=$((TEST_TIMEOUT * 3)) examples_phase asan-examples "$ROOT/build-asan-unit" "$ASAN_CFLAGS"
  add_phase asan-cpu
  TEST_TIMEOUT=$((TEST_TIMEOUT * 3)) \
    par check asan-cpu "$ROOT/build-asan/hvm4g" {} "$RES" < "$TMP/golden.list"
  # the fuzzer's fixed-seed sample (tests/fuzz/README.md), each case one test
  add_phase fuzz
  if command -v python3 > /dev/null; then
    mtl=()   # the Metal shim races the lanes too, when the metal phase built it
    [ "${SKIP_METAL:-0}" != 1 ] && [ -x "$ROOT/build-metal/hvm4g-mtl" ] && mtl=(--metal "$ROOT/build-metal/hvm4g-mtl")
    python3 tests/fuzz/fuzz.py --bin "$ROOT/build-asan/hvm4g" --seed "${FUZZ_SEED:-1}" \
      --cases "${FUZZ_CASES:-60}" --jobs "$JOBS" --out "$ROOT/fuzz-findings" "${mtl[@]}" > "$TMP/fuzz.log" 2>&1
    n=0
    while IFS= read -r line; do
      case "$line" in
        ok) ;;
        "FAIL "*) n=$((n + 1)); record fuzz "case$n" 0 "${line#FAIL }" ;;
      esac
    done < "$TMP/fuzz.log"
    ok=$(sed -n 's/^\([0-9]*\) passed, [0-9]* failed$/\1/p' "$TMP/fuzz.log")
    if [ -z "$ok" ]; then
      record fuzz run 0 "fuzz.py did not finish: $(tail -n 1 "$TMP/fuzz.log")"
    else
      for ((i = 0; i < ok; i++)); do record fuzz "ok$i" 1; done
    fi
  else
    record fuzz python3 0 "python3 is needed for the fuzzer"
  fi
  # runtimes one after another and at once under the thread sanitizer
  TEST_TIMEOUT=$((TEST_TIMEOUT * 3)) \
    examples_phase tsan-examples "$ROOT/build-tsan-examples" "-O1 -g -fsanitize=thread"
  # the -T pool and the collapse waves under the thread sanitizer
  add_phase tsan-thread
  if make -s tsan > "$TMP/tsan-build.log" 2>&1; then
    grep '/thread_[^/]*$' "$TMP/golden.list" > "$TMP/thread.list"
    TEST_TIMEOUT=$((TEST_TIMEOUT * 3)) \
      par check tsan-thread "$ROOT/build-tsan/hvm4g" {} "$RES" < "$TMP/thread.list"
  else
    record tsan-thread build 0 "make tsan failed: $(grep -m1 -iE 'error|\*\*\*' "$TMP/tsan-build.log")"
  fi
fi

# --- summary ----------------------------------------------------------------

say ""
for p in "${PHASES[@]}"; do report_phase "$p"; done
PASS=$(find "$RES" -name '*.pass' | wc -l)
FAIL=$(find "$RES" -name '*.fail' | wc -l)
# The failures once more, last: where only a log's tail is kept (CI), it
# still names them.
if [ "$FAIL" -gt 0 ]; then
  say ""
  find "$RES" -name '*.fail' | sort | head -n 20 | while IFS= read -r fl; do
    rel=${fl#"$RES"/}
    say "failed: ${rel%.fail}: $(head -n1 "$fl")"
  done
  [ "$FAIL" -gt 20 ] && say "failed: and $((FAIL - 20)) more (above)"
fi
say "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
