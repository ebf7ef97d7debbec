/*
 * chanrec.h - per-channel statistics over time: a recorder of time buckets
 * that any network engine can feed (the channel engine of net.c, and the
 * machines' own engines: Cerebras fabric, CNS-1 interface, ...).  Heatmaps
 * of a time window and the frames of `collsim run --frames` are drawn from
 * it, timelines take their link counters from it.
 *
 * Buckets start `width` ticks wide; when a record would need more than
 * max_buckets of them, the width doubles and neighbours merge (sums add,
 * peaks take the maximum), so any run length fits in bounded memory: at most
 * max_buckets buckets per channel that carried traffic (channels that never
 * do allocate nothing).  Bucket b covers [b*width, (b+1)*width).
 *
 * An engine calls, as it goes (all calls accept r == NULL, so an engine can
 * pass whatever cs_net_recorder returned without testing it):
 *   cs_chanrec_busy   an interval [start, start+span) in which the channel
 *                     was busy `busy` ticks and moved `bytes` in `units`;
 *                     spread over the buckets in proportion (integer-exact
 *                     in total); a bucket that gets busy time has k >= 1;
 *   cs_chanrec_stall  [start, start+dur) with units waiting but no buffer;
 *   cs_chanrec_k      from time t on, k messages want the channel (call it
 *                     at every change, up and down): every bucket the level
 *                     covers gets it as a peak candidate;
 *   cs_chanrec_peak   k messages wanted the channel at time t (engines that
 *                     know k only at an instant).
 * Times must not decrease per channel for cs_chanrec_k; the others may
 * arrive in any order.
 */
#ifndef CS_CHANREC_H
#define CS_CHANREC_H

#include <stdint.h>
#include "core/sim.h"

/* Per-channel statistics, totals over the run or over one bucket. */
typedef struct cs_chan_stats {
    int64_t bytes;       /* payload bytes that crossed the channel */
    int64_t units;       /* packets (packet mode) or flows (fluid mode) */
    cs_tick_t busy;      /* ticks spent transmitting */
    cs_tick_t stall;     /* ticks with units waiting but no buffer downstream */
    int32_t peak_k;      /* most messages wanting the channel at one time */
} cs_chan_stats_t;

typedef struct cs_chanrec cs_chanrec_t; /* opaque */

/* A recorder for channels 0..nchans-1.  width >= 1, max_buckets >= 2 (an
 * odd count is rounded up, so that merging pairs never drops a bucket).
 * Never returns NULL. */
cs_chanrec_t *cs_chanrec_new(int nchans, cs_tick_t width, int max_buckets);
void cs_chanrec_free(cs_chanrec_t *r); /* accepts NULL */

void cs_chanrec_busy(cs_chanrec_t *r, int chan, cs_tick_t start, cs_tick_t span,
                     cs_tick_t busy, int64_t bytes, int64_t units);
void cs_chanrec_stall(cs_chanrec_t *r, int chan, cs_tick_t start, cs_tick_t dur);
void cs_chanrec_k(cs_chanrec_t *r, int chan, cs_tick_t t, int32_t k);
void cs_chanrec_peak(cs_chanrec_t *r, int chan, cs_tick_t t, int32_t k);

/* Current bucket width and the number of buckets used so far. */
cs_tick_t cs_chanrec_width(const cs_chanrec_t *r);
int cs_chanrec_count(const cs_chanrec_t *r);
/* Bucket b of channel c, or NULL if the channel never carried traffic or b
 * is out of range. */
const cs_chan_stats_t *cs_chanrec_get(const cs_chanrec_t *r, int chan, int b);

/* Sums the buckets of channel `chan` over [t0, t1): bytes, units, busy and
 * stall of a bucket that the window covers in part count in proportion to
 * the covered share (so a window resolves to the bucket width; the last
 * bucket counts as ending where the last record ended); peak_k is the
 * largest of the buckets it touches.  Zeroes for an idle channel. */
void cs_chanrec_window(const cs_chanrec_t *r, int chan, cs_tick_t t0, cs_tick_t t1,
                       cs_chan_stats_t *out);

#endif
