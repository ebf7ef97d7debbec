"""_par - the jobs= of collsim.sweep and collsim.compare (docs/cluster.md).

As `collsim sweep --jobs N`: the points run in N worker processes, forked
from this one (so that the machines and requests already made are theirs
without pickling a library handle), one point at a time to whichever worker
is free, and the results come back in the order of the serial run, so that
the rows are the same list whatever jobs= says.  A point's failure travels
as (code, message) and is raised here as the Error the serial run raises.
"""

import multiprocessing
import os

# The point function of the pool being run: set before the workers are
# forked, so that they inherit it (a closure cannot be pickled to them).
_point = None


def _call(i):
    from . import Error
    try:
        return True, _point(i)
    except Error as e:
        return False, (e.code, e.message)


def jobs_count(jobs):
    """jobs= as --jobs takes it: a whole number >= 0, 0 for one per core."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 0:
        raise TypeError("jobs=%r: a whole number of worker processes (0: one per core)"
                        % (jobs,))
    return jobs if jobs > 0 else (os.cpu_count() or 1)


def run_points(point, n, jobs):
    """Yields (i, ok, value) for i = 0 .. n-1 in order: value is point(i),
    or (code, message) of the Error it raised when ok is False."""
    global _point
    jobs = jobs_count(jobs)
    if jobs == 1 or n < 2:
        for i in range(n):
            ok, v = _call_here(point, i)
            yield i, ok, v
        return
    _point = point
    try:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(min(jobs, n)) as pool:
            for i, (ok, v) in enumerate(pool.imap(_call, range(n), chunksize=1)):
                yield i, ok, v
    finally:
        _point = None


def _call_here(point, i):
    from . import Error
    try:
        return True, point(i)
    except Error as e:
        return False, (e.code, e.message)
