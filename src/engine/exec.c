/*
 * exec.c - the program executor (contract in exec.h).
 *
 * Op life: WAIT (dependencies outstanding) -> READY -> STARTED -> DONE.
 * Dependencies are counted: AFTER is satisfied when the predecessor
 * completes, AFTER_START and STREAM when it starts.  Ops that become ready
 * are processed from a FIFO work list (never by recursion, so long chains
 * of zero-time ops cannot overflow the stack), which also makes the order
 * of same-tick starts deterministic: op-id order at time 0, then the order
 * in which events enabled them.
 *
 * Matching happens when a send starts: its message goes to the oldest posted
 * recv on the destination that accepts (source, tag), else to the
 * destination's unexpected list; a recv posted later takes the oldest
 * unexpected message it accepts.  This is MPI's non-overtaking rule.
 */
#include "engine/exec.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sim.h"

#define NONE (-1)

enum { OP_WAIT, OP_READY, OP_STARTED, OP_DONE };

typedef struct op_state {
    int32_t waiting;   /* unsatisfied dependencies */
    uint8_t state;
    uint8_t cpu_queued;
    int32_t msg;       /* send: its message; recv: the matched message; mcast: first */
    int32_t next;      /* posted-recv list link, or cpu queue link */
    int32_t pending;   /* mcast: messages not yet completed */
    int64_t progress;  /* bytes: recv arrived, send delivered, calc processed */
    int64_t rate;      /* progress grows by `rate` bytes per tick after `ref` */
    int64_t gate;      /* streaming: bytes allowed by stream predecessors */
    int64_t gate_rate; /* ... growing by gate_rate bytes per tick after `ref` */
    cs_tick_t ref, gate_ref;
    cs_tick_t busy_until; /* streaming calc: chunk in progress ends */
} op_state_t;

typedef struct xmsg {
    int32_t send_op, recv_op;
    int32_t src, dst; /* ranks */
    int32_t tag;
    int32_t next;     /* unexpected list link */
    int64_t bytes, arrived;
    int64_t rate;     /* arrived grows by rate bytes per tick after ref */
    cs_tick_t ref;
    uint64_t token;   /* observer's snapshot of the content */
    uint32_t net_id;
    uint8_t done;
} xmsg_t;

typedef struct rank_state {
    int32_t posted_head, posted_tail; /* unmatched recvs */
    int32_t unexp_head, unexp_tail;   /* unmatched messages */
    int32_t cpu_head, cpu_tail;       /* calcs waiting for the CPU */
    int32_t cpu_op;                   /* calc running, or NONE */
} rank_state_t;

typedef struct exec {
    const cs_exec_env_t *env;
    const cs_program_t *prog;
    cs_exec_result_t *res;
    cs_sim_t *sim;
    cs_net_t *net;
    const int32_t *node;
    op_state_t *ops;
    rank_state_t *ranks;
    xmsg_t *msgs;
    int32_t nmsgs, cap_msgs;
    int32_t *work;      /* FIFO of ops that became ready */
    int64_t work_head, work_tail, work_cap;
    int draining;
    int watch;          /* program has streaming deps: report unit progress */
    int32_t done_ops;
    double calc_scale;  /* program time unit -> ticks */
    uint32_t h_calc, h_wake;
    const cs_exec_observer_t *obs;
    const cs_exec_opts_t *opts;
    int err_code;
    cs_error_t *err;
} exec_t;

void cs_exec_opts_default(cs_exec_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->mode = CS_NET_PACKET;
    o->queue = CS_QUEUE_DEFAULT;
    o->max_buckets = 256;
}

static void fail(exec_t *x, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(exec_t *x, int code, const char *fmt, ...)
{
    va_list ap;
    if (x->err_code)
        return;
    x->err_code = code;
    va_start(ap, fmt);
    cs_error_vset(x->err, code, fmt, ap);
    va_end(ap);
    cs_sim_stop(x->sim);
}

static void work_push(exec_t *x, int32_t op)
{
    if (x->work_tail == x->work_cap) {
        /* compact or grow */
        if (x->work_head > 0) {
            memmove(x->work, x->work + x->work_head,
                    (size_t)(x->work_tail - x->work_head) * sizeof *x->work);
            x->work_tail -= x->work_head;
            x->work_head = 0;
        }
        if (x->work_tail == x->work_cap) {
            x->work_cap = x->work_cap ? x->work_cap * 2 : 1024;
            x->work = cs_realloc(x->work, (size_t)x->work_cap * sizeof *x->work);
        }
    }
    x->work[x->work_tail++] = op;
}

static void drain(exec_t *x);

/* ---- dependency bookkeeping ------------------------------------------ */

static void satisfy(exec_t *x, int32_t op)
{
    op_state_t *s = &x->ops[op];
    CS_ASSERT(s->waiting > 0);
    if (--s->waiting == 0 && s->state == OP_WAIT) {
        s->state = OP_READY;
        work_push(x, op);
    }
}

static void on_started(exec_t *x, int32_t op)
{
    int n;
    const cs_dep_t *succ = cs_program_succs(x->prog, op, &n);
    x->res->ops[op].start = cs_sim_now(x->sim);
    x->ops[op].state = OP_STARTED;
    for (int i = 0; i < n; i++)
        if (cs_dep_kind(succ[i]) != CS_DEP_AFTER)
            satisfy(x, cs_dep_op(succ[i]));
}

static void propagate_progress(exec_t *x, int32_t op);

static void on_done(exec_t *x, int32_t op)
{
    int n;
    const cs_dep_t *succ = cs_program_succs(x->prog, op, &n);
    const cs_op_t *o = cs_program_op(x->prog, op);
    cs_tick_t now = cs_sim_now(x->sim);
    CS_ASSERT(x->ops[op].state == OP_STARTED);
    x->ops[op].state = OP_DONE;
    x->ops[op].progress = o->bytes;
    x->res->ops[op].end = now;
    if (now > x->res->rank_finish[o->rank])
        x->res->rank_finish[o->rank] = now;
    if (now > x->res->finish)
        x->res->finish = now;
    x->done_ops++;
    for (int i = 0; i < n; i++)
        if (cs_dep_kind(succ[i]) == CS_DEP_AFTER)
            satisfy(x, cs_dep_op(succ[i]));
    if (x->watch)
        propagate_progress(x, op);
}

/* ---- streaming ------------------------------------------------------- */

/* A ramp value at `now`: base + rate * (now - ref), capped at `cap`. */
static int64_t ramp_at(int64_t base, int64_t rate, cs_tick_t ref, cs_tick_t now, int64_t cap)
{
    if (rate > 0 && now > ref) {
        __int128 v = (__int128)base + (__int128)rate * (now - ref);
        return v >= cap ? cap : (int64_t)v;
    }
    return base < cap ? base : cap;
}

static int64_t progress_now(exec_t *x, int32_t op)
{
    const op_state_t *s = &x->ops[op];
    return ramp_at(s->progress, s->rate, s->ref, cs_sim_now(x->sim),
                   cs_program_op(x->prog, op)->bytes);
}

/* Bytes of `op` that its stream predecessors allow now, and the rate at
 * which that grows: the smallest progress among the unfinished
 * predecessors, growing at the smallest of their rates (exact for one
 * predecessor; for several it may lag until the next progress report,
 * which every rate change triggers). */
static int64_t stream_gate(exec_t *x, int32_t op, int64_t *rate)
{
    int n;
    const cs_dep_t *pred = cs_program_preds(x->prog, op, &n);
    int64_t size = cs_program_op(x->prog, op)->bytes, g = size, r = INT64_MAX;
    for (int i = 0; i < n; i++) {
        if (cs_dep_kind(pred[i]) != CS_DEP_STREAM)
            continue;
        const cs_op_t *po = cs_program_op(x->prog, cs_dep_op(pred[i]));
        int64_t p = progress_now(x, cs_dep_op(pred[i]));
        if (p >= po->bytes)
            continue;
        if (p < g)
            g = p;
        if (x->ops[cs_dep_op(pred[i])].rate < r)
            r = x->ops[cs_dep_op(pred[i])].rate;
    }
    *rate = g < size && r != INT64_MAX ? r : 0;
    return g;
}

static void calc_continue(exec_t *x, int32_t op);

static void set_progress(exec_t *x, int32_t op, int64_t bytes, int64_t rate);

static void regate(exec_t *x, int32_t op)
{
    op_state_t *s = &x->ops[op];
    const cs_op_t *o = cs_program_op(x->prog, op);
    cs_tick_t now = cs_sim_now(x->sim);
    int64_t r, g;
    if (s->state != OP_STARTED)
        return;
    g = stream_gate(x, op, &r);
    if (g == ramp_at(s->gate, s->gate_rate, s->gate_ref, now, o->bytes) && r == s->gate_rate)
        return;
    s->gate = g;
    s->gate_rate = r;
    s->gate_ref = now;
    if (o->kind == CS_OP_SEND || o->kind == CS_OP_MCAST) {
        int n = cs_program_npeers(x->prog, o);
        for (int i = 0; i < n; i++)
            if (i == 0 || x->msgs[s->msg + i].net_id != x->msgs[s->msg + i - 1].net_id)
                cs_net_gate_rate(x->net, x->msgs[s->msg + i].net_id, g, r);
    } else if (o->kind == CS_OP_CALC) {
        if (x->env->reduce_num == 0 && o->ticks == 0) {
            /* free reduction (the Cerebras add is part of the send or
             * store): the calc passes its gate straight on */
            set_progress(x, op, g, r);
            if (g >= o->bytes)
                cs_sim_at(x->sim, now, x->h_calc, (uint32_t)op, 0);
        } else {
            calc_continue(x, op);
        }
    }
}

static void propagate_progress(exec_t *x, int32_t op)
{
    int n;
    const cs_dep_t *succ = cs_program_succs(x->prog, op, &n);
    for (int i = 0; i < n; i++)
        if (cs_dep_kind(succ[i]) == CS_DEP_STREAM)
            regate(x, cs_dep_op(succ[i]));
}

static void set_progress(exec_t *x, int32_t op, int64_t bytes, int64_t rate)
{
    op_state_t *s = &x->ops[op];
    cs_tick_t now = cs_sim_now(x->sim);
    /* a report replaces the previous one, which was a forecast: a stream
     * that stops arrives one unit short of what its rate promised for this
     * tick, so only the last reported base is a floor */
    if (bytes < s->progress || (bytes == progress_now(x, op) && rate == s->rate))
        return;
    s->progress = bytes;
    s->rate = bytes < cs_program_op(x->prog, op)->bytes ? rate : 0;
    s->ref = now;
    propagate_progress(x, op);
}

/* ---- calc on the rank's CPU ------------------------------------------ */

static cs_tick_t calc_fixed_ticks(exec_t *x, const cs_op_t *o)
{
    if (x->calc_scale == 1.0)
        return o->ticks;
    return (cs_tick_t)llround((double)o->ticks * x->calc_scale);
}

static cs_tick_t reduce_ticks(exec_t *x, int64_t bytes)
{
    __int128 v = (__int128)bytes * x->env->reduce_num;
    return (cs_tick_t)((v + x->env->reduce_den - 1) / x->env->reduce_den);
}

static int has_stream_preds(exec_t *x, int32_t op)
{
    int n;
    const cs_dep_t *pred = cs_program_preds(x->prog, op, &n);
    for (int i = 0; i < n; i++)
        if (cs_dep_kind(pred[i]) == CS_DEP_STREAM)
            return 1;
    return 0;
}

static void calc_begin(exec_t *x, int32_t op)
{
    const cs_op_t *o = cs_program_op(x->prog, op);
    rank_state_t *r = &x->ranks[o->rank];
    cs_tick_t now = cs_sim_now(x->sim);
    r->cpu_op = op;
    on_started(x, op);
    if (o->bytes > 0 && has_stream_preds(x, op)) {
        x->ops[op].gate = -1; /* so that regate takes the first gate */
        x->ops[op].busy_until = -1;
        regate(x, op);
        return;
    }
    cs_sim_at(x->sim,
              cs_net_cpu(x->net, x->node[o->rank], now,
                         calc_fixed_ticks(x, o) + reduce_ticks(x, o->bytes)),
              x->h_calc, (uint32_t)op, 0);
}

/* Streaming calc: reduce the next available chunk, one unit at a time. */
static void calc_continue(exec_t *x, int32_t op)
{
    op_state_t *s = &x->ops[op];
    const cs_op_t *o = cs_program_op(x->prog, op);
    int64_t chunk;
    cs_tick_t now = cs_sim_now(x->sim);
    int64_t want = o->bytes - s->progress;
    if (s->busy_until >= 0 || s->progress >= o->bytes)
        return;
    if (want > x->env->net->unit_bytes)
        want = x->env->net->unit_bytes;
    chunk = ramp_at(s->gate, s->gate_rate, s->gate_ref, now, o->bytes) - s->progress;
    if (chunk < want && s->gate_rate > 0) {
        /* the gate is rising: come back when a whole unit is there */
        s->busy_until = now + (want - chunk + s->gate_rate - 1) / s->gate_rate;
        cs_sim_at(x->sim, s->busy_until, x->h_wake, (uint32_t)op, 0);
        return;
    }
    if (chunk <= 0)
        return;
    if (chunk > want)
        chunk = want;
    s->busy_until = cs_sim_now(x->sim) + reduce_ticks(x, s->progress + chunk) -
                    reduce_ticks(x, s->progress);
    cs_sim_at(x->sim, s->busy_until, x->h_calc, (uint32_t)op, (uint64_t)chunk);
}

static void cpu_next(exec_t *x, int rank)
{
    rank_state_t *r = &x->ranks[rank];
    r->cpu_op = NONE;
    if (r->cpu_head != NONE) {
        int32_t op = r->cpu_head;
        r->cpu_head = x->ops[op].next;
        if (r->cpu_head == NONE)
            r->cpu_tail = NONE;
        calc_begin(x, op);
    }
}

static void on_wake(void *ctx, const cs_event_t *ev)
{
    exec_t *x = ctx;
    x->ops[ev->a].busy_until = -1;
    calc_continue(x, (int32_t)ev->a);
    drain(x);
}

static void on_calc_event(void *ctx, const cs_event_t *ev)
{
    exec_t *x = ctx;
    int32_t op = (int32_t)ev->a;
    op_state_t *s = &x->ops[op];
    const cs_op_t *o = cs_program_op(x->prog, op);
    if (ev->b) { /* a streamed chunk finished */
        s->busy_until = -1;
        set_progress(x, op, s->progress + (int64_t)ev->b, 0);
        if (s->progress < o->bytes) {
            calc_continue(x, op);
            drain(x);
            return;
        }
        cs_tick_t fixed = calc_fixed_ticks(x, o);
        if (fixed) {
            s->busy_until = cs_sim_now(x->sim) + fixed;
            cs_sim_at(x->sim, s->busy_until, x->h_calc, (uint32_t)op, 0);
            drain(x);
            return;
        }
    }
    on_done(x, op);
    cpu_next(x, o->rank);
    drain(x);
}

/* ---- messages -------------------------------------------------------- */

static int accepts(const cs_op_t *recv, const xmsg_t *m)
{
    return (recv->peer == CS_ANY || recv->peer == m->src) &&
           (recv->tag == CS_ANY || recv->tag == m->tag);
}

static void recv_maybe_done(exec_t *x, int32_t rop)
{
    op_state_t *s = &x->ops[rop];
    if (s->state == OP_STARTED && s->msg != NONE && x->msgs[s->msg].done) {
        const xmsg_t *m = &x->msgs[s->msg];
        const cs_op_t *ro = cs_program_op(x->prog, rop);
        if (x->obs && cs_program_data(x->prog, rop) && cs_program_data(x->prog, m->send_op))
            x->obs->recv_done(x->obs->ctx, rop, ro->rank, cs_program_data(x->prog, rop),
                              cs_program_data(x->prog, m->send_op), m->token);
        on_done(x, rop);
    }
}

static void match(exec_t *x, int32_t rop, int32_t mid)
{
    xmsg_t *m = &x->msgs[mid];
    const cs_op_t *r = cs_program_op(x->prog, rop);
    if (m->bytes > r->bytes) {
        char d[200];
        cs_program_describe(x->prog, rop, d, sizeof d);
        fail(x, CS_ERR_RUNTIME,
             "rank %d: a %lld-byte message from rank %d (tag %d) does not fit the matching %s",
             r->rank, (long long)m->bytes, m->src, m->tag, d);
        return;
    }
    m->recv_op = rop;
    x->ops[rop].msg = mid;
    cs_net_matched(x->net, m->net_id, (uint64_t)mid);
    m = &x->msgs[mid];
    if (m->arrived || m->rate)
        set_progress(x, rop, ramp_at(m->arrived, m->rate, m->ref, cs_sim_now(x->sim), m->bytes),
                     m->rate);
    recv_maybe_done(x, rop);
}

static int32_t new_msg(exec_t *x, int32_t send_op, int src, int dst, int tag, int64_t bytes)
{
    if (x->nmsgs == x->cap_msgs) {
        x->cap_msgs = x->cap_msgs ? x->cap_msgs * 2 : 1024;
        x->msgs = cs_realloc(x->msgs, (size_t)x->cap_msgs * sizeof *x->msgs);
    }
    xmsg_t *m = &x->msgs[x->nmsgs];
    memset(m, 0, sizeof *m);
    m->send_op = send_op;
    m->recv_op = NONE;
    m->src = src;
    m->dst = dst;
    m->tag = tag;
    m->bytes = bytes;
    m->next = NONE;
    return x->nmsgs++;
}

/* Routes a new message to the oldest posted recv that accepts it, or to the
 * unexpected list. */
static void deliver_to_matching(exec_t *x, int32_t mid)
{
    xmsg_t *m = &x->msgs[mid];
    rank_state_t *r = &x->ranks[m->dst];
    int32_t prev = NONE;
    for (int32_t rop = r->posted_head; rop != NONE; prev = rop, rop = x->ops[rop].next) {
        if (!accepts(cs_program_op(x->prog, rop), m))
            continue;
        if (prev == NONE)
            r->posted_head = x->ops[rop].next;
        else
            x->ops[prev].next = x->ops[rop].next;
        if (r->posted_tail == rop)
            r->posted_tail = prev;
        match(x, rop, mid);
        return;
    }
    if (r->unexp_tail == NONE)
        r->unexp_head = mid;
    else
        x->msgs[r->unexp_tail].next = mid;
    r->unexp_tail = mid;
}

static void take_token(exec_t *x, int32_t op, int32_t mid)
{
    const cs_op_t *o = cs_program_op(x->prog, op);
    if (x->obs && cs_program_data(x->prog, op))
        x->msgs[mid].token = x->obs->send_start(x->obs->ctx, op, o->rank, cs_program_data(x->prog, op));
}

static void start_send(exec_t *x, int32_t op)
{
    const cs_op_t *o = cs_program_op(x->prog, op);
    op_state_t *s = &x->ops[op];
    int64_t rate = 0;
    int64_t gate = has_stream_preds(x, op) ? stream_gate(x, op, &rate) : o->bytes;
    int n = cs_program_npeers(x->prog, o);
    const int32_t *peers = o->kind == CS_OP_SEND ? &o->peer : cs_program_mcast_peers(x->prog, o);
    int32_t first = NONE;
    s->gate = gate;
    s->gate_rate = rate;
    s->gate_ref = cs_sim_now(x->sim);
    for (int i = 0; i < n; i++) {
        int32_t mid = new_msg(x, op, o->rank, peers[i], o->tag, o->bytes);
        if (first == NONE)
            first = mid;
    }
    s->msg = first;
    s->pending = n;
    on_started(x, op);
    for (int i = 0; i < n; i++)
        take_token(x, op, first + i);
    if (n > 1 && cs_net_has_mcast(x->net)) {
        /* the network copies it (router fan-out): one post */
        int *dst = cs_malloc((size_t)n * sizeof *dst);
        uint64_t *users = cs_malloc((size_t)n * sizeof *users);
        for (int i = 0; i < n; i++) {
            dst[i] = x->node[peers[i]];
            users[i] = (uint64_t)(first + i);
        }
        uint32_t id = cs_net_post_mcast(x->net, x->node[o->rank], n, dst, o->bytes, gate,
                                        x->watch, users);
        for (int i = 0; i < n; i++)
            x->msgs[first + i].net_id = id;
        free(dst);
        free(users);
        if (rate)
            cs_net_gate_rate(x->net, id, gate, rate);
    } else {
        /* a unicast, or an mcast without network support: unicasts posted in
         * destination order; the send port serialises them */
        for (int i = 0; i < n; i++) {
            uint32_t id = cs_net_post(x->net, x->node[o->rank], x->node[peers[i]], o->bytes, gate,
                                      x->watch, (uint64_t)(first + i));
            x->msgs[first + i].net_id = id;
            if (rate)
                cs_net_gate_rate(x->net, id, gate, rate);
        }
    }
    x->res->messages += n;
    for (int i = 0; i < n; i++)
        deliver_to_matching(x, first + i);
}

static void start_recv(exec_t *x, int32_t rop)
{
    const cs_op_t *o = cs_program_op(x->prog, rop);
    rank_state_t *r = &x->ranks[o->rank];
    int32_t prev = NONE;
    on_started(x, rop);
    for (int32_t mid = r->unexp_head; mid != NONE; prev = mid, mid = x->msgs[mid].next) {
        if (!accepts(o, &x->msgs[mid]))
            continue;
        if (prev == NONE)
            r->unexp_head = x->msgs[mid].next;
        else
            x->msgs[prev].next = x->msgs[mid].next;
        if (r->unexp_tail == mid)
            r->unexp_tail = prev;
        match(x, rop, mid);
        return;
    }
    x->ops[rop].next = NONE;
    if (r->posted_tail == NONE)
        r->posted_head = rop;
    else
        x->ops[r->posted_tail].next = rop;
    r->posted_tail = rop;
}

static void start_op(exec_t *x, int32_t op)
{
    const cs_op_t *o = cs_program_op(x->prog, op);
    switch (o->kind) {
    case CS_OP_SEND:
    case CS_OP_MCAST:
        start_send(x, op);
        break;
    case CS_OP_RECV:
        start_recv(x, op);
        break;
    default: {
        rank_state_t *r = &x->ranks[o->rank];
        if (r->cpu_op == NONE) {
            calc_begin(x, op);
        } else {
            x->ops[op].next = NONE;
            if (r->cpu_tail == NONE)
                r->cpu_head = op;
            else
                x->ops[r->cpu_tail].next = op;
            r->cpu_tail = op;
        }
    }
    }
}

static void drain(exec_t *x)
{
    if (x->draining)
        return;
    x->draining = 1;
    while (x->work_head < x->work_tail && !x->err_code)
        start_op(x, x->work[x->work_head++]);
    x->work_head = x->work_tail = 0;
    x->draining = 0;
}

/* net hooks.  Both may re-enter the executor (progress propagates to
 * streaming ops, which may post messages and so grow x->msgs): they copy what
 * they need from the message record before calling out. */
static void hook_progress(void *ctx, uint64_t user, int64_t bytes, int64_t rate, cs_tick_t now)
{
    exec_t *x = ctx;
    int32_t sop = x->msgs[user].send_op, rop = x->msgs[user].recv_op;
    x->msgs[user].arrived = bytes;
    x->msgs[user].rate = rate;
    x->msgs[user].ref = now;
    if (rop != NONE)
        set_progress(x, rop, bytes, rate);
    if (cs_program_op(x->prog, sop)->kind == CS_OP_SEND)
        set_progress(x, sop, bytes, rate);
    drain(x);
}

static void hook_completed(void *ctx, uint64_t user, cs_tick_t now)
{
    exec_t *x = ctx;
    int32_t sop = x->msgs[user].send_op, rop = x->msgs[user].recv_op;
    int64_t bytes = x->msgs[user].bytes;
    (void)now;
    x->msgs[user].done = 1;
    x->msgs[user].arrived = bytes;
    x->msgs[user].rate = 0;
    if (!cs_net_late_release(x->net) && --x->ops[sop].pending == 0)
        on_done(x, sop);
    if (rop != NONE) {
        set_progress(x, rop, bytes, 0);
        recv_maybe_done(x, rop);
    }
    drain(x);
}

/* The sender's side of a delivered message finished (engines with
 * late_release: e.g. the Cell's ACK reached the sender). */
static void hook_released(void *ctx, uint64_t user, cs_tick_t now)
{
    exec_t *x = ctx;
    int32_t sop = x->msgs[user].send_op;
    (void)now;
    if (--x->ops[sop].pending == 0)
        on_done(x, sop);
    drain(x);
}

/* ---- deadlock report ------------------------------------------------- */

static int report_stuck(exec_t *x)
{
    char buf[CS_ERROR_MSG_MAX - 64] = "";
    size_t used = 0;
    int shown = 0, nranks = cs_program_nranks(x->prog), stuck_ranks = 0;
    int32_t nops = cs_program_nops(x->prog);
    /* one line per stuck rank: its first unfinished op and why */
    int32_t *first_op = cs_malloc((size_t)nranks * sizeof *first_op);
    for (int r = 0; r < nranks; r++)
        first_op[r] = NONE;
    for (int32_t op = 0; op < nops; op++) {
        const cs_op_t *o = cs_program_op(x->prog, op);
        if (x->ops[op].state != OP_DONE && first_op[o->rank] == NONE)
            first_op[o->rank] = op;
    }
    for (int r = 0; r < nranks; r++) {
        int32_t op = first_op[r];
        char d[256], line[400];
        const char *why;
        if (op == NONE)
            continue;
        /* the most telling op of the rank: a posted recv if any */
        if (x->ranks[r].posted_head != NONE)
            op = x->ranks[r].posted_head;
        stuck_ranks++;
        if (shown >= 8)
            continue;
        cs_program_describe(x->prog, op, d, sizeof d);
        switch (x->ops[op].state) {
        case OP_WAIT: why = "waits for its dependencies"; break;
        case OP_READY: why = "is ready but was never started"; break;
        default:
            why = cs_program_op(x->prog, op)->kind == CS_OP_RECV ? "has no matching send"
                                                                 : "never completed";
        }
        snprintf(line, sizeof line, "%srank %d: %s %s", shown ? "; " : "", r, d, why);
        if (used + strlen(line) < sizeof buf - 1) {
            memcpy(buf + used, line, strlen(line) + 1);
            used += strlen(line);
        }
        shown++;
    }
    free(first_op);
    /* units left in the network: say where, after the ranks */
    char net[CS_ERROR_MSG_MAX] = "";
    if (cs_net_active(x->net) > 0) {
        cs_error_t e;
        cs_net_explain_stuck(x->net, &e);
        snprintf(net, sizeof net, "; %.400s", e.msg);
    }
    return cs_error_set(x->err, CS_ERR_DEADLOCK,
                        "%s%sdeadlock at t=%lld: %d of %d ops never completed on %d rank(s): %s%s%.300s",
                        cs_program_source(x->prog) ? cs_program_source(x->prog) : "",
                        cs_program_source(x->prog) ? ": " : "", (long long)cs_sim_now(x->sim),
                        nops - x->done_ops, nops, stuck_ranks, buf,
                        shown < stuck_ranks ? "; ..." : "", net);
}

static int report_unreceived(exec_t *x)
{
    int nranks = cs_program_nranks(x->prog), count = 0;
    int32_t example = NONE;
    for (int r = 0; r < nranks; r++)
        for (int32_t mid = x->ranks[r].unexp_head; mid != NONE; mid = x->msgs[mid].next) {
            if (example == NONE)
                example = mid;
            count++;
        }
    if (!count)
        return CS_OK;
    char d[256];
    cs_program_describe(x->prog, x->msgs[example].send_op, d, sizeof d);
    return cs_error_set(x->err, CS_ERR_DEADLOCK,
                        "%s%s%d message(s) were sent but never received, e.g. rank %d: %s",
                        cs_program_source(x->prog) ? cs_program_source(x->prog) : "",
                        cs_program_source(x->prog) ? ": " : "", count, x->msgs[example].src, d);
}

/* ---- run ------------------------------------------------------------- */

static void on_poll(void *ctx, cs_tick_t now, uint64_t events)
{
    exec_t *x = ctx;
    x->opts->poll(x->opts->poll_ctx, now, x->done_ops, cs_program_nops(x->prog), events);
}

int cs_exec_run(const cs_exec_env_t *env, const cs_program_t *prog, const cs_exec_opts_t *o,
                cs_exec_result_t *res, cs_error_t *err)
{
    exec_t x;
    int rc;
    int nranks = cs_program_nranks(prog), nodes = cs_topo_nodes(env->topo);
    int32_t nops = cs_program_nops(prog);
    int32_t *identity = NULL;
    struct timespec t0, t1;
    cs_net_hooks_t hooks;

    memset(res, 0, sizeof *res);
    if (nranks > nodes)
        return cs_error_set(err, CS_ERR_RANGE,
                            "the program has %d ranks but the machine has only %d nodes", nranks,
                            nodes);
    if (o->rank_to_node)
        for (int r = 0; r < nranks; r++)
            if (o->rank_to_node[r] < 0 || o->rank_to_node[r] >= nodes)
                return cs_error_set(err, CS_ERR_RANGE, "rank %d is mapped to node %d, outside 0..%d",
                                    r, o->rank_to_node[r], nodes - 1);
    /* limits, checked before anything runs: the channel engine's mode may
     * count a message's units in 32 bits (packet mode does) */
    if (!env->net_new) {
        int64_t max_units = cs_net_mode_max_units(o->mode);
        for (int32_t i = 0; i < nops; i++) {
            const cs_op_t *op = cs_program_op(prog, i);
            if (op->kind != CS_OP_CALC && op->bytes / env->net->unit_bytes >= max_units) {
                char d[200];
                cs_program_describe(prog, i, d, sizeof d);
                return cs_error_set(err, CS_ERR_RANGE,
                                    "rank %d: %s has more than 2^32 units of %lld bytes; use a "
                                    "larger packet or fluid mode",
                                    op->rank, d, (long long)env->net->unit_bytes);
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    memset(&x, 0, sizeof x);
    x.env = env;
    x.prog = prog;
    x.res = res;
    x.err = err;
    if (!o->rank_to_node) {
        identity = cs_malloc((size_t)nranks * sizeof *identity);
        for (int r = 0; r < nranks; r++)
            identity[r] = r;
    }
    x.node = o->rank_to_node ? o->rank_to_node : identity;
    x.calc_scale = 1.0;
    x.obs = o->observer;
    x.opts = o;
    if (cs_program_time_unit(prog) > 0 && env->tick_seconds > 0)
        x.calc_scale = cs_program_time_unit(prog) / env->tick_seconds;

    res->nranks = nranks;
    res->rank_finish = cs_calloc((size_t)nranks, sizeof *res->rank_finish);
    res->ops = cs_malloc(((size_t)nops + 1) * sizeof *res->ops);
    for (int32_t i = 0; i < nops; i++)
        res->ops[i].start = res->ops[i].end = -1;
    res->sim = x.sim = cs_sim_new(o->queue);

    hooks.ctx = &x;
    hooks.started = NULL;
    hooks.progress = hook_progress;
    hooks.completed = hook_completed;
    hooks.released = hook_released;
    rc = env->net_new ? env->net_new(env->net_ctx, x.sim, &hooks, &x.net, err)
                      : cs_net_new(x.sim, env->topo, env->net, o->mode, &hooks, &x.net, err);
    if (rc) {
        free(identity);
        return rc;
    }
    res->net = x.net;
    if (o->bucket_width > 0)
        cs_net_enable_buckets(x.net, o->bucket_width, o->max_buckets > 1 ? o->max_buckets : 256);
    if (o->poll)
        cs_sim_set_poll(x.sim, (uint64_t)1 << 16, on_poll, &x);
    x.h_calc = cs_sim_register(x.sim, on_calc_event, &x);
    x.h_wake = cs_sim_register(x.sim, on_wake, &x);

    x.ops = cs_calloc((size_t)nops + 1, sizeof *x.ops);
    x.ranks = cs_malloc((size_t)nranks * sizeof *x.ranks);
    for (int r = 0; r < nranks; r++)
        x.ranks[r] = (rank_state_t){NONE, NONE, NONE, NONE, NONE, NONE, NONE};
    for (int32_t i = 0; i < nops; i++) {
        int n;
        const cs_dep_t *pred = cs_program_preds(prog, i, &n);
        x.ops[i].waiting = n;
        x.ops[i].msg = NONE;
        x.ops[i].next = NONE;
        for (int k = 0; k < n; k++)
            if (cs_dep_kind(pred[k]) == CS_DEP_STREAM)
                x.watch = 1;
        if (n == 0) {
            x.ops[i].state = OP_READY;
            work_push(&x, i);
        }
    }
    drain(&x);
    if (!x.err_code)
        cs_sim_run(x.sim);
    /* a rendezvous engine may hold transfers whose recv is posted only after
     * the send completes (an unsafe program under MPI): let it start them */
    while (!x.err_code && x.done_ops < nops && cs_net_idle(x.net) > 0)
        cs_sim_run(x.sim);

    rc = x.err_code;
    if (!rc)
        rc = cs_net_error(x.net, err);
    if (!rc && x.done_ops < nops)
        rc = report_stuck(&x);
    if (!rc)
        rc = report_unreceived(&x);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res->events = cs_sim_events(x.sim);
    res->queue_peak = cs_sim_queue_peak(x.sim);
    res->wall_seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (o->record_messages) {
        res->nmsgs = x.nmsgs;
        res->msgs = cs_malloc(((size_t)x.nmsgs + 1) * sizeof *res->msgs);
        for (int32_t i = 0; i < x.nmsgs; i++)
            res->msgs[i] = (cs_exec_msg_t){x.msgs[i].send_op, x.msgs[i].recv_op};
    }
    cs_sim_set_poll(x.sim, 0, NULL, NULL);
    free(x.ops);
    free(x.ranks);
    free(x.msgs);
    free(x.work);
    free(identity);
    return rc;
}

void cs_exec_result_destroy(cs_exec_result_t *res)
{
    if (!res)
        return;
    cs_net_free(res->net);
    cs_sim_free(res->sim);
    free(res->rank_finish);
    free(res->ops);
    free(res->msgs);
    memset(res, 0, sizeof *res);
}
