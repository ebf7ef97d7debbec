/*
 * test_chanrec.c - the time-bucket recorder (src/engine/chanrec.c) against a
 * trivially correct reference: per-tick arrays of busy time, bytes and k.
 * Random intervals are recorded into both; every bucket and every window
 * must agree with the sums of the reference, through any number of width
 * doublings.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/chanrec.h"

#define T 4000 /* ticks of the reference */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

TestSuite(chanrec, .timeout = 60);

/* Busy intervals of whole ticks (busy == span, one byte per tick): every
 * bucket holds exactly the reference's sum over its ticks. */
Test(chanrec, buckets_match_a_per_tick_reference)
{
    for (int max = 2; max <= 64; max += 7) {
        static int64_t busy[T], bytes[T];
        memset(busy, 0, sizeof busy);
        memset(bytes, 0, sizeof bytes);
        cs_chanrec_t *r = cs_chanrec_new(3, 1, max);
        for (int i = 0; i < 200; i++) {
            cs_tick_t s = (cs_tick_t)(next() % (T - 100)), span = 1 + (cs_tick_t)(next() % 90);
            cs_chanrec_busy(r, 1, s, span, span, span, 1);
            for (cs_tick_t t = s; t < s + span; t++) {
                busy[t]++;
                bytes[t]++;
            }
        }
        cs_tick_t w = cs_chanrec_width(r);
        cr_assert_leq(cs_chanrec_count(r), max + 1);
        cr_assert_null(cs_chanrec_get(r, 0, 0), "an idle channel has no buckets");
        for (int b = 0; b < cs_chanrec_count(r); b++) {
            int64_t sb = 0, sy = 0;
            for (cs_tick_t t = b * w; t < (b + 1) * w && t < T; t++) {
                sb += busy[t];
                sy += bytes[t];
            }
            const cs_chan_stats_t *st = cs_chanrec_get(r, 1, b);
            cr_assert_not_null(st);
            cr_expect_eq(st->busy, sb, "max %d width %lld bucket %d", max, (long long)w, b);
            cr_expect_eq(st->bytes, sy, "max %d bucket %d", max, b);
            cr_expect_eq(st->peak_k, sb > 0 ? 1 : 0, "busy implies k >= 1");
        }
        /* windows aligned to buckets sum exactly */
        cs_chan_stats_t win;
        cs_chanrec_window(r, 1, w, 3 * w, &win);
        int64_t ref = 0;
        for (cs_tick_t t = w; t < 3 * w && t < T; t++)
            ref += busy[t];
        cr_expect_eq(win.busy, ref);
        cs_chanrec_free(r);
    }
}

/* A k level reaches every bucket it lasts through, not only the one where
 * it started; a level that ends is not carried further. */
Test(chanrec, k_levels_cover_their_buckets)
{
    cs_chanrec_t *r = cs_chanrec_new(2, 10, 100);
    cs_chanrec_k(r, 0, 5, 1);
    cs_chanrec_k(r, 0, 15, 2);  /* k = 2 over [15, 47) */
    cs_chanrec_k(r, 0, 47, 1);
    cs_chanrec_k(r, 0, 60, 0);
    cs_chanrec_busy(r, 0, 95, 1, 1, 4, 1); /* makes bucket 9 exist */
    int want[10] = {1, 2, 2, 2, 2, 1, 0, 0, 0, 1};
    for (int b = 0; b < 10; b++)
        cr_expect_eq(cs_chanrec_get(r, 0, b)->peak_k, want[b], "bucket %d", b);
    cs_chan_stats_t w;
    cs_chanrec_window(r, 0, 50, 100, &w);
    cr_expect_eq(w.peak_k, 1);
    cs_chanrec_window(r, 0, 0, 100, &w);
    cr_expect_eq(w.peak_k, 2);
    cs_chanrec_peak(r, 1, 33, 7);
    cr_expect_eq(cs_chanrec_get(r, 1, 3)->peak_k, 7);
    cs_chanrec_free(r);
}

/* Stall time is kept apart from busy time; a window that covers part of a
 * bucket takes that share of it. */
Test(chanrec, stall_and_partial_windows)
{
    cs_chanrec_t *r = cs_chanrec_new(1, 100, 8);
    cs_chanrec_stall(r, 0, 0, 100);
    cs_chanrec_busy(r, 0, 100, 100, 100, 1000, 10);
    cs_chan_stats_t w;
    cs_chanrec_window(r, 0, 50, 150, &w);
    cr_expect_eq(w.stall, 50);
    cr_expect_eq(w.busy, 50);
    cr_expect_eq(w.bytes, 500);
    cs_chanrec_window(r, 0, 150, 150, &w);
    cr_expect_eq(w.busy, 0, "an empty window holds nothing");
    /* NULL is accepted everywhere (an engine without a recorder) */
    cs_chanrec_busy(NULL, 0, 0, 1, 1, 1, 1);
    cs_chanrec_k(NULL, 0, 0, 1);
    cr_expect_eq(cs_chanrec_count(NULL), 0);
    cs_chanrec_free(r);
}
