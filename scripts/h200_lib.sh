# scripts/h200_lib.sh: what scripts/h200_check.sh and a session's ad-hoc
# device scripts share (source it after setting T0): `say` and `run`, so
# that each log line of a device run reads the same.
#
#   T0=$(date +%s); source scripts/h200_lib.sh
#   run ./hvm4g bench/gpu_wide_map.hvm4 -S -s --gpu --dup=owner

say() { echo "[$(( $(date +%s) - ${T0:-0} )) s] $*"; }

# run BIN ARGS...: one line of the -s figures that matter, wall and RSS.
run() {
  local b=$1; shift
  local o
  o=$(/usr/bin/time -f "wall %e s, rss %M KB" "$b" "$@" 2>&1)
  printf '  %s %s:' "$(basename "$b")" "$*"
  printf '%s\n' "$o" | awk '
    /^- Itrs:/            { printf " %s itrs", $3 }
    /^- Device: /         { printf ", %s lanes, %s %s", $4, $6, $8 }
    /^- Device passes:/   { printf ", %s passes", $4 }
    /^- Device time:/     { t = $4; printf ", device %.1f ms", t * 1000 }
    /^- Device perf:/     { printf ", %s M itrs/s", $4 }
    /^- Device packing:/  { p = $4; printf ", packing %.2f ms (marking %.2f ms, %s passes, diff %.2f ms, ranking %.2f ms)", p * 1000, $7 * 1000, $10, $13 * 1000, $16 * 1000 }
    /^- Device copy out:/ { c = $5; printf ", copy out %.2f ms (%s MB pinned ahead, %s behind)", c * 1000, substr($7, 2), $13 }
    /^- Device heap:/     { printf ", %s words live", $7 }
    /^- Lane balance:/    { printf ", balance %s", $4 }
    /^- Device copy in:/  { printf ", copy in %.2f ms", $5 * 1000 }
    /^- Device took over/ { printf ", took over %s", $8 }
    /^- Device started over/ { printf ", started over (the pool'"'"'s %s itrs dropped)", $18 }
    /^- Device: not used/  { printf ", device not used" }
    /^wall/               { w = $0 }
    END { if (t > 0) printf " (%.1f%% of device)", 100 * (p + c) / t;
          printf ", %s\n", w }'
}

# variants NAME=FLAGS...: ./hvm4g_NAME for each, the CUDA backend compiled
# with FLAGS added to NVFLAGS (in parallel, each in build-NAME/), linked
# with the default build's other objects. Build ./hvm4g first.
variants() {
  local link v name flags cmd
  link=$(make -s -n -B hvm4g | tail -n 1)
  for v in "$@"; do
    name=${v%%=*}; flags=${v#*=}
    cmd=${link/-o hvm4g /-o hvm4g_$name }
    cmd=${cmd/build\/src\/gpu\/cuda.o/build-$name/src/gpu/cuda.o}
    ( make -s BUILD="build-$name" NVFLAGS="-O3 -arch=sm_90 -Isrc -lineinfo $flags" \
        "build-$name/src/gpu/cuda.o" && eval "$cmd" ) &
  done
  wait
}
