/*
 * chanrec.c - time-bucketed channel statistics (contract in chanrec.h).
 *
 * Storage: one array of max_buckets cs_chan_stats_t per channel, allocated
 * when the channel first records something.  Growing doubles the width and
 * merges bucket pairs in place for every allocated channel: O(channels x
 * max_buckets) per doubling, and there are at most log2(run / width) of
 * them.  The k level of each channel (cs_chanrec_k) is kept as (since, k)
 * so that a level lasting many buckets reaches every one of them.
 */
#include "engine/chanrec.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

struct cs_chanrec {
    int nchans;
    cs_tick_t w;            /* bucket width */
    int max, n;             /* buckets per channel, buckets used */
    cs_tick_t end;          /* the latest time recorded (end of an interval) */
    cs_chan_stats_t **b;    /* per channel, lazily allocated */
    cs_tick_t *k_since;     /* per channel: the current k level's start */
    int32_t *k_level;
};

cs_chanrec_t *cs_chanrec_new(int nchans, cs_tick_t width, int max_buckets)
{
    CS_ASSERT(nchans >= 0 && width > 0 && max_buckets >= 2);
    cs_chanrec_t *r = cs_calloc(1, sizeof *r);
    r->nchans = nchans;
    r->w = width;
    r->max = max_buckets + (max_buckets & 1);
    r->b = cs_calloc((size_t)nchans + 1, sizeof *r->b);
    r->k_since = cs_calloc((size_t)nchans + 1, sizeof *r->k_since);
    r->k_level = cs_calloc((size_t)nchans + 1, sizeof *r->k_level);
    return r;
}

void cs_chanrec_free(cs_chanrec_t *r)
{
    if (!r)
        return;
    for (int c = 0; c < r->nchans; c++)
        free(r->b[c]);
    free(r->b);
    free(r->k_since);
    free(r->k_level);
    free(r);
}

cs_tick_t cs_chanrec_width(const cs_chanrec_t *r) { return r ? r->w : 0; }
int cs_chanrec_count(const cs_chanrec_t *r) { return r ? r->n : 0; }

const cs_chan_stats_t *cs_chanrec_get(const cs_chanrec_t *r, int chan, int b)
{
    if (!r || chan < 0 || chan >= r->nchans || !r->b[chan] || b < 0 || b >= r->n)
        return NULL;
    return &r->b[chan][b];
}

/* Doubles the width, merging neighbours, until time t fits. */
static void grow(cs_chanrec_t *r, cs_tick_t t)
{
    while (t / r->w >= r->max) {
        for (int c = 0; c < r->nchans; c++) {
            cs_chan_stats_t *b = r->b[c];
            if (!b)
                continue;
            for (int i = 0; i < r->max / 2; i++) {
                cs_chan_stats_t x = b[2 * i], y = b[2 * i + 1];
                b[i].bytes = x.bytes + y.bytes;
                b[i].units = x.units + y.units;
                b[i].busy = x.busy + y.busy;
                b[i].stall = x.stall + y.stall;
                b[i].peak_k = x.peak_k > y.peak_k ? x.peak_k : y.peak_k;
            }
            memset(b + r->max / 2, 0, (size_t)(r->max - r->max / 2) * sizeof *b);
        }
        r->w *= 2;
        r->n = (r->n + 1) / 2;
    }
}

/* The bucket of time t (after growing so that it exists). */
static cs_chan_stats_t *at(cs_chanrec_t *r, int chan, cs_tick_t t)
{
    CS_ASSERT(chan >= 0 && chan < r->nchans && t >= 0);
    grow(r, t);
    if (t + 1 > r->end)
        r->end = t + 1;
    if (!r->b[chan])
        r->b[chan] = cs_calloc((size_t)r->max, sizeof **r->b);
    int b = (int)(t / r->w);
    if (b + 1 > r->n)
        r->n = b + 1;
    return &r->b[chan][b];
}

static void peak_into(cs_chan_stats_t *b, int32_t k)
{
    if (k > b->peak_k)
        b->peak_k = k;
}

/* Spreads an interval over the buckets it covers; bytes, units and time go
 * in proportion to the covered share (integer-exact in total). */
static void spread(cs_chanrec_t *r, int chan, cs_tick_t start, cs_tick_t span, cs_tick_t busy,
                   int64_t bytes, int64_t units, int stall)
{
    cs_tick_t end = start + span, t = start;
    int64_t bytes_left = bytes, units_left = units;
    if (end > r->end)
        r->end = end;
    cs_tick_t busy_left = busy;
    if (span <= 0) {
        cs_chan_stats_t *b = at(r, chan, start);
        b->bytes += bytes;
        b->units += units;
        if (stall)
            b->stall += busy;
        else {
            b->busy += busy;
            if (busy > 0 || bytes > 0)
                peak_into(b, 1);
        }
        return;
    }
    grow(r, end - 1);
    while (t < end) {
        cs_tick_t bend = (t / r->w + 1) * r->w;
        cs_tick_t piece = (bend < end ? bend : end) - t;
        cs_chan_stats_t *b = at(r, chan, t);
        int last = bend >= end;
        int64_t pb = last ? bytes_left : (int64_t)((__int128)bytes * piece / span);
        int64_t pu = last ? units_left : (int64_t)((__int128)units * piece / span);
        cs_tick_t pt = last ? busy_left : (cs_tick_t)((__int128)busy * piece / span);
        if (stall)
            b->stall += pt;
        else {
            b->busy += pt;
            if (pt > 0 || pb > 0)
                peak_into(b, 1);
        }
        b->bytes += pb;
        b->units += pu;
        bytes_left -= pb;
        units_left -= pu;
        busy_left -= pt;
        t += piece;
    }
}

void cs_chanrec_busy(cs_chanrec_t *r, int chan, cs_tick_t start, cs_tick_t span,
                     cs_tick_t busy, int64_t bytes, int64_t units)
{
    if (r)
        spread(r, chan, start, span, busy, bytes, units, 0);
}

void cs_chanrec_stall(cs_chanrec_t *r, int chan, cs_tick_t start, cs_tick_t dur)
{
    if (r && dur > 0)
        spread(r, chan, start, dur, dur, 0, 0, 1);
}

void cs_chanrec_peak(cs_chanrec_t *r, int chan, cs_tick_t t, int32_t k)
{
    if (r && k > 0)
        peak_into(at(r, chan, t), k);
}

void cs_chanrec_k(cs_chanrec_t *r, int chan, cs_tick_t t, int32_t k)
{
    if (!r)
        return;
    CS_ASSERT(chan >= 0 && chan < r->nchans);
    cs_tick_t since = r->k_since[chan];
    int32_t level = r->k_level[chan];
    /* the level that held until now reaches every bucket it covered */
    if (level > 0 && t > since) {
        grow(r, t - 1);
        for (cs_tick_t b = since / r->w; b <= (t - 1) / r->w; b++)
            peak_into(at(r, chan, b * r->w), level);
    }
    if (k > 0)
        peak_into(at(r, chan, t), k);
    r->k_since[chan] = t;
    r->k_level[chan] = k;
}

void cs_chanrec_window(const cs_chanrec_t *r, int chan, cs_tick_t t0, cs_tick_t t1,
                       cs_chan_stats_t *out)
{
    memset(out, 0, sizeof *out);
    if (!r || chan < 0 || chan >= r->nchans || !r->b[chan] || t1 <= t0)
        return;
    double bytes = 0, units = 0, busy = 0, stall = 0;
    int first = (int)(t0 / r->w), last = (int)((t1 - 1) / r->w);
    if (last >= r->n)
        last = r->n - 1;
    for (int b = first < 0 ? 0 : first; b <= last; b++) {
        const cs_chan_stats_t *s = &r->b[chan][b];
        cs_tick_t lo = b * r->w, hi = lo + r->w;
        /* nothing was recorded after `end`: the last bucket holds
         * [lo, end) only */
        if (hi > r->end && r->end > lo)
            hi = r->end;
        cs_tick_t from = t0 > lo ? t0 : lo, to = t1 < hi ? t1 : hi;
        if (to <= from)
            continue;
        double share = (double)(to - from) / (double)(hi - lo);
        bytes += share * (double)s->bytes;
        units += share * (double)s->units;
        busy += share * (double)s->busy;
        stall += share * (double)s->stall;
        if (s->peak_k > out->peak_k)
            out->peak_k = s->peak_k;
    }
    out->bytes = (int64_t)(bytes + 0.5);
    out->units = (int64_t)(units + 0.5);
    out->busy = (cs_tick_t)(busy + 0.5);
    out->stall = (cs_tick_t)(stall + 0.5);
}
