/*
 * msccl_write.c - a program of the suite written as MSCCL XML (msccl_write.h,
 * docs/msccl.md "Export").
 *
 * The writer is the reader (msccl.c) run backwards, so the round trip is
 * exact: every construct is written as the one the reader turns into the
 * op pattern found in the program.
 *
 *   program ops                                    step (reader emits)
 *   send to B                                      s    send
 *   recv from A (copy)                             r    recv
 *   recv from A (reduce) + calc(0, len) after it   rrc  recv, calc (src = dst)
 *   recv (copy) + send of the same range after it  rcs  recv, send
 *   recv (reduce) + calc + send after the calc     rrs  recv, calc, send
 *   send to itself + its recv (copy / reduce)      cpy / re
 *
 * Thread blocks.  The reader runs a tb's steps one after the other, each
 * after the previous one has completed, and pairs the k-th tb of A sending
 * to B on channel c with the k-th tb of B receiving from A on c.  So the
 * messages from A to B are cut into *streams* in which each message's send
 * waits (transitively, in the program) for the previous one's send, and its
 * recv for the previous one's recv; stream k of A->B is one tb on A
 * (send=B) and one on B (recv=A), both on channel k, unique per pair and so
 * paired by the reader without ambiguity.  Local copies go to tbs of their
 * own.  A step placed after another in its tb waits for it: placement is
 * allowed only where the program already implies that wait.
 *
 * Dependencies.  What a step waits for in the program (the preds of its
 * first ops) is a set of other steps.  Those its tb's order implies are
 * dropped, so are those another one implies; one is the step's depid/deps,
 * each further one a nop before it in the same tb (a nop ends when what it
 * waits for has ended, so the waits add up).  The reader then gives the
 * step's first ops dependencies whose transitive closure is the program's:
 * the same partial order, hence the same times (redundant edges never
 * delay an op).  Ancestry is a bit matrix per rank (ops^2/8 bytes).
 *
 * Buffers.  i_chunks / o_chunks follow the MSCCL convention of each
 * collective (allgather's input is the GPU's own block, reduce-scatter's
 * output); the reader maps both onto collsim's one buffer, so the choice
 * is for the executor.  allreduce, broadcast and reduce use i alone (o_chunks
 * 0, as msccl-tools writes an in-place vector); the other in-place
 * collectives read from i and write to o where the range lies in them
 * (one memory); alltoall is out of place:
 * reads come from o once the range was written there, else from i.
 * Offsets past the buffer are scratch (s).
 */
#include "io/msccl_write.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "topo/xmlread.h"

/* The ancestry matrices of a program larger than this are refused. */
#define WRITE_MAX_ANC_BYTES ((int64_t)1 << 30)

typedef enum { W_S, W_R, W_RRC, W_RCS, W_RRS, W_CPY, W_RE, W_NTYPES } wtype_t;
static const char *const wtype_names[W_NTYPES] = {"s", "r", "rrc", "rcs", "rrs", "cpy", "re"};
enum { BUF_I, BUF_O, BUF_S };
static const char *const wbuf_names[] = {"i", "o", "s"};

typedef struct wstep {
    uint8_t type, sbuf, dbuf, hasdep;
    int32_t rank;
    int32_t ent[2], nent;   /* the ops that wait for what the step waits for */
    int32_t term[2], nterm; /* the ops whose completion ends the step */
    int32_t send, recv;     /* its message ops to / from another rank, or -1 */
    int32_t sstream, rstream; /* the streams of those messages */
    int32_t soff, doff, cnt; /* chunks */
    int32_t tb, idx;        /* its tb and its index there */
    int32_t depid, deps;
} wstep_t;

typedef struct witem {
    int32_t step;           /* -1: a nop */
    int32_t depid, deps;
    uint8_t hasdep;
} witem_t;

typedef struct wtb {
    int32_t rank, id, send, recv, chan;
    int32_t last;           /* its last real step, or -1 */
    witem_t *items;
    int32_t n, cap;
} wtb_t;

typedef struct wstream {
    int32_t from, to, chan;        /* chan: its index among the pair's streams */
    int32_t last_send, last_rstep; /* its last message */
    int32_t tb_send, tb_recv;      /* -1 until made */
} wstream_t;

typedef struct w {
    const cs_program_t *p;
    const cs_coll_args_t *a;
    const char *name;
    cs_error_t *err;
    int P;
    int32_t nops;
    int32_t *match;  /* send <-> recv, -1 */
    int32_t *owner;  /* op -> step */
    int32_t *lid;    /* op -> index among its rank's ops */
    int32_t *nr;     /* ops per rank */
    uint64_t **anc;  /* per rank: row lid -> bits of its strict ancestors */
    int32_t *words;  /* per rank: words per row */
    wstep_t *steps;
    int32_t nsteps;
    wtb_t *tbs;
    int32_t ntbs, cap_tbs;
    int32_t *ntb_rank; /* tbs made per rank (the next id) */
    wstream_t *streams;
    int32_t nstreams, nchannels;
    /* chunks */
    int64_t N, q, C;
    int32_t cin, cout; /* i_chunks, o_chunks */
    int32_t *s_chunks; /* per rank */
    uint8_t **written; /* per rank, alltoall: chunks written so far */
    int inplace;
} w_t;

static int refuse(w_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(w_t *w, const char *fmt, ...)
{
    char msg[CS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cs_error_set(w->err, CS_ERR_RANGE, "%s cannot be written as MSCCL XML: %s", w->name,
                        msg);
}

static const char *describe(const w_t *w, int32_t op, char *buf, size_t len)
{
    char d[160];
    cs_program_describe(w->p, op, d, sizeof d);
    snprintf(buf, len, "rank %d op %d (%s)", cs_program_op(w->p, op)->rank, op, d);
    return buf;
}

/* ---- ancestry ------------------------------------------------------------------ */

/* Is x a strict ancestor of op (same rank)? */
static int anc_has(const w_t *w, int32_t op, int32_t x)
{
    int r = cs_program_op(w->p, op)->rank;
    const uint64_t *row = w->anc[r] + (int64_t)w->lid[op] * w->words[r];
    int32_t b = w->lid[x];
    return (int)((row[b >> 6] >> (b & 63)) & 1u);
}

/* x is op or an ancestor of it. */
static int anc_star(const w_t *w, int32_t op, int32_t x) { return op == x || anc_has(w, op, x); }

static int build_ancestry(w_t *w)
{
    int64_t total = 0;
    w->lid = cs_malloc((size_t)w->nops * sizeof *w->lid + 1);
    w->nr = cs_calloc((size_t)w->P, sizeof *w->nr);
    w->words = cs_calloc((size_t)w->P, sizeof *w->words);
    w->anc = cs_calloc((size_t)w->P, sizeof *w->anc);
    for (int32_t i = 0; i < w->nops; i++)
        w->lid[i] = w->nr[cs_program_op(w->p, i)->rank]++;
    for (int r = 0; r < w->P; r++) {
        w->words[r] = (w->nr[r] + 63) / 64;
        total += (int64_t)w->nr[r] * w->words[r] * 8;
    }
    if (total > WRITE_MAX_ANC_BYTES)
        return cs_error_set(w->err, CS_ERR_NOMEM, "%s cannot be written as MSCCL XML: %" PRId32
                            " ops need %lld MiB of ancestry tables, more than the writer's "
                            "1 GiB (use fewer segments: a larger seg= or a smaller --bytes)",
                            w->name, w->nops, (long long)(total >> 20));
    for (int r = 0; r < w->P; r++)
        w->anc[r] = cs_calloc((size_t)w->nr[r] * w->words[r] + 1, sizeof **w->anc);
    for (int32_t i = 0; i < w->nops; i++) { /* the kinds first: the reason to name */
        int n;
        const cs_dep_t *d = cs_program_preds(w->p, i, &n);
        for (int k = 0; k < n; k++)
            if (cs_dep_kind(d[k]) != CS_DEP_AFTER) {
                char a[200], b[200];
                return refuse(w, "%s waits for %s to %s; the format's steps wait only for "
                              "other steps to complete", describe(w, i, a, sizeof a),
                              describe(w, cs_dep_op(d[k]), b, sizeof b),
                              cs_dep_kind(d[k]) == CS_DEP_STREAM ? "stream (a pipelined "
                              "dependency)" : "start (an after-start dependency)");
            }
    }
    for (int32_t i = 0; i < w->nops; i++) {
        int r = cs_program_op(w->p, i)->rank, n;
        uint64_t *row = w->anc[r] + (int64_t)w->lid[i] * w->words[r];
        const cs_dep_t *d = cs_program_preds(w->p, i, &n);
        for (int k = 0; k < n; k++) {
            int32_t x = cs_dep_op(d[k]);
            char a[200], b[200];
            /* the suite's builders add ops after what they wait for, but
             * an after-start pair may point forward */
            if (x >= i)
                return refuse(w, "%s waits for the later %s; the writer needs every op after "
                              "what it waits for", describe(w, i, a, sizeof a),
                              describe(w, x, b, sizeof b));
            const uint64_t *xr = w->anc[r] + (int64_t)w->lid[x] * w->words[r];
            for (int32_t k2 = 0; k2 < w->words[r]; k2++)
                row[k2] |= xr[k2];
            row[w->lid[x] >> 6] |= (uint64_t)1 << (w->lid[x] & 63);
        }
    }
    return CS_OK;
}

/* ---- messages -------------------------------------------------------------------- */

/* Orders messages by (source, destination, tag): a send by its own rank
 * and peer, a recv by its peer and own rank. */
static int key_cmp(const cs_program_t *p, int32_t x, int32_t y)
{
    const cs_op_t *a = cs_program_op(p, x), *b = cs_program_op(p, y);
    int32_t as = a->kind == CS_OP_SEND ? a->rank : a->peer;
    int32_t ad = a->kind == CS_OP_SEND ? a->peer : a->rank;
    int32_t bs = b->kind == CS_OP_SEND ? b->rank : b->peer;
    int32_t bd = b->kind == CS_OP_SEND ? b->peer : b->rank;
    if (as != bs)
        return as < bs ? -1 : 1;
    if (ad != bd)
        return ad < bd ? -1 : 1;
    if (a->tag != b->tag)
        return a->tag < b->tag ? -1 : 1;
    return 0;
}

static const cs_program_t *sort_p; /* for qsort, which takes no context */
static int msg_cmp(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    int c = key_cmp(sort_p, a, b);
    return c ? c : (a > b) - (a < b);
}

/* Pairs every send with the recv that takes it (per source, destination
 * and tag, in posting order, as the executor matches); checks each op is
 * one the format can say. */
static int match_messages(w_t *w)
{
    int32_t *s = cs_malloc((size_t)w->nops * sizeof *s + 1), ns = 0;
    int32_t *r = cs_malloc((size_t)w->nops * sizeof *r + 1), nrv = 0;
    char a[200];
    int rc = CS_OK;
    w->match = cs_malloc((size_t)w->nops * sizeof *w->match + 1);
    for (int32_t i = 0; i < w->nops && !rc; i++) {
        const cs_op_t *op = cs_program_op(w->p, i);
        const cs_data_t *d = cs_program_data(w->p, i);
        w->match[i] = -1;
        if (op->kind == CS_OP_MCAST)
            rc = refuse(w, "%s is a multicast; an MSCCL step sends to one peer",
                        describe(w, i, a, sizeof a));
        else if (op->kind == CS_OP_CALC)
            continue;
        else if (op->peer == CS_ANY || op->tag == CS_ANY)
            rc = refuse(w, "%s receives from any rank or tag; MSCCL messages go between fixed "
                        "thread blocks", describe(w, i, a, sizeof a));
        else if (op->bytes == 0)
            rc = refuse(w, "%s is a message of 0 bytes (a token); an MSCCL step moves at least "
                        "one chunk", describe(w, i, a, sizeof a));
        else if (!d)
            rc = refuse(w, "%s carries no data descriptor (the program was built without "
                        "them); the writer needs the buffer range of every message",
                        describe(w, i, a, sizeof a));
        else if (d->len != op->bytes)
            rc = refuse(w, "%s carries %lld bytes of data in a message of %lld bytes",
                        describe(w, i, a, sizeof a), (long long)d->len, (long long)op->bytes);
        else if (op->kind == CS_OP_SEND && d->mode != CS_DATA_COPY)
            rc = refuse(w, "%s sends with a reducing data descriptor",
                        describe(w, i, a, sizeof a));
        else if (op->kind == CS_OP_SEND)
            s[ns++] = i;
        else
            r[nrv++] = i;
    }
    if (rc)
        goto out;
    sort_p = w->p;
    qsort(s, (size_t)ns, sizeof *s, msg_cmp);
    qsort(r, (size_t)nrv, sizeof *r, msg_cmp);
    sort_p = NULL;
    for (int32_t i = 0, j = 0; i < ns || j < nrv;) {
        if (i < ns && j < nrv) {
            /* same (src, dst, tag)?  compare with the ids made equal */
            if (!key_cmp(w->p, s[i], r[j])) {
                const cs_data_t *dx = cs_program_data(w->p, s[i]), *dy = cs_program_data(w->p, r[j]);
                if (dx->len != dy->len) {
                    char b[200];
                    rc = refuse(w, "%s is received by %s of another size",
                                describe(w, s[i], a, sizeof a), describe(w, r[j], b, sizeof b));
                    goto out;
                }
                w->match[s[i]] = r[j];
                w->match[r[j]] = s[i];
                i++, j++;
                continue;
            }
        }
        /* an unmatched op: the program would not finish */
        int32_t o = i < ns && (j >= nrv || key_cmp(w->p, s[i], r[j]) < 0) ? s[i++] : r[j++];
        rc = cs_error_set(w->err, CS_ERR_RANGE, "%s cannot be written as MSCCL XML: %s has no "
                          "matching %s", w->name, describe(w, o, a, sizeof a),
                          cs_program_op(w->p, o)->kind == CS_OP_SEND ? "recv" : "send");
        goto out;
    }
out:
    free(s);
    free(r);
    return rc;
}

/* ---- steps -------------------------------------------------------------------------- */

/* The calc that reduces what recv r received (cs_coll_recv_reduce: a calc of
 * the message's bytes right after it, waiting for it alone), or -1 after
 * refusing. */
static int32_t reduction_of(w_t *w, int32_t r)
{
    int n, nc;
    const cs_dep_t *s = cs_program_succs(w->p, r, &n);
    char a[200];
    /* the calc: the earliest successor (cs_coll_recv_reduce makes it next) */
    int32_t c = -1;
    for (int k = 0; k < n; k++)
        if (c < 0 || cs_dep_op(s[k]) < c)
            c = cs_dep_op(s[k]);
    if (c >= 0) {
        const cs_op_t *op = cs_program_op(w->p, c);
        const cs_dep_t *pd = cs_program_preds(w->p, c, &nc);
        int alone = 1; /* what else it waits for, the recv waited for already */
        for (int k = 0; k < nc && alone; k++)
            alone = anc_star(w, r, cs_dep_op(pd[k]));
        /* whatever else waits for the recv waits for the calc too (a
         * redundant edge of a wait) */
        for (int k = 0; k < n && alone; k++)
            alone = anc_star(w, cs_dep_op(s[k]), c);
        if (op->kind == CS_OP_CALC && op->ticks == 0 &&
            op->bytes == cs_program_op(w->p, r)->bytes && alone)
            return c;
    }
    refuse(w, "%s receives data to reduce, but is not followed by its reduction alone (a calc "
              "of its bytes that only it is waited for by, which is what an rrc step is)",
           describe(w, r, a, sizeof a));
    return -1;
}

static wstep_t *new_step(w_t *w, int type, int rank)
{
    wstep_t *s = &w->steps[w->nsteps];
    memset(s, 0, sizeof *s);
    s->type = (uint8_t)type;
    s->rank = rank;
    s->send = s->recv = s->sstream = s->rstream = s->tb = -1;
    s->depid = s->deps = -1;
    return s;
}

static void own(w_t *w, int32_t op) { w->owner[op] = w->nsteps; }

/* Cuts the program into steps, in the order of their first ops. */
static int make_steps(w_t *w)
{
    char a[200], b[200];
    w->owner = cs_malloc((size_t)w->nops * sizeof *w->owner + 1);
    w->steps = cs_malloc((size_t)w->nops * sizeof *w->steps + 1);
    for (int32_t i = 0; i < w->nops; i++)
        w->owner[i] = -1;
    for (int32_t i = 0; i < w->nops; i++) {
        const cs_op_t *op = cs_program_op(w->p, i);
        if (w->owner[i] >= 0)
            continue;
        if (op->kind == CS_OP_CALC)
            return refuse(w, "%s is a computation the format has no word for (only the "
                          "reduction of a received message is: rrc, rrs, re)",
                          describe(w, i, a, sizeof a));
        int32_t m = w->match[i];
        wstep_t *s;
        if (op->peer == op->rank) { /* a local copy: its send and recv are one step */
            int32_t so = op->kind == CS_OP_SEND ? i : m, ro = op->kind == CS_OP_SEND ? m : i;
            int reduce = cs_program_data(w->p, ro)->mode == CS_DATA_REDUCE;
            int32_t c = reduce ? reduction_of(w, ro) : ro;
            int r = op->rank;
            if (c < 0)
                return CS_ERR_RANGE;
            /* the reader starts both after the same steps */
            if (memcmp(w->anc[r] + (int64_t)w->lid[so] * w->words[r],
                       w->anc[r] + (int64_t)w->lid[ro] * w->words[r],
                       (size_t)w->words[r] * sizeof(uint64_t)))
                return refuse(w, "the local copy %s -> %s: its two sides wait for different "
                              "ops; a cpy step starts both at once", describe(w, so, a, sizeof a),
                              describe(w, ro, b, sizeof b));
            s = new_step(w, reduce ? W_RE : W_CPY, r);
            s->ent[0] = so, s->ent[1] = ro, s->nent = 2;
            s->term[0] = so, s->term[1] = c, s->nterm = 2;
            own(w, so), own(w, ro), own(w, c);
        } else if (op->kind == CS_OP_SEND) {
            s = new_step(w, W_S, op->rank);
            s->ent[0] = s->term[0] = s->send = i;
            s->nent = s->nterm = 1;
            own(w, i);
        } else {
            int reduce = cs_program_data(w->p, i)->mode == CS_DATA_REDUCE;
            int32_t c = reduce ? reduction_of(w, i) : i;
            if (c < 0)
                return CS_ERR_RANGE;
            s = new_step(w, reduce ? W_RRC : W_R, op->rank);
            s->ent[0] = s->recv = i;
            s->term[0] = c;
            s->nent = s->nterm = 1;
            own(w, i), own(w, c);
        }
        w->nsteps++;
    }
    return CS_OK;
}

/* Every op that ends step t is an ancestor of op x (or x itself). */
static int step_before(const w_t *w, int32_t t, int32_t x)
{
    const wstep_t *s = &w->steps[t];
    for (int32_t k = 0; k < s->nterm; k++)
        if (!anc_star(w, x, s->term[k]))
            return 0;
    return 1;
}

/* Every op that ends step t is implied by (an ancestor of, or one of) the
 * ops that end step u. */
static int step_implies(const w_t *w, int32_t u, int32_t t)
{
    const wstep_t *su = &w->steps[u], *st = &w->steps[t];
    for (int32_t k = 0; k < st->nterm; k++) {
        int ok = 0;
        for (int32_t j = 0; j < su->nterm && !ok; j++)
            ok = anc_star(w, su->term[j], st->term[k]);
        if (!ok)
            return 0;
    }
    return 1;
}

/* ---- streams ------------------------------------------------------------------------ */

static const w_t *sort_w;
static int stream_cmp(const void *x, const void *y)
{
    const w_t *w = sort_w;
    const wstep_t *a = &w->steps[*(const int32_t *)x], *b = &w->steps[*(const int32_t *)y];
    int32_t ap = cs_program_op(w->p, a->send)->peer, bp = cs_program_op(w->p, b->send)->peer;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (ap != bp)
        return ap < bp ? -1 : 1;
    return (a->send > b->send) - (a->send < b->send);
}

/* Cuts the messages of each pair A->B into streams: a message joins a
 * stream whose last send it waits for and whose last recv step its recv
 * waits for (the latest such), else starts one. */
static void make_streams(w_t *w)
{
    int32_t *ms = cs_malloc((size_t)w->nsteps * sizeof *ms + 1), n = 0;
    for (int32_t i = 0; i < w->nsteps; i++)
        if (w->steps[i].send >= 0)
            ms[n++] = i;
    sort_w = w;
    qsort(ms, (size_t)n, sizeof *ms, stream_cmp);
    sort_w = NULL;
    w->streams = cs_malloc((size_t)n * sizeof *w->streams + 1);
    for (int32_t i = 0, first = 0; i < n; i++) {
        wstep_t *s = &w->steps[ms[i]];
        int32_t to = cs_program_op(w->p, s->send)->peer, recv = w->match[s->send];
        int32_t rstep = w->owner[recv], best = -1;
        if (i == 0 || s->rank != w->steps[ms[i - 1]].rank ||
            to != cs_program_op(w->p, w->steps[ms[i - 1]].send)->peer)
            first = w->nstreams; /* a new pair */
        for (int32_t k = first; k < w->nstreams; k++) {
            const wstream_t *st = &w->streams[k];
            if (anc_has(w, s->send, st->last_send) && step_before(w, st->last_rstep, recv) &&
                (best < 0 || st->last_send > w->streams[best].last_send))
                best = k;
        }
        if (best < 0) {
            best = w->nstreams++;
            w->streams[best] = (wstream_t){s->rank, to, best - first, -1, -1, -1, -1};
            if (best - first + 1 > w->nchannels)
                w->nchannels = best - first + 1;
        }
        w->streams[best].last_send = s->send;
        w->streams[best].last_rstep = rstep;
        s->sstream = best;
        w->steps[rstep].rstream = best;
    }
    free(ms);
}

/* ---- chunks and buffers ------------------------------------------------------------- */

static int is_block(cs_coll_kind_t k)
{
    return k == CS_COLL_ALLGATHER || k == CS_COLL_REDUCE_SCATTER || k == CS_COLL_GATHER ||
           k == CS_COLL_SCATTER || k == CS_COLL_ALLTOALL;
}

/* The chunk q and count C with which the reader (msccl.c, chunk_bytes)
 * cuts the buffer so that every message's offset and size is a whole
 * number of chunks: a vector of N bytes in C chunks of N/C (C divides N,
 * so no chunk is short), a block collective with C/P chunks per block. */
static int choose_chunks(w_t *w, int64_t forced)
{
    const cs_coll_args_t *a = w->a;
    int block = is_block(a->kind);
    int64_t N = cs_coll_buffer_bytes(a->kind, a->P, a->bytes), m = block ? a->bytes : N, g = m;
    char d[200];
    if (N <= 0 || m <= 0)
        return refuse(w, "a collective of %lld bytes moves nothing", (long long)a->bytes);
    for (int32_t i = 0; i < w->nops; i++) {
        const cs_data_t *x = cs_program_data(w->p, i);
        if (!x || cs_program_op(w->p, i)->kind == CS_OP_CALC)
            continue;
        if (x->off < N && x->off + x->len > N)
            return refuse(w, "%s's range [%lld, %lld) runs from the buffer (%lld bytes) into "
                          "scratch space; a step reads or writes one buffer",
                          describe(w, i, d, sizeof d), (long long)x->off,
                          (long long)(x->off + x->len), (long long)N);
        g = (int64_t)cs_gcd_u64((uint64_t)g, cs_gcd_u64((uint64_t)x->off, (uint64_t)x->len));
    }
    w->N = N;
    if (forced > 0) {
        int64_t per = block ? (forced % a->P ? 0 : forced / a->P) : forced;
        if (!per || m % per || g % (m / per))
            return cs_error_set(w->err, CS_ERR_RANGE, "%s: --chunks %lld does not cut every "
                                "message into whole chunks: %s%lld bytes %s, and every message's "
                                "offset and size are multiples of %lld bytes (the smallest count "
                                "that works is %lld)", w->name, (long long)forced,
                                block ? "each rank's block of " : "the buffer of ", (long long)m,
                                block ? "is cut into chunks/ranks equal chunks" :
                                "is cut into equal chunks", (long long)g,
                                (long long)(block ? a->P * (m / g) : m / g));
        w->C = forced;
    } else {
        w->C = block ? a->P * (m / g) : m / g;
    }
    if (w->C > CS_MSCCL_WRITE_MAX_CHUNKS)
        return cs_error_set(w->err, CS_ERR_RANGE, "%s cannot be written as MSCCL XML: whole "
                            "chunks need %lld chunks per loop (the messages' offsets and sizes "
                            "have only %lld bytes in common), more than %d; a size whose pieces "
                            "are multiples of a larger power of two (--bytes a multiple of "
                            "%d x 4096) needs fewer", w->name, (long long)w->C, (long long)g,
                            CS_MSCCL_WRITE_MAX_CHUNKS, a->P);
    w->q = block ? m / (w->C / a->P) : N / w->C;
    w->cin = w->cout = (int32_t)w->C;
    if (!block) /* in place on one vector: msccl-tools writes it as i alone */
        w->cout = 0;
    if (a->kind == CS_COLL_ALLGATHER || a->kind == CS_COLL_GATHER)
        w->cin = (int32_t)(w->C / a->P); /* MSCCL's input: the GPU's own block */
    if (a->kind == CS_COLL_REDUCE_SCATTER || a->kind == CS_COLL_SCATTER)
        w->cout = (int32_t)(w->C / a->P);
    w->inplace = a->kind != CS_COLL_ALLTOALL;
    w->s_chunks = cs_calloc((size_t)a->P, sizeof *w->s_chunks);
    w->written = cs_calloc((size_t)a->P, sizeof *w->written);
    if (!w->inplace)
        for (int r = 0; r < a->P; r++)
            w->written[r] = cs_calloc((size_t)w->C, 1);
    return CS_OK;
}

/* Where [off, off+len) of rank's buffer lies in MSCCL's buffers (see the
 * head of this file), for a read or a write. */
static void locate(w_t *w, int rank, const cs_data_t *d, int write, uint8_t *buf, int32_t *coff)
{
    int64_t c = d->off / w->q, n = d->len / w->q;
    if (c >= w->C) {
        *buf = BUF_S;
        *coff = (int32_t)(c - w->C);
        if (c - w->C + n > w->s_chunks[rank])
            w->s_chunks[rank] = (int32_t)(c - w->C + n);
        return;
    }
    if (!w->inplace) { /* out of place: a range written before is read from o */
        int any = write;
        for (int64_t k = c; k < c + n && !any; k++)
            any = w->written[rank][k];
        if (write)
            memset(w->written[rank] + c, 1, (size_t)n);
        *buf = any ? BUF_O : BUF_I;
        *coff = (int32_t)c;
        return;
    }
    int64_t ilo = w->cin == w->C ? 0 : (int64_t)rank * w->cin;
    int64_t olo = w->cout == w->C ? 0 : (int64_t)rank * w->cout;
    int in_i = c >= ilo && c + n <= ilo + w->cin, in_o = c >= olo && c + n <= olo + w->cout;
    /* one of the two is the whole buffer, so one of them holds the range
     * (o_chunks 0: i, the whole buffer) */
    if ((write && in_o) || !in_i) {
        *buf = BUF_O;
        *coff = (int32_t)(c - olo);
    } else {
        *buf = BUF_I;
        *coff = (int32_t)(c - ilo);
    }
}

/* ---- thread blocks ------------------------------------------------------------------ */

static int32_t new_tb(w_t *w, int rank, int send, int recv, int chan)
{
    if (w->ntbs == w->cap_tbs) {
        w->cap_tbs = w->cap_tbs ? 2 * w->cap_tbs : 64;
        w->tbs = cs_realloc(w->tbs, (size_t)w->cap_tbs * sizeof *w->tbs);
    }
    wtb_t *t = &w->tbs[w->ntbs];
    memset(t, 0, sizeof *t);
    t->rank = rank;
    t->id = w->ntb_rank[rank]++;
    t->send = send;
    t->recv = recv;
    t->chan = chan;
    t->last = -1;
    return w->ntbs++;
}

static void push_item(wtb_t *t, witem_t it)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->items = cs_realloc(t->items, (size_t)t->cap * sizeof *t->items);
    }
    t->items[t->n++] = it;
}

/* The steps step x waits for in the program, minus those its tb's order
 * or another of them implies, into tg (returns their number); or -1 after
 * refusing a wait that names only part of a step. */
static int32_t waits_of(w_t *w, int32_t x, int32_t prev, int32_t *tg)
{
    const wstep_t *s = &w->steps[x];
    int32_t nt = 0, kept = 0;
    char a[200], b[200], c[200];
    for (int32_t e = 0; e < s->nent; e++) {
        int n;
        const cs_dep_t *d = cs_program_preds(w->p, s->ent[e], &n);
        for (int k = 0; k < n; k++) {
            int32_t y = cs_dep_op(d[k]), t = w->owner[y], dup = 0;
            if (t == x)
                continue;
            for (int32_t j = 0; j < nt && !dup; j++)
                dup = tg[j] == t;
            if (dup)
                continue;
            const wstep_t *ts = &w->steps[t];
            for (int32_t j = 0; j < ts->nterm; j++)
                if (!anc_star(w, s->ent[e], ts->term[j])) {
                    refuse(w, "%s waits for %s but not for %s, which ends the same MSCCL step "
                           "(%s); a step can wait only for a whole step",
                           describe(w, s->ent[e], a, sizeof a), describe(w, y, b, sizeof b),
                           describe(w, ts->term[j], c, sizeof c), wtype_names[ts->type]);
                    return -1;
                }
            tg[nt++] = t;
        }
    }
    /* latest first: a later step is never implied by an earlier one */
    for (int32_t i = 1; i < nt; i++)
        for (int32_t j = i; j > 0 && tg[j] > tg[j - 1]; j--) {
            int32_t t = tg[j];
            tg[j] = tg[j - 1];
            tg[j - 1] = t;
        }
    for (int32_t i = 0; i < nt; i++) {
        int implied = prev >= 0 && step_implies(w, prev, tg[i]);
        for (int32_t j = 0; j < kept && !implied; j++)
            implied = step_implies(w, tg[j], tg[i]);
        if (!implied)
            tg[kept++] = tg[i];
    }
    return kept;
}

/* Places every step in its tb, after the nops that carry its waits beyond
 * one, and finds its buffers. */
static int place_steps(w_t *w)
{
    int32_t *tg = cs_malloc((size_t)w->nsteps * sizeof *tg + 1);
    int rc = CS_OK;
    w->ntb_rank = cs_calloc((size_t)w->P, sizeof *w->ntb_rank);
    for (int32_t x = 0; x < w->nsteps && !rc; x++) {
        wstep_t *s = &w->steps[x];
        int32_t tb = -1, nt;
        if (s->sstream >= 0) {
            wstream_t *st = &w->streams[s->sstream];
            if (st->tb_send < 0)
                st->tb_send = new_tb(w, s->rank, st->to, -1, st->chan);
            tb = st->tb_send;
        } else if (s->rstream >= 0) {
            wstream_t *st = &w->streams[s->rstream];
            if (st->tb_recv < 0)
                st->tb_recv = new_tb(w, s->rank, -1, st->from, st->chan);
            tb = st->tb_recv;
        } else { /* a local step: the tb of local steps it may follow, the one
                  * of a step it waits for first */
            if ((nt = waits_of(w, x, -1, tg)) < 0) {
                rc = CS_ERR_RANGE;
                break;
            }
            for (int32_t t = 0; t < w->ntbs; t++) {
                const wtb_t *u = &w->tbs[t];
                if (u->rank != s->rank || u->send >= 0 || u->recv >= 0 ||
                    !step_before(w, u->last, s->ent[0]))
                    continue;
                int waited = 0;
                for (int32_t j = 0; j < nt && !waited; j++)
                    waited = tg[j] == u->last;
                if (tb < 0 || waited)
                    tb = t;
                if (waited)
                    break;
            }
            if (tb < 0)
                tb = new_tb(w, s->rank, -1, -1, 0);
        }
        wtb_t *t = &w->tbs[tb];
        CS_ASSERT(t->last < 0 || step_before(w, t->last, s->ent[0]));
        if ((nt = waits_of(w, x, t->last, tg)) < 0) {
            rc = CS_ERR_RANGE;
            break;
        }
        for (int32_t j = 0; j < nt; j++) {
            wstep_t *d = &w->steps[tg[j]];
            d->hasdep = 1;
            if (j + 1 < nt) {
                push_item(t, (witem_t){-1, w->tbs[d->tb].id, d->idx, 0});
            } else {
                s->depid = w->tbs[d->tb].id;
                s->deps = d->idx;
            }
        }
        s->tb = tb;
        s->idx = t->n;
        push_item(t, (witem_t){x, -1, -1, 0});
        t->last = x;
        /* buffers */
        int32_t so = s->nent == 2 ? s->ent[0] : s->send, ro = s->nent == 2 ? s->ent[1] : s->recv;
        const cs_data_t *d = cs_program_data(w->p, so >= 0 ? so : ro);
        s->cnt = (int32_t)(d->len / w->q);
        if (so >= 0)
            locate(w, s->rank, cs_program_data(w->p, so), 0, &s->sbuf, &s->soff);
        if (ro >= 0)
            locate(w, s->rank, cs_program_data(w->p, ro), 1, &s->dbuf, &s->doff);
        if (s->type == W_RRC) { /* reduces in place: src is dst */
            s->sbuf = s->dbuf;
            s->soff = s->doff;
        }
    }
    free(tg);
    return rc;
}

/* ---- output ---------------------------------------------------------------------------- */

/* The program's op order as a comment the reader (msccl.c, renumber)
 * gives the ops back their ids with: for each op in id order, the number
 * of its step in document order (nops included), "SxK" for K ops of one
 * step in a row.  Ids break ties (core/program.h, "Op order"): without
 * them the reader's round-robin order may change a time. */
static void write_order(const w_t *w, FILE *f)
{
    int32_t *doc = cs_malloc((size_t)w->nsteps * sizeof *doc + 1), k = 0, col = 0;
    for (int g = 0; g < w->P; g++)
        for (int32_t t = 0; t < w->ntbs; t++)
            for (int32_t i = 0; w->tbs[t].rank == g && i < w->tbs[t].n; i++, k++)
                if (w->tbs[t].items[i].step >= 0)
                    doc[w->tbs[t].items[i].step] = k;
    fputs("  <!-- collsim order:", f);
    for (int32_t i = 0; i < w->nops;) {
        int32_t st = doc[w->owner[i]], n = 1;
        char word[32];
        while (i + n < w->nops && doc[w->owner[i + n]] == st)
            n++;
        int len = n > 1 ? snprintf(word, sizeof word, " %dx%d", st, n)
                        : snprintf(word, sizeof word, " %d", st);
        if (col + len > 90) {
            fputs("\n       ", f);
            col = 0;
        }
        fputs(word, f);
        col += len;
        i += n;
    }
    fputs(" -->\n", f);
    free(doc);
}

/* The <algo proto> of a program whose messages carry a protocol (NCCL's
 * algorithms, core/proto.h): theirs when they all share one, else NULL
 * (Simple).  The steps themselves count chunks, not bytes, so nothing else
 * changes with the protocol. */
static const char *program_proto(const cs_program_t *p)
{
    int found = CS_PROTO_NONE;
    for (int32_t i = 0; i < cs_program_nops(p); i++) {
        int k = cs_program_op(p, i)->proto;
        if (k == CS_PROTO_NONE)
            continue;
        if (found != CS_PROTO_NONE && k != found)
            return NULL;
        found = k;
    }
    return found == CS_PROTO_NONE ? NULL : cs_proto_name((cs_proto_t)found);
}

static void write_xml(const w_t *w, const cs_msccl_write_opts_t *o, FILE *f)
{
    const cs_coll_args_t *a = w->a;
    const char *proto = o->proto ? o->proto : program_proto(w->p);
    fputs("<algo name=\"", f);
    cs_netfile_xml_escaped(f, w->name);
    fprintf(f, "\" proto=\"%s\" nchannels=\"%d\" nchunksperloop=\"%lld\" ngpus=\"%d\" "
            "coll=\"%s\" inplace=\"%d\">\n", proto ? proto : "Simple",
            w->nchannels > 0 ? w->nchannels : 1, (long long)w->C, a->P,
            a->kind == CS_COLL_REDUCE_SCATTER ? "reducescatter" : cs_coll_name(a->kind),
            w->inplace);
    write_order(w, f);
    for (int g = 0; g < a->P; g++) {
        fprintf(f, "  <gpu id=\"%d\" i_chunks=\"%d\" o_chunks=\"%d\" s_chunks=\"%d\">\n", g,
                w->cin, w->cout, w->s_chunks[g]);
        for (int32_t t = 0; t < w->ntbs; t++) { /* made in id order per rank */
            const wtb_t *tb = &w->tbs[t];
            if (tb->rank != g)
                continue;
            fprintf(f, "    <tb id=\"%d\" send=\"%d\" recv=\"%d\" chan=\"%d\">\n", tb->id,
                    tb->send, tb->recv, tb->chan);
            for (int32_t i = 0; i < tb->n; i++) {
                const witem_t *it = &tb->items[i];
                if (it->step < 0) {
                    fprintf(f, "      <step s=\"%d\" type=\"nop\" srcbuf=\"i\" srcoff=\"0\" "
                            "dstbuf=\"i\" dstoff=\"0\" cnt=\"0\" depid=\"%d\" deps=\"%d\" "
                            "hasdep=\"0\"/>\n", i, it->depid, it->deps);
                    continue;
                }
                const wstep_t *s = &w->steps[it->step];
                uint8_t sb = s->sbuf, db = s->dbuf;
                int32_t so = s->soff, dof = s->doff;
                /* a message's other side, as msccl-tools writes it */
                if (s->type == W_S) {
                    const wstep_t *r = &w->steps[w->owner[w->match[s->send]]];
                    db = r->dbuf, dof = r->doff;
                } else if (s->type == W_R || s->type == W_RCS) {
                    const wstep_t *x = &w->steps[w->owner[w->match[s->recv]]];
                    sb = x->sbuf, so = x->soff;
                }
                fprintf(f, "      <step s=\"%d\" type=\"%s\" srcbuf=\"%s\" srcoff=\"%d\" "
                        "dstbuf=\"%s\" dstoff=\"%d\" cnt=\"%d\" depid=\"%d\" deps=\"%d\" "
                        "hasdep=\"%d\"/>\n", i, wtype_names[s->type], wbuf_names[sb], so,
                        wbuf_names[db], dof, s->cnt, s->depid, s->deps, s->hasdep);
            }
            fputs("    </tb>\n", f);
        }
        fputs("  </gpu>\n", f);
    }
    fputs("</algo>\n", f);
}

static int write_program(const cs_program_t *p, const cs_coll_args_t *a,
                         const cs_msccl_write_opts_t *o, FILE *f, cs_error_t *err)
{
    w_t w;
    int rc;
    memset(&w, 0, sizeof w);
    w.p = p;
    w.a = a;
    w.name = o->name ? o->name : "the algorithm";
    w.err = err;
    w.P = cs_program_nranks(p);
    w.nops = cs_program_nops(p);
    if (!cs_program_is_finalized(p) || w.P != a->P)
        return cs_error_set(err, CS_ERR_INTERNAL, "%s: the program to write must be finalized, "
                            "for the args' ranks", w.name);
    if (a->kind == CS_COLL_BARRIER)
        rc = refuse(&w, "a barrier moves no data; MSCCL has no barrier collective");
    else if (!(rc = build_ancestry(&w)) && !(rc = match_messages(&w)) &&
             !(rc = choose_chunks(&w, o->chunks)) && !(rc = make_steps(&w))) {
        make_streams(&w);
        rc = place_steps(&w);
    }
    if (!rc) {
        write_xml(&w, o, f);
        if (fflush(f) || ferror(f))
            rc = cs_error_set(err, CS_ERR_IO, "%s: writing the MSCCL XML failed", w.name);
    }
    for (int r = 0; r < w.P && w.anc; r++)
        free(w.anc[r]);
    for (int r = 0; r < w.P && w.written; r++)
        free(w.written[r]);
    for (int32_t t = 0; t < w.ntbs; t++)
        free(w.tbs[t].items);
    free(w.anc);
    free(w.written);
    free(w.lid);
    free(w.nr);
    free(w.words);
    free(w.match);
    free(w.owner);
    free(w.steps);
    free(w.tbs);
    free(w.ntb_rank);
    free(w.streams);
    free(w.s_chunks);
    return rc;
}

/* MSCCL has no join (a join is no step): the program the joins stand for
 * (core/program.h) is written, so that its waits become depid/deps as the
 * direct edges' would. */
int cs_msccl_write(const cs_program_t *p, const cs_coll_args_t *a,
                   const cs_msccl_write_opts_t *o, FILE *f, cs_error_t *err)
{
    cs_program_t *direct;
    int rc = cs_program_without_joins(p, &direct, err);
    if (rc == CS_OK)
        rc = write_program(direct ? direct : p, a, o, f, err);
    cs_program_free(direct);
    return rc;
}
