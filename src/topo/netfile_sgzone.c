/*
 * netfile_sgzone.c - the routing of a SimGrid platform of several zones
 * (SimGrid's hierarchical routing, https://simgrid.org/doc/latest/
 * Platform_routing.html, RoutedZone::get_global_route in SimGrid 3.32):
 * zones form a tree; a route between two nodes is found at their common
 * ancestor zone Z.  When Z holds both directly, Z's own route joins them
 * (a leaf zone's <route>, a FLAT cluster's star through its router).
 * Otherwise they lie in two children A and B of Z, and the route is the
 * route inside A from the source to the zoneRoute's gw_src, then the
 * zoneRoute's links to gw_dst, then the route inside B from gw_dst to the
 * destination, each part found the same way one level down.
 *
 * The parts are node paths (the reader turned each <route> and <zoneRoute>
 * into one, netfile_simgrid.c); joined at the gateways they give the
 * description's route.  Routes come without virtual-channel classes, as a
 * file's routes do (netfile_routes.c).
 */
#include "topo/netfile_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct zone {
    int32_t parent; /* -1: the root */
    cs_sgzone_kind_t kind;
    int32_t router; /* CS_SGZONE_STAR: the node every route crosses */
} zone_t;

typedef struct zroute {
    int32_t zone, src, dst; /* src and dst: children of zone */
    int32_t gw_src, gw_dst; /* nodes */
    int symmetrical;
} zroute_t;

struct cs_netfile_sgtree {
    zone_t *zones;
    int32_t nzones, cap_zones;
    int32_t *zone_of; /* per node, -1: none (a junction) */
    int32_t nnodes, cap_nodes;
    zroute_t *zr;
    int32_t nzr, cap_zr;
    cs_netfile_routes_t *leaf, *inter;
};

cs_netfile_sgtree_t *cs_netfile_sgtree_new(void)
{
    return cs_calloc(1, sizeof(cs_netfile_sgtree_t));
}

void cs_netfile_sgtree_free(void *p)
{
    cs_netfile_sgtree_t *t = p;
    if (!t)
        return;
    free(t->zones);
    free(t->zone_of);
    free(t->zr);
    cs_netfile_routes_free(t->leaf);
    cs_netfile_routes_free(t->inter);
    free(t);
}

int32_t cs_netfile_sgtree_add_zone(cs_netfile_sgtree_t *t, int32_t parent, cs_sgzone_kind_t kind,
                                   int32_t router)
{
    t->zones = cs_grow(t->zones, t->nzones, &t->cap_zones, 16, sizeof *t->zones);
    t->zones[t->nzones] = (zone_t){parent, kind, router};
    return t->nzones++;
}

void cs_netfile_sgtree_set_router(cs_netfile_sgtree_t *t, int32_t zone, int32_t router)
{
    t->zones[zone].router = router;
}

cs_sgzone_kind_t cs_netfile_sgtree_kind(const cs_netfile_sgtree_t *t, int32_t zone)
{
    return t->zones[zone].kind;
}

int32_t cs_netfile_sgtree_parent(const cs_netfile_sgtree_t *t, int32_t zone)
{
    return t->zones[zone].parent;
}

void cs_netfile_sgtree_place(cs_netfile_sgtree_t *t, int32_t node, int32_t zone)
{
    while (node >= t->nnodes) {
        t->zone_of = cs_grow(t->zone_of, t->nnodes, &t->cap_nodes, 64, sizeof *t->zone_of);
        t->zone_of[t->nnodes++] = -1;
    }
    t->zone_of[node] = zone;
}

int32_t cs_netfile_sgtree_zone_of(const cs_netfile_sgtree_t *t, int32_t node)
{
    return node >= 0 && node < t->nnodes ? t->zone_of[node] : -1;
}

/* The child of z whose subtree holds zone x; -1 when x is z itself, -2
 * when x is not under z. */
static int32_t child_zone(const cs_netfile_sgtree_t *t, int32_t z, int32_t x)
{
    if (x == z)
        return -1;
    while (x >= 0 && t->zones[x].parent != z)
        x = t->zones[x].parent;
    return x >= 0 ? x : -2;
}

int cs_netfile_sgtree_within(const cs_netfile_sgtree_t *t, int32_t node, int32_t zone)
{
    int32_t x = cs_netfile_sgtree_zone_of(t, node);
    return x >= 0 && child_zone(t, zone, x) != -2;
}

/* The zoneRoute of zone z from child a to child b (*rev: its symmetrical
 * reverse serves), or NULL. */
static const zroute_t *find_zroute(const cs_netfile_sgtree_t *t, int32_t z, int32_t a, int32_t b,
                                   int *rev)
{
    for (int32_t i = 0; i < t->nzr; i++)
        if (t->zr[i].zone == z && t->zr[i].src == a && t->zr[i].dst == b) {
            *rev = 0;
            return &t->zr[i];
        }
    for (int32_t i = 0; i < t->nzr; i++)
        if (t->zr[i].zone == z && t->zr[i].src == b && t->zr[i].dst == a &&
            t->zr[i].symmetrical) {
            *rev = 1;
            return &t->zr[i];
        }
    return NULL;
}

int cs_netfile_sgtree_add_zroute(cs_netfile_sgtree_t *t, int32_t zone, int32_t src, int32_t dst,
                                 int32_t gw_src, int32_t gw_dst, int symmetrical)
{
    for (int32_t i = 0; i < t->nzr; i++)
        if (t->zr[i].zone == zone && t->zr[i].src == src && t->zr[i].dst == dst)
            return -1;
    t->zr = cs_grow(t->zr, t->nzr, &t->cap_zr, 16, sizeof *t->zr);
    t->zr[t->nzr++] = (zroute_t){zone, src, dst, gw_src, gw_dst, symmetrical};
    return 0;
}

int cs_netfile_sgtree_has_zroute(const cs_netfile_sgtree_t *t, int32_t zone, int32_t a, int32_t b)
{
    int rev;
    return find_zroute(t, zone, a, b, &rev) != NULL;
}

void cs_netfile_sgtree_set_routes(cs_netfile_sgtree_t *t, cs_netfile_routes_t *leaf,
                                  cs_netfile_routes_t *inter)
{
    t->leaf = leaf;
    t->inter = inter;
}

/* Whether a host-to-host route can need leaf route u -> v (u, v in one leaf
 * zone, both ways alike): when one is a host (an end), or when both are
 * gateways and one serves a zoneRoute of a zone above the other's (a
 * route entering the leaf's ancestors at the upper one's level leaves for
 * a lower zone through the other).  Two gateways only of one level are
 * never joined: routes do not pass through a sibling zone. */
static int pair_needed(const uint8_t *is_host, const int32_t *dmin, const int32_t *dmax,
                       int32_t u, int32_t v)
{
    return is_host[u] || is_host[v] || dmin[u] < dmax[v] || dmin[v] < dmax[u];
}

int32_t cs_netfile_sgtree_missing(const cs_netfile_sgtree_t *t, const uint8_t *is_host,
                                  int32_t n, int32_t *a, int32_t *b)
{
    /* members grouped by leaf zone (a counting sort): O(nodes + zones +
     * zoneRoutes) here, then members^2 look-ups per leaf zone */
    int32_t *depth = cs_calloc((size_t)t->nzones + 1, sizeof *depth);
    int32_t *dmin = cs_malloc(((size_t)n + 1) * sizeof *dmin);
    int32_t *dmax = cs_malloc(((size_t)n + 1) * sizeof *dmax);
    int32_t *start = cs_calloc((size_t)t->nzones + 1, sizeof *start);
    int32_t *members = cs_malloc(((size_t)n + 1) * sizeof *members), bad = -1;
    for (int32_t z = 1; z < t->nzones; z++) /* a parent comes before its children */
        depth[z] = depth[t->zones[z].parent] + 1;
    for (int32_t v = 0; v < n; v++) {
        dmin[v] = INT32_MAX;
        dmax[v] = -1;
    }
    for (int32_t i = 0; i < t->nzr; i++)
        for (int k = 0; k < 2; k++) {
            int32_t g = k ? t->zr[i].gw_dst : t->zr[i].gw_src, d = depth[t->zr[i].zone];
            if (g >= 0 && g < n) {
                dmin[g] = d < dmin[g] ? d : dmin[g];
                dmax[g] = d > dmax[g] ? d : dmax[g];
            }
        }
    for (int32_t v = 0; v < n; v++) {
        int32_t z = cs_netfile_sgtree_zone_of(t, v);
        if ((is_host[v] || dmax[v] >= 0) && z >= 0 && t->zones[z].kind == CS_SGZONE_LEAF)
            start[z + 1]++;
        else
            dmax[v] = -2; /* not a member */
    }
    for (int32_t z = 0; z < t->nzones; z++)
        start[z + 1] += start[z];
    int32_t *fill = cs_malloc(((size_t)t->nzones + 1) * sizeof *fill);
    memcpy(fill, start, ((size_t)t->nzones + 1) * sizeof *fill);
    for (int32_t v = 0; v < n; v++)
        if (dmax[v] != -2)
            members[fill[cs_netfile_sgtree_zone_of(t, v)]++] = v;
    free(fill);
    for (int32_t z = 0; z < t->nzones && bad < 0; z++)
        for (int32_t i = start[z]; i < start[z + 1] && bad < 0; i++)
            for (int32_t j = start[z]; j < start[z + 1] && bad < 0; j++) {
                int32_t u = members[i], v = members[j];
                if (u != v && pair_needed(is_host, dmin, dmax, u, v) &&
                    !cs_netfile_routes_has(t->leaf, u, v)) {
                    *a = u;
                    *b = v;
                    bad = z;
                }
            }
    free(depth);
    free(dmin);
    free(dmax);
    free(start);
    free(members);
    return bad;
}

typedef struct walk {
    int32_t *path;
    uint8_t *vc;
    int max, n; /* the path ends at the node a part starts from */
} walk_t;

/* Appends the file route a -> b (a is the walk's last node). */
static int seg(const cs_netfile_routes_t *r, walk_t *w, int32_t a, int32_t b)
{
    int k = cs_netfile_routes_path(r, a, b, 0, w->path + w->n - 1, w->vc + w->n - 1,
                                   w->max - w->n + 1);
    if (k < 0)
        return -1;
    w->n += k - 1;
    return 0;
}

static int step(walk_t *w, int32_t node)
{
    if (w->path[w->n - 1] == node)
        return 0;
    if (w->n == w->max)
        return -1;
    w->path[w->n++] = node;
    return 0;
}

/* Appends the route from a (the walk's last node) to b, both under zone z. */
static int zone_path(const cs_netfile_sgtree_t *t, int32_t z, int32_t a, int32_t b, walk_t *w)
{
    int32_t ca, cb;
    const zone_t *zn = &t->zones[z];
    if (a == b)
        return 0;
    ca = child_zone(t, z, cs_netfile_sgtree_zone_of(t, a));
    cb = child_zone(t, z, cs_netfile_sgtree_zone_of(t, b));
    if (ca == -2 || cb == -2)
        return -1;
    if (ca == cb && ca >= 0)
        return zone_path(t, ca, a, b, w);
    if (zn->kind == CS_SGZONE_LEAF)
        return seg(t->leaf, w, a, b);
    if (zn->kind == CS_SGZONE_STAR)
        return step(w, zn->router) || step(w, b) ? -1 : 0;
    int rev;
    const zroute_t *r = ca >= 0 && cb >= 0 ? find_zroute(t, z, ca, cb, &rev) : NULL;
    if (!r)
        return -1;
    int32_t gs = rev ? r->gw_dst : r->gw_src, gd = rev ? r->gw_src : r->gw_dst;
    return zone_path(t, ca, a, gs, w) || seg(t->inter, w, gs, gd) || zone_path(t, cb, gd, b, w)
               ? -1
               : 0;
}

int cs_netfile_sgtree_path(const void *ctx, int32_t src, int32_t dst, uint64_t salt,
                           int32_t *path, uint8_t *vc, int max)
{
    const cs_netfile_sgtree_t *t = ctx;
    walk_t w = {path, vc, max, 1};
    (void)salt; /* one route per pair, as the file gives */
    if (max < 2 || src == dst || cs_netfile_sgtree_zone_of(t, src) < 0 ||
        cs_netfile_sgtree_zone_of(t, dst) < 0)
        return -1;
    path[0] = src;
    return zone_path(t, 0, src, dst, &w) ? -1 : w.n;
}
