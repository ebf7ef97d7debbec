/*
 * test_broadcast.c - every broadcast algorithm (src/coll/broadcast.c),
 * whichever paper it comes from:
 *
 *   - lecture and generic MPI (Criterion suite "rooted"): binomial, flat,
 *     chain, kchain, segmented binomial and scatter + allgather against the
 *     lecture's alpha-beta costs (shared/reference/alpha-beta.md §8.1, §8.4,
 *     §8.8) and the pipelined schedules of docs/algorithms.md, on
 *     alphabeta:topo=complete in both network modes over sweeps of P,
 *     sizes, alpha/beta and roots; ring hints (a scrambled ring keeps the
 *     times; a bad order on a line congests); byte-suffixed options;
 *     --validate for the P, sizes and roots;
 *   - the Cell blade paper (suite "papers"): the Fig. 7 trees opt and
 *     simple, two-to-all, two-phase and hybrid segmented binomial
 *     (reference/cell-blade.md §2.4, §3.4, §6 case 29): times derived from
 *     the schedule, messages across the BIF, the opt root's ACK order, and
 *     round counts under a chip hint;
 *   - the Cerebras thesis (suite "thesis"): the multicast broadcast without
 *     hardware multicast, P-1 unicasts (Ch. 4, Lemma 4.1).
 *
 * The formulas are in formulas.h; tests over several collectives are in
 * test_suite.c and test_check.c.
 */

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "formulas.h"
#include "harness.h"

/* ==== lecture and generic MPI =============================================== */

Test(rooted, binomial_broadcast_is_alpha_plus_beta_n_times_ceil_log2_P)
{
    tree_sweep("broadcast");
}

Test(rooted, flat_broadcast_is_P_minus_1_times_alpha_plus_beta_n)
{
    flat_sweep("broadcast");
}

Test(rooted, chain_broadcast_is_P_minus_2_plus_S_segment_times)
{
    chain_sweep("broadcast", "chain", K1, 1);
}

Test(rooted, kchain_broadcast_matches_its_schedule_formula)
{
    chain_sweep("broadcast", "kchain", KS, 3);
}

/* A short last segment of r bytes: every hop of it waits for the previous
 * segment's hop, so the chain costs (P + S - 3) t + alpha + beta r. */
Test(rooted, chain_with_a_short_last_segment)
{
    static const int64_t RS[] = {1, 499, 999};
    for (int pi = 1; pi < NPS; pi++)
        for (int ri = 0; ri < 3; ri++)
            for (int mi = 0; mi < 2; mi++) {
                int P = PS[pi];
                int64_t seg = 1000, S = 4, n = (S - 1) * seg + RS[ri];
                const ab_t *ab = &ABS[1];
                cs_tick_t want = (P + S - 3) * (ab->a + ab->b * seg) + ab->a + ab->b * RS[ri];
                for (int c = 0; c < 2; c++) {
                    const char *coll = c ? "reduce" : "broadcast";
                    cs_tick_t got = ab_timed_on("complete", P, ab, coll, "chain", n, P - 1,
                                                "seg=1000", MODES[mi]);
                    cr_assert_eq(got, want, "%s/chain P=%d n=%lld %s: %lld vs %lld", coll, P,
                                 (long long)n, cs_net_mode_name(MODES[mi]), (long long)got,
                                 (long long)want);
                }
            }
}

Test(rooted, segmented_binomial_broadcast_is_S_ceil_log2_P_segment_times)
{
    segbin_sweep("broadcast");
}

/* ---- van de Geijn broadcast (lecture §8.8) --------------------------------
 * D&C scatter of n/P pieces, alpha log2 P + beta n (P-1)/P, then the bucket
 * allgather, (P-1)(alpha + beta n/P): exact for P a power of two dividing n.
 * (For other P a rank that already holds its piece may start the ring while
 * its successor still waits for its own piece, which delays that scatter
 * message; see docs/algorithms.md.) */
Test(rooted, scatter_allgather_broadcast_is_dc_scatter_plus_bucket_allgather)
{
    static const int PW[] = {2, 4, 8, 16, 64};
    static const int64_t QS[] = {1, 250, 4096}; /* n / P */
    for (int pi = 0; pi < 5; pi++)
        for (int qi = 0; qi < 3; qi++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++) {
                    int P = PW[pi], roots[3], nr = f_roots_of(P, roots);
                    int64_t q = QS[qi], n = q * P;
                    cs_tick_t want = ABS[k].a * f_ceil_log2(P) + ABS[k].b * q * (P - 1) +
                                     (P - 1) * (ABS[k].a + ABS[k].b * q);
                    for (int ri = 0; ri < nr; ri++) {
                        cs_tick_t got =
                            ab_timed_on("complete", P, &ABS[k], "broadcast", "scatter-allgather", n,
                                        roots[ri], NULL, MODES[mi]);
                        cr_assert_eq(got, want, "P=%d n=%lld root=%d %s: %lld vs %lld", P,
                                     (long long)n, roots[ri], cs_net_mode_name(MODES[mi]),
                                     (long long)got, (long long)want);
                    }
                }
}

/* For other P the same sum is a lower bound: the root sends its scatter
 * messages one after the other and then takes part in all P-1 ring steps. */
Test(rooted, scatter_allgather_broadcast_formula_is_a_lower_bound_for_other_P)
{
    static const int PO[] = {3, 5, 6, 7, 13, 100};
    for (int pi = 0; pi < 6; pi++)
        for (int k = 0; k < NABS; k++)
            for (int mi = 0; mi < 2; mi++) {
                int P = PO[pi], roots[3], nr = f_roots_of(P, roots);
                int64_t q = 1000, n = q * P;
                cs_tick_t want = ABS[k].a * f_ceil_log2(P) + ABS[k].b * q * (P - 1) +
                                 (P - 1) * (ABS[k].a + ABS[k].b * q);
                for (int ri = 0; ri < nr; ri++) {
                    cs_tick_t got = ab_timed_on("complete", P, &ABS[k], "broadcast",
                                                "scatter-allgather", n, roots[ri], NULL, MODES[mi]);
                    cr_assert_geq(got, want, "P=%d root=%d %s: %lld below %lld", P, roots[ri],
                                  cs_net_mode_name(MODES[mi]), (long long)got, (long long)want);
                }
            }
}

Test(rooted, options_parse_byte_suffixes)
{
    /* seg=1KiB is 1024 bytes: 4 segments of 4096 bytes' chain on P = 3 */
    cs_tick_t t = ab_timed_on("complete", 3, &ABS[0], "broadcast", "chain", 4096, 0, "seg=1KiB",
                              CS_NET_FLUID);
    cr_assert_eq(t, (3 - 2 + 4) * (ABS[0].a + ABS[0].b * 1024));
    /* k larger than P-1 acts as P-1: every rank its own chain */
    t = ab_timed_on("complete", 4, &ABS[0], "broadcast", "kchain", 1000, 0, "k=50,seg=1000",
                    CS_NET_PACKET);
    cr_assert_eq(t, 3 * (ABS[0].a + ABS[0].b * 1000));
}

Test(rooted, validate_broadcast_algorithms)
{
    rooted_validate_range(0, 9);
}

/* ---- rank orders ------------------------------------------------------------
 * The chains and the ring allgather follow the machine's ring hint.  Run
 * them with a scrambled ring (as a machine hint would give) on the complete
 * graph: the data must still be right and, the graph being symmetric, the
 * times the formulas'. */
static h_run_t run_with_ring(const char *topo, const char *coll, const char *algo, int P, int64_t n,
                             int root, const char *opts, const int32_t *ring, cs_net_mode_t mode)
{
    cs_coll_kind_t kind;
    const cs_coll_algo_t *a;
    cs_coll_hints_t hints;
    cs_error_t err;
    char s[128];
    snprintf(s, sizeof s, "alphabeta:topo=%s,p=%d", topo, P);
    cr_assert_eq(cs_coll_parse(coll, &kind, &err), CS_OK);
    cr_assert_eq(cs_coll_find(kind, algo, &a, &err), CS_OK);
    memset(&hints, 0, sizeof hints);
    hints.ring = ring;
    return h_run_algo(s, a, P, n, root, opts, mode, 1, &hints);
}

Test(rooted, pipelined_and_ring_algorithms_follow_a_scrambled_ring_hint)
{
    enum { P = 13 };
    int32_t ring[P];
    const ab_t *ab = &ABS[0];
    for (int i = 0; i < P; i++)
        ring[i] = (int32_t)((i * 5 + 3) % P); /* 5 is invertible mod 13 */
    for (int mi = 0; mi < 2; mi++)
        for (int root = 0; root < P; root += 4) {
            cs_tick_t t = ab->a + ab->b * 1000;
            h_run_t r = run_with_ring("complete", "broadcast", "chain", P, 4000, root, "seg=1000",
                                      ring, MODES[mi]);
            cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
            cr_assert_eq(r.finish, kchain_formula(P, 1, 4, t));
            h_done(&r);
            r = run_with_ring("complete", "reduce", "kchain", P, 3000, root, "seg=1000,k=3", ring,
                              MODES[mi]);
            cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
            cr_assert_eq(r.finish, kchain_formula(P, 3, 3, t));
            h_done(&r);
            r = run_with_ring("complete", "broadcast", "scatter-allgather", P, 1000 * P + 7, root,
                              NULL, ring, MODES[mi]);
            cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
            h_done(&r);
        }
}

/* On a line the hint matters: the chain in the natural order uses every
 * channel once in one direction, at most one segment at a time; in the
 * order 0 2 4 6 1 3 5 7 the hops 0->2 and 1->3 share channel 1->2 while
 * the pipeline is full, so they congest and the chain is slower. */
Test(rooted, chain_on_a_line_congests_only_in_a_bad_ring_order)
{
    enum { P = 8 };
    static const int32_t natural[P] = {0, 1, 2, 3, 4, 5, 6, 7};
    static const int32_t evens_odds[P] = {0, 2, 4, 6, 1, 3, 5, 7};
    for (int mi = 0; mi < 2; mi++) {
        cs_tick_t t = ABS[0].a + ABS[0].b * 1000;
        h_run_t r =
            run_with_ring("line", "broadcast", "chain", P, 8000, 0, "seg=1000", natural, MODES[mi]);
        cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
        cr_assert_eq(f_peak_k(&r), 1);
        cr_assert_eq(r.finish, kchain_formula(P, 1, 8, t));
        h_done(&r);
        r = run_with_ring("line", "broadcast", "chain", P, 8000, 0, "seg=1000", evens_odds,
                          MODES[mi]);
        cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
        cr_assert_geq(f_peak_k(&r), 2);
        cr_assert_gt(r.finish, kchain_formula(P, 1, 8, t));
        h_done(&r);
    }
}

/* ==== Cell broadcasts ======================================================= */

/* opt and simple: the Fig. 7 tree, ceil(log2 P) rounds of alpha + beta n.
 * A parent's sends are serialised by its one send port in the order it
 * posts them, so on this machine the ACK waits of "opt" cost nothing and
 * both variants take the same time (they differ on machines whose nodes
 * serve several transfers at once). */
static void tree_bcast_sweep(const char *algo)
{
    static const int64_t NS[] = {1, 1000, 4096, 10007};
    int runs = 0;
    for (int pi = 0; pi < NPS; pi++)
        for (int ni = 0; ni < 4; ni++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++) {
                    int P = PS[pi], roots[3], nr = f_roots_of(P, roots);
                    cs_tick_t want = ab_T(&ABS[k], NS[ni]) * f_ceil_log2(P);
                    for (int ri = 0; ri < nr; ri++, runs++) {
                        cs_tick_t got = ab_timed(P, &ABS[k], "broadcast", algo, NS[ni], roots[ri],
                                                 NULL, MODES[mi]);
                        CHECK_TIME(got, want, "broadcast/%s P=%d n=%lld root=%d %s/%s %s", algo,
                                   P, (long long)NS[ni], roots[ri], ABS[k].alpha, ABS[k].beta,
                                   cs_net_mode_name(MODES[mi]));
                    }
                }
    cr_assert_gt(runs, 500);
}

Test(papers, bcast_opt_is_ceil_log2_P_rounds)
{
    tree_bcast_sweep("opt");
}

Test(papers, bcast_simple_is_ceil_log2_P_rounds_on_one_port_nodes)
{
    tree_bcast_sweep("simple");
}

/* two-to-all: root -> partner (one message), then the root serves the
 * ceil(P/2)-1 others of its half and the partner the floor(P/2)-1 of its
 * half, one after another: ceil(P/2) rounds in all (0 for P = 1). */
Test(papers, two_to_all_is_ceil_half_P_rounds)
{
    static const int64_t NS[] = {1, 999, 4096};
    static const char *const OPTS[] = {NULL, "opt=0"};
    for (int pi = 0; pi < NPS; pi++)
        for (int ni = 0; ni < 3; ni++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++)
                    for (int oi = 0; oi < 2; oi++) {
                        int P = PS[pi], roots[3], nr = f_roots_of(P, roots);
                        cs_tick_t want = ab_T(&ABS[k], NS[ni]) * ((P + 1) / 2) * (P > 1);
                        for (int ri = 0; ri < nr; ri++) {
                            cs_tick_t got = ab_timed(P, &ABS[k], "broadcast", "two-to-all", NS[ni],
                                                     roots[ri], OPTS[oi], MODES[mi]);
                            CHECK_TIME(got, want, "two-to-all P=%d n=%lld root=%d %s %s", P,
                                       (long long)NS[ni], roots[ri], OPTS[oi] ? OPTS[oi] : "",
                                       cs_net_mode_name(MODES[mi]));
                        }
                    }
}

/* hybrid segmented binomial, n even: the root sends all n bytes to the
 * other half's representative (alpha + beta n); then each half of s ranks
 * runs phase 1 (the Fig. 7 tree, ceil(log2 s) rounds of n/2: every node's
 * forwarding ends by the last round) and phase 2 (one round of n/2 swaps),
 * so the root's half, the larger with s = ceil(P/2), finishes last:
 *   T = (alpha + beta n) + (ceil(log2 s) + 1)(alpha + beta n/2),  s >= 2;
 *   T = alpha + beta n for P = 2; 0 for P = 1. */
Test(papers, hybrid_segmented_is_one_full_message_plus_log_s_plus_1_halves)
{
    static const int64_t NS[] = {2, 1000, 4096, 10008};
    for (int pi = 0; pi < NPS; pi++)
        for (int ni = 0; ni < 4; ni++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++) {
                    int P = PS[pi], s = (P + 1) / 2, roots[3], nr = f_roots_of(P, roots);
                    int64_t n = NS[ni];
                    cs_tick_t want = 0;
                    if (P >= 2)
                        want = ab_T(&ABS[k], n);
                    if (s >= 2)
                        want += (f_ceil_log2(s) + 1) * ab_T(&ABS[k], n / 2);
                    for (int ri = 0; ri < nr; ri++) {
                        cs_tick_t got = ab_timed(P, &ABS[k], "broadcast", "hybrid-segmented", n,
                                                 roots[ri], NULL, MODES[mi]);
                        CHECK_TIME(got, want, "hybrid-segmented P=%d n=%lld root=%d %s", P,
                                   (long long)n, roots[ri], cs_net_mode_name(MODES[mi]));
                    }
                }
}

/* two-phase: the segmented binomial over all P ranks, ceil(log2 P) rounds
 * of half the data down the tree and one swap of halves */
Test(papers, two_phase_is_log_P_plus_1_halves)
{
    static const int64_t NS[] = {2, 1000, 4096, 10008};
    for (int pi = 0; pi < NPS; pi++)
        for (int ni = 0; ni < 4; ni++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++) {
                    int P = PS[pi], roots[3], nr = f_roots_of(P, roots);
                    int64_t n = NS[ni];
                    cs_tick_t want = P >= 2 ? (f_ceil_log2(P) + 1) * ab_T(&ABS[k], n / 2) : 0;
                    for (int ri = 0; ri < nr; ri++) {
                        cs_tick_t got = ab_timed(P, &ABS[k], "broadcast", "two-phase", n, roots[ri],
                                                 NULL, MODES[mi]);
                        CHECK_TIME(got, want, "two-phase P=%d n=%lld root=%d %s", P,
                                   (long long)n, roots[ri], cs_net_mode_name(MODES[mi]));
                    }
                }
}

/* With the blade's chip hint (and any root), the opt tree's first round is
 * the one partner on the other chip, after which each chip runs its own
 * tree: still ceil(log2 P) rounds when the chips are halves; two-to-all
 * takes 1 + (largest group - 1) rounds for any split of the ranks. */
Test(papers, hinted_broadcasts_keep_their_round_counts)
{
    static const int SPLIT[] = {1, 3, 8, 10, 15};
    const cs_coll_algo_t *opt, *tta;
    cs_error_t err;
    cr_assert_eq(cs_coll_find(CS_COLL_BROADCAST, "opt", &opt, &err), CS_OK);
    cr_assert_eq(cs_coll_find(CS_COLL_BROADCAST, "two-to-all", &tta, &err), CS_OK);
    for (int si = 0; si < 5; si++)
        for (int root = 0; root < 16; root += 5) {
            int32_t chip[16];
            cs_coll_hints_t h;
            int a = SPLIT[si], big = a > 16 - a ? a : 16 - a;
            memset(&h, 0, sizeof h);
            for (int r = 0; r < 16; r++)
                chip[r] = r >= a;
            h.group = chip;
            h.ngroups = 2;
            h_run_t r = h_run_algo("alphabeta:topo=complete,p=16,alpha=1us,beta=1ns", tta, 16,
                                   1000, root, NULL, CS_NET_PACKET, 1, &h);
            cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
            cr_expect_eq(r.finish, big * ab_T(&ABS[0], 1000), "two-to-all split %d root %d", a,
                         root);
            h_done(&r);
            if (a != 8)
                continue;
            r = h_run_algo("alphabeta:topo=complete,p=16,alpha=1us,beta=1ns", opt, 16, 1000, root,
                           NULL, CS_NET_FLUID, 1, &h);
            cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
            cr_expect_eq(r.finish, 4 * ab_T(&ABS[0], 1000), "opt with chips, root %d", root);
            h_done(&r);
        }
}

/* reference §6 case 29: hybrid segmented binomial and two-to-all at 16 SPEs
 * send exactly one data message across the BIF, of the whole n bytes; so
 * does the binomial broadcast under the 2-chip rule (a chip hint). */
Test(papers, cell_broadcasts_cross_the_bif_once)
{
    int32_t chip[16];
    cs_coll_hints_t h;
    memset(&h, 0, sizeof h);
    for (int r = 0; r < 16; r++)
        chip[r] = r / 8;
    h.group = chip;
    h.ngroups = 2;
    static const char *const algos[] = {"hybrid-segmented", "two-to-all", "opt", "simple"};
    for (int i = 0; i < 4; i++)
        for (int hint = 0; hint < 2; hint++) {
            if (i >= 2 && !hint)
                continue; /* the plain Fig. 7 tree ignores chips */
            cs_program_t *p = cell_build16("broadcast", algos[i], 5000, NULL, hint ? &h : NULL);
            cr_expect_eq(cell_bif_messages(p), 1, "%s%s: %d BIF messages", algos[i],
                         hint ? " (chip hint)" : "", cell_bif_messages(p));
            for (int32_t o = 0; o < cs_program_nops(p); o++) {
                const cs_op_t *op = cs_program_op(p, o);
                if (op->kind == CS_OP_SEND && cell_crossing(op->rank, op->peer)) {
                    cr_expect_eq(op->rank, 0);
                    cr_expect_eq(op->peer, 8);
                    cr_expect_eq(op->bytes, 5000);
                }
            }
            cs_program_free(p);
        }
}

/* reference §2.4, Fig. 7: the opt root serves SPE 1 (subtree {1,3,5,7}),
 * then 2, then 4, each after the previous transfer completed; simple posts
 * them together.  Checked on the dependencies of the built program. */
Test(papers, cell_opt_serves_children_in_decreasing_subtree_size_after_each_ack)
{
    for (int opt = 0; opt < 2; opt++) {
        cs_program_t *p = cell_build16("broadcast", opt ? "opt" : "simple", 64, NULL, NULL);
        int32_t sends[8];
        int n = 0;
        int peers[8], np = f_send_peers(p, 0, peers, 8);
        cr_assert_eq(np, 4);
        cr_expect(peers[0] == 1 && peers[1] == 2 && peers[2] == 4 && peers[3] == 8,
                  "root order %d %d %d %d", peers[0], peers[1], peers[2], peers[3]);
        for (int32_t o = 0; o < cs_program_nops(p); o++)
            if (cs_program_op(p, o)->kind == CS_OP_SEND && cs_program_op(p, o)->rank == 0)
                sends[n++] = o;
        for (int i = 1; i < n; i++) {
            int nd, after_prev = 0;
            const cs_dep_t *d = cs_program_preds(p, sends[i], &nd);
            for (int j = 0; j < nd; j++)
                after_prev |= cs_dep_op(d[j]) == sends[i - 1] && cs_dep_kind(d[j]) == CS_DEP_AFTER;
            cr_expect_eq(after_prev, opt, "%s: send %d %s the previous one", opt ? "opt" : "simple",
                         i, after_prev ? "waits for" : "does not wait for");
        }
        cs_program_free(p);
    }
}

/* ==== Cerebras thesis ======================================================= */

/* The multicast broadcast without hardware multicast: P-1 unicasts. */
Test(thesis, broadcast_time)
{
    TH_SWEEP({
        if (st)
            continue;
        th_expect_time(m, "broadcast", "thesis", P, n, P / 2, NULL, mode, t_scalar(m, P, n));
    })
}
