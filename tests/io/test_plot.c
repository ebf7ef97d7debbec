/*
 * test_plot.c - the line-plot module (src/io/plot.c).
 *
 * Plots are written into a per-test temporary directory and read back: the
 * PNG through cairo (size, how much is drawn, the series' colours), the
 * SVG through a small well-formedness checker (tags nest and close; the
 * build has no XML library), the PDF by its header.  Writing twice must
 * give the same bytes, and what a log axis cannot show must not crash.
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

#include "io/plot.h"
#include "xml_check.h"

static char tmpdir[PATH_MAX];

static void setup(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/collsim-plot-XXXXXX", base && *base ? base : "/tmp");
    cr_assert_not_null(mkdtemp(tmpdir), "mkdtemp: %s", strerror(errno));
}

static void teardown(void)
{
    DIR *d = opendir(tmpdir);
    if (!d)
        return;
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

TestSuite(plot, .init = setup, .fini = teardown, .timeout = 60);

static char *path_in_tmp(const char *name)
{
    char *p = malloc(strlen(tmpdir) + strlen(name) + 2);
    cr_assert_not_null(p);
    sprintf(p, "%s/%s", tmpdir, name);
    return p;
}

/* The whole file; *len gets its size (files may hold NUL bytes). */
static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s: %s", path, strerror(errno));
    size_t cap = 65536, n = 0, got;
    char *buf = malloc(cap + 1);
    cr_assert_not_null(buf);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            cr_assert_not_null(buf);
        }
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Time against size for two algorithms, the shape of a sweep. */
static cs_plot_t *two_series(void)
{
    double x[8], ring[8], tree[8];
    for (int i = 0; i < 8; i++) {
        x[i] = 8.0 * pow(4.0, i);
        ring[i] = 14e6 + 7 * x[i] * 1000;
        tree[i] = 3e6 + 3 * x[i] * 1000;
    }
    cs_plot_t *p = cs_plot_new("allreduce on a line", "vector size (bytes)", "time (ticks)", 1,
                               1);
    cs_plot_add_series(p, "ring", 8, x, ring);
    cs_plot_add_series(p, "rdb", 8, x, tree);
    return p;
}

static void write_ok(const cs_plot_t *p, const char *path)
{
    cs_error_t err = {0};
    int rc = cs_plot_write(p, path, &err);
    cr_assert_eq(rc, CS_OK, "%s: %s", path, err.msg);
}

/* Pixels of a PNG read back with cairo: how many are not white, and how
 * many have exactly the colour rgb (0xRRGGBB). */
static void png_counts(const char *path, int *w, int *h, long *ink, long *rgb_hits,
                       uint32_t rgb)
{
    cairo_surface_t *s = cairo_image_surface_create_from_png(path);
    cr_assert_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS, "%s: %s", path,
                 cairo_status_to_string(cairo_surface_status(s)));
    *w = cairo_image_surface_get_width(s);
    *h = cairo_image_surface_get_height(s);
    int stride = cairo_image_surface_get_stride(s);
    const unsigned char *data = cairo_image_surface_get_data(s);
    *ink = *rgb_hits = 0;
    for (int y = 0; y < *h; y++)
        for (int x = 0; x < *w; x++) {
            uint32_t px = *(const uint32_t *)(data + (size_t)y * stride + 4 * (size_t)x);
            *ink += (px & 0xffffff) != 0xffffff;
            *rgb_hits += (px & 0xffffff) == rgb;
        }
    cairo_surface_destroy(s);
}

Test(plot, png_has_size_and_ink)
{
    cs_plot_t *p = two_series();
    char *path = path_in_tmp("fig.png");
    int w, h;
    long ink, blue, vermillion;
    write_ok(p, path);
    png_counts(path, &w, &h, &ink, &blue, 0x0072B2);
    png_counts(path, &w, &h, &ink, &vermillion, 0xD55E00);
    cr_expect_eq(w, 900);
    cr_expect_eq(h, 600);
    /* frame, grid, text, two lines: a few percent of the figure, far from
     * all of it (a black or unpainted background) */
    cr_expect_gt(ink, 900 * 600 / 100, "only %ld drawn pixels", ink);
    cr_expect_lt(ink, 900 * 600 / 2, "%ld drawn pixels: background not white?", ink);
    /* the first two Okabe-Ito colours: one line each */
    cr_expect_gt(blue, 200, "first series: %ld blue pixels", blue);
    cr_expect_gt(vermillion, 200, "second series: %ld vermillion pixels", vermillion);
    free(path);
    cs_plot_free(p);
}

/* The checker itself can fail. */
Test(plot, xml_check_rejects_broken_documents)
{
    cr_expect_null(xml_check("<?xml version=\"1.0\"?>\n<svg><g id=\"a\"><path d=\"M 0 0\"/></g>"
                             "</svg>\n"));
    cr_expect_not_null(xml_check("<svg></svg>"));
    cr_expect_not_null(xml_check("<?xml version=\"1.0\"?><svg><g></svg></g>"));
    cr_expect_not_null(xml_check("<?xml version=\"1.0\"?><svg><g>"));
    cr_expect_not_null(xml_check("<?xml version=\"1.0\"?><svg/><svg/>"));
}

Test(plot, svg_is_well_formed_and_deterministic)
{
    cs_plot_t *p = two_series();
    char *a = path_in_tmp("a.svg"), *b = path_in_tmp("b.svg"), *png = path_in_tmp("x.png");
    size_t alen, blen;
    write_ok(p, a);
    /* other cairo surfaces in between move cairo's global surface counter,
     * which the SVG output must not show */
    write_ok(p, png);
    write_ok(p, b);
    char *da = read_all(a, &alen), *db = read_all(b, &blen);
    const char *why = xml_check(da);
    cr_expect_null(why, "a.svg is not well formed: %s", why ? why : "");
    cr_expect_not_null(strstr(da, "<svg"), "no <svg element");
    cr_expect_not_null(strstr(da, "viewBox=\"0 0 900 600\""), "not 900 x 600");
    cr_expect_not_null(strstr(da, "</svg>"), "no </svg>");
    cr_expect_eq(alen, blen, "same plot, different sizes: %zu and %zu", alen, blen);
    cr_expect(alen == blen && memcmp(da, db, alen) == 0, "same plot, different SVG bytes");
    free(da);
    free(db);
    free(a);
    free(b);
    free(png);
    cs_plot_free(p);
}

Test(plot, pdf_and_png_are_deterministic)
{
    const char *names[2][2] = {{"a.pdf", "b.pdf"}, {"a.png", "b.png"}};
    cs_plot_t *p = two_series();
    for (int f = 0; f < 2; f++) {
        char *a = path_in_tmp(names[f][0]), *b = path_in_tmp(names[f][1]);
        size_t alen, blen;
        write_ok(p, a);
        write_ok(p, b);
        char *da = read_all(a, &alen), *db = read_all(b, &blen);
        if (f == 0) {
            cr_expect_eq(strncmp(da, "%PDF-", 5), 0, "not a PDF");
            cr_expect_null(strstr(da, "/CreationDate"), "the PDF embeds a date");
        }
        cr_expect(alen == blen && memcmp(da, db, alen) == 0, "%s: different bytes", names[f][0]);
        free(da);
        free(db);
        free(a);
        free(b);
    }
    cs_plot_free(p);
}

/* Zero, negative, NaN and infinite values are left out on log axes; a
 * series with nothing to show, a single point and an empty plot still
 * give a figure. */
Test(plot, unshowable_points_are_skipped)
{
    const double x[6] = {0, 1, 10, -5, 100, 1000};
    const double y[6] = {5, 0, 20, 30, NAN, INFINITY};
    const double one_x[1] = {64}, one_y[1] = {1e6};
    const double neg[2] = {-1, -2};
    char *path = path_in_tmp("odd.png");
    int w, h;
    long ink, hits;

    cs_plot_t *p = cs_plot_new("odd", "x", "y", 1, 1);
    cs_plot_add_series(p, "holes", 6, x, y);
    cs_plot_add_series(p, "single", 1, one_x, one_y);
    cs_plot_add_series(p, "nothing", 2, neg, neg);
    cs_plot_add_series(p, "empty", 0, NULL, NULL);
    write_ok(p, path);
    png_counts(path, &w, &h, &ink, &hits, 0x0072B2);
    cr_expect_eq(w, 900);
    cr_expect_gt(hits, 0, "the shown point of the first series is drawn");
    cs_plot_free(p);

    p = cs_plot_new(NULL, NULL, NULL, 1, 1);
    write_ok(p, path);
    png_counts(path, &w, &h, &ink, &hits, 0x0072B2);
    cr_expect_gt(ink, 0, "empty axes are still drawn");
    cs_plot_free(p);
    free(path);
}

/* Linear axes take negative values and zero. */
Test(plot, linear_axes)
{
    const double x[5] = {-2, -1, 0, 1, 2}, y[5] = {4, 1, 0, 1, 4};
    char *path = path_in_tmp("lin.svg");
    size_t len;
    cs_plot_t *p = cs_plot_new("parabola", "x", "y", 0, 0);
    cs_plot_add_series(p, "x^2", 5, x, y);
    write_ok(p, path);
    char *d = read_all(path, &len);
    const char *why = xml_check(d);
    cr_expect_null(why, "%s", why ? why : "");
    free(d);
    free(path);
    cs_plot_free(p);
}

Test(plot, format_follows_extension)
{
    cs_error_t err = {0};
    cr_expect_eq(cs_plot_check_path("a.png", &err), CS_OK);
    cr_expect_eq(cs_plot_check_path("dir.v2/Fig.SVG", &err), CS_OK);
    cr_expect_eq(cs_plot_check_path("x.Pdf", &err), CS_OK);
    cr_expect_eq(cs_plot_check_path("fig.gif", &err), CS_ERR_USAGE);
    cr_expect_not_null(strstr(err.msg, "fig.gif"), "%s", err.msg);
    cr_expect_not_null(strstr(err.msg, ".png, .svg or .pdf"), "%s", err.msg);
    cr_expect_eq(cs_plot_check_path("dir.v2/fig", &err), CS_ERR_USAGE, "a dot in a folder is "
                 "not an extension");
    cr_expect_not_null(strstr(err.msg, "dir.v2/fig"), "%s", err.msg);
}

Test(plot, write_errors_name_the_path)
{
    cs_error_t err = {0};
    cs_plot_t *p = two_series();
    char *gif = path_in_tmp("fig.gif");
    char *nodir = path_in_tmp("no/such/dir/fig.png");
    cr_expect_eq(cs_plot_write(p, gif, &err), CS_ERR_USAGE);
    cr_expect_not_null(strstr(err.msg, gif), "%s", err.msg);
    cr_expect_neq(access(gif, F_OK), 0, "nothing written for an unknown format");
    cr_expect_eq(cs_plot_write(p, nodir, &err), CS_ERR_IO);
    cr_expect_not_null(strstr(err.msg, nodir), "%s", err.msg);
    cr_expect_not_null(strstr(err.msg, "No such file or directory"), "%s", err.msg);
    free(gif);
    free(nodir);
    cs_plot_free(p);
}

/* After cs_plot_cleanup, plots (with text) are drawn as before. */
Test(plot, cleanup_then_plot_again)
{
    cs_plot_t *p = two_series();
    char *a = path_in_tmp("a.svg"), *b = path_in_tmp("b.svg");
    size_t alen, blen;
    write_ok(p, a);
    cs_plot_cleanup();
    write_ok(p, b);
    cs_plot_cleanup();
    char *da = read_all(a, &alen), *db = read_all(b, &blen);
    cr_expect(alen == blen && memcmp(da, db, alen) == 0, "the same SVG after a cleanup");
    free(da);
    free(db);
    free(a);
    free(b);
    cs_plot_free(p);
}

/* The y axis label must clear the tick labels.  Read back from the PNG: in
 * the rows of the frame (the leftmost column dark over 200 rows or more),
 * the columns left of the tick marks that hold ink form separate groups -
 * the upright label first, then (a gap of 4 blank columns or more on) the
 * tick labels.  A label drawn over the tick labels makes the first group
 * wider than one line of 16-point text (22 columns allow for ascenders,
 * descenders and antialiasing) or leaves no gap after it. */
static void expect_ylabel_clear(const char *path)
{
    cairo_surface_t *s = cairo_image_surface_create_from_png(path);
    cr_assert_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS, "%s", path);
    int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    int stride = cairo_image_surface_get_stride(s);
    const unsigned char *data = cairo_image_surface_get_data(s);
#define PX(x, y) (*(const uint32_t *)(data + (size_t)(y) * stride + 4 * (size_t)(x)))
#define DARK(p) ((((p) >> 16) & 0xff) < 0x80 && (((p) >> 8) & 0xff) < 0x80 && ((p) & 0xff) < 0x80)
#define INK(p) ((((p) >> 16) & 0xff) < 0xc0 || (((p) >> 8) & 0xff) < 0xc0 || ((p) & 0xff) < 0xc0)
    int frame = -1, y0 = h, y1 = -1;
    for (int x = 0; x < w / 2 && frame < 0; x++) {
        int dark = 0;
        for (int y = 0; y < h; y++)
            dark += DARK(PX(x, y));
        if (dark >= 200)
            frame = x;
    }
    cr_assert_geq(frame, 0, "%s: no frame found", path);
    for (int y = 0; y < h; y++)
        if (DARK(PX(frame, y))) {
            y0 = y < y0 ? y : y0;
            y1 = y;
        }
    int first_lo = -1, first_hi = -1, next = -1, blank = 0;
    for (int x = 0; x < frame - 7; x++) {
        int ink = 0;
        for (int y = y0; y <= y1 && !ink; y++)
            ink = INK(PX(x, y));
        if (!ink) {
            blank++;
            continue;
        }
        if (first_lo < 0)
            first_lo = x;
        else if (blank >= 4 && next < 0)
            next = x;
        if (next < 0)
            first_hi = x;
        blank = 0;
    }
#undef PX
#undef DARK
#undef INK
    cairo_surface_destroy(s);
    cr_assert_geq(first_lo, 0, "%s: no label left of the frame (at %d)", path, frame);
    cr_expect_gt(next, 0, "%s: the label (from column %d) runs into the tick labels (frame at %d)",
                 path, first_lo, frame);
    cr_expect_leq(first_hi - first_lo + 1, 22, "%s: the label's columns %d..%d are wider than "
                  "one line of text", path, first_lo, first_hi);
}

Test(plot, ylabel_clears_tick_labels)
{
    cs_error_t err = {0};
    /* the compare chart of the page's screenshot: "time (µs)" beside "400" */
    const char *short_labels[] = {"loggp:p=8", "alphabeta:topo=ring,p=8"};
    const double us[] = {412.5, 96.25};
    /* many long categories: slanted labels push the plot's left edge */
    const char *long_labels[] = {"alphabeta:topo=torus,rows=16,cols=16", "loggp:p=64",
                                 "net:topo=fattree,k=8", "cell", "groq", "cerebras:rows=8",
                                 "cns1:p=64", "alphabeta:topo=hypercube,p=64"};
    const double many[] = {1e6, 2e6, 3e6, 4e6, 5e6, 6e6, 7e6, 8e6};
    char *bars = path_in_tmp("bars.png"), *slanted = path_in_tmp("slanted.png");
    char *lines = path_in_tmp("lines.png");
    cr_assert_eq(cs_plot_write_bars(bars, "allreduce/ring, 1 MiB", "time (µs)", 2, short_labels,
                                    us, NULL, 0, CS_AXIS_PLAIN, &err), CS_OK, "%s", err.msg);
    expect_ylabel_clear(bars);
    cr_assert_eq(cs_plot_write_bars(slanted, NULL, "time (ticks)", 8, long_labels, many, NULL, 0,
                                    CS_AXIS_PLAIN, &err), CS_OK, "%s", err.msg);
    expect_ylabel_clear(slanted);
    cs_plot_t *p = two_series();
    write_ok(p, lines);
    expect_ylabel_clear(lines);
    cs_plot_free(p);
    free(bars);
    free(slanted);
    free(lines);
}

/* Pixels within 3 of colour rgb in every channel. */
static long png_near(const char *path, uint32_t rgb)
{
    cairo_surface_t *s = cairo_image_surface_create_from_png(path);
    cr_assert_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS, "%s", path);
    int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    int stride = cairo_image_surface_get_stride(s);
    const unsigned char *data = cairo_image_surface_get_data(s);
    long n = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint32_t px = *(const uint32_t *)(data + (size_t)y * stride + 4 * (size_t)x);
            int ok = 1;
            for (int sh = 0; sh <= 16; sh += 8) {
                int d = (int)((px >> sh) & 0xff) - (int)((rgb >> sh) & 0xff);
                ok &= d >= -3 && d <= 3;
            }
            n += ok;
        }
    cairo_surface_destroy(s);
    return n;
}

/* "NAME (model)" right after NAME is that series' model: drawn in the same
 * colour, translucent (0.45 over white), wide and dashed, under the
 * simulated line, so where they agree both show; it takes no palette
 * colour of its own (the next series is still the second colour). */
Test(plot, model_is_drawn_under_its_series_in_its_colour)
{
    double x[8], ring[8], rdb[8];
    for (int i = 0; i < 8; i++) {
        x[i] = 8.0 * pow(4.0, i);
        ring[i] = 14e6 + 7 * x[i] * 1000;
        rdb[i] = 3e6 + 3 * x[i] * 1000;
    }
    cs_plot_t *p = cs_plot_new("models", "bytes", "time", 1, 1);
    cs_plot_add_series(p, "ring", 8, x, ring);
    cs_plot_add_series(p, "ring (model)", 8, x, ring);
    cs_plot_add_series(p, "rdb", 8, x, rdb);
    char *path = path_in_tmp("model.png");
    write_ok(p, path);
    /* Okabe-Ito blue (0, 114, 178) at alpha 0.45 over white */
    uint32_t tint = (uint32_t)lround(255 - 0.45 * 255) << 16 |
                    (uint32_t)lround(255 - 0.45 * (255 - 114)) << 8 |
                    (uint32_t)lround(255 - 0.45 * (255 - 178));
    long blue = png_near(path, 0x0072B2), halo = png_near(path, tint);
    long vermillion = png_near(path, 0xD55E00), green = png_near(path, 0x009E73);
    cr_expect_gt(blue, 200, "the simulated line is hidden: %ld blue pixels", blue);
    cr_expect_gt(halo, 200, "the model does not show beside its line: %ld tinted pixels", halo);
    cr_expect_gt(vermillion, 200, "the series after the model is not the second colour");
    cr_expect_eq(green, 0, "the model took a colour of its own (%ld green pixels)", green);
    free(path);
    cs_plot_free(p);
}

/* The x of the frame's right edge on row y (the rightmost dark pixel). */
static int frame_right(const char *path, int y)
{
    cairo_surface_t *s = cairo_image_surface_create_from_png(path);
    cr_assert_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS, "%s", path);
    int w = cairo_image_surface_get_width(s), stride = cairo_image_surface_get_stride(s);
    const unsigned char *data = cairo_image_surface_get_data(s);
    int right = -1;
    for (int x = 0; x < w; x++) {
        uint32_t px = *(const uint32_t *)(data + (size_t)y * stride + 4 * (size_t)x);
        if (((px >> 16) & 0xff) < 0x40 && ((px >> 8) & 0xff) < 0x40 && (px & 0xff) < 0x40)
            right = x;
    }
    cairo_surface_destroy(s);
    return right;
}

/* The legend goes inside only where it hides nothing: two rising curves
 * leave the upper left free (the frame keeps the full width, 870); level
 * lines all the way across at nine heights leave no corner free, so the
 * legend goes outside and the plot narrows. */
Test(plot, legend_inside_only_where_it_hides_nothing)
{
    cs_plot_t *p = two_series();
    char *free_corner = path_in_tmp("corner.png"), *full = path_in_tmp("full.png");
    write_ok(p, free_corner);
    cs_plot_free(p);
    p = cs_plot_new("level lines", "x", "y", 0, 0);
    for (int k = 0; k < 9; k++) {
        double x[41], y[41];
        for (int i = 0; i < 41; i++) {
            x[i] = i;
            y[i] = k;
        }
        char name[32];
        snprintf(name, sizeof name, "level %d", k);
        cs_plot_add_series(p, name, 41, x, y);
    }
    write_ok(p, full);
    cs_plot_free(p);
    /* a row low in the plot area, below any legend */
    int inside = frame_right(free_corner, 480), outside = frame_right(full, 480);
    cr_expect(inside >= 860 && inside <= 875, "free corner: frame ends at %d", inside);
    cr_expect_lt(outside, 800, "no free corner: the frame still ends at %d", outside);
    free(free_corner);
    free(full);
}

/* ".csv" writes the plotted numbers instead of a picture: every finite
 * point of every series, exact when read back (%.17g), names quoted as CSV
 * needs; a bar chart's labels and values likewise. */
Test(plot, csv_writes_the_plotted_numbers)
{
    double x[3] = {8, 64, 512}, y[3] = {1.0 / 3, NAN, 2.5e9};
    cs_plot_t *p = cs_plot_new("t", "x", "y", 1, 1);
    cs_plot_add_series(p, "ring, P=8", 3, x, y);
    cs_plot_add_series(p, "rdb", 1, x, y);
    char *path = path_in_tmp("data.csv");
    write_ok(p, path);
    size_t len;
    char *text = read_all(path, &len);
    double third;
    cr_assert_eq(sscanf(strstr(text, "\"ring, P=8\",8,") + 14, "%lf", &third), 1, "%s", text);
    cr_expect_eq(third, 1.0 / 3, "exact: %.17g", third);
    cr_expect_str_eq(text, "series,x,y\n"
                           "\"ring, P=8\",8,0.33333333333333331\n"
                           "\"ring, P=8\",512,2500000000\n"
                           "rdb,8,0.33333333333333331\n");
    free(text);
    cs_plot_free(p);

    const char *labels[2] = {"a", "b\"c"};
    double v[2] = {12.5e9, 3};
    cs_error_t err = {0};
    cr_assert_eq(cs_plot_write_bars(path, "t", "y", 2, labels, v, NULL, 0, CS_AXIS_BYTES_PER_S,
                                    &err), CS_OK, "%s", err.msg);
    text = read_all(path, &len);
    cr_expect_str_eq(text, "label,y\na,12500000000\n\"b\"\"c\",3\n");
    free(text);
    free(path);
    cr_expect_eq(cs_plot_check_path("Fig.CSV", &err), CS_OK);
    cr_expect_eq(cs_plot_check_path("fig.gif", &err), CS_ERR_USAGE);
    cr_expect_not_null(strstr(err.msg, ".csv"), "%s", err.msg);
}
