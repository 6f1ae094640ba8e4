// gpu.h: the device normal form, as the CPU runtime sees it (host code).

#ifndef HVM4G_GPU_H
#define HVM4G_GPU_H

#include <stdio.h>
#include "../term.h"

// Consumes one command-line argument that belongs to the device
// (-G/--gpu, --device=sim|cuda|metal, --dup=owner|atomic, --trace FILE,
// ...). Returns how many argv entries it used (0: not a device flag).
int  gpu_flag(int argc, char **argv, int i);
int  gpu_requested(void);   // -G/--gpu given: normalize @main on the device
// Strong normal form of HEAP[loc] on the device, in place. If the device
// stops early (primitive, error, arena), the CPU finishes the normalization
// before this returns. Safe to call from the CPU evaluator for %gnf.
void gpu_snf_at(u32 loc);
void gpu_print_stats(FILE *out);   // -s after a device run
u64  gpu_itrs(void);               // interactions done on the device

#endif
