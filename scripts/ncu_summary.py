#!/usr/bin/env python3
"""scripts/ncu_summary.py: one kernel's ncu source counters in a few lines.

    python3 scripts/ncu_summary.py ncu_src_P_sass.csv[.gz] [TOP [LINES]]

Reads the per-SASS-instruction page of an ncu report
(`ncu -i REPORT --page source --csv --print-source sass`) and
prints: warp and thread instructions executed and their ratio (active
threads a warp instruction), the stall samples by reason, global and
local (spill, stack frame) L2 sectors, the TOP instructions by samples,
and how much of the kernel is local-memory traffic. With LINES, the
kernel's disassembly with its line table (`nvdisasm -g -c` of a cubin built
with the same flags, plain or .gz), it also prints the TOP source lines by
stall samples: the stalled instruction's line, which for a load's wait is
the line that first uses what the load brought. The kernel is the first
text section whose name holds $NCU_KERNEL (default t646k_step: the
64-bit take's k_step).
"""
import collections
import csv
import gzip
import os
import re
import sys


def num(row, ix, key):
    v = row[ix[key]].replace(',', '') if key in ix else ''
    try:
        return float(v)
    except ValueError:
        return 0.0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rt') as f:
        rows = list(csv.reader(f))
    hdr = next(r for r in rows if r and r[0] == 'Address')
    ix = {h: i for i, h in enumerate(hdr)}
    data = [r for r in rows if len(r) == len(hdr) and r[0].startswith('0x')]
    sum_of = lambda key, rs=data: sum(num(r, ix, key) for r in rs)
    samples = 'Warp Stall Sampling (All Samples)'
    wi, ti = sum_of('Instructions Executed'), sum_of('Thread Instructions Executed')
    print(f"  warp instructions {wi:.4g}, thread instructions {ti:.4g}, "
          f"{ti / max(wi, 1):.2f} threads an instruction, {sum_of(samples):.0f} stall samples")
    stalls = {h[6:]: sum_of(h) for h in hdr if h.startswith('stall_') and 'Not Issued' not in h}
    total = sum(stalls.values()) or 1
    print("  stalls: " + ", ".join(f"{k} {100 * v / total:.1f}%"
          for k, v in sorted(stalls.items(), key=lambda kv: -kv[1]) if v / total > 0.01))
    print(f"  L2 sectors global {sum_of('L2 Theoretical Sectors Global'):.4g}, "
          f"excessive {sum_of('L2 Theoretical Sectors Global Excessive'):.4g}, "
          f"local (spills, stack frame) {sum_of('L2 Theoretical Sectors Local'):.4g}")
    print("  top instructions by samples (SASS, samples, executed, threads, long_sb, membar):")
    for r in sorted(data, key=lambda r: -num(r, ix, samples))[:top]:
        print(f"    {r[ix['Source']].strip()[:44]:44s} {num(r, ix, samples):7.0f} "
              f"{num(r, ix, 'Instructions Executed'):9.0f} {num(r, ix, 'Avg. Threads Executed'):3.0f} "
              f"{num(r, ix, 'stall_long_sb'):7.0f} {num(r, ix, 'stall_membar'):6.0f}")
    loc = [r for r in data if r[ix['Address Space']] == 'Local']
    li = sum_of('Instructions Executed', loc)
    print(f"  local-memory instructions: {len(loc)} static, {li:.4g} executed "
          f"({100 * li / max(wi, 1):.1f}% of warp instructions), "
          f"{sum_of(samples, loc):.0f} samples at them")
    if len(sys.argv) > 3:
        by_line(data, ix, samples, sys.argv[3], top)


def line_table(path, kernel):
    """Offset -> (file, line) of the first text section whose name holds
    `kernel` in the disassembly at `path`."""
    opener = gzip.open if path.endswith('.gz') else open
    table, cur, inside = {}, None, False
    with opener(path, 'rt') as f:
        for text in f:
            if text.startswith('.text.'):
                if inside:
                    break
                inside = kernel in text
                continue
            if not inside:
                continue
            m = re.match(r'\s*//## File "([^"]+)", line (\d+)', text)
            if m:
                cur = (os.path.basename(m.group(1)), int(m.group(2)))
                continue
            m = re.match(r'\s*/\*([0-9a-f]{4,})\*/', text)
            if m and cur:
                table[int(m.group(1), 16)] = cur
    return table


def by_line(data, ix, samples, sass_path, top):
    table = line_table(sass_path, os.environ.get('NCU_KERNEL', 't646k_step'))
    base = int(data[0][ix['Address']], 16)
    tot, lsb, allv = collections.Counter(), collections.Counter(), 0
    for r in data:
        at = table.get(int(r[ix['Address']], 16) - base, ('?', 0))
        v = num(r, ix, samples)
        tot[at] += v
        lsb[at] += num(r, ix, 'stall_long_sb')
        allv += v
    print("  top source lines by samples (share of all, long_sb share):")
    for at, v in tot.most_common(top):
        print(f"    {100 * v / max(allv, 1):5.1f}% {100 * lsb[at] / max(allv, 1):5.1f}%  {at[0]}:{at[1]}")


if __name__ == '__main__':
    main()
