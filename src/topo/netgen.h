/*
 * netgen.h - the classic network generators (issue 18), each a function
 * that adds its hosts, switches, links and routing to a cs_netdesc_t, and a
 * registry that builds one from the `net:` machine's spec keys
 * (gen=fattree,k=4,...).
 *
 * Conventions every generator follows (docs/networks.md shows each):
 *   - hosts first: hosts get ids 0..H-1, in the order a ring over them is
 *     good (hosts of one switch, node or group consecutive), switches after;
 *   - group hints: a host's group is its leaf switch, dragonfly group or
 *     node (hierarchical algorithms use it); switches get the group of
 *     the hosts below them where that is one, else -1;
 *   - levels for tree drawings: hosts 0, leaf switches 1, ...;
 *   - `bw` (bytes/s) and `lat` (s) are every link's unless the generator
 *     has classes of links with their own keys (a dragonfly's global links,
 *     a two-tier cluster's fast links inside a node);
 *   - routing: `routing` names one of the generator's routings (NULL: its
 *     default); "shortest" attaches none, so that the machine routes by
 *     shortest paths (BFS, lowest channel id first); an unknown name is a
 *     CS_ERR_USAGE listing the valid ones;
 *   - sizes are checked before anything is allocated: at most
 *     CS_NETGEN_MAX_NODES nodes, CS_ERR_RANGE beyond, naming the key.
 */
#ifndef CS_NETGEN_H
#define CS_NETGEN_H

#include <stdint.h>
#include "core/error.h"
#include "core/units.h"
#include "topo/netdesc.h"

#define CS_NETGEN_MAX_NODES (1 << 22)
#define CS_NETGEN_MAX_DIMS 8
/* The largest link latency a generator accepts, in seconds: far above any
 * real network, and below what the net machine's tick (9e18 ticks of its
 * 1 ps default) can hold. */
#define CS_NETGEN_MAX_LAT 1e6

/* Fat-tree in SimGrid's general form (its FAT_TREE cluster's
 * topo_parameters "levels;down;up;parallel"): `levels` switch levels;
 * down[l] = children per switch of level l+1, up[l] = parents per node of
 * level l, par[l] = parallel links between a node of level l and each
 * parent (l = 0 is the hosts).  Hosts = prod(down).  Routing: "updown"
 * (default: up to the lowest common ancestor level, the up port chosen
 * d-mod-k by the destination, then down), "ecmp" (the up port chosen by
 * the message's salt), "shortest".  Oversubscription is expressed by up <
 * down (e.g. down=4+4, up=1+2 is 2:1 at the second level).  Sets the
 * bisection bandwidth. */
int cs_netgen_fattree(cs_netdesc_t *d, int levels, const int *down, const int *up,
                      const int *par, double bw, double lat, const char *routing,
                      cs_error_t *err);

/* An n-dimensional torus (wrap = 1) or mesh (wrap = 0) of dims[0] x ... x
 * dims[ndims-1] hosts, each its own router (a direct network, TPU-like);
 * node id = row-major index (last dimension fastest).  Routing: "dor"
 * (default: dimension order, dimension 0 first, each the shorter way
 * round, ties to the increasing direction), "shortest". */
int cs_netgen_torus(cs_netdesc_t *d, int ndims, const int *dims, int wrap, double bw,
                    double lat, const char *routing, cs_error_t *err);

/* HyperX: switches in an ndims-dimensional lattice, fully connected along
 * each dimension, `hosts` hosts per switch.  Routing: "dor" (default: fix
 * dimensions in order, one hop each), "shortest". */
int cs_netgen_hyperx(cs_netdesc_t *d, int ndims, const int *dims, int hosts, double bw,
                     double lat, const char *routing, cs_error_t *err);

/* Dragonfly (Kim et al.): g groups of a routers, p hosts per router, h
 * global links per router; routers of a group fully connected (local
 * links: bw, lat), groups joined by global links (gbw, glat) arranged as
 * named: "consecutive" (router r of group G takes G's global ports
 * r*h..r*h+h-1, port k goes to group (G + k + 1) mod g; the default) or
 * "palmtree".  g <= a*h + 1.  Routing: "minimal" (default: local hop to
 * the router with the global link to the destination group, global hop,
 * local hop), "valiant" (minimal to an intermediate group chosen by the
 * salt, then minimal), "ugal" (the two as candidates, chosen per message
 * by the machine from the load at the source router, UGAL-L; ugal_threshold
 * in packets biases it to minimal; cs_netdesc_set_route_ugal), "ugal-g"
 * (the same by the busiest channel of each candidate's path, UGAL-G),
 * "shortest". */
typedef struct cs_netgen_dragonfly {
    int a, p, h, g;
    const char *arrangement; /* NULL: consecutive */
    double bw, lat;          /* local and host links */
    double gbw, glat;        /* global links */
    int64_t ugal_threshold;  /* routing=ugal and ugal-g only (0 otherwise) */
} cs_netgen_dragonfly_t;
int cs_netgen_dragonfly(cs_netdesc_t *d, const cs_netgen_dragonfly_t *df, const char *routing,
                        cs_error_t *err);

/* The shape most ML clusters have: `nodes` nodes of `gpus` accelerators
 * fully connected inside a node by fast links (nvbw, nvlat), each
 * accelerator with a NIC link (bw, lat) to a leaf switch of `radix`
 * down-ports, leaves joined by a two-level full-bisection fat-tree of
 * spine switches.  Groups: the node.  Routing: "updown" (default),
 * "shortest".  With nvs (not NULL) a node's accelerators are joined by
 * one NVSwitch instead (a link of nvbw, nvlat each; the switches come
 * after the spines, group the node, level 1), which reduces at nvs->rate
 * with nvs->buf bytes of buffer (NVLink SHARP; cs_netdesc_set_reduce). */
typedef struct cs_netgen_nvswitch {
    double rate;  /* bytes/s of result */
    int64_t buf;  /* bytes */
} cs_netgen_nvswitch_t;
int cs_netgen_twotier(cs_netdesc_t *d, int nodes, int gpus, double nvbw, double nvlat, double bw,
                      double lat, int radix, const cs_netgen_nvswitch_t *nvs,
                      const char *routing, cs_error_t *err);

/* `hosts` hosts each with a private link (bw, lat) to one switch (SimGrid's
 * FLAT cluster, a crossbar); backbone_bw > 0 puts a backbone link
 * (backbone_bw, backbone_lat) between that switch and a second one that
 * all traffic crosses (SimGrid's cluster backbone); 0: none. */
int cs_netgen_star(cs_netdesc_t *d, int hosts, double bw, double lat, double backbone_bw,
                   double backbone_lat, cs_error_t *err);

/* One topology per dimension, as ASTRA-sim's users describe systems:
 * "ring:8:300GB/s+switch:16:50GB/s" (KIND:SIZE[:BW[:LAT]] items, kinds
 * ring, full, switch; bw and lat where an item gives none), dimension 0
 * innermost; see netgen_dims.c.  Routing: "dor" (default), "shortest".
 * Sets the dims hint. */
int cs_netgen_multidim(cs_netdesc_t *d, const char *dims, double bw, double lat,
                       const char *routing, cs_error_t *err);

/* The same from a table instead of text (the ASTRA-sim network file,
 * netfile_astra.c): n dimensions (1..CS_NETGEN_MAX_DIMS), dimension 0
 * innermost, each its kind, size (1..CS_NETGEN_MAX_NODES), bw (bytes/s)
 * and lat (s).  Host id = c0 + s0 * (c1 + s1 * (c2 + ...)); switches after
 * the hosts.  CS_ERR_RANGE beyond CS_NETGEN_MAX_NODES nodes, before
 * anything is added. */
typedef enum cs_netgen_dim_kind {
    CS_NETGEN_DIM_RING, CS_NETGEN_DIM_FULL, CS_NETGEN_DIM_SWITCH
} cs_netgen_dim_kind_t;
typedef struct cs_netgen_dim {
    cs_netgen_dim_kind_t kind;
    int size;
    double bw, lat;
} cs_netgen_dim_t;
int cs_netgen_multidim_dims(cs_netdesc_t *d, int n, const cs_netgen_dim_t *dims,
                            const char *routing, cs_error_t *err);

/* ---- by name, from spec keys ------------------------------------------- */

typedef struct cs_netgen_type {
    const char *name;    /* "fattree" */
    const char *summary; /* one line */
    const char *usage;   /* its keys with defaults: "k=4,n=2 | levels=..,down=..,up=..,par=.." */
    const char *const *keys; /* the keys it reads, NULL-terminated */
    /* reads its keys (bw, lat, routing are read by the caller and passed);
     * list values are '+'-separated ("down=4+4", "dims=8+8+8" or "8x8x8") */
    int (*build)(cs_spec_t *spec, double bw, double lat, const char *routing, cs_netdesc_t *d,
                 cs_error_t *err);
} cs_netgen_type_t;

const cs_netgen_type_t *const *cs_netgen_types(int *count);
/* CS_ERR_USAGE listing the generators when `name` is none of them. */
int cs_netgen_find(const char *name, const cs_netgen_type_t **out, cs_error_t *err);

#endif
