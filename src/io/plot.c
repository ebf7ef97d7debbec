/*
 * plot.c - line plots and bar charts for figures in papers, drawn with
 * cairo (plot.h).
 *
 * One drawing routine per kind paints on any cairo surface; figure.c
 * chooses the surface (PNG, SVG, PDF) from the file's extension, shares the
 * text and colour helpers and makes the output deterministic.
 *
 * Layout, in figure units (px or pt): the title on top, the plot area in
 * the middle with a frame, outward ticks on the left and bottom axes, a
 * light grid at major ticks (fainter at minor ones), the legend in the
 * first inside corner (or side) where it hides no drawn point or line, else
 * outside on the right, the plot area narrowing to make room.  A model
 * series ("NAME (model)" right after NAME) is dashed in its simulated
 * series' colour, without markers, so both stay visible where they agree.  A bar chart puts its
 * categories along the bottom (labels slanted when they do not fit) and
 * each bar's value above it.
 */
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/outfile.h"
#include "io/axis.h"
#include "io/csv.h"
#include "io/figure.h"
#include "io/plot.h"

#define PLOT_W 900.0
#define PLOT_H 600.0
#define PLOT_PAD 0.05        /* share of the data span added on each side */
#define PLOT_MAX_TICKS CS_AXIS_MAX_TICKS
#define PLOT_MINOR_DECADES 12 /* above this, no ticks between decades */
#define PLOT_TITLE_SIZE 20.0
#define PLOT_LABEL_SIZE 16.0
#define PLOT_TICK_SIZE 14.0
/* the y axis label's room, its line (PLOT_LABEL_SIZE: caps and
 * descenders) and a gap of 14 to the tick labels */
#define PLOT_YLABEL_ROOM (PLOT_LABEL_SIZE + 14)
#define PLOT_LEGEND_SIZE 14.0
#define PLOT_LINE_WIDTH 2.0
#define PLOT_MARKER_R 4.5
#define PLOT_NSHAPES 7

typedef cs_axis_tick_t plot_tick_t;

typedef struct plot_series {
    char *name;
    size_t n;
    double *x, *y;
    int pen;   /* colour and marker shape */
    int model; /* the model of the series before it: dashed, no markers */
} plot_series_t;

struct cs_plot {
    char *title, *xlabel, *ylabel;
    int logx, logy;
    cs_axis_unit_t yunit;
    plot_series_t *s;
    int ns, cap;
};

/* ---- plot object ---------------------------------------------------------- */

static char *plot_strdup(const char *s)
{
    return cs_strdup(s ? s : "");
}

cs_plot_t *cs_plot_new(const char *title, const char *xlabel, const char *ylabel, int logx,
                       int logy)
{
    cs_plot_t *p = cs_calloc(1, sizeof *p);
    p->title = plot_strdup(title);
    p->xlabel = plot_strdup(xlabel);
    p->ylabel = plot_strdup(ylabel);
    p->logx = logx != 0;
    p->logy = logy != 0;
    return p;
}

void cs_plot_add_series(cs_plot_t *p, const char *name, size_t n, const double *x,
                        const double *y)
{
    plot_series_t *s;
    if (p->ns == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 8;
        p->s = cs_realloc(p->s, (size_t)p->cap * sizeof *p->s);
    }
    s = &p->s[p->ns++];
    s->name = plot_strdup(name);
    /* "NAME (model)" right after NAME: the model of that series */
    static const char suffix[] = " (model)";
    size_t len = strlen(s->name), sl = sizeof suffix - 1;
    const plot_series_t *prev = p->ns > 1 ? &p->s[p->ns - 2] : NULL;
    s->model = prev && !prev->model && len > sl && !strcmp(s->name + len - sl, suffix) &&
               strlen(prev->name) == len - sl && !strncmp(prev->name, s->name, len - sl);
    if (s->model)
        s->pen = prev->pen;
    else
        s->pen = prev ? prev->pen + 1 : 0;
    s->n = n;
    s->x = cs_malloc((n ? n : 1) * sizeof *s->x);
    s->y = cs_malloc((n ? n : 1) * sizeof *s->y);
    if (n) {
        memcpy(s->x, x, n * sizeof *x);
        memcpy(s->y, y, n * sizeof *y);
    }
}

void cs_plot_set_yunit(cs_plot_t *p, cs_axis_unit_t unit)
{
    p->yunit = unit;
}

void cs_plot_free(cs_plot_t *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->ns; i++) {
        free(p->s[i].name);
        free(p->s[i].x);
        free(p->s[i].y);
    }
    free(p->s);
    free(p->title);
    free(p->xlabel);
    free(p->ylabel);
    free(p);
}

/* ---- axes and ticks --------------------------------------------------------- */

/* An axis maps a value to a position: through log10 on a log axis.  lo and
 * hi are in that transformed space. */
typedef struct plot_axis {
    int log;
    double lo, hi;
    double px0, px1; /* figure coordinates of lo and hi */
} plot_axis_t;


static int plot_shown(double v, int log)
{
    return isfinite(v) && (!log || v > 0);
}

static int plot_point_shown(const cs_plot_t *p, const plot_series_t *s, size_t i)
{
    return plot_shown(s->x[i], p->logx) && plot_shown(s->y[i], p->logy);
}

static double plot_tr(double v, int log)
{
    return log ? log10(v) : v;
}

static double plot_map(const plot_axis_t *a, double v)
{
    return a->px0 + (plot_tr(v, a->log) - a->lo) / (a->hi - a->lo) * (a->px1 - a->px0);
}

/* Widens [*lo, *hi] to hold t (*any: whether it holds a value yet). */
static void plot_extend(double t, double *lo, double *hi, int *any)
{
    if (!*any || t < *lo)
        *lo = t;
    if (!*any || t > *hi)
        *hi = t;
    *any = 1;
}

/* The range of one axis (which = 0: x, 1: y) over the shown points, with a
 * margin; a degenerate range is widened so that the point sits inside. */
static void plot_range(const cs_plot_t *p, int which, plot_axis_t *a)
{
    int log = which ? p->logy : p->logx, any = 0;
    double lo = 0, hi = 0;
    for (int k = 0; k < p->ns; k++) {
        const plot_series_t *s = &p->s[k];
        for (size_t i = 0; i < s->n; i++) {
            if (!plot_point_shown(p, s, i))
                continue;
            plot_extend(plot_tr(which ? s->y[i] : s->x[i], log), &lo, &hi, &any);
        }
    }
    if (!any) {
        lo = 0;
        hi = 1;
    } else if (hi - lo <= 1e-12 * (fabs(lo) + fabs(hi))) {
        double d = log ? 0.5 : (lo != 0 ? fabs(lo) * 0.1 : 1.0);
        lo -= d;
        hi += d;
    } else {
        double pad = (hi - lo) * PLOT_PAD;
        lo -= pad;
        hi += pad;
    }
    a->log = log;
    a->lo = lo;
    a->hi = hi;
}

static int plot_ticks(const plot_axis_t *a, cs_axis_unit_t unit, plot_tick_t *ticks)
{
    return cs_axis_ticks(a->log, a->lo, a->hi, unit, ticks);
}

/* ---- text ------------------------------------------------------------------- */

/* A tick label: its text and, for 10^k, the exponent at 70% size. */
static double plot_label_width(cairo_t *cr, const plot_tick_t *t, double size)
{
    double w = cs_fig_text_width(cr, t->text);
    if (t->sup[0]) {
        cairo_set_font_size(cr, size * 0.7);
        w += cs_fig_text_width(cr, t->sup);
        cairo_set_font_size(cr, size);
    }
    return w;
}

/* Paints the white background and returns the plot's left edge: a margin
 * that fits the widest of the ny y tick labels (*ylabw, set) and the y
 * axis label when there is one. */
static double plot_background(cairo_t *cr, const plot_tick_t *yt, int ny, int has_ylabel,
                              double *ylabw)
{
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cs_fig_font(cr, PLOT_TICK_SIZE, 0);
    *ylabw = 0;
    for (int i = 0; i < ny; i++)
        if (yt[i].labelled) {
            double w = plot_label_width(cr, &yt[i], PLOT_TICK_SIZE);
            if (w > *ylabw)
                *ylabw = w;
        }
    return 22 + (has_ylabel ? PLOT_YLABEL_ROOM : 0) + *ylabw + 10;
}

/* The y axis label, upright along the axis, in the room plot_background
 * keeps for it left of the widest tick label (ylabw): placed from the tick
 * labels' edge (left - 10 - ylabw), not from the page's edge, so that it
 * clears them however far another need (slanted category labels) pushed
 * the plot's left edge. */
static void plot_ylabel(cairo_t *cr, const char *label, double left, double ylabw, double top,
                        double bottom)
{
    cs_fig_font(cr, PLOT_LABEL_SIZE, 0);
    cairo_save(cr);
    cairo_translate(cr, left - 10 - ylabw - PLOT_YLABEL_ROOM, (top + bottom) / 2);
    cairo_rotate(cr, -M_PI / 2);
    cs_fig_text(cr, 0, 0, label, 0.5, 0);
    cairo_restore(cr);
}

static void plot_label(cairo_t *cr, double x, double y, const plot_tick_t *t, double size,
                       double ax, double ay)
{
    double w = plot_label_width(cr, t, size), cap = cs_fig_cap_height(cr);
    double x0 = x - ax * w, base = y + (1 - ay) * cap;
    cairo_move_to(cr, x0, base);
    cairo_show_text(cr, t->text);
    if (t->sup[0]) {
        double tw = cs_fig_text_width(cr, t->text);
        cairo_set_font_size(cr, size * 0.7);
        cairo_move_to(cr, x0 + tw, base - 0.55 * cap);
        cairo_show_text(cr, t->sup);
        cairo_set_font_size(cr, size);
    }
}

/* ---- series ---------------------------------------------------------------- */

static void plot_color(cairo_t *cr, int k)
{
    double c[3];
    cs_fig_palette(k, c);
    cairo_set_source_rgb(cr, c[0], c[1], c[2]);
}

/* Marker shapes, so that series stay apart in grey print too: circle,
 * square, triangle up, diamond, triangle down (filled), x and + (stroked). */
static void plot_marker(cairo_t *cr, int shape, double x, double y, double r)
{
    switch (shape % PLOT_NSHAPES) {
    case 0:
        cairo_new_sub_path(cr);
        cairo_arc(cr, x, y, r, 0, 2 * M_PI);
        cairo_fill(cr);
        break;
    case 1:
        cairo_rectangle(cr, x - 0.85 * r, y - 0.85 * r, 1.7 * r, 1.7 * r);
        cairo_fill(cr);
        break;
    case 2:
    case 4: {
        double d = shape % PLOT_NSHAPES == 2 ? 1 : -1; /* apex up or down */
        cairo_move_to(cr, x, y - d * 1.15 * r);
        cairo_line_to(cr, x + r, y + d * 0.75 * r);
        cairo_line_to(cr, x - r, y + d * 0.75 * r);
        cairo_close_path(cr);
        cairo_fill(cr);
        break;
    }
    case 3:
        cairo_move_to(cr, x, y - 1.2 * r);
        cairo_line_to(cr, x + 1.2 * r, y);
        cairo_line_to(cr, x, y + 1.2 * r);
        cairo_line_to(cr, x - 1.2 * r, y);
        cairo_close_path(cr);
        cairo_fill(cr);
        break;
    case 5:
        cairo_move_to(cr, x - r, y - r);
        cairo_line_to(cr, x + r, y + r);
        cairo_move_to(cr, x - r, y + r);
        cairo_line_to(cr, x + r, y - r);
        cairo_stroke(cr);
        break;
    default:
        cairo_move_to(cr, x - 1.2 * r, y);
        cairo_line_to(cr, x + 1.2 * r, y);
        cairo_move_to(cr, x, y - 1.2 * r);
        cairo_line_to(cr, x, y + 1.2 * r);
        cairo_stroke(cr);
        break;
    }
}

/* A model's line is dashed: long enough dashes to keep its colour readable,
 * gaps wide enough that the simulated line shows through where they agree. */
static void plot_dash(cairo_t *cr, int on)
{
    static const double dash[] = {9, 6};
    cairo_set_dash(cr, dash, on ? 2 : 0, 0);
}

/* Colour, width and dash of a series' line. */
static void plot_pen(cairo_t *cr, const plot_series_t *s)
{
    double c[3];
    cs_fig_palette(s->pen, c);
    cairo_set_source_rgba(cr, c[0], c[1], c[2], s->model ? 0.45 : 1);
    cairo_set_line_width(cr, s->model ? 2.4 * PLOT_LINE_WIDTH : PLOT_LINE_WIDTH);
    plot_dash(cr, s->model);
}

static void plot_draw_series(const cs_plot_t *p, cairo_t *cr, const plot_axis_t *ax,
                             const plot_axis_t *ay)
{
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    /* models first, wide and translucent: where a model agrees with its
     * simulation the simulated line runs through the middle of the dashes */
    for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < p->ns; k++) {
        const plot_series_t *s = &p->s[k];
        int pen = 0; /* a point not shown lifts the pen: the line breaks */
        if (s->model != !pass)
            continue;
        plot_pen(cr, s);
        for (size_t i = 0; i < s->n; i++) {
            if (!plot_point_shown(p, s, i)) {
                pen = 0;
                continue;
            }
            double x = plot_map(ax, s->x[i]), y = plot_map(ay, s->y[i]);
            if (pen)
                cairo_line_to(cr, x, y);
            else
                cairo_move_to(cr, x, y);
            pen = 1;
        }
        cairo_stroke(cr);
        plot_dash(cr, 0);
        if (s->model)
            continue;
        cairo_set_line_width(cr, 1.6);
        for (size_t i = 0; i < s->n; i++)
            if (plot_point_shown(p, s, i))
                plot_marker(cr, s->pen, plot_map(ax, s->x[i]), plot_map(ay, s->y[i]),
                            PLOT_MARKER_R);
    }
}

/* ---- legend ----------------------------------------------------------------- */

/* How much of the drawing a legend box at (x, y, w, h) would hide: the
 * points, and samples every 2 units along the segments between them, that
 * fall inside. */
static int plot_covered(const cs_plot_t *p, const plot_axis_t *ax, const plot_axis_t *ay,
                        double x, double y, double w, double h)
{
    int count = 0;
    for (int k = 0; k < p->ns; k++) {
        const plot_series_t *s = &p->s[k];
        double px = 0, py = 0;
        int pen = 0;
        for (size_t i = 0; i < s->n; i++) {
            if (!plot_point_shown(p, s, i)) {
                pen = 0;
                continue;
            }
            double qx = plot_map(ax, s->x[i]), qy = plot_map(ay, s->y[i]);
            int samples = pen ? 1 + (int)(hypot(qx - px, qy - py) / 2) : 1;
            if (samples > 2000)
                samples = 2000;
            for (int j = pen ? 1 : samples; j <= samples; j++) {
                double sx = px + (qx - px) * j / samples, sy = py + (qy - py) * j / samples;
                count += sx >= x && sx <= x + w && sy >= y && sy <= y + h;
            }
            px = qx;
            py = qy;
            pen = 1;
        }
    }
    return count;
}

#define PLOT_LEGEND_ROW 22.0
#define PLOT_LEGEND_SAMPLE 30.0
#define PLOT_LEGEND_GAP 8.0
#define PLOT_LEGEND_PAD 10.0
#define PLOT_LEGEND_INSET 12.0

/* The legend box's size (the legend font must be set). */
static void plot_legend_size(const cs_plot_t *p, cairo_t *cr, double *w, double *h)
{
    double textw = 0;
    cs_fig_font(cr, PLOT_LEGEND_SIZE, 0);
    for (int k = 0; k < p->ns; k++) {
        double tw = cs_fig_text_width(cr, p->s[k].name);
        if (tw > textw)
            textw = tw;
    }
    *w = PLOT_LEGEND_PAD + PLOT_LEGEND_SAMPLE + PLOT_LEGEND_GAP + textw + PLOT_LEGEND_PAD;
    *h = PLOT_LEGEND_ROW * p->ns + PLOT_LEGEND_PAD;
}

/* Where the legend box (w x h) goes inside the plot area: the first place,
 * in order of preference, that hides no point and no line (the corners,
 * upper left first: time-vs-size curves rise to the upper right; then the
 * middles of the sides).  Returns 0 when every place hides something: the
 * caller then puts the legend outside, on the right. */
static int plot_legend_inside(const cs_plot_t *p, const plot_axis_t *ax, const plot_axis_t *ay,
                              double w, double h, double *lx, double *ly)
{
    const double in = PLOT_LEGEND_INSET;
    double left = ax->px0 + in, right = ax->px1 - in - w, midx = (left + right) / 2;
    double top = ay->px1 + in, bottom = ay->px0 - in - h, midy = (top + bottom) / 2;
    const double cx[8] = {left, right, right, left, left, right, midx, midx};
    const double cy[8] = {top, top, bottom, bottom, midy, midy, top, bottom};
    if (right < left || bottom < top)
        return 0;
    for (int c = 0; c < 8; c++)
        if (plot_covered(p, ax, ay, cx[c] - 4, cy[c] - 4, w + 8, h + 8) == 0) {
            *lx = cx[c];
            *ly = cy[c];
            return 1;
        }
    return 0;
}

static void plot_draw_legend(const cs_plot_t *p, cairo_t *cr, double lx, double ly, double w,
                             double h)
{
    const double sample = PLOT_LEGEND_SAMPLE, pad = PLOT_LEGEND_PAD;
    cairo_rectangle(cr, lx, ly, w, h);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_fill_preserve(cr);
    cairo_set_source_rgb(cr, 0.75, 0.75, 0.75);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
    cs_fig_font(cr, PLOT_LEGEND_SIZE, 0);
    for (int k = 0; k < p->ns; k++) {
        const plot_series_t *s = &p->s[k];
        double y = ly + pad / 2 + PLOT_LEGEND_ROW * (k + 0.5), x = lx + pad;
        plot_pen(cr, s);
        cairo_move_to(cr, x, y);
        cairo_line_to(cr, x + sample, y);
        cairo_stroke(cr);
        plot_dash(cr, 0);
        if (!s->model) {
            cairo_set_line_width(cr, 1.6);
            plot_marker(cr, s->pen, x + sample / 2, y, PLOT_MARKER_R);
        }
        cairo_set_source_rgb(cr, 0, 0, 0);
        cs_fig_text(cr, x + sample + PLOT_LEGEND_GAP, y, s->name, 0, 0.5);
    }
}

/* ---- the figure ------------------------------------------------------------- */

static void plot_draw(const cs_plot_t *p, cairo_t *cr)
{
    plot_tick_t xt[PLOT_MAX_TICKS], yt[PLOT_MAX_TICKS]; /* ~60 KB of stack */
    plot_axis_t ax, ay;
    int nx, ny;
    double ylabw, top, left, right = PLOT_W - 30, bottom = PLOT_H - 78, lastx;
    int has_title = p->title[0] != '\0';

    plot_range(p, 0, &ax);
    plot_range(p, 1, &ay);
    nx = plot_ticks(&ax, CS_AXIS_PLAIN, xt);
    ny = plot_ticks(&ay, p->yunit, yt);

    left = plot_background(cr, yt, ny, p->ylabel[0] != '\0', &ylabw);
    top = has_title ? 62 : 24;
    ax.px0 = left;
    ax.px1 = right;
    ay.px0 = bottom; /* y grows upwards */
    ay.px1 = top;

    /* the legend: inside where it hides nothing, else outside on the right
     * (the plot area narrows; the x axis keeps its range) */
    double lw = 0, lh = 0, lx = 0, ly = 0;
    if (p->ns > 0) {
        plot_legend_size(p, cr, &lw, &lh);
        if (!plot_legend_inside(p, &ax, &ay, lw, lh, &lx, &ly)) {
            right = PLOT_W - 14 - lw - 12;
            if (right < left + 0.4 * (PLOT_W - left)) /* a long legend: keep the plot */
                right = left + 0.4 * (PLOT_W - left);
            ax.px1 = right;
            lx = right + 12;
            ly = top;
        }
    }

    /* grid: minor first, so that major lines are drawn over them */
    cairo_set_line_width(cr, 1);
    for (int pass = 0; pass < 2; pass++) {
        double g = pass ? 0.86 : 0.955;
        cairo_set_source_rgb(cr, g, g, g);
        for (int i = 0; i < nx; i++)
            if (xt[i].major == pass) {
                double x = cs_fig_snap(ax.px0 + (xt[i].t - ax.lo) / (ax.hi - ax.lo) *
                                                  (ax.px1 - ax.px0));
                cairo_move_to(cr, x, top);
                cairo_line_to(cr, x, bottom);
            }
        for (int i = 0; i < ny; i++)
            if (yt[i].major == pass) {
                double y = cs_fig_snap(ay.px0 + (yt[i].t - ay.lo) / (ay.hi - ay.lo) *
                                                  (ay.px1 - ay.px0));
                cairo_move_to(cr, left, y);
                cairo_line_to(cr, right, y);
            }
        cairo_stroke(cr);
    }

    /* series, clipped to the plot area */
    cairo_save(cr);
    cairo_rectangle(cr, left, top, right - left, bottom - top);
    cairo_clip(cr);
    plot_draw_series(p, cr, &ax, &ay);
    cairo_restore(cr);

    /* frame and outward ticks */
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, cs_fig_snap(left), cs_fig_snap(top), floor(right) - floor(left),
                    floor(bottom) - floor(top));
    cairo_stroke(cr);
    for (int i = 0; i < nx; i++) {
        double x = cs_fig_snap(ax.px0 + (xt[i].t - ax.lo) / (ax.hi - ax.lo) * (ax.px1 - ax.px0));
        cairo_move_to(cr, x, cs_fig_snap(bottom));
        cairo_line_to(cr, x, cs_fig_snap(bottom) + (xt[i].major ? 6 : 3));
    }
    for (int i = 0; i < ny; i++) {
        double y = cs_fig_snap(ay.px0 + (yt[i].t - ay.lo) / (ay.hi - ay.lo) * (ay.px1 - ay.px0));
        cairo_move_to(cr, cs_fig_snap(left), y);
        cairo_line_to(cr, cs_fig_snap(left) - (yt[i].major ? 6 : 3), y);
    }
    cairo_stroke(cr);

    /* tick labels; one that would touch its left neighbour is left out */
    cs_fig_font(cr, PLOT_TICK_SIZE, 0);
    lastx = -1e9;
    for (int i = 0; i < nx; i++) {
        if (!xt[i].labelled)
            continue;
        double x = ax.px0 + (xt[i].t - ax.lo) / (ax.hi - ax.lo) * (ax.px1 - ax.px0);
        double w = plot_label_width(cr, &xt[i], PLOT_TICK_SIZE);
        if (x - w / 2 < lastx + 6)
            continue;
        plot_label(cr, x, bottom + 11, &xt[i], PLOT_TICK_SIZE, 0.5, 0);
        lastx = x + w / 2;
    }
    lastx = 1e9; /* y labels go upwards: "left" is below */
    for (int i = 0; i < ny; i++) {
        if (!yt[i].labelled)
            continue;
        double y = ay.px0 + (yt[i].t - ay.lo) / (ay.hi - ay.lo) * (ay.px1 - ay.px0);
        if (y + PLOT_TICK_SIZE > lastx)
            continue;
        plot_label(cr, left - 10, y, &yt[i], PLOT_TICK_SIZE, 1, 0.5);
        lastx = y;
    }

    /* legend over the series, then the words */
    if (p->ns > 0)
        plot_draw_legend(p, cr, lx, ly, lw, lh);
    cairo_set_source_rgb(cr, 0, 0, 0);
    if (p->xlabel[0]) {
        cs_fig_font(cr, PLOT_LABEL_SIZE, 0);
        cs_fig_text(cr, (left + right) / 2, bottom + 50, p->xlabel, 0.5, 0);
    }
    if (p->ylabel[0])
        plot_ylabel(cr, p->ylabel, left, ylabw, top, bottom);
    /* a long title shrinks to the figure's width rather than spill */
    if (has_title)
        cs_fig_title(cr, PLOT_W / 2, 30, p->title, PLOT_TITLE_SIZE, 1, PLOT_W - 40);
}

/* ---- bar charts ------------------------------------------------------------ */

typedef struct plot_bars {
    const char *title, *ylabel;
    int n;
    const char *const *labels;
    const double *values;
    const char *const *texts;
    int logy;
    cs_axis_unit_t yunit;
} plot_bars_t;

/* The grid, frame and ticks of a y axis spanning the plot area. */
static void plot_bars_draw(cairo_t *cr, void *ctx)
{
    const plot_bars_t *b = ctx;
    plot_tick_t yt[PLOT_MAX_TICKS];
    plot_axis_t ay;
    double lo = 0, hi = 0, ylabw, maxlw = 0;
    int any = 0, ny, slant = 0;

    for (int i = 0; i < b->n; i++) {
        double v = b->values[i];
        if (!plot_shown(v, b->logy))
            continue;
        plot_extend(plot_tr(v, b->logy), &lo, &hi, &any);
    }
    if (!any) {
        lo = 0;
        hi = 1;
    } else if (b->logy) {
        /* a decade below the smallest bar, so that it has a visible height */
        lo = floor(lo) - (lo - floor(lo) < 0.3 ? 1 : 0);
        hi = hi + 0.15 * (hi - lo > 0 ? hi - lo : 1);
    } else {
        lo = 0;
        hi = hi > 0 ? hi * 1.15 : 1;
    }
    ay.log = b->logy;
    ay.lo = lo;
    ay.hi = hi;
    ny = plot_ticks(&ay, b->yunit, yt);

    double left = plot_background(cr, yt, ny, b->ylabel && b->ylabel[0], &ylabw);
    double right = PLOT_W - 30, top = b->title && b->title[0] ? 62 : 24;
    double slot = (right - left) / (b->n > 0 ? b->n : 1);
    for (int i = 0; i < b->n; i++) {
        double w = cs_fig_text_width(cr, b->labels[i]);
        if (w > maxlw)
            maxlw = w;
    }
    slant = maxlw > slot - 8;
    if (slant && b->n > 0) {
        /* the first label, slanted down to the left, must stay on the page */
        for (int pass = 0; pass < 2; pass++) {
            double need = cs_fig_text_width(cr, b->labels[0]) * cos(M_PI / 6) - slot / 2 + 6;
            if (need > left) {
                left = need;
                slot = (right - left) / b->n;
            }
        }
    }
    double bottom = PLOT_H - (slant ? 30 + 0.5 * maxlw + PLOT_TICK_SIZE : 48);
    if (bottom < top + 200)
        bottom = top + 200;
    ay.px0 = bottom;
    ay.px1 = top;

    /* grid at major ticks */
    cairo_set_line_width(cr, 1);
    cairo_set_source_rgb(cr, 0.86, 0.86, 0.86);
    for (int i = 0; i < ny; i++)
        if (yt[i].major) {
            double y = cs_fig_snap(ay.px0 + (yt[i].t - ay.lo) / (ay.hi - ay.lo) * (ay.px1 - ay.px0));
            cairo_move_to(cr, left, y);
            cairo_line_to(cr, right, y);
        }
    cairo_stroke(cr);

    /* bars, each in its palette colour, its value above it */
    for (int i = 0; i < b->n; i++) {
        double v = b->values[i], x = left + slot * (i + 0.2), w = slot * 0.6;
        char text[64];
        if (!plot_shown(v, b->logy))
            continue;
        double y = plot_map(&ay, v);
        if (y < top)
            y = top;
        plot_color(cr, i);
        cairo_rectangle(cr, x, y, w, bottom - y);
        cairo_fill(cr);
        if (b->texts && b->texts[i])
            snprintf(text, sizeof text, "%s", b->texts[i]);
        else
            cs_axis_format(v, 4, b->yunit, text, sizeof text);
        cairo_set_source_rgb(cr, 0, 0, 0);
        cs_fig_font(cr, PLOT_TICK_SIZE - 1, 0);
        cs_fig_text(cr, x + w / 2, y - 6, text, 0.5, 1);
    }

    /* frame, ticks and their labels */
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, cs_fig_snap(left), cs_fig_snap(top), floor(right) - floor(left),
                    floor(bottom) - floor(top));
    cairo_stroke(cr);
    double lasty = 1e9;
    cs_fig_font(cr, PLOT_TICK_SIZE, 0);
    for (int i = 0; i < ny; i++) {
        double y = ay.px0 + (yt[i].t - ay.lo) / (ay.hi - ay.lo) * (ay.px1 - ay.px0);
        cairo_move_to(cr, cs_fig_snap(left), cs_fig_snap(y));
        cairo_line_to(cr, cs_fig_snap(left) - (yt[i].major ? 6 : 3), cs_fig_snap(y));
        cairo_stroke(cr);
        if (!yt[i].labelled || y + PLOT_TICK_SIZE > lasty)
            continue;
        plot_label(cr, left - 10, y, &yt[i], PLOT_TICK_SIZE, 1, 0.5);
        lasty = y;
    }
    for (int i = 0; i < b->n; i++) {
        double x = left + slot * (i + 0.5);
        if (!slant) {
            cs_fig_text(cr, x, bottom + 10, b->labels[i], 0.5, 0);
            continue;
        }
        cairo_save(cr);
        cairo_translate(cr, x + 4, bottom + 8);
        cairo_rotate(cr, -M_PI / 6);
        cs_fig_text(cr, 0, 0, b->labels[i], 1, 0);
        cairo_restore(cr);
    }
    if (b->ylabel && b->ylabel[0])
        plot_ylabel(cr, b->ylabel, left, ylabw, top, bottom);
    if (b->title && b->title[0])
        cs_fig_title(cr, PLOT_W / 2, 30, b->title, PLOT_TITLE_SIZE, 1, PLOT_W - 40);
}

/* ---- the plotted numbers (.csv) --------------------------------------------- */

/* Whether path names the plot's data rather than a picture: ".csv". */
static int plot_is_data(const char *path)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    return dot && (!slash || dot > slash) && !strcasecmp(dot, ".csv");
}

/* The numbers the figure shows: "series,x,y" (lines) or "label,y" (bars),
 * full precision (%.17g, exact when read back), in the plot's units (y in
 * seconds, bytes per second or plain numbers, x as drawn).  A point that
 * is not finite (a failed run) is left out, as the figure leaves it out;
 * points <= 0 are kept (only a log axis hides them). */
static int plot_write_data(const char *path, const cs_plot_t *p, const plot_bars_t *b,
                           cs_error_t *err)
{
    cs_outfile_t *o;
    int rc = cs_outfile_open(NULL, path, &o, err);
    if (rc)
        return rc;
    FILE *f = cs_outfile_stream(o);
    if (p) {
        fputs("series,x,y\n", f);
        for (int k = 0; k < p->ns; k++)
            for (size_t i = 0; i < p->s[k].n; i++) {
                if (!isfinite(p->s[k].x[i]) || !isfinite(p->s[k].y[i]))
                    continue;
                cs_csv_field(f, p->s[k].name);
                fprintf(f, ",%.17g,%.17g\n", p->s[k].x[i], p->s[k].y[i]);
            }
    } else {
        fputs("label,y\n", f);
        for (int i = 0; i < b->n; i++) {
            if (!isfinite(b->values[i]))
                continue;
            cs_csv_field(f, b->labels[i] ? b->labels[i] : "");
            fprintf(f, ",%.17g\n", b->values[i]);
        }
    }
    return cs_outfile_commit(o, err);
}

int cs_plot_write_bars(const char *path, const char *title, const char *ylabel, int n,
                       const char *const *labels, const double *values,
                       const char *const *texts, int logy, cs_axis_unit_t yunit,
                       cs_error_t *err)
{
    plot_bars_t b = {title, ylabel, n, labels, values, texts, logy != 0, yunit};
    if (plot_is_data(path))
        return plot_write_data(path, NULL, &b, err);
    return cs_fig_write(path, "plot", PLOT_W, PLOT_H, plot_bars_draw, &b, title, err);
}

/* ---- output ----------------------------------------------------------------- */

int cs_plot_check_path(const char *path, cs_error_t *err)
{
    if (plot_is_data(path))
        return CS_OK;
    int rc = cs_fig_check_path(path, "plot", err);
    if (rc) { /* the pictures' message, and the data's extension */
        char msg[CS_ERROR_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", err->msg);
        cs_error_set(err, rc, "%s (or .csv: the plotted numbers)", msg);
    }
    return rc;
}

static void plot_draw_cb(cairo_t *cr, void *ctx) { plot_draw(ctx, cr); }

int cs_plot_write(const cs_plot_t *p, const char *path, cs_error_t *err)
{
    if (plot_is_data(path))
        return plot_write_data(path, p, NULL, err);
    return cs_fig_write(path, "plot", PLOT_W, PLOT_H, plot_draw_cb, (void *)p, p->title, err);
}

void cs_plot_cleanup(void)
{
    /* cairo first: its font caches hold fontconfig patterns */
    cairo_debug_reset_static_data();
    FcFini();
}
