"""test_cell_rules.py - the reading rules of tools/cell_table.py (the Cell
paper's table, issue 33) on made-up numbers on both sides of every
tolerance and range rule.  The expected verdicts come from the rules as the
table's header states them (10% for equality, strict for "beats" and
"best", the latency ratio for "up to X%"), computed here by hand, not by the
module under test.

Run by meson (tests/tools in meson.build); by hand:
  python3 tests/tools/test_cell_rules.py
"""

import importlib.util
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location(
    "cell_table", os.path.join(HERE, "..", "..", "tools", "cell_table.py"))
ct = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(ct)

IN, OUT = 1.0999, 1.1001  # just inside and just outside the 10% tolerance


class Equal(unittest.TestCase):
    def test_both_sides(self):
        self.assertTrue(ct.equal(225, 225 * IN))
        self.assertFalse(ct.equal(225, 225 * OUT))
        # symmetric: the larger against the smaller, whichever comes first
        self.assertTrue(ct.equal(525 * IN, 525))
        self.assertFalse(ct.equal(525 * OUT, 525))
        self.assertTrue(ct.equal(3.0, 3.0))

    def test_one_tolerance(self):
        self.assertEqual(ct.EQUAL_TOL, 0.10)

    def test_constant(self):
        self.assertTrue(ct.constant([1000, 1000 * IN, 1030, 1000]))
        self.assertFalse(ct.constant([1000, 1000 * OUT, 1030]))
        self.assertTrue(ct.constant([912.5]))


class Beats(unittest.TestCase):
    def test_strict(self):
        self.assertTrue(ct.beats(99.9, 100))
        self.assertFalse(ct.beats(100, 100))
        self.assertFalse(ct.beats(100.1, 100))


class Best(unittest.TestCase):
    def test_every_size(self):
        g = {16: {"rdb": 1, "h": 2}, 32: {"rdb": 3, "h": 4}}
        ok, w = ct.best_in_range(g, "rdb")
        self.assertTrue(ok)
        self.assertEqual(w, {16: "rdb", 32: "rdb"})

    def test_one_size_lost(self):
        g = {16: {"rdb": 1, "h": 2}, 32: {"rdb": 4.001, "h": 4}}
        ok, w = ct.best_in_range(g, "rdb")
        self.assertFalse(ok)
        self.assertEqual(w[32], "h")

    def test_tie_is_not_best(self):
        ok, _ = ct.best_in_range({16: {"rdb": 2, "h": 2}}, "rdb")
        self.assertFalse(ok)
        ok, _ = ct.best_in_range({16: {"h": 2, "rdb": 2}}, "rdb")
        self.assertFalse(ok)

    def test_range(self):
        self.assertEqual(ct.in_range(4096, None), [8192, 16384, 32768])
        self.assertEqual(ct.in_range(None, 2048), [16, 32, 64, 128, 256, 512, 1024, 2048])
        self.assertEqual(ct.in_range(2048, 4096), [4096])
        self.assertEqual(ct.SIZES[0], 16)
        self.assertEqual(ct.SIZES[-1], 32768)


class UpTo(unittest.TestCase):
    def check(self, claimed):
        # the paper's best ratio is 1 - X; ratios within 10% of it either way
        # count, by the equality rule on latencies
        lo, hi = (1 - claimed) / 1.1, (1 - claimed) * 1.1
        for ratio, want in ((lo * 1.0001, True), (lo * 0.9999, False),
                            (hi * 0.9999, True), (hi * 1.0001, False), (1 - claimed, True)):
            old = [1000.0, 2000.0, 4000.0]
            new = [990.0, 2000.0 * ratio, 3990.0]  # the best ratio at one size only
            ok, gain = ct.up_to(new, old, claimed)
            self.assertEqual(ok, want, "claimed %g ratio %g" % (claimed, ratio))
            self.assertAlmostEqual(gain, 1 - ratio)

    def test_claims(self):
        for claimed in (0.35, 0.42, 0.15):
            self.check(claimed)

    def test_bounds_by_hand(self):
        # 35%: ratios 0.5909 ... 0.715, gains 28.5% ... 40.9%
        self.assertTrue(ct.up_to([0.59100], [1.0], 0.35)[0])
        self.assertFalse(ct.up_to([0.59080], [1.0], 0.35)[0])
        self.assertTrue(ct.up_to([0.71490], [1.0], 0.35)[0])
        self.assertFalse(ct.up_to([0.71510], [1.0], 0.35)[0])


class Summary(unittest.TestCase):
    def test_parse(self):
        text = ("finish    149596 ticks = 46.7488 us\n"
                "bif       192 data messages crossed (768 KiB): 96 from chip 0, 96 from chip 1\n"
                "eib       at most 16 DMA gets of data under way on one chip, at most 8 packets\n"
                "average   12494.40 ticks = 3.9045 us (the timed loop's ...)\n")
        r = ct.parse_summary(text, True)
        self.assertAlmostEqual(r["ns"], 12494.40 * 0.3125)
        self.assertEqual(r["bif"], 192)
        self.assertEqual(r["gets"], 16)
        self.assertAlmostEqual(ct.parse_summary(text, False)["ns"], 149596 * 0.3125)
        self.assertIsInstance(ct.parse_summary("nothing\n", True), ct.RunError)


if __name__ == "__main__":
    unittest.main()
