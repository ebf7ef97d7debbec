/*
 * netgen.c - the registry of network generators (netgen.h); the generators
 * live in netgen_tree.c (indirect networks of switches: fat-trees, two-tier
 * clusters, stars), netgen_direct.c (tori, meshes, HyperX, dragonflies) and
 * netgen_dims.c (one topology per dimension).
 */
#include "topo/netgen_internal.h"

#include <stdio.h>
#include <string.h>

static const cs_netgen_type_t *const types[] = {
    &cs_netgen_fattree_type, &cs_netgen_dragonfly_type, &cs_netgen_torus_type,
    &cs_netgen_mesh_type,    &cs_netgen_hyperx_type,    &cs_netgen_twotier_type,
    &cs_netgen_star_type,    &cs_netgen_multidim_type,
};

const cs_netgen_type_t *const *cs_netgen_types(int *count)
{
    *count = (int)(sizeof types / sizeof types[0]);
    return types;
}

int cs_netgen_find(const char *name, const cs_netgen_type_t **out, cs_error_t *err)
{
    char list[256] = "";
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (name && !strcmp(name, types[i]->name)) {
            *out = types[i];
            return CS_OK;
        }
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 types[i]->name);
    }
    *out = NULL;
    return cs_error_set(err, CS_ERR_USAGE, "gen=%s: unknown generator; valid: %s",
                        name ? name : "", list);
}
