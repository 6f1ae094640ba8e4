#!/bin/bash
# run34: full h200_check on a0901de + mark-levels=1 correctness (conformance atomic+owner, sanitizer)
set -u
T0=$(date +%s)
say() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
: # the reference binary .ref/hvm4ref was built on that machine from its own sources, outside this repository (the build line is not kept here)
OUT=$OUT HVM4_REF=.ref/hvm4ref HVM4_REF_TESTS=.ref/test HVM4_REF_BENCH=.ref/bench bash scripts/h200_check.sh
exec > >(tee "$OUT/run34_ml.txt") 2>&1
printf '#!/bin/sh\nexec %s/hvm4g "$@" --mark-levels=1\n' "$PWD" > /tmp/hml && chmod +x /tmp/hml
for m in atomic owner; do
  HVM4G_BIN=/tmp/hml JOBS=8 bash tests/conformance.sh .ref/test --device=cuda --dup=$m > "$OUT/conf_ml_$m.txt" 2>&1
  say "conformance mark-levels=1 $m: $(tail -n 1 "$OUT/conf_ml_$m.txt")"
  grep '^\[FAIL' "$OUT/conf_ml_$m.txt" | head
done
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n1)
for p in wide_tree shared_tree pack_gnf_shared; do for tool in memcheck racecheck; do for dup in owner atomic; do
  r=$(cd tests/gpu && timeout -k 5 120 "$SAN" --tool $tool --error-exitcode 99 ../../hvm4g $p.hvm4 -G --device=cuda --dup=$dup --lanes=512 --stack=1024 --mark-levels=1 -s 2>&1)
  echo "  san $p $tool $dup rc=$?: $(printf '%s\n' "$r" | grep -E 'SUMMARY|packing' | tr '\n' ' ')"
done; done; done
say "done"
