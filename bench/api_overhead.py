#!/usr/bin/env python3
"""api_overhead.py - the calling overhead of the Python module (issue 20):
the same N tiny runs as bench/api_overhead.c (the same machine, request and
count; one Machine and one Request made once and reused, as the C side
reuses its handles), timed with a monotonic clock.  Prints the runs, the
wall seconds, runs/s and microseconds per run in the C program's format.
`tools/bench api` runs both and prints the ratio (target: Python < 2x C).

    PYTHONPATH=python COLLSIM_LIBRARY=build/libcollsim.so.0 \\
        /usr/bin/python3 bench/api_overhead.py [N]
"""

import sys
import time

import collsim

# bench/api_overhead.c's request: the same keys, set the same way
MACHINE = "alphabeta:topo=ring,p=4"
REQUEST = dict(coll="allreduce", bytes=64)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    m = collsim.Machine(MACHINE)
    req = collsim.Request(**REQUEST)
    want = m.run(req).ticks  # what every run must give (the C loop checks it too)
    t0 = time.perf_counter()
    for _ in range(n):
        if m.run(req).ticks != want:
            sys.exit("api_overhead.py: a run gave another time")
    wall = time.perf_counter() - t0
    print("python: %d runs of allreduce 64 B on %s in %.3f s: %.0f runs/s, %.1f us per run"
          % (n, MACHINE, wall, n / wall, wall / n * 1e6))


if __name__ == "__main__":
    main()
