#!/usr/bin/env python3
"""graphml_big.py - the memory and time of reading a large GraphML network
(issue 29: a 400 MB file of 10^5 nodes and 10^7 edges took ~4 GB, then
failed as "malformed XML").

Writes a GraphML file of --nodes nodes and --edges edges into a temporary
folder (removed at the end, never committed), then runs
`collsim topo --machine net:file=FILE` (the command that reads the network
and builds the machine, and no more: above 20,000 nodes it skips the
all-pairs distances) under /usr/bin/time -v, --repeat times, and prints the
peak resident size (max RSS) and the wall time of each run and one summary
line:

  graphml-big: N nodes, E edges, S MB: peak RSS R MiB, wall T s (exit X)

The graph: a ring through every node (so every host reaches every other)
and E - N more edges between pseudo-random pairs (a fixed LCG, so every run
reads the same file), written as collsim writes GraphML but with the
attributes on a few edges only, about 40 bytes an edge as in the issue's
file: node 0 is a switch, every 1000th edge has a bandwidth and a latency.
Edges between the same pair are alike (parallel links must be).

Python 3 standard library only.  Usage:
  bench/graphml_big.py --collsim build/collsim [--nodes 100000]
                       [--edges 10000000] [--repeat 1] [--keep DIR]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def write_graph(path, nodes, edges):
    with open(path, "w", buffering=1 << 20) as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n'
                '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
                '  <key id="kind" for="node" attr.name="kind" attr.type="string"/>\n'
                '  <key id="bw" for="edge" attr.name="bandwidth" attr.type="double"/>\n'
                '  <key id="lat" for="edge" attr.name="latency" attr.type="double"/>\n'
                '  <graph id="G" edgedefault="undirected">\n'
                '<node id="n0"><data key="kind">switch</data></node>\n')
        f.write("".join('<node id="n%d"/>\n' % i for i in range(1, nodes)))
        x = 12345
        chunk = []
        for e in range(edges):
            if e < nodes:
                u, v = e, (e + 1) % nodes
            else:
                x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
                u = (x >> 20) % nodes
                v = (x >> 40) % nodes
                if u == v:
                    v = (v + 1) % nodes
            if e % 1000 == 999:
                # the same values on every edge that has some: parallel
                # links stay alike
                chunk.append('<edge source="n%d" target="n%d"><data key="bw">1.25e10</data>'
                             '<data key="lat">1e-06</data></edge>\n' % (u, v))
            else:
                chunk.append('<edge source="n%d" target="n%d"/>\n' % (u, v))
            if len(chunk) == 100000:
                f.write("".join(chunk))
                chunk = []
        f.write("".join(chunk))
        f.write("  </graph>\n</graphml>\n")


def measure(collsim, path):
    """Runs collsim topo on path under /usr/bin/time -v: (max RSS KiB, wall s, exit, stderr)."""
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-v", collsim, "topo", "--machine",
                        "net:file=%s,bw=12.5GB/s,lat=1us" % path],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    rss = int(m.group(1)) if m else -1
    # /usr/bin/time prints "Command exited with non-zero status N" first
    m = re.search(r"Command exited with non-zero status (\d+)", p.stderr)
    return rss, wall, int(m.group(1)) if m else p.returncode, p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--collsim", required=True)
    ap.add_argument("--nodes", type=int, default=100000)
    ap.add_argument("--edges", type=int, default=10000000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--keep", help="write the file into DIR and keep it (reused when there)")
    a = ap.parse_args()
    if a.edges < a.nodes or a.nodes < 3:
        sys.exit("graphml_big.py: needs nodes >= 3 and edges >= nodes (the ring)")
    folder = a.keep or tempfile.mkdtemp(prefix="collsim-graphml-big-")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "big-%d-%d.graphml" % (a.nodes, a.edges))
    try:
        if not os.path.exists(path):
            t0 = time.monotonic()
            write_graph(path + ".tmp", a.nodes, a.edges)
            os.rename(path + ".tmp", path)
            print("wrote %s (%.0f MB) in %.1f s" % (path, os.path.getsize(path) / 1e6,
                                                 time.monotonic() - t0), file=sys.stderr)
        size = os.path.getsize(path) / 1e6
        for _ in range(a.repeat):
            rss, wall, rc, err = measure(a.collsim, path)
            if rc != 0:
                tail = [l for l in err.splitlines() if not l.startswith("\t")][:3]
                print("collsim exited %d: %s" % (rc, " / ".join(tail)), file=sys.stderr)
            print("graphml-big: %d nodes, %d edges, %.0f MB: peak RSS %.0f MiB, wall %.1f s "
                  "(exit %d)" % (a.nodes, a.edges, size, rss / 1024, wall, rc))
    finally:
        if not a.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
