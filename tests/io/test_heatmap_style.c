/*
 * test_heatmap_style.c - heatmaps that compare (issue 32): a fixed colour
 * range (--scale) gives one utilisation one colour whatever else the
 * figure holds, on any machine (pixels read back from the PNG); --size
 * gives the asked dimensions; an animation has its frames (read back with
 * giflib); captions count ranks and network nodes in the machine's words.
 * The expected colour is viridis at (v - lo) / (hi - lo), from the scale's
 * definition, not from the figure.
 */
#include <criterion/criterion.h>

#include <cairo.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/figures.h"
#include "io/anim.h"
#include "io/figure.h"
#include "io/heatmap.h"
#include "io/plot.h"
#include "machines/machine.h"

static char dir[PATH_MAX];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/cs_hmstyle_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
    cs_plot_cleanup(); /* fontconfig's caches: no leak reports */
}

TestSuite(heatmap_style, .init = setup, .fini = teardown);

static cs_machine_t *machine(const char *spec)
{
    cs_machine_t *m = NULL;
    cs_error_t err = {0};
    cr_assert_eq(cs_machine_new(spec, &m, &err), CS_OK, "%s: %s", spec, err.msg);
    return m;
}

/* Every channel active: channel `c` at v, the one after it at `top`,
 * the others at 0.05. */
static void data_with(cs_heatmap_data_t *d, int nchans, int c, double v, double top)
{
    cs_heatmap_data_init(d, nchans, CS_HEATMAP_UTIL, 0, 1000);
    for (int i = 0; i < nchans; i++) {
        d->active[i] = 1;
        d->val[i] = 0.05;
    }
    d->val[c] = v;
    d->val[(c + 1) % nchans] = top;
}

/* The colour of the PNG at channel c's point (the middle of its lane). */
static uint32_t colour_at(const cs_heatmap_t *h, const char *png, int c)
{
    double x, y;
    cr_assert(cs_heatmap_chan_point(h, c, &x, &y));
    cairo_surface_t *s = cairo_image_surface_create_from_png(png);
    cr_assert_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS, "%s", png);
    const unsigned char *px = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    uint32_t v = *(const uint32_t *)(px + (size_t)lround(y) * stride + 4 * (size_t)lround(x)) &
                 0xffffff;
    cairo_surface_destroy(s);
    return v;
}

static double dist(uint32_t px, double t)
{
    double rgb[3], d = 0;
    cs_fig_viridis(t, rgb);
    for (int k = 0; k < 3; k++)
        d = fmax(d, fabs(((px >> (16 - 8 * k)) & 0xff) / 255.0 - rgb[k]));
    return d;
}

/* Draws machine spec with channel c at v and a neighbour at top, scale st. */
static uint32_t draw(const char *spec, double v, double top, const cs_heatmap_style_t *st,
                     const char *name)
{
    cs_machine_t *m = machine(spec);
    cs_heatmap_t *h = NULL;
    cs_heatmap_data_t d;
    cs_error_t err = {0};
    char png[PATH_MAX + 32];
    int c = 2;
    snprintf(png, sizeof png, "%s/%s.png", dir, name);
    cr_assert_eq(cs_heatmap_new(m, &h, &err), CS_OK, "%s", err.msg);
    data_with(&d, cs_topo_channels(m->topo), c, v, top);
    cr_assert_eq(cs_heatmap_write(h, &d, "t", "s", st, png, &err), CS_OK, "%s", err.msg);
    uint32_t px = colour_at(h, png, c);
    cs_heatmap_data_destroy(&d);
    cs_heatmap_free(h);
    cs_machine_free(m);
    return px;
}

Test(heatmap_style, same_scale_same_colour)
{
    cs_heatmap_style_t st = {0};
    cs_error_t err = {0};
    cr_assert_eq(cs_heatmap_parse_scale("0:80", CS_HEATMAP_UTIL, &st.lo, &st.hi, &err), CS_OK);
    cr_expect_float_eq(st.hi, 0.8, 1e-12);
    st.range_why = "colour range fixed by --scale";
    /* 40% on two figures whose busiest links differ (50% and 100%) */
    uint32_t a = draw("alphabeta:topo=line,p=8", 0.4, 0.5, &st, "a");
    uint32_t b = draw("alphabeta:topo=line,p=8", 0.4, 1.0, &st, "b");
    cr_expect_eq(a, b, "one utilisation, two colours: %06x %06x", a, b);
    cr_expect_lt(dist(a, 0.4 / 0.8), 0.05, "40%% of 0..80%% is viridis(0.5): %06x", a);
    /* the control: each figure's own range gives them different colours */
    uint32_t a0 = draw("alphabeta:topo=line,p=8", 0.4, 0.5, NULL, "a0");
    uint32_t b0 = draw("alphabeta:topo=line,p=8", 0.4, 1.0, NULL, "b0");
    cr_expect_neq(a0, b0);
    cr_expect_lt(dist(a0, 0.8), 0.05, "40%% of 0..50%%: %06x", a0);
    cr_expect_lt(dist(b0, 0.4), 0.05, "40%% of 0..100%%: %06x", b0);
}

/* compare's shared range: machines of different layouts, one colour */
Test(heatmap_style, shared_range_across_machines)
{
    cs_heatmap_style_t st = {0, 0.94, "colour range shared across the 2 machines", {0, 0, 0}, 0};
    uint32_t ring = draw("alphabeta:topo=ring,p=8", 0.47, 0.53, &st, "ring");
    uint32_t torus = draw("alphabeta:topo=torus,rows=4,cols=4", 0.47, 0.94, &st, "torus");
    cr_expect_eq(ring, torus, "%06x %06x", ring, torus);
    cr_expect_lt(dist(ring, 0.5), 0.05, "%06x", ring);
}

Test(heatmap_style, values_outside_take_the_ends)
{
    cs_heatmap_style_t st = {0.2, 0.6, "fixed", {0, 0, 0}, 0};
    cr_expect_lt(dist(draw("alphabeta:topo=line,p=8", 0.9, 0.1, &st, "hi"), 1), 0.05);
    cr_expect_lt(dist(draw("alphabeta:topo=line,p=8", 0.1, 0.9, &st, "lo"), 0), 0.05);
}

Test(heatmap_style, scale_units_and_errors)
{
    double lo, hi;
    cs_error_t err = {0};
    cr_expect_eq(cs_heatmap_parse_scale("0:4MiB", CS_HEATMAP_BYTES, &lo, &hi, &err), CS_OK);
    cr_expect_float_eq(hi, 4.0 * 1048576, 1e-6);
    cr_expect_eq(cs_heatmap_parse_scale(":4", CS_HEATMAP_K, &lo, &hi, &err), CS_OK);
    cr_expect_float_eq(lo, 1, 1e-12);
    cr_expect_eq(cs_heatmap_parse_scale("10%:50%", CS_HEATMAP_STALL, &lo, &hi, &err), CS_OK);
    cr_expect_float_eq(lo, 0.1, 1e-12);
    static const char *const bad[] = {"50:10", "0:150", "abc", "0:", "1:2:3", "0:5x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.msg[0] = '\0';
        cr_expect_neq(cs_heatmap_parse_scale(bad[i], CS_HEATMAP_UTIL, &lo, &hi, &err), CS_OK,
                      "%s accepted", bad[i]);
        cr_expect(strstr(err.msg, "--scale") != NULL, "%s: %s", bad[i], err.msg);
    }
}

/* --size: the file's pixels (PNG at 300 dpi) and points (SVG) */
Test(heatmap_style, size_dimensions)
{
    static const struct { const char *size; int pw, ph; const char *svg; } cases[] = {
        {"column", 1050, 840, "width=\"252pt\" height=\"201.6pt\""},
        {"page", 2100, 1680, "width=\"504pt\" height=\"403.2pt\""},
        {"800x600", 800, 600, "width=\"800pt\" height=\"600pt\""},
        {"3.5x3in", 1050, 900, "width=\"252pt\" height=\"216pt\""},
    };
    cs_machine_t *m = machine("alphabeta:topo=torus,rows=4,cols=4");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cs_heatmap_style_t st = {0};
        cs_error_t err = {0};
        cs_heatmap_t *h = NULL;
        cs_heatmap_data_t d;
        char png[PATH_MAX + 32], svg[PATH_MAX + 32], head[400] = "";
        cr_assert_eq(cs_heatmap_parse_size(cases[i].size, &st.size, &err), CS_OK, "%s",
                     err.msg);
        snprintf(png, sizeof png, "%s/s%zu.png", dir, i);
        snprintf(svg, sizeof svg, "%s/s%zu.svg", dir, i);
        cr_assert_eq(cs_heatmap_new(m, &h, &err), CS_OK);
        data_with(&d, cs_topo_channels(m->topo), 0, 0.5, 1);
        cr_assert_eq(cs_heatmap_write(h, &d, "allreduce/ring, 1 MiB, 16 ranks on alphabeta "
                                      "torus 4x4", NULL, &st, png, &err), CS_OK, "%s", err.msg);
        cr_assert_eq(cs_heatmap_write(h, &d, "t", NULL, &st, svg, &err), CS_OK, "%s", err.msg);
        cairo_surface_t *s = cairo_image_surface_create_from_png(png);
        cr_expect_eq(cairo_image_surface_get_width(s), cases[i].pw, "%s", cases[i].size);
        cr_expect_eq(cairo_image_surface_get_height(s), cases[i].ph, "%s", cases[i].size);
        cairo_surface_destroy(s);
        FILE *f = fopen(svg, "r");
        cr_assert_not_null(f);
        size_t n = fread(head, 1, sizeof head - 1, f);
        head[n] = '\0';
        fclose(f);
        cr_expect(strstr(head, cases[i].svg) != NULL, "%s: %s", cases[i].size, head);
        cs_heatmap_data_destroy(&d);
        cs_heatmap_free(h);
    }
    cs_machine_free(m);
    static const char *const bad[] = {"huge", "3x", "0x5", "100inx2in", "9000x100", "3.5inx200"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cs_heatmap_size_t sz;
        cs_error_t err = {0};
        cr_expect_neq(cs_heatmap_parse_size(bad[i], &sz, &err), CS_OK, "%s accepted", bad[i]);
        cr_expect(strstr(err.msg, "--size") != NULL, "%s: %s", bad[i], err.msg);
    }
}

Test(heatmap_style, animation_frames)
{
    char gif[PATH_MAX + 32];
    cs_error_t err = {0};
    snprintf(gif, sizeof gif, "%s/run.gif", dir);
    if (cs_anim_check_path(gif, &err) != CS_OK) {
        /* a build without giflib refuses, saying what is missing */
        cr_expect(strstr(err.msg, "giflib") != NULL, "%s", err.msg);
        return;
    }
    cs_machine_t *m = machine("alphabeta:topo=ring,p=8");
    cs_heatmap_t *h = NULL;
    cs_anim_t *a = NULL;
    cs_heatmap_style_t st = {0, 1, NULL, {0, 0, 0}, 0};
    cr_assert_eq(cs_heatmap_parse_size("640x512", &st.size, &err), CS_OK);
    cr_assert_eq(cs_heatmap_new(m, &h, &err), CS_OK);
    for (int i = 0; i < 7; i++) {
        cs_heatmap_data_t d;
        unsigned char *rgb;
        int w, hh;
        data_with(&d, cs_topo_channels(m->topo), i, 0.9, 0.3);
        cr_assert_eq(cs_heatmap_render_rgb(h, &d, "t", NULL, &st, &rgb, &w, &hh, &err), CS_OK);
        cr_expect_eq(w, 640);
        cr_expect_eq(hh, 512);
        if (!a)
            cr_assert_eq(cs_anim_new(gif, w, hh, 25, &a, &err), CS_OK, "%s", err.msg);
        cr_assert_eq(cs_anim_add(a, rgb, &err), CS_OK, "%s", err.msg);
        free(rgb);
        cs_heatmap_data_destroy(&d);
    }
    cr_assert_eq(cs_anim_finish(a, &err), CS_OK, "%s", err.msg);
    int frames = 0, w = 0, hh = 0;
    cr_assert_eq(cs_anim_probe(gif, &frames, &w, &hh, &err), CS_OK, "%s", err.msg);
    cr_expect_eq(frames, 7);
    cr_expect_eq(w, 640);
    cr_expect_eq(hh, 512);
    cs_heatmap_free(h);
    cs_machine_free(m);
}

/* captions count ranks and network nodes in the machine's words */
Test(heatmap_style, captions_count_what_there_is)
{
    static const char *const cases[][2] = {
        {"loggp:p=64", "loggp crossbar of 64 hosts + 1 switch"},
        {"groq:nodes=8", "groq-dragonfly of 64 TSPs in 8 nodes"},
        {"cell:chips=2", "cell eib of 16 SPEs + 8 other ramps in 2 chips"},
        {"cell:chips=1", "cell eib of 8 SPEs + 4 other ramps"},
        {"alphabeta:topo=ring,p=8", "alphabeta ring of 8 nodes"},
        {"cerebras:rows=4,cols=4", "cerebras mesh 4\xc3\x97" "4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[160];
        cs_machine_t *m = machine(cases[i][0]);
        cs_figures_machine_short(m, buf, sizeof buf);
        cr_expect_str_eq(buf, cases[i][1], "%s", cases[i][0]);
        cs_machine_free(m);
    }
}

/* The count the captions and the summary share (cs_machine_count_text):
 * singular words for one node, no groups said for one group, and a short
 * buffer truncated and terminated rather than overrun. */
Test(heatmap_style, machine_count_text)
{
    static const char *const cases[][2] = {
        {"loggp:p=1", "1 host + 1 switch"},
        {"loggp:p=64", "64 hosts + 1 switch"},
        {"groq:nodes=1", "8 TSPs"},                    /* one K8 node: no "in 1 nodes" */
        {"groq:nodes=8", "64 TSPs in 8 nodes"},
        {"groq:racks=1", "72 TSPs in 9 nodes"},        /* a rack is 9 nodes of 8 TSPs */
        {"cell:chips=1", "8 SPEs + 4 other ramps"},
        {"alphabeta:topo=ring,p=8", "8 nodes"},
        {"cerebras:rows=4,cols=4", "16 nodes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[96];
        cs_machine_t *m = machine(cases[i][0]);
        cr_expect_str_eq(cs_machine_count_text(m, buf, sizeof buf), cases[i][1], "%s",
                         cases[i][0]);
        cs_machine_free(m);
    }
    cs_machine_t *m = machine("loggp:p=64");
    char small[8];
    memset(small, 'x', sizeof small);
    cs_machine_count_text(m, small, sizeof small);
    cr_expect_str_eq(small, "64 host"); /* 7 characters and the NUL */
    cs_machine_free(m);
}

/* Nothing runs off a column-wide figure: no ink in the outer 4 pixels of
 * the left and right edges, with the long titles and footers of the
 * machines whose layouts label nodes outside rings (the Cell's footer and
 * its PPE.0 once ran off both edges). */
Test(heatmap_style, column_size_keeps_everything_on_the_page)
{
    static const char *const specs[] = {"cell:chips=2", "cns1:rings=2",
                                        "alphabeta:topo=torus,rows=4,cols=4",
                                        "alphabeta:topo=ring,p=16", "groq:nodes=2"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        cs_machine_t *m = machine(specs[i]);
        cs_heatmap_style_t st = {0};
        cs_error_t err = {0};
        cs_heatmap_t *h = NULL;
        cs_heatmap_data_t d;
        char png[PATH_MAX + 32];
        cr_assert_eq(cs_heatmap_parse_size("column", &st.size, &err), CS_OK, "%s", err.msg);
        snprintf(png, sizeof png, "%s/col%zu.png", dir, i);
        cr_assert_eq(cs_heatmap_new(m, &h, &err), CS_OK, "%s", err.msg);
        data_with(&d, cs_topo_channels(m->topo), 0, 0.5, 1);
        cr_assert_eq(cs_heatmap_write(h, &d, "allreduce/ring, 256 KiB, 16 ranks on cell eib of "
                                      "16 SPEs + 8 other ramps in 2 chips",
                                      "link utilisation, whole run 0 \xe2\x80\x93 50.23 \xc2\xb5s"
                                      " \xc2\xb7 cell EIB + BIF engine \xc2\xb7 hottest "
                                      "BIF.0\xe2\x86\x92" "BIF.1: 52.8%", &st, png, &err),
                     CS_OK, "%s", err.msg);
        cairo_surface_t *s = cairo_image_surface_create_from_png(png);
        cr_assert_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS, "%s", png);
        int w = cairo_image_surface_get_width(s), hh = cairo_image_surface_get_height(s);
        int stride = cairo_image_surface_get_stride(s);
        const unsigned char *px = cairo_image_surface_get_data(s);
        long edge = 0;
        for (int y = 0; y < hh; y++)
            for (int x = 0; x < w; x++)
                if (x < 4 || x >= w - 4)
                    edge += (*(const uint32_t *)(px + (size_t)y * stride + 4 * (size_t)x) &
                             0xffffff) != 0xffffff;
        cr_expect_eq(edge, 0, "%s: %ld drawn pixels at the left or right edge", specs[i], edge);
        cairo_surface_destroy(s);
        cs_heatmap_data_destroy(&d);
        cs_heatmap_free(h);
        cs_machine_free(m);
    }
}
