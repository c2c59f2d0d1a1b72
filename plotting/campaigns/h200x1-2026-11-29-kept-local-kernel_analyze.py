"""results/h200x1-2026-11-29-kept-local-kernel: the octree's kept local
convolution kept across kernels (another kernel's spectrum made in its
arrays), A/B on one H200 (issue 44).

Prints, per testcase, each octree point that made its local convolution or
its kernel (plan_and_kernel over 1 ms on either side): the set-up part
`plan_and_kernel` and `kernel_setup_ms` (ms) of both sides' runs, whether
the local convolution was kept, and the fixed share; then whether the
relative L2 errors of both sides are equal."""
import re
import statistics

from campaign import fixed_share, matching_records

CAMPAIGN = "h200x1-2026-11-29-kept-local-kernel"
NAME = re.compile(r"call1-run(\d)-(base|new)-(gpu_setup_cost_convolution_shared|gpu_convolution_2gpu)\.jsonl\.gz")


def span(values):
    return f"{min(values):.1f}-{max(values):.1f}"


def main():
    acc = {}  # (testcase, point index) -> {side: [(p&k, kernel, kept, share)]}
    label, errors = {}, {}
    for m, rs in matching_records(CAMPAIGN, NAME):
        side, tc = m.group(2), m.group(3)
        errors.setdefault((tc, side), []).append([r["validation"].get("l2_rel_error", r["validation"].get("max_rel_error")) for r in rs])
        for i, r in enumerate(rs):
            if r["config"]["method"] != "octree":
                continue
            c = r["convolution"]
            label[(tc, i)] = f"{r['problem']['size'][0]}³ {r['problem']['kernel']} {r['config']['sampling']}"
            acc.setdefault((tc, i), {}).setdefault(side, []).append(
                (c["setup_parts_ms"].get("plan_and_kernel", 0.0), c["kernel_setup_ms"], c["local_kept"],
                 fixed_share(r["timing"]["wall_ms"])))
    print("| testcase | point | `plan_and_kernel` base | new | K made, new | local kept base / new | share base | share new |")
    print("|---|---|---|---|---|---|---|---|")
    for (tc, i), sides in sorted(acc.items()):
        b, n = sides["base"], sides["new"]
        if max(x[0] for x in b + n) < 1.0:
            continue
        print(f"| {tc} | {i}: {label[(tc, i)]} | {span([x[0] for x in b])} | {span([x[0] for x in n])} | "
              f"{span([x[1] for x in n])} | {b[0][2]} / {n[0][2]} | "
              f"{100 * statistics.median(x[3] for x in b):.0f}% | {100 * statistics.median(x[3] for x in n):.0f}% |")
    for tc in sorted({k[0] for k in errors}):
        same = all(e == errors[(tc, "base")][0] for side in ("base", "new") for e in errors[(tc, side)])
        print(f"\n{tc}: relative L2 errors of every run equal on both sides: {same}")


if __name__ == "__main__":
    main()
