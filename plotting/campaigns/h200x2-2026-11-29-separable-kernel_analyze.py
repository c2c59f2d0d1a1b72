"""results/h200x2-2026-11-29-separable-kernel: one nvidia-h200-x2 lease
(issue 44). Base ebb6f79 against 725ba7e (the gaussian's spectrum K written
from its three 1D factors instead of one padded forward transform), each
built on the lease, gpu_convolution_2gpu at 2 ranks: the new build once first
(the lease's cold caches, "warm"), then base, new, base, new.

Prints the share cells per run, then every point per build over the two
warm runs: share, set-up, K's making (convolution.kernel_setup_ms) and timed
wall (ms), and the new ÷ base ratio of the timed wall's medians."""
import re
import statistics

from campaign import fixed_share, matching_records, share_cells, value_range

CAMPAIGN = "h200x2-2026-11-29-separable-kernel"
RUNS = re.compile(r"call1-(warm|run\d)-(base|new)-gpu_convolution_2gpu\.jsonl\.gz")


def label(r):
    c, p = r["config"], r["problem"]
    return f"{p['size'][0]}³ {p['kernel']} {c['method']}/{c.get('sampling') or '-'}/{c['redistribution']}"


def main():
    runs = {}
    print("| run | side | commit | share median | max | over 25% | validated |")
    print("|---|---|---|---|---|---|---|")
    for m, rs in matching_records(CAMPAIGN, RUNS):
        run, side = m.groups()
        if run != "warm":
            runs.setdefault(side, []).append(rs)
        print(f"| {run} | {side} | `{rs[0]['provenance']['git_sha'][:7]}` | " + " | ".join(share_cells(rs)) + " |")
    print()
    print("| point | side | share | set-up | K's making | timed | timed new ÷ base |")
    print("|---|---|---|---|---|---|---|")
    for i, first in enumerate(runs["base"][0]):
        timed = {}
        for side in ("base", "new"):
            xs = [rs[i] for rs in runs[side]]
            if any(x["key"] != first["key"] for x in xs):
                raise SystemExit(f"point {i}: the runs' points differ")
            timed[side] = statistics.median(x["timing"]["wall_ms"]["timed"] for x in xs)
            ratio = f"{timed['new'] / timed['base']:.3f}" if side == "new" else ""
            print(f"| {label(first) if side == 'base' else ''} | {side} | "
                  f"{value_range([100 * fixed_share(x['timing']['wall_ms']) for x in xs])}% | "
                  f"{value_range([x['timing']['wall_ms']['setup'] for x in xs])} | "
                  f"{value_range([x['convolution']['kernel_setup_ms'] for x in xs])} | "
                  f"{value_range([x['timing']['wall_ms']['timed'] for x in xs])} | {ratio} |")


if __name__ == "__main__":
    main()
