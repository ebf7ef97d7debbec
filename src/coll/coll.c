/*
 * coll.c - the emission API, the helpers of coll.h and the registry of the
 * collective suite (see coll.h).  The algorithms live in one file per
 * collective (broadcast.c, reduce.c, allreduce.c, allgather.c,
 * reduce_scatter.c, scatter_gather.c, barrier.c, alltoall.c), each holding
 * every algorithm of its collective whatever paper it comes from, and each
 * exporting a NULL-terminated table that the registry concatenates; what
 * they share is in coll_internal.h.
 */
#include "coll/coll.h"
#include "coll/coll_internal.h"
#include "coll/nccl.h"
#include "core/suggest.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[CS_COLL_NKINDS] = {
    "broadcast", "reduce", "allreduce", "allgather", "reduce-scatter",
    "gather", "scatter", "barrier", "alltoall"};

const char *cs_coll_name(cs_coll_kind_t k) { return k < CS_COLL_NKINDS ? kind_names[k] : "?"; }

int cs_coll_parse(const char *name, cs_coll_kind_t *out, cs_error_t *err)
{
    for (int k = 0; k < CS_COLL_NKINDS; k++)
        if (!strcmp(name, kind_names[k]) ||
            (k == CS_COLL_BROADCAST && !strcmp(name, "bcast")) ||
            (k == CS_COLL_REDUCE_SCATTER && !strcmp(name, "reducescatter"))) {
            *out = (cs_coll_kind_t)k;
            return CS_OK;
        }
    cs_suggest_t sg;
    char hint[96];
    cs_suggest_init(&sg, name);
    for (int k = 0; k < CS_COLL_NKINDS; k++)
        cs_suggest_add(&sg, kind_names[k]);
    return cs_error_set(err, CS_ERR_USAGE,
                        "unknown collective \"%s\"%s; valid: broadcast, reduce, allreduce, "
                        "allgather, reduce-scatter, gather, scatter, barrier, alltoall",
                        name, cs_suggest_hint(&sg, "\"", hint, sizeof hint));
}

int cs_coll_rooted(cs_coll_kind_t k)
{
    return k == CS_COLL_BROADCAST || k == CS_COLL_REDUCE || k == CS_COLL_GATHER ||
           k == CS_COLL_SCATTER;
}

int64_t cs_coll_buffer_bytes(cs_coll_kind_t k, int P, int64_t bytes)
{
    switch (k) {
    case CS_COLL_BROADCAST: case CS_COLL_REDUCE: case CS_COLL_ALLREDUCE: return bytes;
    case CS_COLL_BARRIER: return bytes;
    default: return bytes * P;
    }
}

/* ---- builder ------------------------------------------------------------ */

typedef struct oplist {
    int32_t *v;
    int32_t n, cap;
} oplist_t;

struct cs_coll_builder {
    cs_program_t *p;
    const cs_coll_args_t *a;
    const cs_coll_algo_t *algo; /* what cs_coll_build_run runs */
    oplist_t *outstanding; /* per rank: issued since the last wait */
    oplist_t *after;       /* per rank: what the next op must follow */
    /* An op is marked in the program (cs_program_set_mark) once another
     * op of its rank must wait for its completion (a recv_reduce's calc
     * for its recv, an AFTER dependency), so waiting for that op covers
     * it; a wait leaves it out of `after`.  Without this, a batch of k ops
     * after a wait on j ops costs k*j dependencies where (j - implied) * k
     * say the same.  (A byte array beside the ops grew with the program,
     * a window's too: 1 GB at 2^30 ops.) */
    /* windowed (cs_coll_builder_watch): per rank the id below which no op
     * can get a new dependent, the ranks whose next op would have none,
     * and who to tell after each wait */
    int32_t *closed_below;
    int no_after;
    uint8_t *chained;      /* per rank: cs_coll_chained counted it in no_after */
    void (*at_wait)(void *ctx);
    void *wait_ctx;
    /* cs_coll_builder_on_stream: who hears of streaming dependencies */
    void (*on_stream)(void *ctx, int32_t op, int32_t pred);
    void *stream_ctx;
    int64_t (*wire)(int64_t len, const void *ctx); /* cs_coll_set_wire */
    const void *wire_ctx;
    cs_proto_t proto; /* cs_coll_set_proto */
};

void cs_coll_set_wire(cs_coll_builder_t *b, int64_t (*wire)(int64_t len, const void *ctx),
                      const void *ctx)
{
    b->wire = wire;
    b->wire_ctx = ctx;
}

void cs_coll_set_proto(cs_coll_builder_t *b, cs_proto_t proto) { b->proto = proto; }

/* A message's bytes on the wire for len bytes of data. */
static int64_t wire_bytes(const cs_coll_builder_t *b, int64_t len)
{
    return b->wire ? b->wire(len, b->wire_ctx) : len;
}

static void list_push(oplist_t *l, int32_t op)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->v = cs_realloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    l->v[l->n++] = op;
}

cs_coll_builder_t *cs_coll_builder_new(cs_program_t *p, const cs_coll_args_t *a)
{
    cs_coll_builder_t *b = cs_calloc(1, sizeof *b);
    b->p = p;
    b->a = a;
    b->outstanding = cs_calloc((size_t)a->P, sizeof *b->outstanding);
    b->after = cs_calloc((size_t)a->P, sizeof *b->after);
    return b;
}

void cs_coll_builder_free(cs_coll_builder_t *b)
{
    if (!b)
        return;
    for (int r = 0; r < b->a->P; r++) {
        free(b->outstanding[r].v);
        free(b->after[r].v);
    }
    free(b->outstanding);
    free(b->after);
    free(b->chained);
    free(b);
}

void cs_coll_builder_watch(cs_coll_builder_t *b, int32_t *closed_below,
                           void (*at_wait)(void *ctx), void *ctx)
{
    b->closed_below = closed_below;
    b->no_after = b->a->P;
    for (int r = 0; r < b->a->P; r++)
        closed_below[r] = 0;
    b->at_wait = at_wait;
    b->wait_ctx = ctx;
}

int cs_coll_builder_unchained(const cs_coll_builder_t *b) { return b->no_after; }

void cs_coll_builder_on_stream(cs_coll_builder_t *b,
                               void (*fn)(void *ctx, int32_t op, int32_t pred), void *ctx)
{
    b->on_stream = fn;
    b->stream_ctx = ctx;
}

/* After a wait on `rank`: only the ops in its lists can still get a
 * dependent (issued() links new ops to `after`, a wait moves `outstanding`
 * there; cs_coll_dep may name any op, which the executor checks), so every
 * op of the rank below the oldest of them is closed. */
static void waited(cs_coll_builder_t *b, int rank, int had_after)
{
    const oplist_t *o = &b->outstanding[rank], *a = &b->after[rank];
    int32_t lo = cs_program_nops(b->p);
    if (!b->closed_below)
        return;
    for (int32_t i = 0; i < o->n; i++)
        lo = o->v[i] < lo ? o->v[i] : lo;
    for (int32_t i = 0; i < a->n; i++)
        lo = a->v[i] < lo ? a->v[i] : lo;
    if (lo > b->closed_below[rank])
        b->closed_below[rank] = lo;
    if (!had_after && a->n && !(b->chained && b->chained[rank]))
        b->no_after--;
    b->at_wait(b->wait_ctx);
}

void cs_coll_chained(cs_coll_builder_t *b, int rank, int32_t below)
{
    if (rank < 0 || rank >= b->a->P)
        return;
    b->outstanding[rank].n = 0;
    if (!b->closed_below)
        return;
    if (!b->chained)
        b->chained = cs_calloc((size_t)b->a->P, 1);
    if (below > b->closed_below[rank])
        b->closed_below[rank] = below;
    if (!b->chained[rank]) {
        b->chained[rank] = 1;
        if (!b->after[rank].n) /* a wait has not counted it */
            b->no_after--;
    }
    b->at_wait(b->wait_ctx);
}

cs_program_t *cs_coll_program(cs_coll_builder_t *b) { return b->p; }
const cs_coll_args_t *cs_coll_args(const cs_coll_builder_t *b) { return b->a; }
const cs_coll_algo_t *cs_coll_builder_algo(const cs_coll_builder_t *b) { return b->algo; }

/* `op` completes before another op of its rank may complete (see the
 * builder's comment). */
static void mark_implied(cs_coll_builder_t *b, int32_t op) { cs_program_set_mark(b->p, op); }

static int is_implied(const cs_coll_builder_t *b, int32_t op)
{
    return cs_program_marked(b->p, op);
}

/* A new op of `rank`: it follows the rank's last wait and is outstanding. */
static int32_t issued(cs_coll_builder_t *b, int rank, int32_t op)
{
    if (op < 0 || rank < 0 || rank >= b->a->P)
        return -1;
    for (int32_t i = 0; i < b->after[rank].n; i++)
        cs_program_dep(b->p, op, b->after[rank].v[i], CS_DEP_AFTER);
    list_push(&b->outstanding[rank], op);
    return op;
}

void cs_coll_set_data(cs_coll_builder_t *b, int32_t op, int64_t off, int64_t len,
                      cs_data_mode_t mode)
{
    if (op >= 0 && !b->a->no_data)
        cs_program_set_data(b->p, op, off, len, mode);
}

int32_t cs_coll_send(cs_coll_builder_t *b, int from, int to, int64_t off, int64_t len, int tag)
{
    int32_t op = cs_program_send(b->p, from, to, wire_bytes(b, len), tag);
    if (b->proto)
        cs_program_set_proto(b->p, op, b->proto);
    cs_coll_set_data(b, op, off, len, CS_DATA_COPY);
    return issued(b, from, op);
}

int32_t cs_coll_recv(cs_coll_builder_t *b, int at, int from, int64_t off, int64_t len, int tag)
{
    int32_t op = cs_program_recv(b->p, at, from, wire_bytes(b, len), tag);
    cs_coll_set_data(b, op, off, len, CS_DATA_COPY);
    return issued(b, at, op);
}

int32_t cs_coll_recv_reduce(cs_coll_builder_t *b, int at, int from, int64_t off, int64_t len,
                            int tag)
{
    int32_t r = cs_program_recv(b->p, at, from, wire_bytes(b, len), tag), c;
    if (r < 0)
        return -1;
    cs_coll_set_data(b, r, off, len, CS_DATA_REDUCE);
    issued(b, at, r);
    c = cs_program_calc(b->p, at, 0, len);
    if (c < 0)
        return -1;
    cs_program_dep(b->p, c, r, CS_DEP_AFTER);
    mark_implied(b, r);
    return issued(b, at, c);
}

int32_t cs_coll_mcast(cs_coll_builder_t *b, int from, const int32_t *to, int n, int64_t off,
                      int64_t len, int tag)
{
    int32_t op = cs_program_mcast(b->p, from, to, n, wire_bytes(b, len), tag);
    if (b->proto)
        cs_program_set_proto(b->p, op, b->proto);
    cs_coll_set_data(b, op, off, len, CS_DATA_COPY);
    return issued(b, from, op);
}

int32_t cs_coll_calc(cs_coll_builder_t *b, int rank, int64_t ticks, int64_t bytes)
{
    return issued(b, rank, cs_program_calc(b->p, rank, ticks, bytes));
}

int32_t cs_coll_join(cs_coll_builder_t *b, int rank)
{
    return issued(b, rank, cs_program_join(b->p, rank));
}

/* Does `rank` still have sends that cs_coll_wait_recvs held over?  Ops are
 * issued in id order and a wait empties the outstanding list, so such a send
 * is the only way an outstanding op can be older than what `after` holds. */
static int holds_sends(const cs_coll_builder_t *b, int rank)
{
    const oplist_t *o = &b->outstanding[rank], *a = &b->after[rank];
    for (int32_t i = 0; o->n && i < a->n; i++)
        if (o->v[0] < a->v[i])
            return 1;
    return 0;
}

void cs_coll_wait(cs_coll_builder_t *b, int rank)
{
    oplist_t tmp, *o = &b->outstanding[rank];
    int32_t k = 0, had_after = b->after[rank].n > 0;
    if (!o->n)
        return;
    if (holds_sends(b, rank)) {
        /* sends held over by cs_coll_wait_recvs do not follow `after`:
         * the next ops must follow both */
        for (int32_t i = 0; i < b->after[rank].n; i++)
            list_push(o, b->after[rank].v[i]);
    }
    /* ops whose completion another outstanding op waits for need no
     * dependency of their own (the same order, fewer edges) */
    for (int32_t i = 0; i < o->n; i++)
        if (!is_implied(b, o->v[i]))
            o->v[k++] = o->v[i];
    CS_ASSERT(k > 0);
    o->n = k;
    tmp = b->after[rank];
    b->after[rank] = *o;
    tmp.n = 0;
    *o = tmp;
    waited(b, rank, had_after);
}

static int is_send(const cs_coll_builder_t *b, int32_t op)
{
    uint8_t k = cs_program_op(b->p, op)->kind;
    return k == CS_OP_SEND || k == CS_OP_MCAST;
}

void cs_coll_wait_recvs(cs_coll_builder_t *b, int rank)
{
    oplist_t *o = &b->outstanding[rank];
    int32_t kept = 0, i, had_after = b->after[rank].n > 0;
    for (i = 0; i < o->n && is_send(b, o->v[i]); i++)
        ;
    if (i == o->n)
        return; /* only sends: the rank goes on after what it waited for last */
    b->after[rank].n = 0;
    for (i = 0; i < o->n; i++) {
        if (is_send(b, o->v[i]))
            o->v[kept++] = o->v[i];
        else /* implied or not: what implies it may be a held send */
            list_push(&b->after[rank], o->v[i]);
    }
    o->n = kept;
    waited(b, rank, had_after);
}

void cs_coll_wait_recvs_all(cs_coll_builder_t *b)
{
    for (int r = 0; r < b->a->P; r++)
        cs_coll_wait_recvs(b, r);
}

void cs_coll_wait_all(cs_coll_builder_t *b)
{
    for (int r = 0; r < b->a->P; r++)
        cs_coll_wait(b, r);
}

void cs_coll_dep(cs_coll_builder_t *b, int32_t op, int32_t pred, cs_dep_kind_t kind)
{
    if (op < 0 || pred < 0)
        return;
    if (cs_program_dep(b->p, op, pred, kind))
        return; /* recorded; pred may be gone (a window released it) */
    if (kind == CS_DEP_STREAM && b->on_stream)
        b->on_stream(b->stream_ctx, op, pred);
    if (kind == CS_DEP_AFTER &&
        cs_program_op(b->p, op)->rank == cs_program_op(b->p, pred)->rank)
        mark_implied(b, pred);
}

int32_t cs_coll_send_nz(cs_coll_builder_t *b, int from, int to, int64_t off, int64_t len, int tag)
{
    return len > 0 ? cs_coll_send(b, from, to, off, len, tag) : -1;
}

int32_t cs_coll_recv_nz(cs_coll_builder_t *b, int at, int from, int64_t off, int64_t len, int tag)
{
    return len > 0 ? cs_coll_recv(b, at, from, off, len, tag) : -1;
}

int32_t cs_coll_recv_reduce_nz(cs_coll_builder_t *b, int at, int from, int64_t off, int64_t len,
                               int tag)
{
    return len > 0 ? cs_coll_recv_reduce(b, at, from, off, len, tag) : -1;
}

/* ---- helpers ------------------------------------------------------------ */

int cs_coll_opt_int(const cs_coll_args_t *a, const char *key, int64_t dflt, int64_t lo,
                    int64_t hi, int64_t *out, cs_error_t *err)
{
    *out = dflt;
    return a->opts ? cs_spec_get_int(a->opts, key, dflt, lo, hi, out, err) : CS_OK;
}

int cs_coll_opt_choice(const cs_coll_args_t *a, const char *key, const char *const *choices,
                       int dflt, int *out, cs_error_t *err)
{
    *out = dflt;
    return a->opts ? cs_spec_get_choice(a->opts, key, choices, dflt, out, err) : CS_OK;
}

void cs_coll_split(int64_t n, int parts, int i, int64_t *off, int64_t *len)
{
    int64_t q = n / parts, r = n % parts;
    *off = (int64_t)i * q + (i < r ? i : r);
    *len = q + (i < r ? 1 : 0);
}

void cs_coll_ring(const cs_coll_args_t *a, int32_t *ring, int32_t *pos)
{
    for (int i = 0; i < a->P; i++)
        ring[i] = a->hints && a->hints->ring ? a->hints->ring[i] : i;
    if (pos)
        for (int i = 0; i < a->P; i++)
            pos[ring[i]] = i;
}

void cs_coll_grid(const cs_coll_args_t *a, int *rows, int *cols)
{
    if (a->hints && a->hints->grid_rows > 0 && a->hints->grid_rows * a->hints->grid_cols == a->P) {
        *rows = a->hints->grid_rows;
        *cols = a->hints->grid_cols;
        return;
    }
    int r = (int)floor(sqrt((double)a->P));
    while (r > 1 && a->P % r)
        r--;
    *rows = r;
    *cols = a->P / r;
}

int cs_coll_ceil_log2(int64_t x)
{
    int k = 0;
    while (((int64_t)1 << k) < x)
        k++;
    return k;
}

/* ---- registry ----------------------------------------------------------- */

static const cs_coll_algo_t *const *const groups[] = {
    cs_coll_algos_broadcast,      cs_coll_algos_reduce,         cs_coll_algos_allreduce,
    cs_coll_algos_allgather,      cs_coll_algos_reduce_scatter, cs_coll_algos_scatter_gather,
    cs_coll_algos_barrier,        cs_coll_algos_alltoall};
/* NCCL's algorithms (nccl.h): one table per file, each of several
 * collectives; they follow the collective's own algorithms. */
static const cs_coll_algo_t *const *const nccl_groups[] = {
    cs_coll_algos_nccl_ring, cs_coll_algos_nccl_tree, cs_coll_algos_nccl_innet};

#define MAX_ALGOS 512
typedef struct registry {
    const cs_coll_algo_t *all[MAX_ALGOS];
    int n;
} registry_t;

/* Listing order: by collective, the tables concatenated in the order of
 * cs_coll_kind_t (each table lists its collective's default first; the
 * assertion keeps them in that order), each collective's NCCL algorithms
 * after its own. */
static void collect(registry_t *r)
{
    r->n = 0;
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++) {
        for (int i = 0; groups[g][i]; i++) {
            CS_ASSERT(r->n < MAX_ALGOS);
            CS_ASSERT(!r->n || r->all[r->n - 1]->kind <= groups[g][i]->kind);
            r->all[r->n++] = groups[g][i];
        }
        cs_coll_kind_t k = groups[g][0]->kind;
        for (size_t t = 0; t < sizeof nccl_groups / sizeof *nccl_groups; t++)
            for (int i = 0; nccl_groups[t][i]; i++)
                if (nccl_groups[t][i]->kind >= k &&
                    (g + 1 == sizeof groups / sizeof *groups ||
                     nccl_groups[t][i]->kind < groups[g + 1][0]->kind)) {
                    CS_ASSERT(r->n < MAX_ALGOS);
                    r->all[r->n++] = nccl_groups[t][i];
                }
    }
}

/* The table is a pure function of constant data: a static copy filled
 * once is not observable state.  Filled under pthread_once: two threads
 * (the library, issue 20) asking at once must not both fill it, nor one
 * read it half-filled. */
static registry_t coll_registry;
static pthread_once_t coll_registry_once = PTHREAD_ONCE_INIT;

static void coll_registry_fill(void)
{
    collect(&coll_registry);
}

const cs_coll_algo_t *const *cs_coll_algos(int *count)
{
    pthread_once(&coll_registry_once, coll_registry_fill);
    *count = coll_registry.n;
    return coll_registry.all;
}

int cs_coll_find(cs_coll_kind_t k, const char *name, const cs_coll_algo_t **out, cs_error_t *err)
{
    int n;
    const cs_coll_algo_t *const *all = cs_coll_algos(&n);
    char names[1024] = "";
    *out = NULL;
    for (int i = 0; i < n; i++) {
        if (all[i]->kind != k)
            continue;
        if (!name) { /* the first listed is the default */
            *out = all[i];
            return CS_OK;
        }
        if (!strcmp(all[i]->name, name)) {
            *out = all[i];
            return CS_OK;
        }
        if (strlen(names) + strlen(all[i]->name) + 3 < sizeof names) {
            if (names[0])
                strcat(names, ", ");
            strcat(names, all[i]->name);
        }
    }
    if (!names[0])
        return cs_error_set(err, CS_ERR_USAGE, "no algorithm implements %s yet", cs_coll_name(k));
    /* the nearest name of this collective's algorithms (a typo), else of
     * another collective's (an algorithm given to the wrong --coll) */
    cs_suggest_t sg;
    char hint[128];
    cs_suggest_init(&sg, name);
    for (int i = 0; i < n; i++)
        if (all[i]->kind == k)
            cs_suggest_add(&sg, all[i]->name);
    cs_suggest_hint(&sg, "\"", hint, sizeof hint);
    for (int i = 0; i < n && !hint[0] && name; i++)
        if (all[i]->kind != k && !strcmp(all[i]->name, name))
            snprintf(hint, sizeof hint, " (\"%s\" is an algorithm of %s)", name,
                     cs_coll_name(all[i]->kind));
    return cs_error_set(err, CS_ERR_USAGE, "unknown %s algorithm \"%s\"%s; valid: %s",
                        cs_coll_name(k), name ? name : "", hint, names);
}

int cs_coll_build_check(const cs_coll_args_t *a, cs_error_t *err)
{
    if (a->P < 1)
        return cs_error_set(err, CS_ERR_RANGE, "a collective needs at least one rank, got %d", a->P);
    if (a->bytes < 0)
        return cs_error_set(err, CS_ERR_RANGE, "negative size %lld", (long long)a->bytes);
    if (cs_coll_rooted(a->kind) && (a->root < 0 || a->root >= a->P))
        return cs_error_set(err, CS_ERR_RANGE, "root %d is outside ranks 0..%d", a->root, a->P - 1);
    return CS_OK;
}

int cs_coll_build_run(const cs_coll_algo_t *algo, cs_coll_builder_t *b, cs_error_t *err)
{
    static const char *const none[] = {NULL};
    const cs_coll_args_t *a = b->a;
    int rc;
    b->algo = algo;
    rc = algo->build(b, err);
    if (!rc && a->opts)
        rc = cs_spec_check_unused(a->opts, algo->keys ? algo->keys : none, err);
    if (!rc) {
        char name[128];
        snprintf(name, sizeof name, "%s/%s", cs_coll_name(algo->kind), algo->name);
        cs_program_set_source(b->p, name);
        rc = cs_program_finalize(b->p, err);
    }
    return rc;
}

int64_t cs_coll_ops_rounds(int64_t P, int64_t k) { return k * P * cs_coll_ceil_log2(P); }

int64_t cs_coll_max_ops(const cs_coll_algo_t *algo, const cs_coll_args_t *a)
{
    return algo->max_ops && a->P >= 1 ? algo->max_ops(a) : -1;
}

int cs_coll_check_count(const cs_coll_algo_t *algo, const cs_coll_args_t *a, int64_t limit,
                        int windowed, cs_error_t *err)
{
    int64_t n = cs_coll_max_ops(algo, a);
    if (n <= limit)
        return CS_OK;
    if (windowed)
        return cs_error_set(err, CS_ERR_NOMEM,
                            "%s/%s: %lld ops at P = %d, more than a windowed run counts "
                            "(%lld: the executor names ops in 31 bits)",
                            cs_coll_name(algo->kind), algo->name, (long long)n, a->P,
                            (long long)limit);
    return cs_error_set(err, CS_ERR_NOMEM,
                        "%s/%s: %lld ops at P = %d, more than a whole program holds (%lld): run "
                        "it windowed (the default; drop --whole)",
                        cs_coll_name(algo->kind), algo->name, (long long)n, a->P,
                        (long long)limit);
}

int cs_coll_build(const cs_coll_algo_t *algo, const cs_coll_args_t *a, cs_program_t **out,
                  cs_error_t *err)
{
    cs_program_t *p;
    cs_coll_builder_t *b;
    int rc;
    *out = NULL;
    if ((rc = cs_coll_build_check(a, err)) ||
        (rc = cs_coll_check_count(algo, a, CS_PROGRAM_MAX_OPS, 0, err)))
        return rc;
    p = cs_program_new(a->P);
    b = cs_coll_builder_new(p, a);
    rc = cs_coll_build_run(algo, b, err);
    cs_coll_builder_free(b);
    if (rc) {
        cs_program_free(p);
        return rc;
    }
    *out = p;
    return CS_OK;
}
