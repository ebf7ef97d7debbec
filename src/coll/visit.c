/*
 * visit.c - the reduction trees of the Cerebras thesis (papers/000,
 * "Reduce/Allreduce collectives on the Cerebras WSE"; formulas and
 * schedules collected in reference/cerebras-wse.md §2-§3) and the emitter
 * that turns such a tree into a program, shared by the thesis's reduce
 * (reduce.c), allreduce (allreduce.c) and broadcast (broadcast.c)
 * algorithms.
 *
 * Every reduce pattern of the thesis is a reduction tree with *ordered*
 * children: a PE receives its children one after the other, nearest (in the
 * pattern) first, adds each into its own vector ("add + store"), and the
 * stream of its last child is added and sent on to its parent element by
 * element ("add + send", the thesis's *visit*).  So the patterns differ only
 * in the tree they build (pattern_* below), and one emitter (cs_coll_emit_forest,
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
 * pre-order tree needs B).
 */
#include "coll/coll_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- reduction trees ---------------------------------------------------- */

void cs_coll_rtree_init(cs_coll_rtree_t *t, int P)
{
    t->P = P;
    t->parent = cs_malloc((size_t)P * 4 * sizeof(int32_t));
    t->first = t->parent + P;
    t->last = t->first + P;
    t->next = t->last + P;
    for (int i = 0; i < 4 * P; i++)
        t->parent[i] = -1;
}

void cs_coll_rtree_destroy(cs_coll_rtree_t *t) { free(t->parent); }

/* c becomes the last (so far) child of r: r receives it after the others. */
static void tree_add(cs_coll_rtree_t *t, int32_t r, int32_t c)
{
    CS_ASSERT(t->parent[c] < 0 && r != c);
    t->parent[c] = r;
    if (t->last[r] < 0)
        t->first[r] = c;
    else
        t->next[t->last[r]] = c;
    t->last[r] = c;
}

static const char *const base_names[] = {"chain", "tree", "two-phase", "scalar", "preorder", NULL};
static const char *const any_names[] = {"chain",     "tree",       "two-phase", "scalar",
                                        "preorder",  "left-right", "ring",      "jump", NULL};

/* Scalar (§5.1): every PE's vector goes straight to p0 through the routers
 * (no visits); p0 takes them one after the other, nearest first. */
static void pattern_scalar(cs_coll_rtree_t *t, const int32_t *L, int k)
{
    for (int x = 1; x < k; x++)
        tree_add(t, L[0], L[x]);
}

/* Chain (§5.2): p_{i+1} -> p_i, each PE a visit. */
static void pattern_chain(cs_coll_rtree_t *t, const int32_t *L, int k)
{
    for (int x = 1; x < k; x++)
        tree_add(t, L[x - 1], L[x]);
}

/* Tree (§5.3, Fig. 5.3): in round r every PE with index = 2^r mod 2^(r+1)
 * sends to the PE 2^r to its left; a receiver takes its children in order
 * of distance 1, 2, 4, ...  For P not a power of two the rounds where p0
 * has no partner are simply absent (the thesis's "group p0 with the nearest
 * pair" workaround is not taken: it is only sketched). */
static void pattern_tree(cs_coll_rtree_t *t, const int32_t *L, int k)
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
static void pattern_two_phase(cs_coll_rtree_t *t, const int32_t *L, int k, int64_t S)
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
static void pattern_preorder(cs_coll_rtree_t *t, const int32_t *L, int k, int64_t B, int64_t TR)
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

void cs_coll_pattern_apply(cs_coll_rtree_t *t, const int32_t *L, int k, const cs_coll_pcfg_t *c)
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
int cs_coll_rtree_1d(cs_coll_rtree_t *t, const cs_coll_args_t *a, int root, cs_coll_pattern_t pat,
                    const cs_coll_pcfg_t *base, cs_error_t *err)
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
        cs_coll_pattern_apply(t, L, k, base);
        k = 0;
        for (int x = own_left ? root + 1 : root - 1; x >= 0 && x < P; x += own_left ? 1 : -1)
            L[k++] = x;
        cs_coll_pattern_apply(t, L, k, base);
        if (k)
            tree_add(t, root, L[0]);
        break;
    }
    case PAT_RING: {
        /* §6.2: a chain along the ring from the root's successor to the
         * root; every PE keeps one sender and one receiver whatever the
         * root. */
        int32_t *ring = cs_malloc((size_t)P * sizeof *ring),
                *pos = cs_malloc((size_t)P * sizeof *pos);
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
        cs_coll_pattern_apply(t, L, k, base);
        if (k)
            tree_add(t, root, L[0]);
        break;
    }
    default: {
        cs_coll_pcfg_t c = *base;
        c.base = pat;
        for (int v = 0; v < P; v++)
            L[k++] = (root + v) % P;
        cs_coll_pattern_apply(t, L, k, &c);
    }
    }
    free(L);
    return CS_OK;
}

/* 2D (§6.4): every column reduces to the root's row with the base pattern,
 * then that row reduces to the root.  Each axis is relabelled cyclically so
 * that the root's row (column) is the axis's p0.  The row-phase PEs take
 * their column children first, then their row children. */
void cs_coll_rtree_2d(cs_coll_rtree_t *t, int rows, int cols, int root, const cs_coll_pcfg_t *base)
{
    int ri = root / cols, cj = root % cols, n = rows > cols ? rows : cols;
    int32_t *L = cs_malloc((size_t)n * sizeof *L);
    for (int c = 0; c < cols; c++) {
        for (int v = 0; v < rows; v++)
            L[v] = ((ri + v) % rows) * cols + c;
        cs_coll_pattern_apply(t, L, rows, base);
    }
    for (int v = 0; v < cols; v++)
        L[v] = ri * cols + (cj + v) % cols;
    cs_coll_pattern_apply(t, L, cols, base);
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
    cs_coll_set_data(b, r, off, len, CS_DATA_REDUCE);
    c = cs_coll_calc(b, at, 0, len);
    cs_coll_dep(b, c, r, CS_DEP_STREAM);
    return c;
}

/* Emits one rank of a reduction tree over [0, n).  Returns the op that
 * completes the rank's reduction (its last calc), or -1 if it has no
 * children.  Nothing waits after the last child: the caller decides what
 * follows (a streamed send is emitted here; a broadcast by the caller). */
static int32_t emit_rank(cs_coll_builder_t *b, const cs_coll_rtree_t *t, int r, int64_t n,
                         int stream, int tag)
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
void cs_coll_emit_forest(cs_coll_builder_t *b, const cs_coll_rtree_t *t, int64_t n, int stream,
                         int tag, int32_t *final)
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
void cs_coll_emit_mcast(cs_coll_builder_t *b, const cs_coll_rtree_t *t, int root,
                        const int32_t *group, int k, int64_t n, int tag, int stream,
                        int32_t after_calc)
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

int cs_coll_visit_cfg(const cs_coll_args_t *a, unsigned what, cs_coll_pattern_t pat,
                      cs_coll_visit_cfg_t *o, cs_error_t *err)
{
    int rc, bi = PAT_CHAIN, pi = pat;
    int64_t v;
    memset(o, 0, sizeof *o);
    if ((rc = cs_coll_opt_int(a, "stream", 1, 0, 1, &v, err)))
        return rc;
    o->stream = (int)v;
    if ((what & VISIT_ANY) && (rc = cs_coll_opt_choice(a, "base", any_names, PAT_CHAIN, &pi, err)))
        return rc;
    if ((what & VISIT_BASE) &&
        (rc = cs_coll_opt_choice(a, "base", base_names, PAT_CHAIN, &bi, err)))
        return rc;
    if ((what & VISIT_ANY) && (pi == PAT_LEFT_RIGHT || pi == PAT_JUMP) &&
        (rc = cs_coll_opt_choice(a, "inner", base_names, PAT_CHAIN, &bi, err)))
        return rc;
    o->pat = (cs_coll_pattern_t)pi;
    o->c.base = (what & VISIT_BASE) || pi == PAT_LEFT_RIGHT || pi == PAT_JUMP
                    ? (cs_coll_pattern_t)bi
                : pi == PAT_RING ? PAT_CHAIN
                                 : (cs_coll_pattern_t)pi;
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
    if (what & VISIT_ROOT) {
        if ((rc = cs_coll_opt_int(a, "root", 0, 0, a->P - 1, &v, err)))
            return rc;
        o->root = (int)v;
    }
    return CS_OK;
}

