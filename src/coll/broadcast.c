/*
 * broadcast.c - every broadcast algorithm of the suite: the root's vector
 * [0, n) reaches every rank.  Listed (and registered) in this order:
 *
 *   - the message-passing lecture (shared/papers/004, notes in
 *     shared/reference/alpha-beta.md): §8.1 the binomial tree (the dual of
 *     the bit-fixing reduce), the flat one-to-all, §8.8 van de Geijn's
 *     scatter + allgather; and the standard MPI pipelines: chain, k chains,
 *     segmented binomial tree;
 *   - the Cerebras thesis (papers/000) Ch. 4: one multicast;
 *   - the Cell paper (papers/001 §3.4, reference/cell-blade.md §2.4, §3.3):
 *     the opt and simple trees, two-to-all, the segmented binomial tree
 *     (two-phase) and its hybrid across the chips.
 *
 * Conventions (every algorithm of the suite): any P >= 1 (P = 1 emits
 * nothing), any size >= 0, any root; zero-length messages are skipped on
 * both sides (the fluid engine cannot complete a 0-byte message, and
 * skipping keeps both modes equal); data stays at its natural offset, so a
 * message always carries one contiguous range.  Pipelined algorithms send
 * each segment of `seg` bytes (default: the machine's packet size) as its
 * own message, tag = segment index, and a rank forwards segment s as soon as
 * it holds it: explicit per-op dependencies, no waitall.
 */
#include "coll/coll_internal.h"

#include <stdlib.h>
#include <string.h>

/* Tags of scatter-allgather (TAG_DATA = 0 for the single-phase ones). */
enum {
    SAG_SCATTER = 1, /* scatter phase */
    SAG_RING = 2     /* ring allgather phase */
};

/* ---- lecture and generic MPI ------------------------------------------------ */

/* Binomial tree on root-relative ranks, each of the S segments sent as its
 * own message: rel receives from rel - lowbit(rel) and sends to rel + mask
 * for every mask below lowbit(rel) (the root: below 2^ceil(log2 P)),
 * farthest child first, segment by segment.  S = 1 is the plain binomial
 * broadcast, the dual of the lecture's §8.1 reduce. */
static void bcast_tree(cs_coll_builder_t *b, int64_t seg, int64_t S)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, L = cs_coll_ceil_log2(P);
    for (int rel = 0; rel < P; rel++) {
        int me = real_rank(rel, a->root, P), top = rel ? lowbit(rel) : 1 << L;
        for (int64_t s = 0; s < S; s++) {
            int64_t off, len;
            int32_t r = -1;
            cs_coll_seg_range(a->bytes, seg, s, &off, &len);
            if (rel)
                r = cs_coll_recv_nz(b, me, real_rank(rel - top, a->root, P), off, len, (int)s);
            for (int mask = top >> 1; mask > 0; mask >>= 1) {
                if (rel + mask >= P)
                    continue;
                int32_t op =
                    cs_coll_send_nz(b, me, real_rank(rel + mask, a->root, P), off, len, (int)s);
                cs_coll_dep(b, op, r, CS_DEP_AFTER);
            }
        }
    }
}

/* broadcast/binomial; source: lecture §8.1 (dual of the tree reduce). */
static int bcast_binomial(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    bcast_tree(b, a->bytes > 0 ? a->bytes : 1, 1);
    return CS_OK;
}

/* broadcast/segmented-binomial; source: generic (MPI). */
static int bcast_segmented_binomial(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t seg, S;
    int rc;
    if ((rc = cs_coll_opt_seg(a, &seg, err)) || (rc = cs_coll_nsegs(a, seg, &S, err)))
        return rc;
    bcast_tree(b, seg, S);
    return CS_OK;
}

/* One-to-all: the root sends the vector to every rank in turn; its send
 * port serialises them.  Source: lecture rule 3 (one send at a time), as in §8.4. */
static int bcast_flat(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    for (int i = 1; i < a->P; i++)
        cs_coll_xfer(b, a->root, real_rank(i, a->root, a->P), 0, a->bytes, TAG_DATA, NULL);
    return CS_OK;
}

/* k pipelined chains from the root over the ring order: the P-1 other
 * ranks, in ring order after the root, are cut into k contiguous chains
 * (the first (P-1) mod k one rank longer).  For each segment the root sends
 * to the k chain heads in turn; every rank forwards segment s to its
 * successor once it has received it. */
static void bcast_chains(cs_coll_builder_t *b, int k, int64_t seg, int64_t S)
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
            int prev = a->root;
            int32_t prev_recv = -1;
            for (int64_t q = 0; q < cnt; q++) {
                int me = seq[1 + first + q];
                int32_t r, op = cs_coll_xfer(b, prev, me, off, len, (int)s, &r);
                cs_coll_dep(b, op, prev_recv, CS_DEP_AFTER);
                prev = me;
                prev_recv = r;
            }
        }
    }
    free(seq);
}

/* broadcast/chain; source: generic (MPI). */
static int bcast_chain(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t seg, S;
    int rc;
    if ((rc = cs_coll_opt_seg(a, &seg, err)) || (rc = cs_coll_nsegs(a, seg, &S, err)))
        return rc;
    bcast_chains(b, 1, seg, S);
    return CS_OK;
}

/* broadcast/kchain; source: generic (MPI). */
static int bcast_kchain(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t seg, S, k;
    int rc;
    if ((rc = cs_coll_opt_k(a, &k, err)) || (rc = cs_coll_opt_seg(a, &seg, err)) ||
        (rc = cs_coll_nsegs(a, seg, &S, err)))
        return rc;
    bcast_chains(b, (int)k, seg, S);
    return CS_OK;
}

/* Ring (bucket) allgather of the P pieces [boff[i], boff[i+1]) over the
 * machine's ring order: at step t the rank at ring position p sends the
 * piece of ring[p - t] to its successor and receives the piece of
 * ring[p - 1 - t] from its predecessor; waitall between steps (lecture
 * §8.7). */
static void ring_allgather(cs_coll_builder_t *b, const int64_t *boff)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int32_t *ring = cs_calloc((size_t)P, sizeof *ring);
    cs_coll_ring(a, ring, NULL);
    for (int t = 0; t < P - 1; t++) {
        for (int p = 0; p < P; p++) {
            int me = ring[p], next = ring[(p + 1) % P], piece = ring[(p - t + P) % P];
            cs_coll_xfer(b, me, next, boff[piece], boff[piece + 1] - boff[piece], SAG_RING, NULL);
        }
        cs_coll_wait_all(b);
    }
    free(ring);
}

/* van de Geijn's broadcast (lecture §8.8): divide-and-conquer scatter of the
 * P pieces of the vector (piece i to rank i), then a ring allgather. */
static int bcast_scatter_allgather(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t *boff;
    if (a->P == 1)
        return CS_OK;
    boff = cs_coll_piece_bounds(a->P, -1, a->bytes);
    cs_coll_dc_scatter(b, boff, 0, a->P, a->root, SAG_SCATTER);
    cs_coll_wait_all(b);
    ring_allgather(b, boff);
    free(boff);
    return CS_OK;
}

/* ---- Cerebras thesis -------------------------------------------------------- */

/* Ch. 4: the root injects the vector once; every router passes it on and
 * copies it to its PE (1D, Lemma 4.1), or along the root's row and down
 * every column (2D, §4.2).  Both are one multicast in the program model: the
 * routing tree is the machine's (dimension-order routes from the root form
 * exactly the row-then-columns tree). */
static int build_bcast(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    (void)err;
    if (a->P == 1 || a->bytes == 0)
        return CS_OK;
    int32_t *all = cs_coll_ranks_from(a->P, 0);
    cs_coll_emit_mcast(b, NULL, a->root, all, a->P, a->bytes, THESIS_BCAST, 0, -1);
    free(all);
    return CS_OK;
}

/* ---- explicit trees for the Cell broadcasts ---------------------------------
 * A tree over ranks, built parent-first; its children lists are sorted by
 * decreasing subtree size (ties keep insertion order), which is the order
 * the Cell paper's "opt" broadcasts serve them in. */
typedef struct tree {
    int P, n;
    int32_t *parent; /* -1: root or not in the tree */
    int32_t *in;     /* 1 if in the tree */
    int32_t *order;  /* ranks in insertion order */
    int32_t *size;   /* subtree sizes */
    int32_t *cstart; /* children of r: clist[cstart[r] .. cstart[r+1]) */
    int32_t *clist;
} tree_t;

static void tree_init(tree_t *t, int P)
{
    memset(t, 0, sizeof *t);
    t->P = P;
    t->parent = cs_malloc((size_t)P * sizeof *t->parent);
    t->in = cs_calloc((size_t)P, sizeof *t->in);
    t->order = cs_malloc((size_t)P * sizeof *t->order);
    t->size = cs_calloc((size_t)P, sizeof *t->size);
    t->cstart = cs_calloc((size_t)P + 1, sizeof *t->cstart);
    t->clist = cs_malloc((size_t)P * sizeof *t->clist);
    for (int r = 0; r < P; r++)
        t->parent[r] = -1;
}

static void tree_destroy(tree_t *t)
{
    free(t->parent);
    free(t->in);
    free(t->order);
    free(t->size);
    free(t->cstart);
    free(t->clist);
}

static void tree_add(tree_t *t, int r, int parent)
{
    CS_ASSERT(!t->in[r] && t->n < t->P);
    t->in[r] = 1;
    t->parent[r] = parent;
    t->order[t->n++] = r;
}

/* The binomial tree of the Cell paper's Fig. 7 over list[0..cnt): in round
 * t, index i < 2^t sends to i + 2^t, so the parent of i is i - pow2_floor(i).
 * list[0] must already be in the tree. */
static void tree_add_doubling(tree_t *t, const int32_t *list, int cnt)
{
    for (int i = 1; i < cnt; i++)
        tree_add(t, list[i], list[i - pow2_floor(i)]);
}

static void tree_finish(tree_t *t)
{
    int32_t *fill = cs_calloc((size_t)t->P + 1, sizeof *fill);
    for (int k = t->n - 1; k >= 0; k--) {
        int r = t->order[k];
        t->size[r] += 1;
        if (t->parent[r] >= 0)
            t->size[t->parent[r]] += t->size[r];
    }
    for (int k = 0; k < t->n; k++)
        if (t->parent[t->order[k]] >= 0)
            t->cstart[t->parent[t->order[k]] + 1]++;
    for (int r = 0; r < t->P; r++)
        t->cstart[r + 1] += t->cstart[r];
    for (int k = 0; k < t->n; k++) {
        int r = t->order[k], p = t->parent[r];
        if (p >= 0)
            t->clist[t->cstart[p] + fill[p]++] = r;
    }
    /* stable insertion sort by decreasing subtree size (lists are short) */
    for (int r = 0; r < t->P; r++) {
        int32_t *c = t->clist + t->cstart[r];
        int nc = t->cstart[r + 1] - t->cstart[r];
        for (int i = 1; i < nc; i++) {
            int32_t x = c[i];
            int j = i - 1;
            while (j >= 0 && t->size[c[j]] < t->size[x]) {
                c[j + 1] = c[j];
                j--;
            }
            c[j + 1] = x;
        }
    }
    free(fill);
}

/* Broadcasts [off, off+len) down the tree.  opt: a parent waits for the
 * transfer to a child to complete before serving a child with a smaller
 * subtree (the Cell paper's ACK wait, so the biggest subtree never waits
 * behind a small one); children with equal subtree sizes are served
 * together.  !opt ("simple"): all children are served at once. */
static void emit_tree_bcast(cs_coll_builder_t *b, const tree_t *t, int64_t off, int64_t len,
                            int tag, int opt)
{
    for (int k = 0; k < t->n; k++) {
        int r = t->order[k];
        const int32_t *c = t->clist + t->cstart[r];
        int nc = t->cstart[r + 1] - t->cstart[r];
        if (t->parent[r] >= 0) {
            cs_coll_recv_nz(b, r, t->parent[r], off, len, tag);
            cs_coll_wait(b, r);
        }
        for (int i = 0; i < nc; i++) {
            cs_coll_send_nz(b, r, c[i], off, len, tag);
            if (opt && i + 1 < nc && t->size[c[i + 1]] < t->size[c[i]])
                cs_coll_wait(b, r);
        }
        cs_coll_wait(b, r);
    }
}

/* ===========================================================================
 * Cell: broadcasts (paper §3.4, reference §2.4 and §3.3)
 * ======================================================================== */

/* The binomial tree of Fig. 7 over the relative ranks; with a hierarchy hint
 * of two or more groups (the blade's chips), the paper's 2-chip rule: the
 * root first serves one partner in each other group (a binomial tree over
 * the group representatives), then every group follows its own tree. */
static int build_tree(const cs_coll_args_t *a, tree_t *t, cs_error_t *err)
{
    cs_coll_groups_t g;
    int rc = cs_coll_groups_rooted(&g, a, 0, err);
    if (rc)
        return rc;
    tree_init(t, a->P);
    tree_add(t, a->root, -1);
    if (g.G > 1) {
        int32_t *reps = cs_malloc((size_t)g.G * sizeof *reps);
        for (int j = 0; j < g.G; j++)
            reps[j] = g.mem[g.start[j]];
        tree_add_doubling(t, reps, g.G);
        free(reps);
    }
    for (int j = 0; j < g.G; j++)
        tree_add_doubling(t, g.mem + g.start[j], g.start[j + 1] - g.start[j]);
    tree_finish(t);
    cs_coll_groups_destroy(&g);
    return CS_OK;
}

static int tree_bcast(cs_coll_builder_t *b, int opt, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    tree_t t;
    int rc = build_tree(a, &t, err);
    if (rc)
        return rc;
    emit_tree_bcast(b, &t, 0, a->bytes, PHASE_TAG(0), opt);
    tree_destroy(&t);
    return CS_OK;
}

/* broadcast/opt; source: Cell paper §3.4. */
static int build_bcast_opt(cs_coll_builder_t *b, cs_error_t *err) { return tree_bcast(b, 1, err); }
/* broadcast/simple; source: Cell paper §3.4, §4. */
static int build_bcast_simple(cs_coll_builder_t *b, cs_error_t *err)
{
    return tree_bcast(b, 0, err);
}

static int read_opt_flag(const cs_coll_args_t *a, int *opt, cs_error_t *err)
{
    int64_t v;
    int rc = cs_coll_opt_int(a, "opt", 1, 0, 1, &v, err);
    *opt = (int)v;
    return rc;
}

/* Two-to-all: the root hands the data to a partner in the other half (the
 * other chip), waits for it, then root and partner each serve the rest of
 * their half directly (one-to-all).  Source: Cell paper §3.4, §4. */
static int build_bcast_two_to_all(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    cs_coll_groups_t g;
    tree_t t;
    int opt, rc;
    if ((rc = read_opt_flag(a, &opt, err)) || (rc = cs_coll_groups_rooted(&g, a, 1, err)))
        return rc;
    tree_init(&t, a->P);
    tree_add(&t, a->root, -1);
    if (g.G > 1) {
        /* the partner: the first rank outside the root's group, cyclically */
        int partner = g.mem[g.start[1]];
        tree_add(&t, partner, a->root);
        for (int k = g.start[1]; k < a->P; k++)
            if (g.mem[k] != partner)
                tree_add(&t, g.mem[k], partner);
    }
    for (int k = 1; k < g.start[1]; k++) /* the root's own half */
        tree_add(&t, g.mem[k], a->root);
    tree_finish(&t);
    emit_tree_bcast(b, &t, 0, a->bytes, PHASE_TAG(0), opt);
    tree_destroy(&t);
    cs_coll_groups_destroy(&g);
    return CS_OK;
}

/* The paper's segmented binomial tree (§3.4) over the ranks L[0..s), L[0]
 * holding [0, n):
 *   phase 1: the Fig. 7 tree, where the subtree of L[0]'s first child (the
 *            odd indices) gets the left half and the other subtrees (the even
 *            indices) the right half;
 *   phase 2: odd index i and even index i+1 swap halves; when s is even, the
 *            last (odd) index has no partner and gets the right half from
 *            L[0] ("the root node will provide the last node on the left
 *            subtree with the right-half data"). */
static void emit_two_phase(cs_coll_builder_t *b, const int32_t *L, int s, int64_t n, int opt)
{
    int64_t h = (n + 1) / 2;
    for (int i = 0; i < s; i++) {
        int64_t off = (i % 2) ? 0 : h, len = (i % 2) ? h : n - h;
        if (i > 0) {
            cs_coll_recv_nz(b, L[i], L[i - pow2_floor(i)], off, len, PHASE_TAG(1));
            cs_coll_wait(b, L[i]);
        }
        for (int d = i ? 2 * pow2_floor(i) : 1; i + d < s; d *= 2) {
            int c = i + d;
            cs_coll_send_nz(b, L[i], L[c], (c % 2) ? 0 : h, (c % 2) ? h : n - h, PHASE_TAG(1));
            if (opt)
                cs_coll_wait(b, L[i]); /* subtree sizes strictly decrease */
        }
        cs_coll_wait(b, L[i]);
    }
    for (int i = 1; i < s; i += 2) {
        if (i + 1 < s) {
            cs_coll_send_nz(b, L[i], L[i + 1], 0, h, PHASE_TAG(2));
            cs_coll_recv_nz(b, L[i], L[i + 1], h, n - h, PHASE_TAG(2));
            cs_coll_send_nz(b, L[i + 1], L[i], h, n - h, PHASE_TAG(2));
            cs_coll_recv_nz(b, L[i + 1], L[i], 0, h, PHASE_TAG(2));
            cs_coll_wait(b, L[i + 1]);
        } else {
            cs_coll_send_nz(b, L[0], L[i], h, n - h, PHASE_TAG(2));
            cs_coll_recv_nz(b, L[i], L[0], h, n - h, PHASE_TAG(2));
            cs_coll_wait(b, L[0]);
        }
        cs_coll_wait(b, L[i]);
    }
}

/* Two-phase: the segmented binomial tree over all ranks, from the root.
 * Source: Cell paper §3.4. */
static int build_bcast_two_phase(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int32_t *L;
    int opt, rc;
    if ((rc = read_opt_flag(a, &opt, err)))
        return rc;
    L = cs_coll_ranks_from(a->P, a->root);
    emit_two_phase(b, L, a->P, a->bytes, opt);
    free(L);
    return CS_OK;
}

/* Hybrid segmented binomial: the root sends all n bytes to one
 * representative of each other group (one message across the BIF for two
 * chips), then every group runs the two-phase segmented binomial tree
 * (emit_two_phase) from its representative.  Source: Cell paper §3.4. */
static int build_bcast_hybrid_segmented(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    cs_coll_groups_t g;
    tree_t t;
    int opt, rc;
    int64_t n = a->bytes;
    if ((rc = read_opt_flag(a, &opt, err)) || (rc = cs_coll_groups_rooted(&g, a, 1, err)))
        return rc;
    /* phase 0: the representatives */
    tree_init(&t, a->P);
    tree_add(&t, a->root, -1);
    {
        int32_t *reps = cs_malloc((size_t)g.G * sizeof *reps);
        for (int j = 0; j < g.G; j++)
            reps[j] = g.mem[g.start[j]];
        tree_add_doubling(&t, reps, g.G);
        free(reps);
    }
    tree_finish(&t);
    emit_tree_bcast(b, &t, 0, n, PHASE_TAG(0), opt);
    tree_destroy(&t);
    for (int j = 0; j < g.G; j++)
        emit_two_phase(b, g.mem + g.start[j], g.start[j + 1] - g.start[j], n, opt);
    cs_coll_groups_destroy(&g);
    return CS_OK;
}

/* ---- registry ------------------------------------------------------------------ */

static const char *const keys_seg[] = {"seg", NULL};
static const char *const keys_kseg[] = {"k", "seg", NULL};


/* Op counts (cs_coll_algo_t.max_ops): a send and a recv per rank but the
 * root, 2 (P - 1), binomial or flat; scatter + allgather adds a ring
 * allgather's 2 P (P - 1) (fewer when pieces are empty, n < P). */
static int64_t star2_ops(const cs_coll_args_t *a) { return cs_coll_ops_star(a->P, 2); }
static int64_t sag_ops(const cs_coll_args_t *a)
{
    int64_t ring = cs_coll_ops_pairs(a->P, 2);
    return ring == INT64_MAX ? ring : ring + cs_coll_ops_star(a->P, 2);
}

static const cs_coll_algo_t bcast_binomial_algo = {
    .kind = CS_COLL_BROADCAST,
    .name = "binomial",
    .summary = "binomial tree from the root, farthest child first: ceil(log2 P) rounds of the "
               "whole vector",
    .source = "lecture §8.1 (dual of the tree reduce)",
    .options = "",
    .keys = NULL,
    .build = bcast_binomial,
    .max_ops = star2_ops,
};

static const cs_coll_algo_t bcast_flat_algo = {
    .kind = CS_COLL_BROADCAST,
    .name = "flat",
    .summary = "one-to-all: the root sends the vector to every rank in turn",
    .source = "lecture rule 3 (one send at a time), as in §8.4",
    .options = "",
    .keys = NULL,
    .build = bcast_flat,
    .max_ops = star2_ops,
};

static const cs_coll_algo_t bcast_chain_algo = {
    .kind = CS_COLL_BROADCAST,
    .name = "chain",
    .summary = "pipelined chain root -> next -> ... in ring order, one message per segment",
    .source = "generic (MPI)",
    .options = SEG_TEXT,
    .keys = keys_seg,
    .build = bcast_chain,
};

static const cs_coll_algo_t bcast_kchain_algo = {
    .kind = CS_COLL_BROADCAST,
    .name = "kchain",
    .summary = "k pipelined chains from the root over the ring order, one message per segment",
    .source = "generic (MPI)",
    .options = K_TEXT "; " SEG_TEXT,
    .keys = keys_kseg,
    .build = bcast_kchain,
};

static const cs_coll_algo_t bcast_sag_algo = {
    .kind = CS_COLL_BROADCAST,
    .name = "scatter-allgather",
    .summary = "van de Geijn: divide-and-conquer scatter of P pieces, then ring allgather",
    .source = "lecture §8.8",
    .options = "",
    .keys = NULL,
    .build = bcast_scatter_allgather,
    .max_ops = sag_ops,
};

static const cs_coll_algo_t bcast_segbin_algo = {
    .kind = CS_COLL_BROADCAST,
    .name = "segmented-binomial",
    .summary = "binomial tree pipelined in segments (a rank forwards segment s once it has it)",
    .source = "generic (MPI)",
    .options = SEG_TEXT,
    .keys = keys_seg,
    .build = bcast_segmented_binomial,
};
static const cs_coll_algo_t a_bcast = {
    CS_COLL_BROADCAST, "thesis",
    "one multicast from the root (the router fan-out of the 1D and 2D broadcast)",
    "Cerebras thesis Ch. 4 (Lemma 4.1, §4.2)", "", NULL, build_bcast, NULL};

static const char *const keys_opt[] = {"opt", NULL};

static const cs_coll_algo_t bcast_opt = {
    CS_COLL_BROADCAST, "opt",
    "binomial tree (Fig. 7), each node serves its children one at a time in decreasing subtree "
    "size, waiting for each transfer; with a hierarchy hint the root first serves one partner "
    "per other group",
    "Cell paper §3.4", "", NULL, build_bcast_opt, NULL};

static const cs_coll_algo_t bcast_simple = {
    CS_COLL_BROADCAST, "simple",
    "the same tree as broadcast/opt, every node serving all its children at once (no ACK "
    "waits)",
    "Cell paper §3.4, §4", "", NULL, build_bcast_simple, NULL};

static const cs_coll_algo_t bcast_two_to_all = {
    CS_COLL_BROADCAST, "two-to-all",
    "root sends to a partner in the other half (chip), then both serve their half directly",
    "Cell paper §3.4, §4", "opt=1|0 (default 1: wait for the partner before the others)",
    keys_opt, build_bcast_two_to_all, NULL};

static const cs_coll_algo_t bcast_hybrid_segmented = {
    CS_COLL_BROADCAST, "hybrid-segmented",
    "root sends all data to a representative of the other half (chip), then each half runs "
    "the two-phase segmented binomial (halves down the tree, then pairwise swap)",
    "Cell paper §3.4", "opt=1|0 (default 1: serve children in decreasing subtree size)",
    keys_opt, build_bcast_hybrid_segmented, NULL};

static const cs_coll_algo_t bcast_two_phase = {
    CS_COLL_BROADCAST, "two-phase",
    "the segmented binomial tree: one half of the data down each half of the Fig. 7 tree, "
    "then a pairwise swap of halves",
    "Cell paper §3.4", "opt=1|0 (default 1: serve children in decreasing subtree size)",
    keys_opt, build_bcast_two_phase, NULL};

/* Listing order: the default first. */
const cs_coll_algo_t *const cs_coll_algos_broadcast[] = {
    &bcast_binomial_algo, &bcast_flat_algo, &bcast_chain_algo, &bcast_kchain_algo,
    &bcast_sag_algo,      &bcast_segbin_algo, &a_bcast,        &bcast_opt,
    &bcast_simple,        &bcast_two_to_all, &bcast_two_phase, &bcast_hybrid_segmented,
    NULL};
