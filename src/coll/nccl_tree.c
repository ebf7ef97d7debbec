/*
 * nccl_tree.c - NCCL's double binary tree allreduce in the suite (issue 36;
 * nccl.h, docs/nccl.md "Tree"), as NCCL 2.30.7 builds it (NVIDIA/nccl, tag
 * v2.30.7-1; read, not copied):
 *
 *   allreduce/nccl-tree   two binary trees over the nodes (src/graph/trees.cc,
 *                         ncclGetBtree and ncclGetDtree: the second the mirror
 *                         of the first for an even count, the first shifted by
 *                         one for an odd one), a chain through the ranks of
 *                         each node (src/graph/connect.cc, connectTrees with
 *                         the TREE pattern: the chain's first rank talks to
 *                         the other nodes), every chunk reduced up and
 *                         broadcast down as soon as it can be
 *                         (src/device/all_reduce.h, runTreeSplit).
 *
 * This file also holds the table of the "tree" family (nccl.h), which lists
 * PAT (nccl_pat.c) after the tree.  Not modelled (docs/nccl.md): NCCL's flow
 * control (NCCL_STEPS buffer slots per connection), the order of NCCL's
 * chunks over channels (an even split here), GPU kernel time.
 */
#include "coll/coll_internal.h"
#include "coll/nccl.h"
#include "coll/nccl_tree_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- the trees --------------------------------------------------------- */

/* NCCL_MAX_TREE_ARITY: at most three children (the node's chain and two
 * nodes below). */
#define ARITY 3

/* Parent of `r` in NCCL's binary tree over n nodes rooted at node 0
 * (ncclGetBtree): the tree of in-order positions of a complete binary tree,
 * whose root 0 sits above the largest power of two below n.  A node whose
 * lowest set bit is b hangs below the node that clears b and sets 2b, or,
 * when that is past the end, below the node that only clears b. */
static int btree_parent(int n, int r)
{
    if (r == 0)
        return -1;
    int b = lowbit(r);
    int up = (r ^ b) | (b << 1);
    return up < n ? up : (r ^ b);
}

/* Parent of node r in tree t (0 or 1) of NCCL's double binary tree over n
 * nodes (ncclGetDtree): tree 1 is tree 0 mirrored (r -> n-1-r) for an even
 * n and shifted by one (r -> r+1 mod n) for an odd n, so that a node inner
 * in one tree is a leaf in the other. */
static int dtree_parent(int n, int t, int r)
{
    if (t == 0)
        return btree_parent(n, r);
    if (n % 2 == 0) {
        int u = btree_parent(n, n - 1 - r);
        return u < 0 ? -1 : n - 1 - u;
    }
    int u = btree_parent(n, (r - 1 + n) % n);
    return u < 0 ? -1 : (u + 1) % n;
}

/* One tree over the ranks: up[r] (-1 for the root), down[r*ARITY + i] (-1:
 * none), and the ranks root first in breadth-first order. */
typedef struct ntree {
    int P, root;
    int32_t *up, *down, *bfs;
} ntree_t;

static void ntree_destroy(ntree_t *t)
{
    free(t->up);
    free(t->down);
    free(t->bfs);
    memset(t, 0, sizeof *t);
}

/* Tree t of the double binary tree over the groups g (G >= 1: each group a
 * node whose ranks form a chain from its first member; G = 0: each rank a
 * node of its own).  Children are listed chain first, then the nodes in
 * increasing order (NCCL's down[0], down[1], down[2]). */
static void ntree_build(ntree_t *tr, const cs_coll_groups_t *g, int P, int t)
{
    int nodes = g->G ? g->G : P;
    tr->P = P;
    tr->root = -1;
    tr->up = cs_malloc((size_t)P * sizeof *tr->up);
    tr->down = cs_malloc((size_t)P * ARITY * sizeof *tr->down);
    tr->bfs = cs_malloc((size_t)P * sizeof *tr->bfs);
    for (int i = 0; i < P * ARITY; i++)
        tr->down[i] = -1;
    for (int r = 0; r < P; r++) {
        int up;
        if (!g->G) {
            up = dtree_parent(nodes, t, r);
        } else {
            int grp = g->of[r], at = g->at[r];
            if (at > 0) {
                up = g->mem[g->start[grp] + at - 1];
            } else {
                int pg = dtree_parent(nodes, t, grp);
                up = pg < 0 ? -1 : g->mem[g->start[pg]];
            }
        }
        tr->up[r] = up;
    }
    /* children in the order NCCL lists them: the chain's next rank first
     * (a rank of the same group), then the other nodes' heads by node */
    for (int pass = 0; pass < 2; pass++)
        for (int c = 0; c < P; c++) {
            int p = tr->up[c];
            if (p < 0)
                continue;
            int same = g->G ? g->of[p] == g->of[c] : 0;
            if (same != (pass == 0))
                continue;
            int i = 0;
            while (tr->down[p * ARITY + i] >= 0)
                i++;
            CS_ASSERT(i < ARITY); /* a binary tree plus a chain */
            tr->down[p * ARITY + i] = c;
        }
    for (int r = 0; r < P; r++)
        if (tr->up[r] < 0) {
            CS_ASSERT(tr->root < 0); /* one root */
            tr->root = r;
        }
    CS_ASSERT(tr->root >= 0);
    int n = 0;
    tr->bfs[n++] = tr->root;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < ARITY; k++) {
            int c = tr->down[tr->bfs[i] * ARITY + k];
            if (c >= 0)
                tr->bfs[n++] = c;
        }
    CS_ASSERT(n == P); /* the tree spans every rank */
}

/* ---- options --------------------------------------------------------------- */

static const char *const keys_nccl[] = {CS_NCCL_KEYS, NULL};

/* Channels and chunk of the tree allreduce: 2 x nchannels channels (NCCL
 * duplicates its tree channels, the copies running tree 1), a chunk of one
 * buffer step of the protocol (cs_nccl_opts_t.step), and, unless
 * chunk= is given, NCCL 2.30's smaller chunks for LL128 on few bytes per
 * channel (enqueue.cc, calcCollChunking: fewer bytes than about 64 (then
 * 16) chunks per pipeline step over the tree's depth halve the chunk down
 * to 128 KiB (then 32 KiB)). */
static int tree_opts(const cs_coll_args_t *a, int nodes, cs_nccl_opts_t *o, int *nc,
                     cs_error_t *err)
{
    int rc = cs_nccl_opts_read(a, o, err);
    if (rc)
        return rc;
    o->chunk = o->step; /* NCCL's chunkSteps is 1 for the tree: a chunk is a step */
    *nc = 2 * o->nchannels;
    if (o->proto == CS_PROTO_LL128 && !cs_coll_opt_given(a, "chunk")) {
        double ppn = (double)a->P / nodes;
        double steps = 1 + floor_log2(nodes) + 0.1 * ppn;
        int64_t per = a->bytes / *nc;
        while (per / o->chunk < steps * 64 / ppn && o->chunk > 131072)
            o->chunk /= 2;
        while (per / o->chunk < steps * 16 / ppn && o->chunk > 32768)
            o->chunk /= 2;
    }
    return CS_OK;
}

/* The node count NCCL sees: the groups of the hierarchy hint, else P. */
static int hint_nodes(const cs_coll_args_t *a)
{
    cs_coll_groups_t g;
    cs_error_t e;
    int n = a->P;
    if (!cs_coll_groups_hint(&g, a, 1, &e) && g.G > 0)
        n = g.G;
    cs_coll_groups_destroy(&g);
    return n;
}

/* ---- allreduce/nccl-tree ---------------------------------------------------- */

/* One chunk [off, off+len) over tree tr, with tags of its own (tag_up,
 * tag_down: two chunks' messages between a pair never match each other,
 * whichever leaves first): every rank below the root reduces what its
 * children send (leaves first, so a child's send exists before its parent
 * waits for it) and passes the sum up once it is complete; the root's
 * sum then goes down, each rank forwarding a chunk once it has it
 * (runTreeSplit: reduce-up and broadcast-down run at once, chunk after
 * chunk).  red[r*ARITY+i]: the calc that adds child i's sum at r; got[r]:
 * the recv of the result at r. */
static void tree_chunk(cs_coll_builder_t *b, const ntree_t *tr, int64_t off, int64_t len,
                       int tag_up, int tag_down, int32_t *red, int32_t *got)
{
    int P = tr->P;
    for (int i = 0; i < P * ARITY; i++)
        red[i] = -1;
    for (int i = P - 1; i >= 0; i--) {
        int r = tr->bfs[i], p = tr->up[r];
        if (p < 0)
            continue;
        int32_t s = cs_coll_send_nz(b, r, p, off, len, tag_up);
        for (int k = 0; k < ARITY; k++)
            cs_coll_dep(b, s, red[r * ARITY + k], CS_DEP_AFTER);
        int k = 0;
        while (tr->down[p * ARITY + k] != r)
            k++;
        red[p * ARITY + k] = cs_coll_recv_reduce_nz(b, p, r, off, len, tag_up);
    }
    for (int i = 0; i < P; i++) {
        int r = tr->bfs[i];
        for (int k = 0; k < ARITY; k++) {
            int c = tr->down[r * ARITY + k];
            if (c < 0)
                continue;
            int32_t s = cs_coll_send_nz(b, r, c, off, len, tag_down);
            if (r == tr->root)
                for (int j = 0; j < ARITY; j++)
                    cs_coll_dep(b, s, red[r * ARITY + j], CS_DEP_AFTER);
            else
                cs_coll_dep(b, s, got[r], CS_DEP_AFTER);
            got[c] = cs_coll_recv_nz(b, c, r, off, len, tag_down);
        }
    }
}

/* allreduce/nccl-tree; source: NCCL 2.30.7 (trees.cc, connect.cc,
 * all_reduce.h runTreeSplit).  The vector splits into 2 x nchannels equal
 * parts, channel c running tree 0 for c < nchannels and tree 1 after (NCCL
 * copies its channels and connects the copies to the second tree); each
 * part goes through its tree chunk by chunk. */
static int allreduce_nccl_tree(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, nc, rc;
    cs_nccl_opts_t o;
    cs_coll_groups_t g;
    if ((rc = cs_coll_groups_hint(&g, a, 1, err)))
        return rc;
    if ((rc = tree_opts(a, g.G ? g.G : P, &o, &nc, err))) {
        cs_coll_groups_destroy(&g);
        return rc;
    }
    /* the tags 2g, 2g + 1 of the chunks: fewer than the ops, 5 a chunk and
     * edge, which the op limit (below 2^31) bounds; checked all the same */
    if (nccl_all_chunks(a->bytes, nc, o.chunk) > INT32_MAX / 2 - 1) {
        cs_coll_groups_destroy(&g);
        return cs_error_set(err, CS_ERR_RANGE, "option chunk=%lld: too many chunks",
                            (long long)o.chunk);
    }
    cs_nccl_begin(b, &o);
    if (P > 1) {
        ntree_t tr[2];
        int32_t *red = cs_malloc((size_t)P * ARITY * sizeof *red);
        int32_t *got = cs_malloc((size_t)P * sizeof *got);
        ntree_build(&tr[0], &g, P, 0);
        ntree_build(&tr[1], &g, P, 1);
        int64_t ck = 0; /* chunks so far, over the channels: the tags */
        for (int c = 0; c < nc; c++) {
            int64_t coff, clen;
            cs_coll_split(a->bytes, nc, c, &coff, &clen);
            for (int64_t k = 0; k < nccl_nchunks(clen, o.chunk); k++, ck++) {
                int64_t off = coff + k * o.chunk;
                int64_t len = clen - k * o.chunk < o.chunk ? clen - k * o.chunk : o.chunk;
                tree_chunk(b, &tr[c < nc / 2 ? 0 : 1], off, len, (int)(2 * ck), (int)(2 * ck + 1),
                           red, got);
            }
        }
        free(red);
        free(got);
        ntree_destroy(&tr[0]);
        ntree_destroy(&tr[1]);
    }
    cs_coll_groups_destroy(&g);
    return CS_OK;
}

/* Per chunk of a channel, each of the P-1 tree edges carries a send, a recv
 * and a calc up and a send and a recv down. */
static int64_t allreduce_nccl_tree_ops(const cs_coll_args_t *a)
{
    cs_nccl_opts_t o;
    cs_error_t e;
    int nc;
    if (tree_opts(a, hint_nodes(a), &o, &nc, &e))
        return -1;
    return nccl_mul_sat(nccl_all_chunks(a->bytes, nc, o.chunk), cs_coll_ops_star(a->P, 5));
}

static const cs_coll_algo_t allreduce_nccl_tree_algo = {
    .kind = CS_COLL_ALLREDUCE,
    .name = "nccl-tree",
    .summary = "NCCL's double binary tree: two trees (mirror or shift) each carrying half, "
               "reduce up and broadcast down chunk by chunk; a chain inside each node of the "
               "machine's groups",
    .source = "NCCL 2.30.7 (src/graph/trees.cc, connect.cc, device/all_reduce.h)",
    .options = CS_NCCL_OPTIONS,
    .keys = keys_nccl,
    .build = allreduce_nccl_tree,
    .max_ops = allreduce_nccl_tree_ops,
};

const cs_coll_algo_t *const cs_coll_algos_nccl_tree[] = {
    &allreduce_nccl_tree_algo, &cs_coll_nccl_pat_allgather, &cs_coll_nccl_pat_reduce_scatter, NULL};
