"""Tests of plotting/tuning_report.py on records whose answers are known."""
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr

sys.path.insert(0, os.path.dirname(__file__))
import report  # noqa: E402
import tuning_report  # noqa: E402


def record(size, key, ms, passed=True, warmup=3, iterations=15, wall=(10, 5, 40, 8)):
    return {"status": "ok" if passed is not False else "failed", "key": key,
            "problem": {"kind": "fft3d", "size": [size] * 3, "precision": "double", "direction": "forward", "ranks": 2,
                        "ranks_per_node": 2},
            "validation": {"passed": passed},
            "timing": {"total": {"median": ms}, "warmup": warmup, "iterations": iterations,
                       "wall_ms": dict(zip(("setup", "prepare", "timed", "validate"), wall))}}


def write(folder, rounds, name="t"):
    for k, recs in rounds.items():
        os.makedirs(os.path.join(folder, f"round{k}"), exist_ok=True)
        for path in (f"{name}.jsonl", f"{name}-r2.jsonl"):  # the merged file and a job's: one counts
            with open(os.path.join(folder, f"round{k}", path), "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in recs)


class TuningReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.ex, self.screen, self.out = (os.path.join(d, n) for n in ("ex", "screen", "out"))
        # 64^3: a is best (1.0), b 1.2; a failing c at 0.5 is no best. 32^3: b best (1.9).
        write(self.ex, {0: [record(64, "a", 1.0), record(64, "b", 1.2), record(64, "c", 0.5, passed=False),
                            record(32, "a", 2.0), record(32, "b", 1.9)]})
        # The screening round (unvalidated) saw a fastest at 64^3; round 1 validated b there.
        write(self.screen, {0: [record(s, k, 0.9, passed=None, warmup=0, iterations=3, wall=(10, 5, 8, 0))
                                for s in (64, 32) for k in "ab"],
                            1: [record(64, "b", 1.25), record(32, "b", 1.9)]})
        report.KEEP = {}

    def tearDown(self):
        report.KEEP = None
        self.tmp.cleanup()

    def test_picks_come_from_validated_rounds_judged_with_exhaustive_times(self):
        best, summary, ex_cost = tuning_report.compare(tuning_report.load_rounds(self.ex),
                                                       {"screen": tuning_report.load_rounds(self.screen)})
        self.assertEqual(sorted(k for _, k in best.values()), ["a", "b"])
        s = summary["screen"]
        self.assertEqual(sorted(s["picks"].values()), ["b", "b"])
        self.assertEqual(sorted(round(v, 6) for v in s["ratios"].values()), [1.0, 1.2])  # 1.2 / 1.0 at 64^3
        self.assertEqual((s["within5"], s["within10"], s["missing"]), (1, 1, 0))
        self.assertAlmostEqual(s["worst"], 1.2)
        self.assertAlmostEqual(s["mean"], 1.1)
        # Exhaustive: 5 points of 63 ms wall, 40 ms timed, 18 calls; screen: 4 of 23/8/3 and 2 of 63/40/18.
        for got, want in zip(ex_cost, (5 * 0.063, 5 * 0.040, 5 * 18)):
            self.assertAlmostEqual(got, want)
        self.assertAlmostEqual(s["wall"], 100 * (4 * 0.023 + 2 * 0.063) / (5 * 0.063))
        self.assertAlmostEqual(s["timed"], 100 * (4 * 0.008 + 2 * 0.040) / (5 * 0.040))
        self.assertAlmostEqual(s["iterations"], 100 * (4 * 3 + 2 * 18) / (5 * 18))

    def test_page_and_figure(self):
        self.assertEqual(tuning_report.main(["--exhaustive", self.ex, "--strategy", f"screen={self.screen}",
                                             "--out", self.out]), 0)
        with open(os.path.join(self.out, "tuning.md")) as f:
            page = f.read()
        self.assertIn("| screen | 1 of 2 | 1 | 1.100 | 1.200 |", page)
        self.assertIn("![cost and pick quality](tuning_strategies.png)", page)
        fig = report.KEEP["tuning_strategies"]
        ax = fig.axes[0]
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for axis in (ax.xaxis, ax.yaxis):
            self.assertTrue(any(t.get_text() for t in axis.get_ticklabels()), axis.axis_name)
        legend = ax.get_legend()
        self.assertEqual([t.get_text() for t in legend.get_texts()][0], "screen")
        a, b = ax.get_window_extent(renderer), legend.get_window_extent(renderer)
        self.assertGreaterEqual(b.x0, a.x1, "the legend covers no data")

    def test_bad_input_is_refused_with_a_message(self):
        for args, message in ((["--strategy", "screen"], "give NAME=FOLDER"),
                              (["--strategy", f"screen={self.out}-missing"], "no round*/*.jsonl records")):
            err = io.StringIO()
            with redirect_stderr(err):
                rc = tuning_report.main(["--exhaustive", self.ex, *args, "--out", self.out])
            self.assertEqual(rc, 2)
            self.assertIn(message, err.getvalue())


if __name__ == "__main__":
    unittest.main()
