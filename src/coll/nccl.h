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
    int64_t chunk;      /* chunk=BYTES: the data one channel moves in one step; by default
                           NCCL's for a ring of this collective under the protocol
                           (cs_nccl_chunk_default) */
    int64_t step;       /* NCCL's data bytes of one buffer step under the protocol
                           (cs_nccl_step_bytes): the default chunk of every algorithm but
                           the ring (NCCL's chunkSteps is 1 there); chunk when given */
    double proto_lat;   /* proto_lat=TIME: the protocol's latency a message, seconds;
                           < 0: NCCL's (cs_proto_lat_default) */
} cs_nccl_opts_t;

/* The option keys every NCCL algorithm takes, for its keys table. */
#define CS_NCCL_KEYS "proto", "nchannels", "chunk", "proto_lat"
/* Their text for the algorithm's options line. */
#define CS_NCCL_OPTIONS "proto=simple|ll|ll128 (default simple), nchannels=N (default 2), " \
                        "chunk=BYTES (default: NCCL's for the protocol), proto_lat=TIME "   \
                        "(default NCCL's: Simple 3.4us, LL 0.6us, LL128 1.9us)"

/* NCCL 2.30.7's buffers (src/init.cc, src/include/device.h): NCCL_STEPS =
 * 8 steps a buffer; Simple 4 MiB (a step 512 KiB of data), LL 512 KiB of
 * 16-byte lines of 8 data bytes (a step 32 KiB of data), LL128 4,915,200
 * bytes of 128-byte lines of 120 data bytes (a step 576,000 bytes of data).
 * The data bytes of one step under p. */
int64_t cs_nccl_step_bytes(cs_proto_t p);
/* The chunk of NCCL's ring for collective k under p (enqueue.cc,
 * calcCollChunking): Simple takes chunkSteps steps, 4 for allreduce,
 * allgather and reduce-scatter, 1 for broadcast and reduce
 * (collectives.h); LL and LL128 one step. */
int64_t cs_nccl_chunk_default(cs_coll_kind_t k, cs_proto_t p);

/* Reads the options of a (errors name the key). */
int cs_nccl_opts_read(const cs_coll_args_t *a, cs_nccl_opts_t *o, cs_error_t *err);
/* The builder's messages from now on use o->proto (cs_coll_set_proto),
 * and the program o->proto_lat when given (cs_program_set_proto_lat). */
void cs_nccl_begin(cs_coll_builder_t *b, const cs_nccl_opts_t *o);

/* The NCCL algorithms of each file, NULL-terminated, any collective
 * (coll.c merges them into the registry by collective). */
extern const cs_coll_algo_t *const cs_coll_algos_nccl_ring[];
extern const cs_coll_algo_t *const cs_coll_algos_nccl_tree[];
extern const cs_coll_algo_t *const cs_coll_algos_nccl_innet[];

#endif
