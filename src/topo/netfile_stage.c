/*
 * netfile_stage.c - what the network file readers share (netfile_internal.h):
 * the staging area where they put nodes by name and links with their lines
 * before the description is built in the order the file asks for (hosts
 * in rank order when ranks are given), messages' "FILE:LINE: " prefixes,
 * and the XML opening of the GraphML and SimGrid readers (libxml2).
 */
#include "topo/netfile_internal.h"

#include <libxml/parser.h>
#include <libxml/xmlversion.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

#include "core/hash.h"
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
    double reduce;      /* a reducing switch's rate (bytes/s), 0: none */
    int64_t reduce_buf;
    int32_t reduce_line;
} stage_node_t;

struct cs_netfile_stage {
    char *path;
    stage_node_t *nodes;
    int32_t nnodes, cap_nodes;
    cs_netlink_t *links;
    int32_t nlinks, cap_links;
    int32_t *hash; /* open addressing over names: node index or -1 */
    int64_t hash_cap;
    int32_t *built; /* after a build: staged node -> description id */
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
    free(st->built);
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

uint64_t cs_netfile_hash(const char *s)
{
    return cs_fnv1a64_str(CS_FNV1A64_INIT, s);
}

static int64_t name_slot(const cs_netfile_stage_t *st, const char *name)
{
    int64_t mask = st->hash_cap - 1, s = (int64_t)(cs_netfile_hash(name) & (uint64_t)mask);
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

void cs_netfile_stage_set_reduce(cs_netfile_stage_t *st, int32_t id, double rate, int64_t buf,
                                 int32_t line)
{
    st->nodes[id].reduce = rate;
    st->nodes[id].reduce_buf = buf;
    st->nodes[id].reduce_line = line;
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
    st->links[st->nlinks++] = (cs_netlink_t){u, v, bw, lat, mult, line, 0};
}

void cs_netfile_stage_share_last(cs_netfile_stage_t *st)
{
    CS_ASSERT(st->nlinks > 0);
    st->links[st->nlinks - 1].shared = 1;
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
        /* reducing switches (issue 36), named by the line that said so */
        for (int32_t i = 0; i < st->nnodes && rc == CS_OK; i++) {
            const stage_node_t *n = &st->nodes[i];
            char w[512];
            if (n->reduce <= 0)
                continue;
            cs_netfile_where(st->path, n->reduce_line, w, sizeof w);
            if (n->kind != CS_NETNODE_SWITCH)
                rc = cs_error_set(err, CS_ERR_PARSE, "%s%s: a host does not reduce (only a "
                                  "switch reduces in the network)", w, n->name);
            else if ((rc = cs_netdesc_set_reduce(d, id[i], n->reduce, n->reduce_buf, err)))
                cs_netfile_reparse(err, "%s%s", w, n->name);
        }
        for (int32_t i = 0; i < st->nlinks && rc == CS_OK; i++) {
            const cs_netlink_t *l = &st->links[i];
            rc = (l->shared ? cs_netdesc_add_shared_link : cs_netdesc_add_link)(
                d, id[l->u], id[l->v], l->bw, l->lat, l->mult, l->line, err);
        }
        if (rc == CS_OK)
            rc = cs_netdesc_check(d, err);
    }
    free(order);
    free(st->built);
    st->built = id;
    if (rc != CS_OK)
        cs_netdesc_free(d);
    else
        *out = d;
    return rc;
}

int32_t cs_netfile_stage_built_id(const cs_netfile_stage_t *st, int32_t i) { return st->built[i]; }

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

int cs_netfile_check_range(int is_bandwidth, double v, cs_error_t *err)
{
    if (is_bandwidth && v < CS_NETFILE_BW_MIN)
        return cs_error_set(err, CS_ERR_PARSE, "a bandwidth of %g bytes/s is below 1 bit/s, the "
                            "least a network file may give", v);
    if (is_bandwidth && v > CS_NETFILE_BW_MAX)
        return cs_error_set(err, CS_ERR_PARSE, "a bandwidth of %g bytes/s is beyond %g bytes/s "
                            "(8 Eb/s), the most a network file may give", v, CS_NETFILE_BW_MAX);
    if (!is_bandwidth && v != 0 && v < CS_NETFILE_LAT_MIN)
        return cs_error_set(err, CS_ERR_PARSE, "a latency of %g s is neither 0 nor at least "
                            "1 fs (it would round to no time)", v);
    if (!is_bandwidth && v > CS_NETFILE_LAT_MAX)
        return cs_error_set(err, CS_ERR_PARSE, "a latency of %g s is beyond %g s, the most a "
                            "network file may give", v, CS_NETFILE_LAT_MAX);
    return CS_OK;
}

/* ---- XML ------------------------------------------------------------------- */

void cs_netfile_xml_first_keep(cs_netfile_xml_first_t *first, const xmlError *e)
{
    if (!first || first->set || !e || e->level < XML_ERR_ERROR)
        return;
    first->set = 1;
    first->code = e->code;
    first->line = e->line;
    snprintf(first->msg, sizeof first->msg, "%s", e->message ? e->message : "malformed XML");
    first->msg[strcspn(first->msg, "\n")] = '\0';
}

int cs_netfile_xml_first_oom(const cs_netfile_xml_first_t *first, int ctx_errno)
{
    return (first->set && first->code == XML_ERR_NO_MEMORY) || ctx_errno == XML_ERR_NO_MEMORY ||
           cs_netfile_xml_oom();
}

/* The tree parse's first error, reached through the context's _private
 * (which libxml2 leaves to its user). */
static void xml_first_error(void *user, cs_netfile_xml_error_t *e)
{
    cs_netfile_xml_first_keep(((xmlParserCtxtPtr)user)->_private, e);
}

/* The first entity reference in the tree, in content or in an attribute's
 * value, or NULL; *elem its element.  Without XML_PARSE_NOENT libxml2 keeps a reference as a
 * node, which the readers' text look-ups (cs_netfile_sg_attr) would read as
 * an empty value.  An explicit stack: a tree is at most libxml2's 256
 * levels deep, but recursion here would be unbounded in principle. */
static xmlNodePtr xml_entity_ref(xmlNodePtr root, xmlNodePtr *elem)
{
    for (xmlNodePtr n = root; n;) {
        *elem = n->parent;
        if (n->type == XML_ENTITY_REF_NODE)
            return n;
        *elem = n;
        if (n->type == XML_ELEMENT_NODE)
            for (xmlAttrPtr a = n->properties; a; a = a->next)
                for (xmlNodePtr c = a->children; c; c = c->next)
                    if (c->type == XML_ENTITY_REF_NODE)
                        return c;
        /* depth first: down, else next, else up until a next */
        if (n->type == XML_ELEMENT_NODE && n->children) {
            n = n->children;
            continue;
        }
        while (n && n != root && !n->next)
            n = n->parent;
        n = n && n != root ? n->next : NULL;
    }
    return NULL;
}

static void xml_quiet(void *ctx, const char *fmt, ...)
{
    (void)ctx;
    (void)fmt;
}

void cs_netfile_xml_quiet_begin(cs_netfile_xml_quiet_t *q)
{
    q->func = xmlGenericError;
    q->ctx = xmlGenericErrorContext;
    xmlSetGenericErrorFunc(NULL, xml_quiet);
    xmlResetLastError();
}

void cs_netfile_xml_quiet_end(const cs_netfile_xml_quiet_t *q)
{
    xmlSetGenericErrorFunc(q->ctx, q->func);
}

int cs_netfile_xml_oom(void)
{
    const xmlError *e = xmlGetLastError();
    return e && e->code == XML_ERR_NO_MEMORY;
}

void cs_netfile_xml_escaped(FILE *f, const char *s)
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

int cs_netfile_xml_read(const cs_source_t *src, xmlDocPtr *out, cs_error_t *err)
{
    cs_netfile_xml_quiet_t quiet;
    cs_netfile_xml_first_t first = {0, 0, 0, "not well-formed XML"};
    xmlParserCtxtPtr ctx;
    const char *path = src->name;
    FILE *f = NULL;
    int rc;
    /* NONET: a platform file must not make collsim fetch anything (DTDs
     * included); no NOENT: entities stay unexpanded (no billion laughs) */
    const int opts = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                     XML_PARSE_NOBLANKS;
    *out = NULL;
    /* a file opened before libxml2, which would print its own warning */
    if (!src->data && (rc = cs_source_fopen(src, &f, err)))
        return rc;
    cs_netfile_xml_quiet_begin(&quiet);
    if (!(ctx = xmlNewParserCtxt())) {
        cs_netfile_xml_quiet_end(&quiet);
        if (f)
            fclose(f);
        return cs_error_set(err, CS_ERR_OOM, "%s: out of memory (in libxml2)", path);
    }
    ctx->_private = &first;
    ctx->sax->serror = xml_first_error;
    if (f)
        *out = xmlCtxtReadFd(ctx, fileno(f), path, NULL, opts);
    else if (src->len <= INT_MAX)
        *out = xmlCtxtReadMemory(ctx, src->data, (int)src->len, path, NULL, opts);
    int oom = cs_netfile_xml_first_oom(&first, ctx->errNo);
    xmlFreeParserCtxt(ctx);
    cs_netfile_xml_quiet_end(&quiet);
    if (f)
        fclose(f);
    if (oom) {
        /* whatever error followed (libxml2 goes on a little, then says
         * "not well-formed"): the cause is the memory */
        rc = cs_error_set(err, CS_ERR_OOM, "%s:%d: out of memory (in libxml2)", path,
                          first.line > 0 ? first.line : 1);
    } else if (*out && !first.set) {
        xmlNodePtr elem = NULL, ref = xml_entity_ref(xmlDocGetRootElement(*out), &elem);
        if (!ref)
            return CS_OK;
        /* the element's line: a reference in a value has none of its own */
        rc = cs_error_set(err, CS_ERR_PARSE, "%s:%ld: <%s>: an entity reference &%s; (collsim "
                          "reads no entities but the five of XML: write the value itself)",
                          path, elem ? xmlGetLineNo(elem) : 1L,
                          elem ? (const char *)elem->name : "?", (const char *)ref->name);
    } else {
        rc = cs_error_set(err, CS_ERR_PARSE, "%s:%d: %s", path, first.line, first.msg);
    }
    xmlFreeDoc(*out);
    *out = NULL;
    return rc;
}
