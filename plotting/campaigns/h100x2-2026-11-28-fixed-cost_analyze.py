"""results/h100x2-2026-11-28-fixed-cost: the parts behind a point's fixed
cost (issue 44), per record file and group, medians in ms: poisson's
device kernel build (poisson.kernel_parts_ms: the table, each DCT-I pass's
set-up and chunks, the fold; with poisson.setup_parts_ms' kernel_build), and
the octree's set-up and check (convolution.setup_parts_ms,
validate_parts_ms; local_kept: points whose local convolution was kept from
the point before, of all). The share tables come from
h200-2026-11-27-fixed-cost_analyze.py given the same files."""
import argparse
import json
import statistics
from collections import defaultdict

from campaign import open_text, results_dir

CAMPAIGN = "h100x2-2026-11-28-fixed-cost"


def parts(r):
    """The group and its parts of one record, or None where it has none."""
    p, c = r["problem"], r["config"]
    if p["kind"] == "poisson":
        d = r.get("poisson", {})
        got = dict(d.get("kernel_parts_ms", {}))
        if "kernel_build" in d.get("setup_parts_ms", {}):
            got["kernel_build"] = d["setup_parts_ms"]["kernel_build"]
        return (f"poisson {p['size'][0]} {p['precision']} {c['algorithm']}", got) if got else None
    if p["kind"] == "convolution" and c.get("method") == "octree":
        d = r.get("convolution", {})
        got = {f"setup.{k}": v for k, v in d.get("setup_parts_ms", {}).items()}
        got.update({f"check.{k}": v for k, v in d.get("validate_parts_ms", {}).items()})
        got["kept"] = 1.0 if d.get("local_kept") else 0.0
        return (f"octree {p['size'][0]} {c['redistribution']}", got)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("files", nargs="*", help="file names in the campaign (default: all)")
    a = ap.parse_args()
    files = a.files or [p.name for p in sorted(results_dir(CAMPAIGN).glob("*.jsonl.gz"))]
    for name in files:
        rows = defaultdict(list)
        with open_text(results_dir(CAMPAIGN) / name) as f:
            for line in f:
                r = json.loads(line)
                if r.get("status") == "ok" and (got := parts(r)):
                    rows[got[0]].append(got[1])
        if not rows:
            continue
        print(f"\n{name}\n")
        for g, rs in sorted(rows.items()):
            keys = sorted({k for r in rs for k in r})
            cells = []
            for k in keys:
                vals = [r[k] for r in rs if k in r]
                cells.append(f"{k} {sum(vals):.0f}/{len(rs)}" if k == "kept" else f"{k} {statistics.median(vals):.1f}")
            print(f"- {g} ({len(rs)}): " + ", ".join(cells))


if __name__ == "__main__":
    main()
