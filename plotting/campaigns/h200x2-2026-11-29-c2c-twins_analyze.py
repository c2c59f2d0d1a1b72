"""results/h200x2-2026-11-29-c2c-twins: one nvidia-h200-x2 lease (issue 44).
Base edbb713 against 3bd7f1d (the inverse runs the forward's c2c cuFFT
plans reversed, FftPlan::reversed), both built on the lease. Call 2:
gpu_setup_cost_fft3d_256 at 2 ranks, the new build once first ("warm"),
then base, new three times. Call 4: gpu_setup_cost_fft3d (512³ and 1024³)
the same way, then gpu_setup_cost_fft3d_256 twice a side.

Prints the share cells per run, the `plans` set-up part (ms) of each first
point of a decomposition and precision (a plan whose cuFFT passes no
earlier point made), per build, and the new ÷ base ratio of each point's
median transform time (timing.total.median, medians over the runs)."""
import re
import statistics

from campaign import matching_records, share_cells, value_range

CAMPAIGN = "h200x2-2026-11-29-c2c-twins"
RUNS = re.compile(r"call(\d)-(warm|run\d)-(base|new)-(gpu_setup_cost_fft3d(?:_256)?)\.jsonl\.gz")


def label(r):
    c, p = r["config"], r["problem"]
    return f"{p['size'][0]}³ {c['decomposition']} {c['redistribution'][0]} {p['precision']} {p['direction']}"


def main():
    runs = {}
    print("| call | testcase | run | side | commit | share median | max | over 25% | validated |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m, rs in matching_records(CAMPAIGN, RUNS):
        call, run, side, tc = m.groups()
        if run != "warm":
            runs.setdefault((call, tc), {}).setdefault(side, []).append(rs)
        print(f"| {call} | {tc} | {run} | {side} | `{rs[0]['provenance']['git_sha'][:7]}` | "
              + " | ".join(share_cells(rs)) + " |")
    print()
    print("| call | point | base `plans` | new `plans` | base median | new median |")
    print("|---|---|---|---|---|---|")
    ratios = []
    for (call, tc), sides in runs.items():
        first = sides["base"][0]
        for i, r in enumerate(first):
            for side in ("base", "new"):
                if any(rs[i]["key"] != r["key"] for rs in sides[side]):
                    raise SystemExit(f"call {call} {tc} point {i}: the runs' points differ")
            median = {s: statistics.median(rs[i]["timing"]["total"]["median"] for rs in sides[s]) for s in sides}
            ratios.append(median["new"] / median["base"])
            plans = {s: [rs[i]["fft3d"]["setup_parts_ms"]["plans"] for rs in sides[s]] for s in sides}
            if max(plans["base"]) > 0.5:  # the points that made cuFFT plans
                print(f"| {call} | {label(r)} | {value_range(plans['base'], '{:.2f}')} (median {statistics.median(plans['base']):.2f}) | "
                      f"{value_range(plans['new'], '{:.2f}')} (median {statistics.median(plans['new']):.2f}) | "
                      f"{median['base']:.4f} | {median['new']:.4f} |")
    print()
    print(f"transform time new ÷ base over {len(ratios)} points: median {statistics.median(ratios):.3f}, "
          f"range {min(ratios):.3f}-{max(ratios):.3f}")


if __name__ == "__main__":
    main()
