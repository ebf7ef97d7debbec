/*
 * nccl_model.c - NCCL's cost model and its choice per call (nccl_model.h).
 *
 * Models what NVIDIA/nccl v2.30.7-1 estimates, not what the network does:
 * src/graph/tuning.cc (ncclTopoTuneModel: a latency and a bandwidth per
 * collective, algorithm and protocol; ncclTopoGetAlgoTime: time = latency
 * + bytes / bandwidth, with the tree's correction factors and the ring's
 * plateau) and src/enqueue.cc (updateCollCostTable, topoGetAlgoInfo: the
 * lowest time wins, then the channels are cut down for small calls).
 * Written from reading those files; the tables below are NCCL's numbers
 * for Hopper (compute capability 90) on x86 Intel hosts.  The source's
 * per-algorithm topology graphs are one set of inputs here (the same
 * bandwidths and channels for ring, tree, NVLS and CollNet): collsim's
 * machine has no graph search (docs/nccl.md says what that changes).
 */
#include <math.h>
#include <string.h>

#include "coll/nccl_model.h"

enum { LL = 0, LL128 = 1, SIMPLE = 2 }; /* NCCL's protocol indices */

/* baseLatencies (us), NCCL's order of algorithms, protocols LL/LL128/Simple */
static const double base_lat[CS_NCCL_NALGOS][CS_NCCL_NPROTOS] = {
    {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, /* Tree, Ring */
    {0, 0, 0},        {0, 0, 0},        /* CollNetDirect, CollNetChain */
    {0, 0, 0},        {0, 0, 0},        /* NVLS, NVLSTree */
    {8.0, 8.0, 8.0},                    /* PAT */
};

/* hwLatencies (us) per link kind (NVLink, PCI, NET) */
static const double hw_lat[3][CS_NCCL_NALGOS][CS_NCCL_NPROTOS] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25},
     {0, 0, 4.0}},
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0},
     {0, 0, 4.0}},
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9},
     {0, 0, 14}},
};

/* The Hopper entries of NCCL's per-GPU-kind tables, by nodes (1, 2, more):
 * llMaxBws (its row for one node is the GPU's, Hopper; for several the
 * CPU's, Intel), perChMaxRingLL128Bws, perChMaxTreeLL128Bws,
 * perChMaxTreeBws, perChMaxNVLSTreeBws; GB/s. */
static const double ll_max_bw_1node[3] = {141.0, 45.0, 35.0};
static const double ll_max_bw_intel[3] = {39.0, 39.0, 20.4};
static const double ring_ll128_max[3] = {36.7, 36.7, 36.7};
static const double tree_ll128_max[3] = {36.7, 36.7, 29.0};
static const double tree_max[3] = {38.7, 41.4, 36.0};
static const double nvls_tree_max[3] = {0.0, 57.7, 45.5};
#define NVLS_EFFICIENCY 0.85 /* Hopper */
#define NET_OVERHEAD 1.0     /* us, x86 Intel (getNetOverhead) */
#define PCI_BW 12.0          /* GB/s, below which the ring's Simple runs 256 threads */
#define NVLS_CHANNELS 16     /* NVLS_NCHANNELS_SM90 */
#define MAX_DIRECT_LOCAL 8   /* CollNet needs at most NCCL_MAX_DIRECT_ARITY + 1 GPUs a node */
#define MAX_NVLS_ARITY 32

/* treeCorrectionFactor[p][log2(nBytes / 64)], 64 B to 256 MB */
static const double tree_correction[CS_NCCL_NPROTOS][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0,
     1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0,
     1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9,
     .9},
};

/* Per-thread work before a call gets more channels (comm.h's
 * NCCL_*_THREAD_THRESHOLD) and the threads a channel runs (device.h). */
static const int thread_threshold[CS_NCCL_NPROTOS] = {8, 8, 64};

const char *cs_nccl_algo_name(cs_nccl_algo_t a)
{
    static const char *const names[CS_NCCL_NALGOS] = {
        "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
    return (unsigned)a < CS_NCCL_NALGOS ? names[a] : "?";
}

const char *cs_nccl_algo_suite(cs_nccl_algo_t a)
{
    static const char *const names[CS_NCCL_NALGOS] = {
        "nccl-tree", "nccl-ring", "nccl-collnet-direct", "nccl-collnet-chain", "nccl-nvls",
        "nccl-nvls", "nccl-pat"};
    return (unsigned)a < CS_NCCL_NALGOS ? names[a] : NULL;
}

cs_proto_t cs_nccl_proto_of(int p)
{
    return p == LL ? CS_PROTO_LL : p == LL128 ? CS_PROTO_LL128 : CS_PROTO_SIMPLE;
}

/* log2i: floor(log2 n), -1 for 0 (NCCL's log2Down) */
static int log2i(int64_t n)
{
    int l = -1;
    while (n > 0) {
        n >>= 1;
        l++;
    }
    return l;
}

/* Does NCCL consider algorithm a for this call at all (the loops of
 * ncclTopoTuneModel, updateCollCostTable and the enable rules)? */
static int algo_considered(const cs_nccl_model_in_t *in, cs_nccl_algo_t a)
{
    cs_coll_kind_t k = in->kind;
    int ppn = in->nranks / in->nnodes;
    int agrs = k == CS_COLL_ALLGATHER || k == CS_COLL_REDUCE_SCATTER;
    if ((k == CS_COLL_BROADCAST || k == CS_COLL_REDUCE) && a != CS_NCCL_RING)
        return 0;
    /* allgather and reduce-scatter: Ring, PAT, NVLS, CollNetDirect; CollNet
     * needs the network plugin's iallgather / ireducescatter there, which
     * collsim's networks do not declare: off between nodes */
    if (agrs && a != CS_NCCL_RING && a != CS_NCCL_PAT && a != CS_NCCL_NVLS)
        return 0;
    if (k == CS_COLL_ALLREDUCE && a == CS_NCCL_PAT)
        return 0;
    switch (a) {
    case CS_NCCL_COLLNET_DIRECT:
    case CS_NCCL_COLLNET_CHAIN:
        return in->collnet && ppn <= MAX_DIRECT_LOCAL;
    case CS_NCCL_NVLS:
        if (!in->nvls || in->nchannels < 2 || (k != CS_COLL_ALLREDUCE && ppn > MAX_NVLS_ARITY))
            return 0;
        /* between nodes NVLS needs CollNet; allgather/reduce-scatter then
         * need CollNet's own (see above) */
        return in->nnodes == 1 || (in->collnet && !agrs);
    case CS_NCCL_NVLS_TREE:
        return in->nvls && in->nchannels >= 2 && in->nnodes > 1;
    case CS_NCCL_PAT:
        return in->nnodes == in->nranks; /* one GPU a node */
    default:
        return 1;
    }
}

/* The bus bandwidth of (a, p) turned into NCCL's algorithm bandwidth
 * (GB/s for the whole call), ncclTopoTuneModel's refinements in order. */
static double model_bw(const cs_nccl_model_in_t *in, cs_nccl_algo_t a, int p, int nsteps)
{
    cs_coll_kind_t k = in->kind;
    int n2 = in->nnodes <= 2 ? in->nnodes - 1 : 2;
    int nch = in->nchannels;
    double ppn = (double)in->nranks / in->nnodes;
    int collnet = a == CS_NCCL_COLLNET_DIRECT || a == CS_NCCL_COLLNET_CHAIN;
    double llmax = in->nnodes == 1 ? ll_max_bw_1node[n2] : ll_max_bw_intel[n2];
    double bw = in->nnodes <= 2 || collnet ? in->bw_intra : in->bw_inter;
    if ((a == CS_NCCL_NVLS || a == CS_NCCL_NVLS_TREE) && p != SIMPLE)
        return 0;
    if (a == CS_NCCL_PAT && p != SIMPLE)
        return 0;
    if (a == CS_NCCL_NVLS || a == CS_NCCL_NVLS_TREE) {
        double intra = in->bw_intra * NVLS_EFFICIENCY * (nch - 1) / nch;
        intra *= k == CS_COLL_ALLREDUCE ? 2.0 : (ppn - 1) / ppn; /* allreduce pipelines two */
        double inter = in->bw_inter * (in->nnodes <= 2 && a == CS_NCCL_NVLS_TREE ? 2 : 1);
        bw = fmin(intra, inter);
        if (a == CS_NCCL_NVLS_TREE)
            bw = fmin(bw, nvls_tree_max[n2]);
    }
    double bus = nch * bw;
    if (a == CS_NCCL_RING && p == LL)
        bus = fmin(llmax, bus * .5);
    if (a == CS_NCCL_RING && p == LL128)
        bus = fmin(bus * 0.92, nch * ring_ll128_max[n2]);
    if (a == CS_NCCL_TREE && k == CS_COLL_ALLREDUCE)
        bus = fmin(bus * .92, nch * tree_max[n2]);
    if (a == CS_NCCL_TREE && p == LL)
        bus = fmin(bus * 1.0 / 3.8, llmax);
    if (a == CS_NCCL_TREE && p == LL128)
        bus = fmin(bus * (in->nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), nch * tree_ll128_max[n2]);
    /* (a tree whose pattern is NCCL_TOPO_PATTERN_TREE, all traffic through
     * one GPU of the node, pays .85 more: collsim's trees are balanced) */
    if (a == CS_NCCL_PAT)
        bus *= .75;
    if (collnet && p != SIMPLE)
        bus = 0;
    if (a == CS_NCCL_COLLNET_DIRECT && p == SIMPLE) {
        double factor = ppn / nch; /* GPUs per NIC */
        factor -= (factor - 1) / 2;
        bus /= factor;
        bus *= .85; /* compute capability >= 90 */
    }
    /* bus to algorithm bandwidth: the ring's steps, everyone else's halves;
     * allgather and reduce-scatter other than ring keep the bus figure */
    if (!(a != CS_NCCL_RING && (k == CS_COLL_ALLGATHER || k == CS_COLL_REDUCE_SCATTER))) {
        if (a == CS_NCCL_RING || a == CS_NCCL_NVLS || a == CS_NCCL_NVLS_TREE)
            bus *= (double)in->nranks / nsteps;
        else
            bus *= .5;
    }
    return bus;
}

/* The latency (us) of (a, p), ncclTopoTuneModel's second half. */
static double model_lat(const cs_nccl_model_in_t *in, cs_nccl_algo_t a, int p, int nsteps)
{
    cs_coll_kind_t k = in->kind;
    int ppn = in->nranks / in->nnodes, nn = in->nnodes;
    cs_nccl_hw_t hw = nn == 1 ? in->intra_hw : CS_NCCL_HW_NET;
    double lat = base_lat[a][p];
    double intra = hw_lat[in->intra_hw][a][p];
    /* one GPU a node: every latency is exposed, the tree's network figure */
    double inter = (ppn == 1 ? hw_lat[CS_NCCL_HW_NET][CS_NCCL_TREE][p]
                             : hw_lat[CS_NCCL_HW_NET][a][p]) + in->lat_inter;
    if (p == SIMPLE)
        inter += in->lat_inter; /* the flush */
    switch (a) {
    case CS_NCCL_RING:
        if (k == CS_COLL_REDUCE || k == CS_COLL_BROADCAST) {
            /* collsim's rings differ per channel (graph->sameChannels 0):
             * a chunk latency per step, the tree's for Simple */
            double l = hw_lat[hw][p == SIMPLE ? CS_NCCL_TREE : CS_NCCL_RING][p];
            lat += nsteps * l;
        } else {
            double overhead = nn > 1 ? NET_OVERHEAD * (p == SIMPLE ? 3 : 1) : 0;
            int inter_steps = nn == 1 ? 0 : k == CS_COLL_ALLREDUCE ? 2 * (nn - 1) : nn - 1;
            lat += (nsteps - inter_steps) * fmax(intra, overhead) + inter_steps * inter;
        }
        break;
    case CS_NCCL_TREE:
        if (k == CS_COLL_ALLREDUCE)
            lat += 2 * ((ppn - 1) * intra + log2i(nn) * inter);
        break;
    case CS_NCCL_COLLNET_DIRECT:
        lat += 2 * ((ppn - 1 < 1 ? ppn - 1 : 1) * intra + (ppn - 1) * 0.4) + inter;
        break;
    case CS_NCCL_COLLNET_CHAIN:
        lat += 2 * (ppn - 1) * intra + inter;
        break;
    case CS_NCCL_NVLS:
        lat = intra + (nn > 1 ? inter : 0);
        break;
    case CS_NCCL_NVLS_TREE:
        lat += intra + 2 * log2i(nn) * inter;
        break;
    case CS_NCCL_PAT:
        lat += log2i(nn) * (inter / 3.5) + in->nranks * 2.8;
        break;
    default:
        break;
    }
    return lat;
}

/* The threads a channel of (a, p) runs at most (ncclTopoTuneModel's
 * maxThreads; 0 where NCCL sets none, PAT: no channel reduction). */
static int max_threads(const cs_nccl_model_in_t *in, cs_nccl_algo_t a, int p)
{
    if (a == CS_NCCL_RING || a == CS_NCCL_TREE) {
        if (p == LL)
            return 512;
        if (p == LL128)
            return 640;
        if (a == CS_NCCL_RING && in->bw_intra * in->nchannels <= PCI_BW)
            return 256;
        return 512;
    }
    if (a == CS_NCCL_PAT)
        return 0;
    return p == SIMPLE ? 640 : 0;
}

/* topoGetAlgoInfo's channels for the chosen (a, p): fewer for a small call
 * so that each thread has its threshold's work. */
static int call_channels(const cs_nccl_model_in_t *in, cs_nccl_algo_t a, int p, int64_t nbytes)
{
    int nc = in->nchannels;
    if (a == CS_NCCL_NVLS || a == CS_NCCL_NVLS_TREE)
        return in->nnodes > 1 && a == CS_NCCL_NVLS ? (nc < NVLS_CHANNELS ? nc : NVLS_CHANNELS)
                                                   : NVLS_CHANNELS;
    if (a == CS_NCCL_COLLNET_DIRECT)
        return nc; /* its own tuning by NIC heads: not modelled */
    int64_t nt = max_threads(in, a, p);
    int64_t th = thread_threshold[p];
    if (a == CS_NCCL_RING && p == LL)
        th *= in->nranks;
    if (a == CS_NCCL_COLLNET_CHAIN)
        th = 512;
    while (nbytes < nc * nt * th && nc >= 2)
        nc--;
    return nc;
}

int cs_nccl_model(const cs_nccl_model_in_t *in, cs_nccl_model_out_t *out, cs_error_t *err)
{
    cs_coll_kind_t k = in->kind;
    int agrs = k == CS_COLL_ALLGATHER || k == CS_COLL_REDUCE_SCATTER;
    memset(out, 0, sizeof *out);
    if (k != CS_COLL_BROADCAST && k != CS_COLL_REDUCE && k != CS_COLL_ALLREDUCE && !agrs)
        return cs_error_set(err, CS_ERR_USAGE, "NCCL has no algorithm for %s (it runs it as "
                            "point-to-point sends); NCCL's choice covers broadcast, reduce, "
                            "allreduce, allgather and reduce-scatter", cs_coll_name(k));
    if (in->nranks < 1 || in->nnodes < 1 || in->nnodes > in->nranks)
        return cs_error_set(err, CS_ERR_RANGE, "NCCL's model: %d ranks on %d nodes (want "
                            "1 <= nodes <= ranks)", in->nranks, in->nnodes);
    if (in->nchannels < 1 || in->nchannels > 64)
        return cs_error_set(err, CS_ERR_RANGE, "NCCL's model: nchannels=%d outside 1..64",
                            in->nchannels);
    if (!(in->bw_intra > 0) || !(in->bw_inter > 0) || !(in->lat_inter >= 0) ||
        in->bytes < 0)
        return cs_error_set(err, CS_ERR_RANGE, "NCCL's model: bandwidths %g and %g GB/s, "
                            "latency %g us, %lld bytes (want positive bandwidths)",
                            in->bw_intra, in->bw_inter, in->lat_inter, (long long)in->bytes);
    /* nBytes: the larger of send and receive (ncclFuncMaxSendRecvCount) */
    int64_t nbytes = agrs ? in->bytes * in->nranks : in->bytes;
    int nsteps = k == CS_COLL_ALLREDUCE ? 2 * (in->nranks - 1) : agrs ? in->nranks - 1
                                                                      : in->nranks;
    out->nbytes = nbytes;
    out->time_us = -1;
    for (int a = 0; a < CS_NCCL_NALGOS; a++)
        for (int p = 0; p < CS_NCCL_NPROTOS; p++)
            out->time[a][p] = -1;
    if (in->nranks == 1) { /* updateCollCostTable: Ring/Simple, free */
        out->time[CS_NCCL_RING][SIMPLE] = 0;
        out->algo = CS_NCCL_RING;
        out->proto = CS_PROTO_SIMPLE;
        out->nchannels = 1;
        out->time_us = 0;
        return CS_OK;
    }
    for (int a = 0; a < CS_NCCL_NALGOS; a++) {
        if (!algo_considered(in, (cs_nccl_algo_t)a))
            continue;
        for (int p = 0; p < CS_NCCL_NPROTOS; p++) {
            double bw = model_bw(in, (cs_nccl_algo_t)a, p, nsteps);
            double lat = model_lat(in, (cs_nccl_algo_t)a, p, nsteps);
            out->bw[a][p] = bw;
            out->lat[a][p] = lat;
            if (bw <= 0)
                continue;
            int lg = log2i(nbytes >> 6);
            if (a == CS_NCCL_TREE && k == CS_COLL_ALLREDUCE && lg >= 0 && lg < 23)
                bw *= tree_correction[p][lg];
            if (a == CS_NCCL_RING && p == SIMPLE && in->nnodes > 1 && k == CS_COLL_ALLREDUCE &&
                nbytes / ((int64_t)in->nchannels * in->nranks) >= 64)
                lat *= 1.4; /* the ring's plateau, compute capability >= 80 */
            out->lat[a][p] = lat; /* this call's: the size's corrections applied */
            out->bw[a][p] = bw;
            out->time[a][p] = lat + (double)nbytes / (1000 * bw);
        }
    }
    int best_a = -1, best_p = -1;
    for (int a = 0; a < CS_NCCL_NALGOS; a++)
        for (int p = 0; p < CS_NCCL_NPROTOS; p++)
            if (out->time[a][p] >= 0 && (best_a < 0 || out->time[a][p] < out->time_us)) {
                best_a = a;
                best_p = p;
                out->time_us = out->time[a][p];
            }
    /* the ring with Simple is always there (bw > 0 for positive inputs) */
    out->algo = (cs_nccl_algo_t)best_a;
    out->proto = cs_nccl_proto_of(best_p);
    out->nchannels = call_channels(in, out->algo, best_p, nbytes);
    return CS_OK;
}
