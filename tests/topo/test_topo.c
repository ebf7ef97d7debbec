/*
 * test_topo.c - Criterion tests of the topology layer (src/topo).
 *
 * Oracles: closed-form channel counts and textbook diameters; a reference
 * BFS written here, on nothing but cs_topo_channel_src/dst, that every route
 * must match in length; the per-shape routing rules checked hop by hop; and
 * a channel-dependency-graph cycle check that proves the dateline virtual
 * channels make ring and torus routing deadlock free.  The route and cycle
 * checkers are each shown to fail on a bad input.
 */
#include <criterion/criterion.h>
#include <igraph.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo/topo.h"

/* ---- helpers ------------------------------------------------------------- */

static cs_topo_t *make(cs_topo_kind_t kind, int a, int b)
{
    cs_topo_t *t = NULL;
    cs_error_t err = {0};
    int rc = -1;
    switch (kind) {
    case CS_TOPO_LINE: rc = cs_topo_new_line(a, &t, &err); break;
    case CS_TOPO_RING: rc = cs_topo_new_ring(a, &t, &err); break;
    case CS_TOPO_MESH: rc = cs_topo_new_mesh(a, b, &t, &err); break;
    case CS_TOPO_TORUS: rc = cs_topo_new_torus(a, b, &t, &err); break;
    case CS_TOPO_COMPLETE: rc = cs_topo_new_complete(a, &t, &err); break;
    case CS_TOPO_HYPERCUBE: rc = cs_topo_new_hypercube(a, &t, &err); break;
    default: break;
    }
    cr_assert_eq(rc, CS_OK, "building kind %d (%d, %d): %s", (int)kind, a, b, err.msg);
    cr_assert_not_null(t);
    return t;
}

/* All-pairs hop distances by BFS on the channel graph; -1 if unreachable. */
static int *ref_dist(const cs_topo_t *t)
{
    int n = cs_topo_nodes(t), m = cs_topo_channels(t);
    int *d = malloc((size_t)n * n * sizeof *d);
    int *queue = malloc((size_t)n * sizeof *queue);
    for (int s = 0; s < n; s++) {
        int *ds = d + (size_t)s * n, head = 0, tail = 0;
        for (int v = 0; v < n; v++)
            ds[v] = -1;
        ds[s] = 0;
        queue[tail++] = s;
        while (head < tail) {
            int u = queue[head++];
            for (int c = 0; c < m; c++)
                if (cs_topo_channel_src(t, c) == u && ds[cs_topo_channel_dst(t, c)] < 0) {
                    ds[cs_topo_channel_dst(t, c)] = ds[u] + 1;
                    queue[tail++] = cs_topo_channel_dst(t, c);
                }
        }
    }
    free(queue);
    return d;
}

/* NULL if hops[0..n) is a connected channel path from s to d, else why not. */
static const char *path_problem(const cs_topo_t *t, int s, int d, const cs_hop_t *hops, int n)
{
    int u = s;
    for (int i = 0; i < n; i++) {
        if (hops[i].chan < 0 || hops[i].chan >= cs_topo_channels(t))
            return "channel id out of range";
        if (cs_topo_channel_src(t, hops[i].chan) != u)
            return "hop does not start where the previous one ended";
        if (hops[i].vc > 1)
            return "vc is neither 0 nor 1";
        u = cs_topo_channel_dst(t, hops[i].chan);
    }
    return u == d ? NULL : "path does not end at the destination";
}

/* Every route of t: a path, minimal, within max_route_len, deterministic. */
static void check_all_routes(const cs_topo_t *t)
{
    int n = cs_topo_nodes(t), max = cs_topo_max_route_len(t);
    int *dist = ref_dist(t);
    cs_hop_t *a = calloc((size_t)max, sizeof *a), *b = calloc((size_t)max, sizeof *b);
    cr_assert_geq(max, 1);
    for (int s = 0; s < n; s++)
        for (int d = 0; d < n; d++) {
            int h = cs_topo_route(t, s, d, a);
            int want = dist[(size_t)s * n + d];
            cr_assert_eq(h, want, "%s: route %d->%d has %d hops, BFS distance %d", cs_topo_name(t),
                         s, d, h, want);
            cr_assert_leq(h, max);
            if (h <= 0)
                continue;
            const char *why = path_problem(t, s, d, a, h);
            cr_assert_null(why, "%s: route %d->%d: %s", cs_topo_name(t), s, d, why);
            cr_assert_eq(cs_topo_route(t, s, d, b), h);
            cr_assert_eq(memcmp(a, b, (size_t)h * sizeof *a), 0,
                         "%s: route %d->%d not deterministic", cs_topo_name(t), s, d);
        }
    free(a);
    free(b);
    free(dist);
}

/* Structure common to every topology: reverse pairs, adjacency, degrees. */
static void check_structure(const cs_topo_t *t)
{
    int m = cs_topo_channels(t), n = cs_topo_nodes(t), sum = 0;
    cr_assert_eq(m % 2, 0);
    for (int c = 0; c < m; c++) {
        int u = cs_topo_channel_src(t, c), v = cs_topo_channel_dst(t, c);
        cr_assert_neq(u, v);
        cr_assert_eq(cs_topo_channel_reverse(c), c ^ 1);
        cr_assert_eq(cs_topo_channel_src(t, c ^ 1), v);
        cr_assert_eq(cs_topo_channel_dst(t, c ^ 1), u);
        int f = cs_topo_find_channel(t, u, v);
        cr_assert(f >= 0 && f <= c && cs_topo_channel_src(t, f) == u &&
                      cs_topo_channel_dst(t, f) == v,
                  "find_channel(%d, %d) = %d", u, v, f);
    }
    for (int u = 0; u < n; u++) {
        int deg = 0;
        for (int c = 0; c < m; c++)
            deg += cs_topo_channel_src(t, c) == u;
        cr_assert_eq(cs_topo_degree(t, u), deg, "%s: degree of %d", cs_topo_name(t), u);
        sum += deg;
        cr_assert_eq(cs_topo_find_channel(t, u, u), -1);
    }
    cr_assert_eq(sum, m);
}

static int row_of(const cs_topo_t *t, int u)
{
    int r, c;
    cs_topo_grid(t, &r, &c);
    return u / c;
}
static int col_of(const cs_topo_t *t, int u)
{
    int r, c;
    cs_topo_grid(t, &r, &c);
    return u % c;
}

/* ---- channel counts and structure ------------------------------------------ */

Test(topo, counts_line_ring)
{
    for (int p = 1; p <= 17; p++) {
        cs_topo_t *l = make(CS_TOPO_LINE, p, 0), *r = make(CS_TOPO_RING, p, 0);
        cr_assert_eq(cs_topo_channels(l), 2 * (p - 1));
        /* A ring of 2 is one link, a ring of 1 has none (documented). */
        cr_assert_eq(cs_topo_channels(r), 2 * (p >= 3 ? p : p - 1), "ring p=%d", p);
        cr_assert_eq(cs_topo_nodes(r), p);
        cr_assert_str_eq(cs_topo_name(l), "line");
        cr_assert_str_eq(cs_topo_name(r), "ring");
        cr_assert_eq(cs_topo_kind(r), CS_TOPO_RING);
        check_structure(l);
        check_structure(r);
        int rows, cols;
        cr_assert_eq(cs_topo_grid(r, &rows, &cols), 0);
        cs_topo_free(l);
        cs_topo_free(r);
    }
}

Test(topo, counts_mesh_torus)
{
    for (int R = 1; R <= 6; R++)
        for (int C = 1; C <= 6; C++) {
            cs_topo_t *m = make(CS_TOPO_MESH, R, C), *t = make(CS_TOPO_TORUS, R, C);
            cr_assert_eq(cs_topo_channels(m), 2 * (2 * R * C - R - C), "mesh %dx%d", R, C);
            int tr = R >= 3 ? R : R - 1, tc = C >= 3 ? C : C - 1;
            cr_assert_eq(cs_topo_channels(t), 2 * (R * tc + C * tr), "torus %dx%d", R, C);
            if (R >= 3 && C >= 3) {
                cr_assert_eq(cs_topo_channels(t), 2 * (2 * R * C));
                for (int u = 0; u < R * C; u++)
                    cr_assert_eq(cs_topo_degree(t, u), 4);
            }
            if (R >= 3 && C >= 3)
                cr_assert_eq(cs_topo_degree(m, C + 1), 4);
            int rows = 0, cols = 0;
            cr_assert_eq(cs_topo_grid(m, &rows, &cols), 1);
            cr_assert(rows == R && cols == C);
            cr_assert_eq(cs_topo_grid(t, &rows, &cols), 1);
            cr_assert(rows == R && cols == C);
            check_structure(m);
            check_structure(t);
            cs_topo_free(m);
            cs_topo_free(t);
        }
}

Test(topo, counts_complete_hypercube)
{
    for (int p = 1; p <= 16; p++) {
        cs_topo_t *k = make(CS_TOPO_COMPLETE, p, 0);
        cr_assert_eq(cs_topo_channels(k), p * (p - 1));
        for (int u = 0; u < p; u++) {
            cr_assert_eq(cs_topo_degree(k, u), p - 1);
            for (int v = 0; v < p; v++)
                if (u != v) {
                    int c = cs_topo_find_channel(k, u, v);
                    cr_assert(cs_topo_channel_src(k, c) == u && cs_topo_channel_dst(k, c) == v);
                }
        }
        check_structure(k);
        cs_topo_free(k);
    }
    for (int d = 0; d <= 7; d++) {
        int p = 1 << d;
        cs_topo_t *h = make(CS_TOPO_HYPERCUBE, p, 0);
        cr_assert_eq(cs_topo_channels(h), p * d, "hypercube p=%d", p); /* 2 * p log p / 2 */
        for (int u = 0; u < p; u++) {
            cr_assert_eq(cs_topo_degree(h, u), d);
            for (int b = 0; b < d; b++)
                cr_assert_geq(cs_topo_find_channel(h, u, u ^ (1 << b)), 0);
        }
        check_structure(h);
        cs_topo_free(h);
    }
}

/* ---- routes: minimal, connected, deterministic, and by the rule ------------- */

Test(topo, routes_line_ring_complete_hypercube)
{
    for (int p = 1; p <= 16; p++) {
        cs_topo_t *t[3] = {make(CS_TOPO_LINE, p, 0), make(CS_TOPO_RING, p, 0),
                           make(CS_TOPO_COMPLETE, p, 0)};
        for (int i = 0; i < 3; i++) {
            check_all_routes(t[i]);
            cs_topo_free(t[i]);
        }
    }
    for (int p = 1; p <= 64; p *= 2) {
        cs_topo_t *h = make(CS_TOPO_HYPERCUBE, p, 0);
        check_all_routes(h);
        cs_topo_free(h);
    }
}

Test(topo, routes_mesh_torus)
{
    for (int R = 1; R <= 5; R++)
        for (int C = 1; C <= 6; C++) {
            cs_topo_t *m = make(CS_TOPO_MESH, R, C), *t = make(CS_TOPO_TORUS, R, C);
            check_all_routes(m);
            check_all_routes(t);
            cs_topo_free(m);
            cs_topo_free(t);
        }
}

Test(topo, ring_direction_and_tie)
{
    cs_hop_t hops[16];
    for (int p = 3; p <= 16; p++) {
        cs_topo_t *t = make(CS_TOPO_RING, p, 0);
        for (int s = 0; s < p; s++)
            for (int d = 0; d < p; d++) {
                int fwd = (d - s + p) % p, h = cs_topo_route(t, s, d, hops);
                if (s == d)
                    continue;
                /* Shorter way; at exactly p/2 the increasing direction. */
                int up = 2 * fwd <= p;
                cr_assert_eq(h, up ? fwd : p - fwd);
                for (int i = 0; i < h; i++) {
                    int u = cs_topo_channel_src(t, hops[i].chan);
                    int v = cs_topo_channel_dst(t, hops[i].chan);
                    cr_assert_eq(v, up ? (u + 1) % p : (u + p - 1) % p,
                                 "ring %d: %d->%d hop %d goes %d->%d", p, s, d, i, u, v);
                }
            }
        cs_topo_free(t);
    }
    /* Spot check: ring of 8, 6->2 is half way round, so 6,7,0,1,2. */
    cs_topo_t *t = make(CS_TOPO_RING, 8, 0);
    int want[] = {6, 7, 0, 1, 2};
    cr_assert_eq(cs_topo_route(t, 6, 2, hops), 4);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(cs_topo_channel_src(t, hops[i].chan), want[i]);
        cr_assert_eq(cs_topo_channel_dst(t, hops[i].chan), want[i + 1]);
    }
    cs_topo_free(t);
}

/* vc of every hop on a ring / torus: 1 exactly for the hops after a hop that
 * crossed the current dimension's wrap link; 0 on all other shapes. */
Test(topo, dateline_vc)
{
    cs_hop_t hops[16];
    cs_topo_t *t = make(CS_TOPO_RING, 8, 0);
    /* 6->2: 6-7 vc0, 7-0 (wrap) vc0, 0-1 vc1, 1-2 vc1. */
    cs_topo_route(t, 6, 2, hops);
    cr_assert(hops[0].vc == 0 && hops[1].vc == 0 && hops[2].vc == 1 && hops[3].vc == 1);
    /* 1->6 goes down: 1-0 vc0, 0-7 (wrap) vc0, 7-6 vc1. */
    cr_assert_eq(cs_topo_route(t, 1, 6, hops), 3);
    cr_assert(hops[0].vc == 0 && hops[1].vc == 0 && hops[2].vc == 1);
    /* 1->3 never wraps. */
    cs_topo_route(t, 1, 3, hops);
    cr_assert(hops[0].vc == 0 && hops[1].vc == 0);
    cs_topo_free(t);

    for (int R = 1; R <= 6; R++)
        for (int C = 1; C <= 6; C++) {
            t = make(CS_TOPO_TORUS, R, C);
            for (int s = 0; s < R * C; s++)
                for (int d = 0; d < R * C; d++) {
                    int h = cs_topo_route(t, s, d, hops), vc = 0, dim = -1;
                    for (int i = 0; i < h; i++) {
                        int u = cs_topo_channel_src(t, hops[i].chan);
                        int v = cs_topo_channel_dst(t, hops[i].chan);
                        int hd = row_of(t, u) == row_of(t, v) ? 0 : 1;
                        if (hd != dim)
                            vc = 0;
                        dim = hd;
                        cr_assert_eq(hops[i].vc, vc, "torus %dx%d %d->%d hop %d", R, C, s, d, i);
                        int n = hd == 0 ? C : R;
                        int a = hd == 0 ? col_of(t, u) : row_of(t, u);
                        int b = hd == 0 ? col_of(t, v) : row_of(t, v);
                        if (n >= 3 && ((a == n - 1 && b == 0) || (a == 0 && b == n - 1)))
                            vc = 1;
                    }
                }
            cs_topo_free(t);
        }

    t = make(CS_TOPO_MESH, 4, 4);
    for (int s = 0; s < 16; s++)
        for (int d = 0; d < 16; d++)
            for (int i = 0, h = cs_topo_route(t, s, d, hops); i < h; i++)
                cr_assert_eq(hops[i].vc, 0);
    cs_topo_free(t);
}

/* Mesh and torus: X (same row, changing column) strictly before Y. */
Test(topo, dimension_order)
{
    cs_hop_t hops[16];
    for (int k = 0; k < 2; k++) {
        cs_topo_t *t = k ? make(CS_TOPO_TORUS, 5, 6) : make(CS_TOPO_MESH, 5, 6);
        for (int s = 0; s < 30; s++)
            for (int d = 0; d < 30; d++) {
                int h = cs_topo_route(t, s, d, hops), in_y = 0;
                for (int i = 0; i < h; i++) {
                    int u = cs_topo_channel_src(t, hops[i].chan);
                    int v = cs_topo_channel_dst(t, hops[i].chan);
                    int x = row_of(t, u) == row_of(t, v);
                    cr_assert(x || col_of(t, u) == col_of(t, v));
                    if (x)
                        cr_assert(!in_y, "%s %d->%d: X hop after a Y hop", cs_topo_name(t), s, d);
                    else
                        in_y = 1;
                    if (x)
                        cr_assert_eq(row_of(t, u), row_of(t, s)); /* X along the source row */
                    else
                        cr_assert_eq(col_of(t, u), col_of(t, d)); /* Y along the dest column */
                }
            }
        cs_topo_free(t);
    }
    /* Spot check: mesh 5x6, 0 -> 13 (row 2, col 1): 0-1, then 1-7-13. */
    cs_topo_t *m = make(CS_TOPO_MESH, 5, 6);
    int want[] = {0, 1, 7, 13};
    cr_assert_eq(cs_topo_route(m, 0, 13, hops), 3);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(cs_topo_channel_dst(m, hops[i].chan), want[i + 1]);
    cs_topo_free(m);
}

Test(topo, hypercube_ecube)
{
    cs_hop_t hops[8];
    cs_topo_t *t = make(CS_TOPO_HYPERCUBE, 64, 0);
    for (int s = 0; s < 64; s++)
        for (int d = 0; d < 64; d++) {
            int h = cs_topo_route(t, s, d, hops), last = -1;
            cr_assert_eq(h, __builtin_popcount((unsigned)(s ^ d)));
            for (int i = 0; i < h; i++) {
                int flip =
                    cs_topo_channel_src(t, hops[i].chan) ^ cs_topo_channel_dst(t, hops[i].chan);
                cr_assert_eq(__builtin_popcount((unsigned)flip), 1);
                cr_assert_gt(flip, last, "e-cube fixes the lowest bit first");
                last = flip;
            }
        }
    cs_topo_free(t);
}

Test(topo, complete_direct)
{
    cs_hop_t hops[1];
    cs_topo_t *t = make(CS_TOPO_COMPLETE, 9, 0);
    for (int s = 0; s < 9; s++)
        for (int d = 0; d < 9; d++)
            if (s != d) {
                cr_assert_eq(cs_topo_route(t, s, d, hops), 1);
                cr_assert_eq(hops[0].chan, cs_topo_find_channel(t, s, d));
            }
    cr_assert_eq(cs_topo_max_route_len(t), 1);
    cs_topo_free(t);
}

Test(topo, max_route_len)
{
    cs_topo_t *t = make(CS_TOPO_LINE, 7, 0);
    cr_assert_eq(cs_topo_max_route_len(t), 6);
    cs_topo_free(t);
    t = make(CS_TOPO_RING, 9, 0);
    cr_assert_eq(cs_topo_max_route_len(t), 4);
    cs_topo_free(t);
    t = make(CS_TOPO_MESH, 4, 7);
    cr_assert_eq(cs_topo_max_route_len(t), 9);
    cs_topo_free(t);
    t = make(CS_TOPO_TORUS, 5, 8);
    cr_assert_eq(cs_topo_max_route_len(t), 6);
    cs_topo_free(t);
    t = make(CS_TOPO_HYPERCUBE, 32, 0);
    cr_assert_eq(cs_topo_max_route_len(t), 5);
    cs_topo_free(t);
    t = make(CS_TOPO_RING, 1, 0); /* never a zero-length buffer */
    cr_assert_eq(cs_topo_max_route_len(t), 1);
    cs_topo_free(t);
}

/* ---- deadlock freedom of the dateline ----------------------------------------- */

/* 1 if the graph on (channel, vc) buffers with an edge for every pair of
 * consecutive hops of some route has a cycle.  ignore_vc merges the vcs. */
static int dependency_cycle(const cs_topo_t *t, int ignore_vc)
{
    int n = cs_topo_nodes(t), m = cs_topo_channels(t), V = 2 * m;
    char *edge = calloc((size_t)V * V, 1);
    cs_hop_t hops[64];
    for (int s = 0; s < n; s++)
        for (int d = 0; d < n; d++) {
            int h = cs_topo_route(t, s, d, hops);
            for (int i = 0; i + 1 < h; i++) {
                int a = 2 * hops[i].chan + (ignore_vc ? 0 : hops[i].vc);
                int b = 2 * hops[i + 1].chan + (ignore_vc ? 0 : hops[i + 1].vc);
                edge[(size_t)a * V + b] = 1;
            }
        }
    /* Kahn: a cycle leaves vertices that never reach in-degree 0. */
    int *indeg = calloc((size_t)V, sizeof *indeg), *queue = malloc((size_t)V * sizeof *queue);
    int head = 0, tail = 0;
    for (int a = 0; a < V; a++)
        for (int b = 0; b < V; b++)
            indeg[b] += edge[(size_t)a * V + b];
    for (int a = 0; a < V; a++)
        if (!indeg[a])
            queue[tail++] = a;
    while (head < tail) {
        int a = queue[head++];
        for (int b = 0; b < V; b++)
            if (edge[(size_t)a * V + b] && --indeg[b] == 0)
                queue[tail++] = b;
    }
    free(edge);
    free(indeg);
    free(queue);
    return tail < V;
}

Test(topo, dateline_acyclic)
{
    for (int p = 3; p <= 10; p++) {
        cs_topo_t *t = make(CS_TOPO_RING, p, 0);
        cr_assert_not(dependency_cycle(t, 0), "ring %d deadlocks with vcs", p);
        if (p >= 5) /* the checker can fail: without vcs long routes close the ring */
            cr_assert(dependency_cycle(t, 1), "ring %d should have a cycle without vcs", p);
        cs_topo_free(t);
    }
    for (int R = 1; R <= 5; R++)
        for (int C = 1; C <= 6; C++) {
            cs_topo_t *t = make(CS_TOPO_TORUS, R, C);
            cr_assert_not(dependency_cycle(t, 0), "torus %dx%d deadlocks with vcs", R, C);
            cs_topo_free(t);
        }
    cs_topo_t *t = make(CS_TOPO_TORUS, 5, 5);
    cr_assert(dependency_cycle(t, 1));
    cs_topo_free(t);
}

Test(topo, path_checker_can_fail)
{
    cs_topo_t *t = make(CS_TOPO_MESH, 3, 3);
    cs_hop_t hops[4];
    int h = cs_topo_route(t, 0, 8, hops);
    cr_assert_null(path_problem(t, 0, 8, hops, h));
    cr_assert_not_null(path_problem(t, 0, 7, hops, h)); /* wrong end */
    hops[1].chan ^= 1;                                  /* reversed hop */
    cr_assert_not_null(path_problem(t, 0, 8, hops, h));
    cs_topo_free(t);
}

/* ---- custom topologies ------------------------------------------------------ */

Test(topo, custom_bfs_tie_and_cache)
{
    char name[] = "hexring";
    cs_topo_t *t = cs_topo_new_custom(6, name);
    name[0] = 'X'; /* the name was copied */
    for (int i = 0; i < 6; i++)
        cr_assert_eq(cs_topo_add_link(t, i, (i + 1) % 6), 2 * i);
    cr_assert_str_eq(cs_topo_name(t), "hexring");
    cr_assert_eq(cs_topo_kind(t), CS_TOPO_CUSTOM);
    cr_assert_eq(cs_topo_channels(t), 12);
    check_structure(t);
    check_all_routes(t);
    /* 0->3: both ways are 3 hops; lowest channel id at each node: 0, 2, 4. */
    cs_hop_t hops[8];
    cr_assert_eq(cs_topo_route(t, 0, 3, hops), 3);
    cr_assert(hops[0].chan == 0 && hops[1].chan == 2 && hops[2].chan == 4);
    /* 3->0: from 3 the channels are 5 (3->2) and 6 (3->4): 5, 3, 1. */
    cr_assert_eq(cs_topo_route(t, 3, 0, hops), 3);
    cr_assert(hops[0].chan == 5 && hops[1].chan == 3 && hops[2].chan == 1);
    /* A new link invalidates the cached paths. */
    cr_assert_eq(cs_topo_add_link(t, 0, 3), 12);
    cr_assert_eq(cs_topo_route(t, 0, 3, hops), 1);
    cr_assert_eq(hops[0].chan, 12);
    cr_assert_eq(cs_topo_degree(t, 0), 3);
    check_all_routes(t);
    int rows, cols;
    cr_assert_eq(cs_topo_grid(t, &rows, &cols), 0);
    cs_topo_set_grid(t, 2, 3);
    cr_assert_eq(cs_topo_grid(t, &rows, &cols), 1);
    cr_assert(rows == 2 && cols == 3);
    cs_topo_free(t);
}

Test(topo, custom_parallel_and_disconnected)
{
    cs_topo_t *t = cs_topo_new_custom(5, NULL);
    cr_assert_str_eq(cs_topo_name(t), "custom");
    cr_assert_eq(cs_topo_add_link(t, 1, 0), 0);
    cr_assert_eq(cs_topo_add_link(t, 0, 1), 2);
    cr_assert_eq(cs_topo_add_link(t, 2, 3), 4);
    cr_assert_eq(cs_topo_find_channel(t, 1, 0), 0); /* lowest id of the parallel pair */
    cr_assert_eq(cs_topo_find_channel(t, 0, 1), 1);
    cr_assert_eq(cs_topo_find_channel(t, 0, 2), -1);
    cr_assert_eq(cs_topo_degree(t, 0), 2);
    cr_assert_eq(cs_topo_degree(t, 4), 0);
    cs_hop_t hops[8];
    cr_assert_eq(cs_topo_route(t, 0, 3, hops), -1);
    cr_assert_eq(cs_topo_route(t, 0, 1, hops), 1);
    cr_assert_eq(hops[0].chan, 1);
    check_all_routes(t);

    cs_topo_stats_t st;
    cs_error_t err = {0};
    cr_assert_eq(cs_topo_stats(t, 100, &st, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(st.connected, 0);
    cr_assert_eq(st.diameter, -1);
    cr_assert_eq(st.links, 3);
    cr_assert_eq(st.min_degree, 0);
    cr_assert_eq(st.max_degree, 2);
    cs_topo_free(t);
}

/* A route function that goes through hub 0 (a star with a spare ring). */
static int via_hub(const cs_topo_t *t, void *ctx, int src, int dst, cs_hop_t *hops, int max)
{
    int *calls = ctx, h = 0;
    (*calls)++;
    if (src != 0) {
        hops[h].chan = cs_topo_find_channel(t, src, 0);
        hops[h++].vc = 0;
    }
    if (dst != 0 && h < max) {
        hops[h].chan = cs_topo_find_channel(t, 0, dst);
        hops[h++].vc = 1;
    }
    return h;
}

Test(topo, custom_route_fn)
{
    cs_topo_t *t = cs_topo_new_custom(5, "star");
    for (int i = 1; i < 5; i++)
        cs_topo_add_link(t, 0, i);
    for (int i = 1; i < 5; i++)
        cs_topo_add_link(t, i, i % 4 + 1);
    int calls = 0;
    cs_topo_set_route(t, via_hub, &calls);
    cs_hop_t hops[8];
    cr_assert_eq(cs_topo_max_route_len(t), 4);
    cr_assert_eq(cs_topo_route(t, 1, 2, hops), 2);
    cr_assert_eq(calls, 1);
    cr_assert_null(path_problem(t, 1, 2, hops, 2));
    cr_assert_eq(hops[1].vc, 1);
    cr_assert_eq(cs_topo_route(t, 3, 3, hops), 0);
    cr_assert_eq(calls, 1);           /* src == dst does not call the function */
    cs_topo_set_route(t, NULL, NULL); /* back to BFS: 1 -> 2 directly */
    cr_assert_eq(cs_topo_route(t, 1, 2, hops), 1);
    cs_topo_free(t);
}

/* ---- statistics through igraph --------------------------------------------- */

static cs_topo_stats_t stats_of(const cs_topo_t *t)
{
    cs_topo_stats_t st;
    cs_error_t err = {0};
    cr_assert_eq(cs_topo_stats(t, 10000, &st, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(st.nodes, cs_topo_nodes(t));
    cr_assert_eq(st.channels, cs_topo_channels(t));
    cr_assert_eq(st.links, cs_topo_channels(t) / 2);
    cr_assert_eq(st.connected, 1);
    return st;
}

Test(topo, diameters)
{
    for (int p = 1; p <= 24; p++) {
        cs_topo_t *t = make(CS_TOPO_RING, p, 0);
        cr_assert_eq(stats_of(t).diameter, p / 2, "ring %d", p);
        cs_topo_free(t);
        t = make(CS_TOPO_LINE, p, 0);
        cr_assert_eq(stats_of(t).diameter, p - 1, "line %d", p);
        cs_topo_free(t);
        t = make(CS_TOPO_COMPLETE, p, 0);
        cr_assert_eq(stats_of(t).diameter, p > 1 ? 1 : 0, "complete %d", p);
        cs_topo_free(t);
    }
    for (int R = 1; R <= 8; R++)
        for (int C = 1; C <= 8; C++) {
            cs_topo_t *t = make(CS_TOPO_MESH, R, C);
            cr_assert_eq(stats_of(t).diameter, (R - 1) + (C - 1), "mesh %dx%d", R, C);
            cs_topo_free(t);
            t = make(CS_TOPO_TORUS, R, C);
            cr_assert_eq(stats_of(t).diameter, R / 2 + C / 2, "torus %dx%d", R, C);
            cs_topo_free(t);
        }
    for (int d = 0; d <= 8; d++) {
        cs_topo_t *t = make(CS_TOPO_HYPERCUBE, 1 << d, 0);
        cs_topo_stats_t st = stats_of(t);
        cr_assert_eq(st.diameter, d);
        cr_assert(st.min_degree == d && st.max_degree == d);
        cs_topo_free(t);
    }
}

Test(topo, stats_details)
{
    /* Ring of 4: from any node the distances are 1, 2, 1, mean 4/3. */
    cs_topo_t *t = make(CS_TOPO_RING, 4, 0);
    cs_topo_stats_t st = stats_of(t);
    cr_assert_float_eq(st.avg_distance, 4.0 / 3.0, 1e-12);
    cr_assert(st.min_degree == 2 && st.max_degree == 2);
    cs_topo_free(t);
    /* Mesh 3x3: corner degree 2, centre 4. */
    t = make(CS_TOPO_MESH, 3, 3);
    st = stats_of(t);
    cr_assert(st.min_degree == 2 && st.max_degree == 4);
    cr_assert_eq(st.links, 12);
    cs_topo_free(t);
    /* Above the threshold the distance statistics are skipped. */
    t = make(CS_TOPO_MESH, 10, 10);
    cs_error_t err = {0};
    cr_assert_eq(cs_topo_stats(t, 99, &st, &err), CS_OK);
    cr_assert(st.diameter == -1 && st.avg_distance == -1 && st.connected == 1);
    cr_assert_eq(st.max_degree, 4);
    cs_topo_free(t);
    /* to_igraph: one undirected edge per link. */
    t = make(CS_TOPO_TORUS, 4, 5);
    igraph_t g;
    cr_assert_eq(cs_topo_to_igraph(t, &g, &err), CS_OK);
    cr_assert_eq(igraph_vcount(&g), 20);
    cr_assert_eq(igraph_ecount(&g), 40);
    cr_assert_not(igraph_is_directed(&g));
    igraph_destroy(&g);
    cs_topo_free(t);
}

/* ---- errors --------------------------------------------------------------- */

/* tp, not t: the call in the first argument must have set it. */
static void expect_range(int rc, cs_topo_t *const *tp, const cs_error_t *err, const char *needle)
{
    cr_assert_eq(rc, CS_ERR_RANGE);
    cr_assert_eq(err->code, CS_ERR_RANGE);
    cr_assert_null(*tp);
    cr_assert(strstr(err->msg, needle), "message \"%s\" lacks \"%s\"", err->msg, needle);
}

Test(topo, bad_sizes)
{
    cs_topo_t *t = (cs_topo_t *)1;
    cs_error_t err = {0};
    expect_range(cs_topo_new_hypercube(12, &t, &err), &t, &err, "power of two, got 12");
    t = (cs_topo_t *)1;
    expect_range(cs_topo_new_hypercube(0, &t, &err), &t, &err, "got 0");
    expect_range(cs_topo_new_ring(0, &t, &err), &t, &err, "p >= 1, got 0");
    expect_range(cs_topo_new_line(-3, &t, &err), &t, &err, "got -3");
    expect_range(cs_topo_new_complete(0, &t, &err), &t, &err, "got 0");
    expect_range(cs_topo_new_mesh(0, 5, &t, &err), &t, &err, "got 0x5");
    expect_range(cs_topo_new_torus(4, -1, &t, &err), &t, &err, "got 4x-1");
    /* rows*cols overflows int; computed in 64 bits. */
    expect_range(cs_topo_new_mesh(1 << 16, 1 << 16, &t, &err), &t, &err, "4294967296 nodes");
    expect_range(cs_topo_new_torus(100000, 100000, &t, &err), &t, &err, "CS_TOPO_MAX_NODES");
    expect_range(cs_topo_new_ring(CS_TOPO_MAX_NODES + 1, &t, &err), &t, &err, "67108865");
    expect_range(cs_topo_new_hypercube(1 << 27, &t, &err), &t, &err, "CS_TOPO_MAX_NODES");
    /* Too many channels. */
    expect_range(cs_topo_new_complete(50000, &t, &err), &t, &err, "2499950000 channels");
    expect_range(cs_topo_new_hypercube(1 << 25, &t, &err), &t, &err, "channels");
    /* A valid size after errors builds normally. */
    cr_assert_eq(cs_topo_new_complete(2, &t, &err), CS_OK);
    cr_assert_not_null(t);
    cs_topo_free(t);
    cs_topo_free(NULL);
}

/* ---- writers ------------------------------------------------------------------ */

static int count(const char *hay, const char *needle)
{
    int k = 0;
    for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle))
        k++;
    return k;
}

Test(topo, graphml_and_dot)
{
    cs_topo_t *shapes[] = {make(CS_TOPO_MESH, 3, 4), make(CS_TOPO_TORUS, 3, 3),
                           make(CS_TOPO_HYPERCUBE, 8, 0), make(CS_TOPO_RING, 1, 0)};
    for (int i = 0; i < 4; i++) {
        cs_topo_t *t = shapes[i];
        cs_error_t err = {0};
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        cr_assert_eq(cs_topo_write_graphml(t, f, &err), CS_OK, "%s", err.msg);
        fclose(f);
        cr_assert(strstr(buf, "<graphml"));
        cr_assert(strstr(buf, "</graphml>"));
        cr_assert_eq(count(buf, "<edge "), cs_topo_channels(t) / 2);
        cr_assert_eq(count(buf, "<node "), cs_topo_nodes(t));
        free(buf);

        f = open_memstream(&buf, &len);
        cr_assert_eq(cs_topo_write_dot(t, f, &err), CS_OK);
        fclose(f);
        cr_assert_eq(count(buf, " -- "), cs_topo_channels(t) / 2);
        char head[64];
        snprintf(head, sizeof head, "graph \"%s\" {\n", cs_topo_name(t));
        cr_assert_eq(strncmp(buf, head, strlen(head)), 0, "%s", buf);
        cr_assert_eq(buf[len - 2], '}');
        /* Deterministic: the same text twice. */
        char *again = NULL;
        size_t len2 = 0;
        f = open_memstream(&again, &len2);
        cs_topo_write_dot(t, f, &err);
        fclose(f);
        cr_assert_str_eq(buf, again);
        free(again);
        free(buf);
        cs_topo_free(t);
    }
    /* Line 0 -- 1 -- 2 exactly. */
    cs_topo_t *t = make(CS_TOPO_LINE, 3, 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cs_topo_write_dot(t, f, NULL);
    fclose(f);
    cr_assert_str_eq(buf, "graph \"line\" {\n  0 -- 1;\n  1 -- 2;\n}\n");
    free(buf);
    cs_topo_free(t);
}

/* ---- scale ------------------------------------------------------------------ */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

Test(topo, big_mesh)
{
    const int R = 850, C = 1000;
    cs_topo_t *t = NULL;
    cs_error_t err = {0};
    double t0 = now();
    cr_assert_eq(cs_topo_new_mesh(R, C, &t, &err), CS_OK, "%s", err.msg);
    double built = now() - t0;
    /* "Well under a second" in an optimized build; the bound leaves room
     * for sanitizer builds and loaded machines. */
    cr_assert_lt(built, 2.0, "850x1000 mesh took %.3f s to build", built);
    cr_assert_eq(cs_topo_channels(t), 2 * (2 * R * C - R - C));
    int max = cs_topo_max_route_len(t);
    cr_assert_eq(max, (R - 1) + (C - 1));
    cs_hop_t *hops = malloc((size_t)max * sizeof *hops);
    int corners[4] = {0, C - 1, (R - 1) * C, R * C - 1};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int s = corners[i], d = corners[j];
            int want = abs(s / C - d / C) + abs(s % C - d % C);
            int h = cs_topo_route(t, s, d, hops);
            cr_assert_eq(h, want);
            if (h > 0)
                cr_assert_null(path_problem(t, s, d, hops, h));
        }
    cr_assert_eq(cs_topo_route(t, 0, R * C - 1, hops), 849 + 999);
    cr_assert_eq(cs_topo_degree(t, 0), 2);
    cr_assert_eq(cs_topo_degree(t, C + 1), 4);
    int c = cs_topo_find_channel(t, C + 1, 2 * C + 1);
    cr_assert(c >= 0 && cs_topo_channel_src(t, c) == C + 1 &&
              cs_topo_channel_dst(t, c) == 2 * C + 1);
    cr_assert_eq(cs_topo_find_channel(t, 0, C + 1), -1);
    free(hops);
    cs_topo_free(t);
}

/* Ring hints: a permutation of the nodes in which consecutive nodes (and the
 * last and first) are linked, wherever a Hamiltonian cycle exists. */
static void check_ring_hint(cs_topo_t *t, int want_cycle)
{
    int n = cs_topo_nodes(t);
    int32_t *order = malloc(sizeof(int32_t) * (size_t)n);
    char *seen = calloc((size_t)n, 1);
    cr_assert_eq(cs_topo_ring_hint(t, order), 1);
    for (int i = 0; i < n; i++) {
        cr_assert(order[i] >= 0 && order[i] < n && !seen[order[i]], "not a permutation at %d", i);
        seen[order[i]] = 1;
    }
    for (int i = 0; i + 1 < n; i++)
        cr_assert_geq(cs_topo_find_channel(t, order[i], order[i + 1]), 0,
                      "%s: %d and %d are not neighbours", cs_topo_name(t), order[i], order[i + 1]);
    cr_assert_eq(cs_topo_find_channel(t, order[n - 1], order[0]) >= 0, want_cycle,
                 "%s: closing pair", cs_topo_name(t));
    free(order);
    free(seen);
}

Test(topo, ring_hints_are_hamiltonian_where_possible)
{
    cs_topo_t *t;
    cs_error_t err;
    for (int d = 1; d <= 8; d++) {
        cr_assert_eq(cs_topo_new_hypercube(1 << d, &t, &err), CS_OK);
        check_ring_hint(t, d >= 2 || (1 << d) == 2);
        cs_topo_free(t);
    }
    for (int R = 2; R <= 7; R++)
        for (int C = 2; C <= 7; C++) {
            int even = R % 2 == 0 || C % 2 == 0;
            cr_assert_eq(cs_topo_new_mesh(R, C, &t, &err), CS_OK);
            check_ring_hint(t, even);
            cs_topo_free(t);
            cr_assert_eq(cs_topo_new_torus(R, C, &t, &err), CS_OK);
            if (even)
                check_ring_hint(t, 1);
            cs_topo_free(t);
        }
    cr_assert_eq(cs_topo_new_ring(8, &t, &err), CS_OK);
    int32_t o[8];
    cr_assert_eq(cs_topo_ring_hint(t, o), 0, "node order is already the ring");
    cs_topo_free(t);
}

Test(topo, cylinder)
{
    /* R rings of C nodes: R*C ring links (C >= 3), (R-1)*C across */
    cs_topo_t *t;
    cs_error_t err;
    for (int R = 1; R <= 5; R++)
        for (int C = 3; C <= 8; C++) {
            cr_assert_eq(cs_topo_new_cylinder(R, C, &t, &err), CS_OK);
            cr_expect_eq(cs_topo_channels(t), 2 * (R * C + (R - 1) * C));
            check_structure(t);
            check_all_routes(t);
            /* every route: first round the source's ring the shorter way,
             * then along the destination's column */
            cs_hop_t hops[64];
            for (int s = 0; s < R * C; s++)
                for (int d = 0; d < R * C; d++) {
                    if (s == d)
                        continue;
                    int h = cs_topo_route(t, s, d, hops);
                    int dc = (col_of(t, d) - col_of(t, s) + C) % C;
                    int ring = dc <= C - dc ? dc : C - dc;
                    int across = abs(row_of(t, d) - row_of(t, s));
                    cr_assert_eq(h, ring + across, "%dx%d %d->%d", R, C, s, d);
                    for (int i = 0; i < ring; i++)
                        cr_assert_eq(row_of(t, cs_topo_channel_dst(t, hops[i].chan)),
                                     row_of(t, s));
                }
            /* the CNS-1 snake is a Hamiltonian cycle when C is even */
            if (C % 2 == 0)
                check_ring_hint(t, 1);
            cs_topo_free(t);
        }
}
