#!/usr/bin/env python3
"""Tables of results/h200x1-2026-11-23-realigned-c2r/README.md from its records: three A/B jobs on H200s, each
with the one-plan base (011e318) and a build that copies c2r input first, and the
final rule's full realigned set. Medians with 99% CIs, ms."""
import json
from pathlib import Path

from campaign import open_text, results_dir

here = results_dir("h200x1-2026-11-23-realigned-c2r")
def load(name):
    out = {}
    for line in open_text(here / name):
        r = json.loads(line)
        p, c = r["problem"], r["config"]
        out[(tuple(p["size"]), p["precision"], p["direction"], c["decomposition"], c["layout"])] = r
    return out
def med(r, phase=None):
    t = r["timing"]
    return (t["phases"][phase] if phase else t["total"])["median"]
def ci(r):
    lo, hi = r["timing"]["total"]["ci99"]
    return f"[{lo:.2f}, {hi:.2f}]"
def c2r_stage(r):
    """The inverse's last FFT stage: the c2r (fft.z or fft.yz)."""
    return [p for p in r["timing"]["phase_order"] if p.startswith("fft.")][-1]
def table(title, base_file, new_file, new_name):
    base, new = load(base_file), load(new_file)
    print(title)
    print(f"| size | precision | direction | decomposition | layout | c2r stage | base stage ms | {new_name} stage ms "
          f"| base total ms | {new_name} total ms (99% CI) | ratio | validated |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k in sorted(base, key=lambda k: (-k[0][0] * k[0][1] * k[0][2], k[1], k[2], k[3], k[4])):
        b, n = base[k], new[k]
        stage = c2r_stage(n) if k[2] == "inverse" else "—"
        bs = f"{med(b, stage):.3f}" if k[2] == "inverse" else ""
        ns = f"{med(n, stage):.3f}" if k[2] == "inverse" else ""
        size = "x".join(map(str, k[0]))
        ok = b["validation"]["passed"] and n["validation"]["passed"]
        print(f"| {size} | {k[1]} | {k[2]} | {k[3]} | {k[4]} | {stage} | {bs} | {ns} | {med(b):.3f} | "
              f"{med(n):.3f} {ci(n)} | {med(n) / med(b):.3f} | {ok} |")
    print()
table("A/B 1: gpu_realigned_1gpu, one plan (011e318) against copy first for every order-changing c2r (9eec141)",
      "ab1-base-011e318-realigned-r1.jsonl.gz", "ab1-copyfirst-9eec141-realigned-r1.jsonl.gz", "copy first")
table("A/B 2: gpu_realigned_c2r_1gpu (first set, double), one plan (011e318) against copy first (b170c03)",
      "ab2-base-011e318-c2r-r1.jsonl.gz", "ab2-copyfirst-b170c03-c2r-r1.jsonl.gz", "copy first")
table("A/B 3: gpu_realigned_c2r_1gpu (second set, both precisions), one plan (011e318) against the rule (3c9d95a: "
      "1D c2r copies first from length 1024 on)", "ab3-base-011e318-c2r-r1.jsonl.gz", "ab3-rule-3c9d95a-c2r-r1.jsonl.gz", "rule")
table("Final rule (3c9d95a) on gpu_realigned_1gpu against the one-plan base of A/B 1 (another machine of the same kind)",
      "ab1-base-011e318-realigned-r1.jsonl.gz", "rule-3c9d95a-realigned-r1.jsonl.gz", "rule")
