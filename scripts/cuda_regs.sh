#!/usr/bin/env bash
# scripts/cuda_regs.sh: registers, stack frame and spills of every CUDA
# kernel (and of every function ptxas keeps out of line), from
# `nvcc -Xptxas -v` with the build's flags. `make cuda-regs` runs it.
#
#   scripts/cuda_regs.sh [NVCC [NVFLAGS...]]   (default: nvcc -O3 -arch=sm_90 -Isrc -lineinfo)
set -eu
cd "$(dirname "$0")/.."
NVCC=${1:-nvcc}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- -O3 -arch=sm_90 -Isrc -lineinfo
OBJ=$(mktemp /tmp/cuda_regs.XXXXXX.o)
trap 'rm -f "$OBJ"' EXIT
FILT=$(command -v cu++filt || command -v c++filt || echo cat)
"$NVCC" "$@" -Xptxas -v -c -o "$OBJ" src/dev/cuda/cuda.cu 2>&1 |
awk '
  /Function properties for/ { f = $NF; order[++n] = f }
  /bytes stack frame/       { stk[f] = $1; sst[f] = $5; sld[f] = $9 }
  /Used [0-9]+ registers/   { for (i = 1; i < NF; i++) if ($(i+1) ~ /^registers/) reg[f] = $i }
  END {
    for (i = 1; i <= n; i++) {
      f = order[i]
      printf "%s\t%s\t%s\t%s\t%s\n", f, (f in reg ? reg[f] : "-"), stk[f], sst[f], sld[f]
    }
  }' |
while IFS=$'\t' read -r name regs stack st ld; do
  printf '%-24s %5s regs %5s B stack %5s/%s B spill st/ld\n' \
    "$(printf '%s' "$name" | "$FILT" | sed -e 's/(.*//' -e 's/^_INTERNAL_[^:]*:://')" "$regs" "$stack" "$st" "$ld"
done
