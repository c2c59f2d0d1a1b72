"""Tests of plotting/report.py on a committed fixture (a slice of the H200 results)."""
import gzip
import io
import json
import os
import sqlite3
import sys
import tempfile
import unittest
from contextlib import redirect_stderr

sys.path.insert(0, os.path.dirname(__file__))
import report  # noqa: E402

fft3d = report.family_module("fft3d")

FIXTURE = os.path.join(os.path.dirname(__file__), "testdata", "fixture.jsonl")


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_every_figure_with_its_series_and_the_page_links_them(self):
        records = report.load_records([FIXTURE], None, None)
        self.assertEqual(len(records), 75)  # 3 skipped and 1 failed record are left out
        figures = report.report(records, self.out, "fixture")
        names = {name: series for name, paths, series in figures["fft3d"]}
        self.assertEqual(set(names), {f"{kind}_r{r}_double_forward" for kind in ("total", "relative", "phases", "methods") for r in (1, 2)})
        self.assertIn("reference: cuFFT 3D, one GPU", names["total_r2_double_forward"])
        self.assertIn("slab_2d1d/default", names["total_r2_double_forward"])
        # pencils that use one method in both phases are labelled by that method
        self.assertEqual(sorted(names["methods_r2_double_forward"]), ["a2a_sync", "nccl_a2a", "p2p_sync"])
        self.assertIn("exchange", names["phases_r2_double_forward"])
        page = open(os.path.join(self.out, "report.md")).read()
        for name in names:
            for ext in ("png", "svg"):
                self.assertTrue(os.path.getsize(os.path.join(self.out, f"{name}.{ext}")) > 1000)
            self.assertIn(f"]({name}.png)", page)
        self.assertIn("## Strong scaling", page)
        # 128^3 at 1 rank pairs with 256x128x128 at 2 ranks (twice the points)
        self.assertIn("| 128x128x128 | double | forward | 0.04", page)
        self.assertIn("256x128x128: 0.1", page)
        self.assertIn("| 2 | 256x256x128 | double | forward | `cuda/slab_2d1d/default/2x1/nccl_a2a/host`", page)

    def test_reads_gzip_compressed_record_files(self):
        packed = os.path.join(self.out, "fixture.jsonl.gz")
        with open(FIXTURE, "rb") as f, gzip.open(packed, "wb") as g:
            g.write(f.read())
        self.assertEqual(report.read_records([packed], None), report.read_records([FIXTURE], None))

    def test_cufftxt_is_a_reference_line_not_a_contender(self):
        records = report.load_records([FIXTURE], None, None)
        ref3d = next(r for r in records if r["config"]["decomposition"] == "reference_3d" and r["problem"]["ranks"] == 1)
        xt = json.loads(json.dumps(ref3d))
        xt["config"]["decomposition"] = "reference_cufftxt"
        xt["key"] = "cuda/reference_cufftxt/default/1x1/none/host"
        xt["timing"]["devices"] = 4
        xt["timing"]["total"]["median"] = ref3d["timing"]["total"]["median"] / 100  # faster than anything
        figures = report.report(records + [xt], self.out, "fixture")
        names = {name: series for name, paths, series in figures["fft3d"]}
        self.assertIn("reference: cufftXt, 4 GPUs of one process", names["total_r1_double_forward"])
        self.assertIn("reference: cufftXt, 4 GPUs of one process", names["total_r2_double_forward"])
        self.assertNotIn("reference_cufftxt/default", names["total_r1_double_forward"])
        page = open(os.path.join(self.out, "report.md")).read()
        self.assertIn("## References over several GPUs of one process", page)
        winners = page.split("## Winners")[1].split("##")[0]
        self.assertNotIn("reference_cufftxt", winners)

    def test_device_memory_table_reads_unvalidated_and_refused_points(self):
        records = report.load_records([FIXTURE], None, None)
        gpu = next(r for r in records if r["config"]["decomposition"] == "slab_2d1d" and r["problem"]["ranks"] == 2)
        big = json.loads(json.dumps(gpu))
        big["problem"]["size"] = [1024, 1024, 1024]
        big["validation"] = {"method": "none", "passed": None}  # a memory study: not validated
        big["memory_bytes"] = 20 * 2**30
        big["device_memory"] = {"measured_bytes": 2 * int(20.25 * 2**30), "ranks_on_device": 2, "total_bytes": 150 * 2**30}
        refused = {k: gpu[k] for k in ("schema", "problem", "config", "key", "machine", "provenance")}
        refused = json.loads(json.dumps(refused))
        refused["problem"]["size"] = [2048, 2048, 2048]
        refused["status"] = "skipped"
        refused["reason"] = ("rank 0: does not fit in device memory: 2 rank(s) on device 0000:00:06.0 need 384.24 GiB "
                             "(this rank 192.12 GiB: input, output, work arrays, FFT work area, staging buffers), "
                             "139.28 GiB of its 139.80 GiB are free")
        other_skip = json.loads(json.dumps(refused))
        other_skip["problem"]["size"] = [4096, 4096, 4096]
        other_skip["reason"] = "2 ranks share 1 GPU on this node; NCCL needs one GPU per rank"
        table = fft3d.memory_table(records + [big, refused, other_skip])
        row = next(l for l in table.splitlines() if l.startswith("| 2 | 2 | slab_2d1d/default | double |"))
        self.assertIn("| 20.0 (20.2) |", row)
        self.assertIn("| ✗ 192.1 |", row)
        self.assertTrue(row.endswith("| 1024x1024x1024 |"), row)
        self.assertNotIn("4096", table)  # skipped for another reason: no footprint to show
        small = next(l for l in table.splitlines() if l.startswith("| 2 | ? | slab_2d1d/default | double |"))
        self.assertNotIn("| 0.0 |", small)  # MiB-sized footprints keep their digits
        self.assertIn("| 0.047 |", small)
        report.report(records, self.out, "fixture", records + [big, refused])
        self.assertIn("## Device memory per rank", open(os.path.join(self.out, "report.md")).read())

    def test_device_memory_of_a_process_over_several_gpus_is_per_gpu(self):
        records = report.load_records([FIXTURE], None, None)
        ref3d = next(r for r in records if r["config"]["decomposition"] == "reference_3d" and r["problem"]["ranks"] == 1)
        xt = json.loads(json.dumps(ref3d))
        xt["config"]["decomposition"] = "reference_cufftxt"
        xt["problem"]["size"] = [1024, 1024, 1024]
        xt["timing"]["devices"] = 4
        xt["memory_bytes"] = 64 * 2**30  # both descriptors and work areas, all four GPUs
        xt["device_memory"] = {"measured_bytes": 17 * 2**30, "devices_per_rank": 4, "ranks_on_device": 1,
                               "total_bytes": 140 * 2**30}
        older = json.loads(json.dumps(xt))  # before devices_per_rank: the first GPU only
        older["problem"]["size"] = [512, 512, 512]
        older["memory_bytes"] = 8 * 2**30
        del older["device_memory"]["devices_per_rank"]
        refused = {k: xt[k] for k in ("schema", "problem", "config", "key", "machine", "provenance")}
        refused = json.loads(json.dumps(refused))
        refused["problem"]["size"] = [4096, 4096, 4096]
        refused["machine"]["gpu_count"] = 4
        refused["status"] = "skipped"
        refused["reason"] = ("does not fit in device memory: cufftXt's two descriptors for 4096x4096x4096 need 512.00 GiB "
                             "on GPU 0, 139.10 GiB of its 139.80 GiB are free after the plans' work areas")
        table = fft3d.memory_table(records + [xt, older, refused])
        row = next(l for l in table.splitlines() if l.startswith("| 1 | 1/4 | reference_cufftxt/default | double |"))
        self.assertIn("| 16.0 (17.0) |", row)
        self.assertIn("| 2.0 |", row)  # planned only: the measurement was not per GPU
        self.assertIn("| ✗ 512.0 |", row)
        self.assertTrue(row.endswith("| 1024x1024x1024 |"), row)

    def test_best_plans_against_references_and_floors(self):
        records = report.load_records([FIXTURE], None, None)
        zero = {"device_bytes": 0, "sent_bytes": 0, "received_bytes": 0}
        fp = records[0]["machine"]["fingerprint"]
        # A 1-rank self copy of 4 GB (read + written) in its exchange phase -> the machine's device rate.
        one = next(r for r in records if r["key"] == "cuda/slab_2d1d/default/1x1/a2a_sync/host" and r["problem"]["size"] == [128] * 3)
        one["traffic"] = {ph: dict(zero) for ph in one["timing"]["phase_order"]}
        one["traffic"]["exchange.0"]["device_bytes"] = 4e9
        hbm = 4e9 / (one["timing"]["phases"]["exchange.0"]["median"] * 1e-3)
        self.assertEqual(fft3d.measured_hbm(records), {fp: hbm})
        small = json.loads(json.dumps(one))
        small["traffic"]["exchange.0"]["device_bytes"] = 4e6  # fits in a cache: not a device-memory rate
        other = json.loads(json.dumps(one))
        other["machine"]["fingerprint"] = "another"
        other["timing"]["phases"]["exchange.0"]["median"] /= 10
        rates = fft3d.measured_hbm([small, one, other])
        self.assertEqual(set(rates), {fp, "another"})
        self.assertAlmostEqual(rates[fp], hbm)
        self.assertAlmostEqual(rates["another"] / hbm, 10)
        # The 2-rank winner at 128^3: 40 MB through the device in its FFT, and
        # 2 MB sent (1 MB received) plus a 20 MB self copy in its exchange.
        best = next(r for r in records if r["key"] == "cuda/slab_2d1d/default/2x1/nccl_a2a/host" and r["problem"]["size"] == [128] * 3)
        best["traffic"] = {ph: dict(zero) for ph in best["timing"]["phase_order"]}
        best["traffic"]["fft.yz"]["device_bytes"] = 40e6
        best["traffic"]["exchange.0"].update(device_bytes=20e6, sent_bytes=2e6, received_bytes=1e6)
        link = 100e9
        floors = fft3d.phase_floors(best, hbm, link)
        self.assertAlmostEqual(floors["fft.yz"], 1e3 * 40e6 / hbm)
        # the larger of the device work and the larger direction on the link
        self.assertAlmostEqual(floors["exchange.0"], 1e3 * max(20e6 / hbm, 2e6 / link))
        self.assertEqual(floors["pack.0"], 0)
        expect = 1e3 * (40e6 / hbm + max(20e6 / hbm, 2e6 / link))
        self.assertAlmostEqual(fft3d.total_floor(best, floors, hbm, link), expect)
        self.assertIsNone(fft3d.phase_floors(best, hbm, None)["exchange.0"])  # no link bandwidth, no link floor
        self.assertIsNone(fft3d.total_floor(best, fft3d.phase_floors(best, hbm, None), hbm, None))
        overlapped = json.loads(json.dumps(best))
        overlapped["timing"]["mode"] = "overlapped"  # at best the link hides behind the device work
        self.assertAlmostEqual(fft3d.total_floor(overlapped, floors, hbm, link), 1e3 * max(60e6 / hbm, 2e6 / link))

        report.report(records, self.out, "fixture", hbm_gbps=None, link_gbps=100)
        with open(os.path.join(self.out, "report.md")) as f:
            page = f.read()
        section = page.split("## Against the references and the floor")[1].split("\n## ")[0]
        self.assertIn(f"Device: {hbm / 1e9:.0f} GB/s on machine `{fp}` (measured: the fastest 1-rank self copy of at least 1 GiB)", section)
        self.assertIn("Link: 100 GB/s (given)", section)
        med = best["timing"]["total"]["median"]
        ref = next(r for r in records if r["key"] == "cuda/reference_3d/default/1x1/none/host" and r["problem"]["size"] == [128] * 3)
        row = next(line for line in section.splitlines() if line.startswith("| 2 | 128x128x128 |"))
        self.assertIn("`cuda/slab_2d1d/default/2x1/nccl_a2a/host`", row)
        self.assertIn(f"cuFFT 3D, one GPU {ref['timing']['total']['median']:.4g} ms: {med / ref['timing']['total']['median']:.2f}×", row)
        self.assertTrue(row.endswith(f"| {expect:.3g} | {med / expect:.2f} |"), row)
        self.assertIn(f"| exchange.0 | {best['timing']['phases']['exchange.0']['median']:.4g} | 0.02 | 0.002 | 0.001 | "
                      f"{floors['exchange.0']:.3g} |", section)
        # Records without traffic (older ones) have no floor.
        other_row = next(line for line in section.splitlines() if line.startswith("| 2 | 256x128x128 |"))
        self.assertTrue(other_row.endswith("| – | – |"), other_row)
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertEqual(report.main([FIXTURE, "--out", self.out, "--link-gbps", "0"]), 2)
        self.assertIn("--link-gbps must be a positive bandwidth", err.getvalue())

    def test_link_rate_from_exchange_probes(self):
        def probe(peers, per_peer, ms, host_staged=False, passed=True, machine="m1", backend="cuda"):
            return {"schema": "fftune.probe/1", "kind": "probe", "probe": "exchange", "status": "ok",
                    "machine": {"fingerprint": machine}, "backend": backend,
                    "transport": "nccl_a2a", "host_staged": host_staged, "peers": peers, "bytes_per_peer": per_peer,
                    "timing": {"total": {"median": ms + 0.1}, "phases": {"exchange": {"median": ms}}},
                    "validation": {"method": "exchange_pattern", "passed": passed}}
        hbm = {"m1": 4e12}.get
        probes = [probe(4, 1e8, 1.0), probe(2, 1e6, 0.01), probe(4, 1e8, 0.5, machine="m2"), probe(4, 1e8, 0.5, backend="fftw"),
                  probe(4, 1e8, 0.1, host_staged=True), probe(4, 1e8, 0.1, passed=False), probe(1, 1e8, 0.01)]
        # 3 peers x 100 MB in 1 ms, less the 100 MB self block copied at 4 TB/s (0.05 ms); per machine and backend.
        rates = fft3d.measured_link(probes, hbm)
        self.assertAlmostEqual(rates[("m1", "cuda")], 3e8 / 0.95e-3)
        self.assertAlmostEqual(rates[("m2", "cuda")], 3e8 / 0.5e-3)  # no device rate known there: nothing subtracted
        self.assertAlmostEqual(rates[("m1", "fftw")], 3e8 / 0.45e-3)
        self.assertEqual(len(rates), 3)
        self.assertEqual(fft3d.measured_link(probes[4:], hbm), {})
        # Probe records among the inputs feed the link rate of their machine and backend, and are not plotted as plans.
        records = report.load_records([FIXTURE], None, None)
        fp = records[0]["machine"]["fingerprint"]
        path = os.path.join(self.out, "probes.jsonl")
        with open(path, "w") as f:
            for p in probes[:1]:
                p["machine"]["fingerprint"] = fp
                f.write(json.dumps(p) + "\n")
        self.assertEqual(report.main([FIXTURE, path, "--out", self.out, "--hbm-gbps", "4000"]), 0)
        with open(os.path.join(self.out, "report.md")) as f:
            page = f.read()
        self.assertIn(f"Link: {3e8 / 0.95e-3 / 1e9:.0f} GB/s for cuda on machine `{fp}` (measured: the fastest exchange probe "
                      "not staged through the host)", page)
        self.assertEqual(len(report.load_records([FIXTURE, path], None, None)), 75)

    def test_winner_verdicts(self):
        rows = fft3d.winner_rows(report.load_records([FIXTURE], None, None))
        verdicts = {r[5] for r in rows}
        self.assertTrue(verdicts <= {"faster", "same within noise", "ambiguous", "only one"})
        self.assertEqual(len(rows), 6)  # 3 sizes x (1, 2 ranks)

    def test_reads_a_tuning_database(self):
        db = os.path.join(self.out, "t.sqlite")
        con = sqlite3.connect(db)
        con.execute("CREATE TABLE records (record_json TEXT)")
        with open(FIXTURE) as f:
            con.executemany("INSERT INTO records VALUES (?)", [(line,) for line in f])
        con.commit()
        con.close()
        self.assertEqual(len(report.load_records([], db, None)), 75)  # 3 skipped and 1 failed left out
        self.assertEqual(len(report.load_records([], db, "e573fa20c9df0331")), 75)

    def test_nothing_to_plot_is_a_message_not_a_traceback(self):
        empty = os.path.join(self.out, "empty.jsonl")
        open(empty, "w").close()
        for argv in ([empty, "--out", self.out], ["--db", os.path.join(self.out, "none.sqlite"), "--out", self.out],
                     [FIXTURE, "--machine", "other", "--out", self.out]):
            err = io.StringIO()
            with redirect_stderr(err):
                self.assertEqual(report.main(argv), 2)
            self.assertTrue(err.getvalue().startswith("fftune report: "), err.getvalue())
            self.assertNotIn("Traceback", err.getvalue())
        bad = os.path.join(self.out, "bad.sqlite")
        open(bad, "w").write("not a database " * 20)
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertEqual(report.main(["--db", bad, "--out", self.out]), 2)
        self.assertIn("not a usable fftune database", err.getvalue())

    def test_a_family_without_a_section_of_its_own_gets_the_generic_one(self):
        fixture = report.load_records([FIXTURE], None, None)[0]

        def dot(ranks, n, key, ms):
            r = json.loads(json.dumps(fixture))  # machine and provenance of a real record
            r["problem"] = {"kind": "dot", "ranks": ranks, "length": [n], "precision": "double"}
            r["config"] = {"backend": "fftw", "reduction": key}
            r["key"] = f"fftw/{key}"
            r["timing"] = {"total": {"median": ms, "ci99": [0.9 * ms, 1.1 * ms]}, "phases": {}, "phase_order": []}
            return r

        records = [dot(1, n, k, ms * n) for n in (100, 1000) for k, ms in (("allreduce", 1.0), ("reduce_bcast", 3.0))]
        records.append(fixture)
        desc = {"dot": {"name": "dot", "summary": "a test family", "config_axes": ["reduction"],
                        "problem_axes": [{"name": "length", "role": "size"}, {"name": "precision", "role": "category"}]}}
        figures = report.report(records, self.out, "mixed", descriptions=desc)
        self.assertEqual([f[0] for f in figures["dot"]], ["dot_total_r1_double"])
        self.assertEqual(figures["dot"][0][2], ["fftw/allreduce", "fftw/reduce_bcast"])
        self.assertIn("fft3d", figures)
        page = open(os.path.join(self.out, "report.md")).read()
        self.assertIn("## Problem family dot: a test family", page)
        self.assertIn("| ranks | length | precision | best | ms | runner-up |", page)
        self.assertIn("| 1 | 1000 | double | `fftw/allreduce` | 1000 | `fftw/reduce_bcast` | 200.0% | faster | 2 |", page)
        # Without a description the sizes are the fields that hold lists of numbers.
        self.assertEqual(report.axes_of("dot", records[:4], {}), (["length"], ["precision"]))


FAMILIES = os.path.join(os.path.dirname(__file__), "testdata", "families.jsonl.gz")  # krylov, convolution, poisson: 2 ranks


class FigureRulesTest(unittest.TestCase):
    """The figure rules of issue 43, checked on the Figure objects the report drew:
    real tick labels (sizes, configuration names), bars sorted fastest on top,
    legends off the data, distinct (marker, line style) per line."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        report.KEEP = {}

    def tearDown(self):
        for fig in report.KEEP.values():
            report.plt.close(fig)
        report.KEEP = None
        self.tmp.cleanup()

    def draw(self, records, **kw):
        """{name: Figure} of a report of `records`, each checked against the rules every figure keeps."""
        report.KEEP.clear()
        report.report(records, self.tmp.name, "rules", **kw)
        for name, fig in report.KEEP.items():
            with self.subTest(figure=name):
                self.assert_readable(fig)
        return dict(report.KEEP)

    def assert_readable(self, fig):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                shown = [t.get_text() for t in axis.get_ticklabels() if t.get_visible()]
                if axis is ax.yaxis and not ax.yaxis.get_tick_params().get("labelleft", True):
                    continue  # a panel that shares its neighbour's rows
                self.assertTrue(any(shown), f"no tick labels on {axis.axis_name} of '{ax.get_title() or fig.get_suptitle()}'")
            self.assertTrue(ax.get_title() or fig.get_suptitle(), "a figure states its question")
            self.assertTrue(ax.get_xlabel(), "the value axis names its unit")
            legend = ax.get_legend()
            if legend:
                a, b = ax.get_window_extent(renderer), legend.get_window_extent(renderer)
                self.assertTrue(b.x0 >= a.x1 or b.x1 <= a.x0 or b.y0 >= a.y1 or b.y1 <= a.y0,
                                f"legend {b} over the data area {a} of '{ax.get_title()}'")

    def assert_bars(self, ax, names, references=()):
        """One bar per configuration, sorted fastest on top, the names as tick labels, the best highlighted."""
        self.assertTrue(ax.yaxis_inverted(), "the first bar is drawn on top")
        labels = [t.get_text().replace("\n", "") for t in ax.get_yticklabels()]
        self.assertEqual(sorted(labels), sorted(names))
        self.assertEqual(list(ax.get_yticks()), list(range(len(labels))))
        bars = sorted(ax.patches, key=lambda p: p.get_y())
        widths = [p.get_width() for p in bars]
        self.assertEqual(widths, sorted(widths), f"bars not sorted: {list(zip(labels, widths))}")
        best = next(i for i, l in enumerate(labels) if l not in references)
        self.assertNotEqual(bars[best].get_facecolor(), next(p.get_facecolor() for i, p in enumerate(bars) if i != best and labels[i] not in references))
        self.assertEqual(ax.get_yticklabels()[best].get_fontweight(), "bold")
        return labels

    def assert_lines(self, ax, sizes, series=None):
        """Ticks at the measured sizes with their labels; every line its own (marker, line style)."""
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()], sizes)
        self.assertEqual(ax.xaxis.get_minorticklocs().size, 0)
        handles, labels = ax.get_legend_handles_labels()
        self.assertIsNotNone(ax.get_legend(), "many lines need a legend")
        lines = [h[0] if isinstance(h, tuple) or hasattr(h, "lines") else h for h in handles]
        styles = [(l.get_marker(), l.get_linestyle()) for l, n in zip(lines, labels) if not n.startswith("floor")]
        self.assertEqual(len(set(styles)), len(styles), f"lines share a (marker, line style): {styles}")
        if series is not None:
            self.assertEqual(sorted(n for n in labels if not n.startswith("floor")), sorted(series))
        return labels

    def test_fft3d_lines_over_sizes_and_bars_at_one_size(self):
        records = report.load_records([FIXTURE], None, None)
        figs = self.draw(records)
        labels = self.assert_lines(figs["total_r2_double_forward"].axes[0], ["128³", "256x128x128", "256x256x128"])
        self.assertIn("reference: cuFFT 3D, one GPU", labels)
        self.assertIn("slab_2d1d/default", labels)
        self.assert_lines(figs["relative_r2_double_forward"].axes[0], ["128³", "256x128x128", "256x256x128"])
        self.assertIn("which decomposition/layout is fastest at each size?", figs["total_r2_double_forward"].axes[0].get_title())
        methods = figs["methods_r2_double_forward"].axes[0]
        names = self.assert_bars(methods, [l.get_text().replace("\n", "") for l in methods.get_yticklabels()])
        self.assertEqual(names[0], "slab_2d1d/default: nccl_a2a")  # the winners table's best at 256x256x128
        phases = [t.get_text().split("\n") for t in figs["phases_r2_double_forward"].axes[0].get_yticklabels()]
        self.assertEqual([p[0] for p in phases], ["128³", "256x128x128", "256x256x128"])
        # Two sizes of the same work keep their own ticks (the axis turns categorical).
        turned = json.loads(json.dumps([r for r in records if r["problem"]["size"] == [256, 128, 128]]))
        for r in turned:
            r["problem"]["size"] = [128, 256, 128]
        ax = self.draw(records + turned)["total_r2_double_forward"].axes[0]
        self.assert_lines(ax, ["128³", "128x256x128", "256x128x128", "256x256x128"])
        self.assertEqual(list(ax.get_xticks()), [0, 1, 2, 3])
        # One size: bars, the reference among them (grey), fastest first.
        at128 = [r for r in records if r["problem"]["size"] == [128] * 3]
        figs = self.draw(at128)
        ax = figs["total_r2_double_forward"].axes[0]
        names = self.assert_bars(ax, [l.get_text().replace("\n", "") for l in ax.get_yticklabels()],
                                 references={"reference: cuFFT 3D, one GPU"})
        self.assertIn("reference: cuFFT 3D, one GPU", names)
        self.assertEqual({"slab_2d1d/default", "pencil/realigned"} - set(names), set())
        self.assertIn("fft3d 128³, 2 ranks, double forward: which decomposition/layout is fastest?", ax.get_title())
        self.assert_bars(figs["relative_r2_double_forward"].axes[0], names[:0] + [n for n in names if not n.startswith("reference")])

    def test_generic_section_bars_at_one_size(self):
        records = [r for r in report.load_records([FAMILIES], None, None) if r["problem"]["kind"] == "poisson"]
        figs = self.draw(records)
        self.assertEqual(list(figs), ["poisson_total_r2_free_hockney_double"])
        ax = figs["poisson_total_r2_free_hockney_double"].axes[0]
        names = self.assert_bars(ax, {r["key"] for r in records})
        fastest = min(records, key=lambda r: r["timing"]["total"]["median"])
        self.assertEqual(names[0], fastest["key"])
        self.assertTrue(ax.get_title().startswith("poisson 20x18x16, 2 ranks, boundary free, kernel hockney, precision double: "
                                                  "which configuration is fastest?"), ax.get_title())

    def test_generic_section_lines_keep_the_fastest_ten(self):
        fixture = report.load_records([FIXTURE], None, None)[0]

        def dot(n, i):
            r = json.loads(json.dumps(fixture))
            r["problem"] = {"kind": "dot", "ranks": 2, "length": [n], "precision": "double"}
            r["key"] = r["config"] = f"fftw/way{i:02d}"
            ms = n * (1 + i / 10)
            r["timing"] = {"total": {"median": ms, "ci99": [0.95 * ms, 1.05 * ms]}, "phases": {}, "phase_order": []}
            return r

        records = [dot(n, i) for n in (100, 1000, 10000) for i in range(14)]
        figs = self.draw(records)
        ax = figs["dot_total_r2_double"].axes[0]
        self.assert_lines(ax, ["100", "1000", "10000"], [f"fftw/way{i:02d}" for i in range(10)])
        self.assertEqual(ax.get_legend().get_title().get_text(), "fastest 10 of 14, fastest first")
        self.assertEqual(ax.get_xscale(), "log")  # sizes span decades

    def test_more_than_ten_lines_stay_distinguishable(self):
        series = {f"c{i}": {x: (x * (1 + i), None, None) for x in (8, 64, 512)} for i in range(30)}
        fig, shown = report.lines_figure(series, {8: "2³", 64: "4³", 512: "8³"}, "t", "ms", "size", top=30)
        self.assertEqual(len(shown), 30)
        self.assert_readable(fig)
        self.assert_lines(fig.axes[0], ["2³", "4³", "8³"], list(series))
        report.plt.close(fig)

    def test_krylov_bars_at_one_size_lines_over_sizes(self):
        records = [r for r in report.load_records([FAMILIES], None, None) if r["problem"]["kind"] == "krylov"]
        figs = self.draw(records)
        ax = figs["krylov_cg_poisson7_r2"].axes[0]
        names = self.assert_bars(ax, {r["key"] for r in records})
        self.assertRegex(ax.texts[0].get_text(), r"^[\d.]+ \(floor [\d.]+\)$")  # value and floor beside the bar
        self.assertIn("16³: which configuration is fastest?", ax.get_title())
        bigger = json.loads(json.dumps(records))
        for r in bigger:
            r["problem"]["size"] = [32] * 3
            r["timing"]["total"] = {k: [x * 8 for x in v] if isinstance(v, list) else v * 8 for k, v in r["timing"]["total"].items()}
        odd = json.loads(json.dumps(records))  # a non-cubic grid (issue 45) is labelled by its extents
        for r in odd:
            r["problem"]["size"] = [12, 10, 14]
            r["timing"]["total"] = {k: [x / 2 for x in v] if isinstance(v, list) else v / 2 for k, v in r["timing"]["total"].items()}
        figs = self.draw(records + bigger + odd)
        labels = self.assert_lines(figs["krylov_cg_poisson7_r2"].axes[0], ["12×10×14", "16³", "32³"])
        self.assertEqual([l for l in labels if not l.startswith("floor")], names[:10])  # the fastest ten, fastest first
        self.assertIn("floor: fewest bytes ÷ copy rate", labels)

    def test_convolution_time_and_error_on_the_same_rows(self):
        records = [r for r in report.load_records([FAMILIES], None, None) if r["problem"]["kind"] == "convolution"]
        figs = self.draw(records)
        fig = figs["convolution_16_gaussian_blobs_r2"]
        t, e = fig.axes
        names = self.assert_bars(t, {"exact/a2a_sync/fftw", "octree/coarse/fftw", "octree/fine/fftw", "octree/full/fftw"})
        self.assertTrue(e.get_shared_y_axes().joined(e, t))  # the error panel reads its names off the time panel's rows
        error = {r["key"]: r["validation"]["checks"][0]["max_rel_error"] for r in records}
        # Round-off (below 1e-12) sits a decade below the smallest real error, written as it is.
        floor = min(v for v in error.values() if v >= 1e-12) / 10
        self.assertEqual([p.get_width() for p in sorted(e.patches, key=lambda p: p.get_y())],
                         [max(error[n], floor) for n in names])
        self.assertEqual(e.get_xscale(), "log")
        lo, hi = e.get_xlim()
        self.assertLess(hi / lo, 1e6, "the error axis spans the errors measured, not 15 decades")
        written = {t.get_text() for t in e.texts}
        for n in names:
            v = error[n]
            self.assertIn("0" if v == 0 else f"{v:.2g}", written)
        self.assertIn("which configuration is fastest", fig.get_suptitle())

    def test_convolution_non_cubic_grid_is_a_problem_of_its_own(self):
        records = [r for r in report.load_records([FAMILIES], None, None) if r["problem"]["kind"] == "convolution"]
        odd = json.loads(json.dumps(records))  # issue 45: Nx x Ny x Nz grids
        for r in odd:
            r["problem"]["size"] = [40, 24, 56]
        figs = self.draw(records + odd)
        self.assertIn("convolution_16_gaussian_blobs_r2", figs)
        fig = figs["convolution_40x24x56_gaussian_blobs_r2"]
        self.assertIn("convolution 40x24x56 gaussian blobs", fig.get_suptitle())
        self.assertIn("convolution 16³ gaussian blobs", figs["convolution_16_gaussian_blobs_r2"].get_suptitle())


if __name__ == "__main__":
    unittest.main()
