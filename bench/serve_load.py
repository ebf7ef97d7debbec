#!/usr/bin/env python3
"""serve_load.py - a bounded load test of `collsim serve` (issue 21).

Starts the server on a free loopback port (short --keep, so that finished
jobs expire soon after), then 20 concurrent clients work through 200 tasks
(fixed counts, shuffled with a fixed seed):

  70 new small runs   POST /api/run (202), poll GET /api/jobs/ID to done,
                      GET .../result (200); every 5th also GET heatmap.png
  10 new comparisons  POST /api/compare (202) of two machines, result and plot.svg
  50 cache hits       POST of one of 5 requests made before the clock starts:
                      200, "cached": true, the result byte-identical to the first
  50 bad requests     each answered with its intended status: 400 (bad size,
                      unknown key, malformed JSON, unknown algorithm), 404
                      (unknown job, its result), 405 (PUT), 413 (a body over
                      --max-body), and a run the simulator refuses (root out of
                      range: 422 at once, or 202 and the job failed)
  20 cancellations    POST a slower run, DELETE it (200, state cancelled, or
                      done if it finished first), then GET it until it settled

The whole load runs --rounds times (default 2) on the same server; after
each, the finished jobs expire (--keep) and the server's RSS is read from
/proc/PID/status.  Every HTTP exchange is timed.  It fails (exit 1) on any
status or document other than the intended one, when the server dies, or
when its RSS after a round is not back near the start: within 8 MiB of it,
and the last round within 2 MiB of the first (a leak shows).  The server
runs with one malloc arena (cmd_serve.c); --arena-max N gives it N
(MALLOC_ARENA_MAX), where the check may fail: glibc's per-thread arenas
keep 10-30 MiB after a round.  Prints the figures and one
summary line (the first round's figures):

  serve load: 200 tasks from 20 clients, N HTTP requests in S s: R req/s,
  p50 X ms, p99 Y ms; statuses 200:a 202:b ...; RSS start, peak, after; ok

Python 3 standard library only.  Usage:
  bench/serve_load.py --collsim build/collsim [--tasks 200] [--clients 20]
                      [--seed 21] [--rounds 2] [--keep 5] [--jobs 2]
                      [--max-body 65536] [--arena-max N]
"""

import argparse
import http.client
import json
import os
import queue
import random
import re
import subprocess
import sys
import tempfile
import threading
import time

HOT = 5  # distinct requests behind the cache hits


class Failure(Exception):
    pass


def rss_kib(pid, key="VmRSS"):
    """VmRSS (or VmHWM, the peak) of process pid in KiB, from /proc/PID/status."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise Failure(f"no {key} in /proc/{pid}/status")


class Client:
    """HTTP exchanges with the server, each timed and its status counted."""

    def __init__(self, port, stats):
        self.port = port
        self.stats = stats

    def call(self, method, path, body=None, ctype="application/json", raw=False):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        headers = {"Connection": "close"}
        if body is not None:
            headers["Content-Type"] = ctype
        t = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path, body=body, headers=headers)
            res = conn.getresponse()
            data = res.read()
            status = res.status
            rtype = res.getheader("Content-Type", "")
            cache = res.getheader("Cache-Control", "")
        except OSError as e:
            raise Failure(f"{method} {path}: {e}") from e
        finally:
            conn.close()
        self.stats.record(status, time.perf_counter() - t)
        if raw:
            return status, data, rtype, cache
        doc = None
        if rtype.startswith("application/json"):
            try:
                doc = json.loads(data)
            except ValueError as e:
                raise Failure(f"{method} {path}: {status} with bad JSON: {e}") from e
        return status, doc

    def expect(self, want, method, path, body=None, **kw):
        status, doc = self.call(method, path, body, **kw)
        if status not in (want if isinstance(want, tuple) else (want,)):
            raise Failure(f"{method} {path}: expected {want}, got {status}: {doc}")
        return status, doc

    def wait(self, jid, limit=30.0):
        """Polls the job until it left queued/running; returns its document."""
        end = time.monotonic() + limit
        while True:
            _, j = self.expect(200, "GET", f"/api/jobs/{jid}")
            if j.get("state") not in ("queued", "running"):
                return j
            if time.monotonic() > end:
                raise Failure(f"job {jid} still {j.get('state')} after {limit} s")
            time.sleep(0.01)


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.latency = []
        self.status = {}

    def record(self, status, seconds):
        with self.lock:
            self.latency.append(seconds)
            self.status[status] = self.status.get(status, 0) + 1


def small_run(k):
    # Distinct sizes: never a cache hit on another task's request.
    return {"machine": "loggp:p=8", "coll": "allreduce", "algo": "ring", "bytes": 4096 + 64 * k}


def hot_run(k):
    return {"machine": "alphabeta:topo=ring,p=8", "coll": "broadcast", "bytes": f"{k + 1}KiB"}


def slow_run(k):
    # Some 0.1-0.3 s each: long enough to be queued or running when cancelled.
    return {"machine": "alphabeta:topo=torus,rows=16,cols=16", "coll": "allreduce", "algo": "ring",
            "bytes": 4 * 1048576 + 4096 * k}


def check_run_json(doc, what):
    if not isinstance(doc, dict) or doc.get("schema_version") != 1 or not doc.get("finish_ticks", 0) > 0:
        raise Failure(f"{what}: not a run result: {str(doc)[:200]}")


def task_new_run(c, k):
    st, d = c.expect(202, "POST", "/api/run", small_run(k))
    if d.get("cached") is not False or not d.get("id"):
        raise Failure(f"new run {k}: {d}")
    j = c.wait(d["id"])
    if j["state"] != "done":
        raise Failure(f"new run {k}: ended {j['state']}: {j.get('error')}")
    _, r = c.expect(200, "GET", f"/api/jobs/{d['id']}/result")
    check_run_json(r, f"run {k}")
    if k % 5 == 0:
        st, data, rtype, cache = c.call("GET", f"/api/jobs/{d['id']}/heatmap.png", raw=True)
        if st != 200 or not data.startswith(b"\x89PNG") or rtype != "image/png" or "no-store" not in cache:
            raise Failure(f"heatmap of run {k}: {st} {rtype} {cache!r} {data[:40]!r}")


def task_new_compare(c, k):
    body = {"machines": ["loggp:p=8", "alphabeta:topo=ring,p=8"], "coll": "allgather", "bytes": 512 + 8 * k}
    _, d = c.expect(202, "POST", "/api/compare", body)
    j = c.wait(d["id"])
    if j["state"] != "done":
        raise Failure(f"compare {k}: ended {j['state']}: {j.get('error')}")
    _, r = c.expect(200, "GET", f"/api/jobs/{d['id']}/result")
    if len(r.get("runs", [])) != 2:
        raise Failure(f"compare {k}: {len(r.get('runs', []))} runs")
    for run in r["runs"]:
        check_run_json(run, f"compare {k}")
    st, data, rtype, _ = c.call("GET", f"/api/jobs/{d['id']}/plot.svg", raw=True)
    if st != 200 or b"<svg" not in data[:2000]:
        raise Failure(f"plot of compare {k}: {st} {rtype}")


def task_cache_hit(c, k, warm):
    h = k % HOT
    _, d = c.expect(200, "POST", "/api/run", hot_run(h))
    if d.get("cached") is not True or d.get("state") != "done":
        raise Failure(f"cache hit {k}: {d}")
    st, data, _, _ = c.call("GET", f"/api/jobs/{d['id']}/result", raw=True)
    if st != 200 or data != warm[h]:
        raise Failure(f"cache hit {k}: result {st}, {'same' if data == warm[h] else 'different'} bytes")


# The bad requests: (name, method, path, body, intended status, check of the error).
def bad_cases(max_body):
    def err(field=None, status=None, text=None):
        def check(doc):
            e = (doc or {}).get("error") or {}
            return ((field is None or e.get("field") == field) and (status is None or e.get("status") == status)
                    and (text is None or text in e.get("message", "")))
        return check

    return [
        ("bad size", "POST", "/api/run", {"machine": "loggp:p=8", "coll": "allreduce", "bytes": "abc"}, 400,
         err("bytes", "usage", "abc")),
        ("unknown key", "POST", "/api/run", {"machine": "loggp:p=8", "coll": "allreduce", "colour": 1}, 400,
         err("colour", "usage")),
        ("malformed JSON", "POST", "/api/compare", '{"machines": ["loggp:p=8"', 400, err(None, "parse")),
        ("unknown algorithm", "POST", "/api/run", {"machine": "loggp:p=8", "coll": "allreduce", "algo": "nosuch",
                                                   "bytes": 64}, 400, err("algo")),
        ("unknown job", "GET", "/api/jobs/00000000deadbeef", None, 404, err()),
        ("unknown job's result", "GET", "/api/jobs/00000000deadbeef/result", None, 404, err()),
        ("wrong method", "PUT", "/api/run", {}, 405, err()),
        ("body too large", "POST", "/api/run", " " * (max_body + 1), 413, err(None, "usage", "--max-body")),
        ("root out of range", "POST", "/api/run", {"machine": "loggp:p=8", "coll": "broadcast", "bytes": 64,
                                                   "root": 99}, "refused", None),
    ]


def task_bad(c, k, cases):
    name, method, path, body, want, check = cases[k % len(cases)]
    if want == "refused":
        # Contract: 422 at once; a server that checks the root when the job runs
        # answers 202 and the job fails with the CLI's message instead.
        st, d = c.expect((422, 202), method, path, body)
        if st == 202:
            j = c.wait(d["id"])
            if j["state"] != "failed" or "root" not in json.dumps(j.get("error")):
                raise Failure(f"{name}: the job ended {j['state']}: {j.get('error')}")
        return
    st, d = c.call(method, path, body)
    if st != want:
        raise Failure(f"{name}: expected {want}, got {st}: {d}")
    if check is not None and not check(d):
        raise Failure(f"{name}: the error document is not the intended one: {d}")


def task_cancel(c, k):
    _, d = c.expect(202, "POST", "/api/run", slow_run(k))
    _, x = c.expect(200, "DELETE", f"/api/jobs/{d['id']}")
    if x.get("state") not in ("cancelled", "done"):
        raise Failure(f"cancel {k}: DELETE answered {x}")
    j = c.wait(d["id"])
    if j["state"] not in ("cancelled", "done"):
        raise Failure(f"cancel {k}: the job ended {j['state']}: {j.get('error')}")
    return j["state"]


def start_server(collsim, args, log):
    cmd = [collsim, "serve", "--addr", "127.0.0.1", "--port", "0", "--jobs", str(args.jobs),
           "--keep", str(args.keep), "--max-body", str(args.max_body)]
    env = dict(os.environ)
    if args.arena_max:
        env["MALLOC_ARENA_MAX"] = str(args.arena_max)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True, env=env)
    line = proc.stdout.readline()
    m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", line)
    if not m:
        proc.kill()
        raise Failure(f"the server did not start: {line!r}")
    return proc, int(m.group(1))


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p / 100 * len(xs) + 0.5)) - 1))]


def one_round(port, tasks, clients, cases, pid):
    """The tasks from `clients` threads: (stats, wall seconds, peak RSS KiB,
    failures, cancellation outcomes)."""
    # The cache's requests, once each before the clock starts.
    wc = Client(port, Stats())
    warm = []
    for h in range(HOT):
        _, d = wc.expect((200, 202), "POST", "/api/run", hot_run(h))
        if wc.wait(d["id"])["state"] != "done":
            raise Failure(f"warm-up run {h} failed")
        st, data, _, _ = wc.call("GET", f"/api/jobs/{d['id']}/result", raw=True)
        if st != 200:
            raise Failure(f"warm-up result {h}: {st}")
        warm.append(data)
    stats = Stats()
    failures = []
    cancelled = {"cancelled": 0, "done": 0}
    work = queue.Queue()
    for t in tasks:
        work.put(t)
    peak = [rss_kib(pid)]
    done = threading.Event()

    def sample():
        while not done.is_set():
            try:
                peak[0] = max(peak[0], rss_kib(pid))
            except (OSError, Failure):
                return
            time.sleep(0.02)

    def client():
        c = Client(port, stats)
        while True:
            try:
                kind, k = work.get_nowait()
            except queue.Empty:
                return
            try:
                if kind == "run":
                    task_new_run(c, k)
                elif kind == "compare":
                    task_new_compare(c, k)
                elif kind == "cache":
                    task_cache_hit(c, k, warm)
                elif kind == "bad":
                    task_bad(c, k, cases)
                else:
                    s = task_cancel(c, k)
                    with stats.lock:
                        cancelled[s] += 1
            except Failure as e:
                with stats.lock:
                    failures.append(f"{kind} {k}: {e}")
            except Exception as e:  # a bug here, or a reply that is not HTTP: a failure too
                with stats.lock:
                    failures.append(f"{kind} {k}: {type(e).__name__}: {e}")

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    t0 = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    wall = time.perf_counter() - t0
    done.set()
    sampler.join()
    if any(t.is_alive() for t in threads):
        raise Failure("clients still running after 300 s")
    return stats, wall, max(peak[0], rss_kib(pid, "VmHWM")), failures, cancelled


def expire(port, keep):
    """Waits for the finished jobs to expire (--keep, plus up to 5 s for a
    timer): the seconds it took and the jobs still listed."""
    t_end = time.perf_counter()
    time.sleep(keep)
    hc = Client(port, Stats())
    while True:
        _, health = hc.expect(200, "GET", "/api/health")
        left = sum((health.get("jobs") or {}).values())
        if left == 0 or time.perf_counter() - t_end > keep + 5:
            return time.perf_counter() - t_end, left
        time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--collsim", default="build/collsim")
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--rounds", type=int, default=2,
                    help="the whole load this many times: the RSS after each says whether it grows")
    # --keep outlasts a round: the cache hits ask for jobs made before it.
    ap.add_argument("--keep", type=float, default=5.0, help="the server's --keep (seconds)")
    ap.add_argument("--arena-max", type=int, default=0,
                    help="MALLOC_ARENA_MAX for the server (default: the server's own, 1)")
    ap.add_argument("--jobs", type=int, default=2, help="the server's --jobs")
    ap.add_argument("--max-body", type=int, default=65536, help="the server's --max-body (bytes)")
    args = ap.parse_args()

    # Fixed shares of the tasks: 35% new runs, 5% comparisons, 25% cache
    # hits, 25% bad requests, 10% cancellations (70/10/50/50/20 of 200).
    n = args.tasks
    counts = {"run": n * 35 // 100, "compare": n * 5 // 100, "cache": n * 25 // 100, "bad": n * 25 // 100}
    counts["cancel"] = n - sum(counts.values())
    tasks = [(kind, k) for kind, c in counts.items() for k in range(c)]
    random.Random(args.seed).shuffle(tasks)
    cases = bad_cases(args.max_body)

    log = tempfile.TemporaryFile(mode="w+")
    proc, port = start_server(args.collsim, args, log)
    failures = []
    rounds = []  # (stats, wall, peak KiB, cancelled, RSS after KiB, expiry s)
    rss_start = 0
    try:
        rss_start = rss_kib(proc.pid)
        for _ in range(args.rounds):
            stats, wall, peak, fails, cancelled = one_round(port, tasks, args.clients, cases, proc.pid)
            failures += fails
            if proc.poll() is not None:
                raise Failure(f"the server died (exit {proc.returncode})")
            took, left = expire(port, args.keep)
            if left:
                failures.append(f"{left} jobs still listed {took:.1f} s after the run")
            time.sleep(0.2)
            rounds.append((stats, wall, peak, cancelled, rss_kib(proc.pid), took))
    except Failure as e:
        failures.append(str(e))
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                failures.append("the server did not stop within 10 s of SIGTERM")

    mib = lambda kib: kib / 1024.0  # noqa: E731
    print(f"server      --jobs {args.jobs} --keep {args.keep:g} --max-body {args.max_body}"
          + (f", MALLOC_ARENA_MAX={args.arena_max}" if args.arena_max else "") + "; "
          f"RSS at start {mib(rss_start):.1f} MiB")
    print(f"tasks       {n} a round: " + ", ".join(f"{c} {k}" for k, c in counts.items()))
    for i, (stats, wall, peak, cancelled, after, took) in enumerate(rounds):
        lat = stats.latency
        print(f"round {i + 1}     {len(lat)} HTTP requests in {wall:.2f} s from {args.clients} clients: "
              f"{len(lat) / wall:.0f} req/s, {n / wall:.0f} tasks/s; latency p50 "
              f"{1e3 * percentile(lat, 50):.2f} ms, p99 {1e3 * percentile(lat, 99):.2f} ms, max {1e3 * max(lat):.1f} ms")
        print("            statuses " + " ".join(f"{s}:{stats.status[s]}" for s in sorted(stats.status))
              + f"; cancelled {cancelled['cancelled']}, done first {cancelled['done']}")
        print(f"            RSS peak {mib(peak):.1f} MiB, after {mib(after):.1f} MiB "
              f"(the jobs expired {took:.1f} s after the round)")
    if rounds:
        after = [r[4] for r in rounds]
        # Near the start: caches that the first figures fill (fontconfig's)
        # may stay, but no round may leave more than the last.  With glibc's
        # per-thread arenas the RSS after a round settled some 10-30 MiB above
        # the start (17.7, 26.5, 34.9, 40.1, 30.6, 31.2 MiB over 6 rounds from
        # 9.2), which hid a small leak; the server now runs with one arena
        # (cmd_serve.c), and the RSS after a round is some 5 MiB above the
        # start, within 0.5 MiB from round to round (14.2, 14.5, 14.6 from
        # 9.2): the check is strict.
        near, grow = 8, 2
        if max(after) - rss_start > near * 1024:
            failures.append(f"RSS after a round {mib(max(after)):.1f} MiB, at start {mib(rss_start):.1f} MiB: "
                            f"more than {near} MiB above the start")
        if after[-1] - after[0] > grow * 1024:
            failures.append(f"RSS grows from round to round: {', '.join(f'{mib(a):.1f}' for a in after)} MiB")
    for f in failures[:20]:
        print(f"FAIL {f}")
    if len(failures) > 20:
        print(f"... and {len(failures) - 20} more failures")
    if failures:
        log.seek(0)
        print("server log (last lines):\n  " + "\n  ".join(log.read().splitlines()[-10:]))
    verdict = "ok" if not failures else f"FAILED ({len(failures)})"
    if rounds:
        stats, wall, peak, _, after, _ = rounds[0]
        lat = stats.latency
        print(f"serve load: {n} tasks from {args.clients} clients, {len(lat)} HTTP requests in {wall:.2f} s: "
              f"{len(lat) / wall:.0f} req/s, p50 {1e3 * percentile(lat, 50):.2f} ms, "
              f"p99 {1e3 * percentile(lat, 99):.2f} ms; statuses "
              + " ".join(f"{s}:{stats.status[s]}" for s in sorted(stats.status))
              + f"; RSS start {mib(rss_start):.1f} MiB, peak {mib(max(r[2] for r in rounds)):.1f} MiB, after "
              + ", ".join(f"{mib(r[4]):.1f}" for r in rounds) + f" MiB ({len(rounds)} rounds); {verdict}")
    else:
        print(f"serve load: {verdict}")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
