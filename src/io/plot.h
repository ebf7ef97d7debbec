/*
 * plot.h - line plots in the style of figures in papers (one line with
 * markers per series, log or linear axes, legend) and bar charts, drawn
 * with cairo and written as PNG, SVG or PDF.
 *
 * Built for small figures: a few series of tens to thousands of points
 * (time against message size for several algorithms, `collsim sweep`).
 * The figure is 900 x 600: pixels in PNG, points in SVG and PDF, whose
 * text stays vector.  The same plot always gives the same bytes in PNG
 * and SVG; PDF too except for cairo's version in its Producer field.
 *
 *     cs_plot_t *p = cs_plot_new("allreduce", "bytes", "time (ticks)", 1, 1);
 *     cs_plot_add_series(p, "ring", n, x, y);
 *     rc = cs_plot_write(p, "fig.svg", &err);
 *     cs_plot_free(p);
 */
#ifndef CS_PLOT_H
#define CS_PLOT_H

#include <stddef.h>
#include "core/error.h"
#include "io/axis.h"

typedef struct cs_plot cs_plot_t; /* opaque */

/* A new empty plot.  The strings are copied; NULL or "" leaves the title or
 * the axis label out.  logx, logy: nonzero for a logarithmic axis (decade
 * ticks labelled 1, 10, 100, 1k, ... and 10^k beyond 10^15 or below 1m;
 * minor ticks at 2..9 times each decade; the tick rules of io/axis.h).  Never returns NULL (collsim's
 * out-of-memory policy: cs_malloc stops the process). */
cs_plot_t *cs_plot_new(const char *title, const char *xlabel, const char *ylabel, int logx,
                       int logy);

/* What the y values are (io/axis.h): plain numbers (the default) or times
 * in seconds, whose ticks then read "1 ns", "10 µs", "2.5 ms" (the axis
 * label should then say what the time is, without a unit). */
void cs_plot_set_yunit(cs_plot_t *p, cs_axis_unit_t unit);

/* Adds a series of n points (x[i], y[i]), drawn in the given order as one
 * line with markers, in the next colour and marker shape; `name` is its
 * legend entry.  Arrays and name are copied.  Points that an axis cannot
 * show (<= 0 on a log axis, NaN, infinite) are skipped and break the line
 * there.  Colours are the Okabe-Ito palette (colour-blind safe) and repeat
 * after 8 series, marker shapes after 7. */
void cs_plot_add_series(cs_plot_t *p, const char *name, size_t n, const double *x,
                        const double *y);

/* CS_OK when path ends in .png, .svg, .pdf or .csv (any case), else a
 * usage error naming the path and the valid extensions.  Lets a caller refuse a bad
 * file name before a long computation. */
int cs_plot_check_path(const char *path, cs_error_t *err);

/* Draws the plot and writes it to `path` in the format its extension names
 * (see cs_plot_check_path); ".csv" writes the numbers instead of a
 * picture: a header "series,x,y" and a row per finite point, series by
 * series, values with %.17g (exact when read back), y in the axis's unit
 * (seconds, bytes per second or plain).  Axis ranges cover every shown point with a
 * margin; with none, the axes are drawn empty.  Errors: unknown extension
 * (CS_ERR_USAGE), cairo failure or a file that cannot be written
 * (CS_ERR_IO), each naming the path; the file may then be absent or
 * partial. */
int cs_plot_write(const cs_plot_t *p, const char *path, cs_error_t *err);

/* A bar chart of n categories: bar i has height values[i] (a value the
 * axis cannot show, NaN or <= 0 on a log axis, gets no bar), labels[i]
 * under it (slanted when the labels do not fit their slots) and texts[i]
 * above it (NULL or a NULL entry: the value with 4 significant digits,
 * cs_axis_format, in the axis's unit yunit: "2.190 ms").  The y axis is
 * linear from 0, or logarithmic with logy; its ticks are in yunit too.  Bars take the line plots'
 * colours in order.  Written like cs_plot_write (same size, formats,
 * errors and determinism; ".csv": "label,y" and a row per finite value). */
int cs_plot_write_bars(const char *path, const char *title, const char *ylabel, int n,
                       const char *const *labels, const double *values,
                       const char *const *texts, int logy, cs_axis_unit_t yunit,
                       cs_error_t *err);

/* Frees the plot and its copies of the series; accepts NULL. */
void cs_plot_free(cs_plot_t *p);

/* Releases what cairo and fontconfig keep for the whole process once text
 * has been drawn (font caches, the font configuration).  Not needed for
 * correctness, but leak checkers (ASan) report it at exit otherwise.  Call
 * when no cairo object is alive, e.g. before the process ends; later plots
 * load it all again. */
void cs_plot_cleanup(void);

#endif
