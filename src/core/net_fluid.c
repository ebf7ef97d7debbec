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
 * Known cost: a recomputation is O(levels * flows * hops).  Fine for
 * thousands of concurrent flows; far larger runs should use packet mode on
 * small messages or accept the cost.
 */
#include "core/net_internal.h"

#include <math.h>
#include <stdlib.h>

static void on_step(void *ctx, const cs_event_t *ev);
static void on_recompute(void *ctx, const cs_event_t *ev);
static void on_progress(void *ctx, const cs_event_t *ev);

void cs_net_fluid_init(cs_net_t *n)
{
    n->h_fstep = cs_sim_register(n->sim, on_step, n);
    n->h_frecompute = cs_sim_register(n->sim, on_recompute, n);
    n->h_fprogress = cs_sim_register(n->sim, on_progress, n);
}

void cs_net_fluid_free(cs_net_t *n) { free(n->fl_active); }

static double tol(const msg_t *m) { return 1e-9 * (double)m->bytes + 1e-6; }

/* Latency from the last byte leaving the bottleneck to its arrival. */
static cs_tick_t path_latency(const cs_net_t *n, const msg_t *m)
{
    cs_tick_t lat = 0;
    for (int32_t h = 0; h < m->nhops; h++)
        lat += n->ch[m->hs[h].chan].wire;
    return lat + (m->nhops > 1 ? (cs_tick_t)(m->nhops - 1) * n->p.router_lat : 0);
}

static void mark_dirty(cs_net_t *n)
{
    if (n->fl_dirty)
        return;
    n->fl_dirty = 1;
    cs_sim_at(n->sim, cs_sim_now(n->sim), n->h_frecompute, 0, 0);
}

static void active_add(cs_net_t *n, uint32_t id)
{
    if (n->fl_n == n->fl_cap) {
        n->fl_cap = n->fl_cap ? n->fl_cap * 2 : 256;
        n->fl_active = cs_realloc(n->fl_active, (size_t)n->fl_cap * sizeof *n->fl_active);
    }
    n->msgs[id].active_idx = n->fl_n;
    n->fl_active[n->fl_n++] = id;
}

static void active_remove(cs_net_t *n, uint32_t id)
{
    uint32_t i = n->msgs[id].active_idx, last = n->fl_active[--n->fl_n];
    n->fl_active[i] = last;
    n->msgs[last].active_idx = i;
}

/* Brings a flow's remaining bytes up to now. */
static void advance(cs_net_t *n, msg_t *m)
{
    cs_tick_t now = cs_sim_now(n->sim);
    if (now > m->last) {
        m->remaining -= m->rate * (double)(now - m->last);
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
static void schedule_step(cs_net_t *n, uint32_t id)
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
        cs_sim_at(n->sim, cs_sim_now(n->sim) + dt, n->h_fstep, id, m->version);
}

void cs_net_fluid_start(cs_net_t *n, uint32_t id)
{
    msg_t *m = &n->msgs[id];
    m->remaining = (double)m->bytes;
    m->rate = 0;
    m->last = m->t_start = cs_sim_now(n->sim);
    cs_net_i_k_change(n, m, +1);
    active_add(n, id);
    mark_dirty(n);
}

void cs_net_fluid_gate(cs_net_t *n, uint32_t id)
{
    (void)id;
    mark_dirty(n);
}

/* Max-min fair rates by progressive filling over the active flows. */
static void fill_rates(cs_net_t *n)
{
    uint32_t unfrozen = 0;
    for (uint32_t i = 0; i < n->fl_n; i++) {
        msg_t *m = &n->msgs[n->fl_active[i]];
        for (int32_t h = 0; h < m->nhops; h++) {
            chan_state_t *c = &n->ch[m->hs[h].chan];
            c->left = c->cap;
            c->nflows = 0;
        }
    }
    for (uint32_t i = 0; i < n->fl_n; i++) {
        msg_t *m = &n->msgs[n->fl_active[i]];
        m->rate = 0;
        m->frozen = at_gate(m);
        if (m->frozen)
            continue;
        unfrozen++;
        for (int32_t h = 0; h < m->nhops; h++)
            n->ch[m->hs[h].chan].nflows++;
    }
    while (unfrozen) {
        double x = INFINITY;
        for (uint32_t i = 0; i < n->fl_n; i++) {
            msg_t *m = &n->msgs[n->fl_active[i]];
            if (m->frozen)
                continue;
            for (int32_t h = 0; h < m->nhops; h++) {
                chan_state_t *c = &n->ch[m->hs[h].chan];
                double share = c->left / c->nflows;
                if (share < x)
                    x = share;
            }
        }
        if (!(x < INFINITY))
            x = 1e300; /* only infinitely fast channels */
        /* raise every unfrozen flow by x, then charge the channels */
        for (uint32_t i = 0; i < n->fl_n; i++) {
            msg_t *m = &n->msgs[n->fl_active[i]];
            if (!m->frozen)
                m->rate += x;
        }
        for (uint32_t i = 0; i < n->fl_n; i++) {
            msg_t *m = &n->msgs[n->fl_active[i]];
            if (m->frozen)
                continue;
            for (int32_t h = 0; h < m->nhops; h++)
                n->ch[m->hs[h].chan].left -= x;
        }
        /* freeze flows through saturated channels */
        for (uint32_t i = 0; i < n->fl_n; i++) {
            msg_t *m = &n->msgs[n->fl_active[i]];
            int sat = 0;
            if (m->frozen)
                continue;
            for (int32_t h = 0; h < m->nhops && !sat; h++) {
                chan_state_t *c = &n->ch[m->hs[h].chan];
                sat = c->left <= 1e-12 * c->cap;
            }
            if (sat || x >= 1e300) {
                m->frozen = 2; /* frozen this round; counts removed below */
                unfrozen--;
            }
        }
        for (uint32_t i = 0; i < n->fl_n; i++) {
            msg_t *m = &n->msgs[n->fl_active[i]];
            if (m->frozen != 2)
                continue;
            m->frozen = 1;
            for (int32_t h = 0; h < m->nhops; h++)
                n->ch[m->hs[h].chan].nflows--;
        }
    }
}

static void on_recompute(void *ctx, const cs_event_t *ev)
{
    cs_net_t *n = ctx;
    (void)ev;
    n->fl_dirty = 0;
    for (uint32_t i = 0; i < n->fl_n; i++)
        advance(n, &n->msgs[n->fl_active[i]]);
    fill_rates(n);
    for (uint32_t i = 0; i < n->fl_n; i++)
        schedule_step(n, n->fl_active[i]);
}

/* A flow finished crossing: account it and schedule its arrival. */
static void flow_done(cs_net_t *n, uint32_t id)
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
    cs_sim_at(n->sim, now + path_latency(n, m), n->h_fprogress, id, (uint64_t)m->bytes);
    mark_dirty(n);
}

static void on_step(void *ctx, const cs_event_t *ev)
{
    cs_net_t *n = ctx;
    uint32_t id = ev->a;
    msg_t *m = &n->msgs[id];
    if (m->state != MSG_ACTIVE || ev->b != m->version)
        return; /* superseded by a recomputation */
    advance(n, m);
    if (m->remaining <= tol(m)) {
        m->remaining = 0;
        flow_done(n, id);
        return;
    }
    if (m->watch) {
        int64_t units = (int64_t)floor((transferred(m) + tol(m)) / (double)n->p.unit_bytes);
        int64_t b = units * n->p.unit_bytes;
        if (b > m->reported) {
            m->reported = b;
            cs_sim_at(n->sim, cs_sim_now(n->sim) + path_latency(n, m), n->h_fprogress, id,
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
    cs_net_t *n = ctx;
    msg_t *m = &n->msgs[ev->a];
    if ((int64_t)ev->b <= m->arrived)
        return;
    cs_net_i_arrived(n, ev->a, (int64_t)ev->b, cs_sim_now(n->sim));
}
