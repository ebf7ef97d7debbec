/*
 * nccl_ring.c - NCCL's ring family as NCCL's kernels run it (issue 36;
 * nccl.h, docs/nccl.md "Ring"): allreduce, allgather, reduce-scatter,
 * broadcast and reduce, after NCCL 2.30.7-1's src/device/all_reduce.h,
 * all_gather.h, reduce_scatter.h, broadcast.h and reduce.h (runRing) and
 * src/enqueue.cc (calcCollChunking: chunk, slice and loop sizes).
 *
 * What is modelled:
 *   - channels: the data is cut into `nchannels` nearly equal contiguous
 *     parts (per rank block for allgather and reduce-scatter), channel c
 *     moving part c over its own ring; every channel follows the machine's
 *     ring hint (NCCL's topology search finds the rings and
 *     ncclTopoPostset duplicates them over the channels: with one ring
 *     hint, every channel is that ring).  Channel c's messages carry tag c.
 *   - steps: each rank runs NCCL's sequence of primitives (send,
 *     recvReduceSend, recvReduceCopySend, recvCopySend, recv, ...) on the
 *     chunk NCCL's loop gives it, one primitive after the other (a
 *     channel's thread block runs them in order); a primitive that
 *     receives and sends forwards what it received (and reduced) when it
 *     has it, slice by slice (Simple: chunkSteps / sliceSteps = 2 slices a
 *     chunk for allreduce, allgather and reduce-scatter, each of
 *     max(ceil(n / 32) x 16, 32 KiB) bytes of the primitive's n, so that
 *     a primitive of at most 32 KiB is one slice; one otherwise):
 *     the pipeline of NCCL's rings, with a slice as the unit of forwarding.
 *   - the loop: allreduce moves nChannels * nRanks * chunk bytes a loop,
 *     the last loop's chunk shrinking to ceil(rest / nRanks) rounded up to
 *     16 bytes (runRing); allgather and reduce-scatter a chunk of each
 *     rank's part a loop; broadcast and reduce a chunk a loop, pipelined
 *     along the ring from (to) the root.
 *   - every message runs under the protocol (cs_nccl_begin): its wire
 *     bytes and per-message latency (core/proto.h).
 * What is not: GPU kernel time (copies and reductions cost what the
 * machine's reduction rate says), the proxy threads and the network
 * plugin, NCCL's flow control over its NCCL_STEPS buffer slots, and the
 * line-by-line forwarding of LL and LL128 inside a step (a step is the
 * unit here).
 */
#include "coll/coll_internal.h"
#include "coll/nccl.h"

#include <stdint.h>
#include <stdlib.h>

/* The smallest slice of NCCL's Simple protocol (prims_simple.h): a
 * slice is stepSize x StepPerSlice / 32 at least, 512 KiB x 2 / 32; the
 * slices of a primitive that its data does not reach send nothing. */
#define SIMPLE_MIN_SLICE (INT64_C(32) << 10)

/* A ring of one channel: where its ranks are and the op that ends each
 * position's last primitive (the next one follows it). */
typedef struct ring {
    cs_coll_builder_t *b;
    int P, nch, nslices;
    int32_t *order; /* position -> rank (the machine's ring hint) */
    int32_t *last;  /* [channel * P + position] */
} ring_t;

enum { RX_NONE, RX_COPY, RX_REDUCE };

static void ring_init(ring_t *r, cs_coll_builder_t *b, const cs_nccl_opts_t *o, int nslices)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    r->b = b;
    r->P = a->P;
    r->nch = o->nchannels;
    r->nslices = nslices;
    r->order = cs_malloc((size_t)a->P * sizeof *r->order);
    cs_coll_ring(a, r->order, NULL);
    r->last = cs_malloc((size_t)a->P * (size_t)o->nchannels * sizeof *r->last);
    /* every chain starts after a join of its rank, ready at time 0: so
     * that every later op has a predecessor (a chunk past the data leaves
     * a chain's first primitives empty), which a windowed build needs
     * (cs_coll_chained) */
    for (int i = 0; i < a->P; i++) {
        int32_t j = a->P > 1 ? cs_coll_join(b, r->order[i]) : -1;
        for (int c = 0; c < o->nchannels; c++)
            r->last[(size_t)c * (size_t)a->P + (size_t)i] = j;
        cs_coll_chained(b, r->order[i], j);
    }
}

/* A step of every channel is out: each rank's ops below the last of its
 * chains get no more dependents (cs_coll_chained). */
static void ring_step_done(ring_t *r)
{
    for (int i = 0; i < r->P; i++) {
        int32_t lo = INT32_MAX;
        for (int c = 0; c < r->nch; c++)
            if (r->last[(size_t)c * (size_t)r->P + (size_t)i] < lo)
                lo = r->last[(size_t)c * (size_t)r->P + (size_t)i];
        cs_coll_chained(r->b, r->order[i], lo);
    }
}

static void ring_destroy(ring_t *r)
{
    free(r->order);
    free(r->last);
}

/* One primitive of position i on channel c over [off, off+len) of the
 * buffer: receive it from the previous position (rx: copy or reduce,
 * then a calc at the machine's reduction rate), then (tx) send it on to
 * the next, slice by slice, each slice's ops after the last op of the one
 * before.  Nothing for len <= 0 (a chunk past the data). */
static void prim(ring_t *r, int c, int i, int rx, int tx, int64_t off, int64_t len)
{
    cs_coll_builder_t *b = r->b;
    int P = r->P, me = r->order[i];
    int prev = r->order[(i + P - 1) % P], next = r->order[(i + 1) % P];
    int32_t *last = &r->last[(size_t)c * (size_t)P + (size_t)i];
    int64_t slice = len;
    if (r->nslices == 2) /* prims_simple.h: a slice of ceil(n / 32) x 16, at least 32 KiB */
        slice = (len + 31) / 32 * 16 > SIMPLE_MIN_SLICE ? (len + 31) / 32 * 16 : SIMPLE_MIN_SLICE;
    for (int64_t so = off; so < off + len; so += slice) {
        int64_t sl = off + len - so < slice ? off + len - so : slice;
        int32_t end = *last;
        if (rx != RX_NONE) {
            int32_t op = cs_coll_recv(b, me, prev, so, sl, c);
            cs_coll_dep(b, op, end, CS_DEP_AFTER);
            end = op;
            if (rx == RX_REDUCE) {
                cs_coll_set_data(b, op, so, sl, CS_DATA_REDUCE);
                end = cs_coll_calc(b, me, 0, sl);
                cs_coll_dep(b, end, op, CS_DEP_AFTER);
            }
        }
        if (tx) {
            int32_t op = cs_coll_send(b, me, next, so, sl, c);
            cs_coll_dep(b, op, end, CS_DEP_AFTER);
            end = op;
        }
        *last = end;
    }
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The options every algorithm of the file reads, and the ring. */
static int ring_begin(cs_coll_builder_t *b, cs_nccl_opts_t *o, ring_t *r, int sliced,
                      cs_error_t *err)
{
    int rc = cs_nccl_opts_read(cs_coll_args(b), o, err);
    if (rc)
        return rc;
    cs_nccl_begin(b, o);
    /* NCCL's Simple ring slices a chunk of ALLREDUCE/ALLGATHER/
     * REDUCESCATTER_CHUNKSTEPS = 4 steps in slices of SLICESTEPS = 2
     * (collectives.h); LL, LL128 and the chunk-step-1 collectives send a
     * chunk whole */
    ring_init(r, b, o, sliced && o->proto == CS_PROTO_SIMPLE ? 2 : 1);
    return CS_OK;
}

/* ---- loops over the channels' parts ----------------------------------- */

/* The loops of `per` bytes that the largest channel part of the n-byte
 * vector takes (each channel's part: cs_coll_split); 0 when P < 2, where
 * nothing moves. */
static int64_t ring_loops(int64_t n, int nch, int P, int64_t per)
{
    int64_t L = 0, cb, cl;
    for (int c = 0; c < nch && P > 1; c++) {
        cs_coll_split(n, nch, c, &cb, &cl);
        if (ceil_div(cl, per) > L)
            L = ceil_div(cl, per);
    }
    return L;
}

/* Loop l of channel c: *at = where in the vector it starts (its part's
 * start + l * per); returns the bytes of the part left from there, 0 when
 * the part ended before loop l. */
static int64_t loop_left(int64_t n, int nch, int c, int64_t l, int64_t per, int64_t *at)
{
    int64_t cb, cl, e = l * per;
    cs_coll_split(n, nch, c, &cb, &cl);
    *at = cb + e;
    return e < cl ? cl - e : 0;
}

/* ---- allreduce (all_reduce.h runRing) ---------------------------------- */

/* Channel c's part of the n-byte vector is [cb, cb + cl); a loop covers
 * P chunks of it.  Position i (ringIx) handles, in loop order: send chunk
 * i-1; recvReduceSend chunks i-2 .. i-(P-1); recvReduceCopySend chunk i
 * (the sum done, passed on); recvCopySend chunks i-1 .. i-(P-2); recv
 * chunk i+1.  2P - 1 primitives a loop, 2(P - 1) messages sent. */
static int nccl_allreduce(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, rc;
    cs_nccl_opts_t o;
    ring_t r;
    if ((rc = ring_begin(b, &o, &r, 1, err)))
        return rc;
    int64_t loop = (int64_t)P * o.chunk, L = ring_loops(a->bytes, o.nchannels, P, loop);
    for (int64_t l = 0; l < L; l++) {
        for (int s = 0; s < 2 * (P - 1) + 1; s++) {
            for (int c = 0; c < o.nchannels; c++) {
                int64_t at, rem = loop_left(a->bytes, o.nchannels, c, l, loop, &at);
                if (!rem)
                    continue;
                int64_t cc = rem < loop ? (ceil_div(rem, P) + 15) / 16 * 16 : o.chunk;
                for (int i = 0; i < P; i++) {
                    int k, rx, tx;
                    if (s == 0) {
                        k = i - 1, rx = RX_NONE, tx = 1;
                    } else if (s < P - 1) {
                        k = i - 1 - s, rx = RX_REDUCE, tx = 1;
                    } else if (s == P - 1) {
                        k = i, rx = RX_REDUCE, tx = 1;
                    } else if (s < 2 * (P - 1)) {
                        k = i - (s - (P - 1)), rx = RX_COPY, tx = 1;
                    } else {
                        k = i + 1, rx = RX_COPY, tx = 0;
                    }
                    k = ((k % P) + P) % P;
                    int64_t koff = (int64_t)k * cc, klen = rem - koff < cc ? rem - koff : cc;
                    prim(&r, c, i, rx, tx, at + koff, klen);
                }
            }
            ring_step_done(&r);
        }
    }
    ring_destroy(&r);
    return CS_OK;
}

/* ---- allgather and reduce-scatter (all_gather.h, reduce_scatter.h) ----- */

/* Each rank's block of m bytes is cut into the channels' parts; a loop
 * moves a chunk of channel c's part of every block.  Allgather at
 * position i: send its own rank's piece; recvCopySend the pieces of the
 * ranks at i-1 .. i-(P-2); recv the piece of the rank at i+1.
 * Reduce-scatter: send the piece of the rank at i-1; recvReduceSend those
 * of i-2 .. i-(P-1); recvReduceCopy its own. */
static int nccl_blocks(cs_coll_builder_t *b, int reduce, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, rc;
    int64_t m = a->bytes;
    cs_nccl_opts_t o;
    ring_t r;
    if ((rc = ring_begin(b, &o, &r, 1, err)))
        return rc;
    int64_t L = ring_loops(m, o.nchannels, P, o.chunk);
    for (int64_t l = 0; l < L; l++) {
        for (int s = 0; s < P; s++) {
            for (int c = 0; c < o.nchannels; c++) {
                int64_t at, rem = loop_left(m, o.nchannels, c, l, o.chunk, &at);
                if (!rem)
                    continue;
                int64_t len = rem < o.chunk ? rem : o.chunk;
                for (int i = 0; i < P; i++) {
                    int j, rx, tx;
                    if (s == 0)
                        j = reduce ? i - 1 : i, rx = RX_NONE, tx = 1;
                    else if (s < P - 1)
                        j = reduce ? i - 1 - s : i - s, rx = reduce ? RX_REDUCE : RX_COPY, tx = 1;
                    else
                        j = reduce ? i : i + 1, rx = reduce ? RX_REDUCE : RX_COPY, tx = 0;
                    int owner = r.order[((j % P) + P) % P];
                    prim(&r, c, i, rx, tx, (int64_t)owner * m + at, len);
                }
            }
            ring_step_done(&r);
        }
    }
    ring_destroy(&r);
    return CS_OK;
}

static int nccl_allgather(cs_coll_builder_t *b, cs_error_t *err) { return nccl_blocks(b, 0, err); }
static int nccl_reduce_scatter(cs_coll_builder_t *b, cs_error_t *err)
{
    return nccl_blocks(b, 1, err);
}

/* ---- broadcast and reduce (broadcast.h, reduce.h) ---------------------- */

/* A pipeline along the ring, chunk by chunk: broadcast from the root
 * (root sends, each next rank recvCopySends, the rank before the root
 * only receives); reduce towards it (the rank after the root sends, each
 * next recvReduceSends, the root recvReduceCopies).  Position 0 of the
 * pipeline is the root's ring position (broadcast) or the one after it
 * (reduce). */
static int nccl_pipeline(cs_coll_builder_t *b, int reduce, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, rc, root_pos = 0;
    cs_nccl_opts_t o;
    ring_t r;
    if ((rc = ring_begin(b, &o, &r, 0, err)))
        return rc;
    for (int i = 0; i < P; i++)
        if (r.order[i] == a->root)
            root_pos = i;
    int first = reduce ? (root_pos + 1) % P : root_pos;
    int64_t L = ring_loops(a->bytes, o.nchannels, P, o.chunk);
    for (int64_t l = 0; l < L; l++) {
        for (int c = 0; c < o.nchannels; c++) {
            int64_t at, rem = loop_left(a->bytes, o.nchannels, c, l, o.chunk, &at);
            if (!rem)
                continue;
            int64_t len = rem < o.chunk ? rem : o.chunk;
            for (int q = 0; q < P; q++) {
                int i = (first + q) % P;
                int rx = q == 0 ? RX_NONE : reduce ? RX_REDUCE : RX_COPY;
                prim(&r, c, i, rx, q < P - 1, at, len);
            }
        }
        ring_step_done(&r);
    }
    ring_destroy(&r);
    return CS_OK;
}

static int nccl_broadcast(cs_coll_builder_t *b, cs_error_t *err) { return nccl_pipeline(b, 0, err); }
static int nccl_reduce(cs_coll_builder_t *b, cs_error_t *err) { return nccl_pipeline(b, 1, err); }

/* ---- op counts ----------------------------------------------------------- */

/* Loops of the largest channel part: ceil(ceil(n / nch) / per_loop). */
static int64_t loops(int64_t n, int nch, int64_t per_loop)
{
    return n > 0 ? ceil_div(ceil_div(n, nch), per_loop) : 0;
}

/* ops a position emits a loop and a slice: allreduce 1 + 3(P-1) + 2(P-2)
 * + 1 = 5(P-1); allgather 1 + 2(P-2) + 1; reduce-scatter 1 + 3(P-2) + 2;
 * broadcast 2 a rank but the ends (1 each), reduce 3 but the ends (1, 2). */
static int64_t nccl_max_ops(const cs_coll_args_t *a)
{
    cs_nccl_opts_t o;
    cs_error_t e;
    int64_t P = a->P, L, per, ns;
    if (P < 2 || cs_nccl_opts_read(a, &o, &e))
        return P < 2 ? 0 : -1;
    ns = o.proto == CS_PROTO_SIMPLE && o.chunk > SIMPLE_MIN_SLICE ? 2 : 1;
    switch (a->kind) {
    case CS_COLL_ALLREDUCE:
        L = loops(a->bytes, o.nchannels, P * o.chunk), per = P * 5 * (P - 1);
        break;
    case CS_COLL_ALLGATHER:
        L = loops(a->bytes, o.nchannels, o.chunk), per = P * 2 * (P - 1);
        break;
    case CS_COLL_REDUCE_SCATTER:
        L = loops(a->bytes, o.nchannels, o.chunk), per = P * 3 * (P - 1);
        break;
    case CS_COLL_BROADCAST:
        L = loops(a->bytes, o.nchannels, o.chunk), per = 2 * (P - 1), ns = 1;
        break;
    default:
        L = loops(a->bytes, o.nchannels, o.chunk), per = 3 * (P - 1), ns = 1;
        break;
    }
    /* saturate rather than wrap: a bound past the limit is refused anyway */
    __int128 n = (__int128)o.nchannels * L * ns * per + P; /* + a join a rank */
    return n > INT64_MAX ? INT64_MAX : (int64_t)n;
}

/* ---- registry ---------------------------------------------------------- */

static const char *const nccl_keys[] = {CS_NCCL_KEYS, NULL};
#define SRC "NCCL 2.30.7 src/device/"

static const cs_coll_algo_t ar = {
    CS_COLL_ALLREDUCE, "nccl-ring",
    "NCCL's ring allreduce: reduce-scatter then allgather steps, nchannels rings, loops of "
    "nchannels x P x chunk",
    SRC "all_reduce.h runRing", CS_NCCL_OPTIONS, nccl_keys, nccl_allreduce, nccl_max_ops};
static const cs_coll_algo_t ag = {
    CS_COLL_ALLGATHER, "nccl-ring",
    "NCCL's ring allgather: each rank's block forwarded P-1 steps, nchannels rings, chunk by "
    "chunk",
    SRC "all_gather.h runRing", CS_NCCL_OPTIONS, nccl_keys, nccl_allgather, nccl_max_ops};
static const cs_coll_algo_t rs = {
    CS_COLL_REDUCE_SCATTER, "nccl-ring",
    "NCCL's ring reduce-scatter: partial sums passed on P-1 steps, nchannels rings, chunk by "
    "chunk",
    SRC "reduce_scatter.h runRing", CS_NCCL_OPTIONS, nccl_keys, nccl_reduce_scatter,
    nccl_max_ops};
static const cs_coll_algo_t bc = {
    CS_COLL_BROADCAST, "nccl-ring",
    "NCCL's ring broadcast: a pipeline from the root along the ring, chunk by chunk, nchannels "
    "rings",
    SRC "broadcast.h runRing", CS_NCCL_OPTIONS, nccl_keys, nccl_broadcast, nccl_max_ops};
static const cs_coll_algo_t rd = {
    CS_COLL_REDUCE, "nccl-ring",
    "NCCL's ring reduce: a pipeline along the ring to the root, chunk by chunk, nchannels rings",
    SRC "reduce.h runRing", CS_NCCL_OPTIONS, nccl_keys, nccl_reduce, nccl_max_ops};

const cs_coll_algo_t *const cs_coll_algos_nccl_ring[] = {&bc, &rd, &ar, &ag, &rs, NULL};
