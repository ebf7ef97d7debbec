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
/* CS_ERR_USAGE "ROUTING: unknown routing for GEN; valid: a, b" unless
 * routing is NULL or one of `valid` (NULL-terminated); *index gets its
 * position (0 for NULL: the first listed is the default). */
int cs_netgen_routing(const char *gen, const char *routing, const char *const *valid, int *index,
                      cs_error_t *err);

#endif
