#!/usr/bin/env python3
"""The tables of results/h200x4-2026-11-27-shared-slice-plans (issue 44): equal
overlap slices sharing one FFT plan against one plan per slice. Run 1 (base
then new in one job): the plans part of set-up (fft3d.setup_parts_ms.plans),
the set-up and the set-up + validation share per configuration. Run 2 (base,
new three times, interleaved): each point's median time, new ÷ base of the
medians over the three runs, and the spread of each side."""
import json
import statistics
from collections import defaultdict

from campaign import open_text, results_dir

FOLDER = "h200x4-2026-11-27-shared-slice-plans"


def load(name):
    with open_text(results_dir(FOLDER) / name) as f:
        return [json.loads(line) for line in f if line.strip()]


def key(r):
    c, p = r["config"], r["problem"]
    return (p["size"][0], c["decomposition"], c["redistribution"][0], c.get("overlap", 1), p["precision"], p["direction"])


def share(r):
    w = r["timing"]["wall_ms"]
    return (w["setup"] + w["validate"]) / sum(w.values())


def setup_table():
    base = {key(r): r for r in load("base-3ad909e-r4.jsonl.gz")}
    new = {key(r): r for r in load("shared-c86c21a-r4.jsonl.gz")}
    groups = defaultdict(list)
    for k in base:
        groups[k[:4]].append(k)
    for g in sorted(groups):
        def med(f, side):
            return statistics.median(f(side[k]) for k in groups[g])
        plans = lambda r: r["fft3d"]["setup_parts_ms"]["plans"]  # noqa: E731
        setup = lambda r: r["timing"]["wall_ms"]["setup"]  # noqa: E731
        print(f"| {g[0]}³ | {g[1]} | {g[2]} | {g[3]} | {med(plans, base):.1f} → {med(plans, new):.1f} | "
              f"{med(setup, base):.1f} → {med(setup, new):.1f} | {med(share, base):.2f} → {med(share, new):.2f} |")


def interleaved_table():
    runs = {(side, i): {key(r): r for r in load(f"ab-{side}{i}-{sha}-r4.jsonl.gz")}
            for side, sha in (("base", "3ad909e"), ("new", "f90a327")) for i in (1, 2, 3)}
    print("\n| size | decomposition | transport | precision | direction | base ms, 3 runs | shared ms, 3 runs | ÷ |")
    print("|---|---|---|---|---|---|---|---|")
    ratios = defaultdict(list)
    for k in sorted(runs[("base", 1)]):
        t = {s: [runs[(s, i)][k]["timing"]["total"]["median"] for i in (1, 2, 3)] for s in ("base", "new")}
        q = statistics.median(t["new"]) / statistics.median(t["base"])
        ratios[k[2]].append(q)
        print(f"| {k[0]}³ | {k[1]} | {k[2]} | {k[4]} | {k[5]} | " + " ".join(f"{x:.3f}" for x in t["base"]) + " | "
              + " ".join(f"{x:.3f}" for x in t["new"]) + f" | {q:.3f} |")
    every = [q for v in ratios.values() for q in v]
    print(f"\nshared ÷ base: median {statistics.median(every):.3f} over {len(every)} points; "
          + "; ".join(f"{t} median {statistics.median(v):.3f} ({min(v):.3f}–{max(v):.3f})" for t, v in sorted(ratios.items())))


if __name__ == "__main__":
    setup_table()
    interleaved_table()
