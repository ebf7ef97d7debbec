/*
 * test_alphabeta.c - the alpha-beta machine built from its spec string:
 * parameter conversion (units, ticks, fractional beta) and the lecture's
 * scenarios end to end, expected values from the lecture's formulas.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/exec.h"
#include "machines/machine.h"
#include "predict.h"

/* Runs `n`-byte messages src[i] -> dst[i] at time 0; returns recv end times. */
static void scenario(const char *spec, int nf, const int *src, const int *dst, int64_t n,
                     cs_net_mode_t mode, cs_tick_t *end, double *tick)
{
    cs_machine_t *m;
    cs_error_t err;
    cs_exec_result_t res;
    cs_exec_opts_t o;
    int32_t r[16];
    cr_assert_eq(cs_machine_new(spec, &m, &err), CS_OK, "%s", err.msg);
    cs_program_t *p = cs_program_new(cs_machine_nodes(m));
    for (int i = 0; i < nf; i++) {
        cs_program_send(p, src[i], dst[i], n, i);
        r[i] = cs_program_recv(p, dst[i], src[i], n, i);
    }
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK);
    cs_exec_env_t env;
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    o.record_op_times = 1;
    o.mode = mode;
    cr_assert_eq(cs_exec_run(&env, p, &o, &res, &err), CS_OK, "%s", err.msg);
    for (int i = 0; i < nf; i++)
        end[i] = res.ops[r[i]].end;
    *tick = m->tick_seconds;
    cs_exec_result_destroy(&res);
    cs_program_free(p);
    cs_machine_free(m);
}

/* The four line scenarios of the lecture (§5) for several alpha, beta, n. */
Test(alphabeta, lecture_scenarios_from_spec)
{
    const struct { const char *alpha, *beta; double a, b; } ab[] = {
        {"1us", "1ns", 1e-6, 1e-9}, {"3us", "2ns", 3e-6, 2e-9}, {"500ns", "0.25ns", 500e-9, 0.25e-9}};
    const int64_t sizes[] = {4096, 10000, 1 << 20};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++)
            for (int mode = 0; mode < 2; mode++) {
                char spec[200];
                cs_tick_t e[4];
                double tick;
                int64_t n = sizes[j];
                snprintf(spec, sizeof spec, "alphabeta:topo=line,p=8,alpha=%s,beta=%s,packet=4KiB",
                         ab[i].alpha, ab[i].beta);
                /* times in seconds from the formulas; ticks are 1 ps */
                double one = ab[i].a + ab[i].b * (double)n, two = ab[i].a + 2 * ab[i].b * (double)n;
                int s1[2] = {0, 6}, d1[2] = {2, 3};
                scenario(spec, 2, s1, d1, n, (cs_net_mode_t)mode, e, &tick);
                cr_assert_float_eq((double)e[0] * tick, one, 1e-15);
                cr_assert_float_eq((double)e[1] * tick, one, 1e-15);
                int s2[2] = {1, 7}, d2[2] = {6, 4};
                scenario(spec, 2, s2, d2, n, (cs_net_mode_t)mode, e, &tick);
                cr_assert_float_eq((double)e[0] * tick, one, 1e-15);
                cr_assert_float_eq((double)e[1] * tick, one, 1e-15);
                int s3[2] = {1, 4}, d3[2] = {6, 7};
                scenario(spec, 2, s3, d3, n, (cs_net_mode_t)mode, e, &tick);
                double unit = ab[i].b * 4096; /* packet mode: within one unit */
                for (int k = 0; k < 2; k++)
                    cr_assert(fabs((double)e[k] * tick - two) <= (mode ? 1e-15 : unit + 1e-15),
                              "scenario 3, %s mode %d: %g vs %g", spec, mode, (double)e[k] * tick, two);
                int s4[4] = {0, 0, 0, 0}, d4[4] = {1, 3, 5, 7};
                scenario(spec, 4, s4, d4, n, (cs_net_mode_t)mode, e, &tick);
                for (int k = 0; k < 4; k++)
                    cr_assert_float_eq((double)e[k] * tick, (k + 1) * one, 1e-15);
            }
}

/* hop adds a latency per intermediate router: alpha + (H-1) hop + beta n. */
Test(alphabeta, hop_latency)
{
    for (int H = 1; H < 8; H++)
        for (int mode = 0; mode < 2; mode++) {
            cs_tick_t e;
            double tick;
            int s = 0, d = H;
            scenario("alphabeta:topo=line,p=8,alpha=2us,beta=1ns,hop=50ns", 1, &s, &d, 1000,
                     (cs_net_mode_t)mode, &e, &tick);
            cr_assert_float_eq((double)e * tick, 2e-6 + (H - 1) * 50e-9 + 1000e-9, 1e-15);
        }
}

Test(alphabeta, spec_errors_name_the_key)
{
    cs_machine_t *m;
    cs_error_t err;
    cr_assert_eq(cs_machine_new("alphabeta:topo=ring,p=8,alpha=1.5ps", &m, &err), CS_ERR_RANGE);
    cr_assert(strstr(err.msg, "'alpha'"), "%s", err.msg);
    cr_assert_neq(cs_machine_new("alphabeta:topo=blob", &m, &err), CS_OK);
    cr_assert(strstr(err.msg, "hypercube"), "lists the valid topologies: %s", err.msg);
    cr_assert_neq(cs_machine_new("alphabeta:topo=ring,foo=1", &m, &err), CS_OK);
    cr_assert(strstr(err.msg, "foo") && strstr(err.msg, "beta"), "%s", err.msg);
    cr_assert_neq(cs_machine_new("alphabeta:topo=mesh,p=12", &m, &err), CS_OK);
    cr_assert(strstr(err.msg, "rows"), "%s", err.msg);
    cr_assert_neq(cs_machine_new("alphabeta:topo=hypercube,p=12", &m, &err), CS_OK);
    cr_assert_neq(cs_machine_new("nosuch:p=1", &m, &err), CS_OK);
    cr_assert(strstr(err.msg, "alphabeta"), "lists the machines: %s", err.msg);
}

Test(alphabeta, parameters)
{
    cs_machine_t *m;
    cs_error_t err;
    cr_assert_eq(cs_machine_new("alphabeta:topo=torus,rows=4,cols=6,alpha=1us,beta=0.5ns,packet=1KiB",
                                &m, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_machine_nodes(m), 24);
    cr_assert_eq(m->net.send_overhead, 1000000);
    cr_assert_eq(m->net.ser_num * 2, m->net.ser_den * 1000); /* 500 ticks per byte */
    cr_assert_eq(m->net.unit_bytes, 1024);
    cr_assert_eq(m->grid_rows, 4);
    cr_assert_eq(m->grid_cols, 6);
    cs_machine_free(m);
}

/* ---- --predict: the lecture's closed forms ----------------------------------- */

/* Every form equals the simulation where the lecture's assumptions hold:
 * a complete graph (no message shares a channel), P | n, no compute. */
Test(alphabeta, predict_equals_simulation_complete)
{
    static const struct { const char *coll, *algo; } forms[] = {
        {"broadcast", "binomial"}, {"reduce", "binomial"}, {"broadcast", "flat"},
        {"reduce", "flat"}, {"scatter", "flat"}, {"gather", "flat"}, {"scatter", "binomial"},
        {"gather", "binomial"}, {"allgather", "ring"}, {"reduce-scatter", "ring"},
        {"allreduce", "ring"}, {"broadcast", "scatter-allgather"}, {"allreduce", "reduce-bcast"},
        {"allgather", "gather-bcast"}, {"barrier", "tree"}, {"barrier", "flat"},
    };
    static const int Ps[] = {2, 3, 4, 5, 8, 12, 16};
    static const int64_t per_rank[] = {1, 64, 600, 5000};
    for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
        for (size_t k = 0; k < sizeof per_rank / sizeof *per_rank; k++)
            for (size_t f = 0; f < sizeof forms / sizeof *forms; f++) {
                char spec[96];
                snprintf(spec, sizeof spec, "alphabeta:topo=complete,p=%d", Ps[i]);
                /* vectors a multiple of P, blocks as they are */
                cs_coll_kind_t kind;
                cs_error_t err;
                cr_assert_eq(cs_coll_parse(forms[f].coll, &kind, &err), CS_OK);
                int vector = kind == CS_COLL_BROADCAST || kind == CS_COLL_REDUCE ||
                             kind == CS_COLL_ALLREDUCE;
                p_expect_exact(spec, forms[f].coll, forms[f].algo, 0,
                               vector ? per_rank[k] * Ps[i] : per_rank[k], 0, NULL);
            }
}

/* The ring algorithms on a ring: every step is between neighbours. */
Test(alphabeta, predict_equals_simulation_ring)
{
    for (int P = 2; P <= 12; P += 5)
        for (int64_t m = 1; m <= 4096; m *= 8) {
            char spec[96];
            snprintf(spec, sizeof spec, "alphabeta:topo=ring,p=%d,alpha=2us,beta=0.5ns", P);
            p_expect_exact(spec, "allgather", "ring", 0, m, 0, NULL);
            p_expect_exact(spec, "reduce-scatter", "ring", 0, m, 0, NULL);
            p_expect_exact(spec, "allreduce", "ring", 0, m * P, 0, NULL);
        }
}

/* The note's table (alpha-beta.md §11, alpha = beta = 1, n the total). */
Test(alphabeta, predict_lecture_table)
{
    static const struct { int P; int64_t n; double tree, dc, ag, bcast, ar; } t[] = {
        {4, 8, 18, 8, 9, 17, 18}, {8, 8, 27, 10, 14, 24, 28}, {8, 64, 195, 59, 63, 122, 126}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        char spec[96];
        int64_t m = t[i].n / t[i].P;
        snprintf(spec, sizeof spec, "alphabeta:topo=complete,p=%d,alpha=1ns,beta=1ns,tick=1ns",
                 t[i].P);
        cr_expect_eq(p_expect_exact(spec, "broadcast", "binomial", 0, t[i].n, 0, NULL), t[i].tree);
        cr_expect_eq(p_expect_exact(spec, "scatter", "binomial", 0, m, 0, NULL), t[i].dc);
        cr_expect_eq(p_expect_exact(spec, "allgather", "ring", 0, m, 0, NULL), t[i].ag);
        cr_expect_eq(p_expect_exact(spec, "broadcast", "scatter-allgather", 0, t[i].n, 0, NULL),
                     t[i].bcast);
        cr_expect_eq(p_expect_exact(spec, "allreduce", "ring", 0, t[i].n, 0, NULL), t[i].ar);
    }
}

/* An algorithm the lecture gives no formula for says so. */
Test(alphabeta, predict_none_without_formula)
{
    p_expect_none("alphabeta:topo=complete,p=8", "barrier", "dissemination", 1, "no closed form");
    p_expect_none("alphabeta:topo=complete,p=8", "alltoall", "pairwise", 64, "no closed form");
}
