/*
 * topo.c - topologies as directed channel multigraphs, and their routing
 * (contract in topo.h).
 *
 * Storage.  Every physical link l is stored once, as its two endpoints
 * (lu[l], lv[l]); its channels are 2l (lu -> lv) and 2l+1 (lv -> lu), so the
 * reverse of channel c is c ^ 1.  A CSR out-adjacency (off/adj) lists the
 * channels leaving each node sorted by destination and then by channel id;
 * cs_topo_find_channel is a binary search in it (O(log degree)) and
 * cs_topo_degree is O(1).  Memory is 16 bytes per link plus 4 per node, so
 * the Cerebras-sized 850x1000 mesh (3.4 M channels) takes about 31 MB and is
 * built in O(nodes + channels) with two counting sorts, no comparison sort.
 *
 * Routing.  The standard shapes are routed on the fly in O(hops), without
 * per-pair tables: every builder lays its links out in a fixed order so that
 * the channel of a hop is a closed-form function of the coordinates (see the
 * layout comment above each builder).  Custom topologies use the caller's
 * route function, or else BFS shortest paths whose next-hop tables are
 * computed lazily, one per destination actually asked for (see route_bfs).
 *
 * Degenerate wrap-around dimensions: a ring (or torus dimension) of size 2
 * has a single link between its two nodes (not two parallel links), and one
 * of size 1 has none.  Such a dimension has no cycle, hence no dateline.
 *
 * Caches.  The lazily built parts of a custom topology (its CSR after
 * cs_topo_add_link, its BFS tables) are filled in by const queries: the
 * object is always heap-allocated and non-const, so the cast is well
 * defined, but those first queries must not run concurrently on one custom
 * topology from several threads.  Standard shapes are never modified after
 * their builder returns.
 */
#include "topo/topo.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Most channels a topology may have.  Every mesh or torus within
 * CS_TOPO_MAX_NODES fits (at most 4 channels per node); the bound stops a
 * spec like complete:p=40000 (1.6 G channels, ~13 GB) before it allocates.
 * At the bound the tables take about 2.3 GB (plus 1.3 GB temporarily while
 * the CSR is sorted) and an 8192x8192 torus builds in about 12 s. */
#define TOPO_MAX_CHANNELS (1 << 28)

struct cs_topo {
    cs_topo_kind_t kind;
    char *name;
    int nodes;
    int rows, cols; /* grid hint: mesh, torus, or set on a custom */
    int dim;        /* hypercube: log2(nodes) */
    int max_route;  /* cs_topo_max_route_len (standard shapes) */

    /* Links: link l joins lu[l] and lv[l]. */
    int nlinks, cap_links;
    int32_t *lu, *lv;

    /* CSR out-adjacency: channels leaving u are adj[off[u] .. off[u+1]),
     * sorted by destination, then channel id (so a lower-bound search finds
     * the lowest id among parallel channels).  Stale on a custom topology
     * after cs_topo_add_link until the next query rebuilds it. */
    int32_t *off, *adj;
    int csr_stale;

    /* Custom routing: the caller's function, or (when NULL) BFS tables:
     * bfs_next[d][u] is the channel u takes toward d, or -1 if d is
     * unreachable from u.  bfs_next itself and each row are lazy. */
    cs_topo_route_fn route_fn;
    cs_topo_route_adaptive_fn route_adaptive; /* set instead of route_fn */
    void *route_ctx;
    int32_t **bfs_next;

    /* Shared capacity (cs_topo_share_channels): a union-find forest over
     * the first nshare channels, share[c] its parent, roots the lowest id of
     * their group; NULL while no channel shares (channels past nshare are
     * their own). */
    int32_t *share;
    int nshare;
};

/* ---- channels and the CSR ------------------------------------------------ */

static int32_t chan_src(const cs_topo_t *t, int32_t c)
{
    return (c & 1) ? t->lv[c >> 1] : t->lu[c >> 1];
}

static int32_t chan_dst(const cs_topo_t *t, int32_t c)
{
    return (c & 1) ? t->lu[c >> 1] : t->lv[c >> 1];
}

/* Rebuilds off/adj from the links: a stable counting sort of the channel ids
 * by destination, then a stable counting sort of that order by source, gives
 * the (source, destination, id) order in O(nodes + channels). */
static void build_csr(cs_topo_t *t)
{
    int n = t->nodes;
    int m = 2 * t->nlinks;
    int32_t *tmp = cs_malloc((size_t)m * sizeof *tmp);
    int32_t *pos = cs_calloc((size_t)n + 1, sizeof *pos);

    free(t->off);
    free(t->adj);
    t->off = cs_calloc((size_t)n + 1, sizeof *t->off);
    t->adj = cs_malloc((size_t)m * sizeof *t->adj);

    for (int32_t c = 0; c < m; c++)
        pos[chan_dst(t, c) + 1]++;
    for (int u = 0; u < n; u++)
        pos[u + 1] += pos[u];
    for (int32_t c = 0; c < m; c++)
        tmp[pos[chan_dst(t, c)]++] = c;

    for (int32_t c = 0; c < m; c++)
        t->off[chan_src(t, c) + 1]++;
    for (int u = 0; u < n; u++)
        t->off[u + 1] += t->off[u];
    memcpy(pos, t->off, (size_t)n * sizeof *pos);
    for (int i = 0; i < m; i++)
        t->adj[pos[chan_src(t, tmp[i])]++] = tmp[i];

    free(pos);
    free(tmp);
    t->csr_stale = 0;
}

/* Brings the CSR of a custom topology up to date (cache fill through a
 * const pointer; see the top-of-file comment). */
static const cs_topo_t *fresh(const cs_topo_t *ct)
{
    if (ct->csr_stale)
        build_csr((cs_topo_t *)ct);
    return ct;
}

static void drop_bfs(cs_topo_t *t)
{
    if (!t->bfs_next)
        return;
    for (int d = 0; d < t->nodes; d++)
        free(t->bfs_next[d]);
    free(t->bfs_next);
    t->bfs_next = NULL;
}

/* ---- construction -------------------------------------------------------- */

static cs_topo_t *topo_alloc(cs_topo_kind_t kind, const char *name, int nodes, int nlinks)
{
    cs_topo_t *t = cs_calloc(1, sizeof *t);
    t->kind = kind;
    t->name = cs_strdup(name);
    t->nodes = nodes;
    t->cap_links = nlinks;
    t->lu = cs_malloc((size_t)nlinks * sizeof *t->lu);
    t->lv = cs_malloc((size_t)nlinks * sizeof *t->lv);
    return t;
}

static void push_link(cs_topo_t *t, int u, int v)
{
    CS_ASSERT(t->nlinks < t->cap_links);
    t->lu[t->nlinks] = u;
    t->lv[t->nlinks] = v;
    t->nlinks++;
}

/* Checks the node and channel counts of a shape described by `desc`
 * ("mesh 3x4", "ring p=8") against the limits. */
static int check_size(const char *desc, int64_t nodes, int64_t links, cs_error_t *err)
{
    if (nodes > CS_TOPO_MAX_NODES)
        return cs_error_set(err, CS_ERR_RANGE,
                            "%s has %" PRId64 " nodes, more than CS_TOPO_MAX_NODES (%d)", desc,
                            nodes, CS_TOPO_MAX_NODES);
    if (2 * links > TOPO_MAX_CHANNELS)
        return cs_error_set(err, CS_ERR_RANGE,
                            "%s has %" PRId64 " channels, more than the %d a topology may have",
                            desc, 2 * links, TOPO_MAX_CHANNELS);
    return CS_OK;
}

static int max1(int x)
{
    return x > 1 ? x : 1;
}

/* Links of a wrap-around dimension of size n: n, except that size 2 has a
 * single link and size 1 none (see the top-of-file comment). */
static int ring_links(int n)
{
    return n >= 3 ? n : n - 1;
}

/* Line layout: link i joins i and i+1. */
int cs_topo_new_line(int p, cs_topo_t **out, cs_error_t *err)
{
    char desc[64];
    *out = NULL;
    if (p < 1)
        return cs_error_set(err, CS_ERR_RANGE, "line needs p >= 1, got %d", p);
    snprintf(desc, sizeof desc, "line p=%d", p);
    int rc = check_size(desc, p, (int64_t)p - 1, err);
    if (rc)
        return rc;
    cs_topo_t *t = topo_alloc(CS_TOPO_LINE, "line", p, p - 1);
    for (int i = 0; i + 1 < p; i++)
        push_link(t, i, i + 1);
    t->max_route = max1(p - 1);
    build_csr(t);
    *out = t;
    return CS_OK;
}

/* Ring layout: link i joins i and (i+1) mod p, so channel 2i is the hop
 * i -> i+1 in the increasing direction and link p-1 is the wrap link. */
int cs_topo_new_ring(int p, cs_topo_t **out, cs_error_t *err)
{
    char desc[64];
    *out = NULL;
    if (p < 1)
        return cs_error_set(err, CS_ERR_RANGE, "ring needs p >= 1, got %d", p);
    snprintf(desc, sizeof desc, "ring p=%d", p);
    int rc = check_size(desc, p, ring_links(p), err);
    if (rc)
        return rc;
    cs_topo_t *t = topo_alloc(CS_TOPO_RING, "ring", p, ring_links(p));
    for (int i = 0; i < ring_links(p); i++)
        push_link(t, i, (i + 1) % p);
    t->max_route = max1(p / 2);
    build_csr(t);
    *out = t;
    return CS_OK;
}

static int check_grid(const char *shape, int rows, int cols, int64_t links, cs_error_t *err)
{
    char desc[64];
    if (rows < 1 || cols < 1)
        return cs_error_set(err, CS_ERR_RANGE, "%s needs rows >= 1 and cols >= 1, got %dx%d", shape,
                            rows, cols);
    snprintf(desc, sizeof desc, "%s %dx%d", shape, rows, cols);
    return check_size(desc, (int64_t)rows * cols, links, err);
}

/* Mesh layout: first the R*(C-1) row links, link r*(C-1)+c joining (r,c)
 * and (r,c+1); then the (R-1)*C column links, link R*(C-1) + r*C + c
 * joining (r,c) and (r+1,c).  Even channels point to the higher index. */
int cs_topo_new_mesh(int rows, int cols, cs_topo_t **out, cs_error_t *err)
{
    *out = NULL;
    int64_t links = (int64_t)rows * (cols - 1) + (int64_t)(rows - 1) * cols;
    int rc = check_grid("mesh", rows, cols, links, err);
    if (rc)
        return rc;
    cs_topo_t *t = topo_alloc(CS_TOPO_MESH, "mesh", rows * cols, (int)links);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c + 1 < cols; c++)
            push_link(t, r * cols + c, r * cols + c + 1);
    for (int r = 0; r + 1 < rows; r++)
        for (int c = 0; c < cols; c++)
            push_link(t, r * cols + c, (r + 1) * cols + c);
    t->rows = rows;
    t->cols = cols;
    t->max_route = max1((rows - 1) + (cols - 1));
    build_csr(t);
    *out = t;
    return CS_OK;
}

/* Torus layout: as the mesh, with hc = ring_links(C) row links per row
 * (link r*hc + c joins (r,c) and (r,(c+1) mod C)) followed by
 * ring_links(R) column links per column (link R*hc + r*C + c joins (r,c)
 * and ((r+1) mod R, c)).  Even channels go in the increasing direction,
 * including across the wrap link (C-1 -> 0, R-1 -> 0). */
int cs_topo_new_torus(int rows, int cols, cs_topo_t **out, cs_error_t *err)
{
    *out = NULL;
    int64_t links = (rows >= 1 && cols >= 1)
                        ? (int64_t)rows * ring_links(cols) + (int64_t)ring_links(rows) * cols
                        : 0;
    int rc = check_grid("torus", rows, cols, links, err);
    if (rc)
        return rc;
    cs_topo_t *t = topo_alloc(CS_TOPO_TORUS, "torus", rows * cols, (int)links);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < ring_links(cols); c++)
            push_link(t, r * cols + c, r * cols + (c + 1) % cols);
    for (int r = 0; r < ring_links(rows); r++)
        for (int c = 0; c < cols; c++)
            push_link(t, r * cols + c, ((r + 1) % rows) * cols + c);
    t->rows = rows;
    t->cols = cols;
    t->max_route = max1(rows / 2 + cols / 2);
    build_csr(t);
    *out = t;
    return CS_OK;
}

/* Cylinder layout: hc = ring_links(C) ring links per row (link r*hc + c
 * joins (r,c) and (r,(c+1) mod C)), then the mesh's column links (link
 * R*hc + r*C + c joins (r,c) and (r+1,c)). */
int cs_topo_new_cylinder(int rows, int cols, cs_topo_t **out, cs_error_t *err)
{
    *out = NULL;
    int64_t links = (rows >= 1 && cols >= 1)
                        ? (int64_t)rows * ring_links(cols) + (int64_t)(rows - 1) * cols
                        : 0;
    int rc = check_grid("cylinder", rows, cols, links, err);
    if (rc)
        return rc;
    cs_topo_t *t = topo_alloc(CS_TOPO_CYLINDER, "cylinder", rows * cols, (int)links);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < ring_links(cols); c++)
            push_link(t, r * cols + c, r * cols + (c + 1) % cols);
    for (int r = 0; r + 1 < rows; r++)
        for (int c = 0; c < cols; c++)
            push_link(t, r * cols + c, (r + 1) * cols + c);
    t->rows = rows;
    t->cols = cols;
    t->max_route = max1(rows - 1 + cols / 2);
    build_csr(t);
    *out = t;
    return CS_OK;
}

/* Complete layout: the pairs u < v in lexicographic order, so the link of
 * {u, v} is complete_link(p, u, v) in O(1). */
static int64_t complete_link(int64_t p, int64_t u, int64_t v)
{
    return u * (2 * p - u - 1) / 2 + (v - u - 1);
}

int cs_topo_new_complete(int p, cs_topo_t **out, cs_error_t *err)
{
    char desc[64];
    *out = NULL;
    if (p < 1)
        return cs_error_set(err, CS_ERR_RANGE, "complete graph needs p >= 1, got %d", p);
    snprintf(desc, sizeof desc, "complete graph with p=%d", p);
    int rc = check_size(desc, p, (int64_t)p * (p - 1) / 2, err);
    if (rc)
        return rc;
    cs_topo_t *t = topo_alloc(CS_TOPO_COMPLETE, "complete", p, (int)((int64_t)p * (p - 1) / 2));
    for (int u = 0; u < p; u++)
        for (int v = u + 1; v < p; v++)
            push_link(t, u, v);
    t->max_route = 1;
    build_csr(t);
    *out = t;
    return CS_OK;
}

/* Hypercube layout: dimension b owns links b*(p/2) .. (b+1)*(p/2)-1, one per
 * node u with bit b clear, in increasing u, joining u and u | 1<<b; the
 * index of u among those nodes is u with bit b squeezed out. */
static int64_t cube_link(int p, int b, int u)
{
    int64_t below = u & ((1 << b) - 1);
    int64_t above = (int64_t)(u >> (b + 1)) << b;
    return (int64_t)b * (p / 2) + (above | below);
}

int cs_topo_new_hypercube(int p, cs_topo_t **out, cs_error_t *err)
{
    char desc[64];
    *out = NULL;
    if (p < 1 || (p & (p - 1)) != 0)
        return cs_error_set(err, CS_ERR_RANGE, "hypercube needs p a power of two, got %d", p);
    int d = 0;
    while ((1 << d) < p)
        d++;
    snprintf(desc, sizeof desc, "hypercube p=%d", p);
    int rc = check_size(desc, p, (int64_t)d * (p / 2), err);
    if (rc)
        return rc;
    cs_topo_t *t = topo_alloc(CS_TOPO_HYPERCUBE, "hypercube", p, d * (p / 2));
    for (int b = 0; b < d; b++)
        for (int u = 0; u < p; u++)
            if (!(u & (1 << b)))
                push_link(t, u, u | (1 << b));
    t->dim = d;
    t->max_route = max1(d);
    build_csr(t);
    *out = t;
    return CS_OK;
}

cs_topo_t *cs_topo_new_custom(int nodes, const char *name)
{
    CS_ASSERT(nodes >= 0 && nodes <= CS_TOPO_MAX_NODES);
    cs_topo_t *t = topo_alloc(CS_TOPO_CUSTOM, name ? name : "custom", nodes, 0);
    t->csr_stale = 1;
    return t;
}

int cs_topo_add_link(cs_topo_t *t, int u, int v)
{
    CS_ASSERT(t && t->kind == CS_TOPO_CUSTOM);
    CS_ASSERT(u >= 0 && u < t->nodes && v >= 0 && v < t->nodes);
    CS_ASSERT(u != v);
    CS_ASSERT(t->nlinks < TOPO_MAX_CHANNELS / 2);
    if (t->nlinks == t->cap_links) {
        t->cap_links = t->cap_links ? 2 * t->cap_links : 16;
        t->lu = cs_realloc(t->lu, (size_t)t->cap_links * sizeof *t->lu);
        t->lv = cs_realloc(t->lv, (size_t)t->cap_links * sizeof *t->lv);
    }
    push_link(t, u, v);
    /* Shortest paths may have changed: drop them; rebuild the CSR lazily so
     * that adding m links costs O(m), not O(m^2). */
    t->csr_stale = 1;
    drop_bfs(t);
    return 2 * (t->nlinks - 1);
}

void cs_topo_set_route(cs_topo_t *t, cs_topo_route_fn fn, void *ctx)
{
    CS_ASSERT(t && t->kind == CS_TOPO_CUSTOM);
    t->route_fn = fn;
    t->route_adaptive = NULL;
    t->route_ctx = ctx;
}

void cs_topo_set_route_adaptive(cs_topo_t *t, cs_topo_route_adaptive_fn fn, void *ctx)
{
    CS_ASSERT(t && t->kind == CS_TOPO_CUSTOM);
    t->route_fn = NULL;
    t->route_adaptive = fn;
    t->route_ctx = ctx;
}

int cs_topo_is_adaptive(const cs_topo_t *t) { return t->route_adaptive != NULL; }

void cs_topo_set_grid(cs_topo_t *t, int rows, int cols)
{
    CS_ASSERT(t && t->kind == CS_TOPO_CUSTOM);
    CS_ASSERT(rows >= 1 && cols >= 1 && (int64_t)rows * cols == t->nodes);
    t->rows = rows;
    t->cols = cols;
}

void cs_topo_free(cs_topo_t *t)
{
    if (!t)
        return;
    drop_bfs(t);
    free(t->name);
    free(t->lu);
    free(t->lv);
    free(t->off);
    free(t->adj);
    free(t->share);
    free(t);
}

/* ---- shared capacity ------------------------------------------------------ */

static int32_t share_root(const cs_topo_t *t, int32_t c)
{
    while (c < t->nshare && t->share[c] != c)
        c = t->share[c];
    return c;
}

void cs_topo_share_channels(cs_topo_t *t, int a, int b)
{
    int n = 2 * t->nlinks, ra, rb;
    CS_ASSERT(a >= 0 && b >= 0 && a < n && b < n);
    if (t->nshare < n) { /* channels added since: their own roots */
        t->share = cs_realloc(t->share, (size_t)n * sizeof *t->share);
        for (int c = t->nshare; c < n; c++)
            t->share[c] = c;
        t->nshare = n;
    }
    ra = share_root(t, a);
    rb = share_root(t, b);
    /* the lower id stays the root, so a group's resource does not depend on
     * the order of the calls; both paths are pointed at it (compression) */
    if (rb < ra) {
        int x = ra;
        ra = rb;
        rb = x;
    }
    t->share[rb] = ra;
    t->share[a] = ra;
    t->share[b] = ra;
}

int cs_topo_channel_resource(const cs_topo_t *t, int c)
{
    return t->share ? share_root(t, c) : c;
}

int cs_topo_has_shared(const cs_topo_t *t)
{
    return t->share != NULL;
}

/* ---- queries ------------------------------------------------------------- */

cs_topo_kind_t cs_topo_kind(const cs_topo_t *t)
{
    return t->kind;
}
static const char *const kind_names[] = {"line",     "ring",      "mesh",     "torus",
                                          "complete", "hypercube", "cylinder", "custom"};

const char *cs_topo_kind_name(cs_topo_kind_t k)
{
    return k >= 0 && k <= CS_TOPO_CUSTOM ? kind_names[k] : "custom";
}

int cs_topo_kind_parse(const char *name, size_t len)
{
    for (int k = 0; k < CS_TOPO_CUSTOM; k++)
        if (strlen(kind_names[k]) == len && !strncmp(name, kind_names[k], len))
            return k;
    return -1;
}

int cs_topo_new_shape(cs_topo_kind_t k, int p, int rows, int cols, cs_topo_t **out,
                      cs_error_t *err)
{
    switch (k) {
    case CS_TOPO_LINE: return cs_topo_new_line(p, out, err);
    case CS_TOPO_RING: return cs_topo_new_ring(p, out, err);
    case CS_TOPO_MESH: return cs_topo_new_mesh(rows, cols, out, err);
    case CS_TOPO_TORUS: return cs_topo_new_torus(rows, cols, out, err);
    case CS_TOPO_COMPLETE: return cs_topo_new_complete(p, out, err);
    case CS_TOPO_HYPERCUBE: return cs_topo_new_hypercube(p, out, err);
    case CS_TOPO_CYLINDER: return cs_topo_new_cylinder(rows, cols, out, err);
    default: return cs_error_set(err, CS_ERR_INTERNAL, "a custom topology is no standard shape");
    }
}

const char *cs_topo_name(const cs_topo_t *t)
{
    return t->name;
}
int cs_topo_nodes(const cs_topo_t *t)
{
    return t->nodes;
}
int cs_topo_channels(const cs_topo_t *t)
{
    return 2 * t->nlinks;
}

int cs_topo_channel_src(const cs_topo_t *t, int c)
{
    CS_ASSERT(c >= 0 && c < 2 * t->nlinks);
    return chan_src(t, c);
}

int cs_topo_channel_dst(const cs_topo_t *t, int c)
{
    CS_ASSERT(c >= 0 && c < 2 * t->nlinks);
    return chan_dst(t, c);
}

int cs_topo_find_channel(const cs_topo_t *t, int u, int v)
{
    CS_ASSERT(u >= 0 && u < t->nodes && v >= 0 && v < t->nodes);
    if (u == v)
        return -1;
    if (t->kind == CS_TOPO_COMPLETE)
        return (int)(2 * complete_link(t->nodes, u < v ? u : v, u < v ? v : u) + (u > v));
    t = fresh(t);
    int lo = t->off[u], hi = t->off[u + 1];
    while (lo < hi) { /* first channel whose destination is >= v */
        int mid = lo + (hi - lo) / 2;
        if (chan_dst(t, t->adj[mid]) < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < t->off[u + 1] && chan_dst(t, t->adj[lo]) == v) ? t->adj[lo] : -1;
}

int cs_topo_degree(const cs_topo_t *t, int u)
{
    CS_ASSERT(u >= 0 && u < t->nodes);
    t = fresh(t);
    return t->off[u + 1] - t->off[u];
}

int cs_topo_grid(const cs_topo_t *t, int *rows, int *cols)
{
    if (t->rows < 1)
        return 0;
    *rows = t->rows;
    *cols = t->cols;
    return 1;
}

int cs_topo_max_route_len(const cs_topo_t *t)
{
    /* A custom route is a path without repeated nodes.  At least 1 so that
     * callers never size a buffer of zero hops. */
    return t->kind == CS_TOPO_CUSTOM ? max1(t->nodes - 1) : t->max_route;
}

/* ---- routing of the standard shapes --------------------------------------- */

/* Routes along a line dimension from position a to b.  The dimension's
 * link k (joining positions k and k+1) has id base + k*stride. */
static int line_dim(int a, int b, int64_t base, int64_t stride, cs_hop_t *hops, int h)
{
    for (int i = a; i < b; i++, h++) {
        hops[h].chan = (int32_t)(2 * (base + i * stride));
        hops[h].vc = 0;
    }
    for (int i = a; i > b; i--, h++) {
        hops[h].chan = (int32_t)(2 * (base + (i - 1) * stride) + 1);
        hops[h].vc = 0;
    }
    return h;
}

/* Routes along a wrap-around dimension of size n from position a to b; its
 * link k (joining k and (k+1) mod n) has id base + k*stride.
 *
 * Direction: the shorter way round; at exactly half way (fwd == n/2, n even)
 * the increasing direction, the documented tie rule.  Size 2 has one link,
 * taken forward from 0 and backward from 1.
 *
 * Dateline: the hops after the one that crosses the wrap link (n-1 <-> 0)
 * get vc = 1; the crossing hop itself and those before it have vc = 0.  A
 * minimal route crosses the wrap at most once, so within one dimension the
 * channel dependencies on vc 0 never close the ring through the wrap link
 * and those on vc 1 never reach it: both are acyclic.  vc restarts at 0 in
 * each dimension (dimension order already orders the dimensions). */
static int ring_dim(int n, int a, int b, int64_t base, int64_t stride, cs_hop_t *hops, int h)
{
    if (a == b)
        return h;
    if (n == 2) {
        hops[h].chan = (int32_t)(2 * base + (a == 1));
        hops[h].vc = 0;
        return h + 1;
    }
    int fwd = (b - a + n) % n;
    int up = 2 * fwd <= n;
    int steps = up ? fwd : n - fwd;
    uint8_t vc = 0;
    for (int s = 0, i = a; s < steps; s++, h++) {
        int k = up ? i : (i == 0 ? n - 1 : i - 1);
        int wrap = up ? (i == n - 1) : (i == 0);
        hops[h].chan = (int32_t)(2 * (base + k * stride) + !up);
        hops[h].vc = vc;
        if (wrap)
            vc = 1;
        i = up ? (i + 1) % n : (i + n - 1) % n;
    }
    return h;
}

/* Mesh: X first (along the source's row to the destination's column), then
 * Y (along the destination's column). */
static int route_mesh(const cs_topo_t *t, int src, int dst, cs_hop_t *hops)
{
    int R = t->rows, C = t->cols;
    int rs = src / C, cs = src % C, rd = dst / C, cd = dst % C;
    int h = line_dim(cs, cd, (int64_t)rs * (C - 1), 1, hops, 0);
    return line_dim(rs, rd, (int64_t)R * (C - 1) + cd, C, hops, h);
}

/* Torus: dimension order as the mesh, each dimension a ring_dim. */
static int route_torus(const cs_topo_t *t, int src, int dst, cs_hop_t *hops)
{
    int R = t->rows, C = t->cols, hc = ring_links(C);
    int rs = src / C, cs = src % C, rd = dst / C, cd = dst % C;
    int h = ring_dim(C, cs, cd, (int64_t)rs * hc, 1, hops, 0);
    return ring_dim(R, rs, rd, (int64_t)R * hc + cd, C, hops, h);
}

/* Cylinder: round the ring (the torus's row rule), then down the column
 * (the mesh's column rule). */
static int route_cylinder(const cs_topo_t *t, int src, int dst, cs_hop_t *hops)
{
    int R = t->rows, C = t->cols, hc = ring_links(C);
    int rs = src / C, cs = src % C, rd = dst / C, cd = dst % C;
    int h = ring_dim(C, cs, cd, (int64_t)rs * hc, 1, hops, 0);
    return line_dim(rs, rd, (int64_t)R * hc + cd, C, hops, h);
}

/* Hypercube e-cube: fix the differing bits from the lowest up. */
static int route_cube(const cs_topo_t *t, int src, int dst, cs_hop_t *hops)
{
    int h = 0, u = src;
    for (int b = 0; b < t->dim; b++) {
        if (!((src ^ dst) & (1 << b)))
            continue;
        int set = (u >> b) & 1;
        hops[h].chan = (int32_t)(2 * cube_link(t->nodes, b, u & ~(1 << b)) + set);
        hops[h].vc = 0;
        h++;
        u ^= 1 << b;
    }
    return h;
}

/* ---- routing of custom topologies ----------------------------------------- */

/* Next-hop table toward d: BFS from d (links are full duplex, so distances
 * to d equal distances from d), then each node takes the lowest-id channel
 * that gets one hop closer.  Lowest-id at every node makes the route from
 * any intermediate node a suffix of the route through it.  O(n + m) time;
 * 4n bytes kept, 8n temporary. */
static int32_t *bfs_toward(const cs_topo_t *t, int d)
{
    int n = t->nodes;
    int32_t *dist = cs_malloc((size_t)n * sizeof *dist);
    int32_t *queue = cs_malloc((size_t)n * sizeof *queue);
    int32_t *next = cs_malloc((size_t)n * sizeof *next);
    for (int u = 0; u < n; u++) {
        dist[u] = -1;
        next[u] = -1;
    }
    int head = 0, tail = 0;
    dist[d] = 0;
    queue[tail++] = d;
    while (head < tail) {
        int u = queue[head++];
        for (int i = t->off[u]; i < t->off[u + 1]; i++) {
            int v = chan_dst(t, t->adj[i]);
            if (dist[v] < 0) {
                dist[v] = dist[u] + 1;
                queue[tail++] = v;
            }
        }
    }
    for (int u = 0; u < n; u++) {
        if (dist[u] <= 0)
            continue;
        for (int i = t->off[u]; i < t->off[u + 1]; i++) {
            int32_t c = t->adj[i];
            if (dist[chan_dst(t, c)] == dist[u] - 1 && (next[u] < 0 || c < next[u]))
                next[u] = c;
        }
    }
    free(dist);
    free(queue);
    return next;
}

/* BFS route, computing the destination's table on first use.  Memory: a
 * pointer per node, plus 4 * nodes bytes per distinct destination routed to
 * (all-pairs traffic on n nodes: 4 n^2 bytes, e.g. 436 MB for 10,440). */
static int route_bfs(const cs_topo_t *ct, int src, int dst, cs_hop_t *hops)
{
    cs_topo_t *t = (cs_topo_t *)ct; /* cache fill, see top-of-file comment */
    if (!t->bfs_next)
        t->bfs_next = cs_calloc((size_t)t->nodes, sizeof *t->bfs_next);
    if (!t->bfs_next[dst])
        t->bfs_next[dst] = bfs_toward(t, dst);
    const int32_t *next = t->bfs_next[dst];
    int h = 0;
    for (int u = src; u != dst; u = chan_dst(t, next[u]), h++) {
        if (next[u] < 0)
            return -1;
        CS_ASSERT(h < t->nodes - 1);
        hops[h].chan = next[u];
        hops[h].vc = 0;
    }
    return h;
}

/* A caller's route function, with its answer checked: a broken route would
 * silently corrupt every result computed on it. */
static int route_user(const cs_topo_t *t, int src, int dst, const cs_topo_load_t *load,
                      cs_hop_t *hops)
{
    int max = cs_topo_max_route_len(t);
    int h = t->route_adaptive ? t->route_adaptive(t, t->route_ctx, src, dst, load, hops, max)
                              : t->route_fn(t, t->route_ctx, src, dst, hops, max);
    CS_ASSERT(h >= -1 && h <= max && h != 0);
    int u = src;
    for (int i = 0; i < h; i++) {
        CS_ASSERT(hops[i].chan >= 0 && hops[i].chan < 2 * t->nlinks);
        CS_ASSERT(chan_src(t, hops[i].chan) == u);
        u = chan_dst(t, hops[i].chan);
    }
    CS_ASSERT(h < 0 || u == dst);
    return h;
}

int cs_topo_route(const cs_topo_t *t, int src, int dst, cs_hop_t *hops)
{
    return cs_topo_route_load(t, src, dst, NULL, hops);
}

int cs_topo_route_load(const cs_topo_t *t, int src, int dst, const cs_topo_load_t *load,
                       cs_hop_t *hops)
{
    CS_ASSERT(src >= 0 && src < t->nodes && dst >= 0 && dst < t->nodes);
    if (src == dst)
        return 0;
    switch (t->kind) {
    case CS_TOPO_LINE: return line_dim(src, dst, 0, 1, hops, 0);
    case CS_TOPO_RING: return ring_dim(t->nodes, src, dst, 0, 1, hops, 0);
    case CS_TOPO_MESH: return route_mesh(t, src, dst, hops);
    case CS_TOPO_TORUS: return route_torus(t, src, dst, hops);
    case CS_TOPO_CYLINDER: return route_cylinder(t, src, dst, hops);
    case CS_TOPO_COMPLETE:
        hops[0].chan = cs_topo_find_channel(t, src, dst);
        hops[0].vc = 0;
        return 1;
    case CS_TOPO_HYPERCUBE: return route_cube(t, src, dst, hops);
    case CS_TOPO_CUSTOM:
        t = fresh(t);
        return t->route_fn || t->route_adaptive ? route_user(t, src, dst, load, hops)
                                                : route_bfs(t, src, dst, hops);
    }
    CS_ASSERT(!"unknown topology kind");
    return -1;
}
