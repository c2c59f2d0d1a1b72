"""results/h200x2-2026-11-28-job-start: what starting a job's transports once
(call 1, 745f0ad) and the cuFFT pass pool (call 2, 78b243d) did to a point's
fixed cost, each against the base fdeba9b in the same call (issue 44).

Prints, per call and testcase: the job's start-up; per size × precision the
set-up + validation share of each point's wall time (release counted; median,
largest, and the first point's) base against new; the median `plans` part of
the set-up on the points after a job's first two; and the sampled check's
parts (validation.parts_ms) by size and direction."""
import argparse
import json
import re
import statistics
from collections import defaultdict

from campaign import open_text, results_dir

CAMPAIGN = "h200x2-2026-11-28-job-start"
NAME = re.compile(r"call(\d)-(.+)-([0-9a-f]{7})(?:-run(\d))?-r2\.jsonl\.gz")


def load(path):
    with open_text(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def share(w):
    fixed = w["setup"] + w["validate"] + w.get("release", 0)
    return fixed / sum(w.values())


def group(r):
    p = r["problem"]
    size = p.get("size", [p.get("n")])[0]
    extra = r["config"].get("method", "") if p["kind"] == "convolution" else ""
    return (p["kind"], size, p.get("precision", "")[:6], extra)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.parse_args()
    files = defaultdict(lambda: defaultdict(list))  # (call, testcase) -> sha -> record lists
    base_sha = "fdeba9b"
    for path in sorted(results_dir(CAMPAIGN).glob("*.jsonl.gz")):
        m = NAME.fullmatch(path.name)
        if not m:
            continue
        call, testcase, sha, _ = m.groups()
        files[(call, testcase)][sha].append([r for r in load(path) if r.get("status") == "ok"])
    for (call, testcase), by_sha in sorted(files.items()):
        new_sha = next(s for s in by_sha if s != base_sha)
        print(f"\n## call {call}: {testcase}, base {base_sha} against {new_sha} "
              f"({len(by_sha[base_sha])} + {len(by_sha[new_sha])} runs)\n")
        starts = [runs[0].get("job", {}).get("startup_ms") for runs in by_sha[new_sha]]
        parts = by_sha[new_sha][0][0].get("job", {}).get("parts_ms", {})
        print("job start-up, ms: " + ", ".join(f"{s:.0f}" for s in starts if s is not None) +
              f" (run 1 by part: {', '.join(f'{k} {v:.0f}' for k, v in parts.items())})\n")
        print("| group | points | share base: median, max, first | share new: median, max, first |")
        print("|---|---|---|---|")
        groups = sorted({group(r) for runs in by_sha.values() for rs in runs for r in rs}, key=str)
        for g in groups:
            cells = []
            for sha in (base_sha, new_sha):
                shares, firsts = [], []
                for rs in by_sha[sha]:
                    mine = [r for r in rs if group(r) == g]
                    shares += [share(r["timing"]["wall_ms"]) for r in mine]
                    if mine:
                        firsts.append(share(mine[0]["timing"]["wall_ms"]))
                cells.append(f"{100 * statistics.median(shares):.0f}%, {100 * max(shares):.0f}%, "
                             + "/".join(f"{100 * s:.0f}%" for s in firsts))
            print(f"| {' '.join(str(x) for x in g if x != '')} | {len(shares)} | {cells[0]} | {cells[1]} |")
        if testcase.startswith("gpu_setup_cost_fft3d"):
            print("\nset-up part `plans` after a job's first two points, median ms (min-max):")
            for sha in (base_sha, new_sha):
                ms = [r["fft3d"]["setup_parts_ms"]["plans"] for rs in by_sha[sha] for r in rs[2:]]
                print(f"- {sha}: {statistics.median(ms):.2f} ({min(ms):.2f}-{max(ms):.2f}), first two "
                      + ", ".join(f"{r['fft3d']['setup_parts_ms']['plans']:.1f}" for r in by_sha[sha][0][:2]))
            print("\nsampled check by part, new, median ms:\n")
            print("| size | precision | direction | spot | transform | round_trip |")
            print("|---|---|---|---|---|---|")
            vp = defaultdict(lambda: defaultdict(list))
            for rs in by_sha[new_sha]:
                for r in rs:
                    p = r["problem"]
                    for k, v in r["validation"].get("parts_ms", {}).items():
                        vp[(p["size"][0], p["precision"], p["direction"])][k].append(v)
            for key, d in sorted(vp.items()):
                cell = [f"{statistics.median(d[k]):.1f}" if k in d else "-" for k in ("spot", "transform", "round_trip")]
                print(f"| {key[0]}³ | {key[1]} | {key[2]} | " + " | ".join(cell) + " |")


if __name__ == "__main__":
    main()
