"""Ratios, best-plan phase breakdown and floors, memory per configuration for
gpu_large (2 ranks) against gpu_large_reference (1 rank) from one job.
Usage: python3 plotting/campaigns/h200x2-2026-11-23-large_analyze.py"""
import json
from collections import defaultdict

from campaign import open_text, results_dir

recs = [json.loads(l) for f in ("gpu_large-r2.jsonl.gz", "gpu_large_reference-r1.jsonl.gz")
        for l in open_text(results_dir("h200x2-2026-11-23-large") / f)]
ok = [r for r in recs if r["status"] == "ok" and r["validation"]["passed"]]
print(f"records: {len(recs)}, ok and validated: {len(ok)}, commit {recs[0]['provenance']['git_sha'][:12]}, "
      f"{recs[0]['machine']['gpu_count']}x {recs[0]['machine']['gpu_model']}")

def name(r):
    c = r["config"]
    return f"{c['decomposition']}/{c['layout']}/{c['process_grid'][0]}x{c['process_grid'][1]}/{'+'.join(c['redistribution']) or 'none'}"

def med(r):
    return r["timing"]["total"]["median"]

def ci(r):
    lo, hi = r["timing"]["total"]["ci99"]
    return f"[{lo:.3f}, {hi:.3f}]"

groups = defaultdict(list)
for r in ok:
    p = r["problem"]
    groups[(tuple(p["size"]), p["direction"])].append(r)

# Memory bandwidth measured in this run: the 1-rank slab_2d1d self exchange copies
# the whole complex slab on one GPU (read + write).
print("\n## Ratios (median ms, 99% CI; ratio = time / cufftXt time, < 1 is faster than cufftXt)\n")
print("| size | dir | cuFFT 3D, 1 GPU | cufftXt, 2 GPUs | best at 2 ranks (one GPU each) | best | / cufftXt | / 1-GPU cuFFT |")
print("|---|---|---|---|---|---|---|---|")
best_plans = {}
for (size, d), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] != "forward")):
    ref3d = [r for r in rs if r["config"]["decomposition"] == "reference_3d"]
    xt = [r for r in rs if r["config"]["decomposition"] == "reference_cufftxt"]
    dist = [r for r in rs if r["problem"]["ranks"] == 2]
    b = min(dist, key=med)
    best_plans[(size, d)] = b
    s = "x".join(map(str, size))
    print(f"| {s} | {d} | {med(ref3d[0]):.3f} {ci(ref3d[0])} | {med(xt[0]):.3f} {ci(xt[0])} | {med(b):.3f} {ci(b)} | "
          f"{name(b)} | {med(b) / med(xt[0]):.2f}x | {med(b) / med(ref3d[0]):.2f}x |")

print("\n## Every configuration at 2 ranks (median ms)\n")
for (size, d), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] != "forward")):
    xt = [r for r in rs if r["config"]["decomposition"] == "reference_cufftxt"][0]
    print(f"{'x'.join(map(str, size))} {d}:")
    for r in sorted([r for r in rs if r["problem"]["ranks"] == 2], key=med):
        print(f"  {med(r):8.3f}  {med(r) / med(xt):5.2f}x cufftXt   mem/rank {r['memory_bytes'] / 1e9:6.2f} GB   {name(r)}")

print("\n## Best plan: phases against their floors\n")
for (size, d), b in sorted(best_plans.items(), key=lambda kv: (kv[0][0], kv[0][1] != "forward")):
    nx, ny, nz = size
    cbytes = nx * ny * (nz // 2 + 1) * 16 // 2  # this rank's complex slab (double), 2 ranks
    sent = cbytes // 2                            # half of it goes to the other GPU
    one = [r for r in groups[(size, d)] if r["problem"]["ranks"] == 1 and r["config"]["decomposition"] == "slab_2d1d"][0]
    selfcopy_ms = one["timing"]["phases"]["exchange.0"]["median"]
    hbm = 2 * 2 * cbytes / (selfcopy_ms * 1e-3)  # whole slab (2 cbytes) read + written
    print(f"{'x'.join(map(str, size))} {d}, {name(b)}: total {med(b):.3f} ms; measured HBM copy rate "
          f"(1-rank self exchange of {2 * cbytes / 1e9:.2f} GB) {hbm / 1e12:.2f} TB/s")
    for ph in b["timing"]["phase_order"]:
        t = b["timing"]["phases"][ph]["median"]
        extra = ""
        if ph.startswith("exchange"):
            local = 2 * (cbytes - sent) / hbm * 1e3   # the kept half: an on-device copy
            bw = sent / ((t - local) * 1e-3)
            extra = (f"  {sent / 1e9:.2f} GB each way; minus the kept half's device copy ({local:.2f} ms) "
                     f"-> {bw / 1e9:.0f} GB/s per direction ({bw / 450e9:.0%} of 450 GB/s nominal NVLink)")
        elif ph.startswith(("pack", "unpack")):
            floor = 2 * sent / hbm * 1e3
            extra = f"  moves {sent / 1e9:.2f} GB (read + write): floor {floor:.2f} ms at the measured HBM rate"
        elif ph.startswith("fft"):
            floor = 2 * cbytes / hbm * 1e3
            extra = f"  one read + write pass over {cbytes / 1e9:.2f} GB would take {floor:.2f} ms"
        print(f"  {ph:11s} {t:7.3f} ms{extra}")

print("\n## Memory: largest per-rank footprint (input + output + workspace), GB\n")
mem = defaultdict(dict)
for r in ok:
    c = r["config"]
    key = (c["decomposition"], r["problem"]["ranks"])
    s = "x".join(map(str, r["problem"]["size"]))
    mem[key][s] = max(mem[key].get(s, 0), r["memory_bytes"] / 1e9)
for (dec, ranks), by in sorted(mem.items()):
    print(f"  {dec:18s} ranks {ranks}: " + ", ".join(f"{s}: {v:.1f}" for s, v in sorted(by.items())))
