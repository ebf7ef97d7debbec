/*
 * cerebras_fabric.h - the wavelet-level network engine of the Cerebras
 * wafer-scale engine (reference/cerebras-wse.md §1, §3, §8), behind the
 * cs_net_ops_t interface.  docs/cerebras.md describes the model; in short:
 *
 *  - a PE is a router plus a processor on an M x N mesh; a router has five
 *    outputs (N, E, S, W, RAMP); every output and the PE's onramp move one
 *    32-bit wavelet per cycle; a hop takes 1 cycle, the ramps T_R each way,
 *    the processor's send or store op 1 cycle (so a wavelet injected at
 *    cycle t is at its router at t + 1 + T_R);
 *  - every message is a stream of ceil(bytes/4) wavelets (at least one) on a
 *    color, routed X first then Y; a multicast is the union of those routes
 *    (a tree), and a router copies a wavelet to all its outputs at once;
 *  - color classes: every unicast into PE d travels on d's color, every
 *    multicast on a color of its own.  A router accepts one stream per color
 *    at a time: the first whose head arrives holds the color there until its
 *    last wavelet has left (the switch advance); the others stall in place,
 *    in per-(input port, color) FIFOs of depth `buf`, back-pressuring only
 *    their own stream;
 *  - an output (or onramp) serves one stream while that stream flows; when it
 *    stalls or ends the output goes to the next stream waiting for it.
 *
 * The engine is exact at cycle level but moves whole runs of wavelets: a
 * stream's state at each router is a count and a rate (0 or 1 wavelet per
 * cycle), so an unimpeded stream costs a few events per hop, not per wavelet.
 */
#ifndef CS_CEREBRAS_FABRIC_H
#define CS_CEREBRAS_FABRIC_H

#include <stdint.h>
#include "engine/net.h"
#include "core/sim.h"
#include "topo/topo.h"

typedef struct cs_fabric_params {
    int rows, cols;
    int tr;        /* ramp latency T_R in cycles (>= 1) */
    int buf;       /* FIFO depth per (router input, color) (>= 1) */
    int colors;    /* colors a router may have live at once; 0 = no limit */
} cs_fabric_params_t;

/* Creates the engine over `topo` (the rows x cols mesh, borrowed; its
 * channels carry the statistics). */
int cs_fabric_new(const cs_fabric_params_t *fp, const cs_topo_t *topo, cs_sim_t *sim,
                  const cs_net_hooks_t *hooks, cs_net_t **out, cs_error_t *err);

/* The accessors below read the fabric's state through cs_net_impl_of: on
 * another engine (or NULL) they return 0 and leave the out-parameters. */
/* After a run: the most colors live at one router at once, and where. */
int cs_fabric_colors_peak(const cs_net_t *n, int *router, cs_tick_t *when);
/* After a run: the most configurations one color went through at one
 * router while streams were present (each change of the accepted input is
 * one; the hardware holds 4 per color, more would need a teardown and
 * reconfiguration, which the model does not charge). */
int cs_fabric_configs_peak(const cs_net_t *n, int *router);

#endif
