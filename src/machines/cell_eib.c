/*
 * cell_eib.c - the Cell blade engine (model in cell_eib.h, docs/cell.md).
 *
 * Three layers, each event-driven:
 *   commands  a put or a get of one DMA command: MFC issue (one command at
 *             a time per SPE), then the command phase, then its data as
 *             packets; a command that crosses chips becomes two EIB legs
 *             joined by the BIF;
 *   legs      the packets of a command on one chip's EIB, from one ramp to
 *             another, granted one at a time by the chip's arbiter;
 *   messages  the program's sends: a put, or ADDR put -> get -> ACK put.
 * The arbiter grants, round robin over the legs waiting, every packet whose
 * ring, ramps, ring start slot and command-bus slot are free now; whatever
 * it could not grant waits for the next release or the next bus cycle.
 */
#include "machines/cell_eib.h"

#include "engine/chanrec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NIL (-1)
#define RAMPS 12
#define RINGS 4
#define POS_BIF 6
#define PACKET 128
#define BEAT 16
#define DMA_MAX 16384

/* ring position of SPE k (the EIB order PPE, SPE1, SPE3, SPE5, SPE7, IOIF1,
 * BIF, SPE6, SPE4, SPE2, SPE0, MIC) */
static const int spe_pos[8] = {10, 1, 9, 2, 8, 3, 7, 4};

enum { C_PUT, C_GET };                     /* command kinds */
enum { P_DATA, P_ADDR, P_ACK };            /* what a put carries */

typedef struct cmd {
    int32_t msg;        /* owning message */
    uint8_t kind, what;
    int32_t issuer;     /* SPE (node) whose MFC issues it */
    int32_t from, to;   /* data flows from node `from` to node `to` */
    int64_t bytes;
    int64_t delivered;  /* bytes at `to` */
    int32_t next;       /* MFC queue */
} cmd_t;

typedef struct leg {
    int32_t cmd;
    int chip, src_ramp, dst_ramp;  /* ramps as chip*RAMPS + pos */
    int64_t total, avail, sent;    /* bytes: of the command, ready here, granted */
    int final;                     /* delivers at the destination (else to the BIF) */
    int bif_paid;                  /* the command's BIF overhead is charged */
    int32_t next;                  /* arbiter queue of its ramp pair */
    uint64_t stamp;                /* its place in the arbiter's round robin */
    uint8_t queued;
} leg_t;

typedef struct xmsg {
    int32_t src, dst;
    int64_t bytes;
    uint64_t user;
    uint8_t watch, small, addr_in, matched, getting, done;
    int8_t addr_halves;            /* mailbox: ADDR halves arrived */
    int64_t gate;
    int32_t ncmds, cmds_done;      /* data commands */
    int64_t delivered;
} xmsg_t;

typedef struct ring {
    uint16_t seg[3];               /* segment masks of transfers in flight */
    cs_tick_t end[3];
    cs_tick_t last_start;
} ring_t;

typedef struct chip {
    ring_t ring[RINGS];
    cs_tick_t bus_free;            /* next free command-bus cycle */
    /* legs with packets to grant, in the arbiter's round-robin order: one
     * FIFO per (source ramp, destination ramp) pair, ordered across the
     * pairs by stamp (see on_arb) */
    int32_t pair_head[RAMPS * RAMPS], pair_tail[RAMPS * RAMPS];
    int32_t nlegs;
    uint64_t next_stamp;
    cs_tick_t wake_at;
    int in_flight, peak;           /* packets holding a ring */
    int dma_live;                  /* data gets past their command phase, not yet done */
} chip_t;

typedef struct spe {
    int32_t mfc_head, mfc_tail;    /* commands waiting to issue */
    cs_tick_t mfc_free;
    cs_tick_t spu_free;            /* notify=signal: the SPU takes signals in turn */
    int mailbox;                   /* unread inbound mailbox entries */
} spe_t;

typedef struct cell {
    cs_cell_params_t p;
    const cs_topo_t *topo;
    cs_sim_t *sim;
    cs_net_hooks_t hooks;
    int nspe;
    spe_t *spe;
    chip_t chip[2];
    cs_tick_t *tx_free, *rx_free;  /* per ramp */
    cs_tick_t bif_free[2];         /* per direction: chip 0 -> 1, 1 -> 0 */
    cmd_t *c;
    int32_t nc, cap_c;
    leg_t *l;
    int32_t nl, cap_l;
    xmsg_t *m;
    int32_t nm, cap_m;
    cs_cell_crossing_t *cross;
    int32_t ncross, cap_cross;
    cs_chan_stats_t *stats;
    int32_t *ring_chan;            /* chip*RAMPS*2 + seg*2 + dir -> topo channel */
    int32_t bif_chan[2];
    cs_net_t *net;                 /* the wrapper: its recorder takes time buckets */
    int64_t active;
    int64_t late_gets;             /* gets started before their recv (cell_idle) */
    int dma_peak;                  /* most dma_live of one chip */
    uint32_t h_issue, h_arb, h_packet, h_bif, h_start, h_signal;
    int err_code;
    cs_error_t err;
} cell_t;

static cs_tick_t now_of(const cell_t *c) { return cs_sim_now(c->sim); }

static void cell_fail(cell_t *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cell_fail(cell_t *c, int code, const char *fmt, ...)
{
    va_list ap;
    if (c->err_code)
        return;
    c->err_code = code;
    va_start(ap, fmt);
    cs_error_vset(&c->err, code, fmt, ap);
    va_end(ap);
    cs_sim_stop(c->sim);
}

static int chip_of(int node) { return node / 8; }
static int ramp_of(int node) { return chip_of(node) * RAMPS + spe_pos[node % 8]; }

/* ---- commands and the MFC ---------------------------------------------------- */

static void arbiter_wake(cell_t *c, int chip, cs_tick_t t);

static int32_t new_cmd(cell_t *c, int32_t msg, int kind, int what, int issuer, int from, int to,
                       int64_t bytes)
{
    c->c = cs_grow(c->c, c->nc, &c->cap_c, 256, sizeof *c->c);
    int32_t id = c->nc++;
    c->c[id] = (cmd_t){msg, (uint8_t)kind, (uint8_t)what, issuer, from, to, bytes, 0, NIL};
    spe_t *s = &c->spe[issuer];
    if (s->mfc_tail == NIL)
        s->mfc_head = id;
    else
        c->c[s->mfc_tail].next = id;
    s->mfc_tail = id;
    cs_tick_t t = now_of(c) > s->mfc_free ? now_of(c) : s->mfc_free;
    if (s->mfc_head == id)
        cs_sim_at(c->sim, t, c->h_issue, (uint32_t)issuer, 0);
    return id;
}

/* The MFC of SPE a.a issues its next command: `issue` ticks, then the
 * command phase. */
static void on_issue(void *ctx, const cs_event_t *ev)
{
    cell_t *c = ctx;
    spe_t *s = &c->spe[ev->a];
    int32_t id = s->mfc_head;
    cs_tick_t now = now_of(c);
    if (id == NIL || s->mfc_free > now)
        return;
    s->mfc_head = c->c[id].next;
    if (s->mfc_head == NIL)
        s->mfc_tail = NIL;
    s->mfc_free = now + c->p.issue;
    cmd_t *k = &c->c[id];
    int cross = chip_of(k->from) != chip_of(k->to);
    /* a get's request travels to the other chip first */
    cs_tick_t start = now + c->p.issue + c->p.cmd + (cross && k->kind == C_GET ? c->p.bif_lat : 0);
    cs_sim_at(c->sim, start, c->h_start, (uint32_t)id, 0);
    if (s->mfc_head != NIL)
        cs_sim_at(c->sim, s->mfc_free, c->h_issue, (uint32_t)ev->a, 0);
}

static int32_t new_leg(cell_t *c, int32_t cmd, int chip, int src_ramp, int dst_ramp, int64_t total,
                       int64_t avail, int final)
{
    c->l = cs_grow(c->l, c->nl, &c->cap_l, 256, sizeof *c->l);
    int32_t id = c->nl++;
    c->l[id] = (leg_t){cmd, chip, src_ramp, dst_ramp, total, avail, 0, final, 0, NIL, 0, 0};
    return id;
}

/* The arbiter queue of a leg: its ramp pair on its chip. */
static int leg_pair(const leg_t *l) { return l->src_ramp % RAMPS * RAMPS + l->dst_ramp % RAMPS; }

static void leg_queue(cell_t *c, int32_t id)
{
    leg_t *l = &c->l[id];
    chip_t *ch = &c->chip[l->chip];
    if (l->queued || l->sent >= l->avail)
        return;
    int pair = leg_pair(l);
    l->queued = 1;
    l->next = NIL;
    l->stamp = ch->next_stamp++;
    if (ch->pair_tail[pair] == NIL)
        ch->pair_head[pair] = id;
    else
        c->l[ch->pair_tail[pair]].next = id;
    ch->pair_tail[pair] = id;
    ch->nlegs++;
    arbiter_wake(c, l->chip, now_of(c));
}

/* A DMA get of a message's data is under way on the chips its packets
 * cross, from the end of its command phase until its last byte is in: the
 * paper's "data messages initiated on the EIB" that have not completed
 * (reference §6 F, test 45), which the ring grants (at most 12 packets at
 * a time by construction) do not show.  Notifications and barrier tokens
 * are left out, as the paper leaves them out ("small and finish early"). */
static void dma_count(cell_t *c, const cmd_t *k, int delta)
{
    if (k->what != P_DATA || c->m[k->msg].small)
        return;
    int ca = chip_of(k->from), cb = chip_of(k->to);
    c->chip[ca].dma_live += delta;
    if (cb != ca)
        c->chip[cb].dma_live += delta;
    if (c->chip[ca].dma_live > c->dma_peak)
        c->dma_peak = c->chip[ca].dma_live;
    if (c->chip[cb].dma_live > c->dma_peak)
        c->dma_peak = c->chip[cb].dma_live;
}

/* Command phase over: the data may move.  Cross-chip data runs on two legs:
 * to the BIF ramp, and from the other chip's BIF ramp (packets reach it as
 * they cross). */
static void on_start(void *ctx, const cs_event_t *ev)
{
    cell_t *c = ctx;
    cmd_t *k = &c->c[ev->a];
    int src = ramp_of(k->from), dst = ramp_of(k->to);
    int64_t bytes = k->bytes > 0 ? k->bytes : 1;
    dma_count(c, k, 1);
    if (chip_of(k->from) == chip_of(k->to)) {
        leg_queue(c, new_leg(c, (int32_t)ev->a, chip_of(k->from), src, dst, bytes, bytes, 1));
        return;
    }
    if (k->what == P_DATA) {
        c->cross = cs_grow(c->cross, c->ncross, &c->cap_cross, 64, sizeof *c->cross);
        c->cross[c->ncross++] = (cs_cell_crossing_t){k->from, k->to, k->bytes, now_of(c)};
    }
    int ca = chip_of(k->from), cb = chip_of(k->to);
    int32_t first = new_leg(c, (int32_t)ev->a, ca, src, ca * RAMPS + POS_BIF, bytes, bytes, 0);
    new_leg(c, (int32_t)ev->a, cb, cb * RAMPS + POS_BIF, dst, bytes, 0, 1); /* first + 1 */
    leg_queue(c, first);
}

/* ---- messages ----------------------------------------------------------------- */

static void deliver_data(cell_t *c, int32_t mid);
static void msg_done(cell_t *c, int32_t mid);
static void mailbox_put(cell_t *c, int node, int32_t from);

/* A command's data is all at its destination. */
static void cmd_done(cell_t *c, int32_t id)
{
    cmd_t *k = &c->c[id];
    xmsg_t *m = &c->m[k->msg];
    int32_t mid = k->msg;
    if (k->what == P_ADDR) {
        if (c->p.notify == CS_CELL_MAILBOX) {
            mailbox_put(c, m->dst, m->src);
            if (c->err_code)
                return;
            if (++c->m[mid].addr_halves < 2) {
                /* the second half follows the first (a fence) */
                new_cmd(c, mid, C_PUT, P_ADDR, m->src, m->src, m->dst, 4);
                return;
            }
        }
        m = &c->m[mid];
        m->addr_in = 1;
        if (m->matched)
            deliver_data(c, mid);
        return;
    }
    if (k->what == P_ACK) {
        if (c->p.notify == CS_CELL_MAILBOX) {
            mailbox_put(c, m->src, m->dst);
            if (c->err_code)
                return;
            c->spe[m->src].mailbox--; /* the sender waits for it: read at once */
        }
        if (c->hooks.released)
            c->hooks.released(c->hooks.ctx, c->m[mid].user, now_of(c));
        return;
    }
    /* data */
    dma_count(c, k, -1);
    m->delivered += k->bytes;
    if (++m->cmds_done < m->ncmds) {
        if (m->watch && c->hooks.progress)
            c->hooks.progress(c->hooks.ctx, m->user, m->delivered, 0, now_of(c));
        return;
    }
    if (m->small && c->p.notify == CS_CELL_SIGNAL) {
        /* into the signal register (OR mode: nothing is lost); the SPU
         * takes it when it is free */
        spe_t *sp = &c->spe[m->dst];
        cs_tick_t t = (sp->spu_free > now_of(c) ? sp->spu_free : now_of(c)) + c->p.signal_read;
        sp->spu_free = t;
        cs_sim_at(c->sim, t, c->h_signal, (uint32_t)mid, 0);
        return;
    }
    msg_done(c, mid);
}

/* The data is in: the recv may complete; a notification-only message is
 * also done for its sender, a larger one sends its ACK. */
static void msg_done(cell_t *c, int32_t mid)
{
    xmsg_t *m = &c->m[mid];
    m->done = 1;
    c->active--;
    uint64_t user = m->user;
    int small = m->small;
    if (c->hooks.completed)
        c->hooks.completed(c->hooks.ctx, user, now_of(c));
    m = &c->m[mid];
    if (small) {
        if (c->p.notify == CS_CELL_MAILBOX) {
            mailbox_put(c, m->dst, m->src);
            if (c->err_code)
                return;
            if (m->matched)
                c->spe[m->dst].mailbox--; /* its recv is waiting: read at once */
        }
        if (c->hooks.released)
            c->hooks.released(c->hooks.ctx, user, now_of(c));
    } else {
        new_cmd(c, mid, C_PUT, P_ACK, m->dst, m->dst, m->src, BEAT);
    }
}

static void on_signal(void *ctx, const cs_event_t *ev) { msg_done(ctx, (int32_t)ev->a); }

/* The receiver gets the data: one command per 16 KiB. */
static void deliver_data(cell_t *c, int32_t mid)
{
    xmsg_t *m = &c->m[mid];
    if (m->getting)
        return;
    m->getting = 1;
    if (c->p.notify == CS_CELL_MAILBOX)
        c->spe[m->dst].mailbox -= 2; /* the ADDR pair is read now */
    int64_t left = m->bytes;
    m->ncmds = (int32_t)((m->bytes + DMA_MAX - 1) / DMA_MAX);
    for (int i = 0; i < m->ncmds; i++) {
        int64_t b = left < DMA_MAX ? left : DMA_MAX;
        new_cmd(c, mid, C_GET, P_DATA, m->dst, m->src, m->dst, b);
        left -= b;
    }
}

static void mailbox_put(cell_t *c, int node, int32_t from)
{
    spe_t *s = &c->spe[node];
    if (s->mailbox >= c->p.mailbox_depth) {
        cell_fail(c, CS_ERR_RUNTIME,
                  "cell: SPE %d's inbound mailbox is full (%d entries) at t=%lld: the newest "
                  "entry, from SPE %d, is lost (the paper's mailbox barrier works in steps of at "
                  "most %d)",
                  node, c->p.mailbox_depth, (long long)now_of(c), from, c->p.mailbox_depth);
        return;
    }
    s->mailbox++;
}

/* ---- the arbiter ---------------------------------------------------------------- */

static void arbiter_wake(cell_t *c, int chip, cs_tick_t t)
{
    chip_t *ch = &c->chip[chip];
    if (ch->wake_at >= now_of(c) && ch->wake_at <= t)
        return;
    ch->wake_at = t;
    cs_sim_at(c->sim, t, c->h_arb, (uint32_t)chip, 0);
}

/* Segments of a path from position a to b (positions mod 12) in direction
 * dir (0: increasing, 1: decreasing). */
static uint16_t path_mask(int a, int b, int dir, int *hops)
{
    uint16_t mask = 0;
    int h = dir == 0 ? (b - a + RAMPS) % RAMPS : (a - b + RAMPS) % RAMPS;
    for (int i = 0; i < h; i++) {
        int seg = dir == 0 ? (a + i) % RAMPS : (a - 1 - i + RAMPS) % RAMPS;
        mask |= (uint16_t)(1u << seg);
    }
    *hops = h;
    return mask;
}

/* Tries to grant the packet of leg id now; returns 1 if granted. */
static int try_grant(cell_t *c, int32_t id)
{
    leg_t *l = &c->l[id];
    chip_t *ch = &c->chip[l->chip];
    cs_tick_t now = now_of(c);
    if (c->tx_free[l->src_ramp] > now || c->rx_free[l->dst_ramp] > now || ch->bus_free > now)
        return 0;
    int a = l->src_ramp % RAMPS, b = l->dst_ramp % RAMPS;
    int fwd = (b - a + RAMPS) % RAMPS;
    /* the shorter way; at 6 hops either */
    int dirs[2], nd = 0;
    if (fwd <= 6)
        dirs[nd++] = 0;
    if (fwd >= 6)
        dirs[nd++] = 1;
    for (int di = 0; di < nd; di++) {
        int hops;
        uint16_t mask = path_mask(a, b, dirs[di], &hops);
        for (int r = dirs[di] * 2; r < dirs[di] * 2 + 2; r++) {
            ring_t *rg = &ch->ring[r];
            int slot = -1, busy = 0;
            if (rg->last_start + 3 * c->p.bus > now && rg->last_start >= 0)
                continue;
            for (int s = 0; s < 3; s++) {
                if (rg->end[s] > now) {
                    busy |= rg->seg[s] & mask;
                } else if (slot < 0) {
                    slot = s;
                }
            }
            if (busy || slot < 0)
                continue;
            int64_t bytes = l->avail - l->sent;
            if (bytes > PACKET)
                bytes = PACKET;
            cs_tick_t dur = ((bytes + BEAT - 1) / BEAT) * c->p.bus;
            rg->seg[slot] = mask;
            rg->end[slot] = now + dur;
            rg->last_start = now;
            ch->bus_free = now + c->p.bus;
            c->tx_free[l->src_ramp] = now + dur;
            c->rx_free[l->dst_ramp] = now + dur;
            l->sent += bytes;
            ch->in_flight++;
            if (ch->in_flight > ch->peak)
                ch->peak = ch->in_flight;
            for (int s = 0; s < RAMPS; s++)
                if (mask & (1u << s)) {
                    int32_t tc = c->ring_chan[(l->chip * RAMPS + s) * 2 + dirs[di]];
                    if (tc >= 0) {
                        c->stats[tc].bytes += bytes;
                        c->stats[tc].units++;
                        c->stats[tc].busy += dur;
                        if (!c->stats[tc].peak_k)
                            c->stats[tc].peak_k = 1;
                        cs_chanrec_busy(cs_net_recorder(c->net), tc, now, dur, dur, bytes, 1);
                    }
                }
            /* the packet's last beat arrives after its beats and hops */
            cs_sim_at(c->sim, now + dur + hops * c->p.hop, c->h_packet, (uint32_t)id,
                      (uint64_t)bytes);
            cs_sim_at(c->sim, now + dur, c->h_arb, (uint32_t)l->chip, 1); /* resources free */
            return 1;
        }
    }
    return 0;
}

static void on_arb(void *ctx, const cs_event_t *ev)
{
    cell_t *c = ctx;
    chip_t *ch = &c->chip[ev->a];
    cs_tick_t now = now_of(c);
    if (ev->b == 1)
        ch->in_flight--; /* a packet's resources came free (see try_grant) */
    if (ch->wake_at == now)
        ch->wake_at = -1;
    /* Round robin: the first waiting leg (by stamp) whose way is free gets
     * a packet and goes to the back.  A grant takes the command bus for
     * `bus` ticks, so a pass grants at most one packet, and try_grant
     * depends on a leg's ramp pair only: trying each pair's first leg in
     * stamp order finds the same leg as trying every leg in turn, without
     * a pass costing as many tries as there are commands under way (a
     * 16 MiB message is 1024 commands: the scan made a run quadratic). */
    int32_t waiting = ch->nlegs, granted = 0;
    if (waiting > 0 && ch->bus_free <= now) {
        int order[RAMPS * RAMPS], n = 0;
        for (int p = 0; p < RAMPS * RAMPS; p++) {
            if (ch->pair_head[p] == NIL)
                continue;
            uint64_t st = c->l[ch->pair_head[p]].stamp;
            int i = n++;
            for (; i > 0 && c->l[ch->pair_head[order[i - 1]]].stamp > st; i--)
                order[i] = order[i - 1];
            order[i] = p;
        }
        for (int i = 0; i < n && !granted; i++) {
            int p = order[i];
            int32_t id = ch->pair_head[p];
            if (!try_grant(c, id))
                continue;
            /* unlink; requeue if it has more */
            ch->pair_head[p] = c->l[id].next;
            if (ch->pair_head[p] == NIL)
                ch->pair_tail[p] = NIL;
            ch->nlegs--;
            c->l[id].queued = 0;
            leg_queue(c, id);
            granted = 1;
        }
    }
    /* every other leg of the pass was blocked */
    if (waiting > granted && ch->nlegs > 0)
        arbiter_wake(c, (int)ev->a, now + c->p.bus);
}

/* A packet reached the end of its leg. */
static void on_packet(void *ctx, const cs_event_t *ev)
{
    cell_t *c = ctx;
    leg_t *l = &c->l[ev->a];
    int64_t bytes = (int64_t)ev->b;
    if (!l->final) {
        /* into the BIF toward the other chip */
        int dir = l->chip;
        cs_tick_t now = now_of(c), t = c->bif_free[dir] > now ? c->bif_free[dir] : now;
        __int128 ser = ((__int128)bytes * c->p.bif_num + c->p.bif_den - 1) / c->p.bif_den;
        if (!l->bif_paid) {
            ser += c->p.bif_gap; /* once per command crossing the BIF */
            l->bif_paid = 1;
        }
        c->bif_free[dir] = t + (cs_tick_t)ser;
        if (c->bif_chan[dir] >= 0) {
            int32_t bc = c->bif_chan[dir];
            c->stats[bc].bytes += bytes;
            c->stats[bc].units++;
            c->stats[bc].busy += (cs_tick_t)ser;
            /* k: this packet and those queued before it on the link */
            int32_t k = (int32_t)((t - now) / (ser > 0 ? (cs_tick_t)ser : 1)) + 1;
            if (k > c->stats[bc].peak_k)
                c->stats[bc].peak_k = k;
            cs_chanrec_busy(cs_net_recorder(c->net), bc, t, (cs_tick_t)ser, (cs_tick_t)ser,
                            bytes, 1);
            cs_chanrec_peak(cs_net_recorder(c->net), bc, t, k);
        }
        cs_sim_at(c->sim, t + (cs_tick_t)ser + c->p.bif_lat, c->h_bif, (uint32_t)ev->a + 1,
                  (uint64_t)bytes);
        return;
    }
    cmd_t *k = &c->c[l->cmd];
    k->delivered += bytes;
    if (k->delivered >= (k->bytes > 0 ? k->bytes : 1))
        cmd_done(c, l->cmd);
}

/* A packet crossed the BIF: it becomes available to the second leg. */
static void on_bif(void *ctx, const cs_event_t *ev)
{
    cell_t *c = ctx;
    c->l[ev->a].avail += (int64_t)ev->b;
    leg_queue(c, (int32_t)ev->a);
}

/* ---- the interface ----------------------------------------------------------------- */

static uint32_t cell_post(void *impl, int src, int ndst, const int *dst, int64_t bytes,
                          int64_t gate_bytes, int watch, const uint64_t *users)
{
    cell_t *c = impl;
    CS_ASSERT(ndst == 1);
    c->m = cs_grow(c->m, c->nm, &c->cap_m, 256, sizeof *c->m);
    int32_t id = c->nm++;
    xmsg_t *m = &c->m[id];
    memset(m, 0, sizeof *m);
    m->src = src;
    m->dst = dst[0];
    m->bytes = bytes;
    m->user = users[0];
    m->watch = (uint8_t)watch;
    m->gate = gate_bytes;
    m->small = bytes <= c->p.put_max;
    c->active++;
    if (m->gate < bytes)
        return (uint32_t)id; /* waits for its data (cell_gate) */
    if (m->small) {
        m->ncmds = 1;
        new_cmd(c, id, C_PUT, P_DATA, src, src, dst[0], bytes);
    } else {
        new_cmd(c, id, C_PUT, P_ADDR, src, src, dst[0], c->p.notify == CS_CELL_MAILBOX ? 4 : BEAT);
    }
    return (uint32_t)id;
}

static void cell_gate(void *impl, uint32_t id, int64_t gate_bytes, int64_t rate)
{
    cell_t *c = impl;
    xmsg_t *m = &c->m[id];
    (void)rate;
    /* a DMA get reads the sender's buffer as a whole: the ADDR goes out once
     * the data is complete there */
    if (m->gate >= m->bytes || gate_bytes < m->bytes)
        return;
    m->gate = gate_bytes;
    if (m->small) {
        m->ncmds = 1;
        new_cmd(c, (int32_t)id, C_PUT, P_DATA, m->src, m->src, m->dst, m->bytes);
    } else {
        new_cmd(c, (int32_t)id, C_PUT, P_ADDR, m->src, m->src, m->dst,
                c->p.notify == CS_CELL_MAILBOX ? 4 : BEAT);
    }
}

static void cell_matched(void *impl, uint32_t id, uint64_t user)
{
    cell_t *c = impl;
    xmsg_t *m = &c->m[id];
    (void)user;
    m->matched = 1;
    if (m->small && c->p.notify == CS_CELL_MAILBOX && m->done)
        c->spe[m->dst].mailbox--; /* an entry waiting to be read is read now */
    if (!m->small && m->addr_in)
        deliver_data(c, (int32_t)id);
}

static int64_t cell_active(const void *impl) { return ((const cell_t *)impl)->active; }

/* Nothing else can move: the program waits for sends whose receiver has
 * not posted its recv (it posts it only after they complete).  The SPEs
 * then get the data into a buffer of their own, as an eager protocol
 * would; counted and documented as a deviation from the paper's protocol. */
static int64_t cell_idle(void *impl)
{
    cell_t *c = impl;
    int64_t started = 0;
    for (int32_t i = 0; i < c->nm; i++) {
        xmsg_t *m = &c->m[i];
        if (!m->small && m->addr_in && !m->getting) {
            deliver_data(c, i);
            started++;
        }
    }
    c->late_gets += started;
    return started;
}

static int cell_error(const void *impl, cs_error_t *err)
{
    const cell_t *c = impl;
    if (c->err_code && err)
        *err = c->err;
    return c->err_code;
}

static int cell_explain(const void *impl, cs_error_t *err)
{
    const cell_t *c = impl;
    for (int32_t i = 0; i < c->nm; i++) {
        const xmsg_t *m = &c->m[i];
        if (m->done)
            continue;
        return cs_error_set(err, CS_ERR_DEADLOCK,
                            "cell: %lld message(s) unfinished, e.g. SPE %d -> SPE %d (%lld "
                            "bytes): %s",
                            (long long)c->active, m->src, m->dst, (long long)m->bytes,
                            m->gate < m->bytes ? "its data never became complete at the sender"
                            : !m->addr_in      ? "its address notification never arrived"
                            : !m->matched      ? "the receiver never posted a matching recv"
                                               : "its data never arrived");
    }
    return cs_error_set(err, CS_ERR_DEADLOCK, "cell: no message is stuck");
}

static const cs_chan_stats_t *cell_chan_stats(const void *impl, int chan)
{
    return &((const cell_t *)impl)->stats[chan];
}

static void cell_free(void *impl)
{
    cell_t *c = impl;
    if (!c)
        return;
    free(c->spe);
    free(c->tx_free);
    free(c->rx_free);
    free(c->c);
    free(c->l);
    free(c->m);
    free(c->cross);
    free(c->stats);
    free(c->ring_chan);
    free(c);
}

static const cs_net_ops_t cell_ops = {
    .name = "cell EIB + BIF",
    .post = cell_post,
    .gate = cell_gate,
    .matched = cell_matched,
    .active = cell_active,
    .explain_stuck = cell_explain,
    .error = cell_error,
    .chan_stats = cell_chan_stats,
    .free = cell_free,
    .late_release = 1,
    .idle = cell_idle,
};

int cs_cell_ramp_node(int chips, int ch, int pos)
{
    for (int k = 0; k < 8; k++)
        if (spe_pos[k] == pos)
            return ch * 8 + k;
    static const int other[RAMPS] = {0, -1, -1, -1, -1, 1, 2, -1, -1, -1, -1, 3};
    return 8 * chips + 4 * ch + other[pos];
}

int cs_cell_eib_new(const cs_cell_params_t *cp, const cs_topo_t *topo, cs_sim_t *sim,
                    const cs_net_hooks_t *hooks, cs_net_t **out, cs_error_t *err)
{
    *out = NULL;
    if (cp->chips < 1 || cp->chips > 2 || cp->issue < 0 || cp->cmd < 0 || cp->bus < 1 ||
        cp->hop < 0 || cp->bif_lat < 0 || cp->bif_num < 0 || cp->bif_den < 1 || cp->put_max < 0 ||
        cp->mailbox_depth < 1)
        return cs_error_set(err, CS_ERR_RANGE, "cell: invalid parameters");
    cell_t *c = cs_calloc(1, sizeof *c);
    c->p = *cp;
    c->topo = topo;
    c->sim = sim;
    if (hooks)
        c->hooks = *hooks;
    c->nspe = 8 * cp->chips;
    c->spe = cs_malloc((size_t)c->nspe * sizeof *c->spe);
    for (int i = 0; i < c->nspe; i++)
        c->spe[i] = (spe_t){NIL, NIL, 0, 0, 0};
    for (int ch = 0; ch < 2; ch++) {
        for (int p = 0; p < RAMPS * RAMPS; p++)
            c->chip[ch].pair_head[p] = c->chip[ch].pair_tail[p] = NIL;
        c->chip[ch].wake_at = -1;
        for (int r = 0; r < RINGS; r++)
            c->chip[ch].ring[r].last_start = -1;
    }
    c->tx_free = cs_calloc((size_t)cp->chips * RAMPS, sizeof *c->tx_free);
    c->rx_free = cs_calloc((size_t)cp->chips * RAMPS, sizeof *c->rx_free);
    c->stats = cs_calloc((size_t)cs_topo_channels(topo) + 1, sizeof *c->stats);
    c->ring_chan = cs_malloc((size_t)cp->chips * RAMPS * 2 * sizeof *c->ring_chan);
    for (int ch = 0; ch < cp->chips; ch++)
        for (int s = 0; s < RAMPS; s++) {
            int a = cs_cell_ramp_node(cp->chips, ch, s), b = cs_cell_ramp_node(cp->chips, ch, (s + 1) % RAMPS);
            c->ring_chan[(ch * RAMPS + s) * 2 + 0] = cs_topo_find_channel(topo, a, b);
            c->ring_chan[(ch * RAMPS + s) * 2 + 1] = cs_topo_find_channel(topo, b, a);
        }
    c->bif_chan[0] = c->bif_chan[1] = -1;
    if (cp->chips == 2) {
        int b0 = cs_cell_ramp_node(2, 0, POS_BIF), b1 = cs_cell_ramp_node(2, 1, POS_BIF);
        c->bif_chan[0] = cs_topo_find_channel(topo, b0, b1);
        c->bif_chan[1] = cs_topo_find_channel(topo, b1, b0);
    }
    c->h_issue = cs_sim_register(sim, on_issue, c);
    c->h_start = cs_sim_register(sim, on_start, c);
    c->h_arb = cs_sim_register(sim, on_arb, c);
    c->h_packet = cs_sim_register(sim, on_packet, c);
    c->h_bif = cs_sim_register(sim, on_bif, c);
    c->h_signal = cs_sim_register(sim, on_signal, c);
    *out = c->net = cs_net_new_engine(&cell_ops, c, topo);
    return CS_OK;
}

int cs_cell_eib_crossings(const cs_net_t *n, const cs_cell_crossing_t **list)
{
    const cell_t *c = cs_net_impl_of(n, &cell_ops);
    if (!c) {
        *list = NULL;
        return 0;
    }
    *list = c->cross;
    return c->ncross;
}

int64_t cs_cell_eib_late_gets(const cs_net_t *n)
{
    const cell_t *c = cs_net_impl_of(n, &cell_ops);
    return c ? c->late_gets : 0;
}

int cs_cell_eib_peak_transfers(const cs_net_t *n)
{
    const cell_t *c = cs_net_impl_of(n, &cell_ops);
    if (!c)
        return 0;
    return c->chip[0].peak > c->chip[1].peak ? c->chip[0].peak : c->chip[1].peak;
}

int cs_cell_eib_peak_data_transfers(const cs_net_t *n)
{
    const cell_t *c = cs_net_impl_of(n, &cell_ops);
    return c ? c->dma_peak : 0;
}
