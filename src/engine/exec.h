/*
 * exec.h - the program executor: runs a program on a network engine.
 *
 * The executor enables ops as their dependencies allow, matches sends with
 * recvs per (src, dst, tag) in posting order (MPI's non-overtaking rule, with
 * CS_ANY wildcards), lowers mcast to unicasts posted in destination order
 * (the engine's send port then serialises them), runs calc ops on the rank's
 * single CPU in the order they become ready, and forwards streaming progress
 * from one op to the gates of the ops that stream from it.
 *
 * Sends are eager: a message travels as soon as its ports allow, whether or
 * not the recv is posted; the recv completes when it is posted and its
 * message has fully arrived.  A message larger than its recv is an error.
 *
 * When no event is left and ops remain, the run is a deadlock: the error
 * names the waiting ranks and ops (unmatched recvs, unmatched sends,
 * ops waiting on dependencies, or units stuck in the network).
 */
#ifndef CS_EXEC_H
#define CS_EXEC_H

#include <signal.h>
#include <stdint.h>
#include "core/error.h"
#include "engine/net.h"
#include "core/program.h"
#include "core/progen.h"
#include "core/queue.h"
#include "topo/topo.h"

typedef struct cs_exec_env {
    const cs_topo_t *topo;
    const cs_net_params_t *net;
    int64_t reduce_num, reduce_den; /* calc bytes -> ticks */
    double tick_seconds;            /* to convert calc durations of programs
                                       whose time unit is not the tick */
    /* A machine's own network engine (see cs_net_ops_t), or NULL for the
     * channel engine over topo and net. */
    int (*net_new)(const void *ctx, cs_sim_t *sim, const cs_net_hooks_t *hooks,
                   cs_net_t **out, cs_error_t *err);
    const void *net_ctx;
} cs_exec_env_t;

/* The default work limit of a run (cs_exec_opts_t.max_work): packets
 * summed over the program's messages (docs/limits.md).  2^26: a few tens
 * of seconds of packet simulation; every bench row and golden run is far
 * below it. */
#define CS_EXEC_WORK_LIMIT (INT64_C(1) << 26)

/* Observer of data movement, used by --validate (the coll layer implements
 * it; the executor knows nothing of collectives).  Called only for ops that
 * carry a data descriptor. */
typedef struct cs_exec_observer {
    void *ctx;
    /* A message of `send_op` (one per mcast destination) leaves `src_rank`:
     * snapshot what it carries and return a token for it. */
    uint64_t (*send_start)(void *ctx, int32_t send_op, int src_rank, const cs_data_t *d);
    /* `recv_op` on `dst_rank` completed with the message whose token is
     * given: apply its content.  send_d is the sender's descriptor. */
    void (*recv_done)(void *ctx, int32_t recv_op, int dst_rank, const cs_data_t *recv_d,
                      const cs_data_t *send_d, uint64_t token);
} cs_exec_observer_t;

typedef struct cs_exec_opts {
    cs_net_mode_t mode;
    cs_queue_kind_t queue;
    const int32_t *rank_to_node;  /* NULL = rank r on node r */
    cs_tick_t bucket_width;       /* > 0: keep time-bucketed channel stats */
    int max_buckets;
    const cs_exec_observer_t *observer; /* NULL: no data tracking */
    int record_messages;          /* fill cs_exec_result_t.msgs */
    int record_op_times;          /* fill cs_exec_result_t.ops (16 bytes per op:
                                     ask only when reading them); a windowed run
                                     then keeps its program's ops too */
    /* Progress: called about every 2^16 events (never more often) while
     * the simulation runs, with the simulated time, the ops completed so
     * far and the events dispatched.  NULL: none.  Must not touch the run. */
    void (*poll)(void *ctx, cs_tick_t now, int32_t done_ops, int32_t nops, uint64_t events);
    void *poll_ctx;
    /* Refuse, before it starts, a whole (not windowed) run whose engine
     * moves messages unit by unit when its units summed over all messages
     * (an mcast counts each destination) exceed this; 0: no limit.
     * cs_exec_opts_default sets CS_EXEC_WORK_LIMIT (a front end's --force
     * sets 0). */
    int64_t max_work;
    /* Cancellation: when *cancel becomes non-zero (a signal handler may set
     * it) the run stops at the next batch of 2^16 events with
     * CS_ERR_CANCELLED and a message saying how far it got ("interrupted at
     * t=T ticks, N events, M of K ops done").  NULL: never. */
    const volatile sig_atomic_t *cancel;
    /* Spans (issue 32: the iterations of a benchmark loop): span k is the
     * ops with ids in [span_first[k], span_end[k]); spans are in id order
     * and do not overlap (span_end[k] <= span_first[k+1]); ops between
     * spans belong to none.  The result's spans[k] is the earliest start
     * and the latest end of span k's ops.  Costs a binary search per op
     * start and end, and 16 bytes per span.  nspans 0: none. */
    const int32_t *span_first, *span_end;
    int32_t nspans;
} cs_exec_opts_t;

void cs_exec_opts_default(cs_exec_opts_t *o);

typedef struct cs_op_times {
    cs_tick_t start;  /* -1 if never started */
    cs_tick_t end;    /* -1 if never completed */
} cs_op_times_t;

/* A message of the run: the send (or mcast) op it came from and the recv
 * op that took it (-1 if none did: the run then failed). */
typedef struct cs_exec_msg {
    int32_t send_op, recv_op;
} cs_exec_msg_t;

typedef struct cs_exec_result {
    cs_tick_t finish;        /* time the last op completed */
    int nranks;
    cs_tick_t *rank_finish;  /* per rank: last op completion (0 if none) */
    cs_op_times_t *ops;      /* with opts.record_op_times: per op, else NULL */
    uint64_t events;
    size_t queue_peak;
    double wall_seconds;
    int64_t messages;        /* network messages (mcast counts each destination) */
    int64_t proto_messages[CS_PROTO_COUNT]; /* ... of each protocol (core/proto.h;
                                               [CS_PROTO_NONE]: without one) */
    cs_tick_t proto_lat[CS_PROTO_COUNT];    /* the latency each protocol's message paid */
    cs_exec_msg_t *msgs;     /* with opts.record_messages: every message in
                                the order the sends started, else NULL */
    int64_t nmsgs;
    cs_op_times_t *spans;    /* with opts.nspans: per span, the earliest start
                                and latest end of its ops (-1: none), else NULL */
    int32_t nspans;
    int64_t ops_held_peak;   /* the most ops the executor held at once: a
                                windowed run's window, else all of them */
    cs_net_t *net;           /* kept for channel statistics; owned */
    cs_sim_t *sim;           /* owned */
} cs_exec_result_t;

/* Runs `prog` (finalized) on the environment.  On CS_ERR_DEADLOCK and other
 * run-time errors the result still holds what happened until then. */
int cs_exec_run(const cs_exec_env_t *env, const cs_program_t *prog, const cs_exec_opts_t *o,
                cs_exec_result_t *res, cs_error_t *err);
/* Runs the program of a generator while it is built (core/progen.h): the
 * same events and times as cs_exec_run on the whole program, or an error
 * if the generator breaks its contract.  Memory follows the ops in flight.
 * With opts.record_op_times the program's ops are kept; an observer
 * (--validate) sees the data descriptors of a program that keeps them
 * (cs_program_keep_data), each op's while the executor holds it. */
int cs_exec_run_gen(const cs_exec_env_t *env, cs_progen_t *gen, const cs_exec_opts_t *o,
                    cs_exec_result_t *res, cs_error_t *err);
void cs_exec_result_destroy(cs_exec_result_t *res); /* accepts zeroed */

#endif
