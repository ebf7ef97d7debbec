/*
 * test_heatmap.c - link heatmaps (src/io/heatmap.c) and the time buckets
 * they are drawn from.
 *
 * Every layout is rendered to PNG and SVG from synthetic data whose hottest
 * channel is known: the PNG must have the figure's size, be far from blank,
 * and show the top of the colour scale where the layout says that channel
 * is drawn (the pixel read back); the SVG must be well-formed XML.  Real
 * runs check what the data says: on a line of 8 with messages 1->6 and
 * 4->7 the shared links have k = 2 and the others k = 1; windows and frames
 * add up to the run's totals, for the channel engine and for the machines'
 * own engines.
 */
#include <criterion/criterion.h>

#include <cairo.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/exec.h"
#include "coll/coll.h"
#include "io/figure.h"
#include "io/goal.h"
#include "io/heatmap.h"
#include "io/plot.h"
#include "machines/machine.h"
#include "xml_check.h"

static char tmpdir[PATH_MAX];

static void setup(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/collsim-heatmap-XXXXXX", base && *base ? base : "/tmp");
    cr_assert_not_null(mkdtemp(tmpdir), "mkdtemp: %s", strerror(errno));
}

/* COLLSIM_TEST_KEEP=1 keeps the figures (their folder is printed), to look
 * at them. */
static void teardown(void)
{
    DIR *d = getenv("COLLSIM_TEST_KEEP") ? NULL : opendir(tmpdir);
    if (getenv("COLLSIM_TEST_KEEP"))
        fprintf(stderr, "figures kept in %s\n", tmpdir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            char path[PATH_MAX + 256];
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
            unlink(path);
        }
        closedir(d);
        rmdir(tmpdir);
    }
    cs_plot_cleanup();
}

TestSuite(heatmap, .init = setup, .fini = teardown, .timeout = 300);

static char *path_in_tmp(const char *name)
{
    char *p = malloc(strlen(tmpdir) + strlen(name) + 2);
    cr_assert_not_null(p);
    sprintf(p, "%s/%s", tmpdir, name);
    return p;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s: %s", path, strerror(errno));
    size_t cap = 65536, n = 0, got;
    char *buf = malloc(cap + 1);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            buf = realloc(buf, (cap *= 2) + 1);
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* ---- machines for every layout ------------------------------------------------- */

/* A hand-built machine around a custom topology (the shapes of machines
 * that may not be in this build, and graphs no machine has). */
typedef struct test_machine {
    cs_machine_t m; /* first: the type's layout entry casts back */
    int32_t *groups;
    cs_layout_kind_t layout; /* what the machine says */
} test_machine_t;

static void test_layout(const cs_machine_t *m, cs_machine_layout_t *out)
{
    out->kind = ((const test_machine_t *)m)->layout;
}

static const cs_machine_type_t test_type = {
    .name = "test",
    .layout = test_layout,
};

static test_machine_t *custom_machine(cs_topo_t *t, cs_layout_kind_t layout)
{
    test_machine_t *tm = calloc(1, sizeof *tm);
    tm->layout = layout;
    tm->m.type = &test_type;
    tm->m.spec = (char *)"test";
    tm->m.topo = t;
    tm->m.tick_seconds = 1e-9;
    return tm;
}

static void custom_free(test_machine_t *tm)
{
    cs_topo_free(tm->m.topo);
    free(tm->groups);
    free(tm);
}

/* Two rings of 6 joined by one link between their nodes 3 and 9: the
 * Cell's two EIBs and the BIF, in small. */
static test_machine_t *eib_shape(void)
{
    cs_topo_t *t = cs_topo_new_custom(12, "test-eib");
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 6; i++)
            cs_topo_add_link(t, 6 * r + i, 6 * r + (i + 1) % 6);
    cs_topo_add_link(t, 3, 9);
    return custom_machine(t, CS_LAYOUT_RINGS);
}

/* A Dragonfly in small: 5 groups of 4 fully connected nodes, one link
 * between every pair of groups. */
static test_machine_t *dragonfly_shape(void)
{
    int G = 5, a = 4;
    cs_topo_t *t = cs_topo_new_custom(G * a, "test-dragonfly");
    for (int g = 0; g < G; g++)
        for (int i = 0; i < a; i++)
            for (int j = i + 1; j < a; j++)
                cs_topo_add_link(t, g * a + i, g * a + j);
    for (int g = 0; g < G; g++)
        for (int h = g + 1; h < G; h++)
            cs_topo_add_link(t, g * a + (h - 1) % a, h * a + g % a);
    test_machine_t *tm = custom_machine(t, CS_LAYOUT_DRAGONFLY);
    tm->groups = malloc((size_t)G * a * sizeof *tm->groups);
    for (int i = 0; i < G * a; i++)
        tm->groups[i] = i / a;
    tm->m.node_group = tm->groups;
    tm->m.ngroups = G;
    return tm;
}

/* The Petersen graph: no machine has it; igraph lays it out. */
static test_machine_t *petersen(void)
{
    cs_topo_t *t = cs_topo_new_custom(10, "petersen");
    for (int i = 0; i < 5; i++) {
        cs_topo_add_link(t, i, (i + 1) % 5);
        cs_topo_add_link(t, i, i + 5);
        cs_topo_add_link(t, 5 + i, 5 + (i + 2) % 5);
    }
    return custom_machine(t, CS_LAYOUT_GRAPH);
}

/* ---- checks --------------------------------------------------------------------- */

/* Synthetic data: most channels active with values below 0.8, every 7th
 * idle, and channel `hot` at 1. */
static void synthetic(cs_heatmap_data_t *d, int nchans, int hot)
{
    cs_heatmap_data_init(d, nchans, CS_HEATMAP_UTIL, 0, 1000);
    for (int c = 0; c < nchans; c++) {
        d->active[c] = c % 7 != 3;
        d->val[c] = d->active[c] ? 0.8 * ((c * 37) % 100) / 100.0 : 0;
    }
    d->active[hot] = 1;
    d->val[hot] = 1;
}

static uint32_t pixel(cairo_surface_t *s, int x, int y)
{
    const unsigned char *data = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    return *(const uint32_t *)(data + (size_t)y * stride + 4 * (size_t)x) & 0xffffff;
}

static double rgb_dist(uint32_t px, const double rgb[3])
{
    double d = 0;
    for (int k = 0; k < 3; k++) {
        double v = ((px >> (16 - 8 * k)) & 0xff) / 255.0 - rgb[k];
        d = fmax(d, fabs(v));
    }
    return d;
}

/* The PNG: its size, how much is drawn, and whether a pixel within 2 of
 * (x, y) has colour rgb (within 0.05 per component). */
static void check_png(const char *path, double x, double y, const double rgb[3],
                      const char *what)
{
    cairo_surface_t *s = cairo_image_surface_create_from_png(path);
    cr_assert_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS, "%s: %s", path,
                 cairo_status_to_string(cairo_surface_status(s)));
    int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    cr_expect_eq(w, (int)CS_HEATMAP_WIDTH, "%s: width", what);
    cr_expect_eq(h, (int)CS_HEATMAP_HEIGHT, "%s: height", what);
    long ink = 0;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++)
            ink += pixel(s, i, j) != 0xffffff;
    cr_expect_gt(ink, (long)w * h / 50, "%s: only %ld drawn pixels", what, ink);
    cr_expect_lt(ink, (long)w * h * 9 / 10, "%s: %ld drawn pixels", what, ink);
    double best = 1;
    for (int dy = -2; dy <= 2; dy++)
        for (int dx = -2; dx <= 2; dx++) {
            int px = (int)floor(x) + dx, py = (int)floor(y) + dy;
            if (px >= 0 && py >= 0 && px < w && py < h)
                best = fmin(best, rgb_dist(pixel(s, px, py), rgb));
        }
    cr_expect_lt(best, 0.05, "%s: no pixel of the expected colour near (%.1f, %.1f): off by %.3f",
                 what, x, y, best);
    cairo_surface_destroy(s);
}

static void check_svg(const char *path, const char *what)
{
    size_t len;
    char *doc = read_all(path, &len);
    const char *why = xml_check(doc);
    cr_expect_null(why, "%s: SVG not well formed: %s", what, why ? why : "");
    cr_expect_not_null(strstr(doc, "<svg"), "%s: no <svg> element", what);
    free(doc);
}

/* Renders m with its hottest channel `hot` to PNG and SVG and checks both. */
static void render_layout(const cs_machine_t *m, int hot, const char *want_layout,
                          const char *what)
{
    cs_heatmap_t *h = NULL;
    cs_heatmap_data_t d;
    cs_error_t err = {0};
    char name[128], *png, *svg;
    double x, y, hot_rgb[3];
    int nchans = cs_topo_channels(m->topo);
    cr_assert_eq(cs_heatmap_new(m, &h, &err), CS_OK, "%s: %s", what, err.msg);
    cr_expect_str_eq(cs_heatmap_layout_name(h), want_layout, "%s", what);
    synthetic(&d, nchans, hot);
    snprintf(name, sizeof name, "%s.png", what);
    png = path_in_tmp(name);
    snprintf(name, sizeof name, "%s.svg", what);
    svg = path_in_tmp(name);
    cr_assert_eq(cs_heatmap_write(h, &d, what, NULL, 0, png, &err), CS_OK, "%s: %s", what,
                 err.msg);
    cr_assert_eq(cs_heatmap_chan_point(h, hot, &x, &y), 1, "%s: channel %d not drawn", what, hot);
    cs_heatmap_hot_rgb(hot_rgb);
    check_png(png, x, y, hot_rgb, what);
    cr_assert_eq(cs_heatmap_write(h, &d, what, NULL, 0, svg, &err), CS_OK, "%s: %s", what,
                 err.msg);
    check_svg(svg, what);
    cs_heatmap_data_destroy(&d);
    cs_heatmap_free(h);
    free(png);
    free(svg);
}

static void render_spec(const char *spec, int hot, const char *layout, const char *what)
{
    cs_machine_t *m = NULL;
    cs_error_t err = {0};
    cr_assert_eq(cs_machine_new(spec, &m, &err), CS_OK, "%s: %s", spec, err.msg);
    render_layout(m, hot < 0 ? cs_topo_channels(m->topo) / 2 + 1 : hot, layout, what);
    cs_machine_free(m);
}

/* ---- every layout ------------------------------------------------------------------ */

Test(heatmap, grids)
{
    render_spec("alphabeta:topo=line,p=8", 5, "grid", "line8");
    render_spec("alphabeta:topo=line,p=100", -1, "grid", "line100-snake");
    render_spec("alphabeta:topo=mesh,rows=4,cols=6", -1, "grid", "mesh4x6");
    render_spec("alphabeta:topo=torus,rows=8,cols=8", -1, "grid", "torus8x8");
    /* the wrap channel of row 0 (0 -> 7 and back) is drawn as stubs */
    render_spec("alphabeta:topo=torus,rows=8,cols=8", 14, "grid", "torus8x8-wrap");
    render_spec("cerebras:rows=8,cols=8", -1, "grid", "cerebras8x8");
    render_spec("cerebras:rows=1,cols=512", -1, "grid", "cerebras1x512");
}

Test(heatmap, cylinder_in_bands)
{
    /* cns1:rings=2 is a 2 x 32 cylinder: drawn in bands of columns */
    render_spec("cns1:rings=2", -1, "grid", "cns1-rings2");
    render_spec("cns1:rings=8", -1, "grid", "cns1-rings8");
}

Test(heatmap, circles)
{
    render_spec("alphabeta:topo=ring,p=16", -1, "ring", "ring16");
    render_spec("alphabeta:topo=ring,p=200", -1, "ring", "ring200");
    render_spec("alphabeta:topo=complete,p=8", -1, "circle", "complete8");
    render_spec("alphabeta:topo=hypercube,p=16", -1, "circle", "hypercube16");
}

Test(heatmap, full_wafer_in_tiles)
{
    cs_machine_t *m = NULL;
    cs_error_t err = {0};
    cr_assert_eq(cs_machine_new("cerebras:wafer", &m, &err), CS_OK, "%s", err.msg);
    int nchans = cs_topo_channels(m->topo);
    cr_assert_gt(nchans, 3000000);
    /* a link near the middle of the wafer */
    int mid = cs_topo_find_channel(m->topo, 425 * 1000 + 500, 425 * 1000 + 501);
    render_layout(m, mid, "tiles", "wafer");
    cs_machine_free(m);
}

Test(heatmap, eib_rings)
{
    test_machine_t *tm = eib_shape();
    /* the link between the rings, and a ring link */
    render_layout(&tm->m, cs_topo_find_channel(tm->m.topo, 9, 3), "rings", "eib-shape-bridge");
    render_layout(&tm->m, cs_topo_find_channel(tm->m.topo, 7, 6), "rings", "eib-shape-ring");
    custom_free(tm);
    int n;
    const cs_machine_type_t *const *types = cs_machine_types(&n);
    for (int i = 0; i < n; i++)
        if (!strcmp(types[i]->name, "cell")) {
            render_spec("cell:chips=2", -1, "rings", "cell2");
            render_spec("cell:chips=1", -1, "rings", "cell1");
        }
}

Test(heatmap, dragonfly)
{
    test_machine_t *tm = dragonfly_shape();
    /* a global link (matrix cell), then a link inside group 2 (the panel) */
    render_layout(&tm->m, cs_topo_find_channel(tm->m.topo, 1 * 4 + 1, 2 * 4 + 1), "dragonfly",
                  "dragonfly-shape-global");
    render_layout(&tm->m, cs_topo_find_channel(tm->m.topo, 9, 10), "dragonfly",
                  "dragonfly-shape-local");
    custom_free(tm);
    int n;
    const cs_machine_type_t *const *types = cs_machine_types(&n);
    for (int i = 0; i < n; i++)
        if (!strcmp(types[i]->name, "groq"))
            render_spec("groq:nodes=4", -1, "dragonfly", "groq4");
}

Test(heatmap, igraph_layout_for_other_graphs)
{
    test_machine_t *tm = petersen();
    render_layout(&tm->m, 7, "graph", "petersen");
    custom_free(tm);
    /* a star (LogGP's crossbar): the hub in the middle */
    cs_topo_t *t = cs_topo_new_custom(13, "star");
    for (int i = 0; i < 12; i++)
        cs_topo_add_link(t, i, 12);
    tm = custom_machine(t, CS_LAYOUT_GRAPH);
    render_layout(&tm->m, 9, "graph", "star");
    custom_free(tm);
}

/* The layout is the machine's word, whatever the topology looks like. */
Test(heatmap, machine_layout_hint)
{
    test_machine_t *tm = eib_shape();
    tm->layout = CS_LAYOUT_GRAPH;
    render_layout(&tm->m, 3, "graph", "eib-as-graph");
    tm->layout = CS_LAYOUT_CIRCLE;
    render_layout(&tm->m, 3, "circle", "eib-as-circle");
    custom_free(tm);
}

/* ---- 3-D lattices as slices ------------------------------------------------------- */

/* Lanes drawn in the idle grey in the SVG of m with every channel idle:
 * each stroke of an idle channel is one path with that stroke colour
 * (arrowheads are fills, the colour bar's idle swatch too). */
static int idle_lanes(const char *spec, const char *want_layout)
{
    cs_machine_t *m = NULL;
    cs_heatmap_t *h = NULL;
    cs_heatmap_data_t d;
    cs_error_t err = {0};
    char name[160];
    size_t len;
    cr_assert_eq(cs_machine_new(spec, &m, &err), CS_OK, "%s: %s", spec, err.msg);
    cr_assert_eq(cs_heatmap_new(m, &h, &err), CS_OK, "%s: %s", spec, err.msg);
    cr_expect_str_eq(cs_heatmap_layout_name(h), want_layout, "%s", spec);
    cs_heatmap_data_init(&d, cs_topo_channels(m->topo), CS_HEATMAP_UTIL, 0, 1000);
    snprintf(name, sizeof name, "idle-%d.svg", cs_topo_channels(m->topo));
    char *svg = path_in_tmp(name);
    cr_assert_eq(cs_heatmap_write(h, &d, spec, NULL, 0, svg, &err), CS_OK, "%s", err.msg);
    char *doc = read_all(svg, &len);
    int n = 0;
    for (const char *p = doc; (p = strstr(p, "stroke:rgb(84%,84%,84%)")) != NULL; p++)
        n++;
    /* and every channel is drawn somewhere */
    for (int c = 0; c < cs_topo_channels(m->topo); c++) {
        double x, y;
        cr_expect_eq(cs_heatmap_chan_point(h, c, &x, &y), 1, "%s: channel %d not drawn", spec, c);
    }
    free(doc);
    free(svg);
    cs_heatmap_data_destroy(&d);
    cs_heatmap_free(h);
    cs_machine_free(m);
    return n;
}

/* Every channel of a 3-D torus or mesh is exactly one lane.  Counts by
 * hand (dims lists z, y, x): a torus of sides > 2 has 3 links per node,
 * 2 directions each; a mesh N/n * (n - 1) links per dimension of size n; a
 * torus side of 2 one link per line. */
Test(heatmap, torus3d_every_channel_once)
{
    cr_expect_eq(idle_lanes("net:gen=torus,dims=4x4x4", "slices"), 3 * 64 * 2);
    cr_expect_eq(idle_lanes("net:gen=torus,dims=8x8x8", "slices"), 3 * 512 * 2);
    cr_expect_eq(idle_lanes("net:gen=torus,dims=3x4x5", "slices"), 3 * 60 * 2);
    /* mesh 3x4x5: x 12 lines of 4 links, y 15 of 3, z 20 of 2 */
    cr_expect_eq(idle_lanes("net:gen=mesh,dims=3x4x5", "slices"), 2 * (48 + 45 + 40));
    /* 2x3x4: x 6 rings of 4, y 8 rings of 3, z 12 single links */
    cr_expect_eq(idle_lanes("net:gen=torus,dims=2x3x4", "slices"), 2 * (24 + 24 + 12));
    /* the count can tell: a 2-D torus draws each wrap channel as two stubs,
     * 4 x 4: 32 links = 64 channels, 16 of them wraps */
    cr_expect_eq(idle_lanes("net:gen=torus,dims=4x4", "grid"), 64 + 16);
    /* four dimensions: a graph */
    cr_expect_eq(idle_lanes("net:gen=torus,dims=3x3x3x3", "graph"), 4 * 81 * 2);
}

/* Where things are on 4x4x4 (2 x 2 slices of 4 x 4): a z mark up-right of
 * its node for z + 1, down-left for z - 1 (the wrap to the last slice);
 * slice 1 right of slice 0, slice 2 below it. */
Test(heatmap, torus3d_slices_placement)
{
    cs_machine_t *m = NULL;
    cs_heatmap_t *h = NULL;
    cs_error_t err = {0};
    cr_assert_eq(cs_machine_new("net:gen=torus,dims=4x4x4", &m, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_heatmap_new(m, &h, &err), CS_OK, "%s", err.msg);
    const cs_topo_t *t = m->topo;
    double x01, y01, xup, yup, xdn, ydn, x1, y1, x2, y2;
    cr_assert(cs_heatmap_chan_point(h, cs_topo_find_channel(t, 0, 1), &x01, &y01));
    cr_assert(cs_heatmap_chan_point(h, cs_topo_find_channel(t, 0, 16), &xup, &yup));
    cr_assert(cs_heatmap_chan_point(h, cs_topo_find_channel(t, 0, 48), &xdn, &ydn));
    cr_assert(cs_heatmap_chan_point(h, cs_topo_find_channel(t, 16, 17), &x1, &y1));
    cr_assert(cs_heatmap_chan_point(h, cs_topo_find_channel(t, 32, 33), &x2, &y2));
    cr_expect_lt(yup, y01, "z+1 mark above the x lane");
    cr_expect_gt(xup, xdn, "z+1 mark right of the z-1 mark");
    cr_expect_gt(ydn, yup, "z-1 mark below the z+1 mark");
    cr_expect(fabs(y1 - y01) < 1e-9 && x1 > x01 + 100, "slice 1 right of slice 0");
    cr_expect(fabs(x2 - x01) < 1e-9 && y2 > y01 + 100, "slice 2 below slice 0");
    cs_heatmap_free(h);
    cs_machine_free(m);
    /* the hot lane shows in its colour: an x lane, an x wrap stub, z marks */
    render_spec("net:gen=torus,dims=4x4x4", 0, "slices", "torus444-x");
    m = NULL;
    cr_assert_eq(cs_machine_new("net:gen=torus,dims=4x4x4", &m, &err), CS_OK, "%s", err.msg);
    render_layout(m, cs_topo_find_channel(m->topo, 3, 0), "slices", "torus444-wrap");
    render_layout(m, cs_topo_find_channel(m->topo, 5, 21), "slices", "torus444-zup");
    render_layout(m, cs_topo_find_channel(m->topo, 5, 53), "slices", "torus444-zwrap");
    cs_machine_free(m);
    render_spec("net:gen=mesh,dims=8x8x8", -1, "slices", "mesh888");
}

/* ---- real runs ------------------------------------------------------------------------ */

static const char *two_messages =
    "num_ranks 8\n"
    "rank 0 {\n}\n"
    "rank 1 {\ns: send 100000b to 6 tag 0\n}\n"
    "rank 2 {\n}\nrank 3 {\n}\n"
    "rank 4 {\ns: send 100000b to 7 tag 0\n}\n"
    "rank 5 {\n}\n"
    "rank 6 {\nr: recv 100000b from 1 tag 0\n}\n"
    "rank 7 {\nr: recv 100000b from 4 tag 0\n}\n";

static void run_two(cs_net_mode_t mode, cs_tick_t bucket, cs_machine_t **m, cs_program_t **p,
                    cs_exec_result_t *res)
{
    cs_error_t err = {0};
    cs_exec_env_t env;
    cs_exec_opts_t o;
    FILE *f = fmemopen((void *)two_messages, strlen(two_messages), "r");
    cr_assert_eq(cs_machine_new("alphabeta:topo=line,p=8", m, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_goal_read_stream(f, "two.goal", p, &err), CS_OK, "%s", err.msg);
    fclose(f);
    cs_machine_exec_env(*m, &env);
    cs_exec_opts_default(&o);
    o.mode = mode;
    o.bucket_width = bucket;
    o.max_buckets = 64;
    cr_assert_eq(cs_exec_run(&env, *p, &o, res, &err), CS_OK, "%s", err.msg);
}

/* {1 -> 6, 4 -> 7} on a line of 8: k = 2 on 4->5 and 5->6, k = 1 on the
 * other links of the two paths, nothing elsewhere; the hottest lanes are
 * drawn in the scale's top colour, the others in its bottom one. */
Test(heatmap, shared_links_have_k_2)
{
    for (int mode = 0; mode < 2; mode++) {
        cs_machine_t *m;
        cs_program_t *p;
        cs_exec_result_t res;
        cs_heatmap_data_t d;
        cs_heatmap_t *h;
        cs_error_t err = {0};
        run_two((cs_net_mode_t)mode, 0, &m, &p, &res);
        int nchans = cs_topo_channels(m->topo);
        cr_assert_eq(cs_heatmap_data_from_net(res.net, nchans, CS_HEATMAP_K, 0, res.finish, 1,
                                              &d, &err), CS_OK, "%s", err.msg);
        int on_path = 0;
        for (int c = 0; c < nchans; c++) {
            int u = cs_topo_channel_src(m->topo, c), v = cs_topo_channel_dst(m->topo, c);
            int want = v == u + 1 && u >= 1 ? (u == 4 || u == 5 ? 2 : 1) : 0;
            cr_expect_eq(d.active[c], want > 0, "%s: %d->%d active", cs_net_mode_name(mode), u, v);
            if (want) {
                cr_expect_eq(d.val[c], want, "%s: k on %d->%d", cs_net_mode_name(mode), u, v);
                on_path++;
            }
        }
        cr_expect_eq(on_path, 6);
        cr_assert_eq(cs_heatmap_new(m, &h, &err), CS_OK, "%s", err.msg);
        char *png = path_in_tmp("k.png");
        cr_assert_eq(cs_heatmap_write(h, &d, "k", NULL, 0, png, &err), CS_OK, "%s", err.msg);
        double x, y, top[3], bottom[3];
        cs_heatmap_hot_rgb(top);
        cs_fig_viridis(0, bottom);
        cs_heatmap_chan_point(h, cs_topo_find_channel(m->topo, 4, 5), &x, &y);
        check_png(png, x, y, top, "k = 2 on 4->5");
        cs_heatmap_chan_point(h, cs_topo_find_channel(m->topo, 1, 2), &x, &y);
        check_png(png, x, y, bottom, "k = 1 on 1->2");
        free(png);
        cs_heatmap_free(h);
        cs_heatmap_data_destroy(&d);
        cs_exec_result_destroy(&res);
        cs_program_free(p);
        cs_machine_free(m);
    }
}

/* Windows resolve to the bucket width; frames add up to the whole run. */
Test(heatmap, windows_and_frames_add_up)
{
    cs_machine_t *m;
    cs_program_t *p;
    cs_exec_result_t res;
    cs_error_t err = {0};
    run_two(CS_NET_FLUID, 1, &m, &p, &res);
    int nchans = cs_topo_channels(m->topo), c45 = cs_topo_find_channel(m->topo, 4, 5);
    cs_tick_t T = res.finish, w = cs_net_bucket_width(res.net);
    cr_assert_gt(cs_net_bucket_count(res.net), 1);
    /* utilisation of 4->5 in the second half: busy all along */
    cs_heatmap_data_t d;
    cr_assert_eq(cs_heatmap_data_from_net(res.net, nchans, CS_HEATMAP_UTIL, T / 2, T, 0, &d, &err),
                 CS_OK, "%s", err.msg);
    cr_expect_gt(d.val[c45], 0.99);
    cr_expect_leq(d.val[c45], 1.0 + 1e-9);
    cs_heatmap_data_destroy(&d);
    /* ten frames: bytes add up to the totals, within rounding */
    for (int c = 0; c < nchans; c++) {
        double sum = 0;
        for (int i = 0; i < 10; i++) {
            cs_tick_t t0 = T * i / 10, t1 = T * (i + 1) / 10;
            cr_assert_eq(cs_heatmap_data_from_net(res.net, nchans, CS_HEATMAP_BYTES, t0, t1, 0,
                                                  &d, &err), CS_OK);
            sum += d.val[c];
            cs_heatmap_data_destroy(&d);
        }
        cr_expect_leq(fabs(sum - (double)cs_net_chan_stats(res.net, c)->bytes), 10,
                      "channel %d: frames %g, total %lld (bucket %lld)", c, sum,
                      (long long)cs_net_chan_stats(res.net, c)->bytes, (long long)w);
    }
    cr_expect_eq(cs_heatmap_data_from_net(res.net, nchans, CS_HEATMAP_UTIL, 5, 5, 0, &d, &err),
                 CS_ERR_RANGE);
    cs_heatmap_data_destroy(&d);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
    cs_machine_free(m);
}

/* The machines' own engines feed the buckets too: over the whole run they
 * hold exactly the totals. */
static void engine_buckets(const char *spec, const char *coll, int64_t bytes)
{
    cs_machine_t *m = NULL;
    cs_error_t err = {0};
    cs_exec_env_t env;
    cs_exec_opts_t o;
    cs_exec_result_t res;
    cs_program_t *p = NULL;
    const cs_coll_algo_t *al;
    cs_coll_kind_t kind;
    cr_assert_eq(cs_machine_new(spec, &m, &err), CS_OK, "%s", err.msg);
    int P = cs_machine_nodes(m);
    cr_assert_eq(cs_coll_parse(coll, &kind, &err), CS_OK);
    cr_assert_eq(cs_coll_find(kind, "ring", &al, &err), CS_OK);
    cs_coll_hints_t hints = {0};
    cs_coll_args_t args = {kind, P, bytes, 0, m->net.unit_bytes, &hints, NULL, 0};
    cr_assert_eq(cs_coll_build(al, &args, &p, &err), CS_OK, "%s", err.msg);
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    o.bucket_width = 1;
    o.max_buckets = 128;
    cr_assert_eq(cs_exec_run(&env, p, &o, &res, &err), CS_OK, "%s: %s", spec, err.msg);
    const cs_chanrec_t *rec = cs_net_recorder(res.net);
    cr_assert_gt(cs_chanrec_count(rec), 1, "%s: the engine recorded no buckets", spec);
    int moved = 0;
    for (int c = 0; c < cs_topo_channels(m->topo); c++) {
        cs_chan_stats_t w;
        const cs_chan_stats_t *s = cs_net_chan_stats(res.net, c);
        cs_chanrec_window(rec, c, 0, res.finish + cs_chanrec_width(rec), &w);
        cr_expect_eq(w.busy, s->busy, "%s: channel %d busy", spec, c);
        cr_expect_eq(w.bytes, s->bytes, "%s: channel %d bytes", spec, c);
        cr_expect_eq(w.peak_k > 0, s->peak_k > 0, "%s: channel %d k", spec, c);
        moved += s->bytes > 0;
    }
    cr_expect_gt(moved, 0);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
    cs_machine_free(m);
}

Test(heatmap, machine_engines_record_buckets)
{
    engine_buckets("cerebras:rows=4,cols=4", "allreduce", 4096);
    engine_buckets("cns1:rings=2,ring=4", "allgather", 512);
}

/* ---- errors and determinism ------------------------------------------------------------ */

Test(heatmap, errors_name_the_problem)
{
    cs_error_t err = {0};
    cs_heatmap_metric_t mt;
    cr_expect_eq(cs_heatmap_check_path("fig.gif", &err), CS_ERR_USAGE);
    cr_expect_not_null(strstr(err.msg, "unknown heatmap format '.gif'"), "%s", err.msg);
    cr_expect_eq(cs_heatmap_check_path("fig", &err), CS_ERR_USAGE);
    cr_expect_eq(cs_heatmap_parse_metric("heat", &mt, &err), CS_ERR_USAGE);
    cr_expect_not_null(strstr(err.msg, "util, bytes, stall, k"), "%s", err.msg);
    cr_expect_eq(cs_heatmap_parse_metric("stall", &mt, &err), CS_OK);
    cr_expect_eq(mt, CS_HEATMAP_STALL);

    cs_machine_t *m = NULL;
    cs_heatmap_t *h = NULL;
    cs_heatmap_data_t d;
    cr_assert_eq(cs_machine_new("alphabeta:topo=ring,p=4", &m, &err), CS_OK);
    cr_assert_eq(cs_heatmap_new(m, &h, &err), CS_OK);
    synthetic(&d, cs_topo_channels(m->topo), 1);
    cr_expect_eq(cs_heatmap_write(h, &d, "t", NULL, 0, "/nonexistent/dir/x.png", &err), CS_ERR_IO);
    cr_expect_not_null(strstr(err.msg, "/nonexistent/dir/x.png"), "%s", err.msg);
    cs_heatmap_data_destroy(&d);
    cs_heatmap_free(h);
    cs_machine_free(m);
}

Test(heatmap, same_data_same_bytes)
{
    cs_machine_t *m = NULL;
    cs_heatmap_t *h = NULL;
    cs_heatmap_data_t d;
    cs_error_t err = {0};
    cr_assert_eq(cs_machine_new("alphabeta:topo=torus,rows=4,cols=4", &m, &err), CS_OK);
    cr_assert_eq(cs_heatmap_new(m, &h, &err), CS_OK);
    synthetic(&d, cs_topo_channels(m->topo), 3);
    const char *names[] = {"a.svg", "b.svg", "a.png", "b.png"};
    char *paths[4];
    for (int i = 0; i < 4; i++) {
        paths[i] = path_in_tmp(names[i]);
        cr_assert_eq(cs_heatmap_write(h, &d, "same", "sub", 0, paths[i], &err), CS_OK, "%s",
                     err.msg);
    }
    for (int i = 0; i < 4; i += 2) {
        size_t la, lb;
        char *a = read_all(paths[i], &la), *b = read_all(paths[i + 1], &lb);
        cr_expect(la == lb && memcmp(a, b, la) == 0, "%s and %s differ", names[i], names[i + 1]);
        free(a);
        free(b);
    }
    char *pdf = path_in_tmp("c.pdf");
    cr_assert_eq(cs_heatmap_write(h, &d, "same", "sub", 0, pdf, &err), CS_OK, "%s", err.msg);
    size_t lp;
    char *doc = read_all(pdf, &lp);
    cr_expect(lp > 5 && !memcmp(doc, "%PDF-", 5), "not a PDF");
    free(doc);
    free(pdf);
    for (int i = 0; i < 4; i++)
        free(paths[i]);
    cs_heatmap_data_destroy(&d);
    cs_heatmap_free(h);
    cs_machine_free(m);
}
