/*
 * netdesc.h - a network described by its parts (issue 18): hosts that run
 * ranks, switches that only forward, links each with its own bandwidth,
 * latency and multiplicity, hints (a group per node: the switch, dragonfly
 * group or node a host belongs to; a level per node for tree drawings) and,
 * when a generator knows the structure, its routing (dimension order,
 * up/down, minimal or Valiant on a dragonfly).
 *
 * Files (topo/netfile.h: edge lists, GraphML, SimGrid platform XML) and
 * generators (topo/netgen.h: fat-trees, dragonflies, tori, HyperX, two-tier
 * clusters) produce one; the `net:` machine (machines/net.c) turns it into
 * a topology with per-channel timing and runs it like every other machine.
 *
 * Multiplicity: k parallel links between two nodes are one channel per
 * direction with k times the bandwidth (the fluid view of link
 * aggregation; docs/networks.md), so that routing need not choose among
 * them.  A link given twice in a file adds up the same way.
 */
#ifndef CS_NETDESC_H
#define CS_NETDESC_H

#include <stdint.h>
#include "core/error.h"

typedef enum cs_netnode_kind { CS_NETNODE_HOST = 0, CS_NETNODE_SWITCH = 1 } cs_netnode_kind_t;

typedef struct cs_netlink {
    int32_t u, v;   /* node ids, u != v */
    double bw;      /* bytes per second, each direction, for one of the mult links */
    double lat;     /* seconds */
    int32_t mult;   /* parallel links, >= 1 */
    int32_t line;   /* where it was read (0: generated) */
    int32_t shared; /* 1: half duplex, one bandwidth for both directions together
                     * (SimGrid's SHARED link; cs_topo_share_channels) */
} cs_netlink_t;

typedef struct cs_netdesc cs_netdesc_t; /* opaque */

/* A route a generator knows: writes the path from node src to node dst
 * (src != dst) as node ids, src first and dst last, at most `max` of them,
 * and returns their number, or -1 when there is none or it is longer.
 * `salt` chooses among equal options (ECMP's path, Valiant's intermediate
 * group): the machine passes a hash of the message's (src, dst), so that a
 * message's packets take one path and runs are deterministic.  vc[i] gets
 * the virtual-channel class (below CS_TOPO_VCS) of the hop path[i] -> path[i+1]: the
 * caller zeroes it, a route that needs classes to be deadlock-free with
 * finite buffers (a dateline on a ring, after a dragonfly's global hop)
 * sets them. */
typedef int (*cs_netdesc_route_fn)(const void *ctx, int32_t src, int32_t dst, uint64_t salt,
                                   int32_t *path, uint8_t *vc, int max);

/* `source` names the description in messages ("fat.graphml",
 * "gen=fattree"); copied. */
cs_netdesc_t *cs_netdesc_new(const char *source);
void cs_netdesc_free(cs_netdesc_t *d); /* accepts NULL; frees the route ctx */

/* Adds a node and returns its id (ids are dense, in order of addition).
 * `label` is copied (NULL: none); `group` is a hint, -1 for none. */
int32_t cs_netdesc_add_node(cs_netdesc_t *d, cs_netnode_kind_t kind, const char *label,
                            int32_t group);
/* Adds a link u-v.  Errors (CS_ERR_PARSE, prefixed "SOURCE:LINE: " when
 * line > 0, else "SOURCE: "): an unknown node, a self-loop, a bandwidth
 * that is not > 0 and finite, a negative or non-finite latency, mult < 1.
 * A second link between the same two nodes with the same bandwidth and
 * latency adds to the first's multiplicity; with other values it is an
 * error naming both lines. */
int cs_netdesc_add_link(cs_netdesc_t *d, int32_t u, int32_t v, double bw, double lat,
                        int32_t mult, int32_t line, cs_error_t *err);
/* The same for a half-duplex link (cs_netlink_t.shared): bw is the total
 * of both directions.  A parallel link must be half duplex too (an error
 * naming both lines otherwise). */
int cs_netdesc_add_shared_link(cs_netdesc_t *d, int32_t u, int32_t v, double bw, double lat,
                               int32_t mult, int32_t line, cs_error_t *err);
/* Makes link `link` (< cs_netdesc_nlinks) half duplex: for a generator's
 * links that a file says are shared (SimGrid's SHARED clusters). */
void cs_netdesc_set_shared(cs_netdesc_t *d, int32_t link);
/* Sets a node's drawing level (0 = hosts, 1 = the switches above them, ...;
 * -1: none, the default). */
void cs_netdesc_set_level(cs_netdesc_t *d, int32_t node, int level);
/* Makes switch `node` reduce in the network (issue 36: SHARP, NVLS): it
 * combines what hosts send it at `rate` bytes per second of result and
 * holds at most `buf` bytes of partial results at once; rate 0 makes it
 * an ordinary switch again.  CS_ERR_PARSE "SOURCE: ..." for a host, a rate
 * that is negative or not finite, a buffer below 1 byte. */
int cs_netdesc_set_reduce(cs_netdesc_t *d, int32_t node, double rate, int64_t buf,
                          cs_error_t *err);
/* The reduction rate of `node` (bytes/s) and, when buf is not NULL, its
 * buffer (bytes); 0 (and 0) for a node that does not reduce. */
double cs_netdesc_reduce(const cs_netdesc_t *d, int32_t node, int64_t *buf);
/* Attaches the generator's routing: `name` for reports ("up/down
 * (d-mod-k)"), copied; ctx is freed with free_ctx (may be NULL) when d is. */
void cs_netdesc_set_route(cs_netdesc_t *d, const char *name, cs_netdesc_route_fn fn, void *ctx,
                          void (*free_ctx)(void *));
/* Attaches UGAL routing (Kim, Dally, Scott & Abts, ISCA 2008): two
 * candidate routes sharing ctx, the minimal one (also what
 * cs_netdesc_route gives) and a non-minimal one (Valiant's), that the
 * machine chooses between per message by the load (machines/net.c):
 * minimal when q_min * H_min <= q_nm * H_nm + threshold (in packets, or
 * flows in fluid mode), q the load of the first channel out of the
 * source's router (UGAL-L, CS_NETDESC_UGAL_LOCAL) or of the most loaded
 * channel of the candidate's path (UGAL-G, CS_NETDESC_UGAL_GLOBAL). */
#define CS_NETDESC_UGAL_LOCAL 1
#define CS_NETDESC_UGAL_GLOBAL 2
void cs_netdesc_set_route_ugal(cs_netdesc_t *d, const char *name, cs_netdesc_route_fn min_fn,
                               cs_netdesc_route_fn nonmin_fn, int view, int64_t threshold,
                               void *ctx, void (*free_ctx)(void *));
/* The view UGAL routing was attached with (CS_NETDESC_UGAL_LOCAL or
 * _GLOBAL; *threshold, if not NULL, set to its threshold); 0 without. */
int cs_netdesc_ugal(const cs_netdesc_t *d, int64_t *threshold);
/* UGAL's non-minimal candidate (see cs_netdesc_route for the arguments);
 * -1 without UGAL routing. */
int cs_netdesc_route_nonmin(const cs_netdesc_t *d, int32_t src, int32_t dst, uint64_t salt,
                            int32_t *path, uint8_t *vc, int max);
/* The hosts form a lattice of n dimensions (sizes[0] the innermost, host
 * id = c0 + s0 * (c1 + s1 * ...)): a hint for per-dimension collectives;
 * n = 0 (the default) for none.  At most CS_NETDESC_MAX_DIMS. */
#define CS_NETDESC_MAX_DIMS 8
void cs_netdesc_set_dims(cs_netdesc_t *d, int n, const int *sizes);
int cs_netdesc_dims(const cs_netdesc_t *d, int *sizes); /* returns n */
/* The routing rule of one of collsim's standard shapes ("ring", "line",
 * "complete", "hypercube", "mesh:4x4", "torus:4x4", "cylinder:4x4"; see
 * topo.h): the network *is* that shape, node for node, and routes as it
 * does.  What `collsim topo --graphml` writes for a machine on a standard
 * topology, so that reading it back gives the same routes.  Copied; NULL
 * clears. */
void cs_netdesc_set_shape(cs_netdesc_t *d, const char *shape);
const char *cs_netdesc_shape(const cs_netdesc_t *d); /* NULL: none */
/* The bisection bandwidth (bytes/s) when a generator knows it (0: unknown). */
void cs_netdesc_set_bisection(cs_netdesc_t *d, double bytes_per_s);

const char *cs_netdesc_source(const cs_netdesc_t *d);
int32_t cs_netdesc_nodes(const cs_netdesc_t *d);
int32_t cs_netdesc_hosts(const cs_netdesc_t *d);
cs_netnode_kind_t cs_netdesc_kind(const cs_netdesc_t *d, int32_t node);
const char *cs_netdesc_label(const cs_netdesc_t *d, int32_t node); /* NULL: none */
int32_t cs_netdesc_group(const cs_netdesc_t *d, int32_t node);      /* -1: none */
int cs_netdesc_level(const cs_netdesc_t *d, int32_t node);          /* -1: none */
int32_t cs_netdesc_nlinks(const cs_netdesc_t *d);
const cs_netlink_t *cs_netdesc_link(const cs_netdesc_t *d, int32_t i);
/* The link between u and v, or -1. */
int32_t cs_netdesc_find_link(const cs_netdesc_t *d, int32_t u, int32_t v);
double cs_netdesc_bisection(const cs_netdesc_t *d);
/* The generator's routing name, or NULL when it attached none. */
const char *cs_netdesc_route_name(const cs_netdesc_t *d);
/* The generator's route (see cs_netdesc_route_fn); -1 without one. */
int cs_netdesc_route(const cs_netdesc_t *d, int32_t src, int32_t dst, uint64_t salt,
                     int32_t *path, uint8_t *vc, int max);

/* Attaches equal-cost multipath routing over shortest paths to any
 * network (topo/netecmp.c): a flow (the salt) hashed to one of the
 * shortest paths, hop by hop.  CS_ERR_USAGE when d has routes already. */
int cs_netdesc_route_ecmp(cs_netdesc_t *d, cs_error_t *err);

/* Checks what a runnable network needs: at least one host, and every host
 * reaching every other (CS_ERR_PARSE naming two hosts that cannot). */
int cs_netdesc_check(const cs_netdesc_t *d, cs_error_t *err);

#endif
