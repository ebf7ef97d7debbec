/*
 * netgen_direct.c - the direct networks and dragonflies of netgen.h, with
 * the deterministic routings each is known for:
 *
 *   - n-dimensional tori and meshes (Dally & Towles, "Principles and
 *     Practices of Interconnection Networks", ch. 5; TPU pods, Blue Gene):
 *     every node a host that forwards; dimension-order routing (ch. 14.2);
 *   - HyperX (Ahn, Binkert, Davis, McLaren, Schreiber, SC'09): switches in
 *     a lattice, fully connected along each dimension, T hosts per switch;
 *     dimension-order routing, one hop per dimension that differs;
 *   - dragonflies (Kim, Dally, Scott, Abts, ISCA'08): g groups of a
 *     routers, fully connected inside a group, p hosts and h global links
 *     per router; minimal routing (local, global, local), Valiant's
 *     (minimal to an intermediate group, then minimal) and UGAL's two
 *     candidates (minimal and Valiant, chosen per message by load in
 *     machines/net.c; Kim et al. 2008, section 4.2).
 *
 * Global-link arrangements.  Group G numbers its a*h global ports
 * j = r*h + k (router r of the group, its k-th global link, k < h).  Only
 * ports j < g-1 are wired (all of them when g = a*h + 1, the balanced
 * size); with fewer groups the ports j >= g-1 stay unconnected rather than
 * doubling some group pairs and not others.  Port j of group G goes to
 *   consecutive (the default; SST merlin's "relative"):
 *       group (G + j + 1) mod g,
 *   palmtree (Camarero, Vallejo & Beivide, ACM TACO 2014; García's
 *       arrangement):  group (G - j - 1) mod g,
 * and lands on port g-2-j of that group in both (so with g = a*h + 1 the
 * link of router r, port k meets router a-1-r, port h-1-k).  Hence the
 * router of group G that holds the link to group H is router
 *   consecutive: ((H - G - 1) mod g) / h,   palmtree: ((G - H - 1) mod g) / h
 * (integer division), and every pair of groups has exactly one global
 * link.  The two are mirror images (G -> -G), so they differ in which
 * routers carry which pairs, not in the graph's shape.
 */
#include "topo/netgen_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Links are 32 bytes in a cs_netdesc_t: the node limit keeps tori linear,
 * but HyperX and dragonflies grow quadratically with a dimension or a
 * group, so their link count gets its own limit (a 4M-node 8-D torus
 * still fits). */

/* ---- shared checks ------------------------------------------------------- */

/* Node ids are computed from the structure (hosts first), so a generator
 * fills an empty description. */
static int check_count(const char *key, int v, cs_error_t *err)
{
    if (v < 1 || v > CS_NETGEN_MAX_NODES)
        return cs_error_set(err, CS_ERR_RANGE, "%s=%d: expected 1..%d", key, v,
                            CS_NETGEN_MAX_NODES);
    return CS_OK;
}

/* ---- lattices (torus, mesh, HyperX) -------------------------------------- */

/* Row-major coordinates, the last dimension fastest (netgen.h). */
typedef struct lattice {
    int ndims;
    int dims[CS_NETGEN_MAX_DIMS];
    int32_t stride[CS_NETGEN_MAX_DIMS];
    int32_t size;
} lattice_t;

static int lattice_init(lattice_t *l, int ndims, const int *dims, cs_error_t *err)
{
    int64_t size;
    int rc;
    if (ndims < 1 || ndims > CS_NETGEN_MAX_DIMS)
        return cs_error_set(err, CS_ERR_RANGE, "dims: %d dimensions; expected 1..%d", ndims,
                            CS_NETGEN_MAX_DIMS);
    for (int i = 0; i < ndims; i++)
        if (dims[i] < 1)
            return cs_error_set(err, CS_ERR_RANGE, "dims: dimension %d has size %d; expected "
                                ">= 1", i, dims[i]);
    if ((rc = cs_netgen_product(dims, ndims, "dims", &size, err)) != CS_OK)
        return rc;
    l->ndims = ndims;
    l->size = (int32_t)size;
    for (int i = ndims - 1, s = 1; i >= 0; s *= dims[i], i--) {
        l->dims[i] = dims[i];
        l->stride[i] = s;
    }
    return CS_OK;
}

static int lattice_coord(const lattice_t *l, int32_t id, int i)
{
    return (int)(id / l->stride[i] % l->dims[i]);
}

/* id with coordinate i set to c. */
static int32_t lattice_move(const lattice_t *l, int32_t id, int i, int c)
{
    return id + (int32_t)(c - lattice_coord(l, id, i)) * l->stride[i];
}

/* ---- paths ------------------------------------------------------------------ */


/* The switch or router a node attaches to: hosts 0..hosts-1, `per` of them
 * on each switch, switches numbered after the hosts in the same order. */
static int32_t attach_of(int32_t node, int32_t hosts, int per)
{
    return node < hosts ? hosts + node / per : node;
}

static void free_ctx(void *ctx) { free(ctx); }

/* ---- torus and mesh ------------------------------------------------------- */

typedef struct torus_ctx {
    lattice_t l;
    int wrap;
} torus_ctx_t;

/* Dimension order: dimension 0 first; on a ring the shorter way round, at
 * exactly half way the increasing direction; on a mesh the only way. */
static int torus_route(const void *ctx, int32_t src, int32_t dst, uint64_t salt,
                       int32_t *path, uint8_t *vc, int max)
{
    const torus_ctx_t *t = ctx;
    cs_netgen_walk_t w = {path, vc, max, 0, 0};
    int32_t cur = src;
    (void)salt;
    if (src < 0 || dst < 0 || src >= t->l.size || dst >= t->l.size)
        return -1;
    cs_netgen_walk_to(&w, cur);
    for (int i = 0; i < t->l.ndims; i++) {
        int n = t->l.dims[i], c = lattice_coord(&t->l, cur, i), e = lattice_coord(&t->l, dst, i);
        int fwd = (e - c + n) % n, step, hops;
        if (!t->wrap) {
            step = e > c ? 1 : -1;
            hops = abs(e - c);
        } else if (fwd <= n - fwd) {
            step = 1;
            hops = fwd;
        } else {
            step = -1;
            hops = n - fwd;
        }
        w.cls = 0; /* each dimension's rings have their own dateline */
        for (int k = 0; k < hops; k++) {
            int wrapped = t->wrap && ((step > 0 && c == n - 1) || (step < 0 && c == 0));
            c = (c + step + n) % n;
            cur = lattice_move(&t->l, cur, i, c);
            cs_netgen_walk_to(&w, cur);
            if (wrapped) /* hops after the wrap link take class 1: no ring of full buffers */
                w.cls = 1;
        }
    }
    return cs_netgen_walk_end(&w);
}

/* Links per line of dimension size n: a ring of n > 2 has n, a ring of 2
 * one (its two directions are the same pair of nodes), a path n - 1. */
static int64_t line_links(int n, int wrap) { return wrap && n > 2 ? n : n - 1; }

/* Bisection: when the longest dimension k is even, the cut across it
 * halves the nodes and crosses each of its size/k lines twice on a ring
 * (once on a path or a ring of 2).  That is the known minimum for meshes
 * (Azizoglu & Egecioglu, "The bisection width and the isoperimetric number
 * of arrays", 2004) and for k-ary n-cubes (Dally & Towles, ch. 3); for tori
 * of mixed sizes we take the same cut.  An odd longest dimension is left
 * unknown (0) for the machine to compute. */
static void set_lattice_bisection(cs_netdesc_t *d, const lattice_t *l, int wrap, double bw)
{
    int k = 1;
    for (int i = 0; i < l->ndims; i++)
        k = l->dims[i] > k ? l->dims[i] : k;
    if (k % 2 == 0)
        cs_netdesc_set_bisection(d, (double)(l->size / k) * (wrap && k > 2 ? 2 : 1) * bw);
}

int cs_netgen_torus(cs_netdesc_t *d, int ndims, const int *dims, int wrap, double bw,
                    double lat, const char *routing, cs_error_t *err)
{
    static const char *const valid[] = {"dor", "shortest", NULL};
    const char *gen = wrap ? "torus" : "mesh";
    lattice_t l;
    int64_t links = 0;
    int rindex, rc;
    if ((rc = cs_netgen_check_empty(d, gen, err)) != CS_OK ||
        (rc = lattice_init(&l, ndims, dims, err)) != CS_OK ||
        (rc = cs_netgen_check_timing("bw", bw, "lat", lat, err)) != CS_OK ||
        (rc = cs_netgen_routing(gen, routing, valid, &rindex, err)) != CS_OK)
        return rc;
    for (int i = 0; i < ndims; i++)
        links += l.size / dims[i] * line_links(dims[i], wrap);
    if ((rc = cs_netgen_check_links(links, "dims", err)) != CS_OK)
        return rc;

    for (int32_t v = 0; v < l.size; v++)
        cs_netdesc_add_node(d, CS_NETNODE_HOST, NULL, -1);
    for (int32_t v = 0; v < l.size; v++)
        for (int i = 0; i < ndims; i++) {
            int n = dims[i], c = lattice_coord(&l, v, i);
            if (c + 1 == n && !(wrap && n > 2))
                continue; /* the end of a path, or a ring of 2 already linked */
            rc = cs_netdesc_add_link(d, v, lattice_move(&l, v, i, (c + 1) % n), bw, lat, 1, 0,
                                     err);
            if (rc != CS_OK)
                return rc;
        }
    set_lattice_bisection(d, &l, wrap, bw);
    /* the dimensions hint counts the innermost first: the last here */
    int inner_first[CS_NETGEN_MAX_DIMS];
    for (int i = 0; i < ndims; i++)
        inner_first[i] = dims[ndims - 1 - i];
    cs_netdesc_set_dims(d, ndims, inner_first);
    if (rindex == 0) {
        torus_ctx_t *ctx = cs_malloc(sizeof *ctx);
        ctx->l = l;
        ctx->wrap = wrap;
        cs_netdesc_set_route(d, "dimension order (dor)", torus_route, ctx, free_ctx);
    }
    return CS_OK;
}

/* ---- HyperX --------------------------------------------------------------- */

typedef struct hyperx_ctx {
    lattice_t l; /* the switches */
    int32_t hosts;
    int per;
} hyperx_ctx_t;

/* Dimension order: to the source's switch, then for each dimension in
 * order whose coordinate differs one hop straight to the switch with the
 * destination's coordinate, then down to the destination. */
static int hyperx_route(const void *ctx, int32_t src, int32_t dst, uint64_t salt,
                       int32_t *path, uint8_t *vc, int max)
{
    const hyperx_ctx_t *x = ctx;
    cs_netgen_walk_t w = {path, vc, max, 0, 0};
    int32_t n = x->hosts + x->l.size, cur, goal;
    (void)salt;
    if (src < 0 || dst < 0 || src >= n || dst >= n)
        return -1;
    cur = attach_of(src, x->hosts, x->per) - x->hosts;
    goal = attach_of(dst, x->hosts, x->per) - x->hosts;
    cs_netgen_walk_to(&w, src);
    cs_netgen_walk_to(&w, x->hosts + cur);
    for (int i = 0; i < x->l.ndims; i++) {
        cur = lattice_move(&x->l, cur, i, lattice_coord(&x->l, goal, i));
        cs_netgen_walk_to(&w, x->hosts + cur);
    }
    cs_netgen_walk_to(&w, dst);
    return cs_netgen_walk_end(&w);
}

int cs_netgen_hyperx(cs_netdesc_t *d, int ndims, const int *dims, int hosts, double bw,
                     double lat, const char *routing, cs_error_t *err)
{
    static const char *const valid[] = {"dor", "shortest", NULL};
    lattice_t l;
    int64_t per_switch = 0, links;
    int32_t nhosts;
    int rindex, rc;
    if ((rc = cs_netgen_check_empty(d, "hyperx", err)) != CS_OK ||
        (rc = lattice_init(&l, ndims, dims, err)) != CS_OK ||
        (rc = check_count("hosts", hosts, err)) != CS_OK ||
        (rc = cs_netgen_check_timing("bw", bw, "lat", lat, err)) != CS_OK ||
        (rc = cs_netgen_routing("hyperx", routing, valid, &rindex, err)) != CS_OK)
        return rc;
    if ((int64_t)l.size * (hosts + 1) > CS_NETGEN_MAX_NODES)
        return cs_error_set(err, CS_ERR_RANGE, "dims, hosts=%d: %d switches with %d hosts each "
                            "are more than %d nodes", hosts, (int)l.size, hosts,
                            CS_NETGEN_MAX_NODES);
    for (int i = 0; i < ndims; i++)
        per_switch += dims[i] - 1;
    links = (int64_t)l.size * hosts + (int64_t)l.size * per_switch / 2;
    if ((rc = cs_netgen_check_links(links, "dims", err)) != CS_OK)
        return rc;

    nhosts = l.size * hosts;
    for (int32_t h = 0; h < nhosts; h++)
        cs_netdesc_add_node(d, CS_NETNODE_HOST, NULL, h / hosts);
    for (int32_t s = 0; s < l.size; s++)
        cs_netdesc_add_node(d, CS_NETNODE_SWITCH, NULL, s);
    for (int32_t h = 0; h < nhosts; h++)
        if ((rc = cs_netdesc_add_link(d, h, attach_of(h, nhosts, hosts), bw, lat, 1, 0, err)))
            return rc;
    for (int32_t s = 0; s < l.size; s++)
        for (int i = 0; i < ndims; i++)
            for (int c = lattice_coord(&l, s, i) + 1; c < dims[i]; c++)
                if ((rc = cs_netdesc_add_link(d, nhosts + s, nhosts + lattice_move(&l, s, i, c),
                                              bw, lat, 1, 0, err)))
                    return rc;
    if (rindex == 0) {
        hyperx_ctx_t *ctx = cs_malloc(sizeof *ctx);
        ctx->l = l;
        ctx->hosts = nhosts;
        ctx->per = hosts;
        cs_netdesc_set_route(d, "dimension order (dor)", hyperx_route, ctx, free_ctx);
    }
    return CS_OK;
}

/* ---- dragonfly ------------------------------------------------------------ */

typedef struct dfly_ctx {
    int a, p, h, g;
    int palmtree;
    int valiant;
    int32_t hosts;
} dfly_ctx_t;

/* The router (index in group G) that holds G's global link to group H
 * (H != G): see the arrangements in this file's first comment. */
static int dfly_gateway(const dfly_ctx_t *f, int G, int H)
{
    int j = f->palmtree ? (G - H - 1 + 2 * f->g) % f->g : (H - G - 1 + 2 * f->g) % f->g;
    return j / f->h;
}

static int32_t dfly_router(const dfly_ctx_t *f, int G, int r)
{
    return f->hosts + (int32_t)G * f->a + r;
}

/* From router `from` of group G (already walked) across the global link
 * to group H: G's gateway router, then H's end of the link. */
/* A hop's class is the number of global hops before it: minimal routes
 * (local, global, local) use classes 0 and 1, Valiant's (local, global,
 * local, global, local) 0, 1 and 2, and no class then holds a cycle of
 * waits, so finite buffers cannot deadlock (the dragonfly's usual
 * virtual-channel scheme, Kim et al. 2008). */
static void dfly_cross(const dfly_ctx_t *f, cs_netgen_walk_t *w, int G, int H)
{
    cs_netgen_walk_to(w, dfly_router(f, G, dfly_gateway(f, G, H)));
    cs_netgen_walk_to(w, dfly_router(f, H, dfly_gateway(f, H, G)));
    w->cls++;
}

/* Minimal: local hop to the gateway, the global link, local hop to the
 * destination's router.  Valiant: the same to an intermediate group that
 * the salt chooses among the g-2 others (its entry and exit gateways
 * joined by a local hop), then on to the destination; inside one group,
 * or with fewer than three groups, Valiant is minimal (there is no third
 * group to spread over). */
static int dfly_walk(const dfly_ctx_t *f, int valiant, int32_t src, int32_t dst, uint64_t salt,
                     int32_t *path, uint8_t *vc, int max)
{
    cs_netgen_walk_t w = {path, vc, max, 0, 0};
    int32_t n = f->hosts + (int32_t)f->g * f->a;
    int32_t rs, rd;
    int gs, gd;
    if (src < 0 || dst < 0 || src >= n || dst >= n)
        return -1;
    rs = attach_of(src, f->hosts, f->p);
    rd = attach_of(dst, f->hosts, f->p);
    gs = (rs - f->hosts) / f->a;
    gd = (rd - f->hosts) / f->a;
    cs_netgen_walk_to(&w, src);
    cs_netgen_walk_to(&w, rs);
    if (gs != gd && valiant && f->g >= 3) {
        int lo = gs < gd ? gs : gd, hi = gs < gd ? gd : gs;
        int gi = (int)(salt % (uint64_t)(f->g - 2));
        gi += gi >= lo;
        gi += gi >= hi;
        dfly_cross(f, &w, gs, gi);
        dfly_cross(f, &w, gi, gd);
    } else if (gs != gd) {
        dfly_cross(f, &w, gs, gd);
    }
    cs_netgen_walk_to(&w, rd);
    cs_netgen_walk_to(&w, dst);
    return cs_netgen_walk_end(&w);
}

/* routing=minimal or valiant, by the context's flag */
static int dfly_route(const void *ctx, int32_t src, int32_t dst, uint64_t salt,
                      int32_t *path, uint8_t *vc, int max)
{
    const dfly_ctx_t *f = ctx;
    return dfly_walk(f, f->valiant, src, dst, salt, path, vc, max);
}

/* routing=ugal: its two candidates (cs_netdesc_set_route_ugal) */
static int dfly_route_min(const void *ctx, int32_t src, int32_t dst, uint64_t salt,
                          int32_t *path, uint8_t *vc, int max)
{
    return dfly_walk(ctx, 0, src, dst, salt, path, vc, max);
}

static int dfly_route_valiant(const void *ctx, int32_t src, int32_t dst, uint64_t salt,
                              int32_t *path, uint8_t *vc, int max)
{
    return dfly_walk(ctx, 1, src, dst, salt, path, vc, max);
}

static int dfly_check(const cs_netgen_dragonfly_t *df, int *palmtree, cs_error_t *err)
{
    int64_t routers, nodes, links;
    int rc;
    if ((rc = check_count("a", df->a, err)) != CS_OK || (rc = check_count("p", df->p, err)) ||
        (rc = check_count("h", df->h, err)) || (rc = check_count("g", df->g, err)))
        return rc;
    if ((int64_t)df->g > (int64_t)df->a * df->h + 1)
        return cs_error_set(err, CS_ERR_RANGE, "g=%d: more than a*h+1 = %lld groups (a=%d, "
                            "h=%d); some pair of groups would have no global link", df->g,
                            (long long)df->a * df->h + 1, df->a, df->h);
    if (!df->arrangement || !strcmp(df->arrangement, "consecutive"))
        *palmtree = 0;
    else if (!strcmp(df->arrangement, "palmtree"))
        *palmtree = 1;
    else
        return cs_error_set(err, CS_ERR_USAGE, "arrangement=%s: unknown global-link "
                            "arrangement; valid: consecutive, palmtree", df->arrangement);
    routers = (int64_t)df->g * df->a; /* both <= 2^22: no overflow */
    nodes = routers * (df->p + 1);
    if (routers > CS_NETGEN_MAX_NODES || nodes > CS_NETGEN_MAX_NODES)
        return cs_error_set(err, CS_ERR_RANGE, "g=%d, a=%d, p=%d: more than %d nodes", df->g,
                            df->a, df->p, CS_NETGEN_MAX_NODES);
    links = routers * df->p + (int64_t)df->g * df->a * (df->a - 1) / 2 +
            (int64_t)df->g * (df->g - 1) / 2;
    if ((rc = cs_netgen_check_links(links, "a, g", err)) != CS_OK ||
        (rc = cs_netgen_check_timing("bw", df->bw, "lat", df->lat, err)) != CS_OK)
        return rc;
    return cs_netgen_check_timing("gbw", df->gbw, "glat", df->glat, err);
}

int cs_netgen_dragonfly(cs_netdesc_t *d, const cs_netgen_dragonfly_t *df, const char *routing,
                        cs_error_t *err)
{
    static const char *const valid[] = {"minimal", "valiant", "shortest", "ugal", "ugal-g",
                                        NULL};
    dfly_ctx_t f;
    int rindex = 0, palmtree = 0, rc;
    if ((rc = cs_netgen_check_empty(d, "dragonfly", err)) != CS_OK ||
        (rc = dfly_check(df, &palmtree, err)) != CS_OK ||
        (rc = cs_netgen_routing("dragonfly", routing, valid, &rindex, err)) != CS_OK)
        return rc;
    f = (dfly_ctx_t){df->a, df->p, df->h, df->g, palmtree, rindex == 1,
                     (int32_t)df->g * df->a * df->p};

    for (int32_t i = 0; i < f.hosts; i++) {
        int32_t node = cs_netdesc_add_node(d, CS_NETNODE_HOST, NULL, i / (f.a * f.p));
        cs_netdesc_set_level(d, node, 0);
    }
    for (int G = 0; G < f.g; G++)
        for (int r = 0; r < f.a; r++)
            cs_netdesc_set_level(d, cs_netdesc_add_node(d, CS_NETNODE_SWITCH, NULL, G), 1);
    for (int32_t i = 0; i < f.hosts; i++)
        if ((rc = cs_netdesc_add_link(d, i, attach_of(i, f.hosts, f.p), df->bw, df->lat, 1, 0,
                                      err)))
            return rc;
    for (int G = 0; G < f.g; G++)
        for (int r = 0; r < f.a; r++)
            for (int s = r + 1; s < f.a; s++)
                if ((rc = cs_netdesc_add_link(d, dfly_router(&f, G, r), dfly_router(&f, G, s),
                                              df->bw, df->lat, 1, 0, err)))
                    return rc;
    /* each pair once, from its lower group */
    for (int G = 0; G < f.g; G++)
        for (int H = G + 1; H < f.g; H++)
            if ((rc = cs_netdesc_add_link(d, dfly_router(&f, G, dfly_gateway(&f, G, H)),
                                          dfly_router(&f, H, dfly_gateway(&f, H, G)), df->gbw,
                                          df->glat, 1, 0, err)))
                return rc;
    if (df->ugal_threshold && rindex < 3)
        return cs_error_set(err, CS_ERR_USAGE, "ugal_threshold=%lld: applies to routing=ugal "
                            "and ugal-g only (this dragonfly's routing is %s)",
                            (long long)df->ugal_threshold, valid[rindex]);
    if (rindex != 2) {
        dfly_ctx_t *ctx = cs_malloc(sizeof *ctx);
        *ctx = f;
        if (rindex == 3)
            cs_netdesc_set_route_ugal(d, "UGAL-L (minimal or Valiant by queue x hops at the "
                                      "source router)", dfly_route_min, dfly_route_valiant,
                                      CS_NETDESC_UGAL_LOCAL, df->ugal_threshold, ctx, free_ctx);
        else if (rindex == 4)
            cs_netdesc_set_route_ugal(d, "UGAL-G (minimal or Valiant by the busiest queue on "
                                      "the path x hops)", dfly_route_min, dfly_route_valiant,
                                      CS_NETDESC_UGAL_GLOBAL, df->ugal_threshold, ctx,
                                      free_ctx);
        else
            cs_netdesc_set_route(d, rindex ? "valiant" : "minimal", dfly_route, ctx, free_ctx);
    }
    return CS_OK;
}

/* ---- from spec keys ------------------------------------------------------- */

/* dims=AxBx... with a default of 4x4. */
static int spec_dims(cs_spec_t *spec, int *dims, int *ndims, cs_error_t *err)
{
    int rc = cs_netgen_spec_list(spec, "dims", CS_NETGEN_MAX_DIMS, dims, ndims, err);
    if (rc != CS_OK)
        return rc;
    if (*ndims == 0) {
        dims[0] = dims[1] = 4;
        *ndims = 2;
    }
    return CS_OK;
}

static int spec_count(cs_spec_t *spec, const char *key, int dflt, int *out, cs_error_t *err)
{
    int64_t v = dflt;
    int rc = cs_spec_get_int(spec, key, dflt, 1, CS_NETGEN_MAX_NODES, &v, err);
    *out = (int)v;
    return rc;
}

static int build_lattice(cs_spec_t *spec, double bw, double lat, const char *routing,
                         cs_netdesc_t *d, int wrap, cs_error_t *err)
{
    int dims[CS_NETGEN_MAX_DIMS], ndims, rc;
    if ((rc = spec_dims(spec, dims, &ndims, err)) != CS_OK)
        return rc;
    return cs_netgen_torus(d, ndims, dims, wrap, bw, lat, routing, err);
}

static int build_torus(cs_spec_t *spec, double bw, double lat, const char *routing,
                       cs_netdesc_t *d, cs_error_t *err)
{
    return build_lattice(spec, bw, lat, routing, d, 1, err);
}

static int build_mesh(cs_spec_t *spec, double bw, double lat, const char *routing,
                      cs_netdesc_t *d, cs_error_t *err)
{
    return build_lattice(spec, bw, lat, routing, d, 0, err);
}

static int build_hyperx(cs_spec_t *spec, double bw, double lat, const char *routing,
                        cs_netdesc_t *d, cs_error_t *err)
{
    int dims[CS_NETGEN_MAX_DIMS], ndims, hosts, rc;
    if ((rc = spec_dims(spec, dims, &ndims, err)) != CS_OK ||
        (rc = spec_count(spec, "hosts", 1, &hosts, err)) != CS_OK)
        return rc;
    return cs_netgen_hyperx(d, ndims, dims, hosts, bw, lat, routing, err);
}

static int build_dragonfly(cs_spec_t *spec, double bw, double lat, const char *routing,
                           cs_netdesc_t *d, cs_error_t *err)
{
    cs_netgen_dragonfly_t df = {.bw = bw, .lat = lat};
    int64_t g;
    int rc;
    if ((rc = spec_count(spec, "a", 4, &df.a, err)) != CS_OK ||
        (rc = spec_count(spec, "p", 2, &df.p, err)) != CS_OK ||
        (rc = spec_count(spec, "h", 2, &df.h, err)) != CS_OK)
        return rc;
    /* the default g = a*h + 1 may exceed the node limit: dfly_check says so */
    g = (int64_t)df.a * df.h + 1;
    if ((rc = spec_count(spec, "g", g > CS_NETGEN_MAX_NODES ? CS_NETGEN_MAX_NODES : (int)g,
                         &df.g, err)) != CS_OK ||
        (rc = cs_netgen_spec_bw(spec, "gbw", bw, &df.gbw, err)) != CS_OK ||
        (rc = cs_spec_get_seconds(spec, "glat", lat, &df.glat, err)) != CS_OK ||
        (rc = cs_spec_get_int(spec, "ugal_threshold", 0, 0, INT32_MAX, &df.ugal_threshold,
                              err)) != CS_OK)
        return rc;
    df.arrangement = cs_spec_get(spec, "arrangement");
    return cs_netgen_dragonfly(d, &df, routing, err);
}

static const char *const lattice_keys[] = {"dims", NULL};
static const char *const hyperx_keys[] = {"dims", "hosts", NULL};
static const char *const dragonfly_keys[] = {"a", "p", "h", "g", "arrangement", "gbw", "glat",
                                             "ugal_threshold", NULL};

const cs_netgen_type_t cs_netgen_torus_type = {
    "torus", "n-dimensional torus, every node a host that forwards (TPU-like)",
    "dims=4x4 (1..8 sizes, x or +); routing=dor|shortest", lattice_keys, build_torus};

const cs_netgen_type_t cs_netgen_mesh_type = {
    "mesh", "n-dimensional mesh (a torus without wrap-around links)",
    "dims=4x4 (1..8 sizes, x or +); routing=dor|shortest", lattice_keys, build_mesh};

const cs_netgen_type_t cs_netgen_hyperx_type = {
    "hyperx", "HyperX: switches fully connected along each lattice dimension",
    "dims=4x4,hosts=1 (hosts per switch); routing=dor|shortest", hyperx_keys, build_hyperx};

const cs_netgen_type_t cs_netgen_dragonfly_type = {
    "dragonfly", "dragonfly: groups of fully connected routers joined by global links",
    "a=4,p=2,h=2,g=a*h+1,arrangement=consecutive|palmtree,gbw=bw,glat=lat,"
    "ugal_threshold=0; routing=minimal|valiant|ugal|ugal-g|shortest",
    dragonfly_keys, build_dragonfly};
