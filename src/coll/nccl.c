/*
 * nccl.c - the options NCCL's algorithms share (nccl.h).
 */
#include "coll/nccl.h"

static int64_t wire(int64_t len, const void *ctx)
{
    return cs_proto_wire(*(const cs_proto_t *)ctx, len);
}

int cs_nccl_opts_read(const cs_coll_args_t *a, cs_nccl_opts_t *o, cs_error_t *err)
{
    static const char *const protos[] = {"simple", "ll", "ll128", NULL};
    int p, rc;
    int64_t nch, chunk;
    if ((rc = cs_coll_opt_choice(a, "proto", protos, 0, &p, err)) ||
        (rc = cs_coll_opt_int(a, "nchannels", 2, 1, 64, &nch, err)) ||
        (rc = cs_coll_opt_int(a, "chunk", 0, 0, INT64_C(1) << 40, &chunk, err)))
        return rc;
    o->proto = (cs_proto_t)(CS_PROTO_SIMPLE + p);
    o->nchannels = (int)nch;
    o->chunk = chunk ? chunk : (INT64_C(1) << 19); /* placeholder: NCCL's per protocol */
    return CS_OK;
}

void cs_nccl_begin(cs_coll_builder_t *b, const cs_nccl_opts_t *o)
{
    static const cs_proto_t protos[CS_PROTO_COUNT] = {CS_PROTO_NONE, CS_PROTO_SIMPLE, CS_PROTO_LL,
                                                      CS_PROTO_LL128};
    cs_coll_set_wire(b, wire, &protos[o->proto]);
}
