/*
 * test_netfile.c - Criterion tests of network files (src/topo/netfile*.c):
 * the example files of tests/data/net read into descriptions whose nodes,
 * kinds, links, bandwidths and latencies were counted by hand from the
 * files (the counts are in each file's comment); every error the readers
 * promise, with its file:line text; the GraphML writer's output read back
 * equal; SimGrid DRAGONFLY clusters (counts and routes from SimGrid's
 * formulas) and platforms of several zones (routes by node label).
 *
 * The SimGrid cluster tests (FLAT, TORUS, FAT_TREE) need the generators of
 * netgen_tree.c and netgen_direct.c: until they are merged the reader says
 * "not built" and those tests skip.
 */
#include <criterion/criterion.h>
#include <igraph.h>
#include <libxml/xmlmemory.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topo/netfile.h"

/* each hop's virtual-channel class (netdesc.h), written by the routes */
static uint8_t vcs[1 << 12];

#define DFLT_BW 1e9
#define DFLT_LAT 2e-6

static char tmpdir[] = "/tmp/cs_netfile_XXXXXX";

static void setup(void) { cr_assert_not_null(mkdtemp(tmpdir)); }
static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(netfile, .init = setup, .fini = teardown);

static const char *data(const char *name)
{
    static char path[1024];
    const char *root = getenv("COLLSIM_SOURCE_ROOT");
    snprintf(path, sizeof path, "%s/tests/data/net/%s", root ? root : "..", name);
    return path;
}

/* Writes `text` to a file of that name in the test's directory. */
static const char *tmpfile_with(const char *name, const char *text)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static cs_netdesc_t *read_ok(const char *path, cs_netfile_format_t fmt)
{
    cs_netdesc_t *d = NULL;
    cs_error_t err = {0};
    int rc = cs_netfile_read(&(cs_source_t){.name = path}, fmt, DFLT_BW, DFLT_LAT, &d, &err);
    cr_assert_eq(rc, CS_OK, "reading %s: %s", path, err.msg);
    cr_assert_not_null(d);
    return d;
}

/* Reading src fails with `code` and a message that contains each of the
 * NULL-terminated `parts`, "@" standing for src's name. */
static void source_fails(const cs_source_t *src, int code, const char *const *parts)
{
    cs_netdesc_t *d = NULL;
    cs_error_t err = {0};
    const char *how = src->data ? "in memory" : "as a file";
    int rc = cs_netfile_read(src, CS_NETFILE_AUTO, DFLT_BW, DFLT_LAT, &d, &err);
    cr_assert_eq(rc, code, "%s %s: rc %d (want %d), message: %s", src->name, how, rc, code,
                 err.msg);
    cr_assert_null(d);
    for (; *parts; parts++) {
        char want[1200];
        const char *at = strchr(*parts, '@');
        if (at)
            snprintf(want, sizeof want, "%.*s%s%s", (int)(at - *parts), *parts, src->name,
                     at + 1);
        else
            snprintf(want, sizeof want, "%s", *parts);
        cr_assert_not_null(strstr(err.msg, want), "%s %s: message \"%s\" lacks \"%s\"",
                           src->name, how, err.msg, want);
    }
}

/* Reading text[0 .. len) as file `name` fails so, read from the file and
 * as an inline file of the service (a memory source named `name`): every
 * reader must say the same for both (issue 29). */
static void read_fails_len(const char *name, const char *text, size_t len, int code,
                           const char *const *parts)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(text, 1, len, f), len);
    fclose(f);
    source_fails(&(cs_source_t){.name = path}, code, parts);
    source_fails(&(cs_source_t){.name = name, .data = text, .len = len}, code, parts);
}

static void read_fails(const char *name, const char *text, int code, const char *const *parts)
{
    read_fails_len(name, text, strlen(text), code, parts);
}
#define FAILS(name, text, code, ...)                                                    \
    do {                                                                                \
        static const char *const parts_[] = {__VA_ARGS__, NULL};                        \
        read_fails(name, text, code, parts_);                                           \
    } while (0)

static int32_t node_named(const cs_netdesc_t *d, const char *label)
{
    for (int32_t i = 0; i < cs_netdesc_nodes(d); i++)
        if (cs_netdesc_label(d, i) && !strcmp(cs_netdesc_label(d, i), label))
            return i;
    cr_assert_fail("no node %s", label);
    return -1;
}

/* The link between two named nodes, which must exist. */
static const cs_netlink_t *link_of(const cs_netdesc_t *d, const char *a, const char *b)
{
    int32_t l = cs_netdesc_find_link(d, node_named(d, a), node_named(d, b));
    cr_assert_geq(l, 0, "no link %s-%s", a, b);
    return cs_netdesc_link(d, l);
}

static void assert_link(const cs_netdesc_t *d, const char *a, const char *b, double bw,
                        double lat, int mult)
{
    const cs_netlink_t *l = link_of(d, a, b);
    cr_assert_float_eq(l->bw, bw, bw * 1e-12, "%s-%s bw %g, want %g", a, b, l->bw, bw);
    cr_assert_float_eq(l->lat, lat, 1e-18, "%s-%s lat %g, want %g", a, b, l->lat, lat);
    cr_assert_eq(l->mult, mult, "%s-%s mult %d, want %d", a, b, (int)l->mult, mult);
}

/* ---- edge lists ------------------------------------------------------------- */

Test(netfile, edgelist_two_leaves)
{
    cs_netdesc_t *d = read_ok(data("two-leaves.edges"), CS_NETFILE_AUTO);
    /* s0, s1 declared first, then h0..h3 in order of first use */
    static const char *const order[] = {"s0", "s1", "h0", "h1", "h2", "h3"};
    cr_assert_eq(cs_netdesc_nodes(d), 6);
    cr_assert_eq(cs_netdesc_hosts(d), 4);
    for (int i = 0; i < 6; i++) {
        cr_assert_str_eq(cs_netdesc_label(d, i), order[i]);
        cr_assert_eq(cs_netdesc_kind(d, i), i < 2 ? CS_NETNODE_SWITCH : CS_NETNODE_HOST);
    }
    /* 4 host links + one uplink given twice = 5 links, the uplink doubled */
    cr_assert_eq(cs_netdesc_nlinks(d), 5);
    assert_link(d, "h0", "s0", 12.5e9, 500e-9, 1); /* 100 Gbps = 12.5 GB/s */
    assert_link(d, "h3", "s1", 12.5e9, 500e-9, 1);
    assert_link(d, "s0", "s1", 25e9, 1e-6, 2);
    cr_assert_eq(link_of(d, "s0", "s1")->line, 10); /* the first of the two */
    cs_netdesc_free(d);
}

Test(netfile, edgelist_ranks_order_hosts)
{
    cs_netdesc_t *d = read_ok(data("ranked.edges"), CS_NETFILE_EDGELIST);
    cr_assert_eq(cs_netdesc_nodes(d), 3);
    cr_assert_str_eq(cs_netdesc_label(d, 0), "b");
    cr_assert_str_eq(cs_netdesc_label(d, 1), "c");
    cr_assert_str_eq(cs_netdesc_label(d, 2), "a");
    cr_assert_eq(cs_netdesc_nlinks(d), 2);
    /* a-b is nodes 2-0, with the defaults */
    cr_assert_geq(cs_netdesc_find_link(d, 2, 0), 0);
    cr_assert_lt(cs_netdesc_find_link(d, 2, 1), 0);
    assert_link(d, "a", "b", DFLT_BW, DFLT_LAT, 1);
    cs_netdesc_free(d);
}

Test(netfile, edgelist_switches_keep_their_slots_under_ranks)
{
    /* x is a switch between the hosts: host slots 0 and 2 are refilled by
     * rank (q, then p), the switch stays node 1 */
    const char *path = tmpfile_with("slots.edges", "p x\nswitch x\nx q\nhost p rank 1\n"
                                                   "host q rank 0\n");
    cs_netdesc_t *d = read_ok(path, CS_NETFILE_AUTO);
    cr_assert_str_eq(cs_netdesc_label(d, 0), "q");
    cr_assert_str_eq(cs_netdesc_label(d, 1), "x");
    cr_assert_eq(cs_netdesc_kind(d, 1), CS_NETNODE_SWITCH);
    cr_assert_str_eq(cs_netdesc_label(d, 2), "p");
    cs_netdesc_free(d);
}

Test(netfile, edgelist_errors)
{
    FAILS("few.edges", "a b\n\nc\n", CS_ERR_PARSE, "@:3: too few fields");
    FAILS("many.edges", "a b 1Gbps 1us 7\n", CS_ERR_PARSE, "@:1: too many fields");
    FAILS("unit.edges", "# x\na b 10Gfoo\n", CS_ERR_PARSE, "@:2: link a-b",
          "unknown bandwidth unit \"Gfoo\"");
    FAILS("num.edges", "a b fast\n", CS_ERR_PARSE, "@:1: link a-b", "fast");
    FAILS("lat.edges", "a b 1Gbps 3parsecs\n", CS_ERR_PARSE, "@:1: link a-b", "3parsecs");
    FAILS("loop.edges", "a b\nb b\n", CS_ERR_PARSE, "@:2: a link from b to itself");
    FAILS("zero.edges", "a b 0Gbps\n", CS_ERR_PARSE, "@:1: link a-b",
          "a bandwidth must be positive");
    FAILS("neg.edges", "a b -5GB/s\n", CS_ERR_PARSE, "@:1: link a-b");
    FAILS("twice.edges", "host a rank 0\nhost b rank 1\nhost a rank 1\na b\n", CS_ERR_PARSE,
          "@:3: host a: rank given twice (first on line 1)");
    FAILS("same.edges", "host a rank 0\nhost b rank 0\na b\n", CS_ERR_PARSE,
          "@:2: host b: rank 0 is already host a's");
    FAILS("range.edges", "host a rank 0\nhost b rank 2\na b\n", CS_ERR_PARSE,
          "@:2: host b: rank 2, but ranks are 0..1");
    FAILS("norank.edges", "host a rank 0\na b\n", CS_ERR_PARSE, "@:2: host b has no rank");
    FAILS("keyword.edges", "host a rnk 0\n", CS_ERR_PARSE, "@:1: unknown keyword \"rnk\"");
    FAILS("swrank.edges", "host a rank 0\nswitch a\n", CS_ERR_PARSE,
          "@:2: a has a rank (line 1)");
    FAILS("alike.edges", "a b 1Gbps\na b 2Gbps\n", CS_ERR_PARSE,
          "@:2: link a-b again, with another bandwidth or latency than line 1");
    FAILS("apart.edges", "a b\nc d\n", CS_ERR_PARSE, "host c cannot reach host a");
    FAILS("nohost.edges", "switch s\nswitch t\ns t\n", CS_ERR_PARSE, "has no host");
}

Test(netfile, missing_file_is_io_error)
{
    cs_netdesc_t *d = NULL;
    cs_error_t err = {0};
    cr_assert_eq(cs_netfile_read(&(cs_source_t){.name = "/nonexistent/x.edges"}, CS_NETFILE_AUTO, 1, 0, &d, &err),
                 CS_ERR_IO);
    cr_assert_eq(cs_netfile_read(&(cs_source_t){.name = "/nonexistent/x.graphml"}, CS_NETFILE_AUTO, 1, 0, &d, &err),
                 CS_ERR_IO);
    cr_assert_eq(cs_netfile_read(&(cs_source_t){.name = "/nonexistent/x.xml"}, CS_NETFILE_AUTO, 1, 0, &d, &err),
                 CS_ERR_IO);
    cr_assert_null(d);
}

Test(netfile, format_names)
{
    cs_netfile_format_t f;
    cs_error_t err = {0};
    cr_assert_eq(cs_netfile_parse_format("graphml", &f, &err), CS_OK);
    cr_assert_eq(f, CS_NETFILE_GRAPHML);
    cr_assert_eq(cs_netfile_parse_format("simgrid", &f, &err), CS_OK);
    cr_assert_eq(f, CS_NETFILE_SIMGRID);
    cr_assert_eq(cs_netfile_parse_format("gml", &f, &err), CS_ERR_USAGE);
    cr_assert_not_null(strstr(err.msg, "edgelist"));
}

/* ---- GraphML ---------------------------------------------------------------- */

Test(netfile, graphml_star)
{
    cs_netdesc_t *d = read_ok(data("star.graphml"), CS_NETFILE_AUTO);
    cr_assert_eq(cs_netdesc_nodes(d), 4);
    cr_assert_eq(cs_netdesc_hosts(d), 3);
    cr_assert_eq(cs_netdesc_kind(d, 0), CS_NETNODE_SWITCH);
    cr_assert_str_eq(cs_netdesc_label(d, 0), "sw"); /* no label: the id */
    cr_assert_str_eq(cs_netdesc_label(d, 1), "h0");
    cr_assert_eq(cs_netdesc_group(d, 1), 0);
    cr_assert_eq(cs_netdesc_group(d, 0), -1);
    cr_assert_eq(cs_netdesc_nlinks(d), 3);
    assert_link(d, "h0", "sw", 12.5e9, 1e-6, 1);
    assert_link(d, "h2", "sw", 12.5e9, 1e-6, 2);
    cs_netdesc_free(d);
}

#define GML_HEAD                                                                        \
    "<?xml version=\"1.0\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
#define GML_GRAPH "<graph edgedefault=\"undirected\">\n"

Test(netfile, graphml_errors)
{
    FAILS("color.graphml",
          GML_HEAD "<key id=\"c\" for=\"node\" attr.name=\"color\" attr.type=\"string\"/>\n"
          GML_GRAPH "<node id=\"a\"/><node id=\"b\"/><edge source=\"a\" target=\"b\"/>\n"
          "</graph></graphml>\n", CS_ERR_PARSE, "@: unknown node attribute \"color\"");
    FAILS("weight.graphml",
          GML_HEAD "<key id=\"w\" for=\"edge\" attr.name=\"weight\" attr.type=\"double\"/>\n"
          GML_GRAPH "<node id=\"a\"/><node id=\"b\"/><edge source=\"a\" target=\"b\"/>\n"
          "</graph></graphml>\n", CS_ERR_PARSE, "@: unknown edge attribute \"weight\"");
    FAILS("broken.graphml", GML_HEAD GML_GRAPH "<node id=\"a\">\n</graph></graphml>\n",
          CS_ERR_PARSE, "@:5: Opening and ending tag mismatch: node line 4 and graph");
    FAILS("kind.graphml",
          GML_HEAD "<key id=\"k\" for=\"node\" attr.name=\"kind\" attr.type=\"string\"/>\n"
          GML_GRAPH "<node id=\"a\"><data key=\"k\">router</data></node><node id=\"b\"/>\n"
          "<edge source=\"a\" target=\"b\"/></graph></graphml>\n", CS_ERR_PARSE,
          "@:5: node a: kind \"router\" is neither host nor switch");
    FAILS("zero.graphml",
          GML_HEAD "<key id=\"b\" for=\"edge\" attr.name=\"bandwidth\" attr.type=\"double\"/>\n"
          GML_GRAPH "<node id=\"a\"/><node id=\"b\"/>\n"
          "<edge source=\"a\" target=\"b\"><data key=\"b\">0</data></edge></graph></graphml>\n",
          CS_ERR_PARSE, "@:6: <data key=\"b\"> (bandwidth)", "a bandwidth must be positive");
    FAILS("loop.graphml", GML_HEAD GML_GRAPH "<node id=\"a\"/><node id=\"b\"/>\n"
          "<edge source=\"a\" target=\"b\"/><edge source=\"b\" target=\"b\"/>\n"
          "</graph></graphml>\n", CS_ERR_PARSE, "@:5: a link from b to itself");
    FAILS("notgraphml.graphml", "<?xml version=\"1.0\"?>\n<svg/>\n", CS_ERR_PARSE, "@: ");
}

Test(netfile, graphml_ranks_reorder_hosts)
{
    /* node order x(switch) p q r; ranks p=2 q=0 r=1: host slots 1..3 become
     * q, r, p; label "" means none */
    const char *path = tmpfile_with("ranks.graphml", GML_HEAD
        "<key id=\"k\" for=\"node\" attr.name=\"kind\" attr.type=\"string\"/>\n"
        "<key id=\"r\" for=\"node\" attr.name=\"rank\" attr.type=\"int\"/>\n"
        "<key id=\"l\" for=\"node\" attr.name=\"label\" attr.type=\"string\"/>\n"
        "<key id=\"lv\" for=\"node\" attr.name=\"level\" attr.type=\"int\"/>\n"
        "<key id=\"la\" for=\"edge\" attr.name=\"latency\" attr.type=\"string\"/>\n"
        GML_GRAPH "<node id=\"x\"><data key=\"k\">switch</data><data key=\"lv\">1</data>"
        "<data key=\"l\">top &amp; middle</data></node>\n"
        "<node id=\"p\"><data key=\"r\">2</data><data key=\"l\">P</data></node>\n"
        "<node id=\"q\"><data key=\"r\">0</data><data key=\"l\"></data></node>\n"
        "<node id=\"r\"><data key=\"r\">1</data><data key=\"l\">R</data></node>\n"
        "<edge source=\"x\" target=\"p\"><data key=\"la\">250ns</data></edge>\n"
        "<edge source=\"x\" target=\"q\"/><edge source=\"x\" target=\"r\"/>\n"
        "</graph></graphml>\n");
    cs_netdesc_t *d = read_ok(path, CS_NETFILE_AUTO);
    cr_assert_eq(cs_netdesc_nodes(d), 4);
    cr_assert_str_eq(cs_netdesc_label(d, 0), "top & middle");
    cr_assert_eq(cs_netdesc_level(d, 0), 1);
    cr_assert_null(cs_netdesc_label(d, 1)); /* q, rank 0, empty label */
    cr_assert_str_eq(cs_netdesc_label(d, 2), "R");
    cr_assert_str_eq(cs_netdesc_label(d, 3), "P");
    /* x-p is nodes 0-3, latency from the text, bandwidth the default */
    assert_link(d, "top & middle", "P", DFLT_BW, 250e-9, 1);
    assert_link(d, "top & middle", "R", DFLT_BW, DFLT_LAT, 1);
    cs_netdesc_free(d);
}

/* igraph's attribute table and error handler are process-wide: a read
 * installs its own and puts back the caller's, after a failure too */
Test(netfile, graphml_restores_igraph_state)
{
    static const char *const files[] = {"star.graphml", NULL};
    const char *bad = tmpfile_with("bad.graphml", "<?xml version=\"1.0\"?>\n<svg/>\n");
    cs_netdesc_t *d = NULL;
    cs_error_t err = {0};
    igraph_attribute_table_t *before = igraph_set_attribute_table(NULL);
    igraph_error_handler_t *eh = igraph_set_error_handler(igraph_error_handler_printignore);
    cr_assert_eq(cs_netfile_read(&(cs_source_t){.name = data(files[0])}, CS_NETFILE_AUTO, 1, 0, &d, &err), CS_OK);
    cs_netdesc_free(d);
    cr_assert_eq(igraph_set_attribute_table(NULL), NULL);
    cr_assert_eq(igraph_set_error_handler(igraph_error_handler_printignore),
                 igraph_error_handler_printignore);
    cr_assert_eq(cs_netfile_read(&(cs_source_t){.name = bad}, CS_NETFILE_AUTO, 1, 0, &d, &err), CS_ERR_PARSE);
    cr_assert_not_null(strstr(err.msg, "not a GraphML graph igraph can read"), "%s", err.msg);
    cr_assert_eq(igraph_set_attribute_table(before), NULL);
    cr_assert_eq(igraph_set_error_handler(eh), igraph_error_handler_printignore);
}

/* ---- the GraphML writer --------------------------------------------------------- */

static void assert_same(const cs_netdesc_t *a, const cs_netdesc_t *b)
{
    cr_assert_eq(cs_netdesc_nodes(a), cs_netdesc_nodes(b));
    cr_assert_eq(cs_netdesc_hosts(a), cs_netdesc_hosts(b));
    for (int32_t i = 0; i < cs_netdesc_nodes(a); i++) {
        cr_assert_eq(cs_netdesc_kind(a, i), cs_netdesc_kind(b, i), "node %d", (int)i);
        cr_assert_eq(cs_netdesc_group(a, i), cs_netdesc_group(b, i), "node %d", (int)i);
        cr_assert_eq(cs_netdesc_level(a, i), cs_netdesc_level(b, i), "node %d", (int)i);
        const char *la = cs_netdesc_label(a, i), *lb = cs_netdesc_label(b, i);
        if (la)
            cr_assert_str_eq(la, lb ? lb : "(none)", "node %d", (int)i);
        else
            cr_assert_null(lb, "node %d: label %s", (int)i, lb);
    }
    cr_assert_eq(cs_netdesc_nlinks(a), cs_netdesc_nlinks(b));
    for (int32_t i = 0; i < cs_netdesc_nlinks(a); i++) {
        const cs_netlink_t *x = cs_netdesc_link(a, i), *y = cs_netdesc_link(b, i);
        /* a link is undirected: igraph gives an undirected edge's ends in its
         * own order */
        cr_assert((x->u == y->u && x->v == y->v) || (x->u == y->v && x->v == y->u),
                  "link %d: %d-%d vs %d-%d", (int)i, (int)x->u, (int)x->v, (int)y->u, (int)y->v);
        cr_assert_eq(x->bw, y->bw, "link %d bw %.17g vs %.17g", (int)i, x->bw, y->bw);
        cr_assert_eq(x->lat, y->lat, "link %d lat %.17g vs %.17g", (int)i, x->lat, y->lat);
        cr_assert_eq(x->mult, y->mult, "link %d", (int)i);
    }
}

static cs_netdesc_t *round_trip(const cs_netdesc_t *d)
{
    char path[1024];
    cs_error_t err = {0};
    snprintf(path, sizeof path, "%s/rt.graphml", tmpdir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    cr_assert_eq(cs_netfile_write_graphml(d, f, &err), CS_OK, "%s", err.msg);
    fclose(f);
    return read_ok(path, CS_NETFILE_AUTO);
}

Test(netfile, graphml_round_trip)
{
    /* hosts and switches interleaved, labels needing escapes, a node without
     * label, groups, levels, bandwidths that are not short decimals */
    cs_netdesc_t *d = cs_netdesc_new("hand"), *e;
    cs_error_t err = {0};
    int32_t h0 = cs_netdesc_add_node(d, CS_NETNODE_HOST, "h<0>&\"q\"", 0);
    int32_t s = cs_netdesc_add_node(d, CS_NETNODE_SWITCH, "leaf", -1);
    int32_t h1 = cs_netdesc_add_node(d, CS_NETNODE_HOST, "h1", 0);
    int32_t t = cs_netdesc_add_node(d, CS_NETNODE_SWITCH, NULL, 7);
    int32_t h2 = cs_netdesc_add_node(d, CS_NETNODE_HOST, "h2", 1);
    cs_netdesc_set_level(d, h0, 0);
    cs_netdesc_set_level(d, s, 1);
    cs_netdesc_set_level(d, t, 2);
    cr_assert_eq(cs_netdesc_add_link(d, h0, s, 1e10 / 3, 1e-7 / 3, 1, 0, &err), CS_OK);
    cr_assert_eq(cs_netdesc_add_link(d, h1, s, 12.5e9, 0, 3, 0, &err), CS_OK);
    cr_assert_eq(cs_netdesc_add_link(d, s, t, 25e9, 1e-6, 2, 0, &err), CS_OK);
    cr_assert_eq(cs_netdesc_add_link(d, t, h2, 25e9, 1e-6, 1, 0, &err), CS_OK);
    e = round_trip(d);
    assert_same(d, e);
    cs_netdesc_free(e);
    cs_netdesc_free(d);
}

Test(netfile, graphml_round_trip_of_files)
{
    static const char *const files[] = {"two-leaves.edges", "ranked.edges", "star.graphml",
                                        "zone.xml"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        cs_netdesc_t *d = read_ok(data(files[i]), CS_NETFILE_AUTO), *e = round_trip(d);
        assert_same(d, e);
        cs_netdesc_free(e);
        cs_netdesc_free(d);
    }
}

/* ---- SimGrid ----------------------------------------------------------------------- */

Test(netfile, simgrid_zone_with_routes)
{
    cs_netdesc_t *d = read_ok(data("zone.xml"), CS_NETFILE_AUTO);
    /* h1 h2 h3 r, then the place where bb meets l3 */
    cr_assert_eq(cs_netdesc_nodes(d), 5);
    cr_assert_eq(cs_netdesc_hosts(d), 3);
    cr_assert_str_eq(cs_netdesc_label(d, 3), "r");
    cr_assert_eq(cs_netdesc_kind(d, 3), CS_NETNODE_SWITCH);
    cr_assert_str_eq(cs_netdesc_label(d, 4), "~j1");
    cr_assert_eq(cs_netdesc_kind(d, 4), CS_NETNODE_SWITCH);
    /* l1, l2, bb, l3; "spare" is in no route */
    cr_assert_eq(cs_netdesc_nlinks(d), 4);
    assert_link(d, "h1", "r", 125e6, 50e-6, 1);
    assert_link(d, "r", "h2", 125e6, 50e-6, 1);
    assert_link(d, "r", "~j1", 10e9 / 8, 10e-6, 1);
    assert_link(d, "~j1", "h3", 125e6, 50e-6, 1);
    cr_assert_eq(link_of(d, "r", "~j1")->line, 17); /* bb's <link> */
    /* Full: the routes are the paths, each also backwards; the pair h1 -> r
     * has one, r -> ~j1 none (node ids h1 0, h2 1, h3 2, r 3, ~j1 4) */
    int32_t path[8];
    static const int32_t h1h2[] = {0, 3, 1}, h3h1[] = {2, 4, 3, 0};
    cr_assert_not_null(cs_netdesc_route_name(d));
    cr_assert_eq(cs_netdesc_route(d, 0, 1, 0, path, vcs, 8), 3);
    cr_assert_arr_eq(path, h1h2, sizeof h1h2);
    cr_assert_eq(cs_netdesc_route(d, 2, 0, 0, path, vcs, 8), 4);
    cr_assert_arr_eq(path, h3h1, sizeof h3h1);
    cr_assert_eq(cs_netdesc_route(d, 2, 0, 0, path, vcs, 3), -1); /* longer than max */
    cr_assert_eq(cs_netdesc_route(d, 3, 4, 0, path, vcs, 8), -1);
    cs_netdesc_free(d);
}

#define SG_HEAD "<?xml version=\"1.0\"?>\n<platform version=\"4.1\">\n"
#define SG_ZONE "<zone id=\"z\" routing=\"Full\">\n"
#define SG_HOSTS "<host id=\"a\" speed=\"1Gf\"/><host id=\"b\" speed=\"1Gf\"/>" \
                 "<host id=\"c\" speed=\"1Gf\"/>\n"
#define SG_LINK(id) "<link id=\"" id "\" bandwidth=\"1GBps\" latency=\"1us\" " \
                    "sharing_policy=\"SPLITDUPLEX\"/>\n"
#define SG_END "</zone>\n</platform>\n"

Test(netfile, simgrid_units_and_parallel_links)
{
    /* SimGrid's units: 2GiBps (bytes, powers of two), a bare number (bytes/s)
     * and 8Gbps (bits); two links of one kind between a and b are one link
     * of multiplicity 2; routes given both ways walk the same links */
    const char *path = tmpfile_with("units.xml", SG_HEAD SG_ZONE SG_HOSTS
        "<link id=\"p\" bandwidth=\"2GiBps\" latency=\"0\" sharing_policy=\"SPLITDUPLEX\"/>\n"
        "<link id=\"q\" bandwidth=\"2147483648\" sharing_policy=\"FULLDUPLEX\"/>\n"
        "<link id=\"s\" bandwidth=\"8Gbps\" latency=\"1ms\" sharing_policy=\"FATPIPE\"/>\n"
        "<route src=\"a\" dst=\"b\"><link_ctn id=\"p\"/></route>\n"
        "<route src=\"b\" dst=\"a\" symmetrical=\"NO\"><link_ctn id=\"q\"/></route>\n"
        "<route src=\"c\" dst=\"b\"><link_ctn id=\"s\"/></route>\n"
        "<route src=\"b\" dst=\"c\" symmetrical=\"NO\"><link_ctn id=\"s\"/></route>\n"
        /* Full: every two hosts need a route (issue 18) */
        "<route src=\"a\" dst=\"c\"><link_ctn id=\"p\"/><link_ctn id=\"s\"/></route>\n" SG_END);
    cs_netdesc_t *d = read_ok(path, CS_NETFILE_AUTO);
    cr_assert_eq(cs_netdesc_nodes(d), 3);
    cr_assert_eq(cs_netdesc_nlinks(d), 2);
    assert_link(d, "a", "b", 2147483648.0, 0, 2);
    assert_link(d, "b", "c", 1e9, 1e-3, 1);
    cs_netdesc_free(d);
    /* Floyd: the routes give the graph only, the machine routes by shortest
     * paths */
    path = tmpfile_with("floyd.xml", SG_HEAD "<zone id=\"z\" routing=\"Floyd\">\n" SG_HOSTS
        SG_LINK("p") SG_LINK("q") "<route src=\"a\" dst=\"b\"><link_ctn id=\"p\"/></route>\n"
        "<route src=\"b\" dst=\"c\"><link_ctn id=\"q\"/></route>\n" SG_END);
    d = read_ok(path, CS_NETFILE_AUTO);
    cr_assert_eq(cs_netdesc_nlinks(d), 2);
    cr_assert_null(cs_netdesc_route_name(d));
    cs_netdesc_free(d);
}

/* sharing_policy (issue 31): a <link> is SHARED (half duplex) unless it says
 * SPLITDUPLEX or FATPIPE, SimGrid 3.32's DTD default; a <cluster> is
 * SPLITDUPLEX by default, and any other policy (FATPIPE too) makes its
 * links SHARED, as SimGrid 3.32 builds clusters (netfile_simgrid.c). */
Test(netfile, simgrid_sharing_policies)
{
    const char *path = tmpfile_with("shared.xml", SG_HEAD SG_ZONE SG_HOSTS
        "<link id=\"d\" bandwidth=\"1GBps\" latency=\"1us\"/>\n"
        "<link id=\"s\" bandwidth=\"1GBps\" sharing_policy=\"SHARED\"/>\n"
        "<link id=\"f\" bandwidth=\"1GBps\" sharing_policy=\"FATPIPE\"/>\n"
        "<route src=\"a\" dst=\"b\"><link_ctn id=\"d\"/></route>\n"
        "<route src=\"b\" dst=\"c\"><link_ctn id=\"s\"/></route>\n"
        "<route src=\"a\" dst=\"c\"><link_ctn id=\"f\"/></route>\n" SG_END);
    cs_netdesc_t *d = read_ok(path, CS_NETFILE_AUTO);
    int seen = 0;
    cr_assert_eq(cs_netdesc_nlinks(d), 3);
    for (int32_t k = 0; k < 3; k++) {
        const cs_netlink_t *l = cs_netdesc_link(d, k);
        const char *u = cs_netdesc_label(d, l->u), *v = cs_netdesc_label(d, l->v);
        int ac = (!strcmp(u, "a") && !strcmp(v, "c")) || (!strcmp(u, "c") && !strcmp(v, "a"));
        cr_assert_eq(l->shared, ac ? 0 : 1, "link %s-%s", u, v);
        seen += ac;
    }
    cr_assert_eq(seen, 1);
    cs_netdesc_free(d);
    static const struct {
        const char *attrs;
        int shared, flat;
    } cl[] = {
        {"", 0, 1},
        {" sharing_policy=\"SHARED\"", 1, 1},
        {" sharing_policy=\"FATPIPE\"", 1, 1},
        {" bb_bw=\"2GBps\" sharing_policy=\"SHARED\"", 1, 1},
        {" topology=\"TORUS\" topo_parameters=\"2,2\" sharing_policy=\"SHARED\"", 1, 0},
        {" topology=\"FAT_TREE\" topo_parameters=\"2;2,2;1,2;1,1\" sharing_policy=\"FATPIPE\"",
         1, 0},
        {" topology=\"DRAGONFLY\" topo_parameters=\"2,1;1,1;2,1;1\" sharing_policy=\"SHARED\"",
         1, 0},
        {" topology=\"DRAGONFLY\" topo_parameters=\"2,1;1,1;2,1;1\"", 0, 0},
    };
    for (size_t i = 0; i < sizeof cl / sizeof *cl; i++) {
        char text[600];
        snprintf(text, sizeof text, SG_HEAD "<cluster id=\"c\" prefix=\"n\" suffix=\"\" "
                 "radical=\"0-3\" speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\"%s/>\n</platform>\n",
                 cl[i].attrs);
        d = read_ok(tmpfile_with("cluster.xml", text), CS_NETFILE_AUTO);
        for (int32_t k = 0; k < cs_netdesc_nlinks(d); k++) {
            const cs_netlink_t *l = cs_netdesc_link(d, k);
            /* a FLAT cluster's backbone joins two switches: one resource already */
            int host_link = cs_netdesc_level(d, l->u) == 0 || cs_netdesc_level(d, l->v) == 0;
            cr_assert_eq(l->shared, cl[i].shared && (!cl[i].flat || host_link),
                         "%s: link %d", cl[i].attrs, (int)k);
        }
        cs_netdesc_free(d);
    }
}

Test(netfile, simgrid_errors)
{
    /* SHARED and the default are read (test_sgshared.c); an unknown policy is not */
    FAILS("policy.xml", SG_HEAD SG_ZONE SG_HOSTS
          "<link id=\"l\" bandwidth=\"1GBps\" sharing_policy=\"HALF\"/>\n" SG_END,
          CS_ERR_PARSE, "@:5: <link>: sharing_policy=\"HALF\"; valid: SHARED, SPLITDUPLEX, FATPIPE");
    FAILS("attr.xml", SG_HEAD SG_ZONE "<host id=\"a\" speed=\"1Gf\" coordinates=\"0 0\"/>\n"
          SG_END, CS_ERR_PARSE, "@:4: <host>: attribute coordinates is not read by collsim");
    FAILS("prop.xml", SG_HEAD SG_ZONE "<host id=\"a\" speed=\"1Gf\">\n<prop id=\"x\" "
          "value=\"1\"/></host>\n" SG_END, CS_ERR_PARSE, "@:5: <prop> inside <host>");
    FAILS("bw.xml", SG_HEAD SG_ZONE SG_HOSTS "<link id=\"l\" bandwidth=\"0Bps\" "
          "sharing_policy=\"FATPIPE\"/>\n" SG_END, CS_ERR_PARSE, "@:5: <link bandwidth>",
          "positive");
    FAILS("nolink.xml", SG_HEAD SG_ZONE SG_HOSTS SG_LINK("l")
          "<route src=\"a\" dst=\"b\"><link_ctn id=\"m\"/></route>\n" SG_END, CS_ERR_PARSE,
          "@:6: <link_ctn id=\"m\">: no <link> has that id");
    FAILS("nohost.xml", SG_HEAD SG_ZONE SG_HOSTS SG_LINK("l")
          "<route src=\"a\" dst=\"z\"><link_ctn id=\"l\"/></route>\n" SG_END, CS_ERR_PARSE,
          "@:6: <route dst=\"z\">: no <host> or <router> has that id");
    /* l joins a and b; a second route says it leads from a to c */
    FAILS("conflict.xml", SG_HEAD SG_ZONE SG_HOSTS SG_LINK("l")
          "<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>\n"
          "<route src=\"a\" dst=\"c\"><link_ctn id=\"l\"/></route>\n" SG_END, CS_ERR_PARSE,
          "@:7: <route src=\"a\" dst=\"c\">: its links lead to b, not to c");
    FAILS("again.xml", SG_HEAD SG_ZONE SG_HOSTS SG_LINK("l") SG_LINK("m") SG_LINK("n")
          "<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>\n"
          "<route src=\"b\" dst=\"c\"><link_ctn id=\"n\"/></route>\n"
          "<route src=\"a\" dst=\"b\"><link_ctn id=\"m\"/></route>\n" SG_END, CS_ERR_PARSE,
          "@:10: a second <route> from a to b");
    FAILS("empty.xml", SG_HEAD SG_ZONE SG_HOSTS "<route src=\"a\" dst=\"b\"></route>\n" SG_END,
          CS_ERR_PARSE, "@:5: <route src=\"a\" dst=\"b\"> lists no link");
    FAILS("unrouted.xml", SG_HEAD SG_ZONE SG_HOSTS SG_LINK("l")
          "<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>\n" SG_END, CS_ERR_PARSE,
          "host c cannot reach host a");
    FAILS("routing.xml", SG_HEAD "<zone id=\"z\" routing=\"Vivaldi\">\n" SG_HOSTS SG_END,
          CS_ERR_PARSE, "@:3: <zone routing=\"Vivaldi\"> is not read");
    FAILS("nested.xml", SG_HEAD SG_ZONE "<zone id=\"y\" routing=\"Floyd\"/>\n" SG_END,
          CS_ERR_PARSE, "@:4: <zone id=\"y\" routing=\"Floyd\"> in a platform of several "
          "zones: collsim reads routing=\"Full\" there");
    FAILS("two.xml", SG_HEAD SG_ZONE SG_END "<platform/>", CS_ERR_PARSE,
          "@:6: Extra content at the end of the document");
    FAILS("version.xml", "<?xml version=\"1.0\"?>\n<platform version=\"3\">\n</platform>\n",
          CS_ERR_PARSE, "@:2: <platform version=\"3\">: collsim reads version 4");
    FAILS("root.xml", "<?xml version=\"1.0\"?>\n<graphml/>\n", CS_ERR_PARSE,
          "@:2: not a SimGrid platform");
    /* a start tag over two lines: libxml2 numbers the element by its last */
    FAILS("dragonfly.xml", SG_HEAD "<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-71\" "
          "speed=\"1Gf\" bw=\"1Gbps\" lat=\"1us\" topology=\"DRAGONFLY\"\n"
          "topo_parameters=\"3,4;4,3;5,1;2\"/>\n</platform>\n", CS_ERR_PARSE,
          "@:4: <cluster>: radical gives 72 hosts, topology DRAGONFLY has 120");
    FAILS("torus-count.xml", SG_HEAD "<cluster id=\"c\" prefix=\"n\" suffix=\"\" "
          "radical=\"0-9\" speed=\"1Gf\" bw=\"1Gbps\" lat=\"1us\" topology=\"TORUS\" "
          "topo_parameters=\"4,4,4\"/>\n</platform>\n", CS_ERR_PARSE,
          "@:3: <cluster>: radical gives 10 hosts, topology TORUS has 64");
    FAILS("ft-params.xml", SG_HEAD "<cluster id=\"c\" prefix=\"n\" suffix=\"\" "
          "radical=\"0-15\" speed=\"1Gf\" bw=\"1Gbps\" lat=\"1us\" topology=\"FAT_TREE\" "
          "topo_parameters=\"2;4,4;1;1,2\"/>\n</platform>\n", CS_ERR_PARSE,
          "@:3: <cluster topo_parameters>: \"1\" has 1 numbers, one per level (2)");
    FAILS("limiter.xml", SG_HEAD "<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-3\" "
          "speed=\"1Gf\" bw=\"1Gbps\" lat=\"1us\" limiter_link=\"1Gbps\"/>\n</platform>\n",
          CS_ERR_PARSE, "@:3: <cluster>: limiter_link");
    FAILS("radical.xml", SG_HEAD "<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-x\" "
          "speed=\"1Gf\" bw=\"1Gbps\" lat=\"1us\"/>\n</platform>\n", CS_ERR_PARSE,
          "@:3: <cluster radical>");
    FAILS("huge.xml", SG_HEAD "<cluster id=\"c\" prefix=\"n\" suffix=\"\" "
          "radical=\"0-999999999\" speed=\"1Gf\" bw=\"1Gbps\" lat=\"1us\"/>\n</platform>\n",
          CS_ERR_RANGE, "@:3: <cluster radical>: more than");
    FAILS("malformed.xml", SG_HEAD SG_ZONE "<host id=\"a\" speed=\"1Gf\">\n" SG_END,
          CS_ERR_PARSE, "@:5: Opening and ending tag mismatch: host line 4 and zone");
}

/* ---- SimGrid clusters: need the generators ------------------------------------------ */

/* Reads a cluster file, or skips when the generators are not linked yet. */
static cs_netdesc_t *read_cluster(const char *name)
{
    cs_netdesc_t *d = NULL;
    cs_error_t err = {0};
    int rc = cs_netfile_read(&(cs_source_t){.name = data(name)}, CS_NETFILE_AUTO, DFLT_BW, DFLT_LAT, &d, &err);
    if (rc == CS_ERR_INTERNAL && strstr(err.msg, "not built"))
        cr_skip_test("%s needs the generators (netgen_tree.c, netgen_direct.c): %s", name,
                     err.msg);
    cr_assert_eq(rc, CS_OK, "%s: %s", name, err.msg);
    return d;
}

static int links_alike(const cs_netdesc_t *d, double bw, double lat)
{
    for (int32_t i = 0; i < cs_netdesc_nlinks(d); i++)
        if (cs_netdesc_link(d, i)->bw != bw || cs_netdesc_link(d, i)->lat != lat)
            return 0;
    return 1;
}

Test(netfile, simgrid_flat_cluster)
{
    cs_netdesc_t *d = read_cluster("flat.xml");
    /* 4 hosts on one router, each with its private link */
    cr_assert_eq(cs_netdesc_hosts(d), 4);
    cr_assert_eq(cs_netdesc_nodes(d), 5);
    cr_assert_eq(cs_netdesc_nlinks(d), 4);
    cr_assert(links_alike(d, 125e6, 50e-6));
    for (int32_t h = 0; h < 4; h++)
        cr_assert_geq(cs_netdesc_find_link(d, h, 4), 0, "host %d - router", (int)h);
    cs_netdesc_free(d);
}

Test(netfile, simgrid_torus_cluster)
{
    cs_netdesc_t *d = read_cluster("torus.xml");
    /* 4x4x4, wrapping: 3 dimensions x 16 rings x 4 links */
    cr_assert_eq(cs_netdesc_hosts(d), 64);
    cr_assert_eq(cs_netdesc_nodes(d), 64);
    cr_assert_eq(cs_netdesc_nlinks(d), 192);
    cr_assert(links_alike(d, 125e6, 10e-6));
    /* row-major ids: 0 = (0,0,0) neighbours 1, 3 (wrap), 4, 12, 16, 48 */
    static const int32_t nb[] = {1, 3, 4, 12, 16, 48};
    for (int i = 0; i < 6; i++)
        cr_assert_geq(cs_netdesc_find_link(d, 0, nb[i]), 0, "0-%d", (int)nb[i]);
    cr_assert_lt(cs_netdesc_find_link(d, 0, 2), 0);
    cs_netdesc_free(d);
}

Test(netfile, simgrid_fattree_cluster)
{
    cs_netdesc_t *d = read_cluster("fattree.xml");
    /* 16 hosts, 16*1/4 = 4 leaves, 4*2/4 = 2 spines; 16 host links, 4*2
     * leaf-spine pairs of 2 parallel links each */
    int32_t mult = 0;
    cr_assert_eq(cs_netdesc_hosts(d), 16);
    cr_assert_eq(cs_netdesc_nodes(d), 22);
    cr_assert_eq(cs_netdesc_nlinks(d), 24);
    for (int32_t i = 0; i < cs_netdesc_nlinks(d); i++)
        mult += cs_netdesc_link(d, i)->mult;
    cr_assert_eq(mult, 32);
    cr_assert(links_alike(d, 125e6, 50e-6));
    cs_netdesc_free(d);
}

/* A <data> whose key is not declared: igraph would drop it silently, so a
 * misspelt attribute would take its default; the reader names it and its
 * line.  A collsim-written graph attribute (routing) is read back. */
Test(netfile, graphml_undeclared_data_and_routing)
{
    cs_netdesc_t *d = NULL;
    cs_error_t err = {0};
    const char *bad = tmpfile_with("undeclared.graphml",
        "<?xml version=\"1.0\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
        "  <key id=\"kind\" for=\"node\" attr.name=\"kind\" attr.type=\"string\"/>\n"
        "  <graph edgedefault=\"undirected\">\n"
        "    <node id=\"a\"><data key=\"kind\">host</data></node>\n"
        "    <node id=\"b\"><data key=\"bandwith\">1e9</data></node>\n"
        "    <edge source=\"a\" target=\"b\"/>\n  </graph>\n</graphml>\n");
    cr_assert_eq(cs_netfile_read(&(cs_source_t){.name = bad}, CS_NETFILE_AUTO, DFLT_BW, DFLT_LAT, &d, &err), CS_ERR_PARSE);
    cr_expect(strstr(err.msg, ":6:") && strstr(err.msg, "bandwith"), "%s", err.msg);
    const char *ok = tmpfile_with("ring.graphml",
        "<?xml version=\"1.0\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
        "  <key id=\"routing\" for=\"graph\" attr.name=\"routing\" attr.type=\"string\"/>\n"
        "  <graph edgedefault=\"undirected\"><data key=\"routing\">ring</data>\n"
        "    <node id=\"a\"/><node id=\"b\"/><node id=\"c\"/>\n"
        "    <edge source=\"a\" target=\"b\"/><edge source=\"b\" target=\"c\"/>"
        "<edge source=\"c\" target=\"a\"/>\n  </graph>\n</graphml>\n");
    d = read_ok(ok, CS_NETFILE_AUTO);
    cr_expect_str_eq(cs_netdesc_shape(d), "ring");
    cs_netdesc_free(d);
}

/* ---- SimGrid DRAGONFLY clusters and platforms of several zones ------------------------ */

/* The route's nodes by label, "a b c". */
static const char *route_labels(const cs_netdesc_t *d, const char *a, const char *b, int *hops)
{
    static char text[512];
    int32_t path[32];
    int n = cs_netdesc_route(d, node_named(d, a), node_named(d, b), 0, path, vcs, 32);
    cr_assert_gt(n, 1, "no route %s -> %s", a, b);
    text[0] = '\0';
    for (int i = 0; i < n; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s", i ? " " : "",
                 cs_netdesc_label(d, path[i]));
    *hops = n - 1;
    return text;
}

Test(netfile, simgrid_dragonfly_counts)
{
    /* "3,4;4,3;5,1;2": G=3 groups (blue links: 4 per pair), C=4 chassis per
     * group (black: 3), R=5 routers per chassis (green: 1), N=2 hosts per
     * router.  SimGrid's docs and DragonflyZone: hosts G*C*R*N = 120,
     * routers G*C*R = 60; links: one per host (120), green between every
     * two routers of a chassis G*C*R(R-1)/2 = 120, black between the same
     * position of every two chassis of a group G*R*C(C-1)/2 = 90, blue one
     * per pair of groups G(G-1)/2 = 3: 333 links; multiplicities
     * 120 + 120 + 90*3 + 3*4 = 522. */
    cs_netdesc_t *d = read_ok(data("simgrid/df3x4x5.xml"), CS_NETFILE_AUTO);
    int32_t mult = 0;
    cr_assert_eq(cs_netdesc_hosts(d), 120);
    cr_assert_eq(cs_netdesc_nodes(d), 180);
    cr_assert_eq(cs_netdesc_nlinks(d), 333);
    for (int32_t i = 0; i < cs_netdesc_nlinks(d); i++)
        mult += cs_netdesc_link(d, i)->mult;
    cr_assert_eq(mult, 522);
    /* SimGrid's host names prefix+radical+suffix, in rank order; group
     * hints are the dragonfly groups (40 hosts each) */
    cr_assert_str_eq(cs_netdesc_label(d, 7), "h7");
    cr_assert_eq(cs_netdesc_group(d, 39), 0);
    cr_assert_eq(cs_netdesc_group(d, 119), 2);
    /* the blue link of groups 0 and 2 joins router 2 of group 0 with
     * router 0 of group 2 (chassis 0), 4 links of 12.5 GB/s */
    assert_link(d, "df_router_0_0_2", "df_router_2_0_0", 12.5e9, 1e-6, 4);
    assert_link(d, "df_router_1_0_0", "df_router_1_3_0", 12.5e9, 1e-6, 3); /* black */
    assert_link(d, "h3", "df_router_0_0_1", 12.5e9, 1e-6, 1);              /* host 3: router 1 */
    cs_netdesc_free(d);
}

Test(netfile, simgrid_dragonfly_routes)
{
    cs_netdesc_t *d = read_ok(data("simgrid/df3x4x5.xml"), CS_NETFILE_AUTO);
    int hops;
    /* host h = router h/2 = (group, chassis, position) = (h/40, h/10%4, h/2%5) */
    cr_assert_str_eq(route_labels(d, "h0", "h1", &hops), "h0 df_router_0_0_0 h1");
    cr_assert_str_eq(route_labels(d, "h0", "h2", &hops), /* green */
                     "h0 df_router_0_0_0 df_router_0_0_1 h2");
    cr_assert_str_eq(route_labels(d, "h0", "h10", &hops), /* black */
                     "h0 df_router_0_0_0 df_router_0_1_0 h10");
    /* to group 1: green to position 1, blue to router 0 of group 1 */
    cr_assert_str_eq(route_labels(d, "h0", "h40", &hops),
                     "h0 df_router_0_0_0 df_router_0_0_1 df_router_1_0_0 h40");
    static const uint8_t vc40[] = {0, 0, 0, 1};
    cr_assert_arr_eq(vcs, vc40, sizeof vc40);
    /* the longest: (0,3,4) -> (2,3,4): green to position 2, black to
     * chassis 0, blue, green to position 4, black to chassis 3 */
    cr_assert_str_eq(route_labels(d, "h38", "h118", &hops),
                     "h38 df_router_0_3_4 df_router_0_3_2 df_router_0_0_2 df_router_2_0_0 "
                     "df_router_2_0_4 df_router_2_3_4 h118");
    cr_assert_eq(hops, 7);
    static const uint8_t vc118[] = {0, 0, 0, 0, 1, 1, 1};
    cr_assert_arr_eq(vcs, vc118, sizeof vc118);
    cs_netdesc_free(d);
}

Test(netfile, simgrid_zones)
{
    /* mz3z.xml: zone A (h0-h3, router rA, Full routes), FLAT cluster B
     * (h4-h11, router rB), zone C of clusters C1 (h12-h15, rC1) and C2
     * (h16-h19, rC2) joined by c1c2; ab joins rA-rB, bc rB-rC1, and A's
     * zoneRoute to C crosses both */
    cs_netdesc_t *d = read_ok(data("simgrid/mz3z.xml"), CS_NETFILE_AUTO);
    int hops;
    cr_assert_eq(cs_netdesc_hosts(d), 20);
    cr_assert_eq(cs_netdesc_nodes(d), 24);
    cr_assert_eq(cs_netdesc_nlinks(d), 4 + 8 + 4 + 4 + 3);
    assert_link(d, "rA", "rB", 10e9, 5e-6, 1);
    cr_assert_eq(link_of(d, "rA", "rB")->line, 33); /* <link id="ab"> */
    assert_link(d, "rC1", "rC2", 20e9, 2e-6, 1);
    assert_link(d, "h5", "rB", 12.5e9, 1e-6, 1); /* B's B_link_5 */
    cr_assert_str_eq(route_labels(d, "h0", "h1", &hops), "h0 rA h1");
    cr_assert_str_eq(route_labels(d, "h4", "h11", &hops), "h4 rB h11");
    cr_assert_str_eq(route_labels(d, "h0", "h5", &hops), "h0 rA rB h5");
    /* A -> C: ab, bc to C's gateway rC1, then inside C: C1 is there */
    cr_assert_str_eq(route_labels(d, "h0", "h12", &hops), "h0 rA rB rC1 h12");
    /* ... C2 behind C1's zoneRoute */
    cr_assert_str_eq(route_labels(d, "h1", "h19", &hops), "h1 rA rB rC1 rC2 h19");
    /* the symmetrical reverse, from the inner zone out */
    cr_assert_str_eq(route_labels(d, "h19", "h5", &hops), "h19 rC2 rC1 rB h5");
    cs_netdesc_free(d);
}

#define MZ_HEAD SG_HEAD "<zone id=\"w\" routing=\"Full\">\n"                                 \
    "<cluster id=\"c1\" prefix=\"h\" suffix=\"\" radical=\"0-1\" speed=\"1Gf\" bw=\"1GBps\" " \
    "lat=\"1us\"/>\n"                                                                       \
    "<cluster id=\"c2\" prefix=\"h\" suffix=\"\" radical=\"2-3\" speed=\"1Gf\" bw=\"1GBps\" " \
    "lat=\"1us\"/>\n" SG_LINK("bb")

Test(netfile, simgrid_zone_errors)
{
    /* the default router of c1 is prefix + id + "_router" + suffix: hc1_router */
    FAILS("gw.xml", MZ_HEAD "<zoneRoute src=\"c1\" dst=\"c2\" gw_src=\"hc1_router\" "
          "gw_dst=\"r2\"><link_ctn id=\"bb\"/></zoneRoute>\n" SG_END, CS_ERR_PARSE,
          "@:7: <zoneRoute gw_dst=\"r2\">: no <host> or <router> has that id");
    FAILS("gwzone.xml", MZ_HEAD "<zoneRoute src=\"c1\" dst=\"c2\" gw_src=\"hc1_router\" "
          "gw_dst=\"h1\"><link_ctn id=\"bb\"/></zoneRoute>\n" SG_END, CS_ERR_PARSE,
          "@:7: <zoneRoute gw_dst=\"h1\">: h1 is not inside zone c2");
    FAILS("nozone.xml", MZ_HEAD "<zoneRoute src=\"c1\" dst=\"c3\" gw_src=\"hc1_router\" "
          "gw_dst=\"hc2_router\"><link_ctn id=\"bb\"/></zoneRoute>\n" SG_END, CS_ERR_PARSE,
          "@:7: <zoneRoute dst=\"c3\">: zone w has no sub-zone or cluster of that id");
    FAILS("missing.xml", MZ_HEAD SG_END, CS_ERR_PARSE,
          "@:3: <zone id=\"w\">: no <zoneRoute> from c1 to c2");
    /* one way only, symmetrical="NO": c2 -> c1 has no route */
    FAILS("oneway.xml", MZ_HEAD "<zoneRoute src=\"c1\" dst=\"c2\" gw_src=\"hc1_router\" "
          "gw_dst=\"hc2_router\" symmetrical=\"NO\"><link_ctn id=\"bb\"/></zoneRoute>\n" SG_END,
          CS_ERR_PARSE, "@:3: <zone id=\"w\">: no <zoneRoute> from c2 to c1");
    FAILS("twice.xml", MZ_HEAD "<zoneRoute src=\"c1\" dst=\"c2\" gw_src=\"hc1_router\" "
          "gw_dst=\"hc2_router\"><link_ctn id=\"bb\"/></zoneRoute>\n"
          "<zoneRoute src=\"c1\" dst=\"c2\" gw_src=\"hc1_router\" gw_dst=\"hc2_router\">"
          "<link_ctn id=\"bb\"/></zoneRoute>\n" SG_END, CS_ERR_PARSE,
          "@:8: a second <zoneRoute> from c1 to c2");
    FAILS("torus-in.xml", SG_HEAD "<zone id=\"w\" routing=\"Full\">\n"
          "<zone id=\"z\" routing=\"Full\"/>\n"
          "<cluster id=\"c1\" prefix=\"h\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" "
          "bw=\"1GBps\" lat=\"1us\" topology=\"TORUS\" topo_parameters=\"4\"/>\n" SG_END,
          CS_ERR_PARSE, "@:5: <cluster topology=TORUS> among zones");
    FAILS("host-beside.xml", MZ_HEAD "<host id=\"x\" speed=\"1Gf\"/>\n" SG_END, CS_ERR_PARSE,
          "@:7: <host> inside a <zone> of zones is not read by collsim");
    FAILS("samezone.xml", SG_HEAD "<zone id=\"w\" routing=\"Full\">\n"
          "<zone id=\"w\" routing=\"Full\"/>\n" SG_END, CS_ERR_PARSE,
          "@:4: <zone id=\"w\">: a zone or cluster has that id already");
    /* DRAGONFLY */
    FAILS("df-gr.xml", SG_HEAD "<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-15\" "
          "speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\" topology=\"DRAGONFLY\" "
          "topo_parameters=\"4,1;2,1;2,1;1\"/>\n</platform>\n", CS_ERR_PARSE,
          "@:3: <cluster topology=DRAGONFLY>: 4 groups need at least as many routers per "
          "chassis");
    FAILS("df-par.xml", SG_HEAD "<cluster id=\"c\" prefix=\"n\" suffix=\"\" radical=\"0-3\" "
          "speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\" topology=\"DRAGONFLY\" "
          "topo_parameters=\"2;1,1;2,1;1\"/>\n</platform>\n", CS_ERR_PARSE,
          "@:3: <cluster topo_parameters>: DRAGONFLY's groups part \"2\" needs a count and a "
          "number of links");
}

/* Issue 18: a Full zone must route every two hosts (and gateways) it
 * holds.  Zone A: a, b, c and gateway rA, links la, lb, lc to rA (lines
 * 4-9); routes from line 10; cluster c1 and the zoneRoute A -> c1 after. */
#define HOLE_HEAD SG_HEAD "<zone id=\"w\" routing=\"Full\">\n"                  \
    "<zone id=\"A\" routing=\"Full\">\n" SG_HOSTS "<router id=\"rA\"/>\n"       \
    SG_LINK("la") SG_LINK("lb") SG_LINK("lc")
#define HOLE_ROUTE(s, d, links) "<route src=\"" s "\" dst=\"" d "\">" links "</route>\n"
#define HOLE_CTN(id) "<link_ctn id=\"" id "\"/>"
#define HOLE_TAIL "</zone>\n"                                                   \
    "<cluster id=\"c1\" prefix=\"h\" suffix=\"\" radical=\"0-1\" speed=\"1Gf\" "   \
    "bw=\"1GBps\" lat=\"1us\"/>\n" SG_LINK("bb")                                  \
    "<zoneRoute src=\"A\" dst=\"c1\" gw_src=\"rA\" gw_dst=\"hc1_router\">"         \
    "<link_ctn id=\"bb\"/></zoneRoute>\n" SG_END
#define HOLE_AB HOLE_ROUTE("a", "b", HOLE_CTN("la") HOLE_CTN("lb"))
#define HOLE_AC HOLE_ROUTE("a", "c", HOLE_CTN("la") HOLE_CTN("lc"))
#define HOLE_BC HOLE_ROUTE("b", "c", HOLE_CTN("lb") HOLE_CTN("lc"))
#define HOLE_GW HOLE_ROUTE("a", "rA", HOLE_CTN("la")) HOLE_ROUTE("b", "rA", HOLE_CTN("lb"))
#define HOLE_CR HOLE_ROUTE("c", "rA", HOLE_CTN("lc"))

Test(netfile, simgrid_route_holes)
{
    /* b -> c: neither it nor c -> b given; <zone id="A"> is line 4 */
    FAILS("hole-hosts.xml", HOLE_HEAD HOLE_AB HOLE_AC HOLE_GW HOLE_CR HOLE_TAIL, CS_ERR_PARSE,
          "@:4: <zone id=\"A\">: no route from b to c");
    /* c -> rA: c's messages to cluster c1 leave through the gateway rA */
    FAILS("hole-gw.xml", HOLE_HEAD HOLE_AB HOLE_AC HOLE_BC HOLE_GW HOLE_TAIL, CS_ERR_PARSE,
          "@:4: <zone id=\"A\">: no route from c to rA");
    /* one Full zone alone (line 3): a -> b one way only, b -> a missing */
    FAILS("hole-single.xml", SG_HEAD SG_ZONE SG_HOSTS SG_LINK("la") SG_LINK("lb")
          SG_LINK("lc") "<route src=\"a\" dst=\"b\" symmetrical=\"NO\">" HOLE_CTN("la")
          HOLE_CTN("lb") "</route>\n" HOLE_AC HOLE_BC "</zone>\n</platform>\n", CS_ERR_PARSE,
          "@:3: <zone id=\"z\">: no route from b to a");
    /* complete: accepted, and c reaches cluster c1 through rA */
    cs_netdesc_t *d = read_ok(tmpfile_with("hole-none.xml", HOLE_HEAD HOLE_AB HOLE_AC HOLE_BC
                                           HOLE_GW HOLE_CR HOLE_TAIL), CS_NETFILE_AUTO);
    int hops;
    cr_assert_str_eq(route_labels(d, "c", "h1", &hops), "c rA hc1_router h1");
    cs_netdesc_free(d);
}

Test(netfile, simgrid_gateways_of_one_level_need_no_route)
{
    /* zone A's routers r1 (to cluster c1) and r2 (to c2): no route joins
     * them, and none is needed, as c1 -> c2 takes w's own zoneRoute */
    const char *path = tmpfile_with("gw2.xml", SG_HEAD "<zone id=\"w\" routing=\"Full\">\n"
        "<zone id=\"A\" routing=\"Full\">\n<host id=\"a\" speed=\"1Gf\"/>"
        "<router id=\"r1\"/><router id=\"r2\"/>\n" SG_LINK("l1") SG_LINK("l2")
        HOLE_ROUTE("a", "r1", HOLE_CTN("l1")) HOLE_ROUTE("a", "r2", HOLE_CTN("l2")) "</zone>\n"
        "<cluster id=\"c1\" prefix=\"h\" suffix=\"\" radical=\"0-1\" speed=\"1Gf\" "
        "bw=\"1GBps\" lat=\"1us\"/>\n<cluster id=\"c2\" prefix=\"h\" suffix=\"\" "
        "radical=\"2-3\" speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\"/>\n"
        SG_LINK("b1") SG_LINK("b2") SG_LINK("b12")
        "<zoneRoute src=\"A\" dst=\"c1\" gw_src=\"r1\" gw_dst=\"hc1_router\">"
        HOLE_CTN("b1") "</zoneRoute>\n"
        "<zoneRoute src=\"A\" dst=\"c2\" gw_src=\"r2\" gw_dst=\"hc2_router\">"
        HOLE_CTN("b2") "</zoneRoute>\n"
        "<zoneRoute src=\"c1\" dst=\"c2\" gw_src=\"hc1_router\" gw_dst=\"hc2_router\">"
        HOLE_CTN("b12") "</zoneRoute>\n" SG_END);
    cs_netdesc_t *d = read_ok(path, CS_NETFILE_AUTO);
    int hops;
    cr_assert_str_eq(route_labels(d, "h3", "a", &hops), "h3 hc2_router r2 a");
    cr_assert_str_eq(route_labels(d, "h0", "h3", &hops), "h0 hc1_router hc2_router h3");
    cs_netdesc_free(d);
}

Test(netfile, simgrid_gateways_of_two_levels_need_a_route)
{
    /* cluster X reaches zone Y through g1 (w's zoneRoute), and Y's Y1
     * reaches cluster c2 through g2 (Y's zoneRoute): X -> c2 crosses Y1 from
     * g1 to g2, a route the file lacks; <zone id="Y1"> is line 6 */
    FAILS("gw-levels.xml", SG_HEAD "<zone id=\"w\" routing=\"Full\">\n"
          "<cluster id=\"X\" prefix=\"x\" suffix=\"\" radical=\"0-1\" speed=\"1Gf\" "
          "bw=\"1GBps\" lat=\"1us\"/>\n"
          "<zone id=\"Y\" routing=\"Full\">\n"
          "<zone id=\"Y1\" routing=\"Full\">\n<host id=\"y\" speed=\"1Gf\"/>"
          "<router id=\"g1\"/><router id=\"g2\"/>\n" SG_LINK("l1") SG_LINK("l2")
          HOLE_ROUTE("y", "g1", HOLE_CTN("l1")) HOLE_ROUTE("y", "g2", HOLE_CTN("l2"))
          "</zone>\n<cluster id=\"c2\" prefix=\"h\" suffix=\"\" radical=\"2-3\" "
          "speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\"/>\n" SG_LINK("b2")
          "<zoneRoute src=\"Y1\" dst=\"c2\" gw_src=\"g2\" gw_dst=\"hc2_router\">"
          HOLE_CTN("b2") "</zoneRoute>\n</zone>\n" SG_LINK("bx")
          "<zoneRoute src=\"X\" dst=\"Y\" gw_src=\"xX_router\" gw_dst=\"g1\">"
          HOLE_CTN("bx") "</zoneRoute>\n" SG_END, CS_ERR_PARSE,
          "@:6: <zone id=\"Y1\">: no route from g1 to g2");
}

/* ---- issue 29: what the readers let through in silence, now refused --------------------- */

/* A GraphML file of n hosts around switch s, node i on line 5 + i, the
 * last one's data key spelt `last_key`; into a static buffer. */
static const char *gml_many(int n, const char *last_key)
{
    static char text[1 << 16];
    size_t k = (size_t)snprintf(text, sizeof text, GML_HEAD
        "<key id=\"kind\" for=\"node\" attr.name=\"kind\" attr.type=\"string\"/>\n"
        GML_GRAPH "<node id=\"s\"><data key=\"kind\">switch</data></node>\n");
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf(text + k, sizeof text - k,
                              "<node id=\"h%d\"><data key=\"%s\">host</data></node>\n", i,
                              i == n - 1 ? last_key : "kind");
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf(text + k, sizeof text - k,
                              "<edge source=\"s\" target=\"h%d\"/>\n", i);
    snprintf(text + k, sizeof text - k, "</graph></graphml>\n");
    return text;
}

/* The old check of undeclared keys looked at 64 siblings at most: a typo
 * on the 65th node or later was never seen.  120 nodes, the typo on the
 * last: line 4 (graph) + 1 (switch) + 120. */
Test(netfile, graphml_typo_on_the_last_of_many_nodes)
{
    FAILS("typo.graphml", gml_many(120, "knd"), CS_ERR_PARSE,
          "@:125: <data key=\"knd\"> names no declared <key>");
    /* the same file spelt right reads, each host a host */
    const char *ok = tmpfile_with("many.graphml", gml_many(120, "kind"));
    cs_netdesc_t *d = read_ok(ok, CS_NETFILE_AUTO);
    cr_assert_eq(cs_netdesc_nodes(d), 121);
    cr_assert_eq(cs_netdesc_hosts(d), 120);
    cs_netdesc_free(d);
}

#define GML_BW_KEY(type)                                                                 \
    "<key id=\"bw\" for=\"edge\" attr.name=\"bandwidth\" attr.type=\"" type "\"/>\n"       \
    "<key id=\"lat\" for=\"edge\" attr.name=\"latency\" attr.type=\"" type "\"/>\n"
#define GML_AB GML_GRAPH "<node id=\"a\"/><node id=\"b\"/>\n"

/* igraph reads NaN as a missing value: the default bandwidth, in silence */
Test(netfile, graphml_non_finite_values_are_refused)
{
    FAILS("nan.graphml", GML_HEAD GML_BW_KEY("double") GML_AB
          "<edge source=\"a\" target=\"b\"><data key=\"bw\">NaN</data></edge>\n"
          "</graph></graphml>\n", CS_ERR_PARSE, "@:7: <data key=\"bw\"> (bandwidth)", "NaN");
    FAILS("nanlat.graphml", GML_HEAD GML_BW_KEY("double") GML_AB
          "<edge source=\"a\" target=\"b\">\n<data key=\"lat\">nan</data></edge>\n"
          "</graph></graphml>\n", CS_ERR_PARSE, "@:8: <data key=\"lat\"> (latency)");
    FAILS("inf.graphml", GML_HEAD GML_BW_KEY("double") GML_AB
          "<edge source=\"a\" target=\"b\"><data key=\"bw\">inf</data></edge>\n"
          "</graph></graphml>\n", CS_ERR_PARSE, "@:7: <data key=\"bw\"> (bandwidth)");
    FAILS("neg.graphml", GML_HEAD GML_BW_KEY("string") GML_AB
          "<edge source=\"a\" target=\"b\"><data key=\"lat\">-1us</data></edge>\n"
          "</graph></graphml>\n", CS_ERR_PARSE, "@:7: <data key=\"lat\"> (latency)");
    FAILS("empty.graphml", GML_HEAD GML_BW_KEY("double") GML_AB
          "<edge source=\"a\" target=\"b\"><data key=\"bw\"> </data></edge>\n"
          "</graph></graphml>\n", CS_ERR_PARSE, "@:7: <data key=\"bw\">: an empty bandwidth");
    /* a key's <default> is a value like any other */
    FAILS("default.graphml", GML_HEAD
          "<key id=\"bw\" for=\"edge\" attr.name=\"bandwidth\" attr.type=\"double\">\n"
          "<default>NaN</default></key>\n" GML_AB
          "<edge source=\"a\" target=\"b\"/></graph></graphml>\n", CS_ERR_PARSE,
          "@:4: <data key=\"bw\"> (bandwidth)");
    /* units in a numeric key: igraph would read NaN */
    FAILS("units.graphml", GML_HEAD GML_BW_KEY("double") GML_AB
          "<edge source=\"a\" target=\"b\"><data key=\"bw\">100Gbps</data></edge>\n"
          "</graph></graphml>\n", CS_ERR_PARSE, "@:7: <data key=\"bw\">: bandwidth \"100Gbps\" "
          "is not a plain number");
    /* beyond the range of every reader */
    FAILS("huge.graphml", GML_HEAD GML_BW_KEY("double") GML_AB
          "<edge source=\"a\" target=\"b\"><data key=\"bw\">1e300</data></edge>\n"
          "</graph></graphml>\n", CS_ERR_PARSE, "@:7: <data key=\"bw\">", "beyond 1e+18");
    /* in a string key units are read, and spaces around a number are not
     * the value's: both read */
    const char *ok = tmpfile_with("units.graphml", GML_HEAD GML_BW_KEY("string") GML_AB
        "<edge source=\"a\" target=\"b\"><data key=\"bw\">100Gbps</data>"
        "<data key=\"lat\"> 2us\n</data></edge>\n</graph></graphml>\n");
    cs_netdesc_t *d = read_ok(ok, CS_NETFILE_AUTO);
    assert_link(d, "a", "b", 12.5e9, 2e-6, 1);
    cs_netdesc_free(d);
}

Test(netfile, graphml_duplicate_ids_and_undeclared_endpoints)
{
    FAILS("dup.graphml", GML_HEAD GML_GRAPH "<node id=\"a\"/>\n<node id=\"b\"/>\n"
          "<node id=\"a\"/>\n<edge source=\"a\" target=\"b\"/></graph></graphml>\n",
          CS_ERR_PARSE, "@:6: node \"a\": the id is used twice (first on line 4");
    FAILS("endpoint.graphml", GML_HEAD GML_GRAPH "<node id=\"a\"/><node id=\"b\"/>\n"
          "<edge source=\"a\" target=\"b\"/>\n<edge source=\"b\" target=\"c\"/>\n"
          "</graph></graphml>\n", CS_ERR_PARSE,
          "@:6: <edge> names node \"c\", which no <node> declares");
    FAILS("source.graphml", GML_HEAD GML_GRAPH "<node id=\"a\"/><node id=\"b\"/>\n"
          "<edge source=\"x\" target=\"b\"/>\n<edge source=\"a\" target=\"b\"/>\n"
          "</graph></graphml>\n", CS_ERR_PARSE, "@:5: <edge> names node \"x\"");
    /* an edge may name a node declared further down (GraphML allows it) */
    const char *ok = tmpfile_with("forward.graphml", GML_HEAD GML_GRAPH
        "<edge source=\"a\" target=\"b\"/>\n<node id=\"a\"/><node id=\"b\"/>\n"
        "</graph></graphml>\n");
    cs_netdesc_t *d = read_ok(ok, CS_NETFILE_AUTO);
    cr_assert_eq(cs_netdesc_nodes(d), 2);
    cr_assert_eq(cs_netdesc_nlinks(d), 1);
    cs_netdesc_free(d);
}

/* igraph read an entity reference as an empty value (a switch became a
 * host); libxml2's tree keeps it as a node the SimGrid reader read as "" */
/* found by fuzz_netfile_graphml: a <data> without key was looked up with
 * the unset name (a stack read past its end under ASan) */
Test(netfile, graphml_data_without_key_is_refused)
{
    FAILS("nokey.graphml", GML_HEAD GML_BW_KEY("double") GML_GRAPH
          "<node id=\"a\"><data>host</data></node><node id=\"b\"/>\n"
          "<edge source=\"a\" target=\"b\"/>\n</graph></graphml>\n", CS_ERR_PARSE,
          "@:6: <data> has no key attribute");
}

Test(netfile, entity_references_are_refused)
{
    FAILS("ent.graphml", "<?xml version=\"1.0\"?>\n<!DOCTYPE graphml [<!ENTITY sw \"switch\">]>\n"
          "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
          "<key id=\"k\" for=\"node\" attr.name=\"kind\" attr.type=\"string\"/>\n" GML_GRAPH
          "<node id=\"s\"><data key=\"k\">&sw;</data></node><node id=\"a\"/><node id=\"b\"/>\n"
          "<edge source=\"s\" target=\"a\"/><edge source=\"s\" target=\"b\"/>\n"
          "</graph></graphml>\n", CS_ERR_PARSE, "@:6: an entity reference &sw;");
    FAILS("entattr.graphml", "<?xml version=\"1.0\"?>\n<!DOCTYPE graphml [<!ENTITY n \"a\">]>\n"
          "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n" GML_GRAPH
          "<node id=\"a\"/><node id=\"b\"/>\n<edge source=\"&n;\" target=\"b\"/>\n"
          "</graph></graphml>\n", CS_ERR_PARSE, "@:6: <edge source=\"&n;\">: an entity "
          "reference");
    /* an external entity is refused before anything would open it */
    FAILS("ext.graphml", "<?xml version=\"1.0\"?>\n<!DOCTYPE graphml [<!ENTITY x SYSTEM "
          "\"/etc/passwd\">]>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
          GML_GRAPH "<node id=\"a\">&x;</node></graph></graphml>\n", CS_ERR_PARSE,
          "@:5: an entity reference &x;");
    /* the five of XML and character references are text */
    const char *ok = tmpfile_with("amp.graphml", GML_HEAD GML_GRAPH
        "<node id=\"a&amp;b\"/><node id=\"c&#38;d\"/>\n"
        "<edge source=\"a&#38;b\" target=\"c&amp;d\"/></graph></graphml>\n");
    cs_netdesc_t *d = read_ok(ok, CS_NETFILE_AUTO);
    cr_assert_eq(cs_netdesc_nodes(d), 2);
    cs_netdesc_free(d);
    FAILS("ent.xml", "<?xml version=\"1.0\"?>\n<!DOCTYPE platform [<!ENTITY bw \"1GBps\">]>\n"
          "<platform version=\"4.1\">\n" SG_ZONE SG_HOSTS
          "<link id=\"l\" bandwidth=\"&bw;\" latency=\"1us\" sharing_policy=\"SPLITDUPLEX\"/>\n"
          SG_END, CS_ERR_PARSE, "@:6: <link>: an entity reference &bw;");
    FAILS("entc.xml", "<?xml version=\"1.0\"?>\n<!DOCTYPE platform [<!ENTITY z \"\">]>\n"
          "<platform version=\"4.1\">\n" SG_ZONE "&z;" SG_HOSTS SG_END, CS_ERR_PARSE,
          "@:4: <zone>: an entity reference &z;");
}

/* An entity bomb and deep nesting stay refused by libxml2's limits (the
 * scan parses without XML_PARSE_HUGE, which igraph's own parse uses). */
Test(netfile, graphml_bombs_and_depth_are_refused)
{
    char bomb[4096], deep[8192];
    size_t k = (size_t)snprintf(bomb, sizeof bomb, "<?xml version=\"1.0\"?>\n<!DOCTYPE graphml "
                                "[<!ENTITY a0 \"lol\">\n");
    for (int i = 1; i < 10; i++)
        k += (size_t)snprintf(bomb + k, sizeof bomb - k, "<!ENTITY a%d \"&a%d;&a%d;&a%d;&a%d;"
                              "&a%d;&a%d;&a%d;&a%d;&a%d;&a%d;\">\n", i, i - 1, i - 1, i - 1,
                              i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
    snprintf(bomb + k, sizeof bomb - k, "]>\n<graphml>" GML_GRAPH "<node id=\"a\">&a9;</node>"
             "</graph></graphml>\n");
    FAILS("bomb.graphml", bomb, CS_ERR_PARSE, "@:");
    k = (size_t)snprintf(deep, sizeof deep, GML_HEAD GML_GRAPH);
    for (int i = 0; i < 300; i++)
        k += (size_t)snprintf(deep + k, sizeof deep - k, "<x>");
    snprintf(deep + k, sizeof deep - k, "\n");
    FAILS("deep.graphml", deep, CS_ERR_PARSE, "@:4: <x>: elements nested deeper than 256");
}

Test(netfile, edgelist_nul_byte_is_refused)
{
    static const char text[] = "a b\nb c\0 d e\nc d\n";
    static const char *const parts[] = {"@:2: a NUL byte", NULL};
    read_fails_len("nul.edges", text, sizeof text - 1, CS_ERR_PARSE, parts);
}

Test(netfile, out_of_range_values_name_file_and_line)
{
    FAILS("tiny.edges", "a b\nb c 1e-300\n", CS_ERR_PARSE, "@:2: link b-c",
          "below 1 bit/s");
    FAILS("huge.edges", "a b 1e300\n", CS_ERR_PARSE, "@:1: link a-b", "beyond 1e+18");
    FAILS("late.edges", "a b\nb c 1GB/s 1e300\n", CS_ERR_PARSE, "@:2: link b-c",
          "a latency of 1e+300 s is beyond");
    FAILS("soon.edges", "a b 1GB/s 1e-300\n", CS_ERR_PARSE, "@:1: link a-b",
          "neither 0 nor at least 1 fs");
    FAILS("huge.xml", SG_HEAD SG_ZONE SG_HOSTS "<link id=\"l\" bandwidth=\"1e300Bps\" "
          "latency=\"1us\" sharing_policy=\"SPLITDUPLEX\"/>\n" SG_END, CS_ERR_PARSE,
          "@:5: <link bandwidth>", "beyond");
    /* the bounds themselves read */
    const char *ok = tmpfile_with("bounds.edges", "a b 1bps 0\nb c 1e18B/s 1e6s\nc d 1GB/s 0.001ps\n");
    cs_netdesc_t *d = read_ok(ok, CS_NETFILE_AUTO);
    assert_link(d, "a", "b", 0.125, 0, 1);
    assert_link(d, "b", "c", 1e18, 1e6, 1);
    cs_netdesc_free(d);
}

/* A directory: each reader says so, and libxml2 prints nothing (it had
 * printed a stray line, then "Document is empty"). */
Test(netfile, directory_is_refused_quietly)
{
    static const char *const names[] = {"d.graphml", "d.xml", "d.edges"};
    for (size_t i = 0; i < 3; i++) {
        char path[1024], log[1100], want[1200];
        cs_netdesc_t *d = NULL;
        cs_error_t err = {0};
        snprintf(path, sizeof path, "%s/%s", tmpdir, names[i]);
        snprintf(log, sizeof log, "%s/stderr-%zu", tmpdir, i);
        cr_assert_eq(mkdir(path, 0700), 0);
        /* stderr into a file for the read */
        fflush(stderr);
        int saved = dup(2), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        cr_assert(saved >= 0 && fd >= 0);
        dup2(fd, 2);
        int rc = cs_netfile_read(&(cs_source_t){.name = path}, CS_NETFILE_AUTO, DFLT_BW,
                                 DFLT_LAT, &d, &err);
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        close(fd);
        cr_assert_eq(rc, CS_ERR_IO, "%s: rc %d: %s", names[i], rc, err.msg);
        cr_assert_null(d);
        snprintf(want, sizeof want, "%s: cannot open: it is a directory", path);
        cr_assert_not_null(strstr(err.msg, want), "%s", err.msg);
        struct stat st;
        cr_assert_eq(stat(log, &st), 0);
        cr_assert_eq(st.st_size, 0, "%s: %lld bytes on stderr", names[i], (long long)st.st_size);
    }
}

/* Every file of tests/data/net reads the same from memory as from its path
 * (the service's inline files). */
Test(netfile, memory_sources_read_as_files)
{
    static const char *const files[] = {"two-leaves.edges", "ranked.edges", "star.graphml",
                                        "zone.xml", "flat.xml", "torus.xml", "fattree.xml"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        FILE *f = fopen(data(files[i]), "rb");
        char text[1 << 16];
        cr_assert_not_null(f, "%s", files[i]);
        size_t n = fread(text, 1, sizeof text, f);
        fclose(f);
        cs_netdesc_t *a = NULL, *b = NULL;
        cs_error_t e1 = {0}, e2 = {0};
        int r1 = cs_netfile_read(&(cs_source_t){.name = data(files[i])}, CS_NETFILE_AUTO,
                                 DFLT_BW, DFLT_LAT, &a, &e1);
        int r2 = cs_netfile_read(&(cs_source_t){.name = files[i], .data = text, .len = n},
                                 CS_NETFILE_AUTO, DFLT_BW, DFLT_LAT, &b, &e2);
        cr_assert_eq(r1, r2, "%s: %s / %s", files[i], e1.msg, e2.msg);
        if (r1 == CS_OK) {
            assert_same(a, b);
            cs_netdesc_free(a);
            cs_netdesc_free(b);
        }
    }
}

/* ---- out of memory inside libxml2 --------------------------------------------------- */

/* libxml2's allocator made to fail after `xml_budget` allocations (the
 * test runs in its own process: Criterion forks one per test). */
static long xml_budget;
static void *xml_malloc(size_t n) { return xml_budget-- > 0 ? malloc(n) : NULL; }
static void *xml_realloc(void *p, size_t n) { return xml_budget-- > 0 ? realloc(p, n) : NULL; }
static char *xml_strdup(const char *s) { return xml_budget-- > 0 ? strdup(s) : NULL; }

/* Whatever allocation of libxml2 fails -- in collsim's scan, in igraph's
 * parse, in the SimGrid reader's tree -- the read ends CS_OK (it did not
 * need that many) or CS_ERR_OOM saying "out of memory", never "malformed"
 * (issue 29).  Every budget from 0 up to one that reads. */
Test(netfile, libxml2_out_of_memory_is_oom)
{
    static const char *const files[] = {"star.graphml", "zone.xml"};
    cr_assert_eq(xmlMemSetup(free, xml_malloc, xml_realloc, xml_strdup), 0);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        FILE *f = fopen(data(files[i]), "rb");
        char text[1 << 16];
        cr_assert_not_null(f, "%s", files[i]);
        size_t n = fread(text, 1, sizeof text, f);
        fclose(f);
        int oom = 0, budget;
        for (budget = 0; budget < 100000; budget++) {
            cs_netdesc_t *d = NULL;
            cs_error_t err = {0};
            xml_budget = budget;
            int rc = cs_netfile_read(&(cs_source_t){.name = files[i], .data = text, .len = n},
                                     CS_NETFILE_AUTO, DFLT_BW, DFLT_LAT, &d, &err);
            xml_budget = 1L << 40;
            if (rc == CS_OK) {
                cs_netdesc_free(d);
                break;
            }
            cr_assert_eq(rc, CS_ERR_OOM, "%s, %d allocations: rc %d: %s", files[i], budget, rc,
                         err.msg);
            cr_assert_not_null(strstr(err.msg, "out of memory"), "%s", err.msg);
            oom++;
        }
        cr_assert_lt(budget, 100000, "%s never read", files[i]);
        cr_assert_gt(oom, 0, "%s: no budget ran out", files[i]);
    }
}
