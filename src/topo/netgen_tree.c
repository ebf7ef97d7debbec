/*
 * netgen_tree.c - the indirect network generators of netgen.h: fat-trees
 * (k-ary n-trees and SimGrid's general levels/down/up/parallel form), the
 * two-tier ML cluster (nodes of accelerators on a fast local fabric, a
 * leaf/spine fat-tree between them) and the star (SimGrid's FLAT cluster,
 * with or without a backbone).
 *
 * The fat-tree is the extended generalized fat-tree XGFT(h; m; w) of
 * Ohring et al. ("On generalized fat trees", IPPS 1995) that SimGrid's
 * FAT_TREE cluster builds (m = down, w = up, h = levels); the d-mod-k
 * up/down routing is Zahavi's ("D-Mod-K routing providing non-blocking
 * traffic for shift permutations on real life fat trees", 2010).
 *
 * XGFT numbering used throughout.  A node of level l (0 = hosts) is a pair
 * (x, y): x = its subtree, the mixed-radix number of the digits
 * x_l..x_{h-1} (digit i of radix down[i], the lowest level's digit fastest),
 * y = which of the parallel copies, the mixed-radix number of y_0..y_{l-1}
 * (digit i of radix up[i], weight Y[i] = up[0]*..*up[i-1]).  Its parents are
 * (x / down[l], y + Y[l] * j) for j in 0..up[l]-1, so a node of level l has
 * up[l] parents and one of level l+1 has down[l] children.  Node id =
 * first[l] + x * Y[l] + y: hosts are 0..H-1 with the hosts of one leaf
 * consecutive, then the switches level by level, one subtree's copies
 * together.
 */
#include "topo/netgen_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Levels a fat-tree may have: SimGrid's examples use 2 or 3; beyond a
 * dozen the tree is a chain of switches that models nothing real. */
#define FT_MAX_LEVELS 16
/* Links a generator may add: each is 32 bytes plus its hash slots, so this
 * bounds a generated network near 1 GiB, like the node limit does. */

/* ---- checks every generator shares --------------------------------------- */

/* Generators number hosts from 0 (netgen.h), so they build into an empty
 * description. */
/* Node and link totals against the limits, before allocating. */
static int check_totals(int64_t nodes, int64_t links, const char *key, cs_error_t *err)
{
    if (nodes > CS_NETGEN_MAX_NODES)
        return cs_error_set(err, CS_ERR_RANGE, "%s: %lld nodes, more than %d", key,
                            (long long)nodes, CS_NETGEN_MAX_NODES);
    return cs_netgen_check_links(links, key, err);
}

/* A size argument in 1..CS_NETGEN_MAX_NODES. */
static int check_size(const char *key, int64_t v, cs_error_t *err)
{
    if (v < 1 || v > CS_NETGEN_MAX_NODES)
        return cs_error_set(err, CS_ERR_RANGE, "%s=%lld: expected a size in 1..%d", key,
                            (long long)v, CS_NETGEN_MAX_NODES);
    return CS_OK;
}

/* The routes below are between two distinct hosts (switches do not send). */
static int host_pair(int32_t src, int32_t dst, int64_t hosts)
{
    return src >= 0 && dst >= 0 && src < hosts && dst < hosts && src != dst;
}

/* A size key of a spec, default dflt. */
static int spec_size(cs_spec_t *spec, const char *key, int dflt, int *out, cs_error_t *err)
{
    int64_t v;
    int rc = cs_spec_get_int(spec, key, dflt, 1, CS_NETGEN_MAX_NODES, &v, err);
    *out = (int)v;
    return rc;
}

/* ---- fat-tree -------------------------------------------------------------- */

typedef struct fattree {
    int levels;
    int down[FT_MAX_LEVELS], up[FT_MAX_LEVELS];
    int64_t D[FT_MAX_LEVELS + 1];     /* down[0]*..*down[l-1]: hosts under a level-l subtree */
    int64_t Y[FT_MAX_LEVELS + 1];     /* up[0]*..*up[l-1]: copies of a level-l subtree's node */
    int64_t count[FT_MAX_LEVELS + 1]; /* nodes of level l: (H / D[l]) * Y[l] */
    int64_t first[FT_MAX_LEVELS + 1]; /* id of level l's first node */
    int ecmp;                         /* up ports from the salt, not the destination */
} fattree_t;

static int32_t ft_id(const fattree_t *t, int l, int64_t x, int64_t y)
{
    return (int32_t)(t->first[l] + x * t->Y[l] + y);
}

/* Validates the parameters and fills t's sizes; nothing is allocated. */
static int ft_shape(fattree_t *t, int levels, const int *down, const int *up, const int *par,
                    cs_error_t *err)
{
    int64_t nodes = 0, links = 0;
    if (levels < 1 || levels > FT_MAX_LEVELS)
        return cs_error_set(err, CS_ERR_RANGE, "levels=%d: expected 1..%d", levels,
                            FT_MAX_LEVELS);
    if (!down || !up)
        return cs_error_set(err, CS_ERR_USAGE, "fattree: %s is missing", down ? "up" : "down");
    t->levels = levels;
    for (int l = 0; l < levels; l++) {
        int rc;
        if ((rc = check_size("down", down[l], err)) || (rc = check_size("up", up[l], err)) ||
            (par && (rc = check_size("par", par[l], err))))
            return rc;
        t->down[l] = down[l];
        t->up[l] = up[l];
    }
    /* D and Y each stay <= CS_NETGEN_MAX_NODES (checked as they grow), so
     * their products below fit in 64 bits. */
    t->D[0] = t->Y[0] = 1;
    for (int l = 0; l < levels; l++) {
        t->D[l + 1] = t->D[l] * down[l];
        t->Y[l + 1] = t->Y[l] * up[l];
        if (t->D[l + 1] > CS_NETGEN_MAX_NODES)
            return cs_error_set(err, CS_ERR_RANGE, "down: more than %d hosts",
                                CS_NETGEN_MAX_NODES);
        if (t->Y[l + 1] > CS_NETGEN_MAX_NODES)
            return cs_error_set(err, CS_ERR_RANGE, "up: more than %d switches in a level",
                                CS_NETGEN_MAX_NODES);
    }
    for (int l = 0; l <= levels; l++) {
        t->count[l] = t->D[levels] / t->D[l] * t->Y[l];
        t->first[l] = nodes;
        nodes += t->count[l];
        if (nodes > CS_NETGEN_MAX_NODES) /* before the product below can overflow */
            return check_totals(nodes, links, "levels, down, up", err);
        if (l < levels)
            links += t->count[l] * up[l];
        if (links > CS_NETGEN_MAX_LINKS)
            return check_totals(nodes, links, "levels, down, up", err);
    }
    return CS_OK;
}

/* The up port of a level-l node toward `key`, the rule both routings share
 * (Zahavi's d-mod-k): digit l of key in the mixed radix of the up counts,
 * floor(key / (up[0]*..*up[l-1])) mod up[l].  With key = the destination
 * host, every route to one destination climbs to the same copy (y) at
 * every level: the routes to a host form one tree that converges on it,
 * and hosts under one switch leave it by different ports.  With key = the
 * salt (ECMP), salts 0..Y[h]-1 reach every top switch once. */
static int64_t ft_port(const fattree_t *t, int l, uint64_t key)
{
    return (int64_t)((key / (uint64_t)t->Y[l]) % (uint64_t)t->up[l]);
}

/* Up to the lowest common ancestor, then down.  The way down is forced:
 * from the ancestor (x, y), the node of level l toward host dst is
 * (dst / D[l], y mod Y[l]). */
static int ft_route(const void *ctx, int32_t src, int32_t dst, uint64_t salt, int32_t *path,
                    uint8_t *vc, int max)
{
    (void)vc; /* trees need one class: up/down routes never cycle */
    const fattree_t *t = ctx;
    int64_t hosts = t->count[0], x = src, y = 0;
    int lca = 0, n = 0;
    if (!host_pair(src, dst, hosts))
        return -1;
    while (src / t->D[lca] != dst / t->D[lca])
        lca++;
    if (2 * lca + 1 > max)
        return -1;
    path[n++] = src;
    for (int l = 0; l < lca; l++) {
        y += t->Y[l] * ft_port(t, l, t->ecmp ? salt : (uint64_t)dst);
        x /= t->down[l];
        path[n++] = ft_id(t, l + 1, x, y);
    }
    for (int l = lca - 1; l >= 1; l--)
        path[n++] = ft_id(t, l, dst / t->D[l], y % t->Y[l]);
    path[n++] = dst;
    return n;
}

/* A host's group is its leaf subtree (x of its leaves; the leaf switch
 * itself when up[0] = 1); a switch has that group when all hosts below
 * it are in one, i.e. when down[1..l-1] are all 1. */
static int32_t ft_group(const fattree_t *t, int l, int64_t x)
{
    if (l == 0)
        return (int32_t)(x / t->down[0]);
    return t->D[l] / t->down[0] == 1 ? (int32_t)x : -1;
}

int cs_netgen_fattree(cs_netdesc_t *d, int levels, const int *down, const int *up,
                      const int *par, double bw, double lat, const char *routing,
                      cs_error_t *err)
{
    static const char *const valid[] = {"updown", "ecmp", "shortest", NULL};
    fattree_t shape, *t;
    int which, rc;
    double bisection = INFINITY;
    if ((rc = cs_netgen_check_empty(d, "fattree", err)) ||
        (rc = cs_netgen_routing("fattree", routing, valid, &which, err)) ||
        (rc = cs_netgen_check_timing("bw", bw, "lat", lat, err)) ||
        (rc = ft_shape(&shape, levels, down, up, par, err)))
        return rc;
    for (int l = 0; l <= levels; l++)
        for (int64_t i = 0; i < shape.count[l]; i++) {
            int32_t id = cs_netdesc_add_node(d, l ? CS_NETNODE_SWITCH : CS_NETNODE_HOST, NULL,
                                             ft_group(&shape, l, i / shape.Y[l]));
            cs_netdesc_set_level(d, id, l);
        }
    for (int l = 0; l < levels; l++) {
        int p = par ? par[l] : 1;
        for (int64_t i = 0; i < shape.count[l]; i++) {
            int64_t x = i / shape.Y[l], y = i % shape.Y[l];
            for (int j = 0; j < up[l]; j++)
                if ((rc = cs_netdesc_add_link(d, ft_id(&shape, l, x, y),
                                              ft_id(&shape, l + 1, x / down[l],
                                                    y + shape.Y[l] * j),
                                              bw, lat, p, 0, err)))
                    return rc;
        }
        /* Bisection: a balanced split along level-(l+1) subtrees cuts the
         * up-links of half the level-l nodes, count[l] * up[l] * par[l] * bw
         * / 2; the bisection is the least of these over the levels.  A
         * k-ary n-tree has hosts * bw / 2 at every level (full bisection);
         * down=4+4,up=1+2 has 16/2 at level 0 but 4*2/2 at level 1: 4 bw. */
        bisection = fmin(bisection, (double)shape.count[l] * up[l] * p * bw / 2);
    }
    cs_netdesc_set_bisection(d, bisection);
    if (which == 2)
        return CS_OK;
    shape.ecmp = which == 1;
    t = cs_malloc(sizeof *t);
    *t = shape;
    cs_netdesc_set_route(d, shape.ecmp ? "ECMP (up ports from the message hash)"
                                       : "up/down (d-mod-k)", ft_route, t, free);
    return CS_OK;
}

/* k=K,n=N (a k-ary n-tree) or levels=L,down=..,up=..,par=.. */
static int ft_build(cs_spec_t *spec, double bw, double lat, const char *routing,
                    cs_netdesc_t *d, cs_error_t *err)
{
    int down[FT_MAX_LEVELS], up[FT_MAX_LEVELS], par[FT_MAX_LEVELS], nd, nu, np, k, n, rc;
    int64_t levels;
    int general = cs_spec_get(spec, "levels") || cs_spec_get(spec, "down") ||
                  cs_spec_get(spec, "up") || cs_spec_get(spec, "par");
    if (!general) {
        if ((rc = spec_size(spec, "k", 4, &k, err)) || (rc = spec_size(spec, "n", 2, &n, err)))
            return rc;
        if (n > FT_MAX_LEVELS)
            return cs_error_set(err, CS_ERR_RANGE, "n=%d: expected 1..%d levels", n,
                                FT_MAX_LEVELS);
        /* SimGrid's form of a k-ary n-tree: down=k..k, up=1,k..k, par=1..1 */
        for (int l = 0; l < n; l++) {
            down[l] = k;
            up[l] = l ? k : 1;
        }
        int64_t hosts;
        if ((rc = cs_netgen_product(down, n, "k, n (k^n hosts)", &hosts, err)))
            return rc;
        if (hosts + (int64_t)n * (hosts / k) > CS_NETGEN_MAX_NODES)
            return cs_error_set(err, CS_ERR_RANGE, "k=%d, n=%d: %lld nodes, more than %d", k, n,
                                (long long)(hosts + (int64_t)n * (hosts / k)),
                                CS_NETGEN_MAX_NODES);
        return cs_netgen_fattree(d, n, down, up, NULL, bw, lat, routing, err);
    }
    if (cs_spec_get(spec, "k") || cs_spec_get(spec, "n"))
        return cs_error_set(err, CS_ERR_USAGE, "fattree: give either k=,n= (a k-ary n-tree) or "
                            "levels=,down=,up=[,par=] (the general form), not both");
    if (!cs_spec_get(spec, "levels") || !cs_spec_get(spec, "down") || !cs_spec_get(spec, "up"))
        return cs_error_set(err, CS_ERR_USAGE, "fattree: the general form needs levels=, down= "
                            "and up= (e.g. levels=2,down=4+4,up=1+2)");
    if ((rc = cs_spec_get_int(spec, "levels", 2, 1, FT_MAX_LEVELS, &levels, err)) ||
        (rc = cs_netgen_spec_list(spec, "down", FT_MAX_LEVELS, down, &nd, err)) ||
        (rc = cs_netgen_spec_list(spec, "up", FT_MAX_LEVELS, up, &nu, err)) ||
        (rc = cs_netgen_spec_list(spec, "par", FT_MAX_LEVELS, par, &np, err)))
        return rc;
    const char *key = nd != levels ? "down" : nu != levels ? "up" : np && np != levels ? "par"
                                                                                     : NULL;
    if (key)
        return cs_error_set(err, CS_ERR_USAGE, "%s=%s: %d items, but levels=%d needs one per "
                            "level", key, cs_spec_get(spec, key),
                            key[0] == 'd' ? nd : key[0] == 'u' ? nu : np, (int)levels);
    return cs_netgen_fattree(d, (int)levels, down, up, np ? par : NULL, bw, lat, routing, err);
}

static const char *const ft_keys[] = {"k", "n", "levels", "down", "up", "par", NULL};
const cs_netgen_type_t cs_netgen_fattree_type = {
    "fattree", "fat-tree: a k-ary n-tree or SimGrid's levels/down/up/parallel form",
    "k=4,n=2 | levels=L,down=a+b,up=c+d[,par=e+f]; routing=updown|ecmp|shortest", ft_keys,
    ft_build};

/* ---- two-tier cluster ------------------------------------------------------ */

typedef struct twotier {
    int64_t hosts, gpus, per_leaf; /* per_leaf hosts per leaf = spines */
    int64_t first_leaf, first_spine;
    int64_t first_nvs;             /* the nodes' NVSwitches, or -1: pairwise links */
} twotier_t;

/* Two accelerators of one node: the fast link.  Of one leaf: through it.
 * Else up to spine dst mod per_leaf (d-mod-k: all routes to a host meet on
 * one spine, and the hosts of one leaf are reached through different
 * spines), then down. */
static int tt_route(const void *ctx, int32_t src, int32_t dst, uint64_t salt, int32_t *path,
                    uint8_t *vc, int max)
{
    (void)vc; /* trees need one class: up/down routes never cycle */
    const twotier_t *t = ctx;
    int64_t ls = src / t->per_leaf, ld = dst / t->per_leaf;
    int n = 0;
    (void)salt;
    if (!host_pair(src, dst, t->hosts))
        return -1;
    if (max < (src / t->gpus == dst / t->gpus ? 2 : ls == ld ? 3 : 5))
        return -1;
    path[n++] = src;
    if (src / t->gpus == dst / t->gpus && t->first_nvs >= 0) {
        if (max < 3)
            return -1;
        path[n++] = (int32_t)(t->first_nvs + src / t->gpus);
    } else if (src / t->gpus != dst / t->gpus) {
        path[n++] = (int32_t)(t->first_leaf + ls);
        if (ls != ld) {
            path[n++] = (int32_t)(t->first_spine + dst % t->per_leaf);
            path[n++] = (int32_t)(t->first_leaf + ld);
        }
    }
    path[n++] = dst;
    return n;
}

int cs_netgen_twotier(cs_netdesc_t *d, int nodes, int gpus, double nvbw, double nvlat, double bw,
                      double lat, int radix, const cs_netgen_nvswitch_t *nvs,
                      const char *routing, cs_error_t *err)
{
    static const char *const valid[] = {"updown", "shortest", NULL};
    twotier_t t;
    int which, rc;
    if ((rc = cs_netgen_check_empty(d, "twotier", err)) ||
        (rc = cs_netgen_routing("twotier", routing, valid, &which, err)) ||
        (rc = check_size("nodes", nodes, err)) || (rc = check_size("gpus", gpus, err)) ||
        (rc = check_size("radix", radix, err)) ||
        (rc = cs_netgen_check_timing("nvbw", nvbw, "nvlat", nvlat, err)) ||
        (rc = cs_netgen_check_timing("bw", bw, "lat", lat, err)))
        return rc;
    /* A leaf takes whole nodes, so that the fast link is always the
     * shortest way between two accelerators of a node and the up/down
     * route is minimal. */
    if (radix < gpus)
        return cs_error_set(err, CS_ERR_RANGE, "radix=%d: a leaf switch must take at least one "
                            "whole node of gpus=%d", radix, gpus);
    if (nvs && (!(nvs->rate >= 0) || !isfinite(nvs->rate) || nvs->buf < 1))
        return cs_error_set(err, CS_ERR_RANGE, "nvls_rate, nvls_buf: an NVSwitch reduces at a "
                            "finite rate >= 0 with a buffer of at least 1 byte");
    int64_t per_node = radix / gpus, hosts = (int64_t)nodes * gpus;
    if ((rc = check_totals(hosts, 0, "nodes", err))) /* before hosts * gpus below */
        return rc;
    int64_t leaves = (nodes + per_node - 1) / per_node;
    t.gpus = gpus;
    t.hosts = hosts;
    t.per_leaf = per_node * gpus;
    /* Full bisection: every leaf has one link to each of per_leaf spines,
     * as many up-links as it has down-ports in use at most.  One leaf
     * needs no spine. */
    int64_t spines = leaves > 1 ? t.per_leaf : 0;
    if ((rc = check_totals(hosts + leaves + spines + (nvs ? nodes : 0),
                           (nvs ? hosts : hosts * (gpus - 1) / 2) + hosts + leaves * spines,
                           "nodes", err)))
        return rc;
    t.first_leaf = hosts;
    t.first_spine = hosts + leaves;
    t.first_nvs = nvs ? hosts + leaves + spines : -1;
    for (int64_t h = 0; h < hosts; h++)
        cs_netdesc_set_level(d, cs_netdesc_add_node(d, CS_NETNODE_HOST, NULL,
                                                    (int32_t)(h / gpus)), 0);
    for (int64_t l = 0; l < leaves; l++)
        cs_netdesc_set_level(d, cs_netdesc_add_node(d, CS_NETNODE_SWITCH, NULL,
                                                    per_node == 1 ? (int32_t)l : -1), 1);
    for (int64_t s = 0; s < spines; s++)
        cs_netdesc_set_level(d, cs_netdesc_add_node(d, CS_NETNODE_SWITCH, NULL, -1), 2);
    /* An NVSwitch per node (issue 36): the node's accelerators on one
     * switch that reduces and multicasts (NVLink SHARP), instead of a
     * link between every two of them. */
    for (int64_t g = 0; nvs && g < nodes; g++) {
        int32_t sw = cs_netdesc_add_node(d, CS_NETNODE_SWITCH, NULL, (int32_t)g);
        cs_netdesc_set_level(d, sw, 1);
        if ((rc = cs_netdesc_set_reduce(d, sw, nvs->rate, nvs->buf, err)))
            return rc;
    }
    for (int64_t h = 0; h < hosts; h++) {
        if (nvs && (rc = cs_netdesc_add_link(d, (int32_t)h, (int32_t)(t.first_nvs + h / gpus),
                                             nvbw, nvlat, 1, 0, err)))
            return rc;
        for (int64_t p = h + 1; !nvs && p < (h / gpus + 1) * gpus; p++)
            if ((rc = cs_netdesc_add_link(d, (int32_t)h, (int32_t)p, nvbw, nvlat, 1, 0, err)))
                return rc;
        if ((rc = cs_netdesc_add_link(d, (int32_t)h, (int32_t)(t.first_leaf + h / t.per_leaf),
                                      bw, lat, 1, 0, err)))
            return rc;
    }
    for (int64_t l = 0; l < leaves; l++)
        for (int64_t s = 0; s < spines; s++)
            if ((rc = cs_netdesc_add_link(d, (int32_t)(t.first_leaf + l),
                                          (int32_t)(t.first_spine + s), bw, lat, 1, 0, err)))
                return rc;
    /* Bisection: with an even number of nodes, splitting them in halves
     * cuts the NIC or leaf-spine links of half the hosts, hosts / 2 * bw
     * (full bisection), and any other balanced split cuts at least as much
     * (a node split in two cuts fast links besides).  With an odd number it
     * depends on nvbw: left unknown, for the machine to compute. */
    if (nodes % 2 == 0)
        cs_netdesc_set_bisection(d, (double)(hosts / 2) * bw);
    if (which == 0) {
        twotier_t *ctx = cs_malloc(sizeof *ctx);
        *ctx = t;
        cs_netdesc_set_route(d, "up/down (d-mod-k), fast links inside a node", tt_route, ctx,
                             free);
    }
    return CS_OK;
}

static int tt_build(cs_spec_t *spec, double bw, double lat, const char *routing,
                    cs_netdesc_t *d, cs_error_t *err)
{
    int nodes, gpus, radix, rc;
    int64_t on, buf;
    double nvbw, nvlat, rate;
    cs_netgen_nvswitch_t nvs;
    if ((rc = spec_size(spec, "nodes", 4, &nodes, err)) ||
        (rc = spec_size(spec, "gpus", 8, &gpus, err)) ||
        (rc = spec_size(spec, "radix", 16, &radix, err)) ||
        (rc = cs_netgen_spec_bw(spec, "nvbw", 300e9, &nvbw, err)) ||
        (rc = cs_spec_get_seconds(spec, "nvlat", 0, &nvlat, err)) ||
        (rc = cs_spec_get_int(spec, "nvswitch", 0, 0, 1, &on, err)) ||
        (rc = cs_netgen_spec_bw(spec, "nvls_rate", nvbw * gpus, &rate, err)) ||
        (rc = cs_spec_get_bytes(spec, "nvls_buf", 4 << 20, &buf, err)))
        return rc;
    if (!on && (cs_spec_get(spec, "nvls_rate") || cs_spec_get(spec, "nvls_buf"))) {
        const char *k = cs_spec_get(spec, "nvls_rate") ? "nvls_rate" : "nvls_buf";
        return cs_error_set(err, CS_ERR_USAGE, "%s=%s: there is no NVSwitch (give nvswitch=1)",
                            k, cs_spec_get(spec, k));
    }
    if (buf < 1)
        return cs_error_set(err, CS_ERR_RANGE, "nvls_buf=%lld: an NVSwitch holds at least 1 "
                            "byte", (long long)buf);
    nvs.rate = rate;
    nvs.buf = buf;
    return cs_netgen_twotier(d, nodes, gpus, nvbw, nvlat, bw, lat, radix, on ? &nvs : NULL,
                             routing, err);
}

static const char *const tt_keys[] = {"nodes",    "gpus",      "nvbw",     "nvlat", "radix",
                                      "nvswitch", "nvls_rate", "nvls_buf", NULL};
const cs_netgen_type_t cs_netgen_twotier_type = {
    "twotier", "ML cluster: nodes of accelerators on fast links, a leaf/spine fat-tree between",
    "nodes=4,gpus=8,nvbw=300GB/s,nvlat=0,radix=16[,nvswitch=1,nvls_rate=GPUSxNVBW,nvls_buf=4MiB] "
    "(bw, lat: the NIC links; nvswitch: a reducing NVSwitch per node); "
    "routing=updown|shortest",
    tt_keys, tt_build};

/* ---- star -------------------------------------------------------------------- */

/* SimGrid's cluster backbone is one resource that every message crosses
 * once, whatever its direction.  Here it is the link between the hosts'
 * switch (id hosts) and a second switch (hosts + 1), and every route goes
 * src, switch, second switch, switch, dst: all traffic loads both of its
 * channels alike, so together they act as one resource of the backbone's
 * bandwidth.  The link's latency is half of backlat, so that a message
 * pays backlat once, as in SimGrid. */
static int star_route(const void *ctx, int32_t src, int32_t dst, uint64_t salt, int32_t *path,
                    uint8_t *vc, int max)
{
    (void)vc; /* trees need one class: up/down routes never cycle */
    int32_t hosts = *(const int32_t *)ctx;
    (void)salt;
    if (!host_pair(src, dst, hosts) || max < 5)
        return -1;
    path[0] = src;
    path[1] = hosts;
    path[2] = hosts + 1;
    path[3] = hosts;
    path[4] = dst;
    return 5;
}

int cs_netgen_star(cs_netdesc_t *d, int hosts, double bw, double lat, double backbone_bw,
                   double backbone_lat, cs_error_t *err)
{
    int rc;
    int32_t sw;
    if ((rc = cs_netgen_check_empty(d, "star", err)) || (rc = check_size("hosts", hosts, err)) ||
        (rc = check_totals((int64_t)hosts + 2, hosts + 1, "hosts", err)) ||
        (rc = cs_netgen_check_timing("bw", bw, "lat", lat, err)) ||
        (backbone_bw != 0 && (rc = cs_netgen_check_timing("backbone", backbone_bw, "backlat",
                                               backbone_lat, err))))
        return rc;
    for (int32_t h = 0; h < hosts; h++)
        cs_netdesc_set_level(d, cs_netdesc_add_node(d, CS_NETNODE_HOST, NULL, 0), 0);
    sw = cs_netdesc_add_node(d, CS_NETNODE_SWITCH, NULL, 0);
    cs_netdesc_set_level(d, sw, 1);
    for (int32_t h = 0; h < hosts; h++)
        if ((rc = cs_netdesc_add_link(d, h, sw, bw, lat, 1, 0, err)))
            return rc;
    /* Bisection: half the hosts' links, or the backbone when it is less. */
    double bisection = (double)(hosts / 2) * bw;
    if (backbone_bw != 0) {
        int32_t bb = cs_netdesc_add_node(d, CS_NETNODE_SWITCH, NULL, -1), *ctx;
        cs_netdesc_set_level(d, bb, 2);
        if ((rc = cs_netdesc_add_link(d, sw, bb, backbone_bw, backbone_lat / 2, 1, 0, err)))
            return rc;
        ctx = cs_malloc(sizeof *ctx);
        *ctx = hosts;
        cs_netdesc_set_route(d, "through the backbone", star_route, ctx, free);
        bisection = fmin(bisection, backbone_bw);
    }
    cs_netdesc_set_bisection(d, bisection);
    return CS_OK;
}

static int star_build(cs_spec_t *spec, double bw, double lat, const char *routing,
                      cs_netdesc_t *d, cs_error_t *err)
{
    static const char *const plain[] = {"shortest", NULL}, *const behind[] = {"backbone", NULL};
    int hosts, which, rc;
    double backbone, backlat;
    /* One path between any two hosts: nothing to choose.  With a backbone
     * the route through it is the network's, not a shortest path. */
    if ((rc = spec_size(spec, "hosts", 16, &hosts, err)) ||
        (rc = cs_netgen_spec_bw(spec, "backbone", 0, &backbone, err)) ||
        (rc = cs_spec_get_seconds(spec, "backlat", 0, &backlat, err)) ||
        (rc = cs_netgen_routing("star", routing, backbone != 0 ? behind : plain, &which, err)))
        return rc;
    if (cs_spec_get(spec, "backlat") && backbone == 0)
        return cs_error_set(err, CS_ERR_USAGE, "backlat: there is no backbone (give backbone=, "
                            "e.g. backbone=10GB/s)");
    return cs_netgen_star(d, hosts, bw, lat, backbone, backlat, err);
}

static const char *const star_keys[] = {"hosts", "backbone", "backlat", NULL};
const cs_netgen_type_t cs_netgen_star_type = {
    "star", "hosts on one switch (SimGrid's FLAT cluster), optionally behind a backbone",
    "hosts=16[,backbone=BW,backlat=0]; routing=shortest (backbone: routing=backbone)",
    star_keys, star_build};
