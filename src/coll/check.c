/*
 * check.c - the --validate checker of the collective suite (see check.h and
 * docs/validate.md).
 *
 * What it models: every rank owns one logical byte buffer; an algorithm's
 * sends and recvs name the byte ranges they carry (cs_data_t).  Instead of
 * tracking bytes, the checker cuts the buffer into *pieces*: the coarsest
 * partition of byte offsets in which no data descriptor of the program and
 * no block edge of the collective starts or ends inside a piece.  Whatever
 * an algorithm does, all bytes of one piece then travel together, so one
 * value per (rank, piece) is enough.  (If a copy maps pieces onto offsets
 * that are not yet boundaries, e.g. data moved by a non-aligned shift,
 * pieces are split on the fly for every rank; the value of a split piece is
 * the value of both halves.)
 *
 * A value is (sum, count): the sum modulo 2^64 of random 64-bit keys, one
 * per (rank, initial piece), and the number of contributions in it.  Copies
 * replace values, reductions add them.  At the end:
 *   - a reduction must hold the sum of every rank's key with count P: a
 *     dropped contribution lowers the count and a duplicated one raises it,
 *     always; a contribution replaced by another keeps the count but changes
 *     the sum, caught unless 64-bit keys collide (probability 2^-64);
 *   - a copy collective must hold exactly the right rank's key (count 1)
 *     for that offset, which also catches blocks put in the wrong place.
 * A barrier moves no data that matters; the checker tracks instead, per
 * rank, the set of ranks it has heard from (transitively): a message
 * carries its sender's set as of the send's start, a recv ORs it in.
 *
 * Snapshot timing.  A send reads its range when it starts (sends are eager).
 * A send that *streams* from a recv (CS_DEP_STREAM: pipelined forwarding)
 * starts before that recv has completed; it carries the data as it will be
 * once the recv has delivered, so its snapshot is deferred until every
 * recv it streams from (directly or through streaming calcs) has completed.
 *
 * Memory: P * pieces * 12 bytes of state plus the snapshots of messages in
 * flight (freed when their recv consumes them); barrier validation adds
 * P * P bits.  Limits are checked in cs_coll_check_new.
 *
 * Windowed runs (issue 34, cs_coll_check_new_gen).  The pieces come from
 * every descriptor of the program, which a window does not have before the
 * run: a first pass runs the algorithm once more, a window at a time, and
 * reads them (cs_coll_scan), so that pieces and keys, hence verdicts and
 * messages, are the whole program's.  What the whole checker reads from the
 * program's tables (an op's streaming predecessors, per recv whether it has
 * delivered and who waits for it) is kept per op in chunks (wrec_t) filled
 * as the builder adds streaming dependencies and given back with the
 * window's ops, so memory follows the window, not the program.
 */
#include "coll/check.h"
#include "coll/coll_internal.h"
#include "core/chunks.h"
#include "core/sorted.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Refuse state above this (it is allocated up front, per rank and piece). */
#define CHECK_MAX_STATE_BYTES ((int64_t)2 << 30)
/* Barrier knowledge is a P x P bit matrix: 2^15 ranks is 128 MiB. */
#define CHECK_MAX_BARRIER_RANKS 32768
/* Streaming predecessors are followed through at most this many calcs. */
#define CHECK_STREAM_DEPTH 8

typedef struct snap {
    int64_t len;      /* bytes of the range (for the length check) */
    int32_t k;        /* pieces; -1 while the capture is deferred */
    int32_t pending;  /* stream-predecessor recvs not yet completed */
    uint32_t gen;     /* bumped on every reuse, so stale waiters are ignored */
    uint8_t live;     /* handed out as a token and not yet consumed */
    int32_t next_free;
    int32_t send_op, src;
    int64_t off;
    int64_t *rel;     /* k+1 boundaries relative to off */
    uint64_t *sum;
    uint32_t *cnt;
    uint64_t *know;   /* barrier: the sender's knowledge (words entries) */
} snap_t;

/* A windowed run's record of an op: its streaming predecessor (the suite
 * gives an op at most one) and, for a recv, whether it has delivered and
 * who waits for that. */
typedef struct wrec {
    int32_t spred;      /* -1 or 0 before it has one: see nspred */
    int32_t wait_head;  /* waiters + 1 (chunks come zeroed), 0 = none */
    uint8_t nspred;     /* streaming predecessors */
    uint8_t spred_kind; /* 1 a recv with data, 2 a calc, 0 neither */
    uint8_t recv_seen;
} wrec_t;

typedef struct waiter {
    int32_t snap;
    uint32_t gen;
    int32_t next;
} waiter_t;

struct cs_coll_check {
    cs_coll_kind_t kind;
    int P, root;
    int nranks;         /* the program's: P, then the switches of an in-network
                           algorithm (coll.h, cs_coll_extra_ranks), whose
                           buffers start empty and are not checked */
    int64_t m;          /* block size (block collectives), else 0 */
    int64_t nominal;    /* nominal buffer bytes */
    uint64_t seed;
    const cs_program_t *prog;

    int64_t *bounds;    /* sorted piece boundaries; pieces = nb - 1 */
    int32_t nb;
    int64_t *ibounds;   /* initial boundaries (keys are per initial piece) */
    int32_t nib;
    uint64_t *sum;      /* [rank * np + piece] */
    uint32_t *cnt;

    int barrier;
    size_t words;       /* 64-bit words per knowledge set */
    uint64_t *know;     /* [rank * words + w] */

    snap_t *snaps;
    int32_t nsnaps, cap_snaps, free_snap;

    uint8_t *recv_seen; /* per op: recv completed (data delivered) */
    int32_t *wait_head; /* per op: waiters (deferred snapshots), or NULL */
    waiter_t *waiters;
    int32_t nwaiters, cap_waiters, free_waiter;

    /* windowed (cs_coll_check_new_gen): what recv_seen, wait_head and the
     * program's predecessor tables give a whole run, per op in chunks
     * given back with the program's (wrecs below wrel are gone) */
    int window;
    cs_chunks_t wrecs;
    int32_t wrel;

    int fail_code;      /* first error seen during the run */
    char fail_msg[CS_ERROR_MSG_MAX];
    cs_exec_observer_t obs;
};

/* ---- keys ---------------------------------------------------------------- */

/* splitmix64's finaliser (Steele, Lea, Flood 2014): a bijective mix whose
 * outputs behave like independent uniform 64-bit values. */
static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The key of rank r's data in initial piece i. */
static uint64_t key(const cs_coll_check_t *c, int r, int32_t i)
{
    return mix64(c->seed ^ mix64(((uint64_t)(uint32_t)r << 32) | (uint32_t)i));
}

/* ---- pieces -------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Index of the initial piece containing offset x (x inside the initial span). */
static int32_t initial_piece(const cs_coll_check_t *c, int64_t x)
{
    int32_t i = cs_sorted_find(c->ibounds, c->nib, x);
    if (i < 0)
        i = -i - 2; /* the boundary before x */
    if (i < 0)
        i = 0;
    if (i > c->nib - 2)
        i = c->nib - 2;
    return i;
}

static int32_t npieces(const cs_coll_check_t *c) { return c->nb - 1; }

/* Makes every xs[i] a boundary, splitting the pieces that contain them on
 * every rank (each part keeps the piece's value); offsets outside the
 * current span extend it with empty pieces.  All missing boundaries are
 * inserted in one O(P * pieces) rebuild, so a message whose pieces do not
 * line up with the destination's costs one rebuild, not one per boundary. */
static void ensure_bounds(cs_coll_check_t *c, const int64_t *xs, int32_t n)
{
    int64_t *miss = NULL, *nb;
    int32_t nmiss = 0, cap = 0, nnb, np_old = npieces(c), np_new, i, j, k;
    uint64_t *sum;
    uint32_t *cnt;
    int32_t *src;
    for (i = 0; i < n; i++) {
        if (cs_sorted_find(c->bounds, c->nb, xs[i]) >= 0)
            continue;
        if (nmiss == cap) {
            cap = cap ? cap * 2 : 8;
            miss = cs_realloc(miss, (size_t)cap * sizeof *miss);
        }
        miss[nmiss++] = xs[i];
    }
    if (!nmiss)
        return;
    qsort(miss, (size_t)nmiss, sizeof *miss, cmp_i64);
    /* merge the sorted old boundaries with the sorted new ones */
    nb = cs_malloc((size_t)(c->nb + nmiss) * sizeof *nb);
    for (i = j = nnb = 0; i < c->nb || j < nmiss;) {
        int64_t x = j >= nmiss || (i < c->nb && c->bounds[i] <= miss[j]) ? c->bounds[i++]
                                                                          : miss[j++];
        if (!nnb || nb[nnb - 1] != x)
            nb[nnb++] = x;
    }
    free(miss);
    np_new = nnb - 1;
    /* the old piece each new piece lies in, or -1 outside the old span */
    src = cs_malloc((size_t)np_new * sizeof *src);
    for (j = 0, k = 0; j < np_new; j++) {
        while (k < c->nb && c->bounds[k] <= nb[j])
            k++;
        /* now bounds[k-1] <= nb[j] < bounds[k] */
        src[j] = k >= 1 && k < c->nb ? k - 1 : -1;
    }
    sum = cs_calloc((size_t)c->nranks * (size_t)np_new, sizeof *sum);
    cnt = cs_calloc((size_t)c->nranks * (size_t)np_new, sizeof *cnt);
    for (int r = 0; r < c->nranks; r++) {
        const uint64_t *os = c->sum + (size_t)r * (size_t)np_old;
        const uint32_t *oc = c->cnt + (size_t)r * (size_t)np_old;
        uint64_t *ns = sum + (size_t)r * (size_t)np_new;
        uint32_t *nc = cnt + (size_t)r * (size_t)np_new;
        for (j = 0; j < np_new; j++)
            if (src[j] >= 0) {
                ns[j] = os[src[j]];
                nc[j] = oc[src[j]];
            }
    }
    free(src);
    free(c->sum);
    free(c->cnt);
    free(c->bounds);
    c->sum = sum;
    c->cnt = cnt;
    c->bounds = nb;
    c->nb = nnb;
}

/* Index of boundary x, creating it if needed. */
static int32_t ensure_bound(cs_coll_check_t *c, int64_t x)
{
    ensure_bounds(c, &x, 1);
    return cs_sorted_find(c->bounds, c->nb, x);
}

/* ---- snapshots ----------------------------------------------------------- */

static void fail_run(cs_coll_check_t *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail_run(cs_coll_check_t *c, int code, const char *fmt, ...)
{
    va_list ap;
    if (c->fail_code)
        return;
    c->fail_code = code;
    va_start(ap, fmt);
    vsnprintf(c->fail_msg, sizeof c->fail_msg, fmt, ap);
    va_end(ap);
}

static int32_t snap_alloc(cs_coll_check_t *c)
{
    int32_t s;
    if (c->free_snap >= 0) {
        s = c->free_snap;
        c->free_snap = c->snaps[s].next_free;
    } else {
        c->snaps = cs_grow(c->snaps, c->nsnaps, &c->cap_snaps, 256, sizeof *c->snaps);
        s = c->nsnaps++;
        memset(&c->snaps[s], 0, sizeof c->snaps[s]);
    }
    c->snaps[s].gen++;
    c->snaps[s].k = -1;
    c->snaps[s].pending = 0;
    c->snaps[s].next_free = -1;
    c->snaps[s].live = 1;
    return s;
}

static void snap_release(cs_coll_check_t *c, int32_t s)
{
    snap_t *sn = &c->snaps[s];
    free(sn->rel);
    free(sn->sum);
    free(sn->cnt);
    free(sn->know);
    sn->rel = NULL;
    sn->sum = NULL;
    sn->cnt = NULL;
    sn->know = NULL;
    sn->gen++;
    sn->live = 0;
    sn->next_free = c->free_snap;
    c->free_snap = s;
}

/* Reads the sender's range now. */
static void snap_capture(cs_coll_check_t *c, int32_t s)
{
    snap_t *sn = &c->snaps[s];
    int32_t lo, hi, np;
    if (sn->k >= 0)
        return;
    if (sn->len > 0) {
        lo = ensure_bound(c, sn->off);
        hi = ensure_bound(c, sn->off + sn->len);
    } else {
        lo = hi = 0;
    }
    np = npieces(c);
    sn = &c->snaps[s];
    sn->k = hi - lo;
    sn->rel = cs_malloc((size_t)(sn->k + 1) * sizeof *sn->rel);
    sn->sum = cs_malloc((size_t)(sn->k ? sn->k : 1) * sizeof *sn->sum);
    sn->cnt = cs_malloc((size_t)(sn->k ? sn->k : 1) * sizeof *sn->cnt);
    sn->rel[0] = 0;
    for (int32_t j = 0; j < sn->k; j++) {
        size_t at = (size_t)sn->src * (size_t)np + (size_t)(lo + j);
        sn->rel[j + 1] = c->bounds[lo + j + 1] - sn->off;
        sn->sum[j] = c->sum[at];
        sn->cnt[j] = c->cnt[at];
    }
    if (c->barrier) {
        sn->know = cs_malloc(c->words * sizeof *sn->know);
        memcpy(sn->know, c->know + (size_t)sn->src * c->words, c->words * sizeof *sn->know);
    }
}

static void add_waiter(cs_coll_check_t *c, int32_t recv_op, int32_t s)
{
    int32_t w;
    if (c->free_waiter >= 0) {
        w = c->free_waiter;
        c->free_waiter = c->waiters[w].next;
    } else {
        c->waiters = cs_grow(c->waiters, c->nwaiters, &c->cap_waiters, 256, sizeof *c->waiters);
        w = c->nwaiters++;
    }
    if (c->window) {
        wrec_t *rec = cs_chunks_ensure(&c->wrecs, recv_op);
        c->waiters[w] = (waiter_t){s, c->snaps[s].gen, rec->wait_head - 1};
        rec->wait_head = w + 1;
    } else {
        c->waiters[w] = (waiter_t){s, c->snaps[s].gen, c->wait_head[recv_op]};
        c->wait_head[recv_op] = w;
    }
    c->snaps[s].pending++;
}

/* The windowed run's defer_on_streams: the same walk over the records the
 * builder filled in (on_stream); an op the program has given back is done,
 * and so is every recv it streamed from. */
static void defer_on_streams_window(cs_coll_check_t *c, int32_t op, int32_t s, int depth)
{
    const wrec_t *rec;
    int32_t pred;
    if (op < c->wrel)
        return;
    rec = cs_chunks_ensure(&c->wrecs, op);
    if (!rec->nspred || (pred = rec->spred) < c->wrel)
        return;
    if (rec->spred_kind == 1) {
        if (!((const wrec_t *)cs_chunks_ensure(&c->wrecs, pred))->recv_seen)
            add_waiter(c, pred, s);
    } else if (rec->spred_kind == 2 && depth < CHECK_STREAM_DEPTH) {
        defer_on_streams_window(c, pred, s, depth + 1);
    }
}

/* The builder added "op streams from pred" (coll_internal.h). */
static void on_stream(void *ctx, int32_t op, int32_t pred)
{
    cs_coll_check_t *c = ctx;
    const cs_op_t *po = cs_program_op(c->prog, pred);
    wrec_t *rec = cs_chunks_ensure(&c->wrecs, op);
    if (rec->nspred++) {
        fail_run(c, CS_ERR_USAGE,
                 "validation of a windowed run follows one streaming predecessor per op, and "
                 "rank %d's op %d streams from more: run it whole (--whole)",
                 cs_program_op(c->prog, op)->rank, op);
        return;
    }
    rec->spred = pred;
    rec->spred_kind = po->kind == CS_OP_RECV && cs_program_data(c->prog, pred) ? 1
                    : po->kind == CS_OP_CALC ? 2 : 0;
}

/* Gives back the records of the ops the program gave back. */
static void window_release(cs_coll_check_t *c)
{
    int32_t rel = cs_program_released(c->prog);
    if (rel > c->wrel) {
        cs_chunks_release(&c->wrecs, rel);
        c->wrel = rel;
    }
}

/* Registers the snapshot as waiting on every incomplete recv that `op`
 * streams from, directly or through streaming ops without data (calcs). */
static void defer_on_streams(cs_coll_check_t *c, int32_t op, int32_t s, int depth)
{
    int n;
    const cs_dep_t *d = cs_program_preds(c->prog, op, &n);
    for (int i = 0; i < n; i++) {
        const cs_op_t *po;
        if (cs_dep_kind(d[i]) != CS_DEP_STREAM)
            continue;
        po = cs_program_op(c->prog, cs_dep_op(d[i]));
        if (po->kind == CS_OP_RECV) {
            if (cs_program_data(c->prog, cs_dep_op(d[i])) && !c->recv_seen[cs_dep_op(d[i])])
                add_waiter(c, cs_dep_op(d[i]), s);
        } else if (po->kind == CS_OP_CALC && depth < CHECK_STREAM_DEPTH) {
            defer_on_streams(c, cs_dep_op(d[i]), s, depth + 1);
        }
    }
}

/* ---- observer ------------------------------------------------------------ */

static uint64_t on_send_start(void *ctx, int32_t send_op, int src_rank, const cs_data_t *d)
{
    cs_coll_check_t *c = ctx;
    int32_t s = snap_alloc(c);
    snap_t *sn = &c->snaps[s];
    sn->send_op = send_op;
    sn->src = src_rank;
    sn->off = d->off;
    sn->len = d->len;
    if (c->window && c->wrecs.size) {
        window_release(c);
        defer_on_streams_window(c, send_op, s, 0);
    } else if (c->wait_head) {
        defer_on_streams(c, send_op, s, 0);
    }
    if (!c->snaps[s].pending)
        snap_capture(c, s);
    return (uint64_t)s + 1;
}

/* Writes snapshot s into [off, off+len) of rank `dst`. */
static void apply(cs_coll_check_t *c, int32_t s, int dst, int64_t off, int reduce)
{
    snap_t *sn = &c->snaps[s];
    int32_t lo, hi, j = 0, np;
    if (c->barrier) {
        uint64_t *k = c->know + (size_t)dst * c->words;
        for (size_t w = 0; w < c->words; w++)
            k[w] |= sn->know[w];
    }
    if (sn->len == 0)
        return;
    /* every snapshot boundary must be a boundary of the destination range */
    {
        int64_t small[16], *xs = sn->k < 16 ? small : cs_malloc((size_t)(sn->k + 1) * sizeof *xs);
        for (int32_t b = 0; b <= sn->k; b++)
            xs[b] = off + sn->rel[b];
        ensure_bounds(c, xs, sn->k + 1);
        if (xs != small)
            free(xs);
    }
    lo = ensure_bound(c, off);
    hi = ensure_bound(c, off + sn->len);
    np = npieces(c);
    sn = &c->snaps[s];
    for (int32_t i = lo; i < hi; i++) {
        int64_t x = c->bounds[i] - off;
        size_t at = (size_t)dst * (size_t)np + (size_t)i;
        while (j + 1 < sn->k && sn->rel[j + 1] <= x)
            j++;
        if (reduce) {
            c->sum[at] += sn->sum[j];
            c->cnt[at] += sn->cnt[j];
        } else {
            c->sum[at] = sn->sum[j];
            c->cnt[at] = sn->cnt[j];
        }
    }
}

static void on_recv_done(void *ctx, int32_t recv_op, int dst_rank, const cs_data_t *recv_d,
                         const cs_data_t *send_d, uint64_t token)
{
    cs_coll_check_t *c = ctx;
    int32_t s = (int32_t)(token - 1);
    (void)send_d;
    if (token == 0 || token > (uint64_t)c->nsnaps || !c->snaps[s].live) {
        fail_run(c, CS_ERR_INTERNAL, "validation: recv op %d on rank %d got an unknown message",
                 recv_op, dst_rank);
        return;
    }
    /* a deferred snapshot whose stream predecessors have not reported yet:
     * take it now (the forwarded bytes cannot arrive before they did) */
    if (c->snaps[s].k < 0)
        snap_capture(c, s);
    if (c->snaps[s].len != recv_d->len) {
        char rd[160], sd[160];
        cs_program_describe(c->prog, recv_op, rd, sizeof rd);
        cs_program_describe(c->prog, c->snaps[s].send_op, sd, sizeof sd);
        fail_run(c, CS_ERR_VALIDATE,
                 "rank %d: %s writes bytes [%lld, %lld) but the matching %s on rank %d carries "
                 "%lld bytes [%lld, %lld): data ranges of a send and its recv must have equal "
                 "length",
                 dst_rank, rd, (long long)recv_d->off, (long long)(recv_d->off + recv_d->len), sd,
                 c->snaps[s].src, (long long)c->snaps[s].len, (long long)c->snaps[s].off,
                 (long long)(c->snaps[s].off + c->snaps[s].len));
    } else {
        apply(c, s, dst_rank, recv_d->off, recv_d->mode == CS_DATA_REDUCE);
    }
    snap_release(c, s);

    /* this recv has delivered: sends that stream from it can read now */
    if (c->window && !c->wrecs.size)
        return; /* no op streams: nothing waits */
    if (!c->window)
        c->recv_seen[recv_op] = 1;
    if (c->window || c->wait_head) {
        int32_t w;
        if (c->window) {
            wrec_t *rec;
            window_release(c);
            rec = cs_chunks_ensure(&c->wrecs, recv_op);
            rec->recv_seen = 1;
            w = rec->wait_head - 1;
            rec->wait_head = 0;
        } else {
            w = c->wait_head[recv_op];
            c->wait_head[recv_op] = -1;
        }
        while (w >= 0) {
            waiter_t wt = c->waiters[w];
            c->waiters[w].next = c->free_waiter;
            c->free_waiter = w;
            if (c->snaps[wt.snap].gen == wt.gen && c->snaps[wt.snap].k < 0 &&
                --c->snaps[wt.snap].pending == 0)
                snap_capture(c, wt.snap);
            w = wt.next;
        }
    }
}

/* ---- set-up -------------------------------------------------------------- */

static int block_kind(cs_coll_kind_t k)
{
    return k == CS_COLL_ALLGATHER || k == CS_COLL_GATHER || k == CS_COLL_SCATTER ||
           k == CS_COLL_REDUCE_SCATTER || k == CS_COLL_ALLTOALL;
}

/* Gives rank r its own keys over [a, b) (boundaries). */
static void own_keys(cs_coll_check_t *c, int r, int64_t a, int64_t b, int keyrank)
{
    int32_t np = npieces(c);
    for (int32_t i = 0; i < np; i++) {
        if (c->bounds[i] < a || c->bounds[i + 1] > b)
            continue;
        c->sum[(size_t)r * (size_t)np + (size_t)i] = key(c, keyrank, i);
        c->cnt[(size_t)r * (size_t)np + (size_t)i] = 1;
    }
}

/* Refuses what the checker cannot hold, before anything is read. */
static int check_args(const cs_coll_args_t *a, cs_error_t *err)
{
    if (a->kind == CS_COLL_BARRIER && a->P > CHECK_MAX_BARRIER_RANKS)
        return cs_error_set(err, CS_ERR_NOMEM,
                            "barrier validation tracks which ranks every rank has heard from "
                            "(P x P bits): %d ranks exceed the limit of %d",
                            a->P, CHECK_MAX_BARRIER_RANKS);
    return CS_OK;
}

/* The candidate boundaries every program has: 0, the nominal end, block
 * edges; room for `more`. */
static int64_t *fixed_bounds(const cs_coll_args_t *a, size_t more, size_t *nv, size_t *cap)
{
    int64_t *v;
    *cap = 2 + (block_kind(a->kind) ? (size_t)a->P + 1 : 0) + more;
    v = cs_malloc(*cap * sizeof *v);
    *nv = 0;
    v[(*nv)++] = 0;
    v[(*nv)++] = cs_coll_buffer_bytes(a->kind, a->P, a->bytes);
    if (block_kind(a->kind))
        for (int i = 0; i <= a->P; i++)
            v[(*nv)++] = (int64_t)i * a->bytes;
    return v;
}

/* Refuses state above the limit for nv distinct boundaries (it is
 * allocated up front, per rank and piece). */
static int state_fits(const cs_coll_args_t *a, size_t nv, cs_error_t *err)
{
    int64_t np = nv > INT32_MAX / 2 ? INT32_MAX / 2 : (int64_t)nv - 1;
    int64_t state_bytes = (int64_t)a->P * np * (int64_t)(sizeof(uint64_t) + sizeof(uint32_t));
    if (a->kind == CS_COLL_BARRIER)
        state_bytes += (int64_t)a->P * ((a->P + 63) / 64) * 8;
    if (nv > INT32_MAX / 2 || state_bytes > CHECK_MAX_STATE_BYTES)
        return cs_error_set(err, CS_ERR_NOMEM,
                            "validation state would take %lld MiB (%d ranks x %lld pieces x 12 "
                            "bytes); the limit is %lld MiB: validate fewer ranks or fewer, larger "
                            "messages (e.g. a larger segment size)",
                            (long long)(state_bytes >> 20), a->P, (long long)np,
                            (long long)(CHECK_MAX_STATE_BYTES >> 20));
    return CS_OK;
}

/* Sorts v[0, n) and drops repeats; returns the new count. */
static size_t sort_unique(int64_t *v, size_t n)
{
    size_t u = 0;
    qsort(v, n, sizeof *v, cmp_i64);
    for (size_t i = 0; i < n; i++)
        if (!u || v[i] != v[u - 1])
            v[u++] = v[i];
    return u;
}

static int check_make(const cs_coll_args_t *a, const cs_program_t *p, uint64_t seed, int64_t *v,
                      size_t nv, int32_t nops, int stream_sends, cs_coll_check_t **out,
                      cs_error_t *err);

int cs_coll_check_new(const cs_coll_args_t *a, const cs_program_t *p, uint64_t seed,
                      cs_coll_check_t **out, cs_error_t *err)
{
    int32_t nops = cs_program_nops(p), nd = 0;
    int64_t *v;
    size_t nv = 0, cap;
    int stream_sends = 0, rc;

    *out = NULL;
    if (!cs_program_is_finalized(p))
        return cs_error_set(err, CS_ERR_INTERNAL, "validation needs a finalized program");
    if (a->P != cs_program_nranks(p) &&
        !(a->hints && a->P + a->hints->nswitches == cs_program_nranks(p)))
        return cs_error_set(err, CS_ERR_INTERNAL,
                            "validation: the collective has %d ranks but the program has %d", a->P,
                            cs_program_nranks(p));
    if ((rc = check_args(a, err)))
        return rc;

    /* candidate boundaries: 0, the nominal end, block edges, every data
     * descriptor's ends */
    for (int32_t i = 0; i < nops; i++)
        if (cs_program_data(p, i))
            nd++;
    v = fixed_bounds(a, 2 * (size_t)nd, &nv, &cap);
    for (int32_t i = 0; i < nops; i++) {
        const cs_op_t *o = cs_program_op(p, i);
        const cs_data_t *d = cs_program_data(p, i);
        int n;
        const cs_dep_t *dp;
        if (!d)
            continue;
        v[nv++] = d->off;
        v[nv++] = d->off + d->len;
        if (o->kind == CS_OP_SEND || o->kind == CS_OP_MCAST) {
            dp = cs_program_preds(p, i, &n);
            for (int j = 0; j < n; j++)
                if (cs_dep_kind(dp[j]) == CS_DEP_STREAM)
                    stream_sends = 1;
        }
    }
    return check_make(a, p, seed, v, nv, nops, stream_sends, out, err);
}

/* cs_coll_check_new_gen's first pass: every descriptor's ends.  v[0, uniq)
 * is sorted and unique, v[uniq, n) the offsets met since that are not in
 * it; merged when they are as many, so memory follows the distinct offsets,
 * not the program's length, and an offset already known costs a binary
 * search, not a place in a sort (a qsort of every batch was 12% of a
 * validated ring allreduce at P = 1,024). */
typedef struct gather {
    const cs_coll_args_t *a;
    int64_t *v;
    size_t n, cap, uniq;
    int stream_sends;
    cs_error_t err;     /* why it stopped the pass */
} gather_t;

static int gather_batch(void *ctx, const cs_program_t *p, int32_t first, int32_t end,
                         const cs_wdep_t *deps, int64_t ndeps)
{
    gather_t *g = ctx;
    int64_t last[2] = {-1, -1}; /* the last two ends met: most repeat them */
    for (int32_t i = first; i < end; i++) {
        const cs_data_t *d = cs_program_data(p, i);
        int64_t x[2];
        if (!d)
            continue;
        x[0] = d->off;
        x[1] = d->off + d->len;
        for (int k = 0; k < 2; k++) {
            if (x[k] == last[0] || x[k] == last[1] ||
                cs_sorted_find(g->v, (int32_t)g->uniq, x[k]) >= 0)
                continue;
            last[1] = last[0];
            last[0] = x[k];
            if (g->n == g->cap) {
                g->cap = g->cap * 2 + 64;
                g->v = cs_realloc(g->v, g->cap * sizeof *g->v);
            }
            g->v[g->n++] = x[k];
        }
    }
    for (int64_t k = 0; k < ndeps; k++) {
        int kind;
        if (deps[k].kind != CS_DEP_STREAM)
            continue;
        kind = cs_program_op(p, deps[k].op)->kind;
        if ((kind == CS_OP_SEND || kind == CS_OP_MCAST) && cs_program_data(p, deps[k].op))
            g->stream_sends = 1;
    }
    /* the state is refused as soon as the offsets seen so far pass its
     * limit, not after a pass over a program too long to validate */
    if (g->n - g->uniq > g->uniq + 4096) {
        g->n = g->uniq = sort_unique(g->v, g->n);
        return state_fits(g->a, g->uniq, &g->err);
    }
    return CS_OK;
}

int cs_coll_check_new_gen(const cs_coll_algo_t *algo, const cs_coll_args_t *a, cs_progen_t *gen,
                          uint64_t seed, cs_coll_check_t **out, cs_error_t *err)
{
    gather_t g;
    int rc;
    *out = NULL;
    if (a->no_data || !cs_program_is_windowed(gen->prog) || cs_program_nops(gen->prog) ||
        a->P != cs_program_nranks(gen->prog))
        return cs_error_set(err, CS_ERR_INTERNAL, "validation of a windowed run needs a new "
                            "generator of %d ranks with data descriptors", a->P);
    if ((rc = check_args(a, err)))
        return rc;
    memset(&g, 0, sizeof g);
    g.a = a;
    g.v = fixed_bounds(a, 0, &g.n, &g.cap);
    /* a block collective has P pieces at least: refused before the pass */
    g.n = g.uniq = sort_unique(g.v, g.n);
    if ((rc = state_fits(a, g.uniq, err))) {
        free(g.v);
        return rc;
    }
    if ((rc = cs_coll_scan(algo, a, gather_batch, &g, err))) {
        if (g.err.code)
            *err = g.err;
        free(g.v);
        return rc;
    }
    if ((rc = check_make(a, gen->prog, seed, g.v, g.n, 0, g.stream_sends, out, err)))
        return rc;
    (*out)->window = 1;
    if (g.stream_sends) {
        cs_chunks_init(&(*out)->wrecs, sizeof(wrec_t), 16);
        cs_coll_generate_on_stream(gen, on_stream, *out);
    }
    return CS_OK;
}

/* The checker of a program whose candidate boundaries are v[0, nv) (owned);
 * nops > 0: per-op tables for a whole program. */
static int check_make(const cs_coll_args_t *a, const cs_program_t *p, uint64_t seed, int64_t *v,
                      size_t nv, int32_t nops, int stream_sends, cs_coll_check_t **out,
                      cs_error_t *err)
{
    cs_coll_check_t *c;
    int32_t np;
    int rc;

    nv = sort_unique(v, nv);
    if (nv < 2) /* an empty buffer: keep one empty piece so the arrays exist */
        v[nv++] = 1;
    if ((rc = state_fits(a, nv, err))) {
        free(v);
        return rc;
    }
    np = (int32_t)nv - 1;

    c = cs_calloc(1, sizeof *c);
    c->kind = a->kind;
    c->P = a->P;
    c->nranks = cs_program_nranks(p);
    c->root = a->root;
    c->m = block_kind(a->kind) ? a->bytes : 0;
    c->nominal = cs_coll_buffer_bytes(a->kind, a->P, a->bytes);
    c->seed = mix64(seed);
    c->prog = p;
    c->bounds = v;
    c->nb = (int32_t)nv;
    c->ibounds = cs_malloc(nv * sizeof *c->ibounds);
    memcpy(c->ibounds, v, nv * sizeof *v);
    c->nib = (int32_t)nv;
    c->sum = cs_calloc((size_t)c->nranks * (size_t)np, sizeof *c->sum);
    c->cnt = cs_calloc((size_t)c->nranks * (size_t)np, sizeof *c->cnt);
    c->free_snap = -1;
    c->free_waiter = -1;
    if (nops)
        c->recv_seen = cs_calloc((size_t)nops, 1);
    if (stream_sends && nops) {
        c->wait_head = cs_malloc((size_t)nops * sizeof *c->wait_head);
        for (int32_t i = 0; i < nops; i++)
            c->wait_head[i] = -1;
    }
    if (a->kind == CS_COLL_BARRIER) {
        c->barrier = 1;
        c->words = ((size_t)a->P + 63) / 64;
        c->know = cs_calloc((size_t)a->P * c->words, sizeof *c->know);
        for (int r = 0; r < a->P; r++)
            c->know[(size_t)r * c->words + (size_t)r / 64] |= (uint64_t)1 << (r % 64);
    }

    /* initial placement (see docs/validate.md) */
    for (int r = 0; r < a->P; r++) {
        int64_t m = c->m;
        switch (a->kind) {
        case CS_COLL_BROADCAST:
            if (r == a->root)
                own_keys(c, r, 0, c->nominal, r);
            break;
        case CS_COLL_REDUCE: case CS_COLL_ALLREDUCE: case CS_COLL_REDUCE_SCATTER:
        case CS_COLL_ALLTOALL:
            own_keys(c, r, 0, c->nominal, r);
            break;
        case CS_COLL_ALLGATHER: case CS_COLL_GATHER:
            own_keys(c, r, (int64_t)r * m, (int64_t)(r + 1) * m, r);
            break;
        case CS_COLL_SCATTER:
            if (r == a->root)
                own_keys(c, r, 0, c->nominal, r);
            break;
        default:
            break;
        }
    }

    c->obs.ctx = c;
    c->obs.send_start = on_send_start;
    c->obs.recv_done = on_recv_done;
    *out = c;
    return CS_OK;
}

void cs_coll_check_free(cs_coll_check_t *c)
{
    if (!c)
        return;
    for (int32_t s = 0; s < c->nsnaps; s++) {
        free(c->snaps[s].rel);
        free(c->snaps[s].sum);
        free(c->snaps[s].cnt);
        free(c->snaps[s].know);
    }
    free(c->snaps);
    free(c->waiters);
    free(c->wait_head);
    free(c->recv_seen);
    cs_chunks_free(&c->wrecs);
    free(c->know);
    free(c->sum);
    free(c->cnt);
    free(c->bounds);
    free(c->ibounds);
    free(c);
}

const cs_exec_observer_t *cs_coll_check_observer(cs_coll_check_t *c) { return &c->obs; }

/* ---- verification -------------------------------------------------------- */

/* What one final piece [a, b) of rank r must hold.  kind: 0 unchecked,
 * 1 one contribution (src's data from initial piece ipiece), 2 a reduction
 * of all P ranks' keys of initial piece ipiece. */
typedef struct expect {
    int kind;
    int src;
    int32_t ipiece;
    int straddles; /* the source bytes cross an initial piece boundary */
    uint64_t sum;
    uint32_t cnt;
} expect_t;

static int in_block(const cs_coll_check_t *c, int64_t a, int j)
{
    return a >= (int64_t)j * c->m && a < (int64_t)(j + 1) * c->m;
}

static void expected(const cs_coll_check_t *c, const uint64_t *total, int r, int64_t a, int64_t b,
                     expect_t *e)
{
    int64_t sa = a, sb = b;
    memset(e, 0, sizeof *e);
    if (a >= c->nominal || b > c->nominal)
        return; /* scratch space */
    switch (c->kind) {
    case CS_COLL_BROADCAST:
        e->kind = 1;
        e->src = c->root;
        break;
    case CS_COLL_REDUCE:
        e->kind = r == c->root ? 2 : 0;
        break;
    case CS_COLL_ALLREDUCE:
        e->kind = 2;
        break;
    case CS_COLL_REDUCE_SCATTER:
        e->kind = in_block(c, a, r) ? 2 : 0;
        break;
    case CS_COLL_ALLGATHER:
        e->kind = 1;
        e->src = (int)(a / c->m);
        break;
    case CS_COLL_GATHER:
        e->kind = r == c->root ? 1 : 0;
        e->src = (int)(a / c->m);
        break;
    case CS_COLL_SCATTER:
        e->kind = in_block(c, a, r) ? 1 : 0;
        e->src = c->root;
        break;
    case CS_COLL_ALLTOALL: {
        /* block j of rank r holds what rank j had in its block r */
        int j = (int)(a / c->m);
        e->kind = 1;
        e->src = j;
        sa = a - (int64_t)j * c->m + (int64_t)r * c->m;
        sb = sa + (b - a);
        break;
    }
    default:
        return;
    }
    if (!e->kind)
        return;
    e->ipiece = initial_piece(c, sa);
    e->straddles = c->ibounds[e->ipiece + 1] < sb;
    if (e->kind == 1) {
        e->sum = key(c, e->src, e->ipiece);
        e->cnt = 1;
    } else {
        e->sum = total[e->ipiece];
        e->cnt = (uint32_t)c->P;
    }
}

/* Error class of a final value, 0 if right. */
enum { OK_VAL, E_MISSING, E_DUPLICATE, E_WRONG, E_EMPTY, E_STRADDLE };

static int classify(const expect_t *e, uint64_t sum, uint32_t cnt)
{
    if (!e->kind)
        return OK_VAL;
    if (e->straddles)
        return E_STRADDLE;
    if (cnt == 0)
        return E_EMPTY;
    if (cnt < e->cnt)
        return E_MISSING;
    if (cnt > e->cnt)
        return E_DUPLICATE;
    return sum == e->sum ? OK_VAL : E_WRONG;
}

/* Looks for the initial data a wrong single-contribution value came from.
 * Bounded: error path only, and skipped on huge instances. */
static int identify(const cs_coll_check_t *c, uint64_t sum, int *q, int32_t *piece)
{
    if ((int64_t)c->P * (c->nib - 1) > 50000000)
        return 0;
    for (int r = 0; r < c->P; r++)
        for (int32_t i = 0; i < c->nib - 1; i++)
            if (key(c, r, i) == sum) {
                *q = r;
                *piece = i;
                return 1;
            }
    return 0;
}

static void describe_source(const cs_coll_check_t *c, int q, int32_t i, char *buf, size_t len)
{
    int64_t a = c->ibounds[i], b = c->ibounds[i + 1];
    if (c->m > 0 && a < c->nominal)
        snprintf(buf, len, "rank %d's bytes [%lld, %lld) (its block %lld)", q, (long long)a,
                 (long long)b, (long long)(a / c->m));
    else
        snprintf(buf, len, "rank %d's bytes [%lld, %lld)", q, (long long)a, (long long)b);
}

static void describe_error(const cs_coll_check_t *c, const expect_t *e, int cls, uint64_t sum,
                           uint32_t cnt, char *buf, size_t len)
{
    char want[160], got[160];
    int q;
    int32_t i;
    if (e->kind == 1)
        describe_source(c, e->src, e->ipiece, want, sizeof want);
    switch (cls) {
    case E_STRADDLE:
        snprintf(buf, len, "holds one value over bytes whose sources differ (expected data of "
                           "rank %d, which is not contiguous there)",
                 e->src);
        return;
    case E_EMPTY:
        if (e->kind == 2)
            snprintf(buf, len, "holds no data where the reduction of all %d ranks belongs", c->P);
        else
            snprintf(buf, len, "holds no data where %s belong", want);
        return;
    case E_MISSING:
        if (e->kind == 2) {
            int who = -1;
            if (cnt + 1 == e->cnt)
                for (q = 0; q < c->P; q++)
                    if (sum + key(c, q, e->ipiece) == e->sum) {
                        who = q;
                        break;
                    }
            if (who >= 0)
                snprintf(buf, len,
                         "reduced value misses a contribution (count %u of %u): rank %d's",
                         cnt, e->cnt, who);
            else
                snprintf(buf, len, "reduced value misses %s (count %u of %u)",
                         e->cnt - cnt == 1 ? "a contribution" : "contributions", cnt, e->cnt);
        } else {
            snprintf(buf, len, "misses data (count %u of %u)", cnt, e->cnt);
        }
        return;
    case E_DUPLICATE:
        if (e->kind == 2) {
            int who = -1;
            if (cnt == e->cnt + 1)
                for (q = 0; q < c->P; q++)
                    if (sum - key(c, q, e->ipiece) == e->sum) {
                        who = q;
                        break;
                    }
            if (who >= 0)
                snprintf(buf, len,
                         "reduced value holds a duplicate (count %u of %u): rank %d's "
                         "contribution twice",
                         cnt, e->cnt, who);
            else
                snprintf(buf, len, "reduced value holds a duplicate (count %u of %u)", cnt,
                         e->cnt);
        } else {
            snprintf(buf, len,
                     "holds a duplicate: %u contributions reduced where only %s belong", cnt,
                     want);
        }
        return;
    default:
        if (e->kind == 2) {
            snprintf(buf, len,
                     "reduced value has the right count (%u) but wrong contributions (some "
                     "rank's data replaced by another's, or data from other offsets)",
                     cnt);
        } else if (identify(c, sum, &q, &i)) {
            describe_source(c, q, i, got, sizeof got);
            snprintf(buf, len, "holds %s where %s belong", got, want);
        } else {
            snprintf(buf, len, "holds a value that is no rank's initial data where %s belong",
                     want);
        }
        return;
    }
}

static int verify_barrier(cs_coll_check_t *c, int64_t *nwrong, cs_error_t *err)
{
    int wrong = 0, fr = -1, fq = -1, missing = 0;
    for (int r = 0; r < c->P; r++) {
        const uint64_t *k = c->know + (size_t)r * c->words;
        int miss = 0, first = -1;
        for (int q = 0; q < c->P; q++)
            if (!(k[q / 64] >> (q % 64) & 1)) {
                if (first < 0)
                    first = q;
                miss++;
            }
        if (miss) {
            if (!wrong) {
                fr = r;
                fq = first;
                missing = miss;
            }
            wrong++;
        }
    }
    *nwrong = wrong;
    if (!wrong)
        return CS_OK;
    if (wrong > 1)
        return cs_error_set(err, CS_ERR_VALIDATE,
                            "barrier: rank %d leaves without having heard (even indirectly) "
                            "from rank %d (%d rank%s unheard); %d more rank%s leave too early",
                            fr, fq, missing, missing == 1 ? "" : "s", wrong - 1,
                            wrong == 2 ? "" : "s");
    return cs_error_set(err, CS_ERR_VALIDATE,
                        "barrier: rank %d leaves without having heard (even indirectly) from "
                        "rank %d (%d rank%s unheard)",
                        fr, fq, missing, missing == 1 ? "" : "s");
}

int cs_coll_check_verify(cs_coll_check_t *c, cs_error_t *err)
{
    int64_t wrong;
    return cs_coll_check_verify_count(c, &wrong, err);
}

int cs_coll_check_verify_count(cs_coll_check_t *c, int64_t *wrong, cs_error_t *err)
{
    uint64_t *total = NULL;
    int32_t np = npieces(c);
    int64_t groups = 0;
    int have = 0, fr = 0, fcls = 0;
    int64_t fa = 0, fb = 0;
    expect_t fe;
    uint64_t fsum = 0;
    uint32_t fcnt = 0;
    char what[512];

    *wrong = -1;
    if (c->fail_code)
        return cs_error_set(err, c->fail_code, "%s", c->fail_msg);
    if (c->barrier)
        return verify_barrier(c, wrong, err);
    *wrong = 0;

    if (c->kind == CS_COLL_REDUCE || c->kind == CS_COLL_ALLREDUCE ||
        c->kind == CS_COLL_REDUCE_SCATTER) {
        total = cs_calloc((size_t)c->nib, sizeof *total);
        for (int32_t i = 0; i < c->nib - 1; i++)
            for (int q = 0; q < c->P; q++)
                total[i] += key(c, q, i);
    }
    memset(&fe, 0, sizeof fe);
    for (int r = 0; r < c->P; r++) {
        int prev = OK_VAL;
        uint32_t prev_cnt = 0;
        uint64_t prev_sum = 0;
        expect_t prev_e;
        memset(&prev_e, 0, sizeof prev_e);
        for (int32_t i = 0; i < np; i++) {
            int64_t a = c->bounds[i], b = c->bounds[i + 1];
            size_t at = (size_t)r * (size_t)np + (size_t)i;
            expect_t e;
            int cls;
            if (a == b)
                continue;
            expected(c, total, r, a, b, &e);
            cls = classify(&e, c->sum[at], c->cnt[at]);
            if (cls == OK_VAL) {
                prev = OK_VAL;
                continue;
            }
            *wrong += b - a;
            /* consecutive pieces with the same kind of error form one range;
             * wrong values only when they are the same wrong value (one
             * misplaced piece) where the same data belongs */
            if (cls == prev && c->cnt[at] == prev_cnt &&
                (cls != E_WRONG || (c->sum[at] == prev_sum && e.src == prev_e.src &&
                                    e.ipiece == prev_e.ipiece))) {
                if (have && fr == r && fb == a)
                    fb = b;
                continue;
            }
            prev = cls;
            prev_cnt = c->cnt[at];
            prev_sum = c->sum[at];
            prev_e = e;
            groups++;
            if (!have) {
                have = 1;
                fr = r;
                fa = a;
                fb = b;
                fe = e;
                fcls = cls;
                fsum = c->sum[at];
                fcnt = c->cnt[at];
            }
        }
    }
    free(total);
    if (!have)
        return CS_OK;
    describe_error(c, &fe, fcls, fsum, fcnt, what, sizeof what);
    if (groups > 1)
        return cs_error_set(err, CS_ERR_VALIDATE, "%s: rank %d bytes [%lld, %lld): %s (and %lld "
                                                  "more wrong byte range%s)",
                            cs_coll_name(c->kind), fr, (long long)fa, (long long)fb, what,
                            (long long)(groups - 1), groups == 2 ? "" : "s");
    return cs_error_set(err, CS_ERR_VALIDATE, "%s: rank %d bytes [%lld, %lld): %s",
                        cs_coll_name(c->kind), fr, (long long)fa, (long long)fb, what);
}
