/*
 * net.c - the engine handle: every network engine (the channel engine in
 * packet or fluid mode, or a machine's own) is a cs_net_ops_t table plus
 * its private state, and each cs_net_* call forwards through the table (see
 * net.h).  It also owns the time-bucket recorder, which engines feed.  It
 * knows no particular engine.
 */
#include "engine/net_internal.h"

#include "core/checked.h"

#include <stdlib.h>
#include <string.h>

cs_net_t *cs_net_new_engine(const cs_net_ops_t *ops, void *impl, const cs_topo_t *topo)
{
    cs_net_t *n = cs_calloc(1, sizeof *n);
    n->ops = ops;
    n->impl = impl;
    n->nchans = cs_topo_channels(topo);
    return n;
}

void cs_net_free(cs_net_t *n)
{
    if (!n)
        return;
    cs_chanrec_free(n->rec);
    n->ops->free(n->impl);
    free(n);
}

void *cs_net_impl_of(const cs_net_t *n, const cs_net_ops_t *ops)
{
    return n && n->ops == ops ? n->impl : NULL;
}

const char *cs_net_engine_name(const cs_net_t *n) { return n->ops->name; }
cs_net_mode_t cs_net_mode(const cs_net_t *n) { return n->ops->mode; }
int cs_net_has_mcast(const cs_net_t *n) { return n->ops->has_mcast; }
int cs_net_late_release(const cs_net_t *n) { return n->ops->late_release; }

/* ---- operations: each forwards to the engine ------------------------------ */

uint32_t cs_net_post(cs_net_t *n, int src, int dst, int64_t bytes, int64_t gate_bytes, int watch,
                     uint64_t user)
{
    return n->ops->post(n->impl, src, 1, &dst, bytes, gate_bytes, watch, &user);
}

uint32_t cs_net_post_mcast(cs_net_t *n, int src, int ndst, const int *dst, int64_t bytes,
                           int64_t gate_bytes, int watch, const uint64_t *users)
{
    CS_ASSERT(ndst == 1 || n->ops->has_mcast);
    return n->ops->post(n->impl, src, ndst, dst, bytes, gate_bytes, watch, users);
}

void cs_net_gate(cs_net_t *n, uint32_t msg, int64_t gate_bytes)
{
    n->ops->gate(n->impl, msg, gate_bytes, 0);
}

void cs_net_gate_rate(cs_net_t *n, uint32_t msg, int64_t gate_bytes, int64_t rate)
{
    n->ops->gate(n->impl, msg, gate_bytes, rate);
}

void cs_net_matched(cs_net_t *n, uint32_t msg, uint64_t user)
{
    if (n->ops->matched)
        n->ops->matched(n->impl, msg, user);
}

int64_t cs_net_active(const cs_net_t *n) { return n->ops->active(n->impl); }

int cs_net_explain_stuck(const cs_net_t *n, cs_error_t *err)
{
    return n->ops->explain_stuck(n->impl, err);
}

int cs_net_error(const cs_net_t *n, cs_error_t *err)
{
    return n->ops->error ? n->ops->error(n->impl, err) : CS_OK;
}

int64_t cs_net_idle(cs_net_t *n) { return n->ops->idle ? n->ops->idle(n->impl) : 0; }

cs_tick_t cs_net_cpu(cs_net_t *n, int node, cs_tick_t now, cs_tick_t ticks)
{
    return n->ops->cpu ? n->ops->cpu(n->impl, node, now, ticks) : cs_tick_add(now, ticks);
}

const cs_chan_stats_t *cs_net_chan_stats(const cs_net_t *n, int chan)
{
    return n->ops->chan_stats(n->impl, chan);
}

/* Whether channel x (stats sx) ranks before channel y among the busiest. */
static int busier(const cs_chan_stats_t *sx, int x, const cs_chan_stats_t *sy, int y)
{
    if (sx->busy != sy->busy)
        return sx->busy > sy->busy;
    if (sx->bytes != sy->bytes)
        return sx->bytes > sy->bytes;
    return x < y;
}

int cs_net_busiest_channels(const cs_net_t *n, int *top, int count)
{
    int have = 0;
    if (!n)
        return 0;
    for (int c = 0; c < n->nchans; c++) {
        const cs_chan_stats_t *s = cs_net_chan_stats(n, c);
        if (!s || (s->bytes == 0 && s->busy == 0))
            continue;
        int pos = have;
        while (pos > 0 && busier(s, c, cs_net_chan_stats(n, top[pos - 1]), top[pos - 1]))
            pos--;
        if (pos >= count)
            continue;
        int last = have < count ? have : count - 1;
        memmove(top + pos + 1, top + pos, (size_t)(last - pos) * sizeof *top);
        top[pos] = c;
        if (have < count)
            have++;
    }
    return have;
}

/* ---- time buckets ---------------------------------------------------------- */

void cs_net_enable_buckets(cs_net_t *n, cs_tick_t width, int max_buckets)
{
    CS_ASSERT(width > 0 && max_buckets >= 2 && !n->rec);
    n->rec = cs_chanrec_new(n->nchans, width, max_buckets);
}

cs_chanrec_t *cs_net_recorder(const cs_net_t *n) { return n->rec; }
cs_tick_t cs_net_bucket_width(const cs_net_t *n) { return n->rec ? cs_chanrec_width(n->rec) : 0; }
int cs_net_bucket_count(const cs_net_t *n) { return cs_chanrec_count(n->rec); }

const cs_chan_stats_t *cs_net_chan_bucket(const cs_net_t *n, int chan, int b)
{
    return cs_chanrec_get(n->rec, chan, b);
}
