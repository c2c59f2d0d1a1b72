#!/usr/bin/env python3
"""Tables of results/h200x1-2026-11-23-fft-branches/README.md. A/B: per point, total and looped-stage medians (99% CI)
for the base build (looped cuFFT calls replayed as one chain of graph nodes) and
the build that spreads them over parallel graph branches, one after the other in
one job; ratio = branches / base; floor = the stage's device bytes (record field
`traffic`) / 4284 GB/s, the copy rate measured on an H200 (results/README.md).
Then the chain-count experiment (chains-experiment/)."""
import json
from pathlib import Path

from campaign import open_text, results_dir

here = results_dir("h200x1-2026-11-23-fft-branches")
HBM = 4284e9  # bytes/s, read + write


def load(path):
    out = {}
    for line in open_text(here / path):
        r = json.loads(line)
        p = r["problem"]
        out[(p["size"][0], p["direction"], r["config"]["decomposition"])] = r
    return out


def cell(t):
    return f"{t['median']:.2f} ({t['ci99'][0]:.2f}–{t['ci99'][1]:.2f})"


looped = {"pencil": "fft.y", "slab_1d2d": "fft.xy"}
base, branches = load("base-4524eb6-r1.jsonl.gz"), load("branches-d061405-r1.jsonl.gz")
print("| size | direction | decomposition | what | base ms | branches ms | branches / base | floor ms | validated |")
print("|---|---|---|---|---|---|---|---|---|")
for key in sorted(base, key=lambda k: (-k[0], k[1], k[2])):
    a, b = base[key], branches[key]
    ok = a["validation"]["passed"] and b["validation"]["passed"]
    rows = [("total", a["timing"]["total"], b["timing"]["total"], None)]
    if key[2] in looped:
        ph = looped[key[2]]
        floor = b["traffic"][ph]["device_bytes"] / HBM * 1e3
        rows.append((ph, a["timing"]["phases"][ph], b["timing"]["phases"][ph], floor))
    for what, x, y, floor in rows:
        f = f"{floor:.2f}" if floor else ""
        print(f"| {key[0]}³ | {key[1]} | {key[2]} | {what} | {cell(x)} | {cell(y)} | {y['median'] / x['median']:.3f} | {f} | {ok} |")

print()
print("Chain-count experiment, looped stage median ms (chains 1 and 16 from the JSON lines):")
one, sixteen = load("chains-experiment/chains1-r1.jsonl.gz"), load("chains-experiment/chains16-r1.jsonl.gz")
print("| size | direction | decomposition | stage | 1 chain | 16 chains |")
print("|---|---|---|---|---|---|")
for key in sorted(one, key=lambda k: (-k[0], k[1], k[2])):
    ph = looped[key[2]]
    print(f"| {key[0]}³ | {key[1]} | {key[2]} | {ph} | {one[key]['timing']['phases'][ph]['median']:.2f} "
          f"| {sixteen[key]['timing']['phases'][ph]['median']:.2f} |")
