/*
 * program.c - building, checking and freezing programs (see program.h).
 *
 * Memory is the point of this file: a P = 4,096 ring allreduce has 8 * 10^7
 * ops, so every byte per op counts.  Ops live in one growable array of
 * 24-byte cs_op_t; what only some programs carry (source lines, data
 * descriptors, labels) lives in side arrays allocated the first time one is
 * set.  An mcast's destinations live in one pool, preceded by their count.
 *
 * Dependencies are collected as (op, packed dep) pairs of 8 bytes while
 * building and turned by cs_program_finalize into two CSR tables of 4-byte
 * cs_dep_t with 32-bit starts (predecessors and successors: the executor
 * walks both).  Builders add an op's dependencies right after the op, so the
 * pairs usually arrive sorted by op: the predecessor table is then made in
 * place, and the pairs never coexist with a copy.  When every dependency
 * points to an earlier op no cycle is possible and the cycle check is one
 * flag, kept while building.  Labels are stored in one string pool,
 * because traces of 10^7 ops must not pay a malloc per op.
 */
#include "core/program.h"

#include "core/chunks.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The size the memory budget is made of (see the head comment). */
_Static_assert(sizeof(cs_op_t) == 24, "cs_op_t grew: it is paid once per op");
_Static_assert(sizeof(cs_dep_t) == 4, "cs_dep_t grew: it is paid twice per dependency");
_Static_assert(sizeof(cs_data_t) == 16, "cs_data_t grew: most suite ops carry one");

struct cs_program {
    int nranks;
    int finalized;
    cs_op_t *ops;
    int32_t nops, cap_ops;
    int32_t max_ops;         /* CS_PROGRAM_MAX_OPS or lower (cs_program_set_limits) */
    int32_t next_id;         /* -1, or the id of the next op (cs_program_place) */
    int32_t holes;           /* ids below nops not placed yet */
    /* windowed (cs_program_set_windowed): ops and mcast destinations live
     * in chunks that never move, released as the run passes them; `ops`
     * and `peers` stay NULL.  The chunks of destinations record the last
     * mcast op that uses them, so they go with the ops. */
    int windowed;
    int forward;             /* a dependency on a later op was refused */
    cs_chunks_t wops, wpeers;
    /* data descriptors of a windowed program that keeps them
     * (cs_program_keep_data): one per op beside the op, len -1 = none */
    cs_chunks_t wdata;
    int wdata_on;
    int32_t *wpeers_last;    /* per chunk of destinations: its last op */
    int64_t nwpeers_last;
    cs_wdep_t *wdeps;        /* dependencies not yet taken (cs_program_take_deps) */
    int64_t nwdeps, cap_wdeps, wtaken;
    int64_t njoins;     /* cs_program_join's ops */
    int64_t wdeps_added;     /* all dependencies ever added */
    int32_t *peers;          /* mcast pool: count, then the destinations */
    int64_t npeers, cap_peers;
    /* building: dependency i is op build[2i] depending on build[2i+1] (a
     * packed cs_dep_t naming the predecessor) */
    uint32_t *build;
    int64_t ndeps, cap_build, max_deps;
    int deps_sorted;         /* build pairs in nondecreasing op order */
    int deps_backward;       /* every predecessor has a smaller id: no cycle */
    /* CSR after finalize */
    uint32_t *pred_start, *succ_start; /* nops + 1 */
    cs_dep_t *preds, *succs;
    /* side arrays, cap_ops long, NULL until first needed */
    int32_t *line;           /* source line, 0 = none */
    int32_t *data_of;        /* index into data, -1 = none */
    int64_t *label_off;      /* offset into label pool, -1 = none */
    char *label_pool;
    int64_t label_len, label_cap;
    char *source;
    double time_unit;
    double proto_lat[CS_PROTO_COUNT]; /* seconds; < 0: the protocol's default */
    cs_data_t *data;         /* descriptors, indexed by data_of */
    int32_t ndata, cap_data;
    /* first builder error */
    int err_code;
    char err_msg[CS_ERROR_MSG_MAX];
};

static void record(cs_program_t *p, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void record(cs_program_t *p, int code, const char *fmt, ...)
{
    va_list ap;
    if (p->err_code)
        return;
    p->err_code = code;
    va_start(ap, fmt);
    vsnprintf(p->err_msg, sizeof p->err_msg, fmt, ap);
    va_end(ap);
}


/* A packed dependency on op `op` of kind `kind` (see cs_dep_t). */
static cs_dep_t pack_dep(int32_t op, cs_dep_kind_t kind)
{
    return (uint32_t)op << 2 | (uint32_t)kind;
}

cs_program_t *cs_program_new(int nranks)
{
    cs_program_t *p = cs_calloc(1, sizeof *p);
    p->nranks = nranks;
    p->max_ops = CS_PROGRAM_MAX_OPS;
    p->next_id = -1;
    p->max_deps = CS_PROGRAM_MAX_DEPS;
    p->deps_sorted = p->deps_backward = 1;
    for (int k = 0; k < CS_PROTO_COUNT; k++)
        p->proto_lat[k] = -1;
    if (nranks < 1)
        record(p, CS_ERR_RANGE, "a program needs at least one rank, got %d", nranks);
    return p;
}

void cs_program_free(cs_program_t *p)
{
    if (!p)
        return;
    free(p->ops);
    free(p->peers);
    cs_chunks_free(&p->wops);
    cs_chunks_free(&p->wpeers);
    cs_chunks_free(&p->wdata);
    free(p->wpeers_last);
    free(p->wdeps);
    free(p->build);
    free(p->pred_start);
    free(p->succ_start);
    free(p->preds);
    free(p->succs);
    free(p->line);
    free(p->data_of);
    free(p->label_off);
    free(p->label_pool);
    free(p->source);
    free(p->data);
    free(p);
}

void cs_program_set_limits(cs_program_t *p, int32_t max_ops, int64_t max_deps)
{
    if (max_ops >= 0 && max_ops < p->max_ops)
        p->max_ops = max_ops;
    if (max_deps >= 0 && max_deps < p->max_deps)
        p->max_deps = max_deps;
}

/* A side array of `from` entries of `elem` bytes resized to `to` entries,
 * new entries filled with the byte `fill` (0 or 0xff gives 0 or -1). */
static void *side_resize(void *a, size_t elem, int32_t from, int32_t to, int fill)
{
    a = cs_realloc(a, (size_t)to * elem);
    if (to > from)
        memset((char *)a + (size_t)from * elem, fill, (size_t)(to - from) * elem);
    return a;
}

/* Gives the op array and the side arrays that exist room for `cap` ops. */
static void resize_ops(cs_program_t *p, int32_t cap)
{
    p->ops = cs_realloc(p->ops, (size_t)cap * sizeof *p->ops);
    if (p->line)
        p->line = side_resize(p->line, sizeof *p->line, p->cap_ops, cap, 0);
    if (p->data_of)
        p->data_of = side_resize(p->data_of, sizeof *p->data_of, p->cap_ops, cap, 0xff);
    if (p->label_off)
        p->label_off = side_resize(p->label_off, sizeof *p->label_off, p->cap_ops, cap, 0xff);
    p->cap_ops = cap;
}

static int check_rank(cs_program_t *p, const char *what, int r, int allow_any)
{
    if ((allow_any && r == CS_ANY) || (r >= 0 && r < p->nranks))
        return 1;
    record(p, CS_ERR_RANGE, "%s %d is out of range: the program has ranks 0..%d", what, r,
           p->nranks - 1);
    return 0;
}

/* Op `id` wherever it lives (the flat array or a window's chunks). */
static cs_op_t *at(const cs_program_t *p, int32_t id)
{
    return p->windowed ? cs_chunks_at(&p->wops, id) : &p->ops[id];
}

/* Appends an op with its kind, rank and size; the caller sets peer and tag
 * or ticks. */
static int32_t add_op(cs_program_t *p, uint8_t kind, int rank, int64_t bytes)
{
    cs_op_t *op;
    int32_t id = p->nops;
    if (p->next_id >= 0) {
        id = p->next_id;
        p->next_id = -1;
    }
    if (p->finalized) {
        record(p, CS_ERR_INTERNAL, "op added to a finalized program");
        return -1;
    }
    if (!check_rank(p, "rank", rank, 0))
        return -1;
    if (bytes < 0) {
        record(p, CS_ERR_RANGE, "rank %d: negative size %lld", rank, (long long)bytes);
        return -1;
    }
    if (id >= p->max_ops) {
        record(p, CS_ERR_NOMEM, "rank %d: more than %d ops, the limit of a program", rank,
               p->max_ops);
        return -1;
    }
    if (p->windowed) {
        op = cs_chunks_ensure(&p->wops, id);
        if (p->wdata_on) /* chunks come zeroed, which is a descriptor */
            ((cs_data_t *)cs_chunks_ensure(&p->wdata, id))->len = -1;
    } else {
        if (id >= p->cap_ops) {
            int32_t cap = p->cap_ops;
            do
                cap = cap == 0 ? 64 : cap > CS_PROGRAM_MAX_OPS / 2 ? CS_PROGRAM_MAX_OPS : 2 * cap;
            while (cap <= id);
            resize_ops(p, cap);
        }
        op = &p->ops[id];
    }
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->rank = rank;
    op->bytes = bytes;
    if (id < p->nops) {
        p->holes--;
    } else {
        p->holes += id - p->nops;
        p->nops = id + 1;
    }
    return id;
}

void cs_program_place(cs_program_t *p, int32_t id)
{
    if (p->windowed)
        record(p, CS_ERR_INTERNAL, "ops of a windowed program cannot be placed");
    else
        p->next_id = id;
}

int32_t cs_program_send(cs_program_t *p, int rank, int dst, int64_t bytes, int tag)
{
    int32_t id;
    if (!check_rank(p, "destination", dst, 0))
        return -1;
    if (tag < 0) {
        record(p, CS_ERR_RANGE, "rank %d: send tag must be >= 0, got %d", rank, tag);
        return -1;
    }
    id = add_op(p, CS_OP_SEND, rank, bytes);
    if (id >= 0) {
        at(p, id)->peer = dst;
        at(p, id)->tag = tag;
    }
    return id;
}

int32_t cs_program_recv(cs_program_t *p, int rank, int src, int64_t bytes, int tag)
{
    int32_t id;
    if (!check_rank(p, "source", src, 1))
        return -1;
    if (tag < 0 && tag != CS_ANY) {
        record(p, CS_ERR_RANGE, "rank %d: recv tag must be >= 0 or any, got %d", rank, tag);
        return -1;
    }
    id = add_op(p, CS_OP_RECV, rank, bytes);
    if (id >= 0) {
        at(p, id)->peer = src;
        at(p, id)->tag = tag;
    }
    return id;
}

/* A windowed mcast's destinations: the count and the ranks in one chunk
 * (a list never straddles two, so that it is one array), the chunk's last
 * user noted for cs_program_release. */
#define WPEERS_SHIFT 16
static int window_peers(cs_program_t *p, int32_t id, const int32_t *dsts, int n)
{
    int64_t per = (int64_t)1 << WPEERS_SHIFT, k;
    if (n + 1 > per) {
        record(p, CS_ERR_RANGE, "rank %d: a windowed program's mcast reaches at most %lld "
               "ranks, this one %d", at(p, id)->rank, (long long)per - 1, n);
        return 0;
    }
    if ((p->npeers & (per - 1)) + n + 1 > per) /* start the next chunk */
        p->npeers = (p->npeers | (per - 1)) + 1;
    k = p->npeers >> WPEERS_SHIFT;
    if (p->npeers + n + 1 > INT32_MAX) {
        record(p, CS_ERR_NOMEM, "rank %d: more than %d mcast destinations in one program",
               at(p, id)->rank, INT32_MAX);
        return 0;
    }
    if (k >= p->nwpeers_last) {
        int64_t cap = p->nwpeers_last ? 2 * p->nwpeers_last : 16;
        while (cap <= k)
            cap *= 2;
        p->wpeers_last = cs_realloc(p->wpeers_last, (size_t)cap * sizeof *p->wpeers_last);
        p->nwpeers_last = cap;
    }
    p->wpeers_last[k] = id;
    *(int32_t *)cs_chunks_ensure(&p->wpeers, p->npeers) = n;
    memcpy(cs_chunks_at(&p->wpeers, p->npeers + 1), dsts, (size_t)n * sizeof *dsts);
    at(p, id)->peer = (int32_t)p->npeers;
    p->npeers += n + 1;
    return 1;
}

int32_t cs_program_mcast(cs_program_t *p, int rank, const int32_t *dsts, int n, int64_t bytes,
                         int tag)
{
    int32_t id;
    if (n < 1) {
        record(p, CS_ERR_RANGE, "rank %d: mcast needs at least one destination", rank);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (!check_rank(p, "mcast destination", dsts[i], 0))
            return -1;
    if (tag < 0) {
        record(p, CS_ERR_RANGE, "rank %d: mcast tag must be >= 0, got %d", rank, tag);
        return -1;
    }
    /* op->peer indexes the pool */
    if (p->npeers + n + 1 > INT32_MAX) {
        record(p, CS_ERR_NOMEM, "rank %d: more than %d mcast destinations in one program", rank,
               INT32_MAX);
        return -1;
    }
    id = add_op(p, CS_OP_MCAST, rank, bytes);
    if (id < 0)
        return -1;
    at(p, id)->tag = tag;
    if (p->windowed)
        return window_peers(p, id, dsts, n) ? id : -1;
    if (p->npeers + n + 1 > p->cap_peers) {
        while (p->npeers + n + 1 > p->cap_peers)
            p->cap_peers = p->cap_peers ? p->cap_peers * 2 : 64;
        p->peers = cs_realloc(p->peers, (size_t)p->cap_peers * sizeof *p->peers);
    }
    p->peers[p->npeers] = n;
    memcpy(p->peers + p->npeers + 1, dsts, (size_t)n * sizeof *dsts);
    at(p, id)->peer = (int32_t)p->npeers;
    p->npeers += n + 1;
    return id;
}

int32_t cs_program_calc(cs_program_t *p, int rank, int64_t ticks, int64_t bytes)
{
    int32_t id;
    if (ticks < 0) {
        record(p, CS_ERR_RANGE, "rank %d: negative calc time %lld", rank, (long long)ticks);
        return -1;
    }
    id = add_op(p, CS_OP_CALC, rank, bytes);
    if (id >= 0)
        at(p, id)->ticks = ticks;
    return id;
}

int64_t cs_program_njoins(const cs_program_t *p) { return p->njoins; }

int32_t cs_program_join(cs_program_t *p, int rank)
{
    int32_t id = cs_program_calc(p, rank, 0, 0);
    if (id >= 0) {
        at(p, id)->join = 1;
        p->njoins++;
    }
    return id;
}

int32_t cs_program_nops_visible(const cs_program_t *p)
{
    return p->nops - (int32_t)p->njoins;
}

/* Adds to q op `op`'s dependency on pred (ids of p; q's through map),
 * unless op lists it already: stamp[pred] == op + 1 says that op has
 * listed pred with the kinds in kinds[pred] (bit 1 << kind). */
static void copy_dep(cs_program_t *q, const int32_t *map, int32_t *stamp, uint8_t *kinds,
                     int32_t op, cs_dep_t d)
{
    int32_t pred = cs_dep_op(d);
    uint8_t bit = (uint8_t)(1u << cs_dep_kind(d));
    if (stamp[pred] != op + 1) {
        stamp[pred] = op + 1;
        kinds[pred] = 0;
    } else if (kinds[pred] & bit) {
        return;
    }
    kinds[pred] |= bit;
    cs_program_dep(q, map[op], map[pred], cs_dep_kind(d));
}

/* A join whose predecessors are still being listed, and the next one. */
typedef struct join_frame {
    int32_t join;
    int next;
} join_frame_t;

int cs_program_without_joins(const cs_program_t *p, cs_program_t **out, cs_error_t *err)
{
    cs_program_t *q;
    int32_t *map, *stamp;
    uint8_t *kinds;
    join_frame_t *stack = NULL;
    int32_t cap_stack = 0;
    int rc;
    *out = NULL;
    if (!p->njoins)
        return CS_OK; /* whatever its state: the writers' own checks see p */
    if (!p->finalized || p->windowed)
        return cs_error_set(err, CS_ERR_INTERNAL, "joins are expanded in a finalized, whole "
                            "program only");
    q = cs_program_new(p->nranks);
    map = cs_malloc(((size_t)p->nops + 1) * sizeof *map);
    for (int32_t i = 0; i < p->nops; i++) {
        map[i] = -1;
        if (p->ops[i].join)
            continue;
        if ((map[i] = cs_program_copy_op(q, p, i, NULL, 0, -1)) < 0)
            continue; /* recorded in q: finalize reports it */
        if (cs_program_line(p, i) || cs_program_label(p, i))
            cs_program_set_origin(q, map[i], cs_program_line(p, i), cs_program_label(p, i));
    }
    /* A join's predecessors take its place in each successor's list; a
     * join reached twice from one op (joins of joins) is walked once, so
     * the work per op is bounded by the edges it reaches.  The walk keeps
     * its own stack: a chain of joins is as deep as a builder made it. */
    stamp = cs_calloc((size_t)p->nops + 1, sizeof *stamp);
    kinds = cs_malloc((size_t)p->nops + 1);
    for (int32_t i = 0; i < p->nops; i++) {
        if (map[i] < 0)
            continue;
        for (uint32_t k = p->pred_start[i]; k < p->pred_start[i + 1]; k++) {
            int32_t j = cs_dep_op(p->preds[k]), top = 0;
            if (!p->ops[j].join) {
                copy_dep(q, map, stamp, kinds, i, p->preds[k]);
                continue;
            }
            if (stamp[j] == i + 1)
                continue; /* this join was walked for op i already */
            stamp[j] = i + 1;
            stack = cs_grow(stack, top, &cap_stack, 16, sizeof *stack);
            stack[top++] = (join_frame_t){j, 0};
            while (top) {
                join_frame_t *f = &stack[top - 1];
                if (p->pred_start[f->join] + (uint32_t)f->next == p->pred_start[f->join + 1]) {
                    top--;
                    continue;
                }
                cs_dep_t d = p->preds[p->pred_start[f->join] + (uint32_t)f->next++];
                int32_t pj = cs_dep_op(d);
                if (!p->ops[pj].join) {
                    copy_dep(q, map, stamp, kinds, i, d);
                } else if (stamp[pj] != i + 1) {
                    stamp[pj] = i + 1;
                    stack = cs_grow(stack, top, &cap_stack, 16, sizeof *stack);
                    stack[top++] = (join_frame_t){pj, 0};
                }
            }
        }
    }
    free(stack);
    free(kinds);
    free(stamp);
    free(map);
    cs_program_set_source(q, p->source);
    cs_program_set_time_unit(q, p->time_unit);
    if ((rc = cs_program_finalize(q, err))) {
        cs_program_free(q);
        return rc;
    }
    *out = q;
    return CS_OK;
}

/* Keeps the two facts finalize takes shortcuts on up to date after
 * dependency k was stored: are the pairs sorted by op, and does every
 * dependency point backwards? */
static void note_dep(cs_program_t *p, int64_t k)
{
    uint32_t op = p->build[2 * k];
    if (k > 0 && op < p->build[2 * k - 2])
        p->deps_sorted = 0;
    if (cs_dep_op(p->build[2 * k + 1]) >= (int32_t)op)
        p->deps_backward = 0;
}

int cs_program_dep(cs_program_t *p, int32_t op, int32_t pred, cs_dep_kind_t kind)
{
    if (p->finalized) {
        record(p, CS_ERR_INTERNAL, "dependency added to a finalized program");
        return CS_ERR_INTERNAL;
    }
    if (op < 0 || op >= p->nops || pred < 0 || pred >= p->nops) {
        record(p, CS_ERR_RANGE, "dependency between unknown ops %d and %d", op, pred);
        return CS_ERR_RANGE;
    }
    if (kind != CS_DEP_AFTER && kind != CS_DEP_AFTER_START && kind != CS_DEP_STREAM) {
        record(p, CS_ERR_RANGE, "dependency of unknown kind %d", (int)kind);
        return CS_ERR_RANGE;
    }
    if (at(p, op)->rank != at(p, pred)->rank) {
        record(p, CS_ERR_RANGE, "dependency between ops of different ranks (%d and %d)",
               at(p, op)->rank, at(p, pred)->rank);
        return CS_ERR_RANGE;
    }
    if (kind == CS_DEP_STREAM && at(p, pred)->kind == CS_OP_CALC && at(p, pred)->bytes == 0) {
        record(p, CS_ERR_RANGE,
               "rank %d: an op can only stream from an op that moves or reduces bytes",
               at(p, op)->rank);
        return CS_ERR_RANGE;
    }
    if (kind == CS_DEP_STREAM && at(p, op)->join) {
        record(p, CS_ERR_RANGE, "rank %d: a join (op %d) cannot stream from another op",
               at(p, op)->rank, op);
        return CS_ERR_RANGE;
    }
    if (p->windowed) {
        /* the executor has seen ops below op and may have released preds:
         * a windowed program only looks back, into what is still held */
        if (pred >= op) {
            p->forward = 1;
            record(p, CS_ERR_USAGE, "rank %d: op %d depends on the later op %d, and a windowed "
                   "program's dependencies point back: run it whole (--whole)",
                   at(p, op)->rank, op, pred);
            return CS_ERR_USAGE;
        }
        if ((pred >> p->wops.shift) < p->wops.released) {
            record(p, CS_ERR_RANGE, "rank %d: op %d depends on op %d, which the window has "
                   "released", at(p, op)->rank, op, pred);
            return CS_ERR_RANGE;
        }
        if (p->wtaken == p->nwdeps) /* all handed out: start the list again */
            p->wtaken = p->nwdeps = 0;
        if (p->nwdeps == p->cap_wdeps) {
            p->cap_wdeps = p->cap_wdeps ? p->cap_wdeps * 2 : 64;
            p->wdeps = cs_realloc(p->wdeps, (size_t)p->cap_wdeps * sizeof *p->wdeps);
        }
        p->wdeps[p->nwdeps++] = (cs_wdep_t){op, pred, (int32_t)kind};
        p->wdeps_added++;
        return CS_OK;
    } else if (p->ndeps >= p->max_deps) {
        record(p, CS_ERR_NOMEM, "rank %d: more than %lld dependencies, the limit of a program",
               at(p, op)->rank, (long long)p->max_deps);
        return CS_ERR_NOMEM;
    }
    if (p->ndeps == p->cap_build) {
        p->cap_build = p->cap_build ? p->cap_build * 2 : 64;
        p->build = cs_realloc(p->build, (size_t)p->cap_build * 2 * sizeof *p->build);
    }
    p->build[2 * p->ndeps] = (uint32_t)op;
    p->build[2 * p->ndeps + 1] = pack_dep(pred, kind);
    note_dep(p, p->ndeps++);
    return CS_OK;
}

void cs_program_set_proto(cs_program_t *p, int32_t op, cs_proto_t proto)
{
    if (op < 0 || op >= p->nops || (unsigned)proto >= CS_PROTO_COUNT)
        return;
    cs_op_t *o = at(p, op);
    if (o->kind == CS_OP_SEND || o->kind == CS_OP_MCAST)
        o->proto = (uint8_t)proto;
}

void cs_program_set_proto_lat(cs_program_t *p, cs_proto_t proto, double seconds)
{
    if ((unsigned)proto < CS_PROTO_COUNT)
        p->proto_lat[proto] = seconds;
}

double cs_program_proto_lat(const cs_program_t *p, cs_proto_t proto)
{
    if ((unsigned)proto >= CS_PROTO_COUNT)
        return 0;
    return p->proto_lat[proto] >= 0 ? p->proto_lat[proto] : cs_proto_lat_default(proto);
}

int32_t cs_program_copy_op(cs_program_t *dst, const cs_program_t *src, int32_t id,
                           const int32_t *rank_map, int32_t tag_shift, int64_t ticks)
{
    const cs_op_t *o = cs_program_op(src, id);
    const cs_data_t *d = cs_program_data(src, id);
    int rank = rank_map ? rank_map[o->rank] : o->rank;
    int32_t n, small[16], *peers = small, out;
    switch (o->kind) {
    case CS_OP_SEND:
        out = cs_program_send(dst, rank, rank_map ? rank_map[o->peer] : o->peer, o->bytes,
                              o->tag + tag_shift);
        break;
    case CS_OP_RECV: /* a wildcard source stays one */
        out = cs_program_recv(dst, rank, rank_map && o->peer >= 0 ? rank_map[o->peer] : o->peer,
                              o->bytes, o->tag == CS_ANY ? CS_ANY : o->tag + tag_shift);
        break;
    case CS_OP_MCAST:
        n = cs_program_npeers(src, o);
        if (!rank_map)
            peers = (int32_t *)cs_program_mcast_peers(src, o);
        else {
            if (n > (int32_t)(sizeof small / sizeof *small))
                peers = cs_malloc((size_t)n * sizeof *peers);
            for (int32_t k = 0; k < n; k++)
                peers[k] = rank_map[cs_program_mcast_peers(src, o)[k]];
        }
        out = cs_program_mcast(dst, rank, peers, n, o->bytes, o->tag + tag_shift);
        if (peers != small && rank_map)
            free(peers);
        break;
    default:
        out = o->join ? cs_program_join(dst, rank)
                      : cs_program_calc(dst, rank, ticks >= 0 ? ticks : o->ticks, o->bytes);
        break;
    }
    if (out < 0)
        return -1;
    if (o->proto) {
        cs_program_set_proto(dst, out, (cs_proto_t)o->proto);
        cs_program_set_proto_lat(dst, (cs_proto_t)o->proto,
                                 cs_program_proto_lat(src, (cs_proto_t)o->proto));
    }
    if (d)
        cs_program_set_data(dst, out, d->off, d->len, (cs_data_mode_t)d->mode);
    return out;
}

void cs_program_set_mark(cs_program_t *p, int32_t op)
{
    if (op >= 0 && op < p->nops)
        at(p, op)->mark = 1;
}

int cs_program_marked(const cs_program_t *p, int32_t op)
{
    return op >= 0 && op < p->nops && at(p, op)->mark;
}

/* Side tables are indexed by op id over the whole program: a windowed
 * program has none. */
static int refuse_side(cs_program_t *p, const char *what)
{
    if (!p->windowed)
        return 0;
    record(p, CS_ERR_USAGE, "a windowed program carries no %s", what);
    return 1;
}

void cs_program_set_origin(cs_program_t *p, int32_t op, int line, const char *label)
{
    if (op < 0 || op >= p->nops || refuse_side(p, "source lines or labels"))
        return;
    if (line && !p->line)
        p->line = side_resize(NULL, sizeof *p->line, 0, p->cap_ops, 0);
    if (p->line)
        p->line[op] = line;
    if (!label)
        return;
    if (!p->label_off)
        p->label_off = side_resize(NULL, sizeof *p->label_off, 0, p->cap_ops, 0xff);
    size_t n = strlen(label) + 1;
    if (p->label_len + (int64_t)n > p->label_cap) {
        while (p->label_len + (int64_t)n > p->label_cap)
            p->label_cap = p->label_cap ? p->label_cap * 2 : 1024;
        p->label_pool = cs_realloc(p->label_pool, (size_t)p->label_cap);
    }
    memcpy(p->label_pool + p->label_len, label, n);
    p->label_off[op] = p->label_len;
    p->label_len += (int64_t)n;
}

int cs_program_line(const cs_program_t *p, int32_t op)
{
    return p->line && op >= 0 && op < p->nops ? p->line[op] : 0;
}

int cs_program_set_data(cs_program_t *p, int32_t op, int64_t off, int64_t len, cs_data_mode_t mode)
{
    if (!p->wdata_on && refuse_side(p, "data descriptors"))
        return CS_ERR_USAGE;
    if (op < 0 || op >= p->nops || at(p, op)->kind == CS_OP_CALC || off < 0 || len < 0 ||
        len >= CS_DATA_MAX_LEN) {
        record(p, CS_ERR_RANGE, "invalid data descriptor [%lld, +%lld) for op %d", (long long)off,
               (long long)len, op);
        return CS_ERR_RANGE;
    }
    if (p->windowed) {
        *(cs_data_t *)cs_chunks_at(&p->wdata, op) = (cs_data_t){off, len, (uint64_t)mode};
        return CS_OK;
    }
    if (!p->data_of)
        p->data_of = side_resize(NULL, sizeof *p->data_of, 0, p->cap_ops, 0xff);
    if (p->data_of[op] < 0) {
        p->data = cs_grow(p->data, p->ndata, &p->cap_data, 64, sizeof *p->data);
        p->data_of[op] = p->ndata++;
    }
    p->data[p->data_of[op]] = (cs_data_t){off, len, (uint64_t)mode};
    return CS_OK;
}

const cs_data_t *cs_program_data(const cs_program_t *p, int32_t op)
{
    if (p->wdata_on) {
        const cs_data_t *d = cs_chunks_at(&p->wdata, op);
        return d->len < 0 ? NULL : d;
    }
    return p->data_of && p->data_of[op] >= 0 ? &p->data[p->data_of[op]] : NULL;
}

int cs_program_is_finalized(const cs_program_t *p) { return p->finalized; }

void cs_program_set_source(cs_program_t *p, const char *name)
{
    free(p->source);
    p->source = name ? cs_strdup(name) : NULL;
}

void cs_program_set_time_unit(cs_program_t *p, double seconds) { p->time_unit = seconds; }
double cs_program_time_unit(const cs_program_t *p) { return p->time_unit; }

/* Entry i of `a` (n of its cap entries of `elem` bytes) moved to entry
 * new_id[i] of a new array, which replaces it.  Out of place: every move
 * is independent of the others, so the processor overlaps their cache
 * misses, where following the permutation's cycles in place waits for
 * each miss in turn (3 times slower on a 5-million-op GOAL read, issue
 * 34).  It holds two copies of one array at a time, the ops' (24 bytes per
 * op) at most. */
static void *permute(void *a, size_t elem, const int32_t *new_id, int32_t n, int32_t cap)
{
    char *to = cs_malloc((size_t)(cap > 0 ? cap : 1) * elem);
    const char *from = a;
    switch (elem) { /* fixed sizes: the copies compile to single moves */
    case sizeof(cs_op_t):
        for (int32_t i = 0; i < n; i++)
            memcpy(to + (size_t)new_id[i] * sizeof(cs_op_t), from + (size_t)i * sizeof(cs_op_t),
                   sizeof(cs_op_t));
        break;
    case sizeof(int64_t):
        for (int32_t i = 0; i < n; i++)
            ((int64_t *)(void *)to)[new_id[i]] = ((const int64_t *)a)[i];
        break;
    case sizeof(int32_t):
        for (int32_t i = 0; i < n; i++)
            ((int32_t *)(void *)to)[new_id[i]] = ((const int32_t *)a)[i];
        break;
    default:
        CS_ASSERT(!"permute: an unexpected entry size");
    }
    if (cap > n) /* keep what a side array's growth filled in */
        memcpy(to + (size_t)n * elem, from + (size_t)n * elem, (size_t)(cap - n) * elem);
    free(a);
    return to;
}

int cs_program_renumber(cs_program_t *p, const int32_t *new_id, cs_error_t *err)
{
    uint8_t *seen;
    if (p->finalized)
        return cs_error_set(err, CS_ERR_INTERNAL, "cannot renumber the ops of a finalized program");
    seen = cs_calloc((size_t)p->nops + 1, 1);
    for (int32_t i = 0; i < p->nops; i++) {
        int32_t k = new_id[i];
        if (k < 0 || k >= p->nops || seen[k]) {
            free(seen);
            return cs_error_set(err, CS_ERR_RANGE,
                                "renumbering: op %d would become op %d, which is %s", i, k,
                                k < 0 || k >= p->nops ? "out of range" : "given twice");
        }
        seen[k] = 1;
    }
    free(seen);
    p->ops = permute(p->ops, sizeof *p->ops, new_id, p->nops, p->cap_ops);
    if (p->line)
        p->line = permute(p->line, sizeof *p->line, new_id, p->nops, p->cap_ops);
    if (p->data_of)
        p->data_of = permute(p->data_of, sizeof *p->data_of, new_id, p->nops, p->cap_ops);
    if (p->label_off)
        p->label_off = permute(p->label_off, sizeof *p->label_off, new_id, p->nops, p->cap_ops);
    /* the pairs keep their order, so every op keeps its predecessors'
     * order */
    p->deps_sorted = p->deps_backward = 1;
    for (int64_t k = 0; k < p->ndeps; k++) {
        cs_dep_t d = p->build[2 * k + 1];
        p->build[2 * k] = (uint32_t)new_id[p->build[2 * k]];
        p->build[2 * k + 1] = pack_dep(new_id[cs_dep_op(d)], cs_dep_kind(d));
        note_dep(p, k);
    }
    return CS_OK;
}

/* Predecessor lists (CSR) from the build pairs, each op's dependencies in
 * the order they were added; frees the pairs.  Sorted pairs are compacted in
 * place (entry k overwrites only pairs up to k / 2, which are read already);
 * others are placed by a stable counting sort. */
static void build_preds(cs_program_t *p)
{
    uint32_t *start = cs_calloc((size_t)p->nops + 2, sizeof *start);
    uint32_t *b = p->build;
    int64_t n = p->ndeps;
    if (p->deps_sorted) {
        for (int64_t k = 0; k < n; k++)
            start[b[2 * k] + 1]++;
        for (int32_t i = 0; i < p->nops; i++)
            start[i + 1] += start[i];
        for (int64_t k = 0; k < n; k++)
            b[k] = b[2 * k + 1];
        p->preds = cs_realloc(b, (size_t)(n ? n : 1) * sizeof *p->preds);
    } else {
        /* counts at op + 2, so that after the prefix sum start[op + 1] is
         * op's first slot and ends, once filled, as op's end */
        p->preds = cs_malloc((size_t)(n ? n : 1) * sizeof *p->preds);
        for (int64_t k = 0; k < n; k++)
            start[b[2 * k] + 2]++;
        for (int32_t i = 0; i < p->nops; i++)
            start[i + 2] += start[i + 1];
        for (int64_t k = 0; k < n; k++)
            p->preds[start[b[2 * k] + 1]++] = b[2 * k + 1];
        free(b);
    }
    p->build = NULL;
    p->cap_build = 0;
    p->pred_start = start;
}

/* Successor lists (CSR) from the predecessor lists, in successor id order
 * (not in the order the dependencies were added): the executor enables the
 * successors of an op in this order, so a program's timing depends on its
 * op ids only, which a GOAL file keeps, and not on how its builder happened
 * to order cs_program_dep calls, which a GOAL file does not keep. */
static void build_succs(cs_program_t *p)
{
    uint32_t *start = cs_calloc((size_t)p->nops + 2, sizeof *start);
    int64_t n = p->ndeps;
    cs_dep_t *succs = cs_malloc((size_t)(n ? n : 1) * sizeof *succs);
    for (int64_t k = 0; k < n; k++)
        start[cs_dep_op(p->preds[k]) + 2]++;
    for (int32_t i = 0; i < p->nops; i++)
        start[i + 2] += start[i + 1];
    for (int32_t op = 0; op < p->nops; op++)
        for (uint32_t k = p->pred_start[op]; k < p->pred_start[op + 1]; k++)
            succs[start[cs_dep_op(p->preds[k]) + 1]++] = pack_dep(op, cs_dep_kind(p->preds[k]));
    p->succ_start = start;
    p->succs = succs;
}

/* Kahn's algorithm over all dependency kinds: any cycle means some op can
 * never start.  On a cycle, walks predecessors among the unresolved ops to
 * name one concrete cycle.  O(ops + dependencies); finalize skips it when
 * every dependency points backwards. */
static int check_cycles(cs_program_t *p, cs_error_t *err)
{
    uint32_t *indeg = cs_calloc((size_t)p->nops + 1, sizeof *indeg);
    int32_t *stack = cs_malloc(((size_t)p->nops + 1) * sizeof *stack);
    int32_t top = 0, done = 0;
    int rc = CS_OK;
    for (int32_t i = 0; i < p->nops; i++) {
        indeg[i] = p->pred_start[i + 1] - p->pred_start[i];
        if (!indeg[i])
            stack[top++] = i;
    }
    while (top) {
        int32_t u = stack[--top];
        done++;
        for (uint32_t k = p->succ_start[u]; k < p->succ_start[u + 1]; k++)
            if (--indeg[cs_dep_op(p->succs[k])] == 0)
                stack[top++] = cs_dep_op(p->succs[k]);
    }
    if (done < p->nops) {
        /* Walk back from an unresolved op until an op repeats: that is a cycle. */
        int32_t *seen = cs_calloc((size_t)p->nops, sizeof *seen);
        int32_t u = 0, step = 1;
        char names[600] = "", one[64];
        while (indeg[u] == 0)
            u++;
        while (!seen[u]) {
            seen[u] = step++;
            for (uint32_t k = p->pred_start[u]; k < p->pred_start[u + 1]; k++)
                if (indeg[cs_dep_op(p->preds[k])] > 0) {
                    u = cs_dep_op(p->preds[k]);
                    break;
                }
        }
        /* u is on the cycle: list it once round. */
        int32_t v = u;
        do {
            const char *lab = cs_program_label(p, v);
            if (lab)
                snprintf(one, sizeof one, "%s%s", names[0] ? " <- " : "", lab);
            else
                snprintf(one, sizeof one, "%sop %d", names[0] ? " <- " : "", v);
            if (strlen(names) + strlen(one) < sizeof names - 8)
                strcat(names, one);
            for (uint32_t k = p->pred_start[v]; k < p->pred_start[v + 1]; k++)
                if (indeg[cs_dep_op(p->preds[k])] > 0 && seen[cs_dep_op(p->preds[k])]) {
                    v = cs_dep_op(p->preds[k]);
                    break;
                }
        } while (v != u);
        rc = cs_error_set(err, CS_ERR_DEADLOCK,
                          "%s%sdependency cycle on rank %d (%d ops can never start): %s <- %s",
                          p->source ? p->source : "", p->source ? ": " : "", at(p, u)->rank,
                          p->nops - done, names, cs_program_label(p, u) ? cs_program_label(p, u) : "...");
        free(seen);
    }
    free(indeg);
    free(stack);
    return rc;
}

int cs_program_finalize(cs_program_t *p, cs_error_t *err)
{
    if (p->finalized)
        return CS_OK;
    if (p->err_code)
        return cs_error_set(err, p->err_code, "%s%s%s", p->source ? p->source : "",
                            p->source ? ": " : "", p->err_msg);
    if (p->holes)
        return cs_error_set(err, CS_ERR_INTERNAL, "%s%s%d of the program's %d op ids were "
                            "never placed", p->source ? p->source : "", p->source ? ": " : "",
                            p->holes, p->nops);
    if (p->windowed) { /* no tables: the executor took the dependencies */
        p->finalized = 1;
        return CS_OK;
    }
    if (!p->pred_start) {
        /* the ops are complete: give back the growth slack */
        if (p->nops && p->nops < p->cap_ops)
            resize_ops(p, p->nops);
        if (p->ndata && p->ndata < p->cap_data) {
            p->data = cs_realloc(p->data, (size_t)p->ndata * sizeof *p->data);
            p->cap_data = p->ndata;
        }
        build_preds(p);
        build_succs(p);
    }
    if (!p->deps_backward) {
        int rc = check_cycles(p, err);
        if (rc)
            return rc;
    }
    p->finalized = 1;
    return CS_OK;
}

size_t cs_program_bytes(const cs_program_t *p)
{
    size_t n = sizeof *p, ops = (size_t)p->cap_ops;
    n += cs_chunks_bytes(&p->wops) + cs_chunks_bytes(&p->wpeers) + cs_chunks_bytes(&p->wdata);
    n += (size_t)p->nwpeers_last * sizeof *p->wpeers_last;
    n += (size_t)p->cap_wdeps * sizeof *p->wdeps;
    n += ops * sizeof *p->ops;
    n += p->line ? ops * sizeof *p->line : 0;
    n += p->data_of ? ops * sizeof *p->data_of : 0;
    n += p->label_off ? ops * sizeof *p->label_off : 0;
    n += (size_t)p->cap_peers * sizeof *p->peers;
    n += (size_t)p->cap_build * 2 * sizeof *p->build;
    if (p->pred_start)
        n += 2 * ((size_t)p->nops + 2) * sizeof *p->pred_start;
    if (p->preds)
        n += 2 * (size_t)(p->ndeps ? p->ndeps : 1) * sizeof *p->preds;
    n += (size_t)p->label_cap + (size_t)p->cap_data * sizeof *p->data;
    n += p->source ? strlen(p->source) + 1 : 0;
    return n;
}

void cs_program_set_windowed(cs_program_t *p)
{
    if (p->nops || p->windowed) {
        record(p, CS_ERR_INTERNAL, "a program becomes windowed before its first op");
        return;
    }
    p->windowed = 1;
    if (p->max_ops == CS_PROGRAM_MAX_OPS) /* not lowered (cs_program_set_limits) */
        p->max_ops = CS_PROGRAM_MAX_WINDOW_OPS;
    cs_chunks_init(&p->wops, sizeof(cs_op_t), 16);
    cs_chunks_init(&p->wpeers, sizeof(int32_t), WPEERS_SHIFT);
}

void cs_program_keep_data(cs_program_t *p)
{
    if (!p->windowed || p->nops || p->wdata_on) {
        record(p, CS_ERR_INTERNAL, "a windowed program keeps data descriptors from its first op");
        return;
    }
    p->wdata_on = 1;
    cs_chunks_init(&p->wdata, sizeof(cs_data_t), p->wops.shift);
}

int32_t cs_program_released(const cs_program_t *p)
{
    return p->windowed ? (int32_t)(p->wops.released << p->wops.shift) : 0;
}

int cs_program_is_windowed(const cs_program_t *p) { return p->windowed; }
int cs_program_points_forward(const cs_program_t *p) { return p->forward; }
int64_t cs_program_deps_added(const cs_program_t *p)
{
    return p->windowed ? p->wdeps_added : p->ndeps;
}

int64_t cs_program_take_deps(cs_program_t *p, const cs_wdep_t **deps)
{
    int64_t n = p->nwdeps - p->wtaken;
    *deps = p->wdeps + p->wtaken;
    p->wtaken = p->nwdeps;
    return n;
}

void cs_program_release(cs_program_t *p, int32_t below)
{
    int64_t k;
    if (!p->windowed)
        return;
    cs_chunks_release(&p->wops, below);
    cs_chunks_release(&p->wdata, below);
    /* a chunk of destinations goes once its last mcast is released (every
     * chunk below the one being filled has one: window_peers only skips
     * the end of a chunk it used) */
    for (k = p->wpeers.released; k < p->npeers >> WPEERS_SHIFT && k < p->nwpeers_last &&
                                 p->wpeers_last[k] < below;
         k++)
        ;
    cs_chunks_release(&p->wpeers, k << WPEERS_SHIFT);
}

int cs_program_nranks(const cs_program_t *p) { return p->nranks; }
int32_t cs_program_nops(const cs_program_t *p) { return p->nops; }
const cs_op_t *cs_program_op(const cs_program_t *p, int32_t id) { return at(p, id); }
const char *cs_program_source(const cs_program_t *p) { return p->source; }

const int32_t *cs_program_mcast_peers(const cs_program_t *p, const cs_op_t *op)
{
    if (op->kind != CS_OP_MCAST)
        return NULL;
    return p->windowed ? (const int32_t *)cs_chunks_at(&p->wpeers, op->peer + 1)
                       : p->peers + op->peer + 1;
}

int32_t cs_program_npeers(const cs_program_t *p, const cs_op_t *op)
{
    switch (op->kind) {
    case CS_OP_MCAST:
        return p->windowed ? *(const int32_t *)cs_chunks_at(&p->wpeers, op->peer)
                           : p->peers[op->peer];
    case CS_OP_CALC: return 0;
    default: return 1;
    }
}

const cs_dep_t *cs_program_preds(const cs_program_t *p, int32_t op, int *n)
{
    *n = (int)(p->pred_start[op + 1] - p->pred_start[op]);
    return p->preds + p->pred_start[op];
}

const cs_dep_t *cs_program_succs(const cs_program_t *p, int32_t op, int *n)
{
    *n = (int)(p->succ_start[op + 1] - p->succ_start[op]);
    return p->succs + p->succ_start[op];
}

void cs_program_tables(const cs_program_t *p, cs_program_tables_t *t)
{
    memset(t, 0, sizeof *t);
    if (!p->finalized || p->windowed)
        return;
    t->ops = p->ops;
    t->pred_start = p->pred_start;
    t->succ_start = p->succ_start;
    t->preds = p->preds;
    t->succs = p->succs;
}

const char *cs_program_label(const cs_program_t *p, int32_t op)
{
    if (!p->label_off || op < 0 || op >= p->nops || p->label_off[op] < 0)
        return NULL;
    return p->label_pool + p->label_off[op];
}

void cs_program_describe(const cs_program_t *p, int32_t id, char *buf, size_t len)
{
    const cs_op_t *op = at(p, id);
    const char *lab = cs_program_label(p, id);
    int line = cs_program_line(p, id);
    char where[160] = "";
    char tag[32] = "";
    int n = 0;
    if (lab && line)
        snprintf(where, sizeof where, "%s (line %d): ", lab, line);
    else if (lab)
        snprintf(where, sizeof where, "%s: ", lab);
    else if (line)
        snprintf(where, sizeof where, "line %d: ", line);
    if (op->kind != CS_OP_CALC) {
        if (op->tag == CS_ANY)
            snprintf(tag, sizeof tag, " tag any");
        else if (op->proto) /* the payload's bytes, under a protocol (core/proto.h) */
            snprintf(tag, sizeof tag, " tag %d (%s)", op->tag, cs_proto_name((cs_proto_t)op->proto));
        else
            snprintf(tag, sizeof tag, " tag %d", op->tag);
    }
    switch (op->kind) {
    case CS_OP_SEND:
        n = snprintf(buf, len, "%ssend %lldb to %d%s", where, (long long)op->bytes, op->peer, tag);
        break;
    case CS_OP_RECV:
        if (op->peer == CS_ANY)
            n = snprintf(buf, len, "%srecv %lldb from any%s", where, (long long)op->bytes, tag);
        else
            n = snprintf(buf, len, "%srecv %lldb from %d%s", where, (long long)op->bytes, op->peer, tag);
        break;
    case CS_OP_MCAST:
        n = snprintf(buf, len, "%smcast %lldb to %d ranks%s", where, (long long)op->bytes,
                     cs_program_npeers(p, op), tag);
        break;
    default:
        if (op->join)
            n = snprintf(buf, len, "%sjoin", where);
        else if (op->bytes)
            n = snprintf(buf, len, "%sreduce %lldb", where, (long long)op->bytes);
        else
            n = snprintf(buf, len, "%scalc %lld", where, (long long)op->ticks);
        break;
    }
    (void)n;
}
