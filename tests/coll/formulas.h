/*
 * formulas.h - the closed-form costs, machine tables and sweeps that the
 * test files of tests/coll share (header-only, for tests only).  Every
 * expected time in the tests is computed from one of these formulas, never
 * taken from a run.  Sources of the formulas, by section below:
 *
 *   - the lecture's alpha-beta costs (shared/reference/alpha-beta.md §8:
 *     binomial tree §8.1, flat and divide-and-conquer scatter/gather,
 *     bucket allgather §8.7, van de Geijn §8.8, §8.9) and the schedules of
 *     the pipelined chains and of Rabenseifner's reduce derived in
 *     docs/algorithms.md;
 *   - the textbook costs of the generic MPI algorithms (Thakur et al. 2005;
 *     Bruck et al. 1997), with the fold of the extra ranks for any P;
 *   - the Cell blade paper (reference/cell-blade.md §2.4, §3.2, §3.5, §6),
 *     the CNS-1 report (reference §6.1) and the Groq ISCA'22 paper's
 *     hierarchical all-reduce (§5.6, reference/groq-dragonfly.md §4);
 *   - the Cerebras thesis (§5-§7: Lemmas 5.1-5.9, 6.1-6.4, 7.1), derived
 *     under the engine's rules (src/engine/net.h, exec.h), stated in the
 *     thesis section.
 *
 * Three alpha-beta tables coexist: ab_t/ABS (the lecture and the machine
 * papers: alpha and beta as option strings plus their ticks), sym_ab_t/
 * SYM_ABS (the symmetric collectives: alpha in ns, beta in ps) and
 * th_machine_t/TH_MACHINES (the thesis: topology, unit, hop and reduction
 * cost too).  Ticks are picoseconds.
 */
#ifndef CS_TEST_COLL_FORMULAS_H
#define CS_TEST_COLL_FORMULAS_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/net.h"
#include "harness.h"
#include "topo/topo.h"

/* ==== arithmetic, rank sets and program inspection ========================= */

/* ceil(log2 x): the rounds of a binomial tree over x ranks (0 for x <= 1). */
static inline int f_ceil_log2(int64_t x)
{
    int k = 0;
    while (((int64_t)1 << k) < x)
        k++;
    return k;
}

/* ceil(a / b) for b > 0 */
static inline int64_t f_cdiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* the smallest s with s * s >= k (the thesis's default group size) */
static inline int64_t f_ceil_sqrt(int64_t k)
{
    int64_t s = 1;
    while (s * s < k)
        s++;
    return s;
}

/* The roots a sweep tries: 0, P/2 and P-1 as far as P allows; returns how
 * many. */
static inline int f_roots_of(int P, int *roots)
{
    int n = 0;
    roots[n++] = 0;
    if (P > 2)
        roots[n++] = P / 2;
    if (P > 1)
        roots[n++] = P - 1;
    return n;
}

/* the two network modes every timing sweep runs in */
static const cs_net_mode_t MODES[] = {CS_NET_PACKET, CS_NET_FLUID};

/* The highest number of messages any channel carried at once in a run. */
static inline int f_peak_k(const h_run_t *r)
{
    int worst = 0;
    for (int c = 0; c < cs_topo_channels(r->m->topo); c++) {
        const cs_chan_stats_t *st = cs_net_chan_stats(r->res.net, c);
        if (st->peak_k > worst)
            worst = st->peak_k;
    }
    return worst;
}

/* The peers of a rank's non-empty sends, in program order. */
static inline int f_send_peers(const cs_program_t *p, int rank, int *out, int max)
{
    int n = 0;
    for (int32_t o = 0; o < cs_program_nops(p); o++) {
        const cs_op_t *op = cs_program_op(p, o);
        if (op->kind == CS_OP_SEND && op->rank == rank && op->bytes > 0 && n < max)
            out[n++] = op->peer;
    }
    return n;
}

/* A deterministic random permutation (Fisher-Yates over a 64-bit LCG). */
static inline void f_shuffle(int32_t *v, int n, uint64_t *seed)
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

/* ==== the lecture's alpha-beta machine (rooted collectives, machine papers) = */

/* alpha/beta pairs in whole ticks of the alpha-beta machine's 1 ps clock,
 * for formula sweeps */
typedef struct ab {
    const char *alpha, *beta;
    int64_t a, b; /* ticks, ticks per byte */
} ab_t;
static const ab_t ABS[] = {
    {"1us", "1ns", 1000000, 1000},
    {"3us", "2ns", 3000000, 2000},
    {"500ns", "4ns", 500000, 4000},
};
#define NABS ((int)(sizeof ABS / sizeof *ABS))

/* Under the sanitizers (tools/test's second pass, about 16x slower) the
 * sweeps stop at P = 32: P = 64 and 100 take most of the time there and
 * reach no code that 31 and 32 do not; the plain pass runs them all. */
#if defined(__SANITIZE_ADDRESS__)
static const int PS[] = {1, 2, 3, 5, 7, 8, 13, 16, 31};
static const int POW2[] = {1, 2, 4, 8, 16, 32};
#else
static const int PS[] = {1, 2, 3, 5, 7, 8, 13, 16, 31, 64, 100};
static const int POW2[] = {1, 2, 4, 8, 16, 32, 64};
#endif
#define NPS ((int)(sizeof PS / sizeof *PS))
#define NPOW2 ((int)(sizeof POW2 / sizeof *POW2))

static inline void ab_spec(char *buf, size_t len, const char *topo, int P, const ab_t *ab)
{
    snprintf(buf, len, "alphabeta:topo=%s,p=%d,alpha=%s,beta=%s", topo, P, ab->alpha, ab->beta);
}

/* Runs and asserts success; returns the finish time. */
static inline cs_tick_t ab_timed_on(const char *topo, int P, const ab_t *ab, const char *coll,
                                    const char *algo, int64_t bytes, int root, const char *opts,
                                    cs_net_mode_t mode)
{
    char s[256];
    ab_spec(s, sizeof s, topo, P, ab);
    return h_time(s, coll, algo, P, bytes, root, opts, mode);
}

/* The same on alphabeta:topo=complete. */
static inline cs_tick_t ab_timed(int P, const ab_t *ab, const char *coll, const char *algo,
                                 int64_t bytes, int root, const char *opts, cs_net_mode_t mode)
{
    return ab_timed_on("complete", P, ab, coll, algo, bytes, root, opts, mode);
}

/* one message of n bytes */
static inline cs_tick_t ab_T(const ab_t *ab, int64_t n)
{
    return ab->a + ab->b * n;
}

#define CHECK_TIME(got, want, fmt, ...)                                                            \
    cr_assert_eq((got), (want), fmt ": %lld ticks, formula %lld", __VA_ARGS__, (long long)(got),   \
                 (long long)(want))

/* ---- the rooted collectives: sweeps shared by broadcast and reduce ------- */

/* ---- binomial reduce and broadcast: (alpha + beta n) ceil(log2 P) ------- */

static inline void tree_sweep(const char *coll)
{
    static const int64_t NS[] = {1, 1000, 4096, 10007, 65536};
    int runs = 0;
    for (int pi = 0; pi < NPS; pi++)
        for (int ni = 0; ni < (int)(sizeof NS / sizeof *NS); ni++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++) {
                    int P = PS[pi], roots[3], nr = f_roots_of(P, roots);
                    int64_t n = NS[ni];
                    cs_tick_t want = (ABS[k].a + ABS[k].b * n) * f_ceil_log2(P);
                    for (int ri = 0; ri < nr; ri++) {
                        cs_tick_t got = ab_timed_on("complete", P, &ABS[k], coll, "binomial", n,
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

/* ---- one-to-all: (P-1)(alpha + beta x) ------------------------------------ */

/* flat broadcast (x = n), naive scatter (x = m), flat gather and flat
 * reduce (x = m resp. n): the root's single port serialises P-1 messages */
static inline void flat_sweep(const char *coll)
{
    static const int64_t XS[] = {1, 777, 4096, 9000};
    for (int pi = 0; pi < NPS; pi++)
        for (int xi = 0; xi < (int)(sizeof XS / sizeof *XS); xi++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++) {
                    int P = PS[pi], roots[3], nr = f_roots_of(P, roots);
                    int64_t x = XS[xi];
                    cs_tick_t want = (cs_tick_t)(P - 1) * (ABS[k].a + ABS[k].b * x);
                    for (int ri = 0; ri < nr; ri++) {
                        cs_tick_t got = ab_timed_on("complete", P, &ABS[k], coll, "flat", x,
                                                    roots[ri], NULL, MODES[mi]);
                        cr_assert_eq(got, want,
                                     "%s/flat P=%d size=%lld root=%d %s/%s %s: %lld vs %lld", coll,
                                     P, (long long)x, roots[ri], ABS[k].alpha, ABS[k].beta,
                                     cs_net_mode_name(MODES[mi]), (long long)got, (long long)want);
                    }
                }
}

/* ---- pipelined chains: ((S-1) k + max_j (j + L_j)) (alpha + beta seg) ----
 * For each segment the root sends to the k chain heads in turn (k messages
 * of alpha + beta*seg back to back), so head j has segment s at
 * (s k + j + 1) t; the chains forward without queueing (a rank gets one
 * segment every k t and needs t to pass it on), so the last rank of chain j
 * (length L_j, the first (P-1) mod k chains one longer) has segment s at
 * (s k + j + L_j) t.  k = 1 is the chain: (P - 2 + S) t.  The reverse chains
 * of the reduce are the time-reversed schedule and cost the same. */
static inline cs_tick_t kchain_formula(int P, int k, int64_t S, cs_tick_t t)
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

static inline void chain_sweep(const char *coll, const char *algo, const int *ks, int nk)
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
                            int P = PS[pi], roots[3], nr = f_roots_of(P, roots);
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
                                cs_tick_t got =
                                    ab_timed_on("complete", P, &ABS[k], coll, algo, n, roots[ri],
                                                opts[0] ? opts : NULL, MODES[mi]);
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

/* ---- segmented binomial: S ceil(log2 P) (alpha + beta seg) ----------------
 * The root has ceil(log2 P) children and sends every segment to each of
 * them: S*L messages back to back through its one send port; every other
 * rank has fewer children and keeps up, and the root's last message (the
 * last segment to its nearest child, a leaf) ends at S L t.  The reduce is
 * the dual through the root's receive port.  In the one-port model the
 * pipelining buys nothing over the binomial tree (it costs (S-1) L alpha
 * more); it pays off when reductions take time or ports are many. */
static inline void segbin_sweep(const char *coll)
{
    static const int64_t SS[] = {1, 3, 4};
    for (int pi = 0; pi < NPS; pi++)
        for (int ci = 0; ci < 3; ci++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++) {
                    int P = PS[pi], roots[3], nr = f_roots_of(P, roots);
                    int64_t seg = 1500, S = SS[ci];
                    cs_tick_t want = S * f_ceil_log2(P) * (ABS[k].a + ABS[k].b * seg);
                    for (int ri = 0; ri < nr; ri++) {
                        cs_tick_t got =
                            ab_timed_on("complete", P, &ABS[k], coll, "segmented-binomial", seg * S,
                                        roots[ri], "seg=1500", MODES[mi]);
                        cr_assert_eq(got, want,
                                     "%s/segmented-binomial P=%d S=%lld root=%d %s: %lld vs %lld",
                                     coll, P, (long long)S, roots[ri], cs_net_mode_name(MODES[mi]),
                                     (long long)got, (long long)want);
                    }
                }
}


/* ---- the rooted algorithms of the lecture and generic MPI, with --validate - */

typedef struct algo_ref {
    const char *coll, *algo, *opts; /* opts: extra options for pipelined ones */
} algo_ref_t;

static const algo_ref_t ROOTED_ALGOS[] = {
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
#define NROOTED_ALGOS ((int)(sizeof ROOTED_ALGOS / sizeof *ROOTED_ALGOS))

/* Every algorithm delivers the right data (--validate) for the P,
 * sizes of 1 byte, smaller than P, not divisible by P, and roots at both
 * ends and in the middle. */
static inline void rooted_validate_range(int from, int to)
{
    static const int VP[] = {1, 2, 3, 5, 7, 8, 13, 16, 64, 100};
    static const int64_t VN[] = {1, 3, 37, 1000, 4099};
    int runs = 0;
    for (int i = from; i < to; i++)
        for (int pi = 0; pi < 10; pi++)
            for (int ni = 0; ni < 5; ni++) {
                int P = VP[pi], roots[3], nr = f_roots_of(P, roots);
                char s[128];
                snprintf(s, sizeof s, "alphabeta:topo=complete,p=%d", P);
                for (int ri = 0; ri < nr; ri++) {
                    cs_net_mode_t mode = MODES[(ni + ri) % 2];
                    h_run_t r = h_run(s, ROOTED_ALGOS[i].coll, ROOTED_ALGOS[i].algo, P, VN[ni],
                                      roots[ri], ROOTED_ALGOS[i].opts, mode, 1);
                    cr_assert_eq(r.rc, CS_OK, "%s/%s%s%s P=%d n=%lld root=%d %s: %s",
                                 ROOTED_ALGOS[i].coll, ROOTED_ALGOS[i].algo,
                                 ROOTED_ALGOS[i].opts ? " " : "",
                                 ROOTED_ALGOS[i].opts ? ROOTED_ALGOS[i].opts : "", P,
                                 (long long)VN[ni], roots[ri], cs_net_mode_name(mode), r.err.msg);
                    h_done(&r);
                    runs++;
                }
            }
    cr_assert_gt(runs, 0);
}

/* ==== the Cell blade paper ================================================= */

/* The shape the algorithms document: y leaders (a power of two) and k
 * binomial rounds, from option x (or the default). */
static inline void hybrid_shape(int P, int x, int *y, int *k)
{
    if (x > 0) {
        *y = 1 << f_ceil_log2(f_cdiv(P, (int64_t)1 << (x - 1)));
    } else {
        int s = (int)ceil(sqrt((double)P));
        *y = 1;
        while (*y * 2 <= s)
            *y *= 2;
    }
    *k = f_ceil_log2(f_cdiv(P, *y));
}

/* The paper's structural numbers: 16 SPEs, chips 0-7 and 8-15. */

static inline int cell_crossing(int r, int s)
{
    return (r < 8) != (s < 8);
}

/* Data messages (non-empty sends) between the two chips in the program. */
static inline int cell_bif_messages(const cs_program_t *p)
{
    int c = 0;
    for (int32_t o = 0; o < cs_program_nops(p); o++) {
        const cs_op_t *op = cs_program_op(p, o);
        if (op->kind == CS_OP_SEND && op->bytes > 0 && cell_crossing(op->rank, op->peer))
            c++;
    }
    return c;
}

static inline cs_program_t *cell_build16(const char *coll, const char *algo, int64_t bytes,
                                         const char *opts, const cs_coll_hints_t *hints)
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


/* ==== the symmetric collectives (lecture §8.7, §8.9, generic MPI) ========= */

/* alpha in ns and beta in ps per byte: with the 1 ps tick both are whole
 * ticks (alpha_ns * 1000 and beta_ps ticks). */
typedef struct sym_ab {
    int64_t alpha_ns, beta_ps;
} sym_ab_t;
static const sym_ab_t SYM_ABS[] = {{1000, 1000}, {3000, 2000}, {500, 5000}, {20000, 1000}, {7, 3}};
#define NSYM_ABS (sizeof SYM_ABS / sizeof *SYM_ABS)

static inline int64_t sym_A(const sym_ab_t *p)
{
    return p->alpha_ns * 1000;
} /* ticks */
static inline int64_t sym_B(const sym_ab_t *p)
{
    return p->beta_ps;
} /* ticks per byte */

static inline void sym_spec(char *buf, size_t len, const char *topo, int P, const sym_ab_t *p)
{
    snprintf(buf, len, "alphabeta:topo=%s,p=%d,alpha=%lldns,beta=%lldps", topo, P,
             (long long)p->alpha_ns, (long long)p->beta_ps);
}

/* The formula: `expect` ticks for coll/algo at P, size, on a complete
 * network with parameters p, in both modes. */
static inline void sym_expect_time(const char *coll, const char *algo, const char *opts, int P,
                                   int64_t size, const sym_ab_t *p, int64_t expect)
{
    char spec[200];
    sym_spec(spec, sizeof spec, "complete", P, p);
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


/* ==== the Cerebras thesis ================================================== *
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

typedef struct th_machine {
    const char *topo;
    int64_t a_ns, b_ps, U, hop_ns, red_ps;
} th_machine_t;

static inline void th_spec(const th_machine_t *m, int P, char *buf, size_t len)
{
    snprintf(buf, len,
             "alphabeta:topo=%s,p=%d,alpha=%lldns,beta=%lldps,packet=%lld,hop=%lldns,reduce=%lldps",
             m->topo, P, (long long)m->a_ns, (long long)m->b_ps, (long long)m->U,
             (long long)m->hop_ns, (long long)m->red_ps);
}

/* ticks are picoseconds */
static inline int64_t th_A(const th_machine_t *m)
{
    return m->a_ns * 1000;
}
static inline int64_t th_B(const th_machine_t *m)
{
    return m->b_ps;
}
static inline int64_t th_D(const th_machine_t *m, int64_t n)
{
    return th_A(m) + th_B(m) * n;
}
static inline int64_t th_U(const th_machine_t *m, int64_t n)
{
    return m->U < n ? m->U : n;
}
static inline int64_t th_H(const th_machine_t *m)
{
    return m->hop_ns * 1000;
}

/* ---- the derived alpha-beta costs ---------------------------------------- */

/* A streamed chain of P ranks: P-1 links, all alphas paid at once. */
static inline int64_t t_chain(const th_machine_t *m, int P, int64_t n, int stream)
{
    if (P < 2)
        return 0;
    return stream ? th_A(m) + th_B(m) * n + (P - 2) * th_B(m) * th_U(m, n) : (P - 1) * th_D(m, n);
}

/* Scalar: the root's one receive port takes P-1 whole vectors in turn. */
static inline int64_t t_scalar(const th_machine_t *m, int P, int64_t n)
{
    return (P - 1) * th_D(m, n);
}

/* Tree: every PE receives its children back to back and each child's data
 * is complete when the port reaches it, so the root is busy for
 * ceil(log2 P) messages of D (the lecture's binomial time), streamed or not. */
static inline int64_t t_tree(const th_machine_t *m, int P, int64_t n)
{
    return f_ceil_log2(P) * th_D(m, n);
}

/* Two-phase, store and forward: the longest path has S-1 links in the last
 * group and g-1 between leaders. */
static inline int64_t t_two_phase_sf(const th_machine_t *m, int P, int64_t S, int64_t n)
{
    int64_t s = S ? S : f_ceil_sqrt(P), g;
    if (P < 2)
        return 0;
    if (s > P)
        s = P;
    g = (P + s - 1) / s;
    return (s - 1 + g - 1) * th_D(m, n);
}

/* Two-phase, streamed: every group chain ends at C = a + b n + (S-2) b u;
 * each leader's stream (posted earlier) waits for the previous leader's
 * port until then, after which the leader chain is one pipeline of g-1
 * links whose alphas run together: C + D + (g-2) b u (g >= 3, where the
 * middle leaders' full groups end at C too).  With g = 2 the last leader's
 * stream enters p0 as soon as p0's own group of f PEs is done.  S = 1 or a
 * single group is a plain chain. */
static inline int64_t t_two_phase_stream(const th_machine_t *m, int P, int64_t S, int64_t n)
{
    int64_t s = S ? S : f_ceil_sqrt(P), g, f;
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
        int64_t c_f = t_chain(m, f, n, 1),
                c_s = th_A(m) + th_B(m) * n + (s - 1) * th_B(m) * th_U(m, n);
        return c_f + th_D(m, n) > c_s ? c_f + th_D(m, n) : c_s;
    }
    return 2 * th_D(m, n) + (s + g - 4) * th_B(m) * th_U(m, n);
}

static inline int64_t t_two_phase(const th_machine_t *m, int P, int64_t S, int64_t n, int stream)
{
    return stream ? t_two_phase_stream(m, P, S, n) : t_two_phase_sf(m, P, S, n);
}


/* ---- running ---------------------------------------------------------------- */

static inline const char *th_mode_name(cs_net_mode_t mode)
{
    return mode == CS_NET_FLUID ? "fluid" : "packet";
}

static inline void th_expect_time(const th_machine_t *m, const char *coll, const char *algo, int P,
                                  int64_t n, int root, const char *opts, cs_net_mode_t mode,
                                  int64_t want)
{
    char spec[256];
    th_spec(m, P, spec, sizeof spec);
    h_run_t r = h_run(spec, coll, algo, P, n, root, opts, mode, 0);
    cr_assert_eq(r.rc, CS_OK, "%s/%s on %s P=%d n=%lld: %s", coll, algo, spec, P, (long long)n,
                 r.err.msg);
    cr_expect_eq(r.finish, want,
                 "%s/%s [%s] on %s (%s) P=%d n=%lld root=%d: simulated %lld, derived %lld", coll,
                 algo, opts ? opts : "", spec, th_mode_name(mode), P, (long long)n, root,
                 (long long)r.finish, (long long)want);
    h_done(&r);
}

/* TH_MACHINES swept by the timing tests */
static const th_machine_t TH_MACHINES[] = {
    {"complete", 1000, 1000, 64, 0, 0},
    {"complete", 50, 250, 100, 0, 0},
    {"line", 1000, 1000, 64, 0, 0},
    {"line", 200, 2000, 32, 0, 0},
};
#define TH_NMACH (int)(sizeof TH_MACHINES / sizeof *TH_MACHINES)
static const int TH_PS[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16};
#define TH_NP (int)(sizeof TH_PS / sizeof *TH_PS)
/* under the sanitizers without 10 and 1000, which sit between sizes that
 * already cover one packet, exact multiples (64, 100, 640 of the packets
 * 32, 64, 100) and a ragged last packet (4099) */
#if defined(__SANITIZE_ADDRESS__)
static const int64_t TH_SIZES[] = {1, 64, 100, 640, 4099};
#else
static const int64_t TH_SIZES[] = {1, 10, 64, 100, 640, 1000, 4099};
#endif
#define TH_NS (int)(sizeof TH_SIZES / sizeof *TH_SIZES)

#define TH_SWEEP(...)                                                                              \
    for (int mi = 0; mi < TH_NMACH; mi++)                                                          \
        for (int md = 0; md < 2; md++)                                                             \
            for (int pi = 0; pi < TH_NP; pi++)                                                     \
                for (int si = 0; si < TH_NS; si++)                                                 \
                    for (int st = 0; st < 2; st++) {                                               \
                        const th_machine_t *m = &TH_MACHINES[mi];                                  \
                        cs_net_mode_t mode = md ? CS_NET_FLUID : CS_NET_PACKET;                    \
                        int P = TH_PS[pi];                                                         \
                        int64_t n = TH_SIZES[si];                                                  \
                        const char *so = st ? "stream=1" : "stream=0";                             \
                        (void)so;                                                                  \
                        __VA_ARGS__                                                                \
                    }

#endif
