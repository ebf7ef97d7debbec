/*
 * figure.c - the parts of collsim's cairo figures that every figure shares
 * (figure.h): text, colours, number labels and output.
 *
 * Output: every format is first written into memory and then to the file,
 * so that all file errors are reported the same way (path and errno) and
 * the SVG can be made deterministic: cairo names its groups after a
 * process-wide surface counter ("surface7"), which would make the same
 * figure differ with the number of surfaces created before it; those ids
 * are renumbered here in order of appearance.  PDF gets no creation date.
 *
 * Text uses the cairo "toy" font API with the fontconfig family
 * "sans-serif".
 */
#include "io/figure.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/outfile.h"
#include "io/png_fast.h"

/* ---- text ------------------------------------------------------------------- */

void cs_fig_font(cairo_t *cr, double size, int bold)
{
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

double cs_fig_text_width(cairo_t *cr, const char *s)
{
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    return e.x_advance;
}

double cs_fig_cap_height(cairo_t *cr)
{
    cairo_text_extents_t e;
    cairo_text_extents(cr, "0", &e);
    return -e.y_bearing;
}

void cs_fig_text(cairo_t *cr, double x, double y, const char *s, double ax, double ay)
{
    double w = cs_fig_text_width(cr, s), cap = cs_fig_cap_height(cr);
    cairo_move_to(cr, x - ax * w, y + (1 - ay) * cap);
    cairo_show_text(cr, s);
}

void cs_fig_title(cairo_t *cr, double x, double y, const char *s, double size, int bold,
                  double maxw)
{
    cs_fig_font(cr, size, bold);
    while (size > 8 && cs_fig_text_width(cr, s) > maxw) {
        size -= 1;
        cs_fig_font(cr, size, bold);
    }
    cs_fig_text(cr, x, y, s, 0.5, 0.5);
}

/* ---- colours ------------------------------------------------------------------ */

/* Okabe & Ito, "Color Universal Design" (2008): distinguishable with every
 * common colour-vision deficiency.  Ordered so that the first lines have
 * the most contrast on white; the pale yellow comes last. */
static const unsigned char palette[CS_FIG_NPALETTE][3] = {
    {0x00, 0x72, 0xB2}, /* blue */
    {0xD5, 0x5E, 0x00}, /* vermillion */
    {0x00, 0x9E, 0x73}, /* bluish green */
    {0xCC, 0x79, 0xA7}, /* reddish purple */
    {0xE6, 0x9F, 0x00}, /* orange */
    {0x56, 0xB4, 0xE9}, /* sky blue */
    {0x00, 0x00, 0x00}, /* black */
    {0xF0, 0xE4, 0x42}, /* yellow */
};

void cs_fig_palette(int k, double rgb[3])
{
    const unsigned char *c = palette[((k % CS_FIG_NPALETTE) + CS_FIG_NPALETTE) % CS_FIG_NPALETTE];
    for (int i = 0; i < 3; i++)
        rgb[i] = c[i] / 255.0;
}

/* matplotlib's viridis (van der Walt and Smith, 2015) sampled at 0, 0.1,
 * ..., 1; linear interpolation between the samples stays within a few
 * units of 255 of the full table. */
static const unsigned char viridis[11][3] = {
    {0x44, 0x01, 0x54}, {0x48, 0x24, 0x75}, {0x41, 0x44, 0x87}, {0x35, 0x5F, 0x8D},
    {0x2A, 0x78, 0x8E}, {0x21, 0x91, 0x8C}, {0x22, 0xA8, 0x84}, {0x44, 0xBF, 0x70},
    {0x7A, 0xD1, 0x51}, {0xBD, 0xDF, 0x26}, {0xFD, 0xE7, 0x25},
};

void cs_fig_viridis(double t, double rgb[3])
{
    if (!(t > 0))
        t = 0;
    if (t > 1)
        t = 1;
    double x = t * 10;
    int i = (int)floor(x);
    if (i >= 10)
        i = 9;
    double f = x - i;
    for (int c = 0; c < 3; c++)
        rgb[c] = ((1 - f) * viridis[i][c] + f * viridis[i + 1][c]) / 255.0;
}

/* ---- numbers -------------------------------------------------------------------- */

double cs_fig_nice_step(double span, int want)
{
    if (!(span > 0))
        return 1;
    double raw = span / want, mag = pow(10.0, floor(log10(raw))), norm = raw / mag;
    return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
}

void cs_fig_si_label(double v, double step, char *buf, size_t len)
{
    static const char *const si[] = {"", "k", "M", "G", "T"};
    double a = fabs(v);
    if (a < step * 1e-9)
        v = a = 0; /* no "-0" or "1e-17" from rounding */
    if (a == 0) {
        snprintf(buf, len, "0");
        return;
    }
    if (a < 1e-3 || a >= 1e15) {
        snprintf(buf, len, "%g", v);
        return;
    }
    int g = a < 1 ? 0 : (int)floor(log10(a) / 3 + 1e-9);
    double unit = pow(1000.0, g);
    int decimals = (int)ceil(-log10(step / unit) - 1e-9);
    if (decimals < 0)
        decimals = 0;
    snprintf(buf, len, "%.*f%s", decimals, v / unit, si[g]);
}

double cs_fig_snap(double v) { return floor(v) + 0.5; }

/* ---- output ----------------------------------------------------------------------- */

typedef enum fig_format { FIG_PNG, FIG_SVG, FIG_PDF } fig_format_t;

static int fig_format(const char *path, const char *kind, fig_format_t *out, cs_error_t *err)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash))
        return cs_error_set(err, CS_ERR_USAGE, "%s: no file extension to choose the %s "
                            "format; use .png, .svg or .pdf", path, kind);
    if (!strcasecmp(dot, ".png"))
        *out = FIG_PNG;
    else if (!strcasecmp(dot, ".svg"))
        *out = FIG_SVG;
    else if (!strcasecmp(dot, ".pdf"))
        *out = FIG_PDF;
    else
        return cs_error_set(err, CS_ERR_USAGE, "%s: unknown %s format '%s'; use .png, .svg "
                            "or .pdf", path, kind, dot);
    return CS_OK;
}

int cs_fig_check_path(const char *path, const char *kind, cs_error_t *err)
{
    fig_format_t f;
    return fig_format(path, kind, &f, err);
}

/* The output in memory, filled by cairo's stream callbacks. */
typedef struct fig_buf {
    unsigned char *data;
    size_t len, cap;
} fig_buf_t;

static void buf_put(fig_buf_t *b, const void *data, size_t n)
{
    if (b->len + n > b->cap) {
        while (b->len + n > b->cap)
            b->cap = b->cap ? 2 * b->cap : 65536;
        b->data = cs_realloc(b->data, b->cap);
    }
    memcpy(b->data + b->len, data, n);
    b->len += n;
}

static cairo_status_t buf_write(void *closure, const unsigned char *data, unsigned int n)
{
    buf_put(closure, data, n);
    return CAIRO_STATUS_SUCCESS;
}

/* Renumbers cairo's ids (id="surface7", href="#surface7", and the same for
 * "source", "image", "pattern", "mask" and "clip" ids, which some cairo
 * versions also take from process-wide counters) 1, 2, ... per prefix in
 * order of first appearance. */
static void svg_canonical(fig_buf_t *b)
{
    static const char *const keys[] = {"surface", "source", "image", "pattern", "mask",
                                       "clip"};
    enum { NKEYS = sizeof keys / sizeof keys[0] };
    fig_buf_t out = {0};
    long *seen[NKEYS] = {0};
    int nseen[NKEYS] = {0};
    size_t i = 0;
    while (i < b->len) {
        int key = -1;
        size_t j = 0, klen = 0;
        if (b->data[i] == '"' || b->data[i] == '#')
            for (int k = 0; k < NKEYS && key < 0; k++) {
                klen = strlen(keys[k]);
                j = i + 1 + klen;
                if (j < b->len && !memcmp(b->data + i + 1, keys[k], klen) && b->data[j] >= '0' &&
                    b->data[j] <= '9')
                    key = k;
            }
        if (key < 0) {
            buf_put(&out, b->data + i, 1);
            i++;
            continue;
        }
        long v = 0;
        int k;
        char num[32];
        while (j < b->len && b->data[j] >= '0' && b->data[j] <= '9' && v < 100000000L)
            v = v * 10 + (b->data[j++] - '0');
        for (k = 0; k < nseen[key] && seen[key][k] != v; k++)
            ;
        if (k == nseen[key]) {
            seen[key] = cs_realloc(seen[key], (size_t)(nseen[key] + 1) * sizeof **seen);
            seen[key][nseen[key]++] = v;
        }
        buf_put(&out, b->data + i, 1 + klen);
        snprintf(num, sizeof num, "%d", k + 1);
        buf_put(&out, num, strlen(num));
        i = j;
    }
    for (int k = 0; k < NKEYS; k++)
        free(seen[k]);
    free(b->data);
    *b = out;
}

/* Whole or absent (core/outfile.h): a temporary renamed at the end. */
static int fig_save(const char *path, const fig_buf_t *b, cs_error_t *err)
{
    return cs_outfile_save(NULL, path, b->data, b->len, err);
}

static void buf_sink(void *closure, const unsigned char *data, size_t n)
{
    buf_put(closure, data, n);
}

int cs_fig_write(const char *path, const char *kind, double w, double h,
                 void (*draw)(cairo_t *cr, void *ctx), void *ctx, const char *title,
                 cs_error_t *err)
{
    return cs_fig_write_as(path, kind, w, h, draw, ctx, title, 0, err);
}

int cs_fig_write_as(const char *path, const char *kind, double w, double h,
                    void (*draw)(cairo_t *cr, void *ctx), void *ctx, const char *title,
                    int png_fast, cs_error_t *err)
{
    fig_format_t fmt;
    fig_buf_t buf = {0};
    cairo_surface_t *s;
    cairo_status_t st;
    int rc;

    if ((rc = fig_format(path, kind, &fmt, err)))
        return rc;
    if (fmt == FIG_PNG) {
        s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)w, (int)h);
    } else if (fmt == FIG_SVG) {
        s = cairo_svg_surface_create_for_stream(buf_write, &buf, w, h);
    } else {
        s = cairo_pdf_surface_create_for_stream(buf_write, &buf, w, h);
        /* an empty date leaves /CreationDate out: same figure, same bytes */
        cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATE_DATE, "");
        if (title && title[0])
            cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_TITLE, title);
        cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "collsim");
    }
    cairo_t *cr = cairo_create(s);
    draw(cr, ctx);
    st = cairo_status(cr);
    cairo_destroy(cr);
    if (st == CAIRO_STATUS_SUCCESS && fmt == FIG_PNG && png_fast && cs_png_fast_available()) {
        cairo_surface_flush(s);
        if ((rc = cs_png_fast_encode(cairo_image_surface_get_data(s),
                                     cairo_image_surface_get_width(s),
                                     cairo_image_surface_get_height(s),
                                     cairo_image_surface_get_stride(s), buf_sink, &buf, err))) {
            cairo_surface_destroy(s);
            free(buf.data);
            cs_error_prefix(err, "%s", path);
            return rc;
        }
    } else if (st == CAIRO_STATUS_SUCCESS && fmt == FIG_PNG) {
        st = cairo_surface_write_to_png_stream(s, buf_write, &buf);
    }
    cairo_surface_finish(s);
    if (st == CAIRO_STATUS_SUCCESS)
        st = cairo_surface_status(s);
    cairo_surface_destroy(s);
    if (st != CAIRO_STATUS_SUCCESS) {
        free(buf.data);
        return cs_error_set(err, CS_ERR_IO, "%s: cannot draw the %s: cairo: %s", path,
                            kind, cairo_status_to_string(st));
    }
    if (fmt == FIG_SVG)
        svg_canonical(&buf);
    rc = fig_save(path, &buf, err);
    free(buf.data);
    return rc;
}
