/*
 * coll_internal.c - the building blocks the algorithms of the collective
 * suite share (see coll_internal.h): options several algorithms read,
 * segments and pieces, rank groups, and the emitters that more than one
 * collective uses (divide-and-conquer scatter/gather, ring rounds, binomial
 * trees, folds of a non-power of two, recursive halving, the Cell papers'
 * token barrier and hybrid all-gather).  Each is written once here; the
 * algorithms that call them live in the file of their collective.
 *
 * Sources: the message-passing lecture (shared/papers/004, notes in
 * shared/reference/alpha-beta.md) §8.1, §8.5, §8.7; the standard MPI
 * algorithms (Thakur, Rabenseifner, Gropp 2005) for folds and halving; the
 * Cell paper (papers/001, reference/cell-blade.md §2-§3) for the barrier
 * among a set of ranks and the hybrid-x-y all-gather.
 */
#include "coll/coll_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A cap on messages of the segmented algorithms (segments x ranks): beyond
 * it the program would need gigabytes; the error says to raise seg. */
#define MAX_SEG_MESSAGES ((int64_t)1 << 23)

/* ---- options --------------------------------------------------------------- */

/* Whether the option `key` was given at all. */
int cs_coll_opt_given(const cs_coll_args_t *a, const char *key)
{
    return a->opts && cs_spec_get(a->opts, key) != NULL;
}

/* k option of the k-chain algorithms: 1 <= k; more chains than non-root
 * ranks are empty, so the effective k is min(k, P-1). */
int cs_coll_opt_k(const cs_coll_args_t *a, int64_t *k, cs_error_t *err)
{
    *k = 2;
    if (a->opts)
        return cs_spec_get_int(a->opts, "k", 2, 1, 1 << 20, k, err);
    return CS_OK;
}

/* every=N: 1..64. */
int cs_coll_opt_every(const cs_coll_args_t *a, int64_t dflt, int *every, cs_error_t *err)
{
    int64_t v;
    int rc = cs_coll_opt_int(a, "every", dflt, 1, 64, &v, err);
    *every = (int)v;
    return rc;
}

/* fold=near|far (cs_coll_fold_t); the spec's choice reader refuses any
 * other value with a did-you-mean. */
int cs_coll_opt_fold(const cs_coll_args_t *a, int dflt, int *far, cs_error_t *err)
{
    static const char *const rules[] = {"near", "far", NULL};
    return cs_coll_opt_choice(a, "fold", rules, dflt, far, err);
}

/* The seg option: a byte count >= 1, by default the machine's packet size
 * (the natural unit of a pipeline). */
int cs_coll_opt_seg(const cs_coll_args_t *a, int64_t *seg, cs_error_t *err)
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

/* ---- segments and pieces ------------------------------------------------------- */

/* Number of segments of n bytes (at least one), checked against the
 * message cap (one rank needs no messages, so no cap). */
int cs_coll_nsegs(const cs_coll_args_t *a, int64_t seg, int64_t *S, cs_error_t *err)
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
void cs_coll_seg_range(int64_t n, int64_t seg, int64_t s, int64_t *off, int64_t *len)
{
    *off = s * seg;
    *len = n - *off < seg ? n - *off : seg;
    if (*len < 0)
        *len = 0;
}

/* Offsets of the P+1 boundaries of per-rank pieces: piece i of the buffer is
 * [boff[i], boff[i+1]).  m > 0: blocks of m bytes (gather/scatter); m < 0:
 * the whole vector n split by cs_coll_split (broadcast, reduce). */
int64_t *cs_coll_piece_bounds(int P, int64_t m, int64_t n)
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

/* Offset of block i, for i in [0, P] (blk(P) is the end of the buffer), so
 * blocks [i, j) are the bytes [blk(i), blk(j)). */
int64_t cs_coll_blk(const cs_coll_blocks_t *bl, int i)
{
    int64_t off, len;
    if (!bl->split)
        return (int64_t)i * bl->m;
    if (i >= bl->P)
        return bl->n;
    cs_coll_split(bl->n, bl->P, i, &off, &len);
    return off;
}

/* ---- messages and orders ------------------------------------------------------ */

/* Message from `from` to `to` of [off, off+len), same range on both sides.
 * Returns the send op; *rop (if non-NULL) gets the recv op. */
int32_t cs_coll_xfer(cs_coll_builder_t *b, int from, int to, int64_t off, int64_t len, int tag,
                    int32_t *rop)
{
    int32_t s = cs_coll_send_nz(b, from, to, off, len, tag);
    int32_t r = cs_coll_recv_nz(b, to, from, off, len, tag);
    if (rop)
        *rop = r;
    return s;
}

int32_t *cs_coll_ranks_from(int P, int root)
{
    int32_t *r = cs_malloc((size_t)P * sizeof *r);
    for (int i = 0; i < P; i++)
        r[i] = real_rank(i, root, P);
    return r;
}

void cs_coll_ring_pieces_init(cs_coll_ring_pieces_t *rp, const cs_coll_args_t *a, int blocks)
{
    int P = a->P;
    rp->ring = cs_malloc((size_t)P * sizeof *rp->ring);
    rp->off = cs_malloc((size_t)P * sizeof *rp->off);
    rp->len = cs_malloc((size_t)P * sizeof *rp->len);
    cs_coll_ring(a, rp->ring, NULL);
    for (int i = 0; i < P; i++) {
        if (blocks) {
            rp->off[i] = (int64_t)rp->ring[i] * a->bytes;
            rp->len[i] = a->bytes;
        } else {
            cs_coll_split(a->bytes, P, i, &rp->off[i], &rp->len[i]);
        }
    }
}

void cs_coll_ring_pieces_destroy(cs_coll_ring_pieces_t *rp)
{
    free(rp->ring);
    free(rp->off);
    free(rp->len);
}

/* The chain order used by the pipelined algorithms: the machine's ring
 * order starting at the root.  seq[0] = root.  Caller frees. */
int32_t *cs_coll_chain_order(const cs_coll_args_t *a)
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

/* ---- divide and conquer over contiguous rank ranges (lecture §8.5) -------
 * The range [lo, hi) of ranks is held by h (lo <= h < hi).  Split it in two
 * halves; h keeps the half that contains it, made the larger one
 * (ceil(size/2)), and exchanges the other half's pieces with a
 * representative there (the rank at h's offset within its own half, so that
 * for a power of two the pattern is the binomial tree around h).  Both
 * halves recurse.  Every range is contiguous in rank space, so one message
 * carries [boff[lo'], boff[hi')).  h takes ceil(log2 size) steps and moves
 * size-1 pieces, and no other path is longer (see docs/algorithms.md),
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

void cs_coll_dc_scatter(cs_coll_builder_t *b, const int64_t *boff, int lo, int hi, int h, int tag)
{
    while (hi - lo > 1) {
        int nlo, nhi, olo, ohi, rep;
        halves(lo, hi, h, &nlo, &nhi, &olo, &ohi, &rep);
        cs_coll_xfer(b, h, rep, boff[olo], boff[ohi] - boff[olo], tag, NULL);
        cs_coll_wait(b, rep); /* the representative forwards what it received */
        cs_coll_dc_scatter(b, boff, olo, ohi, rep, tag);
        lo = nlo, hi = nhi;
    }
}

void cs_coll_dc_gather(cs_coll_builder_t *b, const int64_t *boff, int lo, int hi, int h, int tag)
{
    int nlo, nhi, olo, ohi, rep;
    if (hi - lo <= 1)
        return;
    halves(lo, hi, h, &nlo, &nhi, &olo, &ohi, &rep);
    cs_coll_dc_gather(b, boff, nlo, nhi, h, tag);
    cs_coll_dc_gather(b, boff, olo, ohi, rep, tag);
    cs_coll_wait(b, rep); /* the representative sends what it gathered */
    cs_coll_xfer(b, rep, h, boff[olo], boff[ohi] - boff[olo], tag, NULL);
}

/* Receives [off, off+len): reducing (reduce = 1) or copying. */
static int32_t recv_as(cs_coll_builder_t *b, int at, int from, int64_t off, int64_t len, int tag,
                       int reduce)
{
    return reduce ? cs_coll_recv_reduce_nz(b, at, from, off, len, tag)
                  : cs_coll_recv_nz(b, at, from, off, len, tag);
}

/* A copy [src, src+len) -> [dst, dst+len) inside one rank's buffer.  The
 * program model has no copy op, so it is a message to itself: the validator
 * sees the data move, and the machine prices it (a message that crosses no
 * link; the alphabeta machine charges its send overhead).  Copies issued in
 * one batch all read before any of them writes (sends read when they start). */
void cs_coll_local_copy(cs_coll_builder_t *b, int r, int64_t src, int64_t dst, int64_t len)
{
    if (len <= 0 || src == dst)
        return;
    cs_coll_send(b, r, r, src, len, TAG_LOCAL);
    cs_coll_recv(b, r, r, dst, len, TAG_LOCAL);
}

/* ---- folds and halving ---------------------------------------------------------- */

/* Extra ranks hand [off, off+len) to their partner, which adds it
 * (reduce = 1) or just takes note (0: a barrier token). */
void cs_coll_fold_in(cs_coll_builder_t *b, const cs_coll_fold_t *f, int64_t off, int64_t len,
                     int reduce)
{
    for (int i = 0; i < f->e; i++) {
        cs_coll_send_nz(b, fold_extra(f, i), fold_partner(f, i), off, len, TAG_FOLD);
        recv_as(b, fold_partner(f, i), fold_extra(f, i), off, len, TAG_FOLD, reduce);
    }
    cs_coll_wait_all(b);
}

/* The partner returns [off, off+len) to its extra rank. */
void cs_coll_fold_out(cs_coll_builder_t *b, const cs_coll_fold_t *f, int64_t off, int64_t len)
{
    for (int i = 0; i < f->e; i++) {
        cs_coll_send_nz(b, fold_partner(f, i), fold_extra(f, i), off, len, TAG_UNFOLD);
        cs_coll_recv_nz(b, fold_extra(f, i), fold_partner(f, i), off, len, TAG_UNFOLD);
    }
    cs_coll_wait_all(b);
}

int cs_coll_fold_bytes(const cs_coll_fold_t *f, const int64_t *poff, const cs_coll_blocks_t *bl,
                       int lo, int hi, int64_t off[2], int64_t len[2])
{
    int s[4], n;
    if (poff) {
        off[0] = poff[lo];
        len[0] = poff[hi] - poff[lo];
        return 1;
    }
    n = fold_span(f, lo, hi, s);
    for (int k = 0; k < n; k++) {
        off[k] = cs_coll_blk(bl, s[2 * k]);
        len[k] = cs_coll_blk(bl, s[2 * k + 1]) - off[k];
    }
    return n;
}

/* ---- ring rounds and binomial trees ------------------------------------------- */

/* Ring allgather among the G ranks grp[0..G) (in ring order): piece i,
 * [off[i], off[i]+len[i]), starts at position i.  In step s position i
 * passes on the piece it received in step s-1 (its own in step 0):
 * G-1 steps of one piece each. */
void cs_coll_ring_allgather(cs_coll_builder_t *b, const int32_t *grp, int G, const int64_t *off,
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
void cs_coll_ring_reduce_scatter(cs_coll_builder_t *b, const int32_t *grp, int G,
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
void cs_coll_tree_up(cs_coll_builder_t *b, int P, int reduce, int64_t off, int64_t len, int64_t m)
{
    for (int r = 0; r < P; r++) {
        for (int d = 1; d < tree_bound(r, P) && r + d < P; d *= 2) {
            int c = r + d;
            if (m > 0)
                cs_coll_recv_nz(b, r, c, (int64_t)c * m, (int64_t)tree_span(c, P) * m, TAG_UP);
            else
                recv_as(b, r, c, off, len, TAG_UP, reduce);
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
void cs_coll_tree_down(cs_coll_builder_t *b, int P, int64_t off, int64_t len)
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

/* Recursive halving over the virtual ranks [0, Pp) whose "piece" v is
 * given by cs_coll_fold_bytes (one or, with the far fold over blocks, two
 * byte ranges): in each round a rank keeps the half of its current range
 * that contains its own piece, sends the other half to v ^ d and adds the
 * partner's copy of its half.  Ends with piece v on v.  The partner posts
 * its ranges in the same order, so with two ranges per half the messages of
 * a pair match in order under one tag. */
void cs_coll_halving(cs_coll_builder_t *b, const cs_coll_fold_t *f, const int64_t *poff,
                     const cs_coll_blocks_t *bl, int tag)
{
    for (int d = f->Pp / 2; d >= 1; d /= 2) {
        for (int r = 0; r < f->P; r++) {
            int v = fold_virt(f, r), lo, keep, give, n, pr;
            int64_t o[2], l[2];
            if (v < 0)
                continue;
            lo = v & ~(2 * d - 1);
            keep = v & d ? lo + d : lo;
            give = v & d ? lo : lo + d;
            pr = fold_real(f, v ^ d);
            n = cs_coll_fold_bytes(f, poff, bl, give, give + d, o, l);
            for (int k = 0; k < n; k++)
                cs_coll_send_nz(b, r, pr, o[k], l[k], tag);
            n = cs_coll_fold_bytes(f, poff, bl, keep, keep + d, o, l);
            for (int k = 0; k < n; k++)
                cs_coll_recv_reduce_nz(b, r, pr, o[k], l[k], tag);
        }
        cs_coll_wait_recvs_all(b); /* the half given away is not written again */
    }
}

/* Rank of relative index i when `root` is rank 0 of the numbering. */
/* ---- barrier among a set of ranks ------------------------------------------
 * 0-byte tokens that carry no data (the descriptor is empty), used inside
 * the Cell algorithms that put barriers between rounds.  A power-of-two set
 * uses recursive doubling (the Cell paper's barrier: partner i XOR 2^k), any
 * other set the dissemination pattern; both take ceil(log2 cnt) rounds. */
void cs_coll_barrier_among(cs_coll_builder_t *b, const int32_t *ranks, int cnt, int tag)
{
    int rounds = cs_coll_ceil_log2(cnt);
    for (int i = 0; i < cnt; i++)
        cs_coll_wait(b, ranks[i]);
    for (int k = 0; k < rounds; k++) {
        int d = 1 << k;
        for (int i = 0; i < cnt; i++) {
            int to = is_pow2(cnt) ? (i ^ d) : (i + d) % cnt;
            int from = is_pow2(cnt) ? (i ^ d) : mod(i - d, cnt);
            cs_coll_send(b, ranks[i], ranks[to], 0, 0, tag + k);
            cs_coll_recv(b, ranks[i], ranks[from], 0, 0, tag + k);
            cs_coll_wait(b, ranks[i]);
        }
    }
}

/* ---- rank groups ----------------------------------------------------------- */

/* Groups from of[0..P) (ids in 0..G-1; empty groups allowed), which g takes
 * over (freed by cs_coll_groups_destroy).  Each group lists its members in
 * the order of `order` (P ranks), or in rank order when order is NULL. */
static void groups_make(cs_coll_groups_t *g, int P, int G, int32_t *of, const int32_t *order)
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
    for (int i = 0; i < P; i++) {
        int r = order ? order[i] : i;
        g->at[r] = fill[of[r]]++;
        g->mem[g->start[of[r]] + g->at[r]] = r;
    }
    free(fill);
}

void cs_coll_groups_destroy(cs_coll_groups_t *g)
{
    free(g->start);
    free(g->mem);
    free(g->of);
    free(g->at);
    memset(g, 0, sizeof *g);
}

void cs_coll_groups_consecutive(cs_coll_groups_t *g, int P, int G)
{
    int32_t *of = cs_malloc((size_t)P * sizeof *of);
    int64_t off, len;
    for (int j = 0; j < G; j++) {
        cs_coll_split(P, G, j, &off, &len);
        for (int64_t r = off; r < off + len; r++)
            of[r] = j;
    }
    groups_make(g, P, G, of, NULL);
}

int cs_coll_groups_hint(cs_coll_groups_t *g, const cs_coll_args_t *a, int compact,
                        cs_error_t *err)
{
    const cs_coll_hints_t *h = a->hints;
    int P = a->P, G = 0;
    int32_t *of, *id;
    memset(g, 0, sizeof *g);
    if (!h || !h->group || h->ngroups <= 0)
        return CS_OK;
    for (int r = 0; r < P; r++)
        if (h->group[r] < 0 || h->group[r] >= h->ngroups)
            return cs_error_set(err, CS_ERR_RANGE,
                                "hierarchy hint: rank %d is in group %d, outside 0..%d", r,
                                (int)h->group[r], h->ngroups - 1);
    /* id[k]: the group number of hint group k (compact: empty ones dropped) */
    id = cs_calloc((size_t)h->ngroups, sizeof *id);
    for (int r = 0; r < P; r++)
        id[h->group[r]] = 1;
    for (int k = 0; k < h->ngroups; k++)
        id[k] = !compact ? G++ : id[k] ? G++ : -1;
    of = cs_malloc((size_t)P * sizeof *of);
    for (int r = 0; r < P; r++)
        of[r] = id[h->group[r]];
    free(id);
    groups_make(g, P, G, of, NULL);
    return CS_OK;
}

int cs_coll_groups_rooted(cs_coll_groups_t *g, const cs_coll_args_t *a, int two_halves,
                          cs_error_t *err)
{
    int P = a->P, root = a->root, rc, G;
    int32_t *of, *order;
    cs_coll_groups_t h;
    if ((rc = cs_coll_groups_hint(&h, a, 1, err)))
        return rc;
    of = cs_malloc((size_t)P * sizeof *of);
    order = cs_coll_ranks_from(P, root);
    if (h.G < 2) {
        /* one group, or the halves [0, ceil(P/2)) and [ceil(P/2), P) */
        int c = two_halves ? (P + 1) / 2 : P;
        G = c < P ? 2 : 1;
        for (int i = 0; i < P; i++)
            of[order[i]] = i < c ? 0 : 1;
    } else {
        /* the hint's groups numbered in the order the cyclic walk from the
         * root meets them; a group's list is its ranks in that order, so
         * its first element is its representative */
        int32_t *newid = cs_malloc((size_t)h.G * sizeof *newid);
        G = 0;
        for (int j = 0; j < h.G; j++)
            newid[j] = -1;
        for (int i = 0; i < P; i++) {
            int r = order[i];
            if (newid[h.of[r]] < 0)
                newid[h.of[r]] = G++;
            of[r] = newid[h.of[r]];
        }
        free(newid);
    }
    cs_coll_groups_destroy(&h);
    groups_make(g, P, G, of, order);
    free(order);
    return CS_OK;
}

/* ---- Cell: the hybrid-x-y shape and all-gather (paper §3.3, §3.5, reference
 * §3.2, §3.5), used by allgather/hybrid and allreduce/hybrid-a, hybrid-b ---- */

/* The hybrid's shape.  The paper's name hybrid-x-y says: switch to rdb in
 * round x (after k = x-1 binomial rounds) with y data messages across the
 * BIF, y = P/2^k leaders (evenly spaced ranks 0, 2^k, 2*2^k, ...).  Any P:
 * the ranks are split into y consecutive groups of near-equal size, with y
 * a power of two so that the leaders run a plain rdb; k = ceil(log2 of the
 * largest group).  Options: y (a power of two <= P) or x (k = x-1, and then
 * y = the smallest power of two >= ceil(P/2^k)); both must agree.  Default
 * y = 2^floor(log2 ceil(sqrt P)), the paper's winner hybrid-3-4 at P = 16. */
int cs_coll_hybrid_shape(const cs_coll_args_t *a, int *y_out, cs_error_t *err)
{
    int P = a->P, lg = cs_coll_ceil_log2(P), rc, y;
    int64_t x, yy;
    int hx = cs_coll_opt_given(a, "x"), hy = cs_coll_opt_given(a, "y");
    if ((rc = cs_coll_opt_int(a, "x", 1, 1, lg + 1, &x, err)) ||
        (rc = cs_coll_opt_int(a, "y", 1, 1, P, &yy, err)))
        return rc;
    if (hy && !is_pow2(yy))
        return cs_error_set(err, CS_ERR_RANGE,
                            "option y=%lld: the number of rdb leaders must be a power of two "
                            "<= P=%d",
                            (long long)yy, P);
    if (hy) {
        y = (int)yy;
    } else if (hx) {
        int64_t want = (P + ((int64_t)1 << (x - 1)) - 1) >> (x - 1);
        y = 1 << cs_coll_ceil_log2(want);
        if (y > P)
            return cs_error_set(err, CS_ERR_RANGE,
                                "option x=1 (no binomial rounds, pure rdb) needs P a power of two, "
                                "got P=%d; use x>=2 or allgather/rdb",
                                P);
    } else {
        int s = (int)ceil(sqrt((double)P));
        y = pow2_floor(s);
    }
    if (hx && hy) {
        int k = cs_coll_ceil_log2((P + y - 1) / y);
        if (k + 1 != x)
            return cs_error_set(err, CS_ERR_RANGE,
                                "options x=%lld and y=%d disagree for P=%d: y=%d leaders means "
                                "x=%d",
                                (long long)x, y, P, y, k + 1);
    }
    *y_out = y;
    return CS_OK;
}

/* First rank of hybrid group g (g in [0, y]): the groups are cs_coll_split's
 * consecutive ranges. */
int cs_coll_hybrid_start(int P, int y, int g)
{
    int64_t off, len;
    cs_coll_split(P, y, g, &off, &len);
    return (int)off;
}

/* Binomial broadcast of [off, off+len) from base to ranks [base, base+s):
 * the gather tree below run backwards (parent of i is i - lowbit(i)), the
 * root serving its biggest subtree first (i + 2^(k-1), then ..., then
 * i + 1), each after the previous transfer completed.  Used in reverse of
 * the gather, the tree crosses a chip boundary once when the group spans
 * both chips (gather + broadcast: 2 BIF messages, reference §3.2). */
void cs_coll_group_bcast(cs_coll_builder_t *b, int base, int s, int64_t off, int64_t len,
                             int tag)
{
    for (int i = 0; i < s; i++) {
        int lb = i ? lowbit(i) : 1 << 30, d = 1;
        if (i) {
            cs_coll_recv_nz(b, base + i, base + i - lb, off, len, tag);
            cs_coll_wait(b, base + i);
        }
        while (2 * d < lb && i + 2 * d < s)
            d *= 2;
        for (; d >= 1; d /= 2) {
            if (d < lb && i + d < s) {
                cs_coll_send_nz(b, base + i, base + i + d, off, len, tag);
                cs_coll_wait(b, base + i);
            }
        }
    }
}

/* Binomial gather of each group's blocks to its leader (round j: index i
 * with lowest set bit 2^j sends its blocks [i, i+2^j) to i - 2^j), then rdb
 * all-gather among the leaders (round j: leader l and l XOR 2^j swap all
 * they hold), then a binomial broadcast of the whole buffer from each
 * leader to its group (cs_coll_group_bcast). */
void cs_coll_hybrid_allgather(cs_coll_builder_t *b, const cs_coll_blocks_t *bl, int y, int tag)
{
    int P = bl->P, ly = floor_log2(y);
    int64_t all = cs_coll_blk(bl, P);
    for (int g = 0; g < y; g++) {
        int base = cs_coll_hybrid_start(P, y, g), s = cs_coll_hybrid_start(P, y, g + 1) - base;
        for (int i = 0; i < s; i++) {
            int lb = i ? lowbit(i) : 1 << 30;
            for (int d = 1; d < lb && i + d < s; d *= 2) {
                int hi = i + 2 * d < s ? i + 2 * d : s;
                cs_coll_recv_nz(b, base + i, base + i + d, cs_coll_blk(bl, base + i + d),
                                cs_coll_blk(bl, base + hi) - cs_coll_blk(bl, base + i + d), tag);
            }
            cs_coll_wait(b, base + i);
            if (i) {
                int hi = i + lb < s ? i + lb : s;
                cs_coll_send_nz(b, base + i, base + i - lb, cs_coll_blk(bl, base + i),
                             cs_coll_blk(bl, base + hi) - cs_coll_blk(bl, base + i), tag);
                cs_coll_wait(b, base + i);
            }
        }
    }
    for (int j = 0; j < ly; j++) {
        int d = 1 << j;
        for (int l = 0; l < y; l++) {
            int p = l ^ d, mine = l & ~(d - 1), theirs = p & ~(d - 1);
            int r = cs_coll_hybrid_start(P, y, l), pr = cs_coll_hybrid_start(P, y, p);
            int64_t mo = cs_coll_blk(bl, cs_coll_hybrid_start(P, y, mine)),
                    mh = cs_coll_blk(bl, cs_coll_hybrid_start(P, y, mine + d));
            int64_t to = cs_coll_blk(bl, cs_coll_hybrid_start(P, y, theirs)),
                    th = cs_coll_blk(bl, cs_coll_hybrid_start(P, y, theirs + d));
            cs_coll_send_nz(b, r, pr, mo, mh - mo, tag + 1 + j);
            cs_coll_recv_nz(b, r, pr, to, th - to, tag + 1 + j);
            cs_coll_wait_recvs(b, r); /* the blocks sent are never written again */
        }
    }
    for (int g = 0; g < y; g++) {
        int base = cs_coll_hybrid_start(P, y, g);
        cs_coll_group_bcast(b, base, cs_coll_hybrid_start(P, y, g + 1) - base, 0, all, tag + 64);
    }
}

/* ---- per dimension (ASTRA-sim's hierarchical collectives; issue 18) ---------
 * The ranks form a lattice d0 x d1 x ... (dimension 0 innermost: a node's
 * fast ring, then a switch between nodes), each dimension its own network;
 * a *line* of dimension d is the ranks that differ only in coordinate d.
 * A step reduce-scatters or all-gathers one range over every line of one
 * dimension, the range split into the line's s pieces (member q ends with
 * or starts from piece q), as a ring or directly (every member sends each
 * other member its piece, one after the other, so that each step is a
 * permutation of the line). */

static const char *const dim_algos[] = {"ring", "direct", NULL};

int cs_coll_dims_get(const cs_coll_args_t *a, cs_coll_dims_t *g, cs_error_t *err)
{
    const char *v = a->opts ? cs_spec_get(a->opts, "dims") : NULL;
    const char *in = a->opts ? cs_spec_get(a->opts, "inner") : NULL;
    int64_t prod = 1;
    memset(g, 0, sizeof *g);
    if (v) {
        for (const char *p = v; *p;) {
            char *end;
            long x = strtol(p, &end, 10);
            if (end == p || x < 1 || x > a->P || g->n == CS_COLL_MAX_DIMS ||
                (*end && *end != 'x' && *end != '+'))
                return cs_error_set(err, CS_ERR_USAGE, "option dims=%s: expected sizes joined "
                                    "by x (e.g. 8x16), at most %d, each 1..P", v,
                                    CS_COLL_MAX_DIMS);
            g->size[g->n++] = (int)x;
            p = *end ? end + 1 : end;
        }
    } else if (a->hints && a->hints->ndims > 0) {
        g->n = a->hints->ndims < CS_COLL_MAX_DIMS ? a->hints->ndims : CS_COLL_MAX_DIMS;
        memcpy(g->size, a->hints->dims, (size_t)g->n * sizeof *g->size);
    } else {
        g->size[g->n++] = a->P; /* one dimension */
    }
    for (int d = 0; d < g->n; d++)
        prod *= g->size[d];
    if (prod != a->P)
        return cs_error_set(err, CS_ERR_RANGE, "the dimensions multiply to %lld ranks, not P = "
                            "%d (option dims=AxB or a machine whose hint covers the ranks)",
                            (long long)prod, a->P);
    for (int d = 0; in && *in; d++) {
        size_t len = strcspn(in, "+");
        int k = -1;
        for (int i = 0; dim_algos[i]; i++)
            if (strlen(dim_algos[i]) == len && !strncmp(in, dim_algos[i], len))
                k = i;
        if (k < 0 || d >= g->n)
            return cs_error_set(err, CS_ERR_USAGE, "option inner=%s: one of ring, direct per "
                                "dimension, joined by + (%d dimensions)",
                                cs_spec_get(a->opts, "inner"), g->n);
        for (int e = d; e < g->n; e++) /* the last given goes for the rest */
            g->algo[e] = k;
        in += len + (in[len] == '+');
    }
    return CS_OK;
}

/* The range a line of dimension d shares, from its coordinate-0 member r.
 * blocks = 0 (allreduce): [0, n) split along the dimensions before d by
 * r's coordinates.  blocks = 1 (the P blocks of m bytes of reduce-scatter
 * and all-gather, block r ending on rank r): the blocks of every rank with
 * r's coordinates above d, which are consecutive. */
static void dims_range(const cs_coll_args_t *a, const cs_coll_dims_t *g, int d, int r,
                       int blocks, int64_t *off, int64_t *len)
{
    if (blocks) {
        int64_t span = 1;
        for (int e = 0; e <= d; e++)
            span *= g->size[e];
        *off = (r - r % span) * a->bytes;
        *len = span * a->bytes;
        return;
    }
    *off = 0;
    *len = a->bytes;
    for (int e = 0; e < d; e++) {
        int64_t o, l;
        cs_coll_split(*len, g->size[e], r % g->size[e], &o, &l);
        *off += o;
        *len = l;
        r /= g->size[e];
    }
}

void cs_coll_dims_step(cs_coll_builder_t *b, const cs_coll_dims_t *g, int d, int rs, int blocks)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int s = g->size[d], stride = 1;
    for (int e = 0; e < d; e++)
        stride *= g->size[e];
    int32_t *grp = cs_malloc((size_t)s * sizeof *grp);
    int64_t *off = cs_malloc((size_t)s * sizeof *off), *len = cs_malloc((size_t)s * sizeof *len);
    for (int base = 0; base < a->P; base++) {
        if (base / stride % s) /* one visit per line: its coordinate-0 member */
            continue;
        int64_t o, l;
        dims_range(a, g, d, base, blocks, &o, &l);
        for (int q = 0; q < s; q++) {
            grp[q] = base + q * stride;
            cs_coll_split(l, s, q, &off[q], &len[q]);
            off[q] += o;
        }
        if (g->algo[d] == 0 && rs)
            cs_coll_ring_reduce_scatter(b, grp, s, off, len, TAG_RS);
        else if (g->algo[d] == 0)
            cs_coll_ring_allgather(b, grp, s, off, len, TAG_AG);
        else
            for (int q = 0; q < s; q++) {
                /* sends one after the other; recvs posted at once (they
                 * write the member's own piece, the sends read others) */
                int32_t prev = -1;
                for (int t = 1; t < s; t++) {
                    int to = (q + t) % s, from = (q - t + s) % s;
                    int32_t op = cs_coll_send_nz(b, grp[q], grp[to], off[rs ? to : q],
                                                 len[rs ? to : q], TAG_DATA);
                    cs_coll_dep(b, op, prev, CS_DEP_AFTER);
                    prev = op >= 0 ? op : prev;
                    if (rs)
                        cs_coll_recv_reduce_nz(b, grp[q], grp[from], off[q], len[q], TAG_DATA);
                    else
                        cs_coll_recv_nz(b, grp[q], grp[from], off[from], len[from], TAG_DATA);
                }
                cs_coll_wait(b, grp[q]);
            }
    }
    free(grp);
    free(off);
    free(len);
}
