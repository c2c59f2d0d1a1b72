"""The krylov family's section of `fftune report` (plotting/report.py loads it):
time per iteration per configuration (bars at one size, each with its floor:
the bytes an iteration must move ÷ the copy rate its record measured; lines
over the rows at several sizes, with the lowest floor dotted), the library
reference (cusparse_csr) grey; a table of each problem's configurations as
ratios to the reference and to the floor."""
from collections import defaultdict

from report import bar_figure, best_by, lines_figure, num, save


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


def grid(r):
    """The grid as a label: n³ for a cube, else N1×N2×N3."""
    n = r["problem"]["size"]
    return f"{n[0]}³" if n[0] == n[1] == n[2] else "×".join(str(v) for v in n)


def section(records, out, every_record=None, hbm_gbps=None, link_gbps=None, probes=()):
    figures, md = [], ["## Time per iteration", ""]
    groups = defaultdict(list)
    for r in records:
        p = r["problem"]
        groups[(p["ranks"], p["operator"], r["config"]["solver"], p["precision"], p["iterations"][0])].append(r)
    for (ranks, op, solver, precision, its), recs in sorted(groups.items()):
        best = best_by(recs, lambda r: (r["key"], rows(r)))
        label = {rows(r): grid(r) for r in recs}  # grids of equal rows share a point
        refs = {k for k, _ in best if "/cusparse_csr/" in f"/{k}"}
        where = f"krylov {solver} on {op}, {precision}, {ranks} rank{'s' if ranks > 1 else ''}, {its} iterations per step"
        unit = "µs per iteration (median, 99% CI)"
        ns = sorted({n for _, n in best})
        if len(ns) == 1:
            entries = [(k, per_iteration(r)[0], per_iteration(r)[1:]) for (k, _), r in best.items()]
            labels = {k: num(per_iteration(r)[0]) + (f" (floor {num(floor_us(r))})" if floor_us(r) else "") for (k, _), r in best.items()}
            fig, series = bar_figure(entries, f"{where}, {label[ns[0]]}: which configuration is fastest?",
                                     unit + "; floor: bytes ÷ copy rate", references=refs, labels=labels)
        else:
            curves, floor = defaultdict(dict), {}
            for (k, n), r in best.items():
                curves[k][n] = per_iteration(r)
                if floor_us(r):  # the lowest floor of any configuration: the bound for them all
                    floor[n] = min(floor.get(n, floor_us(r)), floor_us(r))
            fig, series = lines_figure(curves, {n: label[n] for n in ns},
                                       f"{where}: which configuration is fastest at each size?", unit, "rows (N1 N2 N3)",
                                       references=refs, extra={"floor: fewest bytes ÷ copy rate": floor} if floor else None)
        name = f"krylov_{solver}_{op}_r{ranks}"
        figures.append((name, save(fig, out, name), series))
        # The table: each configuration of each size, against the reference and its floor.
        md += [f"### {solver} on {op}, {precision}, {ranks} ranks", "",
               "| grid | configuration | µs/iteration (99% CI) | reference ÷ this | floor µs | floor ÷ this |", "|---|---|---|---|---|---|"]
        for n in sorted({n for _, n in best}):
            here = {k: r for (k, nn), r in best.items() if nn == n}
            ref = next((r for k, r in here.items() if "/cusparse_csr/" in f"/{k}"), None)
            for k, r in sorted(here.items(), key=lambda kv: per_iteration(kv[1])[0]):
                m, lo, hi = per_iteration(r)
                f = floor_us(r)
                md.append(f"| {label[n]} | `{k}` | {m:.1f} ({lo:.1f}–{hi:.1f}) | "
                          + (f"{per_iteration(ref)[0] / m:.2f}×" if ref else "") + " | "
                          + (f"{f:.1f} | {f / m:.2f}" if f else " | ") + " |")
        md.append("")
    return md, figures
