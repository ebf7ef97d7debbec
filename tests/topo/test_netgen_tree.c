/*
 * test_netgen_tree.c - Criterion tests of the fat-tree, two-tier and star
 * generators (src/topo/netgen_tree.c).
 *
 * Oracles: node, switch and link counts worked out by hand for each shape
 * (a k-ary n-tree has k^n hosts, n*k^(n-1) switches, n*k^n links); a
 * reference BFS written here on nothing but the description's links, that
 * every generated route must match in length; the id layout of the XGFT
 * numbering (documented in netgen_tree.c) giving the top switch d-mod-k
 * must pick; and bisection values from the cut counted by hand.  The path
 * checker is shown to fail on a broken path.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/netgen_internal.h"

/* each hop's virtual-channel class (netdesc.h), written by the routes */
static uint8_t vcs[1 << 12];

#define GB 1e9

/* ---- helpers ------------------------------------------------------------- */

/* Builds with a generator's spec keys ("k=2,n=2"), as the net: machine
 * will; returns the status and leaves the message in err. */
static int build(const cs_netgen_type_t *type, const char *keys, const char *routing,
                 cs_netdesc_t **out, cs_error_t *err)
{
    char text[256];
    cs_spec_t spec;
    int rc;
    snprintf(text, sizeof text, "gen:%s", keys);
    cr_assert_eq(cs_spec_parse(text, &spec, err), CS_OK, "%s", err->msg);
    *out = cs_netdesc_new(type->name);
    rc = type->build(&spec, 100 * GB, 1e-6, routing, *out, err);
    cs_spec_destroy(&spec);
    return rc;
}

static cs_netdesc_t *make(const cs_netgen_type_t *type, const char *keys, const char *routing)
{
    cs_netdesc_t *d;
    cs_error_t err = {0};
    cr_assert_eq(build(type, keys, routing, &d, &err), CS_OK, "%s %s: %s", type->name, keys,
                 err.msg);
    return d;
}

/* The message of a build that must fail, with the status it must have. */
static void expect_error(const cs_netgen_type_t *type, const char *keys, const char *routing,
                         int code, const char *needle)
{
    cs_netdesc_t *d;
    cs_error_t err = {0};
    int rc = build(type, keys, routing, &d, &err);
    cr_assert_eq(rc, code, "%s %s: status %d (%s), expected %d", type->name, keys, rc, err.msg,
                 code);
    cr_assert(strstr(err.msg, needle), "%s %s: \"%s\" does not name \"%s\"", type->name, keys,
              err.msg, needle);
    cs_netdesc_free(d);
}

static int count_kind(const cs_netdesc_t *d, cs_netnode_kind_t kind)
{
    int n = 0;
    for (int32_t i = 0; i < cs_netdesc_nodes(d); i++)
        n += cs_netdesc_kind(d, i) == kind;
    return n;
}

static int degree(const cs_netdesc_t *d, int32_t node)
{
    int n = 0;
    for (int32_t i = 0; i < cs_netdesc_nlinks(d); i++)
        n += cs_netdesc_link(d, i)->u == node || cs_netdesc_link(d, i)->v == node;
    return n;
}

/* Hop distances from src by BFS over the links (the reference). */
static int *bfs(const cs_netdesc_t *d, int32_t src)
{
    int32_t n = cs_netdesc_nodes(d), m = cs_netdesc_nlinks(d), head = 0, tail = 0;
    int *dist = malloc((size_t)n * sizeof *dist);
    int32_t *queue = malloc((size_t)n * sizeof *queue);
    for (int32_t i = 0; i < n; i++)
        dist[i] = -1;
    dist[src] = 0;
    queue[tail++] = src;
    while (head < tail) {
        int32_t u = queue[head++];
        for (int32_t i = 0; i < m; i++) {
            const cs_netlink_t *l = cs_netdesc_link(d, i);
            int32_t v = l->u == u ? l->v : l->v == u ? l->u : -1;
            if (v >= 0 && dist[v] < 0) {
                dist[v] = dist[u] + 1;
                queue[tail++] = v;
            }
        }
    }
    free(queue);
    return dist;
}

/* NULL when path (n nodes) goes from src to dst over links of d, climbs
 * strictly in level then descends strictly (up/down), and has `hops`
 * hops; else what is wrong. */
static const char *bad_path(const cs_netdesc_t *d, int32_t src, int32_t dst,
                            const int32_t *path, int n, int hops)
{
    int down = 0;
    if (n != hops + 1)
        return "wrong length";
    if (path[0] != src || path[n - 1] != dst)
        return "wrong ends";
    for (int i = 1; i < n; i++) {
        int a = cs_netdesc_level(d, path[i - 1]), b = cs_netdesc_level(d, path[i]);
        if (path[i] < 0 || path[i] >= cs_netdesc_nodes(d) ||
            cs_netdesc_find_link(d, path[i - 1], path[i]) < 0)
            return "two consecutive nodes without a link";
        if (b < a)
            down = 1;
        else if (down || (b == a && n > 2)) /* one hop: a two-tier node's fast link */
            return "not up then down";
    }
    return NULL;
}

/* Every pair of hosts: the route exists and is an up/down path as short
 * as the BFS distance. */
static void check_all_routes(const cs_netdesc_t *d, uint64_t salt)
{
    int32_t h = cs_netdesc_hosts(d), path[64];
    for (int32_t s = 0; s < h; s++) {
        int *dist = bfs(d, s);
        for (int32_t t = 0; t < h; t++) {
            if (s == t)
                continue;
            int n = cs_netdesc_route(d, s, t, salt, path, vcs, 64);
            const char *why = bad_path(d, s, t, path, n, dist[t]);
            cr_assert_null(why, "%s: route %d -> %d (salt %llu, %d nodes): %s",
                           cs_netdesc_source(d), s, t, (unsigned long long)salt, n, why);
        }
        free(dist);
    }
}

/* ---- fat-tree: counts ------------------------------------------------------ */

static void check_kary(int k, int n, int hosts, int switches, int links)
{
    char keys[64];
    snprintf(keys, sizeof keys, "k=%d,n=%d", k, n);
    cs_netdesc_t *d = make(&cs_netgen_fattree_type, keys, NULL);
    int per_level = switches / n;
    cr_assert_eq(cs_netdesc_hosts(d), hosts, "%s", keys);
    cr_assert_eq(count_kind(d, CS_NETNODE_SWITCH), switches, "%s", keys);
    cr_assert_eq(cs_netdesc_nlinks(d), links, "%s", keys);
    for (int32_t i = 0; i < cs_netdesc_nodes(d); i++) {
        /* hosts first, then per_level switches a level; a host has one
         * link, a switch k down and k up, a top switch k down only */
        int level = i < hosts ? 0 : 1 + (i - hosts) / per_level;
        cr_assert_eq(cs_netdesc_kind(d, i), i < hosts ? CS_NETNODE_HOST : CS_NETNODE_SWITCH);
        cr_assert_eq(cs_netdesc_level(d, i), level, "%s node %d", keys, i);
        cr_assert_eq(degree(d, i), level == 0 ? 1 : level == n ? k : 2 * k, "%s node %d", keys,
                     i);
    }
    for (int32_t i = 0; i < cs_netdesc_nlinks(d); i++)
        cr_assert_eq(cs_netdesc_link(d, i)->mult, 1);
    /* full bisection: hosts/2 links of 100 GB/s */
    cr_assert_float_eq(cs_netdesc_bisection(d), hosts / 2 * 100 * GB, 1, "%s", keys);
    cr_assert_eq(cs_netdesc_check(d, NULL), CS_OK);
    cs_netdesc_free(d);
}

Test(netgen_tree, kary_ntree_counts)
{
    /* k^n hosts, n levels of k^(n-1) switches, n * k^n links */
    check_kary(2, 2, 4, 4, 8);
    check_kary(2, 3, 8, 12, 24);
    check_kary(4, 2, 16, 8, 32);
    check_kary(4, 3, 64, 48, 192);
}

Test(netgen_tree, defaults_are_4ary_2tree)
{
    cs_netdesc_t *d = make(&cs_netgen_fattree_type, "", NULL);
    cr_assert_eq(cs_netdesc_hosts(d), 16);
    cr_assert_eq(cs_netdesc_nodes(d), 24);
    cr_assert_eq(cs_netdesc_nlinks(d), 32);
    cr_assert_str_eq(cs_netdesc_route_name(d), "up/down (d-mod-k)");
    cs_netdesc_free(d);
}

Test(netgen_tree, oversubscribed_general_form)
{
    /* down=4+4: 16 hosts; up=1+2: 16*1/4 = 4 leaves with 4 hosts and 2
     * up-links each (2:1), 4*2/4 = 2 top switches of 4 leaves each;
     * links 16 + 4*2 = 24 */
    cs_netdesc_t *d = make(&cs_netgen_fattree_type, "levels=2,down=4+4,up=1+2", NULL);
    cr_assert_eq(cs_netdesc_hosts(d), 16);
    cr_assert_eq(cs_netdesc_nodes(d), 22);
    cr_assert_eq(cs_netdesc_nlinks(d), 24);
    for (int32_t leaf = 16; leaf < 20; leaf++) {
        cr_assert_eq(cs_netdesc_level(d, leaf), 1);
        cr_assert_eq(degree(d, leaf), 6);
        for (int32_t top = 20; top < 22; top++)
            cr_assert_geq(cs_netdesc_find_link(d, leaf, top), 0, "leaf %d top %d", leaf, top);
    }
    for (int32_t top = 20; top < 22; top++) {
        cr_assert_eq(cs_netdesc_level(d, top), 2);
        cr_assert_eq(degree(d, top), 4);
    }
    /* a host split along leaves {0,1} | {2,3} cuts 2 leaves * 2 up-links */
    cr_assert_float_eq(cs_netdesc_bisection(d), 4 * 100 * GB, 1);
    check_all_routes(d, 0);
    cs_netdesc_free(d);

    /* par=1+2 doubles the leaf-top links: 8 bw at both levels */
    d = make(&cs_netgen_fattree_type, "levels=2,down=4+4,up=1+2,par=1+2", NULL);
    cr_assert_eq(cs_netdesc_nlinks(d), 24);
    cr_assert_eq(cs_netdesc_link(d, cs_netdesc_find_link(d, 16, 20))->mult, 2);
    cr_assert_eq(cs_netdesc_link(d, cs_netdesc_find_link(d, 0, 16))->mult, 1);
    cr_assert_float_eq(cs_netdesc_bisection(d), 8 * 100 * GB, 1);
    cs_netdesc_free(d);
}

Test(netgen_tree, al_fares_k4_in_general_form)
{
    /* The k=4 fat-tree of Al-Fares et al.: 16 hosts, 8 edge, 8 aggregation
     * and 4 core switches, 48 links; each core switch reaches each of the
     * 4 pods once. */
    cs_netdesc_t *d = make(&cs_netgen_fattree_type, "levels=3,down=2+2+4,up=1+2+2", NULL);
    cr_assert_eq(cs_netdesc_hosts(d), 16);
    cr_assert_eq(cs_netdesc_nodes(d), 16 + 8 + 8 + 4);
    cr_assert_eq(cs_netdesc_nlinks(d), 48);
    for (int32_t core = 32; core < 36; core++) {
        cr_assert_eq(cs_netdesc_level(d, core), 3);
        cr_assert_eq(degree(d, core), 4);
        int pods[4] = {0};
        for (int32_t agg = 24; agg < 32; agg++)
            if (cs_netdesc_find_link(d, core, agg) >= 0)
                pods[(agg - 24) / 2]++; /* a pod's 2 aggregation switches are consecutive */
        for (int p = 0; p < 4; p++)
            cr_assert_eq(pods[p], 1, "core %d pod %d", core, p);
    }
    for (int32_t h = 0; h < 16; h++)
        cr_assert_eq(cs_netdesc_group(d, h), h / 2);
    check_all_routes(d, 0);
    check_all_routes(d, 12345);
    cs_netdesc_free(d);
}

Test(netgen_tree, al_fares_k32_size)
{
    /* k=32: k^3/4 = 8192 hosts, k^2/2 = 512 edge and 512 aggregation,
     * k^2/4 = 256 core switches; links 8192 + 512*16 + 512*16 */
    cs_netdesc_t *d = make(&cs_netgen_fattree_type, "levels=3,down=16+16+32,up=1+16+16", NULL);
    int32_t p[8];
    cr_assert_eq(cs_netdesc_hosts(d), 8192);
    cr_assert_eq(cs_netdesc_nodes(d), 8192 + 512 + 512 + 256);
    cr_assert_eq(cs_netdesc_nlinks(d), 8192 + 2 * 512 * 16);
    cr_assert_float_eq(cs_netdesc_bisection(d), 4096 * 100 * GB, 1);
    /* hosts 0 and 8191 are in pods 0 and 31: up to a core switch */
    cr_assert_eq(cs_netdesc_route(d, 0, 8191, 0, p, vcs, 8), 7);
    cr_assert_eq(cs_netdesc_level(d, p[3]), 3);
    cr_assert_eq(cs_netdesc_route(d, 0, 255, 0, p, vcs, 8), 5); /* one pod of 256 hosts */
    cr_assert_eq(cs_netdesc_route(d, 0, 15, 0, p, vcs, 8), 3);  /* one edge switch of 16 */
    cs_netdesc_free(d);
}

Test(netgen_tree, groups_with_several_leaves_a_host)
{
    /* up[0] = 2: each pair of hosts hangs from 2 leaf switches (ids
     * 12..23, copies of one subtree consecutive), which share its group;
     * level-2 switches span 3 groups: none */
    cs_netdesc_t *d = make(&cs_netgen_fattree_type, "levels=3,down=2+3+2,up=2+1+3", NULL);
    cr_assert_eq(cs_netdesc_hosts(d), 12);
    for (int32_t h = 0; h < 12; h++) {
        cr_assert_eq(cs_netdesc_group(d, h), h / 2);
        cr_assert_eq(degree(d, h), 2);
        cr_assert_geq(cs_netdesc_find_link(d, h, 12 + 2 * (h / 2)), 0);
        cr_assert_geq(cs_netdesc_find_link(d, h, 13 + 2 * (h / 2)), 0);
    }
    for (int32_t leaf = 12; leaf < 24; leaf++)
        cr_assert_eq(cs_netdesc_group(d, leaf), (leaf - 12) / 2);
    for (int32_t sw = 24; sw < cs_netdesc_nodes(d); sw++)
        cr_assert_eq(cs_netdesc_group(d, sw), -1);
    cs_netdesc_free(d);
}

/* ---- fat-tree: routes -------------------------------------------------------- */

Test(netgen_tree, routes_are_minimal_up_down)
{
    const char *shapes[] = {"k=2,n=2", "k=2,n=3", "k=4,n=2", "k=3,n=3",
                            "levels=3,down=2+3+2,up=2+1+3"};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        cs_netdesc_t *d = make(&cs_netgen_fattree_type, shapes[i], NULL);
        check_all_routes(d, 0);
        cs_netdesc_free(d);
        d = make(&cs_netgen_fattree_type, shapes[i], "ecmp");
        for (uint64_t salt = 0; salt < 5; salt++)
            check_all_routes(d, salt * 7919);
        cs_netdesc_free(d);
    }
}

Test(netgen_tree, route_lengths_by_hand)
{
    /* k=2,n=2: hosts 0,1 under leaf 4; 2,3 under leaf 5; tops 6,7 */
    cs_netdesc_t *d = make(&cs_netgen_fattree_type, "k=2,n=2", NULL);
    int32_t p[8];
    cr_assert_eq(cs_netdesc_route(d, 0, 1, 0, p, vcs, 8), 3);
    cr_assert_eq(p[1], 4);
    cr_assert_eq(cs_netdesc_route(d, 0, 3, 0, p, vcs, 8), 5);
    cr_assert_eq(p[1], 4);
    cr_assert_eq(p[3], 5);
    /* too little room, a switch, the same host: no route */
    cr_assert_eq(cs_netdesc_route(d, 0, 3, 0, p, vcs, 4), -1);
    cr_assert_eq(cs_netdesc_route(d, 4, 3, 0, p, vcs, 8), -1);
    cr_assert_eq(cs_netdesc_route(d, 2, 2, 0, p, vcs, 8), -1);
    cs_netdesc_free(d);
}

Test(netgen_tree, path_checker_can_fail)
{
    cs_netdesc_t *d = make(&cs_netgen_fattree_type, "k=2,n=2", NULL);
    int32_t skip[] = {0, 6, 3}, flat[] = {0, 4, 1}, back[] = {0, 4, 0, 4, 1},
            detour[] = {0, 4, 6, 4, 1}, good[] = {0, 4, 6, 5, 3};
    cr_assert_null(bad_path(d, 0, 3, good, 5, 4));
    cr_assert_not_null(bad_path(d, 0, 3, skip, 3, 2));   /* host 0 has no link to top 6 */
    cr_assert_not_null(bad_path(d, 0, 2, flat, 3, 2));   /* wrong end */
    cr_assert_not_null(bad_path(d, 0, 1, back, 5, 4));   /* up, down, up again */
    cr_assert_not_null(bad_path(d, 0, 1, detour, 5, 2)); /* longer than BFS */
    cs_netdesc_free(d);
}

Test(netgen_tree, dmodk_converges_on_one_top_switch)
{
    /* k=4,n=2: hosts 0..15, leaves 16..19, tops 20..23.  d-mod-k climbs
     * from the leaf by port d mod 4, and the tops are numbered by that
     * port: every route to d between leaves crosses top 20 + d mod 4. */
    cs_netdesc_t *d = make(&cs_netgen_fattree_type, "k=4,n=2", "updown");
    int32_t p[8];
    for (int32_t dst = 0; dst < 16; dst++)
        for (int32_t src = 0; src < 16; src++) {
            if (src / 4 == dst / 4)
                continue;
            for (uint64_t salt = 0; salt < 3; salt++) {
                cr_assert_eq(cs_netdesc_route(d, src, dst, salt, p, vcs, 8), 5);
                cr_assert_eq(p[2], 20 + dst % 4, "%d -> %d via %d", src, dst, p[2]);
            }
        }
    cs_netdesc_free(d);

    /* k=2,n=3: the routes to one host that cross the top all meet on one
     * top switch and one level-2 switch on the way down */
    d = make(&cs_netgen_fattree_type, "k=2,n=3", NULL);
    for (int32_t dst = 0; dst < 8; dst++) {
        int32_t top = -1, mid = -1;
        for (int32_t src = 0; src < 8; src++) {
            if (src / 4 == dst / 4)
                continue;
            cr_assert_eq(cs_netdesc_route(d, src, dst, 0, p, vcs, 8), 7);
            if (top < 0) {
                top = p[3];
                mid = p[4];
            }
            cr_assert_eq(p[3], top);
            cr_assert_eq(p[4], mid);
        }
    }
    cs_netdesc_free(d);
}

Test(netgen_tree, ecmp_spreads_over_top_switches)
{
    /* k=4,n=2: salts 0..3 take the 4 up ports of the leaf, one top each;
     * 16 salts use each top 4 times */
    cs_netdesc_t *d = make(&cs_netgen_fattree_type, "k=4,n=2", "ecmp");
    int32_t p[8];
    int seen[4] = {0};
    cr_assert_str_eq(cs_netdesc_route_name(d), "ECMP (up ports from the message hash)");
    for (uint64_t salt = 0; salt < 16; salt++) {
        cr_assert_eq(cs_netdesc_route(d, 0, 15, salt, p, vcs, 8), 5);
        cr_assert(p[2] >= 20 && p[2] < 24);
        seen[p[2] - 20]++;
    }
    for (int i = 0; i < 4; i++)
        cr_assert_eq(seen[i], 4, "top %d", 20 + i);
    cs_netdesc_free(d);
}

Test(netgen_tree, groups_levels_and_routing_names)
{
    cs_netdesc_t *d = make(&cs_netgen_fattree_type, "k=4,n=2", "shortest");
    for (int32_t h = 0; h < 16; h++)
        cr_assert_eq(cs_netdesc_group(d, h), h / 4); /* the leaf switch 16 + h/4 */
    for (int32_t leaf = 16; leaf < 20; leaf++) {
        cr_assert_eq(cs_netdesc_group(d, leaf), leaf - 16);
        for (int32_t h = 0; h < 16; h++)
            cr_assert_eq(cs_netdesc_find_link(d, h, leaf) >= 0, h / 4 == leaf - 16);
    }
    for (int32_t top = 20; top < 24; top++)
        cr_assert_eq(cs_netdesc_group(d, top), -1);
    cr_assert_null(cs_netdesc_route_name(d)); /* shortest: the machine routes */
    int32_t p[8];
    cr_assert_eq(cs_netdesc_route(d, 0, 15, 0, p, vcs, 8), -1);
    cs_netdesc_free(d);
}

/* ---- two-tier ------------------------------------------------------------------ */

Test(netgen_tree, twotier_counts_and_routes)
{
    /* 4 nodes of 8: 32 hosts; radix 16 takes 2 nodes a leaf: 2 leaves, 16
     * spines; links: 4 * 8*7/2 = 112 fast, 32 NIC, 2 * 16 leaf-spine */
    cs_netdesc_t *d = make(&cs_netgen_twotier_type, "", NULL);
    int32_t p[8];
    cr_assert_eq(cs_netdesc_hosts(d), 32);
    cr_assert_eq(cs_netdesc_nodes(d), 32 + 2 + 16);
    cr_assert_eq(cs_netdesc_nlinks(d), 112 + 32 + 32);
    for (int32_t h = 0; h < 32; h++) {
        cr_assert_eq(cs_netdesc_group(d, h), h / 8);
        cr_assert_eq(degree(d, h), 7 + 1);
        cr_assert_geq(cs_netdesc_find_link(d, h, 32 + h / 16), 0);
    }
    /* the fast link inside a node, NIC links through the leaf */
    cr_assert_eq(cs_netdesc_route(d, 8, 13, 0, p, vcs, 8), 2);
    cr_assert_float_eq(cs_netdesc_link(d, cs_netdesc_find_link(d, 8, 13))->bw, 300 * GB, 1);
    cr_assert_eq(cs_netdesc_route(d, 0, 9, 0, p, vcs, 8), 3);
    cr_assert_eq(p[1], 32);
    cr_assert_eq(cs_netdesc_route(d, 0, 17, 0, p, vcs, 8), 5);
    cr_assert_float_eq(cs_netdesc_link(d, cs_netdesc_find_link(d, 0, 32))->bw, 100 * GB, 1);
    cr_assert_eq(p[2], 34 + 17 % 16); /* d-mod-k: spine dst mod 16 */
    /* nodes {0,1} | {2,3}: leaf 32's 16 spine links, 16 * 100 GB/s */
    cr_assert_float_eq(cs_netdesc_bisection(d), 16 * 100 * GB, 1);
    check_all_routes(d, 0);
    cs_netdesc_free(d);

    /* 2 nodes fit one leaf: no spine */
    d = make(&cs_netgen_twotier_type, "nodes=2,gpus=8,radix=16,nvbw=900GB/s,nvlat=100ns", NULL);
    cr_assert_eq(cs_netdesc_nodes(d), 16 + 1);
    cr_assert_eq(cs_netdesc_nlinks(d), 2 * 28 + 16);
    cr_assert_float_eq(cs_netdesc_link(d, cs_netdesc_find_link(d, 0, 1))->bw, 900 * GB, 1);
    cr_assert_float_eq(cs_netdesc_link(d, cs_netdesc_find_link(d, 0, 1))->lat, 100e-9, 1e-15);
    /* node 0 | node 1: the 8 NIC links of the side without the leaf */
    cr_assert_float_eq(cs_netdesc_bisection(d), 8 * 100 * GB, 1);
    check_all_routes(d, 0);
    cs_netdesc_free(d);

    /* radix 12 takes one node of 8: 3 leaves, 8 spines, 3*8 leaf-spine */
    d = make(&cs_netgen_twotier_type, "nodes=3,gpus=8,radix=12", NULL);
    cr_assert_eq(cs_netdesc_nodes(d), 24 + 3 + 8);
    cr_assert_eq(cs_netdesc_nlinks(d), 3 * 28 + 24 + 24);
    cr_assert_eq(cs_netdesc_group(d, 25), 1); /* a leaf of one node has its group */
    cr_assert_float_eq(cs_netdesc_bisection(d), 0, 0); /* 3 nodes: unknown */
    check_all_routes(d, 0);
    cs_netdesc_free(d);
}

/* ---- star -------------------------------------------------------------------------- */

Test(netgen_tree, star_with_and_without_backbone)
{
    cs_netdesc_t *d = make(&cs_netgen_star_type, "hosts=5", NULL);
    int32_t p[8];
    cr_assert_eq(cs_netdesc_nodes(d), 6);
    cr_assert_eq(cs_netdesc_nlinks(d), 5);
    cr_assert_eq(degree(d, 5), 5);
    cr_assert_null(cs_netdesc_route_name(d));
    cr_assert_float_eq(cs_netdesc_bisection(d), 2 * 100 * GB, 1); /* 5/2 hosts' links */
    cs_netdesc_free(d);

    /* every route crosses the backbone switch 5 (and back), paying half
     * of backlat each way */
    d = make(&cs_netgen_star_type, "hosts=4,backbone=10GB/s,backlat=2us", NULL);
    cr_assert_eq(cs_netdesc_nodes(d), 6);
    cr_assert_eq(cs_netdesc_nlinks(d), 5);
    cr_assert_eq(cs_netdesc_route(d, 1, 2, 0, p, vcs, 8), 5);
    int32_t want[] = {1, 4, 5, 4, 2};
    cr_assert_arr_eq(p, want, sizeof want);
    const cs_netlink_t *bb = cs_netdesc_link(d, cs_netdesc_find_link(d, 4, 5));
    cr_assert_float_eq(bb->bw, 10 * GB, 1);
    cr_assert_float_eq(bb->lat, 1e-6, 1e-15);
    cr_assert_float_eq(cs_netdesc_bisection(d), 10 * GB, 1);
    cs_netdesc_free(d);
}

/* ---- errors ----------------------------------------------------------------------------- */

Test(netgen_tree, errors_name_the_key)
{
    expect_error(&cs_netgen_fattree_type, "k=0,n=2", NULL, CS_ERR_RANGE, "'k'");
    expect_error(&cs_netgen_fattree_type, "k=4,n=0", NULL, CS_ERR_RANGE, "'n'");
    expect_error(&cs_netgen_fattree_type, "levels=2,down=4+4+4,up=1+2", NULL, CS_ERR_USAGE,
                 "down=4+4+4");
    expect_error(&cs_netgen_fattree_type, "levels=2,down=4+4,up=1", NULL, CS_ERR_USAGE, "up=1");
    expect_error(&cs_netgen_fattree_type, "levels=2,down=4+4,up=1+2,par=1+1+1", NULL,
                 CS_ERR_USAGE, "par=");
    expect_error(&cs_netgen_fattree_type, "levels=2,down=4+4", NULL, CS_ERR_USAGE, "up=");
    expect_error(&cs_netgen_fattree_type, "k=4,levels=2,down=4+4,up=1+4", NULL, CS_ERR_USAGE,
                 "not both");
    /* 64^4 = 2^24 hosts; 2048^2 hosts = 2^22 but 2^22 + 2*2048 nodes */
    expect_error(&cs_netgen_fattree_type, "k=64,n=4", NULL, CS_ERR_RANGE, "k, n");
    expect_error(&cs_netgen_fattree_type, "k=2048,n=2", NULL, CS_ERR_RANGE, "k=2048, n=2");
    expect_error(&cs_netgen_fattree_type, "k=4,n=2", "valiant", CS_ERR_USAGE,
                 "routing=valiant: unknown routing for fattree; valid: updown, ecmp, shortest");
    expect_error(&cs_netgen_twotier_type, "nodes=100000,gpus=100,radix=100", NULL, CS_ERR_RANGE,
                 "nodes");
    expect_error(&cs_netgen_twotier_type, "gpus=8,radix=4", NULL, CS_ERR_RANGE, "radix=4");
    expect_error(&cs_netgen_twotier_type, "nvbw=fast", NULL, CS_ERR_USAGE, "nvbw");
    expect_error(&cs_netgen_twotier_type, "", "ecmp", CS_ERR_USAGE, "routing=ecmp");
    expect_error(&cs_netgen_star_type, "hosts=0", NULL, CS_ERR_RANGE, "'hosts'");
    expect_error(&cs_netgen_star_type, "backlat=1us", NULL, CS_ERR_USAGE, "backlat");
    expect_error(&cs_netgen_star_type, "hosts=4", "ecmp", CS_ERR_USAGE,
                 "routing=ecmp: unknown routing for star; valid: shortest");
    expect_error(&cs_netgen_star_type, "backbone=1GB/s", "shortest", CS_ERR_USAGE,
                 "valid: backbone");
}

Test(netgen_tree, direct_calls_check_their_arguments)
{
    cs_error_t err = {0};
    cs_netdesc_t *d = cs_netdesc_new("t");
    int down[2] = {4, 4}, up[2] = {1, 0};
    cr_assert_eq(cs_netgen_fattree(d, 2, down, up, NULL, 1e9, 0, NULL, &err), CS_ERR_RANGE);
    cr_assert(strstr(err.msg, "up=0"), "%s", err.msg);
    cr_assert_eq(cs_netgen_fattree(d, 0, down, up, NULL, 1e9, 0, NULL, &err), CS_ERR_RANGE);
    cr_assert(strstr(err.msg, "levels=0"), "%s", err.msg);
    up[1] = 4;
    cr_assert_eq(cs_netgen_fattree(d, 2, down, up, NULL, 0, 0, NULL, &err), CS_ERR_RANGE);
    cr_assert(strstr(err.msg, "bw"), "%s", err.msg);
    cr_assert_eq(cs_netgen_star(d, 4, 1e9, 0, 1e9, -1, &err), CS_ERR_RANGE);
    cr_assert(strstr(err.msg, "backlat"), "%s", err.msg);
    cr_assert_eq(cs_netdesc_nodes(d), 0); /* nothing added before the checks */
    cr_assert_eq(cs_netgen_star(d, 4, 1e9, 0, 0, 0, &err), CS_OK);
    cr_assert_eq(cs_netgen_star(d, 4, 1e9, 0, 0, 0, &err), CS_ERR_USAGE); /* not empty */
    cs_netdesc_free(d);
}
