#!/usr/bin/env python3
"""Issue 40 tables: each fft3d point's total and phases (CUDA-event medians,
max over ranks per iteration), its ratio to cufftXt from the same job, and
A/B ratios between two record files of one testcase.

  multi_gpu_table.py --reference REF.jsonl[.gz] RUN.jsonl[.gz] ...
  multi_gpu_table.py --ab BASE.jsonl[.gz] NEW.jsonl[.gz]
"""
import argparse
import gzip
import json


def records(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        for line in f:
            line = line.strip()
            if line:
                yield json.loads(line)


def problem(r):
    p = r["problem"]
    return ("x".join(map(str, p["size"])), p["direction"], p["precision"])


def label(r):
    c = r["config"]
    ov = c.get("overlap", 1)
    tapered = "/tapered" if c.get("overlap_slices") == "tapered" else ""
    return f'{c["decomposition"]}/{"+".join(c["redistribution"])}/ov{ov}{tapered}'


def phases(r):
    t = r["timing"]
    return {k: t["phases"][k]["median"] for k in t["phase_order"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", action="append", default=[])
    ap.add_argument("--ab", nargs=2)
    ap.add_argument("runs", nargs="*")
    a = ap.parse_args()
    if a.ab:
        base = {(problem(r), label(r)): r for r in records(a.ab[0]) if r["status"] == "ok"}
        print("| size | direction | configuration | base ms | new ms | new/base | phases base → new |")
        print("|---|---|---|---|---|---|---|")
        for r in records(a.ab[1]):
            k = (problem(r), label(r))
            if r["status"] != "ok" or k not in base:
                continue
            b = base[k]
            tb, tn = b["timing"]["total"]["median"], r["timing"]["total"]["median"]
            pb, pn = phases(b), phases(r)
            ph = ", ".join(f"{n} {pb.get(n, 0):.2f}→{pn[n]:.2f}" for n in pn if pn[n] > 0.01 or pb.get(n, 0) > 0.01)
            print(f"| {k[0][0]} | {k[0][1]} | {k[1]} | {tb:.3f} | {tn:.3f} | {tn / tb:.3f} | {ph} |")
        return
    ref = {}
    for path in a.reference:
        for r in records(path):
            if r["status"] == "ok":
                ref[(problem(r), r["config"]["decomposition"])] = r["timing"]["total"]["median"]
    print("| size | direction | configuration | status | ms (99% CI) | ÷ cufftXt | ÷ 1-GPU cuFFT | phases (ms) |")
    print("|---|---|---|---|---|---|---|---|")
    for path in a.runs:
        for r in records(path):
            k = problem(r)
            if r["status"] != "ok":
                print(f"| {k[0]} | {k[1]} | {label(r)} | {r['status']} | | | | {str(r.get('error', r.get('reason', '')))[:80]} |")
                continue
            t = r["timing"]["total"]
            xt, one = ref.get((k, "reference_cufftxt")), ref.get((k, "reference_3d"))
            ph = ", ".join(f"{n} {v:.2f}" for n, v in phases(r).items() if v > 0.01)
            print(f"| {k[0]} | {k[1]} | {label(r)} | ok | {t['median']:.3f} ({t['ci99'][0]:.3f}–{t['ci99'][1]:.3f}) | "
                  f"{t['median'] / xt:.3f} | {t['median'] / one:.3f} | {ph} |" if xt and one else
                  f"| {k[0]} | {k[1]} | {label(r)} | ok | {t['median']:.3f} | | | {ph} |")


if __name__ == "__main__":
    main()
