/*
 * nccl_tree_internal.h - what nccl_tree.c (the double binary tree) and
 * nccl_pat.c (PAT) share, private to them: chunk arithmetic and PAT's two
 * algorithms, which nccl_tree.c's table lists (nccl.h).
 */
#ifndef CS_COLL_NCCL_TREE_INTERNAL_H
#define CS_COLL_NCCL_TREE_INTERNAL_H

#include <stdint.h>
#include "coll/coll.h"

/* a * b saturated at INT64_MAX (a, b >= 0). */
static inline int64_t nccl_mul_sat(int64_t a, int64_t b)
{
    return b && a > INT64_MAX / b ? INT64_MAX : a * b;
}

/* Chunks of a part of len bytes, at least one for a non-empty part. */
static inline int64_t nccl_nchunks(int64_t len, int64_t chunk)
{
    return len <= 0 ? 0 : (len - 1) / chunk + 1;
}

/* Chunks over all channels when total bytes split into nc parts by
 * cs_coll_split (total % nc parts of q + 1 bytes, the others of q): exact,
 * an empty part having none. */
static inline int64_t nccl_all_chunks(int64_t total, int nc, int64_t chunk)
{
    int64_t q = total / nc, r = total % nc;
    int64_t n = nccl_mul_sat(r, nccl_nchunks(q + 1, chunk));
    int64_t m = nccl_mul_sat(nc - r, nccl_nchunks(q, chunk));
    return n > INT64_MAX - m ? INT64_MAX : n + m;
}

/* allgather/nccl-pat and reduce-scatter/nccl-pat (nccl_pat.c). */
extern const cs_coll_algo_t cs_coll_nccl_pat_allgather;
extern const cs_coll_algo_t cs_coll_nccl_pat_reduce_scatter;

#endif
