/*
 * netfile_sgroutes.c - the zones of a SimGrid platform file (netfile_simgrid.c
 * reads the rest): a <zone> of <host>s, <router>s, <link>s and <route>s,
 * and a <zone> of <zone>s and FLAT <cluster>s joined by <zoneRoute>s,
 * nested (SimGrid's DTD 4.1 and https://simgrid.org/doc/latest/
 * Platform_routing.html).  SimGrid routes list links, not the places
 * between them, so the graph is inferred: each route walks from src (a
 * zoneRoute from gw_src) through its links to dst, consecutive links
 * meeting at a common point; points are merged with union-find, a point no
 * host or router claims becomes an anonymous switch ("~j1", ...).  Only the
 * links some route uses become links.  Routing: a Full zone's routes are
 * the paths (netfile_routes.c), a platform of zones routes through its
 * zone tree (netfile_sgzone.c).
 */
#include "topo/netfile_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef cs_netfile_sg_t sg_t;

/* ---- zones of hosts, routers, links and routes --------------------------------- */

typedef struct sg_link {
    double bw, lat;
    int32_t line;
    int used;
    int shared; /* SimGrid's SHARED: half duplex */
} sg_link_t;

/* Points: the zone's hosts and routers (0..nelem-1, as staged), then two
 * ends per link.  up[] is a union-find forest; named[root] is the element
 * a set of points is, or -1 while it is an anonymous junction. */
/* A route's walk: its points (src's, then each link's far end), kept to
 * become a source route once the points are nodes. */
typedef struct sg_walk {
    int64_t first;
    int32_t n, line;
    int symmetrical;
    int inter; /* a zoneRoute's (gw_src to gw_dst), not a <route>'s */
} sg_walk_t;

typedef struct cs_netfile_sg_zone {
    cs_netfile_stage_t *st;    /* hosts and routers, in file order */
    xmlNodePtr zone;           /* cs_netfile_sg_zone's <zone>, for messages */
    cs_netfile_stage_t *names; /* link ids -> index (a stage used as a name table) */
    sg_link_t *links;
    int32_t nlinks, cap_links, nelem;
    int32_t *up, *named;
    sg_walk_t *walks; /* routing="Full" only */
    int32_t nwalks, cap_walks;
    int32_t *pts;
    int64_t npts, cap_pts;
    /* platforms of several zones (cs_netfile_sg_zones): the tree, zone names (a stage
     * as name table, index = zone id), each zone's element, the zone being
     * read, the routes and zoneRoutes kept for the second pass, and a
     * cluster's host links' ends: (element, link, end) to join */
    cs_netfile_sgtree_t *tree; /* nodes: staged ids (the built ones too) */
    cs_netfile_stage_t *znames;
    xmlNodePtr *zxml;
    int32_t cap_zxml, cur;
    xmlNodePtr *later;
    int32_t *later_zone, nlater, cap_later, cap_later_zone;
    int32_t *pre;
    int32_t npre, cap_pre;
} sg_zone_t;

static void walk_point(sg_zone_t *z, int32_t p)
{
    if (z->npts == z->cap_pts) {
        z->cap_pts = z->cap_pts ? 2 * z->cap_pts : 256;
        z->pts = cs_realloc(z->pts, (size_t)z->cap_pts * sizeof *z->pts);
    }
    z->pts[z->npts++] = p;
}

static int32_t pt_find(sg_zone_t *z, int32_t x)
{
    while (z->up[x] != x) {
        z->up[x] = z->up[z->up[x]];
        x = z->up[x];
    }
    return x;
}

/* Merges the sets of a and b unless they are two different elements. */
static int pt_union(sg_zone_t *z, int32_t a, int32_t b)
{
    a = pt_find(z, a);
    b = pt_find(z, b);
    if (a == b)
        return 1;
    if (z->named[a] >= 0 && z->named[b] >= 0)
        return 0;
    z->up[b] = a;
    if (z->named[a] < 0)
        z->named[a] = z->named[b];
    return 1;
}

/* What the walk's point p is, for messages. */
static const char *pt_name(sg_zone_t *z, int32_t p)
{
    int32_t e = z->named[pt_find(z, p)];
    return e >= 0 ? cs_netfile_stage_name(z->st, e) : "a place no host or router is";
}

/* A host or router called `id`, declared by element c (in zone z->cur). */
static int sg_add_element(const sg_t *s, sg_zone_t *z, xmlNodePtr c, const char *id, int host,
                          int32_t *e)
{
    int rc;
    if (cs_netfile_stage_find(z->st, id) >= 0)
        return cs_netfile_sg_fail(s, c, "<%s id=\"%s\">: the id is already used",
                                  (const char *)c->name, id);
    if ((rc = cs_netfile_stage_node(z->st, id, cs_netfile_sg_line(c), e, s->err)))
        return rc;
    cs_netfile_stage_set_kind(z->st, *e, host ? CS_NETNODE_HOST : CS_NETNODE_SWITCH);
    if (z->tree) {
        cs_netfile_sgtree_place(z->tree, *e, z->cur);
        cs_netfile_stage_set_hints(z->st, *e, z->cur, host ? 0 : 1);
    }
    return CS_OK;
}

static int sg_element(const sg_t *s, sg_zone_t *z, xmlNodePtr c)
{
    int host = cs_netfile_sg_is(c, "host"),
        rc = cs_netfile_sg_check(s, c, host ? "id speed core" : "id", 0);
    const char *id = cs_netfile_sg_need(s, c, "id", &rc);
    int32_t e;
    return rc ? rc : sg_add_element(s, z, c, id, host, &e);
}

/* A link called `id` (declared by element c); *k gets its index. */
static int sg_add_link(const sg_t *s, sg_zone_t *z, xmlNodePtr c, const char *id, sg_link_t l,
                       int32_t *k)
{
    int rc;
    if (cs_netfile_stage_find(z->names, id) >= 0)
        return cs_netfile_sg_fail(s, c, "<link id=\"%s\">: the id is already used", id);
    if ((rc = cs_netfile_stage_node(z->names, id, cs_netfile_sg_line(c), k, s->err)))
        return rc;
    z->links = cs_grow(z->links, z->nlinks, &z->cap_links, 64, sizeof *z->links);
    z->links[z->nlinks++] = l;
    return CS_OK;
}

static int sg_link_decl(const sg_t *s, sg_zone_t *z, xmlNodePtr c)
{
    int rc = cs_netfile_sg_check(s, c, "id bandwidth latency sharing_policy", 0);
    const char *id = cs_netfile_sg_need(s, c, "id", &rc),
               *bw = cs_netfile_sg_need(s, c, "bandwidth", &rc);
    const char *lat = cs_netfile_sg_attr(c, "latency");
    sg_link_t l = {0, 0, cs_netfile_sg_line(c), 0, 0};
    cs_netfile_sg_policy_t pol;
    int32_t k;
    if (rc || (rc = cs_netfile_sg_bandwidth(s, c, "bandwidth", bw, &l.bw)) ||
        (lat && (rc = cs_netfile_sg_latency(s, c, "latency", lat, &l.lat))) ||
        (rc = cs_netfile_sg_sharing(s, c, "sharing_policy", "SHARED", &pol)))
        return rc;
    l.shared = pol == CS_SG_SHARED; /* FATPIPE: an ordinary link (netfile_simgrid.c) */
    return sg_add_link(s, z, c, id, l, &k);
}

/* The point of element `name` (a <route>'s src or dst). */
static int sg_endpoint(const sg_t *s, sg_zone_t *z, xmlNodePtr r, const char *key, int32_t *p)
{
    int rc = CS_OK;
    const char *name = cs_netfile_sg_need(s, r, key, &rc);
    if (rc)
        return rc;
    if ((*p = cs_netfile_stage_find(z->st, name)) < 0)
        return cs_netfile_sg_fail(s, r, "<%s %s=\"%s\">: no <host> or <router> has that id",
                       (const char *)r->name, key, name);
    return CS_OK;
}

/* One route: from src, each link continues at the point the walk is at
 * (one of its ends already there, else a free end joins it); the last
 * link's far end is dst.  A zoneRoute (inter) walks from gw_src to gw_dst
 * (its attributes are checked by the caller). */
static int sg_route(const sg_t *s, sg_zone_t *z, xmlNodePtr r, int inter)
{
    int32_t cur, dst;
    const char *ks = inter ? "gw_src" : "src", *kd = inter ? "gw_dst" : "dst";
    const char *el = (const char *)r->name;
    int rc = inter ? CS_OK : cs_netfile_sg_check(s, r, "src dst symmetrical", 1), nl = 0;
    const char *sym = cs_netfile_sg_attr(r, "symmetrical");
    if (rc || (rc = sg_endpoint(s, z, r, ks, &cur)) || (rc = sg_endpoint(s, z, r, kd, &dst)))
        return rc;
    if (sym && strcmp(sym, "YES") && strcmp(sym, "NO") && strcmp(sym, "yes") && strcmp(sym, "no"))
        return cs_netfile_sg_fail(s, r, "<%s symmetrical=\"%s\">; valid: YES, NO", el, sym);
    z->walks = cs_grow(z->walks, z->nwalks, &z->cap_walks, 64, sizeof *z->walks);
    z->walks[z->nwalks++] =
        (sg_walk_t){z->npts, 0, cs_netfile_sg_line(r), !sym || !strcasecmp(sym, "YES"), inter};
    walk_point(z, cur);
    for (xmlNodePtr c = r->children; c; c = c->next) {
        const char *id, *dir;
        int32_t k, a, b, in;
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (!cs_netfile_sg_is(c, "link_ctn"))
            return cs_netfile_sg_fail(s, c, "<%s> inside <%s>; only <link_ctn> is read",
                           (const char *)c->name, el);
        if ((rc = cs_netfile_sg_check(s, c, "id direction", 0)) ||
            !(id = cs_netfile_sg_need(s, c, "id", &rc)))
            return rc;
        /* a SPLITDUPLEX link's UP and DOWN halves are collsim's link's two
         * directions: the walk chooses, the attribute is only checked */
        if ((dir = cs_netfile_sg_attr(c, "direction")) && strcmp(dir, "UP") &&
            strcmp(dir, "DOWN") && strcmp(dir, "NONE"))
            return cs_netfile_sg_fail(s, c, "<link_ctn direction=\"%s\">; valid: UP, DOWN, NONE",
                                      dir);
        if ((k = cs_netfile_stage_find(z->names, id)) < 0)
            return cs_netfile_sg_fail(s, c, "<link_ctn id=\"%s\">: no <link> has that id", id);
        a = z->nelem + 2 * k;
        b = a + 1;
        if (pt_find(z, a) == pt_find(z, cur) || pt_find(z, b) == pt_find(z, cur))
            in = pt_find(z, a) == pt_find(z, cur) ? a : b;
        else if (pt_union(z, a, cur))
            in = a;
        else if (pt_union(z, b, cur))
            in = b;
        else
            return cs_netfile_sg_fail(
                s, c,
                "<%s %s=\"%s\" %s=\"%s\">: link %s does not continue the "
                "path (its ends are already placed elsewhere by earlier routes)",
                el, ks, cs_netfile_sg_attr(r, ks), kd, cs_netfile_sg_attr(r, kd), id);
        pt_union(z, in, cur);
        cur = in == a ? b : a;
        walk_point(z, cur);
        z->links[k].used = 1;
        nl++;
    }
    z->walks[z->nwalks - 1].n = nl + 1;
    if (nl == 0)
        return cs_netfile_sg_fail(s, r, "<%s %s=\"%s\" %s=\"%s\"> lists no link", el, ks,
                                  cs_netfile_sg_attr(r, ks), kd, cs_netfile_sg_attr(r, kd));
    if (!pt_union(z, cur, dst))
        return cs_netfile_sg_fail(s, r, "<%s %s=\"%s\" %s=\"%s\">: its links lead to %s, not to %s "
                       "(given the routes before it)", el, ks, cs_netfile_sg_attr(r, ks), kd,
                       cs_netfile_sg_attr(r, kd), pt_name(z, cur), cs_netfile_sg_attr(r, kd));
    return CS_OK;
}

/* Junctions become switches; used links become links. */
static int sg_zone_build(const sg_t *s, sg_zone_t *z, cs_netdesc_t **out)
{
    int32_t npts = z->nelem + 2 * z->nlinks, junctions = 0;
    int rc;
    for (int32_t p = 0; p < npts; p++) {
        int32_t root = pt_find(z, p), id;
        char name[32];
        if (z->named[root] >= 0 || p < z->nelem || !z->links[(p - z->nelem) / 2].used)
            continue;
        do /* an element may be called ~j1 too */
            snprintf(name, sizeof name, "~j%d", (int)++junctions);
        while (cs_netfile_stage_find(z->st, name) >= 0);
        if ((rc = cs_netfile_stage_node(z->st, name, 0, &id, s->err)))
            return rc;
        cs_netfile_stage_set_kind(z->st, id, CS_NETNODE_SWITCH);
        z->named[root] = id;
    }
    for (int32_t k = 0; k < z->nlinks; k++) {
        const sg_link_t *l = &z->links[k];
        if (l->used) {
            cs_netfile_stage_link(z->st, z->named[pt_find(z, z->nelem + 2 * k)],
                                  z->named[pt_find(z, z->nelem + 2 * k + 1)], l->bw, l->lat, 1,
                                  l->line);
            if (l->shared)
                cs_netfile_stage_share_last(z->st);
        }
    }
    return cs_netfile_stage_build(z->st, out, s->err);
}

/* The walks of <route>s (inter 0) or of zoneRoutes (inter 1) as a table of
 * node paths; NULL on error (two for one pair). */
static cs_netfile_routes_t *sg_walk_routes(const sg_t *s, sg_zone_t *z, cs_netdesc_t *d,
                                           int inter)
{
    cs_netfile_routes_t *routes = cs_netfile_routes_new();
    int32_t *path = NULL, cap = 0;
    for (int32_t w = 0; w < z->nwalks; w++) {
        const sg_walk_t *wk = &z->walks[w];
        if (wk->inter != inter)
            continue;
        while (cap < wk->n) {
            cap = cap ? 2 * cap : 64;
            path = cs_realloc(path, (size_t)cap * sizeof *path);
        }
        for (int32_t k = 0; k < wk->n; k++)
            path[k] = cs_netfile_stage_built_id(z->st,
                                                z->named[pt_find(z, z->pts[wk->first + k])]);
        if (cs_netfile_routes_add(routes, path, wk->n, wk->symmetrical)) {
            cs_error_set(s->err, CS_ERR_PARSE, "%s:%d: a second <%s> from %s to %s", s->path,
                         (int)wk->line, inter ? "zoneRoute" : "route",
                         cs_netdesc_label(d, path[0]), cs_netdesc_label(d, path[wk->n - 1]));
            free(path);
            cs_netfile_routes_free(routes);
            return NULL;
        }
    }
    free(path);
    return routes;
}

/* Message for a Full zone (its element x) without a route from a to b. */
static int sg_hole(const sg_t *s, xmlNodePtr x, const char *zone, const char *a, const char *b)
{
    return cs_netfile_sg_fail(s, x,
                              "<zone id=\"%s\">: no route from %s to %s: no <route> between them "
                              "(routing=Full needs one for every two of its hosts and gateways, "
                              "or a symmetrical one back)",
                              zone, a, b);
}

/* routing="Full": the routes are the paths (SimGrid's FullZone), so they
 * become the description's routing. */
static int sg_zone_routes(const sg_t *s, sg_zone_t *z, cs_netdesc_t *d)
{
    cs_netfile_routes_t *routes = sg_walk_routes(s, z, d, 0);
    int32_t n = cs_netdesc_nodes(d), nh = 0, a, b, *hosts;
    if (!routes)
        return CS_ERR_PARSE;
    hosts = cs_malloc(((size_t)n + 1) * sizeof *hosts);
    for (int32_t v = 0; v < n; v++)
        if (cs_netdesc_kind(d, v) == CS_NETNODE_HOST)
            hosts[nh++] = v;
    int whole = cs_netfile_routes_complete(routes, hosts, nh, &a, &b);
    free(hosts);
    if (!whole) {
        cs_netfile_routes_free(routes);
        const char *id = cs_netfile_sg_attr(z->zone, "id");
        return sg_hole(s, z->zone, id ? id : "", cs_netdesc_label(d, a),
                       cs_netdesc_label(d, b));
    }
    cs_netdesc_set_route(d, "the file's routes (SimGrid Full zone)", cs_netfile_routes_path,
                         routes, cs_netfile_routes_free);
    return CS_OK;
}

/* Once every element and link is known: each is its own set of points. */
static void sg_points_init(sg_zone_t *z)
{
    z->nelem = cs_netfile_stage_count(z->st);
    int32_t npts = z->nelem + 2 * z->nlinks;
    z->up = cs_malloc(((size_t)npts + 1) * sizeof *z->up);
    z->named = cs_malloc(((size_t)npts + 1) * sizeof *z->named);
    for (int32_t p = 0; p < npts; p++) {
        z->up[p] = p;
        z->named[p] = p < z->nelem ? p : -1;
    }
}

static void sg_zone_free(sg_zone_t *z)
{
    free(z->walks);
    free(z->pts);
    free(z->up);
    free(z->named);
    free(z->links);
    free(z->zxml);
    free(z->later);
    free(z->later_zone);
    free(z->pre);
    cs_netfile_sgtree_free(z->tree);
    cs_netfile_stage_free(z->st);
    cs_netfile_stage_free(z->names);
    cs_netfile_stage_free(z->znames);
}

int cs_netfile_sg_zone(const sg_t *s, xmlNodePtr zone, int full, cs_netdesc_t **out)
{
    sg_zone_t z = {0};
    int rc = CS_OK;
    z.zone = zone;
    z.st = cs_netfile_stage_new(s->path);
    z.names = cs_netfile_stage_new(s->path);
    /* first the places and links, then the routes (the DTD's order too) */
    for (xmlNodePtr c = zone->children; c && !rc; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || cs_netfile_sg_is(c, "route"))
            continue;
        if (cs_netfile_sg_is(c, "host") || cs_netfile_sg_is(c, "router"))
            rc = sg_element(s, &z, c);
        else if (cs_netfile_sg_is(c, "link"))
            rc = sg_link_decl(s, &z, c);
        else
            rc = cs_netfile_sg_fail(s, c,
                                    "<%s> inside a <zone> is not read by collsim (it reads <host>, "
                                    "<router>, <link>, <route>, or one <cluster>)",
                                    (const char *)c->name);
    }
    if (!rc)
        sg_points_init(&z);
    for (xmlNodePtr c = zone->children; c && !rc; c = c->next)
        if (cs_netfile_sg_is(c, "route"))
            rc = sg_route(s, &z, c, 0);
    if (!rc)
        rc = sg_zone_build(s, &z, out);
    if (!rc && full && (rc = sg_zone_routes(s, &z, *out))) {
        cs_netdesc_free(*out);
        *out = NULL;
    }
    sg_zone_free(&z);
    return rc;
}

/* ---- platforms of several zones ----------------------------------------------------- */

static int is_zone(xmlNodePtr c)
{
    return cs_netfile_sg_is(c, "zone") || cs_netfile_sg_is(c, "AS");
}
static int is_zroute(xmlNodePtr c)
{
    return cs_netfile_sg_is(c, "zoneRoute") || cs_netfile_sg_is(c, "ASroute");
}

/* A zone called `id` (zones and clusters share one namespace), declared by
 * element c. */
static int mz_new_zone(const sg_t *s, sg_zone_t *z, xmlNodePtr c, const char *id, int32_t parent,
                       cs_sgzone_kind_t kind, int32_t *zid)
{
    int32_t k;
    int rc;
    if (cs_netfile_stage_find(z->znames, id) >= 0)
        return cs_netfile_sg_fail(s, c, "<%s id=\"%s\">: a zone or cluster has that id already",
                       (const char *)c->name, id);
    if ((rc = cs_netfile_stage_node(z->znames, id, cs_netfile_sg_line(c), &k, s->err)))
        return rc;
    *zid = cs_netfile_sgtree_add_zone(z->tree, parent, kind, -1);
    z->zxml = cs_grow(z->zxml, *zid, &z->cap_zxml, 16, sizeof *z->zxml);
    z->zxml[*zid] = c;
    return CS_OK;
}

/* Keeps a <route> or <zoneRoute> of zone z->cur for the second pass, once
 * every element and link of the platform is known. */
static void mz_later(sg_zone_t *z, xmlNodePtr c)
{
    z->later = cs_grow(z->later, z->nlater, &z->cap_later, 16, sizeof *z->later);
    z->later_zone =
        cs_grow(z->later_zone, z->nlater, &z->cap_later_zone, 16, sizeof *z->later_zone);
    z->later[z->nlater] = c;
    z->later_zone[z->nlater++] = z->cur;
}

static char *mz_name(const char *a, const char *b, const char *c)
{
    size_t len = strlen(a) + strlen(b) + strlen(c) + 1;
    char *t = cs_malloc(len);
    snprintf(t, len, "%s%s%s", a, b, c);
    return t;
}

/* A FLAT <cluster> among zones: SimGrid's StarZone (sg_platf.cpp): hosts
 * prefix+N+suffix, each with its link ID_link_N (bw, lat, SPLITDUPLEX) to
 * the cluster's router, router_id or prefix+ID_router+suffix, through
 * which its routes to other zones go. */
static int mz_cluster(const sg_t *s, sg_zone_t *z, xmlNodePtr c, int32_t parent)
{
    const char *topo = cs_netfile_sg_attr(c, "topology");
    if (topo && strcmp(topo, "FLAT"))
        return cs_netfile_sg_fail(
            s, c,
            "<cluster topology=%s> among zones: SimGrid routes from such a "
            "cluster's hosts to its router through no link; collsim reads FLAT "
            "clusters there",
            topo);
    /* loopback_*: unused, a rank's message to itself crosses no link */
    int rc = cs_netfile_sg_check(s, c, "id prefix suffix radical speed core bw lat "
                                 "sharing_policy topology router_id loopback_bw loopback_lat", 0);
    const char *id = cs_netfile_sg_need(s, c, "id", &rc),
               *rad = cs_netfile_sg_need(s, c, "radical", &rc),
               *b = cs_netfile_sg_need(s, c, "bw", &rc), *l = cs_netfile_sg_need(s, c, "lat", &rc);
    cs_netfile_sg_policy_t pol;
    const char *pre = cs_netfile_sg_attr(c, "prefix"), *suf = cs_netfile_sg_attr(c, "suffix"),
               *rid = cs_netfile_sg_attr(c, "router_id");
    sg_link_t lk = {0, 0, cs_netfile_sg_line(c), 1, 0};
    int64_t count, *vals;
    int32_t zid, e0 = cs_netfile_stage_count(z->st), k0 = z->nlinks, e, k;
    char num[24], *name;
    if (rc)
        return rc;
    pre = pre ? pre : "";
    suf = suf ? suf : "";
    if ((rc = cs_netfile_sg_sharing(s, c, "sharing_policy", "SPLITDUPLEX", &pol)))
        return rc;
    /* SimGrid 3.32 makes a cluster's host links SHARED unless SPLITDUPLEX
     * (FATPIPE too, netfile_simgrid.c) */
    lk.shared = pol != CS_SG_SPLITDUPLEX;
    if ((rc = cs_netfile_sg_radical(s, c, rad, &count, NULL)) ||
        (rc = cs_netfile_sg_bandwidth(s, c, "bw", b, &lk.bw)) ||
        (rc = cs_netfile_sg_latency(s, c, "lat", l, &lk.lat)) ||
        (rc = mz_new_zone(s, z, c, id, parent, CS_SGZONE_STAR, &zid)))
        return rc;
    z->cur = zid;
    vals = cs_malloc((size_t)count * sizeof *vals);
    rc = cs_netfile_sg_radical(s, c, rad, &count, vals);
    for (int64_t i = 0; i < count && !rc; i++) {
        snprintf(num, sizeof num, "%lld", (long long)vals[i]);
        name = mz_name(pre, num, suf);
        rc = sg_add_element(s, z, c, name, 1, &e);
        free(name);
        snprintf(num, sizeof num, "_link_%lld", (long long)vals[i]);
        name = mz_name(id, num, "");
        if (!rc)
            rc = sg_add_link(s, z, c, name, lk, &k);
        free(name);
    }
    free(vals);
    if (rid && *rid)
        name = mz_name(rid, "", "");
    else {
        char *t = mz_name(id, "_router", suf);
        name = mz_name(pre, t, "");
        free(t);
    }
    if (!rc)
        rc = sg_add_element(s, z, c, name, 0, &e);
    free(name);
    if (rc)
        return rc;
    cs_netfile_sgtree_set_router(z->tree, zid, e);
    for (int32_t i = 0; i < 6 * (int32_t)count; i++) { /* host end 0, router end 1 */
        int32_t h = i / 6, j = i % 6;
        z->pre = cs_grow(z->pre, z->npre, &z->cap_pre, 64, sizeof *z->pre);
        z->pre[z->npre++] = j == 0 ? e0 + h : j == 3 ? e : j == 1 || j == 4 ? k0 + h : j == 5;
    }
    return CS_OK;
}

/* A <zone> (or old <AS>) of a platform of several zones, routing="Full":
 * sub-zones and clusters joined by zoneRoutes, or hosts and routers joined
 * by routes. */
static int mz_zone(const sg_t *s, sg_zone_t *z, xmlNodePtr zone, int32_t parent)
{
    int rc = cs_netfile_sg_check(s, zone, "id routing", 1), subs = 0;
    const char *id = cs_netfile_sg_need(s, zone, "id", &rc),
               *routing = cs_netfile_sg_need(s, zone, "routing", &rc);
    int32_t me;
    if (rc)
        return rc;
    if (strcmp(routing, "Full"))
        return cs_netfile_sg_fail(s, zone,
                                  "<%s id=\"%s\" routing=\"%s\"> in a platform of several zones: "
                                  "collsim reads routing=\"Full\" there",
                                  (const char *)zone->name, id, routing);
    for (xmlNodePtr c = zone->children; c; c = c->next)
        subs += is_zone(c) || cs_netfile_sg_is(c, "cluster");
    if ((rc = mz_new_zone(s, z, zone, id, parent, subs ? CS_SGZONE_ZONES : CS_SGZONE_LEAF, &me)))
        return rc;
    for (xmlNodePtr c = zone->children; c && !rc; c = c->next) {
        z->cur = me;
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (is_zone(c))
            rc = mz_zone(s, z, c, me);
        else if (cs_netfile_sg_is(c, "cluster"))
            rc = mz_cluster(s, z, c, me);
        else if (cs_netfile_sg_is(c, "link"))
            rc = sg_link_decl(s, z, c);
        else if (!subs && (cs_netfile_sg_is(c, "host") || cs_netfile_sg_is(c, "router")))
            rc = sg_element(s, z, c);
        else if ((!subs && cs_netfile_sg_is(c, "route")) || (subs && is_zroute(c)))
            mz_later(z, c);
        else
            rc = cs_netfile_sg_fail(
                s, c, "<%s> inside a <zone> of %s is not read by collsim (it reads %s)",
                (const char *)c->name, subs ? "zones" : "hosts",
                subs ? "<zone>, <cluster>, <link>, <zoneRoute>"
                     : "<host>, <router>, <link>, <route>");
    }
    return rc;
}

/* The sub-zone `key` of zone z->cur names, in *out. */
static int mz_child(const sg_t *s, sg_zone_t *z, xmlNodePtr r, const char *key, int32_t *out)
{
    int rc = CS_OK;
    const char *name = cs_netfile_sg_need(s, r, key, &rc);
    if (rc)
        return rc;
    *out = cs_netfile_stage_find(z->znames, name);
    if (*out < 0 || cs_netfile_sgtree_parent(z->tree, *out) != z->cur)
        return cs_netfile_sg_fail(
            s, r, "<%s %s=\"%s\">: zone %s has no sub-zone or cluster of that id",
            (const char *)r->name, key, name, cs_netfile_stage_name(z->znames, z->cur));
    return CS_OK;
}

/* A gateway must lie in the zone its side names. */
static int mz_gateway(const sg_t *s, sg_zone_t *z, xmlNodePtr r, const char *key, int32_t zone,
                      int32_t *gw)
{
    const char *name = cs_netfile_sg_attr(r, key);
    *gw = cs_netfile_stage_find(z->st, name);
    if (!cs_netfile_sgtree_within(z->tree, *gw, zone))
        return cs_netfile_sg_fail(s, r, "<%s %s=\"%s\">: %s is not inside zone %s",
                                  (const char *)r->name, key, name, name,
                                  cs_netfile_stage_name(z->znames, zone));
    return CS_OK;
}

/* <zoneRoute src= dst= gw_src= gw_dst=> (or <ASroute>) of zone z->cur. */
static int mz_zroute(const sg_t *s, sg_zone_t *z, xmlNodePtr r)
{
    int rc = cs_netfile_sg_check(s, r, "src dst gw_src gw_dst symmetrical", 1);
    int32_t a, b, gs, gd;
    const char *sym = cs_netfile_sg_attr(r, "symmetrical");
    if (rc || (rc = mz_child(s, z, r, "src", &a)) || (rc = mz_child(s, z, r, "dst", &b)))
        return rc;
    if (a == b)
        return cs_netfile_sg_fail(s, r, "<%s>: src and dst are the same zone %s",
                                  (const char *)r->name, cs_netfile_sg_attr(r, "src"));
    if ((rc = sg_route(s, z, r, 1)) || (rc = mz_gateway(s, z, r, "gw_src", a, &gs)) ||
        (rc = mz_gateway(s, z, r, "gw_dst", b, &gd)))
        return rc;
    if (cs_netfile_sgtree_add_zroute(z->tree, z->cur, a, b, gs, gd,
                                     !sym || !strcasecmp(sym, "YES")))
        return cs_netfile_sg_fail(s, r, "a second <%s> from %s to %s", (const char *)r->name,
                       cs_netfile_sg_attr(r, "src"), cs_netfile_sg_attr(r, "dst"));
    return CS_OK;
}

/* routing="Full" needs a zoneRoute for every two sub-zones of a zone (or a
 * symmetrical one back), as SimGrid fails on the first message otherwise. */
static int mz_complete(const sg_t *s, sg_zone_t *z)
{
    int32_t n = cs_netfile_stage_count(z->znames);
    for (int32_t p = 0; p < n; p++)
        for (int32_t a = 0; a < n; a++)
            for (int32_t b = 0; b < n && cs_netfile_sgtree_parent(z->tree, a) == p; b++)
                if (a != b && cs_netfile_sgtree_parent(z->tree, b) == p &&
                    !cs_netfile_sgtree_has_zroute(z->tree, p, a, b))
                    return cs_netfile_sg_fail(
                        s, z->zxml[p],
                        "<zone id=\"%s\">: no <zoneRoute> from %s to "
                        "%s (routing=Full needs one for every two of its zones, or a "
                        "symmetrical one back)",
                        cs_netfile_stage_name(z->znames, p), cs_netfile_stage_name(z->znames, a),
                        cs_netfile_stage_name(z->znames, b));
    return CS_OK;
}

/* Every leaf zone's hosts and gateways joined by its routes (after
 * mz_complete: zoneRoutes between every two sub-zones), so that every two
 * hosts of the platform have a route. */
static int mz_holes(const sg_t *s, sg_zone_t *z)
{
    int32_t n = cs_netfile_stage_count(z->st), a, b, zone;
    uint8_t *is_host = cs_malloc((size_t)n + 1);
    for (int32_t v = 0; v < n; v++)
        is_host[v] = cs_netfile_stage_kind(z->st, v) == CS_NETNODE_HOST;
    zone = cs_netfile_sgtree_missing(z->tree, is_host, n, &a, &b);
    free(is_host);
    if (zone < 0)
        return CS_OK;
    return sg_hole(s, z->zxml[zone], cs_netfile_stage_name(z->znames, zone),
                   cs_netfile_stage_name(z->st, a), cs_netfile_stage_name(z->st, b));
}

/* A platform whose <zone> holds zones or clusters: one graph of every
 * zone's hosts, routers and links, routed through the zone tree
 * (netfile_sgzone.c). */
int cs_netfile_sg_zones(const sg_t *s, xmlNodePtr zone, cs_netdesc_t **out)
{
    sg_zone_t z = {0};
    cs_netfile_routes_t *leaf = NULL, *inter = NULL;
    int rc;
    z.st = cs_netfile_stage_new(s->path);
    z.names = cs_netfile_stage_new(s->path);
    z.znames = cs_netfile_stage_new(s->path);
    z.tree = cs_netfile_sgtree_new();
    rc = mz_zone(s, &z, zone, -1);
    if (!rc) {
        sg_points_init(&z);
        for (int32_t i = 0; i < z.npre; i += 3)
            pt_union(&z, z.pre[i], z.nelem + 2 * z.pre[i + 1] + z.pre[i + 2]);
    }
    for (int32_t i = 0; i < z.nlater && !rc; i++) {
        z.cur = z.later_zone[i];
        rc = is_zroute(z.later[i]) ? mz_zroute(s, &z, z.later[i]) : sg_route(s, &z, z.later[i], 0);
    }
    if (!rc && !(rc = mz_complete(s, &z)))
        rc = sg_zone_build(s, &z, out);
    for (int32_t i = 0; !rc && i < cs_netfile_stage_count(z.st); i++)
        CS_ASSERT(cs_netfile_stage_built_id(z.st, i) == i); /* no ranks: staging order */
    if (!rc && (!(leaf = sg_walk_routes(s, &z, *out, 0)) ||
                !(inter = sg_walk_routes(s, &z, *out, 1))))
        rc = CS_ERR_PARSE;
    if (!rc) {
        cs_netfile_sgtree_set_routes(z.tree, leaf, inter); /* the tree frees them */
        leaf = inter = NULL;
        rc = mz_holes(s, &z);
    }
    if (!rc) {
        cs_netdesc_set_route(*out, "the file's zones and routes (SimGrid Full zones)",
                             cs_netfile_sgtree_path, z.tree, cs_netfile_sgtree_free);
        z.tree = NULL;
    } else {
        cs_netfile_routes_free(leaf);
        cs_netfile_routes_free(inter);
        cs_netdesc_free(*out);
        *out = NULL;
    }
    sg_zone_free(&z);
    return rc;
}
