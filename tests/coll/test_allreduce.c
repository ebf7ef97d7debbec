/*
 * test_allreduce.c - every allreduce algorithm (src/coll/allreduce.c),
 * whichever paper it comes from:
 *
 *   - lecture and generic MPI (Criterion suites "symmetric_*"): ring
 *     (lecture §8.9), recursive doubling, reduce + broadcast, Rabenseifner,
 *     and the thesis's butterfly, on alphabeta:topo=complete in both network
 *     modes against the textbook costs (Thakur et al. 2005), also for P not
 *     a power of two (the fold of the extra ranks); the same test checks the
 *     rdb/halving/tree allgather, reduce-scatter and barrier costs alongside;
 *     the Groq gateway all-reduce (Groq ISCA'22 §5.6): its stages and its
 *     gateway hint; butterfly options;
 *   - the Cerebras thesis (suite "thesis"): the naive and the 2D naive
 *     allreduce (§7.1 Lemma 7.1, §7.4) against closed forms derived from the
 *     engine's rules;
 *   - the Cell blade paper and the Groq paper (suite "papers"): HybridA and
 *     HybridB (reference/cell-blade.md §3.5, §6 case 44), Rdb-Barrier with
 *     the paper's barrier count (§3.5), messages across the BIF, the
 *     partners of HybridA-3-4's rounds; the hierarchical all-reduce (Groq
 *     ISCA'22, reference/groq-dragonfly.md §4): two intra phases plus the
 *     inter allreduce, default groups, the hierarchy hint.
 *
 * The formulas are in formulas.h; tests over several collectives are in
 * test_suite.c and test_check.c.
 */

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "formulas.h"
#include "harness.h"

/* ==== Groq ISCA'22: the hierarchical all-reduce ============================ */

/* P = g G ranks in G groups of g, n a multiple of P:
 *   intra reduce-scatter:  (g-1)(alpha + beta n/g)   (g-1 perfect matchings)
 *   inter (direct):        2 (G-1)(alpha + beta n/P) (reduce-scatter + all-gather
 *                                                      of the n/g shard)
 *   inter (rdb, G = 2^j):  log2 G (alpha + beta n/g)
 *   intra all-gather:      (g-1)(alpha + beta n/g) */
static inline cs_tick_t hier_formula(const ab_t *ab, int g, int G, int64_t n, int rdb)
{
    cs_tick_t t = 2 * (g - 1) * ab_T(ab, n / g);
    if (rdb)
        t += f_ceil_log2(G) * ab_T(ab, n / g);
    else
        t += 2 * (G - 1) * ab_T(ab, n / ((int64_t)g * G));
    return t;
}

/* P not a power of two, Pp = 2^floor(log2 P), e = P - Pp: the extra ranks
 * (odd ranks below 2e) hand their data to their even neighbour first and
 * get the result back at the end; in the doubling/halving round of
 * distance d the group holding virtual ranks [0, d) speaks for d + min(d, e)
 * real ranks. */
static inline int64_t fold_rounds(int P, int64_t a, int64_t bm)
{
    int Pp = 1;
    int64_t t = 0;
    while (2 * Pp <= P)
        Pp *= 2;
    for (int d = 1; d < Pp; d *= 2)
        t += a + bm * (d + (d < P - Pp ? d : P - Pp));
    return t;
}

/* ==== lecture and generic MPI =============================================== */

Test(symmetric_time, ring_allreduce_is_2_P_minus_1_alpha_plus_beta_n_over_P)
{
    static const int Ps[] = {1, 2, 3, 5, 8, 13, 16};
    static const int64_t qs[] = {1, 7, 100, 4096, 5000}; /* n = q P */
    for (size_t a = 0; a < NSYM_ABS; a++)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
            for (size_t j = 0; j < sizeof qs / sizeof *qs; j++) {
                int P = Ps[i];
                int64_t n = qs[j] * P;
                sym_expect_time("allreduce", "ring", NULL, P, n, &SYM_ABS[a],
                                2 * (P - 1) * (sym_A(&SYM_ABS[a]) + sym_B(&SYM_ABS[a]) * n / P));
            }
}

Test(symmetric_time, recursive_doubling_and_halving_on_powers_of_two)
{
    static const int Ps[] = {2, 4, 8, 16, 32};
    static const int64_t sizes[] = {1, 96, 4096, 6000};
    for (size_t a = 0; a < NSYM_ABS; a += 2)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
            for (size_t j = 0; j < sizeof sizes / sizeof *sizes; j++) {
                const sym_ab_t *p = &SYM_ABS[a];
                int P = Ps[i], L = f_ceil_log2(P);
                int64_t m = sizes[j], n = sizes[j];
                /* allgather rdb and reduce-scatter halving: alpha log P + beta m (P-1) */
                sym_expect_time("allgather", "rdb", NULL, P, m, p,
                                sym_A(p) * L + sym_B(p) * m * (P - 1));
                sym_expect_time("reduce-scatter", "recursive-halving", NULL, P, m, p,
                                sym_A(p) * L + sym_B(p) * m * (P - 1));
                /* allgather gather + broadcast: the gather as above, then
                 * log P rounds of the whole P m buffer */
                sym_expect_time("allgather", "gather-bcast", NULL, P, m, p,
                                sym_A(p) * L + sym_B(p) * m * (P - 1) +
                                    (sym_A(p) + sym_B(p) * m * P) * L);
                /* allreduce rdb and reduce + broadcast on the whole vector */
                sym_expect_time("allreduce", "rdb", NULL, P, n, p, (sym_A(p) + sym_B(p) * n) * L);
                sym_expect_time("allreduce", "reduce-bcast", NULL, P, n, p,
                                2 * (sym_A(p) + sym_B(p) * n) * L);
                sym_expect_time("allreduce", "butterfly", NULL, P, n, p,
                                (sym_A(p) + sym_B(p) * n) * L);
                /* Rabenseifner: 2 alpha log P + 2 beta n (P-1)/P when P | n */
                if (n % P == 0)
                    sym_expect_time("allreduce", "rabenseifner", NULL, P, n, p,
                                    2 * sym_A(p) * L + 2 * sym_B(p) * n / P * (P - 1));
                sym_expect_time("barrier", "rdb", NULL, P, 0, p, (sym_A(p) + sym_B(p)) * L);
                sym_expect_time("barrier", "tree", NULL, P, 0, p, 2 * (sym_A(p) + sym_B(p)) * L);
            }
}

Test(symmetric_time, folding_for_any_P)
{
    static const int Ps[] = {3, 5, 6, 7, 12, 13, 24, 100};
    for (size_t a = 0; a < NSYM_ABS; a += 2)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++) {
            const sym_ab_t *p = &SYM_ABS[a];
            int P = Ps[i], Pp = 1, Lf = 0;
            int64_t m = 1000, n = 8 * 1000;
            while (2 * Pp <= P) {
                Pp *= 2;
                Lf++;
            }
            /* allgather: fold one block in, return the whole buffer; the
             * reduce-scatter is the dual: fold the whole buffer in, return
             * one block */
            int64_t body = fold_rounds(P, sym_A(p), sym_B(p) * m);
            int64_t ends = (sym_A(p) + sym_B(p) * m) + (sym_A(p) + sym_B(p) * m * P);
            sym_expect_time("allgather", "rdb", NULL, P, m, p, ends + body);
            sym_expect_time("reduce-scatter", "recursive-halving", NULL, P, m, p, ends + body);
            /* whole vectors: two more messages of n bytes */
            sym_expect_time("allreduce", "rdb", NULL, P, n, p,
                            (Lf + 2) * (sym_A(p) + sym_B(p) * n));
            sym_expect_time("barrier", "rdb", NULL, P, 0, p, (Lf + 2) * (sym_A(p) + sym_B(p)));
            /* Rabenseifner over Pp pieces (Pp divides n = 8000 for Pp <= 64).
             * The formula is the critical path through the folded pair; the
             * ranks outside the fold start early, and their messages may
             * hold a receive port that the critical path needs a little
             * longer (P = 5 with alpha = 7 ns, beta = 3 ps: 1000 ticks), so
             * the check allows up to one piece message more. */
            {
                int64_t f = 2 * (sym_A(p) + sym_B(p) * n) + 2 * Lf * sym_A(p) +
                            2 * sym_B(p) * n / Pp * (Pp - 1);
                char spec[200];
                sym_spec(spec, sizeof spec, "complete", P, p);
                for (size_t mi = 0; mi < 2; mi++) {
                    cs_tick_t t = h_time(spec, "allreduce", "rabenseifner", P, n, 0, NULL,
                                         MODES[mi]);
                    cr_expect(t >= f && t <= f + sym_A(p) + sym_B(p) * n / Pp,
                              "rabenseifner P=%d: %lld ticks, formula %lld", P, (long long)t,
                              (long long)f);
                }
            }
            /* binomial trees: ceil(log2 P) rounds each way, any P */
            sym_expect_time("allreduce", "reduce-bcast", NULL, P, n, p,
                            2 * f_ceil_log2(P) * (sym_A(p) + sym_B(p) * n));
            sym_expect_time("barrier", "tree", NULL, P, 0, p,
                            2 * f_ceil_log2(P) * (sym_A(p) + sym_B(p)));
        }
}

/* Butterfly for any P: with Pg = G^L <= P < G^(L+1), the extra ranks fold
 * onto x mod Pg, so a core receives up to c = ceil((P - Pg)/Pg) vectors one
 * after the other, and returns the result to them the same way:
 * (2c + L(G-1))(alpha + beta n). */
Test(symmetric_time, butterfly_folds_any_P)
{
    static const struct { int P, G; } cases[] = {{5, 2}, {7, 2}, {10, 3}, {13, 3}, {20, 3},
                                                 {30, 3}, {100, 3}, {100, 4}, {17, 5}};
    for (size_t a = 0; a < NSYM_ABS; a += 2)
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            const sym_ab_t *p = &SYM_ABS[a];
            int P = cases[c].P, G = cases[c].G, Pg = 1, L = 0, cmax;
            int64_t n = 999;
            char opts[32];
            while (Pg * G <= P) {
                Pg *= G;
                L++;
            }
            cmax = (P - Pg + Pg - 1) / Pg;
            snprintf(opts, sizeof opts, "g=%d", G);
            sym_expect_time("allreduce", "butterfly", opts, P, n, p,
                            (2 * cmax + L * (G - 1)) * (sym_A(p) + sym_B(p) * n));
        }
}

Test(symmetric_time, butterfly_group_size_G)
{
    /* P = G^L: L rounds of G-1 whole-vector sends (direct) or of a ring
     * allreduce among G (2(G-1)(alpha + beta n/G), G | n) */
    static const struct { int G, L; } cases[] = {{3, 1}, {3, 2}, {3, 3}, {4, 2}, {5, 2}, {2, 4}};
    static const int64_t qs[] = {1, 50, 4096};
    for (size_t a = 0; a < NSYM_ABS; a += 2)
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
            for (size_t j = 0; j < sizeof qs / sizeof *qs; j++) {
                const sym_ab_t *p = &SYM_ABS[a];
                int G = cases[c].G, L = cases[c].L, P = 1;
                int64_t n = qs[j] * G;
                char opts[64];
                for (int l = 0; l < L; l++)
                    P *= G;
                snprintf(opts, sizeof opts, "g=%d", G);
                sym_expect_time("allreduce", "butterfly", opts, P, n, p,
                                (int64_t)L * (G - 1) * (sym_A(p) + sym_B(p) * n));
                snprintf(opts, sizeof opts, "g=%d,inner=ring", G);
                sym_expect_time("allreduce", "butterfly", opts, P, n, p,
                                (int64_t)L * 2 * (G - 1) * (sym_A(p) + sym_B(p) * n / G));
            }
}

Test(symmetric_opts, butterfly_rejects_bad_options_naming_the_key)
{
    h_run_t r = h_run("alphabeta:topo=complete,p=8", "allreduce", "butterfly", 8, 64, 0, "g=1",
                      CS_NET_PACKET, 0);
    cr_expect_eq(r.rc, CS_ERR_RANGE);
    cr_expect(strstr(r.err.msg, "key 'g'") && strstr(r.err.msg, "[2,"), "%s", r.err.msg);
    h_done(&r);
    r = h_run("alphabeta:topo=complete,p=8", "allreduce", "butterfly", 8, 64, 0, "inner=tree",
              CS_NET_PACKET, 0);
    cr_expect_neq(r.rc, CS_OK);
    cr_expect(strstr(r.err.msg, "key 'inner'") && strstr(r.err.msg, "direct, ring"), "%s",
              r.err.msg);
    h_done(&r);
    r = h_run("alphabeta:topo=complete,p=8", "allreduce", "butterfly", 8, 64, 0, "k=2",
              CS_NET_PACKET, 0);
    cr_expect_neq(r.rc, CS_OK);
    cr_expect(strstr(r.err.msg, "'k'") && strstr(r.err.msg, "valid keys: g, inner"), "%s",
              r.err.msg);
    h_done(&r);
    r = h_run("alphabeta:topo=complete,p=8", "allgather", "ring", 8, 64, 0, "seg=2",
              CS_NET_PACKET, 0);
    cr_expect_neq(r.rc, CS_OK, "ring takes no options");
    h_done(&r);
}

/* ---- the gateway all-reduce (Groq §5.6) ----------------------------------- */

/* Where every stage is one round of the one-port model: groups of 1 or 2
 * whose gateways form permutations, T(n) per stage (the local add of a
 * gateway's partial is a free copy).  2 ranks in 2 groups of 1: only the
 * exchange between groups; one group of 2: only stage 1; 4 or 6 ranks in
 * pairs: 3 T(n). */
Test(symmetric_time, gateway_allreduce_stages)
{
    static const struct {
        int P;
        const char *opts;
        int stages;
    } cases[] = {{2, "g=1", 1}, {2, "g=2", 1}, {4, "g=2", 3}, {6, "g=2", 3}};
    static const int64_t ns[] = {1, 100, 4097};
    for (size_t a = 0; a < NSYM_ABS; a++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
            for (size_t j = 0; j < sizeof ns / sizeof *ns; j++)
                sym_expect_time(
                    "allreduce", "gateway", cases[i].opts, cases[i].P, ns[j], &SYM_ABS[a],
                    cases[i].stages * (sym_A(&SYM_ABS[a]) + sym_B(&SYM_ABS[a]) * ns[j]));
}

/* The sends between groups of a run: from -> to pairs, at most `max`. */
static int cross_sends(const cs_program_t *p, const int32_t *group, int32_t (*out)[2], int max)
{
    int n = 0;
    for (int32_t i = 0; i < cs_program_nops(p); i++) {
        const cs_op_t *o = cs_program_op(p, i);
        if (o->kind == CS_OP_SEND && group[o->rank] != group[o->peer]) {
            cr_assert_lt(n, max);
            out[n][0] = o->rank;
            out[n][1] = o->peer;
            n++;
        }
    }
    return n;
}

Test(symmetric_hints, gateway_allreduce_follows_the_gateway_hint)
{
    const cs_coll_algo_t *a;
    cs_coll_kind_t k;
    cs_error_t err;
    cr_assert_eq(cs_coll_parse("allreduce", &k, &err), CS_OK);
    cr_assert_eq(cs_coll_find(k, "gateway", &a, &err), CS_OK);
    /* two interleaved groups; group 0 talks to group 1 through ranks 2 and 5 */
    static const int32_t group[8] = {0, 1, 0, 1, 0, 1, 0, 1};
    int32_t gw[4] = {-1, 2, 5, -1};
    cs_coll_hints_t h = {.group = group, .ngroups = 2, .gateway = gw};
    int32_t pairs[8][2];
    h_run_t r = h_run_algo("alphabeta:topo=complete,p=8", a, 8, 1000, 0, NULL, CS_NET_PACKET, 1,
                           &h);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    cr_assert_eq(cross_sends(r.prog, group, pairs, 8), 2);
    cr_expect(pairs[0][0] == 2 && pairs[0][1] == 5, "%d -> %d", pairs[0][0], pairs[0][1]);
    cr_expect(pairs[1][0] == 5 && pairs[1][1] == 2, "%d -> %d", pairs[1][0], pairs[1][1]);
    h_done(&r);
    /* a pair without a gateway gets one by rotation (member 0 of each group
     * here), and the result still validates */
    gw[1] = -1;
    r = h_run_algo("alphabeta:topo=complete,p=8", a, 8, 1000, 0, NULL, CS_NET_PACKET, 1, &h);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    cr_assert_eq(cross_sends(r.prog, group, pairs, 8), 2);
    cr_expect(pairs[0][0] == 0 && pairs[0][1] == 5, "%d -> %d", pairs[0][0], pairs[0][1]);
    h_done(&r);
    /* groups of three: every group's sum reaches every other group once */
    static const int32_t g3[9] = {0, 0, 0, 1, 1, 1, 2, 2, 2};
    int32_t gw3[9] = {-1, 1, 2, 3, -1, 4, 8, 7, -1};
    cs_coll_hints_t h3 = {.group = g3, .ngroups = 3, .gateway = gw3};
    r = h_run_algo("alphabeta:topo=complete,p=9", a, 9, 77, 0, NULL, CS_NET_PACKET, 1, &h3);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    cr_expect_eq(cross_sends(r.prog, g3, pairs, 8), 6);
    h_done(&r);
    /* a gateway outside its group is an error naming the hint */
    gw[1] = 3;
    r = h_run_algo("alphabeta:topo=complete,p=8", a, 8, 1000, 0, NULL, CS_NET_PACKET, 1, &h);
    cr_expect_eq(r.rc, CS_ERR_RANGE);
    cr_expect(strstr(r.err.msg, "gateway hint") && strstr(r.err.msg, "rank 3"), "%s", r.err.msg);
    h_done(&r);
    /* g= overrides the hint: groups of 4 consecutive ranks */
    gw[1] = 2;
    r = h_run_algo("alphabeta:topo=complete,p=8", a, 8, 1000, 0, "g=4", CS_NET_PACKET, 1, &h);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    static const int32_t halves[8] = {0, 0, 0, 0, 1, 1, 1, 1};
    cr_assert_eq(cross_sends(r.prog, halves, pairs, 8), 2);
    cr_expect(pairs[0][0] == 0 && pairs[0][1] == 4, "%d -> %d", pairs[0][0], pairs[0][1]);
    h_done(&r);
    r = h_run_algo("alphabeta:topo=complete,p=8", a, 8, 1000, 0, "g=0", CS_NET_PACKET, 1, &h);
    cr_expect_eq(r.rc, CS_ERR_RANGE);
    cr_expect(strstr(r.err.msg, "key 'g'"), "%s", r.err.msg);
    h_done(&r);
}

/* ==== Cerebras thesis ======================================================= */

/* Naive allreduce: the reduce, then the multicast that a machine without
 * multicast lowers to P-1 unicasts on the root's one send port: T_reduce +
 * (P-1) D.  The thesis pipelines the broadcast with the reduce only when
 * the receivers are free (P = 2: T_naive(2) ~ T_bcast(2,B) + T_bcast(2,1));
 * so does the program (every receiver a leaf of the reduce: P = 2, or the
 * scalar base): the first unicast streams from the root's final adds, one
 * more pipeline stage (+ b u), and the P-2 others follow at D each. */
Test(thesis, naive_allreduce_time)
{
    TH_SWEEP({
        if (P < 2)
            continue;
        char o[64];
        int64_t piped = th_B(m) * th_U(m, n) + (P - 2) * th_D(m, n), bc = (P - 1) * th_D(m, n);
        snprintf(o, sizeof o, "base=chain,%s", so);
        th_expect_time(m, "allreduce", "naive", P, n, 0, o, mode,
                    t_chain(m, P, n, st) + (st && P == 2 ? piped : bc));
        /* the tree's receivers are all leaves up to P = 3 */
        snprintf(o, sizeof o, "base=tree,root=%d,%s", P - 1, so);
        th_expect_time(m, "allreduce", "naive", P, n, 0, o, mode,
                    t_tree(m, P, n) + (st && P <= 3 ? piped : bc));
        snprintf(o, sizeof o, "base=scalar,%s", so);
        th_expect_time(m, "allreduce", "naive", P, n, 0, o, mode, t_scalar(m, P, n) + (st ? piped : bc));
        snprintf(o, sizeof o, "base=two-phase,%s", so);
        th_expect_time(m, "allreduce", "naive", P, n, 0, o, mode,
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
            for (int si = 0; si < TH_NS; si++) {
                int R = grids[gi][0], C = grids[gi][1], P = R * C;
                int64_t n = TH_SIZES[si];
                cs_net_mode_t mode = md ? CS_NET_FLUID : CS_NET_PACKET;
                th_machine_t m = {"mesh", 1000, 1000, 64, 0, 0};
                char spec[256];
                snprintf(spec, sizeof spec, "alphabeta:topo=mesh,rows=%d,cols=%d,alpha=1us,beta=1ns,packet=64", R, C);
                int64_t want = t_chain(&m, R, n, 0) + (R - 1) * th_D(&m, n) + t_chain(&m, C, n, 0) +
                               (C - 1) * th_D(&m, n);
                h_run_t r = h_run(spec, "allreduce", "2d-naive", P, n, 0, "stream=0", mode, 0);
                cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
                cr_expect_eq(r.finish, want, "%dx%d n=%lld (%s): simulated %lld, derived %lld", R,
                             C, (long long)n, th_mode_name(mode), (long long)r.finish,
                             (long long)want);
                h_done(&r);
            }
}

/* ==== Cell all-gather and all-reduce hybrids ================================ */

/* HybridA-x-y for any P: the largest group (ceil(P/y) ranks) needs k =
 * ceil(log2 ceil(P/y)) binomial reduce rounds and as many broadcast rounds,
 * the leaders log2 y rdb rounds, all of n bytes; a leader that is ready
 * early only waits for its partner, so (2k + log2 y)(alpha + beta n). */
Test(papers, hybrid_a_is_2k_plus_log2y_rounds_of_n_for_any_P)
{
    static const int64_t NS[] = {1, 1000, 4099};
    for (int pi = 0; pi < NPS; pi++) {
        int P = PS[pi], lg = f_ceil_log2(P);
        for (int x = 0; x <= lg + 1; x++) {
            int y, kk;
            char opts[32];
            hybrid_shape(P, x, &y, &kk);
            if (y > P) /* x = 1 for P not a power of two: refused, see below */
                continue;
            snprintf(opts, sizeof opts, "x=%d", x);
            for (int ni = 0; ni < 3; ni++)
                for (int k = 0; k < NABS; k++)
                    for (int mi = 0; mi < 2; mi++) {
                        cs_tick_t want = (2 * kk + f_ceil_log2(y)) * ab_T(&ABS[k], NS[ni]);
                        cs_tick_t got = ab_timed(P, &ABS[k], "allreduce", "hybrid-a", NS[ni], 0,
                                                 x ? opts : NULL, MODES[mi]);
                        CHECK_TIME(got, want, "allreduce/hybrid-a P=%d x=%d (y=%d k=%d) n=%lld %s",
                                   P, x, y, kk, (long long)NS[ni], cs_net_mode_name(MODES[mi]));
                    }
        }
    }
}

/* HybridB-x-y, P a power of two dividing n: the reduce-scatter halves the
 * vector log2 P times (log2 P alpha + (P-1)/P n beta), then the hybrid
 * all-gather of m = n/P: (2 log2 P + k) alpha + (2(P-1)/P + k) n beta. */
Test(papers, hybrid_b_is_reduce_scatter_plus_hybrid_allgather)
{
    for (int pi = 0; pi < NPOW2; pi++) {
        int P = POW2[pi], lg = f_ceil_log2(P);
        for (int x = 0; x <= lg + 1; x++)
            for (int64_t q = 1; q <= 100; q *= 10)
                for (int k = 0; k < NABS; k++)
                    for (int mi = 0; mi < 2; mi++) {
                        int y, kk;
                        int64_t n = q * P;
                        char opts[32];
                        hybrid_shape(P, x, &y, &kk);
                        snprintf(opts, sizeof opts, "x=%d", x);
                        cs_tick_t want = (2 * lg + kk) * ABS[k].a +
                                         ABS[k].b * (2 * (n - n / P) + kk * n);
                        cs_tick_t got = ab_timed(P, &ABS[k], "allreduce", "hybrid-b", n, 0,
                                                 x ? opts : NULL, MODES[mi]);
                        CHECK_TIME(got, want, "allreduce/hybrid-b P=%d x=%d n=%lld %s", P, x,
                                   (long long)n, cs_net_mode_name(MODES[mi]));
                    }
    }
}

/* reference §3.5 table: HybridA-2-8 8, HybridA-3-4 4, HybridA-4-2 2 BIF
 * messages (reduce + broadcast, x = 5, also 2); HybridB adds the
 * reduce-scatter's 16 (XOR 8 first): 24, 20, 18, and 32 for x = 1
 * (Rabenseifner: reduce-scatter + rdb all-gather). */
Test(papers, cell_hybrid_allreduce_bif_messages)
{
    static const int wa[] = {0, 16, 8, 4, 2, 2}, wb[] = {0, 32, 24, 20, 18, 18};
    for (int x = 1; x <= 5; x++) {
        char opts[16];
        snprintf(opts, sizeof opts, "x=%d", x);
        cs_program_t *p = cell_build16("allreduce", "hybrid-a", 4096, opts, NULL);
        cr_expect_eq(cell_bif_messages(p), wa[x], "HybridA x=%d: %d", x, cell_bif_messages(p));
        cs_program_free(p);
        p = cell_build16("allreduce", "hybrid-b", 4096, opts, NULL);
        cr_expect_eq(cell_bif_messages(p), wb[x], "HybridB x=%d: %d", x, cell_bif_messages(p));
        cs_program_free(p);
    }
}

/* reference §6 case 44: HybridA-3-4 reduces to {0, 4, 8, 12} in rounds 1-2,
 * round 3 is 0<->4 and 8<->12, round 4 is 0<->8 and 4<->12 (the BIF), then
 * each leader broadcasts to its group of 4 (two rounds: to +2, then +1 while
 * +2 serves +3: the gather tree backwards). */
Test(papers, cell_hybrid_a_3_4_rounds_have_the_papers_partners)
{
    static const int want[4][4] = {{4, 8, 2, 1}, {0, 12, 6, 5}, {12, 0, 10, 9}, {8, 4, 14, 13}};
    cs_program_t *p = cell_build16("allreduce", "hybrid-a", 4096, "x=3", NULL);
    for (int l = 0; l < 4; l++) {
        int got[8], n = f_send_peers(p, 4 * l, got, 8);
        cr_assert_eq(n, 4, "leader %d sends %d messages", 4 * l, n);
        for (int i = 0; i < 4; i++)
            cr_expect_eq(got[i], want[l][i], "leader %d, send %d: to %d", 4 * l, i, got[i]);
    }
    /* members send once (to their parent) and leaves receive the result */
    {
        int got[8];
        cr_expect_eq(f_send_peers(p, 1, got, 8), 1);
        cr_expect_eq(got[0], 0);
        cr_expect_eq(f_send_peers(p, 2, got, 8), 2); /* 3's sum to 0, then the result to 3 */
        cr_expect_eq(got[0], 0);
        cr_expect_eq(got[1], 3);
    }
    cs_program_free(p);
}

/* ==== Cell Rdb-Barrier all-reduce =========================================== */

/* rdb-barrier, P = 2^L: all ranks are busy in every round, so the rounds
 * stay aligned: L (alpha + beta n) plus floor(L / every) barriers of L
 * 0-byte rounds (L alpha each).  Any P with no barrier (every > L): the
 * extra ranks' fold and the result's return add two rounds. */
Test(papers, rdb_barrier_is_L_rounds_plus_barriers)
{
    static const int64_t NS[] = {1, 1000, 8192};
    for (int pi = 0; pi < NPOW2; pi++)
        for (int every = 1; every <= 4; every++)
            for (int ni = 0; ni < 3; ni++)
                for (int k = 0; k < NABS; k++)
                    for (int mi = 0; mi < 2; mi++) {
                        int P = POW2[pi], L = f_ceil_log2(P);
                        char opts[32];
                        snprintf(opts, sizeof opts, "every=%d", every);
                        cs_tick_t want = L * ab_T(&ABS[k], NS[ni]) + (L / every) * L * ABS[k].a;
                        cs_tick_t got = ab_timed(P, &ABS[k], "allreduce", "rdb-barrier", NS[ni], 0,
                                                 opts, MODES[mi]);
                        CHECK_TIME(got, want, "rdb-barrier P=%d every=%d n=%lld %s", P, every,
                                   (long long)NS[ni], cs_net_mode_name(MODES[mi]));
                    }
    for (int pi = 0; pi < NPS; pi++)
        for (int k = 0; k < NABS; k++) {
            int P = PS[pi], L = 0;
            while ((2 << L) <= P)
                L++;
            cs_tick_t want = (L + ((P & (P - 1)) ? 2 : 0)) * ab_T(&ABS[k], 777);
            cs_tick_t got =
                ab_timed(P, &ABS[k], "allreduce", "rdb-barrier", 777, 0, "every=64", CS_NET_PACKET);
            CHECK_TIME(got, want, "rdb-barrier without barriers P=%d", P);
        }
}

/* Rdb-Barrier on 8 SPEs: every=1 has the mailbox all-reduce's 3 barriers
 * (reference §3.5: "3 barriers for the 8 SPE case"), every=2 one barrier;
 * each barrier is 3 rounds of 8 zero-byte tokens. */
Test(papers, rdb_barrier_on_8_has_the_papers_barrier_count)
{
    static const struct {
        const char *opts;
        int barriers;
    } C[] = {{"every=1", 3}, {NULL, 1}, {"every=2", 1}, {"every=3", 1}, {"every=4", 0}};
    for (size_t i = 0; i < sizeof C / sizeof *C; i++) {
        h_run_t r = h_run("alphabeta:topo=complete,p=8", "allreduce", "rdb-barrier", 8, 4096, 0,
                          C[i].opts, CS_NET_PACKET, 0);
        int tokens = 0, data = 0;
        cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
        for (int32_t o = 0; o < cs_program_nops(r.prog); o++) {
            const cs_op_t *op = cs_program_op(r.prog, o);
            if (op->kind == CS_OP_SEND)
                *(op->bytes ? &data : &tokens) += 1;
        }
        cr_expect_eq(data, 3 * 8, "%s: %d data messages", C[i].opts, data);
        cr_expect_eq(tokens, C[i].barriers * 3 * 8, "%s: %d tokens, want %d barriers",
                     C[i].opts ? C[i].opts : "(default)", tokens, C[i].barriers);
        h_done(&r);
    }
}

/* ==== Groq hierarchical all-reduce =========================================== */

Test(papers, hierarchical_is_two_intra_phases_plus_the_inter_allreduce)
{
    static const int GS[] = {1, 2, 3, 4, 8};
    static const int GGS[] = {1, 2, 3, 4, 5, 8};
    int runs = 0;
    for (int gi = 0; gi < 5; gi++)
        for (int Gi = 0; Gi < 6; Gi++)
            for (int q = 1; q <= 100; q *= 10)
                for (int k = 0; k < NABS; k++)
                    for (int rdb = 0; rdb < 2; rdb++) {
                        int g = GS[gi], G = GGS[Gi], P = g * G;
                        int64_t n = (int64_t)q * P;
                        char opts[64];
                        if (rdb && (G & (G - 1)))
                            continue;
                        snprintf(opts, sizeof opts, "g=%d%s", g, rdb ? ",inter=rdb" : "");
                        cs_tick_t want = hier_formula(&ABS[k], g, G, n, rdb);
                        cs_tick_t got = ab_timed(P, &ABS[k], "allreduce", "hierarchical", n, 0,
                                                 opts, MODES[(q + k) % 2]);
                        CHECK_TIME(got, want, "hierarchical P=%d %s n=%lld", P, opts,
                                   (long long)n);
                        runs++;
                    }
    cr_assert_gt(runs, 300);
}

/* Default grouping: a Groq node of 8 when 8 divides P. */
Test(papers, hierarchical_defaults_to_groups_of_8)
{
    for (int G = 1; G <= 8; G++)
        for (int mi = 0; mi < 2; mi++) {
            int P = 8 * G;
            int64_t n = 64 * (int64_t)P;
            cs_tick_t got =
                ab_timed(P, &ABS[0], "allreduce", "hierarchical", n, 0, NULL, MODES[mi]);
            CHECK_TIME(got, hier_formula(&ABS[0], 8, G, n, 0), "hierarchical default P=%d", P);
        }
}

/* The machine's hierarchy hint decides the groups (here 4 interleaved
 * groups of 4: rank r in group r % 4); an explicit g= overrides it. */
Test(papers, hierarchical_follows_the_hierarchy_hint)
{
    const cs_coll_algo_t *a;
    cs_error_t err;
    int32_t group[16];
    cs_coll_hints_t h;
    memset(&h, 0, sizeof h);
    for (int r = 0; r < 16; r++)
        group[r] = r % 4;
    h.group = group;
    h.ngroups = 4;
    cr_assert_eq(cs_coll_find(CS_COLL_ALLREDUCE, "hierarchical", &a, &err), CS_OK);
    for (int mi = 0; mi < 2; mi++) {
        h_run_t r = h_run_algo("alphabeta:topo=complete,p=16,alpha=1us,beta=1ns", a, 16, 1600, 0,
                               NULL, MODES[mi], 1, &h);
        cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
        cr_expect_eq(r.finish, hier_formula(&ABS[0], 4, 4, 1600, 0));
        /* stage 1 only talks inside a group */
        for (int32_t o = 0; o < cs_program_nops(r.prog); o++) {
            const cs_op_t *op = cs_program_op(r.prog, o);
            if (op->kind == CS_OP_SEND && op->tag < (1 << 20))
                cr_expect_eq(op->rank % 4, op->peer % 4, "stage 1 send %d -> %d crosses groups",
                             op->rank, op->peer);
        }
        h_done(&r);
        r = h_run_algo("alphabeta:topo=complete,p=16,alpha=1us,beta=1ns", a, 16, 1600, 0, "g=8",
                       MODES[mi], 1, &h);
        cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
        cr_expect_eq(r.finish, hier_formula(&ABS[0], 8, 2, 1600, 0));
        h_done(&r);
    }
}

/* par=1 posts a stage's sends at once: the same data, validated, and with
 * equal groups never faster on one-port nodes than the ordered default
 * (which is optimal there). */
Test(papers, hierarchical_par_posts_all_sends_and_is_not_faster_on_one_port)
{
    for (int P = 8; P <= 24; P += 8) {
        h_run_t a = h_run("alphabeta:topo=complete,p=24", "allreduce", "hierarchical", P, 960, 0,
                          "par=1", CS_NET_PACKET, 1);
        h_run_t b = h_run("alphabeta:topo=complete,p=24", "allreduce", "hierarchical", P, 960, 0,
                          "par=0", CS_NET_PACKET, 1);
        cr_assert_eq(a.rc, CS_OK, "%s", a.err.msg);
        cr_assert_eq(b.rc, CS_OK, "%s", b.err.msg);
        cr_expect_geq(a.finish, b.finish, "P=%d", P);
        h_done(&a);
        h_done(&b);
    }
}

/* The hierarchy hint is checked: a group id outside 0..ngroups-1. */
Test(papers, a_bad_hierarchy_hint_is_an_error)
{
    const cs_coll_algo_t *a;
    cs_error_t err;
    int32_t group[4] = {0, 1, 5, 0};
    cs_coll_hints_t h;
    memset(&h, 0, sizeof h);
    h.group = group;
    h.ngroups = 2;
    cr_assert_eq(cs_coll_find(CS_COLL_ALLREDUCE, "hierarchical", &a, &err), CS_OK);
    h_run_t r = h_run_algo("alphabeta:topo=complete,p=4", a, 4, 100, 0, NULL, CS_NET_PACKET, 0, &h);
    cr_expect_eq(r.rc, CS_ERR_RANGE);
    cr_expect(strstr(r.err.msg, "rank 2") != NULL, "%s", r.err.msg);
    h_done(&r);
}
