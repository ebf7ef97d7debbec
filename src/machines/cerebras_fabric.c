/*
 * cerebras_fabric.c - the Cerebras wavelet engine (model in
 * cerebras_fabric.h and docs/cerebras.md).
 *
 * Representation.  A stream (one message, unicast or multicast) is a tree
 * of *stages*: its injection at the source processor (INJ), one stage per
 * router on its route (ROUTER) and one per destination processor (SINK).
 * Wavelets leave a stage in order; for each stage the engine keeps
 *
 *   A    wavelets departed before cycle `ref`,   r  departure rate (0 or 1),
 *   Arr  wavelets arrived before cycle `ref`,    a  arrival rate (0 or 1),
 *
 * and both counts grow linearly between events (the stage stores Arr as the
 * FIFO fill Arr - A, see stage_t: every stream of a full-wafer run is posted
 * at once, so the stage is the engine's memory).  A stage's arrivals are its
 * parent's departures `lat` cycles later (1 per link, 1 + T_R from the
 * processor to its router since the send op takes a cycle, T_R down the
 * offramp), so a rate change at a parent is an arrival-rate event at each
 * child `lat` cycles later.
 *
 * A stage departs at cycle t (r = 1) iff
 *   - a wavelet is there: Arr + a - A >= 1 (a wavelet arriving at t may
 *     leave at t: cut-through), or for INJ the gate allows one more;
 *   - every child has room: A - A_child < cap_child, where A_child counts
 *     the child's departures before t (credits come back a cycle later) and
 *     cap = lat + buf: the wire holds lat wavelets, the child's FIFO buf.
 *     A full-rate stream keeps exactly lat in flight, so any buf >= 1 passes
 *     one wavelet per cycle; buf is what a stalled stream keeps per hop;
 *   - (ROUTER) it holds its color at that router (see the header);
 *   - it holds every output it uses (INJ: the PE's onramp; SINK: none, the
 *     processor always takes what its offramp brings).
 * Whatever can change one of these schedules a re-evaluation: an arrival
 * event, a child's rate change (next cycle), a released output or color,
 * a raised gate, or a timer at the cycle where, at the current rates, the
 * supply runs out, the child's FIFO fills, or the last wavelet leaves.
 * A decision at cycle t depends only on what happened before t, except
 * for outputs and colors that another stage gives up at t; a stage may be
 * evaluated several times in a cycle, and counts refer to the start of the
 * cycle, so a revised decision is safe.  A parent that changes its mind
 * within a cycle sends its children only its last word (arr_t, arr_seq).
 */
#include "machines/cerebras_fabric.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ST_INJ, ST_ROUTER, ST_SINK };
enum { D_N, D_E, D_S, D_W, D_RAMP, D_ONRAMP, NPORTS };
static const char *const dir_name[] = {"north", "east", "south", "west", "ramp", "onramp"};

#define NIL (-1)
#define TIMER ((uint64_t)1 << 32) /* marks timer events (the low bits hold the generation) */
#define UNCOND ((uint64_t)1 << 33) /* an evaluation that no generation cancels */

/* A full-wafer run holds millions of stages at once (every stream is posted
 * up front: 4.2 M for the two-phase reduce), so the layout is packed into
 * one cache line: the FIFO fill Arr - A instead of Arr (it never exceeds
 * the stage's capacity), the capacity derived from the latency (cap_of),
 * one field that is the wait-list link of an INJ or ROUTER while it waits,
 * the start of a ROUTER's flow while it flows (a flowing stage waits for
 * nothing: it holds its color and outputs) and the user of a SINK (a sink
 * never waits), flags as bits.  The flow's start is kept as the low 32
 * bits of the count it began at (a flowing stage departs one wavelet per
 * cycle, so it began A - A0 cycles ago; evaluate books a flow in pieces of
 * at most 2^31 cycles so that the difference stays exact); the cycles of
 * the pending timer and of the latest arrival event are kept as their low
 * 32 bits, which is exact because both lie within 2^31 cycles of now
 * whenever they are compared (timers are never set further ahead than
 * FAB_MAX_AHEAD, arrivals at most lat ahead). */
typedef struct stage {
    cs_tick_t ref;         /* the counts below are at cycle ref */
    int64_t A;             /* wavelets departed before ref */
    int32_t fill;          /* Arr - A at `ref` (ROUTER, SINK; Arr: arrivals before ref) */
    int32_t stream;
    int32_t parent, first_child, next_sibling;
    int32_t pe;            /* router / processor */
    union {
        int32_t wait_next; /* INJ, ROUTER: link in a port's or color's wait list */
        int32_t user;      /* SINK: index of its user in fabric.users */
        uint32_t A0;       /* ROUTER, flowing: low bits of A when the flow began */
    };
    uint32_t gen;          /* changes with every rate, arrival rate or gate change */
    uint32_t timer;        /* the pending timer's cycle (low bits; valid if timer_ok) */
    uint32_t arr_t;        /* cycle of the latest scheduled arrival-rate event (low bits) */
    uint16_t arr_seq;      /* ... and its number among those of that cycle */
    uint16_t lat;
    uint32_t kind : 2, outs : 5, in_dir : 3, r : 1, a : 1;
    uint32_t holds_ports : 1, holds_color : 1, present : 1, waiting : 1, done : 1, local : 1;
    uint32_t timer_ok : 1; /* the timer was set at the current gen */
} stage_t;

_Static_assert(sizeof(stage_t) == 64, "stage_t grew past a cache line: a full wafer holds millions");

/* The furthest ahead a timer is set (a later condition is looked at
 * again then, from where it is set anew), and the longest piece of a flow
 * booked at once: a flowing stage is evaluated at least every
 * FAB_MAX_AHEAD cycles, so a flow's age never passes 2^31 and A - A0 is
 * exact in 32 bits. */
#define FAB_MAX_AHEAD ((cs_tick_t)1 << 30)
#define FAB_FLOW_PIECE ((uint32_t)1 << 30)

/* The most ramp latency the packed stage holds (lat is 16 bits). */
#define FAB_MAX_TR (UINT16_MAX - 1)

typedef struct stream {
    int64_t bytes, W;
    int64_t g_bytes, g_rate; /* gate: g_bytes at g_ref, + g_rate bytes per cycle */
    cs_tick_t g_ref;
    int32_t src, first_stage, cls;
    int32_t sinks_left;
    int32_t first_user;      /* users of the sinks: users[first_user + i] */
    uint8_t watch;
} stream_t;

/* A wait list is circular through the stages' wait_next and named by its
 * tail (the head is the tail's next): 4 bytes less per port and color,
 * 6 ports on each of 850,000 PEs. */
typedef struct port {
    int32_t holder, wait_tail, wanting;
} port_t;

/* A color live at a router.  Entries come from one pool for the whole
 * wafer (a router rarely has more than a few at once, and most routers
 * have one at some time: a small array per router would cost a heap block
 * each); a router's entries are a list through `next`. */
typedef struct color {
    int32_t cls, holder, wait_tail, refs;
    int32_t configs;  /* router configurations this color has gone through */
    int32_t next;     /* the router's next entry, or the pool's next free one */
    int8_t last_dir;  /* input accepted by the last one, -1 before the first */
} color_t;

typedef struct rcolors {
    int32_t head, n;  /* first entry in fabric.cpool (or NIL), count */
} rcolors_t;

typedef struct fabric {
    cs_fabric_params_t p;
    const cs_topo_t *topo;
    cs_sim_t *sim;
    cs_net_t *net; /* the wrapper (its recorder takes the time buckets) */
    cs_net_hooks_t hooks;
    int npe;
    stage_t *st;            /* in st_mem, aligned to a cache line (grow_stages) */
    char *st_mem;
    int64_t nst, cap_st;
    stream_t *sm;
    int32_t nsm, cap_sm;
    uint64_t *users;
    int64_t nusers, cap_users;
    port_t *ports;          /* npe * NPORTS */
    rcolors_t *colors;      /* per router */
    color_t *cpool;         /* color entries (see color_t) */
    int32_t ncpool, cap_cpool, cfree;
    int32_t *chan;          /* npe * 4: topo channel of each link output, or -1 */
    /* Per topo channel: the statistics a channel of this engine has are
     * its busy cycles (a wavelet of 4 bytes a busy cycle: bytes and units
     * follow) and its peak k, 12 bytes instead of a cs_chan_stats_t's 40
     * (3.4 M channels on the full wafer: 41 instead of 136 MB); the whole
     * records are made when first asked for (fab_chan_stats), after the
     * run, and kept up to date from then on. */
    int64_t *busy;
    int32_t *peak;
    cs_chan_stats_t *stats; /* NULL until asked for */
    int nchan;
    int32_t *scratch;       /* per PE: stage of the stream being built, or NIL */
    int64_t active;
    int32_t next_cls;
    int colors_peak, colors_peak_pe;
    int configs_peak, configs_peak_pe;
    cs_tick_t colors_peak_t;
    uint32_t h_eval, h_arr;
    int err_code;
    cs_error_t err;
} fabric_t;

/* ---- small helpers ------------------------------------------------------ */

static void fab_fail(fabric_t *f, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fab_fail(fabric_t *f, int code, const char *fmt, ...)
{
    va_list ap;
    if (f->err_code)
        return;
    f->err_code = code;
    va_start(ap, fmt);
    cs_error_vset(&f->err, code, fmt, ap);
    va_end(ap);
    cs_sim_stop(f->sim);
}

static void pe_name(const fabric_t *f, int pe, char *buf, size_t len)
{
    snprintf(buf, len, "PE (%d,%d)", pe / f->p.cols, pe % f->p.cols);
}

static cs_tick_t now_of(const fabric_t *f) { return cs_sim_now(f->sim); }

/* Wavelets a stage may have departed beyond its child: the lat on the wire
 * plus the child's FIFO of buf (a local copy is not limited). */
static int64_t cap_of(const fabric_t *f, const stage_t *s)
{
    return s->local ? (int64_t)1 << 30 : (int64_t)s->lat + f->p.buf;
}

/* Something that evaluate reads changed: pending evaluations and the
 * timer are stale. */
static void bump_gen(stage_t *s)
{
    s->gen++;
    s->timer_ok = 0;
}

static void eval_soon(fabric_t *f, int32_t s)
{
    cs_sim_at(f->sim, now_of(f), f->h_eval, (uint32_t)s, f->st[s].gen);
}

/* Counts brought to now. */
static void bring(fabric_t *f, stage_t *s)
{
    cs_tick_t now = now_of(f), dt = now - s->ref;
    if (dt > 0) {
        int64_t fill = s->fill + (int64_t)(s->a - s->r) * dt;
        s->A += s->r * dt;
        if (s->kind != ST_INJ) { /* an INJ has no arrivals (its gate says what it has) */
            CS_ASSERT(fill >= INT32_MIN && fill <= INT32_MAX);
            s->fill = (int32_t)fill;
        }
        s->ref = now;
    }
}

static int64_t departed_now(const fabric_t *f, const stage_t *s)
{
    return s->A + s->r * (now_of(f) - s->ref);
}

/* INJ: wavelets the gate allows at cycle t. */
static int64_t gate_avail(const stream_t *m, cs_tick_t t)
{
    __int128 b = (__int128)m->g_bytes + (__int128)m->g_rate * (t > m->g_ref ? t - m->g_ref : 0);
    if (b >= m->bytes)
        return m->W;
    return (int64_t)(b / 4);
}

static void evaluate(fabric_t *f, int32_t id);

/* A holder whose last wavelet has left by now gives up what it holds now,
 * before anyone asks for it in this cycle (otherwise the next stream would
 * wait a cycle for an event order, not for the machine). */
static void settle(fabric_t *f, int32_t holder)
{
    const stage_t *h = &f->st[holder];
    if (!h->done && departed_now(f, h) >= f->sm[h->stream].W)
        evaluate(f, holder);
}

/* ---- ports ---------------------------------------------------------------- */

static port_t *port_of(fabric_t *f, int pe, int d) { return &f->ports[(int64_t)pe * NPORTS + d]; }

static uint8_t stage_ports(const stage_t *s)
{
    if (s->kind == ST_INJ)
        return s->local ? 0 : (uint8_t)(1 << D_ONRAMP);
    return s->kind == ST_ROUTER ? s->outs : 0;
}

static void wait_on(fabric_t *f, int32_t *tail, int32_t id)
{
    stage_t *s = &f->st[id];
    if (s->waiting)
        return;
    s->waiting = 1;
    if (*tail == NIL) {
        s->wait_next = id;
    } else {
        s->wait_next = f->st[*tail].wait_next;
        f->st[*tail].wait_next = id;
    }
    *tail = id;
}

/* Wakes every waiter of a list (they re-evaluate now, in waiting order; the
 * first that can use the resource takes it, the others wait again). */
static void wake_all(fabric_t *f, int32_t *tail)
{
    int32_t last = *tail;
    if (last == NIL)
        return;
    *tail = NIL;
    for (int32_t w = f->st[last].wait_next, nx;; w = nx) {
        nx = f->st[w].wait_next;
        f->st[w].waiting = 0;
        f->st[w].wait_next = NIL;
        eval_soon(f, w);
        if (w == last)
            break;
    }
}

/* The statistics of a flow that stops now (its counts brought to now). */
/* Channel c's whole record from the compact one (the fabric never
 * stalls a wavelet on a link: it waits in its FIFO before the link). */
static void stats_fill(fabric_t *f, int32_t c)
{
    f->stats[c] = (cs_chan_stats_t){.bytes = 4 * f->busy[c], .units = f->busy[c],
                                     .busy = f->busy[c], .peak_k = f->peak[c]};
}

static void account_flow(fabric_t *f, stage_t *s)
{
    cs_tick_t dur = (uint32_t)((uint32_t)s->A - s->A0), since = now_of(f) - dur;
    if (s->kind != ST_ROUTER || dur <= 0)
        return;
    for (int d = 0; d < 4; d++)
        if (s->outs & (1 << d)) {
            int32_t c = f->chan[(int64_t)s->pe * 4 + d];
            if (c >= 0) {
                f->busy[c] += dur;
                if (f->stats)
                    stats_fill(f, c);
                cs_chanrec_busy(cs_net_recorder(f->net), c, since, dur, dur, 4 * dur, dur);
            }
        }
}

static void release_ports(fabric_t *f, int32_t id)
{
    stage_t *s = &f->st[id];
    uint8_t m = stage_ports(s);
    if (!s->holds_ports)
        return;
    s->holds_ports = 0;
    for (int d = 0; d < NPORTS; d++)
        if (m & (1 << d)) {
            port_t *p = port_of(f, s->pe, d);
            CS_ASSERT(p->holder == id);
            p->holder = NIL;
            p->wanting = 0;
            wake_all(f, &p->wait_tail);
        }
}

static int take_ports(fabric_t *f, int32_t id)
{
    stage_t *s = &f->st[id];
    uint8_t m = stage_ports(s);
    if (s->holds_ports || !m)
        return 1;
    for (int d = 0; d < NPORTS; d++)
        if (m & (1 << d)) {
            port_t *p = port_of(f, s->pe, d);
            if (p->holder != NIL && p->holder != id)
                settle(f, p->holder);
            if (p->holder != NIL) {
                if (!s->waiting) {
                    p->wanting++;
                    if (d < 4 && f->chan[(int64_t)s->pe * 4 + d] >= 0) {
                        int32_t c = f->chan[(int64_t)s->pe * 4 + d];
                        if (f->peak[c] < 1 + p->wanting)
                            f->peak[c] = 1 + p->wanting;
                        if (f->stats)
                            stats_fill(f, c);
                        cs_chanrec_peak(cs_net_recorder(f->net), f->chan[(int64_t)s->pe * 4 + d],
                                        now_of(f), 1 + p->wanting);
                    }
                }
                wait_on(f, &p->wait_tail, id);
                return 0;
            }
        }
    for (int d = 0; d < NPORTS; d++)
        if (m & (1 << d)) {
            port_of(f, s->pe, d)->holder = id;
            int32_t c = d < 4 ? f->chan[(int64_t)s->pe * 4 + d] : -1;
            if (c >= 0 && !f->peak[c]) {
                f->peak[c] = 1;
                if (f->stats)
                    stats_fill(f, c);
            }
        }
    s->holds_ports = 1;
    return 1;
}

/* ---- colors --------------------------------------------------------------- */

/* The entry of color class `cls` at router pe, created if `create` (NULL
 * if absent otherwise).  Creating may move every entry: a pointer from
 * before is stale then. */
static color_t *color_of(fabric_t *f, int pe, int32_t cls, int create)
{
    rcolors_t *rc = &f->colors[pe];
    for (int32_t i = rc->head; i != NIL; i = f->cpool[i].next)
        if (f->cpool[i].cls == cls)
            return &f->cpool[i];
    if (!create)
        return NULL;
    int32_t id = f->cfree;
    if (id != NIL) {
        f->cfree = f->cpool[id].next;
    } else {
        CS_ASSERT(f->ncpool < INT32_MAX);
        f->cpool = cs_grow(f->cpool, f->ncpool, &f->cap_cpool, 1024, sizeof *f->cpool);
        id = f->ncpool++;
    }
    color_t *c = &f->cpool[id];
    *c = (color_t){cls, NIL, NIL, 0, 0, rc->head, -1};
    rc->head = id;
    rc->n++;
    if (rc->n > f->colors_peak) {
        f->colors_peak = rc->n;
        f->colors_peak_pe = pe;
        f->colors_peak_t = now_of(f);
    }
    if (f->p.colors > 0 && rc->n > f->p.colors) {
        char where[64];
        pe_name(f, pe, where, sizeof where);
        fab_fail(f, CS_ERR_RUNTIME,
                 "cerebras: the router of %s needs %d colors at cycle %lld, more than colors=%d "
                 "(every PE receives on its own color and every multicast has one; colors=0 lifts "
                 "the limit)",
                 where, rc->n, (long long)now_of(f), f->p.colors);
    }
    return c;
}

static void color_drop(fabric_t *f, int pe, int32_t cls)
{
    rcolors_t *rc = &f->colors[pe];
    for (int32_t *link = &rc->head; *link != NIL; link = &f->cpool[*link].next) {
        int32_t i = *link;
        color_t *c = &f->cpool[i];
        if (c->cls != cls)
            continue;
        if (--c->refs == 0) {
            CS_ASSERT(c->holder == NIL && c->wait_tail == NIL);
            *link = c->next;
            rc->n--;
            c->next = f->cfree;
            f->cfree = i;
        }
        return;
    }
    CS_ASSERT(!"color entry missing");
}

/* ---- evaluation ------------------------------------------------------------ */

static void set_rate(fabric_t *f, int32_t id, uint8_t r);

static void finish_stage(fabric_t *f, int32_t id)
{
    stage_t *s = &f->st[id];
    int32_t cls = f->sm[s->stream].cls;
    s->done = 1;
    if (s->kind == ST_ROUTER) {
        color_t *c = color_of(f, s->pe, cls, 0);
        CS_ASSERT(c && c->holder == id);
        c->holder = NIL;
        wake_all(f, &c->wait_tail);
        s->holds_color = 0;
        color_drop(f, s->pe, cls);
    }
}

static void report(fabric_t *f, int32_t id)
{
    stage_t *s = &f->st[id];
    stream_t *m = &f->sm[s->stream];
    int64_t avail = s->A + s->r; /* arrived up to and including this cycle */
    int64_t bytes = avail >= m->W ? m->bytes : 4 * avail;
    if (bytes > m->bytes)
        bytes = m->bytes;
    if (m->watch && f->hooks.progress)
        f->hooks.progress(f->hooks.ctx, f->users[s->user], bytes,
                          bytes < m->bytes ? 4 * (int64_t)s->r : 0, now_of(f));
}

static void evaluate(fabric_t *f, int32_t id)
{
    stage_t *s = &f->st[id];
    stream_t *m = &f->sm[s->stream];
    cs_tick_t now = now_of(f);
    int64_t supply;
    uint8_t r = 0;

    if (s->done || f->err_code)
        return;
    bring(f, s);
    if (s->A >= m->W) {
        /* the last wavelet has left */
        if (s->r)
            set_rate(f, id, 0);
        s = &f->st[id];
        finish_stage(f, id);
        if (s->kind == ST_SINK) {
            stream_t *mm = &f->sm[s->stream];
            uint64_t user = f->users[s->user];
            if (--mm->sinks_left == 0)
                f->active--;
            if (f->hooks.completed)
                f->hooks.completed(f->hooks.ctx, user, now);
        }
        return;
    }
    supply = s->kind == ST_INJ ? gate_avail(m, now) - s->A : s->fill + s->a;
    if (supply >= 1 && s->kind == ST_ROUTER && !s->present) {
        s->present = 1;
        color_t *c = color_of(f, s->pe, m->cls, 1);
        c->refs++;
        if (f->err_code)
            return;
    }
    if (supply >= 1) {
        int room = 1;
        for (int32_t c = s->first_child; c >= 0; c = f->st[c].next_sibling) {
            const stage_t *ch = &f->st[c];
            if (s->A - departed_now(f, ch) >= cap_of(f, ch)) {
                room = 0;
                break;
            }
        }
        int color_ok = 1;
        if (room && s->kind == ST_ROUTER && !s->holds_color) {
            color_t *c = color_of(f, s->pe, m->cls, 0);
            if (c->holder != NIL) {
                settle(f, c->holder);
                c = color_of(f, s->pe, m->cls, 0); /* entries may have moved */
            }
            if (c->holder == NIL) {
                c->holder = id;
                s->holds_color = 1;
                if (c->last_dir != (int8_t)s->in_dir) {
                    /* a new configuration: accept another input (the
                     * switch advance of the thesis) */
                    c->last_dir = (int8_t)s->in_dir;
                    if (++c->configs > f->configs_peak) {
                        f->configs_peak = c->configs;
                        f->configs_peak_pe = s->pe;
                    }
                }
            } else {
                color_ok = 0;
                wait_on(f, &c->wait_tail, id);
            }
        }
        if (room && color_ok && take_ports(f, id))
            r = 1;
    }
    if (r != s->r)
        set_rate(f, id, r);
    s = &f->st[id];
    if (s->r && s->kind == ST_ROUTER && (uint32_t)((uint32_t)s->A - s->A0) >= FAB_FLOW_PIECE) {
        /* a long flow is booked in pieces (A0 keeps 32 bits; the statistics
         * and the time buckets add up to the same) */
        account_flow(f, s);
        s->A0 = (uint32_t)s->A;
    }
    /* timer: the next cycle at which, at the current rates, a condition
     * changes by itself */
    cs_tick_t next = -1;
    if (s->r) {
        int64_t t = m->W - s->A; /* the last wavelet has left */
        if (s->kind == ST_INJ) {
            if (m->g_rate == 0) {
                if (supply < t)
                    t = supply; /* the gate is used up */
            } else if (m->g_rate < 4) {
                t = 1; /* a gate slower than the ramp: look every cycle */
            }
        } else if (!s->a && s->fill < t) {
            t = s->fill; /* nothing more arrives: the FIFO empties */
        }
        for (int32_t c = s->first_child; c >= 0; c = f->st[c].next_sibling) {
            const stage_t *ch = &f->st[c];
            if (!ch->r && cap_of(f, ch) - (s->A - departed_now(f, ch)) < t)
                t = cap_of(f, ch) - (s->A - departed_now(f, ch)); /* the child fills up */
        }
        next = now + (t < 1 ? 1 : t);
    } else if (s->kind == ST_INJ && m->g_rate > 0 && supply < 1) {
        /* the gate is rising: the next wavelet becomes available */
        int64_t need = 4 * (s->A + 1) - m->g_bytes;
        next = m->g_ref + (need + m->g_rate - 1) / m->g_rate;
        if (next <= now)
            next = now + 1;
    }
    if (next > now + FAB_MAX_AHEAD)
        next = now + FAB_MAX_AHEAD;
    if (next > now && (s->timer != (uint32_t)next || !s->timer_ok)) {
        /* one timer per stage: an evaluation that finds the same cycle again
         * (it is re-evaluated often) must not add another */
        s->timer = (uint32_t)next;
        s->timer_ok = 1;
        cs_sim_at(f->sim, next, f->h_eval, (uint32_t)id, TIMER | s->gen);
    }
}

static void set_rate(fabric_t *f, int32_t id, uint8_t r)
{
    stage_t *s = &f->st[id];
    cs_tick_t now = now_of(f);
    bring(f, s);
    if (s->r && !r) {
        account_flow(f, s);
        s->r = 0;
        release_ports(f, id);
    } else if (!s->r && r) {
        if (s->kind == ST_ROUTER) {
            CS_ASSERT(!s->waiting); /* A0 shares its field with the wait link */
            s->A0 = (uint32_t)s->A;
        }
        s->r = 1;
    }
    s = &f->st[id];
    bump_gen(s);
    for (int32_t c = s->first_child; c >= 0; c = f->st[c].next_sibling) {
        /* a parent that changes its mind within a cycle sends the child
         * only its last word: earlier events of that cycle go stale */
        stage_t *ch = &f->st[c];
        cs_tick_t t = now + ch->lat;
        if (ch->arr_t == (uint32_t)t) {
            CS_ASSERT(ch->arr_seq < UINT16_MAX);
            ch->arr_seq++;
        } else {
            ch->arr_t = (uint32_t)t, ch->arr_seq = 0;
        }
        cs_sim_at(f->sim, t, f->h_arr, (uint32_t)c, (uint64_t)ch->arr_seq << 1 | r);
    }
    /* its room changes from the next cycle on; a parent that is done has
     * nothing left to decide (evaluate returns at once), so it gets no
     * event: every stage of a stream stops after its parent has finished,
     * and the events would be a third of a full-wafer reduce's.  A parent
     * that is not done is evaluated even where that cannot change its own
     * rate: the evaluation's place among the cycle's others decides which
     * stream takes a contested output or color first (docs/engine.md,
     * Costs) */
    if (s->parent >= 0 && !f->st[s->parent].done)
        cs_sim_at(f->sim, now + 1, f->h_eval, (uint32_t)s->parent, UNCOND);
    if (s->kind == ST_SINK)
        report(f, id);
}

static void on_eval(void *ctx, const cs_event_t *ev)
{
    fabric_t *f = ctx;
    stage_t *s = &f->st[ev->a];
    if (ev->b != UNCOND && s->gen != (uint32_t)ev->b)
        return; /* the stage changed since: a fresher event covers it */
    if ((ev->b & TIMER) && s->timer != (uint32_t)now_of(f))
        return; /* superseded by an earlier timer */
    evaluate(f, (int32_t)ev->a);
}

static void on_arr(void *ctx, const cs_event_t *ev)
{
    fabric_t *f = ctx;
    stage_t *s = &f->st[ev->a];
    if (s->arr_t == (uint32_t)now_of(f) && (uint16_t)(ev->b >> 1) != s->arr_seq)
        return; /* superseded within its cycle */
    if (s->a == (uint8_t)(ev->b & 1))
        return;
    bring(f, s);
    s->a = (uint8_t)(ev->b & 1);
    bump_gen(s);
    evaluate(f, (int32_t)ev->a);
}

/* ---- building streams ------------------------------------------------------- */

/* The stage array at its new capacity, each stage on a cache line of its
 * own: a large block from malloc starts 16 bytes into a page, which put
 * every 64-byte stage across two lines (two misses per stage touched on
 * the full wafer).  realloc may move the block to another offset. */
static void grow_stages(fabric_t *f)
{
    size_t old_off = f->st_mem ? (size_t)((char *)f->st - f->st_mem) : 0;
    char *mem = cs_realloc(f->st_mem, (size_t)f->cap_st * sizeof *f->st + 64);
    size_t off = (64 - ((uintptr_t)mem & 63)) & 63;
    if (off != old_off)
        memmove(mem + off, mem + old_off, (size_t)f->nst * sizeof *f->st);
    f->st_mem = mem;
    f->st = (stage_t *)(void *)(mem + off);
}

static int32_t new_stage(fabric_t *f, int32_t stream, int kind, int pe, int32_t parent, int lat)
{
    if (f->nst == f->cap_st) {
        f->cap_st = f->cap_st ? f->cap_st * 2 : 1024;
        CS_ASSERT(f->cap_st < INT32_MAX);
        grow_stages(f);
    }
    int32_t id = (int32_t)f->nst++;
    stage_t *s = &f->st[id];
    memset(s, 0, sizeof *s);
    s->stream = stream;
    s->kind = (uint8_t)kind;
    s->pe = pe;
    s->parent = parent;
    s->first_child = s->next_sibling = NIL;
    s->wait_next = NIL;
    s->lat = (uint16_t)lat;
    s->ref = now_of(f);
    if (parent >= 0) {
        /* children in creation order */
        stage_t *p = &f->st[parent];
        if (p->first_child == NIL)
            p->first_child = id;
        else {
            int32_t c = p->first_child;
            while (f->st[c].next_sibling != NIL)
                c = f->st[c].next_sibling;
            f->st[c].next_sibling = id;
        }
    }
    return id;
}

/* The router stage for `dst` in the stream being built, creating what is
 * missing of the X-then-Y path to it from the source.  The path is walked
 * back from dst to the first router the stream already has, so building a
 * multicast costs one step per new stage, not per destination and hop. */
static int32_t route_to(fabric_t *f, int32_t stream, int src, int dst, int32_t **touched,
                        int *ntouched, int *cap_touched)
{
    int cols = f->p.cols, r0 = src / cols, c0 = src % cols;
    int r = dst / cols, c = dst % cols, n = 0;
    int32_t *back = *touched + *ntouched; /* scratch after the touched list */
    /* walk back: first along the column to row r0, then along that row */
    while (f->scratch[r * cols + c] == NIL) {
        if (*ntouched + n + 1 >= *cap_touched) {
            *cap_touched = 2 * (*ntouched + n + 1);
            *touched = cs_realloc(*touched, (size_t)*cap_touched * sizeof **touched);
            back = *touched + *ntouched;
        }
        back[n++] = r * cols + c;
        if (r != r0)
            r += r0 > r ? 1 : -1;
        else
            c += c0 > c ? 1 : -1;
    }
    int32_t cur = f->scratch[r * cols + c];
    /* then forward, creating the stages */
    for (int i = n - 1; i >= 0; i--) {
        int pe = back[i], pr = f->st[cur].pe / cols, pc = f->st[cur].pe % cols;
        int d = pe / cols == pr ? (pe % cols > pc ? D_E : D_W) : (pe / cols > pr ? D_S : D_N);
        f->st[cur].outs |= (uint8_t)(1 << d);
        int32_t id = new_stage(f, stream, ST_ROUTER, pe, cur, 1);
        f->st[id].in_dir = (uint8_t)(d ^ 2); /* N<->S, E<->W */
        f->scratch[pe] = id;
        cur = id;
    }
    /* the new routers join the touched list (scratch is reset from it) */
    *ntouched += n;
    return cur;
}

static uint32_t fab_post(void *impl, int src, int ndst, const int *dst, int64_t bytes,
                         int64_t gate_bytes, int watch, const uint64_t *users)
{
    fabric_t *f = impl;
    int tr = f->p.tr;
    f->sm = cs_grow(f->sm, f->nsm, &f->cap_sm, 256, sizeof *f->sm);
    int32_t sid = f->nsm++;
    stream_t *m = &f->sm[sid];
    memset(m, 0, sizeof *m);
    m->src = src;
    m->bytes = bytes;
    m->W = bytes > 4 ? (bytes + 3) / 4 : 1; /* an empty message is one control wavelet */
    m->g_bytes = gate_bytes < bytes ? gate_bytes : bytes;
    m->g_ref = now_of(f);
    m->watch = (uint8_t)watch;
    m->sinks_left = ndst;
    /* color class: a unicast travels on its destination's color, a
     * multicast on its own */
    m->cls = ndst == 1 ? dst[0] : f->npe + f->next_cls++;
    if (f->nusers + ndst > f->cap_users) {
        while (f->nusers + ndst > f->cap_users)
            f->cap_users = f->cap_users ? f->cap_users * 2 : 1024;
        f->users = cs_realloc(f->users, (size_t)f->cap_users * sizeof *f->users);
    }
    m->first_user = (int32_t)f->nusers;
    memcpy(f->users + f->nusers, users, (size_t)ndst * sizeof *users);
    f->nusers += ndst;
    m->first_stage = (int32_t)f->nst;
    f->active++;

    int32_t inj = new_stage(f, sid, ST_INJ, src, NIL, 0);
    int32_t *touched = NULL;
    int ntouched = 0, cap_touched = 0;
    int32_t root = NIL;
    for (int i = 0; i < ndst; i++) {
        int32_t sink;
        if (dst[i] == src && ndst == 1) {
            /* a local copy: memory to memory, one wavelet per cycle, no
             * network */
            sink = new_stage(f, sid, ST_SINK, src, inj, 1);
            f->st[sink].local = 1; /* no capacity limit (cap_of) */
            f->st[inj].local = 1;
        } else {
            if (root == NIL) {
                root = new_stage(f, sid, ST_ROUTER, src, inj, 1 + tr);
                f->st[root].in_dir = D_RAMP;
                f->scratch[src] = root;
                touched = cs_malloc(64 * sizeof *touched);
                cap_touched = 64;
                touched[ntouched++] = src;
            }
            int32_t last = route_to(f, sid, src, dst[i], &touched, &ntouched, &cap_touched);
            f->st[last].outs |= 1 << D_RAMP;
            sink = new_stage(f, sid, ST_SINK, dst[i], last, tr);
        }
        f->st[sink].user = m->first_user + i;
    }
    for (int i = 0; i < ntouched; i++)
        f->scratch[touched[i]] = NIL;
    free(touched);
    eval_soon(f, inj);
    return (uint32_t)sid;
}

static void fab_gate(void *impl, uint32_t msg, int64_t gate_bytes, int64_t rate)
{
    fabric_t *f = impl;
    stream_t *m = &f->sm[msg];
    cs_tick_t now = now_of(f);
    if (gate_bytes > m->bytes)
        gate_bytes = m->bytes;
    m->g_bytes = gate_bytes;
    m->g_rate = rate;
    m->g_ref = now;
    int32_t inj = m->first_stage;
    bump_gen(&f->st[inj]);
    eval_soon(f, inj);
}

static int64_t fab_active(const void *impl) { return ((const fabric_t *)impl)->active; }

static int fab_error(const void *impl, cs_error_t *err)
{
    const fabric_t *f = impl;
    if (f->err_code && err)
        *err = f->err;
    return f->err_code;
}

static int fab_explain(const void *impl, cs_error_t *err)
{
    const fabric_t *f = impl;
    char buf[600] = "";
    size_t used = 0;
    int shown = 0;
    for (int64_t i = 0; i < f->nst && shown < 4; i++) {
        const stage_t *s = &f->st[i];
        const stream_t *m = &f->sm[s->stream];
        if (s->done || s->r || s->kind != ST_ROUTER || !s->present)
            continue;
        char where[64], line[200];
        const char *why = "its next router is full";
        pe_name(f, s->pe, where, sizeof where);
        const color_t *c = NULL;
        for (int32_t k = f->colors[s->pe].head; k != NIL; k = f->cpool[k].next)
            if (f->cpool[k].cls == m->cls)
                c = &f->cpool[k];
        if (!s->holds_color && c && c->holder != NIL)
            why = "its color is held there by another stream that cannot finish";
        snprintf(line, sizeof line, "%sstream from PE (%d,%d) stalled at %s (input %s): %s",
                 shown ? "; " : "", m->src / f->p.cols, m->src % f->p.cols, where,
                 dir_name[s->in_dir], why);
        if (used + strlen(line) < sizeof buf - 1) {
            memcpy(buf + used, line, strlen(line) + 1);
            used += strlen(line);
        }
        shown++;
    }
    return cs_error_set(err, CS_ERR_DEADLOCK, "cerebras fabric: %lld stream(s) cannot finish: %s",
                        (long long)f->active, shown ? buf : "waiting for data that never comes");
}

static const cs_chan_stats_t *fab_chan_stats(const void *impl, int chan)
{
    fabric_t *f = (fabric_t *)impl; /* the records are a cache of the compact ones */
    if (!f->stats) {
        f->stats = cs_malloc((size_t)f->nchan * sizeof *f->stats);
        for (int32_t c = 0; c < f->nchan; c++)
            stats_fill(f, c);
    }
    return &f->stats[chan];
}

static void fab_free(void *impl)
{
    fabric_t *f = impl;
    if (!f)
        return;
    free(f->colors);
    free(f->cpool);
    free(f->st_mem);
    free(f->sm);
    free(f->users);
    free(f->ports);
    free(f->chan);
    free(f->stats);
    free(f->busy);
    free(f->peak);
    free(f->scratch);
    free(f);
}

static const cs_net_ops_t fabric_ops = {
    .name = "cerebras wavelet fabric",
    .has_mcast = 1,
    .post = fab_post,
    .gate = fab_gate,
    .active = fab_active,
    .explain_stuck = fab_explain,
    .error = fab_error,
    .chan_stats = fab_chan_stats,
    .free = fab_free,
};

int cs_fabric_new(const cs_fabric_params_t *fp, const cs_topo_t *topo, cs_sim_t *sim,
                  const cs_net_hooks_t *hooks, cs_net_t **out, cs_error_t *err)
{
    int npe = fp->rows * fp->cols;
    cs_hop_t hop[4];
    *out = NULL;
    if (fp->tr < 1 || fp->tr > FAB_MAX_TR || fp->buf < 1 || fp->buf > (1 << 28) || fp->colors < 0 ||
        npe != cs_topo_nodes(topo))
        return cs_error_set(err, CS_ERR_RANGE,
                            "cerebras fabric: invalid parameters (tr=%d must be 1..%d, buf=%d "
                            "1..%d, colors=%d >= 0, %d PEs on a topology of %d nodes)",
                            fp->tr, FAB_MAX_TR, fp->buf, 1 << 28, fp->colors, npe,
                            cs_topo_nodes(topo));
    fabric_t *f = cs_calloc(1, sizeof *f);
    f->p = *fp;
    f->topo = topo;
    f->sim = sim;
    if (hooks)
        f->hooks = *hooks;
    f->npe = npe;
    f->ports = cs_malloc((size_t)npe * NPORTS * sizeof *f->ports);
    for (int64_t i = 0; i < (int64_t)npe * NPORTS; i++)
        f->ports[i] = (port_t){NIL, NIL, 0};
    f->colors = cs_malloc((size_t)npe * sizeof *f->colors);
    for (int i = 0; i < npe; i++)
        f->colors[i] = (rcolors_t){NIL, 0};
    f->cfree = NIL;
    f->scratch = cs_malloc((size_t)npe * sizeof *f->scratch);
    for (int i = 0; i < npe; i++)
        f->scratch[i] = NIL;
    f->chan = cs_malloc((size_t)npe * 4 * sizeof *f->chan);
    f->nchan = cs_topo_channels(topo);
    f->busy = cs_calloc((size_t)f->nchan + 1, sizeof *f->busy);
    f->peak = cs_calloc((size_t)f->nchan + 1, sizeof *f->peak);
    for (int pe = 0; pe < npe; pe++) {
        int r = pe / fp->cols, c = pe % fp->cols;
        const int nb[4] = {r > 0 ? pe - fp->cols : -1, c + 1 < fp->cols ? pe + 1 : -1,
                           r + 1 < fp->rows ? pe + fp->cols : -1, c > 0 ? pe - 1 : -1};
        for (int d = 0; d < 4; d++) {
            f->chan[(int64_t)pe * 4 + d] = -1;
            if (nb[d] >= 0 && cs_topo_route(topo, pe, nb[d], hop) == 1)
                f->chan[(int64_t)pe * 4 + d] = hop[0].chan;
        }
    }
    f->h_eval = cs_sim_register(sim, on_eval, f);
    f->h_arr = cs_sim_register(sim, on_arr, f);
    *out = f->net = cs_net_new_engine(&fabric_ops, f, topo);
    return CS_OK;
}

int cs_fabric_configs_peak(const cs_net_t *n, int *router)
{
    const fabric_t *f = cs_net_impl_of(n, &fabric_ops);
    if (!f)
        return 0;
    if (router)
        *router = f->configs_peak_pe;
    return f->configs_peak;
}

int cs_fabric_colors_peak(const cs_net_t *n, int *router, cs_tick_t *when)
{
    const fabric_t *f = cs_net_impl_of(n, &fabric_ops);
    if (!f)
        return 0;
    if (router)
        *router = f->colors_peak_pe;
    if (when)
        *when = f->colors_peak_t;
    return f->colors_peak;
}
