/*
 * thesis.c - the reduce, allreduce and broadcast patterns of the Cerebras
 * thesis (papers/000, "Reduce/Allreduce collectives on the Cerebras WSE";
 * formulas and schedules collected in reference/cerebras-wse.md §2-§3),
 * written once against the program model so that they run on every machine.
 *
 * Every reduce pattern of the thesis is a reduction tree with *ordered*
 * children: a PE receives its children one after the other, nearest (in the
 * pattern) first, adds each into its own vector ("add + store"), and the
 * stream of its last child is added and sent on to its parent element by
 * element ("add + send", the thesis's *visit*).  So the patterns differ only
 * in the tree they build (pattern_* below), and one emitter (emit_forest,
 * emit_rank) turns any such tree into a program:
 *
 *   for each child c but the last:  recv_reduce(c); wait
 *   last child c:                   recv(c) -> calc (streams from the recv)
 *   parent p:                       send(p)        (streams from that calc)
 *
 * With streaming dependencies (option stream=1, the default) a forward
 * proceeds network unit by network unit, so a chain is pipelined instead of
 * store-and-forward; on the Cerebras machine the same dependency becomes the
 * wavelet-level visit.  stream=0 gives the store-and-forward version
 * (receive everything, then send), the lecture's model.
 *
 * Ties: messages posted at the same tick take a receiver's port in op
 * order, so ranks are emitted in pre-order of the tree (a receiver's nearer
 * children first), which stands in for the thesis's router gating.
 *
 * The thesis reduces to the leftmost PE.  Here the patterns that the thesis
 * defines only for root 0 (scalar, chain, tree, two-phase, pre-order) are
 * relabelled cyclically: rank (root + v) mod P plays PE v.  Left-right,
 * ring and jump are the thesis's own answers to an arbitrary root and use the
 * root where the thesis puts it.
 *
 * Sizes: n bytes (the thesis's B counts 32-bit elements, B = n/4; only the
 * pre-order tree needs B).  n = 0 or P = 1 emit nothing.
 *
 * Not here: the thesis's ring allreduce (§7.2) is the generic ring allreduce
 * over the even/odd ring order (allreduce/ring with that ring as the
 * machine's ring hint), and its butterfly (§7.3) is allreduce/butterfly;
 * the strided-scalar remark of §5.1 is a model observation, not a
 * pattern.  Docs: docs/algorithms/thesis.md.
 */
#include "coll/coll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Tags: one per phase, so that two phases between the same pair of ranks
 * can never match each other's messages. */
enum { TAG_REDUCE = 1, TAG_BCAST = 2, TAG_REDUCE2 = 3, TAG_BCAST2 = 4 };

/* ---- reduction trees ---------------------------------------------------- */

/* A forest over ranks: parent (-1 for a root) and ordered children as
 * first/last child plus next sibling (each rank has one parent, so one
 * sibling link per rank suffices). */
typedef struct rtree {
    int P;
    int32_t *parent, *first, *last, *next;
} rtree_t;

static void tree_init(rtree_t *t, int P)
{
    t->P = P;
    t->parent = cs_malloc((size_t)P * 4 * sizeof(int32_t));
    t->first = t->parent + P;
    t->last = t->first + P;
    t->next = t->last + P;
    for (int i = 0; i < 4 * P; i++)
        t->parent[i] = -1;
}

static void tree_destroy(rtree_t *t) { free(t->parent); }

/* c becomes the last (so far) child of r: r receives it after the others. */
static void tree_add(rtree_t *t, int32_t r, int32_t c)
{
    CS_ASSERT(t->parent[c] < 0 && r != c);
    t->parent[c] = r;
    if (t->last[r] < 0)
        t->first[r] = c;
    else
        t->next[t->last[r]] = c;
    t->last[r] = c;
}

/* The 1D base patterns, applied to an ordered list L[0..k-1] of ranks that
 * reduces to L[0] (the thesis's p0 .. p_{k-1}). */
typedef enum pattern {
    PAT_CHAIN, PAT_TREE, PAT_TWO_PHASE, PAT_SCALAR, PAT_PREORDER,
    /* whole-collective patterns built from a base */
    PAT_LEFT_RIGHT, PAT_RING, PAT_JUMP
} pattern_t;

static const char *const base_names[] = {"chain", "tree", "two-phase", "scalar", "preorder", NULL};
static const char *const any_names[] = {"chain",     "tree",       "two-phase", "scalar",
                                        "preorder",  "left-right", "ring",      "jump", NULL};

typedef struct pcfg {
    pattern_t base;
    int64_t S;       /* two-phase group size; 0 = ceil(sqrt k) of each list */
    int64_t B;       /* pre-order: vector length in 32-bit elements */
    int64_t TR;      /* pre-order: ramp latency in cycles */
} pcfg_t;

/* Scalar (§5.1): every PE's vector goes straight to p0 through the routers
 * (no visits); p0 takes them one after the other, nearest first. */
static void pattern_scalar(rtree_t *t, const int32_t *L, int k)
{
    for (int x = 1; x < k; x++)
        tree_add(t, L[0], L[x]);
}

/* Chain (§5.2): p_{i+1} -> p_i, each PE a visit. */
static void pattern_chain(rtree_t *t, const int32_t *L, int k)
{
    for (int x = 1; x < k; x++)
        tree_add(t, L[x - 1], L[x]);
}

/* Tree (§5.3, Fig. 5.3): in round r every PE with index = 2^r mod 2^(r+1)
 * sends to the PE 2^r to its left; a receiver takes its children in order
 * of distance 1, 2, 4, ...  For P not a power of two the rounds where p0
 * has no partner are simply absent (the thesis's "group p0 with the nearest
 * pair" workaround is not taken: it is only sketched). */
static void pattern_tree(rtree_t *t, const int32_t *L, int k)
{
    for (int j = 0; j < k; j++) {
        int low = j ? (j & -j) : INT32_MAX;
        for (int64_t d = 1; d < low && j + d < k; d *= 2)
            tree_add(t, L[j], L[j + d]);
    }
}

static int64_t isqrt_ceil(int64_t k)
{
    int64_t s = (int64_t)ceil(sqrt((double)k));
    while (s > 1 && (s - 1) * (s - 1) >= k)
        s--;
    while (s * s < k)
        s++;
    return s;
}

/* Two-phase (§5.4, Fig. 5.4): groups of S consecutive PEs assigned from
 * the end (p_{k-1}), so only the group of p0 may be short; a chain inside
 * each group to its leftmost PE (the leader), then a chain over the leaders.
 * A leader takes its own group's result first, then the next leader's
 * stream, which it adds and sends on. */
static void pattern_two_phase(rtree_t *t, const int32_t *L, int k, int64_t S)
{
    int64_t s = S > 0 ? S : isqrt_ceil(k);
    if (s > k)
        s = k;
    int64_t g = (k + s - 1) / s, f = k - s * (g - 1);
    for (int64_t m = 0; m < g; m++) {
        int64_t lead = m ? f + (m - 1) * s : 0, size = m ? s : f;
        for (int64_t x = lead + 1; x < lead + size; x++)
            tree_add(t, L[x - 1], L[x]);
    }
    for (int64_t m = 0; m + 1 < g; m++)
        tree_add(t, L[m ? f + (m - 1) * s : 0], L[f + m * s]);
}

/* Largest P for the O(P^2) pre-order programme. */
#define PREORDER_MAX 8192

/* Optimal pre-order reduce (§5.5, Lemma 5.9), as a schedule: the thesis
 * only evaluates T_OPT, but its minimising split defines a tree.  For a
 * group of k PEs the last thing p0 receives is p_i's stream carrying the
 * reduction of {p_i .. p_{k-1}}, after it has reduced {p0 .. p_{i-1}}:
 *   T(1) = 0
 *   T(k) = min( max(T(k-1) + B, B + k + 2 TR)                    (i = k-1)
 *               max(T(i) + B, T(k-i) + i + 2 TR + 1), 1 <= i < k-1 )
 * Ties keep i = k-1, then the smallest i (as in reference/cerebras_model.py).
 * p0's children are therefore the heads of the successive splits, nearest
 * first, and each head reduces its own group recursively. */
static void pattern_preorder(rtree_t *t, const int32_t *L, int k, int64_t B, int64_t TR)
{
    int64_t *T = cs_malloc(((size_t)k + 1) * sizeof *T);
    int32_t *split = cs_malloc(((size_t)k + 1) * sizeof *split);
    int32_t *stack = cs_malloc(2 * ((size_t)k + 1) * sizeof *stack);
    int32_t *chainv = cs_malloc(((size_t)k + 1) * sizeof *chainv);
    int sp = 0;
    T[1] = 0;
    split[1] = 0;
    for (int p = 2; p <= k; p++) {
        int64_t best = T[p - 1] + B, v;
        if (B + p + 2 * TR > best)
            best = B + p + 2 * TR;
        split[p] = p - 1;
        for (int i = 1; i < p - 1; i++) {
            v = T[i] + B;
            if (T[p - i] + i + 2 * TR + 1 > v)
                v = T[p - i] + i + 2 * TR + 1;
            if (v < best) {
                best = v;
                split[p] = i;
            }
        }
        T[p] = best;
    }
    /* groups (start, len) to expand; no recursion, so a chain of 8192 PEs
     * does not need 8192 stack frames */
    stack[sp++] = 0;
    stack[sp++] = k;
    while (sp) {
        int len = stack[--sp], start = stack[--sp], nc = 0;
        /* the successive splits i1 > i2 > ... of this group: the head of
         * split i is L[start+i] and leads the group [i, previous split) */
        for (int rest = len; rest > 1; rest = split[rest])
            chainv[nc++] = rest;
        for (int c = nc - 1; c >= 0; c--) {
            int i = split[chainv[c]];
            tree_add(t, L[start], L[start + i]);
            stack[sp++] = start + i;
            stack[sp++] = chainv[c] - i;
        }
    }
    free(T);
    free(split);
    free(stack);
    free(chainv);
}

static void pattern_apply(rtree_t *t, const int32_t *L, int k, const pcfg_t *c)
{
    if (k <= 1)
        return;
    switch (c->base) {
    case PAT_CHAIN: pattern_chain(t, L, k); break;
    case PAT_TREE: pattern_tree(t, L, k); break;
    case PAT_TWO_PHASE: pattern_two_phase(t, L, k, c->S); break;
    case PAT_SCALAR: pattern_scalar(t, L, k); break;
    case PAT_PREORDER: pattern_preorder(t, L, k, c->B, c->TR); break;
    default: CS_ASSERT(!"not a base pattern");
    }
}

/* The thesis's even/odd ring (§6.2, Fig. 6.2): 0, 2, 4, ..., then the odd
 * ranks downwards, ..., 5, 3, 1; so neighbours in the ring are two apart
 * except p1 -> p0 and the link between the last even and the last odd. */
static void even_odd_ring(int P, int32_t *ring)
{
    int x = 0;
    for (int r = 0; r < P; r += 2)
        ring[x++] = r;
    for (int r = (P - 1) % 2 ? P - 1 : P - 2; r >= 1; r -= 2)
        ring[x++] = r;
}

/* Builds the tree of a whole 1D reduce to `root` with pattern `pat` (a base
 * pattern relabelled cyclically, or left-right / ring / jump over `base`). */
static int build_1d(rtree_t *t, const cs_coll_args_t *a, int root, pattern_t pat,
                    const pcfg_t *base, cs_error_t *err)
{
    int P = a->P, k = 0;
    int32_t *L = cs_malloc((size_t)P * sizeof *L);
    switch (pat) {
    case PAT_LEFT_RIGHT: {
        /* §6.1: the root joins the side with fewer PEs (the left one on a
         * tie, Lemma 6.1's w.l.o.g.); that side reduces to the root, which
         * then takes the other side's result, reduced to its PE next to the
         * root and streamed in. */
        int left = root, right = P - 1 - root, own_left = left <= right;
        for (int x = root; x >= 0 && x < P; x += own_left ? -1 : 1)
            L[k++] = x;
        pattern_apply(t, L, k, base);
        k = 0;
        for (int x = own_left ? root + 1 : root - 1; x >= 0 && x < P; x += own_left ? 1 : -1)
            L[k++] = x;
        pattern_apply(t, L, k, base);
        if (k)
            tree_add(t, root, L[0]);
        break;
    }
    case PAT_RING: {
        /* §6.2: a chain along the ring from the root's successor to the
         * root; every PE keeps one sender and one receiver whatever the
         * root. */
        int32_t *ring = cs_malloc((size_t)P * sizeof *ring), *pos = cs_malloc((size_t)P * sizeof *pos);
        if (a->hints && a->hints->ring_alt) {
            for (int i = 0; i < P; i++)
                pos[i] = -1;
            for (int i = 0; i < P; i++) {
                int32_t r = a->hints->ring_alt[i];
                if (r < 0 || r >= P || pos[r] >= 0) {
                    free(ring);
                    free(pos);
                    free(L);
                    return cs_error_set(err, CS_ERR_RANGE,
                                        "ring pattern: the machine's alternative ring is not "
                                        "a permutation of ranks 0..%d (entry %d is %d)",
                                        P - 1, i, (int)r);
                }
                ring[i] = r;
                pos[r] = i;
            }
        } else {
            even_odd_ring(P, ring);
            for (int i = 0; i < P; i++)
                pos[ring[i]] = i;
        }
        for (int v = 0; v < P; v++)
            L[k++] = ring[((pos[root] - v) % P + P) % P];
        pattern_chain(t, L, k);
        free(ring);
        free(pos);
        break;
    }
    case PAT_JUMP: {
        /* §6.3: every PE but the root reduces with the base pattern to the
         * end of the row nearer the root (p0 on a tie), skipping the root;
         * that end streams each final element on to the root. */
        int from_left = root <= P - 1 - root;
        for (int i = 0; i < P; i++) {
            int x = from_left ? i : P - 1 - i;
            if (x != root)
                L[k++] = x;
        }
        pattern_apply(t, L, k, base);
        if (k)
            tree_add(t, root, L[0]);
        break;
    }
    default: {
        pcfg_t c = *base;
        c.base = pat;
        for (int v = 0; v < P; v++)
            L[k++] = (root + v) % P;
        pattern_apply(t, L, k, &c);
    }
    }
    free(L);
    return CS_OK;
}

/* 2D (§6.4): every column reduces to the root's row with the base pattern,
 * then that row reduces to the root.  Each axis is relabelled cyclically so
 * that the root's row (column) is the axis's p0.  The row-phase PEs take
 * their column children first, then their row children. */
static void build_2d(rtree_t *t, int rows, int cols, int root, const pcfg_t *base)
{
    int ri = root / cols, cj = root % cols, n = rows > cols ? rows : cols;
    int32_t *L = cs_malloc((size_t)n * sizeof *L);
    for (int c = 0; c < cols; c++) {
        for (int v = 0; v < rows; v++)
            L[v] = ((ri + v) % rows) * cols + c;
        pattern_apply(t, L, rows, base);
    }
    for (int v = 0; v < cols; v++)
        L[v] = ri * cols + (cj + v) % cols;
    pattern_apply(t, L, cols, base);
    free(L);
}

/* ---- emission ------------------------------------------------------------ */

/* A recv that reduces into [off, off+len) plus the calc that does the
 * reduction, streaming from the recv: the calc may add element i as soon as
 * element i has arrived.  (cs_coll_recv_reduce makes its calc wait for the
 * whole recv, which is store-and-forward; the builder API has no streaming
 * variant, so the recv is issued as a copy and re-marked as a reduction.) */
static int32_t recv_reduce_stream(cs_coll_builder_t *b, int at, int from, int64_t off,
                                  int64_t len, int tag)
{
    int32_t r = cs_coll_recv(b, at, from, off, len, tag), c;
    if (r < 0)
        return -1;
    cs_program_set_data(cs_coll_program(b), r, off, len, CS_DATA_REDUCE);
    c = cs_coll_calc(b, at, 0, len);
    cs_coll_dep(b, c, r, CS_DEP_STREAM);
    return c;
}

/* Emits one rank of a reduction tree over [0, n).  Returns the op that
 * completes the rank's reduction (its last calc), or -1 if it has no
 * children.  Nothing waits after the last child: the caller decides what
 * follows (a streamed send is emitted here; a broadcast by the caller). */
static int32_t emit_rank(cs_coll_builder_t *b, const rtree_t *t, int r, int64_t n, int stream,
                         int tag)
{
    int32_t calc = -1;
    for (int32_t c = t->first[r]; c >= 0; c = t->next[c]) {
        calc = stream ? recv_reduce_stream(b, r, c, 0, n, tag)
                      : cs_coll_recv_reduce(b, r, c, 0, n, tag);
        if (t->next[c] >= 0)
            cs_coll_wait(b, r); /* add + store, then the next child */
    }
    if (t->parent[r] >= 0) {
        if (!stream)
            cs_coll_wait(b, r);
        int32_t s = cs_coll_send(b, r, t->parent[r], 0, n, tag);
        if (stream && calc >= 0)
            cs_coll_dep(b, s, calc, CS_DEP_STREAM); /* add + send: the visit */
    }
    return calc;
}

/* Emits the whole forest in pre-order (a PE, then its children's subtrees
 * in receive order).  The order matters only for ties: messages posted at
 * the same tick take a receiver's port in op order, and pre-order gives a
 * receiver's nearer children the earlier ops, as the thesis's router gating
 * does.  final[root] receives each tree root's last calc (or -1). */
static void emit_forest(cs_coll_builder_t *b, const rtree_t *t, int64_t n, int stream, int tag,
                        int32_t *final)
{
    for (int root = 0; root < t->P; root++) {
        if (t->parent[root] >= 0)
            continue;
        int32_t v = root;
        for (;;) {
            int32_t calc = emit_rank(b, t, v, n, stream, tag);
            if (v == root && final)
                final[root] = calc;
            if (t->first[v] >= 0) {
                v = t->first[v];
                continue;
            }
            while (v != root && t->next[v] < 0)
                v = t->parent[v];
            if (v == root)
                break;
            v = t->next[v];
        }
    }
}

/* The broadcast of the thesis (Ch. 4): one multicast from the root; on
 * Cerebras the routers copy it to every PE on the way, elsewhere it lowers
 * to unicasts.  After a reduce (allreduce, §7.1) the thesis broadcasts once
 * the reduction is done, except when the PEs it goes to receive nothing in
 * the reduce (P = 2: "we can already broadcast the result to the PE we are
 * receiving the values from"); then, with streaming, the multicast streams
 * from the root's final reduction (`after_calc`).  Streaming to a PE that
 * still has to receive would be wrong on any machine with the one-receive
 * rule: the broadcast would hold that PE's receive port while waiting for
 * data that must come through that very port (a deadlock). */
static void emit_mcast(cs_coll_builder_t *b, const rtree_t *t, int root, const int32_t *group,
                       int k, int64_t n, int tag, int stream, int32_t after_calc)
{
    int32_t *to = cs_malloc((size_t)(k > 0 ? k : 1) * sizeof *to);
    int nt = 0, leaves = 1;
    for (int i = 0; i < k; i++)
        if (group[i] != root) {
            to[nt++] = group[i];
            if (t && t->first[group[i]] >= 0)
                leaves = 0;
        }
    if (nt) {
        int pipelined = stream && after_calc >= 0 && leaves;
        if (!pipelined)
            cs_coll_wait(b, root);
        int32_t m = cs_coll_mcast(b, root, to, nt, 0, n, tag);
        if (pipelined)
            cs_coll_dep(b, m, after_calc, CS_DEP_STREAM);
        for (int i = 0; i < nt; i++) {
            cs_coll_wait(b, to[i]);
            cs_coll_recv(b, to[i], root, 0, n, tag);
        }
    }
    free(to);
}

/* ---- options ------------------------------------------------------------ */

/* What an algorithm reads: the option keys it lists are read only when they
 * apply (S= only with a two-phase, TR= only with the pre-order tree), so
 * that a key given where it means nothing is reported, not ignored. */
enum { O_BASE = 1, O_ANY = 2, O_ROOT = 4 };

typedef struct cfg {
    int stream;
    pattern_t pat; /* the reduce pattern */
    pcfg_t c;      /* its base (itself for the base patterns) */
    int root;      /* allreduce: the reduce root */
} cfg_t;

static int read_cfg(const cs_coll_args_t *a, unsigned what, pattern_t pat, cfg_t *o,
                    cs_error_t *err)
{
    int rc, bi = PAT_CHAIN, pi = pat;
    int64_t v;
    memset(o, 0, sizeof *o);
    if ((rc = cs_coll_opt_int(a, "stream", 1, 0, 1, &v, err)))
        return rc;
    o->stream = (int)v;
    if ((what & O_ANY) && (rc = cs_coll_opt_choice(a, "base", any_names, PAT_CHAIN, &pi, err)))
        return rc;
    if ((what & O_BASE) && (rc = cs_coll_opt_choice(a, "base", base_names, PAT_CHAIN, &bi, err)))
        return rc;
    if ((what & O_ANY) && (pi == PAT_LEFT_RIGHT || pi == PAT_JUMP) &&
        (rc = cs_coll_opt_choice(a, "inner", base_names, PAT_CHAIN, &bi, err)))
        return rc;
    o->pat = (pattern_t)pi;
    o->c.base = (what & O_BASE) || pi == PAT_LEFT_RIGHT || pi == PAT_JUMP ? (pattern_t)bi
                : pi == PAT_RING ? PAT_CHAIN : (pattern_t)pi;
    o->c.B = (a->bytes + 3) / 4;
    o->c.TR = 2;
    if (o->c.base == PAT_TWO_PHASE && (rc = cs_coll_opt_int(a, "S", 0, 1, INT32_MAX, &o->c.S, err)))
        return rc;
    if (o->c.base == PAT_PREORDER) {
        if ((rc = cs_coll_opt_int(a, "TR", 2, 0, 1000000, &o->c.TR, err)))
            return rc;
        if (a->P > PREORDER_MAX)
            return cs_error_set(err, CS_ERR_RANGE,
                                "the pre-order tree is an O(P^2) programme limited to %d ranks; "
                                "got P=%d",
                                PREORDER_MAX, a->P);
    }
    if (what & O_ROOT) {
        if ((rc = cs_coll_opt_int(a, "root", 0, 0, a->P - 1, &v, err)))
            return rc;
        o->root = (int)v;
    }
    return CS_OK;
}

/* ---- reduce -------------------------------------------------------------- */

/* Reduce to args->root with pattern `pat`. */
static int reduce_1d(cs_coll_builder_t *b, pattern_t pat, unsigned what, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    cfg_t o;
    rtree_t t;
    int rc;
    if ((rc = read_cfg(a, what, pat, &o, err)))
        return rc;
    if (a->P == 1 || a->bytes == 0)
        return CS_OK;
    tree_init(&t, a->P);
    rc = build_1d(&t, a, a->root, pat, &o.c, err);
    if (!rc)
        emit_forest(b, &t, a->bytes, o.stream, TAG_REDUCE, NULL);
    tree_destroy(&t);
    return rc;
}

static int build_scalar(cs_coll_builder_t *b, cs_error_t *e) { return reduce_1d(b, PAT_SCALAR, 0, e); }
static int build_chain(cs_coll_builder_t *b, cs_error_t *e) { return reduce_1d(b, PAT_CHAIN, 0, e); }
static int build_tree(cs_coll_builder_t *b, cs_error_t *e) { return reduce_1d(b, PAT_TREE, 0, e); }
static int build_two_phase(cs_coll_builder_t *b, cs_error_t *e)
{
    return reduce_1d(b, PAT_TWO_PHASE, 0, e);
}
static int build_preorder(cs_coll_builder_t *b, cs_error_t *e)
{
    return reduce_1d(b, PAT_PREORDER, 0, e);
}
static int build_left_right(cs_coll_builder_t *b, cs_error_t *e)
{
    return reduce_1d(b, PAT_LEFT_RIGHT, O_BASE, e);
}
static int build_ring(cs_coll_builder_t *b, cs_error_t *e) { return reduce_1d(b, PAT_RING, 0, e); }
static int build_jump(cs_coll_builder_t *b, cs_error_t *e)
{
    return reduce_1d(b, PAT_JUMP, O_BASE, e);
}

static int reduce_2d(cs_coll_builder_t *b, pattern_t base, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int rc, rows, cols;
    cfg_t o;
    rtree_t t;
    if ((rc = read_cfg(a, 0, base, &o, err)))
        return rc;
    if (a->P == 1 || a->bytes == 0)
        return CS_OK;
    cs_coll_grid(a, &rows, &cols);
    tree_init(&t, a->P);
    build_2d(&t, rows, cols, a->root, &o.c);
    emit_forest(b, &t, a->bytes, o.stream, TAG_REDUCE, NULL);
    tree_destroy(&t);
    return CS_OK;
}

static int build_2d_chain(cs_coll_builder_t *b, cs_error_t *e) { return reduce_2d(b, PAT_CHAIN, e); }
static int build_2d_tree(cs_coll_builder_t *b, cs_error_t *e) { return reduce_2d(b, PAT_TREE, e); }
static int build_2d_two_phase(cs_coll_builder_t *b, cs_error_t *e)
{
    return reduce_2d(b, PAT_TWO_PHASE, e);
}

/* ---- allreduce ----------------------------------------------------------- */

/* §7.1: reduce with a thesis pattern to a root, then broadcast.  With
 * stream=1 the broadcast is pipelined with the reduction only where the
 * thesis pipelines it (every receiver is a leaf of the reduce: P = 2, or the
 * scalar pattern); see emit_mcast. */
static int build_naive(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    cfg_t o;
    rtree_t t;
    int rc;
    if ((rc = read_cfg(a, O_ANY | O_ROOT, PAT_CHAIN, &o, err)))
        return rc;
    if (a->P == 1 || a->bytes == 0)
        return CS_OK;
    int32_t *final = cs_malloc((size_t)a->P * sizeof *final);
    int32_t *all = cs_malloc((size_t)a->P * sizeof *all);
    tree_init(&t, a->P);
    rc = build_1d(&t, a, o.root, o.pat, &o.c, err);
    if (!rc) {
        emit_forest(b, &t, a->bytes, o.stream, TAG_REDUCE, final);
        for (int r = 0; r < a->P; r++)
            all[r] = r;
        emit_mcast(b, &t, o.root, all, a->P, a->bytes, TAG_BCAST, o.stream, final[o.root]);
    }
    tree_destroy(&t);
    free(final);
    free(all);
    return rc;
}

/* Line x of a 2D phase, starting at the root's row or column: phase 0
 * walks column x down from row ri, phase 1 row x right from column cj. */
static void grid_line(int phase, int x, int ri, int cj, int rows, int cols, int32_t *L)
{
    int len = phase ? cols : rows;
    for (int v = 0; v < len; v++)
        L[v] = phase ? x * cols + (cj + v) % cols : ((ri + v) % rows) * cols + x;
}

/* §7.4: naive allreduce on every column (to the root's row), then on every
 * row (to the root's column).  A PE starts its row phase once its column
 * phase is complete (the thesis adds the two times). */
static int build_2d_naive(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    cfg_t o;
    int rc, rows, cols;
    if ((rc = read_cfg(a, O_BASE | O_ROOT, PAT_CHAIN, &o, err)))
        return rc;
    if (a->P == 1 || a->bytes == 0)
        return CS_OK;
    cs_coll_grid(a, &rows, &cols);
    int ri = o.root / cols, cj = o.root % cols, n = rows > cols ? rows : cols;
    int32_t *final = cs_malloc((size_t)a->P * sizeof *final), *L = cs_malloc((size_t)n * sizeof *L);
    for (int phase = 0; phase < 2; phase++) {
        int lines = phase ? rows : cols, len = phase ? cols : rows;
        rtree_t t;
        tree_init(&t, a->P);
        for (int x = 0; x < lines; x++) {
            grid_line(phase, x, ri, cj, rows, cols, L);
            pattern_apply(&t, L, len, &o.c);
        }
        emit_forest(b, &t, a->bytes, o.stream, phase ? TAG_REDUCE2 : TAG_REDUCE, final);
        for (int x = 0; x < lines; x++) {
            grid_line(phase, x, ri, cj, rows, cols, L);
            emit_mcast(b, &t, L[0], L, len, a->bytes, phase ? TAG_BCAST2 : TAG_BCAST, o.stream,
                       final[L[0]]);
        }
        cs_coll_wait_all(b);
        tree_destroy(&t);
    }
    free(final);
    free(L);
    return CS_OK;
}

/* ---- broadcast ----------------------------------------------------------- */

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
    int32_t *all = cs_malloc((size_t)a->P * sizeof *all);
    for (int r = 0; r < a->P; r++)
        all[r] = r;
    emit_mcast(b, NULL, a->root, all, a->P, a->bytes, TAG_BCAST, 0, -1);
    free(all);
    return CS_OK;
}

/* ---- registry ------------------------------------------------------------ */

static const char *const k_stream[] = {"stream", NULL};
static const char *const k_two_phase[] = {"S", "stream", NULL};
static const char *const k_preorder[] = {"TR", "stream", NULL};
static const char *const k_based[] = {"base", "S", "TR", "stream", NULL};
static const char *const k_naive[] = {"base", "inner", "S", "TR", "root", "stream", NULL};
static const char *const k_2d_naive[] = {"base", "S", "TR", "root", "stream", NULL};

#define STREAM_OPT "stream=0|1 (default 1: forward element by element; 0: store and forward)"
#define BASE_OPT "base=chain|tree|two-phase|scalar|preorder (default chain); S=GROUP (two-phase, default ceil(sqrt k) of each reduced line); TR=CYCLES (preorder, default 2); "

static const cs_coll_algo_t a_scalar = {
    CS_COLL_REDUCE, "scalar",
    "every rank sends its vector straight to the root, which takes them nearest first",
    "Cerebras thesis §5.1 (Lemma 5.1)", STREAM_OPT, k_stream, build_scalar};
static const cs_coll_algo_t a_chain = {
    CS_COLL_REDUCE, "thesis-chain",
    "pipelined chain toward the root: receive from the right, add, send left",
    "Cerebras thesis §5.2 (Lemma 5.2)", STREAM_OPT, k_stream, build_chain};
static const cs_coll_algo_t a_tree = {
    CS_COLL_REDUCE, "tree",
    "binary tree: rank i takes i+1, i+2, i+4, ... nearest first and streams the last one on",
    "Cerebras thesis §5.3 (Lemmas 5.3-5.4, Cor. 5.5)", STREAM_OPT, k_stream, build_tree};
static const cs_coll_algo_t a_two_phase = {
    CS_COLL_REDUCE, "two-phase",
    "chains inside groups of S ranks (assigned from the end), then a chain over the leaders",
    "Cerebras thesis §5.4 (Lemmas 5.6-5.8)",
    "S=GROUP (default ceil(sqrt P)); " STREAM_OPT, k_two_phase, build_two_phase};
static const cs_coll_algo_t a_preorder = {
    CS_COLL_REDUCE, "preorder",
    "the optimal pre-order tree of the thesis's cycle model (B = bytes/4 elements)",
    "Cerebras thesis §5.5 (Lemma 5.9)",
    "TR=CYCLES ramp latency of the model (default 2); " STREAM_OPT, k_preorder, build_preorder};
static const cs_coll_algo_t a_left_right = {
    CS_COLL_REDUCE, "left-right",
    "each side of the root reduces toward it with a base pattern; the root's smaller side first",
    "Cerebras thesis §6.1 (Lemmas 6.1-6.2)", BASE_OPT STREAM_OPT, k_based, build_left_right};
static const cs_coll_algo_t a_ring = {
    CS_COLL_REDUCE, "ring",
    "chain along the even/odd ring 0,2,4,...,5,3,1 (or the machine's alternative ring) to the root",
    "Cerebras thesis §6.2 (Lemma 6.3)", STREAM_OPT, k_stream, build_ring};
static const cs_coll_algo_t a_jump = {
    CS_COLL_REDUCE, "jump",
    "all ranks but the root reduce to the end nearer the root, which streams on to the root",
    "Cerebras thesis §6.3 (Lemma 6.4)", BASE_OPT STREAM_OPT, k_based, build_jump};
static const cs_coll_algo_t a_2d_chain = {
    CS_COLL_REDUCE, "2d-chain", "chain down every column to the root's row, then along that row",
    "Cerebras thesis §6.4", STREAM_OPT, k_stream, build_2d_chain};
static const cs_coll_algo_t a_2d_tree = {
    CS_COLL_REDUCE, "2d-tree", "tree pattern on every column, then on the root's row",
    "Cerebras thesis §6.4", STREAM_OPT, k_stream, build_2d_tree};
static const cs_coll_algo_t a_2d_two_phase = {
    CS_COLL_REDUCE, "2d-two-phase", "two-phase pattern on every column, then on the root's row",
    "Cerebras thesis §6.4",
    "S=GROUP (default ceil(sqrt) of the column / row length); " STREAM_OPT, k_two_phase,
    build_2d_two_phase};
static const cs_coll_algo_t a_naive = {
    CS_COLL_ALLREDUCE, "naive",
    "reduce to a root with a thesis pattern, then one multicast broadcast",
    "Cerebras thesis §7.1 (Lemma 7.1)",
    "base=chain|tree|two-phase|scalar|preorder|left-right|ring|jump (default chain); "
    "inner=chain|tree|two-phase|scalar|preorder (base of left-right / jump, default chain); "
    "S=GROUP; TR=CYCLES; root=RANK (default 0); " STREAM_OPT,
    k_naive, build_naive};
static const cs_coll_algo_t a_2d_naive = {
    CS_COLL_ALLREDUCE, "2d-naive",
    "naive allreduce (reduce + multicast) on every column, then on every row",
    "Cerebras thesis §7.4", BASE_OPT "root=RANK (default 0); " STREAM_OPT, k_2d_naive,
    build_2d_naive};
static const cs_coll_algo_t a_bcast = {
    CS_COLL_BROADCAST, "thesis",
    "one multicast from the root (the router fan-out of the 1D and 2D broadcast)",
    "Cerebras thesis Ch. 4 (Lemma 4.1, §4.2)", "", NULL, build_bcast};

const cs_coll_algo_t *const cs_coll_group_thesis[] = {
    &a_bcast,     &a_scalar,   &a_chain,        &a_tree,    &a_two_phase,
    &a_preorder,  &a_left_right, &a_ring,       &a_jump,    &a_2d_chain,
    &a_2d_tree,   &a_2d_two_phase, &a_naive,    &a_2d_naive, NULL};
