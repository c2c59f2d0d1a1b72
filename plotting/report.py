#!/usr/bin/env python3
"""fftune report: figures and a Markdown page from result records.

    python3 plotting/report.py --out DIR (--db tuning.sqlite | RESULTS.jsonl...) [--machine FINGERPRINT]

Reads the records of results/README.md (from JSON-lines files, or the
record_json column of a tuning database opened read-only) and writes PNG and
SVG figures plus report.md linking them, one section per problem family: the
family's own (families/KIND/report.py: section()) or a generic one (time
against work per configuration, winners). Only validated ok records count,
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


def save(fig, out, name):
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
        return ([a["name"] for a in d["problem_axes"] if a["role"] == "size"],
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
    label = lambda p: " ".join("x".join(str(n) for n in p[f]) for f in sizes)
    figures = []
    groups = defaultdict(list)
    for r in records:
        groups[(r["problem"]["ranks"],) + tuple(str(r["problem"].get(c)) for c in cats)].append(r)
    for key, recs in sorted(groups.items()):
        best = best_by(recs, lambda r: (r["key"], json.dumps(r["problem"].get(sizes[0]) if sizes else 0)))
        fig, ax = plt.subplots(figsize=(8, 5))
        series = sorted({k for k, _ in best})
        for k in series:
            pts = sorted((work(r["problem"], sizes), r["timing"]["total"]) for (kk, _), r in best.items() if kk == k)
            ax.errorbar([w for w, _ in pts], [t["median"] for _, t in pts],
                        yerr=[[t["median"] - t["ci99"][0] for _, t in pts], [t["ci99"][1] - t["median"] for _, t in pts]],
                        marker="o", capsize=2, label=k)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("work (" + "·".join(sizes) + ")" if sizes else "problem")
        ax.set_ylabel("median time per step [ms], 99% CI")
        what = ", ".join(f"{c} {v}" for c, v in zip(cats, key[1:]))
        ax.set_title(f"{kind} — {key[0]} ranks" + (f", {what}" if what else ""))
        ax.legend(fontsize=7)
        ax.grid(True, which="both", alpha=0.3)
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
