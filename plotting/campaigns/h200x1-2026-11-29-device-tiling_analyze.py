"""results/h200x1-2026-11-29-device-tiling: the octree's cells and sample
offsets made on the device from their index (Tiling, fill_tiling) instead of
on the host and copied, A/B on one H200 shared by 2 ranks (issue 44).

Prints per point the set-up parts `tiling` and `exchange_tables` (ms) of each
side's runs, then per side and run the octree points' set-up summed and
whether every point is ok and validated."""
import re

from campaign import matching_records

CAMPAIGN = "h200x1-2026-11-29-device-tiling"
NAME = re.compile(r"call(\d)-run(\d)-(base|new)-gpu_setup_cost_convolution_shared\.jsonl\.gz")


def span(values):
    return f"{min(values):.1f}-{max(values):.1f}"


def point(r):
    c = r["config"]
    return f"{r['problem']['size'][0]}³ {r['problem']['kernel']} {c['sampling']}"


def main():
    parts = {}  # (point, side, part) -> values over runs
    order = []
    runs = []
    for m, rs in matching_records(CAMPAIGN, NAME):
        side = m.group(3)
        ok = sum(r["status"] == "ok" and r["validation"]["passed"] for r in rs)
        setup = sum(r["timing"]["wall_ms"]["setup"] for r in rs)
        runs.append((m.group(1), m.group(2), side, rs[0]["provenance"]["git_sha"][:7], ok, len(rs), setup))
        for r in rs:
            p = point(r)
            if p not in order:
                order.append(p)
            sp = r["convolution"]["setup_parts_ms"]
            for part in ("tiling", "exchange_tables"):
                parts.setdefault((p, side, part), []).append(sp.get(part, 0.0))
            parts.setdefault((p, side, "setup"), []).append(r["timing"]["wall_ms"]["setup"])
    print("| point | `tiling` base | `tiling` new | `exchange_tables` base | `exchange_tables` new | set-up base | set-up new |")
    print("|---|---|---|---|---|---|---|")
    for p in order:
        cells = [span(parts[(p, side, part)]) for part in ("tiling", "exchange_tables", "setup") for side in ("base", "new")]
        print(f"| {p} | " + " | ".join(cells) + " |")
    print()
    print("| call | run | side | commit | validated | set-up of the 8 points, ms |")
    print("|---|---|---|---|---|---|")
    for call, run, side, sha, ok, n, setup in runs:
        print(f"| {call} | {run} | {side} | `{sha}` | {ok}/{n} | {setup:.0f} |")


if __name__ == "__main__":
    main()
