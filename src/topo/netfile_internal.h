/*
 * netfile_internal.h - what the readers of network files share, and only
 * they (private to src/topo/netfile*.c): a staging area where a reader puts
 * the nodes and links it finds, by name and with the line that gave them,
 * before they become a cs_netdesc_t in the order the file asks for (hosts
 * permuted by rank when ranks are given), and the XML opening both XML
 * readers use (all in netfile_stage.c).
 *
 * Staging first, because a file may name a node before declaring it (an
 * edge list's "switch s1" after s1's links) and ranks reorder the hosts only
 * once all are known.
 */
#ifndef CS_NETFILE_INTERNAL_H
#define CS_NETFILE_INTERNAL_H

#include <libxml/tree.h>
#include <stdint.h>
#include <string.h>

#include "topo/netfile.h"
#include "topo/xmlread.h"

typedef struct cs_netfile_stage cs_netfile_stage_t; /* opaque */

/* `path` names the file in messages; copied. */
cs_netfile_stage_t *cs_netfile_stage_new(const char *path);
void cs_netfile_stage_free(cs_netfile_stage_t *st); /* accepts NULL */
const char *cs_netfile_stage_path(const cs_netfile_stage_t *st);

/* The number of staged nodes, and a node's name. */
int32_t cs_netfile_stage_count(const cs_netfile_stage_t *st);
const char *cs_netfile_stage_name(const cs_netfile_stage_t *st, int32_t id);
/* The node called `name`, or -1. */
int32_t cs_netfile_stage_find(const cs_netfile_stage_t *st, const char *name);
/* The node called `name`, added as a host (no rank, group or level) when it
 * is new; `line` (0: none) is where it first appeared.  CS_ERR_RANGE past
 * CS_NETGEN_MAX_NODES nodes. */
int cs_netfile_stage_node(cs_netfile_stage_t *st, const char *name, int32_t line, int32_t *id,
                          cs_error_t *err);
/* Setters of a staged node's properties (rank -1: none; label NULL: the
 * node has none; by default its label is its name). */
void cs_netfile_stage_set_label(cs_netfile_stage_t *st, int32_t id, const char *label);
void cs_netfile_stage_set_kind(cs_netfile_stage_t *st, int32_t id, cs_netnode_kind_t kind);
/* The node reduces in the network at rate bytes/s with buf bytes of buffer
 * (issue 36; checked when built: a switch, a rate and buffer
 * cs_netdesc_set_reduce takes), said on `line`. */
void cs_netfile_stage_set_reduce(cs_netfile_stage_t *st, int32_t id, double rate, int64_t buf,
                                 int32_t line);
/* A reducing switch's buffer when a file gives none. */
#define CS_NETFILE_REDUCE_BUF (INT64_C(4) << 20)
cs_netnode_kind_t cs_netfile_stage_kind(const cs_netfile_stage_t *st, int32_t id);
void cs_netfile_stage_set_rank(cs_netfile_stage_t *st, int32_t id, int64_t rank, int32_t line);
int64_t cs_netfile_stage_rank(const cs_netfile_stage_t *st, int32_t id);
int32_t cs_netfile_stage_rank_line(const cs_netfile_stage_t *st, int32_t id);
void cs_netfile_stage_set_hints(cs_netfile_stage_t *st, int32_t id, int32_t group, int level);
/* A link between staged nodes (checked when built, by cs_netdesc_add_link). */
void cs_netfile_stage_link(cs_netfile_stage_t *st, int32_t u, int32_t v, double bw, double lat,
                           int32_t mult, int32_t line);
/* The link staged last is half duplex (cs_netlink_t.shared). */
void cs_netfile_stage_share_last(cs_netfile_stage_t *st);

/* Builds the description: nodes in staging order, except that with ranks
 * the host slots are filled in rank order (ranks must then be given to
 * every host, 0..H-1, each once); then the links; then
 * cs_netdesc_check.  *out is NULL on error. */
int cs_netfile_stage_build(cs_netfile_stage_t *st, cs_netdesc_t **out, cs_error_t *err);

/* After a successful build: the description's node id of staged node i. */
int32_t cs_netfile_stage_built_id(const cs_netfile_stage_t *st, int32_t i);

/* Source routes (netfile_routes.c): node paths by (src, dst), used as a
 * description's routing. */
typedef struct cs_netfile_routes cs_netfile_routes_t;
cs_netfile_routes_t *cs_netfile_routes_new(void);
void cs_netfile_routes_free(void *routes); /* accepts NULL; a route ctx's free */
/* Adds the path of n >= 2 node ids (src first); `symmetrical`: its reverse
 * serves dst -> src unless that has a route of its own.  -1 when src -> dst
 * has one already (or n < 2). */
int cs_netfile_routes_add(cs_netfile_routes_t *r, const int32_t *path, int32_t n,
                          int symmetrical);
/* Whether src -> dst has a route (its own or a symmetrical reverse). */
int cs_netfile_routes_has(const cs_netfile_routes_t *r, int32_t src, int32_t dst);
/* Whether every ordered pair of the n distinct nodes members[] has a route
 * (its own or a symmetrical reverse): 1, or 0 with the first pair lacking
 * one in *a, *b (n^2 look-ups: a Full zone's routes, one per pair). */
int cs_netfile_routes_complete(const cs_netfile_routes_t *r, const int32_t *members, int32_t n,
                               int32_t *a, int32_t *b);
/* A cs_netdesc_route_fn over a cs_netfile_routes_t. */
int cs_netfile_routes_path(const void *routes, int32_t src, int32_t dst, uint64_t salt,
                           int32_t *path, uint8_t *vc, int max);

/* "PATH:LINE: " or "PATH: " (line 0) into buf, for messages. */
const char *cs_netfile_where(const char *path, int32_t line, char *buf, size_t len);

/* FNV-1a of a NUL-terminated name: the node-name tables of the stage and
 * of the GraphML scan. */
uint64_t cs_netfile_hash(const char *s);

/* Turns the message of a callee (a unit parser's "a bandwidth must be
 * positive, got ...") into the file's: "PREFIX: message", CS_ERR_PARSE
 * (a bad value in a file is malformed input, whatever the callee's code). */
int cs_netfile_reparse(cs_error_t *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The bandwidths and latencies a network file may give, whatever the
 * machine's tick: a bandwidth from 1 bit/s to 10^18 bytes/s (8 Eb/s; 1e300
 * would be a serialisation time of 0 and 1e-300 one beyond any run), a
 * latency 0 or from 1 fs to 10^6 s (a nonzero latency below 1 fs would
 * round to no time at any tick, one above 10^6 s overflows the clock's
 * picoseconds).  Outside: CS_ERR_PARSE saying so, for the reader to place
 * ("FILE:LINE: ..."); the unit parsers have already refused NaN, inf and
 * non-positive values. */
#define CS_NETFILE_BW_MIN 0.125
#define CS_NETFILE_BW_MAX 1e18
#define CS_NETFILE_LAT_MIN 1e-15
#define CS_NETFILE_LAT_MAX 1e6
int cs_netfile_check_range(int is_bandwidth, double v, cs_error_t *err);

/* The streaming pass over a GraphML file before igraph reads it
 * (netfile_gmlscan.c): CS_ERR_PARSE "PATH:LINE: ..." for malformed XML,
 * an entity reference, a <data> of an undeclared key, a node id given
 * twice, an edge to an undeclared node, a bandwidth or latency collsim
 * refuses; CS_ERR_OOM when libxml2 runs out of memory; CS_ERR_IO when the
 * source cannot be read.  On success *out holds each node id's line and
 * each <edge>'s, for messages (freed by cs_netfile_gml_scan_free). */
typedef struct cs_netfile_gmlscan cs_netfile_gmlscan_t;
int cs_netfile_gml_scan(const cs_source_t *src, cs_netfile_gmlscan_t **out, cs_error_t *err);
/* The line of the <node> of that id, 0 when unknown. */
int32_t cs_netfile_gml_node_line(const cs_netfile_gmlscan_t *s, const char *id);
/* The line of the e-th <edge> of the file, when igraph's graph has as many
 * edges as the file has <edge>s (ecount); else 0 (then they may not be
 * the same edges: a second <graph>, hyperedges). */
int32_t cs_netfile_gml_edge_line(const cs_netfile_gmlscan_t *s, int64_t e, int64_t ecount);
void cs_netfile_gml_scan_free(cs_netfile_gmlscan_t *s); /* accepts NULL */

/* cs_netfile_xml_read, the XML opening of both XML readers, and the
 * silencing of libxml2 around a parse are declared in topo/xmlread.h: the
 * readers of other layers (io/msccl.c) parse the same way. */

/* The zone tree of a SimGrid platform of several zones and its routing
 * (netfile_sgzone.c).  Zone 0 is the root; nodes are the description's. */
typedef enum cs_sgzone_kind {
    CS_SGZONE_LEAF,  /* hosts and routers joined by the file's routes (leaf table) */
    CS_SGZONE_STAR,  /* a FLAT cluster: every route crosses its router */
    CS_SGZONE_ZONES, /* sub-zones joined by zoneRoutes */
} cs_sgzone_kind_t;
typedef struct cs_netfile_sgtree cs_netfile_sgtree_t;
cs_netfile_sgtree_t *cs_netfile_sgtree_new(void);
void cs_netfile_sgtree_free(void *t); /* accepts NULL; frees the routes */
/* Returns the new zone's id (parent -1: the root, added first). */
int32_t cs_netfile_sgtree_add_zone(cs_netfile_sgtree_t *t, int32_t parent, cs_sgzone_kind_t kind,
                                   int32_t router);
void cs_netfile_sgtree_set_router(cs_netfile_sgtree_t *t, int32_t zone, int32_t router);
cs_sgzone_kind_t cs_netfile_sgtree_kind(const cs_netfile_sgtree_t *t, int32_t zone);
int32_t cs_netfile_sgtree_parent(const cs_netfile_sgtree_t *t, int32_t zone);
/* Puts a node in a zone (nodes not placed are in none: routes avoid
 * starting or ending there). */
void cs_netfile_sgtree_place(cs_netfile_sgtree_t *t, int32_t node, int32_t zone);
int32_t cs_netfile_sgtree_zone_of(const cs_netfile_sgtree_t *t, int32_t node);
/* Whether node lies in zone or below it. */
int cs_netfile_sgtree_within(const cs_netfile_sgtree_t *t, int32_t node, int32_t zone);
/* A zoneRoute of `zone` between its children src and dst through the
 * gateway nodes; -1 when that pair has one already. */
int cs_netfile_sgtree_add_zroute(cs_netfile_sgtree_t *t, int32_t zone, int32_t src, int32_t dst,
                                 int32_t gw_src, int32_t gw_dst, int symmetrical);
/* Whether children a -> b of zone have a zoneRoute (or a symmetrical b -> a). */
int cs_netfile_sgtree_has_zroute(const cs_netfile_sgtree_t *t, int32_t zone, int32_t a, int32_t b);
/* The node paths of the leaf zones' routes and of the zoneRoutes (gw_src to
 * gw_dst); taken over. */
void cs_netfile_sgtree_set_routes(cs_netfile_sgtree_t *t, cs_netfile_routes_t *leaf,
                                  cs_netfile_routes_t *inter);
/* The first leaf zone (in id order) where two nodes a host-to-host route
 * can need -- two of its hosts (is_host[node], n nodes), a host and a
 * zoneRoute's gateway inside it, or two gateways of zoneRoutes at different
 * levels -- have no leaf route (or a symmetrical reverse):
 * its id, the pair in *a, *b; -1 when none lacks one.  Star zones are
 * complete by construction and zones of zones are checked by the reader
 * (their zoneRoutes), so this is the only hole left.  After set_routes. */
int32_t cs_netfile_sgtree_missing(const cs_netfile_sgtree_t *t, const uint8_t *is_host,
                                  int32_t n, int32_t *a, int32_t *b);
/* A cs_netdesc_route_fn over the tree. */
int cs_netfile_sgtree_path(const void *t, int32_t src, int32_t dst, uint64_t salt,
                           int32_t *path, uint8_t *vc, int max);

/* SimGrid's DRAGONFLY cluster (netfile_sgdragonfly.c): "G,g;C,c;R,r;N"
 * (groups and blue links between two groups, chassis per group and black
 * links, routers per chassis and green links, hosts per router). */
typedef struct cs_netfile_sgdf {
    int32_t groups, blue, chassis, black, routers, green, nodes;
} cs_netfile_sgdf_t;
/* Builds it into the empty nd: hosts first (labels[h], G*C*R*N of them,
 * copied), then the routers ("ID_router_G_C_R"), the links and SimGrid's
 * minimal routing.  Needs groups <= routers (the caller checks).
 * CS_ERR_RANGE beyond the node or link limits. */
int cs_netfile_sg_dragonfly(cs_netdesc_t *nd, const cs_netfile_sgdf_t *p, double bw, double lat,
                            const char *id, const char *const *labels, cs_error_t *err);

/* What the SimGrid readers share (netfile_simgrid.c defines them): the
 * file's path for messages and the error. */
typedef struct cs_netfile_sg {
    const char *path;
    cs_error_t *err;
} cs_netfile_sg_t;
static inline int cs_netfile_sg_line(xmlNodePtr n) { return (int)xmlGetLineNo(n); }
static inline int cs_netfile_sg_is(xmlNodePtr n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}
/* "PATH:LINE: " + message, CS_ERR_PARSE. */
int cs_netfile_sg_fail(const cs_netfile_sg_t *s, xmlNodePtr n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An attribute's text, or NULL (valid while the document is). */
const char *cs_netfile_sg_attr(xmlNodePtr n, const char *name);
/* Refuses attributes outside `valid` (space-separated) and, unless
 * children_ok, child elements. */
int cs_netfile_sg_check(const cs_netfile_sg_t *s, xmlNodePtr n, const char *valid,
                        int children_ok);
/* The attribute, or NULL and *rc set (when still CS_OK) to "needs ...". */
const char *cs_netfile_sg_need(const cs_netfile_sg_t *s, xmlNodePtr n, const char *name, int *rc);
/* SimGrid's units; errors name the element and key. */
int cs_netfile_sg_bandwidth(const cs_netfile_sg_t *s, xmlNodePtr n, const char *key,
                            const char *text, double *out);
int cs_netfile_sg_latency(const cs_netfile_sg_t *s, xmlNodePtr n, const char *key,
                          const char *text, double *out);
/* A sharing_policy (`dflt` when the attribute is absent: SimGrid's default
 * for the element): SPLITDUPLEX (or its old name FULLDUPLEX), SHARED or
 * FATPIPE in *policy; anything else is refused naming the valid ones. */
typedef enum cs_netfile_sg_policy {
    CS_SG_SPLITDUPLEX = 0,
    CS_SG_SHARED,
    CS_SG_FATPIPE
} cs_netfile_sg_policy_t;
int cs_netfile_sg_sharing(const cs_netfile_sg_t *s, xmlNodePtr n, const char *key,
                          const char *dflt, cs_netfile_sg_policy_t *policy);
/* A radical's host count, and with vals (room for the count) its numbers. */
int cs_netfile_sg_radical(const cs_netfile_sg_t *s, xmlNodePtr n, const char *text,
                          int64_t *count, int64_t *vals);
/* netfile_sgroutes.c: a <zone> of hosts, routers, links and routes (full:
 * its routes are the paths), and a <zone> of zones and clusters. */
int cs_netfile_sg_zone(const cs_netfile_sg_t *s, xmlNodePtr zone, int full, cs_netdesc_t **out);
int cs_netfile_sg_zones(const cs_netfile_sg_t *s, xmlNodePtr zone, cs_netdesc_t **out);

/* ASTRA-sim's analytical network .yml (netfile_astra.c): CS_ERR_PARSE
 * "PATH:LINE: ..." naming the key for malformed YAML, an unknown key or
 * topology, lists of different lengths, a number out of range;
 * CS_ERR_RANGE past CS_NETGEN_MAX_NODES NPUs (checked before anything is
 * built); CS_ERR_USAGE when the build lacks libyaml. */
int cs_netfile_read_astra(const cs_source_t *src, cs_netdesc_t **out, cs_error_t *err);

/* SimGrid platform XML (netfile_simgrid.c). */
int cs_netfile_read_simgrid(const cs_source_t *src, double dflt_bw, double dflt_lat,
                            cs_netdesc_t **out, cs_error_t *err);

#endif
