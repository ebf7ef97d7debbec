/*
 * test_loggp.c - the loggp machine against the LogGOPS formulas
 * (Hoefler, Schneider, Lumsdaine, LSAP 2010, §2; docs/loggp.md).  Every
 * expected value is computed here from the model's parameters:
 *
 *   one message of s bytes   o + L + o + s'max(O, G)      s' = max(s - 1, 0)
 *   the sender is free at    o + s'O (eager); the match (rendezvous)
 *   binomial broadcast       f(node) = max over children j (farthest first)
 *                            of j*gamma + D + f(child), gamma the send gap
 *                            max(o + s'O, g + s'G), D one hop's cost
 *   dissemination barrier    (K-1) max(2o + L, g) + 2o + L, K = ceil(log2 P)
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "../coll/harness.h"
#include "engine/exec.h"
#include "core/program.h"
#include "machines/machine.h"
#include "predict.h"

typedef struct lgp {
    int64_t L, o, g, G, O, S; /* ns and ns per byte; tick = 1 ns */
} lgp_t;

static const lgp_t sets[] = {
    {2500, 1500, 1000, 6, 0, 65535}, /* LogGOPSim's defaults */
    {100, 10, 5, 1, 0, 1024},
    {3, 7, 400, 2, 0, 64},            /* g larger than a hop: the gap dominates */
    {50, 20, 10, 1, 3, 4096},         /* per-byte CPU overhead above G */
    {0, 0, 0, 1, 0, 1 << 20},         /* pure bandwidth */
};
#define NSETS ((int)(sizeof sets / sizeof sets[0]))

static void spec_of(const lgp_t *s, int p, char *buf, size_t len)
{
    snprintf(buf, len, "loggp:p=%d,L=%lld,o=%lld,g=%lld,G=%lld,O=%lld,S=%lld", p,
             (long long)s->L, (long long)s->o, (long long)s->g, (long long)s->G,
             (long long)s->O, (long long)s->S);
}

static int64_t sp(int64_t s) { return s > 1 ? s - 1 : 0; }
static int64_t mx(int64_t a, int64_t b) { return a > b ? a : b; }
/* one hop: sender overhead, wire, receiver overhead with the bytes */
static int64_t hop(const lgp_t *s, int64_t n) { return 2 * s->o + s->L + sp(n) * mx(s->O, s->G); }
static int64_t gap(const lgp_t *s, int64_t n)
{
    return mx(s->o + sp(n) * s->O, s->g + sp(n) * s->G);
}

typedef struct run {
    cs_exec_result_t res;
    cs_machine_t *m;
} run_t;

static run_t run_prog(const char *spec, cs_program_t *p)
{
    run_t r;
    cs_error_t err;
    memset(&r, 0, sizeof r);
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_machine_new(spec, &r.m, &err), CS_OK, "%s", err.msg);
    cs_exec_env_t env;
    cs_exec_opts_t o;
    cs_machine_exec_env(r.m, &env);
    cs_exec_opts_default(&o);
    o.record_op_times = 1;
    cr_assert_eq(cs_exec_run(&env, p, &o, &r.res, &err), CS_OK, "%s: %s", spec, err.msg);
    return r;
}

static void run_free(run_t *r)
{
    cs_exec_result_destroy(&r->res);
    cs_machine_free(r->m);
}

TestSuite(loggp, .timeout = 300);

Test(loggp, single_message)
{
    static const int64_t sizes[] = {0, 1, 2, 8, 100, 1000, 64, 65, 65535, 65536, 200000};
    for (int k = 0; k < NSETS; k++) {
        const lgp_t *s = &sets[k];
        char spec[256];
        spec_of(s, 2, spec, sizeof spec);
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            int64_t n = sizes[i];
            cs_program_t *p = cs_program_new(2);
            int32_t snd = cs_program_send(p, 0, 1, n, 0);
            int32_t rcv = cs_program_recv(p, 1, 0, n, 0);
            run_t r = run_prog(spec, p);
            int64_t want = s->o + s->L + s->o + sp(n) * mx(s->O, s->G);
            cr_expect_eq(r.res.finish, want, "%s, %lld bytes: finish %lld, want o+L+o+s'max(O,G) "
                         "= %lld", spec, (long long)n, (long long)r.res.finish, (long long)want);
            cr_expect_eq(r.res.ops[rcv].end, want);
            /* eager: the sender is free after its overhead; rendezvous: at
             * the match, when the receiver starts processing (o + L) */
            int64_t send_end = n <= s->S ? s->o + sp(n) * s->O
                                         : mx(s->o + s->L, s->o + sp(n) * s->O);
            cr_expect_eq(r.res.ops[snd].end, send_end, "%s, %lld bytes: send ends %lld, want %lld",
                         spec, (long long)n, (long long)r.res.ops[snd].end, (long long)send_end);
            run_free(&r);
            cs_program_free(p);
        }
    }
}

/* Unlike LogGOPSim (unsigned s - 1), 0 bytes cost exactly what 1 byte does. */
Test(loggp, zero_bytes_not_cheaper)
{
    const char *spec = "loggp:p=2,L=10,o=5,g=3,G=7,O=2";
    cs_tick_t t[2];
    for (int n = 0; n < 2; n++) {
        cs_program_t *p = cs_program_new(2);
        cs_program_send(p, 0, 1, n, 0);
        cs_program_recv(p, 1, 0, n, 0);
        run_t r = run_prog(spec, p);
        t[n] = r.res.finish;
        run_free(&r);
        cs_program_free(p);
    }
    cr_expect_eq(t[0], t[1]);
    cr_expect_eq(t[0], 5 + 10 + 5);
}

/* A rendezvous send completes when the receiver posts its recv, however
 * late; an eager one does not wait. */
Test(loggp, rendezvous_waits_for_the_recv)
{
    const char *spec = "loggp:p=2,L=100,o=10,g=5,G=1,S=1000";
    for (int big = 0; big < 2; big++) {
        int64_t n = big ? 5000 : 500;
        cs_program_t *p = cs_program_new(2);
        int32_t snd = cs_program_send(p, 0, 1, n, 0);
        int32_t c = cs_program_calc(p, 1, 20000, 0);
        int32_t rcv = cs_program_recv(p, 1, 0, n, 0);
        cs_program_dep(p, rcv, c, CS_DEP_AFTER);
        run_t r = run_prog(spec, p);
        /* the message arrived at o + L, during the calc: it is processed
         * after it (o + s'G), when the recv is posted too */
        cr_expect_eq(r.res.ops[rcv].end, 20000 + 10 + (n - 1));
        cr_expect_eq(r.res.ops[snd].end, big ? 20000 : 10);
        run_free(&r);
        cs_program_free(p);
    }
}

/* One host sending to several: each send waits for the previous one's
 * overhead and gap, max(o + s'O, g + s'G). */
Test(loggp, sends_serialise_on_the_gap)
{
    for (int k = 0; k < NSETS; k++) {
        const lgp_t *s = &sets[k];
        char spec[256];
        int64_t n = 200;
        spec_of(s, 5, spec, sizeof spec);
        cs_program_t *p = cs_program_new(5);
        int32_t rcv[5];
        for (int d = 1; d < 5; d++) {
            cs_program_send(p, 0, d, n, 0);
            rcv[d] = cs_program_recv(p, d, 0, n, 0);
        }
        run_t r = run_prog(spec, p);
        for (int d = 1; d < 5; d++)
            cr_expect_eq(r.res.ops[rcv[d]].end, (d - 1) * gap(s, n) + hop(s, n), "%s dest %d",
                         spec, d);
        run_free(&r);
        cs_program_free(p);
    }
}

/* Several messages to one host: its receive side takes one per
 * max(o + max(s'O, s'G), g + s'G). */
Test(loggp, receives_serialise_on_the_gap)
{
    const char *spec = "loggp:p=4,L=100,o=10,g=50,G=1";
    cs_program_t *p = cs_program_new(4);
    for (int s = 1; s < 4; s++) {
        cs_program_send(p, s, 0, 11, 0);
        cs_program_recv(p, 0, s, 11, 0);
    }
    run_t r = run_prog(spec, p);
    /* all arrive at o + L = 110; processing every max(10 + 10, 50 + 10) */
    cr_expect_eq(r.res.finish, 110 + 2 * 60 + 10 + 10);
    run_free(&r);
    cs_program_free(p);
}

/* Binomial broadcast on root-relative ranks, farthest child first: the
 * recurrence of the LogGP formulas over the suite's tree. */
static int64_t bcast_finish(const lgp_t *s, int P, int64_t n, int rel, int top)
{
    int64_t worst = 0, j = 0;
    for (int mask = top >> 1; mask > 0; mask >>= 1) {
        if (rel + mask >= P)
            continue;
        int64_t t = j * gap(s, n) + hop(s, n) + bcast_finish(s, P, n, rel + mask, mask);
        worst = mx(worst, t);
        j++;
    }
    return worst;
}

Test(loggp, binomial_broadcast)
{
    static const int Ps[] = {2, 3, 4, 5, 8, 13, 16, 32, 64, 100};
    static const int64_t sizes[] = {1, 2, 8, 4096, 100000}; /* 0 bytes: no messages */
    for (int k = 0; k < NSETS; k++) {
        const lgp_t *s = &sets[k];
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++) {
            int P = Ps[i];
            char spec[256];
            spec_of(s, P, spec, sizeof spec);
            for (size_t j = 0; j < sizeof sizes / sizeof *sizes; j++) {
                int64_t n = sizes[j];
                int64_t want = bcast_finish(s, P, n, 0, 1 << cs_coll_ceil_log2(P));
                cs_tick_t got = h_time(spec, "broadcast", "binomial", 0, n, 0, NULL,
                                       CS_NET_PACKET);
                cr_expect_eq(got, want, "%s, %lld bytes: %lld, want %lld", spec, (long long)n,
                             (long long)got, (long long)want);
                /* the closed form for P = 2^k */
                if ((P & (P - 1)) == 0) {
                    int64_t K = cs_coll_ceil_log2(P), D = hop(s, n), g = gap(s, n);
                    cr_expect_eq(want, g <= D ? K * D : (K - 1) * g + D);
                }
            }
        }
    }
}

Test(loggp, dissemination_barrier)
{
    for (int k = 0; k < NSETS; k++) {
        const lgp_t *s = &sets[k];
        for (int P = 2; P <= 40; P += (P < 10 ? 1 : 7)) {
            char spec[256];
            spec_of(s, P, spec, sizeof spec);
            int64_t K = cs_coll_ceil_log2(P), round = 2 * s->o + s->L;
            int64_t want = (K - 1) * mx(round, s->g) + round;
            for (int64_t n = 0; n <= 1; n++) {
                cs_tick_t got = h_time(spec, "barrier", "dissemination", 0, n, 0, NULL,
                                       CS_NET_PACKET);
                cr_expect_eq(got, want, "%s: %lld, want %lld", spec, (long long)got,
                             (long long)want);
            }
        }
    }
}

/* calc takes the CPU that charges o: a send ready during a calc starts
 * after it, and a message arriving during one is processed after it (and
 * after the send, whose request came first). */
Test(loggp, calc_shares_the_cpu)
{
    const char *spec = "loggp:p=2,L=2500,o=1500,g=1000,G=6";
    cs_program_t *p = cs_program_new(2);
    cs_program_send(p, 0, 1, 8, 0);
    int32_t c = cs_program_calc(p, 1, 10000, 0);
    int32_t r = cs_program_recv(p, 1, 0, 8, 0);
    int32_t s = cs_program_send(p, 1, 0, 8, 1);
    int32_t v = cs_program_recv(p, 0, 1, 8, 1);
    run_t res = run_prog(spec, p);
    cr_expect_eq(res.res.ops[c].end, 10000);
    /* rank 1's send, posted at 0, starts when the calc is over */
    cr_expect_eq(res.res.ops[s].end, 10000 + 1500);
    /* rank 0's message arrived at o + L = 4000; processed after both */
    cr_expect_eq(res.res.ops[r].end, 11500 + 1500 + 7 * 6);
    cr_expect_eq(res.res.ops[v].end, 10000 + 1500 + 2500 + 1500 + 7 * 6);
    run_free(&res);
    cs_program_free(p);
}

/* Messages to oneself are free local copies, as on every machine. */
Test(loggp, self_message_is_free)
{
    cs_program_t *p = cs_program_new(1);
    cs_program_send(p, 0, 0, 1000, 0);
    cs_program_recv(p, 0, 0, 1000, 0);
    run_t r = run_prog("loggp:p=1", p);
    cr_expect_eq(r.res.finish, 0);
    run_free(&r);
    cs_program_free(p);
}

/* Both ranks send first and receive after their send completed: under the
 * rendezvous that waits forever (MPI may deadlock); unsafe=release
 * completes the sends when nothing else can move. */
Test(loggp, unsafe_exchange)
{
    for (int strict = 0; strict < 2; strict++) {
        cs_program_t *p = cs_program_new(2);
        for (int r = 0; r < 2; r++) {
            int32_t s = cs_program_send(p, r, 1 - r, 5000, 0);
            int32_t v = cs_program_recv(p, r, 1 - r, 5000, 0);
            cs_program_dep(p, v, s, CS_DEP_AFTER);
        }
        cs_error_t err;
        cs_machine_t *m;
        cs_exec_result_t res;
        cs_exec_env_t env;
        cs_exec_opts_t o;
        cr_assert_eq(cs_program_finalize(p, &err), CS_OK);
        cr_assert_eq(cs_machine_new(strict ? "loggp:p=2,S=1000,unsafe=deadlock"
                                           : "loggp:p=2,S=1000",
                                    &m, &err),
                     CS_OK);
        cs_machine_exec_env(m, &env);
        cs_exec_opts_default(&o);
        int rc = cs_exec_run(&env, p, &o, &res, &err);
        if (strict) {
            cr_expect_eq(rc, CS_ERR_DEADLOCK);
            cr_expect(strstr(err.msg, "send 5000b to"), "%s", err.msg);
        } else {
            cr_expect_eq(rc, CS_OK, "%s", err.msg);
        }
        cs_exec_result_destroy(&res);
        cs_machine_free(m);
        cs_program_free(p);
    }
}

Test(loggp, every_suite_algorithm_validates)
{
    h_expect_all_validate("loggp:p=8,L=100,o=10,g=5,G=1,S=256", 1000, 3, NULL);
    h_expect_all_validate("loggp:p=6,L=100,o=10,g=5,G=1,S=256", 64, 0, NULL);
}

Test(loggp, spec)
{
    cs_machine_t *m;
    cs_error_t err;
    cr_assert_eq(cs_machine_new("loggp:p=4,L=2.5us,o=1500,G=0.5", &m, &err), CS_OK, "%s",
                 err.msg);
    cr_expect_eq(cs_machine_nodes(m), 4);
    cr_expect_str_eq(m->spec, "loggp:p=4,L=2500ns,o=1500ns,g=1000ns,G=0.5ns,O=0ns,S=65535,"
                              "tick=1ns,reduce=0ns,unsafe=release");
    cs_machine_free(m);
    cr_expect_neq(cs_machine_new("loggp:p=4,L=1.5", &m, &err), CS_OK);
    cr_expect(strstr(err.msg, "'L'") && strstr(err.msg, "tick"), "%s", err.msg);
    cr_expect_neq(cs_machine_new("loggp:p=4,o=-3", &m, &err), CS_OK);
    cr_expect(strstr(err.msg, "'o'"), "%s", err.msg);
    cr_expect_neq(cs_machine_new("loggp:p=4,l=3", &m, &err), CS_OK);
    cr_expect(strstr(err.msg, "l") && strstr(err.msg, "valid"), "%s", err.msg);
    cr_expect_eq(cs_machine_new("loggp:p=4,L=1.5,tick=0.5ns", &m, &err), CS_OK, "%s", err.msg);
    cs_machine_free(m);
}

/* --predict: LogGP's binomial broadcast (P a power of two) and
 * dissemination barrier, against the simulation, with the gap below and
 * above a message's time. */
Test(loggp, predict_equals_simulation)
{
    static const char *const params[] = {"", ",g=9000", ",o=200,L=100,G=1"};
    for (int k = 0; k < 3; k++)
        for (int P = 2; P <= 32; P *= 2) {
            char spec[96];
            snprintf(spec, sizeof spec, "loggp:p=%d%s", P, params[k]);
            for (int64_t s = 1; s <= 10000; s *= 10)
                p_expect_exact(spec, "broadcast", "binomial", 0, s, 0, NULL);
        }
    for (int k = 0; k < 3; k++)
        for (int P = 2; P <= 17; P++) {
            char spec[96];
            snprintf(spec, sizeof spec, "loggp:p=%d%s", P, params[k]);
            p_expect_exact(spec, "barrier", "dissemination", 0, 1, 0, NULL);
        }
    /* the defaults: ceil(log2 8) (2o + L) = 3 x 5500 ns */
    cr_expect_eq(p_expect_exact("loggp:p=8", "barrier", "dissemination", 0, 1, 0, NULL), 16500);
    p_expect_none("loggp:p=8", "broadcast", "binomial", 100000, "eager");
    p_expect_none("loggp:p=8", "allreduce", "ring", 64, "not allreduce/ring");
}

/* The engine reuses the slots of finished eager messages (issue 17): a
 * ping-pong, where every message reuses the slot of the one before, still
 * takes its closed-form time N hops, on every parameter set whose gap fits
 * in the two hops between a host's sends (and between its receives). */
Test(loggp, reused_message_slots)
{
    enum { N = 200 };
    for (int k = 0; k < NSETS; k++) {
        const lgp_t *s = &sets[k];
        char spec[256];
        if (gap(s, 8) > 2 * hop(s, 8))
            continue;
        spec_of(s, 2, spec, sizeof spec);
        cs_program_t *p = cs_program_new(2);
        int32_t prev[2] = {-1, -1};
        for (int i = 0; i < N; i++) {
            int from = i % 2, to = 1 - from;
            int32_t snd = cs_program_send(p, from, to, 8, 0);
            int32_t rcv = cs_program_recv(p, to, from, 8, 0);
            if (prev[from] >= 0)
                cs_program_dep(p, snd, prev[from], CS_DEP_AFTER);
            prev[to] = rcv;
        }
        run_t r = run_prog(spec, p);
        cr_expect_eq(r.res.finish, (cs_tick_t)N * hop(s, 8), "%s: %lld, want %lld", spec,
                     (long long)r.res.finish, (long long)(N * hop(s, 8)));
        run_free(&r);
        cs_program_free(p);
    }
}
