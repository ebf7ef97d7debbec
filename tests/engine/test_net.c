/*
 * test_net.c - the network engine against the rules of the alpha-beta
 * lecture (../shared/reference/alpha-beta.md §2, §3, §5), in both modes.
 * Every expected value is computed here from the lecture's formulas.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "engine/exec.h"
#include "core/program.h"
#include "topo/topo.h"

typedef struct flow {
    int src, dst;
    int64_t bytes;
} flow_t;

typedef struct setup {
    cs_topo_t *topo;
    cs_net_params_t np;
} setup_t;

static setup_t line_setup(int p, cs_tick_t alpha, int64_t beta, cs_tick_t hop, int64_t unit)
{
    setup_t s;
    cs_error_t err;
    cr_assert_eq(cs_topo_new_line(p, &s.topo, &err), CS_OK);
    cs_net_params_default(&s.np);
    s.np.send_overhead = alpha;
    s.np.ser_num = beta;
    s.np.router_lat = hop;
    s.np.unit_bytes = unit;
    return s;
}

/* Runs the flows (all posted at time 0) and stores each recv's end time. */
static void run_flows(setup_t *s, cs_net_mode_t mode, const flow_t *f, int nf, cs_tick_t *end,
                      cs_exec_result_t *res_out)
{
    cs_program_t *p = cs_program_new(cs_topo_nodes(s->topo));
    int32_t *recv = malloc(sizeof(int32_t) * (size_t)nf);
    cs_error_t err;
    cs_exec_env_t env = {s->topo, &s->np, 0, 1, 1e-12, NULL, NULL};
    cs_exec_opts_t o;
    cs_exec_result_t res;
    for (int i = 0; i < nf; i++) {
        cr_assert_geq(cs_program_send(p, f[i].src, f[i].dst, f[i].bytes, i), 0);
        recv[i] = cs_program_recv(p, f[i].dst, f[i].src, f[i].bytes, i);
    }
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK, "%s", err.msg);
    cs_exec_opts_default(&o);
    o.record_op_times = 1;
    o.mode = mode;
    cr_assert_eq(cs_exec_run(&env, p, &o, &res, &err), CS_OK, "%s", err.msg);
    for (int i = 0; i < nf; i++)
        end[i] = res.ops[recv[i]].end;
    if (res_out)
        *res_out = res;
    else
        cs_exec_result_destroy(&res);
    free(recv);
    cs_program_free(p);
}

static const cs_net_mode_t modes[2] = {CS_NET_PACKET, CS_NET_FLUID};

/* Scenarios 1 and 2: independent paths, and overlapping paths in opposite
 * directions (rule 2), both cost alpha + beta*n. */
Test(net, lecture_no_congestion)
{
    const cs_tick_t alpha = 1000000; /* 1 us in ps */
    const int64_t beta = 1000;       /* 1 ns per byte */
    const flow_t sc1[2] = {{0, 2, 100000}, {6, 3, 100000}};
    const flow_t sc2[2] = {{1, 6, 100000}, {7, 4, 100000}};
    for (int mi = 0; mi < 2; mi++) {
        setup_t s = line_setup(8, alpha, beta, 0, 4096);
        cs_tick_t end[2];
        run_flows(&s, modes[mi], sc1, 2, end, NULL);
        for (int i = 0; i < 2; i++)
            cr_assert_eq(end[i], alpha + beta * 100000, "scenario 1 mode %d flow %d: %lld", mi, i,
                         (long long)end[i]);
        run_flows(&s, modes[mi], sc2, 2, end, NULL);
        for (int i = 0; i < 2; i++)
            cr_assert_eq(end[i], alpha + beta * 100000, "scenario 2 mode %d flow %d: %lld", mi, i,
                         (long long)end[i]);
        cs_topo_free(s.topo);
    }
}

/* Scenario 3: same direction over shared links: alpha + 2*beta*n (rule 5);
 * packet mode within one packet time of fluid. */
Test(net, lecture_two_way_congestion)
{
    const cs_tick_t alpha = 1000000;
    const int64_t beta = 1000, unit = 4096;
    const int64_t sizes[] = {1, 4096, 100000, 1 << 20, 12345};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        int64_t n = sizes[k];
        flow_t sc3[2] = {{1, 6, n}, {4, 7, n}};
        setup_t s = line_setup(8, alpha, beta, 0, unit);
        cs_tick_t pk[2], fl[2], want = alpha + 2 * beta * n, unit_t = beta * unit;
        run_flows(&s, CS_NET_FLUID, sc3, 2, fl, NULL);
        run_flows(&s, CS_NET_PACKET, sc3, 2, pk, NULL);
        if (n == 1) /* one unit each: the shared channel serialises two 1-byte units */
            want = alpha + 2 * beta;
        for (int i = 0; i < 2; i++) {
            cr_assert_eq(fl[i], want, "fluid n=%lld flow %d: %lld != %lld", (long long)n, i,
                         (long long)fl[i], (long long)want);
            cr_assert_leq(llabs(pk[i] - fl[i]), unit_t, "packet n=%lld flow %d: %lld vs %lld",
                          (long long)n, i, (long long)pk[i], (long long)fl[i]);
        }
        cr_assert_eq(pk[0] > pk[1] ? pk[0] : pk[1], want, "packet: the later flow ends at the formula");
        cs_topo_free(s.topo);
    }
}

/* Rule 3: a root sending to 4 peers serialises: the i-th ends at i*(alpha+beta*n). */
Test(net, lecture_one_send_at_a_time)
{
    const cs_tick_t alpha = 1000000;
    const int64_t beta = 1000, n = 50000;
    flow_t f[4] = {{0, 1, n}, {0, 3, n}, {0, 5, n}, {0, 7, n}};
    for (int mi = 0; mi < 2; mi++) {
        setup_t s = line_setup(8, alpha, beta, 0, 4096);
        cs_tick_t end[4];
        run_flows(&s, modes[mi], f, 4, end, NULL);
        for (int i = 0; i < 4; i++)
            cr_assert_eq(end[i], (i + 1) * (alpha + beta * n), "mode %d send %d: %lld", mi, i,
                         (long long)end[i]);
        cs_topo_free(s.topo);
    }
}

/* Rule 3 on the receiving side: two senders to one node serialise too. */
Test(net, one_receive_at_a_time)
{
    const cs_tick_t alpha = 500;
    const int64_t beta = 3, n = 1000;
    flow_t f[2] = {{0, 2, n}, {4, 2, n}};
    for (int mi = 0; mi < 2; mi++) {
        setup_t s = line_setup(5, alpha, beta, 0, 64);
        cs_tick_t end[2];
        run_flows(&s, modes[mi], f, 2, end, NULL);
        cr_assert_eq(end[0], alpha + beta * n);
        cr_assert_eq(end[1], 2 * (alpha + beta * n));
        cs_topo_free(s.topo);
    }
}

/* §3, the pipelined 1-D quiz: T = a + t(P-1) + t(n-1) with hop = beta = t. */
Test(net, pipelined_line_quiz)
{
    const int ps[] = {2, 3, 5, 8, 17, 64};
    const int64_t ns[] = {1, 2, 4, 5, 100, 1000};
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++)
        for (size_t j = 0; j < sizeof ns / sizeof *ns; j++)
            for (int mi = 0; mi < 2; mi++) {
                int P = ps[i];
                int64_t n = ns[j], a = 10, t = 1 + (int64_t)j;
                setup_t s = line_setup(P, a, t, t, 1);
                flow_t f = {0, P - 1, n};
                cs_tick_t end;
                run_flows(&s, modes[mi], &f, 1, &end, NULL);
                cr_assert_eq(end, a + t * (P - 1) + t * (n - 1),
                             "P=%d n=%lld t=%lld mode %d: %lld", P, (long long)n, (long long)t,
                             mi, (long long)end);
                cs_topo_free(s.topo);
            }
}

/* Rule 5: k equal flows that share exactly one channel each see
 * alpha + beta*n*k.  The flows come from k sources through a hub H to a
 * node X and on to k destinations, so H->X is the only shared channel and
 * each flow has its own input buffer at H: fluid is exact, packet mode's
 * round-robin puts every flow within k units of the formula and the last
 * exactly on it. */
Test(net, k_way_congestion)
{
    const cs_tick_t alpha = 7000;
    const int64_t beta = 5, n = 64 * 1024, unit = 1024;
    for (int k = 1; k <= 8; k++) {
        flow_t f[8];
        cs_tick_t pk[8], fl[8], want = alpha + beta * n * k, latest = 0;
        int hub = k, x = k + 1;
        for (int i = 0; i < k; i++)
            f[i] = (flow_t){i, k + 2 + i, n};
        for (int mi = 0; mi < 2; mi++) {
            setup_t s = line_setup(2, alpha, beta, 0, unit);
            cs_exec_result_t res;
            cs_topo_free(s.topo);
            s.topo = cs_topo_new_custom(2 * k + 2, "merge");
            for (int i = 0; i < k; i++)
                cs_topo_add_link(s.topo, i, hub);
            int shared = cs_topo_add_link(s.topo, hub, x);
            for (int i = 0; i < k; i++)
                cs_topo_add_link(s.topo, x, k + 2 + i);
            run_flows(&s, modes[mi], f, k, mi ? fl : pk, &res);
            cr_assert_eq(cs_net_chan_stats(res.net, shared)->peak_k, k, "peak k on the shared channel");
            cr_assert_eq(cs_net_chan_stats(res.net, shared)->bytes, n * k);
            cr_assert_eq(cs_net_chan_stats(res.net, shared ^ 1)->bytes, 0);
            cr_assert_eq(cs_net_chan_stats(res.net, 0)->peak_k, 1);
            cs_exec_result_destroy(&res);
            cs_topo_free(s.topo);
        }
        for (int i = 0; i < k; i++) {
            cr_assert_eq(fl[i], want, "fluid k=%d flow %d: %lld != %lld", k, i, (long long)fl[i],
                         (long long)want);
            cr_assert_leq(want - pk[i], (cs_tick_t)k * beta * unit, "packet k=%d flow %d: %lld",
                          k, i, (long long)pk[i]);
            cr_assert_geq(want - pk[i], 0, "packet k=%d flow %d later than the formula", k, i);
            if (pk[i] > latest)
                latest = pk[i];
        }
        cr_assert_eq(latest, want, "packet k=%d: last flow", k);
    }
}

/* On a line the k flows also meet upstream, one merge per node (a parking
 * lot): packet mode keeps the channel busy, so the last flow still ends
 * exactly at alpha + beta*n*k, and fluid gives every flow exactly that. */
Test(net, k_way_on_a_line)
{
    const cs_tick_t alpha = 7000;
    const int64_t beta = 5, n = 64 * 1024, unit = 1024;
    for (int k = 1; k <= 8; k++) {
        flow_t f[8];
        cs_tick_t pk[8], fl[8], want = alpha + beta * n * k, latest = 0;
        for (int i = 0; i < k; i++)
            f[i] = (flow_t){7 - i, 8 + i, n}; /* all cross channel 7->8 */
        for (int mi = 0; mi < 2; mi++) {
            setup_t s = line_setup(16, alpha, beta, 0, unit);
            cs_exec_result_t res;
            run_flows(&s, modes[mi], f, k, mi ? fl : pk, &res);
            cr_assert_eq(cs_net_chan_stats(res.net, cs_topo_find_channel(s.topo, 7, 8))->peak_k, k);
            cs_exec_result_destroy(&res);
            cs_topo_free(s.topo);
        }
        for (int i = 0; i < k; i++) {
            cr_assert_eq(fl[i], want, "fluid k=%d flow %d", k, i);
            cr_assert_leq(pk[i], want, "packet k=%d flow %d", k, i);
            if (pk[i] > latest)
                latest = pk[i];
        }
        cr_assert_eq(latest, want, "packet k=%d: last flow", k);
    }
}

/* Back-pressure: with one buffer slot per channel a long path still delivers
 * everything, and a narrow channel downstream shows stall time upstream. */
Test(net, backpressure_and_stall)
{
    setup_t s = line_setup(4, 0, 1, 0, 16);
    int64_t num[6], den[6];
    cs_exec_result_t res;
    flow_t f = {0, 3, 16 * 100};
    cs_tick_t end;
    for (int c = 0; c < 6; c++) {
        num[c] = 1;
        den[c] = 1;
    }
    num[cs_topo_find_channel(s.topo, 2, 3)] = 4; /* last hop 4x slower */
    s.np.chan_ser_num = num;
    s.np.chan_ser_den = den;
    s.np.buf_units = 1;
    run_flows(&s, CS_NET_PACKET, &f, 1, &end, &res);
    /* cut-through: the slow last hop starts on the first unit's head and
     * then paces everything: 100 units of 64 ticks */
    cr_assert_eq(end, 100 * 64, "end %lld", (long long)end);
    cr_assert_gt(cs_net_chan_stats(res.net, cs_topo_find_channel(s.topo, 1, 2))->stall, 0);
    cr_assert_eq(cs_net_chan_stats(res.net, cs_topo_find_channel(s.topo, 2, 3))->stall, 0);
    cs_exec_result_destroy(&res);
    cs_topo_free(s.topo);
}

/* A 0-byte message still costs alpha (and crosses the network) in both modes. */
Test(net, zero_byte_message)
{
    for (int mi = 0; mi < 2; mi++) {
        setup_t s = line_setup(4, 1000, 7, 5, 64);
        flow_t f[2] = {{0, 3, 0}, {3, 1, 0}};
        cs_tick_t end[2];
        run_flows(&s, modes[mi], f, 2, end, NULL);
        cr_assert_eq(end[0], 1000 + 2 * 5, "mode %d: %lld", mi, (long long)end[0]);
        cr_assert_eq(end[1], 1000 + 1 * 5, "mode %d: %lld", mi, (long long)end[1]);
        cs_topo_free(s.topo);
    }
}

/* ---- regressions found in review ---------------------------------------- */

static cs_tick_t started_at[8];
static void note_start(void *c, uint64_t u, cs_tick_t now)
{
    (void)c;
    started_at[u] = now;
}

/* Freed ports go to waiting messages in posting order across the source's
 * and the destination's wait lists: Y (posted before X) gets node 2's
 * receive port first. */
Test(net, ports_go_in_posting_order)
{
    cs_topo_t *topo;
    cs_error_t err;
    cs_net_params_t np;
    cs_net_t *n;
    cs_net_hooks_t h = {0};
    cs_topo_new_complete(3, &topo, &err);
    cs_net_params_default(&np);
    cs_sim_t *s = cs_sim_new(CS_QUEUE_DEFAULT);
    h.started = note_start;
    cr_assert_eq(cs_net_new(s, topo, &np, CS_NET_PACKET, &h, &n, &err), CS_OK);
    cs_net_post(n, 0, 2, 100, 100, 0, 0); /* A */
    cs_net_post(n, 1, 2, 100, 100, 0, 1); /* Y: waits for 2's receive port */
    cs_net_post(n, 0, 2, 100, 100, 0, 2); /* X: waits for both ports */
    cs_sim_run(s);
    cr_assert_eq(started_at[0], 0);
    cr_assert_eq(started_at[1], 100, "Y, posted first, goes second");
    cr_assert_eq(started_at[2], 200);
    cs_net_free(n);
    cs_sim_free(s);
    cs_topo_free(topo);
}

/* Fluid mode on infinitely fast channels (beta = 0) finishes, like packet
 * mode, instead of stepping forever on one tick. */
Test(net, fluid_infinitely_fast_channel)
{
    for (int mi = 0; mi < 2; mi++) {
        setup_t s = line_setup(4, 500, 0, 0, 64);
        flow_t f[2] = {{0, 3, 1 << 20}, {1, 3, 1000}};
        cs_tick_t end[2];
        run_flows(&s, modes[mi], f, 2, end, NULL);
        cr_assert_eq(end[0], 500, "mode %d", mi);
        cr_assert_eq(end[1], 1000, "mode %d: after the first releases the receive port", mi);
        cs_topo_free(s.topo);
    }
}

static int completed_flag;
static void note_done(void *c, uint64_t u, cs_tick_t now)
{
    (void)c;
    (void)u;
    (void)now;
    completed_flag = 1;
}

/* A flow whose gate is never raised never completes, even when the missing
 * bytes are below the floating-point tolerance of a huge message. */
Test(net, fluid_gate_holds_huge_messages)
{
    for (int mi = 0; mi < 2; mi++) {
        cs_topo_t *topo;
        cs_error_t err;
        cs_net_params_t np;
        cs_net_t *n;
        cs_net_hooks_t h = {0};
        cs_topo_new_line(2, &topo, &err);
        cs_net_params_default(&np);
        np.unit_bytes = 1 << 20;
        cs_sim_t *s = cs_sim_new(CS_QUEUE_DEFAULT);
        h.completed = note_done;
        completed_flag = 0;
        cr_assert_eq(cs_net_new(s, topo, &np, modes[mi], &h, &n, &err), CS_OK);
        cs_net_post(n, 0, 1, 1000000000, 1000000000 - 1, 0, 0);
        cs_sim_run(s);
        cr_assert_eq(completed_flag, 0, "mode %d completed without its last byte", mi);
        cr_assert_eq(cs_net_active(n), 1);
        cs_net_free(n);
        cs_sim_free(s);
        cs_topo_free(topo);
    }
}

/* An odd bucket count loses nothing when buckets merge. */
Test(net, buckets_conserve_bytes)
{
    for (int nb = 2; nb <= 7; nb++) {
        setup_t s = line_setup(2, 0, 1, 0, 64);
        cs_program_t *p = cs_program_new(2);
        cs_error_t err;
        cs_exec_env_t env = {s.topo, &s.np, 0, 1, 1e-12, NULL, NULL};
        cs_exec_opts_t o;
        cs_exec_result_t res;
        cs_program_send(p, 0, 1, 12288, 0);
        cs_program_recv(p, 1, 0, 12288, 0);
        cs_program_finalize(p, &err);
        cs_exec_opts_default(&o);
        o.bucket_width = 100;
        o.max_buckets = nb;
        cr_assert_eq(cs_exec_run(&env, p, &o, &res, &err), CS_OK);
        int64_t bytes = 0, busy = 0;
        for (int b = 0; b < cs_net_bucket_count(res.net); b++) {
            const cs_chan_stats_t *st = cs_net_chan_bucket(res.net, 0, b);
            if (st) {
                bytes += st->bytes;
                busy += st->busy;
            }
        }
        cr_assert_eq(bytes, 12288, "max_buckets %d", nb);
        cr_assert_eq(busy, cs_net_chan_stats(res.net, 0)->busy);
        cs_exec_result_destroy(&res);
        cs_program_free(p);
        cs_topo_free(s.topo);
    }
}

/* ---- the engine interface ------------------------------------------------- */

/* A stand-in machine engine: records what the handle forwards to it. */
typedef struct fake_engine {
    int posts, gates;
    int last_dst;
    int64_t last_rate;
} fake_engine_t;

static int fake_freed;

static uint32_t fake_post(void *impl, int src, int ndst, const int *dst, int64_t bytes,
                          int64_t gate_bytes, int watch, const uint64_t *users)
{
    fake_engine_t *f = impl;
    (void)src, (void)bytes, (void)gate_bytes, (void)watch, (void)users;
    cr_assert_eq(ndst, 1);
    f->last_dst = dst[0];
    return (uint32_t)f->posts++;
}
static void fake_gate(void *impl, uint32_t msg, int64_t gate_bytes, int64_t rate)
{
    fake_engine_t *f = impl;
    (void)msg, (void)gate_bytes;
    f->gates++;
    f->last_rate = rate;
}
static int64_t fake_active(const void *impl) { return ((const fake_engine_t *)impl)->posts; }
static int fake_explain(const void *impl, cs_error_t *err)
{
    (void)impl;
    return cs_error_set(err, CS_ERR_DEADLOCK, "fake");
}
static const cs_chan_stats_t *fake_stats(const void *impl, int chan)
{
    static const cs_chan_stats_t zero;
    (void)impl, (void)chan;
    return &zero;
}
static void fake_free(void *impl)
{
    (void)impl;
    fake_freed++;
}

static const cs_net_ops_t fake_ops = {
    .name = "fake engine",
    .post = fake_post,
    .gate = fake_gate,
    .active = fake_active,
    .explain_stuck = fake_explain,
    .chan_stats = fake_stats,
    .free = fake_free,
};
/* The same entries under another table: identity is the table's address. */
static const cs_net_ops_t fake_ops_twin = {
    .name = "fake engine",
    .post = fake_post,
    .gate = fake_gate,
    .active = fake_active,
    .explain_stuck = fake_explain,
    .chan_stats = fake_stats,
    .free = fake_free,
};

/* cs_net_impl_of hands an engine's state only to the table that engine
 * implements: NULL for the other mode, for a machine engine's table, for a
 * twin table with the same name and entries, and for no engine at all. */
Test(net, impl_of_is_checked)
{
    cs_topo_t *topo;
    cs_error_t err;
    cs_net_params_t np;
    cs_net_t *chan[2], *fake;
    fake_engine_t f = {0};
    cs_topo_new_line(3, &topo, &err);
    cs_net_params_default(&np);
    cs_sim_t *s = cs_sim_new(CS_QUEUE_DEFAULT);
    for (int mi = 0; mi < 2; mi++)
        cr_assert_eq(cs_net_new(s, topo, &np, modes[mi], NULL, &chan[mi], &err), CS_OK);
    fake = cs_net_new_engine(&fake_ops, &f, topo);

    for (int mi = 0; mi < 2; mi++) {
        const cs_net_ops_t *own = cs_net_channel_ops(modes[mi]);
        const cs_net_ops_t *other = cs_net_channel_ops(modes[1 - mi]);
        cr_assert_neq(own, other);
        cr_assert_not_null(cs_net_impl_of(chan[mi], own), "mode %d", mi);
        cr_assert_null(cs_net_impl_of(chan[mi], other), "mode %d got the other mode's state", mi);
        cr_assert_null(cs_net_impl_of(chan[mi], &fake_ops), "mode %d", mi);
        cr_assert_null(cs_net_impl_of(fake, own), "the fake engine passed for mode %d", mi);
        cr_assert_str_eq(cs_net_engine_name(chan[mi]), cs_net_mode_name(modes[mi]));
        cr_assert_eq(cs_net_mode(chan[mi]), modes[mi]);
    }
    cr_assert_eq(cs_net_impl_of(fake, &fake_ops), &f);
    cr_assert_null(cs_net_impl_of(fake, &fake_ops_twin), "a twin table is another engine");
    cr_assert_null(cs_net_impl_of(NULL, &fake_ops));

    /* the handle forwards every call to the table */
    cr_assert_str_eq(cs_net_engine_name(fake), "fake engine");
    cr_assert_eq(cs_net_mode(fake), CS_NET_PACKET, "machine engines report mode packet");
    cr_assert_eq(cs_net_has_mcast(fake), 0);
    cr_assert_eq(cs_net_late_release(fake), 0);
    cr_assert_eq(cs_net_post(fake, 0, 2, 10, 10, 0, 7), 0u);
    cr_assert_eq(f.last_dst, 2);
    cs_net_gate_rate(fake, 0, 5, 3);
    cr_assert_eq(f.gates, 1);
    cr_assert_eq(f.last_rate, 3);
    cs_net_gate(fake, 0, 6);
    cr_assert_eq(f.last_rate, 0, "cs_net_gate is a gate without slope");
    cr_assert_eq(cs_net_active(fake), 1);
    cr_assert_eq(cs_net_error(fake, &err), CS_OK, "no error entry: no error");
    cr_assert_eq(cs_net_idle(fake), 0);
    cr_assert_eq(cs_net_cpu(fake, 1, 100, 5), 105, "no cpu entry: a calc takes its ticks");
    cr_assert_eq(cs_net_explain_stuck(fake, &err), CS_ERR_DEADLOCK);
    fake_freed = 0;
    cs_net_free(fake);
    cr_assert_eq(fake_freed, 1);

    for (int mi = 0; mi < 2; mi++)
        cs_net_free(chan[mi]);
    cs_sim_free(s);
    cs_topo_free(topo);
}

/* --mode names round-trip through the mode table. */
Test(net, mode_names)
{
    cs_error_t err;
    for (int mi = 0; mi < 2; mi++) {
        cs_net_mode_t m;
        cr_assert_eq(cs_net_parse_mode(cs_net_mode_name(modes[mi]), &m, &err), CS_OK);
        cr_assert_eq(m, modes[mi]);
        cr_assert_eq(cs_net_channel_ops(modes[mi])->mode, modes[mi]);
    }
    cr_assert_str_eq(cs_net_mode_name(CS_NET_PACKET), "packet");
    cr_assert_str_eq(cs_net_mode_name(CS_NET_FLUID), "fluid");
    cs_net_mode_t m;
    cr_assert_eq(cs_net_parse_mode("flow", &m, &err), CS_ERR_USAGE);
    cr_assert_str_eq(err.msg, "unknown mode \"flow\"; valid modes: packet, fluid");
    cr_assert_eq(cs_net_mode_max_units(CS_NET_PACKET), (int64_t)UINT32_MAX);
}
