/*
 * program.h - the one language of collsim: per-rank operations with
 * dependencies.  Collective algorithms emit programs, trace readers build
 * them from files, the executor runs them on any machine.
 *
 * Operations:
 *   send(peer, bytes, tag)      matched with recvs per (src, dst, tag) in
 *   recv(peer, bytes, tag)      posting order, as in MPI; recv peer and tag may
 *                               be CS_ANY (GOAL's -1)
 *   mcast(peers[], bytes, tag)  one payload to several ranks; each receiver
 *                               posts an ordinary recv from the sender
 *   calc(ticks, bytes)          local work: `ticks` plus `bytes` reduced at the
 *                               machine's reduction rate
 * Dependencies (both ops on the same rank):
 *   CS_DEP_AFTER        op starts after pred has completed (GOAL `requires`)
 *   CS_DEP_AFTER_START  op starts after pred has started (GOAL `irequires`)
 *   CS_DEP_STREAM       op starts after pred has started, and its byte b may
 *                       proceed only once pred has made progress past byte b
 *                       (recv: bytes arrived; send/mcast: bytes delivered;
 *                       calc: bytes processed).  This expresses pipelined
 *                       forwarding (receive, add, send on, unit by unit).
 *
 * Ops get dense ids 0..nops-1 in creation order.
 *
 * Op order.  The ids are part of the program, not a mere numbering: ops
 * that are ready at the same tick start in id order, and the successors an
 * event enables start in id order (whatever the order of the cs_program_dep
 * calls), so two messages that want one port at the same tick take it in
 * the order of their send ops' ids.  The suite's algorithms use that order
 * on purpose: they build a phase's ops before the next phase's (the
 * butterfly's fold-in before its exchanges), and trees in pre-order so that
 * a parent takes its children's messages in the order it receives them
 * (coll/visit.c, cs_coll_emit_forest); the closed-form times of the tests depend
 * on it.  Programs that differ only in their ids may therefore differ in
 * time; the GOAL writer keeps the ids (goal.h).
 *
 * Building never fails loudly: the first invalid call is remembered and
 * returned by cs_program_finalize, which also rejects dependency cycles.
 */
#ifndef CS_PROGRAM_H
#define CS_PROGRAM_H

#include <stddef.h>
#include <stdint.h>
#include "core/error.h"
#include "core/proto.h"

#define CS_ANY (-1)
/* Op ids fit in a dependency's 30 bits (cs_dep_t); dependencies are counted
 * in 32 bits.  Builders record an error beyond (see cs_program_set_limits).
 * A windowed program keeps no tables and has a higher limit
 * (CS_PROGRAM_MAX_WINDOW_OPS). */
#define CS_PROGRAM_MAX_OPS ((int32_t)((1u << 30) - 1))
#define CS_PROGRAM_MAX_DEPS ((int64_t)UINT32_MAX)

typedef enum cs_op_kind { CS_OP_SEND, CS_OP_RECV, CS_OP_MCAST, CS_OP_CALC } cs_op_kind_t;
typedef enum cs_dep_kind { CS_DEP_AFTER, CS_DEP_AFTER_START, CS_DEP_STREAM } cs_dep_kind_t;

/* 24 bytes: a program of 10^8 ops must fit in memory.  What only some
 * programs have lives beside the ops: the number of mcast destinations
 * (cs_program_npeers), data descriptors (cs_program_data), source lines
 * (cs_program_line) and labels (cs_program_label). */
typedef struct cs_op {
    int64_t bytes;      /* send/recv/mcast payload; calc: bytes to reduce */
    union {
        struct {
            int32_t peer; /* send: dst; recv: src or CS_ANY; mcast: index in
                             the peer pool (see cs_program_mcast_peers) */
            int32_t tag;  /* CS_ANY allowed on recv */
        };
        int64_t ticks;  /* calc only: fixed duration (added to the reduction
                           cost); a calc has no peer and no tag */
    };
    int32_t rank;
    uint8_t kind;       /* cs_op_kind_t */
    uint8_t mark;       /* a builder's own flag (cs_program_set_mark), in the
                           padding: not part of the program */
    uint8_t join;       /* a calc made by cs_program_join, in the padding */
    uint8_t proto;      /* send/mcast: cs_proto_t, the protocol its message
                           runs under (cs_program_set_proto), in the last
                           byte of padding; 0 (none) elsewhere */
} cs_op_t;

/* A dependency as the tables list it: the other op's id and the kind,
 * packed in 32 bits; read it with cs_dep_op and cs_dep_kind. */
typedef uint32_t cs_dep_t;
static inline int32_t cs_dep_op(cs_dep_t d) { return (int32_t)(d >> 2); }
static inline cs_dep_kind_t cs_dep_kind(cs_dep_t d) { return (cs_dep_kind_t)(d & 3u); }

/* What part of the rank's data buffer an op moves, for --validate.  A send
 * reads [off, off+len) of its rank's buffer when it starts; the matching
 * recv writes it into [off, off+len) of the receiver's buffer, replacing
 * (COPY) or combining with (REDUCE) what is there.  Offsets may go beyond
 * the collective's nominal buffer (scratch space). */
typedef enum cs_data_mode { CS_DATA_COPY = 0, CS_DATA_REDUCE = 1 } cs_data_mode_t;
typedef struct cs_data {
    int64_t off;
    int64_t len : 62;   /* below CS_DATA_MAX_LEN; 16 bytes in all, because the
                           suite gives most sends and recvs a descriptor */
    uint64_t mode : 2;  /* cs_data_mode_t */
} cs_data_t;
#define CS_DATA_MAX_LEN ((int64_t)1 << 61)

typedef struct cs_program cs_program_t; /* opaque */

cs_program_t *cs_program_new(int nranks);
void cs_program_free(cs_program_t *p); /* accepts NULL */

/* Op builders; each returns the new op id, or -1 after recording an error
 * (rank or peer out of range, negative size, too many ops). */
int32_t cs_program_send(cs_program_t *p, int rank, int dst, int64_t bytes, int tag);
int32_t cs_program_recv(cs_program_t *p, int rank, int src, int64_t bytes, int tag);
int32_t cs_program_mcast(cs_program_t *p, int rank, const int32_t *dsts, int n, int64_t bytes, int tag);
int32_t cs_program_calc(cs_program_t *p, int rank, int64_t ticks, int64_t bytes);
/* A join: a calc of 0 ticks and 0 bytes that the executor completes the
 * moment its last dependency does, without the rank's CPU and without an
 * event, enabling its successors right there (issue 34).  It stands for the
 * npred * nsucc edges of "every op of a stage after every op of the last"
 * with npred + nsucc, and runs exactly as those edges would: its successors
 * start in the order, and at the point of the run, they would have started
 * in had they depended on its predecessors directly, provided its id lies
 * between the two stages' (it is built after the stage it waits for and
 * before the one that waits for it).  An ordinary calc(0, 0) instead waits
 * for the rank's CPU and completes through an event, after the tick's other
 * events.  A join takes AFTER and AFTER_START dependencies, never STREAM
 * ones (it moves no bytes).  Formats that have no join write it as a calc
 * of 0 (see docs/engine.md, "Joins"). */
int32_t cs_program_join(cs_program_t *p, int rank);
/* Joins added so far. */
int64_t cs_program_njoins(const cs_program_t *p);
/* The ops of p that are not joins, i.e. what a report counts as the
 * program's ops: a join is the executor's device, not part of the
 * algorithm (docs/engine.md, "Joins"). */
int32_t cs_program_nops_visible(const cs_program_t *p);
/* The program a join stands for: a finalized copy of the finalized p
 * without its joins, where every op that depended on a join depends
 * instead on each of the join's own predecessors (joins of joins
 * followed), with the kind of the edge into that predecessor (a join
 * starts and completes at once, so only that edge's kind matters).  The
 * other ops keep their order (ids renumbered densely), data descriptors,
 * lines, labels, source name and time unit; an op's dependencies keep
 * their order, a join's predecessors taking the join's place, each
 * (predecessor, kind) listed once.  This is the program the writers export
 * (GOAL, MSCCL, Chakra: formats without a join).  *out is NULL when p has
 * no join (use p itself), finalized or not.  CS_ERR_INTERNAL for a windowed
 * or unfinalized p with joins.  Memory: the copy, plus 5 bytes per op of p while it works. */
int cs_program_without_joins(const cs_program_t *p, cs_program_t **out, cs_error_t *err);
/* `op` may not start (or stream) before `pred` as `kind` says.  Both must be
 * ops of the same rank; records an error otherwise, or beyond the limit of
 * dependencies. */
int cs_program_dep(cs_program_t *p, int32_t op, int32_t pred, cs_dep_kind_t kind);
/* A flag a builder keeps per op while it builds (coll.c: "another op of
 * the rank waits for this one"), stored in the op so that it costs no
 * memory of its own and goes when a window releases the op. */
void cs_program_set_mark(cs_program_t *p, int32_t op);
int cs_program_marked(const cs_program_t *p, int32_t op);
/* The protocol a send's or mcast's message runs under (core/proto.h):
 * `bytes` stay the payload, the executor puts cs_proto_wire(proto, bytes)
 * on the wire and starts the message the protocol's latency later.
 * Ignored for other ops and out-of-range protocols (kept none). */
void cs_program_set_proto(cs_program_t *p, int32_t op, cs_proto_t proto);
/* The latency, in seconds, of a message under `proto` in this program:
 * the value set by cs_program_set_proto_lat, else cs_proto_lat_default.
 * A negative value gives the default back. */
void cs_program_set_proto_lat(cs_program_t *p, cs_proto_t proto, double seconds);
double cs_program_proto_lat(const cs_program_t *p, cs_proto_t proto);
/* Adds to dst a copy of src's op `id`, as the builder call that made it
 * would: kind, bytes, tag plus tag_shift (a calc has none), protocol (and
 * src's latency for it: a copied message runs as the original did), data
 * descriptor, a join as a join; its rank and peers through rank_map (NULL:
 * the same), a calc's ticks as `ticks` (-1: src's, for a caller that
 * converts time units).  The one way a program's ops are copied into
 * another (the writers' program without joins, a benchmark loop's
 * iterations, a trace's collectives), so that nothing an op carries is
 * lost on the way.  Dependencies, lines and labels are the caller's.
 * Returns the new id, or -1 after recording the error in dst. */
int32_t cs_program_copy_op(cs_program_t *dst, const cs_program_t *src, int32_t id,
                           const int32_t *rank_map, int32_t tag_shift, int64_t ticks);
/* Attaches a data descriptor to a send, mcast or recv. */
int cs_program_set_data(cs_program_t *p, int32_t op, int64_t off, int64_t len, cs_data_mode_t mode);
/* The op's data descriptor, or NULL. */
const cs_data_t *cs_program_data(const cs_program_t *p, int32_t op);
/* Is the program finalized?  (The dependency tables exist only then.) */
int cs_program_is_finalized(const cs_program_t *p);

/* Optional provenance for messages: the op's source line and label. */
void cs_program_set_origin(cs_program_t *p, int32_t op, int line, const char *label);
/* The op's source line, or 0. */
int cs_program_line(const cs_program_t *p, int32_t op);
/* Name of the file the program came from (copied), for messages. */
void cs_program_set_source(cs_program_t *p, const char *name);
/* Unit of calc `ticks` in seconds: 0 (the default) means machine ticks; GOAL
 * files use 1e-9 (LogGOPSim's nanoseconds) and the executor converts. */
void cs_program_set_time_unit(cs_program_t *p, double seconds);
double cs_program_time_unit(const cs_program_t *p);

/* Renumbers the ops of a program that is not finalized yet: op i becomes
 * op new_id[i].  Ranks, peers, labels, origins, data descriptors and
 * dependencies follow their ops; every op keeps its dependencies in the
 * order they were added.  Op ids are a program's order (see "Op order"
 * above), so this is how a reader that meets the ops in another order (GOAL
 * writes them rank by rank) gives them back their ids.  CS_ERR_RANGE if
 * new_id is not a permutation of 0..nops-1, CS_ERR_INTERNAL after
 * finalize; on error nothing changes.  O(nops + dependencies); out of
 * place, one array at a time, so it holds a second copy of the ops (24
 * bytes per op) while it runs. */
int cs_program_renumber(cs_program_t *p, const int32_t *new_id, cs_error_t *err);

/* The next op a builder call adds takes id `id` instead of the next free
 * one (issue 34): a reader that knows every op's final id before it meets
 * the op (GOAL's order lines before the rank blocks) places the ops there
 * as it reads, instead of renumbering them afterwards.  Ids between the
 * highest one placed and `id` stay free until placed; cs_program_nops
 * counts them, and cs_program_finalize refuses a program that still has
 * one (CS_ERR_INTERNAL).  The caller places each id once (not checked).
 * Not for windowed programs; an id beyond the limit of ops is the builder
 * call's error. */
void cs_program_place(cs_program_t *p, int32_t id);

/* Lowers the program's limits below CS_PROGRAM_MAX_OPS and
 * CS_PROGRAM_MAX_DEPS (larger values keep the built-in ones): a builder
 * call beyond them records CS_ERR_NOMEM.  For tests of the limits without
 * 2^30 ops, and for callers that cap a program's memory. */
void cs_program_set_limits(cs_program_t *p, int32_t max_ops, int64_t max_deps);

/* Checks the program and freezes it: reports the first recorded builder
 * error, then dependency cycles (naming the rank and ops of one cycle).
 * No builder call is allowed after success. */
int cs_program_finalize(cs_program_t *p, cs_error_t *err);

/* Bytes the program holds in its own allocations (ops, peers, dependency
 * tables, side tables, labels), for the benchmarks' bytes per op. */
size_t cs_program_bytes(const cs_program_t *p);

/* ---- windowed programs (issue 17) ----------------------------------------
 * A windowed program is run while it is being built (core/progen.h): its
 * ops live in chunks that never move and are given back once the run is
 * past them, so memory follows the ops in flight, not the program's length.
 * Its dependencies must point to earlier ops (no cycle is possible); they
 * are handed to the executor as they come (cs_program_take_deps) and never
 * tabled, so cs_program_preds and cs_program_succs are not available.  It
 * carries no side tables (lines, labels, and data descriptors unless
 * cs_program_keep_data): the builder records an error instead.
 * cs_program_finalize only reports the first builder error and marks the
 * program whole. */
/* Makes a new, empty program windowed. */
void cs_program_set_windowed(cs_program_t *p);
int cs_program_is_windowed(const cs_program_t *p);
/* A new, empty windowed program keeps data descriptors (--validate on a
 * windowed run, issue 34): 16 bytes per op beside the op, given back with
 * it (cs_program_release). */
void cs_program_keep_data(cs_program_t *p);
/* Ops below this id were given back (cs_program_release; 0 for a whole
 * program): no one may read them. */
int32_t cs_program_released(const cs_program_t *p);
/* Did the windowed program refuse a dependency on a later op (its builder
 * needs the whole program)? */
int cs_program_points_forward(const cs_program_t *p);
/* Dependencies added so far (a window's taken ones included). */
int64_t cs_program_deps_added(const cs_program_t *p);
/* A windowed program's dependency as cs_program_take_deps hands it over:
 * whole op ids, since a window's ids may pass the 2^30 that cs_dep_t
 * packs (see CS_PROGRAM_MAX_WINDOW_OPS). */
typedef struct cs_wdep {
    int32_t op, pred;
    int32_t kind; /* cs_dep_kind_t */
} cs_wdep_t;
/* A windowed program may have this many ops in all (released ones
 * included): the executor names ops in 31 bits.  Checked before a run
 * where the count is known (cs_coll_max_ops), else when the op is added. */
#define CS_PROGRAM_MAX_WINDOW_OPS ((int32_t)(INT32_MAX - 1))
/* The dependencies added since the last call, n of them in the order they
 * were added; valid until the next builder call. */
int64_t cs_program_take_deps(cs_program_t *p, const cs_wdep_t **deps);
/* Gives back the ops (and mcast destinations) below op `below`, which no
 * one reads again; a later dependency on them is an error. */
void cs_program_release(cs_program_t *p, int32_t below);

int cs_program_nranks(const cs_program_t *p);
/* All ops ever added (those a window released included). */
int32_t cs_program_nops(const cs_program_t *p);
/* Op `id`; pointers stay valid while ops are added (not across
 * cs_program_renumber, nor, in a window, cs_program_release). */
const cs_op_t *cs_program_op(const cs_program_t *p, int32_t id);
/* An mcast's destinations (NULL for other ops) and their number (1 for a
 * send or recv, 0 for a calc). */
const int32_t *cs_program_mcast_peers(const cs_program_t *p, const cs_op_t *op);
int32_t cs_program_npeers(const cs_program_t *p, const cs_op_t *op);
/* Predecessors of op (its own dependency list), valid after finalize. */
const cs_dep_t *cs_program_preds(const cs_program_t *p, int32_t op, int *n);
/* Successors (ops that depend on op), valid after finalize. */
const cs_dep_t *cs_program_succs(const cs_program_t *p, int32_t op, int *n);
/* The tables of a finalized whole program as they are stored, for the
 * executor's per-op path (issue 34), which reads an op and walks its
 * dependencies for every op of the run: through these it does so without
 * a function call each time.  ops[id] is cs_program_op's op; op id's
 * predecessors are preds[pred_start[id] .. pred_start[id + 1]), its
 * successors likewise.  Every field is NULL for a windowed or unfinalized
 * program (use the functions).  Valid while p lives, unchanged. */
typedef struct cs_program_tables {
    const cs_op_t *ops;
    const uint32_t *pred_start, *succ_start;
    const cs_dep_t *preds, *succs;
} cs_program_tables_t;
void cs_program_tables(const cs_program_t *p, cs_program_tables_t *t);
/* Label of an op (NULL if none) and the program's source name (or NULL). */
const char *cs_program_label(const cs_program_t *p, int32_t op);
const char *cs_program_source(const cs_program_t *p);
/* Writes "send 8b to 3 tag 0" style text for an op (for messages). */
void cs_program_describe(const cs_program_t *p, int32_t op, char *buf, size_t len);

#endif
