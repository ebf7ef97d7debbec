"""test_docs.py - the examples of docs/python.md are real (issue 32): every
```pycon block of the page is a Python session whose printed lines must be
what the page shows, and every ```python block must run without error.
The blocks run in one namespace, top to bottom, as a reader (or a notebook)
would run them, in a temporary folder (the examples write files).

Python's own doctest does the comparing (ELLIPSIS: "..." in an output
stands for any text, for the addresses and long messages); this file only
finds the blocks and says where a failure is (docs/python.md:LINE).  The
page's outputs are the only expected values, so a test below feeds the
checker a page with a wrong output and a failing block and requires it to
fail: a checker that cannot fail proves nothing.

Needs numpy and matplotlib (the page's notebook section uses them; Debian
python3-numpy, python3-matplotlib); skipped without them.  Run by meson
(tests/python in meson.build) as test_collsim.py is; by hand:
  COLLSIM_LIBRARY=build/libcollsim.so.0 PYTHONPATH=python \\
      /usr/bin/python3 tests/python/test_docs.py
"""

import doctest
import io
import os
import re
import sys
import tempfile
import unittest

os.environ.setdefault("MPLBACKEND", "Agg")  # no display: the examples draw off screen
# The examples run in a temporary folder: a relative library path would
# not be found from there.
if os.environ.get("COLLSIM_LIBRARY"):
    os.environ["COLLSIM_LIBRARY"] = os.path.abspath(os.environ["COLLSIM_LIBRARY"])

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DOC = os.path.join(ROOT, "docs", "python.md")

# A fenced block: ```LANG at the start of a line, its body, ``` alone.
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)


def blocks(text):
    """(lang, body, line of the body's first line) of every fenced block."""
    for m in FENCE.finditer(text):
        yield m.group(1), m.group(2), text.count("\n", 0, m.start(2)) + 1


def check_page(text, name):
    """Runs the page's python and pycon blocks in one namespace; returns
    the failures as texts ("NAME:LINE: ..."), empty when all is well, and
    how many blocks ran."""
    globs = {"__name__": "__docs__"}
    parser = doctest.DocTestParser()
    # one failure a block: the examples after it would fail for its sake
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS |
                                   doctest.REPORT_ONLY_FIRST_FAILURE)
    failures, ran = [], 0
    for lang, body, line in blocks(text):
        if lang == "python":
            ran += 1
            try:
                exec(compile("\n" * (line - 1) + body, name, "exec"), globs)
            except Exception as e:  # the reader would see this traceback
                failures.append("%s:%d: the python block raises %r" % (name, line, e))
        elif lang == "pycon":
            ran += 1
            # lineno is 0-based in doctest: its reports then name the page's lines
            test = parser.get_doctest(body, globs, name, name, line - 1)
            out = io.StringIO()
            before = runner.failures
            runner.run(test, out=out.write, clear_globs=False)
            globs.update(test.globs)  # the next block sees this one's names
            if runner.failures > before:
                failures.append(out.getvalue())
    return failures, ran


class Page(unittest.TestCase):
    def setUp(self):
        for mod in ("numpy", "matplotlib"):
            try:
                __import__(mod)
            except ImportError:
                self.skipTest("%s is not installed (Debian python3-%s)" % (mod, mod))
        self.cwd = os.getcwd()
        self.dir = tempfile.TemporaryDirectory(prefix="collsim-docs-")
        os.chdir(self.dir.name)

    def tearDown(self):
        os.chdir(self.cwd)
        self.dir.cleanup()

    def test_python_md_outputs_are_real(self):
        with open(DOC, encoding="utf-8") as f:
            text = f.read()
        failures, ran = check_page(text, "docs/python.md")
        self.assertFalse(failures, "\n".join(failures))
        # the page's sessions: a first run, Machine/Request, the notebook's two, errors
        self.assertGreaterEqual(ran, 5)
        # what the examples write is there (the session really ran)
        self.assertTrue(os.path.getsize("reduce.png") > 0)
        self.assertTrue(os.path.getsize("sweep-and-heatmap.png") > 0)

    def test_the_checker_fails_on_a_wrong_page(self):
        page = ("text\n\n```pycon\n>>> x = 6 * 7\n>>> print(x)\n41\n```\n\n"
                "```python\nraise ValueError('no')\n```\n\n"
                "```pycon\n>>> print(x + 1)\n43\n>>> print('a long line')\na ... line\n```\n"
                "```sh\nthis is not run\n```\n")
        failures, ran = check_page(page, "wrong.md")
        self.assertEqual(ran, 3)
        self.assertEqual(len(failures), 2, failures)
        # the wrong output, at its line, with what was printed instead
        self.assertIn('File "wrong.md", line 5', failures[0])
        self.assertIn("41", failures[0])
        self.assertIn("42", failures[0])
        self.assertIn("wrong.md:10: the python block raises ValueError('no')", failures[1])
        # x carried over from the first block: the third one passed


if __name__ == "__main__":
    # One line in Criterion's format so that tools/test counts these cases
    # (as test_collsim.py does).
    result = unittest.main(exit=False, verbosity=2).result
    failed = len(result.failures) + len(result.unexpectedSuccesses)
    crashed = len(result.errors)
    ran = result.testsRun - len(result.skipped)
    print("[====] Synthesis: Tested: %d | Passing: %d | Failing: %d | Crashing: %d"
          % (ran, ran - failed - crashed, failed, crashed))
    sys.exit(0 if result.wasSuccessful() else 1)
