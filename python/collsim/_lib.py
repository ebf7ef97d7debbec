"""_lib - finds libcollsim and declares the C interface of
include/collsim/collsim.h (issue 20) for ctypes.

The library is looked for, in this order:
  1. $COLLSIM_LIBRARY (a path), e.g. build/libcollsim.so.0 in a build tree;
  2. the path `meson install` wrote into _config.py, relative to this file,
     so that an installed copy (also one under `meson install --destdir`)
     loads the library installed beside it;
  3. ctypes.util.find_library("collsim") (the system's search path).
Nothing else of the module touches ctypes' loader.
"""

import ctypes
import ctypes.util
import os

MESSAGE_MAX = 1024  # COLLSIM_MESSAGE_MAX
NO_TIMING = 1  # COLLSIM_NO_TIMING


class CError(ctypes.Structure):
    """collsim_error: a status and the message the command line prints."""
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * MESSAGE_MAX)]


class CChannel(ctypes.Structure):
    """collsim_channel: one directed channel's totals over a run."""
    _fields_ = [
        ("src", ctypes.c_int),
        ("dst", ctypes.c_int),
        ("bytes", ctypes.c_int64),
        ("units", ctypes.c_int64),
        ("busy_ticks", ctypes.c_int64),
        ("stall_ticks", ctypes.c_int64),
        ("peak_k", ctypes.c_int32),
        ("utilisation", ctypes.c_double),
    ]


class CLoop(ctypes.Structure):
    """collsim_loop: a benchmark loop's times in ticks."""
    _fields_ = [
        ("iterations", ctypes.c_int64),
        ("warmup", ctypes.c_int64),
        ("avg_ticks", ctypes.c_double),
        ("timed_ticks", ctypes.c_int64),
        ("iteration_avg_ticks", ctypes.c_double),
        ("iteration_min_ticks", ctypes.c_int64),
        ("iteration_max_ticks", ctypes.c_int64),
        ("first_ticks", ctypes.c_int64),
    ]


def _candidates():
    env = os.environ.get("COLLSIM_LIBRARY")
    if env:
        # An explicit choice: no silent fallback to another copy.
        return [env]
    found = []
    try:
        from . import _config  # written by meson at install time
        rel = getattr(_config, "LIBRARY", None)
        if rel:
            found.append(os.path.normpath(os.path.join(os.path.dirname(__file__), rel)))
    except ImportError:
        pass
    name = ctypes.util.find_library("collsim")
    if name:
        found.append(name)
    return found


def load():
    """The CDLL of libcollsim with every prototype declared; ImportError
    naming what was tried when there is none."""
    tried = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        _declare(lib)
        return lib
    raise ImportError(
        "collsim: libcollsim not found (tried: %s); set COLLSIM_LIBRARY to the "
        "library's path, e.g. COLLSIM_LIBRARY=build/libcollsim.so.0 in a build tree"
        % ("; ".join(tried) or "$COLLSIM_LIBRARY unset, no installed copy, "
           "find_library('collsim') found nothing"))


P = ctypes.c_void_p
PP = ctypes.POINTER(ctypes.c_void_p)
S = ctypes.c_char_p
I = ctypes.c_int
EP = ctypes.POINTER(CError)

# name: (restype, argtypes); every function of collsim.h.
_PROTOTYPES = {
    "collsim_version": (S, []),
    "collsim_version_number": (I, []),
    "collsim_status_name": (S, [I]),
    "collsim_free": (None, [P]),
    "collsim_machine_open": (I, [S, PP, EP]),
    "collsim_machine_close": (None, [P]),
    "collsim_machine_spec": (S, [P]),
    "collsim_machine_type": (S, [P]),
    "collsim_machine_nodes": (I, [P]),
    "collsim_machine_channels": (I, [P]),
    "collsim_machine_tick_seconds": (ctypes.c_double, [P]),
    "collsim_request_new": (P, []),
    "collsim_request_free": (None, [P]),
    "collsim_request_set": (I, [P, S, S, EP]),
    "collsim_request_set_cancel": (None, [P, ctypes.POINTER(ctypes.c_int)]),
    "collsim_run": (I, [P, PP, EP]),
    "collsim_run_on": (I, [P, P, PP, EP]),
    "collsim_result_free": (None, [P]),
    "collsim_result_ticks": (ctypes.c_int64, [P]),
    "collsim_result_seconds": (ctypes.c_double, [P]),
    "collsim_result_validated": (I, [P]),
    "collsim_result_events": (ctypes.c_uint64, [P]),
    "collsim_result_messages": (ctypes.c_int64, [P]),
    "collsim_result_machine": (P, [P]),
    "collsim_result_ranks": (I, [P]),
    "collsim_result_rank_ticks": (I, [P, ctypes.POINTER(ctypes.c_int64), I]),
    "collsim_result_channels": (I, [P]),
    "collsim_result_channel_records": (I, [P, ctypes.POINTER(CChannel), I]),
    "collsim_result_json": (I, [P, I, ctypes.POINTER(ctypes.POINTER(ctypes.c_char)),
                                ctypes.POINTER(ctypes.c_size_t), EP]),
    "collsim_result_write_json": (I, [P, I, S, EP]),
    "collsim_result_heatmap": (I, [P, S, S, EP]),
    "collsim_result_timeline": (I, [P, S, EP]),
    "collsim_list_machines": (I, [ctypes.POINTER(ctypes.POINTER(ctypes.c_char)), EP]),
    "collsim_list_algorithms": (I, [ctypes.POINTER(ctypes.POINTER(ctypes.c_char)), EP]),
    "collsim_parse_sizes": (I, [S, ctypes.POINTER(ctypes.POINTER(ctypes.c_int64)),
                                ctypes.POINTER(I), EP]),
}

# Functions the module uses when the library has them (added to the header
# after 0.1.0's first cut); their absence is handled where they are used.
_OPTIONAL = {
    "collsim_machine_name": (I, [P, ctypes.c_char_p, ctypes.c_size_t]),
    "collsim_machine_node_name": (I, [P, I, ctypes.c_char_p, ctypes.c_size_t]),
    "collsim_result_loop": (I, [P, ctypes.POINTER(CLoop)]),
    "collsim_result_heatmap_style": (I, [P, S, S, S, S, EP]),
    "collsim_result_loop_times": (I, [P, ctypes.POINTER(ctypes.c_int64),
                                      ctypes.POINTER(ctypes.c_int64), I]),
}


def _declare(lib):
    for name, (res, args) in _PROTOTYPES.items():
        f = getattr(lib, name)  # AttributeError: a library older than the header
        f.restype = res
        f.argtypes = args
    for name, (res, args) in _OPTIONAL.items():
        f = getattr(lib, name, None)
        if f is not None:
            f.restype = res
            f.argtypes = args
