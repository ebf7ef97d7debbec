/*
 * nccl_model.h - NCCL's own cost model and its choice of algorithm,
 * protocol and channel count for one call (issue 36, `--algo nccl`).
 *
 * The tables and formulas are those of NVIDIA/nccl v2.30.7-1
 * (src/graph/tuning.cc: ncclTopoTuneModel, ncclTopoGetAlgoTime;
 * src/enqueue.cc: updateCollCostTable, topoGetAlgoInfo), read and
 * rewritten, for one hardware kind: Hopper (compute capability 90), x86
 * Intel hosts, a balanced tree pattern, no tuner plugin, no NCCL_ALGO /
 * NCCL_PROTO.  docs/nccl.md ("NCCL's choice") lists what is kept.
 *
 * Pure: no machine, no network.  The caller (api/nccl_choice.c) maps a
 * machine to the inputs.  Times are NCCL's: microseconds, bandwidths in
 * GB/s (10^9 bytes per second) per channel.
 */
#ifndef CS_COLL_NCCL_MODEL_H
#define CS_COLL_NCCL_MODEL_H

#include <stdint.h>

#include "coll/coll.h"
#include "core/error.h"
#include "core/proto.h"

/* NCCL's algorithms in NCCL's order (NCCL_ALGO_*). */
typedef enum cs_nccl_algo {
    CS_NCCL_TREE, CS_NCCL_RING, CS_NCCL_COLLNET_DIRECT, CS_NCCL_COLLNET_CHAIN, CS_NCCL_NVLS,
    CS_NCCL_NVLS_TREE, CS_NCCL_PAT, CS_NCCL_NALGOS
} cs_nccl_algo_t;

/* NCCL's protocols in NCCL's order (NCCL_PROTO_*): LL, LL128, Simple. */
#define CS_NCCL_NPROTOS 3

/* The link kinds of NCCL's latency table (NCCL_HW_*). */
typedef enum cs_nccl_hw { CS_NCCL_HW_NVLINK, CS_NCCL_HW_PCI, CS_NCCL_HW_NET } cs_nccl_hw_t;

/* What the model is told of one communicator and one call. */
typedef struct cs_nccl_model_in {
    cs_coll_kind_t kind;  /* broadcast, reduce, allreduce, allgather, reduce-scatter */
    int nranks, nnodes;   /* nnodes divides nothing: ppn = nranks / nnodes as NCCL */
    int64_t bytes;        /* collsim's --bytes (the per-rank block for allgather and
                             reduce-scatter); NCCL's nBytes is derived */
    double bw_intra;      /* GB/s per channel inside a node (graph->bwIntra) */
    double bw_inter;      /* GB/s per channel between nodes (graph->bwInter) */
    double lat_inter;     /* us: the network's own latency (graph->latencyInter) */
    cs_nccl_hw_t intra_hw;/* NVLINK or PCI: the kind of the links inside a node */
    int nchannels;        /* the communicator's channels (comm->nChannels) */
    int nvls;             /* 1: NVLink SHARP (a switch inside the node that reduces) */
    int collnet;          /* 1: CollNet (a network that reduces: SHARP) */
} cs_nccl_model_in_t;

/* The model's answer. */
typedef struct cs_nccl_model_out {
    /* per algorithm and protocol (NCCL's order): latency (us) and
     * algorithm bandwidth (GB/s) of this call (the tree's correction and
     * the ring's plateau for its size applied), time = lat + nbytes /
     * (1000 bw) (us); time < 0: not available (disabled, not for this
     * collective or hardware) */
    double lat[CS_NCCL_NALGOS][CS_NCCL_NPROTOS];
    double bw[CS_NCCL_NALGOS][CS_NCCL_NPROTOS];
    double time[CS_NCCL_NALGOS][CS_NCCL_NPROTOS];
    int64_t nbytes;       /* NCCL's nBytes (the largest of send and receive) */
    /* the choice: the lowest time, first in NCCL's order on a tie */
    cs_nccl_algo_t algo;
    cs_proto_t proto;
    int nchannels;        /* channels for this call (topoGetAlgoInfo's reduction) */
    double time_us;       /* NCCL's estimate of the call */
} cs_nccl_model_out_t;

/* NCCL's name of an algorithm ("Ring", "Tree", "CollNetDirect", ...). */
const char *cs_nccl_algo_name(cs_nccl_algo_t a);
/* The suite's algorithm that runs it ("nccl-ring", "nccl-tree", "nccl-pat",
 * ...; NVLS and NVLSTree both "nccl-nvls", which runs NVLS with CollNet on
 * a network that reduces and NVLSTree on one that does not), or NULL. */
const char *cs_nccl_algo_suite(cs_nccl_algo_t a);
/* cs_proto_t of NCCL's protocol index p (0 LL, 1 LL128, 2 Simple). */
cs_proto_t cs_nccl_proto_of(int p);

/* Evaluates the model for `in` and chooses.  CS_ERR_USAGE for a collective
 * NCCL has no algorithm for (gather, scatter, barrier, alltoall: NCCL runs
 * them as point-to-point), naming it; CS_ERR_RANGE for inputs out of range
 * (ranks < 1, nodes outside 1..ranks, channels outside 1..64, a bandwidth
 * not positive).  O(algorithms x protocols). */
int cs_nccl_model(const cs_nccl_model_in_t *in, cs_nccl_model_out_t *out, cs_error_t *err);

#endif
