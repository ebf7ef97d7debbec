/*
 * bandwidth.c - algbw and busbw of a collective (bandwidth.h), as
 * nccl-tests defines them: doc/PERFORMANCE.md ("Bus bandwidth") for the
 * factors and the *GetBw functions of src/all_reduce.cu, all_gather.cu,
 * reduce_scatter.cu, alltoall.cu, broadcast.cu, reduce.cu, gather.cu and
 * scatter.cu for S.  The reasoning of the factors, in short: with n ranks
 * each of bandwidth B, an allreduce must move every element 2(n-1) times
 * over n links (t >= S 2(n-1) / (n B)); a reduce-scatter or allgather
 * half of that; a broadcast or reduce is bound by the root's one link
 * (t >= S / B).  busbw is then comparable with a link's peak whatever n.
 */
#include <math.h>

#include "coll/bandwidth.h"

/* Whether --bytes is the per-rank block (S = bytes x n) rather than the
 * whole vector (coll.h: MPI count semantics). */
static int per_rank_block(cs_coll_kind_t k)
{
    switch (k) {
    case CS_COLL_ALLGATHER:
    case CS_COLL_REDUCE_SCATTER:
    case CS_COLL_ALLTOALL:
    case CS_COLL_GATHER:
    case CS_COLL_SCATTER: return 1;
    default: return 0;
    }
}

int cs_bandwidth_defined(cs_coll_kind_t k)
{
    return k != CS_COLL_BARRIER && k >= 0 && k < CS_COLL_NKINDS;
}

double cs_bandwidth_size(cs_coll_kind_t k, int P, int64_t bytes)
{
    if (!cs_bandwidth_defined(k) || bytes <= 0 || P < 1)
        return 0;
    return per_rank_block(k) ? (double)bytes * (double)P : (double)bytes;
}

double cs_bandwidth_factor(cs_coll_kind_t k, int P)
{
    if (!cs_bandwidth_defined(k) || P < 1)
        return 0;
    if (k == CS_COLL_ALLREDUCE)
        return 2.0 * (double)(P - 1) / (double)P;
    if (k == CS_COLL_BROADCAST || k == CS_COLL_REDUCE)
        return 1;
    return (double)(P - 1) / (double)P; /* the per-rank-block collectives */
}

const char *cs_bandwidth_formula(cs_coll_kind_t k)
{
    if (!cs_bandwidth_defined(k))
        return "none";
    if (k == CS_COLL_ALLREDUCE)
        return "2(n-1)/n";
    if (k == CS_COLL_BROADCAST || k == CS_COLL_REDUCE)
        return "1";
    return "(n-1)/n";
}

void cs_bandwidth_of(cs_coll_kind_t k, int P, int64_t bytes, double seconds,
                     cs_bandwidth_t *out)
{
    out->size_bytes = cs_bandwidth_size(k, P, bytes);
    out->factor = cs_bandwidth_factor(k, P);
    out->seconds = seconds;
    out->algbw = seconds > 0 && isfinite(seconds) ? out->size_bytes / seconds : 0;
    out->busbw = out->algbw * out->factor;
}
