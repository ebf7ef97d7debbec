/*
 * algofile_emit.c - the chunk arithmetic and the receives that the readers
 * of algorithm files (msccl.c, mscclpp.c) emit the same way
 * (algofile_internal.h).  The formats differ in how they say what moves;
 * what a chunk is in bytes and how a copying or reducing recv becomes ops
 * is one model (docs/msccl.md), kept here once.
 */
#include "io/algofile_internal.h"

#include <stdio.h>

const char *cs_algofile_article(cs_coll_kind_t kind)
{
    return kind == CS_COLL_ALLREDUCE || kind == CS_COLL_ALLGATHER || kind == CS_COLL_ALLTOALL
               ? "n"
               : "";
}

/* The collectives whose buffer is P blocks, one a rank. */
static int is_block_kind(cs_coll_kind_t k)
{
    return k == CS_COLL_ALLGATHER || k == CS_COLL_REDUCE_SCATTER || k == CS_COLL_GATHER ||
           k == CS_COLL_SCATTER || k == CS_COLL_ALLTOALL;
}

int cs_algofile_chunk_bytes(const cs_coll_args_t *a, int32_t nchunks, int32_t ngpus,
                            const char *file, int line, const char *ratio, int64_t *q,
                            cs_error_t *err)
{
    int64_t N = cs_coll_buffer_bytes(a->kind, a->P, a->bytes), C = nchunks;
    if (is_block_kind(a->kind)) {
        int64_t per = C % a->P == 0 ? C / a->P : 0;
        if (!per || a->bytes % per) {
            char where[CS_ERROR_MSG_MAX];
            if (line > 0)
                snprintf(where, sizeof where, "%s:%d", file, line);
            else
                snprintf(where, sizeof where, "%s", file);
            return cs_error_set(err, CS_ERR_RANGE, "%s: %s: each rank's block of %lld bytes "
                                "does not divide into %s%d/%d equal chunks; give --bytes a "
                                "multiple of %lld", where, cs_coll_name(a->kind),
                                (long long)a->bytes, ratio, nchunks, ngpus,
                                (long long)(per ? per : C));
        }
        *q = a->bytes / per;
    } else {
        *q = (N + C - 1) / C;
    }
    return CS_OK;
}

int cs_algofile_check_fits(const char *file, int64_t nchunks, int64_t smax, int64_t q,
                           cs_error_t *err)
{
    if (q > 0 && nchunks + smax > (CS_DATA_MAX_LEN / 2) / q)
        return cs_error_set(err, CS_ERR_RANGE, "%s: %lld chunks of %lld bytes are more than "
                            "collsim's buffers hold", file, (long long)(nchunks + smax),
                            (long long)q);
    return CS_OK;
}

int64_t cs_algofile_offset(int64_t q, int64_t scratch, int32_t nchunks, int32_t count, int buf,
                           int g, int64_t c)
{
    if (buf == CS_ALGOFILE_BUF_S)
        return scratch + c * q;
    if (count != nchunks) /* the GPU's own block */
        c += (int64_t)g * count;
    return c * q;
}

int32_t cs_algofile_recv_into(cs_coll_builder_t *b, int g, int from, int64_t off, int64_t len,
                              int tag, int reduce, int32_t *first)
{
    int32_t r = cs_coll_recv(b, g, from, off, len, tag), c;
    *first = r;
    if (!reduce || r < 0)
        return r;
    cs_coll_set_data(b, r, off, len, CS_DATA_REDUCE);
    c = cs_coll_calc(b, g, 0, len);
    cs_coll_dep(b, c, r, CS_DEP_AFTER);
    return c;
}
