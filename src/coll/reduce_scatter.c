/*
 * reduce_scatter.c - every reduce-scatter algorithm of the suite: rank r
 * ends with block r, [r*m, (r+1)*m), reduced over all ranks.  Listed (and
 * registered) in this order: the lecture's ring (shared/papers/004 §8.7,
 * the dual of the bucket allgather), recursive halving with the extra ranks
 * of a non-power of two folded in (Thakur, Rabenseifner, Gropp 2005), and
 * the pairwise (direct) exchange of the MPI libraries.
 *
 * Conventions as in broadcast.c.
 */
#include "coll/coll_internal.h"

#include <stdlib.h>

/* Ring (lecture §8.7, dual of the bucket allgather): P-1 steps over the
 * ring order, reduce on receipt.  (alpha + beta m)(P-1) + (P-1) m reduced. */
static int reduce_scatter_ring(cs_coll_builder_t *b, cs_error_t *err)
{
    cs_coll_ring_pieces_t rp;
    (void)err;
    /* position i ends with piece i: its own block */
    cs_coll_ring_pieces_init(&rp, cs_coll_args(b), 1);
    cs_coll_ring_reduce_scatter(b, rp.ring, cs_coll_args(b)->P, rp.off, rp.len, TAG_DATA);
    cs_coll_ring_pieces_destroy(&rp);
    return CS_OK;
}

/* Recursive halving: extra ranks hand in their whole buffer (reduced by
 * the partner), log2 Pp halving rounds over the virtual ranks (virtual rank
 * v's piece is the blocks of the real ranks it stands for), then each even
 * partner returns its extra rank's block.  P a power of two:
 * alpha log2 P + beta m (P-1).  Source: generic (MPI; Thakur et al. 2005). */
static int reduce_scatter_halving(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t m = a->bytes;
    cs_coll_blocks_t bl = {P, 0, m, 0};
    int far, rc;
    cs_coll_fold_t f;
    if ((rc = cs_coll_opt_fold(a, 0, &far, err)))
        return rc;
    f = cs_coll_fold_rule(P, far);
    if (P == 1 || m == 0)
        return CS_OK;
    cs_coll_fold_in(b, &f, 0, (int64_t)P * m, 1);
    cs_coll_halving(b, &f, NULL, &bl, TAG_DATA);
    for (int i = 0; i < f.e; i++) {
        int x = fold_extra(&f, i), p = fold_partner(&f, i);
        cs_coll_send_nz(b, p, x, (int64_t)x * m, m, TAG_UNFOLD);
        cs_coll_recv_nz(b, x, p, (int64_t)x * m, m, TAG_UNFOLD);
    }
    cs_coll_wait_all(b);
    return CS_OK;
}

/* Pairwise (direct): in step k = 1..P-1 rank r sends its block r+k to
 * rank r+k and adds rank r-k's copy of block r.  (alpha + beta m)(P-1).  Source: generic (MPI). */
static int reduce_scatter_pairwise(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t m = a->bytes;
    (void)err;
    for (int k = 1; k < P; k++) {
        for (int r = 0; r < P; r++) {
            int to = (r + k) % P, from = mod(r - k, P);
            cs_coll_send_nz(b, r, to, (int64_t)to * m, m, TAG_DATA);
            cs_coll_recv_reduce_nz(b, r, from, (int64_t)r * m, m, TAG_DATA);
        }
        cs_coll_wait_all(b);
    }
    return CS_OK;
}

/* Per dimension (ASTRA-sim's hierarchical collectives; issue 18): the last
 * dimension first, so that each rank's blocks stay consecutive and rank r
 * ends with block r (coll_internal.c, cs_coll_dims_step). */
static int reduce_scatter_multidim(cs_coll_builder_t *b, cs_error_t *err)
{
    cs_coll_dims_t g;
    int rc;
    if ((rc = cs_coll_dims_get(cs_coll_args(b), &g, err)))
        return rc;
    for (int d = g.n - 1; d >= 0; d--)
        cs_coll_dims_step(b, &g, d, 1, 1);
    return CS_OK;
}

/* ---- registry ------------------------------------------------------------------ */

/* Op counts (cs_coll_algo_t.max_ops): P - 1 steps of a send, a recv and
 * a calc per rank, 3 P (P - 1), ring or pairwise. */
static int64_t pairs3_ops(const cs_coll_args_t *a) { return cs_coll_ops_pairs(a->P, 3); }
/* Recursive halving, near fold (the default): P = Pp + e; a send and a
 * recv-and-add (recv + calc) per extra rank in, log2 Pp rounds of one range
 * given and one range added per virtual rank, a send and a recv of the
 * block per extra rank out: 3 Pp log2 Pp + 5 e.  The far fold splits some
 * ranges in two: not stated (-1), nor for an option the build refuses. */
static int64_t halving_ops(const cs_coll_args_t *a)
{
    int64_t Pp = pow2_floor(a->P);
    int far;
    cs_error_t err;
    if (cs_coll_opt_fold(a, 0, &far, &err) || far)
        return -1;
    return 3 * Pp * floor_log2(Pp) + 5 * (a->P - Pp);
}

static const cs_coll_algo_t rs_ring = {
    CS_COLL_REDUCE_SCATTER, "ring",
    "bucket: P-1 steps over the ring order, reduce on receipt and pass on",
    "lecture §8.7 (dual of the bucket allgather)", "", NULL, reduce_scatter_ring, pairs3_ops};
static const char *const keys_fold[] = {"fold", NULL};
static const cs_coll_algo_t rs_halving = {
    CS_COLL_REDUCE_SCATTER, "recursive-halving",
    "recursive halving: log2 rounds exchanging half the remaining blocks; extra ranks folded",
    "generic (MPI; Thakur et al. 2005)", FOLD_TEXT, keys_fold, reduce_scatter_halving, halving_ops};
static const cs_coll_algo_t rs_pairwise = {
    CS_COLL_REDUCE_SCATTER, "pairwise",
    "direct: in step k send block r+k to rank r+k, add rank r-k's copy of block r",
    "generic (MPI)", "", NULL, reduce_scatter_pairwise, pairs3_ops};

static const char *const keys_multidim[] = {"dims", "inner", NULL};
static const cs_coll_algo_t rs_multidim = {
    CS_COLL_REDUCE_SCATTER, "multidim",
    "per dimension of the machine, the last first: each dimension's lines reduce-scatter the "
    "blocks their ranks share",
    "ASTRA-sim's hierarchical collectives (issue 18)",
    "dims=AxB... (default: the machine's dimensions hint, else one); inner=ring|direct, or one "
    "per dimension joined by + (default ring)",
    keys_multidim, reduce_scatter_multidim, NULL};

/* Listing order: the default first. */
const cs_coll_algo_t *const cs_coll_algos_reduce_scatter[] = {&rs_ring, &rs_halving, &rs_pairwise,
                                                              &rs_multidim, NULL};
