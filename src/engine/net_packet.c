/*
 * net_packet.c - packet mode of the network engine (model in net.h).
 *
 * Events per unit and hop: one CHAN_FREE when the channel finishes sending
 * it, and one HEAD when its head may continue at the next node (or one
 * DELIVER at the destination).  Units of a message keep their order, so a
 * message keeps per-hop counts (ready, sent) instead of per-unit objects.
 * Each channel keeps a FIFO of (message, hop) pairs that have a unit ready
 * for it; serving the head and re-appending it (when the channel frees)
 * while it still has units ready is round-robin among messages, which gives
 * k equal flows 1/k each.
 *
 * The mode is cs_net_packet_mode (its ops table and handlers) over the shared
 * channel engine state (net_chan.c does posting, ports and completion).
 *
 * Speed: every event is a few cache misses (hop state, message, channel), so
 * the handlers load what they can in parallel (CHAN_FREE carries the
 * (message, hop) it frees), return early inline (arbitrate on a busy or empty
 * channel) and skip what uniform channels make needless (the next channel's
 * unit time).  docs/engine.md ("Speed") has the measurements.
 */
#include "engine/net_internal.h"

#include <stdio.h>
#include <string.h>

/* The mode's handlers, by their index in h_mode[]. */
enum { H_HEAD, H_FREE, H_DELIVER };

static inline int64_t unit_size(const cs_net_chan_t *n, const msg_t *m, uint32_t j)
{
    int64_t off = (int64_t)j * n->p.unit_bytes;
    int64_t left = m->bytes - off;
    return left < n->p.unit_bytes ? left : n->p.unit_bytes;
}

/* The serialisation time of a unit of `size` bytes on channel `chan` (c:
 * its state). */
static inline cs_tick_t unit_ser(const cs_net_chan_t *n, int chan, const chan_state_t *c,
                                 int64_t size)
{
    return size == n->p.unit_bytes ? c->ser_unit : net_ser(&n->cold[chan], size);
}

static void wq_append(cs_net_chan_t *n, int chan, uint64_t key, hop_state_t *hs)
{
    chan_state_t *c = &n->ch[chan];
    hs->next = NIL64;
    hs->queued = 1;
    if (c->wq_tail == NIL64)
        c->wq_head = key;
    else
        n->msgs[key_msg(c->wq_tail)].hs[key_hop(c->wq_tail)].next = key;
    c->wq_tail = key;
}

/* The per-unit path comes in two variants, chosen once per engine
 * (packet_fast): the general one, and the fast one for the usual machine
 * whose channels share no capacity (each channel is its own serialiser,
 * srv == chan), all serialise at one rate (no tail look-ahead) and whose
 * unit, wire and router times are small enough (at most 2^59 ticks) that
 * now + wire + router + ser cannot wrap int64 (now <= CS_TICK_LIMIT = 2^62):
 * its tick sums are plain adds, and a sum past the clock's maximum is
 * refused by cs_sim_at as the saturated CS_TICK_OVER was.  `fast` is a
 * constant in each copy, so the general variant's tests cost the fast one
 * nothing (the half-duplex support cost 3% of instructions on the torus
 * permutation while a run-time test was there). */
#define FAST_TIME_MAX ((cs_tick_t)1 << 59)

static inline cs_tick_t t_add(int fast, cs_tick_t a, cs_tick_t b)
{
    return fast ? a + b : cs_tick_add(a, b);
}

/* arbitrate's work once the channel is idle and has waiters; out of line
 * so that the two thirds of the calls that find the channel busy or empty
 * pay no prologue.  `chan` is a serialiser (a channel's srv): its queue
 * holds the waiting units of every channel that shares its capacity, each
 * (message, hop) naming its own channel (hs->chan), whose buffers, wire,
 * statistics and unit time apply; without sharing hs->chan is `chan`. */
static inline __attribute__((always_inline)) void arbitrate_body(cs_net_chan_t *n, int chan,
                                                                 cs_tick_t now, int fast)
{
    chan_state_t *s = &n->ch[chan], *c = s;
    uint64_t key, prev = NIL64;
    hop_state_t *hs = NULL;
    msg_t *m;
    /* the first waiter whose virtual channel has a free slot */
    for (key = s->wq_head; key != NIL64; prev = key, key = hs->next) {
        const msg_t *wm = &n->msgs[key_msg(key)];
        hs = &wm->hs[key_hop(key)];
        /* the destination always sinks what reaches it (its receive port
         * is already taken), so only intermediate buffers limit */
        if (!n->p.buf_units || (int32_t)key_hop(key) + 1 == wm->nhops ||
            n->ch[fast ? chan : hs->chan].occ[hs->vc] < n->p.buf_units)
            break;
    }
    if (key == NIL64) {
        if (!s->stalled) {
            s->stalled = 1;
            s->stall_since = now;
        }
        return;
    }
    if (s->stalled) {
        cs_net_i_record_stall(n, chan, s->stall_since, now - s->stall_since);
        s->stalled = 0;
    }
    /* unlink */
    if (prev == NIL64)
        s->wq_head = hs->next;
    else
        n->msgs[key_msg(prev)].hs[key_hop(prev)].next = hs->next;
    if (s->wq_tail == key)
        s->wq_tail = prev;
    int uchan = fast ? chan : hs->chan; /* the unit's own channel */
    if (!fast && uchan != chan) /* a unit of a channel that shares chan's capacity */
        c = &n->ch[uchan];

    uint32_t mid = key_msg(key), h = key_hop(key);
    m = &n->msgs[mid];
    int64_t size = unit_size(n, m, hs->sent);
    cs_tick_t ser = unit_ser(n, uchan, c, size);
    hs->ready--;
    hs->sent++;
    /* the served message rejoins the queue only when the channel frees, so
     * that messages arriving meanwhile go first: true round-robin */
    hs->queued = 2;
    s->busy = 1;
    if ((int32_t)h + 1 < m->nhops)
        c->occ[hs->vc]++;
    cs_net_i_record(n, uchan, now, ser, ser, size, 1);
    /* the event carries the (message, hop) too, so that on_free can load
     * the message while it loads the channel instead of after */
    cs_sim_at(n->sim, t_add(fast, now, ser), n->h_mode[H_FREE], (uint32_t)chan, key);
    if ((int32_t)h + 1 == m->nhops) {
        cs_sim_at(n->sim, t_add(fast, t_add(fast, now, c->wire), ser), n->h_mode[H_DELIVER], mid,
                  0);
    } else {
        cs_tick_t t = t_add(fast, t_add(fast, now, c->wire), n->p.router_lat);
        /* a unit never finishes a hop before its own tail has arrived; with
         * one serialisation rate everywhere the tail is in by now + wire */
        if (!fast && !n->same_ser) {
            int nchan = m->hs[h + 1].chan;
            cs_tick_t tail = cs_tick_add(cs_tick_add(now, c->wire), ser) -
                             unit_ser(n, nchan, &n->ch[nchan], size);
            if (tail > t)
                t = tail;
        }
        cs_sim_at(n->sim, t, n->h_mode[H_HEAD], mid, h + 1);
    }
}

static void __attribute__((noinline)) arbitrate_idle(cs_net_chan_t *n, int chan, cs_tick_t now)
{
    arbitrate_body(n, chan, now, 0);
}

static void __attribute__((noinline)) arbitrate_idle_fast(cs_net_chan_t *n, int chan,
                                                          cs_tick_t now)
{
    arbitrate_body(n, chan, now, 1);
}

/* Starts the next unit on channel `chan` if it is idle and some waiting
 * message has buffer space downstream on its virtual channel. */
static inline void arbitrate(cs_net_chan_t *n, int chan, cs_tick_t now, int fast)
{
    const chan_state_t *c = &n->ch[chan];
    if (!c->busy && c->wq_head != NIL64) {
        if (fast)
            arbitrate_idle_fast(n, chan, now);
        else
            arbitrate_idle(n, chan, now);
    }
}

/* Units of message `id` become ready at hop h (they queue at the hop's
 * serialiser, its channel's srv). */
static inline void make_ready(cs_net_chan_t *n, uint32_t id, uint32_t h, uint32_t count,
                              cs_tick_t now, int fast)
{
    hop_state_t *hs = &n->msgs[id].hs[h];
    int32_t srv = fast ? hs->chan : n->ch[hs->chan].srv;
    hs->ready += count;
    if (!hs->queued)
        wq_append(n, srv, hop_key(id, h), hs);
    arbitrate(n, srv, now, fast);
}

static uint32_t gate_units(const cs_net_chan_t *n, const msg_t *m)
{
    if (m->gate >= m->bytes)
        return m->npk;
    return (uint32_t)(m->gate / n->p.unit_bytes);
}

/* Overhead over: the units the gate allows are ready at the first hop. */
static void on_begin(void *ctx, const cs_event_t *ev)
{
    cs_net_chan_t *n = ctx;
    uint32_t id = ev->a;
    if (!cs_net_chan_begin(n, id))
        return;
    msg_t *m = &n->msgs[id];
    /* units are counted in 32 bits (the executor checks sizes before a
     * run, see cs_net_mode_max_units) */
    CS_ASSERT(m->bytes / n->p.unit_bytes < UINT32_MAX);
    m->npk = (uint32_t)(m->bytes ? (m->bytes + n->p.unit_bytes - 1) / n->p.unit_bytes : 1);
    cs_net_i_k_change(n, m, +1);
    if (n->adaptive) /* the load an adaptive route reads (packet_load) */
        for (int32_t h = 0; h < m->nhops; h++)
            n->cold[m->hs[h].chan].routed_units += m->npk;
    m->released = gate_units(n, m);
    if (m->released)
        make_ready(n, id, 0, m->released, cs_sim_now(n->sim), 0);
}

static void packet_gate(void *impl, uint32_t id, int64_t gate_bytes, int64_t rate)
{
    cs_net_chan_t *n = impl;
    (void)rate; /* units are released whole: no slopes */
    if (!cs_net_chan_raise_gate(n, id, gate_bytes))
        return;
    msg_t *m = &n->msgs[id];
    uint32_t g = gate_units(n, m);
    if (g > m->released) {
        uint32_t add = g - m->released;
        m->released = g;
        make_ready(n, id, 0, add, cs_sim_now(n->sim), 0);
    }
}

static inline __attribute__((always_inline)) void head_body(void *ctx, const cs_event_t *ev,
                                                            int fast)
{
    make_ready(ctx, ev->a, (uint32_t)ev->b, 1, ev->time, fast);
}

static void on_head(void *ctx, const cs_event_t *ev) { head_body(ctx, ev, 0); }
static void on_head_fast(void *ctx, const cs_event_t *ev) { head_body(ctx, ev, 1); }

/* Serialiser `chan` (a channel's srv) finished the unit of (message, hop)
 * ev->b, which crossed the hop's own channel. */
static inline __attribute__((always_inline)) void free_body(void *ctx, const cs_event_t *ev,
                                                            int fast)
{
    cs_net_chan_t *n = ctx;
    int chan = (int)ev->a;
    chan_state_t *c = &n->ch[chan];
    uint64_t key = ev->b; /* the (message, hop) on the wire */
    uint32_t mid = key_msg(key), h = key_hop(key);
    msg_t *m = &n->msgs[mid];
    hop_state_t *hs = &m->hs[h];
    c->busy = 0;
    hs->queued = 0;
    if (hs->ready)
        wq_append(n, chan, key, hs);
    if (hs->sent == m->npk)
        cs_net_i_k_dec(n, fast ? chan : hs->chan);
    /* the unit's tail has left the node before this hop: free its slot
     * there, and the serialiser of that hop's channel may go on */
    if (h > 0) {
        const hop_state_t *ph = &m->hs[h - 1];
        chan_state_t *pc = &n->ch[ph->chan];
        pc->occ[ph->vc]--;
        arbitrate(n, fast ? ph->chan : pc->srv, ev->time, fast);
    }
    arbitrate(n, chan, ev->time, fast);
}

static void on_free(void *ctx, const cs_event_t *ev) { free_body(ctx, ev, 0); }
static void on_free_fast(void *ctx, const cs_event_t *ev) { free_body(ctx, ev, 1); }

static void on_deliver(void *ctx, const cs_event_t *ev)
{
    cs_net_chan_t *n = ctx;
    uint32_t id = ev->a;
    msg_t *m = &n->msgs[id];
    int64_t total = m->arrived + unit_size(n, m, m->delivered);
    m->delivered++;
    /* an unwatched message that is not complete has nothing to report:
     * cs_net_i_arrived would only store the count */
    if (!m->watch && total < m->bytes) {
        m->arrived = total;
        return;
    }
    cs_net_i_arrived(n, id, total, ev->time);
}

/* The deadlock message, naming up to six channels with units waiting. */
static int packet_explain(const void *impl, cs_error_t *err)
{
    const cs_net_chan_t *n = impl;
    char buf[700] = "";
    size_t len = sizeof buf;
    int shown = 0;
    size_t used = 0;
    for (int c = 0; c < n->nchans && shown < 6; c++) {
        const chan_state_t *ch = &n->ch[c];
        if (ch->wq_head == NIL64)
            continue;
        int w = snprintf(buf + used, len - used, "%schannel %d->%d has units waiting (buffer %d/%d)",
                         shown ? ", " : "", cs_topo_channel_src(n->topo, c),
                         cs_topo_channel_dst(n->topo, c), ch->occ[0] + ch->occ[1] + ch->occ[2],
                         n->p.buf_units);
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
        shown++;
    }
    return cs_net_chan_explain(n, buf, err);
}

/* The load an adaptive route reads, UGAL-L's queue (Kim et al. 2008) in
 * units: the units of messages already routed over the channel that it has
 * not sent yet (its backlog: a message is routed whole when it starts, so
 * what it will send counts from then, not only the units that have reached
 * the channel's node) plus the units it sent that still hold a buffer slot
 * at its destination node (occ, all classes).  The backlog is the units
 * routed over it less those it sent (its statistics count them), so that
 * the per-unit path keeps no counter for it: non-adaptive runs pay
 * nothing. */
static int64_t packet_load(const void *ctx, int chan)
{
    const cs_net_chan_t *n = ctx;
    const chan_state_t *c = &n->ch[chan];
    return n->cold[chan].routed_units - n->stats[chan].units + c->occ[0] + c->occ[1] + c->occ[2];
}

static const cs_net_ops_t packet_ops = {
    .name = "packet",
    .mode = CS_NET_PACKET,
    .post = cs_net_chan_post,
    .gate = packet_gate,
    .active = cs_net_chan_active,
    .explain_stuck = packet_explain,
    .chan_stats = cs_net_chan_totals,
    .free = cs_net_chan_free,
};

/* Whether the engine may run the fast variant of the per-unit path (see
 * arbitrate_body): no shared capacity, one serialisation rate, small
 * times. */
static int packet_fast(const cs_net_chan_t *n)
{
    if (cs_topo_has_shared(n->topo) || !n->same_ser || n->p.router_lat > FAST_TIME_MAX)
        return 0;
    for (int c = 0; c < n->nchans; c++)
        if (n->ch[c].wire > FAST_TIME_MAX || n->ch[c].ser_unit > FAST_TIME_MAX)
            return 0;
    return 1;
}

const cs_net_chan_mode_t cs_net_packet_mode = {
    .ops = &packet_ops,
    .begin = on_begin,
    .handlers = {[H_HEAD] = on_head, [H_FREE] = on_free, [H_DELIVER] = on_deliver},
    .fast_handlers = {[H_HEAD] = on_head_fast, [H_FREE] = on_free_fast,
                      [H_DELIVER] = on_deliver},
    .use_fast = packet_fast,
    .load = packet_load,
};
