# A/B of gpu_agree_ab_1gpu: base (e551ee2) vs new (13229e5), same H100, same job
# (results/h100x1-2026-11-23-agree-ab, or the folder given as the argument).
import glob, json, math, os, sys
from campaign import open_text, results_dir
here = sys.argv[1] if len(sys.argv) > 1 else str(results_dir("h100x1-2026-11-23-agree-ab"))
def load(pat):
    d = {}
    for f in glob.glob(os.path.join(here, pat)):
        for line in open_text(f):
            r = json.loads(line)
            k = (r['problem']['ranks'], r['problem']['direction'], r['config']['decomposition'], r['config']['redistribution'][0])
            t = r['timing']['total']
            d[k] = (t['median'], t['ci99'][0], t['ci99'][1], r['timing']['wall_ms']['timed'])
    return d
b, n = load('base/*-r*.jsonl.gz'), load('new/*-r*.jsonl.gz')
ratios = []
print(f"{'ranks':>5} {'dir':>8} {'decomposition':>10} {'method':>9} | {'base ms [99% CI]':>24} | {'new ms [99% CI]':>24} | new/base | timed wall ms base -> new")
for k in sorted(b):
    x, y = b[k], n[k]
    ratios.append(y[0] / x[0])
    print(f"{k[0]:>5} {k[1]:>8} {k[2]:>10} {k[3]:>9} | {x[0]:7.3f} [{x[1]:6.3f}, {x[2]:6.3f}] | {y[0]:7.3f} [{y[1]:6.3f}, {y[2]:6.3f}] | {y[0]/x[0]:8.3f} | {x[3]:6.0f} -> {y[3]:6.0f}")
ratios.sort()
print(f"median new/base {ratios[len(ratios)//2]:.3f}, geometric mean {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}, range {ratios[0]:.3f}..{ratios[-1]:.3f}")
