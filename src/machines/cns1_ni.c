/*
 * cns1_ni.c - the CNS-1 network-interface engine (model in cns1_ni.h and
 * docs/cns1.md).
 *
 * Everything is a reservation of a resource's next free cycle: the CPU
 * (busy_until), the send and receive buffers and the links (free_at, the
 * first cycle a new message may use them).  A node is "kicked" whenever
 * something it waits for may have changed; a kick starts at most one
 * overhead on the CPU.  Messages of a node are served in posting order,
 * skipping those whose data has not arrived yet (a streamed forward), so
 * one waiting send never blocks the others.
 */
#include "machines/cns1_ni.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NIL (-1)
#define NEVER INT64_MAX

typedef struct nmsg {
    int32_t src, dst;
    int64_t bytes;
    int32_t x;          /* NI messages */
    int32_t me;         /* elements per NI message */
    int32_t ml;         /* bytes on the wire per NI message */
    int32_t started;    /* NI messages whose send overhead began */
    int32_t delivered;  /* NI messages delivered */
    int64_t gate;       /* bytes the executor allows so far */
    int32_t next;       /* node's send list */
    uint64_t user;
    uint8_t watch, local, in_list, done;
} nmsg_t;

typedef struct task {   /* a received NI message waiting for the CPU */
    int32_t msg, next;
} task_t;

typedef struct node {
    int32_t send_head, send_tail;  /* messages with NI messages left to start */
    int32_t recv_head, recv_tail;  /* tasks */
    cs_tick_t cpu_busy_until, kick_at;
    int64_t sent, send_ovh;
} node_t;

typedef struct chanres {
    cs_tick_t free_at;
    cs_tick_t stall_until; /* end of the stall time counted so far */
    cs_tick_t *ends;    /* reservation ends still in the future (for peak k) */
    int32_t nends, cap;
} chanres_t;

typedef struct cns1 {
    cs_cns1_params_t p;
    const cs_topo_t *topo;
    cs_sim_t *sim;
    cs_net_t *net; /* the wrapper (its recorder takes the time buckets) */
    cs_net_hooks_t hooks;
    int nnodes, nchans;
    node_t *nodes;
    cs_tick_t *sbuf, *rbuf;  /* nnodes * nsend / nrecv: free_at */
    chanres_t *ch;
    cs_chan_stats_t *stats;
    nmsg_t *m;
    int32_t nm, cap_m;
    task_t *tasks;
    int32_t ntasks, cap_tasks, free_task;
    cs_hop_t *route;
    int64_t active;
    uint32_t h_kick, h_sent, h_arrive, h_recvd, h_local;
} cns1_t;

static cs_tick_t now_of(const cns1_t *c) { return cs_sim_now(c->sim); }

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static void kick(cns1_t *c, int node, cs_tick_t t)
{
    node_t *n = &c->nodes[node];
    if (n->kick_at >= now_of(c) && n->kick_at <= t)
        return; /* a kick at or before t is already due */
    n->kick_at = t;
    cs_sim_at(c->sim, t, c->h_kick, (uint32_t)node, 0);
}

/* Bytes NI message k of m carries the data of: [k*4me, min(bytes, (k+1)*4me)). */
static int64_t chunk_end(const nmsg_t *m, int32_t k)
{
    int64_t e = (int64_t)(k + 1) * 4 * m->me;
    return e < m->bytes ? e : m->bytes;
}

/* ---- the CPU ---------------------------------------------------------------- */

static void list_remove(cns1_t *c, node_t *n, int32_t prev, int32_t id)
{
    if (prev == NIL)
        n->send_head = c->m[id].next;
    else
        c->m[prev].next = c->m[id].next;
    if (n->send_tail == id)
        n->send_tail = prev;
    c->m[id].in_list = 0;
}

static void on_kick(void *ctx, const cs_event_t *ev)
{
    cns1_t *c = ctx;
    int node = (int)ev->a;
    node_t *n = &c->nodes[node];
    cs_tick_t now = now_of(c), ovh = 2 * c->p.ov;
    if (n->kick_at == now)
        n->kick_at = -1;
    if (n->cpu_busy_until > now) {
        kick(c, node, n->cpu_busy_until);
        return;
    }
    /* a received message waiting for its overhead goes first */
    if (n->recv_head != NIL) {
        int32_t t = n->recv_head;
        n->recv_head = c->tasks[t].next;
        if (n->recv_head == NIL)
            n->recv_tail = NIL;
        n->cpu_busy_until = now + ovh;
        cs_sim_at(c->sim, now + ovh, c->h_recvd, (uint32_t)c->tasks[t].msg, 0);
        c->tasks[t].next = c->free_task;
        c->free_task = t;
        return;
    }
    /* the first message (in posting order) whose next NI message has its
     * data and can start now: its overhead ends as a send buffer frees and
     * as its first link can take it (the paper's "conflict free transfer":
     * a node does not start a transfer that would wait in a buffer) */
    cs_tick_t *sb = c->sbuf + (int64_t)node * c->p.nsend;
    int b = 0;
    for (int i = 1; i < c->p.nsend; i++)
        if (sb[i] < sb[b])
            b = i;
    cs_tick_t earliest = NEVER;
    int32_t prev = NIL;
    /* every send buffer held: the one that frees first services the node
     * again (a wake-up at NEVER - ovh would pass the clock's maximum) */
    if (sb[b] == NEVER)
        return;
    for (int32_t id = n->send_head; id != NIL; prev = id, id = c->m[id].next) {
        nmsg_t *m = &c->m[id];
        if (m->gate < chunk_end(m, m->started))
            continue;
        cs_tick_t s = sb[b] - ovh;
        int h = cs_topo_route(c->topo, m->src, m->dst, c->route);
        CS_ASSERT(h >= 1);
        if (c->ch[c->route[0].chan].free_at - 1 - ovh > s)
            s = c->ch[c->route[0].chan].free_at - 1 - ovh;
        if (s > now) {
            if (s < earliest)
                earliest = s;
            continue;
        }
        sb[b] = NEVER; /* held from now on */
        m->started++;
        if (m->started == m->x)
            list_remove(c, n, prev, id);
        n->cpu_busy_until = now + ovh;
        n->sent++;
        n->send_ovh += ovh;
        cs_sim_at(c->sim, now + ovh, c->h_sent, (uint32_t)id, (uint64_t)b);
        return;
    }
    if (earliest != NEVER)
        kick(c, node, earliest);
}

/* ---- the network -------------------------------------------------------------- */

static void note_k(cns1_t *c, int32_t chan, cs_tick_t want)
{
    chanres_t *r = &c->ch[chan];
    int32_t k = 1, keep = 0;
    for (int32_t i = 0; i < r->nends; i++)
        if (r->ends[i] > now_of(c)) {
            r->ends[keep++] = r->ends[i];
            if (r->ends[i] > want)
                k++;
        }
    r->nends = keep;
    if (k > c->stats[chan].peak_k)
        c->stats[chan].peak_k = k;
    cs_chanrec_peak(cs_net_recorder(c->net), chan, want, k);
}

static void push_end(chanres_t *r, cs_tick_t end)
{
    r->ends = cs_grow(r->ends, r->nends, &r->cap, 4, sizeof *r->ends);
    r->ends[r->nends++] = end;
}

/* The NI message waits for its way over [from, to).  A channel's stall is
 * the time during which at least one message waited for it (docs/figures.md),
 * not the sum of the waits: in a gather dozens of messages wait for the same
 * link at once, and summing them gave stalls of 900% of the run.  Waits begin
 * at the current cycle, so `from` never decreases per channel and the union
 * of the intervals is what extends past stall_until. */
static void record_stall(cns1_t *c, int32_t chan, cs_tick_t from, cs_tick_t to)
{
    chanres_t *r = &c->ch[chan];
    if (from < r->stall_until)
        from = r->stall_until;
    if (to <= from)
        return;
    c->stats[chan].stall += to - from;
    cs_chanrec_stall(cs_net_recorder(c->net), chan, from, to - from);
    r->stall_until = to;
}

/* Send overhead over: the NI message is in send buffer b; reserve its way. */
static void on_sent(void *ctx, const cs_event_t *ev)
{
    cns1_t *c = ctx;
    nmsg_t *m = &c->m[ev->a];
    cs_tick_t e = now_of(c), start = e;
    int64_t tt_i = ceil_div(m->ml, c->p.s_proc), tt_l = ceil_div(m->ml, c->p.s_link);
    int h = cs_topo_route(c->topo, m->src, m->dst, c->route);
    CS_ASSERT(h >= 1);
    for (int j = 0; j < h; j++)
        if (c->ch[c->route[j].chan].free_at - 1 - j > start)
            start = c->ch[c->route[j].chan].free_at - 1 - j;
    cs_tick_t *rb = c->rbuf + (int64_t)m->dst * c->p.nrecv;
    int b = 0;
    for (int i = 1; i < c->p.nrecv; i++)
        if (rb[i] < rb[b])
            b = i;
    /* the receive buffer holds the last tt_i + 1 cycles of the arrival */
    if (rb[b] + tt_i - h - tt_l > start)
        start = rb[b] + tt_i - h - tt_l;
    cs_tick_t last = start + h + tt_l; /* the cycle after the last byte arrived */
    for (int j = 0; j < h; j++) {
        int32_t ch = c->route[j].chan;
        note_k(c, ch, e + 1 + j);
        c->ch[ch].free_at = start + j + tt_l + 2;
        push_end(&c->ch[ch], start + 1 + j + tt_l);
        c->stats[ch].bytes += m->ml;
        c->stats[ch].units++;
        c->stats[ch].busy += tt_l;
        cs_chanrec_busy(cs_net_recorder(c->net), ch, start + 1 + j, tt_l, tt_l, m->ml, 1);
        record_stall(c, ch, e, start);
    }
    rb[b] = last + 1;
    c->sbuf[(int64_t)m->src * c->p.nsend + (int64_t)ev->b] = start + tt_i + 1;
    cs_sim_at(c->sim, last, c->h_arrive, (uint32_t)ev->a, 0);
    kick(c, m->src, e);
}

/* Last byte in: the NI message waits for its receive overhead. */
static void on_arrive(void *ctx, const cs_event_t *ev)
{
    cns1_t *c = ctx;
    int dst = c->m[ev->a].dst;
    node_t *n = &c->nodes[dst];
    int32_t t;
    if (c->free_task != NIL) {
        t = c->free_task;
        c->free_task = c->tasks[t].next;
    } else {
        c->tasks = cs_grow(c->tasks, c->ntasks, &c->cap_tasks, 256, sizeof *c->tasks);
        t = c->ntasks++;
    }
    c->tasks[t] = (task_t){(int32_t)ev->a, NIL};
    if (n->recv_tail == NIL)
        n->recv_head = t;
    else
        c->tasks[n->recv_tail].next = t;
    n->recv_tail = t;
    kick(c, dst, now_of(c));
}

static void deliver(cns1_t *c, int32_t id)
{
    nmsg_t *m = &c->m[id];
    uint64_t user = m->user;
    int64_t arrived = m->local ? m->gate : chunk_end(m, m->delivered - 1);
    int finished = m->local ? m->gate >= m->bytes : m->delivered == m->x;
    if (m->watch && c->hooks.progress && !finished)
        c->hooks.progress(c->hooks.ctx, user, arrived, 0, now_of(c));
    if (finished) {
        c->m[id].done = 1;
        c->active--;
        if (c->hooks.completed)
            c->hooks.completed(c->hooks.ctx, user, now_of(c));
    }
}

/* Receive overhead over: the data is there. */
static void on_recvd(void *ctx, const cs_event_t *ev)
{
    cns1_t *c = ctx;
    int dst = c->m[ev->a].dst;
    c->m[ev->a].delivered++;
    deliver(c, (int32_t)ev->a);
    kick(c, dst, now_of(c));
}

static void on_local(void *ctx, const cs_event_t *ev)
{
    cns1_t *c = ctx;
    if (!c->m[ev->a].done)
        deliver(c, (int32_t)ev->a);
}

/* ---- the interface ------------------------------------------------------------ */

static uint32_t ni_post(void *impl, int src, int ndst, const int *dst, int64_t bytes,
                        int64_t gate_bytes, int watch, const uint64_t *users)
{
    cns1_t *c = impl;
    CS_ASSERT(ndst == 1);
    c->m = cs_grow(c->m, c->nm, &c->cap_m, 256, sizeof *c->m);
    int32_t id = c->nm++;
    nmsg_t *m = &c->m[id];
    memset(m, 0, sizeof *m);
    int64_t np = (bytes + 3) / 4;
    m->src = src;
    m->dst = dst[0];
    m->bytes = bytes;
    m->x = (int32_t)(np > c->p.vlr ? ceil_div(np, c->p.vlr) : 1);
    m->me = (int32_t)ceil_div(np, m->x);
    m->ml = 4 * m->me + c->p.header;
    m->gate = gate_bytes < bytes ? gate_bytes : bytes;
    m->user = users[0];
    m->watch = (uint8_t)watch;
    m->local = src == dst[0];
    m->next = NIL;
    c->active++;
    if (m->local) {
        /* a copy in the node's own memory: no NI, no time */
        cs_sim_at(c->sim, now_of(c), c->h_local, (uint32_t)id, 0);
        return (uint32_t)id;
    }
    node_t *n = &c->nodes[src];
    m->in_list = 1;
    if (n->send_tail == NIL)
        n->send_head = id;
    else
        c->m[n->send_tail].next = id;
    n->send_tail = id;
    kick(c, src, now_of(c));
    return (uint32_t)id;
}

static void ni_gate(void *impl, uint32_t id, int64_t gate_bytes, int64_t rate)
{
    cns1_t *c = impl;
    nmsg_t *m = &c->m[id];
    (void)rate; /* this engine reports no rates, so none comes back */
    if (gate_bytes > m->bytes)
        gate_bytes = m->bytes;
    if (gate_bytes <= m->gate)
        return;
    m->gate = gate_bytes;
    if (m->local)
        cs_sim_at(c->sim, now_of(c), c->h_local, id, 0);
    else if (m->in_list)
        kick(c, m->src, now_of(c));
}

static int64_t ni_active(const void *impl) { return ((const cns1_t *)impl)->active; }

static int ni_explain(const void *impl, cs_error_t *err)
{
    const cns1_t *c = impl;
    int waiting = 0, example = -1;
    for (int32_t i = 0; i < c->nm; i++)
        if (!c->m[i].done) {
            waiting++;
            if (example < 0)
                example = i;
        }
    if (example < 0)
        return cs_error_set(err, CS_ERR_DEADLOCK, "cns1: no message is stuck");
    const nmsg_t *m = &c->m[example];
    return cs_error_set(err, CS_ERR_DEADLOCK,
                        "cns1: %d message(s) never delivered, e.g. node %d -> %d: %d of %d NI "
                        "messages started, waiting for data (%lld of %lld bytes allowed)",
                        waiting, m->src, m->dst, m->started, m->x, (long long)m->gate,
                        (long long)m->bytes);
}

static const cs_chan_stats_t *ni_chan_stats(const void *impl, int chan)
{
    return &((const cns1_t *)impl)->stats[chan];
}

static void ni_free(void *impl)
{
    cns1_t *c = impl;
    if (!c)
        return;
    for (int i = 0; i < c->nchans; i++)
        free(c->ch[i].ends);
    free(c->ch);
    free(c->stats);
    free(c->nodes);
    free(c->sbuf);
    free(c->rbuf);
    free(c->m);
    free(c->tasks);
    free(c->route);
    free(c);
}

static const cs_net_ops_t cns1_ops = {
    .name = "cns1 network interface",
    .post = ni_post,
    .gate = ni_gate,
    .active = ni_active,
    .explain_stuck = ni_explain,
    .chan_stats = ni_chan_stats,
    .free = ni_free,
};

int cs_cns1_ni_new(const cs_cns1_params_t *cp, const cs_topo_t *topo, cs_sim_t *sim,
                   const cs_net_hooks_t *hooks, cs_net_t **out, cs_error_t *err)
{
    *out = NULL;
    if (cp->ov < 0 || cp->vlr < 1 || cp->header < 0 || cp->nsend < 1 || cp->nrecv < 1 ||
        cp->s_proc < 1 || cp->s_link < 1)
        return cs_error_set(err, CS_ERR_RANGE, "cns1: invalid interface parameters");
    cns1_t *c = cs_calloc(1, sizeof *c);
    c->p = *cp;
    c->topo = topo;
    c->sim = sim;
    if (hooks)
        c->hooks = *hooks;
    c->nnodes = cs_topo_nodes(topo);
    c->nchans = cs_topo_channels(topo);
    c->nodes = cs_malloc((size_t)c->nnodes * sizeof *c->nodes);
    for (int i = 0; i < c->nnodes; i++)
        c->nodes[i] = (node_t){NIL, NIL, NIL, NIL, 0, -1, 0, 0};
    c->sbuf = cs_calloc((size_t)c->nnodes * (size_t)cp->nsend, sizeof *c->sbuf);
    c->rbuf = cs_calloc((size_t)c->nnodes * (size_t)cp->nrecv, sizeof *c->rbuf);
    c->ch = cs_calloc((size_t)c->nchans + 1, sizeof *c->ch);
    c->stats = cs_calloc((size_t)c->nchans + 1, sizeof *c->stats);
    c->route = cs_malloc(((size_t)cs_topo_max_route_len(topo) + 1) * sizeof *c->route);
    c->free_task = NIL;
    c->h_kick = cs_sim_register(sim, on_kick, c);
    c->h_sent = cs_sim_register(sim, on_sent, c);
    c->h_arrive = cs_sim_register(sim, on_arrive, c);
    c->h_recvd = cs_sim_register(sim, on_recvd, c);
    c->h_local = cs_sim_register(sim, on_local, c);
    *out = c->net = cs_net_new_engine(&cns1_ops, c, topo);
    return CS_OK;
}

int64_t cs_cns1_ni_sent(const cs_net_t *n, int node, int64_t *send_overhead_cycles)
{
    const cns1_t *c = cs_net_impl_of(n, &cns1_ops);
    if (!c || node < 0 || node >= c->nnodes)
        return 0;
    if (send_overhead_cycles)
        *send_overhead_cycles = c->nodes[node].send_ovh;
    return c->nodes[node].sent;
}
