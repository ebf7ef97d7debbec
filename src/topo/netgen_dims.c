/*
 * netgen_dims.c - the multi-dimensional machine of ASTRA-sim's users (issue
 * 18): one topology per dimension, each with its own bandwidth and
 * latency, as they describe a system of, say, 8 accelerators on a ring of
 * fast links in a node and 16 nodes under a switch
 * (dims=ring:8:300GB/s+switch:16:50GB/s).
 *
 * Hosts are the points of the mixed-radix lattice s0 x s1 x ...; host id
 * = c0 + s0 * (c1 + s1 * (c2 + ...)), dimension 0 the innermost (fastest),
 * as in ASTRA-sim.  Along dimension d, the hosts that differ only in c_d
 * form a *line* of s_d hosts joined as the dimension's kind says:
 *   ring    links between consecutive coordinates and s-1 back to 0
 *           (one link for s = 2, none for s = 1);
 *   full    a link between every two (fully connected);
 *   switch  one switch per line, a link from it to each host of the line.
 * Routing is dimension order, dimension 0 first: along a ring the shorter
 * way (at exactly half way, the increasing direction), along a full line
 * the direct link, through a switch its two links.  Groups: the hosts of
 * one dimension-0 line (a node).
 */
#include "topo/netgen_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DIM_RING = CS_NETGEN_DIM_RING, DIM_FULL = CS_NETGEN_DIM_FULL,
       DIM_SWITCH = CS_NETGEN_DIM_SWITCH };
static const char *const dim_kinds[] = {"ring", "full", "switch", NULL};

typedef struct dims {
    int n;
    int size[CS_NETGEN_MAX_DIMS], kind[CS_NETGEN_MAX_DIMS];
    int64_t stride[CS_NETGEN_MAX_DIMS]; /* host id step of coordinate d */
    int32_t sw_base[CS_NETGEN_MAX_DIMS]; /* first switch id of dimension d's lines */
    int64_t hosts;
} dims_t;

/* The switch of dimension d's line through host x: lines are numbered by
 * the host's id with coordinate d taken out. */
static int32_t line_switch(const dims_t *g, int d, int64_t x)
{
    int64_t lo = x % g->stride[d], hi = x / (g->stride[d] * g->size[d]);
    return g->sw_base[d] + (int32_t)(hi * g->stride[d] + lo);
}

static int route_dims(const void *ctx, int32_t src, int32_t dst, uint64_t salt, int32_t *path,
                      uint8_t *vc, int max)
{
    const dims_t *g = ctx;
    int64_t x = src;
    int len = 0;
    (void)salt;
    if (src >= g->hosts || dst >= g->hosts)
        return -1; /* ranks are hosts; switches only forward */
    path[len++] = src;
    for (int d = 0; d < g->n; d++) {
        int s = g->size[d];
        int c = (int)(x / g->stride[d] % s), t = (int)(dst / g->stride[d] % s);
        if (c == t)
            continue;
        if (g->kind[d] == DIM_SWITCH) {
            if (len + 2 > max)
                return -1;
            path[len++] = line_switch(g, d, x);
            x += (int64_t)(t - c) * g->stride[d];
            path[len++] = (int32_t)x;
        } else if (g->kind[d] == DIM_FULL) {
            if (len + 1 > max)
                return -1;
            x += (int64_t)(t - c) * g->stride[d];
            path[len++] = (int32_t)x;
        } else { /* ring: the shorter way, increasing at a tie */
            int fwd = (t - c + s) % s, step = fwd <= s - fwd ? 1 : -1, cls = 0;
            for (; c != t; c = (c + step + s) % s) {
                if (len + 1 > max)
                    return -1;
                int nc = (c + step + s) % s;
                x += (int64_t)(nc - c) * g->stride[d];
                vc[len - 1] = (uint8_t)cls;
                path[len++] = (int32_t)x;
                if (s > 2 && ((step > 0 && nc == 0) || (step < 0 && nc == s - 1)))
                    cls = 1; /* past the ring's wrap link: a dateline */
            }
        }
    }
    return len;
}

/* "ring:8:300GB/s:1us" items joined by '+'. */
static int parse_dims(const char *text, double bw, double lat, dims_t *g, double *dbw,
                      double *dlat, cs_error_t *err)
{
    const char *p = text;
    memset(g, 0, sizeof *g);
    while (*p) {
        char item[128], *f[4] = {NULL, NULL, NULL, NULL}, *save = NULL;
        size_t len = strcspn(p, "+");
        int nf = 0, d = g->n;
        int64_t s;
        if (d == CS_NETGEN_MAX_DIMS)
            return cs_error_set(err, CS_ERR_USAGE, "dims=%s: at most %d dimensions", text,
                                CS_NETGEN_MAX_DIMS);
        if (len == 0 || len >= sizeof item)
            return cs_error_set(err, CS_ERR_USAGE, "dims=%s: expected KIND:SIZE[:BW[:LAT]] "
                                "items joined by + (e.g. ring:8:300GB/s+switch:16:50GB/s)", text);
        memcpy(item, p, len);
        item[len] = 0;
        for (char *t = strtok_r(item, ":", &save); t && nf < 4; t = strtok_r(NULL, ":", &save))
            f[nf++] = t;
        if (nf < 2 || strtok_r(NULL, ":", &save))
            return cs_error_set(err, CS_ERR_USAGE, "dims=%s: \"%.*s\" is not KIND:SIZE[:BW[:LAT]]",
                                text, (int)len, p);
        g->kind[d] = -1;
        for (int k = 0; dim_kinds[k]; k++)
            if (!strcmp(f[0], dim_kinds[k]))
                g->kind[d] = k;
        if (g->kind[d] < 0)
            return cs_error_set(err, CS_ERR_USAGE, "dims=%s: unknown kind \"%s\"; valid: ring, "
                                "full, switch", text, f[0]);
        if (cs_units_parse_int(f[1], &s, err) != CS_OK || s < 1 || s > CS_NETGEN_MAX_NODES)
            return cs_error_set(err, CS_ERR_RANGE, "dims=%s: size \"%s\" is not in 1..%d", text,
                                f[1], CS_NETGEN_MAX_NODES);
        g->size[d] = (int)s;
        dbw[d] = bw;
        dlat[d] = lat;
        if (f[2] && cs_units_parse_bandwidth(f[2], 0, &dbw[d], err) != CS_OK) {
            cs_error_prefix(err, "dims=%s", text);
            return err->code;
        }
        if (f[3] && cs_units_parse_seconds(f[3], 0, &dlat[d], err) != CS_OK) {
            cs_error_prefix(err, "dims=%s", text);
            return err->code;
        }
        g->n++;
        p += len + (p[len] == '+');
    }
    if (!g->n)
        return cs_error_set(err, CS_ERR_USAGE, "dims: no dimension given");
    return CS_OK;
}

int cs_netgen_multidim_dims(cs_netdesc_t *d, int n, const cs_netgen_dim_t *dims,
                            const char *routing, cs_error_t *err)
{
    static const char *const routings[] = {"dor", "shortest", NULL};
    int ri, rc, size[CS_NETGEN_MAX_DIMS];
    dims_t g, *ctx;
    int64_t hosts, switches = 0;
    if ((rc = cs_netgen_routing("multidim", routing, routings, &ri, err)))
        return rc;
    if (n < 1 || n > CS_NETGEN_MAX_DIMS)
        return cs_error_set(err, CS_ERR_RANGE, "dims: %d dimensions, expected 1..%d", n,
                            CS_NETGEN_MAX_DIMS);
    memset(&g, 0, sizeof g);
    g.n = n;
    for (int k = 0; k < n; k++) {
        if (dims[k].size < 1 || dims[k].size > CS_NETGEN_MAX_NODES)
            return cs_error_set(err, CS_ERR_RANGE, "dims: size %d of dimension %d is not in "
                                "1..%d", dims[k].size, k, CS_NETGEN_MAX_NODES);
        g.size[k] = size[k] = dims[k].size;
        g.kind[k] = (int)dims[k].kind;
    }
    if ((rc = cs_netgen_product(size, n, "dims", &hosts, err)))
        return rc;
    for (int k = 0; k < g.n; k++)
        if (g.kind[k] == DIM_SWITCH && g.size[k] > 1)
            switches += hosts / g.size[k];
    if (hosts + switches > CS_NETGEN_MAX_NODES)
        return cs_error_set(err, CS_ERR_RANGE, "dims: %lld hosts and %lld switches, more than "
                            "%d nodes", (long long)hosts, (long long)switches,
                            CS_NETGEN_MAX_NODES);
    g.hosts = hosts;
    for (int k = 0, st = 1; k < g.n; st *= g.size[k], k++)
        g.stride[k] = st;
    for (int64_t x = 0; x < hosts; x++)
        cs_netdesc_add_node(d, CS_NETNODE_HOST, NULL, (int32_t)(x / g.size[0]));
    int32_t next = (int32_t)hosts;
    for (int k = 0; k < g.n; k++) {
        g.sw_base[k] = next;
        if (g.kind[k] != DIM_SWITCH || g.size[k] == 1)
            continue;
        for (int64_t l = 0; l < hosts / g.size[k]; l++, next++)
            cs_netdesc_add_node(d, CS_NETNODE_SWITCH, NULL, k == 0 ? (int32_t)l : -1);
    }
    for (int k = 0; k < g.n; k++) {
        int s = g.size[k];
        double bw = dims[k].bw, lat = dims[k].lat;
        if (s == 1)
            continue;
        for (int64_t x = 0; x < hosts && rc == CS_OK; x++) {
            int c = (int)(x / g.stride[k] % s);
            int64_t base = x - c * g.stride[k];
            if (g.kind[k] == DIM_SWITCH)
                rc = cs_netdesc_add_link(d, line_switch(&g, k, x), (int32_t)x, bw, lat, 1, 0,
                                         err);
            else if (g.kind[k] == DIM_FULL)
                for (int t = c + 1; t < s && rc == CS_OK; t++)
                    rc = cs_netdesc_add_link(d, (int32_t)x, (int32_t)(base + t * g.stride[k]),
                                             bw, lat, 1, 0, err);
            else if (c + 1 < s || s > 2) /* ring: c -> c+1, and s-1 -> 0 once */
                rc = cs_netdesc_add_link(d, (int32_t)x,
                                         (int32_t)(base + (c + 1) % s * g.stride[k]), bw, lat,
                                         1, 0, err);
        }
    }
    if (rc)
        return rc;
    if (ri == 0) {
        ctx = cs_malloc(sizeof *ctx);
        *ctx = g;
        cs_netdesc_set_route(d, "dimension order (dimension 0 first)", route_dims, ctx, free);
    }
    cs_netdesc_set_dims(d, g.n, g.size);
    return CS_OK;
}

int cs_netgen_multidim(cs_netdesc_t *d, const char *dims_text, double bw, double lat,
                       const char *routing, cs_error_t *err)
{
    static const char *const routings[] = {"dor", "shortest", NULL};
    double dbw[CS_NETGEN_MAX_DIMS], dlat[CS_NETGEN_MAX_DIMS];
    cs_netgen_dim_t dims[CS_NETGEN_MAX_DIMS];
    int ri, rc;
    dims_t g;
    int64_t hosts, switches = 0;
    /* the text's own checks first, with its messages (dims=TEXT: ...) */
    if ((rc = cs_netgen_routing("multidim", routing, routings, &ri, err)) ||
        (rc = parse_dims(dims_text, bw, lat, &g, dbw, dlat, err)) ||
        (rc = cs_netgen_product(g.size, g.n, "dims", &hosts, err)))
        return rc;
    for (int k = 0; k < g.n; k++)
        if (g.kind[k] == DIM_SWITCH && g.size[k] > 1)
            switches += hosts / g.size[k];
    if (hosts + switches > CS_NETGEN_MAX_NODES)
        return cs_error_set(err, CS_ERR_RANGE, "dims=%s: more than %d nodes", dims_text,
                            CS_NETGEN_MAX_NODES);
    for (int k = 0; k < g.n; k++)
        dims[k] = (cs_netgen_dim_t){(cs_netgen_dim_kind_t)g.kind[k], g.size[k], dbw[k], dlat[k]};
    return cs_netgen_multidim_dims(d, g.n, dims, routing, err);
}

static int build_multidim(cs_spec_t *spec, double bw, double lat, const char *routing,
                          cs_netdesc_t *d, cs_error_t *err)
{
    const char *v = cs_spec_get(spec, "dims");
    return cs_netgen_multidim(d, v ? v : "ring:8+switch:4", bw, lat, routing, err);
}

static const char *const multidim_keys[] = {"dims", NULL};

const cs_netgen_type_t cs_netgen_multidim_type = {
    .name = "multidim",
    .summary = "one topology per dimension (ring, full, switch), each its own bandwidth and "
               "latency, as ASTRA-sim describes systems",
    .usage = "dims=KIND:SIZE[:BW[:LAT]]+... (default ring:8+switch:4)",
    .keys = multidim_keys,
    .build = build_multidim,
};
