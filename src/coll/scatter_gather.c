/*
 * scatter_gather.c - every scatter and gather algorithm of the suite (two
 * each, duals of each other, so they share a file): the root's block i,
 * [i*m, (i+1)*m), goes to rank i, or comes from it.  Listed (and
 * registered) in this order: the divide-and-conquer tree (shared/papers/004
 * §8.5, cs_coll_dc_scatter / cs_coll_dc_gather) and the lecture's naive
 * one-at-a-time version (§8.4).
 *
 * Conventions as in broadcast.c.
 */
#include "coll/coll_internal.h"

#include <stdlib.h>


/* Naive scatter (lecture §8.4): the root sends block i to rank i, one at a
 * time, in rank order after the root. */
static int scatter_flat(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t m = a->bytes;
    for (int i = 1; i < a->P; i++) {
        int dst = real_rank(i, a->root, a->P);
        cs_coll_xfer(b, a->root, dst, (int64_t)dst * m, m, TAG_DATA, NULL);
    }
    return CS_OK;
}

/* scatter/binomial; source: lecture §8.5. */
static int scatter_binomial(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t *boff = cs_coll_piece_bounds(a->P, a->bytes, 0);
    cs_coll_dc_scatter(b, boff, 0, a->P, a->root, TAG_DATA);
    free(boff);
    return CS_OK;
}

/* Every rank sends its block to the root, which receives them in rank order
 * after the root.  Source: lecture §8.4 (dual). */
static int gather_flat(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t m = a->bytes;
    for (int i = 1; i < a->P; i++) {
        int src = real_rank(i, a->root, a->P);
        cs_coll_xfer(b, src, a->root, (int64_t)src * m, m, TAG_DATA, NULL);
    }
    return CS_OK;
}

/* gather/binomial; source: lecture §8.5. */
static int gather_binomial(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t *boff = cs_coll_piece_bounds(a->P, a->bytes, 0);
    cs_coll_dc_gather(b, boff, 0, a->P, a->root, TAG_DATA);
    free(boff);
    return CS_OK;
}

/* ---- registry ------------------------------------------------------------------ */

/* Op counts (cs_coll_algo_t.max_ops): a send and a recv per rank but the
 * root, 2 (P - 1) (the binomial ones move several blocks per message). */
static int64_t star2_ops(const cs_coll_args_t *a) { return cs_coll_ops_star(a->P, 2); }

static const cs_coll_algo_t scatter_binomial_algo = {
    .kind = CS_COLL_SCATTER,
    .name = "binomial",
    .summary = "divide and conquer: halve the rank range, send the other half's blocks to a "
               "representative",
    .source = "lecture §8.5",
    .options = "",
    .keys = NULL,
    .build = scatter_binomial,
    .max_ops = star2_ops,
};

static const cs_coll_algo_t scatter_flat_algo = {
    .kind = CS_COLL_SCATTER,
    .name = "flat",
    .summary = "naive: the root sends block i to rank i, one at a time",
    .source = "lecture §8.4",
    .options = "",
    .keys = NULL,
    .build = scatter_flat,
    .max_ops = star2_ops,
};

static const cs_coll_algo_t gather_binomial_algo = {
    .kind = CS_COLL_GATHER,
    .name = "binomial",
    .summary = "divide and conquer (dual of the scatter): representatives gather halves, then send "
               "them up",
    .source = "lecture §8.5",
    .options = "",
    .keys = NULL,
    .build = gather_binomial,
    .max_ops = star2_ops,
};

static const cs_coll_algo_t gather_flat_algo = {
    .kind = CS_COLL_GATHER,
    .name = "flat",
    .summary = "every rank sends its block to the root, one at a time",
    .source = "lecture §8.4 (dual)",
    .options = "",
    .keys = NULL,
    .build = gather_flat,
    .max_ops = star2_ops,
};

/* Listing order: gather before scatter (the order of cs_coll_kind_t), the
 * default first within each. */
const cs_coll_algo_t *const cs_coll_algos_scatter_gather[] = {
    &gather_binomial_algo, &gather_flat_algo, &scatter_binomial_algo, &scatter_flat_algo, NULL};
