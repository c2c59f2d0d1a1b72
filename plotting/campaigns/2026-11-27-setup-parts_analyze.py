#!/usr/bin/env python3
"""The tables of results/h200x4-2026-11-27-setup-parts and
results/h100x1-2026-11-27-poisson-arrange (issue 44): where a point's set-up
goes, from the records' set-up parts (fft3d.setup_parts_ms, the plan's
constructor; poisson.setup_parts_ms, zero_skipping's set-up), and each point's
set-up + validation share of its host wall time (timing.wall_ms); for the
poisson A/B, base against new run by run (interleaved in one job)."""
import json
import statistics
from collections import defaultdict

from campaign import open_text, results_dir

FFT3D_PARTS = ["backend_and_comms", "plans", "memory_check", "allocate", "transports"]
POISSON_PARTS = ["forward", "inverse", "work_area", "kernel_build", "kernel_arrange"]


def load(folder, name):
    with open_text(results_dir(folder) / name) as f:
        return [json.loads(line) for line in f if line.strip()]


def share(r):
    w = r["timing"]["wall_ms"]
    return (w["setup"] + w["validate"]) / sum(w.values())


def fft3d_parts():
    rs = [r for r in load("h200x4-2026-11-27-setup-parts", "fft3d-3174205-r4.jsonl.gz") if r["status"] == "ok"]
    print("## fft3d at 4 ranks, 4 × H200 (`h200x4-2026-11-27-setup-parts`), medians over precision and direction\n")
    print("| size | decomposition | transport | overlap | set-up ms | " + " | ".join(FFT3D_PARTS) +
          " | validate ms | timed ms | share |")
    print("|---|---|---|---|---|" + "---|" * len(FFT3D_PARTS) + "---|---|---|")
    groups = defaultdict(list)
    for r in rs:
        c = r["config"]
        groups[(r["problem"]["size"][0], c["decomposition"], c["redistribution"][0], c.get("overlap", 1))].append(r)
    for k in sorted(groups):
        g = groups[k]
        med = lambda f: statistics.median(f(r) for r in g)  # noqa: E731
        parts = [f'{med(lambda r: r["fft3d"]["setup_parts_ms"][p]):.1f}' for p in FFT3D_PARTS]
        print(f"| {k[0]}³ | {k[1]} | {k[2]} | {k[3]} | {med(lambda r: r['timing']['wall_ms']['setup']):.1f} | "
              + " | ".join(parts) + f" | {med(lambda r: r['timing']['wall_ms']['validate']):.1f} | "
              f"{med(lambda r: r['timing']['wall_ms']['timed']):.1f} | {med(share):.2f} |")
    print("\nMedians over the 4 points of a group (precision × direction). The first point of a precision in the "
          "job also carries one-off costs (cuFFT's first plans of that precision, NCCL's first communicator): they "
          "inflate slab_2d1d `nccl_a2a` overlap 1, the first configuration, where 2 of the 4 points are such.")


def poisson_table(title, runs):
    print(f"\n## {title}\n")
    names = list(runs)
    print("| N | precision | algorithm | " + " | ".join(f"{n}: set-up ms (build / arrange), share" for n in names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    by = {n: {(r["problem"]["size"][0], r["problem"]["precision"], r["config"]["algorithm"]): r for r in rs}
          for n, rs in runs.items()}
    for k in sorted(by[names[0]]):
        cells = []
        for n in names:
            r = by[n].get(k)
            if not r:
                cells.append("–")
                continue
            parts = (r.get("poisson") or {}).get("setup_parts_ms") or {}
            split = f' ({parts.get("kernel_build", 0):.0f} / {parts["kernel_arrange"]:.1f})' if "kernel_arrange" in parts else ""
            cells.append(f'{r["timing"]["wall_ms"]["setup"]:.0f}{split}, {share(r):.0%}')
        print(f"| {k[0]}³ | {k[1]} | {k[2]} | " + " | ".join(cells) + " |")


def main():
    fft3d_parts()
    poisson_table("poisson at 1 rank, 4 × H200 (`h200x4-2026-11-27-setup-parts`, 3174205: the parts before the fix)",
                  {"3174205": load("h200x4-2026-11-27-setup-parts", "poisson-fused-3174205-r1.jsonl.gz")})
    f = "h100x1-2026-11-27-poisson-arrange"
    poisson_table("poisson A/B on one H100 (`h100x1-2026-11-27-poisson-arrange`), in the order they ran after a warm-up",
                  {"base 1": load(f, "base1-3174205-r1.jsonl.gz"), "new 1": load(f, "new1-dd2db1c-r1.jsonl.gz"),
                   "base 2": load(f, "base2-3174205-r1.jsonl.gz"), "new 2": load(f, "new2-dd2db1c-r1.jsonl.gz")})
    poisson_table("The new binary as the first process on a fresh H100 (an earlier call)",
                  {"dd2db1c": load(f, "first-process-dd2db1c-r1.jsonl.gz")})
    # The solve itself must not move.
    base = {(r["problem"]["size"][0], r["problem"]["precision"], r["config"]["algorithm"]): r["timing"]["total"]["median"]
            for r in load(f, "base1-3174205-r1.jsonl.gz")}
    ratios = [r["timing"]["total"]["median"] / base[(r["problem"]["size"][0], r["problem"]["precision"], r["config"]["algorithm"])]
              for r in load(f, "new1-dd2db1c-r1.jsonl.gz")]
    print(f"\nSolve time new ÷ base (run 1): {min(ratios):.3f}–{max(ratios):.3f}.")


if __name__ == "__main__":
    main()
