/*
 * nccl_pat.c - NCCL's PAT, parallel aggregated trees, for allgather and
 * reduce-scatter in the suite (issue 36; docs/nccl.md "PAT"), as NCCL 2.30.7
 * runs it (NVIDIA/nccl, tag v2.30.7-1; read, not copied):
 * src/include/collectives.h (PatAGAlgorithm, PatRSAlgorithm: the steps and
 * their aggregation), src/device/prims_simple.h (the peers: rank -/+ 2^d),
 * src/enqueue.cc (the chunk), src/graph/tuning.cc (when NCCL runs it: one
 * rank per node, Simple protocol).
 *
 * The algorithm.  Rank r holds at "offset" o the block of rank (r + o) mod
 * P.  In the all-gather every block travels a binomial tree rooted at its
 * owner, farthest peer first, all P trees at once: rank r receives offset o
 * from r + 2^d (d the lowest set bit of o), which held it at offset
 * o - 2^d, and passes it on to r - 2^e for e < d.  What a rank sends to one
 * peer in one step is an edge of many trees: NCCL aggregates them into one
 * message.  With 2^L the power of two >= P, NCCL's aggregation factor A (a
 * power of two, larger for smaller blocks: PatAGAlgorithm's constructor)
 * and D = 2^L / A, the all-gather's steps are
 *   phase 2: for delta = 2^L / 2, 2^L / 4, ..., D: to r - delta, the
 *            offsets {2 a delta} (its own block and what came over the
 *            larger distances): binomial doubling, messages of 1, 2, 4, ...
 *            blocks;
 *   phase 1: for s = 1, ..., D - 1: to r - 2^d (d the lowest set bit of s)
 *            the A offsets {a D + s - 2^d}.
 * The reduce-scatter is the dual: the same messages reversed (rank r to
 * r + delta) in the reverse order, each partial sum added on receipt, so
 * that a rank's own block ends with every contribution.
 *
 * Layout.  A message's offsets are strided in rank order and a data
 * descriptor is one range, so each rank stages its blocks in scratch space
 * at position p = the L-bit reversal of the offset: there every message of
 * both phases is one range on either side, its blocks in the same order.
 * The rank copies its own block in (all-gather; every block in the
 * reduce-scatter) and the results out to their places: local copies,
 * messages to oneself without a protocol, which the channel engines do not
 * charge (NCCL's kernel makes the same copies between its connection
 * buffers and the user's).
 * Offsets >= P do not exist when P is not a power of two: a message skips
 * them, as NCCL skips those steps, which may cut it into several.
 *
 * Not modelled (docs/nccl.md): the order of the phase-1 steps (NCCL's
 * nextAs sequence; increasing s here, decreasing in the reduce-scatter),
 * the parallel factor (steps in flight at once) and the flow control of
 * NCCL_STEPS slots per peer.
 */
#include "coll/coll_internal.h"
#include "coll/nccl.h"
#include "coll/nccl_tree_internal.h"

#include <stdlib.h>
#include <string.h>

/* One message of a step: staging positions [near, near + n) (the smaller
 * offsets) and [far, far + n), ranks `delta` apart. */
typedef struct pat_step {
    int32_t near, far, n, delta, tag;
} pat_step_t;

typedef struct pat_plan {
    int P, L, A, D;
    int nsteps, ntags;
    pat_step_t *steps; /* all-gather order */
    int32_t *off;      /* off[p]: the offset at position p (2^L entries) */
    int32_t *pos;      /* pos[o]: the position of offset o < P */
    int64_t runs;      /* messages a rank sends per chunk */
} pat_plan_t;

/* NCCL's aggregation factor for a chunk of `chunk` bytes of a channel's
 * clen bytes of each block (PatAGAlgorithm / PatRSAlgorithm constructor):
 * doubled while a chunk holds two aggregated groups of the channel's part,
 * then log2(NCCL_STEPS = 8) times more (steps in flight), never past P / 2
 * (integer division). */
static int pat_agg(int P, int64_t chunk, int64_t clen)
{
    int A = 1;
    while (chunk / nccl_mul_sat(clen, A) >= 2 && A < P / 2)
        A *= 2;
    for (int d = 8; d > 1 && A < P / 2; d /= 2)
        A *= 2;
    return A;
}

static int32_t bitrev(int32_t x, int bits)
{
    int32_t y = 0;
    for (int i = 0; i < bits; i++)
        y |= ((x >> i) & 1) << (bits - 1 - i);
    return y;
}

/* Runs of existing offsets (< P) among the far positions of step s:
 * calls fn(ctx, s, i, u, k) for the i-th run [u, u + k) of the step's n;
 * returns the count. */
static int64_t pat_runs(const pat_plan_t *pl, const pat_step_t *s,
                        void (*fn)(void *ctx, const pat_step_t *s, int i, int u, int k), void *ctx)
{
    int64_t count = 0;
    for (int u = 0; u < s->n;) {
        if (pl->off[s->far + u] >= pl->P) {
            u++;
            continue;
        }
        int k = 1;
        while (u + k < s->n && pl->off[s->far + u + k] < pl->P)
            k++;
        if (fn)
            fn(ctx, s, (int)count, u, k);
        count++;
        u += k;
    }
    return count;
}

static void pat_plan_destroy(pat_plan_t *pl)
{
    free(pl->steps);
    free(pl->off);
    free(pl->pos);
    memset(pl, 0, sizeof *pl);
}

/* The steps of P ranks (P >= 2) with aggregation factor A, all-gather
 * order.  Tags: one per message (a step's tag is that of its first run,
 * the runs follow), then one per local copy of offset o (runs + o) and one
 * for the reduce-scatter's last copy (runs + P): messages between two ranks
 * (or a rank and itself) may leave in any order their dependencies allow,
 * and only distinct tags keep them matched to their own recvs. */
static void pat_plan_init(pat_plan_t *pl, int P, int A)
{
    int L = cs_coll_ceil_log2(P), lA = floor_log2(A), n2 = 1 << L;
    memset(pl, 0, sizeof *pl);
    pl->P = P;
    pl->L = L;
    pl->A = A;
    pl->D = n2 / A;
    pl->off = cs_malloc((size_t)n2 * sizeof *pl->off);
    pl->pos = cs_malloc((size_t)P * sizeof *pl->pos);
    for (int p = 0; p < n2; p++) {
        pl->off[p] = bitrev(p, L);
        if (pl->off[p] < P)
            pl->pos[pl->off[p]] = p;
    }
    pl->steps = cs_malloc((size_t)(lA + pl->D) * sizeof *pl->steps);
    for (int j = lA - 1; j >= 0; j--) {
        int n = 1 << (lA - 1 - j);
        pl->steps[pl->nsteps++] = (pat_step_t){0, n, n, (1 << j) * pl->D, 0};
    }
    for (int s = 1; s < pl->D; s++) {
        int d = floor_log2(lowbit(s));
        int lD = L - lA;
        pl->steps[pl->nsteps++] =
            (pat_step_t){bitrev(s - (1 << d), lD) * A, bitrev(s, lD) * A, A, 1 << d, 0};
    }
    for (int i = 0; i < pl->nsteps; i++) {
        pl->steps[i].tag = (int32_t)pl->runs;
        pl->runs += pat_runs(pl, &pl->steps[i], NULL, NULL);
    }
    pl->ntags = (int)pl->runs + P + 1;
}

/* Ops of one rank for one chunk: its copies (2 ops each: the own block in
 * and P - 1 blocks out for the all-gather; P blocks in and its own out for
 * the reduce-scatter) and, per message it sends, the send and the matching
 * recv (and add) it posts for the message it receives in the same run. */
static int64_t pat_rank_ops(const pat_plan_t *pl, int rs)
{
    return rs ? 2 * (pl->P + 1) + 3 * pl->runs : 2 * pl->P + 2 * pl->runs;
}

/* ---- emission ------------------------------------------------------------------ */

typedef struct pat_emit {
    cs_coll_builder_t *b;
    const pat_plan_t *pl;
    int rs, r, tag0;
    cs_proto_t proto;            /* the messages' protocol (copies have none) */
    int64_t m, choff, len, base; /* block size, chunk offset and length, staging base */
    int32_t *w;                  /* writers: W per position (count first) */
    int W;
    int32_t first;  /* first op of this rank and chunk */
    int32_t *stamp; /* per op of the rank and chunk: last send depending on it */
} pat_emit_t;

static int64_t stg(const pat_emit_t *e, int p)
{
    return e->base + (int64_t)p * e->len;
}
static int64_t natural(const pat_emit_t *e, int o)
{
    return (int64_t)((e->r + o) % e->pl->P) * e->m + e->choff;
}

static void add_writer(pat_emit_t *e, int p, int32_t op)
{
    int32_t *w = e->w + (size_t)p * e->W;
    CS_ASSERT(w[0] + 1 < e->W);
    w[1 + w[0]++] = op;
}

/* op follows every writer of positions [p, p + k), each once. */
static void after_writers(pat_emit_t *e, int32_t op, int p, int k)
{
    for (int i = p; i < p + k; i++) {
        const int32_t *w = e->w + (size_t)i * e->W;
        for (int j = 0; j < w[0]; j++) {
            int32_t x = w[1 + j] - e->first;
            if (e->stamp[x] == op)
                continue;
            e->stamp[x] = op;
            cs_coll_dep(e->b, op, w[1 + j], CS_DEP_AFTER);
        }
    }
}

/* A local copy (a message to oneself) of len bytes, tag `which` among the
 * copies, after the writers of position p_after (-1: none); when p_into >=
 * 0 both its ops become writers of that position.  Both sides wait for the
 * same ops and are waited for together, as a copy step is (the MSCCL
 * writer, io/msccl_write.h, exports it as one). */
static void copy(pat_emit_t *e, int which, int64_t src, int64_t dst, int p_after, int p_into)
{
    int tag = e->tag0 + (int)e->pl->runs + which;
    /* a copy inside the GPU: no protocol, no protocol latency */
    cs_coll_set_proto(e->b, CS_PROTO_NONE);
    int32_t s = cs_coll_send(e->b, e->r, e->r, src, e->len, tag);
    int32_t r = cs_coll_recv(e->b, e->r, e->r, dst, e->len, tag);
    cs_coll_set_proto(e->b, e->proto);
    if (p_after >= 0) {
        after_writers(e, s, p_after, 1);
        after_writers(e, r, p_after, 1);
    }
    if (p_into >= 0) {
        add_writer(e, p_into, s);
        add_writer(e, p_into, r);
    }
}

/* Run [u, u + k) of step s at rank r: the all-gather receives the far
 * positions from r + delta and sends the near ones to r - delta; the
 * reduce-scatter adds into the near positions what r - delta sends and
 * sends the far ones to r + delta. */
static void emit_run(void *ctx, const pat_step_t *s, int i, int u, int k)
{
    pat_emit_t *e = ctx;
    int P = e->pl->P, up = (e->r + s->delta) % P, down = (e->r - s->delta % P + P) % P;
    int64_t bytes = (int64_t)k * e->len;
    int tag = e->tag0 + s->tag + i;
    if (!e->rs) {
        int32_t rop = cs_coll_recv(e->b, e->r, up, stg(e, s->far + u), bytes, tag);
        for (int j = 0; j < k; j++)
            add_writer(e, s->far + u + j, rop);
        int32_t sop = cs_coll_send(e->b, e->r, down, stg(e, s->near + u), bytes, tag);
        after_writers(e, sop, s->near + u, k);
    } else {
        int32_t calc = cs_coll_recv_reduce(e->b, e->r, down, stg(e, s->near + u), bytes, tag);
        for (int j = 0; j < k; j++)
            add_writer(e, s->near + u + j, calc);
        int32_t sop = cs_coll_send(e->b, e->r, up, stg(e, s->far + u), bytes, tag);
        after_writers(e, sop, s->far + u, k);
    }
}

/* One chunk [choff, choff + len) of every block, rank by rank (a rank's
 * ops are made together; messages between two ranks match by tag and
 * order, the same on both sides). */
static void pat_chunk(pat_emit_t *e, int64_t choff, int64_t len, int tag0)
{
    const pat_plan_t *pl = e->pl;
    int P = pl->P, n2 = 1 << pl->L;
    e->choff = choff;
    e->len = len;
    e->tag0 = tag0;
    /* staging: 2^L positions of len bytes past the nominal buffer, the
     * chunks' areas side by side (choff tiles the block) */
    e->base = (int64_t)P * e->m + (int64_t)n2 * choff;
    for (e->r = 0; e->r < P; e->r++) {
        e->first = cs_program_nops(cs_coll_program(e->b));
        for (int p = 0; p < n2; p++)
            e->w[(size_t)p * e->W] = 0;
        int64_t nops = pat_rank_ops(pl, e->rs);
        for (int64_t i = 0; i < nops; i++)
            e->stamp[i] = -1;
        if (!e->rs) {
            copy(e, 0, natural(e, 0), stg(e, 0), -1, 0);
            for (int i = 0; i < pl->nsteps; i++)
                pat_runs(pl, &pl->steps[i], emit_run, e);
            for (int o = 1; o < P; o++)
                copy(e, o, stg(e, pl->pos[o]), natural(e, o), pl->pos[o], -1);
        } else {
            for (int o = 0; o < P; o++)
                copy(e, o, natural(e, o), stg(e, pl->pos[o]), -1, pl->pos[o]);
            for (int i = pl->nsteps - 1; i >= 0; i--)
                pat_runs(pl, &pl->steps[i], emit_run, e);
            copy(e, P, stg(e, 0), natural(e, 0), 0, -1);
        }
        CS_ASSERT(cs_program_nops(cs_coll_program(e->b)) - e->first == nops);
    }
}

/* ---- options, build, bound ------------------------------------------------------ */

/* The options of PAT: NCCL runs it with the Simple protocol only
 * (tuning.cc skips PAT for LL and LL128), so another proto= is refused; the
 * chunk, unless given, shrinks as NCCL 2.30's calcCollChunking does while
 * the collective's bytes (P blocks) are fewer than `per` chunks per channel
 * (32 for the all-gather, 16 for the reduce-scatter), down to 64 KiB. */
static int pat_opts(const cs_coll_args_t *a, int rs, cs_nccl_opts_t *o, cs_error_t *err)
{
    int rc = cs_nccl_opts_read(a, o, err);
    if (rc)
        return rc;
    if (o->proto != CS_PROTO_SIMPLE)
        return cs_error_set(err, CS_ERR_RANGE,
                            "option proto=%s: NCCL's PAT runs only the Simple protocol "
                            "(proto=simple)",
                            o->proto == CS_PROTO_LL ? "ll" : "ll128");
    o->chunk = o->step; /* NCCL's chunkSteps is 1 but for the ring: a chunk is a step */
    if (!cs_coll_opt_given(a, "chunk")) {
        int64_t total = nccl_mul_sat(a->bytes, a->P), per = rs ? 16 : 32;
        while (nccl_mul_sat(o->chunk, o->nchannels * per) > total && o->chunk > 65536)
            o->chunk /= 2;
    }
    return CS_OK;
}

/* Ops of the whole program: per channel (at most two part sizes, hence two
 * aggregation factors), chunks x P x a rank's ops per chunk. */
static int64_t pat_count(const cs_coll_args_t *a, int rs, const cs_nccl_opts_t *o)
{
    int P = a->P, nc = o->nchannels;
    int64_t q = a->bytes / nc, extra = a->bytes % nc, total = 0;
    if (P < 2)
        return 0;
    for (int big = 0; big < 2; big++) {
        int64_t parts = big ? extra : nc - extra, clen = q + big;
        if (!parts || !clen)
            continue;
        pat_plan_t pl;
        pat_plan_init(&pl, P, pat_agg(P, o->chunk, clen));
        int64_t per = nccl_mul_sat(nccl_mul_sat(pat_rank_ops(&pl, rs), P),
                                   nccl_mul_sat(parts, nccl_nchunks(clen, o->chunk)));
        total = total > INT64_MAX - per ? INT64_MAX : total + per;
        pat_plan_destroy(&pl);
    }
    return total;
}

static int pat_build(cs_coll_builder_t *b, int rs, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, rc, nc;
    cs_nccl_opts_t o;
    if ((rc = pat_opts(a, rs, &o, err)))
        return rc;
    cs_nccl_begin(b, &o);
    if (P < 2 || a->bytes == 0)
        return CS_OK;
    nc = o.nchannels;
    /* tags: a range of ntags <= 2 P per chunk (a message per existing
     * offset at most, a copy per offset), fewer than a chunk's ops (the op
     * limit, below 2^31, bounds them); checked all the same */
    if (nccl_mul_sat(nccl_all_chunks(a->bytes, nc, o.chunk), 2 * (int64_t)P) > INT32_MAX)
        return cs_error_set(err, CS_ERR_RANGE, "option chunk=%lld: too many chunks for %d ranks",
                            (long long)o.chunk, P);
    pat_emit_t e;
    memset(&e, 0, sizeof e);
    e.b = b;
    e.rs = rs;
    e.proto = o.proto;
    e.m = a->bytes;
    e.W = cs_coll_ceil_log2(P) + 4; /* count, the copy in (2 ops), a write per dimension */
    int64_t g = 0;
    for (int c = 0; c < nc; c++) {
        int64_t coff, clen;
        cs_coll_split(a->bytes, nc, c, &coff, &clen);
        if (!clen)
            continue;
        pat_plan_t pl;
        pat_plan_init(&pl, P, pat_agg(P, o.chunk, clen));
        e.pl = &pl;
        e.w = cs_malloc(((size_t)1 << pl.L) * (size_t)e.W * sizeof *e.w);
        e.stamp = cs_malloc((size_t)pat_rank_ops(&pl, rs) * sizeof *e.stamp);
        for (int64_t k = 0; k < nccl_nchunks(clen, o.chunk); k++, g++) {
            int64_t len = clen - k * o.chunk < o.chunk ? clen - k * o.chunk : o.chunk;
            pat_chunk(&e, coff + k * o.chunk, len, (int)(g * pl.ntags));
        }
        free(e.w);
        free(e.stamp);
        pat_plan_destroy(&pl);
    }
    return CS_OK;
}

static int allgather_nccl_pat(cs_coll_builder_t *b, cs_error_t *err)
{
    return pat_build(b, 0, err);
}
static int reduce_scatter_nccl_pat(cs_coll_builder_t *b, cs_error_t *err)
{
    return pat_build(b, 1, err);
}

static int64_t pat_ops(const cs_coll_args_t *a, int rs)
{
    cs_nccl_opts_t o;
    cs_error_t e;
    if (pat_opts(a, rs, &o, &e))
        return -1;
    return pat_count(a, rs, &o);
}
static int64_t allgather_nccl_pat_ops(const cs_coll_args_t *a)
{
    return pat_ops(a, 0);
}
static int64_t reduce_scatter_nccl_pat_ops(const cs_coll_args_t *a)
{
    return pat_ops(a, 1);
}

static const char *const keys_nccl[] = {CS_NCCL_KEYS, NULL};
#define PAT_OPTIONS CS_NCCL_OPTIONS "; Simple only, as in NCCL"

const cs_coll_algo_t cs_coll_nccl_pat_allgather = {
    .kind = CS_COLL_ALLGATHER,
    .name = "nccl-pat",
    .summary = "NCCL's parallel aggregated trees: a binomial tree per block over peers at "
               "distance 2^d, farthest first, a step's blocks to one peer in one message "
               "(NCCL: one rank per node)",
    .source = "NCCL 2.30.7 (src/include/collectives.h PatAGAlgorithm)",
    .options = PAT_OPTIONS,
    .keys = keys_nccl,
    .build = allgather_nccl_pat,
    .max_ops = allgather_nccl_pat_ops,
};

const cs_coll_algo_t cs_coll_nccl_pat_reduce_scatter = {
    .kind = CS_COLL_REDUCE_SCATTER,
    .name = "nccl-pat",
    .summary = "NCCL's parallel aggregated trees: partial sums of each block up a binomial "
               "tree over peers at distance 2^d, nearest first, aggregated per peer and step "
               "(NCCL: one rank per node)",
    .source = "NCCL 2.30.7 (src/include/collectives.h PatRSAlgorithm)",
    .options = PAT_OPTIONS,
    .keys = keys_nccl,
    .build = reduce_scatter_nccl_pat,
    .max_ops = reduce_scatter_nccl_pat_ops,
};
