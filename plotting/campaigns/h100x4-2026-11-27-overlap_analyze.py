#!/usr/bin/env python3
"""The tables of results/h100x4-2026-11-27-overlap-partner/README.md and
results/h100x4-2026-11-27-overlap-tail/README.md: each point's total and
FFT/exchange phases (CUDA-event medians, max over ranks per iteration); for
the tail, base against new per configuration (same job) and each side's best
plan against cufftXt from the same job; then the validation status counts."""
from collections import Counter

from campaign import results_dir
from multi_gpu_table import records, label


def rows(path):
    for r in records(str(path)):
        if r.get("status") == "ok":
            yield r


def partner():
    here = results_dir("h100x4-2026-11-27-overlap-partner")
    print("### overlap-partner (4cd8be0), 1024³ double, 4 ranks\n")
    print("| direction | plan | layout | total ms | fft.z / fft.yz | fft.xy / fft.x | exchange.0 |")
    print("|---|---|---|---|---|---|---|")
    got = sorted(rows(here / "partner-4cd8be0-r4.jsonl.gz"),
                 key=lambda r: (r["problem"]["direction"], r["timing"]["total"]["median"]))
    for r in got:
        ph = {k: v["median"] for k, v in r["timing"]["phases"].items() if isinstance(v, dict) and "median" in v}
        first = ph.get("fft.z", ph.get("fft.yz"))
        second = ph.get("fft.xy", ph.get("fft.x"))
        print(f'| {r["problem"]["direction"]} | {label(r)} | {r["config"]["layout"]} | '
              f'{r["timing"]["total"]["median"]:.3f} | {first:.2f} | {second:.2f} | {ph["exchange.0"]:.2f} |')


def tail():
    here = results_dir("h100x4-2026-11-27-overlap-tail")
    base = {(r["problem"]["size"][0], label(r)): r for r in rows(here / "base-eacf7c6-r4.jsonl.gz")}
    new = {(r["problem"]["size"][0], label(r)): r for r in rows(here / "tail-896b675-r4.jsonl.gz")}
    ref = {(r["problem"]["size"][0], r["problem"]["direction"], r["config"]["decomposition"]):
           r["timing"]["total"]["median"] for r in rows(here / "reference-896b675-r1.jsonl.gz")}
    print("\n### overlap-tail A/B (eacf7c6 → 896b675), forward double, 4 ranks\n")
    print("| size | plan | base ms (99% CI) | tail ms (99% CI) | tail ÷ base | fft.x base → tail |")
    print("|---|---|---|---|---|---|")
    for k in sorted(base, key=lambda k: (-k[0], base[k]["timing"]["total"]["median"])):
        if k not in new:
            continue
        b, n = base[k]["timing"], new[k]["timing"]
        (bl, bh), (nl, nh) = b["total"]["ci99"], n["total"]["ci99"]
        print(f'| {k[0]}³ | {k[1]} | {b["total"]["median"]:.3f} ({bl:.3f}–{bh:.3f}) | '
              f'{n["total"]["median"]:.3f} ({nl:.3f}–{nh:.3f}) | {n["total"]["median"] / b["total"]["median"]:.3f} | '
              f'{b["phases"]["fft.x"]["median"]:.2f} → {n["phases"]["fft.x"]["median"]:.2f} |')
    print("\n| size | side | best plan | ms | cufftXt ms | ÷ cufftXt | cuFFT 1 GPU | efficiency 1 → 4 |")
    print("|---|---|---|---|---|---|---|---|")
    for size in (1024, 512):
        for side, got in (("base", base), ("tail", new)):
            k = min((k for k in got if k[0] == size), key=lambda k: got[k]["timing"]["total"]["median"])
            m = got[k]["timing"]["total"]["median"]
            xt, one = ref[(size, "forward", "reference_cufftxt")], ref[(size, "forward", "reference_3d")]
            print(f"| {size}³ | {side} | {k[1]} | {m:.3f} | {xt:.3f} | {m / xt:.3f}× | {one:.3f} | {one / (4 * m):.1%} |")
    print()
    for f in sorted(here.glob("validation*.jsonl.gz")):
        counts = Counter(r.get("status") for r in records(str(f)))
        print(f"- `{f.name}`: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))


partner()
tail()
