"""results/h200x2-2026-11-29-pool-and-kept-local: five nvidia-h200-x2 leases
(issue 44). Call 1: base 64661d7 against 94a491f (parallel_for on kept
threads, the owned check points listed on them, an exact point leaving the
octree's kept local convolution where its plan fits beside it); call 2:
f86f0ac (the job starts the kept threads); call 3: 415bca7 (the owned list
tested by x alone); call 4: b3c89c2 (the kept convolution only for an exact
point of its backend), one run; call 5: fft3d only, base 089a823 against
999db9e (fft3d's validation), three runs a side. Each call ran the new build once first (the lease's cold
caches, "warm"), then the A/B or two runs.

Prints the probe's cost per parallel_for call, the share cells per run, then
every point over 25% in any warm run and every point of 512³ inverse_r, with
the set-up, validation and check_points (ms) per build."""
import re
import statistics

from campaign import fixed_share, matching_records, read_records, results_dir, value_range

CAMPAIGN = "h200x2-2026-11-29-pool-and-kept-local"
RUNS = re.compile(r"call(\d)-(warm|run\d)-(base|new)-(gpu_convolution_2gpu|gpu_setup_cost_fft3d_256)\.jsonl\.gz")


def label(r):
    c, p = r["config"], r["problem"]
    if p.get("kernel"):
        return f"{p['size'][0]}³ {p['kernel']} {c['method']}/{c.get('sampling') or '-'}/{c['redistribution']}"
    return f"{c['decomposition']} {c['redistribution'][0]} {p['precision']} {p['direction']}"


def main():
    probe = read_records(results_dir(CAMPAIGN) / "call1-probe-parallel_for.jsonl.gz")
    print("| threads | base µs per call | new µs per call |")
    print("|---|---|---|")
    for t in sorted({r["threads"] for r in probe}):
        cell = {b: value_range([r["us_per_call_median"] for r in probe if r["threads"] == t and r["build"] == b], "{:.0f}")
                for b in ("base", "new")}
        print(f"| {t} | {cell['base']} | {cell['new']} |")
    print()
    runs = {}
    print("| testcase | call | run | commit | share median | max | over 25% | validated |")
    print("|---|---|---|---|---|---|---|---|")
    for m, rs in matching_records(CAMPAIGN, RUNS):
        call, run, side, tc = m.groups()
        sha = rs[0]["provenance"]["git_sha"][:7]
        if run != "warm":
            runs.setdefault(tc, {}).setdefault(sha, []).append(rs)
        sh = [fixed_share(r["timing"]["wall_ms"]) for r in rs]
        ok = sum(r["status"] == "ok" and r["validation"]["passed"] for r in rs)
        print(f"| {tc} | {call} | {run} | `{sha}` | {100 * statistics.median(sh):.1f}% | {100 * max(sh):.1f}% | "
              f"{sum(s > 0.25 for s in sh)} | {ok}/{len(rs)} |")
    print()
    print("| testcase | point | commit | share | set-up | validate | check_points | timed |")
    print("|---|---|---|---|---|---|---|---|")
    w = lambda rs, k: [x["timing"]["wall_ms"][k] for x in rs]
    for tc, builds in runs.items():
        first = next(iter(builds.values()))[0]
        for i in range(len(first)):
            r = first[i]
            big = r["problem"].get("kernel") == "inverse_r" and r["problem"]["size"][0] == 512
            every = [rs[i] for b in builds.values() for rs in b]
            if max(fixed_share(x["timing"]["wall_ms"]) for x in every) <= 0.25 and not big:
                continue
            for sha, b in builds.items():
                xs = [rs[i] for rs in b]
                sh = [100 * fixed_share(x["timing"]["wall_ms"]) for x in xs]
                cp = [x.get("convolution", {}).get("validate_parts_ms", {}).get("check_points") for x in xs]
                cp = value_range(cp, "{:.2f}") if None not in cp else "-"
                print(f"| {tc} | {i}: {label(r)} | `{sha}` | {value_range(sh)}% | {value_range(w(xs, 'setup'))} | "
                      f"{value_range(w(xs, 'validate'))} | {cp} | {value_range(w(xs, 'timed'))} |")


if __name__ == "__main__":
    main()
