/*
 * test_rooted.c - the lecture's and the generic MPI broadcast, reduce,
 * scatter and gather algorithms (src/coll/broadcast.c, reduce.c,
 * scatter_gather.c; the tests are grouped by origin, the sources by
 * collective) against alpha-beta cost formulas: the lecture's
 * (shared/reference/alpha-beta.md §8: binomial tree, flat / naive scatter,
 * divide-and-conquer scatter and gather, scatter + allgather) and the
 * schedules of the pipelined and Rabenseifner algorithms derived in
 * docs/algorithms.md.  Runs on alphabeta:topo=complete in both
 * network modes, over sweeps of P (powers of two and not, up to 100), sizes,
 * three alpha/beta pairs and roots.  Every expected time is computed here
 * from its formula, never taken from a run.  Also: the binomial reduce on a
 * line has no congestion in any round (P a power of two; the lecture's P = 9
 * does congest), ring hints are followed, options are checked, and with
 * --validate every algorithm delivers the right data for the P and
 * sizes, while deliberately wrong rooted algorithms are caught.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "ab_table.h"
#include "harness.h"


static void spec(char *buf, size_t len, const char *topo, int P, const ab_t *ab)
{
    snprintf(buf, len, "alphabeta:topo=%s,p=%d,alpha=%s,beta=%s", topo, P, ab->alpha, ab->beta);
}

static int ceil_log2(int P)
{
    int k = 0;
    while ((1 << k) < P)
        k++;
    return k;
}

/* Runs and asserts success; returns the finish time. */
static cs_tick_t timed(const char *topo, int P, const ab_t *ab, const char *coll, const char *algo,
                       int64_t bytes, int root, const char *opts, cs_net_mode_t mode)
{
    char s[256];
    spec(s, sizeof s, topo, P, ab);
    return h_time(s, coll, algo, P, bytes, root, opts, mode);
}

static int roots_of(int P, int *roots)
{
    int n = 0;
    roots[n++] = 0;
    if (P > 2)
        roots[n++] = P / 2;
    if (P > 1)
        roots[n++] = P - 1;
    return n;
}

/* ---- binomial reduce and broadcast: (alpha + beta n) ceil(log2 P) ------- */

static const int PS[] = {1, 2, 3, 5, 7, 8, 13, 16, 31, 64, 100};
#define NPS ((int)(sizeof PS / sizeof *PS))

static void tree_sweep(const char *coll)
{
    static const int64_t NS[] = {1, 1000, 4096, 10007, 65536};
    int runs = 0;
    for (int pi = 0; pi < NPS; pi++)
        for (int ni = 0; ni < (int)(sizeof NS / sizeof *NS); ni++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++) {
                    int P = PS[pi], roots[3], nr = roots_of(P, roots);
                    int64_t n = NS[ni];
                    cs_tick_t want = (ABS[k].a + ABS[k].b * n) * ceil_log2(P);
                    for (int ri = 0; ri < nr; ri++) {
                        cs_tick_t got = timed("complete", P, &ABS[k], coll, "binomial", n,
                                              roots[ri], NULL, MODES[mi]);
                        cr_assert_eq(got, want,
                                     "%s/binomial P=%d n=%lld root=%d alpha=%s beta=%s %s: "
                                     "%lld ticks, formula %lld",
                                     coll, P, (long long)n, roots[ri], ABS[k].alpha, ABS[k].beta,
                                     cs_net_mode_name(MODES[mi]), (long long)got, (long long)want);
                        runs++;
                    }
                }
    cr_assert_gt(runs, 500);
}

Test(rooted, binomial_broadcast_is_alpha_plus_beta_n_times_ceil_log2_P)
{
    tree_sweep("broadcast");
}

Test(rooted, binomial_reduce_is_alpha_plus_beta_n_times_ceil_log2_P)
{
    tree_sweep("reduce");
}

/* ---- one-to-all: (P-1)(alpha + beta x) ------------------------------------ */

/* flat broadcast (x = n), naive scatter (x = m), flat gather and flat
 * reduce (x = m resp. n): the root's single port serialises P-1 messages */
static void flat_sweep(const char *coll)
{
    static const int64_t XS[] = {1, 777, 4096, 9000};
    for (int pi = 0; pi < NPS; pi++)
        for (int xi = 0; xi < (int)(sizeof XS / sizeof *XS); xi++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++) {
                    int P = PS[pi], roots[3], nr = roots_of(P, roots);
                    int64_t x = XS[xi];
                    cs_tick_t want = (cs_tick_t)(P - 1) * (ABS[k].a + ABS[k].b * x);
                    for (int ri = 0; ri < nr; ri++) {
                        cs_tick_t got = timed("complete", P, &ABS[k], coll, "flat", x, roots[ri],
                                              NULL, MODES[mi]);
                        cr_assert_eq(got, want,
                                     "%s/flat P=%d size=%lld root=%d %s/%s %s: %lld vs %lld", coll,
                                     P, (long long)x, roots[ri], ABS[k].alpha, ABS[k].beta,
                                     cs_net_mode_name(MODES[mi]), (long long)got, (long long)want);
                    }
                }
}

Test(rooted, flat_broadcast_is_P_minus_1_times_alpha_plus_beta_n)
{
    flat_sweep("broadcast");
}
Test(rooted, naive_scatter_is_P_minus_1_times_alpha_plus_beta_m)
{
    flat_sweep("scatter");
}
Test(rooted, flat_gather_is_P_minus_1_times_alpha_plus_beta_m)
{
    flat_sweep("gather");
}
Test(rooted, flat_reduce_is_P_minus_1_times_alpha_plus_beta_n)
{
    flat_sweep("reduce");
}

/* ---- divide and conquer: alpha log2 P + beta m (P-1) ---------------------- */

/* The lecture states the formula for P a power of two.  With uneven halves
 * where the holder keeps the larger half, the root's own path has
 * ceil(log2 P) steps moving P-1 blocks and no other path is longer, so the
 * same formula with ceil holds for any P (docs/algorithms.md). */
static void dc_sweep(const char *coll, int powers_only)
{
    static const int64_t MS[] = {1, 100, 1024, 5000};
    for (int pi = 0; pi < NPS; pi++) {
        int P = PS[pi];
        if (powers_only && (P & (P - 1)))
            continue;
        for (int xi = 0; xi < (int)(sizeof MS / sizeof *MS); xi++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++) {
                    int roots[3], nr = roots_of(P, roots);
                    int64_t m = MS[xi];
                    cs_tick_t want = ABS[k].a * ceil_log2(P) + ABS[k].b * m * (P - 1);
                    for (int ri = 0; ri < nr; ri++) {
                        cs_tick_t got = timed("complete", P, &ABS[k], coll, "binomial", m,
                                              roots[ri], NULL, MODES[mi]);
                        cr_assert_eq(got, want,
                                     "%s/binomial P=%d m=%lld root=%d %s/%s %s: %lld vs %lld", coll,
                                     P, (long long)m, roots[ri], ABS[k].alpha, ABS[k].beta,
                                     cs_net_mode_name(MODES[mi]), (long long)got, (long long)want);
                    }
                }
    }
}

Test(rooted, dc_scatter_is_alpha_log2_P_plus_beta_m_P_minus_1_for_powers_of_two)
{
    dc_sweep("scatter", 1);
}

Test(rooted, dc_scatter_formula_with_ceil_holds_for_any_P)
{
    dc_sweep("scatter", 0);
}

Test(rooted, dc_gather_is_the_dual_of_dc_scatter_for_any_P)
{
    dc_sweep("gather", 0);
}

/* ---- pipelined chains: ((S-1) k + max_j (j + L_j)) (alpha + beta seg) ----
 * For each segment the root sends to the k chain heads in turn (k messages
 * of alpha + beta*seg back to back), so head j has segment s at
 * (s k + j + 1) t; the chains forward without queueing (a rank gets one
 * segment every k t and needs t to pass it on), so the last rank of chain j
 * (length L_j, the first (P-1) mod k chains one longer) has segment s at
 * (s k + j + L_j) t.  k = 1 is the chain: (P - 2 + S) t.  The reverse chains
 * of the reduce are the time-reversed schedule and cost the same. */
static cs_tick_t kchain_formula(int P, int k, int64_t S, cs_tick_t t)
{
    int64_t worst = 0;
    if (P == 1)
        return 0;
    if (k > P - 1)
        k = P - 1;
    for (int j = 0; j < k; j++) {
        int64_t L = (P - 1) / k + (j < (P - 1) % k ? 1 : 0);
        if (j + L > worst)
            worst = j + L;
    }
    return ((S - 1) * k + worst) * t;
}

static void chain_sweep(const char *coll, const char *algo, const int *ks, int nk)
{
    static const int64_t SEGS[] = {1000, 4096};
    static const int64_t SS[] = {1, 2, 5};
    int runs = 0;
    for (int pi = 0; pi < NPS; pi++)
        for (int ki = 0; ki < nk; ki++)
            for (int si = 0; si < 2; si++)
                for (int ci = 0; ci < 3; ci++)
                    for (int k = 0; k < NABS; k += 2)
                        for (int mi = 0; mi < 2; mi++) {
                            int P = PS[pi], roots[3], nr = roots_of(P, roots);
                            int64_t seg = SEGS[si], S = SS[ci], n = seg * S;
                            char opts[64];
                            cs_tick_t t = ABS[k].a + ABS[k].b * seg;
                            cs_tick_t want = kchain_formula(P, ks[ki], S, t);
                            /* seg=4096 is the machine's packet size: the default */
                            if (seg == 4096 && !strcmp(algo, "chain"))
                                opts[0] = 0;
                            else if (!strcmp(algo, "chain"))
                                snprintf(opts, sizeof opts, "seg=%lld", (long long)seg);
                            else
                                snprintf(opts, sizeof opts, "k=%d,seg=%lld", ks[ki],
                                         (long long)seg);
                            for (int ri = 0; ri < nr; ri++) {
                                cs_tick_t got = timed("complete", P, &ABS[k], coll, algo, n,
                                                      roots[ri], opts[0] ? opts : NULL, MODES[mi]);
                                cr_assert_eq(
                                    got, want, "%s/%s %s P=%d S=%lld root=%d %s: %lld vs %lld",
                                    coll, algo, opts, P, (long long)S, roots[ri],
                                    cs_net_mode_name(MODES[mi]), (long long)got, (long long)want);
                                runs++;
                            }
                        }
    cr_assert_gt(runs, 100);
}

static const int K1[] = {1};
static const int KS[] = {2, 3, 5};

Test(rooted, chain_broadcast_is_P_minus_2_plus_S_segment_times)
{
    chain_sweep("broadcast", "chain", K1, 1);
}

Test(rooted, chain_reduce_is_P_minus_2_plus_S_segment_times)
{
    chain_sweep("reduce", "chain", K1, 1);
}

Test(rooted, kchain_broadcast_matches_its_schedule_formula)
{
    chain_sweep("broadcast", "kchain", KS, 3);
}

Test(rooted, kchain_reduce_matches_its_schedule_formula)
{
    chain_sweep("reduce", "kchain", KS, 3);
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
                    cs_tick_t got =
                        timed("complete", P, ab, coll, "chain", n, P - 1, "seg=1000", MODES[mi]);
                    cr_assert_eq(got, want, "%s/chain P=%d n=%lld %s: %lld vs %lld", coll, P,
                                 (long long)n, cs_net_mode_name(MODES[mi]), (long long)got,
                                 (long long)want);
                }
            }
}

/* ---- segmented binomial: S ceil(log2 P) (alpha + beta seg) ----------------
 * The root has ceil(log2 P) children and sends every segment to each of
 * them: S*L messages back to back through its one send port; every other
 * rank has fewer children and keeps up, and the root's last message (the
 * last segment to its nearest child, a leaf) ends at S L t.  The reduce is
 * the dual through the root's receive port.  In the one-port model the
 * pipelining buys nothing over the binomial tree (it costs (S-1) L alpha
 * more); it pays off when reductions take time or ports are many. */
static void segbin_sweep(const char *coll)
{
    static const int64_t SS[] = {1, 3, 4};
    for (int pi = 0; pi < NPS; pi++)
        for (int ci = 0; ci < 3; ci++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++) {
                    int P = PS[pi], roots[3], nr = roots_of(P, roots);
                    int64_t seg = 1500, S = SS[ci];
                    cs_tick_t want = S * ceil_log2(P) * (ABS[k].a + ABS[k].b * seg);
                    for (int ri = 0; ri < nr; ri++) {
                        cs_tick_t got = timed("complete", P, &ABS[k], coll, "segmented-binomial",
                                              seg * S, roots[ri], "seg=1500", MODES[mi]);
                        cr_assert_eq(got, want,
                                     "%s/segmented-binomial P=%d S=%lld root=%d %s: %lld vs %lld",
                                     coll, P, (long long)S, roots[ri], cs_net_mode_name(MODES[mi]),
                                     (long long)got, (long long)want);
                    }
                }
}

Test(rooted, segmented_binomial_broadcast_is_S_ceil_log2_P_segment_times)
{
    segbin_sweep("broadcast");
}

Test(rooted, segmented_binomial_reduce_is_S_ceil_log2_P_segment_times)
{
    segbin_sweep("reduce");
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
                    int P = PW[pi], roots[3], nr = roots_of(P, roots);
                    int64_t q = QS[qi], n = q * P;
                    cs_tick_t want = ABS[k].a * ceil_log2(P) + ABS[k].b * q * (P - 1) +
                                     (P - 1) * (ABS[k].a + ABS[k].b * q);
                    for (int ri = 0; ri < nr; ri++) {
                        cs_tick_t got = timed("complete", P, &ABS[k], "broadcast",
                                              "scatter-allgather", n, roots[ri], NULL, MODES[mi]);
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
                int P = PO[pi], roots[3], nr = roots_of(P, roots);
                int64_t q = 1000, n = q * P;
                cs_tick_t want = ABS[k].a * ceil_log2(P) + ABS[k].b * q * (P - 1) +
                                 (P - 1) * (ABS[k].a + ABS[k].b * q);
                for (int ri = 0; ri < nr; ri++) {
                    cs_tick_t got = timed("complete", P, &ABS[k], "broadcast", "scatter-allgather",
                                          n, roots[ri], NULL, MODES[mi]);
                    cr_assert_geq(got, want, "P=%d root=%d %s: %lld below %lld", P, roots[ri],
                                  cs_net_mode_name(MODES[mi]), (long long)got, (long long)want);
                }
            }
}

/* ---- Rabenseifner's reduce ------------------------------------------------
 * Recursive halving over P' = 2^floor(log2 P) ranks, alpha log2 P' +
 * beta n (P'-1)/P', then the binomial gather of the pieces, the same again;
 * for P > P' the fold of the extra ranks comes first, alpha + beta n.
 * Exact for P a power of two dividing n.  For other P it is a lower bound
 * (the root takes part in the fold, every halving step and every gather
 * step, one after the other); ranks outside the fold run ahead and their
 * eager messages can hold the receive port of a partner still one step
 * behind, so a run may take longer (docs/algorithms.md). */
static cs_tick_t rabenseifner_formula(int P, int64_t n, const ab_t *ab)
{
    int Pp = 1, lg = 0;
    while (Pp * 2 <= P)
        Pp *= 2, lg++;
    cs_tick_t t = 2 * ab->a * lg + 2 * ab->b * (n / Pp) * (Pp - 1);
    return Pp < P ? t + ab->a + ab->b * n : t;
}

Test(rooted, rabenseifner_reduce_is_twice_alpha_log_P_plus_beta_n_fraction)
{
    static const int64_t NS[] = {64, 6400, 65536};
    for (int pi = 0; pi < NPS; pi++)
        for (int ni = 0; ni < 3; ni++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++) {
                    int P = PS[pi], roots[3], nr = roots_of(P, roots);
                    int64_t n = NS[ni];
                    cs_tick_t want = rabenseifner_formula(P, n, &ABS[k]);
                    for (int ri = 0; ri < nr; ri++) {
                        cs_tick_t got = timed("complete", P, &ABS[k], "reduce", "rabenseifner", n,
                                              roots[ri], NULL, MODES[mi]);
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
                cs_tick_t want = (3000000 + 2000 * n + 1000 * n) * ceil_log2(P);
                cs_tick_t got = h_time(s, "reduce", "binomial", P, n, P - 1, NULL, MODES[mi]);
                cr_assert_eq(got, want, "P=%d n=%lld %s: %lld vs %lld", P, (long long)n,
                             cs_net_mode_name(MODES[mi]), (long long)got, (long long)want);
                /* the bit-fixing order at P = 2^k also bounds the others */
                snprintf(s, sizeof s, "alphabeta:topo=complete,p=%d,alpha=3us,beta=2ns,reduce=1ns",
                         P + 1);
                cr_assert_leq(h_time(s, "reduce", "binomial", P + 1, n, 0, NULL, MODES[mi]),
                              (3000000 + 3000 * n) * ceil_log2(P + 1));
            }
}

/* ---- the binomial reduce on a line (lecture §8.1) --------------------------
 * For P a power of two, round j's messages go from 2^j k + 2^(j-1) to 2^j k
 * (root-relative) over disjoint intervals; with another root one interval
 * per round wraps around and runs the other way, which never competes
 * (full-duplex links).  A round-j sender has all its children's data exactly
 * at the end of round j-1, so rounds do not overlap in time: no channel
 * ever carries two messages at once, and the time is the complete graph's. */
static int peak_k(const h_run_t *r)
{
    int worst = 0;
    for (int c = 0; c < cs_topo_channels(r->m->topo); c++) {
        const cs_chan_stats_t *st = cs_net_chan_stats(r->res.net, c);
        if (st->peak_k > worst)
            worst = st->peak_k;
    }
    return worst;
}

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
                    cs_tick_t want = (ABS[k].a + ABS[k].b * n) * ceil_log2(P);
                    for (int ri = 0; ri < 4; ri++) {
                        char s[256];
                        spec(s, sizeof s, "line", P, &ABS[k]);
                        h_run_t r =
                            h_run(s, "reduce", "binomial", P, n, roots[ri], NULL, MODES[mi], 0);
                        cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
                        cr_assert_leq(peak_k(&r), 1, "line P=%d n=%lld root=%d %s: peak k %d", P,
                                      (long long)n, roots[ri], cs_net_mode_name(MODES[mi]),
                                      peak_k(&r));
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
        cr_assert_geq(peak_k(&r), 2, "%s: peak k %d", cs_net_mode_name(MODES[mi]), peak_k(&r));
        h_done(&r);
    }
}

/* ---- every algorithm: edge cases, options, validation ---------------------- */

typedef struct algo_ref {
    const char *coll, *algo, *opts; /* opts: extra options for pipelined ones */
} algo_ref_t;

static const algo_ref_t ALL[] = {
    {"broadcast", "binomial", NULL},
    {"broadcast", "flat", NULL},
    {"broadcast", "chain", NULL},
    {"broadcast", "chain", "seg=100"},
    {"broadcast", "kchain", NULL},
    {"broadcast", "kchain", "k=3,seg=333"},
    {"broadcast", "scatter-allgather", NULL},
    {"broadcast", "segmented-binomial", NULL},
    {"broadcast", "segmented-binomial", "seg=64"},
    {"reduce", "binomial", NULL},
    {"reduce", "flat", NULL},
    {"reduce", "chain", NULL},
    {"reduce", "chain", "seg=100"},
    {"reduce", "kchain", NULL},
    {"reduce", "kchain", "k=4,seg=333"},
    {"reduce", "rabenseifner", NULL},
    {"reduce", "segmented-binomial", NULL},
    {"reduce", "segmented-binomial", "seg=64"},
    {"scatter", "binomial", NULL},
    {"scatter", "flat", NULL},
    {"gather", "binomial", NULL},
    {"gather", "flat", NULL},
};
#define NALL ((int)(sizeof ALL / sizeof *ALL))

Test(rooted, registry_lists_the_defaults_first)
{
    static const char *const want[][2] = {{"broadcast", "binomial"},
                                          {"reduce", "binomial"},
                                          {"scatter", "binomial"},
                                          {"gather", "binomial"}};
    for (int i = 0; i < 4; i++) {
        cs_coll_kind_t k;
        const cs_coll_algo_t *a;
        cs_error_t err;
        cr_assert_eq(cs_coll_parse(want[i][0], &k, &err), CS_OK);
        cr_assert_eq(cs_coll_find(k, NULL, &a, &err), CS_OK, "%s", err.msg);
        cr_assert_str_eq(a->name, want[i][1]);
        cr_assert(a->summary && a->summary[0] && a->source && a->source[0] && a->options);
    }
}

Test(rooted, zero_bytes_and_one_rank_emit_nothing_and_finish_at_zero)
{
    for (int i = 0; i < NALL; i++)
        for (int mi = 0; mi < 2; mi++) {
            int cases[][2] = {{1, 0}, {1, 1000}, {5, 0}, {8, 0}};
            for (int c = 0; c < 4; c++) {
                char s[128];
                snprintf(s, sizeof s, "alphabeta:topo=complete,p=%d", cases[c][0]);
                h_run_t r = h_run(s, ALL[i].coll, ALL[i].algo, cases[c][0], cases[c][1],
                                  cases[c][0] - 1, ALL[i].opts, MODES[mi], 1);
                cr_assert_eq(r.rc, CS_OK, "%s/%s P=%d n=%d: %s", ALL[i].coll, ALL[i].algo,
                             cases[c][0], cases[c][1], r.err.msg);
                cr_assert_eq(r.finish, 0, "%s/%s P=%d n=%d: %lld", ALL[i].coll, ALL[i].algo,
                             cases[c][0], cases[c][1], (long long)r.finish);
                h_done(&r);
            }
        }
}

static void expect_error(const char *coll, const char *algo, const char *opts, int code,
                         const char *needle)
{
    h_run_t r =
        h_run("alphabeta:topo=complete,p=8", coll, algo, 8, 1000, 0, opts, CS_NET_PACKET, 0);
    cr_assert_eq(r.rc, code, "%s/%s %s: rc %d (%s)", coll, algo, opts, r.rc, r.err.msg);
    cr_assert(strstr(r.err.msg, needle), "%s/%s %s: \"%s\" lacks \"%s\"", coll, algo, opts,
              r.err.msg, needle);
    h_done(&r);
}

Test(rooted, options_are_checked_and_named_in_errors)
{
    expect_error("broadcast", "chain", "seg=0", CS_ERR_RANGE, "seg");
    expect_error("reduce", "segmented-binomial", "seg=0", CS_ERR_RANGE, "seg");
    expect_error("broadcast", "kchain", "k=0", CS_ERR_RANGE, "k");
    expect_error("reduce", "kchain", "k=-2", CS_ERR_RANGE, "k");
    expect_error("broadcast", "chain", "sge=10", CS_ERR_USAGE, "sge");
    expect_error("scatter", "binomial", "seg=10", CS_ERR_USAGE, "seg");
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

Test(rooted, options_parse_byte_suffixes)
{
    /* seg=1KiB is 1024 bytes: 4 segments of 4096 bytes' chain on P = 3 */
    cs_tick_t t =
        timed("complete", 3, &ABS[0], "broadcast", "chain", 4096, 0, "seg=1KiB", CS_NET_FLUID);
    cr_assert_eq(t, (3 - 2 + 4) * (ABS[0].a + ABS[0].b * 1024));
    /* k larger than P-1 acts as P-1: every rank its own chain */
    t = timed("complete", 4, &ABS[0], "broadcast", "kchain", 1000, 0, "k=50,seg=1000",
              CS_NET_PACKET);
    cr_assert_eq(t, 3 * (ABS[0].a + ABS[0].b * 1000));
}

/* Every algorithm delivers the right data (--validate) for the P,
 * sizes of 1 byte, smaller than P, not divisible by P, and roots at both
 * ends and in the middle. */
static void validate_range(int from, int to)
{
    static const int VP[] = {1, 2, 3, 5, 7, 8, 13, 16, 64, 100};
    static const int64_t VN[] = {1, 3, 37, 1000, 4099};
    int runs = 0;
    for (int i = from; i < to; i++)
        for (int pi = 0; pi < 10; pi++)
            for (int ni = 0; ni < 5; ni++) {
                int P = VP[pi], roots[3], nr = roots_of(P, roots);
                char s[128];
                snprintf(s, sizeof s, "alphabeta:topo=complete,p=%d", P);
                for (int ri = 0; ri < nr; ri++) {
                    cs_net_mode_t mode = MODES[(ni + ri) % 2];
                    h_run_t r = h_run(s, ALL[i].coll, ALL[i].algo, P, VN[ni], roots[ri],
                                      ALL[i].opts, mode, 1);
                    cr_assert_eq(r.rc, CS_OK, "%s/%s%s%s P=%d n=%lld root=%d %s: %s", ALL[i].coll,
                                 ALL[i].algo, ALL[i].opts ? " " : "",
                                 ALL[i].opts ? ALL[i].opts : "", P, (long long)VN[ni], roots[ri],
                                 cs_net_mode_name(mode), r.err.msg);
                    h_done(&r);
                    runs++;
                }
            }
    cr_assert_gt(runs, 0);
}

Test(rooted, validate_broadcast_algorithms)
{
    validate_range(0, 9);
}
Test(rooted, validate_reduce_algorithms)
{
    validate_range(9, 18);
}
Test(rooted, validate_scatter_and_gather_algorithms)
{
    validate_range(18, NALL);
}

/* The validation runs above mean something only if a wrong rooted
 * algorithm fails them: a binomial reduce that forgets its last child, and
 * a gather that puts one block at the wrong offset. */
static int bad_reduce(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    for (int r = 1; r < a->P - 1; r++) { /* rank P-1 never sends: dropped */
        cs_coll_send(b, r, 0, 0, a->bytes, 0);
        cs_coll_recv_reduce(b, 0, r, 0, a->bytes, 0);
    }
    return CS_OK;
}

static int bad_gather(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t m = a->bytes;
    for (int r = 1; r < a->P; r++) {
        int64_t at = r == 1 ? 2 * m : r * m; /* block 1 lands on block 2 */
        cs_coll_send(b, r, 0, r * m, m, 0);
        cs_coll_recv(b, 0, r, at, m, 0);
    }
    return CS_OK;
}

static int run_custom(cs_coll_kind_t kind, int (*build)(cs_coll_builder_t *, cs_error_t *),
                      cs_error_t *err)
{
    cs_coll_algo_t algo = {kind, "wrong", "deliberately wrong", "test", "", NULL, build};
    cs_machine_t *m;
    cs_coll_hints_t hints;
    cs_coll_args_t args;
    cs_program_t *p = NULL;
    cs_coll_check_t *chk = NULL;
    cs_exec_result_t res;
    cs_exec_opts_t o;
    int rc;
    memset(&hints, 0, sizeof hints);
    memset(&res, 0, sizeof res);
    cr_assert_eq(cs_machine_new("alphabeta:topo=complete,p=6", &m, err), CS_OK);
    args = (cs_coll_args_t){kind, 6, 100, 0, m->net.unit_bytes, &hints, NULL};
    cr_assert_eq(cs_coll_build(&algo, &args, &p, err), CS_OK, "%s", err->msg);
    cs_exec_env_t env;
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    cr_assert_eq(cs_coll_check_new(&args, p, 7, &chk, err), CS_OK);
    o.observer = cs_coll_check_observer(chk);
    rc = cs_exec_run(&env, p, &o, &res, err);
    if (!rc)
        rc = cs_coll_check_verify(chk, err);
    cs_coll_check_free(chk);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
    cs_machine_free(m);
    return rc;
}

Test(rooted, validation_catches_a_dropped_contribution_and_a_misplaced_block)
{
    cs_error_t err;
    cr_assert_eq(run_custom(CS_COLL_REDUCE, bad_reduce, &err), CS_ERR_VALIDATE, "%s", err.msg);
    cr_assert_eq(run_custom(CS_COLL_GATHER, bad_gather, &err), CS_ERR_VALIDATE, "%s", err.msg);
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
        cr_assert_eq(peak_k(&r), 1);
        cr_assert_eq(r.finish, kchain_formula(P, 1, 8, t));
        h_done(&r);
        r = run_with_ring("line", "broadcast", "chain", P, 8000, 0, "seg=1000", evens_odds,
                          MODES[mi]);
        cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
        cr_assert_geq(peak_k(&r), 2);
        cr_assert_gt(r.finish, kchain_formula(P, 1, 8, t));
        h_done(&r);
    }
}
