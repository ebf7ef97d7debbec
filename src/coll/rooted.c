/*
 * rooted.c - the rooted collectives of the suite: broadcast, reduce, scatter
 * and gather, written once against the emission API of coll.h.
 *
 * Sources: the message-passing lecture (shared/papers/004, notes in
 * shared/reference/alpha-beta.md): §8.1 the binomial (bit-fixing) reduce and
 * its dual broadcast, with the patch for P not a power of two; §8.4 the naive
 * scatter; §8.5 divide-and-conquer scatter and gather; §8.8 the bandwidth-
 * optimal broadcast (scatter + bucket allgather, after van de Geijn).  The
 * pipelined chain, k-chains, the segmented binomial tree and Rabenseifner's
 * reduce (reduce-scatter by recursive halving + binomial gather, folding the
 * extra ranks first for P not a power of two) are the standard MPI library
 * algorithms the issue lists as "generic".
 *
 * Conventions shared by every algorithm here:
 *   - any P >= 1 (P = 1 emits nothing), any size >= 0, any root;
 *   - zero-length messages are skipped on both sides (a broadcast of 0
 *     bytes emits nothing; a piece of a split vector that is empty because
 *     n < P is not sent).  Sending them would also be consistent, but the
 *     fluid engine cannot complete a 0-byte message (it reports a deadlock),
 *     and skipping keeps both modes equal;
 *   - data stays at its natural offset: the whole vector is [0, n); block i
 *     of a gather/scatter buffer is [i*m, (i+1)*m) on every rank; a piece of
 *     a split vector is cs_coll_split's range on every rank.  A message
 *     therefore always carries one contiguous range, which is why the
 *     divide-and-conquer scatter/gather split ranges of *real* ranks rather
 *     than of root-relative ranks (those wrap around and would need two
 *     messages);
 *   - pipelined algorithms send each segment of `seg` bytes (default: the
 *     machine's packet size) as its own message, tag = segment index, and a
 *     rank forwards segment s as soon as it holds (and, for reduce, has
 *     reduced) segment s: explicit per-op dependencies, no waitall.
 */
#include "coll/coll.h"

#include <stdlib.h>

/* Tags of the multi-phase algorithms: a pair of ranks may exchange messages
 * in two phases, and distinct tags keep them from matching across phases. */
enum {
    TAG_DATA = 0,    /* single-phase algorithms */
    TAG_SCATTER = 1, /* scatter phase of scatter-allgather */
    TAG_RING = 2,    /* ring allgather phase */
    TAG_FOLD = 3,    /* Rabenseifner: folding the extra ranks */
    TAG_HALVE = 4,   /* Rabenseifner: recursive halving */
    TAG_GATHER = 5   /* Rabenseifner: binomial gather */
};

/* A cap on messages of the segmented algorithms (segments x ranks): beyond
 * it the program would need gigabytes; the error says to raise seg. */
#define MAX_SEG_MESSAGES ((int64_t)1 << 23)

/* ---- small helpers ------------------------------------------------------- */

static int lowbit(int x)
{
    return x & -x;
}

/* Root-relative rank -> rank. */
static int real_rank(int rel, int root, int P)
{
    return (rel + root) % P;
}

/* The seg option: a byte count >= 1, by default the machine's packet size
 * (the natural unit of a pipeline). */
static int opt_seg(const cs_coll_args_t *a, int64_t *seg, cs_error_t *err)
{
    int64_t dflt = a->unit >= 1 ? a->unit : 1;
    *seg = dflt;
    if (a->opts) {
        int rc = cs_spec_get_bytes(a->opts, "seg", dflt, seg, err);
        if (rc)
            return rc;
    }
    if (*seg < 1)
        return cs_error_set(err, CS_ERR_RANGE, "option seg=%lld: a segment must be at least 1 byte",
                            (long long)*seg);
    return CS_OK;
}

/* Number of segments of n bytes (at least one), checked against the
 * message cap (one rank needs no messages, so no cap). */
static int nsegs(const cs_coll_args_t *a, int64_t seg, int64_t *S, cs_error_t *err)
{
    int64_t n = a->bytes;
    *S = n > 0 ? (n - 1) / seg + 1 : 1;
    if (a->P > 1 && *S > MAX_SEG_MESSAGES / a->P)
        return cs_error_set(err, CS_ERR_RANGE,
                            "option seg=%lld: %lld bytes make %lld segments; on %d ranks that is "
                            "more than %lld messages; choose a larger seg",
                            (long long)seg, (long long)n, (long long)*S, a->P,
                            (long long)MAX_SEG_MESSAGES);
    return CS_OK;
}

/* Segment s of n bytes cut in segments of seg bytes (the last one shorter). */
static void seg_range(int64_t n, int64_t seg, int64_t s, int64_t *off, int64_t *len)
{
    *off = s * seg;
    *len = n - *off < seg ? n - *off : seg;
    if (*len < 0)
        *len = 0;
}

/* Offsets of the P+1 boundaries of per-rank pieces: piece i of the buffer is
 * [boff[i], boff[i+1]).  m > 0: blocks of m bytes (gather/scatter); m < 0:
 * the whole vector n split by cs_coll_split (broadcast, reduce). */
static int64_t *piece_bounds(int P, int64_t m, int64_t n)
{
    int64_t *boff = cs_calloc((size_t)P + 1, sizeof *boff);
    for (int i = 0; i <= P; i++) {
        int64_t off, len;
        if (m >= 0) {
            boff[i] = (int64_t)i * m;
        } else {
            cs_coll_split(n, P, i < P ? i : P - 1, &off, &len);
            boff[i] = i < P ? off : off + len;
        }
    }
    return boff;
}

/* Message from `from` to `to` of [off, off+len), same range on both sides.
 * Returns the send op; *rop (if non-NULL) gets the recv op. */
static int32_t xfer(cs_coll_builder_t *b, int from, int to, int64_t off, int64_t len, int tag,
                    int32_t *rop)
{
    int32_t s = cs_coll_send_nz(b, from, to, off, len, tag);
    int32_t r = cs_coll_recv_nz(b, to, from, off, len, tag);
    if (rop)
        *rop = r;
    return s;
}

/* The chain order used by the pipelined algorithms: the machine's ring
 * order starting at the root.  seq[0] = root.  Caller frees. */
static int32_t *chain_order(const cs_coll_args_t *a)
{
    int P = a->P;
    int32_t *ring = cs_calloc((size_t)P, sizeof *ring);
    int32_t *pos = cs_calloc((size_t)P, sizeof *pos);
    int32_t *seq = cs_calloc((size_t)P, sizeof *seq);
    cs_coll_ring(a, ring, pos);
    for (int i = 0; i < P; i++)
        seq[i] = ring[(pos[a->root] + i) % P];
    free(ring);
    free(pos);
    return seq;
}

/* k option of the k-chain algorithms: 1 <= k; more chains than non-root
 * ranks are empty, so the effective k is min(k, P-1). */
static int opt_k(const cs_coll_args_t *a, int64_t *k, cs_error_t *err)
{
    *k = 2;
    if (a->opts)
        return cs_spec_get_int(a->opts, "k", 2, 1, 1 << 20, k, err);
    return CS_OK;
}

/* ---- divide and conquer over contiguous rank ranges (lecture §8.5) -------
 * The range [lo, hi) of ranks is held by h (lo <= h < hi).  Split it in two
 * halves; h keeps the half that contains it, made the larger one
 * (ceil(size/2)), and exchanges the other half's pieces with a
 * representative there (the rank at h's offset within its own half, so that
 * for a power of two the pattern is the binomial tree around h).  Both
 * halves recurse.  Every range is contiguous in rank space, so one message
 * carries [boff[lo'], boff[hi')).  h takes ceil(log2 size) steps and moves
 * size-1 pieces, and no other path is longer (see docs/algorithms/rooted.md),
 * so the cost is alpha*ceil(log2 P) + beta*m*(P-1) for any P.
 */
static void halves(int lo, int hi, int h, int *nlo, int *nhi, int *olo, int *ohi, int *rep)
{
    int size = hi - lo, big = (size + 1) / 2;
    if (h < lo + big) {
        *nlo = lo, *nhi = lo + big, *olo = lo + big, *ohi = hi;
    } else {
        *nlo = hi - big, *nhi = hi, *olo = lo, *ohi = hi - big;
    }
    *rep = *olo + (h - *nlo);
    if (*rep >= *ohi)
        *rep = *ohi - 1;
}

static void dc_scatter(cs_coll_builder_t *b, const int64_t *boff, int lo, int hi, int h, int tag)
{
    while (hi - lo > 1) {
        int nlo, nhi, olo, ohi, rep;
        halves(lo, hi, h, &nlo, &nhi, &olo, &ohi, &rep);
        xfer(b, h, rep, boff[olo], boff[ohi] - boff[olo], tag, NULL);
        cs_coll_wait(b, rep); /* the representative forwards what it received */
        dc_scatter(b, boff, olo, ohi, rep, tag);
        lo = nlo, hi = nhi;
    }
}

static void dc_gather(cs_coll_builder_t *b, const int64_t *boff, int lo, int hi, int h, int tag)
{
    int nlo, nhi, olo, ohi, rep;
    if (hi - lo <= 1)
        return;
    halves(lo, hi, h, &nlo, &nhi, &olo, &ohi, &rep);
    dc_gather(b, boff, nlo, nhi, h, tag);
    dc_gather(b, boff, olo, ohi, rep, tag);
    cs_coll_wait(b, rep); /* the representative sends what it gathered */
    xfer(b, rep, h, boff[olo], boff[ohi] - boff[olo], tag, NULL);
}

/* ---- broadcast -------------------------------------------------------------- */

/* Binomial tree on root-relative ranks, each of the S segments sent as its
 * own message: rel receives from rel - lowbit(rel) and sends to rel + mask
 * for every mask below lowbit(rel) (the root: below 2^ceil(log2 P)),
 * farthest child first, segment by segment.  S = 1 is the plain binomial
 * broadcast, the dual of the lecture's §8.1 reduce. */
static void bcast_tree(cs_coll_builder_t *b, int64_t seg, int64_t S)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, L = cs_coll_ceil_log2(P);
    for (int rel = 0; rel < P; rel++) {
        int me = real_rank(rel, a->root, P), top = rel ? lowbit(rel) : 1 << L;
        for (int64_t s = 0; s < S; s++) {
            int64_t off, len;
            int32_t r = -1;
            seg_range(a->bytes, seg, s, &off, &len);
            if (rel)
                r = cs_coll_recv_nz(b, me, real_rank(rel - top, a->root, P), off, len, (int)s);
            for (int mask = top >> 1; mask > 0; mask >>= 1) {
                if (rel + mask >= P)
                    continue;
                int32_t op = cs_coll_send_nz(b, me, real_rank(rel + mask, a->root, P), off, len, (int)s);
                cs_coll_dep(b, op, r, CS_DEP_AFTER);
            }
        }
    }
}

static int bcast_binomial(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    bcast_tree(b, a->bytes > 0 ? a->bytes : 1, 1);
    return CS_OK;
}

static int bcast_segmented_binomial(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t seg, S;
    int rc;
    if ((rc = opt_seg(a, &seg, err)) || (rc = nsegs(a, seg, &S, err)))
        return rc;
    bcast_tree(b, seg, S);
    return CS_OK;
}

/* One-to-all: the root sends the vector to every rank in turn; its send
 * port serialises them. */
static int bcast_flat(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    for (int i = 1; i < a->P; i++)
        xfer(b, a->root, real_rank(i, a->root, a->P), 0, a->bytes, TAG_DATA, NULL);
    return CS_OK;
}

/* k pipelined chains from the root over the ring order: the P-1 other
 * ranks, in ring order after the root, are cut into k contiguous chains
 * (the first (P-1) mod k one rank longer).  For each segment the root sends
 * to the k chain heads in turn; every rank forwards segment s to its
 * successor once it has received it. */
static void bcast_chains(cs_coll_builder_t *b, int k, int64_t seg, int64_t S)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int32_t *seq = chain_order(a);
    if (k > P - 1)
        k = P - 1;
    for (int64_t s = 0; s < S; s++) {
        int64_t off, len;
        seg_range(a->bytes, seg, s, &off, &len);
        for (int j = 0; j < k; j++) {
            int64_t first, cnt;
            cs_coll_split(P - 1, k, j, &first, &cnt);
            int prev = a->root;
            int32_t prev_recv = -1;
            for (int64_t q = 0; q < cnt; q++) {
                int me = seq[1 + first + q];
                int32_t r, op = xfer(b, prev, me, off, len, (int)s, &r);
                cs_coll_dep(b, op, prev_recv, CS_DEP_AFTER);
                prev = me;
                prev_recv = r;
            }
        }
    }
    free(seq);
}

static int bcast_chain(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t seg, S;
    int rc;
    if ((rc = opt_seg(a, &seg, err)) || (rc = nsegs(a, seg, &S, err)))
        return rc;
    bcast_chains(b, 1, seg, S);
    return CS_OK;
}

static int bcast_kchain(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t seg, S, k;
    int rc;
    if ((rc = opt_k(a, &k, err)) || (rc = opt_seg(a, &seg, err)) || (rc = nsegs(a, seg, &S, err)))
        return rc;
    bcast_chains(b, (int)k, seg, S);
    return CS_OK;
}

/* Ring (bucket) allgather of the P pieces [boff[i], boff[i+1]) over the
 * machine's ring order: at step t the rank at ring position p sends the
 * piece of ring[p - t] to its successor and receives the piece of
 * ring[p - 1 - t] from its predecessor; waitall between steps (lecture
 * §8.7). */
static void ring_allgather(cs_coll_builder_t *b, const int64_t *boff)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int32_t *ring = cs_calloc((size_t)P, sizeof *ring);
    cs_coll_ring(a, ring, NULL);
    for (int t = 0; t < P - 1; t++) {
        for (int p = 0; p < P; p++) {
            int me = ring[p], next = ring[(p + 1) % P], piece = ring[(p - t + P) % P];
            xfer(b, me, next, boff[piece], boff[piece + 1] - boff[piece], TAG_RING, NULL);
        }
        cs_coll_wait_all(b);
    }
    free(ring);
}

/* van de Geijn's broadcast (lecture §8.8): divide-and-conquer scatter of the
 * P pieces of the vector (piece i to rank i), then a ring allgather. */
static int bcast_scatter_allgather(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t *boff;
    if (a->P == 1)
        return CS_OK;
    boff = piece_bounds(a->P, -1, a->bytes);
    dc_scatter(b, boff, 0, a->P, a->root, TAG_SCATTER);
    cs_coll_wait_all(b);
    ring_allgather(b, boff);
    free(boff);
    return CS_OK;
}

/* ---- reduce ------------------------------------------------------------------ */

/* The lecture's bit-fixing reduce (§8.1) on root-relative ranks, each of the
 * S segments its own message: for bitmask = 1, 2, 4, ...: a rank with the
 * bit set sends to rank ^ bitmask and drops out; otherwise, if the partner
 * exists (< P: the patch for P not a power of two), it receives and adds.
 * Segment s goes to the parent once the children's segments s are reduced. */
static void reduce_tree(cs_coll_builder_t *b, int64_t seg, int64_t S)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, L = cs_coll_ceil_log2(P);
    int32_t *calcs = cs_calloc((size_t)L + 1, sizeof *calcs);
    for (int rel = 0; rel < P; rel++) {
        int me = real_rank(rel, a->root, P), top = rel ? lowbit(rel) : 1 << L;
        for (int64_t s = 0; s < S; s++) {
            int64_t off, len;
            int nc = 0;
            seg_range(a->bytes, seg, s, &off, &len);
            for (int mask = 1; mask < top && rel + mask < P; mask <<= 1)
                calcs[nc++] = cs_coll_recv_reduce_nz(b, me, real_rank(rel + mask, a->root, P), off, len, (int)s);
            if (rel) {
                int32_t op = cs_coll_send_nz(b, me, real_rank(rel - top, a->root, P), off, len, (int)s);
                for (int c = 0; c < nc; c++)
                    cs_coll_dep(b, op, calcs[c], CS_DEP_AFTER);
            }
        }
    }
    free(calcs);
}

static int reduce_binomial(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    reduce_tree(b, a->bytes > 0 ? a->bytes : 1, 1);
    return CS_OK;
}

static int reduce_segmented_binomial(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t seg, S;
    int rc;
    if ((rc = opt_seg(a, &seg, err)) || (rc = nsegs(a, seg, &S, err)))
        return rc;
    reduce_tree(b, seg, S);
    return CS_OK;
}

/* All send to the root, which receives and reduces in rank order (after
 * the root); its receive port serialises the messages. */
static int reduce_flat(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    for (int i = 1; i < a->P; i++) {
        int src = real_rank(i, a->root, a->P);
        cs_coll_send_nz(b, src, a->root, 0, a->bytes, TAG_DATA);
        cs_coll_recv_reduce_nz(b, a->root, src, 0, a->bytes, TAG_DATA);
        cs_coll_wait(b, a->root);
    }
    return CS_OK;
}

/* The chains of bcast_chains run backwards: the last rank of each chain
 * sends segment s to its predecessor, which reduces it into its own and
 * passes it on; the root receives every chain head's segment s. */
static void reduce_chains(cs_coll_builder_t *b, int k, int64_t seg, int64_t S)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int32_t *seq = chain_order(a);
    if (k > P - 1)
        k = P - 1;
    for (int64_t s = 0; s < S; s++) {
        int64_t off, len;
        seg_range(a->bytes, seg, s, &off, &len);
        for (int j = 0; j < k; j++) {
            int64_t first, cnt;
            cs_coll_split(P - 1, k, j, &first, &cnt);
            int32_t reduced = -1; /* the calc that completes segment s at `me` */
            for (int64_t q = cnt - 1; q >= 0; q--) {
                int me = seq[1 + first + q], to = q ? seq[first + q] : a->root;
                int32_t op = cs_coll_send_nz(b, me, to, off, len, (int)s);
                cs_coll_dep(b, op, reduced, CS_DEP_AFTER);
                reduced = cs_coll_recv_reduce_nz(b, to, me, off, len, (int)s);
            }
        }
    }
    free(seq);
}

static int reduce_chain(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t seg, S;
    int rc;
    if ((rc = opt_seg(a, &seg, err)) || (rc = nsegs(a, seg, &S, err)))
        return rc;
    reduce_chains(b, 1, seg, S);
    return CS_OK;
}

static int reduce_kchain(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t seg, S, k;
    int rc;
    if ((rc = opt_k(a, &k, err)) || (rc = opt_seg(a, &seg, err)) || (rc = nsegs(a, seg, &S, err)))
        return rc;
    reduce_chains(b, (int)k, seg, S);
    return CS_OK;
}

/* Rabenseifner's reduce: reduce-scatter by recursive halving, then a
 * binomial gather of the reduced pieces to the root.  With P' the largest
 * power of two <= P and r = P - P', the first 2r root-relative ranks fold
 * first: each odd one sends its whole vector to the even one below, which
 * reduces it, and drops out.  The P' survivors get new ranks (even rel < 2r
 * -> rel/2, rel >= 2r -> rel - r; the root is new rank 0) and work on the
 * vector split into P' pieces by cs_coll_split. */
static int rel_of_new(int j, int r)
{
    return j < r ? 2 * j : j + r;
}

static int reduce_rabenseifner(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, root = a->root, Pp = 1, r;
    int64_t *poff;
    if (P == 1)
        return CS_OK;
    while (Pp * 2 <= P)
        Pp *= 2;
    r = P - Pp;

    for (int rel = 1; rel < 2 * r; rel += 2) {
        int odd = real_rank(rel, root, P), even = real_rank(rel - 1, root, P);
        cs_coll_send_nz(b, odd, even, 0, a->bytes, TAG_FOLD);
        cs_coll_recv_reduce_nz(b, even, odd, 0, a->bytes, TAG_FOLD);
        cs_coll_wait(b, even);
    }

    poff = piece_bounds(Pp, -1, a->bytes);
    /* recursive halving: at distance d the partner is j ^ d; the lower new
     * rank keeps the lower half of the current piece range */
    for (int j = 0; j < Pp; j++) {
        int me = real_rank(rel_of_new(j, r), root, P), lo = 0;
        for (int d = Pp / 2; d >= 1; d /= 2) {
            int partner = real_rank(rel_of_new(j ^ d, r), root, P);
            int keep = (j & d) ? lo + d : lo, give = (j & d) ? lo : lo + d;
            cs_coll_send_nz(b, me, partner, poff[give], poff[give + d] - poff[give], TAG_HALVE);
            cs_coll_recv_reduce_nz(b, me, partner, poff[keep], poff[keep + d] - poff[keep], TAG_HALVE);
            cs_coll_wait(b, me);
            lo = keep;
        }
    }
    /* binomial gather: new rank j holds pieces [j, j + lowbit(j)) when it
     * sends them to j - lowbit(j); new rank 0 (the root) ends with all */
    for (int j = 0; j < Pp; j++) {
        int me = real_rank(rel_of_new(j, r), root, P);
        for (int mask = 1; mask < Pp; mask <<= 1) {
            if (j & mask) {
                int to = real_rank(rel_of_new(j - mask, r), root, P);
                cs_coll_send_nz(b, me, to, poff[j], poff[j + mask] - poff[j], TAG_GATHER);
                break;
            }
            /* j has no bit below `mask`: its child j + mask brings pieces
             * [j + mask, j + 2 mask); wait before the next step so that
             * everything received goes up in one message */
            int from = real_rank(rel_of_new(j + mask, r), root, P);
            cs_coll_recv_nz(b, me, from, poff[j + mask], poff[j + 2 * mask] - poff[j + mask], TAG_GATHER);
            cs_coll_wait(b, me);
        }
    }
    free(poff);
    return CS_OK;
}

/* ---- scatter and gather ---------------------------------------------------- */

/* Naive scatter (lecture §8.4): the root sends block i to rank i, one at a
 * time, in rank order after the root. */
static int scatter_flat(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t m = a->bytes;
    for (int i = 1; i < a->P; i++) {
        int dst = real_rank(i, a->root, a->P);
        xfer(b, a->root, dst, (int64_t)dst * m, m, TAG_DATA, NULL);
    }
    return CS_OK;
}

static int scatter_binomial(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t *boff = piece_bounds(a->P, a->bytes, 0);
    dc_scatter(b, boff, 0, a->P, a->root, TAG_DATA);
    free(boff);
    return CS_OK;
}

/* Every rank sends its block to the root, which receives them in rank order
 * after the root. */
static int gather_flat(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t m = a->bytes;
    for (int i = 1; i < a->P; i++) {
        int src = real_rank(i, a->root, a->P);
        xfer(b, src, a->root, (int64_t)src * m, m, TAG_DATA, NULL);
    }
    return CS_OK;
}

static int gather_binomial(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t *boff = piece_bounds(a->P, a->bytes, 0);
    dc_gather(b, boff, 0, a->P, a->root, TAG_DATA);
    free(boff);
    return CS_OK;
}

/* ---- registry table ------------------------------------------------------- */

static const char *const keys_seg[] = {"seg", NULL};
static const char *const keys_kseg[] = {"k", "seg", NULL};

#define SEG_TEXT "seg=BYTES segment size (default: the machine's packet size)"
#define K_TEXT   "k=N chains (default 2; more than P-1 act as P-1)"

static const cs_coll_algo_t bcast_binomial_algo = {
    .kind = CS_COLL_BROADCAST,
    .name = "binomial",
    .summary = "binomial tree from the root, farthest child first: ceil(log2 P) rounds of the "
               "whole vector",
    .source = "lecture §8.1 (dual of the tree reduce)",
    .options = "",
    .keys = NULL,
    .build = bcast_binomial,
};

static const cs_coll_algo_t bcast_flat_algo = {
    .kind = CS_COLL_BROADCAST,
    .name = "flat",
    .summary = "one-to-all: the root sends the vector to every rank in turn",
    .source = "lecture rule 3 (one send at a time), as in §8.4",
    .options = "",
    .keys = NULL,
    .build = bcast_flat,
};

static const cs_coll_algo_t bcast_chain_algo = {
    .kind = CS_COLL_BROADCAST,
    .name = "chain",
    .summary = "pipelined chain root -> next -> ... in ring order, one message per segment",
    .source = "generic (MPI)",
    .options = SEG_TEXT,
    .keys = keys_seg,
    .build = bcast_chain,
};

static const cs_coll_algo_t bcast_kchain_algo = {
    .kind = CS_COLL_BROADCAST,
    .name = "kchain",
    .summary = "k pipelined chains from the root over the ring order, one message per segment",
    .source = "generic (MPI)",
    .options = K_TEXT "; " SEG_TEXT,
    .keys = keys_kseg,
    .build = bcast_kchain,
};

static const cs_coll_algo_t bcast_sag_algo = {
    .kind = CS_COLL_BROADCAST,
    .name = "scatter-allgather",
    .summary = "van de Geijn: divide-and-conquer scatter of P pieces, then ring allgather",
    .source = "lecture §8.8",
    .options = "",
    .keys = NULL,
    .build = bcast_scatter_allgather,
};

static const cs_coll_algo_t bcast_segbin_algo = {
    .kind = CS_COLL_BROADCAST,
    .name = "segmented-binomial",
    .summary = "binomial tree pipelined in segments (a rank forwards segment s once it has it)",
    .source = "generic (MPI)",
    .options = SEG_TEXT,
    .keys = keys_seg,
    .build = bcast_segmented_binomial,
};

static const cs_coll_algo_t reduce_binomial_algo = {
    .kind = CS_COLL_REDUCE,
    .name = "binomial",
    .summary = "bit-fixing tree, senders drop out, partner >= P skipped: ceil(log2 P) rounds",
    .source = "lecture §8.1",
    .options = "",
    .keys = NULL,
    .build = reduce_binomial,
};

static const cs_coll_algo_t reduce_flat_algo = {
    .kind = CS_COLL_REDUCE,
    .name = "flat",
    .summary = "all send to the root, which reduces them in order",
    .source = "generic (all-to-one, dual of the flat broadcast)",
    .options = "",
    .keys = NULL,
    .build = reduce_flat,
};

static const cs_coll_algo_t reduce_chain_algo = {
    .kind = CS_COLL_REDUCE,
    .name = "chain",
    .summary = "pipelined reverse chain in ring order: receive segment, add, pass on",
    .source = "generic (MPI)",
    .options = SEG_TEXT,
    .keys = keys_seg,
    .build = reduce_chain,
};

static const cs_coll_algo_t reduce_kchain_algo = {
    .kind = CS_COLL_REDUCE,
    .name = "kchain",
    .summary = "k pipelined reverse chains ending at the root",
    .source = "generic (MPI)",
    .options = K_TEXT "; " SEG_TEXT,
    .keys = keys_kseg,
    .build = reduce_kchain,
};

static const cs_coll_algo_t reduce_rabenseifner_algo = {
    .kind = CS_COLL_REDUCE,
    .name = "rabenseifner",
    .summary = "reduce-scatter by recursive halving, then binomial gather to the root",
    .source = "Rabenseifner (generic); lecture §8.9 pattern",
    .options = "",
    .keys = NULL,
    .build = reduce_rabenseifner,
};

static const cs_coll_algo_t reduce_segbin_algo = {
    .kind = CS_COLL_REDUCE,
    .name = "segmented-binomial",
    .summary = "bit-fixing tree pipelined in segments (segment s goes up once reduced)",
    .source = "generic (MPI)",
    .options = SEG_TEXT,
    .keys = keys_seg,
    .build = reduce_segmented_binomial,
};

static const cs_coll_algo_t scatter_binomial_algo = {
    .kind = CS_COLL_SCATTER,
    .name = "binomial",
    .summary = "divide and conquer: halve the rank range, send the other half's blocks to a "
               "representative",
    .source = "lecture §8.5",
    .options = "",
    .keys = NULL,
    .build = scatter_binomial,
};

static const cs_coll_algo_t scatter_flat_algo = {
    .kind = CS_COLL_SCATTER,
    .name = "flat",
    .summary = "naive: the root sends block i to rank i, one at a time",
    .source = "lecture §8.4",
    .options = "",
    .keys = NULL,
    .build = scatter_flat,
};

static const cs_coll_algo_t gather_binomial_algo = {
    .kind = CS_COLL_GATHER,
    .name = "binomial",
    .summary = "divide and conquer (dual of the scatter): representatives gather halves, then send "
               "them up",
    .source = "lecture §8.5",
    .options = "",
    .keys = NULL,
    .build = gather_binomial,
};

static const cs_coll_algo_t gather_flat_algo = {
    .kind = CS_COLL_GATHER,
    .name = "flat",
    .summary = "every rank sends its block to the root, one at a time",
    .source = "lecture §8.4 (dual)",
    .options = "",
    .keys = NULL,
    .build = gather_flat,
};

/* Listing order within each collective: the default first. */
const cs_coll_algo_t *const cs_coll_group_rooted[] = {
    /* broadcast */
    &bcast_binomial_algo,
    &bcast_flat_algo,
    &bcast_chain_algo,
    &bcast_kchain_algo,
    &bcast_sag_algo,
    &bcast_segbin_algo,
    /* reduce */
    &reduce_binomial_algo,
    &reduce_flat_algo,
    &reduce_chain_algo,
    &reduce_kchain_algo,
    &reduce_rabenseifner_algo,
    &reduce_segbin_algo,
    /* scatter */
    &scatter_binomial_algo,
    &scatter_flat_algo,
    /* gather */
    &gather_binomial_algo,
    &gather_flat_algo,
    NULL,
};
