/*
 * net_chan.c - the channel engine's shared core, which both fidelity modes
 * (net_packet.c, net_fluid.c) build their ops tables on: parameters, message
 * posting and routing, the endpoint port rule, message completion and the
 * per-channel statistics (see net.h for the model).  It calls a mode only
 * through the `begin` event handler the mode registered.
 */
#include "engine/net_internal.h"

#include <stdlib.h>
#include <string.h>

void cs_net_params_default(cs_net_params_t *np)
{
    memset(np, 0, sizeof *np);
    np->unit_bytes = 4096;
    np->ser_num = 1;
    np->ser_den = 1;
    np->buf_units = 8;
    np->send_ports = 1;
    np->recv_ports = 1;
}

static void on_complete(void *ctx, const cs_event_t *ev);

int cs_net_chan_new(cs_sim_t *sim, const cs_topo_t *topo, const cs_net_params_t *np,
                    const cs_net_hooks_t *hooks, const cs_net_chan_mode_t *mode,
                    cs_net_t **out, cs_error_t *err)
{
    cs_net_chan_t *n;
    *out = NULL;
    if (np->unit_bytes < 1)
        return cs_error_set(err, CS_ERR_RANGE, "network unit must be at least 1 byte, got %lld",
                            (long long)np->unit_bytes);
    if (np->unit_bytes > ((int64_t)1 << 40))
        return cs_error_set(err, CS_ERR_RANGE, "network unit of %lld bytes is too large",
                            (long long)np->unit_bytes);
    if (np->ser_num < 0 || np->ser_den < 1)
        return cs_error_set(err, CS_ERR_RANGE,
                            "serialisation rate must be a non-negative ratio, got %lld/%lld",
                            (long long)np->ser_num, (long long)np->ser_den);
    if (np->wire_lat < 0 || np->router_lat < 0 || np->send_overhead < 0 || np->recv_overhead < 0)
        return cs_error_set(err, CS_ERR_RANGE, "latencies and overheads must be >= 0");
    if (np->buf_units < 0 || np->send_ports < 0 || np->recv_ports < 0)
        return cs_error_set(err, CS_ERR_RANGE, "buffer and port counts must be >= 0");

    n = cs_calloc(1, sizeof *n);
    n->sim = sim;
    n->topo = topo;
    n->p = *np;
    if (hooks)
        n->hooks = *hooks;
    n->nnodes = cs_topo_nodes(topo);
    n->nchans = cs_topo_channels(topo);
    {
        /* line-aligned: see chan_state_t */
        size_t bytes = ((size_t)n->nchans + 1) * sizeof *n->ch;
        void *ch = NULL;
        /* the one allocation here outside cs_malloc: its failure is the
         * out-of-memory status (71), not a broken invariant (a 2^26-node
         * torus asked for 17 GB) */
        if (posix_memalign(&ch, 64, bytes) != 0) {
            int nchans = n->nchans;
            free(n);
            return cs_error_set(err, CS_ERR_OOM, "out of memory: %d channels take %zu MiB",
                                nchans, bytes >> 20);
        }
        n->ch = memset(ch, 0, bytes);
    }
    n->stats = cs_calloc((size_t)n->nchans + 1, sizeof *n->stats);
    n->cold = cs_calloc((size_t)n->nchans + 1, sizeof *n->cold);
    for (int c = 0; c < n->nchans; c++) {
        chan_state_t *ch = &n->ch[c];
        chan_cold_t *cc = &n->cold[c];
        ch->wq_head = ch->wq_tail = NIL64;
        cc->ser_num = np->chan_ser_num ? np->chan_ser_num[c] : np->ser_num;
        cc->ser_den = np->chan_ser_den ? np->chan_ser_den[c] : np->ser_den;
        ch->wire = np->chan_wire_lat ? np->chan_wire_lat[c] : np->wire_lat;
        if (cc->ser_num < 0 || cc->ser_den < 1 || ch->wire < 0) {
            free(n->ch);
            free(n->cold);
            free(n->stats);
            free(n);
            return cs_error_set(err, CS_ERR_RANGE, "channel %d has invalid timing", c);
        }
        ch->ser_unit = net_ser(cc, np->unit_bytes);
        n->same_ser = c == 0 || (n->same_ser && cc->ser_num == n->cold[0].ser_num &&
                                 cc->ser_den == n->cold[0].ser_den);
        /* bytes per tick; an infinitely fast channel gets a huge capacity */
        cc->cap = cc->ser_num ? (double)cc->ser_den / (double)cc->ser_num : 1e300;
        ch->srv = c;
    }
    if (cs_topo_has_shared(topo))
        for (int c = 0; c < n->nchans; c++) {
            chan_state_t *ch = &n->ch[c];
            ch->srv = cs_topo_channel_resource(topo, c);
            /* a group has one capacity, its resource's: channels of another
             * bandwidth in it would be silently given that one */
            const chan_cold_t *cc = &n->cold[c], *sc = &n->cold[ch->srv];
            if (cc->ser_num != sc->ser_num || cc->ser_den != sc->ser_den) {
                int srv = ch->srv;
                long long a = cc->ser_num, b = cc->ser_den, sa = sc->ser_num, sb = sc->ser_den;
                free(n->ch);
                free(n->cold);
                free(n->stats);
                free(n);
                return cs_error_set(err, CS_ERR_RANGE,
                                    "channel %d shares its capacity with channel %d but has "
                                    "another bandwidth (%lld/%lld against %lld/%lld ticks per "
                                    "byte)", c, srv, a, b, sa, sb);
            }
        }
    n->send_busy = cs_calloc((size_t)n->nnodes, sizeof *n->send_busy);
    n->recv_busy = cs_calloc((size_t)n->nnodes, sizeof *n->recv_busy);
    n->src_wait_head = cs_malloc((size_t)n->nnodes * sizeof(uint32_t));
    n->src_wait_tail = cs_malloc((size_t)n->nnodes * sizeof(uint32_t));
    n->dst_wait_head = cs_malloc((size_t)n->nnodes * sizeof(uint32_t));
    n->dst_wait_tail = cs_malloc((size_t)n->nnodes * sizeof(uint32_t));
    for (int i = 0; i < n->nnodes; i++)
        n->src_wait_head[i] = n->src_wait_tail[i] = n->dst_wait_head[i] = n->dst_wait_tail[i] = NIL32;
    n->free_head = NIL32;
    n->max_route = cs_topo_max_route_len(topo);
    n->route_buf = cs_malloc(((size_t)n->max_route + 1) * sizeof *n->route_buf);
    n->adaptive = cs_topo_is_adaptive(topo);
    n->load = mode->load;
    n->h_begin = cs_sim_register(sim, mode->begin, n);
    n->h_complete = cs_sim_register(sim, on_complete, n);
    const cs_sim_handler_fn *hf =
        mode->use_fast && mode->use_fast(n) ? mode->fast_handlers : mode->handlers;
    for (int i = 0; i < CS_NET_CHAN_HANDLERS; i++)
        n->h_mode[i] = hf[i] ? cs_sim_register(sim, hf[i], n) : NIL32;
    *out = n->net = cs_net_new_engine(mode->ops, n, topo);
    return CS_OK;
}

void cs_net_chan_free(void *impl)
{
    cs_net_chan_t *n = impl;
    for (uint32_t i = 0; i < n->nmsgs; i++)
        free(n->msgs[i].hs);
    free(n->msgs);
    free(n->ch);
    free(n->cold);
    free(n->stats);
    free(n->send_busy);
    free(n->recv_busy);
    free(n->src_wait_head);
    free(n->src_wait_tail);
    free(n->dst_wait_head);
    free(n->dst_wait_tail);
    free(n->route_buf);
    free(n);
}

/* ---- statistics ------------------------------------------------------- */

int64_t cs_net_chan_active(const void *impl) { return ((const cs_net_chan_t *)impl)->active; }

const cs_chan_stats_t *cs_net_chan_totals(const void *impl, int chan)
{
    return &((const cs_net_chan_t *)impl)->stats[chan];
}

void cs_net_i_record_stall(cs_net_chan_t *n, int chan, cs_tick_t start, cs_tick_t dur)
{
    n->stats[chan].stall += dur;
    cs_chanrec_stall(n->net->rec, chan, start, dur);
}

static void k_note(cs_net_chan_t *n, int chan)
{
    int32_t k = n->ch[chan].k_now;
    if (k > n->stats[chan].peak_k)
        n->stats[chan].peak_k = k;
}

void cs_net_i_k_change(cs_net_chan_t *n, msg_t *m, int delta)
{
    for (int32_t h = 0; h < m->nhops; h++) {
        n->ch[m->hs[h].chan].k_now += delta;
        if (delta > 0)
            k_note(n, m->hs[h].chan);
        cs_chanrec_k(n->net->rec, m->hs[h].chan, cs_sim_now(n->sim), n->ch[m->hs[h].chan].k_now);
    }
}

void cs_net_i_k_dec(cs_net_chan_t *n, int chan)
{
    n->ch[chan].k_now--;
    cs_chanrec_k(n->net->rec, chan, cs_sim_now(n->sim), n->ch[chan].k_now);
}

/* ---- ports ------------------------------------------------------------ */

/* The send and receive ports of a node (0: unlimited). */
static int send_ports(const cs_net_chan_t *n, int node)
{
    return n->p.node_ports ? n->p.node_ports[node] : n->p.send_ports;
}
static int recv_ports(const cs_net_chan_t *n, int node)
{
    return n->p.node_ports ? n->p.node_ports[node] : n->p.recv_ports;
}

static int ports_free(const cs_net_chan_t *n, const msg_t *m)
{
    int sp = send_ports(n, m->src), rp = recv_ports(n, m->dst);
    return (!sp || n->send_busy[m->src] < sp) && (!rp || n->recv_busy[m->dst] < rp);
}

static void wait_append(cs_net_chan_t *n, uint32_t id)
{
    msg_t *m = &n->msgs[id];
    m->src_next = m->dst_next = NIL32;
    m->src_prev = n->src_wait_tail[m->src];
    if (m->src_prev == NIL32)
        n->src_wait_head[m->src] = id;
    else
        n->msgs[m->src_prev].src_next = id;
    n->src_wait_tail[m->src] = id;
    m->dst_prev = n->dst_wait_tail[m->dst];
    if (m->dst_prev == NIL32)
        n->dst_wait_head[m->dst] = id;
    else
        n->msgs[m->dst_prev].dst_next = id;
    n->dst_wait_tail[m->dst] = id;
}

static void wait_remove(cs_net_chan_t *n, uint32_t id)
{
    msg_t *m = &n->msgs[id];
    if (m->src_prev == NIL32)
        n->src_wait_head[m->src] = m->src_next;
    else
        n->msgs[m->src_prev].src_next = m->src_next;
    if (m->src_next == NIL32)
        n->src_wait_tail[m->src] = m->src_prev;
    else
        n->msgs[m->src_next].src_prev = m->src_prev;
    if (m->dst_prev == NIL32)
        n->dst_wait_head[m->dst] = m->dst_next;
    else
        n->msgs[m->dst_prev].dst_next = m->dst_next;
    if (m->dst_next == NIL32)
        n->dst_wait_tail[m->dst] = m->dst_prev;
    else
        n->msgs[m->dst_next].dst_prev = m->dst_prev;
}

static void start_message(cs_net_chan_t *n, uint32_t id)
{
    msg_t *m = &n->msgs[id];
    n->send_busy[m->src]++;
    n->recv_busy[m->dst]++;
    m->state = MSG_OVERHEAD;
    if (n->hooks.started)
        n->hooks.started(n->hooks.ctx, m->user, cs_sim_now(n->sim));
    cs_sim_at(n->sim, cs_tick_add(cs_sim_now(n->sim), n->p.send_overhead), n->h_begin, id, 0);
}

/* After ports were released at src (send) and dst (recv): start waiting
 * messages that can now go, oldest first across both wait lists (a message
 * may be in both; it is started once). */
static void ports_released(cs_net_chan_t *n, int src, int dst)
{
    uint32_t a = n->src_wait_head[src], b = n->dst_wait_head[dst];
    while (a != NIL32 || b != NIL32) {
        uint32_t id;
        if (b == NIL32 || (a != NIL32 && n->msgs[a].post_seq <= n->msgs[b].post_seq)) {
            id = a;
            a = n->msgs[a].src_next;
        } else {
            id = b;
            b = n->msgs[b].dst_next;
        }
        if (n->msgs[id].state == MSG_WAIT_PORTS && ports_free(n, &n->msgs[id])) {
            wait_remove(n, id);
            start_message(n, id);
        }
        /* every waiter of the source's list needs its send port, every
         * waiter of the destination's list its receive port */
        if (send_ports(n, src) && n->send_busy[src] >= send_ports(n, src))
            a = NIL32;
        if (recv_ports(n, dst) && n->recv_busy[dst] >= recv_ports(n, dst))
            b = NIL32;
    }
}

/* ---- message life ----------------------------------------------------- */

static uint32_t msg_alloc(cs_net_chan_t *n)
{
    uint32_t id;
    if (n->free_head != NIL32) {
        id = n->free_head;
        n->free_head = n->msgs[id].next_free;
    } else {
        if (n->nmsgs == n->cap_msgs) {
            n->cap_msgs = n->cap_msgs ? n->cap_msgs * 2 : 256;
            CS_ASSERT(n->cap_msgs < (1u << 31));
            n->msgs = cs_realloc(n->msgs, (size_t)n->cap_msgs * sizeof *n->msgs);
        }
        id = n->nmsgs++;
        n->msgs[id].version = 0;
        n->msgs[id].hs = NULL;
        n->msgs[id].hs_cap = 0;
    }
    {
        /* keep the version across reuse so stale fluid events stay stale,
         * and the hop states, so that a message costs no allocation once
         * the ids in flight have routes as long as it */
        msg_t *m = &n->msgs[id];
        uint64_t version = m->version;
        hop_state_t *hs = m->hs;
        uint32_t hs_cap = m->hs_cap;
        memset(m, 0, sizeof *m);
        m->version = version + 1;
        m->hs = hs;
        m->hs_cap = hs_cap;
    }
    return id;
}

/* Routes message m (load: NULL, or the engine's view for an adaptive
 * topology) into its hop states. */
static inline void route_msg(cs_net_chan_t *n, msg_t *m, const cs_topo_load_t *load)
{
    int h = cs_topo_route_load(n->topo, m->src, m->dst, load, n->route_buf);
    CS_ASSERT(h >= 0 && h < 0xffff);
    m->nhops = h;
    if ((uint32_t)h > m->hs_cap || !m->hs) {
        free(m->hs);
        m->hs_cap = (uint32_t)(h ? h : 1);
        m->hs = cs_malloc((size_t)m->hs_cap * sizeof *m->hs);
    }
    m->routed = 1;
    for (int i = 0; i < h; i++)
        m->hs[i] = (hop_state_t){.chan = n->route_buf[i].chan, .vc = n->route_buf[i].vc,
                                 .next = NIL64};
}

uint32_t cs_net_chan_post(void *impl, int src, int ndst, const int *dsts, int64_t bytes,
                          int64_t gate_bytes, int watch, const uint64_t *users)
{
    cs_net_chan_t *n = impl;
    int dst = dsts[0];
    uint32_t id;
    msg_t *m;
    CS_ASSERT(ndst == 1); /* no multicast: the executor lowers it to unicasts */
    id = msg_alloc(n);
    m = &n->msgs[id];
    CS_ASSERT(src >= 0 && src < n->nnodes && dst >= 0 && dst < n->nnodes && bytes >= 0);
    m->src = src;
    m->dst = dst;
    m->bytes = bytes;
    m->gate = gate_bytes < bytes ? gate_bytes : bytes;
    m->user = users[0];
    m->watch = (uint8_t)watch;
    m->post_seq = n->post_seq++;
    /* an adaptive topology's messages are routed when they start moving
     * (cs_net_chan_begin), under the load of that moment */
    if (!n->adaptive || src == dst)
        route_msg(n, m, NULL);
    n->active++;
    if (src == dst) {
        /* a message to oneself is a local copy: it uses no port and pays
         * no overhead (the lecture's local data movement is free) */
        m->local = 1;
        m->state = MSG_OVERHEAD;
        if (n->hooks.started)
            n->hooks.started(n->hooks.ctx, m->user, cs_sim_now(n->sim));
        cs_sim_at(n->sim, cs_sim_now(n->sim), n->h_begin, id, 0);
    } else if (ports_free(n, m))
        start_message(n, id);
    else {
        m->state = MSG_WAIT_PORTS;
        wait_append(n, id);
    }
    return id;
}

int cs_net_chan_raise_gate(cs_net_chan_t *n, uint32_t id, int64_t gate_bytes)
{
    msg_t *m = &n->msgs[id];
    if (gate_bytes > m->bytes)
        gate_bytes = m->bytes;
    if (gate_bytes <= m->gate)
        return 0;
    m->gate = gate_bytes;
    if (m->state != MSG_ACTIVE)
        return 0;
    if (m->nhops == 0) {
        cs_net_i_arrived(n, id, m->gate, cs_sim_now(n->sim));
        return 0;
    }
    return 1;
}

/* An adaptive topology's message, routed as it starts under the mode's
 * load; its number is its posting order: deterministic, and the same
 * whatever ran on the topology before.  Out of line, so that the begin of
 * a non-adaptive run pays one test. */
static void __attribute__((noinline)) route_adaptive(cs_net_chan_t *n, msg_t *m)
{
    cs_topo_load_t load = {n->load, n, m->post_seq};
    route_msg(n, m, n->load ? &load : NULL);
}

int cs_net_chan_begin(cs_net_chan_t *n, uint32_t id)
{
    msg_t *m = &n->msgs[id];
    if (n->adaptive && !m->routed)
        route_adaptive(n, m);
    m->state = MSG_ACTIVE;
    if (m->nhops == 0) {
        /* to itself: nothing crosses the network; the gate still paces it */
        cs_net_i_arrived(n, id, m->gate, cs_sim_now(n->sim));
        return 0;
    }
    return 1;
}

static void finish(cs_net_chan_t *n, uint32_t id)
{
    msg_t *m = &n->msgs[id];
    int src = m->src, dst = m->dst;
    uint64_t user = m->user;
    int local = m->local;
    if (!local) {
        n->send_busy[src]--;
        n->recv_busy[dst]--;
    }
    m->state = MSG_FREE;
    m->next_free = n->free_head;
    n->free_head = id;
    n->active--;
    /* waiting messages take the freed ports before anything the completion
     * hook posts, so ports go out in posting order */
    if (!local)
        ports_released(n, src, dst);
    if (n->hooks.completed)
        n->hooks.completed(n->hooks.ctx, user, cs_sim_now(n->sim));
}

static void on_complete(void *ctx, const cs_event_t *ev) { finish(ctx, ev->a); }

/* Called by the modes as bytes reach the destination. */
void cs_net_i_arrived(cs_net_chan_t *n, uint32_t id, int64_t bytes_total, cs_tick_t now)
{
    msg_t *m = &n->msgs[id];
    m->arrived = bytes_total;
    if (m->watch && n->hooks.progress) {
        n->hooks.progress(n->hooks.ctx, m->user, bytes_total, 0, now);
        m = &n->msgs[id]; /* the hook may have posted messages (msgs may move) */
    }
    if (bytes_total < m->bytes)
        return;
    m->state = MSG_FINISHING;
    if (n->p.recv_overhead && !m->local)
        cs_sim_at(n->sim, cs_tick_add(now, n->p.recv_overhead), n->h_complete, id, 0);
    else
        finish(n, id);
}

int cs_net_chan_explain(const cs_net_chan_t *n, const char *detail, cs_error_t *err)
{
    int waiting = 0;
    for (uint32_t i = 0; i < n->nmsgs; i++)
        if (n->msgs[i].state == MSG_WAIT_PORTS)
            waiting++;
    return cs_error_set(err, CS_ERR_DEADLOCK,
                        "network deadlock: %lld messages cannot progress (%d waiting for ports)%s%s",
                        (long long)n->active, waiting, detail[0] ? "; " : "", detail);
}
