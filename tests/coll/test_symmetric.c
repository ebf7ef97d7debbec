/*
 * test_symmetric.c - the lecture's and the generic MPI collectives without
 * a root, with the thesis's butterfly and the Groq gateway all-reduce:
 * allgather, reduce-scatter, allreduce, barrier, alltoall (src/coll/
 * allgather.c, reduce_scatter.c, allreduce.c, barrier.c, alltoall.c; the
 * tests are grouped by origin, the sources by collective).
 *
 *   - simulated times on alphabeta:topo=complete equal the alpha-beta
 *     formulas (lecture §8.7, §8.9, shared/reference/alpha-beta.md, and the
 *     textbook costs of the generic algorithms), computed here over sweeps of
 *     P, m or n, alpha and beta, in both network modes;
 *   - on alphabeta:topo=line the ring allgather in the natural order has no
 *     congestion (the wrap message runs on the reverse channels), and the
 *     same ring in a random order congests and is slower;
 *   - every algorithm validates (--validate) for P in {1, 2, 3, 5, 7, 8, 13,
 *     16, 64, 100} and sizes including 0, 1, sizes below P and sizes not
 *     divisible by P, with options and with a permuted ring;
 *   - deliberately broken variants are caught by the validator; options
 *     out of range are rejected with the key's name.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "topo/topo.h"

/* alpha in ns and beta in ps per byte: with the 1 ps tick both are whole
 * ticks (alpha_ns * 1000 and beta_ps ticks). */
typedef struct ab {
    int64_t alpha_ns, beta_ps;
} ab_t;
static const ab_t ABS[] = {{1000, 1000}, {3000, 2000}, {500, 5000}, {20000, 1000}, {7, 3}};
#define NABS (sizeof ABS / sizeof *ABS)
static const cs_net_mode_t MODES[] = {CS_NET_PACKET, CS_NET_FLUID};

static int64_t A(const ab_t *p) { return p->alpha_ns * 1000; } /* ticks */
static int64_t B(const ab_t *p) { return p->beta_ps; }         /* ticks per byte */

static void spec_of(char *buf, size_t len, const char *topo, int P, const ab_t *p)
{
    snprintf(buf, len, "alphabeta:topo=%s,p=%d,alpha=%lldns,beta=%lldps", topo, P,
             (long long)p->alpha_ns, (long long)p->beta_ps);
}

static int ceil_log2(int P)
{
    int k = 0;
    while ((1 << k) < P)
        k++;
    return k;
}

/* The formula: `expect` ticks for coll/algo at P, size, on a complete
 * network with parameters p, in both modes. */
static void expect_time(const char *coll, const char *algo, const char *opts, int P, int64_t size,
                        const ab_t *p, int64_t expect)
{
    char spec[200];
    spec_of(spec, sizeof spec, "complete", P, p);
    for (size_t mi = 0; mi < 2; mi++) {
        h_run_t r = h_run(spec, coll, algo, P, size, 0, opts, MODES[mi], 0);
        cr_assert_eq(r.rc, CS_OK, "%s/%s P=%d size=%lld: %s", coll, algo, P, (long long)size,
                     r.err.msg);
        cr_expect_eq(r.finish, expect,
                     "%s/%s%s%s P=%d size=%lld alpha=%lldns beta=%lldps %s: %lld ticks, formula "
                     "%lld",
                     coll, algo, opts ? " " : "", opts ? opts : "", P, (long long)size,
                     (long long)p->alpha_ns, (long long)p->beta_ps, cs_net_mode_name(MODES[mi]),
                     (long long)r.finish, (long long)expect);
        h_done(&r);
    }
}

/* ---- the lecture's formulas ------------------------------------------------ */

Test(symmetric_time, bucket_allgather_is_alpha_plus_beta_m_times_P_minus_1)
{
    static const int Ps[] = {1, 2, 3, 5, 8, 13, 16};
    static const int64_t ms[] = {1, 100, 4096, 4097, 10000};
    for (size_t a = 0; a < NABS; a++)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
            for (size_t j = 0; j < sizeof ms / sizeof *ms; j++)
                expect_time("allgather", "ring", NULL, Ps[i], ms[j], &ABS[a],
                            (A(&ABS[a]) + B(&ABS[a]) * ms[j]) * (Ps[i] - 1));
}

Test(symmetric_time, ring_is_the_default_allgather_and_reduce_scatter)
{
    const cs_coll_algo_t *a;
    cs_error_t err;
    cr_assert_eq(cs_coll_find(CS_COLL_ALLGATHER, NULL, &a, &err), CS_OK);
    cr_expect_str_eq(a->name, "ring");
    cr_assert_eq(cs_coll_find(CS_COLL_REDUCE_SCATTER, NULL, &a, &err), CS_OK);
    cr_expect_str_eq(a->name, "ring");
    cr_assert_eq(cs_coll_find(CS_COLL_ALLREDUCE, NULL, &a, &err), CS_OK);
    cr_expect_str_eq(a->name, "ring");
    cr_assert_eq(cs_coll_find(CS_COLL_BARRIER, NULL, &a, &err), CS_OK);
    cr_expect_str_eq(a->name, "dissemination");
    cr_assert_eq(cs_coll_find(CS_COLL_ALLTOALL, NULL, &a, &err), CS_OK);
    cr_expect_str_eq(a->name, "pairwise");
}

Test(symmetric_time, ring_reduce_scatter_is_alpha_plus_beta_m_times_P_minus_1)
{
    static const int Ps[] = {1, 2, 3, 5, 8, 13, 16};
    static const int64_t ms[] = {1, 100, 4097, 10000};
    for (size_t a = 0; a < NABS; a++)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
            for (size_t j = 0; j < sizeof ms / sizeof *ms; j++)
                expect_time("reduce-scatter", "ring", NULL, Ps[i], ms[j], &ABS[a],
                            (A(&ABS[a]) + B(&ABS[a]) * ms[j]) * (Ps[i] - 1));
}

/* With reduce=R ps per byte, each of the P-1 steps also adds m bytes. */
Test(symmetric_time, ring_reduce_scatter_pays_the_reduction_per_step)
{
    static const int Ps[] = {2, 5, 8};
    for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++) {
        char spec[200];
        int P = Ps[i];
        int64_t m = 1000, expect = (1000000 + 1000 * m + 3 * m) * (P - 1);
        snprintf(spec, sizeof spec, "alphabeta:topo=complete,p=%d,alpha=1us,beta=1ns,reduce=3ps",
                 P);
        for (size_t mi = 0; mi < 2; mi++) {
            h_run_t r = h_run(spec, "reduce-scatter", "ring", P, m, 0, NULL, MODES[mi], 0);
            cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
            cr_expect_eq(r.finish, expect, "P=%d %s: %lld, formula %lld", P,
                         cs_net_mode_name(MODES[mi]), (long long)r.finish, (long long)expect);
            h_done(&r);
        }
    }
}

Test(symmetric_time, ring_allreduce_is_2_P_minus_1_alpha_plus_beta_n_over_P)
{
    static const int Ps[] = {1, 2, 3, 5, 8, 13, 16};
    static const int64_t qs[] = {1, 7, 100, 4096, 5000}; /* n = q P */
    for (size_t a = 0; a < NABS; a++)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
            for (size_t j = 0; j < sizeof qs / sizeof *qs; j++) {
                int P = Ps[i];
                int64_t n = qs[j] * P;
                expect_time("allreduce", "ring", NULL, P, n, &ABS[a],
                            2 * (P - 1) * (A(&ABS[a]) + B(&ABS[a]) * n / P));
            }
}

Test(symmetric_time, dissemination_barrier_is_ceil_log2_P_rounds_of_one_byte)
{
    for (size_t a = 0; a < NABS; a++)
        for (int P = 1; P <= 33; P++)
            expect_time("barrier", "dissemination", NULL, P, 0, &ABS[a],
                        ceil_log2(P) * (A(&ABS[a]) + B(&ABS[a])));
}

/* ---- textbook costs of the generic algorithms ------------------------------ */

Test(symmetric_time, recursive_doubling_and_halving_on_powers_of_two)
{
    static const int Ps[] = {2, 4, 8, 16, 32};
    static const int64_t sizes[] = {1, 96, 4096, 6000};
    for (size_t a = 0; a < NABS; a += 2)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
            for (size_t j = 0; j < sizeof sizes / sizeof *sizes; j++) {
                const ab_t *p = &ABS[a];
                int P = Ps[i], L = ceil_log2(P);
                int64_t m = sizes[j], n = sizes[j];
                /* allgather rdb and reduce-scatter halving: alpha log P + beta m (P-1) */
                expect_time("allgather", "rdb", NULL, P, m, p, A(p) * L + B(p) * m * (P - 1));
                expect_time("reduce-scatter", "recursive-halving", NULL, P, m, p,
                            A(p) * L + B(p) * m * (P - 1));
                /* allgather gather + broadcast: the gather as above, then
                 * log P rounds of the whole P m buffer */
                expect_time("allgather", "gather-bcast", NULL, P, m, p,
                            A(p) * L + B(p) * m * (P - 1) + (A(p) + B(p) * m * P) * L);
                /* allreduce rdb and reduce + broadcast on the whole vector */
                expect_time("allreduce", "rdb", NULL, P, n, p, (A(p) + B(p) * n) * L);
                expect_time("allreduce", "reduce-bcast", NULL, P, n, p, 2 * (A(p) + B(p) * n) * L);
                expect_time("allreduce", "butterfly", NULL, P, n, p, (A(p) + B(p) * n) * L);
                /* Rabenseifner: 2 alpha log P + 2 beta n (P-1)/P when P | n */
                if (n % P == 0)
                    expect_time("allreduce", "rabenseifner", NULL, P, n, p,
                                2 * A(p) * L + 2 * B(p) * n / P * (P - 1));
                expect_time("barrier", "rdb", NULL, P, 0, p, (A(p) + B(p)) * L);
                expect_time("barrier", "tree", NULL, P, 0, p, 2 * (A(p) + B(p)) * L);
            }
}

/* P not a power of two, Pp = 2^floor(log2 P), e = P - Pp: the extra ranks
 * (odd ranks below 2e) hand their data to their even neighbour first and
 * get the result back at the end; in the doubling/halving round of
 * distance d the group holding virtual ranks [0, d) speaks for d + min(d, e)
 * real ranks. */
static int64_t fold_rounds(int P, int64_t a, int64_t bm)
{
    int Pp = 1;
    int64_t t = 0;
    while (2 * Pp <= P)
        Pp *= 2;
    for (int d = 1; d < Pp; d *= 2)
        t += a + bm * (d + (d < P - Pp ? d : P - Pp));
    return t;
}

Test(symmetric_time, folding_for_any_P)
{
    static const int Ps[] = {3, 5, 6, 7, 12, 13, 24, 100};
    for (size_t a = 0; a < NABS; a += 2)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++) {
            const ab_t *p = &ABS[a];
            int P = Ps[i], Pp = 1, Lf = 0;
            int64_t m = 1000, n = 8 * 1000;
            while (2 * Pp <= P) {
                Pp *= 2;
                Lf++;
            }
            /* allgather: fold one block in, return the whole buffer; the
             * reduce-scatter is the dual: fold the whole buffer in, return
             * one block */
            int64_t body = fold_rounds(P, A(p), B(p) * m);
            int64_t ends = (A(p) + B(p) * m) + (A(p) + B(p) * m * P);
            expect_time("allgather", "rdb", NULL, P, m, p, ends + body);
            expect_time("reduce-scatter", "recursive-halving", NULL, P, m, p, ends + body);
            /* whole vectors: two more messages of n bytes */
            expect_time("allreduce", "rdb", NULL, P, n, p, (Lf + 2) * (A(p) + B(p) * n));
            expect_time("barrier", "rdb", NULL, P, 0, p, (Lf + 2) * (A(p) + B(p)));
            /* Rabenseifner over Pp pieces (Pp divides n = 8000 for Pp <= 64).
             * The formula is the critical path through the folded pair; the
             * ranks outside the fold start early, and their messages may
             * hold a receive port that the critical path needs a little
             * longer (P = 5 with alpha = 7 ns, beta = 3 ps: 1000 ticks), so
             * the check allows up to one piece message more. */
            {
                int64_t f = 2 * (A(p) + B(p) * n) + 2 * Lf * A(p) + 2 * B(p) * n / Pp * (Pp - 1);
                char spec[200];
                spec_of(spec, sizeof spec, "complete", P, p);
                for (size_t mi = 0; mi < 2; mi++) {
                    cs_tick_t t = h_time(spec, "allreduce", "rabenseifner", P, n, 0, NULL,
                                         MODES[mi]);
                    cr_expect(t >= f && t <= f + A(p) + B(p) * n / Pp,
                              "rabenseifner P=%d: %lld ticks, formula %lld", P, (long long)t,
                              (long long)f);
                }
            }
            /* binomial trees: ceil(log2 P) rounds each way, any P */
            expect_time("allreduce", "reduce-bcast", NULL, P, n, p,
                        2 * ceil_log2(P) * (A(p) + B(p) * n));
            expect_time("barrier", "tree", NULL, P, 0, p, 2 * ceil_log2(P) * (A(p) + B(p)));
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
    for (size_t a = 0; a < NABS; a += 2)
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            const ab_t *p = &ABS[a];
            int P = cases[c].P, G = cases[c].G, Pg = 1, L = 0, cmax;
            int64_t n = 999;
            char opts[32];
            while (Pg * G <= P) {
                Pg *= G;
                L++;
            }
            cmax = (P - Pg + Pg - 1) / Pg;
            snprintf(opts, sizeof opts, "g=%d", G);
            expect_time("allreduce", "butterfly", opts, P, n, p,
                        (2 * cmax + L * (G - 1)) * (A(p) + B(p) * n));
        }
}

/* Bruck allgather: ceil(log2 P) rounds, the last one carrying P - 2^(L-1)
 * blocks; the final local rotation is free (a message to oneself is a local
 * copy): the textbook ceil(log2 P) alpha + beta m (P-1). */
Test(symmetric_time, bruck_allgather_any_P)
{
    static const int Ps[] = {2, 3, 5, 7, 8, 13, 16};
    static const int64_t ms[] = {1, 100, 4097};
    for (size_t a = 0; a < NABS; a += 2)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
            for (size_t j = 0; j < sizeof ms / sizeof *ms; j++) {
                const ab_t *p = &ABS[a];
                int P = Ps[i];
                int64_t m = ms[j];
                expect_time("allgather", "bruck", NULL, P, m, p,
                            A(p) * ceil_log2(P) + B(p) * m * (P - 1));
            }
}

Test(symmetric_time, butterfly_group_size_G)
{
    /* P = G^L: L rounds of G-1 whole-vector sends (direct) or of a ring
     * allreduce among G (2(G-1)(alpha + beta n/G), G | n) */
    static const struct { int G, L; } cases[] = {{3, 1}, {3, 2}, {3, 3}, {4, 2}, {5, 2}, {2, 4}};
    static const int64_t qs[] = {1, 50, 4096};
    for (size_t a = 0; a < NABS; a += 2)
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
            for (size_t j = 0; j < sizeof qs / sizeof *qs; j++) {
                const ab_t *p = &ABS[a];
                int G = cases[c].G, L = cases[c].L, P = 1;
                int64_t n = qs[j] * G;
                char opts[64];
                for (int l = 0; l < L; l++)
                    P *= G;
                snprintf(opts, sizeof opts, "g=%d", G);
                expect_time("allreduce", "butterfly", opts, P, n, p,
                            (int64_t)L * (G - 1) * (A(p) + B(p) * n));
                snprintf(opts, sizeof opts, "g=%d,inner=ring", G);
                expect_time("allreduce", "butterfly", opts, P, n, p,
                            (int64_t)L * 2 * (G - 1) * (A(p) + B(p) * n / G));
            }
}

Test(symmetric_time, pairwise_reduce_scatter_and_alltoall)
{
    static const int Ps[] = {2, 3, 4, 5, 6, 7, 8, 12, 13, 16};
    static const int64_t ms[] = {1, 333, 4097};
    for (size_t a = 0; a < NABS; a += 2)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
            for (size_t j = 0; j < sizeof ms / sizeof *ms; j++) {
                const ab_t *p = &ABS[a];
                int P = Ps[i];
                int64_t m = ms[j], step = A(p) + B(p) * m;
                expect_time("reduce-scatter", "pairwise", NULL, P, m, p, step * (P - 1));
                expect_time("alltoall", "pairwise", NULL, P, m, p, step * (P - 1));
            }
}

/* Flat alltoall posts everything at once; the ports then serve one message
 * per node at a time, so it takes at least the P-1 steps of the staggered
 * order, and the greedy port arbitration may need a few more. */
Test(symmetric_time, flat_alltoall_is_at_least_P_minus_1_steps)
{
    static const int Ps[] = {2, 3, 4, 5, 8, 13, 16, 32};
    for (size_t a = 0; a < NABS; a += 2)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++) {
            char spec[200];
            int P = Ps[i];
            int64_t m = 1000, step = A(&ABS[a]) + B(&ABS[a]) * m;
            spec_of(spec, sizeof spec, "complete", P, &ABS[a]);
            for (size_t mi = 0; mi < 2; mi++) {
                cs_tick_t t = h_time(spec, "alltoall", "flat", P, m, 0, NULL, MODES[mi]);
                cr_expect_geq(t, step * (P - 1), "P=%d: %lld", P, (long long)t);
                cr_expect_leq(t, step * 2 * (P - 1), "P=%d: %lld", P, (long long)t);
                if (P <= 3)
                    cr_expect_eq(t, step * (P - 1), "P=%d: %lld", P, (long long)t);
            }
        }
}

/* Bruck alltoall: ceil(log2 P) network messages per rank, round k carrying
 * the blocks whose slot index has bit k set; everything else it emits is a
 * local copy (a message to itself). */
Test(symmetric_time, bruck_alltoall_sends_ceil_log2_P_network_messages_per_rank)
{
    static const int Ps[] = {2, 3, 5, 8, 13, 16, 64, 100};
    for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++) {
        int P = Ps[i];
        int64_t m = 10, expect_bytes = 0;
        h_run_t r = h_run("alphabeta:topo=complete,p=100", "alltoall", "bruck", P, m, 0, NULL,
                          CS_NET_PACKET, 1);
        cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
        for (int d = 1; d < P; d *= 2)
            for (int s = 1; s < P; s++)
                expect_bytes += (s & d) ? m : 0;
        for (int rank = 0; rank < P; rank++) {
            int net = 0;
            int64_t bytes = 0;
            for (int32_t op = 0; op < cs_program_nops(r.prog); op++) {
                const cs_op_t *o = cs_program_op(r.prog, op);
                if (o->rank == rank && o->kind == CS_OP_SEND && o->peer != rank) {
                    net++;
                    bytes += o->bytes;
                }
            }
            cr_expect_eq(net, ceil_log2(P), "P=%d rank %d: %d network messages", P, rank, net);
            cr_expect_eq(bytes, expect_bytes, "P=%d rank %d", P, rank);
        }
        h_done(&r);
    }
}

/* Bruck alltoall for P = 2^L on alphabeta: L network rounds of P/2 blocks;
 * its local rotations and packing are messages to oneself, which are free
 * local copies: the textbook L (alpha + beta m P/2). */
Test(symmetric_time, bruck_alltoall_on_powers_of_two)
{
    static const int Ps[] = {4, 8, 16, 32, 64};
    static const int64_t ms[] = {1, 1000, 4097};
    for (size_t a = 0; a < NABS; a += 2)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
            for (size_t j = 0; j < sizeof ms / sizeof *ms; j++) {
                const ab_t *p = &ABS[a];
                int P = Ps[i], L = ceil_log2(P);
                int64_t m = ms[j];
                expect_time("alltoall", "bruck", NULL, P, m, p,
                            L * (A(p) + B(p) * m * (P / 2)));
            }
}

Test(symmetric_time, flat_barrier_is_2_P_minus_1_messages_at_rank_0)
{
    for (size_t a = 0; a < NABS; a++)
        for (int P = 1; P <= 17; P += 2)
            expect_time("barrier", "flat", NULL, P, 0, &ABS[a],
                        2 * (P - 1) * (A(&ABS[a]) + B(&ABS[a])));
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

/* A deterministic random permutation (Fisher-Yates over a 64-bit LCG). */
static void shuffle(int32_t *v, int n, uint64_t *seed)
{
    for (int i = 0; i < n; i++)
        v[i] = i;
    for (int i = n - 1; i > 0; i--) {
        *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
        int j = (int)((*seed >> 33) % (uint64_t)(i + 1));
        int32_t t = v[i];
        v[i] = v[j];
        v[j] = t;
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
            shuffle(ring, P, &seed);
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

/* ---- validation ------------------------------------------------------------ */

typedef struct variant {
    const char *coll, *algo, *opts;
} variant_t;

static const variant_t VARIANTS[] = {
    {"allgather", "ring", NULL},
    {"allgather", "rdb", NULL},
    {"allgather", "bruck", NULL},
    {"allgather", "gather-bcast", NULL},
    {"reduce-scatter", "ring", NULL},
    {"reduce-scatter", "recursive-halving", NULL},
    {"reduce-scatter", "pairwise", NULL},
    {"allreduce", "ring", NULL},
    {"allreduce", "rdb", NULL},
    {"allreduce", "rabenseifner", NULL},
    {"allreduce", "reduce-bcast", NULL},
    {"allreduce", "butterfly", NULL},
    {"allreduce", "butterfly", "g=3"},
    {"allreduce", "butterfly", "g=4,inner=ring"},
    {"allreduce", "butterfly", "g=7,inner=direct"},
    {"allreduce", "butterfly", "g=1000"},
    {"allreduce", "gateway", NULL},
    {"allreduce", "gateway", "g=1"},
    {"allreduce", "gateway", "g=3"},
    {"allreduce", "gateway", "g=1000"},
    {"barrier", "dissemination", NULL},
    {"barrier", "rdb", NULL},
    {"barrier", "flat", NULL},
    {"barrier", "tree", NULL},
    {"alltoall", "pairwise", NULL},
    {"alltoall", "bruck", NULL},
    {"alltoall", "flat", NULL},
};

static const int VPs[] = {1, 2, 3, 5, 7, 8, 13, 16, 64, 100};

static int validate_one(const variant_t *v, int P, int64_t size, cs_net_mode_t mode,
                        const cs_coll_hints_t *h)
{
    const cs_coll_algo_t *a;
    cs_coll_kind_t k;
    cs_error_t err;
    h_run_t r;
    int ok;
    cr_assert_eq(cs_coll_parse(v->coll, &k, &err), CS_OK);
    cr_assert_eq(cs_coll_find(k, v->algo, &a, &err), CS_OK, "%s", err.msg);
    r = h_run_algo("alphabeta:topo=complete,p=100", a, P, size, 0, v->opts, mode, 1, h);
    ok = r.rc == CS_OK;
    cr_expect(ok, "%s/%s%s%s P=%d size=%lld %s%s: %s: %s", v->coll, v->algo, v->opts ? " " : "",
              v->opts ? v->opts : "", P, (long long)size, cs_net_mode_name(mode),
              h ? " (permuted ring)" : "", cs_status_name(r.rc), r.err.msg);
    h_done(&r);
    return ok;
}

Test(symmetric_validate, every_algorithm_any_P_any_size_packet)
{
    int runs = 0, ok = 0;
    for (size_t i = 0; i < sizeof VARIANTS / sizeof *VARIANTS; i++)
        for (size_t pi = 0; pi < sizeof VPs / sizeof *VPs; pi++) {
            int P = VPs[pi];
            int64_t sizes[] = {0, 1, P - 1, 1000, 4097, 7 * (int64_t)P + 1};
            for (size_t si = 0; si < 6; si++) {
                runs++;
                ok += validate_one(&VARIANTS[i], P, sizes[si], CS_NET_PACKET, NULL);
            }
        }
    cr_expect_eq(ok, runs);
    printf("symmetric: %d validated runs, %d ok\n", runs, ok);
}

Test(symmetric_validate, every_algorithm_fluid_and_permuted_ring)
{
    static const int Ps[] = {3, 8, 13, 64};
    int32_t ring[64];
    uint64_t seed = 7;
    cs_coll_hints_t h;
    for (size_t pi = 0; pi < sizeof Ps / sizeof *Ps; pi++) {
        int P = Ps[pi];
        int64_t sizes[] = {1, P - 1, 5 * (int64_t)P + 3};
        shuffle(ring, P, &seed);
        memset(&h, 0, sizeof h);
        h.ring = ring;
        for (size_t i = 0; i < sizeof VARIANTS / sizeof *VARIANTS; i++)
            for (size_t si = 0; si < 3; si++) {
                validate_one(&VARIANTS[i], P, sizes[si], CS_NET_FLUID, NULL);
                validate_one(&VARIANTS[i], P, sizes[si], CS_NET_PACKET, &h);
            }
    }
}

/* ---- the validator catches broken variants ------------------------------- */

/* A ring reduce-scatter whose last step copies instead of adding: the
 * block ends with only two contributions. */
static int broken_rs(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t m = a->bytes;
    (void)err;
    for (int s = 0; s < P - 1; s++) {
        for (int i = 0; i < P; i++) {
            int ps = ((i - s - 1) % P + P) % P, pr = ((i - s - 2) % P + P) % P;
            cs_coll_send(b, i, (i + 1) % P, ps * m, m, 0);
            if (s == P - 2)
                cs_coll_recv(b, i, (i + P - 1) % P, pr * m, m, 0);
            else
                cs_coll_recv_reduce(b, i, (i + P - 1) % P, pr * m, m, 0);
        }
        cs_coll_wait_all(b);
    }
    return CS_OK;
}

/* Bruck allgather without its final local copy: blocks 0..r-1 stay in the
 * scratch half of the extended buffer. */
static int broken_bruck(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t m = a->bytes;
    (void)err;
    for (int d = 1; d < P; d *= 2) {
        int c = d < P - d ? d : P - d;
        for (int r = 0; r < P; r++) {
            cs_coll_send(b, r, (r - d + P) % P, r * m, c * m, 0);
            cs_coll_recv(b, r, (r + d) % P, (r + d) * m, c * m, 0);
        }
        cs_coll_wait_all(b);
    }
    return CS_OK;
}

/* A dissemination barrier that stops one round early. */
static int broken_barrier(cs_coll_builder_t *b, cs_error_t *err)
{
    int P = cs_coll_args(b)->P;
    (void)err;
    for (int d = 1; 2 * d < P; d *= 2) {
        for (int r = 0; r < P; r++) {
            cs_coll_send(b, r, (r + d) % P, 0, 1, 0);
            cs_coll_recv(b, r, (r - d + P) % P, 0, 1, 0);
        }
        cs_coll_wait_all(b);
    }
    return CS_OK;
}

Test(symmetric_validate, broken_variants_are_caught)
{
    static const cs_coll_algo_t rs = {CS_COLL_REDUCE_SCATTER, "broken-ring", "test", "test", "",
                                      NULL, broken_rs};
    static const cs_coll_algo_t ag = {CS_COLL_ALLGATHER, "broken-bruck", "test", "test", "", NULL,
                                      broken_bruck};
    static const cs_coll_algo_t bar = {CS_COLL_BARRIER, "broken-dissemination", "test", "test",
                                       "", NULL, broken_barrier};
    static const int Ps[] = {3, 5, 8};
    for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++) {
        int P = Ps[i];
        h_run_t r = h_run_algo("alphabeta:topo=complete,p=8", &rs, P, 10, 0, NULL, CS_NET_PACKET,
                               1, NULL);
        cr_expect_eq(r.rc, CS_ERR_VALIDATE, "P=%d: %s", P, r.err.msg);
        cr_expect(strstr(r.err.msg, "misses"), "%s", r.err.msg);
        h_done(&r);
        r = h_run_algo("alphabeta:topo=complete,p=8", &ag, P, 10, 0, NULL, CS_NET_PACKET, 1,
                       NULL);
        cr_expect_eq(r.rc, CS_ERR_VALIDATE, "P=%d: %s", P, r.err.msg);
        h_done(&r);
        r = h_run_algo("alphabeta:topo=complete,p=8", &bar, P, 0, 0, NULL, CS_NET_PACKET, 1,
                       NULL);
        cr_expect_eq(r.rc, CS_ERR_VALIDATE, "P=%d: %s", P, r.err.msg);
        cr_expect(strstr(r.err.msg, "barrier"), "%s", r.err.msg);
        h_done(&r);
    }
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
    for (size_t a = 0; a < NABS; a++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
            for (size_t j = 0; j < sizeof ns / sizeof *ns; j++)
                expect_time("allreduce", "gateway", cases[i].opts, cases[i].P, ns[j], &ABS[a],
                            cases[i].stages * (A(&ABS[a]) + B(&ABS[a]) * ns[j]));
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

/* ---- options and trivial cases ------------------------------------------- */

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

Test(symmetric_opts, one_rank_emits_nothing)
{
    for (size_t i = 0; i < sizeof VARIANTS / sizeof *VARIANTS; i++) {
        h_run_t r = h_run("alphabeta:topo=complete,p=4", VARIANTS[i].coll, VARIANTS[i].algo, 1,
                          100, 0, VARIANTS[i].opts, CS_NET_PACKET, 1);
        cr_expect_eq(r.rc, CS_OK, "%s/%s: %s", VARIANTS[i].coll, VARIANTS[i].algo, r.err.msg);
        cr_expect_eq(r.finish, 0);
        cr_expect_eq(cs_program_nops(r.prog), 0, "%s/%s", VARIANTS[i].coll, VARIANTS[i].algo);
        h_done(&r);
    }
}
