#!/usr/bin/env python3
"""Wall time per point (timing.wall_ms) of the builds measured in
results/h200x1-2026-11-23-sweep-cost, and the timed transforms as the control."""
import json
import statistics
from pathlib import Path

from campaign import open_text, results_dir

here = results_dir("h200x1-2026-11-23-sweep-cost")
builds = [("11b432d (first call)", "first-11b432d-setup-r1.jsonl.gz"),
          ("11b432d (A/B base)", "ab-base-11b432d-setup-r1.jsonl.gz"),
          ("e5cb659 pinned + row products", "ab-pinned-e5cb659-setup-r1.jsonl.gz"),
          ("fc64ee5 + row strides", "rows-fc64ee5-setup-r1.jsonl.gz")]
print("testcases/gpu_setup_1gpu: 1024^3 slab_2d1d default, double, 1 rank; wall ms per part of the point")
print("| build | direction | setup | prepare | timed | validate | point (sum) | transform median ms |")
print("|---|---|---|---|---|---|---|---|")
for name, f in builds:
    for line in open_text(here / f):
        r = json.loads(line)
        w = r["timing"]["wall_ms"]
        print(f"| {name} | {r['problem']['direction']} | {w['setup']:.0f} | {w['prepare']:.0f} | {w['timed']:.0f} | "
              f"{w['validate']:.0f} | {sum(w.values()) / 1000:.1f} s | {r['timing']['total']['median']:.2f} |")
print()
print("testcases/gpu_realigned_1gpu (24 points): medians over the points after the first (which pins the arrays), per size; then the sum over all")
print("| build | size | points | setup | prepare | timed | validate | point (sum) |")
print("|---|---|---|---|---|---|---|---|")
for name, f in [("e5cb659", "pinned-e5cb659-realigned-r1.jsonl.gz"), ("fc64ee5", "rows-fc64ee5-realigned-r1.jsonl.gz")]:
    rs = [json.loads(line) for line in open_text(here / f)]
    for size in (1024, 512):
        ws = [r["timing"]["wall_ms"] for r in rs[1:] if r["problem"]["size"][0] == size]
        med = {k: statistics.median(w[k] for w in ws) for k in ws[0]}
        print(f"| {name} | {size}³ | {len(ws)} | {med['setup']:.0f} | {med['prepare']:.0f} | {med['timed']:.0f} | "
              f"{med['validate']:.0f} | {sum(med.values()) / 1000:.2f} s |")
    total = sum(sum(r["timing"]["wall_ms"].values()) for r in rs) / 1000
    print(f"| {name} | all, first included | {len(rs)} | | | | | {total:.0f} s |")
