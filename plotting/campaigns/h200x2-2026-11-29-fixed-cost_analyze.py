"""results/h200x2-2026-11-29-fixed-cost: a point's fixed share (set-up +
validation + release over the point's timing.wall_ms) at 2 ranks on 2 H200s,
fft3d 256^3 and convolution 256^3-512^3, against the last 2-GPU measurement's
commit (call 1) and the octree tilings made on every host thread (call 2)
(issue 44).

Prints per call, testcase, side and run the share median, max and the points
over 25%, then those points with their set-up parts."""
import re

from campaign import fixed_share as share
from campaign import matching_records, share_cells

CAMPAIGN = "h200x2-2026-11-29-fixed-cost"
NAME = re.compile(r"call(\d)-run(\d)-(base|new)-(gpu_setup_cost_fft3d_256|gpu_convolution_2gpu)\.jsonl\.gz")


def runs():
    return [(int(m.group(1)), m.group(4), int(m.group(2)), m.group(3), rs[0]["provenance"]["git_sha"][:7], rs)
            for m, rs in matching_records(CAMPAIGN, NAME)]


def what(r):
    p, c = r["problem"], r["config"]
    if p["kind"] == "fft3d":
        return f"{c['decomposition']} {c['redistribution'][0]} {p['precision']} {p['direction']}"
    return f"{p['size'][0]}³ {p['kernel']} {r['key']}"


def parts(r):
    p = r.get("fft3d", r.get("convolution", {})).get("setup_parts_ms", {})
    return ", ".join(f"{k} {v:.1f}" for k, v in sorted(p.items(), key=lambda kv: -kv[1]) if v >= 0.3)


def main():
    rows = runs()
    print("| call | testcase | run | side | commit | share median | max | over 25% | validated |")
    print("|---|---|---|---|---|---|---|---|---|")
    for call, tc, run, side, sha, rs in rows:
        print("| " + " | ".join([str(call), tc, str(run), side, f"`{sha}`", *share_cells(rs)]) + " |")
    print("\n| call | run | side | point | share | set-up ms | validate ms | timed ms | set-up parts ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for call, tc, run, side, sha, rs in rows:
        if side != "new":
            continue
        for r in rs:
            w = r["timing"]["wall_ms"]
            if share(w) > 0.25:
                print(f"| {call} | {run} | {side} | {r['point_index']}: {what(r)} | {100 * share(w):.0f}% | "
                      f"{w['setup']:.1f} | {w['validate']:.1f} | {w['timed']:.1f} | {parts(r)} |")
    print("\n| call | run | side | point | tiling ms |")
    print("|---|---|---|---|---|")
    for call, tc, run, side, sha, rs in rows:
        if call != 2:
            continue
        for r in rs:
            t = r["convolution"].get("setup_parts_ms", {}).get("tiling", 0.0)
            if t >= 1:
                print(f"| {call} | {run} | {side} | {r['point_index']}: {what(r)} | {t:.1f} |")


if __name__ == "__main__":
    main()
