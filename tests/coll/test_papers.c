/*
 * test_papers.c - the algorithms of the machine papers (the Cell blade
 * paper, the CNS-1 report, the Groq ISCA'22 paper's hierarchical
 * all-reduce), which live in the file of their collective (src/coll/
 * broadcast.c, reduce.c, allreduce.c, allgather.c, barrier.c):
 *
 *   - alpha-beta costs on alphabeta:topo=complete, in both network modes,
 *     over sweeps of P, sizes, alpha/beta pairs, roots and options.  Every
 *     expected time is derived here from the schedule under the engine's
 *     rules (an uncontended message costs alpha + beta*n; a rank does one
 *     send and one receive at a time), never copied from a run;
 *   - the Cell paper's structural numbers (reference/cell-blade.md §3, §6):
 *     messages crossing between the two chips {0..7} and {8..15} of a
 *     16-SPE blade, counted from the built program's ops, and the exact
 *     partners and ranges of the rounds the paper describes;
 *   - option checking;
 *   - --validate of every algorithm over the P, sizes (1 byte, not
 *     multiples of P), roots, options and hierarchy hints.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ab_table.h"
#include "harness.h"


static const int PS[] = {1, 2, 3, 5, 7, 8, 13, 16, 31, 64, 100};
#define NPS ((int)(sizeof PS / sizeof *PS))
static const int POW2[] = {1, 2, 4, 8, 16, 32, 64};
#define NPOW2 ((int)(sizeof POW2 / sizeof *POW2))

static int ceil_log2(int64_t x)
{
    int k = 0;
    while (((int64_t)1 << k) < x)
        k++;
    return k;
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* one message of n bytes */
static cs_tick_t T(const ab_t *ab, int64_t n) { return ab->a + ab->b * n; }

static cs_tick_t timed(int P, const ab_t *ab, const char *coll, const char *algo, int64_t bytes,
                       int root, const char *opts, cs_net_mode_t mode)
{
    char s[256];
    snprintf(s, sizeof s, "alphabeta:topo=complete,p=%d,alpha=%s,beta=%s", P, ab->alpha,
             ab->beta);
    return h_time(s, coll, algo, P, bytes, root, opts, mode);
}

#define CHECK_TIME(got, want, fmt, ...)                                                      \
    cr_assert_eq((got), (want), fmt ": %lld ticks, formula %lld", __VA_ARGS__,               \
                 (long long)(got), (long long)(want))

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
                    int P = PS[pi], roots[3], nr = roots_of(P, roots);
                    cs_tick_t want = T(&ABS[k], NS[ni]) * ceil_log2(P);
                    for (int ri = 0; ri < nr; ri++, runs++) {
                        cs_tick_t got = timed(P, &ABS[k], "broadcast", algo, NS[ni], roots[ri],
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
                        int P = PS[pi], roots[3], nr = roots_of(P, roots);
                        cs_tick_t want = T(&ABS[k], NS[ni]) * ((P + 1) / 2) * (P > 1);
                        for (int ri = 0; ri < nr; ri++) {
                            cs_tick_t got = timed(P, &ABS[k], "broadcast", "two-to-all", NS[ni],
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
                    int P = PS[pi], s = (P + 1) / 2, roots[3], nr = roots_of(P, roots);
                    int64_t n = NS[ni];
                    cs_tick_t want = 0;
                    if (P >= 2)
                        want = T(&ABS[k], n);
                    if (s >= 2)
                        want += (ceil_log2(s) + 1) * T(&ABS[k], n / 2);
                    for (int ri = 0; ri < nr; ri++) {
                        cs_tick_t got = timed(P, &ABS[k], "broadcast", "hybrid-segmented", n,
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
                    int P = PS[pi], roots[3], nr = roots_of(P, roots);
                    int64_t n = NS[ni];
                    cs_tick_t want = P >= 2 ? (ceil_log2(P) + 1) * T(&ABS[k], n / 2) : 0;
                    for (int ri = 0; ri < nr; ri++) {
                        cs_tick_t got = timed(P, &ABS[k], "broadcast", "two-phase", n,
                                              roots[ri], NULL, MODES[mi]);
                        CHECK_TIME(got, want, "two-phase P=%d n=%lld root=%d %s", P,
                                   (long long)n, roots[ri], cs_net_mode_name(MODES[mi]));
                    }
                }
}

/* ==== Cell all-gather and all-reduce hybrids ================================ */

/* The shape the algorithms document: y leaders (a power of two) and k
 * binomial rounds, from option x (or the default). */
static void hybrid_shape(int P, int x, int *y, int *k)
{
    if (x > 0) {
        *y = 1 << ceil_log2(cdiv(P, (int64_t)1 << (x - 1)));
    } else {
        int s = (int)ceil(sqrt((double)P));
        *y = 1;
        while (*y * 2 <= s)
            *y *= 2;
    }
    *k = ceil_log2(cdiv(P, *y));
}

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
        int P = POW2[pi], lg = ceil_log2(P);
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
                        cs_tick_t got = timed(P, &ABS[k], "allgather", "hybrid", m, 0,
                                              x ? opts : NULL, MODES[mi]);
                        CHECK_TIME(got, want, "allgather/hybrid P=%d x=%d (y=%d) m=%lld %s", P, x,
                                   y, (long long)m, cs_net_mode_name(MODES[mi]));
                    }
    }
    cr_assert_gt(runs, 500);
}

/* HybridA-x-y for any P: the largest group (ceil(P/y) ranks) needs k =
 * ceil(log2 ceil(P/y)) binomial reduce rounds and as many broadcast rounds,
 * the leaders log2 y rdb rounds, all of n bytes; a leader that is ready
 * early only waits for its partner, so (2k + log2 y)(alpha + beta n). */
Test(papers, hybrid_a_is_2k_plus_log2y_rounds_of_n_for_any_P)
{
    static const int64_t NS[] = {1, 1000, 4099};
    for (int pi = 0; pi < NPS; pi++) {
        int P = PS[pi], lg = ceil_log2(P);
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
                        cs_tick_t want = (2 * kk + ceil_log2(y)) * T(&ABS[k], NS[ni]);
                        cs_tick_t got = timed(P, &ABS[k], "allreduce", "hybrid-a", NS[ni], 0,
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
        int P = POW2[pi], lg = ceil_log2(P);
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
                        cs_tick_t got = timed(P, &ABS[k], "allreduce", "hybrid-b", n, 0,
                                              x ? opts : NULL, MODES[mi]);
                        CHECK_TIME(got, want, "allreduce/hybrid-b P=%d x=%d n=%lld %s", P, x,
                                   (long long)n, cs_net_mode_name(MODES[mi]));
                    }
    }
}

/* ==== Cell Rdb-Barrier all-reduce, mailbox reduce, stepped barrier ========= */

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
                        int P = POW2[pi], L = ceil_log2(P);
                        char opts[32];
                        snprintf(opts, sizeof opts, "every=%d", every);
                        cs_tick_t want = L * T(&ABS[k], NS[ni]) + (L / every) * L * ABS[k].a;
                        cs_tick_t got = timed(P, &ABS[k], "allreduce", "rdb-barrier", NS[ni], 0,
                                              opts, MODES[mi]);
                        CHECK_TIME(got, want, "rdb-barrier P=%d every=%d n=%lld %s", P, every,
                                   (long long)NS[ni], cs_net_mode_name(MODES[mi]));
                    }
    for (int pi = 0; pi < NPS; pi++)
        for (int k = 0; k < NABS; k++) {
            int P = PS[pi], L = 0;
            while ((2 << L) <= P)
                L++;
            cs_tick_t want = (L + ((P & (P - 1)) ? 2 : 0)) * T(&ABS[k], 777);
            cs_tick_t got = timed(P, &ABS[k], "allreduce", "rdb-barrier", 777, 0, "every=64",
                                  CS_NET_PACKET);
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
                int P = PS[pi], L = ceil_log2(P), roots[3], nr = roots_of(P, roots);
                for (int ri = 0; ri < nr; ri++) {
                    cs_tick_t got = timed(P, &ABS[k], "reduce", "mailbox", 1000, roots[ri],
                                          "every=64", MODES[mi]);
                    CHECK_TIME(got, L * T(&ABS[k], 1000), "reduce/mailbox every=64 P=%d root=%d",
                               P, roots[ri]);
                    if (P == 2 || P == 4) {
                        got = timed(P, &ABS[k], "reduce", "mailbox", 1000, roots[ri], NULL,
                                    MODES[mi]);
                        CHECK_TIME(got, L * T(&ABS[k], 1000) + L * L * ABS[k].a,
                                   "reduce/mailbox P=%d root=%d", P, roots[ri]);
                    }
                }
            }
}

/* Stepped barrier: at level l the leaders collect from at most fanin-1
 * members, one receive at a time; the release mirrors it:
 *   T = 2 sum_l (min(f, ceil(P / f^l)) - 1)(alpha + beta t),  t the token. */
Test(papers, mailbox_barrier_is_twice_the_sum_of_level_fanins)
{
    for (int P = 1; P <= 70; P += (P < 20 ? 1 : 7))
        for (int f = 2; f <= 5; f++)
            for (int64_t tok = 0; tok <= 1; tok++)
                for (int k = 0; k < NABS; k++) {
                    char opts[32];
                    int64_t rounds = 0, span = 1;
                    for (int l = 0; span < P; l++, span *= f) {
                        int64_t g = cdiv(P, span);
                        rounds += (g < f ? g : f) - 1;
                    }
                    snprintf(opts, sizeof opts, "fanin=%d", f);
                    cs_tick_t want = 2 * rounds * T(&ABS[k], tok);
                    cs_tick_t got = timed(P, &ABS[k], "barrier", "mailbox", tok, 0, opts,
                                          MODES[(P + f) % 2]);
                    CHECK_TIME(got, want, "barrier/mailbox P=%d fanin=%d token=%lld", P, f,
                               (long long)tok);
                }
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
                        cs_tick_t want = (P - 1) * T(&ABS[k], MS[mi_]);
                        cs_tick_t got = timed(P, &ABS[k], "allgather", "cns-ring", MS[mi_], 0,
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
                        cs_tick_t want = (P - 1) * T(&ABS[k], MS[mi_]);
                        cs_tick_t got = timed(P, &ABS[k], "allgather", "cns-two-way", MS[mi_], 0,
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

/* ==== Groq hierarchical all-reduce =========================================== */

/* P = g G ranks in G groups of g, n a multiple of P:
 *   intra reduce-scatter:  (g-1)(alpha + beta n/g)   (g-1 perfect matchings)
 *   inter (direct):        2 (G-1)(alpha + beta n/P) (reduce-scatter + all-gather
 *                                                      of the n/g shard)
 *   inter (rdb, G = 2^j):  log2 G (alpha + beta n/g)
 *   intra all-gather:      (g-1)(alpha + beta n/g) */
static cs_tick_t hier_formula(const ab_t *ab, int g, int G, int64_t n, int rdb)
{
    cs_tick_t t = 2 * (g - 1) * T(ab, n / g);
    if (rdb)
        t += ceil_log2(G) * T(ab, n / g);
    else
        t += 2 * (G - 1) * T(ab, n / ((int64_t)g * G));
    return t;
}

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
                        cs_tick_t got = timed(P, &ABS[k], "allreduce", "hierarchical", n, 0, opts,
                                              MODES[(q + k) % 2]);
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
            cs_tick_t got = timed(P, &ABS[0], "allreduce", "hierarchical", n, 0, NULL, MODES[mi]);
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

/* ==== the Cell paper's structural numbers (16 SPEs, chips 0-7 and 8-15) ==== */

static int crossing(int r, int s) { return (r < 8) != (s < 8); }

/* Data messages (non-empty sends) between the two chips in the program. */
static int bif_messages(const cs_program_t *p)
{
    int c = 0;
    for (int32_t o = 0; o < cs_program_nops(p); o++) {
        const cs_op_t *op = cs_program_op(p, o);
        if (op->kind == CS_OP_SEND && op->bytes > 0 && crossing(op->rank, op->peer))
            c++;
    }
    return c;
}

static cs_program_t *build16(const char *coll, const char *algo, int64_t bytes, const char *opts,
                             const cs_coll_hints_t *hints)
{
    cs_program_t *p;
    h_run_t r;
    const cs_coll_algo_t *a;
    cs_coll_kind_t k;
    cs_error_t err;
    cr_assert_eq(cs_coll_parse(coll, &k, &err), CS_OK);
    cr_assert_eq(cs_coll_find(k, algo, &a, &err), CS_OK, "%s", err.msg);
    r = h_run_algo("alphabeta:topo=complete,p=16", a, 16, bytes, 0, opts, CS_NET_PACKET, 1, hints);
    cr_assert_eq(r.rc, CS_OK, "%s/%s %s: %s", coll, algo, opts ? opts : "", r.err.msg);
    p = r.prog;
    r.prog = NULL;
    h_done(&r);
    return p;
}

/* reference §3.2 / §6 case 21: rdb 16, hybrid-2-8 8, hybrid-3-4 4,
 * hybrid-4-2 2, gather + broadcast 2 BIF data messages. */
Test(papers, cell_hybrid_allgather_bif_messages)
{
    static const int want[] = {0, 16, 8, 4, 2, 2}; /* by x */
    for (int x = 1; x <= 5; x++) {
        char opts[16];
        snprintf(opts, sizeof opts, "x=%d", x);
        cs_program_t *p = build16("allgather", "hybrid", 1024, opts, NULL);
        cr_expect_eq(bif_messages(p), want[x], "hybrid x=%d: %d BIF messages", x, bif_messages(p));
        cs_program_free(p);
    }
    /* the paper's names hybrid-x-y as options */
    {
        cs_program_t *p = build16("allgather", "hybrid", 1024, "x=3,y=4", NULL);
        cr_expect_eq(bif_messages(p), 4);
        cs_program_free(p);
        p = build16("allgather", "hybrid", 1024, "y=2", NULL);
        cr_expect_eq(bif_messages(p), 2);
        cs_program_free(p);
        p = build16("allgather", "hybrid", 1024, NULL, NULL); /* default: hybrid-3-4 */
        cr_expect_eq(bif_messages(p), 4);
        cs_program_free(p);
    }
}

/* reference §3.2 Fig. 6: after three gather rounds of hybrid-4-2, SPE 0
 * holds blocks 0-7 and SPE 8 blocks 8-15; round 4 swaps exactly those. */
Test(papers, cell_hybrid_4_2_round_4_swaps_the_chip_halves)
{
    const int64_t m = 100;
    cs_program_t *p = build16("allgather", "hybrid", m, "x=4", NULL);
    int seen = 0;
    for (int32_t o = 0; o < cs_program_nops(p); o++) {
        const cs_op_t *op = cs_program_op(p, o);
        const cs_data_t *d = cs_program_data(p, o);
        if (op->kind != CS_OP_SEND || !crossing(op->rank, op->peer))
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
        cs_program_t *p = build16("allreduce", "hybrid-a", 4096, opts, NULL);
        cr_expect_eq(bif_messages(p), wa[x], "HybridA x=%d: %d", x, bif_messages(p));
        cs_program_free(p);
        p = build16("allreduce", "hybrid-b", 4096, opts, NULL);
        cr_expect_eq(bif_messages(p), wb[x], "HybridB x=%d: %d", x, bif_messages(p));
        cs_program_free(p);
    }
}

/* The peers of a rank's non-empty sends, in program order. */
static int send_peers(const cs_program_t *p, int rank, int *out, int max)
{
    int n = 0;
    for (int32_t o = 0; o < cs_program_nops(p); o++) {
        const cs_op_t *op = cs_program_op(p, o);
        if (op->kind == CS_OP_SEND && op->rank == rank && op->bytes > 0 && n < max)
            out[n++] = op->peer;
    }
    return n;
}

/* reference §6 case 44: HybridA-3-4 reduces to {0, 4, 8, 12} in rounds 1-2,
 * round 3 is 0<->4 and 8<->12, round 4 is 0<->8 and 4<->12 (the BIF), then
 * each leader broadcasts to its group of 4 (two rounds: to +2, then +1 while
 * +2 serves +3: the gather tree backwards). */
Test(papers, cell_hybrid_a_3_4_rounds_have_the_papers_partners)
{
    static const int want[4][4] = {{4, 8, 2, 1}, {0, 12, 6, 5}, {12, 0, 10, 9}, {8, 4, 14, 13}};
    cs_program_t *p = build16("allreduce", "hybrid-a", 4096, "x=3", NULL);
    for (int l = 0; l < 4; l++) {
        int got[8], n = send_peers(p, 4 * l, got, 8);
        cr_assert_eq(n, 4, "leader %d sends %d messages", 4 * l, n);
        for (int i = 0; i < 4; i++)
            cr_expect_eq(got[i], want[l][i], "leader %d, send %d: to %d", 4 * l, i, got[i]);
    }
    /* members send once (to their parent) and leaves receive the result */
    {
        int got[8];
        cr_expect_eq(send_peers(p, 1, got, 8), 1);
        cr_expect_eq(got[0], 0);
        cr_expect_eq(send_peers(p, 2, got, 8), 2); /* 3's sum to 0, then the result to 3 */
        cr_expect_eq(got[0], 0);
        cr_expect_eq(got[1], 3);
    }
    cs_program_free(p);
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
            cs_program_t *p = build16("broadcast", algos[i], 5000, NULL, hint ? &h : NULL);
            cr_expect_eq(bif_messages(p), 1, "%s%s: %d BIF messages", algos[i],
                         hint ? " (chip hint)" : "", bif_messages(p));
            for (int32_t o = 0; o < cs_program_nops(p); o++) {
                const cs_op_t *op = cs_program_op(p, o);
                if (op->kind == CS_OP_SEND && crossing(op->rank, op->peer)) {
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
        cs_program_t *p = build16("broadcast", opt ? "opt" : "simple", 64, NULL, NULL);
        int32_t sends[8];
        int n = 0;
        int peers[8], np = send_peers(p, 0, peers, 8);
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
                after_prev |= d[j].op == sends[i - 1] && d[j].kind == CS_DEP_AFTER;
            cr_expect_eq(after_prev, opt, "%s: send %d %s the previous one", opt ? "opt" : "simple",
                         i, after_prev ? "waits for" : "does not wait for");
        }
        cs_program_free(p);
    }
}

/* ==== empty cases ============================================================ */

/* Zero-length pieces are not sent: a 0-byte collective emits no op and ends
 * at 0 (the barrier still exchanges its 0-byte tokens), and one rank never
 * talks to anyone. */
Test(papers, zero_bytes_and_one_rank_emit_nothing)
{
    /* the algorithms of the three machine papers (Cell, CNS-1, Groq
     * hierarchical), wherever their collective's file lists them */
    static const struct { cs_coll_kind_t k; const char *name; } papers[] = {
        {CS_COLL_BROADCAST, "opt"},         {CS_COLL_BROADCAST, "simple"},
        {CS_COLL_BROADCAST, "two-to-all"},  {CS_COLL_BROADCAST, "two-phase"},
        {CS_COLL_BROADCAST, "hybrid-segmented"}, {CS_COLL_REDUCE, "mailbox"},
        {CS_COLL_ALLREDUCE, "rdb-barrier"}, {CS_COLL_ALLREDUCE, "hybrid-a"},
        {CS_COLL_ALLREDUCE, "hybrid-b"},    {CS_COLL_ALLREDUCE, "hierarchical"},
        {CS_COLL_ALLGATHER, "hybrid"},      {CS_COLL_ALLGATHER, "cns-ring"},
        {CS_COLL_ALLGATHER, "cns-two-way"}, {CS_COLL_BARRIER, "mailbox"}};
    int seen = 0;
    for (size_t i = 0; i < sizeof papers / sizeof *papers; i++) {
        const cs_coll_algo_t *a = NULL;
        cs_error_t ferr = {0};
        int listed = cs_coll_find(papers[i].k, papers[i].name, &a, &ferr) == CS_OK;
        cr_assert(listed, "%s/%s is not in the registry", cs_coll_name(papers[i].k),
                  papers[i].name);
        for (int P = 1; P <= 16; P += 15)
            for (int64_t bytes = 0; bytes <= 100; bytes += 100) {
                h_run_t r = h_run_algo("alphabeta:topo=complete,p=16", a, P, bytes, P - 1, NULL,
                                       CS_NET_FLUID, 1, NULL);
                int empty = P == 1 || (bytes == 0 && a->kind != CS_COLL_BARRIER);
                cr_assert_eq(r.rc, CS_OK, "%s/%s P=%d bytes=%lld: %s", cs_coll_name(a->kind),
                             a->name, P, (long long)bytes, r.err.msg);
                if (empty) {
                    cr_expect_eq(cs_program_nops(r.prog), 0, "%s/%s P=%d bytes=%lld: %d ops",
                                 cs_coll_name(a->kind), a->name, P, (long long)bytes,
                                 cs_program_nops(r.prog));
                    cr_expect_eq(r.finish, 0);
                } else {
                    cr_expect_gt(cs_program_nops(r.prog), 0);
                }
                h_done(&r);
            }
        seen++;
    }
    cr_assert_eq(seen, 14);
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
            cr_expect_eq(r.finish, big * T(&ABS[0], 1000), "two-to-all split %d root %d", a,
                         root);
            h_done(&r);
            if (a != 8)
                continue;
            r = h_run_algo("alphabeta:topo=complete,p=16,alpha=1us,beta=1ns", opt, 16, 1000, root,
                           NULL, CS_NET_FLUID, 1, &h);
            cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
            cr_expect_eq(r.finish, 4 * T(&ABS[0], 1000), "opt with chips, root %d", root);
            h_done(&r);
        }
}

/* ==== options ================================================================ */

static void refused(const char *coll, const char *algo, int P, const char *opts, int code)
{
    h_run_t r = h_run("alphabeta:topo=complete,p=100", coll, algo, P, 100, 0, opts, CS_NET_PACKET,
                      0);
    cr_expect_neq(r.rc, CS_OK, "%s/%s P=%d %s was accepted", coll, algo, P, opts);
    if (code)
        cr_expect_eq(r.rc, code, "%s/%s %s: %s", coll, algo, opts, r.err.msg);
    cr_expect(r.err.msg[0], "%s/%s %s: no message", coll, algo, opts);
    h_done(&r);
}

Test(papers, options_are_checked)
{
    refused("allgather", "hybrid", 16, "y=3", CS_ERR_RANGE);
    refused("allgather", "hybrid", 16, "y=32", CS_ERR_RANGE);
    refused("allgather", "hybrid", 16, "x=0", CS_ERR_RANGE);
    refused("allgather", "hybrid", 16, "x=6", CS_ERR_RANGE);
    refused("allgather", "hybrid", 16, "x=2,y=4", CS_ERR_RANGE);
    refused("allgather", "hybrid", 12, "x=1", CS_ERR_RANGE);
    refused("allreduce", "hybrid-a", 12, "x=1", CS_ERR_RANGE);
    refused("allreduce", "hybrid-b", 16, "y=5", CS_ERR_RANGE);
    refused("allgather", "hybrid", 16, "k=2", 0);
    refused("allreduce", "rdb-barrier", 16, "every=0", CS_ERR_RANGE);
    refused("reduce", "mailbox", 16, "every=-1", 0);
    refused("barrier", "mailbox", 16, "fanin=1", CS_ERR_RANGE);
    refused("broadcast", "two-to-all", 16, "opt=2", CS_ERR_RANGE);
    refused("broadcast", "hybrid-segmented", 16, "opt=yes", 0);
    refused("broadcast", "opt", 16, "opt=1", 0); /* no options at all */
    refused("allgather", "cns-ring", 16, "stream=2", CS_ERR_RANGE);
    refused("allgather", "cns-two-way", 16, "offset=2s", CS_ERR_RANGE);
    refused("allgather", "cns-two-way", 16, "offset=fast", 0);
    refused("allreduce", "hierarchical", 16, "g=0", CS_ERR_RANGE);
    refused("allreduce", "hierarchical", 16, "g=17", CS_ERR_RANGE);
    refused("allreduce", "hierarchical", 16, "inter=ring", 0);
    refused("allreduce", "hierarchical", 16, "par=3", CS_ERR_RANGE);
    /* and the valid forms are accepted */
    {
        static const char *const ok[][3] = {
            {"allgather", "hybrid", "x=3,y=4"}, {"allgather", "hybrid", "y=16"},
            {"allreduce", "hybrid-b", "x=5"},   {"allgather", "cns-two-way", "offset=20ns"},
            {"allreduce", "hierarchical", "g=16,inter=rdb,par=1"}};
        for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
            h_run_t r = h_run("alphabeta:topo=complete,p=16", ok[i][0], ok[i][1], 16, 100, 0,
                              ok[i][2], CS_NET_PACKET, 1);
            cr_expect_eq(r.rc, CS_OK, "%s/%s %s: %s", ok[i][0], ok[i][1], ok[i][2], r.err.msg);
            h_done(&r);
        }
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

/* ==== --validate ============================================================= */

typedef struct vcase {
    const char *coll, *algo, *opts;
} vcase_t;

static const vcase_t VCASES[] = {
    {"broadcast", "opt", NULL},
    {"broadcast", "simple", NULL},
    {"broadcast", "two-to-all", NULL},
    {"broadcast", "two-to-all", "opt=0"},
    {"broadcast", "two-phase", NULL},
    {"broadcast", "two-phase", "opt=0"},
    {"broadcast", "hybrid-segmented", NULL},
    {"broadcast", "hybrid-segmented", "opt=0"},
    {"reduce", "mailbox", NULL},
    {"reduce", "mailbox", "every=2"},
    {"allreduce", "rdb-barrier", NULL},
    {"allreduce", "rdb-barrier", "every=1"},
    {"allreduce", "hybrid-a", NULL},
    {"allreduce", "hybrid-a", "x=2"},
    {"allreduce", "hybrid-a", "x=3"},
    {"allreduce", "hybrid-b", NULL},
    {"allreduce", "hybrid-b", "x=2"},
    {"allreduce", "hybrid-b", "y=1"},
    {"allreduce", "hierarchical", NULL},
    {"allreduce", "hierarchical", "g=3"},
    {"allreduce", "hierarchical", "g=4,inter=rdb"},
    {"allreduce", "hierarchical", "par=1"},
    {"allgather", "hybrid", NULL},
    {"allgather", "hybrid", "x=2"},
    {"allgather", "hybrid", "y=1"},
    {"allgather", "cns-ring", NULL},
    {"allgather", "cns-ring", "stream=0"},
    {"allgather", "cns-two-way", NULL},
    {"allgather", "cns-two-way", "offset=0,stream=0"},
    {"barrier", "mailbox", NULL},
    {"barrier", "mailbox", "fanin=2"},
    {"barrier", "mailbox", "fanin=7"},
};
#define NV ((int)(sizeof VCASES / sizeof *VCASES))

static const int VPS[] = {1, 2, 3, 5, 7, 8, 13, 16, 64, 100};
#define NVPS ((int)(sizeof VPS / sizeof *VPS))

/* Options out of range for P ranks are skipped (g > P, x > ceil(log2 P)+1). */
static int applicable(const vcase_t *c, int P)
{
    int g, x, lg = 0;
    while ((1 << lg) < P)
        lg++;
    if (c->opts && sscanf(c->opts, "g=%d", &g) == 1 && g > P)
        return 0;
    if (c->opts && sscanf(c->opts, "x=%d", &x) == 1 && x > lg + 1)
        return 0;
    return 1;
}

static int validate_case(const vcase_t *c, const cs_coll_hints_t *hints, int P, int64_t bytes,
                         int root, cs_net_mode_t mode)
{
    const cs_coll_algo_t *a;
    cs_coll_kind_t k;
    cs_error_t err;
    cr_assert_eq(cs_coll_parse(c->coll, &k, &err), CS_OK);
    cr_assert_eq(cs_coll_find(k, c->algo, &a, &err), CS_OK, "%s", err.msg);
    h_run_t r = h_run_algo("alphabeta:topo=complete,p=100", a, P, bytes, root, c->opts, mode, 1,
                           hints);
    cr_expect_eq(r.rc, CS_OK, "%s/%s %s P=%d bytes=%lld root=%d %s%s: %s", c->coll, c->algo,
                 c->opts ? c->opts : "", P, (long long)bytes, root, cs_net_mode_name(mode),
                 hints ? " (hints)" : "", r.err.msg);
    h_done(&r);
    return 1;
}

Test(papers, validate_every_algorithm_over_P_sizes_and_roots, .timeout = 600)
{
    int runs = 0;
    for (int i = 0; i < NV; i++)
        for (int pi = 0; pi < NVPS; pi++) {
            int P = VPS[pi];
            int64_t sizes[] = {0, 1, P - 1 > 1 ? P - 1 : 2, 1000, 7 * (int64_t)P + 1};
            int roots[3], nr = roots_of(P, roots);
            int barrier = !strcmp(VCASES[i].coll, "barrier");
            if (!applicable(&VCASES[i], P))
                continue;
            for (int si = 0; si < (barrier ? 2 : 5); si++)
                for (int ri = 0; ri < (strcmp(VCASES[i].coll, "broadcast") &&
                                               strcmp(VCASES[i].coll, "reduce")
                                           ? 1
                                           : nr);
                     ri++)
                    runs += validate_case(&VCASES[i], NULL, P, sizes[si], roots[ri],
                                          (si + ri) % 2 ? CS_NET_FLUID : CS_NET_PACKET);
        }
    printf("papers: %d validated runs\n", runs);
    cr_assert_gt(runs, 1000);
}

/* With hierarchy hints: the blade's two chips, interleaved groups
 * (rank r in group r % 3), uneven groups, one group, and a ring hint. */
Test(papers, validate_with_hints, .timeout = 600)
{
    int runs = 0;
    for (int pi = 0; pi < NVPS; pi++) {
        int P = VPS[pi];
        int32_t chips[100], inter[100], uneven[100], one[100], ring[100];
        cs_coll_hints_t hs[4];
        for (int r = 0; r < P; r++) {
            chips[r] = r < (P + 1) / 2 ? 0 : 1;
            inter[r] = r % 3;
            uneven[r] = r < 1 ? 0 : r < 4 ? 1 : 2 + (r % 2);
            one[r] = 0;
            ring[r] = (int32_t)((int64_t)(P - 1 - r) * (P % 3 ? 3 : 7) % P);
        }
        memset(hs, 0, sizeof hs);
        hs[0].group = chips;
        hs[0].ngroups = 2;
        hs[1].group = inter;
        hs[1].ngroups = 3;
        hs[2].group = uneven;
        hs[2].ngroups = 4; /* groups 2, 3 may be empty for small P */
        hs[3].group = one;
        hs[3].ngroups = 1;
        hs[3].ring = ring;
        for (int i = 0; i < NV; i++)
            for (int hi = 0; hi < 4; hi++) {
                int roots[3], nr = roots_of(P, roots);
                if (!applicable(&VCASES[i], P))
                    continue;
                for (int ri = 0; ri < nr; ri++)
                    runs += validate_case(&VCASES[i], &hs[hi], P,
                                          strcmp(VCASES[i].coll, "barrier") ? 7 * P + 3 : 1,
                                          roots[ri], CS_NET_PACKET);
            }
    }
    printf("papers: %d validated runs with hints\n", runs);
    cr_assert_gt(runs, 1000);
}
