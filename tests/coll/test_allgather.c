/*
 * test_allgather.c - every allgather algorithm (src/coll/allgather.c),
 * whichever paper it comes from:
 *
 *   - lecture and generic MPI (Criterion suites "symmetric_*"): the bucket
 *     (ring) allgather, alpha-beta (P-1)(alpha + beta m) (lecture §8.7,
 *     shared/reference/alpha-beta.md), and Bruck's, ceil(log2 P) alpha +
 *     beta m (P-1) (Bruck et al. 1997), on alphabeta:topo=complete in both
 *     network modes; on alphabeta:topo=line the ring in the natural order
 *     has no congestion and in a random order congests and is slower
 *     (the rdb and gather + broadcast costs are checked in
 *     test_allreduce.c's recursive doubling test);
 *   - the Cell blade paper (suite "papers"): the hybrid-x-y allgather,
 *     log2 P + k rounds (reference/cell-blade.md §3.2), its messages across
 *     the BIF (§6 case 21) and round 4 of hybrid-4-2 (Fig. 6);
 *   - the CNS-1 report (suite "papers"): the directed and the two-way ring,
 *     P-1 steps on one-port nodes, and the two-way ring's hop counts along
 *     a ring hint (reference/cns1.md §6.1).
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

Test(symmetric_time, bucket_allgather_is_alpha_plus_beta_m_times_P_minus_1)
{
    static const int Ps[] = {1, 2, 3, 5, 8, 13, 16};
    static const int64_t ms[] = {1, 100, 4096, 4097, 10000};
    for (size_t a = 0; a < NSYM_ABS; a++)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
            for (size_t j = 0; j < sizeof ms / sizeof *ms; j++)
                sym_expect_time("allgather", "ring", NULL, Ps[i], ms[j], &SYM_ABS[a],
                                (sym_A(&SYM_ABS[a]) + sym_B(&SYM_ABS[a]) * ms[j]) * (Ps[i] - 1));
}

/* Bruck allgather: ceil(log2 P) rounds, the last one carrying P - 2^(L-1)
 * blocks; the final local rotation is free (a message to oneself is a local
 * copy): the textbook ceil(log2 P) alpha + beta m (P-1). */
Test(symmetric_time, bruck_allgather_any_P)
{
    static const int Ps[] = {2, 3, 5, 7, 8, 13, 16};
    static const int64_t ms[] = {1, 100, 4097};
    for (size_t a = 0; a < NSYM_ABS; a += 2)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
            for (size_t j = 0; j < sizeof ms / sizeof *ms; j++) {
                const sym_ab_t *p = &SYM_ABS[a];
                int P = Ps[i];
                int64_t m = ms[j];
                sym_expect_time("allgather", "bruck", NULL, P, m, p,
                                sym_A(p) * f_ceil_log2(P) + sym_B(p) * m * (P - 1));
            }
}

/* ---- congestion on a line ------------------------------------------------ */

typedef struct line_run {
    cs_tick_t finish;
    int32_t peak_k;  /* over all channels */
    int congested;   /* channels with peak_k > 1 */
} line_run_t;

static line_run_t ring_on_line(int P, int64_t m, const int32_t *ring, cs_net_mode_t mode)
{
    char spec[160];
    const cs_coll_algo_t *a;
    cs_error_t err;
    cs_coll_hints_t h;
    line_run_t out = {0, 0, 0};
    h_run_t r;
    snprintf(spec, sizeof spec, "alphabeta:topo=line,p=%d,alpha=1us,beta=1ns", P);
    cr_assert_eq(cs_coll_find(CS_COLL_ALLGATHER, "ring", &a, &err), CS_OK);
    memset(&h, 0, sizeof h);
    h.ring = ring;
    r = h_run_algo(spec, a, P, m, 0, NULL, mode, 1, &h);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    for (int c = 0; c < cs_topo_channels(r.m->topo); c++) {
        const cs_chan_stats_t *s = cs_net_chan_stats(r.res.net, c);
        if (s->peak_k > out.peak_k)
            out.peak_k = s->peak_k;
        out.congested += s->peak_k > 1;
    }
    out.finish = r.finish;
    h_done(&r);
    return out;
}

Test(symmetric_line, natural_ring_allgather_has_no_congestion)
{
    static const int Ps[] = {2, 3, 8, 9, 16};
    int32_t ring[16];
    for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++) {
        int P = Ps[i];
        for (int j = 0; j < P; j++)
            ring[j] = j;
        for (size_t mi = 0; mi < 2; mi++) {
            line_run_t lr = ring_on_line(P, 5000, ring, MODES[mi]);
            cr_expect_leq(lr.peak_k, 1, "P=%d %s: peak k %d", P, cs_net_mode_name(MODES[mi]),
                          lr.peak_k);
            cr_expect_eq(lr.finish, (1000000 + 1000 * 5000) * (int64_t)(P - 1),
                         "P=%d: %lld ticks", P, (long long)lr.finish);
        }
    }
}

Test(symmetric_line, random_ring_allgather_congests)
{
    static const int Ps[] = {8, 9, 16};
    int32_t ring[16], id[16];
    uint64_t seed = 42;
    for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++) {
        int P = Ps[i];
        for (int j = 0; j < P; j++)
            id[j] = j;
        for (int trial = 0; trial < 3; trial++) {
            f_shuffle(ring, P, &seed);
            for (size_t mi = 0; mi < 2; mi++) {
                line_run_t nat = ring_on_line(P, 5000, id, MODES[mi]);
                line_run_t rnd = ring_on_line(P, 5000, ring, MODES[mi]);
                cr_expect_gt(rnd.peak_k, 1, "P=%d trial %d %s: random ring has peak k %d", P,
                             trial, cs_net_mode_name(MODES[mi]), rnd.peak_k);
                cr_expect_gt(rnd.congested, 0);
                cr_expect_gt(rnd.finish, nat.finish, "P=%d: random %lld vs natural %lld", P,
                             (long long)rnd.finish, (long long)nat.finish);
            }
        }
    }
}

/* ==== the Cell blade paper =================================================== */

/* hybrid-x-y all-gather, P a power of two, groups of 2^k:
 *   gather:    round j moves 2^j m:          k alpha + (2^k - 1) beta m
 *   rdb:       round j moves 2^k 2^j m:      log2(P/2^k) alpha + (P - 2^k) beta m
 *   broadcast: k rounds of the whole P m:    k alpha + k P beta m
 * total (log2 P + k) alpha + (P - 1 + k P) beta m: the paper's log2 P + k
 * rounds. */
Test(papers, hybrid_allgather_is_log2P_plus_k_rounds)
{
    static const int64_t MS[] = {1, 100, 1024, 3000};
    int runs = 0;
    for (int pi = 0; pi < NPOW2; pi++) {
        int P = POW2[pi], lg = f_ceil_log2(P);
        for (int x = 0; x <= lg + 1; x++) /* x = 0: the default */
            for (int mi_ = 0; mi_ < 4; mi_++)
                for (int k = 0; k < NABS; k++)
                    for (int mi = 0; mi < 2; mi++, runs++) {
                        char opts[32];
                        int y, kk;
                        int64_t m = MS[mi_];
                        hybrid_shape(P, x, &y, &kk);
                        cr_assert_eq(y << kk, P);
                        snprintf(opts, sizeof opts, "x=%d", x);
                        cs_tick_t want = (lg + kk) * ABS[k].a +
                                         ABS[k].b * m * ((int64_t)P - 1 + (int64_t)kk * P);
                        cs_tick_t got = ab_timed(P, &ABS[k], "allgather", "hybrid", m, 0,
                                                 x ? opts : NULL, MODES[mi]);
                        CHECK_TIME(got, want, "allgather/hybrid P=%d x=%d (y=%d) m=%lld %s", P, x,
                                   y, (long long)m, cs_net_mode_name(MODES[mi]));
                    }
    }
    cr_assert_gt(runs, 500);
}

/* reference §3.2 / §6 case 21: rdb 16, hybrid-2-8 8, hybrid-3-4 4,
 * hybrid-4-2 2, gather + broadcast 2 BIF data messages. */
Test(papers, cell_hybrid_allgather_bif_messages)
{
    static const int want[] = {0, 16, 8, 4, 2, 2}; /* by x */
    for (int x = 1; x <= 5; x++) {
        char opts[16];
        snprintf(opts, sizeof opts, "x=%d", x);
        cs_program_t *p = cell_build16("allgather", "hybrid", 1024, opts, NULL);
        cr_expect_eq(cell_bif_messages(p), want[x], "hybrid x=%d: %d BIF messages", x,
                     cell_bif_messages(p));
        cs_program_free(p);
    }
    /* the paper's names hybrid-x-y as options */
    {
        cs_program_t *p = cell_build16("allgather", "hybrid", 1024, "x=3,y=4", NULL);
        cr_expect_eq(cell_bif_messages(p), 4);
        cs_program_free(p);
        p = cell_build16("allgather", "hybrid", 1024, "y=2", NULL);
        cr_expect_eq(cell_bif_messages(p), 2);
        cs_program_free(p);
        p = cell_build16("allgather", "hybrid", 1024, NULL, NULL); /* default: hybrid-3-4 */
        cr_expect_eq(cell_bif_messages(p), 4);
        cs_program_free(p);
    }
}

/* reference §3.2 Fig. 6: after three gather rounds of hybrid-4-2, SPE 0
 * holds blocks 0-7 and SPE 8 blocks 8-15; round 4 swaps exactly those. */
Test(papers, cell_hybrid_4_2_round_4_swaps_the_chip_halves)
{
    const int64_t m = 100;
    cs_program_t *p = cell_build16("allgather", "hybrid", m, "x=4", NULL);
    int seen = 0;
    for (int32_t o = 0; o < cs_program_nops(p); o++) {
        const cs_op_t *op = cs_program_op(p, o);
        const cs_data_t *d = cs_program_data(p, o);
        if (op->kind != CS_OP_SEND || !cell_crossing(op->rank, op->peer))
            continue;
        seen++;
        if (op->rank == 0) {
            cr_expect_eq(op->peer, 8);
            cr_expect(d->off == 0 && d->len == 8 * m, "0 -> 8 carries [%lld, +%lld)",
                      (long long)d->off, (long long)d->len);
        } else {
            cr_expect_eq(op->rank, 8);
            cr_expect_eq(op->peer, 0);
            cr_expect(d->off == 8 * m && d->len == 8 * m, "8 -> 0 carries [%lld, +%lld)",
                      (long long)d->off, (long long)d->len);
        }
    }
    cr_expect_eq(seen, 2);
    cs_program_free(p);
}

/* ==== CNS-1 rings ============================================================ */

/* The directed ring: P-1 steps of one block (alpha + beta m) whether the
 * forwarding streams or waits for whole blocks: on this machine a node's
 * next send waits for its send port, by which time the block has arrived. */
Test(papers, cns_ring_is_P_minus_1_steps)
{
    static const int64_t MS[] = {1, 137, 1000, 9000};
    static const char *const OPTS[] = {NULL, "stream=0", "stream=1"};
    for (int pi = 0; pi < NPS; pi++)
        for (int mi_ = 0; mi_ < 4; mi_++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++)
                    for (int oi = 0; oi < 3; oi++) {
                        int P = PS[pi];
                        cs_tick_t want = (P - 1) * ab_T(&ABS[k], MS[mi_]);
                        cs_tick_t got = ab_timed(P, &ABS[k], "allgather", "cns-ring", MS[mi_], 0,
                                                 OPTS[oi], MODES[mi]);
                        CHECK_TIME(got, want, "cns-ring P=%d m=%lld %s %s", P,
                                   (long long)MS[mi_], OPTS[oi] ? OPTS[oi] : "",
                                   cs_net_mode_name(MODES[mi]));
                    }
}

/* Two-way: a node with one send port alternates positive and negative
 * sends (floor(P/2) + ceil(P/2) - 1 = P-1 of them), receiving the positive
 * stream from N- while N+ sends it the negative one; as long as the offset
 * is shorter than a message the ports never idle: (P-1)(alpha + beta m).
 * (The paper's halving of the time needs two ports per node: 2I.)  With
 * stream=0 a node's next positive send may be ready while the negative one
 * waits for a busy receiver, and the engine's greedy port arbitration then
 * breaks the alternation: no closed form, only validation below. */
Test(papers, cns_two_way_on_one_port_nodes_is_P_minus_1_steps)
{
    static const int64_t MS[] = {1, 137, 1000};
    static const char *const OPTS[] = {NULL, "offset=0", "offset=100ns", "offset=400ns"};
    for (int pi = 0; pi < NPS; pi++)
        for (int mi_ = 0; mi_ < 3; mi_++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++)
                    for (int oi = 0; oi < 4; oi++) {
                        int P = PS[pi];
                        cs_tick_t want = (P - 1) * ab_T(&ABS[k], MS[mi_]);
                        cs_tick_t got = ab_timed(P, &ABS[k], "allgather", "cns-two-way", MS[mi_], 0,
                                                 OPTS[oi], MODES[mi]);
                        CHECK_TIME(got, want, "cns-two-way P=%d m=%lld %s %s", P,
                                   (long long)MS[mi_], OPTS[oi] ? OPTS[oi] : "",
                                   cs_net_mode_name(MODES[mi]));
                    }
}

/* The two-way variant moves floor(P/2) blocks in the positive direction of
 * the ring and ceil(P/2) - 1 in the negative (reference §6.1); with a ring
 * hint the neighbours are the hint's. */
Test(papers, cns_two_way_hop_counts_follow_the_ring_hint)
{
    for (int P = 1; P <= 12; P++) {
        int32_t ring[12], pos[12];
        cs_coll_hints_t h;
        memset(&h, 0, sizeof h);
        for (int i = 0; i < P; i++)
            ring[i] = (int32_t)((int64_t)i * 5 % P);
        if (P % 5 == 0) /* keep it a permutation */
            for (int i = 0; i < P; i++)
                ring[i] = P - 1 - i;
        for (int i = 0; i < P; i++)
            pos[ring[i]] = i;
        h.ring = ring;
        const cs_coll_algo_t *a;
        cs_error_t err;
        cr_assert_eq(cs_coll_find(CS_COLL_ALLGATHER, "cns-two-way", &a, &err), CS_OK);
        h_run_t r = h_run_algo("alphabeta:topo=complete,p=12", a, P, 10, 0, NULL, CS_NET_PACKET,
                               1, &h);
        cr_assert_eq(r.rc, CS_OK, "P=%d: %s", P, r.err.msg);
        for (int q = 0; q < P; q++) {
            int plus = 0, minus = 0;
            for (int32_t o = 0; o < cs_program_nops(r.prog); o++) {
                const cs_op_t *op = cs_program_op(r.prog, o);
                if (op->kind != CS_OP_SEND || op->rank != ring[q])
                    continue;
                if (op->peer == ring[(q + 1) % P] && op->tag < (1 << 20))
                    plus++;
                else if (op->peer == ring[(q + P - 1) % P])
                    minus++;
                else
                    cr_assert_fail("P=%d: rank %d sends to %d, not a ring neighbour", P,
                                   ring[q], op->peer);
            }
            cr_expect_eq(plus, P / 2, "P=%d position %d: %d positive sends", P, q, plus);
            cr_expect_eq(minus, (P + 1) / 2 - 1, "P=%d position %d: %d negative sends", P, q,
                         minus);
        }
        (void)pos;
        h_done(&r);
    }
}
