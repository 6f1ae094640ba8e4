#!/usr/bin/env bash
# dev47: heap base from constant memory A/B, ncu source counters, and
# sup_tree's kernels (nsys) for the packing's share.
T0=$(date +%s); source scripts/h200_lib.sh
OUT=$OUT HVM4_REF_BENCH=.ref/bench timeout 420 bash scripts/h200_check.sh heapconst ncusrc > /dev/null 2>&1
cp $OUT/h200_check.txt $OUT/h200_check_47.txt
ST=.ref/bench/par/sup_tree.hvm4
if command -v nsys > /dev/null; then
  say "nsys: sup_tree kernels" >> $OUT/nsys.txt
  for m in owner atomic; do
    nsys profile -o $OUT/nsys_sup_tree_$m -f true --stats=false ./hvm4g $ST -S --gpu --dup=$m --cpu-first=0 --dev-heap=4G > /dev/null 2>&1
    nsys stats -q -r cuda_gpu_kern_sum,cuda_gpu_mem_time_sum -f csv $OUT/nsys_sup_tree_$m.nsys-rep > $OUT/nsys_sup_tree_$m.csv 2>&1
    rm -f $OUT/nsys_sup_tree_$m.nsys-rep $OUT/nsys_sup_tree_$m.sqlite
  done
else
  echo "no nsys: $(ls /usr/local/cuda/bin | tr '\n' ' ')" >> $OUT/nsys.txt
fi
say done >> $OUT/nsys.txt
# The -DHVM4G_HEAP_CONST code these runs measured, removed from src/gpu/cuda.cu after (not kept):
# // -DHVM4G_HEAP_CONST (an experiment, off by default): the heap's base in
# // constant memory, an operand of the instructions that use it. Read from
# // the Wnf instead, it is a local-memory load before every heap access
# // (the Wnf lives in the stack frame, its address taken by the rules kept
# // out of line, and each exchange's "memory" clobber makes it be read
# // again): 50 of k_step's 134 ld.local in the PTX.
# #ifdef HVM4G_HEAP_CONST
# __constant__ Term *D_HEAPC;
# #if HVM4G_HEAP_CONST == 2
# // Read at each use (a load from the constant cache): held in registers
# // across the kernel instead (=1), it raised k_step's spills from 80/88 to
# // 212/264 B.
# __device__ inline Term *cu_heap_base(void) {
#   Term *p;
#   asm volatile("ld.const.u64 %0, [D_HEAPC];" : "=l"(p));
#   return p;
# }
# #define HEAP_BASE(w)           cu_heap_base()
# #else
# #define HEAP_BASE(w)           D_HEAPC
# #endif
# #else
# #define HEAP_BASE(w)           ((w)->heap)
# #endif
#   (and in cu_open, after C.a.heap = C.heap:) #ifdef HVM4G_HEAP_CONST / CK(cudaMemcpyToSymbol(D_HEAPC, &C.heap, sizeof C.heap), "heap base"); / #endif
