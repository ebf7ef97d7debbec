/*
 * net.h - the network engine: moves messages between nodes over the channels
 * of a topology, with link contention and the endpoint port rule.
 *
 * The channel engine has two fidelity modes (machines with a network it
 * cannot express supply their own engine through cs_net_ops_t, below):
 *
 * packet  A message is cut into units of `unit_bytes`.  A channel sends one
 *         unit at a time, taking ser(bytes) = ceil(bytes * ser_num / ser_den)
 *         ticks.  Units move hop by hop with cut-through: a unit that starts
 *         on a channel at s has its head at the next node at s + wire_lat, may
 *         continue at s + wire_lat + router_lat (never finishing before its
 *         own tail has arrived), and is delivered at the destination at
 *         s + wire_lat + ser.  Arbitration is round-robin among the messages
 *         that have a unit waiting for the channel, so k equal flows each get
 *         1/k of it.  Every channel has `buf_units` buffer slots per virtual
 *         channel at its downstream end; a unit holds its slot until its tail
 *         has left that node, and a channel with no free slot stalls
 *         (back-pressure).  buf_units = 0 means unbounded.
 * fluid   A message is a flow whose rate is the max-min fair share of the
 *         channels on its path, recomputed whenever a flow starts or ends (all
 *         changes at one tick are batched).  Delivery is when the last byte
 *         has crossed plus the path's latency (wire on every hop, router on
 *         every intermediate node), or, with fluid_latency FIRST, the
 *         flow takes no bandwidth until its path latency has passed and is
 *         delivered when its bytes have crossed; fluid_share LATENCY weighs
 *         each flow's share by the inverse of its path latency (see
 *         cs_net_params_t).
 *
 * Uncontended, both modes give send_overhead + H*wire_lat + (H-1)*router_lat
 * + ser(n) for an n-byte message over H hops: with the alpha-beta machine's
 * defaults (wire 0, router `hop`) that is alpha + (H-1)*hop + beta*n.
 *
 * Endpoint ports: a node performs at most `send_ports` sends and
 * `recv_ports` receives at a time (0 = unlimited).  A posted message waits
 * until its source has a free send port and its destination a free receive
 * port, takes both, and holds them until it is delivered (the lecture's
 * "at most one send and one receive at a time").  Waiting messages start in
 * posting order as ports free; a message never holds a port while waiting,
 * so ports cannot deadlock.  After acquiring its ports a message spends
 * send_overhead ticks before its first unit is injected (alpha).
 *
 * Streaming: a message has a gate, the number of its bytes that may be
 * injected so far (initially all, or what cs_net_post says).  Raising the
 * gate with cs_net_gate releases the units it covers.
 */
#ifndef CS_NET_H
#define CS_NET_H

#include <stdint.h>
#include "engine/chanrec.h"
#include "core/error.h"
#include "core/sim.h"
#include "topo/topo.h"

typedef enum cs_net_mode { CS_NET_PACKET = 0, CS_NET_FLUID = 1 } cs_net_mode_t;

/* Fluid mode: when a flow pays its path latency.  Both give one isolated
 * flow send_overhead + latency + ser(n); they differ when flows of unequal
 * path latencies contend (docs/engine.md, "When the latency is paid"). */
typedef enum cs_net_fluid_latency {
    CS_NET_LATENCY_LAST = 0, /* shares from its start, latency added after its bytes crossed */
    CS_NET_LATENCY_FIRST     /* joins the max-min system after its latency, delivered when
                              * its bytes crossed (CM02, Casanova & Marchal; SimGrid) */
} cs_net_fluid_latency_t;

/* Fluid mode: how flows share a bottleneck. */
typedef enum cs_net_fluid_share {
    CS_NET_SHARE_EQUAL = 0,  /* max-min fair: k flows each get 1/k */
    CS_NET_SHARE_LATENCY     /* weighted max-min, weight 1 / path latency: a flow's share
                              * is inversely proportional to its latency, like TCP's to its
                              * round-trip time (CM02's sharing penalty; SimGrid) */
} cs_net_fluid_share_t;

/* Timing parameters of a machine's network.  The per-channel arrays are
 * optional (NULL = the uniform value for every channel) and owned by the
 * caller, who keeps them alive as long as the engine. */
typedef struct cs_net_params {
    int64_t unit_bytes;      /* packet size (>= 1) */
    int64_t ser_num;         /* ser(bytes) = ceil(bytes * ser_num / ser_den) ticks */
    int64_t ser_den;
    cs_tick_t wire_lat;      /* per channel traversed */
    cs_tick_t router_lat;    /* per intermediate node */
    int buf_units;           /* per (channel, vc); 0 = unbounded */
    int send_ports;          /* per node; 0 = unlimited */
    int recv_ports;
    cs_tick_t send_overhead; /* after the ports are taken, before the first unit */
    cs_tick_t recv_overhead; /* after the last unit arrives, before completion */
    /* optional: per node, its send and its receive ports both (0 =
     * unlimited), in place of send_ports and recv_ports: a switch that
     * reduces in the network (issue 36) takes from and sends on all its
     * ports at once.  NULL: the uniform counts. */
    const int32_t *node_ports;
    const int64_t *chan_ser_num;      /* optional per-channel overrides */
    const int64_t *chan_ser_den;
    const cs_tick_t *chan_wire_lat;
    /* A machine's own engine (cs_net_ops_t) that spends events on every
     * own_work_unit bytes of a message, packet by packet: the work estimate
     * of a run counts its packets (engine/exec.h, max_work).  0: its events
     * do not grow with the bytes.  The channel engine ignores it (its packet
     * mode counts units of unit_bytes, its fluid mode none). */
    int64_t own_work_unit;
    /* Fluid mode only (packet mode moves units hop by hop, so their
     * latency is physical): when a flow pays its path latency and how
     * flows share a channel.  0 (LAST, EQUAL): the engine's defaults. */
    cs_net_fluid_latency_t fluid_latency;
    cs_net_fluid_share_t fluid_share;
} cs_net_params_t;

/* Fills the alpha-beta defaults: unit 4 KiB, 1 tick per byte, no latency,
 * 8 buffer units, one send and one receive port, no overheads. */
void cs_net_params_default(cs_net_params_t *np);

/* Callbacks into the owner (the executor).  `user` is what cs_net_post got. */
typedef struct cs_net_hooks {
    void *ctx;
    /* Ports taken, overhead begins.  May be NULL. */
    void (*started)(void *ctx, uint64_t user, cs_tick_t now);
    /* Bytes arrived at the destination so far; only for messages posted with
     * watch = 1.  Called once per unit in packet mode, and at completion.
     * `rate` > 0 says that bytes keep arriving at `rate` bytes per tick from
     * now on until the next call (an engine that moves streams at a steady
     * rate, like the Cerebras fabric, reports only the changes). */
    void (*progress)(void *ctx, uint64_t user, int64_t bytes_arrived, int64_t rate,
                     cs_tick_t now);
    /* Delivered and received (after recv_overhead); ports released. */
    void (*completed)(void *ctx, uint64_t user, cs_tick_t now);
    /* Only from engines with late_release (cs_net_ops_t): the sender's side
     * is done (e.g. its acknowledgement arrived, after completed; or its
     * overhead is over, before completed: LogGP's eager send). */
    void (*released)(void *ctx, uint64_t user, cs_tick_t now);
} cs_net_hooks_t;

typedef struct cs_net cs_net_t; /* opaque */

/* Creates the channel engine in `mode` (implemented by the ops table
 * cs_net_channel_ops(mode)) over `topo` (borrowed), scheduling its events
 * on `sim` (borrowed).  Errors: invalid parameters (CS_ERR_RANGE, naming
 * the field); nothing is allocated then. */
int cs_net_new(cs_sim_t *sim, const cs_topo_t *topo, const cs_net_params_t *np,
               cs_net_mode_t mode, const cs_net_hooks_t *hooks, cs_net_t **out,
               cs_error_t *err);
void cs_net_free(cs_net_t *n); /* accepts NULL */

/* Posts a message now.  gate_bytes: how much may be injected before any
 * cs_net_gate call (pass `bytes` for an ordinary message).  src == dst is a
 * local copy: it takes no port and no time (beyond its gate).  Returns the
 * message handle. */
uint32_t cs_net_post(cs_net_t *n, int src, int dst, int64_t bytes, int64_t gate_bytes,
                     int watch, uint64_t user);
/* Raises a message's gate (never lowers it). */
void cs_net_gate(cs_net_t *n, uint32_t msg, int64_t gate_bytes);
/* The same with a slope: the gate is gate_bytes now and grows by `rate`
 * bytes per tick from now on (engines without rate support treat a slope
 * as 0; only a rate engine reports rates, see hooks.progress). */
void cs_net_gate_rate(cs_net_t *n, uint32_t msg, int64_t gate_bytes, int64_t rate);

/* Native multicast: one message to `ndst` destinations, which the engine
 * copies in the network (router fan-out).  Hooks are called per destination
 * with users[i].  Only where cs_net_has_mcast says so; the executor lowers
 * mcast to unicasts elsewhere. */
int cs_net_has_mcast(const cs_net_t *n);
uint32_t cs_net_post_mcast(cs_net_t *n, int src, int ndst, const int *dst, int64_t bytes,
                           int64_t gate_bytes, int watch, const uint64_t *users);
/* The recv that takes the message of `user` (handle `msg`) is posted:
 * engines with a receiver-initiated protocol may start the transfer. */
void cs_net_matched(cs_net_t *n, uint32_t msg, uint64_t user);
/* A run-time error inside the engine (a machine limit exceeded), after
 * which the engine stopped the simulation: copies it and returns its code,
 * or returns CS_OK. */
int cs_net_error(const cs_net_t *n, cs_error_t *err);

/* Messages still in the engine (posted, not completed). */
int64_t cs_net_active(const cs_net_t *n);
/* After the event queue ran dry with messages still active: writes why
 * (units stuck in full buffers, channels involved) and returns CS_ERR_DEADLOCK. */
int cs_net_explain_stuck(const cs_net_t *n, cs_error_t *err);

/* The engine's ops->mode: the channel engine's mode, CS_NET_PACKET for a
 * machine engine. */
cs_net_mode_t cs_net_mode(const cs_net_t *n);
/* "packet" or "fluid". */
const char *cs_net_mode_name(cs_net_mode_t m);
/* Parses "packet" or "fluid"; anything else is CS_ERR_USAGE listing both. */
int cs_net_parse_mode(const char *text, cs_net_mode_t *out, cs_error_t *err);

/* Per-channel statistics (cs_chan_stats_t, totals over the run) are
 * defined in engine/chanrec.h. */

/* ---- the engine interface ------------------------------------------------
 * Every engine implements this one table: the channel engine above in each
 * of its fidelity modes (cs_net_channel_ops: "packet", "fluid") and every
 * machine's own engine (the Cerebras fabric, the Cell EIB, the CNS-1 network
 * interface, the Groq scheduler, LogGP).  The cs_net_* calls below forward
 * to it, so the executor and the reports see one interface and never ask
 * which engine they hold.  `impl` is the engine's private state, given to
 * cs_net_new_engine.  Entries marked optional may be NULL (the cs_net_* call
 * then does what its comment says). */
typedef struct cs_net_ops {
    /* What summaries, heatmaps and the bench print: "packet", "fluid", or
     * the machine engine's name (cs_net_engine_name). */
    const char *name;
    /* What cs_net_mode reports and JSON results print as "mode": the channel
     * engine's fidelity mode; machine engines leave it CS_NET_PACKET (0). */
    cs_net_mode_t mode;
    /* 1 if post accepts ndst > 1 (router fan-out, cs_net_has_mcast). */
    int has_mcast;
    /* Posts one message from src to ndst destinations (ndst is 1 unless
     * has_mcast), of which gate_bytes may be injected now; hooks get
     * users[i] for dst[i].  Returns the message handle. */
    uint32_t (*post)(void *impl, int src, int ndst, const int *dst, int64_t bytes,
                     int64_t gate_bytes, int watch, const uint64_t *users);
    /* Raises message `msg`'s gate to gate_bytes, growing by `rate` bytes per
     * tick from now on (an engine without rates ignores the slope). */
    void (*gate)(void *impl, uint32_t msg, int64_t gate_bytes, int64_t rate);
    /* Optional: the destination posted the recv that takes message `msg`
     * (user `user`); receiver-initiated protocols start the transfer then. */
    void (*matched)(void *impl, uint32_t msg, uint64_t user);
    /* Messages posted and not yet completed. */
    int64_t (*active)(const void *impl);
    /* The queue ran dry with messages active: writes why, returns
     * CS_ERR_DEADLOCK. */
    int (*explain_stuck)(const void *impl, cs_error_t *err);
    /* Optional: a machine limit exceeded during the run (the engine stopped
     * the simulation): copies it and returns its code.  NULL: never. */
    int (*error)(const void *impl, cs_error_t *err);
    /* Totals of channel `chan` over the run. */
    const cs_chan_stats_t *(*chan_stats)(const void *impl, int chan);
    /* Frees impl (cs_net_free calls it; the recorder is freed there). */
    void (*free)(void *impl);
    /* 1 if a send completes on hooks.released, not with the delivery. */
    int late_release;
    /* Optional: nothing is left to simulate but ops remain.  An engine that
     * holds transfers back for the receiver (a rendezvous) may start them
     * now and return how many it started; 0 (and NULL) means a deadlock. */
    int64_t (*idle)(void *impl);
    /* Optional: the executor runs a calc of `ticks` on node `node`'s CPU,
     * ready at `now`; returns when it ends.  An engine whose message
     * overheads occupy the same CPU (LogGP's o) serialises the two.  NULL:
     * the calc ends at now + ticks. */
    cs_tick_t (*cpu)(void *impl, int node, cs_tick_t now, cs_tick_t ticks);
} cs_net_ops_t;

/* The channel engine's ops table for a fidelity mode. */
const cs_net_ops_t *cs_net_channel_ops(cs_net_mode_t mode);
/* Largest message a mode can carry, in units of unit_bytes (exclusive): a
 * message of `bytes` fits when bytes / unit_bytes < this.  Packet mode
 * counts units in 32 bits; fluid mode has no such limit. */
int64_t cs_net_mode_max_units(cs_net_mode_t mode);

/* Called by the executor when the event queue ran dry with ops left; see
 * cs_net_ops_t.idle.  Returns the transfers started (0: none). */
int64_t cs_net_idle(cs_net_t *n);
/* When a calc of `ticks` ready at `now` on `node` ends (see cs_net_ops_t.cpu;
 * now + ticks for engines without a CPU of their own). */
cs_tick_t cs_net_cpu(cs_net_t *n, int node, cs_tick_t now, cs_tick_t ticks);
/* 1 if sends complete on hooks.released rather than on delivery. */
int cs_net_late_release(const cs_net_t *n);
/* Wraps an engine that implements `ops` (borrowed, usually a static const
 * table) over `topo`; `impl` is owned by the result (freed with ops->free).
 * Never fails (allocation failure aborts, as everywhere). */
cs_net_t *cs_net_new_engine(const cs_net_ops_t *ops, void *impl, const cs_topo_t *topo);
/* "packet", "fluid", or a machine engine's name (ops->name). */
const char *cs_net_engine_name(const cs_net_t *n);
/* The engine's private state if `n` is the engine `ops` implements (the same
 * table, compared by address), NULL otherwise or if n is NULL.  Machine
 * accessors call it with their own table, so a wrong engine yields NULL
 * instead of a mistyped pointer. */
void *cs_net_impl_of(const cs_net_t *n, const cs_net_ops_t *ops);

const cs_chan_stats_t *cs_net_chan_stats(const cs_net_t *n, int chan);
/* Fills top[] with the busiest of the engine's channels that carried
 * traffic (most busy ticks first, then most bytes, then lowest id) and
 * returns how many (at most count; 0 for a NULL engine).  O(channels *
 * count): for the few channels a summary, a table or a timeline shows. */
int cs_net_busiest_channels(const cs_net_t *n, int *top, int count);

/* Optional time-bucketed records (for heatmaps, frames and timelines):
 * enable before the first post.  Buckets start `width` ticks wide; when
 * more than max_buckets would be needed the width doubles and neighbours
 * merge, so any run length fits (engine/chanrec.h).  Only channels that carry
 * traffic allocate buckets.  Machine engines record into the same recorder
 * through cs_net_recorder; one that does not leaves bucket_count at 0. */
void cs_net_enable_buckets(cs_net_t *n, cs_tick_t width, int max_buckets);
/* Current bucket width and count; bucket b covers [b*width, (b+1)*width). */
cs_tick_t cs_net_bucket_width(const cs_net_t *n);
int cs_net_bucket_count(const cs_net_t *n);
/* Bucket b of channel c, or NULL if the channel never carried traffic. */
const cs_chan_stats_t *cs_net_chan_bucket(const cs_net_t *n, int chan, int b);
/* The recorder (NULL until cs_net_enable_buckets): a machine engine feeds
 * it with the cs_chanrec_* calls, which accept NULL. */
cs_chanrec_t *cs_net_recorder(const cs_net_t *n);

#endif
