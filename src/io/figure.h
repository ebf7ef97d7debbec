/*
 * figure.h - what every cairo figure of collsim shares (src/io only): text
 * in the "sans-serif" fontconfig family, the Okabe-Ito palette, the viridis
 * colour scale, number labels, and the writer that chooses PNG, SVG or PDF
 * by the file's extension and makes the output deterministic.
 *
 * Used by plot.c (line plots, bar charts), heatmap.c (link heatmaps).
 * Figure units are PNG pixels and SVG/PDF points; text stays vector in SVG
 * and PDF.  The same figure always gives the same bytes in PNG and SVG (the
 * ids cairo takes from a process-wide counter are renumbered), and in PDF
 * except for cairo's version in its Producer field.
 */
#ifndef CS_FIGURE_H
#define CS_FIGURE_H

#include <cairo.h>
#include <stddef.h>
#include "core/error.h"

/* ---- text ---- */
void cs_fig_font(cairo_t *cr, double size, int bold);
double cs_fig_text_width(cairo_t *cr, const char *s);
/* Height of a digit above the baseline: the reference for centring. */
double cs_fig_cap_height(cairo_t *cr);
/* Draws s with its anchor at (x, y): ax = 0, 0.5, 1 for left, centre,
 * right; ay = 0, 0.5, 1 for the digit top, middle, baseline. */
void cs_fig_text(cairo_t *cr, double x, double y, const char *s, double ax, double ay);
/* Draws a title centred at (x, y), shrinking its size from `size` (down to
 * 8) until it fits in `maxw`. */
void cs_fig_title(cairo_t *cr, double x, double y, const char *s, double size, int bold,
                  double maxw);

/* ---- colours ---- */
/* Okabe & Ito's colour-blind-safe palette (8 colours, repeating). */
void cs_fig_palette(int k, double rgb[3]);
#define CS_FIG_NPALETTE 8
/* Viridis (matplotlib's perceptually uniform, colour-blind-safe map) at
 * t in [0, 1] (clamped): dark purple (0) -> blue -> green -> yellow (1). */
void cs_fig_viridis(double t, double rgb[3]);

/* ---- numbers ---- */
/* A step of 1, 2 or 5 times a power of ten giving about `want` steps. */
double cs_fig_nice_step(double span, int want);
/* v with an SI suffix (k, M, G, T) and as many decimals as `step` needs:
 * "14.05M", "500", "0.25"; "%g" outside 1e-3..1e15. */
void cs_fig_si_label(double v, double step, char *buf, size_t len);

/* Half-pixel position of a 1-unit line (whole pixels in PNG). */
double cs_fig_snap(double v);

/* ---- output ---- */
/* CS_OK when path ends in .png, .svg or .pdf (any case), else a usage
 * error naming the path and the valid extensions.  `kind` names the figure
 * in messages ("plot", "heatmap"). */
int cs_fig_check_path(const char *path, const char *kind, cs_error_t *err);
/* Creates a w x h surface of the format the extension names, calls
 * draw(cr, ctx) and writes the file.  `title` (may be NULL) goes into the
 * PDF metadata.  Errors: unknown extension (CS_ERR_USAGE), cairo failure
 * or a file that cannot be written (CS_ERR_IO), each naming the path; the
 * file may then be absent or partial. */
int cs_fig_write(const char *path, const char *kind, double w, double h,
                 void (*draw)(cairo_t *cr, void *ctx), void *ctx, const char *title,
                 cs_error_t *err);
/* cs_fig_write, a PNG encoded for speed rather than size (io/png_fast.h:
 * the same pixels, other bytes) when png_fast is non-zero and the build has
 * the encoder; other formats as cs_fig_write. */
int cs_fig_write_as(const char *path, const char *kind, double w, double h,
                    void (*draw)(cairo_t *cr, void *ctx), void *ctx, const char *title,
                    int png_fast, cs_error_t *err);

#endif
