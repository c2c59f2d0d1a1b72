"""results/h200x1-2026-11-29-warm-up: a job's per-precision backend warm-up
(call 1), a preserved inverse that keeps only its last FFT step apart (call 2)
and the convolution check's parts split (call 3), on one H200 (issue 44).

Prints per call, side and run the fixed share (set-up + validation + release
over the point's timing.wall_ms) of the one-GPU fft3d sweep, the first-of-kind
points, the inverse transforms' medians, and the convolution points over 20%
with their check's parts."""
import re
import statistics

from campaign import fixed_share as share
from campaign import read_records as read
from campaign import results_dir

CAMPAIGN = "h200x1-2026-11-29-warm-up"
NAME = re.compile(r"call(\d)-run(\d)-(base|new)-(gpu_setup_cost_fft3d_1gpu|gpu_convolution_2gpu)\.jsonl\.gz")


def runs(testcase):
    out = []
    for path in sorted(results_dir(CAMPAIGN).glob("call*")):
        m = NAME.fullmatch(path.name)
        if m and m.group(4) == testcase:
            rs = read(path)
            out.append((int(m.group(1)), int(m.group(2)), m.group(3), rs[0]["provenance"]["git_sha"][:7], rs))
    return out


def what(r):
    p, c = r["problem"], r["config"]
    return f"{c['decomposition']} {c['redistribution'][0]} {p['size'][0]}³ {p['precision']} {p['direction']}"


def main():
    fft = runs("gpu_setup_cost_fft3d_1gpu")
    print("| call | run | side | commit | share median | over 25% | job warm-up ms (single, double) |")
    print("|---|---|---|---|---|---|---|")
    for call, run, side, sha, rs in fft:
        sh = [share(r["timing"]["wall_ms"]) for r in rs]
        parts = rs[0]["job"]["parts_ms"]
        warm = ", ".join(f"{parts[k]:.1f}" for k in ("cuda/warm_up/single", "cuda/warm_up/double") if k in parts) or "none"
        print(f"| {call} | {run} | {side} | `{sha}` | {100 * statistics.median(sh):.0f}% | "
              f"{sum(s > 0.25 for s in sh)} | {warm} |")

    print("\n| call | run | side | point | share | plans ms | check's inverse ms | timed ms |")
    print("|---|---|---|---|---|---|---|---|")
    for call, run, side, sha, rs in fft:
        for r in rs:
            s = share(r["timing"]["wall_ms"])
            if r["point_index"] not in (0, 2, 8, 10) and s <= 0.25:
                continue
            v = dict(r["validation"].get("parts_ms", {}))
            print(f"| {call} | {run} | {side} | {r['point_index']}: {what(r)} | {100 * s:.0f}% | "
                  f"{r['fft3d']['setup_parts_ms']['plans']:.2f} | {v.get('transform', 0):.2f} | "
                  f"{r['timing']['wall_ms']['timed']:.2f} |")

    print("\n| call | side | inverse, 256³ | phases | median ms (runs) |")
    print("|---|---|---|---|---|")
    for call in sorted({c for c, *_ in fft}):
        for side in ("base", "new"):
            got = {}
            for c, run, s, sha, rs in fft:
                if c != call or s != side:
                    continue
                for r in rs:
                    p = r["problem"]
                    if p["direction"] != "inverse" or p["size"][0] != 256:
                        continue
                    k = (r["config"]["decomposition"], p["precision"], " + ".join(r["timing"]["phase_order"]))
                    got.setdefault(k, []).append(r["timing"]["total"]["median"])
            for (d, prec, phases), ms in sorted(got.items()):
                print(f"| {call} | {side} | {d} {prec} | {phases} | {', '.join(f'{x:.4f}' for x in ms)} |")

    print("\n| call | run | side | commit | convolution share median | over 25% |")
    print("|---|---|---|---|---|---|")
    for call, run, side, sha, rs in runs("gpu_convolution_2gpu"):
        sh = [share(r["timing"]["wall_ms"]) for r in rs]
        print(f"| {call} | {run} | {side} | `{sha}` | {100 * statistics.median(sh):.0f}% | {sum(s > 0.25 for s in sh)} |")

    print("\n| call | run | side | point | share | set-up | timed | validate | its parts (ms) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for call, run, side, sha, rs in runs("gpu_convolution_2gpu"):
        for r in rs:
            w = r["timing"]["wall_ms"]
            if share(w) <= 0.2:
                continue
            p, c = r["problem"], r["config"]
            parts = ", ".join(f"{k} {v:.1f}" for k, v in r["convolution"].get("validate_parts_ms", {}).items())
            print(f"| {call} | {run} | {side} | {r['point_index']}: {p['size'][0]}³ {p['kernel']} {c['method']} | "
                  f"{100 * share(w):.0f}% | {w['setup']:.1f} | {w['timed']:.1f} | {w['validate']:.1f} | {parts} |")


if __name__ == "__main__":
    main()
