// metal_dev.m: the device layer of the Metal backend (metal.h) on Apple's
// Metal API. Objective-C with ARC: the API is Objective-C, and calling it
// from C through objc_msgSend needs a cast per message, which the compiler
// cannot check. Everything else of the backend is C (metal.c).
//
// The kernels come from the metallib that the Makefile compiles from
// metal_kern.metal and embeds (HVM4G_METALLIB). One command queue; a pass
// is one command buffer with one serial compute encoder: its dispatches
// run in order, each seeing what the previous wrote.
//
// Storage: buffers are MTLStorageModeShared (one memory on Apple silicon:
// md_put/md_get are memcpy). HVM4G_METAL_STORAGE=private puts every
// buffer but the per-pass arguments and counters in private storage and
// copies through a shared staging buffer with blits; docs/metal.md says
// when that may pay.

#import <Foundation/Foundation.h>
#import <Metal/Metal.h>
#include <stdlib.h>
#include <string.h>
#include "dev/metal/metal.h"

extern const unsigned char HVM4G_METALLIB[];
extern const unsigned long HVM4G_METALLIB_LEN;

static const char *KNAME[MK_COUNT] = {
  "k_step", "k_sum", "k_scan", "k_off", "k_gather",
};

#define STAGE_BYTES (64ull << 20)

// The device and what is made on it, once for the process (the device is
// one per process, dev.h): the queue, the kernels and the buffers kept
// between runs, which one run at a time uses (the device's lock, gpu.c).
static id<MTLDevice>               g_dev;
static id<MTLCommandQueue>         g_queue;
static id<MTLComputePipelineState> g_pipe[MK_COUNT];
static id<MTLBuffer>               g_buf[MB_COUNT];
static u64                         g_cap[MB_COUNT];
static id<MTLBuffer>               g_stage;
static int                         g_priv;
static char                        g_name[160] = "metal";

int md_init(char *err, unsigned errlen) {
  @autoreleasepool {
    g_dev = MTLCreateSystemDefaultDevice();
    if (!g_dev) {
      snprintf(err, errlen, "no Metal device");
      return -1;
    }
    if (![g_dev supportsFamily:MTLGPUFamilyMetal3]) {
      snprintf(err, errlen, "%s: Metal 3 is needed", g_dev.name.UTF8String);
      return -1;
    }
    snprintf(g_name, sizeof g_name, "metal (%s)", g_dev.name.UTF8String);
    NSError *e = nil;
    dispatch_data_t lib_data = dispatch_data_create(
        HVM4G_METALLIB, HVM4G_METALLIB_LEN, NULL,
        DISPATCH_DATA_DESTRUCTOR_DEFAULT);
    id<MTLLibrary> lib = [g_dev newLibraryWithData:lib_data error:&e];
    if (!lib) {
      snprintf(err, errlen, "loading the kernels: %s",
               e.localizedDescription.UTF8String);
      return -1;
    }
    for (u32 k = 0; k < MK_COUNT; k++) {
      id<MTLFunction> f = [lib newFunctionWithName:@(KNAME[k])];
      g_pipe[k] = f ? [g_dev newComputePipelineStateWithFunction:f error:&e]
                    : nil;
      if (!g_pipe[k]) {
        snprintf(err, errlen, "kernel %s: %s", KNAME[k],
                 f ? e.localizedDescription.UTF8String : "missing");
        return -1;
      }
    }
    g_queue = [g_dev newCommandQueue];
    const char *st = getenv("HVM4G_METAL_STORAGE");
    g_priv = st && strcmp(st, "private") == 0;
    if (g_priv) {
      g_stage = [g_dev newBufferWithLength:STAGE_BYTES
                                   options:MTLResourceStorageModeShared];
    }
    if (!g_queue || (g_priv && !g_stage)) {
      snprintf(err, errlen, "no command queue or staging buffer");
      return -1;
    }
    return 0;
  }
}

const char *md_name(void) {
  return g_name;
}

u32 md_lanes(void) {
  return 8192;
}

u64 md_max_bytes(void) {
  u64 a = g_dev.maxBufferLength;
  u64 b = g_dev.recommendedMaxWorkingSetSize / 2;
  return a < b ? a : b;
}

// Arguments and counters are touched by the host every pass: shared.
static int is_private(u32 b) {
  return g_priv && b != MB_ARGS && b != MB_RES;
}

int md_need(u32 b, u64 bytes) {
  if (bytes <= g_cap[b]) return 0;
  u64 c = g_cap[b] ? g_cap[b] : 4096;
  while (c < bytes && c < (64ull << 20)) c *= 2;
  if (c < bytes) c = (bytes + 0xFFFF) & ~0xFFFFull;   // large: as asked
  g_buf[b] = nil;
  g_cap[b] = 0;
  MTLResourceOptions o = is_private(b) ? MTLResourceStorageModePrivate
                                       : MTLResourceStorageModeShared;
  g_buf[b] = [g_dev newBufferWithLength:c options:o];
  if (!g_buf[b]) return -1;
  g_cap[b] = c;
  return 0;
}

// One blit command buffer, run to completion.
typedef enum { BL_IN, BL_OUT, BL_ZERO } Blit;

static int blit(Blit how, u32 b, u64 off, u64 bytes) {
  @autoreleasepool {
    id<MTLCommandBuffer> cb = [g_queue commandBuffer];
    id<MTLBlitCommandEncoder> bl = [cb blitCommandEncoder];
    if (how == BL_IN) {
      [bl copyFromBuffer:g_stage sourceOffset:0 toBuffer:g_buf[b]
        destinationOffset:off size:bytes];
    } else if (how == BL_OUT) {
      [bl copyFromBuffer:g_buf[b] sourceOffset:off toBuffer:g_stage
        destinationOffset:0 size:bytes];
    } else {
      [bl fillBuffer:g_buf[b] range:NSMakeRange(off, bytes) value:0];
    }
    [bl endEncoding];
    [cb commit];
    [cb waitUntilCompleted];
    return cb.status == MTLCommandBufferStatusCompleted ? 0 : -1;
  }
}

int md_put(u32 b, u64 off, const void *src, u64 bytes) {
  if (off + bytes > g_cap[b]) return -1;
  if (!is_private(b)) {
    memcpy((char *)g_buf[b].contents + off, src, bytes);
    return 0;
  }
  for (u64 at = 0; at < bytes; at += STAGE_BYTES) {
    u64 n = bytes - at < STAGE_BYTES ? bytes - at : STAGE_BYTES;
    memcpy(g_stage.contents, (const char *)src + at, n);
    if (blit(BL_IN, b, off + at, n) != 0) return -1;
  }
  return 0;
}

int md_get(u32 b, u64 off, void *dst, u64 bytes) {
  if (off + bytes > g_cap[b]) return -1;
  if (!is_private(b)) {
    memcpy(dst, (const char *)g_buf[b].contents + off, bytes);
    return 0;
  }
  for (u64 at = 0; at < bytes; at += STAGE_BYTES) {
    u64 n = bytes - at < STAGE_BYTES ? bytes - at : STAGE_BYTES;
    if (blit(BL_OUT, b, off + at, n) != 0) return -1;
    memcpy((char *)dst + at, g_stage.contents, n);
  }
  return 0;
}

int md_zero(u32 b, u64 off, u64 bytes) {
  if (off + bytes > g_cap[b]) return -1;
  if (!is_private(b)) {
    memset((char *)g_buf[b].contents + off, 0, bytes);
    return 0;
  }
  return bytes ? blit(BL_ZERO, b, off, bytes) : 0;
}

void md_swap(u32 a, u32 b) {
  id<MTLBuffer> t = g_buf[a]; g_buf[a] = g_buf[b]; g_buf[b] = t;
  u64 c = g_cap[a]; g_cap[a] = g_cap[b]; g_cap[b] = c;
}

int md_run(const MtlCall *calls, u32 n, char *err, unsigned errlen) {
  @autoreleasepool {
    id<MTLCommandBuffer> cb = [g_queue commandBuffer];
    id<MTLComputeCommandEncoder> enc = [cb computeCommandEncoder];
    for (u32 b = 0; b < MB_COUNT; b++) {
      if (g_buf[b]) [enc setBuffer:g_buf[b] offset:0 atIndex:b];
    }
    for (u32 c = 0; c < n; c++) {
      id<MTLComputePipelineState> p = g_pipe[calls[c].fn];
      NSUInteger tg = p.maxTotalThreadsPerThreadgroup;
      if (tg > 256) tg = 256;
      [enc setComputePipelineState:p];
      [enc dispatchThreads:MTLSizeMake(calls[c].threads, 1, 1)
        threadsPerThreadgroup:MTLSizeMake(tg, 1, 1)];
    }
    [enc endEncoding];
    [cb commit];
    [cb waitUntilCompleted];
    if (cb.status != MTLCommandBufferStatusCompleted) {
      snprintf(err, errlen, "command buffer failed: %s (a pass too long "
               "for the GPU watchdog? lower --budget)",
               cb.error ? cb.error.localizedDescription.UTF8String : "?");
      return -1;
    }
    return 0;
  }
}
