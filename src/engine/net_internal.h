/*
 * net_internal.h - private to src/engine/net*.c: the engine handle that
 * net.c forwards through the ops table, and the channel engine's state and
 * shared core (net_chan.c: parameters, posting, ports, completion,
 * statistics) that its two fidelity modes, net_packet.c and net_fluid.c,
 * build their ops tables on.  Calls go one way: net_mode.c (the mode table)
 * -> the modes -> net_chan.c -> net.c; the core reaches a mode only through
 * the event handler the mode gave it (cs_net_chan_new's `begin`).
 */
#ifndef CS_NET_INTERNAL_H
#define CS_NET_INTERNAL_H

#include "core/checked.h"
#include "engine/net.h"

#define NIL32 UINT32_MAX
#define NIL64 UINT64_MAX

/* Packet mode: state of one message at one hop.  Units of a message stay in
 * order, so counts are enough: no per-unit objects exist. */
typedef struct hop_state {
    int32_t chan;
    uint8_t vc;
    uint8_t queued;   /* in the channel's wait queue */
    union {
        uint32_t ready; /* packet: units whose head reached this hop's input and wait */
        int32_t res;    /* fluid: the max-min constraint, the channel's srv */
    };
    uint32_t sent;    /* units started on this hop */
    uint64_t next;    /* wait-queue link: (msg << 16 | hop) or NIL64 */
} hop_state_t;

enum msg_state { MSG_FREE, MSG_WAIT_PORTS, MSG_OVERHEAD, MSG_ACTIVE, MSG_FINISHING };

typedef struct msg {
    /* what packet mode reads for every unit, in the first 32 bytes so that
     * a unit usually costs one cache line of its message */
    hop_state_t *hs;    /* nhops entries (the route; fluid mode uses it too) */
    int64_t bytes;
    int32_t nhops;
    uint32_t npk;       /* packet: units */
    uint32_t delivered; /* packet: units delivered */
    uint8_t state;
    uint8_t watch;
    uint8_t local;      /* src == dst: a local copy, no ports, no overhead */
    int32_t src, dst;
    int64_t gate;       /* bytes that may be injected */
    int64_t arrived;    /* bytes delivered at the destination */
    uint64_t user;
    uint64_t post_seq;
    /* port wait lists (doubly linked, by source and by destination) */
    uint32_t src_prev, src_next, dst_prev, dst_next;
    /* packet mode */
    uint32_t released;  /* units released at the source by the gate */
    /* fluid mode */
    double remaining;   /* bytes not yet across the bottleneck */
    double rate;        /* bytes per tick */
    cs_tick_t last;     /* time `remaining` was last brought up to date */
    uint64_t version;   /* invalidates scheduled fluid events */
    int64_t reported;   /* progress reported so far (watched flows) */
    uint32_t active_idx;/* index in the fluid active array */
    cs_tick_t t_start;  /* fluid: when the flow began */
    uint8_t fresh;      /* fluid: needs a step even if its rate is unchanged */
    uint8_t lat_wait;   /* fluid, latency first: paying its latency, not yet sharing */
    uint32_t next_free;
    uint32_t hs_cap;    /* entries allocated at hs (kept when the id is reused) */
    uint8_t routed;     /* hs holds this message's route */
} msg_t;

/* How many event handlers of its own a mode registers (cs_net_chan_mode_t). */
#define CS_NET_CHAN_HANDLERS 4

/* A channel.  What packet mode touches for every unit (wait queue, buffer
 * use, busy, wire and unit times) is all there is: 64 bytes, one cache line
 * (the array is 64-byte aligned, cs_net_chan_new), so that the lines of
 * neighbouring channels, which the hardware fetches in pairs, are hot ones
 * too.  What a unit does not read is in chan_cold_t. */
typedef struct chan_state {
    _Alignas(64) uint64_t wq_head; /* packet: waiting (msg, hop) */
    uint64_t wq_tail;
    int32_t occ[CS_TOPO_VCS];  /* packet: downstream buffer use per vc */
    uint8_t busy, stalled;
    int32_t k_now;             /* messages currently wanting the channel */
    /* the channel whose capacity this one shares (cs_topo_channel_resource;
     * itself when it shares none): packet mode queues and serialises the
     * group's units on that channel's wq and busy, fluid mode makes it one
     * max-min constraint */
    int32_t srv;
    cs_tick_t wire;
    cs_tick_t ser_unit;        /* ser(unit_bytes), cached */
    cs_tick_t stall_since;
} chan_state_t;

_Static_assert(sizeof(chan_state_t) == 64, "a channel is one cache line");

/* The rest of a channel, read per message or per partial unit. */
typedef struct chan_cold {
    int64_t ser_num, ser_den;
    /* fluid */
    double cap;                /* bytes per tick (the solver's state is net_fluid.c's) */
    /* packet, adaptive topologies only: units of the messages routed over
     * the channel (less the units it sent, its stats, the load UGAL reads) */
    int64_t routed_units;
} chan_cold_t;

/* The handle every engine is wrapped in (net.c).  Here rather than in
 * net.c only so that the channel engine reads the recorder inline on its
 * hot path. */
struct cs_net {
    const cs_net_ops_t *ops;
    void *impl;                /* owned, freed by ops->free */
    int nchans;
    cs_chanrec_t *rec;         /* time buckets, or NULL */
};

/* The channel engine's state, shared by both modes (each uses its part). */
typedef struct cs_net_chan {
    cs_net_t *net;             /* the handle wrapping this state */
    cs_sim_t *sim;
    const cs_topo_t *topo;
    cs_net_params_t p;
    cs_net_hooks_t hooks;
    int nnodes, nchans;
    chan_state_t *ch;
    chan_cold_t *cold;         /* nchans + 1, by channel */
    cs_chan_stats_t *stats;
    /* ports */
    int32_t *send_busy, *recv_busy;
    uint32_t *src_wait_head, *src_wait_tail, *dst_wait_head, *dst_wait_tail;
    /* messages */
    msg_t *msgs;
    uint32_t nmsgs, cap_msgs, free_head;
    int64_t active;
    uint64_t post_seq;
    cs_hop_t *route_buf;
    int max_route;
    /* an adaptive topology (cs_topo_is_adaptive): messages are routed when
     * their overhead is over (cs_net_chan_begin) under the mode's load */
    int adaptive;
    int64_t (*load)(const void *ctx, int chan);
    int same_ser;              /* every channel has the same ser_num/ser_den */
    /* handlers: h_begin and h_mode[] are the mode's (cs_net_chan_mode_t),
     * h_mode[] indexed by the mode's own enum */
    uint32_t h_begin, h_complete, h_mode[CS_NET_CHAN_HANDLERS];
    /* fluid */
    uint32_t *fl_active;
    uint32_t fl_n, fl_cap;
    int fl_dirty;
    struct cs_fluid *fl;       /* the solver's state (net_fluid.c), NULL until used */
} cs_net_chan_t;

static inline uint64_t hop_key(uint32_t m, uint32_t h) { return ((uint64_t)m << 16) | h; }
static inline uint32_t key_msg(uint64_t k) { return (uint32_t)(k >> 16); }
static inline uint32_t key_hop(uint64_t k) { return (uint32_t)(k & 0xffff); }

static inline cs_tick_t net_ser(const chan_cold_t *c, int64_t bytes)
{
    /* ceil(bytes * num / den), saturated past the clock's maximum */
    return cs_tick_muldiv_ceil(bytes, c->ser_num, c->ser_den);
}

/* ---- the shared core (net_chan.c), used by both modes ---------------- */

/* A fidelity mode as the shared core needs it to build one.  Both modes'
 * constructors were the same lines (create the state, register three
 * handlers) with other names, so a mode is this description and
 * cs_net_chan_new is its one constructor. */
typedef struct cs_net_chan_mode {
    /* the mode's table; the engine handle is wrapped with it */
    const cs_net_ops_t *ops;
    /* the mode's handler (ctx: the state, a: the message) for "the send
     * overhead is over": it calls cs_net_chan_begin and, if that returns 1,
     * starts the transfer */
    cs_sim_handler_fn begin;
    /* the mode's other handlers (ctx: the state), registered in this order
     * after the core's; their ids are h_mode[i] (a NULL entry registers
     * nothing) */
    cs_sim_handler_fn handlers[CS_NET_CHAN_HANDLERS];
    /* optional: handlers to register instead of `handlers` (same
     * semantics, the same events in the same order) when use_fast says the
     * engine allows them, so that a mode's common case pays nothing for the
     * general one (packet mode's: no shared capacity, one rate) */
    cs_sim_handler_fn fast_handlers[CS_NET_CHAN_HANDLERS];
    int (*use_fast)(const struct cs_net_chan *n);
    /* the load of channel `chan` (ctx: the state) that an adaptive route
     * reads (cs_topo_load_t): the mode's own measure of its queue */
    int64_t (*load)(const void *ctx, int chan);
} cs_net_chan_mode_t;

/* Validates the parameters, creates the state and wraps it (*out) with
 * mode->ops, registering the mode's handlers.  Errors: CS_ERR_RANGE naming
 * the parameter; nothing is allocated then. */
int cs_net_chan_new(cs_sim_t *sim, const cs_topo_t *topo, const cs_net_params_t *np,
                    const cs_net_hooks_t *hooks, const cs_net_chan_mode_t *mode,
                    cs_net_t **out, cs_error_t *err);
/* Frees the shared state (a mode that has state of its own frees it
 * first); an ops.free entry. */
void cs_net_chan_free(void *impl);
/* cs_net_ops_t entries both modes share (impl: cs_net_chan_t). */
uint32_t cs_net_chan_post(void *impl, int src, int ndst, const int *dst, int64_t bytes,
                          int64_t gate_bytes, int watch, const uint64_t *users);
int64_t cs_net_chan_active(const void *impl);
const cs_chan_stats_t *cs_net_chan_totals(const void *impl, int chan);
/* The message's overhead is over (from the mode's `begin` handler): marks
 * it active; a message that crosses no channel is delivered here (its gate
 * permitting).  Returns 1 if the mode must start moving it. */
int cs_net_chan_begin(cs_net_chan_t *n, uint32_t id);
/* Raises a message's gate (ops.gate of both modes).  Returns 1 if the mode
 * must release what the new gate allows (the message is moving over the
 * network), 0 if nothing more is to do. */
int cs_net_chan_raise_gate(cs_net_chan_t *n, uint32_t id, int64_t gate_bytes);
/* The deadlock message (ops.explain_stuck of both modes), with the mode's
 * `detail` ("" for none) appended.  Returns CS_ERR_DEADLOCK. */
int cs_net_chan_explain(const cs_net_chan_t *n, const char *detail, cs_error_t *err);

/* Accounts `busy` ticks of transmission, `bytes` and `units` to a channel,
 * spread over [start, start + span) for the time buckets. */
static inline void cs_net_i_record(cs_net_chan_t *n, int chan, cs_tick_t start, cs_tick_t span,
                                   cs_tick_t busy, int64_t bytes, int64_t units)
{
    cs_chan_stats_t *s = &n->stats[chan];
    s->bytes += bytes;
    s->units += units;
    s->busy += busy;
    if (n->net->rec)
        cs_chanrec_busy(n->net->rec, chan, start, span, busy, bytes, units);
}
void cs_net_i_record_stall(cs_net_chan_t *n, int chan, cs_tick_t start, cs_tick_t dur);
void cs_net_i_k_change(cs_net_chan_t *n, msg_t *m, int delta); /* all channels of the path */
void cs_net_i_k_dec(cs_net_chan_t *n, int chan);
/* Bytes reached the destination (bytes_total so far): reports progress and,
 * when all arrived, completes the message (after recv_overhead). */
void cs_net_i_arrived(cs_net_chan_t *n, uint32_t id, int64_t bytes_total, cs_tick_t now);

/* ---- the modes (net_packet.c, net_fluid.c), for the mode table -------- */
extern const cs_net_chan_mode_t cs_net_packet_mode;
extern const cs_net_chan_mode_t cs_net_fluid_mode;

/* ---- the fluid solver (net_fluid.c), for tests ------------------------- */
typedef struct cs_fluid cs_fluid_t;
typedef enum cs_net_fluid_solver {
    CS_NET_FLUID_INCREMENTAL = 0, /* re-solves only the flows that can change (default) */
    CS_NET_FLUID_FULL,            /* the reference: every flow at every recomputation */
    CS_NET_FLUID_CHECKED          /* incremental, compared with the reference each time */
} cs_net_fluid_solver_t;
/* Selects the solver of a fluid engine before it runs.  Returns 0 (and does
 * nothing) if `net` is not the channel engine in fluid mode. */
int cs_net_fluid_set_solver(cs_net_t *net, cs_net_fluid_solver_t solver);
/* With CS_NET_FLUID_CHECKED: recomputations compared, flows whose being
 * stopped at the gate disagreed, and the largest relative difference
 * |a - b| / max(|a|, |b|) of a rate (0 when bit-identical).  Zeros for
 * another engine. */
void cs_net_fluid_check_stats(const cs_net_t *net, uint64_t *checks, uint64_t *mismatches,
                              double *max_rel_diff);

#endif
