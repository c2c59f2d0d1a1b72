"""results/h200x1-2026-11-27-poisson-in-place and h200x2-2026-11-27-fixed-cost:
a point's fixed cost against its timing (issue 44), per record file: the
median host wall time of each part (timing.wall_ms: set-up, prepare, timed,
validate, ms) per family group, and the set-up + validation share of each
point's wall time (median and largest), the files side by side in the order
given (default: every file of both campaigns, runs in order)."""
import argparse
import json
import statistics
from collections import defaultdict

from campaign import open_text, results_dir

PARTS = ("setup", "prepare", "timed", "validate")


def load(path):
    with open_text(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def group(r):
    """The rows of a table: fft3d by size and precision, poisson by size,
    precision and algorithm, convolution by size, method, sampling and transport."""
    p, c = r["problem"], r["config"]
    n = p["size"][0]
    if p["kind"] == "fft3d":
        return ("fft3d", n, p["precision"])
    if p["kind"] == "poisson":
        return ("poisson", n, p["precision"], p["boundary"], c["algorithm"])
    return ("convolution", n, c["method"], c.get("sampling", ""), c["redistribution"])


def share(w):
    return (w["setup"] + w["validate"]) / sum(w[k] for k in PARTS)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("files", nargs="*", help="campaign/file.jsonl.gz (default: all of both campaigns)")
    a = ap.parse_args()
    files = a.files
    if not files:
        for campaign in ("h200x1-2026-11-27-poisson-in-place", "h200x2-2026-11-27-fixed-cost"):
            files += [f"{campaign}/{p.name}" for p in sorted(results_dir(campaign).glob("*.jsonl.gz"))]
    for name in files:
        campaign, file = name.split("/", 1)
        rows = defaultdict(list)
        for r in load(results_dir(campaign) / file):
            if r.get("status") == "ok":
                rows[group(r)].append(r)
        print(f"\n{name}\n")
        print("| group | points | set-up | prepare | timed | validate | share (median, max) |")
        print("|---|---|---|---|---|---|---|")
        for g, rs in sorted(rows.items(), key=lambda kv: tuple(map(str, kv[0]))):
            ws = [r["timing"]["wall_ms"] for r in rs]
            med = {k: statistics.median(w[k] for w in ws) for k in PARTS}
            shares = [share(w) for w in ws]
            print(f"| {' '.join(map(str, g))} | {len(rs)} | " + " | ".join(f"{med[k]:.0f}" for k in PARTS) +
                  f" | {100 * statistics.median(shares):.0f}%, {100 * max(shares):.0f}% |")


if __name__ == "__main__":
    main()
