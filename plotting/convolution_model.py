#!/usr/bin/env python3
"""Cost model of the convolution family's two methods (families/convolution/README.md).

    python3 plotting/convolution_model.py --check RECORDS...            # predicted against measured
    python3 plotting/convolution_model.py --plot OUT.png RECORDS... [PROBES...]

Grid N = Nx×Ny×Nz, padded M = 2N, P ranks owning x-slabs (split_lo of core/base),
g ranks sharing a GPU (ranks_per_node ÷ gpu_count: their device work adds up), times in ms:
  C(M)      = c_fft · |M| log2|M|: a rank's forward + kernel + inverse of the whole padded grid
  T_exact   = κ g C(M)/P + B(P)/β_x        (the engine's slab_2d1d transform, both all-to-alls)
  B(P)      = max_r [x_r (My − y_r) + y_r (Mx − x_r)] · (Mz/2 + 1) · 16 bytes, x_r / y_r rank r's
              planes of Mx / My (the forward and the inverse reshape; = convolution.sent_bytes_max_rank)
  T_octree  = g C(M) + [c_w W + c_s S] + 8 max(S, R)/β_s + c_i I + c_o (L + R)
              (fft, sample, exchange, interpolate, and the step's time outside its phases: fresh host vectors
              over the own slab, L = max_r |slab_r| points, and the R received samples, zero-filled each step)
  S, R      = max over ranks of the samples a rank sends / receives (the ported tile(), per rank pair),
  W = |N|   the window the sampling reads (as built it crosses to the host), I = (P − 1) · max_r |slab_r|
  pruned    local_transform pruned (issue 45, families/convolution/pruned_transform.hpp): the forward's
            z pass on the own x-planes' rows y < Ny, its y pass on the own x-planes (p = (Nx/P)/Mx of them)
            after zeroing the other 1 − p, its x pass on all; the inverse's x pass on all, y on x < Nx, z on
            x < Nx, y < Ny. In passes over the spectrum (C = 3 forward + 1 kernel + 3 inverse):
            C_pruned = C(M) · (1 + p + p/2 + (1 − p)/2 + 1 + 1.75) / 7 (pruned_fraction), the rest as built.
            Fitted on full points only; pruned points are predicted (--check lists them).
Fitted per machine (fingerprint), relative least squares: c_fft on the octree's fft phases (or exact at
1 rank), κ = exact at 1 rank ÷ C(M) (else 1), 1/β_x per exact transport on T_exact − κ g C/P, c_w and c_s
on `sample`, 1/β_s per octree exchange on `exchange`, c_i on `interpolate`, c_o on total − Σ phases.
--check fits on the other sizes of a machine and predicts each size (in-sample where it has only one);
--plot draws octree ÷ exact against P at a fixed N (strong) and a fixed N per GPU (weak scaling), at one
rank per GPU (g = 1); --device-gbps D projects sampling on the device: c_w = c_o = 0, c_s = c_i = 16 B ÷ D
(a sample read and written; a point's read-modify-write per source).
"""
import argparse
import functools
import math
import os
import sys
from collections import defaultdict

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from report import ReportError, is_probe, legend_outside, read_records  # noqa: E402

SCHEMES = {"full": (4, (1,)), "fine": (4, (1, 2, 4)), "coarse": (4, (2, 4, 8))}  # sampling.cpp: cell, rates
DEFAULT_PROBES = os.path.join(HERE, "..", "results", "h200x4-2026-11-26-4gpu-baseline", "probe-46798f8-r4.jsonl.gz")
IB = (("InfiniBand 50 GB/s", 50.0), ("InfiniBand 25 GB/s", 25.0))


# --- sampling.cpp, ported --------------------------------------------------------------------------------
def split_lo(n, p, i):
    base, rem = divmod(n, p)
    return i * base + min(i, rem)


def slab(n, p, r):
    return (split_lo(n[0], p, r), 0, 0), (split_lo(n[0], p, r + 1), n[1], n[2])


def sample_coords(lo, hi, s):
    """lo, lo + s, ... and hi − 1."""
    c = list(range(lo, hi, s))
    return c + [hi - 1] if c and c[-1] != hi - 1 else c


def coord_count(lo, hi, s):
    """len(sample_coords(lo, hi, s)); numpy arrays too."""
    return (hi - lo + s - 1) // s + ((hi - 1 - lo) % s != 0)


def tile(region, source, scheme):
    """[(lo, hi, rate)]: cells of `cell` points tiling `region` from its low corner, clipped at its ends; a cell
    `level` = (planes strictly between it and `source` along x) // cell away is sampled at rates[min(level, last)]."""
    cell, rates = SCHEMES[scheme]
    (r0, r1), (s0, s1) = region, source
    out = []
    for i in range(r0[0], r1[0], cell):
        for j in range(r0[1], r1[1], cell):
            for k in range(r0[2], r1[2], cell):
                lo, hi = (i, j, k), (min(i + cell, r1[0]), min(j + cell, r1[1]), min(k + cell, r1[2]))
                gap = lo[0] - s1[0] if lo[0] >= s1[0] else s0[0] - hi[0] if s0[0] >= hi[0] else 0
                out.append((lo, hi, rates[min(gap // cell, len(rates) - 1)]))
    return out


def sample_count(cells):
    return sum(math.prod(coord_count(lo[a], hi[a], s) for a in range(3)) for lo, hi, s in cells)


@functools.lru_cache(maxsize=None)
def exchange(n, p, scheme):
    """(T, X): T[q, r] = samples rank q sends r, = sample_count(tile(slab r, slab q)); X[q, r] their distinct
    x-planes. Separable: a cell's count is its x, y and z counts' product, the rate set by its x-cell alone."""
    cell, rates = SCHEMES[scheme]
    lo = np.array([split_lo(n[0], p, i) for i in range(p + 1)])
    axis = lambda m, s: coord_count(np.arange(0, m, cell), np.minimum(np.arange(0, m, cell) + cell, m), s).sum()  # noqa: E731
    yz = np.array([axis(n[1], s) * axis(n[2], s) for s in rates])  # a whole y-z layer of cells at rate s
    T, X = np.zeros((p, p)), np.zeros((p, p))
    for r in range(p):
        c0 = np.arange(lo[r], lo[r + 1], cell)[:, None]
        c1 = np.minimum(c0 + cell, lo[r + 1])
        s0, s1 = lo[None, :-1], lo[None, 1:]
        gap = np.where(c0 >= s1, c0 - s1, np.where(s0 >= c1, s0 - c1, 0))
        level = np.minimum(gap // cell, len(rates) - 1)
        cx = coord_count(c0, c1, np.array(rates)[level])
        T[:, r], X[:, r] = (cx * yz[level]).sum(0), cx.sum(0)
        T[r, r] = X[r, r] = 0
    return T, X


def exact_bytes(n, p):
    """B(P): bytes the busiest rank sends over exact's forward and inverse reshapes."""
    m = [2 * a for a in n]
    x = [split_lo(m[0], p, r + 1) - split_lo(m[0], p, r) for r in range(p)]
    y = [split_lo(m[1], p, r + 1) - split_lo(m[1], p, r) for r in range(p)]
    return max(a * (m[1] - b) + b * (m[0] - a) for a, b in zip(x, y)) * (m[2] // 2 + 1) * 16


def octree_bytes(n):
    """Device bytes of one octree rank before its plan (convolution.cpp octree_need)."""
    m = [2 * a for a in n]
    return 16 * math.prod(m) + 40 * m[0] * m[1] * (m[2] // 2 + 1) + 8 * math.prod(n)


# --- geometry of a point and the model -------------------------------------------------------------------
def geometry(n, p, scheme):
    n = tuple(n)
    t, _ = exchange(n, p, scheme)
    m = math.prod(2 * a for a in n)
    planes = max(split_lo(n[0], p, r + 1) - split_lo(n[0], p, r) for r in range(p))
    return {"work": m * math.log2(m), "B": exact_bytes(n, p), "S": t.sum(1).max(), "R": t.sum(0).max(),
            "S0": t[0].sum(), "W": math.prod(n), "L": planes * n[1] * n[2], "I": (p - 1) * planes * n[1] * n[2],
            "pruned": pruned_fraction(planes / (2 * n[0]))}


def pruned_fraction(p):
    """C_pruned / C(M) for local_transform pruned (families/convolution/pruned_transform.hpp), p = the own
    x-planes ÷ Mx. In passes over the spectrum, C = 3 (forward) + 1 (kernel) + 3 (inverse); pruned, the forward
    is 1 + p + p/2 plus zeroing the other 1 − p (a write, half a pass), the kernel 1, the inverse 1 + 1/2 + 1/4."""
    return (1 + p + p / 2 + (1 - p) / 2 + 1 + 1.75) / 7


def predict(par, n, p, g=1, scheme="coarse", beta_x=None, beta_s=None, pruned=False):
    """{exact, octree, fft, sample, exchange, interpolate, other} in ms; β in bytes/ms."""
    G = geometry(n, p, scheme)
    c = g * par["c_fft"] * G["work"]
    out = {"exact": par["kappa"] * c / p + G["B"] / beta_x,
           "fft": c * (G["pruned"] if pruned else 1), "sample": par["c_w"] * G["W"] + par["c_s"] * G["S"],
           "exchange": 8 * max(G["S"], G["R"]) / beta_s, "interpolate": par["c_i"] * G["I"],
           "other": par["c_o"] * (G["L"] + G["R"])}
    out["octree"] = sum(out[k] for k in ("fft", "sample", "exchange", "interpolate", "other"))
    return out


# --- records and the fit ---------------------------------------------------------------------------------
def sharing(r):
    gpus = r["machine"].get("gpu_count") or 0
    return max(1, math.ceil(r["problem"].get("ranks_per_node", r["problem"]["ranks"]) / gpus)) if gpus else 1


def transport(r):
    c = r["config"]
    return c.get("redistribution") or c.get("exchange") or ("mpi" if c["method"] == "octree" else "?")


def host_staged(name):
    return not name.startswith(("nccl", "cuda_ipc"))


def phase(r, name):
    return r["timing"]["phases"][name]["median"]


def points(records):
    """{machine: {(size, P, kernel, input, method, sampling, transport): [records]}}, validated ok ones."""
    out = defaultdict(lambda: defaultdict(list))
    for r in records:
        if is_probe(r) or r.get("status") != "ok" or not (r.get("validation") or {}).get("passed"):
            continue
        p, c = r["problem"], r["config"]
        if p.get("kind") != "convolution":
            continue
        key = (tuple(p["size"]), p["ranks"], p["kernel"], p["input"], c["method"], c.get("sampling", "full"), transport(r),
               c.get("local_transform", "full"))
        out[r["machine"].get("fingerprint")][key].append(r)
    return out


def lsq(X, y):
    """θ ≥ 0 minimising Σ((y − Xθ)/y)² (every size weighs alike); a negative θ_k is dropped to 0, the rest refitted."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    keep = list(range(X.shape[1]))
    while True:
        th = np.zeros(X.shape[1])
        if keep:
            th[keep] = np.linalg.lstsq(X[:, keep] / y[:, None], np.ones(len(y)), rcond=None)[0]
        neg = [k for k in keep if th[k] < 0]
        if not neg:
            return th
        keep.remove(neg[0])


def fit(group):
    """The parameters from one machine's points ({key: [records]}): see the module's docstring."""
    # Fitted on the full local transform; pruned points are predicted from it (pruned_fraction).
    pts = [(k, sharing(v[0]), geometry(k[0], k[1], k[5]), v) for k, v in group.items() if k[7] == "full"]

    def rows(method, x, y, ok=lambda k: k[1] > 1):
        """([x(k, g, G)], [median over the point's records of y(r, k, g, G)]): `method`'s points, y > 0."""
        out = [(x(k, g, G), float(np.median([y(r, k, g, G) for r in v]))) for k, g, G, v in pts if k[4] == method and ok(k)]
        return [a for a, b in out if b > 0], [b for a, b in out if b > 0]

    total = lambda r, *_: r["timing"]["total"]["median"]  # noqa: E731
    work = lambda k, g, G: [g * G["work"]]  # noqa: E731
    X, Y = rows("octree", work, lambda r, *_: sum(phase(r, p) for p in ("forward", "kernel", "inverse")), lambda k: True)
    X1, Y1 = rows("exact", work, total, lambda k: k[1] == 1)
    if not Y + Y1:
        raise ReportError("no octree record and no exact record at 1 rank: the local FFT rate is unknown")
    par = {"c_fft": lsq(X or X1, Y or Y1)[0]}
    par["kappa"] = lsq(X1, Y1)[0] / par["c_fft"] if Y and Y1 else 1.0
    comp = lambda r, k, g, G: total(r) - par["kappa"] * g * par["c_fft"] * G["work"] / k[1]  # noqa: E731
    par["beta_x"] = {t: 1 / lsq(*xy)[0] for t in sorted({k[6] for k, *_ in pts if k[4] == "exact"})
                     if (xy := rows("exact", lambda k, g, G: [G["B"]], comp, lambda k: k[6] == t and k[1] > 1))[1]}
    par["beta_s"] = {t: 1 / lsq(*xy)[0] for t in sorted({k[6] for k, *_ in pts if k[4] == "octree"})
                     if (xy := rows("octree", lambda k, g, G: [8 * max(G["S"], G["R"])], lambda r, *_: phase(r, "exchange"),
                                    lambda k: k[6] == t and k[1] > 1))[1]}
    for names, x, y in ((("c_w", "c_s"), lambda k, g, G: [G["W"], G["S"]], lambda r, *_: phase(r, "sample")),
                        (("c_i",), lambda k, g, G: [G["I"]], lambda r, *_: phase(r, "interpolate")),
                        (("c_o",), lambda k, g, G: [G["L"] + G["R"]],
                         lambda r, *_: total(r) - sum(s["median"] for s in r["timing"]["phases"].values()))):
        xy = rows("octree", x, y)
        par.update(zip(names, lsq(*xy) if xy[1] else [0.0] * len(names)))
    return par


def describe(par):
    b = lambda v: f"{v / 1e6:.3g} GB/s"  # noqa: E731  bytes/ms
    return (f"c_fft {par['c_fft'] * 1e9:.4g} ps per point·log2, κ {par['kappa']:.3g}, "
            + ", ".join(f"β_x[{k}] {b(v)}" for k, v in par["beta_x"].items()) + ", "
            + ", ".join(f"β_s[{k}] {b(v)}" for k, v in par["beta_s"].items())
            + f", c_w {par['c_w'] * 1e6:.4g} ns/point, c_s {par['c_s'] * 1e6:.4g} ns/sample, c_i {par['c_i'] * 1e6:.4g} ns/point, c_o {par['c_o'] * 1e6:.4g} ns/point")


# --- --check ---------------------------------------------------------------------------------------------
def check(records, out=None):
    """Rows (machine, size, P, kernel, sampling, transport, measured, predicted ratio, error) and prints the table."""
    rows, out = [], out or sys.stdout
    for machine, group in sorted(points(records).items(), key=lambda kv: str(kv[0])):
        sizes = sorted({k[0] for k in group})
        print(f"machine {machine}: {describe(fit(group))}", file=out)
        for s in sizes:
            how = "other sizes"
            try:
                par = fit({k: v for k, v in group.items() if k[0] != s})
            except ReportError:  # no other size to fit on (or none with an octree record)
                par, how = fit(group), "in-sample"
            tot = lambda rs: float(np.median([r["timing"]["total"]["median"] for r in rs]))  # noqa: E731
            for k, v in sorted(group.items()):
                if k[0] != s or k[4] != "octree" or k[6] not in par["beta_s"]:
                    continue
                exact = [(e, ev) for e, ev in sorted(group.items()) if e[4] == "exact" and e[:4] == k[:4] and e[6] in par["beta_x"]]
                for e, ev in [x for x in exact if x[0][6] == k[6]] or exact:  # the octree's own transport where measured
                    po = predict(par, s, k[1], sharing(v[0]), k[5], 1, par["beta_s"][k[6]], k[7] == "pruned")["octree"]
                    pe = predict(par, s, k[1], sharing(ev[0]), k[5], par["beta_x"][e[6]], 1)["exact"]
                    meas, pred = tot(v) / tot(ev), po / pe
                    samp = k[5] + (" pruned" if k[7] == "pruned" else "")
                    rows.append((machine, s, k[1], k[2], samp, e[6], tot(v), po, tot(ev), pe,
                                 meas, pred, pred / meas - 1, how))
    print("| N | P | kernel | sampling | exact via | octree ms meas / pred | exact ms meas / pred | octree ÷ exact meas "
          "| pred | error | fit on |\n|---|---|---|---|---|---|---|---|---|---|---|", file=out)
    for m, s, p, kern, samp, tr, to, po, te, pe, meas, pred, err, how in rows:
        print(f"| {'x'.join(map(str, s))} | {p} | {kern} | {samp} | {tr} | {to:.4g} / {po:.4g} | {te:.4g} / {pe:.4g} "
              f"| {meas:.3f} | {pred:.3f} | {100 * err:+.0f}% | {how} |", file=out)
    if rows:
        errs = [abs(r[12]) for r in rows]
        print(f"{sum(e <= 0.25 for e in errs)} of {len(rows)} ratios within 25%; worst {100 * max(errs):.0f}%, "
              f"median {100 * float(np.median(errs)):.0f}%", file=out)
    return rows


# --- --plot ----------------------------------------------------------------------------------------------
def nvlink_rate(probes):
    """Bytes/ms of the fastest exchange probe not staged through the host: (peers − 1) · bytes_per_peer ÷ time."""
    return max(((r["peers"] - 1) * r["bytes_per_peer"] / (r["timing"].get("phases", {}).get("exchange") or r["timing"]["total"])["median"]
                for r in probes if r.get("probe") == "exchange" and r.get("status") == "ok" and not r.get("host_staged")
                and r.get("peers", 1) > 1), default=0.0)


P_GRID = sorted({round(2 ** (k / 4)) for k in range(4, 41)})  # 2 … 1024, four per octave


def curves(par, links, scheme, strong_n, weak_n, capacity):
    """{(panel, link, variant): [(P, ratio, fits)]}: strong, a strong_n³ grid; weak, N³ = P · weak_n³."""
    out = {}
    for panel in ("strong", "weak"):
        for p in P_GRID:
            side = strong_n if panel == "strong" else max(round(weak_n * p ** (1 / 3)), 2)
            n = (side,) * 3
            if side < p:  # every octree rank needs an x-plane
                continue
            for link, beta in links:
                for variant in ("as built", "pruned"):
                    pr = predict(par, n, p, 1, scheme, beta, beta, variant == "pruned")
                    out.setdefault((panel, link, variant), []).append(
                        (p, pr["octree"] / pr["exact"], variant == "pruned" or octree_bytes(n) <= capacity))
    return out


def crossover(series):
    """The P where octree ÷ exact crosses 1 (log-interpolated), or a word when it never does."""
    for (p0, r0, _), (p1, r1, _) in zip(series, series[1:]):
        if (r0 - 1) * (r1 - 1) < 0:
            t = math.log(r0) / (math.log(r0) - math.log(r1))
            return f"{p0 * (p1 / p0) ** t:.0f} ({'octree wins below' if r0 < 1 else 'exact wins below'})"
    return "none: octree faster at every P" if series[-1][1] < 1 else "none: exact faster at every P"


def figure(data, links, scheme, strong_n, weak_n, title):
    fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.6), sharey=True)
    for ax, panel in zip(axes, ("strong", "weak")):
        for i, (link, _) in enumerate(links):
            for variant, ls in (("as built", "-"), ("pruned", "--")):
                pts = data.get((panel, link, variant), [])
                fits, over = [(p, r) for p, r, f in pts if f], [(p, r) for p, r, f in pts if not f]
                for seg, style in ((fits, ls), (fits[-1:] + over if over else [], ":")):  # dotted from the last that fits
                    if seg:
                        ax.plot(*zip(*seg), color=f"C{i}", ls=style, lw=1.6 if style != ":" else 1.2)
        ax.axhline(1, color="black", lw=1)
        ax.text(1000, 0.93, "octree = exact", fontsize=7, ha="right", va="top")
        ax.set_xscale("log", base=2)
        ax.set_xlim(1.8, 1150)
        ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator([2 ** k for k in range(1, 11)]))
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1, 2, 5)))  # plain numbers at 1, 2, 5 per decade
        for a in (ax.xaxis, ax.yaxis):
            a.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
            a.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("ranks P (one GPU each)")
        ax.grid(True, which="major", alpha=0.3)
        ax.set_title(f"strong scaling: {strong_n}³ in all (octree: P ≤ Nx)" if panel == "strong" else
                     f"weak scaling: {weak_n}³ per GPU, N³ = P · {weak_n}³", fontsize=10)
    axes[0].set_ylabel(f"predicted octree ÷ exact time ({scheme} sampling)")
    for i, (link, beta) in enumerate(links):
        axes[1].plot([], [], color=f"C{i}", label=f"{link}: {beta / 1e6:.3g} GB/s")
    for ls, label in (("-", "octree as built"), ("--", "octree, pruned local FFT"), (":", "as built, padded grid over GPU memory")):
        axes[1].plot([], [], color="grey", ls=ls, label=label)
    legend_outside(axes[1])
    fig.suptitle(title, fontsize=10)
    return fig


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="convolution records (.jsonl[.gz]); probe records give NVLink's rate")
    ap.add_argument("--check", action="store_true", help="predicted against measured octree ÷ exact, per point")
    ap.add_argument("--plot", metavar="OUT.png", help="octree ÷ exact against P, strong and weak scaling")
    ap.add_argument("--sampling", default="coarse", choices=sorted(SCHEMES))
    ap.add_argument("--strong-n", type=int, default=512, help="strong scaling: the grid's side (default 512)")
    ap.add_argument("--weak-n", type=int, default=128, help="weak scaling: the side per GPU (default 128)")
    ap.add_argument("--nvlink-gbps", type=float, help="NVLink's rate (default: the fastest device-direct probe)")
    ap.add_argument("--device-gbps", type=float, help="--plot: project device sampling at this device bandwidth")
    args = ap.parse_args(argv)
    try:
        records = read_records(args.files, None)
        if not args.check and not args.plot:
            raise ReportError("nothing to do: give --check and/or --plot OUT.png")
        groups = points(records)
        if not groups:
            raise ReportError(f"no validated ok convolution record among {len(records)} read")
        if args.check:
            check(records)
        if args.plot:
            machine, group = max(groups.items(), key=lambda kv: sum(map(len, kv[1].values())))
            par = fit(group)
            if args.device_gbps:
                par.update(c_w=0.0, c_o=0.0, c_s=16 / (args.device_gbps * 1e6), c_i=16 / (args.device_gbps * 1e6))
            hosted = [v for k, v in par["beta_x"].items() if host_staged(k)]
            probes = [r for r in records if is_probe(r)] or (read_records([DEFAULT_PROBES], None) if os.path.exists(DEFAULT_PROBES) else [])
            nv = args.nvlink_gbps * 1e6 if args.nvlink_gbps else nvlink_rate(probes) or max(
                (v for k, v in par["beta_x"].items() if not host_staged(k)), default=0)
            links = ([("NVLink, measured", nv)] if nv else []) + [(n, v * 1e6) for n, v in IB] + (
                [("host-staged MPI, measured", max(hosted))] if hosted else [])
            capacity = max(r.get("device_memory", {}).get("total_bytes", 0) for v in group.values() for r in v) or 141e9
            data = curves(par, links, args.sampling, args.strong_n, args.weak_n, capacity)
            print(f"plot: machine {machine}, drawn at one rank per GPU: {describe(par)}")
            for key in sorted(data):
                print(f"crossover, {key[0]} scaling, {key[1]}, octree {key[2]}: P = {crossover(data[key])}")
            how = f"sampling on the device at {args.device_gbps:g} GB/s (projected)" if args.device_gbps else "sampling as measured"
            fig = figure(data, links, args.sampling, args.strong_n, args.weak_n,
                         f"convolution: predicted octree ÷ exact (below 1: octree faster); {how}")
            fig.savefig(args.plot, dpi=110, bbox_inches="tight")
            plt.close(fig)
            print(f"{args.plot}: written")
    except ReportError as e:
        print(f"convolution model: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
