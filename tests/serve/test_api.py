#!/usr/bin/env python3
"""The HTTP API of `collsim serve` (docs/api.md, issue 21), against the real
binary: it is started on a free loopback port (--port 0, the port read from
its first line), every endpoint and every refusal is exercised over HTTP, and
the results are compared with what the command line writes for the same
request (`collsim run --json - --no-timing`).  Python's standard library
only.  COLLSIM names the binary; COLLSIM_SOURCE_ROOT the source tree.

The server runs with small limits so that the limits can be reached fast:
--jobs 1 --max-queue 1 --max-ranks 1024 --max-seconds 3 --max-body 64KiB
--max-iterations 100.
"""
import http.client
import json
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import zlib

COLLSIM = os.environ.get("COLLSIM", "collsim")
ROOT = os.environ.get("COLLSIM_SOURCE_ROOT",
                      os.path.join(os.path.dirname(__file__), "..", ".."))

# A run of several seconds (135 M events; ~6 s in a release build): the
# cancellation and the wall-time limit are seen on it.
LONG = {"machine": "alphabeta:topo=torus,p=1024,rows=32,cols=32", "coll": "alltoall",
        "bytes": "16KiB"}
SMALL = {"machine": "loggp:p=8", "coll": "allreduce", "algo": "ring", "bytes": "1MiB"}


class Server:
    def __init__(self, *args, cwd=None):
        self.tmp = tempfile.TemporaryDirectory(prefix="collsim-serve-test-")
        env = dict(os.environ, TMPDIR=self.tmp.name)
        self.proc = subprocess.Popen(
            [COLLSIM, "serve", "--port", "0", *args], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=env, text=True, cwd=cwd)
        line = self.proc.stdout.readline()
        m = re.match(r"collsim serve: listening on http://127\.0\.0\.1:(\d+)/$", line.strip())
        if not m:
            self.proc.kill()
            raise RuntimeError("no listening line: %r %s" % (line, self.proc.stderr.read()))
        self.port = int(m.group(1))
        self.seen = []  # every answer's body (tests/serve/test_files.py reads them)

    def stop(self):
        """Kills the server if it still runs and removes its folder."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()
        self.tmp.cleanup()

    def request(self, method, path, body=None, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        # every POST says its body is JSON (a POST without is refused with
        # 415: docs/security.md, tests/serve/test_security.py)
        headers = dict(headers or {})
        if method == "POST":
            headers.setdefault("Content-Type", "application/json")
        c.request(method, path, body=body, headers=headers)
        r = c.getresponse()
        data = r.read()
        c.close()
        self.seen.append(data)
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data

    def json(self, method, path, body=None):
        status, headers, data = self.request(method, path, body)
        return status, json.loads(data)

    def submit(self, kind, body):
        status, doc = self.json("POST", "/api/" + kind, body)
        assert status in (200, 202), (status, doc)
        return doc["id"]

    def wait(self, jid, states=("done", "failed", "cancelled"), timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            status, doc = self.json("GET", "/api/jobs/" + jid)
            assert status == 200, doc
            if doc["state"] in states:
                return doc
            time.sleep(0.02)
        raise AssertionError("job %s still %s after %s s" % (jid, doc["state"], timeout))


def png_pixels(data):
    """The pixels of an 8-bit RGB or RGBA PNG as (width, height, rows of
    bytes), decoded here (zlib and the five row filters of the PNG
    specification, section 9), independently of the encoder under test."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line) if bpp == 3 else
                    bytes(v for k, v in enumerate(line) if k % 4 != 3))
        prev = line
    return width, height, rows


def cli_json(*args):
    return subprocess.run([COLLSIM, *args, "--json", "-", "--no-timing"], check=True,
                          capture_output=True).stdout


class TestServe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = Server("--jobs", "1", "--max-queue", "1", "--max-ranks", "1024",
                       "--max-seconds", "3", "--max-body", "64KiB", "--keep", "60",
                       "--max-iterations", "100")

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    def refused(self, status, doc, code, field=None, text=None):
        self.assertEqual(status, code, doc)
        self.assertIn("error", doc)
        self.assertIn("message", doc["error"])
        if field is not None:
            self.assertEqual(doc["error"].get("field"), field, doc)
        if text is not None:
            self.assertIn(text, doc["error"]["message"])

    # ---- the catalogue and the page ----------------------------------------

    def test_01_catalogue(self):
        status, headers, data = self.s.request("GET", "/api/machines")
        self.assertEqual(status, 200)
        self.assertEqual(headers["content-type"], "application/json; charset=utf-8")
        self.assertEqual(headers["x-content-type-options"], "nosniff")
        names = [m["name"] for m in json.loads(data)]
        # the registry, as `collsim list machines` prints it
        listed = subprocess.run([COLLSIM, "list", "machines"], check=True, capture_output=True,
                                text=True).stdout
        self.assertEqual(names, [ln for ln in listed.splitlines() if ln and ln[0] != " "])
        status, algos = self.s.json("GET", "/api/algorithms")
        self.assertEqual(status, 200)
        self.assertIn(("allreduce", "ring"), [(a["collective"], a["name"]) for a in algos])
        status, health = self.s.json("GET", "/api/health")
        self.assertEqual(status, 200)
        self.assertEqual(set(health["jobs"]), {"queued", "running", "done"})
        status, headers, page = self.s.request("GET", "/")
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("text/html"))
        self.assertIn(b"<title>", page)

    # ---- a run: result, cache, figures -------------------------------------

    def test_02_run_result_is_the_cli_json(self):
        status, headers, data = self.s.request("POST", "/api/run", SMALL)
        doc = json.loads(data)
        self.assertIn(status, (200, 202))
        self.assertEqual(headers["location"], "/api/jobs/" + doc["id"])
        self.assertEqual(headers["cache-control"], "no-store")
        job = self.s.wait(doc["id"])
        self.assertEqual(job["state"], "done", job)
        self.assertEqual(job["kind"], "run")
        self.assertEqual(job["progress"], 1.0)
        # the normalised request: defaults filled, the size as an integer
        self.assertEqual(job["request"]["bytes"], 1048576)
        self.assertEqual(job["request"]["mode"], "packet")
        self.assertEqual(job["request"]["order"], "natural")
        status, headers, result = self.s.request("GET", "/api/jobs/%s/result" % doc["id"])
        self.assertEqual(status, 200)
        self.assertEqual(result, cli_json("run", "--machine", "loggp:p=8", "--coll", "allreduce",
                                          "--algo", "ring", "--bytes", "1MiB"))
        # the same request, written differently (a size as an integer, keys
        # in another order): the cache answers with the same done job
        again = {"bytes": 1048576, "algo": "ring", "coll": "allreduce", "machine": "loggp:p=8",
                 "mode": "packet"}
        status, doc2 = self.s.json("POST", "/api/run", again)
        self.assertEqual(status, 200, doc2)
        self.assertEqual(doc2, {"id": doc["id"], "state": "done", "cached": True})
        type(self).run_id = doc["id"]

    def test_03_figures_of_a_run(self):
        jid = self.run_id
        status, headers, svg = self.s.request("GET", "/api/jobs/%s/heatmap.svg" % jid)
        self.assertEqual(status, 200, svg[:200])
        self.assertEqual(headers["content-type"], "image/svg+xml")
        self.assertIn(b"<svg", svg[:400])
        status, headers, png = self.s.request(
            "GET", "/api/jobs/%s/heatmap.png?metric=bytes&window=0:2us" % jid)
        self.assertEqual(status, 200, png[:200])
        self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
        width, height = struct.unpack(">II", png[16:24])
        self.assertGreater(width, 100)
        self.assertGreater(height, 100)
        status, headers, tl = self.s.request("GET", "/api/jobs/%s/timeline.json" % jid)
        self.assertEqual(status, 200)
        events = json.loads(tl)["traceEvents"]
        self.assertTrue(any(e.get("ph") == "X" for e in events))
        status, doc = self.s.json("GET", "/api/jobs/%s/plot.svg" % jid)
        self.refused(status, doc, 404)
        status, doc = self.s.json("GET", "/api/jobs/%s/heatmap.svg?metric=heat" % jid)
        self.refused(status, doc, 400, "metric")
        status, doc = self.s.json("GET", "/api/jobs/%s/heatmap.svg?run=3" % jid)
        self.refused(status, doc, 400, "run")
        status, doc = self.s.json("GET", "/api/jobs/%s/heatmap.svg?colour=red" % jid)
        self.refused(status, doc, 400, "colour")

    def test_03b_program(self):
        with open(os.path.join(ROOT, "traces", "ring4.goal")) as f:
            goal = f.read()
        jid = self.s.submit("run", {"machine": "loggp:p=4", "program": goal})
        job = self.s.wait(jid)
        self.assertEqual(job["state"], "done", job)
        self.assertIsNone(job["request"]["order"])
        status, doc = self.s.json("GET", "/api/jobs/%s/result" % jid)
        cli = json.loads(cli_json("run", "--machine", "loggp:p=4", "--program",
                                  os.path.join(ROOT, "traces", "ring4.goal")))
        self.assertEqual(doc["program"].pop("source"), "<request>")
        cli["program"].pop("source")
        self.assertEqual(doc, cli)
        # a malformed program: the job fails, the message names the request's
        # text and the line, not a temporary file
        jid = self.s.submit("run", {"machine": "loggp:p=4",
                                    "program": "num_ranks 2\nrank 0 {\nbogus line\n}\n"})
        job = self.s.wait(jid)
        self.assertEqual(job["state"], "failed", job)
        self.assertTrue(job["error"]["message"].startswith("<request>:3"), job["error"])

    # ---- compare, sweep, replay --------------------------------------------

    def test_04_compare(self):
        specs = ["loggp:p=8", "alphabeta:topo=ring,p=8"]
        jid = self.s.submit("compare", {"machines": specs, "coll": "allreduce", "algo": "ring",
                                        "bytes": "64KiB"})
        job = self.s.wait(jid)
        self.assertEqual(job["state"], "done", job)
        status, headers, raw = self.s.request("GET", "/api/jobs/%s/result" % jid)
        # the document of `collsim compare --json`, byte for byte
        self.assertEqual(raw, cli_json("compare", "--machines", ";".join(specs), "--coll",
                                       "allreduce", "--algo", "ring", "--bytes", "64KiB"))
        doc = json.loads(raw)
        self.assertEqual((doc["coll"], doc["algo"], doc["bytes"]), ("allreduce", "ring", 65536))
        self.assertEqual(len(doc["runs"]), 2)
        for spec, run in zip(specs, doc["runs"]):
            self.assertEqual(run, json.loads(cli_json("run", "--machine", spec, "--coll",
                                                      "allreduce", "--algo", "ring", "--bytes",
                                                      "64KiB")))
        status, headers, svg = self.s.request("GET", "/api/jobs/%s/plot.svg" % jid)
        self.assertEqual(status, 200)
        self.assertIn(b"<svg", svg[:400])
        status, headers, png = self.s.request("GET", "/api/jobs/%s/heatmap.png?run=1" % jid)
        self.assertEqual(status, 200)
        self.assertEqual(png[:4], b"\x89PNG")

    def test_04b_compare_common_ranks(self):
        # like for like: without "ranks" every machine runs at the most that
        # every one holds (4 here), as `collsim compare` does
        specs = ["loggp:p=8", "alphabeta:topo=ring,p=4"]
        jid = self.s.submit("compare", {"machines": specs, "coll": "allreduce", "algo": "ring",
                                        "bytes": "4KiB"})
        job = self.s.wait(jid)
        self.assertEqual(job["state"], "done", job)
        status, headers, raw = self.s.request("GET", "/api/jobs/%s/result" % jid)
        self.assertEqual(raw, cli_json("compare", "--machines", ";".join(specs), "--coll",
                                       "allreduce", "--algo", "ring", "--bytes", "4KiB"))
        doc = json.loads(raw)
        self.assertEqual([len(run["ranks"]) for run in doc["runs"]], [4, 4])

    def test_05_sweep(self):
        jid = self.s.submit("sweep", {"machine": "loggp:p=8", "coll": "allreduce",
                                      "algos": ["ring", "rdb"], "bytes": "8..512:x4",
                                      "ranks": "4,8"})
        job = self.s.wait(jid)
        self.assertEqual(job["state"], "done", job)
        self.assertEqual(job["request"]["bytes"], [8, 32, 128, 512])
        status, headers, raw = self.s.request("GET", "/api/jobs/%s/result" % jid)
        # the document of `collsim sweep --json`, byte for byte
        self.assertEqual(raw, subprocess.run(
            [COLLSIM, "sweep", "--machine", "loggp:p=8", "--coll", "allreduce", "--algos",
             "ring,rdb", "--bytes", "8..512:x4", "--ranks", "4,8", "--json", "-"],
            check=True, capture_output=True).stdout)
        doc = json.loads(raw)
        self.assertEqual((doc["machine"], doc["coll"]), ("loggp:p=8", "allreduce"))
        # 2 algorithms x 2 rank counts x 4 sizes, algorithm-major
        self.assertEqual(len(doc["points"]), 16)
        # each point says what it is: the order written out by hand
        want = [{"algo": a, "bytes": b, "ranks": r} for a in ("ring", "rdb") for r in (4, 8)
                for b in (8, 32, 128, 512)]
        self.assertEqual([p["point"] for p in doc["points"]], want)
        # and is otherwise `collsim run --json`, which has no "point"
        last = doc["points"][15]
        run = json.loads(cli_json("run", "--machine", "loggp:p=8", "--coll", "allreduce",
                                  "--algo", "rdb", "--ranks", "8", "--bytes", "512"))
        self.assertNotIn("point", run)
        self.assertEqual(last.pop("point"), {"algo": "rdb", "bytes": 512, "ranks": 8})
        self.assertEqual(last, run)
        status, headers, svg = self.s.request("GET", "/api/jobs/%s/plot.svg" % jid)
        self.assertEqual(status, 200)
        status, doc = self.s.json("POST", "/api/sweep", {
            "machine": "loggp:p=8", "coll": "allreduce", "algos": "all", "bytes": "1..1MiB:x2"})
        self.refused(status, doc, 422, "bytes", "at most 256")

    def test_05_sweep_scoped_opts(self):
        # "ALGO:KEY=VALUE" applies to that algorithm only (as `collsim sweep
        # --opt`): each point is the run of its algorithm with its own option
        body = {"machine": "loggp:p=8", "coll": "broadcast", "algos": ["chain", "kchain"],
                "bytes": 4096, "opts": ["chain:seg=512", "kchain:k=3"]}
        jid = self.s.submit("sweep", body)
        job = self.s.wait(jid)
        self.assertEqual(job["state"], "done", job)
        self.assertEqual(job["request"]["opts"], ["chain:seg=512", "kchain:k=3"])
        status, doc = self.s.json("GET", "/api/jobs/%s/result" % jid)
        self.assertEqual(status, 200)
        chain, kchain = doc["points"]
        self.assertEqual(chain.pop("point"), {"algo": "chain", "bytes": 4096, "ranks": 8})
        self.assertEqual(kchain.pop("point"), {"algo": "kchain", "bytes": 4096, "ranks": 8})
        run = lambda algo, opt: json.loads(cli_json(
            "run", "--machine", "loggp:p=8", "--coll", "broadcast", "--algo", algo,
            "--bytes", "4096", *(["--opt", opt] if opt else [])))
        self.assertEqual(chain, run("chain", "seg=512"))
        self.assertEqual(kchain, run("kchain", "k=3"))
        # the options took effect: 8 segments of 512 B make more ops than one
        self.assertGreater(chain["program"]["ops"], run("chain", None)["program"]["ops"])
        self.assertNotEqual(kchain, run("kchain", None))
        # scoped to an algorithm that does not take the key, or not swept: 400
        status, doc = self.s.json("POST", "/api/sweep", dict(body, opts=["chain:k=3"]))
        self.refused(status, doc, 400, "opts", "broadcast/chain takes only seg")
        status, doc = self.s.json("POST", "/api/sweep", dict(body, opts=["flat:seg=8"]))
        self.refused(status, doc, 400, "opts", "'flat' is not in --algos")

    def test_06_replay(self):
        with open(os.path.join(ROOT, "traces", "ring4.goal")) as f:
            trace = f.read()
        status, doc = self.s.json("POST", "/api/replay",
                                  {"machine": "loggp:p=4", "format": "goal", "trace": trace})
        self.assertIn(status, (200, 202), doc)
        jid = doc["id"]
        job = self.s.wait(jid)
        self.assertEqual(job["state"], "done", job)
        status, doc = self.s.json("GET", "/api/jobs/%s/result" % jid)
        cli = json.loads(subprocess.run(
            [COLLSIM, "replay", os.path.join(ROOT, "traces", "ring4.goal"), "--machine",
             "loggp:p=4", "--json", "-", "--no-timing"], check=True,
            capture_output=True).stdout)
        # the program's name is the request's, not a path
        self.assertEqual(doc["program"].pop("source"), "<request>")
        cli["program"].pop("source")
        self.assertEqual(doc, cli)
        status, doc = self.s.json("POST", "/api/replay", {
            "machine": "loggp:p=4", "format": "ti", "trace": "traces/a.txt\ntraces/b.txt\n"})
        jid = doc["id"]
        job = self.s.wait(jid)
        self.assertEqual(job["state"], "failed")
        self.assertIn("combined", job["error"]["message"])
        status, doc = self.s.json("POST", "/api/replay", {"format": "goal", "trace": trace})
        self.refused(status, doc, 400, "machine")
        # the old form (the trace as the body, the rest in the query) is gone
        status, doc = self.s.json("POST", "/api/replay?machine=loggp:p=4", {"trace": trace})
        self.refused(status, doc, 400, None, "takes no query string")
        status, doc = self.s.json("POST", "/api/replay", {"machine": "loggp:p=4"})
        self.refused(status, doc, 400, "trace", "missing trace")

    # ---- refusals -----------------------------------------------------------

    def test_07_bad_bodies(self):
        status, doc = self.s.json("POST", "/api/run", '{"machine": "loggp:p=8",\n "coll": }')
        self.refused(status, doc, 400, None, "request body:2:")
        self.assertEqual(doc["error"]["status"], "parse")
        self.assertNotIn("field", doc["error"])
        status, doc = self.s.json("POST", "/api/run", '{"machine": "a", "machine": "b"}')
        self.refused(status, doc, 400, None, "duplicate")
        status, doc = self.s.json("POST", "/api/run", dict(SMALL, colour="red"))
        self.refused(status, doc, 400, "colour", "unknown key 'colour'")
        status, doc = self.s.json("POST", "/api/run", dict(SMALL, bytes="abc"))
        self.refused(status, doc, 400, "bytes", "--bytes")
        self.assertEqual(doc["error"]["status"], "usage")
        status, doc = self.s.json("POST", "/api/run", dict(SMALL, bytes=[1]))
        self.refused(status, doc, 400, "bytes")
        status, doc = self.s.json("POST", "/api/run", dict(SMALL, validate="yes"))
        self.refused(status, doc, 400, "validate")
        status, doc = self.s.json("POST", "/api/run", dict(SMALL, opts="k=2"))
        self.refused(status, doc, 400, "opts")
        status, doc = self.s.json("POST", "/api/run", dict(SMALL, order="/etc/passwd"))
        self.refused(status, doc, 400, "order")
        status, doc = self.s.json("POST", "/api/run", dict(SMALL, force=True))
        self.refused(status, doc, 400, "force")
        status, doc = self.s.json("POST", "/api/run", dict(SMALL, algo="nope"))
        self.refused(status, doc, 400, "algo", "nope")
        status, doc = self.s.json("POST", "/api/run", {"coll": "allreduce"})
        self.refused(status, doc, 400, "machine")
        status, doc = self.s.json("POST", "/api/run", [1, 2])
        self.refused(status, doc, 400)
        status, doc = self.s.json("POST", "/api/compare", {"machines": ["loggp:p=8"] * 17,
                                                           "coll": "allreduce"})
        self.refused(status, doc, 422, "machines")

    def test_07_refused_at_once(self):
        # what needs no machine built is refused at POST, naming the field:
        # the machine type and its keys (the registry's message)...
        status, doc = self.s.json("POST", "/api/run", dict(SMALL, machine="foo:p=8"))
        self.refused(status, doc, 400, "machine", 'unknown machine "foo"')
        status, doc = self.s.json("POST", "/api/run", dict(SMALL, machine="loggp:q=8"))
        self.refused(status, doc, 400, "machine", "unknown key 'q'")
        status, doc = self.s.json("POST", "/api/compare", {
            "machines": ["loggp:p=8", "loggp:p=4,zz=1"], "coll": "allreduce"})
        self.refused(status, doc, 400, "machines[1]", "unknown key 'zz'")
        status, doc = self.s.json("POST", "/api/sweep", {
            "machine": "nope", "coll": "allreduce", "bytes": 8})
        self.refused(status, doc, 400, "machine", 'unknown machine "nope"')
        status, doc = self.s.json("POST", "/api/replay", {"machine": "nope", "trace": "x"})
        self.refused(status, doc, 400, "machine", 'unknown machine "nope"')
        # ...an option the algorithm does not take (allreduce/ring takes none)
        status, doc = self.s.json("POST", "/api/run", dict(SMALL, opts=["zz=1"]))
        self.refused(status, doc, 400, "opts", "allreduce/ring takes no options")
        # ...a root outside the ranks given: 4 ranks are 0..3
        status, doc = self.s.json("POST", "/api/run", {
            "machine": "loggp:p=8", "coll": "broadcast", "bytes": 8, "ranks": 4, "root": 4})
        self.refused(status, doc, 400, "root", "--root 4 is outside ranks 0..3")
        status, doc = self.s.json("POST", "/api/sweep", {
            "machine": "loggp:p=8", "coll": "broadcast", "bytes": 8, "ranks": "4,8",
            "root": 5})
        self.refused(status, doc, 400, "root", "--root 5 is outside ranks 0..3")
        # what needs the machine fails the job, its error naming the field:
        # each (body, field, text) below is accepted, then fails
        cases = [
            ("run", {"machine": "loggp:p=8", "coll": "broadcast", "bytes": 8, "root": 9},
             "root", "--root 9 is outside ranks 0..7"),
            ("run", {"machine": "loggp:p=x", "coll": "broadcast", "bytes": 8},
             "machine", "key 'p'"),
            ("run", {"machine": "loggp:p=8", "coll": "allreduce", "bytes": 8, "ranks": 12},
             "ranks", "has only 8 hosts"),
            ("run", {"machine": "loggp:p=8", "program": "num_ranks 2\nrank 0 { s: sendd\n"},
             "program", "<request>:2:"),
            ("compare", {"machines": ["loggp:p=8", "loggp:p=4"], "coll": "broadcast",
                         "bytes": 8, "root": 6}, "root", "--root 6 is outside ranks 0..3"),
            ("compare", {"machines": ["loggp:p=8", "loggp:p=y"], "coll": "broadcast",
                         "bytes": 8}, "machines[1]", "key 'p'"),
            ("sweep", {"machine": "loggp:p=8", "coll": "allreduce", "algos": "ring",
                       "bytes": 8, "ranks": 9}, "ranks", "has only 8 hosts"),
        ]
        for kind, body, field, text in cases:
            status, doc = self.s.json("POST", "/api/" + kind, body)
            self.assertIn(status, (200, 202), (body, doc))
            job = self.s.wait(doc["id"])
            self.assertEqual(job["state"], "failed", (body, job))
            self.assertEqual(job["error"].get("field"), field, (body, job))
            self.assertIn(text, job["error"]["message"], (body, job))

    def test_08_limits(self):
        status, headers, data = self.s.request("POST", "/api/run", "x" * (65 * 1024))
        self.refused(status, json.loads(data), 413, None, "--max-body")
        # far over the limit: evhttp refuses it on its Content-Length, unread
        c = http.client.HTTPConnection("127.0.0.1", self.s.port, timeout=10)
        c.putrequest("POST", "/api/run")
        c.putheader("Content-Length", str(1 << 30))
        c.endheaders()
        r = c.getresponse()
        r.read()
        c.close()
        self.assertEqual(r.status, 413)
        status, doc = self.s.json("POST", "/api/run", dict(SMALL, ranks=5000))
        self.refused(status, doc, 422, "ranks", "--max-ranks")
        # a machine larger than --max-ranks without "ranks": the job fails
        # naming the field (the node count is known once the machine is made)
        jid = self.s.submit("run", {"machine": "alphabeta:topo=ring,p=2048",
                                    "coll": "barrier"})
        job = self.s.wait(jid)
        self.assertEqual(job["state"], "failed")
        self.assertEqual(job["error"]["field"], "ranks")
        # the work limit (docs/limits.md): no "force" from a request
        jid = self.s.submit("run", {"machine": "alphabeta:topo=ring,p=8", "coll": "allreduce",
                                    "bytes": "64GiB"})
        job = self.s.wait(jid)
        self.assertEqual(job["state"], "failed", job)
        self.assertIn("limit", job["error"]["message"])

    def test_09_paths_and_methods(self):
        status, doc = self.s.json("GET", "/api/jobs/0123456789abcdef")
        self.refused(status, doc, 404)
        status, doc = self.s.json("GET", "/api/jobs/zzz")
        self.refused(status, doc, 404)
        status, doc = self.s.json("GET", "/api/nothing")
        self.refused(status, doc, 404)
        status, headers, data = self.s.request("GET", "/api/run")
        self.assertEqual(status, 405)
        self.assertEqual(headers["allow"], "POST")
        status, headers, data = self.s.request("PUT", "/api/machines")
        self.assertEqual(status, 405)
        status, headers, data = self.s.request("DELETE", "/api/jobs/%s/result" % self.run_id)
        self.assertEqual(status, 405)

    # ---- the queue, cancellation, the wall-time limit -------------------------

    def test_10_queue_cancel_timeout(self):
        long1 = self.s.submit("run", LONG)
        # running, and past building its program (which no flag interrupts):
        # the simulation reports progress
        end = time.time() + 30
        while self.s.json("GET", "/api/jobs/" + long1)[1]["progress"] == 0:
            self.assertLess(time.time(), end, "the long job never made progress")
            time.sleep(0.02)
        # one worker busy: the next job waits, the one after is refused
        long2 = self.s.submit("run", dict(LONG, bytes="8KiB"))
        status, doc = self.s.json("GET", "/api/jobs/%s/result" % long2)
        self.assertEqual(status, 409)
        self.assertEqual(doc["error"]["status"], "busy")
        status, doc = self.s.json("POST", "/api/run", dict(LONG, bytes="4KiB"))
        self.refused(status, doc, 429)
        status, doc = self.s.json("DELETE", "/api/jobs/" + long2)
        self.assertEqual((status, doc["state"]), (200, "cancelled"))
        t0 = time.time()
        status, doc = self.s.json("DELETE", "/api/jobs/" + long1)
        self.assertEqual((status, doc["state"]), (200, "cancelled"))
        # the worker lets go of it at its next batch of events
        while self.s.json("GET", "/api/health")[1]["jobs"]["running"]:
            self.assertLess(time.time() - t0, 2.0, "the cancelled job still runs")
            time.sleep(0.02)
        # cancelling a done job leaves it done
        status, doc = self.s.json("DELETE", "/api/jobs/" + self.run_id)
        self.assertEqual((status, doc["state"]), (200, "done"))
        # --max-seconds 3: the long run fails naming the limit
        long3 = self.s.submit("run", dict(LONG, bytes="12KiB"))
        job = self.s.wait(long3, timeout=30)
        self.assertEqual(job["state"], "failed", job)
        self.assertIn("--max-seconds", job["error"]["message"])
        self.assertGreaterEqual(job["elapsed"], 3.0)

    # ---- shutdown ---------------------------------------------------------------

    def test_11_head(self):
        # the headers of a GET, its length, and no body; the connection
        # goes on (a body after a HEAD would be read as the next answer)
        c = http.client.HTTPConnection("127.0.0.1", self.s.port, timeout=10)
        for path in ("/", "/api/health", "/api/machines"):
            c.request("GET", path)
            r = c.getresponse()
            body = r.read()
            c.request("HEAD", path)
            h = c.getresponse()
            self.assertEqual((h.status, h.read()), (200, b""))
            if path != "/api/health":  # the job counts may move between the two
                self.assertEqual(int(h.getheader("Content-Length")), len(body))
            self.assertEqual(h.getheader("Content-Type"), r.getheader("Content-Type"))
        c.request("GET", "/api/health")
        self.assertEqual(c.getresponse().status, 200)
        c.close()

    # ---- benchmark loops, heatmap styles (issue 32) ------------------------

    def test_12_loop(self):
        # a loop in the body: the result is `collsim run` with the same
        # options, byte for byte (the loop's figures by the same writer)
        body = {"machine": "alphabeta:topo=line,p=4", "coll": "broadcast", "algo": "chain",
                "bytes": "16KiB", "opts": ["seg=4KiB"], "iterations": 20, "warmup": 5,
                "between": "barrier", "validate": True}
        jid = self.s.submit("run", body)
        job = self.s.wait(jid)
        self.assertEqual(job["state"], "done", job)
        req = job["request"]
        self.assertEqual((req["iterations"], req["warmup"], req["between"], req["loop"]),
                         (20, 5, "barrier", "custom"))
        status, headers, raw = self.s.request("GET", "/api/jobs/%s/result" % jid)
        cli = cli_json("run", "--machine", "alphabeta:topo=line,p=4", "--coll", "broadcast",
                       "--algo", "chain", "--bytes", "16KiB", "--opt", "seg=4KiB",
                       "--iterations", "20", "--warmup", "5", "--between", "barrier",
                       "--validate")
        self.assertEqual(raw, cli)
        doc, ref = json.loads(raw), json.loads(cli)
        for key in ("avg_ticks", "iteration_avg_ticks", "iteration_min_ticks",
                    "iteration_max_ticks", "first_ticks"):
            self.assertEqual(doc["loop"][key], ref["loop"][key], key)
        self.assertEqual(len(doc["loop"]["per_iteration"]), 25)
        # the bandwidths are the average's (docs/loops.md): S / avg_seconds
        self.assertAlmostEqual(doc["bandwidth"]["algbw_bytes_per_second"],
                               16384 / doc["loop"]["avg_seconds"], delta=1e-3)
        # the same loop said another way is the same request: cached
        again = dict(body, iterations="20", between="barrier", bytes=16384)
        status, doc2 = self.s.json("POST", "/api/run", again)
        self.assertEqual((status, doc2["id"], doc2["cached"]), (200, jid, True))
        # no loop: the loop's keys are null in the request
        self.assertIsNone(self.s.wait(self.run_id)["request"]["iterations"])

    def test_12b_loop_refused(self):
        base = {"machine": "alphabeta:topo=line,p=4", "coll": "broadcast", "bytes": "16KiB"}
        # over --max-iterations (100 here): 422 naming the key that asked
        status, doc = self.s.json("POST", "/api/run", dict(base, iterations=96))
        self.refused(status, doc, 422, "iterations", "--max-iterations")
        self.assertIn("5 warm-up + 96 timed", doc["error"]["message"])
        status, doc = self.s.json("POST", "/api/run", dict(base, warmup=81))
        self.refused(status, doc, 422, "warmup", "limit of 100")
        # OSU's loop at 16 KiB is 10 + 100: over; at 8 KiB 100 + 1000
        status, doc = self.s.json("POST", "/api/run", dict(base, loop="osu"))
        self.refused(status, doc, 422, "loop", "10 warm-up + 100 timed")
        status, doc = self.s.json("POST", "/api/run", dict(base, iterations=95))
        self.assertIn(status, (200, 202), doc)
        # values checked as the command line checks them, naming the key
        for key, value, code in (("iterations", 0, 400), ("iterations", "many", 400),
                                 ("warmup", -1, 400), ("warmup", "3", 400),
                                 ("between", "fence", 400), ("between", "barrier:nope", 400),
                                 ("loop", "mpi", 400), ("loop", 5, 400)):
            status, doc = self.s.json("POST", "/api/run", dict(base, **{key: value}))
            self.refused(status, doc, code, key)
        # a loop repeats a collective: not a program; compare and sweep take none
        status, doc = self.s.json("POST", "/api/run", {
            "machine": "loggp:p=2", "program": "num_ranks 1\nrank 0 {\n}\n", "warmup": 2})
        self.refused(status, doc, 400, "warmup", "needs --coll")
        status, doc = self.s.json("POST", "/api/compare", {
            "machines": ["loggp:p=8"], "coll": "barrier", "iterations": 2})
        self.refused(status, doc, 400, "iterations", "unknown key")

    def test_13_heatmap_style(self):
        jid = self.run_id
        # scale= and size=: the figure is the command line's --scale and
        # --size, pixel for pixel (the server encodes its PNG otherwise)
        status, headers, png = self.s.request(
            "GET", "/api/jobs/%s/heatmap.png?scale=0:50&size=1000x700" % jid)
        self.assertEqual(status, 200, png[:200])
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "h.png")
            subprocess.run([COLLSIM, "run", "--machine", "loggp:p=8", "--coll", "allreduce",
                            "--algo", "ring", "--bytes", "1MiB", "--heatmap", path,
                            "--scale", "0:50", "--size", "1000x700", "--quiet"],
                           check=True, capture_output=True)
            with open(path, "rb") as f:
                cli_png = f.read()
        served = png_pixels(png)
        self.assertEqual(served[:2], (1000, 700))
        self.assertEqual(served, png_pixels(cli_png))
        # the scale changes the colours (the run's hottest lane is above 50 %)
        status, headers, plain = self.s.request(
            "GET", "/api/jobs/%s/heatmap.png?size=1000x700" % jid)
        self.assertNotEqual(png_pixels(plain)[2], served[2])
        # bad values: 400 naming the key, the command line's message
        for query, key, text in (("scale=50:10", "scale", "--scale"),
                                 ("scale=abc", "scale", "--scale"),
                                 ("metric=bytes&scale=0:50%25", "scale", "--scale"),
                                 ("size=huge", "size", "--size"),
                                 ("size=50x50", "size", "--size")):
            status, doc = self.s.json("GET", "/api/jobs/%s/heatmap.svg?%s" % (jid, query))
            self.refused(status, doc, 400, key, text)
        # a PNG too large to draw for a request: 422 before its surface is made
        status, doc = self.s.json("GET", "/api/jobs/%s/heatmap.png?size=20x20in" % jid)
        self.refused(status, doc, 422, "size", "pixels")
        status, headers, svg = self.s.request("GET", "/api/jobs/%s/heatmap.svg?size=20x20in" % jid)
        self.assertEqual(status, 200)
        # only heatmaps take them
        status, doc = self.s.json("GET", "/api/jobs/%s/timeline.json?scale=0:50" % jid)
        self.refused(status, doc, 400, "scale", "only heatmaps")

    def test_13b_sweep_plot_is_the_cli_plot(self):
        body = {"machine": "loggp:p=8", "coll": "allreduce", "algos": ["ring", "rdb"],
                "bytes": "8..512:x4", "ranks": "4,8"}
        jid = self.s.submit("sweep", body)
        self.assertEqual(self.s.wait(jid)["state"], "done")
        status, headers, svg = self.s.request("GET", "/api/jobs/%s/plot.svg" % jid)
        self.assertEqual(status, 200)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "p.svg")
            subprocess.run([COLLSIM, "sweep", "--machine", "loggp:p=8", "--coll", "allreduce",
                            "--algos", "ring,rdb", "--bytes", "8..512:x4", "--ranks", "4,8",
                            "--plot", path, "--quiet"], check=True, capture_output=True)
            with open(path, "rb") as f:
                self.assertEqual(svg, f.read())
        # in seconds (SI prefixes on the axis), not ticks
        self.assertNotIn(b"ticks", svg)

    def test_99_sigterm(self):
        # a job running when the signal comes is cancelled
        self.s.submit("run", dict(LONG, bytes="10KiB"))
        self.s.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.s.proc.wait(timeout=20), 143, self.s.proc.stderr.read())
        self.assertEqual(os.listdir(self.s.tmp.name), [])


class TestQueue(unittest.TestCase):
    """A queued job says where it is in the queue and what it waits behind
    (docs/api.md, "queue"): one worker busy with a long run, then a sweep
    and a run queued behind it."""

    def test_queue_place(self):
        s = Server("--jobs", "1", "--max-queue", "4")
        try:
            long1 = s.submit("run", LONG)
            end = time.time() + 30  # running, past building (elapsed > 0)
            while s.json("GET", "/api/jobs/" + long1)[1]["progress"] == 0:
                self.assertLess(time.time(), end, "the long job never made progress")
                time.sleep(0.02)
            sweep = s.submit("sweep", {"machine": "loggp:p=8", "coll": "allreduce",
                                       "algos": "ring,rdb", "bytes": "8,64,512"})
            run = s.submit("run", SMALL)
            status, q1 = s.json("GET", "/api/jobs/" + sweep)
            self.assertEqual((status, q1["state"]), (200, "queued"), q1)
            status, q2 = s.json("GET", "/api/jobs/" + run)
            self.assertEqual((status, q2["state"]), (200, "queued"), q2)
            # the sweep is next; the run waits behind it (2 algorithms x 3
            # sizes: 6 runs) and both behind the long run on the one worker
            self.assertEqual(q1["queue"]["position"], 1)
            self.assertEqual(q1["queue"]["ahead"], [])
            self.assertEqual(q2["queue"]["position"], 2)
            self.assertEqual(q2["queue"]["ahead"], [{"kind": "sweep", "runs": 6}])
            for q in (q1, q2):
                self.assertEqual(q["queue"]["workers"], 1)
                running = q["queue"]["running"]
                self.assertEqual(len(running), 1, running)
                self.assertEqual((running[0]["kind"], running[0]["state"], running[0]["runs"]),
                                 ("run", "running", 1))
                self.assertTrue(0 <= running[0]["progress"] <= 1, running)
                self.assertGreater(running[0]["elapsed"], 0)
                self.assertNotIn(long1, json.dumps(q["queue"]))  # no other job's id
            # the sweep leaves the queue: the run moves up
            s.json("DELETE", "/api/jobs/" + sweep)
            status, q2 = s.json("GET", "/api/jobs/" + run)
            self.assertEqual((q2["queue"]["position"], q2["queue"]["ahead"]), (1, []), q2)
            # a job that is not queued has no "queue"
            self.assertNotIn("queue", s.json("GET", "/api/jobs/" + long1)[1])
            s.json("DELETE", "/api/jobs/" + long1)
            done = s.wait(run)
            self.assertEqual(done["state"], "done", done)
            self.assertNotIn("queue", done)
        finally:
            s.stop()


class TestExpiry(unittest.TestCase):
    def test_finished_jobs_expire(self):
        s = Server("--keep", "0.5")
        try:
            jid = s.submit("run", SMALL)
            self.assertEqual(s.wait(jid)["state"], "done")
            # the loop drops expired jobs once a second
            time.sleep(1.7)
            status, doc = s.json("GET", "/api/jobs/" + jid)
            self.assertEqual(status, 404, doc)
            self.assertEqual(s.json("GET", "/api/health")[1]["jobs"]["done"], 0)
            # and the cache forgot it: the same request is a new job
            status, doc = s.json("POST", "/api/run", SMALL)
            self.assertEqual((status, doc["cached"]), (202, False))
            s.wait(doc["id"])
            s.proc.send_signal(signal.SIGINT)
            self.assertEqual(s.proc.wait(timeout=20), 130, s.proc.stderr.read())
            self.assertEqual(os.listdir(s.tmp.name), [])
        finally:
            s.stop()


if __name__ == "__main__":
    t0 = time.time()
    result = unittest.main(exit=False, verbosity=2).result
    print("test_api.py: %.1f s" % (time.time() - t0))
    sys.exit(0 if result.wasSuccessful() else 1)
