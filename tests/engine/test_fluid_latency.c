/*
 * test_fluid_latency.c - the fluid engine's two latency semantics and its
 * two sharing rules (cs_net_params_t.fluid_latency, .fluid_share;
 * docs/engine.md, "When the latency is paid"), against closed forms worked
 * out here by hand from the bandwidth B, the size n, the overhead alpha and
 * the path latencies.
 *
 * The network: two sources a (node 0) and b (node 1) joined to a hub h
 * (node 2), which is joined to the destination d (node 3); every channel
 * carries 1 byte per tick (B = 1), so the last link h -> d is the one both
 * flows share.  Path latencies: l_a = wire(a-h) + wire(h-d) + router,
 * l_b = wire(b-h) + wire(h-d) + router, l_a < l_b.  d receives both at
 * once (recv_ports = 0), so only the link is contended.
 *
 * Closed forms (D = l_b - l_a < n):
 * - last, equal: both share B/2 from alpha; their bytes cross at
 *   alpha + 2n, then each pays its latency: alpha + 2n + l.
 * - first, equal: a has the link alone from alpha + l_a to alpha + l_b
 *   (D bytes), then both get B/2 until a is done at alpha + l_b + 2(n - D);
 *   b has D bytes left, alone: alpha + l_b + 2n - D.
 * - first, latency-weighted: as above, but from alpha + l_b a gets
 *   B l_b / (l_a + l_b) and b gets B l_a / (l_a + l_b); a's n - D bytes
 *   take t = (n - D)(l_a + l_b) / l_b, b moves (n - D) l_a / l_b of its
 *   own meanwhile and the rest alone.
 * - one flow alone: alpha + l + n under every setting.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "core/program.h"
#include "engine/exec.h"
#include "topo/topo.h"

/* The wire latencies (ticks): a-h, b-h, h-d, and the router latency. */
enum { W_AH = 60, W_BH = 360, W_HD = 30, ROUTER = 10, ALPHA = 5 };
#define L_A (W_AH + W_HD + ROUTER) /* 100 */
#define L_B (W_BH + W_HD + ROUTER) /* 400 */

static cs_topo_t *hub(cs_tick_t *wire)
{
    cs_topo_t *t = cs_topo_new_custom(4, "hub");
    int c;
    c = cs_topo_add_link(t, 0, 2);
    wire[c] = wire[c + 1] = W_AH;
    c = cs_topo_add_link(t, 1, 2);
    wire[c] = wire[c + 1] = W_BH;
    c = cs_topo_add_link(t, 2, 3);
    wire[c] = wire[c + 1] = W_HD;
    return t;
}

/* Runs a -> d and (if both) b -> d, n bytes each, posted at 0, in `mode`
 * with the given latency rule and sharing; writes the two recvs' ends. */
static void run(int both, int64_t n, cs_net_mode_t mode, cs_net_fluid_latency_t lat,
                cs_net_fluid_share_t share, cs_tick_t *end_a, cs_tick_t *end_b)
{
    cs_tick_t wire[6];
    cs_topo_t *t = hub(wire);
    cs_net_params_t np;
    cs_error_t err;
    cs_exec_env_t env = {t, &np, 0, 1, 1e-12, NULL, NULL};
    cs_exec_opts_t o;
    cs_exec_result_t res;
    cs_program_t *p = cs_program_new(4);
    int32_t ra, rb = -1;
    cs_net_params_default(&np);
    np.chan_wire_lat = wire;
    np.router_lat = ROUTER;
    np.send_overhead = ALPHA;
    np.recv_ports = 0;
    np.unit_bytes = 64;
    np.fluid_latency = lat;
    np.fluid_share = share;
    cr_assert_geq(cs_program_send(p, 0, 3, n, 0), 0);
    ra = cs_program_recv(p, 3, 0, n, 0);
    if (both) {
        cr_assert_geq(cs_program_send(p, 1, 3, n, 1), 0);
        rb = cs_program_recv(p, 3, 1, n, 1);
    }
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK, "%s", err.msg);
    cs_exec_opts_default(&o);
    o.record_op_times = 1;
    o.mode = mode;
    cr_assert_eq(cs_exec_run(&env, p, &o, &res, &err), CS_OK, "%s", err.msg);
    *end_a = res.ops[ra].end;
    *end_b = both ? res.ops[rb].end : -1;
    cs_exec_result_destroy(&res);
    cs_program_free(p);
    cs_topo_free(t);
}

static const int64_t sizes[] = {1000, 4096, 100000};

Test(fluid_latency, last_equal_shares_from_the_start)
{
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int64_t n = sizes[i];
        cs_tick_t a, b;
        run(1, n, CS_NET_FLUID, CS_NET_LATENCY_LAST, CS_NET_SHARE_EQUAL, &a, &b);
        cr_assert_eq(a, ALPHA + 2 * n + L_A, "n=%lld: a ends at %lld", (long long)n, (long long)a);
        cr_assert_eq(b, ALPHA + 2 * n + L_B, "n=%lld: b ends at %lld", (long long)n, (long long)b);
    }
}

Test(fluid_latency, first_equal_short_path_has_the_link_alone)
{
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int64_t n = sizes[i], d = L_B - L_A;
        cs_tick_t a, b;
        cr_assert_lt(d, n);
        run(1, n, CS_NET_FLUID, CS_NET_LATENCY_FIRST, CS_NET_SHARE_EQUAL, &a, &b);
        cr_assert_eq(a, ALPHA + L_B + 2 * (n - d), "n=%lld: a ends at %lld", (long long)n,
                     (long long)a);
        cr_assert_eq(b, ALPHA + L_B + 2 * n - d, "n=%lld: b ends at %lld", (long long)n,
                     (long long)b);
        /* the link never idles once a joined: the last byte is at
         * alpha + l_a + 2n */
        cr_assert_eq(b, ALPHA + L_A + 2 * n);
    }
}

Test(fluid_latency, first_weighted_shares_by_inverse_latency)
{
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int64_t n = sizes[i], d = L_B - L_A;
        cs_tick_t a, b;
        /* in rational ticks; the engine ends a flow at the first whole
         * tick its bytes have crossed (within 1e-9 relative) */
        double t = (double)(n - d) * (L_A + L_B) / L_B;
        double moved_b = (double)(n - d) * L_A / L_B;
        double ea = ALPHA + L_B + t, eb = ea + ((double)n - moved_b);
        run(1, n, CS_NET_FLUID, CS_NET_LATENCY_FIRST, CS_NET_SHARE_LATENCY, &a, &b);
        cr_assert_eq(a, (cs_tick_t)ceil(ea - 1e-6), "n=%lld: a ends at %lld, expected %.3f",
                     (long long)n, (long long)a, ea);
        cr_assert_eq(b, (cs_tick_t)ceil(eb - 1e-6), "n=%lld: b ends at %lld, expected %.3f",
                     (long long)n, (long long)b, eb);
        cr_assert_eq(b, ALPHA + L_A + 2 * n); /* the link never idles either */
    }
}

/* Weighted sharing alone (latency paid last): both start at alpha with
 * rates B l_b / (l_a + l_b) and B l_a / (l_a + l_b); a's n bytes take
 * n (l_a + l_b) / l_b, b's rest goes alone; each then pays its latency. */
Test(fluid_latency, last_weighted)
{
    int64_t n = 4000;
    double t = (double)n * (L_A + L_B) / L_B, rest_b = n - (double)n * L_A / L_B;
    cs_tick_t a, b;
    run(1, n, CS_NET_FLUID, CS_NET_LATENCY_LAST, CS_NET_SHARE_LATENCY, &a, &b);
    cr_assert_eq(a, (cs_tick_t)ceil(ALPHA + t - 1e-6) + L_A, "a ends at %lld", (long long)a);
    cr_assert_eq(b, (cs_tick_t)ceil(ALPHA + t + rest_b - 1e-6) + L_B, "b ends at %lld",
                 (long long)b);
}

Test(fluid_latency, one_flow_pays_alpha_latency_and_bytes_under_every_rule)
{
    const cs_net_fluid_latency_t lats[2] = {CS_NET_LATENCY_LAST, CS_NET_LATENCY_FIRST};
    const cs_net_fluid_share_t shares[2] = {CS_NET_SHARE_EQUAL, CS_NET_SHARE_LATENCY};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int l = 0; l < 2; l++)
            for (int s = 0; s < 2; s++) {
                cs_tick_t a, b;
                run(0, sizes[i], CS_NET_FLUID, lats[l], shares[s], &a, &b);
                cr_assert_eq(a, ALPHA + L_A + sizes[i], "n=%lld latency %d share %d: %lld",
                             (long long)sizes[i], l, s, (long long)a);
            }
}

/* A flow shorter than D ends before the long one joins: no sharing at all
 * under "first", each alpha + l + n. */
Test(fluid_latency, first_no_overlap_when_short_flow_ends_before_the_long_joins)
{
    int64_t n = 200; /* < l_b - l_a = 300 */
    cs_tick_t a, b;
    run(1, n, CS_NET_FLUID, CS_NET_LATENCY_FIRST, CS_NET_SHARE_LATENCY, &a, &b);
    cr_assert_eq(a, ALPHA + L_A + n);
    cr_assert_eq(b, ALPHA + L_B + n);
}

/* Packet mode moves units hop by hop: the fluid rules do not apply. */
Test(fluid_latency, packet_mode_ignores_the_fluid_rules)
{
    cs_tick_t a0, b0, a1, b1;
    run(1, 4096, CS_NET_PACKET, CS_NET_LATENCY_LAST, CS_NET_SHARE_EQUAL, &a0, &b0);
    run(1, 4096, CS_NET_PACKET, CS_NET_LATENCY_FIRST, CS_NET_SHARE_LATENCY, &a1, &b1);
    cr_assert_eq(a0, a1);
    cr_assert_eq(b0, b1);
}
