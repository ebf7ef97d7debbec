/*
 * cns1_ni.h - the CNS-1's network-interface engine (reference/cns1.md §3,
 * §6; docs/cns1.md), behind the cs_net_ops_t interface.
 *
 * A message (send) is cut into the fewest NI messages of equal element
 * count: n_p = ceil(bytes/4) elements, x = ceil(n_p/vlr) messages of
 * m_e = ceil(n_p/x) elements, each m_length = 4 m_e + 9 bytes on the wire
 * (the last one padded to m_e).  Each NI message:
 *
 *   1. send overhead: 2 ov cycles of the source CPU, started so that the
 *      message enters a send buffer as that buffer frees;
 *   2. the send buffer holds it for ceil(m_length/s_I) + 1 cycles from when
 *      its first byte leaves (s_I: processor-link bytes per cycle);
 *   3. the network: the first byte leaves one cycle after entry and moves
 *      one hop per cycle (cut-through); every link of the route carries it
 *      for ceil(m_length/s_L) cycles and can start the next message one
 *      cycle later (s_L: network-link bytes per cycle); a receive buffer of
 *      the destination must be free for the last ceil(m_length/s_I) + 1
 *      cycles of its arrival;
 *   4. receive overhead: 2 ov cycles of the destination CPU, from the cycle
 *      after the last byte arrived; then the data is delivered.
 *
 * A neighbour transfer thus takes 4 ov + 1 + m_length cycles and a link or
 * buffer takes a new message every m_length + 1 cycles (s = 1).  Each CPU
 * runs one overhead at a time (receives first when both are due).  Links,
 * buffers and CPUs are granted first come, first served, in event order.
 */
#ifndef CS_CNS1_NI_H
#define CS_CNS1_NI_H

#include "engine/net.h"
#include "core/sim.h"
#include "topo/topo.h"

typedef struct cs_cns1_params {
    int ov;        /* overhead unit: send and receive overheads are 2 ov */
    int vlr;       /* elements per NI message at most */
    int header;    /* bytes (9) */
    int nsend;     /* send buffers per node */
    int nrecv;     /* receive buffers per node */
    int s_proc;    /* processor-link bytes per cycle (1 or 2) */
    int s_link;    /* network-link bytes per cycle (1 or 2) */
} cs_cns1_params_t;

int cs_cns1_ni_new(const cs_cns1_params_t *cp, const cs_topo_t *topo, cs_sim_t *sim,
                   const cs_net_hooks_t *hooks, cs_net_t **out, cs_error_t *err);

/* After a run: NI messages node `node` sent, and CPU cycles it spent in send
 * overheads.  0 (out-parameter untouched) on another engine, NULL or a node
 * out of range. */
int64_t cs_cns1_ni_sent(const cs_net_t *n, int node, int64_t *send_overhead_cycles);

#endif
