/*
 * net.c - the generic network machine (issue 18): a user's own network of
 * hosts and switches, from a file (topo/netfile.h: edge list, GraphML,
 * SimGrid platform XML) or a generator (topo/netgen.h: fat-tree, dragonfly,
 * torus and mesh, HyperX, two-tier ML cluster, star), run on the channel
 * engine like every machine: packet and fluid modes, the suite, replays,
 * heatmaps.
 *
 * The model is the alpha-beta machine's (../shared/reference/alpha-beta.md)
 * with links of their own: every link has a bandwidth and a latency (k
 * parallel links one channel of k times the bandwidth), hosts have the
 * endpoint port rule (one send and one receive, `ports=K` for a K-port
 * NIC) and a send overhead alpha, switches forward cut-through with one
 * channel per link direction, `buf` packets of buffer per channel and
 * back-pressure in packet mode, and `hop` of latency per node crossed.  An
 * uncontended n-byte message over links l1..lH costs
 *     alpha + n / min(bw) + sum(lat) + (H-1) * hop
 * in fluid mode (packet mode adds the pipeline fill of one packet per extra
 * hop of a slower link, see docs/networks.md).
 *
 * Ranks run on hosts only: hosts are the machine's nodes 0..H-1 (in the
 * description's host order), switches come after.  Routing is the
 * generator's (cs_netdesc_route), UGAL's choice between its two candidates
 * by the engine's load (an adaptive route, net_route_ugal) or shortest
 * paths (BFS, lowest channel id first: the custom topology's default).
 */
#include "machines/machine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/netdesc.h"
#include "topo/netfile.h"
#include "topo/netgen.h"

static const char *const keys[] = {
    /* the network */
    "gen", "file", "format", "routing", "bw", "lat",
    /* the hosts and switches */
    "alpha", "hop", "ports", "packet", "buf", "tick", "reduce",
    /* fluid mode: when latency is paid, how flows share (engine/net.h) */
    "fluid_latency", "fluid_share",
    /* generators' own keys (each reads its own; netgen.h) */
    "k", "n", "levels", "down", "up", "par", "nodes", "gpus", "nvbw", "nvlat", "radix", "hosts",
    "backbone", "backlat", "dims", "a", "p", "h", "g", "arrangement", "gbw", "glat",
    "ugal_threshold", "nvswitch", "nvls_rate", "nvls_buf",
    /* switches that reduce (issue 36) */
    "sharp", "sharp_rate", "sharp_buf", NULL};

/* sharp=: which switches reduce besides those a file or generator
 * declares.  A leaf has a link to a host; a spine has none. */
static const char *const sharp_names[] = {"none", "leaf", "spine", "all", NULL};
enum { SHARP_NONE, SHARP_LEAF, SHARP_SPINE, SHARP_ALL };

typedef struct net {
    cs_netdesc_t *d;
    int32_t *old_of;     /* machine node -> description node */
    int32_t *new_of;     /* description node -> machine node */
    int64_t *ser_num, *ser_den;
    cs_tick_t *wire_lat;
    int32_t *path;       /* route scratch: nodes and each hop's vc class */
    uint8_t *vc;
    int max_path;
    cs_hop_t *alt;       /* UGAL: the non-minimal candidate's hops, or NULL */
    int64_t ugal_threshold;
    int ugal_view;       /* CS_NETDESC_UGAL_LOCAL or _GLOBAL */
    int32_t *level;      /* per machine node, for tree drawings; NULL: none */
    int32_t *node_ports; /* per machine node with reducing switches, else NULL */
    int grouped;         /* every node, switches too, has a group */
    cs_topo_t *shape;    /* a standard shape whose routes these are, or NULL */
    cs_hop_t *shape_hops;
    /* the format's row of a file written for another simulator, whose
     * defaults the run keeps (NULL: none) */
    const cs_netfile_format_info_t *origin;
    /* such a file's alpha (the report says it and where it came from):
     * NET_ALPHA_NONE for other networks */
    int alpha_from;
    double alpha;
    int fluid_from;      /* NET_FLUID_*: the report's line on the fluid model */
} net_t;

enum { NET_ALPHA_NONE, NET_ALPHA_GIVEN, NET_ALPHA_ORIGIN };

/* The fluid model's two keys: values as the engine's enums number them. */
static const char *const fluid_latency_names[] = {"last", "first", NULL};
static const char *const fluid_share_names[] = {"equal", "latency", NULL};
/* Where they came from, for the report: NONE when both are the engine's
 * defaults on a network that is not a SimGrid platform (nothing said). */
enum { NET_FLUID_NONE, NET_FLUID_GIVEN, NET_FLUID_ORIGIN };

static void net_destroy(void *impl)
{
    net_t *n = impl;
    if (!n)
        return;
    cs_netdesc_free(n->d);
    free(n->old_of);
    free(n->new_of);
    free(n->ser_num);
    free(n->ser_den);
    free(n->wire_lat);
    free(n->path);
    free(n->vc);
    free(n->alt);
    free(n->level);
    cs_topo_free(n->shape);
    free(n->shape_hops);
    free(n->node_ports);
    free(n);
}

/* sharp=: makes the chosen switches reduce at `rate` (0: each at line
 * rate on all its ports, the sum of its links' bandwidths, so that a
 * switch is never slower than the data it can take in) with `buf` bytes,
 * except those the description made reducing already (an NVSwitch, a
 * file's own attribute), which keep their own rate. */
static int net_sharp(net_t *n, int which, double rate, int64_t buf, cs_error_t *err)
{
    int32_t nodes = cs_netdesc_nodes(n->d), nlinks = cs_netdesc_nlinks(n->d);
    uint8_t *leaf;
    double *line;
    int rc = CS_OK;
    if (which == SHARP_NONE)
        return CS_OK;
    leaf = cs_calloc((size_t)nodes, 1);
    line = cs_calloc((size_t)nodes, sizeof *line);
    for (int32_t i = 0; i < nlinks; i++) {
        const cs_netlink_t *l = cs_netdesc_link(n->d, i);
        if (cs_netdesc_kind(n->d, l->u) == CS_NETNODE_HOST)
            leaf[l->v] = 1;
        if (cs_netdesc_kind(n->d, l->v) == CS_NETNODE_HOST)
            leaf[l->u] = 1;
        line[l->u] += l->bw * l->mult;
        line[l->v] += l->bw * l->mult;
    }
    for (int32_t v = 0; v < nodes && rc == CS_OK; v++)
        if (cs_netdesc_kind(n->d, v) == CS_NETNODE_SWITCH && !cs_netdesc_reduce(n->d, v, NULL) &&
            (which == SHARP_ALL || (which == SHARP_LEAF) == leaf[v]))
            rc = cs_netdesc_set_reduce(n->d, v, rate > 0 ? rate : line[v], buf, err);
    free(leaf);
    free(line);
    return rc;
}

/* The reducing switches as the machine's table (machine numbering, in
 * node order) and their ports: a reducing switch takes and sends on all
 * its ports at once (engine/net.h, node_ports).  Nothing without one, so
 * that other networks run as before. */
static int net_reducers(cs_machine_t *m, net_t *n, double tick, int64_t ports, cs_error_t *err)
{
    int32_t nodes = cs_netdesc_nodes(n->d);
    int S = 0, rc;
    for (int32_t i = 0; i < nodes; i++)
        S += cs_netdesc_reduce(n->d, n->old_of[i], NULL) > 0;
    if (!S)
        return CS_OK;
    m->red_node = cs_malloc((size_t)S * sizeof *m->red_node);
    m->red_num = cs_malloc((size_t)S * sizeof *m->red_num);
    m->red_den = cs_malloc((size_t)S * sizeof *m->red_den);
    m->red_buf = cs_malloc((size_t)S * sizeof *m->red_buf);
    n->node_ports = cs_malloc((size_t)nodes * sizeof *n->node_ports);
    for (int32_t i = 0; i < nodes; i++) {
        int64_t buf;
        double rate = cs_netdesc_reduce(n->d, n->old_of[i], &buf);
        n->node_ports[i] = rate > 0 ? 0 : (int32_t)ports;
        if (rate <= 0)
            continue;
        if ((rc = cs_spec_tick_ratio("sharp_rate", 1.0 / rate, tick, &m->red_num[m->nred],
                                     &m->red_den[m->nred], err))) {
            cs_error_prefix(err, "%s: switch %d", cs_netdesc_source(n->d), (int)n->old_of[i]);
            return rc;
        }
        m->red_node[m->nred] = i;
        m->red_buf[m->nred++] = buf;
    }
    m->net.node_ports = n->node_ports;
    return CS_OK;
}

/* Link l's channel from node u (machine numbering) to its other end. */
static int32_t link_chan(const net_t *n, int32_t l, int32_t u)
{
    return 2 * l + (n->new_of[cs_netdesc_link(n->d, l)->u] == u ? 0 : 1);
}

typedef int (*desc_route_fn)(const cs_netdesc_t *d, int32_t src, int32_t dst, uint64_t salt,
                             int32_t *path, uint8_t *vc, int max);

/* A route of the description (`route`: cs_netdesc_route or UGAL's other
 * candidate) as channels of the machine's topology: link i of the
 * description is channels 2i (u -> v) and 2i + 1. */
static int net_path(net_t *n, desc_route_fn route, int src, int dst, uint64_t salt,
                    cs_hop_t *hops, int max)
{
    memset(n->vc, 0, (size_t)n->max_path);
    int len = route(n->d, n->old_of[src], n->old_of[dst], salt, n->path, n->vc, n->max_path);
    if (len < 2 || len - 1 > max)
        return -1;
    for (int i = 0; i + 1 < len; i++) {
        int32_t l = cs_netdesc_find_link(n->d, n->path[i], n->path[i + 1]);
        if (l < 0)
            return -1; /* not a path of links: a generator bug, reported as no route */
        hops[i].chan = link_chan(n, l, n->new_of[n->path[i]]);
        hops[i].vc = n->vc[i];
    }
    return len - 1;
}

/* The salt is a hash of (src, dst), so that a message's packets share a
 * path and a pair always takes the same one. */
static uint64_t pair_salt(int src, int dst)
{
    uint64_t salt = ((uint64_t)(uint32_t)src << 32 | (uint32_t)dst) * 0x9e3779b97f4a7c15ULL;
    return salt ^ salt >> 29;
}

/* A message from or to a switch (an in-network algorithm's switch rank,
 * issue 36: a host and the switch it sends to, a switch and its parent)
 * crosses the link between the two: the generators route between hosts
 * only.  -1 without such a link. */
static int net_switch_hop(const net_t *n, int src, int dst, cs_hop_t *hops, int max)
{
    int32_t l = cs_netdesc_find_link(n->d, n->old_of[src], n->old_of[dst]);
    if (l < 0 || max < 1)
        return -1;
    hops[0].chan = link_chan(n, l, src);
    hops[0].vc = 0;
    return 1;
}

static int net_is_switch(const net_t *n, int node) { return node >= cs_netdesc_hosts(n->d); }

/* The generator's route. */
static int net_route(const cs_topo_t *t, void *ctx, int src, int dst, cs_hop_t *hops, int max)
{
    (void)t;
    if (net_is_switch(ctx, src) || net_is_switch(ctx, dst))
        return net_switch_hop(ctx, src, dst, hops, max);
    return net_path(ctx, cs_netdesc_route, src, dst, pair_salt(src, dst), hops, max);
}

/* The load UGAL weighs for a candidate: UGAL-L's is that of the first
 * channel the candidate takes from the source's router (hop 1; hop 0 is
 * the host's injection link, which both candidates share); UGAL-G's, the
 * idealised global view (Kim et al.'s UGAL-G sees every global channel's
 * queue), that of the busiest channel after the injection link. */
static int64_t ugal_load(const net_t *n, const cs_topo_load_t *load, const cs_hop_t *hops,
                         int h)
{
    int64_t q = load->fn(load->ctx, hops[1].chan);
    if (n->ugal_view == CS_NETDESC_UGAL_GLOBAL)
        for (int i = 2; i < h; i++) {
            int64_t qi = load->fn(load->ctx, hops[i].chan);
            q = qi > q ? qi : q;
        }
    return q;
}

/* UGAL (Kim, Dally, Scott & Abts, ISCA 2008, section 4.2): compare each
 * candidate's load q (ugal_load: UGAL-L at the source router, or UGAL-G)
 * times its hop count H, and take the minimal path when
 *     q_min * H_min <= q_nm * H_nm + threshold.
 * H counts every channel of the route, host links included (both
 * candidates have the same two).  The Valiant candidate's intermediate
 * group comes from a salt that mixes in the message's number (load->msg),
 * so that a pair's messages spread over the groups, deterministically.
 * Without a load view (a route asked for outside a run) every queue is
 * empty and the minimal path wins. */
static int net_route_ugal(const cs_topo_t *t, void *ctx, int src, int dst,
                          const cs_topo_load_t *load, cs_hop_t *hops, int max)
{
    net_t *n = ctx;
    uint64_t salt = pair_salt(src, dst), mix;
    if (net_is_switch(n, src) || net_is_switch(n, dst))
        return net_switch_hop(n, src, dst, hops, max);
    int hm = net_path(n, cs_netdesc_route, src, dst, salt, hops, max), hn;
    (void)t;
    if (hm < 2 || !load)
        return hm;
    mix = (salt ^ (load->msg + 1) * 0xbf58476d1ce4e5b9ULL) * 0x94d049bb133111ebULL;
    hn = net_path(n, cs_netdesc_route_nonmin, src, dst, mix ^ mix >> 31, n->alt, max);
    if (hn < 2 || (hn == hm && !memcmp(hops, n->alt, (size_t)hm * sizeof *hops)))
        return hm; /* inside one group Valiant is minimal */
    int64_t qm = ugal_load(n, load, hops, hm), qn = ugal_load(n, load, n->alt, hn);
    if (qm * hm <= qn * hn + n->ugal_threshold)
        return hm;
    memcpy(hops, n->alt, (size_t)hn * sizeof *hops);
    return hn;
}

/* A standard shape's routes (cs_netdesc_shape): the shape's own topology
 * routes, and each hop becomes the link between the same two nodes here,
 * with the shape's virtual-channel class. */
static int net_route_shape(const cs_topo_t *t, void *ctx, int src, int dst, cs_hop_t *hops,
                           int max)
{
    net_t *n = ctx;
    int len = cs_topo_route(n->shape, src, dst, n->shape_hops);
    (void)t;
    if (len < 0 || len > max)
        return -1;
    for (int i = 0; i < len; i++) {
        int u = cs_topo_channel_src(n->shape, n->shape_hops[i].chan);
        int v = cs_topo_channel_dst(n->shape, n->shape_hops[i].chan);
        hops[i].chan = link_chan(n, cs_netdesc_find_link(n->d, n->old_of[u], n->old_of[v]), u);
        hops[i].vc = n->shape_hops[i].vc;
    }
    return len;
}

/* Builds the shape's topology and checks that the network is that shape:
 * as many nodes, all hosts, every link of the shape present. */
static int net_shape(net_t *n, cs_error_t *err)
{
    const char *s = cs_netdesc_shape(n->d);
    int32_t nodes = cs_netdesc_nodes(n->d);
    int rows = 0, cols = 0, rc;
    size_t len = strcspn(s, ":");
    int k = cs_topo_kind_parse(s, len);
    int grid = k == CS_TOPO_MESH || k == CS_TOPO_TORUS || k == CS_TOPO_CYLINDER;
    if (k < 0 || grid != (s[len] == ':') ||
        (grid && (sscanf(s + len + 1, "%dx%d", &rows, &cols) != 2 || rows < 1 || cols < 1 ||
                  (int64_t)rows * cols != nodes)))
        return cs_error_set(err, CS_ERR_PARSE, "%s: routing \"%s\": not a standard shape of %d "
                            "nodes (line, ring, complete, hypercube, mesh:RxC, torus:RxC, "
                            "cylinder:RxC)", cs_netdesc_source(n->d), s, (int)nodes);
    if (cs_netdesc_hosts(n->d) != nodes)
        return cs_error_set(err, CS_ERR_PARSE, "%s: routing \"%s\": a standard shape has hosts "
                            "only", cs_netdesc_source(n->d), s);
    rc = cs_topo_new_shape((cs_topo_kind_t)k, nodes, rows, cols, &n->shape, err);
    if (rc)
        return rc;
    for (int c = 0; c < cs_topo_channels(n->shape); c += 2) {
        int u = cs_topo_channel_src(n->shape, c), v = cs_topo_channel_dst(n->shape, c);
        if (cs_netdesc_find_link(n->d, n->old_of[u], n->old_of[v]) < 0)
            return cs_error_set(err, CS_ERR_PARSE, "%s: routing \"%s\": the network lacks the "
                                "shape's link %d-%d", cs_netdesc_source(n->d), s, u, v);
    }
    n->shape_hops = cs_malloc((size_t)cs_topo_max_route_len(n->shape) * sizeof *n->shape_hops);
    return CS_OK;
}

/* The description: a file or a generator's, with its routing.  *origin:
 * the format's row when the file was written for another simulator
 * (SimGrid, ASTRA-sim), else NULL. */
static int net_describe(cs_spec_t *spec, double bw, double lat, cs_netdesc_t **out,
                        const cs_netfile_format_info_t **origin, cs_error_t *err)
{
    const char *gen = cs_spec_get(spec, "gen");
    const char *routing = cs_spec_get(spec, "routing");
    cs_source_t file;
    int rc;
    *out = NULL;
    *origin = NULL;
    if ((rc = cs_source_from_spec(spec, "file", &file, err)))
        return rc;
    if (file.name && gen)
        return cs_error_set(err, CS_ERR_USAGE, "keys 'file' and 'gen' exclude each other: a "
                            "network comes from a file or from a generator");
    if (file.name) {
        cs_netfile_format_t fmt = CS_NETFILE_AUTO;
        const char *f = cs_spec_get(spec, "format");
        if (f && (rc = cs_netfile_parse_format(f, &fmt, err)))
            return rc;
        if (routing && strcmp(routing, "shortest") && strcmp(routing, "ecmp"))
            return cs_error_set(err, CS_ERR_USAGE, "routing=%s: a network read from a file "
                                "is routed by shortest paths (routing=shortest, the default) "
                                "or ECMP over them (routing=ecmp)", routing);
        if ((rc = cs_netfile_read(&file, fmt, bw, lat, out, err)))
            return rc;
        const cs_netfile_format_info_t *info =
            cs_netfile_format_info(cs_netfile_resolve_format(file.name, fmt));
        if (info->simulator)
            *origin = info;
        if (routing && !strcmp(routing, "ecmp") && (rc = cs_netdesc_route_ecmp(*out, err))) {
            cs_netdesc_free(*out);
            *out = NULL;
        }
        return rc;
    }
    const cs_netgen_type_t *g;
    char name[128];
    if ((rc = cs_netgen_find(gen ? gen : "fattree", &g, err)))
        return rc;
    snprintf(name, sizeof name, "gen=%s", g->name);
    *out = cs_netdesc_new(name);
    if ((rc = g->build(spec, bw, lat, routing, *out, err))) {
        cs_netdesc_free(*out);
        *out = NULL;
    }
    return rc;
}

/* Hosts first, in the description's order, then switches. */
static void net_number(net_t *n)
{
    int32_t nodes = cs_netdesc_nodes(n->d), k = 0;
    n->old_of = cs_malloc((size_t)nodes * sizeof *n->old_of);
    n->new_of = cs_malloc((size_t)nodes * sizeof *n->new_of);
    for (int pass = 0; pass < 2; pass++)
        for (int32_t v = 0; v < nodes; v++)
            if ((cs_netdesc_kind(n->d, v) == CS_NETNODE_HOST) == (pass == 0)) {
                n->new_of[v] = k;
                n->old_of[k++] = v;
            }
}

/* The host groups as the machine's hierarchy hint (dense ids in order of
 * first use); switches take their description group or, without one,
 * group 0 (hints read the groups of rank nodes only). */
static void net_groups(cs_machine_t *m, net_t *n)
{
    int32_t nodes = cs_netdesc_nodes(n->d), hosts = cs_netdesc_hosts(n->d), max = -1;
    int32_t *renum;
    for (int32_t v = 0; v < nodes; v++)
        max = cs_netdesc_group(n->d, v) > max ? cs_netdesc_group(n->d, v) : max;
    if (max < 0)
        return;
    renum = cs_malloc((size_t)(max + 1) * sizeof *renum);
    n->grouped = 1;
    for (int32_t g = 0; g <= max; g++)
        renum[g] = -1;
    m->node_group = cs_calloc((size_t)nodes, sizeof *m->node_group);
    for (int32_t i = 0; i < nodes; i++) {
        int32_t g = cs_netdesc_group(n->d, n->old_of[i]);
        if (g < 0) {
            n->grouped = 0;
            if (i < hosts) { /* a host outside every group: no hierarchy */
                free(m->node_group);
                m->node_group = NULL;
                m->ngroups = 0;
                break;
            }
            continue;
        }
        if (renum[g] < 0)
            renum[g] = m->ngroups++;
        m->node_group[i] = renum[g];
    }
    free(renum);
}

/* Levels for a tree drawing when every node has one and there are three
 * or more (hosts, leaves, spines: a fat-tree; a dragonfly's two are drawn
 * as a graph). */
static void net_levels(net_t *n)
{
    int32_t nodes = cs_netdesc_nodes(n->d);
    int top = 0;
    for (int32_t v = 0; v < nodes; v++) {
        int l = cs_netdesc_level(n->d, v);
        if (l < 0)
            return;
        top = l > top ? l : top;
    }
    if (top < 2)
        return;
    n->level = cs_malloc((size_t)nodes * sizeof *n->level);
    for (int32_t i = 0; i < nodes; i++)
        n->level[i] = cs_netdesc_level(n->d, n->old_of[i]);
}

/* Trees by level; networks whose every node has a group (a dragonfly's
 * routers and hosts) as the group matrix; a two-dimensional lattice of
 * hosts (a torus or mesh) as a grid, a three-dimensional one as its
 * z-slices side by side, their wrap links where they have them; anything
 * else (four dimensions and more too) as a graph. */
static void layout(const cs_machine_t *m, cs_machine_layout_t *out)
{
    const net_t *n = m->impl;
    memset(out, 0, sizeof *out);
    out->kind = n->level ? CS_LAYOUT_TREE : CS_LAYOUT_GRAPH;
    out->level = n->level;
    if (!n->level && n->grouped && m->ngroups > 1 &&
        cs_netdesc_hosts(n->d) < cs_netdesc_nodes(n->d)) {
        /* a dragonfly: the group matrix and one group's links */
        out->kind = CS_LAYOUT_DRAGONFLY;
        out->groups_all = 1;
    } else if (!n->level && (m->ndims == 2 || m->ndims == 3) &&
               cs_netdesc_hosts(n->d) == cs_netdesc_nodes(n->d)) {
        out->kind = CS_LAYOUT_GRID;
        out->rows = m->dims[1];
        out->cols = m->dims[0];
        out->wrap_x = out->cols > 2 &&
                      cs_netdesc_find_link(n->d, n->old_of[0], n->old_of[out->cols - 1]) >= 0;
        out->wrap_y = out->rows > 2 &&
                      cs_netdesc_find_link(n->d, n->old_of[0],
                                           n->old_of[(out->rows - 1) * out->cols]) >= 0;
        if (m->ndims == 3) {
            int slice = out->rows * out->cols;
            out->depth = m->dims[2];
            out->wrap_z = out->depth > 2 &&
                          cs_netdesc_find_link(n->d, n->old_of[0],
                                               n->old_of[(out->depth - 1) * slice]) >= 0;
        }
    }
}

/* Every two hosts of a file's routes joined (issue 18): the readers refuse
 * the holes they can see, this catches any left (a route the channel
 * engine would find missing mid-run) while it is cheap, H^2 routes for up
 * to NET_PAIR_CHECK_MAX hosts (measured on SimGrid zones of FLAT clusters,
 * a loaded 2-core machine: 512 hosts add 0.02 s, about 75 ns a route, so
 * 2048 would add 0.3 s or more). */
#define NET_PAIR_CHECK_MAX 512
static int net_check_pairs(net_t *n, const cs_topo_t *t, cs_error_t *err)
{
    int32_t hosts = cs_netdesc_hosts(n->d);
    cs_hop_t *hops = cs_malloc((size_t)n->max_path * sizeof *hops);
    int rc = CS_OK;
    for (int32_t a = 0; a < hosts && !rc; a++)
        for (int32_t b = 0; b < hosts && !rc; b++)
            if (a != b && net_route(t, n, a, b, hops, n->max_path) < 1) {
                const char *la = cs_netdesc_label(n->d, n->old_of[a]),
                           *lb = cs_netdesc_label(n->d, n->old_of[b]);
                char na[24], nb[24];
                snprintf(na, sizeof na, "#%d", (int)n->old_of[a]);
                snprintf(nb, sizeof nb, "#%d", (int)n->old_of[b]);
                rc = cs_error_set(err, CS_ERR_PARSE, "%s: no route from host %s to host %s",
                                  cs_netdesc_source(n->d), la ? la : na, lb ? lb : nb);
            }
    free(hops);
    return rc;
}

static int create(cs_spec_t *spec, cs_machine_t *m, cs_error_t *err)
{
    double bw, lat, tick;
    int64_t ports;
    cs_machine_ab_t ab;
    int rc;
    net_t *n = cs_calloc(1, sizeof *n);
    m->impl = n;
    if ((rc = cs_spec_get_bandwidth(spec, "bw", 100e9 / 8, &bw, err)) ||
        (rc = cs_spec_get_seconds(spec, "lat", 0, &lat, err)) ||
        (rc = cs_spec_get_int(spec, "ports", 1, 1, 1 << 16, &ports, err)) ||
        (rc = cs_machine_ab_read(spec, &ab, err)))
        return rc;
    tick = ab.tick;
    /* the description is bounded by the generators' and readers' own
     * limits (CS_NETGEN_MAX_NODES); the machine's tables, routes and
     * engine, many times its size, wait for the node limit */
    const cs_netfile_format_info_t *origin = NULL;
    int sharp;
    double sharp_rate;
    int64_t sharp_buf;
    if ((rc = cs_spec_get_choice(spec, "sharp", sharp_names, SHARP_NONE, &sharp, err)) ||
        (rc = cs_spec_get_bandwidth(spec, "sharp_rate", 0, &sharp_rate, err)) ||
        (rc = cs_spec_get_bytes(spec, "sharp_buf", 4 << 20, &sharp_buf, err)))
        return rc;
    if (sharp == SHARP_NONE && (cs_spec_get(spec, "sharp_rate") || cs_spec_get(spec, "sharp_buf"))) {
        const char *k = cs_spec_get(spec, "sharp_rate") ? "sharp_rate" : "sharp_buf";
        return cs_error_set(err, CS_ERR_USAGE, "%s=%s: no switch is made reducing (give "
                            "sharp=leaf|spine|all)", k, cs_spec_get(spec, k));
    }
    if ((cs_spec_get(spec, "sharp_rate") && !(sharp_rate > 0)) || sharp_buf < 1) {
        const char *k = sharp_buf >= 1 ? "sharp_rate" : "sharp_buf";
        return cs_error_set(err, CS_ERR_RANGE, "%s=%s: a reducing switch needs a rate > 0 and a "
                            "buffer of at least 1 byte", k, cs_spec_get(spec, k));
    }
    if ((rc = net_describe(spec, bw, lat, &n->d, &origin, err)) ||
        (rc = net_sharp(n, sharp, sharp_rate, sharp_buf, err)) ||
        (rc = cs_netdesc_check(n->d, err)) ||
        (rc = cs_spec_check_nodes(spec, cs_netdesc_nodes(n->d), err)))
        return rc;
    /* A SimGrid platform or an ASTRA-sim network runs with alpha = 0
     * unless alpha is given: neither simulator's network charges a message
     * a per-message host overhead (SimGrid's models charge its links'
     * latencies and bandwidths; ASTRA-sim's endpoint delay lives in its
     * system configuration, not in the network file), so a user's file
     * gives that simulator's times as it stands (tools/simgrid-check,
     * tools/astra-check); collsim's 1 us default is the lecture's
     * alpha-beta host, which such a file does not describe
     * (docs/networks.md). */
    n->origin = origin;
    if (origin) {
        if (!cs_spec_get(spec, "alpha"))
            ab.alpha = 0;
        n->alpha_from = cs_spec_get(spec, "alpha") ? NET_ALPHA_GIVEN : NET_ALPHA_ORIGIN;
        n->alpha = ab.alpha;
    }
    int cm02 = origin && origin->cm02;
    /* The fluid model.  A SimGrid platform runs as SimGrid's CM02 model
     * runs it unless told otherwise: a flow pays its route's latency
     * before it takes bandwidth, and its share of a link is weighted by
     * 1 / latency (network_cm02.cpp: the max-min variable gets penalty 0
     * until latency_ is paid, then its sharing penalty, the latency); other
     * networks keep the engine's max-min fair flows that pay latency last
     * (docs/networks.md, "Agreement with SimGrid"). */
    int flat, fshare;
    if ((rc = cs_spec_get_choice(spec, "fluid_latency", fluid_latency_names,
                                 cm02 ? CS_NET_LATENCY_FIRST : CS_NET_LATENCY_LAST, &flat,
                                 err)) ||
        (rc = cs_spec_get_choice(spec, "fluid_share", fluid_share_names,
                                 cm02 ? CS_NET_SHARE_LATENCY : CS_NET_SHARE_EQUAL, &fshare,
                                 err)))
        return rc;
    n->fluid_from = cs_spec_get(spec, "fluid_latency") || cs_spec_get(spec, "fluid_share")
                        ? NET_FLUID_GIVEN
                    : cm02 ? NET_FLUID_ORIGIN
                              : NET_FLUID_NONE;

    int32_t nodes = cs_netdesc_nodes(n->d), nlinks = cs_netdesc_nlinks(n->d);
    net_number(n);
    m->topo = cs_topo_new_custom(nodes, cs_netdesc_source(n->d));
    n->ser_num = cs_malloc(2 * (size_t)(nlinks ? nlinks : 1) * sizeof *n->ser_num);
    n->ser_den = cs_malloc(2 * (size_t)(nlinks ? nlinks : 1) * sizeof *n->ser_den);
    n->wire_lat = cs_malloc(2 * (size_t)(nlinks ? nlinks : 1) * sizeof *n->wire_lat);
    for (int32_t i = 0; i < nlinks; i++) {
        const cs_netlink_t *l = cs_netdesc_link(n->d, i);
        int c = cs_topo_add_link(m->topo, n->new_of[l->u], n->new_of[l->v]);
        CS_ASSERT(c == 2 * i);
        if ((rc = cs_spec_tick_ratio("bw", 1.0 / (l->bw * l->mult), tick, &n->ser_num[c],
                                     &n->ser_den[c], err)) ||
            (rc = cs_spec_ticks("lat", l->lat, tick, 9e18, &n->wire_lat[c], err))) {
            /* a link read from a file is named by its line there, as
             * the readers name it; a generated one by its number */
            if (l->line > 0)
                cs_error_prefix(err, "%s:%d: link %d", cs_netdesc_source(n->d), (int)l->line,
                                (int)i);
            else
                cs_error_prefix(err, "%s: link %d", cs_netdesc_source(n->d), (int)i);
            return rc;
        }
        n->ser_num[c + 1] = n->ser_num[c];
        n->ser_den[c + 1] = n->ser_den[c];
        n->wire_lat[c + 1] = n->wire_lat[c];
        if (l->shared) /* half duplex: both directions one capacity */
            cs_topo_share_channels(m->topo, c, c + 1);
    }
    if (cs_netdesc_shape(n->d)) {
        if ((rc = net_shape(n, err)))
            return rc;
        cs_topo_set_route(m->topo, net_route_shape, n);
        /* and the shape's best ring as the hint, as the shape's machine gives */
        m->ring_order = cs_malloc((size_t)nodes * sizeof *m->ring_order);
        if (!cs_topo_ring_hint(n->shape, m->ring_order)) {
            free(m->ring_order);
            m->ring_order = NULL;
        }
        if (cs_topo_grid(n->shape, &m->grid_rows, &m->grid_cols))
            cs_topo_set_grid(m->topo, m->grid_rows, m->grid_cols);
    } else if (cs_netdesc_route_name(n->d)) {
        n->max_path = nodes + 1;
        n->path = cs_malloc((size_t)n->max_path * sizeof *n->path);
        n->vc = cs_malloc((size_t)n->max_path);
        if ((n->ugal_view = cs_netdesc_ugal(n->d, &n->ugal_threshold))) {
            n->alt = cs_malloc((size_t)n->max_path * sizeof *n->alt);
            cs_topo_set_route_adaptive(m->topo, net_route_ugal, n);
        } else {
            cs_topo_set_route(m->topo, net_route, n);
        }
        const char *routing = cs_spec_get(spec, "routing");
        if (cs_spec_get(spec, "file") && !(routing && !strcmp(routing, "ecmp")) &&
            cs_netdesc_hosts(n->d) <= NET_PAIR_CHECK_MAX && (rc = net_check_pairs(n, m->topo, err)))
            return rc;
    }
    net_groups(m, n);
    net_levels(n);
    m->ndims = cs_netdesc_dims(n->d, m->dims);
    m->rank_nodes = cs_netdesc_hosts(n->d);

    if ((rc = cs_machine_ab_apply(&ab, m, err)))
        return rc;
    m->net.send_ports = m->net.recv_ports = (int)ports;
    m->net.fluid_latency = (cs_net_fluid_latency_t)flat;
    m->net.fluid_share = (cs_net_fluid_share_t)fshare;
    m->net.chan_ser_num = n->ser_num;
    m->net.chan_ser_den = n->ser_den;
    m->net.chan_wire_lat = n->wire_lat;
    m->net.ser_num = nlinks ? n->ser_num[0] : 1;
    m->net.ser_den = nlinks ? n->ser_den[0] : 1;
    if ((rc = net_reducers(m, n, tick, ports, err)))
        return rc;

    /* the normalised spec: the keys as given, then the machine's own
     * settings that were left at their defaults */
    char text[1024], v[32];
    const struct { const char *key; const char *value; } own[] = {
        {"bw", cs_units_spec_bandwidth(bw, (char[32]){0}, 32)},
        {"lat", cs_units_spec_seconds(lat, (char[32]){0}, 32)},
        {"alpha", cs_units_spec_seconds(ab.alpha, (char[32]){0}, 32)},
        {"hop", cs_units_spec_seconds(ab.hop, (char[32]){0}, 32)},
        {"tick", cs_units_spec_seconds(ab.tick, (char[32]){0}, 32)},
        {"reduce", cs_units_spec_seconds(ab.reduce, (char[32]){0}, 32)},
    };
    snprintf(text, sizeof text, "%s", spec->text);
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (!cs_spec_get(spec, own[i].key))
            snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s=%s",
                     strchr(text, ':') ? "," : ":", own[i].key, own[i].value);
    snprintf(v, sizeof v, "%lld", (long long)ports);
    if (!cs_spec_get(spec, "ports"))
        snprintf(text + strlen(text), sizeof text - strlen(text), ",ports=%s", v);
    /* a SimGrid platform's fluid model differs from the engine's defaults:
     * say it (other networks' specs stay as they were) */
    if (cm02 && !cs_spec_get(spec, "fluid_latency"))
        snprintf(text + strlen(text), sizeof text - strlen(text), ",fluid_latency=%s",
                 fluid_latency_names[flat]);
    if (cm02 && !cs_spec_get(spec, "fluid_share"))
        snprintf(text + strlen(text), sizeof text - strlen(text), ",fluid_share=%s",
                 fluid_share_names[fshare]);
    m->spec = cs_strdup(text);
    return CS_OK;
}

/* `collsim topo` and the run summary: what the network is made of. */
static void report(const cs_machine_t *m, const cs_net_t *net, FILE *f)
{
    const net_t *n = m->impl;
    int32_t hosts = cs_netdesc_hosts(n->d), nodes = cs_netdesc_nodes(n->d);
    double bis = cs_netdesc_bisection(n->d);
    char b[32];
    (void)net;
    fprintf(f, "network   %s: %d hosts, %d switch%s, %d links; routing %s\n",
            cs_netdesc_source(n->d), (int)hosts, (int)(nodes - hosts),
            nodes - hosts == 1 ? "" : "es",
            (int)cs_netdesc_nlinks(n->d),
            cs_netdesc_shape(n->d)        ? cs_netdesc_shape(n->d)
            : cs_netdesc_route_name(n->d) ? cs_netdesc_route_name(n->d)
                                          : "shortest paths (lowest channel id first)");
    if (bis > 0)
        /* set by the shapes collsim builds (generators, and the clusters of
         * a SimGrid file): a closed form, not a measured cut */
        fprintf(f, "bisection %s (the closed form of the %s shape)\n",
                cs_units_spec_bandwidth(bis, b, sizeof b),
                cs_netdesc_shape(n->d) ? cs_netdesc_shape(n->d) : "network's");
    if (m->nred > 0) {
        /* the switches that reduce (issue 36): how many, and the range of
         * their rates and buffers */
        double lo = 0, hi = 0;
        int64_t blo = 0, bhi = 0;
        for (int s = 0; s < m->nred; s++) {
            double r = cs_netdesc_reduce(n->d, n->old_of[m->red_node[s]], NULL);
            lo = !s || r < lo ? r : lo;
            hi = !s || r > hi ? r : hi;
            blo = !s || m->red_buf[s] < blo ? m->red_buf[s] : blo;
            bhi = !s || m->red_buf[s] > bhi ? m->red_buf[s] : bhi;
        }
        char r1[32], r2[32], b1[32], b2[32];
        cs_units_spec_bandwidth(lo, r1, sizeof r1);
        cs_units_spec_bandwidth(hi, r2, sizeof r2);
        cs_units_format_bytes(blo, b1, sizeof b1);
        cs_units_format_bytes(bhi, b2, sizeof b2);
        fprintf(f, "reducing  %d switch%s in the network at %s%s%s, buffer %s%s%s "
                   "(in-network algorithms run them as ranks)\n", m->nred,
                m->nred == 1 ? " reduces" : "es reduce", r1, lo != hi ? ".." : "", lo != hi ? r2 : "", b1,
                blo != bhi ? ".." : "", blo != bhi ? b2 : "");
    }
    if (n->alpha_from == NET_ALPHA_GIVEN)
        fprintf(f, "alpha     %s per message (given)\n",
                cs_units_spec_seconds(n->alpha, b, sizeof b));
    else if (n->alpha_from == NET_ALPHA_ORIGIN)
        fprintf(f, "alpha     %s per message (the default on %s's files: its network adds no "
                   "per-message host overhead; set alpha= to add one)\n",
                cs_units_spec_seconds(n->alpha, b, sizeof b), n->origin->simulator);
    if (n->fluid_from != NET_FLUID_NONE)
        fprintf(f, "fluid     latency paid %s, shares %s (%s; packet mode pays latency hop "
                   "by hop)\n",
                m->net.fluid_latency == CS_NET_LATENCY_FIRST ? "first (before the flow "
                                                               "shares)"
                                                             : "last (after its bytes)",
                m->net.fluid_share == CS_NET_SHARE_LATENCY ? "weighted by 1/latency"
                                                           : "max-min fair",
                n->fluid_from == NET_FLUID_GIVEN ? "given"
                                                 : "a SimGrid platform's default: CM02's; "
                                                   "set fluid_latency=, fluid_share= to change");
}

/* The result's machine fields: the alpha of a file written for another
 * simulator and where it came from ("given", or that simulator's defaults:
 * "simgrid-default", "astra-default"); none for other networks. */
static int fields(const cs_machine_t *m, cs_machine_field_t *out, int max)
{
    const net_t *n = m->impl;
    int k = 0;
    if (n->alpha_from != NET_ALPHA_NONE && max >= 2) {
        out[k++] = (cs_machine_field_t){"alpha_seconds", NULL, n->alpha};
        out[k++] = (cs_machine_field_t){"alpha_source", n->alpha_from == NET_ALPHA_GIVEN
                                                            ? "given" : n->origin->defaults, 0};
    }
    /* the fluid model, where the report says it */
    if (n->fluid_from != NET_FLUID_NONE && max - k >= 3) {
        out[k++] = (cs_machine_field_t){"fluid_latency",
                                        fluid_latency_names[m->net.fluid_latency], 0};
        out[k++] = (cs_machine_field_t){"fluid_share", fluid_share_names[m->net.fluid_share], 0};
        out[k++] = (cs_machine_field_t){"fluid_source", n->fluid_from == NET_FLUID_GIVEN
                                                            ? "given" : n->origin->defaults, 0};
    }
    return k;
}

static const char *node_label(const cs_machine_t *m, int node, char *buf, size_t len)
{
    const net_t *n = m->impl;
    const char *l = cs_netdesc_label(n->d, n->old_of[node]);
    if (!l)
        return NULL;
    snprintf(buf, len, "%s", l);
    return buf;
}

const cs_machine_type_t cs_machine_net = {
    .name = "net",
    .summary = "your own network: hosts and switches from a file (edge list, GraphML, SimGrid "
               "XML, ASTRA-sim .yml) or a generator (fat-tree, dragonfly, torus, HyperX, ...)",
    .usage = "net:gen=fattree|dragonfly|torus|mesh|hyperx|twotier|star[,GENERATOR KEYS] or "
             "net:file=PATH[,format=auto|edgelist|graphml|simgrid|astra]; [,routing=R][,bw=100Gbps]"
             "[,lat=0][,alpha=1us][,hop=0][,ports=1][,packet=4KiB][,buf=8][,tick=1ps]"
             "[,reduce=0][,fluid_latency=last|first][,fluid_share=equal|latency]"
             "[,sharp=none|leaf|spine|all,sharp_rate=BW,sharp_buf=4MiB]",
    .keys = keys,
    .file_keys = (const cs_filekey_t[]){{"file", CS_FILEKEY_READ}, {NULL, 0}},
    .example = "net:gen=fattree,k=4,n=2",
    .create = create,
    .destroy = net_destroy,
    .report = report,
    .fields = fields,
    .node_label = node_label,
    .layout = layout,
    .rank_noun = {"host", "hosts"},
    .other_noun = {"switch", "switches"},
};
