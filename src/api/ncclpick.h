/*
 * ncclpick.h - `--algo nccl`: a machine seen as NCCL's cost model sees its
 * hardware, and the choice the model makes for one call (issue 36).
 *
 * The model itself is coll/nccl_model.h (pure).  Here are its inputs, read
 * from a machine (nodes from the group hint, bandwidths from the channels
 * of the routes between ranks: docs/nccl.md, "NCCL's choice"), and the
 * estimate NCCL would give for an nccl-* run (`--predict`).
 */
#ifndef CS_NCCLPICK_H
#define CS_NCCLPICK_H

#include "coll/coll.h"
#include "coll/nccl_model.h"
#include "core/error.h"
#include "machines/machine.h"

/* What NCCL's model said of one call. */
typedef struct cs_ncclpick {
    int chosen;               /* 1: `--algo nccl` chose the algorithm; 0: an estimate only */
    cs_nccl_model_in_t in;    /* the inputs, as read from the machine */
    cs_nccl_model_out_t out;  /* the whole table and the model's own choice */
    cs_nccl_algo_t algo;      /* the algorithm run (== out.algo when chosen) */
    cs_proto_t proto;
    int nchannels;            /* the channels the run uses */
    double estimate_us;       /* NCCL's time for (algo, proto), microseconds */
} cs_ncclpick_t;

/* The model's inputs for collective a (kind, P, bytes, the group hint) on
 * m placed by rank_to_node, with `nchannels` channels and the switches
 * that reduce (nvls, collnet: 0 or 1):
 *   nodes       the group hint's groups (1 without a hint)
 *   bw_intra    the narrowest channel on the route from rank 0 to the next
 *               rank of its group (link kind NVLink), over nchannels
 *   bw_inter    for several nodes: the node's bandwidth out, the sum over
 *               the ranks of rank 0's group of the narrowest channel of
 *               each one's route to the rank of the same place in the next
 *               group, counting a first channel once (the NICs), capped by
 *               the intra-node figure, over nchannels but at most the
 *               narrowest channel of rank 0's own route (one channel
 *               leaves through one NIC), for both figures (NCCL's search
 *               gives graphs that leave the node one speed); link kind
 *               NET, latency 0 as NCCL's InfiniBand plugin reports
 * CS_ERR_USAGE for a machine whose engine is its own (no link
 * bandwidths to read) or ranks without a route, naming the machine. */
int cs_ncclpick_inputs(const cs_machine_t *m, const cs_coll_args_t *a,
                       const int32_t *rank_to_node, int nchannels, int nvls, int collnet,
                       cs_nccl_model_in_t *in, cs_error_t *err);

/* `--algo nccl` for collective kind: a stand-in in the suite's form
 * (name "nccl", NCCL's options) that cs_request_coll_prepare replaces by
 * the algorithm NCCL's model chooses; its build refuses to run. */
const cs_coll_algo_t *cs_ncclpick_algo(cs_coll_kind_t kind);

/* The algorithm of NCCL's model that the suite's algorithm `suite_name`
 * runs ("nccl-ring": Ring); -1 for a name that is none of them. */
int cs_ncclpick_algo_of(const char *suite_name);

#endif
