/*
 * alltoall.c - every alltoall algorithm of the suite, in place as check.c
 * defines it: rank r's block j holds its data for rank j at the start and
 * rank j's data for r at the end.  Listed (and registered) in this order:
 * the pairwise exchange of the MPI libraries, Bruck's (Bruck et al. 1997)
 * and the flat post-everything.
 *
 * The program model has no local copy: Bruck's rotations and packing are
 * messages of a rank to itself (cs_coll_local_copy), which the validator
 * follows and which a machine prices as a message that crosses no link.
 */
#include "coll/coll_internal.h"

#include <stdlib.h>

/* ---- local copies ------------------------------------------------------------ */

/* Copies of equal-size blocks, merged into runs where both the sources and
 * the destinations are consecutive. */
typedef struct copies {
    int64_t *src, *dst;
    int n, cap;
} copies_t;

static void copies_add(copies_t *c, int64_t src, int64_t dst)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        c->src = cs_realloc(c->src, (size_t)c->cap * sizeof *c->src);
        c->dst = cs_realloc(c->dst, (size_t)c->cap * sizeof *c->dst);
    }
    c->src[c->n] = src;
    c->dst[c->n] = dst;
    c->n++;
}

static void copies_emit(cs_coll_builder_t *b, int r, copies_t *c, int64_t m)
{
    for (int i = 0; i < c->n;) {
        int j = i + 1;
        while (j < c->n && c->src[j] == c->src[j - 1] + m && c->dst[j] == c->dst[j - 1] + m)
            j++;
        cs_coll_local_copy(b, r, c->src[i], c->dst[i], (int64_t)(j - i) * m);
        i = j;
    }
    c->n = 0;
}

static void copies_free(copies_t *c)
{
    free(c->src);
    free(c->dst);
}

/* ---- algorithms (m = per-rank block, in place) --------------------------------- */

/* Rank r receives from every other rank r-k (k = 1..P-1, in that order) its
 * block for r, into block r-k. */
static void recv_blocks(cs_coll_builder_t *b, int r, int P, int64_t m)
{
    for (int k = 1; k < P; k++)
        cs_coll_recv_nz(b, r, mod(r - k, P), (int64_t)mod(r - k, P) * m, m, TAG_DATA);
}

/* Pairwise exchange (shift schedule): in step k = 1..P-1 rank r sends its
 * block r+k to rank r+k while rank r-k's block for r arrives.  The sends of
 * a rank go one after the other; its recvs are posted once its last send
 * is done: the alltoall is in place, and block r-k must not be overwritten
 * before it is sent in step P-k (the messages arrive in their steps all the
 * same: sends are eager).  (P-1)(alpha + beta m).  Source: generic (MPI). */
static int alltoall_pairwise(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t m = a->bytes;
    (void)err;
    if (P == 1 || m == 0)
        return CS_OK;
    for (int r = 0; r < P; r++) {
        int32_t prev = -1;
        for (int k = 1; k < P; k++) {
            int to = (r + k) % P;
            int32_t s = cs_coll_send_nz(b, r, to, (int64_t)to * m, m, TAG_DATA);
            cs_coll_dep(b, s, prev, CS_DEP_AFTER);
            prev = s;
        }
        cs_coll_wait(b, r);
        recv_blocks(b, r, P, m);
    }
    cs_coll_wait_all(b);
    return CS_OK;
}

/* Flat: every rank posts all its sends (to r+1, r+2, ...) and receives at
 * once; the ports serialise them.  (P-1)(alpha + beta m) on a complete
 * network.  Source: generic. */
static int alltoall_flat(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t m = a->bytes;
    (void)err;
    for (int r = 0; r < P; r++) {
        for (int k = 1; k < P; k++)
            cs_coll_send_nz(b, r, (r + k) % P, (int64_t)((r + k) % P) * m, m, TAG_DATA);
        recv_blocks(b, r, P, m);
    }
    cs_coll_wait_all(b);
    return CS_OK;
}

/* Bruck: slot i of rank r is first its data for rank r+i (block r+i).  In
 * round k (2^k < P) every rank sends the slots whose index has bit k set to
 * r + 2^k, packed into one message, and receives the same slots from
 * r - 2^k; afterwards slot i holds rank r-i's data for r, which belongs in
 * block r-i.  Layout: slots live in a scratch area T = [P m, 2P m) (slot i
 * at T + i m); staging areas for the packed message follow it.  Phase 1
 * copies the blocks into T (a rotation, two copies), each round packs and
 * unpacks with local copies (runs of consecutive slots merged), and the
 * last phase copies every slot home (reversed order: one copy per block).
 * Network: ceil(log2 P) messages per rank of about P/2 blocks. */
static int alltoall_bruck(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t m = a->bytes, T, S_SEND, S_RECV;
    copies_t cp = {0};
    (void)err;
    if (P == 1 || m == 0)
        return CS_OK;
    T = (int64_t)P * m;
    S_SEND = 2 * (int64_t)P * m;
    S_RECV = 3 * (int64_t)P * m;
    for (int r = 0; r < P; r++) {
        cs_coll_local_copy(b, r, (int64_t)r * m, T, (int64_t)(P - r) * m);
        cs_coll_local_copy(b, r, 0, T + (int64_t)(P - r) * m, (int64_t)r * m);
    }
    cs_coll_wait_all(b);
    for (int d = 1; d < P; d *= 2) {
        int cnt = 0;
        for (int i = 1; i < P; i++)
            cnt += (i & d) != 0;
        for (int r = 0; r < P; r++) { /* pack */
            int j = 0;
            for (int i = 1; i < P; i++)
                if (i & d)
                    copies_add(&cp, T + (int64_t)i * m, S_SEND + (int64_t)(j++) * m);
            copies_emit(b, r, &cp, m);
        }
        cs_coll_wait_all(b);
        for (int r = 0; r < P; r++) {
            cs_coll_send_nz(b, r, (r + d) % P, S_SEND, (int64_t)cnt * m, TAG_DATA);
            cs_coll_recv_nz(b, r, mod(r - d, P), S_RECV, (int64_t)cnt * m, TAG_DATA);
        }
        cs_coll_wait_all(b);
        for (int r = 0; r < P; r++) { /* unpack */
            int j = 0;
            for (int i = 1; i < P; i++)
                if (i & d)
                    copies_add(&cp, S_RECV + (int64_t)(j++) * m, T + (int64_t)i * m);
            copies_emit(b, r, &cp, m);
        }
        cs_coll_wait_all(b);
    }
    for (int r = 0; r < P; r++) { /* home: slot i -> block r - i */
        for (int i = 1; i < P; i++)
            copies_add(&cp, T + (int64_t)i * m, (int64_t)mod(r - i, P) * m);
        copies_emit(b, r, &cp, m);
    }
    cs_coll_wait_all(b);
    copies_free(&cp);
    return CS_OK;
}

/* ---- registry ------------------------------------------------------------------ */

/* Op counts (cs_coll_algo_t.max_ops): a send and a recv per ordered pair
 * of ranks, 2 P (P - 1), pairwise or flat. */
static int64_t pairs2_ops(const cs_coll_args_t *a) { return cs_coll_ops_pairs(a->P, 2); }
/* Bruck, every copy a send and a recv to itself: the rotation (two copies
 * per rank, one on rank 0); in round d a send and a recv, and a pack and an
 * unpack copy per run of slots with bit d set in [1, P) (runs start at
 * d, 3d, 5d, ... below P: ceil((P - d) / 2d) of them); P - 1 copies home
 * (the slots go home in reverse order, never merged).  Per rank
 * s = sum_d (4 runs_d + 2) + 2 (P - 1), in all P s + 2 (2 P - 1),
 * saturated. */
static int64_t bruck_ops(const cs_coll_args_t *a)
{
    int64_t P = a->P, s = 2 * (P - 1);
    if (P <= 1)
        return 0;
    for (int64_t d = 1; d < P; d *= 2)
        s += 4 * ((P - d + 2 * d - 1) / (2 * d)) + 2;
    return s > (INT64_MAX - 4 * P) / P ? INT64_MAX : P * s + 2 * (2 * P - 1);
}

static const cs_coll_algo_t a2a_pairwise = {
    CS_COLL_ALLTOALL, "pairwise",
    "pairwise exchange: in step k send block r+k to rank r+k, receive from rank r-k",
    "generic (MPI)", "", NULL, alltoall_pairwise, pairs2_ops};
static const cs_coll_algo_t a2a_bruck = {
    CS_COLL_ALLTOALL, "bruck",
    "Bruck: ceil(log2 P) rounds sending the slots with bit k set to r+2^k, packed locally",
    "generic (Bruck et al. 1997)", "", NULL, alltoall_bruck, bruck_ops};
static const cs_coll_algo_t a2a_flat = {
    CS_COLL_ALLTOALL, "flat", "every rank posts all P-1 sends and receives at once",
    "generic", "", NULL, alltoall_flat, pairs2_ops};

/* Listing order: the default first. */
const cs_coll_algo_t *const cs_coll_algos_alltoall[] = {&a2a_pairwise, &a2a_bruck, &a2a_flat, NULL};
