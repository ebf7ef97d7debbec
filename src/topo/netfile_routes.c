/*
 * netfile_routes.c - source routes read from a file (netfile_internal.h): a
 * table of node paths by (src, dst) that serves as a description's routing
 * (cs_netdesc_route_fn), for SimGrid zones with routing="Full", whose
 * routes are the paths messages take (SimGrid's FullZone: one route per
 * pair, its reverse unless symmetrical="NO").
 */
#include "topo/netfile_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct route {
    int32_t src, dst, n;
    int symmetrical;
    int64_t first; /* in nodes[] */
} route_t;

struct cs_netfile_routes {
    route_t *routes;
    int32_t nroutes, cap_routes;
    int32_t *nodes;
    int64_t nnodes, cap_nodes;
    int32_t *hash; /* open addressing over (src, dst): route index or -1 */
    int64_t hash_cap;
};

cs_netfile_routes_t *cs_netfile_routes_new(void) { return cs_calloc(1, sizeof(cs_netfile_routes_t)); }

void cs_netfile_routes_free(void *p)
{
    cs_netfile_routes_t *r = p;
    if (!r)
        return;
    free(r->routes);
    free(r->nodes);
    free(r->hash);
    free(r);
}

static uint64_t pair_key(int32_t src, int32_t dst)
{
    uint64_t x = (uint64_t)(uint32_t)src << 32 | (uint32_t)dst;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

/* The slot of (src, dst): its route's or the empty one where it would go. */
static int64_t slot(const cs_netfile_routes_t *r, int32_t src, int32_t dst)
{
    int64_t mask = r->hash_cap - 1, s = (int64_t)(pair_key(src, dst) & (uint64_t)mask);
    while (r->hash[s] >= 0 &&
           (r->routes[r->hash[s]].src != src || r->routes[r->hash[s]].dst != dst))
        s = (s + 1) & mask;
    return s;
}

static void grow_hash(cs_netfile_routes_t *r)
{
    int64_t cap = r->hash_cap ? 2 * r->hash_cap : 256;
    free(r->hash);
    r->hash = cs_malloc((size_t)cap * sizeof *r->hash);
    memset(r->hash, 0xff, (size_t)cap * sizeof *r->hash);
    r->hash_cap = cap;
    for (int32_t i = 0; i < r->nroutes; i++)
        r->hash[slot(r, r->routes[i].src, r->routes[i].dst)] = i;
}

static int32_t find(const cs_netfile_routes_t *r, int32_t src, int32_t dst)
{
    return r->hash_cap ? r->hash[slot(r, src, dst)] : -1;
}

int cs_netfile_routes_add(cs_netfile_routes_t *r, const int32_t *path, int32_t n,
                          int symmetrical)
{
    if (n < 2 || find(r, path[0], path[n - 1]) >= 0)
        return -1;
    if (2 * ((int64_t)r->nroutes + 1) >= r->hash_cap)
        grow_hash(r);
    while (r->nnodes + n > r->cap_nodes) {
        r->cap_nodes = r->cap_nodes ? 2 * r->cap_nodes : 256;
        r->nodes = cs_realloc(r->nodes, (size_t)r->cap_nodes * sizeof *r->nodes);
    }
    memcpy(r->nodes + r->nnodes, path, (size_t)n * sizeof *path);
    r->routes = cs_grow(r->routes, r->nroutes, &r->cap_routes, 64, sizeof *r->routes);
    r->routes[r->nroutes] = (route_t){path[0], path[n - 1], n, symmetrical, r->nnodes};
    r->hash[slot(r, path[0], path[n - 1])] = r->nroutes++;
    r->nnodes += n;
    return 0;
}

int cs_netfile_routes_path(const void *ctx, int32_t src, int32_t dst, uint64_t salt,
                           int32_t *path, uint8_t *vc, int max)
{
    (void)vc; /* a file's routes come without classes */
    const cs_netfile_routes_t *r = ctx;
    int32_t i = find(r, src, dst);
    int reverse = 0;
    (void)salt; /* one route per pair */
    if (i < 0) { /* the reverse of a symmetrical route */
        i = find(r, dst, src);
        if (i < 0 || !r->routes[i].symmetrical)
            return -1;
        reverse = 1;
    }
    const route_t *rt = &r->routes[i];
    if (rt->n > max)
        return -1;
    for (int32_t k = 0; k < rt->n; k++)
        path[k] = r->nodes[rt->first + (reverse ? rt->n - 1 - k : k)];
    return rt->n;
}

int cs_netfile_routes_has(const cs_netfile_routes_t *r, int32_t src, int32_t dst)
{
    int32_t i = find(r, dst, src);
    return find(r, src, dst) >= 0 || (i >= 0 && r->routes[i].symmetrical);
}

int cs_netfile_routes_complete(const cs_netfile_routes_t *r, const int32_t *members, int32_t n,
                               int32_t *a, int32_t *b)
{
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n; j++)
            if (i != j && !cs_netfile_routes_has(r, members[i], members[j])) {
                *a = members[i];
                *b = members[j];
                return 0;
            }
    return 1;
}
