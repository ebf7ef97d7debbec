/*
 * test_cns1.c - the CNS-1 machine against the paper's run-time model
 * (Müller, ICSI TR-93-082; reference/cns1.md §3-§6).  Every expected value
 * is computed here from the paper's formulas.
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "../coll/harness.h"
#include "machines/cns1_ni.h"
#include "predict.h"

#define OV 5
#define VLR 32

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* x = ceil(n_p/vlr) messages of m_e = ceil(n_p/x) elements, m_length = 4 m_e + 9 */
static void msg_shape(int64_t np, int64_t *x, int64_t *ml)
{
    *x = ceil_div(np, VLR);
    *ml = 4 * ceil_div(np, *x) + 9;
}

/* §4: T(p, n_p) = 4ov + (m_length + 1)(p - 1) ceil(n_p/vlr) */
static int64_t T_bound(int64_t p, int64_t np)
{
    int64_t x, ml;
    msg_shape(np, &x, &ml);
    return 4 * OV + (ml + 1) * (p - 1) * x;
}

/* §5.3, n_p <= vlr: (4ov + m_length + 1)(p - 1) */
static int64_t T_short(int64_t p, int64_t np)
{
    int64_t x, ml;
    msg_shape(np, &x, &ml);
    return (4 * OV + ml + 1) * (p - 1);
}

/* §5.2: T_2I = 4ov + (m_length + 1)(p/2) ceil(n_p/vlr), p even */
static int64_t T_2I(int64_t p, int64_t np)
{
    int64_t x, ml;
    msg_shape(np, &x, &ml);
    return 4 * OV + (ml + 1) * (p / 2) * x;
}

/* §5.2-5.3: T'_2I = T_2I,2L = 4ov + (ceil(m_length/2) + 1)(p - 1) ceil(n_p/vlr) */
static int64_t T_fast(int64_t p, int64_t np)
{
    int64_t x, ml;
    msg_shape(np, &x, &ml);
    return 4 * OV + (ceil_div(ml, 2) + 1) * (p - 1) * x;
}

/* Runs an all-gather of n_p elements per node on `spec` (p nodes) with the
 * machine's ring hint, as `collsim run` does.  *h_out (if non-NULL) keeps
 * the run for statistics; the caller frees it with h_done. */
static cs_tick_t allgather(const char *spec, const char *algo, int64_t np, int use_hint,
                           h_run_t *h_out)
{
    cs_machine_t *m;
    cs_error_t err;
    cs_coll_kind_t kind;
    const cs_coll_algo_t *a;
    cr_assert_eq(cs_machine_new(spec, &m, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_coll_parse("allgather", &kind, &err), CS_OK);
    cr_assert_eq(cs_coll_find(kind, algo, &a, &err), CS_OK, "%s", err.msg);
    cs_coll_hints_t hints = {.ring = use_hint ? m->ring_order : NULL,
                             .grid_rows = m->grid_rows, .grid_cols = m->grid_cols};
    h_run_t r = h_run_algo(spec, a, 0, 4 * np, 0, NULL, CS_NET_PACKET, 0, &hints);
    cr_assert_eq(r.rc, CS_OK, "%s on %s, n_p=%lld: %s", algo, spec, (long long)np, r.err.msg);
    cs_tick_t t = r.finish;
    if (h_out)
        *h_out = r;
    else
        h_done(&r);
    cs_machine_free(m);
    return t;
}

static void spec_of(char *buf, size_t len, int64_t p, const char *extra)
{
    if (p >= 32)
        snprintf(buf, len, "cns1:rings=%lld%s", (long long)(p / 32), extra);
    else
        snprintf(buf, len, "cns1:rings=1,ring=%lld%s", (long long)p, extra);
}

Test(cns1, ring_allgather_meets_the_lower_bound, .timeout = 600)
{
    /* under the sanitizers up to 128 nodes and the whole machine once: the
     * ring's code is the same at every size (the plain pass runs them all) */
#if defined(__SANITIZE_ADDRESS__)
    static const int64_t ps[] = {4, 32, 64, 128};
#else
    static const int64_t ps[] = {4, 32, 64, 128, 256, 512};
#endif
    static const int64_t nps[] = {33, 64, 100, 257};
    char spec[96];
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++)
        for (size_t j = 0; j < sizeof nps / sizeof *nps; j++) {
            spec_of(spec, sizeof spec, ps[i], "");
            cr_expect_eq(allgather(spec, "cns-ring", nps[j], 1, NULL), T_bound(ps[i], nps[j]),
                         "p=%lld n_p=%lld", (long long)ps[i], (long long)nps[j]);
        }
    /* the whole 1024-node machine, once */
    cr_expect_eq(allgather("cns1:rings=32", "cns-ring", 64, 1, NULL), T_bound(1024, 64));
}

Test(cns1, short_vectors_forward_only_after_delivery)
{
    /* n_p <= vlr: one message per node, so a node forwards only after the
     * whole message arrived: (4ov + m_length + 1)(p - 1) */
    static const int64_t ps[] = {4, 32, 128};
    static const int64_t nps[] = {1, 16, 32};
    char spec[96];
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++) {
            spec_of(spec, sizeof spec, ps[i], "");
            cr_expect_eq(allgather(spec, "cns-ring", nps[j], 1, NULL), T_short(ps[i], nps[j]),
                         "p=%lld n_p=%lld", (long long)ps[i], (long long)nps[j]);
        }
}

Test(cns1, faster_interfaces)
{
    static const int64_t ps[] = {4, 32, 128, 256};
    static const int64_t nps[] = {33, 64, 100};
    char spec[96];
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 3; j++) {
            int64_t p = ps[i], np = nps[j], x, ml;
            msg_shape(np, &x, &ml);
            /* two processor links: the two-way ring, 4ov apart (§5.2) */
            spec_of(spec, sizeof spec, p, ",iface=double");
            cr_expect_eq(allgather(spec, "cns-two-way", np, 1, NULL), T_2I(p, np),
                         "iface=double p=%lld n_p=%lld", (long long)p, (long long)np);
            /* every link twice as fast, the original ring (§5.3) */
            spec_of(spec, sizeof spec, p, ",links=2x");
            cr_expect_eq(allgather(spec, "cns-ring", np, 1, NULL), T_fast(p, np),
                         "links=2x p=%lld n_p=%lld", (long long)p, (long long)np);
            /* one processor link twice as fast (§5.2): the paper's T'_2I
             * is out of reach, because the positive direction of the
             * two-way ring carries (p/2)x messages over 1 B/cycle links,
             * m_length + 1 cycles each: at least T_2I.  Alternating through
             * one buffer every y = ceil(m_length/2) + 1 cycles it needs at
             * most 2y per positive message. */
            spec_of(spec, sizeof spec, p, ",iface=fast");
            int64_t t = allgather(spec, "cns-two-way", np, 1, NULL);
            int64_t y = ceil_div(ml, 2) + 1;
            cr_expect(t >= T_2I(p, np) && t > T_fast(p, np),
                      "iface=fast p=%lld n_p=%lld: %lld, T_2I %lld", (long long)p, (long long)np,
                      (long long)t, (long long)T_2I(p, np));
            cr_expect(t <= 4 * OV + 2 * y * (p / 2) * x + ml + 1, "iface=fast p=%lld: %lld",
                      (long long)p, (long long)t);
        }
}

Test(cns1, snake_ring_uses_every_link_for_one_ring_edge)
{
    /* the snake (the machine's ring hint): every ring edge its own link, so
     * a link carries exactly the anz = x(p-1) messages of one edge and
     * never waits; the row-major ring is slower (its wrap edges are 2 and 4
     * hops long) */
    h_run_t r;
    int64_t np = 64, x, ml;
    msg_shape(np, &x, &ml);
    cs_tick_t snake = allgather("cns1:rings=4", "cns-ring", np, 1, &r);
    cr_expect_eq(snake, T_bound(128, np));
    int used = 0;
    for (int c = 0; c < cs_topo_channels(r.m->topo); c++) {
        const cs_chan_stats_t *s = cs_net_chan_stats(r.res.net, c);
        cr_expect(s->units == 0 || s->units == x * 127, "channel %d: %lld messages", c,
                  (long long)s->units);
        cr_expect_leq(s->peak_k, 1, "channel %d", c);
        used += s->units > 0;
    }
    cr_expect_eq(used, 128); /* one channel per ring edge */
    h_done(&r);
    cs_tick_t rowmajor = allgather("cns1:rings=4", "cns-ring", np, 0, NULL);
    cr_expect_gt(rowmajor, snake);
}

Test(cns1, neighbour_transfer_timeline)
{
    /* §3: one message of m_length bytes between neighbours takes
     * 4ov + 1 + m_length; a second one on the same link starts
     * m_length + 1 cycles after the first */
    cs_machine_t *m;
    cs_error_t err;
    cr_assert_eq(cs_machine_new("cns1:rings=1,ring=4", &m, &err), CS_OK);
    for (int64_t np = 1; np <= VLR; np += 7) {
        int64_t x, ml;
        msg_shape(np, &x, &ml);
        cs_program_t *p = cs_program_new(4);
        cs_program_send(p, 0, 1, 4 * np, 0);
        cs_program_send(p, 0, 1, 4 * np, 1);
        int32_t r0 = cs_program_recv(p, 1, 0, 4 * np, 0);
        int32_t r1 = cs_program_recv(p, 1, 0, 4 * np, 1);
        cr_assert_eq(cs_program_finalize(p, &err), CS_OK);
        cs_exec_env_t env;
        cs_exec_opts_t o;
        cs_exec_result_t res;
        cs_machine_exec_env(m, &env);
        cs_exec_opts_default(&o);
        o.record_op_times = 1;
        cr_assert_eq(cs_exec_run(&env, p, &o, &res, &err), CS_OK, "%s", err.msg);
        cr_expect_eq(res.ops[r0].end, 4 * OV + 1 + ml, "n_p=%lld", (long long)np);
        cr_expect_eq(res.ops[r1].end, 4 * OV + 1 + ml + ml + 1, "n_p=%lld", (long long)np);
        cs_exec_result_destroy(&res);
        cs_program_free(p);
    }
    cs_machine_free(m);
}

Test(cns1, every_suite_algorithm_validates)
{
    h_expect_all_validate("cns1:rings=4", 1024, 3, NULL);
}

Test(cns1, spec_errors_name_the_key)
{
    cs_machine_t *m;
    cs_error_t err;
    cr_expect_neq(cs_machine_new("cns1:rings=0", &m, &err), CS_OK);
    cr_expect(strstr(err.msg, "rings") != NULL, "%s", err.msg);
    cr_expect_neq(cs_machine_new("cns1:rings=2,iface=triple", &m, &err), CS_OK);
    cr_expect(strstr(err.msg, "iface") != NULL, "%s", err.msg);
    cr_assert_eq(cs_machine_new("cns1:rings=2", &m, &err), CS_OK);
    cr_expect_eq(cs_machine_nodes(m), 64);
    cr_expect_str_eq(m->spec, "cns1:rings=2,ring=32,ov=5,vlr=32,cycle=8ns,iface=single,links=1x,"
                              "bound=processor");
    cs_machine_free(m);
}

/* --predict: the paper's lower bound T(p, n_p), met by the ring algorithm
 * for x >= 2 messages per vector, and its short-vector time for x = 1
 * (reference/cns1.md §4, §5.3, table §10); the design alternatives of §5
 * where the paper's forms are the simulated ones. */
Test(cns1, predict_equals_simulation)
{
    static const int Ps[] = {4, 8, 32};
    static const int64_t bytes[] = {4, 128, 132, 256, 400};
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 5; k++) {
            char spec[64];
            snprintf(spec, sizeof spec, "cns1:rings=1,ring=%d", Ps[i]);
            p_expect_exact(spec, "allgather", "cns-ring", 0, bytes[k], 0, NULL);
        }
    /* the note's numbers: p = 32, n_p = 64 -> 8576; p = 32, n_p = 100 -> 13660 */
    cr_expect_eq(p_expect_exact("cns1:rings=1", "allgather", "cns-ring", 0, 256, 0, NULL), 8576);
    cr_expect_eq(p_expect_exact("cns1:rings=1", "allgather", "cns-ring", 0, 400, 0, NULL), 13660);
    /* the cylinder's snake: p = 128 */
    cr_expect_eq(p_expect_exact("cns1:rings=4", "allgather", "cns-ring", 0, 256, 0, NULL),
                 20 + 138 * 127 * 2);
    /* 2I: the two-way ring; 2I,2L */
    cr_expect_eq(p_expect_exact("cns1:rings=1,iface=double", "allgather", "cns-two-way", 0, 256,
                                0, NULL), 4436);
    cr_expect_eq(p_expect_exact("cns1:rings=1,links=2x", "allgather", "cns-ring", 0, 256, 0, NULL),
                 4360);
}

/* The bound holds for every allgather; other collectives have no model. */
Test(cns1, predict_bound_and_none)
{
    cs_model_t mo;
    cs_error_t err;
    cr_assert_eq(p_model("cns1:rings=1", "allgather", "ring", 0, 256, 0, NULL, &mo, &err), CS_OK);
    cr_expect_eq(mo.form[0].ticks, 8576);
    cs_tick_t sim = h_time("cns1:rings=1", "allgather", "ring", 0, 256, 0, NULL, CS_NET_PACKET);
    cr_expect_geq((double)sim, mo.form[0].ticks, "a lower bound");
    p_expect_none("cns1:rings=1", "broadcast", "binomial", 256, "allgather");
}
