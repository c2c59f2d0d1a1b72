#!/usr/bin/env python3
"""fft_stores_kept against the self copy, same job: per size, precision,
direction and decomposition the total (median, 99% CI, max over ranks per
iteration), kept ÷ copy, the exchange's device traffic floor (the self copy
is in it, or not) and the phase medians. Usage: h100x1-2026-11-26-kept-block_analyze.py FILE.jsonl.gz"""
import json, sys
from campaign import open_text, results_dir

rows = {}
for line in open_text(sys.argv[1]):
    r = json.loads(line)
    if r["status"] != "ok":
        print("not ok:", r["key"], r.get("reason", ""))
        continue
    p, c = r["problem"], r["config"]
    rows[(p["size"][0], p["precision"], p["direction"], c["decomposition"], c.get("fft_stores_kept", False))] = r

def total(r):
    t = r["timing"]["total"]
    return f"{t['median']:7.3f} [{t['ci99'][0]:.3f}, {t['ci99'][1]:.3f}]"

for key in sorted({k[:4] for k in rows}, key=lambda k: (-k[0], k[1], k[2], k[3])):
    copy, kept = rows.get(key + (False,)), rows.get(key + (True,))
    if not copy or not kept:
        continue
    ratio = kept["timing"]["total"]["median"] / copy["timing"]["total"]["median"]
    ex = lambda r: r["traffic"]["exchange.0"]["device_bytes"] / 1e9
    print(f"{key[0]}^3 {key[1]:6} {key[2]:7} {key[3]:9}  copy {total(copy)}  kept {total(kept)}  "
          f"kept/copy {ratio:.3f}  exchange.0 device GB {ex(copy):.3f} -> {ex(kept):.3f}  "
          f"validated {copy['validation']['passed']}/{kept['validation']['passed']}")
    for name, r in (("copy", copy), ("kept", kept)):
        t = r["timing"]
        print(f"      {name}: " + "  ".join(f"{n} {t['phases'][n]['median']:.3f}" for n in t["phase_order"]))
