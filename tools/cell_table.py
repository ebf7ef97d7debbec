"""cell_table - the Cell paper's qualitative results (Ali, Midkiff and Pai,
ICS'09; extraction in reference/cell-blade.md §6 B-F) against the simulated
blade, measured as the paper measured (issue 33).

The paper's timing (§4): "All latency numbers were averaged over 100,000
iterations"; the broadcast benchmark "uses a barrier after every broadcast
call ... The cost of the barrier is included"; nothing is said of a barrier
for the other collectives, so they run back to back.  Every latency here is
therefore a benchmark loop of `collsim run` (docs/loops.md): the summary's
`average` (nccl-tests' definition: the timed loop's length / N), broadcasts
with `--between barrier:rdb`.

The reading rules are the functions under "Reading rules"; every row uses
them and nothing else to turn numbers into a verdict, so one test
(tests/tools/test_cell_rules.py) checks them on made-up numbers.

    python3 tools/cell_table.py [MACHINE_OPTIONS]          the table
    python3 tools/cell_table.py --convergence               doubled loop counts
    python3 tools/cell_table.py --sensitivity               ±20% of the fits
    python3 tools/cell_table.py --cold                      one cold call per latency
                                                            (the table before issue 33; to CELL_OUT)

Normally run through tools/cell-table, which builds first.  CELL_OUT=FILE
writes the table there instead of docs/cell-results.md; CELL_CACHE=FILE keeps
the results between runs (to re-render the table without simulating).
"""

import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time

TICK_NS = 0.3125  # one 3.2 GHz core cycle (docs/cell.md)

# ---- Reading rules (one per kind of claim; the table's header states them) ----

# "equal", "≈", "the same", a number the paper prints: the larger value is at
# most 10% above the smaller.  Why 10%: the paper gives no error bars and
# its curves are read off log-log figures, where 10% is about the width of a
# plotted marker (0.04 of a decade); the extraction's suggestion (reference
# §6) is the same.  Chosen before the rows were run, and used for every
# equality claim, numeric or not.
EQUAL_TOL = 0.10

# The paper's x-axes: powers of two from 16 B to 32 KiB (reference §4).
SIZES = [16 << i for i in range(12)]


def equal(a, b, tol=EQUAL_TOL):
    """a and b are "equal": the larger at most tol above the smaller."""
    lo, hi = min(a, b), max(a, b)
    return hi <= lo * (1 + tol)


def beats(a, b):
    """A latency a "beats" (is less than, outperforms) b: strictly lower."""
    return a < b


def fastest(lat):
    """The fastest of {label: latency}; on an exact tie the first label
    (a tie is a verdict against any claim that one of them is best)."""
    best = None
    for label, v in lat.items():
        if best is None or v < lat[best]:
            best = label
    return best


def is_best(lat, want):
    """want is "the best" of the set: strictly faster than every other."""
    return all(beats(lat[want], v) for k, v in lat.items() if k != want)


def best_in_range(by_size, want):
    """"want is best in a range": fastest at EVERY size of the range (every
    grid size the paper's range covers), among exactly the algorithms of the
    paper's figure.  by_size: {size: {label: latency}}.  Returns (verdict,
    {size: winner})."""
    winners = {s: fastest(lat) for s, lat in by_size.items()}
    return all(is_best(lat, want) for lat in by_size.values()), winners


def up_to(new, old, claimed):
    """"new has up to X% less latency than old": the best ratio over the
    sizes, min(new/old), equals the paper's 1 - X under the equality rule
    (it is a statement about latencies, so the tolerance applies to the
    latency ratio).  new, old: lists of latencies at the same sizes.
    Returns (verdict, the largest gain 1 - new/old)."""
    ratio = min(n / o for n, o in zip(new, old))
    return equal(ratio, 1 - claimed), 1 - ratio


def constant(values):
    """A quantity is "a constant" over a range: every value equal to every
    other under the equality rule, i.e. the largest at most 10% above the
    smallest."""
    return equal(min(values), max(values))


def in_range(lo=None, hi=None):
    """The grid sizes s with lo < s <= hi (None: open end); the paper's
    "above X" excludes X, "up to X" includes it."""
    return [s for s in SIZES if (lo is None or s > lo) and (hi is None or s <= hi)]


# ---- Running the simulator --------------------------------------------------

# Loop counts: 10 warm-up and 100 timed iterations (docs/cell-results.md
# shows that doubling both changes no verdict).
WARMUP = 10
ITERATIONS = 100
JOBS = 2  # the machine's two shared cores


class RunError(Exception):
    pass


class Runner:
    """Runs `collsim run` on the Cell, caches every result by its exact
    request, and runs the requests a table needs two at a time.

    Rows are evaluated twice: first with collect=True, when every lookup
    records its request and answers a placeholder, then the recorded requests
    run in parallel, and the rows are evaluated on the real numbers."""

    def __init__(self, collsim, machine_extra="", warmup=WARMUP, iterations=ITERATIONS):
        self.collsim = collsim
        self.extra = machine_extra
        self.warmup = warmup
        self.iterations = iterations
        self.cache = {}
        self.collect = False
        self.wanted = []
        self.runs = 0
        self.used = set()  # the keys this runner's rows asked for
        self.cold = False  # --cold: one cold call per run (the table before issue 33)

    def _key(self, P, coll, algo, nbytes, mextra="", loop=True, barrier=None):
        chips = 2 if P > 8 else 1
        spec = "cell:chips=%d" % chips
        loop = loop and not self.cold
        for e in (self.extra, mextra):
            if e:
                # the BIF does not exist on one chip: its keys change nothing
                # there (checked in docs/cell-results.md), so one-chip runs
                # are shared between the sensitivity variants of bif_*
                if chips == 1:
                    e = ",".join(kv for kv in e.split(",") if not kv.startswith("bif_"))
                # add_cycles is the cost of a reduction's adds: collectives
                # that reduce nothing share their runs across its variants
                if coll in ("barrier", "broadcast", "allgather", "gather"):
                    e = ",".join(kv for kv in e.split(",") if not kv.startswith("add_cycles="))
                if e:
                    spec += "," + e
        # the paper's broadcast benchmark has a barrier after every call, the
        # others none; a broadcast that is a phase of another collective
        # (gather + broadcast) passes barrier=False.  The barrier is rdb: the
        # paper's fastest at 16 SPEs (525 ns) and one of the three equal
        # ones (225 ns) at 8.
        if barrier is None:
            barrier = coll == "broadcast"
        between = "barrier:rdb" if loop and barrier else ""
        return (spec, P, coll, algo, nbytes, loop, between,
                self.warmup if loop else 0, self.iterations if loop else 0)

    def _argv(self, key):
        spec, P, coll, algo, nbytes, loop, between, w, n = key
        name, _, opts = algo.partition(":")
        argv = [self.collsim, "run", "--quiet", "--machine", spec, "--ranks", str(P),
                "--coll", coll, "--algo", name, "--bytes", str(nbytes)]
        for o in filter(None, opts.split(",")):
            argv += ["--opt", o]
        if loop:
            argv += ["--warmup", str(w), "--iterations", str(n)]
            if between:
                argv += ["--between", between]
        return argv

    def _run(self, key):
        argv = self._argv(key)
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0:
            return RunError("%s: %s" % (" ".join(argv[1:]), p.stderr.strip()))
        return parse_summary(p.stdout, key[5])

    def get(self, *args, **kw):
        key = self._key(*args, **kw)
        self.used.add(key)
        if key in self.cache:
            r = self.cache[key]
        elif self.collect:
            self.wanted.append(key)
            return {"ns": 1.0, "bif": 0, "gets": 0}
        else:
            r = self.cache[key] = self._run(key)
            self.runs += 1
        if isinstance(r, RunError):
            raise r
        return r

    def prefetch(self):
        todo = list(dict.fromkeys(k for k in self.wanted if k not in self.cache))
        self.wanted = []
        with concurrent.futures.ThreadPoolExecutor(JOBS) as ex:
            for key, r in zip(todo, ex.map(self._run, todo)):
                self.cache[key] = r
        self.runs += len(todo)

    # the quantities the rows use
    def t(self, P, coll, algo, nbytes, mextra="", barrier=None):
        """Latency in ns: the loop average (the paper's convention)."""
        return self.get(P, coll, algo, nbytes, mextra, barrier=barrier)["ns"]

    def bif(self, P, coll, algo, nbytes):
        """Data messages over the BIF in ONE call (a cold single run)."""
        return self.get(P, coll, algo, nbytes, loop=False)["bif"]

    def gets(self, P, coll, algo, nbytes):
        """Most DMA gets of data under way on one chip, over the loop."""
        return self.get(P, coll, algo, nbytes)["gets"]


def load_cache(path):
    """CELL_CACHE=FILE: results kept between runs of the tool (to re-render
    the table after editing its text without simulating again)."""
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        return {tuple(k): v for k, v in json.load(f)}


def save_cache(path, cache):
    if path:
        with open(path, "w") as f:
            json.dump([[list(k), v] for k, v in cache.items() if not isinstance(v, RunError)], f)


def parse_summary(text, loop):
    """The numbers of a `collsim run` summary: the loop's `average` (or the
    single call's `finish`) in ns, the `bif` and `eib` lines' counts."""
    out = {"bif": 0, "gets": 0}
    m = re.search(r"^average\s+([0-9.]+) ticks" if loop else r"^finish\s+([0-9]+) ticks", text, re.M)
    if not m:
        return RunError("no %s line in the summary" % ("average" if loop else "finish"))
    out["ns"] = float(m.group(1)) * TICK_NS
    m = re.search(r"^bif\s+(\d+) data messages", text, re.M)
    if m:
        out["bif"] = int(m.group(1))
    m = re.search(r"^eib\s+at most (\d+) DMA gets", text, re.M)
    if m:
        out["gets"] = int(m.group(1))
    return out


# ---- The rows ----------------------------------------------------------------


def ns(x):
    return "%.1f" % x


def pct(x, digits=0):
    return "%.*f%%" % (digits, 100 * x)


def sizes_text(sizes):
    return ", ".join(size_name(s) for s in sizes)


def size_name(s):
    return "%d KiB" % (s // 1024) if s >= 1024 else "%d B" % s


def winners_text(winners):
    return "; ".join("%s: %s" % (size_name(s), w) for s, w in winners.items())


class Row:
    def __init__(self, rid, claim, simulated, ok, note=""):
        self.rid, self.claim, self.simulated, self.ok, self.note = rid, claim, simulated, ok, note


# The algorithm sets of the paper's figures that the suite implements.  Left
# out everywhere: CML and BMM (not modelled) and the k-chains broadcast (the
# paper gives neither k nor the chains' shape, reference §7; the suite's
# kchain is the lecture's pipelined chain, not the paper's).
AG_FIG11 = ["rdb", "gather+bcast", "hybrid:x=2,y=8", "hybrid:x=3,y=4", "hybrid:x=4,y=2"]
BC_FIG13A = ["flat", "two-to-all", "opt", "simple", "two-phase"]
BC_FIG13B = BC_FIG13A + ["hybrid-segmented"]
AR_FIG14A = ["rdb", "rdb-mailbox", "rdb-barrier", "reduce+bcast", "rabenseifner"]
AR_FIG14B = AR_FIG14A + ["hybrid-b:x=5,y=1"]
AR_FIG15 = ["rdb", "rdb-barrier", "rabenseifner", "hybrid-b:x=5,y=1", "reduce+bcast",
            "hybrid-a:x=2,y=8", "hybrid-a:x=3,y=4", "hybrid-a:x=4,y=2",
            "hybrid-b:x=2,y=8", "hybrid-b:x=3,y=4", "hybrid-b:x=4,y=2"]

LABELS = {"flat": "one-to-all", "opt": "binomial", "simple": "binomial simple",
          "two-phase": "segmented binomial", "hybrid-segmented": "hybrid segmented",
          "dissemination": "Bruck", "rabenseifner": "RS+rdb-allgather",
          "hybrid-b:x=5,y=1": "RS+gather-bcast", "rdb-barrier": "Rdb-Barrier",
          "rdb-mailbox": "rdb mailbox"}


def label(a):
    if a in LABELS:
        return LABELS[a]
    m = re.match(r"(hybrid(?:-[ab])?):x=(\d+),y=(\d+)$", a)
    if m:
        return "%s-%s-%s" % ({"hybrid": "hybrid", "hybrid-a": "HybridA",
                              "hybrid-b": "HybridB"}[m.group(1)], m.group(2), m.group(3))
    return a


class Table:
    """The rows of reference §6 B-F, evaluated on a Runner."""

    def __init__(self, runner):
        self.r = runner

    # composite latencies: the paper's gather+broadcast all-gather and
    # reduce+broadcast all-reduce are its own phases one after the other (a
    # binomial gather or reduce, then its opt broadcast, without a barrier:
    # the broadcast is a phase, not the broadcast benchmark)
    def lat(self, P, coll, algo, n):
        t = self.r.t
        if algo == "gather+bcast":
            return t(P, "gather", "binomial", n) + t(P, "broadcast", "opt", P * n, barrier=False)
        if algo == "reduce+bcast":
            return t(P, "reduce", "binomial", n) + t(P, "broadcast", "opt", n, barrier=False)
        if algo == "rdb-mailbox":
            # the mailbox all-reduce: rdb with a barrier after every round
            # (the 64-bit address in two 32-bit entries must not interleave)
            return t(P, "allreduce", "rdb-barrier:every=1", n, "notify=mailbox")
        return t(P, coll, algo, n)

    def grid(self, P, coll, algos, sizes):
        return {s: {label(a): self.lat(P, coll, a, s) for a in algos} for s in sizes}

    def range_row(self, rid, claim, P, coll, algos, want, sizes):
        ok, winners = best_in_range(self.grid(P, coll, algos, sizes), label(want))
        return Row(rid, claim, winners_text(winners), ok)

    def rows(self):
        out = []
        out += self.barrier()
        out += self.allgather()
        out += self.broadcast()
        out += self.reduce()
        out += self.allreduce()
        return out

    # ---- B. barrier
    def barrier(self):
        t, rows = self.r.t, []
        b8 = {a: t(8, "barrier", a, 0) for a in ("rdb", "dissemination", "flat")}
        rows.append(Row("B1", "8 SPEs: rdb = Bruck = one-to-all = 225 ns",
                        " / ".join(ns(v) for v in b8.values()) + " ns",
                        all(equal(v, 225) for v in b8.values())))
        b16 = {a: t(16, "barrier", a, 0) for a in ("rdb", "dissemination", "flat")}
        rows.append(Row("B2", "16 SPEs: rdb is best (of rdb, Bruck, one-to-all), 525 ns",
                        "best %s; rdb %s ns" % (label(fastest(b16)), ns(b16["rdb"])),
                        is_best(b16, "rdb") and equal(b16["rdb"], 525)))
        rows.append(Row("B3", "16 SPEs: Bruck slower than rdb",
                        "Bruck %s vs rdb %s ns" % (ns(b16["dissemination"]), ns(b16["rdb"])),
                        beats(b16["rdb"], b16["dissemination"])))
        rows.append(Row("B4", "16 SPEs: one-to-all is the worst of the three",
                        "rdb / Bruck / one-to-all %s / %s / %s ns" % (ns(b16["rdb"]), ns(b16["dissemination"]),
                                                                      ns(b16["flat"])),
                        beats(b16["rdb"], b16["flat"]) and beats(b16["dissemination"], b16["flat"])))
        ok, detail = True, []
        for p in (3, 5, 6, 7):
            d, f, r = (t(p, "barrier", a, 0) for a in ("dissemination", "flat", "rdb:fold=near"))
            detail.append("p=%d: %s/%s/%s" % (p, ns(d), ns(f), ns(r)))
            ok = ok and beats(d, r) and beats(f, r)
        rows.append(Row("B5", "p = 3, 5, 6, 7: Bruck and one-to-all beat rdb (its extra round)",
                        "; ".join(detail) + " (Bruck/OTA/rdb ns)", ok))
        d15, r15 = t(15, "barrier", "dissemination", 0), t(15, "barrier", "rdb:fold=near", 0)
        rows.append(Row("B6", "15 SPEs: Bruck = rdb", "Bruck %s vs rdb %s ns" % (ns(d15), ns(r15)),
                        equal(d15, r15)))
        f8, f12, f16 = t(8, "barrier", "flat", 0), t(12, "barrier", "flat", 0), b16["flat"]
        rows.append(Row("B7", "one-to-all degrades beyond 8 SPEs",
                        "8: %s, 12: %s, 16: %s ns" % (ns(f8), ns(f12), ns(f16)),
                        beats(f8, f12) and beats(f12, f16) and beats(b16["rdb"], f16)))
        return rows

    # ---- C. all-gather (bytes per SPE)
    def allgather(self):
        rows, lat = [], self.lat
        lose = [s for s in SIZES if not beats(lat(8, "allgather", "rdb", s), lat(8, "allgather", "gather+bcast", s))]
        rows.append(Row("C1", "8 SPEs: rdb beats gather+broadcast at every size",
                        "loses at " + sizes_text(lose) if lose else "beats at every size", not lose))
        r, g = lat(16, "allgather", "rdb", 32768), lat(16, "allgather", "gather+bcast", 32768)
        rows.append(Row("C2", "16 SPEs, 32 KiB: rdb ≈ gather+broadcast", "rdb %s vs %s ns" % (ns(r), ns(g)),
                        equal(r, g)))
        rows.append(self.range_row("C3", "16 SPEs, below 2 KiB: rdb is best (Fig. 11)", 16, "allgather",
                                   AG_FIG11, "rdb", in_range(None, 1024)))
        r, h = lat(16, "allgather", "rdb", 4096), lat(16, "allgather", "hybrid:x=2,y=8", 4096)
        rows.append(Row("C4", "16 SPEs, 4 KiB: hybrid-2-8 beats rdb", "hybrid-2-8 %s vs rdb %s ns" % (ns(h), ns(r)),
                        beats(h, r)))
        rows.append(self.range_row("C5", "16 SPEs, above 4 KiB: hybrid-3-4 is best (Fig. 11)", 16, "allgather",
                                   AG_FIG11, "hybrid:x=3,y=4", in_range(4096, None)))
        ok, gain = up_to([lat(16, "allgather", "hybrid:x=3,y=4", s) for s in SIZES],
                         [lat(16, "allgather", "rdb", s) for s in SIZES], 0.35)
        rows.append(Row("C6", "16 SPEs: hybrid-3-4 up to 35% less latency than rdb", "up to " + pct(gain), ok))
        return rows

    # ---- D. broadcast (a barrier after every call, included)
    def broadcast(self):
        rows, lat = [], self.lat
        lose, gains = [], []
        for P in (8, 16):
            for s in SIZES:
                o, m = lat(P, "broadcast", "opt", s), lat(P, "broadcast", "simple", s)
                if not beats(o, m):
                    lose.append("%d/%s" % (P, size_name(s)))
                gains.append((o, m))
        ok, gain = up_to([o for o, _ in gains], [m for _, m in gains], 0.42)
        rows.append(Row("D1", "binomial opt beats simple (8 and 16 SPEs, every size), by up to 42%",
                        ("slower at " + ", ".join(lose) + "; " if lose else "faster at every size; ")
                        + "up to %s less" % pct(gain), ok and not lose))
        rows.append(self.range_row("D2", "8 SPEs, up to 2 KiB: one-to-all is best (Fig. 13a)", 8, "broadcast",
                                   BC_FIG13A, "flat", in_range(None, 2048)))
        two, ota, bino = (lat(8, "broadcast", a, 4096) for a in ("two-to-all", "flat", "opt"))
        rows.append(Row("D3", "8 SPEs, 4 KiB: two-to-all < one-to-all < binomial",
                        "%s / %s / %s ns" % (ns(two), ns(ota), ns(bino)), beats(two, ota) and beats(ota, bino)))
        rows.append(self.range_row("D4", "8 SPEs, above 4 KiB: segmented binomial is best (Fig. 13a)", 8,
                                   "broadcast", BC_FIG13A, "two-phase", in_range(4096, None)))
        g = self.grid(16, "broadcast", BC_FIG13B, SIZES)
        ok, winners = best_in_range({s: g[s] for s in in_range(None, 2048)}, "two-to-all")
        ota_best = [s for s in SIZES if fastest(g[s]) == "one-to-all"]
        rows.append(Row("D5", "16 SPEs, small (up to 2 KiB): two-to-all best; one-to-all never best (Fig. 13b)",
                        winners_text(winners) + "; one-to-all best at: " + (sizes_text(ota_best) or "none"),
                        ok and not ota_best))
        ok, winners = best_in_range({s: g[s] for s in in_range(2048, None)}, "hybrid segmented")
        rows.append(Row("D6", "16 SPEs, above 2 KiB: hybrid segmented binomial is best (Fig. 13b)",
                        winners_text(winners), ok))
        faster = [s for s in SIZES if not beats(g[s]["binomial"], g[s]["segmented binomial"])]
        rows.append(Row("D7", "16 SPEs: segmented binomial without the hybrid (about 14 BIF messages) is "
                              "slower than binomial",
                        ("faster at " + sizes_text(faster) if faster else "slower at every size")
                        + "; %d BIF data messages" % self.r.bif(16, "broadcast", "two-phase", 4096), not faster))
        return rows

    # ---- E. reduce
    def reduce(self):
        rows, t = [], self.r.t

        def crossover(rid, P, at):
            ok, detail = True, []
            for s in SIZES:
                b, r = t(P, "reduce", "binomial", s), t(P, "reduce", "rabenseifner", s)
                detail.append("%s: %s/%s" % (size_name(s), ns(b), ns(r)))
                ok = ok and (beats(r, b) if s > at else not beats(r, b))
            return Row(rid, "%d SPEs: Rabenseifner beats binomial above %s, not below" % (P, size_name(at)),
                       "; ".join(detail) + " (binomial/Rabenseifner ns)", ok)

        rows.append(crossover("E1", 8, 1024))
        rows.append(crossover("E2", 16, 4096))
        d = [t(8, "reduce", "mailbox", s, "notify=mailbox") - t(8, "reduce", "binomial", s) for s in SIZES]
        rows.append(Row("E3", "8 SPEs: binomial mailbox - binomial LS is a constant (every size)",
                        "%s to %s ns" % (ns(min(d)), ns(max(d))), constant(d)))
        return rows

    # ---- F. all-reduce
    def allreduce(self):
        rows, lat = [], self.lat
        small = in_range(None, 256)
        ok8, w8 = best_in_range(self.grid(8, "allreduce", AR_FIG14A, small), "rdb")
        ok16, w16 = best_in_range(self.grid(16, "allreduce", AR_FIG14B, small), "rdb")
        rows.append(Row("F1", "8 and 16 SPEs, below 512 B: rdb is best (Fig. 14)",
                        "8: %s; 16: %s" % (winners_text(w8), winners_text(w16)), ok8 and ok16))
        g8 = self.grid(8, "allreduce", AR_FIG14A, SIZES)
        few = [s for s in (512, 1024) if fastest(g8[s]) == "Rdb-Barrier"]
        rows.append(Row("F2", "8 SPEs, around 512 B-1 KiB: Rdb-Barrier is the best for a few points (Fig. 14a)",
                        "; ".join("%s: %s (Rdb-Barrier %s, rdb %s ns)" % (size_name(s), fastest(g8[s]),
                                                                            ns(g8[s]["Rdb-Barrier"]), ns(g8[s]["rdb"]))
                                  for s in (512, 1024)), bool(few)))
        ok, winners = best_in_range({s: g8[s] for s in in_range(1024, None)}, "RS+rdb-allgather")
        rows.append(Row("F3", "8 SPEs, above 1 KiB: reduce-scatter + rdb all-gather is best (Fig. 14a)",
                        winners_text(winners), ok))
        r, g = lat(16, "allreduce", "rabenseifner", 32768), lat(16, "allreduce", "hybrid-b:x=5,y=1", 32768)
        rows.append(Row("F4", "16 SPEs, 32 KiB: RS + rdb all-gather ≈ RS + gather-broadcast",
                        "%s vs %s ns" % (ns(r), ns(g)), equal(r, g)))
        lose = [s for s in SIZES if not beats(lat(16, "allreduce", "hybrid-a:x=4,y=2", s),
                                              lat(16, "allreduce", "reduce+bcast", s))]
        rows.append(Row("F5", "16 SPEs: HybridA-4-2 beats reduce + broadcast at every size",
                        "loses at " + sizes_text(lose) if lose else "beats at every size", not lose))
        g15 = self.grid(16, "allreduce", AR_FIG15, SIZES)
        for rid, claim, want, sizes in (
                ("F6", "16 SPEs, smallest sizes (below 256 B): rdb is best (Fig. 15)", "rdb", in_range(None, 128)),
                ("F7", "16 SPEs, 256 B-2 KiB: HybridA-2-8 is best (Fig. 15)", "HybridA-2-8", in_range(128, 2048)),
                ("F8", "16 SPEs, above 2 KiB to 4 KiB: HybridB-2-8 is best (Fig. 15)", "HybridB-2-8",
                 in_range(2048, 4096)),
                ("F9", "16 SPEs, above 4 KiB: HybridB-3-4 is best (Fig. 15)", "HybridB-3-4", in_range(4096, None))):
            ok, winners = best_in_range({s: g15[s] for s in sizes}, want)
            rows.append(Row(rid, claim, winners_text(winners), ok))
        gap = {s: g8[s]["rdb mailbox"] - g8[s]["rdb"] for s in SIZES}
        lo = min(gap[s] for s in small)
        above = in_range(256, None)
        rows.append(Row("F10", "8 SPEs: rdb mailbox - rdb LS is a constant up to 256 B; above, rdb LS degrades "
                               "against the mailbox version (the gap shrinks)",
                        "up to 256 B: %s to %s; above: %s (ns)" % (
                            ns(lo), ns(max(gap[s] for s in small)),
                            ", ".join("%s: %s" % (size_name(s), ns(gap[s])) for s in above)),
                        constant([gap[s] for s in small]) and all(beats(gap[s], lo) for s in above)))
        new = [g15[s]["HybridB-3-4"] for s in SIZES]
        old = [min(g15[s]["RS+rdb-allgather"], g15[s]["RS+gather-bcast"]) for s in SIZES]
        ok, gain = up_to(new, old, 0.15)
        rows.append(Row("F11", "16 SPEs: HybridB-3-4 up to 15% less latency than the best Rabenseifner variant",
                        "up to " + pct(gain, 1), ok))
        ok, detail = True, []
        for s in above:
            a, b = self.r.gets(8, "allreduce", "rdb", s), self.r.gets(8, "allreduce", "rdb-barrier", s)
            detail.append("%s: %d/%d" % (size_name(s), a, b))
            ok = ok and a > 12 and b <= 12
        rows.append(Row("F12", "8 SPEs above 256 B: rdb LS has more than 12 transfers in flight, Rdb-Barrier not",
                        "; ".join(detail) + " (most DMA gets under way, rdb/Rdb-Barrier)", ok))
        return rows


def evaluate(runner):
    """The rows on a runner: collect the requests, run them two at a time,
    then evaluate on the numbers."""
    runner.collect = True
    Table(runner).rows()
    runner.collect = False
    runner.prefetch()
    return Table(runner).rows()


# ---- Output ---------------------------------------------------------------------

RULES = """\
**How the paper timed, and how the table does** (paper §4, docs/cell.md "Reading the
paper's table"). Every latency is a loop average: %(warmup)d warm-up and %(iterations)d timed calls in one
simulation, the timed loop's length / %(iterations)d (`collsim run --warmup %(warmup)d
--iterations %(iterations)d`, docs/loops.md), as the paper averaged 100,000 calls. Broadcasts run with
an rdb barrier after every call (`--between barrier:rdb`), its cost included, as the paper's
broadcast benchmark does; every other collective runs back to back. Gather + broadcast and reduce +
broadcast are the two phases' loop averages added (a binomial gather or reduce, then the paper's opt
broadcast). rdb folds the extra ranks of 15 SPEs onto partners on their own chip (`fold=near`, the
rule the paper's wording supports, docs/cell.md).

**Reading rules**, one per kind of claim, applied by code (`tools/cell_table.py`, tested by
`tests/tools/test_cell_rules.py`):

- **equal / ≈ / a printed number / "a constant"**: the larger value at most 10%% above the smaller
  (for a constant: the largest value of the range at most 10%% above its smallest). 10%%: no error
  bars in the paper, curves read off log-log figures, the extraction's suggestion.
- **A beats / is slower than B**: strictly, at every size the claim covers.
- **X is best in a range**: strictly the fastest at every size of the paper's grid (16 B, 32 B,
  ... 32 KiB) the range covers ("above 4 KiB" = 8 to 32 KiB, "up to 2 KiB" = 16 B to 2 KiB),
  among exactly the algorithms of the paper's figure that the suite has (CML, BMM and k-chains
  left out).
- **up to X%% less latency**: the best latency ratio over the sizes, min(new / old), equals the
  paper's 1 − X under the equality rule.
- **for a few points**: at least one size of the range.
"""


def render(rows, extra, runner):
    ok = sum(r.ok for r in rows)
    lines = [
        "# The Cell paper's results on the simulated blade",
        "",
        "Generated by `tools/cell-table`%s from simulations on `cell:chips=1` (8 SPEs) and"
        % (" (machine options: %s)" % extra if extra else ""),
        "`cell:chips=2` (16 SPEs); the claims are the paper's (reference/cell-blade.md §6 B-F).",
        "Latencies in ns. **%d of %d rows reproduce** (%.0f%%). docs/cell.md explains the model and"
        % (ok, len(rows), 100.0 * ok / len(rows)),
        "the verdicts.",
        "",
        RULES % {"warmup": runner.warmup, "iterations": runner.iterations},
        "The rows are every qualitative claim of §6 B-F but three kinds: the comparisons with the",
        "prior art (tests 13, 30, 34, 43: CML's extra copies and BMM's protocol are not described",
        "well enough to model) and the 35 µs atomic-increment barrier (14, main memory is not",
        "modelled); the one-to-all signal barrier (8), which `signal_read` is fitted to; and the",
        "structural counts (21, 29, 44), which docs/cell.md lists and the tests hold exactly.",
        "",
        "| row | the paper says | the simulator | verdict | mechanism (for a row not reproduced) |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append("| %s | %s | %s | %s | %s |" % (r.rid, r.claim, r.simulated,
                                                    "reproduced" if r.ok else "**not reproduced**",
                                                    NOTES.get(r.rid, "") if not r.ok else ""))
    return "\n".join(lines) + "\n"


# The mechanism behind every row that does not reproduce, as the simulation
# shows it (each checked against runs; the evidence is quoted in
# docs/cell.md "What does not reproduce, and why").
NOTES = {
    "B2": "see B4",
    "B4": "in the loop the one-to-all root's releases overlap the next barrier's arrivals from the SPEs it "
          "released first: an iteration spans 800 ns, but one starts every 492 ns (the cold call: 684 ns); "
          "rdb's rounds cannot overlap that way (spans 718 ns, one every 525 ns), so one-to-all passes rdb",
    "B7": "see B4: at 12 and 16 SPEs the loop hides the arrivals behind the releases, so one-to-all rises "
          "(226, 380, 492 ns) but ends below rdb's 525 ns",
    "C3": "each rdb message crossing the BIF carries three commands (ADDR, get, ACK) at bif_gap each, 8 "
          "messages each way in the last round against hybrid-2-8's 4: at 16 B one call of rdb takes "
          "1,253 ns, hybrid-2-8 1,016 ns; the BIF is dearer per message than in the paper",
    "D1": "opt's parent waits for each child's ACK before serving the next (a round of ADDR, get and "
          "ACK, about 225 ns); simple's children get at once, and below 4 KiB their gets share the "
          "parent's off-ramp for less than that round",
    "D3": "one-to-all's root serves seven 4 KiB gets through one off-ramp (7 × 4 KiB at 25.6 GB/s = "
          "1.12 µs), more than the binomial tree's three rounds, so binomial < one-to-all",
    "D5": "in the loop each broadcast starts as the rdb barrier lets the SPEs go, not all at once; "
          "two-to-all's serial first step (root to SPE 8 over the BIF, its ACK, then each serves its "
          "chip) waits on the late ones: at 64 B an iteration spans 903 ns (708 cold), binomial "
          "simple's 773 (745 cold), so simple, in the paper's figure, is the fastest to 2 KiB",
    "D6": "a served child costs a round of ADDR, get and ACK (about 225 ns, 5.6 KiB at a ramp's "
          "25.6 GB/s), so halving the data pays from 8 KiB: at 4 KiB binomial is faster",
    "E1": "back to back, the binomial reduce pipelines: leaves start the next call while the root still "
          "reduces (at 2 KiB a call spans 1,783 ns, one starts every 769 ns); Rabenseifner's rounds "
          "involve every SPE (span 1,594, every 1,236 ns), so binomial wins up to 4 KiB (one cold "
          "call: up to 2 KiB, already past the paper's 1 KiB)",
    "E2": "see E1: the pipelined binomial reduce wins up to 16 KiB (one cold call: up to 8 KiB)",
    "E3": "the mailbox reduce's barrier after every round stops the pipelining of E1 (a call spans "
          "1,599 ns and one starts every 1,597 ns at 128 B) while the LS binomial overlaps calls "
          "more as data grows: the gap grows with size",
    "F2": "at most 8 DMA gets are under way on the chip with or without barriers (an SPE's next get "
          "carries what its last one brought), so no EIB saturation for a barrier to relieve; the "
          "barrier only adds time",
    "F3": "at 2 KiB rdb's 3 rounds beat Rabenseifner's 6 (each round's ADDR and ACK about 150 ns "
          "against 2 KiB of ramp time, 80 ns): halving the data pays from 4 KiB",
    "F6": "see C3: the rdb round over the BIF (16 messages, 3 commands each) costs more than "
          "HybridA-2-8's extra round",
    "F7": "back to back, HybridA-3-4's deeper binomial reduce lets its leaves start the next call "
          "sooner (see E1): at 2 KiB a call starts every 2,023 ns against HybridA-2-8's 2,041, while "
          "one cold call is 2,233 against 2,176 ns",
    "F8": "HybridB's reduce-scatter starts at XOR 8 (the paper's stated order), putting half the "
          "vector of every SPE over the BIF: 48 KiB cross at 4 KiB for HybridB-2-8 against 16 KiB "
          "for HybridA-3-4, which wins",
    "F9": "see F8: the two share the reduce-scatter whose 16 crossings dominate the BIF traffic "
          "(24 BIF messages for HybridB-2-8, 20 for 3-4), so 3-4's 4 fewer cost less than its extra "
          "round until 16 KiB: at 8 KiB HybridB-2-8 wins",
    "F10": "the mailbox's own cost is a constant 225 ns at every size (mailbox − LS rdb-barrier:every=1 "
           "at 256 B, 2 KiB, 16 KiB and 32 KiB); what moves is the cost of a barrier after every "
           "round, 820 / 709 / 779 / 859 ns at the same sizes: the gap shrinks to 2 KiB as the paper "
           "says, then grows. EIB saturation is not the cause: at 32 KiB, the one size where LS rdb "
           "has more than 12 gets under way (16, F12), it gains on the mailbox version instead of "
           "losing",
    "F12": "within a round every SPE has its own get under way and a round's get carries what the last "
           "one brought: 8 gets per chip up to 16 KiB, 16 at 32 KiB (two 16 KiB commands each), and "
           "the same with a barrier every two rounds, which cannot lower a round's own count",
}


# Fitted parameters of the Cell machine (docs/cell.md "Parameters"), with
# their defaults: the sensitivity mode moves each by -20% and +20%.
# add_cycles is an integer: 2 and 4 (-33%, +33%) are its nearest values.
# Left out: signal_read (fitted, but only notify=signal uses it and no row
# does), hop and bif_lat (chosen 0: a percentage of 0 is 0), bif_bw (a
# reading of the paper's "80% less", not a fit) and chips.
FITTED = [("issue", 12.5, "ns"), ("flight", 62.5, "ns"), ("bif_gap", 27.5, "ns"), ("add_cycles", 3, "")]


def variants():
    for name, v, unit in FITTED:
        for f in (0.8, 1.2):
            x = v * f
            if not unit:
                x = int(round(v + (1 if f > 1 else -1) * max(1, abs(v * (f - 1)))))
            yield name, f, "%s=%g%s" % (name, x, unit)


def splice(path, name, text):
    """Replace (or append) the section between name's markers in path, so the
    modes' sections and the table live in one file."""
    begin, end = "<!-- %s: begin -->" % name, "<!-- %s: end -->" % name
    old = open(path).read() if os.path.exists(path) else ""
    block = "%s\n%s%s\n" % (begin, text, end)
    if begin in old and end in old:
        new = old[:old.index(begin)] + block + old[old.index(end) + len(end) + 1:]
    else:
        new = old + ("\n" if old else "") + block
    with open(path, "w") as f:
        f.write(new)


def sections(path):
    """The modes' sections of an existing results file, kept when the table
    is written again."""
    if not os.path.exists(path):
        return ""
    old = open(path).read()
    return "\n" + "\n".join(m.group(0) for m in re.finditer(r"<!-- (\w+): begin -->.*?<!-- \1: end -->\n?",
                                                            old, re.S)) if "begin -->" in old else ""


def convergence(collsim, extra, cache):
    """The table at the loop counts and at twice both: verdicts compared, and
    the largest change of any latency."""
    a = Runner(collsim, extra)
    b = Runner(collsim, extra, 2 * WARMUP, 2 * ITERATIONS)
    a.cache = b.cache = cache  # the counts are part of every key
    ra, rb = evaluate(a), evaluate(b)
    flips = [x.rid for x, y in zip(ra, rb) if x.ok != y.ok]
    changes = []
    for key in sorted(a.used):
        v = a.cache[key]
        if isinstance(v, RunError) or not key[5]:
            continue
        w = b.cache.get(key[:7] + (2 * key[7], 2 * key[8]))
        if w is None or isinstance(w, RunError):
            continue
        changes.append((abs(w["ns"] - v["ns"]) / v["ns"], "%s/%s on %d SPEs at %d B" % (key[2], key[3], key[1], key[4])))
    changes.sort(reverse=True)
    over = [c for c in changes if c[0] > 0.01]
    text = ("## Convergence of the loop average\n\n"
            "The same table with %d warm-up and %d timed iterations instead of %d and %d: %s. Of its %d "
            "loop averages %d move by more than 1%%%s; the largest change is %.2f%% (%s). "
            "Made by `tools/cell-table --convergence`.\n"
            % (2 * WARMUP, 2 * ITERATIONS, WARMUP, ITERATIONS,
               "no verdict changes" if not flips else "verdicts change in " + ", ".join(flips),
               len(changes), len(over),
               " (%s)" % "; ".join(sorted(set(c[1].split(" at ")[0] for c in over))) if over else "",
               100 * changes[0][0] if changes else 0, changes[0][1] if changes else "none"))
    b.runs += a.runs
    return text, ra, b


def sensitivity(collsim, extra, cache):
    """Every fitted parameter at -20% and +20%: which verdicts flip."""
    base = Runner(collsim, extra)
    base.cache = cache
    rows = evaluate(base)
    cache = base.cache
    flips = {r.rid: {} for r in rows}
    counts = []
    for name, f, kv in variants():
        r = Runner(collsim, ",".join(filter(None, (extra, kv))))
        r.cache = cache  # keys name the whole machine: shared safely
        vrows = evaluate(r)
        counts.append((kv, sum(x.ok for x in vrows)))
        for x, y in zip(rows, vrows):
            if x.ok != y.ok:
                flips[x.rid].setdefault(name, []).append("%+d%%" % round(100 * (f - 1)))
    names = [n for n, _, _ in FITTED]
    out = ["## Sensitivity of the verdicts to the fitted parameters", "",
           "Each fitted parameter of the Cell machine moved by −20% and +20% (add_cycles, an "
           "integer, to 2 and 4), one at a time; a cell says whether the row's verdict flips. "
           "Made by `tools/cell-table --sensitivity`.", "",
           "| row | verdict | " + " | ".join("`%s`" % n for n in names) + " |",
           "|---|---|" + "---|" * len(names)]
    for x in rows:
        cells = []
        for n in names:
            at = flips[x.rid].get(n)
            cells.append("flips at " + "/".join(at) if at else "robust")
        out.append("| %s | %s | %s |" % (x.rid, "reproduced" if x.ok else "not reproduced", " | ".join(cells)))
    out += ["", "Rows reproduced: %d at the defaults; " % sum(x.ok for x in rows)
            + ", ".join("%d with `%s`" % (c, kv) for kv, c in counts) + "."]
    return "\n".join(out) + "\n", cache


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    collsim = os.environ.get("COLLSIM", os.path.join(root, "build", "collsim"))
    args = [a for a in argv if not a.startswith("--")]
    modes = [a for a in argv if a.startswith("--")]
    extra = args[0] if args else ""
    out = os.environ.get("CELL_OUT", os.path.join(root, "docs", "cell-results.md"))
    t0 = time.monotonic()
    bad = [m for m in modes if m not in ("--cold", "--sensitivity", "--convergence")] or (
        ["--cold with another mode"] if "--cold" in modes and len(modes) > 1 else [])
    if bad or len(args) > 1:
        sys.stderr.write("cell-table: unknown option %s (expected [MACHINE_OPTIONS] and --cold, or "
                         "--sensitivity and/or --convergence)\n" % (bad[0] if bad else args[1]))
        return 2
    if not modes or modes == ["--cold"]:
        runner = Runner(collsim, extra)
        runner.cold = bool(modes)
        runner.cache = load_cache(os.environ.get("CELL_CACHE"))
        rows = evaluate(runner)
        save_cache(os.environ.get("CELL_CACHE"), runner.cache)
        text = render(rows, extra, runner)
        if runner.cold:
            text = text.replace("Generated by `tools/cell-table`", "Generated by `tools/cell-table --cold` "
                                "(one cold call per latency, NOT the paper's convention)", 1)
        with_sections = text + sections(out)
        with open(out, "w") as f:
            f.write(with_sections)
        sys.stdout.write(text)
        sys.stderr.write("cell-table: %d simulations in %.0f s\n" % (runner.runs, time.monotonic() - t0))
        return 0
    cache = load_cache(os.environ.get("CELL_CACHE"))
    if "--sensitivity" in modes:
        n0 = len(cache)
        text, cache = sensitivity(collsim, extra, cache)
        dt = time.monotonic() - t0
        text += ("It ran %d simulations in %.0f s (two at a time; the one-chip runs are shared by the "
                 "`bif_gap` variants, the runs that reduce nothing by the `add_cycles` ones)%s.\n"
                 % (len(cache) - n0, dt, "; %d more came from CELL_CACHE" % n0 if n0 else ""))
        splice(out, "sensitivity", text)
        save_cache(os.environ.get("CELL_CACHE"), cache)
        sys.stdout.write(text)
    if "--convergence" in modes:
        t1 = time.monotonic()
        text, _, runner = convergence(collsim, extra, cache)
        text += ("It ran %d simulations in %.0f s.\n" % (runner.runs, time.monotonic() - t1) if runner.runs
                 else "Every run came from CELL_CACHE.\n")
        splice(out, "convergence", text)
        save_cache(os.environ.get("CELL_CACHE"), runner.cache)
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except RunError as e:
        sys.stderr.write("cell-table: a simulation failed: %s\n" % e)
        sys.exit(1)
