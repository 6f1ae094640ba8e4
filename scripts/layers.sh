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
# Two more rules keep the tree and its map in step: each header's include
# guard names its file (HVM4G_<NAME>_H, STYLE.md), and each file under src/
# has a row in docs/architecture.md's module table (by its path, its
# `.[ch]` pair, or its folder).
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

# 3. Include guards: the first #ifndef of a header names the file.
while IFS= read -r f; do
  want=HVM4G_$(basename "$f" | sed 's/\.[a-z]*$//' | tr 'a-z' 'A-Z')_H
  grep -q 'No include' "$f" && continue   # included twice on purpose (it says why: "No include guard")
  got=$(grep -m1 -E '^#ifndef[[:space:]]+HVM4G_' "$f" | awk '{print $2}')
  [ "$got" = "$want" ] || fail "$f: include guard ${got:-none}, not $want"
done < <(find src -type f \( -name '*.h' -o -name '*.cuh' \) | sort)

# 4. The module table of docs/architecture.md names every file under src/.
rows=$(awk '/^## Modules/ { on = 1; next } /^## / { on = 0 } on && /^\|/' docs/architecture.md |
       awk -F'|' '{ print $2 }' | grep -oE '`[^`]+`' | tr -d '`')
while IFS= read -r f; do
  p=${f#src/}
  pair=${p%.*}.[ch]
  covered=0
  while IFS= read -r r; do
    [ -n "$r" ] || continue
    if [ "$r" = "$p" ] || [ "$r" = "$pair" ]; then covered=1; break; fi
    case "$r" in */) [[ "$p" == "$r"* ]] && { covered=1; break; } ;; esac
  done <<< "$rows"
  [ "$covered" = 1 ] || fail "$f: no row in docs/architecture.md's module table"
done < <(find src -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \
                            -o -name '*.m' -o -name '*.metal' \) | sort)

if [ "$bad" = 0 ]; then echo "layers: ok"; fi
exit "$bad"
