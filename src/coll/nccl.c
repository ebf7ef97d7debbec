/*
 * nccl.c - the options NCCL's algorithms share (nccl.h): the protocol, the
 * channels, the chunk and the protocol's latency, with NCCL 2.30.7-1's
 * names and defaults (src/init.cc buffer sizes, src/enqueue.cc
 * calcCollChunking, src/include/collectives.h chunk steps).
 */
#include "coll/nccl.h"

/* NCCL_STEPS (src/include/device.h) */
#define NCCL_STEPS 8

int64_t cs_nccl_step_bytes(cs_proto_t p)
{
    switch (p) {
    case CS_PROTO_LL:
        /* DEFAULT_LL_BUFFSIZE: 8 lines a thread x 512 threads x 8 steps x
         * 16 bytes; a line carries 8 data bytes */
        return INT64_C(8) * 512 * NCCL_STEPS * 16 / NCCL_STEPS / 2;
    case CS_PROTO_LL128:
        /* DEFAULT_LL128_BUFFSIZE: 120 elements x 640 threads x 8 steps x
         * 8 bytes; 15 of a line's 16 elements are data */
        return INT64_C(120) * 640 * NCCL_STEPS * 8 / NCCL_STEPS / 16 * 15;
    default:
        return (INT64_C(1) << 22) / NCCL_STEPS; /* DEFAULT_BUFFSIZE, 4 MiB */
    }
}

int64_t cs_nccl_chunk_default(cs_coll_kind_t k, cs_proto_t p)
{
    int steps = 1;
    if ((p == CS_PROTO_SIMPLE || p == CS_PROTO_NONE) &&
        (k == CS_COLL_ALLREDUCE || k == CS_COLL_ALLGATHER || k == CS_COLL_REDUCE_SCATTER))
        steps = NCCL_STEPS / 2; /* ALLREDUCE/ALLGATHER/REDUCESCATTER_CHUNKSTEPS */
    return cs_nccl_step_bytes(p) * steps;
}

int cs_nccl_opts_read(const cs_coll_args_t *a, cs_nccl_opts_t *o, cs_error_t *err)
{
    static const char *const protos[] = {"simple", "ll", "ll128", NULL};
    int p, rc;
    int64_t nch, chunk = 0;
    double lat = -1;
    if ((rc = cs_coll_opt_choice(a, "proto", protos, 0, &p, err)) ||
        (rc = cs_coll_opt_int(a, "nchannels", 2, 1, 64, &nch, err)))
        return rc;
    if (a->opts && cs_spec_get(a->opts, "chunk")) {
        if ((rc = cs_spec_get_bytes(a->opts, "chunk", 0, &chunk, err)))
            return rc;
        if (chunk < 1 || chunk > (INT64_C(1) << 40))
            return cs_error_set(err, CS_ERR_RANGE,
                                "option chunk: %lld bytes is outside 1 B .. 1 TiB",
                                (long long)chunk);
    }
    if (a->opts && cs_spec_get(a->opts, "proto_lat")) {
        if ((rc = cs_spec_get_seconds(a->opts, "proto_lat", 0, &lat, err)))
            return rc;
        if (!(lat >= 0 && lat <= 1))
            return cs_error_set(err, CS_ERR_RANGE,
                                "option proto_lat: %g s is outside 0 .. 1 s", lat);
    }
    o->proto = (cs_proto_t)(CS_PROTO_SIMPLE + p);
    o->nchannels = (int)nch;
    o->chunk = chunk ? chunk : cs_nccl_chunk_default(a->kind, o->proto);
    o->step = chunk ? chunk : cs_nccl_step_bytes(o->proto);
    o->proto_lat = lat;
    return CS_OK;
}

void cs_nccl_begin(cs_coll_builder_t *b, const cs_nccl_opts_t *o)
{
    cs_coll_set_proto(b, o->proto);
    if (o->proto_lat >= 0)
        cs_program_set_proto_lat(cs_coll_program(b), o->proto, o->proto_lat);
}
