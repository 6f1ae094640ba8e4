# hvm4g build. `make` builds ./hvm4g; `make test` runs every test.
CC      ?= cc
# CFLAGS is the user's (optimisation, sanitizers: `make CFLAGS=-O0`);
# HVM4G_CFLAGS holds what the build needs whatever CFLAGS says.
CFLAGS  ?= -O2 -g
HVM4G_CFLAGS := -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-unused-function -Isrc -Iinclude
LDLIBS  += -lpthread -lm -ldl   # -ldl: libssl is loaded for https (src/run/tls.c)
ifeq ($(origin NVCC),undefined)
NVCC    := $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
endif
BUILD   ?= build

SRCS    := $(wildcard src/*.c src/*/*.c src/*/*/*.c)
OBJS    := $(SRCS:%.c=$(BUILD)/%.o)
HDRS    := $(wildcard src/*/*.h src/*/*/*.h src/*/*/*.cuh include/*.h)

# The CUDA backend is compiled wherever nvcc exists, for every NVIDIA GPU
# from Turing (compute capability 7.5) on; the binary still runs where no
# GPU is present (--gpu then says so and runs on the CPU).
#
# CUDA_ARCHS: sm_XX embeds code for that GPU, compute_XX PTX that a later
# GPU compiles when the program loads, native the GPUs this machine shows.
# Default: native where a GPU is visible, else every architecture below
# that this nvcc builds; either way PTX (compute_90) for GPUs after them.
# An architecture nvcc cannot build is dropped with a note; an nvcc that
# builds none of them gives a build without CUDA.
CUSRCS  := $(wildcard src/dev/cuda/*.cu)
CUDA_ALL := sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_120
ifneq ($(NVCC),)
ifneq ($(CUSRCS),)
NV_CODES := $(shell $(NVCC) --list-gpu-code 2>/dev/null)
NV_VIRT  := $(shell $(NVCC) --list-gpu-arch 2>/dev/null)
GPU_SEEN := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | \
              tr -d '. ' | grep -E '^[0-9]+$$' | sort -u | sed 's/^/sm_/')
NV_PTX   := $(firstword $(filter compute_90,$(NV_VIRT)) \
              $(lastword $(filter $(patsubst sm_%,compute_%,$(CUDA_ALL)),$(NV_VIRT))))
ifeq ($(origin CUDA_ARCHS),undefined)
CUDA_ARCHS := $(if $(GPU_SEEN),native,$(CUDA_ALL)) $(NV_PTX)
endif
# 90 -> sm_90, native -> the GPUs seen; then only what this nvcc builds
CUDA_WANT := $(foreach a,$(CUDA_ARCHS),$(if $(filter native,$(a)),$(GPU_SEEN),$(if \
               $(filter sm_% compute_%,$(a)),$(a),sm_$(a))))
uniq = $(if $1,$(firstword $1) $(call uniq,$(filter-out $(firstword $1),$1)))
CUDA_USED := $(strip $(call uniq,$(filter $(NV_CODES) $(NV_VIRT),$(CUDA_WANT))))
CUDA_DROP := $(filter-out $(CUDA_USED),$(CUDA_WANT))
ifneq ($(CUDA_DROP),)
$(info hvm4g: $(NVCC) cannot build $(CUDA_DROP): dropped)
endif
ifeq ($(CUDA_USED),)
$(info hvm4g: $(NVCC) builds none of the GPU architectures asked for ($(CUDA_ARCHS)): building without CUDA)
NVCC :=
endif
endif
endif
# Code for each GPU is compiled from one of two PTX levels, compute_75
# below 9.0 and compute_90 from 9.0 on, so NVVM runs twice and ptxas once a
# GPU (what keeps the build time near one architecture's on two cores).
comma := ,
empty :=
space := $(empty) $(empty)
sm_level = $(if $(filter 75 80 86 87 88 89,$(patsubst sm_%,%,$(1))),75,90)
codes_at = $(strip $(foreach a,$(filter sm_%,$(CUDA_USED)),$(if $(filter $(1),$(call \
             sm_level,$(a))),$(a))) $(filter compute_$(1),$(CUDA_USED)))
NVARCH := $(foreach l,75 90,$(if $(call codes_at,$(l)),-gencode \
            'arch=compute_$(l)$(comma)code="$(subst $(space),$(comma),$(call codes_at,$(l)))"')) \
          $(foreach p,$(filter-out compute_75 compute_90,$(filter compute_%,$(CUDA_USED))),-gencode \
            arch=$(p)$(comma)code=$(p))
ifneq ($(NVCC),)
ifneq ($(CUSRCS),)
HVM4G_CFLAGS += -DHVM4G_CUDA -DHVM4G_CUDA_ARCHS='"$(CUDA_USED)"'
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
# the architectures compile in parallel, one nvcc thread each
NV_THREADS := $(if $(shell $(NVCC) --help 2>/dev/null | grep -e '--threads'),--threads 0)
endif
endif
NVFLAGS ?= -O3 -Isrc -lineinfo

# The Metal backend is compiled on macOS wherever `xcrun metal` exists
# (Xcode's Metal toolchain): the kernels become a metallib embedded in the
# binary. docs/metal.md.
ifeq ($(shell uname -s),Darwin)
METAL   ?= $(shell xcrun -sdk macosx -f metal 2>/dev/null)
ifneq ($(METAL),)
CFLAGS  += -DHVM4G_METAL
OBJS    += $(BUILD)/src/dev/metal/metal_dev.o $(BUILD)/metal_lib.o
LDLIBS  += -framework Metal -framework Foundation -lobjc
endif
endif

hvm4g: $(OBJS)
	$(CC) $(HVM4G_CFLAGS) $(CFLAGS) -o $@ $(OBJS) $(LDLIBS)

# --version's build information (src/run/api.c, hvm4g_version): the commit,
# rewritten only when it changes, so that api.o is rebuilt then and only then.
COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell \
            git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
$(BUILD)/commit.txt: FORCE
	@mkdir -p $(BUILD)
	@echo '$(COMMIT)' | cmp -s - $@ || echo '$(COMMIT)' > $@
$(BUILD)/src/run/api.o: $(BUILD)/commit.txt
$(BUILD)/src/run/api.o: HVM4G_CFLAGS += -DHVM4G_COMMIT='"$(COMMIT)"'

# -MMD -MP: each object depends on the headers it includes (its .d file),
# so touching a header rebuilds only those objects.
DEPFLAGS := -MMD -MP
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(HVM4G_CFLAGS) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

# The architectures built, remembered so that changing them rebuilds what
# depends on them (the CUDA objects, and gpu.o, which --version reads them in).
$(BUILD)/cuda-archs: FORCE
	@mkdir -p $(BUILD)
	@echo '$(CUDA_USED)' | cmp -s - $@ || echo '$(CUDA_USED)' > $@
$(BUILD)/src/dev/gpu.o: $(BUILD)/cuda-archs
FORCE:
.PHONY: FORCE

$(BUILD)/%.o: %.cu $(BUILD)/cuda-archs
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) $(NV_THREADS) $(NVARCH) $(DEPFLAGS) -c -o $@ $<

# Registers, stack frame and spills of each CUDA kernel (nvcc -Xptxas -v).
cuda-regs:
	@test -n "$(NVCC)" || { echo "cuda-regs: no nvcc"; exit 1; }
	@scripts/cuda_regs.sh $(NVCC) $(NVFLAGS) $(NVARCH)

.PHONY: cuda-regs

$(BUILD)/%.o: %.m
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -fobjc-arc -c -o $@ $<

# metal_kern.metal -> AIR -> metallib -> a C array (metal_dev.m loads it).
$(BUILD)/hvm4g.metallib: src/dev/metal/metal_kern.metal $(HDRS)
	@mkdir -p $(BUILD)
	xcrun -sdk macosx metal -Isrc -std=metal3.2 -mmacosx-version-min=15.0 -O2 -c -o $(BUILD)/metal_kern.air $<
	xcrun -sdk macosx metallib -o $@ $(BUILD)/metal_kern.air

$(BUILD)/metal_lib.c: $(BUILD)/hvm4g.metallib
	{ echo 'const unsigned char HVM4G_METALLIB[] = {'; xxd -i < $<; \
	  echo '};'; echo 'const unsigned long HVM4G_METALLIB_LEN = sizeof HVM4G_METALLIB;'; } > $@

$(BUILD)/metal_lib.o: $(BUILD)/metal_lib.c
	$(CC) -c -o $@ $<

# The runtime as a library (every object but main's): the unit tests link
# it, `make install` installs it with include/hvm4g.h.
LIBOBJS := $(filter-out $(BUILD)/src/cli/%,$(OBJS))
$(BUILD)/libhvm4g.a: $(LIBOBJS)
	rm -f $@
	$(AR) rcs $@ $^

lib: $(BUILD)/libhvm4g.a

# The library's examples (examples/*.c), each a program built against the
# library and its public header alone: ./$(BUILD)/examples/NAME. tests/run.sh
# runs them (and under the sanitizers, with BUILD and CFLAGS of theirs).
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
$(BUILD)/examples/%: examples/%.c include/hvm4g.h $(BUILD)/libhvm4g.a
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -Wall -Wextra -Iinclude $(CFLAGS) -o $@ $< $(BUILD)/libhvm4g.a $(LDLIBS)

examples: $(EXAMPLES)

# Installing: `make install PREFIX=/usr/local DESTDIR=`: the binary, the
# library, its header, the header of libraries of primitives (--ffi,
# docs/ffi.md), its pkg-config file and the man page (written by the
# binary from its flag table: --help=man).
PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  := $(PREFIX)/bin
LIBDIR  := $(PREFIX)/lib
INCDIR  := $(PREFIX)/include
PCDIR   := $(LIBDIR)/pkgconfig
MANDIR  := $(PREFIX)/share/man/man1
VERSION := $(shell sed -n 's/^\#define HVM4G_VERSION "\(.*\)"/\1/p' include/hvm4g.h)
INSTALLED := $(BINDIR)/hvm4g $(LIBDIR)/libhvm4g.a $(INCDIR)/hvm4g.h \
             $(INCDIR)/hvm4g_ffi.h $(PCDIR)/hvm4g.pc $(MANDIR)/hvm4g.1

$(BUILD)/hvm4g.1: hvm4g
	./hvm4g --help=man > $@

# A static library: Libs carries what it needs (threads, math, CUDA).
# Rewritten each time: PREFIX may differ from the last install.
$(BUILD)/hvm4g.pc: FORCE
	@mkdir -p $(BUILD)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' \
	  'includedir=$${prefix}/include' '' 'Name: hvm4g' \
	  'Description: the HVM4 runtime (Interaction Calculus) as a C library' \
	  'Version: $(VERSION)' \
	  'Libs: -L$${libdir} -lhvm4g $(strip $(LDLIBS))' 'Cflags: -I$${includedir}' > $@

install: hvm4g $(BUILD)/libhvm4g.a $(BUILD)/hvm4g.pc $(BUILD)/hvm4g.1
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) \
	  $(DESTDIR)$(PCDIR) $(DESTDIR)$(MANDIR)
	install -m 755 hvm4g $(DESTDIR)$(BINDIR)/hvm4g
	install -m 644 $(BUILD)/libhvm4g.a $(DESTDIR)$(LIBDIR)/libhvm4g.a
	install -m 644 include/hvm4g.h $(DESTDIR)$(INCDIR)/hvm4g.h
	install -m 644 include/hvm4g_ffi.h $(DESTDIR)$(INCDIR)/hvm4g_ffi.h
	install -m 644 $(BUILD)/hvm4g.pc $(DESTDIR)$(PCDIR)/hvm4g.pc
	install -m 644 $(BUILD)/hvm4g.1 $(DESTDIR)$(MANDIR)/hvm4g.1

# The files, then the folders install made that are left empty.
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir --ignore-fail-on-non-empty $(addprefix $(DESTDIR),$(BINDIR) $(PCDIR) \
	  $(LIBDIR) $(INCDIR) $(MANDIR) $(PREFIX)/share/man $(PREFIX)/share) 2>/dev/null

.PHONY: lib examples install uninstall

# The layer rule (scripts/layers.sh, STYLE.md): from the #include lines and
# from each layer's undefined symbols.
layers: $(OBJS)
	@scripts/layers.sh $(filter $(BUILD)/src/%.o,$(OBJS))

# Every test (CI, the README); `make check`: the fast tier (unit tests, the
# goldens on the CPU, a sample on the simulated device, the layers).
test: hvm4g
	bash tests/run.sh

check: hvm4g
	QUICK=1 bash tests/run.sh

.PHONY: layers check

clean:
	rm -rf build build-* hvm4g

.PHONY: test clean

# Sanitizer build (tests/run.sh uses it): ./build-asan/hvm4g.
ASAN_CFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer
$(BUILD)/hvm4g: $(OBJS) $(MTL_EXTRA)
	$(CC) $(HVM4G_CFLAGS) $(CFLAGS) -o $@ $(OBJS) $(MTL_EXTRA) $(LDLIBS)

asan:
	CFLAGS='$(ASAN_CFLAGS)' $(MAKE) BUILD=build-asan CUDA_ARCHS=sm_90 build-asan/hvm4g

# Thread-sanitizer build of the CPU runtime (no CUDA): ./build-tsan/hvm4g.
TSAN_CFLAGS := -O1 -g -fsanitize=thread
tsan:
	CFLAGS='$(TSAN_CFLAGS)' $(MAKE) BUILD=build-tsan NVCC= build-tsan/hvm4g

.PHONY: asan tsan

# The fuzzer (tests/fuzz/README.md) for FUZZ_TIME seconds (default 30 min),
# from a random seed; `make test` runs a fixed-seed sample.
FUZZ_TIME ?= 1800
# Its library call driver (tests/fuzz/api_seq.c) links the runtime built
# with ASan and without CUDA, in its own folder.
fuzz: asan build-metal/hvm4g-mtl
	CFLAGS='$(ASAN_CFLAGS)' $(MAKE) BUILD=build-asan-lib NVCC= METAL= build-asan-lib/libhvm4g.a
	$(CC) -std=gnu11 -Wall -Wextra -Iinclude $(ASAN_CFLAGS) -o build-asan-lib/api_seq \
	  tests/fuzz/api_seq.c build-asan-lib/libhvm4g.a $(LDLIBS)
	python3 tests/fuzz/fuzz.py --bin build-asan/hvm4g --time $(FUZZ_TIME) \
	  --metal build-metal/hvm4g-mtl --out fuzz-findings --api build-asan-lib/api_seq \
	  $(if $(HVM4_REF_TESTS),--ref-tests $(HVM4_REF_TESTS))

.PHONY: fuzz

# Linux check of the Metal backend: the kernel source compiled as C++
# against an MSL shim (tests/metal/metal_stdlib), run on CPU threads by
# ./build-metal/hvm4g-mtl (--device=metal), against the CPU on every golden
# and tests/gpu program in both DUP modes. docs/metal.md.
MTL_CXX ?= $(shell command -v clang++ 2>/dev/null || command -v g++ 2>/dev/null)
MTL_CXXFLAGS := -std=c++17 -O2 -g -Wall -Wextra -Wno-unused-parameter \
  -Wno-unused-function -Wno-attributes -Wno-unknown-attributes \
  -Wno-unknown-warning-option -fno-exceptions -fno-rtti -Itests/metal -Isrc

build-metal/mtl_cpu.o: tests/metal/mtl_cpu.cpp tests/metal/metal_stdlib \
                       src/dev/metal/metal_kern.metal $(HDRS)
	@mkdir -p $(dir $@)
	$(MTL_CXX) $(MTL_CXXFLAGS) $(DEPFLAGS) -c -o $@ $<

build-metal/hvm4g-mtl: build-metal/mtl_cpu.o
	CFLAGS='-O2 -g -DHVM4G_METAL -DHVM4G_METAL_CPU' $(MAKE) -s BUILD=build-metal NVCC= METAL= \
	  build-metal/hvm4g MTL_EXTRA=build-metal/mtl_cpu.o
	cp build-metal/hvm4g $@

metal-check: build-metal/hvm4g-mtl hvm4g
	bash tests/metal/check.sh build-metal/hvm4g-mtl

.PHONY: metal-check build-metal/hvm4g-mtl

# The headers each object was built against (-MMD); absent before the first build.
-include $(OBJS:.o=.d)
