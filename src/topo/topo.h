/*
 * topo.h - network topologies: nodes, directed channels and routing.
 *
 * A topology is a directed multigraph: every physical link is two channels,
 * one per direction (links are full duplex, rule 2 of the alpha-beta model).
 * Channels of one link get consecutive ids (2k, 2k+1) so that
 * cs_topo_channel_reverse is c ^ 1.  Routing is deterministic and minimal:
 *
 *   line       the only path;
 *   ring       the shorter way round; at exactly half way round (even p) the
 *              increasing-index direction (documented tie rule);
 *   mesh       dimension order: first along the row (columns, x), then along
 *              the column (rows, y);
 *   torus      dimension order as mesh, each dimension the shorter way round
 *              with the ring's tie rule;
 *   cylinder   rows of `cols` nodes that wrap (rings), joined across rows
 *              as a mesh without wrap (the CNS-1): first the shorter way
 *              round the source's ring, then along the destination's column;
 *   hypercube  e-cube: differing address bits fixed from the lowest up;
 *   complete   the direct link.
 *
 * Wrap-around topologies mark hops after the dateline (the wrap link of a
 * dimension) with vc = 1, so that a network engine that keeps one buffer per
 * (channel, vc) cannot deadlock on a ring or torus.
 *
 * A custom topology may instead route adaptively (cs_topo_set_route_adaptive):
 * its route then reads a load view that an engine passes per message
 * (UGAL on a dragonfly, machines/net.c); without one it sees an idle
 * network.
 *
 * Node ids are 0..nodes-1; mesh, torus and cylinder nodes are row-major
 * (node = row * cols + col).
 */
#ifndef CS_TOPO_H
#define CS_TOPO_H

#include <stdint.h>
#include <stdio.h>
#include "core/error.h"

typedef struct cs_topo cs_topo_t; /* opaque */

/* Virtual-channel classes: a network engine keeps buffers per (channel,
 * class). */
#define CS_TOPO_VCS 3

typedef struct cs_hop {
    int32_t chan; /* channel id */
    uint8_t vc;   /* virtual-channel class below CS_TOPO_VCS: 0, or 1 after a
                     dateline; a dragonfly's Valiant routes use 2 */
} cs_hop_t;

typedef enum cs_topo_kind {
    CS_TOPO_LINE, CS_TOPO_RING, CS_TOPO_MESH, CS_TOPO_TORUS,
    CS_TOPO_COMPLETE, CS_TOPO_HYPERCUBE, CS_TOPO_CYLINDER, CS_TOPO_CUSTOM
} cs_topo_kind_t;

/* Route function for custom topologies: writes at most `max` hops from src
 * to dst (src != dst) and returns the hop count, or -1 if no route exists or
 * it would be longer than max. */
typedef int (*cs_topo_route_fn)(const cs_topo_t *t, void *ctx, int src, int dst,
                                cs_hop_t *hops, int max);

/* A load view an adaptive route may read (issue 18, UGAL): fn(ctx, chan)
 * is the channel's current load in the engine's unit (docs/networks.md:
 * packets queued for it plus its downstream buffer use in packet mode,
 * flows crossing it in fluid mode); `msg` is a number per message (the
 * engine's posting order) that a route may hash to spread its choices
 * deterministically.  Passed in for one route, never stored in the
 * topology, so that one topology may serve several runs. */
typedef struct cs_topo_load {
    int64_t (*fn)(const void *ctx, int chan);
    const void *ctx;
    uint64_t msg;
} cs_topo_load_t;

/* An adaptive route function: as cs_topo_route_fn, with the load view
 * (NULL: no load known, every channel idle). */
typedef int (*cs_topo_route_adaptive_fn)(const cs_topo_t *t, void *ctx, int src, int dst,
                                         const cs_topo_load_t *load, cs_hop_t *hops, int max);

/* Builders of the standard shapes.  Errors (CS_ERR_RANGE) for sizes the shape
 * cannot have: p < 1, hypercube p not a power of two, rows*cols overflow,
 * more than CS_TOPO_MAX_NODES nodes. */
#define CS_TOPO_MAX_NODES (1 << 26)
int cs_topo_new_line(int p, cs_topo_t **out, cs_error_t *err);
int cs_topo_new_ring(int p, cs_topo_t **out, cs_error_t *err);
int cs_topo_new_mesh(int rows, int cols, cs_topo_t **out, cs_error_t *err);
int cs_topo_new_torus(int rows, int cols, cs_topo_t **out, cs_error_t *err);
int cs_topo_new_cylinder(int rows, int cols, cs_topo_t **out, cs_error_t *err);
int cs_topo_new_complete(int p, cs_topo_t **out, cs_error_t *err);
int cs_topo_new_hypercube(int p, cs_topo_t **out, cs_error_t *err);

/* The standard shapes by kind (not CS_TOPO_CUSTOM): p nodes for line, ring,
 * complete and hypercube, rows x cols for mesh, torus and cylinder; and
 * their names ("line", "ring", "mesh", "torus", "complete", "hypercube",
 * "cylinder"), for specs and files that name a shape. */
int cs_topo_new_shape(cs_topo_kind_t k, int p, int rows, int cols, cs_topo_t **out,
                      cs_error_t *err);
const char *cs_topo_kind_name(cs_topo_kind_t k); /* "custom" for CUSTOM */
/* The kind named by the len bytes at name; -1 for none (or "custom"). */
int cs_topo_kind_parse(const char *name, size_t len);

/* A custom topology: add links, then set a route function (if none is set,
 * cs_topo_route uses shortest paths by BFS with the lowest-channel-id tie
 * rule, precomputed lazily per destination).  `name` is copied. */
cs_topo_t *cs_topo_new_custom(int nodes, const char *name);
/* Adds a full-duplex link u<->v; returns the id of the u->v channel
 * (v->u is that id + 1).  u == v is an internal error (asserted). */
int cs_topo_add_link(cs_topo_t *t, int u, int v);
void cs_topo_set_route(cs_topo_t *t, cs_topo_route_fn fn, void *ctx);
/* Sets an adaptive route function instead (replaces one set by
 * cs_topo_set_route and vice versa): routes then depend on the load an
 * engine passes to cs_topo_route_load. */
void cs_topo_set_route_adaptive(cs_topo_t *t, cs_topo_route_adaptive_fn fn, void *ctx);
/* 1 when routes depend on load (an adaptive route function is set): an
 * engine then routes a message when it starts, with cs_topo_route_load. */
int cs_topo_is_adaptive(const cs_topo_t *t);
/* Channels a and b share one capacity from now on (a half-duplex link: a
 * link's two directions, c and c ^ 1; any channels may share, and groups
 * merge).  The group's resource is its lowest channel id; an engine gives
 * the group that channel's capacity, so channels that share should have
 * the same bandwidth (the channel engine refuses them otherwise).  Only
 * channels that exist (a, b < cs_topo_channels) can share. */
void cs_topo_share_channels(cs_topo_t *t, int a, int b);
/* The resource of channel c: the lowest channel id of its group, c for a
 * channel that shares with none.  O(depth of the group's forest). */
int cs_topo_channel_resource(const cs_topo_t *t, int c);
/* 1 if some channels share a capacity (an engine may skip the lookups). */
int cs_topo_has_shared(const cs_topo_t *t);
/* Sets the grid dimensions hint (for layouts and 2D algorithms). */
void cs_topo_set_grid(cs_topo_t *t, int rows, int cols);

void cs_topo_free(cs_topo_t *t); /* accepts NULL */

cs_topo_kind_t cs_topo_kind(const cs_topo_t *t);
const char *cs_topo_name(const cs_topo_t *t);   /* "ring", "mesh", ... */
int cs_topo_nodes(const cs_topo_t *t);
int cs_topo_channels(const cs_topo_t *t);       /* = 2 * links */
int cs_topo_channel_src(const cs_topo_t *t, int c);
int cs_topo_channel_dst(const cs_topo_t *t, int c);
static inline int cs_topo_channel_reverse(int c) { return c ^ 1; }
/* Channel u->v, or -1 if u and v are not adjacent (lowest id if parallel). */
int cs_topo_find_channel(const cs_topo_t *t, int u, int v);
/* Out-degree (number of channels leaving u). */
int cs_topo_degree(const cs_topo_t *t, int u);
/* Grid hint: returns 1 and sets rows/cols for mesh/torus (or a custom grid),
 * 0 otherwise. */
int cs_topo_grid(const cs_topo_t *t, int *rows, int *cols);

/* Upper bound on the hop count of any route (size route buffers with it). */
int cs_topo_max_route_len(const cs_topo_t *t);
/* The route from src to dst; returns the hop count (0 when src == dst) or -1
 * (no route).  hops must hold cs_topo_max_route_len entries. */
int cs_topo_route(const cs_topo_t *t, int src, int dst, cs_hop_t *hops);
/* The same under a load view (NULL: as cs_topo_route, every channel idle);
 * only an adaptive topology reads it. */
int cs_topo_route_load(const cs_topo_t *t, int src, int dst, const cs_topo_load_t *load,
                       cs_hop_t *hops);

/* A ring order hint (order.c): writes a cyclic order of all nodes in which
 * consecutive nodes are neighbours wherever the shape allows (Gray code on a
 * hypercube, a Hamiltonian cycle on a mesh or torus with an even side, a
 * snake otherwise).  Returns 1 if it wrote one, 0 when node order is already
 * the best (line, ring, complete, custom). */
int cs_topo_ring_hint(const cs_topo_t *t, int32_t *order);

/* Graph statistics computed with igraph on the undirected link graph. */
typedef struct cs_topo_stats {
    int nodes;
    int64_t links;       /* physical (undirected) links */
    int64_t channels;    /* directed channels */
    int min_degree, max_degree; /* link degree */
    double diameter;     /* in hops; -1 when disconnected */
    double avg_distance; /* mean shortest-path length over ordered pairs */
    int connected;
} cs_topo_stats_t;
/* Exact statistics.  Diameter and average distance cost O(n * m); callers
 * with more than `max_nodes_for_paths` nodes get them left at -1 (and a
 * machine may then supply its own closed form). */
int cs_topo_stats(const cs_topo_t *t, int max_nodes_for_paths, cs_topo_stats_t *out, cs_error_t *err);
/* As cs_topo_stats, telling fn (when not NULL) how far the distances are:
 * `phase` names the pass ("diameter", "mean distance"), fraction is in
 * [0, 1] or < 0 when the pass does not say.  fn is called from the
 * calling thread only, while the statistics are computed (a front end's
 * progress line: `collsim topo` on 10,440 TSPs takes seconds). */
typedef void (*cs_topo_progress_fn)(void *ctx, const char *phase, double fraction);
int cs_topo_stats_watched(const cs_topo_t *t, int max_nodes_for_paths, cs_topo_progress_fn fn,
                          void *ctx, cs_topo_stats_t *out, cs_error_t *err);

/* The eccentricity of `node` in the link graph (its greatest distance in
 * hops to a node it reaches), through igraph.  O(n + m). */
int cs_topo_eccentricity(const cs_topo_t *t, int node, int *out, cs_error_t *err);

/* The diameter in hops of the quotient graph whose vertices are groups of
 * nodes (group[v] in 0..ngroups-1 for every node v) and whose edges are the
 * links between two groups; pairs of groups that no path joins are left
 * out.  For the group-level diameter of a hierarchy (a Dragonfly's node
 * graph).  O(ngroups * m) through igraph. */
int cs_topo_group_diameter(const cs_topo_t *t, const int32_t *group, int ngroups, int *out,
                           cs_error_t *err);

/* The capacity of the smallest cut that separates the nodes with side[v]
 * == 0 from those with side[v] == 1 (-1: neither) when link l carries
 * cap[l] in each direction: igraph's maximum flow from one set to the
 * other.  With the two halves of the hosts as the sides it is the
 * bandwidth across that split, an upper bound of the bisection bandwidth
 * (the minimum over all balanced splits, which no polynomial method
 * finds).  O(maximum flow) through igraph. */
int cs_topo_cut(const cs_topo_t *t, const double *cap, const int8_t *side, double *out,
                cs_error_t *err);

/* Builds the undirected igraph graph of the links (one edge per link).
 * `graph` is an igraph_t* (void* here so that this header does not pull
 * igraph into every includer); the caller destroys it, holding
 * cs_topo_igraph_lock from before this call until after that. */
int cs_topo_to_igraph(const cs_topo_t *t, void *graph, cs_error_t *err);

/* Writers: GraphML (via igraph) and Graphviz DOT. */
int cs_topo_write_graphml(const cs_topo_t *t, FILE *f, cs_error_t *err);
/* Makes igraph return its errors (out of memory, a failed write) as codes,
 * which the functions here turn into cs_error_t, instead of aborting as its
 * default handler does.  igraph's handlers are process-wide: a front end
 * calls this once at start-up (the command line does). */
void cs_topo_igraph_errors_as_codes(void);
/* igraph is not thread-safe in Debian's build (IGRAPH_THREAD_SAFE 0: a
 * process-wide error stack, handlers and RNG): every igraph call of collsim
 * runs between these, one thread at a time.  Recursive; the functions of
 * this header that use igraph take it themselves (topo_igraph.c). */
void cs_topo_igraph_lock(void);
void cs_topo_igraph_unlock(void);
int cs_topo_write_dot(const cs_topo_t *t, FILE *f, cs_error_t *err);

#endif
