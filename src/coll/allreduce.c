/*
 * allreduce.c - every allreduce algorithm of the suite: every rank ends with
 * the sum of the ranks' vectors [0, n).  Listed (and registered) in this
 * order:
 *
 *   - the message-passing lecture (shared/papers/004, notes in
 *     shared/reference/alpha-beta.md): §8.9 ring reduce-scatter + ring
 *     allgather, §8.1/§8.6 reduce + broadcast; the standard MPI algorithms
 *     (Thakur, Rabenseifner, Gropp 2005): recursive doubling and
 *     Rabenseifner's halving + doubling, with the extra ranks of a
 *     non-power of two folded in first;
 *   - the Cerebras thesis (papers/000, reference/cerebras-wse.md §2.5, §3)
 *     Ch. 7: the butterfly with group size G (Lemma 7.3), the naive
 *     reduce + multicast (§7.1) and its 2D version (§7.4);
 *   - Groq ISCA'22 (papers/002 §5.6, reference/groq-dragonfly.md §4): the
 *     three-hop gateway all-reduce of small tensors and the hierarchical
 *     reduce-scatter / all-reduce / all-gather;
 *   - the Cell paper (papers/001 §3.5, reference/cell-blade.md §3.5):
 *     Rdb-Barrier, HybridA-x-y and HybridB-x-y.
 *
 * (The registry lists the thesis's naive allreduces after the gateway, as
 * it always has.)  Conventions as in broadcast.c; rounds post every send,
 * then every recv, then wait, and a send reads its range when it starts
 * (program.h), so a rank may send a range and receive into it in one round.
 */
#include "coll/coll_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The default group size of the Groq algorithms (gateway, hierarchical):
 * a Groq node (8 TSPs) when 8 divides P, else ceil(sqrt P). */
static int64_t default_group_size(int P)
{
    return P % 8 == 0 ? 8 : (int64_t)ceil(sqrt((double)P));
}

/* ---- lecture, generic MPI and the thesis's butterfly (n = the whole vector) -- */

/* Ring = ring reduce-scatter + ring allgather (lecture §8.9) over the P
 * pieces of cs_coll_split, in the machine's ring order; position i owns
 * piece i.  2(P-1)(alpha + beta n/P) when P divides n, plus the reductions. */
static int allreduce_ring(cs_coll_builder_t *b, cs_error_t *err)
{
    int P = cs_coll_args(b)->P;
    cs_coll_ring_pieces_t rp;
    (void)err;
    cs_coll_ring_pieces_init(&rp, cs_coll_args(b), 0);
    cs_coll_ring_reduce_scatter(b, rp.ring, P, rp.off, rp.len, TAG_RS);
    cs_coll_ring_allgather(b, rp.ring, P, rp.off, rp.len, TAG_AG);
    cs_coll_ring_pieces_destroy(&rp);
    return CS_OK;
}

/* Recursive doubling on the whole vector: log2 Pp rounds of exchange and
 * add with v ^ 2^k, the extra ranks folded in and out.  P a power of two:
 * (alpha + beta n) log2 P.  Source: generic (MPI; Thakur et al. 2005). */
static int allreduce_rdb(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t n = a->bytes;
    int far, rc;
    cs_coll_fold_t f;
    if ((rc = cs_coll_opt_fold(a, 0, &far, err)))
        return rc;
    f = cs_coll_fold_rule(P, far);
    if (P == 1 || n == 0)
        return CS_OK;
    cs_coll_fold_in(b, &f, 0, n, 1);
    for (int d = 1; d < f.Pp; d *= 2) {
        for (int r = 0; r < P; r++) {
            int v = fold_virt(&f, r);
            if (v < 0)
                continue;
            cs_coll_send_nz(b, r, fold_real(&f, v ^ d), 0, n, TAG_DATA);
            cs_coll_recv_reduce_nz(b, r, fold_real(&f, v ^ d), 0, n, TAG_DATA);
        }
        /* the next round needs the partner's vector, not its ACK: rounds
         * overlap, one receive buffer per round (the Cell paper §3.5) */
        cs_coll_wait_recvs_all(b);
    }
    cs_coll_fold_out(b, &f, 0, n);
    return CS_OK;
}

/* Recursive doubling allgather of the pieces left by cs_coll_halving(). */
static void doubling(cs_coll_builder_t *b, const cs_coll_fold_t *f, const int64_t *poff, int tag)
{
    for (int d = 1; d < f->Pp; d *= 2) {
        for (int r = 0; r < f->P; r++) {
            int v = fold_virt(f, r), lo, plo;
            if (v < 0)
                continue;
            lo = v & ~(d - 1);
            plo = (v ^ d) & ~(d - 1);
            cs_coll_send_nz(b, r, fold_real(f, v ^ d), poff[lo], poff[lo + d] - poff[lo], tag);
            cs_coll_recv_nz(b, r, fold_real(f, v ^ d), poff[plo], poff[plo + d] - poff[plo], tag);
        }
        cs_coll_wait_recvs_all(b); /* nor are the pieces sent here */
    }
}

/* Rabenseifner: recursive-halving reduce-scatter of the Pp pieces of
 * cs_coll_split, then recursive-doubling allgather, extra ranks folded in
 * and out.  P a power of two: 2 alpha log2 P + 2 beta n (P-1)/P. */
static int allreduce_rabenseifner(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t n = a->bytes, len;
    int far, rc;
    cs_coll_fold_t f;
    int64_t *poff;
    if ((rc = cs_coll_opt_fold(a, 0, &far, err)))
        return rc;
    f = cs_coll_fold_rule(P, far);
    if (P == 1 || n == 0)
        return CS_OK;
    cs_coll_fold_in(b, &f, 0, n, 1);
    poff = cs_malloc((size_t)(f.Pp + 1) * sizeof *poff);
    for (int v = 0; v < f.Pp; v++)
        cs_coll_split(n, f.Pp, v, &poff[v], &len);
    poff[f.Pp] = n;
    /* the pieces split the vector by virtual rank, whatever real ranks a
     * virtual rank stands for: one range per message under either fold */
    cs_coll_halving(b, &f, poff, NULL, TAG_RS);
    doubling(b, &f, poff, TAG_AG);
    free(poff);
    cs_coll_fold_out(b, &f, 0, n);
    return CS_OK;
}

/* Reduce + broadcast (lecture §8.6 "naive"): binomial reduce to rank 0,
 * binomial broadcast.  2 ceil(log2 P)(alpha + beta n). */
static int allreduce_reduce_bcast(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    (void)err;
    if (a->P == 1 || a->bytes == 0)
        return CS_OK;
    cs_coll_tree_up(b, a->P, 1, 0, a->bytes, 0);
    cs_coll_tree_down(b, a->P, 0, a->bytes);
    return CS_OK;
}

static const char *const inner_choices[] = {"direct", "ring", NULL};

/* Butterfly with group size G (Cerebras thesis Ch. 7): with Pg = G^L the
 * largest power of G <= P, rank x >= Pg hands its vector to x mod Pg first
 * and gets the result back at the end.  In round i the core ranks that
 * differ only in base-G digit i form a group of G and allreduce the whole
 * vector among themselves: inner=direct sends it to the G-1 others and adds
 * theirs (member q sends to q+1, q+2, ... so that every step is a
 * permutation), inner=ring runs a ring allreduce in the group (the thesis's
 * version).  P = G^L: L (G-1)(alpha + beta n) direct, L 2(G-1)(alpha +
 * beta n/G) ring (G | n).  G = 2, direct, is recursive doubling. */
static int allreduce_butterfly(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, G, inner = 0, Pg = 1;
    int64_t n = a->bytes, g;
    int rc;
    if ((rc = cs_coll_opt_int(a, "g", 2, 2, 1 << 20, &g, err)))
        return rc;
    if ((rc = cs_coll_opt_choice(a, "inner", inner_choices, 0, &inner, err)))
        return rc;
    if (P == 1 || n == 0)
        return CS_OK;
    G = g < P ? (int)g : P; /* a group larger than P is all P ranks */
    while ((int64_t)Pg * G <= P)
        Pg *= G;
    /* fold in: core c receives from c + Pg, c + 2 Pg, ... */
    for (int x = Pg; x < P; x++) {
        cs_coll_send_nz(b, x, x % Pg, 0, n, TAG_FOLD);
        cs_coll_recv_reduce_nz(b, x % Pg, x, 0, n, TAG_FOLD);
    }
    cs_coll_wait_all(b);
    int32_t *grp = cs_malloc((size_t)G * sizeof *grp);
    int64_t *off = cs_malloc((size_t)G * sizeof *off), *len = cs_malloc((size_t)G * sizeof *len);
    for (int i = 0; i < G; i++)
        cs_coll_split(n, G, i, &off[i], &len[i]);
    for (int stride = 1; stride < Pg; stride *= G) {
        for (int base = 0; base < Pg; base++) {
            if ((base / stride) % G) /* one visit per group: its digit-0 member */
                continue;
            for (int q = 0; q < G; q++)
                grp[q] = base + q * stride;
            if (inner == 1) {
                cs_coll_ring_reduce_scatter(b, grp, G, off, len, TAG_RS);
                cs_coll_ring_allgather(b, grp, G, off, len, TAG_AG);
                continue;
            }
            /* member q sends to q+1, q+2, ... one after the other (so that
             * every step is a permutation of the group), and posts its recvs
             * once its sends are done: every send reads the vector before
             * any partner's data is added into it */
            for (int q = 0; q < G; q++) {
                int32_t prev = -1;
                for (int t = 1; t < G; t++) {
                    int32_t s = cs_coll_send_nz(b, grp[q], grp[(q + t) % G], 0, n, TAG_DATA);
                    cs_coll_dep(b, s, prev, CS_DEP_AFTER);
                    prev = s;
                }
                cs_coll_wait(b, grp[q]);
                for (int t = 1; t < G; t++)
                    cs_coll_recv_reduce_nz(b, grp[q], grp[(q - t + G) % G], 0, n, TAG_DATA);
                cs_coll_wait(b, grp[q]);
            }
        }
    }
    free(grp);
    free(off);
    free(len);
    /* fold out */
    for (int x = Pg; x < P; x++) {
        cs_coll_send_nz(b, x % Pg, x, 0, n, TAG_UNFOLD);
        cs_coll_recv_nz(b, x, x % Pg, 0, n, TAG_UNFOLD);
    }
    cs_coll_wait_all(b);
    return CS_OK;
}

/* ---- the gateway all-reduce (Groq ISCA'22 §5.6) ---------------------------
 * The paper's three-stage all-reduce of a small tensor on the Dragonfly,
 * "the 8-way fully connected TSPs within each node as the first stage, the
 * four global links between nodes for the second stage, and final 8-way
 * fully connected network within each node", 3 hops x 722 ns = 2,166 ns on
 * 256 TSPs (reference/groq-dragonfly.md §4), written against the hints only:
 *
 *   1. inside every group, every rank sends its vector to every group mate
 *      and adds theirs: each holds the group's sum (one hop on a fully
 *      connected group, all links at once);
 *   2. for every pair of groups g != h, g's gateway towards h (the hint:
 *      the rank at g's end of a link joining them) sends the group's sum to
 *      its partner, h's gateway towards g, which adds it into a partial
 *      (scratch [n, 2n)): a gateway with k links receives and adds k sums;
 *   3. inside every group, every gateway sends its partial to every mate,
 *      and adds it into its own vector (a local copy, a message to itself);
 *      every rank adds the partials it receives.
 * Every group's sum reaches every group once through exactly one gateway
 * pair, so each rank ends with every contribution exactly once.  On a
 * machine whose groups are fully connected and whose gateways are linked
 * directly this is three hops; with V vectors (packets), 3 (hop + (V - 1)
 * slot) since each stage waits for its data.  Traffic: each rank sends
 * (s - 1) n in stages 1 and 3 (s: group size), gateways one n per link:
 * small tensors only (large ones want the bandwidth of allreduce/hierarchical).
 *
 * Without a group hint (or with g= given) the groups are ceil(P/g)
 * consecutive ranges of near-equal size, g = 8 when 8 | P, else
 * ceil(sqrt P) (as allreduce/hierarchical).  Pairs without a gateway hint
 * (no hint, or no direct link between the groups) get one by the Groq port
 * rule's rotation: g's k-th other group, h = g + k + 1 (mod G), is served by
 * its member k mod |g|; the algorithm is then still correct, only its
 * messages may cross more links. */

/* The groups and the gateway of every ordered pair (gw[j*G+k]: the rank of
 * group j that sends j's sum to group k; -1 when either group is empty).
 * The hint's group ids are kept as they are (empty groups too), since the
 * gateway hint is indexed by them. */
static int gw_plan(const cs_coll_args_t *a, cs_coll_groups_t *g, int32_t **gw_out, cs_error_t *err)
{
    const cs_coll_hints_t *h = a->hints;
    int P = a->P, G, rc, use_hint;
    int64_t gsize;
    int32_t *gw;
    memset(g, 0, sizeof *g);
    *gw_out = NULL;
    if ((rc = cs_coll_opt_int(a, "g", default_group_size(P), 1, 1 << 20, &gsize, err)))
        return rc;
    if (gsize > P) /* a group larger than P is all P ranks */
        gsize = P;
    use_hint = !cs_coll_opt_given(a, "g");
    if (use_hint && (rc = cs_coll_groups_hint(g, a, 0, err)))
        return rc;
    if (!g->G) {
        use_hint = 0;
        cs_coll_groups_consecutive(g, P, (int)((P + gsize - 1) / gsize));
    }
    G = g->G;
    gw = cs_malloc((size_t)G * (size_t)G * sizeof *gw);
    for (int j = 0; j < G; j++)
        for (int k = 0; k < G; k++) {
            int s = g->start[j + 1] - g->start[j];
            int32_t x = use_hint && h->gateway ? h->gateway[(int64_t)j * G + k] : -1;
            if (j == k || !s || g->start[k + 1] == g->start[k]) {
                gw[(int64_t)j * G + k] = -1;
                continue;
            }
            if (x >= P || (x >= 0 && g->of[x] != j)) {
                free(gw);
                cs_coll_groups_destroy(g);
                return cs_error_set(err, CS_ERR_RANGE, "gateway hint: rank %d for groups %d -> %d "
                                    "is not a rank of group %d", (int)x, j, k, j);
            }
            /* no hint: the k-th other group by rotation, member k mod s */
            gw[(int64_t)j * G + k] = x >= 0 ? x : g->mem[g->start[j] + mod(k - j - 1, G) % s];
        }
    *gw_out = gw;
    return CS_OK;
}

/* Rank r's next ops (nsucc of them) follow the npred ops it waits for.
 * Each would carry an edge to each of them (npred * nsucc edges: stage 3
 * after stage 2 is thousands per rank on the full machine, ~20 per op in
 * all); through a join (core/program.h: it completes in place, so the next
 * ops start exactly as with the direct edges) it is npred + nsucc edges for
 * one op more.  The join is taken only where it saves edges. */
static void gw_wait(cs_coll_builder_t *b, int r, int64_t npred, int64_t nsucc)
{
    cs_coll_wait(b, r);
    if (npred * nsucc > npred + nsucc + 1) {
        cs_coll_join(b, r);
        cs_coll_wait(b, r);
    }
}

/* allreduce/gateway; source: Groq ISCA'22 §5.6. */
static int allreduce_gateway(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, rc;
    int64_t n = a->bytes;
    cs_coll_groups_t g = {0};
    int32_t *gw = NULL, *nin, *nout;
    if ((rc = gw_plan(a, &g, &gw, err)))
        return rc;
    if (P == 1 || n == 0) {
        free(gw);
        cs_coll_groups_destroy(&g);
        return CS_OK;
    }
    /* per rank: the group sums it receives (stage 2) and sends */
    nin = cs_calloc((size_t)P, sizeof *nin);
    nout = cs_calloc((size_t)P, sizeof *nout);
    for (int j = 0; j < g.G; j++)
        for (int k = 0; k < g.G; k++) {
            int32_t from = gw[(int64_t)j * g.G + k], to = gw[(int64_t)k * g.G + j];
            if (from >= 0 && to >= 0) {
                nout[from]++;
                nin[to]++;
            }
        }
    /* 1: direct all-reduce inside every group (member i sends to i+1, i+2,
     * ..., so that every step is a permutation; sends read the vector when
     * they start, before any mate's data is added into it) */
    for (int r = 0; r < P; r++) {
        const int32_t *m = g.mem + g.start[g.of[r]];
        int s = g.start[g.of[r] + 1] - g.start[g.of[r]], i = g.at[r];
        for (int d = 1; d < s; d++)
            cs_coll_send(b, r, m[(i + d) % s], 0, n, TAG_RS);
        for (int d = 1; d < s; d++)
            cs_coll_recv_reduce(b, r, m[(i - d + s) % s], 0, n, TAG_RS);
        /* waits for its sends and reduces; stage 2's sends, recvs and
         * reduces follow */
        gw_wait(b, r, 2 * (s - 1), nout[r] + 2 * (int64_t)nin[r]);
    }
    /* 2: each group's sum to every other group, gateway to gateway; the
     * receiving gateway adds the sums it gets into its partial [n, 2n) */
    for (int j = 0; j < g.G; j++)
        for (int k = 0; k < g.G; k++) {
            int32_t from = gw[(int64_t)j * g.G + k], to = gw[(int64_t)k * g.G + j];
            if (from < 0 || to < 0)
                continue;
            cs_coll_send(b, from, to, 0, n, TAG_DATA);
            cs_coll_recv_reduce(b, to, from, n, n, TAG_DATA);
        }
    for (int r = 0; r < P; r++) {
        const int32_t *m = g.mem + g.start[g.of[r]];
        int s = g.start[g.of[r] + 1] - g.start[g.of[r]], i = g.at[r];
        int64_t next = nin[r] ? (int64_t)s + 2 : 0; /* stage 3's first ops */
        for (int d = 1; d < s; d++)
            next += nin[m[(i - d + s) % s]] ? 2 : 0;
        gw_wait(b, r, nout[r] + (int64_t)nin[r], next);
    }
    /* 3: every gateway's partial to its mates and into its own vector */
    for (int r = 0; r < P; r++) {
        const int32_t *m = g.mem + g.start[g.of[r]];
        int s = g.start[g.of[r] + 1] - g.start[g.of[r]], i = g.at[r];
        if (nin[r]) {
            for (int d = 1; d < s; d++)
                cs_coll_send(b, r, m[(i + d) % s], n, n, TAG_AG);
            cs_coll_send(b, r, r, n, n, TAG_LOCAL);
            cs_coll_recv_reduce(b, r, r, 0, n, TAG_LOCAL);
        }
        for (int d = 1; d < s; d++)
            if (nin[m[(i - d + s) % s]])
                cs_coll_recv_reduce(b, r, m[(i - d + s) % s], 0, n, TAG_AG);
        cs_coll_wait(b, r);
    }
    free(nout);
    free(nin);
    free(gw);
    cs_coll_groups_destroy(&g);
    return CS_OK;
}

/* ---- Cerebras thesis §7.1, §7.4 ---------------------------------------------- */

/* §7.1: reduce with a thesis pattern to a root, then broadcast.  With
 * stream=1 the broadcast is pipelined with the reduction only where the
 * thesis pipelines it (every receiver is a leaf of the reduce: P = 2, or the
 * scalar pattern); see cs_coll_emit_mcast. */
static int build_naive(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    cs_coll_visit_cfg_t o;
    cs_coll_rtree_t t;
    int rc;
    if ((rc = cs_coll_visit_cfg(a, VISIT_ANY | VISIT_ROOT, PAT_CHAIN, &o, err)))
        return rc;
    if (a->P == 1 || a->bytes == 0)
        return CS_OK;
    int32_t *final = cs_malloc((size_t)a->P * sizeof *final);
    int32_t *all = cs_coll_ranks_from(a->P, 0);
    cs_coll_rtree_init(&t, a->P);
    rc = cs_coll_rtree_1d(&t, a, o.root, o.pat, &o.c, err);
    if (!rc) {
        cs_coll_emit_forest(b, &t, a->bytes, o.stream, THESIS_REDUCE, final);
        cs_coll_emit_mcast(b, &t, o.root, all, a->P, a->bytes, THESIS_BCAST, o.stream,
                           final[o.root]);
    }
    cs_coll_rtree_destroy(&t);
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
    cs_coll_visit_cfg_t o;
    int rc, rows, cols;
    if ((rc = cs_coll_visit_cfg(a, VISIT_BASE | VISIT_ROOT, PAT_CHAIN, &o, err)))
        return rc;
    if (a->P == 1 || a->bytes == 0)
        return CS_OK;
    cs_coll_grid(a, &rows, &cols);
    int ri = o.root / cols, cj = o.root % cols, n = rows > cols ? rows : cols;
    int32_t *final = cs_malloc((size_t)a->P * sizeof *final), *L = cs_malloc((size_t)n * sizeof *L);
    for (int phase = 0; phase < 2; phase++) {
        int lines = phase ? rows : cols, len = phase ? cols : rows;
        cs_coll_rtree_t t;
        cs_coll_rtree_init(&t, a->P);
        for (int x = 0; x < lines; x++) {
            grid_line(phase, x, ri, cj, rows, cols, L);
            cs_coll_pattern_apply(&t, L, len, &o.c);
        }
        cs_coll_emit_forest(b, &t, a->bytes, o.stream, phase ? THESIS_REDUCE2 : THESIS_REDUCE,
                            final);
        for (int x = 0; x < lines; x++) {
            grid_line(phase, x, ri, cj, rows, cols, L);
            cs_coll_emit_mcast(b, &t, L[0], L, len, a->bytes, phase ? THESIS_BCAST2 : THESIS_BCAST,
                               o.stream, final[L[0]]);
        }
        cs_coll_wait_all(b);
        cs_coll_rtree_destroy(&t);
    }
    free(final);
    free(L);
    return CS_OK;
}

/* ---- recursive-doubling all-reduce among a set of ranks --------------------
 * [off, off+len) is reduced over ranks[0..cnt).  When cnt is not a power of
 * two, the excess ranks first hand their vector to a partner and get the
 * result back at the end (the Cell paper's "extra round" to and from the
 * excess nodes): with far, ranks[pof2 + i] to ranks[i] (the paper does not
 * name the partner; this is the rule the code has always used), with near
 * ranks[2i+1] to ranks[2i] (the fold of coll_internal.h over indices).  A rank goes on to the next
 * round once its partner's vector is in and added, without waiting for the
 * partner to have read its own (the ACK): the paper's rdb lets rounds
 * overlap -- "after the second round there are 16 = 8 + 8 data messages that
 * have ever been initiated ... some might not have been completed" (§3.5) --
 * which needs one receive buffer per round, not a wait.  every > 0: a barrier among
 * the pof2 rdb ranks after rdb round j (1-based) whenever j % every == 0
 * (Rdb-Barrier).  Uses tags [tag, tag + PHASE_STRIDE). */
static void emit_rdb_allreduce(cs_coll_builder_t *b, const int32_t *ranks, int cnt, int64_t off,
                               int64_t len, int tag, int every, int far)
{
    cs_coll_fold_t f;
    int pof2, L;
    int32_t *vr;
    if (cnt <= 1)
        return;
    /* the fold over the indices into ranks[] */
    f = cs_coll_fold_rule(cnt, far);
    pof2 = f.Pp;
    L = floor_log2(pof2);
    for (int i = 0; i < f.e; i++) {
        int x = ranks[fold_extra(&f, i)], p = ranks[fold_partner(&f, i)];
        cs_coll_send_nz(b, x, p, off, len, tag);
        cs_coll_recv_reduce_nz(b, p, x, off, len, tag);
        cs_coll_wait(b, x);
        cs_coll_wait(b, p);
    }
    vr = cs_malloc((size_t)pof2 * sizeof *vr); /* the rank of each virtual rank */
    for (int i = 0; i < pof2; i++)
        vr[i] = ranks[fold_real(&f, i)];
    for (int j = 0; j < L; j++) {
        for (int i = 0; i < pof2; i++) {
            int p = i ^ (1 << j);
            cs_coll_send_nz(b, vr[i], vr[p], off, len, tag + 1 + j);
            cs_coll_recv_reduce_nz(b, vr[i], vr[p], off, len, tag + 1 + j);
            cs_coll_wait_recvs(b, vr[i]); /* rounds overlap (§3.5), see above */
        }
        if (every > 0 && (j + 1) % every == 0)
            cs_coll_barrier_among(b, vr, pof2, tag + BARRIER_TAG(j, 0));
    }
    free(vr);
    for (int i = 0; i < f.e; i++) {
        int x = ranks[fold_extra(&f, i)], p = ranks[fold_partner(&f, i)];
        cs_coll_send_nz(b, p, x, off, len, tag + 1 + L);
        cs_coll_recv_nz(b, x, p, off, len, tag + 1 + L);
        cs_coll_wait(b, x);
        cs_coll_wait(b, p);
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
                chain_send(b, cs_coll_send_nz(b, ranks[i], ranks[t], off + so, sl, tag), &prev,
                           par);
            }
        }
        if (i < c) {
            cs_coll_split(len, c, i, &so, &sl);
            for (int d = 1; d < s; d++)
                cs_coll_recv_reduce_nz(b, ranks[i], ranks[((i - d) % s + s) % s], off + so, sl,
                                       tag);
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
                chain_send(b, cs_coll_send_nz(b, ranks[i], ranks[(i + d) % s], off + so, sl, tag),
                           &prev, par);
        }
        for (int d = 1; d < s; d++) {
            int src = ((i - d) % s + s) % s;
            if (src < c) {
                cs_coll_split(len, c, src, &so, &sl);
                cs_coll_recv_nz(b, ranks[i], ranks[src], off + so, sl, tag);
            }
        }
        cs_coll_wait(b, ranks[i]);
    }
}

/* ===========================================================================
 * Cell: Rdb-Barrier all-reduce (paper §3.5, reference §3.5)
 * ======================================================================== */

/* rdb all-reduce with a barrier after every `every` rounds (default 2): the
 * paper's answer to the EIB's limit of 12 concurrent transfers.  every=1 is
 * the schedule of the paper's mailbox all-reduce (a barrier after each
 * round: 3 barriers for 8 SPEs).  Source: Cell paper §3.5. */
static int build_allreduce_rdb_barrier(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int every, far, rc;
    int32_t *all;
    if ((rc = cs_coll_opt_every(a, 2, &every, err)))
        return rc;
    /* the paper folds the excess nodes onto ranks pof2 away (§3.5's "extra
     * round"): far by default, unlike the generic algorithms */
    if ((rc = cs_coll_opt_fold(a, 1, &far, err)))
        return rc;
    if (a->bytes == 0)
        return CS_OK;
    all = cs_coll_ranks_from(a->P, 0);
    emit_rdb_allreduce(b, all, a->P, 0, a->bytes, PHASE_TAG(0), every, far);
    free(all);
    return CS_OK;
}


/* ===========================================================================
 * Cell: HybridA-x-y and HybridB-x-y all-reduce (paper §3.5, reference §3.5);
 * the hybrid's shape and all-gather are in coll_internal.c
 * ======================================================================== */

/* HybridA: binomial reduce of [0, n) inside each group, rdb all-reduce
 * among the y leaders (round j: XOR 2^j, so for P = 16, k = 2 the paper's
 * 0<->4 / 8<->12 then 0<->8 / 4<->12), binomial broadcast inside each group.
 * Source: Cell paper §3.5. */
static int build_allreduce_hybrid_a(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, y, rc;
    int64_t n = a->bytes;
    int32_t *leaders;
    if ((rc = cs_coll_hybrid_shape(a, &y, err)))
        return rc;
    for (int g = 0; g < y; g++) {
        int base = cs_coll_hybrid_start(P, y, g), s = cs_coll_hybrid_start(P, y, g + 1) - base;
        for (int i = 0; i < s; i++) {
            int lb = i ? lowbit(i) : 1 << 30;
            for (int d = 1; d < lb && i + d < s; d *= 2)
                cs_coll_recv_reduce_nz(b, base + i, base + i + d, 0, n, PHASE_TAG(0));
            cs_coll_wait(b, base + i);
            if (i) {
                cs_coll_send_nz(b, base + i, base + i - lb, 0, n, PHASE_TAG(0));
                cs_coll_wait(b, base + i);
            }
        }
    }
    leaders = cs_malloc((size_t)y * sizeof *leaders);
    for (int g = 0; g < y; g++)
        leaders[g] = cs_coll_hybrid_start(P, y, g);
    emit_rdb_allreduce(b, leaders, y, 0, n, PHASE_TAG(1), 0, 1); /* y is a power of two */
    free(leaders);
    for (int g = 0; g < y; g++) {
        int base = cs_coll_hybrid_start(P, y, g);
        cs_coll_group_bcast(b, base, cs_coll_hybrid_start(P, y, g + 1) - base, 0, n, PHASE_TAG(2));
    }
    return CS_OK;
}

/* Rabenseifner's reduce-scatter (recursive vector and distance halving:
 * step s exchanges with XOR pof2/2^s, as the paper states for HybridB),
 * leaving block r of bl (cs_coll_split of n into P) reduced at rank r.
 * Any P: with pof2 the largest power of two <= P and rem = P - pof2, each
 * extra rank first hands its whole vector to its partner (the fold of
 * coll_internal.h, rule `far`); virtual rank v's block is the blocks of the
 * real ranks it stands for (one run near, up to two far: cs_coll_fold_bytes);
 * at the end each partner passes its extra rank's block back. */
static void emit_rs_halving(cs_coll_builder_t *b, const cs_coll_blocks_t *bl, int tag, int far)
{
    int P = bl->P;
    cs_coll_fold_t f = cs_coll_fold_rule(P, far);
    int pof2 = f.Pp, rem = f.e, L = floor_log2(pof2);
    int64_t n = cs_coll_blk(bl, P);
    for (int i = 0; i < rem; i++) {
        int x = fold_extra(&f, i), p = fold_partner(&f, i);
        cs_coll_send_nz(b, x, p, 0, n, tag);
        cs_coll_recv_reduce_nz(b, p, x, 0, n, tag);
        cs_coll_wait(b, p);
        cs_coll_wait(b, x);
    }
    for (int s = 1; s <= L; s++) {
        int d = pof2 >> s;
        for (int v = 0; v < pof2; v++) {
            int pv = v ^ d, lo = v & ~(2 * d - 1), k;
            int keep = (v & d) ? lo + d : lo, give = (v & d) ? lo : lo + d;
            int r = fold_real(&f, v), pr = fold_real(&f, pv);
            int64_t o[2], l[2];
            k = cs_coll_fold_bytes(&f, NULL, bl, give, give + d, o, l);
            for (int q = 0; q < k; q++)
                cs_coll_send_nz(b, r, pr, o[q], l[q], tag + s);
            k = cs_coll_fold_bytes(&f, NULL, bl, keep, keep + d, o, l);
            for (int q = 0; q < k; q++)
                cs_coll_recv_reduce_nz(b, r, pr, o[q], l[q], tag + s);
            cs_coll_wait_recvs(b, r); /* the half given away is not written again */
        }
    }
    for (int i = 0; i < rem; i++) {
        int x = fold_extra(&f, i), p = fold_partner(&f, i);
        int64_t o = cs_coll_blk(bl, x), e = cs_coll_blk(bl, x + 1);
        cs_coll_send_nz(b, p, x, o, e - o, tag + L + 1);
        cs_coll_recv_nz(b, x, p, o, e - o, tag + L + 1);
        cs_coll_wait(b, p);
        cs_coll_wait(b, x);
    }
}

/* HybridB: reduce-scatter, then the hybrid-x-y all-gather of the reduced
 * blocks (m = n/P).  Source: Cell paper §3.5. */
static int build_allreduce_hybrid_b(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    cs_coll_blocks_t bl = {a->P, 1, 0, a->bytes};
    int y, far, rc;
    if ((rc = cs_coll_hybrid_shape(a, &y, err)))
        return rc;
    if ((rc = cs_coll_opt_fold(a, 0, &far, err)))
        return rc;
    emit_rs_halving(b, &bl, PHASE_TAG(0), far);
    for (int r = 0; r < a->P; r++)
        cs_coll_wait(b, r);
    cs_coll_hybrid_allgather(b, &bl, y, PHASE_TAG(1));
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
    int P = a->P, inter = 0, far = 1, rc, c;
    int64_t g, par, n = a->bytes;
    cs_coll_groups_t gr;
    int32_t *col;
    if ((rc = cs_coll_opt_int(a, "g", default_group_size(P), 1, P, &g, err)))
        return rc;
    if ((rc = cs_coll_opt_choice(a, "inter", inters, 0, &inter, err)))
        return rc;
    if ((rc = cs_coll_opt_int(a, "par", 0, 0, 1, &par, err)))
        return rc;
    /* read only for inter=rdb, so that fold= with inter=direct is reported
     * as an option that means nothing */
    if (inter == 1 && (rc = cs_coll_opt_fold(a, 1, &far, err)))
        return rc;
    if ((rc = cs_coll_groups_hint(&gr, a, 1, err)))
        return rc;
    if (!gr.G || cs_coll_opt_given(a, "g")) {
        cs_coll_groups_destroy(&gr);
        cs_coll_groups_consecutive(&gr, P, (int)((P + g - 1) / g));
    }
    c = P;
    for (int j = 0; j < gr.G; j++)
        if (gr.start[j + 1] - gr.start[j] < c)
            c = gr.start[j + 1] - gr.start[j];
    for (int j = 0; j < gr.G; j++)
        emit_direct_rs(b, gr.mem + gr.start[j], gr.start[j + 1] - gr.start[j], c, 0, n,
                       PHASE_TAG(0), (int)par);
    cs_coll_wait_all(b);
    col = cs_malloc((size_t)gr.G * sizeof *col);
    for (int t = 0; t < c; t++) {
        int64_t so, sl;
        cs_coll_split(n, c, t, &so, &sl);
        for (int j = 0; j < gr.G; j++)
            col[j] = gr.mem[gr.start[j] + t];
        if (inter == 0) {
            emit_direct_rs(b, col, gr.G, gr.G, so, sl, PHASE_TAG(1), (int)par);
            emit_direct_ag(b, col, gr.G, gr.G, so, sl, PHASE_TAG(2), (int)par);
        } else {
            emit_rdb_allreduce(b, col, gr.G, so, sl, PHASE_TAG(1), 0, far);
        }
    }
    free(col);
    cs_coll_wait_all(b);
    for (int j = 0; j < gr.G; j++)
        emit_direct_ag(b, gr.mem + gr.start[j], gr.start[j + 1] - gr.start[j], c, 0, n,
                       PHASE_TAG(3), (int)par);
    cs_coll_groups_destroy(&gr);
    return CS_OK;
}

/* ===========================================================================
 * registry
 * ======================================================================== */

/* Per dimension (coll_internal.c, cs_coll_dims_*): reduce-scatter along
 * dimension 0, then 1, ... on the shard the previous left, then all-gather
 * back from the last dimension to the first. */
static int allreduce_multidim(cs_coll_builder_t *b, cs_error_t *err)
{
    cs_coll_dims_t g;
    int rc;
    if ((rc = cs_coll_dims_get(cs_coll_args(b), &g, err)))
        return rc;
    for (int d = 0; d < g.n; d++)
        cs_coll_dims_step(b, &g, d, 1, 0);
    for (int d = g.n - 1; d >= 0; d--)
        cs_coll_dims_step(b, &g, d, 0, 0);
    return CS_OK;
}

static const char *const keys_butterfly[] = {"g", "inner", NULL};
static const char *const keys_gateway[] = {"g", NULL};
static const char *const k_naive[] = {"base", "inner", "S", "TR", "root", "stream", NULL};
static const char *const k_2d_naive[] = {"base", "S", "TR", "root", "stream", NULL};
static const char *const keys_every[] = {"every", "fold", NULL};
static const char *const keys_fold[] = {"fold", NULL};
static const char *const keys_hybrid_fold[] = {"x", "y", "fold", NULL};
static const char *const keys_hybrid[] = {"x", "y", NULL};
static const char *const keys_hier[] = {"g", "inter", "par", "fold", NULL};
static const char *const keys_multidim[] = {"dims", "inner", NULL};

/* Op counts (cs_coll_algo_t.max_ops): P - 1 reduce-scatter steps of a
 * send, a recv and a calc per rank, P - 1 allgather steps of a send and a
 * recv: 5 P (P - 1); fewer when pieces are empty (n < P).  The reduce +
 * broadcast: a binomial reduce (3 per non-root) and broadcast (2). */
static int64_t ring_ops(const cs_coll_args_t *a) { return cs_coll_ops_pairs(a->P, 5); }
static int64_t reduce_bcast_ops(const cs_coll_args_t *a) { return cs_coll_ops_star(a->P, 5); }
/* rdb: P = Pp + e; a send and a recv-and-add (recv + calc) per extra rank
 * in, log2 Pp rounds of a send and a recv-and-add per virtual rank, a send
 * and a recv per extra rank out: 3 Pp log2 Pp + 5 e, under either fold
 * rule (each moves the whole vector). */
static int64_t rdb_ops(const cs_coll_args_t *a)
{
    int64_t Pp = pow2_floor(a->P);
    return 3 * Pp * floor_log2(Pp) + 5 * (a->P - Pp);
}

static const cs_coll_algo_t ar_ring = {
    CS_COLL_ALLREDUCE, "ring",
    "ring reduce-scatter + ring allgather over P pieces of the vector, in ring order",
    "lecture §8.9", "", NULL, allreduce_ring, ring_ops};
static const cs_coll_algo_t ar_rdb = {
    CS_COLL_ALLREDUCE, "rdb",
    "recursive doubling: log2 rounds exchanging and adding the whole vector; extra ranks folded",
    "generic (MPI; Thakur et al. 2005)", FOLD_TEXT, keys_fold, allreduce_rdb, rdb_ops};
static const cs_coll_algo_t ar_rabenseifner = {
    CS_COLL_ALLREDUCE, "rabenseifner",
    "recursive-halving reduce-scatter + recursive-doubling allgather; extra ranks folded",
    "generic (Rabenseifner; Thakur et al. 2005)", FOLD_TEXT, keys_fold, allreduce_rabenseifner,
    NULL};
static const cs_coll_algo_t ar_reduce_bcast = {
    CS_COLL_ALLREDUCE, "reduce-bcast", "binomial reduce to rank 0, then binomial broadcast",
    "lecture §8.1 + §8.6", "", NULL, allreduce_reduce_bcast, reduce_bcast_ops};
static const cs_coll_algo_t ar_butterfly = {
    CS_COLL_ALLREDUCE, "butterfly",
    "log_G rounds: groups of G ranks differing in one base-G digit allreduce the vector",
    "Cerebras thesis Ch. 7 (Lemma 7.3)",
    "g=G group size >= 2 (default 2; above P: all ranks); inner=direct|ring how a group "
    "allreduces (default direct: everyone sends the vector to the G-1 others)",
    keys_butterfly, allreduce_butterfly, NULL};

static const cs_coll_algo_t ar_gateway = {
    CS_COLL_ALLREDUCE, "gateway",
    "small tensors in 3 hops: direct all-reduce in every group, each group's sum over the link "
    "to every other group (gateway hint), gateways' partials spread in the group",
    "Groq ISCA'22 §5.6",
    "g=group size >= 1 when the machine gives no groups (default 8 if 8 | P, else "
    "ceil(sqrt P); above P: one group); given, it overrides the hierarchy and gateway hints",
    keys_gateway, allreduce_gateway, NULL};

static const cs_coll_algo_t a_naive = {
    CS_COLL_ALLREDUCE, "naive",
    "reduce to a root with a thesis pattern, then one multicast broadcast",
    "Cerebras thesis §7.1 (Lemma 7.1)",
    "base=chain|tree|two-phase|scalar|preorder|left-right|ring|jump (default chain); "
    "inner=chain|tree|two-phase|scalar|preorder (base of left-right / jump, default chain); "
    "S=GROUP; TR=CYCLES; root=RANK (default 0); " STREAM_OPT,
    k_naive, build_naive, NULL};
static const cs_coll_algo_t a_2d_naive = {
    CS_COLL_ALLREDUCE, "2d-naive",
    "naive allreduce (reduce + multicast) on every column, then on every row",
    "Cerebras thesis §7.4", BASE_OPT "root=RANK (default 0); " STREAM_OPT, k_2d_naive,
    build_2d_naive, NULL};
static const cs_coll_algo_t allreduce_rdb_barrier = {
    CS_COLL_ALLREDUCE, "rdb-barrier",
    "recursive-doubling all-reduce with a barrier after every 2 rounds (Rdb-Barrier)",
    "Cell paper §3.5",
    "every=N rounds between barriers (default 2; 1 = mailbox all-reduce); fold=near|far "
    "(default far: rank Pp+i folds onto i, the paper's extra round; near: 2i+1 onto 2i)",
    keys_every, build_allreduce_rdb_barrier, NULL};

static const cs_coll_algo_t allreduce_hybrid_a = {
    CS_COLL_ALLREDUCE, "hybrid-a",
    "HybridA-x-y: binomial reduce in groups, rdb all-reduce among the y leaders, binomial "
    "broadcast in groups",
    "Cell paper §3.5",
    "x=switch round, y=leaders (power of two); default y=2^floor(log2 ceil(sqrt P))",
    keys_hybrid, build_allreduce_hybrid_a, NULL};

static const cs_coll_algo_t allreduce_hybrid_b = {
    CS_COLL_ALLREDUCE, "hybrid-b",
    "HybridB-x-y: Rabenseifner reduce-scatter (recursive halving), then the hybrid-x-y "
    "all-gather",
    "Cell paper §3.5",
    "x=switch round, y=leaders (power of two); default y=2^floor(log2 ceil(sqrt P)); "
    FOLD_TEXT " (the reduce-scatter's)",
    keys_hybrid_fold, build_allreduce_hybrid_b, NULL};

static const cs_coll_algo_t allreduce_hierarchical = {
    CS_COLL_ALLREDUCE, "hierarchical",
    "intra-group reduce-scatter, inter-group all-reduce of each shard, intra-group all-gather "
    "(groups from the hierarchy hint or g consecutive ranks)",
    "Groq ISCA'22 §5.6",
    "g=group size (default: hint, else 8 if 8 | P, else ceil(sqrt P)); inter=direct|rdb "
    "(default direct); par=0|1 (1: post a stage's sends at once, for many-port machines); "
    "fold=near|far (inter=rdb with a non-power-of-two number of groups; default far: group "
    "Pp+i folds onto i)",
    keys_hier, build_allreduce_hierarchical, NULL};

static const cs_coll_algo_t allreduce_multidim_algo = {
    CS_COLL_ALLREDUCE, "multidim",
    "per dimension of the machine: reduce-scatter along each dimension in turn, then all-gather "
    "back (each dimension on its own links)",
    "ASTRA-sim's hierarchical collectives (issue 18)",
    "dims=AxB... (default: the machine's dimensions hint, else one); inner=ring|direct, or one "
    "per dimension joined by + (default ring)",
    keys_multidim, allreduce_multidim, NULL};

/* Listing order: the default first. */
const cs_coll_algo_t *const cs_coll_algos_allreduce[] = {
    &ar_ring, &ar_rdb, &ar_rabenseifner, &ar_reduce_bcast, &ar_butterfly, &ar_gateway,
    &a_naive, &a_2d_naive, &allreduce_rdb_barrier, &allreduce_hybrid_a, &allreduce_hybrid_b,
    &allreduce_hierarchical, &allreduce_multidim_algo, NULL};
