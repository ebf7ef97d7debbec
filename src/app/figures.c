/*
 * figures.c - what `collsim run` and `collsim compare` share for figures
 * (app.h): short machine names for titles and table rows, the title of a
 * run, and the time syntax of --window and --frame-step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "core/units.h"

void cs_app_machine_short(const cs_machine_t *m, char *buf, size_t len)
{
    int rows = m->grid_rows, cols = m->grid_cols;
    const cs_topo_t *t = m->topo;
    if (rows <= 0)
        cs_topo_grid(t, &rows, &cols);
    if (rows > 0 && cols > 0 && (int64_t)rows * cols == cs_topo_nodes(t))
        snprintf(buf, len, "%s %s %d\xc3\x97%d", m->type, cs_topo_name(t), rows, cols);
    else
        snprintf(buf, len, "%s %s of %d nodes", m->type, cs_topo_name(t), cs_topo_nodes(t));
}

void cs_app_run_title(const cs_machine_t *m, const cs_app_coll_t *c, const char *program,
                      int ranks, char *buf, size_t len)
{
    char mach[96], size[32];
    cs_app_machine_short(m, mach, sizeof mach);
    if (!c) {
        snprintf(buf, len, "%s (%d ranks) on %s", program ? program : "program", ranks, mach);
        return;
    }
    const cs_coll_args_t *a = &c->args;
    cs_units_format_bytes(a->bytes, size, sizeof size);
    int vector = a->kind == CS_COLL_BROADCAST || a->kind == CS_COLL_REDUCE ||
                 a->kind == CS_COLL_ALLREDUCE;
    snprintf(buf, len, "%s/%s, %s%s, %d ranks on %s", cs_coll_name(a->kind), c->algo->name,
             size, vector ? "" : a->kind == CS_COLL_BARRIER ? " token" : " per rank", a->P, mach);
}

int cs_app_parse_time(const char *text, double tick_seconds, cs_tick_t *out, cs_error_t *err)
{
    int64_t ticks;
    double s;
    const char *p = text;
    while (*p == '.' || (*p >= '0' && *p <= '9'))
        p++;
    if (*p == '\0' && p > text && !strchr(text, '.')) {
        int rc = cs_units_parse_int(text, &ticks, err);
        if (rc == CS_OK)
            *out = ticks;
        return rc;
    }
    if (*p == '\0')
        return cs_error_set(err, CS_ERR_USAGE, "'%s': a time needs a unit (ns, us, ms, s) or "
                            "is a whole number of ticks", text);
    int rc = cs_units_parse_seconds(text, 0, &s, err);
    if (rc)
        return rc;
    if (s < 0)
        return cs_error_set(err, CS_ERR_RANGE, "'%s': a time must be >= 0", text);
    double t = s / tick_seconds;
    if (t > 9e18)
        return cs_error_set(err, CS_ERR_RANGE, "'%s': too large", text);
    *out = (cs_tick_t)(t + 0.5);
    return CS_OK;
}
