"""results/h200x1-2026-11-29-first-of-kind: the points of a one-GPU fft3d
sweep still over 25% fixed cost, under CUDA_MODULE_LOADING=LAZY and EAGER
(two runs each), and krylov at 256^3 (issue 44).

Prints per run the fixed share (set-up + validation + release over the
point's timing.wall_ms), the points over 25% with their parts, and per krylov
point its share and parts."""
import re
import statistics

from campaign import fixed_share as share
from campaign import read_records as read
from campaign import results_dir

CAMPAIGN = "h200x1-2026-11-29-first-of-kind"
FFT = re.compile(r"call1-run(\d)-(lazy|eager)-gpu_setup_cost_fft3d_1gpu\.jsonl\.gz")


def main():
    d = results_dir(CAMPAIGN)
    print("| run | loading | points | share median | over 25% | points' wall sum ms | job start ms |")
    print("|---|---|---|---|---|---|---|")
    over = []
    for path in sorted(d.glob("call1-run*")):
        m = FFT.fullmatch(path.name)
        rs = read(path)
        sh = [share(r["timing"]["wall_ms"]) for r in rs]
        big = [(r, s) for r, s in zip(rs, sh) if s > 0.25]
        wall = sum(sum(r["timing"]["wall_ms"].values()) for r in rs)
        print(f"| {m.group(1)} | {m.group(2)} | {len(rs)} | {100 * statistics.median(sh):.0f}% | {len(big)} | "
              f"{wall:.0f} | {rs[0]['job']['startup_ms']:.0f} |")
        over += [(m.group(2), m.group(1), r, s) for r, s in big]
    print("\n| loading | run | point | share | plans | validate: transform | timed |")
    print("|---|---|---|---|---|---|---|")
    for ml, run, r, s in over:
        p = r["problem"]
        v = dict(r["validation"].get("parts_ms", {}))
        print(f"| {ml} | {run} | {r['key']} {p['size'][0]}³ {p['precision']} {p['direction']} | {100 * s:.0f}% | "
              f"{r['fft3d']['setup_parts_ms']['plans']:.2f} | {v.get('transform', 0):.2f} | "
              f"{r['timing']['wall_ms']['timed']:.2f} |")
    print("\n| krylov 256³ point | share | set-up | prepare | timed | validate (ms) |")
    print("|---|---|---|---|---|---|")
    for r in read(d / "call1-gpu_setup_cost_krylov_1gpu.jsonl.gz"):
        if r["status"] != "ok":
            print(f"| {r['key']} | {r['status']}: {r.get('reason', '')} | | | | |")
            continue
        w = r["timing"]["wall_ms"]
        print(f"| {r['key']} | {100 * share(w):.0f}% | {w['setup']:.0f} | {w['prepare']:.0f} | {w['timed']:.0f} | "
              f"{w['validate']:.0f} |")


if __name__ == "__main__":
    main()
