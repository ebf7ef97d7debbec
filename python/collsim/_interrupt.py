"""_interrupt - Ctrl-C during a run (issue 29).

A run is one call into the library.  While it lasts the main thread runs no
Python code, so Python's SIGINT handler (the one that raises
KeyboardInterrupt) runs only when the call has returned: a Ctrl-C 1 s into
a 30 s run was seen 29 s later.  What does run at once is the C-level
handler CPython installs for every signal that has a Python handler: it
notes the signal for later and writes its number, one byte, to the "wakeup
fd" (signal.set_wakeup_fd).  During a run called from the main thread,
enter() makes that fd a pipe of this module, and a watcher thread blocked
on the pipe sets the run's cancel flag (the flag timeout= and
Request.cancel set) when the byte is SIGINT's.  The run stops within
65,536 events and returns, and CPython then runs the Python handler as
usual: the default one raises KeyboardInterrupt.  leave() puts the
previous wakeup fd back, and bytes read meanwhile are passed on to it, so
that an owner of that fd (an asyncio loop's signal handling) still sees
its signals.

Why not run the call in a worker thread while the main thread waits (its
waits are interruptible)?  A thread per run, or a handoff to a standing
one, costs 70-130 us (measured on the 2-core test machine), 6-10 times a
tiny run (12 us): bench/api_overhead.py would go from ~1.1x to several
times C.  Here a run pays two set_wakeup_fd calls, ~2 us; the
watcher thread is started once, by the first run from the main thread.

Runs from other threads change nothing: Python delivers signals to the
main thread only, and set_wakeup_fd may only be called there.
"""

import os
import signal
import threading

# (flag, forward): the cancel flag (a ctypes c_int) of the main thread's run
# or None, and the wakeup fd that was in place before it (-1: none).  One
# tuple, replaced whole, so that the watcher reads a consistent pair without
# a lock (a lock would add to every run's cost).
_state = (None, -1)
_pipe = None     # (read end, write end) of this process's pipe, or None
_pid = None      # the process that made _pipe (a forked child makes its own)


def _watch(fd):
    """The watcher thread: cancels the main thread's run on SIGINT and
    passes every byte on to the previous wakeup fd."""
    while True:
        try:
            data = os.read(fd, 64)
        except InterruptedError:  # pragma: no cover - PEP 475 retries it
            continue
        except OSError:
            return
        if not data:
            return
        flag, forward = _state
        if flag is not None and signal.SIGINT in data:
            flag.value = 1
        if forward >= 0:
            try:
                os.write(forward, data)
            except OSError:  # full or closed: that fd's owner's business
                pass


def _start():
    """The pipe and its watcher, made once per process."""
    global _pipe, _pid
    if _pipe is not None:  # a forked child's copy of its parent's pipe: its own from now on
        for fd in _pipe:
            os.close(fd)
    r, w = os.pipe()
    # CPython's handler must never block on a full pipe: set_wakeup_fd
    # refuses a blocking fd.  The read end blocks: the watcher sleeps on it.
    os.set_blocking(w, False)
    t = threading.Thread(target=_watch, args=(r,), name="collsim-sigint", daemon=True)
    t.start()
    _pipe, _pid = (r, w), os.getpid()


def enter(flag):
    """Before a run whose cancel flag is flag: from the main thread, SIGINT
    sets flag until leave(token).  Returns the token for leave(); None
    when nothing was changed (another thread, or a process where
    set_wakeup_fd cannot be used)."""
    global _state
    if threading.current_thread() is not threading.main_thread():
        return None
    if _pipe is None or _pid != os.getpid():
        _start()  # first run, or the first in a forked child (the parent's watcher is not here)
    try:
        old = signal.set_wakeup_fd(_pipe[1], warn_on_full_buffer=False)
    except ValueError:  # e.g. a subinterpreter: no Ctrl-C support, the run as before
        return None
    # a run from a Python signal handler during leave() finds our own pipe
    # installed: never forward to it (the watcher would loop)
    _state = (flag, -1 if old == _pipe[1] else old)
    return (old,)


def leave(token):
    """After the run: the previous wakeup fd is back, SIGINT no longer
    touches the run's flag."""
    global _state
    if token is None:
        return
    # the previous fd stays the forward target: bytes of this run's
    # signals may still be in the pipe
    _state = (None, _state[1])
    signal.set_wakeup_fd(token[0])
