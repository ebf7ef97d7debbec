"""_multi - collsim.sweep and collsim.compare: many runs, one row each.

The rows are plain dicts with the columns of the command line's CSV
(`collsim sweep --csv`, `collsim compare --csv`), the same keys in every
row, so that pandas.DataFrame(rows) takes them as they are.  The numbers
are those of the CSV at full precision (the CSV prints seconds with 9
significant digits).
"""

import time

from . import Error, Machine, Request, algorithms, parse_sizes, _as_int, _no_bool, _short, _str
from ._par import run_points, jobs_count

# The sweep's ticks are the runs': nothing here computes a time itself.


def _names(algos, coll):
    """--algos: a list, "a,b,c" or "all" (every algorithm of coll)."""
    if isinstance(algos, str):
        if algos == "all":
            names = [a["name"] for a in algorithms(coll)]
            if not names:
                raise Error(1, "sweep: --algos all: no algorithm implements %s" % coll)
            return names
        algos = algos.split(",")
    return [str(a) for a in algos]


def _sizes(name, v):
    """Sizes as the sweep takes them (argument name: bytes or ranks): one
    integer, a text that collsim_parse_sizes reads ("8..1MiB:x2"), or any
    sequence of integers and size texts: a list, a tuple, a range, a numpy
    array (numpy's integer types are integers), a generator.  TypeError for
    a bool (int(True) would be a size of 1) and for a non-integer (a float,
    even 1024.0: numpy.logspace gives floats, round them), naming the
    element; Error for an empty sequence (nothing would run)."""
    _no_bool(name, v, "sizes and rank counts are ints or texts")
    if isinstance(v, str):
        return parse_sizes(v)
    if isinstance(v, bytes) or not hasattr(v, "__iter__") or getattr(v, "ndim", 1) == 0:
        return [_as_int(name, v)]
    if getattr(v, "ndim", 1) != 1:
        raise TypeError("%s=%s: a one-dimensional sequence of sizes (this array has shape %s)"
                        % (name, _short(v), getattr(v, "shape", "?")))
    out = []
    for i, x in enumerate(v):
        # a text element is read as --bytes reads it ("4KiB": 4096); the
        # rows carry ints, whatever the caller wrote
        out += parse_sizes(x) if isinstance(x, str) else [_as_int("%s[%d]" % (name, i), x)]
    if not out:
        raise Error(1, "%s: an empty sequence: no size to run" % name)
    return out


def _scope(opt):
    """(ALGO or None, KEY=VALUE) of an --opt text [ALGO:]KEY=VALUE."""
    colon, eq = opt.find(":"), opt.find("=")
    if colon < 0 or (0 <= eq < colon):
        return None, opt
    return opt[:colon], opt[colon + 1:]


def _opt_texts(opt):
    if opt is None:
        return []
    if isinstance(opt, str):
        return [opt]
    if isinstance(opt, dict):
        return ["%s=%s" % (k, _str(v)) for k, v in opt.items()]
    return [str(o) for o in opt]


def sweep(machine, coll, algos, bytes, ranks=None, mode=None, root=None, order=None,
          opt=None, force=None, keep_going=False, jobs=1):
    """Runs coll with every algorithm of algos, for every rank count of
    ranks (None: every node) and every size of bytes, on one machine built
    once, in the order of `collsim sweep` (algorithm, then ranks, then
    size).  Returns a list of dicts with the columns of `collsim sweep
    --csv`: machine (the normalised spec), coll, algo, bytes, ranks, ticks,
    seconds, events, algbw_bytes_per_s, busbw_bytes_per_s (nccl-tests'
    bandwidths, docs/bandwidth.md; 0 for a barrier).

    algos: a list, "a,b" or "all".  bytes and ranks: an int, a list, or a
    text in the syntax of `collsim sweep --bytes` ("8..1MiB:x2").  opt: a
    dict or a list of "[ALGO:]KEY=VALUE" texts (ALGO: for that algorithm
    only).  machine may be a Machine.  A failing point raises Error; with
    keep_going=True it is left out (as --keep-going does) and the errors
    are in the `errors` attribute of the returned list.  jobs: worker
    processes (0: one per core), as `collsim sweep --jobs`: the same rows
    in the same order."""
    m = machine if isinstance(machine, Machine) else Machine(machine)
    names = _names(algos, coll)
    sizes = _sizes("bytes", bytes)
    counts = [None] if ranks is None else _sizes("ranks", ranks)
    opts = [_scope(o) for o in _opt_texts(opt)]
    for scope, _ in opts:
        if scope is not None and scope not in names:
            raise Error(1, "sweep: --opt '%s:...': '%s' is not in --algos" % (scope, scope))
    jobs_count(jobs)
    points = [(name, p, b) for name in names for p in counts for b in sizes]

    def point(i):
        name, p, b = points[i]
        mine = [kv for scope, kv in opts if scope is None or scope == name]
        req = Request(coll=coll, algo=name, bytes=b, ranks=p, mode=mode, root=root,
                      order=order, opt=mine, force=force)
        r = m.run(req)
        ticks = r.ticks
        bw = r.bandwidth or {}
        return {"machine": m.spec, "coll": coll, "algo": name, "bytes": int(b),
                "ranks": r.ranks, "ticks": ticks,
                "seconds": ticks * m.tick_seconds, "events": r.events,
                "algbw_bytes_per_s": bw.get("algbw_bytes_per_second", 0.0),
                "busbw_bytes_per_s": bw.get("busbw_bytes_per_second", 0.0)}

    rows = _Rows()
    for i, ok, v in run_points(point, len(points), jobs):
        if ok:
            rows.append(v)
            continue
        name, p, b = points[i]
        rows.failed(Error(*v), "%s/%s at %s bytes%s" % (
            coll, name, b, "" if p is None else ", %s ranks" % p), keep_going)
    return rows


class _Rows(list):
    """A list of rows with the errors of the points left out."""

    def __init__(self):
        super().__init__()
        self.errors = []

    def failed(self, e, where, keep_going):
        """Names the point that failed in e's message (as the CLI does);
        re-raises e unless keep_going, when it is kept in self.errors."""
        e.message = "%s: %s" % (where, e.message)
        e.args = (e.message,)
        if not keep_going:
            raise e
        self.errors.append(e)


def _busiest(ch):
    """The busiest channel of a run as `collsim compare` picks it: most
    busy ticks, then most bytes, then the lowest id; channels that carried
    nothing never.  None when there is none."""
    best = None
    for c in range(len(ch["src"])):
        busy, nbytes = int(ch["busy_ticks"][c]), int(ch["bytes"][c])
        if busy == 0 and nbytes == 0:
            continue
        if best is None or (busy, nbytes) > best[:2]:
            best = (busy, nbytes, c)
    return None if best is None else best[2]


def compare(machines=None, coll=None, algo=None, bytes=None, ranks=None, mode=None,
            root=None, order=None, opt=None, validate=None, force=None, timing=True,
            keep_going=False, jobs=1):
    """Runs one algorithm (default: the collective's first) on several
    machines: a list of specs or Machines, or one text with specs separated
    by ';' (default: one example of every machine type, as `collsim
    compare`).  Returns a list of dicts with the columns of `collsim
    compare --csv`: machine (the short description), spec, coll, algo,
    bytes, ranks, ticks, seconds, algbw_bytes_per_s, busbw_bytes_per_s
    (nccl-tests' bandwidths, docs/bandwidth.md; 0 for a barrier), busiest_link
    ("u→v" with the nodes' labels, "-" when no channel was used),
    busiest_util, events, wall_seconds (0 with timing=False, as
    --no-timing).  As `collsim compare`, every machine runs the same rank
    count: `ranks`, or the most that every machine holds.  mode="fluid" runs the machines
    that have their own engine (no fluid mode) in packet mode.  A failing
    machine raises Error; with keep_going=True it is left out and its
    error kept in the list's `errors`.  jobs: worker processes (0: one per
    core), as `collsim compare --jobs`: the same rows in the same order."""
    if coll is None:
        raise Error(1, "compare: missing --coll NAME (see 'collsim list algorithms')")
    if machines is None:
        machines = _examples()
    elif isinstance(machines, str):
        machines = [s for s in machines.split(";") if s]
    if algo is None:
        listed = algorithms(coll)
        if not listed:
            raise Error(1, "compare: --coll: unknown collective \"%s\"" % coll)
        algo = next((a["name"] for a in listed if a.get("default")), listed[0]["name"])
    if ranks is None:
        # like for like, as `collsim compare`: the most ranks every machine holds
        ranks = _common_ranks(machines)
    jobs_count(jobs)

    def point(i):
        spec = machines[i]
        m = spec if isinstance(spec, Machine) else Machine(spec)
        keys = dict(coll=coll, algo=algo, bytes=bytes, ranks=ranks, root=root,
                    order=order, opt=_opt_texts(opt), validate=validate, force=force)
        t0 = time.perf_counter()
        try:
            r = m.run(**keys, mode=mode)
        except Error as e:
            if mode != "fluid" or e.code != 1 or "no fluid mode" not in e.message:
                raise
            r = m.run(**keys)  # its own engine: packet only (see the docstring)
        wall = time.perf_counter() - t0 if timing else 0.0
        ticks = r.ticks
        seconds = ticks * m.tick_seconds
        ch = r.channels
        c = _busiest(ch)
        nbytes = int(parse_sizes(bytes)[0]) if isinstance(bytes, str) else int(bytes)
        bw = r.bandwidth or {}
        return {
            "machine": m.name, "spec": m.spec, "coll": coll, "algo": algo, "bytes": nbytes,
            "ranks": r.ranks, "ticks": ticks, "seconds": seconds,
            "algbw_bytes_per_s": bw.get("algbw_bytes_per_second", 0.0),
            "busbw_bytes_per_s": bw.get("busbw_bytes_per_second", 0.0),
            "busiest_link": "-" if c is None else "%s\u2192%s" % (
                m.node_name(int(ch["src"][c])), m.node_name(int(ch["dst"][c]))),
            "busiest_util": 0.0 if c is None or ticks <= 0 else int(ch["busy_ticks"][c]) / ticks,
            "events": r.events, "wall_seconds": wall}

    rows = _Rows()
    for i, ok, v in run_points(point, len(machines), jobs):
        if ok:
            rows.append(v)
            continue
        spec = machines[i]
        rows.failed(Error(*v), spec if isinstance(spec, str) else spec.spec, keep_going)
    return rows


def _common_ranks(machines):
    """The most ranks that every machine holds (`collsim compare`'s default,
    cs_compare_common_ranks): the smallest default rank count, read from a
    barrier run without ranks (the library gives topology nodes, not the
    nodes that can run a rank); machines that fail are skipped (their own
    run reports them).  None when none runs."""
    best = None
    for spec in machines:
        try:
            m = spec if isinstance(spec, Machine) else Machine(spec)
            p = m.run(coll="barrier").ranks
        except Error:
            continue
        best = p if best is None or p < best else best
    return best


def _examples():
    """One example spec of every machine type (`collsim compare`'s default)."""
    from . import machines as _machines
    specs = [t.get("example") for t in _machines()]
    specs = [s for s in specs if s]
    if not specs:
        raise Error(1, "compare: this libcollsim lists no example machines; give machines=")
    return specs
