#!/usr/bin/env python3
"""The tables of results/h100x2-2026-11-26-overlap/README.md from its records: each 2-rank point of
gpu_2gpu_overlap against cufftXt over the same two GPUs (gpu_2gpu_reference,
same job), medians of 15 CUDA-event timings (max over ranks per iteration)."""
import json
import pathlib

from campaign import open_text, results_dir

here = results_dir("h100x2-2026-11-26-overlap")
ref = {}
for line in open_text(here / "gpu_2gpu_reference-r1.jsonl.gz"):
    r = json.loads(line)
    ref[(r["problem"]["size"][0], r["problem"]["direction"], r["config"]["decomposition"])] = r["timing"]["total"]
print("| size | direction | transport | overlap | ms (99% CI) | ÷ cufftXt | ÷ cuFFT 1 GPU | fft.yz | pack.0 | exchange.0 | unpack.0 | fft.x |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
best = {}
for line in open_text(here / "gpu_2gpu_overlap-r2.jsonl.gz"):
    r = json.loads(line)
    if r.get("status", "ok") != "ok":
        continue
    n, d, c, t = r["problem"]["size"][0], r["problem"]["direction"], r["config"], r["timing"]
    m = t["total"]["median"]
    xt, one = ref[(n, d, "reference_cufftxt")]["median"], ref[(n, d, "reference_3d")]["median"]
    ph = {k: v["median"] for k, v in t["phases"].items()}
    tr = "+".join(c["redistribution"]) if isinstance(c["redistribution"], list) else c["redistribution"]
    cell = lambda k: f"{ph[k]:.2f}" if k in ph else "—"
    lo, hi = t["total"]["ci99"]
    print(f"| {n}³ | {d} | {tr} | {c.get('overlap', 1)} | {m:.3f} ({lo:.3f}–{hi:.3f}) | {m / xt:.3f} | {m / one:.3f} | "
          + " | ".join(cell(k) for k in ("fft.yz", "pack.0", "exchange.0", "unpack.0", "fft.x")) + " |")
    if (n, d) not in best or m < best[(n, d)][0]:
        best[(n, d)] = (m, f"{tr} overlap {c.get('overlap', 1)}", xt, one)
print()
print("| size | direction | cuFFT 3D, 1 GPU | cufftXt, 2 GPUs | best plan, 2 ranks | best ÷ cufftXt | best ÷ 1-GPU cuFFT |")
print("|---|---|---|---|---|---|---|")
for (n, d), (m, what, xt, one) in sorted(best.items(), key=lambda kv: (-kv[0][0], kv[0][1])):
    print(f"| {n}³ | {d} | {one:.3f} ms | {xt:.3f} ms | {m:.3f} ms, {what} | **{m / xt:.3f}×** | {m / one:.3f}× |")
