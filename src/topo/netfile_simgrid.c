/*
 * netfile_simgrid.c - the common subset of SimGrid platform XML (DTD 4.x,
 * SimGrid's src/surf/xml/simgrid.dtd and https://simgrid.org/doc/latest/
 * platform.html) read with libxml2 into a cs_netdesc_t.
 *
 * What is read (docs/networks.md lists every attribute):
 *   - one <cluster> (directly under <platform> or alone in a <zone>), mapped
 *     onto the generators of topo/netgen.h: FLAT -> cs_netgen_star, TORUS ->
 *     cs_netgen_torus (wrap), FAT_TREE -> cs_netgen_fattree (SimGrid's
 *     "levels;down;up;parallel" is that generator's general form),
 *     DRAGONFLY -> SimGrid's own construction and routing
 *     (netfile_sgdragonfly.c);
 *   - one <zone> of <host>s, <router>s, <link>s and <route>s, or a <zone>
 *     of <zone>s and FLAT <cluster>s joined by <zoneRoute>s: the graph is
 *     inferred from the routes (netfile_sgroutes.c), routed by the file's
 *     routes (Full), by shortest paths (Floyd, Dijkstra) or through the
 *     zone tree (netfile_sgzone.c).
 * This file holds the XML helpers both share (netfile_internal.h), the
 * clusters and the platform.
 *
 * sharing_policy (SimGrid 3.32's simgrid.dtd: SHARED is <link>'s default,
 * SPLITDUPLEX <cluster>'s): SimGrid's SHARED link is one resource for both
 * directions, a half-duplex link (cs_netdesc_add_shared_link: its two
 * channels share one capacity in both engine modes).  SPLITDUPLEX (and its
 * old name FULLDUPLEX) is one channel per direction, collsim's ordinary
 * link.  A <cluster> whose policy is not SPLITDUPLEX gets SHARED links,
 * FATPIPE too: SimGrid 3.32 creates them with create_link, whose policy is
 * SHARED (src/surf/sg_platf.cpp, sg_platf_new_cluster: "link =
 * zone->create_link(link_id, cluster->bw)"; the Torus, FatTree and
 * Dragonfly zones' generate_link(s) alike; StandardLinkImpl.hpp:21, the
 * default SHARED).  A FATPIPE <link> means that the bandwidth limits each
 * flow but is not shared among flows (a backbone of unbounded capacity);
 * it is mapped to an ordinary link of that bandwidth: exact while at most
 * one message crosses a direction at a time, slower than SimGrid when
 * several share it.
 */
#include "topo/netfile_internal.h"

#include <libxml/parser.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/units.h"
#include "topo/netgen.h"

typedef cs_netfile_sg_t sg_t;

/* "PATH:LINE: " + message, CS_ERR_PARSE. */
int cs_netfile_sg_fail(const sg_t *s, xmlNodePtr n, const char *fmt, ...)
{
    char msg[CS_ERROR_MSG_MAX - 128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cs_error_set(s->err, CS_ERR_PARSE, "%s:%d: %s", s->path, cs_netfile_sg_line(n), msg);
}

/* An attribute's text, or NULL (valid while the document is). */
const char *cs_netfile_sg_attr(xmlNodePtr n, const char *name)
{
    for (xmlAttrPtr a = n->properties; a; a = a->next)
        if (!strcmp((const char *)a->name, name))
            return a->children && a->children->content ? (const char *)a->children->content
                                                       : "";
    return NULL;
}

/* Refuses attributes outside `valid` (space-separated) and child elements
 * (none of the elements read here has children but <zone>, <route> and
 * <platform>, which check theirs). */
int cs_netfile_sg_check(const sg_t *s, xmlNodePtr n, const char *valid, int children_ok)
{
    for (xmlAttrPtr a = n->properties; a; a = a->next) {
        const char *name = (const char *)a->name, *p = valid;
        size_t k = strlen(name);
        int ok = 0;
        while (!ok && (p = strstr(p, name))) {
            ok = (p == valid || p[-1] == ' ') && (p[k] == ' ' || p[k] == '\0');
            p += k;
        }
        if (!ok)
            return cs_netfile_sg_fail(s, n,
                                      "<%s>: attribute %s is not read by collsim (it reads: %s)",
                                      (const char *)n->name, name, valid);
    }
    for (xmlNodePtr c = n->children; !children_ok && c; c = c->next)
        if (c->type == XML_ELEMENT_NODE)
            return cs_netfile_sg_fail(s, c, "<%s> inside <%s> is not read by collsim",
                           (const char *)c->name, (const char *)n->name);
    return CS_OK;
}

const char *cs_netfile_sg_need(const sg_t *s, xmlNodePtr n, const char *name, int *rc)
{
    const char *v = cs_netfile_sg_attr(n, name);
    if (!v && !*rc)
        *rc = cs_netfile_sg_fail(s, n, "<%s> needs attribute %s", (const char *)n->name, name);
    return v;
}

/* SimGrid's bandwidths: units as collsim's, plus "KiBps"-style powers of
 * two in bytes; a bare number is bytes/s (SimGrid warns, accepts). */
int cs_netfile_sg_bandwidth(const sg_t *s, xmlNodePtr n, const char *key, const char *text,
                        double *out)
{
    char buf[64];
    size_t len = strlen(text);
    if (len > 4 && len < sizeof buf - 2 && !strcmp(text + len - 4, "iBps")) {
        snprintf(buf, sizeof buf, "%.*sB/s", (int)(len - 3), text);
        text = buf;
    }
    if (cs_units_parse_bandwidth(text, 1.0, out, s->err) ||
        cs_netfile_check_range(1, *out, s->err))
        return cs_netfile_reparse(s->err, "%s:%d: <%s %s>", s->path, cs_netfile_sg_line(n),
                                  (const char *)n->name, key);
    return CS_OK;
}

int cs_netfile_sg_latency(const sg_t *s, xmlNodePtr n, const char *key, const char *text,
                      double *out)
{
    if (cs_units_parse_seconds(text, 1.0, out, s->err) ||
        cs_netfile_check_range(0, *out, s->err))
        return cs_netfile_reparse(s->err, "%s:%d: <%s %s>", s->path, cs_netfile_sg_line(n),
                                  (const char *)n->name, key);
    return CS_OK;
}

int cs_netfile_sg_sharing(const sg_t *s, xmlNodePtr n, const char *key, const char *dflt,
                          cs_netfile_sg_policy_t *policy)
{
    const char *v = cs_netfile_sg_attr(n, key);
    if (!v)
        v = dflt;
    if (!strcmp(v, "SPLITDUPLEX") || !strcmp(v, "FULLDUPLEX"))
        *policy = CS_SG_SPLITDUPLEX;
    else if (!strcmp(v, "SHARED"))
        *policy = CS_SG_SHARED;
    else if (!strcmp(v, "FATPIPE"))
        *policy = CS_SG_FATPIPE;
    else
        return cs_netfile_sg_fail(s, n, "<%s>: %s=\"%s\"; valid: SHARED, SPLITDUPLEX, FATPIPE",
                                  (const char *)n->name, key, v);
    return CS_OK;
}

/* ---- clusters ---------------------------------------------------------------- */

/* A comma-separated list of at most `max` integers in 1..CS_NETGEN_MAX_NODES
 * (topo_parameters' parts); *n gets their number. */
static int sg_int_list(const sg_t *s, xmlNodePtr n, const char *text, int max, int *v, int *cnt)
{
    char buf[256];
    int k = 0;
    if (strlen(text) >= sizeof buf)
        return cs_netfile_sg_fail(s, n, "<cluster topo_parameters>: \"%s\" is too long", text);
    memcpy(buf, text, strlen(text) + 1);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int64_t x;
        if (k == max)
            return cs_netfile_sg_fail(
                s, n, "<cluster topo_parameters>: more than %d numbers in \"%s\"", max, text);
        if (cs_units_parse_int(t, &x, NULL) || x < 1 || x > CS_NETGEN_MAX_NODES)
            return cs_netfile_sg_fail(s, n,
                                      "<cluster topo_parameters>: \"%s\" in \"%s\" is not a count "
                                      "in 1..%d",
                                      t, text, CS_NETGEN_MAX_NODES);
        v[k++] = (int)x;
    }
    if (k == 0)
        return cs_netfile_sg_fail(s, n, "<cluster topo_parameters>: empty list in \"%s\"", text);
    *cnt = k;
    return CS_OK;
}

/* SimGrid's radical "0-99" or "0-3,8,10-11": the number of hosts, counted
 * without allocating; with `vals` (room for the count, checked by a first
 * call without), the numbers too, in order (SimGrid's host i is
 * prefix + vals[i] + suffix). */
int cs_netfile_sg_radical(const sg_t *s, xmlNodePtr n, const char *text, int64_t *count,
                             int64_t *vals)
{
    char buf[256];
    *count = 0;
    if (strlen(text) >= sizeof buf)
        return cs_netfile_sg_fail(s, n, "<cluster radical>: \"%s\" is too long", text);
    memcpy(buf, text, strlen(text) + 1);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *dash = strchr(t, '-');
        int64_t a, b;
        if (dash)
            *dash = '\0';
        if (cs_units_parse_int(t, &a, NULL) || (dash && cs_units_parse_int(dash + 1, &b, NULL)))
            return cs_netfile_sg_fail(s, n,
                                      "<cluster radical>: \"%s\" is not a list of numbers and "
                                      "ranges like 0-15,32-47",
                                      text);
        if (!dash)
            b = a;
        if (b < a)
            return cs_netfile_sg_fail(s, n, "<cluster radical>: range %lld-%lld in \"%s\" is empty",
                           (long long)a, (long long)b, text);
        if (b - a + 1 > CS_NETGEN_MAX_NODES || *count + (b - a + 1) > CS_NETGEN_MAX_NODES)
            return cs_error_set(s->err, CS_ERR_RANGE, "%s:%d: <cluster radical>: more than %d "
                                "hosts", s->path, cs_netfile_sg_line(n), CS_NETGEN_MAX_NODES);
        for (int64_t v = a; vals && v <= b; v++)
            vals[*count + v - a] = v;
        *count += b - a + 1;
        if (*count > CS_NETGEN_MAX_NODES)
            return cs_error_set(s->err, CS_ERR_RANGE, "%s:%d: <cluster radical>: more than %d "
                                "hosts", s->path, cs_netfile_sg_line(n), CS_NETGEN_MAX_NODES);
    }
    if (*count == 0)
        return cs_netfile_sg_fail(s, n, "<cluster radical>: no host in \"%s\"", text);
    return CS_OK;
}

static int sg_radical(const sg_t *s, xmlNodePtr n, const char *text, int64_t *count)
{
    return cs_netfile_sg_radical(s, n, text, count, NULL);
}

static int sg_same_hosts(const sg_t *s, xmlNodePtr n, int64_t radical, int64_t topo,
                         const char *topology)
{
    if (radical == topo)
        return CS_OK;
    return cs_netfile_sg_fail(s, n, "<cluster>: radical gives %lld hosts, topology %s has %lld",
                   (long long)radical, topology, (long long)topo);
}

/* A generator's own error (it names its keys) placed in the file. */
static int sg_generated(const sg_t *s, xmlNodePtr n, int rc)
{
    if (rc)
        cs_error_prefix(s->err, "%s:%d: <cluster>", s->path, cs_netfile_sg_line(n));
    return rc;
}

static int64_t product(const int *v, int n)
{
    int64_t p = 1;
    for (int i = 0; i < n; i++)
        p = p * v[i] > CS_NETGEN_MAX_NODES ? (int64_t)CS_NETGEN_MAX_NODES + 1 : p * v[i];
    return p;
}

/* "4,4,4" -> a torus that wraps, as SimGrid's TORUS cluster. */
static int sg_torus(const sg_t *s, xmlNodePtr n, const char *par, int64_t hosts, double bw,
                    double lat, cs_netdesc_t *d)
{
    int dims[CS_NETGEN_MAX_DIMS], nd, rc;
    if ((rc = sg_int_list(s, n, par, CS_NETGEN_MAX_DIMS, dims, &nd)) ||
        (rc = sg_same_hosts(s, n, hosts, product(dims, nd), "TORUS")))
        return rc;
    return sg_generated(s, n, cs_netgen_torus(d, nd, dims, 1, bw, lat, NULL, s->err));
}

/* topo_parameters as its four ';'-separated parts, in buf (256 bytes);
 * CS_ERR_PARSE naming the format `want` when there are not four. */
static int sg_four_parts(const sg_t *s, xmlNodePtr n, const char *par, const char *want,
                         char *buf, char *part[4])
{
    char *save = NULL;
    int k = 0;
    if (strlen(par) >= 256)
        return cs_netfile_sg_fail(s, n, "<cluster topo_parameters>: \"%s\" is too long", par);
    memcpy(buf, par, strlen(par) + 1);
    for (char *t = strtok_r(buf, ";", &save); t && k < 4; t = strtok_r(NULL, ";", &save))
        part[k++] = t;
    if (k != 4 || strtok_r(NULL, ";", &save))
        return cs_netfile_sg_fail(s, n, "<cluster topo_parameters>: %s, got \"%s\"", want, par);
    return CS_OK;
}

/* "levels;down;up;parallel", e.g. "2;4,4;1,2;1,2". */
static int sg_fattree(const sg_t *s, xmlNodePtr n, const char *par, int64_t hosts, double bw,
                      double lat, cs_netdesc_t *d)
{
    int lv[1] = {0}, nl, v[3][CS_NETGEN_MAX_DIMS], cnt[3], rc;
    char buf[256], *part[4];
    if ((rc = sg_four_parts(s, n, par, "FAT_TREE needs \"levels;down;up;parallel\" (e.g. "
                            "\"2;4,4;1,2;1,2\")", buf, part)))
        return rc;
    if ((rc = sg_int_list(s, n, part[0], 1, lv, &nl)))
        return rc;
    if (lv[0] > CS_NETGEN_MAX_DIMS)
        return cs_netfile_sg_fail(s, n, "<cluster topo_parameters>: %d levels, at most %d", lv[0],
                       CS_NETGEN_MAX_DIMS);
    for (int i = 0; i < 3; i++) {
        if ((rc = sg_int_list(s, n, part[i + 1], CS_NETGEN_MAX_DIMS, v[i], &cnt[i])))
            return rc;
        if (cnt[i] != lv[0])
            return cs_netfile_sg_fail(s, n,
                                      "<cluster topo_parameters>: \"%s\" has %d numbers, one per "
                                      "level (%d) expected",
                                      part[i + 1], cnt[i], lv[0]);
    }
    if ((rc = sg_same_hosts(s, n, hosts, product(v[0], lv[0]), "FAT_TREE")))
        return rc;
    return sg_generated(s, n, cs_netgen_fattree(d, lv[0], v[0], v[1], v[2], bw, lat, NULL,
                                                s->err));
}

/* "G,g;C,c;R,r;N" (netfile_sgdragonfly.c), hosts named as SimGrid does. */
static int sg_dragonfly(const sg_t *s, xmlNodePtr n, const char *par, int64_t hosts, double bw,
                        double lat, cs_netdesc_t *d)
{
    static const char *const what[4] = {"groups", "chassis", "routers", "nodes"};
    char buf[256], *part[4], **labels;
    int v[4][2], cnt, rc;
    const char *rad = cs_netfile_sg_attr(n, "radical");
    const char *prefix = cs_netfile_sg_attr(n, "prefix"), *suffix = cs_netfile_sg_attr(n, "suffix"),
               *id = cs_netfile_sg_attr(n, "id");
    int64_t *vals, count;
    if ((rc = sg_four_parts(s, n, par, "DRAGONFLY needs \"groups,links;chassis,links;"
                            "routers,links;nodes\" (e.g. \"3,4;4,3;5,1;2\")", buf, part)))
        return rc;
    for (int i = 0; i < 4; i++) {
        if ((rc = sg_int_list(s, n, part[i], 2, v[i], &cnt)))
            return rc;
        if (cnt != (i < 3 ? 2 : 1))
            return cs_netfile_sg_fail(s, n,
                                      "<cluster topo_parameters>: DRAGONFLY's %s part \"%s\" needs "
                                      "%s",
                                      what[i], part[i],
                                      i < 3 ? "a count and a number of links" : "one count");
    }
    cs_netfile_sgdf_t p = {v[0][0], v[0][1], v[1][0], v[1][1], v[2][0], v[2][1], v[3][0]};
    if (p.groups > p.routers)
        return cs_netfile_sg_fail(
            s, n,
            "<cluster topology=DRAGONFLY>: %d groups need at least as many "
            "routers per chassis (SimGrid 3.32 joins group t through router t of "
            "chassis 0), got %d",
            (int)p.groups, (int)p.routers);
    int64_t topo = product((int[]){p.groups, p.chassis, p.routers, p.nodes}, 4);
    if ((rc = sg_same_hosts(s, n, hosts, topo, "DRAGONFLY")))
        return rc;
    vals = cs_malloc((size_t)hosts * sizeof *vals);
    labels = cs_calloc((size_t)hosts, sizeof *labels);
    rc = cs_netfile_sg_radical(s, n, rad, &count, vals);
    for (int64_t h = 0; h < hosts && !rc; h++) {
        size_t len = strlen(prefix ? prefix : "") + strlen(suffix ? suffix : "") + 24;
        labels[h] = cs_malloc(len);
        snprintf(labels[h], len, "%s%lld%s", prefix ? prefix : "", (long long)vals[h],
                 suffix ? suffix : "");
    }
    if (!rc)
        rc = sg_generated(s, n, cs_netfile_sg_dragonfly(d, &p, bw, lat, id ? id : "dragonfly",
                                                        (const char *const *)labels, s->err));
    for (int64_t h = 0; h < hosts; h++)
        free(labels[h]);
    free(labels);
    free(vals);
    return rc;
}

static int sg_flat(const sg_t *s, xmlNodePtr n, int64_t hosts, double bw, double lat,
                   cs_netdesc_t *d)
{
    const char *bb = cs_netfile_sg_attr(n, "bb_bw"), *bbl = cs_netfile_sg_attr(n, "bb_lat"), *pol;
    double bbw = 0, blat = 0;
    int rc;
    if (bb && *bb) {
        /* SimGrid's backbone is crossed by every message of the cluster and,
         * SHARED (its default), shared by all of them: cs_netgen_star's
         * backbone is that.  A FATPIPE backbone limits each flow only. */
        if ((pol = cs_netfile_sg_attr(n, "bb_sharing_policy")) && strcmp(pol, "SHARED"))
            return cs_netfile_sg_fail(
                s, n,
                "<cluster>: bb_sharing_policy=%s is not mapped (collsim's "
                "cluster backbone is SimGrid's SHARED one); drop bb_bw when the "
                "backbone does not limit",
                pol);
        if ((rc = cs_netfile_sg_bandwidth(s, n, "bb_bw", bb, &bbw)) ||
            (bbl && (rc = cs_netfile_sg_latency(s, n, "bb_lat", bbl, &blat))))
            return rc;
    }
    return sg_generated(s, n, cs_netgen_star(d, (int)hosts, bw, lat, bbw, blat, s->err));
}

static int sg_cluster(const sg_t *s, xmlNodePtr n, cs_netdesc_t **out)
{
    const char *topo, *par, *lim;
    int64_t hosts;
    double bw, lat;
    cs_netfile_sg_policy_t pol;
    int rc =
        cs_netfile_sg_check(s, n,
                            "id prefix suffix radical speed core bw lat sharing_policy topology "
                            "topo_parameters bb_bw bb_lat bb_sharing_policy router_id limiter_link "
                            "loopback_bw loopback_lat",
                            0);
    const char *rad = cs_netfile_sg_need(s, n, "radical", &rc),
               *b = cs_netfile_sg_need(s, n, "bw", &rc), *l = cs_netfile_sg_need(s, n, "lat", &rc);
    if (rc || (rc = sg_radical(s, n, rad, &hosts)) ||
        (rc = cs_netfile_sg_bandwidth(s, n, "bw", b, &bw)) ||
        (rc = cs_netfile_sg_latency(s, n, "lat", l, &lat)) ||
        (rc = cs_netfile_sg_sharing(s, n, "sharing_policy", "SPLITDUPLEX", &pol)))
        return rc;
    /* SimGrid's limiter link caps a host's total traffic, both directions
     * together: a SHARED link again */
    if ((lim = cs_netfile_sg_attr(n, "limiter_link")) && *lim)
        return cs_netfile_sg_fail(s, n,
                                  "<cluster>: limiter_link (one bandwidth for a host's sends and "
                                  "receives together) is not modelled by collsim");
    topo = cs_netfile_sg_attr(n, "topology");
    par = cs_netfile_sg_attr(n, "topo_parameters");
    *out = cs_netdesc_new(s->path);
    if (!topo || !strcmp(topo, "FLAT"))
        rc = sg_flat(s, n, hosts, bw, lat, *out);
    else if (!strcmp(topo, "TORUS") || !strcmp(topo, "FAT_TREE"))
        rc = !par ? cs_netfile_sg_fail(s, n, "<cluster topology=%s> needs topo_parameters", topo)
             : topo[0] == 'T' ? sg_torus(s, n, par, hosts, bw, lat, *out)
                              : sg_fattree(s, n, par, hosts, bw, lat, *out);
    else if (!strcmp(topo, "DRAGONFLY"))
        rc = !par ? cs_netfile_sg_fail(s, n, "<cluster topology=%s> needs topo_parameters", topo)
                  : sg_dragonfly(s, n, par, hosts, bw, lat, *out);
    else
        rc = cs_netfile_sg_fail(
            s, n, "<cluster>: topology=\"%s\"; valid: FLAT, TORUS, FAT_TREE, DRAGONFLY", topo);
    /* not SPLITDUPLEX: SimGrid's cluster links are SHARED (head comment);
     * a FLAT cluster's are its host links, the first `hosts` (its backbone
     * already acts as one resource, cs_netgen_star) */
    if (!rc && pol != CS_SG_SPLITDUPLEX)
        for (int32_t k = 0, nl = cs_netdesc_nlinks(*out);
             k < (!topo || !strcmp(topo, "FLAT") ? (int32_t)hosts : nl); k++)
            cs_netdesc_set_shared(*out, k);
    if (!rc)
        rc = cs_netdesc_check(*out, s->err);
    if (rc) {
        cs_netdesc_free(*out);
        *out = NULL;
    }
    return rc;
}

/* ---- the platform ---------------------------------------------------------------- */

static const char *const explicit_routings[] = {"Full", "Floyd", "Dijkstra", "DijkstraCache",
                                                NULL};

/* A <zone>: one <cluster> alone, or hosts, routers, links and routes. */
static int sg_zone_or_cluster(const sg_t *s, xmlNodePtr zone, cs_netdesc_t **out)
{
    xmlNodePtr cluster = NULL;
    int rc = cs_netfile_sg_check(s, zone, "id routing", 1), others = 0;
    const char *routing = cs_netfile_sg_need(s, zone, "routing", &rc);
    if (rc)
        return rc;
    for (xmlNodePtr c = zone->children; c; c = c->next) {
        if (cs_netfile_sg_is(c, "cluster") && !cluster)
            cluster = c;
        else if (c->type == XML_ELEMENT_NODE)
            others++;
    }
    for (xmlNodePtr c = zone->children; c; c = c->next)
        if (cs_netfile_sg_is(c, "zone") || cs_netfile_sg_is(c, "AS") || (cluster && others))
            return cs_netfile_sg_zones(s, zone, out);
    if (cluster)
        return sg_cluster(s, cluster, out);
    for (int i = 0; explicit_routings[i]; i++)
        if (!strcmp(routing, explicit_routings[i]))
            return cs_netfile_sg_zone(s, zone, i == 0, out);
    return cs_netfile_sg_fail(s, zone,
                              "<zone routing=\"%s\"> is not read by collsim; valid: Full, Floyd, "
                              "Dijkstra, DijkstraCache (explicit routes)",
                              routing);
}

int cs_netfile_read_simgrid(const cs_source_t *src, double dflt_bw, double dflt_lat,
                            cs_netdesc_t **out, cs_error_t *err)
{
    const char *path = src->name;
    sg_t s = {path, err};
    xmlDocPtr doc;
    xmlNodePtr root, net = NULL;
    const char *version;
    int rc;
    (void)dflt_bw; /* SimGrid requires every bandwidth and latency */
    (void)dflt_lat;
    *out = NULL;
    if ((rc = cs_netfile_xml_read(src, &doc, err)))
        return rc;
    root = xmlDocGetRootElement(doc);
    if (!root || !cs_netfile_sg_is(root, "platform"))
        rc = cs_error_set(err, CS_ERR_PARSE, "%s:%d: not a SimGrid platform (the root element "
                          "is not <platform>)", path, root ? cs_netfile_sg_line(root) : 1);
    else if (!(rc = cs_netfile_sg_check(&s, root, "version", 1)) &&
             (!(version = cs_netfile_sg_attr(root, "version")) || strncmp(version, "4", 1)))
        rc = cs_netfile_sg_fail(&s, root,
                                "<platform version=\"%s\">: collsim reads version 4 and 4.1 "
                                "(SimGrid's simgrid_update_xml converts older files)",
                                version ? version : "");
    for (xmlNodePtr c = root ? root->children : NULL; c && !rc; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || cs_netfile_sg_is(c, "config"))
            continue; /* <config>: SimGrid's model options; collsim's own apply */
        if (!cs_netfile_sg_is(c, "zone") && !cs_netfile_sg_is(c, "AS") &&
            !cs_netfile_sg_is(c, "cluster"))
            rc = cs_netfile_sg_fail(&s, c,
                                    "<%s> is not read by collsim (it reads one <zone> or one "
                                    "<cluster>)",
                                    (const char *)c->name);
        else if (net)
            rc = cs_netfile_sg_fail(&s, c,
                                    "a second <%s>: collsim reads one zone or cluster per file "
                                    "(the first is on line %d)",
                                    (const char *)c->name, cs_netfile_sg_line(net));
        else
            net = c;
    }
    if (!rc && !net)
        rc = cs_netfile_sg_fail(&s, root, "<platform> has no <zone> or <cluster>");
    if (!rc)
        rc = cs_netfile_sg_is(net, "cluster") ? sg_cluster(&s, net, out)
                                     : sg_zone_or_cluster(&s, net, out);
    xmlFreeDoc(doc);
    return rc;
}
