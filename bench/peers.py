#!/usr/bin/env python3
"""bench/peers.py - collsim and its peers side by side on issue 34's workloads
(`tools/bench peers`).  Every program runs under /usr/bin/time -v; a table gives
whole-process CPU seconds (user + sys), peak RSS and the finish time each
simulator printed, medians of --repeat runs alternated between the two.  Peers
are measured, never built into collsim.

- SimGrid (libsimgrid-dev and g++, when installed): the ring all-reduce of
  1 MiB on P hosts in a ring, each link 12.5 GB/s with 1 us latency (collsim:
  alphabeta:topo=ring,alpha=1us,beta=0.08ns in fluid mode; SimGrid 3.x: a
  Full-routing zone of P hosts and P links, each rank sending to its right
  neighbour, tools/simgrid/ring_allreduce.cpp, SimGrid's pure max-min model as
  tools/simgrid-check runs it).
- ASTRA-sim (--astra BIN, the bin folder of its analytical build; docs/chakra.md):
  the same all-reduce as one Chakra COMM_COLL_NODE per NPU (ASTRA-sim's own
  example node, comm_size 1 MiB, given to every rank), on an analytical Ring of
  P NPUs, 12.5 GB/s (GB = 2^30 B), 1 us; ASTRA-sim's congestion-unaware backend
  with its ring collective, one split, an endpoint delay of 1 ns (0 trips its
  event queue's assertion) and a memory fast enough that reducing costs
  nothing; collsim runs its ring all-reduce on the same .yml (net:file=,alpha=0,
  fluid; tools/astra-check shows that replaying the traces gives the same time).
- LogGOPSim (--loggopsim DIR, holding its LogGOPSim and txt2bin): Schedgen's
  dissemination barrier on --goal-ranks hosts (tools/gen-goal), LogGOPSim's
  default LogGP parameters; collsim replays the GOAL text on loggp:p=P,
  LogGOPSim runs the binary txt2bin made of it (the conversion not timed).
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


def timed(cmd, cwd=None):
    """(cpu seconds, peak RSS MB, stdout) of one run under /usr/bin/time -v."""
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True, cwd=cwd)
    if p.returncode != 0:
        sys.exit("bench/peers: %s failed:\n%s" % (cmd[0], p.stderr[-2000:]))
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", p.stderr).group(1))
    sys_ = float(re.search(r"System time \(seconds\): ([\d.]+)", p.stderr).group(1))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    return user + sys_, rss / 1024.0, p.stdout + p.stderr


def median_row(runs):
    return statistics.median(x[0] for x in runs), statistics.median(x[1] for x in runs)


def side_by_side(label, cs_cmd, peer_cmd, repeat, cs_finish, peer_finish, peer_cwd=None):
    """One row: collsim and a peer alternated, medians, both finish times."""
    cs, pr = [], []
    for _ in range(repeat):
        cs.append(timed(cs_cmd))
        pr.append(timed(peer_cmd, peer_cwd))
    c_s, c_mb = median_row(cs)
    p_s, p_mb = median_row(pr)
    ratio = "%7.1fx" % (p_s / c_s) if c_s > 0 else "%8s" % "-"
    print("%-34s %10.2f %9.0f %16s %10.2f %9.0f %16s %s" % (
        label, c_s, c_mb, cs_finish(cs[0][2]), p_s, p_mb, peer_finish(pr[0][2]), ratio),
        flush=True)


def collsim_finish(out):
    return re.search(r"finish\s+\d+ ticks = (\S+ \S+)", out).group(1)


def astra_rows(a, tmp):
    """ASTRA-sim's ring all-reduce beside collsim's replay of the same traces."""
    exe = os.path.join(a.astra, "AstraSim_Analytical_Congestion_Unaware")
    node = os.path.join(a.source, "..", "shared", "external", "chakra",
                        "all_reduce_4npus_1MB", "all_reduce.0.et")
    if not os.path.exists(node):
        node = os.path.join(a.chakra_examples or "", "all_reduce_4npus_1MB", "all_reduce.0.et")
    if not os.access(exe, os.X_OK) or not os.path.exists(node):
        sys.exit("bench/peers: --astra needs %s and ASTRA-sim's example trace %s "
                 "(--chakra-examples DIR)" % (exe, node))
    sysf = os.path.join(tmp, "system.json")
    with open(sysf, "w") as f:
        f.write('{ "scheduling-policy": "LIFO", "endpoint-delay": 1, '
                '"active-chunks-per-dimension": 1, "preferred-dataset-splits": 1, '
                '"all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"], '
                '"reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["ring"], '
                '"collective-optimization": "localBWAware", "local-mem-bw": 1000000000, '
                '"boost-mode": 0, "roofline-enabled": 0, "peak-perf": 900 }\n')
    mem = os.path.join(tmp, "memory.json")
    with open(mem, "w") as f:
        f.write('{ "memory-type": "NO_MEMORY_EXPANSION" }\n')
    print("ASTRA-sim congestion-unaware, ring collective, one split")
    print("%-34s %10s %9s %16s %10s %9s %16s %8s" % (
        "ring all-reduce 1 MiB (Chakra)", "collsim s", "MB", "finish", "ASTRA s", "MB",
        "finish", "ratio"))
    with open(node, "rb") as f:
        et = f.read()  # node id 0 in every rank's file: ids are per file
    for P in [int(x) for x in a.astra_ranks.split(",")]:
        d = os.path.join(tmp, "astra%d" % P)
        os.makedirs(d)
        for r in range(P):
            with open(os.path.join(d, "all_reduce.%d.et" % r), "wb") as f:
                f.write(et)
        net = os.path.join(d, "ring.yml")
        with open(net, "w") as f:
            f.write("topology: [ Ring ]\nnpus_count: [ %d ]\nbandwidth: [ 12.5 ]\n"
                    "latency: [ 1000.0 ]\n" % P)
        trace = os.path.join(d, "all_reduce")
        # collsim runs the collective (windowed by default); replaying the traces gives
        # the same finish but expands a trace's collectives whole (487 MB at P = 1,024)
        cs_cmd = [a.collsim, "run", "--machine", "net:file=%s,alpha=0" % net, "--coll",
                  "allreduce", "--algo", "ring", "--bytes", "1MiB", "--mode", "fluid",
                  "--no-timing"] + a.extra.split()
        astra = [exe, "--workload-configuration=" + trace, "--system-configuration=" + sysf,
                 "--remote-memory-configuration=" + mem, "--network-configuration=" + net]

        def astra_finish(out):
            m = re.search(r"sys\[0\] finished, (\d+) cycles", out)
            return "%.6f ms" % (int(m.group(1)) / 1e6) if m else "?"
        # ASTRA-sim writes its logs into log/ under the working folder
        side_by_side("P = %d" % P, cs_cmd, astra, a.repeat, collsim_finish, astra_finish, d)
        shutil.rmtree(d)


def loggopsim_rows(a, tmp):
    """LogGOPSim on its binary schedule beside collsim's replay of the GOAL text."""
    lgs, t2b = (os.path.join(a.loggopsim, x) for x in ("LogGOPSim", "txt2bin"))
    if not (os.access(lgs, os.X_OK) and os.access(t2b, os.X_OK)):
        sys.exit("bench/peers: --loggopsim needs LogGOPSim and txt2bin in %s" % a.loggopsim)
    print("LogGOPSim (LogGP defaults L=2500 o=1500 g=1000 G=6 S=65535 ns), Schedgen's schedule")
    print("%-34s %10s %9s %16s %10s %9s %16s %8s" % (
        "dissemination barrier (GOAL)", "collsim s", "MB", "finish", "LGS s", "MB",
        "finish", "ratio"))
    for P in [int(x) for x in a.goal_ranks.split(",")]:
        goal = os.path.join(tmp, "d%d.goal" % P)
        binf = os.path.join(tmp, "d%d.bin" % P)
        with open(goal, "w") as f:
            subprocess.run([sys.executable, os.path.join(a.source, "tools/gen-goal"),
                            "dissemination", str(P)], stdout=f, check=True)
        subprocess.run([t2b, "-i", goal, "-o", binf], stdout=subprocess.DEVNULL, check=True)
        cs_cmd = [a.collsim, "replay", goal, "--machine", "loggp:p=%d" % P, "--no-timing"]
        cs_cmd += a.extra.split()

        def lgs_finish(out):
            m = re.search(r"Maximum finishing time at host \d+: (\d+)", out)
            return "%.3f us" % (int(m.group(1)) / 1e3) if m else "?"
        side_by_side("P = %d" % P, cs_cmd, [lgs, "-f", binf, "-b"], a.repeat,
                     collsim_finish, lgs_finish)
        os.remove(goal)
        os.remove(binf)


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
    ap.add_argument("--astra", help="ASTRA-sim's analytical bin folder: its rows too")
    ap.add_argument("--astra-ranks", default="1024")
    ap.add_argument("--chakra-examples", help="folder of ASTRA-sim's example traces "
                    "(default: ../shared/external/chakra beside the source)")
    ap.add_argument("--loggopsim", help="folder with LogGOPSim and txt2bin: its rows too")
    ap.add_argument("--goal-ranks", default="1048576")
    ap.add_argument("--no-simgrid", action="store_true", help="skip SimGrid's rows")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="collsim-peers-")
    if a.astra:
        astra_rows(a, tmp)
    if a.loggopsim:
        loggopsim_rows(a, tmp)
    if a.no_simgrid:
        shutil.rmtree(tmp)
        return
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
        if not sg:
            cs = [timed(cs_cmd) for _ in range(a.repeat)]
            c_s, c_mb = median_row(cs)
            print("%-34s %10.2f %9.0f %16s" % ("P = %d" % P, c_s, c_mb, collsim_finish(cs[0][2])),
                  flush=True)
            continue
        plat = os.path.join(tmp, "ring%d.xml" % P)
        ring_platform(plat, P)
        cfg = [c for c in SG_CFG if not c.startswith("--cfg=network/optim")]

        def sg_finish(out):
            m = re.search(r"finish\s+(\S+)", out)
            return "%.6f ms" % (float(m.group(1)) * 1e3) if m else "?"
        side_by_side("P = %d" % P, cs_cmd, [sg, plat, str(P), "1048576"] + cfg +
                     ["--cfg=network/optim:" + a.sg_optim], a.repeat, collsim_finish, sg_finish)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
