/*
 * nccl_innet.c - NCCL's allreduce algorithms that reduce in the network
 * (issue 36): CollNet Direct, CollNet Chain and NVLS, as NVIDIA/nccl v2.30
 * runs them (src/device/all_reduce.h: runCollNetDirect, runCollNetChain,
 * runNvls, runNvlsTree).
 *
 * The switches that reduce (SHARP aggregation nodes, an NVSwitch's NVLink
 * SHARP) are ranks of the program: rank P + s is reducing switch s of the
 * hints (coll.h, cs_coll_hints_t.nswitches), placed on the switch.  A
 * switch rank receives every input of a chunk into a buffer that starts
 * empty (reduce mode: --validate follows the data through it), combines
 * them in one calc of the switch's rate (len * sw_num / sw_den ticks: the
 * rate is of result bytes, the inputs arrive in parallel on its ports),
 * then sends the result up to its parent switch or, at the root,
 * multicasts it down; a switch below copies what comes down and
 * multicasts it to its own children.  The network leaves a switch's ports
 * unbound (engine/net.h, node_ports), so its inputs and its multicast
 * take every port at once.  A switch holds at most sw_buf bytes: a rank
 * sends chunk k of a channel only after it received the result of chunk
 * k - w (w = sw_buf / (chunk bytes * channels), at least 1), NCCL's slots
 * of its buffer.
 *
 * The chunk is NCCL's step (nccl.h: the data bytes of one buffer step
 * under the protocol, 512 KiB for Simple; chunk= overrides it), as for
 * every NCCL algorithm but the ring.  The algorithms, per chunk of each
 * channel (data split into nchannels parts, each cut into steps):
 *   collnet-direct  a step is H = L shards of `chunk` bytes (L ranks per
 *                   node, every one a head); every rank sends shard j to
 *                   the node's head j, which reduces them, allreduces the
 *                   shard through the switches with head j of every other
 *                   node, and multicasts the result to the node's ranks.
 *   collnet-chain   a step is one chunk; a chain in each node reduces it
 *                   to the node's first rank (local L-1 to 0), which
 *                   allreduces it through the switches with the other
 *                   nodes' first ranks and sends it back down the chain.
 *   nvls            a step is L shards; every rank sends shard j to its
 *                   node's NVSwitch (a reducing switch every rank of the
 *                   node is linked to), which reduces it; on one node the
 *                   switch multicasts the result; across nodes it gives
 *                   shard j to head j, which allreduces it with the other
 *                   nodes' heads -- through the network's reducing switches
 *                   when they cover them (NCCL's NVLS with CollNet), else
 *                   up and down a binary tree of the heads (NVLS_TREE) --
 *                   and hands it back to the switch, which multicasts it.
 * Nodes are the hints' groups.  Without them CollNet takes every rank as
 * a node of its own and NVLS all ranks as one node.  Not modelled: the
 * GPU kernel's copy time and proxy threads, NCCL's channel-to-head shift,
 * SHARP's own message segmentation (a chunk that does not fit a switch's
 * buffer is refused).  docs/nccl.md.
 */
#include "coll/nccl.h"
#include "coll/coll_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tags: a phase each, per piece (IN_TAG). */
enum {
    IN_TAG_SCATTER = 0, /* intra-node: to the head / up the chain */
    IN_TAG_GATHER,      /* intra-node: from the head / down the chain */
    IN_TAG_NET_UP,      /* towards the root switch */
    IN_TAG_NET_DOWN,    /* from the root switch */
    IN_TAG_TREE_UP,     /* NVLS_TREE between heads */
    IN_TAG_TREE_DOWN,
    IN_TAG_NV_DOWN,     /* head to NVSwitch with the network's result */
    IN_TAG_NV_SHARD,    /* NVSwitch to head with the node's sum */
    IN_TAG_PHASES
};
/* A piece is one shard j of step k of channel ch; every piece gets tags of
 * its own: messages between two ranks become ready in whatever order the
 * run makes them, and matching goes by posting order within a tag.  Tags
 * wrap at 2^30 pieces * phases, far beyond the pieces in flight at once. */
#define IN_TAG(phase, piece) ((int)(((piece) * IN_TAG_PHASES + (phase)) % (INT64_C(1) << 30)))

/* One allreduce through a tree of reducing switches among the members
 * mem[0..n): built once per member set, emitted once per chunk. */
typedef struct nettree {
    int32_t *parent;   /* per switch: the one above it in this tree, or -1 */
    int n;
    int32_t *mem;      /* member ranks */
    int32_t *attach;   /* per member: the switch it sends to */
    int root;
    int32_t *order;    /* the tree's switches, deepest first */
    int norder;
    int32_t *kid_first, *kid; /* per tree switch (index in order): child switches */
    int window;        /* chunks in flight per channel */
    int32_t *ring;     /* [channel][member][window]: the result recvs of the last chunks */
    int64_t *count;    /* [channel]: chunks emitted */
    int nch;
} nettree_t;

typedef struct innet {
    cs_coll_builder_t *b;
    const cs_coll_args_t *a;
    const cs_coll_hints_t *h;
    cs_nccl_opts_t o;
    int P;
    int nnodes, L;      /* nodes of L ranks each (L 0: unequal) */
    cs_coll_groups_t nodes; /* owns the two below */
    const int32_t *lfirst; /* nnodes + 1 offsets into local */
    const int32_t *local;  /* the ranks of each node, in rank order */
    int32_t *mem, *pre, *got; /* per node, for a piece: its member rank (a head),
                                 the op its send waits for, its result */
} innet_t;

static const char *const innet_keys[] = {CS_NCCL_KEYS, NULL};

#define NO_SWITCH_TEXT                                                                        \
    "it needs switches that reduce in the network: declare them with net:...,sharp=leaf|"     \
    "spine|all (SHARP), net:gen=twotier,nvswitch=1 (an NVSwitch per node), or a reducing "    \
    "switch in a network file (GraphML node attribute reduce=BW, an edge list's "             \
    "'switch NAME reduce=BW'); docs/networks.md"

static int64_t sw_ticks(const innet_t *in, int s, int64_t len)
{
    __int128 t = (__int128)len * in->h->sw_num[s];
    int64_t den = in->h->sw_den[s];
    return (int64_t)((t + den - 1) / den);
}

static int sw_is_member(const cs_coll_hints_t *h, int s, int r)
{
    for (int32_t i = h->sw_first[s]; i < h->sw_first[s + 1]; i++)
        if (h->sw_member[i] == r)
            return 1;
    return 0;
}

static int sw_depth(const int32_t *parent, int S, int s)
{
    int d = 0;
    for (int x = parent[s]; x >= 0 && d <= S; x = parent[x])
        d++;
    return d;
}

static void innet_free(innet_t *in)
{
    cs_coll_groups_destroy(&in->nodes);
    free(in->mem);
    free(in->pre);
    free(in->got);
}

/* The nodes: the hints' groups (their ids as they are, empty ones kept),
 * or (group_each) every rank a node of its own, or one node of all ranks;
 * cs_coll_groups_* lists each node's ranks in rank order. */
static int innet_nodes(innet_t *in, int group_each, cs_error_t *err)
{
    const cs_coll_hints_t *h = in->h;
    int P = in->P, G, rc;
    if (h->group && h->ngroups > 1) {
        if ((rc = cs_coll_groups_hint(&in->nodes, in->a, 0, err)))
            return rc;
    } else {
        cs_coll_groups_consecutive(&in->nodes, P, group_each ? P : 1);
    }
    G = in->nnodes = in->nodes.G;
    in->lfirst = in->nodes.start;
    in->local = in->nodes.mem;
    in->mem = cs_malloc((size_t)G * sizeof *in->mem);
    in->pre = cs_malloc((size_t)G * sizeof *in->pre);
    in->got = cs_malloc((size_t)G * sizeof *in->got);
    in->L = in->lfirst[1] - in->lfirst[0];
    for (int g = 1; g < G; g++)
        if (in->lfirst[g + 1] - in->lfirst[g] != in->L)
            in->L = 0;
    return CS_OK;
}

/* Reads the options and finds the nodes; on an error nothing is left to
 * free. */
static int innet_init(innet_t *in, cs_coll_builder_t *b, int group_each, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    const cs_coll_algo_t *algo = cs_coll_builder_algo(b);
    int rc;
    memset(in, 0, sizeof *in);
    in->b = b;
    in->a = a;
    in->h = a->hints;
    in->P = a->P;
    if ((rc = cs_nccl_opts_read(a, &in->o, err)))
        return rc;
    if (!in->h || in->h->nswitches <= 0)
        return cs_error_set(err, CS_ERR_USAGE, "allreduce/%s: the machine has no switch that "
                            "reduces; " NO_SWITCH_TEXT, algo ? algo->name : "nccl");
    cs_nccl_begin(b, &in->o);
    if ((rc = innet_nodes(in, group_each, err)))
        innet_free(in);
    return rc;
}

/* ---- a tree of reducing switches over a member set ------------------------ */

static void tree_free(nettree_t *t)
{
    free(t->parent);
    free(t->mem);
    free(t->attach);
    free(t->order);
    free(t->kid_first);
    free(t->kid);
    free(t->ring);
    free(t->count);
    memset(t, 0, sizeof *t);
}

/* An array of n trees (a shard's or a channel's each), some maybe unbuilt. */
static void trees_free(nettree_t *trees, int n)
{
    for (int i = 0; i < n; i++)
        tree_free(&trees[i]);
    free(trees);
}

/* Finds the tree: every switch's parent is one of the switches above it,
 * the (salt mod their number)th, so that the trees of different shards or
 * channels spread over a fat-tree's spines as SHARP's aggregation trees
 * do; the root is the deepest reducing switch whose subtree (itself and
 * the switches below it by those parents) is linked to every member; each
 * member sends to the deepest switch of that subtree it is linked to.
 * CS_ERR_USAGE when no switch covers them all.  `chunk`: the largest piece
 * one chunk puts on a switch, for the window. */
static int tree_build(const innet_t *in, const int32_t *mem, int n, int64_t chunk,
                      int64_t nsteps, int salt, nettree_t *t, cs_error_t *err)
{
    const cs_coll_hints_t *h = in->h;
    int S = h->nswitches, best = -1, bestd = -1, rc = CS_OK;
    int32_t *cover = cs_calloc((size_t)S, sizeof *cover);
    int32_t *stamp = cs_malloc((size_t)S * sizeof *stamp);
    int32_t *depth = cs_malloc((size_t)S * sizeof *depth);
    uint8_t *in_tree = cs_calloc((size_t)S, 1);
    memset(t, 0, sizeof *t);
    t->parent = cs_malloc((size_t)S * sizeof *t->parent);
    for (int s = 0; s < S; s++) {
        int nup = h->sw_up_first[s + 1] - h->sw_up_first[s];
        t->parent[s] = nup ? h->sw_up[h->sw_up_first[s] + salt % nup] : -1;
    }
    for (int s = 0; s < S; s++) {
        stamp[s] = -1;
        depth[s] = sw_depth(t->parent, S, s);
    }
    /* cover[x]: members linked to a switch of x's subtree */
    for (int i = 0; i < n; i++)
        for (int s = 0; s < S; s++) {
            if (!sw_is_member(h, s, mem[i]))
                continue;
            for (int x = s, d = 0; x >= 0 && d <= S; x = t->parent[x], d++)
                if (stamp[x] != i) {
                    stamp[x] = i;
                    cover[x]++;
                }
        }
    for (int s = 0; s < S; s++)
        if (cover[s] == n && depth[s] > bestd) {
            best = s;
            bestd = depth[s];
        }
    if (best < 0) {
        rc = cs_error_set(err, CS_ERR_USAGE, "no reducing switch has all of ranks %d, %d, ... "
                            "(%d ranks) below it; make the switches above them reduce too "
                          "(sharp=all)", (int)mem[0], n > 1 ? (int)mem[1] : (int)mem[0], n);
        goto out;
    }
    t->n = n;
    t->root = best;
    t->mem = cs_malloc((size_t)n * sizeof *t->mem);
    t->attach = cs_malloc((size_t)n * sizeof *t->attach);
    memcpy(t->mem, mem, (size_t)n * sizeof *mem);
    /* the subtree of the root: switches whose parent chain reaches it */
    for (int s = 0; s < S; s++)
        for (int x = s, d = 0; x >= 0 && d <= S; x = t->parent[x], d++)
            if (x == best) {
                in_tree[s] = 1;
                break;
            }
    for (int i = 0; i < n; i++) {
        int at = -1;
        for (int s = 0; s < S; s++)
            if (in_tree[s] && sw_is_member(h, s, mem[i]) && (at < 0 || depth[s] > depth[at]))
                at = s;
        t->attach[i] = at;
    }
    /* keep the switches on a member's way up, deepest first */
    memset(in_tree, 0, (size_t)S);
    for (int i = 0; i < n; i++)
        for (int x = t->attach[i]; x >= 0 && !in_tree[x]; x = t->parent[x]) {
            in_tree[x] = 1;
            if (x == best)
                break;
        }
    t->order = cs_malloc((size_t)S * sizeof *t->order);
    for (int d = S; d >= 0; d--)
        for (int s = 0; s < S; s++)
            if (in_tree[s] && depth[s] == d)
                t->order[t->norder++] = s;
    t->kid_first = cs_calloc((size_t)t->norder + 1, sizeof *t->kid_first);
    t->kid = cs_malloc((size_t)(t->norder ? t->norder : 1) * sizeof *t->kid);
    for (int k = 0, nk = 0; k < t->norder; k++) {
        t->kid_first[k] = nk;
        for (int c = 0; c < t->norder; c++)
            if (t->order[c] != best && t->parent[t->order[c]] == t->order[k])
                t->kid[nk++] = t->order[c];
        t->kid_first[k + 1] = nk;
    }
    /* chunks in flight: what the smallest buffer of the tree holds */
    int64_t w = nsteps > 0 ? nsteps : 1;
    for (int k = 0; k < t->norder; k++) {
        int s = t->order[k];
        int64_t fit = h->sw_buf[s] / (chunk * in->o.nchannels > 0 ? chunk * in->o.nchannels : 1);
        if (chunk > h->sw_buf[s]) {
            tree_free(t);
            rc = cs_error_set(err, CS_ERR_RANGE, "chunk: a piece of %lld bytes does not fit the "
                              "%lld bytes of reducing switch %d's buffer; lower chunk= or give "
                              "the switch more buffer (sharp_buf=, nvls_buf=)", (long long)chunk,
                              (long long)h->sw_buf[s], s);
            goto out;
        }
        w = fit < 1 ? 1 : fit < w ? fit : w;
    }
    t->window = (int)w;
    t->nch = in->o.nchannels;
    t->ring = cs_malloc((size_t)t->nch * (size_t)n * (size_t)w * sizeof *t->ring);
    for (size_t i = 0; i < (size_t)t->nch * (size_t)n * (size_t)w; i++)
        t->ring[i] = -1;
    t->count = cs_calloc((size_t)t->nch, sizeof *t->count);
out:
    free(cover);
    free(stamp);
    free(depth);
    free(in_tree);
    return rc;
}

/* A switch's input: `sw` receives [off, off+len) from `src` into its
 * buffer, where it is reduced (--validate follows the data), and its calc
 * of the chunk waits for it. */
static void sw_input(const innet_t *in, int sw, int src, int64_t off, int64_t len, int tag,
                     int32_t calc)
{
    int32_t r = cs_coll_recv(in->b, sw, src, off, len, tag);
    cs_coll_set_data(in->b, r, off, len, CS_DATA_REDUCE);
    cs_coll_dep(in->b, calc, r, CS_DEP_AFTER);
}

/* One chunk [off, off+len) of channel ch through the tree: member i sends
 * after pre[i] (-1: nothing) and after its result of the chunk `window`
 * chunks back; its result recv is written to got[i]. */
static void tree_emit(const innet_t *in, nettree_t *t, int ch, int64_t piece, int64_t off,
                      int64_t len, const int32_t *pre, int32_t *got)
{
    cs_coll_builder_t *b = in->b;
    int P = in->P, up = IN_TAG(IN_TAG_NET_UP, piece), dn = IN_TAG(IN_TAG_NET_DOWN, piece);
    int64_t k = t->count[ch]++;
    int32_t *ring = t->ring + (size_t)ch * (size_t)t->n * (size_t)t->window;
    int32_t *dst = cs_malloc(((size_t)t->n + (size_t)t->norder) * sizeof *dst);
    for (int i = 0; i < t->n; i++) {
        int32_t s = cs_coll_send(b, t->mem[i], P + t->attach[i], off, len, up);
        int32_t old = ring[(size_t)i * (size_t)t->window + (size_t)(k % t->window)];
        cs_coll_dep(b, s, pre ? pre[i] : -1, CS_DEP_AFTER);
        cs_coll_dep(b, s, old, CS_DEP_AFTER);
    }
    /* switches bottom-up: reduce what their children send */
    int32_t *ready = cs_malloc((size_t)t->norder * sizeof *ready);
    for (int k2 = 0; k2 < t->norder; k2++) {
        int s = t->order[k2], rank = P + s;
        int32_t calc = cs_coll_calc(b, rank, sw_ticks(in, s, len), 0);
        for (int i = 0; i < t->n; i++)
            if (t->attach[i] == s)
                sw_input(in, rank, t->mem[i], off, len, up, calc);
        for (int32_t c = t->kid_first[k2]; c < t->kid_first[k2 + 1]; c++)
            sw_input(in, rank, P + t->kid[c], off, len, up, calc);
        ready[k2] = calc;
        if (s != t->root) {
            int32_t sd = cs_coll_send(b, rank, P + t->parent[s], off, len, up);
            cs_coll_dep(b, sd, calc, CS_DEP_AFTER);
        }
    }
    /* top-down: the root multicasts, the others copy and pass it on */
    for (int k2 = t->norder - 1; k2 >= 0; k2--) {
        int s = t->order[k2], rank = P + s, nd = 0;
        int32_t have = ready[k2];
        if (s != t->root)
            have = cs_coll_recv(b, rank, P + t->parent[s], off, len, dn);
        for (int32_t c = t->kid_first[k2]; c < t->kid_first[k2 + 1]; c++)
            dst[nd++] = P + t->kid[c];
        for (int i = 0; i < t->n; i++)
            if (t->attach[i] == s)
                dst[nd++] = t->mem[i];
        int32_t m = cs_coll_mcast(b, rank, dst, nd, off, len, dn);
        cs_coll_dep(b, m, have, CS_DEP_AFTER);
    }
    for (int i = 0; i < t->n; i++) {
        got[i] = cs_coll_recv(b, t->mem[i], P + t->attach[i], off, len, dn);
        ring[(size_t)i * (size_t)t->window + (size_t)(k % t->window)] = got[i];
    }
    free(ready);
    free(dst);
}

/* ---- steps ------------------------------------------------------------------ */

/* Channel ch's part of the vector and the number of steps of `step` bytes
 * it takes. */
static void channel_part(const innet_t *in, int ch, int64_t step, int64_t *base, int64_t *len,
                         int64_t *nsteps)
{
    cs_coll_split(in->a->bytes, in->o.nchannels, ch, base, len);
    *nsteps = (*len + step - 1) / step;
}

/* The most steps any channel takes (for the trees' windows). */
static int64_t max_steps(const innet_t *in, int64_t step)
{
    int64_t most = 0, base, len, ns;
    for (int ch = 0; ch < in->o.nchannels; ch++) {
        channel_part(in, ch, step, &base, &len, &ns);
        most = ns > most ? ns : most;
    }
    return most;
}

/* The walk every algorithm makes over the vector: step k of every channel
 * in turn (channel_part), then step k + 1, a step of `step` bytes (short at
 * a channel's end) cut into `nshard` shards by cs_coll_split; a piece is
 * one non-empty shard, numbered (k * nchannels + ch) * nshard + j for its
 * tags.  One home for that order, so that the three algorithms emit their
 * pieces alike (ops and tags follow it). */
typedef struct piece {
    int64_t k;           /* step of the channel */
    int ch, j;           /* channel, shard of the step */
    int64_t off, len;    /* the shard's bytes of the vector */
    int64_t id;          /* the piece's number (IN_TAG) */
} piece_t;

typedef struct walk {
    const innet_t *in;
    int64_t step;
    int nshard;
    int64_t k;
    int ch, j, any, done;
    int64_t so, sl;      /* the current step's slice of the vector */
} walk_t;

static void walk_start(walk_t *w, const innet_t *in, int64_t step, int nshard)
{
    memset(w, 0, sizeof *w);
    w->in = in;
    w->step = step;
    w->nshard = nshard;
    w->ch = -1;
    w->j = nshard; /* as if a slice had just ended: the first call takes channel 0 */
}

/* The next piece into *p: 1, or 0 once a round of k has no channel left
 * with a step k. */
static int walk_next(walk_t *w, piece_t *p)
{
    while (!w->done) {
        if (w->j >= w->nshard) { /* the next channel's step k */
            int64_t base, clen, ns;
            if (++w->ch >= w->in->o.nchannels) {
                if (!w->any) {
                    w->done = 1;
                    break;
                }
                w->k++;
                w->ch = 0;
                w->any = 0;
            }
            channel_part(w->in, w->ch, w->step, &base, &clen, &ns);
            if (w->k >= ns)
                continue; /* j stays past the shards: on to the next channel */
            w->any = 1;
            w->j = 0;
            w->so = base + w->k * w->step;
            w->sl = clen - w->k * w->step < w->step ? clen - w->k * w->step : w->step;
        }
        int j = w->j++;
        cs_coll_split(w->sl, w->nshard, j, &p->off, &p->len);
        if (!p->len)
            continue;
        p->off += w->so;
        p->k = w->k;
        p->ch = w->ch;
        p->j = j;
        p->id = (w->k * w->in->o.nchannels + w->ch) * w->nshard + j;
        return 1;
    }
    return 0;
}

/* A join on `rank` after ops[0..n) (-1 entries skipped); -1 when none. */
static int32_t join_after(const innet_t *in, int rank, const int32_t *ops, int n)
{
    int32_t j, any = -1, cnt = 0;
    for (int i = 0; i < n; i++)
        if (ops[i] >= 0) {
            any = ops[i];
            cnt++;
        }
    if (cnt <= 1)
        return any;
    j = cs_coll_join(in->b, rank);
    for (int i = 0; i < n; i++)
        cs_coll_dep(in->b, j, ops[i], CS_DEP_AFTER);
    return j;
}

/* Head j of every node (its j-th rank) into mem[0..nnodes): the members
 * of shard j's allreduce across nodes. */
static void node_heads(const innet_t *in, int j, int32_t *mem)
{
    for (int g = 0; g < in->nnodes; g++)
        mem[g] = in->local[in->lfirst[g] + j];
}

/* Node g's ranks but `skip` (-1: none) into dst, then, if any, one
 * multicast of the piece from `from` to them after `after` and each one's
 * recv (into rcv[i] when rcv is given); returns their number. */
static int node_mcast(const innet_t *in, int g, int from, int skip, const piece_t *pc, int tag,
                      int32_t after, int32_t *dst, int32_t *rcv)
{
    int nd = 0;
    for (int32_t i = in->lfirst[g]; i < in->lfirst[g + 1]; i++)
        if (in->local[i] != skip)
            dst[nd++] = in->local[i];
    if (!nd)
        return 0;
    int32_t m = cs_coll_mcast(in->b, from, dst, nd, pc->off, pc->len, tag);
    cs_coll_dep(in->b, m, after, CS_DEP_AFTER);
    for (int i = 0; i < nd; i++) {
        int32_t r = cs_coll_recv(in->b, dst[i], from, pc->off, pc->len, tag);
        if (rcv)
            rcv[i] = r;
    }
    return nd;
}

/* ---- CollNet Direct -------------------------------------------------------- */

static int build_direct(cs_coll_builder_t *b, cs_error_t *err)
{
    innet_t in;
    int rc = innet_init(&in, b, 1, err);
    if (rc)
        return rc;
    const int L = in.L, G = in.nnodes;
    if (!L) {
        innet_free(&in);
        return cs_error_set(err, CS_ERR_USAGE, "allreduce/nccl-collnet-direct: every node "
                            "needs the same number of ranks (each a head); place the ranks so "
                            "(--ranks a multiple of the ranks per node)");
    }
    int64_t step = in.o.step * L;
    nettree_t *trees = cs_calloc((size_t)L, sizeof *trees);
    int32_t *mem = in.mem, *pre = in.pre, *got = in.got;
    int32_t *calcs = cs_malloc((size_t)L * sizeof *calcs);
    int32_t *dst = cs_malloc((size_t)L * sizeof *dst);
    int64_t ns_max = max_steps(&in, step);
    for (int j = 0; j < L && G > 1 && !rc; j++) {
        node_heads(&in, j, mem);
        rc = tree_build(&in, mem, G, in.o.step, ns_max, j, &trees[j], err);
    }
    if (G == 1 && !rc) /* one node: the "network" is the node's own switch */
        rc = cs_error_set(err, CS_ERR_USAGE, "the %d rank%s one node, CollNet has no "
                          "network to reduce in (run allreduce/nccl-nvls, or give the ranks "
                          "nodes of their own)", in.P, in.P == 1 ? " is" : "s are");
    walk_t w;
    piece_t pc;
    walk_start(&w, &in, step, L);
    while (!rc && walk_next(&w, &pc)) {
        int j = pc.j, tag = IN_TAG(IN_TAG_SCATTER, pc.id);
        /* scatter: every rank's shard j to head j, reduced there */
        for (int g = 0; g < G; g++) {
            int head = in.local[in.lfirst[g] + j];
            for (int i = 0; i < L; i++) {
                int r = in.local[in.lfirst[g] + i];
                calcs[i] = -1;
                if (r == head)
                    continue;
                cs_coll_send(b, r, head, pc.off, pc.len, tag);
                calcs[i] = cs_coll_recv_reduce(b, head, r, pc.off, pc.len, tag);
            }
            mem[g] = head;
            pre[g] = join_after(&in, head, calcs, L);
        }
        /* the shard through the switches with head j of every node */
        tree_emit(&in, &trees[j], pc.ch, pc.id, pc.off, pc.len, pre, got);
        /* gather: head j's result to the node's other ranks */
        for (int g = 0; g < G; g++)
            node_mcast(&in, g, mem[g], mem[g], &pc, IN_TAG(IN_TAG_GATHER, pc.id), got[g], dst,
                       NULL);
    }
    trees_free(trees, L);
    free(calcs);
    free(dst);
    innet_free(&in);
    if (rc)
        cs_error_prefix(err, "allreduce/nccl-collnet-direct");
    return rc;
}

/* ---- CollNet Chain ---------------------------------------------------------- */

static int build_chain(cs_coll_builder_t *b, cs_error_t *err)
{
    innet_t in;
    int rc = innet_init(&in, b, 1, err);
    if (rc)
        return rc;
    const int G = in.nnodes;
    int64_t step = in.o.step;
    /* a tree per channel, spread over the switches above (tree_build) */
    nettree_t *trees = cs_calloc((size_t)in.o.nchannels, sizeof *trees);
    int32_t *mem = in.mem, *pre = in.pre, *got = in.got;
    node_heads(&in, 0, mem); /* each node's first rank */
    if (G == 1)
        rc = cs_error_set(err, CS_ERR_USAGE, "all %d ranks are one node, CollNet has no network "
                          "to reduce in (run allreduce/nccl-nvls, or give the ranks nodes of "
                          "their own)", in.P);
    else
        for (int ch = 0; ch < in.o.nchannels && !rc; ch++)
            rc = tree_build(&in, mem, G, in.o.step, max_steps(&in, step), ch, &trees[ch], err);
    walk_t w;
    piece_t pc;
    walk_start(&w, &in, step, 1);
    while (!rc && walk_next(&w, &pc)) {
        int64_t off = pc.off, len = pc.len;
        int up = IN_TAG(IN_TAG_SCATTER, pc.id), down = IN_TAG(IN_TAG_GATHER, pc.id);
        /* up the chain: local n-1 -> ... -> 0, reducing */
        for (int g = 0; g < G; g++) {
            int n = in.lfirst[g + 1] - in.lfirst[g];
            const int32_t *loc = in.local + in.lfirst[g];
            int32_t last = -1;
            for (int i = n - 1; i >= 1; i--) {
                int32_t s = cs_coll_send(b, loc[i], loc[i - 1], off, len, up);
                cs_coll_dep(b, s, last, CS_DEP_AFTER);
                last = cs_coll_recv_reduce(b, loc[i - 1], loc[i], off, len, up);
            }
            pre[g] = last;
        }
        tree_emit(&in, &trees[pc.ch], pc.ch, pc.id, off, len, pre, got);
        /* down the chain: 0 -> 1 -> ... -> n-1, copying */
        for (int g = 0; g < G; g++) {
            int n = in.lfirst[g + 1] - in.lfirst[g];
            const int32_t *loc = in.local + in.lfirst[g];
            int32_t have = got[g];
            for (int i = 0; i + 1 < n; i++) {
                int32_t s = cs_coll_send(b, loc[i], loc[i + 1], off, len, down);
                cs_coll_dep(b, s, have, CS_DEP_AFTER);
                have = cs_coll_recv(b, loc[i + 1], loc[i], off, len, down);
            }
        }
    }
    trees_free(trees, in.o.nchannels);
    innet_free(&in);
    if (rc)
        cs_error_prefix(err, "allreduce/nccl-collnet-chain");
    return rc;
}

/* ---- NVLS ------------------------------------------------------------------- */

/* The NVSwitch of node g: the reducing switch linked to every rank of the
 * node with the fewest members (a node's own switch before a leaf that
 * takes several nodes), lowest index on ties; -1 when none. */
static int node_switch(const innet_t *in, int g)
{
    const cs_coll_hints_t *h = in->h;
    int best = -1;
    for (int s = 0; s < h->nswitches; s++) {
        int all = 1;
        for (int32_t i = in->lfirst[g]; i < in->lfirst[g + 1] && all; i++)
            all = sw_is_member(h, s, in->local[i]);
        if (all && (best < 0 || h->sw_first[s + 1] - h->sw_first[s] <
                                    h->sw_first[best + 1] - h->sw_first[best]))
            best = s;
    }
    return best;
}

/* NVLS_TREE between the heads mem[0..G) (node order): a binary tree, node
 * g's children 2g+1 and 2g+2, reduced up to node 0 and sent back down;
 * got[g] gets the op after which head g holds the result. */
static void heads_tree(const innet_t *in, int64_t piece, const int32_t *mem, int G, int64_t off,
                       int64_t len, const int32_t *pre, int32_t *got)
{
    cs_coll_builder_t *b = in->b;
    int up = IN_TAG(IN_TAG_TREE_UP, piece), dn = IN_TAG(IN_TAG_TREE_DOWN, piece);
    int32_t *done = cs_malloc((size_t)G * sizeof *done);
    for (int g = G - 1; g >= 0; g--) { /* children before parents */
        int32_t parts[3] = {pre[g], -1, -1};
        for (int c = 1; c <= 2; c++)
            if (2 * g + c < G) {
                /* into the buffer once the switch's shard is in it: after pre */
                int32_t r = cs_coll_recv(b, mem[g], mem[2 * g + c], off, len, up);
                cs_coll_set_data(b, r, off, len, CS_DATA_REDUCE);
                cs_coll_dep(b, r, pre[g], CS_DEP_AFTER);
                parts[c] = cs_coll_calc(b, mem[g], 0, len);
                cs_coll_dep(b, parts[c], r, CS_DEP_AFTER);
            }
        done[g] = join_after(in, mem[g], parts, 3);
        if (g > 0) {
            int32_t s = cs_coll_send(b, mem[g], mem[(g - 1) / 2], off, len, up);
            cs_coll_dep(b, s, done[g], CS_DEP_AFTER);
        }
    }
    for (int g = 0; g < G; g++) {
        got[g] = g == 0 ? done[0] : cs_coll_recv(b, mem[g], mem[(g - 1) / 2], off, len, dn);
        for (int c = 1; c <= 2; c++)
            if (2 * g + c < G) {
                int32_t s = cs_coll_send(b, mem[g], mem[2 * g + c], off, len, dn);
                cs_coll_dep(b, s, got[g], CS_DEP_AFTER);
            }
    }
    free(done);
}

/* The NVSwitch's slot of rank r for the piece's shard: wring is
 * [channel][rank][shard][window], and holds the op after which r has the
 * result of that shard `window` steps back (its buffer's slots). */
static int32_t *nv_slot(int32_t *wring, const piece_t *pc, int P, int L, int64_t window, int r)
{
    return wring + (((size_t)pc->ch * (size_t)P + (size_t)r) * (size_t)L + (size_t)pc->j) *
                       (size_t)window + (size_t)(pc->k % window);
}

static int build_nvls(cs_coll_builder_t *b, cs_error_t *err)
{
    innet_t in;
    int rc = innet_init(&in, b, 0, err);
    if (rc)
        return rc;
    const int G = in.nnodes, P = in.P;
    const cs_coll_hints_t *h = in.h;
    int L = in.L;
    if (!L && G > 1) {
        innet_free(&in);
        return cs_error_set(err, CS_ERR_USAGE, "allreduce/nccl-nvls: every node needs the same "
                            "number of ranks across nodes (each a head); place the ranks so");
    }
    if (!L)
        L = in.lfirst[1];
    int64_t step = in.o.step * L, ns_max = max_steps(&in, step);
    int32_t *nvs = cs_malloc((size_t)G * sizeof *nvs);
    int32_t *wring = NULL;
    int64_t window = ns_max > 0 ? ns_max : 1;
    for (int g = 0; g < G && !rc; g++) {
        nvs[g] = node_switch(&in, g);
        if (nvs[g] < 0) {
            rc = cs_error_set(err, CS_ERR_USAGE, "allreduce/nccl-nvls: no reducing switch is "
                              "linked to every rank of %s (ranks %d..); NVLS needs an NVSwitch "
                              "per node (net:gen=twotier,nvswitch=1) or one switch of all ranks "
                              "declared reducing", G > 1 ? "a node" : "the job",
                              (int)in.local[in.lfirst[g]]);
            break;
        }
        int64_t per = in.o.step * L * in.o.nchannels, fit = h->sw_buf[nvs[g]] / per;
        if (in.o.step > h->sw_buf[nvs[g]])
            rc = cs_error_set(err, CS_ERR_RANGE, "allreduce/nccl-nvls: chunk: a piece of %lld "
                              "bytes does not fit the %lld bytes of the NVSwitch's buffer; "
                              "lower chunk= or raise nvls_buf=", (long long)in.o.step,
                              (long long)h->sw_buf[nvs[g]]);
        window = fit < 1 ? 1 : fit < window ? fit : window;
    }
    /* across nodes: CollNet through the network's switches when they cover
     * the heads, else the heads' tree */
    nettree_t *trees = cs_calloc((size_t)L, sizeof *trees);
    int use_net = 0;
    int32_t *mem = in.mem, *pre = in.pre, *got = in.got;
    int32_t *dst = cs_malloc((size_t)(L > G ? L : G) * sizeof *dst);
    int32_t *rcv = cs_malloc((size_t)(L > G ? L : G) * sizeof *rcv);
    if (!rc && G > 1) {
        cs_error_t probe;
        use_net = 1;
        for (int j = 0; j < L && use_net; j++) {
            node_heads(&in, j, mem);
            if (tree_build(&in, mem, G, in.o.step, ns_max, j, &trees[j], &probe) != CS_OK)
                use_net = 0;
        }
        /* the NVSwitches are no part of the heads' network */
        for (int j = 0; j < L && use_net; j++)
            for (int k = 0; k < trees[j].norder; k++)
                for (int g = 0; g < G; g++)
                    if (trees[j].order[k] == nvs[g])
                        use_net = 0;
    }
    /* the NVSwitch's slots: rank r's shard j of step k after its result of step k - window */
    if (!rc) {
        size_t nw = (size_t)in.o.nchannels * (size_t)P * (size_t)L * (size_t)window;
        wring = cs_malloc(nw * sizeof *wring);
        for (size_t i = 0; i < nw; i++)
            wring[i] = -1;
    }
    walk_t w;
    piece_t pc;
    walk_start(&w, &in, step, L);
    while (!rc && walk_next(&w, &pc)) {
        int64_t off = pc.off, len = pc.len, piece = pc.id;
        int up = IN_TAG(IN_TAG_SCATTER, piece), down = IN_TAG(IN_TAG_GATHER, piece);
        int shard = IN_TAG(IN_TAG_NV_SHARD, piece), back = IN_TAG(IN_TAG_NV_DOWN, piece);
        /* every rank's shard j into the node's switch, reduced there */
        int32_t *calc = got; /* reused: the switch's reduction of each node */
        for (int g = 0; g < G; g++) {
            int sw = P + nvs[g];
            calc[g] = cs_coll_calc(b, sw, sw_ticks(&in, nvs[g], len), 0);
            for (int32_t i = in.lfirst[g]; i < in.lfirst[g + 1]; i++) {
                int r = in.local[i];
                int32_t s = cs_coll_send(b, r, sw, off, len, up);
                cs_coll_dep(b, s, *nv_slot(wring, &pc, P, L, window, r), CS_DEP_AFTER);
                sw_input(&in, sw, r, off, len, up, calc[g]);
            }
        }
        if (G == 1) { /* one node: the switch multicasts the result */
            int nd = node_mcast(&in, 0, P + nvs[0], -1, &pc, down, calc[0], dst, rcv);
            for (int i = 0; i < nd; i++)
                *nv_slot(wring, &pc, P, L, window, dst[i]) = rcv[i];
            continue;
        }
        /* across nodes: the switch gives shard j to head j */
        for (int g = 0; g < G; g++) {
            int sw = P + nvs[g], head = in.local[in.lfirst[g] + pc.j];
            int32_t s = cs_coll_send(b, sw, head, off, len, shard);
            cs_coll_dep(b, s, calc[g], CS_DEP_AFTER);
            mem[g] = head;
            pre[g] = cs_coll_recv(b, head, sw, off, len, shard);
        }
        if (use_net)
            tree_emit(&in, &trees[pc.j], pc.ch, piece, off, len, pre, got);
        else
            heads_tree(&in, piece, mem, G, off, len, pre, got);
        /* head j hands the result to the switch, which multicasts it */
        for (int g = 0; g < G; g++) {
            int sw = P + nvs[g], head = mem[g];
            int32_t s = cs_coll_send(b, head, sw, off, len, back);
            cs_coll_dep(b, s, got[g], CS_DEP_AFTER);
            int32_t rv = cs_coll_recv(b, sw, head, off, len, back);
            *nv_slot(wring, &pc, P, L, window, head) = got[g];
            int nd = node_mcast(&in, g, sw, head, &pc, down, rv, dst, rcv);
            for (int i = 0; i < nd; i++)
                *nv_slot(wring, &pc, P, L, window, dst[i]) = rcv[i];
        }
    }
    trees_free(trees, L);
    free(nvs);
    free(wring);
    free(dst);
    free(rcv);
    innet_free(&in);
    return rc;
}

/* ---- op counts --------------------------------------------------------------
 *
 * A bound for all three, so that a program too long is refused before any
 * table is made (the slot rings above grow with the steps).  Pieces (a
 * step's shard on a channel): at most n / chunk + nch (P + 1), a channel's
 * last step being short and L <= P.  Ops a piece: Direct's scatter 3(P-G),
 * joins G, the switch tree 3G + 5S (members' sends and result recvs, and
 * per switch its calc, its recvs, one send up, one recv down, one
 * multicast), the gather P; the chain 3(P-G) + 3G + 5S + 2(P-G); NVLS
 * G + 2P into the switches, 2G to the heads, the heads' tree 8G or the
 * switches' 3G + 5S, 3G + P back: all below 20P + 8S + 8. */
static int64_t innet_max_ops(const cs_coll_args_t *a)
{
    cs_nccl_opts_t o;
    cs_error_t e;
    int64_t P = a->P, S = a->hints ? a->hints->nswitches : 0;
    if (P < 1 || cs_nccl_opts_read(a, &o, &e) || o.step < 1)
        return P < 1 ? 0 : -1;
    __int128 pieces = a->bytes / o.step + (__int128)o.nchannels * (P + 1);
    __int128 n = pieces * (20 * (__int128)P + 8 * (__int128)S + 8);
    return n > INT64_MAX ? INT64_MAX : (int64_t)n;
}

static const cs_coll_algo_t nccl_collnet_direct = {
    CS_COLL_ALLREDUCE, "nccl-collnet-direct",
    "NCCL's CollNet Direct: each rank of a node a head; shard j reduced at head j, through the "
    "network's reducing switches (SHARP) with the other nodes' heads j, multicast in the node; "
    "requires switches that reduce (net: sharp=)",
    "NVIDIA/nccl 2.30, src/device/all_reduce.h (runCollNetDirect)", CS_NCCL_OPTIONS, innet_keys,
    build_direct, innet_max_ops};
static const cs_coll_algo_t nccl_collnet_chain = {
    CS_COLL_ALLREDUCE, "nccl-collnet-chain",
    "NCCL's CollNet Chain: a chain in each node reduces to its first rank, which reduces through "
    "the network's reducing switches (SHARP); back down the chain; requires switches that "
    "reduce (net: sharp=)",
    "NVIDIA/nccl 2.30, src/device/all_reduce.h (runCollNetChain)", CS_NCCL_OPTIONS, innet_keys,
    build_chain, innet_max_ops};
static const cs_coll_algo_t nccl_nvls = {
    CS_COLL_ALLREDUCE, "nccl-nvls",
    "NCCL's NVLS: the node's NVSwitch reduces and multicasts (NVLink SHARP); across nodes each "
    "head's shard through the reducing network (CollNet) or a tree of the heads (NVLS_TREE); "
    "requires a reducing switch per node (net: gen=twotier,nvswitch=1)",
    "NVIDIA/nccl 2.30, src/device/all_reduce.h (runNvls, runNvlsTree)", CS_NCCL_OPTIONS,
    innet_keys, build_nvls, innet_max_ops};

const cs_coll_algo_t *const cs_coll_algos_nccl_innet[] = {&nccl_collnet_direct,
                                                          &nccl_collnet_chain, &nccl_nvls, NULL};
