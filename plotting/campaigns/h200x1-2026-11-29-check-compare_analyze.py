"""results/h200x1-2026-11-29-check-compare: the octree's sampled check
compared on the host, A/B on one H200 shared by 2 ranks (issue 44).

Call 1: the per-point ownership test on every host thread (950c826) against
one thread (59c014c); call 2: the owned points listed once per grid
(1452c89) against call 1's. Prints per call and side the validation parts
`check_points`, `check_values` and `compare` (ms; the grid's first octree
point apart for `check_points`) and the validation of the points that reuse
exact values (every point but each size's first fine one)."""
import re

from campaign import matching_records

CAMPAIGN = "h200x1-2026-11-29-check-compare"
NAME = re.compile(r"call(\d)-run(\d)-(base|new)-gpu_setup_cost_convolution_shared\.jsonl\.gz")


def span(values):
    return f"{min(values):.2f}-{max(values):.2f}" if values else "none"


def main():
    rows = {}  # (call, side) -> parts
    shas = {}
    for m, rs in matching_records(CAMPAIGN, NAME):
        key = (m.group(1), m.group(3))
        shas[key] = rs[0]["provenance"]["git_sha"][:7]
        acc = rows.setdefault(key, {"first_points": [], "check_values": [], "compare": [], "validate": [], "ok": 0, "n": 0})
        seen = set()
        for r in rs:
            v, size = r["convolution"]["validate_parts_ms"], r["problem"]["size"][0]
            first = size not in seen  # the size's first octree point makes the check points
            seen.add(size)
            if first:
                acc["first_points"].append(v.get("check_points", 0.0))
            acc["check_values"].append(v.get("check_values", 0.0))
            acc["compare"].append(v["compare"])
            if "local_run" not in v:
                acc["validate"].append(r["timing"]["wall_ms"]["validate"])
            acc["ok"] += r["status"] == "ok" and r["validation"]["passed"]
            acc["n"] += 1
    print("| call | side | commit | validated | `check_points` on a size's first point | `check_values` | `compare` | "
          "validation of the points without a local run |")
    print("|---|---|---|---|---|---|---|---|")
    for (call, side), a in sorted(rows.items()):
        print(f"| {call} | {side} | `{shas[(call, side)]}` | {a['ok']}/{a['n']} | {span(a['first_points'])} | "
              f"{span(a['check_values']) if max(a['check_values']) > 0 else 'in compare'} | {span(a['compare'])} | "
              f"{span(a['validate'])} |")


if __name__ == "__main__":
    main()
