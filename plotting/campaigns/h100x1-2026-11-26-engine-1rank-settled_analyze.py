#!/usr/bin/env python3
"""Issue 29, one rank: every decomposition x layout against the fair reference
(reference_3d's fft.xyz phase alone: its copy.in of the spectrum is left out;
the engine's inverse reads the spectrum in place), per size, precision and
direction. With a second file (the base engine of the same job) the ratios of
both and new / base. Usage: h100x1-2026-11-26-engine-1rank-settled_analyze.py NEW.jsonl.gz [BASE.jsonl.gz]"""
import json, sys
from campaign import open_text, results_dir

def load(path):
    out = {}
    for line in open_text(path):
        r = json.loads(line)
        if r.get("status") != "ok":
            continue
        p, c = r["problem"], r["config"]
        out[(p["size"][0], p["precision"], p["direction"], c["decomposition"], c["layout"])] = r
    return out

def fair_ms(r):
    t = r["timing"]
    return t["phases"]["fft.xyz"]["median"] if r["config"]["decomposition"] == "reference_3d" else t["total"]["median"]

new = load(sys.argv[1])
base = load(sys.argv[2]) if len(sys.argv) > 2 else None
for size in sorted({k[0] for k in new}):
    print(f"## {size}^3: ms (÷ fair reference_3d){'  | base ms (÷ its reference) | new ÷ base' if base else ''}")
    for prec in ("single", "double"):
        for d in ("forward", "inverse"):
            ref = new[(size, prec, d, "reference_3d", "default")]
            bref = base.get((size, prec, d, "reference_3d", "default")) if base else None
            print(f"  {prec} {d}: reference fft.xyz {fair_ms(ref):.3f} ms, total {ref['timing']['total']['median']:.3f} ms")
            for dec in ("slab_2d1d", "slab_1d2d", "pencil"):
                for lay in ("default", "realigned"):
                    r = new.get((size, prec, d, dec, lay))
                    if not r:
                        continue
                    phases = "+".join(r["timing"]["phase_order"])
                    line = f"    {dec:9} {lay:9} {fair_ms(r):8.3f} ({fair_ms(r) / fair_ms(ref):.3f})"
                    b = base.get((size, prec, d, dec, lay)) if base else None
                    if b and bref:
                        line += f"  | {fair_ms(b):8.3f} ({fair_ms(b) / fair_ms(bref):.3f}) | {fair_ms(r) / fair_ms(b):.3f}"
                    print(line + f"  [{phases}]")
