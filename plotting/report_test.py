"""Tests of plotting/report.py on a committed fixture (a slice of the H200 results)."""
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
        names = {name: series for _, (name, paths, series) in figures}
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

    def test_cufftxt_is_a_reference_line_not_a_contender(self):
        records = report.load_records([FIXTURE], None, None)
        ref3d = next(r for r in records if r["config"]["decomposition"] == "reference_3d" and r["problem"]["ranks"] == 1)
        xt = json.loads(json.dumps(ref3d))
        xt["config"]["decomposition"] = "reference_cufftxt"
        xt["key"] = "cuda/reference_cufftxt/default/1x1/none/host"
        xt["timing"]["devices"] = 4
        xt["timing"]["total"]["median"] = ref3d["timing"]["total"]["median"] / 100  # faster than anything
        figures = report.report(records + [xt], self.out, "fixture")
        names = {name: series for _, (name, paths, series) in figures}
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
        table = report.memory_table(records + [big, refused, other_skip])
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

    def test_winner_verdicts(self):
        rows = report.winner_rows(report.load_records([FIXTURE], None, None))
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


if __name__ == "__main__":
    unittest.main()
