/*
 * test_thesis.c - the Cerebras thesis's patterns (their trees and emitter in
 * src/coll/visit.c, the algorithms in reduce.c, allreduce.c, broadcast.c) on the
 * alpha-beta machine: their simulated times against closed forms derived
 * here from the engine's rules (src/engine/net.h, exec.h), over sweeps of P,
 * n, alpha, beta, the network unit and the root, in both fidelity modes;
 * their shapes against the thesis's own statements (the pre-order tree is
 * scalar at B = 1 and chain for long vectors); and validation of every
 * algorithm over P in {1,2,3,5,8,13,16} and several sizes and roots.
 *
 * The engine's rules that the derivations use (alpha-beta machine, hop=0
 * unless stated): a message takes its sender's send port and its receiver's
 * receive port (in posting order), pays alpha, then moves its units at beta
 * per byte; a streamed send starts (takes its ports, pays alpha) when the op
 * it streams from starts, and may move unit i once that op has passed unit
 * i.  Hence a pipeline of H streamed links carrying n bytes in units of at
 * most u is a proportionate flow shop: alpha + beta*n + (H-1)*beta*u, with
 * u = min(unit, n).  Store-and-forward links cost D = alpha + beta*n each.
 * A 2-hop link on the line with hop=h adds h per unit as a pure delay.
 *
 * Notation below: a = alpha, b = beta (ticks), D = a + b*n, u = min(U, n).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

typedef struct ab {
    const char *topo;
    int64_t a_ns, b_ps, U, hop_ns, red_ps;
} ab_t;

static void spec_of(const ab_t *m, int P, char *buf, size_t len)
{
    snprintf(buf, len,
             "alphabeta:topo=%s,p=%d,alpha=%lldns,beta=%lldps,packet=%lld,hop=%lldns,reduce=%lldps",
             m->topo, P, (long long)m->a_ns, (long long)m->b_ps, (long long)m->U,
             (long long)m->hop_ns, (long long)m->red_ps);
}

/* ticks are picoseconds */
static int64_t A(const ab_t *m) { return m->a_ns * 1000; }
static int64_t Bt(const ab_t *m) { return m->b_ps; }
static int64_t Dt(const ab_t *m, int64_t n) { return A(m) + Bt(m) * n; }
static int64_t Ut(const ab_t *m, int64_t n) { return m->U < n ? m->U : n; }
static int64_t H(const ab_t *m) { return m->hop_ns * 1000; }

static int clog2(int64_t x)
{
    int k = 0;
    while (((int64_t)1 << k) < x)
        k++;
    return k;
}

static int64_t ceil_sqrt(int64_t k)
{
    int64_t s = 1;
    while (s * s < k)
        s++;
    return s;
}

/* ---- the derived alpha-beta costs ---------------------------------------- */

/* A streamed chain of P ranks: P-1 links, all alphas paid at once. */
static int64_t t_chain(const ab_t *m, int P, int64_t n, int stream)
{
    if (P < 2)
        return 0;
    return stream ? A(m) + Bt(m) * n + (P - 2) * Bt(m) * Ut(m, n) : (P - 1) * Dt(m, n);
}

/* Scalar: the root's one receive port takes P-1 whole vectors in turn. */
static int64_t t_scalar(const ab_t *m, int P, int64_t n) { return (P - 1) * Dt(m, n); }

/* Tree: every PE receives its children back to back and each child's data
 * is complete when the port reaches it, so the root is busy for
 * ceil(log2 P) messages of D (the lecture's binomial time), streamed or not. */
static int64_t t_tree(const ab_t *m, int P, int64_t n) { return clog2(P) * Dt(m, n); }

/* Two-phase, store and forward: the longest path has S-1 links in the last
 * group and g-1 between leaders. */
static int64_t t_two_phase_sf(const ab_t *m, int P, int64_t S, int64_t n)
{
    int64_t s = S ? S : ceil_sqrt(P), g;
    if (P < 2)
        return 0;
    if (s > P)
        s = P;
    g = (P + s - 1) / s;
    return (s - 1 + g - 1) * Dt(m, n);
}

/* Two-phase, streamed: every group chain ends at C = a + b n + (S-2) b u;
 * each leader's stream (posted earlier) waits for the previous leader's
 * port until then, after which the leader chain is one pipeline of g-1
 * links whose alphas run together: C + D + (g-2) b u (g >= 3, where the
 * middle leaders' full groups end at C too).  With g = 2 the last leader's
 * stream enters p0 as soon as p0's own group of f PEs is done.  S = 1 or a
 * single group is a plain chain. */
static int64_t t_two_phase_stream(const ab_t *m, int P, int64_t S, int64_t n)
{
    int64_t s = S ? S : ceil_sqrt(P), g, f;
    if (P < 2)
        return 0;
    if (s > P)
        s = P;
    g = (P + s - 1) / s;
    f = P - s * (g - 1);
    if (s == 1 || g == 1)
        return t_chain(m, P, n, 1);
    if (g == 2) {
        /* p0's own group (f PEs) may end before the last group: then the
         * last leader's stream enters p0 early and is the chain's last link */
        int64_t c_f = t_chain(m, f, n, 1), c_s = A(m) + Bt(m) * n + (s - 1) * Bt(m) * Ut(m, n);
        return c_f + Dt(m, n) > c_s ? c_f + Dt(m, n) : c_s;
    }
    return 2 * Dt(m, n) + (s + g - 4) * Bt(m) * Ut(m, n);
}

static int64_t t_two_phase(const ab_t *m, int P, int64_t S, int64_t n, int stream)
{
    return stream ? t_two_phase_stream(m, P, S, n) : t_two_phase_sf(m, P, S, n);
}

/* Left-right with chain sides (Lemma 6.1's shape): the root's own side
 * (the smaller one, left on a tie) of L_own PEs including the root ends at
 * T_own; the other side's L_oth PEs reduce to the PE next to the root,
 * whose stream waits for the root's port until T_own:
 *   streamed  max(T_own + D, a + b n + (L_oth - 1) b u)
 *   S&F       max(T_own, (L_oth - 1) D) + D */
static int64_t t_left_right(const ab_t *m, int P, int root, int64_t n, int stream)
{
    int left = root, right = P - 1 - root, own_left = left <= right;
    int own = (own_left ? left : right) + 1, oth = own_left ? right : left;
    int64_t t_own = t_chain(m, own, n, stream), x;
    if (!oth)
        return t_own;
    if (stream) {
        x = A(m) + Bt(m) * n + (oth - 1) * Bt(m) * Ut(m, n);
        return t_own + Dt(m, n) > x ? t_own + Dt(m, n) : x;
    }
    x = (oth - 1) * Dt(m, n);
    return (t_own > x ? t_own : x) + Dt(m, n);
}

/* ---- running ---------------------------------------------------------------- */

static const char *mode_name(cs_net_mode_t mode) { return mode == CS_NET_FLUID ? "fluid" : "packet"; }

static void expect_time(const ab_t *m, const char *coll, const char *algo, int P, int64_t n,
                        int root, const char *opts, cs_net_mode_t mode, int64_t want)
{
    char spec[256];
    spec_of(m, P, spec, sizeof spec);
    h_run_t r = h_run(spec, coll, algo, P, n, root, opts, mode, 0);
    cr_assert_eq(r.rc, CS_OK, "%s/%s on %s P=%d n=%lld: %s", coll, algo, spec, P, (long long)n,
                 r.err.msg);
    cr_expect_eq(r.finish, want,
                 "%s/%s [%s] on %s (%s) P=%d n=%lld root=%d: simulated %lld, derived %lld", coll,
                 algo, opts ? opts : "", spec, mode_name(mode), P, (long long)n, root,
                 (long long)r.finish, (long long)want);
    h_done(&r);
}

/* machines swept by the timing tests */
static const ab_t machines[] = {
    {"complete", 1000, 1000, 64, 0, 0},
    {"complete", 50, 250, 100, 0, 0},
    {"line", 1000, 1000, 64, 0, 0},
    {"line", 200, 2000, 32, 0, 0},
};
#define NMACH (int)(sizeof machines / sizeof *machines)
static const int Ps[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16};
#define NP (int)(sizeof Ps / sizeof *Ps)
static const int64_t sizes[] = {1, 10, 64, 100, 640, 1000, 4099};
#define NS (int)(sizeof sizes / sizeof *sizes)

#define SWEEP(...)                                                                    \
    for (int mi = 0; mi < NMACH; mi++)                                                 \
        for (int md = 0; md < 2; md++)                                                 \
            for (int pi = 0; pi < NP; pi++)                                            \
                for (int si = 0; si < NS; si++)                                        \
                    for (int st = 0; st < 2; st++) {                                   \
                        const ab_t *m = &machines[mi];                                 \
                        cs_net_mode_t mode = md ? CS_NET_FLUID : CS_NET_PACKET;        \
                        int P = Ps[pi];                                                \
                        int64_t n = sizes[si];                                         \
                        const char *so = st ? "stream=1" : "stream=0";                 \
                        (void)so;                                                      \
                        __VA_ARGS__                                                    \
                    }

/* ---- timing: 1D reduce --------------------------------------------------- */

Test(thesis, chain_time)
{
    SWEEP({
        expect_time(m, "reduce", "thesis-chain", P, n, 0, so, mode, t_chain(m, P, n, st));
        expect_time(m, "reduce", "thesis-chain", P, n, P - 1, so, mode, t_chain(m, P, n, st));
    })
}

Test(thesis, scalar_time)
{
    SWEEP({ expect_time(m, "reduce", "scalar", P, n, P / 2, so, mode, t_scalar(m, P, n)); })
}

/* On a line the formula needs the tree's rounds to stay apart; they do for
 * P a power of two (see tree_on_line_overtaking for what happens else). */
Test(thesis, tree_time)
{
    SWEEP({
        if (!strcmp(m->topo, "line") && (P & (P - 1)))
            continue;
        expect_time(m, "reduce", "tree", P, n, 0, so, mode, t_tree(m, P, n));
        expect_time(m, "reduce", "tree", P, n, P / 3, so, mode, t_tree(m, P, n));
    })
}

static int32_t peak_k(const h_run_t *r)
{
    int32_t k = 0;
    for (int c = 0; c < cs_topo_channels(r->m->topo); c++)
        if (cs_net_chan_stats(r->res.net, c)->peak_k > k)
            k = cs_net_chan_stats(r->res.net, c)->peak_k;
    return k;
}

/* The tree's rounds on a line: with P a power of two no channel ever
 * carries two messages (as the lecture's binomial reduce).  With P = 2^k+1
 * the far leaf p_{2^k} has nothing to wait for: its eager send reaches p0's
 * port right after p1's, in round 2, and crosses the line while p4 takes
 * p6's stream, so they share channels (k = 2) and the tree is slower than
 * ceil(log2 P) D.  The thesis's router gating ("receive from the closest
 * first") stalls that stream instead; a machine with one receive port and
 * eager sends cannot. */
Test(thesis, tree_on_line_overtaking)
{
    const ab_t m = {"line", 1000, 1000, 64, 0, 0};
    for (int md = 0; md < 2; md++)
        for (int P = 2; P <= 64; P *= 2) {
            char spec[256];
            cs_net_mode_t mode = md ? CS_NET_FLUID : CS_NET_PACKET;
            spec_of(&m, P, spec, sizeof spec);
            h_run_t r = h_run(spec, "reduce", "tree", P, 1000, 0, NULL, mode, 0);
            cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
            cr_expect_eq(r.finish, t_tree(&m, P, 1000), "P=%d", P);
            cr_expect_eq(peak_k(&r), P > 1 ? 1 : 0, "P=%d: peak k %d", P, peak_k(&r));
            h_done(&r);
            if (P < 8)
                continue;
            spec_of(&m, P + 1, spec, sizeof spec);
            r = h_run(spec, "reduce", "tree", P + 1, 1000, 0, NULL, mode, 0);
            cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
            cr_expect_gt(r.finish, t_tree(&m, P + 1, 1000), "P=%d", P + 1);
            cr_expect_eq(peak_k(&r), 2, "P=%d: peak k %d", P + 1, peak_k(&r));
            h_done(&r);
        }
}

Test(thesis, two_phase_time)
{
    static const int64_t Ss[] = {0, 1, 2, 3, 5, 100};
    SWEEP({
        for (int k = 0; k < 6; k++) {
            char o[64];
            if (Ss[k])
                snprintf(o, sizeof o, "S=%lld,%s", (long long)Ss[k], so);
            else
                snprintf(o, sizeof o, "%s", so);
            expect_time(m, "reduce", "two-phase", P, n, 0, o, mode,
                        t_two_phase(m, P, Ss[k], n, st));
        }
    })
}

Test(thesis, left_right_time)
{
    SWEEP({
        for (int root = 0; root < P; root++)
            expect_time(m, "reduce", "left-right", P, n, root, so, mode,
                        t_left_right(m, P, root, n, st));
    })
}

/* Ring and jump with a chain base are chains (of P ranks in ring order, of
 * P-1 ranks plus the jump) as long as every link costs the same. */
Test(thesis, ring_and_jump_time)
{
    SWEEP({
        for (int root = 0; root < P; root += (P > 4 ? P / 4 : 1)) {
            expect_time(m, "reduce", "ring", P, n, root, so, mode, t_chain(m, P, n, st));
            expect_time(m, "reduce", "jump", P, n, root, so, mode, t_chain(m, P, n, st));
        }
    })
}

/* Jump over a two-phase base: the reduction of the P-1 other ranks plus one
 * more streamed link (or one more D); with a tree base, the same where the
 * last message into the end PE is its last child's, i.e. P-1 a power of 2. */
Test(thesis, jump_over_two_phase_and_tree_time)
{
    SWEEP({
        if (P < 3)
            continue;
        int64_t extra = st ? Bt(m) * Ut(m, n) : Dt(m, n);
        char o[64];
        snprintf(o, sizeof o, "base=two-phase,%s", so);
        expect_time(m, "reduce", "jump", P, n, P / 2, o, mode,
                    t_two_phase(m, P - 1, 0, n, st) + extra);
        if ((P - 1) & (P - 2))
            continue;
        snprintf(o, sizeof o, "base=tree,%s", so);
        expect_time(m, "reduce", "jump", P, n, 1, o, mode, t_tree(m, P - 1, n) + extra);
    })
}

/* Lemma 6.3's shape on a line with a router latency h: the even/odd ring
 * uses 2-hop links except p1 -> p0 and the link between the last even and
 * the last odd PE, and the reduction skips the root's outgoing link, so it
 * pays h on P-3 links (P-2 when the root's own link is a 1-hop one, e.g.
 * root 1: reference note §6.7).  Jump (Lemma 6.4's "+ root"): the chain over
 * the others crosses the root once (one 2-hop link) and the end PE's stream
 * travels min(root, P-1-root) hops to the root: h * min(root, P-1-root).
 * Left-right uses only neighbour links: no h at all. */
Test(thesis, line_hop_ring_jump_left_right)
{
    const ab_t lm = {"line", 1000, 1000, 64, 300, 0};
    for (int md = 0; md < 2; md++)
        for (int P = 2; P <= 13; P++)
            for (int si = 0; si < NS; si++)
                for (int st = 0; st < 2; st++)
                    for (int root = 0; root < P; root++) {
                        cs_net_mode_t mode = md ? CS_NET_FLUID : CS_NET_PACKET;
                        int64_t n = sizes[si];
                        const char *so = st ? "stream=1" : "stream=0";
                        /* the thesis's ring: root's successor in 0,2,4,..,5,3,1 */
                        int succ = root % 2 == 0 ? (root + 2 < P ? root + 2 : (P % 2 ? P - 2 : P - 1))
                                                 : (root >= 3 ? root - 2 : 0);
                        int ring_links = P < 3 ? 0 : (succ - root == 2 || root - succ == 2 ? P - 3 : P - 2);
                        int jump = root < P - 1 - root ? root : P - 1 - root;
                        expect_time(&lm, "reduce", "ring", P, n, root, so, mode,
                                    t_chain(&lm, P, n, st) + ring_links * H(&lm));
                        expect_time(&lm, "reduce", "jump", P, n, root, so, mode,
                                    t_chain(&lm, P, n, st) + jump * H(&lm));
                        expect_time(&lm, "reduce", "left-right", P, n, root, so, mode,
                                    t_left_right(&lm, P, root, n, st));
                    }
}

/* A streamed chain with a reduction cost g per byte: the adds are pipeline
 * stages too (2(P-1) stages of b*u and g*u for k = n/u full units):
 * a + (P-1)(b+g)u + (k-1) max(b,g) u; store and forward: (P-1)(D + g n). */
Test(thesis, chain_with_reduction_cost)
{
    static const int64_t gs[] = {500, 1000, 3000};
    for (int gi = 0; gi < 3; gi++)
        for (int md = 0; md < 2; md++)
            for (int P = 2; P <= 9; P++)
                for (int64_t k = 1; k <= 12; k += 5) {
                    ab_t m = {"complete", 1000, 1000, 64, 0, gs[gi]};
                    cs_net_mode_t mode = md ? CS_NET_FLUID : CS_NET_PACKET;
                    int64_t n = k * m.U, g = gs[gi], b = Bt(&m), mx = b > g ? b : g;
                    expect_time(&m, "reduce", "thesis-chain", P, n, 0, "stream=1", mode,
                                A(&m) + (P - 1) * (b + g) * m.U + (k - 1) * mx * m.U);
                    expect_time(&m, "reduce", "thesis-chain", P, n, 0, "stream=0", mode,
                                (P - 1) * (Dt(&m, n) + g * n));
                }
}

/* ---- the pre-order tree (Lemma 5.9) --------------------------------------- */

/* Which rank each rank sends to in the program (-1: none). */
static void parents_of(int P, int64_t n, int root, const char *opts, int32_t *parent)
{
    const cs_coll_algo_t *algo;
    cs_error_t err;
    cs_spec_t sp, *op = NULL;
    cs_program_t *prog;
    cs_coll_hints_t hints;
    memset(&hints, 0, sizeof hints);
    if (opts) {
        char text[256];
        snprintf(text, sizeof text, "opts:%s", opts);
        cr_assert_eq(cs_spec_parse(text, &sp, &err), CS_OK, "%s", err.msg);
        op = &sp;
    }
    cs_coll_args_t a = {CS_COLL_REDUCE, P, n, root, 4096, &hints, op};
    cr_assert_eq(cs_coll_find(CS_COLL_REDUCE, "preorder", &algo, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_coll_build(algo, &a, &prog, &err), CS_OK, "%s", err.msg);
    for (int r = 0; r < P; r++)
        parent[r] = -1;
    for (int32_t i = 0; i < cs_program_nops(prog); i++) {
        const cs_op_t *o = cs_program_op(prog, i);
        if (o->kind == CS_OP_SEND) {
            cr_assert_eq(parent[o->rank], -1, "rank %d sends twice", o->rank);
            parent[o->rank] = o->peer;
        }
    }
    cs_program_free(prog);
    if (op)
        cs_spec_destroy(op);
}

/* T_OPT(P, 1) = T_message(P, 1) (reference note §7): at B = 1 the best
 * pre-order tree is the scalar pattern, everyone straight to the root; for
 * B >= 6P-ish it is the chain (note §4.1: T_OPT = T_chain from B = 3072 at
 * P = 512).  On the alpha-beta machine these take the scalar and chain
 * times. */
Test(thesis, preorder_shapes_and_times)
{
    int32_t parent[64];
    for (int P = 2; P <= 40; P++)
        for (int root = 0; root < P; root += 7) {
            parents_of(P, 4, root, NULL, parent);
            for (int r = 0; r < P; r++)
                cr_assert_eq(parent[r], r == root ? -1 : root, "B=1, P=%d: rank %d -> %d", P, r,
                             parent[r]);
            parents_of(P, 4 * 4096, root, NULL, parent);
            for (int v = 1; v < P; v++)
                cr_assert_eq(parent[(root + v) % P], (root + v - 1) % P, "B=4096, P=%d: v=%d", P, v);
        }
    for (int mi = 0; mi < NMACH; mi++)
        for (int md = 0; md < 2; md++)
            for (int pi = 0; pi < NP; pi++) {
                const ab_t *m = &machines[mi];
                cs_net_mode_t mode = md ? CS_NET_FLUID : CS_NET_PACKET;
                int P = Ps[pi];
                expect_time(m, "reduce", "preorder", P, 3, 0, NULL, mode, t_scalar(m, P, 3));
                expect_time(m, "reduce", "preorder", P, 4 * 4096, 0, NULL, mode,
                            t_chain(m, P, 4 * 4096, 1));
                expect_time(m, "reduce", "preorder", P, 4 * 4096, 0, "stream=0", mode,
                            t_chain(m, P, 4 * 4096, 0));
            }
}

/* ---- 2D ---------------------------------------------------------------------- */

/* cs_coll_grid's contract for a machine without a grid: rows <= cols,
 * closest to square. */
static void near_square(int P, int *rows, int *cols)
{
    int r = 1;
    for (int x = 1; x * x <= P; x++)
        if (P % x == 0)
            r = x;
    *rows = r;
    *cols = P / r;
}

/* 2D chain streamed: the column chains end at a + b n + (R-2) b u; each row
 * PE's stream waits for its left neighbour's port until then, and the row
 * is one pipeline: 2D + (R + C - 4) b u.  Store and forward, and any base,
 * the thesis's T_p(M) + T_p(N). */
static int64_t t_2d_chain(const ab_t *m, int R, int C, int64_t n, int stream)
{
    if (R == 1 || C == 1)
        return t_chain(m, R * C, n, stream);
    if (!stream)
        return (R - 1 + C - 1) * Dt(m, n);
    return 2 * Dt(m, n) + (R + C - 4) * Bt(m) * Ut(m, n);
}

Test(thesis, reduce_2d_time)
{
    static const int grids[][2] = {{1, 1}, {1, 5}, {2, 2}, {2, 3}, {3, 3}, {3, 5}, {4, 4}, {4, 6}, {5, 3}};
    for (int gi = 0; gi < 9; gi++)
        for (int topo = 0; topo < 2; topo++)
            for (int md = 0; md < 2; md++)
                for (int si = 0; si < NS; si++)
                    for (int st = 0; st < 2; st++) {
                        int R = grids[gi][0], C = grids[gi][1], P = R * C;
                        cs_net_mode_t mode = md ? CS_NET_FLUID : CS_NET_PACKET;
                        int64_t n = sizes[si];
                        const char *so = st ? "stream=1" : "stream=0";
                        ab_t m = {"complete", 1000, 1000, 64, 0, 0};
                        char spec[256];
                        if (topo) {
                            snprintf(spec, sizeof spec, "alphabeta:topo=mesh,rows=%d,cols=%d,alpha=1us,beta=1ns,packet=64", R, C);
                        } else {
                            near_square(P, &R, &C);
                            spec_of(&m, P, spec, sizeof spec);
                        }
                        for (int root = 0; root < P; root += 3) {
                            struct {
                                const char *algo;
                                int64_t want;
                            } cases[] = {
                                {"2d-chain", t_2d_chain(&m, R, C, n, st)},
                                {"2d-tree", t_tree(&m, R, n) + t_tree(&m, C, n)},
                                {"2d-two-phase", st ? -1 : t_two_phase_sf(&m, R, 0, n) +
                                                               t_two_phase_sf(&m, C, 0, n)},
                            };
                            for (int k = 0; k < 3; k++) {
                                if (cases[k].want < 0)
                                    continue;
                                h_run_t r = h_run(spec, "reduce", cases[k].algo, P, n, root, so, mode, 0);
                                cr_assert_eq(r.rc, CS_OK, "%s: %s", cases[k].algo, r.err.msg);
                                cr_expect_eq(r.finish, cases[k].want,
                                             "reduce/%s on %s (%s) %dx%d n=%lld root=%d %s: "
                                             "simulated %lld, derived %lld",
                                             cases[k].algo, spec, mode_name(mode), R, C, (long long)n,
                                             root, so, (long long)r.finish, (long long)cases[k].want);
                                h_done(&r);
                            }
                        }
                    }
}

/* ---- allreduce and broadcast ------------------------------------------------- */

/* Naive allreduce: the reduce, then the multicast that a machine without
 * multicast lowers to P-1 unicasts on the root's one send port: T_reduce +
 * (P-1) D.  The thesis pipelines the broadcast with the reduce only when
 * the receivers are free (P = 2: T_naive(2) ~ T_bcast(2,B) + T_bcast(2,1));
 * so does the program (every receiver a leaf of the reduce: P = 2, or the
 * scalar base): the first unicast streams from the root's final adds, one
 * more pipeline stage (+ b u), and the P-2 others follow at D each. */
Test(thesis, naive_allreduce_time)
{
    SWEEP({
        if (P < 2)
            continue;
        char o[64];
        int64_t piped = Bt(m) * Ut(m, n) + (P - 2) * Dt(m, n), bc = (P - 1) * Dt(m, n);
        snprintf(o, sizeof o, "base=chain,%s", so);
        expect_time(m, "allreduce", "naive", P, n, 0, o, mode,
                    t_chain(m, P, n, st) + (st && P == 2 ? piped : bc));
        /* the tree's receivers are all leaves up to P = 3 */
        snprintf(o, sizeof o, "base=tree,root=%d,%s", P - 1, so);
        expect_time(m, "allreduce", "naive", P, n, 0, o, mode,
                    t_tree(m, P, n) + (st && P <= 3 ? piped : bc));
        snprintf(o, sizeof o, "base=scalar,%s", so);
        expect_time(m, "allreduce", "naive", P, n, 0, o, mode, t_scalar(m, P, n) + (st ? piped : bc));
        snprintf(o, sizeof o, "base=two-phase,%s", so);
        expect_time(m, "allreduce", "naive", P, n, 0, o, mode,
                    t_two_phase(m, P, 0, n, st) + (st && P == 2 ? piped : bc));
    })
}

/* 2D naive allreduce, store and forward: column phase (reduce + R-1
 * unicasts), then the row phase, which every row starts by the time the
 * last column broadcast is in: the thesis's T_p(M) + T_p(N). */
Test(thesis, naive_2d_allreduce_time)
{
    static const int grids[][2] = {{1, 4}, {2, 2}, {2, 3}, {3, 3}, {3, 4}, {4, 4}};
    for (int gi = 0; gi < 6; gi++)
        for (int md = 0; md < 2; md++)
            for (int si = 0; si < NS; si++) {
                int R = grids[gi][0], C = grids[gi][1], P = R * C;
                int64_t n = sizes[si];
                cs_net_mode_t mode = md ? CS_NET_FLUID : CS_NET_PACKET;
                ab_t m = {"mesh", 1000, 1000, 64, 0, 0};
                char spec[256];
                snprintf(spec, sizeof spec, "alphabeta:topo=mesh,rows=%d,cols=%d,alpha=1us,beta=1ns,packet=64", R, C);
                int64_t want = t_chain(&m, R, n, 0) + (R - 1) * Dt(&m, n) + t_chain(&m, C, n, 0) +
                               (C - 1) * Dt(&m, n);
                h_run_t r = h_run(spec, "allreduce", "2d-naive", P, n, 0, "stream=0", mode, 0);
                cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
                cr_expect_eq(r.finish, want, "%dx%d n=%lld (%s): simulated %lld, derived %lld", R,
                             C, (long long)n, mode_name(mode), (long long)r.finish,
                             (long long)want);
                h_done(&r);
            }
}

/* The multicast broadcast without hardware multicast: P-1 unicasts. */
Test(thesis, broadcast_time)
{
    SWEEP({
        if (st)
            continue;
        expect_time(m, "broadcast", "thesis", P, n, P / 2, NULL, mode, t_scalar(m, P, n));
    })
}

/* ---- validation -------------------------------------------------------------- */

typedef struct vcase {
    const char *coll, *algo, *opts;
} vcase_t;

static const vcase_t vcases[] = {
    {"broadcast", "thesis", NULL},
    {"reduce", "scalar", NULL},
    {"reduce", "thesis-chain", NULL},
    {"reduce", "tree", NULL},
    {"reduce", "two-phase", NULL},
    {"reduce", "two-phase", "S=2"},
    {"reduce", "two-phase", "S=4"},
    {"reduce", "preorder", NULL},
    {"reduce", "preorder", "TR=0"},
    {"reduce", "left-right", NULL},
    {"reduce", "left-right", "base=tree"},
    {"reduce", "left-right", "base=two-phase,S=2"},
    {"reduce", "left-right", "base=scalar"},
    {"reduce", "left-right", "base=preorder"},
    {"reduce", "ring", NULL},
    {"reduce", "jump", NULL},
    {"reduce", "jump", "base=tree"},
    {"reduce", "jump", "base=two-phase"},
    {"reduce", "jump", "base=preorder"},
    {"reduce", "2d-chain", NULL},
    {"reduce", "2d-tree", NULL},
    {"reduce", "2d-two-phase", NULL},
    {"allreduce", "naive", NULL},
    {"allreduce", "naive", "base=tree"},
    {"allreduce", "naive", "base=two-phase,root=2"},
    {"allreduce", "naive", "base=scalar"},
    {"allreduce", "naive", "base=preorder"},
    {"allreduce", "naive", "base=left-right,inner=tree,root=3"},
    {"allreduce", "naive", "base=ring,root=1"},
    {"allreduce", "naive", "base=jump,inner=two-phase,root=4"},
    {"allreduce", "2d-naive", NULL},
    {"allreduce", "2d-naive", "base=tree,root=5"},
    {"allreduce", "2d-naive", "base=two-phase"},
};

static void validate_all(const char *topo, const int *Pv, int nP)
{
    static const int64_t vsizes[] = {1, 3, 7, 64, 1000};
    for (size_t ci = 0; ci < sizeof vcases / sizeof *vcases; ci++)
        for (int pi = 0; pi < nP; pi++)
            for (int si = 0; si < 5; si++)
                for (int st = 0; st < 2; st++) {
                    const vcase_t *c = &vcases[ci];
                    int P = Pv[pi];
                    char spec[160], opts[160];
                    snprintf(spec, sizeof spec, "alphabeta:topo=%s,p=%d,packet=16", topo, P);
                    snprintf(opts, sizeof opts, "%s%sstream=%d", c->opts ? c->opts : "",
                             c->opts ? "," : "", st);
                    if (!strcmp(c->coll, "broadcast"))
                        snprintf(opts, sizeof opts, "%s", "");
                    /* root= options beyond P do not apply: skip those */
                    const char *rp = c->opts ? strstr(c->opts, "root=") : NULL;
                    if (rp && atoi(rp + 5) >= P)
                        continue;
                    for (int root = 0; root < P; root += (P > 3 ? P / 3 : 1)) {
                        if (strcmp(c->coll, "reduce") && strcmp(c->coll, "broadcast") && root)
                            break;
                        h_run_t r = h_run(spec, c->coll, c->algo, P, vsizes[si], root,
                                          opts[0] ? opts : NULL, CS_NET_PACKET, 1);
                        cr_expect_eq(r.rc, CS_OK, "%s/%s [%s] on %s P=%d n=%lld root=%d: %s",
                                     c->coll, c->algo, opts, spec, P, (long long)vsizes[si], root,
                                     r.err.msg);
                        h_done(&r);
                    }
                }
}

Test(thesis, validate_complete)
{
    static const int Pv[] = {1, 2, 3, 5, 8, 13, 16};
    validate_all("complete", Pv, 7);
}

Test(thesis, validate_line)
{
    static const int Pv[] = {2, 5, 8};
    validate_all("line", Pv, 3);
}

/* ---- options and errors -------------------------------------------------- */

Test(thesis, option_errors)
{
    static const struct {
        const char *coll, *algo, *opts, *needle;
    } bad[] = {
        {"reduce", "thesis-chain", "stream=2", "stream"},
        {"reduce", "thesis-chain", "S=3", "S"},
        {"reduce", "two-phase", "S=0", "S"},
        {"reduce", "left-right", "base=ring", "base"},
        {"reduce", "jump", "base=chain,S=2", "S"},
        {"reduce", "preorder", "TR=-1", "TR"},
        {"allreduce", "naive", "root=9", "root"},
        {"allreduce", "naive", "base=chain,inner=tree", "inner"},
        {"allreduce", "2d-naive", "base=ring", "base"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        h_run_t r = h_run("alphabeta:topo=complete,p=8", bad[i].coll, bad[i].algo, 8, 100, 0,
                          bad[i].opts, CS_NET_PACKET, 0);
        cr_expect_neq(r.rc, CS_OK, "%s/%s [%s] should fail", bad[i].coll, bad[i].algo,
                      bad[i].opts);
        cr_expect(strstr(r.err.msg, bad[i].needle) != NULL, "%s/%s [%s]: message \"%s\"",
                  bad[i].coll, bad[i].algo, bad[i].opts, r.err.msg);
        h_done(&r);
    }
}

/* The thesis's ring when the machine offers an alternative ring order: the
 * reduction runs along it, from the root's successor to the root. */
Test(thesis, ring_follows_ring_alt_hint)
{
    int32_t alt[6] = {3, 0, 5, 1, 4, 2}, parent[6];
    const cs_coll_algo_t *algo;
    cs_error_t err;
    cs_program_t *prog;
    cs_coll_hints_t hints;
    memset(&hints, 0, sizeof hints);
    hints.ring_alt = alt;
    cs_coll_args_t a = {CS_COLL_REDUCE, 6, 64, 1, 4096, &hints, NULL};
    cr_assert_eq(cs_coll_find(CS_COLL_REDUCE, "ring", &algo, &err), CS_OK);
    cr_assert_eq(cs_coll_build(algo, &a, &prog, &err), CS_OK, "%s", err.msg);
    for (int r = 0; r < 6; r++)
        parent[r] = -1;
    for (int32_t i = 0; i < cs_program_nops(prog); i++) {
        const cs_op_t *o = cs_program_op(prog, i);
        if (o->kind == CS_OP_SEND)
            parent[o->rank] = o->peer;
    }
    /* root 1; ring 3 0 5 1 4 2: the chain starts at 4 and runs 4 2 3 0 5 1 */
    cr_expect_eq(parent[4], 2);
    cr_expect_eq(parent[2], 3);
    cr_expect_eq(parent[3], 0);
    cr_expect_eq(parent[0], 5);
    cr_expect_eq(parent[5], 1);
    cr_expect_eq(parent[1], -1);
    cs_program_free(prog);
    int32_t bad[6] = {0, 0, 1, 2, 3, 4};
    hints.ring_alt = bad;
    cr_expect_eq(cs_coll_build(algo, &a, &prog, &err), CS_ERR_RANGE);
}
