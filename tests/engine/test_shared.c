/*
 * test_shared.c - channels that share one capacity (a half-duplex link,
 * SimGrid's SHARED sharing_policy; cs_topo_share_channels), in both engine
 * modes, against the closed form of max-min sharing: k flows over one
 * resource, whatever their directions, each get 1/k of it, so an n-byte
 * message costs alpha + beta*n*k (the lecture's k-way congestion,
 * ../shared/reference/alpha-beta.md §5, with the two directions counted
 * together).  Every expected value is computed here from that formula.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/program.h"
#include "engine/exec.h"
#include "topo/topo.h"

static const cs_net_mode_t modes[2] = {CS_NET_PACKET, CS_NET_FLUID};

typedef struct flow {
    int src, dst;
} flow_t;

/* Runs the flows (n bytes each, all posted at time 0, tags = index) and
 * stores each recv's end; returns the result for channel statistics. */
static void run(const cs_topo_t *t, const cs_net_params_t *np, cs_net_mode_t mode,
                const flow_t *f, int nf, int64_t n, cs_tick_t *end, cs_exec_result_t *out)
{
    cs_program_t *p = cs_program_new(cs_topo_nodes(t));
    int32_t recv[16];
    cs_error_t err;
    cs_exec_env_t env = {t, np, 0, 1, 1e-12, NULL, NULL};
    cs_exec_opts_t o;
    cr_assert_leq(nf, 16);
    for (int i = 0; i < nf; i++) {
        cr_assert_geq(cs_program_send(p, f[i].src, f[i].dst, n, i), 0);
        recv[i] = cs_program_recv(p, f[i].dst, f[i].src, n, i);
    }
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK, "%s", err.msg);
    cs_exec_opts_default(&o);
    o.record_op_times = 1;
    o.mode = mode;
    cr_assert_eq(cs_exec_run(&env, p, &o, out, &err), CS_OK, "%s", err.msg);
    for (int i = 0; i < nf; i++)
        end[i] = out->ops[recv[i]].end;
    cs_program_free(p);
}

static void params(cs_net_params_t *np, cs_tick_t alpha, int64_t beta, int64_t unit)
{
    cs_net_params_default(np);
    np->send_overhead = alpha;
    np->ser_num = beta;
    np->unit_bytes = unit;
}

/* Two hubs x = 0 and y = 1 joined by one link (channels 0: x->y, 1: y->x),
 * `left` leaves on x (2 .. left+1) and `right` leaves on y after them. */
static cs_topo_t *dumbbell(int left, int right, int shared)
{
    cs_topo_t *t = cs_topo_new_custom(2 + left + right, "dumbbell");
    cr_assert_eq(cs_topo_add_link(t, 0, 1), 0);
    for (int i = 0; i < left; i++)
        cs_topo_add_link(t, 2 + i, 0);
    for (int i = 0; i < right; i++)
        cs_topo_add_link(t, 2 + left + i, 1);
    if (shared)
        cs_topo_share_channels(t, 0, 1);
    return t;
}

/* The topology's groups: the resource is the lowest channel of a group,
 * groups merge, and a channel that shares with none is its own. */
Test(shared, topo_groups)
{
    cs_topo_t *t = cs_topo_new_custom(4, "groups");
    for (int i = 0; i < 3; i++)
        cs_topo_add_link(t, i, i + 1);
    cr_assert_not(cs_topo_has_shared(t));
    for (int c = 0; c < 6; c++)
        cr_assert_eq(cs_topo_channel_resource(t, c), c);
    cs_topo_share_channels(t, 3, 2);
    cr_assert(cs_topo_has_shared(t));
    cr_assert_eq(cs_topo_channel_resource(t, 3), 2);
    cr_assert_eq(cs_topo_channel_resource(t, 2), 2);
    cs_topo_share_channels(t, 5, 0);
    cs_topo_share_channels(t, 4, 3); /* merges {2,3} and {4}, then with {0,5}: */
    cs_topo_share_channels(t, 4, 5);
    for (int c = 0; c < 6; c++)
        cr_assert_eq(cs_topo_channel_resource(t, c), c == 1 ? 1 : 0, "channel %d", c);
    cs_topo_free(t);
}

/* Two opposite flows over one half-duplex link each get B/2: alpha + 2*beta*n
 * in fluid mode exactly, in packet mode the last one exactly and the other
 * within one unit; the same link full duplex gives each alpha + beta*n
 * (the control: sharing is what doubles the time). */
Test(shared, two_opposite_flows)
{
    const cs_tick_t alpha = 3000;
    const int64_t beta = 4, n = 256 * 1024, unit = 2048;
    const flow_t f[2] = {{0, 1}, {1, 0}};
    cs_net_params_t np;
    params(&np, alpha, beta, unit);
    for (int sh = 0; sh < 2; sh++)
        for (int mi = 0; mi < 2; mi++) {
            cs_topo_t *t = dumbbell(0, 0, sh);
            cs_tick_t end[2], want = alpha + beta * n * (sh ? 2 : 1);
            cs_exec_result_t res;
            run(t, &np, modes[mi], f, 2, n, end, &res);
            cs_tick_t late = end[0] > end[1] ? end[0] : end[1];
            cs_tick_t early = end[0] < end[1] ? end[0] : end[1];
            cr_assert_eq(late, want, "shared=%d mode=%d: %lld, formula %lld", sh, mi,
                         (long long)late, (long long)want);
            cr_assert_geq(early, want - (mi ? 0 : beta * unit), "shared=%d mode=%d: %lld", sh,
                          mi, (long long)early);
            /* each direction's channel counts its own bytes */
            cr_assert_eq(cs_net_chan_stats(res.net, 0)->bytes, n);
            cr_assert_eq(cs_net_chan_stats(res.net, 1)->bytes, n);
            cs_exec_result_destroy(&res);
            cs_topo_free(t);
        }
}

/* k flows, i one way and k - i the other, over the shared x-y link: each
 * gets B/k, alpha + beta*n*k (packet: all within k units, the last on it). */
Test(shared, k_flows_both_directions)
{
    const cs_tick_t alpha = 5000;
    const int64_t beta = 3, n = 64 * 1024, unit = 1024;
    cs_net_params_t np;
    params(&np, alpha, beta, unit);
    for (int k = 1; k <= 6; k++)
        for (int i = 0; i <= k; i++) {
            /* leaves: i senders on the left to i receivers on the right and
             * k - i the other way; each leaf sends or receives once */
            int left = k, right = k;
            flow_t f[6];
            for (int j = 0; j < k; j++)
                f[j] = j < i ? (flow_t){2 + j, 2 + left + j}
                             : (flow_t){2 + left + j, 2 + j};
            cs_tick_t want = alpha + beta * n * k, e[2][6];
            for (int mi = 0; mi < 2; mi++) {
                cs_topo_t *t = dumbbell(left, right, 1);
                cs_exec_result_t res;
                run(t, &np, modes[mi], f, k, n, e[mi], &res);
                cr_assert_eq(cs_net_chan_stats(res.net, 0)->bytes, (int64_t)i * n);
                cr_assert_eq(cs_net_chan_stats(res.net, 1)->bytes, (int64_t)(k - i) * n);
                cs_exec_result_destroy(&res);
                cs_topo_free(t);
            }
            cs_tick_t latest = 0;
            for (int j = 0; j < k; j++) {
                cr_assert_eq(e[1][j], want, "fluid k=%d i=%d flow %d: %lld != %lld", k, i, j,
                             (long long)e[1][j], (long long)want);
                cr_assert_leq(e[0][j], want, "packet k=%d i=%d flow %d later than the formula",
                              k, i, j);
                cr_assert_geq(e[0][j], want - (cs_tick_t)k * beta * unit,
                              "packet k=%d i=%d flow %d: %lld", k, i, j, (long long)e[0][j]);
                if (e[0][j] > latest)
                    latest = e[0][j];
            }
            cr_assert_eq(latest, want, "packet k=%d i=%d: the last flow", k, i);
        }
}

/* A shared link in the middle of longer paths, with latency: uncontended
 * (one flow) both modes give alpha + H*wire + ser(n), as on a full-duplex
 * link; two opposite flows, alpha + H*wire + 2*ser(n) in fluid mode. */
Test(shared, latency_and_one_flow)
{
    const cs_tick_t alpha = 1000, wire = 700;
    const int64_t beta = 2, n = 32 * 1024, unit = 512;
    cs_net_params_t np;
    params(&np, alpha, beta, unit);
    np.wire_lat = wire;
    for (int mi = 0; mi < 2; mi++) {
        cs_topo_t *t = dumbbell(1, 1, 1);
        cs_tick_t end[2];
        cs_exec_result_t res;
        const flow_t one = {2, 3}, two[2] = {{2, 3}, {3, 2}};
        run(t, &np, modes[mi], &one, 1, n, end, &res);
        /* packet: the last unit's cut-through adds nothing over wires */
        cr_assert_eq(end[0], alpha + 3 * wire + beta * n, "mode %d: %lld", mi, (long long)end[0]);
        cs_exec_result_destroy(&res);
        run(t, &np, modes[mi], two, 2, n, end, &res);
        if (modes[mi] == CS_NET_FLUID) {
            cr_assert_eq(end[0], alpha + 3 * wire + 2 * beta * n);
            cr_assert_eq(end[1], alpha + 3 * wire + 2 * beta * n);
        } else { /* the leaf links pipeline ahead: within a few units */
            for (int j = 0; j < 2; j++) {
                cs_tick_t d = end[j] - (alpha + 3 * wire + 2 * beta * n);
                cr_assert_leq(d < 0 ? -d : d, 2 * beta * unit, "packet flow %d: %lld", j,
                              (long long)end[j]);
            }
        }
        cs_exec_result_destroy(&res);
        cs_topo_free(t);
    }
}

/* Channels of one group with other bandwidths are refused, naming them. */
Test(shared, other_bandwidths_refused)
{
    cs_topo_t *t = dumbbell(0, 0, 1);
    int64_t num[2] = {2, 3}, den[2] = {1, 1};
    cs_net_params_t np;
    cs_program_t *p = cs_program_new(2);
    cs_error_t err = {0};
    cs_exec_opts_t o;
    cs_exec_result_t res;
    params(&np, 0, 2, 64);
    np.chan_ser_num = num;
    np.chan_ser_den = den;
    cs_exec_env_t env = {t, &np, 0, 1, 1e-12, NULL, NULL};
    cs_program_send(p, 0, 1, 100, 0);
    cs_program_recv(p, 1, 0, 100, 0);
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK);
    cs_exec_opts_default(&o);
    for (int mi = 0; mi < 2; mi++) {
        o.mode = modes[mi];
        cr_assert_neq(cs_exec_run(&env, p, &o, &res, &err), CS_OK);
        cr_assert(strstr(err.msg, "channel 1 shares its capacity with channel 0"), "%s", err.msg);
        cs_exec_result_destroy(&res);
    }
    cs_program_free(p);
    cs_topo_free(t);
}
