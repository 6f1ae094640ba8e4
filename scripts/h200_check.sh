#!/usr/bin/env bash
# scripts/h200_check.sh: one device session's checks and measurements, in
# one call (about 7 minutes on the H200): the CUDA backend's checks, the
# reference's tests on CUDA, and the device-only table of issues 8 and 9.
#
#   OUT=dir HVM4_REF_TESTS=ref/test HVM4_REF_BENCH=ref/bench \
#     bash scripts/h200_check.sh [checks] [rates] [balance] [ncu]
#
# Parts (all when none is named; all of them pass the 10-minute limit of
# one device call: run `checks` in one call and the others in another):
#   checks   scripts/cuda_check.sh (compute-sanitizer included), then
#            tests/conformance.sh on CUDA in both DUP modes (HVM4_REF_TESTS)
#   rates    each wide program device only (--gpu --cpu-first=0), both
#            modes, twice: device time, M itrs/s, packing, copy out and their
#            share of device time, peak RSS; then -T16 and --gpu walls; the
#            packing with and without --mark-levels; --pin-ahead 8M and
#            32M on shared wide (its result passes the 64 MB pinned ahead);
#            owner regions of 2^8-2^10 words; the copy in of a %gnf
#   hybrid   `--gpu -T16` with --take-max 64M (default), 1G and 4G words,
#            and 4G with --warm-after=0 (run54, from the slots the pool
#            left: the wide map's copy in 4-6.5 ms, shared wide's ~1 s)
#   balance  a -DLANE_BALANCE build on the wide map and tree map
#   ncu      the step kernel's profile (ncu --clock-control none, one launch)
#   book     (not in the default set) wnf_instance's template words read
#            through the read-only path and stored plainly (the default)
#            against volatile loads and cu_st (-DHVM4G_BOOK_VOLATILE)
#   giverel  (not in the default set; run99) -DHVM4G_GIVE_RELEASE: a SUB
#            with no location (a number) stored with a release, as every
#            SUB was before run99, against relaxed (the default), timed as book
#   packk    (not in the default set) sup_tree's and the spin tree's
#            kernels, each launch's duration summed by kernel (ncu, one
#            metric), beside -s's packing parts
#   fixed    (not in the default set; run56) hello's wall with the
#            default device heap and lanes, and with small ones
#   default  `--gpu` alone (a pool of every core first, then the device:
#            taking over, or starting over past --take-max), against
#            --restart=0, the device only (--cpu-first=0), -T16 and the
#            reference's -T16 ($HVM4_REF): three rounds of walls, and each
#            --gpu output against -T16's
#   ncusrc   the same launch's instructions executed per source line and
#            per SASS instruction (SourceCounters): where the ~190 thread
#            instructions an interaction costs go (not in the default set;
#            NCUSRC_PROGS names the bench/ programs, default the wide map
#            and the spin tree; NCUSRC_SKIP the launches skipped, default
#            8: on the wide map the ninth launch is a narrow pass, the
#            tenth (atomic) a wide one), and, where nvdisasm is, the stall
#            samples per source line (ncu_summary.py with the line table)
# Logs go to $OUT (default ./h200-check); the reference is never built here.

set -u
cd "$(dirname "$0")/.." || exit 1
OUTDIR=${OUT:-$PWD/h200-check}
mkdir -p "$OUTDIR"
PARTS=${*:-checks rates hybrid balance ncu}
LOG=$OUTDIR/h200_check.txt
exec > >(tee "$LOG") 2>&1
T0=$(date +%s)
# shellcheck source=scripts/h200_lib.sh
source scripts/h200_lib.sh
has() { [[ " $PARTS " == *" $1 "* ]]; }

say "h200_check: $(date -u '+%Y-%m-%d %H:%M UTC'), $(git log -1 --format=%h 2>/dev/null || echo '?')"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
make -j"$(nproc)" -s hvm4g || { echo "build failed"; exit 1; }
make -s cuda-regs 2>&1 | grep -E "k_step|k_mark|k_gather"

if has checks; then
  say "cuda_check"
  HVM4G_BIN=./hvm4g bash scripts/cuda_check.sh "$OUTDIR/cuda-check" > /dev/null 2>&1
  tail -n 10 "$OUTDIR/cuda-check/summary.txt"
  if [ -n "${HVM4_REF_TESTS:-}" ]; then
    for m in owner atomic; do
      HVM4G_BIN=./hvm4g JOBS=5 bash tests/conformance.sh "$HVM4_REF_TESTS" \
        --device=cuda --dup=$m --dev-heap=1G > "$OUTDIR/conformance_$m.txt" 2>&1
      say "conformance $m: $(tail -n 1 "$OUTDIR/conformance_$m.txt")"
      grep -v '^\[PASS\]' "$OUTDIR/conformance_$m.txt" | grep '^\[' | head
    done
  fi
fi

# say, run, variants: scripts/h200_lib.sh

WIDE=(bench/gpu_wide_map.hvm4 bench/gpu_sup_search.hvm4 bench/gpu_shared_wide.hvm4
      bench/gpu_tree_map.hvm4 bench/gpu_shared_tree.hvm4 bench/gpu_spin_tree.hvm4)
ST=${HVM4_REF_BENCH:+$HVM4_REF_BENCH/par/sup_tree.hvm4}
[ -n "$ST" ] && [ -f "$ST" ] && WIDE+=("$ST")
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1   # warm up

if has rates; then
  say "rates: device only, two runs each"
  for f in "${WIDE[@]}"; do
    for r in 1 2; do for m in owner atomic; do
      run ./hvm4g "$f" -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G
    done; done
    for m in owner atomic; do   # the default device heap (the host's)
      run ./hvm4g "$f" -S -s --gpu --dup=$m --cpu-first=0
    done
    run ./hvm4g "$f" -S -T16
    run ./hvm4g "$f" -S -s --gpu -T16
    [ -n "${HVM4_REF:-}" ] && run "$HVM4_REF" "$f" -S -T16
  done
  say "mark levels (--mark-levels=0 against 1)"
  for f in bench/gpu_tree_map.hvm4 bench/gpu_shared_tree.hvm4 ${ST:+"$ST"}; do
    for r in 1 2; do for l in 0 1; do
      run ./hvm4g "$f" -S -s --gpu --dup=atomic --cpu-first=0 --dev-heap=4G --mark-levels=$l
    done; done
  done
  say "pinned ahead: 8M words (default) against 32M, shared wide"
  for r in 1 2; do for p in 8M 32M; do
    run ./hvm4g bench/gpu_shared_wide.hvm4 -S -s --gpu --dup=atomic --cpu-first=0 --dev-heap=4G --pin-ahead=$p
  done; done
  say "owner regions: --region-shift 8 / 9 (the default's, 1.08M lanes) / 10"
  for f in bench/gpu_shared_wide.hvm4 bench/gpu_wide_map.hvm4; do
    for r in 1 2; do for k in 8 9 10; do
      run ./hvm4g "$f" -S -s --gpu --dup=owner --cpu-first=0 --region-shift=$k
    done; done
  done
  say "copy in after a large CPU computation (%gnf)"
  for a in "" "--gpu"; do run ./hvm4g bench/gpu_gnf_late.hvm4 -S -s $a; done
fi

if has hybrid; then
  say "hybrid: --gpu -T16, --take-max 64M (default) / 1G / 4G words, and 4G with the context at once"
  for f in bench/gpu_wide_map.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_sup_search.hvm4 bench/gpu_tree_map.hvm4 ${ST:+"$ST"}; do
    for r in 1 2; do
      run ./hvm4g "$f" -S -s --gpu -T16
      run ./hvm4g "$f" -S -s --gpu -T16 --take-max=1G --dev-heap=4G
      run ./hvm4g "$f" -S -s --gpu -T16 --take-max=4G --dev-heap=4G
      run ./hvm4g "$f" -S -s --gpu -T16 --take-max=4G --dev-heap=4G --warm-after=0
    done
  done
fi

if has balance; then
  say "balance: -DLANE_BALANCE"
  variants bal=-DLANE_BALANCE
  for f in bench/gpu_wide_map.hvm4 bench/gpu_tree_map.hvm4; do
    for m in owner atomic; do
      run ./hvm4g_bal "$f" -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G
    done
  done
fi

if has ncu && command -v ncu > /dev/null; then
  say "ncu: k_step, wide map, atomic, ninth launch"
  ncu --clock-control none -k regex:k_step -s 8 -c 1 --section SpeedOfLight \
    --section Occupancy --section WarpStateStats --section SchedulerStats \
    --section LaunchStats \
    --metrics 'smsp__thread_inst_executed_per_inst_executed.ratio,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    ./hvm4g bench/gpu_wide_map.hvm4 -S --gpu --dup=atomic --cpu-first=0 \
    --dev-heap=4G > "$OUTDIR/ncu_k_step.txt" 2>&1
  grep -E "Duration|Throughput|Occupancy|Registers|Active Threads|Cycles Per Issued|thread_inst_executed" \
    "$OUTDIR/ncu_k_step.txt" | head -20
  echo "  stalls (cycles per issued instruction): $(grep -E 'stalled_[a-z_]+_per_issue_active' \
    "$OUTDIR/ncu_k_step.txt" | awk '$NF + 0 >= 1 { sub(/.*stalled_/, "", $1);
    sub(/_per_issue_active.*/, "", $1); printf "%s %s, ", $1, $NF }')"
fi

# ab BIN...: each binary's outputs against ./hvm4g's (small programs, both
# modes), then all of them timed interleaved on the wide programs.
ab() {
  local f m b r want got
  for f in tests/gpu/wide_tree.hvm4 tests/gpu/shared_tree.hvm4 bench/gpu_tree_map.hvm4 ${ST:+"$ST"}; do
    for m in owner atomic; do
      want=$(./hvm4g "$f" --gpu --dup=$m --cpu-first=0 --dev-heap=4G 2>&1 | md5sum)
      for b in "$@"; do
        got=$("$b" "$f" --gpu --dup=$m --cpu-first=0 --dev-heap=4G 2>&1 | md5sum)
        [ "$got" = "$want" ] || echo "  OUTPUT DIFFERS: $(basename "$b") $f --dup=$m"
      done
    done
  done
  for f in bench/gpu_wide_map.hvm4 bench/gpu_shared_wide.hvm4 bench/gpu_sup_search.hvm4 bench/gpu_tree_map.hvm4 bench/gpu_spin_tree.hvm4 ${ST:+"$ST"}; do
    for r in 1 2; do for m in owner atomic; do
      for b in ./hvm4g "$@"; do
        run "$b" "$f" -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G
      done
    done; done
  done
}

if has book; then
  # HVM4G_BASE: a binary of the code before, if given.
  say "book: wnf_instance's batched template loads, volatile (HVM4G_BOOK_VOLATILE) against read-only${HVM4G_BASE:+ and $HVM4G_BASE}"
  variants bookv=-DHVM4G_BOOK_VOLATILE
  ab ./hvm4g_bookv ${HVM4G_BASE:+"$HVM4G_BASE"}
fi

if has giverel; then
  say "giverel: release stores of a SUB with no location (-DHVM4G_GIVE_RELEASE) against relaxed ones"
  variants giverel=-DHVM4G_GIVE_RELEASE
  ab ./hvm4g_giverel
fi

if has fixed; then
  # Issue 8: what --gpu costs beyond the context (0.22-0.25 s of hello's
  # 0.38-0.41 s wall in run51, its passes 40 ms): the device heap's size
  # (cudaMalloc and the driver's teardown at exit), the lanes' buffers.
  # run56: they cost 0.02-0.05 s of 0.40-0.45 s; the context is the rest.
  say "fixed: hello's wall, CPU / --gpu / --dev-heap=64M / --lanes=4096 / both"
  for r in 1 2 3; do
    run ./hvm4g examples/hello.hvm4 -s
    run ./hvm4g examples/hello.hvm4 -s --gpu --cpu-first=0
    run ./hvm4g examples/hello.hvm4 -s --gpu --cpu-first=0 --dev-heap=64M
    run ./hvm4g examples/hello.hvm4 -s --gpu --cpu-first=0 --lanes=4096
    run ./hvm4g examples/hello.hvm4 -s --gpu --cpu-first=0 --dev-heap=64M --lanes=4096
  done
fi

if has default; then
  # Issue 8: --gpu alone against -T16 on every program, the small ones
  # (tree map, sup_tree) included.
  say "default: --gpu outputs against -T16's"
  for f in "${WIDE[@]}"; do
    want=$(./hvm4g "$f" -T16 2>&1 | md5sum)
    got=$(./hvm4g "$f" --gpu 2>&1 | md5sum)
    [ "$got" = "$want" ] && echo "  same: $f" || echo "  OUTPUT DIFFERS: $f"
  done
  say "default: walls, three rounds: --gpu / --gpu --restart=0 / --gpu --cpu-first=0 / -T16 / reference -T16"
  for r in 1 2 3; do
    for f in "${WIDE[@]}"; do
      run ./hvm4g "$f" -S -s --gpu
      run ./hvm4g "$f" -S -s --gpu --restart=0
      run ./hvm4g "$f" -S -s --gpu --cpu-first=0
      run ./hvm4g "$f" -S -s -T16
      [ -n "${HVM4_REF:-}" ] && run "$HVM4_REF" "$f" -S -T16
    done
  done
fi

if has packk && command -v ncu > /dev/null; then
  # Issue 8: the packing kernel by kernel: each launch's duration (one
  # metric, no replay), to see which of diff, mark, count, scan, rank and
  # copy to work on; what the -s packing figure holds beyond them is host
  # round trips. --handoff=0: under ncu every pass is slow, and narrow
  # passes that took 0.1 s would hand the run to the CPU.
  for pm in ${ST:+"$ST:owner"} bench/gpu_spin_tree.hvm4:atomic; do
    f=${pm%:*}; m=${pm##*:}
    say "packk: $(basename "$f") --dup=$m, kernels one duration each (ncu), then -s twice"
    ncu --clock-control none --metrics gpu__time_duration.sum --csv --print-units base \
      ./hvm4g "$f" -S --gpu --dup=$m --cpu-first=0 --dev-heap=4G --handoff=0 \
      > "$OUTDIR/ncu_packk_$(basename "$f" .hvm4).csv" 2>&1
    awk -F'","' '/gpu__time_duration/ { k = $5; sub(/\(.*/, "", k); v = $NF; gsub(/[,"]/, "", v); t[k] += v; n[k]++ }
      END { for (k in t) printf "  %-22s %4d launches %10.1f us\n", substr(k, 1, 60), n[k], t[k] / 1000 }' \
      "$OUTDIR/ncu_packk_$(basename "$f" .hvm4).csv" | sort -k4 -n -r
    for r in 1 2; do run ./hvm4g "$f" -S -s --gpu --dup=$m --cpu-first=0 --dev-heap=4G; done
  done
fi

if has ncusrc && command -v ncu > /dev/null; then
  # The wide map (lanes of a warp in different rules) and the spin tree
  # (lanes in step: what an interaction costs without divergence, against
  # the 32 instructions of HVM4's CUDA prototype).
  lines=""
  if command -v nvdisasm > /dev/null; then
    # the build's own nvcc command (its NVFLAGS), making a cubin instead
    cubin=$(make -s -n -B build/src/gpu/cuda.o | tail -n 1 |
            sed "s| -c -o [^ ]*| -cubin -o $OUTDIR/k_step.cubin|")
    eval "$cubin" &&
      nvdisasm -g -c "$OUTDIR/k_step.cubin" | gzip > "$OUTDIR/k_step_lines.txt.gz" &&
      lines="$OUTDIR/k_step_lines.txt.gz"
    rm -f "$OUTDIR/k_step.cubin"
  fi
  for p in ${NCUSRC_PROGS:-gpu_wide_map gpu_spin_tree}; do
    say "ncu source counters: k_step, $p, atomic, launch $((${NCUSRC_SKIP:-8} + 1))"
    ncu --clock-control none -k regex:k_step -s "${NCUSRC_SKIP:-8}" -c 1 --section SourceCounters \
      --import-source yes -f -o "$OUTDIR/ncu_src_$p" \
      ./hvm4g bench/$p.hvm4 -S --gpu --dup=atomic --cpu-first=0 \
      --dev-heap=4G > "$OUTDIR/ncu_src_${p}_run.txt" 2>&1
    # Per CUDA line and per SASS instruction (the report stays for the GUI).
    ncu -i "$OUTDIR/ncu_src_$p.ncu-rep" --page source --csv --print-source cuda \
      > "$OUTDIR/ncu_src_${p}_cuda.csv" 2>&1
    ncu -i "$OUTDIR/ncu_src_$p.ncu-rep" --page source --csv --print-source sass \
      > "$OUTDIR/ncu_src_${p}_sass.csv" 2>&1
    ncu -i "$OUTDIR/ncu_src_$p.ncu-rep" --page details --section SourceCounters \
      > "$OUTDIR/ncu_src_${p}_details.txt" 2>&1
    head -c 2000 "$OUTDIR/ncu_src_${p}_details.txt"
    python3 scripts/ncu_summary.py "$OUTDIR/ncu_src_${p}_sass.csv" 20 $lines
  done
fi
say "done"
