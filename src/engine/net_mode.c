/*
 * net_mode.c - the channel engine's fidelity modes as a table: each mode's
 * ops table (whose name is what --mode takes and the reports print), its
 * constructor and its message-size limit.  cs_net_new picks the row; nothing
 * else in the engine asks which mode it runs.
 */
#include "engine/net_internal.h"

#include <stdint.h>
#include <string.h>

typedef struct mode_row {
    const cs_net_chan_mode_t *mode; /* its ops' name is the mode's name */
    int64_t max_units; /* exclusive bound on bytes / unit_bytes */
} mode_row_t;

static const mode_row_t modes[] = {
    /* packet mode counts a message's units in 32 bits */
    [CS_NET_PACKET] = {&cs_net_packet_mode, UINT32_MAX},
    [CS_NET_FLUID] = {&cs_net_fluid_mode, INT64_MAX},
};

static const mode_row_t *row(cs_net_mode_t m)
{
    CS_ASSERT((unsigned)m < sizeof modes / sizeof modes[0]);
    return &modes[m];
}

const char *cs_net_mode_name(cs_net_mode_t m) { return row(m)->mode->ops->name; }
const cs_net_ops_t *cs_net_channel_ops(cs_net_mode_t mode) { return row(mode)->mode->ops; }
int64_t cs_net_mode_max_units(cs_net_mode_t mode) { return row(mode)->max_units; }

int cs_net_parse_mode(const char *text, cs_net_mode_t *out, cs_error_t *err)
{
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (!strcmp(text, modes[i].mode->ops->name)) {
            *out = (cs_net_mode_t)i;
            return CS_OK;
        }
    return cs_error_set(err, CS_ERR_USAGE, "unknown mode \"%s\"; valid modes: packet, fluid", text);
}

int cs_net_new(cs_sim_t *sim, const cs_topo_t *topo, const cs_net_params_t *np,
               cs_net_mode_t mode, const cs_net_hooks_t *hooks, cs_net_t **out,
               cs_error_t *err)
{
    return cs_net_chan_new(sim, topo, np, hooks, row(mode)->mode, out, err);
}
