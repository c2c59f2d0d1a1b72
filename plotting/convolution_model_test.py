"""Tests of plotting/convolution_model.py: the ported tiling against counts by hand and the records, the fit
on synthetic records from known parameters, and the figure."""
import glob
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(__file__))
import convolution_model as cm  # noqa: E402
from report import read_records  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results", "h200x1-2026-11-26-convolution")
TRUE = {"c_fft": 2e-12, "kappa": 1.3, "c_w": 2e-6, "c_s": 5e-6, "c_i": 1e-6, "c_o": 3e-6}
BETA_X, BETA_S = {"a2a_sync": 3e6, "nccl_a2a": 2e8}, {"mpi": 2e6}  # bytes/ms


def record(n, p, method, per_node, key, phases, total):
    return {"status": "ok", "validation": {"passed": True}, "machine": {"fingerprint": "m", "gpu_count": 1},
            "problem": {"kind": "convolution", "size": [n] * 3, "ranks": p, "ranks_per_node": per_node,
                        "kernel": "gaussian", "input": "blobs"},
            "config": {"method": method, **({"sampling": key} if method == "octree" else {"redistribution": key})},
            "timing": {"total": {"median": total}, "phases": {k: {"median": v} for k, v in phases.items()}}}


def synthetic():
    """Records of 2 ranks sharing a GPU (and exact at 1 rank) timed by the model with TRUE."""
    out = []
    for n in (32, 48, 64):
        out.append(record(n, 1, "exact", 1, "a2a_sync", {}, TRUE["kappa"] * TRUE["c_fft"] * cm.geometry((n,) * 3, 1, "full")["work"]))
        for t, b in BETA_X.items():
            out.append(record(n, 2, "exact", 2, t, {}, cm.predict(TRUE, (n,) * 3, 2, 2, "full", b, 1)["exact"]))
        for s in ("full", "fine", "coarse"):
            pr = cm.predict(TRUE, (n,) * 3, 2, 2, s, 1, BETA_S["mpi"])
            ph = {"forward": pr["fft"] / 2, "kernel": 0.0, "inverse": pr["fft"] / 2,
                  **{k: pr[k] for k in ("sample", "exchange", "interpolate")}}
            out.append(record(n, 2, "octree", 2, s, ph, pr["octree"]))
    return out


class TilingTest(unittest.TestCase):
    def test_sample_coords_and_their_count(self):
        self.assertEqual(cm.sample_coords(0, 4, 2), [0, 2, 3])
        self.assertEqual(cm.sample_coords(4, 6, 2), [4, 5])  # a cell clipped at the axis's end
        self.assertEqual(cm.sample_coords(8, 12, 8), [8, 11])  # any rate >= 3 keeps a 4-cell's two ends
        self.assertEqual(cm.sample_coords(3, 4, 4), [3])
        for lo in range(3):
            for hi in range(lo + 1, lo + 9):
                for s in (1, 2, 3, 4, 8):
                    self.assertEqual(cm.coord_count(lo, hi, s), len(cm.sample_coords(lo, hi, s)))

    def test_a_16_plane_slab_pair_at_2_ranks_by_hand(self):
        # 32x16x16 at 2 ranks: rank 1's slab (x 16..31) as 4 x-cells, 0..3 cells from rank 0's, each with
        # 4 x 4 cells across y-z. Per cell: rate 1 64, rate 2 3^3 = 27, rate 4 or 8 2^3 = 8 samples.
        region, source = cm.slab((32, 16, 16), 2, 1), cm.slab((32, 16, 16), 2, 0)
        cells = cm.tile(region, source, "coarse")
        self.assertEqual(len(cells), 64)
        self.assertEqual(sorted({(lo[0], s) for lo, _, s in cells}), [(16, 2), (20, 4), (24, 8), (28, 8)])
        self.assertEqual(cm.sample_count(cells), 16 * (27 + 8 + 8 + 8))  # 816
        self.assertEqual(cm.sample_count(cm.tile(region, source, "fine")), 16 * (64 + 27 + 8 + 8))  # 1712
        self.assertEqual(cm.sample_count(cm.tile(region, source, "full")), 16 ** 3)
        # 6 along y: y-cells of 4 and 2 points; at rate 2 they keep 3 and 2 coordinates.
        self.assertEqual(cm.sample_count(cm.tile(((16, 0, 0), (20, 6, 4)), source, "coarse")), 3 * (3 + 2) * 3)

    def test_the_separable_count_is_the_tiling(self):
        for n in ((16, 16, 16), (20, 9, 7), (21, 18, 23), (11, 10, 10), (13, 5, 6)):
            for p in range(1, 5):
                for s in cm.SCHEMES:
                    t, x = cm.exchange(n, p, s)
                    for q in range(p):
                        for r in range(p):
                            cells = cm.tile(cm.slab(n, p, r), cm.slab(n, p, q), s) if q != r else []
                            planes = {c for lo, hi, rate in cells for c in cm.sample_coords(lo[0], hi[0], rate)}
                            self.assertEqual((t[q, r], x[q, r]), (cm.sample_count(cells), len(planes)), (n, p, s, q, r))

    def test_exact_bytes_by_hand(self):
        # M = 6x4x4 at 3 ranks: x planes 2, 2, 2; y planes 2, 1, 1 of 4; Mz/2 + 1 = 3. Rank 0 sends
        # 2·(4 − 2) + 2·(6 − 2) = 12 columns of 3 complex values.
        self.assertEqual(cm.exact_bytes((3, 2, 2), 3), 12 * 3 * 16)
        self.assertEqual(cm.exact_bytes((256,) * 3, 2), 538968064)  # the H200 records' sent_bytes_max_rank

    def test_counts_match_the_records(self):
        # samples_sent (rank 0's, which writes the record) of the H200 records, 2 ranks:
        for n, s, want in ((128, "fine", 207872), (128, "coarse", 150528), (256, "fine", 1355776),
                           (512, "coarse", 8699904), (576, "fine", 13499136), (576, "full", 95551488)):
            self.assertEqual(cm.geometry((n,) * 3, 2, s)["S0"], want)

    @unittest.skipUnless(glob.glob(os.path.join(RESULTS, "*.jsonl.gz")), "no H200 convolution records here")
    def test_every_committed_record(self):
        seen = 0
        for r in read_records(sorted(glob.glob(os.path.join(RESULTS, "*.jsonl.gz"))), None):
            c, p = r.get("convolution"), r["problem"]
            if not c:
                continue
            g = cm.geometry(p["size"], p["ranks"], r["config"].get("sampling", "full"))
            octree = r["config"]["method"] == "octree"
            self.assertEqual(c["sent_bytes_max_rank"], 8 * g["S"] if octree else g["B"])
            self.assertEqual(c["samples_sent"], g["S0"] if octree else 0)
            seen += 1
        self.assertGreaterEqual(seen, 50)


class ModelTest(unittest.TestCase):
    def test_the_fit_recovers_known_parameters(self):
        par = cm.fit(cm.points(synthetic())["m"])
        for k, v in TRUE.items():
            self.assertAlmostEqual(par[k] / v, 1, places=6, msg=k)
        for k, v in {**BETA_X, **BETA_S}.items():
            self.assertAlmostEqual((par["beta_x"] | par["beta_s"])[k] / v, 1, places=6, msg=k)

    def test_pruned_records_stay_out_of_the_fit(self):
        recs = synthetic()
        for r in [r for r in recs if r["config"]["method"] == "octree"]:  # the same points, pruned: half the fft time
            q = json.loads(json.dumps(r))
            q["config"]["local_transform"] = "pruned"
            for k in ("forward", "inverse"):
                q["timing"]["phases"][k]["median"] /= 2
            recs.append(q)
        par = cm.fit(cm.points(recs)["m"])
        self.assertAlmostEqual(par["c_fft"] / TRUE["c_fft"], 1, places=6)

    def test_check_predicts_pruned_points_from_the_full_fit(self):
        recs = synthetic()
        for r in [r for r in recs if r["config"]["method"] == "octree"]:  # timed by the model, pruned
            n, p, s = tuple(r["problem"]["size"]), r["problem"]["ranks"], r["config"]["sampling"]
            pr = cm.predict(TRUE, n, p, 2, s, 1, BETA_S["mpi"], pruned=True)
            q = json.loads(json.dumps(r))
            q["config"]["local_transform"] = "pruned"
            q["timing"]["phases"]["forward"]["median"] = q["timing"]["phases"]["inverse"]["median"] = pr["fft"] / 2
            q["timing"]["total"]["median"] = pr["octree"]
            recs.append(q)
        with redirect_stdout(io.StringIO()) as out:
            rows = cm.check(recs)
        pruned = [r for r in rows if r[4].endswith(" pruned")]
        self.assertEqual(len(pruned), 3 * 3 * 2)
        self.assertTrue(all(abs(r[12]) < 1e-6 for r in rows))
        self.assertIn("36 of 36 ratios within 25%", out.getvalue())
        # 2 even ranks: 1/4 of Mx's planes are a rank's own; the fraction of the passes (pruned_fraction).
        self.assertAlmostEqual(cm.pruned_fraction(0.25), (1 + 0.25 + 0.125 + 0.375 + 1 + 1.75) / 7)
        self.assertLess(cm.geometry((64,) * 3, 4, "coarse")["pruned"], cm.geometry((64,) * 3, 2, "coarse")["pruned"])

    def test_check_predicts_other_sizes_exactly_on_model_data(self):
        with redirect_stdout(io.StringIO()) as out:
            rows = cm.check(synthetic())
        self.assertEqual(len(rows), 3 * 3 * 2)  # sizes × samplings × exact transports
        self.assertTrue(all(r[-1] == "other sizes" and abs(r[12]) < 1e-6 for r in rows))
        self.assertIn("18 of 18 ratios within 25%", out.getvalue())
        recs = synthetic()  # an octree exchanging through a transport exact measured too: paired with it alone
        for r in recs:
            r["config"]["redistribution"] = r["config"].get("redistribution", "nccl_a2a")
        with redirect_stdout(io.StringIO()):
            rows = cm.check(recs)
        self.assertEqual((len(rows), {r[5] for r in rows}), (9, {"nccl_a2a"}))

    def test_crossover(self):
        self.assertEqual(cm.crossover([(2, 0.5, True), (8, 2.0, True)]), "4 (octree wins below)")
        self.assertEqual(cm.crossover([(2, 1.5, True), (8, 2.0, True)]), "none: exact faster at every P")


class PlotTest(unittest.TestCase):
    def test_the_figure_and_its_file(self):
        par = cm.fit(cm.points(synthetic())["m"])
        links = [("NVLink", 3e8), ("InfiniBand 25 GB/s", 2.5e7)]
        data = cm.curves(par, links, "coarse", 64, 16, 1e9)
        self.assertEqual(max(p for p, *_ in data[("strong", "NVLink", "as built")]), 64)  # P <= Nx
        self.assertEqual(max(p for p, *_ in data[("weak", "NVLink", "pruned")]),  # the last P with Nx >= P
                         max(p for p in cm.P_GRID if round(16 * p ** (1 / 3)) >= p))
        fig = cm.figure(data, links, "coarse", 64, 16, "t")
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            self.assertEqual((ax.get_xscale(), ax.get_yscale()), ("log", "log"))
            self.assertIn("64", [t.get_text() for t in ax.get_xticklabels()])
            self.assertTrue(any(list(line.get_ydata()) == [1, 1] for line in ax.get_lines()), "the line at 1")
        self.assertIn("1", [t.get_text() for t in fig.axes[0].get_yticklabels()])  # shared by the right panel
        legend = fig.axes[1].get_legend()
        self.assertGreaterEqual(legend.get_window_extent(renderer).x0, fig.axes[1].get_window_extent(renderer).x1)
        with tempfile.TemporaryDirectory() as d:
            src, png = os.path.join(d, "r.jsonl"), os.path.join(d, "model.png")
            with open(src, "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in synthetic())
            with redirect_stdout(io.StringIO()) as out:
                self.assertEqual(cm.main(["--plot", png, src, "--nvlink-gbps", "300", "--strong-n", "64", "--weak-n", "16"]), 0)
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            self.assertIn("crossover, strong scaling, InfiniBand 25 GB/s, octree pruned: P = ", out.getvalue())
            err = io.StringIO()
            with redirect_stderr(err):
                self.assertEqual(cm.main([src]), 2)
            self.assertIn("nothing to do", err.getvalue())


if __name__ == "__main__":
    unittest.main()
