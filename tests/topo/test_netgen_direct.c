/*
 * test_netgen_direct.c - Criterion tests of the direct-network and
 * dragonfly generators (src/topo/netgen_direct.c).
 *
 * Oracles, all derived here from the structure and never from the code
 * under test: node and link counts in closed form; dimension-order paths
 * written out by hand; for every pair of a small instance, a route that is
 * a chain of existing links whose length is the sum of per-dimension ring
 * distances (tori, meshes) or of differing coordinates (HyperX), with the
 * dimensions visited in order; for dragonflies, one global link per group
 * pair at the routers the documented arrangement names, minimal routes of
 * one global hop and Valiant routes of two through a third group.  The
 * route checker is shown to fail on a bad path.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/netgen.h"
#include "topo/netgen_internal.h" /* the registry tables, without netgen.c's others */

/* each hop's virtual-channel class (netdesc.h), written by the routes */
static uint8_t vcs[1 << 12];

#define MAXP 64

/* ---- helpers ------------------------------------------------------------- */

static cs_netdesc_t *torus(int ndims, const int *dims, int wrap, const char *routing)
{
    cs_netdesc_t *d = cs_netdesc_new("gen=torus");
    cs_error_t err = {0};
    int rc = cs_netgen_torus(d, ndims, dims, wrap, 1e9, 1e-6, routing, &err);
    cr_assert_eq(rc, CS_OK, "torus: %s", err.msg);
    return d;
}

/* Builds from a spec string through a registry table; returns the status
 * and leaves the message in *err. */
static int build_spec(const cs_netgen_type_t *t, const char *text, const char *routing,
                      cs_netdesc_t **out, cs_error_t *err)
{
    cs_spec_t spec;
    int rc = cs_spec_parse(text, &spec, err);
    cr_assert_eq(rc, CS_OK, "spec %s: %s", text, err->msg);
    *out = cs_netdesc_new(t->name);
    rc = t->build(&spec, 1e9, 1e-6, routing, *out, err);
    cs_spec_destroy(&spec);
    return rc;
}

static cs_netdesc_t *build_ok(const cs_netgen_type_t *t, const char *text, const char *routing)
{
    cs_netdesc_t *d;
    cs_error_t err = {0};
    int rc = build_spec(t, text, routing, &d, &err);
    cr_assert_eq(rc, CS_OK, "%s: %s", text, err.msg);
    return d;
}

/* NULL when path[0..n) runs from src to dst over existing links, else why not. */
static const char *route_fault(const cs_netdesc_t *d, const int32_t *path, int n, int32_t src,
                               int32_t dst)
{
    if (n < 2)
        return "fewer than two nodes";
    if (path[0] != src || path[n - 1] != dst)
        return "wrong ends";
    for (int i = 1; i < n; i++)
        if (cs_netdesc_find_link(d, path[i - 1], path[i]) < 0)
            return "a hop without a link";
    return NULL;
}

static int route_checked(const cs_netdesc_t *d, int32_t src, int32_t dst, uint64_t salt,
                         int32_t *path)
{
    int n = cs_netdesc_route(d, src, dst, salt, path, vcs, MAXP);
    const char *why = route_fault(d, path, n, src, dst);
    cr_assert_null(why, "route %d -> %d (salt %llu): %s", (int)src, (int)dst,
                   (unsigned long long)salt, why);
    return n;
}

static void assert_path(const int32_t *got, int n, const int32_t *want, int m)
{
    cr_assert_eq(n, m, "path of %d nodes, expected %d", n, m);
    for (int i = 0; i < m; i++)
        cr_assert_eq(got[i], want[i], "node %d of the path is %d, expected %d", i, (int)got[i],
                     (int)want[i]);
}

/* Row-major coordinate i of id (last dimension fastest), for the oracle. */
static int coord(int32_t id, int ndims, const int *dims, int i)
{
    for (int k = ndims - 1; k > i; k--)
        id /= dims[k];
    return id % dims[i];
}

static int ring_dist(int a, int b, int n, int wrap)
{
    int x = abs(a - b);
    return wrap && n - x < x ? n - x : x;
}

/* ---- tori and meshes ----------------------------------------------------- */

Test(torus, counts_8x8x8)
{
    int dims[] = {8, 8, 8};
    cs_netdesc_t *d = torus(3, dims, 1, NULL);
    cr_assert_eq(cs_netdesc_nodes(d), 512);
    cr_assert_eq(cs_netdesc_hosts(d), 512); /* every node a host that forwards */
    cr_assert_eq(cs_netdesc_nlinks(d), 512 * 3);
    /* the cut across a dimension: 64 rings, each crossed twice */
    cr_assert_float_eq(cs_netdesc_bisection(d), 128 * 1e9, 1);
    cr_assert_str_eq(cs_netdesc_route_name(d), "dimension order (dor)");
    cs_netdesc_free(d);
}

Test(mesh, counts_4x4)
{
    int dims[] = {4, 4};
    cs_netdesc_t *d = torus(2, dims, 0, NULL);
    cr_assert_eq(cs_netdesc_nodes(d), 16);
    cr_assert_eq(cs_netdesc_nlinks(d), 2 * 4 * 3); /* 4 rows and 4 columns of 3 */
    cr_assert_float_eq(cs_netdesc_bisection(d), 4 * 1e9, 1); /* 4 rows cut once */
    cs_netdesc_free(d);
}

Test(torus, size_two_has_one_link_size_one_none)
{
    int dims[] = {2, 3}, line[] = {1, 4}, one[] = {1, 1};
    cs_netdesc_t *d = torus(2, dims, 1, NULL);
    /* 3 columns of one link (ring of 2) + 2 rows of a ring of 3 */
    cr_assert_eq(cs_netdesc_nlinks(d), 3 + 6);
    for (int32_t i = 0; i < cs_netdesc_nlinks(d); i++)
        cr_assert_eq(cs_netdesc_link(d, i)->mult, 1, "link %d doubled", (int)i);
    cr_assert_geq(cs_netdesc_find_link(d, 0, 3), 0); /* (0,0)-(1,0) */
    cr_assert_geq(cs_netdesc_find_link(d, 0, 2), 0); /* (0,0)-(0,2): the wrap */
    cr_assert_eq(cs_netdesc_bisection(d), 0); /* longest dimension odd: unknown */
    cs_netdesc_free(d);
    d = torus(2, line, 1, NULL);
    cr_assert_eq(cs_netdesc_nlinks(d), 4);
    cs_netdesc_free(d);
    d = torus(2, one, 1, NULL);
    cr_assert_eq(cs_netdesc_nodes(d), 1);
    cr_assert_eq(cs_netdesc_nlinks(d), 0);
    cs_netdesc_free(d);
}

Test(torus, dor_paths_by_hand)
{
    int dims[] = {8, 8, 8};
    int32_t path[MAXP];
    cs_netdesc_t *d = torus(3, dims, 1, NULL);
    /* (0,0,0) -> (3,5,1): dimension 0 up 3, dimension 1 down 3 (5 is 3 away
     * going down), dimension 2 up 1 */
    int32_t want[] = {0, 64, 128, 192, 192 + 56, 192 + 48, 192 + 40, 233};
    int n = route_checked(d, 0, 233, 0, path);
    assert_path(path, n, want, 8);
    /* exactly half way round: the increasing direction, both ways */
    int32_t there[] = {0, 64, 128, 192, 256}, back[] = {256, 320, 384, 448, 0};
    n = route_checked(d, 0, 256, 0, path);
    assert_path(path, n, there, 5);
    n = route_checked(d, 256, 0, 0, path);
    assert_path(path, n, back, 5);
    /* too short a buffer: -1 */
    cr_assert_eq(cs_netdesc_route(d, 0, 233, 0, path, vcs, 7), -1);
    cs_netdesc_free(d);
}

/* Every pair: a valid path of 1 + sum of ring distances nodes, one
 * coordinate changing per hop, dimensions in non-decreasing order. */
static void all_pairs_dor(int ndims, const int *dims, int wrap)
{
    int32_t path[MAXP];
    cs_netdesc_t *d = torus(ndims, dims, wrap, NULL);
    int32_t n = cs_netdesc_nodes(d);
    for (int32_t s = 0; s < n; s++)
        for (int32_t t = 0; t < n; t++) {
            int want = 1, len, last = 0;
            if (s == t)
                continue;
            for (int i = 0; i < ndims; i++)
                want += ring_dist(coord(s, ndims, dims, i), coord(t, ndims, dims, i), dims[i],
                                  wrap);
            len = route_checked(d, s, t, 0, path);
            cr_assert_eq(len, want, "%d -> %d: %d nodes, expected %d", (int)s, (int)t, len,
                         want);
            for (int k = 1; k < len; k++) {
                int changed = -1, count = 0;
                for (int i = 0; i < ndims; i++)
                    if (coord(path[k - 1], ndims, dims, i) != coord(path[k], ndims, dims, i)) {
                        changed = i;
                        count++;
                    }
                cr_assert_eq(count, 1);
                cr_assert_geq(changed, last, "%d -> %d: dimension %d after %d", (int)s, (int)t,
                              changed, last);
                last = changed;
            }
        }
    cs_netdesc_free(d);
}

Test(torus, all_pairs_dor)
{
    int a[] = {3, 4}, b[] = {2, 3}, c[] = {5, 2, 4}, e[] = {6};
    all_pairs_dor(2, a, 1);
    all_pairs_dor(2, b, 1);
    all_pairs_dor(3, c, 1);
    all_pairs_dor(1, e, 1);
}

Test(mesh, all_pairs_dor)
{
    int a[] = {3, 4}, c[] = {3, 2, 4};
    all_pairs_dor(2, a, 0);
    all_pairs_dor(3, c, 0);
}

Test(torus, checker_fails_on_a_bad_path)
{
    int dims[] = {4, 4};
    cs_netdesc_t *d = torus(2, dims, 0, NULL);
    int32_t diag[] = {0, 5}, ends[] = {0, 1};
    cr_assert_not_null(route_fault(d, diag, 2, 0, 5)); /* (0,0)-(1,1) is no link */
    cr_assert_not_null(route_fault(d, ends, 2, 0, 2));
    cr_assert_null(route_fault(d, ends, 2, 0, 1));
    cs_netdesc_free(d);
}

Test(torus, spec_and_routing_names)
{
    cs_netdesc_t *d = build_ok(&cs_netgen_torus_type, "torus:dims=2+3+4", NULL);
    cr_assert_eq(cs_netdesc_nodes(d), 24);
    /* dimension of 2: 12 single links; of 3: 8 rings of 3; of 4: 6 rings of 4 */
    cr_assert_eq(cs_netdesc_nlinks(d), 12 + 24 + 24);
    cr_assert_float_eq(cs_netdesc_bisection(d), 6 * 2 * 1e9, 1);
    cs_netdesc_free(d);
    d = build_ok(&cs_netgen_torus_type, "torus:dims=2x3", NULL);
    cr_assert_float_eq(cs_netdesc_bisection(d), 0, 1e-9); /* longest odd: unknown */
    cs_netdesc_free(d);
    d = build_ok(&cs_netgen_torus_type, "torus:dims=2x1", NULL);
    cr_assert_float_eq(cs_netdesc_bisection(d), 1e9, 1); /* a ring of 2: one link */
    cs_netdesc_free(d);
    d = build_ok(&cs_netgen_mesh_type, "mesh", "shortest"); /* default 4x4 */
    cr_assert_eq(cs_netdesc_nlinks(d), 24);
    cr_assert_null(cs_netdesc_route_name(d));
    cs_netdesc_free(d);
    d = build_ok(&cs_netgen_torus_type, "torus", "dor");
    cr_assert_eq(cs_netdesc_nlinks(d), 32);
    cr_assert_not_null(cs_netdesc_route_name(d));
    cs_netdesc_free(d);
}

/* ---- HyperX ------------------------------------------------------------- */

Test(hyperx, counts_groups_and_paths)
{
    int32_t path[MAXP];
    cs_netdesc_t *d = build_ok(&cs_netgen_hyperx_type, "hyperx:dims=4x4,hosts=2", NULL);
    cr_assert_eq(cs_netdesc_nodes(d), 48);
    cr_assert_eq(cs_netdesc_hosts(d), 32);
    for (int32_t v = 0; v < 48; v++) {
        cr_assert_eq(cs_netdesc_kind(d, v), v < 32 ? CS_NETNODE_HOST : CS_NETNODE_SWITCH);
        cr_assert_eq(cs_netdesc_group(d, v), v < 32 ? v / 2 : v - 32);
    }
    cr_assert_eq(cs_netdesc_nlinks(d), 16 * 6 / 2 + 32);
    /* host 0 on switch (0,0) to host 31 on switch (3,3): dimension 0 to
     * (3,0) = switch 12, then dimension 1 to (3,3) = switch 15 */
    int32_t far[] = {0, 32, 44, 47, 31}, near[] = {0, 32, 1};
    int n = route_checked(d, 0, 31, 0, path);
    assert_path(path, n, far, 5);
    n = route_checked(d, 0, 1, 0, path);
    assert_path(path, n, near, 3);
    cs_netdesc_free(d);
}

Test(hyperx, all_pairs_dor)
{
    int dims[] = {3, 2, 4}, nd = 3, per = 2, nsw = 24, nh = 48;
    int32_t path[MAXP];
    cs_netdesc_t *d = build_ok(&cs_netgen_hyperx_type, "hyperx:dims=3x2x4,hosts=2", NULL);
    cr_assert_eq(cs_netdesc_nlinks(d), nh + nsw * (2 + 1 + 3) / 2);
    for (int32_t s = 0; s < nh + nsw; s++)
        for (int32_t t = 0; t < nh + nsw; t++) {
            int32_t ss = s < nh ? s / per : s - nh, ts = t < nh ? t / per : t - nh;
            int want = (s < nh) + (t < nh) + 1, n;
            if (s == t)
                continue;
            for (int i = 0; i < nd; i++)
                want += coord(ss, nd, dims, i) != coord(ts, nd, dims, i);
            n = route_checked(d, s, t, 0, path);
            cr_assert_eq(n, want, "%d -> %d: %d nodes, expected %d", (int)s, (int)t, n, want);
        }
    cs_netdesc_free(d);
}

/* ---- dragonfly ----------------------------------------------------------- */

enum { A = 4, P = 2, H = 2, G = 9, HOSTS = G * A * P, ROUTERS = G * A };

static int group_of(int32_t v) { return v < HOSTS ? v / (A * P) : (v - HOSTS) / A; }

/* Global hops of a path: consecutive routers in different groups. */
static int global_hops(const int32_t *path, int n)
{
    int k = 0;
    for (int i = 1; i < n; i++)
        k += path[i - 1] >= HOSTS && path[i] >= HOSTS && group_of(path[i - 1]) != group_of(path[i]);
    return k;
}

static cs_netdesc_t *dfly(const char *arrangement, const char *routing)
{
    char text[128];
    snprintf(text, sizeof text, "dragonfly:a=%d,p=%d,h=%d,g=%d,arrangement=%s", A, P, H, G,
             arrangement);
    return build_ok(&cs_netgen_dragonfly_type, text, routing);
}

Test(dragonfly, counts_levels_groups)
{
    cs_netdesc_t *d = build_ok(&cs_netgen_dragonfly_type, "dragonfly", NULL); /* defaults */
    int pairs[G][G] = {{0}}, globals[ROUTERS] = {0};
    cr_assert_eq(cs_netdesc_nodes(d), HOSTS + ROUTERS);
    cr_assert_eq(cs_netdesc_hosts(d), 72);
    cr_assert_eq(cs_netdesc_nlinks(d), 72 + 9 * 6 + 36);
    for (int32_t v = 0; v < HOSTS + ROUTERS; v++) {
        cr_assert_eq(cs_netdesc_level(d, v), v < HOSTS ? 0 : 1);
        cr_assert_eq(cs_netdesc_group(d, v), group_of(v));
    }
    for (int32_t i = 0; i < cs_netdesc_nlinks(d); i++) {
        const cs_netlink_t *l = cs_netdesc_link(d, i);
        if (l->u < HOSTS || l->v < HOSTS) { /* a host on its own router */
            int32_t h = l->u < l->v ? l->u : l->v, r = l->u < l->v ? l->v : l->u;
            cr_assert_eq(r, HOSTS + h / P);
        } else if (group_of(l->u) != group_of(l->v)) {
            pairs[group_of(l->u)][group_of(l->v)]++;
            pairs[group_of(l->v)][group_of(l->u)]++;
            globals[l->u - HOSTS]++;
            globals[l->v - HOSTS]++;
        }
    }
    for (int x = 0; x < G; x++)
        for (int y = 0; y < G; y++)
            cr_assert_eq(pairs[x][y], x != y, "groups %d and %d: %d global links", x, y,
                         pairs[x][y]);
    for (int r = 0; r < ROUTERS; r++)
        cr_assert_eq(globals[r], H, "router %d has %d global links", r, globals[r]);
    cr_assert_str_eq(cs_netdesc_route_name(d), "minimal");
    cs_netdesc_free(d);
}

Test(dragonfly, arrangements_by_hand)
{
    /* consecutive: group 0's port 0 (router 0) goes to group 1, where it is
     * port g-2-0 = 7, router 3: node 72 + 1*4 + 3 = 79 */
    cs_netdesc_t *d = dfly("consecutive", NULL);
    cr_assert_geq(cs_netdesc_find_link(d, 72, 79), 0);
    cr_assert_lt(cs_netdesc_find_link(d, 72, 72 + 8 * 4 + 3), 0);
    cs_netdesc_free(d);
    /* palmtree: the same port goes to group 8 (0 - 0 - 1 mod 9), router 3 */
    d = dfly("palmtree", NULL);
    cr_assert_geq(cs_netdesc_find_link(d, 72, 72 + 8 * 4 + 3), 0);
    cr_assert_lt(cs_netdesc_find_link(d, 72, 79), 0);
    cs_netdesc_free(d);
}

Test(dragonfly, minimal_all_pairs)
{
    int32_t path[MAXP];
    for (int arr = 0; arr < 2; arr++) {
        cs_netdesc_t *d = dfly(arr ? "palmtree" : "consecutive", "minimal");
        for (int32_t s = 0; s < HOSTS + ROUTERS; s++)
            for (int32_t t = 0; t < HOSTS + ROUTERS; t++) {
                int n, hosts = (s < HOSTS) + (t < HOSTS);
                if (s == t)
                    continue;
                n = route_checked(d, s, t, 0, path);
                /* routers: at most local, global, local */
                cr_assert_leq(n - hosts, 4, "%d -> %d: %d routers", (int)s, (int)t, n - hosts);
                cr_assert_eq(global_hops(path, n), group_of(s) != group_of(t));
            }
        cs_netdesc_free(d);
    }
}

/* Group `from`'s hosts each send to the same host of group `to` (a
 * shift); returns the number of distinct global links used and counts in
 * inter[] the group each path's first global hop lands in when that is not
 * `to` (Valiant's intermediate). */
static int shift_global_links(cs_netdesc_t *d, int from, int to, int salts, int *inter)
{
    int32_t path[MAXP], used[64];
    int nused = 0;
    for (int salt = 0; salt < salts; salt++)
        for (int32_t k = 0; k < A * P; k++) {
            int32_t s = from * A * P + k, t = to * A * P + k;
            int n = route_checked(d, s, t, (uint64_t)salt, path), first = 1;
            for (int i = 1; i < n; i++) {
                int32_t l = cs_netdesc_find_link(d, path[i - 1], path[i]), j;
                if (path[i - 1] < HOSTS || path[i] < HOSTS ||
                    group_of(path[i - 1]) == group_of(path[i]))
                    continue;
                for (j = 0; j < nused && used[j] != l; j++)
                    ;
                if (j == nused && nused < 64)
                    used[nused++] = l;
                if (inter && first)
                    inter[group_of(path[i])]++;
                first = 0;
            }
        }
    return nused;
}

Test(dragonfly, shift_minimal_one_link_valiant_several)
{
    cs_netdesc_t *d = dfly("consecutive", "minimal");
    int inter[G] = {0};
    for (int g = 0; g < G; g++)
        cr_assert_eq(shift_global_links(d, g, (g + 1) % G, 1, NULL), 1);
    cs_netdesc_free(d);
    d = dfly("consecutive", "valiant");
    cr_assert_str_eq(cs_netdesc_route_name(d), "valiant");
    /* 7 intermediate groups, two global links through each */
    cr_assert_eq(shift_global_links(d, 0, 1, 50, inter), 14);
    cr_assert_eq(inter[0], 0, "through the source group");
    cr_assert_eq(inter[1], 0, "straight to the destination group");
    for (int g = 2; g < G; g++)
        cr_assert_gt(inter[g], 0, "intermediate group %d never used", g);
    cs_netdesc_free(d);
}

Test(dragonfly, valiant_all_pairs)
{
    int32_t path[MAXP];
    cs_netdesc_t *d = dfly("palmtree", "valiant");
    for (int32_t s = 0; s < HOSTS; s++)
        for (int32_t t = 0; t < HOSTS; t++) {
            int n;
            if (s == t)
                continue;
            n = route_checked(d, s, t, (uint64_t)(s * 31 + t), path);
            cr_assert_leq(n, 8); /* host, 3 pairs of routers, host */
            cr_assert_eq(global_hops(path, n), group_of(s) != group_of(t) ? 2 : 0);
        }
    cs_netdesc_free(d);
}

/* routing=ugal attaches two candidates: cs_netdesc_route gives minimal
 * routing's path and cs_netdesc_route_nonmin Valiant's, node for node and
 * class for class, for the same salt; the threshold is the key's. */
Test(dragonfly, ugal_candidates_are_minimal_and_valiant)
{
    int32_t pu[MAXP], pm[MAXP];
    uint8_t vu[MAXP], vm[MAXP];
    int64_t thr = -1;
    cs_netdesc_t *du = build_ok(&cs_netgen_dragonfly_type,
                                "dragonfly:a=4,p=2,h=2,g=9,ugal_threshold=5", "ugal");
    cs_netdesc_t *dm = dfly("consecutive", "minimal"), *dv = dfly("consecutive", "valiant");
    cr_assert(cs_netdesc_ugal(du, &thr));
    cr_assert_eq(thr, 5);
    cr_assert(!cs_netdesc_ugal(dv, NULL));
    cr_assert_eq(cs_netdesc_route_nonmin(dv, 0, 9, 1, pu, vu, MAXP), -1);
    cr_assert(strstr(cs_netdesc_route_name(du), "UGAL"));
    for (int32_t s = 0; s < HOSTS; s += 5)
        for (int32_t t = 0; t < HOSTS; t++) {
            if (s == t)
                continue;
            for (int k = 0; k < 2; k++) {
                uint64_t salt = (uint64_t)(s * 131 + t * 7);
                const cs_netdesc_t *ref = k ? dv : dm;
                memset(vu, 0, sizeof vu);
                memset(vm, 0, sizeof vm);
                int nu = k ? cs_netdesc_route_nonmin(du, s, t, salt, pu, vu, MAXP)
                           : cs_netdesc_route(du, s, t, salt, pu, vu, MAXP);
                int nm = cs_netdesc_route(ref, s, t, salt, pm, vm, MAXP);
                cr_assert_eq(nu, nm, "%d -> %d (%d)", s, t, k);
                cr_assert_arr_eq(pu, pm, (size_t)nu * sizeof *pu);
                cr_assert_arr_eq(vu, vm, (size_t)nu);
            }
        }
    cs_netdesc_free(du);
    cs_netdesc_free(dm);
    cs_netdesc_free(dv);
}

Test(dragonfly, global_link_timing_keys)
{
    cs_netdesc_t *d = build_ok(&cs_netgen_dragonfly_type,
                               "dragonfly:a=2,p=1,h=1,g=3,gbw=10GB/s,glat=2us", "shortest");
    int globals = 0;
    cr_assert_eq(cs_netdesc_nodes(d), 6 + 6);
    cr_assert_eq(cs_netdesc_nlinks(d), 6 + 3 + 3);
    cr_assert_null(cs_netdesc_route_name(d));
    for (int32_t i = 0; i < cs_netdesc_nlinks(d); i++) {
        const cs_netlink_t *l = cs_netdesc_link(d, i);
        int global = l->u >= 6 && l->v >= 6 && (l->u - 6) / 2 != (l->v - 6) / 2;
        globals += global;
        cr_assert_float_eq(l->bw, global ? 10e9 : 1e9, 1);
        cr_assert_float_eq(l->lat, global ? 2e-6 : 1e-6, 1e-12);
    }
    cr_assert_eq(globals, 3);
    cs_netdesc_free(d);
}

/* ---- the registry tables -------------------------------------------------- */

/* Every key a table lists is read by its build (a spec of all of them
 * leaves none unused). */
static void keys_all_read(const cs_netgen_type_t *t, const char *text, const char *routing)
{
    cs_spec_t spec;
    cs_error_t err = {0};
    cs_netdesc_t *d = cs_netdesc_new(t->name);
    int nkeys = 0;
    cr_assert_eq(cs_spec_parse(text, &spec, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(t->build(&spec, 1e9, 1e-6, routing, d, &err), CS_OK, "%s", err.msg);
    for (int i = 0; t->keys[i]; i++)
        nkeys++;
    cr_assert_eq(spec.nkv, nkeys, "%s: the spec should set each listed key", text);
    for (int i = 0; i < spec.nkv; i++)
        cr_assert(spec.kv[i].used, "%s: key %s not read", t->name, spec.kv[i].key);
    cs_spec_destroy(&spec);
    cs_netdesc_free(d);
}

/* No key outside the list is read: a spec setting every key of the four
 * generators and the machine's own marks only the listed ones used. */
static void only_listed_read(const cs_netgen_type_t *t)
{
    static const char *const all = "x:dims=2x2,hosts=1,a=2,p=1,h=1,g=3,arrangement=palmtree,"
                                   "gbw=1GB/s,glat=1us,bw=1GB/s,lat=1us,routing=dor,k=2,n=2";
    cs_spec_t spec;
    cs_error_t err = {0};
    cs_netdesc_t *d = cs_netdesc_new(t->name);
    cr_assert_eq(cs_spec_parse(all, &spec, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(t->build(&spec, 1e9, 1e-6, NULL, d, &err), CS_OK, "%s", err.msg);
    for (int i = 0; i < spec.nkv; i++) {
        int listed = 0;
        for (int k = 0; t->keys[k]; k++)
            listed |= !strcmp(t->keys[k], spec.kv[i].key);
        cr_assert_eq(spec.kv[i].used, listed, "%s: key %s read %d, listed %d", t->name,
                     spec.kv[i].key, spec.kv[i].used, listed);
    }
    cs_spec_destroy(&spec);
    cs_netdesc_free(d);
}

Test(registry, keys_listed_are_read)
{
    only_listed_read(&cs_netgen_torus_type);
    only_listed_read(&cs_netgen_mesh_type);
    only_listed_read(&cs_netgen_hyperx_type);
    only_listed_read(&cs_netgen_dragonfly_type);
    keys_all_read(&cs_netgen_torus_type, "torus:dims=3x3", NULL);
    keys_all_read(&cs_netgen_mesh_type, "mesh:dims=3x3", NULL);
    keys_all_read(&cs_netgen_hyperx_type, "hyperx:dims=3x3,hosts=2", NULL);
    keys_all_read(&cs_netgen_dragonfly_type,
                  "dragonfly:a=2,p=1,h=1,g=3,arrangement=palmtree,gbw=1GB/s,glat=1us,"
                  "ugal_threshold=2", "ugal");
    cr_assert_str_eq(cs_netgen_torus_type.name, "torus");
    cr_assert_str_eq(cs_netgen_mesh_type.name, "mesh");
    cr_assert_str_eq(cs_netgen_hyperx_type.name, "hyperx");
    cr_assert_str_eq(cs_netgen_dragonfly_type.name, "dragonfly");
}

/* ---- errors --------------------------------------------------------------- */

static void expect_error(const cs_netgen_type_t *t, const char *text, const char *routing,
                         int code, const char *needle)
{
    cs_netdesc_t *d;
    cs_error_t err = {0};
    int rc = build_spec(t, text, routing, &d, &err);
    cr_assert_eq(rc, code, "%s: status %d, expected %d (%s)", text, rc, code, err.msg);
    cr_assert(strstr(err.msg, needle), "%s: \"%s\" does not name %s", text, err.msg, needle);
    cs_netdesc_free(d);
}

Test(errors, name_the_key)
{
    expect_error(&cs_netgen_dragonfly_type, "dragonfly:a=4,h=2,g=10", NULL, CS_ERR_RANGE,
                 "g=10");
    expect_error(&cs_netgen_dragonfly_type, "dragonfly:ugal_threshold=4", "valiant",
                 CS_ERR_USAGE, "ugal_threshold=4");
    expect_error(&cs_netgen_dragonfly_type, "dragonfly", "dor", CS_ERR_USAGE, "routing=dor");
    expect_error(&cs_netgen_dragonfly_type, "dragonfly:arrangement=zigzag", NULL, CS_ERR_USAGE,
                 "arrangement=zigzag");
    expect_error(&cs_netgen_dragonfly_type, "dragonfly:a=0", NULL, CS_ERR_RANGE, "'a'");
    expect_error(&cs_netgen_dragonfly_type, "dragonfly:gbw=10", NULL, CS_ERR_USAGE, "gbw");
    expect_error(&cs_netgen_dragonfly_type, "dragonfly:a=2048,p=1,h=1024", NULL, CS_ERR_RANGE,
                 "more than");
    expect_error(&cs_netgen_torus_type, "torus:dims=8x0", NULL, CS_ERR_RANGE, "dims");
    expect_error(&cs_netgen_torus_type, "torus:dims=4096x4096", NULL, CS_ERR_RANGE, "dims");
    expect_error(&cs_netgen_torus_type, "torus:dims=2x2x2x2x2x2x2x2x2", NULL, CS_ERR_USAGE,
                 "dims");
    expect_error(&cs_netgen_mesh_type, "mesh", "minimal", CS_ERR_USAGE, "routing=minimal");
    expect_error(&cs_netgen_hyperx_type, "hyperx:hosts=0", NULL, CS_ERR_RANGE, "'hosts'");
    /* 65536 switches fully connected in one dimension: 2^31 links, refused
     * before anything is allocated */
    expect_error(&cs_netgen_hyperx_type, "hyperx:dims=65536", NULL, CS_ERR_RANGE, "links");
}

Test(errors, direct_calls_check_their_arguments)
{
    cs_error_t err = {0};
    cs_netdesc_t *d = cs_netdesc_new("gen=torus");
    int dims[] = {4, 4};
    cs_netgen_dragonfly_t df = {4, 2, 2, 9, NULL, 1e9, 1e-6, 0, 1e-6, 0};
    cr_assert_eq(cs_netgen_torus(d, 2, dims, 1, -1, 1e-6, NULL, &err), CS_ERR_RANGE);
    cr_assert(strstr(err.msg, "bw"), "%s", err.msg);
    cr_assert_eq(cs_netgen_torus(d, 0, dims, 1, 1e9, 1e-6, NULL, &err), CS_ERR_RANGE);
    cr_assert_eq(cs_netgen_dragonfly(d, &df, NULL, &err), CS_ERR_RANGE);
    cr_assert(strstr(err.msg, "gbw"), "%s", err.msg);
    cr_assert_eq(cs_netdesc_nodes(d), 0, "nothing built on an error");
    /* a second generator into the same description: refused */
    cr_assert_eq(cs_netgen_torus(d, 2, dims, 1, 1e9, 1e-6, NULL, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_netgen_hyperx(d, 2, dims, 1, 1e9, 1e-6, NULL, &err), CS_ERR_USAGE);
    cr_assert(strstr(err.msg, "gen=hyperx"), "%s", err.msg);
    cr_assert_eq(cs_netdesc_nodes(d), 16);
    cs_netdesc_free(d);
}

/* Virtual-channel classes: on a ring the hops after the wrap link take
 * class 1 (a dateline per dimension, reset in the next one); on a
 * dragonfly the hops after the global one. */
Test(netgen_direct, vc_classes)
{
    cs_error_t err;
    int32_t path[16];
    cs_netdesc_t *d = cs_netdesc_new("t");
    int dims[2] = {4, 4};
    cr_assert_eq(cs_netgen_torus(d, 2, dims, 1, 1e9, 0, NULL, &err), CS_OK, "%s", err.msg);
    /* (0,3) -> (2,1): dimension 0 from 0 to 2 (two hops up, a tie: no wrap),
     * then dimension 1 from 3 to 1 the shorter way: 3 -> 0 (wrap), 0 -> 1 */
    memset(vcs, 0, sizeof vcs);
    int n = cs_netdesc_route(d, 3, 9, 0, path, vcs, 16);
    cr_assert_eq(n, 5);
    cr_expect_eq(path[1], 7);
    cr_expect_eq(path[2], 11);
    cr_expect_eq(path[3], 8);
    cr_expect_eq(vcs[0], 0);
    cr_expect_eq(vcs[1], 0);
    cr_expect_eq(vcs[2], 0, "the wrap hop itself is class 0");
    cr_expect_eq(vcs[3], 1, "after the wrap: class 1");
    cs_netdesc_free(d);
    /* dragonfly a=4,p=2,h=2,g=9: host 0 to host 8 (group 1): host, router,
     * gateway?, global, router, host -- every hop after the global is 1 */
    d = cs_netdesc_new("t");
    cs_netgen_dragonfly_t df = {4, 2, 2, 9, NULL, 1e9, 0, 1e9, 0, 0};
    cr_assert_eq(cs_netgen_dragonfly(d, &df, NULL, &err), CS_OK, "%s", err.msg);
    memset(vcs, 0, sizeof vcs);
    n = cs_netdesc_route(d, 0, 8, 0, path, vcs, 16);
    cr_assert_geq(n, 4);
    int seen_global = 0;
    for (int i = 0; i + 1 < n; i++) {
        int gu = path[i] < 72 ? path[i] / 8 : (path[i] - 72) / 4;
        int gv = path[i + 1] < 72 ? path[i + 1] / 8 : (path[i + 1] - 72) / 4;
        cr_expect_eq(vcs[i], seen_global, "hop %d", i);
        seen_global |= path[i] >= 72 && path[i + 1] >= 72 && gu != gv;
    }
    cr_expect(seen_global);
    cs_netdesc_free(d);
}
