"""results/h200x1-2026-11-29-fixed-cost: a point's fixed cost on one H200, the
base 471a83a against the new tree, base/new/base/new in one lease per call
(issue 44). Call 2's new tree is 9bfc007 (freed device arrays kept for the
next allocation of their size, 3fd455f; the octree check's exact values kept
for the next point), call 3's 117472f (and the check's points and cells made
once per grid). --call picks one (default 3).

Prints, per family and group, each side's two runs pooled: the set-up +
validation + release share of each point's wall time (timing.wall_ms),
median and largest, how many points at 256^3 and more are over 25%, and
the medians of the parts that changed."""
import argparse
import json
import re
import statistics
from collections import defaultdict

from campaign import open_text, results_dir

CAMPAIGN = "h200x1-2026-11-29-fixed-cost"
NAME = re.compile(r"call(\d)-run(\d)-(base|new)-(gpu_\w+)\.jsonl\.gz")
FAMILY = {"gpu_setup_cost_fft3d_1gpu": "fft3d", "gpu_poisson": "poisson", "gpu_convolution_2gpu": "convolution"}


def share(w):
    return (w["setup"] + w["validate"] + w.get("release", 0)) / sum(w.values())


def group(r):
    p, c = r["problem"], r["config"]
    n = p["size"][0] if isinstance(p["size"], list) else p["size"]
    if r["problem"].get("family", "") == "poisson" or "algorithm" in c:
        return (n, c["algorithm"], p["precision"])
    if "method" in c:
        return (n, c["method"], c.get("sampling", "-"))
    return (n, p["precision"], p["direction"])


def med(xs):
    return f"{statistics.median(xs):.2f}" if xs else "-"


def parts(family, rs):
    """The medians of the parts this campaign's changes touch."""
    if family == "fft3d":
        alloc = [r["fft3d"]["setup_parts_ms"].get("allocate", 0) for r in rs]
        rt = [r["validation"]["parts_ms"].get("round_trip", 0) for r in rs]
        rel = [r["timing"]["wall_ms"].get("release", 0) for r in rs]
        return f"allocate {med(alloc)}, round trip {med(rt)}, release {med(rel)}"
    if family == "convolution":
        v = [r["convolution"]["validate_parts_ms"] for r in rs]
        return ", ".join(f"{k} {med([x.get(k, 0) for x in v])}" for k in ("local_run", "compare", "direct_sums"))
    kb = [r["poisson"].get("kernel_setup_ms", 0) for r in rs]
    return f"kernel set-up {med(kb)}"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--call", default="3", choices=["2", "3"])
    args = ap.parse_args()
    rows = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))  # family -> group -> side -> records
    for path in sorted(results_dir(CAMPAIGN).glob("*.jsonl.gz")):
        m = NAME.fullmatch(path.name)
        if not m or m.group(1) != args.call:
            continue
        with open_text(path) as f:
            recs = [json.loads(line) for line in f if line.strip()]
        family = FAMILY[m.group(4)]
        for r in recs:
            if r["status"] != "ok":
                print(f"{path.name}: {r['status']} {r.get('reason', r.get('error', ''))}")
                continue
            rows[family][group(r)][m.group(3)].append(r)
    for family, groups in rows.items():
        print(f"\n## {family}\n")
        print("| group | side | points | share median | share max | over 25% (≥256³) | parts (medians, ms) |")
        print("|---|---|---|---|---|---|---|")
        for key in sorted(groups, key=str):
            for side in ("base", "new"):
                rs = groups[key][side]
                if not rs:
                    continue
                sh = [share(r["timing"]["wall_ms"]) for r in rs]
                over = sum(s > 0.25 for s in sh) if key[0] >= 256 else "-"
                print(f"| {' '.join(map(str, key))} | {side} | {len(rs)} | {100 * statistics.median(sh):.0f}% | "
                      f"{100 * max(sh):.0f}% | {over} | {parts(family, rs)} |")


if __name__ == "__main__":
    main()
