#!/usr/bin/env python3
"""Tables of results/h200x1-2026-11-23-overlap/README.md from its records: per decomposition and direction,
total median (99% CI) and phases for overlap 1, 4, 8, and the ratio to overlap 1
measured in the same run; with --first, the same for first-run-4076775/."""
import json, sys
from pathlib import Path

from campaign import open_text, results_dir

here = results_dir("h200x1-2026-11-23-overlap")
path = here / ("first-run-4076775" if "--first" in sys.argv else ".") / "gpu_overlap_1gpu-r1.jsonl.gz"
rows = [json.loads(l) for l in open_text(path)]
base = {}
for r in rows:
    if r["config"].get("overlap", 1) == 1:
        base[(r["config"]["decomposition"], r["problem"]["direction"])] = r["timing"]["total"]["median"]
print("| decomposition | direction | overlap | total ms (99% CI) | / overlap 1 | phases (ms, overlapping) | GiB | validated |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    c, p, t = r["config"], r["problem"], r["timing"]
    k = c.get("overlap", 1)
    med, (lo, hi) = t["total"]["median"], t["total"]["ci99"]
    ratio = med / base[(c["decomposition"], p["direction"])]
    phases = ", ".join(f"{n} {v['median']:.2f}" for n, v in t["phases"].items())
    print(f"| {c['decomposition']} | {p['direction']} | {k} | {med:.2f} ({lo:.2f}–{hi:.2f}) | {ratio:.3f} | {phases} "
          f"| {r['memory_bytes'] / 2**30:.1f} | {r['validation']['passed']} |")
