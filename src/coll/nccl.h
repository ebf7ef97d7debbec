/*
 * nccl.h - what NCCL's algorithms in the suite share (issue 36): the
 * protocol, the channels and the chunk size, read from the algorithm's
 * options with NCCL's names and defaults.  The algorithms live in
 * nccl_ring.c (ring family), nccl_tree.c (double binary tree, PAT) and
 * nccl_innet.c (CollNet, NVLS: switches that reduce); docs/nccl.md.
 */
#ifndef CS_COLL_NCCL_H
#define CS_COLL_NCCL_H

#include "coll/coll.h"
#include "core/proto.h"

typedef struct cs_nccl_opts {
    cs_proto_t proto;   /* proto=simple|ll|ll128 (default simple) */
    int nchannels;      /* nchannels=N: parallel rings or tree pairs, each a share of the data */
    int64_t chunk;      /* chunk=BYTES: the data one channel moves in one step */
} cs_nccl_opts_t;

/* The option keys every NCCL algorithm takes, for its keys table. */
#define CS_NCCL_KEYS "proto", "nchannels", "chunk"
/* Their text for the algorithm's options line. */
#define CS_NCCL_OPTIONS "proto=simple|ll|ll128 (default simple), nchannels=N (default 2), " \
                        "chunk=BYTES (default: NCCL's for the protocol)"

/* Reads the options of a (errors name the key). */
int cs_nccl_opts_read(const cs_coll_args_t *a, cs_nccl_opts_t *o, cs_error_t *err);
/* The builder's messages from now on use o->proto. */
void cs_nccl_begin(cs_coll_builder_t *b, const cs_nccl_opts_t *o);

/* The NCCL algorithms of each file, NULL-terminated, any collective
 * (coll.c merges them into the registry by collective). */
extern const cs_coll_algo_t *const cs_coll_algos_nccl_ring[];
extern const cs_coll_algo_t *const cs_coll_algos_nccl_tree[];
extern const cs_coll_algo_t *const cs_coll_algos_nccl_innet[];

#endif
