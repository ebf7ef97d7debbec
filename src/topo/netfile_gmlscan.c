/*
 * netfile_gmlscan.c - the streaming pass over a GraphML file before igraph
 * reads it (netfile_internal.h, issue 29): what igraph would let through
 * in silence is refused here, naming the file and line.
 *
 * igraph's GraphML reader drops a <data> whose key no <key> declares (a
 * misspelt "knd" takes kind's default), reads an entity reference as an
 * empty value, merges a node id given twice, makes a host of an edge's
 * endpoint that no <node> declares, and turns a "NaN" bandwidth into a
 * missing one (the default); and it reports a malformed file with no line.
 * It also parses with XML_PARSE_HUGE (no depth or entity limits).  So this
 * pass reads the file first, and refuses: malformed XML (libxml2's first
 * error and its line), nesting deeper than 256 elements (libxml2's limit
 * for a tree, which it does not apply to SAX), any entity reference but
 * the five predefined ones and character references
 * (so igraph never meets one, let alone an expanding bomb; nothing is
 * fetched: XML_PARSE_NONET, no DTD loaded, no external entity ever
 * opened), a <data> or <default> of an undeclared key, a node id given
 * twice (both lines), an edge's endpoint that no <node> declares (forward
 * references are GraphML's right: checked at the end), and a bandwidth or
 * latency that collsim's unit parsers refuse (NaN, inf, 0, negative, or
 * beyond the range of netfile_stage.c) or, in a key of a numeric
 * attr.type, that is not a plain number igraph would read the same.
 *
 * Memory: a libxml2 SAX push parser fed 64 KiB at a time keeps no tree,
 * only the declared keys, the node ids (with their lines) and one int per
 * edge (its line, for igraph's edges in messages): a 10^7-edge file is read
 * in ~40 MB here, where the libxml2 tree it replaces took ~4 GB.
 *
 * Why SAX and not xmlTextReader: the reader hands out a node after its
 * parser has read on by up to a 512-byte chunk, so
 * xmlTextReaderGetParserLineNumber is ahead of the node (up to 30 lines
 * on a collsim-written file), and a node's own line stops at 65535 --
 * wrong lines in exactly the large files.  A SAX callback runs while the
 * parser stands on the tag: its line is exact at any size.
 */
#include "topo/netfile_internal.h"

#include <errno.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlversion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"

/* ---- names: an open-addressing map from text to a line ---------------------- */

typedef struct names {
    char **key;
    int32_t *line;
    int64_t n, cap; /* cap a power of two, or 0 */
} names_t;

static int64_t names_slot(const names_t *m, const char *s)
{
    int64_t mask = m->cap - 1, i = (int64_t)(cs_netfile_hash(s) & (uint64_t)mask);
    while (m->key[i] && strcmp(m->key[i], s))
        i = (i + 1) & mask;
    return i;
}

/* The line stored for s, or 0 when s is absent. */
static int32_t names_get(const names_t *m, const char *s)
{
    if (!m->cap)
        return 0;
    int64_t i = names_slot(m, s);
    return m->key[i] ? m->line[i] : 0;
}

/* Adds s with its line (s must be absent). */
static void names_put(names_t *m, const char *s, int32_t line)
{
    if (2 * (m->n + 1) > m->cap) {
        names_t big = {NULL, NULL, m->n, m->cap ? 2 * m->cap : 64};
        big.key = cs_calloc((size_t)big.cap, sizeof *big.key);
        big.line = cs_malloc((size_t)big.cap * sizeof *big.line);
        for (int64_t i = 0; i < m->cap; i++)
            if (m->key[i]) {
                int64_t j = names_slot(&big, m->key[i]);
                big.key[j] = m->key[i];
                big.line[j] = m->line[i];
            }
        free(m->key);
        free(m->line);
        *m = big;
    }
    int64_t i = names_slot(m, s);
    m->key[i] = cs_strdup(s);
    m->line[i] = line;
    m->n++;
}

static void names_free(names_t *m)
{
    for (int64_t i = 0; i < m->cap; i++)
        free(m->key[i]);
    free(m->key);
    free(m->line);
    memset(m, 0, sizeof *m);
}

/* ---- the scan --------------------------------------------------------------- */

/* What a declared key's values are checked as, kept in names_t's int
 * (never 0, which means absent): the kind, plus KEY_NUMERIC when its
 * attr.type is a number type. */
enum { KEY_OTHER = 1, KEY_BANDWIDTH = 2, KEY_LATENCY = 3, KEY_KIND = 3, KEY_NUMERIC = 4 };

#define VALUE_MAX 256 /* the longest bandwidth or latency text checked (longer: refused) */
#define SCAN_MAX_DEPTH 256 /* libxml2's xmlParserMaxDepth, which it applies to trees only */

struct cs_netfile_gmlscan {
    const char *path;
    cs_error_t *err;
    xmlParserCtxtPtr ctx;
    int rc;            /* the first refusal (then the parser is stopped) */
    cs_netfile_xml_first_t xml; /* libxml2's first error */
    names_t keys, nodes, pending; /* pending: endpoints not declared yet, first line */
    int32_t *edge_line;
    int64_t nedges, cap_edges;
    /* a <data> or <default> being read: its key's kind (0: none), value, line */
    int value_kind, value_numeric, value_line;
    char value[VALUE_MAX + 1];
    size_t value_len;
    int value_long;
    char value_key[128];
    int depth;         /* of the element being read */
    int key_numeric;   /* the <key> being read declares a numeric attr.type */
    int key_kind;      /* and its kind, for its <default> */
    char key_id[128];
};

static int scan_line(const cs_netfile_gmlscan_t *s)
{
    int line = xmlSAX2GetLineNumber(s->ctx);
    return line > 0 ? line : 1;
}

/* Refuses at the current line and stops the parser. */
static void scan_fail(cs_netfile_gmlscan_t *s, int line, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void scan_fail(cs_netfile_gmlscan_t *s, int line, int code, const char *fmt, ...)
{
    char msg[CS_ERROR_MSG_MAX - 128];
    va_list ap;
    if (s->rc)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    s->rc = cs_error_set(s->err, code, "%s:%d: %s", s->path, line, msg);
    xmlStopParser(s->ctx);
}

/* An attribute's value into buf (NUL-terminated, at most len - 1 bytes):
 * 0, or -1 for an entity reference in it.  Without XML_PARSE_NOENT libxml2
 * hands a value over with a reference left as "&name;" and a literal '&'
 * (from "&amp;" or "&#38;") as "&#38;"; so an '&' not followed by '#' is a
 * reference, and "&#38;" is put back to '&'. */
static int attr_value(const xmlChar *v, const xmlChar *end, char *buf, size_t len)
{
    size_t n = 0;
    while (v < end) {
        if (*v == '&') {
            if (end - v >= 5 && !memcmp(v, "&#38;", 5)) {
                v += 5;
                if (n + 1 < len)
                    buf[n++] = '&';
                continue;
            }
            return -1;
        }
        if (n + 1 < len)
            buf[n++] = (char)*v;
        v++;
    }
    buf[n] = '\0';
    return 0;
}

/* The attribute `name` of an element (libxml2's 5-pointer records) into
 * buf: 1 found, 0 absent, -1 refused (the scan failed). */
static int scan_attr(cs_netfile_gmlscan_t *s, const xmlChar *elem, int nb, const xmlChar **attrs,
                     const char *name, char *buf, size_t len)
{
    for (int i = 0; i < nb; i++) {
        const xmlChar **a = attrs + 5 * i;
        if (strcmp((const char *)a[0], name))
            continue;
        if (attr_value(a[3], a[4], buf, len)) {
            scan_fail(s, scan_line(s), CS_ERR_PARSE, "<%s %s=\"%.*s\">: an entity reference in a "
                      "value (collsim reads no entities but the five of XML: write the value "
                      "itself)", (const char *)elem, name, (int)(a[4] - a[3] < 80 ? a[4] - a[3]
                                                                               : 80),
                      (const char *)a[3]);
            return -1;
        }
        return 1;
    }
    return 0;
}

/* Every attribute value of an element is checked for references, read or
 * not: igraph reads some that collsim does not (edge ids, ports). */
static int scan_no_entities(cs_netfile_gmlscan_t *s, const xmlChar *elem, int nb,
                            const xmlChar **attrs)
{
    char buf[8];
    for (int i = 0; i < nb; i++) {
        const xmlChar **a = attrs + 5 * i;
        if (memchr(a[3], '&', (size_t)(a[4] - a[3])) &&
            scan_attr(s, elem, nb, attrs, (const char *)a[0], buf, sizeof buf) < 0)
            return -1;
    }
    return 0;
}

static void scan_key(cs_netfile_gmlscan_t *s, const xmlChar *elem, int nb, const xmlChar **attrs)
{
    char id[sizeof s->key_id], name[64] = "", type[32] = "";
    int kind = KEY_OTHER;
    if (scan_attr(s, elem, nb, attrs, "id", id, sizeof id) <= 0)
        return; /* igraph refuses a key without id */
    if (scan_attr(s, elem, nb, attrs, "attr.name", name, sizeof name) < 0 ||
        scan_attr(s, elem, nb, attrs, "attr.type", type, sizeof type) < 0)
        return;
    if (!strcmp(name, "bandwidth") || !strcmp(name, "reduce")) /* reduce: a switch's rate */
        kind = KEY_BANDWIDTH;
    else if (!strcmp(name, "latency"))
        kind = KEY_LATENCY;
    if (names_get(&s->keys, id)) /* igraph keeps the first; so does the check */
        return;
    /* a numeric type's value must be a plain number: igraph reads units
     * ("100Gbps") as NaN, which would be the default */
    s->key_numeric = !strcmp(type, "double") || !strcmp(type, "float") ||
                     !strcmp(type, "int") || !strcmp(type, "long");
    names_put(&s->keys, id, kind | (s->key_numeric ? KEY_NUMERIC : 0));
    snprintf(s->key_id, sizeof s->key_id, "%s", id);
    s->key_kind = kind;
}

static void scan_node(cs_netfile_gmlscan_t *s, const xmlChar *elem, int nb, const xmlChar **attrs)
{
    char id[512];
    int line = scan_line(s), first;
    int got = scan_attr(s, elem, nb, attrs, "id", id, sizeof id);
    if (got <= 0)
        return; /* without an id igraph names it by position */
    if ((first = names_get(&s->nodes, id)))
        scan_fail(s, line, CS_ERR_PARSE, "node \"%s\": the id is used twice (first on line %d; "
                  "igraph would merge the two)", id, first);
    else
        names_put(&s->nodes, id, line);
}

static void scan_edge(cs_netfile_gmlscan_t *s, const xmlChar *elem, int nb, const xmlChar **attrs)
{
    char id[512];
    int line = scan_line(s);
    static const char *const ends[] = {"source", "target"};
    for (int k = 0; k < 2; k++) {
        int got = scan_attr(s, elem, nb, attrs, ends[k], id, sizeof id);
        if (got < 0)
            return;
        if (got > 0 && !names_get(&s->nodes, id) && !names_get(&s->pending, id))
            names_put(&s->pending, id, line);
    }
    if (s->nedges == s->cap_edges) { /* cs_grow counts in int32: more edges can come */
        s->cap_edges = s->cap_edges ? 2 * s->cap_edges : 1024;
        s->edge_line = cs_realloc(s->edge_line, (size_t)s->cap_edges * sizeof *s->edge_line);
    }
    s->edge_line[s->nedges++] = line;
}

/* A <data> (or a <key>'s <default>) of key `key`: undeclared keys are
 * refused; the value of a bandwidth or latency is gathered for its check. */
static void scan_value_start(cs_netfile_gmlscan_t *s, const char *key, int kind, int numeric)
{
    s->value_kind = kind == KEY_OTHER ? 0 : kind;
    s->value_numeric = numeric;
    s->value_line = scan_line(s);
    s->value_len = 0;
    s->value_long = 0;
    snprintf(s->value_key, sizeof s->value_key, "%s", key);
}

static void scan_data(cs_netfile_gmlscan_t *s, const xmlChar *elem, int nb, const xmlChar **attrs)
{
    char key[128] = "";
    int got = scan_attr(s, elem, nb, attrs, "key", key, sizeof key);
    int32_t packed;
    if (got < 0)
        return;
    if (!got) { /* key stays empty: found by fuzz_netfile_graphml, read unset */
        scan_fail(s, scan_line(s), CS_ERR_PARSE, "<%s> has no key attribute (<data key=\"ID\">, "
                  "ID a declared <key>)", (const char *)elem);
        return;
    }
    if (!(packed = names_get(&s->keys, key))) {
        scan_fail(s, scan_line(s), CS_ERR_PARSE, "<data key=\"%s\"> names no declared <key> "
                  "(collsim reads kind, rank, group, level, label, reduce, reduce_buf, "
                  "bandwidth, latency, multiplicity, routing, each declared by a <key> before "
                  "the graph)", key);
        return;
    }
    scan_value_start(s, key, packed & KEY_KIND, (packed & KEY_NUMERIC) != 0);
}

static void scan_start(void *ctx, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri,
                       int nb_ns, const xmlChar **ns, int nb, int nb_def, const xmlChar **attrs)
{
    cs_netfile_gmlscan_t *s = ((xmlParserCtxtPtr)ctx)->_private;
    const char *name = (const char *)local;
    (void)prefix;
    (void)uri;
    (void)nb_ns;
    (void)ns;
    (void)nb_def;
    if (s->rc)
        return;
    /* libxml2 limits the depth when it builds a tree, not for SAX: the
     * same limit here (igraph's HUGE parse has none) */
    if (++s->depth > SCAN_MAX_DEPTH) {
        scan_fail(s, scan_line(s), CS_ERR_PARSE, "<%s>: elements nested deeper than %d levels",
                  name, SCAN_MAX_DEPTH);
        return;
    }
    if (scan_no_entities(s, local, nb, attrs))
        return;
    if (!strcmp(name, "key"))
        scan_key(s, local, nb, attrs);
    else if (!strcmp(name, "default") && s->key_id[0])
        scan_value_start(s, s->key_id, s->key_kind, s->key_numeric);
    else if (!strcmp(name, "node"))
        scan_node(s, local, nb, attrs);
    else if (!strcmp(name, "edge"))
        scan_edge(s, local, nb, attrs);
    else if (!strcmp(name, "data"))
        scan_data(s, local, nb, attrs);
}

/* A bandwidth or latency as collsim will read it: the unit parsers of
 * gml_edges (a bare number is bytes/s or s), and the range every reader
 * accepts (cs_netfile_check_range). */
static void scan_value_check(cs_netfile_gmlscan_t *s)
{
    const char *what = s->value_kind == KEY_BANDWIDTH ? "bandwidth" : "latency";
    char *t = s->value, *end;
    double v;
    cs_error_t e = {0};
    if (s->value_long) {
        scan_fail(s, s->value_line, CS_ERR_PARSE, "<data key=\"%s\">: a %s of more than %d "
                  "bytes", s->value_key, what, VALUE_MAX);
        return;
    }
    s->value[s->value_len] = '\0';
    t += strspn(t, " \t\r\n");
    for (end = t + strlen(t); end > t && strchr(" \t\r\n", end[-1]); end--)
        end[-1] = '\0';
    if (!*t) {
        scan_fail(s, s->value_line, CS_ERR_PARSE, "<data key=\"%s\">: an empty %s (igraph "
                  "would read it as missing: the default)", s->value_key, what);
        return;
    }
    int rc = s->value_kind == KEY_BANDWIDTH ? cs_units_parse_bandwidth(t, 1.0, &v, &e)
                                            : cs_units_parse_seconds(t, 1.0, &v, &e);
    if (!rc && cs_netfile_check_range(s->value_kind == KEY_BANDWIDTH, v, &e))
        rc = CS_ERR_PARSE;
    if (rc) {
        scan_fail(s, s->value_line, CS_ERR_PARSE, "<data key=\"%s\"> (%s): %s", s->value_key,
                  what, e.msg);
        return;
    }
    /* a numeric key's text goes through igraph's number parser, which
     * reads no units ("100Gbps" would be NaN: the default) */
    if (s->value_numeric) {
        errno = 0;
        (void)strtod(t, &end);
        if (*end)
            scan_fail(s, s->value_line, CS_ERR_PARSE, "<data key=\"%s\">: %s \"%s\" is not a "
                      "plain number, which its key's numeric attr.type needs (in %s; for "
                      "units declare attr.type=\"string\")", s->value_key, what, t,
                      s->value_kind == KEY_BANDWIDTH ? "bytes/s" : "s");
    }
}

static void scan_end(void *ctx, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri)
{
    cs_netfile_gmlscan_t *s = ((xmlParserCtxtPtr)ctx)->_private;
    const char *name = (const char *)local;
    (void)prefix;
    (void)uri;
    if (s->rc)
        return;
    s->depth--;
    if ((!strcmp(name, "data") || !strcmp(name, "default")) && s->value_kind)
        scan_value_check(s);
    if (!strcmp(name, "data") || !strcmp(name, "default"))
        s->value_kind = 0;
    else if (!strcmp(name, "key"))
        s->key_id[0] = '\0';
}

static void scan_text(void *ctx, const xmlChar *text, int len)
{
    cs_netfile_gmlscan_t *s = ((xmlParserCtxtPtr)ctx)->_private;
    if (s->rc || !s->value_kind || len <= 0)
        return;
    if (s->value_len + (size_t)len > VALUE_MAX) {
        s->value_long = 1;
        return;
    }
    memcpy(s->value + s->value_len, text, (size_t)len);
    s->value_len += (size_t)len;
}

/* An entity reference in content (the predefined five and character
 * references come as text): igraph would read it as an empty value. */
static void scan_reference(void *ctx, const xmlChar *name)
{
    cs_netfile_gmlscan_t *s = ((xmlParserCtxtPtr)ctx)->_private;
    scan_fail(s, scan_line(s), CS_ERR_PARSE, "an entity reference &%s; (collsim reads no "
              "entities but the five of XML: write the value itself)", (const char *)name);
}

static void scan_error(void *user, cs_netfile_xml_error_t *e)
{
    cs_netfile_gmlscan_t *s = user ? ((xmlParserCtxtPtr)user)->_private : NULL;
    cs_netfile_xml_first_keep(s ? &s->xml : NULL, e);
}

/* The earliest line of an endpoint no <node> declares, 0 when none. */
static int32_t scan_undeclared(const cs_netfile_gmlscan_t *s, const char **id)
{
    int32_t best = 0;
    for (int64_t i = 0; i < s->pending.cap; i++)
        if (s->pending.key[i] && !names_get(&s->nodes, s->pending.key[i]) &&
            (!best || s->pending.line[i] < best)) {
            best = s->pending.line[i];
            *id = s->pending.key[i];
        }
    return best;
}

int cs_netfile_gml_scan(const cs_source_t *src, cs_netfile_gmlscan_t **out, cs_error_t *err)
{
    /* NONET: nothing fetched; no NOENT: references reach scan_reference;
     * no HUGE: libxml2's depth and amplification limits hold; errors to
     * scan_error only */
    const int opts = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
    xmlSAXHandler sax;
    cs_netfile_gmlscan_t *s;
    char *buf;
    FILE *f;
    size_t got;
    int rc;
    *out = NULL;
    if ((rc = cs_source_fopen(src, &f, err)))
        return rc;
    s = cs_calloc(1, sizeof *s);
    s->path = src->name;
    s->err = err;
    memset(&sax, 0, sizeof sax);
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = scan_start;
    sax.endElementNs = scan_end;
    sax.characters = scan_text;
    sax.cdataBlock = scan_text;
    sax.reference = scan_reference;
    sax.serror = scan_error;
    /* the DTD's declarations, kept in the parser's small document (its
     * elements are not), so that a declared entity is told from an
     * undeclared one: both are refused, with the right words */
    sax.startDocument = xmlSAX2StartDocument;
    sax.internalSubset = xmlSAX2InternalSubset;
    sax.entityDecl = xmlSAX2EntityDecl;
    sax.getEntity = xmlSAX2GetEntity;
    sax.getParameterEntity = xmlSAX2GetParameterEntity;
    buf = cs_malloc(1 << 16);
    cs_netfile_xml_quiet_t quiet;
    cs_netfile_xml_quiet_begin(&quiet);
    /* user_data NULL: the callbacks get the parser (xmlSAX2's need it),
     * this scan through its _private.  No file name: messages are made
     * here, and libxml2 2.9 leaks its input when copying the name runs out
     * of memory. */
    s->ctx = xmlCreatePushParserCtxt(&sax, NULL, NULL, 0, NULL);
    if (!s->ctx || s->ctx->errNo == XML_ERR_NO_MEMORY) {
        rc = cs_error_set(err, CS_ERR_OOM, "%s: out of memory (libxml2's parser)", src->name);
        if (s->ctx)
            xmlFreeParserCtxt(s->ctx);
        s->ctx = NULL;
    } else {
        s->ctx->_private = s;
        xmlCtxtUseOptions(s->ctx, opts);
        /* the first error ends the scan: later ones are often its echo */
        while (!s->rc && !s->xml.set && (got = fread(buf, 1, 1 << 16, f)) > 0)
            xmlParseChunk(s->ctx, buf, (int)got, 0);
        if (!s->rc && !s->xml.set && !ferror(f))
            xmlParseChunk(s->ctx, NULL, 0, 1);
        /* out of memory first: what followed it (a value cut short, "not
         * well-formed") is its consequence */
        if (cs_netfile_xml_first_oom(&s->xml, s->ctx->errNo))
            rc = cs_error_set(err, CS_ERR_OOM, "%s:%d: out of memory (in libxml2)", src->name,
                              s->xml.set && s->xml.line > 0 ? s->xml.line : scan_line(s));
        else if (s->rc)
            rc = s->rc;
        else if (!s->xml.set && ferror(f))
            rc = cs_error_set(err, CS_ERR_IO, "%s: read error: %s", src->name, strerror(errno));
        else if (s->xml.set || !s->ctx->wellFormed)
            rc = cs_error_set(err, CS_ERR_PARSE, "%s:%d: %s", src->name,
                              s->xml.line > 0 ? s->xml.line : scan_line(s),
                              s->xml.set ? s->xml.msg : "not well-formed XML");
        if (!rc) {
            const char *id = NULL;
            int32_t line = scan_undeclared(s, &id);
            if (line)
                rc = cs_error_set(err, CS_ERR_PARSE, "%s:%d: <edge> names node \"%s\", which no "
                                  "<node> declares (igraph would add it as a host)", src->name,
                                  (int)line, id);
        }
        xmlFreeDoc(s->ctx->myDoc); /* the DTD's, from xmlSAX2StartDocument */
        s->ctx->myDoc = NULL;
        xmlFreeParserCtxt(s->ctx);
        s->ctx = NULL;
    }
    cs_netfile_xml_quiet_end(&quiet);
    free(buf);
    fclose(f);
    names_free(&s->pending);
    names_free(&s->keys);
    if (rc) {
        cs_netfile_gml_scan_free(s);
        return rc;
    }
    s->err = NULL;
    *out = s;
    return CS_OK;
}

int32_t cs_netfile_gml_node_line(const cs_netfile_gmlscan_t *s, const char *id)
{
    return s ? names_get(&s->nodes, id) : 0;
}

int32_t cs_netfile_gml_edge_line(const cs_netfile_gmlscan_t *s, int64_t e, int64_t ecount)
{
    return s && ecount == s->nedges && e >= 0 && e < s->nedges ? s->edge_line[e] : 0;
}

void cs_netfile_gml_scan_free(cs_netfile_gmlscan_t *s)
{
    if (!s)
        return;
    names_free(&s->nodes);
    names_free(&s->keys);
    names_free(&s->pending);
    free(s->edge_line);
    free(s);
}
