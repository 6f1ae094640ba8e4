#!/usr/bin/env bash
# tests/lib.sh: runs one test program and judges its output. Shared by
# tests/run.sh and tests/conformance.sh (see tests/README.md for the format).
#
#   bash tests/lib.sh check LABEL BIN FILE OUTDIR [DEVICE ARGS...]
#     runs FILE under the HVM4 convention, writes OUTDIR/LABEL/NAME.{out,rc}
#     and OUTDIR/LABEL/NAME.{pass,fail,skip} (the fail file says why).
#   bash tests/lib.sh same LABEL BASE BIN FILE OUTDIR [DEVICE ARGS...]
#     runs FILE like `check` and requires output and exit status identical
#     to the earlier run labelled BASE (CPU vs device equality).
#   bash tests/lib.sh upstream LABEL BIN FILE OUTDIR [SHARED ARGS...]
#     runs FILE (.hvm or .hvm4) as HVM4's own runner (its test/_all_.sh)
#     does, and writes the same files as `check`.

set -u

TEST_TIMEOUT=${TEST_TIMEOUT:-120}

# Sanitizer reports must fail a test even when the expected output matched.
SAN_RE='(ERROR|WARNING|FATAL): (Address|Leak|Thread|Memory)Sanitizer|: runtime error: |UndefinedBehaviorSanitizer'
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

strip_ansi() { sed 's/\x1b\[[0-9;]*m//g'; }

# Reads FILE's directives and expected output into globals:
#   EXPECT  expected output (trailing // lines, without the //)
#   NLINES  number of expected lines; NOCOL 1 when a //! line is present
#   ARGS EXIT MATCH CPUONLY NOMETAL PROG REPEAT  header directives (// key: value)
parse_test() {
  local file=$1 line key val
  ARGS=""; EXIT=""; MATCH=exact; CPUONLY=""; NOMETAL=""; PROG=""; REPEAT=1; LIMIT=
  while IFS= read -r line; do
    case "$line" in
      '') continue ;;
      //*) ;;
      *) break ;;
    esac
    if [[ "$line" =~ ^//\ *(args|exit|match|cpu-only|no-metal|file|repeat|timeout):\ *(.*)$ ]]; then
      key=${BASH_REMATCH[1]}; val=${BASH_REMATCH[2]}
      case "$key" in
        args)     ARGS=$val ;;
        exit)     EXIT=$val ;;
        match)    MATCH=$val ;;
        cpu-only) CPUONLY=${val:-yes} ;;
        no-metal) NOMETAL=${val:-yes} ;;
        file)     PROG=$val ;;
        repeat)   REPEAT=$val ;;
        timeout)  LIMIT=$val ;;
      esac
    fi
  done < "$file"
  # Expected output: the consecutive // lines at the end (blank tail skipped).
  local lines=() rev=()
  mapfile -t rev < <(tac "$file")
  local started=0
  for line in "${rev[@]}"; do
    line=${line%$'\r'}
    if [[ "$line" == //* ]]; then
      started=1; lines+=("$line")
    elif [ $started -eq 0 ] && [ -z "$line" ]; then
      continue
    else
      break
    fi
  done
  NLINES=${#lines[@]}; NOCOL=0; EXPECT=""
  local i content
  for ((i = NLINES - 1; i >= 0; i--)); do
    line=${lines[$i]}
    if [[ "$line" == '//!'* ]]; then NOCOL=1; content=${line#//!}
    else content=${line#//}; fi
    EXPECT+=$content
    [ $i -gt 0 ] && EXPECT+=$'\n'
  done
}

# Runs BIN on FILE (cwd = the file's folder, so #include paths resolve) with
# the convention's flags and any extra args. Sets GOT and RC (not OUT: the device
# machine exports OUT, and an exported output past 128 KB fails every exec).
run_test() {
  local bin=$1 file=$2; shift 2
  [[ "$bin" == /* || "$bin" != */* ]] || bin=$PWD/$bin
  local name flags dir base
  base=${file##*/}; name=${base%.hvm4}
  dir=${file%/*}; [ "$dir" = "$file" ] && dir=.
  [ -n "$PROG" ] && base=$PROG
  flags=""
  if [ $NOCOL -eq 0 ]; then
    flags=-C
    case "$name" in collapse_*|enum_*) flags=-C$NLINES ;; esac
  fi
  # `// timeout: S`: S seconds at the default TEST_TIMEOUT of 120, scaled
  # with it (the sanitizer phases triple it)
  local lim=$TEST_TIMEOUT
  [ -n "$LIMIT" ] && lim=$(( (LIMIT * TEST_TIMEOUT + 119) / 120 ))
  # The program's own args come last: they win over a phase's flags.
  # shellcheck disable=SC2086  # ARGS is a word list by design
  GOT=$(cd "$dir" && timeout -k 5 "$lim" "$bin" "$base" $flags "$@" $ARGS 2>&1 < /dev/null)
  RC=$?
  [[ "$GOT" == *$'\e'* ]] && GOT=$(printf '%s' "$GOT" | strip_ansi)
  # The reference's tests expect its output, which has no warnings (an
  # undefined reference): hvm4g's are dropped there.
  if [ -n "${DROP_WARNINGS:-}" ] && [[ "$GOT" == *"hvm4g: warning: "* ]]; then
    GOT=$(printf '%s\n' "$GOT" | grep -v '^hvm4g: warning: ')
  fi
}

# Judges GOT/RC against the parsed expectations; sets WHY ("" = pass).
judge() {
  WHY=""
  if [ $RC -eq 124 ] || [ $RC -eq 137 ]; then WHY="timeout (${LIMIT:-$TEST_TIMEOUT}s)"; return; fi
  if [ $RC -ge 128 ]; then WHY="crashed (signal $((RC - 128)))"; return; fi
  if [[ "$GOT" == *anitizer* || "$GOT" == *"runtime error: "* ]] &&
     printf '%s\n' "$GOT" | grep -Eq "$SAN_RE"; then WHY="sanitizer report"; return; fi
  if [ "$NLINES" -eq 0 ]; then WHY="no expected output (trailing // lines)"; return; fi
  case "$EXIT" in
    nonzero) [ $RC -ne 0 ] || { WHY="exit status 0, expected non-zero"; return; } ;;
    0)       [ $RC -eq 0 ] || { WHY="exit status $RC, expected 0"; return; } ;;
  esac
  if [ "$EXPECT" = PARSE_ERROR ]; then
    [[ "$GOT" == PARSE_ERROR* ]] || WHY="expected PARSE_ERROR"
    return
  fi
  case "$MATCH" in
    exact)
      [ "$GOT" = "$EXPECT" ] || WHY="output differs (exit $RC: $(first_lines))" ;;
    regex)
      local re
      while IFS= read -r re; do
        printf '%s\n' "$GOT" | grep -Eiq -- "$re" ||
          { WHY="no output line matches /$re/ (exit $RC: $(first_lines))"; return; }
      done <<< "$EXPECT" ;;
    nocrash)
      # A clean rejection (non-zero exit, no crash) is fine; success must be right.
      [ $RC -ne 0 ] || [ "$GOT" = "$EXPECT" ] || WHY="output differs" ;;
    *)
      WHY="unknown match mode '$MATCH'" ;;
  esac
}

# Writes the verdict files for LABEL/NAME; on failure FN prints the details.
verdict() {
  local dir=$1 name=$2 fn=$3
  if [ -z "$WHY" ]; then
    : > "$dir/$name.pass"
  else
    { echo "$WHY"; "$fn"; } > "$dir/$name.fail"
  fi
}

# The output's first lines in one line: what a one-line verdict shows.
first_lines() { clip "$GOT" 3 | paste -sd '|'; }

clip() { printf '%s\n' "$1" | head -n "${2:-12}" | cut -c1-200; }

cmd_check() {
  local label=$1 bin=$2 file=$3 outdir=$4; shift 4
  local name dir
  name=${file##*/}; name=${name%.hvm4}
  dir=$outdir/$label; [ -d "$dir" ] || mkdir -p "$dir"
  parse_test "$file"
  # `// repeat: N` (races under -T): N runs, the first failing one judged
  local k
  for ((k = 0; k < REPEAT; k++)); do
    run_test "$bin" "$file" "$@"
    judge
    [ -z "$WHY" ] || break
  done
  [ -n "$WHY" ] && [ "$REPEAT" -gt 1 ] && WHY="$WHY (run $((k + 1)) of $REPEAT)"
  printf '%s\n' "$GOT" > "$dir/$name.out"; echo "$RC" > "$dir/$name.rc"
  verdict "$dir" "$name" detail_check
}

detail_check() {
  echo "  expected:"; clip "$EXPECT" | sed 's/^/    /'
  echo "  got (exit $RC):"; clip "$GOT" | sed 's/^/    /'
}

cmd_same() {
  local label=$1 base=$2 bin=$3 file=$4 outdir=$5; shift 5
  local name dir
  name=${file##*/}; name=${name%.hvm4}
  dir=$outdir/$label; [ -d "$dir" ] || mkdir -p "$dir"
  parse_test "$file"
  if [ -n "$CPUONLY" ]; then
    echo "$CPUONLY" > "$dir/$name.skip"; return
  fi
  if [ -n "$NOMETAL" ] && [[ "$label" == metal-* ]]; then
    echo "$NOMETAL" > "$dir/$name.skip"; return
  fi
  run_test "$bin" "$file" "$@"
  printf '%s\n' "$GOT" > "$dir/$name.out"; echo "$RC" > "$dir/$name.rc"
  WHY=""
  if [ $RC -eq 124 ] || [ $RC -eq 137 ]; then WHY="timeout (${TEST_TIMEOUT}s)"
  elif [ $RC -ge 128 ]; then WHY="crashed (signal $((RC - 128)))"
  elif [ ! -f "$outdir/$base/$name.out" ]; then WHY="no $base run to compare with"
  else
    local bout brc
    bout=$(< "$outdir/$base/$name.out"); brc=$(< "$outdir/$base/$name.rc")
    # a message with a figure of the run's own (the live words of an
    # exhausted heap) is judged by its regular expressions, as on the CPU
    if [ "$MATCH" = regex ] && [ "$RC" = "$brc" ]; then judge
    elif [ "$GOT" != "$bout" ]; then WHY="output differs from $base"
    elif [ "$RC" != "$brc" ]; then WHY="exit status $RC differs from $base ($brc)"
    fi
  fi
  SAME_BASE=$outdir/$base/$name; SAME_LABEL=$label
  verdict "$dir" "$name" detail_same
}

detail_same() {
  echo "  $(basename "$(dirname "$SAME_BASE")") (exit $(cat "$SAME_BASE.rc" 2>/dev/null)):"
  clip "$(cat "$SAME_BASE.out" 2>/dev/null)" | sed 's/^/    /'
  echo "  $SAME_LABEL (exit $RC):"; clip "$GOT" | sed 's/^/    /'
}

# --- HVM4's own convention (`upstream`) ------------------------------------
# What HVM4's runner does, which differs from the golden format above: no
# `// key: value` directives; leading `//! ARGS` or `//!-ARGS` lines (blank
# lines between them skipped) are arguments, placed after -C; the expected
# lines end at the first line, blank too, that is not `//`; among them
# `//EXPECT_PREFIX:TEXT` and `//EXPECT_CONTAINS:TEXT` judge the output's
# start or a part of it; trailing newlines count on neither side; the exit
# status is not judged. Stricter than that runner: a signal or a sanitizer
# report fails whatever the output.

# Reads FILE into LEAD (arguments), EXPECT, NLINES, NOCOL, PREFIX, CONTAINS
# (in bash alone: this runs once a program, hundreds of times a phase).
parse_upstream() {
  local file=$1 line content more i lines=()
  LEAD=(); EXPECT=""; NLINES=0; NOCOL=0; PREFIX=""; CONTAINS=""
  mapfile -t lines < "$file"
  for line in "${lines[@]}"; do
    case "$line" in
      '//! '*) read -r -a more <<< "${line#//! }"; LEAD+=("${more[@]}") ;;
      '//!-'*) read -r -a more <<< "${line#//!}"; LEAD+=("${more[@]}") ;;
      '') ;;
      *) break ;;
    esac
  done
  for ((i = ${#lines[@]} - 1; i >= 0; i--)); do
    line=${lines[$i]}
    case "$line" in
      //EXPECT_PREFIX:*)   PREFIX=${line#//EXPECT_PREFIX:}; continue ;;
      //EXPECT_CONTAINS:*) CONTAINS=${line#//EXPECT_CONTAINS:}; continue ;;
      '//!'*) NOCOL=1; content=${line#//!} ;;
      //*)    content=${line#//} ;;
      *) break ;;
    esac
    # an empty line at the end adds nothing, as there
    if [ -n "$EXPECT" ]; then EXPECT=$content$'\n'$EXPECT; else EXPECT=$content; fi
    NLINES=$((NLINES + 1))
  done
  [[ "$EXPECT" == *$'\e'* ]] && EXPECT=$(printf '%s' "$EXPECT" | strip_ansi)
}

# A program of a folder named ffi loads the libraries that conformance.sh
# built for it into $UPSTREAM_FFI: NAME.args holds the flags, one a line;
# NAME.err says why they did not build.
ffi_flags() {   # file, name -> FFI (array), or WHY
  local file=$1 name=$2 dir=${1%/*}
  FFI=()
  [ "${dir##*/}" = ffi ] || return 0
  if [ -n "${UPSTREAM_FFI:-}" ] && [ -f "$UPSTREAM_FFI/$name.args" ]; then
    mapfile -t FFI < "$UPSTREAM_FFI/$name.args"
  elif [ -n "${UPSTREAM_FFI:-}" ] && [ -f "$UPSTREAM_FFI/$name.err" ]; then
    WHY="its library does not build: $(head -n1 "$UPSTREAM_FFI/$name.err")"
  else
    WHY="its library was not built (UPSTREAM_FFI)"
  fi
}

cmd_upstream() {
  local label=$1 bin=$2 file=$3 outdir=$4; shift 4
  local name dir col=()
  name=${file##*/}; name=${name%.hvm4}; name=${name%.hvm}
  dir=$outdir/$label; [ -d "$dir" ] || mkdir -p "$dir"
  [[ "$bin" == /* || "$bin" != */* ]] || bin=$PWD/$bin
  [[ "$file" == /* ]] || file=$PWD/$file
  parse_upstream "$file"
  WHY=""; GOT=""; RC=0
  ffi_flags "$file" "$name"
  if [ -z "$WHY" ] && [ "$NLINES" -eq 0 ] && [ -z "$PREFIX$CONTAINS" ]; then
    WHY="missing expected result comment"
  fi
  if [ -z "$WHY" ]; then
    if [ $NOCOL -eq 0 ]; then
      col=(-C)
      case "$name" in collapse_*|enum_*) col=(-C$NLINES) ;; esac
    fi
    GOT=$(cd "${file%/*}" && timeout -k 5 "${UPSTREAM_TIMEOUT:-20}" \
            "$bin" "$file" "$@" "${col[@]}" "${LEAD[@]}" "${FFI[@]}" 2>&1 < /dev/null)
    RC=$?
    [[ "$GOT" == *$'\e'* ]] && GOT=$(printf '%s' "$GOT" | strip_ansi)
    if [ $RC -eq 124 ] || [ $RC -eq 137 ]; then WHY="timeout after ${UPSTREAM_TIMEOUT:-20}s"
    elif [ $RC -ge 128 ]; then WHY="crashed (signal $((RC - 128)))"
    elif [[ "$GOT" == *anitizer* || "$GOT" == *"runtime error: "* ]] &&
         printf '%s\n' "$GOT" | grep -Eq "$SAN_RE"; then WHY="sanitizer report"
    elif [ -n "$PREFIX" ]; then
      [[ "$GOT" == "$PREFIX"* ]] || WHY="output does not start with the expected prefix"
    elif [ -n "$CONTAINS" ]; then
      [[ "$GOT" == *"$CONTAINS"* ]] || WHY="output does not contain the expected text"
    elif [ "$EXPECT" = PARSE_ERROR ]; then
      [[ "$GOT" == PARSE_ERROR* ]] || WHY="expected PARSE_ERROR"
    elif [ "$GOT" != "$EXPECT" ]; then
      WHY="output differs (exit $RC: $(first_lines))"
    fi
  fi
  [ -n "$PREFIX" ] && EXPECT="$PREFIX..."
  [ -n "$CONTAINS" ] && EXPECT="...$CONTAINS..."
  printf '%s\n' "$GOT" > "$dir/$name.out"; echo "$RC" > "$dir/$name.rc"
  verdict "$dir" "$name" detail_check
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  cmd=$1; shift
  case "$cmd" in
    check) cmd_check "$@" ;;
    same)  cmd_same "$@" ;;
    upstream) cmd_upstream "$@" ;;
    *) echo "usage: lib.sh check|same|upstream ..." >&2; exit 2 ;;
  esac
fi
