"""results/h200x2-2026-11-28-check-scratch: the checks' device memory without a
cudaMalloc per call (49c6e92) against its base (f231e25), fft3d at 256^3 on
2 x H200, base/new/base/new in one lease (issue 44).

Prints per precision x direction, each side's two runs pooled: the sampled
round trip (validation.parts_ms.round_trip), the validation's wall time and
the set-up + validation (+ release) share of each point's wall time, median
and largest, and the job's first point apart."""
import argparse
import json
import re
import statistics
from collections import defaultdict

from campaign import open_text, results_dir

CAMPAIGN = "h200x2-2026-11-28-check-scratch"
NAME = re.compile(r"run(\d)-(base|new)-([0-9a-f]{7})-r2\.jsonl\.gz")


def share(w):
    return (w["setup"] + w["validate"] + w.get("release", 0)) / sum(w.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.parse_args()
    rows = defaultdict(lambda: defaultdict(list))  # (precision, direction) -> side -> records
    firsts = defaultdict(list)
    for path in sorted(results_dir(CAMPAIGN).glob("*.jsonl.gz")):
        m = NAME.fullmatch(path.name)
        if not m:
            continue
        with open_text(path) as f:
            recs = [json.loads(line) for line in f if line.strip()]
        recs = [r for r in recs if r["status"] == "ok"]
        firsts[m.group(2)].append(share(recs[0]["timing"]["wall_ms"]))
        for r in recs[1:]:
            p = r["problem"]
            rows[(p["precision"], p["direction"])][m.group(2)].append(r)
    print("| precision | direction | side | points | round trip ms (median) | validate ms | share median | share max |")
    print("|---|---|---|---|---|---|---|---|")
    for key in sorted(rows):
        for side in ("base", "new"):
            rs = rows[key][side]
            rt = [r["validation"]["parts_ms"]["round_trip"] for r in rs]
            va = [r["timing"]["wall_ms"]["validate"] for r in rs]
            sh = [share(r["timing"]["wall_ms"]) for r in rs]
            print(f"| {key[0]} | {key[1]} | {side} | {len(rs)} | {statistics.median(rt):.2f} | "
                  f"{statistics.median(va):.2f} | {100 * statistics.median(sh):.0f}% | {100 * max(sh):.0f}% |")
    for side in ("base", "new"):
        print(f"\n{side}: the job's first point (left out above): " + ", ".join(f"{100 * s:.0f}%" for s in firsts[side]))


if __name__ == "__main__":
    main()
