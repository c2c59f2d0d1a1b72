#!/usr/bin/env python3
"""The summary tables of results/h100x4-2026-11-27-queued-slices/README.md:
per size, direction and precision, the best plan against cufftXt over the same
GPUs and one-GPU cuFFT (reference_3d) from the same job, with the parallel
efficiency from one GPU; then each validation file's status counts. Every
point's row with its phases: multi_gpu_table.py --reference REF RUN."""
from collections import Counter

from campaign import results_dir
from multi_gpu_table import records, label

SHA = "089bfa2"
RUNS = [  # (records, references, GPUs)
    (f"queued-{SHA}-r4", f"reference-4gpu-{SHA}-r1", 4),
    (f"single-{SHA}-r4", f"reference-single-4gpu-{SHA}-r1", 4),
    (f"queued-2gpu-{SHA}-r2", f"reference-2gpu-{SHA}-r1", 2),
]


def key(r):
    p = r["problem"]
    return (p["size"][0], p["direction"], p["precision"])


def best_table(here, run, reference, gpus):
    ref = {(key(r), r["config"]["decomposition"]): r["timing"]["total"]["median"]
           for r in records(str(here / f"{reference}.jsonl.gz")) if r.get("status") == "ok"}
    best = {}
    for r in records(str(here / f"{run}.jsonl.gz")):
        if r.get("status") != "ok":
            continue
        m = r["timing"]["total"]["median"]
        if key(r) not in best or m < best[key(r)][0]:
            best[key(r)] = (m, r["timing"]["total"]["ci99"], label(r))
    print(f"\n### {run} ({gpus} GPUs; references {reference})\n")
    print(f"| size | direction | precision | cuFFT, 1 GPU | cufftXt, {gpus} GPUs | best plan, {gpus} ranks | "
          "best ÷ cufftXt | efficiency |")
    print("|---|---|---|---|---|---|---|---|")
    for k in sorted(best, key=lambda k: (-k[0], k[2], k[1])):
        m, (lo, hi), what = best[k]
        one, xt = ref.get((k, "reference_3d")), ref.get((k, "reference_cufftxt"))
        print(f"| {k[0]}³ | {k[1]} | {k[2]} | {one:.3f} | {xt:.3f} | {m:.3f} ({lo:.3f}–{hi:.3f}), {what} | "
              f"**{m / xt:.3f}×** | {one / (gpus * m):.0%} |")


here = results_dir("h100x4-2026-11-27-queued-slices")
for run in RUNS:
    best_table(here, *run)
print()
for f in sorted(here.glob("*validation*.jsonl.gz")):
    counts = Counter(r.get("status") for r in records(str(f)))
    print(f"- `{f.name}`: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
