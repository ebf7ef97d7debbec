/*
 * barrier.c - every barrier algorithm of the suite: no rank leaves before
 * every rank has arrived; tokens of 0 or 1 byte.  Listed (and registered)
 * in this order: dissemination (Hensgen, Finkel, Manber 1988), recursive
 * doubling with the extra ranks folded in (generic MPI), the lecture's
 * flat one-to-all (shared/papers/004 §8.4 pattern) and binomial tree (§8.1),
 * and the Cell paper's stepped mailbox barrier (papers/001 §3.2,
 * reference/cell-blade.md §3.1).
 */
#include "coll/coll_internal.h"

#include <stdlib.h>

/* ---- generic MPI and the lecture (1-byte tokens, range [0, 1)) ------------- */

/* Dissemination (Bruck): in round k rank r signals r + 2^k and waits for
 * r - 2^k.  ceil(log2 P)(alpha + beta). */
static int barrier_dissemination(cs_coll_builder_t *b, cs_error_t *err)
{
    int P = cs_coll_args(b)->P;
    (void)err;
    for (int d = 1; d < P; d *= 2) {
        for (int r = 0; r < P; r++) {
            cs_coll_send_nz(b, r, (r + d) % P, 0, 1, TAG_DATA);
            cs_coll_recv_nz(b, r, mod(r - d, P), 0, 1, TAG_DATA);
        }
        cs_coll_wait_all(b);
    }
    return CS_OK;
}

/* Recursive doubling: token exchange with v ^ 2^k, extra ranks folded in and
 * out.  P a power of two: log2 P (alpha + beta).  Source: generic (MPI). */
static int barrier_rdb(cs_coll_builder_t *b, cs_error_t *err)
{
    int P = cs_coll_args(b)->P, far, rc;
    cs_coll_fold_t f;
    if ((rc = cs_coll_opt_fold(cs_coll_args(b), 0, &far, err)))
        return rc;
    f = cs_coll_fold_rule(P, far);
    if (P == 1)
        return CS_OK;
    cs_coll_fold_in(b, &f, 0, 1, 0);
    for (int d = 1; d < f.Pp; d *= 2) {
        for (int r = 0; r < P; r++) {
            int v = fold_virt(&f, r);
            if (v < 0)
                continue;
            cs_coll_send_nz(b, r, fold_real(&f, v ^ d), 0, 1, TAG_DATA);
            cs_coll_recv_nz(b, r, fold_real(&f, v ^ d), 0, 1, TAG_DATA);
        }
        cs_coll_wait_all(b);
    }
    cs_coll_fold_out(b, &f, 0, 1);
    return CS_OK;
}

/* Flat: every rank signals rank 0, which releases them all with one
 * multicast (unicasts in turn without hardware multicast).
 * 2(P-1)(alpha + beta) on a machine without multicast.  Source: lecture §8.4 pattern. */
static int barrier_flat(cs_coll_builder_t *b, cs_error_t *err)
{
    int P = cs_coll_args(b)->P;
    int32_t *to;
    (void)err;
    if (P == 1)
        return CS_OK;
    for (int r = 1; r < P; r++) {
        cs_coll_send_nz(b, r, 0, 0, 1, TAG_UP);
        cs_coll_recv_nz(b, 0, r, 0, 1, TAG_UP);
    }
    cs_coll_wait(b, 0);
    to = cs_malloc((size_t)(P - 1) * sizeof *to);
    for (int r = 1; r < P; r++)
        to[r - 1] = r;
    cs_coll_mcast(b, 0, to, P - 1, 0, 1, TAG_DOWN);
    free(to);
    for (int r = 1; r < P; r++)
        cs_coll_recv_nz(b, r, 0, 0, 1, TAG_DOWN);
    cs_coll_wait_all(b);
    return CS_OK;
}

/* Tree: binomial gather of the tokens to rank 0, binomial release.
 * 2 ceil(log2 P)(alpha + beta).  Source: lecture §8.1 tree. */
static int barrier_tree(cs_coll_builder_t *b, cs_error_t *err)
{
    int P = cs_coll_args(b)->P;
    (void)err;
    if (P == 1)
        return CS_OK;
    cs_coll_tree_up(b, P, 0, 0, 1, 0);
    cs_coll_tree_down(b, P, 0, 1);
    return CS_OK;
}

/* ---- Cell paper §3.2 ------------------------------------------------------------ */

/* barrier/mailbox; source: Cell paper §3.2 (reference §3.1). */
static int build_barrier_mailbox(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, rc, levels = 0;
    int64_t f, tok = a->bytes;
    if ((rc = cs_coll_opt_int(a, "fanin", 4, 2, 1 << 20, &f, err)))
        return rc;
    for (int64_t span = 1; span < P; span *= f)
        levels++;
    /* up: at level l, stride st = f^l; rank r (a multiple of st*f) collects
     * from r + k*st, k = 1..f-1; the others (multiples of st) notify */
    int64_t st = 1;
    for (int l = 0; l < levels; l++, st *= f) {
        for (int64_t r = 0; r < P; r += st) {
            if (r % (st * f) == 0) {
                for (int64_t k = 1; k < f && r + k * st < P; k++)
                    cs_coll_recv_reduce(b, (int)r, (int)(r + k * st), 0, tok, PHASE_TAG(0) + l);
            } else {
                cs_coll_send(b, (int)r, (int)(r - r % (st * f)), 0, tok, PHASE_TAG(0) + l);
            }
            cs_coll_wait(b, (int)r);
        }
    }
    /* down: the same levels in reverse */
    for (int l = levels - 1; l >= 0; l--) {
        st /= f;
        for (int64_t r = 0; r < P; r += st) {
            if (r % (st * f) == 0) {
                for (int64_t k = 1; k < f && r + k * st < P; k++)
                    cs_coll_send(b, (int)r, (int)(r + k * st), 0, tok, PHASE_TAG(1) + l);
            } else {
                cs_coll_recv(b, (int)r, (int)(r - r % (st * f)), 0, tok, PHASE_TAG(1) + l);
            }
            cs_coll_wait(b, (int)r);
        }
    }
    return CS_OK;
}

/* ---- registry ------------------------------------------------------------------ */

static const char *const keys_fanin[] = {"fanin", NULL};
static const char *const keys_fold[] = {"fold", NULL};

/* Op counts (cs_coll_algo_t.max_ops): ceil(log2 P) rounds of a send and
 * a recv per rank. */
static int64_t dissemination_ops(const cs_coll_args_t *a) { return cs_coll_ops_rounds(a->P, 2); }
/* rdb: P = Pp + e; log2 Pp rounds of a send and a recv per virtual rank,
 * and a send and a recv per extra rank to fold in and again to fold out:
 * 2 Pp log2 Pp + 4 e, under either fold rule (each moves one token). */
static int64_t rdb_ops(const cs_coll_args_t *a)
{
    int64_t Pp = pow2_floor(a->P);
    return 2 * Pp * floor_log2(Pp) + 4 * (a->P - Pp);
}
/* flat: P - 1 signals sent and received at rank 0, one multicast and
 * P - 1 recvs of it: 3 (P - 1) + 1 (nothing at P = 1). */
static int64_t flat_ops(const cs_coll_args_t *a) { return a->P > 1 ? cs_coll_ops_star(a->P, 3) + 1 : 0; }
/* tree: a send and a recv per rank but the root up, the same down. */
static int64_t tree_ops(const cs_coll_args_t *a) { return cs_coll_ops_star(a->P, 4); }
/* mailbox: every rank but 0 notifies once (a send, and a recv-and-reduce:
 * a recv and a calc, tokens of any size, even 0) and is released once (a
 * send and a recv), whatever the fanin: 5 (P - 1). */
static int64_t mailbox_ops(const cs_coll_args_t *a) { return cs_coll_ops_star(a->P, 5); }

static const cs_coll_algo_t bar_dissemination = {
    CS_COLL_BARRIER, "dissemination",
    "Bruck / dissemination: ceil(log2 P) rounds, r signals r+2^k and waits for r-2^k",
    "generic (Hensgen, Finkel, Manber 1988)", "", NULL, barrier_dissemination, dissemination_ops};
static const cs_coll_algo_t bar_rdb = {
    CS_COLL_BARRIER, "rdb", "recursive doubling token exchange; extra ranks folded in and out",
    "generic (MPI)", FOLD_TEXT, keys_fold, barrier_rdb, rdb_ops};
static const cs_coll_algo_t bar_flat = {
    CS_COLL_BARRIER, "flat", "one-to-all: every rank signals rank 0, which releases everyone",
    "lecture §8.4 pattern", "", NULL, barrier_flat, flat_ops};
static const cs_coll_algo_t bar_tree = {
    CS_COLL_BARRIER, "tree", "binomial gather of tokens to rank 0, then binomial release",
    "lecture §8.1 tree", "", NULL, barrier_tree, tree_ops};

static const cs_coll_algo_t barrier_mailbox = {
    CS_COLL_BARRIER, "mailbox",
    "stepped barrier: notifications in levels of at most `fanin` per receiver, then the "
    "release in reverse",
    "Cell paper §3.2 (reference §3.1)", "fanin=F (default 4, the inbound mailbox depth)",
    keys_fanin, build_barrier_mailbox, mailbox_ops};

/* Listing order: the default first. */
const cs_coll_algo_t *const cs_coll_algos_barrier[] = {&bar_dissemination, &bar_rdb, &bar_flat,
                                                       &bar_tree, &barrier_mailbox, NULL};
