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
 *
 * Memory (issue 17: millions of ops).  What every op keeps is 12 bytes
 * (op_state_t); everything else lives only while it is needed:
 *   - streaming state (progress, gates, the chunk in progress) in a
 *     stream_t taken from a pool when an op with STREAM dependencies starts
 *     (a recv: when it is matched, as nothing arrives before) and given back
 *     when it completes; a finished op's progress is its size, an op that
 *     has not started (or an unmatched recv) has none;
 *   - messages (xmsg_t) in a pool: a message goes back when its recv has
 *     taken it and its send op has completed (after which no engine hook
 *     names it), so the pool holds the messages in flight or unexpected;
 *   - per-op start/end times only with opts.record_op_times.
 *
 * Protocols (core/proto.h, issue 36).  A send or mcast with a protocol
 * keeps its payload in op->bytes (what recvs match, what progress and
 * stream gates count); only the engine sees the wire bytes: posts and
 * gates are converted to wire bytes (cs_proto_to_wire), progress reports
 * back to data bytes (cs_proto_to_data), so every engine pays the flags
 * without knowing of them.  The protocol's latency delays the op's start
 * (an event h_proto, not the rank's CPU): the message enters the network
 * that much later, as NCCL's per-step synchronisation delays it.
 */
#include "engine/exec.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/checked.h"
#include "core/chunks.h"
#include "core/pool.h"
#include "core/progen.h"
#include "core/sim.h"

#define NONE (-1)

enum { OP_WAIT, OP_READY, OP_STARTED, OP_DONE };

/* Bits of op_state_t.count: enough for the dependencies of one op and the
 * destinations of one mcast (checked before the run). */
#define COUNT_BITS 27
#define COUNT_MAX ((1 << COUNT_BITS) - 1)
/* A machine's own engine counts a message's units of unit_bytes (its
 * natural segment: a Cell DMA command, a Groq vector) in int32: an
 * exclusive bound on bytes / unit_bytes (docs/limits.md) */
#define CS_EXEC_OWN_MAX_UNITS ((int64_t)INT32_MAX)

/* The per-op state; each field serves one phase of the op's life, which is
 * what keeps it at 12 bytes. */
typedef struct op_state {
    uint32_t state : 2;
    uint32_t stream_in : 1;  /* has STREAM predecessors (is gated) */
    uint32_t stream_out : 1; /* has STREAM successors (reports progress) */
    uint32_t start_out : 1;  /* has AFTER_START or STREAM successors: its start
                                satisfies some (on_started walks them only then) */
    /* WAIT/READY: unsatisfied dependencies; STARTED send/mcast: messages
     * whose sender side is not yet done */
    uint32_t count : COUNT_BITS;
    int32_t msg;  /* send/mcast: its first message; recv: the matched one */
    /* READY calc: next calc waiting for the CPU; STARTED recv not yet
     * matched: next posted recv; otherwise, while STARTED: the op's stream_t
     * (NONE if it has no STREAM dependency) */
    int32_t link;
} op_state_t;

/* Streaming state of a running op (see stream_of). */
typedef struct stream {
    int64_t progress;  /* bytes: recv arrived, send delivered, calc processed */
    int64_t rate;      /* progress grows by `rate` bytes per tick after `ref` */
    int64_t gate;      /* bytes allowed by stream predecessors */
    int64_t gate_rate; /* ... growing by gate_rate bytes per tick after `gate_ref` */
    cs_tick_t ref, gate_ref;
    cs_tick_t busy_until; /* streaming calc: chunk in progress ends */
} stream_t;

typedef struct xmsg {
    int32_t send_op, recv_op;
    int32_t src, dst; /* ranks */
    int32_t tag;      /* copies of the send op's, for matching */
    int32_t next;     /* unexpected list link */
    int32_t sib;      /* next message of the same mcast, or NONE */
    uint32_t net_id;
    int64_t arrived;
    int64_t rate;     /* arrived grows by rate bytes per tick after ref */
    cs_tick_t ref;
    uint64_t token;   /* observer's snapshot of the content */
    int64_t seq;      /* index in res->msgs (record_messages) */
    uint8_t done;     /* fully arrived */
    uint8_t taken;    /* its recv completed with it */
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
    cs_program_tables_t t; /* a whole program's tables (all NULL in a window) */
    cs_exec_result_t *res;
    cs_sim_t *sim;
    cs_net_t *net;
    const int32_t *node;
    cs_chunks_t st;     /* op_state_t per op: one flat chunk, or a window's */
    rank_state_t *ranks;
    cs_pool_t msgs;     /* xmsg_t */
    cs_pool_t streams;  /* stream_t */
    int64_t cap_rec;    /* capacity of res->msgs */
    int32_t *work;      /* FIFO of ops that became ready */
    int64_t work_head, work_tail, work_cap;
    int draining;
    int watch;          /* program has streaming deps: report unit progress */
    int32_t done_ops;
    int64_t max_units;  /* units a message may have (check_op) */
    double calc_scale;  /* program time unit -> ticks */
    int64_t calc_num, calc_den; /* ... as an exact fraction, or den 0 (core/checked.h) */
    uint32_t h_calc, h_wake, h_proto;
    cs_tick_t proto_lat[CS_PROTO_COUNT]; /* a message's latency per protocol */
    const cs_exec_observer_t *obs;
    const cs_exec_opts_t *opts;
    int err_code;
    cs_error_t *err;
    /* a windowed run (cs_exec_run_gen): the executor keeps the dependency
     * lists itself, as chains of edges, for the ops in the window */
    cs_progen_t *gen;
    int32_t nreg;       /* ops registered (their state exists) */
    int64_t work_unit, work_units; /* the work limit's unit and the units so far */
    int64_t *cnt, *order; /* absorb's sort of a batch's dependencies */
    int64_t cap_cnt, cap_order;
    int32_t frontier;   /* every op below is done and its messages gone */
    int joining;        /* inside join_complete: the frontier waits */
    int running;        /* the ops ready at time 0 are out */
    cs_chunks_t edges;  /* edge_t, in the order they were added */
    int64_t nedges;
    int32_t *edge_max;  /* per chunk of edges: the largest op they name */
    int64_t cap_edge_max;
    cs_chunks_t heads;  /* heads_t per op */
} exec_t;

/* A windowed run's dependency lists: an op's successors in id order (as
 * a whole program's tables have them) and its STREAM predecessors in the
 * order they were added (stream_gate reads no other).  Edges are appended
 * to chunks in the order the generator adds dependencies, which is nearly
 * op order, so that walking a list reads memory written at about the same
 * time (a pool's free list scattered them: a cache miss per edge, a fifth
 * of a windowed run); a chunk is given back once every op its edges name
 * is below the frontier (both ends of each edge are done then).  Op ids
 * are kept whole (not packed as cs_dep_t), so a window may pass 2^30. */
#define EDGE_SHIFT 14
#define EDGE_NONE ((int64_t)-1)
typedef struct edge {
    int64_t next;
    int32_t op;         /* the other op */
    int32_t kind;       /* cs_dep_kind_t */
} edge_t;

typedef struct heads {
    int64_t succ, succ_tail, spred;
} heads_t;

/* Op `id` of the program: straight from a whole program's table (the
 * per-op path reads it for every op), else through the window's chunks. */
static inline const cs_op_t *OP(const exec_t *x, int32_t id)
{
    return x->t.ops ? &x->t.ops[id] : cs_program_op(x->prog, id);
}

/* The bytes a send's or mcast's message puts on the wire (core/proto.h). */
static inline int64_t wire_of(const cs_op_t *o)
{
    return o->proto ? cs_proto_wire((cs_proto_t)o->proto, o->bytes) : o->bytes;
}

/* A gate (data bytes) and its slope as the engine counts them (wire
 * bytes); the slope rounds down, so that a forecast never runs ahead. */
static inline int64_t gate_wire(const cs_op_t *o, int64_t g)
{
    return o->proto ? cs_proto_to_wire((cs_proto_t)o->proto, o->bytes, g) : g;
}

static inline int64_t rate_scale(int64_t rate, int64_t num, int64_t den)
{
    return den > 0 && num != den ? (int64_t)((__int128)rate * num / den) : rate;
}

/* cs_chunks_at with the record's size known here: an index, not a
 * multiplication by the chunks' size (S is on every op's path, several
 * times). */
static inline op_state_t *S(const exec_t *x, int32_t op)
{
    int64_t i = op; /* a flat run's shift is 39 */
    return (op_state_t *)(void *)x->st.chunk[i >> x->st.shift] + (i & x->st.mask);
}

static inline heads_t *H(const exec_t *x, int32_t op)
{
    int64_t i = op;
    return (heads_t *)(void *)x->heads.chunk[i >> x->heads.shift] + (i & x->heads.mask);
}

static inline edge_t *E(const exec_t *x, int64_t e)
{
    return (edge_t *)cs_chunks_at(&x->edges, e);
}

/* The successors of an op, or its STREAM predecessors, from either kind
 * of list. */
typedef struct dep_iter {
    const cs_dep_t *v;
    int n, i;
    int64_t e;
} dep_iter_t;

/* Starts it on op's successors (succ) or on its predecessors: in a
 * windowed run only the STREAM ones are kept, the only ones read. */
static inline void dep_iter(const exec_t *x, int32_t op, int succ, dep_iter_t *it)
{
    it->i = 0;
    it->v = NULL;
    if (x->gen) {
        it->e = succ ? H(x, op)->succ : H(x, op)->spred;
    } else {
        const uint32_t *start = succ ? x->t.succ_start : x->t.pred_start;
        it->e = EDGE_NONE;
        it->v = (succ ? x->t.succs : x->t.preds) + start[op];
        it->n = (int)(start[op + 1] - start[op]);
    }
}

/* The next dependency: the other op and the kind. */
static inline int dep_next(const exec_t *x, dep_iter_t *it, int32_t *op, cs_dep_kind_t *kind)
{
    if (it->v) {
        if (it->i >= it->n)
            return 0;
        *op = cs_dep_op(it->v[it->i]);
        *kind = cs_dep_kind(it->v[it->i++]);
        return 1;
    }
    if (it->e == EDGE_NONE) /* a windowed run's chain (the tables set v) */
        return 0;
    const edge_t *e = E(x, it->e);
    *op = e->op;
    *kind = (cs_dep_kind_t)e->kind;
    it->e = e->next;
    return 1;
}

void cs_exec_opts_default(cs_exec_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->mode = CS_NET_PACKET;
    o->queue = CS_QUEUE_DEFAULT;
    o->max_buckets = 256;
    o->max_work = CS_EXEC_WORK_LIMIT;
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

/* Stops the run with the error already in x->err (from a callee). */
static int fail_with(exec_t *x, int code)
{
    if (!x->err_code) {
        x->err_code = code;
        cs_sim_stop(x->sim);
    }
    return x->err_code;
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

/* Typed access with the record size known at compile time (the hot path). */
static xmsg_t *msg_at(exec_t *x, int64_t mid) { return (xmsg_t *)(void *)x->msgs.items + mid; }
static stream_t *stream_at(exec_t *x, int32_t i) { return (stream_t *)(void *)x->streams.items + i; }

/* The streaming state of `op`, or NULL while it has none (see op_state_t:
 * only a STARTED op with STREAM dependencies has one, and a recv only once
 * it is matched). */
static stream_t *stream_of(exec_t *x, int32_t op)
{
    const op_state_t *s = S(x, op);
    if (s->state != OP_STARTED || !(s->stream_in | s->stream_out) || s->link == NONE)
        return NULL;
    if (s->msg == NONE && OP(x, op)->kind == CS_OP_RECV)
        return NULL; /* link is the posted-recv list */
    return stream_at(x, s->link);
}

/* Gives `op` its streaming state if it has STREAM dependencies. */
static void stream_take(exec_t *x, int32_t op)
{
    op_state_t *s = S(x, op);
    s->link = s->stream_in | s->stream_out ? cs_pool_get(&x->streams) : NONE;
}

/* ---- dependency bookkeeping ------------------------------------------ */

static void join_complete(exec_t *x, int32_t op);
static int make_closed(exec_t *x, int32_t op);

/* op's last dependency was satisfied */
static void ready(exec_t *x, int32_t op)
{
    S(x, op)->state = OP_READY;
    if (OP(x, op)->join)
        join_complete(x, op);
    else
        work_push(x, op);
}

/* Inline: called for every dependency, and most do not make op ready. */
static inline void satisfy(exec_t *x, int32_t op)
{
    op_state_t *s = S(x, op);
    CS_ASSERT(s->count > 0);
    if (--s->count == 0 && s->state == OP_WAIT)
        ready(x, op);
}

/* The span op belongs to (cs_exec_opts_t.span_first), or NULL: a binary
 * search for the last span that starts at or before op. */
static cs_op_times_t *span_of(exec_t *x, int32_t op)
{
    const cs_exec_opts_t *o = x->opts;
    int32_t lo = 0, hi = o->nspans; /* the answer is below hi */
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (o->span_first[mid] <= op)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || op >= o->span_end[lo - 1])
        return NULL;
    return &x->res->spans[lo - 1];
}

static void on_started(exec_t *x, int32_t op)
{
    dep_iter_t it;
    int32_t dop;
    cs_dep_kind_t dk;
    if (x->res->ops)
        x->res->ops[op].start = cs_sim_now(x->sim);
    if (x->res->spans) {
        cs_op_times_t *sp = span_of(x, op);
        if (sp && sp->start < 0) /* time never goes back: the first start is the earliest */
            sp->start = cs_sim_now(x->sim);
    }
    S(x, op)->state = OP_STARTED;
    if (!S(x, op)->start_out) /* on_done walks the successors: once is enough */
        return;
    for (dep_iter(x, op, 1, &it); dep_next(x, &it, &dop, &dk);)
        if (dk != CS_DEP_AFTER)
            satisfy(x, dop);
}

static void propagate_progress(exec_t *x, int32_t op);
static void msg_release(exec_t *x, int32_t mid);

static void on_done(exec_t *x, int32_t op)
{
    dep_iter_t it;
    int32_t dop;
    cs_dep_kind_t dk;
    const cs_op_t *o = OP(x, op);
    op_state_t *s = S(x, op);
    cs_tick_t now = cs_sim_now(x->sim);
    CS_ASSERT(s->state == OP_STARTED);
    if ((s->stream_in | s->stream_out) && s->link != NONE) /* a started recv is matched */
        cs_pool_put(&x->streams, s->link);
    s->state = OP_DONE; /* its progress is now its size (progress_now) */
    s->link = NONE;
    if (o->kind == CS_OP_SEND || o->kind == CS_OP_MCAST) {
        /* the messages whose recvs already took them are not needed any
         * more; count goes on counting the others (they name this op) */
        CS_ASSERT(s->count == 0);
        for (int32_t mid = s->msg, next; mid != NONE; mid = next) {
            next = msg_at(x, mid)->sib;
            if (msg_at(x, mid)->taken)
                msg_release(x, mid);
            else
                s->count++;
        }
        s->msg = NONE;
    }
    if (x->res->ops)
        x->res->ops[op].end = now;
    if (x->res->spans) {
        cs_op_times_t *sp = span_of(x, op);
        if (sp)
            sp->end = now; /* the last end so far is the latest */
    }
    if (now > x->res->rank_finish[o->rank])
        x->res->rank_finish[o->rank] = now;
    if (now > x->res->finish)
        x->res->finish = now;
    x->done_ops++;
    for (dep_iter(x, op, 1, &it); dep_next(x, &it, &dop, &dk);)
        if (dk == CS_DEP_AFTER)
            satisfy(x, dop);
    if (S(x, op)->stream_out)
        propagate_progress(x, op);
    if (x->gen) { /* nothing walks these lists again (absorb frees them) */
        heads_t *h = H(x, op);
        h->succ = h->succ_tail = h->spred = EDGE_NONE;
    }
}

/* A join completes the moment it is ready (core/program.h): here, inside
 * the walk of the successors of the op that readied it, so that its own
 * successors join the FIFO of ready ops where they would have with direct
 * edges (in id order, at the join's place in that walk, the join's id
 * lying below theirs), instead of after the tick's other events as a calc
 * on the CPU would.  A chain of joins recurses once per join (a join's
 * successors are a stage's ops, rarely another join).  In a window, the
 * join's successors must exist first (make_closed); the frontier stays
 * where it is meanwhile (absorb), since the op whose walk this is may be
 * the frontier's next op and is read after the walk. */
static void join_complete(exec_t *x, int32_t op)
{
    if (x->gen) {
        int rc;
        x->joining++;
        rc = make_closed(x, op);
        x->joining--;
        if (rc)
            return;
    }
    on_started(x, op);
    on_done(x, op);
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
    const stream_t *st = stream_of(x, op);
    int64_t size = OP(x, op)->bytes;
    if (S(x, op)->state == OP_DONE)
        return size;
    return st ? ramp_at(st->progress, st->rate, st->ref, cs_sim_now(x->sim), size) : 0;
}

/* Bytes of `op` that its stream predecessors allow now, and the rate at
 * which that grows: the smallest progress among the unfinished
 * predecessors, growing at the smallest of their rates (exact for one
 * predecessor; for several it may lag until the next progress report,
 * which every rate change triggers). */
static int64_t stream_gate(exec_t *x, int32_t op, int64_t *rate)
{
    dep_iter_t it;
    int32_t dop;
    cs_dep_kind_t dk;
    int64_t size = OP(x, op)->bytes, g = size, r = INT64_MAX;
    for (dep_iter(x, op, 0, &it); dep_next(x, &it, &dop, &dk);) {
        if (dk != CS_DEP_STREAM || dop < x->frontier)
            continue; /* below the frontier: done (and released) */
        const cs_op_t *po = OP(x, dop);
        const stream_t *ps = stream_of(x, dop);
        int64_t p = progress_now(x, dop), pr = ps ? ps->rate : 0;
        if (p >= po->bytes)
            continue;
        if (p < g)
            g = p;
        if (pr < r)
            r = pr;
    }
    *rate = g < size && r != INT64_MAX ? r : 0;
    return g;
}

static void calc_continue(exec_t *x, int32_t op);

static void set_progress(exec_t *x, int32_t op, int64_t bytes, int64_t rate);

static void regate(exec_t *x, int32_t op)
{
    const cs_op_t *o = OP(x, op);
    stream_t *st = stream_of(x, op);
    cs_tick_t now = cs_sim_now(x->sim);
    int64_t r, g;
    if (!st || o->kind == CS_OP_RECV) /* a recv's gate would gate nothing */
        return;
    g = stream_gate(x, op, &r);
    if (g == ramp_at(st->gate, st->gate_rate, st->gate_ref, now, o->bytes) && r == st->gate_rate)
        return;
    st->gate = g;
    st->gate_rate = r;
    st->gate_ref = now;
    if (o->kind == CS_OP_SEND || o->kind == CS_OP_MCAST) {
        /* one gate per network message (a native mcast is one for all) */
        uint32_t last = 0;
        for (int32_t mid = S(x, op)->msg; mid != NONE; mid = msg_at(x, mid)->sib) {
            uint32_t id = msg_at(x, mid)->net_id;
            if (mid == S(x, op)->msg || id != last)
                cs_net_gate_rate(x->net, id, gate_wire(o, g), rate_scale(r, wire_of(o), o->bytes));
            last = id;
        }
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
    dep_iter_t it;
    int32_t dop;
    cs_dep_kind_t dk;
    for (dep_iter(x, op, 1, &it); dep_next(x, &it, &dop, &dk);)
        if (dk == CS_DEP_STREAM)
            regate(x, dop);
}

/* Only ops with streaming state keep progress: for the others nobody
 * reads it (no STREAM successor, no own chunks to count). */
static void set_progress(exec_t *x, int32_t op, int64_t bytes, int64_t rate)
{
    stream_t *st = stream_of(x, op);
    cs_tick_t now = cs_sim_now(x->sim);
    if (!st)
        return;
    /* a report replaces the previous one, which was a forecast: a stream
     * that stops arrives one unit short of what its rate promised for this
     * tick, so only the last reported base is a floor */
    if (bytes < st->progress || (bytes == progress_now(x, op) && rate == st->rate))
        return;
    st->progress = bytes;
    st->rate = bytes < OP(x, op)->bytes ? rate : 0;
    st->ref = now;
    if (S(x, op)->stream_out)
        propagate_progress(x, op);
}

/* ---- calc on the rank's CPU ------------------------------------------ */

/* Both saturate to CS_TICK_OVER (core/checked.h): the kernel then stops
 * the run and report_overflow names the op. */
static cs_tick_t calc_fixed_ticks(exec_t *x, const cs_op_t *o)
{
    if (x->calc_den)
        return cs_tick_muldiv_round(o->ticks, x->calc_num, x->calc_den);
    return cs_tick_from_double((double)o->ticks * x->calc_scale);
}

static cs_tick_t reduce_ticks(exec_t *x, int64_t bytes)
{
    return cs_tick_muldiv_ceil(bytes, x->env->reduce_num, x->env->reduce_den);
}

static void calc_begin(exec_t *x, int32_t op)
{
    const cs_op_t *o = OP(x, op);
    rank_state_t *r = &x->ranks[o->rank];
    cs_tick_t now = cs_sim_now(x->sim);
    r->cpu_op = op;
    stream_take(x, op);
    on_started(x, op);
    if (o->bytes > 0 && S(x, op)->stream_in) {
        stream_t *st = stream_of(x, op);
        st->gate = -1; /* so that regate takes the first gate */
        st->busy_until = -1;
        regate(x, op);
        return;
    }
    cs_sim_at(x->sim,
              cs_net_cpu(x->net, x->node[o->rank], now,
                         cs_tick_add(calc_fixed_ticks(x, o), reduce_ticks(x, o->bytes))),
              x->h_calc, (uint32_t)op, 0);
}

/* Streaming calc: reduce the next available chunk, one unit at a time. */
static void calc_continue(exec_t *x, int32_t op)
{
    stream_t *s = stream_of(x, op);
    const cs_op_t *o = OP(x, op);
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
        s->busy_until = cs_tick_add(now, (want - chunk + s->gate_rate - 1) / s->gate_rate);
        cs_sim_at(x->sim, s->busy_until, x->h_wake, (uint32_t)op, 0);
        return;
    }
    if (chunk <= 0)
        return;
    if (chunk > want)
        chunk = want;
    s->busy_until = cs_tick_add(cs_sim_now(x->sim), reduce_ticks(x, s->progress + chunk) -
                                                    reduce_ticks(x, s->progress));
    cs_sim_at(x->sim, s->busy_until, x->h_calc, (uint32_t)op, (uint64_t)chunk);
}

static void cpu_next(exec_t *x, int rank)
{
    rank_state_t *r = &x->ranks[rank];
    r->cpu_op = NONE;
    if (r->cpu_head != NONE) {
        int32_t op = r->cpu_head;
        r->cpu_head = S(x, op)->link;
        if (r->cpu_head == NONE)
            r->cpu_tail = NONE;
        calc_begin(x, op);
    }
}

static void on_wake(void *ctx, const cs_event_t *ev)
{
    exec_t *x = ctx;
    stream_t *st = stream_of(x, (int32_t)ev->a);
    CS_ASSERT(st);
    st->busy_until = -1;
    calc_continue(x, (int32_t)ev->a);
    drain(x);
}

static void on_calc_event(void *ctx, const cs_event_t *ev)
{
    exec_t *x = ctx;
    int32_t op = (int32_t)ev->a;
    const cs_op_t *o = OP(x, op);
    if (ev->b) { /* a streamed chunk finished */
        stream_t *s = stream_of(x, op);
        s->busy_until = -1;
        set_progress(x, op, s->progress + (int64_t)ev->b, 0);
        s = stream_of(x, op);
        if (s->progress < o->bytes) {
            calc_continue(x, op);
            drain(x);
            return;
        }
        cs_tick_t fixed = calc_fixed_ticks(x, o);
        if (fixed) {
            s->busy_until = cs_tick_add(cs_sim_now(x->sim), fixed); /* may saturate */
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

/* A message goes back to the pool once its recv took it and its send op
 * completed: no hook names it after both. */
static void msg_release(exec_t *x, int32_t mid) { cs_pool_put(&x->msgs, mid); }

static void recv_maybe_done(exec_t *x, int32_t rop)
{
    op_state_t *s = S(x, rop);
    if (s->state == OP_STARTED && s->msg != NONE && msg_at(x, s->msg)->done) {
        int32_t mid = s->msg;
        xmsg_t *m = msg_at(x, mid);
        const cs_op_t *ro = OP(x, rop);
        if (x->obs && cs_program_data(x->prog, rop) && cs_program_data(x->prog, m->send_op))
            x->obs->recv_done(x->obs->ctx, rop, ro->rank, cs_program_data(x->prog, rop),
                              cs_program_data(x->prog, m->send_op), m->token);
        on_done(x, rop);
        m = msg_at(x, mid);
        m->taken = 1;
        if (S(x, m->send_op)->state == OP_DONE) {
            S(x, m->send_op)->count--; /* see on_done */
            msg_release(x, mid);
        }
    }
}

static void match(exec_t *x, int32_t rop, int32_t mid)
{
    xmsg_t *m = msg_at(x, mid);
    const cs_op_t *r = OP(x, rop);
    const cs_op_t *so = OP(x, m->send_op);
    if (so->bytes > r->bytes) {
        char d[200];
        cs_program_describe(x->prog, rop, d, sizeof d);
        fail(x, CS_ERR_RUNTIME,
             "rank %d: a %lld-byte message from rank %d (tag %d) does not fit the matching %s",
             r->rank, (long long)so->bytes, so->rank, so->tag, d);
        return;
    }
    m->recv_op = rop;
    if (x->opts->record_messages)
        x->res->msgs[m->seq].recv_op = rop;
    S(x, rop)->msg = mid;
    stream_take(x, rop);
    cs_net_matched(x->net, m->net_id, (uint64_t)mid);
    if (S(x, rop)->state != OP_STARTED)
        return; /* the engine completed it at once */
    m = msg_at(x, mid);
    if (m->arrived || m->rate)
        set_progress(x, rop, ramp_at(m->arrived, m->rate, m->ref, cs_sim_now(x->sim), so->bytes),
                     m->rate);
    recv_maybe_done(x, rop);
}

static int32_t new_msg(exec_t *x, int32_t send_op, const cs_op_t *o, int dst)
{
    int32_t mid = cs_pool_get(&x->msgs);
    xmsg_t *m = msg_at(x, mid);
    m->send_op = send_op;
    m->recv_op = NONE;
    m->src = o->rank;
    m->dst = dst;
    m->tag = o->tag;
    m->next = NONE;
    m->sib = NONE;
    if (x->opts->record_messages) {
        cs_exec_result_t *res = x->res;
        if (res->nmsgs == x->cap_rec) {
            x->cap_rec = x->cap_rec ? x->cap_rec * 2 : 1024;
            res->msgs = cs_realloc(res->msgs, (size_t)x->cap_rec * sizeof *res->msgs);
        }
        m->seq = res->nmsgs;
        res->msgs[res->nmsgs++] = (cs_exec_msg_t){send_op, NONE};
    }
    return mid;
}

/* Routes a new message to the oldest posted recv that accepts it, or to the
 * unexpected list. */
static void deliver_to_matching(exec_t *x, int32_t mid)
{
    rank_state_t *r = &x->ranks[msg_at(x, mid)->dst];
    int32_t prev = NONE;
    for (int32_t rop = r->posted_head; rop != NONE; prev = rop, rop = S(x, rop)->link) {
        if (!accepts(OP(x, rop), msg_at(x, mid)))
            continue;
        if (prev == NONE)
            r->posted_head = S(x, rop)->link;
        else
            S(x, prev)->link = S(x, rop)->link;
        if (r->posted_tail == rop)
            r->posted_tail = prev;
        S(x, rop)->link = NONE;
        match(x, rop, mid);
        return;
    }
    if (r->unexp_tail == NONE)
        r->unexp_head = mid;
    else
        msg_at(x, r->unexp_tail)->next = mid;
    r->unexp_tail = mid;
}

static void take_token(exec_t *x, int32_t op, int32_t mid)
{
    const cs_op_t *o = OP(x, op);
    if (x->obs && cs_program_data(x->prog, op))
        msg_at(x, mid)->token =
            x->obs->send_start(x->obs->ctx, op, o->rank, cs_program_data(x->prog, op));
}

static void start_send(exec_t *x, int32_t op)
{
    const cs_op_t *o = OP(x, op);
    op_state_t *s = S(x, op);
    int64_t rate = 0;
    int64_t gate = s->stream_in ? stream_gate(x, op, &rate) : o->bytes;
    int n = cs_program_npeers(x->prog, o);
    const int32_t *peers = o->kind == CS_OP_SEND ? &o->peer : cs_program_mcast_peers(x->prog, o);
    int32_t first = NONE, last = NONE;
    stream_take(x, op);
    if (s->link != NONE) {
        stream_t *st = stream_at(x, s->link);
        st->gate = gate;
        st->gate_rate = rate;
        st->gate_ref = cs_sim_now(x->sim);
    }
    for (int i = 0; i < n; i++) {
        int32_t mid = new_msg(x, op, o, peers[i]);
        if (first == NONE)
            first = mid;
        else
            msg_at(x, last)->sib = mid;
        last = mid;
    }
    s->msg = first;
    s->count = (uint32_t)n;
    on_started(x, op);
    for (int32_t mid = first; mid != NONE; mid = msg_at(x, mid)->sib)
        take_token(x, op, mid);
    if (n > 1 && cs_net_has_mcast(x->net)) {
        /* the network copies it (router fan-out): one post */
        int *dst = cs_malloc((size_t)n * sizeof *dst);
        uint64_t *users = cs_malloc((size_t)n * sizeof *users);
        int32_t mid = first;
        for (int i = 0; i < n; i++, mid = msg_at(x, mid)->sib) {
            dst[i] = x->node[peers[i]];
            users[i] = (uint64_t)mid;
        }
        uint32_t id = cs_net_post_mcast(x->net, x->node[o->rank], n, dst, wire_of(o),
                                        gate_wire(o, gate), x->watch, users);
        for (int i = 0; i < n; i++)
            msg_at(x, (int32_t)users[i])->net_id = id;
        free(dst);
        free(users);
        if (rate)
            cs_net_gate_rate(x->net, id, gate_wire(o, gate), rate_scale(rate, wire_of(o), o->bytes));
    } else {
        /* a unicast, or an mcast without network support: unicasts posted in
         * destination order; the send port serialises them */
        int32_t mid = first;
        for (int i = 0; i < n; i++, mid = msg_at(x, mid)->sib) {
            uint32_t id = cs_net_post(x->net, x->node[o->rank], x->node[peers[i]], wire_of(o),
                                      gate_wire(o, gate), x->watch, (uint64_t)mid);
            msg_at(x, mid)->net_id = id;
            if (rate)
                cs_net_gate_rate(x->net, id, gate_wire(o, gate),
                                 rate_scale(rate, wire_of(o), o->bytes));
        }
    }
    x->res->messages += n;
    x->res->proto_messages[o->proto < CS_PROTO_COUNT ? o->proto : 0] += n;
    /* a delivered message may go back to the pool at once (an engine that
     * completed it already): step on before delivering it */
    for (int32_t mid = first, next; mid != NONE; mid = next) {
        next = msg_at(x, mid)->sib;
        deliver_to_matching(x, mid);
    }
}

/* A send's protocol latency has passed (start_op): it starts now. */
static void on_proto(void *ctx, const cs_event_t *ev)
{
    exec_t *x = ctx;
    start_send(x, (int32_t)ev->a);
    drain(x);
}

static void start_recv(exec_t *x, int32_t rop)
{
    const cs_op_t *o = OP(x, rop);
    rank_state_t *r = &x->ranks[o->rank];
    int32_t prev = NONE;
    on_started(x, rop);
    for (int32_t mid = r->unexp_head; mid != NONE; prev = mid, mid = msg_at(x, mid)->next) {
        if (!accepts(o, msg_at(x, mid)))
            continue;
        if (prev == NONE)
            r->unexp_head = msg_at(x, mid)->next;
        else
            msg_at(x, prev)->next = msg_at(x, mid)->next;
        if (r->unexp_tail == mid)
            r->unexp_tail = prev;
        match(x, rop, mid);
        return;
    }
    S(x, rop)->link = NONE;
    if (r->posted_tail == NONE)
        r->posted_head = rop;
    else
        S(x, r->posted_tail)->link = rop;
    r->posted_tail = rop;
}

static void start_op(exec_t *x, int32_t op)
{
    if (x->gen && make_closed(x, op))
        return;
    const cs_op_t *o = OP(x, op);
    if (o->join) { /* one ready at time 0 (later ones complete in satisfy) */
        on_started(x, op);
        on_done(x, op);
        return;
    }
    switch (o->kind) {
    case CS_OP_SEND:
    case CS_OP_MCAST:
        if (o->proto && x->proto_lat[o->proto] > 0) /* the protocol's synchronisation first */
            cs_sim_at(x->sim, cs_tick_add(cs_sim_now(x->sim), x->proto_lat[o->proto]), x->h_proto,
                      (uint32_t)op, 0);
        else
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
            S(x, op)->link = NONE;
            if (r->cpu_tail == NONE)
                r->cpu_head = op;
            else
                S(x, r->cpu_tail)->link = op;
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

/* The sender's side of a message is done: the send op completes with the
 * last of its messages. */
static void send_part_done(exec_t *x, int32_t sop)
{
    op_state_t *s = S(x, sop);
    CS_ASSERT(s->count > 0);
    if (--s->count == 0)
        on_done(x, sop);
}

/* net hooks.  They may re-enter the executor (progress propagates to
 * streaming ops, which may post messages and so grow the message pool):
 * they copy what they need from the message record before calling out. */
static void hook_progress(void *ctx, uint64_t user, int64_t bytes, int64_t rate, cs_tick_t now)
{
    exec_t *x = ctx;
    xmsg_t *m = msg_at(x, (int64_t)user);
    int32_t sop = m->send_op, rop = m->recv_op;
    const cs_op_t *so = OP(x, sop);
    if (so->proto) { /* the engine counts wire bytes: back to data bytes */
        bytes = cs_proto_to_data((cs_proto_t)so->proto, so->bytes, bytes);
        rate = rate_scale(rate, so->bytes, wire_of(so));
    }
    m->arrived = bytes;
    m->rate = rate;
    m->ref = now;
    if (rop != NONE)
        set_progress(x, rop, bytes, rate);
    if (OP(x, sop)->kind == CS_OP_SEND)
        set_progress(x, sop, bytes, rate);
    drain(x);
}

static void hook_completed(void *ctx, uint64_t user, cs_tick_t now)
{
    exec_t *x = ctx;
    xmsg_t *m = msg_at(x, (int64_t)user);
    int32_t sop = m->send_op, rop = m->recv_op;
    int64_t bytes = OP(x, sop)->bytes;
    (void)now;
    m->done = 1;
    m->arrived = bytes;
    m->rate = 0;
    if (!cs_net_late_release(x->net))
        send_part_done(x, sop);
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
    (void)now;
    send_part_done(x, msg_at(x, (int64_t)user)->send_op);
    drain(x);
}

/* ---- deadlock report ------------------------------------------------- */

/* One line per rank with unfinished ops into buf (at most 8 shown): its
 * most telling unfinished op and why; returns the number of such ranks. */
static int stuck_lines(exec_t *x, char *buf, size_t size, int *shown_out, int overflow)
{
    size_t used = 0;
    int shown = 0, nranks = cs_program_nranks(x->prog), stuck_ranks = 0;
    int32_t nops = cs_program_nops(x->prog);
    /* one line per stuck rank: its first unfinished op and why */
    int32_t *first_op = cs_malloc((size_t)nranks * sizeof *first_op);
    for (int r = 0; r < nranks; r++)
        first_op[r] = NONE;
    for (int32_t op = x->frontier; op < nops; op++) { /* a window released the rest */
        const cs_op_t *o = OP(x, op);
        if (S(x, op)->state != OP_DONE && first_op[o->rank] == NONE)
            first_op[o->rank] = op;
    }
    for (int r = 0; r < nranks; r++) {
        int32_t op = first_op[r];
        char d[256], line[400];
        const char *why;
        if (op == NONE)
            continue;
        /* the most telling op of the rank: past the clock's maximum the
         * calc it was running (the usual culprit), in a deadlock a posted
         * recv if any */
        if (overflow && x->ranks[r].cpu_op != NONE)
            op = x->ranks[r].cpu_op;
        else if (!overflow && x->ranks[r].posted_head != NONE)
            op = x->ranks[r].posted_head;
        stuck_ranks++;
        if (shown >= 8)
            continue;
        cs_program_describe(x->prog, op, d, sizeof d);
        switch (S(x, op)->state) {
        case OP_WAIT: why = "waits for its dependencies"; break;
        case OP_READY: why = "is ready but was never started"; break;
        default:
            why = OP(x, op)->kind == CS_OP_RECV && !overflow
                      ? "has no matching send"
                      : "never completed";
        }
        snprintf(line, sizeof line, "%srank %d: %s %s", shown ? "; " : "", r, d, why);
        if (used + strlen(line) < size - 1) {
            memcpy(buf + used, line, strlen(line) + 1);
            used += strlen(line);
        }
        shown++;
    }
    free(first_op);
    *shown_out = shown;
    return stuck_ranks;
}

static int report_stuck(exec_t *x)
{
    char buf[CS_ERROR_MSG_MAX - 64] = "";
    int shown, nops = cs_program_nops(x->prog);
    int stuck_ranks = stuck_lines(x, buf, sizeof buf, &shown, 0);
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

/* The clock would have passed its maximum: name the ranks still at work
 * (never a saturated or wrapped time as a result). */
static int report_overflow(exec_t *x, cs_tick_t at)
{
    char buf[CS_ERROR_MSG_MAX - 64] = "";
    int shown, stuck_ranks = stuck_lines(x, buf, sizeof buf, &shown, 1);
    return cs_error_set(x->err, CS_ERR_RANGE,
                        "%s%sthe simulated time would pass the clock's maximum of %lld ticks "
                        "(2^62, %.4g s at this machine's tick) after t=%lld on %d rank(s): "
                        "%s%s",
                        cs_program_source(x->prog) ? cs_program_source(x->prog) : "",
                        cs_program_source(x->prog) ? ": " : "", (long long)CS_TICK_LIMIT,
                        (double)CS_TICK_LIMIT * x->env->tick_seconds, (long long)at,
                        stuck_ranks, buf, shown < stuck_ranks ? "; ..." : "");
}

static int report_unreceived(exec_t *x)
{
    int nranks = cs_program_nranks(x->prog), count = 0;
    int32_t example = NONE;
    for (int r = 0; r < nranks; r++)
        for (int32_t mid = x->ranks[r].unexp_head; mid != NONE; mid = msg_at(x, mid)->next) {
            if (example == NONE)
                example = mid;
            count++;
        }
    if (!count)
        return CS_OK;
    char d[256];
    int32_t sop = msg_at(x, example)->send_op;
    cs_program_describe(x->prog, sop, d, sizeof d);
    return cs_error_set(x->err, CS_ERR_DEADLOCK,
                        "%s%s%d message(s) were sent but never received, e.g. rank %d: %s",
                        cs_program_source(x->prog) ? cs_program_source(x->prog) : "",
                        cs_program_source(x->prog) ? ": " : "", count, OP(x, sop)->rank, d);
}

/* An op the executor cannot run: too many dependencies or destinations for
 * its counters, or more units than the engine counts. */
static int check_op(const cs_exec_env_t *env, const cs_program_t *prog, int32_t i, int npred,
                    int64_t max_units, cs_error_t *err)
{
    const cs_op_t *op = cs_program_op(prog, i);
    char d[200];
    if (op->bytes > CS_BYTES_MAX || (op->kind != CS_OP_CALC && wire_of(op) > CS_BYTES_MAX)) {
        cs_program_describe(prog, i, d, sizeof d);
        return cs_error_set(err, CS_ERR_RANGE,
                            "rank %d: %s: %lld bytes exceed the maximum of %lld bytes (2^48, "
                            "256 TiB) per op", op->rank, d,
                            (long long)(op->kind != CS_OP_CALC ? wire_of(op) : op->bytes),
                            (long long)CS_BYTES_MAX);
    }
    if (npred > COUNT_MAX || cs_program_npeers(prog, op) > COUNT_MAX) {
        cs_program_describe(prog, i, d, sizeof d);
        return cs_error_set(err, CS_ERR_RANGE,
                            "rank %d: %s has more than %d dependencies or destinations",
                            op->rank, d, COUNT_MAX);
    }
    if (op->kind != CS_OP_CALC && wire_of(op) / env->net->unit_bytes >= max_units) {
        cs_program_describe(prog, i, d, sizeof d);
        if (env->net_new)
            return cs_error_set(err, CS_ERR_RANGE,
                                "rank %d: %s has 2^31 or more units of %lld bytes, more than "
                                "this machine's engine counts (docs/limits.md); use fewer bytes",
                                op->rank, d, (long long)env->net->unit_bytes);
        return cs_error_set(err, CS_ERR_RANGE,
                            "rank %d: %s has more than 2^32 units of %lld bytes; use a "
                            "larger packet or fluid mode",
                            op->rank, d, (long long)env->net->unit_bytes);
    }
    return CS_OK;
}

/* The work estimate (issue 19): a packet engine spends events on every
 * unit of every message, so a huge message in packet mode runs for hours;
 * the sum of units is a cheap lower bound of its events, refused above
 * o->max_work before anything runs. */
/* The packets (units) op i moves one by one, counted as check_work does:
 * 0 for a recv or calc, at least 1 for a message. */
static int64_t op_work(const cs_program_t *prog, int32_t i, int64_t unit)
{
    const cs_op_t *op = cs_program_op(prog, i);
    int64_t n = (wire_of(op) + unit - 1) / unit; /* bytes <= CS_BYTES_MAX: no wrap */
    if (op->kind == CS_OP_RECV || op->kind == CS_OP_CALC)
        return 0;
    if (op->kind == CS_OP_MCAST)
        n *= cs_program_npeers(prog, op); /* < 2^48 * 2^30: fits */
    return n > 0 ? n : 1;
}

/* The unit of the work estimate, or 0 when the run moves no units one by
 * one (fluid mode) or has no limit. */
static int64_t work_unit(const cs_exec_env_t *env, const cs_exec_opts_t *o)
{
    int64_t unit = env->net_new ? env->net->own_work_unit
                                : o->mode == CS_NET_PACKET ? env->net->unit_bytes : 0;
    return unit > 0 && o->max_work > 0 ? unit : 0;
}

static int work_error(const cs_exec_env_t *env, const cs_exec_opts_t *o, cs_error_t *err)
{
    return cs_error_set(err, CS_ERR_RANGE,
                        "the run would move more than %lld packets of %lld bytes one by one, "
                        "the work limit (docs/limits.md); %s--force to run it anyway",
                        (long long)o->max_work, (long long)work_unit(env, o),
                        env->net_new ? "use fewer bytes, or " : "use --mode fluid, or ");
}

static int check_work(const cs_exec_env_t *env, const cs_program_t *prog,
                      const cs_exec_opts_t *o, cs_error_t *err)
{
    int64_t unit = work_unit(env, o), total = 0, w;
    int32_t nops = cs_program_nops(prog);
    if (!unit)
        return CS_OK;
    for (int32_t i = 0; i < nops && total <= o->max_work; i++)
        total = __builtin_add_overflow(total, op_work(prog, i, unit), &w) ? INT64_MAX : w;
    return total <= o->max_work ? CS_OK : work_error(env, o, err);
}

/* ---- a windowed run -------------------------------------------------- */

/* The generator broke its contract (core/progen.h): the run would differ
 * from the whole program's, so it stops. */
static int broken(exec_t *x, int32_t op, const char *what)
{
    char d[200];
    cs_program_describe(x->prog, op, d, sizeof d);
    fail(x, CS_ERR_RUNTIME, "%s%srank %d: %s %s; this program cannot run windowed (run it "
         "whole)", cs_program_source(x->prog) ? cs_program_source(x->prog) : "",
         cs_program_source(x->prog) ? ": " : "", OP(x, op)->rank, d, what);
    return x->err_code;
}

/* A new edge naming `op` with `kind`, at the end of the edges. */
static int64_t edge_new(exec_t *x, int32_t op, cs_dep_kind_t kind, int32_t owner)
{
    int64_t e = x->nedges++, k = e >> EDGE_SHIFT;
    edge_t *ed = cs_chunks_ensure(&x->edges, e);
    ed->next = EDGE_NONE;
    ed->op = op;
    ed->kind = (int32_t)kind;
    if (k >= x->cap_edge_max) { /* one int per 2^14 edges */
        int64_t cap = x->cap_edge_max ? 2 * x->cap_edge_max : 64;
        while (cap <= k)
            cap *= 2;
        x->edge_max = cs_realloc(x->edge_max, (size_t)cap * sizeof *x->edge_max);
        x->cap_edge_max = cap;
    }
    if ((e & ((1 << EDGE_SHIFT) - 1)) == 0 || owner > x->edge_max[k])
        x->edge_max[k] = owner;
    return e;
}

/* Puts dependency of `op` on `pred` into the lists; the successor list
 * stays in id order, as a whole program's table is. */
static int add_dep(exec_t *x, int32_t op, int32_t pred, cs_dep_kind_t kind)
{
    int64_t e, prev = EDGE_NONE, cur;
    op_state_t *os = S(x, op), *ps;
    heads_t *h;
    if (pred < x->frontier)
        return broken(x, op, "got a dependency on an op that was done");
    ps = S(x, pred);
    if (os->state != OP_WAIT)
        return broken(x, op, "got a dependency after it became ready");
    if (kind == CS_DEP_AFTER ? ps->state == OP_DONE : ps->state >= OP_STARTED)
        return broken(x, op, "got a dependency on an op that had already enabled it");
    if (os->count == COUNT_MAX)
        return fail_with(x, check_op(x->env, x->prog, op, COUNT_MAX + 1, INT64_MAX, x->err));
    os->count++;
    if (kind != CS_DEP_AFTER)
        ps->start_out = 1;
    if (kind == CS_DEP_STREAM) {
        if (!x->watch && x->res->messages)
            return broken(x, op, "streams from another op after messages were posted "
                          "without progress reports");
        x->watch = 1;
        os->stream_in = 1;
        ps->stream_out = 1;
        e = edge_new(x, pred, kind, op);
        /* appended: the predecessors keep the order they were added in */
        for (cur = H(x, op)->spred; cur != EDGE_NONE && E(x, cur)->next != EDGE_NONE;
             cur = E(x, cur)->next)
            ;
        if (cur == EDGE_NONE)
            H(x, op)->spred = e;
        else
            E(x, cur)->next = e;
    }
    e = edge_new(x, op, kind, op);
    h = H(x, pred);
    if (h->succ == EDGE_NONE) {
        h->succ = h->succ_tail = e;
    } else if (E(x, h->succ_tail)->op <= op) {
        E(x, h->succ_tail)->next = e;
        h->succ_tail = e;
    } else {
        for (cur = h->succ; cur != EDGE_NONE && E(x, cur)->op <= op; cur = E(x, cur)->next)
            prev = cur;
        E(x, e)->next = cur;
        if (prev == EDGE_NONE)
            h->succ = e;
        else
            E(x, prev)->next = e;
    }
    return CS_OK;
}

/* Takes in what the generator built since the last call: states for the
 * new ops, their dependencies; before the run starts, the ops ready at time
 * 0 in id order.  Then gives back what the run is past. */
static int absorb(exec_t *x)
{
    cs_program_t *p = x->gen->prog;
    int32_t n = cs_program_nops(p), first = x->nreg;
    const cs_wdep_t *deps;
    int64_t nd, k;
    for (int32_t i = first; i < n; i++) {
        op_state_t *st = cs_chunks_ensure(&x->st, i);
        heads_t *h = cs_chunks_ensure(&x->heads, i);
        int rc = check_op(x->env, p, i, 0, x->max_units, x->err);
        if (rc)
            return fail_with(x, rc);
        if (x->work_unit) { /* the work limit, as the ops come (check_work) */
            int64_t w;
            x->work_units = __builtin_add_overflow(x->work_units, op_work(p, i, x->work_unit), &w)
                                ? INT64_MAX : w;
            if (x->work_units > x->opts->max_work)
                return fail_with(x, work_error(x->env, x->opts, x->err));
        }
        st->msg = st->link = NONE;
        h->succ = h->succ_tail = h->spred = EDGE_NONE;
    }
    if (x->opts->record_op_times && n > x->nreg) {
        /* per-op times of a window (a timeline): the table grows with the
         * ops, and the program keeps them (below) for the writer */
        x->res->ops = cs_realloc(x->res->ops, ((size_t)n + 1) * sizeof *x->res->ops);
        for (int32_t i = x->nreg; i < n; i++)
            x->res->ops[i].start = x->res->ops[i].end = -1;
    }
    x->nreg = n;
    nd = cs_program_take_deps(p, &deps);
    /* grouped by predecessor (a stable counting sort), so that each op's
     * successor edges of this batch lie side by side: a fan-in of k
     * dependencies per op (allreduce/gateway: tens) otherwise leaves every
     * edge of a list on a cache line of its own */
    int32_t lo = n, hi = -1, span;
    for (k = 0; k < nd; k++) { /* the predecessors' range (pred < op < n: checked by p) */
        lo = deps[k].pred < lo ? deps[k].pred : lo;
        hi = deps[k].pred > hi ? deps[k].pred : hi;
    }
    span = hi - lo + 1;
    if (nd > 1 && lo >= x->frontier && span < 4 * nd + 1024) {
        if (span + 1 > x->cap_cnt) {
            x->cap_cnt = span + 1;
            x->cnt = cs_realloc(x->cnt, (size_t)x->cap_cnt * sizeof *x->cnt);
        }
        if (nd > x->cap_order) {
            x->cap_order = nd;
            x->order = cs_realloc(x->order, (size_t)nd * sizeof *x->order);
        }
        memset(x->cnt, 0, (size_t)(span + 1) * sizeof *x->cnt);
        for (k = 0; k < nd; k++)
            x->cnt[deps[k].pred - lo + 1]++;
        for (int32_t i = 0; i < span; i++)
            x->cnt[i + 1] += x->cnt[i];
        for (k = 0; k < nd; k++)
            x->order[x->cnt[deps[k].pred - lo]++] = k;
        for (k = 0; k < nd; k++) {
            const cs_wdep_t *d = &deps[x->order[k]];
            if (add_dep(x, d->op, d->pred, (cs_dep_kind_t)d->kind))
                return x->err_code;
        }
    } else {
        for (k = 0; k < nd; k++)
            if (add_dep(x, deps[k].op, deps[k].pred, (cs_dep_kind_t)deps[k].kind))
                return x->err_code;
    }
    for (int32_t i = first; i < n; i++) {
        op_state_t *st = S(x, i);
        if (st->count || st->state != OP_WAIT)
            continue;
        if (x->running)
            return broken(x, i, "has no dependency but was built after the run started");
        st->state = OP_READY;
        work_push(x, i);
    }
    if (x->nreg - x->frontier > x->res->ops_held_peak)
        x->res->ops_held_peak = x->nreg - x->frontier;
    if (x->joining)
        return CS_OK;
    while (x->frontier < x->nreg && S(x, x->frontier)->state == OP_DONE &&
           S(x, x->frontier)->count == 0)
        x->frontier++;
    cs_chunks_release(&x->st, x->frontier);
    cs_chunks_release(&x->heads, x->frontier);
    if (!x->opts->record_op_times) /* else a timeline reads every op afterwards */
        cs_program_release(p, x->frontier);
    /* edge chunks whose ops are all done, but never the one being filled */
    for (k = x->edges.released; k < (x->nedges >> EDGE_SHIFT) && x->edge_max[k] < x->frontier; k++)
        ;
    cs_chunks_release(&x->edges, k << EDGE_SHIFT);
    return CS_OK;
}

/* Op `op` is about to start: its successors must all exist. */
static int make_closed(exec_t *x, int32_t op)
{
    int rc;
    if (cs_progen_closed(x->gen, op, OP(x, op)->rank))
        return CS_OK;
    if ((rc = cs_progen_advance(x->gen, op, x->err)))
        return fail_with(x, rc);
    return absorb(x);
}

/* ---- run ------------------------------------------------------------- */

static void on_poll(void *ctx, cs_tick_t now, uint64_t events)
{
    exec_t *x = ctx;
    if (x->opts->cancel && *x->opts->cancel) {
        fail(x, CS_ERR_CANCELLED, "interrupted at t=%lld ticks, %llu events, %d of %d ops done",
             (long long)now, (unsigned long long)events, (int)x->done_ops,
             (int)cs_program_nops(x->prog));
        return;
    }
    if (x->opts->poll)
        x->opts->poll(x->opts->poll_ctx, now, x->done_ops, cs_program_nops(x->prog), events);
}

/* The run of a whole program (prog) or of a generator's (gen). */
static int exec_run(const cs_exec_env_t *env, const cs_program_t *prog, cs_progen_t *gen,
                    const cs_exec_opts_t *o, cs_exec_result_t *res, cs_error_t *err)
{
    exec_t x;
    int rc;
    int nranks = cs_program_nranks(prog), nodes = cs_topo_nodes(env->topo);
    int32_t nops = cs_program_nops(prog);
    int32_t *identity = NULL;
    cs_tick_t over_at;
    struct timespec t0, t1;
    cs_net_hooks_t hooks;

    memset(res, 0, sizeof *res);
    if (!gen && !cs_program_is_finalized(prog))
        return cs_error_set(err, CS_ERR_INTERNAL, "the executor runs finalized programs only");
    if (nranks > nodes)
        return cs_error_set(err, CS_ERR_RANGE,
                            "the program has %d ranks but the machine has only %d nodes", nranks,
                            nodes);
    if (o->rank_to_node)
        for (int r = 0; r < nranks; r++)
            if (o->rank_to_node[r] < 0 || o->rank_to_node[r] >= nodes)
                return cs_error_set(err, CS_ERR_RANGE, "rank %d is mapped to node %d, outside 0..%d",
                                    r, o->rank_to_node[r], nodes - 1);
    memset(&x, 0, sizeof x);
    /* limits, checked before anything runs (a window's ops as they come):
     * the channel engine's mode may count a message's units in 32 bits
     * (packet mode does); an op's dependencies and an mcast's destinations
     * are counted in COUNT_BITS */
    x.max_units = env->net_new ? CS_EXEC_OWN_MAX_UNITS : cs_net_mode_max_units(o->mode);
    if (!gen) {
        /* check_op's tests without its calls and division (a pass over
         * every op): bytes / unit >= max_units is bytes >= max_units * unit
         * (saturated); check_op says what is wrong */
        cs_program_tables_t t;
        int64_t unit = env->net->unit_bytes;
        int64_t lim = unit > 0 && x.max_units <= INT64_MAX / unit ? x.max_units * unit : INT64_MAX;
        cs_program_tables(prog, &t);
        for (int32_t i = 0; i < nops; i++) {
            const cs_op_t *op = &t.ops[i];
            uint32_t npred = t.pred_start[i + 1] - t.pred_start[i];
            if (op->bytes > CS_BYTES_MAX || npred > COUNT_MAX ||
                (op->kind == CS_OP_MCAST && cs_program_npeers(prog, op) > COUNT_MAX) ||
                (op->kind != CS_OP_CALC && wire_of(op) >= lim) ||
                (op->proto && wire_of(op) > CS_BYTES_MAX))
                if ((rc = check_op(env, prog, i, (int)npred, x.max_units, err)))
                    return rc;
        }
    }
    if (!gen && (rc = check_work(env, prog, o, err)))
        return rc;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    x.env = env;
    x.prog = prog;
    cs_program_tables(prog, &x.t);
    x.gen = gen;
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
    /* exact when the ratio is a fraction (decimal clocks): near the clock's
     * maximum a double product is off by hundreds of ticks, which could
     * round a time just past the maximum onto it */
    x.calc_num = x.calc_den = 1;
    if (x.calc_scale != 1.0 && !cs_ratio_of_double(x.calc_scale, &x.calc_num, &x.calc_den))
        x.calc_den = 0;

    res->nranks = nranks;
    res->rank_finish = cs_calloc((size_t)nranks, sizeof *res->rank_finish);
    if (o->record_op_times && !gen) { /* a window's grow as its ops come (absorb) */
        res->ops = cs_malloc(((size_t)nops + 1) * sizeof *res->ops);
        for (int32_t i = 0; i < nops; i++)
            res->ops[i].start = res->ops[i].end = -1;
    }
    if (o->nspans > 0) {
        res->nspans = o->nspans;
        res->spans = cs_malloc((size_t)o->nspans * sizeof *res->spans);
        for (int32_t k = 0; k < o->nspans; k++)
            res->spans[k].start = res->spans[k].end = -1;
    }
    if (o->record_messages) {
        x.cap_rec = 1024;
        res->msgs = cs_malloc((size_t)x.cap_rec * sizeof *res->msgs);
    }
    cs_pool_init(&x.msgs, sizeof(xmsg_t));
    cs_pool_init(&x.streams, sizeof(stream_t));
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
    if (o->poll || o->cancel)
        cs_sim_set_poll(x.sim, (uint64_t)1 << 16, on_poll, &x);
    x.h_calc = cs_sim_register(x.sim, on_calc_event, &x);
    x.h_wake = cs_sim_register(x.sim, on_wake, &x);
    x.h_proto = cs_sim_register(x.sim, on_proto, &x);
    for (int k = 1; k < CS_PROTO_COUNT; k++) {
        double lat = cs_program_proto_lat(prog, (cs_proto_t)k);
        x.proto_lat[k] = env->tick_seconds > 0 && lat > 0
                             ? cs_tick_from_double(lat / env->tick_seconds) : 0;
        res->proto_lat[k] = x.proto_lat[k];
    }

    x.ranks = cs_malloc((size_t)nranks * sizeof *x.ranks);
    for (int r = 0; r < nranks; r++)
        x.ranks[r] = (rank_state_t){NONE, NONE, NONE, NONE, NONE, NONE, NONE};
    if (gen) {
        /* the ops ready at time 0 first (progen.h), then run */
        cs_chunks_init(&x.st, sizeof(op_state_t), 16);
        cs_chunks_init(&x.heads, sizeof(heads_t), 16);
        cs_chunks_init(&x.edges, sizeof(edge_t), EDGE_SHIFT);
        x.work_unit = work_unit(env, o);
        if ((rc = cs_progen_advance(gen, -1, err)) == CS_OK)
            rc = absorb(&x);
        if (rc && !x.err_code)
            x.err_code = rc;
        x.running = 1;
    } else {
        res->ops_held_peak = nops;
        cs_chunks_init_flat(&x.st, sizeof(op_state_t), (int64_t)nops + 1);
        for (int32_t i = 0; i < nops; i++) {
            int n = (int)(x.t.pred_start[i + 1] - x.t.pred_start[i]);
            const cs_dep_t *pred = x.t.preds + x.t.pred_start[i];
            S(&x, i)->count = (uint32_t)n;
            S(&x, i)->msg = NONE;
            S(&x, i)->link = NONE;
            for (int k = 0; k < n; k++) {
                if (cs_dep_kind(pred[k]) != CS_DEP_AFTER)
                    S(&x, cs_dep_op(pred[k]))->start_out = 1;
                if (cs_dep_kind(pred[k]) == CS_DEP_STREAM) {
                    x.watch = 1;
                    S(&x, i)->stream_in = 1;
                    S(&x, cs_dep_op(pred[k]))->stream_out = 1;
                }
            }
            if (n == 0) {
                S(&x, i)->state = OP_READY;
                work_push(&x, i);
            }
        }
    }
    if (!x.err_code)
        drain(&x);
    if (!x.err_code)
        cs_sim_run(x.sim);
    /* a rendezvous engine may hold transfers whose recv is posted only after
     * the send completes (an unsafe program under MPI): let it start them */
    while (!x.err_code && !cs_sim_overflow(x.sim, NULL) && x.done_ops < cs_program_nops(prog) &&
           cs_net_idle(x.net) > 0)
        cs_sim_run(x.sim);
    /* nothing left to happen: a window that is not whole is a deadlock (or
     * a builder error) -- build the rest to report it as a whole run would */
    if (gen && !gen->complete && !x.err_code && !cs_sim_overflow(x.sim, NULL)) {
        if ((rc = cs_progen_advance(gen, CS_PROGEN_ALL, err)) == CS_OK)
            rc = absorb(&x);
        if (rc && !x.err_code)
            x.err_code = rc;
    }
    nops = cs_program_nops(prog);

    rc = x.err_code;
    if (!rc && cs_sim_overflow(x.sim, &over_at))
        rc = report_overflow(&x, over_at);
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
    cs_sim_set_poll(x.sim, 0, NULL, NULL);
    cs_chunks_free(&x.st);
    cs_chunks_free(&x.heads);
    cs_chunks_free(&x.edges);
    free(x.edge_max);
    free(x.cnt);
    free(x.order);
    free(x.ranks);
    cs_pool_free(&x.msgs);
    cs_pool_free(&x.streams);
    free(x.work);
    free(identity);
    return rc;
}

int cs_exec_run(const cs_exec_env_t *env, const cs_program_t *prog, const cs_exec_opts_t *o,
                cs_exec_result_t *res, cs_error_t *err)
{
    return exec_run(env, prog, NULL, o, res, err);
}

int cs_exec_run_gen(const cs_exec_env_t *env, cs_progen_t *gen, const cs_exec_opts_t *o,
                    cs_exec_result_t *res, cs_error_t *err)
{
    return exec_run(env, gen->prog, gen, o, res, err);
}

void cs_exec_result_destroy(cs_exec_result_t *res)
{
    if (!res)
        return;
    cs_net_free(res->net);
    cs_sim_free(res->sim);
    free(res->rank_finish);
    free(res->ops);
    free(res->spans);
    free(res->msgs);
    memset(res, 0, sizeof *res);
}
