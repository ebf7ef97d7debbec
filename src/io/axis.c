/*
 * axis.c - ticks and number texts of figure axes (axis.h).
 *
 * The rules are those of the usual paper figure (matplotlib's LogLocator
 * and EngFormatter behave alike): a log axis is read by its decades, so
 * each gets a label; a short axis needs intermediate labels to be read at
 * all; a time is written with the SI prefix that keeps its mantissa in
 * [1, 1000) (and a bandwidth with the decimal prefix that does: "GB/s" =
 * 10^9 B/s, as nccl-tests prints it).  Issue 32 asked for these after a sweep plot showed two y
 * labels and a comparison mixed "ms", "us" and an axis in µs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/axis.h"
#include "io/figure.h"

/* A unit with SI prefixes: the prefixes of 10^(3g) for g = gmin .. gmax
 * and the unit's symbol.  Times go down from seconds; rates go up from
 * bytes per second in decimal steps, as nccl-tests' "GB/s" (10^9 B/s,
 * docs/bandwidth.md), never binary ones. */
typedef struct axis_si {
    const char *const *prefix;
    int gmin, gmax;
    const char *sym;
} axis_si_t;

static const char *const axis_sec_prefix[] = {"f", "p", "n", "\xc2\xb5", "m", ""};
static const char *const axis_rate_prefix[] = {"", "k", "M", "G", "T", "P", "E"};
static const axis_si_t axis_sec = {axis_sec_prefix, -5, 0, "s"};
static const axis_si_t axis_rate = {axis_rate_prefix, 0, 6, "B/s"};

/* The prefixes of a unit, or NULL for plain numbers. */
static const axis_si_t *axis_si(cs_axis_unit_t unit)
{
    return unit == CS_AXIS_SECONDS       ? &axis_sec
           : unit == CS_AXIS_BYTES_PER_S ? &axis_rate
                                         : NULL;
}

/* The prefix group of v > 0: the g with 10^(3g) <= v < 10^(3g+3), or
 * gmax + 1 above the table (>= 1000 s), gmin - 1 below it. */
static int axis_group(double v, const axis_si_t *si)
{
    int g = (int)floor(log10(v) / 3 + 1e-9);
    if (g > si->gmax)
        return si->gmax + 1;
    return g < si->gmin ? si->gmin - 1 : g;
}

/* Drops trailing zeros of a decimal fraction in place ("1.50" -> "1.5",
 * "2.0" -> "2"). */
static void axis_trim(char *s)
{
    char *dot = strchr(s, '.');
    if (!dot)
        return;
    char *e = s + strlen(s);
    while (e > dot + 1 && e[-1] == '0')
        *--e = '\0';
    if (e == dot + 1)
        *dot = '\0';
}

void cs_axis_format(double v, int digits, cs_axis_unit_t unit, char *buf, size_t len)
{
    if (digits < 1)
        digits = 1;
    if (digits > 9)
        digits = 9;
    const axis_si_t *si = axis_si(unit);
    if (!si) {
        snprintf(buf, len, "%.*g", digits, v);
        return;
    }
    if (v == 0 || !isfinite(v)) {
        if (v == 0)
            snprintf(buf, len, "0 %s", si->sym);
        else
            snprintf(buf, len, "%g %s", v, si->sym);
        return;
    }
    double a = fabs(v);
    int g = axis_group(a, si);
    for (int pass = 0; pass < 2; pass++) {
        if (g > si->gmax || g < si->gmin) {
            snprintf(buf, len, "%.*g %s", digits, v, si->sym);
            return;
        }
        double m = a / pow(1000.0, g);
        int whole = m < 10 ? 1 : m < 100 ? 2 : 3;
        int decimals = digits > whole ? digits - whole : 0;
        char num[48];
        snprintf(num, sizeof num, "%.*f", decimals, m);
        /* 999.96 us at 4 digits is "1000.0": one prefix up, "1.000 ms" */
        if (atof(num) >= 1000 && pass == 0) {
            g++;
            continue;
        }
        snprintf(buf, len, "%s%s %s%s", v < 0 ? "-" : "", num, si->prefix[g - si->gmin],
                 si->sym);
        return;
    }
}

/* The label of a tick at value v of a time (or rate) axis whose ticks are
 * `step` apart: the prefix of v itself, as many decimals as the step needs
 * there, trailing zeros dropped ("500 µs", "1 ms", "1.5 ms", "2.5 GB/s"). */
static void axis_si_label(double v, double step, const axis_si_t *si, cs_axis_tick_t *t)
{
    t->sup[0] = '\0';
    if (fabs(v) < step * 1e-9) {
        snprintf(t->text, sizeof t->text, "0 %s", si->sym);
        return;
    }
    int g = axis_group(fabs(v), si);
    if (g > si->gmax || g < si->gmin) {
        snprintf(t->text, sizeof t->text, "%g %s", v, si->sym);
        return;
    }
    double scale = pow(1000.0, g);
    int decimals = (int)ceil(-log10(step / scale) - 1e-9);
    if (decimals < 0)
        decimals = 0;
    if (decimals > 9)
        decimals = 9;
    char num[24];
    snprintf(num, sizeof num, "%.*f", decimals, v / scale);
    axis_trim(num);
    snprintf(t->text, sizeof t->text, "%s %s%s", num, si->prefix[g - si->gmin], si->sym);
}

/* The label of m * 10^k.  Plain: SI suffixes from 1 to 999T ("20", "5k",
 * "100M"), decimals down to 0.001, else (or with `sci`) "10" with a raised
 * exponent.  Seconds: "20 ns", "1 µs"; rates: "10 GB/s". */
static void axis_log_label(int m, int k, int sci, cs_axis_unit_t unit, cs_axis_tick_t *t)
{
    static const char *const si[] = {"", "k", "M", "G", "T"};
    t->sup[0] = '\0';
    const axis_si_t *u = axis_si(unit);
    if (u) {
        int g = k >= 0 ? k / 3 : -((-k + 2) / 3);
        if (g > u->gmax || g < u->gmin) {
            snprintf(t->text, sizeof t->text, "%g %s", m * pow(10.0, k), u->sym);
            return;
        }
        int v = m;
        for (int i = 0; i < k - 3 * g; i++)
            v *= 10;
        snprintf(t->text, sizeof t->text, "%d %s%s", v, u->prefix[g - u->gmin], u->sym);
        return;
    }
    if (!sci && k >= 0 && k < 15) {
        int v = m;
        for (int i = 0; i < k % 3; i++)
            v *= 10;
        snprintf(t->text, sizeof t->text, "%d%s", v, si[k / 3]);
        return;
    }
    if (!sci && k < 0 && k >= -3) {
        snprintf(t->text, sizeof t->text, "%.*f", -k, m * pow(10.0, k));
        return;
    }
    if (m == 1)
        snprintf(t->text, sizeof t->text, "10");
    else
        snprintf(t->text, sizeof t->text, "%d\xc3\x97" "10", m); /* U+00D7 times */
    snprintf(t->sup, sizeof t->sup, "%d", k);
}

static void axis_value_label(double v, double step, cs_axis_unit_t unit, cs_axis_tick_t *t)
{
    if (axis_si(unit)) {
        axis_si_label(v, step, axis_si(unit), t);
        return;
    }
    t->sup[0] = '\0';
    cs_fig_si_label(v, step, t->text, sizeof t->text);
}

/* A log axis shorter than a decade or so: multiples of a 1-2-5 step in
 * value space, placed on the log scale, at least three when the span
 * allows (finer steps are tried until it does). */
static int axis_log_fine(double lo, double hi, cs_axis_unit_t unit, cs_axis_tick_t *ticks)
{
    double vlo = pow(10.0, lo), vhi = pow(10.0, hi);
    int n = 0;
    for (int want = 4; want <= 16 && n < 3; want *= 2) {
        double step = cs_fig_nice_step(vhi - vlo, want);
        n = 0;
        for (double i = ceil(vlo / step); i * step <= vhi && n < 64; i++) {
            cs_axis_tick_t *tk = &ticks[n++];
            memset(tk, 0, sizeof *tk);
            tk->t = log10(i * step);
            tk->major = 1;
            tk->labelled = 1;
            axis_value_label(i * step, step, unit, tk);
        }
    }
    return n;
}

static int axis_log_ticks(double lo, double hi, cs_axis_unit_t unit, cs_axis_tick_t *ticks)
{
    const double eps = 1e-9;
    int dlo = (int)floor(lo), dhi = (int)ceil(hi), n = 0, majors = 0, labels = 0;
    int ndec = dhi - dlo, step = 1, minors = ndec <= 12;
    int sci = unit == CS_AXIS_PLAIN && (dlo < -3 || dhi > 14);
    for (int k = dlo; k <= dhi; k++)
        majors += k >= lo - eps && k <= hi + eps;
    if (ndec > 12)
        step = (ndec + 7) / 8;
    for (int k = dlo; k <= dhi; k++) {
        for (int m = 1; m <= 9; m++) {
            double t = k + log10((double)m);
            if (m > 1 && !minors)
                break;
            if (t < lo - eps || t > hi + eps || n == CS_AXIS_MAX_TICKS)
                continue;
            cs_axis_tick_t *tk = &ticks[n++];
            memset(tk, 0, sizeof *tk);
            tk->t = t;
            tk->major = m == 1 && ((k % step) + step) % step == 0;
            /* two decades or less: 2x and 5x labelled too (3x under two
             * decade ticks; every minor tick on a very short axis) */
            tk->labelled = m == 1 ? tk->major
                                  : majors <= 2 && (m == 2 || m == 5 ||
                                                    (majors < 2 && m == 3) || hi - lo < 0.5);
            if (tk->labelled) {
                axis_log_label(m, k, sci, unit, tk);
                labels++;
            }
        }
    }
    return labels < 3 ? axis_log_fine(lo, hi, unit, ticks) : n;
}

static int axis_lin_ticks(double lo, double hi, cs_axis_unit_t unit, cs_axis_tick_t *ticks)
{
    double step = cs_fig_nice_step(hi - lo, 6);
    int n = 0;
    for (double i = ceil(lo / step); i * step <= hi + step * 1e-9 && n < 64; i++) {
        cs_axis_tick_t *tk = &ticks[n++];
        double v = i * step;
        memset(tk, 0, sizeof *tk);
        tk->t = v;
        tk->major = 1;
        tk->labelled = 1;
        if (fabs(v) < step * 1e-9)
            v = 0; /* no "-0" or "1e-17" from rounding */
        if (axis_si(unit))
            axis_si_label(v, step, axis_si(unit), tk);
        else
            snprintf(tk->text, sizeof tk->text, "%g", v);
    }
    return n;
}

int cs_axis_ticks(int log, double lo, double hi, cs_axis_unit_t unit, cs_axis_tick_t *ticks)
{
    if (!(hi > lo) || !isfinite(lo) || !isfinite(hi))
        return 0;
    return log ? axis_log_ticks(lo, hi, unit, ticks) : axis_lin_ticks(lo, hi, unit, ticks);
}
