/*
 * test_checked.c - core/checked.h: the rounding product and the fraction a
 * ratio of two clocks stands for (issue 19: program times converted to
 * machine ticks exactly, docs/limits.md).  Expected values by hand.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "core/checked.h"

Test(checked, muldiv_round_halves_up_and_saturates)
{
    cr_expect_eq(cs_tick_muldiv_round(5, 11, 10), 6);  /* 5.5 */
    cr_expect_eq(cs_tick_muldiv_round(4, 11, 10), 4);  /* 4.4 */
    cr_expect_eq(cs_tick_muldiv_round(3, 1, 8), 0);    /* 0.375 */
    cr_expect_eq(cs_tick_muldiv_round(4, 1, 8), 1);    /* 0.5 */
    cr_expect_eq(cs_tick_muldiv_round(INT64_C(720575940379279360), 16, 5), INT64_C(1) << 61);
    cr_expect_eq(cs_tick_muldiv_round(INT64_C(720575940379279361), 16, 5),
                 (INT64_C(1) << 61) + 3); /* + 3.2 */
    cr_expect_eq(cs_tick_muldiv_round(INT64_C(4611686018427387), 1000, 1),
                 INT64_C(4611686018427387000));
    cr_expect_eq(cs_tick_muldiv_round(INT64_C(4611686018427388), 1000, 1), CS_TICK_OVER);
    cr_expect_eq(cs_tick_muldiv_round(CS_TICK_LIMIT, 1, 1), CS_TICK_LIMIT);
    cr_expect_eq(cs_tick_muldiv_round(INT64_MAX, INT64_C(1) << 40, 1), CS_TICK_OVER);
}

static void expect_ratio(double x, int64_t num, int64_t den)
{
    int64_t n = -1, d = -1;
    cr_expect(cs_ratio_of_double(x, &n, &d), "%.17g: no fraction", x);
    cr_expect(n == num && d == den, "%.17g: %lld/%lld, expected %lld/%lld", x, (long long)n,
              (long long)d, (long long)num, (long long)den);
}

Test(checked, ratio_of_decimal_clocks)
{
    /* ns per tick as the machines compute it: unit / tick_seconds */
    expect_ratio(1e-9 / 1e-12, 1000, 1); /* 1000.0000000000001 in doubles */
    expect_ratio(1e-9 / (1.0 / 3.2e9), 16, 5);
    expect_ratio(1e-9 / (1.0 / 1.1e9), 11, 10);
    expect_ratio(1e-9 / 8e-9, 1, 8);
    expect_ratio(1e-9 / 1e-9, 1, 1);
    expect_ratio(1e-9 / (1.0 / 1.234567e9), 1234567, 1000000); /* any clock in whole kHz */
    expect_ratio(1e-9 / 1.5e-9, 2, 3);
}

Test(checked, ratio_refused_when_none_is_close)
{
    int64_t n = 7, d = 7;
    cr_expect_not(cs_ratio_of_double(NAN, &n, &d));
    cr_expect_not(cs_ratio_of_double(-2.0, &n, &d));
    cr_expect_not(cs_ratio_of_double(0.0, &n, &d));
    cr_expect_not(cs_ratio_of_double(INFINITY, &n, &d));
    cr_expect_not(cs_ratio_of_double(0x1p41, &n, &d)); /* numerator beyond 2^40 */
    /* 1 / (2^40 + 1) needs a denominator beyond 2^40 */
    cr_expect_not(cs_ratio_of_double(1.0 / (0x1p40 + 1.0), &n, &d));
    cr_expect(n == 7 && d == 7, "the outputs were touched");
}
