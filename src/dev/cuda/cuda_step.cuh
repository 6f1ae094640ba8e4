// cuda_step.cuh: the step kernel, included by cuda.cu once per DUP take
// (namespaces t64 and t32, D_TAKE32 0 and 1), after lane.h. No include
// guard: it is meant to be compiled twice.

__global__ void __launch_bounds__(LANE_TPB, K_STEP_MIN_BLOCKS)
k_step(PassArgs a, const u64 *in, u32 n, u32 lanes, u64 *outs, u32 *out_n,
       u32 *arena, Term *stacks, u32 *seen, PassCtl *ctl) {
  u32 lane = blockIdx.x * blockDim.x + threadIdx.x;
#if LANE_BALANCE || LANE_CLOCK
  u32 valid = __ballot_sync(0xFFFFFFFFu, lane < lanes);
#endif
  if (lane >= lanes) return;
#if LANE_CLOCK
  u64 clk0 = clk_now();
#endif
  Lane L;
  lane_begin(&L, &a, lane, stacks, arena, outs);
  for (u64 i = lane; i < n; i += lanes) {
    u32 rem = (u32)((n - 1 - i) / lanes);
    lane_entry(&L, &a, seen, ctl, in[i], rem);
  }
#if LANE_BALANCE
  lane_balance(valid, L.w.itrs);
#endif
#if LANE_CLOCK
  lane_clock(valid, clk0, L.w.itrs);
#endif
  lane_end(&L, arena, lane, out_n, ctl);
}

