#!/usr/bin/env bash
# scripts/layers.sh: checks the layer rule (`make layers`; STYLE.md).
#
#   core <- heap <- lang <- {cpu, dev} <- collapse <- run <- cli
#
# A layer may use only the layers to its left: cpu and dev never use each
# other, and nothing uses run but cli (the hvm4g program: main.c, flags.c).
# Checked twice: from the #include
# lines of every file under src/, and from the undefined symbols of each
# layer's objects (the object files given as arguments). The core also
# includes no system header but <stdint.h> (its dialect has no libc).
# Prints each violation; the exit status is 1 if there is one.
set -u
cd "$(dirname "$0")/.."

allowed() {   # the layers a layer may use, itself included
  case "$1" in
    core)     echo "core" ;;
    heap)     echo "core heap" ;;
    lang)     echo "core heap lang" ;;
    cpu)      echo "core heap lang cpu" ;;
    dev)      echo "core heap lang dev" ;;
    collapse) echo "core heap lang cpu collapse" ;;
    run)      echo "core heap lang cpu dev collapse run" ;;
    cli)      echo "core heap lang cpu dev collapse run cli" ;;
    *)        echo "" ;;
  esac
}

layer_of() {  # src/cpu/eval.c, build/src/cpu/eval.o -> cpu; a file in src/ itself: none
  local p=${1#*src/}
  case "$p" in
    */*) echo "${p%%/*}" ;;
    *)   echo "" ;;
  esac
}

bad=0
fail() { echo "layers: $*"; bad=1; }

# 1. #include lines.
while IFS= read -r f; do
  from=$(layer_of "$f")
  ok=" $(allowed "$from") "
  if [ "$ok" = "  " ]; then fail "$f: not in a known layer folder"; continue; fi
  while IFS=: read -r line inc; do
    to=${inc%%/*}
    if [ "$to" = "$inc" ]; then
      fail "$f:$line: #include \"$inc\" names no layer folder"
    elif [[ "$ok" != *" $to "* ]]; then
      fail "$f:$line: $from includes $inc ($to is not below $from)"
    fi
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$f" |
           sed -E 's/^([0-9]+):[^"]*"([^"]+)".*/\1:\2/')
  if [ "$from" = core ]; then
    while IFS=: read -r line inc; do
      [ "$inc" = stdint.h ] || fail "$f:$line: the core includes <$inc> (only <stdint.h>)"
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<' "$f" |
             sed -E 's/^([0-9]+):[^<]*<([^>]+)>.*/\1:\2/')
  fi
done < <(find src -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \
                            -o -name '*.m' -o -name '*.metal' \) | sort)

# 2. Undefined symbols of each layer's objects, against the layer that
# defines them.
if [ "$#" -gt 0 ]; then
  defs=$(mktemp)
  trap 'rm -f "$defs"' EXIT
  for o in "$@"; do
    l=$(layer_of "$o")
    nm --defined-only -g "$o" 2>/dev/null | awk -v l="$l" 'NF == 3 { print $3, l }'
  done | sort -u > "$defs"
  undef=$(for o in "$@"; do
             from=$(layer_of "$o")
             nm -u "$o" 2>/dev/null | awk -v o="$o" -v l="$from" -v ok=" $(allowed "$from") " \
               '{ print o, l, ok "|" $NF }'
           done)
  # defs first (symbol -> layer), then each use: "obj layer  allowed |sym"
  out=$(awk 'NR == FNR { def[$1] = $2; next }
             { split($0, p, "|"); sym = p[2]; to = def[sym]
               if (to != "" && index(" " p[1] " ", " " to " ") == 0)
                 print "layers: " $1 ": " $2 " uses " sym ", defined in " to }' \
             "$defs" - <<< "$undef")
  if [ -n "$out" ]; then echo "$out"; bad=1; fi
fi

if [ "$bad" = 0 ]; then echo "layers: ok"; fi
exit "$bad"
