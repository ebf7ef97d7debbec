/*
 * papers.c - the collectives of the three machine papers, written once
 * against the program model so that they run on every machine:
 *
 *   Cell   Ali, Midkiff, Pai, "Efficient High Performance Collective
 *          Communication for the Cell Blade", ICS'09 (papers/001, notes in
 *          reference/cell-blade.md §2-§3): the opt and simple tree
 *          broadcasts, two-to-all, hybrid segmented binomial, hybrid-x-y
 *          all-gather, HybridA-x-y and HybridB-x-y all-reduce, Rdb-Barrier
 *          all-reduce, the mailbox reduce and the stepped mailbox barrier.
 *   CNS-1  Müller, "All-to-all Broadcast on the CNS-1", ICSI TR-93-082
 *          (papers/003, reference/cns1.md §5, §6.1): the directed-ring
 *          all-gather that forwards chunk by chunk, and its two-way variant.
 *   Groq   Abts et al., "A Software-defined Tensor Streaming Multiprocessor",
 *          ISCA'22 (papers/002 §5.6, reference/groq-dragonfly.md §4): the
 *          hierarchical all-reduce.
 *
 * The papers' machine protocols are not the algorithms' business: the
 * Cell's ADDR / DATA / ACK notifications, the CNS-1's 137-byte messages and
 * its 4ov overheads belong to the machine models.  What a paper's schedule
 * says about ordering is expressed with dependencies: "serve a child, wait
 * for its ACK, serve the next" is a send followed by cs_coll_wait; "forward
 * each chunk as soon as it arrived" is a CS_DEP_STREAM dependency.
 *
 * Every algorithm works for any P >= 1, any size (zero-length pieces are
 * not sent, consistently on both sides; a 0-byte collective emits nothing)
 * and, where rooted, any root.  Where a paper only describes powers of two, the generalisation
 * is documented next to the code and in docs/algorithms/papers.md.
 */
#include "coll/coll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Tags: each phase of an algorithm gets its own range, so two messages
 * between the same pair in different phases never match out of order. */
#define TAG_STRIDE (1 << 20)
#define TAG(phase) ((phase) * TAG_STRIDE)
/* inside a range: barrier tokens of rdb round j, dissemination round k */
#define TAG_BARRIER(j, k) (4096 + (j) * 64 + (k))

/* ---- small helpers -------------------------------------------------------- */

static int is_pow2(int64_t x) { return x > 0 && !(x & (x - 1)); }

/* floor(log2 x) for x >= 1 */
static int floor_log2(int64_t x)
{
    int k = 0;
    while ((x >> (k + 1)) > 0)
        k++;
    return k;
}

static int lowbit(int i) { return i & -i; }
static int highbit(int i) { return 1 << floor_log2(i); }

static int opt_given(const cs_coll_args_t *a, const char *key)
{
    return a->opts && cs_spec_get(a->opts, key) != NULL;
}

/* Block layout of an all-gather-type buffer: P blocks of m bytes, or (for
 * the all-reduces built on reduce-scatter) n bytes split by cs_coll_split. */
typedef struct blocks {
    int P;
    int split;     /* 0: block i = [i*m, (i+1)*m); 1: cs_coll_split(n, P, i) */
    int64_t m, n;
} blocks_t;

/* Offset of block i, for i in [0, P] (blk(P) is the end of the buffer), so
 * blocks [i, j) are the bytes [blk(i), blk(j)). */
static int64_t blk(const blocks_t *bl, int i)
{
    int64_t off, len;
    if (!bl->split)
        return (int64_t)i * bl->m;
    if (i >= bl->P)
        return bl->n;
    cs_coll_split(bl->n, bl->P, i, &off, &len);
    return off;
}

/* Rank of relative index i when `root` is rank 0 of the numbering. */
static int rel_rank(int root, int i, int P) { return (root + i) % P; }

/* Data messages: a zero-length piece (n < P, a 0-byte collective) is not
 * sent at all; sender and receiver compute the same lengths, so both skip
 * it.  Return -1 for a skipped op (cs_coll_dep ignores it). */
static int32_t dsend(cs_coll_builder_t *b, int from, int to, int64_t off, int64_t len, int tag)
{
    return len > 0 ? cs_coll_send(b, from, to, off, len, tag) : -1;
}

static int32_t drecv(cs_coll_builder_t *b, int at, int from, int64_t off, int64_t len, int tag)
{
    return len > 0 ? cs_coll_recv(b, at, from, off, len, tag) : -1;
}

static int32_t drecv_reduce(cs_coll_builder_t *b, int at, int from, int64_t off, int64_t len,
                            int tag)
{
    return len > 0 ? cs_coll_recv_reduce(b, at, from, off, len, tag) : -1;
}

/* ---- barrier among a set of ranks ------------------------------------------
 * 0-byte tokens that carry no data (the descriptor is empty), used inside
 * the Cell algorithms that put barriers between rounds.  A power-of-two set
 * uses recursive doubling (the Cell paper's barrier: partner i XOR 2^k), any
 * other set the dissemination pattern; both take ceil(log2 cnt) rounds. */
static void emit_barrier(cs_coll_builder_t *b, const int32_t *ranks, int cnt, int tag)
{
    int rounds = cs_coll_ceil_log2(cnt);
    for (int i = 0; i < cnt; i++)
        cs_coll_wait(b, ranks[i]);
    for (int k = 0; k < rounds; k++) {
        int d = 1 << k;
        for (int i = 0; i < cnt; i++) {
            int to = is_pow2(cnt) ? (i ^ d) : (i + d) % cnt;
            int from = is_pow2(cnt) ? (i ^ d) : ((i - d) % cnt + cnt) % cnt;
            cs_coll_send(b, ranks[i], ranks[to], 0, 0, tag + k);
            cs_coll_recv(b, ranks[i], ranks[from], 0, 0, tag + k);
            cs_coll_wait(b, ranks[i]);
        }
    }
}

/* ---- recursive-doubling all-reduce among a set of ranks --------------------
 * [off, off+len) is reduced over ranks[0..cnt).  When cnt is not a power of
 * two, the ranks beyond the largest power of two pof2 first hand their vector
 * to ranks[i - pof2] and get the result back at the end (the Cell paper's
 * "extra round" to and from the excess nodes).  A rank goes on to the next
 * round once its partner's vector is in and added, without waiting for the
 * partner to have read its own (the ACK): the paper's rdb lets rounds
 * overlap -- "after the second round there are 16 = 8 + 8 data messages that
 * have ever been initiated ... some might not have been completed" (§3.5) --
 * which needs one receive buffer per round, not a wait.  every > 0: a barrier among
 * the pof2 rdb ranks after rdb round j (1-based) whenever j % every == 0
 * (Rdb-Barrier).  Uses tags [tag, tag + TAG_STRIDE). */
static void emit_rdb_allreduce(cs_coll_builder_t *b, const int32_t *ranks, int cnt, int64_t off,
                               int64_t len, int tag, int every)
{
    int pof2, L;
    if (cnt <= 1)
        return;
    pof2 = 1 << floor_log2(cnt);
    L = floor_log2(pof2);
    for (int i = pof2; i < cnt; i++) {
        dsend(b, ranks[i], ranks[i - pof2], off, len, tag);
        drecv_reduce(b, ranks[i - pof2], ranks[i], off, len, tag);
        cs_coll_wait(b, ranks[i]);
        cs_coll_wait(b, ranks[i - pof2]);
    }
    for (int j = 0; j < L; j++) {
        for (int i = 0; i < pof2; i++) {
            int p = i ^ (1 << j);
            dsend(b, ranks[i], ranks[p], off, len, tag + 1 + j);
            drecv_reduce(b, ranks[i], ranks[p], off, len, tag + 1 + j);
            cs_coll_wait_recvs(b, ranks[i]); /* rounds overlap (§3.5), see above */
        }
        if (every > 0 && (j + 1) % every == 0)
            emit_barrier(b, ranks, pof2, tag + TAG_BARRIER(j, 0));
    }
    for (int i = pof2; i < cnt; i++) {
        dsend(b, ranks[i - pof2], ranks[i], off, len, tag + 1 + L);
        drecv(b, ranks[i], ranks[i - pof2], off, len, tag + 1 + L);
        cs_coll_wait(b, ranks[i]);
        cs_coll_wait(b, ranks[i - pof2]);
    }
}

/* ---- direct (fully connected) reduce-scatter and all-gather ----------------
 * The Groq node's pattern: every member talks to every other member
 * directly.  [off, off+len) is split into c shards (c <= s); shard t is
 * owned by ranks[t].  Member i sends to member (i+d) mod s for d = 1..s-1 and
 * receives from (i-d) mod s in the same order.
 *   par = 0: each send starts when the previous one has completed, so on a
 *            machine with one send and one receive port the exchanges form
 *            s-1 perfect matchings, (s-1) rounds.  (Posting them all at once
 *            would leave the order to the engine's greedy port arbitration,
 *            which does not find the matchings and costs extra rounds.)
 *   par = 1: all sends are posted at once, for machines with a port per
 *            link (a Groq TSP drives its 7 node links together). */
static void chain_send(cs_coll_builder_t *b, int32_t op, int32_t *prev, int par)
{
    if (op < 0)
        return;
    if (!par && *prev >= 0)
        cs_coll_dep(b, op, *prev, CS_DEP_AFTER);
    *prev = op;
}

static void emit_direct_rs(cs_coll_builder_t *b, const int32_t *ranks, int s, int c, int64_t off,
                           int64_t len, int tag, int par)
{
    int64_t so, sl;
    for (int i = 0; i < s; i++) {
        int32_t prev = -1;
        for (int d = 1; d < s; d++) {
            int t = (i + d) % s;
            if (t < c) {
                cs_coll_split(len, c, t, &so, &sl);
                chain_send(b, dsend(b, ranks[i], ranks[t], off + so, sl, tag), &prev, par);
            }
        }
        if (i < c) {
            cs_coll_split(len, c, i, &so, &sl);
            for (int d = 1; d < s; d++)
                drecv_reduce(b, ranks[i], ranks[((i - d) % s + s) % s], off + so, sl, tag);
        }
        cs_coll_wait(b, ranks[i]);
    }
}

static void emit_direct_ag(cs_coll_builder_t *b, const int32_t *ranks, int s, int c, int64_t off,
                           int64_t len, int tag, int par)
{
    int64_t so, sl;
    for (int i = 0; i < s; i++) {
        int32_t prev = -1;
        if (i < c) {
            cs_coll_split(len, c, i, &so, &sl);
            for (int d = 1; d < s; d++)
                chain_send(b, dsend(b, ranks[i], ranks[(i + d) % s], off + so, sl, tag),
                           &prev, par);
        }
        for (int d = 1; d < s; d++) {
            int src = ((i - d) % s + s) % s;
            if (src < c) {
                cs_coll_split(len, c, src, &so, &sl);
                drecv(b, ranks[i], ranks[src], off + so, sl, tag);
            }
        }
        cs_coll_wait(b, ranks[i]);
    }
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
 * t, index i < 2^t sends to i + 2^t, so the parent of i is i - highbit(i).
 * list[0] must already be in the tree. */
static void tree_add_doubling(tree_t *t, const int32_t *list, int cnt)
{
    for (int i = 1; i < cnt; i++)
        tree_add(t, list[i], list[i - highbit(i)]);
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
            drecv(b, r, t->parent[r], off, len, tag);
            cs_coll_wait(b, r);
        }
        for (int i = 0; i < nc; i++) {
            dsend(b, r, c[i], off, len, tag);
            if (opt && i + 1 < nc && t->size[c[i + 1]] < t->size[c[i]])
                cs_coll_wait(b, r);
        }
        cs_coll_wait(b, r);
    }
}

/* ---- hierarchy groups --------------------------------------------------------
 * Groups as lists of ranks: members[gstart[g] .. gstart[g+1]) in rank order.
 * From the machine's hint (empty groups dropped) or computed by the caller. */
typedef struct groups {
    int G;
    int32_t *members; /* P entries */
    int32_t *gstart;  /* G + 1 entries */
    int32_t *of;      /* group index of each rank */
} groups_t;

static void groups_destroy(groups_t *g)
{
    free(g->members);
    free(g->gstart);
    free(g->of);
    memset(g, 0, sizeof *g);
}

/* G consecutive groups of near-equal size (cs_coll_split of the ranks). */
static void groups_consecutive(groups_t *g, int P, int G)
{
    int64_t off, len;
    g->G = G;
    g->members = cs_malloc((size_t)P * sizeof *g->members);
    g->gstart = cs_malloc(((size_t)G + 1) * sizeof *g->gstart);
    g->of = cs_malloc((size_t)P * sizeof *g->of);
    for (int r = 0; r < P; r++)
        g->members[r] = r;
    for (int j = 0; j < G; j++) {
        cs_coll_split(P, G, j, &off, &len);
        g->gstart[j] = (int32_t)off;
        for (int64_t r = off; r < off + len; r++)
            g->of[r] = j;
    }
    g->gstart[G] = P;
}

/* The hint's groups.  Returns CS_OK with g->G = 0 when there is no hint. */
static int groups_from_hint(groups_t *g, const cs_coll_args_t *a, cs_error_t *err)
{
    const cs_coll_hints_t *h = a->hints;
    int P = a->P, G = 0;
    int32_t *count, *id;
    memset(g, 0, sizeof *g);
    if (!h || !h->group || h->ngroups <= 0)
        return CS_OK;
    for (int r = 0; r < P; r++)
        if (h->group[r] < 0 || h->group[r] >= h->ngroups)
            return cs_error_set(err, CS_ERR_RANGE,
                                "hierarchy hint: rank %d is in group %d, outside 0..%d", r,
                                (int)h->group[r], h->ngroups - 1);
    count = cs_calloc((size_t)h->ngroups, sizeof *count);
    id = cs_malloc((size_t)h->ngroups * sizeof *id);
    for (int r = 0; r < P; r++)
        count[h->group[r]]++;
    for (int k = 0; k < h->ngroups; k++)
        id[k] = count[k] ? G++ : -1;
    g->G = G;
    g->members = cs_malloc((size_t)P * sizeof *g->members);
    g->gstart = cs_calloc((size_t)G + 1, sizeof *g->gstart);
    g->of = cs_malloc((size_t)P * sizeof *g->of);
    for (int r = 0; r < P; r++) {
        g->of[r] = id[h->group[r]];
        g->gstart[g->of[r] + 1]++;
    }
    for (int j = 0; j < G; j++)
        g->gstart[j + 1] += g->gstart[j];
    memset(count, 0, (size_t)h->ngroups * sizeof *count);
    for (int r = 0; r < P; r++)
        g->members[g->gstart[g->of[r]] + count[g->of[r]]++] = r;
    free(count);
    free(id);
    return CS_OK;
}

/* For the rooted algorithms: the hint's groups when there are at least two;
 * else (hint absent or one group) with two_halves the two halves of the
 * relative ranks, [0, ceil(P/2)) with the root and [ceil(P/2), P) (the Cell
 * blade's two chips when the root is 0 and P = 16), without it one group of
 * all ranks.  Each group is written as a list
 * starting with its representative: the root for the root's group, else the
 * group's first rank after the root in cyclic order; the others follow in
 * cyclic order.  Groups are listed starting with the root's, cyclically. */
static int root_groups(groups_t *g, const cs_coll_args_t *a, int two_halves, cs_error_t *err)
{
    int P = a->P, root = a->root, rc;
    groups_t h;
    if ((rc = groups_from_hint(&h, a, err)))
        return rc;
    memset(g, 0, sizeof *g);
    if (h.G < 2 && !two_halves) {
        groups_destroy(&h);
        groups_consecutive(g, P, 1);
        for (int i = 0; i < P; i++)
            g->members[i] = rel_rank(root, i, P);
        return CS_OK;
    }
    if (h.G < 2) {
        int c = (P + 1) / 2;
        groups_destroy(&h);
        groups_consecutive(g, P, P >= 2 ? 2 : 1);
        g->gstart[1] = c; /* halves [0, ceil(P/2)) and [ceil(P/2), P) */
        for (int i = 0; i < P; i++) {
            g->members[i] = rel_rank(root, i, P);
            g->of[g->members[i]] = i < c ? 0 : 1;
        }
        return CS_OK;
    }
    /* hint: walk the ranks cyclically from the root; a group's list is its
     * ranks in that order, so its first element is its representative */
    g->G = h.G;
    g->members = cs_malloc((size_t)P * sizeof *g->members);
    g->gstart = cs_calloc((size_t)h.G + 1, sizeof *g->gstart);
    g->of = cs_malloc((size_t)P * sizeof *g->of);
    {
        int32_t *newid = cs_malloc((size_t)h.G * sizeof *newid), *fill, next = 0;
        for (int j = 0; j < h.G; j++)
            newid[j] = -1;
        for (int i = 0; i < P; i++) {
            int r = rel_rank(root, i, P);
            if (newid[h.of[r]] < 0)
                newid[h.of[r]] = next++;
            g->of[r] = newid[h.of[r]];
            g->gstart[g->of[r] + 1]++;
        }
        for (int j = 0; j < h.G; j++)
            g->gstart[j + 1] += g->gstart[j];
        fill = cs_calloc((size_t)h.G, sizeof *fill);
        for (int i = 0; i < P; i++) {
            int r = rel_rank(root, i, P);
            g->members[g->gstart[g->of[r]] + fill[g->of[r]]++] = r;
        }
        free(fill);
        free(newid);
    }
    groups_destroy(&h);
    return CS_OK;
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
    groups_t g;
    int rc = root_groups(&g, a, 0, err);
    if (rc)
        return rc;
    tree_init(t, a->P);
    tree_add(t, a->root, -1);
    if (g.G > 1) {
        int32_t *reps = cs_malloc((size_t)g.G * sizeof *reps);
        for (int j = 0; j < g.G; j++)
            reps[j] = g.members[g.gstart[j]];
        tree_add_doubling(t, reps, g.G);
        free(reps);
    }
    for (int j = 0; j < g.G; j++)
        tree_add_doubling(t, g.members + g.gstart[j], g.gstart[j + 1] - g.gstart[j]);
    tree_finish(t);
    groups_destroy(&g);
    return CS_OK;
}

static int tree_bcast(cs_coll_builder_t *b, int opt, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    tree_t t;
    int rc = build_tree(a, &t, err);
    if (rc)
        return rc;
    emit_tree_bcast(b, &t, 0, a->bytes, TAG(0), opt);
    tree_destroy(&t);
    return CS_OK;
}

static int build_bcast_opt(cs_coll_builder_t *b, cs_error_t *err) { return tree_bcast(b, 1, err); }
static int build_bcast_simple(cs_coll_builder_t *b, cs_error_t *err) { return tree_bcast(b, 0, err); }

static int read_opt_flag(const cs_coll_args_t *a, int *opt, cs_error_t *err)
{
    int64_t v;
    int rc = cs_coll_opt_int(a, "opt", 1, 0, 1, &v, err);
    *opt = (int)v;
    return rc;
}

/* Two-to-all: the root hands the data to a partner in the other half (the
 * other chip), waits for it, then root and partner each serve the rest of
 * their half directly (one-to-all). */
static int build_bcast_two_to_all(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    groups_t g;
    tree_t t;
    int opt, rc;
    if ((rc = read_opt_flag(a, &opt, err)) || (rc = root_groups(&g, a, 1, err)))
        return rc;
    tree_init(&t, a->P);
    tree_add(&t, a->root, -1);
    if (g.G > 1) {
        /* the partner: the first rank outside the root's group, cyclically */
        int partner = g.members[g.gstart[1]];
        tree_add(&t, partner, a->root);
        for (int k = g.gstart[1]; k < a->P; k++)
            if (g.members[k] != partner)
                tree_add(&t, g.members[k], partner);
    }
    for (int k = 1; k < g.gstart[1]; k++) /* the root's own half */
        tree_add(&t, g.members[k], a->root);
    tree_finish(&t);
    emit_tree_bcast(b, &t, 0, a->bytes, TAG(0), opt);
    tree_destroy(&t);
    groups_destroy(&g);
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
            drecv(b, L[i], L[i - highbit(i)], off, len, TAG(1));
            cs_coll_wait(b, L[i]);
        }
        for (int d = i ? 2 * highbit(i) : 1; i + d < s; d *= 2) {
            int c = i + d;
            dsend(b, L[i], L[c], (c % 2) ? 0 : h, (c % 2) ? h : n - h, TAG(1));
            if (opt)
                cs_coll_wait(b, L[i]); /* subtree sizes strictly decrease */
        }
        cs_coll_wait(b, L[i]);
    }
    for (int i = 1; i < s; i += 2) {
        if (i + 1 < s) {
            dsend(b, L[i], L[i + 1], 0, h, TAG(2));
            drecv(b, L[i], L[i + 1], h, n - h, TAG(2));
            dsend(b, L[i + 1], L[i], h, n - h, TAG(2));
            drecv(b, L[i + 1], L[i], 0, h, TAG(2));
            cs_coll_wait(b, L[i + 1]);
        } else {
            dsend(b, L[0], L[i], h, n - h, TAG(2));
            drecv(b, L[i], L[0], h, n - h, TAG(2));
            cs_coll_wait(b, L[0]);
        }
        cs_coll_wait(b, L[i]);
    }
}

/* Two-phase: the segmented binomial tree over all ranks, from the root. */
static int build_bcast_two_phase(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int32_t *L;
    int opt, rc;
    if ((rc = read_opt_flag(a, &opt, err)))
        return rc;
    L = cs_malloc((size_t)a->P * sizeof *L);
    for (int i = 0; i < a->P; i++)
        L[i] = rel_rank(a->root, i, a->P);
    emit_two_phase(b, L, a->P, a->bytes, opt);
    free(L);
    return CS_OK;
}

/* Hybrid segmented binomial: the root sends all n bytes to one
 * representative of each other group (one message across the BIF for two
 * chips), then every group runs the two-phase segmented binomial tree
 * (emit_two_phase) from its representative. */
static int build_bcast_hybrid_segmented(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    groups_t g;
    tree_t t;
    int opt, rc;
    int64_t n = a->bytes;
    if ((rc = read_opt_flag(a, &opt, err)) || (rc = root_groups(&g, a, 1, err)))
        return rc;
    /* phase 0: the representatives */
    tree_init(&t, a->P);
    tree_add(&t, a->root, -1);
    {
        int32_t *reps = cs_malloc((size_t)g.G * sizeof *reps);
        for (int j = 0; j < g.G; j++)
            reps[j] = g.members[g.gstart[j]];
        tree_add_doubling(&t, reps, g.G);
        free(reps);
    }
    tree_finish(&t);
    emit_tree_bcast(b, &t, 0, n, TAG(0), opt);
    tree_destroy(&t);
    for (int j = 0; j < g.G; j++)
        emit_two_phase(b, g.members + g.gstart[j], g.gstart[j + 1] - g.gstart[j], n, opt);
    groups_destroy(&g);
    return CS_OK;
}

/* ===========================================================================
 * Cell: mailbox reduce and stepped barrier (paper §3.2, reference §2.3, §3.1)
 * ======================================================================== */

static int read_every(const cs_coll_args_t *a, int64_t dflt, int *every, cs_error_t *err)
{
    int64_t v;
    int rc = cs_coll_opt_int(a, "every", dflt, 1, 64, &v, err);
    *every = (int)v;
    return rc;
}

/* Binomial reduce (the reverse of Fig. 7: in round j, relative index i with
 * lowest set bit 2^j sends to i - 2^j) with a barrier of all ranks after
 * every `every` rounds: the mailbox variant needs one after each round so
 * that no two senders interleave the halves of their 64-bit addresses. */
static int build_reduce_mailbox(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, L = cs_coll_ceil_log2(P), every, rc;
    int32_t *all;
    if ((rc = read_every(a, 1, &every, err)))
        return rc;
    if (a->bytes == 0) /* nothing to reduce: no rounds, no barriers */
        return CS_OK;
    all = cs_malloc((size_t)P * sizeof *all);
    for (int i = 0; i < P; i++)
        all[i] = rel_rank(a->root, i, P);
    for (int j = 0; j < L; j++) {
        int d = 1 << j;
        for (int i = 0; i < P; i++) {
            if (lowbit(i) == d)
                dsend(b, all[i], all[i - d], 0, a->bytes, TAG(0) + j);
            else if (i % (2 * d) == 0 && i + d < P)
                drecv_reduce(b, all[i], all[i + d], 0, a->bytes, TAG(0) + j);
            cs_coll_wait(b, all[i]);
        }
        if ((j + 1) % every == 0)
            emit_barrier(b, all, P, TAG(1) + TAG_BARRIER(j, 0));
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
                    cs_coll_recv_reduce(b, (int)r, (int)(r + k * st), 0, tok, TAG(0) + l);
            } else {
                cs_coll_send(b, (int)r, (int)(r - r % (st * f)), 0, tok, TAG(0) + l);
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
                    cs_coll_send(b, (int)r, (int)(r + k * st), 0, tok, TAG(1) + l);
            } else {
                cs_coll_recv(b, (int)r, (int)(r - r % (st * f)), 0, tok, TAG(1) + l);
            }
            cs_coll_wait(b, (int)r);
        }
    }
    return CS_OK;
}

/* ===========================================================================
 * Cell: Rdb-Barrier all-reduce (paper §3.5, reference §3.5)
 * ======================================================================== */

/* rdb all-reduce with a barrier after every `every` rounds (default 2): the
 * paper's answer to the EIB's limit of 12 concurrent transfers.  every=1 is
 * the schedule of the paper's mailbox all-reduce (a barrier after each
 * round: 3 barriers for 8 SPEs). */
static int build_allreduce_rdb_barrier(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int every, rc;
    int32_t *all;
    if ((rc = read_every(a, 2, &every, err)))
        return rc;
    if (a->bytes == 0)
        return CS_OK;
    all = cs_malloc((size_t)a->P * sizeof *all);
    for (int i = 0; i < a->P; i++)
        all[i] = i;
    emit_rdb_allreduce(b, all, a->P, 0, a->bytes, TAG(0), every);
    free(all);
    return CS_OK;
}

/* ===========================================================================
 * Cell: hybrid-x-y all-gather, HybridA-x-y and HybridB-x-y all-reduce
 * (paper §3.3 and §3.5, reference §3.2 and §3.5)
 * ======================================================================== */

/* The hybrid's shape.  The paper's name hybrid-x-y says: switch to rdb in
 * round x (after k = x-1 binomial rounds) with y data messages across the
 * BIF, y = P/2^k leaders (evenly spaced ranks 0, 2^k, 2*2^k, ...).  Any P:
 * the ranks are split into y consecutive groups of near-equal size, with y
 * a power of two so that the leaders run a plain rdb; k = ceil(log2 of the
 * largest group).  Options: y (a power of two <= P) or x (k = x-1, and then
 * y = the smallest power of two >= ceil(P/2^k)); both must agree.  Default
 * y = 2^floor(log2 ceil(sqrt P)), the paper's winner hybrid-3-4 at P = 16. */
static int hybrid_shape(const cs_coll_args_t *a, int *y_out, cs_error_t *err)
{
    int P = a->P, lg = cs_coll_ceil_log2(P), rc, y;
    int64_t x, yy;
    int hx = opt_given(a, "x"), hy = opt_given(a, "y");
    if ((rc = cs_coll_opt_int(a, "x", 1, 1, lg + 1, &x, err)) ||
        (rc = cs_coll_opt_int(a, "y", 1, 1, P, &yy, err)))
        return rc;
    if (hy && !is_pow2(yy))
        return cs_error_set(err, CS_ERR_RANGE,
                            "option y=%lld: the number of rdb leaders must be a power of two "
                            "<= P=%d",
                            (long long)yy, P);
    if (hy) {
        y = (int)yy;
    } else if (hx) {
        int64_t want = (P + ((int64_t)1 << (x - 1)) - 1) >> (x - 1);
        y = 1 << cs_coll_ceil_log2(want);
        if (y > P)
            return cs_error_set(err, CS_ERR_RANGE,
                                "option x=1 (no binomial rounds, pure rdb) needs P a power of two, "
                                "got P=%d; use x>=2 or allgather/rdb",
                                P);
    } else {
        int s = (int)ceil(sqrt((double)P));
        y = 1 << floor_log2(s);
    }
    if (hx && hy) {
        int k = cs_coll_ceil_log2((P + y - 1) / y);
        if (k + 1 != x)
            return cs_error_set(err, CS_ERR_RANGE,
                                "options x=%lld and y=%d disagree for P=%d: y=%d leaders means "
                                "x=%d",
                                (long long)x, y, P, y, k + 1);
    }
    *y_out = y;
    return CS_OK;
}

/* First rank of hybrid group g (g in [0, y]). */
static int hyb_start(int P, int y, int g)
{
    return g * (P / y) + (g < P % y ? g : P % y);
}

/* Binomial broadcast of [off, off+len) from base to ranks [base, base+s):
 * the gather tree below run backwards (parent of i is i - lowbit(i)), the
 * root serving its biggest subtree first (i + 2^(k-1), then ..., then
 * i + 1), each after the previous transfer completed.  Used in reverse of
 * the gather, the tree crosses a chip boundary once when the group spans
 * both chips (gather + broadcast: 2 BIF messages, reference §3.2). */
static void emit_group_bcast(cs_coll_builder_t *b, int base, int s, int64_t off, int64_t len,
                             int tag)
{
    for (int i = 0; i < s; i++) {
        int lb = i ? lowbit(i) : 1 << 30, d = 1;
        if (i) {
            drecv(b, base + i, base + i - lb, off, len, tag);
            cs_coll_wait(b, base + i);
        }
        while (2 * d < lb && i + 2 * d < s)
            d *= 2;
        for (; d >= 1; d /= 2) {
            if (d < lb && i + d < s) {
                dsend(b, base + i, base + i + d, off, len, tag);
                cs_coll_wait(b, base + i);
            }
        }
    }
}

/* Binomial gather of each group's blocks to its leader (round j: index i
 * with lowest set bit 2^j sends its blocks [i, i+2^j) to i - 2^j), then rdb
 * all-gather among the leaders (round j: leader l and l XOR 2^j swap all
 * they hold), then a binomial broadcast of the whole buffer from each
 * leader to its group (emit_group_bcast). */
static void emit_hybrid_allgather(cs_coll_builder_t *b, const blocks_t *bl, int y, int tag)
{
    int P = bl->P, ly = floor_log2(y);
    int64_t all = blk(bl, P);
    for (int g = 0; g < y; g++) {
        int base = hyb_start(P, y, g), s = hyb_start(P, y, g + 1) - base;
        for (int i = 0; i < s; i++) {
            int lb = i ? lowbit(i) : 1 << 30;
            for (int d = 1; d < lb && i + d < s; d *= 2) {
                int hi = i + 2 * d < s ? i + 2 * d : s;
                drecv(b, base + i, base + i + d, blk(bl, base + i + d), blk(bl, base + hi) -
                             blk(bl, base + i + d), tag);
            }
            cs_coll_wait(b, base + i);
            if (i) {
                int hi = i + lb < s ? i + lb : s;
                dsend(b, base + i, base + i - lb, blk(bl, base + i),
                             blk(bl, base + hi) - blk(bl, base + i), tag);
                cs_coll_wait(b, base + i);
            }
        }
    }
    for (int j = 0; j < ly; j++) {
        int d = 1 << j;
        for (int l = 0; l < y; l++) {
            int p = l ^ d, mine = l & ~(d - 1), theirs = p & ~(d - 1);
            int r = hyb_start(P, y, l), pr = hyb_start(P, y, p);
            int64_t mo = blk(bl, hyb_start(P, y, mine)), mh = blk(bl, hyb_start(P, y, mine + d));
            int64_t to = blk(bl, hyb_start(P, y, theirs)), th = blk(bl, hyb_start(P, y, theirs + d));
            dsend(b, r, pr, mo, mh - mo, tag + 1 + j);
            drecv(b, r, pr, to, th - to, tag + 1 + j);
            cs_coll_wait_recvs(b, r); /* the blocks sent are never written again */
        }
    }
    for (int g = 0; g < y; g++) {
        int base = hyb_start(P, y, g);
        emit_group_bcast(b, base, hyb_start(P, y, g + 1) - base, 0, all, tag + 64);
    }
}

static int build_allgather_hybrid(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    blocks_t bl = {a->P, 0, a->bytes, 0};
    int y, rc;
    if ((rc = hybrid_shape(a, &y, err)))
        return rc;
    emit_hybrid_allgather(b, &bl, y, TAG(0));
    return CS_OK;
}

/* HybridA: binomial reduce of [0, n) inside each group, rdb all-reduce
 * among the y leaders (round j: XOR 2^j, so for P = 16, k = 2 the paper's
 * 0<->4 / 8<->12 then 0<->8 / 4<->12), binomial broadcast inside each group. */
static int build_allreduce_hybrid_a(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, y, rc;
    int64_t n = a->bytes;
    int32_t *leaders;
    if ((rc = hybrid_shape(a, &y, err)))
        return rc;
    for (int g = 0; g < y; g++) {
        int base = hyb_start(P, y, g), s = hyb_start(P, y, g + 1) - base;
        for (int i = 0; i < s; i++) {
            int lb = i ? lowbit(i) : 1 << 30;
            for (int d = 1; d < lb && i + d < s; d *= 2)
                drecv_reduce(b, base + i, base + i + d, 0, n, TAG(0));
            cs_coll_wait(b, base + i);
            if (i) {
                dsend(b, base + i, base + i - lb, 0, n, TAG(0));
                cs_coll_wait(b, base + i);
            }
        }
    }
    leaders = cs_malloc((size_t)y * sizeof *leaders);
    for (int g = 0; g < y; g++)
        leaders[g] = hyb_start(P, y, g);
    emit_rdb_allreduce(b, leaders, y, 0, n, TAG(1), 0);
    free(leaders);
    for (int g = 0; g < y; g++) {
        int base = hyb_start(P, y, g);
        emit_group_bcast(b, base, hyb_start(P, y, g + 1) - base, 0, n, TAG(2));
    }
    return CS_OK;
}

/* Rabenseifner's reduce-scatter (recursive vector and distance halving:
 * step s exchanges with XOR pof2/2^s, as the paper states for HybridB),
 * leaving block r of bl (cs_coll_split of n into P) reduced at rank r.
 * Any P: with pof2 the largest power of two <= P and rem = P - pof2, rank
 * 2i+1 (i < rem) first hands its whole vector to 2i; virtual rank v then
 * stands for ranks {2v, 2v+1} (v < rem) or {v + rem}, so every virtual
 * block is a contiguous run of real blocks; at the end 2i passes block 2i+1
 * back. */
static int vfirst(int v, int rem) { return v <= rem ? 2 * v : v + rem; }

static void emit_rs_halving(cs_coll_builder_t *b, const blocks_t *bl, int tag)
{
    int P = bl->P, pof2 = 1 << floor_log2(P), rem = P - pof2, L = floor_log2(pof2);
    int64_t n = blk(bl, P);
    for (int i = 0; i < rem; i++) {
        dsend(b, 2 * i + 1, 2 * i, 0, n, tag);
        drecv_reduce(b, 2 * i, 2 * i + 1, 0, n, tag);
        cs_coll_wait(b, 2 * i);
        cs_coll_wait(b, 2 * i + 1);
    }
    for (int s = 1; s <= L; s++) {
        int d = pof2 >> s;
        for (int v = 0; v < pof2; v++) {
            int pv = v ^ d, lo = v & ~(2 * d - 1);
            int keep = (v & d) ? lo + d : lo, give = (v & d) ? lo : lo + d;
            int64_t ko = blk(bl, vfirst(keep, rem)), kh = blk(bl, vfirst(keep + d, rem));
            int64_t go = blk(bl, vfirst(give, rem)), gh = blk(bl, vfirst(give + d, rem));
            int r = vfirst(v, rem), pr = vfirst(pv, rem);
            dsend(b, r, pr, go, gh - go, tag + s);
            drecv_reduce(b, r, pr, ko, kh - ko, tag + s);
            cs_coll_wait_recvs(b, r); /* the half given away is not written again */
        }
    }
    for (int i = 0; i < rem; i++) {
        int64_t o = blk(bl, 2 * i + 1), e = blk(bl, 2 * i + 2);
        dsend(b, 2 * i, 2 * i + 1, o, e - o, tag + L + 1);
        drecv(b, 2 * i + 1, 2 * i, o, e - o, tag + L + 1);
        cs_coll_wait(b, 2 * i);
        cs_coll_wait(b, 2 * i + 1);
    }
}

/* HybridB: reduce-scatter, then the hybrid-x-y all-gather of the reduced
 * blocks (m = n/P). */
static int build_allreduce_hybrid_b(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    blocks_t bl = {a->P, 1, 0, a->bytes};
    int y, rc;
    if ((rc = hybrid_shape(a, &y, err)))
        return rc;
    emit_rs_halving(b, &bl, TAG(0));
    for (int r = 0; r < a->P; r++)
        cs_coll_wait(b, r);
    emit_hybrid_allgather(b, &bl, y, TAG(1));
    return CS_OK;
}

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

static int build_allgather_cns_ring(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, stream, rc;
    int64_t m = a->bytes;
    int32_t *ring, *pos;
    if ((rc = read_stream(a, &stream, err)))
        return rc;
    ring = cs_malloc((size_t)P * sizeof *ring);
    pos = cs_malloc((size_t)P * sizeof *pos);
    cs_coll_ring(a, ring, pos);
    for (int q = 0; q < P; q++) {
        int me = ring[q], succ = ring[(q + 1) % P], pred = ring[(q + P - 1) % P];
        int32_t prev_send = -1, prev_recv = -1;
        for (int k = 0; k < P - 1; k++) {
            int out = ring[((q - k) % P + P) % P], in = ring[((q - 1 - k) % P + P) % P];
            int32_t s = dsend(b, me, succ, (int64_t)out * m, m, TAG(0) + k);
            int32_t r = drecv(b, me, pred, (int64_t)in * m, m, TAG(0) + k);
            if (prev_send >= 0)
                cs_coll_dep(b, s, prev_send, CS_DEP_AFTER_START);
            if (prev_recv >= 0) {
                cs_coll_dep(b, s, prev_recv, stream ? CS_DEP_STREAM : CS_DEP_AFTER);
                cs_coll_dep(b, r, prev_recv, CS_DEP_AFTER);
            }
            prev_send = s;
            prev_recv = r;
        }
    }
    free(ring);
    free(pos);
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
    int32_t *ring, *pos;
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
    pos = cs_malloc((size_t)P * sizeof *pos);
    cs_coll_ring(a, ring, pos);
    for (int q = 0; q < P; q++) {
        int me = ring[q], np = ring[(q + 1) % P], nm = ring[(q + P - 1) % P];
        int32_t last_send = -1, prev_rp = -1, prev_rn = -1;
        for (int k = 0; k < hp; k++) {
            int outp = ring[((q - k) % P + P) % P], inp = ring[((q - 1 - k) % P + P) % P];
            int32_t sp = dsend(b, me, np, (int64_t)outp * m, m, TAG(0) + k);
            int32_t rp = drecv(b, me, nm, (int64_t)inp * m, m, TAG(0) + k);
            if (last_send >= 0)
                cs_coll_dep(b, sp, last_send, CS_DEP_AFTER_START);
            if (prev_rp >= 0) {
                cs_coll_dep(b, sp, prev_rp, stream ? CS_DEP_STREAM : CS_DEP_AFTER);
                cs_coll_dep(b, rp, prev_rp, CS_DEP_AFTER);
            }
            last_send = sp;
            prev_rp = rp;
            if (k < hn) {
                int outn = ring[(q + k) % P], inn = ring[(q + 1 + k) % P];
                int32_t sn = dsend(b, me, nm, (int64_t)outn * m, m, TAG(1) + k);
                int32_t rn = drecv(b, me, np, (int64_t)inn * m, m, TAG(1) + k);
                if (ticks > 0) {
                    int32_t c = cs_coll_calc(b, me, ticks, 0);
                    cs_coll_dep(b, c, sp, CS_DEP_AFTER_START);
                    cs_coll_dep(b, sn, c, CS_DEP_AFTER);
                } else {
                    cs_coll_dep(b, sn, sp, CS_DEP_AFTER_START);
                }
                if (prev_rn >= 0) {
                    cs_coll_dep(b, sn, prev_rn, stream ? CS_DEP_STREAM : CS_DEP_AFTER);
                    cs_coll_dep(b, rn, prev_rn, CS_DEP_AFTER);
                }
                last_send = sn;
                prev_rn = rn;
            }
        }
    }
    free(ring);
    free(pos);
    return CS_OK;
}

/* ===========================================================================
 * Groq: hierarchical all-reduce (paper §5.6, reference §4)
 * ======================================================================== */

/* Stage 1: reduce-scatter inside each group (direct, as on the fully
 * connected Groq node); stage 2: member t of every group all-reduces shard t
 * with its peers in the other groups (inter=direct: direct reduce-scatter +
 * all-gather, the reference's node-pair scheme; inter=rdb: recursive
 * doubling); stage 3: all-gather inside each group.
 *
 * Groups: the machine's hierarchy hint, else (or when g= is given) ranks in
 * ceil(P/g) consecutive groups of near-equal size (at most g each); the
 * default g is 8 (a Groq node) when 8 divides P, else ceil(sqrt P).  With
 * unequal groups there are c = (smallest group size) shards: members
 * 0..c-1 of each group own one each and the others only contribute. */
static int build_allreduce_hierarchical(cs_coll_builder_t *b, cs_error_t *err)
{
    static const char *const inters[] = {"direct", "rdb", NULL};
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, inter = 0, rc, c;
    int64_t g, par, n = a->bytes;
    int64_t dflt = P % 8 == 0 ? 8 : (int64_t)ceil(sqrt((double)P));
    groups_t gr;
    int32_t *col;
    if ((rc = cs_coll_opt_int(a, "g", dflt, 1, P, &g, err)))
        return rc;
    if (a->opts && (rc = cs_spec_get_choice(a->opts, "inter", inters, 0, &inter, err)))
        return rc;
    if ((rc = cs_coll_opt_int(a, "par", 0, 0, 1, &par, err)))
        return rc;
    if ((rc = groups_from_hint(&gr, a, err)))
        return rc;
    if (!gr.G || opt_given(a, "g")) {
        groups_destroy(&gr);
        groups_consecutive(&gr, P, (int)((P + g - 1) / g));
    }
    c = P;
    for (int j = 0; j < gr.G; j++)
        if (gr.gstart[j + 1] - gr.gstart[j] < c)
            c = gr.gstart[j + 1] - gr.gstart[j];
    for (int j = 0; j < gr.G; j++)
        emit_direct_rs(b, gr.members + gr.gstart[j], gr.gstart[j + 1] - gr.gstart[j], c, 0, n,
                       TAG(0), (int)par);
    cs_coll_wait_all(b);
    col = cs_malloc((size_t)gr.G * sizeof *col);
    for (int t = 0; t < c; t++) {
        int64_t so, sl;
        cs_coll_split(n, c, t, &so, &sl);
        for (int j = 0; j < gr.G; j++)
            col[j] = gr.members[gr.gstart[j] + t];
        if (inter == 0) {
            emit_direct_rs(b, col, gr.G, gr.G, so, sl, TAG(1), (int)par);
            emit_direct_ag(b, col, gr.G, gr.G, so, sl, TAG(2), (int)par);
        } else {
            emit_rdb_allreduce(b, col, gr.G, so, sl, TAG(1), 0);
        }
    }
    free(col);
    cs_coll_wait_all(b);
    for (int j = 0; j < gr.G; j++)
        emit_direct_ag(b, gr.members + gr.gstart[j], gr.gstart[j + 1] - gr.gstart[j], c, 0, n,
                       TAG(3), (int)par);
    groups_destroy(&gr);
    return CS_OK;
}

/* ===========================================================================
 * registry
 * ======================================================================== */

static const char *const keys_opt[] = {"opt", NULL};
static const char *const keys_every[] = {"every", NULL};
static const char *const keys_fanin[] = {"fanin", NULL};
static const char *const keys_hybrid[] = {"x", "y", NULL};
static const char *const keys_ring[] = {"stream", NULL};
static const char *const keys_two_way[] = {"stream", "offset", NULL};
static const char *const keys_hier[] = {"g", "inter", "par", NULL};

static const cs_coll_algo_t bcast_opt = {
    CS_COLL_BROADCAST, "opt",
    "binomial tree (Fig. 7), each node serves its children one at a time in decreasing subtree "
    "size, waiting for each transfer; with a hierarchy hint the root first serves one partner "
    "per other group",
    "Cell paper §3.4", "", NULL, build_bcast_opt};

static const cs_coll_algo_t bcast_simple = {
    CS_COLL_BROADCAST, "simple",
    "the same tree as broadcast/opt, every node serving all its children at once (no ACK "
    "waits)",
    "Cell paper §3.4, §4", "", NULL, build_bcast_simple};

static const cs_coll_algo_t bcast_two_to_all = {
    CS_COLL_BROADCAST, "two-to-all",
    "root sends to a partner in the other half (chip), then both serve their half directly",
    "Cell paper §3.4, §4", "opt=1|0 (default 1: wait for the partner before the others)",
    keys_opt, build_bcast_two_to_all};

static const cs_coll_algo_t bcast_hybrid_segmented = {
    CS_COLL_BROADCAST, "hybrid-segmented",
    "root sends all data to a representative of the other half (chip), then each half runs "
    "the two-phase segmented binomial (halves down the tree, then pairwise swap)",
    "Cell paper §3.4", "opt=1|0 (default 1: serve children in decreasing subtree size)",
    keys_opt, build_bcast_hybrid_segmented};

static const cs_coll_algo_t bcast_two_phase = {
    CS_COLL_BROADCAST, "two-phase",
    "the segmented binomial tree: one half of the data down each half of the Fig. 7 tree, "
    "then a pairwise swap of halves",
    "Cell paper §3.4", "opt=1|0 (default 1: serve children in decreasing subtree size)",
    keys_opt, build_bcast_two_phase};

static const cs_coll_algo_t reduce_mailbox = {
    CS_COLL_REDUCE, "mailbox",
    "binomial reduce with a barrier of all ranks after every round (the mailbox variant's "
    "schedule)",
    "Cell paper §3.2", "every=N rounds between barriers (default 1)", keys_every,
    build_reduce_mailbox};

static const cs_coll_algo_t allreduce_rdb_barrier = {
    CS_COLL_ALLREDUCE, "rdb-barrier",
    "recursive-doubling all-reduce with a barrier after every 2 rounds (Rdb-Barrier)",
    "Cell paper §3.5", "every=N rounds between barriers (default 2; 1 = mailbox all-reduce)",
    keys_every, build_allreduce_rdb_barrier};

static const cs_coll_algo_t allreduce_hybrid_a = {
    CS_COLL_ALLREDUCE, "hybrid-a",
    "HybridA-x-y: binomial reduce in groups, rdb all-reduce among the y leaders, binomial "
    "broadcast in groups",
    "Cell paper §3.5",
    "x=switch round, y=leaders (power of two); default y=2^floor(log2 ceil(sqrt P))",
    keys_hybrid, build_allreduce_hybrid_a};

static const cs_coll_algo_t allreduce_hybrid_b = {
    CS_COLL_ALLREDUCE, "hybrid-b",
    "HybridB-x-y: Rabenseifner reduce-scatter (recursive halving), then the hybrid-x-y "
    "all-gather",
    "Cell paper §3.5",
    "x=switch round, y=leaders (power of two); default y=2^floor(log2 ceil(sqrt P))",
    keys_hybrid, build_allreduce_hybrid_b};

static const cs_coll_algo_t allreduce_hierarchical = {
    CS_COLL_ALLREDUCE, "hierarchical",
    "intra-group reduce-scatter, inter-group all-reduce of each shard, intra-group all-gather "
    "(groups from the hierarchy hint or g consecutive ranks)",
    "Groq ISCA'22 §5.6",
    "g=group size (default: hint, else 8 if 8 | P, else ceil(sqrt P)); inter=direct|rdb "
    "(default direct); par=0|1 (1: post a stage's sends at once, for many-port machines)",
    keys_hier, build_allreduce_hierarchical};

static const cs_coll_algo_t allgather_hybrid = {
    CS_COLL_ALLGATHER, "hybrid",
    "hybrid-x-y: binomial gather in groups, rdb all-gather among the y leaders, binomial "
    "broadcast in groups",
    "Cell paper §3.3",
    "x=switch round, y=leaders (power of two); default y=2^floor(log2 ceil(sqrt P))",
    keys_hybrid, build_allgather_hybrid};

static const cs_coll_algo_t allgather_cns_ring = {
    CS_COLL_ALLGATHER, "cns-ring",
    "directed ring in the machine's ring order; each block is forwarded chunk by chunk as it "
    "arrives (streaming)",
    "CNS-1 TR-93-082 §4 (reference §5)", "stream=1|0 (default 1)", keys_ring,
    build_allgather_cns_ring};

static const cs_coll_algo_t allgather_cns_two_way = {
    CS_COLL_ALLGATHER, "cns-two-way",
    "ring in both directions: floor(P/2) hops one way, ceil(P/2)-1 the other, the negative "
    "direction started `offset` after the positive",
    "CNS-1 TR-93-082 §5.2 (reference §6.1)",
    "offset=DURATION (default 160ns = 4ov on the CNS-1); stream=1|0 (default 1)", keys_two_way,
    build_allgather_cns_two_way};

static const cs_coll_algo_t barrier_mailbox = {
    CS_COLL_BARRIER, "mailbox",
    "stepped barrier: notifications in levels of at most `fanin` per receiver, then the "
    "release in reverse",
    "Cell paper §3.2 (reference §3.1)", "fanin=F (default 4, the inbound mailbox depth)",
    keys_fanin, build_barrier_mailbox};

const cs_coll_algo_t *const cs_coll_group_papers[] = {
    &bcast_opt,           &bcast_simple,         &bcast_two_to_all,
    &bcast_two_phase,     &bcast_hybrid_segmented, &reduce_mailbox,    &allreduce_rdb_barrier,
    &allreduce_hybrid_a,  &allreduce_hybrid_b,   &allreduce_hierarchical,
    &allgather_hybrid,    &allgather_cns_ring,   &allgather_cns_two_way,
    &barrier_mailbox,     NULL};
