/*
 * netfile_astra.c - ASTRA-sim's analytical network description (issue 31):
 * the `.yml` file of ASTRA-sim 2.x's analytical backend
 * (astra-network-analytical, common/network-parser/NetworkParser.cpp), one
 * entry per dimension in four lists of equal length:
 *
 *     topology: [ Ring, FullyConnected, Switch ]
 *     npus_count: [ 4, 2, 2 ]
 *     bandwidth: [ 50.0, 25.0, 12.5 ]  # GB/s
 *     latency: [ 500.0, 500.0, 500.0 ]  # ns
 *
 * read with libyaml's event parser (its marks give the lines) and built by
 * the multi-dimensional generator (netgen_dims.c), which lays out the same
 * network ASTRA-sim's backends build: NPU id = c0 + s0 * (c1 + s1 * ...),
 * dimension 0 fastest (MultiDimTopology::translate_address); a Ring is a
 * bidirectional ring (Ring.cpp: i <-> i+1 and s-1 <-> 0, one link each way
 * for s = 2), FullyConnected a link per pair, Switch one switch per line of
 * the dimension with a link to each of its NPUs; every link has its
 * dimension's bandwidth and latency.  Routing is dimension order, dimension
 * 0 first, and on a ring the shorter way, clockwise (increasing) at a tie,
 * as Ring::route goes anticlockwise only when that is strictly shorter.
 *
 * Units as the backend reads them: bandwidth in GB/s where GB is 2^30
 * bytes (NetworkFunction.cpp, bw_GBps_to_Bpns: bw * (1 << 30) / 1e9
 * bytes per ns), latency in ns.  What the file cannot say (ASTRA-sim's
 * system layer: chunk splits, endpoint delay, reduction cost) is in
 * docs/networks.md with the collsim parameters that match it.
 *
 * Without libyaml (meson: CS_HAVE_YAML 0) a .yml file is refused saying so.
 */
#include "topo/netfile_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/netgen.h"

#define ASTRA_GB 1073741824.0 /* 2^30 bytes: ASTRA-sim's "GB" of GB/s */
#define ASTRA_NS 1e-9

#if CS_HAVE_YAML

#include <yaml.h>

/* The four keys, in the order messages list them. */
enum { KEY_TOPOLOGY, KEY_NPUS, KEY_BW, KEY_LAT, NKEYS };
static const char *const key_names[NKEYS] = {"topology", "npus_count", "bandwidth", "latency"};
static const char *const topo_names[] = {"Ring", "FullyConnected", "Switch"};
static const cs_netgen_dim_kind_t topo_kinds[] = {CS_NETGEN_DIM_RING, CS_NETGEN_DIM_FULL,
                                                  CS_NETGEN_DIM_SWITCH};

typedef struct astra {
    const char *path;
    cs_error_t *err;
    yaml_parser_t parser;
    int line[NKEYS]; /* where each key was given; 0: not yet */
    int count[NKEYS];
    cs_netgen_dim_t dim[CS_NETGEN_MAX_DIMS];
} astra_t;

/* "PATH:LINE: " + message, CS_ERR_PARSE (line: 1-based; 0 for none). */
static int fail(const astra_t *a, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(const astra_t *a, int line, const char *fmt, ...)
{
    char w[512], msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cs_error_set(a->err, CS_ERR_PARSE, "%s%s", cs_netfile_where(a->path, line, w,
                                                                       sizeof w), msg);
}

static int ev_line(const yaml_event_t *ev) { return (int)ev->start_mark.line + 1; }

/* The next event; libyaml's own errors become "PATH:LINE: problem". */
static int next(astra_t *a, yaml_event_t *ev)
{
    if (yaml_parser_parse(&a->parser, ev))
        return CS_OK;
    if (a->parser.error == YAML_MEMORY_ERROR)
        return cs_error_set(a->err, CS_ERR_OOM, "%s: out of memory (libyaml)", a->path);
    const char *problem = a->parser.problem ? a->parser.problem : "malformed";
    /* the reader (encoding, control characters) marks no line: its byte */
    if (a->parser.error == YAML_READER_ERROR)
        return fail(a, 0, "byte %zu: not YAML libyaml can read: %s", a->parser.problem_offset,
                    problem);
    return fail(a, (int)a->parser.problem_mark.line + 1, "not YAML libyaml can read: %s%s%s",
                problem, a->parser.context ? " " : "",
                a->parser.context ? a->parser.context : "");
}

/* What an event is, for messages that refuse it. */
static const char *ev_what(const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT: return "a single value";
    case YAML_SEQUENCE_START_EVENT: return "a list";
    case YAML_MAPPING_START_EVENT: return "a mapping";
    case YAML_ALIAS_EVENT: return "an alias (*name)";
    default: return "something else";
    }
}

/* One list item of key k: its text, checked and stored in dimension i. */
static int item(astra_t *a, int k, int i, const char *text, int line)
{
    char *end;
    if (k == KEY_TOPOLOGY) {
        for (size_t t = 0; t < sizeof topo_names / sizeof topo_names[0]; t++) {
            if (!strcmp(text, topo_names[t])) {
                a->dim[i].kind = topo_kinds[t];
                return CS_OK;
            }
        }
        return fail(a, line, "topology \"%s\" (dimension %d) is unknown; valid: Ring, "
                    "FullyConnected, Switch", text, i);
    }
    if (k == KEY_NPUS) {
        long long v = strtoll(text, &end, 10);
        if (end == text || *end || v < 2 || v > CS_NETGEN_MAX_NODES)
            return fail(a, line, "npus_count \"%s\" (dimension %d) is not a whole number in "
                        "2..%d (ASTRA-sim refuses a dimension of fewer than 2 NPUs)", text, i,
                        CS_NETGEN_MAX_NODES);
        a->dim[i].size = (int)v;
        return CS_OK;
    }
    double v = strtod(text, &end);
    if (end == text || *end || !isfinite(v) || (k == KEY_BW ? v <= 0 : v < 0))
        return fail(a, line, "%s \"%s\" (dimension %d) is not a %s number (%s)", key_names[k],
                    text, i, k == KEY_BW ? "positive" : "non-negative",
                    k == KEY_BW ? "GB/s, GB = 2^30 bytes" : "ns");
    double si = k == KEY_BW ? v * ASTRA_GB : v * ASTRA_NS;
    if (cs_netfile_check_range(k == KEY_BW, si, a->err))
        return cs_netfile_reparse(a->err, "%s:%d: %s %s (dimension %d)", a->path, line,
                                  key_names[k], text, i);
    if (k == KEY_BW)
        a->dim[i].bw = si;
    else
        a->dim[i].lat = si;
    return CS_OK;
}

/* The value of key k (given on `line`): a list of scalars. */
static int list(astra_t *a, int k, int line)
{
    yaml_event_t ev;
    int rc;
    if ((rc = next(a, &ev)))
        return rc;
    int is_list = ev.type == YAML_SEQUENCE_START_EVENT;
    const char *what = ev_what(&ev);
    line = ev_line(&ev);
    yaml_event_delete(&ev);
    if (!is_list)
        return fail(a, line, "%s is %s; expected a list, one item per dimension "
                    "(%s: [ ... ])", key_names[k], what, key_names[k]);
    for (int n = 0;; n++) {
        if ((rc = next(a, &ev)))
            return rc;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            if (n == 0)
                return fail(a, line, "%s is an empty list", key_names[k]);
            a->count[k] = n;
            return CS_OK;
        }
        int l = ev_line(&ev);
        if (ev.type != YAML_SCALAR_EVENT) {
            what = ev_what(&ev);
            yaml_event_delete(&ev);
            return fail(a, l, "%s: item %d is %s; expected a single value", key_names[k], n,
                        what);
        }
        if (n == CS_NETGEN_MAX_DIMS)
            rc = fail(a, l, "%s: more than %d dimensions", key_names[k], CS_NETGEN_MAX_DIMS);
        else
            rc = item(a, k, n, (const char *)ev.data.scalar.value, l);
        yaml_event_delete(&ev);
        if (rc)
            return rc;
    }
}

/* The document: one mapping of the four keys. */
static int document(astra_t *a)
{
    yaml_event_t ev;
    int rc, type;
    /* stream start, document start, mapping start */
    for (int want = 0; want < 3; want++) {
        if ((rc = next(a, &ev)))
            return rc;
        type = ev.type;
        int l = ev_line(&ev);
        const char *what = ev_what(&ev);
        yaml_event_delete(&ev);
        if (want == 1 && type == YAML_STREAM_END_EVENT)
            return fail(a, 0, "empty: expected the keys topology, npus_count, bandwidth and "
                        "latency");
        if (want == 2 && type != YAML_MAPPING_START_EVENT)
            return fail(a, l, "the file is %s; expected the keys topology, npus_count, "
                        "bandwidth and latency", what);
    }
    for (;;) {
        if ((rc = next(a, &ev)))
            return rc;
        if (ev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        int l = ev_line(&ev), k = NKEYS;
        if (ev.type != YAML_SCALAR_EVENT) {
            const char *what = ev_what(&ev);
            yaml_event_delete(&ev);
            return fail(a, l, "a key is %s; expected topology, npus_count, bandwidth or "
                        "latency", what);
        }
        for (int i = 0; i < NKEYS; i++)
            if (!strcmp((const char *)ev.data.scalar.value, key_names[i]))
                k = i;
        if (k == NKEYS)
            rc = fail(a, l, "unknown key \"%.100s\"; valid: topology, npus_count, bandwidth, "
                      "latency", (const char *)ev.data.scalar.value);
        else if (a->line[k])
            rc = fail(a, l, "key %s given twice (first on line %d)", key_names[k], a->line[k]);
        yaml_event_delete(&ev);
        if (rc)
            return rc;
        a->line[k] = l;
        if ((rc = list(a, k, l)))
            return rc;
    }
    /* document end; then nothing but the stream's end */
    if ((rc = next(a, &ev)))
        return rc;
    yaml_event_delete(&ev);
    if ((rc = next(a, &ev)))
        return rc;
    type = ev.type;
    int l = ev_line(&ev);
    yaml_event_delete(&ev);
    if (type != YAML_STREAM_END_EVENT)
        return fail(a, l, "a second YAML document; a network file holds one");
    return CS_OK;
}

/* Every key given, every list as long as topology's, the size in bounds. */
static int check(astra_t *a)
{
    int64_t npus = 1;
    for (int k = 0; k < NKEYS; k++)
        if (!a->line[k])
            return fail(a, 0, "no %s key (an ASTRA-sim network file gives topology, "
                        "npus_count, bandwidth and latency, one item per dimension)",
                        key_names[k]);
    for (int k = 1; k < NKEYS; k++)
        if (a->count[k] != a->count[KEY_TOPOLOGY])
            return fail(a, a->line[k], "%s has %d items, topology %d (line %d): one per "
                        "dimension", key_names[k], a->count[k], a->count[KEY_TOPOLOGY],
                        a->line[KEY_TOPOLOGY]);
    for (int i = 0; i < a->count[KEY_NPUS]; i++) {
        npus *= a->dim[i].size; /* each <= 2^22 and the product stops at 2^22: no overflow */
        if (npus > CS_NETGEN_MAX_NODES)
            return cs_error_set(a->err, CS_ERR_RANGE, "%s:%d: npus_count: more than %d NPUs in "
                                "all (the net machine's node limit)", a->path,
                                a->line[KEY_NPUS], CS_NETGEN_MAX_NODES);
    }
    return CS_OK;
}

int cs_netfile_read_astra(const cs_source_t *src, cs_netdesc_t **out, cs_error_t *err)
{
    astra_t a;
    FILE *f = NULL;
    int rc;
    *out = NULL;
    memset(&a, 0, sizeof a);
    a.path = src->name;
    a.err = err;
    if (!yaml_parser_initialize(&a.parser))
        return cs_error_set(err, CS_ERR_OOM, "%s: out of memory (libyaml)", a.path);
    if (src->data) {
        yaml_parser_set_input_string(&a.parser, (const unsigned char *)src->data, src->len);
    } else if ((rc = cs_source_fopen(src, &f, err))) {
        yaml_parser_delete(&a.parser);
        return rc;
    } else {
        yaml_parser_set_input_file(&a.parser, f);
    }
    rc = document(&a);
    yaml_parser_delete(&a.parser);
    if (f)
        fclose(f);
    if (rc || (rc = check(&a)))
        return rc;
    *out = cs_netdesc_new(a.path);
    if ((rc = cs_netgen_multidim_dims(*out, a.count[KEY_TOPOLOGY], a.dim, NULL, err))) {
        cs_error_prefix(err, "%s", a.path);
        cs_netdesc_free(*out);
        *out = NULL;
    }
    return rc;
}

#else /* !CS_HAVE_YAML */

int cs_netfile_read_astra(const cs_source_t *src, cs_netdesc_t **out, cs_error_t *err)
{
    *out = NULL;
    return cs_error_set(err, CS_ERR_USAGE, "%s: an ASTRA-sim network file (.yml) is read with "
                        "libyaml, and this build of collsim lacks it (install libyaml-dev and "
                        "rebuild)", src->name);
}

#endif
