"""results/h200x2-2026-11-27-tune-strategies (and, with --campaign,
h200x4-2026-11-27-tune-strategies): each search strategy's pick per
problem, judged with the same run's exhaustive times, and what it cost
(points' wall time from timing.wall_ms, timed iterations, point-iterations).
With --plot FILE: cost against the worst pick per strategy run (PNG)."""
import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

from campaign import open_text, results_dir

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tuning_report import cost as round_cost, picks, signature, validated  # noqa: E402


def cost(records):
    return round_cost({0: records})

CAMPAIGN = "h200x2-2026-11-27-tune-strategies"
NAME = re.compile(r"(run\d)-([a-z]+)-([0-9a-f]+)-round(\d)-r(\d)\.jsonl\.gz")


def load(path):
    with open_text(path) as f:
        return [json.loads(line) for line in f]


def problem_label(sig):
    p = json.loads(sig)
    return f'{p["size"][0]}^3 {p["precision"]} {p["direction"]}'


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--plot", help="write the cost / pick-quality figure here (PNG)")
    ap.add_argument("--campaign", default=CAMPAIGN, help=f"the results folder (default {CAMPAIGN})")
    args = ap.parse_args()
    runs = defaultdict(lambda: defaultdict(dict))  # run -> strategy -> round -> records
    for path in sorted(results_dir(args.campaign).glob("*.jsonl.gz")):
        m = NAME.fullmatch(path.name)
        if m:
            runs[m[1]][m[2]][int(m[4])] = load(path)
    points = []
    for run in sorted(runs):
        ex = runs[run]["exhaustive"][0]
        t_ex = {(signature(r), r["key"]): r["timing"]["total"]["median"] for r in ex if validated(r)}
        best = picks({0: ex})
        ex_wall, ex_timed, ex_its = cost(ex)
        print(f"\n{run}: exhaustive {len(ex)} points, {sum(1 for r in ex if validated(r))} validated ok; "
              f"point wall {ex_wall:.1f} s, timed {ex_timed:.1f} s, {ex_its:.0f} point-iterations")
        for strategy in sorted(s for s in runs[run] if s != "exhaustive"):
            rounds = runs[run][strategy]
            everything = [r for k in sorted(rounds) for r in rounds[k]]
            wall, timed, its = cost(everything)
            chosen = picks(rounds)
            print(f"  {strategy}: {len(rounds)} rounds, {len(everything)} points; point wall {100 * wall / ex_wall:.1f}%, "
                  f"timed {100 * timed / ex_timed:.1f}%, point-iterations {100 * its / ex_its:.1f}% of exhaustive")
            print(f"    {'problem':24} {'exhaustive best':48} {'ms':>8}  {'pick':48} {'pick/best':>9}")
            ratios = []
            for sig in sorted(best, key=problem_label):
                b_ms, b_key = best[sig]
                p = chosen.get(sig)
                ratio = t_ex.get((sig, p[1]), float("nan")) / b_ms if p else float("nan")
                ratios.append(ratio)
                print(f"    {problem_label(sig):24} {b_key[5:53]:48} {b_ms:8.3f}  {(p[1][5:53] if p else '-'):48} {ratio:9.3f}")
            within5 = sum(r <= 1.05 for r in ratios)
            print(f"    within 5%: {within5} of {len(ratios)}; mean {sum(ratios) / len(ratios):.3f}, worst {max(ratios):.3f}")
            points.append((f"{run} {strategy}", 100 * wall / ex_wall, 100 * timed / ex_timed, max(ratios)))
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 4.2))
        for label, wall, timed, worst in points:
            colour = "tab:blue" if "screen" in label else "tab:orange"
            ax.plot([timed, wall], [worst, worst], color=colour, lw=1)
            ax.scatter([timed], [worst], color=colour, marker="o")
            ax.scatter([wall], [worst], color=colour, marker="s")
            ax.annotate(label, (wall, worst), textcoords="offset points", xytext=(4, 3), fontsize=8)
        ax.axvline(25, color="grey", ls=":", lw=1)
        ax.axhline(1.05, color="grey", ls=":", lw=1)
        ax.scatter([100], [1.0], color="black", marker="*", s=80, label="exhaustive (reference)")
        ax.set_xlabel("cost, % of exhaustive (circle: timed iterations; square: points' wall time)")
        ax.set_ylabel("worst pick ÷ exhaustive best")
        ax.set_xlim(0, 105)
        ranks = {m[5] for m in (NAME.fullmatch(p.name) for p in results_dir(args.campaign).glob("*.gz")) if m}
        ax.set_title(f"fftune tune at {'/'.join(sorted(ranks))} ranks ({args.campaign.split('-')[0]}): fft3d 512³ and 1024³")
        ax.legend(loc="upper right", fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)


if __name__ == "__main__":
    main()
