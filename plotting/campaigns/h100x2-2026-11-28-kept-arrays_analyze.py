#!/usr/bin/env python3
"""Kept arrays and padded IPC arrays (results/h100x2-2026-11-28-kept-arrays):
per call, each fft3d point of gpu_setup_cost_fft3d base (16718d8) against new,
two runs each, interleaved: the transports part, the set-up, the fixed-cost
share of the point's wall time ((setup + validate + release) / all parts of
timing.wall_ms; base records have no release part: their plans freed their
arrays after the record) and the timed median, new / base. Then the IPC probe.
  h100x2-2026-11-28-kept-arrays_analyze.py [CALL ...]   (default: 1 2 3)
"""
import glob
import gzip
import json
import os
import statistics
import sys

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "results", "h100x2-2026-11-28-kept-arrays")


def load(call, tag):
    (path,) = glob.glob(os.path.join(HERE, f"call{call}-fft3d-{tag}-*-r2.jsonl.gz"))
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def share(r):
    w = r["timing"]["wall_ms"]
    return (w["setup"] + w["validate"] + w.get("release", 0.0)) / sum(w.values())


def table(call):
    runs = {t: load(call, t) for t in ("base1", "base2", "new1", "new2")}
    print(f"\n## call {call}\n")
    print("| plan | N³ | prec | dir | transports ms base → new | set-up ms base → new | share base → new | timed new ÷ base |")
    print("|---|---|---|---|---|---|---|---|")
    ratios = []
    for i, r in enumerate(runs["base1"]):
        rs = {t: runs[t][i] for t in runs}
        assert all(x["key"] == r["key"] and x["problem"] == r["problem"] for x in rs.values())
        k = r["key"].split("/")
        tr = {t: x["fft3d"]["setup_parts_ms"]["transports"] for t, x in rs.items()}
        su = {t: x["timing"]["wall_ms"]["setup"] for t, x in rs.items()}
        sh = {t: 100 * share(x) for t, x in rs.items()}
        med = {t: x["timing"]["total"]["median"] for t, x in rs.items()}
        ratio = (med["new1"] + med["new2"]) / (med["base1"] + med["base2"])
        ratios.append(ratio)
        p = r["problem"]
        print(f"| {k[1]}/{k[4]} | {p['size'][0]} | {p['precision']} | {p['direction']} "
              f"| {tr['base1']:.1f}, {tr['base2']:.1f} → {tr['new1']:.1f}, {tr['new2']:.1f} "
              f"| {su['base1']:.1f}, {su['base2']:.1f} → {su['new1']:.1f}, {su['new2']:.1f} "
              f"| {sh['base1']:.0f}, {sh['base2']:.0f} → {sh['new1']:.0f}, {sh['new2']:.0f}% | {ratio:.3f} |")
    print(f"\ntimed new ÷ base over {len(ratios)} points: median {statistics.median(ratios):.3f}, "
          f"{min(ratios):.3f}-{max(ratios):.3f}")


def probe():
    with gzip.open(os.path.join(HERE, "probe-ipc_open-r2.jsonl.gz"), "rt") as f:
        rs = [json.loads(line) for line in f]
    print("\n## IPC probe (max over 2 ranks, ms; two repeats)\n")
    print("| bytes | MiB | open | reopen | close | malloc | free |")
    print("|---|---|---|---|---|---|---|")
    by = {}
    for r in rs:
        by.setdefault(r["bytes"], []).append(r)
    for b, v in by.items():
        cell = lambda k: ", ".join(f"{x[k]:.1f}" for x in v)  # noqa: E731
        print(f"| {b} | {b / 2**20:.2f} | {cell('open_ms')} | {cell('reopen_ms')} | {cell('close_ms')} "
              f"| {cell('malloc_ms')} | {cell('free_ms')} |")


def main():
    for call in sys.argv[1:] or ["1", "2", "3"]:
        table(call)
    probe()


if __name__ == "__main__":
    main()
