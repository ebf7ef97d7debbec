/*
 * axis.h - the ticks of a figure's axis and the texts of its numbers: which
 * values get a tick, which ticks get a label, and the label, for plain
 * numbers ("100", "10k", "14.05M") and for times in seconds with SI
 * prefixes ("1 ns", "10 µs", "2.5 ms"), and for bandwidths in bytes per
 * second with decimal prefixes ("100 MB/s", "12.5 GB/s").
 *
 * Kept apart from the drawing (plot.c) so that the choice can be tested on
 * its own: every decade of a log axis gets a labelled tick; an axis that
 * spans two decades or less labels 2x and 5x too; one that spans less than
 * a decade gets 1-2-5 steps in value space; every axis shows at least three
 * numbers.  Time labels use UTF-8 "µ" (U+00B5), the same prefix convention
 * as the values written on bars (cs_axis_format).
 */
#ifndef CS_AXIS_H
#define CS_AXIS_H

#include <stddef.h>

/* What the numbers of an axis are. */
typedef enum cs_axis_unit {
    CS_AXIS_PLAIN = 0, /* numbers: SI suffixes k, M, G, T on a log axis */
    CS_AXIS_SECONDS,   /* times in seconds: "ns", "µs", "ms", "s" */
    CS_AXIS_BYTES_PER_S /* bandwidths in bytes per second, decimal prefixes as
                           nccl-tests prints them: "MB/s", "GB/s" (10^9 B/s) */
} cs_axis_unit_t;

/* At most this many ticks on an axis (minor ticks included). */
#define CS_AXIS_MAX_TICKS 512

typedef struct cs_axis_tick {
    double t;      /* position: the value, or log10 of it on a log axis */
    int major;     /* a decade (log) or a step (linear): longer tick, grid line */
    int labelled;
    char text[32]; /* the label, or the mantissa part of "m x 10^e" */
    char sup[12];  /* an exponent drawn raised, or "" */
} cs_axis_tick_t;

/* The ticks of an axis from lo to hi (both in axis space: log10 of the
 * values on a log axis, lo < hi) into ticks[0..n), n returned (at most
 * CS_AXIS_MAX_TICKS), in rising order.  Log axes: a tick at every decade,
 * minor ticks at 2..9 times each up to 12 decades; over 12 decades only
 * every k-th decade is major and labelled.  Linear axes: multiples of a
 * 1-2-5 step, about six. */
int cs_axis_ticks(int log, double lo, double hi, cs_axis_unit_t unit, cs_axis_tick_t *ticks);

/* v with `digits` significant digits (trailing zeros kept: "2.190") and,
 * for CS_AXIS_SECONDS, the SI prefix that puts it in [1, 1000) and the
 * unit: "2.190 ms", "469.9 µs", "17.83 ms", "1.000 ms" (999.96 µs rounds
 * up to the next prefix), "0 s"; for CS_AXIS_BYTES_PER_S the decimal
 * prefix from B/s to EB/s: "12.34 GB/s", "0 B/s".  Plain numbers: "%.*g".  digits 1..9. */
void cs_axis_format(double v, int digits, cs_axis_unit_t unit, char *buf, size_t len);

#endif
