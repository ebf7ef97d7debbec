/*
 * netfile_sgdragonfly.c - SimGrid's DRAGONFLY cluster (SimGrid 3.32,
 * src/kernel/routing/DragonflyZone.cpp, and https://simgrid.org/doc/latest/
 * Platform_examples.html "Dragonfly Cluster") as a cs_netdesc_t, built and
 * routed as SimGrid does, for the SimGrid reader (netfile_simgrid.c).
 *
 * topo_parameters "G,g;C,c;R,r;N": G groups, C chassis per group, R routers
 * ("blades") per chassis, N hosts per router.  Host h has coordinates
 * (group, chassis, router, node) in that order, node innermost.  Links,
 * each with the cluster's latency:
 *   - each host to its router: the cluster's bw (SimGrid's local links);
 *   - "green": every two routers of a chassis, r links: bw * r;
 *   - "black": routers at the same position in every two chassis of a
 *     group: bw * c;
 *   - "blue": one link between every two groups i < j, from router j of
 *     group i to router i of group j (router k of a group is chassis k / R,
 *     position k % R): bw * g.
 * k parallel links are one link of multiplicity k (netdesc.h), whose
 * channel has k times the bandwidth, as SimGrid's single link of bw * k.
 *
 * Routing (SimGrid's minimal routing): to another group, first to the
 * router at position t (t = the destination group) of the own chassis
 * (green), then to chassis 0 (black), over the blue link to router s
 * (s = the source group) of chassis 0 in group t; then to the destination's
 * position (green), then to its chassis (black).  SimGrid reaches group t
 * through green_links_[t], so it needs G <= R (the reader checks).
 *
 * One deviation: SimGrid 3.32, after a green hop, believes itself in
 * chassis 0 of the group even when it was in another chassis, so a route
 * inside a group from a chassis other than 0 to another position charges a
 * black link off its path (or misses one).  Those link lists are not a path;
 * collsim follows the hops (green, then black from the chassis reached).
 *
 * Virtual channels: class 0 up to and including the blue hop, class 1
 * after it: within each class hops go green then black (dimension order on
 * fully connected dimensions), so packet mode cannot deadlock.
 */
#include "topo/netfile_internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "topo/netgen_internal.h"

typedef struct df {
    cs_netfile_sgdf_t p;
    int32_t hosts;
} df_t;

typedef struct coords {
    int32_t g, c, b;
} coords_t;

static int32_t router_id(const df_t *d, coords_t x)
{
    return d->hosts + (x.g * d->p.chassis + x.c) * d->p.routers + x.b;
}

/* A host's router's coordinates, or a router's own. */
static coords_t coords_of(const df_t *d, int32_t node)
{
    int32_t r = node < d->hosts ? node / d->p.nodes : node - d->hosts;
    return (coords_t){r / (d->p.chassis * d->p.routers), r / d->p.routers % d->p.chassis,
                      r % d->p.routers};
}

static int df_route(const void *ctx, int32_t src, int32_t dst, uint64_t salt, int32_t *path,
                    uint8_t *vc, int max)
{
    const df_t *d = ctx;
    int32_t total = d->hosts + d->hosts / d->p.nodes;
    cs_netgen_walk_t w = {path, vc, max, 0, 0};
    coords_t cur, t;
    (void)salt; /* one minimal route per pair */
    if (src < 0 || dst < 0 || src >= total || dst >= total || src == dst)
        return -1;
    cur = coords_of(d, src);
    t = coords_of(d, dst);
    cs_netgen_walk_to(&w, src);
    cs_netgen_walk_to(&w, router_id(d, cur));
    if (cur.g != t.g) {
        coords_t gw = {cur.g, 0, t.g}; /* router t of the group: chassis 0, position t */
        cs_netgen_walk_to(&w, router_id(d, (coords_t){cur.g, cur.c, t.g}));
        cs_netgen_walk_to(&w, router_id(d, gw));
        cs_netgen_walk_to(&w, router_id(d, (coords_t){t.g, 0, cur.g}));
        /* the blue hop took class 0 when its far end was appended */
        w.cls = 1;
        cur = (coords_t){t.g, 0, cur.g};
    }
    cs_netgen_walk_to(&w, router_id(d, (coords_t){t.g, cur.c, t.b}));
    cs_netgen_walk_to(&w, router_id(d, t));
    cs_netgen_walk_to(&w, dst);
    return cs_netgen_walk_end(&w);
}

int cs_netfile_sg_dragonfly(cs_netdesc_t *nd, const cs_netfile_sgdf_t *p, double bw, double lat,
                            const char *id, const char *const *labels, cs_error_t *err)
{
    int64_t routers = (int64_t)p->groups * p->chassis * p->routers, hosts = routers * p->nodes;
    int64_t links = hosts + routers * (p->routers - 1) / 2 +
                    (int64_t)p->groups * p->routers * p->chassis * (p->chassis - 1) / 2 +
                    (int64_t)p->groups * (p->groups - 1) / 2;
    char name[128];
    df_t *d;
    int rc;
    if (hosts + routers > CS_NETGEN_MAX_NODES)
        return cs_error_set(err, CS_ERR_RANGE, "DRAGONFLY: %lld hosts and routers, at most %d",
                            (long long)(hosts + routers), CS_NETGEN_MAX_NODES);
    if ((rc = cs_netgen_check_links(links, "DRAGONFLY", err)))
        return rc;
    for (int64_t h = 0; h < hosts; h++) {
        int32_t g = (int32_t)(h / ((int64_t)p->chassis * p->routers * p->nodes));
        cs_netdesc_set_level(nd, cs_netdesc_add_node(nd, CS_NETNODE_HOST, labels[h], g), 0);
    }
    for (int32_t g = 0; g < p->groups; g++)
        for (int32_t c = 0; c < p->chassis; c++)
            for (int32_t b = 0; b < p->routers; b++) {
                snprintf(name, sizeof name, "%s_router_%d_%d_%d", id, (int)g, (int)c, (int)b);
                cs_netdesc_set_level(nd, cs_netdesc_add_node(nd, CS_NETNODE_SWITCH, name, g), 1);
            }
    d = cs_malloc(sizeof *d);
    *d = (df_t){*p, (int32_t)hosts};
    for (int32_t h = 0; h < d->hosts && !rc; h++)
        rc = cs_netdesc_add_link(nd, h, router_id(d, coords_of(d, h)), bw, lat, 1, 0, err);
    for (int32_t g = 0; g < p->groups && !rc; g++)
        for (int32_t c = 0; c < p->chassis && !rc; c++)
            for (int32_t b = 0; b < p->routers && !rc; b++) {
                coords_t x = {g, c, b};
                for (int32_t k = b + 1; k < p->routers && !rc; k++) /* green */
                    rc = cs_netdesc_add_link(nd, router_id(d, x), router_id(d, (coords_t){g, c, k}),
                                             bw, lat, p->green, 0, err);
                for (int32_t k = c + 1; k < p->chassis && !rc; k++) /* black */
                    rc = cs_netdesc_add_link(nd, router_id(d, x), router_id(d, (coords_t){g, k, b}),
                                             bw, lat, p->black, 0, err);
            }
    for (int32_t i = 0; i < p->groups && !rc; i++) /* blue */
        for (int32_t j = i + 1; j < p->groups && !rc; j++)
            rc = cs_netdesc_add_link(nd, router_id(d, (coords_t){i, 0, j}),
                                     router_id(d, (coords_t){j, 0, i}), bw, lat, p->blue, 0, err);
    if (rc) {
        free(d);
        return rc;
    }
    cs_netdesc_set_route(nd, "minimal (SimGrid DRAGONFLY)", df_route, d, free);
    return CS_OK;
}
