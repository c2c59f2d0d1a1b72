"""results/h200x2-2026-11-27-convolution-device: exact against the octree with
its sampling, exchange and interpolation on the device (issue 45), per problem
and transport: the median time, octree ÷ exact over the same transport and
over host-staged MPI, the relative L2 error, bytes sent and memory per rank
against exact's, and each point's set-up + validation share of its wall time
(timing.wall_ms: (setup + validate) ÷ all parts, as results/h100x1-2026-11-27-setup-cost)."""
import argparse
import json
from collections import defaultdict

from campaign import open_text, results_dir


def load(path):
    with open_text(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--campaign", default="h200x2-2026-11-27-convolution-device")
    ap.add_argument("--file", default="gpu_convolution_2gpu-31ea7fd.jsonl.gz", help="a record file of the campaign")
    ap.add_argument("--phases", action="store_true", help="also the octree's phase medians per configuration")
    a = ap.parse_args()
    records = load(results_dir(a.campaign) / a.file)
    by_problem = defaultdict(dict)
    for r in records:
        p = r["problem"]
        by_problem[(p["ranks"], p["size"][0], p["kernel"])][r["key"]] = r
    print("| P | N³ | kernel | configuration | ms | ÷ exact, same transport | ÷ exact over a2a_sync | L2 error | sent ÷ exact | memory ÷ exact | set-up + validation |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (ranks, n, kernel), rs in sorted(by_problem.items()):
        def t(r):
            return r["timing"]["total"]["median"]
        for key, r in sorted(rs.items(), key=lambda kv: (kv[0].split("/")[0], kv[0])):
            c, w = r["config"], r["timing"]["wall_ms"]
            exact = rs.get(f"exact/{c['redistribution']}/cuda")
            staged = rs.get("exact/a2a_sync/cuda")
            share = (w["setup"] + w["validate"]) / sum(w.values())
            err = r["validation"]["checks"][0].get("l2_rel_error")
            sent = r["convolution"]["sent_bytes_max_rank"] / max(exact["convolution"]["sent_bytes_max_rank"], 1)
            mem = r["memory_bytes"] / exact["memory_bytes"]
            print(f"| {ranks} | {n} | {kernel} | {key} | {t(r):.2f} | {t(r) / t(exact):.3f} | "
                  f"{t(r) / t(staged):.3f} | {err if err is None else format(err, '.2g')} | {sent:.3f} | {mem:.2f} | {share:.0%} |")
    if a.phases:
        names = ["forward", "kernel", "inverse", "sample", "exchange", "interpolate", "restore"]
        print("\n| P | N³ | kernel | configuration | " + " | ".join(names) + " |\n|---|---|---|---|" + "---|" * len(names))
        for (ranks, n, kernel), rs in sorted(by_problem.items()):
            for key, r in sorted(rs.items()):
                if key.startswith("octree"):
                    ph = r["timing"]["phases"]
                    print(f"| {ranks} | {n} | {kernel} | {key} | " + " | ".join(f"{ph[k]['median']:.2f}" for k in names) + " |")


if __name__ == "__main__":
    main()
