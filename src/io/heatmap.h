/*
 * heatmap.h - link heatmaps: one number per channel (utilisation, bytes,
 * stall, peak k) drawn on the machine's own layout with cairo, as PNG, SVG
 * or PDF by the file's extension.
 *
 * Layouts (cs_machine_layout_t in machines/machine.h: the machine's type
 * says which one, with its parameters):
 *   grid       meshes, tori, the CNS-1 cylinder, the Cerebras wafer, lines
 *              (folded into a snake when long): every link direction is its
 *              own lane beside the link, traffic keeps right (an eastbound
 *              lane runs below the link, a northbound one right of it) and
 *              ends in an arrowhead; wrap links leave one edge and enter
 *              the opposite one.  When a node would get less than 10 units
 *              the grid is drawn as tiles of t x t nodes, each coloured by
 *              the busiest link leaving one of its nodes (the full wafer:
 *              850 x 1000 PEs in tiles of 3 x 3).
 *   ring       nodes on a circle; clockwise lanes inside, counter-clockwise
 *              outside (keep right).
 *   circle     complete graphs and hypercubes: nodes on a circle, links as
 *              chords, a lane per direction.
 *   rings      the Cell's EIBs: one circle per ring of ramps, the links
 *              between rings (the BIF) as straight lanes.
 *   dragonfly  a group-to-group matrix (row: source group, column:
 *              destination group, the busiest channel between them; the
 *              diagonal: the busiest channel inside the group) beside the
 *              links of one group, the one holding the busiest
 *              intra-group channel.
 *   graph      anything else: igraph's Kamada-Kawai layout (up to 1000
 *              nodes, a circle beyond), straight lanes.
 *
 * Colours: viridis from 0 (dark purple) to the scale's top (yellow);
 * channels that carried nothing in the window are light grey, drawn
 * beneath the others, and hotter lanes are drawn over cooler ones.  The
 * legend is a colour bar with the metric's unit.  Figures are 1000 x 800
 * (pixels in PNG, points in SVG and PDF, whose text stays vector) unless a
 * style gives a size (a paper's column, its page, W x H): the canvas then
 * has the figure's proportions and its text a printed size of at least
 * 6.5 pt, wrapping onto a second line rather than shrinking further.
 *
 * The colour range runs from 0 (k: 1) to the data's largest value, or
 * over the range a style fixes (--scale, or one range shared by several
 * figures); values outside it take the end colours, and a caption line
 * says which range and why.
 *
 *     cs_heatmap_t *h;
 *     cs_heatmap_new(machine, &h, &err);
 *     cs_heatmap_data_from_net(res.net, nchans, CS_HEATMAP_UTIL, 0, res.finish, 1, &d, &err);
 *     cs_heatmap_write(h, &d, "allreduce/ring, 1 MiB", NULL, NULL, "fig.png", &err);
 */
#ifndef CS_HEATMAP_H
#define CS_HEATMAP_H

#include <stdint.h>
#include "core/error.h"
#include "engine/net.h"
#include "machines/machine.h"

#define CS_HEATMAP_WIDTH 1000.0
#define CS_HEATMAP_HEIGHT 800.0

typedef enum cs_heatmap_metric {
    CS_HEATMAP_UTIL = 0, /* busy ticks / window length, shown in % */
    CS_HEATMAP_BYTES,    /* bytes that crossed the channel */
    CS_HEATMAP_STALL,    /* stall ticks / window length, in % */
    CS_HEATMAP_K         /* the most messages that wanted the channel at once */
} cs_heatmap_metric_t;

/* "util", "bytes", "stall", "k"; errors list the valid names. */
int cs_heatmap_parse_metric(const char *text, cs_heatmap_metric_t *out, cs_error_t *err);
const char *cs_heatmap_metric_name(cs_heatmap_metric_t m);

/* One value per channel and whether the channel carried anything. */
typedef struct cs_heatmap_data {
    int nchans;
    double *val;      /* util and stall as fractions (0..1), bytes, k */
    uint8_t *active;  /* 1: the channel carried traffic (or stalled) in the window */
    cs_heatmap_metric_t metric;
    cs_tick_t t0, t1; /* the window */
} cs_heatmap_data_t;

/* Allocates d for nchans channels, all idle. */
void cs_heatmap_data_init(cs_heatmap_data_t *d, int nchans, cs_heatmap_metric_t m,
                          cs_tick_t t0, cs_tick_t t1);
void cs_heatmap_data_destroy(cs_heatmap_data_t *d); /* accepts zeroed */

/* The metric of every channel of a finished run over [t0, t1).  whole = 1:
 * the window is the whole run and the exact totals are used; otherwise the
 * time buckets (cs_net_enable_buckets before the run), whose width bounds
 * the resolution of the window's edges.  Errors: t1 <= t0 (CS_ERR_RANGE),
 * a window on an engine that recorded no buckets (CS_ERR_USAGE, naming
 * the engine).  d is initialised either way. */
int cs_heatmap_data_from_net(const cs_net_t *net, int nchans, cs_heatmap_metric_t m,
                             cs_tick_t t0, cs_tick_t t1, int whole, cs_heatmap_data_t *d,
                             cs_error_t *err);
/* The largest value among the active channels (0 if none). */
double cs_heatmap_data_max(const cs_heatmap_data_t *d);

typedef struct cs_heatmap cs_heatmap_t; /* opaque */

/* ---- colour range and size (--scale, --size) ---- */

/* Parses --scale "LO:HI" in the metric's units as the figures show them:
 * util and stall in % ("0:50", "0%:50%"), bytes with a unit ("0:4MiB"),
 * k as counts ("1:4"); LO may be left out (0, k: 1).  *lo and *hi are in
 * the data's units (fractions for util and stall).  Errors (CS_ERR_USAGE)
 * name --scale and what would be valid; HI must exceed LO. */
int cs_heatmap_parse_scale(const char *text, cs_heatmap_metric_t m, double *lo, double *hi,
                           cs_error_t *err);
/* "0–94%", "0–1 MiB", "1–4": a range as a caption says it. */
void cs_heatmap_range_text(cs_heatmap_metric_t m, double lo, double hi, char *buf, size_t len);

/* A figure's size.  physical 0: w x h figure units (PNG pixels, SVG/PDF
 * points), as the default 1000 x 800; physical 1: w x h points of paper
 * (72 a inch), written as points in SVG/PDF and at CS_HEATMAP_DPI in PNG. */
typedef struct cs_heatmap_size {
    double w, h;
    int physical;
} cs_heatmap_size_t;
#define CS_HEATMAP_DPI 300.0
/* "column" (3.5 x 2.8 in, an IEEE/ACM column), "page" (7 x 5.6 in, both
 * columns), or "WxH" with an optional unit on either side (in, cm, mm, pt:
 * physical; px or none: figure units), e.g. "3.5x3in", "1600x1200".
 * Limits: 100..8000 figure units, 1..26 in, sides within a factor 4.
 * Errors (CS_ERR_USAGE) name --size. */
int cs_heatmap_parse_size(const char *text, cs_heatmap_size_t *out, cs_error_t *err);
/* The size of the file written to path with size s (NULL: the default):
 * PNG pixels, or SVG/PDF points. */
void cs_heatmap_file_size(const cs_heatmap_size_t *s, const char *path, double *w, double *h);

/* How a figure is drawn beyond its data; zeroed = the defaults. */
typedef struct cs_heatmap_style {
    double lo, hi;          /* the colour range (data units); hi <= lo: 0 (k: 1) to the
                             * data's largest value */
    const char *range_why;  /* the caption line for a fixed range: "colour range fixed by
                             * --scale" (the figure adds ": 0-50%" and how many channels
                             * lie above); NULL: no line */
    cs_heatmap_size_t size; /* w 0: 1000 x 800 figure units */
    int png_fast;           /* a PNG encoded for speed (io/png_fast.h: the service's);
                             * 0: cairo's writer, smaller files */
} cs_heatmap_style_t;

/* CS_OK when path ends in .png, .svg or .pdf, else a usage error that says
 * so (checked before a run, so that a typo costs nothing). */
int cs_heatmap_check_path(const char *path, cs_error_t *err);

/* The layout of machine m (borrowed: it must outlive the heatmap).
 * Errors: only from igraph (CS_ERR_NOMEM, CS_ERR_INTERNAL). */
int cs_heatmap_new(const cs_machine_t *m, cs_heatmap_t **out, cs_error_t *err);
void cs_heatmap_free(cs_heatmap_t *h); /* accepts NULL */

/* "grid", "tiles", "ring", "circle", "rings", "dragonfly" or "graph". */
const char *cs_heatmap_layout_name(const cs_heatmap_t *h);

/* Draws d and writes it to `path` (.png, .svg or .pdf).  title: the first
 * line (machine, collective, algorithm, size: the caller knows them);
 * subtitle: the second (NULL: the metric and "whole run"); style (NULL:
 * defaults): the colour range (frames pass one range for all) and the
 * size.  A style whose size or caption lines differ from the last write's
 * lays the machine out again for the new canvas.  Errors as cs_fig_write:
 * bad extension (CS_ERR_USAGE), cairo or file (CS_ERR_IO). */
int cs_heatmap_write(cs_heatmap_t *h, const cs_heatmap_data_t *d, const char *title,
                     const char *subtitle, const cs_heatmap_style_t *style, const char *path,
                     cs_error_t *err);
/* The same figure as an RGB image in memory (for animations): *rgb gets
 * w x h pixels of 3 bytes, row by row (the caller frees it); w, h as a PNG
 * of that style would have.  Errors: cairo (CS_ERR_IO). */
int cs_heatmap_render_rgb(cs_heatmap_t *h, const cs_heatmap_data_t *d, const char *title,
                          const char *subtitle, const cs_heatmap_style_t *style,
                          unsigned char **rgb, int *w, int *hgt, cs_error_t *err);

/* Where channel c was drawn by the last cs_heatmap_write (PNG pixels of
 * that write's size): the middle of its lane's body, its tile, or its cell of
 * the group matrix (an intra-group link outside the panel: the diagonal
 * cell of its group).  Returns 0 only for a channel out of range. */
int cs_heatmap_chan_point(const cs_heatmap_t *h, int chan, double *x, double *y);

/* The colour at the top of the scale (what the busiest channel gets). */
void cs_heatmap_hot_rgb(double rgb[3]);

#endif
