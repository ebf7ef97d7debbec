/*
 * netfile.c - network files (netfile.h, issue 18): the edge-list reader,
 * the GraphML reader (igraph's parser, GraphML primer http://graphml.graphdrawing.org/
 * primer/graphml-primer.html) and the GraphML writer.  SimGrid platform XML
 * is read in netfile_simgrid.c.  docs/networks.md shows each format.
 */
#include "topo/netfile_internal.h"

#include <igraph.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

#include "core/lines.h"
#include "core/units.h"
#include "topo/netgen.h"
#include "topo/topo.h"

/* ---- edge list --------------------------------------------------------------- */

#define EL_MAX_FIELDS 5 /* one more than any line has, to detect too many */

/* Splits `line` (modified) into at most EL_MAX_FIELDS fields; '#' starts a
 * comment.  Returns the number of fields, EL_MAX_FIELDS meaning "too many". */
static int el_fields(char *line, char **f)
{
    int n = 0;
    line[strcspn(line, "#\r\n")] = '\0';
    for (char *save = NULL, *t = strtok_r(line, " \t", &save); t && n < EL_MAX_FIELDS;
         t = strtok_r(NULL, " \t", &save))
        f[n++] = t;
    return n;
}

/* "switch NAME reduce=BW [buf=BYTES]": a switch that reduces in the
 * network (issue 36). */
static int el_reduce(cs_netfile_stage_t *st, char **f, int n, int32_t line, cs_error_t *err)
{
    char w[512];
    double rate = 0;
    int64_t buf = CS_NETFILE_REDUCE_BUF;
    int32_t id;
    int rc;
    cs_netfile_where(cs_netfile_stage_path(st), line, w, sizeof w);
    for (int i = 2; i < n; i++) {
        if (!strncmp(f[i], "reduce=", 7) && i == 2) {
            if ((rc = cs_units_parse_bandwidth(f[i] + 7, 1.0, &rate, err)))
                return cs_netfile_reparse(err, "%sswitch %s: reduce", w, f[1]);
            if (!(rate > 0))
                return cs_error_set(err, CS_ERR_PARSE, "%sswitch %s: reduce=%s is not a rate "
                                    "above 0", w, f[1], f[i] + 7);
        } else if (!strncmp(f[i], "buf=", 4) && i == 3) {
            if ((rc = cs_units_parse_bytes(f[i] + 4, &buf, err)))
                return cs_netfile_reparse(err, "%sswitch %s: buf", w, f[1]);
        } else {
            return cs_error_set(err, CS_ERR_PARSE, "%sunknown field \"%s\": expected \"switch "
                                "NAME [reduce=BW [buf=BYTES]]\"", w, f[i]);
        }
    }
    if ((rc = cs_netfile_stage_node(st, f[1], line, &id, err)))
        return rc;
    cs_netfile_stage_set_reduce(st, id, rate, buf, line);
    return CS_OK;
}

/* "host NAME [rank R]" and "switch NAME [reduce=BW [buf=BYTES]]". */
static int el_declare(cs_netfile_stage_t *st, char **f, int n, int32_t line, cs_error_t *err)
{
    char w[512];
    int is_switch = !strcmp(f[0], "switch");
    int32_t id;
    int64_t rank;
    int rc;
    cs_netfile_where(cs_netfile_stage_path(st), line, w, sizeof w);
    if (n < 2)
        return cs_error_set(err, CS_ERR_PARSE, "%s\"%s\" needs a node name", w, f[0]);
    if (is_switch && n > 2 && n < EL_MAX_FIELDS && (rc = el_reduce(st, f, n, line, err)))
        return rc;
    if (is_switch && n > 2 && n < EL_MAX_FIELDS)
        n = 2;
    if (n > (is_switch ? 2 : 4) || (n == 3 && !is_switch))
        return cs_error_set(err, CS_ERR_PARSE, "%stoo many fields: expected \"%s\"", w,
                            is_switch ? "switch NAME [reduce=BW [buf=BYTES]]"
                                      : "host NAME [rank R]");
    if (n == 4 && strcmp(f[2], "rank"))
        return cs_error_set(err, CS_ERR_PARSE, "%sunknown keyword \"%s\" (a host line is "
                            "\"host NAME [rank R]\")", w, f[2]);
    if ((rc = cs_netfile_stage_node(st, f[1], line, &id, err)))
        return rc;
    if (is_switch && cs_netfile_stage_rank(st, id) >= 0)
        return cs_error_set(err, CS_ERR_PARSE, "%s%s has a rank (line %d): a switch runs no "
                            "rank", w, f[1], (int)cs_netfile_stage_rank_line(st, id));
    cs_netfile_stage_set_kind(st, id, is_switch ? CS_NETNODE_SWITCH : CS_NETNODE_HOST);
    if (n < 4)
        return CS_OK;
    if (cs_netfile_stage_rank(st, id) >= 0)
        return cs_error_set(err, CS_ERR_PARSE, "%shost %s: rank given twice (first on line %d)",
                            w, f[1], (int)cs_netfile_stage_rank_line(st, id));
    if ((rc = cs_units_parse_int(f[3], &rank, err)) || rank >= CS_NETGEN_MAX_NODES) {
        if (!rc)
            cs_error_set(err, CS_ERR_PARSE, "rank %s is beyond %d", f[3], CS_NETGEN_MAX_NODES);
        return cs_netfile_reparse(err, "%shost %s", w, f[1]);
    }
    cs_netfile_stage_set_rank(st, id, rank, line);
    return CS_OK;
}

/* "a b [bandwidth] [latency]". */
static int el_link(cs_netfile_stage_t *st, char **f, int n, int32_t line, double bw, double lat,
                   cs_error_t *err)
{
    char w[512];
    int32_t u, v;
    int rc;
    cs_netfile_where(cs_netfile_stage_path(st), line, w, sizeof w);
    if (n < 2)
        return cs_error_set(err, CS_ERR_PARSE, "%stoo few fields: expected \"a b [bandwidth] "
                            "[latency]\", \"host NAME [rank R]\" or \"switch NAME\"", w);
    if (n > 4)
        return cs_error_set(err, CS_ERR_PARSE, "%stoo many fields: expected \"a b [bandwidth] "
                            "[latency]\"", w);
    if ((n > 2 && ((rc = cs_units_parse_bandwidth(f[2], 1.0, &bw, err)) ||
                   (rc = cs_netfile_check_range(1, bw, err)))) ||
        (n > 3 && ((rc = cs_units_parse_seconds(f[3], 1.0, &lat, err)) ||
                   (rc = cs_netfile_check_range(0, lat, err))))) {
        return cs_netfile_reparse(err, "%slink %s-%s", w, f[0], f[1]);
    }
    if ((rc = cs_netfile_stage_node(st, f[0], line, &u, err)) ||
        (rc = cs_netfile_stage_node(st, f[1], line, &v, err)))
        return rc;
    cs_netfile_stage_link(st, u, v, bw, lat, 1, line);
    return CS_OK;
}

static int read_edgelist(const cs_source_t *file, double dflt_bw, double dflt_lat, cs_netdesc_t **out,
                         cs_error_t *err)
{
    cs_lines_t *src;
    cs_netfile_stage_t *st;
    char *buf = NULL, *fld[EL_MAX_FIELDS];
    size_t cap = 0;
    int32_t line = 0;
    int rc = CS_OK, got = 0;
    const char *path = file->name;
    if ((rc = cs_source_lines(file, &src, err)))
        return rc;
    st = cs_netfile_stage_new(path);
    while (rc == CS_OK && (got = cs_lines_next_copy(src, &buf, &cap)) > 0) {
        int n = el_fields(buf, fld);
        line++;
        if (n == 0)
            continue;
        if (!strcmp(fld[0], "host") || !strcmp(fld[0], "switch"))
            rc = el_declare(st, fld, n, line, err);
        else
            rc = el_link(st, fld, n, line, dflt_bw, dflt_lat, err);
    }
    if (rc == CS_OK && got < 0)
        rc = cs_lines_error(got, path, line, err);
    free(buf);
    cs_lines_free(src);
    if (rc == CS_OK)
        rc = cs_netfile_stage_build(st, out, err);
    cs_netfile_stage_free(st);
    return rc;
}

/* ---- GraphML (igraph) ----------------------------------------------------------- */

static const char *const gml_node_attrs[] = {"id", "kind", "rank", "group", "level", "label",
                                              "reduce", "reduce_buf", NULL};
static const char *const gml_edge_attrs[] = {"id", "bandwidth", "latency", "multiplicity", NULL};

static int in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return 1;
    return 0;
}

/* Refuses an attribute other than `valid` (NULL: none is read), naming
 * it; `reads` lists the valid ones for the message. */
/* The graph attribute collsim writes: the routing of a standard shape
 * (cs_netdesc_set_shape). */
static const char *const gml_graph_attrs[] = {"routing", NULL};

static int gml_check_names(const char *path, const igraph_strvector_t *names, const char *what,
                           const char *const *valid, const char *reads, cs_error_t *err)
{
    for (igraph_integer_t i = 0; i < igraph_strvector_size(names); i++) {
        const char *n = igraph_strvector_get(names, i);
        if (!valid || !in_list(n, valid))
            return cs_error_set(err, CS_ERR_PARSE, "%s: unknown %s attribute \"%s\" (collsim "
                                "reads: %s)", path, what, n, reads);
    }
    return CS_OK;
}

static int gml_has(const igraph_strvector_t *names, const char *name)
{
    for (igraph_integer_t i = 0; i < igraph_strvector_size(names); i++)
        if (!strcmp(igraph_strvector_get(names, i), name))
            return 1;
    return 0;
}

/* The node or edge attributes of a graph read with igraph's C attributes. */
typedef struct gml_attrs {
    const igraph_t *g;
    igraph_strvector_t names;
    igraph_vector_int_t types;
} gml_attrs_t;

/* One attribute value as text ("" when absent), whatever its GraphML type:
 * numbers are printed back exactly (%.17g), booleans as true/false (which
 * no number parser takes). */
static const char *gml_value(const gml_attrs_t *a, int vertex, const char *name,
                             igraph_integer_t i, char *buf, size_t len)
{
    for (igraph_integer_t k = 0; k < igraph_strvector_size(&a->names); k++) {
        if (strcmp(igraph_strvector_get(&a->names, k), name))
            continue;
        switch (VECTOR(a->types)[k]) {
        case IGRAPH_ATTRIBUTE_NUMERIC: {
            double x = vertex ? VAN(a->g, name, i) : EAN(a->g, name, i);
            if (isnan(x))
                return "";
            snprintf(buf, len, "%.17g", x);
            return buf;
        }
        case IGRAPH_ATTRIBUTE_STRING:
            return vertex ? VAS(a->g, name, i) : EAS(a->g, name, i);
        case IGRAPH_ATTRIBUTE_BOOLEAN:
            snprintf(buf, len, "%s", (vertex ? VAB(a->g, name, i) : EAB(a->g, name, i))
                     ? "true" : "false");
            return buf;
        default:
            return "";
        }
    }
    return "";
}

/* An integer attribute in [lo, hi]; "" leaves *out alone.  `where` is
 * "PATH:LINE: " or "PATH: " (cs_netfile_where). */
static int gml_int(const char *where, const char *elem, const char *name, const char *text,
                   int64_t lo, int64_t hi, int64_t *out, cs_error_t *err)
{
    char *end;
    double x;
    if (!*text)
        return CS_OK;
    x = strtod(text, &end);
    if (*end || x != floor(x) || x < (double)lo || x > (double)hi)
        return cs_error_set(err, CS_ERR_PARSE, "%s%s: %s \"%s\" is not a whole number in "
                            "%lld..%lld", where, elem, name, text, (long long)lo, (long long)hi);
    *out = (int64_t)x;
    return CS_OK;
}

/* Nodes keyed by their GraphML id (unique in a file); the label, when the
 * file has that attribute, names the node in messages and drawings (empty:
 * none, as collsim writes a node without label).  Messages name the
 * node's line (from the scan). */
static int gml_nodes(cs_netfile_stage_t *st, const gml_attrs_t *a,
                     const cs_netfile_gmlscan_t *scan, cs_error_t *err)
{
    const char *path = cs_netfile_stage_path(st);
    int use_label = gml_has(&a->names, "label");
    for (igraph_integer_t i = 0; i < igraph_vcount(a->g); i++) {
        char idb[64], kb[64], b[64], elem[300], w[512];
        int32_t line;
        const char *id = gml_value(a, 1, "id", i, idb, sizeof idb);
        const char *kind = gml_value(a, 1, "kind", i, kb, sizeof kb);
        int64_t rank = -1, group = -1, level = -1;
        int32_t n;
        int rc;
        if (!*id) { /* igraph keeps GraphML's ids; a node without is named by position */
            snprintf(idb, sizeof idb, "#%lld", (long long)i);
            id = idb;
        }
        snprintf(elem, sizeof elem, "node %s", id);
        line = cs_netfile_gml_node_line(scan, id);
        cs_netfile_where(path, line, w, sizeof w);
        /* the scan refused an id given twice, with both lines: this stays
         * for igraph's own ids (a node without one is named "#i") */
        if (cs_netfile_stage_find(st, id) >= 0)
            return cs_error_set(err, CS_ERR_PARSE, "%s%s: the id is used twice", w, elem);
        if ((rc = cs_netfile_stage_node(st, id, line, &n, err)))
            return rc;
        if (use_label) {
            const char *label = gml_value(a, 1, "label", i, b, sizeof b);
            cs_netfile_stage_set_label(st, n, *label ? label : NULL);
        }
        if (*kind && strcmp(kind, "host") && strcmp(kind, "switch"))
            return cs_error_set(err, CS_ERR_PARSE, "%s%s: kind \"%s\" is neither host nor "
                                "switch", w, elem, kind);
        cs_netfile_stage_set_kind(st, n, !strcmp(kind, "switch") ? CS_NETNODE_SWITCH
                                                                  : CS_NETNODE_HOST);
        if ((rc = gml_int(w, elem, "rank", gml_value(a, 1, "rank", i, b, sizeof b), -1,
                          CS_NETGEN_MAX_NODES, &rank, err)) ||
            (rc = gml_int(w, elem, "group", gml_value(a, 1, "group", i, b, sizeof b), -1,
                          INT32_MAX, &group, err)) ||
            (rc = gml_int(w, elem, "level", gml_value(a, 1, "level", i, b, sizeof b), -1,
                          INT16_MAX, &level, err)))
            return rc;
        if (rank >= 0 && !strcmp(kind, "switch"))
            return cs_error_set(err, CS_ERR_PARSE, "%s%s: a switch has no rank", w, elem);
        cs_netfile_stage_set_rank(st, n, rank, line);
        cs_netfile_stage_set_hints(st, n, (int32_t)group, (int)level);
        /* a reducing switch (issue 36): its rate (the scan checked it as
         * a bandwidth) and buffer */
        const char *red = gml_value(a, 1, "reduce", i, b, sizeof b);
        char bb[64];
        const char *rbuf = gml_value(a, 1, "reduce_buf", i, bb, sizeof bb);
        double rate = 0;
        int64_t buf = CS_NETFILE_REDUCE_BUF;
        if (*red && (rc = cs_units_parse_bandwidth(red, 1.0, &rate, err)))
            return cs_netfile_reparse(err, "%s%s: reduce", w, elem);
        if (*rbuf && (rc = cs_units_parse_bytes(rbuf, &buf, err)))
            return cs_netfile_reparse(err, "%s%s: reduce_buf", w, elem);
        if (*rbuf && !*red)
            return cs_error_set(err, CS_ERR_PARSE, "%s%s: reduce_buf without reduce (the "
                                "switch's reduction rate)", w, elem);
        if (*red)
            cs_netfile_stage_set_reduce(st, n, rate, buf, line);
    }
    return CS_OK;
}

/* Edges, with their <edge>'s line when the scan could tell it. */
static int gml_edges(cs_netfile_stage_t *st, const gml_attrs_t *a,
                     const cs_netfile_gmlscan_t *scan, double bw0, double lat0, cs_error_t *err)
{
    const char *path = cs_netfile_stage_path(st);
    char b[64], w[512];
    igraph_integer_t ecount = igraph_ecount(a->g);
    for (igraph_integer_t e = 0; e < ecount; e++) {
        igraph_integer_t from, to;
        double bw = bw0, lat = lat0;
        int64_t mult = 1;
        const char *t;
        int rc = CS_OK;
        int32_t line = cs_netfile_gml_edge_line(scan, e, ecount);
        igraph_edge(a->g, e, &from, &to);
        cs_netfile_where(path, line, w, sizeof w);
        if (*(t = gml_value(a, 0, "bandwidth", e, b, sizeof b)))
            rc = cs_units_parse_bandwidth(t, 1.0, &bw, err);
        if (!rc && *(t = gml_value(a, 0, "latency", e, b, sizeof b)))
            rc = cs_units_parse_seconds(t, 1.0, &lat, err);
        if (!rc)
            rc = gml_int("", "edge", "multiplicity",
                         gml_value(a, 0, "multiplicity", e, b, sizeof b), 1, INT32_MAX, &mult,
                         err);
        if (rc) {
            if (line)
                return cs_netfile_reparse(err, "%sedge %s-%s", w,
                                          cs_netfile_stage_name(st, (int32_t)from),
                                          cs_netfile_stage_name(st, (int32_t)to));
            return cs_netfile_reparse(err, "%sedge %lld", w, (long long)e);
        }
        cs_netfile_stage_link(st, (int32_t)from, (int32_t)to, bw, lat, (int32_t)mult, line);
    }
    return CS_OK;
}

static int gml_stage(cs_netfile_stage_t *st, const igraph_t *g,
                     const cs_netfile_gmlscan_t *scan, double bw, double lat, cs_error_t *err)
{
    const char *path = cs_netfile_stage_path(st);
    igraph_strvector_t gnames, enames;
    igraph_vector_int_t gtypes, etypes;
    gml_attrs_t va = {g, {0}, {0}}, ea = {g, {0}, {0}};
    int rc;
    igraph_strvector_init(&gnames, 0);
    igraph_strvector_init(&va.names, 0);
    igraph_strvector_init(&enames, 0);
    igraph_vector_int_init(&gtypes, 0);
    igraph_vector_int_init(&va.types, 0);
    igraph_vector_int_init(&etypes, 0);
    igraph_cattribute_list(g, &gnames, &gtypes, &va.names, &va.types, &enames, &etypes);
    ea.names = enames;
    ea.types = etypes;
    if (igraph_vcount(g) > CS_NETGEN_MAX_NODES)
        rc = cs_error_set(err, CS_ERR_RANGE, "%s: %lld nodes, more than %d", path,
                          (long long)igraph_vcount(g), CS_NETGEN_MAX_NODES);
    else if (!(rc = gml_check_names(path, &gnames, "graph", gml_graph_attrs, "routing", err)) &&
             !(rc = gml_check_names(path, &va.names, "node", gml_node_attrs,
                                    "kind, rank, group, level, label, reduce, reduce_buf", err)) &&
             !(rc = gml_check_names(path, &enames, "edge", gml_edge_attrs,
                                    "bandwidth, latency, multiplicity", err)) &&
             !(rc = gml_nodes(st, &va, scan, err)))
        rc = gml_edges(st, &ea, scan, bw, lat, err);
    igraph_strvector_destroy(&gnames);
    igraph_strvector_destroy(&va.names);
    igraph_strvector_destroy(&enames);
    igraph_vector_int_destroy(&gtypes);
    igraph_vector_int_destroy(&va.types);
    igraph_vector_int_destroy(&etypes);
    return rc;
}

/* igraph's first error of a read, where it arose: its handler is called
 * again at each level the error goes up through, and the GraphML reader
 * returns IGRAPH_PARSEERROR whatever the cause (an IGRAPH_ENOMEM "Cannot
 * reserve space for vector." in its SAX callbacks included).  Read and
 * written under the igraph lock only. */
static char gml_igraph_reason[256];
static igraph_error_t gml_igraph_first;

static void gml_igraph_error(const char *reason, const char *file, int line,
                             igraph_error_t e)
{
    (void)file;
    (void)line;
    if (gml_igraph_first == IGRAPH_SUCCESS)
        gml_igraph_first = e;
    if (!gml_igraph_reason[0] && reason && *reason)
        snprintf(gml_igraph_reason, sizeof gml_igraph_reason, "%s", reason);
    gml_igraph_reason[strcspn(gml_igraph_reason, "\n")] = '\0';
    IGRAPH_FINALLY_FREE(); /* what igraph_error_handler_ignore does */
}

/* Whether igraph's failure is a lack of memory: IGRAPH_ENOMEM where the
 * error arose or as the result (libxml2's, inside igraph, is seen by
 * cs_netfile_xml_oom: igraph passes it on as a parse error). */
static int gml_igraph_oom(igraph_error_t e)
{
    return e == IGRAPH_ENOMEM || gml_igraph_first == IGRAPH_ENOMEM;
}

/* Two passes: the scan (netfile_gmlscan.c) refuses, with lines, what
 * igraph would read in silence, in bounded memory; then igraph builds the
 * graph and its attributes, which become the staged network. */
static int read_graphml(const cs_source_t *file, double bw, double lat, cs_netdesc_t **out,
                        cs_error_t *err)
{
    const char *path = file->name;
    cs_netfile_gmlscan_t *scan;
    igraph_t g;
    FILE *f;
    int rc;
    if ((rc = cs_netfile_gml_scan(file, &scan, err)))
        return rc;
    if ((rc = cs_source_fopen(file, &f, err))) {
        cs_netfile_gml_scan_free(scan);
        return rc;
    }
    /* igraph's attribute table and handlers are process-global (see
     * topo_igraph.c): installed for this read only, the caller's restored,
     * all under the igraph lock (another thread's igraph calls must not see
     * them) */
    cs_topo_igraph_lock();
    igraph_attribute_table_t *old_table = igraph_set_attribute_table(&igraph_cattribute_table);
    igraph_error_handler_t *old_err = igraph_set_error_handler(gml_igraph_error);
    igraph_warning_handler_t *old_warn = igraph_set_warning_handler(igraph_warning_handler_ignore);
    gml_igraph_reason[0] = '\0';
    gml_igraph_first = IGRAPH_SUCCESS;
    cs_netfile_xml_quiet_t quiet;
    cs_netfile_xml_quiet_begin(&quiet);
    igraph_error_t e = igraph_read_graph_graphml(&g, f, 0);
    int xml_oom = e != IGRAPH_SUCCESS && cs_netfile_xml_oom();
    cs_netfile_xml_quiet_end(&quiet);
    fclose(f);
    if (e != IGRAPH_SUCCESS && (xml_oom || gml_igraph_oom(e))) {
        rc = cs_error_set(err, CS_ERR_OOM, "%s: out of memory (igraph's GraphML reader: %s)",
                          path, gml_igraph_reason[0] ? gml_igraph_reason : igraph_strerror(e));
    } else if (e != IGRAPH_SUCCESS) {
        rc = cs_error_set(err, CS_ERR_PARSE, "%s: not a GraphML graph igraph can read: %s%s%s%s",
                          path, igraph_strerror(e), gml_igraph_reason[0] ? " (" : "",
                          gml_igraph_reason, gml_igraph_reason[0] ? ")" : "");
    } else {
        cs_netfile_stage_t *st = cs_netfile_stage_new(path);
        char *shape = NULL;
        rc = gml_stage(st, &g, scan, bw, lat, err);
        if (rc == CS_OK && igraph_cattribute_has_attr(&g, IGRAPH_ATTRIBUTE_GRAPH, "routing"))
            shape = cs_strdup(GAS(&g, "routing"));
        igraph_destroy(&g); /* with the table that made its attributes */
        if (rc == CS_OK)
            rc = cs_netfile_stage_build(st, out, err);
        if (rc == CS_OK && shape)
            cs_netdesc_set_shape(*out, shape);
        free(shape);
        cs_netfile_stage_free(st);
    }
    igraph_set_warning_handler(old_warn);
    igraph_set_error_handler(old_err);
    igraph_set_attribute_table(old_table);
    cs_topo_igraph_unlock();
    cs_netfile_gml_scan_free(scan);
    return rc;
}

/* ---- GraphML writer ------------------------------------------------------------ */

int cs_netfile_write_graphml(const cs_netdesc_t *d, FILE *f, cs_error_t *err)
{
    static const char *const keys[][4] = {
        {"kind", "node", "string", NULL}, {"rank", "node", "int", NULL},
        {"group", "node", "int", NULL},   {"level", "node", "int", NULL},
        {"label", "node", "string", NULL}, {"bandwidth", "edge", "double", NULL},
        {"latency", "edge", "double", NULL}, {"multiplicity", "edge", "int", NULL},
    };
    int32_t rank = 0;
    int reducing = 0; /* the keys of reducing switches only where there are some */
    for (int32_t i = 0; i < cs_netdesc_nodes(d) && !reducing; i++)
        reducing = cs_netdesc_reduce(d, i, NULL) > 0;
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<!-- written by collsim: bandwidth in bytes/s, each direction, of one of the "
          "multiplicity parallel links; latency in s; group and level -1: none -->\n"
          "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n", f);
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        fprintf(f, "  <key id=\"%s\" for=\"%s\" attr.name=\"%s\" attr.type=\"%s\"/>\n",
                keys[k][0], keys[k][1], keys[k][0], keys[k][2]);
    if (reducing)
        fputs("  <key id=\"reduce\" for=\"node\" attr.name=\"reduce\" attr.type=\"double\"/>\n"
              "  <key id=\"reduce_buf\" for=\"node\" attr.name=\"reduce_buf\" "
              "attr.type=\"long\"/>\n", f);
    if (cs_netdesc_shape(d))
        fputs("  <key id=\"routing\" for=\"graph\" attr.name=\"routing\" "
              "attr.type=\"string\"/>\n", f);
    fputs("  <graph id=\"G\" edgedefault=\"undirected\">\n", f);
    if (cs_netdesc_shape(d)) {
        fputs("    <data key=\"routing\">", f);
        cs_netfile_xml_escaped(f, cs_netdesc_shape(d));
        fputs("</data>\n", f);
    }
    for (int32_t i = 0; i < cs_netdesc_nodes(d); i++) {
        int host = cs_netdesc_kind(d, i) == CS_NETNODE_HOST;
        fprintf(f, "    <node id=\"n%d\"><data key=\"kind\">%s</data>", (int)i,
                host ? "host" : "switch");
        if (host)
            fprintf(f, "<data key=\"rank\">%d</data>", (int)rank++);
        fprintf(f, "<data key=\"group\">%d</data><data key=\"level\">%d</data>",
                (int)cs_netdesc_group(d, i), cs_netdesc_level(d, i));
        if (cs_netdesc_label(d, i)) {
            fputs("<data key=\"label\">", f);
            cs_netfile_xml_escaped(f, cs_netdesc_label(d, i));
            fputs("</data>", f);
        }
        int64_t rbuf;
        double rate = cs_netdesc_reduce(d, i, &rbuf);
        if (rate > 0)
            fprintf(f, "<data key=\"reduce\">%.17g</data><data key=\"reduce_buf\">%lld</data>",
                    rate, (long long)rbuf);
        fputs("</node>\n", f);
    }
    for (int32_t i = 0; i < cs_netdesc_nlinks(d); i++) {
        const cs_netlink_t *l = cs_netdesc_link(d, i);
        fprintf(f, "    <edge source=\"n%d\" target=\"n%d\"><data key=\"bandwidth\">%.17g"
                "</data><data key=\"latency\">%.17g</data><data key=\"multiplicity\">%d"
                "</data></edge>\n", (int)l->u, (int)l->v, l->bw, l->lat, (int)l->mult);
    }
    fputs("  </graph>\n</graphml>\n", f);
    if (fflush(f) || ferror(f))
        return cs_error_set(err, CS_ERR_IO, "writing the GraphML of %s failed",
                            cs_netdesc_source(d));
    return CS_OK;
}

/* ---- entry points ----------------------------------------------------------------- */

/* ASTRA-sim's file gives every link's bandwidth and latency: no defaults. */
static int read_astra(const cs_source_t *file, double bw, double lat, cs_netdesc_t **out,
                      cs_error_t *err)
{
    (void)bw, (void)lat;
    return cs_netfile_read_astra(file, out, err);
}

/* The formats, one row each, in cs_netfile_format_t's order: a new format
 * is a reader file and a row here.  A file written for another simulator
 * names it: a run keeps that simulator's defaults for what the file does
 * not say (machines/net.c; docs/networks.md). */
static const struct netfile_row {
    cs_netfile_format_info_t info;
    const char *suffix[3]; /* told from the name by these, under auto */
    int (*read)(const cs_source_t *file, double bw, double lat, cs_netdesc_t **out,
                cs_error_t *err);
} formats[] = {
    {{"edgelist", NULL, NULL, 0}, {NULL}, read_edgelist},
    {{"graphml", NULL, NULL, 0}, {".graphml"}, read_graphml},
    {{"simgrid", "SimGrid", "simgrid-default", 1}, {".xml"}, cs_netfile_read_simgrid},
    {{"astra", "ASTRA-sim", "astra-default", 0}, {".yml", ".yaml"}, read_astra},
};
#define NFORMATS (int)(sizeof formats / sizeof formats[0])

int cs_netfile_parse_format(const char *name, cs_netfile_format_t *out, cs_error_t *err)
{
    char valid[128] = "auto";
    if (name && !strcmp(name, "auto")) {
        *out = CS_NETFILE_AUTO;
        return CS_OK;
    }
    for (int i = 0; i < NFORMATS; i++) {
        if (name && !strcmp(name, formats[i].info.name)) {
            *out = (cs_netfile_format_t)(i + 1);
            return CS_OK;
        }
        snprintf(valid + strlen(valid), sizeof valid - strlen(valid), ", %s",
                 formats[i].info.name);
    }
    return cs_error_set(err, CS_ERR_USAGE, "unknown network file format \"%s\"; valid: %s",
                        name ? name : "", valid);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

cs_netfile_format_t cs_netfile_resolve_format(const char *name, cs_netfile_format_t format)
{
    if (format != CS_NETFILE_AUTO)
        return format;
    for (int i = 0; i < NFORMATS; i++)
        for (int k = 0; k < 3 && formats[i].suffix[k]; k++)
            if (ends_with(name, formats[i].suffix[k]))
                return (cs_netfile_format_t)(i + 1);
    return CS_NETFILE_EDGELIST;
}

const cs_netfile_format_info_t *cs_netfile_format_info(cs_netfile_format_t format)
{
    return format > CS_NETFILE_AUTO && (int)format <= NFORMATS ? &formats[format - 1].info
                                                               : NULL;
}

int cs_netfile_read(const cs_source_t *src, cs_netfile_format_t format, double dflt_bw,
                    double dflt_lat, cs_netdesc_t **out, cs_error_t *err)
{
    *out = NULL;
    format = cs_netfile_resolve_format(src->name, format);
    return formats[format - 1].read(src, dflt_bw, dflt_lat, out, err);
}
