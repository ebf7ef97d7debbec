#!/usr/bin/env python3
"""bench/nccl.py - issue 36's benchmark: NCCL's ring and tree allreduce on a
1,024-GPU two-tier pod over sizes, with NCCL's own choice (--algo nccl)
beside; prints the simulated times, the simulated ring/tree crossover and
the one NCCL's cost model predicts.  Not a test: a figure to quote.

The pod (`net:gen=twotier`): 128 nodes of 8 GPUs, H100-class figures:
NVLink 4 at 450 GB/s a direction per GPU (900 GB/s both ways; here one
link of 450 GB/s between every two GPUs of a node, as the NVSwitch gives
any pair the GPU's whole bandwidth), ConnectX-7 NICs at 400 Gb/s = 50 GB/s,
one per GPU, leaf switches of radix 64 (8 nodes a leaf), a full-bisection
spine; link latencies --nvlat and --lat (defaults 0.2 us and 0.6 us: a
host-leaf-spine-leaf-host route crosses 4 links), fluid mode.

Every point is one `collsim sweep` point (--jobs for the workers); NCCL's
choice at each size is read from the sweep's JSON ("nccl" object).
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time


def human(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return "%d %s" % (n // size, unit)
    return "%d B" % n


def us(seconds):
    return "%.4g" % (seconds * 1e6)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--collsim", required=True)
    ap.add_argument("--nodes", type=int, default=128)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--nvlat", default="0.2us")
    ap.add_argument("--lat", default="0.6us")
    # 1 KiB to 1 GiB, every power of 4 from 1 MiB on (where ring and tree
    # cross), fewer below: a ring point on 1,024 GPUs takes 15 to 30 s, and
    # the default run stays under about 5 minutes on 2 cores
    sizes = "1KiB,16KiB,256KiB,1MiB,4MiB,16MiB,64MiB,256MiB,1GiB"
    ap.add_argument("--bytes", default=sizes,
                    help="sizes, as collsim sweep --bytes (default %s)" % sizes)
    ap.add_argument("--nchannels", type=int, default=0,
                    help="--opt nchannels=N for every algorithm (default: the suite's)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--mode", default="fluid")
    ap.add_argument("--plot", help="also write the sweep's plot (SVG, PNG or PDF) here")
    a = ap.parse_args()
    machine = ("net:gen=twotier,nodes=%d,gpus=%d,nvbw=450GB/s,nvlat=%s,radix=64,"
               "bw=50GB/s,lat=%s" % (a.nodes, a.gpus, a.nvlat, a.lat))
    algos = ["nccl-ring", "nccl-tree", "nccl"]
    with tempfile.TemporaryDirectory() as tmp:
        csv_path, json_path = os.path.join(tmp, "s.csv"), os.path.join(tmp, "s.json")
        cmd = [a.collsim, "sweep", "--machine", machine, "--coll", "allreduce",
               "--algos", ",".join(algos), "--bytes", a.bytes, "--mode", a.mode,
               "--jobs", str(a.jobs), "--csv", csv_path, "--json", json_path, "--quiet"]
        if a.nchannels:
            cmd += ["--opt", "nchannels=%d" % a.nchannels]
        if a.plot:
            cmd += ["--plot", a.plot]
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.time() - t0
        if p.returncode != 0:
            sys.exit("bench/nccl: %s failed (%d):\n%s" % (" ".join(cmd), p.returncode,
                                                         p.stderr[-3000:]))
        with open(csv_path) as f:
            rows = list(csv.DictReader(f))
        with open(json_path) as f:
            doc = json.load(f)
    times = {}  # (algo, bytes) -> seconds
    for r in rows:
        times[(r["algo"], int(r["bytes"]))] = float(r["seconds"])
    choice = {}  # bytes -> the "nccl" object of --algo nccl's point
    for pt in doc["points"]:
        if pt["point"]["algo"] == "nccl":
            choice[pt["point"]["bytes"]] = pt["nccl"]
    sizes = sorted({b for (_, b) in times})
    print("machine  %s (%d GPUs), %s mode" % (machine, a.nodes * a.gpus, a.mode))
    print("sweep    %d points in %.1f s wall (--jobs %d)" % (len(rows), wall, a.jobs))
    print("%-9s %12s %12s %12s  %-22s %12s" % ("bytes", "ring us", "tree us", "nccl us",
                                               "NCCL's choice", "NCCL est us"))
    sim_best, nccl_best = [], []
    for b in sizes:
        ring, tree, pick = (times.get(("nccl-ring", b)), times.get(("nccl-tree", b)),
                            times.get(("nccl", b)))
        c = choice.get(b)
        what = "%s/%s/%dch" % (c["algo"], c["proto"], c["nchannels"]) if c else "-"
        print("%-9s %12s %12s %12s  %-22s %12s" % (
            human(b), us(ring) if ring else "-", us(tree) if tree else "-",
            us(pick) if pick else "-", what, us(c["estimate_seconds"]) if c else "-"))
        if ring and tree:
            sim_best.append((b, "ring" if ring <= tree else "tree"))
        if c:
            nccl_best.append((b, c["algo"].lower()))

    def crossovers(seq):
        return ["%s -> %s between %s and %s" % (seq[i - 1][1], seq[i][1], human(seq[i - 1][0]),
                                                 human(seq[i][0]))
                for i in range(1, len(seq)) if seq[i][1] != seq[i - 1][1]]

    print("simulated crossover (ring against tree): %s" %
          ("; ".join(crossovers(sim_best)) or "none (%s fastest throughout)" %
           (sim_best[0][1] if sim_best else "-")))
    print("NCCL's model crossover (its choice):     %s" %
          ("; ".join(crossovers(nccl_best)) or "none (%s throughout)" %
           (nccl_best[0][1] if nccl_best else "-")))
    # beyond the sizes: NCCL's time is latency + bytes / bandwidth, and from
    # 512 MiB on no correction changes with the size, so where its fastest
    # ring and its fastest tree (any protocol) meet follows from the largest
    # size's table: a geometric scan, then bisection
    if choice and max(choice) >= 512 << 20:
        big = max(choice)
        lines = {"Ring": [], "Tree": []}
        for e in choice[big].get("table", []):
            if e["algo"] in lines:
                lines[e["algo"]].append((e["latency_us"], e["bw_gbps"], e["proto"]))

        def best(algo, n):
            return min((lat + n / (1000 * bw), proto) for lat, bw, proto in lines[algo])

        if lines["Ring"] and lines["Tree"]:
            ring_first = best("Ring", big)[0] <= best("Tree", big)[0]
            n, hi = float(big), None
            while n < 2.0 ** 50 and hi is None:
                n *= 2 ** 0.25
                if (best("Ring", n)[0] <= best("Tree", n)[0]) != ring_first:
                    hi = n
            if hi is None:
                print("NCCL's model past %s: %s stays faster up to 1 PiB" %
                      (human(big), "ring" if ring_first else "tree"))
            else:
                lo = hi / 2 ** 0.25
                for _ in range(60):
                    mid = (lo + hi) / 2
                    if (best("Ring", mid)[0] <= best("Tree", mid)[0]) != ring_first:
                        hi = mid
                    else:
                        lo = mid
                print("NCCL's model past %s: %s/%s and %s/%s meet at %.3g GiB (%.4g us)" % (
                    human(big), "Tree" if ring_first else "Ring",
                    best("Tree" if ring_first else "Ring", hi)[1],
                    "Ring" if ring_first else "Tree",
                    best("Ring" if ring_first else "Tree", hi)[1], hi / 2 ** 30,
                    best("Ring", hi)[0]))
    worse = [(b, times[("nccl", b)] / min(times[("nccl-ring", b)], times[("nccl-tree", b)]))
             for b in sizes if ("nccl", b) in times and ("nccl-ring", b) in times and
             ("nccl-tree", b) in times]
    slower = ["%s (x%.3g)" % (human(b), r) for b, r in worse if r > 1 + 1e-9]
    print("NCCL's pick slower than the simulated best at: %s" % (", ".join(slower) or "none"))
    if p.stderr.strip():
        print(p.stderr.strip())


if __name__ == "__main__":
    main()
