/*
 * netgen_util.c - the spec helpers the generators share (netgen_internal.h).
 */
#include "topo/netgen_internal.h"

#include <math.h>
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

int cs_netgen_check_empty(const cs_netdesc_t *d, const char *gen, cs_error_t *err)
{
    if (cs_netdesc_nodes(d) != 0)
        return cs_error_set(err, CS_ERR_USAGE, "gen=%s: the network description already has "
                            "%d nodes; a generator builds a whole network into an empty one",
                            gen, (int)cs_netdesc_nodes(d));
    return CS_OK;
}

int cs_netgen_check_timing(const char *bwkey, double bw, const char *latkey, double lat,
                           cs_error_t *err)
{
    if (!(bw > 0) || !isfinite(bw))
        return cs_error_set(err, CS_ERR_RANGE, "key '%s': the bandwidth must be positive, got %g "
                            "bytes/s", bwkey, bw);
    /* The ceiling here, not at the per-link tick conversion of the net
     * machine, so that the message names the key the user typed (nvlat,
     * backlat, glat) rather than the link's generic latency. */
    if (!(lat >= 0) || !(lat <= CS_NETGEN_MAX_LAT))
        return cs_error_set(err, CS_ERR_RANGE, "key '%s': the latency must be >= 0 and at most "
                            "%g s, got %g s", latkey, CS_NETGEN_MAX_LAT, lat);
    return CS_OK;
}

int cs_netgen_check_links(int64_t links, const char *what, cs_error_t *err)
{
    if (links > CS_NETGEN_MAX_LINKS)
        return cs_error_set(err, CS_ERR_RANGE, "%s: %lld links, more than %lld", what,
                            (long long)links, (long long)CS_NETGEN_MAX_LINKS);
    return CS_OK;
}

void cs_netgen_walk_to(cs_netgen_walk_t *w, int32_t node)
{
    if (w->n > 0 && w->n <= w->max && w->path[w->n - 1] == node)
        return;
    if (w->n < w->max) {
        w->path[w->n] = node;
        if (w->n > 0)
            w->vc[w->n - 1] = w->cls;
    }
    w->n++;
}
