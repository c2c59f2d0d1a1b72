#!/usr/bin/env python3
"""Tables of results/h100x1-2026-11-25-poisson/README.md from its records."""
import json
import os

from campaign import open_text, results_dir

here = results_dir("h100x1-2026-11-25-poisson")


def load(name):
    with open_text(os.path.join(here, name)) as f:
        return [json.loads(line) for line in f if line.strip()]


def fft_phases(r):
    return sum(v["median"] for k, v in r["timing"]["phases"].items() if "fft" in k)


fft = {(r["problem"]["size"][0], r["problem"]["precision"], r["problem"]["direction"]): r["timing"]["total"]["median"]
       for r in load("gpu_poisson_fft-9baccad-r1.jsonl.gz")}


def solve_table(name):
    """Zero-skipping / padded in one run; FFT-only: the padded solve's own cuFFT 3D phases (same run)."""
    solves = {(r["problem"]["size"][0], r["problem"]["precision"], r["config"]["algorithm"]): r for r in load(name)}
    print(f"{name}:")
    print("| N | precision | zero_skipping ms (99% CI) | padded ms (99% CI) | ratio (CI) | FFT phases ratio | padded 2N FFTs fwd+inv ms | that / zero_skipping | max rel error |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in (128, 256, 384, 512):
        for prec in ("double", "single"):
            z, p = solves[(n, prec, "zero_skipping")], solves[(n, prec, "padded")]
            tz, tp = z["timing"]["total"], p["timing"]["total"]
            f = fft_phases(p)
            print(f"| {n}³ | {prec} | {tz['median']:.4g} ({tz['ci99'][0]:.4g}–{tz['ci99'][1]:.4g}) | "
                  f"{tp['median']:.4g} ({tp['ci99'][0]:.4g}–{tp['ci99'][1]:.4g}) | {tz['median'] / tp['median']:.3f} "
                  f"({tz['ci99'][0] / tp['ci99'][1]:.3f}–{tz['ci99'][1] / tp['ci99'][0]:.3f}) | "
                  f"{fft_phases(z) / f:.3f} | {f:.4g} | {f / tz['median']:.2f} | {z['validation']['max_rel_error']:.2g} |")
    print()
    return solves


solve_table("gpu_poisson-de787a4-r1.jsonl.gz")
solves = solve_table("gpu_poisson-9baccad-r1.jsonl.gz")
print("The plain transforms of gpu_poisson_fft-9baccad-r1.jsonl (same run as 9baccad), forward + inverse ms:")
print(", ".join(f"{n}³ {p}: {fft[(n, p, 'forward')] + fft[(n, p, 'inverse')]:.4g}" for n in (256, 512, 768, 1024)
                for p in ("double", "single")))
print()

# CPU backend (FFTW, one thread), ms: the progress lines of the 9baccad run's log
# (its records did not come back from the machine; the README keeps the numbers).
cpu = {(128, "padded"): 627.9, (128, "zero_skipping"): 566.7, (256, "padded"): 5241, (256, "zero_skipping"): 4808}
print()
print("| N | algorithm | CPU ms (FFTW, 1 core) | GPU ms | GPU ÷ CPU |")
print("|---|---|---|---|---|")
for (n, alg), t in sorted(cpu.items()):
    g = solves[(n, "double", alg)]["timing"]["total"]["median"]
    print(f"| {n}³ | {alg} | {t:.4g} | {g:.4g} | {g / t:.2e} ({t / g:.0f}× faster) |")

print()
print("| ranks | boundary | kernel | configuration | ms | max rel error | L2 rel error | zero_skipping FFT work fraction | sent per rank GB |")
print("|---|---|---|---|---|---|---|---|---|")
for name in ("gpu_poisson_boundaries-9baccad-r1.jsonl.gz", "gpu_poisson_boundaries-9baccad-r4.jsonl.gz"):
    for r in load(name):
        if r["status"] != "ok":
            continue
        p, v = r["problem"], r["validation"]
        sent = sum(t["sent_bytes"] for t in r.get("traffic", {}).values())
        frac = r.get("poisson", {}).get("fft_rows_fraction")
        print(f"| {p['ranks']} | {p['boundary']} | {p['kernel']} | `{r['key']}` | {r['timing']['total']['median']:.4g} | "
              f"{v['max_rel_error']:.2g} | {v['checks'][0].get('l2_rel_error', 0):.2g} | "
              f"{'' if frac is None else f'{frac:.3f}'} | {sent / 1e9:.3g} |")

# Second session (6c8e409 / 86bad32): the padded solve without its copy of the
# spectrum (InverseInput::destroy), surface with its free axis last, the largest sizes.
print()
print("gpu_poisson-6c8e409-r1.jsonl.gz: zero_skipping / copy-free padded, same run")
print("| N | precision | zero_skipping ms (99% CI) | padded ms (99% CI) | ratio (CI) | FFT phases ratio | kernel multiply ms | ratio without the multiply |")
print("|---|---|---|---|---|---|---|---|")
new = {(r["problem"]["size"][0], r["problem"]["precision"], r["config"]["algorithm"]): r
       for r in load("gpu_poisson-6c8e409-r1.jsonl.gz") if r["status"] == "ok"}
for n in (128, 256, 384, 512):
    for prec in ("double", "single"):
        z, p = new[(n, prec, "zero_skipping")], new[(n, prec, "padded")]
        tz, tp = z["timing"]["total"], p["timing"]["total"]
        kz, kp = z["timing"]["phases"]["kernel"]["median"], p["timing"]["phases"]["kernel"]["median"]
        print(f"| {n}³ | {prec} | {tz['median']:.4g} ({tz['ci99'][0]:.4g}–{tz['ci99'][1]:.4g}) | "
              f"{tp['median']:.4g} ({tp['ci99'][0]:.4g}–{tp['ci99'][1]:.4g}) | {tz['median'] / tp['median']:.3f} "
              f"({tz['ci99'][0] / tp['ci99'][1]:.3f}–{tz['ci99'][1] / tp['ci99'][0]:.3f}) | "
              f"{fft_phases(z) / fft_phases(p):.3f} | {kz:.3g} | {(tz['median'] - kz) / (tp['median'] - kp):.3f} |")
print()
for name in ("gpu_poisson_surface-86bad32-r1.jsonl.gz", "gpu_poisson_largest-86bad32-r1.jsonl.gz"):
    print(name)
    print("| N | boundary | precision | algorithm | status | ms (99% CI) | max rel error | device memory GB | kernel set-up s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in load(name):
        p, t = r["problem"], r.get("timing", {}).get("total")
        why = "" if r["status"] == "ok" else (r.get("reason") or r.get("error") or "")[:60]
        print(f"| {p['size'][0]}³ | {p['boundary']} | {p['precision']} | {r['config']['algorithm']} | {r['status']} {why} | "
              + (f"{t['median']:.4g} ({t['ci99'][0]:.4g}–{t['ci99'][1]:.4g}) | {r['validation']['max_rel_error']:.2g} | "
                 f"{r['memory_bytes'] / 1e9:.1f} | {r['poisson']['kernel_setup_ms'] / 1e3:.1f} |" if t else " | | | |"))
    print()
cpu2 = {r["config"]["algorithm"]: r["timing"]["total"]["median"] for r in load("gpu_poisson_cpu-86bad32-r1.jsonl.gz")}
print("| N | algorithm | CPU ms (FFTW, 1 core, 86bad32) | GPU ms (6c8e409) | CPU ÷ GPU |")
print("|---|---|---|---|---|")
for alg, t in sorted(cpu2.items()):
    g = new[(256, "double", alg)]["timing"]["total"]["median"]
    print(f"| 256³ | {alg} | {t:.4g} | {g:.4g} | {t / g:.0f}× |")
