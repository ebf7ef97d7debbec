/*
 * net_fluid.c - fluid mode of the network engine (model in net.h).
 *
 * A message is a flow.  Whenever the set of flows changes (a flow starts,
 * finishes, reaches its gate or has its gate raised) the rates of all
 * flows are recomputed as the max-min fair allocation of channel capacity
 * (progressive filling: raise every unfrozen flow's rate equally until a
 * channel saturates, freeze the flows through it, repeat).  All changes at
 * one tick are batched into a single recomputation, scheduled as an event
 * after the ones already queued for that tick.
 *
 * Times are integer ticks; a flow's finish is the first tick at which its
 * bytes have crossed (ceil), with a relative tolerance of 1e-9 so that exact
 * rational answers (alpha + beta*n*k) are not pushed one tick late by
 * floating-point rounding.
 *
 * Cost: a recomputation is O(F*H log C) (water-filling below), and only the
 * flows whose rate changed get a new step event.
 *
 * The mode is cs_net_fluid_mode (its ops table and handlers) over the shared
 * channel engine state (net_chan.c does posting, ports and completion).
 */
#include "engine/net_internal.h"

#include <math.h>
#include <stdlib.h>

/* The mode's handlers, by their index in h_mode[]. */
enum { H_STEP, H_RECOMPUTE, H_PROGRESS };

static void fluid_free(void *impl)
{
    cs_net_chan_t *n = impl;
    free(n->fl_active);
    free(n->fl_chans);
    free(n->fl_adj);
    free(n->fl_fill);
    free(n->fl_heap);
    cs_net_chan_free(n);
}

static double tol(const msg_t *m) { return 1e-9 * (double)m->bytes + 1e-6; }

/* Latency from the last byte leaving the bottleneck to its arrival. */
static cs_tick_t path_latency(const cs_net_chan_t *n, const msg_t *m)
{
    cs_tick_t lat = 0;
    for (int32_t h = 0; h < m->nhops; h++)
        lat += n->ch[m->hs[h].chan].wire;
    return lat + (m->nhops > 1 ? (cs_tick_t)(m->nhops - 1) * n->p.router_lat : 0);
}

static void mark_dirty(cs_net_chan_t *n)
{
    if (n->fl_dirty)
        return;
    n->fl_dirty = 1;
    cs_sim_at(n->sim, cs_sim_now(n->sim), n->h_mode[H_RECOMPUTE], 0, 0);
}

static void active_add(cs_net_chan_t *n, uint32_t id)
{
    if (n->fl_n == n->fl_cap) {
        n->fl_cap = n->fl_cap ? n->fl_cap * 2 : 256;
        n->fl_active = cs_realloc(n->fl_active, (size_t)n->fl_cap * sizeof *n->fl_active);
    }
    n->msgs[id].active_idx = n->fl_n;
    n->fl_active[n->fl_n++] = id;
}

static void active_remove(cs_net_chan_t *n, uint32_t id)
{
    uint32_t i = n->msgs[id].active_idx, last = n->fl_active[--n->fl_n];
    n->fl_active[i] = last;
    n->msgs[last].active_idx = i;
}

/* Brings a flow's remaining bytes up to now. */
static void advance(cs_net_chan_t *n, msg_t *m)
{
    cs_tick_t now = cs_sim_now(n->sim);
    if (now > m->last) {
        m->remaining -= m->rate * (double)(now - m->last);
        /* never past the gate (a step rounds up to whole ticks) */
        if (m->gate < m->bytes && m->remaining < (double)(m->bytes - m->gate))
            m->remaining = (double)(m->bytes - m->gate);
        if (m->remaining < 0)
            m->remaining = 0;
    }
    m->last = now;
}

static double transferred(const msg_t *m) { return (double)m->bytes - m->remaining; }

/* Ticks until the flow has moved `target` bytes in total at its rate. */
static cs_tick_t ticks_to(const msg_t *m, double target)
{
    double need = target - transferred(m);
    double dt;
    if (need <= tol(m))
        return 0;
    if (m->rate <= 0)
        return -1;
    dt = need / m->rate;
    if (dt > 9e18)
        return -1;
    return (cs_tick_t)ceil(dt * (1 - 1e-12) - 1e-9);
}

static int at_gate(const msg_t *m)
{
    return m->gate < m->bytes && transferred(m) + tol(m) >= (double)m->gate;
}

/* Schedules the flow's next step: finish, gate reached, or (watched) the
 * next unit boundary, whichever comes first. */
static void schedule_step(cs_net_chan_t *n, uint32_t id)
{
    msg_t *m = &n->msgs[id];
    double target = (double)(m->gate < m->bytes ? m->gate : m->bytes);
    cs_tick_t dt;
    m->version++;
    if (at_gate(m))
        return; /* waits for cs_net_gate, which triggers a recomputation */
    if (m->watch) {
        double next_unit = (floor((transferred(m) + tol(m)) / (double)n->p.unit_bytes) + 1) *
                           (double)n->p.unit_bytes;
        if (next_unit < target)
            target = next_unit;
    }
    dt = ticks_to(m, target);
    if (dt >= 0)
        cs_sim_at(n->sim, cs_sim_now(n->sim) + dt, n->h_mode[H_STEP], id, m->version);
}

/* Overhead over: the flow joins the active set and rates are recomputed. */
static void on_begin(void *ctx, const cs_event_t *ev)
{
    cs_net_chan_t *n = ctx;
    uint32_t id = ev->a;
    if (!cs_net_chan_begin(n, id))
        return;
    msg_t *m = &n->msgs[id];
    m->remaining = (double)m->bytes;
    m->rate = 0;
    m->fresh = 1;
    m->last = m->t_start = cs_sim_now(n->sim);
    cs_net_i_k_change(n, m, +1);
    active_add(n, id);
    mark_dirty(n);
}

static void fluid_gate(void *impl, uint32_t id, int64_t gate_bytes, int64_t rate)
{
    cs_net_chan_t *n = impl;
    (void)rate; /* a slope is not modelled: the gate steps */
    if (!cs_net_chan_raise_gate(n, id, gate_bytes))
        return;
    n->msgs[id].fresh = 1; /* its step must be rescheduled even at an equal rate */
    mark_dirty(n);
}

/* ---- max-min fair rates by water-filling ------------------------------
 *
 * All unfrozen flows share one rising "water level" L.  A channel with
 * capacity left `left` and n unfrozen flows saturates at L = left / n; the
 * channel with the least such key saturates first, its flows freeze at that
 * rate, and the channels they cross give up that rate and lose one flow.
 * Keys only grow when flows freeze below them, so a min-heap with lazy
 * deletion (a version per channel) finds the next bottleneck.  Cost per
 * recomputation: O(F*H log C) for F flows of H hops over C channels.
 */

typedef struct heap_item {
    double key;
    int32_t chan;
    uint32_t ver;
} heap_item_t;

static int item_less(const heap_item_t *a, const heap_item_t *b)
{
    return a->key < b->key || (a->key == b->key && a->chan < b->chan);
}

static void heap_push(cs_net_chan_t *n, size_t *len, heap_item_t it)
{
    heap_item_t *h;
    size_t i;
    if (*len == n->fl_heap_cap) {
        n->fl_heap_cap = n->fl_heap_cap ? n->fl_heap_cap * 2 : 1024;
        n->fl_heap = cs_realloc(n->fl_heap, n->fl_heap_cap * sizeof(heap_item_t));
    }
    h = n->fl_heap;
    for (i = (*len)++; i > 0; i = (i - 1) / 2) {
        if (!item_less(&it, &h[(i - 1) / 2]))
            break;
        h[i] = h[(i - 1) / 2];
    }
    h[i] = it;
}

static heap_item_t heap_pop(cs_net_chan_t *n, size_t *len)
{
    heap_item_t *h = n->fl_heap, top = h[0], last = h[--(*len)];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *len)
            break;
        if (c + 1 < *len && item_less(&h[c + 1], &h[c]))
            c++;
        if (!item_less(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (*len)
        h[i] = last;
    return top;
}

static void grow_scratch(cs_net_chan_t *n, size_t hops)
{
    if (hops > n->fl_scratch_cap) {
        n->fl_scratch_cap = hops * 2;
        n->fl_adj = cs_realloc(n->fl_adj, n->fl_scratch_cap * sizeof *n->fl_adj);
        n->fl_chans = cs_realloc(n->fl_chans, n->fl_scratch_cap * sizeof *n->fl_chans);
        n->fl_fill = cs_realloc(n->fl_fill, n->fl_scratch_cap * sizeof *n->fl_fill);
    }
}

/* Writes each active flow's max-min fair rate into rate_out[i]. */
static void fill_rates(cs_net_chan_t *n, double *rate_out)
{
    size_t hops = 0, nchans = 0, heap_len = 0;
    uint32_t epoch = ++n->fl_epoch;
    for (uint32_t i = 0; i < n->fl_n; i++)
        hops += (size_t)n->msgs[n->fl_active[i]].nhops;
    grow_scratch(n, hops + 1);
    /* the channels in use, their capacity and unfrozen flow counts */
    for (uint32_t i = 0; i < n->fl_n; i++) {
        msg_t *m = &n->msgs[n->fl_active[i]];
        rate_out[i] = 0;
        m->frozen = (uint8_t)at_gate(m);
        for (int32_t h = 0; h < m->nhops; h++) {
            chan_state_t *c = &n->ch[m->hs[h].chan];
            if (c->fl_epoch != epoch) {
                c->fl_epoch = epoch;
                c->left = c->cap;
                c->nflows = 0;
                c->fl_ver = (uint32_t)nchans; /* index, until the adjacency is built */
                n->fl_chans[nchans++] = m->hs[h].chan;
            }
            if (!m->frozen)
                c->nflows++;
        }
    }
    /* adjacency: the unfrozen flows of each channel, in flow order */
    uint32_t off = 0;
    for (size_t k = 0; k < nchans; k++) {
        chan_state_t *c = &n->ch[n->fl_chans[k]];
        c->fl_first = off;
        n->fl_fill[k] = off;
        off += (uint32_t)c->nflows;
    }
    for (uint32_t i = 0; i < n->fl_n; i++) {
        msg_t *m = &n->msgs[n->fl_active[i]];
        if (m->frozen)
            continue;
        for (int32_t h = 0; h < m->nhops; h++)
            n->fl_adj[n->fl_fill[n->ch[m->hs[h].chan].fl_ver]++] = i;
    }
    for (size_t k = 0; k < nchans; k++) {
        chan_state_t *c = &n->ch[n->fl_chans[k]];
        c->fl_ver = 0;
        if (c->nflows > 0)
            heap_push(n, &heap_len, (heap_item_t){c->left / c->nflows, n->fl_chans[k], 0});
    }
    while (heap_len) {
        heap_item_t it = heap_pop(n, &heap_len);
        chan_state_t *c = &n->ch[it.chan];
        if (it.ver != c->fl_ver || c->nflows <= 0)
            continue;
        double level = it.key > 0 ? it.key : 0;
        /* freeze every still-unfrozen flow through the bottleneck */
        for (uint32_t a = c->fl_first; c->nflows > 0; a++) {
            uint32_t i = n->fl_adj[a];
            msg_t *m = &n->msgs[n->fl_active[i]];
            if (m->frozen)
                continue;
            m->frozen = 1;
            rate_out[i] = level;
            for (int32_t h = 0; h < m->nhops; h++) {
                int32_t dc = m->hs[h].chan;
                chan_state_t *d = &n->ch[dc];
                d->left -= level;
                if (d->left < 0)
                    d->left = 0;
                d->nflows--;
                d->fl_ver++;
                if (d != c && d->nflows > 0)
                    heap_push(n, &heap_len, (heap_item_t){d->left / d->nflows, dc, d->fl_ver});
            }
        }
    }
}

static void on_recompute(void *ctx, const cs_event_t *ev)
{
    cs_net_chan_t *n = ctx;
    double *rates;
    (void)ev;
    n->fl_dirty = 0;
    if (!n->fl_n)
        return;
    rates = cs_malloc(n->fl_n * sizeof *rates);
    for (uint32_t i = 0; i < n->fl_n; i++)
        advance(n, &n->msgs[n->fl_active[i]]);
    fill_rates(n, rates);
    /* only flows whose rate changed need a new step: with an unchanged rate
     * the scheduled step stays right (remaining was advanced linearly) */
    for (uint32_t i = 0; i < n->fl_n; i++) {
        msg_t *m = &n->msgs[n->fl_active[i]];
        if (rates[i] != m->rate || m->fresh) {
            m->rate = rates[i];
            m->fresh = 0;
            schedule_step(n, n->fl_active[i]);
        }
    }
    free(rates);
}

/* A flow finished crossing: account it and schedule its arrival. */
static void flow_done(cs_net_chan_t *n, uint32_t id)
{
    msg_t *m = &n->msgs[id];
    cs_tick_t now = cs_sim_now(n->sim);
    m->version++;
    m->rate = 0;
    active_remove(n, id);
    cs_net_i_k_change(n, m, -1);
    for (int32_t h = 0; h < m->nhops; h++) {
        const chan_state_t *c = &n->ch[m->hs[h].chan];
        cs_net_i_record(n, m->hs[h].chan, m->t_start, now - m->t_start, net_ser(c, m->bytes),
                        m->bytes, 1);
    }
    cs_sim_at(n->sim, now + path_latency(n, m), n->h_mode[H_PROGRESS], id, (uint64_t)m->bytes);
    mark_dirty(n);
}

static void on_step(void *ctx, const cs_event_t *ev)
{
    cs_net_chan_t *n = ctx;
    uint32_t id = ev->a;
    msg_t *m = &n->msgs[id];
    if (m->state != MSG_ACTIVE || ev->b != m->version)
        return; /* superseded by a recomputation */
    advance(n, m);
    /* A target (the end, the gate, the next unit) that is due within this
     * very tick counts as reached: on an (almost) infinitely fast channel the
     * step would otherwise land on the same tick forever. */
    double end = (double)(m->gate < m->bytes ? m->gate : m->bytes);
    if (transferred(m) < end && ticks_to(m, end) == 0)
        m->remaining = (double)m->bytes - end;
    if (m->gate >= m->bytes && m->remaining <= tol(m)) {
        m->remaining = 0;
        flow_done(n, id);
        return;
    }
    if (m->watch) {
        double next_unit = (floor((transferred(m) + tol(m)) / (double)n->p.unit_bytes) + 1) *
                           (double)n->p.unit_bytes;
        if (next_unit < end && ticks_to(m, next_unit) == 0)
            m->remaining = (double)m->bytes - next_unit;
        int64_t units = (int64_t)floor((transferred(m) + tol(m)) / (double)n->p.unit_bytes);
        int64_t b = units * n->p.unit_bytes;
        if (b > m->reported) {
            m->reported = b;
            cs_sim_at(n->sim, cs_sim_now(n->sim) + path_latency(n, m), n->h_mode[H_PROGRESS], id,
                      (uint64_t)b);
        }
    }
    if (at_gate(m))
        mark_dirty(n); /* it stops: its bandwidth goes to others */
    else
        schedule_step(n, id);
}

static void on_progress(void *ctx, const cs_event_t *ev)
{
    cs_net_chan_t *n = ctx;
    msg_t *m = &n->msgs[ev->a];
    /* a late unit report is moot, but the final one always counts (even
     * for a 0-byte message, which arrives with 0 bytes) */
    if ((int64_t)ev->b <= m->arrived && (int64_t)ev->b < m->bytes)
        return;
    cs_net_i_arrived(n, ev->a, (int64_t)ev->b, cs_sim_now(n->sim));
}

static int fluid_explain(const void *impl, cs_error_t *err)
{
    return cs_net_chan_explain(impl, "", err);
}

static const cs_net_ops_t fluid_ops = {
    .name = "fluid",
    .mode = CS_NET_FLUID,
    .post = cs_net_chan_post,
    .gate = fluid_gate,
    .active = cs_net_chan_active,
    .explain_stuck = fluid_explain,
    .chan_stats = cs_net_chan_totals,
    .free = fluid_free,
};

const cs_net_chan_mode_t cs_net_fluid_mode = {
    .ops = &fluid_ops,
    .begin = on_begin,
    .handlers = {[H_STEP] = on_step, [H_RECOMPUTE] = on_recompute, [H_PROGRESS] = on_progress},
};
