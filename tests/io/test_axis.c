/*
 * test_axis.c - the ticks and number texts of figure axes (src/io/axis.c).
 *
 * Expected labels are written out by hand from the rules of issue 32: a
 * labelled tick at every decade of a log axis, SI prefixes on time axes
 * (UTF-8 "µ"), at least three labels on any axis, four significant digits
 * in the values written on bars.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/axis.h"

static cs_axis_tick_t ticks[CS_AXIS_MAX_TICKS];

/* The labelled ticks' texts joined by '|', their count in *n. */
static void labels(int log, double lo, double hi, cs_axis_unit_t unit, char *buf, size_t len,
                   int *n)
{
    int nt = cs_axis_ticks(log, lo, hi, unit, ticks);
    buf[0] = '\0';
    *n = 0;
    for (int i = 0; i < nt; i++) {
        if (i)
            cr_assert_gt(ticks[i].t, ticks[i - 1].t, "ticks rise");
        cr_assert_geq(ticks[i].t, lo - 1e-9);
        cr_assert_leq(ticks[i].t, hi + 1e-9);
        if (!ticks[i].labelled)
            continue;
        strncat(buf, *n ? "|" : "", len - strlen(buf) - 1);
        strncat(buf, ticks[i].text, len - strlen(buf) - 1);
        if (ticks[i].sup[0]) {
            strncat(buf, "^", len - strlen(buf) - 1);
            strncat(buf, ticks[i].sup, len - strlen(buf) - 1);
        }
        (*n)++;
    }
}

Test(axis, a_labelled_tick_per_decade_of_seconds)
{
    char buf[1024];
    int n;
    /* 1 ns .. 10 ms, a little margin either side as a plot adds it */
    labels(1, -9.1, -1.9, CS_AXIS_SECONDS, buf, sizeof buf, &n);
    cr_expect_str_eq(buf, "1 ns|10 ns|100 ns|1 \xc2\xb5s|10 \xc2\xb5s|100 \xc2\xb5s|1 ms|10 ms");
    /* each decade's tick is major (grid line) and labelled */
    int nt = cs_axis_ticks(1, -9.1, -1.9, CS_AXIS_SECONDS, ticks);
    for (int i = 0; i < nt; i++) {
        double frac = ticks[i].t - floor(ticks[i].t + 1e-9);
        int decade = fabs(frac) < 1e-9;
        cr_expect_eq(ticks[i].labelled, decade, "t = %g", ticks[i].t);
        cr_expect_eq(ticks[i].major, decade, "t = %g", ticks[i].t);
    }
    labels(1, -1.2, 1.2, CS_AXIS_SECONDS, buf, sizeof buf, &n);
    cr_expect_str_eq(buf, "100 ms|1 s|10 s");
    /* two decade ticks only: 2x and 5x labelled too */
    labels(1, -1.2, 0.2, CS_AXIS_SECONDS, buf, sizeof buf, &n);
    cr_expect_str_eq(buf, "100 ms|200 ms|500 ms|1 s");
}

Test(axis, plain_decades_with_si_suffixes)
{
    char buf[1024];
    int n;
    labels(1, -0.1, 6.1, CS_AXIS_PLAIN, buf, sizeof buf, &n);
    cr_expect_str_eq(buf, "1|10|100|1k|10k|100k|1M");
    /* beyond 10^14 every label is a power of ten: no "100T" beside "10^15" */
    labels(1, 0, 16, CS_AXIS_PLAIN, buf, sizeof buf, &n);
    cr_expect_not_null(strstr(buf, "10^16"), "%s", buf);
    cr_expect_null(strstr(buf, "T"), "%s", buf);
}

/* The sweep plot of issue 32 labelled two y ticks (100M, 1G): an axis of
 * two decades or less labels 2x and 5x too. */
Test(axis, short_axes_show_at_least_three_numbers)
{
    char buf[1024];
    int n;
    labels(1, log10(14e6), log10(1.1e9), CS_AXIS_PLAIN, buf, sizeof buf, &n);
    cr_expect_str_eq(buf, "20M|50M|100M|200M|500M|1G");
    labels(1, log10(2.2e-5), log10(1.9e-4), CS_AXIS_SECONDS, buf, sizeof buf, &n);
    cr_expect_str_eq(buf, "30 \xc2\xb5s|50 \xc2\xb5s|100 \xc2\xb5s");
    /* within one decade: 1-2-5 steps in value space */
    labels(1, log10(1.21e-3), log10(1.79e-3), CS_AXIS_SECONDS, buf, sizeof buf, &n);
    cr_expect_geq(n, 3, "%s", buf);
    cr_expect_not_null(strstr(buf, "1.5 ms"), "%s", buf);
    /* a linear time axis: one prefix per tick, trailing zeros dropped */
    labels(0, 0, 1.6e-3, CS_AXIS_SECONDS, buf, sizeof buf, &n);
    cr_expect_str_eq(buf, "0 s|200 \xc2\xb5s|400 \xc2\xb5s|600 \xc2\xb5s|800 \xc2\xb5s|1 ms|"
                          "1.2 ms|1.4 ms|1.6 ms");
}

Test(axis, wide_axes_keep_labels_at_decades)
{
    int nt = cs_axis_ticks(1, -12, 12, CS_AXIS_PLAIN, ticks), labelled = 0;
    for (int i = 0; i < nt; i++)
        if (ticks[i].labelled) {
            labelled++;
            cr_expect(fabs(ticks[i].t - round(ticks[i].t)) < 1e-9, "t = %g", ticks[i].t);
        }
    cr_expect_geq(labelled, 4);
    cr_expect_leq(labelled, 13, "24 decades: every k-th labelled, not all");
    cr_expect_eq(cs_axis_ticks(1, 1, 1, CS_AXIS_PLAIN, ticks), 0, "an empty range");
}

Test(axis, four_significant_digits)
{
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {2.19038e-3, "2.190 ms"},  {469.865e-6, "469.9 \xc2\xb5s"}, {17.8255e-3, "17.83 ms"},
        {190.137e-6, "190.1 \xc2\xb5s"}, {999.96e-6, "1.000 ms"}, {1.5e-9, "1.500 ns"},
        {12.5, "12.50 s"},         {0, "0 s"},                     {2.5e-13, "250.0 fs"},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cs_axis_format(cases[i].v, 4, CS_AXIS_SECONDS, buf, sizeof buf);
        cr_expect_str_eq(buf, cases[i].want, "%g s", cases[i].v);
    }
    cs_axis_format(1234567, 4, CS_AXIS_PLAIN, buf, sizeof buf);
    cr_expect_str_eq(buf, "1.235e+06");
    cs_axis_format(412.5, 4, CS_AXIS_PLAIN, buf, sizeof buf);
    cr_expect_str_eq(buf, "412.5");
}

/* Bandwidths in decimal steps as nccl-tests prints them (1 GB/s = 10^9
 * B/s, never 2^30): 4 significant digits on bars and in tables. */
Test(axis, bandwidths_with_decimal_prefixes)
{
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {12.3456e9, "12.35 GB/s"}, {999.96e6, "1.000 GB/s"}, {1.073741824e9, "1.074 GB/s"},
        {512, "512.0 B/s"},        {0, "0 B/s"},             {2.5e15, "2.500 PB/s"},
        {0.5, "0.5 B/s"},          {4.5e3, "4.500 kB/s"},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cs_axis_format(cases[i].v, 4, CS_AXIS_BYTES_PER_S, buf, sizeof buf);
        cr_expect_str_eq(buf, cases[i].want, "%g B/s", cases[i].v);
    }
}

/* A log axis of bandwidths from 100 MB/s to 100 GB/s: a labelled tick per
 * decade, in B/s with the prefix of each decade. */
Test(axis, a_labelled_tick_per_decade_of_bandwidth)
{
    char buf[512];
    int n;
    labels(1, 8, 11, CS_AXIS_BYTES_PER_S, buf, sizeof buf, &n);
    cr_expect_str_eq(buf, "100 MB/s|1 GB/s|10 GB/s|100 GB/s");
    /* a linear axis of 0 .. 25 GB/s: steps of 5 GB/s */
    labels(0, 0, 25e9, CS_AXIS_BYTES_PER_S, buf, sizeof buf, &n);
    cr_expect_str_eq(buf, "0 B/s|5 GB/s|10 GB/s|15 GB/s|20 GB/s|25 GB/s");
}
