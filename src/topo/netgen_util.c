/*
 * netgen_util.c - the spec helpers the generators share (netgen_internal.h).
 */
#include "topo/netgen_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cs_netgen_spec_list(cs_spec_t *spec, const char *key, int max, int *out, int *n,
                        cs_error_t *err)
{
    const char *v = cs_spec_get(spec, key), *p;
    *n = 0;
    if (!v)
        return CS_OK;
    for (p = v;;) {
        char item[32];
        size_t len = strcspn(p, "+x");
        int64_t x;
        if (*n == max)
            return cs_error_set(err, CS_ERR_USAGE, "%s=%s: at most %d items", key, v, max);
        if (len == 0 || len >= sizeof item)
            return cs_error_set(err, CS_ERR_USAGE, "%s=%s: expected sizes joined by + or x "
                                "(e.g. 8+8+8)", key, v);
        memcpy(item, p, len);
        item[len] = 0;
        if (cs_units_parse_int(item, &x, err) != CS_OK || x < 1 || x > CS_NETGEN_MAX_NODES)
            return cs_error_set(err, CS_ERR_RANGE, "%s=%s: \"%s\" is not a size in 1..%d", key,
                                v, item, CS_NETGEN_MAX_NODES);
        out[(*n)++] = (int)x;
        if (!p[len])
            return CS_OK;
        p += len + 1;
    }
}

int cs_netgen_spec_bw(cs_spec_t *spec, const char *key, double dflt, double *out,
                      cs_error_t *err)
{
    return cs_spec_get_bandwidth(spec, key, dflt, out, err);
}

int cs_netgen_product(const int *v, int n, const char *what, int64_t *out, cs_error_t *err)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++) {
        p *= v[i];
        if (p > CS_NETGEN_MAX_NODES)
            return cs_error_set(err, CS_ERR_RANGE, "%s: more than %d nodes", what,
                                CS_NETGEN_MAX_NODES);
    }
    *out = p;
    return CS_OK;
}

int cs_netgen_routing(const char *gen, const char *routing, const char *const *valid, int *index,
                      cs_error_t *err)
{
    char list[256] = "";
    *index = 0;
    if (!routing)
        return CS_OK;
    for (int i = 0; valid[i]; i++) {
        if (!strcmp(routing, valid[i])) {
            *index = i;
            return CS_OK;
        }
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 valid[i]);
    }
    return cs_error_set(err, CS_ERR_USAGE, "routing=%s: unknown routing for %s; valid: %s",
                        routing, gen, list);
}
