#!/usr/bin/env python3
"""Table of results/h200x1-2026-11-23-fft-passes/README.md from its records: per point, total and x,y-stage
median (99% CI) for the base build (one cuFFT plan per stage), the build that
split every c2c stage with a strided fastest axis, and the final rule (split
only when that axis is strided on both sides); ratio = time / base time."""
import json
from pathlib import Path

from campaign import open_text, results_dir

here = results_dir("h200x1-2026-11-23-fft-passes")
runs = {"base": "base-a0623cd-r1.jsonl.gz", "split-any": "split-any-strided-c6d3cdb-r1.jsonl.gz",
        "final": "final-ea53173-r1.jsonl.gz"}


def load(name):
    out = {}
    for line in open_text(here / name):
        r = json.loads(line)
        if r["status"] != "ok":
            continue
        p = r["problem"]
        out[(p["size"][0], p["direction"], r["key"])] = r
    return out


data = {k: load(v) for k, v in runs.items()}


def cell(r, phase=None):
    t = r["timing"]["phases"][phase] if phase else r["timing"]["total"]
    return f"{t['median']:.2f} ({t['ci99'][0]:.2f}–{t['ci99'][1]:.2f})"


print("| size | dir | configuration | stage | base ms | split-any ms | / base | final ms | / base | validated |")
print("|---|---|---|---|---|---|---|---|---|---|")
for key in sorted(data["base"], key=lambda k: (-k[0], k[1], k[2])):
    size, direction, name = key
    rows = {k: d[key] for k, d in data.items()}
    stage = "fft.xy" if "slab_1d2d" in name else None
    for what in ([None, stage] if stage else [None]):
        med = {k: (r["timing"]["phases"][what] if what else r["timing"]["total"])["median"] for k, r in rows.items()}
        ok = all(r["validation"]["passed"] for r in rows.values())
        print(f"| {size}³ | {direction} | {name.split('/', 1)[1]} | {what or 'total'} | {cell(rows['base'], what)} "
              f"| {cell(rows['split-any'], what)} | {med['split-any'] / med['base']:.2f} "
              f"| {cell(rows['final'], what)} | {med['final'] / med['base']:.2f} | {ok} |")
