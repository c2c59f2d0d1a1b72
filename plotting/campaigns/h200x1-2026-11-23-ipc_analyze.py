"""cuda_ipc against host-staged MPI with ranks sharing one GPU: best time per
(ranks, size, direction, decomposition, method) and the ratio to the best
host-staged method. Usage: python3 plotting/campaigns/h200x1-2026-11-23-ipc_analyze.py"""
import json
from collections import defaultdict

from campaign import open_text, results_dir

recs = [json.loads(l) for f in ("gpu_ipc_shared-r2.jsonl.gz", "gpu_ipc_shared-r4.jsonl.gz")
        for l in open_text(results_dir("h200x1-2026-11-23-ipc") / f)]
ok = [r for r in recs if r["status"] == "ok" and r["validation"]["passed"]]
print(f"{len(recs)} records, {len(ok)} ok and validated; max rel. error {max(r['validation']['max_rel_error'] for r in ok):.2g}")
rows = defaultdict(dict)
for r in ok:
    p, c = r["problem"], r["config"]
    rows[(p["ranks"], p["size"][0], p["direction"], c["decomposition"])][c["redistribution"][0]] = r
print(f"\n{'ranks':>5} {'size':>5} {'dir':>8} {'decomposition':<10} {'cuda_ipc ms [99% CI]':>26} "
      f"{'best host-staged ms':>24} {'speed-up':>8}  cuda_ipc exchange ms")
for (ranks, n, d, dec), by in sorted(rows.items()):
    ipc = by["cuda_ipc"]["timing"]
    staged = min((by[m] for m in by if m != "cuda_ipc"), key=lambda r: r["timing"]["total"]["median"])
    lo, hi = ipc["total"]["ci99"]
    ex = sum(v["median"] for k, v in ipc["phases"].items() if k.startswith("exchange"))
    print(f"{ranks:>5} {n:>4}^3 {d:>8} {dec:<10} {ipc['total']['median']:>8.3f} [{lo:.3f}, {hi:.3f}]    "
          f"{staged['timing']['total']['median']:>8.2f} ({staged['config']['redistribution'][0]:<8}) "
          f"{staged['timing']['total']['median'] / ipc['total']['median']:>7.1f}x  {ex:.3f}")
