#!/usr/bin/env python3
"""The tables of results/h200x4-2026-11-27-tapered-slices, results/h100x4-
2026-11-27-tapered-slices and results/h200x4-2026-11-27-sweep-4gpu (issue 40):
per configuration the total (CUDA-event median over iterations of the max over
ranks, 99% CI) and its phases; even against tapered slices and base against
new in the same job; each problem's best plan against cufftXt and cuFFT on one
GPU from the same job (parallel efficiency T1 / (P T_P)); the best plan's
exchange against the probe's link rate; memory planned against measured; the
largest cube per decomposition; validation counts; the sweep's best plan per
decomposition and transport."""
import json
import re
from collections import Counter, defaultdict

from campaign import open_text, results_dir
from multi_gpu_table import label

GIB = 2 ** 30


def load(folder, name):
    with open_text(results_dir(folder) / name) as f:
        return [json.loads(line) for line in f if line.strip()]


def ok(rs):
    return [r for r in rs if r.get("status") == "ok"]


def problem(r):
    p = r["problem"]
    return (p["size"][0], p["precision"], p["direction"])


def total(r):
    return r["timing"]["total"]["median"]


def ci(r):
    lo, hi = r["timing"]["total"]["ci99"]
    return f"{total(r):.3f} ({lo:.3f}–{hi:.3f})"


def phase(r, name):
    ph = r["timing"]["phases"].get(name)
    return ph["median"] if isinstance(ph, dict) else float("nan")


def refs(rs):
    """(size, precision, direction, decomposition) -> median ms of the references."""
    return {problem(r) + (r["config"]["decomposition"],): total(r) for r in ok(rs)}


def link_GBps(probe_rs, transport):
    """The probe's 4-peer rate for the largest message: bytes to the 3 others / time."""
    best = None
    for r in probe_rs:
        if r.get("kind") != "probe" or r.get("transport") != transport:
            continue
        if r.get("peers") != 4 or r.get("groups", 1) != 1:
            continue
        if best is None or r["bytes_per_peer"] > best["bytes_per_peer"]:
            best = r
    if not best:
        return None
    return 3 * best["bytes_per_peer"] / (best["timing"]["total"]["median"] * 1e-3) / 1e9


def best_table(title, runs, ref, ranks):
    print(f"\n### {title}\n")
    print("| problem | best plan | ms (99% CI) | cufftXt ms | ÷ cufftXt | cuFFT 1 GPU | efficiency 1 → {} |".format(ranks))
    print("|---|---|---|---|---|---|---|")
    by = defaultdict(list)
    for r in ok(runs):
        by[problem(r)].append(r)
    for p in sorted(by, key=lambda p: (-p[0], p[1], p[2])):
        b = min(by[p], key=total)
        x = ref.get(p + ("reference_cufftxt",))
        one = ref.get(p + ("reference_3d",))
        print(f"| {p[0]}³ {p[1]} {p[2]} | {label(b)} | {ci(b)} | {x:.3f} | {total(b) / x:.3f}× | "
              f"{one:.3f} | {100 * one / (ranks * total(b)):.1f}% |")


def pairs(title, sides):
    """Per configuration (size, direction, plan without /tapered), each side's total."""
    print(f"\n### {title}\n")
    names = list(sides)
    print("| problem | plan | " + " | ".join(names) + " | last ÷ first |")
    print("|---|---|" + "---|" * len(names) + "---|")
    rows = defaultdict(dict)
    for name, rs in sides.items():
        for r in ok(rs):
            rows[(problem(r), label(r).replace("/tapered", ""))][name] = r
    for (p, plan), got in sorted(rows.items(), key=lambda kv: (-kv[0][0][0], kv[0][0][1:], kv[0][1])):
        if len(got) < len(names):
            continue
        cells = [ci(got[n]) for n in names]
        ratio = total(got[names[-1]]) / total(got[names[0]])
        print(f"| {p[0]}³ {p[1]} {p[2]} | {plan} | " + " | ".join(cells) + f" | {ratio:.3f} |")


def status_counts(title, rs):
    c = Counter(r.get("status") for r in rs)
    print(f"- {title}: " + ", ".join(f"{n} {s}" for s, n in sorted(c.items())))


def fit_table(title, rs):
    print(f"\n### {title}\n")
    print("| size | decomposition | layout | transport | overlap | status | planned GiB | measured GiB | ms / why |")
    print("|---|---|---|---|---|---|---|---|---|")
    largest = {}
    for r in rs:
        c = r["config"]
        n = r["problem"]["size"][0]
        planned = r.get("memory_bytes")
        measured = (r.get("device_memory") or {}).get("measured_bytes")
        why = r.get("reason") or r.get("error") or ""
        m = re.search(r"need ([\d.]+ GiB).*?([\d.]+ GiB) of its", why)
        note = f"{total(r):.1f} ms" if r["status"] == "ok" else (f"needs {m[1]}, {m[2]} free" if m else why[:60])
        print(f"| {n}³ | {c['decomposition']} | {c['layout']} | {'+'.join(c['redistribution'])} | {c.get('overlap', 1)} | "
              f"{r['status']} | {f'{planned / GIB:.2f}' if planned else '–'} | "
              f"{f'{measured / GIB:.2f}' if measured else '–'} | {note} |")
        if r["status"] == "ok":
            largest[c["decomposition"]] = max(largest.get(c["decomposition"], 0), n)
    print("\nLargest cube that ran, per decomposition: " +
          ", ".join(f"{d} {n}³" for d, n in sorted(largest.items())))


def h200_first_job():
    f = "h200x4-2026-11-27-tapered-slices"
    ref = refs(load(f, "reference-407441b-r1.jsonl.gz"))
    base = load(f, "slices-base-872d283-r4.jsonl.gz")
    once = load(f, "slices-meet-once-407441b-r4.jsonl.gz")
    tap = load(f, "tapered-meet-once-407441b-r4.jsonl.gz")
    print(f"## {f}")
    pairs("cuda_ipc_push meeting once per later slice (407441b) against the base (872d283), even slices; "
          "then tapered slices with the same change", {"base 872d283": base, "meet once": once, "meet once, tapered": tap})
    best_table("Best plan per side against the references (4 × H200, same job): base", base, ref, 4)
    best_table("... meet once, even or tapered", once + tap, ref, 4)
    print()
    status_counts("validation at 2 ranks", load(f, "validation-tapered-407441b-r2.jsonl.gz"))
    status_counts("validation at 4 ranks", load(f, "validation-tapered-407441b-r4.jsonl.gz"))
    fit_table("gpu_fit_4gpu on 4 × H200 (141 GB)", load(f, "fit-407441b-r4.jsonl.gz"))


def h100_job():
    f = "h100x4-2026-11-27-tapered-slices"
    s = "914f445"
    ref = refs(load(f, f"reference-{s}-r1.jsonl.gz") + load(f, f"reference-single-{s}-r1.jsonl.gz"))
    even = load(f, f"slices-{s}-r4.jsonl.gz")
    tap = load(f, f"tapered-{s}-r4.jsonl.gz")
    single = load(f, f"single-{s}-r4.jsonl.gz")
    print(f"\n## {f}")
    pairs("Even against tapered slices, 4 × H100, same job (double)", {"even": even, "tapered": tap})
    single_even = [r for r in single if r["config"].get("overlap_slices", "even") == "even"]
    single_tap = [r for r in single if r["config"].get("overlap_slices") == "tapered"]
    pairs("Even against tapered slices, single", {"even": single_even, "tapered": single_tap})
    best_table("Best plan per problem against the references, 4 × H100, same job", even + tap + single, ref, 4)
    ref2 = refs(load(f, f"2gpu-reference-{s}-r1.jsonl.gz"))
    two = load(f, f"2gpu-tapered-{s}-r2.jsonl.gz")
    two_even = [r for r in two if r["config"].get("overlap_slices", "even") == "even"]
    two_tap = [r for r in two if r["config"].get("overlap_slices") == "tapered"]
    pairs("2 GPUs (CUDA_VISIBLE_DEVICES=0,1 on the same node): even against tapered", {"even": two_even, "tapered": two_tap})
    best_table("Best plan per problem at 2 GPUs against the references over the same two GPUs", two, ref2, 2)
    rate = link_GBps(load(f, f"probe-{s}-r4.jsonl.gz"), "cuda_ipc_push")
    print(f"\nProbe, cuda_ipc_push, 4 ranks, 256 MiB per peer: {rate:.0f} GB/s to the three peers.")
    print("\n| best plan (double) | exchange ms | GB moved per rank | GB/s | ÷ probe |")
    print("|---|---|---|---|---|")
    for p in [(1024, "double", "forward"), (1024, "double", "inverse")]:
        b = min((r for r in ok(even + tap) if problem(r) == p), key=total)
        ex = phase(b, "exchange.0")
        moved = b["traffic"]["exchange.0"]["sent_bytes"] / 1e9
        print(f"| {p[0]}³ {p[2]} {label(b)} | {ex:.2f} | {moved:.2f} | {moved / ex * 1e3:.0f} | "
              f"{moved / ex * 1e3 / rate:.0%} |")
    big = load(f, f"2048-tapered-{s}-r4.jsonl.gz")
    print("\n### 2048³ double on 4 × H100 80 GB\n")
    print("| direction | plan | ms (99% CI) | max rel. error | planned GiB per rank | measured GiB |")
    print("|---|---|---|---|---|---|")
    for r in sorted(ok(big), key=lambda r: (r["problem"]["direction"], total(r))):
        err = r["validation"]["max_rel_error"]
        print(f"| {r['problem']['direction']} | {label(r)} | {ci(r)} | {err:.1e} | {r['memory_bytes'] / GIB:.2f} | "
              f"{r['device_memory']['measured_bytes'] / GIB:.2f} |")
    for r in load(f, f"2048-reference-{s}-r1.jsonl.gz"):
        print(f"\ncufftXt 2048³ {r['problem']['direction']}: {r['status']}: {r.get('reason', '')[:140]}")
    print()
    status_counts("validation at 2 ranks", load(f, f"validation-tapered-{s}-r2.jsonl.gz"))
    status_counts("validation at 4 ranks", load(f, f"validation-tapered-{s}-r4.jsonl.gz"))
    fit_table("gpu_fit_4gpu_80gb on 4 × H100 80 GB", load(f, f"fit-80gb-{s}-r4.jsonl.gz"))


def sweep():
    f = "h200x4-2026-11-27-sweep-4gpu"
    s = "41f1342"
    ref = refs(load(f, f"reference-{s}-r1.jsonl.gz") + load(f, f"reference-single-{s}-r1.jsonl.gz"))
    ex = load(f, f"run1-exhaustive-{s}-round0-r4.jsonl.gz")
    print(f"\n## {f}")
    print()
    status_counts("exhaustive", ex)
    best_table("Best plan per problem against the references, 4 × H200, same job", ex, ref, 4)
    for what, key in [("decomposition and layout", lambda r: f'{r["config"]["decomposition"]}/{r["config"]["layout"]}'),
                      ("transport", lambda r: "+".join(sorted(set(r["config"]["redistribution"]))))]:
        print(f"\n### Best plan per {what}, ÷ cufftXt (4 × H200)\n")
        groups = sorted({key(r) for r in ok(ex)})
        problems = sorted({problem(r) for r in ok(ex)}, key=lambda p: (-p[0], p[1], p[2]))
        print("| " + what + " | " + " | ".join(f"{p[0]}³ {p[1][0]} {p[2][:3]}" for p in problems) + " |")
        print("|---|" + "---|" * len(problems))
        for g in groups:
            cells = []
            for p in problems:
                got = [r for r in ok(ex) if key(r) == g and problem(r) == p]
                cells.append(f"{min(map(total, got)) / ref[p + ('reference_cufftxt',)]:.2f}" if got else "–")
            print(f"| {g} | " + " | ".join(cells) + " |")
    rate = link_GBps(load(f, f"probe-{s}-r4.jsonl.gz"), "cuda_ipc_push")
    print(f"\nProbe, cuda_ipc_push, 4 ranks, 256 MiB per peer: {rate:.0f} GB/s to the three peers.")
    print("\n| 1024³ double, slab_2d1d/default | exchange ms | GB/s per rank | ÷ probe |")
    print("|---|---|---|---|")
    for r in sorted(ok(ex), key=lambda r: (r["problem"]["direction"], label(r))):
        c = r["config"]
        if problem(r)[:2] != (1024, "double") or c["decomposition"] != "slab_2d1d" or c["layout"] != "default":
            continue
        if c["redistribution"][0] not in ("cuda_ipc_push", "cuda_ipc_push_rounds") or c.get("overlap", 1) not in (1, 8):
            continue
        ex_ms = phase(r, "exchange.0")
        rate_r = r["traffic"]["exchange.0"]["sent_bytes"] / ex_ms / 1e6
        print(f"| {r['problem']['direction']} {label(r)} | {ex_ms:.2f} | {rate_r:.0f} | {rate_r / rate:.0%} |")
    # Tapered against even for the same configuration, over the sweep.
    even = {(problem(r), label(r)): total(r) for r in ok(ex) if "tapered" not in label(r) and r["config"].get("overlap", 1) > 1}
    ratios = sorted(total(r) / even[(problem(r), label(r).replace("/tapered", ""))]
                    for r in ok(ex) if "tapered" in label(r) and (problem(r), label(r).replace("/tapered", "")) in even)
    if ratios:
        n = len(ratios)
        print(f"\nTapered ÷ even over the sweep's {n} overlapped configurations: median {ratios[n // 2]:.3f}, "
              f"range {ratios[0]:.3f}–{ratios[-1]:.3f}, {sum(x < 1 for x in ratios)} faster.")


if __name__ == "__main__":
    h200_first_job()
    h100_job()
    sweep()
