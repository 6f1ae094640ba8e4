#!/usr/bin/env python3
# tests/fatbin_archs.py BINARY: the GPU code a CUDA binary embeds, one line
# each, "sm_XX" (code for that GPU) or "compute_XX" (PTX), read from the
# entry headers of its fat binaries (the .nv_fatbin section's layout: a
# 16-byte header, magic 0xBA55ED50, then entries, each with its kind, 1 PTX
# or 2 ELF, its sizes and its architecture). Used where cuobjdump is absent.
import struct, sys

data = open(sys.argv[1], "rb").read()
MAGIC = struct.pack("<I", 0xBA55ED50)
found = set()
at = data.find(MAGIC)
while at >= 0:
    try:
        _, _, hsize, fsize = struct.unpack_from("<IHHQ", data, at)
        pos, end = at + hsize, at + hsize + fsize
        while pos + 64 <= end and pos + 64 <= len(data):
            kind, _, ehsize, size = struct.unpack_from("<HHIQ", data, pos)
            arch = struct.unpack_from("<I", data, pos + 28)[0]
            if kind not in (1, 2) or ehsize < 64 or size == 0:
                break
            found.add(("compute_%d" if kind == 1 else "sm_%d") % arch)
            pos += ehsize + size
    except struct.error:
        pass
    at = data.find(MAGIC, at + 4)
for a in sorted(found):
    print(a)
