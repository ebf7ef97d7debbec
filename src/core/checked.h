/*
 * checked.h - checked integer arithmetic at the edges of the number range,
 * and the documented maxima of a run (issue 19, docs/limits.md).
 *
 * Every product the engines form (bytes x ticks per byte, packets, the
 * serialisation ratio num/den, reduction costs, time + latency) goes through
 * these helpers: either it is exact, or it saturates to CS_TICK_OVER, a time
 * beyond the clock's maximum CS_TICK_LIMIT.  The kernel refuses to schedule
 * an event after CS_TICK_LIMIT (core/sim.h, cs_sim_overflow) and the
 * executor turns that into an error naming the ranks and ops, so a
 * saturated time is never reported as a result.
 *
 * Why 2^62 ticks: the sum of two times at most CS_TICK_LIMIT still fits in
 * int64, so code that adds two checked times cannot wrap; 2^62 ticks is 53
 * days at the alpha-beta machine's 1 ps tick and 146 years at 1 ns.
 * Why 2^48 bytes per op (256 TiB): times ser_num up to 2^14 ticks per byte
 * the product stays below 2^62, and __int128 covers the rest.
 */
#ifndef CS_CHECKED_H
#define CS_CHECKED_H

#include <math.h>
#include <stdint.h>

#define CS_TICK_LIMIT (INT64_C(1) << 62) /* the clock's maximum, in ticks */
#define CS_TICK_OVER INT64_MAX           /* a saturated time: beyond the limit */
#define CS_BYTES_MAX (INT64_C(1) << 48)  /* bytes of one op (send, recv, mcast, calc) */

/* a * b, or CS_TICK_OVER when it would exceed CS_TICK_LIMIT (a, b >= 0). */
static inline int64_t cs_tick_mul(int64_t a, int64_t b)
{
    int64_t v;
    if (__builtin_mul_overflow(a, b, &v) || v > CS_TICK_LIMIT)
        return CS_TICK_OVER;
    return v;
}

/* a + b, or CS_TICK_OVER beyond CS_TICK_LIMIT (a, b >= 0; either may
 * already be CS_TICK_OVER). */
static inline int64_t cs_tick_add(int64_t a, int64_t b)
{
    int64_t v;
    if (__builtin_add_overflow(a, b, &v) || v > CS_TICK_LIMIT)
        return CS_TICK_OVER;
    return v;
}

/* ceil(n * num / den) exactly (n, num >= 0, den > 0), or CS_TICK_OVER
 * beyond CS_TICK_LIMIT. */
static inline int64_t cs_tick_muldiv_ceil(int64_t n, int64_t num, int64_t den)
{
    __int128 v = ((__int128)n * num + den - 1) / den;
    return v > CS_TICK_LIMIT ? CS_TICK_OVER : (int64_t)v;
}

/* round(n * num / den), halves up, exactly (n, num >= 0, den > 0), or
 * CS_TICK_OVER beyond CS_TICK_LIMIT.  n * num must fit in 127 bits
 * (n < 2^63 and num < 2^64 do). */
static inline int64_t cs_tick_muldiv_round(int64_t n, int64_t num, int64_t den)
{
    __int128 v = ((__int128)n * num * 2 + den) / ((__int128)den * 2);
    return v > CS_TICK_LIMIT ? CS_TICK_OVER : (int64_t)v;
}

/* The fraction num/den (num <= 2^40, den <= 2^40) that a positive ratio x
 * of two doubles stands for, found by continued fractions: the convergent
 * with the smallest denominator within 2^-50 of x relative, i.e. within the
 * rounding of the doubles x came from.  A ratio of decimal clocks (1 ns per
 * 1 ps tick: 1000; per a 3.2 GHz cycle: 16/5; any clock in whole kHz: a
 * denominator of at most 10^6, below which no earlier convergent comes
 * that close) is then exact, where
 * n * x in doubles is off by up to 2^-53 n, hundreds of ticks near the
 * clock's maximum.  Returns 0 (num, den untouched) when no such fraction
 * exists (or x is not positive and finite). */
static inline int cs_ratio_of_double(double x, int64_t *num, int64_t *den)
{
    const double max = 1099511627776.0; /* 2^40 */
    double h1 = 1, h2 = 0, k1 = 0, k2 = 1, y = x;
    if (!(x > 0) || !(x < max))
        return 0;
    for (int i = 0; i < 64; i++) {
        double a = floor(y), h = a * h1 + h2, k = a * k1 + k2;
        if (h > max || k > max)
            return 0;
        if (fabs(h / k - x) <= x * 0x1p-50) {
            *num = (int64_t)h;
            *den = (int64_t)k;
            return 1;
        }
        if (y == a)
            return 0;
        y = 1 / (y - a);
        h2 = h1, h1 = h, k2 = k1, k1 = k;
    }
    return 0;
}

/* A non-negative duration in ticks from a double, rounded to nearest:
 * CS_TICK_OVER for anything beyond CS_TICK_LIMIT (and for NaN), which a
 * plain (int64_t) cast would make undefined. */
static inline int64_t cs_tick_from_double(double x)
{
    if (!(x <= (double)CS_TICK_LIMIT))
        return CS_TICK_OVER;
    return x <= 0 ? 0 : (int64_t)llround(x);
}

/* Greatest common divisor (0 when both are 0): the units' exact ratios
 * and the MSCCL writer's chunk size share it. */
static inline uint64_t cs_gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

#endif
