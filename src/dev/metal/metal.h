// metal.h: the device layer under the Metal backend (host code).
//
// metal.c runs the backend (buffers, pass, copies) through these few
// calls; metal_dev.m implements them on Metal (macOS), and
// tests/metal/mtl_cpu.cpp on CPU threads, running the very kernels of
// metal_kern.metal compiled as C++ (`make metal-check`). Buffers and
// kernels are numbered as in metal_abi.h.

#ifndef HVM4G_METAL_H
#define HVM4G_METAL_H

#include "dev/metal/metal_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  u32 fn;       // MK_*
  u32 threads;  // grid size (1D)
} MtlCall;

// Opens the device and builds the kernels, once. 0, or -1 and `err`.
int  md_init(char *err, unsigned errlen);
const char *md_name(void);          // the device, for -s
u32  md_lanes(void);                // default lanes
u64  md_max_bytes(void);            // largest buffer
// Buffer b holds at least `bytes` (reallocated when smaller: contents
// are then lost). 0, or -1 when the device is out of memory.
int  md_need(u32 b, u64 bytes);
int  md_put(u32 b, u64 off, const void *src, u64 bytes);
int  md_get(u32 b, u64 off, void *dst, u64 bytes);
int  md_zero(u32 b, u64 off, u64 bytes);
void md_swap(u32 a, u32 b);         // buffers a and b trade places
// Runs the calls in order (each sees what the ones before wrote) and
// waits for them. 0, or -1 and `err` (the device faulted).
int  md_run(const MtlCall *calls, u32 n, char *err, unsigned errlen);

#ifdef __cplusplus
}
#endif

#endif
