/*
 * test_reduce.c - every reduce algorithm (src/coll/reduce.c, the thesis's
 * trees in src/coll/visit.c), whichever paper it comes from:
 *
 *   - lecture and generic MPI (Criterion suite "rooted"): binomial, flat,
 *     chain, kchain, segmented binomial and Rabenseifner against the
 *     lecture's alpha-beta costs (shared/reference/alpha-beta.md §8.1, §8.4,
 *     §8.9) and the schedules of docs/algorithms.md, on
 *     alphabeta:topo=complete in both network modes; the reduction cost
 *     (the lecture's tau term); the binomial reduce on a line has no
 *     congestion for P a power of two and does congest at the lecture's
 *     P = 9 (§8.1); the segment cap; --validate over P, sizes and roots;
 *   - the Cerebras thesis (suite "thesis"): scalar, chain, tree, two-phase,
 *     pre-order, left-right, ring, jump and the 2D patterns (§5.1-§5.5,
 *     Lemmas 5.1-5.9; §6.1-§6.4, Lemmas 6.1-6.4) against closed forms
 *     derived from the engine's rules (see formulas.h), over sweeps of P, n,
 *     alpha, beta, unit, hop latency and root, in both fidelity modes; the
 *     pre-order tree's shapes (reference note §4.1, §7) and the ring's
 *     alternative-ring hint;
 *   - the Cell blade paper (suite "papers"): the mailbox reduce, binomial
 *     plus barriers (reference/cell-blade.md §3.2).
 *
 * The formulas are in formulas.h; tests over several collectives are in
 * test_suite.c and test_check.c.
 */

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "formulas.h"
#include "harness.h"

/* ---- Rabenseifner's reduce ------------------------------------------------
 * Recursive halving over P' = 2^floor(log2 P) ranks, alpha log2 P' +
 * beta n (P'-1)/P', then the binomial gather of the pieces, the same again;
 * for P > P' the fold of the extra ranks comes first, alpha + beta n.
 * Exact for P a power of two dividing n.  For other P it is a lower bound
 * (the root takes part in the fold, every halving step and every gather
 * step, one after the other); ranks outside the fold run ahead and their
 * eager messages can hold the receive port of a partner still one step
 * behind, so a run may take longer (docs/algorithms.md). */
static inline cs_tick_t rabenseifner_formula(int P, int64_t n, const ab_t *ab)
{
    int Pp = 1, lg = 0;
    while (Pp * 2 <= P)
        Pp *= 2, lg++;
    cs_tick_t t = 2 * ab->a * lg + 2 * ab->b * (n / Pp) * (Pp - 1);
    return Pp < P ? t + ab->a + ab->b * n : t;
}

/* Left-right with chain sides (Lemma 6.1's shape): the root's own side
 * (the smaller one, left on a tie) of L_own PEs including the root ends at
 * T_own; the other side's L_oth PEs reduce to the PE next to the root,
 * whose stream waits for the root's port until T_own:
 *   streamed  max(T_own + D, a + b n + (L_oth - 1) b u)
 *   S&F       max(T_own, (L_oth - 1) D) + D */
static inline int64_t t_left_right(const th_machine_t *m, int P, int root, int64_t n, int stream)
{
    int left = root, right = P - 1 - root, own_left = left <= right;
    int own = (own_left ? left : right) + 1, oth = own_left ? right : left;
    int64_t t_own = t_chain(m, own, n, stream), x;
    if (!oth)
        return t_own;
    if (stream) {
        x = th_A(m) + th_B(m) * n + (oth - 1) * th_B(m) * th_U(m, n);
        return t_own + th_D(m, n) > x ? t_own + th_D(m, n) : x;
    }
    x = (oth - 1) * th_D(m, n);
    return (t_own > x ? t_own : x) + th_D(m, n);
}

/* cs_coll_grid's contract for a machine without a grid: rows <= cols,
 * closest to square. */
static inline void near_square(int P, int *rows, int *cols)
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
static inline int64_t t_2d_chain(const th_machine_t *m, int R, int C, int64_t n, int stream)
{
    if (R == 1 || C == 1)
        return t_chain(m, R * C, n, stream);
    if (!stream)
        return (R - 1 + C - 1) * th_D(m, n);
    return 2 * th_D(m, n) + (R + C - 4) * th_B(m) * th_U(m, n);
}

/* ==== lecture and generic MPI =============================================== */

Test(rooted, binomial_reduce_is_alpha_plus_beta_n_times_ceil_log2_P)
{
    tree_sweep("reduce");
}

Test(rooted, flat_reduce_is_P_minus_1_times_alpha_plus_beta_n)
{
    flat_sweep("reduce");
}

Test(rooted, chain_reduce_is_P_minus_2_plus_S_segment_times)
{
    chain_sweep("reduce", "chain", K1, 1);
}

Test(rooted, kchain_reduce_matches_its_schedule_formula)
{
    chain_sweep("reduce", "kchain", KS, 3);
}

Test(rooted, segmented_binomial_reduce_is_S_ceil_log2_P_segment_times)
{
    segbin_sweep("reduce");
}

Test(rooted, rabenseifner_reduce_is_twice_alpha_log_P_plus_beta_n_fraction)
{
    static const int64_t NS[] = {64, 6400, 65536};
    for (int pi = 0; pi < NPS; pi++)
        for (int ni = 0; ni < 3; ni++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++) {
                    int P = PS[pi], roots[3], nr = f_roots_of(P, roots);
                    int64_t n = NS[ni];
                    cs_tick_t want = rabenseifner_formula(P, n, &ABS[k]);
                    for (int ri = 0; ri < nr; ri++) {
                        cs_tick_t got = ab_timed_on("complete", P, &ABS[k], "reduce",
                                                    "rabenseifner", n, roots[ri], NULL, MODES[mi]);
                        if (P & (P - 1))
                            cr_assert_geq(got, want, "P=%d n=%lld root=%d %s: %lld below %lld", P,
                                          (long long)n, roots[ri], cs_net_mode_name(MODES[mi]),
                                          (long long)got, (long long)want);
                        else
                            cr_assert_eq(got, want, "P=%d n=%lld root=%d %s: %lld vs %lld", P,
                                         (long long)n, roots[ri], cs_net_mode_name(MODES[mi]),
                                         (long long)got, (long long)want);
                    }
                }
}

/* ---- reduction cost --------------------------------------------------------
 * With reduce=g per byte every recv_reduce adds g*n on the receiver's CPU
 * before the data can go on.  For P a power of two every level of the
 * bit-fixing tree then costs alpha + beta n + g n (the lecture's tau term):
 * a rank's last child finishes exactly when the rank's previous child's
 * reduction does.  (For other P the oddball ranks arrive early and overlap,
 * so it is at most that.) */
Test(rooted, binomial_reduce_with_reduction_cost_adds_g_n_per_level)
{
    static const int PW[] = {2, 4, 8, 16, 64};
    static const int64_t NS[] = {1, 1000, 8192};
    for (int pi = 0; pi < 5; pi++)
        for (int ni = 0; ni < 3; ni++)
            for (int mi = 0; mi < 2; mi++) {
                char s[256];
                int P = PW[pi];
                int64_t n = NS[ni];
                snprintf(s, sizeof s, "alphabeta:topo=complete,p=%d,alpha=3us,beta=2ns,reduce=1ns",
                         P);
                cs_tick_t want = (3000000 + 2000 * n + 1000 * n) * f_ceil_log2(P);
                cs_tick_t got = h_time(s, "reduce", "binomial", P, n, P - 1, NULL, MODES[mi]);
                cr_assert_eq(got, want, "P=%d n=%lld %s: %lld vs %lld", P, (long long)n,
                             cs_net_mode_name(MODES[mi]), (long long)got, (long long)want);
                /* the bit-fixing order at P = 2^k also bounds the others */
                snprintf(s, sizeof s, "alphabeta:topo=complete,p=%d,alpha=3us,beta=2ns,reduce=1ns",
                         P + 1);
                cr_assert_leq(h_time(s, "reduce", "binomial", P + 1, n, 0, NULL, MODES[mi]),
                              (3000000 + 3000 * n) * f_ceil_log2(P + 1));
            }
}

/* ---- the binomial reduce on a line (lecture §8.1) --------------------------
 * For P a power of two, round j's messages go from 2^j k + 2^(j-1) to 2^j k
 * (root-relative) over disjoint intervals; with another root one interval
 * per round wraps around and runs the other way, which never competes
 * (full-duplex links).  A round-j sender has all its children's data exactly
 * at the end of round j-1, so rounds do not overlap in time: no channel
 * ever carries two messages at once, and the time is the complete graph's. */

Test(rooted, binomial_reduce_on_a_line_never_congests)
{
    static const int PW[] = {2, 4, 8, 16, 32, 64};
    static const int64_t NS[] = {1, 5000, 65536};
    int runs = 0;
    for (int pi = 0; pi < 6; pi++)
        for (int ni = 0; ni < 3; ni++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++) {
                    int P = PW[pi];
                    int roots[4] = {0, 3 % P, P / 2, P - 1};
                    int64_t n = NS[ni];
                    cs_tick_t want = (ABS[k].a + ABS[k].b * n) * f_ceil_log2(P);
                    for (int ri = 0; ri < 4; ri++) {
                        char s[256];
                        ab_spec(s, sizeof s, "line", P, &ABS[k]);
                        h_run_t r =
                            h_run(s, "reduce", "binomial", P, n, roots[ri], NULL, MODES[mi], 0);
                        cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
                        cr_assert_leq(f_peak_k(&r), 1, "line P=%d n=%lld root=%d %s: peak k %d", P,
                                      (long long)n, roots[ri], cs_net_mode_name(MODES[mi]),
                                      f_peak_k(&r));
                        cr_assert_eq(r.finish, want, "line P=%d n=%lld root=%d %s: %lld vs %lld", P,
                                     (long long)n, roots[ri], cs_net_mode_name(MODES[mi]),
                                     (long long)r.finish, (long long)want);
                        h_done(&r);
                        runs++;
                    }
                }
    cr_assert_eq(runs, 6 * 3 * NABS * 2 * 4);
}

/* The lecture's own P = 9 example under asynchronous execution: rank 8's
 * partners 9, 10 and 12 do not exist, so nothing holds it back and it sends
 * to rank 0 at once (eager send) instead of in round 4.  Its path 8 -> 0
 * crosses the round-1 messages 7 -> 6, 5 -> 4, 3 -> 2 (or, if it waits for
 * rank 0's receive port, the round-2 message 6 -> 4) in the same direction:
 * the measured k must show it. */
Test(rooted, lecture_P9_line_reduce_congests_because_rank_8_sends_early)
{
    for (int mi = 0; mi < 2; mi++) {
        h_run_t r =
            h_run("alphabeta:topo=line,p=9", "reduce", "binomial", 9, 10000, 0, NULL, MODES[mi], 0);
        cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
        cr_assert_geq(f_peak_k(&r), 2, "%s: peak k %d", cs_net_mode_name(MODES[mi]), f_peak_k(&r));
        h_done(&r);
    }
}

Test(rooted, too_many_segments_is_refused_before_building)
{
    /* 2^30 one-byte segments on 8 ranks: far above the message cap */
    h_run_t r = h_run("alphabeta:topo=complete,p=8", "reduce", "chain", 8, (int64_t)1 << 30, 0,
                      "seg=1", CS_NET_PACKET, 0);
    cr_assert_eq(r.rc, CS_ERR_RANGE);
    cr_assert(strstr(r.err.msg, "seg=1") && strstr(r.err.msg, "larger seg"), "%s", r.err.msg);
    h_done(&r);
}

Test(rooted, validate_reduce_algorithms)
{
    rooted_validate_range(9, 18);
}

/* ==== Cerebras thesis ======================================================= */

/* ---- timing: 1D reduce --------------------------------------------------- */

Test(thesis, chain_time)
{
    TH_SWEEP({
        th_expect_time(m, "reduce", "thesis-chain", P, n, 0, so, mode, t_chain(m, P, n, st));
        th_expect_time(m, "reduce", "thesis-chain", P, n, P - 1, so, mode, t_chain(m, P, n, st));
    })
}

Test(thesis, scalar_time)
{
    TH_SWEEP({ th_expect_time(m, "reduce", "scalar", P, n, P / 2, so, mode, t_scalar(m, P, n)); })
}

/* On a line the formula needs the tree's rounds to stay apart; they do for
 * P a power of two (see tree_on_line_overtaking for what happens else). */
Test(thesis, tree_time)
{
    TH_SWEEP({
        if (!strcmp(m->topo, "line") && (P & (P - 1)))
            continue;
        th_expect_time(m, "reduce", "tree", P, n, 0, so, mode, t_tree(m, P, n));
        th_expect_time(m, "reduce", "tree", P, n, P / 3, so, mode, t_tree(m, P, n));
    })
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
    const th_machine_t m = {"line", 1000, 1000, 64, 0, 0};
    for (int md = 0; md < 2; md++)
        for (int P = 2; P <= 64; P *= 2) {
            char spec[256];
            cs_net_mode_t mode = md ? CS_NET_FLUID : CS_NET_PACKET;
            th_spec(&m, P, spec, sizeof spec);
            h_run_t r = h_run(spec, "reduce", "tree", P, 1000, 0, NULL, mode, 0);
            cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
            cr_expect_eq(r.finish, t_tree(&m, P, 1000), "P=%d", P);
            cr_expect_eq(f_peak_k(&r), P > 1 ? 1 : 0, "P=%d: peak k %d", P, f_peak_k(&r));
            h_done(&r);
            if (P < 8)
                continue;
            th_spec(&m, P + 1, spec, sizeof spec);
            r = h_run(spec, "reduce", "tree", P + 1, 1000, 0, NULL, mode, 0);
            cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
            cr_expect_gt(r.finish, t_tree(&m, P + 1, 1000), "P=%d", P + 1);
            cr_expect_eq(f_peak_k(&r), 2, "P=%d: peak k %d", P + 1, f_peak_k(&r));
            h_done(&r);
        }
}

Test(thesis, two_phase_time)
{
    static const int64_t Ss[] = {0, 1, 2, 3, 5, 100};
    TH_SWEEP({
        for (int k = 0; k < 6; k++) {
            char o[64];
            if (Ss[k])
                snprintf(o, sizeof o, "S=%lld,%s", (long long)Ss[k], so);
            else
                snprintf(o, sizeof o, "%s", so);
            th_expect_time(m, "reduce", "two-phase", P, n, 0, o, mode,
                        t_two_phase(m, P, Ss[k], n, st));
        }
    })
}

Test(thesis, left_right_time)
{
    TH_SWEEP({
        for (int root = 0; root < P; root++)
            th_expect_time(m, "reduce", "left-right", P, n, root, so, mode,
                        t_left_right(m, P, root, n, st));
    })
}

/* Ring and jump with a chain base are chains (of P ranks in ring order, of
 * P-1 ranks plus the jump) as long as every link costs the same. */
Test(thesis, ring_and_jump_time)
{
    TH_SWEEP({
        for (int root = 0; root < P; root += (P > 4 ? P / 4 : 1)) {
            th_expect_time(m, "reduce", "ring", P, n, root, so, mode, t_chain(m, P, n, st));
            th_expect_time(m, "reduce", "jump", P, n, root, so, mode, t_chain(m, P, n, st));
        }
    })
}

/* Jump over a two-phase base: the reduction of the P-1 other ranks plus one
 * more streamed link (or one more D); with a tree base, the same where the
 * last message into the end PE is its last child's, i.e. P-1 a power of 2. */
Test(thesis, jump_over_two_phase_and_tree_time)
{
    TH_SWEEP({
        if (P < 3)
            continue;
        int64_t extra = st ? th_B(m) * th_U(m, n) : th_D(m, n);
        char o[64];
        snprintf(o, sizeof o, "base=two-phase,%s", so);
        th_expect_time(m, "reduce", "jump", P, n, P / 2, o, mode,
                    t_two_phase(m, P - 1, 0, n, st) + extra);
        if ((P - 1) & (P - 2))
            continue;
        snprintf(o, sizeof o, "base=tree,%s", so);
        th_expect_time(m, "reduce", "jump", P, n, 1, o, mode, t_tree(m, P - 1, n) + extra);
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
    const th_machine_t lm = {"line", 1000, 1000, 64, 300, 0};
    for (int md = 0; md < 2; md++)
        for (int P = 2; P <= 13; P++)
            for (int si = 0; si < TH_NS; si++)
                for (int st = 0; st < 2; st++)
                    for (int root = 0; root < P; root++) {
                        cs_net_mode_t mode = md ? CS_NET_FLUID : CS_NET_PACKET;
                        int64_t n = TH_SIZES[si];
                        const char *so = st ? "stream=1" : "stream=0";
                        /* the thesis's ring: root's successor in 0,2,4,..,5,3,1 */
                        int succ = root % 2 == 0 ? (root + 2 < P ? root + 2 : (P % 2 ? P - 2 : P - 1))
                                                 : (root >= 3 ? root - 2 : 0);
                        int ring_links = P < 3 ? 0 : (succ - root == 2 || root - succ == 2 ? P - 3 : P - 2);
                        int jump = root < P - 1 - root ? root : P - 1 - root;
                        th_expect_time(&lm, "reduce", "ring", P, n, root, so, mode,
                                       t_chain(&lm, P, n, st) + ring_links * th_H(&lm));
                        th_expect_time(&lm, "reduce", "jump", P, n, root, so, mode,
                                       t_chain(&lm, P, n, st) + jump * th_H(&lm));
                        th_expect_time(&lm, "reduce", "left-right", P, n, root, so, mode,
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
                    th_machine_t m = {"complete", 1000, 1000, 64, 0, gs[gi]};
                    cs_net_mode_t mode = md ? CS_NET_FLUID : CS_NET_PACKET;
                    int64_t n = k * m.U, g = gs[gi], b = th_B(&m), mx = b > g ? b : g;
                    th_expect_time(&m, "reduce", "thesis-chain", P, n, 0, "stream=1", mode,
                                   th_A(&m) + (P - 1) * (b + g) * m.U + (k - 1) * mx * m.U);
                    th_expect_time(&m, "reduce", "thesis-chain", P, n, 0, "stream=0", mode,
                                   (P - 1) * (th_D(&m, n) + g * n));
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
    cs_coll_args_t a = {CS_COLL_REDUCE, P, n, root, 4096, &hints, op, 0};
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
    for (int mi = 0; mi < TH_NMACH; mi++)
        for (int md = 0; md < 2; md++)
            for (int pi = 0; pi < TH_NP; pi++) {
                const th_machine_t *m = &TH_MACHINES[mi];
                cs_net_mode_t mode = md ? CS_NET_FLUID : CS_NET_PACKET;
                int P = TH_PS[pi];
                th_expect_time(m, "reduce", "preorder", P, 3, 0, NULL, mode, t_scalar(m, P, 3));
                th_expect_time(m, "reduce", "preorder", P, 4 * 4096, 0, NULL, mode,
                               t_chain(m, P, 4 * 4096, 1));
                th_expect_time(m, "reduce", "preorder", P, 4 * 4096, 0, "stream=0", mode,
                               t_chain(m, P, 4 * 4096, 0));
            }
}

/* ---- 2D ---------------------------------------------------------------------- */

Test(thesis, reduce_2d_time)
{
    static const int grids[][2] = {{1, 1}, {1, 5}, {2, 2}, {2, 3}, {3, 3}, {3, 5}, {4, 4}, {4, 6}, {5, 3}};
    for (int gi = 0; gi < 9; gi++)
        for (int topo = 0; topo < 2; topo++)
            for (int md = 0; md < 2; md++)
                for (int si = 0; si < TH_NS; si++)
                    for (int st = 0; st < 2; st++) {
                        int R = grids[gi][0], C = grids[gi][1], P = R * C;
                        cs_net_mode_t mode = md ? CS_NET_FLUID : CS_NET_PACKET;
                        int64_t n = TH_SIZES[si];
                        const char *so = st ? "stream=1" : "stream=0";
                        th_machine_t m = {"complete", 1000, 1000, 64, 0, 0};
                        char spec[256];
                        if (topo) {
                            snprintf(spec, sizeof spec, "alphabeta:topo=mesh,rows=%d,cols=%d,alpha=1us,beta=1ns,packet=64", R, C);
                        } else {
                            near_square(P, &R, &C);
                            th_spec(&m, P, spec, sizeof spec);
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
                                             cases[k].algo, spec, th_mode_name(mode), R, C,
                                             (long long)n, root, so, (long long)r.finish,
                                             (long long)cases[k].want);
                                h_done(&r);
                            }
                        }
                    }
}

/* ---- the ring under a hint ------------------------------------------------ */

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
    cs_coll_args_t a = {CS_COLL_REDUCE, 6, 64, 1, 4096, &hints, NULL, 0};
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

/* ==== the Cell blade paper =================================================== */

/* reduce/mailbox: without barriers (every > ceil(log2 P)) it is the plain
 * binomial reduce, ceil(log2 P) (alpha + beta n).  With barriers the ranks
 * that are done enter a barrier early and their tokens compete for the
 * ports of the ranks still receiving, so there is no closed form in general;
 * for P = 2 and 4 no rank is idle while another receives, and every round
 * adds a barrier of log2 P alpha. */
Test(papers, mailbox_reduce_is_binomial_plus_barriers)
{
    for (int pi = 0; pi < NPS; pi++)
        for (int k = 0; k < NABS; k++)
            for (int mi = 0; mi < 2; mi++) {
                int P = PS[pi], L = f_ceil_log2(P), roots[3], nr = f_roots_of(P, roots);
                for (int ri = 0; ri < nr; ri++) {
                    cs_tick_t got = ab_timed(P, &ABS[k], "reduce", "mailbox", 1000, roots[ri],
                                             "every=64", MODES[mi]);
                    CHECK_TIME(got, L * ab_T(&ABS[k], 1000), "reduce/mailbox every=64 P=%d root=%d",
                               P, roots[ri]);
                    if (P == 2 || P == 4) {
                        got = ab_timed(P, &ABS[k], "reduce", "mailbox", 1000, roots[ri], NULL,
                                       MODES[mi]);
                        CHECK_TIME(got, L * ab_T(&ABS[k], 1000) + L * L * ABS[k].a,
                                   "reduce/mailbox P=%d root=%d", P, roots[ri]);
                    }
                }
            }
}
