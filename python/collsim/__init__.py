"""collsim - the collsim network simulator from Python (issue 20).

A thin ctypes layer over libcollsim's public C interface
(include/collsim/collsim.h, docs/api-c.md): the requests, results and
messages are the library's, which are the command line's, so a run from
Python gives the numbers and the JSON of `collsim run` for the same
request.  docs/python.md is the guide.

    import collsim
    r = collsim.run(machine="cerebras:rows=8,cols=8", coll="reduce",
                    algo="tree", bytes=4096, validate=True)
    r.seconds, r.cycles, r.validated, r.per_rank, r.channels["utilisation"]
    r.heatmap("reduce.png")          # a file; in Jupyter, `r` alone shows it
    r.heatmap(ax=plt.gca())          # into a matplotlib axis
    rows = collsim.sweep("loggp:p=16", "allreduce", ["ring", "rdb"], "8..1MiB:x4")
    pandas.DataFrame(rows)

numpy is optional: with it, `per_rank` and the columns of `channels` are
numpy arrays; without it, lists.
"""

import ctypes
import json as _json
import math as _math
import numbers as _numbers
import operator as _operator
import os as _os
import tempfile as _tempfile
import threading as _threading

from . import _interrupt, _lib

_C = _lib.load()

try:  # optional: arrays instead of lists
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the system
    _np = None

#: The library's version ("0.1.0").
version = _C.collsim_version().decode()
__version__ = version

__all__ = ["Error", "Machine", "Request", "Result", "run", "sweep", "compare",
           "machines", "algorithms", "parse_sizes", "version"]

# The columns of Result.channels, in collsim_channel's order.
CHANNEL_COLUMNS = ("src", "dst", "bytes", "units", "busy_ticks", "stall_ticks",
                   "peak_k", "utilisation")
# The columns of sweep()'s and compare()'s rows: the CSV header lines of
# `collsim sweep --csv` and `collsim compare --csv`.
SWEEP_COLUMNS = ("machine", "coll", "algo", "bytes", "ranks", "ticks", "seconds", "events",
                 "algbw_bytes_per_s", "busbw_bytes_per_s")
COMPARE_COLUMNS = ("machine", "spec", "coll", "algo", "bytes", "ranks", "ticks", "seconds",
                   "algbw_bytes_per_s", "busbw_bytes_per_s", "busiest_link", "busiest_util",
                   "events", "wall_seconds")


# ---- errors -------------------------------------------------------------------

class Error(Exception):
    """A failure of the library: `code` is the collsim_status (1 usage,
    2 parse, 3 io, 4 nomem, 5 range, 6 deadlock, 7 runtime, 9 internal,
    10 cancelled, 11 oom), `status` its name ("usage", "deadlock", ...),
    `message` the text the command line prints after "collsim: ".  A run
    that failed after it started (a deadlock) keeps what it did in
    `result` (a Result), else `result` is None."""

    def __init__(self, code, message, result=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.result = result

    @property
    def status(self):
        return _C.collsim_status_name(self.code).decode()

    def __repr__(self):
        return "collsim.Error(%d, %r)" % (self.code, self.message)


def _raise(err, result=None):
    raise Error(err.code, err.message.decode("utf-8", "replace"), result)


def _str(v):
    """A request value as the command line's text."""
    if v is True:
        return "1"
    if v is False:
        return "0"
    return str(v)


# The keys whose value is a flag: True / False set and clear them.  Every
# other key takes a number or a text, where a bool is a mistake: bytes=True
# would run 1 byte, ranks=False 0 ranks.
_FLAGS = ("validate", "windowed", "whole", "force", "skip_unknown")


def _no_bool(name, v, hint=None):
    """TypeError when v, the value of argument name, is a bool (a subclass
    of int that Python would otherwise take as 1 or 0)."""
    if isinstance(v, bool):  # numpy.bool_ is refused by the library itself
        raise TypeError("%s=%r: a bool is not a value of %s; %s" % (
            name, v, name, hint or "True / False only set the flags " + ", ".join(_FLAGS)))


# Keys whose value is one number: an int (numpy's too) or a text the
# library reads ("4KiB"); a float or a sequence is refused here, where
# str() would hand the library "1024.0" or "[8 64]".
_NUMBERS = ("bytes", "ranks", "root")


def _as_int(name, v):
    """v as a Python int when it is an integer of any kind (int, numpy.int64,
    a 0-d integer array: whatever operator.index takes); TypeError naming
    name otherwise (a float, even 1024.0, is not rounded silently)."""
    _no_bool(name, v, "sizes and rank counts are integers or texts such as '4KiB'")
    if _np is not None and isinstance(v, _np.bool_):
        raise TypeError("%s=%r: a bool is not a size or a rank count" % (name, v))
    try:
        return _operator.index(v)
    except TypeError:
        pass
    hint = ""
    if isinstance(v, _numbers.Real):
        hint = " (round it first: int(x), or for a numpy array numpy.rint(a).astype(int))"
    raise TypeError("%s=%r: not an integer; sizes and rank counts are integers or texts such "
                    "as '4KiB'%s" % (name, v, hint))


def _one_number(name, v):
    """The value of a one-number key (bytes, ranks, root): an integer or a
    text; a sequence is refused naming collsim.sweep, which takes many."""
    if isinstance(v, (str, bytes)):
        return v
    if not isinstance(v, _numbers.Integral) and hasattr(v, "__iter__") and \
            getattr(v, "ndim", 1) != 0:
        raise TypeError("%s=%s: one value per run; collsim.sweep() takes a sequence of them"
                        % (name, _short(v)))
    return _as_int(name, v)


def _short(v):
    """repr(v) cut to 60 characters (a long array in a message)."""
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def _c_text(name, v):
    """v (a value of argument name) as the bytes of a C string.  A NUL
    would end the string there, and the library would silently see a
    shorter one: refused."""
    b = v if isinstance(v, bytes) else _str(v).encode()
    if b"\0" in b:
        shown = _os.fsdecode(v) if isinstance(v, bytes) else v
        raise Error(1, "%s: %r contains a NUL character, which would cut it short in C"
                    % (name, shown))
    return b


def _timeout(t):
    """timeout= as seconds for threading.Timer, or None for no limit.
    inf, like anything longer than a Timer can wait, means no limit."""
    if t is None:
        return None
    if isinstance(t, bool) or not isinstance(t, _numbers.Real):
        raise TypeError("timeout=%r: seconds as a number (int or float), or None" % (t,))
    t = float(t)
    if _math.isnan(t) or t < 0:
        raise Error(1, "timeout=%r: seconds must be a number >= 0 (None or inf: no limit)"
                    % (t,))
    return None if t > _threading.TIMEOUT_MAX else t


def _take_string(ptr):
    """A malloc'ed NUL-terminated buffer of the library as str; frees it."""
    try:
        return ctypes.string_at(ptr).decode()
    finally:
        _C.collsim_free(ptr)


# ---- requests -----------------------------------------------------------------

class Request:
    """A request: the keys of `collsim run` / `collsim replay` (coll, algo,
    bytes, root, ranks, order, opt, validate, windowed, whole, program, trace,
    format, map, algo_for, flops, skip_unknown, comm_group, mode, queue,
    force, record; iterations, warmup, between, loop for a benchmark loop,
    docs/loops.md; an
    underscore stands for the option's dash).  Built once, it can be run
    many times (Machine.run(request)): the cheapest way to make many runs.
    cancel() stops its run in progress (from another thread): the run
    raises Error with code 10 (cancelled).

    opt is a dict {KEY: VALUE}, a list of "KEY=VALUE" texts, or one text;
    algo_for likewise ("COLL=ALGO").  True / False set and clear a flag
    (validate, windowed, whole, force, skip_unknown); None leaves a key
    out.  A bad key or value raises Error with the command line's message."""

    __slots__ = ("_h", "_flag", "__weakref__")

    def __init__(self, **keys):
        self._h = _C.collsim_request_new()
        if not self._h:
            raise MemoryError("collsim_request_new")
        # the flag the run polls (collsim_request_set_cancel); it lives as
        # long as the request, which is what the C side points to
        self._flag = ctypes.c_int(0)
        _C.collsim_request_set_cancel(self._h, ctypes.byref(self._flag))
        err = _lib.CError()
        for key, value in keys.items():
            if value is None:
                continue
            if key not in _FLAGS:
                _no_bool(key, value)
            if key in _NUMBERS:
                value = _one_number(key, value)
            name = _c_text("key", key.replace("_", "-"))
            for v in _values(key, value):
                if _C.collsim_request_set(self._h, name, _c_text(key, v), ctypes.byref(err)):
                    _raise(err)

    def cancel(self):
        """Stops the run of this request in progress (the run polls every
        65,536 events); a run started later is not affected."""
        self._flag.value = 1

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h and _C is not None:
            _C.collsim_request_free(h)


def _values(key, value):
    """The texts of one key: repeatable keys (opt, algo_for) take several."""
    if key in ("opt", "algo_for"):
        if isinstance(value, dict):
            return ["%s=%s" % (k, _str(v)) for k, v in value.items()]
        if isinstance(value, (list, tuple)):
            return [_str(v) for v in value]
    return [_str(value)]


# ---- machines -----------------------------------------------------------------

class Machine:
    """An open machine ("type[:key=value,...]", `collsim machines()`):
    `spec` (normalised, every key), `type`, `name` (the short description
    of `collsim compare`), `nodes`, `channels`, `tick_seconds`.  Runs on it
    (Machine.run) pay for building it once; one run at a time per machine
    (the results keep the machine open while they live)."""

    __slots__ = ("_h", "_owner", "_live", "_closed", "spec", "type", "nodes", "channels",
                 "tick_seconds", "__weakref__")

    def __init__(self, spec):
        h = ctypes.c_void_p()
        err = _lib.CError()
        self._h = None
        self._owner = None
        self._live = 0  # results of its runs still alive: they need it open
        self._closed = False
        _no_bool("machine", spec, "a machine is a spec such as 'loggp:p=8'")
        if _C.collsim_machine_open(_c_text("machine", spec), ctypes.byref(h),
                                   ctypes.byref(err)):
            _raise(err)
        self._h = h.value
        self._read()

    @classmethod
    def _view(cls, handle, owner):
        """The machine a result ran on (owned by that result)."""
        m = cls.__new__(cls)
        m._h = handle
        m._owner = owner
        m._live = 0
        m._closed = True  # no runs on a result's machine
        m._read()
        return m

    def _read(self):
        h = self._h
        self.spec = _C.collsim_machine_spec(h).decode()
        self.type = _C.collsim_machine_type(h).decode()
        self.nodes = _C.collsim_machine_nodes(h)
        self.channels = _C.collsim_machine_channels(h)
        self.tick_seconds = _C.collsim_machine_tick_seconds(h)

    @property
    def name(self):
        """"cerebras mesh 8x8", "cell eib of 16 SPEs + 8 other ramps in 2 chips": the `machine` column
        of `collsim compare --csv` (needs collsim_machine_name)."""
        f = getattr(_C, "collsim_machine_name", None)
        if f is None:  # an older library: the type and the size only
            return "%s of %d nodes" % (self.type, self.nodes)
        return _text_of(lambda buf, n: f(self._h, buf, n))

    def node_name(self, node):
        """A node's label as figures and `collsim compare` write it ("BIF.0")."""
        f = getattr(_C, "collsim_machine_node_name", None)
        _no_bool("node", node, "a node is a number from 0")
        if f is None:
            return str(node)
        return _text_of(lambda buf, n: f(self._h, int(node), buf, n))

    def run(self, request=None, timeout=None, **keys):
        """Runs a Request (or the keys of one, as collsim.run takes them)
        on this machine; returns a Result.  timeout (seconds): cancel the
        run after that long (Error code 10)."""
        timeout = _timeout(timeout)
        if request is None:
            request = Request(**keys)
        elif keys:
            raise TypeError("Machine.run: a Request or keys, not both")
        if self._closed:
            raise Error(1, "machine %s: closed" % self.spec)
        return _run(lambda out, err: _C.collsim_run_on(self._h, request._h, out, err),
                    request, timeout, self)

    def close(self):
        """No more runs on this machine; it is closed now, or when the last
        result of its runs goes (they read it)."""
        self._closed = True
        self._release()

    def _release(self):
        if self._h and self._live == 0 and self._owner is None and _C is not None:
            h, self._h = self._h, None
            _C.collsim_machine_close(h)

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "collsim.Machine(%r)" % self.spec


def _text_of(call):
    """The text a snprintf-like C function writes (len returned)."""
    buf = ctypes.create_string_buffer(256)
    n = call(buf, len(buf))
    if n >= len(buf):
        buf = ctypes.create_string_buffer(n + 1)
        n = call(buf, len(buf))
    if n < 0:
        raise Error(5, "no such node")
    return buf.value.decode()


# ---- results ------------------------------------------------------------------

class Result:
    """The outcome of one run.  Times are in ticks of the machine's clock:
    `ticks` (and its alias `cycles`: a tick is a cycle on the machines of
    the papers, a ps or ns on the network models) and in `seconds`.

    validated: True (checked and right), False (checked and wrong; the
    command line exits 4 then), None (not checked: no validate=True).
    per_rank: each rank's finish ticks.  channels: a dict of columns
    (src, dst, bytes, units, busy_ticks, stall_ticks, peak_k, utilisation),
    one entry per directed channel.  events, messages: what the simulation
    processed and moved.  machine: the Machine it ran on.

    The C result is freed when the object goes."""

    __slots__ = ("_h", "_machine", "__weakref__")

    def __init__(self, out, machine=None):
        # Takes the C result from out (a c_void_p) and empties it in the
        # same step, with no Python call in between where a
        # KeyboardInterrupt could land: the handle is in out or in this
        # object, never in both or neither, and _run frees what is left
        # in out when it is interrupted.
        self._machine = None
        self._h = out.value
        out.value = None
        if machine is not None:
            machine._live += 1
            self._machine = machine

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h and _C is not None:
            _C.collsim_result_free(h)
            m = self._machine
            if m is not None:
                m._live -= 1
                if m._closed:
                    m._release()

    # -- scalars
    @property
    def ticks(self):
        """The finish time (the last op's completion) in ticks."""
        return _C.collsim_result_ticks(self._h)

    @property
    def cycles(self):
        """The finish time in cycles: ticks of the machine's clock."""
        return self.ticks

    @property
    def seconds(self):
        return _C.collsim_result_seconds(self._h)

    @property
    def validated(self):
        v = _C.collsim_result_validated(self._h)
        return None if v == 0 else v > 0

    @property
    def events(self):
        return _C.collsim_result_events(self._h)

    @property
    def messages(self):
        return _C.collsim_result_messages(self._h)

    @property
    def ranks(self):
        return _C.collsim_result_ranks(self._h)

    @property
    def machine(self):
        if self._machine is not None:
            return self._machine
        # A view that keeps this result (its owner) alive; not cached, so
        # that no reference cycle delays freeing the C result.
        return Machine._view(_C.collsim_result_machine(self._h), self)

    # -- bandwidths (docs/bandwidth.md)
    @property
    def bandwidth(self):
        """The bandwidths as nccl-tests defines them, the "bandwidth" object
        of docs/json.md: a dict with size_bytes (nccl-tests' S), seconds,
        algbw_bytes_per_second, busbw_bytes_per_second and busbw_factor; None
        for a program or a barrier (no data moved)."""
        return self.to_dict(timing=False).get("bandwidth")

    @property
    def algbw(self):
        """nccl-tests' algorithm bandwidth S / t in bytes per second (None
        without a bandwidth: a program, a barrier)."""
        b = self.bandwidth
        return None if b is None else b["algbw_bytes_per_second"]

    @property
    def busbw(self):
        """nccl-tests' bus bandwidth, algbw x the collective's factor
        (allreduce 2(n-1)/n, ...), in bytes per second (None as algbw)."""
        b = self.bandwidth
        return None if b is None else b["busbw_bytes_per_second"]

    # -- arrays
    @property
    def per_rank(self):
        """Each rank's finish ticks (0 for a rank without ops)."""
        n = _C.collsim_result_ranks(self._h)
        if _np is not None:
            a = _np.zeros(n, dtype=_np.int64)
            _C.collsim_result_rank_ticks(
                self._h, a.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), n)
            return a
        a = (ctypes.c_int64 * n)()
        _C.collsim_result_rank_ticks(self._h, a, n)
        return list(a)

    @property
    def channels(self):
        """Columns of per-channel totals (docs/json.md "channels")."""
        n = _C.collsim_result_channels(self._h)
        a = (_lib.CChannel * n)()
        n = _C.collsim_result_channel_records(self._h, a, n)
        if _np is not None:
            rec = _np.frombuffer(a, dtype=_CHANNEL_DTYPE, count=n)
            return {c: rec[c].copy() for c in CHANNEL_COLUMNS}
        return {c: [getattr(a[i], c) for i in range(n)] for c in CHANNEL_COLUMNS}

    @property
    def loop(self):
        """A benchmark loop's times (iterations=, warmup=, between=, loop=;
        docs/loops.md), or None for one call: a dict of iterations, warmup,
        avg_ticks and avg_seconds (nccl-tests' average: the timed loop /
        iterations), timed_ticks, iteration_avg_ticks, iteration_min_ticks,
        iteration_max_ticks (each timed iteration from its first op's start
        to its last op's end), first_ticks (the cold first iteration) and
        start_ticks, end_ticks (per iteration, warm-up first)."""
        f = getattr(_C, "collsim_result_loop", None)
        if f is None:
            raise Error(1, "this libcollsim has no benchmark loops (older than the module)")
        c = _lib.CLoop()
        if not f(self._h, ctypes.byref(c)):
            return None
        d = {name: getattr(c, name) for name, _ in _lib.CLoop._fields_}
        d["avg_seconds"] = c.avg_ticks * _C.collsim_machine_tick_seconds(
            _C.collsim_result_machine(self._h))
        n = c.warmup + c.iterations
        start, end = (ctypes.c_int64 * n)(), (ctypes.c_int64 * n)()
        n = _C.collsim_result_loop_times(self._h, start, end, n)
        d["start_ticks"] = list(start[:n])
        d["end_ticks"] = list(end[:n])
        return d

    # -- outputs
    def json(self, timing=True):
        """The JSON text `collsim run --json` writes for the same request
        (docs/json.md); timing=False writes the wall-clock fields as 0, as
        --no-timing does, so that repeated runs give identical text."""
        out = ctypes.POINTER(ctypes.c_char)()
        n = ctypes.c_size_t()
        err = _lib.CError()
        if _C.collsim_result_json(self._h, 0 if timing else _lib.NO_TIMING, ctypes.byref(out),
                                  ctypes.byref(n), ctypes.byref(err)):
            _raise(err)
        try:
            return ctypes.string_at(out, n.value).decode()
        finally:
            _C.collsim_free(out)

    def to_dict(self, timing=True):
        """json.loads(self.json()): the whole result as the JSON schema of
        docs/json.md lays it out (nested: machine, program, ranks, channels)."""
        return _json.loads(self.json(timing))

    def write_json(self, path, timing=True):
        """Writes json() to path, whole or not at all."""
        err = _lib.CError()
        if _C.collsim_result_write_json(self._h, 0 if timing else _lib.NO_TIMING,
                                        _path("path", path), ctypes.byref(err)):
            _raise(err)

    def heatmap(self, path=None, metric="util", ax=None, scale=None, size=None):
        """Draws the heatmap of `collsim run --heatmap PATH --metric METRIC`
        (util, bytes, stall or k) of the whole run, or of the window the
        request's record="window:T0:T1" kept:
          path (.png, .svg or .pdf): writes that file, returns path;
          ax (a matplotlib Axes): draws the same picture into it (imshow of
            the library's PNG, axis lines off), returns the AxesImage.
        One of the two.  scale= fixes the colour range as --scale does:
        "LO:HI" in the metric's units (util, stall: %; bytes: a size such as
        "4MiB"; k: messages) or a (lo, hi) pair of such values (lo None:
        the metric's floor); size= is --size's "column", "page" or "WxH".
        Both are read and checked by the library, with the command line's
        messages; None takes the request's scale= / size= keys.  In Jupyter
        the Result shows its heatmap by itself (_repr_png_);
        heatmap_bytes() gives the file's bytes."""
        if (path is None) == (ax is None):
            raise TypeError("heatmap: give path= (a .png, .svg or .pdf to write) or ax= (a "
                            "matplotlib Axes to draw into), one of them")
        if ax is not None:
            import io
            import matplotlib.image as mpimg  # only for ax=
            img = mpimg.imread(io.BytesIO(self.heatmap_bytes(metric, "png", scale, size)),
                               format="png")
            im = ax.imshow(img, interpolation="none")
            ax.set_axis_off()
            return im
        err = _lib.CError()
        scale_text = _scale_text(scale)
        size_text = None
        if size is not None:
            _no_bool("size", size, "a size is 'column', 'page' or 'WxH' such as '3.5x3in'")
            size_text = _c_text("size", size)
        c_metric = _c_text("metric", metric) if metric else None
        if scale_text is None and size_text is None:
            rc = _C.collsim_result_heatmap(self._h, _path("path", path), c_metric,
                                           ctypes.byref(err))
        elif not hasattr(_C, "collsim_result_heatmap_style"):
            raise Error(1, "heatmap: scale= and size= need a libcollsim with "
                        "collsim_result_heatmap_style (this one is older than the module)")
        else:
            rc = _C.collsim_result_heatmap_style(self._h, _path("path", path), c_metric,
                                                 scale_text, size_text, ctypes.byref(err))
        if rc:
            _raise(err)
        return path

    def heatmap_bytes(self, metric="util", format="png", scale=None, size=None):
        """The heatmap as the bytes of a .png, .svg or .pdf file (format),
        drawn by the library's writer into a private temporary folder, read
        back and removed; scale= and size= as heatmap() takes them."""
        if format not in ("png", "svg", "pdf"):
            raise Error(1, "heatmap_bytes: format %r: png, svg or pdf" % (format,))
        with _tempfile.TemporaryDirectory(prefix="collsim-heatmap-") as d:
            p = _os.path.join(d, "heatmap." + format)
            self.heatmap(p, metric, scale=scale, size=size)
            with open(p, "rb") as f:
                return f.read()

    def _repr_png_(self):
        """Jupyter's inline picture of the result: its utilisation heatmap
        (PNG only: one image a cell, bounded in size on any machine, where
        an SVG grows with the links drawn).  None (no picture, the text
        repr alone) when the run has none to draw."""
        try:
            return self.heatmap_bytes("util", "png")
        except Error:
            return None

    def timeline(self, path):
        """Writes the Chrome trace of `--timeline PATH` (Perfetto); the
        request needs record="timeline"."""
        err = _lib.CError()
        if _C.collsim_result_timeline(self._h, _path("path", path), ctypes.byref(err)):
            _raise(err)
        return path

    def __repr__(self):
        return "<collsim.Result %d ticks, %.6g s on %s>" % (self.ticks, self.seconds,
                                                           self.machine.spec)


# collsim_channel as a numpy record, laid out as the C struct (checked).
_CHANNEL_DTYPE = None
if _np is not None:
    _CHANNEL_DTYPE = _np.dtype({
        "names": list(CHANNEL_COLUMNS),
        "formats": ["i4", "i4", "i8", "i8", "i8", "i8", "i4", "f8"],
        "offsets": [getattr(_lib.CChannel, c).offset for c in CHANNEL_COLUMNS],
        "itemsize": ctypes.sizeof(_lib.CChannel)})


def _scale_side(v):
    """One side of a (lo, hi) scale as the library's text: a number as
    Python writes it (an int whole, a float by repr: exact), a text as it
    is ("4MiB"), None as nothing (the metric's floor).  The library reads
    and checks it."""
    if v is None:
        return ""
    _no_bool("scale", v, "a scale is 'LO:HI' or a (lo, hi) pair of numbers or texts")
    if isinstance(v, str):
        return v
    if isinstance(v, _numbers.Integral):
        return str(int(v))
    if isinstance(v, _numbers.Real):
        return repr(float(v))
    raise TypeError("scale=%r: each side is a number or a text such as '4MiB'" % (v,))


def _scale_text(scale):
    """scale= ("LO:HI", or a (lo, hi) pair) as the C text, or None."""
    if scale is None:
        return None
    _no_bool("scale", scale, "a scale is 'LO:HI' or a (lo, hi) pair")
    if isinstance(scale, (str, bytes)):
        return _c_text("scale", scale)
    try:
        lo, hi = scale
    except (TypeError, ValueError):
        raise TypeError("scale=%r: 'LO:HI' or a (lo, hi) pair" % (scale,)) from None
    return _c_text("scale", "%s:%s" % (_scale_side(lo), _scale_side(hi)))


def _path(name, p):
    """A file name for C (str, bytes or os.PathLike), NUL refused."""
    return _c_text(name, _os.fsencode(p))


# ---- one run ------------------------------------------------------------------

def run(machine=None, coll=None, algo=None, bytes=None, mode=None, validate=None,
        timeout=None, **keys):
    """Runs one request and returns its Result: a collective of the suite
    (coll, algo, bytes; root, ranks, order, opt), a GOAL program (program=)
    or a trace to replay (trace=; format, map, algo_for, flops, skip_unknown,
    comm_group; format="chakra" reads a Chakra trace's PREFIX), in packet
    or fluid mode (mode=), checked (validate=True), with record="timeline"
    or "window:T0:T1" for the figures, force=True past the work limit.

    machine is a spec or a Machine (reused: no rebuilding).  The keys and
    their values are those of `collsim run`; errors raise Error with its
    message (a deadlock's Error carries the partial result).  timeout
    (seconds): the run is cancelled after that long (Error code 10).

    Ctrl-C (SIGINT) during a run called from the main thread cancels it:
    KeyboardInterrupt is raised within milliseconds, not at the run's end."""
    timeout = _timeout(timeout)
    req = Request(coll=coll, algo=algo, bytes=bytes, mode=mode, validate=validate, **keys)
    if isinstance(machine, Machine):
        return machine.run(req, timeout)
    if machine is None:
        raise Error(1, "missing --machine SPEC (e.g. alphabeta:topo=ring,p=8)")
    err = _lib.CError()
    _no_bool("machine", machine, "a machine is a spec such as 'loggp:p=8'")
    if _C.collsim_request_set(req._h, b"machine", _c_text("machine", machine),
                              ctypes.byref(err)):
        _raise(err)
    return _run(lambda out, err: _C.collsim_run(req._h, out, err), req, timeout, None)


def _run(call, request, timeout, machine):
    """One run through call(out, err) (collsim_run or collsim_run_on): the
    Result, or Error carrying the partial result when there is one.
    timeout: seconds (checked by _timeout) or None.  SIGINT from the main
    thread sets the request's cancel flag (_interrupt.py); Python's handler
    runs as soon as the call has returned, and its KeyboardInterrupt
    leaves through here with the C result freed."""
    out = ctypes.c_void_p()
    err = _lib.CError()
    request._flag.value = 0
    timer = None
    if timeout is not None:
        timer = _threading.Timer(timeout, request.cancel)
        timer.daemon = True
    token = _interrupt.enter(request._flag)
    try:
        if timer is not None:
            timer.start()
        rc = call(ctypes.byref(out), ctypes.byref(err))
        res = Result(out, machine) if out.value else None
    except BaseException:
        if out.value:  # not taken by a Result: what the cancelled run did
            _C.collsim_result_free(out.value)
        raise
    finally:
        _interrupt.leave(token)
        if timer is not None:
            timer.cancel()
    if rc:
        _raise(err, res)
    return res


# ---- what there is ------------------------------------------------------------

def _list(fn):
    out = ctypes.POINTER(ctypes.c_char)()
    err = _lib.CError()
    if fn(ctypes.byref(out), ctypes.byref(err)):
        _raise(err)
    return _json.loads(_take_string(out))


def machines():
    """The machine types: a list of dicts (name, summary, usage, example,
    keys, presets), as the library's JSON list has them."""
    return _list(_C.collsim_list_machines)


def algorithms(coll=None):
    """The algorithms (dicts: collective, name, default, options, keys,
    source, summary); coll= keeps one collective's."""
    a = _list(_C.collsim_list_algorithms)
    return [x for x in a if coll is None or x.get("collective") == coll]


def parse_sizes(text):
    """Sizes in the syntax of `collsim sweep --bytes` ("4,64,1KiB",
    "8..1MiB:x2", "1KiB..8KiB:+1KiB"): a list of ints (bytes), sorted and
    distinct as the sweep takes them."""
    out = ctypes.POINTER(ctypes.c_int64)()
    n = ctypes.c_int()
    err = _lib.CError()
    _no_bool("sizes", text, "sizes are a text such as '8..1MiB:x2'")
    if _C.collsim_parse_sizes(_c_text("sizes", text), ctypes.byref(out), ctypes.byref(n),
                              ctypes.byref(err)):
        _raise(err)
    try:
        return [out[i] for i in range(n.value)]
    finally:
        _C.collsim_free(out)


from ._multi import sweep, compare  # noqa: E402  (they use the above)
