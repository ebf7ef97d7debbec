/*
 * allgather.c - every allgather algorithm of the suite: rank r's block
 * [r*m, (r+1)*m) reaches every rank.  Listed (and registered) in this order:
 *
 *   - the message-passing lecture (shared/papers/004, notes in
 *     shared/reference/alpha-beta.md): §8.7 the bucket (ring) allgather,
 *     §8.3 gather + broadcast; the standard MPI algorithms: recursive
 *     doubling with the extra ranks folded in (Thakur et al. 2005) and
 *     Bruck's (Bruck et al. 1997);
 *   - the Cell paper (papers/001 §3.3, reference/cell-blade.md §3.2): the
 *     hybrid-x-y all-gather;
 *   - the CNS-1 report (Müller, ICSI TR-93-082, papers/003, reference/cns1.md
 *     §5, §6.1): the directed ring forwarding chunk by chunk, and its
 *     two-way variant.
 *
 * Conventions as in broadcast.c; ranges beyond the nominal buffer are
 * scratch (Bruck's extended buffer).
 */
#include "coll/coll_internal.h"

#include <math.h>
#include <stdlib.h>

/* ---- lecture and generic MPI (m = per-rank block) ------------------------- */

/* Ring / bucket (lecture §8.7): P-1 steps over the machine's ring order,
 * each rank passes on the block it received last.  (alpha + beta m)(P-1). */
static int allgather_ring(cs_coll_builder_t *b, cs_error_t *err)
{
    cs_coll_ring_pieces_t rp;
    (void)err;
    cs_coll_ring_pieces_init(&rp, cs_coll_args(b), 1);
    cs_coll_ring_allgather(b, rp.ring, cs_coll_args(b)->P, rp.off, rp.len, TAG_DATA);
    cs_coll_ring_pieces_destroy(&rp);
    return CS_OK;
}

/* Recursive doubling: in round k virtual rank v swaps its 2^k virtual
 * ranks' blocks with v ^ 2^k.  Extra ranks hand their block in first and
 * get the whole buffer back at the end.  P a power of two:
 * alpha log2 P + beta m (P-1).  Source: generic (MPI; Thakur et al. 2005). */
static int allgather_rdb(cs_coll_builder_t *b, cs_error_t *err)
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
    /* an extra rank's block joins its partner's: no reduction, just a copy */
    for (int i = 0; i < f.e; i++) {
        int x = fold_extra(&f, i), p = fold_partner(&f, i);
        cs_coll_send_nz(b, x, p, (int64_t)x * m, m, TAG_FOLD);
        cs_coll_recv_nz(b, p, x, (int64_t)x * m, m, TAG_FOLD);
    }
    cs_coll_wait_all(b);
    /* the blocks of a range of virtual ranks: one range near, up to two far
     * (the low ranks' and their extra ranks'), sent in the same order as
     * the partner receives them */
    for (int d = 1; d < f.Pp; d *= 2) {
        for (int r = 0; r < P; r++) {
            int v = fold_virt(&f, r), pv, lo, plo, k;
            int64_t o[2], l[2];
            if (v < 0)
                continue;
            pv = v ^ d;
            lo = v & ~(d - 1);
            plo = pv & ~(d - 1);
            k = cs_coll_fold_bytes(&f, NULL, &bl, lo, lo + d, o, l);
            for (int q = 0; q < k; q++)
                cs_coll_send_nz(b, r, fold_real(&f, pv), o[q], l[q], TAG_DATA);
            k = cs_coll_fold_bytes(&f, NULL, &bl, plo, plo + d, o, l);
            for (int q = 0; q < k; q++)
                cs_coll_recv_nz(b, r, fold_real(&f, pv), o[q], l[q], TAG_DATA);
        }
        cs_coll_wait_recvs_all(b); /* the blocks sent are never written again */
    }
    cs_coll_fold_out(b, &f, 0, (int64_t)P * m);
    return CS_OK;
}

/* Bruck: in round k (2^k < P) rank r sends the c = min(2^k, P - 2^k) blocks
 * r, r+1, ... it holds to r - 2^k and receives blocks r+2^k, ... from
 * r + 2^k.  The held blocks are a cyclic window; to send it as one range the
 * rank keeps it in an extended buffer of 2P blocks (position j holds block
 * j mod P), and at the end moves blocks 0..r-1 from positions P..P+r-1
 * home with one local copy (the lecture model's free rotation).
 * alpha ceil(log2 P) + beta m (P-1), plus the copy. */
static int allgather_bruck(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t m = a->bytes;
    (void)err;
    if (P == 1 || m == 0)
        return CS_OK;
    for (int d = 1; d < P; d *= 2) {
        int c = d < P - d ? d : P - d;
        for (int r = 0; r < P; r++) {
            /* window [r, r+d) in extended positions; the new blocks go
             * right after it */
            cs_coll_send_nz(b, r, mod(r - d, P), (int64_t)r * m, (int64_t)c * m, TAG_DATA);
            cs_coll_recv_nz(b, r, (r + d) % P, (int64_t)(r + d) * m, (int64_t)c * m, TAG_DATA);
        }
        cs_coll_wait_all(b);
    }
    for (int r = 1; r < P; r++)
        cs_coll_local_copy(b, r, (int64_t)P * m, 0, (int64_t)r * m);
    cs_coll_wait_all(b);
    return CS_OK;
}

/* Gather + broadcast (lecture §8.3): binomial gather to rank 0, binomial
 * broadcast of the P*m bytes.  P a power of two: alpha log2 P + beta m (P-1)
 * for the gather, (alpha + beta m P) log2 P for the broadcast. */
static int allgather_gather_bcast(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    (void)err;
    if (a->P == 1 || a->bytes == 0)
        return CS_OK;
    cs_coll_tree_up(b, a->P, 0, 0, 0, a->bytes);
    cs_coll_tree_down(b, a->P, 0, (int64_t)a->P * a->bytes);
    return CS_OK;
}


/* ---- Cell paper §3.3 ------------------------------------------------------------ */

/* hybrid-x-y (Cell paper §3.3, reference §3.2): binomial gather in y groups,
 * rdb all-gather among their leaders, binomial broadcast in the groups (the
 * all-gather itself is shared with HybridB, see coll_internal.c). */
static int build_allgather_hybrid(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    cs_coll_blocks_t bl = {a->P, 0, a->bytes, 0};
    int y, rc;
    if ((rc = cs_coll_hybrid_shape(a, &y, err)))
        return rc;
    cs_coll_hybrid_allgather(b, &bl, y, PHASE_TAG(0));
    return CS_OK;
}

/* HybridA: binomial reduce of [0, n) inside each group, rdb all-reduce
 * among the y leaders (round j: XOR 2^j, so for P = 16, k = 2 the paper's
 * 0<->4 / 8<->12 then 0<->8 / 4<->12), binomial broadcast inside each group. */
/* ===========================================================================
 * CNS-1: directed-ring all-gather and its two-way variant (reference §5, §6.1)
 * ======================================================================== */

/* In step k every node forwards to its successor the block it received in
 * step k-1.  What makes this the paper's algorithm rather than the plain
 * bucket ring: forwarding is chunk by chunk ("message k forwards message
 * k-x"), i.e. the send of step k streams from the receive of step k-1
 * (option stream=0 waits for the whole block instead).  On a machine that
 * cuts blocks into messages (the CNS-1's vlr elements) the first chunk moves
 * on before the last has arrived; on the alpha-beta machine the two coincide.
 * Each recv is posted once the previous one has completed: a streamed send
 * starts when its recv is posted, so this keeps at most two sends per node
 * queued in the engine instead of P-1 (the data and the timing are the
 * same: the blocks come from one neighbour, in order). */
static int read_stream(const cs_coll_args_t *a, int *stream, cs_error_t *err)
{
    int64_t v;
    int rc = cs_coll_opt_int(a, "stream", 1, 0, 1, &v, err);
    *stream = (int)v;
    return rc;
}

/* Posts step k of a directed ring at ring position q: dir = 1, ring[q] sends
 * the block of ring[q-k] to its successor and receives the block of
 * ring[q-1-k] from its predecessor; dir = -1, the same the other way round.
 * Returns the send; *r gets the recv. */
static int32_t ring_post(cs_coll_builder_t *b, const int32_t *ring, int P, int q, int dir, int k,
                         int64_t m, int tag, int32_t *r)
{
    int me = ring[q], to = ring[mod(q + dir, P)], from = ring[mod(q - dir, P)];
    int out = ring[mod(q - dir * k, P)], in = ring[mod(q - dir * (k + 1), P)];
    int32_t s = cs_coll_send_nz(b, me, to, (int64_t)out * m, m, tag);
    *r = cs_coll_recv_nz(b, me, from, (int64_t)in * m, m, tag);
    return s;
}

/* Orders a forwarding step: its send s starts once `after` (the previous
 * send, if any) has started, and streams from (stream=1) or waits for (0)
 * the previous recv from the same neighbour; its recv r is posted once that
 * recv has completed. */
static void forward_after(cs_coll_builder_t *b, int32_t s, int32_t r, int32_t after,
                          int32_t prev_recv, int stream)
{
    if (after >= 0)
        cs_coll_dep(b, s, after, CS_DEP_AFTER_START);
    if (prev_recv >= 0) {
        cs_coll_dep(b, s, prev_recv, stream ? CS_DEP_STREAM : CS_DEP_AFTER);
        cs_coll_dep(b, r, prev_recv, CS_DEP_AFTER);
    }
}

/* allgather/cns-ring; source: CNS-1 TR-93-082 §4 (reference §5). */
static int build_allgather_cns_ring(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, stream, rc;
    int64_t m = a->bytes;
    int32_t *ring;
    if ((rc = read_stream(a, &stream, err)))
        return rc;
    ring = cs_malloc((size_t)P * sizeof *ring);
    cs_coll_ring(a, ring, NULL);
    for (int q = 0; q < P; q++) {
        int32_t prev_send = -1, prev_recv = -1;
        for (int k = 0; k < P - 1; k++) {
            int32_t r, s = ring_post(b, ring, P, q, 1, k, m, PHASE_TAG(0) + k, &r);
            forward_after(b, s, r, prev_send, prev_recv, stream);
            prev_send = s;
            prev_recv = r;
        }
    }
    free(ring);
    return CS_OK;
}

/* Two-way: every node sends its block to both ring neighbours, N+ first,
 * then forwards what came from N- to N+ and what came from N+ to N-.  Blocks
 * travel floor(P/2) hops in the positive and ceil(P/2)-1 hops in the
 * negative direction.  The send of negative step k starts `offset` after the
 * send of positive step k (the paper's 4ov: on the CNS-1 the receive overhead
 * of one transfer follows the send overhead of the next, 2ov + 2ov = 20
 * cycles of 8 ns); positive step k+1 follows negative step k, so a node with
 * a single send port alternates directions. */
static int build_allgather_cns_two_way(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, stream, rc, hp = P / 2, hn = (P + 1) / 2 - 1;
    int64_t m = a->bytes, ticks = 0;
    double offset = 160e-9;
    int32_t *ring;
    if ((rc = read_stream(a, &stream, err)))
        return rc;
    if (a->opts && (rc = cs_spec_get_seconds(a->opts, "offset", offset, &offset, err)))
        return rc;
    if (!(offset >= 0) || offset > 1.0)
        return cs_error_set(err, CS_ERR_RANGE,
                            "option offset=%g s: expected a duration in [0, 1 s] (default 160ns)",
                            offset);
    if (offset > 0) {
        /* calc ticks in picoseconds, converted by the executor to the machine
         * clock: the algorithm never sees the machine's tick */
        cs_program_set_time_unit(cs_coll_program(b), 1e-12);
        ticks = llround(offset / 1e-12);
    }
    if (m == 0)
        return CS_OK;
    ring = cs_malloc((size_t)P * sizeof *ring);
    cs_coll_ring(a, ring, NULL);
    for (int q = 0; q < P; q++) {
        int me = ring[q];
        int32_t last_send = -1, prev_rp = -1, prev_rn = -1;
        for (int k = 0; k < hp; k++) {
            int32_t rp, sp = ring_post(b, ring, P, q, 1, k, m, PHASE_TAG(0) + k, &rp);
            forward_after(b, sp, rp, last_send, prev_rp, stream);
            last_send = sp;
            prev_rp = rp;
            if (k < hn) {
                int32_t rn, sn = ring_post(b, ring, P, q, -1, k, m, PHASE_TAG(1) + k, &rn);
                if (ticks > 0) {
                    int32_t c = cs_coll_calc(b, me, ticks, 0);
                    cs_coll_dep(b, c, sp, CS_DEP_AFTER_START);
                    cs_coll_dep(b, sn, c, CS_DEP_AFTER);
                } else {
                    cs_coll_dep(b, sn, sp, CS_DEP_AFTER_START);
                }
                forward_after(b, sn, rn, -1, prev_rn, stream);
                last_send = sn;
                prev_rn = rn;
            }
        }
    }
    free(ring);
    return CS_OK;
}

/* ---- registry ------------------------------------------------------------------ */

/* Per dimension (ASTRA-sim's hierarchical collectives; issue 18): the first
 * dimension first, each rank's blocks growing as a consecutive range
 * (coll_internal.c, cs_coll_dims_step). */
static int allgather_multidim(cs_coll_builder_t *b, cs_error_t *err)
{
    cs_coll_dims_t g;
    int rc;
    if ((rc = cs_coll_dims_get(cs_coll_args(b), &g, err)))
        return rc;
    for (int d = 0; d < g.n; d++)
        cs_coll_dims_step(b, &g, d, 0, 1);
    return CS_OK;
}

static const char *const keys_hybrid[] = {"x", "y", NULL};
static const char *const keys_ring[] = {"stream", NULL};
static const char *const keys_two_way[] = {"stream", "offset", NULL};

/* Op counts (cs_coll_algo_t.max_ops): P - 1 steps of a send and a recv
 * per rank, 2 P (P - 1), streaming or not. */
static int64_t ring_ops(const cs_coll_args_t *a) { return cs_coll_ops_pairs(a->P, 2); }
/* rdb, near fold (the default): P = Pp + e; a send and a recv per extra
 * rank in, log2 Pp rounds of one range sent and one received per virtual
 * rank, the buffer back to each extra rank: 2 Pp log2 Pp + 4 e.  The far
 * fold sends a second range for the groups that hold an extra rank's
 * block: not stated (-1), nor for an option the build would refuse. */
static int64_t rdb_ops(const cs_coll_args_t *a)
{
    int64_t Pp = pow2_floor(a->P);
    int far;
    cs_error_t err;
    if (cs_coll_opt_fold(a, 0, &far, &err) || far)
        return -1;
    return 2 * Pp * floor_log2(Pp) + 4 * (a->P - Pp);
}
/* Bruck: ceil(log2 P) rounds of a send and a recv per rank, and one local
 * copy (a send and a recv to itself) on every rank but 0. */
static int64_t bruck_ops(const cs_coll_args_t *a)
{
    return cs_coll_ops_rounds(a->P, 2) + cs_coll_ops_star(a->P, 2);
}
/* gather-bcast: a send and a recv per rank but the root up the tree, the
 * same down. */
static int64_t gather_bcast_ops(const cs_coll_args_t *a) { return cs_coll_ops_star(a->P, 4); }

static const cs_coll_algo_t ag_ring = {
    CS_COLL_ALLGATHER, "ring",
    "bucket: P-1 steps over the ring order, each rank passes on the block it got last",
    "lecture §8.7", "", NULL, allgather_ring, ring_ops};
static const char *const keys_fold[] = {"fold", NULL};
static const cs_coll_algo_t ag_rdb = {
    CS_COLL_ALLGATHER, "rdb",
    "recursive doubling: log2 rounds swapping all blocks held; extra ranks folded in and out",
    "generic (MPI; Thakur et al. 2005)", FOLD_TEXT, keys_fold, allgather_rdb, rdb_ops};
static const cs_coll_algo_t ag_bruck = {
    CS_COLL_ALLGATHER, "bruck",
    "Bruck: ceil(log2 P) rounds, rank r sends its window of blocks to r-2^k; one local copy at "
    "the end",
    "generic (Bruck et al. 1997)", "", NULL, allgather_bruck, bruck_ops};
static const cs_coll_algo_t ag_gather_bcast = {
    CS_COLL_ALLGATHER, "gather-bcast", "binomial gather to rank 0, then binomial broadcast of P*m",
    "lecture §8.3", "", NULL, allgather_gather_bcast, gather_bcast_ops};

static const cs_coll_algo_t allgather_hybrid = {
    CS_COLL_ALLGATHER, "hybrid",
    "hybrid-x-y: binomial gather in groups, rdb all-gather among the y leaders, binomial "
    "broadcast in groups",
    "Cell paper §3.3",
    "x=switch round, y=leaders (power of two); default y=2^floor(log2 ceil(sqrt P))",
    keys_hybrid, build_allgather_hybrid, NULL};

static const cs_coll_algo_t allgather_cns_ring = {
    CS_COLL_ALLGATHER, "cns-ring",
    "directed ring in the machine's ring order; each block is forwarded chunk by chunk as it "
    "arrives (streaming)",
    "CNS-1 TR-93-082 §4 (reference §5)", "stream=1|0 (default 1)", keys_ring,
    build_allgather_cns_ring, ring_ops};

static const cs_coll_algo_t allgather_cns_two_way = {
    CS_COLL_ALLGATHER, "cns-two-way",
    "ring in both directions: floor(P/2) hops one way, ceil(P/2)-1 the other, the negative "
    "direction started `offset` after the positive",
    "CNS-1 TR-93-082 §5.2 (reference §6.1)",
    "offset=DURATION (default 160ns = 4ov on the CNS-1); stream=1|0 (default 1)", keys_two_way,
    build_allgather_cns_two_way, NULL};

static const char *const keys_multidim[] = {"dims", "inner", NULL};
static const cs_coll_algo_t ag_multidim = {
    CS_COLL_ALLGATHER, "multidim",
    "per dimension of the machine, the first first: each dimension's lines all-gather the "
    "blocks their ranks hold",
    "ASTRA-sim's hierarchical collectives (issue 18)",
    "dims=AxB... (default: the machine's dimensions hint, else one); inner=ring|direct, or one "
    "per dimension joined by + (default ring)",
    keys_multidim, allgather_multidim, NULL};

/* Listing order: the default first. */
const cs_coll_algo_t *const cs_coll_algos_allgather[] = {
    &ag_ring, &ag_rdb, &ag_bruck, &ag_gather_bcast, &allgather_hybrid, &allgather_cns_ring,
    &allgather_cns_two_way, &ag_multidim, NULL};
