#!/usr/bin/env python3
"""The tables of results/h100x4-2026-11-27-ipc-push/README.md (and, with
--baseline, of results/h200x4-2026-11-26-4gpu-baseline): each 4-rank point
against cufftXt over the same four GPUs and one-GPU cuFFT (reference_3d) from
the same job, medians of CUDA-event timings (max over ranks per iteration) with
their 99% intervals; the probe's exchange rates; 2048^3 memory per rank."""
import json
import sys

from campaign import open_text, results_dir

GiB = 2**30


def load(path):
    return [json.loads(line) for line in open_text(path)]


def references(path):
    ref = {}
    for r in load(path):
        if r.get("status") == "ok":
            ref[(r["problem"]["size"][0], r["problem"]["direction"], r["config"]["decomposition"])] = r["timing"]["total"]
    return ref


def points(here, records, reference):
    ref = references(here / reference)
    print(f"\n### {records} (references: {reference})\n")
    print("| size | dir | decomposition | transport | overlap | ms (99% CI) | ÷ cufftXt | ÷ cuFFT 1 GPU | phases (median ms) |")
    print("|---|---|---|---|---|---|---|---|---|")
    best = {}
    failed = 0
    for r in load(here / records):
        if r.get("status") != "ok":
            failed += 1
            continue
        n, d, c, t = r["problem"]["size"][0], r["problem"]["direction"], r["config"], r["timing"]
        m, (lo, hi) = t["total"]["median"], t["total"]["ci99"]
        xt = ref.get((n, d, "reference_cufftxt"), {}).get("median")
        one = ref.get((n, d, "reference_3d"), {}).get("median")
        tr = "+".join(c["redistribution"])
        ph = " ".join(f"{k} {v['median']:.2f}" for k, v in t["phases"].items())
        fx = f"{m / xt:.3f}" if xt else "—"
        f1 = f"{m / one:.3f}" if one else "—"
        print(f"| {n}³ | {d[:3]} | {c['decomposition']} | {tr} | {c.get('overlap', 1)} | {m:.3f} ({lo:.3f}–{hi:.3f}) | {fx} | {f1} | {ph} |")
        if (n, d) not in best or m < best[(n, d)][0]:
            best[(n, d)] = (m, f"{c['decomposition']} {tr} overlap {c.get('overlap', 1)}", xt, one)
    if failed:
        print(f"\n{failed} points failed (status in the records).")
    print("\n| size | direction | cuFFT 3D, 1 GPU | cufftXt, 4 GPUs | best plan, 4 ranks | best ÷ cufftXt | efficiency 1 → 4 GPUs |")
    print("|---|---|---|---|---|---|---|")
    for (n, d), (m, what, xt, one) in sorted(best.items(), key=lambda kv: (-kv[0][0], kv[0][1])):
        xs = f"{xt:.3f} ms" if xt else "—"
        os_ = f"{one:.3f} ms" if one else "—"
        ratio = f"**{m / xt:.3f}×**" if xt else "—"
        eff = f"{one / (4 * m):.0%}" if one else "—"
        print(f"| {n}³ | {d} | {os_} | {xs} | {m:.3f} ms, {what} | {ratio} | {eff} |")


def probe(here, records):
    print(f"\n### {records}: exchange, all peers at once, per rank\n")
    print("| transport | peers × groups | bytes per peer | ms (99% CI) | GB/s per rank |")
    print("|---|---|---|---|---|")
    for r in load(here / records):
        if r.get("probe") != "exchange":
            continue
        if r.get("status") != "ok":
            print(f"| {r['transport']} | {r['peers']} × {r['groups']} | {r['bytes_per_peer'] >> 20} MiB | failed | |")
            continue
        e = r["timing"]["phases"]["exchange"]
        moved = r["bytes_per_peer"] * (r["peers"] - 1)
        print(f"| {r['transport']} | {r['peers']} × {r['groups']} | {r['bytes_per_peer'] >> 20} MiB | "
              f"{e['median']:.3f} ({e['ci99'][0]:.3f}–{e['ci99'][1]:.3f}) | {moved / e['median'] / 1e6:.0f} |")


def memory(here, records):
    print(f"\n### {records}: 2048³ double, bytes per rank\n")
    print("| configuration | dir | status | planned GiB | measured GiB | device GiB | ms (99% CI) | max rel. error |")
    print("|---|---|---|---|---|---|---|---|")
    for r in load(here / records):
        c = r["config"]
        what = f"{c['decomposition']} {'+'.join(c['redistribution'])} overlap {c.get('overlap', 1)}"
        if r.get("status") != "ok":
            print(f"| {what} | {r['problem']['direction'][:3]} | {r.get('status')}: {r.get('reason', '')[:160]} | | | | | |")
            continue
        dm, t = r["device_memory"], r["timing"]["total"]
        print(f"| {what} | {r['problem']['direction'][:3]} | ok | {r['memory_bytes'] / GiB:.2f} | "
              f"{dm['measured_bytes'] / GiB:.2f} | {dm['total_bytes'] / GiB:.2f} | {t['median']:.2f} "
              f"({t['ci99'][0]:.2f}–{t['ci99'][1]:.2f}) | {r['validation']['max_rel_error']:.1e} |")


def validation(here, records):
    counts = {}
    for r in load(here / records):
        key = (r.get("status"), "push" in r["key"])
        counts[key] = counts.get(key, 0) + 1
    print(f"- `{records}`: " + ", ".join(f"{n} {s}{' (push)' if p else ''}" for (s, p), n in sorted(counts.items())))


if "--baseline" in sys.argv:
    here = results_dir("h200x4-2026-11-26-4gpu-baseline")
    points(here, "best-46798f8-r4.jsonl.gz", "reference-46798f8-r1.jsonl.gz")
    probe(here, "probe-46798f8-r4.jsonl.gz")
    memory(here, "2048-direct-46798f8-r4.jsonl.gz")
else:
    here = results_dir("h100x4-2026-11-27-ipc-push")
    points(here, "rounds-86175fe-r4.jsonl.gz", "reference-86175fe-r1.jsonl.gz")
    probe(here, "probe-86175fe-r4.jsonl.gz")
    points(here, "best-bd98fa2-r4.jsonl.gz", "reference-bd98fa2-r1.jsonl.gz")
    probe(here, "probe-bd98fa2-r4.jsonl.gz")
    memory(here, "2048-direct-bd98fa2-r4.jsonl.gz")
    points(here, "best-9b7fcb6-r4.jsonl.gz", "reference-9b7fcb6-r1.jsonl.gz")
    print()
    for f in ("gpu_validation-9b7fcb6-r2.jsonl.gz", "gpu_validation-9b7fcb6-r4.jsonl.gz",
              "gpu_validation_push-bd98fa2-r2.jsonl.gz", "gpu_validation_push-bd98fa2-r4.jsonl.gz"):
        validation(here, f)
