/*
 * symmetric.c - the collectives without a root: allgather, reduce-scatter,
 * allreduce, barrier and alltoall, written once against the emission API of
 * coll.h.
 *
 * Sources:
 *   - the message-passing lecture (shared/papers/004, notes in
 *     shared/reference/alpha-beta.md): §8.3 allgather = gather + broadcast,
 *     §8.7 the bucket (ring) allgather and its dual reduce-scatter, §8.9
 *     allreduce = reduce-scatter + allgather, §8.1 the binomial tree used by
 *     the reduce + broadcast allreduce and the tree barrier;
 *   - the standard MPI library algorithms the issue lists as "generic":
 *     recursive doubling and halving with the extra ranks of a non-power of
 *     two folded in first (Thakur, Rabenseifner, Gropp 2005), Rabenseifner's
 *     allreduce, Bruck's allgather and alltoall (Bruck et al. 1997), the
 *     dissemination barrier (Hensgen, Finkel, Manber 1988), pairwise
 *     exchange alltoall;
 *   - the butterfly with group size G of the Cerebras thesis (Ch. 7, Lemma
 *     7.3, notes in shared/reference/cerebras-wse.md §2.5 and §3).
 *
 * Conventions shared by every algorithm here (the same as rooted.c):
 *   - any P >= 1 (P = 1 emits nothing), any size >= 0;
 *   - zero-length messages are skipped on both sides (both sides compute
 *     the same length); a barrier always moves 1-byte tokens, range [0, 1);
 *   - data stays at its natural offset: block i of an allgather,
 *     reduce-scatter or alltoall buffer is [i*m, (i+1)*m); a piece of a split
 *     vector is cs_coll_split's range.  Ranges beyond the nominal buffer are
 *     scratch (Bruck's extended buffer and staging areas);
 *   - a round is "post every send of the round, then every recv, then wait".
 *     A send reads its range when it starts (program.h), so a rank may send
 *     a range and receive into the same range in one round: the send has
 *     read it before any message of the round can arrive.  Where a rank
 *     sends several messages that must leave in a given order (the direct
 *     butterfly, the pairwise alltoall), its sends are chained one after the
 *     other and its recvs posted once they are done: the ports' first-fit
 *     arbitration would otherwise pick another order, and a later send would
 *     read data that an earlier recv had already changed;
 *   - non-powers of two in recursive doubling/halving: the first 2e ranks
 *     (e = P - 2^floor(log2 P)) pair up, the odd one of each pair hands its
 *     data to the even one and sits out, and gets the result back at the
 *     end.  Pairing neighbours (not r and r + 2^k) keeps every virtual rank's
 *     blocks contiguous, so every message is one range;
 *   - the alltoall is in place, as check.c defines it: rank r's block j
 *     holds its data for rank j at the start and rank j's data for r at the
 *     end;
 *   - the program model has no local copy: Bruck's rotations and packing are
 *     messages of a rank to itself (local_copy), which the validator follows
 *     and which a machine prices as a message that crosses no link (the
 *     alphabeta machine charges its send overhead alpha for one).
 */
#include "coll/coll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Tags of the phases: a pair of ranks may exchange messages in several
 * phases, and distinct tags keep them from matching across phases.  Within a
 * phase messages between a pair are posted in the same order on both sides. */
enum {
    TAG_DATA = 0,    /* single-phase algorithms */
    TAG_FOLD = 1,    /* handing the data of an extra rank to its partner */
    TAG_UNFOLD = 2,  /* returning the result to the extra rank */
    TAG_RS = 3,      /* reduce-scatter phase */
    TAG_AG = 4,      /* allgather phase */
    TAG_UP = 5,      /* towards rank 0 (gather, reduce, arrival) */
    TAG_DOWN = 6,    /* away from rank 0 (broadcast, release) */
    TAG_LOCAL = 7    /* local copies (messages to self) */
};

/* ---- small helpers ------------------------------------------------------- */

static int lowbit(int x) { return x & -x; }
static int mod(int64_t x, int P) { return (int)(((x % P) + P) % P); }

/* Largest power of two <= P (P >= 1). */
static int pow2_floor(int P)
{
    int p = 1;
    while (p <= P / 2)
        p *= 2;
    return p;
}

/* Receives [off, off+len): copying or reducing. */
static int32_t rcv_as(cs_coll_builder_t *b, int at, int from, int64_t off, int64_t len, int tag,
                      int reduce)
{
    return reduce ? cs_coll_recv_reduce_nz(b, at, from, off, len, tag) : cs_coll_recv_nz(b, at, from, off, len, tag);
}

/* A copy [src, src+len) -> [dst, dst+len) inside one rank's buffer.  The
 * program model has no copy op, so it is a message to itself: the validator
 * sees the data move, and the machine prices it (a message that crosses no
 * link; the alphabeta machine charges its send overhead).  Copies issued in
 * one batch all read before any of them writes (sends read when they start). */
static void local_copy(cs_coll_builder_t *b, int r, int64_t src, int64_t dst, int64_t len)
{
    if (len <= 0 || src == dst)
        return;
    cs_coll_send(b, r, r, src, len, TAG_LOCAL);
    cs_coll_recv(b, r, r, dst, len, TAG_LOCAL);
}

/* Copies of equal-size blocks, merged into runs where both the sources and
 * the destinations are consecutive. */
typedef struct copies {
    int64_t *src, *dst;
    int n, cap;
} copies_t;

static void copies_add(copies_t *c, int64_t src, int64_t dst)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        c->src = cs_realloc(c->src, (size_t)c->cap * sizeof *c->src);
        c->dst = cs_realloc(c->dst, (size_t)c->cap * sizeof *c->dst);
    }
    c->src[c->n] = src;
    c->dst[c->n] = dst;
    c->n++;
}

static void copies_emit(cs_coll_builder_t *b, int r, copies_t *c, int64_t m)
{
    for (int i = 0; i < c->n;) {
        int j = i + 1;
        while (j < c->n && c->src[j] == c->src[j - 1] + m && c->dst[j] == c->dst[j - 1] + m)
            j++;
        local_copy(b, r, c->src[i], c->dst[i], (int64_t)(j - i) * m);
        i = j;
    }
    c->n = 0;
}

static void copies_free(copies_t *c)
{
    free(c->src);
    free(c->dst);
}

/* ---- folding the extra ranks of a non-power of two ----------------------- */

/* P = Pp + e with Pp the largest power of two <= P.  Ranks 2i and 2i+1
 * (i < e) form virtual rank i, represented by 2i; rank r >= 2e is virtual
 * rank r - e.  Virtual rank v stands for the real ranks [first(v),
 * first(v+1)), so any range of virtual ranks covers a contiguous range of
 * real ranks (and of their blocks). */
typedef struct fold {
    int P, Pp, e;
} fold_t;

static fold_t fold_make(int P)
{
    fold_t f;
    f.P = P;
    f.Pp = pow2_floor(P);
    f.e = P - f.Pp;
    return f;
}

/* Virtual rank of r, or -1 for an extra rank (an odd rank below 2e). */
static int fold_virt(const fold_t *f, int r)
{
    if (r < 2 * f->e)
        return r % 2 ? -1 : r / 2;
    return r - f->e;
}

/* The real rank that represents virtual rank v. */
static int fold_real(const fold_t *f, int v) { return v < f->e ? 2 * v : v + f->e; }

/* First real rank that virtual rank v stands for (v may be Pp: returns P). */
static int fold_first(const fold_t *f, int v) { return v < f->e ? 2 * v : v + f->e; }

/* Extra ranks hand [off, off+len) to their even partner, which adds it
 * (reduce = 1) or just takes note (0: a barrier token). */
static void fold_in(cs_coll_builder_t *b, const fold_t *f, int64_t off, int64_t len, int reduce)
{
    for (int i = 0; i < f->e; i++) {
        cs_coll_send_nz(b, 2 * i + 1, 2 * i, off, len, TAG_FOLD);
        rcv_as(b, 2 * i, 2 * i + 1, off, len, TAG_FOLD, reduce);
    }
    cs_coll_wait_all(b);
}

/* The even partner returns [off, off+len) to its extra rank. */
static void fold_out(cs_coll_builder_t *b, const fold_t *f, int64_t off, int64_t len)
{
    for (int i = 0; i < f->e; i++) {
        cs_coll_send_nz(b, 2 * i, 2 * i + 1, off, len, TAG_UNFOLD);
        cs_coll_recv_nz(b, 2 * i + 1, 2 * i, off, len, TAG_UNFOLD);
    }
    cs_coll_wait_all(b);
}

/* ---- shared building blocks ------------------------------------------------ */

/* Ring allgather among the G ranks grp[0..G) (in ring order): piece i,
 * [off[i], off[i]+len[i]), starts at position i.  In step s position i
 * passes on the piece it received in step s-1 (its own in step 0):
 * G-1 steps of one piece each. */
static void ring_allgather(cs_coll_builder_t *b, const int32_t *grp, int G, const int64_t *off,
                           const int64_t *len, int tag)
{
    for (int s = 0; s < G - 1; s++) {
        for (int i = 0; i < G; i++) {
            int ps = mod(i - s, G), pr = mod(i - s - 1, G);
            cs_coll_send_nz(b, grp[i], grp[(i + 1) % G], off[ps], len[ps], tag);
            cs_coll_recv_nz(b, grp[i], grp[(i + G - 1) % G], off[pr], len[pr], tag);
        }
        for (int i = 0; i < G; i++)
            cs_coll_wait(b, grp[i]);
    }
}

/* Ring reduce-scatter among grp[0..G): position i ends with piece i reduced
 * over the group.  In step s position i sends its partial sum of piece
 * i-s-1 (its own data in step 0) and adds the partial sum of piece i-s-2
 * that arrives: piece j starts at position j+1 and ends at j after G-1 steps. */
static void ring_reduce_scatter(cs_coll_builder_t *b, const int32_t *grp, int G,
                                const int64_t *off, const int64_t *len, int tag)
{
    for (int s = 0; s < G - 1; s++) {
        for (int i = 0; i < G; i++) {
            int ps = mod(i - s - 1, G), pr = mod(i - s - 2, G);
            cs_coll_send_nz(b, grp[i], grp[(i + 1) % G], off[ps], len[ps], tag);
            cs_coll_recv_reduce_nz(b, grp[i], grp[(i + G - 1) % G], off[pr], len[pr], tag);
        }
        for (int i = 0; i < G; i++)
            cs_coll_wait(b, grp[i]);
    }
}

/* Binomial tree rooted at rank 0 (the lecture's bit-fixing tree, §8.1):
 * the parent of r > 0 is r - lowbit(r); its children are r + 2^j for
 * 2^j < lowbit(r) (all 2^j < P for r = 0), r + 2^j < P.  The subtree of r
 * covers the ranks [r, min(r + lowbit(r), P)) (all of them for r = 0). */
static int tree_span(int r, int P) { return r == 0 ? P : (r + lowbit(r) < P ? lowbit(r) : P - r); }

/* Child bound of r: children are r + 2^j with 2^j < bound. */
static int tree_bound(int r, int P) { return r == 0 ? 2 * pow2_floor(P) : lowbit(r); }

/* Up the tree to rank 0, each rank taking its children in increasing
 * subtree size, one at a time as in the lecture's pseudocode, then passing
 * on to its parent.  m > 0: a gather of the per-rank blocks [r*m, (r+1)*m)
 * (a rank passes up its subtree's blocks, one range).  m = 0: every message
 * carries [off, off+len), added (reduce = 1) or copied (a barrier token). */
static void tree_up(cs_coll_builder_t *b, int P, int reduce, int64_t off, int64_t len, int64_t m)
{
    for (int r = 0; r < P; r++) {
        for (int d = 1; d < tree_bound(r, P) && r + d < P; d *= 2) {
            int c = r + d;
            if (m > 0)
                cs_coll_recv_nz(b, r, c, (int64_t)c * m, (int64_t)tree_span(c, P) * m, TAG_UP);
            else
                rcv_as(b, r, c, off, len, TAG_UP, reduce);
            cs_coll_wait(b, r);
        }
        if (r > 0) {
            int parent = r - lowbit(r);
            if (m > 0)
                cs_coll_send_nz(b, r, parent, (int64_t)r * m, (int64_t)tree_span(r, P) * m, TAG_UP);
            else
                cs_coll_send_nz(b, r, parent, off, len, TAG_UP);
        }
        cs_coll_wait(b, r);
    }
}

/* Broadcast [off, off+len) from rank 0 down the tree, farthest child first. */
static void tree_down(cs_coll_builder_t *b, int P, int64_t off, int64_t len)
{
    for (int r = 0; r < P; r++) {
        if (r > 0) {
            cs_coll_recv_nz(b, r, r - lowbit(r), off, len, TAG_DOWN);
            cs_coll_wait(b, r);
        }
        for (int d = tree_bound(r, P) / 2; d >= 1; d /= 2)
            if (r + d < P)
                cs_coll_send_nz(b, r, r + d, off, len, TAG_DOWN);
        cs_coll_wait(b, r);
    }
}

/* ======================================================================= */
/* allgather (m = per-rank block)                                           */
/* ======================================================================= */

/* Ring / bucket (lecture §8.7): P-1 steps over the machine's ring order,
 * each rank passes on the block it received last.  (alpha + beta m)(P-1). */
static int allgather_ring(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int32_t *ring = cs_malloc((size_t)P * sizeof *ring);
    int64_t *off = cs_malloc((size_t)P * sizeof *off), *len = cs_malloc((size_t)P * sizeof *len);
    (void)err;
    cs_coll_ring(a, ring, NULL);
    for (int i = 0; i < P; i++) {
        off[i] = (int64_t)ring[i] * a->bytes;
        len[i] = a->bytes;
    }
    ring_allgather(b, ring, P, off, len, TAG_DATA);
    free(ring);
    free(off);
    free(len);
    return CS_OK;
}

/* Recursive doubling: in round k virtual rank v swaps its 2^k virtual
 * ranks' blocks with v ^ 2^k.  Extra ranks hand their block in first and
 * get the whole buffer back at the end.  P a power of two:
 * alpha log2 P + beta m (P-1). */
static int allgather_rdb(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t m = a->bytes;
    fold_t f = fold_make(P);
    (void)err;
    if (P == 1 || m == 0)
        return CS_OK;
    /* an extra rank's block joins its partner's: no reduction, just a copy */
    for (int i = 0; i < f.e; i++) {
        cs_coll_send_nz(b, 2 * i + 1, 2 * i, (int64_t)(2 * i + 1) * m, m, TAG_FOLD);
        cs_coll_recv_nz(b, 2 * i, 2 * i + 1, (int64_t)(2 * i + 1) * m, m, TAG_FOLD);
    }
    cs_coll_wait_all(b);
    for (int d = 1; d < f.Pp; d *= 2) {
        for (int r = 0; r < P; r++) {
            int v = fold_virt(&f, r), pv, lo, plo;
            if (v < 0)
                continue;
            pv = v ^ d;
            lo = v & ~(d - 1);
            plo = pv & ~(d - 1);
            int64_t so = (int64_t)fold_first(&f, lo) * m;
            int64_t sl = (int64_t)fold_first(&f, lo + d) * m - so;
            int64_t ro = (int64_t)fold_first(&f, plo) * m;
            int64_t rl = (int64_t)fold_first(&f, plo + d) * m - ro;
            cs_coll_send_nz(b, r, fold_real(&f, pv), so, sl, TAG_DATA);
            cs_coll_recv_nz(b, r, fold_real(&f, pv), ro, rl, TAG_DATA);
        }
        cs_coll_wait_recvs_all(b); /* the blocks sent are never written again */
    }
    fold_out(b, &f, 0, (int64_t)P * m);
    return CS_OK;
}

/* Bruck: in round k (2^k < P) rank r sends the c = min(2^k, P - 2^k) blocks
 * r, r+1, ... it holds to r - 2^k and receives blocks r+2^k, ... from
 * r + 2^k.  The held blocks are a cyclic window; to send it as one range the
 * rank keeps it in an extended buffer of 2P blocks (position j holds block
 * j mod P), and at the end moves blocks 0..r-1 from positions P..P+r-1
 * home with one local copy (the lecture model's free rotation).
 * alpha ceil(log2 P) + beta m (P-1), plus the copy. */
static int allgather_bruck(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t m = a->bytes;
    (void)err;
    if (P == 1 || m == 0)
        return CS_OK;
    for (int d = 1; d < P; d *= 2) {
        int c = d < P - d ? d : P - d;
        for (int r = 0; r < P; r++) {
            /* window [r, r+d) in extended positions; the new blocks go
             * right after it */
            cs_coll_send_nz(b, r, mod(r - d, P), (int64_t)r * m, (int64_t)c * m, TAG_DATA);
            cs_coll_recv_nz(b, r, (r + d) % P, (int64_t)(r + d) * m, (int64_t)c * m, TAG_DATA);
        }
        cs_coll_wait_all(b);
    }
    for (int r = 1; r < P; r++)
        local_copy(b, r, (int64_t)P * m, 0, (int64_t)r * m);
    cs_coll_wait_all(b);
    return CS_OK;
}

/* Gather + broadcast (lecture §8.3): binomial gather to rank 0, binomial
 * broadcast of the P*m bytes.  P a power of two: alpha log2 P + beta m (P-1)
 * for the gather, (alpha + beta m P) log2 P for the broadcast. */
static int allgather_gather_bcast(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    (void)err;
    if (a->P == 1 || a->bytes == 0)
        return CS_OK;
    tree_up(b, a->P, 0, 0, 0, a->bytes);
    tree_down(b, a->P, 0, (int64_t)a->P * a->bytes);
    return CS_OK;
}

/* ======================================================================= */
/* reduce-scatter (m = per-rank block; rank r ends with block r reduced)    */
/* ======================================================================= */

/* Ring (lecture §8.7, dual of the bucket allgather): P-1 steps over the
 * ring order, reduce on receipt.  (alpha + beta m)(P-1) + (P-1) m reduced. */
static int reduce_scatter_ring(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int32_t *ring = cs_malloc((size_t)P * sizeof *ring);
    int64_t *off = cs_malloc((size_t)P * sizeof *off), *len = cs_malloc((size_t)P * sizeof *len);
    (void)err;
    cs_coll_ring(a, ring, NULL);
    for (int i = 0; i < P; i++) { /* position i ends with piece i: its own block */
        off[i] = (int64_t)ring[i] * a->bytes;
        len[i] = a->bytes;
    }
    ring_reduce_scatter(b, ring, P, off, len, TAG_DATA);
    free(ring);
    free(off);
    free(len);
    return CS_OK;
}

/* Recursive halving over the virtual ranks [0, Pp) whose "piece" v is the
 * byte range [poff[v], poff[v+1]): in each round a rank keeps the half of
 * its current range that contains its own piece, sends the other half to
 * v ^ d and adds the partner's copy of its half.  Ends with piece v on v. */
static void halving(cs_coll_builder_t *b, const fold_t *f, const int64_t *poff, int tag)
{
    for (int d = f->Pp / 2; d >= 1; d /= 2) {
        for (int r = 0; r < f->P; r++) {
            int v = fold_virt(f, r), lo, keep, give;
            if (v < 0)
                continue;
            lo = v & ~(2 * d - 1);
            keep = v & d ? lo + d : lo;
            give = v & d ? lo : lo + d;
            cs_coll_send_nz(b, r, fold_real(f, v ^ d), poff[give], poff[give + d] - poff[give], tag);
            cs_coll_recv_reduce_nz(b, r, fold_real(f, v ^ d), poff[keep], poff[keep + d] - poff[keep], tag);
        }
        cs_coll_wait_recvs_all(b); /* the half given away is not written again */
    }
}

/* Recursive doubling allgather of the pieces left by halving(). */
static void doubling(cs_coll_builder_t *b, const fold_t *f, const int64_t *poff, int tag)
{
    for (int d = 1; d < f->Pp; d *= 2) {
        for (int r = 0; r < f->P; r++) {
            int v = fold_virt(f, r), lo, plo;
            if (v < 0)
                continue;
            lo = v & ~(d - 1);
            plo = (v ^ d) & ~(d - 1);
            cs_coll_send_nz(b, r, fold_real(f, v ^ d), poff[lo], poff[lo + d] - poff[lo], tag);
            cs_coll_recv_nz(b, r, fold_real(f, v ^ d), poff[plo], poff[plo + d] - poff[plo], tag);
        }
        cs_coll_wait_recvs_all(b); /* nor are the pieces sent here */
    }
}

/* Recursive halving: extra ranks hand in their whole buffer (reduced by
 * the partner), log2 Pp halving rounds over the virtual ranks (virtual rank
 * v's piece is the blocks of the real ranks it stands for), then each even
 * partner returns its extra rank's block.  P a power of two:
 * alpha log2 P + beta m (P-1). */
static int reduce_scatter_halving(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t m = a->bytes;
    fold_t f = fold_make(P);
    int64_t *poff;
    (void)err;
    if (P == 1 || m == 0)
        return CS_OK;
    fold_in(b, &f, 0, (int64_t)P * m, 1);
    poff = cs_malloc((size_t)(f.Pp + 1) * sizeof *poff);
    for (int v = 0; v <= f.Pp; v++)
        poff[v] = (int64_t)fold_first(&f, v) * m;
    halving(b, &f, poff, TAG_DATA);
    free(poff);
    for (int i = 0; i < f.e; i++) {
        cs_coll_send_nz(b, 2 * i, 2 * i + 1, (int64_t)(2 * i + 1) * m, m, TAG_UNFOLD);
        cs_coll_recv_nz(b, 2 * i + 1, 2 * i, (int64_t)(2 * i + 1) * m, m, TAG_UNFOLD);
    }
    cs_coll_wait_all(b);
    return CS_OK;
}

/* Pairwise (direct): in step k = 1..P-1 rank r sends its block r+k to
 * rank r+k and adds rank r-k's copy of block r.  (alpha + beta m)(P-1). */
static int reduce_scatter_pairwise(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t m = a->bytes;
    (void)err;
    for (int k = 1; k < P; k++) {
        for (int r = 0; r < P; r++) {
            int to = (r + k) % P, from = mod(r - k, P);
            cs_coll_send_nz(b, r, to, (int64_t)to * m, m, TAG_DATA);
            cs_coll_recv_reduce_nz(b, r, from, (int64_t)r * m, m, TAG_DATA);
        }
        cs_coll_wait_all(b);
    }
    return CS_OK;
}

/* ======================================================================= */
/* allreduce (n = the whole vector)                                        */
/* ======================================================================= */

/* Ring = ring reduce-scatter + ring allgather (lecture §8.9) over the P
 * pieces of cs_coll_split, in the machine's ring order; position i owns
 * piece i.  2(P-1)(alpha + beta n/P) when P divides n, plus the reductions. */
static int allreduce_ring(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int32_t *ring = cs_malloc((size_t)P * sizeof *ring);
    int64_t *off = cs_malloc((size_t)P * sizeof *off), *len = cs_malloc((size_t)P * sizeof *len);
    (void)err;
    cs_coll_ring(a, ring, NULL);
    for (int i = 0; i < P; i++)
        cs_coll_split(a->bytes, P, i, &off[i], &len[i]);
    ring_reduce_scatter(b, ring, P, off, len, TAG_RS);
    ring_allgather(b, ring, P, off, len, TAG_AG);
    free(ring);
    free(off);
    free(len);
    return CS_OK;
}

/* Recursive doubling on the whole vector: log2 Pp rounds of exchange and
 * add with v ^ 2^k, the extra ranks folded in and out.  P a power of two:
 * (alpha + beta n) log2 P. */
static int allreduce_rdb(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t n = a->bytes;
    fold_t f = fold_make(P);
    (void)err;
    if (P == 1 || n == 0)
        return CS_OK;
    fold_in(b, &f, 0, n, 1);
    for (int d = 1; d < f.Pp; d *= 2) {
        for (int r = 0; r < P; r++) {
            int v = fold_virt(&f, r);
            if (v < 0)
                continue;
            cs_coll_send_nz(b, r, fold_real(&f, v ^ d), 0, n, TAG_DATA);
            cs_coll_recv_reduce_nz(b, r, fold_real(&f, v ^ d), 0, n, TAG_DATA);
        }
        /* the next round needs the partner's vector, not its ACK: rounds
         * overlap, one receive buffer per round (the Cell paper §3.5) */
        cs_coll_wait_recvs_all(b);
    }
    fold_out(b, &f, 0, n);
    return CS_OK;
}

/* Rabenseifner: recursive-halving reduce-scatter of the Pp pieces of
 * cs_coll_split, then recursive-doubling allgather, extra ranks folded in
 * and out.  P a power of two: 2 alpha log2 P + 2 beta n (P-1)/P. */
static int allreduce_rabenseifner(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t n = a->bytes, len;
    fold_t f = fold_make(P);
    int64_t *poff;
    (void)err;
    if (P == 1 || n == 0)
        return CS_OK;
    fold_in(b, &f, 0, n, 1);
    poff = cs_malloc((size_t)(f.Pp + 1) * sizeof *poff);
    for (int v = 0; v < f.Pp; v++)
        cs_coll_split(n, f.Pp, v, &poff[v], &len);
    poff[f.Pp] = n;
    halving(b, &f, poff, TAG_RS);
    doubling(b, &f, poff, TAG_AG);
    free(poff);
    fold_out(b, &f, 0, n);
    return CS_OK;
}

/* Reduce + broadcast (lecture §8.6 "naive"): binomial reduce to rank 0,
 * binomial broadcast.  2 ceil(log2 P)(alpha + beta n). */
static int allreduce_reduce_bcast(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    (void)err;
    if (a->P == 1 || a->bytes == 0)
        return CS_OK;
    tree_up(b, a->P, 1, 0, a->bytes, 0);
    tree_down(b, a->P, 0, a->bytes);
    return CS_OK;
}

static const char *const inner_choices[] = {"direct", "ring", NULL};

/* Butterfly with group size G (Cerebras thesis Ch. 7): with Pg = G^L the
 * largest power of G <= P, rank x >= Pg hands its vector to x mod Pg first
 * and gets the result back at the end.  In round i the core ranks that
 * differ only in base-G digit i form a group of G and allreduce the whole
 * vector among themselves: inner=direct sends it to the G-1 others and adds
 * theirs (member q sends to q+1, q+2, ... so that every step is a
 * permutation), inner=ring runs a ring allreduce in the group (the thesis's
 * version).  P = G^L: L (G-1)(alpha + beta n) direct, L 2(G-1)(alpha +
 * beta n/G) ring (G | n).  G = 2, direct, is recursive doubling. */
static int allreduce_butterfly(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, G, inner = 0, Pg = 1;
    int64_t n = a->bytes, g;
    int rc;
    if ((rc = cs_coll_opt_int(a, "g", 2, 2, 1 << 20, &g, err)))
        return rc;
    if (a->opts && (rc = cs_spec_get_choice(a->opts, "inner", inner_choices, 0, &inner, err)))
        return rc;
    if (P == 1 || n == 0)
        return CS_OK;
    G = g < P ? (int)g : P; /* a group larger than P is all P ranks */
    while ((int64_t)Pg * G <= P)
        Pg *= G;
    /* fold in: core c receives from c + Pg, c + 2 Pg, ... */
    for (int x = Pg; x < P; x++) {
        cs_coll_send_nz(b, x, x % Pg, 0, n, TAG_FOLD);
        cs_coll_recv_reduce_nz(b, x % Pg, x, 0, n, TAG_FOLD);
    }
    cs_coll_wait_all(b);
    int32_t *grp = cs_malloc((size_t)G * sizeof *grp);
    int64_t *off = cs_malloc((size_t)G * sizeof *off), *len = cs_malloc((size_t)G * sizeof *len);
    for (int i = 0; i < G; i++)
        cs_coll_split(n, G, i, &off[i], &len[i]);
    for (int stride = 1; stride < Pg; stride *= G) {
        for (int base = 0; base < Pg; base++) {
            if ((base / stride) % G) /* one visit per group: its digit-0 member */
                continue;
            for (int q = 0; q < G; q++)
                grp[q] = base + q * stride;
            if (inner == 1) {
                ring_reduce_scatter(b, grp, G, off, len, TAG_RS);
                ring_allgather(b, grp, G, off, len, TAG_AG);
                continue;
            }
            /* member q sends to q+1, q+2, ... one after the other (so that
             * every step is a permutation of the group), and posts its recvs
             * once its sends are done: every send reads the vector before
             * any partner's data is added into it */
            for (int q = 0; q < G; q++) {
                int32_t prev = -1;
                for (int t = 1; t < G; t++) {
                    int32_t s = cs_coll_send_nz(b, grp[q], grp[(q + t) % G], 0, n, TAG_DATA);
                    cs_coll_dep(b, s, prev, CS_DEP_AFTER);
                    prev = s;
                }
                cs_coll_wait(b, grp[q]);
                for (int t = 1; t < G; t++)
                    cs_coll_recv_reduce_nz(b, grp[q], grp[(q - t + G) % G], 0, n, TAG_DATA);
                cs_coll_wait(b, grp[q]);
            }
        }
    }
    free(grp);
    free(off);
    free(len);
    /* fold out */
    for (int x = Pg; x < P; x++) {
        cs_coll_send_nz(b, x % Pg, x, 0, n, TAG_UNFOLD);
        cs_coll_recv_nz(b, x, x % Pg, 0, n, TAG_UNFOLD);
    }
    cs_coll_wait_all(b);
    return CS_OK;
}

/* ---- the gateway all-reduce (Groq ISCA'22 §5.6) ---------------------------
 * The paper's three-stage all-reduce of a small tensor on the Dragonfly,
 * "the 8-way fully connected TSPs within each node as the first stage, the
 * four global links between nodes for the second stage, and final 8-way
 * fully connected network within each node", 3 hops x 722 ns = 2,166 ns on
 * 256 TSPs (reference/groq-dragonfly.md §4), written against the hints only:
 *
 *   1. inside every group, every rank sends its vector to every group mate
 *      and adds theirs: each holds the group's sum (one hop on a fully
 *      connected group, all links at once);
 *   2. for every pair of groups g != h, g's gateway towards h (the hint:
 *      the rank at g's end of a link joining them) sends the group's sum to
 *      its partner, h's gateway towards g, which adds it into a partial
 *      (scratch [n, 2n)): a gateway with k links receives and adds k sums;
 *   3. inside every group, every gateway sends its partial to every mate,
 *      and adds it into its own vector (a local copy, a message to itself);
 *      every rank adds the partials it receives.
 * Every group's sum reaches every group once through exactly one gateway
 * pair, so each rank ends with every contribution exactly once.  On a
 * machine whose groups are fully connected and whose gateways are linked
 * directly this is three hops; with V vectors (packets), 3 (hop + (V - 1)
 * slot) since each stage waits for its data.  Traffic: each rank sends
 * (s - 1) n in stages 1 and 3 (s: group size), gateways one n per link:
 * small tensors only (large ones want the bandwidth of allreduce/hierarchical).
 *
 * Without a group hint (or with g= given) the groups are ceil(P/g)
 * consecutive ranges of near-equal size, g = 8 when 8 | P, else
 * ceil(sqrt P) (as allreduce/hierarchical).  Pairs without a gateway hint
 * (no hint, or no direct link between the groups) get one by the Groq port
 * rule's rotation: g's k-th other group, h = g + k + 1 (mod G), is served by
 * its member k mod |g|; the algorithm is then still correct, only its
 * messages may cross more links. */

typedef struct gw_groups {
    int G;           /* groups (the hint's ids; some may be empty) */
    int32_t *start;  /* members of group j: mem[start[j] .. start[j+1]), ascending */
    int32_t *mem;
    int32_t *of;     /* group of each rank */
    int32_t *at;     /* index of each rank within its group */
} gw_groups_t;

static void gw_groups_free(gw_groups_t *g)
{
    free(g->start);
    free(g->mem);
    free(g->of);
    free(g->at);
}

/* Groups from `of` (P ids in 0..G-1), members listed in rank order. */
static void gw_groups_make(gw_groups_t *g, int P, int G, int32_t *of)
{
    int32_t *fill = cs_calloc((size_t)G, sizeof *fill);
    g->G = G;
    g->of = of;
    g->start = cs_calloc((size_t)G + 1, sizeof *g->start);
    g->mem = cs_malloc((size_t)P * sizeof *g->mem);
    g->at = cs_malloc((size_t)P * sizeof *g->at);
    for (int r = 0; r < P; r++)
        g->start[of[r] + 1]++;
    for (int j = 0; j < G; j++)
        g->start[j + 1] += g->start[j];
    for (int r = 0; r < P; r++) {
        g->at[r] = fill[of[r]]++;
        g->mem[g->start[of[r]] + g->at[r]] = r;
    }
    free(fill);
}

/* The groups and the gateway of every ordered pair (gw[j*G+k]: the rank of
 * group j that sends j's sum to group k; -1 when either group is empty). */
static int gw_plan(const cs_coll_args_t *a, gw_groups_t *g, int32_t **gw_out, cs_error_t *err)
{
    const cs_coll_hints_t *h = a->hints;
    int P = a->P, G, use_hint = h && h->group && h->ngroups > 0;
    int64_t gsize;
    int rc;
    int32_t *of = cs_malloc((size_t)P * sizeof *of), *gw;
    memset(g, 0, sizeof *g);
    *gw_out = NULL;
    if ((rc = cs_coll_opt_int(a, "g", P % 8 == 0 ? 8 : (int64_t)ceil(sqrt((double)P)), 1,
                              1 << 20, &gsize, err))) {
        free(of);
        return rc;
    }
    if (gsize > P) /* a group larger than P is all P ranks */
        gsize = P;
    if (a->opts && cs_spec_get(a->opts, "g"))
        use_hint = 0;
    if (use_hint) {
        G = h->ngroups;
        for (int r = 0; r < P; r++) {
            if (h->group[r] < 0 || h->group[r] >= G) {
                free(of);
                return cs_error_set(err, CS_ERR_RANGE, "hierarchy hint: rank %d is in group %d, "
                                    "outside 0..%d", r, (int)h->group[r], G - 1);
            }
            of[r] = h->group[r];
        }
    } else {
        int64_t off, len;
        G = (int)((P + gsize - 1) / gsize);
        for (int j = 0; j < G; j++) {
            cs_coll_split(P, G, j, &off, &len);
            for (int64_t r = off; r < off + len; r++)
                of[r] = j;
        }
    }
    gw_groups_make(g, P, G, of);
    gw = cs_malloc((size_t)G * (size_t)G * sizeof *gw);
    for (int j = 0; j < G; j++)
        for (int k = 0; k < G; k++) {
            int s = g->start[j + 1] - g->start[j];
            int32_t x = use_hint && h->gateway ? h->gateway[(int64_t)j * G + k] : -1;
            if (j == k || !s || g->start[k + 1] == g->start[k]) {
                gw[(int64_t)j * G + k] = -1;
                continue;
            }
            if (x >= P || (x >= 0 && of[x] != j)) {
                free(gw);
                gw_groups_free(g);
                return cs_error_set(err, CS_ERR_RANGE, "gateway hint: rank %d for groups %d -> %d "
                                    "is not a rank of group %d", (int)x, j, k, j);
            }
            /* no hint: the k-th other group by rotation, member k mod s */
            gw[(int64_t)j * G + k] = x >= 0 ? x : g->mem[g->start[j] + mod(k - j - 1, G) % s];
        }
    *gw_out = gw;
    return CS_OK;
}

static int allreduce_gateway(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, rc;
    int64_t n = a->bytes;
    gw_groups_t g = {0};
    int32_t *gw = NULL, *nin;
    if ((rc = gw_plan(a, &g, &gw, err)))
        return rc;
    if (P == 1 || n == 0) {
        free(gw);
        gw_groups_free(&g);
        return CS_OK;
    }
    /* 1: direct all-reduce inside every group (member i sends to i+1, i+2,
     * ..., so that every step is a permutation; sends read the vector when
     * they start, before any mate's data is added into it) */
    for (int r = 0; r < P; r++) {
        const int32_t *m = g.mem + g.start[g.of[r]];
        int s = g.start[g.of[r] + 1] - g.start[g.of[r]], i = g.at[r];
        for (int d = 1; d < s; d++)
            cs_coll_send(b, r, m[(i + d) % s], 0, n, TAG_RS);
        for (int d = 1; d < s; d++)
            cs_coll_recv_reduce(b, r, m[(i - d + s) % s], 0, n, TAG_RS);
        cs_coll_wait(b, r);
    }
    /* 2: each group's sum to every other group, gateway to gateway; the
     * receiving gateway adds the sums it gets into its partial [n, 2n) */
    nin = cs_calloc((size_t)P, sizeof *nin);
    for (int j = 0; j < g.G; j++)
        for (int k = 0; k < g.G; k++) {
            int32_t from = gw[(int64_t)j * g.G + k], to = gw[(int64_t)k * g.G + j];
            if (from < 0 || to < 0)
                continue;
            cs_coll_send(b, from, to, 0, n, TAG_DATA);
            cs_coll_recv_reduce(b, to, from, n, n, TAG_DATA);
            nin[to]++;
        }
    cs_coll_wait_all(b);
    /* 3: every gateway's partial to its mates and into its own vector */
    for (int r = 0; r < P; r++) {
        const int32_t *m = g.mem + g.start[g.of[r]];
        int s = g.start[g.of[r] + 1] - g.start[g.of[r]], i = g.at[r];
        if (nin[r]) {
            for (int d = 1; d < s; d++)
                cs_coll_send(b, r, m[(i + d) % s], n, n, TAG_AG);
            cs_coll_send(b, r, r, n, n, TAG_LOCAL);
            cs_coll_recv_reduce(b, r, r, 0, n, TAG_LOCAL);
        }
        for (int d = 1; d < s; d++)
            if (nin[m[(i - d + s) % s]])
                cs_coll_recv_reduce(b, r, m[(i - d + s) % s], 0, n, TAG_AG);
        cs_coll_wait(b, r);
    }
    free(nin);
    free(gw);
    gw_groups_free(&g);
    return CS_OK;
}

/* ======================================================================= */
/* barrier (1-byte tokens, range [0, 1))                                    */
/* ======================================================================= */

/* Dissemination (Bruck): in round k rank r signals r + 2^k and waits for
 * r - 2^k.  ceil(log2 P)(alpha + beta). */
static int barrier_dissemination(cs_coll_builder_t *b, cs_error_t *err)
{
    int P = cs_coll_args(b)->P;
    (void)err;
    for (int d = 1; d < P; d *= 2) {
        for (int r = 0; r < P; r++) {
            cs_coll_send_nz(b, r, (r + d) % P, 0, 1, TAG_DATA);
            cs_coll_recv_nz(b, r, mod(r - d, P), 0, 1, TAG_DATA);
        }
        cs_coll_wait_all(b);
    }
    return CS_OK;
}

/* Recursive doubling: token exchange with v ^ 2^k, extra ranks folded in and
 * out.  P a power of two: log2 P (alpha + beta). */
static int barrier_rdb(cs_coll_builder_t *b, cs_error_t *err)
{
    int P = cs_coll_args(b)->P;
    fold_t f = fold_make(P);
    (void)err;
    if (P == 1)
        return CS_OK;
    fold_in(b, &f, 0, 1, 0);
    for (int d = 1; d < f.Pp; d *= 2) {
        for (int r = 0; r < P; r++) {
            int v = fold_virt(&f, r);
            if (v < 0)
                continue;
            cs_coll_send_nz(b, r, fold_real(&f, v ^ d), 0, 1, TAG_DATA);
            cs_coll_recv_nz(b, r, fold_real(&f, v ^ d), 0, 1, TAG_DATA);
        }
        cs_coll_wait_all(b);
    }
    fold_out(b, &f, 0, 1);
    return CS_OK;
}

/* Flat: every rank signals rank 0, which releases them all with one
 * multicast (unicasts in turn without hardware multicast).
 * 2(P-1)(alpha + beta) on a machine without multicast. */
static int barrier_flat(cs_coll_builder_t *b, cs_error_t *err)
{
    int P = cs_coll_args(b)->P;
    int32_t *to;
    (void)err;
    if (P == 1)
        return CS_OK;
    for (int r = 1; r < P; r++) {
        cs_coll_send_nz(b, r, 0, 0, 1, TAG_UP);
        cs_coll_recv_nz(b, 0, r, 0, 1, TAG_UP);
    }
    cs_coll_wait(b, 0);
    to = cs_malloc((size_t)(P - 1) * sizeof *to);
    for (int r = 1; r < P; r++)
        to[r - 1] = r;
    cs_coll_mcast(b, 0, to, P - 1, 0, 1, TAG_DOWN);
    free(to);
    for (int r = 1; r < P; r++)
        cs_coll_recv_nz(b, r, 0, 0, 1, TAG_DOWN);
    cs_coll_wait_all(b);
    return CS_OK;
}

/* Tree: binomial gather of the tokens to rank 0, binomial release.
 * 2 ceil(log2 P)(alpha + beta). */
static int barrier_tree(cs_coll_builder_t *b, cs_error_t *err)
{
    int P = cs_coll_args(b)->P;
    (void)err;
    if (P == 1)
        return CS_OK;
    tree_up(b, P, 0, 0, 1, 0);
    tree_down(b, P, 0, 1);
    return CS_OK;
}

/* ======================================================================= */
/* alltoall (m = per-rank block, in place)                                  */
/* ======================================================================= */

/* Pairwise exchange (shift schedule): in step k = 1..P-1 rank r sends its
 * block r+k to rank r+k while rank r-k's block for r arrives.  The sends of
 * a rank go one after the other; its recvs are posted once its last send
 * is done: the alltoall is in place, and block r-k must not be overwritten
 * before it is sent in step P-k (the messages arrive in their steps all the
 * same: sends are eager).  (P-1)(alpha + beta m). */
static int alltoall_pairwise(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t m = a->bytes;
    (void)err;
    if (P == 1 || m == 0)
        return CS_OK;
    for (int r = 0; r < P; r++) {
        int32_t prev = -1;
        for (int k = 1; k < P; k++) {
            int to = (r + k) % P;
            int32_t s = cs_coll_send_nz(b, r, to, (int64_t)to * m, m, TAG_DATA);
            cs_coll_dep(b, s, prev, CS_DEP_AFTER);
            prev = s;
        }
        cs_coll_wait(b, r);
        for (int k = 1; k < P; k++)
            cs_coll_recv_nz(b, r, mod(r - k, P), (int64_t)mod(r - k, P) * m, m, TAG_DATA);
    }
    cs_coll_wait_all(b);
    return CS_OK;
}

/* Flat: every rank posts all its sends (to r+1, r+2, ...) and receives at
 * once; the ports serialise them.  (P-1)(alpha + beta m) on a complete
 * network. */
static int alltoall_flat(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t m = a->bytes;
    (void)err;
    for (int r = 0; r < P; r++) {
        for (int k = 1; k < P; k++)
            cs_coll_send_nz(b, r, (r + k) % P, (int64_t)((r + k) % P) * m, m, TAG_DATA);
        for (int k = 1; k < P; k++)
            cs_coll_recv_nz(b, r, mod(r - k, P), (int64_t)mod(r - k, P) * m, m, TAG_DATA);
    }
    cs_coll_wait_all(b);
    return CS_OK;
}

/* Bruck: slot i of rank r is first its data for rank r+i (block r+i).  In
 * round k (2^k < P) every rank sends the slots whose index has bit k set to
 * r + 2^k, packed into one message, and receives the same slots from
 * r - 2^k; afterwards slot i holds rank r-i's data for r, which belongs in
 * block r-i.  Layout: slots live in a scratch area T = [P m, 2P m) (slot i
 * at T + i m); staging areas for the packed message follow it.  Phase 1
 * copies the blocks into T (a rotation, two copies), each round packs and
 * unpacks with local copies (runs of consecutive slots merged), and the
 * last phase copies every slot home (reversed order: one copy per block).
 * Network: ceil(log2 P) messages per rank of about P/2 blocks. */
static int alltoall_bruck(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t m = a->bytes, T, S_SEND, S_RECV;
    copies_t cp = {0};
    (void)err;
    if (P == 1 || m == 0)
        return CS_OK;
    T = (int64_t)P * m;
    S_SEND = 2 * (int64_t)P * m;
    S_RECV = 3 * (int64_t)P * m;
    for (int r = 0; r < P; r++) {
        local_copy(b, r, (int64_t)r * m, T, (int64_t)(P - r) * m);
        local_copy(b, r, 0, T + (int64_t)(P - r) * m, (int64_t)r * m);
    }
    cs_coll_wait_all(b);
    for (int d = 1; d < P; d *= 2) {
        int cnt = 0;
        for (int i = 1; i < P; i++)
            cnt += (i & d) != 0;
        for (int r = 0; r < P; r++) { /* pack */
            int j = 0;
            for (int i = 1; i < P; i++)
                if (i & d)
                    copies_add(&cp, T + (int64_t)i * m, S_SEND + (int64_t)(j++) * m);
            copies_emit(b, r, &cp, m);
        }
        cs_coll_wait_all(b);
        for (int r = 0; r < P; r++) {
            cs_coll_send_nz(b, r, (r + d) % P, S_SEND, (int64_t)cnt * m, TAG_DATA);
            cs_coll_recv_nz(b, r, mod(r - d, P), S_RECV, (int64_t)cnt * m, TAG_DATA);
        }
        cs_coll_wait_all(b);
        for (int r = 0; r < P; r++) { /* unpack */
            int j = 0;
            for (int i = 1; i < P; i++)
                if (i & d)
                    copies_add(&cp, S_RECV + (int64_t)(j++) * m, T + (int64_t)i * m);
            copies_emit(b, r, &cp, m);
        }
        cs_coll_wait_all(b);
    }
    for (int r = 0; r < P; r++) { /* home: slot i -> block r - i */
        for (int i = 1; i < P; i++)
            copies_add(&cp, T + (int64_t)i * m, (int64_t)mod(r - i, P) * m);
        copies_emit(b, r, &cp, m);
    }
    cs_coll_wait_all(b);
    copies_free(&cp);
    return CS_OK;
}

/* ======================================================================= */
/* registry                                                                 */
/* ======================================================================= */

static const char *const keys_butterfly[] = {"g", "inner", NULL};
static const char *const keys_gateway[] = {"g", NULL};

static const cs_coll_algo_t ag_ring = {
    CS_COLL_ALLGATHER, "ring",
    "bucket: P-1 steps over the ring order, each rank passes on the block it got last",
    "lecture §8.7", "", NULL, allgather_ring};
static const cs_coll_algo_t ag_rdb = {
    CS_COLL_ALLGATHER, "rdb",
    "recursive doubling: log2 rounds swapping all blocks held; extra ranks folded in and out",
    "generic (MPI; Thakur et al. 2005)", "", NULL, allgather_rdb};
static const cs_coll_algo_t ag_bruck = {
    CS_COLL_ALLGATHER, "bruck",
    "Bruck: ceil(log2 P) rounds, rank r sends its window of blocks to r-2^k; one local copy at "
    "the end",
    "generic (Bruck et al. 1997)", "", NULL, allgather_bruck};
static const cs_coll_algo_t ag_gather_bcast = {
    CS_COLL_ALLGATHER, "gather-bcast", "binomial gather to rank 0, then binomial broadcast of P*m",
    "lecture §8.3", "", NULL, allgather_gather_bcast};

static const cs_coll_algo_t rs_ring = {
    CS_COLL_REDUCE_SCATTER, "ring",
    "bucket: P-1 steps over the ring order, reduce on receipt and pass on",
    "lecture §8.7 (dual of the bucket allgather)", "", NULL, reduce_scatter_ring};
static const cs_coll_algo_t rs_halving = {
    CS_COLL_REDUCE_SCATTER, "recursive-halving",
    "recursive halving: log2 rounds exchanging half the remaining blocks; extra ranks folded",
    "generic (MPI; Thakur et al. 2005)", "", NULL, reduce_scatter_halving};
static const cs_coll_algo_t rs_pairwise = {
    CS_COLL_REDUCE_SCATTER, "pairwise",
    "direct: in step k send block r+k to rank r+k, add rank r-k's copy of block r",
    "generic (MPI)", "", NULL, reduce_scatter_pairwise};

static const cs_coll_algo_t ar_ring = {
    CS_COLL_ALLREDUCE, "ring",
    "ring reduce-scatter + ring allgather over P pieces of the vector, in ring order",
    "lecture §8.9", "", NULL, allreduce_ring};
static const cs_coll_algo_t ar_rdb = {
    CS_COLL_ALLREDUCE, "rdb",
    "recursive doubling: log2 rounds exchanging and adding the whole vector; extra ranks folded",
    "generic (MPI; Thakur et al. 2005)", "", NULL, allreduce_rdb};
static const cs_coll_algo_t ar_rabenseifner = {
    CS_COLL_ALLREDUCE, "rabenseifner",
    "recursive-halving reduce-scatter + recursive-doubling allgather; extra ranks folded",
    "generic (Rabenseifner; Thakur et al. 2005)", "", NULL, allreduce_rabenseifner};
static const cs_coll_algo_t ar_reduce_bcast = {
    CS_COLL_ALLREDUCE, "reduce-bcast", "binomial reduce to rank 0, then binomial broadcast",
    "lecture §8.1 + §8.6", "", NULL, allreduce_reduce_bcast};
static const cs_coll_algo_t ar_butterfly = {
    CS_COLL_ALLREDUCE, "butterfly",
    "log_G rounds: groups of G ranks differing in one base-G digit allreduce the vector",
    "Cerebras thesis Ch. 7 (Lemma 7.3)",
    "g=G group size >= 2 (default 2; above P: all ranks); inner=direct|ring how a group "
    "allreduces (default direct: everyone sends the vector to the G-1 others)",
    keys_butterfly, allreduce_butterfly};

static const cs_coll_algo_t ar_gateway = {
    CS_COLL_ALLREDUCE, "gateway",
    "small tensors in 3 hops: direct all-reduce in every group, each group's sum over the link "
    "to every other group (gateway hint), gateways' partials spread in the group",
    "Groq ISCA'22 §5.6",
    "g=group size >= 1 when the machine gives no groups (default 8 if 8 | P, else "
    "ceil(sqrt P); above P: one group); given, it overrides the hierarchy and gateway hints",
    keys_gateway, allreduce_gateway};

static const cs_coll_algo_t bar_dissemination = {
    CS_COLL_BARRIER, "dissemination",
    "Bruck / dissemination: ceil(log2 P) rounds, r signals r+2^k and waits for r-2^k",
    "generic (Hensgen, Finkel, Manber 1988)", "", NULL, barrier_dissemination};
static const cs_coll_algo_t bar_rdb = {
    CS_COLL_BARRIER, "rdb", "recursive doubling token exchange; extra ranks folded in and out",
    "generic (MPI)", "", NULL, barrier_rdb};
static const cs_coll_algo_t bar_flat = {
    CS_COLL_BARRIER, "flat", "one-to-all: every rank signals rank 0, which releases everyone",
    "lecture §8.4 pattern", "", NULL, barrier_flat};
static const cs_coll_algo_t bar_tree = {
    CS_COLL_BARRIER, "tree", "binomial gather of tokens to rank 0, then binomial release",
    "lecture §8.1 tree", "", NULL, barrier_tree};

static const cs_coll_algo_t a2a_pairwise = {
    CS_COLL_ALLTOALL, "pairwise",
    "pairwise exchange: in step k send block r+k to rank r+k, receive from rank r-k",
    "generic (MPI)", "", NULL, alltoall_pairwise};
static const cs_coll_algo_t a2a_bruck = {
    CS_COLL_ALLTOALL, "bruck",
    "Bruck: ceil(log2 P) rounds sending the slots with bit k set to r+2^k, packed locally",
    "generic (Bruck et al. 1997)", "", NULL, alltoall_bruck};
static const cs_coll_algo_t a2a_flat = {
    CS_COLL_ALLTOALL, "flat", "every rank posts all P-1 sends and receives at once",
    "generic", "", NULL, alltoall_flat};

const cs_coll_algo_t *const cs_coll_group_symmetric[] = {
    &ag_ring, &ag_rdb, &ag_bruck, &ag_gather_bcast,
    &rs_ring, &rs_halving, &rs_pairwise,
    &ar_ring, &ar_rdb, &ar_rabenseifner, &ar_reduce_bcast, &ar_butterfly, &ar_gateway,
    &bar_dissemination, &bar_rdb, &bar_flat, &bar_tree,
    &a2a_pairwise, &a2a_bruck, &a2a_flat,
    NULL};
