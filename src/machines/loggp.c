/*
 * loggp.c - the LogGOPS model of LogGOPSim as a machine (Hoefler, Schneider,
 * Lumsdaine, "LogGOPSim - Simulating Large-Scale Applications in the
 * LogGOPS Model", LSAP/HPDC 2010, §2 and §3; the tool's LogGOPSim.cpp):
 *
 *   loggp:p=N[,L=2500,o=1500,g=1000,G=6,O=0,S=65535,tick=1ns,reduce=0]
 *
 * Times without a unit are nanoseconds, LogGOPSim's unit (its defaults are
 * the defaults here); G and O are per byte.  docs/loggp.md derives every
 * formula.  Per host, three resources hold the next time they are free:
 * the CPU (LogGOPSim's nexto), the NIC's send side (nextgs) and its receive
 * side (nextgr).  For a message of s bytes, with s' = max(s - 1, 0) (the
 * reference tool computes s - 1 in unsigned arithmetic, which makes 0-byte
 * messages G and O cheaper than 1-byte ones; here they cost the same):
 *
 *   send starts at ts = max(post, cpu, gs)        cpu = ts + o + s'O
 *                                                 gs  = ts + g + s'G
 *   first byte at the receiver   ta = ts + o + L
 *   receive processing starts at tp = max(ta, cpu, gr)
 *                                                 cpu = tp + o + max(s'O, s'G)
 *                                                 gr  = tp + g + s'G
 *   the message is received at   tp + o + max(s'O, s'G)
 *   the send completes at        ts + o + s'O                    (s <= S, eager)
 *                                max(ts + o + s'O, tm)           (s > S, rendezvous)
 *
 * where tm, the match, is the later of tp and the time the receiver posts
 * the recv that takes the message (the executor's `matched` call).  As in
 * LogGOPSim the rendezvous delays only the sender's completion: the data
 * itself travels eagerly and no return latency is charged (the tool's own
 * comments call this an approximation).  Uncontended, one message thus
 * costs o + L + o + s'G with O = 0 (the paper's LogGP cost, §2).
 *
 * The engine serves each host's sends in posting order and arrived
 * messages in arrival order; when a send and a receive could both take the
 * CPU at one tick, the one requested first goes first (a send is requested
 * when posted, a message when its sender started it), which is LogGOPSim's
 * (time, insertion) event order.  A message to oneself is a local copy and
 * free, as everywhere in collsim.  There is no topology: hosts hang off one
 * crossbar (a star with a non-rank hub), whose two channels per host show
 * the NIC's send and receive occupancy (g + s'G per message) in the
 * statistics.
 *
 * calc ops take the same CPU (the engine's `cpu` hook): a calc starts when
 * the CPU is free, after what was requested before it, and holds it, so a
 * message arriving during a calc is processed after it, as in LogGOPSim.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/pool.h"
#include "machines/machine.h"

#define NIL (-1)

static const char *const keys[] = {"p",    "L",      "o",      "g", "G", "O", "S",
                                   "tick", "reduce", "unsafe", NULL};
static const char *const unsafe_modes[] = {"release", "deadlock", NULL};

typedef struct loggp_params {
    cs_tick_t L, o, g;
    int64_t G_num, G_den; /* ticks per byte as a ratio */
    int64_t O_num, O_den;
    int64_t S;            /* largest eager message, bytes */
    int unsafe_deadlock;  /* 1: a rendezvous never matched stays a deadlock */
} loggp_params_t;

typedef struct lgmsg {
    int32_t src, dst;
    int64_t bytes, gate;
    uint64_t user;
    uint64_t seq;        /* request order, for ties at the CPU */
    cs_tick_t cpu_free;  /* the sender's overhead ends (rendezvous release floor) */
    cs_tick_t tm;        /* when the executor matched it, or -1 */
    int32_t next;        /* send or arrival list */
    int32_t posted;      /* posting order (slots are reused: see lg_post) */
    uint8_t watch, local, rndv, started, processed, released, done, in_list;
    uint8_t release_fired;
} lgmsg_t;

typedef struct lgnode {
    cs_tick_t cpu, gs, gr;
    int32_t send_head, send_tail; /* posted, not started (posting order) */
    int32_t arr_head, arr_tail;   /* arrived, not processed (arrival order) */
    cs_tick_t kick_at;
    int64_t sent, eager, rndv;
} lgnode_t;

typedef struct loggp_net {
    loggp_params_t p;
    const cs_topo_t *topo;
    cs_sim_t *sim;
    cs_net_t *net;
    cs_net_hooks_t hooks;
    int nhosts;
    lgnode_t *nodes;
    int32_t *up, *down; /* channel host -> hub, hub -> host */
    cs_chan_stats_t *stats;
    cs_pool_t msgs;        /* lgmsg_t; slots of finished eager messages are reused */
    int32_t nposted;
    uint64_t seq;
    int64_t active;
    int32_t rndv_scan;     /* messages below this index are all released */
    int64_t forced;        /* rendezvous sends released unmatched (unsafe programs) */
    uint32_t h_kick, h_arrive, h_done, h_release, h_local;
} loggp_net_t;

static lgmsg_t *lg_msg(const loggp_net_t *n, int32_t id)
{
    return (lgmsg_t *)(void *)n->msgs.items + id;
}

typedef struct loggp_machine {
    loggp_params_t p;
    const cs_topo_t *topo;
    int hosts;
} loggp_machine_t;

/* ceil(n * num / den), saturated beyond the clock's maximum (the kernel
 * then stops the run with an error: core/checked.h) */
static cs_tick_t per_byte(int64_t n, int64_t num, int64_t den)
{
    if (n <= 0 || num == 0)
        return 0;
    return cs_tick_muldiv_ceil(n, num, den);
}

static int64_t extra_bytes(const lgmsg_t *m) { return m->bytes > 1 ? m->bytes - 1 : 0; }

static cs_tick_t max2(cs_tick_t a, cs_tick_t b) { return a > b ? a : b; }

static cs_tick_t now_of(const loggp_net_t *n) { return cs_sim_now(n->sim); }

static void kick(loggp_net_t *n, int host, cs_tick_t t)
{
    lgnode_t *h = &n->nodes[host];
    if (h->kick_at >= now_of(n) && h->kick_at <= t)
        return; /* a kick at or before t is already due */
    h->kick_at = t;
    cs_sim_at(n->sim, t, n->h_kick, (uint32_t)host, 0);
}

/* The sender's completion: eager at the end of its overhead, rendezvous
 * once the receiver has matched and processed it too. */
static void maybe_release(loggp_net_t *n, int32_t id)
{
    lgmsg_t *m = lg_msg(n, id);
    if (m->released || !m->started)
        return;
    cs_tick_t t = m->cpu_free;
    if (m->rndv) {
        if (!m->processed || m->tm < 0)
            return;
        t = max2(t, m->tm);
    }
    m->released = 1;
    cs_sim_at(n->sim, max2(t, now_of(n)), n->h_release, (uint32_t)id, 0);
}

static void start_send(loggp_net_t *n, int host, int32_t id)
{
    lgnode_t *h = &n->nodes[host];
    lgmsg_t *m = lg_msg(n, id);
    cs_tick_t now = now_of(n);
    int64_t s1 = extra_bytes(m);
    cs_tick_t nic = cs_tick_add(n->p.g, per_byte(s1, n->p.G_num, n->p.G_den));
    h->cpu = cs_tick_add(cs_tick_add(now, n->p.o), per_byte(s1, n->p.O_num, n->p.O_den));
    h->gs = cs_tick_add(now, nic);
    h->sent++;
    if (m->rndv)
        h->rndv++;
    else
        h->eager++;
    m->started = 1;
    m->cpu_free = h->cpu;
    m->seq = n->seq++;
    /* the injection channel is busy for the NIC's gap */
    cs_chan_stats_t *st = &n->stats[n->up[host]];
    st->bytes += m->bytes;
    st->units++;
    st->busy = cs_tick_add(st->busy, nic);
    if (st->peak_k < 1)
        st->peak_k = 1;
    cs_chanrec_busy(cs_net_recorder(n->net), n->up[host], now, nic, nic, m->bytes, 1);
    if (n->hooks.started)
        n->hooks.started(n->hooks.ctx, m->user, now);
    cs_sim_at(n->sim, cs_tick_add(now, cs_tick_add(n->p.o, n->p.L)), n->h_arrive, (uint32_t)id, 0);
    maybe_release(n, id);
}

static void process_msg(loggp_net_t *n, int host, int32_t id)
{
    lgnode_t *h = &n->nodes[host];
    lgmsg_t *m = lg_msg(n, id);
    cs_tick_t now = now_of(n);
    int64_t s1 = extra_bytes(m);
    cs_tick_t bg = per_byte(s1, n->p.G_num, n->p.G_den);
    cs_tick_t bo = per_byte(s1, n->p.O_num, n->p.O_den);
    cs_tick_t nic = cs_tick_add(n->p.g, bg);
    h->cpu = cs_tick_add(cs_tick_add(now, n->p.o), max2(bo, bg));
    h->gr = cs_tick_add(now, nic);
    m->processed = 1;
    if (m->tm >= 0 && m->tm < now)
        m->tm = now; /* matched before it was processed: the match is now */
    cs_chan_stats_t *st = &n->stats[n->down[host]];
    st->bytes += m->bytes;
    st->units++;
    st->busy = cs_tick_add(st->busy, nic);
    if (st->peak_k < 1)
        st->peak_k = 1;
    cs_chanrec_busy(cs_net_recorder(n->net), n->down[host], now, nic, nic, m->bytes, 1);
    cs_sim_at(n->sim, h->cpu, n->h_done, (uint32_t)id, 0);
    maybe_release(n, id);
}

static void list_remove(loggp_net_t *n, lgnode_t *h, int32_t prev, int32_t id)
{
    if (prev == NIL)
        h->send_head = lg_msg(n, id)->next;
    else
        lg_msg(n, prev)->next = lg_msg(n, id)->next;
    if (h->send_tail == id)
        h->send_tail = prev;
    lg_msg(n, id)->in_list = 0;
}

/* Starts whatever may start on the host now, one CPU claim at a time. */
static void service(loggp_net_t *n, int host)
{
    lgnode_t *h = &n->nodes[host];
    cs_tick_t now = now_of(n);
    for (;;) {
        int32_t send = NIL, prev = NIL;
        for (int32_t id = h->send_head, pv = NIL; id != NIL; pv = id, id = lg_msg(n, id)->next)
            if (lg_msg(n, id)->gate >= lg_msg(n, id)->bytes) {
                send = id;
                prev = pv;
                break;
            }
        int32_t recv = h->arr_head;
        cs_tick_t ts = send != NIL ? max2(h->cpu, h->gs) : INT64_MAX;
        cs_tick_t tr = recv != NIL ? max2(h->cpu, h->gr) : INT64_MAX;
        int can_s = ts <= now, can_r = tr <= now;
        if (can_s && can_r) {
            /* both want the CPU now: the older request first */
            if (lg_msg(n, recv)->seq < lg_msg(n, send)->seq)
                can_s = 0;
            else
                can_r = 0;
        }
        if (can_s) {
            list_remove(n, h, prev, send);
            start_send(n, host, send);
        } else if (can_r) {
            h->arr_head = lg_msg(n, recv)->next;
            if (h->arr_head == NIL)
                h->arr_tail = NIL;
            lg_msg(n, recv)->next = NIL;
            process_msg(n, host, recv);
        } else {
            cs_tick_t t = ts < tr ? ts : tr;
            if (t != INT64_MAX)
                kick(n, host, t);
            return;
        }
    }
}

static void on_kick(void *ctx, const cs_event_t *ev)
{
    loggp_net_t *n = ctx;
    int host = (int)ev->a;
    if (n->nodes[host].kick_at == now_of(n))
        n->nodes[host].kick_at = -1;
    service(n, host);
}

/* The first byte reached the receiver: it queues for the CPU. */
static void on_arrive(void *ctx, const cs_event_t *ev)
{
    loggp_net_t *n = ctx;
    int32_t id = (int32_t)ev->a;
    int dst = lg_msg(n, id)->dst;
    lgnode_t *h = &n->nodes[dst];
    lg_msg(n, id)->next = NIL;
    if (h->arr_tail == NIL)
        h->arr_head = id;
    else
        lg_msg(n, h->arr_tail)->next = id;
    h->arr_tail = id;
    kick(n, dst, now_of(n));
}

/* An eager message between two hosts whose three ends are over (processed
 * and done, its release delivered, matched by the executor) has no event
 * and no reference left: its slot goes to the free list, so the message
 * array follows the messages in flight, not all the program's (issue 17).
 * Local and rendezvous messages keep theirs: a local one may have a second
 * h_local event pending, and lg_idle scans rendezvous ones in slot order. */
static void maybe_free(loggp_net_t *n, int32_t id)
{
    lgmsg_t *m = lg_msg(n, id);
    if (m->local || m->rndv || !m->done || !m->release_fired || m->tm < 0)
        return;
    cs_pool_put(&n->msgs, id);
}

static void finish(loggp_net_t *n, int32_t id)
{
    lgmsg_t *m = lg_msg(n, id);
    m->done = 1;
    n->active--;
    if (n->hooks.completed)
        n->hooks.completed(n->hooks.ctx, m->user, now_of(n));
}

static void on_done(void *ctx, const cs_event_t *ev)
{
    loggp_net_t *n = ctx;
    finish(n, (int32_t)ev->a);
    maybe_free(n, (int32_t)ev->a);
}

static void on_release(void *ctx, const cs_event_t *ev)
{
    loggp_net_t *n = ctx;
    lg_msg(n, ev->a)->release_fired = 1;
    if (n->hooks.released)
        n->hooks.released(n->hooks.ctx, lg_msg(n, ev->a)->user, now_of(n));
    maybe_free(n, (int32_t)ev->a);
}

/* A copy in the host's own memory: no CPU, no NIC, no time. */
static void on_local(void *ctx, const cs_event_t *ev)
{
    loggp_net_t *n = ctx;
    lgmsg_t *m = lg_msg(n, ev->a);
    if (m->done || m->gate < m->bytes)
        return;
    uint64_t user = m->user;
    finish(n, (int32_t)ev->a);
    if (n->hooks.released)
        n->hooks.released(n->hooks.ctx, user, now_of(n));
}

/* ---- the interface ------------------------------------------------------- */

static uint32_t lg_post(void *impl, int src, int ndst, const int *dst, int64_t bytes,
                        int64_t gate_bytes, int watch, const uint64_t *users)
{
    loggp_net_t *n = impl;
    CS_ASSERT(ndst == 1);
    CS_ASSERT(src >= 0 && src < n->nhosts && dst[0] >= 0 && dst[0] < n->nhosts);
    /* rendezvous messages take new slots: lg_idle scans them in slot order */
    int32_t id = src != dst[0] && bytes <= n->p.S ? cs_pool_get(&n->msgs)
                                                  : cs_pool_append(&n->msgs);
    lgmsg_t *m = lg_msg(n, id);
    m->posted = n->nposted++;
    m->src = src;
    m->dst = dst[0];
    m->bytes = bytes;
    m->gate = gate_bytes < bytes ? gate_bytes : bytes;
    m->user = users[0];
    m->watch = (uint8_t)watch;
    m->local = src == dst[0];
    m->rndv = bytes > n->p.S;
    m->tm = -1;
    m->next = NIL;
    m->seq = n->seq++;
    n->active++;
    if (m->local) {
        cs_sim_at(n->sim, now_of(n), n->h_local, (uint32_t)id, 0);
        return (uint32_t)id;
    }
    lgnode_t *h = &n->nodes[src];
    m->in_list = 1;
    if (h->send_tail == NIL)
        h->send_head = id;
    else
        lg_msg(n, h->send_tail)->next = id;
    h->send_tail = id;
    kick(n, src, now_of(n));
    return (uint32_t)id;
}

static void lg_gate(void *impl, uint32_t id, int64_t gate_bytes, int64_t rate)
{
    loggp_net_t *n = impl;
    lgmsg_t *m = lg_msg(n, id);
    (void)rate; /* whole messages only: a send waits for all its bytes */
    if (gate_bytes > m->bytes)
        gate_bytes = m->bytes;
    if (gate_bytes <= m->gate)
        return;
    m->gate = gate_bytes;
    if (m->gate < m->bytes)
        return;
    if (m->local)
        cs_sim_at(n->sim, now_of(n), n->h_local, id, 0);
    else if (m->in_list)
        kick(n, m->src, now_of(n));
}

static void lg_matched(void *impl, uint32_t id, uint64_t user)
{
    loggp_net_t *n = impl;
    lgmsg_t *m = lg_msg(n, id);
    (void)user;
    if (m->tm >= 0)
        return;
    m->tm = now_of(n);
    maybe_release(n, (int32_t)id);
    maybe_free(n, (int32_t)id);
}

/* The executor ran dry: sends held for a recv that is posted only after
 * they complete (an unsafe program, which MPI may deadlock on) complete now,
 * as on the Cell machine, unless unsafe=deadlock.  O(messages) per call. */
static int64_t lg_idle(void *impl)
{
    loggp_net_t *n = impl;
    int64_t started = 0;
    if (n->p.unsafe_deadlock)
        return 0;
    int32_t first = -1;
    for (int32_t i = n->rndv_scan; i < n->msgs.used; i++) {
        lgmsg_t *m = lg_msg(n, i);
        if (!m->rndv || m->released)
            continue;
        if (m->started && m->processed && m->tm < 0) {
            m->tm = now_of(n);
            maybe_release(n, i);
            started++;
        } else if (first < 0) {
            first = i;
        }
    }
    n->rndv_scan = first < 0 ? n->msgs.used : first;
    n->forced += started;
    return started;
}

static int64_t lg_active(const void *impl) { return ((const loggp_net_t *)impl)->active; }

static int lg_explain(const void *impl, cs_error_t *err)
{
    const loggp_net_t *n = impl;
    int32_t waiting = 0, ex = -1;
    /* the example is the first posted (free slots are done) */
    for (int32_t i = 0; i < n->msgs.used; i++)
        if (!lg_msg(n, i)->done) {
            waiting++;
            if (ex < 0 || lg_msg(n, i)->posted < lg_msg(n, ex)->posted)
                ex = i;
        }
    if (ex < 0)
        return cs_error_set(err, CS_ERR_DEADLOCK, "loggp: no message is stuck");
    const lgmsg_t *m = lg_msg(n, ex);
    if (m->started)
        return cs_error_set(err, CS_ERR_DEADLOCK,
                            "loggp: %d message(s) never received, e.g. host %d -> %d (%lld "
                            "bytes): sent, never processed",
                            waiting, m->src, m->dst, (long long)m->bytes);
    return cs_error_set(err, CS_ERR_DEADLOCK,
                        "loggp: %d message(s) never received, e.g. host %d -> %d (%lld bytes): "
                        "never started, %lld bytes of its data available",
                        waiting, m->src, m->dst, (long long)m->bytes, (long long)m->gate);
}

static const cs_chan_stats_t *lg_chan_stats(const void *impl, int chan)
{
    return &((const loggp_net_t *)impl)->stats[chan];
}

static void lg_free(void *impl)
{
    loggp_net_t *n = impl;
    if (!n)
        return;
    free(n->nodes);
    free(n->up);
    free(n->down);
    free(n->stats);
    cs_pool_free(&n->msgs);
    free(n);
}

/* A calc of the executor takes the host's CPU like an overhead (LogGOPSim
 * runs local operations on the CPU that charges o). */
static cs_tick_t lg_cpu(void *impl, int host, cs_tick_t now, cs_tick_t ticks)
{
    loggp_net_t *n = impl;
    lgnode_t *h = &n->nodes[host];
    /* what was requested before the calc (a send posted at this tick) goes
     * first, as LogGOPSim starts sends before local operations */
    service(n, host);
    h->cpu = cs_tick_add(max2(now, h->cpu), ticks);
    return h->cpu;
}

static const cs_net_ops_t loggp_ops = {
    .name = "loggp",
    .post = lg_post,
    .gate = lg_gate,
    .matched = lg_matched,
    .active = lg_active,
    .explain_stuck = lg_explain,
    .chan_stats = lg_chan_stats,
    .free = lg_free,
    .late_release = 1,
    .idle = lg_idle,
    .cpu = lg_cpu,
};

static int net_new(const void *ctx, cs_sim_t *sim, const cs_net_hooks_t *hooks, cs_net_t **out,
                   cs_error_t *err)
{
    const loggp_machine_t *lm = ctx;
    (void)err;
    loggp_net_t *n = cs_calloc(1, sizeof *n);
    n->p = lm->p;
    n->topo = lm->topo;
    n->sim = sim;
    cs_pool_init(&n->msgs, sizeof(lgmsg_t));
    if (hooks)
        n->hooks = *hooks;
    n->nhosts = lm->hosts;
    n->nodes = cs_malloc((size_t)n->nhosts * sizeof *n->nodes);
    n->up = cs_malloc((size_t)n->nhosts * sizeof *n->up);
    n->down = cs_malloc((size_t)n->nhosts * sizeof *n->down);
    for (int i = 0; i < n->nhosts; i++) {
        n->nodes[i] = (lgnode_t){0, 0, 0, NIL, NIL, NIL, NIL, -1, 0, 0, 0};
        n->up[i] = cs_topo_find_channel(lm->topo, i, lm->hosts);
        n->down[i] = cs_topo_find_channel(lm->topo, lm->hosts, i);
        CS_ASSERT(n->up[i] >= 0 && n->down[i] >= 0);
    }
    n->stats = cs_calloc((size_t)cs_topo_channels(lm->topo) + 1, sizeof *n->stats);
    n->h_kick = cs_sim_register(sim, on_kick, n);
    n->h_arrive = cs_sim_register(sim, on_arrive, n);
    n->h_done = cs_sim_register(sim, on_done, n);
    n->h_release = cs_sim_register(sim, on_release, n);
    n->h_local = cs_sim_register(sim, on_local, n);
    *out = n->net = cs_net_new_engine(&loggp_ops, n, lm->topo);
    return CS_OK;
}

/* ---- the machine ----------------------------------------------------------- */

/* Star routes: host -> hub -> host (the hub is node `hosts`). */
static int star_route(const cs_topo_t *t, void *ctx, int src, int dst, cs_hop_t *hops, int max)
{
    int hub = *(const int *)ctx, k = 0;
    if (src != hub) {
        if (k >= max)
            return -1;
        hops[k++] = (cs_hop_t){cs_topo_find_channel(t, src, hub), 0};
    }
    if (dst != hub) {
        if (k >= max)
            return -1;
        hops[k++] = (cs_hop_t){cs_topo_find_channel(t, hub, dst), 0};
    }
    return k;
}

/* A key's duration: a bare number is in nanoseconds (LogGOPSim's unit). */
static int get_ns(cs_spec_t *spec, const char *key, double dflt_ns, double *out, cs_error_t *err)
{
    const char *v = cs_spec_get(spec, key);
    int rc;
    if (!v) {
        *out = dflt_ns * 1e-9;
        return CS_OK;
    }
    if ((rc = cs_units_parse_seconds(v, 1e-9, out, err))) {
        cs_error_prefix(err, "key '%s'", key);
        return rc;
    }
    if (*out < 0)
        return cs_error_set(err, CS_ERR_RANGE, "key '%s': must be >= 0, got %s", key, v);
    return CS_OK;
}

static void fmt_ns(double s, char *buf, size_t len) { snprintf(buf, len, "%.12gns", s * 1e9); }

static void loggp_report(const cs_machine_t *m, const cs_net_t *net, FILE *f)
{
    const loggp_net_t *n = cs_net_impl_of(net, &loggp_ops);
    (void)m;
    if (!n)
        return;
    int64_t eager = 0, rndv = 0;
    for (int i = 0; i < n->nhosts; i++) {
        eager += n->nodes[i].eager;
        rndv += n->nodes[i].rndv;
    }
    fprintf(f, "protocol  %lld eager, %lld rendezvous (S = %lld bytes)\n", (long long)eager,
            (long long)rndv, (long long)n->p.S);
    if (n->forced)
        fprintf(f, "unsafe    %lld rendezvous send(s) completed unmatched: their recv was posted "
                "only after them (MPI may deadlock here; unsafe=deadlock reports it)\n",
                (long long)n->forced);
}

static void destroy_impl(void *impl) { free(impl); }

/* --predict: LogGP closed forms (the LogGOPSim paper's §2 costs, composed
 * as in docs/loggp.md), eager messages only (s <= S).  With s' = s - 1:
 * one message takes T1 = 2o + L + s' max(O, G) from the send's start to its
 * receipt, and a host starts its next send d = max(o + s'O, g + s'G) after
 * the last.
 *   broadcast/binomial  k = ceil(log2 P) levels, each child served after
 *                       its parent received: T1 + (k - 1) max(T1, d); exact
 *                       when P is a power of two (the deepest chain then
 *                       uses every parent's first send);
 *   barrier/dissemination  k rounds of 1-byte tokens, each round's send
 *                       waiting for the last round's token and the gap g:
 *                       (2o + L) + (k - 1) max(2o + L, g). */
static int predict(const cs_machine_t *m, const cs_model_request_t *req, cs_model_t *out,
                   cs_error_t *err)
{
    const loggp_params_t *p = &((const loggp_machine_t *)m->impl)->p;
    double o = (double)p->o, L = (double)p->L, g = (double)p->g;
    double G = (double)p->G_num / (double)p->G_den, O = (double)p->O_num / (double)p->O_den;
    int k = cs_coll_ceil_log2(req->P);
    out->show_seconds = 1;
    if (req->kind == CS_COLL_BROADCAST && !strcmp(req->algo, "binomial")) {
        if (req->bytes > p->S)
            return cs_error_set(err, CS_ERR_RANGE,
                                "the LogGP closed form is for eager messages (s <= S = %lld "
                                "bytes), not %lld bytes",
                                (long long)p->S, (long long)req->bytes);
        double s1 = req->bytes > 1 ? (double)(req->bytes - 1) : 0.0;
        double T1 = 2 * o + L + s1 * (O > G ? O : G);
        double d = o + s1 * O > g + s1 * G ? o + s1 * O : g + s1 * G;
        cs_model_set(out, k ? T1 + (k - 1) * (T1 > d ? T1 : d) : 0.0,
                     T1 >= d ? "LogGP: ceil(log2 P)(2o + L + (s-1)max(O,G))"
                             : "LogGP: 2o + L + (s-1)max(O,G) + (ceil(log2 P)-1)(g + (s-1)G)");
        return CS_OK;
    }
    if (req->kind == CS_COLL_BARRIER && !strcmp(req->algo, "dissemination")) {
        double R = 2 * o + L;
        cs_model_set(out, k ? R + (k - 1) * (R > g ? R : g) : 0.0,
                     R >= g ? "LogGP: ceil(log2 P)(2o + L)"
                            : "LogGP: 2o + L + (ceil(log2 P)-1) g");
        return CS_OK;
    }
    return cs_error_set(err, CS_ERR_RANGE,
                        "LogGP closed forms here: broadcast/binomial and barrier/dissemination, "
                        "not %s/%s",
                        cs_coll_name(req->kind), req->algo);
}

static int create(cs_spec_t *spec, cs_machine_t *m, cs_error_t *err)
{
    int64_t p, S;
    int unsafe;
    double L, o, g, G, O, tick, reduce;
    int rc;
    char text[512], bL[40], bo[40], bg[40], bG[40], bO[40], bt[40], br[40];

    if ((rc = cs_spec_get_int(spec, "p", 8, 1, CS_TOPO_MAX_NODES - 1, &p, err)) ||
        (rc = get_ns(spec, "L", 2500, &L, err)) || (rc = get_ns(spec, "o", 1500, &o, err)) ||
        (rc = get_ns(spec, "g", 1000, &g, err)) || (rc = get_ns(spec, "G", 6, &G, err)) ||
        (rc = get_ns(spec, "O", 0, &O, err)) ||
        (rc = cs_spec_get_bytes(spec, "S", 65535, &S, err)) ||
        (rc = get_ns(spec, "tick", 1, &tick, err)) ||
        (rc = get_ns(spec, "reduce", 0, &reduce, err)) ||
        (rc = cs_spec_get_choice(spec, "unsafe", unsafe_modes, 0, &unsafe, err)))
        return rc;
    if (!(tick > 0))
        return cs_error_set(err, CS_ERR_RANGE, "key 'tick': must be > 0");
    if ((rc = cs_spec_check_nodes(spec, p + 1, err))) /* the hosts and the hub */
        return rc;

    loggp_machine_t *lm = cs_calloc(1, sizeof *lm);
    m->impl = lm;
    if ((rc = cs_spec_ticks("L", L, tick, 1e17, &lm->p.L, err)) ||
        (rc = cs_spec_ticks("o", o, tick, 1e17, &lm->p.o, err)) ||
        (rc = cs_spec_ticks("g", g, tick, 1e17, &lm->p.g, err)) ||
        (rc = cs_spec_tick_ratio("G", G, tick, &lm->p.G_num, &lm->p.G_den, err)) ||
        (rc = cs_spec_tick_ratio("O", O, tick, &lm->p.O_num, &lm->p.O_den, err)) ||
        (rc = cs_spec_tick_ratio("reduce", reduce, tick, &m->reduce_num, &m->reduce_den, err)))
        return rc;
    lm->p.S = S;
    lm->p.unsafe_deadlock = unsafe;
    lm->hosts = (int)p;

    /* hosts 0..p-1 on one crossbar, the hub is node p */
    cs_topo_t *t = cs_topo_new_custom((int)p + 1, "loggp crossbar");
    for (int i = 0; i < p; i++)
        cs_topo_add_link(t, i, (int)p);
    m->topo = t;
    lm->topo = t;
    cs_topo_set_route(t, star_route, &lm->hosts);
    m->rank_nodes = (int)p;
    m->tick_seconds = tick;
    m->net.unit_bytes = S > 0 ? S : 1; /* the natural segment: the largest eager message */
    m->net.send_ports = 1;
    m->net.recv_ports = 1;

    fmt_ns(L, bL, sizeof bL);
    fmt_ns(o, bo, sizeof bo);
    fmt_ns(g, bg, sizeof bg);
    fmt_ns(G, bG, sizeof bG);
    fmt_ns(O, bO, sizeof bO);
    fmt_ns(tick, bt, sizeof bt);
    fmt_ns(reduce, br, sizeof br);
    snprintf(text, sizeof text,
             "loggp:p=%lld,L=%s,o=%s,g=%s,G=%s,O=%s,S=%lld,tick=%s,reduce=%s,unsafe=%s",
             (long long)p, bL, bo, bg, bG, bO, (long long)S, bt, br, unsafe_modes[unsafe]);
    m->spec = cs_strdup(text);
    return CS_OK;
}

const cs_machine_type_t cs_machine_loggp = {
    .name = "loggp",
    .summary = "LogGOPSim's LogGOPS model: latency L, overheads o + (s-1)O, gaps g + (s-1)G, "
               "rendezvous above S bytes; no topology",
    .usage = "loggp:p=N[,L=2500][,o=1500][,g=1000][,G=6][,O=0][,S=65535][,tick=1ns][,reduce=0]"
             "[,unsafe=release|deadlock] (times in ns unless a unit is given; G, O, reduce per byte)",
    .keys = keys,
    .example = "loggp:p=64",
    .create = create,
    .destroy = destroy_impl,
    .net_new = net_new,
    .report = loggp_report,
    .layout = NULL, /* a crossbar: the graph layout draws it as a star */
    .predict = predict,
    .rank_noun = {"host", "hosts"},
    .other_noun = {"switch", "switches"},
};
