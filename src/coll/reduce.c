/*
 * reduce.c - every reduce algorithm of the suite: the ranks' vectors [0, n)
 * are added into the root's.  Listed (and registered) in this order:
 *
 *   - the message-passing lecture (shared/papers/004, notes in
 *     shared/reference/alpha-beta.md): §8.1 the bit-fixing (binomial) tree
 *     with the patch for P not a power of two, the flat all-to-one; the
 *     standard MPI pipelines (chain, k chains, segmented binomial tree) and
 *     Rabenseifner's reduce-scatter + gather;
 *   - the Cerebras thesis (papers/000, reference/cerebras-wse.md §2-§3)
 *     Ch. 5-6: scalar, chain, tree, two-phase, the optimal pre-order tree,
 *     left-right, ring, jump and the 2D patterns, all of them reduction
 *     trees emitted by visit.c;
 *   - the Cell paper (papers/001 §3.2, reference/cell-blade.md §2.3): the
 *     mailbox reduce.
 *
 * Conventions as in broadcast.c: any P, size and root; zero-length messages
 * skipped on both sides; segments of the pipelines are their own messages
 * (tag = segment index), forwarded once reduced.
 */
#include "coll/coll_internal.h"

#include <stdlib.h>

/* Tags of Rabenseifner's reduce (TAG_DATA = 0 for the single-phase ones). */
enum {
    RAB_FOLD = 3,   /* folding the extra ranks */
    RAB_HALVE = 4,  /* recursive halving */
    RAB_GATHER = 5  /* binomial gather */
};

/* ---- lecture and generic MPI ------------------------------------------------ */

/* The lecture's bit-fixing reduce (§8.1) on root-relative ranks, each of the
 * S segments its own message: for bitmask = 1, 2, 4, ...: a rank with the
 * bit set sends to rank ^ bitmask and drops out; otherwise, if the partner
 * exists (< P: the patch for P not a power of two), it receives and adds.
 * Segment s goes to the parent once the children's segments s are reduced. */
static void reduce_tree(cs_coll_builder_t *b, int64_t seg, int64_t S)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, L = cs_coll_ceil_log2(P);
    int32_t *calcs = cs_calloc((size_t)L + 1, sizeof *calcs);
    for (int rel = 0; rel < P; rel++) {
        int me = real_rank(rel, a->root, P), top = rel ? lowbit(rel) : 1 << L;
        for (int64_t s = 0; s < S; s++) {
            int64_t off, len;
            int nc = 0;
            cs_coll_seg_range(a->bytes, seg, s, &off, &len);
            for (int mask = 1; mask < top && rel + mask < P; mask <<= 1)
                calcs[nc++] = cs_coll_recv_reduce_nz(b, me, real_rank(rel + mask, a->root, P), off,
                                                     len, (int)s);
            if (rel) {
                int32_t op =
                    cs_coll_send_nz(b, me, real_rank(rel - top, a->root, P), off, len, (int)s);
                for (int c = 0; c < nc; c++)
                    cs_coll_dep(b, op, calcs[c], CS_DEP_AFTER);
            }
        }
    }
    free(calcs);
}

/* reduce/binomial; source: lecture §8.1. */
static int reduce_binomial(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    reduce_tree(b, a->bytes > 0 ? a->bytes : 1, 1);
    return CS_OK;
}

/* reduce/segmented-binomial; source: generic (MPI). */
static int reduce_segmented_binomial(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t seg, S;
    int rc;
    if ((rc = cs_coll_opt_seg(a, &seg, err)) || (rc = cs_coll_nsegs(a, seg, &S, err)))
        return rc;
    reduce_tree(b, seg, S);
    return CS_OK;
}

/* All send to the root, which receives and reduces in rank order (after
 * the root); its receive port serialises the messages.
 * Source: generic (all-to-one, dual of the flat broadcast). */
static int reduce_flat(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    for (int i = 1; i < a->P; i++) {
        int src = real_rank(i, a->root, a->P);
        cs_coll_send_nz(b, src, a->root, 0, a->bytes, TAG_DATA);
        cs_coll_recv_reduce_nz(b, a->root, src, 0, a->bytes, TAG_DATA);
        cs_coll_wait(b, a->root);
    }
    return CS_OK;
}

/* The chains of bcast_chains run backwards: the last rank of each chain
 * sends segment s to its predecessor, which reduces it into its own and
 * passes it on; the root receives every chain head's segment s. */
static void reduce_chains(cs_coll_builder_t *b, int k, int64_t seg, int64_t S)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int32_t *seq = cs_coll_chain_order(a);
    if (k > P - 1)
        k = P - 1;
    for (int64_t s = 0; s < S; s++) {
        int64_t off, len;
        cs_coll_seg_range(a->bytes, seg, s, &off, &len);
        for (int j = 0; j < k; j++) {
            int64_t first, cnt;
            cs_coll_split(P - 1, k, j, &first, &cnt);
            int32_t reduced = -1; /* the calc that completes segment s at `me` */
            for (int64_t q = cnt - 1; q >= 0; q--) {
                int me = seq[1 + first + q], to = q ? seq[first + q] : a->root;
                int32_t op = cs_coll_send_nz(b, me, to, off, len, (int)s);
                cs_coll_dep(b, op, reduced, CS_DEP_AFTER);
                reduced = cs_coll_recv_reduce_nz(b, to, me, off, len, (int)s);
            }
        }
    }
    free(seq);
}

/* reduce/chain; source: generic (MPI). */
static int reduce_chain(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t seg, S;
    int rc;
    if ((rc = cs_coll_opt_seg(a, &seg, err)) || (rc = cs_coll_nsegs(a, seg, &S, err)))
        return rc;
    reduce_chains(b, 1, seg, S);
    return CS_OK;
}

/* reduce/kchain; source: generic (MPI). */
static int reduce_kchain(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t seg, S, k;
    int rc;
    if ((rc = cs_coll_opt_k(a, &k, err)) || (rc = cs_coll_opt_seg(a, &seg, err)) ||
        (rc = cs_coll_nsegs(a, seg, &S, err)))
        return rc;
    reduce_chains(b, (int)k, seg, S);
    return CS_OK;
}

/* Rabenseifner's reduce: reduce-scatter by recursive halving, then a
 * binomial gather of the reduced pieces to the root.  With P' the largest
 * power of two <= P and r = P - P', the first 2r root-relative ranks fold
 * first: each odd one sends its whole vector to the even one below, which
 * reduces it, and drops out.  The P' survivors get new ranks (even rel < 2r
 * -> rel/2, rel >= 2r -> rel - r; the root is new rank 0: the fold of
 * coll_internal.h over root-relative ranks) and work on the vector split
 * into P' pieces by cs_coll_split.  With fold=far root-relative rank P' + i
 * folds onto i instead (the pieces are per survivor, so nothing else
 * changes).  Source: Rabenseifner (generic MPI), the lecture's §8.9
 * pattern. */
static int reduce_rabenseifner(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, root = a->root, far, rc;
    cs_coll_fold_t f;
    int Pp;
    int64_t *poff;
    if ((rc = cs_coll_opt_fold(a, 0, &far, err)))
        return rc;
    f = cs_coll_fold_rule(P, far);
    Pp = f.Pp;
    if (P == 1)
        return CS_OK;

    for (int i = 0; i < f.e; i++) {
        int x = real_rank(fold_extra(&f, i), root, P), p = real_rank(fold_partner(&f, i), root, P);
        cs_coll_send_nz(b, x, p, 0, a->bytes, RAB_FOLD);
        cs_coll_recv_reduce_nz(b, p, x, 0, a->bytes, RAB_FOLD);
        cs_coll_wait(b, p);
    }

    poff = cs_coll_piece_bounds(Pp, -1, a->bytes);
    /* recursive halving: at distance d the partner is j ^ d; the lower new
     * rank keeps the lower half of the current piece range */
    for (int j = 0; j < Pp; j++) {
        int me = real_rank(fold_real(&f, j), root, P), lo = 0;
        for (int d = Pp / 2; d >= 1; d /= 2) {
            int partner = real_rank(fold_real(&f, j ^ d), root, P);
            int keep = (j & d) ? lo + d : lo, give = (j & d) ? lo : lo + d;
            cs_coll_send_nz(b, me, partner, poff[give], poff[give + d] - poff[give], RAB_HALVE);
            cs_coll_recv_reduce_nz(b, me, partner, poff[keep], poff[keep + d] - poff[keep],
                                   RAB_HALVE);
            cs_coll_wait(b, me);
            lo = keep;
        }
    }
    /* binomial gather: new rank j holds pieces [j, j + lowbit(j)) when it
     * sends them to j - lowbit(j); new rank 0 (the root) ends with all */
    for (int j = 0; j < Pp; j++) {
        int me = real_rank(fold_real(&f, j), root, P);
        for (int mask = 1; mask < Pp; mask <<= 1) {
            if (j & mask) {
                int to = real_rank(fold_real(&f, j - mask), root, P);
                cs_coll_send_nz(b, me, to, poff[j], poff[j + mask] - poff[j], RAB_GATHER);
                break;
            }
            /* j has no bit below `mask`: its child j + mask brings pieces
             * [j + mask, j + 2 mask); wait before the next step so that
             * everything received goes up in one message */
            int from = real_rank(fold_real(&f, j + mask), root, P);
            cs_coll_recv_nz(b, me, from, poff[j + mask], poff[j + 2 * mask] - poff[j + mask],
                            RAB_GATHER);
            cs_coll_wait(b, me);
        }
    }
    free(poff);
    return CS_OK;
}

/* ---- Cerebras thesis Ch. 5-6 ----------------------------------------------- */

/* Reduce to args->root with pattern `pat`. */
static int reduce_1d(cs_coll_builder_t *b, cs_coll_pattern_t pat, unsigned what, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    cs_coll_visit_cfg_t o;
    cs_coll_rtree_t t;
    int rc;
    if ((rc = cs_coll_visit_cfg(a, what, pat, &o, err)))
        return rc;
    if (a->P == 1 || a->bytes == 0)
        return CS_OK;
    cs_coll_rtree_init(&t, a->P);
    rc = cs_coll_rtree_1d(&t, a, a->root, pat, &o.c, err);
    if (!rc)
        cs_coll_emit_forest(b, &t, a->bytes, o.stream, THESIS_REDUCE, NULL);
    cs_coll_rtree_destroy(&t);
    return rc;
}

/* reduce/scalar; source: Cerebras thesis §5.1 (Lemma 5.1). */
static int build_scalar(cs_coll_builder_t *b, cs_error_t *e)
{
    return reduce_1d(b, PAT_SCALAR, 0, e);
}
/* reduce/thesis-chain; source: Cerebras thesis §5.2 (Lemma 5.2). */
static int build_chain(cs_coll_builder_t *b, cs_error_t *e)
{
    return reduce_1d(b, PAT_CHAIN, 0, e);
}
/* reduce/tree; source: Cerebras thesis §5.3 (Lemmas 5.3-5.4, Cor. 5.5). */
static int build_tree(cs_coll_builder_t *b, cs_error_t *e) { return reduce_1d(b, PAT_TREE, 0, e); }
/* reduce/two-phase; source: Cerebras thesis §5.4 (Lemmas 5.6-5.8). */
static int build_two_phase(cs_coll_builder_t *b, cs_error_t *e)
{
    return reduce_1d(b, PAT_TWO_PHASE, 0, e);
}
/* reduce/preorder; source: Cerebras thesis §5.5 (Lemma 5.9). */
static int build_preorder(cs_coll_builder_t *b, cs_error_t *e)
{
    return reduce_1d(b, PAT_PREORDER, 0, e);
}
/* reduce/left-right; source: Cerebras thesis §6.1 (Lemmas 6.1-6.2). */
static int build_left_right(cs_coll_builder_t *b, cs_error_t *e)
{
    return reduce_1d(b, PAT_LEFT_RIGHT, VISIT_BASE, e);
}
/* reduce/ring; source: Cerebras thesis §6.2 (Lemma 6.3). */
static int build_ring(cs_coll_builder_t *b, cs_error_t *e) { return reduce_1d(b, PAT_RING, 0, e); }
/* reduce/jump; source: Cerebras thesis §6.3 (Lemma 6.4). */
static int build_jump(cs_coll_builder_t *b, cs_error_t *e)
{
    return reduce_1d(b, PAT_JUMP, VISIT_BASE, e);
}

static int reduce_2d(cs_coll_builder_t *b, cs_coll_pattern_t base, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int rc, rows, cols;
    cs_coll_visit_cfg_t o;
    cs_coll_rtree_t t;
    if ((rc = cs_coll_visit_cfg(a, 0, base, &o, err)))
        return rc;
    if (a->P == 1 || a->bytes == 0)
        return CS_OK;
    cs_coll_grid(a, &rows, &cols);
    cs_coll_rtree_init(&t, a->P);
    cs_coll_rtree_2d(&t, rows, cols, a->root, &o.c);
    cs_coll_emit_forest(b, &t, a->bytes, o.stream, THESIS_REDUCE, NULL);
    cs_coll_rtree_destroy(&t);
    return CS_OK;
}

/* reduce/2d-chain; source: Cerebras thesis §6.4. */
static int build_2d_chain(cs_coll_builder_t *b, cs_error_t *e)
{
    return reduce_2d(b, PAT_CHAIN, e);
}
/* reduce/2d-tree; source: Cerebras thesis §6.4. */
static int build_2d_tree(cs_coll_builder_t *b, cs_error_t *e) { return reduce_2d(b, PAT_TREE, e); }
/* reduce/2d-two-phase; source: Cerebras thesis §6.4. */
static int build_2d_two_phase(cs_coll_builder_t *b, cs_error_t *e)
{
    return reduce_2d(b, PAT_TWO_PHASE, e);
}

/* ---- Cell paper §3.2 ----------------------------------------------------------- */

/* Cell paper §3.2 (reference §2.3), the mailbox reduce: binomial reduce (the
 * reverse of Fig. 7: in round j, relative index i with
 * lowest set bit 2^j sends to i - 2^j) with a barrier of all ranks after
 * every `every` rounds: the mailbox variant needs one after each round so
 * that no two senders interleave the halves of their 64-bit addresses. */
static int build_reduce_mailbox(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, L = cs_coll_ceil_log2(P), every, rc;
    int32_t *all;
    if ((rc = cs_coll_opt_every(a, 1, &every, err)))
        return rc;
    if (a->bytes == 0) /* nothing to reduce: no rounds, no barriers */
        return CS_OK;
    all = cs_coll_ranks_from(P, a->root);
    for (int j = 0; j < L; j++) {
        int d = 1 << j;
        for (int i = 0; i < P; i++) {
            if (lowbit(i) == d)
                cs_coll_send_nz(b, all[i], all[i - d], 0, a->bytes, PHASE_TAG(0) + j);
            else if (i % (2 * d) == 0 && i + d < P)
                cs_coll_recv_reduce_nz(b, all[i], all[i + d], 0, a->bytes, PHASE_TAG(0) + j);
            cs_coll_wait(b, all[i]);
        }
        if ((j + 1) % every == 0)
            cs_coll_barrier_among(b, all, P, PHASE_TAG(1) + BARRIER_TAG(j, 0));
    }
    free(all);
    return CS_OK;
}

/* The mailbox barrier "in steps": the naive all-to-SPE-0 barrier overflows
 * a 4-entry inbound mailbox, so the ranks notify in levels of at most
 * `fanin` (level 0: groups of fanin consecutive ranks notify their first;
 * level 1: groups of fanin of those, ...), then the release runs the levels
 * backwards.  The paper's figure is lost; this is reference §3.1's reading
 * ({1,2,3}->0, {5,6,7}->4, 4->0 for 8 SPEs).  The tokens carry [0, bytes)
 * reduced on the way up and copied on the way down, so the barrier is also
 * an exact all-reduce of its token. */
/* ---- registry ------------------------------------------------------------------ */

static const char *const keys_seg[] = {"seg", NULL};
static const char *const keys_kseg[] = {"k", "seg", NULL};
static const char *const k_stream[] = {"stream", NULL};
static const char *const k_two_phase[] = {"S", "stream", NULL};
static const char *const k_preorder[] = {"TR", "stream", NULL};
static const char *const k_based[] = {"base", "S", "TR", "stream", NULL};
static const char *const keys_every[] = {"every", NULL};

/* Op counts (cs_coll_algo_t.max_ops): a send, a recv and a calc per rank
 * but the root, 3 (P - 1), binomial or flat. */
static int64_t star3_ops(const cs_coll_args_t *a) { return cs_coll_ops_star(a->P, 3); }

static const cs_coll_algo_t reduce_binomial_algo = {
    .kind = CS_COLL_REDUCE,
    .name = "binomial",
    .summary = "bit-fixing tree, senders drop out, partner >= P skipped: ceil(log2 P) rounds",
    .source = "lecture §8.1",
    .options = "",
    .keys = NULL,
    .build = reduce_binomial,
    .max_ops = star3_ops,
};

static const cs_coll_algo_t reduce_flat_algo = {
    .kind = CS_COLL_REDUCE,
    .name = "flat",
    .summary = "all send to the root, which reduces them in order",
    .source = "generic (all-to-one, dual of the flat broadcast)",
    .options = "",
    .keys = NULL,
    .build = reduce_flat,
    .max_ops = star3_ops,
};

static const cs_coll_algo_t reduce_chain_algo = {
    .kind = CS_COLL_REDUCE,
    .name = "chain",
    .summary = "pipelined reverse chain in ring order: receive segment, add, pass on",
    .source = "generic (MPI)",
    .options = SEG_TEXT,
    .keys = keys_seg,
    .build = reduce_chain,
};

static const cs_coll_algo_t reduce_kchain_algo = {
    .kind = CS_COLL_REDUCE,
    .name = "kchain",
    .summary = "k pipelined reverse chains ending at the root",
    .source = "generic (MPI)",
    .options = K_TEXT "; " SEG_TEXT,
    .keys = keys_kseg,
    .build = reduce_kchain,
};

static const char *const keys_fold[] = {"fold", NULL};
static const cs_coll_algo_t reduce_rabenseifner_algo = {
    .kind = CS_COLL_REDUCE,
    .name = "rabenseifner",
    .summary = "reduce-scatter by recursive halving, then binomial gather to the root",
    .source = "Rabenseifner (generic); lecture §8.9 pattern",
    .options = FOLD_TEXT " (over root-relative ranks)",
    .keys = keys_fold,
    .build = reduce_rabenseifner,
};

static const cs_coll_algo_t reduce_segbin_algo = {
    .kind = CS_COLL_REDUCE,
    .name = "segmented-binomial",
    .summary = "bit-fixing tree pipelined in segments (segment s goes up once reduced)",
    .source = "generic (MPI)",
    .options = SEG_TEXT,
    .keys = keys_seg,
    .build = reduce_segmented_binomial,
};

static const cs_coll_algo_t a_scalar = {
    CS_COLL_REDUCE, "scalar",
    "every rank sends its vector straight to the root, which takes them nearest first",
    "Cerebras thesis §5.1 (Lemma 5.1)", STREAM_OPT, k_stream, build_scalar, NULL};
static const cs_coll_algo_t a_chain = {
    CS_COLL_REDUCE, "thesis-chain",
    "pipelined chain toward the root: receive from the right, add, send left",
    "Cerebras thesis §5.2 (Lemma 5.2)", STREAM_OPT, k_stream, build_chain, NULL};
static const cs_coll_algo_t a_tree = {
    CS_COLL_REDUCE, "tree",
    "binary tree: rank i takes i+1, i+2, i+4, ... nearest first and streams the last one on",
    "Cerebras thesis §5.3 (Lemmas 5.3-5.4, Cor. 5.5)", STREAM_OPT, k_stream, build_tree, NULL};
static const cs_coll_algo_t a_two_phase = {
    CS_COLL_REDUCE, "two-phase",
    "chains inside groups of S ranks (assigned from the end), then a chain over the leaders",
    "Cerebras thesis §5.4 (Lemmas 5.6-5.8)",
    "S=GROUP (default ceil(sqrt P)); " STREAM_OPT, k_two_phase, build_two_phase, NULL};
static const cs_coll_algo_t a_preorder = {
    CS_COLL_REDUCE, "preorder",
    "the optimal pre-order tree of the thesis's cycle model (B = bytes/4 elements)",
    "Cerebras thesis §5.5 (Lemma 5.9)",
    "TR=CYCLES ramp latency of the model (default 2); " STREAM_OPT, k_preorder, build_preorder,
    NULL};
static const cs_coll_algo_t a_left_right = {
    CS_COLL_REDUCE, "left-right",
    "each side of the root reduces toward it with a base pattern; the root's smaller side first",
    "Cerebras thesis §6.1 (Lemmas 6.1-6.2)", BASE_OPT STREAM_OPT, k_based, build_left_right, NULL};
static const cs_coll_algo_t a_ring = {
    CS_COLL_REDUCE, "ring",
    "chain along the even/odd ring 0,2,4,...,5,3,1 (or the machine's alternative ring) to the root",
    "Cerebras thesis §6.2 (Lemma 6.3)", STREAM_OPT, k_stream, build_ring, NULL};
static const cs_coll_algo_t a_jump = {
    CS_COLL_REDUCE, "jump",
    "all ranks but the root reduce to the end nearer the root, which streams on to the root",
    "Cerebras thesis §6.3 (Lemma 6.4)", BASE_OPT STREAM_OPT, k_based, build_jump, NULL};
static const cs_coll_algo_t a_2d_chain = {
    CS_COLL_REDUCE, "2d-chain", "chain down every column to the root's row, then along that row",
    "Cerebras thesis §6.4", STREAM_OPT, k_stream, build_2d_chain, NULL};
static const cs_coll_algo_t a_2d_tree = {
    CS_COLL_REDUCE, "2d-tree", "tree pattern on every column, then on the root's row",
    "Cerebras thesis §6.4", STREAM_OPT, k_stream, build_2d_tree, NULL};
static const cs_coll_algo_t a_2d_two_phase = {
    CS_COLL_REDUCE, "2d-two-phase", "two-phase pattern on every column, then on the root's row",
    "Cerebras thesis §6.4",
    "S=GROUP (default ceil(sqrt) of the column / row length); " STREAM_OPT, k_two_phase,
    build_2d_two_phase, NULL};
static const cs_coll_algo_t reduce_mailbox = {
    CS_COLL_REDUCE, "mailbox",
    "binomial reduce with a barrier of all ranks after every round (the mailbox variant's "
    "schedule)",
    "Cell paper §3.2", "every=N rounds between barriers (default 1)", keys_every,
    build_reduce_mailbox, NULL};

/* Listing order: the default first. */
const cs_coll_algo_t *const cs_coll_algos_reduce[] = {
    &reduce_binomial_algo, &reduce_flat_algo, &reduce_chain_algo, &reduce_kchain_algo,
    &reduce_rabenseifner_algo, &reduce_segbin_algo, &a_scalar, &a_chain, &a_tree,
    &a_two_phase, &a_preorder, &a_left_right, &a_ring, &a_jump, &a_2d_chain, &a_2d_tree,
    &a_2d_two_phase, &reduce_mailbox, NULL};
