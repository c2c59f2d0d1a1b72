"""The krylov family's section of `fftune report` (plotting/report.py loads it):
time per iteration against the rows per configuration, with the library
reference (cusparse_csr) drawn dashed and each configuration's floor (the bytes
an iteration must move ÷ the copy rate its record measured) dotted; a table of
each problem's configurations as ratios to the reference and to the floor."""
import json
from collections import defaultdict

from report import best_by, plt, save


def per_iteration(r):
    """(median, low, high) µs per iteration of a record."""
    it = r["problem"]["iterations"][0]
    t = r["timing"]["total"]
    return tuple(1e3 * v / it for v in (t["median"], t["ci99"][0], t["ci99"][1]))


def floor_us(r):
    """Bytes of one iteration ÷ the record's measured copy rate, µs; None without one."""
    gbps = (r.get("krylov") or {}).get("copy_GBps")
    traffic = r.get("traffic") or {}
    if not gbps or not traffic:
        return None
    per_step = sum(t.get("device_bytes", 0) for t in traffic.values())
    return per_step / r["problem"]["iterations"][0] / (gbps * 1e3)


def rows(r):
    n = r["problem"]["size"]
    return n[0] * n[1] * n[2]


def section(records, out, every_record=None, hbm_gbps=None, link_gbps=None, probes=()):
    figures, md = [], ["## Time per iteration", ""]
    groups = defaultdict(list)
    for r in records:
        p = r["problem"]
        groups[(p["ranks"], p["operator"], r["config"]["solver"], p["precision"], p["iterations"][0])].append(r)
    for (ranks, op, solver, precision, its), recs in sorted(groups.items()):
        best = best_by(recs, lambda r: (r["key"], rows(r)))
        fig, ax = plt.subplots(figsize=(8, 5))
        for i, key in enumerate(sorted({k for k, _ in best})):
            pts = sorted((n, r) for (k, n), r in best.items() if k == key)
            t = [per_iteration(r) for _, r in pts]
            style = dict(linestyle="--", color="black") if "/cusparse_csr/" in f"/{key}" else {}
            line = ax.errorbar([n for n, _ in pts], [m for m, _, _ in t], yerr=[[m - lo for m, lo, _ in t], [hi - m for m, _, hi in t]],
                               marker="o", capsize=2, label=key, **style)
            floors = [(n, floor_us(r)) for n, r in pts if floor_us(r)]
            if floors:
                ax.plot([n for n, _ in floors], [f for _, f in floors], linestyle=":", color=line[0].get_color(), alpha=0.6)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("rows (n³)")
        ax.set_ylabel("µs per iteration (median, 99% CI); dotted: bytes ÷ copy rate")
        ax.set_title(f"krylov {solver} on {op}, {precision}, {ranks} ranks, {its} iterations per step")
        ax.legend(fontsize=7)
        ax.grid(True, which="both", alpha=0.3)
        name = f"krylov_{solver}_{op}_r{ranks}"
        figures.append((name, save(fig, out, name), sorted({k for k, _ in best})))
        # The table: each configuration of each size, against the reference and its floor.
        md += [f"### {solver} on {op}, {precision}, {ranks} ranks", "",
               "| n³ | configuration | µs/iteration (99% CI) | reference ÷ this | floor µs | floor ÷ this |", "|---|---|---|---|---|---|"]
        for n in sorted({n for _, n in best}):
            here = {k: r for (k, nn), r in best.items() if nn == n}
            ref = next((r for k, r in here.items() if "/cusparse_csr/" in f"/{k}"), None)
            for k, r in sorted(here.items(), key=lambda kv: per_iteration(kv[1])[0]):
                m, lo, hi = per_iteration(r)
                f = floor_us(r)
                md.append(f"| {round(n ** (1 / 3))}³ | `{k}` | {m:.1f} ({lo:.1f}–{hi:.1f}) | "
                          + (f"{per_iteration(ref)[0] / m:.2f}×" if ref else "") + " | "
                          + (f"{f:.1f} | {f / m:.2f}" if f else " | ") + " |")
        md.append("")
    return md, figures
