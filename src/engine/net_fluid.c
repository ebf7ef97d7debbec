/*
 * net_fluid.c - fluid mode of the network engine (model in net.h).
 *
 * A message is a flow.  Whenever the set of flows changes (a flow starts,
 * finishes, reaches its gate or has its gate raised) the rates are the
 * max-min fair allocation of channel capacity (progressive filling: raise
 * every unfrozen flow's rate equally until a channel saturates, freeze the
 * flows through it, repeat).  All changes at one tick are batched into a
 * single recomputation, scheduled as an event after the ones already queued
 * for that tick.
 *
 * The recomputation is incremental: it re-solves only the flows whose rate
 * can change.  Progressive filling below a level r never involves a flow
 * that leaves at rate >= r (its channels saturate at >= r), nor a flow that
 * joins and whose channels saturate at >= r, which holds for
 * r = min over its channels of cap / flows.  So with r* the least of these
 * bounds over the tick's changes, every flow below r* keeps its rate, and of
 * the flows at or above r* only those connected to a changed channel through
 * flows at or above r* can change.  That set is water-filled over its
 * channels with the capacity the fixed flows leave (their rates subtracted
 * in ascending order, the order in which the full solve freezes them, so
 * the arithmetic is the full solve's).  The full solve over every flow
 * stays here as the reference (cs_net_fluid_set_solver).
 *
 * A flow's `remaining` is brought up to date only when its rate changes or
 * its step is due (progress is linear in between).  The next event of a
 * flow (finish, gate, unit boundary) is a versioned step event in the
 * simulator's queue.  A flow can come within the tolerance of its gate
 * before its step (the full solve then freezes it): flows whose step
 * targets the gate are also kept in a heap by the tick from which that can
 * happen, and checked at each recomputation once due.
 *
 * Times are integer ticks; a flow's finish is the first tick at which its
 * bytes have crossed (ceil), with a relative tolerance of 1e-9 so that exact
 * rational answers (alpha + beta*n*k) are not pushed one tick late by
 * floating-point rounding.
 *
 * Cost: a recomputation is O(S*H log C) for the S flows re-solved (plus the
 * fixed flows on their channels); the full solve is O(F*H log C).  Only the
 * flows whose rate changed get a new step event, issued in the order of the
 * active array so that same-tick steps run in the same order either way.
 *
 * Latency and weights (cs_net_params_t.fluid_latency, .fluid_share;
 * docs/engine.md, "When the latency is paid"): a flow pays its path
 * latency after its bytes (LAST) or joins the solver only once it has
 * passed (FIRST, CM02's: Casanova & Marchal 2002, SimGrid's
 * network_cm02.cpp); flows share max-min fairly (EQUAL, weight 1) or by
 * weight 1 / path latency (LATENCY).  With weights, "level" below is the
 * water level L at which a flow froze, its rate w * L; every bound is a
 * level.  Weights of 1 keep the arithmetic bit-identical to the unweighted
 * solver.
 *
 * The mode is cs_net_fluid_mode (its ops table and handlers) over the shared
 * channel engine state (net_chan.c does posting, ports and completion).
 */
#include "engine/net_internal.h"

#include "core/checked.h"

#include <math.h>
#include <stdlib.h>

/* The mode's handlers, by their index in h_mode[]. */
enum { H_STEP, H_RECOMPUTE, H_PROGRESS, H_JOIN };

/* ---- the solver's state ------------------------------------------------ */

/* A gate watch entry: the tick from which a flow may be within tolerance of
 * its gate (key), the message (chan) and its version then (ver). */
typedef struct heap_item {
    double key;
    int32_t chan;
    uint32_t ver;
} heap_item_t;

typedef struct heap {
    heap_item_t *h;
    int32_t len, cap;
} heap_t;

/* Per channel. */
typedef struct fl_chan {
    uint64_t *flows;   /* hop_key(msg, hop) of the participating flows */
    int32_t n, cap;
    /* solve scratch */
    double left;       /* capacity not yet given */
    int32_t nflows;    /* unfrozen flows (hops) of the solved set */
    double wsum;       /* their weights (nflows when every weight is 1) */
    double key;        /* saturation level left / wsum, while in the heap */
    uint32_t epoch;    /* last solve that used it */
    int32_t hpos;      /* index in the level heap, -1 when out */
    int32_t first, fill; /* offsets in the adjacency */
} fl_chan_t;

/* Per message id. */
typedef struct fl_msg {
    uint32_t *pos;     /* per hop: index in its channel's flows */
    int32_t poscap;
    uint32_t epoch;    /* last solve that put it in the solved set */
    uint32_t listed;   /* last solve that listed it for a new step */
    double newrate;    /* solve result */
    /* its sharing weight w and p = 1 / w (fluid_share): a flow's rate is
     * w times the level at which it froze, its level rate * p; both are 1
     * for max-min fair sharing, so that arithmetic is unchanged */
    double w, p;
    uint8_t in;        /* in its channels' flows (not stopped at its gate) */
    uint8_t pending;   /* in the pending list */
    uint8_t frozen;    /* water-filling scratch */
    uint8_t joined;    /* joined in this solve */
} fl_msg_t;

struct cs_fluid {
    cs_net_fluid_solver_t solver;
    fl_chan_t *ch;
    fl_msg_t *m;
    int32_t mcap;
    /* changes since the last recomputation */
    uint32_t *pend;    /* flows to look at: new, gate raised, at the gate */
    int32_t npend, cappend;
    int32_t *seeds;    /* channels of flows that finished */
    int32_t nseeds, capseeds;
    double bound;      /* least level (rate * p) of a flow that finished */
    double wmax;       /* largest weight of a flow that joined (1 when equal) */
    /* the gate watch: flows that may come within tolerance of their gate
     * before their step, by tick; and those whose tick has come */
    heap_t watch;
    uint32_t *due;
    int32_t ndue, capdue;
    /* solve scratch */
    uint32_t epoch;
    uint32_t *set;     /* the flows solved */
    int32_t nset, capset;
    int32_t *chans;    /* the channels they cross */
    int32_t nchans, capchans;
    uint32_t *adj;     /* flows of each channel (CSR by fl_chan.first) */
    int32_t capadj;
    double *fixed;
    int32_t capfixed;
    uint64_t *steps;   /* flows that get a new step (active index << 32 | id) */
    int32_t nsteps, capsteps;
    int32_t *lv;       /* the level heap: channels by (key, channel) */
    int32_t nlv, caplv;
    /* checked solver */
    uint64_t checks, mismatches;
    double max_diff;
};

static cs_fluid_t *fluid_of(cs_net_chan_t *n)
{
    if (!n->fl) {
        n->fl = cs_calloc(1, sizeof *n->fl);
        n->fl->ch = cs_calloc((size_t)n->nchans + 1, sizeof *n->fl->ch);
        n->fl->bound = INFINITY;
    }
    return n->fl;
}

static fl_msg_t *flm(cs_net_chan_t *n, uint32_t id)
{
    cs_fluid_t *fl = n->fl;
    if ((int32_t)id >= fl->mcap) {
        int32_t old = fl->mcap;
        fl->mcap = (int32_t)n->cap_msgs > (int32_t)id ? (int32_t)n->cap_msgs : (int32_t)id + 1;
        fl->m = cs_realloc(fl->m, (size_t)fl->mcap * sizeof *fl->m);
        for (int32_t i = old; i < fl->mcap; i++)
            fl->m[i] = (fl_msg_t){0};
    }
    return &fl->m[id];
}

static void fluid_free(void *impl)
{
    cs_net_chan_t *n = impl;
    cs_fluid_t *fl = n->fl;
    free(n->fl_active);
    if (fl) {
        for (int c = 0; c < n->nchans; c++)
            free(fl->ch[c].flows);
        for (int32_t i = 0; i < fl->mcap; i++)
            free(fl->m[i].pos);
        free(fl->ch);
        free(fl->m);
        free(fl->pend);
        free(fl->seeds);
        free(fl->watch.h);
        free(fl->due);
        free(fl->set);
        free(fl->chans);
        free(fl->adj);
        free(fl->fixed);
        free(fl->steps);
        free(fl->lv);
        free(fl);
    }
    cs_net_chan_free(n);
}

/* ---- heap ---------------------------------------------------------------- */

static int item_less(const heap_item_t *a, const heap_item_t *b)
{
    return a->key < b->key || (a->key == b->key && a->chan < b->chan);
}

static void heap_push(heap_t *hp, heap_item_t it)
{
    int32_t i;
    hp->h = cs_grow(hp->h, hp->len, &hp->cap, 1024, sizeof *hp->h);
    for (i = hp->len++; i > 0; i = (i - 1) / 2) {
        if (!item_less(&it, &hp->h[(i - 1) / 2]))
            break;
        hp->h[i] = hp->h[(i - 1) / 2];
    }
    hp->h[i] = it;
}

static heap_item_t heap_pop(heap_t *hp)
{
    heap_item_t *h = hp->h, top = h[0], last = h[--hp->len];
    int32_t i = 0;
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= hp->len)
            break;
        if (c + 1 < hp->len && item_less(&h[c + 1], &h[c]))
            c++;
        if (!item_less(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (hp->len)
        h[i] = last;
    return top;
}

/* ---- flow arithmetic ------------------------------------------------------ */

static double tol(const msg_t *m) { return 1e-9 * (double)m->bytes + 1e-6; }

/* Latency from the last byte leaving the bottleneck to its arrival. */
static cs_tick_t path_latency(const cs_net_chan_t *n, const msg_t *m)
{
    cs_tick_t lat = 0;
    for (int32_t h = 0; h < m->nhops; h++)
        lat = cs_tick_add(lat, n->ch[m->hs[h].chan].wire);
    return cs_tick_add(lat, m->nhops > 1 ? cs_tick_mul(m->nhops - 1, n->p.router_lat) : 0);
}

/* Latency from the last byte crossing to its arrival: the path's, unless
 * the flow paid it before it joined (fluid_latency FIRST). */
static cs_tick_t tail_latency(const cs_net_chan_t *n, const msg_t *m)
{
    return n->p.fluid_latency == CS_NET_LATENCY_FIRST ? 0 : path_latency(n, m);
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

/* A flow's remaining bytes at `now` (at its current rate since `last`). */
static double remaining_at(const msg_t *m, cs_tick_t now)
{
    double r = m->remaining;
    if (now > m->last) {
        r -= m->rate * (double)(now - m->last);
        /* never past the gate (a step rounds up to whole ticks) */
        if (m->gate < m->bytes && r < (double)(m->bytes - m->gate))
            r = (double)(m->bytes - m->gate);
        if (r < 0)
            r = 0;
    }
    return r;
}

/* Brings a flow's remaining bytes up to now. */
static void advance(cs_net_chan_t *n, msg_t *m)
{
    cs_tick_t now = cs_sim_now(n->sim);
    m->remaining = remaining_at(m, now);
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
    if (dt > (double)CS_TICK_LIMIT)
        return CS_TICK_OVER; /* past the clock's maximum: the kernel stops the run */
    return (cs_tick_t)ceil(dt * (1 - 1e-12) - 1e-9);
}

static int gate_reached(const msg_t *m, double remaining)
{
    return m->gate < m->bytes && (double)m->bytes - remaining + tol(m) >= (double)m->gate;
}

static int at_gate(const msg_t *m) { return gate_reached(m, m->remaining); }

/* Watches a flow moving towards its gate: from the tick at which it may be
 * within tolerance of it (a margin early), each recomputation checks it,
 * until its step (which bumps the version) handles it. */
static void watch_gate(cs_net_chan_t *n, uint32_t id)
{
    msg_t *m = &n->msgs[id];
    double dt;
    cs_tick_t at;
    if (m->gate >= m->bytes || m->rate <= 0)
        return;
    dt = ((double)m->gate - tol(m) - transferred(m)) / m->rate * (1 - 1e-9) - 2;
    if (dt > (double)CS_TICK_LIMIT)
        return;
    at = cs_tick_add(cs_sim_now(n->sim), dt > 0 ? (cs_tick_t)dt : 0);
    heap_push(&n->fl->watch, (heap_item_t){(double)at, (int32_t)id, (uint32_t)m->version});
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
    if (m->gate < m->bytes)
        watch_gate(n, id);
    if (m->watch) {
        double next_unit = (floor((transferred(m) + tol(m)) / (double)n->p.unit_bytes) + 1) *
                           (double)n->p.unit_bytes;
        if (next_unit < target)
            target = next_unit;
    }
    dt = ticks_to(m, target);
    if (dt >= 0)
        cs_sim_at(n->sim, cs_tick_add(cs_sim_now(n->sim), dt), n->h_mode[H_STEP], id, m->version);
}

/* ---- the participating flows of each channel ------------------------------ */

static void pend(cs_net_chan_t *n, uint32_t id)
{
    cs_fluid_t *fl = n->fl;
    fl_msg_t *f = flm(n, id);
    if (f->pending)
        return;
    f->pending = 1;
    fl->pend = cs_grow(fl->pend, fl->npend, &fl->cappend, 256, sizeof *fl->pend);
    fl->pend[fl->npend++] = id;
}

static void chans_add(cs_net_chan_t *n, uint32_t id)
{
    msg_t *m = &n->msgs[id];
    fl_msg_t *f = flm(n, id);
    f->in = 1;
    for (int32_t h = 0; h < m->nhops; h++) {
        fl_chan_t *c = &n->fl->ch[m->hs[h].res];
        c->flows = cs_grow(c->flows, c->n, &c->cap, 16, sizeof *c->flows);
        f->pos[h] = (uint32_t)c->n;
        c->flows[c->n++] = hop_key(id, (uint32_t)h);
    }
}

static void chans_remove(cs_net_chan_t *n, uint32_t id)
{
    msg_t *m = &n->msgs[id];
    fl_msg_t *f = &n->fl->m[id];
    f->in = 0;
    for (int32_t h = 0; h < m->nhops; h++) {
        fl_chan_t *c = &n->fl->ch[m->hs[h].res];
        uint64_t last = c->flows[--c->n];
        uint32_t i = f->pos[h];
        c->flows[i] = last;
        n->fl->m[key_msg(last)].pos[key_hop(last)] = i;
    }
}

static void seed_chans(cs_fluid_t *fl, const msg_t *m)
{
    for (int32_t h = 0; h < m->nhops; h++) {
        fl->seeds = cs_grow(fl->seeds, fl->nseeds, &fl->capseeds, 64, sizeof *fl->seeds);
        fl->seeds[fl->nseeds++] = m->hs[h].res;
    }
}

/* ---- events ---------------------------------------------------------------- */

/* The flow joins the active set and rates are recomputed. */
static void join(cs_net_chan_t *n, uint32_t id)
{
    msg_t *m = &n->msgs[id];
    fl_msg_t *f;
    /* the solver's constraint per hop: the channel's capacity, or the one
     * it shares with others (a half-duplex link) */
    for (int32_t h = 0; h < m->nhops; h++)
        m->hs[h].res = n->ch[m->hs[h].chan].srv;
    m->remaining = (double)m->bytes;
    m->rate = 0;
    m->fresh = 1;
    m->last = m->t_start = cs_sim_now(n->sim);
    cs_net_i_k_change(n, m, +1);
    active_add(n, id);
    fluid_of(n);
    f = flm(n, id);
    if (m->nhops > f->poscap) { /* kept for the id's next messages */
        f->poscap = m->nhops;
        f->pos = cs_realloc(f->pos, (size_t)f->poscap * sizeof *f->pos);
    }
    f->in = 0;
    f->w = f->p = 1;
    if (n->p.fluid_share == CS_NET_SHARE_LATENCY) {
        /* weight 1 / latency; a path without latency weighs as one of a
         * tick, the largest weight the clock can express */
        cs_tick_t lat = path_latency(n, m);
        f->p = lat > 0 ? (double)lat : 1;
        f->w = 1 / f->p;
    }
    if (f->w > n->fl->wmax)
        n->fl->wmax = f->w;
    pend(n, id);
    mark_dirty(n);
}

/* Overhead over: the flow joins now, or (fluid_latency FIRST) once its
 * path latency has passed. */
static void on_begin(void *ctx, const cs_event_t *ev)
{
    cs_net_chan_t *n = ctx;
    uint32_t id = ev->a;
    if (!cs_net_chan_begin(n, id))
        return;
    if (n->p.fluid_latency == CS_NET_LATENCY_FIRST) {
        msg_t *m = &n->msgs[id];
        cs_tick_t lat = path_latency(n, m);
        if (lat > 0) {
            m->lat_wait = 1; /* not in the solver, nor counted on its channels */
            cs_sim_at(n->sim, cs_tick_add(cs_sim_now(n->sim), lat), n->h_mode[H_JOIN], id, 0);
            return;
        }
    }
    join(n, id);
}

/* Latency paid (fluid_latency FIRST): the flow starts sharing. */
static void on_join(void *ctx, const cs_event_t *ev)
{
    cs_net_chan_t *n = ctx;
    n->msgs[ev->a].lat_wait = 0;
    join(n, ev->a);
}

static void fluid_gate(void *impl, uint32_t id, int64_t gate_bytes, int64_t rate)
{
    cs_net_chan_t *n = impl;
    (void)rate; /* a slope is not modelled: the gate steps */
    if (!cs_net_chan_raise_gate(n, id, gate_bytes) || n->msgs[id].lat_wait)
        return; /* a flow paying its latency reads its gate when it joins */
    n->msgs[id].fresh = 1; /* its step must be rescheduled even at an equal rate */
    pend(n, id);
    mark_dirty(n);
}

/* ---- the level heap: channels by saturation level -------------------------
 * One entry per channel, moved when its level changes (an indexed binary
 * heap), so a pop is always a live bottleneck.  Order: (key, channel), a
 * total order, so the pops do not depend on the heap's shape. */

static int lv_less(const cs_fluid_t *fl, int32_t a, int32_t b)
{
    double ka = fl->ch[a].key, kb = fl->ch[b].key;
    return ka < kb || (ka == kb && a < b);
}

static void lv_place(cs_fluid_t *fl, int32_t i, int32_t c)
{
    fl->lv[i] = c;
    fl->ch[c].hpos = i;
}

static void lv_up(cs_fluid_t *fl, int32_t i)
{
    int32_t c = fl->lv[i];
    while (i > 0 && lv_less(fl, c, fl->lv[(i - 1) / 2])) {
        lv_place(fl, i, fl->lv[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    lv_place(fl, i, c);
}

static void lv_down(cs_fluid_t *fl, int32_t i)
{
    int32_t c = fl->lv[i];
    for (;;) {
        int32_t k = 2 * i + 1;
        if (k >= fl->nlv)
            break;
        if (k + 1 < fl->nlv && lv_less(fl, fl->lv[k + 1], fl->lv[k]))
            k++;
        if (!lv_less(fl, fl->lv[k], c))
            break;
        lv_place(fl, i, fl->lv[k]);
        i = k;
    }
    lv_place(fl, i, c);
}

/* Takes channel c out of the heap. */
static void lv_remove(cs_fluid_t *fl, int32_t c)
{
    int32_t i = fl->ch[c].hpos, last = fl->lv[--fl->nlv];
    fl->ch[c].hpos = -1;
    if (i == fl->nlv)
        return;
    lv_place(fl, i, last);
    lv_up(fl, i);
    lv_down(fl, fl->ch[last].hpos);
}

/* ---- max-min fair rates by water-filling ------------------------------
 *
 * All unfrozen flows share one rising "water level" L, flow i at rate
 * w_i * L.  A channel with capacity left `left` and unfrozen flows of total
 * weight W (their number when every w is 1) saturates at L = left / W; the
 * channel with the least such key saturates first, its flows freeze at
 * w * L, and the channels they cross give up that rate and lose that
 * weight.
 * Keys only grow when flows freeze below them; the level heap (one entry
 * per channel, moved as its key changes) finds the next bottleneck.  Cost:
 * O(S*H log C) for S flows of H hops over C channels.
 */

/* Up to this many flows, water-filling finds each bottleneck by a scan of
 * the channels instead of the heap: a small set has few bottlenecks, and a
 * heap would mostly pop entries made stale by the freezes.  Both take the
 * least (key, channel), so they give the same rates. */
#define SCAN_MAX 16

/* Water-fills the flows fl->set over the channels fl->chans, whose `left`
 * and `nflows` are set: writes each flow's fl_msg.newrate.  Reorders and
 * shortens fl->chans. */
static void water_fill(cs_net_chan_t *n)
{
    cs_fluid_t *fl = n->fl;
    int scan = 0;
    int32_t off = 0;
    for (int32_t k = 0; k < fl->nchans; k++) {
        fl_chan_t *c = &fl->ch[fl->chans[k]];
        c->first = c->fill = off;
        off += c->nflows;
    }
    if (off > fl->capadj) {
        fl->capadj = off * 2;
        fl->adj = cs_realloc(fl->adj, (size_t)fl->capadj * sizeof *fl->adj);
    }
    for (int32_t i = 0; i < fl->nset; i++) {
        msg_t *m = &n->msgs[fl->set[i]];
        fl->m[fl->set[i]].frozen = 0;
        fl->m[fl->set[i]].newrate = 0;
        for (int32_t h = 0; h < m->nhops; h++)
            fl->adj[fl->ch[m->hs[h].res].fill++] = fl->set[i];
    }
    /* A flow alone on every channel it crosses (no other flow of the set
     * there: a ring's neighbour exchanges, say) freezes at the least key of
     * its channels whatever the others do, since only its own freeze
     * changes those keys; solved here directly, it leaves the heap's work
     * to the flows that do share.  Same key, same level, same product: the
     * rates are the water-filling's bit for bit. */
    int32_t unfrozen = fl->nset;
    for (int32_t i = 0; i < fl->nset; i++) {
        uint32_t id = fl->set[i];
        const msg_t *m = &n->msgs[id];
        double key = INFINITY;
        int32_t h;
        for (h = 0; h < m->nhops; h++) {
            const fl_chan_t *c = &fl->ch[m->hs[h].res];
            if (c->nflows != 1)
                break;
            double k = c->left / c->wsum;
            if (k < key)
                key = k;
        }
        if (h < m->nhops || m->nhops == 0)
            continue;
        fl->m[id].frozen = 1;
        fl->m[id].newrate = (key > 0 ? key : 0) * fl->m[id].w;
        unfrozen--;
        for (h = 0; h < m->nhops; h++)
            fl->ch[m->hs[h].res].nflows = 0; /* out of the heap and the scan */
    }
    if (unfrozen <= SCAN_MAX)
        scan = 1;
    fl->nlv = 0;
    if (!scan) {
        if (fl->nchans > fl->caplv) {
            fl->caplv = fl->nchans * 2;
            fl->lv = cs_realloc(fl->lv, (size_t)fl->caplv * sizeof *fl->lv);
        }
        for (int32_t k = 0; k < fl->nchans; k++) {
            fl_chan_t *c = &fl->ch[fl->chans[k]];
            c->hpos = -1;
            if (c->nflows > 0) {
                c->key = c->left / c->wsum;
                lv_place(fl, fl->nlv++, fl->chans[k]);
            }
        }
        for (int32_t i = fl->nlv / 2 - 1; i >= 0; i--)
            lv_down(fl, i);
    }
    /* once every flow is frozen the rest is moot */
    while (unfrozen > 0) {
        int32_t ci = -1;
        double key = 0;
        if (scan) {
            /* the least (key, channel) among the channels with unfrozen
             * flows, dropping the others from the list */
            int32_t live = 0;
            for (int32_t k = 0; k < fl->nchans; k++) {
                int32_t dc = fl->chans[k];
                const fl_chan_t *d = &fl->ch[dc];
                if (d->nflows <= 0)
                    continue;
                fl->chans[live++] = dc;
                double dk = d->left / d->wsum;
                if (ci < 0 || dk < key || (dk == key && dc < ci)) {
                    ci = dc;
                    key = dk;
                }
            }
            fl->nchans = live;
            if (ci < 0)
                break;
        } else {
            if (!fl->nlv)
                break;
            ci = fl->lv[0];
            key = fl->ch[ci].key;
            lv_remove(fl, ci);
        }
        fl_chan_t *c = &fl->ch[ci];
        double level = key > 0 ? key : 0;
        /* freeze every still-unfrozen flow through the bottleneck */
        for (int32_t a = c->first; c->nflows > 0; a++) {
            uint32_t id = fl->adj[a];
            msg_t *m = &n->msgs[id];
            if (fl->m[id].frozen)
                continue;
            double w = fl->m[id].w, rate = level * w;
            fl->m[id].frozen = 1;
            fl->m[id].newrate = rate;
            unfrozen--;
            for (int32_t h = 0; h < m->nhops; h++) {
                int32_t dc = m->hs[h].res;
                fl_chan_t *d = &fl->ch[dc];
                d->left -= rate;
                if (d->left < 0)
                    d->left = 0;
                d->nflows--;
                d->wsum -= w;
                if (scan || d->hpos < 0)
                    continue;
                if (d->nflows > 0) {
                    /* its level mostly rises (rounding may lower it) */
                    d->key = d->left / d->wsum;
                    lv_up(fl, d->hpos);
                    lv_down(fl, d->hpos);
                } else
                    lv_remove(fl, dc);
            }
        }
    }
}

static void set_add(cs_fluid_t *fl, uint32_t id)
{
    fl->m[id].epoch = fl->epoch;
    fl->set = cs_grow(fl->set, fl->nset, &fl->capset, 256, sizeof *fl->set);
    fl->set[fl->nset++] = id;
}

/* Marks a channel as used by this solve and queues it. */
static void chan_touch(cs_fluid_t *fl, int32_t c)
{
    if (fl->ch[c].epoch == fl->epoch)
        return;
    fl->ch[c].epoch = fl->epoch;
    fl->chans = cs_grow(fl->chans, fl->nchans, &fl->capchans, 256, sizeof *fl->chans);
    fl->chans[fl->nchans++] = c;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts ascending: insertion sort for the few flows a channel usually has
 * (often already in order), qsort beyond. */
static void sort_rates(double *r, int32_t n)
{
    if (n > 32) {
        qsort(r, (size_t)n, sizeof *r, cmp_double);
        return;
    }
    for (int32_t i = 1; i < n; i++) {
        double x = r[i];
        int32_t j = i;
        for (; j > 0 && r[j - 1] > x; j--)
            r[j] = r[j - 1];
        r[j] = x;
    }
}

/* The capacity a channel has for the solved set: its capacity less the
 * rates of its other flows, subtracted in ascending order (as the full
 * solve freezes them); and the number of solved flows through it. */
static void chan_residual(cs_net_chan_t *n, int32_t ci)
{
    cs_fluid_t *fl = n->fl;
    fl_chan_t *c = &fl->ch[ci];
    int32_t nfixed = 0;
    c->left = n->cold[ci].cap;
    c->nflows = 0;
    c->wsum = 0;
    for (int32_t i = 0; i < c->n; i++) {
        uint32_t id = key_msg(c->flows[i]);
        if (fl->m[id].epoch == fl->epoch) {
            c->nflows++;
            c->wsum += fl->m[id].w;
            continue;
        }
        fl->fixed = cs_grow(fl->fixed, nfixed, &fl->capfixed, 64, sizeof *fl->fixed);
        fl->fixed[nfixed++] = n->msgs[id].rate;
    }
    sort_rates(fl->fixed, nfixed);
    for (int32_t i = 0; i < nfixed; i++) {
        c->left -= fl->fixed[i];
        if (c->left < 0)
            c->left = 0;
    }
}

/* Lists a flow for a new step (once per solve). */
static void step_list(cs_fluid_t *fl, uint32_t id)
{
    if (fl->m[id].listed == fl->epoch)
        return;
    fl->m[id].listed = fl->epoch;
    fl->steps = cs_grow(fl->steps, fl->nsteps, &fl->capsteps, 256, sizeof *fl->steps);
    fl->steps[fl->nsteps++] = id;
}

/* Moves the flows whose gate watch came due to the due list, drops the
 * due flows whose step came (or which ended), and pends the others. */
static void watch_due(cs_net_chan_t *n)
{
    cs_fluid_t *fl = n->fl;
    double now = (double)cs_sim_now(n->sim);
    int32_t k = 0;
    while (fl->watch.len && fl->watch.h[0].key <= now) {
        heap_item_t it = heap_pop(&fl->watch);
        fl->due = cs_grow(fl->due, fl->ndue + 1, &fl->capdue, 64, sizeof *fl->due);
        fl->due[fl->ndue++] = (uint32_t)it.chan; /* the flow, then its version */
        fl->due[fl->ndue++] = it.ver;
    }
    for (int32_t i = 0; i < fl->ndue; i += 2) {
        uint32_t id = fl->due[i];
        const msg_t *m = &n->msgs[id];
        if (m->state != MSG_ACTIVE || (uint32_t)m->version != fl->due[i + 1] || !fl->m[id].in)
            continue;
        fl->due[k++] = id;
        fl->due[k++] = fl->due[i + 1];
        pend(n, id);
    }
    fl->ndue = k;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The reference: every flow not at its gate, water-filled from full
 * capacity.  Writes fl_msg.newrate of the flows solved (others: 0 meant).
 * Does not change any flow. */
static void solve_full(cs_net_chan_t *n)
{
    cs_fluid_t *fl = n->fl;
    cs_tick_t now = cs_sim_now(n->sim);
    fl->epoch++;
    fl->nset = fl->nchans = 0;
    for (uint32_t i = 0; i < n->fl_n; i++) {
        uint32_t id = n->fl_active[i];
        msg_t *m = &n->msgs[id];
        fl->m[id].newrate = 0;
        if (gate_reached(m, remaining_at(m, now)))
            continue;
        set_add(fl, id);
        for (int32_t h = 0; h < m->nhops; h++)
            chan_touch(fl, m->hs[h].res);
    }
    for (int32_t k = 0; k < fl->nchans; k++) {
        fl_chan_t *c = &fl->ch[fl->chans[k]];
        c->left = n->cold[fl->chans[k]].cap;
        c->nflows = 0;
        c->wsum = 0;
    }
    for (int32_t i = 0; i < fl->nset; i++) {
        msg_t *m = &n->msgs[fl->set[i]];
        for (int32_t h = 0; h < m->nhops; h++) {
            fl->ch[m->hs[h].res].nflows++;
            fl->ch[m->hs[h].res].wsum += fl->m[fl->set[i]].w;
        }
    }
    water_fill(n);
}

/* The checked solver: compares the rates just set with the reference. */
static void check_rates(cs_net_chan_t *n)
{
    cs_fluid_t *fl = n->fl;
    solve_full(n);
    fl->checks++;
    for (uint32_t i = 0; i < n->fl_n; i++) {
        uint32_t id = n->fl_active[i];
        double a = n->msgs[id].rate, b = fl->m[id].newrate;
        double big = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
        if ((fl->m[id].epoch == fl->epoch) != (fl->m[id].in != 0))
            fl->mismatches++;
        if (a != b && fabs(a - b) / big > fl->max_diff)
            fl->max_diff = fabs(a - b) / big;
    }
}

/* Looks at the pending flows (new, gate raised, at the gate, due in the
 * gate watch; with the full solver every flow): a flow that stopped at its
 * gate leaves its channels, one that may move joins them and the solved
 * set.  Returns the least bound of the changes (see the file comment). */
static double take_changes(cs_net_chan_t *n, double bound)
{
    cs_fluid_t *fl = n->fl;
    cs_tick_t now = cs_sim_now(n->sim);
    for (int32_t i = 0; i < fl->npend; i++) {
        uint32_t id = fl->pend[i];
        msg_t *m = &n->msgs[id];
        fl_msg_t *f = &fl->m[id];
        f->pending = 0;
        if (m->state != MSG_ACTIVE || m->nhops == 0)
            continue;
        f->newrate = m->rate;
        if (gate_reached(m, remaining_at(m, now))) {
            if (f->in) { /* it stops: its bandwidth goes to others */
                if (m->rate * f->p < bound)
                    bound = m->rate * f->p;
                chans_remove(n, id);
                seed_chans(fl, m);
            }
            f->newrate = 0;
            if (m->rate != 0 || m->fresh)
                step_list(fl, id);
        } else {
            if (!f->in) {
                chans_add(n, id);
                set_add(fl, id);
            }
            if (m->fresh)
                step_list(fl, id);
        }
    }
    fl->npend = 0;
    /* a joining flow's level is at least its fair share of its fullest
     * channel (with weights: capacity over the channel's total weight, at
     * most its flows times the largest weight) */
    for (int32_t i = 0; i < fl->nset; i++) {
        const msg_t *m = &n->msgs[fl->set[i]];
        for (int32_t h = 0; h < m->nhops; h++) {
            double share = n->cold[m->hs[h].res].cap / (fl->ch[m->hs[h].res].n * fl->wmax);
            if (share < bound)
                bound = share;
        }
    }
    return bound;
}

/* Adds to the solved set (which holds the joining flows) every flow at or
 * above `level` reachable from the changed channels (those of the flows
 * that left, and of the joining flows) through such flows, and touches the
 * channels of them all. */
static void collect_set(cs_net_chan_t *n, double level)
{
    cs_fluid_t *fl = n->fl;
    for (int32_t i = 0; i < fl->nseeds; i++)
        chan_touch(fl, fl->seeds[i]);
    for (int32_t i = 0; i < fl->nset; i++) {
        const msg_t *m = &n->msgs[fl->set[i]];
        for (int32_t h = 0; h < m->nhops; h++)
            chan_touch(fl, m->hs[h].res);
    }
    /* fl->chans grows while it is walked: a breadth-first search */
    for (int32_t k = 0; k < fl->nchans; k++) {
        const fl_chan_t *c = &fl->ch[fl->chans[k]];
        for (int32_t j = 0; j < c->n; j++) {
            uint32_t id = key_msg(c->flows[j]);
            const msg_t *m = &n->msgs[id];
            if (fl->m[id].epoch == fl->epoch || m->rate * fl->m[id].p < level)
                continue;
            set_add(fl, id);
            for (int32_t h = 0; h < m->nhops; h++)
                chan_touch(fl, m->hs[h].res);
        }
    }
}

/* Gives the listed flows their new rate and step, in the order of the
 * active array, as the full solve issued them: steps due at the same tick
 * then run in the same order. */
static void issue_steps(cs_net_chan_t *n)
{
    cs_fluid_t *fl = n->fl;
    int sorted = 1;
    for (int32_t i = 0; i < fl->nsteps; i++) {
        fl->steps[i] = (uint64_t)n->msgs[fl->steps[i]].active_idx << 32 | fl->steps[i];
        if (i && fl->steps[i] < fl->steps[i - 1])
            sorted = 0;
    }
    /* the flows joining at one tick are listed in active order already */
    if (!sorted)
        qsort(fl->steps, (size_t)fl->nsteps, sizeof *fl->steps, cmp_u64);
    for (int32_t i = 0; i < fl->nsteps; i++) {
        uint32_t id = (uint32_t)fl->steps[i];
        msg_t *m = &n->msgs[id];
        advance(n, m); /* at the old rate, up to now */
        m->rate = fl->m[id].newrate;
        m->fresh = 0;
        schedule_step(n, id);
    }
}

static void on_recompute(void *ctx, const cs_event_t *ev)
{
    cs_net_chan_t *n = ctx;
    cs_fluid_t *fl = fluid_of(n);
    int full = fl->solver == CS_NET_FLUID_FULL;
    double bound;
    (void)ev;
    n->fl_dirty = 0;
    fl->epoch++;
    fl->nset = fl->nchans = fl->nsteps = 0;
    watch_due(n);
    if (full)
        for (uint32_t i = 0; i < n->fl_n; i++)
            pend(n, n->fl_active[i]);
    bound = take_changes(n, fl->bound);
    fl->bound = INFINITY;
    if (full) /* the reference: every flow that may move */
        for (uint32_t i = 0; i < n->fl_n; i++)
            if (fl->m[n->fl_active[i]].in && fl->m[n->fl_active[i]].epoch != fl->epoch)
                set_add(fl, n->fl_active[i]);
    if (full || bound < INFINITY) {
        /* a hair below the bound, against rounding: more flows is safe */
        collect_set(n, full ? -INFINITY : bound * (1 - 1e-9));
        for (int32_t k = 0; k < fl->nchans; k++)
            chan_residual(n, fl->chans[k]);
        water_fill(n);
        for (int32_t i = 0; i < fl->nset; i++)
            if (fl->m[fl->set[i]].newrate != n->msgs[fl->set[i]].rate)
                step_list(fl, fl->set[i]);
    }
    fl->nseeds = 0;
    issue_steps(n);
    if (fl->solver == CS_NET_FLUID_CHECKED)
        check_rates(n);
}

/* A flow finished crossing: account it and schedule its arrival. */
static void flow_done(cs_net_chan_t *n, uint32_t id)
{
    msg_t *m = &n->msgs[id];
    cs_fluid_t *fl = n->fl;
    cs_tick_t now = cs_sim_now(n->sim);
    m->version++;
    if (fl->m[id].in) {
        if (m->rate * fl->m[id].p < fl->bound)
            fl->bound = m->rate * fl->m[id].p;
        chans_remove(n, id);
        seed_chans(fl, m);
    }
    m->rate = 0;
    active_remove(n, id);
    cs_net_i_k_change(n, m, -1);
    for (int32_t h = 0; h < m->nhops; h++) {
        const chan_cold_t *c = &n->cold[m->hs[h].chan];
        cs_net_i_record(n, m->hs[h].chan, m->t_start, now - m->t_start, net_ser(c, m->bytes),
                        m->bytes, 1);
    }
    cs_sim_at(n->sim, cs_tick_add(now, tail_latency(n, m)), n->h_mode[H_PROGRESS], id,
              (uint64_t)m->bytes);
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
            cs_sim_at(n->sim, cs_sim_now(n->sim) + tail_latency(n, m), n->h_mode[H_PROGRESS],
                      id, (uint64_t)b);
        }
    }
    if (at_gate(m)) {
        pend(n, id);
        mark_dirty(n); /* it stops: its bandwidth goes to others */
    } else
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

/* The load an adaptive route reads: fluid mode has no queues, so the
 * number of flows crossing the channel (k_now; each gets a share of it),
 * the fluid analogue of UGAL's queue occupancy. */
static int64_t fluid_load(const void *ctx, int chan)
{
    return ((const cs_net_chan_t *)ctx)->ch[chan].k_now;
}

const cs_net_chan_mode_t cs_net_fluid_mode = {
    .ops = &fluid_ops,
    .begin = on_begin,
    .handlers = {[H_STEP] = on_step, [H_RECOMPUTE] = on_recompute, [H_PROGRESS] = on_progress,
                 [H_JOIN] = on_join},
    .load = fluid_load,
};

int cs_net_fluid_set_solver(cs_net_t *net, cs_net_fluid_solver_t solver)
{
    cs_net_chan_t *n = cs_net_impl_of(net, &fluid_ops);
    if (!n)
        return 0;
    fluid_of(n)->solver = solver;
    return 1;
}

void cs_net_fluid_check_stats(const cs_net_t *net, uint64_t *checks, uint64_t *mismatches,
                              double *max_rel_diff)
{
    const cs_net_chan_t *n = cs_net_impl_of(net, &fluid_ops);
    const cs_fluid_t *fl = n ? n->fl : NULL;
    *checks = fl ? fl->checks : 0;
    *mismatches = fl ? fl->mismatches : 0;
    *max_rel_diff = fl ? fl->max_diff : 0;
}
