/*
 * netfile.c - network files (netfile.h, issue 18): the staging area all
 * readers share (netfile_internal.h), the edge-list reader, the GraphML
 * reader (igraph's parser, GraphML primer http://graphml.graphdrawing.org/
 * primer/graphml-primer.html) and the GraphML writer.  SimGrid platform XML
 * is read in netfile_simgrid.c.  docs/networks.md shows each format.
 */
#include "topo/netfile_internal.h"

#include <igraph.h>
#include <libxml/parser.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "topo/netgen.h"

/* ---- staging -------------------------------------------------------------- */

typedef struct stage_node {
    char *name;  /* the file's key for it */
    char *label; /* what the description calls it: NULL: the name */
    int anonymous; /* no label at all */
    int64_t rank; /* -1: none */
    int32_t rank_line, group, line;
    int level;
    cs_netnode_kind_t kind;
} stage_node_t;

struct cs_netfile_stage {
    char *path;
    stage_node_t *nodes;
    int32_t nnodes, cap_nodes;
    cs_netlink_t *links;
    int32_t nlinks, cap_links;
    int32_t *hash; /* open addressing over names: node index or -1 */
    int64_t hash_cap;
};

cs_netfile_stage_t *cs_netfile_stage_new(const char *path)
{
    cs_netfile_stage_t *st = cs_calloc(1, sizeof *st);
    st->path = cs_strdup(path);
    return st;
}

void cs_netfile_stage_free(cs_netfile_stage_t *st)
{
    if (!st)
        return;
    for (int32_t i = 0; i < st->nnodes; i++) {
        free(st->nodes[i].name);
        free(st->nodes[i].label);
    }
    free(st->nodes);
    free(st->links);
    free(st->hash);
    free(st->path);
    free(st);
}

const char *cs_netfile_stage_path(const cs_netfile_stage_t *st) { return st->path; }
int32_t cs_netfile_stage_count(const cs_netfile_stage_t *st) { return st->nnodes; }
const char *cs_netfile_stage_name(const cs_netfile_stage_t *st, int32_t id)
{
    return st->nodes[id].name;
}

const char *cs_netfile_where(const char *path, int32_t line, char *buf, size_t len)
{
    if (line > 0)
        snprintf(buf, len, "%s:%d: ", path, (int)line);
    else
        snprintf(buf, len, "%s: ", path);
    return buf;
}

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int64_t name_slot(const cs_netfile_stage_t *st, const char *name)
{
    int64_t mask = st->hash_cap - 1, s = (int64_t)(name_hash(name) & (uint64_t)mask);
    while (st->hash[s] >= 0 && strcmp(st->nodes[st->hash[s]].name, name))
        s = (s + 1) & mask;
    return s;
}

static void name_grow(cs_netfile_stage_t *st)
{
    int64_t cap = st->hash_cap ? 2 * st->hash_cap : 256;
    free(st->hash);
    st->hash = cs_malloc((size_t)cap * sizeof *st->hash);
    memset(st->hash, 0xff, (size_t)cap * sizeof *st->hash);
    st->hash_cap = cap;
    for (int32_t i = 0; i < st->nnodes; i++)
        st->hash[name_slot(st, st->nodes[i].name)] = i;
}

int32_t cs_netfile_stage_find(const cs_netfile_stage_t *st, const char *name)
{
    return st->hash_cap ? st->hash[name_slot(st, name)] : -1;
}

int cs_netfile_stage_node(cs_netfile_stage_t *st, const char *name, int32_t line, int32_t *id,
                          cs_error_t *err)
{
    char w[512];
    if ((*id = cs_netfile_stage_find(st, name)) >= 0)
        return CS_OK;
    if (st->nnodes >= CS_NETGEN_MAX_NODES)
        return cs_error_set(err, CS_ERR_RANGE, "%smore than %d nodes (the limit of a network)",
                            cs_netfile_where(st->path, line, w, sizeof w), CS_NETGEN_MAX_NODES);
    if (2 * ((int64_t)st->nnodes + 1) >= st->hash_cap)
        name_grow(st);
    st->nodes = cs_grow(st->nodes, st->nnodes, &st->cap_nodes, 64, sizeof *st->nodes);
    st->nodes[st->nnodes] = (stage_node_t){.name = cs_strdup(name), .rank = -1, .group = -1,
                                           .line = line, .level = -1, .kind = CS_NETNODE_HOST};
    st->hash[name_slot(st, name)] = st->nnodes;
    *id = st->nnodes++;
    return CS_OK;
}

void cs_netfile_stage_set_label(cs_netfile_stage_t *st, int32_t id, const char *label)
{
    free(st->nodes[id].label);
    st->nodes[id].label = label ? cs_strdup(label) : NULL;
    st->nodes[id].anonymous = !label;
}

void cs_netfile_stage_set_kind(cs_netfile_stage_t *st, int32_t id, cs_netnode_kind_t kind)
{
    st->nodes[id].kind = kind;
}
cs_netnode_kind_t cs_netfile_stage_kind(const cs_netfile_stage_t *st, int32_t id)
{
    return st->nodes[id].kind;
}
void cs_netfile_stage_set_rank(cs_netfile_stage_t *st, int32_t id, int64_t rank, int32_t line)
{
    st->nodes[id].rank = rank;
    st->nodes[id].rank_line = line;
}
int64_t cs_netfile_stage_rank(const cs_netfile_stage_t *st, int32_t id)
{
    return st->nodes[id].rank;
}
int32_t cs_netfile_stage_rank_line(const cs_netfile_stage_t *st, int32_t id)
{
    return st->nodes[id].rank_line;
}
void cs_netfile_stage_set_hints(cs_netfile_stage_t *st, int32_t id, int32_t group, int level)
{
    st->nodes[id].group = group;
    st->nodes[id].level = level;
}

void cs_netfile_stage_link(cs_netfile_stage_t *st, int32_t u, int32_t v, double bw, double lat,
                           int32_t mult, int32_t line)
{
    st->links = cs_grow(st->links, st->nlinks, &st->cap_links, 64, sizeof *st->links);
    st->links[st->nlinks++] = (cs_netlink_t){u, v, bw, lat, mult, line};
}

/* order[k] = the staged node that becomes node k: staging order, with the
 * host slots refilled in rank order when ranks are given. */
static int stage_order(const cs_netfile_stage_t *st, int32_t *order, cs_error_t *err)
{
    int32_t hosts = 0, ranked = 0, unranked = -1, *by_rank;
    char w[512];
    for (int32_t i = 0; i < st->nnodes; i++) {
        order[i] = i;
        if (st->nodes[i].kind != CS_NETNODE_HOST)
            continue;
        hosts++;
        if (st->nodes[i].rank >= 0)
            ranked++;
        else if (unranked < 0)
            unranked = i;
    }
    if (ranked == 0)
        return CS_OK;
    if (unranked >= 0)
        return cs_error_set(err, CS_ERR_PARSE, "%shost %s has no rank (when one host has a "
                            "rank, every host needs one)",
                            cs_netfile_where(st->path, st->nodes[unranked].line, w, sizeof w),
                            st->nodes[unranked].name);
    by_rank = cs_malloc((size_t)hosts * sizeof *by_rank);
    for (int32_t r = 0; r < hosts; r++)
        by_rank[r] = -1;
    for (int32_t i = 0; i < st->nnodes; i++) {
        const stage_node_t *n = &st->nodes[i];
        if (n->kind != CS_NETNODE_HOST)
            continue;
        if (n->rank >= hosts || by_rank[n->rank] >= 0) {
            int rc = n->rank >= hosts
                ? cs_error_set(err, CS_ERR_PARSE, "%shost %s: rank %lld, but ranks are 0..%d "
                               "(one per host)", cs_netfile_where(st->path, n->rank_line, w,
                               sizeof w), n->name, (long long)n->rank, (int)hosts - 1)
                : cs_error_set(err, CS_ERR_PARSE, "%shost %s: rank %lld is already host %s's",
                               cs_netfile_where(st->path, n->rank_line, w, sizeof w), n->name,
                               (long long)n->rank, st->nodes[by_rank[n->rank]].name);
            free(by_rank);
            return rc;
        }
        by_rank[n->rank] = i;
    }
    for (int32_t i = 0, k = 0; i < st->nnodes; i++)
        if (st->nodes[i].kind == CS_NETNODE_HOST)
            order[i] = by_rank[k++];
    free(by_rank);
    return CS_OK;
}

int cs_netfile_stage_build(cs_netfile_stage_t *st, cs_netdesc_t **out, cs_error_t *err)
{
    int32_t *order = cs_malloc(((size_t)st->nnodes + 1) * sizeof *order);
    int32_t *id = cs_malloc(((size_t)st->nnodes + 1) * sizeof *id);
    cs_netdesc_t *d = NULL;
    int rc = stage_order(st, order, err);
    *out = NULL;
    if (rc == CS_OK) {
        d = cs_netdesc_new(st->path);
        for (int32_t k = 0; k < st->nnodes; k++) {
            const stage_node_t *n = &st->nodes[order[k]];
            const char *label = n->anonymous ? NULL : n->label ? n->label : n->name;
            id[order[k]] = cs_netdesc_add_node(d, n->kind, label, n->group);
            cs_netdesc_set_level(d, id[order[k]], n->level);
        }
        for (int32_t i = 0; i < st->nlinks && rc == CS_OK; i++) {
            const cs_netlink_t *l = &st->links[i];
            rc = cs_netdesc_add_link(d, id[l->u], id[l->v], l->bw, l->lat, l->mult, l->line, err);
        }
        if (rc == CS_OK)
            rc = cs_netdesc_check(d, err);
    }
    free(order);
    free(id);
    if (rc != CS_OK)
        cs_netdesc_free(d);
    else
        *out = d;
    return rc;
}

int cs_netfile_reparse(cs_error_t *err, const char *fmt, ...)
{
    char pre[CS_ERROR_MSG_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    /* "where: " + a units message that has no ": " of its own yet */
    size_t n = strlen(pre);
    if (n >= 2 && !strcmp(pre + n - 2, ": "))
        pre[n - 2] = '\0';
    cs_error_prefix(err, "%s", pre);
    if (err)
        err->code = CS_ERR_PARSE;
    return CS_ERR_PARSE;
}

/* ---- XML ------------------------------------------------------------------- */

/* libxml2's first error (the last is often a consequence: "premature end
 * of data" after an unclosed tag); reached through the context's _private,
 * which libxml2 leaves to its user. */
typedef struct xml_first {
    int line, set;
    char msg[512];
} xml_first_t;

static void xml_first_error(void *user, xmlErrorPtr e)
{
    xml_first_t *first = ((xmlParserCtxtPtr)user)->_private;
    if (first->set || !e || e->level < XML_ERR_ERROR)
        return;
    first->set = 1;
    first->line = e->line;
    snprintf(first->msg, sizeof first->msg, "%s", e->message ? e->message : "malformed XML");
    first->msg[strcspn(first->msg, "\n")] = '\0';
}

int cs_netfile_xml_read(const char *path, xmlDocPtr *out, cs_error_t *err)
{
    xml_first_t first = {0, 0, "not well-formed XML"};
    xmlParserCtxtPtr ctx;
    FILE *f = fopen(path, "r");
    *out = NULL;
    if (!f) /* before libxml2, which would print its own warning */
        return cs_error_set(err, CS_ERR_IO, "cannot open %s", path);
    fclose(f);
    if (!(ctx = xmlNewParserCtxt()))
        return cs_error_set(err, CS_ERR_NOMEM, "%s: cannot create an XML parser", path);
    ctx->_private = &first;
    ctx->sax->serror = xml_first_error;
    /* NONET: a platform file must not make collsim fetch anything (DTDs
     * included); no NOENT: entities stay unexpanded (no billion laughs) */
    *out = xmlCtxtReadFile(ctx, path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR |
                           XML_PARSE_NOWARNING | XML_PARSE_NOBLANKS);
    xmlFreeParserCtxt(ctx);
    if (*out && !first.set)
        return CS_OK;
    xmlFreeDoc(*out);
    *out = NULL;
    return cs_error_set(err, CS_ERR_PARSE, "%s:%d: %s", path, first.line, first.msg);
}

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

/* "host NAME [rank R]" and "switch NAME". */
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
    if (n > (is_switch ? 2 : 4) || (n == 3 && !is_switch))
        return cs_error_set(err, CS_ERR_PARSE, "%stoo many fields: expected \"%s\"", w,
                            is_switch ? "switch NAME" : "host NAME [rank R]");
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
    if ((n > 2 && (rc = cs_units_parse_bandwidth(f[2], 1.0, &bw, err))) ||
        (n > 3 && (rc = cs_units_parse_seconds(f[3], 1.0, &lat, err)))) {
        return cs_netfile_reparse(err, "%slink %s-%s", w, f[0], f[1]);
    }
    if ((rc = cs_netfile_stage_node(st, f[0], line, &u, err)) ||
        (rc = cs_netfile_stage_node(st, f[1], line, &v, err)))
        return rc;
    cs_netfile_stage_link(st, u, v, bw, lat, 1, line);
    return CS_OK;
}

static int read_edgelist(const char *path, double dflt_bw, double dflt_lat, cs_netdesc_t **out,
                         cs_error_t *err)
{
    FILE *f = fopen(path, "r");
    cs_netfile_stage_t *st;
    char *buf = NULL, *fld[EL_MAX_FIELDS];
    size_t cap = 0;
    int32_t line = 0;
    int rc = CS_OK;
    if (!f)
        return cs_error_set(err, CS_ERR_IO, "cannot open %s", path);
    st = cs_netfile_stage_new(path);
    while (rc == CS_OK && getline(&buf, &cap, f) >= 0) {
        int n = el_fields(buf, fld);
        line++;
        if (n == 0)
            continue;
        if (!strcmp(fld[0], "host") || !strcmp(fld[0], "switch"))
            rc = el_declare(st, fld, n, line, err);
        else
            rc = el_link(st, fld, n, line, dflt_bw, dflt_lat, err);
    }
    if (rc == CS_OK && ferror(f))
        rc = cs_error_set(err, CS_ERR_IO, "%s: read error after line %d", path, (int)line);
    free(buf);
    fclose(f);
    if (rc == CS_OK)
        rc = cs_netfile_stage_build(st, out, err);
    cs_netfile_stage_free(st);
    return rc;
}

/* ---- GraphML (igraph) ----------------------------------------------------------- */

static const char *const gml_node_attrs[] = {"id", "kind", "rank", "group", "level", "label",
                                              NULL};
static const char *const gml_edge_attrs[] = {"id", "bandwidth", "latency", "multiplicity", NULL};

static int in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return 1;
    return 0;
}

/* Refuses an attribute other than `valid` (graph attributes: none). */
static int gml_check_names(const char *path, const igraph_strvector_t *names, const char *what,
                           const char *const *valid, cs_error_t *err)
{
    for (igraph_integer_t i = 0; i < igraph_strvector_size(names); i++) {
        const char *n = igraph_strvector_get(names, i);
        if (!valid || !in_list(n, valid))
            return cs_error_set(err, CS_ERR_PARSE, "%s: unknown %s attribute \"%s\" (collsim "
                                "reads: %s)", path, what, n,
                                valid == gml_node_attrs ? "kind, rank, group, level, label"
                                : valid ? "bandwidth, latency, multiplicity" : "none");
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

/* One attribute value as text ("" when absent), whatever its GraphML type:
 * numbers are printed back exactly (%.17g), booleans refused by the caller's
 * parse. */
typedef struct gml_attrs {
    const igraph_t *g;
    igraph_strvector_t names;
    igraph_vector_int_t types;
} gml_attrs_t;

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

/* An integer attribute in [lo, hi]; "" leaves *out alone. */
static int gml_int(const char *path, const char *elem, const char *name, const char *text,
                   int64_t lo, int64_t hi, int64_t *out, cs_error_t *err)
{
    char *end;
    double x;
    if (!*text)
        return CS_OK;
    x = strtod(text, &end);
    if (*end || x != floor(x) || x < (double)lo || x > (double)hi)
        return cs_error_set(err, CS_ERR_PARSE, "%s: %s: %s \"%s\" is not a whole number in "
                            "%lld..%lld", path, elem, name, text, (long long)lo, (long long)hi);
    *out = (int64_t)x;
    return CS_OK;
}

/* Nodes keyed by their GraphML id (unique in a file); the label, when the
 * file has that attribute, names the node in messages and drawings (empty:
 * none, as collsim writes a node without label). */
static int gml_nodes(cs_netfile_stage_t *st, const gml_attrs_t *a, cs_error_t *err)
{
    const char *path = cs_netfile_stage_path(st);
    int use_label = gml_has(&a->names, "label");
    for (igraph_integer_t i = 0; i < igraph_vcount(a->g); i++) {
        char idb[64], kb[64], b[64], elem[300];
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
        if (cs_netfile_stage_find(st, id) >= 0)
            return cs_error_set(err, CS_ERR_PARSE, "%s: %s: the id is used twice", path, elem);
        if ((rc = cs_netfile_stage_node(st, id, 0, &n, err)))
            return rc;
        if (use_label) {
            const char *label = gml_value(a, 1, "label", i, b, sizeof b);
            cs_netfile_stage_set_label(st, n, *label ? label : NULL);
        }
        if (*kind && strcmp(kind, "host") && strcmp(kind, "switch"))
            return cs_error_set(err, CS_ERR_PARSE, "%s: %s: kind \"%s\" is neither host nor "
                                "switch", path, elem, kind);
        cs_netfile_stage_set_kind(st, n, !strcmp(kind, "switch") ? CS_NETNODE_SWITCH
                                                                  : CS_NETNODE_HOST);
        if ((rc = gml_int(path, elem, "rank", gml_value(a, 1, "rank", i, b, sizeof b), -1,
                          CS_NETGEN_MAX_NODES, &rank, err)) ||
            (rc = gml_int(path, elem, "group", gml_value(a, 1, "group", i, b, sizeof b), -1,
                          INT32_MAX, &group, err)) ||
            (rc = gml_int(path, elem, "level", gml_value(a, 1, "level", i, b, sizeof b), -1,
                          INT16_MAX, &level, err)))
            return rc;
        if (rank >= 0 && !strcmp(kind, "switch"))
            return cs_error_set(err, CS_ERR_PARSE, "%s: %s: a switch has no rank", path, elem);
        cs_netfile_stage_set_rank(st, n, rank, 0);
        cs_netfile_stage_set_hints(st, n, (int32_t)group, (int)level);
    }
    return CS_OK;
}

static int gml_edges(cs_netfile_stage_t *st, const gml_attrs_t *a, double bw0, double lat0,
                     cs_error_t *err)
{
    const char *path = cs_netfile_stage_path(st);
    char b[64];
    for (igraph_integer_t e = 0; e < igraph_ecount(a->g); e++) {
        igraph_integer_t from, to;
        double bw = bw0, lat = lat0;
        int64_t mult = 1;
        const char *t;
        int rc = CS_OK;
        igraph_edge(a->g, e, &from, &to);
        if (*(t = gml_value(a, 0, "bandwidth", e, b, sizeof b)))
            rc = cs_units_parse_bandwidth(t, 1.0, &bw, err);
        if (!rc && *(t = gml_value(a, 0, "latency", e, b, sizeof b)))
            rc = cs_units_parse_seconds(t, 1.0, &lat, err);
        if (!rc)
            rc = gml_int(path, "edge", "multiplicity",
                         gml_value(a, 0, "multiplicity", e, b, sizeof b), 1, INT32_MAX, &mult,
                         err);
        if (rc) {
            char pre[300];
            snprintf(pre, sizeof pre, "%s: edge %lld", path, (long long)e);
            return cs_netfile_reparse(err, "%s", pre);
        }
        cs_netfile_stage_link(st, (int32_t)from, (int32_t)to, bw, lat, (int32_t)mult, 0);
    }
    return CS_OK;
}

static int gml_stage(cs_netfile_stage_t *st, const igraph_t *g, double bw, double lat,
                     cs_error_t *err)
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
    else if (!(rc = gml_check_names(path, &gnames, "graph", NULL, err)) &&
             !(rc = gml_check_names(path, &va.names, "node", gml_node_attrs, err)) &&
             !(rc = gml_check_names(path, &enames, "edge", gml_edge_attrs, err)) &&
             !(rc = gml_nodes(st, &va, err)))
        rc = gml_edges(st, &ea, bw, lat, err);
    igraph_strvector_destroy(&gnames);
    igraph_strvector_destroy(&va.names);
    igraph_strvector_destroy(&enames);
    igraph_vector_int_destroy(&gtypes);
    igraph_vector_int_destroy(&va.types);
    igraph_vector_int_destroy(&etypes);
    return rc;
}

static int read_graphml(const char *path, double bw, double lat, cs_netdesc_t **out,
                        cs_error_t *err)
{
    xmlDocPtr doc;
    igraph_t g;
    FILE *f;
    int rc;
    /* libxml2 first, for a line number: igraph reports a malformed file
     * only through its process-wide error handler */
    if ((rc = cs_netfile_xml_read(path, &doc, err)))
        return rc;
    xmlFreeDoc(doc);
    if (!(f = fopen(path, "r")))
        return cs_error_set(err, CS_ERR_IO, "cannot open %s", path);
    /* igraph's attribute table and handlers are process-global (see
     * topo_igraph.c): installed for this read only, the caller's restored */
    igraph_attribute_table_t *old_table = igraph_set_attribute_table(&igraph_cattribute_table);
    igraph_error_handler_t *old_err = igraph_set_error_handler(igraph_error_handler_ignore);
    igraph_warning_handler_t *old_warn = igraph_set_warning_handler(igraph_warning_handler_ignore);
    igraph_error_t e = igraph_read_graph_graphml(&g, f, 0);
    fclose(f);
    if (e != IGRAPH_SUCCESS) {
        rc = cs_error_set(err, e == IGRAPH_ENOMEM ? CS_ERR_NOMEM : CS_ERR_PARSE,
                          "%s: not a GraphML graph igraph can read: %s", path, igraph_strerror(e));
    } else {
        cs_netfile_stage_t *st = cs_netfile_stage_new(path);
        rc = gml_stage(st, &g, bw, lat, err);
        igraph_destroy(&g); /* with the table that made its attributes */
        if (rc == CS_OK)
            rc = cs_netfile_stage_build(st, out, err);
        cs_netfile_stage_free(st);
    }
    igraph_set_warning_handler(old_warn);
    igraph_set_error_handler(old_err);
    igraph_set_attribute_table(old_table);
    return rc;
}

/* ---- GraphML writer ------------------------------------------------------------ */

static void xml_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f); break;
        }
    }
}

int cs_netfile_write_graphml(const cs_netdesc_t *d, FILE *f, cs_error_t *err)
{
    static const char *const keys[][4] = {
        {"kind", "node", "string", NULL}, {"rank", "node", "int", NULL},
        {"group", "node", "int", NULL},   {"level", "node", "int", NULL},
        {"label", "node", "string", NULL}, {"bandwidth", "edge", "double", NULL},
        {"latency", "edge", "double", NULL}, {"multiplicity", "edge", "int", NULL},
    };
    int32_t rank = 0;
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<!-- written by collsim: bandwidth in bytes/s, each direction, of one of the "
          "multiplicity parallel links; latency in s; group and level -1: none -->\n"
          "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n", f);
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        fprintf(f, "  <key id=\"%s\" for=\"%s\" attr.name=\"%s\" attr.type=\"%s\"/>\n",
                keys[k][0], keys[k][1], keys[k][0], keys[k][2]);
    fputs("  <graph id=\"G\" edgedefault=\"undirected\">\n", f);
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
            xml_escaped(f, cs_netdesc_label(d, i));
            fputs("</data>", f);
        }
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

int cs_netfile_parse_format(const char *name, cs_netfile_format_t *out, cs_error_t *err)
{
    static const char *const names[] = {"auto", "edgelist", "graphml", "simgrid"};
    for (int i = 0; i < 4; i++) {
        if (name && !strcmp(name, names[i])) {
            *out = (cs_netfile_format_t)i;
            return CS_OK;
        }
    }
    return cs_error_set(err, CS_ERR_USAGE, "unknown network file format \"%s\"; valid: auto, "
                        "edgelist, graphml, simgrid", name ? name : "");
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

int cs_netfile_read(const char *path, cs_netfile_format_t format, double dflt_bw,
                    double dflt_lat, cs_netdesc_t **out, cs_error_t *err)
{
    *out = NULL;
    if (format == CS_NETFILE_AUTO)
        format = ends_with(path, ".graphml") ? CS_NETFILE_GRAPHML
                 : ends_with(path, ".xml")   ? CS_NETFILE_SIMGRID
                                             : CS_NETFILE_EDGELIST;
    switch (format) {
    case CS_NETFILE_GRAPHML: return read_graphml(path, dflt_bw, dflt_lat, out, err);
    case CS_NETFILE_SIMGRID: return cs_netfile_read_simgrid(path, dflt_bw, dflt_lat, out, err);
    default: return read_edgelist(path, dflt_bw, dflt_lat, out, err);
    }
}
