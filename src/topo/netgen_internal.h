/*
 * netgen_internal.h - what the generators' files share, and only they:
 * their registry tables (netgen.c lists them) and the spec helpers of
 * netgen_util.c.  Private to src/topo/netgen*.c.
 */
#ifndef CS_NETGEN_INTERNAL_H
#define CS_NETGEN_INTERNAL_H

#include "topo/netgen.h"

/* netgen_tree.c */
extern const cs_netgen_type_t cs_netgen_fattree_type, cs_netgen_twotier_type,
    cs_netgen_star_type;
/* netgen_dims.c */
extern const cs_netgen_type_t cs_netgen_multidim_type;
/* netgen_direct.c */
extern const cs_netgen_type_t cs_netgen_torus_type, cs_netgen_mesh_type, cs_netgen_hyperx_type,
    cs_netgen_dragonfly_type;

/* Links a generator may build: some shapes (HyperX, dragonflies) grow
 * links quadratically, so they are bounded on their own. */
#define CS_NETGEN_MAX_LINKS ((int64_t)8 * CS_NETGEN_MAX_NODES)

/* CS_ERR_USAGE unless d is empty: a generator builds a whole network. */
int cs_netgen_check_empty(const cs_netdesc_t *d, const char *gen, cs_error_t *err);
/* A class of links' bandwidth (> 0) and latency (>= 0), checked before
 * anything is built, so that an error names the key, not the first link. */
int cs_netgen_check_timing(const char *bwkey, double bw, const char *latkey, double lat,
                           cs_error_t *err);
/* CS_ERR_RANGE naming `what` beyond CS_NETGEN_MAX_LINKS links. */
int cs_netgen_check_links(int64_t links, const char *what, cs_error_t *err);

/* A list of positive integers under `key`: "8+8+8" or "8x8x8" (1 to max
 * items, each in 1..CS_NETGEN_MAX_NODES).  Absent key: *n = 0.  Errors name
 * the key. */
int cs_netgen_spec_list(cs_spec_t *spec, const char *key, int max, int *out, int *n,
                        cs_error_t *err);
/* A bandwidth under `key` (units required), or dflt when absent. */
int cs_netgen_spec_bw(cs_spec_t *spec, const char *key, double dflt, double *out,
                      cs_error_t *err);
/* The product of n sizes, or CS_ERR_RANGE naming `what` when it exceeds
 * CS_NETGEN_MAX_NODES. */
int cs_netgen_product(const int *v, int n, const char *what, int64_t *out, cs_error_t *err);
/* A route written node by node, for the generators' and the SimGrid
 * dragonfly's route functions (cs_netdesc_route_fn): a node equal to the
 * last is dropped, so that callers can name every waypoint (a host's
 * router, the gateway router) without asking whether they are there
 * already; each hop gets the class `cls` holds when its far end is added.
 * Start with {path, vc, max, 0, 0}. */
typedef struct cs_netgen_walk {
    int32_t *path;
    uint8_t *vc;
    int max, n;
    uint8_t cls; /* the virtual-channel class of the next hop */
} cs_netgen_walk_t;
void cs_netgen_walk_to(cs_netgen_walk_t *w, int32_t node);
/* The route's length, or -1 when it did not fit in max. */
static inline int cs_netgen_walk_end(const cs_netgen_walk_t *w)
{
    return w->n <= w->max ? w->n : -1;
}

/* CS_ERR_USAGE "ROUTING: unknown routing for GEN; valid: a, b" unless
 * routing is NULL or one of `valid` (NULL-terminated); *index gets its
 * position (0 for NULL: the first listed is the default). */
int cs_netgen_routing(const char *gen, const char *routing, const char *const *valid, int *index,
                      cs_error_t *err);

#endif
