"""The convolution family's section of `fftune report` (plotting/report.py
loads it): for each problem (size, kernel, input, ranks), the octree
configurations' relative L2 error against the speed-up over exact (exact's
median time ÷ theirs) and against the bytes they send (÷ exact's), one point
per sampling; a table of the same."""
from collections import defaultdict

from report import best_by, plt, save


def error_of(r):
    c = (r.get("validation") or {}).get("checks") or []
    return c[0].get("max_rel_error") if c else None


def sent(r):
    return (r.get("convolution") or {}).get("sent_bytes_max_rank")


def section(records, out, every_record=None, hbm_gbps=None, link_gbps=None, probes=()):
    figures, md = [], ["## Error against speed-up and bytes sent (octree ÷ exact)", ""]
    groups = defaultdict(list)
    for r in records:
        p = r["problem"]
        groups[(p["size"][0], p["kernel"], p["input"], p["ranks"])].append(r)
    for (n, kernel, inp, ranks), recs in sorted(groups.items()):
        best = best_by(recs, lambda r: r["key"])
        exact = [r for k, r in best.items() if k.startswith("exact/")]
        octree = sorted(((k, r) for k, r in best.items() if k.startswith("octree/")), key=lambda kv: kv[0])
        if not exact or not octree:
            continue
        e = min(exact, key=lambda r: r["timing"]["total"]["median"])
        te, se = e["timing"]["total"]["median"], sent(e) or 0
        if not se:  # one rank: nothing is exchanged, octree is exact
            md += [f"### {n}³, {kernel}, {inp}, {ranks} rank: no exchange (octree exact, exact `{e['key']}` {te:.3g} ms)", ""]
            continue
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
        md += [f"### {n}³, {kernel}, {inp}, {ranks} ranks (exact: `{e['key']}`, {te:.3g} ms, {se} bytes sent)", "",
               "| configuration | relative L2 error | speed-up over exact | bytes sent ÷ exact's |", "|---|---|---|---|"]
        for k, r in octree:
            err, t, s = error_of(r), r["timing"]["total"]["median"], sent(r) or 0
            speed, frac = te / t, (s / se if se else float("nan"))
            a1.scatter([speed], [max(err or 0, 1e-17)], label=k)
            a2.scatter([frac], [max(err or 0, 1e-17)], label=k)
            md.append(f"| `{k}` | {err:.3g} | {speed:.2f}× | {frac:.3f} |")
        md.append("")
        for ax, xl in ((a1, "speed-up over exact (median times)"), (a2, "bytes sent per rank ÷ exact's")):
            ax.set_yscale("log")
            ax.set_xlabel(xl)
            ax.set_ylabel("relative L2 error against exact")
            ax.grid(True, which="both", alpha=0.3)
        a1.legend(fontsize=7)
        fig.suptitle(f"convolution {n}³ {kernel} {inp}, {ranks} ranks")
        name = f"convolution_{n}_{kernel}_{inp}_r{ranks}"
        figures.append((name, save(fig, out, name), [k for k, _ in octree]))
    return md, figures
