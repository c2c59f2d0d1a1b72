#!/usr/bin/env python3
"""fftune tuning report: each search strategy of `fftune tune` against an
exhaustive search of the same testcase.

    python3 plotting/tuning_report.py --exhaustive EX_OUT --strategy screen=OUT [--strategy halving=OUT2 ...] --out DIR

EX_OUT and each strategy's OUT are `fftune tune --out` folders (round0/,
round1/, ... of JSON-lines records). Per problem: exhaustive's best plan and
time, and each strategy's pick (the rule of `fftune tune`: the last validated
measurement of each configuration, the fastest per problem) with its time in
the exhaustive run over the best. Per strategy, its cost as a share of
exhaustive's: the points' host wall time (timing.wall_ms, every part), the
timed iterations' wall time (the GPU work) and point-iterations (warm-up +
timed calls). Writes tuning.md and tuning_strategies.png/.svg (cost against
the worst and mean pick). Exit status 2 with a message when a folder holds no
records.
"""
import argparse
import glob
import json
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import ReportError, legend_outside, save  # noqa: E402


def load_rounds(folder):
    """{round: [records]} of a `fftune tune --out` folder."""
    rounds = {}
    # A round holds the merged file (NAME.jsonl) and each job's (NAME-rR.jsonl): the merged one only.
    for path in sorted(p for p in glob.glob(os.path.join(folder, "round*", "*.jsonl")) if not re.search(r"-r\d+\.jsonl$", p)):
        k = int(os.path.basename(os.path.dirname(path))[len("round"):])
        with open(path) as f:
            rounds.setdefault(k, []).extend(json.loads(line) for line in f if line.strip())
    if not rounds:
        raise ReportError(f"{folder}: no round*/*.jsonl records (an `fftune tune --out` folder?)")
    return rounds


def signature(r):
    p = r["problem"]
    return json.dumps({k: v for k, v in p.items() if k != "ranks_per_node"}, sort_keys=True)


def validated(r):
    return r.get("status") == "ok" and (r.get("validation") or {}).get("passed") is True


def picks(rounds):
    """{problem: (ms, key)}: the last validated measurement of each key, the fastest per problem."""
    last = {}
    for k in sorted(rounds):
        for r in rounds[k]:
            if validated(r):
                last[(signature(r), r["key"])] = r["timing"]["total"]["median"]
    best = {}
    for (sig, key), ms in last.items():
        if sig not in best or ms < best[sig][0]:
            best[sig] = (ms, key)
    return best


def cost(rounds):
    """(points' wall s, timed iterations' wall s, point-iterations) of every measured point."""
    wall = timed = its = 0.0
    for recs in rounds.values():
        for r in recs:
            t = r.get("timing")
            if not t:
                continue
            parts = t.get("wall_ms", {})
            wall += sum(parts.values()) / 1000
            timed += parts.get("timed", 0) / 1000
            its += t["warmup"] + t["iterations"]
    return wall, timed, its


def compare(exhaustive, strategies):
    """Rows per problem and a summary per strategy, judged with exhaustive's times."""
    times = {(signature(r), r["key"]): r["timing"]["total"]["median"] for r in exhaustive[0] if validated(r)}
    best = picks(exhaustive)
    ex_cost = cost(exhaustive)
    summary = {}
    for name, rounds in strategies.items():
        chosen = picks(rounds)
        ratios = {}
        for sig, (ms, _) in best.items():
            pick = chosen.get(sig)
            ratios[sig] = times.get((sig, pick[1]), math.nan) / ms if pick else math.nan
        c = cost(rounds)
        known = [v for v in ratios.values() if not math.isnan(v)]
        summary[name] = {
            "picks": {sig: chosen.get(sig, (math.nan, None))[1] for sig in best},
            "ratios": ratios,
            "within5": sum(v <= 1.05 for v in known),
            "within10": sum(v <= 1.10 for v in known),
            "mean": sum(known) / len(known) if known else math.nan,
            "worst": max(known) if known else math.nan,
            "missing": len(ratios) - len(known),
            "wall": 100 * c[0] / ex_cost[0] if ex_cost[0] else math.nan,
            "timed": 100 * c[1] / ex_cost[1] if ex_cost[1] else math.nan,
            "iterations": 100 * c[2] / ex_cost[2] if ex_cost[2] else math.nan,
        }
    return best, summary, ex_cost


def figure(summary, out, title):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for i, (name, s) in enumerate(sorted(summary.items())):
        colour = f"C{i}"
        for y, marker in ((s["worst"], "o"), (s["mean"], "s")):
            ax.plot([s["timed"], s["wall"]], [y, y], color=colour, lw=1)
            ax.scatter([s["timed"], s["wall"]], [y, y], color=colour, marker=marker, facecolors=["none", colour])
        ax.plot([], [], color=colour, label=name)
    ax.scatter([100], [1.0], color="black", marker="*", s=80, label="exhaustive (the best, by definition)")
    ax.scatter([], [], color="grey", marker="o", label="worst pick")
    ax.scatter([], [], color="grey", marker="s", label="mean pick")
    ax.axhline(1.05, color="grey", ls=":", lw=1)
    ax.set_xlim(0, 105)
    ax.set_xlabel("cost, % of exhaustive (hollow: timed iterations; filled: points' wall time)")
    ax.set_ylabel("pick time ÷ exhaustive's best")
    ax.set_title(title)
    legend_outside(ax)
    return save(fig, out, "tuning_strategies")


def page(best, summary, ex_cost, paths, title):
    md = [f"# {title}", "",
          f"Exhaustive: {len(best)} problems; points' wall time {ex_cost[0]:.1f} s, timed iterations {ex_cost[1]:.1f} s, "
          f"{ex_cost[2]:.0f} point-iterations.", "",
          "| strategy | picks within 5% | within 10% | mean pick ÷ best | worst | points' wall time | timed iterations | point-iterations |",
          "|---|---|---|---|---|---|---|---|"]
    for name, s in sorted(summary.items()):
        missing = f" ({s['missing']} without a pick)" if s["missing"] else ""
        md.append(f"| {name} | {s['within5']} of {len(best)}{missing} | {s['within10']} | {s['mean']:.3f} | {s['worst']:.3f} | "
                  f"{s['wall']:.1f}% | {s['timed']:.1f}% | {s['iterations']:.1f}% |")
    md += ["", f"![cost and pick quality]({os.path.basename(paths[0])}) ([svg]({os.path.basename(paths[1])}))", "",
           "| problem | exhaustive best | ms | " + " | ".join(f"{n}: pick ÷ best" for n in sorted(summary)) + " |",
           "|---|---|---|" + "---|" * len(summary)]
    for sig, (ms, key) in sorted(best.items()):
        p = json.loads(sig)
        label = " ".join(str(p[k]) if k != "size" else "x".join(map(str, p[k])) for k in sorted(p) if k != "kind")
        md.append(f"| {label} | `{key}` | {ms:.4g} | " + " | ".join(f"{summary[n]['ratios'][sig]:.3f}" for n in sorted(summary)) + " |")
    return md


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exhaustive", required=True, help="the `fftune tune --strategy exhaustive --out` folder")
    ap.add_argument("--strategy", action="append", required=True, metavar="NAME=FOLDER",
                    help="a strategy's `fftune tune --out` folder (repeat for several)")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--title", default="fftune tune: strategies against exhaustive")
    args = ap.parse_args(argv)
    try:
        strategies = {}
        for s in args.strategy:
            name, sep, folder = s.partition("=")
            if not sep or not name or not folder:
                raise ReportError(f"--strategy {s}: give NAME=FOLDER, e.g. screen=tune-out/screen")
            strategies[name] = load_rounds(folder)
        exhaustive = load_rounds(args.exhaustive)
        best, summary, ex_cost = compare(exhaustive, strategies)
        if not best:
            raise ReportError(f"{args.exhaustive}: no validated ok record to judge the picks with")
        os.makedirs(args.out, exist_ok=True)
        paths = figure(summary, args.out, args.title)
        with open(os.path.join(args.out, "tuning.md"), "w") as f:
            f.write("\n".join(page(best, summary, ex_cost, paths, args.title)) + "\n")
    except ReportError as e:
        print(f"fftune tuning report: {e}", file=sys.stderr)
        return 2
    print(f"{args.out}/tuning.md: {len(summary)} strategies, {len(best)} problems")
    return 0


if __name__ == "__main__":
    sys.exit(main())
