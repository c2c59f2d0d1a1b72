"""results/cpu-2core-vm-2026-11-29-thread-pool-krylov: the krylov family's
CPU kernels (one parallel_for per vector operation) before and after
parallel_for's kept threads (issue 44): CG on poisson7 at 64^3 on fftw,
every format x fusion, 1 and 2 ranks, base 64661d7 against a4b090c,
two runs a side alternating, on this project's 2-core VM.

Prints per point the step's median (timing.total.median, 200 iterations)
of each run and new ÷ base of their medians, then the median ratio per
rank count."""
import re
import statistics

from campaign import matching_records

CAMPAIGN = "cpu-2core-vm-2026-11-29-thread-pool-krylov"
NAME = re.compile(r"run(\d)-(base|new)-cpu_krylov_pool\.jsonl\.gz")


def main():
    runs = {}
    for m, rs in matching_records(CAMPAIGN, NAME):
        runs.setdefault(m.group(2), []).append(rs)
    print("| ranks | format | fusion | base ms (runs) | new ms (runs) | new ÷ base |")
    print("|---|---|---|---|---|---|")
    ratios = {}
    for i, p in enumerate(runs["new"][0]):
        if p["status"] != "ok":
            continue
        b = [rs[i]["timing"]["total"]["median"] for rs in runs["base"]]
        n = [rs[i]["timing"]["total"]["median"] for rs in runs["new"]]
        r = statistics.median(n) / statistics.median(b)
        ranks = p["problem"]["ranks"]
        ratios.setdefault(ranks, []).append(r)
        print(f"| {ranks} | {p['config']['format']} | {p['config']['fusion']} | "
              f"{', '.join(f'{x:.0f}' for x in b)} | {', '.join(f'{x:.0f}' for x in n)} | {r:.3f} |")
    print()
    for ranks, rs in sorted(ratios.items()):
        print(f"{ranks} rank(s): new ÷ base median {statistics.median(rs):.3f} ({min(rs):.3f}-{max(rs):.3f}), "
              f"{len(rs)} points")


if __name__ == "__main__":
    main()
