#!/usr/bin/env python3
"""Table of results/h200x1-2026-11-23-fft-loops/README.md: per point, total and looped-stage medians (99% CI) for the
base build (cuFFT calls issued one by one) and the build that replays them as a
CUDA graph, run one after the other in one job; ratio = graphs / base."""
import json
from pathlib import Path

from campaign import open_text, results_dir

here = results_dir("h200x1-2026-11-23-fft-loops")


def load(name):
    out = {}
    for line in open_text(here / name):
        r = json.loads(line)
        p = r["problem"]
        out[(p["size"][0], p["direction"], r["config"]["decomposition"])] = r
    return out


base, graphs = load("base-75a22c0-r1.jsonl.gz"), load("graphs-235363b-r1.jsonl.gz")
looped = {"pencil": "fft.y", "slab_1d2d": "fft.xy"}


def cell(t):
    return f"{t['median']:.2f} ({t['ci99'][0]:.2f}–{t['ci99'][1]:.2f})"


print("| size | direction | decomposition | what | base ms | graphs ms | graphs / base | validated |")
print("|---|---|---|---|---|---|---|---|")
for key in sorted(base, key=lambda k: (-k[0], k[1], k[2])):
    a, b = base[key], graphs[key]
    ok = a["validation"]["passed"] and b["validation"]["passed"]
    rows = [("total", a["timing"]["total"], b["timing"]["total"])]
    if key[2] in looped:
        ph = looped[key[2]]
        rows.append((ph, a["timing"]["phases"][ph], b["timing"]["phases"][ph]))
    for what, x, y in rows:
        print(f"| {key[0]}³ | {key[1]} | {key[2]} | {what} | {cell(x)} | {cell(y)} | {y['median'] / x['median']:.3f} | {ok} |")
