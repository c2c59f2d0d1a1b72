"""The fft3d family's part of `fftune report` (plotting/report.py loads it):
time against size per decomposition/layout with the reference lines, relative
runtime, phase breakdown, redistribution methods, winners, strong and weak
scaling, the floors (bytes moved over measured bandwidths), the multi-GPU
references and the device-memory table."""
import re
from collections import defaultdict

from report import COLORS, bar_figure, best_by, dims_label, legend_outside, lines_figure, plt, save, size_axis

def size_label(s):
    return "x".join(str(n) for n in s)


def points(s):
    return s[0] * s[1] * s[2]


def variant(r):
    c = r["config"]
    return f'{c["decomposition"]}/{c["layout"]}'


def method_label(r):
    """One name when every phase uses the same method, else phase0+phase1."""
    m = r["config"]["redistribution"]
    return m[0] if len(set(m)) == 1 else "+".join(m)


def group_problems(records):
    """(ranks, precision, direction) -> list of records."""
    groups = defaultdict(list)
    for r in records:
        p = r["problem"]
        groups[(p["ranks"], p["precision"], p["direction"])].append(r)
    return groups


def devices(r):
    """GPUs one rank's transform ran on: 1, or every GPU of the process (reference_cufftxt)."""
    return r["timing"].get("devices", 1)


def reference_name(r):
    """Series name of a reference record (reference_3d, reference_cufftxt), else None."""
    c = r["config"]
    if c["decomposition"] == "reference_3d":
        return {"cuda": "cuFFT 3D, one GPU", "fftw": "FFTW 3D, one process"}.get(c["backend"], c["backend"] + " 3D")
    if c["decomposition"] == "reference_cufftxt":
        return f"cufftXt, {devices(r)} GPUs of one process"
    return None


def reference_records(all_records):
    """(size, precision, direction) -> {reference name: its fastest record}, from
    any rank count's run (reference_3d per backend, reference_cufftxt per GPU count)."""
    refs = defaultdict(dict)
    for r in all_records:
        name = reference_name(r)
        if name:
            p = r["problem"]
            k = (tuple(p["size"]), p["precision"], p["direction"])
            if name not in refs[k] or r["timing"]["total"]["median"] < refs[k][name]["timing"]["total"]["median"]:
                refs[k][name] = r
    return refs


def references(all_records, precision, direction):
    """Best reference time per size, per reference name, for one precision and direction."""
    refs = defaultdict(dict)
    for (size, prec, d), by_name in reference_records(all_records).items():
        if prec == precision and d == direction:
            for name, r in by_name.items():
                refs[name][size] = r["timing"]["total"]["median"]
    return refs


def multi_device_table(records):
    """Records whose one rank drove several GPUs (reference_cufftxt): references, not contenders."""
    best = best_by([r for r in records if devices(r) > 1],
                   lambda r: (tuple(r["problem"]["size"]), r["problem"]["precision"], r["problem"]["direction"], r["key"], devices(r)))
    if not best:
        return None
    lines = ["| size | precision | direction | configuration | GPUs | ms |", "|---|---|---|---|---|---|"]
    for (s, prec, d, key, n), r in sorted(best.items(), key=lambda kv: (points(kv[0][0]), kv[0][1:])):
        lines.append(f"| {size_label(s)} | {prec} | {d} | `{key}` | {n} | {r['timing']['total']['median']:.4g} |")
    return "\n".join(lines)


GIB = 2**30


DOES_NOT_FIT = re.compile(r"does not fit in device memory: (\d+) rank\(s\) on device .*?this rank ([\d.]+) GiB")
# A transform over every GPU of one process (cufftXt) states its need per GPU.


DOES_NOT_FIT_PER_GPU = re.compile(r"does not fit in device memory: .*? need ([\d.]+) GiB on GPU \d+")


def memory_table(all_records):
    """Per-rank device footprint by size, and the largest size that ran, per
    (ranks, configuration, precision): from points that ran (memory_bytes, and
    the driver-measured device_memory where recorded) and from points skipped
    because they would not fit (the need their reason states). Rows with
    several ranks per GPU are the ranks sharing one device: their "largest
    that ran" is for the shared device, their needs are per rank. A process
    whose transform spans d GPUs (cufftXt) is a row of 1/d ranks per GPU, its
    footprint per GPU: memory_bytes / d planned (the library splits its
    storage evenly), the fullest GPU measured (records before devices_per_rank
    measured only the first GPU: not shown). Validation is not required: the
    footprint does not depend on it."""
    cells = defaultdict(dict)
    for r in all_records:
        p, c, t = r.get("problem", {}), r.get("config", {}), r.get("timing") or {}
        if not p:
            continue
        if r.get("status") == "ok" and "device_memory" not in r and t.get("clock") != "cuda_event":
            continue  # host backends: nothing is checked against a device
        conf, size = f'{c["decomposition"]}/{c["layout"]}', tuple(p["size"])
        if r.get("status") == "ok" and "memory_bytes" in r:
            dm, devices = r.get("device_memory"), t.get("devices", 1)
            if devices > 1:
                measured = dm["measured_bytes"] / GIB if dm and "devices_per_rank" in dm else None
                cells[(p["ranks"], f"1/{devices}", conf, p["precision"])][size] = (
                    True, r["memory_bytes"] / devices / GIB, measured)
                continue
            sharing = dm["ranks_on_device"] if dm else "?"
            measured = dm["measured_bytes"] / dm["ranks_on_device"] / GIB if dm else None
            cells[(p["ranks"], sharing, conf, p["precision"])][size] = (True, r["memory_bytes"] / GIB, measured)
        elif r.get("status") == "skipped":
            reason = r.get("reason", "")
            if m := DOES_NOT_FIT.search(reason):
                key = (p["ranks"], int(m.group(1)), conf, p["precision"])
                cells[key].setdefault(size, (False, float(m.group(2)), None))
            elif (m := DOES_NOT_FIT_PER_GPU.search(reason)) and (r.get("machine") or {}).get("gpu_count", 0) > 1:
                key = (p["ranks"], f'1/{r["machine"]["gpu_count"]}', conf, p["precision"])
                cells[key].setdefault(size, (False, float(m.group(1)), None))
    if not cells:
        return None
    sizes = sorted({s for row in cells.values() for s in row}, key=points)
    gib = lambda x: f"{x:.1f}" if x >= 1 else f"{x:.2g}"
    lines = ["| ranks | ranks per GPU | configuration | precision | " + " | ".join(size_label(s) for s in sizes) +
             " | largest that ran |", "|---|---|---|---|" + "---|" * (len(sizes) + 1)]
    for (ranks, sharing, conf, prec), row in sorted(cells.items(), key=lambda kv: tuple(map(str, kv[0]))):
        out, largest = [], None
        for s in sizes:
            if s not in row:
                out.append("–")
                continue
            ran, planned, measured = row[s]
            if ran:
                largest = s
                out.append(gib(planned) + (f" ({gib(measured)})" if measured is not None else ""))
            else:
                out.append(f"✗ {gib(planned)}")
        lines.append(f"| {ranks} | {sharing} | {conf} | {prec} | " + " | ".join(out) +
                     f" | {size_label(largest) if largest else 'none'} |")
    return "\n".join(lines)


MIN_COPY_BYTES = 1 << 30  # a self copy this large streams through device memory, not a cache (L2: 50-60 MB on H100/H200)


def machine_of(r):
    return (r.get("machine") or {}).get("fingerprint")


def measured_hbm(records):
    """{machine fingerprint: bytes/s}: per machine, the fastest 1-rank exchange
    phase that is one on-device copy of the self block (traffic.device_bytes,
    read + written, at least MIN_COPY_BYTES; nothing sent)."""
    best = {}
    for r in records:
        for ph, t in (r.get("traffic") or {}).items():
            if not ph.startswith("exchange.") or r["problem"]["ranks"] != 1 or t["sent_bytes"] or t["device_bytes"] < MIN_COPY_BYTES:
                continue
            ms = r["timing"]["phases"][ph]["median"]
            if ms > 0:
                fp = machine_of(r)
                best[fp] = max(best.get(fp, 0), t["device_bytes"] / (ms * 1e-3))
    return best


def measured_link(probes, hbm):
    """{(machine fingerprint, backend): bytes/s} one rank sends to the others, from
    the fastest exchange probe (fftune probe) that is not staged through host
    memory (on GPUs: NCCL, CUDA IPC): (peers - 1) * bytes_per_peer over its
    exchange phase, less the self block's copy (read + write) at hbm(machine)
    bytes/s when known. Probe groups are consecutive ranks, so for exchanges
    across nodes give --link-gbps."""
    best = {}
    for r in probes:
        if r.get("probe") != "exchange" or r.get("status") != "ok" or r.get("host_staged") or r.get("peers", 1) < 2:
            continue
        if not (r.get("validation") or {}).get("passed"):
            continue
        phases = r["timing"].get("phases") or {}
        ms = (phases.get("exchange") or r["timing"]["total"])["median"]
        b, h = r["bytes_per_peer"], hbm(machine_of(r))
        seconds = ms * 1e-3 - (2 * b / h if h else 0)
        if seconds > 0:
            key = (machine_of(r), r.get("backend"))
            best[key] = max(best.get(key, 0), (r["peers"] - 1) * b / seconds)
    return best


def phase_floors(r, hbm, link):
    """{phase: floor ms} from the record's traffic: the larger of device bytes /
    hbm and the larger of sent and received / link (bytes/s), a bound whatever a
    transport overlaps within the phase; None where a bandwidth it needs is
    unknown. Empty without traffic (records before it, cufftXt)."""
    out = {}
    for ph, t in (r.get("traffic") or {}).items():
        peer = max(t["sent_bytes"], t["received_bytes"])
        if (t["device_bytes"] and not hbm) or (peer and not link):
            out[ph] = None
            continue
        out[ph] = 1e3 * max(t["device_bytes"] / hbm if t["device_bytes"] else 0, peer / link if peer else 0)
    return out


def total_floor(r, floors, hbm, link):
    """Phases one after another add up. Overlapped phases (timing.mode) at best
    hide the link behind the device work or the other way round: the larger of
    all device bytes / hbm and all peer bytes / link. (traffic holds each
    field's maximum over ranks: on uneven splits this can exceed the slowest
    rank's own floor a little.)"""
    if not floors or any(f is None for f in floors.values()):
        return None
    if r["timing"].get("mode") == "overlapped":
        tr = r["traffic"].values()
        device = sum(t["device_bytes"] for t in tr)
        peer = sum(max(t["sent_bytes"], t["received_bytes"]) for t in tr)
        return 1e3 * max(device / hbm if device else 0, peer / link if peer else 0)
    return sum(floors.values())


def ratio_cell(a, b):
    """a / b with the interval [a.lo / b.hi, a.hi / b.lo] of their 99% CIs."""
    (alo, ahi), (blo, bhi) = a["ci99"], b["ci99"]
    return f'{a["median"] / b["median"]:.2f}× ({alo / bhi:.2f}–{ahi / blo:.2f})'


def floor_section(records, all_records, hbm_given, link_given, probes):
    """Best plan per (ranks, size, precision, direction) against the references
    measured for the same problem and against its floor; then each best plan's
    phases against theirs. Bandwidths (bytes/s): the given ones, else measured
    per machine (device: measured_hbm) and per machine and backend (link:
    measured_link)."""
    best = best_by(records, lambda r: (r["problem"]["ranks"], tuple(r["problem"]["size"]), r["problem"]["precision"],
                                       r["problem"]["direction"]))
    if not best:
        return None
    ref = reference_records(all_records)
    hbm_rates = measured_hbm(all_records)
    hbm_of_machine = lambda fp: hbm_given or hbm_rates.get(fp)
    link_rates = measured_link(probes, hbm_of_machine)
    hbm_of = lambda r: hbm_of_machine(machine_of(r))
    link_of = lambda r: link_given or link_rates.get((machine_of(r), r["config"]["backend"]))
    gbs = lambda x: f"{x / 1e9:.0f} GB/s"
    if hbm_given:
        device = f"{gbs(hbm_given)} (given)"
    elif hbm_rates:
        device = ("; ".join(f"{gbs(h)} on machine `{fp}`" for fp, h in sorted(hbm_rates.items())) +
                  f" (measured: the fastest 1-rank self copy of at least {MIN_COPY_BYTES // 2**30} GiB)")
    else:
        device = f"not known (no 1-rank self copy of at least {MIN_COPY_BYTES // 2**30} GiB among the records; give --hbm-gbps)"
    if link_given:
        link = f"{gbs(link_given)} (given)"
    elif link_rates:
        link = ("; ".join(f"{gbs(l)} for {be} on machine `{fp}`" for (fp, be), l in sorted(link_rates.items())) +
                " (measured: the fastest exchange probe not staged through the host)")
    else:
        link = "not known (no exchange probe among the records; give --link-gbps)"
    md = ["A phase's floor is the larger of its device bytes (read + written) ÷ the device bandwidth and the larger "
          "of its sent and received bytes ÷ the link bandwidth; phases that run one after another add up. "
          f"Device: {device}. Link: {link}. Ratios give the 99% CI of each ratio in parentheses.", "",
          "| ranks | size | precision | direction | best | ms (99% CI) | references (ratio: best ÷ reference) | floor ms | ÷ floor |",
          "|---|---|---|---|---|---|---|---|---|"]
    details = []
    for k in sorted(best, key=lambda k: (k[0], points(k[1]), k[2], k[3])):
        r = best[k]
        t = r["timing"]["total"]
        refs = []
        for name, x in sorted(ref.get(k[1:], {}).items()):
            if x is r or (devices(x) > 1 and devices(x) != k[0]):
                continue  # cufftXt only beside plans over as many GPUs
            refs.append(f"{name} {x['timing']['total']['median']:.4g} ms: {ratio_cell(t, x['timing']['total'])}")
        floors = phase_floors(r, hbm_of(r), link_of(r))
        floor = total_floor(r, floors, hbm_of(r), link_of(r))
        floor_ms, vs_floor = (f"{floor:.3g}", f"{t['median'] / floor:.2f}") if floor else ("–", "–")
        md.append(f"| {k[0]} | {size_label(k[1])} | {k[2]} | {k[3]} | `{r['key']}` | {t['median']:.4g} "
                  f"({t['ci99'][0]:.4g}–{t['ci99'][1]:.4g}) | {'; '.join(refs) or '–'} | {floor_ms} | {vs_floor} |")
        if floors:
            details += ["", f"`{r['key']}`, {k[0]} ranks, {size_label(k[1])} {k[2]} {k[3]}"
                        + (" (overlapped: phases run side by side)" if r["timing"].get("mode") == "overlapped" else ""), "",
                        "| phase | ms | device GB | sent GB | received GB | floor ms | ÷ floor |", "|---|---|---|---|---|---|---|"]
            for ph in r["timing"]["phase_order"]:
                ms = r["timing"]["phases"][ph]["median"]
                tr, f = r["traffic"].get(ph, {}), floors.get(ph)
                gb = lambda key: f"{tr.get(key, 0) / 1e9:.3g}"
                f_ms = f"{f:.3g}" if f is not None else "–"
                vs = f"{ms / f:.2f}" if f else "–"
                details.append(f"| {ph} | {ms:.4g} | {gb('device_bytes')} | {gb('sent_bytes')} | {gb('received_bytes')} | "
                               f"{f_ms} | {vs} |")
    return "\n".join(md + details)


def what(key):
    ranks, prec, direction = key
    return f"{ranks} rank{'s' if ranks > 1 else ''}, {prec} {direction}"


UNIT = "median time per transform [ms], 99% CI"


def fig_total(recs, all_records, key, out):
    """Which decomposition/layout (its best method) is fastest: bars at one size, lines over many; the references beside."""
    ranks, prec, direction = key
    sizes = sorted({tuple(r["problem"]["size"]) for r in recs}, key=points)
    best = best_by(recs, lambda r: (variant(r), tuple(r["problem"]["size"])))
    refs = {f"reference: {n}": by for n, by in references(all_records, prec, direction).items()}
    name = f"total_r{ranks}_{prec}_{direction}"
    if len(sizes) == 1:
        entries = [(v, r["timing"]["total"]["median"], r["timing"]["total"]["ci99"]) for (v, _), r in best.items()]
        entries += [(n, by[sizes[0]], None) for n, by in refs.items() if sizes[0] in by]
        fig, series = bar_figure(entries, f"fft3d {dims_label(sizes[0])}, {what(key)}: which decomposition/layout is fastest?",
                                 UNIT, references=set(refs))
    else:
        curves, xs = defaultdict(dict), size_axis(sizes, points)
        for (v, s), r in best.items():
            t = r["timing"]["total"]
            curves[v][xs[s]] = (t["median"], *t["ci99"])
        for n, by in refs.items():
            curves[n] = {xs[s]: (t, None, None) for s, t in by.items() if s in xs}
        fig, series = lines_figure({n: c for n, c in curves.items() if c}, {xs[s]: dims_label(s) for s in sizes},
                                   f"fft3d, {what(key)}: which decomposition/layout is fastest at each size?", UNIT,
                                   "grid size (points Nx·Ny·Nz)", references=set(refs))
    return name, save(fig, out, name), series


def fig_relative(recs, key, out):
    """How far each decomposition/layout is from the fastest at its size."""
    ranks, prec, direction = key
    sizes = sorted({tuple(r["problem"]["size"]) for r in recs}, key=points)
    best = best_by(recs, lambda r: (variant(r), tuple(r["problem"]["size"])))
    fastest = {s: min(r["timing"]["total"]["median"] for (_, s2), r in best.items() if s2 == s) for s in sizes}
    ratio = lambda v, s: best[(v, s)]["timing"]["total"]["median"] / fastest[s]
    unit = "time ÷ the fastest at this size (1 = fastest)"
    if len(sizes) == 1:
        entries = [(v, ratio(v, s), None) for v, s in best]
        fig, series = bar_figure(entries, f"fft3d {dims_label(sizes[0])}, {what(key)}: how much slower than the fastest?",
                                 unit, labels={v: f"{x:.2f}×" for v, x, _ in entries})
    else:
        curves, xs = defaultdict(dict), size_axis(sizes, points)
        for v, s in best:
            curves[v][xs[s]] = (ratio(v, s), None, None)
        fig, series = lines_figure(curves, {xs[s]: dims_label(s) for s in sizes},
                                   f"fft3d, {what(key)}: how much slower than the fastest at each size?", unit,
                                   "grid size (points Nx·Ny·Nz)")
    name = f"relative_r{ranks}_{prec}_{direction}"
    return name, save(fig, out, name), series


def fig_phases(recs, key, out):
    """Where the fastest configuration of each size spends its time: one stacked bar per size."""
    ranks, prec, direction = key
    best = best_by(recs, lambda r: tuple(r["problem"]["size"]))
    sizes = sorted(best, key=points)
    phases = []
    for s in sizes:
        for ph in best[s]["timing"]["phase_order"]:
            kind = ph.split(".")[0]
            if kind not in phases:
                phases.append(kind)
    fig, ax = plt.subplots(figsize=(9, 1.6 + 0.45 * len(sizes)))
    left = [0.0] * len(sizes)
    for i, kind in enumerate(phases):
        vals = [sum(v["median"] for k, v in best[s]["timing"]["phases"].items() if k.split(".")[0] == kind) for s in sizes]
        ax.barh(range(len(sizes)), vals, left=left, label=kind, color=COLORS[i % len(COLORS)])
        left = [b + v for b, v in zip(left, vals)]
    ax.set_yticks(range(len(sizes)), [f"{dims_label(s)}\n{best[s]['key']}" for s in sizes], fontsize=7)
    ax.invert_yaxis()  # smallest size on top, as in the tables
    ax.margins(x=0.04)  # the longest bar stops short of the frame
    ax.set_xlabel("median time per phase [ms] (max over ranks)")
    ax.set_title(f"fft3d, {what(key)}: where does the fastest configuration of each size spend its time?", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    legend_outside(ax, title="phase", title_fontsize=7)
    name = f"phases_r{ranks}_{prec}_{direction}"
    return name, save(fig, out, name), phases


def fig_methods(recs, key, out):
    """Which redistribution method (per decomposition/layout) is fastest at the largest size."""
    ranks, prec, direction = key
    largest = max({tuple(r["problem"]["size"]) for r in recs}, key=points)
    at = [r for r in recs if tuple(r["problem"]["size"]) == largest and r["config"]["redistribution"]]
    best = best_by(at, lambda r: (variant(r), method_label(r)))
    if not best:
        return None
    entries = [(f"{v}: {m}", r["timing"]["total"]["median"], r["timing"]["total"]["ci99"]) for (v, m), r in best.items()]
    fig, _ = bar_figure(entries, f"fft3d {dims_label(largest)}, {what(key)}: which redistribution method is fastest?", UNIT)
    name = f"methods_r{ranks}_{prec}_{direction}"
    return name, save(fig, out, name), sorted({m for _, m in best})


def winner_rows(recs):
    rows = []
    by_problem = defaultdict(dict)
    for r in recs:
        p = r["problem"]
        k = (p["ranks"], tuple(p["size"]), p["precision"], p["direction"])
        cur = by_problem[k].get(r["key"])
        if cur is None or r["timing"]["total"]["median"] < cur["timing"]["total"]["median"]:
            by_problem[k][r["key"]] = r
    for k in sorted(by_problem, key=lambda k: (k[0], points(k[1]), k[2], k[3])):
        ranked = sorted(by_problem[k].values(), key=lambda r: r["timing"]["total"]["median"])
        a = ranked[0]["timing"]["total"]
        verdict, runner, margin = "only one", "", ""
        if len(ranked) > 1:
            b = ranked[1]["timing"]["total"]
            runner = ranked[1]["key"]
            margin = f'{100 * (b["median"] / a["median"] - 1):.1f}%'
            if a["ci99"][1] < b["ci99"][0]:
                verdict = "faster"
            elif b["median"] <= a["ci99"][1] and a["median"] >= b["ci99"][0]:
                verdict = "same within noise"
            else:
                verdict = "ambiguous"
        rows.append((k, ranked[0]["key"], a["median"], runner, margin, verdict, len(ranked)))
    return rows


def scaling_table(recs):
    best = best_by(recs, lambda r: (tuple(r["problem"]["size"]), r["problem"]["ranks"], r["problem"]["precision"], r["problem"]["direction"]))
    ranks = sorted({k[1] for k in best})
    if len(ranks) < 2:
        return None
    lines = ["| size | precision | direction | " + " | ".join(f"{p} ranks [ms] (speed-up)" for p in ranks) + " |",
             "|---|---|---|" + "---|" * len(ranks)]
    for s, prec, d in sorted({(k[0], k[2], k[3]) for k in best}, key=lambda x: (points(x[0]), x[1], x[2])):
        base = best.get((s, ranks[0], prec, d))
        cells = []
        for p in ranks:
            r = best.get((s, p, prec, d))
            if r is None:
                cells.append("–")
            else:
                t = r["timing"]["total"]["median"]
                cells.append(f"{t:.4g}" + (f" ({base['timing']['total']['median'] / t:.2f}×)" if base else ""))
        lines.append(f"| {size_label(s)} | {prec} | {d} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def weak_scaling_table(recs):
    """Same points per rank at more ranks: efficiency = t(r0, N0) / t(r, N0 * r / r0)."""
    best = best_by(recs, lambda r: (tuple(r["problem"]["size"]), r["problem"]["ranks"], r["problem"]["precision"], r["problem"]["direction"]))
    ranks = sorted({k[1] for k in best})
    if len(ranks) < 2:
        return None
    r0 = ranks[0]
    lines = []
    for (s, r, prec, d), base in sorted(best.items(), key=lambda kv: (points(kv[0][0]), kv[0][2], kv[0][3])):
        if r != r0:
            continue
        cells, found = [], False
        for p in ranks[1:]:
            match = [(k, v) for k, v in best.items() if k[1] == p and k[2] == prec and k[3] == d and points(k[0]) * r0 == points(s) * p]
            if match:
                k, v = min(match, key=lambda kv: kv[1]["timing"]["total"]["median"])
                t = v["timing"]["total"]["median"]
                cells.append(f"{size_label(k[0])}: {t:.4g} ({base['timing']['total']['median'] / t:.2f})")
                found = True
            else:
                cells.append("–")
        if found:
            lines.append(f"| {size_label(s)} | {prec} | {d} | {base['timing']['total']['median']:.4g} | " + " | ".join(cells) + " |")
    if not lines:
        return None
    head = [f"| size at {r0} ranks | precision | direction | {r0} ranks [ms] | " +
            " | ".join(f"{p} ranks: size, ms (efficiency)" for p in ranks[1:]) + " |",
            "|---|---|---|---|" + "---|" * (len(ranks) - 1)]
    return "\n".join(head + lines)


def section(records, out, every_record, hbm_gbps=None, link_gbps=None, probes=()):
    """(Markdown lines, figures) of the fft3d records: `records` validated ok,
    `every_record` whatever their status (the memory table)."""
    figures = []
    # A rank that drove several GPUs (reference_cufftxt) is drawn as a reference
    # line, not compared with plans that use one GPU per rank.
    all_records, records = records, [r for r in records if devices(r) == 1]
    for key, recs in sorted(group_problems(records).items()):
        figures.append(fig_total(recs, all_records, key, out))
        figures.append(fig_relative(recs, key, out))
        figures.append(fig_phases(recs, key, out))
        m = fig_methods(recs, key, out)
        if m:
            figures.append(m)
    md = ["## Winners", "", "| ranks | size | precision | direction | best | ms | runner-up | margin | verdict | candidates |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for k, best, t, runner, margin, verdict, n in winner_rows(records):
        md.append(f"| {k[0]} | {size_label(k[1])} | {k[2]} | {k[3]} | `{best}` | {t:.4g} | `{runner}` | {margin} | {verdict} | {n} |")
    table = scaling_table(records)
    if table:
        md += ["", "## Strong scaling (best configuration per rank count; speed-up over the fewest ranks)", "", table]
    weak = weak_scaling_table(records)
    if weak:
        md += ["", "## Weak scaling (same points per rank; efficiency = time at the fewest ranks ÷ time here)", "", weak]
    floors = floor_section(records, all_records, hbm_gbps * 1e9 if hbm_gbps else None,
                           link_gbps * 1e9 if link_gbps else None, probes)
    if floors:
        md += ["", "## Against the references and the floor", "", floors]
    multi = multi_device_table(all_records)
    if multi:
        md += ["", "## References over several GPUs of one process (not in the tables above: one rank, many GPUs)", "", multi]
    memory = memory_table(every_record or all_records)
    if memory:
        md += ["", "## Device memory per rank (GiB: planned, and driver-measured in parentheses; ✗ = skipped: would not fit,"
               " with the need it states; a rank over several GPUs, 1/d ranks per GPU: per GPU)", "", memory]
    return md, figures
