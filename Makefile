# hvm4g build. `make` builds ./hvm4g; `make test` runs every test.
CC      ?= cc
# CFLAGS is the user's (optimisation, sanitizers: `make CFLAGS=-O0`);
# HVM4G_CFLAGS holds what the build needs whatever CFLAGS says.
CFLAGS  ?= -O2 -g
HVM4G_CFLAGS := -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-unused-function -Isrc
LDLIBS  += -lpthread -lm
ifeq ($(origin NVCC),undefined)
NVCC    := $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
endif
BUILD   ?= build

SRCS    := $(wildcard src/*.c) $(wildcard src/gpu/*.c)
OBJS    := $(SRCS:%.c=$(BUILD)/%.o)
HDRS    := $(wildcard src/*.h) $(wildcard src/gpu/*.h)

# The CUDA backend is compiled wherever nvcc exists; the binary still runs
# (on the simulated device) where no GPU is present.
CUSRCS  := $(wildcard src/gpu/*.cu)
ifneq ($(NVCC),)
ifneq ($(CUSRCS),)
HVM4G_CFLAGS += -DHVM4G_CUDA
OBJS    += $(CUSRCS:%.cu=$(BUILD)/%.o)
# nvcc may be a wrapper script (CI has /usr/local/bin/nvcc), so ask nvcc
# itself where its toolkit lives rather than trusting its own directory.
CUDA_TOP := $(shell $(NVCC) -dryrun -x cu /dev/null 2>&1 | sed -n 's/^\#\$$ TOP=//p' | head -n1)
ifeq ($(origin CUDA_LIB),undefined)
CUDA_LIB := $(firstword $(foreach d,$(CUDA_TOP)/lib64 $(wildcard $(CUDA_TOP)/targets/*/lib) \
              $(dir $(NVCC))../lib64 /usr/local/cuda/lib64,$(if $(wildcard $(d)/libcudart_static.a),$(d))))
endif
ifeq ($(CUDA_LIB),)
$(error nvcc found at $(NVCC) but not libcudart_static.a; set CUDA_LIB=dir or NVCC= to build without CUDA)
endif
LDLIBS  += -L$(CUDA_LIB) -lcudart_static -ldl -lrt -lstdc++
endif
endif
NVFLAGS ?= -O3 -arch=sm_90 -Isrc -lineinfo

hvm4g: $(OBJS)
	$(CC) $(HVM4G_CFLAGS) $(CFLAGS) -o $@ $(OBJS) $(LDLIBS)

$(BUILD)/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HVM4G_CFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/%.o: %.cu $(HDRS)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -c -o $@ $<

test: hvm4g
	bash tests/run.sh

clean:
	rm -rf build build-* hvm4g

.PHONY: test clean

# Sanitizer build (tests/run.sh uses it): ./build-asan/hvm4g.
ASAN_CFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer
$(BUILD)/hvm4g: $(OBJS)
	$(CC) $(HVM4G_CFLAGS) $(CFLAGS) -o $@ $(OBJS) $(LDLIBS)

asan:
	CFLAGS='$(ASAN_CFLAGS)' $(MAKE) BUILD=build-asan build-asan/hvm4g

# Thread-sanitizer build of the CPU runtime (no CUDA): ./build-tsan/hvm4g.
TSAN_CFLAGS := -O1 -g -fsanitize=thread
tsan:
	CFLAGS='$(TSAN_CFLAGS)' $(MAKE) BUILD=build-tsan NVCC= build-tsan/hvm4g

.PHONY: asan tsan

# The fuzzer (tests/fuzz/README.md) for FUZZ_TIME seconds (default 30 min),
# from a random seed; `make test` runs a fixed-seed sample.
FUZZ_TIME ?= 1800
fuzz: asan
	python3 tests/fuzz/fuzz.py --bin build-asan/hvm4g --time $(FUZZ_TIME) \
	  --out fuzz-findings $(if $(HVM4_REF_TESTS),--ref-tests $(HVM4_REF_TESTS))

.PHONY: fuzz
