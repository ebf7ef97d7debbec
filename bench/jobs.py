#!/usr/bin/env python3
"""bench/jobs.py - issue 35's benchmark: a 40-point sweep run serially, with
--jobs N and (when this collsim has MPI and mpirun is found) under mpirun
with --mpi, timed by /usr/bin/time (wall, user+sys CPU of the whole process
tree, peak RSS of its largest process), modes alternated, medians of
--repeat runs.  Every run's CSV must be byte-identical to the serial one
(checked; a difference is an error, not a figure).  The load average is
printed before and after: the wall-time speed-up is only meaningful on
otherwise idle cores.

The sweep: allreduce with 5 algorithms x 8 sizes (8 KiB .. 1 MiB) on an
alpha-beta 32x32 torus, packet mode: points from ~20 ms to ~1 s, the
uneven mix a real figure has.  Target (issue 35): --jobs 2 at least 1.8x
faster than serial on 2 cores.
"""

import argparse
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

SWEEP = ["sweep", "--machine", "alphabeta:topo=torus,rows=32,cols=32", "--coll", "allreduce",
         "--algos", "ring,rdb,rabenseifner,reduce-bcast,butterfly", "--bytes", "8KiB..1MiB:x2"]


def timed(cmd, cwd):
    """(wall s, cpu s, peak RSS KiB, busiest worker's CPU s or None) of cmd
    by /usr/bin/time; the last from --jobs's line "N points on K workers,
    CPU seconds (points): 7.31 s (21) + 7.02 s (19)"."""
    fmt = "%e %U %S %M"
    p = subprocess.run(["/usr/bin/time", "-f", fmt, "-o", "time.out"] + cmd, cwd=cwd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.exit("bench/jobs: %s failed (%d): %s" % (" ".join(cmd), p.returncode,
                                                     p.stderr.decode()[-2000:]))
    with open(os.path.join(cwd, "time.out")) as f:
        e, u, s, m = f.read().split()[-4:]
    busiest = None
    for line in p.stderr.decode().splitlines():
        if "CPU seconds (points):" in line:
            parts = line.split(":")[-1].split("+")
            busiest = max(float(x.split()[0]) for x in parts)
    return float(e), float(u) + float(s), int(m), busiest


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--collsim", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--ranks", type=int, default=3,
                    help="MPI ranks (rank 0 hands out and writes; default 3: 2 workers)")
    ap.add_argument("--no-mpi", action="store_true")
    a = ap.parse_args()
    collsim = os.path.abspath(a.collsim)
    helptext = subprocess.run([collsim, "sweep", "--help"], capture_output=True).stdout.decode()
    mpi = (not a.no_mpi and shutil.which("mpirun") and "(not in this build)" not in helptext)
    modes = [("serial", [collsim] + SWEEP), ("--jobs %d" % a.jobs,
                                             [collsim] + SWEEP + ["--jobs", str(a.jobs)])]
    if mpi:
        run = ["mpirun", "-n", str(a.ranks), "--oversubscribe", "--mca", "btl_tcp_if_include",
               "lo", "--mca", "oob_tcp_if_include", "lo"]
        if os.geteuid() == 0:
            run.append("--allow-run-as-root")
        modes.append(("mpirun -n %d --mpi" % a.ranks, run + [collsim] + SWEEP + ["--mpi"]))
    print("load average before: %.2f %.2f %.2f on %d cores" % (os.getloadavg() + (os.cpu_count(),)))
    got = {name: [] for name, _ in modes}
    with tempfile.TemporaryDirectory() as d:
        for r in range(a.repeat):
            for k, (name, cmd) in enumerate(modes):
                out = "m%d.csv" % k
                got[name].append(timed(cmd + ["--csv", out], d))
                if k and not filecmp.cmp(os.path.join(d, "m0.csv"), os.path.join(d, out),
                                         shallow=False):
                    sys.exit("bench/jobs: %s wrote another CSV than the serial run" % name)
    print("load average after:  %.2f %.2f %.2f" % os.getloadavg())
    print("40-point sweep (%s), medians of %d, CSVs byte-identical to serial:"
          % (" ".join(SWEEP[1:9]), a.repeat))
    base = statistics.median(x[0] for x in got["serial"])
    base_cpu = statistics.median(x[1] for x in got["serial"])
    print("%-22s %9s %9s %10s %9s %12s" % ("mode", "wall s", "cpu s", "peak RSS", "speed-up",
                                           "cpu-bound"))
    for name, _ in modes:
        w = statistics.median(x[0] for x in got[name])
        c = statistics.median(x[1] for x in got[name])
        m = max(x[2] for x in got[name])
        busiest = [x[3] for x in got[name] if x[3] is not None]
        # the speed-up on idle cores: the serial CPU over the busiest
        # worker's (each worker's wall time when it has a core of its own)
        bound = "%11.2fx" % (base_cpu / statistics.median(busiest)) if busiest else ""
        print("%-22s %9.2f %9.2f %7.0f MB %8.2fx %s" % (name, w, c, m / 1024, base / w, bound))
    print("speed-up: wall time against serial; cpu-bound: serial CPU over the busiest "
          "worker's CPU, the speed-up when every worker has a core of its own")


if __name__ == "__main__":
    main()
