/*
 * mscclpp.c - MSCCL++ JSON execution plans as algorithms of the collective
 * suite (mscclpp.h, docs/msccl.md "MSCCL++ plans").
 *
 * The schema is the one microsoft/mscclpp's executor reads
 * (src/core/executor/execution_plan.cc, the kernels of
 * src/core/include/execution_kernel.hpp; the writer's side in
 * python/mscclpp/language/):
 *
 *   {"name", "collective", "protocol", "inplace", ...,
 *    "gpus": [{"id", "input_chunks", "output_chunks", "scratch_chunks",
 *              "channels": [{"channel_type": "memory"|"port", "connected_to": [peer...]}],
 *              "remote_buffers": [{"rank", "type": "i"|"o"|"s", "access_channel_types"}],
 *              "threadblocks": [{"id", "ops": [...],
 *                                "channels": [{"channel_type", "channel_ids": [...]}],
 *                                "remote_buffer_refs": [{"access_channel_type",
 *                                                        "remote_buffer_ids": [...]}]}]}]}
 *
 * An op is {"name", "src_buff", "dst_buff", "channel_type", "channel_ids",
 * "tbg_info"}; a buffer reference is local ({"type", "index", "size"}) or
 * remote ({"buffer_id", "index", "size"}: the op's channel type picks the
 * tb's list of remote buffer refs, which names one of the GPU's
 * remote_buffers: a rank and a buffer type).  A tb's channel_ids index the
 * GPU's channels of that type (each "connected_to" entry is one channel);
 * an op's channel_ids index the tb's.  The k-th channel of GPU A to B (of a
 * type) is paired with the k-th channel of B to A, as the executor pairs
 * connections.
 *
 * The model.  MSCCL++ is one-sided: a put writes into the peer's memory and
 * a signal tells it, a wait blocks until the signal has come.  In the
 * program model (send/recv/calc with dependencies) that becomes: a put is a
 * send; the data lands on the peer as recvs posted where the peer waits for
 * the signal that follows the put (the first signal of the same tb to that
 * peer), so that the wait completes when the data has arrived and a signal
 * with data to announce costs nothing more (it rides on the data, as
 * putWithSignal does); a signal with nothing to announce is a message of 0
 * bytes.  A get (and each remote input of rre/rres) is a request of 0 bytes
 * and a response with the data from the peer (a read costs a round trip).
 * Local copies and reductions are messages of a GPU to itself, reduced
 * where the op reduces, with a calc at the machine's reduction rate.  A tb
 * is a stream: each op starts after the previous one has completed.
 *
 * The plan is run in the abstract first (tbs round robin, a wait once its
 * signal has run), which finds every op that could never run (refused with
 * the chain of waits) and the order of emission, so that an accepted plan
 * never deadlocks.  What is refused as not modelled: NVLS/switch ops,
 * packet (LL) ops, pipelines, semaphores and device barriers across tbs.
 */
#include "io/mscclpp.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "io/algofile_internal.h"

/* Bounds that keep every count (and every tag below) in an int32 and a
 * plan's program in memory; far above what the DSL writes. */
#define PP_MAX_GPUS 65536
#define PP_MAX_CHUNKS (1 << 24)
#define PP_MAX_ITEMS (1 << 22) /* ops, buffer refs, channels, tbs */
/* Tags: a signal's by its channel, a data batch's by its number, a get's
 * by its number, a local move's by its tb; each below 1 << 24. */
#define TAG_SIG(c) (c)
#define TAG_DATA(b) ((1 << 24) + (b))
#define TAG_GET(k) ((2 << 24) + (k))
#define TAG_LOCAL(t) ((3 << 24) + (t))

enum { BUF_I = CS_ALGOFILE_BUF_I, BUF_O = CS_ALGOFILE_BUF_O, BUF_S = CS_ALGOFILE_BUF_S };
static const char *const buf_names[] = {"i", "o", "s"};
enum { CH_MEMORY, CH_PORT };
static const char *const ch_names[] = {"memory", "port"};

typedef enum {
    OP_NOP, OP_SIGNAL, OP_WAIT, OP_FLUSH, OP_PUT, OP_GET, OP_COPY, OP_RE, OP_RES, OP_RRE, OP_RRES
} op_kind_t;

/* The executor's op names collsim models; F_SIG: a put that signals its
 * channels after (pws, pwsf). */
enum { F_SIG = 1 };
static const struct {
    const char *name;
    op_kind_t kind;
    unsigned flags;
} op_names[] = {
    {"nop", OP_NOP, 0},       {"signal", OP_SIGNAL, 0}, {"rlxsignal", OP_SIGNAL, 0},
    {"wait", OP_WAIT, 0},     {"rlxwait", OP_WAIT, 0},  {"flush", OP_FLUSH, 0},
    {"put", OP_PUT, 0},       {"pws", OP_PUT, F_SIG},   {"pwsf", OP_PUT, F_SIG},
    {"get", OP_GET, 0},       {"copy", OP_COPY, 0},     {"re", OP_RE, 0},
    {"res", OP_RES, 0},       {"rre", OP_RRE, 0},       {"rres", OP_RRES, 0},
};
#define NOP_NAMES ((int)(sizeof op_names / sizeof *op_names))

/* Valid MSCCL++ ops that collsim does not model, and why. */
static const struct {
    const char *name, *why;
} unmodelled[] = {
    {"ppkt", "an LL packet op (packet formats are not modelled)"},
    {"rppkt", "an LL packet op (packet formats are not modelled)"},
    {"respkt", "an LL packet op (packet formats are not modelled)"},
    {"cpkt", "an LL packet op (packet formats are not modelled)"},
    {"upkt", "an LL packet op (packet formats are not modelled)"},
    {"repkt", "an LL packet op (packet formats are not modelled)"},
    {"recpkt", "an LL packet op (packet formats are not modelled)"},
    {"recspkt", "an LL packet op (packet formats are not modelled)"},
    {"gstorepkt", "an NVLS switch op with packets (multimem stores are not modelled)"},
    {"glres", "an NVLS switch op (multimem load-reduce-store through the NVSwitch is not "
              "modelled)"},
    {"gstore", "an NVLS switch op (multimem stores through the NVSwitch are not modelled)"},
    {"pipeline", "a pipeline (iter_context: its inner ops repeated unit by unit is not "
                 "modelled)"},
    {"sem_acquire", "a semaphore across thread blocks (not modelled)"},
    {"sem_release", "a semaphore across thread blocks (not modelled)"},
    {"barrier", "a device barrier across thread blocks (not modelled)"},
};
#define NUNMODELLED ((int)(sizeof unmodelled / sizeof *unmodelled))

/* ---- the plan, as read ------------------------------------------------------ */

typedef struct bref {
    int32_t rank;    /* the GPU whose buffer it is */
    int32_t op;      /* the op it belongs to */
    int32_t index, size;
    int32_t batch;   /* remote outputs: the data batch it travels in (-1 otherwise) */
    uint8_t buf, remote;
} bref_t;

typedef struct pop {
    int32_t tb, i;         /* its tb (index in m->tbs) and its index there */
    int32_t src, nsrc, dst, ndst; /* into m->brefs */
    int32_t ch, nch;       /* into m->opch: global channel ids */
    int32_t tbg_id, tbg_size;
    uint8_t kind, name, chtype;
} pop_t;

typedef struct ptb {
    int32_t gpu, id, first, n; /* its ops */
} ptb_t;

typedef struct pgpu {
    int32_t chunks[3];     /* input, output, scratch */
    int32_t ch_first, nch; /* its channels in m->chans */
    int32_t tb_first, ntb;
} pgpu_t;

typedef struct chan {
    int32_t gpu, peer, pair; /* pair: the peer's channel paired with it */
    uint8_t type;
} chan_t;

typedef struct batch {
    int32_t first, n; /* into m->batch_refs */
    int32_t free;     /* no signal announces it: it lands when it arrives */
} batch_t;

struct cs_mscclpp {
    char *file, *name, *collective, *protocol;
    cs_coll_kind_t kind;
    int32_t ngpus, nchunks, inplace;
    pgpu_t *gpus;
    chan_t *chans;
    int32_t nchans;
    ptb_t *tbs;
    int32_t ntbs;
    pop_t *ops;
    int32_t nops, cap_ops;
    bref_t *brefs;
    int32_t nbrefs, cap_brefs;
    int32_t *opch, *opch_batch; /* an op's channels; a signal's batch on each (-1: none) */
    int32_t nopch, cap_opch;
    batch_t *batches;
    int32_t nbatches, cap_batches;
    int32_t *batch_refs;
    int32_t nbatch_refs, cap_batch_refs;
    int32_t *order; /* the ops in an order in which each can run */
};

void cs_mscclpp_free(cs_mscclpp_t *m)
{
    if (!m)
        return;
    free(m->file);
    free(m->name);
    free(m->collective);
    free(m->protocol);
    free(m->gpus);
    free(m->chans);
    free(m->tbs);
    free(m->ops);
    free(m->brefs);
    free(m->opch);
    free(m->opch_batch);
    free(m->batches);
    free(m->batch_refs);
    free(m->order);
    free(m);
}

/* Grows *arr (elements of `size` bytes) to hold one more than *n. */
static void grow(void **arr, int32_t n, int32_t *cap, size_t size)
{
    if (n < *cap)
        return;
    *cap = *cap ? 2 * *cap : 64;
    *arr = cs_realloc(*arr, (size_t)*cap * size);
}

/* ---- errors ------------------------------------------------------------------ */

static int fail(const cs_mscclpp_t *m, int code, cs_error_t *err, const char *path,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail(const cs_mscclpp_t *m, int code, cs_error_t *err, const char *path,
                const char *fmt, ...)
{
    char msg[CS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cs_error_set(err, code, "%s: %s%s%s", m->file, path, path[0] ? ": " : "", msg);
}

/* The path of op o for messages. */
static void op_path(const cs_mscclpp_t *m, int32_t o, char *buf, size_t len)
{
    const pop_t *op = &m->ops[o];
    const ptb_t *t = &m->tbs[op->tb];
    snprintf(buf, len, "gpus[%d].threadblocks[%d].ops[%d]", t->gpu,
             (int)(op->tb - m->gpus[t->gpu].tb_first), op->i);
}

/* ---- typed fields --------------------------------------------------------------- */

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a fraction";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* Whether v is an integral number, as *x.  The plan is decoded with
 * JSON_DECODE_INT_AS_REAL: the DSL writes max_message_size as 2^64 - 1,
 * past jansson's json_int_t, and a plan must not be refused for a field
 * collsim does not use; every count collsim reads is far below 2^53, where
 * a double holds integers exactly. */
static int int_of(const json_t *v, int64_t *x)
{
    double d;
    if (json_is_integer(v)) {
        *x = json_integer_value(v);
        return 1;
    }
    if (!json_is_real(v))
        return 0;
    d = json_real_value(v);
    if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0) || d != (double)(int64_t)d)
        return 0;
    *x = (int64_t)d;
    return 1;
}

/* Field `key` of object o as an integer in [lo, hi]; absent: dflt, or an
 * error when `required`. */
static int get_int(const cs_mscclpp_t *m, const json_t *o, const char *key, int required,
                   int64_t dflt, int64_t lo, int64_t hi, const char *path, int32_t *out,
                   cs_error_t *err)
{
    const json_t *v = json_object_get(o, key);
    *out = (int32_t)dflt;
    if (!v) {
        if (required)
            return fail(m, CS_ERR_PARSE, err, path, "missing field \"%s\"", key);
        return CS_OK;
    }
    int64_t x;
    if (!int_of(v, &x))
        return fail(m, CS_ERR_PARSE, err, path, "\"%s\" must be an integer, not %s", key,
                    json_kind(v));
    if (x < lo || x > hi)
        return fail(m, CS_ERR_PARSE, err, path, "\"%s\": %lld is outside [%lld, %lld]", key,
                    (long long)x, (long long)lo, (long long)hi);
    *out = (int32_t)x;
    return CS_OK;
}

/* Field `key` as a string (NULL when absent and not required). */
static int get_str(const cs_mscclpp_t *m, const json_t *o, const char *key, int required,
                   const char *path, const char **out, cs_error_t *err)
{
    const json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v) {
        if (required)
            return fail(m, CS_ERR_PARSE, err, path, "missing field \"%s\"", key);
        return CS_OK;
    }
    if (!json_is_string(v))
        return fail(m, CS_ERR_PARSE, err, path, "\"%s\" must be a string, not %s", key,
                    json_kind(v));
    *out = json_string_value(v);
    return CS_OK;
}

/* Field `key` as an array (NULL, which jansson's array functions read as
 * empty, for an absent field unless required). */
static int get_arr(const cs_mscclpp_t *m, const json_t *o, const char *key, int required,
                   const char *path, const json_t **out, cs_error_t *err)
{
    const json_t *v = json_object_get(o, key);
    *out = NULL; /* jansson reads NULL as an empty array */
    if (!v) {
        if (required)
            return fail(m, CS_ERR_PARSE, err, path, "missing field \"%s\"", key);
        return CS_OK;
    }
    if (!json_is_array(v))
        return fail(m, CS_ERR_PARSE, err, path, "\"%s\" must be an array, not %s", key,
                    json_kind(v));
    if (json_array_size(v) > PP_MAX_ITEMS)
        return fail(m, CS_ERR_PARSE, err, path, "\"%s\" has %zu entries, more than collsim "
                    "reads (%d)", key, json_array_size(v), PP_MAX_ITEMS);
    *out = v;
    return CS_OK;
}

static int is_obj(const cs_mscclpp_t *m, const json_t *v, const char *path, cs_error_t *err)
{
    if (!json_is_object(v))
        return fail(m, CS_ERR_PARSE, err, path, "must be an object, not %s", json_kind(v));
    return CS_OK;
}

static int chan_type(const cs_mscclpp_t *m, const char *s, const char *path, uint8_t *out,
                     cs_error_t *err)
{
    if (!strcmp(s, "memory"))
        *out = CH_MEMORY;
    else if (!strcmp(s, "port"))
        *out = CH_PORT;
    else if (!strcmp(s, "switch"))
        return fail(m, CS_ERR_RANGE, err, path, "channel_type \"switch\": NVLS (NVSwitch "
                    "multimem) channels are not modelled");
    else
        return fail(m, CS_ERR_PARSE, err, path, "channel_type \"%.32s\" is none of memory, "
                    "port, switch", s);
    return CS_OK;
}

static int buf_type(const cs_mscclpp_t *m, const char *s, const char *path, uint8_t *out,
                    cs_error_t *err)
{
    for (int b = 0; b < 3; b++)
        if (!strcmp(s, buf_names[b])) {
            *out = (uint8_t)b;
            return CS_OK;
        }
    return fail(m, CS_ERR_PARSE, err, path, "buffer type \"%.32s\" is none of i, o, s", s);
}

/* ---- reading ----------------------------------------------------------------- */

/* Per GPU while reading its tbs: the tb's channel and remote buffer lists
 * (tb-local index -> GPU-level), per channel type. */
typedef struct tbmap {
    int32_t *ch[2], nch[2];
    int32_t *rb[2], nrb[2];
} tbmap_t;

static void tbmap_clear(tbmap_t *t)
{
    for (int k = 0; k < 2; k++) {
        free(t->ch[k]);
        free(t->rb[k]);
    }
    memset(t, 0, sizeof *t);
}

/* A GPU's remote buffers: rank and type. */
typedef struct rbuf {
    int32_t rank;
    uint8_t buf;
} rbuf_t;

static int read_bref(cs_mscclpp_t *m, const json_t *v, int32_t g, const pop_t *op,
                     const tbmap_t *tm, const rbuf_t *rbs, const char *path, cs_error_t *err)
{
    int rc;
    int32_t id;
    const char *type;
    bref_t r = {g, m->nops, 0, 0, -1, 0, 0};
    if ((rc = is_obj(m, v, path, err)))
        return rc;
    if (json_object_get(v, "switch_channel_id"))
        return fail(m, CS_ERR_RANGE, err, path, "switch_channel_id: NVLS (NVSwitch multimem) "
                    "buffers are not modelled");
    if ((rc = get_int(m, v, "index", 1, 0, 0, PP_MAX_CHUNKS, path, &r.index, err)) ||
        (rc = get_int(m, v, "size", 1, 0, 1, PP_MAX_CHUNKS, path, &r.size, err)) ||
        (rc = get_str(m, v, "type", 0, path, &type, err)) ||
        (rc = get_int(m, v, "buffer_id", 0, -1, 0, PP_MAX_ITEMS, path, &id, err)))
        return rc;
    if (id >= 0) { /* remote: through the tb's refs of the op's channel type */
        int k = op->chtype;
        if (id >= tm->nrb[k])
            return fail(m, CS_ERR_PARSE, err, path, "buffer_id %d: the thread block has %d "
                        "remote buffer refs for %s channels", id, tm->nrb[k], ch_names[k]);
        const rbuf_t *rb = &rbs[tm->rb[k][id]];
        r.rank = rb->rank;
        r.buf = rb->buf;
        r.remote = 1;
    } else if (!type) {
        return fail(m, CS_ERR_PARSE, err, path, "a buffer reference needs \"type\" (local) or "
                    "\"buffer_id\" (remote)");
    } else if ((rc = buf_type(m, type, path, &r.buf, err))) {
        return rc;
    }
    grow((void **)&m->brefs, m->nbrefs, &m->cap_brefs, sizeof *m->brefs);
    m->brefs[m->nbrefs++] = r;
    return CS_OK;
}

/* Which buffer refs an op kind takes: all local, all remote, or the first
 * local and the others remote (the executor's reads and writes through a
 * channel); how many (exact, or 0: one or more). */
enum { R_NONE, R_LOCAL, R_REMOTE, R_LOCAL_THEN_REMOTE };
static const struct {
    uint8_t src, dst;
    int8_t nsrc, ndst; /* exact count; 0: one or more; -1: none needed */
    int8_t same;       /* as many srcs as dsts */
} op_bufs[] = {
    [OP_NOP] = {R_NONE, R_NONE, -1, -1, 0},
    [OP_SIGNAL] = {R_NONE, R_NONE, -1, -1, 0},
    [OP_WAIT] = {R_NONE, R_NONE, -1, -1, 0},
    [OP_FLUSH] = {R_NONE, R_NONE, -1, -1, 0},
    [OP_PUT] = {R_LOCAL, R_REMOTE, 0, 0, 1},
    [OP_GET] = {R_REMOTE, R_LOCAL, 0, 0, 1},
    [OP_COPY] = {R_LOCAL, R_LOCAL, 1, 1, 0},
    [OP_RE] = {R_LOCAL, R_LOCAL, 0, 1, 0},
    [OP_RES] = {R_LOCAL, R_LOCAL_THEN_REMOTE, 0, 0, 0},
    [OP_RRE] = {R_LOCAL_THEN_REMOTE, R_LOCAL, 0, 1, 0},
    [OP_RRES] = {R_LOCAL_THEN_REMOTE, R_LOCAL_THEN_REMOTE, 0, 0, 0},
};

static int check_refs(cs_mscclpp_t *m, const pop_t *op, int32_t first, int32_t n, uint8_t rule,
                      int8_t want, const char *what, const char *path, cs_error_t *err)
{
    const char *name = op_names[op->name].name;
    if (want > 0 && n != want)
        return fail(m, CS_ERR_PARSE, err, path, "%s takes %d %s, not %d", name, want, what, n);
    if (want == 0 && n < 1)
        return fail(m, CS_ERR_PARSE, err, path, "%s needs \"%s\" (one or more buffer refs)",
                    name, what);
    for (int32_t i = 0; i < n; i++) {
        const bref_t *r = &m->brefs[first + i];
        int remote = rule == R_REMOTE || (rule == R_LOCAL_THEN_REMOTE && i > 0);
        if (r->remote != remote)
            return fail(m, CS_ERR_PARSE, err, path, "%s[%d]: %s takes a %s buffer here (%s), "
                        "not a %s one", what, i, name, remote ? "remote" : "local",
                        remote ? "\"buffer_id\"" : "\"type\"", r->remote ? "remote" : "local");
        int32_t have = m->gpus[r->rank].chunks[r->buf];
        if ((int64_t)r->index + r->size > have)
            return fail(m, CS_ERR_PARSE, err, path, "%s[%d]: chunks [%d, %d) of gpu %d's "
                        "buffer %s, which has %d chunks", what, i, r->index,
                        r->index + r->size, r->rank, buf_names[r->buf], have);
        if (r->size != m->brefs[op->src].size)
            return fail(m, CS_ERR_PARSE, err, path, "%s[%d]: size %d, but src_buff[0] has "
                        "size %d (an op moves equal sizes)", what, i, r->size,
                        m->brefs[op->src].size);
    }
    return CS_OK;
}

static int read_op(cs_mscclpp_t *m, const json_t *v, int32_t g, int32_t tb, int32_t i,
                   const tbmap_t *tm, const rbuf_t *rbs, const char *path, cs_error_t *err)
{
    int rc;
    const char *name, *ct;
    const json_t *src, *dst, *ids, *tbg;
    pop_t op;
    char sub[256];
    memset(&op, 0, sizeof op);
    op.tb = tb;
    op.i = i;
    op.tbg_size = 1;
    if ((rc = is_obj(m, v, path, err)) || (rc = get_str(m, v, "name", 1, path, &name, err)))
        return rc;
    int k = -1;
    for (int j = 0; j < NOP_NAMES && k < 0; j++)
        if (!strcmp(name, op_names[j].name))
            k = j;
    if (k < 0) {
        for (int j = 0; j < NUNMODELLED; j++)
            if (!strcmp(name, unmodelled[j].name))
                return fail(m, CS_ERR_RANGE, err, path, "op \"%s\" is %s", name,
                            unmodelled[j].why);
        char list[320] = "";
        for (int j = 0; j < NOP_NAMES; j++) {
            strncat(list, j ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, op_names[j].name, sizeof list - strlen(list) - 1);
        }
        return fail(m, CS_ERR_PARSE, err, path, "unknown op \"%.32s\"; valid: %s", name, list);
    }
    op.name = (uint8_t)k;
    op.kind = (uint8_t)op_names[k].kind;
    if ((rc = get_str(m, v, "channel_type", 0, path, &ct, err)))
        return rc;
    if (ct && strcmp(ct, "none") && (rc = chan_type(m, ct, path, &op.chtype, err)))
        return rc;
    if ((tbg = json_object_get(v, "tbg_info"))) {
        snprintf(sub, sizeof sub, "%.200s.tbg_info", path);
        if ((rc = is_obj(m, tbg, sub, err)) ||
            (rc = get_int(m, tbg, "tbg_size", 1, 1, 1, 1024, sub, &op.tbg_size, err)) ||
            (rc = get_int(m, tbg, "tb_id", 1, 0, 0, op.tbg_size - 1, sub, &op.tbg_id, err)))
            return rc;
    }
    /* channels: tb-local ids -> GPU-level -> global */
    if ((rc = get_arr(m, v, "channel_ids", 0, path, &ids, err)))
        return rc;
    int needs_ch = op.kind == OP_SIGNAL || op.kind == OP_WAIT ||
                   (op.kind == OP_PUT && (op_names[k].flags & F_SIG));
    if (needs_ch && (!ct || !strcmp(ct, "none")))
        return fail(m, CS_ERR_PARSE, err, path, "%s needs \"channel_type\" (memory or port)",
                    name);
    if (needs_ch && json_array_size(ids) == 0)
        return fail(m, CS_ERR_PARSE, err, path, "%s needs \"channel_ids\" (one or more)", name);
    op.ch = m->nopch;
    for (size_t j = 0; j < json_array_size(ids) && needs_ch; j++) {
        int64_t x;
        int c = op.chtype;
        if (!int_of(json_array_get(ids, j), &x) || x < 0 || x >= tm->nch[c])
            return fail(m, CS_ERR_PARSE, err, path, "channel_ids[%zu]: the thread block has %d "
                        "%s channels (ids 0..%d)", j, tm->nch[c], ch_names[c], tm->nch[c] - 1);
        grow((void **)&m->opch, m->nopch, &m->cap_opch, sizeof *m->opch);
        m->opch[m->nopch++] = m->gpus[g].ch_first + tm->ch[c][x];
        op.nch++;
    }
    /* buffers */
    int32_t need = op_bufs[op.kind].nsrc;
    if ((rc = get_arr(m, v, "src_buff", 0, path, &src, err)) ||
        (rc = get_arr(m, v, "dst_buff", 0, path, &dst, err)))
        return rc;
    if (need >= 0) {
        op.src = m->nbrefs;
        for (size_t j = 0; j < json_array_size(src); j++) {
            snprintf(sub, sizeof sub, "%.200s.src_buff[%zu]", path, j);
            if ((rc = read_bref(m, json_array_get(src, j), g, &op, tm, rbs, sub, err)))
                return rc;
        }
        op.nsrc = m->nbrefs - op.src;
        op.dst = m->nbrefs;
        for (size_t j = 0; j < json_array_size(dst); j++) {
            snprintf(sub, sizeof sub, "%.200s.dst_buff[%zu]", path, j);
            if ((rc = read_bref(m, json_array_get(dst, j), g, &op, tm, rbs, sub, err)))
                return rc;
        }
        op.ndst = m->nbrefs - op.dst;
        if (op.nsrc < 1)
            return fail(m, CS_ERR_PARSE, err, path, "%s needs \"src_buff\" (one or more buffer "
                        "refs)", name);
        if ((rc = check_refs(m, &op, op.src, op.nsrc, op_bufs[op.kind].src,
                             op_bufs[op.kind].nsrc, "src_buff", path, err)) ||
            (rc = check_refs(m, &op, op.dst, op.ndst, op_bufs[op.kind].dst,
                             op_bufs[op.kind].ndst, "dst_buff", path, err)))
            return rc;
        if (op_bufs[op.kind].same && op.nsrc != op.ndst)
            return fail(m, CS_ERR_PARSE, err, path, "%s: %d src_buff for %d dst_buff (one "
                        "each)", name, op.nsrc, op.ndst);
    }
    grow((void **)&m->ops, m->nops, &m->cap_ops, sizeof *m->ops);
    m->ops[m->nops++] = op;
    return CS_OK;
}

/* A tb's "channels" or "remote_buffer_refs": per type, a list of GPU-level
 * indexes (channels: below the GPU's count of that type; remote buffers:
 * below nrb, and each must be reachable through that type). */
static int read_tb_list(cs_mscclpp_t *m, const json_t *tbv, const char *key, const char *tkey,
                        const char *ikey, int32_t limit[2], int32_t **lists, int32_t *ns,
                        const rbuf_t *rbs, int32_t nrb, const char *path, cs_error_t *err)
{
    const json_t *arr, *ids;
    const char *t;
    char sub[256];
    int rc;
    uint8_t c = 0;
    if ((rc = get_arr(m, tbv, key, 0, path, &arr, err)))
        return rc;
    for (size_t j = 0; j < json_array_size(arr); j++) {
        const json_t *e = json_array_get(arr, j);
        snprintf(sub, sizeof sub, "%.160s.%.40s[%zu]", path, key, j);
        if ((rc = is_obj(m, e, sub, err)) || (rc = get_str(m, e, tkey, 1, sub, &t, err)))
            return rc;
        if (!strcmp(t, "switch")) {
            /* NVLS channels are refused where an op uses them */
            continue;
        }
        if ((rc = chan_type(m, t, sub, &c, err)) || (rc = get_arr(m, e, ikey, 1, sub, &ids, err)))
            return rc;
        for (size_t x = 0; x < json_array_size(ids); x++) {
            int64_t iv;
            int32_t hi = rbs ? nrb : limit[c];
            if (!int_of(json_array_get(ids, x), &iv) || iv < 0 || iv >= hi)
                return fail(m, CS_ERR_PARSE, err, sub, "%s[%zu]: the GPU has %d %s%s", ikey, x,
                            hi, rbs ? "remote buffers" : ch_names[c],
                            rbs ? "" : " channels");
            if (ns[c] >= PP_MAX_ITEMS)
                return fail(m, CS_ERR_PARSE, err, sub, "too many ids");
            lists[c] = cs_realloc(lists[c], ((size_t)ns[c] + 1) * sizeof *lists[c]);
            lists[c][ns[c]++] = (int32_t)iv;
        }
    }
    return CS_OK;
}

static int read_gpu(cs_mscclpp_t *m, const json_t *gv, int32_t g, cs_error_t *err)
{
    char path[64], sub[256];
    const json_t *chans, *rbufs, *tbs, *ops;
    const char *t;
    int rc = CS_OK;
    int32_t id, chunks[3];
    pgpu_t *gp = &m->gpus[g];
    rbuf_t *rbs = NULL;
    tbmap_t tm;
    memset(&tm, 0, sizeof tm);
    snprintf(path, sizeof path, "gpus[%d]", g);
    if ((rc = is_obj(m, gv, path, err)) ||
        (rc = get_int(m, gv, "id", 1, 0, 0, PP_MAX_GPUS, path, &id, err)) ||
        (rc = get_int(m, gv, "input_chunks", 1, 0, 0, PP_MAX_CHUNKS, path, &chunks[BUF_I], err)) ||
        (rc = get_int(m, gv, "output_chunks", 1, 0, 0, PP_MAX_CHUNKS, path, &chunks[BUF_O],
                      err)) ||
        (rc = get_int(m, gv, "scratch_chunks", 0, 0, 0, PP_MAX_CHUNKS, path, &chunks[BUF_S],
                      err)))
        return rc;
    if (id != g)
        return fail(m, CS_ERR_PARSE, err, path, "\"id\" is %d: the executor wants gpus[i] to be "
                    "GPU i", id);
    memcpy(gp->chunks, chunks, sizeof chunks);
    /* channels: each connected_to entry is one channel to that peer */
    if ((rc = get_arr(m, gv, "channels", 0, path, &chans, err)))
        return rc;
    gp->ch_first = m->nchans;
    for (size_t j = 0; j < json_array_size(chans); j++) {
        const json_t *c = json_array_get(chans, j), *to;
        uint8_t ty = 0;
        snprintf(sub, sizeof sub, "%s.channels[%zu]", path, j);
        if ((rc = is_obj(m, c, sub, err)) || (rc = get_str(m, c, "channel_type", 1, sub, &t, err)))
            return rc;
        if (!strcmp(t, "switch"))
            continue; /* refused where an op uses one */
        if ((rc = chan_type(m, t, sub, &ty, err)) ||
            (rc = get_arr(m, c, "connected_to", 1, sub, &to, err)))
            return rc;
        for (size_t x = 0; x < json_array_size(to); x++) {
            int64_t p;
            if (!int_of(json_array_get(to, x), &p) || p < 0 || p >= m->ngpus || p == g)
                return fail(m, CS_ERR_PARSE, err, sub, "connected_to[%zu]: a peer must be a GPU "
                            "0..%d other than %d", x, m->ngpus - 1, g);
            if (m->nchans >= PP_MAX_ITEMS)
                return fail(m, CS_ERR_PARSE, err, sub, "too many channels");
            m->chans = cs_realloc(m->chans, ((size_t)m->nchans + 1) * sizeof *m->chans);
            m->chans[m->nchans++] = (chan_t){g, (int32_t)p, -1, ty};
        }
    }
    gp->nch = m->nchans - gp->ch_first;
    /* remote buffers */
    if ((rc = get_arr(m, gv, "remote_buffers", 0, path, &rbufs, err)))
        return rc;
    int32_t nrb = (int32_t)json_array_size(rbufs);
    rbs = cs_calloc((size_t)nrb + 1, sizeof *rbs);
    for (int32_t j = 0; j < nrb && !rc; j++) {
        const json_t *r = json_array_get(rbufs, (size_t)j);
        snprintf(sub, sizeof sub, "%s.remote_buffers[%d]", path, j);
        if ((rc = is_obj(m, r, sub, err)) ||
            (rc = get_int(m, r, "rank", 1, 0, 0, m->ngpus - 1, sub, &rbs[j].rank, err)) ||
            (rc = get_str(m, r, "type", 1, sub, &t, err)) ||
            (rc = buf_type(m, t, sub, &rbs[j].buf, err)))
            break;
        if (rbs[j].rank == g)
            rc = fail(m, CS_ERR_PARSE, err, sub, "\"rank\" %d is the GPU itself", g);
    }
    if (rc)
        goto out;
    /* thread blocks: in id order, ids 0..n-1 */
    if ((rc = get_arr(m, gv, "threadblocks", 1, path, &tbs, err)))
        goto out;
    gp->tb_first = m->ntbs;
    gp->ntb = (int32_t)json_array_size(tbs);
    for (int32_t j = 0; j < gp->ntb; j++) {
        const json_t *tv = json_array_get(tbs, (size_t)j);
        int32_t tid, gch[2];
        /* channels of each type on this GPU, as the tb ids index them */
        int32_t seen[2] = {0, 0};
        for (int32_t c = 0; c < gp->nch; c++) {
            int ty = m->chans[gp->ch_first + c].type;
            seen[ty]++;
        }
        gch[0] = seen[0];
        gch[1] = seen[1];
        snprintf(sub, sizeof sub, "%s.threadblocks[%d]", path, j);
        if ((rc = is_obj(m, tv, sub, err)) ||
            (rc = get_int(m, tv, "id", 1, 0, 0, PP_MAX_ITEMS, sub, &tid, err)))
            goto out;
        if (tid != j) {
            rc = fail(m, CS_ERR_PARSE, err, sub, "\"id\" is %d: thread blocks must be listed "
                      "in id order 0, 1, 2, ...", tid);
            goto out;
        }
        tbmap_clear(&tm);
        if ((rc = read_tb_list(m, tv, "channels", "channel_type", "channel_ids", gch, tm.ch,
                               tm.nch, NULL, 0, sub, err)) ||
            (rc = read_tb_list(m, tv, "remote_buffer_refs", "access_channel_type",
                               "remote_buffer_ids", gch, tm.rb, tm.nrb, rbs, nrb, sub, err)))
            goto out;
        /* tb channel ids are per type: map them to the GPU's channel list */
        for (int ty = 0; ty < 2; ty++)
            for (int32_t x = 0; x < tm.nch[ty]; x++) {
                int32_t want = tm.ch[ty][x], c = 0, n = 0;
                for (; c < gp->nch; c++)
                    if (m->chans[gp->ch_first + c].type == ty && n++ == want)
                        break;
                tm.ch[ty][x] = c;
            }
        if (m->ntbs >= PP_MAX_ITEMS) {
            rc = fail(m, CS_ERR_PARSE, err, sub, "too many thread blocks");
            goto out;
        }
        m->tbs = cs_realloc(m->tbs, ((size_t)m->ntbs + 1) * sizeof *m->tbs);
        ptb_t *tb = &m->tbs[m->ntbs];
        tb->gpu = g;
        tb->id = tid;
        tb->first = m->nops;
        int32_t tbi = m->ntbs++;
        if ((rc = get_arr(m, tv, "ops", 1, sub, &ops, err)))
            goto out;
        for (size_t x = 0; x < json_array_size(ops); x++) {
            char opath[256];
            snprintf(opath, sizeof opath, "%.200s.ops[%zu]", sub, x);
            if (m->nops >= PP_MAX_ITEMS) {
                rc = fail(m, CS_ERR_PARSE, err, opath, "too many ops");
                goto out;
            }
            if ((rc = read_op(m, json_array_get(ops, x), g, tbi, (int32_t)x, &tm, rbs, opath,
                              err)))
                goto out;
        }
        m->tbs[tbi].n = m->nops - m->tbs[tbi].first;
    }
out:
    tbmap_clear(&tm);
    free(rbs);
    return rc;
}

/* The k-th channel of A to B (of a type) pairs with the k-th of B to A. */
static int pair_channels(cs_mscclpp_t *m, cs_error_t *err)
{
    for (int32_t c = 0; c < m->nchans; c++) {
        chan_t *ch = &m->chans[c];
        int32_t k = 0, n = 0, d = -1;
        const pgpu_t *a = &m->gpus[ch->gpu], *b = &m->gpus[ch->peer];
        for (int32_t x = a->ch_first; x < c; x++)
            k += m->chans[x].peer == ch->peer && m->chans[x].type == ch->type;
        for (int32_t x = b->ch_first; x < b->ch_first + b->nch; x++)
            if (m->chans[x].peer == ch->gpu && m->chans[x].type == ch->type && n++ == k)
                d = x;
        if (d < 0) {
            char path[64];
            snprintf(path, sizeof path, "gpus[%d].channels", ch->gpu);
            return fail(m, CS_ERR_PARSE, err, path, "gpu %d has at least %d %s channels to gpu "
                        "%d, gpu %d has %d to gpu %d (a channel is a pair of ends)", ch->gpu,
                        k + 1, ch_names[ch->type], ch->peer, ch->peer, n, ch->gpu);
        }
        ch->pair = d;
    }
    return CS_OK;
}

/* The chunk count of the collective's buffer: a GPU's larger of input and
 * output.  Input and output are placed as MSCCL places them: the whole
 * buffer (C chunks) or the GPU's own block of it (C / ngpus). */
static int check_chunks(cs_mscclpp_t *m, cs_error_t *err)
{
    for (int32_t g = 0; g < m->ngpus; g++) {
        const int32_t *ch = m->gpus[g].chunks;
        int32_t C = ch[BUF_I] > ch[BUF_O] ? ch[BUF_I] : ch[BUF_O];
        char path[64];
        snprintf(path, sizeof path, "gpus[%d]", g);
        if (C == 0)
            return fail(m, CS_ERR_PARSE, err, path, "input_chunks and output_chunks are both 0");
        if (g == 0)
            m->nchunks = C;
        else if (C != m->nchunks)
            return fail(m, CS_ERR_PARSE, err, path, "its larger buffer has %d chunks, gpu 0's "
                        "%d: the GPUs must cut the collective's buffer alike", C, m->nchunks);
        for (int b = BUF_I; b <= BUF_O; b++)
            if (ch[b] && ch[b] != C && (int64_t)ch[b] * m->ngpus != C)
                return fail(m, CS_ERR_PARSE, err, path, "%s_chunks %d is neither %d (the whole "
                            "buffer) nor %d/%d (the GPU's own block); collsim places a buffer "
                            "only so", b == BUF_I ? "input" : "output", ch[b], C, C, m->ngpus);
    }
    return CS_OK;
}

/* Assigns remote writes to the signals that announce them: per tb, the
 * writes to a peer since the last signal to it travel in one batch with
 * the next signal to that peer; writes no signal follows are free batches
 * (they land when they arrive).  Also counts signals and waits per
 * channel, which must agree across each pair. */
static int assign_batches(cs_mscclpp_t *m, cs_error_t *err)
{
    int32_t *head = cs_malloc(((size_t)m->ngpus + 1) * sizeof *head); /* pending list per peer */
    int32_t *next = cs_malloc(((size_t)m->nbrefs + 1) * sizeof *next);
    int32_t *tail = cs_malloc(((size_t)m->ngpus + 1) * sizeof *tail);
    int32_t *nsig = cs_calloc((size_t)m->nchans + 1, sizeof *nsig);
    int32_t *nwait = cs_calloc((size_t)m->nchans + 1, sizeof *nwait);
    int rc = CS_OK;
    m->opch_batch = cs_malloc(((size_t)m->nopch + 1) * sizeof *m->opch_batch);
    for (int32_t i = 0; i < m->nopch; i++)
        m->opch_batch[i] = -1;
    for (int32_t g = 0; g < m->ngpus; g++)
        head[g] = tail[g] = -1;
    for (int32_t t = 0; t < m->ntbs; t++) {
        const ptb_t *tb = &m->tbs[t];
        for (int32_t o = tb->first; o < tb->first + tb->n; o++) {
            const pop_t *op = &m->ops[o];
            for (int32_t d = op->dst; d < op->dst + op->ndst; d++)
                if (m->brefs[d].remote) {
                    int32_t p = m->brefs[d].rank;
                    next[d] = -1;
                    if (tail[p] >= 0)
                        next[tail[p]] = d;
                    else
                        head[p] = d;
                    tail[p] = d;
                }
            int signals = op->kind == OP_SIGNAL || (op->kind == OP_PUT && op->nch > 0);
            for (int32_t c = op->ch; c < op->ch + op->nch; c++) {
                const chan_t *ch = &m->chans[m->opch[c]];
                if (op->kind == OP_WAIT) {
                    nwait[m->opch[c]]++;
                    continue;
                }
                if (!signals)
                    continue;
                nsig[m->opch[c]]++;
                if (head[ch->peer] < 0)
                    continue;
                grow((void **)&m->batches, m->nbatches, &m->cap_batches, sizeof *m->batches);
                batch_t *b = &m->batches[m->nbatches];
                b->first = m->nbatch_refs;
                b->free = 0;
                for (int32_t d = head[ch->peer]; d >= 0; d = next[d]) {
                    grow((void **)&m->batch_refs, m->nbatch_refs, &m->cap_batch_refs,
                         sizeof *m->batch_refs);
                    m->batch_refs[m->nbatch_refs++] = d;
                    m->brefs[d].batch = m->nbatches;
                }
                b->n = m->nbatch_refs - b->first;
                m->opch_batch[c] = m->nbatches++;
                head[ch->peer] = tail[ch->peer] = -1;
            }
        }
        /* writes no signal of this tb follows: each its own free batch */
        for (int32_t p = 0; p < m->ngpus; p++) {
            for (int32_t d = head[p]; d >= 0; d = next[d]) {
                grow((void **)&m->batches, m->nbatches, &m->cap_batches, sizeof *m->batches);
                grow((void **)&m->batch_refs, m->nbatch_refs, &m->cap_batch_refs,
                     sizeof *m->batch_refs);
                m->batches[m->nbatches] = (batch_t){m->nbatch_refs, 1, 1};
                m->batch_refs[m->nbatch_refs++] = d;
                m->brefs[d].batch = m->nbatches++;
            }
            head[p] = tail[p] = -1;
        }
    }
    for (int32_t c = 0; c < m->nchans && !rc; c++) {
        const chan_t *ch = &m->chans[c];
        if (nsig[c] != nwait[ch->pair]) {
            char path[64];
            snprintf(path, sizeof path, "gpus[%d].channels", ch->gpu);
            rc = fail(m, CS_ERR_PARSE, err, path, "gpu %d signals its %s channel %d (to gpu %d) "
                      "%d times, gpu %d waits on the other end (its channel %d) %d times: each "
                      "signal needs one wait", ch->gpu, ch_names[ch->type],
                      (int)(c - m->gpus[ch->gpu].ch_first), ch->peer, nsig[c], ch->peer,
                      (int)(ch->pair - m->gpus[ch->peer].ch_first), nwait[ch->pair]);
        }
    }
    free(head);
    free(next);
    free(tail);
    free(nsig);
    free(nwait);
    return rc;
}

/* ---- the abstract run --------------------------------------------------------- */

/* Signals that have run per channel, waits that have run per channel; a
 * wait on channel c needs one more signal on c's pair than it has taken. */
typedef struct arun {
    int32_t *sig, *taken;
} arun_t;

/* The channel (index in m->opch) whose signal wait op o lacks, or -1. */
static int32_t lacks(const cs_mscclpp_t *m, const arun_t *r, int32_t o)
{
    const pop_t *op = &m->ops[o];
    if (op->kind != OP_WAIT)
        return -1;
    for (int32_t c = op->ch; c < op->ch + op->nch; c++) {
        int32_t need = 1, ch = m->opch[c];
        for (int32_t x = op->ch; x < c; x++)
            need += m->opch[x] == ch;
        if (r->sig[m->chans[ch].pair] < r->taken[ch] + need)
            return c;
    }
    return -1;
}

static int check_runs(cs_mscclpp_t *m, cs_error_t *err)
{
    arun_t r;
    int32_t *next = cs_calloc((size_t)m->ntbs + 1, sizeof *next);
    int32_t *queue = cs_malloc(((size_t)m->ntbs + 1) * sizeof *queue);
    uint8_t *queued = cs_calloc((size_t)m->ntbs + 1, 1);
    int32_t *park = cs_malloc(((size_t)m->nchans + 1) * sizeof *park); /* tbs waiting on a chan */
    int32_t *park_next = cs_malloc(((size_t)m->ntbs + 1) * sizeof *park_next);
    int32_t cap = m->ntbs + 1, qh = 0, qt = 0, inq = 0, norder = 0;
    int rc = CS_OK;
    r.sig = cs_calloc((size_t)m->nchans + 1, sizeof *r.sig);
    r.taken = cs_calloc((size_t)m->nchans + 1, sizeof *r.taken);
    m->order = cs_malloc(((size_t)m->nops + 1) * sizeof *m->order);
    for (int32_t c = 0; c < m->nchans; c++)
        park[c] = -1;
#define PUSH(t)                                                                                    \
    do {                                                                                           \
        queue[qt] = (t);                                                                           \
        qt = (qt + 1) % cap;                                                                       \
        inq++;                                                                                     \
        queued[t] = 1;                                                                             \
    } while (0)
    for (int32_t t = 0; t < m->ntbs; t++)
        if (m->tbs[t].n)
            PUSH(t);
    /* a circular queue of tbs: each pop runs one op, then the tb goes to
     * the back, so that the order interleaves the tbs round by round; a tb
     * whose wait lacks a signal parks on the channel that sends it */
    while (inq > 0) {
        int32_t t = queue[qh];
        qh = (qh + 1) % cap;
        inq--;
        queued[t] = 0;
        const ptb_t *tb = &m->tbs[t];
        int32_t o = tb->first + next[t], c = lacks(m, &r, o);
        if (c >= 0) {
            int32_t p = m->chans[m->opch[c]].pair;
            park_next[t] = park[p];
            park[p] = t;
            continue;
        }
        const pop_t *op = &m->ops[o];
        m->order[norder++] = o;
        next[t]++;
        for (int32_t x = op->ch; x < op->ch + op->nch; x++) {
            int32_t ch = m->opch[x];
            if (op->kind == OP_WAIT) {
                r.taken[ch]++;
            } else {
                r.sig[ch]++;
                for (int32_t u = park[ch]; u >= 0; u = park_next[u])
                    if (!queued[u])
                        PUSH(u);
                park[ch] = -1;
            }
        }
        if (next[t] < tb->n && !queued[t])
            PUSH(t);
    }
#undef PUSH
    if (norder < m->nops) {
        /* follow the chain: a stuck wait lacks the signal of a tb that is
         * itself stuck at some op, until a tb repeats (or 4 links) */
        char text[CS_ERROR_MSG_MAX] = "", a[128], first[128];
        int32_t t = 0, steps = 0;
        uint8_t *seen = cs_calloc((size_t)m->ntbs + 1, 1);
        while (next[t] >= m->tbs[t].n)
            t++;
        op_path(m, m->tbs[t].first + next[t], first, sizeof first);
        while (!seen[t] && steps < 4) {
            int32_t o = m->tbs[t].first + next[t], c = lacks(m, &r, o), sender = -1;
            seen[t] = 1;
            steps++;
            CS_ASSERT(c >= 0);
            int32_t pc = m->chans[m->opch[c]].pair;
            const chan_t *pch = &m->chans[pc];
            op_path(m, o, a, sizeof a);
            snprintf(text + strlen(text), sizeof text - strlen(text),
                     "%s%s (%s) waits for a signal from gpu %d on its %s channel %d", steps > 1 ?
                     "; " : "", a, op_names[m->ops[o].name].name, pch->gpu, ch_names[pch->type],
                     (int)(pc - m->gpus[pch->gpu].ch_first));
            /* the first tb of the peer that still has a signal on pc to run */
            for (int32_t u = m->gpus[pch->gpu].tb_first;
                 u < m->gpus[pch->gpu].tb_first + m->gpus[pch->gpu].ntb && sender < 0; u++)
                for (int32_t x = m->tbs[u].first + next[u];
                     x < m->tbs[u].first + m->tbs[u].n && sender < 0; x++)
                    for (int32_t y = m->ops[x].ch; y < m->ops[x].ch + m->ops[x].nch; y++)
                        if (m->opch[y] == pc && m->ops[x].kind != OP_WAIT)
                            sender = u;
            if (sender < 0 || next[sender] >= m->tbs[sender].n)
                break;
            op_path(m, m->tbs[sender].first + next[sender], a, sizeof a);
            snprintf(text + strlen(text), sizeof text - strlen(text),
                     ", which gpu %d sends only after %s", pch->gpu, a);
            t = sender;
        }
        free(seen);
        rc = fail(m, CS_ERR_PARSE, err, first, "an op that can never run (a cycle of signals "
                  "and waits): %s", text);
    }
    free(next);
    free(queue);
    free(queued);
    free(park);
    free(park_next);
    free(r.sig);
    free(r.taken);
    return rc;
}

int cs_mscclpp_read(const cs_source_t *src, cs_mscclpp_t **out, cs_error_t *err)
{
    json_error_t je;
    json_t *root = NULL;
    const json_t *gpus;
    const char *s;
    int rc;
    cs_mscclpp_t *m;
    *out = NULL;
    m = cs_calloc(1, sizeof *m);
    m->file = cs_strdup(src->name);
    if (src->data) {
        root = json_loadb(src->data, src->len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL,
                          &je);
    } else {
        FILE *f;
        if ((rc = cs_source_fopen(src, &f, err))) {
            cs_mscclpp_free(m);
            return rc;
        }
        root = json_loadf(f, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &je);
        fclose(f);
    }
    if (!root) {
        rc = cs_error_set(err, CS_ERR_PARSE, "%s:%d:%d: %s", m->file, je.line, je.column,
                          je.text);
        cs_mscclpp_free(m);
        return rc;
    }
    if ((rc = is_obj(m, root, "the plan", err)) ||
        (rc = get_str(m, root, "name", 0, "", &s, err)))
        goto out;
    m->name = cs_strdup(s ? s : "");
    if ((rc = get_str(m, root, "collective", 1, "", &s, err)))
        goto out;
    m->collective = cs_strdup(s);
    {
        cs_error_t e;
        if (cs_coll_parse(s, &m->kind, &e) != CS_OK || m->kind == CS_COLL_BARRIER) {
            rc = fail(m, CS_ERR_PARSE, err, "collective", "\"%.32s\" is not a collective collsim "
                      "runs (valid: allreduce, allgather, reducescatter, broadcast, reduce, "
                      "gather, scatter, alltoall)", s);
            goto out;
        }
    }
    if ((rc = get_str(m, root, "protocol", 0, "", &s, err)))
        goto out;
    m->protocol = cs_strdup(s ? s : "Simple");
    if (strcmp(m->protocol, "Simple") && strcmp(m->protocol, "LL")) {
        rc = fail(m, CS_ERR_PARSE, err, "protocol", "\"%.32s\" is none of Simple, LL",
                  m->protocol);
        goto out;
    }
    {
        const json_t *ip = json_object_get(root, "inplace");
        if (ip && !json_is_boolean(ip)) {
            rc = fail(m, CS_ERR_PARSE, err, "inplace", "must be a boolean, not %s", json_kind(ip));
            goto out;
        }
        m->inplace = !ip || json_is_true(ip);
    }
    if ((rc = get_arr(m, root, "gpus", 1, "", &gpus, err)))
        goto out;
    m->ngpus = (int32_t)json_array_size(gpus);
    if (m->ngpus < 1 || m->ngpus > PP_MAX_GPUS) {
        rc = fail(m, CS_ERR_PARSE, err, "gpus", "%d GPUs; a plan has 1 to %d", m->ngpus,
                  PP_MAX_GPUS);
        goto out;
    }
    m->gpus = cs_calloc((size_t)m->ngpus, sizeof *m->gpus);
    /* every GPU's chunk counts first: remote refs are checked against the
     * owner's buffers */
    for (int32_t g = 0; g < m->ngpus; g++) {
        const json_t *gv = json_array_get(gpus, (size_t)g);
        char path[64];
        snprintf(path, sizeof path, "gpus[%d]", g);
        if ((rc = is_obj(m, gv, path, err)) ||
            (rc = get_int(m, gv, "input_chunks", 1, 0, 0, PP_MAX_CHUNKS, path,
                          &m->gpus[g].chunks[BUF_I], err)) ||
            (rc = get_int(m, gv, "output_chunks", 1, 0, 0, PP_MAX_CHUNKS, path,
                          &m->gpus[g].chunks[BUF_O], err)) ||
            (rc = get_int(m, gv, "scratch_chunks", 0, 0, 0, PP_MAX_CHUNKS, path,
                          &m->gpus[g].chunks[BUF_S], err)))
            goto out;
    }
    if ((rc = check_chunks(m, err)))
        goto out;
    for (int32_t g = 0; g < m->ngpus; g++)
        if ((rc = read_gpu(m, json_array_get(gpus, (size_t)g), g, err)))
            goto out;
    if (!(rc = pair_channels(m, err)) && !(rc = assign_batches(m, err)))
        rc = check_runs(m, err);
out:
    json_decref(root);
    if (rc) {
        cs_mscclpp_free(m);
        return rc;
    }
    *out = m;
    return CS_OK;
}

void cs_mscclpp_info(const cs_mscclpp_t *m, cs_mscclpp_info_t *o)
{
    o->name = m->name;
    o->collective = m->collective;
    o->protocol = m->protocol;
    o->kind = m->kind;
    o->ngpus = m->ngpus;
    o->nchunks = m->nchunks;
    o->nthreadblocks = m->ntbs;
    o->inplace = m->inplace;
    o->nops = m->nops;
}

int cs_mscclpp_check_kind(const cs_mscclpp_t *m, cs_coll_kind_t kind, cs_error_t *err)
{
    if (kind != m->kind)
        return cs_error_set(err, CS_ERR_USAGE, "%s: the plan is a%s %s (\"collective\": \"%s\"); "
                            "--coll asks for %s", m->file, cs_algofile_article(m->kind),
                            cs_coll_name(m->kind), m->collective, cs_coll_name(kind));
    return CS_OK;
}

/* ---- emission -------------------------------------------------------------------- */

/* The bytes of a chunk (as the MSCCL reader cuts them: algofile_internal.h). */
static int chunk_bytes(const cs_mscclpp_t *m, const cs_coll_args_t *a, int64_t *q,
                       cs_error_t *err)
{
    return cs_algofile_chunk_bytes(a, m->nchunks, m->ngpus, m->file, 0, "", q, err);
}

typedef struct emit {
    const cs_mscclpp_t *m;
    cs_coll_builder_t *b;
    int64_t q, scratch;
    int32_t **term, *nterm, *capterm; /* per tb: the ops its next op starts after */
    int32_t *cur, ncur, capcur;       /* the ops of the op being emitted that end it */
    int32_t **chq, *nchq;             /* per channel: the batches of its signals, in order */
    int32_t *chtaken;                 /* per channel: the signals its waits have taken */
    int32_t ngets;
} emit_t;

/* Bytes of bref r (its op's thread-block-group slice). */
static void range(const emit_t *e, const bref_t *r, int64_t *off, int64_t *len)
{
    const cs_mscclpp_t *m = e->m;
    const pop_t *op = &m->ops[r->op];
    int64_t so, sl;
    *off = cs_algofile_offset(e->q, e->scratch, m->nchunks, m->gpus[r->rank].chunks[r->buf],
                              r->buf, r->rank, r->index);
    *len = (int64_t)r->size * e->q;
    cs_coll_split(*len, op->tbg_size, op->tbg_id, &so, &sl);
    *off += so;
    *len = sl;
}

static void cur_add(emit_t *e, int32_t op)
{
    if (op < 0)
        return;
    grow((void **)&e->cur, e->ncur, &e->capcur, sizeof *e->cur);
    e->cur[e->ncur++] = op;
}

/* op starts after what its tb's previous op ended with. */
static void after_prev(emit_t *e, int32_t tb, int32_t op)
{
    for (int32_t i = 0; i < e->nterm[tb]; i++)
        cs_coll_dep(e->b, op, e->term[tb][i], CS_DEP_AFTER);
}

/* Local [soff, +len) -> [doff, +len) of g: a message to itself. */
static int32_t local_move(emit_t *e, int32_t tb, int g, int64_t soff, int64_t doff, int64_t len,
                          int reduce, int32_t pre)
{
    int32_t s = cs_coll_send(e->b, g, g, soff, len, TAG_LOCAL(tb)), first, last;
    after_prev(e, tb, s);
    last = cs_algofile_recv_into(e->b, g, g, doff, len, TAG_LOCAL(tb), reduce, &first);
    after_prev(e, tb, first);
    if (pre >= 0) {
        cs_coll_dep(e->b, s, pre, CS_DEP_AFTER);
        cs_coll_dep(e->b, first, pre, CS_DEP_AFTER);
    }
    cur_add(e, s);
    return last;
}

/* A read of remote r into [doff, +len) of g: a request of 0 bytes, the
 * peer's response with the data (its send follows the request's arrival
 * only), the recv (copying or reducing). */
static int32_t remote_read(emit_t *e, int32_t tb, int g, const bref_t *r, int64_t doff,
                           int reduce, int32_t pre)
{
    int64_t soff, len;
    int tag = TAG_GET(e->ngets++);
    int32_t first, last;
    range(e, r, &soff, &len);
    int32_t rq = cs_coll_send(e->b, g, r->rank, 0, 0, tag);
    after_prev(e, tb, rq);
    if (pre >= 0)
        cs_coll_dep(e->b, rq, pre, CS_DEP_AFTER);
    int32_t pr = cs_coll_recv(e->b, r->rank, g, 0, 0, tag);
    int32_t ps = cs_coll_send(e->b, r->rank, g, soff, len, tag);
    cs_coll_dep(e->b, ps, pr, CS_DEP_AFTER);
    last = cs_algofile_recv_into(e->b, g, r->rank, doff, len, tag, reduce, &first);
    cs_coll_dep(e->b, first, rq, CS_DEP_AFTER);
    cur_add(e, rq);
    return last;
}

/* A write of [soff, +len) of g to remote d: a send; a free batch's recv is
 * posted on the peer now (it lands when it arrives), an announced one's
 * where the peer waits. */
static int32_t remote_write(emit_t *e, int32_t tb, int g, int64_t soff, const bref_t *d,
                            int32_t pre)
{
    int64_t doff, len;
    range(e, d, &doff, &len);
    int32_t s = cs_coll_send(e->b, g, d->rank, soff, len, TAG_DATA(d->batch));
    after_prev(e, tb, s);
    if (pre >= 0)
        cs_coll_dep(e->b, s, pre, CS_DEP_AFTER);
    if (e->m->batches[d->batch].free)
        cs_coll_recv(e->b, d->rank, g, doff, len, TAG_DATA(d->batch));
    return s;
}

static void set_term(emit_t *e, int32_t tb)
{
    if (e->capterm[tb] < e->ncur) {
        e->capterm[tb] = e->ncur;
        e->term[tb] = cs_realloc(e->term[tb], (size_t)e->ncur * sizeof **e->term);
    }
    if (e->ncur)
        memcpy(e->term[tb], e->cur, (size_t)e->ncur * sizeof *e->cur);
    e->nterm[tb] = e->ncur;
}

static void emit_signals(emit_t *e, const pop_t *op, int g, int32_t tb)
{
    const cs_mscclpp_t *m = e->m;
    for (int32_t x = op->ch; x < op->ch + op->nch; x++) {
        int32_t c = m->opch[x], b = m->opch_batch[x];
        e->chq[c][e->nchq[c]++] = b;
        if (b >= 0)
            continue; /* it rides on its batch's data, already sent */
        int32_t s = cs_coll_send(e->b, g, m->chans[c].peer, 0, 0, TAG_SIG(c));
        after_prev(e, tb, s);
        for (int32_t i = 0; i < e->ncur; i++)
            cs_coll_dep(e->b, s, e->cur[i], CS_DEP_AFTER);
        cur_add(e, s);
    }
}

static void emit_op(emit_t *e, int32_t o)
{
    const cs_mscclpp_t *m = e->m;
    const pop_t *op = &m->ops[o];
    int32_t tb = op->tb;
    int g = m->tbs[tb].gpu;
    int64_t soff, doff, len;
    e->ncur = 0;
    switch ((op_kind_t)op->kind) {
    case OP_NOP:
    case OP_FLUSH: /* puts complete before the next op already */
        return;
    case OP_SIGNAL:
        emit_signals(e, op, g, tb);
        break;
    case OP_WAIT:
        for (int32_t x = op->ch; x < op->ch + op->nch; x++) {
            int32_t c = m->opch[x], pc = m->chans[c].pair, b = e->chq[pc][e->chtaken[c]++];
            int from = m->chans[c].peer;
            if (b < 0) {
                int32_t r = cs_coll_recv(e->b, g, from, 0, 0, TAG_SIG(pc));
                after_prev(e, tb, r);
                cur_add(e, r);
                continue;
            }
            for (int32_t i = 0; i < m->batches[b].n; i++) {
                const bref_t *d = &m->brefs[m->batch_refs[m->batches[b].first + i]];
                range(e, d, &doff, &len);
                int32_t r = cs_coll_recv(e->b, g, from, doff, len, TAG_DATA(b));
                after_prev(e, tb, r);
                cur_add(e, r);
            }
        }
        break;
    case OP_PUT:
        for (int32_t i = 0; i < op->nsrc; i++) {
            range(e, &m->brefs[op->src + i], &soff, &len);
            cur_add(e, remote_write(e, tb, g, soff, &m->brefs[op->dst + i], -1));
        }
        if (op->nch)
            emit_signals(e, op, g, tb);
        break;
    case OP_GET:
        for (int32_t i = 0; i < op->nsrc; i++) {
            range(e, &m->brefs[op->dst + i], &doff, &len);
            cur_add(e, remote_read(e, tb, g, &m->brefs[op->src + i], doff, 0, -1));
        }
        break;
    case OP_COPY:
        range(e, &m->brefs[op->src], &soff, &len);
        range(e, &m->brefs[op->dst], &doff, &len);
        cur_add(e, local_move(e, tb, g, soff, doff, len, 0, -1));
        break;
    case OP_RE:
    case OP_RES:
    case OP_RRE:
    case OP_RRES: {
        /* dst[0] = src[0] + src[1] + ...: src[0] copied to dst[0] when they
         * differ, each other input reduced into it (local: a message to
         * itself; remote: a read), then dst[0] written to the remote dsts */
        int32_t pre = -1, *red = NULL, nred = 0;
        int64_t s0, d0;
        range(e, &m->brefs[op->src], &s0, &len);
        range(e, &m->brefs[op->dst], &d0, &len);
        if (s0 != d0)
            pre = local_move(e, tb, g, s0, d0, len, 0, -1);
        red = cs_malloc(((size_t)op->nsrc + 1) * sizeof *red);
        for (int32_t i = 1; i < op->nsrc; i++) {
            const bref_t *r = &m->brefs[op->src + i];
            if (r->remote) {
                red[nred++] = remote_read(e, tb, g, r, d0, 1, pre);
            } else {
                range(e, r, &soff, &len);
                red[nred++] = local_move(e, tb, g, soff, d0, len, 1, pre);
            }
        }
        if (nred == 0 && pre >= 0)
            red[nred++] = pre;
        for (int32_t i = 1; i < op->ndst; i++) {
            int32_t s = remote_write(e, tb, g, d0, &m->brefs[op->dst + i], -1);
            for (int32_t k = 0; k < nred; k++)
                cs_coll_dep(e->b, s, red[k], CS_DEP_AFTER);
            cur_add(e, s);
        }
        if (op->ndst <= 1)
            for (int32_t k = 0; k < nred; k++)
                cur_add(e, red[k]);
        free(red);
        break;
    }
    }
    if (e->ncur) /* an op that emitted nothing (a nop) leaves the start as it was */
        set_term(e, tb);
}

int cs_mscclpp_emit(const cs_mscclpp_t *m, cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int rc;
    int64_t q = 0, smax = 0;
    emit_t e;
    if ((rc = cs_mscclpp_check_kind(m, a->kind, err)))
        return rc;
    if (a->P != m->ngpus)
        return cs_error_set(err, CS_ERR_RANGE, "%s: the plan has %d GPUs, the run %d ranks "
                            "(give --ranks %d and a machine of at least %d nodes; collsim has "
                            "no rank map yet)", m->file, m->ngpus, a->P, m->ngpus, m->ngpus);
    if ((rc = chunk_bytes(m, a, &q, err)))
        return rc;
    for (int32_t g = 0; g < m->ngpus; g++)
        smax = m->gpus[g].chunks[BUF_S] > smax ? m->gpus[g].chunks[BUF_S] : smax;
    if ((rc = cs_algofile_check_fits(m->file, m->nchunks, smax, q, err)))
        return rc;
    memset(&e, 0, sizeof e);
    e.m = m;
    e.b = b;
    e.q = q;
    e.scratch = (int64_t)m->nchunks * q;
    e.term = cs_calloc((size_t)m->ntbs + 1, sizeof *e.term);
    e.nterm = cs_calloc((size_t)m->ntbs + 1, sizeof *e.nterm);
    e.capterm = cs_calloc((size_t)m->ntbs + 1, sizeof *e.capterm);
    e.chq = cs_calloc((size_t)m->nchans + 1, sizeof *e.chq);
    e.nchq = cs_calloc((size_t)m->nchans + 1, sizeof *e.nchq);
    e.chtaken = cs_calloc((size_t)m->nchans + 1, sizeof *e.chtaken);
    {
        /* each channel's queue holds at most its signals */
        int32_t *n = cs_calloc((size_t)m->nchans + 1, sizeof *n);
        for (int32_t o = 0; o < m->nops; o++)
            if (m->ops[o].kind != OP_WAIT)
                for (int32_t x = m->ops[o].ch; x < m->ops[o].ch + m->ops[o].nch; x++)
                    n[m->opch[x]]++;
        for (int32_t c = 0; c < m->nchans; c++)
            e.chq[c] = cs_malloc(((size_t)n[c] + 1) * sizeof **e.chq);
        free(n);
    }
    for (int32_t i = 0; i < m->nops; i++)
        emit_op(&e, m->order[i]);
    for (int32_t t = 0; t < m->ntbs; t++)
        free(e.term[t]);
    for (int32_t c = 0; c < m->nchans; c++)
        free(e.chq[c]);
    free(e.term);
    free(e.nterm);
    free(e.capterm);
    free(e.chq);
    free(e.nchq);
    free(e.chtaken);
    free(e.cur);
    return CS_OK;
}
