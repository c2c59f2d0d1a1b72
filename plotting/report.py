#!/usr/bin/env python3
"""fftune report: figures and a Markdown page from result records.

    python3 plotting/report.py --out DIR (--db tuning.sqlite | RESULTS.jsonl...) [--machine FINGERPRINT]

Reads the records of results/README.md (from JSON-lines files, or the
record_json column of a tuning database opened read-only) and writes PNG and
SVG figures plus report.md linking them, one section per problem family: the
family's own (families/KIND/report.py: section()) or a generic one (time per
configuration: bars at one size, lines over size; winners). Every figure keeps
the rules above bar_figure and lines_figure. Only validated ok records count,
except where a family's section reads more (fft3d's device-memory table also
reads unvalidated points and points skipped because they would not fit).
Exit status 2 with a message (no traceback) when there is nothing to plot.
"""
import argparse
import gzip
import importlib.util
import json
import math
import os
import re
import sqlite3
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402


class ReportError(Exception):
    pass


def is_probe(r):
    """A `fftune probe` record (schema fftune.probe/1), not a plan's result."""
    return r.get("kind") == "probe" or str(r.get("schema", "")).startswith("fftune.probe/")


def load_records(paths, db, machine):
    """The validated ok result records (of one machine, when given); not probe records (main passes those on)."""
    records = read_records(paths, db)
    ok = [r for r in records if not is_probe(r) and r.get("status") == "ok" and (r.get("validation") or {}).get("passed") is True]
    if machine:
        ok = [r for r in ok if r["machine"].get("fingerprint") == machine]
    if not ok:
        raise ReportError(f"no validated ok records among {len(records)} read" + (f" for machine {machine}" if machine else ""))
    return ok


def read_records(paths, db):
    """Every record, whatever its status."""
    records = []
    if db:
        if not os.path.exists(db):
            raise ReportError(f"{db}: no tuning database here")
        try:
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            rows = con.execute("SELECT record_json FROM records").fetchall()
        except sqlite3.DatabaseError as e:
            raise ReportError(f"{db}: not a usable fftune database: {e}")
        records += [json.loads(r[0]) for r in rows]
    for path in paths:
        try:
            # Committed record files may be gzip-compressed (results/README.md).
            with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
                for line in f:
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        records.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass  # a torn last line of a job that died
        except OSError as e:
            raise ReportError(f"{path}: {e.strerror}")
    return records


def best_by(records, keyf):
    best = {}
    for r in records:
        k = keyf(r)
        if k not in best or r["timing"]["total"]["median"] < best[k]["timing"]["total"]["median"]:
            best[k] = r
    return best


# The figure rules (issue 43), written once for every family: one figure type
# per question. One problem size: horizontal bars, one per configuration,
# fastest on top, each value written, the best highlighted (bar_figure). Many
# sizes: lines over size with ticks at the measured sizes, the fastest TOP
# configurations plus the references (lines_figure). Each line has its own
# (marker, line style) and the legend sits right of the axes, off the data.
MARKERS = "osD^vP*X<>h"  # 11 markers against 10 colours: neighbours differ in both
LINESTYLES = ("-", "--", "-.", ":")  # a new style every 11 lines: 44 distinct pairs
COLORS = plt.get_cmap("tab10").colors
TOP = 10
KEEP = None  # a dict the tests set: save() keeps each Figure there by name


def style(i):
    return dict(marker=MARKERS[i % len(MARKERS)], linestyle=LINESTYLES[i // len(MARKERS) % len(LINESTYLES)],
                color=COLORS[i % len(COLORS)])


def dims_label(dims):
    """128³ for a cube, 24x12x10 otherwise, 1000 for one length."""
    return f"{dims[0]}³" if len(dims) == 3 and len(set(dims)) == 1 else "x".join(str(n) for n in dims)


def wrap(name, width=44):
    """A long configuration name broken after a '/', whole: a tick label to read."""
    lines = [""]
    for part in re.split(r"(?<=/)", name):
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return "\n".join(lines)


def num(v):
    """A value beside a bar: 3 digits, no exponent for the thousands (1040, not 1.04e+03)."""
    return f"{v:.0f}" if 1e3 <= abs(v) < 1e6 else f"{v:.3g}"


def legend_outside(ax, **kw):
    """The legend right of the axes, where it covers no data."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0, fontsize=7, **kw)


def log_if_wide(ax, values, axis="y", span=10):
    """Log scale where the values span more than `span` (at least a decade: a decade tick is in view)."""
    values = [v for v in values if v and v > 0]
    if values and max(values) > span * min(values):
        (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
        a = ax.yaxis if axis == "y" else ax.xaxis
        a.set_major_locator(matplotlib.ticker.LogLocator(subs=(1, 2, 5)))  # plain numbers at 1, 2, 5 per decade
        a.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        a.set_minor_formatter(matplotlib.ticker.NullFormatter())
        return True
    return False


def bars(ax, entries, xlabel, references=(), labels=None, order=None, highlight=True):
    """entries: (name, value, (lo, hi) or None); one horizontal bar each, sorted
    by value (or in `order`), the first on top; the fastest non-reference bar
    highlighted, references grey and hatched; labels: {name: the text beside
    its bar} (default: the value). Returns the names top to bottom."""
    by = {e[0]: e for e in entries}
    names = order or [e[0] for e in sorted(entries, key=lambda e: e[1])]
    vals = [by[n][1] for n in names]
    hi = [max(by[n][1], by[n][2][1]) if by[n][2] else by[n][1] for n in names]
    best = next((n for n in names if n not in references), None) if highlight else None
    err = [[max(0, by[n][1] - by[n][2][0]) if by[n][2] else 0 for n in names], [h - v for h, v in zip(hi, vals)]]
    colors = ["0.6" if n in references else "tab:orange" if n == best else "tab:blue" for n in names]
    b = ax.barh(range(len(names)), vals, xerr=err if any(map(any, err)) else None, capsize=2, color=colors, error_kw=dict(lw=0.8))
    for patch, n in zip(b, names):
        if n in references:
            patch.set_hatch("//")
    ax.set_yticks(range(len(names)), [wrap(n) for n in names], fontsize=7)
    for tick, n in zip(ax.get_yticklabels(), names):
        if n == best:
            tick.set_fontweight("bold")
    if not ax.yaxis_inverted():  # fastest on top (once: axes may share y)
        ax.invert_yaxis()
    for y, (n, x) in enumerate(zip(names, hi)):
        ax.annotate((labels or {}).get(n, num(by[n][1])), (x, y), xytext=(4, 0), textcoords="offset points", va="center", fontsize=7)  # past the CI
    if log_if_wide(ax, vals, "x", span=100):  # bar lengths compare on a linear axis, unless the short ones would vanish
        ax.set_xlim(min(vals) / 2, max(hi) * 6)
    else:
        ax.set_xlim(0, max(hi) * 1.3 if hi and max(hi) > 0 else 1)  # room for the labels
    ax.set_xlabel(xlabel)
    ax.grid(True, axis="x", alpha=0.3)
    return names


def bar_figure(entries, title, xlabel, references=(), labels=None):
    """One problem size: `bars` in a figure as tall as its names need."""
    rows = sum(wrap(e[0]).count("\n") + 1 for e in entries)
    fig, ax = plt.subplots(figsize=(9, 1.4 + 0.22 * rows + 0.08 * len(entries)))
    order = bars(ax, entries, xlabel, references, labels)
    ax.set_title(title, fontsize=10)
    return fig, order


def size_axis(sizes, work):
    """{size: x} for lines over size: its work, or where two sizes do the same
    work (256x128x128, 128x256x128) its place in order of work (a categorical axis)."""
    ordered = sorted(sizes, key=lambda s: (work(s), s))
    if len({work(s) for s in ordered}) == len(ordered):
        return {s: work(s) for s in ordered}
    return {s: i for i, s in enumerate(ordered)}


def lines_figure(series, sizes, title, ylabel, xlabel, references=(), extra=None, top=TOP):
    """Many problem sizes: series {name: {x: (median, lo, hi)}} (lo, hi may be
    None) over x, the work of a size, ticks at the measured x labelled
    sizes[x]; only the `top` fastest configurations (mean time ÷ the fastest
    at each size) and every reference; extra {label: {x: y}}: grey dotted
    lines (floors). Returns (fig, names drawn)."""
    fastest = {x: min(s[x][0] for n, s in series.items() if x in s and n not in references) for x in sizes
               if any(x in s for n, s in series.items() if n not in references)}
    score = lambda n: sum(series[n][x][0] / fastest[x] for x in series[n] if x in fastest) / max(1, len(series[n]))
    contenders = sorted((n for n in series if n not in references), key=lambda n: (score(n), n))
    shown = contenders[:top] + sorted(n for n in series if n in references)
    fig, ax = plt.subplots(figsize=(10, 5))
    for i, n in enumerate(shown):
        pts = sorted(series[n].items())
        m = [p[0] for _, p in pts]
        err = [[p[0] - p[1] if p[1] is not None else 0 for _, p in pts], [p[2] - p[0] if p[2] is not None else 0 for _, p in pts]]
        st = style(i)
        if n in references:
            st["color"] = "black"
        ax.errorbar([x for x, _ in pts], m, yerr=err if any(map(any, err)) else None, capsize=2, label=n, **st)
    for label, ys in (extra or {}).items():
        pts = sorted(ys.items())
        ax.plot([x for x, _ in pts], [y for _, y in pts], color="0.5", linestyle=":", label=label)
    xs = sorted(sizes)
    if xs[0] > 0 and xs[-1] >= 4 * xs[0]:  # sizes grow by doubling: even steps on a log axis
        ax.set_xscale("log", base=2)
    ax.set_xticks(xs, [sizes[x] for x in xs], fontsize=8, **(dict(rotation=30, ha="right") if len(xs) > 5 else {}))
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())  # only the measured sizes are labelled
    log_if_wide(ax, [p[0] for n in shown for p in series[n].values()] + [y for ys in (extra or {}).values() for y in ys.values()])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    dropped = len(contenders) - min(top, len(contenders))
    legend_outside(ax, title=(f"fastest {top} of {len(contenders)}, " if dropped else "") + "fastest first", title_fontsize=7)
    return fig, shown


def save(fig, out, name):
    if KEEP is not None:
        KEEP[name] = fig
    paths = []
    for ext in ("png", "svg"):
        path = os.path.join(out, f"{name}.{ext}")
        fig.savefig(path, dpi=110, bbox_inches="tight")
        paths.append(path)
    plt.close(fig)
    return paths


FAMILIES_DIR = os.environ.get("FFTUNE_FAMILIES_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "families"))


def family_module(kind):
    """A family's own report section: families/KIND/report.py defining
    section(records, out, every_record, hbm_gbps, link_gbps, probes) -> (Markdown
    lines, figures); None when the family has none (the generic section serves)."""
    path = os.path.join(FAMILIES_DIR, kind, "report.py")
    if not re.fullmatch(r"[a-z0-9_]+", kind) or not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location(f"fftune_family_{kind}_report", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def axes_of(kind, records, descriptions):
    """(size fields, category fields) of a family's problems: from its
    description (fftune families --json), else from the records (lists of
    numbers are sizes)."""
    d = descriptions.get(kind)
    if d:
        # A count (krylov's iterations) scales the work as a size does.
        return ([a["name"] for a in d["problem_axes"] if a["role"] in ("size", "count")],
                [a["name"] for a in d["problem_axes"] if a["role"] == "category"])
    fields = sorted({k for r in records for k in r["problem"] if k not in ("kind", "ranks", "ranks_per_node")})
    sizes = [k for k in fields if all(isinstance(r["problem"].get(k), list) for r in records)]
    return sizes, [k for k in fields if k not in sizes]


def work(problem, sizes):
    return math.prod(n for f in sizes for n in problem[f])


def verdict(a, b):
    """Best a against runner-up b from their 99% CIs."""
    if a["ci99"][1] < b["ci99"][0]:
        return "faster"
    if b["median"] <= a["ci99"][1] and a["median"] >= b["ci99"][0]:
        return "same within noise"
    return "ambiguous"


def generic_section(kind, records, out, descriptions):
    """Any family: time against work per configuration for each rank count and
    categories, and the winner of each problem."""
    sizes, cats = axes_of(kind, records, descriptions)
    label = lambda p: " ".join(dims_label(p[f]) for f in sizes) or "one size"
    figures = []
    groups = defaultdict(list)
    for r in records:
        groups[(r["problem"]["ranks"],) + tuple(str(r["problem"].get(c)) for c in cats)].append(r)
    for key, recs in sorted(groups.items()):
        best = best_by(recs, lambda r: (r["key"], label(r["problem"])))
        what = ", ".join(f"{c} {v}" for c, v in zip(cats, key[1:]))
        where = f"{key[0]} ranks" + (f", {what}" if what else "")
        unit = "median time per step [ms], 99% CI"
        works = {label(r["problem"]): work(r["problem"], sizes) for r in recs}
        xs = size_axis(works, works.get)  # size label -> x
        if len(xs) == 1:
            entries = [(k, r["timing"]["total"]["median"], r["timing"]["total"]["ci99"]) for (k, _), r in best.items()]
            fig, series = bar_figure(entries, f"{kind} {next(iter(xs))}, {where}: which configuration is fastest?", unit)
        else:
            curves = defaultdict(dict)
            for (k, l), r in best.items():
                t = r["timing"]["total"]
                curves[k][xs[l]] = (t["median"], *t["ci99"])
            fig, series = lines_figure(curves, {x: l for l, x in xs.items()},
                                       f"{kind}, {where}: which configuration is fastest at each size?", unit,
                                       f"problem size ({', '.join(sizes)})" if sizes else "problem")
        name = f"{kind}_total_r{key[0]}" + "".join(f"_{v}" for v in key[1:])
        figures.append((name, save(fig, out, name), series))
    by_problem = defaultdict(dict)
    for r in records:
        p = r["problem"]
        k = (p["ranks"], json.dumps({f: p.get(f) for f in sizes + cats}, sort_keys=True))
        if r["key"] not in by_problem[k] or r["timing"]["total"]["median"] < by_problem[k][r["key"]]["timing"]["total"]["median"]:
            by_problem[k][r["key"]] = r
    md = ["| ranks | " + " | ".join(sizes + cats) + " | best | ms | runner-up | margin | verdict | candidates |",
          "|---|" + "---|" * (len(sizes) + len(cats) + 6)]
    for k in sorted(by_problem, key=lambda k: (k[0], work(json.loads(k[1]), sizes), k[1])):
        ranked = sorted(by_problem[k].values(), key=lambda r: r["timing"]["total"]["median"])
        p, a = ranked[0]["problem"], ranked[0]["timing"]["total"]
        runner, margin, v = "", "", "only one"
        if len(ranked) > 1:
            b = ranked[1]["timing"]["total"]
            runner, margin, v = ranked[1]["key"], f'{100 * (b["median"] / a["median"] - 1):.1f}%', verdict(a, b)
        cells = ["x".join(str(n) for n in p[f]) for f in sizes] + [str(p.get(c)) for c in cats]
        md.append(f"| {k[0]} | " + " | ".join(cells) + f" | `{ranked[0]['key']}` | {a['median']:.4g} | `{runner}` | {margin} | {v} | {len(ranked)} |")
    return ["## Winners", ""] + md, figures


def report(records, out, title, every_record=None, hbm_gbps=None, link_gbps=None, probes=(), descriptions=None):
    """One section per problem family (its own, families/KIND/report.py, or the
    generic one); returns {family: figures}."""
    os.makedirs(out, exist_ok=True)
    descriptions = descriptions or {}
    kind_of = lambda r: (r.get("problem") or {}).get("kind", "fft3d")
    machines = sorted({(r["machine"].get("fingerprint"), r["machine"].get("hostname", ""), r["machine"].get("cpu_model", ""),
                        (r["provenance"].get("fft_libraries") or {}).get("gpu", "")) for r in records})
    shas = sorted({r["provenance"].get("git_sha", "?") for r in records})
    stamps = sorted(r["provenance"].get("timestamp", "") for r in records)
    md = [f"# {title}", "",
          f"{len(records)} validated records, {stamps[0]} … {stamps[-1]}; fftune commits: {', '.join(shas)}.", ""]
    for fp, host, cpu, gpu in machines:
        md.append(f"- machine `{fp}`: {host}, {cpu}" + (f", {gpu}" if gpu else ""))
    md += ["", "Times are medians of per-iteration maxima over ranks; intervals are 99% CIs of the median."]
    kinds = sorted({kind_of(r) for r in records})
    all_figures = {}
    for kind in kinds:
        recs = [r for r in records if kind_of(r) == kind]
        every = [r for r in (every_record or records) if kind_of(r) == kind]
        module = family_module(kind)
        if module:
            body, figures = module.section(recs, out, every, hbm_gbps, link_gbps, probes)
        else:
            body, figures = generic_section(kind, recs, out, descriptions)
        summary = (descriptions.get(kind) or {}).get("summary")
        md += ["", f"## Problem family {kind}" + (f": {summary}" if summary else ""), ""]
        # A family's sections are one level down.
        md += ["#" + line if line.startswith("## ") else line for line in body]
        md += ["", f"### Figures ({kind})", ""]
        for name, paths, series in figures:
            md += [f"#### {name}", "", f"![{name}]({os.path.basename(paths[0])}) ([svg]({os.path.basename(paths[1])}))", ""]
        all_figures[kind] = figures
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    return all_figures


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="*", help="JSON-lines result files")
    ap.add_argument("--db", help="tuning database (read-only)")
    ap.add_argument("--machine", help="only this machine fingerprint")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--title", default="fftune report")
    ap.add_argument("--families", help="the problem families as `fftune families --json` describes them (a file)")
    ap.add_argument("--hbm-gbps", type=float, help="device memory bandwidth for the floors, GB/s (default: per machine, the fastest 1-rank self copy of at least 1 GiB among the records)")
    ap.add_argument("--link-gbps", type=float, help="bandwidth between ranks for the floors, GB/s per direction (default: per machine and backend, the fastest exchange probe among the inputs that is not staged through the host)")
    args = ap.parse_args(argv)
    if not args.results and not args.db:
        ap.error("give result files or --db")
    try:
        for name in ("hbm_gbps", "link_gbps"):  # bad input fails before any file is read
            if getattr(args, name) is not None and getattr(args, name) <= 0:
                raise ReportError(f"--{name.replace('_', '-')} must be a positive bandwidth in GB/s, not {getattr(args, name)}")
        records = load_records(args.results, args.db, args.machine)
        every = [r for r in read_records(args.results, args.db)
                 if not args.machine or r.get("machine", {}).get("fingerprint") == args.machine]
        probes = [r for r in every if is_probe(r)]
        every = [r for r in every if not is_probe(r)]
        descriptions = {}
        if args.families:
            with open(args.families) as f:
                descriptions = {d["name"]: d for d in json.load(f)}
        figures = report(records, args.out, args.title, every, args.hbm_gbps, args.link_gbps, probes, descriptions)
    except ReportError as e:
        print(f"fftune report: {e}", file=sys.stderr)
        return 2
    total = sum(len(f) for f in figures.values())
    print(f"{args.out}/report.md: {total} figures from {len(records)} records")
    for kind, f in sorted(figures.items()):
        print(f"  {kind}: {len(f)} figures from {sum(1 for r in records if r['problem'].get('kind', 'fft3d') == kind)} records")
    return 0


if __name__ == "__main__":
    sys.exit(main())
