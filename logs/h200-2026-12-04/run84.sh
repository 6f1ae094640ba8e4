#!/usr/bin/env bash
# dev84: where k_step's local-memory traffic goes, and two ways to cut it:
# the pass arguments as a __grid_constant__ parameter (no copy in the
# lane's frame: -DHVM4G_GRID_CONST), loads cached in L2 only, leaving L1
# to the lanes' frames (-Xptxas -dlcm=cg), and both. ncu memory tables
# (L1 hit rates by kind) of the default and the variants on the wide map;
# k_step's SASS (cuobjdump) for the local loads; rates, two rounds.
set -u
T0=$(date +%s); source scripts/h200_lib.sh
make -j16 -s hvm4g > $OUT/build.txt 2>&1 || { cat $OUT/build.txt; exit 1; }
variants gc=-DHVM4G_GRID_CONST cg="-Xptxas -dlcm=cg" gccg="-DHVM4G_GRID_CONST -Xptxas -dlcm=cg" >> $OUT/build.txt 2>&1
ls hvm4g_gc hvm4g_cg hvm4g_gccg >> $OUT/build.txt 2>&1
say "built" >> $OUT/build.txt
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
$CUOBJ -sass -fun '_ZN3t646k_stepE8PassArgsPKmjjPmPjS4_S3_S4_P7PassCtl' build/src/gpu/cuda.o > $OUT/k_step.sass 2>&1 ||
  $CUOBJ -sass build/src/gpu/cuda.o > $OUT/k_step.sass 2>&1
gzip -f $OUT/k_step.sass
./hvm4g bench/gpu_tree_map.hvm4 -S --gpu --cpu-first=0 > /dev/null 2>&1
rate() { timeout 30 "$@" 2>&1 | awk '/^- Device time:/{t=$4} /^- Device perf:/{p=$4} /^- Device passes:/{n=$4} END{printf "%s M/s %s passes %.1f ms", p, n, t*1000}'; }
for r in 1 2; do
for f in gpu_wide_map gpu_shared_wide gpu_sup_search gpu_tree_map gpu_spin_tree; do
  for m in owner atomic; do
    for b in hvm4g hvm4g_gc hvm4g_cg hvm4g_gccg; do
      echo "  $r $f $m $b: $(rate ./$b bench/$f.hvm4 -S -s --gpu --cpu-first=0 --dup=$m)"
    done
  done
done
done > $OUT/rates.txt
say "rates done" >> $OUT/build.txt
for b in hvm4g hvm4g_gccg; do
  timeout 120 ncu --clock-control none -k regex:k_step -s 8 -c 1 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
    --metrics 'l1tex__t_sector_pipe_lsu_mem_local_op_ld_hit_rate.pct,l1tex__t_sector_pipe_lsu_mem_local_op_st_hit_rate.pct,l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_sectors.sum,smsp__inst_executed.sum,smsp__thread_inst_executed.sum' \
    ./$b bench/gpu_wide_map.hvm4 -S --gpu --dup=atomic --cpu-first=0 --dev-heap=4G > $OUT/ncu_$b.txt 2>&1
  say "ncu $b" >> $OUT/build.txt
done
say "done" >> $OUT/build.txt
