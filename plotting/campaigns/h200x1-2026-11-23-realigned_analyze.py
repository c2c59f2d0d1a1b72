#!/usr/bin/env python3
"""Tables of results/h200x1-2026-11-23-realigned/README.md: per point of testcases/gpu_realigned_1gpu.json, total and
per-FFT-stage medians for three builds run on H200s (separate calls): base (every
stage one cuFFT plan), copy (order-changing stages as FFT in input order + the
element-per-thread strided copy), tiled (the same with the tiled copy). Then the
stage rule of the committed code (reorder r2c and multi-axis c2c stages only),
applied to the measured stage times: a prediction, not a measurement."""
import json
from pathlib import Path

from campaign import open_text, results_dir

here = results_dir("h200x1-2026-11-23-realigned")


def load(name):
    out = {}
    for line in open_text(here / name):
        r = json.loads(line)
        p, c = r["problem"], r["config"]
        out[(p["size"][0], p["direction"], c["decomposition"], c["layout"])] = r
    return out


base, copy, tiled = load("base-8db0827-r1.jsonl.gz"), load("copy-d3c57f2-r1.jsonl.gz"), load("tiled-6102786-r1.jsonl.gz")


def med(r, phase=None):
    t = r["timing"]
    return (t["phases"][phase] if phase else t["total"])["median"]


print("| size | direction | decomposition | layout | base ms | copy ms | tiled ms | tiled / base | validated |")
print("|---|---|---|---|---|---|---|---|---|")
for key in sorted(base, key=lambda k: (-k[0], k[2], k[3], k[1])):
    b = base[key]
    c = f"{med(copy[key]):.2f}" if key in copy and copy[key]["status"] == "ok" else "—"
    t = f"{med(tiled[key]):.2f}" if key in tiled else "—"
    ratio = f"{med(tiled[key]) / med(b):.3f}" if key in tiled else ""
    ok = all(x[key]["validation"]["passed"] for x in (base, copy, tiled) if key in x and x[key]["status"] == "ok")
    print(f"| {key[0]}³ | {key[1]} | {key[2]} | {key[3]} | {med(b):.2f} | {c} | {t} | {ratio} | {ok} |")


def reordered(stage, direction):
    """The committed rule, by stage name: r2c (forward stage holding z) and multi-axis c2c."""
    axes = stage.split(".")[1]
    has_z = "z" in axes
    if has_z:
        return direction == "forward"  # r2c forward; c2r inverse stays one plan
    return len(axes) > 1


print()
print("Per stage, realigned at 1024³ (base = one plan, tiled = FFT + tiled copy); the rule's pick and the predicted total:")
print("| direction | decomposition | stage | base ms | tiled ms | rule takes | ")
print("|---|---|---|---|---|---|")
for key in sorted(tiled, key=lambda k: (k[2], k[1])):
    if key[3] != "realigned":
        continue
    b, t = base[key], tiled[key]
    total = med(t)
    for ph in t["timing"]["phases"]:
        if not ph.startswith("fft."):
            continue
        pick = "FFT + copy" if reordered(ph, key[1]) else "one plan"
        print(f"| {key[1]} | {key[2]} | {ph} | {med(b, ph):.2f} | {med(t, ph):.2f} | {pick} |")
        if pick == "one plan":
            total += med(b, ph) - med(t, ph)
    print(f"| {key[1]} | {key[2]} | **total** | {med(b):.2f} | {med(t):.2f} | predicted {total:.2f} |")
