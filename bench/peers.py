#!/usr/bin/env python3
"""bench/peers.py - collsim and SimGrid side by side on the ring all-reduce of
issue 34's table (`tools/bench peers`): 1 MiB on P hosts in a ring, each link
12.5 GB/s with 1 us latency (collsim: alphabeta:topo=ring,alpha=1us,
beta=0.08ns in fluid mode; SimGrid 3.x: a Full-routing zone of P hosts and P
links, each rank sending to its right neighbour, tools/simgrid/ring_allreduce.cpp,
SimGrid's pure max-min model as tools/simgrid-check runs it).  Both programs
run under /usr/bin/time -v; the table gives whole-process CPU seconds
(user + sys), peak RSS and the finish time each simulator printed, medians of
--repeat runs alternated between the two.  SimGrid is measured, never built
into collsim: without libsimgrid-dev and g++ only collsim's rows are printed.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

SG_CFG = ["--cfg=network/model:CM02", "--cfg=network/crosstraffic:0",
          "--cfg=network/TCP-gamma:1e30", "--cfg=surf/precision:1e-15",
          "--cfg=network/optim:Full"]


def ring_platform(path, P):
    """A ring of P hosts: host i reaches host i+1 (mod P) over link i."""
    with open(path, "w") as f:
        f.write("<?xml version='1.0'?>\n"
                '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                '<platform version="4.1">\n<zone id="ring" routing="Full">\n')
        for i in range(P):
            f.write('  <host id="h%d" speed="1Gf"/>\n' % i)
        for i in range(P):
            f.write('  <link id="l%d" bandwidth="12.5GBps" latency="1us"/>\n' % i)
        for i in range(P):
            f.write('  <route src="h%d" dst="h%d" symmetrical="NO"><link_ctn id="l%d"/></route>\n'
                    % (i, (i + 1) % P, i))
        f.write("</zone>\n</platform>\n")


def timed(cmd):
    """(cpu seconds, peak RSS MB, stdout) of one run under /usr/bin/time -v."""
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("bench/peers: %s failed:\n%s" % (cmd[0], p.stderr[-2000:]))
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", p.stderr).group(1))
    sys_ = float(re.search(r"System time \(seconds\): ([\d.]+)", p.stderr).group(1))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    return user + sys_, rss / 1024.0, p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--collsim", required=True)
    ap.add_argument("--source", required=True, help="collsim's source root")
    ap.add_argument("--ranks", default="1024", help="rank counts, comma-separated")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--extra", default="", help="more collsim run options (e.g. --whole)")
    ap.add_argument("--sg-optim", choices=("Full", "Lazy"), default="Full",
                    help="SimGrid's network/optim: Full (every action updated at every event, "
                    "the model CM02 defines, tools/simgrid-check) or Lazy (its default "
                    "optimisation, other times where flows end apart)")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="collsim-peers-")
    sg = None
    if os.path.exists("/usr/include/simgrid/s4u.hpp") and shutil.which("g++"):
        sg = os.path.join(tmp, "ring_allreduce")
        subprocess.run(["g++", "-O2", "-o", sg,
                        os.path.join(a.source, "tools/simgrid/ring_allreduce.cpp"), "-lsimgrid"],
                       check=True)
    else:
        print("(no libsimgrid-dev or g++: collsim's rows only; apt-get install libsimgrid-dev g++)")
    print("SimGrid network/optim:%s" % a.sg_optim)
    print("%-34s %10s %9s %16s %10s %9s %16s %8s" % (
        "ring all-reduce 1 MiB, fluid", "collsim s", "MB", "finish", "SimGrid s", "MB",
        "finish", "ratio"))
    for P in [int(x) for x in a.ranks.split(",")]:
        cs_cmd = [a.collsim, "run", "--machine",
                  "alphabeta:topo=ring,p=%d,alpha=1us,beta=0.08ns" % P, "--coll", "allreduce",
                  "--algo", "ring", "--bytes", "1MiB", "--mode", "fluid", "--no-timing"]
        cs_cmd += a.extra.split()
        plat = os.path.join(tmp, "ring%d.xml" % P)
        ring_platform(plat, P)
        cs, sgr = [], []
        for _ in range(a.repeat):
            cs.append(timed(cs_cmd))
            if sg:
                cfg = [c for c in SG_CFG if not c.startswith("--cfg=network/optim")]
                sgr.append(timed([sg, plat, str(P), "1048576"] + cfg +
                                 ["--cfg=network/optim:" + a.sg_optim]))
        cfin = re.search(r"finish\s+\d+ ticks = (\S+ \S+)", cs[0][2]).group(1)
        c_s = statistics.median(x[0] for x in cs)
        c_mb = statistics.median(x[1] for x in cs)
        row = "%-34s %10.2f %9.0f %16s" % ("P = %d" % P, c_s, c_mb, cfin)
        if sg:
            s_s = statistics.median(x[0] for x in sgr)
            s_mb = statistics.median(x[1] for x in sgr)
            m = re.search(r"finish\s+(\S+)", sgr[0][2])
            sfin = "%.6f ms" % (float(m.group(1)) * 1e3) if m else "?"
            row += " %10.2f %9.0f %16s %7.1fx" % (s_s, s_mb, sfin, s_s / c_s)
        print(row, flush=True)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
