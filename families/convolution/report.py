"""The convolution family's section of `fftune report` (plotting/report.py
loads it): for each problem (grid, kernel, input, ranks), one bar per
configuration (exact's fastest method, each octree sampling) of its time,
fastest on top, beside its relative L2 error against exact; a table of the
octree samplings' error, speed-up over exact and bytes sent ÷ exact's."""
from collections import defaultdict

from report import bars, best_by, dims_label, plt, save, wrap


ROUNDOFF = 1e-12  # errors below this are double round-off (exact, full sampling): 0 in effect


def zero_floor(errors):
    """Where an error below ROUNDOFF is drawn on a log axis: a decade below the
    smallest error above it (1e-3 when none is)."""
    real = [v for v in errors if v >= ROUNDOFF]
    return min(real) / 10 if real else 1e-3


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
        groups[(tuple(p["size"]), p["kernel"], p["input"], p["ranks"])].append(r)
    for (size, kernel, inp, ranks), recs in sorted(groups.items()):
        grid = dims_label(size)  # 16³, or 40x24x56
        best = best_by(recs, lambda r: r["key"])
        exact = [r for k, r in best.items() if k.startswith("exact/")]
        octree = sorted(((k, r) for k, r in best.items() if k.startswith("octree/")), key=lambda kv: kv[0])
        if not exact or not octree:
            continue
        e = min(exact, key=lambda r: r["timing"]["total"]["median"])
        te, se = e["timing"]["total"]["median"], sent(e) or 0
        if not se:  # one rank: nothing is exchanged, octree is exact
            md += [f"### {grid}, {kernel}, {inp}, {ranks} rank: no exchange (octree exact, exact `{e['key']}` {te:.3g} ms)", ""]
            continue
        md += [f"### {grid}, {kernel}, {inp}, {ranks} ranks (exact: `{e['key']}`, {te:.3g} ms, {se} bytes sent)", "",
               "| configuration | relative L2 error | speed-up over exact | bytes sent ÷ exact's |", "|---|---|---|---|"]
        for k, r in octree:
            err, t, s = error_of(r), r["timing"]["total"]["median"], sent(r) or 0
            md.append(f"| `{k}` | {err:.3g} | {te / t:.2f}× | {s / se:.3f} |")
        md.append("")
        # Time and the error it costs, side by side on the same rows: exact's fastest method beside the octree samplings.
        shown = [e] + [r for _, r in octree]
        rows = len(shown) + sum(wrap(r["key"]).count("\n") for r in shown)
        fig, (a1, a2) = plt.subplots(1, 2, sharey=True, figsize=(10, 1.6 + 0.3 * rows), gridspec_kw=dict(width_ratios=(3, 2)))
        order = bars(a1, [(r["key"], r["timing"]["total"]["median"], r["timing"]["total"]["ci99"]) for r in shown],
                     "median time per convolution [ms], 99% CI")
        errs = {r["key"]: error_of(r) or 0 for r in shown}
        # Round-off (exact itself, full sampling: 0 to 1e-16) is drawn one
        # decade below the smallest real error and written as it is, so the
        # axis spans the errors that differ, not 15 decades down to 1e-17.
        floor = zero_floor(errs.values())
        bars(a2, [(k, max(v, floor), None) for k, v in errs.items()],
             f"relative L2 error vs exact (round-off < {ROUNDOFF:.0e} at left)",
             order=order, highlight=False, labels={k: "0" if v == 0 else f"{v:.2g}" for k, v in errs.items()})
        a2.set_xscale("log")
        a2.set_xlim(floor / 3, max(list(errs.values()) + [floor]) * 30)
        a2.tick_params(axis="y", labelleft=False)
        fig.suptitle(f"convolution {grid} {kernel} {inp}, {ranks} ranks: which configuration is fastest, and at what error?",
                     fontsize=10)
        name = f"convolution_{grid.replace('³', '')}_{kernel}_{inp}_r{ranks}"
        figures.append((name, save(fig, out, name), [k for k, _ in octree]))
    return md, figures
