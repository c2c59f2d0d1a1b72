"""results/h200x2-2026-11-29-octree-setup: gpu_convolution_2gpu and
gpu_setup_cost_fft3d_256 at 2 ranks on 2 H200s on 7d92a1a (the octree's
device tiling, the check's owned list, the local convolution kept across
kernels), one run on a fresh lease, against the last 2-GPU records of the
same testcases (results/h200x2-2026-11-29-fixed-cost, 152fe57 and 35bd5ff,
another lease) (issue 44).

Prints the share cells per file, then per octree point and the exact ones
over 25%: the fixed share and the set-up, validation and timed wall (ms),
before (the earlier runs' range) and now."""
import re

from campaign import fixed_share, matching_records, share_cells

NOW = ("h200x2-2026-11-29-octree-setup", re.compile(r"call1-(gpu_convolution_2gpu|gpu_setup_cost_fft3d_256)-(\w+)\.jsonl\.gz"))
BEFORE = ("h200x2-2026-11-29-fixed-cost",
          re.compile(r"call(2)-run\d-new-(gpu_convolution_2gpu)\.jsonl\.gz|call(1)-run\d-new-(gpu_setup_cost_fft3d_256)\.jsonl\.gz"))


def label(r):
    c, p = r["config"], r["problem"]
    if p.get("kernel"):
        return f"{p['size'][0]}³ {p['kernel']} {c['method']}/{c.get('sampling') or ''}/{c['redistribution'][0]}"
    return f"{c['decomposition']} {c['redistribution'][0]} {p['precision']} {p['direction']}"


def main():
    before = {}
    print("| records | commit | share median | max | over 25% | validated |")
    print("|---|---|---|---|---|---|")
    for m, rs in matching_records(*BEFORE):
        tc = m.group(2) or m.group(4)
        for i, r in enumerate(rs):
            before.setdefault((tc, i), []).append(r)
        print(f"| before: {tc} | `{rs[0]['provenance']['git_sha'][:7]}` | " + " | ".join(share_cells(rs)) + " |")
    now = {}
    for m, rs in matching_records(*NOW):
        now[m.group(1)] = rs
        print(f"| now: {m.group(1)} | `{rs[0]['provenance']['git_sha'][:7]}` | " + " | ".join(share_cells(rs)) + " |")
    print()
    print("| testcase | point | share before | share now | set-up before | set-up now | validate now | timed now |")
    print("|---|---|---|---|---|---|---|---|")
    for tc, rs in now.items():
        for i, r in enumerate(rs):
            w = r["timing"]["wall_ms"]
            b = before.get((tc, i), [])
            octree = r["config"].get("method") == "octree"
            if not octree and fixed_share(w) <= 0.25 and not any(fixed_share(x["timing"]["wall_ms"]) > 0.25 for x in b):
                continue
            sb = [fixed_share(x["timing"]["wall_ms"]) for x in b]
            ub = [x["timing"]["wall_ms"]["setup"] for x in b]
            print(f"| {tc} | {i}: {label(r)} | {100 * min(sb):.0f}-{100 * max(sb):.0f}% | {100 * fixed_share(w):.1f}% | "
                  f"{min(ub):.1f}-{max(ub):.1f} | {w['setup']:.1f} | {w['validate']:.1f} | {w['timed']:.1f} |")


if __name__ == "__main__":
    main()
