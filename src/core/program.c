/*
 * program.c - building, checking and freezing programs (see program.h).
 *
 * Ops live in one growable array; dependencies are collected as triples
 * while building and turned into two CSR tables (predecessors and
 * successors) by cs_program_finalize, so the executor walks them without
 * pointer chasing.  Labels are optional and stored in one string pool,
 * because traces of 10^7 ops must not pay a malloc per op.
 */
#include "core/program.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dep_triple {
    int32_t op, pred;
    uint8_t kind;
} dep_triple_t;

struct cs_program {
    int nranks;
    int finalized;
    cs_op_t *ops;
    int32_t nops, cap_ops;
    int32_t *peers;          /* mcast destination pool */
    int64_t npeers, cap_peers;
    dep_triple_t *triples;
    int64_t ntriples, cap_triples;
    /* CSR after finalize */
    int64_t *pred_start, *succ_start; /* nops + 1 */
    cs_dep_t *preds, *succs;
    /* provenance */
    int64_t *label_off;      /* per op offset into label pool, -1 = none; lazily allocated */
    char *label_pool;
    int64_t label_len, label_cap;
    char *source;
    double time_unit;
    cs_data_t *data;         /* descriptors, indexed by op->data */
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

cs_program_t *cs_program_new(int nranks)
{
    cs_program_t *p = cs_calloc(1, sizeof *p);
    p->nranks = nranks;
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
    free(p->triples);
    free(p->pred_start);
    free(p->succ_start);
    free(p->preds);
    free(p->succs);
    free(p->label_off);
    free(p->label_pool);
    free(p->source);
    free(p->data);
    free(p);
}

static int check_rank(cs_program_t *p, const char *what, int r, int allow_any)
{
    if ((allow_any && r == CS_ANY) || (r >= 0 && r < p->nranks))
        return 1;
    record(p, CS_ERR_RANGE, "%s %d is out of range: the program has ranks 0..%d", what, r,
           p->nranks - 1);
    return 0;
}

static int32_t add_op(cs_program_t *p, uint8_t kind, int rank, int peer, int64_t bytes, int tag)
{
    cs_op_t *op;
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
    if (p->nops == CS_PROGRAM_MAX_OPS) {
        record(p, CS_ERR_NOMEM, "more than %d ops", CS_PROGRAM_MAX_OPS);
        return -1;
    }
    if (p->nops == p->cap_ops) {
        p->cap_ops = p->cap_ops ? (p->cap_ops > INT32_MAX / 2 ? INT32_MAX : p->cap_ops * 2) : 64;
        p->ops = cs_realloc(p->ops, (size_t)p->cap_ops * sizeof *p->ops);
        if (p->label_off) {
            p->label_off = cs_realloc(p->label_off, (size_t)p->cap_ops * sizeof *p->label_off);
            for (int32_t i = p->nops; i < p->cap_ops; i++)
                p->label_off[i] = -1;
        }
    }
    op = &p->ops[p->nops];
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->rank = rank;
    op->peer = peer;
    op->npeers = 1;
    op->bytes = bytes;
    op->tag = tag;
    op->data = -1;
    return p->nops++;
}

int32_t cs_program_send(cs_program_t *p, int rank, int dst, int64_t bytes, int tag)
{
    if (!check_rank(p, "destination", dst, 0))
        return -1;
    if (tag < 0) {
        record(p, CS_ERR_RANGE, "rank %d: send tag must be >= 0, got %d", rank, tag);
        return -1;
    }
    return add_op(p, CS_OP_SEND, rank, dst, bytes, tag);
}

int32_t cs_program_recv(cs_program_t *p, int rank, int src, int64_t bytes, int tag)
{
    if (!check_rank(p, "source", src, 1))
        return -1;
    if (tag < 0 && tag != CS_ANY) {
        record(p, CS_ERR_RANGE, "rank %d: recv tag must be >= 0 or any, got %d", rank, tag);
        return -1;
    }
    return add_op(p, CS_OP_RECV, rank, src, bytes, tag);
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
    id = add_op(p, CS_OP_MCAST, rank, (int32_t)p->npeers, bytes, tag);
    if (id < 0)
        return -1;
    if (p->npeers + n > p->cap_peers) {
        while (p->npeers + n > p->cap_peers)
            p->cap_peers = p->cap_peers ? p->cap_peers * 2 : 64;
        p->peers = cs_realloc(p->peers, (size_t)p->cap_peers * sizeof *p->peers);
    }
    memcpy(p->peers + p->npeers, dsts, (size_t)n * sizeof *dsts);
    p->npeers += n;
    p->ops[id].npeers = n;
    return id;
}

int32_t cs_program_calc(cs_program_t *p, int rank, int64_t ticks, int64_t bytes)
{
    int32_t id;
    if (ticks < 0) {
        record(p, CS_ERR_RANGE, "rank %d: negative calc time %lld", rank, (long long)ticks);
        return -1;
    }
    id = add_op(p, CS_OP_CALC, rank, -1, bytes, 0);
    if (id >= 0) {
        p->ops[id].ticks = ticks;
        p->ops[id].npeers = 0;
    }
    return id;
}

int cs_program_dep(cs_program_t *p, int32_t op, int32_t pred, cs_dep_kind_t kind)
{
    if (op < 0 || op >= p->nops || pred < 0 || pred >= p->nops) {
        record(p, CS_ERR_RANGE, "dependency between unknown ops %d and %d", op, pred);
        return CS_ERR_RANGE;
    }
    if (p->ops[op].rank != p->ops[pred].rank) {
        record(p, CS_ERR_RANGE, "dependency between ops of different ranks (%d and %d)",
               p->ops[op].rank, p->ops[pred].rank);
        return CS_ERR_RANGE;
    }
    if (kind == CS_DEP_STREAM && p->ops[pred].kind == CS_OP_CALC && p->ops[pred].bytes == 0) {
        record(p, CS_ERR_RANGE,
               "rank %d: an op can only stream from an op that moves or reduces bytes",
               p->ops[op].rank);
        return CS_ERR_RANGE;
    }
    if (p->ntriples == p->cap_triples) {
        p->cap_triples = p->cap_triples ? p->cap_triples * 2 : 64;
        p->triples = cs_realloc(p->triples, (size_t)p->cap_triples * sizeof *p->triples);
    }
    p->triples[p->ntriples++] = (dep_triple_t){op, pred, (uint8_t)kind};
    return CS_OK;
}

void cs_program_set_origin(cs_program_t *p, int32_t op, int line, const char *label)
{
    if (op < 0 || op >= p->nops)
        return;
    p->ops[op].line = line;
    if (!label)
        return;
    if (!p->label_off) {
        p->label_off = cs_malloc((size_t)p->cap_ops * sizeof *p->label_off);
        for (int32_t i = 0; i < p->cap_ops; i++)
            p->label_off[i] = -1;
    }
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

int cs_program_set_data(cs_program_t *p, int32_t op, int64_t off, int64_t len, cs_data_mode_t mode)
{
    if (op < 0 || op >= p->nops || p->ops[op].kind == CS_OP_CALC || off < 0 || len < 0) {
        record(p, CS_ERR_RANGE, "invalid data descriptor [%lld, +%lld) for op %d", (long long)off,
               (long long)len, op);
        return CS_ERR_RANGE;
    }
    if (p->ops[op].data < 0) {
        if (p->ndata == p->cap_data) {
            p->cap_data = p->cap_data ? p->cap_data * 2 : 64;
            p->data = cs_realloc(p->data, (size_t)p->cap_data * sizeof *p->data);
        }
        p->ops[op].data = p->ndata++;
    }
    p->data[p->ops[op].data] = (cs_data_t){off, len, (uint8_t)mode};
    return CS_OK;
}

const cs_data_t *cs_program_data(const cs_program_t *p, int32_t op)
{
    return p->ops[op].data >= 0 ? &p->data[p->ops[op].data] : NULL;
}

int cs_program_is_finalized(const cs_program_t *p) { return p->finalized; }

void cs_program_set_source(cs_program_t *p, const char *name)
{
    free(p->source);
    p->source = name ? cs_strdup(name) : NULL;
}

void cs_program_set_time_unit(cs_program_t *p, double seconds) { p->time_unit = seconds; }
double cs_program_time_unit(const cs_program_t *p) { return p->time_unit; }

int cs_program_renumber(cs_program_t *p, const int32_t *new_id, cs_error_t *err)
{
    uint8_t *seen;
    cs_op_t *ops;
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
    ops = cs_malloc(((size_t)p->cap_ops + 1) * sizeof *ops);
    for (int32_t i = 0; i < p->nops; i++)
        ops[new_id[i]] = p->ops[i];
    free(p->ops);
    p->ops = ops;
    if (p->label_off) {
        int64_t *off = cs_malloc(((size_t)p->cap_ops + 1) * sizeof *off);
        for (int32_t i = p->nops; i < p->cap_ops; i++)
            off[i] = -1;
        for (int32_t i = 0; i < p->nops; i++)
            off[new_id[i]] = p->label_off[i];
        free(p->label_off);
        p->label_off = off;
    }
    /* the triples keep their order, so every op keeps its predecessors'
     * order */
    for (int64_t k = 0; k < p->ntriples; k++) {
        p->triples[k].op = new_id[p->triples[k].op];
        p->triples[k].pred = new_id[p->triples[k].pred];
    }
    return CS_OK;
}

/* Predecessor lists (CSR) from the triples: each op's dependencies in the
 * order they were added. */
static void build_preds(cs_program_t *p)
{
    int64_t *start = cs_calloc((size_t)p->nops + 1, sizeof *start);
    cs_dep_t *deps = cs_malloc((size_t)(p->ntriples ? p->ntriples : 1) * sizeof *deps);
    int64_t *fill = cs_malloc(((size_t)p->nops + 1) * sizeof *fill);
    for (int64_t i = 0; i < p->ntriples; i++)
        start[p->triples[i].op + 1]++;
    for (int32_t i = 0; i < p->nops; i++)
        start[i + 1] += start[i];
    memcpy(fill, start, ((size_t)p->nops + 1) * sizeof *fill);
    for (int64_t i = 0; i < p->ntriples; i++) {
        const dep_triple_t *t = &p->triples[i];
        deps[fill[t->op]++] = (cs_dep_t){t->pred, t->kind};
    }
    free(fill);
    p->pred_start = start;
    p->preds = deps;
}

/* Successor lists (CSR) from the predecessor lists, in successor id order
 * (not in the order the dependencies were added): the executor enables the
 * successors of an op in this order, so a program's timing depends on its
 * op ids only, which a GOAL file keeps, and not on how its builder happened
 * to order cs_program_dep calls, which a GOAL file does not keep. */
static void build_succs(cs_program_t *p)
{
    int64_t *start = cs_calloc((size_t)p->nops + 1, sizeof *start);
    cs_dep_t *deps = cs_malloc((size_t)(p->ntriples ? p->ntriples : 1) * sizeof *deps);
    int64_t *fill = cs_malloc(((size_t)p->nops + 1) * sizeof *fill);
    for (int64_t k = 0; k < p->ntriples; k++)
        start[p->preds[k].op + 1]++;
    for (int32_t i = 0; i < p->nops; i++)
        start[i + 1] += start[i];
    memcpy(fill, start, ((size_t)p->nops + 1) * sizeof *fill);
    for (int32_t op = 0; op < p->nops; op++)
        for (int64_t k = p->pred_start[op]; k < p->pred_start[op + 1]; k++)
            deps[fill[p->preds[k].op]++] = (cs_dep_t){op, p->preds[k].kind};
    free(fill);
    p->succ_start = start;
    p->succs = deps;
}

/* Kahn's algorithm over all dependency kinds: any cycle means some op can
 * never start.  On a cycle, walks predecessors among the unresolved ops to
 * name one concrete cycle. */
static int check_cycles(cs_program_t *p, cs_error_t *err)
{
    int32_t *indeg = cs_calloc((size_t)p->nops + 1, sizeof *indeg);
    int32_t *stack = cs_malloc(((size_t)p->nops + 1) * sizeof *stack);
    int32_t top = 0, done = 0;
    int rc = CS_OK;
    for (int32_t i = 0; i < p->nops; i++) {
        indeg[i] = (int32_t)(p->pred_start[i + 1] - p->pred_start[i]);
        if (!indeg[i])
            stack[top++] = i;
    }
    while (top) {
        int32_t u = stack[--top];
        done++;
        for (int64_t k = p->succ_start[u]; k < p->succ_start[u + 1]; k++)
            if (--indeg[p->succs[k].op] == 0)
                stack[top++] = p->succs[k].op;
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
            for (int64_t k = p->pred_start[u]; k < p->pred_start[u + 1]; k++)
                if (indeg[p->preds[k].op] > 0) {
                    u = p->preds[k].op;
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
            for (int64_t k = p->pred_start[v]; k < p->pred_start[v + 1]; k++)
                if (indeg[p->preds[k].op] > 0 && seen[p->preds[k].op]) {
                    v = p->preds[k].op;
                    break;
                }
        } while (v != u);
        rc = cs_error_set(err, CS_ERR_DEADLOCK,
                          "%s%sdependency cycle on rank %d (%d ops can never start): %s <- %s",
                          p->source ? p->source : "", p->source ? ": " : "", p->ops[u].rank,
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
    build_preds(p);
    build_succs(p);
    free(p->triples);
    p->triples = NULL;
    int rc = check_cycles(p, err);
    if (rc)
        return rc;
    p->finalized = 1;
    return CS_OK;
}

size_t cs_program_bytes(const cs_program_t *p)
{
    size_t n = sizeof *p;
    n += (size_t)p->cap_ops * sizeof *p->ops;
    n += (size_t)p->cap_peers * sizeof *p->peers;
    n += (size_t)p->cap_triples * sizeof *p->triples;
    if (p->pred_start)
        n += 2 * ((size_t)p->nops + 1) * sizeof *p->pred_start;
    if (p->preds)
        n += 2 * (size_t)(p->ntriples ? p->ntriples : 1) * sizeof *p->preds;
    if (p->label_off)
        n += (size_t)p->cap_ops * sizeof *p->label_off;
    n += (size_t)p->label_cap + (size_t)p->cap_data * sizeof *p->data;
    return n;
}

int cs_program_nranks(const cs_program_t *p) { return p->nranks; }
int32_t cs_program_nops(const cs_program_t *p) { return p->nops; }
const cs_op_t *cs_program_op(const cs_program_t *p, int32_t id) { return &p->ops[id]; }
const char *cs_program_source(const cs_program_t *p) { return p->source; }

const int32_t *cs_program_mcast_peers(const cs_program_t *p, const cs_op_t *op)
{
    return op->kind == CS_OP_MCAST ? p->peers + op->peer : NULL;
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

const char *cs_program_label(const cs_program_t *p, int32_t op)
{
    if (!p->label_off || op < 0 || op >= p->nops || p->label_off[op] < 0)
        return NULL;
    return p->label_pool + p->label_off[op];
}

void cs_program_describe(const cs_program_t *p, int32_t id, char *buf, size_t len)
{
    const cs_op_t *op = &p->ops[id];
    const char *lab = cs_program_label(p, id);
    char where[160] = "";
    char tag[32] = "";
    int n = 0;
    if (lab && op->line)
        snprintf(where, sizeof where, "%s (line %d): ", lab, op->line);
    else if (lab)
        snprintf(where, sizeof where, "%s: ", lab);
    else if (op->line)
        snprintf(where, sizeof where, "line %d: ", op->line);
    if (op->kind != CS_OP_CALC) {
        if (op->tag == CS_ANY)
            snprintf(tag, sizeof tag, " tag any");
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
        n = snprintf(buf, len, "%smcast %lldb to %d ranks%s", where, (long long)op->bytes, op->npeers, tag);
        break;
    default:
        if (op->bytes)
            n = snprintf(buf, len, "%sreduce %lldb", where, (long long)op->bytes);
        else
            n = snprintf(buf, len, "%scalc %lld", where, (long long)op->ticks);
        break;
    }
    (void)n;
}
