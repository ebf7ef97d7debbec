/*
 * tracefmt.c - the table of trace formats (tracefmt.h): each row wraps one
 * reader (goal.c, ti.c, chakra.c) in the table's options and summary.
 * Sniffing goes from the most particular format to the fallback: Chakra
 * (a binary stream, or a prefix of rank files that is no file itself),
 * then TI (its first action line), then GOAL.
 */
#include "io/tracefmt.h"

#include <stdio.h>
#include <string.h>

#include "io/chakra.h"
#include "io/goal.h"
#include "io/ti.h"

static int goal_read(const char *path, const cs_trace_opts_t *o, cs_program_t **out,
                     cs_trace_info_t *info, cs_error_t *err)
{
    (void)o;
    info->files = 1;
    return cs_goal_read_file(path, out, err);
}

static int ti_read(const char *path, const cs_trace_opts_t *o, cs_program_t **out,
                   cs_trace_info_t *info, cs_error_t *err)
{
    cs_ti_opts_t t;
    cs_ti_info_t ti;
    cs_ti_opts_default(&t);
    t.flops_per_second = o->flops_per_second;
    memcpy(t.algo, o->algo, sizeof t.algo);
    memcpy(t.algo_opts, o->algo_opts, sizeof t.algo_opts);
    t.unit = o->unit;
    t.prepare = o->prepare;
    t.prepare_ctx = o->prepare_ctx;
    t.max_ranks = o->max_ranks;
    memset(&ti, 0, sizeof ti);
    int rc = cs_ti_read_file(path, &t, out, &ti, err);
    info->files = ti.files;
    info->records = ti.actions;
    memcpy(info->calls, ti.calls, sizeof info->calls);
    info->coll_ops = ti.coll_ops;
    return rc;
}

static void count(cs_trace_info_t *info, const char *name, int64_t v)
{
    if (v && info->ncounts < CS_TRACE_MAX_COUNTS)
        info->counts[info->ncounts].name = name, info->counts[info->ncounts++].value = v;
}

static int chakra_read(const char *path, const cs_trace_opts_t *o, cs_program_t **out,
                       cs_trace_info_t *info, cs_error_t *err)
{
    cs_chakra_opts_t c;
    cs_chakra_info_t ci;
    cs_chakra_opts_default(&c);
    c.flops_per_second = o->flops_per_second;
    memcpy(c.algo, o->algo, sizeof c.algo);
    memcpy(c.algo_opts, o->algo_opts, sizeof c.algo_opts);
    c.unit = o->unit;
    c.prepare = o->prepare;
    c.prepare_ctx = o->prepare_ctx;
    c.max_ranks = o->max_ranks;
    c.skip_unknown = o->skip_unknown;
    c.comm_group = o->comm_group;
    memset(&ci, 0, sizeof ci);
    int rc = cs_chakra_read(path, &c, out, &ci, err);
    if (rc)
        return rc;
    info->files = ci.files;
    info->records = ci.nodes;
    memcpy(info->calls, ci.calls, sizeof info->calls);
    info->coll_ops = ci.coll_ops;
    for (int t = 0; t < CS_CHAKRA_NTYPES; t++)
        count(info, cs_chakra_type_name(t), ci.types[t]);
    count(info, "process groups", ci.groups);
    count(info, "memory nodes without duration (no time)", ci.skipped_mem);
    count(info, "unknown nodes skipped", ci.skipped_nodes);
    count(info, "unknown attributes skipped", ci.skipped_attrs);
    return CS_OK;
}

static int chakra_sniff(const char *path, int *yes, cs_error_t *err)
{
    return cs_chakra_sniff(path, yes, err);
}

static const cs_trace_format_t formats[] = {
    {"goal", NULL, 0, NULL, goal_read},
    {"ti", "actions", 1, cs_ti_sniff, ti_read},
    {"chakra", "nodes", 1, chakra_sniff, chakra_read},
};
#define NFORMATS (int)(sizeof formats / sizeof formats[0])
/* auto: the most particular first */
static const int sniff_order[] = {2, 1};

const cs_trace_format_t *cs_trace_format_find(const char *name)
{
    for (int i = 0; i < NFORMATS; i++)
        if (!strcmp(formats[i].name, name))
            return &formats[i];
    return NULL;
}

void cs_trace_format_names(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < NFORMATS && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", formats[i].name);
}

int cs_trace_format_sniff(const char *path, const cs_trace_format_t **out, cs_error_t *err)
{
    for (size_t i = 0; i < sizeof sniff_order / sizeof sniff_order[0]; i++) {
        const cs_trace_format_t *f = &formats[sniff_order[i]];
        int yes = 0, rc = f->sniff(path, &yes, err);
        if (rc)
            return rc;
        if (yes) {
            *out = f;
            return CS_OK;
        }
    }
    *out = &formats[0];
    return CS_OK;
}
