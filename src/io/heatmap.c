/*
 * heatmap.c - link heatmaps on the machine's own layout (heatmap.h).
 *
 * A heatmap is built in two steps.  cs_heatmap_new turns the machine into
 * a layout: node positions in layout units and, for every channel, the
 * strokes that draw it (a straight lane or an arc, with an arrowhead), or,
 * for grids too large for lanes, a tile per block of nodes.  The strokes of
 * channel c are st[first[c]] .. st[first[c+1]-1], built in channel order.
 * cs_heatmap_write then colours them with the data and paints figure.c's
 * surface: hot lanes over cool ones, idle ones beneath in grey, the colour
 * bar, the title, and a footer saying how to read the layout.
 *
 * 3-D lattices (a TPU-class torus) are drawn as the papers draw them: the
 * z-slices side by side, each an x-y grid, the z links as marks beside
 * their nodes (slice_channel says why), every channel exactly one lane.
 *
 * Lanes keep right: a channel is drawn offset to the right of the straight
 * line (or arc) from its source to its destination, so the two directions
 * of a link lie side by side.  On screen (y down) the right of a unit
 * direction (dx, dy) is (-dy, dx).
 *
 * Large machines: the wafer's 3.4 M channels never become strokes; tiles
 * are a raster image (one pixel per tile, scaled without smoothing), which
 * keeps SVG and PDF small too.  The dragonfly's group matrix is a raster
 * image for the same reason.
 */
#include "io/heatmap.h"

#include <cairo.h>
#include <igraph.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/units.h"
#include "io/figure.h"

/* figure geometry (figure units) */
#define BAR_W 22.0
#define MIN_CELL 10.0     /* grids: below this many units per node, tiles */
#define KK_MAX_NODES 1000 /* graph layout: Kamada-Kawai up to this size */
#define FOLD_MIN 33       /* lines of more nodes are folded into a snake */

/* 3-D lattices: the gap between neighbouring slices (display units: nodes
 * one unit apart), wide enough for the wrap stubs and z marks of both and,
 * between rows of slices, the slice's label */
#define SLICE_GAP_X 1
#define SLICE_GAP_Y 2
#define SLICE_PAD 0.7     /* a slice's panel reaches this far beyond its nodes */
#define SLICE_LABEL 1.0   /* room above a panel for "z=0" */

enum { L_GRID, L_TILES, L_RING, L_CIRCLE, L_RINGS, L_DRAGONFLY, L_GRAPH, L_TREE, L_SLICES };
static const char *const layout_names[] = {"grid", "tiles", "ring", "circle", "rings",
                                           "dragonfly", "graph", "tree", "slices"};

typedef struct hm_stroke {
    int32_t chan;
    uint8_t arc;    /* 0: line v = x0 y0 x1 y1; 1: arc v = cx cy r a0 a1 */
    double v[5];
} hm_stroke_t;

/* The canvas a layout is built for: its size in figure units (1000 x 800
 * by default; a paper size gets the proportions of the page and a scale
 * that keeps the text readable when printed), the boxes of the map and of
 * the colour bar, and the caption lines above and below the map. */
typedef struct hm_frame {
    double W, H;               /* the canvas, figure units */
    double zoom_png, zoom_vec; /* file units per figure unit: PNG pixels, SVG/PDF points */
    double min_font;           /* the smallest text (figure units): 6.5 pt printed, >= 8 */
    double mx0, mx1, my0, my1; /* the map */
    double bx, by0, by1;       /* the colour bar */
    int title_lines, sub_lines, range_line, note_lines;
} hm_frame_t;

struct cs_heatmap {
    const cs_machine_t *m;
    hm_frame_t fr;
    const cs_topo_t *t;
    int kind;
    int nnodes, nchans;
    char note[320];      /* the footer */
    char note_shown[420]; /* the footer as drawn: + names left out */
    /* layout units -> figure units: X = ox + s * x */
    double bx0, by0, bx1, by1;
    double s, ox, oy;
    double lane;         /* lane width (layout units) */
    hm_stroke_t *st;
    int nst, cap;
    int32_t *first;      /* nchans + 1 */
    double *nx, *ny;     /* node positions, or NULL */
    double node_r;       /* node marker size (layout units), 0: none */
    int label_nodes;
    /* grids: logical rows x cols, drawn as drows x dcols */
    int rows, cols, fold, wrap_x, wrap_y, bands, dcols, drows, gap;
    int tile, trows, tcols;
    /* 3-D lattices: depth slices of rows x cols, drawn srows x scols */
    int depth, wrap_z, srows, scols;
    /* rings: per node its ring, index and the ring's size and direction */
    int32_t *ring_of, *ring_idx;
    int nrings;
    int32_t *ring_len;
    double *ring_cx, *ring_cy, *ring_a0, *ring_dir;
    uint8_t *bridged;    /* rings: nodes with a link off their ring */
    /* dragonfly */
    int ngroups, panel_group, agg;
    double mat_x, mat_y, mat_size;
    /* the write in progress */
    const cs_heatmap_data_t *d;
    double vlo, vmax;    /* the colour range */
    int klo, kmax;       /* the same for k, in whole messages */
    const char *title, *subtitle;
    char range[200];     /* the caption line of a fixed range, or "" */
    double zoom;         /* this write's file units per figure unit */
};

/* ---- the canvas: size and caption lines ------------------------------------- */

/* The canvas of a figure of size sz (NULL or w 0: 1000 x 800) with the
 * given caption lines.  A figure narrower than 1000 units gets a canvas
 * 1.6 times its width in points (at most 1000), drawn scaled down: a
 * 3.5 in column (252 pt) is a canvas of 403 units at 0.625, so the 11-unit
 * footer prints at 6.9 pt and the 19-unit title at 11.9 pt, the sizes of a
 * paper's captions; wider figures keep 1 unit = 1 point. */
static void frame_set(hm_frame_t *f, const cs_heatmap_size_t *sz, int title_lines,
                      int sub_lines, int range_line, int note_lines)
{
    double w = sz && sz->w > 0 ? sz->w : CS_HEATMAP_WIDTH;
    double hh = sz && sz->w > 0 ? sz->h : CS_HEATMAP_HEIGHT;
    double L = fmin(1.6 * w, fmax(w, CS_HEATMAP_WIDTH));
    if (L < w)
        L = w;
    memset(f, 0, sizeof *f);
    f->W = L;
    f->H = hh * L / w;
    f->zoom_vec = w / L;
    f->zoom_png = (sz && sz->physical ? CS_HEATMAP_DPI / 72.0 : 1) * w / L;
    f->min_font = fmax(8, 6.5 / f->zoom_vec);
    f->title_lines = title_lines;
    f->sub_lines = sub_lines;
    f->range_line = range_line;
    f->note_lines = note_lines;
    /* the default canvas: map 30..850 x 82..756, bar at 892, 140..560 */
    f->mx0 = 30;
    f->mx1 = f->W - 150;
    f->my0 = 82 + 22 * (title_lines - 1) + 16 * (sub_lines - 1) + 17 * range_line;
    f->my1 = f->H - 44 - 14 * (note_lines - 1);
    f->bx = f->W - 108;
    f->by0 = f->my0 + 58;
    f->by1 = f->by0 + fmin(420, f->my1 - 60 - f->by0);
    /* a short canvas: the bar's legend ("idle") must clear the footer */
    if (f->by1 > f->my1 - 45)
        f->by1 = f->my1 - 45;
    if (f->by1 - f->by0 < 80) {
        /* a small canvas: the bar takes all the height between its title
         * and the "idle" legend */
        f->by0 = fmax(f->my0 + 42, f->by1 - 80);
        f->by1 = fmax(f->by1, f->my1 - 45);
    }
}

static int frame_same(const hm_frame_t *a, const hm_frame_t *b)
{
    return a->W == b->W && a->H == b->H && a->zoom_png == b->zoom_png &&
           a->title_lines == b->title_lines && a->sub_lines == b->sub_lines &&
           a->range_line == b->range_line && a->note_lines == b->note_lines;
}

static int path_is_png(const char *path)
{
    const char *dot = strrchr(path, '.');
    return dot && !strcasecmp(dot, ".png");
}

void cs_heatmap_file_size(const cs_heatmap_size_t *s, const char *path, double *w, double *h)
{
    double sw = s && s->w > 0 ? s->w : CS_HEATMAP_WIDTH;
    double sh = s && s->w > 0 ? s->h : CS_HEATMAP_HEIGHT;
    double k = s && s->w > 0 && s->physical && path_is_png(path) ? CS_HEATMAP_DPI / 72.0 : 1;
    *w = k == 1 ? sw : round(sw * k);
    *h = k == 1 ? sh : round(sh * k);
}

/* One side of --size: a number and an optional unit; *unit gets 0 (none),
 * 1 (px) or 2 (physical), *pt the value in points or figure units. */
static int size_side(const char *text, const char *all, double *pt, int *unit, cs_error_t *err)
{
    static const struct { const char *name; double pt; } units[] = {
        {"in", 72}, {"cm", 72 / 2.54}, {"mm", 72 / 25.4}, {"pt", 1}};
    char *end;
    double v = strtod(text, &end);
    if (end == text || !(v > 0) || !isfinite(v))
        return cs_error_set(err, CS_ERR_USAGE, "--size '%s': expected column, page or WxH "
                            "(e.g. 3.5x2.8in, 1600x1200)", all);
    *pt = v;
    *unit = 0;
    if (!*end)
        return CS_OK;
    if (!strcmp(end, "px")) {
        *unit = 1;
        return CS_OK;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(end, units[i].name)) {
            *pt = v * units[i].pt;
            *unit = 2;
            return CS_OK;
        }
    return cs_error_set(err, CS_ERR_USAGE, "--size '%s': unknown unit '%s'; valid: in, cm, "
                        "mm, pt (paper), px or none (figure units)", all, end);
}

int cs_heatmap_parse_size(const char *text, cs_heatmap_size_t *out, cs_error_t *err)
{
    char a[64], b[64];
    const char *x;
    int ua, ub, rc;
    memset(out, 0, sizeof *out);
    if (!strcmp(text, "column") || !strcmp(text, "page")) {
        /* an IEEE or ACM column is 3.5 in wide, a two-column page 7 in; the
         * default figure's 5:4 */
        out->w = text[0] == 'c' ? 3.5 * 72 : 7 * 72;
        out->h = 0.8 * out->w;
        out->physical = 1;
        return CS_OK;
    }
    x = strchr(text, 'x');
    if (!x || strchr(x + 1, 'x') || (size_t)(x - text) >= sizeof a || strlen(x + 1) >= sizeof b)
        return cs_error_set(err, CS_ERR_USAGE, "--size '%s': expected column, page or WxH "
                            "(e.g. 3.5x2.8in, 1600x1200)", text);
    snprintf(a, sizeof a, "%.*s", (int)(x - text), text);
    snprintf(b, sizeof b, "%s", x + 1);
    if ((rc = size_side(a, text, &out->w, &ua, err)) || (rc = size_side(b, text, &out->h, &ub, err)))
        return rc;
    /* a unit on one side holds for the other: 3.5x2.8in */
    if (ua == 2 && ub == 0)
        out->h *= out->w / (a[0] ? strtod(a, NULL) : 1), ub = 2;
    else if (ub == 2 && ua == 0)
        out->w *= out->h / strtod(b, NULL), ua = 2;
    if ((ua == 2) != (ub == 2))
        return cs_error_set(err, CS_ERR_USAGE, "--size '%s': one side in paper units, the "
                            "other in figure units", text);
    out->physical = ua == 2;
    double lo = out->physical ? 72 : 100, hi = out->physical ? 26 * 72 : 8000;
    if (out->w < lo || out->h < lo || out->w > hi || out->h > hi)
        return cs_error_set(err, CS_ERR_RANGE, "--size '%s': each side must be %s", text,
                            out->physical ? "1 to 26 inches" : "100 to 8000 figure units");
    if (out->w > 4 * out->h || out->h > 4 * out->w)
        return cs_error_set(err, CS_ERR_RANGE, "--size '%s': the sides may differ by a factor "
                            "4 at most", text);
    return CS_OK;
}

/* ---- the colour range --------------------------------------------------------- */

/* One side of --scale in the data's units. */
static int scale_side(const char *text, const char *all, cs_heatmap_metric_t m, double *out,
                      cs_error_t *err)
{
    char *end;
    if (m == CS_HEATMAP_BYTES) {
        int64_t b;
        cs_error_t e;
        if (cs_units_parse_bytes(text, &b, &e) != CS_OK || b < 0)
            return cs_error_set(err, CS_ERR_USAGE, "--scale '%s': '%s' is not a size in bytes "
                                "(e.g. 0:4MiB)", all, text);
        *out = (double)b;
        return CS_OK;
    }
    double v = strtod(text, &end);
    if (end == text || !isfinite(v) || v < 0 ||
        (*end && !(m != CS_HEATMAP_K && !strcmp(end, "%"))))
        return cs_error_set(err, CS_ERR_USAGE, "--scale '%s': '%s' is not %s", all, text,
                            m == CS_HEATMAP_K ? "a count of messages (e.g. 1:4)"
                                              : "a percentage (e.g. 0:50 or 0%:50%)");
    if (m != CS_HEATMAP_K && v > 100)
        return cs_error_set(err, CS_ERR_RANGE, "--scale '%s': %s is above 100%%", all, text);
    *out = m == CS_HEATMAP_K ? v : v / 100;
    return CS_OK;
}

int cs_heatmap_parse_scale(const char *text, cs_heatmap_metric_t m, double *lo, double *hi,
                           cs_error_t *err)
{
    const char *colon = strchr(text, ':');
    char a[64];
    int rc;
    if (!colon || strchr(colon + 1, ':') || !colon[1] || (size_t)(colon - text) >= sizeof a)
        return cs_error_set(err, CS_ERR_USAGE, "--scale '%s': expected LO:HI in the metric's "
                            "units (util, stall: %%; bytes: a size; k: messages), LO may be "
                            "left out", text);
    snprintf(a, sizeof a, "%.*s", (int)(colon - text), text);
    *lo = m == CS_HEATMAP_K ? 1 : 0;
    if ((a[0] && (rc = scale_side(a, text, m, lo, err))) ||
        (rc = scale_side(colon + 1, text, m, hi, err)))
        return rc;
    if (!(*hi > *lo))
        return cs_error_set(err, CS_ERR_RANGE, "--scale '%s': HI must be above LO", text);
    return CS_OK;
}

void cs_heatmap_range_text(cs_heatmap_metric_t m, double lo, double hi, char *buf, size_t len)
{
    char a[32], b[32];
    if (m == CS_HEATMAP_BYTES) {
        cs_units_format_bytes((int64_t)llround(lo), a, sizeof a);
        cs_units_format_bytes((int64_t)llround(hi), b, sizeof b);
        if (lo == 0)
            snprintf(a, sizeof a, "0");
        snprintf(buf, len, "%s\xe2\x80\x93%s", a, b);
    } else if (m == CS_HEATMAP_K) {
        snprintf(buf, len, "%.0f\xe2\x80\x93%.0f", lo, hi);
    } else {
        snprintf(buf, len, "%.3g\xe2\x80\x93%.3g%%", 100 * lo, 100 * hi);
    }
}

/* ---- metrics and data ------------------------------------------------------- */

static const char *const metric_names[] = {"util", "bytes", "stall", "k"};

int cs_heatmap_parse_metric(const char *text, cs_heatmap_metric_t *out, cs_error_t *err)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(text, metric_names[i])) {
            *out = (cs_heatmap_metric_t)i;
            return CS_OK;
        }
    return cs_error_set(err, CS_ERR_USAGE,
                        "unknown metric '%s'; valid: util, bytes, stall, k", text);
}

const char *cs_heatmap_metric_name(cs_heatmap_metric_t m)
{
    return (unsigned)m < 4 ? metric_names[m] : "unknown";
}

void cs_heatmap_data_init(cs_heatmap_data_t *d, int nchans, cs_heatmap_metric_t m,
                          cs_tick_t t0, cs_tick_t t1)
{
    d->nchans = nchans;
    d->val = cs_calloc((size_t)nchans + 1, sizeof *d->val);
    d->active = cs_calloc((size_t)nchans + 1, sizeof *d->active);
    d->metric = m;
    d->t0 = t0;
    d->t1 = t1;
}

void cs_heatmap_data_destroy(cs_heatmap_data_t *d)
{
    if (!d)
        return;
    free(d->val);
    free(d->active);
    memset(d, 0, sizeof *d);
}

static double metric_value(const cs_chan_stats_t *s, cs_heatmap_metric_t m, double span)
{
    switch (m) {
    case CS_HEATMAP_UTIL: return span > 0 ? (double)s->busy / span : 0;
    case CS_HEATMAP_BYTES: return (double)s->bytes;
    case CS_HEATMAP_STALL: return span > 0 ? (double)s->stall / span : 0;
    default: return s->peak_k;
    }
}

int cs_heatmap_data_from_net(const cs_net_t *net, int nchans, cs_heatmap_metric_t m,
                             cs_tick_t t0, cs_tick_t t1, int whole, cs_heatmap_data_t *d,
                             cs_error_t *err)
{
    cs_heatmap_data_init(d, nchans, m, t0, t1);
    if (t1 <= t0 && !whole)
        return cs_error_set(err, CS_ERR_RANGE, "empty window [%lld, %lld)", (long long)t0,
                            (long long)t1);
    const cs_chanrec_t *rec = cs_net_recorder(net);
    if (!whole && cs_chanrec_count(rec) == 0) {
        /* buckets were asked for but the engine never fed them (or
         * nothing moved at all) */
        int moved = 0;
        for (int c = 0; c < nchans && !moved; c++) {
            const cs_chan_stats_t *s = cs_net_chan_stats(net, c);
            moved = s && (s->bytes || s->busy);
        }
        if (moved || !rec)
            return cs_error_set(err, CS_ERR_USAGE,
                                "the %s engine records no time buckets: a heatmap of a window "
                                "or frames cannot be drawn on it (the whole run can)",
                                cs_net_engine_name(net));
    }
    double span = (double)(t1 > t0 ? t1 - t0 : 1);
    for (int c = 0; c < nchans; c++) {
        cs_chan_stats_t w;
        const cs_chan_stats_t *s;
        if (whole) {
            s = cs_net_chan_stats(net, c);
            if (!s)
                continue;
        } else {
            cs_chanrec_window(rec, c, t0, t1, &w);
            s = &w;
        }
        d->active[c] = s->bytes > 0 || s->busy > 0 || s->stall > 0;
        d->val[c] = d->active[c] ? metric_value(s, m, span) : 0;
        if (m == CS_HEATMAP_K && d->active[c] && d->val[c] < 1)
            d->val[c] = 1; /* it carried something: someone wanted it */
    }
    return CS_OK;
}

double cs_heatmap_data_max(const cs_heatmap_data_t *d)
{
    double mx = 0;
    for (int c = 0; c < d->nchans; c++)
        if (d->active[c] && d->val[c] > mx)
            mx = d->val[c];
    return mx;
}

/* ---- strokes ------------------------------------------------------------------ */

static hm_stroke_t *stroke_new(cs_heatmap_t *h, int chan)
{
    if (h->nst == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 256;
        h->st = cs_realloc(h->st, (size_t)h->cap * sizeof *h->st);
    }
    hm_stroke_t *s = &h->st[h->nst++];
    memset(s, 0, sizeof *s);
    s->chan = chan;
    return s;
}

/* A straight lane from (x0, y0) to (x1, y1), moved `off` to the right of
 * its direction and shortened by `gap` at both ends. */
static void add_line(cs_heatmap_t *h, int chan, double x0, double y0, double x1, double y1,
                     double off, double gap)
{
    double dx = x1 - x0, dy = y1 - y0, len = hypot(dx, dy);
    if (len <= 0)
        return;
    dx /= len;
    dy /= len;
    if (2 * gap > 0.8 * len)
        gap = 0.4 * len;
    hm_stroke_t *s = stroke_new(h, chan);
    s->v[0] = x0 + dx * gap - dy * off;
    s->v[1] = y0 + dy * gap + dx * off;
    s->v[2] = x1 - dx * gap - dy * off;
    s->v[3] = y1 - dy * gap + dx * off;
}

/* An arc lane around (cx, cy) of radius r from angle a0 to a1 (either
 * direction; angles grow clockwise on screen). */
static void add_arc(cs_heatmap_t *h, int chan, double cx, double cy, double r, double a0,
                    double a1)
{
    hm_stroke_t *s = stroke_new(h, chan);
    s->arc = 1;
    s->v[0] = cx;
    s->v[1] = cy;
    s->v[2] = r;
    s->v[3] = a0;
    s->v[4] = a1;
}

/* The strokes of every channel, in channel order, by `one`. */
static void build_strokes(cs_heatmap_t *h, void (*one)(cs_heatmap_t *h, int c))
{
    h->first = cs_malloc(((size_t)h->nchans + 1) * sizeof *h->first);
    for (int c = 0; c < h->nchans; c++) {
        h->first[c] = h->nst;
        one(h, c);
    }
    h->first[h->nchans] = h->nst;
}

/* A drawing of lanes, one per channel (grids and 3-D slices): the lane
 * width, node size and labels they share, then every channel's strokes. */
static void lanes_init(cs_heatmap_t *h, int kind, void (*one)(cs_heatmap_t *h, int c))
{
    h->kind = kind;
    h->lane = 0.15;
    h->node_r = 0.3;
    h->label_nodes = 1;
    build_strokes(h, one);
}

/* ---- grids ------------------------------------------------------------------------ */

/* A grid is drawn in display coordinates (x = column, y = row, 1 unit
 * between nodes).  Three ways from the machine's rows x cols:
 *   plain   display = logical;
 *   bands   a grid much wider than the map is cut into bands of bw columns
 *           stacked downwards (a gap between them); a row's link from the
 *           end of one band to the start of the next leaves the band's
 *           right edge and enters the next band's left edge, like a wrap;
 *   fold    a line (1 x n) longer than FOLD_MIN is folded into a snake
 *           (row 0 left to right, row 1 right to left, ...), so that
 *           neighbours stay adjacent. */
static void grid_logical(const cs_heatmap_t *h, int node, int *r, int *c)
{
    int k = h->depth > 1 ? node % (h->rows * h->cols) : node; /* within its slice */
    *r = k / h->cols;
    *c = k % h->cols;
}

/* A 3-D lattice's node: slice z = node / (rows * cols) is the z-th of the
 * slices' grid (scols of them a row), the node at its row and column. */
static void slice_pos(const cs_heatmap_t *h, int node, int *r, int *c)
{
    int z = node / (h->rows * h->cols), lr, lc;
    grid_logical(h, node, &lr, &lc);
    *c = (z % h->scols) * (h->cols + SLICE_GAP_X) + lc;
    *r = (z / h->scols) * (h->rows + SLICE_GAP_Y) + lr;
}

static void grid_pos(const cs_heatmap_t *h, int node, int *r, int *c)
{
    if (h->depth > 1) {
        slice_pos(h, node, r, c);
        return;
    }
    if (h->fold) {
        *r = node / h->dcols;
        int i = node % h->dcols;
        *c = *r % 2 == 0 ? i : h->dcols - 1 - i; /* a snake */
        return;
    }
    int lr, lc;
    grid_logical(h, node, &lr, &lc);
    *c = lc % h->dcols;
    *r = (lc / h->dcols) * (h->rows + h->gap) + lr;
}

/* Two stubs for a link whose ends are not side by side on the page: out of
 * u's side in direction (dx, dy), into v from the opposite side. */
static void add_stubs(cs_heatmap_t *h, int c, int u, int v, int dx, int dy)
{
    int r0, c0, r1, c1;
    double gap = 0.2, edge = 0.62, off = 0.75 * h->lane;
    grid_pos(h, u, &r0, &c0);
    grid_pos(h, v, &r1, &c1);
    add_line(h, c, c0 + dx * gap, r0 + dy * gap, c0 + dx * edge, r0 + dy * edge, off, 0);
    add_line(h, c, c1 - dx * edge, r1 - dy * edge, c1 - dx * gap, r1 - dy * gap, off, 0);
}

static void grid_channel(cs_heatmap_t *h, int c)
{
    int u = cs_topo_channel_src(h->t, c), v = cs_topo_channel_dst(h->t, c);
    int r0, c0, r1, c1, lr0, lc0, lr1, lc1;
    double off = 0.75 * h->lane;
    grid_pos(h, u, &r0, &c0);
    grid_pos(h, v, &r1, &c1);
    if (abs(r1 - r0) + abs(c1 - c0) == 1) {
        add_line(h, c, c0, r0, c1, r1, off, 0.2);
        return;
    }
    if (!h->fold) {
        grid_logical(h, u, &lr0, &lc0);
        grid_logical(h, v, &lr1, &lc1);
        if (lr0 == lr1 && (lc1 == (lc0 + 1) % h->cols || lc0 == (lc1 + 1) % h->cols)) {
            add_stubs(h, c, u, v, lc1 == (lc0 + 1) % h->cols ? 1 : -1, 0);
            return;
        }
        if (lc0 == lc1 && (lr1 == (lr0 + 1) % h->rows || lr0 == (lr1 + 1) % h->rows)) {
            add_stubs(h, c, u, v, 0, lr1 == (lr0 + 1) % h->rows ? 1 : -1);
            return;
        }
    }
    add_line(h, c, c0, r0, c1, r1, off, 0.15); /* any other link: a chord */
}

static void map_fit(cs_heatmap_t *h, double x0, double y0, double x1, double y1)
{
    h->bx0 = x0;
    h->by0 = y0;
    h->bx1 = x1;
    h->by1 = y1;
    double sw = (x1 - x0) > 0 ? (h->fr.mx1 - h->fr.mx0) / (x1 - x0) : 1;
    double sh = (y1 - y0) > 0 ? (h->fr.my1 - h->fr.my0) / (y1 - y0) : 1;
    h->s = sw < sh ? sw : sh;
    h->ox = (h->fr.mx0 + h->fr.mx1) / 2 - h->s * (x0 + x1) / 2;
    h->oy = (h->fr.my0 + h->fr.my1) / 2 - h->s * (y0 + y1) / 2;
}

/* The display grid: margins for stubs, then the fit. */
static void grid_fit(cs_heatmap_t *h)
{
    int stubs_x = !h->fold && (h->bands > 1 || (h->wrap_x && h->cols > 2));
    int stubs_y = !h->fold && h->wrap_y && h->rows > 2;
    double mx = stubs_x ? 0.75 : 0.5, my = stubs_y ? 0.75 : 0.5;
    map_fit(h, -mx, -my, h->dcols - 1 + mx, h->drows - 1 + my);
}

/* Tiles over the display grid: square blocks of nodes about two figure
 * units wide, one pixel each. */
static void tiles_init(cs_heatmap_t *h)
{
    h->kind = L_TILES;
    h->tile = (int)ceil(2.0 / h->s);
    h->trows = (h->drows + h->tile - 1) / h->tile;
    h->tcols = (h->dcols + h->tile - 1) / h->tile;
}

static void build_grid(cs_heatmap_t *h, const cs_machine_layout_t *lay)
{
    const char *shape = cs_topo_name(h->t);
    int rows = lay->rows, cols = lay->cols, line = lay->line;
    int P = rows * cols;
    h->rows = rows;
    h->cols = cols;
    h->wrap_x = lay->wrap_x;
    h->wrap_y = lay->wrap_y;
    h->bands = 1;
    h->dcols = cols;
    h->drows = rows;
    if (line && P >= FOLD_MIN) {
        /* a snake about as wide as the map is, in proportion */
        double aspect = (h->fr.mx1 - h->fr.mx0) / (h->fr.my1 - h->fr.my0);
        h->fold = 1;
        h->dcols = (int)ceil(sqrt(P * aspect));
        h->drows = (P + h->dcols - 1) / h->dcols;
        h->wrap_x = h->wrap_y = 0;
    } else if (!line) {
        /* bands: as many as make the nodes largest */
        double best = 0;
        h->gap = h->wrap_y && rows > 2 ? 2 : 1;
        for (int nb = 1; nb <= cols && nb <= 64; nb++) {
            int bw = (cols + nb - 1) / nb;
            if (nb > 1 && (bw - 1) * nb >= cols)
                continue; /* the same band width with fewer bands */
            double w = bw + 0.5 + (nb > 1 || h->wrap_x ? 0.5 : 0);
            double hh = nb * rows + (nb - 1) * h->gap + (h->wrap_y ? 0.5 : 0);
            double cell = fmin((h->fr.mx1 - h->fr.mx0) / w, (h->fr.my1 - h->fr.my0) / hh);
            if (cell > best * 1.05) { /* a band more only if clearly better */
                best = cell;
                h->bands = nb;
                h->dcols = bw;
            }
        }
        h->drows = h->bands * rows + (h->bands - 1) * h->gap;
    }
    grid_fit(h);
    if (h->s < MIN_CELL) {
        /* tiles, over the plain (or folded) grid */
        if (!h->fold) {
            h->bands = 1;
            h->dcols = cols;
            h->drows = rows;
            h->gap = 0;
            grid_fit(h);
        }
        tiles_init(h);
        snprintf(h->note, sizeof h->note,
                 "%s %d x %d%s in tiles of %d x %d nodes: each tile shows the busiest link "
                 "leaving one of its nodes",
                 shape, rows, cols, h->fold ? " (folded into a snake)" : "", h->tile, h->tile);
        return;
    }
    lanes_init(h, L_GRID, grid_channel);
    if (h->fold)
        snprintf(h->note, sizeof h->note,
                 "%s of %d nodes folded into a snake (row by row, turning at the ends) \xc2\xb7 "
                 "each link direction is its own lane, traffic keeps right", shape, P);
    else
        snprintf(h->note, sizeof h->note,
                 "%s %d x %d%s \xc2\xb7 each link direction is its own lane, traffic keeps right "
                 "(arrows)%s", shape, rows, cols,
                 h->bands > 1 ? " in bands of columns" : "",
                 h->bands > 1 || h->wrap_x
                     ? " \xc2\xb7 links cut at an edge continue at the opposite one"
                     : "");
}

/* ---- 3-D lattices: slices side by side --------------------------------------------- */

/* Each channel of a 3-D lattice is exactly one lane, so that every
 * channel's load shows once:
 *   x and y links  lanes between neighbours inside a slice, as on a grid;
 *   x and y wraps  one short lane out of the source node's side, at the slice's
 *                  edge (the way the link leaves);
 *   z links        a short diagonal mark beside the source node, up-right
 *                  for z + 1 and down-left for z - 1 (the way the slices
 *                  run on the page).  Marks sit in the corners that the
 *                  x and y lanes leave free, one per corner and node, so
 *                  they never cross a lane; arcs between slices would
 *                  cross whole slices and hide each other. */
static void slice_channel(cs_heatmap_t *h, int c)
{
    int u = cs_topo_channel_src(h->t, c), v = cs_topo_channel_dst(h->t, c);
    int S = h->rows * h->cols, zu = u / S, zv = v / S;
    int r0, c0, r1, c1, lr0, lc0, lr1, lc1;
    double off = 0.75 * h->lane, gap = 0.2, edge = 0.62;
    grid_pos(h, u, &r0, &c0);
    grid_pos(h, v, &r1, &c1);
    grid_logical(h, u, &lr0, &lc0);
    grid_logical(h, v, &lr1, &lc1);
    if (zu == zv && abs(lr1 - lr0) + abs(lc1 - lc0) == 1) {
        add_line(h, c, c0, r0, c1, r1, off, 0.2);
    } else if (zu == zv && lr0 == lr1 &&
               (lc1 == (lc0 + 1) % h->cols || lc0 == (lc1 + 1) % h->cols)) {
        int dx = lc1 == (lc0 + 1) % h->cols ? 1 : -1;
        add_line(h, c, c0 + dx * gap, r0, c0 + dx * edge, r0, off, 0);
    } else if (zu == zv && lc0 == lc1 &&
               (lr1 == (lr0 + 1) % h->rows || lr0 == (lr1 + 1) % h->rows)) {
        int dy = lr1 == (lr0 + 1) % h->rows ? 1 : -1;
        add_line(h, c, c0, r0 + dy * gap, c0, r0 + dy * edge, off, 0);
    } else if (lr0 == lr1 && lc0 == lc1) {
        /* z: +1 next slice (or the wrap from the last to the first) */
        int dz = zv - zu, up = dz == 1 || (h->wrap_z && dz == 1 - h->depth);
        double k = up ? 1 : -1, a = 0.25, b = 0.47;
        add_line(h, c, c0 + k * a, r0 - k * a, c0 + k * b, r0 - k * b, 0, 0);
    } else {
        add_line(h, c, c0, r0, c1, r1, off, 0.15); /* any other link: a chord */
    }
}

/* The slices in srows x scols: the arrangement that makes the nodes
 * largest (a row of slices more only if clearly better), then the fit with
 * room for stubs, marks and labels; tiles when even that is too small. */
static void build_slices(cs_heatmap_t *h, const cs_machine_layout_t *lay)
{
    const char *shape = cs_topo_name(h->t);
    int rows = lay->rows, cols = lay->cols, Z = lay->depth;
    double m = SLICE_PAD + 0.1, best = 0;
    h->rows = rows;
    h->cols = cols;
    h->depth = Z;
    h->wrap_x = lay->wrap_x;
    h->wrap_y = lay->wrap_y;
    h->wrap_z = lay->wrap_z;
    h->bands = 1;
    for (int nr = 1; nr <= Z; nr++) {
        int nc = (Z + nr - 1) / nr;
        if (nr > 1 && (nr - 1) * nc >= Z)
            continue; /* the same slices a row with fewer rows */
        double w = nc * cols + (nc - 1) * SLICE_GAP_X - 1 + 2 * m;
        double hh = nr * rows + (nr - 1) * SLICE_GAP_Y - 1 + 2 * m + SLICE_LABEL;
        double cell = fmin((h->fr.mx1 - h->fr.mx0) / w, (h->fr.my1 - h->fr.my0) / hh);
        if (cell > best * 1.05) {
            best = cell;
            h->srows = nr;
            h->scols = nc;
        }
    }
    h->dcols = h->scols * cols + (h->scols - 1) * SLICE_GAP_X;
    h->drows = h->srows * rows + (h->srows - 1) * SLICE_GAP_Y;
    map_fit(h, -m, -m - SLICE_LABEL, h->dcols - 1 + m, h->drows - 1 + m);
    if (h->s < MIN_CELL) {
        tiles_init(h);
        snprintf(h->note, sizeof h->note,
                 "%s %dx%dx%d: %d z-slices, x across, y down, in tiles of %d x %d nodes: "
                 "each tile shows the busiest link leaving one of its nodes",
                 shape, Z, rows, cols, Z, h->tile, h->tile);
        return;
    }
    lanes_init(h, L_SLICES, slice_channel);
    snprintf(h->note, sizeof h->note,
             "%s %dx%dx%d: %d z-slices, x across, y down \xc2\xb7 lanes keep right "
             "\xc2\xb7 z links: a mark by the node, up-right to z+1, down-left to z-1%s",
             shape, Z, rows, cols, Z,
             h->wrap_x || h->wrap_y ? " \xc2\xb7 stubs at an edge wrap round" : "");
}

/* ---- circles ------------------------------------------------------------------------ */

/* Nodes on one circle: ring links as arcs (or every link as a chord). */
static void build_circle(cs_heatmap_t *h, int arcs, const int32_t *order)
{
    int P = h->nnodes;
    h->nx = cs_malloc((size_t)P * sizeof *h->nx);
    h->ny = cs_malloc((size_t)P * sizeof *h->ny);
    h->nrings = 1;
    h->ring_of = cs_calloc((size_t)P, sizeof *h->ring_of);
    h->ring_idx = cs_malloc((size_t)P * sizeof *h->ring_idx);
    h->ring_len = cs_malloc(sizeof *h->ring_len);
    h->ring_cx = cs_calloc(1, sizeof *h->ring_cx);
    h->ring_cy = cs_calloc(1, sizeof *h->ring_cy);
    h->ring_a0 = cs_malloc(sizeof *h->ring_a0);
    h->ring_dir = cs_malloc(sizeof *h->ring_dir);
    h->ring_len[0] = P;
    h->ring_a0[0] = -M_PI / 2;
    h->ring_dir[0] = 1;
    for (int k = 0; k < P; k++) {
        int u = order ? order[k] : k;
        double a = -M_PI / 2 + 2 * M_PI * k / P;
        h->ring_idx[u] = k;
        h->nx[u] = cos(a);
        h->ny[u] = sin(a);
    }
    double pad = P <= 48 ? 1.22 : 1.12;
    map_fit(h, -pad, -pad, pad, pad);
    /* chords fan out of a node: lanes thin enough to stay apart there */
    h->lane = arcs ? (P <= 64 ? 0.045 : P <= 512 ? 0.03 : 0.02)
                   : fmin(0.012, fmax(0.003, 0.2 / P));
    h->node_r = P <= 128 ? fmin(0.035, 0.25 * 2 * M_PI / P) : 0;
    h->label_nodes = P <= 48;
}

static void ring_channel(cs_heatmap_t *h, int c)
{
    int u = cs_topo_channel_src(h->t, c), v = cs_topo_channel_dst(h->t, c);
    int ru = h->ring_of[u], rv = h->ring_of[v];
    if (ru == rv && ru >= 0) {
        int n = h->ring_len[ru], iu = h->ring_idx[u], iv = h->ring_idx[v];
        int step = (iv - iu + n) % n == 1 ? 1 : (iu - iv + n) % n == 1 ? -1 : 0;
        if (n > 2 && step) {
            double da = 2 * M_PI / n * h->ring_dir[ru] * step;
            double a0 = h->ring_a0[ru] + 2 * M_PI / n * h->ring_dir[ru] * iu;
            double gap = fmin(0.12, 0.22 * fabs(da)) * (da > 0 ? 1 : -1);
            /* clockwise on screen (da > 0): the centre is on the right */
            double r = 1 + (da > 0 ? -1 : 1) * 0.9 * h->lane;
            add_arc(h, c, h->ring_cx[ru], h->ring_cy[ru], r, a0 + gap, a0 + da - gap);
            return;
        }
    }
    add_line(h, c, h->nx[u], h->ny[u], h->nx[v], h->ny[v], 0.8 * h->lane,
             h->node_r > 0 ? 1.6 * h->node_r : 0.02);
}

static void chord_channel(cs_heatmap_t *h, int c)
{
    int u = cs_topo_channel_src(h->t, c), v = cs_topo_channel_dst(h->t, c);
    add_line(h, c, h->nx[u], h->ny[u], h->nx[v], h->ny[v], 0.8 * h->lane,
             h->node_r > 0 ? 1.3 * h->node_r : 0);
}

/* ---- rings joined by links (the Cell's EIBs and the BIF) --------------------------- */

static int uf_find(int32_t *p, int x)
{
    while (p[x] != x)
        x = p[x] = p[p[x]];
    return x;
}

/* Finds the rings: the components left when the bridges are removed must
 * all be simple cycles of 3 or more nodes.  Returns 1 and fills the ring
 * fields, or 0 (the shape is something else). */
static int build_rings(cs_heatmap_t *h)
{
    int P = h->nnodes, L = h->nchans / 2, ok = 1;
    igraph_t g;
    igraph_vector_int_t br;
    cs_error_t e;
    if (P < 3)
        return 0;
    cs_topo_igraph_lock(); /* igraph is not thread-safe (topo/topo.h) */
    if (cs_topo_to_igraph(h->t, &g, &e)) {
        cs_topo_igraph_unlock();
        return 0;
    }
    uint8_t *bridge = cs_calloc((size_t)L + 1, 1);
    if (igraph_vector_int_init(&br, 0) == IGRAPH_SUCCESS) {
        if (igraph_bridges(&g, &br) == IGRAPH_SUCCESS)
            for (igraph_integer_t i = 0; i < igraph_vector_int_size(&br); i++)
                bridge[VECTOR(br)[i]] = 1;
        igraph_vector_int_destroy(&br);
    }
    igraph_destroy(&g);
    cs_topo_igraph_unlock();
    int32_t *uf = cs_malloc((size_t)P * sizeof *uf), *deg = cs_calloc((size_t)P, sizeof *deg);
    int32_t *nb = cs_malloc(2 * (size_t)P * sizeof *nb);
    int32_t *anchor_to = cs_malloc((size_t)P * sizeof *anchor_to);
    for (int i = 0; i < P; i++)
        uf[i] = i, anchor_to[i] = -1;
    for (int l = 0; l < L && ok; l++) {
        int u = cs_topo_channel_src(h->t, 2 * l), v = cs_topo_channel_dst(h->t, 2 * l);
        if (bridge[l]) {
            anchor_to[u] = v;
            anchor_to[v] = u;
            continue;
        }
        if (deg[u] == 2 || deg[v] == 2) {
            ok = 0;
            break;
        }
        nb[2 * u + deg[u]++] = v;
        nb[2 * v + deg[v]++] = u;
        uf[uf_find(uf, u)] = uf_find(uf, v);
    }
    for (int i = 0; i < P && ok; i++)
        ok = deg[i] == 2;
    if (ok) {
        /* rings numbered by their lowest node */
        h->ring_of = cs_malloc((size_t)P * sizeof *h->ring_of);
        h->ring_idx = cs_malloc((size_t)P * sizeof *h->ring_idx);
        int32_t *rid = cs_malloc((size_t)P * sizeof *rid);
        for (int i = 0; i < P; i++)
            rid[i] = -1;
        h->nrings = 0;
        for (int i = 0; i < P; i++) {
            int root = uf_find(uf, i);
            if (rid[root] < 0)
                rid[root] = h->nrings++;
            h->ring_of[i] = rid[root];
        }
        free(rid);
        int R = h->nrings;
        h->ring_len = cs_calloc((size_t)R, sizeof *h->ring_len);
        h->ring_cx = cs_calloc((size_t)R, sizeof *h->ring_cx);
        h->ring_cy = cs_calloc((size_t)R, sizeof *h->ring_cy);
        h->ring_a0 = cs_calloc((size_t)R, sizeof *h->ring_a0);
        h->ring_dir = cs_calloc((size_t)R, sizeof *h->ring_dir);
        int32_t *start = cs_malloc((size_t)R * sizeof *start);
        for (int r = 0; r < R; r++)
            start[r] = -1;
        for (int i = 0; i < P; i++) {
            int r = h->ring_of[i];
            h->ring_len[r]++;
            /* start at the node with a link to a later ring (it faces right),
             * else to an earlier one, else the lowest */
            if (start[r] < 0 || (anchor_to[i] >= 0 && anchor_to[start[r]] < 0))
                start[r] = i;
        }
        for (int r = 0; r < R; r++) {
            int a = start[r], later = anchor_to[a] >= 0 && h->ring_of[anchor_to[a]] > r;
            int earlier = anchor_to[a] >= 0 && !later;
            h->ring_cx[r] = 2.9 * r;
            h->ring_a0[r] = earlier ? M_PI : 0;
            h->ring_dir[r] = earlier ? -1 : 1; /* mirrored, so the rings face each other */
            if (!earlier && !later)
                h->ring_a0[r] = -M_PI / 2;
            /* walk the cycle from the anchor, first to its lower neighbour */
            int prev = -1, cur = a;
            for (int k = 0; k < h->ring_len[r]; k++) {
                h->ring_idx[cur] = k;
                int n0 = nb[2 * cur], n1 = nb[2 * cur + 1];
                int nxt = prev < 0 ? (n0 < n1 ? n0 : n1) : (n0 == prev ? n1 : n0);
                prev = cur;
                cur = nxt;
            }
        }
        free(start);
        h->nx = cs_malloc((size_t)P * sizeof *h->nx);
        h->ny = cs_malloc((size_t)P * sizeof *h->ny);
        for (int i = 0; i < P; i++) {
            int r = h->ring_of[i];
            double a = h->ring_a0[r] + 2 * M_PI / h->ring_len[r] * h->ring_dir[r] * h->ring_idx[i];
            h->nx[i] = h->ring_cx[r] + cos(a);
            h->ny[i] = h->ring_cy[r] + sin(a);
        }
        h->bridged = cs_calloc((size_t)P, 1);
        for (int i = 0; i < P; i++)
            h->bridged[i] = anchor_to[i] >= 0;
        map_fit(h, -1.3, -1.3, 2.9 * (R - 1) + 1.3, 1.3);
        h->lane = 0.05;
        h->node_r = 0.04;
        h->label_nodes = 1;
    }
    free(uf);
    free(deg);
    free(nb);
    free(anchor_to);
    free(bridge);
    return ok;
}

/* ---- graphs (igraph) ---------------------------------------------------------------- */

/* A node linked to every other one (a crossbar's hub, LogGP's switch), or
 * -1. */
static int star_hub(const cs_heatmap_t *h)
{
    int P = h->nnodes;
    if (P < 4)
        return -1;
    for (int u = 0; u < P; u++)
        if (cs_topo_degree(h->t, u) >= P - 1) {
            int leaves = 1;
            for (int v = 0; v < P && leaves; v++)
                leaves = v == u || cs_topo_find_channel(h->t, u, v) >= 0;
            if (leaves)
                return u;
        }
    return -1;
}

static void graph_finish(cs_heatmap_t *h);

static int build_graph(cs_heatmap_t *h, cs_error_t *err)
{
    int P = h->nnodes, hub = star_hub(h);
    h->nx = cs_malloc((size_t)P * sizeof *h->nx);
    h->ny = cs_malloc((size_t)P * sizeof *h->ny);
    for (int i = 0, k = 0; i < P; i++) {
        /* a star: the hub in the middle, the others on a circle */
        int n = hub >= 0 ? P - 1 : P;
        double a = -M_PI / 2 + 2 * M_PI * k / (n ? n : 1);
        if (i == hub) {
            h->nx[i] = h->ny[i] = 0;
            continue;
        }
        h->nx[i] = cos(a);
        h->ny[i] = sin(a);
        k++;
    }
    if (hub < 0 && P >= 3 && P <= KK_MAX_NODES) {
        igraph_t g;
        igraph_matrix_t xy;
        cs_topo_igraph_lock(); /* igraph is not thread-safe (topo/topo.h) */
        int rc = cs_topo_to_igraph(h->t, &g, err);
        if (rc) {
            cs_topo_igraph_unlock();
            return rc;
        }
        if (igraph_matrix_init(&xy, P, 2) != IGRAPH_SUCCESS) {
            igraph_destroy(&g);
            cs_topo_igraph_unlock();
            return cs_error_set(err, CS_ERR_NOMEM, "heatmap layout: out of memory");
        }
        /* seeded with the circle: deterministic, no random numbers */
        for (int i = 0; i < P; i++) {
            MATRIX(xy, i, 0) = h->nx[i];
            MATRIX(xy, i, 1) = h->ny[i];
        }
        igraph_error_t e = igraph_layout_kamada_kawai(&g, &xy, 1, 50 * P, 0, P, NULL, NULL,
                                                      NULL, NULL, NULL);
        if (e == IGRAPH_SUCCESS) {
            double lo[2] = {HUGE_VAL, HUGE_VAL}, hi[2] = {-HUGE_VAL, -HUGE_VAL};
            for (int i = 0; i < P; i++)
                for (int k = 0; k < 2; k++) {
                    lo[k] = fmin(lo[k], MATRIX(xy, i, k));
                    hi[k] = fmax(hi[k], MATRIX(xy, i, k));
                }
            double span = fmax(hi[0] - lo[0], hi[1] - lo[1]);
            if (span > 0)
                for (int i = 0; i < P; i++) {
                    h->nx[i] = 2 * (MATRIX(xy, i, 0) - (lo[0] + hi[0]) / 2) / span;
                    h->ny[i] = 2 * (MATRIX(xy, i, 1) - (lo[1] + hi[1]) / 2) / span;
                }
        }
        igraph_matrix_destroy(&xy);
        igraph_destroy(&g);
        cs_topo_igraph_unlock();
        if (e != IGRAPH_SUCCESS)
            return cs_error_set(err, e == IGRAPH_ENOMEM ? CS_ERR_NOMEM : CS_ERR_INTERNAL,
                                "heatmap layout: igraph Kamada-Kawai failed: %s",
                                igraph_strerror(e));
    }
    graph_finish(h);
    return CS_OK;
}

/* Lanes a fraction of the typical link, nodes of the closest pair, the
 * picture fitted: what a graph and a tree share once nodes are placed. */
static void graph_finish(cs_heatmap_t *h)
{
    int P = h->nnodes;
    double sum = 0, closest = HUGE_VAL;
    int n = 0;
    for (int c = 0; c < h->nchans; c += 2) {
        int u = cs_topo_channel_src(h->t, c), v = cs_topo_channel_dst(h->t, c);
        sum += hypot(h->nx[u] - h->nx[v], h->ny[u] - h->ny[v]);
        n++;
    }
    if (P <= 2000)
        for (int u = 0; u < P; u++)
            for (int v = u + 1; v < P; v++)
                closest = fmin(closest, hypot(h->nx[u] - h->nx[v], h->ny[u] - h->ny[v]));
    double typical = n ? sum / n : 1;
    h->lane = fmin(0.022, fmax(0.004, fmin(0.06 * typical, 0.3 * closest)));
    h->node_r = P <= 200 ? fmin(0.035, 0.3 * closest) : 0;
    h->label_nodes = P <= 64;
    map_fit(h, -1.15, -1.15, 1.15, 1.15);
}

/* A tree drawn by level (a fat-tree): each level a row, hosts (level 0) at
 * the bottom, a row's nodes in id order spread over the width, which keeps
 * a switch above the hosts it serves when ids follow the tree.  A row of
 * more than TREE_ROW nodes is drawn as TREE_ROW places, consecutive nodes
 * sharing one: their links overlap and the busiest is drawn on top (the
 * tiles' rule), so a fat-tree of thousands of hosts stays readable.
 * Returns the largest number of nodes a place stands for. */
#define TREE_ROW 64
static int build_tree(cs_heatmap_t *h, const int32_t *level)
{
    int most = 1;
    int P = h->nnodes, top = 0;
    int32_t *count, *seen;
    for (int i = 0; i < P; i++)
        top = level[i] > top ? level[i] : top;
    count = cs_calloc((size_t)top + 1, sizeof *count);
    seen = cs_calloc((size_t)top + 1, sizeof *seen);
    for (int i = 0; i < P; i++)
        count[level[i]]++;
    h->nx = cs_malloc((size_t)P * sizeof *h->nx);
    h->ny = cs_malloc((size_t)P * sizeof *h->ny);
    for (int i = 0; i < P; i++) {
        int l = level[i], places = count[l] > TREE_ROW ? TREE_ROW : count[l];
        int place = (int)((int64_t)seen[l]++ * places / count[l]);
        h->nx[i] = places > 1 ? -1 + 2.0 * (place + 0.5) / places : 0;
        h->ny[i] = top ? 1 - 2.0 * l / top : 0;
        if ((count[l] + places - 1) / places > most)
            most = (count[l] + places - 1) / places;
    }
    free(count);
    free(seen);
    graph_finish(h);
    return most;
}

/* ---- dragonfly ------------------------------------------------------------------------- */

/* What the machine calls its node groups, singular or plural ("node" on
 * Groq, "chip" on the Cell); "group(s)" for a machine without the word. */
static const char *heatmap_group_noun(const cs_heatmap_t *h, int plural)
{
    const char *const *w = h->m->type->group_noun;
    return w[0] ? w[plural] : plural ? "groups" : "group";
}

static void build_dragonfly(cs_heatmap_t *h)
{
    double size = fmin(h->fr.my1 - h->fr.my0 - 60, 0.46 * (h->fr.mx1 - h->fr.mx0));
    double top = (h->fr.my0 + h->fr.my1) / 2 - size / 2 + 10;
    h->ngroups = h->m->ngroups;
    h->mat_x = h->fr.mx0 + 34;
    h->mat_y = top;
    h->mat_size = size;
    h->agg = (int)ceil(h->ngroups / size); /* at least one unit per cell */
    if (h->agg < 1)
        h->agg = 1;
    /* the panel: a circle right of the matrix; its strokes come at write */
    double px0 = h->mat_x + size + 40, px1 = h->fr.mx1 + 20;
    double r = fmin((px1 - px0) / 2, size / 2) / 1.2;
    h->s = r;
    h->ox = (px0 + px1) / 2;
    h->oy = top + size / 2;
    h->lane = 0.05;
    h->node_r = 0.05;
    h->label_nodes = 1;
    h->panel_group = -1;
    h->first = cs_malloc(((size_t)h->nchans + 1) * sizeof *h->first);
    for (int c = 0; c <= h->nchans; c++)
        h->first[c] = 0;
    h->nx = cs_malloc((size_t)h->nnodes * sizeof *h->nx);
    h->ny = cs_malloc((size_t)h->nnodes * sizeof *h->ny);
    /* no node is placed until the panel's group is chosen (dragonfly_panel,
     * after the captions are fitted, whose footer counts the names that
     * fit): NAN is "not drawn" to them, where the fresh memory was read */
    for (int i = 0; i < h->nnodes; i++)
        h->nx[i] = h->ny[i] = NAN;
    /* the groups in the machine's own word (a Groq node of 8 TSPs is a
     * "node", as in the caption's "64 TSPs in 8 nodes") */
    const char *g = heatmap_group_noun(h, 0), *gs = heatmap_group_noun(h, 1);
    snprintf(h->note, sizeof h->note,
             "left: the busiest channel from each %s (row) to each %s (column); on the "
             "diagonal, inside the %s%s%s%s \xc2\xb7 right: the links of one %s", g, g, g,
             h->agg > 1 ? " (cells merge " : "", h->agg > 1 ? gs : "", h->agg > 1 ? ")" : "", g);
}

static int group_of(const cs_heatmap_t *h, int node) { return h->m->node_group[node]; }

/* The panel shows group g: its members on a circle, its links as chords. */
static void dragonfly_panel(cs_heatmap_t *h, int g)
{
    int n = 0, k = 0;
    h->panel_group = g;
    h->nst = 0;
    for (int i = 0; i < h->nnodes; i++)
        n += group_of(h, i) == g;
    for (int i = 0; i < h->nnodes; i++) {
        h->nx[i] = h->ny[i] = NAN;
        if (group_of(h, i) != g)
            continue;
        double a = -M_PI / 2 + 2 * M_PI * k++ / n;
        h->nx[i] = cos(a);
        h->ny[i] = sin(a);
    }
    for (int c = 0; c < h->nchans; c++) {
        int u = cs_topo_channel_src(h->t, c), v = cs_topo_channel_dst(h->t, c);
        h->first[c] = h->nst;
        if (group_of(h, u) == g && group_of(h, v) == g)
            add_line(h, c, h->nx[u], h->ny[u], h->nx[v], h->ny[v], 0.8 * h->lane,
                     1.4 * h->node_r);
    }
    h->first[h->nchans] = h->nst;
    h->label_nodes = n <= 48;
    if (n > 48)
        h->node_r = 0;
}

/* ---- construction ------------------------------------------------------------------------- */

static int groups_cover(const cs_machine_t *m)
{
    return m->node_group && m->ngroups > 1 &&
           (m->rank_nodes == 0 || m->rank_nodes == cs_topo_nodes(m->topo));
}

/* The layout of h->m on the canvas h->fr: every field below `fr` in
 * struct cs_heatmap.  On failure the caller frees what was built. */
static int heatmap_build(cs_heatmap_t *h, cs_error_t *err)
{
    const cs_machine_t *m = h->m;
    int rc = CS_OK;
    cs_machine_layout_t lay;
    /* the machine says which layout; what it cannot hold falls back to a graph */
    cs_machine_layout(m, &lay);
    cs_layout_kind_t hint = lay.kind;
    if (hint == CS_LAYOUT_GRID &&
        (lay.rows < 1 || lay.cols < 1 ||
         (int64_t)lay.rows * lay.cols * (lay.depth > 1 ? lay.depth : 1) != h->nnodes))
        hint = CS_LAYOUT_GRAPH;
    if (hint == CS_LAYOUT_DRAGONFLY && !groups_cover(m) &&
        !(lay.groups_all && m->node_group && m->ngroups > 1))
        hint = CS_LAYOUT_GRAPH;
    for (int i = 0; hint == CS_LAYOUT_TREE && i < h->nnodes; i++)
        if (!lay.level || lay.level[i] < 0)
            hint = CS_LAYOUT_GRAPH;

    switch (hint) {
    case CS_LAYOUT_GRID:
        if (lay.depth > 1)
            build_slices(h, &lay);
        else
            build_grid(h, &lay);
        break;
    case CS_LAYOUT_RING: {
        h->kind = L_RING;
        build_circle(h, 1, NULL);
        build_strokes(h, ring_channel);
        snprintf(h->note, sizeof h->note,
                 "%s of %d nodes \xc2\xb7 clockwise lanes inside, counter-clockwise outside "
                 "(traffic keeps right)", cs_topo_name(h->t), h->nnodes);
        break;
    }
    case CS_LAYOUT_CIRCLE: {
        h->kind = L_CIRCLE;
        int32_t *gray = NULL;
        if (lay.gray) {
            /* Gray-code order: dimension-0 neighbours sit side by side */
            gray = cs_malloc((size_t)h->nnodes * sizeof *gray);
            for (int i = 0; i < h->nnodes; i++)
                gray[i] = i ^ (i >> 1);
        }
        build_circle(h, 0, gray);
        free(gray);
        build_strokes(h, chord_channel);
        snprintf(h->note, sizeof h->note,
                 "%s of %d nodes on a circle%s \xc2\xb7 each link direction is its own chord, "
                 "traffic keeps right", cs_topo_name(h->t), h->nnodes,
                 lay.gray ? " in Gray-code order" : "");
        break;
    }
    case CS_LAYOUT_RINGS:
        if (build_rings(h)) {
            h->kind = L_RINGS;
            build_strokes(h, ring_channel);
            snprintf(h->note, sizeof h->note,
                     "%d ring%s of %d nodes%s \xc2\xb7 clockwise lanes inside, counter-clockwise "
                     "outside, straight links as two lanes (traffic keeps right)", h->nrings,
                     h->nrings > 1 ? "s" : "", h->ring_len[0],
                     h->nrings > 1 ? " joined by straight links" : "");
            break;
        }
        /* not rings after all: a graph */
        free(h->ring_of);
        free(h->ring_idx);
        h->ring_of = h->ring_idx = NULL;
        /* fall through */
    case CS_LAYOUT_GRAPH:
    default:
        h->kind = L_GRAPH;
        rc = build_graph(h, err);
        if (rc == CS_OK)
            build_strokes(h, chord_channel);
        snprintf(h->note, sizeof h->note,
                 "%s: %d nodes placed by %s \xc2\xb7 each link direction is its own lane, "
                 "traffic keeps right", cs_topo_name(h->t), h->nnodes,
                 star_hub(h) >= 0 ? "a star (the hub in the middle)"
                 : h->nnodes >= 3 && h->nnodes <= KK_MAX_NODES ? "igraph (Kamada-Kawai)"
                                                               : "a circle");
        break;
    case CS_LAYOUT_DRAGONFLY:
        h->kind = L_DRAGONFLY;
        build_dragonfly(h);
        break;
    case CS_LAYOUT_TREE: {
        h->kind = L_TREE;
        int most = build_tree(h, lay.level);
        build_strokes(h, chord_channel);
        if (most > 1)
            snprintf(h->note, sizeof h->note,
                     "%s: %d nodes drawn by level (hosts at the bottom), at most %d places a "
                     "row: up to %d nodes share one, and their links show the busiest",
                     cs_topo_name(h->t), h->nnodes, TREE_ROW, most);
        else
            snprintf(h->note, sizeof h->note,
                     "%s: %d nodes drawn by level (hosts at the bottom) \xc2\xb7 each link "
                     "direction is its own lane, traffic keeps right", cs_topo_name(h->t),
                     h->nnodes);
        break;
    }
    }
    return rc;
}

/* Frees what heatmap_build made (not h). */
static void heatmap_release(cs_heatmap_t *h)
{
    free(h->st);
    free(h->first);
    free(h->nx);
    free(h->ny);
    free(h->ring_of);
    free(h->ring_idx);
    free(h->ring_len);
    free(h->ring_cx);
    free(h->ring_cy);
    free(h->ring_a0);
    free(h->ring_dir);
    free(h->bridged);
}

/* A fresh heatmap of m on canvas fr. */
static int heatmap_create(const cs_machine_t *m, const hm_frame_t *fr, cs_heatmap_t **out,
                          cs_error_t *err)
{
    cs_heatmap_t *h = cs_calloc(1, sizeof *h);
    *out = NULL;
    h->m = m;
    h->t = m->topo;
    h->nnodes = cs_topo_nodes(m->topo);
    h->nchans = cs_topo_channels(m->topo);
    h->fr = *fr;
    int rc = heatmap_build(h, err);
    if (rc) {
        heatmap_release(h);
        free(h);
        return rc;
    }
    *out = h;
    return CS_OK;
}

int cs_heatmap_new(const cs_machine_t *m, cs_heatmap_t **out, cs_error_t *err)
{
    hm_frame_t fr;
    frame_set(&fr, NULL, 1, 1, 0, 1);
    return heatmap_create(m, &fr, out, err);
}

/* Lays h out again on canvas fr (a new size, more caption lines): built
 * aside first, so that h is unchanged when that fails. */
static int heatmap_relayout(cs_heatmap_t *h, const hm_frame_t *fr, cs_error_t *err)
{
    cs_heatmap_t *n;
    int rc = heatmap_create(h->m, fr, &n, err);
    if (rc)
        return rc;
    heatmap_release(h);
    *h = *n;
    free(n);
    return CS_OK;
}

void cs_heatmap_free(cs_heatmap_t *h)
{
    if (!h)
        return;
    heatmap_release(h);
    free(h);
}

const char *cs_heatmap_layout_name(const cs_heatmap_t *h) { return layout_names[h->kind]; }

/* ---- colours ------------------------------------------------------------------------------- */

static const double idle_rgb[3] = {0.84, 0.84, 0.84};

void cs_heatmap_hot_rgb(double rgb[3]) { cs_fig_viridis(1, rgb); }

/* Position of a value on the scale, 0..1. */
static double scale_t(const cs_heatmap_t *h, double v)
{
    if (h->d->metric == CS_HEATMAP_K)
        return h->kmax > h->klo ? (v - h->klo) / (h->kmax - h->klo) : 1;
    return h->vmax > h->vlo ? (v - h->vlo) / (h->vmax - h->vlo) : 0;
}

static void value_rgb(const cs_heatmap_t *h, int c, double rgb[3])
{
    if (!h->d->active[c]) {
        memcpy(rgb, idle_rgb, sizeof idle_rgb);
        return;
    }
    cs_fig_viridis(scale_t(h, h->d->val[c]), rgb);
}

/* ---- drawing ----------------------------------------------------------------------------- */

static double fx(const cs_heatmap_t *h, double x) { return h->ox + h->s * x; }
static double fy(const cs_heatmap_t *h, double y) { return h->oy + h->s * y; }

/* Strokes the current path (a dark rim first when `outline`) and fills the
 * arrowhead with tip (tx, ty) and base corners (x1, y1), (x2, y2).  Straight
 * and arc lanes ended in the same lines; this is their one copy. */
static void stroke_with_head(cairo_t *cr, double w, int outline, int arrow, double tx, double ty,
                             double x1, double y1, double x2, double y2)
{
    if (outline) {
        cairo_set_line_width(cr, w + 1.6);
        cairo_stroke_preserve(cr);
    }
    cairo_set_line_width(cr, w);
    cairo_stroke(cr);
    if (arrow) {
        cairo_move_to(cr, tx, ty);
        cairo_line_to(cr, x1, y1);
        cairo_line_to(cr, x2, y2);
        cairo_close_path(cr);
        cairo_fill(cr);
    }
}

/* A lane with its arrowhead, in figure units. */
static void draw_stroke(cairo_t *cr, const cs_heatmap_t *h, const hm_stroke_t *s, double w,
                        int arrow, int outline)
{
    double ah = 1.5 * w, aw = 0.95 * w; /* arrowhead length, half width */
    if (!s->arc) {
        double x0 = fx(h, s->v[0]), y0 = fy(h, s->v[1]), x1 = fx(h, s->v[2]), y1 = fy(h, s->v[3]);
        double dx = x1 - x0, dy = y1 - y0, len = hypot(dx, dy);
        if (len <= 0)
            return;
        dx /= len;
        dy /= len;
        if (arrow && len < 2.5 * ah)
            arrow = 0;
        double bx = arrow ? x1 - dx * ah : x1, by = arrow ? y1 - dy * ah : y1;
        cairo_move_to(cr, x0, y0);
        cairo_line_to(cr, bx + (arrow ? dx * 0.5 : 0), by + (arrow ? dy * 0.5 : 0));
        stroke_with_head(cr, w, outline, arrow, x1, y1, bx - dy * aw, by + dx * aw,
                         bx + dy * aw, by - dx * aw);
        return;
    }
    double cx = fx(h, s->v[0]), cy = fy(h, s->v[1]), r = h->s * s->v[2];
    double a0 = s->v[3], a1 = s->v[4], sign = a1 >= a0 ? 1 : -1;
    double span = fabs(a1 - a0) * r;
    if (arrow && span < 2.5 * ah)
        arrow = 0;
    double ab = arrow ? a1 - sign * ah / r : a1;
    cairo_new_path(cr);
    if (sign > 0)
        cairo_arc(cr, cx, cy, r, a0, ab + sign * 0.5 / r);
    else
        cairo_arc_negative(cr, cx, cy, r, a0, ab + sign * 0.5 / r);
    stroke_with_head(cr, w, outline, arrow, cx + r * cos(a1), cy + r * sin(a1),
                     cx + (r - aw) * cos(ab), cy + (r - aw) * sin(ab), cx + (r + aw) * cos(ab),
                     cy + (r + aw) * sin(ab));
}

/* Channels in drawing order: idle first, then by rising value (ties by id),
 * so that the hottest lanes lie on top. */
typedef struct hm_key {
    double v; /* -1 for idle */
    int32_t c;
} hm_key_t;

static int by_value(const void *a, const void *b)
{
    const hm_key_t *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    return x->c - y->c;
}

static const char *node_text(const cs_heatmap_t *h, int node, char *buf, size_t len)
{
    const char *s = h->m->type->node_label ? h->m->type->node_label(h->m, node, buf, len) : NULL;
    if (!s) {
        snprintf(buf, len, "%d", node);
        s = buf;
    }
    return s;
}

/* The font size at which node i's name fits inside its square on a grid
 * (r: the square's side, figure units), or 0 when it does not fit. */
static double grid_label_size(cairo_t *cr, const char *s, double r)
{
    double size = fmin(11, 0.5 * r);
    cs_fig_font(cr, size, 0);
    while (size > 6 && cs_fig_text_width(cr, s) > r - 3)
        cs_fig_font(cr, size -= 0.5, 0);
    if (size < 6.5 || cs_fig_text_width(cr, s) > r - 2)
        return 0;
    return size;
}

/* Where node i's name goes outside its circle (rings, circles, graphs):
 * the anchor (tx, ty) and alignment (ax, ay) for cs_fig_text, and its box.
 * 0: the node has no name there. */
static int ring_label_at(cairo_t *cr, const cs_heatmap_t *h, int i, const char *s, double *tx,
                         double *ty, double *ax, double *ay, double box[4])
{
    double r = h->node_r * h->s;
    if (!h->nx || isnan(h->nx[i]))
        return 0;
    double x = fx(h, h->nx[i]), y = fy(h, h->ny[i]);
    /* outward from the circle's centre; a node with a link off the
     * circle (the BIF) gets its name turned upwards, off that link */
    double cx = fx(h, 0), cy = fy(h, 0);
    if (h->ring_of) {
        cx = fx(h, h->ring_cx[h->ring_of[i]]);
        cy = fy(h, h->ring_cy[h->ring_of[i]]);
    }
    double dx = x - cx, dy = y - cy, len = hypot(dx, dy);
    if (len < 1e-6)
        return 0; /* the hub of a star: its lanes leave no room, it is the hollow one */
    dx /= len;
    dy /= len;
    if (h->bridged && h->bridged[i]) {
        /* between the ring and the straight link, upwards */
        dx *= 0.707;
        dy = dy * 0.707 - 0.707;
        len = hypot(dx, dy);
        dx /= len;
        dy /= len;
    }
    double k = r + 10 + (h->kind == L_RING || h->kind == L_RINGS ? 0.1 * h->s : 0);
    cs_fig_font(cr, 11, 0);
    double w = cs_fig_text_width(cr, s), th = 11;
    *tx = x + dx * k;
    *ty = y + dy * k;
    *ax = 0.5 - 0.5 * dx;
    *ay = 0.5 - 0.5 * dy;
    box[0] = *tx - *ax * w;
    box[1] = *ty - *ay * th;
    box[2] = box[0] + w;
    box[3] = box[1] + th;
    return 1;
}

/* Which node names are drawn (keep[i], may be NULL) and how many are left
 * out: on grids those that do not fit their square, elsewhere those that
 * would overlap a name already placed (nodes in id order: ranks before
 * network elements) or run off the canvas. */
static int node_labels(cairo_t *cr, const cs_heatmap_t *h, uint8_t *keep)
{
    char buf[48];
    double r = h->node_r * h->s;
    int dropped = 0, nbox = 0;
    if (!h->label_nodes || r < 1.2)
        return 0;
    double *boxes = cs_malloc(4 * (size_t)h->nnodes * sizeof *boxes);
    for (int i = 0; i < h->nnodes; i++) {
        const char *s = node_text(h, i, buf, sizeof buf);
        int ok = 0;
        if (h->kind == L_GRID || h->kind == L_SLICES) {
            ok = grid_label_size(cr, s, r) > 0;
        } else {
            double tx, ty, ax, ay, *b = boxes + 4 * nbox;
            if (ring_label_at(cr, h, i, s, &tx, &ty, &ax, &ay, b)) {
                ok = b[0] >= 2 && b[2] <= h->fr.W - 2 && b[1] >= 0 && b[3] <= h->fr.H;
                for (int j = 0; ok && j < nbox; j++) {
                    const double *o = boxes + 4 * j;
                    ok = b[2] + 2 <= o[0] || o[2] + 2 <= b[0] || b[3] <= o[1] || o[3] <= b[1];
                }
                nbox += ok;
            } else {
                continue; /* no name there (a star's hub, a node not drawn) */
            }
        }
        dropped += !ok;
        if (keep)
            keep[i] = (uint8_t)ok;
    }
    free(boxes);
    return dropped;
}

/* Node markers and their names: inside the square on grids (when the
 * name fits), outside the circle on rings and circles (unless it would
 * overlap another; the footer then says so).  Nodes that cannot run ranks
 * (network elements only) are drawn hollow. */
static void draw_nodes(cairo_t *cr, const cs_heatmap_t *h)
{
    char buf[48];
    double r = h->node_r * h->s;
    int rank_nodes = h->m->rank_nodes;
    if (r < 1.2)
        return;
    uint8_t *keep = cs_calloc((size_t)h->nnodes + 1, 1);
    node_labels(cr, h, keep);
    for (int i = 0; i < h->nnodes; i++) {
        double x, y;
        int hollow = rank_nodes > 0 && i >= rank_nodes;
        const char *s = h->label_nodes && keep[i] ? node_text(h, i, buf, sizeof buf) : NULL;
        if (h->kind == L_GRID || h->kind == L_SLICES) {
            int rr, cc;
            grid_pos(h, i, &rr, &cc);
            x = fx(h, cc);
            y = fy(h, rr);
            cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
            cairo_rectangle(cr, x - r / 2, y - r / 2, r, r);
            cairo_fill(cr);
            if (!s)
                continue;
            cs_fig_font(cr, grid_label_size(cr, s, r), 0);
            cairo_set_source_rgb(cr, 1, 1, 1);
            cs_fig_text(cr, x, y, s, 0.5, 0.5);
            continue;
        }
        if (!h->nx || isnan(h->nx[i]))
            continue;
        x = fx(h, h->nx[i]);
        y = fy(h, h->ny[i]);
        cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
        cairo_new_sub_path(cr);
        cairo_arc(cr, x, y, r, 0, 2 * M_PI);
        if (hollow) {
            cairo_set_source_rgb(cr, 1, 1, 1);
            cairo_fill_preserve(cr);
            cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
            cairo_set_line_width(cr, 1.5);
            cairo_stroke(cr);
        } else {
            cairo_fill(cr);
        }
        double tx, ty, ax, ay, box[4];
        if (!s || !ring_label_at(cr, h, i, s, &tx, &ty, &ax, &ay, box))
            continue;
        cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
        cs_fig_font(cr, 11, 0);
        cs_fig_text(cr, tx, ty, s, ax, ay);
    }
    free(keep);
}

/* Each slice's panel and its label. */
static void draw_slices(cairo_t *cr, const cs_heatmap_t *h)
{
    double size = fmin(14, fmax(11, 0.45 * h->s));
    cs_fig_font(cr, size, 0);
    for (int z = 0; z < h->depth; z++) {
        int r, c;
        char text[32];
        slice_pos(h, z * h->rows * h->cols, &r, &c);
        double x0 = fx(h, c - SLICE_PAD), y0 = fy(h, r - SLICE_PAD);
        cairo_set_source_rgb(cr, 0.95, 0.95, 0.95);
        cairo_rectangle(cr, x0, y0, h->s * (h->cols - 1 + 2 * SLICE_PAD),
                        h->s * (h->rows - 1 + 2 * SLICE_PAD));
        cairo_fill(cr);
        snprintf(text, sizeof text, "z=%d", z);
        cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
        cs_fig_text(cr, fx(h, c + (h->cols - 1) / 2.0), y0 - 4, text, 0.5, 1);
    }
}

static void draw_strokes(cairo_t *cr, const cs_heatmap_t *h)
{
    double w = h->lane * h->s;
    int arrows = w >= 4, outline = w >= 5;
    hm_key_t *order = cs_malloc(((size_t)h->nchans + 1) * sizeof *order);
    for (int c = 0; c < h->nchans; c++)
        order[c] = (hm_key_t){h->d->active[c] ? h->d->val[c] : -1, c};
    qsort(order, (size_t)h->nchans, sizeof *order, by_value);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
    if (w < 0.6)
        w = 0.6;
    for (int i = 0; i < h->nchans; i++) {
        int c = order[i].c;
        double rgb[3];
        value_rgb(h, c, rgb);
        for (int k = h->first[c]; k < h->first[c + 1]; k++) {
            if (outline && h->d->active[c]) {
                /* a dark rim first, so that the pale end of the scale
                 * stands out from the white page */
                cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
                draw_stroke(cr, h, &h->st[k], w + 1.4, arrows, 0);
            }
            cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
            draw_stroke(cr, h, &h->st[k], h->d->active[c] ? w : 0.7 * w, arrows, 0);
        }
    }
    free(order);
}

/* The tile raster and the dragonfly group matrix both draw cells that each
 * gather channels (state 0: nothing, 1: only idle channels, 2: an active
 * one, best: the busiest active value); these two are their one copy of
 * the gathering and of the painting. */
static void cell_take(int8_t *state, double *best, int k, double val)
{
    if (state[k] != 2 || val > best[k])
        best[k] = val;
    state[k] = 2;
}

/* Paints rows x cols cells one pixel each, the raster's origin at (x, y)
 * and a cell `scale` units wide, clipped to w x hgt cells. */
static void paint_cells(cairo_t *cr, const cs_heatmap_t *h, const int8_t *state,
                        const double *best, int rows, int cols, double x, double y,
                        double scale, double w, double hgt)
{
    cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, cols, rows);
    unsigned char *px = cairo_image_surface_get_data(img);
    int stride = cairo_image_surface_get_stride(img);
    cairo_surface_flush(img);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            double rgb[3] = {1, 1, 1};
            int k = r * cols + c;
            if (state[k] == 1)
                memcpy(rgb, idle_rgb, sizeof rgb);
            else if (state[k] == 2)
                cs_fig_viridis(scale_t(h, best[k]), rgb);
            uint32_t v = (uint32_t)lround(rgb[0] * 255) << 16 |
                         (uint32_t)lround(rgb[1] * 255) << 8 | (uint32_t)lround(rgb[2] * 255);
            *(uint32_t *)(px + (size_t)r * stride + 4 * (size_t)c) = v;
        }
    cairo_surface_mark_dirty(img);
    cairo_save(cr);
    cairo_translate(cr, x, y);
    cairo_scale(cr, scale, scale);
    cairo_set_source_surface(cr, img, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_rectangle(cr, 0, 0, w, hgt);
    cairo_fill(cr);
    cairo_restore(cr);
    cairo_surface_destroy(img);
}

/* Tiles as a raster: one pixel per tile, the busiest channel leaving it. */
static void draw_tiles(cairo_t *cr, const cs_heatmap_t *h)
{
    int TR = h->trows, TC = h->tcols;
    double *best = cs_malloc((size_t)TR * TC * sizeof *best);
    int8_t *state = cs_calloc((size_t)TR * TC, 1); /* 0 no node, 1 idle, 2 active */
    for (int i = 0; i < h->nnodes; i++) {
        int r, c;
        grid_pos(h, i, &r, &c);
        state[(r / h->tile) * TC + c / h->tile] |= 1;
    }
    for (int c = 0; c < h->nchans; c++) {
        if (!h->d->active[c])
            continue;
        int r, cc;
        grid_pos(h, cs_topo_channel_src(h->t, c), &r, &cc);
        cell_take(state, best, (r / h->tile) * TC + cc / h->tile, h->d->val[c]);
    }
    /* tile (r, c) covers nodes rows r*t .. r*t+t-1: its square in the map */
    double t = h->tile;
    paint_cells(cr, h, state, best, TR, TC, fx(h, -0.5), fy(h, -0.5), h->s * t,
                (double)h->dcols / t, (double)h->drows / t);
    free(best);
    free(state);
}

/* The group matrix of a dragonfly, as a raster of merged cells. */
static void draw_matrix(cairo_t *cr, const cs_heatmap_t *h)
{
    int G = h->ngroups, a = h->agg, N = (G + a - 1) / a;
    double *best = cs_calloc((size_t)N * N, sizeof *best);
    int8_t *state = cs_calloc((size_t)N * N, 1);
    for (int c = 0; c < h->nchans; c++) {
        int gu = group_of(h, cs_topo_channel_src(h->t, c)) / a;
        int gv = group_of(h, cs_topo_channel_dst(h->t, c)) / a;
        int k = gu * N + gv;
        if (!state[k])
            state[k] = 1;
        if (!h->d->active[c])
            continue;
        cell_take(state, best, k, h->d->val[c]);
    }
    paint_cells(cr, h, state, best, N, N, h->mat_x, h->mat_y, h->mat_size / N, N, N);
    free(best);
    free(state);

    /* frame, axis words and a few group numbers */
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, h->mat_x, h->mat_y, h->mat_size, h->mat_size);
    cairo_stroke(cr);
    cs_fig_font(cr, 13, 0);
    char axis[48];
    snprintf(axis, sizeof axis, "destination %s", heatmap_group_noun(h, 0));
    cs_fig_text(cr, h->mat_x + h->mat_size / 2, h->mat_y - 22, axis, 0.5, 1);
    cairo_save(cr);
    cairo_translate(cr, h->mat_x - 22, h->mat_y + h->mat_size / 2);
    cairo_rotate(cr, -M_PI / 2);
    snprintf(axis, sizeof axis, "source %s", heatmap_group_noun(h, 0));
    cs_fig_text(cr, 0, 0, axis, 0.5, 1);
    cairo_restore(cr);
    cs_fig_font(cr, 10, 0);
    double step = cs_fig_nice_step(G, 6);
    if (step < 1)
        step = 1;
    for (double g = 0; g < G; g += step) {
        char num[16];
        double pos = (g + 0.5) / G * h->mat_size;
        snprintf(num, sizeof num, "%d", (int)g);
        cs_fig_text(cr, h->mat_x + pos, h->mat_y - 6, num, 0.5, 1);
        cs_fig_text(cr, h->mat_x - 5, h->mat_y + pos, num, 1, 0.5);
    }
    if (h->panel_group >= 0) {
        char text[96];
        snprintf(text, sizeof text, "%s %d", heatmap_group_noun(h, 0), h->panel_group);
        cs_fig_font(cr, 13, 0);
        cs_fig_text(cr, h->ox, h->mat_y - 22, text, 0.5, 1);
        /* mark the panel's group on the diagonal */
        double cell = h->mat_size / N, pos = (h->panel_group / a) * cell;
        cairo_set_source_rgb(cr, 0.85, 0.1, 0.1);
        cairo_set_line_width(cr, 1.5);
        cairo_rectangle(cr, h->mat_x + pos - 1, h->mat_y + pos - 1, cell + 2, cell + 2);
        cairo_stroke(cr);
    }
}

/* ---- the colour bar ------------------------------------------------------------------------- */

/* The bar's two label lines and its ends in the units it shows. */
static void bar_labels(const cs_heatmap_t *h, double *bottom, double *top, const char **l1,
                       const char **l2)
{
    static const char *const bytes_units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    switch (h->d->metric) {
    case CS_HEATMAP_UTIL:
        *l1 = "utilisation";
        *l2 = "(% of time busy)";
        *bottom = 100 * h->vlo;
        *top = 100 * h->vmax;
        break;
    case CS_HEATMAP_STALL:
        *l1 = "stall";
        *l2 = "(% of time)";
        *bottom = 100 * h->vlo;
        *top = 100 * h->vmax;
        break;
    case CS_HEATMAP_BYTES: {
        int u = 0;
        while (u < 4 && h->vmax >= 1024.0 * pow(1024.0, u))
            u++;
        double unit = pow(1024.0, u);
        *l1 = "data moved";
        *l2 = bytes_units[u];
        *bottom = h->vlo / unit;
        *top = h->vmax / unit;
        break;
    }
    default:
        *l1 = "peak k";
        *l2 = "(messages)";
        *bottom = h->klo;
        *top = h->kmax;
        break;
    }
}

static void draw_bar(cairo_t *cr, const cs_heatmap_t *h)
{
    double bottom, top;
    const char *l1, *l2;
    bar_labels(h, &bottom, &top, &l1, &l2);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cs_fig_font(cr, 13, 1);
    cs_fig_text(cr, h->fr.bx - 6, h->fr.by0 - 40, l1, 0, 1);
    cs_fig_font(cr, 12, 0);
    cs_fig_text(cr, h->fr.bx - 6, h->fr.by0 - 20, l2, 0, 1);
    double H = h->fr.by1 - h->fr.by0;
    if (h->d->metric == CS_HEATMAP_K && h->kmax - h->klo < 16) {
        /* one block per k */
        int K = h->kmax - h->klo + 1;
        for (int i = 1; i <= K; i++) {
            int k = h->klo + i - 1;
            double rgb[3], y0 = h->fr.by1 - H * i / K;
            cs_fig_viridis(K > 1 ? (double)(i - 1) / (K - 1) : 1, rgb);
            cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
            cairo_rectangle(cr, h->fr.bx, y0, BAR_W, H / K);
            cairo_fill(cr);
            char num[16];
            snprintf(num, sizeof num, "%d", k);
            cairo_set_source_rgb(cr, 0, 0, 0);
            cs_fig_font(cr, 12, 0);
            cs_fig_text(cr, h->fr.bx + BAR_W + 7, y0 + H / K / 2, num, 0, 0.5);
        }
    } else {
        cairo_pattern_t *g = cairo_pattern_create_linear(0, h->fr.by1, 0, h->fr.by0);
        for (int i = 0; i <= 10; i++) {
            double rgb[3];
            cs_fig_viridis(i / 10.0, rgb);
            cairo_pattern_add_color_stop_rgb(g, i / 10.0, rgb[0], rgb[1], rgb[2]);
        }
        cairo_set_source(cr, g);
        cairo_rectangle(cr, h->fr.bx, h->fr.by0, BAR_W, H);
        cairo_fill(cr);
        cairo_pattern_destroy(g);
        double lo = bottom, span = top - lo;
        if (!(span > 0))
            span = 1;
        /* about five labelled ticks, fewer on a short bar: labels at
         * least 1.5 lines apart, so that numbers never touch */
        int want = 5;
        double step = cs_fig_nice_step(span, want);
        while (want > 1 && H * step / span < 1.5 * 12)
            step = cs_fig_nice_step(span, --want);
        int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
        cairo_set_source_rgb(cr, 0, 0, 0);
        cs_fig_font(cr, 12, 0);
        cairo_set_line_width(cr, 1);
        for (double v = ceil(lo / step) * step; v <= lo + span * (1 + 1e-9); v += step) {
            double y = h->fr.by1 - H * (v - lo) / span;
            char num[32];
            snprintf(num, sizeof num, "%.*f", decimals, fabs(v) < step * 1e-9 ? 0.0 : v);
            cairo_move_to(cr, h->fr.bx + BAR_W, cs_fig_snap(y));
            cairo_line_to(cr, h->fr.bx + BAR_W + 4, cs_fig_snap(y));
            cairo_stroke(cr);
            cs_fig_text(cr, h->fr.bx + BAR_W + 7, y, num, 0, 0.5);
        }
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, cs_fig_snap(h->fr.bx), cs_fig_snap(h->fr.by0), BAR_W - 1, H - 1);
    cairo_stroke(cr);
    /* what grey means */
    cairo_set_source_rgb(cr, idle_rgb[0], idle_rgb[1], idle_rgb[2]);
    cairo_rectangle(cr, h->fr.bx, h->fr.by1 + 26, BAR_W, 14);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cs_fig_font(cr, 12, 0);
    cs_fig_text(cr, h->fr.bx + BAR_W + 7, h->fr.by1 + 33, "idle", 0, 0.5);
}

/* ---- captions ---------------------------------------------------------------------------------- */

/* How a caption is set: its size and, when it takes two lines, where the
 * second starts (cut) and where the first ends (end). */
#define HM_CAPTION_LINES 4
typedef struct hm_caption {
    double size;
    int lines;
    size_t end, cut;
    /* more than two lines (a footer on a narrow canvas): line i is
     * [from[i], to[i]) of the text */
    size_t from[HM_CAPTION_LINES], to[HM_CAPTION_LINES];
} hm_caption_t;

/* The break nearest the middle of s: after a " · " separator if there is
 * one, else after ", ", else at a space.  0: none. */
static size_t caption_break(const char *s, size_t *end)
{
    static const char *const seps[] = {" \xc2\xb7 ", ", ", " "};
    size_t n = strlen(s);
    for (int k = 0; k < 3; k++) {
        size_t best = 0, sl = strlen(seps[k]);
        for (const char *p = strstr(s, seps[k]); p; p = strstr(p + 1, seps[k])) {
            size_t at = (size_t)(p - s);
            if (!best || fabs((double)at - n / 2.0) < fabs((double)*end - n / 2.0)) {
                best = at + sl;
                *end = k == 1 ? at + 1 : at; /* a comma stays with the first line */
            }
        }
        if (best)
            return best;
    }
    return 0;
}

/* Width of s[from, to) in the current font. */
static double span_width(cairo_t *cr, const char *s, size_t from, size_t to)
{
    char *t = cs_strdup(s + from);
    t[to - from] = '\0';
    double w = cs_fig_text_width(cr, t);
    free(t);
    return w;
}

/* Wraps s word by word into lines of at most maxw in the current font, at
 * most `max` of them (the last takes the rest); a " · " separator where a
 * line breaks is dropped, the break replaces it.  Returns the line count. */
static int caption_wrap(cairo_t *cr, const char *s, double maxw, int max, size_t *from,
                        size_t *to)
{
    size_t n = strlen(s), at = 0;
    int lines = 0;
    while (at < n && lines < max) {
        size_t end = at, p = at;
        /* extend word by word while it fits (one word at least) */
        for (;;) {
            size_t q = p;
            while (q < n && s[q] == ' ')
                q++;
            while (q < n && s[q] != ' ')
                q++;
            if (end > at && span_width(cr, s, at, q) > maxw)
                break;
            end = p = q;
            if (q >= n)
                break;
        }
        if (lines == max - 1)
            end = n;
        /* a line does not end with a separator */
        while (end > at + 3 && !strncmp(s + end - 3, " \xc2\xb7", 3))
            end -= 3;
        from[lines] = at;
        to[lines++] = end;
        at = end;
        while (at < n && s[at] == ' ')
            at++;
        if (!strncmp(s + at, "\xc2\xb7 ", 3)) /* the separator at the break */
            at += 3;
    }
    return lines;
}

/* Sets s at `size` shrunk by whole units (as cs_fig_title) until it fits
 * maxw or reaches the canvas's smallest readable size (or, when two lines
 * are allowed, oneline_min x size); then, if allowed, on two lines
 * instead; when two lines at the smallest size do not fit either, word by
 * word on up to maxlines lines at that size. */
static hm_caption_t caption_fit(cairo_t *cr, const char *s, double size, int bold, double maxw,
                                double minsz, double oneline_min, int maxlines)
{
    hm_caption_t c = {.size = size, .lines = 1};
    double floor1 = maxlines > 1 ? fmax(minsz, oneline_min * size) : minsz;
    cs_fig_font(cr, c.size, bold);
    while (c.size > floor1 && cs_fig_text_width(cr, s) > maxw) {
        c.size -= 1;
        cs_fig_font(cr, c.size, bold);
    }
    if (maxlines < 2 || cs_fig_text_width(cr, s) <= maxw || !(c.cut = caption_break(s, &c.end)))
        return c;
    char *one = cs_strdup(s);
    one[c.end] = '\0';
    c.lines = 2;
    c.size = size;
    for (;;) {
        cs_fig_font(cr, c.size, bold);
        if (c.size <= minsz || (cs_fig_text_width(cr, one) <= maxw &&
                                cs_fig_text_width(cr, s + c.cut) <= maxw))
            break;
        c.size -= 1;
    }
    int fits = cs_fig_text_width(cr, one) <= maxw && cs_fig_text_width(cr, s + c.cut) <= maxw;
    free(one);
    if (!fits && maxlines > 2) {
        c.lines = caption_wrap(cr, s, maxw, maxlines > HM_CAPTION_LINES ? HM_CAPTION_LINES
                                                                        : maxlines,
                               c.from, c.to);
        if (c.lines == 2) { /* as the two-line form */
            c.end = c.to[0];
            c.cut = c.from[1];
        }
    }
    return c;
}

/* Draws s as c says, the first line centred at (x, y), the second `step`
 * lower. */
static void caption_draw(cairo_t *cr, const char *s, const hm_caption_t *c, int bold, double x,
                         double y, double step)
{
    cs_fig_font(cr, c->size, bold);
    if (c->lines == 1) {
        cs_fig_text(cr, x, y, s, 0.5, 0.5);
        return;
    }
    if (c->lines > 2) {
        for (int i = 0; i < c->lines; i++) {
            char *t = cs_strdup(s + c->from[i]);
            t[c->to[i] - c->from[i]] = '\0';
            cs_fig_text(cr, x, y + step * i, t, 0.5, 0.5);
            free(t);
        }
        return;
    }
    char *one = cs_strdup(s);
    one[c->end] = '\0';
    cs_fig_text(cr, x, y, one, 0.5, 0.5);
    cs_fig_text(cr, x, y + step, s + c->cut, 0.5, 0.5);
    free(one);
}

/* The caption lines of this write on canvas fr: title, subtitle, range,
 * footer (the layout's note). */
typedef struct hm_captions {
    hm_caption_t title, sub, range, note;
} hm_captions_t;

static void captions_fit(cs_heatmap_t *h, const hm_frame_t *fr, hm_captions_t *out)
{
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
    cairo_t *cr = cairo_create(s);
    /* a caption shrinks on one line to 80% of its size before it wraps,
     * except on the default canvas, whose captions shrink as they always
     * have (its figures stay byte-identical) */
    double k = fr->W == CS_HEATMAP_WIDTH && fr->H == CS_HEATMAP_HEIGHT ? 0 : 0.8;
    out->title = caption_fit(cr, h->title, 19, 1, fr->W - 40, fr->min_font, k, 2);
    /* never larger than the title, which may have had to shrink */
    out->sub = caption_fit(cr, h->subtitle, fmin(13, out->title.size), 0, fr->W - 40,
                           fr->min_font, k, 2);
    out->range = caption_fit(cr, h->range, fmin(12, out->title.size), 0, fr->W - 40,
                             fr->min_font, k, 1);
    /* the footer wraps rather than run off both edges, and says when node
     * names had to be left out */
    int dropped = node_labels(cr, h, NULL);
    char *note = cs_malloc(strlen(h->note) + 96);
    if (dropped)
        sprintf(note, "%s%s%d node name%s left out (%s)", h->note, h->note[0] ? " \xc2\xb7 " : "",
                dropped, dropped > 1 ? "s" : "",
                h->kind == L_GRID || h->kind == L_SLICES ? "too small to fit the node"
                                                         : "they would overlap");
    else
        strcpy(note, h->note);
    snprintf(h->note_shown, sizeof h->note_shown, "%s", note);
    free(note);
    out->note = caption_fit(cr, h->note_shown, 11, 0, fr->W - 30, fr->min_font, k,
                            HM_CAPTION_LINES);
    cairo_destroy(cr);
    cairo_surface_destroy(s);
}

/* ---- the figure -------------------------------------------------------------------------------- */

/* The write in progress: the heatmap and its captions. */
typedef struct hm_job {
    cs_heatmap_t *h;
    hm_captions_t cap;
} hm_job_t;

static void heatmap_draw(cairo_t *cr, void *ctx)
{
    hm_job_t *job = ctx;
    cs_heatmap_t *h = job->h;
    const hm_frame_t *f = &h->fr;
    if (h->zoom != 1)
        cairo_scale(cr, h->zoom, h->zoom);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    switch (h->kind) {
    case L_TILES:
        draw_tiles(cr, h);
        break;
    case L_DRAGONFLY:
        draw_matrix(cr, h);
        draw_strokes(cr, h);
        draw_nodes(cr, h);
        break;
    case L_SLICES:
        draw_slices(cr, h);
        draw_strokes(cr, h);
        draw_nodes(cr, h);
        break;
    default:
        draw_strokes(cr, h);
        draw_nodes(cr, h);
        break;
    }
    draw_bar(cr, h);
    double y = 26;
    cairo_set_source_rgb(cr, 0, 0, 0);
    caption_draw(cr, h->title, &job->cap.title, 1, f->W / 2, y, 22);
    y = 52 + 22 * (f->title_lines - 1);
    cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
    caption_draw(cr, h->subtitle, &job->cap.sub, 0, f->W / 2, y, 16);
    if (f->range_line) {
        y += 16 * (f->sub_lines - 1) + 17;
        cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
        caption_draw(cr, h->range, &job->cap.range, 0, f->W / 2, y, 0);
    }
    cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
    caption_draw(cr, h->note_shown, &job->cap.note, 0, f->W / 2, f->H - 16 - 14 * (f->note_lines - 1),
                 14);
}

int cs_heatmap_check_path(const char *path, cs_error_t *err)
{
    return cs_fig_check_path(path, "heatmap", err);
}

/* The colour range of d under style st, and its caption line. */
static void heatmap_range(cs_heatmap_t *h, const cs_heatmap_data_t *d,
                          const cs_heatmap_style_t *st)
{
    int fixed = st && st->hi > st->lo;
    h->vlo = fixed ? st->lo : 0;
    h->vmax = fixed ? st->hi : cs_heatmap_data_max(d);
    h->klo = fixed ? (int)fmax(1, floor(st->lo)) : 1;
    h->kmax = (int)ceil(h->vmax);
    if (h->kmax < h->klo)
        h->kmax = h->klo;
    h->range[0] = '\0';
    if (!st || !st->range_why)
        return;
    char r[64];
    int above = 0, below = 0;
    double top = d->metric == CS_HEATMAP_K ? h->kmax : h->vmax;
    double bottom = d->metric == CS_HEATMAP_K ? h->klo : h->vlo;
    for (int c = 0; c < d->nchans; c++)
        if (d->active[c]) {
            above += d->val[c] > top * (1 + 1e-12);
            below += d->val[c] < bottom * (1 - 1e-12);
        }
    cs_heatmap_range_text(d->metric, bottom, top, r, sizeof r);
    int n = snprintf(h->range, sizeof h->range, "%s: %s", st->range_why, r);
    if (above && n > 0 && (size_t)n < sizeof h->range)
        n += snprintf(h->range + n, sizeof h->range - n, " \xc2\xb7 %d channel%s above it, in "
                      "the top colour", above, above > 1 ? "s" : "");
    if (below && n > 0 && (size_t)n < sizeof h->range)
        snprintf(h->range + n, sizeof h->range - n, " \xc2\xb7 %d below it, in the bottom "
                 "colour", below);
}

/* Everything a write needs before drawing: the range, the captions, the
 * canvas (laid out again when it changed) and the dragonfly's panel. */
static int heatmap_prepare(cs_heatmap_t *h, const cs_heatmap_data_t *d, const char *title,
                           const char *subtitle, const cs_heatmap_style_t *st, int png,
                           char *sub, size_t sublen, hm_job_t *job, cs_error_t *err)
{
    CS_ASSERT(d->nchans == h->nchans);
    heatmap_range(h, d, st);
    h->title = title ? title : "";
    if (!subtitle) {
        static const char *const what[] = {"link utilisation", "bytes per link",
                                           "stall time per link", "peak k per link"};
        snprintf(sub, sublen, "%s over the whole run", what[d->metric & 3]);
        subtitle = sub;
    }
    h->subtitle = subtitle;
    /* the canvas the captions need; the footer is the layout's, so a new
     * layout may want another footer line: twice at most */
    for (int pass = 0; pass < 3; pass++) {
        hm_frame_t fr;
        frame_set(&fr, st ? &st->size : NULL, 1, 1, 0, 1);
        captions_fit(h, &fr, &job->cap);
        frame_set(&fr, st ? &st->size : NULL, job->cap.title.lines, job->cap.sub.lines,
                  h->range[0] != '\0', job->cap.note.lines);
        if (frame_same(&fr, &h->fr))
            break;
        if (pass == 2)
            break; /* the footer keeps changing its mind: draw as it is */
        int rc = heatmap_relayout(h, &fr, err);
        if (rc)
            return rc;
        heatmap_range(h, d, st);
        h->title = title ? title : "";
        h->subtitle = subtitle;
    }
    h->d = d;
    h->zoom = png ? h->fr.zoom_png : h->fr.zoom_vec;
    job->h = h;
    if (h->kind == L_DRAGONFLY) {
        /* the panel shows the group with the busiest intra-group channel */
        int best = -1;
        for (int c = 0; c < h->nchans; c++) {
            int g = group_of(h, cs_topo_channel_src(h->t, c));
            if (!d->active[c] || g != group_of(h, cs_topo_channel_dst(h->t, c)))
                continue;
            if (best < 0 || d->val[c] > d->val[best])
                best = c;
        }
        dragonfly_panel(h, best >= 0 ? group_of(h, cs_topo_channel_src(h->t, best)) : 0);
    }
    return CS_OK;
}

int cs_heatmap_write(cs_heatmap_t *h, const cs_heatmap_data_t *d, const char *title,
                     const char *subtitle, const cs_heatmap_style_t *style, const char *path,
                     cs_error_t *err)
{
    char sub[160];
    hm_job_t job;
    double w, hh;
    int rc = cs_heatmap_check_path(path, err);
    if (rc == CS_OK)
        rc = heatmap_prepare(h, d, title, subtitle, style, path_is_png(path), sub, sizeof sub,
                             &job, err);
    if (rc)
        return rc;
    cs_heatmap_file_size(style ? &style->size : NULL, path, &w, &hh);
    rc = cs_fig_write_as(path, "heatmap", w, hh, heatmap_draw, &job, title,
                         style && style->png_fast, err);
    h->d = NULL;
    return rc;
}

int cs_heatmap_render_rgb(cs_heatmap_t *h, const cs_heatmap_data_t *d, const char *title,
                          const char *subtitle, const cs_heatmap_style_t *style,
                          unsigned char **rgb, int *w, int *hgt, cs_error_t *err)
{
    char sub[160];
    hm_job_t job;
    double fw, fh;
    *rgb = NULL;
    int rc = heatmap_prepare(h, d, title, subtitle, style, 1, sub, sizeof sub, &job, err);
    if (rc)
        return rc;
    cs_heatmap_file_size(style ? &style->size : NULL, "x.png", &fw, &fh);
    *w = (int)fw;
    *hgt = (int)fh;
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, *w, *hgt);
    cairo_t *cr = cairo_create(s);
    heatmap_draw(cr, &job);
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    cairo_surface_flush(s);
    h->d = NULL;
    if (st != CAIRO_STATUS_SUCCESS || cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(s);
        return cs_error_set(err, CS_ERR_IO, "cannot draw the heatmap: cairo: %s",
                            cairo_status_to_string(st));
    }
    const unsigned char *px = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    unsigned char *out = cs_malloc((size_t)*w * (size_t)*hgt * 3);
    for (int y = 0; y < *hgt; y++)
        for (int x = 0; x < *w; x++) {
            uint32_t v = *(const uint32_t *)(px + (size_t)y * stride + 4 * (size_t)x);
            unsigned char *o = out + 3 * ((size_t)y * *w + x);
            o[0] = (unsigned char)(v >> 16);
            o[1] = (unsigned char)(v >> 8);
            o[2] = (unsigned char)v;
        }
    cairo_surface_destroy(s);
    *rgb = out;
    return CS_OK;
}

/* cs_heatmap_chan_point in figure units (before the file's zoom). */
static int chan_point_canvas(const cs_heatmap_t *h, int chan, double *x, double *y)
{
    if (chan < 0 || chan >= h->nchans)
        return 0;
    int u = cs_topo_channel_src(h->t, chan), v = cs_topo_channel_dst(h->t, chan);
    if (h->kind == L_TILES) {
        int r, c;
        grid_pos(h, u, &r, &c);
        double t = h->tile;
        *x = fx(h, -0.5) + h->s * t * (c / h->tile + 0.5);
        *y = fy(h, -0.5) + h->s * t * (r / h->tile + 0.5);
        return 1;
    }
    if (h->kind == L_DRAGONFLY && (h->first[chan] == h->first[chan + 1])) {
        int N = (h->ngroups + h->agg - 1) / h->agg;
        double cell = h->mat_size / N;
        *x = h->mat_x + (group_of(h, v) / h->agg + 0.5) * cell;
        *y = h->mat_y + (group_of(h, u) / h->agg + 0.5) * cell;
        return 1;
    }
    if (!h->first || h->first[chan] == h->first[chan + 1])
        return 0;
    const hm_stroke_t *s = &h->st[h->first[chan]];
    if (s->arc) {
        /* the middle of the lane's body (the arrowhead takes its end) */
        double a = s->v[3] + 0.4 * (s->v[4] - s->v[3]);
        *x = fx(h, s->v[0] + s->v[2] * cos(a));
        *y = fy(h, s->v[1] + s->v[2] * sin(a));
    } else {
        *x = fx(h, s->v[0] + 0.4 * (s->v[2] - s->v[0]));
        *y = fy(h, s->v[1] + 0.4 * (s->v[3] - s->v[1]));
    }
    return 1;
}

int cs_heatmap_chan_point(const cs_heatmap_t *h, int chan, double *x, double *y)
{
    if (!chan_point_canvas(h, chan, x, y))
        return 0;
    *x *= h->fr.zoom_png;
    *y *= h->fr.zoom_png;
    return 1;
}
