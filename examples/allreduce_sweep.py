#!/usr/bin/env python3
"""allreduce_sweep.py - a notebook-style analysis with the collsim module
(docs/python.md): four allreduce algorithms swept over vector sizes on two
machines of 64 ranks (a Cerebras 8x8 mesh, cycle-exact, and the lecture's
alpha-beta 8x8 torus), one panel per machine, time in seconds so that the
machines share a scale.  It shows the crossover between the algorithms of
few rounds (recursive doubling, Rabenseifner), which win small vectors,
and the bandwidth-optimal ring, which wins large ones, and how it moves
with the machine: near 1 KiB on the wafer, near 32 KiB on the torus, whose
alpha is 1 us.

From a build tree:
    PYTHONPATH=python COLLSIM_LIBRARY=build/libcollsim.so.0 \\
        /usr/bin/python3 examples/allreduce_sweep.py allreduce.png
Needs matplotlib (Debian python3-matplotlib); pandas is used if present.
"""

import sys

import matplotlib

matplotlib.use("Agg")  # a file, no display
import matplotlib.pyplot as plt  # noqa: E402

import collsim  # noqa: E402

MACHINES = ["cerebras:rows=8,cols=8", "alphabeta:topo=torus,rows=8,cols=8"]
ALGOS = ["ring", "rdb", "rabenseifner", "reduce-bcast"]
SIZES = "64..256KiB:x4"


def main(out):
    by_machine = {}
    for spec in MACHINES:
        m = collsim.Machine(spec)  # built once for all its points
        by_machine[spec] = (m, collsim.sweep(m, "allreduce", ALGOS, SIZES))
    rows = [r for _, rs in by_machine.values() for r in rs]

    try:  # the table a notebook would show
        import pandas
        df = pandas.DataFrame(rows)
        df["type"] = df["machine"].str.split(":").str[0]  # the spec's type
        print("allreduce time (us)")
        print((df.pivot_table(index="bytes", columns=["type", "algo"], values="seconds")
               * 1e6).to_string(float_format="%.3g"))
    except ImportError:
        pass

    fig, axes = plt.subplots(1, len(MACHINES), figsize=(11, 4.2), sharey=True)
    for ax, spec in zip(axes, MACHINES):
        m, mine = by_machine[spec]
        for algo in ALGOS:
            pts = [(r["bytes"], r["seconds"]) for r in mine if r["algo"] == algo]
            ax.plot([p[0] for p in pts], [p[1] * 1e6 for p in pts], marker="o", ms=3,
                    label=algo)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title("%s, %d ranks" % (m.name, mine[0]["ranks"]), fontsize=10)
        ax.set_xlabel("vector size (bytes)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("allreduce time (\u00b5s)")
    axes[0].legend(fontsize=8)
    fig.suptitle("allreduce algorithms on two machines (collsim %s)" % collsim.version)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print("wrote", out)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "allreduce_sweep.png")
