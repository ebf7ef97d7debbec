#!/usr/bin/env python3
"""figure_latency.py - how fast `collsim serve` gives a small run's figure
(issue 32: "figures for a small run in well under 100 ms").

Starts the server on a free loopback port and, --repeat times (default 20),
times from the request to the PNG's last byte, end to end as a client sees
it: POST /api/run of a small run (allreduce of 64 KiB on a 4 x 4 Cerebras
mesh by default; each time a size 4 bytes larger, so that no answer comes
from the cache), GET /api/jobs/ID every 2 ms until done, then GET
heatmap.png.  Then the figure requests alone on one done job: heatmap.png
and heatmap.svg, --repeat times each.  Prints the median, minimum and
maximum of each in ms.  No timed test: a measurement (tools/bench figure).

Python 3 standard library only.  Usage:
  bench/figure_latency.py --collsim build/collsim [--repeat 20]
                          [--machine cerebras:rows=4,cols=4]
"""
import argparse
import http.client
import json
import re
import statistics
import subprocess
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--collsim", required=True)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--machine", default="cerebras:rows=4,cols=4")
    a = ap.parse_args()
    proc = subprocess.Popen([a.collsim, "serve", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        m = re.search(r":(\d+)/$", proc.stdout.readline().strip())
        conn = http.client.HTTPConnection("127.0.0.1", int(m.group(1)), timeout=30)

        def req(method, path, body=None):
            headers = {"Content-Type": "application/json"} if body is not None else {}
            conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            data = r.read()
            if r.status not in (200, 202):
                raise SystemExit("%s %s: %d %s" % (method, path, r.status, data[:200]))
            return data

        def run(i):
            body = json.dumps({"machine": a.machine, "coll": "allreduce",
                               "bytes": 65536 + 4 * i})
            jid = json.loads(req("POST", "/api/run", body))["id"]
            while json.loads(req("GET", "/api/jobs/" + jid))["state"] != "done":
                time.sleep(0.002)
            png = req("GET", "/api/jobs/%s/heatmap.png" % jid)
            assert png[:4] == b"\x89PNG"
            return jid

        run(-1)  # the first figure initialises fontconfig: not counted
        e2e = []
        for i in range(a.repeat):
            t0 = time.perf_counter()
            jid = run(i)
            e2e.append(time.perf_counter() - t0)
        alone = {}
        for fmt in ("png", "svg"):
            alone[fmt] = []
            for _ in range(a.repeat):
                t0 = time.perf_counter()
                req("GET", "/api/jobs/%s/heatmap.%s" % (jid, fmt))
                alone[fmt].append(time.perf_counter() - t0)

        def line(name, v):
            print("%-44s median %6.1f ms  min %6.1f  max %6.1f" %
                  (name, 1e3 * statistics.median(v), 1e3 * min(v), 1e3 * max(v)))
        line("POST run -> done -> heatmap.png (%s)" % a.machine, e2e)
        line("heatmap.png of a done job", alone["png"])
        line("heatmap.svg of a done job", alone["svg"])
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
