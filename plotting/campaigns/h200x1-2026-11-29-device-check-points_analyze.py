"""results/h200x1-2026-11-29-device-check-points: the convolution check's
points made on the device (ConvolutionKernels::check_values) against host
tables of points and one-point cells, on one H200 (issue 44).

Prints per side and run the fixed share (set-up + validation + release over
the point's timing.wall_ms) of `gpu_convolution_2gpu --ranks 1`, the points
over 20% or keeping exact values with their parts, and whether every check
reports the same errors on both sides."""
import re
import statistics

from campaign import fixed_share as share
from campaign import matching_records, share_cells

CAMPAIGN = "h200x1-2026-11-29-device-check-points"
NAME = re.compile(r"call(\d)-run(\d)-(base|new)-gpu_convolution_2gpu\.jsonl\.gz")


def runs():
    return [(int(m.group(2)), m.group(3), rs[0]["provenance"]["git_sha"][:7], rs)
            for m, rs in matching_records(CAMPAIGN, NAME)]


def what(r):
    p = r["problem"]
    return f"{p['size'][0]}³ {p['kernel']} {r['key']}"


def main():
    rs_all = runs()
    print("| run | side | commit | share median | max | over 25% | validated |")
    print("|---|---|---|---|---|---|---|")
    for run, side, sha, rs in rs_all:
        print("| " + " | ".join([str(run), side, f"`{sha}`", *share_cells(rs)]) + " |")

    print("\n| run | side | point | share | set-up ms | timed ms | validate ms | keep_exact ms | direct_sums ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for run, side, sha, rs in rs_all:
        for r in rs:
            w, v = r["timing"]["wall_ms"], r["convolution"].get("validate_parts_ms", {})
            s = share(w)
            if s <= 0.20 and r["point_index"] not in (0, 12):
                continue
            print(f"| {run} | {side} | {r['point_index']}: {what(r)} | {100 * s:.0f}% | {w['setup']:.1f} | "
                  f"{w['timed']:.1f} | {w['validate']:.1f} | {v.get('keep_exact', 0):.2f} | "
                  f"{v.get('direct_sums', 0):.2f} |")

    keep = {side: [r["convolution"]["validate_parts_ms"]["keep_exact"] for run, s2, _, rs in rs_all if s2 == side
                   for r in rs if "keep_exact" in r["convolution"].get("validate_parts_ms", {})]
            for side in ("base", "new")}
    for side, ms in keep.items():
        print(f"\n{side}: keep_exact over {len(ms)} exact points: median {statistics.median(ms):.2f} ms, "
              f"range {min(ms):.2f}-{max(ms):.2f}")

    errors = {}
    for run, side, sha, rs in rs_all:
        for r in rs:
            for c in r["validation"]["checks"]:
                errors.setdefault((r["point_index"], c["method"]), set()).add(
                    (c["max_rel_error"], c.get("l2_rel_error")))
    same = sum(len(e) == 1 for e in errors.values())
    print(f"\nchecks with the same errors in every run on both sides: {same} of {len(errors)}")


if __name__ == "__main__":
    main()
