"""Per-problem picks of each search strategy, judged with the exhaustive run's times.

usage: cpu-2core-vm-2026-11-23-thesis_picks.py EXHAUSTIVE.jsonl.gz NAME=ROUND_FILE_GLOB ...
A strategy's pick per problem is the fastest validated configuration in its
last measurement of each configuration (as `fftune tune` picks)."""
import glob, json, sys
from campaign import open_text, results_dir

def usable(r):
    return r.get("status") == "ok" and (r.get("validation") or {}).get("passed") is True

def sig(r):
    p = r["problem"]
    return (p["ranks"], "x".join(map(str, p["size"])))

def picks(records):
    last = {}
    for r in records:
        if usable(r):
            last[(sig(r), r["key"])] = r["timing"]["total"]["median"]
    best = {}
    for (s, k), t in last.items():
        if s not in best or t < best[s][1]:
            best[s] = (k, t)
    return best

def read(paths):
    out = []
    for p in paths:
        with open_text(p) as f:
            out += [json.loads(l) for l in f if l.strip()]
    return out

ex = read([sys.argv[1]])
times = {(sig(r), r["key"]): r["timing"]["total"]["median"] for r in ex if usable(r)}
ex_best = picks(ex)
def short(k):
    return k.replace("fftw/", "").replace("/host", "")
print(f"{'problem':<18} {'exhaustive best (ms)':<60}", end="")
names = [a.split("=", 1)[0] for a in sys.argv[2:]]
print("  " + "  ".join(f"{n}: pick (x best)" for n in names))
res = {n: picks(read(sorted(glob.glob(a.split("=", 1)[1])))) for n, a in zip(names, sys.argv[2:])}
for s in sorted(ex_best):
    k, t = ex_best[s]
    line = f"{s[0]} ranks {s[1]:<10} {short(k):<48} {t:8.2f}"
    for n in names:
        pk = res[n].get(s)
        if pk is None:
            line += f"  {n}: none"
        else:
            ratio = times.get((s, pk[0]), float('nan')) / t
            line += f"  {n}: {short(pk[0])} ({ratio:.3f})"
    print(line)
