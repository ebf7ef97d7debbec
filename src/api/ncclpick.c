/*
 * ncclpick.c - a machine as NCCL's cost model sees it (ncclpick.h).
 *
 * NCCL learns its hardware by searching graphs over the PCI/NVLink/NIC
 * topology it detects (src/graph/search.cc): per channel a speed inside
 * the node (bwIntra) and between nodes (bwInter), set equal for graphs that
 * leave the node, and nChannels.  collsim has the links themselves: the
 * figures below are what such a search would find on them when every
 * channel gets an equal share, without NCCL's rounding to its table of
 * speeds (docs/nccl.md, "NCCL's choice").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/ncclpick.h"
#include "coll/nccl.h"
#include "core/checked.h"

/* The narrowest channel on the route from node u to node v, bytes/s;
 * INFINITY when no channel of it is timed (free), -1 without a route. */
static double route_bottleneck(const cs_machine_t *m, int u, int v, cs_hop_t *hops,
                               int32_t *first)
{
    int n = cs_topo_route(m->topo, u, v, hops);
    double bw = INFINITY;
    if (n <= 0)
        return -1;
    for (int i = 0; i < n; i++) {
        double b = cs_machine_channel_bandwidth(m, hops[i].chan);
        if (b > 0 && b < bw)
            bw = b;
    }
    *first = hops[0].chan;
    return bw;
}

int cs_ncclpick_inputs(const cs_machine_t *m, const cs_coll_args_t *a,
                       const int32_t *rank_to_node, int nchannels, int nvls, int collnet,
                       cs_nccl_model_in_t *in, cs_error_t *err)
{
    const cs_coll_hints_t *h = a->hints;
    const int32_t *group = h && h->group && h->ngroups > 1 ? h->group : NULL;
    int P = a->P, rc = CS_OK;
    memset(in, 0, sizeof *in);
    in->kind = a->kind;
    in->nranks = P;
    in->bytes = a->bytes;
    in->nchannels = nchannels;
    in->nvls = nvls;
    in->collnet = collnet;
    in->intra_hw = CS_NCCL_HW_NVLINK;
    in->lat_inter = 0;
    in->nnodes = group ? h->ngroups : 1;
    if (m->type->net_new)
        return cs_error_set(err, CS_ERR_USAGE, "--algo nccl: machine '%s' runs its own engine, "
                            "whose links have no bandwidth NCCL's model could read; use a "
                            "machine of channels (net:, alphabeta:)", m->type->name);
    if (P < 2) { /* the model needs no bandwidth for one rank */
        in->bw_intra = in->bw_inter = 1;
        return CS_OK;
    }
    cs_hop_t *hops = cs_malloc((size_t)cs_topo_max_route_len(m->topo) * sizeof *hops);
    int32_t *firsts = cs_malloc((size_t)P * sizeof *firsts);
    int g0 = group ? group[0] : 0, peer = -1, next = -1;
    int32_t first;
    /* the next rank of rank 0's node, and the first rank of another node */
    for (int r = 1; r < P && (peer < 0 || (group && next < 0)); r++) {
        if ((!group || group[r] == g0) && peer < 0)
            peer = r;
        if (group && group[r] != g0 && next < 0)
            next = r;
    }
    double intra = INFINITY;
    if (peer > 0 && (intra = route_bottleneck(m, rank_to_node[0], rank_to_node[peer], hops,
                                              &first)) < 0)
        rc = cs_error_set(err, CS_ERR_USAGE, "--algo nccl: no route from rank 0 to rank %d on "
                          "'%s'", peer, m->spec);
    double inter = INFINITY, nic = INFINITY;
    if (rc == CS_OK && group) {
        /* rank i of rank 0's node to rank i of the next node: a NIC each,
         * as NCCL's rings leave a node through the GPU's own NIC */
        int nfirst = 0, g1 = group[next], i1 = 0, n1 = 0;
        int32_t *of1 = cs_malloc((size_t)P * sizeof *of1);
        for (int r = 0; r < P; r++)
            if (group[r] == g1)
                of1[n1++] = r;
        inter = 0;
        for (int r = 0; r < P && rc == CS_OK; r++) {
            if (group[r] != g0)
                continue;
            int dst = of1[i1++ % n1];
            double b = route_bottleneck(m, rank_to_node[r], rank_to_node[dst], hops, &first);
            if (b < 0) {
                rc = cs_error_set(err, CS_ERR_USAGE, "--algo nccl: no route from rank %d to "
                                  "rank %d on '%s'", r, dst, m->spec);
                break;
            }
            if (r == 0)
                nic = b; /* what one channel's ring gets between nodes */
            int seen = 0;
            for (int k = 0; k < nfirst; k++)
                seen |= firsts[k] == first;
            if (!seen) {
                firsts[nfirst++] = first;
                inter += b;
            }
        }
        free(of1);
        inter = fmin(inter, intra);
    }
    free(hops);
    free(firsts);
    if (rc)
        return rc;
    if (isinf(intra) && isinf(inter))
        return cs_error_set(err, CS_ERR_USAGE, "--algo nccl: the links between ranks of '%s' "
                            "have no bandwidth (free channels): NCCL's model divides by it",
                            m->spec);
    if (isinf(intra))
        intra = inter; /* one GPU a node: NCCL's graph has the NIC's speed */
    /* GB/s per channel: an equal share of the node's way out, but no more
     * than one route's (a channel leaves the node through one NIC: NCCL's
     * speeds between nodes stop at a NIC's); NCCL's graphs leaving a node
     * have one speed inside and between */
    double per = group ? fmin(inter / nchannels, nic) : intra / nchannels;
    in->bw_intra = per / 1e9;
    in->bw_inter = per / 1e9;
    return CS_OK;
}

int cs_ncclpick_algo_of(const char *suite_name)
{
    for (int a = 0; a < CS_NCCL_NALGOS; a++) {
        const char *s = cs_nccl_algo_suite((cs_nccl_algo_t)a);
        if (s && suite_name && !strcmp(s, suite_name))
            return a;
    }
    return -1;
}

/* The stand-in's build: never reached through the request path, which
 * replaces the stand-in before it builds. */
static int ncclpick_build(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)b;
    return cs_error_set(err, CS_ERR_USAGE, "--algo nccl is chosen per call by the request "
                        "(cs_request_coll_prepare); it has no program of its own");
}

#define NCCLPICK_ALGO(k)                                                                      \
    {k, "nccl", "NCCL's choice: the algorithm, protocol and channels NCCL's cost model "      \
                "picks for the call, run by the suite's nccl-* algorithm",                    \
     "NVIDIA/nccl v2.30.7-1 src/graph/tuning.cc", "nchannels=N (the communicator's, "        \
     "default the suite's), chunk=BYTES, nvls=0|1, collnet=0|1 (default 0)", ncclpick_keys,   \
     ncclpick_build, NULL}
static const char *const ncclpick_keys[] = {CS_NCCL_KEYS, "nvls", "collnet", NULL};
static const cs_coll_algo_t ncclpick_algos[CS_COLL_NKINDS] = {
    NCCLPICK_ALGO(CS_COLL_BROADCAST),      NCCLPICK_ALGO(CS_COLL_REDUCE),
    NCCLPICK_ALGO(CS_COLL_ALLREDUCE),      NCCLPICK_ALGO(CS_COLL_ALLGATHER),
    NCCLPICK_ALGO(CS_COLL_REDUCE_SCATTER), NCCLPICK_ALGO(CS_COLL_GATHER),
    NCCLPICK_ALGO(CS_COLL_SCATTER),        NCCLPICK_ALGO(CS_COLL_BARRIER),
    NCCLPICK_ALGO(CS_COLL_ALLTOALL),
};

const cs_coll_algo_t *cs_ncclpick_algo(cs_coll_kind_t kind)
{
    return (unsigned)kind < CS_COLL_NKINDS ? &ncclpick_algos[kind] : NULL;
}
