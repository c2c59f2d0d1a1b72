"""results/h200x4-2026-11-28-parted-exchange: the forward's exchange in parts
(exchange_parts) and cuda_ipc_push_lockstep on 4 x H200 (issue 40).

Prints: the probe's schedules (bench/probes/split_exchange); per call, the
slab_2d1d and pencil points by transport x slices, parts 1/2/3 with their
ratio to parts 1 and the exchange phase; the best plan per problem against
cuFFT on one GPU and cufftXt from the same call (call 3 ran no references:
call 2's, same machine type, stand in); and the validation counts."""
import argparse
import json
import re
from collections import defaultdict

from campaign import open_text, results_dir

CAMPAIGN = "h200x4-2026-11-28-parted-exchange"
NAME = re.compile(r"call(\d)-(parts|reference|reference-single|validation-parts)-([0-9a-f]{7})-r(\d)\.jsonl\.gz")


def load(path):
    with open_text(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def probe_table():
    print("## Probe: one process over the 4 GPUs, device events between rounds\n")
    print("| n | precision | slices | tapered | parts | lag | copies | FFTs | median ms (min-max) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in load(results_dir(CAMPAIGN) / "probe-f298dae-x4.jsonl.gz"):
        print(f"| {r['n']} | {r['precision']} | {r['slices']} | {'yes' if r['tapered'] else 'no'} | {r['parts']} "
              f"| {r['lag']} | {'yes' if r['copies'] else 'no'} | {'yes' if r['ffts'] else 'no'} "
              f"| {r['median_ms']:.3f} ({r['min_ms']:.3f}-{r['max_ms']:.3f}) |")


def parts_table(call, sha, records):
    print(f"\n## Call {call} ({sha}): parts 1, 2, 3 per plan, median ms (÷ parts 1); exchange.0 ms parts 1 → 2\n")
    rows = defaultdict(dict)
    for r in records:
        c, p = r["config"], r["problem"]
        key = (p["size"][0], p["precision"], c["decomposition"], c["redistribution"][0], c.get("overlap", 1))
        rows[key][c.get("exchange_parts", 1)] = r["timing"]
    print("| n | precision | decomposition | transport | slices | parts 1 | parts 2 | parts 3 | exchange.0 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in sorted(rows, key=lambda k: (-k[0], k[1], k[2], k[3], k[4])):
        t = rows[key]
        base = t[1]["total"]["median"]
        cells = [f"{t[s]['total']['median']:.3f}" + ("" if s == 1 else f" ({t[s]['total']['median'] / base:.3f})")
                 if s in t else "–" for s in (1, 2, 3)]
        ex = "–"
        if 2 in t and "exchange.0" in t[1]["phases"]:
            ex = f"{t[1]['phases']['exchange.0']['median']:.2f} → {t[2]['phases']['exchange.0']['median']:.2f}"
        print(f"| {key[0]}³ | {key[1]} | {key[2]} | {key[3]} | {key[4]} tapered | " + " | ".join(cells) + f" | {ex} |")


def best_table(call, sha, records, refs):
    print(f"\n### Call {call}: best plan per problem against the references\n")
    print("| problem | best plan | ms (99% CI) | cufftXt | ÷ cufftXt | cuFFT 1 GPU | efficiency 1 → 4 |")
    print("|---|---|---|---|---|---|---|")
    best = {}
    for r in records:
        p = r["problem"]
        k = (p["size"][0], p["precision"])
        if k not in best or r["timing"]["total"]["median"] < best[k]["timing"]["total"]["median"]:
            best[k] = r
    for k in sorted(best, key=lambda k: (-k[0], k[1])):
        r = best[k]
        t = r["timing"]["total"]
        xt, one = refs.get((k[0], k[1], "reference_cufftxt")), refs.get((k[0], k[1], "reference_3d"))
        key = r["key"].split("/", 4)[-1]
        print(f"| {k[0]}³ {k[1]} forward | {r['config']['decomposition']}/{key} | {t['median']:.3f} "
              f"({t['ci99'][0]:.3f}–{t['ci99'][1]:.3f}) | {xt:.3f} | {t['median'] / xt:.3f}× | {one:.3f} "
              f"| {100 * one / (4 * t['median']):.1f}% |")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.parse_args()
    probe_table()
    files = defaultdict(dict)
    for path in sorted(results_dir(CAMPAIGN).glob("call*.jsonl.gz")):
        m = NAME.fullmatch(path.name)
        if m:
            call, kind, sha, ranks = m.groups()
            files[(call, sha)][(kind, ranks)] = load(path)
    refs_by_call = {}
    for (call, sha), kinds in sorted(files.items()):
        refs = {}
        for kind in ("reference", "reference-single"):
            for r in kinds.get((kind, "1"), []):
                p = r["problem"]
                if r["status"] == "ok" and p["direction"] == "forward":
                    refs[(p["size"][0], p["precision"], r["config"]["decomposition"])] = r["timing"]["total"]["median"]
        refs_by_call[call] = refs or refs_by_call.get(str(int(call) - 1), {})
        ok = [r for r in kinds.get(("parts", "4"), []) if r["status"] == "ok"]
        parts_table(call, sha, ok)
        best_table(call, sha, ok, refs_by_call[call])
        for ranks in ("2", "4"):
            v = kinds.get(("validation-parts", ranks))
            if v:
                status = defaultdict(int)
                for r in v:
                    status[r["status"]] += 1
                worst = max(r["validation"]["max_rel_error"] for r in v if r["status"] == "ok")
                print(f"\nvalidation at {ranks} ranks: " + ", ".join(f"{n} {s}" for s, n in sorted(status.items()))
                      + f"; largest relative error {worst:.1e}")


if __name__ == "__main__":
    main()
