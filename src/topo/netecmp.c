/*
 * netecmp.c - equal-cost multipath routing on any network description
 * (issue 18: "ECMP: a message's packets hash to one of the equal-cost
 * paths").  From each node the route takes one of the neighbours that are
 * one hop closer to the destination, chosen by the salt (the machine's
 * hash of the message's source and destination, so a flow keeps one path,
 * as switches hashing a flow's header do) mixed with the node, so that
 * flows spread over all shortest paths rather than over the first hop
 * only.  Distances to a destination come from one breadth-first search,
 * made the first time a route leads there and kept (4 bytes per node per
 * destination used).
 */
#include "topo/netdesc.h"

#include <stdlib.h>
#include <string.h>

typedef struct ecmp {
    int32_t nodes;
    int32_t *off, *adj;   /* neighbours of v: adj[off[v] .. off[v+1]), in link order */
    int32_t **dist;       /* per destination, or NULL until first used */
    int32_t *queue;
} ecmp_t;

static void ecmp_free(void *ctx)
{
    ecmp_t *e = ctx;
    for (int32_t v = 0; v < e->nodes; v++)
        free(e->dist[v]);
    free(e->dist);
    free(e->off);
    free(e->adj);
    free(e->queue);
    free(e);
}

static const int32_t *distances(ecmp_t *e, int32_t dst)
{
    if (e->dist[dst])
        return e->dist[dst];
    int32_t *d = cs_malloc((size_t)e->nodes * sizeof *d), head = 0, tail = 0;
    for (int32_t v = 0; v < e->nodes; v++)
        d[v] = -1;
    d[dst] = 0;
    e->queue[tail++] = dst;
    while (head < tail) {
        int32_t u = e->queue[head++];
        for (int32_t k = e->off[u]; k < e->off[u + 1]; k++)
            if (d[e->adj[k]] < 0) {
                d[e->adj[k]] = d[u] + 1;
                e->queue[tail++] = e->adj[k];
            }
    }
    return e->dist[dst] = d;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ULL;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dULL;
    return x ^ x >> 33;
}

static int ecmp_route(const void *ctx, int32_t src, int32_t dst, uint64_t salt, int32_t *path,
                      uint8_t *vc, int max)
{
    ecmp_t *e = (ecmp_t *)ctx; /* the distance tables fill in lazily */
    const int32_t *d = distances(e, dst);
    int32_t u = src, len = 0;
    (void)vc;
    if (d[src] < 0 || d[src] + 1 > max)
        return -1;
    path[len++] = u;
    while (u != dst) {
        int32_t n = 0, pick;
        for (int32_t k = e->off[u]; k < e->off[u + 1]; k++)
            n += d[e->adj[k]] == d[u] - 1;
        pick = (int32_t)(mix(salt ^ (uint64_t)(uint32_t)u * 0x9e3779b97f4a7c15ULL) % (uint64_t)n);
        for (int32_t k = e->off[u]; k < e->off[u + 1]; k++)
            if (d[e->adj[k]] == d[u] - 1 && pick-- == 0) {
                u = e->adj[k];
                break;
            }
        path[len++] = u;
    }
    return len;
}

int cs_netdesc_route_ecmp(cs_netdesc_t *d, cs_error_t *err)
{
    int32_t nodes = cs_netdesc_nodes(d), links = cs_netdesc_nlinks(d);
    if (cs_netdesc_route_name(d))
        return cs_error_set(err, CS_ERR_USAGE, "%s: routing=ecmp: the network comes with its "
                            "own routes (%s)", cs_netdesc_source(d), cs_netdesc_route_name(d));
    ecmp_t *e = cs_calloc(1, sizeof *e);
    e->nodes = nodes;
    e->off = cs_calloc((size_t)nodes + 1, sizeof *e->off);
    e->adj = cs_malloc(2 * (size_t)(links ? links : 1) * sizeof *e->adj);
    e->dist = cs_calloc((size_t)(nodes ? nodes : 1), sizeof *e->dist);
    e->queue = cs_malloc((size_t)(nodes ? nodes : 1) * sizeof *e->queue);
    for (int32_t i = 0; i < links; i++) {
        e->off[cs_netdesc_link(d, i)->u + 1]++;
        e->off[cs_netdesc_link(d, i)->v + 1]++;
    }
    for (int32_t v = 0; v < nodes; v++)
        e->off[v + 1] += e->off[v];
    int32_t *fill = cs_malloc((size_t)(nodes ? nodes : 1) * sizeof *fill);
    memcpy(fill, e->off, (size_t)nodes * sizeof *fill);
    for (int32_t i = 0; i < links; i++) {
        const cs_netlink_t *l = cs_netdesc_link(d, i);
        e->adj[fill[l->u]++] = l->v;
        e->adj[fill[l->v]++] = l->u;
    }
    free(fill);
    cs_netdesc_set_route(d, "ECMP over shortest paths (a flow hashed to one)", ecmp_route, e,
                         ecmp_free);
    return CS_OK;
}
