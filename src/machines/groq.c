/*
 * groq.c - the Groq Dragonfly as a machine (Abts et al., ISCA'22;
 * reference/groq-dragonfly.md; docs/groq.md).  The wiring and its routes
 * (contract in groq.h), explicit schedule files, the machine's spec and
 * hints, and its lines in `collsim topo` and `collsim run`.  The engine that
 * schedules vectors is groq_sched.c.
 *
 *   groq:nodes=N | racks=R [,hop=722ns,lanes=4,lane_gbps=25,vector=320,
 *        wire=328,paths=1|K|auto,even=0|1,align=0|1,clock=900MHz,epoch=252,
 *        link_cycles=L,schedule=FILE,dump=FILE]
 *
 * One tick is one picosecond: a 328-byte vector on a 100 Gb/s link is
 * 26,240 ticks and the hop latency 722,000, both exact.  Reductions cost
 * nothing (reduce_num = 0): the TSP's vector units reduce at least as fast as
 * a link delivers (the reference's assumption).
 */
#include "machines/groq.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/lines.h"
#include "core/outfile.h"
#include "machines/groq_sched.h"
#include "machines/machine.h"

#define A_TSPS CS_GROQ_NODE_TSPS
#define RACK_TSPS (CS_GROQ_NODE_TSPS * CS_GROQ_RACK_NODES)
#define NODE_PORTS 32 /* global ports of a node in nodes mode: 8 TSPs x 4 */

static const char *const keys[] = {"nodes", "racks", "hop", "lanes", "lane_gbps", "vector",
                                   "wire", "paths", "even", "align", "clock", "epoch",
                                   "link_cycles", "schedule", "dump", NULL};

/* Index of pair a < b among n items, lexicographic: 0 .. n(n-1)/2 - 1. */
static int64_t pair_index(int64_t a, int64_t b, int64_t n)
{
    return a * n - a * (a + 1) / 2 + (b - a - 1);
}

static int mod(int a, int n) { return ((a % n) + n) % n; }

/* ---- wiring --------------------------------------------------------------- */

int cs_groq_local_chan(const cs_groq_t *g, int x, int y)
{
    int n = x / A_TSPS, a = x % A_TSPS, b = y % A_TSPS;
    (void)g;
    CS_ASSERT(y / A_TSPS == n && a != b);
    int64_t l = (int64_t)n * 28 + pair_index(a < b ? a : b, a < b ? b : a, A_TSPS);
    return (int)(2 * l + (a > b));
}

/* nodes mode: the TSP index (0..7) in node `from` owning the port to `to` */
static int owner_nodes(int from, int to) { return mod(to - from - 1, CS_GROQ_MAX_NODES) / 4; }
/* racks mode: the TSP index in node j (of its rack) owning copy c to node j' */
static int owner_rack(int j, int jj, int c) { return (8 * c + mod(jj - j - 1, 9)) / 2; }
/* racks mode: the TSP index in rack A (0..71) owning the port to rack B */
static int owner_inter(int a, int b) { return mod(b - a - 1, CS_GROQ_MAX_RACKS) / 2; }

int cs_groq_node_link(const cs_groq_t *g, int from, int to, int copy, int *owner, int *landing)
{
    int64_t l;
    if (from == to || from < 0 || to < 0 || from >= g->nodes || to >= g->nodes)
        return -1;
    if (!g->racks) {
        if (copy != 0)
            return -1;
        *owner = from * A_TSPS + owner_nodes(from, to);
        *landing = to * A_TSPS + owner_nodes(to, from);
        l = g->base_mid + pair_index(from < to ? from : to, from < to ? to : from, g->nodes);
    } else {
        int rack = from / CS_GROQ_RACK_NODES, j = from % CS_GROQ_RACK_NODES;
        int jj = to % CS_GROQ_RACK_NODES;
        if (to / CS_GROQ_RACK_NODES != rack || copy < 0 || copy > 1)
            return -1;
        *owner = from * A_TSPS + owner_rack(j, jj, copy);
        *landing = to * A_TSPS + owner_rack(jj, j, copy);
        l = g->base_mid + (int64_t)rack * 72 +
            2 * pair_index(j < jj ? j : jj, j < jj ? jj : j, CS_GROQ_RACK_NODES) + copy;
    }
    return (int)(2 * l + (from > to));
}

int cs_groq_rack_link(const cs_groq_t *g, int from, int to, int *owner, int *landing)
{
    if (!g->racks || from == to || from < 0 || to < 0 || from >= g->racks || to >= g->racks)
        return -1;
    *owner = from * RACK_TSPS + owner_inter(from, to);
    *landing = to * RACK_TSPS + owner_inter(to, from);
    int64_t l = g->base_top + pair_index(from < to ? from : to, from < to ? to : from, g->racks);
    return (int)(2 * l + (from > to));
}

static int push_local(const cs_groq_t *g, int x, int y, int32_t *chans, int h)
{
    if (x != y)
        chans[h++] = cs_groq_local_chan(g, x, y);
    return h;
}

/* Route between two TSPs of one group (the whole machine in nodes mode, a
 * rack in racks mode); the link copy used is `copy` (-1: the better one). */
static int route_group(const cs_groq_t *g, int x, int y, int copy, int32_t *chans, int h)
{
    int nx = x / A_TSPS, ny = y / A_TSPS, o, l;
    if (nx == ny)
        return push_local(g, x, y, chans, h);
    if (copy < 0 && g->racks) {
        int o1, l1, c0, c1;
        cs_groq_node_link(g, nx, ny, 0, &o, &l);
        cs_groq_node_link(g, nx, ny, 1, &o1, &l1);
        c0 = (o != x) + (l != y);
        c1 = (o1 != x) + (l1 != y);
        copy = c1 < c0;
    }
    int ch = cs_groq_node_link(g, nx, ny, copy < 0 ? 0 : copy, &o, &l);
    CS_ASSERT(ch >= 0);
    h = push_local(g, x, o, chans, h);
    chans[h++] = ch;
    return push_local(g, l, y, chans, h);
}

static int rack_of(int tsp) { return tsp / RACK_TSPS; }

static int route_from(const cs_groq_t *g, int src, int dst, int32_t *chans, int h)
{
    if (g->racks && rack_of(src) != rack_of(dst)) {
        int o, l;
        int ch = cs_groq_rack_link(g, rack_of(src), rack_of(dst), &o, &l);
        CS_ASSERT(ch >= 0);
        h = route_group(g, src, o, -1, chans, h);
        chans[h++] = ch;
        return route_group(g, l, dst, -1, chans, h);
    }
    return route_group(g, src, dst, -1, chans, h);
}

int cs_groq_route(const cs_groq_t *g, int src, int dst, int32_t *chans)
{
    CS_ASSERT(src != dst);
    return route_from(g, src, dst, chans, 0);
}

int cs_groq_paths(const cs_groq_t *g, int src, int dst)
{
    int nx = src / A_TSPS, ny = dst / A_TSPS;
    if (src == dst)
        return 0;
    if (nx == ny)
        return A_TSPS - 1;             /* direct + 6 two-hop paths in the K8 */
    if (!g->racks)
        return g->nodes - 1;           /* direct + every other node */
    if (rack_of(src) == rack_of(dst))
        return 2 + CS_GROQ_RACK_NODES - 2; /* both copies + the 7 other nodes */
    return g->racks - 1;               /* direct + every other rack */
}

/* The intermediate TSP of path j >= 1 (racks mode, same rack: j >= 2). */
static int via_of(const cs_groq_t *g, int src, int dst, int j)
{
    int nx = src / A_TSPS, ny = dst / A_TSPS, o, l;
    if (nx == ny) {
        /* the other TSPs of the node, from src + 1 on, skipping dst */
        int v = src % A_TSPS, k = 0;
        for (;;) {
            v = (v + 1) % A_TSPS;
            if (v == dst % A_TSPS)
                continue;
            if (++k == j)
                return nx * A_TSPS + v;
        }
    }
    if (!g->racks) {
        /* node K = ny + 1, ny + 2, ... (mod nodes), skipping nx: where the
         * link from nx lands */
        int K = ny, k = 0;
        for (;;) {
            K = (K + 1) % g->nodes;
            if (K == nx)
                continue;
            if (++k == j)
                break;
        }
        cs_groq_node_link(g, nx, K, 0, &o, &l);
        return l;
    }
    int A = rack_of(src), B = rack_of(dst);
    if (A == B) {
        int base = A * CS_GROQ_RACK_NODES, K = ny - base, k = 1;
        for (;;) {
            K = (K + 1) % CS_GROQ_RACK_NODES;
            if (base + K == nx)
                continue;
            if (++k == j)
                break;
        }
        cs_groq_node_link(g, nx, base + K, 0, &o, &l);
        return l;
    }
    int C = B, k = 0;
    for (;;) {
        C = (C + 1) % g->racks;
        if (C == A)
            continue;
        if (++k == j)
            break;
    }
    cs_groq_rack_link(g, A, C, &o, &l);
    return l;
}

int cs_groq_path(const cs_groq_t *g, int src, int dst, int j, int32_t *chans)
{
    CS_ASSERT(j >= 0 && j < cs_groq_paths(g, src, dst));
    if (j == 0)
        return cs_groq_route(g, src, dst, chans);
    if (g->racks && src / A_TSPS != dst / A_TSPS && rack_of(src) == rack_of(dst) && j == 1) {
        /* the copy the minimal route does not take */
        int32_t tmp[CS_GROQ_MAX_PATH];
        int h0 = route_group(g, src, dst, 0, tmp, 0), h1 = route_group(g, src, dst, 1, tmp, 0);
        return route_group(g, src, dst, h1 < h0 ? 0 : 1, chans, 0);
    }
    int v = via_of(g, src, dst, j);
    int h = v == src ? 0 : route_from(g, src, v, chans, 0);
    return v == dst ? h : route_from(g, v, dst, chans, h);
}

/* Builds the topology with links in the id order groq.h describes. */
static void build_topo(cs_groq_t *g, cs_topo_t *t)
{
    int64_t expect = 0;
    for (int n = 0; n < g->nodes; n++)
        for (int a = 0; a < A_TSPS; a++)
            for (int b = a + 1; b < A_TSPS; b++, expect++)
                CS_ASSERT(cs_topo_add_link(t, n * A_TSPS + a, n * A_TSPS + b) == 2 * expect);
    g->links_node = expect;
    g->base_mid = expect;
    if (!g->racks) {
        for (int G = 0; G < g->nodes; G++)
            for (int H = G + 1; H < g->nodes; H++, expect++) {
                int o, l;
                cs_groq_node_link(g, G, H, 0, &o, &l);
                CS_ASSERT(cs_topo_add_link(t, o, l) == 2 * expect);
            }
        g->links_mid = expect - g->base_mid;
        g->base_top = expect;
        return;
    }
    for (int A = 0; A < g->racks; A++)
        for (int j = 0; j < CS_GROQ_RACK_NODES; j++)
            for (int jj = j + 1; jj < CS_GROQ_RACK_NODES; jj++)
                for (int c = 0; c < 2; c++, expect++) {
                    int o, l, base = A * CS_GROQ_RACK_NODES;
                    cs_groq_node_link(g, base + j, base + jj, c, &o, &l);
                    CS_ASSERT(cs_topo_add_link(t, o, l) == 2 * expect);
                }
    g->links_mid = expect - g->base_mid;
    g->base_top = expect;
    for (int A = 0; A < g->racks; A++)
        for (int B = A + 1; B < g->racks; B++, expect++) {
            int o, l;
            cs_groq_rack_link(g, A, B, &o, &l);
            CS_ASSERT(cs_topo_add_link(t, o, l) == 2 * expect);
        }
    g->links_top = expect - g->base_top;
}

static int topo_route(const cs_topo_t *t, void *ctx, int src, int dst, cs_hop_t *hops, int max)
{
    int32_t chans[CS_GROQ_MAX_ROUTE];
    int h = cs_groq_route(ctx, src, dst, chans);
    (void)t;
    if (h > max)
        return -1;
    for (int i = 0; i < h; i++)
        hops[i] = (cs_hop_t){chans[i], 0};
    return h;
}

/* ---- wiring facts ------------------------------------------------------------ */

/* Diameter of the node-level graph (nodes as vertices, the links between
 * them as edges).  The topology exists, so igraph can fail only for memory,
 * where its default handler aborts: the error code is not reachable. */
static int node_diameter(const cs_groq_t *g)
{
    int32_t *node = cs_malloc((size_t)g->tsps * sizeof *node);
    int diam = 0;
    cs_error_t err;
    for (int v = 0; v < g->tsps; v++)
        node[v] = v / A_TSPS;
    CS_ASSERT(cs_topo_group_diameter(g->topo, node, g->nodes, &diam, &err) == CS_OK);
    free(node);
    return diam;
}

void cs_groq_wiring(const cs_groq_t *g, cs_groq_wiring_t *out)
{
    int32_t chans[CS_GROQ_MAX_ROUTE];
    int max = g->tsps > 1 ? 1 : 0;
    out->group_diameter = g->nodes > 1 ? node_diameter(g) : 0;
    out->paper_diameter = g->nodes > 1 ? out->group_diameter + 2 : max;
    /* Routes depend only on the positions of src and dst in their group and
     * on the group offset (the port rules are rotations), so one source
     * group against every offset covers all pairs. */
    if (!g->racks) {
        for (int H = 1; H < g->nodes; H++)
            for (int a = 0; a < A_TSPS; a++)
                for (int b = 0; b < A_TSPS; b++) {
                    /* node 0 to node H covers offset H; offsets 33 - H
                     * appear as node H to node 0 */
                    int h1 = cs_groq_route(g, a, H * A_TSPS + b, chans);
                    int h2 = cs_groq_route(g, H * A_TSPS + b, a, chans);
                    max = h1 > max ? h1 : max;
                    max = h2 > max ? h2 : max;
                }
    } else {
        for (int a = 0; a < RACK_TSPS; a++)
            for (int b = 0; b < RACK_TSPS; b++)
                if (a != b) {
                    int h = cs_groq_route(g, a, b, chans);
                    max = h > max ? h : max;
                }
        for (int B = 1; B < g->racks; B++)
            for (int a = 0; a < RACK_TSPS; a++)
                for (int b = 0; b < RACK_TSPS; b++) {
                    int h1 = cs_groq_route(g, a, B * RACK_TSPS + b, chans);
                    int h2 = cs_groq_route(g, B * RACK_TSPS + b, a, chans);
                    max = h1 > max ? h1 : max;
                    max = h2 > max ? h2 : max;
                }
    }
    out->max_route = max;
}

/* ---- explicit schedules -------------------------------------------------------- */

static void fmt_time(int64_t ticks, char *buf, size_t len)
{
    snprintf(buf, len, "%lld.%03lldns", (long long)(ticks / 1000), (long long)(ticks % 1000));
}

void cs_groq_schedule_write(const cs_groq_t *g, FILE *f, int64_t msg, int64_t vec, int32_t chan,
                            int64_t start)
{
    char t[48];
    if (start % g->slot == 0)
        snprintf(t, sizeof t, "%lld", (long long)(start / g->slot));
    else
        fmt_time(start, t, sizeof t);
    fprintf(f, "%lld.%lld %d->%d %s\n", (long long)msg, (long long)vec,
            cs_topo_channel_src(g->topo, chan), cs_topo_channel_dst(g->topo, chan), t);
}

static int parse_i64(const char *s, char **end, int64_t *out)
{
    errno = 0;
    long long v = strtoll(s, end, 10);
    if (*end == s || errno || v < 0 || !(**end == 0 || **end == '.' || **end == '-'))
        return -1;
    *out = v;
    return 0;
}

static int by_chan(const void *pa, const void *pb)
{
    const cs_groq_slot_t *a = pa, *b = pb;
    if (a->chan != b->chan)
        return a->chan < b->chan ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

static int by_vector(const void *pa, const void *pb)
{
    const cs_groq_slot_t *a = pa, *b = pb;
    if (a->msg != b->msg)
        return a->msg < b->msg ? -1 : 1;
    if (a->vec != b->vec)
        return a->vec < b->vec ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

static int sched_line(cs_groq_t *g, const char *path, int line, char *text, cs_groq_slot_t *out,
                      cs_error_t *err)
{
    char *tok[4], *save = NULL, *end;
    int n = 0;
    for (char *w = strtok_r(text, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save))
        if (n < 4)
            tok[n++] = w;
        else
            return cs_error_set(err, CS_ERR_PARSE, "%s:%d: unexpected '%s' after the slot", path,
                                line, w);
    if (n != 3)
        return cs_error_set(err, CS_ERR_PARSE,
                            "%s:%d: expected 'MESSAGE.VECTOR FROM->TO SLOT' (e.g. '0.0 0->1 0'), "
                            "found %d field(s)",
                            path, line, n);
    int64_t from, to;
    if (parse_i64(tok[0], &end, &out->msg) || *end != '.' ||
        parse_i64(end + 1, &end, &out->vec) || *end)
        return cs_error_set(err, CS_ERR_PARSE,
                            "%s:%d: vector '%s' is not MESSAGE.VECTOR (two whole numbers, e.g. 3.0)",
                            path, line, tok[0]);
    if (parse_i64(tok[1], &end, &from) || strncmp(end, "->", 2) ||
        parse_i64(end + 2, &end, &to) || *end)
        return cs_error_set(err, CS_ERR_PARSE, "%s:%d: link '%s' is not FROM->TO (TSP ids, e.g. 0->1)",
                            path, line, tok[1]);
    if (from >= g->tsps || to >= g->tsps)
        return cs_error_set(err, CS_ERR_RANGE, "%s:%d: link %s: TSPs are 0..%d", path, line,
                            tok[1], g->tsps - 1);
    out->chan = from == to ? -1 : cs_topo_find_channel(g->topo, (int)from, (int)to);
    if (out->chan < 0)
        return cs_error_set(err, CS_ERR_RANGE, "%s:%d: no link %s: TSPs %lld and %lld are not "
                            "adjacent", path, line, tok[1], (long long)from, (long long)to);
    const char *s = tok[2];
    int digits = *s != 0;
    for (const char *p = s; *p; p++)
        digits &= *p >= '0' && *p <= '9';
    if (digits) {
        int64_t k;
        if (parse_i64(s, &end, &k) || *end || k > INT64_MAX / g->slot)
            return cs_error_set(err, CS_ERR_RANGE, "%s:%d: slot '%s' is too large", path, line, s);
        out->start = k * g->slot;
    } else {
        double sec;
        cs_error_t e2;
        if (cs_units_parse_seconds(s, 1.0, &sec, &e2) || !(sec >= 0) || sec > 1e6)
            return cs_error_set(err, CS_ERR_PARSE,
                                "%s:%d: slot '%s' is neither a slot number nor a time (e.g. "
                                "722ns)",
                                path, line, s);
        out->start = llround(sec * 1e12);
    }
    out->line = line;
    return CS_OK;
}

static void fmt_slot(const cs_groq_t *g, int64_t start, char *buf, size_t len)
{
    char t[48];
    fmt_time(start, t, sizeof t);
    snprintf(buf, len, "slot %lld (%s)", (long long)(start / g->slot), t);
}

int cs_groq_schedule_load(cs_groq_t *g, const cs_source_t *file, cs_error_t *err)
{
    const char *path = file->name;
    cs_lines_t *src;
    char *text = NULL;
    size_t cap = 0;
    int line = 0, rc = CS_OK, got;
    int64_t n = 0, nalloc = 0;
    cs_groq_slot_t *v = NULL;
    if ((rc = cs_source_lines(file, &src, err))) {
        cs_error_prefix(err, "key 'schedule'");
        return rc;
    }
    while ((got = cs_lines_next_copy(src, &text, &cap)) > 0) {
        line++;
        char *hash = strchr(text, '#');
        if (hash)
            *hash = 0;
        if (strspn(text, " \t\r\n") == strlen(text))
            continue;
        if (n == nalloc) {
            nalloc = nalloc ? 2 * nalloc : 64;
            v = cs_realloc(v, (size_t)nalloc * sizeof *v);
        }
        if ((rc = sched_line(g, path, line, text, &v[n], err)))
            break;
        n++;
    }
    if (!rc && got < 0)
        rc = cs_lines_error(got, path, line, err);
    free(text);
    cs_lines_free(src);
    char s1[96], t1[48];
    /* two vectors on one link direction at once */
    if (!rc && n > 1) {
        qsort(v, (size_t)n, sizeof *v, by_chan);
        for (int64_t i = 1; i < n && !rc; i++)
            if (v[i].chan == v[i - 1].chan && v[i].start < v[i - 1].start + g->slot) {
                fmt_slot(g, v[i].start, s1, sizeof s1);
                fmt_time(v[i - 1].start + g->slot, t1, sizeof t1);
                rc = cs_error_set(
                    err, CS_ERR_RANGE,
                    "%s:%d: conflict on link %d->%d in %s: vector %lld.%lld (line %d) and vector "
                    "%lld.%lld (line %d, there until %s) are on one link direction at once; a "
                    "vector holds a link for %lld ps and there is no arbitration",
                    path, v[i].line, cs_topo_channel_src(g->topo, v[i].chan),
                    cs_topo_channel_dst(g->topo, v[i].chan), s1, (long long)v[i].msg,
                    (long long)v[i].vec, v[i].line, (long long)v[i - 1].msg,
                    (long long)v[i - 1].vec, v[i - 1].line, t1, (long long)g->slot);
            }
    }
    /* each vector's placements form a path, a hop latency apart */
    if (!rc && n > 0) {
        qsort(v, (size_t)n, sizeof *v, by_vector);
        for (int64_t i = 1; i < n && !rc; i++) {
            const cs_groq_slot_t *p = &v[i - 1], *c = &v[i];
            if (p->msg != c->msg || p->vec != c->vec)
                continue;
            int at = cs_topo_channel_dst(g->topo, p->chan);
            if (cs_topo_channel_src(g->topo, c->chan) != at)
                rc = cs_error_set(err, CS_ERR_RANGE,
                                  "%s:%d: vector %lld.%lld leaves TSP %d but its previous link "
                                  "(line %d) took it to TSP %d",
                                  path, c->line, (long long)c->msg, (long long)c->vec,
                                  cs_topo_channel_src(g->topo, c->chan), p->line, at);
            else if (c->start < p->start + g->hop) {
                fmt_time(c->start, s1, sizeof s1);
                fmt_time(p->start + g->hop, t1, sizeof t1);
                rc = cs_error_set(err, CS_ERR_RANGE,
                                  "%s:%d: vector %lld.%lld leaves TSP %d at %s, before it has "
                                  "arrived there (%s: line %d plus the hop latency)",
                                  path, c->line, (long long)c->msg, (long long)c->vec, at, s1, t1,
                                  p->line);
            }
        }
    }
    if (rc) {
        free(v);
        return rc;
    }
    g->fixed = v;
    g->nfixed = n;
    return CS_OK;
}

/* ---- hints ------------------------------------------------------------------- */

/* A ring over all TSPs: node after node (racks mode: each rack's nodes
 * downwards, so that the rack's first and last nodes hold its links to the
 * previous and next rack); inside a node, from the TSP where the link from
 * the previous node lands to the TSP that owns the link to the next node,
 * so that every step of the ring is one link wherever the wiring allows. */
static void ring_hint(const cs_groq_t *g, int32_t *order)
{
    int N = g->nodes, k = 0;
    int32_t *seq = cs_malloc((size_t)N * sizeof *seq);
    int32_t *entry = cs_malloc((size_t)N * sizeof *entry), *exit_ = cs_malloc((size_t)N * sizeof *exit_);
    for (int i = 0; i < N; i++) {
        seq[i] = g->racks ? (i / 9) * 9 + 8 - i % 9 : i;
        entry[i] = exit_[i] = -1;
    }
    /* transition i: seq[i] -> seq[i+1] over a link with owner o[c] and
     * landing l[c]; the transitions with one candidate first (they fix
     * entries and exits), then the others in order, each avoiding a node
     * whose entry would be its exit */
    int (*cand)[2][2] = cs_malloc((size_t)N * sizeof *cand);
    int *ncand = cs_calloc((size_t)N, sizeof *ncand);
    for (int i = 0; N > 1 && i < N; i++) {
        int u = seq[i], w = seq[(i + 1) % N], o, l;
        for (int c = 0; c < 2; c++)
            if (cs_groq_node_link(g, u, w, c, &o, &l) >= 0 ||
                (c == 0 && g->racks && u / 9 != w / 9 &&
                 cs_groq_rack_link(g, u / 9, w / 9, &o, &l) >= 0 && o / 8 == u && l / 8 == w)) {
                cand[i][ncand[i]][0] = o;
                cand[i][ncand[i]++][1] = l;
            }
    }
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; N > 1 && i < N; i++) {
            int best = -1, best_score = -1, next = (i + 1) % N;
            if ((pass == 0) != (ncand[i] == 1))
                continue;
            for (int c = 0; c < ncand[i]; c++) {
                int score = (entry[i] < 0 || cand[i][c][0] != entry[i]) +
                            (exit_[next] < 0 || cand[i][c][1] != exit_[next]);
                if (score > best_score) {
                    best_score = score;
                    best = c;
                }
            }
            if (best >= 0) {
                exit_[i] = cand[i][best][0];
                entry[next] = cand[i][best][1];
            }
        }
    free(cand);
    free(ncand);
    for (int i = 0; i < N; i++) {
        int base = seq[i] * A_TSPS;
        if (entry[i] >= 0)
            order[k++] = entry[i];
        for (int t = 0; t < A_TSPS; t++)
            if (base + t != entry[i] && base + t != exit_[i])
                order[k++] = base + t;
        if (exit_[i] >= 0 && exit_[i] != entry[i])
            order[k++] = exit_[i];
    }
    CS_ASSERT(k == g->tsps);
    free(seq);
    free(entry);
    free(exit_);
}

/* ---- reports ------------------------------------------------------------------ */

static void report(const cs_machine_t *m, const cs_net_t *net, FILE *f)
{
    const cs_groq_t *g = m->impl;
    char buf[64];
    if (!net) {
        cs_groq_wiring_t w;
        cs_groq_wiring(g, &w);
        if (!g->racks && g->nodes == 1) {
            fprintf(f, "%-13s 1 node of 8 TSPs fully connected (K8, 28 links); 7 local ports per "
                       "TSP used, its 4 global ports free\n",
                    "wiring");
        } else if (!g->racks) {
            fprintf(f, "%-13s %d nodes x 8 TSPs: %lld intra-node links (K8, 28 per node), %lld "
                       "inter-node links (one per node pair); 7 local + 4 global ports per TSP\n",
                    "wiring", g->nodes, (long long)g->links_node, (long long)g->links_mid);
            fprintf(f, "%-13s minimal routes at most %d TSP hops; the paper's count %d "
                       "(local + global + local)\n",
                    "routes", w.max_route, w.paper_diameter);
        } else {
            fprintf(f, "%-13s %d rack%s x 9 nodes x 8 TSPs: %lld intra-node links, %lld "
                       "intra-rack links (each node pair of a rack twice), %lld inter-rack "
                       "links (one per rack pair)\n",
                    "wiring", g->racks, g->racks > 1 ? "s" : "", (long long)g->links_node,
                    (long long)g->links_mid, (long long)g->links_top);
            fprintf(f, "%-13s 60 per node: 44 electrical (28 in-node, 16 in-rack), 16 optical "
                       "to other racks (73.3%% short)\n",
                    "cables");
            fprintf(f, "%-13s rack level (the paper's 2 in the source rack + 1 global + 2 in "
                       "the destination rack): %d; minimal routes at most %d TSP hops\n",
                    "diameter", w.paper_diameter, w.max_route);
        }
        int64_t sram = (int64_t)g->tsps * (INT64_C(220) << 20);
        cs_units_format_bytes(sram, buf, sizeof buf);
        fprintf(f, "%-13s %d TSPs x 220 MiB = %s (%.2f %s) of SRAM\n", "memory", g->tsps, buf,
                (double)sram / (sram >= INT64_C(1000000000000) ? 1e12 : 1e9),
                sram >= INT64_C(1000000000000) ? "TB" : "GB");
        return;
    }
    cs_groq_stats_t s;
    cs_groq_sched_stats(net, &s);
    fprintf(f, "schedule  %lld vectors of %lld messages on %lld link slots, no stall (no "
               "back-pressure, no arbitration); %lld on non-minimal paths, %lld from the "
               "explicit schedule\n",
            (long long)s.vectors, (long long)s.messages, (long long)s.vector_hops,
            (long long)s.nonminimal, (long long)s.fixed);
    /* The waits are sums over vectors (vector-seconds, larger than the run
     * itself): said as the mean per vector, which has the unit of a time. */
    char a[48], b[48];
    double per = s.vectors > 0 ? m->tick_seconds / (double)s.vectors : 0;
    cs_units_format_seconds(s.source_wait * per, a, sizeof a);
    cs_units_format_seconds(s.sram_wait * per, b, sizeof b);
    fprintf(f, "waits     per vector on average: %s at its source, %s in intermediate SRAM; "
               "largest calendar %lld interval(s)\n",
            a, b, (long long)s.max_intervals);
    if (g->align) {
        cs_units_format_seconds((double)g->align_ticks * m->tick_seconds, a, sizeof a);
        fprintf(f, "alignment %s before the first vector: (floor(%lld/%lld)+1) epochs x %d "
                   "levels of the spanning tree\n",
                a, (long long)g->link_cycles, (long long)g->epoch_cycles, g->align_height);
    }
}

/* ---- the machine -------------------------------------------------------------- */

static int net_new(const void *ctx, cs_sim_t *sim, const cs_net_hooks_t *hooks, cs_net_t **out,
                   cs_error_t *err)
{
    return cs_groq_sched_new(ctx, sim, hooks, out, err);
}

/* Figures: the group matrix beside one node's K8 (a single node: its
 * graph). */
static void layout(const cs_machine_t *m, cs_machine_layout_t *out)
{
    out->kind = m->ngroups > 1 ? CS_LAYOUT_DRAGONFLY : CS_LAYOUT_GRAPH;
}

/* --predict: the paper's all-reduce latency (ISCA'22 §5.6; reference
 * groq-dragonfly.md §3.2): small tensors reduce in one pipelined hop per
 * stage, three stages (inside the node, across the global links, inside
 * the node again) when the ranks span nodes, one (the K8) when they share
 * one: h x hop, 722 ns x 3 = 2,166 ns on 256 TSPs.  The ranks' nodes are
 * taken from natural placement (rank r on TSP r) or the g= option of the
 * gateway algorithm. */
static int predict(const cs_machine_t *m, const cs_model_request_t *req, cs_model_t *out,
                   cs_error_t *err)
{
    const cs_groq_t *g = m->impl;
    const char *gs = cs_model_request_opt(req, "g");
    int group = gs ? atoi(gs) : A_TSPS;
    char name[96];
    if (req->kind != CS_COLL_ALLREDUCE || strcmp(req->algo, "gateway"))
        return cs_error_set(err, CS_ERR_RANGE,
                            "the paper gives a closed form for allreduce/gateway only (its "
                            "3-hop all-reduce), not %s/%s",
                            cs_coll_name(req->kind), req->algo);
    if (g->racks)
        return cs_error_set(err, CS_ERR_RANGE,
                            "the paper's 3-hop all-reduce is for one Dragonfly level "
                            "(groq:nodes=N); racks take more hops");
    if (req->bytes > g->vec_bytes)
        return cs_error_set(err, CS_ERR_RANGE,
                            "the paper gives the latency of one vector (at most %lld bytes), "
                            "not of %lld bytes",
                            (long long)g->vec_bytes, (long long)req->bytes);
    if (group < 1)
        group = 1;
    int hops = req->P <= 1 ? 0 : req->P <= group ? 1 : 3;
    snprintf(name, sizeof name, "paper 5.6: %d hop%s x %g ns", hops, hops == 1 ? "" : "s",
             (double)g->hop / 1000.0);
    cs_model_set(out, (double)hops * (double)g->hop, name);
    out->show_seconds = 1;
    return CS_OK;
}

static void destroy(void *impl)
{
    cs_groq_t *g = impl;
    if (!g)
        return;
    free(g->fixed);
    free(g->dump_path);
    free(g->schedule_path);
    free(g);
}

static int create(cs_spec_t *spec, cs_machine_t *m, cs_error_t *err)
{
    int64_t nodes, racks, lanes, gbps, vec, wire, paths = 1, even, align, epoch, link_cycles;
    double hop, hz = 900e6;
    int rc;
    const char *v;
    char text[512], ptext[16];
    cs_error_t e2;

    if ((rc = cs_spec_get_int(spec, "nodes", CS_GROQ_MAX_NODES, 1, CS_GROQ_MAX_NODES, &nodes,
                              err)) ||
        (rc = cs_spec_get_int(spec, "racks", 0, 1, CS_GROQ_MAX_RACKS, &racks, err)) ||
        (rc = cs_spec_get_seconds(spec, "hop", 722e-9, &hop, err)) ||
        (rc = cs_spec_get_int(spec, "lanes", 4, 1, 64, &lanes, err)) ||
        (rc = cs_spec_get_int(spec, "lane_gbps", 25, 1, 10000, &gbps, err)) ||
        (rc = cs_spec_get_bytes(spec, "vector", 320, &vec, err)) ||
        (rc = cs_spec_get_bytes(spec, "wire", 328, &wire, err)) ||
        (rc = cs_spec_get_int(spec, "even", 0, 0, 1, &even, err)) ||
        (rc = cs_spec_get_int(spec, "align", 0, 0, 1, &align, err)) ||
        (rc = cs_spec_get_int(spec, "epoch", 252, 1, 1 << 20, &epoch, err)))
        return rc;
    if (cs_spec_get(spec, "nodes") && cs_spec_get(spec, "racks"))
        return cs_error_set(err, CS_ERR_USAGE,
                            "groq: keys 'nodes' and 'racks' exclude each other (nodes=N for up "
                            "to 33 nodes with one link per node pair, racks=R for racks of 9 "
                            "nodes)");
    if ((v = cs_spec_get(spec, "clock")) && (rc = cs_units_parse_hz(v, &hz, &e2)))
        return cs_error_set(err, rc, "key 'clock': %s", e2.msg);
    if (!(hz > 0))
        return cs_error_set(err, CS_ERR_RANGE, "key 'clock': must be > 0");
    if (!(hop > 0) || hop > 1.0)
        return cs_error_set(err, CS_ERR_RANGE, "key 'hop': must be > 0 and at most 1 s");
    if (vec < 1 || vec > (1 << 20))
        return cs_error_set(err, CS_ERR_RANGE, "key 'vector': %lld bytes; must be 1..1 MiB",
                            (long long)vec);
    if (wire < vec || wire > (1 << 21))
        return cs_error_set(err, CS_ERR_RANGE,
                            "key 'wire': %lld bytes; must be at least the vector (%lld bytes)",
                            (long long)wire, (long long)vec);
    if ((v = cs_spec_get(spec, "paths"))) {
        if (!strcmp(v, "auto"))
            paths = 0;
        else if ((rc = cs_spec_get_int(spec, "paths", 1, 1, 1 << 16, &paths, &e2)))
            return cs_error_set(err, rc, "%s (or 'auto')", e2.msg);
    }
    if (even && paths == 0)
        return cs_error_set(err, CS_ERR_USAGE,
                            "key 'even': even spreading needs a number of paths (paths=K), not "
                            "paths=auto");

    if ((rc = cs_spec_check_nodes(spec, (racks ? racks * CS_GROQ_RACK_NODES : nodes) * A_TSPS,
                                  err)))
        return rc;
    cs_groq_t *g = cs_calloc(1, sizeof *g);
    m->impl = g;
    g->racks = (int)racks;
    g->nodes = racks ? (int)racks * CS_GROQ_RACK_NODES : (int)nodes;
    g->tsps = g->nodes * A_TSPS;
    g->vec_bytes = vec;
    g->wire_bytes = wire;
    /* wire*8 bits at lanes*gbps Gb/s, in ps (rounded up to a whole tick) */
    g->slot = (wire * 8 * 1000 + lanes * gbps - 1) / (lanes * gbps);
    g->hop = llround(hop * 1e12);
    if (g->hop < g->slot)
        return cs_error_set(err, CS_ERR_RANGE,
                            "key 'hop': %g ns is shorter than a vector's time on the link "
                            "(%lld ps for %lld bytes at %lld x %lld Gb/s)",
                            hop * 1e9, (long long)g->slot, (long long)wire, (long long)lanes,
                            (long long)gbps);
    g->paths = (int)paths;
    g->even = (int)even;
    g->align = (int)align;
    g->clock_hz = hz;
    g->epoch_cycles = epoch;
    if ((rc = cs_spec_get_int(spec, "link_cycles", (int64_t)ceil(hop * hz - 1e-6), 0, 1 << 30,
                              &link_cycles, err)))
        return rc;
    g->link_cycles = link_cycles;

    m->topo = cs_topo_new_custom(g->tsps, "groq-dragonfly");
    g->topo = m->topo;
    build_topo(g, m->topo);
    cs_topo_set_route(m->topo, topo_route, g);
    /* the height of the BFS spanning tree from TSP 0 the start-up alignment
     * follows: TSP 0's eccentricity */
    if ((rc = cs_topo_eccentricity(m->topo, 0, &g->align_height, err)))
        return rc;
    /* (floor(L/epoch) + 1) epochs per level of the spanning tree, in ticks */
    g->align_ticks = llround((double)((link_cycles / epoch + 1) * g->align_height * epoch) / hz *
                             1e12);

    cs_source_t sched;
    if ((rc = cs_source_from_spec(spec, "schedule", &sched, err)))
        return rc;
    if (sched.name) {
        g->schedule_path = cs_strdup(sched.name);
        if ((rc = cs_groq_schedule_load(g, &sched, err)))
            return rc;
    }
    if ((rc = cs_source_output_from_spec(spec, "dump", &v, err)))
        return rc;
    if (v) {
        /* asked now, written after the run (whole or absent) */
        if ((rc = cs_outfile_check_writable("key 'dump'", v, err)))
            return rc;
        g->dump_path = cs_strdup(v);
    }

    m->tick_seconds = 1e-12;
    m->reduce_num = 0;
    m->reduce_den = 1;
    m->net.unit_bytes = vec; /* the natural segment: one vector */
    m->ring_order = cs_malloc((size_t)g->tsps * sizeof *m->ring_order);
    ring_hint(g, m->ring_order);
    if (g->nodes > 1) {
        m->node_group = cs_malloc((size_t)g->tsps * sizeof *m->node_group);
        for (int t = 0; t < g->tsps; t++)
            m->node_group[t] = t / A_TSPS;
        m->ngroups = g->nodes;
    }

    if (paths)
        snprintf(ptext, sizeof ptext, "%d", g->paths);
    else
        snprintf(ptext, sizeof ptext, "auto");
    snprintf(text, sizeof text,
             "groq:%s=%d,hop=%gns,lanes=%lld,lane_gbps=%lld,vector=%lld,wire=%lld,paths=%s,"
             "even=%d,align=%d,clock=%gMHz,epoch=%lld,link_cycles=%lld%s%s%s%s",
             racks ? "racks" : "nodes", racks ? g->racks : g->nodes, hop * 1e9, (long long)lanes,
             (long long)gbps, (long long)vec, (long long)wire, ptext, g->even, g->align, hz / 1e6,
             (long long)epoch, (long long)link_cycles, g->schedule_path ? ",schedule=" : "",
             g->schedule_path ? g->schedule_path : "", g->dump_path ? ",dump=" : "",
             g->dump_path ? g->dump_path : "");
    m->spec = cs_strdup(text);
    return CS_OK;
}

const cs_machine_type_t cs_machine_groq = {
    .name = "groq",
    /* "node" is the paper's: 8 TSPs fully connected (K8), the unit that
     * nodes= counts; ranks run on TSPs (rank_noun), as every title says */
    .summary = "Groq Dragonfly of TSPs: nodes of 8 TSPs fully connected (K8), up to 33 nodes "
               "(264 TSPs) or 145 racks of 9 nodes (10,440 TSPs), 12.5 GB/s links, 320-byte "
               "vectors placed in conflict-free slots at compile time (no back-pressure, no "
               "arbitration)",
    .usage = "groq:nodes=N (N <= 33 nodes of 8 TSPs) | groq:racks=R (R <= 145 racks of 9 "
             "nodes) [,hop=722ns][,lanes=4]"
             "[,lane_gbps=25][,vector=320][,wire=328][,paths=1|K|auto][,even=0|1][,align=0|1]"
             "[,clock=900MHz][,epoch=252][,link_cycles=L][,schedule=FILE][,dump=FILE]",
    .keys = keys,
    .file_keys = (const cs_filekey_t[]){{"schedule", CS_FILEKEY_READ},
                                        {"dump", CS_FILEKEY_WRITE}, {NULL, 0}},
    .example = "groq:nodes=8",
    .create = create,
    .destroy = destroy,
    .net_new = net_new,
    .report = report,
    .layout = layout,
    .predict = predict,
    .rank_noun = {"TSP", "TSPs"},
    .group_noun = {"node", "nodes"},
};
