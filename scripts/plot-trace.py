#!/usr/bin/env python3
"""plot-trace.py: draws a device trace (hvm4g --trace FILE) as a PNG.

    scripts/plot-trace.py TRACE.csv OUT.png [--run N] [--title TEXT]

Three panels against time since the first normal form began: the frontier
width (entries per pass), the interactions per pass and the deferrals per
pass, one series per run (each normal form: @main's, each %gnf's). The
packing's mark passes (phase `mark`) are left out; the CPU phases of a
hybrid run (side `cpu`) are shaded. Needs python3 with matplotlib
(apt-get install python3-matplotlib, or pip install matplotlib).
"""

import argparse
import csv
import sys


def read_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    need = {"pass", "entries", "interactions", "deferrals", "time_us",
            "phase", "run", "side", "start_us"}
    if not rows:
        sys.exit(f"plot-trace: {path}: no rows (was the run on the device?)")
    missing = need - set(rows[0].keys())
    if missing:
        sys.exit(f"plot-trace: {path}: not an hvm4g trace (no column "
                 f"{', '.join(sorted(missing))})")
    return rows


def main():
    ap = argparse.ArgumentParser(description="Draw an hvm4g --trace file as a PNG.")
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--run", type=int, help="only this run (normal form)")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()

    try:
        import matplotlib
        matplotlib.use("Agg")   # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot-trace: needs matplotlib (apt-get install python3-matplotlib)")

    rows = read_rows(args.trace)
    if args.run is not None:
        rows = [r for r in rows if int(r["run"]) == args.run]
        if not rows:
            sys.exit(f"plot-trace: no rows of run {args.run}")

    steps, cpu = {}, []
    for r in rows:
        t_ms = float(r["start_us"]) / 1e3
        if r["side"] == "cpu":
            cpu.append((t_ms, t_ms + float(r["time_us"]) / 1e3, int(r["run"])))
        elif r["phase"] == "step":   # the packing's mark passes are not work
            steps.setdefault(int(r["run"]), []).append(
                (t_ms, int(r["entries"]), int(r["interactions"]), int(r["deferrals"])))

    fig, axes = plt.subplots(3, 1, sharex=True, figsize=(10, 7.5))
    panels = [("frontier width (entries)", 1), ("interactions per pass", 2),
              ("deferrals per pass", 3)]
    for ax, (label, col) in zip(axes, panels):
        for run, pts in sorted(steps.items()):
            ax.plot([p[0] for p in pts], [p[col] for p in pts], marker=".",
                    markersize=3, linewidth=0.8, label=f"run {run} (device)")
        for i, (a, b, run) in enumerate(cpu):
            ax.axvspan(a, max(b, a + 1e-3), color="tab:gray", alpha=0.25,
                       label="CPU phase" if i == 0 else None)
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        if any(p[col] > 0 for pts in steps.values() for p in pts):
            ax.set_yscale("symlog")
    axes[-1].set_xlabel("time (ms)")
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        axes[0].legend(loc="upper right", fontsize="small")
    passes = sum(len(p) for p in steps.values())
    fig.suptitle(args.title or f"{args.trace}: {len(steps)} device run(s), "
                 f"{passes} passes, {len(cpu)} CPU phase(s)")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"plot-trace: wrote {args.out}")


if __name__ == "__main__":
    main()
