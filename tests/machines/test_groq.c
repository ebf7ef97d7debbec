/*
 * test_groq.c - the Groq Dragonfly machine against the paper (Abts et al.,
 * ISCA'22) and its reference note (reference/groq-dragonfly.md: tests T1-T19
 * of §5).  Expected values are computed here from the paper's numbers and
 * formulas: 320-byte vectors sent as 328 bytes on 4 x 25 Gb/s (26,240 ps a
 * vector), 722 ns per hop.
 *
 * Setting COLLSIM_FIGURES=DIR makes the crossover and bus-bandwidth tests
 * also write their data and plots into DIR (docs/figures in the repository).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../coll/harness.h"
#include "io/plot.h"
#include "machines/groq.h"
#include "machines/groq_sched.h"
#include "predict.h"

#define S INT64_C(26240)   /* ticks (ps) per 328-byte vector at 100 Gb/s */
#define H INT64_C(722000)  /* ticks per hop */
#define VB 320

static cs_machine_t *machine(const char *spec)
{
    cs_machine_t *m;
    cs_error_t err;
    cr_assert_eq(cs_machine_new(spec, &m, &err), CS_OK, "%s: %s", spec, err.msg);
    cr_assert_str_eq(m->type->name, "groq");
    return m;
}

static const cs_groq_t *groq(const cs_machine_t *m) { return m->impl; }

static int64_t vectors(int64_t bytes) { return bytes > 0 ? (bytes + VB - 1) / VB : 1; }

/* ---- wiring --------------------------------------------------------------------- */

/* Links between nodes (or racks, with `per` = 72) counted per unordered pair. */
static int64_t *pair_counts(const cs_topo_t *t, int groups, int per)
{
    int64_t *c = calloc((size_t)groups * (size_t)groups, sizeof *c);
    for (int ch = 0; ch < cs_topo_channels(t); ch += 2) {
        int a = cs_topo_channel_src(t, ch) / per, b = cs_topo_channel_dst(t, ch) / per;
        if (a != b) {
            c[(int64_t)a * groups + b]++;
            c[(int64_t)b * groups + a]++;
        }
    }
    return c;
}

Test(groq, one_node_is_a_k8)
{
    cs_machine_t *m = machine("groq:nodes=1");
    const cs_topo_t *t = m->topo;
    cr_expect_eq(cs_topo_nodes(t), 8);
    cr_expect_eq(cs_topo_channels(t), 2 * 28);
    for (int a = 0; a < 8; a++) {
        cr_expect_eq(cs_topo_degree(t, a), 7, "TSP %d: 7 local links, its 4 global ports free", a);
        for (int b = 0; b < 8; b++)
            if (a != b)
                cr_expect_eq(cs_topo_channel_dst(t, cs_topo_find_channel(t, a, b)), b);
    }
    cs_groq_wiring_t w;
    cs_groq_wiring(groq(m), &w);
    cr_expect_eq(w.max_route, 1);
    cs_machine_free(m);
}

Test(groq, thirty_three_nodes)
{
    cs_machine_t *m = machine("groq:nodes=33");
    const cs_groq_t *g = groq(m);
    const cs_topo_t *t = m->topo;
    cs_topo_stats_t st;
    cs_error_t err;
    /* Dragonfly with a = 8, p = 1, h = 4: g = a*h + 1 = 33 groups, 264 TSPs */
    cr_expect_eq(8 * 4 + 1, 33);
    cr_expect_eq(cs_topo_nodes(t), 264);
    cr_expect_eq(g->links_node, 33 * 28);
    cr_expect_eq(g->links_mid, 33 * 32 / 2); /* 528 */
    cr_expect_eq(g->links_mid, 528);
    cr_expect_eq(cs_topo_channels(t) / 2, 33 * 28 + 528);
    int64_t *c = pair_counts(t, 33, 8);
    for (int a = 0; a < 33; a++)
        for (int b = 0; b < 33; b++)
            cr_expect_eq(c[a * 33 + b], a != b, "nodes %d and %d: one link", a, b);
    free(c);
    for (int v = 0; v < 264; v++)
        cr_expect_eq(cs_topo_degree(t, v), 11, "TSP %d: 7 local + 4 global", v);
    cr_assert_eq(cs_topo_stats(t, 100000, &st, &err), CS_OK, "%s", err.msg);
    cr_expect_eq(st.diameter, 3.0, "three hop topology");
    cs_groq_wiring_t w;
    cs_groq_wiring(g, &w);
    cr_expect_eq(w.max_route, 3);
    cr_expect_eq(w.paper_diameter, 3);
    /* 32 'virtual' ports per node: one per other node */
    for (int G = 0; G < 33; G++) {
        int ports = 0;
        for (int v = G * 8; v < G * 8 + 8; v++)
            for (int u = 0; u < 264; u++)
                ports += u / 8 != G && cs_topo_find_channel(t, v, u) >= 0;
        cr_expect_eq(ports, 32);
    }
    cs_machine_free(m);
}

Test(groq, port_rule)
{
    cs_machine_t *m = machine("groq:nodes=33");
    const cs_groq_t *g = groq(m);
    for (int G = 0; G < 33; G++)
        for (int k = 0; k < 32; k++) {
            int Hn = (G + k + 1) % 33, o, l;
            int ch = cs_groq_node_link(g, G, Hn, 0, &o, &l);
            cr_assert_geq(ch, 0);
            cr_expect_eq(o, G * 8 + k / 4, "port k = 4t + m of node G belongs to TSP t");
            cr_expect_eq(l, Hn * 8 + (31 - k) / 4, "node H answers on port 31 - k");
            cr_expect_eq(cs_topo_channel_src(m->topo, ch), o);
            cr_expect_eq(cs_topo_channel_dst(m->topo, ch), l);
        }
    cs_machine_free(m);
}

Test(groq, full_system_of_145_racks, .timeout = 600)
{
    cs_machine_t *m = machine("groq:racks=145");
    const cs_groq_t *g = groq(m);
    const cs_topo_t *t = m->topo;
    /* rack level: a = 72, h = 144/72 = 2, g = a*h + 1 = 145, N = 10,440 */
    cr_expect_eq(72 * 2 + 1, 145);
    cr_expect_eq(cs_topo_nodes(t), 10440);
    cr_expect_eq(g->links_node, 36540);
    cr_expect_eq(g->links_mid, 10440);
    cr_expect_eq(g->links_top, 10440);
    for (int v = 0; v < 10440; v++)
        cr_expect_eq(cs_topo_degree(t, v), 11);
    int64_t *racks = pair_counts(t, 145, 72);
    for (int a = 0; a < 145; a++)
        for (int b = 0; b < 145; b++)
            cr_expect_eq(racks[a * 145 + b], a != b, "racks %d and %d", a, b);
    free(racks);
    /* inside a rack: each node pair twice, on different TSPs */
    int64_t *nodes = pair_counts(t, 1305, 8);
    for (int a = 0; a < 1305; a++)
        for (int b = a / 9 * 9; b < a / 9 * 9 + 9; b++)
            cr_expect_eq(nodes[(int64_t)a * 1305 + b], a != b ? 2 : 0, "nodes %d and %d", a, b);
    free(nodes);
    /* ports per rack: 144 intra-rack (72 links) + 144 inter-rack */
    cs_groq_wiring_t w;
    cs_groq_wiring(g, &w);
    cr_expect_eq(w.paper_diameter, 5, "2 in the source rack + 1 global + 2 in the destination");
    cr_expect_eq(w.max_route, 7, "an intra-node hop at each intermediate node");
    /* cables per node: 28 + 32 global = 60, of which 28 + 16 short: 73.3% */
    cr_expect_eq(28 + 32, 60);
    cr_expect_float_eq(44.0 / 60.0, 0.733, 0.001);
    /* memory: 10,440 x 220 MiB > 2 TB */
    cr_expect_gt(10440.0 * 220 * 1048576, 2e12);
    cs_machine_free(m);
}

Test(groq, tsp_level_diameter_of_the_full_system, .timeout = 600)
{
    cs_machine_t *m = machine("groq:racks=145");
    cs_topo_stats_t st;
    cs_error_t err;
    cr_assert_eq(cs_topo_stats(m->topo, 20000, &st, &err), CS_OK, "%s", err.msg);
    cr_expect_eq(st.diameter, 7.0);
    cs_machine_free(m);
}

/* Every candidate path is a chain of channels from src to dst. */
static void check_paths(const cs_groq_t *g, int src, int dst, int max_min)
{
    int32_t ch[CS_GROQ_MAX_PATH];
    int n = cs_groq_paths(g, src, dst);
    cr_assert_geq(n, 1);
    for (int j = 0; j < n; j++) {
        int h = cs_groq_path(g, src, dst, j, ch), at = src;
        cr_assert(h >= 1 && h <= CS_GROQ_MAX_PATH);
        if (j == 0)
            cr_expect_leq(h, max_min, "%d -> %d", src, dst);
        for (int k = 0; k < h; k++) {
            cr_assert_eq(cs_topo_channel_src(g->topo, ch[k]), at, "%d -> %d path %d hop %d", src,
                         dst, j, k);
            at = cs_topo_channel_dst(g->topo, ch[k]);
        }
        cr_assert_eq(at, dst);
    }
}

Test(groq, routes_are_paths)
{
    cs_machine_t *m = machine("groq:nodes=33");
    for (int s = 0; s < 264; s++)
        for (int d = 0; d < 264; d++)
            if (s != d)
                check_paths(groq(m), s, d, 3);
    cs_machine_free(m);
    m = machine("groq:racks=5");
    for (int s = 0; s < 360; s += 7)
        for (int d = 0; d < 360; d++)
            if (s != d)
                check_paths(groq(m), s, d, 7);
    cs_machine_free(m);
    /* fewer nodes than 33: unused ports, still one link per pair */
    m = machine("groq:nodes=5");
    for (int s = 0; s < 40; s++)
        for (int d = 0; d < 40; d++)
            if (s != d)
                check_paths(groq(m), s, d, 3);
    cs_machine_free(m);
}

Test(groq, hints)
{
    /* the ring steps over single links; the groups are the nodes */
    static const char *const specs[] = {"groq:nodes=1", "groq:nodes=32", "groq:nodes=33",
                                        "groq:racks=1", "groq:racks=145"};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        cs_machine_t *m = machine(specs[k]);
        int n = cs_machine_nodes(m);
        char *seen = calloc((size_t)n, 1);
        for (int i = 0; i < n; i++) {
            int u = m->ring_order[i], v = m->ring_order[(i + 1) % n];
            cr_assert(u >= 0 && u < n && !seen[u], "%s: ring position %d", specs[k], i);
            seen[u] = 1;
            cr_expect_geq(cs_topo_find_channel(m->topo, u, v), 0, "%s: %d -> %d", specs[k], u, v);
        }
        free(seen);
        if (n > 8) {
            cr_expect_eq(m->ngroups, n / 8);
            for (int t = 0; t < n; t++)
                cr_expect_eq(m->node_group[t], t / 8);
        } else {
            cr_expect_null(m->node_group);
        }
        cs_machine_free(m);
    }
}

/* The gateway hint in rank space (cs_machine_hints_init): every pair of
 * groups joined by a link has its two ends, partners of each other, each in
 * its group; pairs with no link have none. */
static void check_gateways(const cs_machine_t *m, int P, const int32_t *r2n,
                           const cs_machine_hints_t *h, int expect_all)
{
    int G = h->coll.ngroups;
    cr_assert_not_null(h->coll.gateway, "%s", m->spec);
    for (int g = 0; g < G; g++)
        for (int k = 0; k < G; k++) {
            int32_t a = h->coll.gateway[g * G + k], b = h->coll.gateway[k * G + g];
            if (g == k || a < 0) {
                cr_expect(g == k || !expect_all, "%s: groups %d, %d have no gateway", m->spec,
                          g, k);
                cr_expect_eq(a, -1);
                continue;
            }
            cr_assert(a < P && b >= 0 && b < P, "%s: %d -> %d", m->spec, g, k);
            cr_expect_eq(h->coll.group[a], g);
            cr_expect_eq(h->coll.group[b], k);
            cr_expect_geq(cs_topo_find_channel(m->topo, r2n ? r2n[a] : a, r2n ? r2n[b] : b), 0,
                          "%s: gateways %d, %d of groups %d, %d are not neighbours", m->spec, a,
                          b, g, k);
        }
}

Test(groq, gateway_hint)
{
    /* 33 nodes: every TSP owns 4 node pairs (its 4 global links) */
    cs_machine_t *m = machine("groq:nodes=33");
    cs_machine_hints_t h;
    cs_machine_hints_init(&h, m, 264, NULL);
    cr_assert_eq(h.coll.ngroups, 33);
    check_gateways(m, 264, NULL, &h, 1);
    int owned[264] = {0};
    for (int i = 0; i < 33 * 33; i++)
        if (h.coll.gateway[i] >= 0)
            owned[h.coll.gateway[i]]++;
    for (int t = 0; t < 264; t++)
        cr_expect_eq(owned[t], 4, "TSP %d owns %d links", t, owned[t]);
    /* the wiring's own answer: the TSP that owns the link between G and H */
    for (int G = 0; G < 33; G++)
        for (int Hn = 0; Hn < 33; Hn++) {
            int o, l;
            if (G == Hn)
                continue;
            cr_assert_geq(cs_groq_node_link(groq(m), G, Hn, 0, &o, &l), 0);
            cr_expect_eq(h.coll.gateway[G * 33 + Hn], o);
            cr_expect_eq(h.coll.gateway[Hn * 33 + G], l);
        }
    cs_machine_hints_destroy(&h);
    /* ranks placed in reverse: groups renumbered by first use, gateways in rank space */
    int32_t r2n[264];
    for (int r = 0; r < 264; r++)
        r2n[r] = 263 - r;
    cs_machine_hints_init(&h, m, 264, r2n);
    cr_expect_eq(h.coll.group[0], 0);
    cr_expect_eq(h.coll.group[263], 32);
    check_gateways(m, 264, r2n, &h, 1);
    cs_machine_hints_destroy(&h);
    /* 3 of the nodes only: 3 groups, still all joined */
    cs_machine_hints_init(&h, m, 24, NULL);
    cr_expect_eq(h.coll.ngroups, 3);
    check_gateways(m, 24, NULL, &h, 1);
    cs_machine_hints_destroy(&h);
    cs_machine_free(m);
    /* racks: the groups are nodes; nodes of one rack are linked (twice: the
     * first link is the gateway), nodes of different racks mostly not */
    m = machine("groq:racks=2");
    cs_machine_hints_init(&h, m, 144, NULL);
    cr_assert_eq(h.coll.ngroups, 18);
    check_gateways(m, 144, NULL, &h, 0);
    for (int g = 0; g < 9; g++)
        for (int k = 0; k < 9; k++)
            cr_expect_eq(h.coll.gateway[g * 18 + k] >= 0, g != k);
    cs_machine_hints_destroy(&h);
    cs_machine_free(m);
    /* one node: no groups, no gateways */
    m = machine("groq:nodes=1");
    cs_machine_hints_init(&h, m, 8, NULL);
    cr_expect_null(h.coll.group);
    cr_expect_null(h.coll.gateway);
    cs_machine_hints_destroy(&h);
    cs_machine_free(m);
}

/* ---- programs ------------------------------------------------------------------- */

typedef struct prog_run {
    cs_exec_result_t res;
    cs_machine_t *m;
    int rc;
    cs_error_t err;
} prog_run_t;

/* Runs a finalized program on `spec` (rank r on TSP r); free with prog_done. */
static prog_run_t run_program(const char *spec, const cs_program_t *p)
{
    prog_run_t r;
    cs_exec_env_t env;
    cs_exec_opts_t o;
    memset(&r, 0, sizeof r);
    r.m = machine(spec);
    cs_machine_exec_env(r.m, &env);
    cs_exec_opts_default(&o);
    o.record_op_times = 1;
    r.rc = cs_exec_run(&env, p, &o, &r.res, &r.err);
    return r;
}

static void prog_done(prog_run_t *r)
{
    cs_exec_result_destroy(&r->res);
    cs_machine_free(r->m);
}

static cs_program_t *finalize(cs_program_t *p)
{
    cs_error_t err;
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK, "%s", err.msg);
    return p;
}

/* One message src -> dst of `bytes`. */
static cs_program_t *one_message(int nranks, int src, int dst, int64_t bytes)
{
    cs_program_t *p = cs_program_new(nranks);
    cs_program_send(p, src, dst, bytes, 0);
    cs_program_recv(p, dst, src, bytes, 0);
    return finalize(p);
}

static cs_tick_t message_time(const char *spec, int nranks, int src, int dst, int64_t bytes)
{
    cs_program_t *p = one_message(nranks, src, dst, bytes);
    prog_run_t r = run_program(spec, p);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    cs_tick_t t = r.res.finish;
    prog_done(&r);
    cs_program_free(p);
    return t;
}

Test(groq, link_timing)
{
    cs_machine_t *m = machine("groq:nodes=1");
    /* 328 bytes at 4 x 25 Gb/s: 26.24 ns; payload 320/328 = 97.56% */
    cr_expect_eq(groq(m)->slot, S);
    cr_expect_eq(328 * 8 * 1000 / 100, S);
    cr_expect_float_eq(320.0 / 26.24e-9 / 1e9, 12.195, 0.001);
    cs_machine_free(m);
    /* one vector, one hop: the hop latency; V vectors pipeline behind it */
    static const int64_t sizes[] = {0, 1, 320, 321, 640, 4096, 100000, 1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        cr_expect_eq(message_time("groq:nodes=1", 2, 0, 1, sizes[i]),
                     H + (vectors(sizes[i]) - 1) * S, "%lld bytes", (long long)sizes[i]);
    /* three hops between nodes: 3 x 722 ns, the rest pipelined */
    cs_machine_t *m33 = machine("groq:nodes=33");
    int32_t ch[CS_GROQ_MAX_ROUTE];
    int far_src = -1, far_dst = -1;
    for (int d = 8; d < 264 && far_src < 0; d++)
        if (cs_groq_route(groq(m33), 1, d, ch) == 3)
            far_src = 1, far_dst = d;
    cr_assert_geq(far_src, 0);
    cr_expect_eq(message_time("groq:nodes=33", 264, far_src, far_dst, 320), 3 * H);
    cr_expect_eq(message_time("groq:nodes=33", 264, far_src, far_dst, 64000), 3 * H + 199 * S);
    cs_machine_free(m33);
    /* the farthest TSPs of the full system: 7 hops (the paper's "< 3 us"
     * would need fewer, faster hops: 5 x 722 ns is already 3.61 us) */
    cs_machine_t *mr = machine("groq:racks=145");
    far_src = -1;
    for (int d = 72; d < 10440 && far_src < 0; d++)
        if (cs_groq_route(groq(mr), 0, d, ch) == 7)
            far_src = 0, far_dst = d;
    cr_assert_geq(far_src, 0);
    cr_expect_eq(message_time("groq:racks=145", 10440, far_src, far_dst, 320), 7 * H);
    cs_machine_free(mr);
    /* the hop latency is a parameter */
    cr_expect_eq(message_time("groq:nodes=1,hop=1us", 2, 0, 1, 320), 1000000);
}

Test(groq, streams_survive_gaps_in_their_data)
{
    /* regression: a forward whose data came with gaps (the upstream vectors
     * dealt over paths of different length) used to add arrivals to a run
     * already reported, and never completed */
    cs_program_t *p = cs_program_new(3);
    cs_program_send(p, 0, 1, 64000, 0);
    int32_t rv = cs_program_recv(p, 1, 0, 64000, 0);
    int32_t fw = cs_program_send(p, 1, 2, 64000, 0);
    cs_program_dep(p, fw, rv, CS_DEP_STREAM);
    cs_program_recv(p, 2, 1, 64000, 0);
    finalize(p);
    prog_run_t r = run_program("groq:nodes=1,paths=7,even=1", p);
    cr_expect_eq(r.rc, CS_OK, "%s", r.err.msg);
    cr_expect_gt(r.res.finish, 0);
    prog_done(&r);
    cs_program_free(p);
}

Test(groq, messages_stream_through_a_tsp)
{
    /* 0 -> 1 -> 2 with the forward streaming from the receive: virtual
     * cut-through at TSP level, 2 hops + pipelining */
    static const int64_t sizes[] = {320, 3200, 64000};
    for (size_t i = 0; i < 3; i++) {
        int64_t n = sizes[i];
        cs_program_t *p = cs_program_new(3);
        cs_program_send(p, 0, 1, n, 0);
        int32_t rv = cs_program_recv(p, 1, 0, n, 0);
        int32_t fw = cs_program_send(p, 1, 2, n, 0);
        cs_program_dep(p, fw, rv, CS_DEP_STREAM);
        cs_program_recv(p, 2, 1, n, 0);
        finalize(p);
        prog_run_t r = run_program("groq:nodes=1", p);
        cr_expect_eq(r.rc, CS_OK, "%s", r.err.msg);
        cr_expect_eq(r.res.finish, 2 * H + (vectors(n) - 1) * S, "%lld bytes", (long long)n);
        prog_done(&r);
        cs_program_free(p);
    }
}

/* ---- the 3-hop all-reduce (paper §5.6) --------------------------------------------
 * The suite's allreduce/gateway with the machine's hints as `collsim run`
 * gives them (cs_machine_hints_init: node groups and, for every node pair,
 * the TSP that owns their link): (1) every TSP sends its tensor to the 7
 * others of its node, each adds them (1 hop, 7 links at once); (2) over
 * every global link, the node's sum goes to the node at the other end
 * (1 hop); (3) each TSP adds the 3 or 4 sums it received and sends that
 * partial to the 7 others of its node (1 hop).  Each stage waits for its
 * whole tensor, so V vectors take 3 (t_hop + (V - 1) t_vec); one node has
 * stage 1 only. */
static int64_t gateway_expect(int nodes, int64_t bytes)
{
    return (nodes > 1 ? 3 : 1) * (H + (vectors(bytes) - 1) * S);
}

Test(groq, three_hop_allreduce_on_256_tsps)
{
    /* the paper's case: a small tensor (one vector, and a few bytes) on
     * 256 TSPs, validated */
    static const int64_t small[] = {4, 320};
    for (size_t i = 0; i < 2; i++) {
        h_run_t r = h_run("groq:nodes=32", "allreduce", "gateway", 0, small[i], 0, NULL,
                          CS_NET_PACKET, 1);
        cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
        cr_expect_leq(fabs((double)r.finish - 2166000.0), 0.05 * 2166000.0,
                      "722 ns x 3 hops = 2,166 ns; got %lld ps", (long long)r.finish);
        cr_expect_eq(r.finish, 3 * H);
        h_done(&r);
    }
    /* the formula over machine sizes and tensor sizes */
    static const int nodes[] = {1, 2, 8, 16, 32, 33};
    static const int64_t sizes[] = {4, 320, 3200, 32000};
    for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++)
        for (size_t j = 0; j < sizeof sizes / sizeof *sizes; j++) {
            char spec[64];
            snprintf(spec, sizeof spec, "groq:nodes=%d", nodes[i]);
            h_run_t r = h_run(spec, "allreduce", "gateway", 0, sizes[j], 0, NULL, CS_NET_PACKET,
                              1);
            cr_assert_eq(r.rc, CS_OK, "%s, %lld bytes: %s", spec, (long long)sizes[j], r.err.msg);
            cr_expect_eq(r.finish, gateway_expect(nodes[i], sizes[j]), "%s, %lld bytes: %lld ps",
                         spec, (long long)sizes[j], (long long)r.finish);
            printf("groq: allreduce/gateway on %3d TSPs, %5lld B: %9.3f ns\n", 8 * nodes[i],
                   (long long)sizes[j], (double)r.finish / 1000.0);
            h_done(&r);
        }
    /* the gateways matter: with the node groups but without the gateway
     * hint, node pairs are served by TSPs that do not own their link, and
     * the sums cross more hops */
    cs_machine_t *m = machine("groq:nodes=32");
    cs_machine_hints_t mh;
    const cs_coll_algo_t *a;
    cs_coll_kind_t kind;
    cs_error_t err;
    cr_assert_eq(cs_coll_parse("allreduce", &kind, &err), CS_OK);
    cr_assert_eq(cs_coll_find(kind, "gateway", &a, &err), CS_OK);
    cs_machine_hints_init(&mh, m, 256, NULL);
    cs_coll_hints_t groups_only = mh.coll;
    groups_only.gateway = NULL;
    h_run_t r = h_run_algo("groq:nodes=32", a, 256, 320, 0, NULL, CS_NET_PACKET, 1, &groups_only);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    cr_expect_gt(r.finish, 3 * H);
    printf("groq: allreduce/gateway on 256 TSPs without the gateway hint: %.3f ns\n",
           (double)r.finish / 1000.0);
    h_done(&r);
    cs_machine_hints_destroy(&mh);
    cs_machine_free(m);
    /* the suite's hierarchical all-reduce (reduce-scatter, all-reduce of
     * each shard between the TSPs of equal index, all-gather) crosses
     * 1 + 3 + 3 + 1 hops: the shard owners of two nodes are not neighbours */
    r = h_run("groq:nodes=32", "allreduce", "hierarchical", 256, 320, 0, "par=1", CS_NET_PACKET,
              1);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    cr_expect_geq(r.finish, 8 * H);
    h_done(&r);
}

/* The same through the command line: `collsim run` builds the same hints. */
Test(groq, three_hop_allreduce_from_the_command_line)
{
    const char *bin = getenv("COLLSIM");
    char cmd[1024], line[512];
    int found = 0;
    cr_assert_not_null(bin, "COLLSIM is not set (run the tests through meson test)");
    snprintf(cmd, sizeof cmd, "'%s' run --machine groq:nodes=32 --coll allreduce --algo gateway "
             "--bytes 320 --validate 2>&1", bin);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    while (fgets(line, sizeof line, f))
        found += !strncmp(line, "finish", 6) && strstr(line, " 2166000 ticks = 2.166 us");
    cr_expect_eq(pclose(f), 0);
    cr_expect_eq(found, 1, "no 'finish 2166000 ticks' line from %s", cmd);
}

/* ---- non-minimal spreading on a K8 (paper Fig. 10, §4.3) -------------------------- */

static void write_figure(const char *name, const char *title, const char *xlabel,
                         const char *ylabel, int nseries,
                         const char *const *names, int npts, const double *x, const double *y)
{
    const char *dir = getenv("COLLSIM_FIGURES");
    char path[512];
    cs_error_t err;
    if (!dir || !*dir)
        return;
    snprintf(path, sizeof path, "%s/%s.csv", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    fprintf(f, "series,bytes,%s\n", ylabel);
    for (int s = 0; s < nseries; s++)
        for (int i = 0; i < npts; i++)
            fprintf(f, "\"%s\",%.0f,%.6g\n", names[s], x[i], y[s * npts + i]);
    fclose(f);
    cs_plot_t *p = cs_plot_new(title, xlabel, ylabel, 1, strstr(name, "busbw") == NULL);
    for (int s = 0; s < nseries; s++)
        cs_plot_add_series(p, names[s], (size_t)npts, x, y + s * npts);
    snprintf(path, sizeof path, "%s/%s.png", dir, name);
    cr_assert_eq(cs_plot_write(p, path, &err), CS_OK, "%s", err.msg);
    cs_plot_free(p);
    cs_plot_cleanup();
}

Test(groq, nonminimal_spreading_crossover, .timeout = 600)
{
    /* one message between two TSPs of a node: the direct link, or also the
     * 6 two-hop paths.  A vector goes on a two-hop path once the direct
     * link's queue exceeds a hop: vector i (from 0) arrives directly at
     * H + i*S, over two hops at 2H, so spreading starts at i = floor(H/S)+1
     * = 28, i.e. above 28 vectors = 8,960 bytes: about t_hop x B. */
    int64_t first = H / S + 1;
    cr_expect_eq(first, 28);
    cr_expect_float_eq(722e-9 * 12.195e9, 8805, 5, "t_hop x link bandwidth: 8.8 kB");
    for (int64_t v = 1; v <= first; v++)
        cr_expect_eq(message_time("groq:nodes=1,paths=7", 2, 0, 1, v * VB),
                     message_time("groq:nodes=1", 2, 0, 1, v * VB), "%lld vectors", (long long)v);
    cr_expect_lt(message_time("groq:nodes=1,paths=7", 2, 0, 1, (first + 1) * VB),
                 message_time("groq:nodes=1", 2, 0, 1, (first + 1) * VB));
    /* forced even spreading costs a second hop below the crossover */
    cr_expect_gt(message_time("groq:nodes=1,paths=7,even=1", 2, 0, 1, 2 * VB),
                 message_time("groq:nodes=1", 2, 0, 1, 2 * VB));
    /* the gain approaches the number of paths for large tensors */
    for (int k = 2; k <= 7; k++) {
        char spec[64];
        snprintf(spec, sizeof spec, "groq:nodes=1,paths=%d", k);
        double gain = (double)message_time("groq:nodes=1", 2, 0, 1, 16 << 20) /
                      (double)message_time(spec, 2, 0, 1, 16 << 20);
        cr_expect_gt(gain, 0.99 * k, "paths=%d: gain %.3f", k, gain);
        cr_expect_leq(gain, k, "paths=%d: gain %.3f", k, gain);
    }
    /* the sweep of the figure (docs/figures/groq-crossover.png) */
    static const char *const specs[] = {"groq:nodes=1", "groq:nodes=1,paths=7,even=1",
                                        "groq:nodes=1,paths=7"};
    static const char *const names[] = {"minimal (paths=1)", "even over 7 paths (even=1)",
                                        "compiler over 7 paths (paths=7)"};
    enum { NPTS = 25 };
    double x[NPTS], y[3 * NPTS];
    for (int i = 0, v = 0; i < NPTS; i++) {
        /* vectors: about 2^(0.75 i), each size once */
        v = (int)llround(pow(2.0, i * 0.75)) > v ? (int)llround(pow(2.0, i * 0.75)) : v + 1;
        int64_t bytes = (int64_t)v * VB;
        x[i] = (double)bytes;
        for (int s = 0; s < 3; s++)
            y[s * NPTS + i] = (double)message_time(specs[s], 2, 0, 1, bytes) * 1e-3;
    }
    for (int i = 0; i < NPTS; i++) {
        if (x[i] <= 8960)
            cr_expect_eq(y[2 * NPTS + i], y[i], "%g bytes", x[i]);
        else
            cr_expect_lt(y[2 * NPTS + i], y[i], "%g bytes", x[i]);
    }
    write_figure("groq-crossover", "One message on a Groq node: minimal vs non-minimal paths",
                 "message size (bytes)", "time (ns)", 3, names, NPTS, x, y);
}

/* ---- 8-TSP all-reduce bandwidth (paper Fig. 16) --------------------------------------- */

Test(groq, eight_tsp_allreduce_bus_bandwidth, .timeout = 600)
{
    /* direct reduce-scatter + all-gather on the K8 (allreduce/hierarchical
     * with one group, every stage's sends at once): T = 2 (H + (V - 1) S),
     * V = the shard's vectors; busbw (nccl) = S_bytes/T * 2(n-1)/n -> 7 x
     * 12.195 GB/s */
    double link = 320.0 / 26.24e-9, prev = 0;
    enum { NPTS = 16 };
    double x[NPTS], y[NPTS];
    for (int i = 0; i < NPTS; i++) {
        int64_t bytes = (INT64_C(2560) << i) ; /* 2.5 KiB .. 80 MiB, 8 x 320 | bytes */
        h_run_t r = h_run("groq:nodes=1", "allreduce", "hierarchical", 8, bytes, 0, "par=1",
                          CS_NET_PACKET, i < 12);
        cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
        int64_t v = bytes / 8 / VB;
        cr_expect_eq(r.finish, 2 * (H + (v - 1) * S), "%lld bytes", (long long)bytes);
        double busbw = (double)bytes / ((double)r.finish * 1e-12) * 2.0 * 7.0 / 8.0;
        cr_expect_geq(busbw, prev, "bus bandwidth rises with size");
        cr_expect_lt(busbw, 7 * link);
        prev = busbw;
        x[i] = (double)bytes;
        y[i] = busbw / 1e9;
        h_done(&r);
    }
    cr_expect_gt(prev, 0.99 * 7 * link, "%.2f GB/s at 80 MiB; 7 links = %.2f GB/s", prev / 1e9,
                 7 * link / 1e9);
    /* half the asymptote where S/(4B) = 2 t_hop, S = 8 t_hop B, about 70 kB */
    double half = 8 * 722e-9 * link;
    cr_expect_float_eq(half, 70438, 100);
    static const char *const names[] = {"allreduce/hierarchical, par=1"};
    write_figure("groq-busbw", "8-TSP all-reduce bus bandwidth (nccl) on a Groq node",
                 "tensor size (bytes)", "bus bandwidth (GB/s)", 1, names, NPTS, x, y);
}

/* ---- Figure 8: two TSPs sending to one over a shared link ------------------------------ */

Test(groq, figure8_shared_link_without_stall)
{
    /* nodes=2: TSP 0 holds node 0's only link to node 1, which lands at TSP
     * 15.  B = 0 and A = 1 both send to D = 15: A's route is A -> B -> D, so
     * B -> D is shared. */
    cs_machine_t *m = machine("groq:nodes=2");
    int o, l;
    int shared = cs_groq_node_link(groq(m), 0, 1, 0, &o, &l);
    cr_assert_eq(o, 0);
    cr_assert_eq(l, 15);
    cs_machine_free(m);
    static const int64_t Vs[] = {1, 10, 27, 28, 100, 1000};
    for (size_t i = 0; i < sizeof Vs / sizeof *Vs; i++) {
        int64_t V = Vs[i], n = V * VB;
        cs_program_t *p = cs_program_new(16);
        cs_program_send(p, 0, 15, n, 0); /* B, posted first: scheduled first */
        cs_program_send(p, 1, 15, n, 0); /* A */
        cs_program_recv(p, 15, 0, n, 0);
        cs_program_recv(p, 15, 1, n, 0);
        finalize(p);
        prog_run_t r = run_program("groq:nodes=2", p);
        cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
        /* B keeps its slots; A's vectors reach B at H + iS and take the
         * shared link's next free slots */
        cs_tick_t b_done = H + (V - 1) * S;
        cs_tick_t a_done = (H > V * S ? H : V * S) + (V - 1) * S + H;
        cr_expect_eq(r.res.ops[2].end, b_done, "V=%lld: B", (long long)V);
        cr_expect_eq(r.res.ops[3].end, a_done, "V=%lld: A", (long long)V);
        for (int c = 0; c < cs_topo_channels(r.m->topo); c++)
            cr_expect_eq(cs_net_chan_stats(r.res.net, c)->stall, 0, "no stall, no back-pressure");
        cr_expect_eq(cs_net_chan_stats(r.res.net, shared)->units, 2 * V);
        cs_groq_stats_t st;
        cs_groq_sched_stats(r.res.net, &st);
        cr_expect_eq(st.vectors, 2 * V);
        prog_done(&r);

        /* the same traffic on a back-pressured machine: the channel engine
         * on the same wiring, same link rate and hop, 32-vector buffers and
         * round-robin arbitration */
        cs_machine_t *w = machine("groq:nodes=2");
        cs_net_params_t np;
        cs_net_params_default(&np);
        np.unit_bytes = VB;
        np.ser_num = S;
        np.ser_den = VB;
        np.wire_lat = H - S;
        np.buf_units = 32; /* more than a hop's bandwidth-delay product (28 vectors) */
        np.send_ports = np.recv_ports = 0;
        cs_exec_env_t env = {.topo = w->topo, .net = &np, .reduce_num = 0, .reduce_den = 1,
                             .tick_seconds = 1e-12};
        cs_exec_opts_t o2;
        cs_exec_result_t res;
        cs_error_t err;
        cs_exec_opts_default(&o2);
        o2.record_op_times = 1;
        cr_assert_eq(cs_exec_run(&env, p, &o2, &res, &err), CS_OK, "%s", err.msg);
        if (V * S > H) {
            /* the two flows share B -> D: B is slowed down (queueing) */
            cr_expect_gt(res.ops[2].end, b_done, "V=%lld", (long long)V);
            cr_expect_eq(cs_net_chan_stats(res.net, shared)->peak_k, 2);
        }
        if (V >= 100) {
            int64_t stall = 0;
            for (int c = 0; c < cs_topo_channels(w->topo); c++)
                stall += cs_net_chan_stats(res.net, c)->stall;
            cr_expect_gt(stall, 0, "V=%lld: A's vectors back-pressured at B", (long long)V);
        }
        cs_exec_result_destroy(&res);
        cs_machine_free(w);
        cs_program_free(p);
    }
}

/* ---- every suite algorithm ------------------------------------------------------------- */

Test(groq, every_suite_algorithm_validates, .timeout = 600)
{
    /* 16 TSPs in two nodes (one global link), with minimal routes, with up
     * to 4 paths per message, and with vectors dealt over 3 paths (they then
     * arrive out of order, and a streaming forward's data in bursts) */
    static const char *const specs[] = {"groq:nodes=2", "groq:nodes=2,paths=4",
                                        "groq:nodes=2,paths=3,even=1"};
    static const int64_t sizes[] = {0, 1000, 7000};
    for (int s = 0; s < 3; s++)
        for (int k = 0; k < 3; k++)
            h_expect_all_validate(specs[s], sizes[k], 3, NULL);
}

Test(groq, full_system_allreduce_of_1MiB, .timeout = 600)
{
    h_run_t r = h_run("groq:racks=145", "allreduce", "hierarchical", 0, 1 << 20, 0,
                      "par=1,inter=rdb", CS_NET_PACKET, 0);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    cr_expect_gt(r.finish, 0);
    h_done(&r);
    /* the same algorithm validated on 2 racks (144 TSPs) */
    r = h_run("groq:racks=2", "allreduce", "hierarchical", 0, 100000, 0, "par=1,inter=rdb",
              CS_NET_PACKET, 1);
    cr_expect_eq(r.rc, CS_OK, "%s", r.err.msg);
    h_done(&r);
}

/* ---- explicit schedules ------------------------------------------------------------------ */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

Test(groq, explicit_schedule_round_trip)
{
    char dump[] = "/tmp/groq_dumpXXXXXX", spec[256];
    int fd = mkstemp(dump);
    cr_assert_geq(fd, 0);
    close(fd);
    /* the compiled schedule of a 16-TSP all-reduce, written out ... */
    snprintf(spec, sizeof spec, "groq:nodes=2,dump=%s", dump);
    h_run_t a = h_run(spec, "allreduce", "ring", 0, 10000, 0, NULL, CS_NET_PACKET, 1);
    cr_assert_eq(a.rc, CS_OK, "%s", a.err.msg);
    /* the file is complete once the engine is gone */
    int32_t nops = cs_program_nops(a.prog);
    cs_tick_t *ends = malloc((size_t)nops * sizeof *ends), finish = a.finish;
    for (int32_t i = 0; i < nops; i++)
        ends[i] = a.res.ops[i].end;
    cs_groq_stats_t sa, sb;
    cs_groq_sched_stats(a.res.net, &sa);
    h_done(&a);
    /* ... and given back: every vector where it was, the same times */
    snprintf(spec, sizeof spec, "groq:nodes=2,schedule=%s", dump);
    h_run_t b = h_run(spec, "allreduce", "ring", 0, 10000, 0, NULL, CS_NET_PACKET, 1);
    cr_assert_eq(b.rc, CS_OK, "%s", b.err.msg);
    cr_expect_eq(b.finish, finish);
    cs_groq_sched_stats(b.res.net, &sb);
    cr_expect_eq(sb.fixed, sa.vectors);
    cr_expect_gt(sa.vectors, 0);
    for (int32_t i = 0; i < nops; i++)
        cr_expect_eq(b.res.ops[i].end, ends[i]);
    free(ends);
    h_done(&b);
    char *text = read_all(dump);
    cr_expect(strstr(text, "0.0 ") != NULL);
    free(text);
    unlink(dump);
}

/* A dumped schedule: placements in file order. */
typedef struct placement {
    int64_t msg, vec, start;
    int from, to;
} placement_t;

static placement_t *read_dump(const char *path, int64_t slot, int *n)
{
    FILE *f = fopen(path, "r");
    char line[256];
    int cap = 1024;
    placement_t *p = malloc((size_t)cap * sizeof *p);
    cr_assert(f);
    *n = 0;
    while (fgets(line, sizeof line, f)) {
        long long m, v, k;
        int a, b;
        char t[64];
        if (line[0] == '#')
            continue;
        cr_assert_eq(sscanf(line, "%lld.%lld %d->%d %63s", &m, &v, &a, &b, t), 5, "%s", line);
        if (strstr(t, "ns")) {
            double ns = atof(t);
            k = llround(ns * 1000);
        } else {
            k = atoll(t) * slot;
        }
        if (*n == cap)
            p = realloc(p, (size_t)(cap *= 2) * sizeof *p);
        p[(*n)++] = (placement_t){m, v, k, a, b};
    }
    fclose(f);
    return p;
}

static int placement_cmp(const void *pa, const void *pb)
{
    const placement_t *a = pa, *b = pb;
    if (a->msg != b->msg)
        return a->msg < b->msg ? -1 : 1;
    if (a->vec != b->vec)
        return a->vec < b->vec ? -1 : 1;
    return (a->start > b->start) - (a->start < b->start);
}

/* Earliest start >= t of a slot of length S free of every start in busy[]. */
static int64_t ref_fit(const int64_t *busy, int nb, int64_t t)
{
    for (int moved = 1; moved;) {
        moved = 0;
        for (int i = 0; i < nb; i++)
            if (busy[i] < t + S && busy[i] + S > t) {
                t = busy[i] + S;
                moved = 1;
            }
    }
    return t;
}

Test(groq, scheduler_matches_a_per_vector_reference)
{
    /* every TSP sends to every other at time 0, sizes 1..9 vectors: on two
     * nodes the one global link is contended.  The engine places messages
     * run by run; the reference here places every vector alone, in message
     * order, at the earliest free slot of each link of its route. */
    char dump[] = "/tmp/groq_refXXXXXX", spec[256];
    int fd = mkstemp(dump);
    cr_assert_geq(fd, 0);
    close(fd);
    snprintf(spec, sizeof spec, "groq:nodes=2,dump=%s", dump);
    cs_program_t *p = cs_program_new(16);
    for (int a = 0; a < 16; a++)
        for (int b = 0; b < 16; b++)
            if (a != b) {
                int64_t n = (1 + (a * 7 + b * 3) % 9) * VB - (a + b) % 5;
                cs_program_send(p, a, b, n, 0);
                cs_program_recv(p, b, a, n, 0);
            }
    finalize(p);
    prog_run_t r = run_program(spec, p);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    const cs_groq_t *g = groq(r.m);
    cs_groq_stats_t st;
    cs_groq_sched_stats(r.res.net, &st);
    cr_expect_gt(st.source_wait + st.sram_wait, 0, "the case has contention");
    prog_done(&r);
    int n;
    placement_t *pl = read_dump(dump, S, &n);
    qsort(pl, (size_t)n, sizeof *pl, placement_cmp);
    /* the reference, message by message in id order */
    int nch = 2 * 57;
    int64_t *busy = calloc((size_t)nch * 4096, sizeof *busy);
    int *nb = calloc((size_t)nch, sizeof *nb), checked = 0;
    cs_machine_t *m = machine("groq:nodes=2");
    g = groq(m);
    for (int i = 0; i < n;) {
        /* the message's first vector's hops give its route */
        int64_t msg = pl[i].msg;
        int j = i, hops = 0, src = pl[i].from, dst;
        while (j < n && pl[j].msg == msg && pl[j].vec == 0)
            j++;
        hops = j - i;
        dst = pl[j - 1].to;
        int32_t ch[CS_GROQ_MAX_ROUTE];
        cr_assert_eq(cs_groq_route(g, src, dst, ch), hops);
        int k = i;
        for (int64_t v = 0; k < n && pl[k].msg == msg; v++) {
            int64_t t = 0;
            for (int h = 0; h < hops; h++, k++) {
                int64_t s = ref_fit(busy + (int64_t)ch[h] * 4096, nb[ch[h]], t);
                cr_assert_eq(pl[k].vec, v);
                cr_expect_eq(pl[k].start, s, "message %lld vector %lld hop %d", (long long)msg,
                             (long long)v, h);
                busy[(int64_t)ch[h] * 4096 + nb[ch[h]]++] = s;
                t = s + H;
                checked++;
            }
        }
        i = k;
    }
    cr_expect_eq(checked, n);
    cr_expect_gt(n, 1000);
    free(busy);
    free(nb);
    free(pl);
    cs_machine_free(m);
    /* with every candidate path, vector by vector: the schedule file's
     * checker (no two vectors on a link at once, hops a latency apart)
     * accepts what the engine compiled */
    snprintf(spec, sizeof spec, "groq:nodes=2,paths=auto,dump=%s", dump);
    r = run_program(spec, p);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    cs_groq_sched_stats(r.res.net, &st);
    cr_expect_gt(st.nonminimal, 0);
    prog_done(&r);
    snprintf(spec, sizeof spec, "groq:nodes=2,schedule=%s", dump);
    cs_error_t err;
    cr_expect_eq(cs_machine_new(spec, &m, &err), CS_OK, "%s", err.msg);
    cs_machine_free(m);
    cs_program_free(p);
    unlink(dump);
}

Test(groq, explicit_schedule_conflicts_are_rejected)
{
    char path[] = "/tmp/groq_schedXXXXXX", spec[256];
    cs_machine_t *m;
    cs_error_t err;
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    snprintf(spec, sizeof spec, "groq:nodes=1,schedule=%s", path);
    /* two vectors in slot 3 of link 0->1 */
    write_file(path, "# two messages\n0.0 0->1 0\n0.1 0->1 3\n1.0 2->1 3\n1.1 0->1 3\n");
    cr_expect_neq(cs_machine_new(spec, &m, &err), CS_OK);
    cr_expect(strstr(err.msg, "link 0->1") && strstr(err.msg, "slot 3") &&
                  strstr(err.msg, "0.1") && strstr(err.msg, "1.1") && strstr(err.msg, ":5:"),
              "%s", err.msg);
    /* overlapping, not aligned: 10 ns apart on one link */
    write_file(path, "0.0 4->5 100ns\n7.2 4->5 110ns\n");
    cr_expect_neq(cs_machine_new(spec, &m, &err), CS_OK);
    cr_expect(strstr(err.msg, "link 4->5") && strstr(err.msg, "7.2") && strstr(err.msg, "0.0"),
              "%s", err.msg);
    /* one slot apart is fine; opposite directions never conflict */
    write_file(path, "0.0 4->5 100ns\n7.2 4->5 126.24ns\n3.0 5->4 100ns\n");
    cr_expect_eq(cs_machine_new(spec, &m, &err), CS_OK, "%s", err.msg);
    cs_machine_free(m);
    /* a vector that does not continue from where it is, or too early */
    write_file(path, "0.0 0->1 0\n0.0 2->3 100\n");
    cr_expect_neq(cs_machine_new(spec, &m, &err), CS_OK);
    cr_expect(strstr(err.msg, "vector 0.0") != NULL, "%s", err.msg);
    write_file(path, "0.0 0->1 0\n0.0 1->3 1\n");
    cr_expect_neq(cs_machine_new(spec, &m, &err), CS_OK);
    cr_expect(strstr(err.msg, "before it has arrived") != NULL, "%s", err.msg);
    /* syntax and links */
    write_file(path, "0.0 0->1\n");
    cr_expect_neq(cs_machine_new(spec, &m, &err), CS_OK);
    cr_expect(strstr(err.msg, ":1:") != NULL, "%s", err.msg);
    write_file(path, "0.0 0->9 0\n");
    cr_expect_neq(cs_machine_new(spec, &m, &err), CS_OK);
    cr_expect(strstr(err.msg, "0->9") != NULL, "%s", err.msg);
    unlink(path);
    /* a vector placed before its message exists is a model error of the run */
    fd = mkstemp(path);
    close(fd);
    write_file(path, "0.0 0->1 0\n");
    snprintf(spec, sizeof spec, "groq:nodes=1,align=1,schedule=%s", path);
    cs_program_t *p = one_message(2, 0, 1, 320);
    cs_machine_t *mm;
    cr_assert_eq(cs_machine_new(spec, &mm, &err), CS_OK, "%s", err.msg);
    cs_machine_free(mm);
    prog_run_t r = run_program(spec, p);
    cr_expect_eq(r.rc, CS_ERR_RUNTIME);
    cr_expect(strstr(r.err.msg, "vector 0.0") != NULL, "%s", r.err.msg);
    prog_done(&r);
    /* and a vector placed later than the compiler would: the run follows it */
    write_file(path, "0.0 0->1 1000\n");
    snprintf(spec, sizeof spec, "groq:nodes=1,schedule=%s", path);
    r = run_program(spec, p);
    cr_expect_eq(r.rc, CS_OK, "%s", r.err.msg);
    cr_expect_eq(r.res.finish, 1000 * S + H);
    prog_done(&r);
    cs_program_free(p);
    unlink(path);
}

/* ---- start-up alignment (paper §4.5, reference T19) ---------------------------------------- */

Test(groq, startup_alignment)
{
    /* (floor(L/252) + 1) epochs per level of the spanning tree; an epoch is
     * 252 cycles at 900 MHz (280 ns); L = 722 ns x 0.9 GHz = 650 cycles */
    cs_machine_t *m = machine("groq:nodes=1,align=1");
    cr_expect_eq(groq(m)->link_cycles, 650);
    cr_expect_eq(groq(m)->align_height, 1);
    cr_expect_eq(groq(m)->align_ticks, 3 * 280000); /* 3 epochs */
    cs_machine_free(m);
    m = machine("groq:nodes=33,align=1");
    cr_expect_eq(groq(m)->align_height, 3);
    cr_expect_eq(groq(m)->align_ticks, 9 * 280000); /* L = 650, h = 3: 9 epochs */
    cs_machine_free(m);
    m = machine("groq:nodes=1,align=1,link_cycles=217");
    cr_expect_eq(groq(m)->align_ticks, 280000); /* L = 217, h = 1: 1 epoch */
    cs_machine_free(m);
    cr_expect_eq(message_time("groq:nodes=1,align=1", 2, 0, 1, 320), 3 * 280000 + H);
    cr_expect_eq(message_time("groq:nodes=1,align=0", 2, 0, 1, 320), H);
}

/* ---- determinism, errors ------------------------------------------------------------------ */

Test(groq, deterministic)
{
    static const char *const specs[] = {"groq:nodes=4", "groq:nodes=4,paths=auto"};
    for (int s = 0; s < 2; s++) {
        h_run_t a = h_run(specs[s], "alltoall", "flat", 0, 5000, 0, NULL, CS_NET_PACKET, 0);
        h_run_t b = h_run(specs[s], "alltoall", "flat", 0, 5000, 0, NULL, CS_NET_PACKET, 0);
        cr_assert_eq(a.rc, CS_OK, "%s", a.err.msg);
        cr_assert_eq(b.rc, CS_OK, "%s", b.err.msg);
        cr_expect_eq(a.finish, b.finish);
        for (int32_t i = 0; i < cs_program_nops(a.prog); i++) {
            cr_expect_eq(a.res.ops[i].start, b.res.ops[i].start);
            cr_expect_eq(a.res.ops[i].end, b.res.ops[i].end);
        }
        h_done(&a);
        h_done(&b);
    }
}

Test(groq, spec_errors_name_the_key)
{
    static const struct {
        const char *spec, *word;
    } bad[] = {
        {"groq:nodes=34", "nodes"},       {"groq:nodes=0", "nodes"},
        {"groq:racks=146", "racks"},      {"groq:nodes=2,racks=2", "racks"},
        {"groq:nodes=2,hop=1ps", "hop"},  {"groq:nodes=2,hop=fast", "hop"},
        {"groq:nodes=2,paths=0", "paths"}, {"groq:nodes=2,paths=many", "paths"},
        {"groq:nodes=2,even=1,paths=auto", "even"}, {"groq:nodes=2,wire=100", "wire"},
        {"groq:nodes=2,vector=0", "vector"}, {"groq:nodes=2,lanes=0", "lanes"},
        {"groq:nodes=2,clock=0Hz", "clock"}, {"groq:nodes=2,align=2", "align"},
        {"groq:nodes=2,schedule=/nonexistent/x", "schedule"},
        {"groq:nodes=2,dump=/nonexistent/x", "dump"}, {"groq:nodes=2,bogus=1", "bogus"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cs_machine_t *m = NULL;
        cs_error_t err;
        cr_expect_neq(cs_machine_new(bad[i].spec, &m, &err), CS_OK, "%s", bad[i].spec);
        cr_expect(strstr(err.msg, bad[i].word) != NULL, "%s: %s", bad[i].spec, err.msg);
        cr_expect_null(m);
    }
    cs_machine_t *m = machine("groq");
    cr_expect_eq(cs_machine_nodes(m), 264);
    cr_expect_str_eq(m->spec, "groq:nodes=33,hop=722ns,lanes=4,lane_gbps=25,vector=320,wire=328,"
                              "paths=1,even=0,align=0,clock=900MHz,epoch=252,link_cycles=650");
    cs_machine_free(m);
}

/* --predict: the paper's 3-hop all-reduce, 722 ns x 3 = 2,166 ns on 256
 * TSPs (ISCA'22 §5.6), and one hop inside a node. */
Test(groq, predict_equals_simulation)
{
    cr_expect_eq(p_expect_exact("groq:nodes=32", "allreduce", "gateway", 0, 320, 0, NULL),
                 2166000.0, "2,166 ns in ps ticks");
    p_expect_exact("groq:nodes=4", "allreduce", "gateway", 0, 320, 0, NULL);
    p_expect_exact("groq:nodes=33", "allreduce", "gateway", 0, 100, 0, NULL);
    cr_expect_eq(p_expect_exact("groq:nodes=1", "allreduce", "gateway", 0, 320, 0, NULL), 722000.0);
    p_expect_none("groq:nodes=32", "allreduce", "gateway", 3200, "one vector");
    p_expect_none("groq:nodes=32", "allreduce", "hierarchical", 320, "allreduce/gateway only");
}
