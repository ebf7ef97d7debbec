/*
 * netdesc.c - a network described by its parts (see netdesc.h).
 *
 * Links are kept in the order they were added (the machine gives link i
 * channels 2i and 2i+1); a hash of node pairs finds a link between two
 * nodes, for duplicates in files and for turning a generator's node paths
 * into channels.
 */
#include "topo/netdesc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct node {
    char *label;
    int32_t group;
    int16_t level;
    uint8_t kind;
} node_t;

struct cs_netdesc {
    char *source;
    node_t *nodes;
    int32_t nnodes, cap_nodes, nhosts;
    cs_netlink_t *links;
    int32_t nlinks, cap_links;
    int32_t *hash;          /* open addressing over node pairs: link index or -1 */
    int64_t hash_cap;       /* power of two, > 2 * nlinks */
    char *route_name;
    cs_netdesc_route_fn route;
    cs_netdesc_route_fn route_nonmin; /* UGAL's other candidate, or NULL */
    int64_t ugal_threshold;
    int ugal_view;              /* CS_NETDESC_UGAL_*, 0 without UGAL */
    void *route_ctx;
    void (*route_free)(void *);
    double bisection;
    int ndims, dims[CS_NETDESC_MAX_DIMS];
    char *shape;
    /* reducing switches (issue 36): per node, grown to red_n entries when
     * the first is declared, so that networks without one keep no table */
    double *red_rate;
    int64_t *red_buf;
    int32_t red_n;
};

cs_netdesc_t *cs_netdesc_new(const char *source)
{
    cs_netdesc_t *d = cs_calloc(1, sizeof *d);
    d->source = cs_strdup(source ? source : "network");
    return d;
}

void cs_netdesc_free(cs_netdesc_t *d)
{
    if (!d)
        return;
    for (int32_t i = 0; i < d->nnodes; i++)
        free(d->nodes[i].label);
    free(d->nodes);
    free(d->links);
    free(d->hash);
    free(d->route_name);
    if (d->route_free)
        d->route_free(d->route_ctx);
    free(d->shape);
    free(d->red_rate);
    free(d->red_buf);
    free(d->source);
    free(d);
}

int32_t cs_netdesc_add_node(cs_netdesc_t *d, cs_netnode_kind_t kind, const char *label,
                            int32_t group)
{
    if (d->nnodes == d->cap_nodes) {
        d->cap_nodes = d->cap_nodes ? 2 * d->cap_nodes : 64;
        d->nodes = cs_realloc(d->nodes, (size_t)d->cap_nodes * sizeof *d->nodes);
    }
    node_t *n = &d->nodes[d->nnodes];
    n->label = label ? cs_strdup(label) : NULL;
    n->group = group;
    n->level = -1;
    n->kind = (uint8_t)kind;
    d->nhosts += kind == CS_NETNODE_HOST;
    return d->nnodes++;
}

/* ---- the pair hash ------------------------------------------------------- */

static uint64_t pair_hash(int32_t u, int32_t v)
{
    uint64_t lo = (uint32_t)(u < v ? u : v), hi = (uint32_t)(u < v ? v : u);
    uint64_t x = lo << 32 | hi;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static int same_pair(const cs_netlink_t *l, int32_t u, int32_t v)
{
    return (l->u == u && l->v == v) || (l->u == v && l->v == u);
}

static int64_t hash_slot(const cs_netdesc_t *d, int32_t u, int32_t v)
{
    int64_t mask = d->hash_cap - 1, s = (int64_t)(pair_hash(u, v) & (uint64_t)mask);
    while (d->hash[s] >= 0 && !same_pair(&d->links[d->hash[s]], u, v))
        s = (s + 1) & mask;
    return s;
}

static void hash_grow(cs_netdesc_t *d)
{
    int64_t cap = d->hash_cap ? 2 * d->hash_cap : 256;
    free(d->hash);
    d->hash = cs_malloc((size_t)cap * sizeof *d->hash);
    memset(d->hash, 0xff, (size_t)cap * sizeof *d->hash);
    d->hash_cap = cap;
    for (int32_t i = 0; i < d->nlinks; i++)
        d->hash[hash_slot(d, d->links[i].u, d->links[i].v)] = i;
}

int32_t cs_netdesc_find_link(const cs_netdesc_t *d, int32_t u, int32_t v)
{
    if (!d->hash_cap)
        return -1;
    return d->hash[hash_slot(d, u, v)];
}

/* "SOURCE:LINE: " or "SOURCE: " before a message about a link. */
static int link_error(const cs_netdesc_t *d, int32_t line, cs_error_t *err, const char *what)
{
    if (line > 0)
        return cs_error_set(err, CS_ERR_PARSE, "%s:%d: %s", d->source, (int)line, what);
    return cs_error_set(err, CS_ERR_PARSE, "%s: %s", d->source, what);
}

static const char *name_of(const cs_netdesc_t *d, int32_t n, char *buf, size_t len)
{
    if (d->nodes[n].label)
        return d->nodes[n].label;
    snprintf(buf, len, "%d", (int)n);
    return buf;
}

static int add_link(cs_netdesc_t *d, int32_t u, int32_t v, double bw, double lat, int32_t mult,
                    int32_t shared, int32_t line, cs_error_t *err)
{
    char msg[CS_ERROR_MSG_MAX - 64], a[32], b[32];
    if (u < 0 || v < 0 || u >= d->nnodes || v >= d->nnodes) {
        snprintf(msg, sizeof msg, "link %d-%d names a node that does not exist (nodes 0..%d)",
                 (int)u, (int)v, (int)d->nnodes - 1);
        return link_error(d, line, err, msg);
    }
    if (u == v) {
        snprintf(msg, sizeof msg, "a link from %s to itself (self-loops are not links)",
                 name_of(d, u, a, sizeof a));
        return link_error(d, line, err, msg);
    }
    if (!(bw > 0) || !isfinite(bw)) {
        snprintf(msg, sizeof msg, "link %s-%s: the bandwidth must be positive, got %g bytes/s",
                 name_of(d, u, a, sizeof a), name_of(d, v, b, sizeof b), bw);
        return link_error(d, line, err, msg);
    }
    if (!(lat >= 0) || !isfinite(lat)) {
        snprintf(msg, sizeof msg, "link %s-%s: the latency must be >= 0, got %g s",
                 name_of(d, u, a, sizeof a), name_of(d, v, b, sizeof b), lat);
        return link_error(d, line, err, msg);
    }
    if (mult < 1) {
        snprintf(msg, sizeof msg, "link %s-%s: multiplicity must be >= 1, got %d",
                 name_of(d, u, a, sizeof a), name_of(d, v, b, sizeof b), (int)mult);
        return link_error(d, line, err, msg);
    }
    if (2 * ((int64_t)d->nlinks + 1) >= d->hash_cap)
        hash_grow(d);
    int64_t s = hash_slot(d, u, v);
    if (d->hash[s] >= 0) { /* parallel links: one channel of their summed bandwidth */
        cs_netlink_t *l = &d->links[d->hash[s]];
        if (l->bw != bw || l->lat != lat || l->shared != shared) {
            snprintf(msg, sizeof msg, "link %s-%s again, with another %s than %s%d (parallel "
                     "links must be alike)", name_of(d, u, a, sizeof a),
                     name_of(d, v, b, sizeof b),
                     l->bw != bw || l->lat != lat ? "bandwidth or latency"
                                                  : "sharing (half or full duplex)",
                     l->line ? "line " : "link ",
                     l->line ? (int)l->line : (int)d->hash[s]);
            return link_error(d, line, err, msg);
        }
        if (l->mult > INT32_MAX - mult) {
            snprintf(msg, sizeof msg, "link %s-%s: too many parallel links",
                     name_of(d, u, a, sizeof a), name_of(d, v, b, sizeof b));
            return link_error(d, line, err, msg);
        }
        l->mult += mult;
        return CS_OK;
    }
    if (d->nlinks == d->cap_links) {
        d->cap_links = d->cap_links ? 2 * d->cap_links : 64;
        d->links = cs_realloc(d->links, (size_t)d->cap_links * sizeof *d->links);
    }
    d->links[d->nlinks] = (cs_netlink_t){u, v, bw, lat, mult, line, shared};
    d->hash[s] = d->nlinks++;
    return CS_OK;
}

int cs_netdesc_add_link(cs_netdesc_t *d, int32_t u, int32_t v, double bw, double lat,
                        int32_t mult, int32_t line, cs_error_t *err)
{
    return add_link(d, u, v, bw, lat, mult, 0, line, err);
}

int cs_netdesc_add_shared_link(cs_netdesc_t *d, int32_t u, int32_t v, double bw, double lat,
                               int32_t mult, int32_t line, cs_error_t *err)
{
    return add_link(d, u, v, bw, lat, mult, 1, line, err);
}

void cs_netdesc_set_shared(cs_netdesc_t *d, int32_t link)
{
    CS_ASSERT(link >= 0 && link < d->nlinks);
    d->links[link].shared = 1;
}

void cs_netdesc_set_level(cs_netdesc_t *d, int32_t node, int level)
{
    if (node >= 0 && node < d->nnodes)
        d->nodes[node].level = (int16_t)(level < -1 ? -1 : level > INT16_MAX ? INT16_MAX : level);
}

int cs_netdesc_set_reduce(cs_netdesc_t *d, int32_t node, double rate, int64_t buf,
                          cs_error_t *err)
{
    if (node < 0 || node >= d->nnodes)
        return cs_error_set(err, CS_ERR_INTERNAL, "%s: no node %d to make reducing", d->source,
                            (int)node);
    if (d->nodes[node].kind != CS_NETNODE_SWITCH)
        return cs_error_set(err, CS_ERR_PARSE, "%s: node %d is a host; only a switch reduces "
                            "in the network", d->source, (int)node);
    if (!(rate >= 0) || !isfinite(rate))
        return cs_error_set(err, CS_ERR_PARSE, "%s: switch %d: reduction rate %g is not a "
                            "bandwidth >= 0 (0: not reducing)", d->source, (int)node, rate);
    if (rate > 0 && buf < 1)
        return cs_error_set(err, CS_ERR_PARSE, "%s: switch %d: a reducing switch needs a "
                            "buffer of at least 1 byte, got %lld", d->source, (int)node,
                            (long long)buf);
    if (d->red_n < d->nnodes) {
        d->red_rate = cs_realloc(d->red_rate, (size_t)d->nnodes * sizeof *d->red_rate);
        d->red_buf = cs_realloc(d->red_buf, (size_t)d->nnodes * sizeof *d->red_buf);
        for (int32_t i = d->red_n; i < d->nnodes; i++) {
            d->red_rate[i] = 0;
            d->red_buf[i] = 0;
        }
        d->red_n = d->nnodes;
    }
    d->red_rate[node] = rate;
    d->red_buf[node] = rate > 0 ? buf : 0;
    return CS_OK;
}

double cs_netdesc_reduce(const cs_netdesc_t *d, int32_t node, int64_t *buf)
{
    int on = node >= 0 && node < d->red_n && d->red_rate[node] > 0;
    if (buf)
        *buf = on ? d->red_buf[node] : 0;
    return on ? d->red_rate[node] : 0;
}

void cs_netdesc_set_route(cs_netdesc_t *d, const char *name, cs_netdesc_route_fn fn, void *ctx,
                          void (*free_ctx)(void *))
{
    if (d->route_free)
        d->route_free(d->route_ctx);
    free(d->route_name);
    d->route_name = name ? cs_strdup(name) : NULL;
    d->route = fn;
    d->route_nonmin = NULL;
    d->route_ctx = ctx;
    d->route_free = free_ctx;
}

void cs_netdesc_set_route_ugal(cs_netdesc_t *d, const char *name, cs_netdesc_route_fn min_fn,
                               cs_netdesc_route_fn nonmin_fn, int view, int64_t threshold,
                               void *ctx, void (*free_ctx)(void *))
{
    cs_netdesc_set_route(d, name, min_fn, ctx, free_ctx);
    d->route_nonmin = nonmin_fn;
    d->ugal_view = view;
    d->ugal_threshold = threshold;
}

int cs_netdesc_ugal(const cs_netdesc_t *d, int64_t *threshold)
{
    if (d->route && d->route_nonmin && threshold)
        *threshold = d->ugal_threshold;
    return d->route && d->route_nonmin ? d->ugal_view : 0;
}

int cs_netdesc_route_nonmin(const cs_netdesc_t *d, int32_t src, int32_t dst, uint64_t salt,
                            int32_t *path, uint8_t *vc, int max)
{
    return d->route && d->route_nonmin
               ? d->route_nonmin(d->route_ctx, src, dst, salt, path, vc, max)
               : -1;
}

void cs_netdesc_set_bisection(cs_netdesc_t *d, double bytes_per_s) { d->bisection = bytes_per_s; }

void cs_netdesc_set_shape(cs_netdesc_t *d, const char *shape)
{
    free(d->shape);
    d->shape = shape ? cs_strdup(shape) : NULL;
}

const char *cs_netdesc_shape(const cs_netdesc_t *d) { return d->shape; }

void cs_netdesc_set_dims(cs_netdesc_t *d, int n, const int *sizes)
{
    d->ndims = n < 0 ? 0 : n > CS_NETDESC_MAX_DIMS ? CS_NETDESC_MAX_DIMS : n;
    for (int i = 0; i < d->ndims; i++)
        d->dims[i] = sizes[i];
}

int cs_netdesc_dims(const cs_netdesc_t *d, int *sizes)
{
    for (int i = 0; i < d->ndims; i++)
        sizes[i] = d->dims[i];
    return d->ndims;
}

const char *cs_netdesc_source(const cs_netdesc_t *d) { return d->source; }
int32_t cs_netdesc_nodes(const cs_netdesc_t *d) { return d->nnodes; }
int32_t cs_netdesc_hosts(const cs_netdesc_t *d) { return d->nhosts; }
cs_netnode_kind_t cs_netdesc_kind(const cs_netdesc_t *d, int32_t n)
{
    return (cs_netnode_kind_t)d->nodes[n].kind;
}
const char *cs_netdesc_label(const cs_netdesc_t *d, int32_t n) { return d->nodes[n].label; }
int32_t cs_netdesc_group(const cs_netdesc_t *d, int32_t n) { return d->nodes[n].group; }
int cs_netdesc_level(const cs_netdesc_t *d, int32_t n) { return d->nodes[n].level; }
int32_t cs_netdesc_nlinks(const cs_netdesc_t *d) { return d->nlinks; }
const cs_netlink_t *cs_netdesc_link(const cs_netdesc_t *d, int32_t i) { return &d->links[i]; }
double cs_netdesc_bisection(const cs_netdesc_t *d) { return d->bisection; }
const char *cs_netdesc_route_name(const cs_netdesc_t *d) { return d->route ? d->route_name : NULL; }

int cs_netdesc_route(const cs_netdesc_t *d, int32_t src, int32_t dst, uint64_t salt,
                     int32_t *path, uint8_t *vc, int max)
{
    return d->route ? d->route(d->route_ctx, src, dst, salt, path, vc, max) : -1;
}

/* ---- checks --------------------------------------------------------------- */

static int32_t uf_find(int32_t *up, int32_t x)
{
    while (up[x] != x) {
        up[x] = up[up[x]];
        x = up[x];
    }
    return x;
}

int cs_netdesc_check(const cs_netdesc_t *d, cs_error_t *err)
{
    int32_t first = -1, *up;
    char a[32], b[32];
    int rc = CS_OK;
    if (d->nhosts == 0)
        return cs_error_set(err, CS_ERR_PARSE, "%s: the network has no host (ranks run on "
                            "hosts; switches only forward)", d->source);
    up = cs_malloc((size_t)d->nnodes * sizeof *up);
    for (int32_t i = 0; i < d->nnodes; i++)
        up[i] = i;
    for (int32_t i = 0; i < d->nlinks; i++) {
        int32_t x = uf_find(up, d->links[i].u), y = uf_find(up, d->links[i].v);
        if (x != y)
            up[x < y ? y : x] = x < y ? x : y;
    }
    for (int32_t i = 0; i < d->nnodes && rc == CS_OK; i++) {
        if (d->nodes[i].kind != CS_NETNODE_HOST)
            continue;
        if (first < 0)
            first = i;
        else if (uf_find(up, i) != uf_find(up, first))
            rc = cs_error_set(err, CS_ERR_PARSE, "%s: host %s cannot reach host %s (the "
                              "network is not connected)", d->source,
                              name_of(d, i, a, sizeof a), name_of(d, first, b, sizeof b));
    }
    free(up);
    return rc;
}
