"""Device memory per configuration and the largest size that fits, from the
gpu_memory (1 rank) and gpu_memory_shared (2 and 4 ranks sharing one GPU)
records of results/h200x1-2026-11-23-memory and of its before-self-block/.
Usage: python3 plotting/campaigns/h200x1-2026-11-23-memory_analyze.py"""
import json
import re
from collections import defaultdict

from campaign import open_text, results_dir

GIB = 2**30
NEED = re.compile(r"this rank ([\d.]+) GiB")
FREE = re.compile(r"([\d.]+) GiB of its ([\d.]+) GiB are free")


def load(folder):
    out = []
    for f in ("gpu_memory-r1.jsonl.gz", "gpu_memory_shared-r2.jsonl.gz", "gpu_memory_shared-r4.jsonl.gz"):
        out += [json.loads(l) for l in open_text(results_dir("h200x1-2026-11-23-memory") / folder / f)]
    return out


def key(r):
    c, p = r["config"], r["problem"]
    return (p["ranks"], c["decomposition"], c["layout"], p["size"][0])


def need_gib(r):
    """Planned per-rank device bytes: measured plans record them, refused ones state them."""
    if r["status"] == "ok":
        return r["memory_bytes"] / GIB
    m = NEED.search(r.get("reason", ""))
    return float(m.group(1)) if m else None


after, before = load("."), load("before-self-block")
print(f"commit {after[0]['provenance']['git_sha'][:7]} (before: {before[0]['provenance']['git_sha'][:7]}), "
      f"{after[0]['machine']['gpu_model']}, double precision, forward plans (each holds both directions)")
free = None
for r in after:
    m = FREE.search(r.get("reason", ""))
    if m:
        free = float(m.group(1))
        print(f"free device memory before a point: {m.group(1)} GiB of {m.group(2)} GiB")
        break

print("\n## Planned (memory_bytes) against driver-measured (device_memory) use, per rank, GiB\n")
print(f"{'ranks':>5} {'configuration':<26} {'size':>5} {'planned':>8} {'measured':>9} {'diff':>7}  workspace")
for r in after:
    if r["status"] != "ok":
        continue
    p, c, dm = r["problem"], r["config"], r["device_memory"]
    per_rank = dm["measured_bytes"] / dm["ranks_on_device"] / GIB
    print(f"{p['ranks']:>5} {c['decomposition'] + '/' + c['layout']:<26} {p['size'][0]:>5} "
          f"{r['memory_bytes'] / GIB:>8.2f} {per_rank:>9.2f} {per_rank - r['memory_bytes'] / GIB:>+7.3f}  "
          f"{r['workspace_bytes'] / GIB:.2f}")

print("\n## Per-rank need (GiB) before and after the self block left the packed buffers;"
      f" fits = need <= {free} GiB free on one H200\n")
old = {key(r): need_gib(r) for r in before}
rows = defaultdict(dict)
for r in after:
    if r["config"]["decomposition"] == "reference_cufftxt":
        continue
    k = key(r)
    rows[k[:3]][k[3]] = (old.get(k), need_gib(r))
sizes = sorted({k[3] for k in map(key, after)})
print(f"{'ranks':>5} {'configuration':<26} " + " ".join(f"{n:>16}" for n in sizes) + "  largest that fits")
for (ranks, d, layout), by_size in sorted(rows.items()):
    cells, largest = [], None
    for n in sizes:
        o, a = by_size.get(n, (None, None))
        if a is None:
            cells.append(f"{'-':>16}")
            continue
        if a <= free:
            largest = n
        cells.append(f"{(f'{o:.1f}' if o else '?'):>6} -> {a:>6.1f}{'*' if a <= free else ' '}")
    print(f"{ranks:>5} {d + '/' + layout:<26} " + " ".join(cells) + f"  {largest}^3" if largest else "  none")
print("\n* fits one H200 per rank (before NCCL's own buffers: +0.4 to +0.8 GiB measured at 1 rank)")
