/*
 * coll_internal.h - what the algorithms of the collective suite share, and
 * only they: private to src/coll/ (nothing outside includes it).
 *
 * The suite is organised by collective (broadcast.c, reduce.c, allreduce.c,
 * allgather.c, reduce_scatter.c, scatter_gather.c, barrier.c, alltoall.c);
 * each file holds every algorithm of its collective whatever paper it comes
 * from and exports one table for the registry (coll.c).  Everything two
 * collectives use is here, written once:
 *
 *   - rank arithmetic (bits, root-relative ranks, folding the extra ranks of
 *     a non-power of two into a power of two);
 *   - rank groups (from the machine's hierarchy hint, consecutive ranges,
 *     the root-first groups of the Cell broadcasts);
 *   - options several algorithms read (seg, k, every);
 *   - building blocks that emit ops: segment pipelines, divide-and-conquer
 *     scatter/gather, ring rounds, binomial trees up and down, folds,
 *     recursive halving, a token barrier among a set of ranks, the Cell
 *     hybrid all-gather (coll_internal.c);
 *   - the Cerebras thesis's reduction trees with ordered children and their
 *     streaming emission, the *visit* (visit.c).
 *
 * Like the algorithms, helpers skip zero-length messages on both sides and
 * check no input an algorithm has validated already.  Tags: a helper that
 * emits uses the tags its callers pass, or the fixed tags below, which are
 * the tags the algorithms have always used (programs stay op for op and tag
 * for tag the same).
 */
#ifndef CS_COLL_INTERNAL_H
#define CS_COLL_INTERNAL_H

#include <stdint.h>
#include "coll/coll.h"

/* ---- tags ----------------------------------------------------------------
 * A pair of ranks may exchange messages in several phases; distinct tags
 * keep them from matching across phases.  Within a phase messages between a
 * pair are posted in the same order on both sides.  Three families, by the
 * way the algorithms number their phases: */

/* The round-based algorithms (lecture, generic MPI, Groq gateway). */
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

/* The Cerebras thesis's patterns: one tag per phase. */
enum { THESIS_REDUCE = 1, THESIS_BCAST = 2, THESIS_REDUCE2 = 3, THESIS_BCAST2 = 4 };

/* The machine papers' algorithms (Cell, CNS-1, Groq hierarchical): each
 * phase gets a range of PHASE_STRIDE tags, rounds count up inside it;
 * BARRIER_TAG(j, k) is the tag (inside a range) of the barrier tokens after
 * rdb round j, dissemination round k. */
#define PHASE_STRIDE (1 << 20)
#define PHASE_TAG(phase) ((phase) * PHASE_STRIDE)
#define BARRIER_TAG(j, k) (4096 + (j) * 64 + (k))

/* ---- rank arithmetic ----------------------------------------------------- */

/* ---- the builder seen by coll/window.c ---------------------------------- */

/* Checks the arguments every collective needs (ranks, size, root). */
int cs_coll_build_check(const cs_coll_args_t *a, cs_error_t *err);
/* Runs the algorithm into the builder, checks its options, names and
 * finalizes the program. */
int cs_coll_build_run(const cs_coll_algo_t *algo, cs_coll_builder_t *b, cs_error_t *err);
/* Keeps closed_below (P entries, see core/progen.h) up to date and calls
 * at_wait(ctx) after every wait: the moments a windowed build may pause. */
void cs_coll_builder_watch(cs_coll_builder_t *b, int32_t *closed_below,
                           void (*at_wait)(void *ctx), void *ctx);
/* Ranks whose next op would have no dependency (none of their ops waited
 * for yet). */
int cs_coll_builder_unchained(const cs_coll_builder_t *b);
/* For an algorithm that orders a rank's ops with cs_coll_dep alone, never
 * with waits (NCCL's rings, nccl_ring.c): no op of `rank` below `below`
 * gets another dependent, and every op the rank issues from now on depends
 * on one issued before.  In a windowed build this closes the rank's ops
 * below `below` (as a wait would) and is a moment to pause; either way the
 * rank's outstanding list, which only waits read, is dropped, so that it
 * does not hold every op of the rank. */
void cs_coll_chained(cs_coll_builder_t *b, int rank, int32_t below);
/* Calls fn(ctx, op, pred) for every streaming dependency the algorithm
 * adds (cs_coll_dep), after the program took it: what --validate on a
 * windowed run needs of the dependencies, which a window does not table. */
void cs_coll_builder_on_stream(cs_coll_builder_t *b,
                               void (*fn)(void *ctx, int32_t op, int32_t pred), void *ctx);
/* cs_coll_builder_on_stream for a generator of cs_coll_generate, before
 * its first advance. */
void cs_coll_generate_on_stream(cs_progen_t *g, void (*fn)(void *ctx, int32_t op, int32_t pred),
                                void *ctx);
/* What cs_coll_scan shows of each batch: ops [first, end) of p (with their
 * data descriptors unless a->no_data) and the n dependencies added since
 * the last batch.  Everything below `first` is gone.  A non-zero return
 * stops the pass (cs_coll_scan returns it; the caller keeps the message). */
typedef int (*cs_coll_scan_fn)(void *ctx, const cs_program_t *p, int32_t first, int32_t end,
                                const cs_wdep_t *deps, int64_t n);
/* Runs the algorithm once without running its program: built as a windowed
 * program, shown to `visit` a batch of 2^16 ops at a time and given back,
 * so memory follows a window, not the program.  (--validate on a windowed
 * run reads every data descriptor this way before the run.)  Returns the
 * builder's error, as cs_coll_build would, or visit's code. */
int cs_coll_scan(const cs_coll_algo_t *algo, const cs_coll_args_t *a, cs_coll_scan_fn visit,
                 void *ctx, cs_error_t *err);

/* Op count bounds (cs_coll_algo_t.max_ops), saturated at INT64_MAX:
 * k ops per ordered pair of ranks (rings, pairwise and flat exchanges),
 * k per rank but one (trees, stars), k per rank and round of
 * ceil(log2 P) rounds (dissemination). */
static inline int64_t cs_coll_ops_pairs(int64_t P, int64_t k)
{
    int64_t pairs = P * (P > 0 ? P - 1 : 0); /* P < 2^31: no overflow */
    return pairs > INT64_MAX / k ? INT64_MAX : k * pairs;
}
static inline int64_t cs_coll_ops_star(int64_t P, int64_t k) { return P > 0 ? k * (P - 1) : 0; }
int64_t cs_coll_ops_rounds(int64_t P, int64_t k);

static inline int lowbit(int x) { return x & -x; }
static inline int is_pow2(int64_t x) { return x > 0 && !(x & (x - 1)); }
/* floor(log2 x) for x >= 1 */
static inline int floor_log2(int64_t x)
{
    int k = 0;
    while ((x >> (k + 1)) > 0)
        k++;
    return k;
}
/* Largest power of two <= P (P >= 1). */
static inline int pow2_floor(int P) { return 1 << floor_log2(P); }
/* x mod P in [0, P). */
static inline int mod(int64_t x, int P) { return (int)(((x % P) + P) % P); }
/* The rank at root-relative index rel (the root is index 0). */
static inline int real_rank(int rel, int root, int P) { return (rel + root) % P; }

/* Folding a non-power of two: P = Pp + e with Pp the largest power of two
 * <= P; e extra ranks hand their data to a partner and sit out the power-
 * of-two part.  Two rules (option fold=, cs_coll_opt_fold):
 *
 *   near (MPICH's rule, Thakur, Rabenseifner, Gropp 2005): ranks 2i and
 *     2i+1 (i < e) form virtual rank i, represented by 2i; rank r >= 2e is
 *     virtual rank r - e.  Virtual rank v stands for the real ranks
 *     [fold_real(v), fold_real(v+1)), so any range of virtual ranks covers a
 *     contiguous range of real ranks (and of their blocks): every message of
 *     recursive halving or doubling is one range.  The partner is adjacent
 *     in rank order (on the Cell blade: on the same chip).
 *   far (Open MPI's coll/base recursive-doubling barrier; its allreduce
 *     pairs neighbours like MPICH): rank Pp + i (i < e) folds onto rank i;
 *     rank v < Pp is virtual rank v and stands for {v, v + Pp} (v < e) or
 *     {v}.  The partner is Pp ranks away (on the Cell blade: across the
 *     BIF), and a range of virtual ranks covers up to two ranges of real
 *     ranks (fold_span): algorithms that move per-rank blocks send two
 *     messages where near sends one.
 *
 * The ranks may be root-relative indices (Rabenseifner's reduce). */
typedef struct cs_coll_fold {
    int P, Pp, e;
    int far; /* 0: near, 1: far */
} cs_coll_fold_t;

static inline cs_coll_fold_t cs_coll_fold_rule(int P, int far)
{
    cs_coll_fold_t f;
    f.P = P;
    f.Pp = pow2_floor(P);
    f.e = P - f.Pp;
    f.far = far;
    return f;
}
/* The near rule (the suite's default). */
static inline cs_coll_fold_t cs_coll_fold_make(int P) { return cs_coll_fold_rule(P, 0); }
/* Virtual rank of r, or -1 for an extra rank. */
static inline int fold_virt(const cs_coll_fold_t *f, int r)
{
    if (f->far)
        return r < f->Pp ? r : -1;
    if (r < 2 * f->e)
        return r % 2 ? -1 : r / 2;
    return r - f->e;
}
/* The real rank that represents virtual rank v.  Near: also the first real
 * rank v stands for (v = Pp gives P), the bound of fold_span's range. */
static inline int fold_real(const cs_coll_fold_t *f, int v)
{
    if (f->far)
        return v;
    return v < f->e ? 2 * v : v + f->e;
}
/* Extra rank i (i < e) and the partner that stands for it. */
static inline int fold_extra(const cs_coll_fold_t *f, int i) { return f->far ? f->Pp + i : 2 * i + 1; }
static inline int fold_partner(const cs_coll_fold_t *f, int i) { return f->far ? i : 2 * i; }
/* The real ranks virtual ranks [lo, hi) stand for, as ranges [s[0], s[1])
 * and (if the count returned is 2) [s[2], s[3]); hi = Pp allowed. */
static inline int fold_span(const cs_coll_fold_t *f, int lo, int hi, int s[4])
{
    if (!f->far) {
        s[0] = fold_real(f, lo);
        s[1] = fold_real(f, hi);
        return 1;
    }
    s[0] = lo;
    s[1] = hi;
    if (lo >= f->e)
        return 1;
    s[2] = f->Pp + lo;
    s[3] = f->Pp + (hi < f->e ? hi : f->e);
    return 2;
}

/* ---- rank groups -----------------------------------------------------------
 * Groups as lists of ranks: the members of group j are mem[start[j] ..
 * start[j+1]); of[r] is r's group and at[r] its index in that list.  Every
 * group computation of the suite builds one of these. */
typedef struct cs_coll_groups {
    int G;
    int32_t *start; /* G + 1 entries */
    int32_t *mem;   /* P entries */
    int32_t *of;    /* P entries */
    int32_t *at;    /* P entries */
} cs_coll_groups_t;

/* G consecutive groups of near-equal size (cs_coll_split of the ranks). */
void cs_coll_groups_consecutive(cs_coll_groups_t *g, int P, int G);
/* The machine's hierarchy hint: G = 0 when there is none.  compact: empty
 * groups dropped and the others renumbered in order; else the hint's ids as
 * they are (G = ngroups, so that the gateway hint's indices still apply).
 * Errors: a group id outside the hint's range. */
int cs_coll_groups_hint(cs_coll_groups_t *g, const cs_coll_args_t *a, int compact,
                        cs_error_t *err);
/* For the rooted algorithms: the hint's groups when there are at least two;
 * else (hint absent or one group) with two_halves the two halves of the
 * relative ranks, [0, ceil(P/2)) with the root and [ceil(P/2), P) (the Cell
 * blade's two chips when the root is 0 and P = 16), without it one group of
 * all ranks.  Each group is written as a list starting with its
 * representative: the root for the root's group, else the group's first
 * rank after the root in cyclic order; the others follow in cyclic order.
 * Groups are listed starting with the root's, cyclically. */
int cs_coll_groups_rooted(cs_coll_groups_t *g, const cs_coll_args_t *a, int two_halves,
                          cs_error_t *err);
void cs_coll_groups_destroy(cs_coll_groups_t *g);

/* ---- options ---------------------------------------------------------------- */

int cs_coll_opt_given(const cs_coll_args_t *a, const char *key);
/* seg=BYTES: >= 1, by default the machine's packet size (the natural unit
 * of a pipeline). */
int cs_coll_opt_seg(const cs_coll_args_t *a, int64_t *seg, cs_error_t *err);
/* k=N of the k-chain algorithms: 1 <= k (default 2); more chains than
 * non-root ranks are empty, so the effective k is min(k, P-1). */
int cs_coll_opt_k(const cs_coll_args_t *a, int64_t *k, cs_error_t *err);
/* every=N rounds between barriers, 1..64 (Cell mailbox reduce, Rdb-Barrier). */
int cs_coll_opt_every(const cs_coll_args_t *a, int64_t dflt, int *every, cs_error_t *err);
/* fold=near|far: where the extra ranks of a non-power of two fold (see
 * cs_coll_fold_t); *far = 1 for far, dflt when the key is absent. */
int cs_coll_opt_fold(const cs_coll_args_t *a, int dflt, int *far, cs_error_t *err);

/* ---- segments and pieces -------------------------------------------------- */

/* Number of segments of a->bytes (at least one), checked against a cap on
 * messages (segments x ranks) beyond which the program would need
 * gigabytes; the error says to raise seg. */
int cs_coll_nsegs(const cs_coll_args_t *a, int64_t seg, int64_t *S, cs_error_t *err);
/* Segment s of n bytes cut in segments of seg bytes (the last one shorter). */
void cs_coll_seg_range(int64_t n, int64_t seg, int64_t s, int64_t *off, int64_t *len);
/* Offsets of the P+1 boundaries of per-rank pieces: piece i of the buffer is
 * [boff[i], boff[i+1]).  m >= 0: blocks of m bytes (gather/scatter); m < 0:
 * the whole vector n split by cs_coll_split (broadcast, reduce).  Caller
 * frees. */
int64_t *cs_coll_piece_bounds(int P, int64_t m, int64_t n);

/* A block layout: P blocks of m bytes, or (split) n bytes split by
 * cs_coll_split, so that all-gather code serves the all-reduces built on a
 * reduce-scatter. */
typedef struct cs_coll_blocks {
    int P;
    int split;     /* 0: block i = [i*m, (i+1)*m); 1: cs_coll_split(n, P, i) */
    int64_t m, n;
} cs_coll_blocks_t;
/* Offset of block i, for i in [0, P] (blk(P) is the end of the buffer), so
 * blocks [i, j) are the bytes [blk(i), blk(j)). */
int64_t cs_coll_blk(const cs_coll_blocks_t *bl, int i);

/* ---- messages ---------------------------------------------------------------- */

/* Message from `from` to `to` of [off, off+len), same range on both sides
 * (none when len = 0).  Returns the send op; *rop (if non-NULL) gets the
 * recv op. */
int32_t cs_coll_xfer(cs_coll_builder_t *b, int from, int to, int64_t off, int64_t len, int tag,
                     int32_t *rop);
/* A copy [src, src+len) -> [dst, dst+len) inside rank r's buffer.  The
 * program model has no copy op, so it is a message to itself: the validator
 * sees the data move, and the machine prices it (a message that crosses no
 * link; the alphabeta machine charges its send overhead).  Copies issued in
 * one batch all read before any of them writes (sends read when they start). */
void cs_coll_local_copy(cs_coll_builder_t *b, int r, int64_t src, int64_t dst, int64_t len);

/* ---- orders and trees -------------------------------------------------------- */

/* The P ranks in cyclic order from `root` (root 0: 0, 1, ..., P-1): the
 * list of every rank that the algorithms over "all ranks" walk.  Caller
 * frees. */
int32_t *cs_coll_ranks_from(int P, int root);

/* The pieces of the ring algorithms over the machine's ring order (the hint
 * or the identity): position i of the ring holds ring[i]; blocks = 1: piece
 * i is the block of rank ring[i], [ring[i]*m, (ring[i]+1)*m) with m =
 * a->bytes; blocks = 0: piece i is cs_coll_split's range i of the vector. */
typedef struct cs_coll_ring_pieces {
    int32_t *ring;
    int64_t *off, *len;
} cs_coll_ring_pieces_t;

void cs_coll_ring_pieces_init(cs_coll_ring_pieces_t *rp, const cs_coll_args_t *a, int blocks);
void cs_coll_ring_pieces_destroy(cs_coll_ring_pieces_t *rp);

/* The chain order of the pipelined algorithms: the machine's ring order
 * starting at the root, seq[0] = root.  Caller frees. */
int32_t *cs_coll_chain_order(const cs_coll_args_t *a);

/* Divide and conquer over contiguous rank ranges (lecture §8.5): the range
 * [lo, hi) of ranks is held by h; it is halved, h sends (scatter) or
 * receives (gather) the other half's pieces [boff[..]) to / from a
 * representative there, and both halves recurse.  alpha ceil(log2 P) +
 * beta m (P-1) for any P. */
void cs_coll_dc_scatter(cs_coll_builder_t *b, const int64_t *boff, int lo, int hi, int h, int tag);
void cs_coll_dc_gather(cs_coll_builder_t *b, const int64_t *boff, int lo, int hi, int h, int tag);

/* Ring allgather among the G ranks grp[0..G) (in ring order): piece i,
 * [off[i], off[i]+len[i]), starts at position i; G-1 steps, each position
 * passing on the piece it received last (lecture §8.7). */
void cs_coll_ring_allgather(cs_coll_builder_t *b, const int32_t *grp, int G, const int64_t *off,
                            const int64_t *len, int tag);
/* Ring reduce-scatter among grp[0..G): position i ends with piece i reduced
 * over the group (the dual of the ring allgather). */
void cs_coll_ring_reduce_scatter(cs_coll_builder_t *b, const int32_t *grp, int G,
                                 const int64_t *off, const int64_t *len, int tag);

/* Binomial tree rooted at rank 0 (the lecture's bit-fixing tree, §8.1), up:
 * each rank takes its children in increasing subtree size, one at a time,
 * then passes on to its parent (tag TAG_UP).  m > 0: a gather of the blocks
 * [r*m, (r+1)*m) (a rank passes up its subtree's blocks, one range); m = 0:
 * every message carries [off, off+len), added (reduce = 1) or copied. */
void cs_coll_tree_up(cs_coll_builder_t *b, int P, int reduce, int64_t off, int64_t len, int64_t m);
/* Down: broadcast [off, off+len) from rank 0, farthest child first (TAG_DOWN). */
void cs_coll_tree_down(cs_coll_builder_t *b, int P, int64_t off, int64_t len);

/* ---- folds and halving --------------------------------------------------------- */

/* Extra ranks hand [off, off+len) to their partner (fold_partner), which
 * adds it (reduce = 1) or just takes note (0: a barrier token); TAG_FOLD. */
void cs_coll_fold_in(cs_coll_builder_t *b, const cs_coll_fold_t *f, int64_t off, int64_t len,
                     int reduce);
/* The partner returns [off, off+len) to its extra rank; TAG_UNFOLD. */
void cs_coll_fold_out(cs_coll_builder_t *b, const cs_coll_fold_t *f, int64_t off, int64_t len);
/* The bytes of virtual ranks [lo, hi) (hi <= Pp): with poff (pieces per
 * virtual rank, e.g. a vector split in Pp) the one range [poff[lo],
 * poff[hi]); else the blocks of bl of the real ranks they stand for
 * (fold_span: one range near, up to two far).  Returns the count. */
int cs_coll_fold_bytes(const cs_coll_fold_t *f, const int64_t *poff, const cs_coll_blocks_t *bl,
                       int lo, int hi, int64_t off[2], int64_t len[2]);
/* Recursive halving over the virtual ranks [0, Pp) whose piece v is
 * cs_coll_fold_bytes(f, poff, bl, v, v+1): ends with piece v reduced on
 * virtual rank v. */
void cs_coll_halving(cs_coll_builder_t *b, const cs_coll_fold_t *f, const int64_t *poff,
                     const cs_coll_blocks_t *bl, int tag);

/* ---- per dimension (ASTRA-sim's hierarchical collectives; issue 18) ------------ */

/* The rank lattice: sizes (dimension 0 innermost) from --opt dims=AxB, else
 * the machine's dimensions hint, else one dimension of P; each dimension's
 * algorithm (0 ring, 1 direct) from --opt inner=ring|direct or one per
 * dimension joined by '+'.  Errors name the option. */
typedef struct cs_coll_dims {
    int n;
    int size[CS_COLL_MAX_DIMS];
    int algo[CS_COLL_MAX_DIMS];
} cs_coll_dims_t;
int cs_coll_dims_get(const cs_coll_args_t *a, cs_coll_dims_t *g, cs_error_t *err);
/* A reduce-scatter (rs = 1) or all-gather over every line of dimension d
 * (the ranks differing only in coordinate d).  blocks = 0: the allreduce's
 * vector, as the steps before d split it; blocks = 1: the P blocks of
 * --bytes each, block r ending on rank r (reduce-scatter from the last
 * dimension down, all-gather from the first up keep each rank's blocks
 * consecutive). */
void cs_coll_dims_step(cs_coll_builder_t *b, const cs_coll_dims_t *g, int d, int rs, int blocks);

/* ---- the Cell papers' building blocks -------------------------------------- */

/* 0-byte tokens among ranks[0..cnt): recursive doubling for a power of two
 * (the Cell paper's barrier), dissemination otherwise; ceil(log2 cnt)
 * rounds, tags tag + round. */
void cs_coll_barrier_among(cs_coll_builder_t *b, const int32_t *ranks, int cnt, int tag);
/* The hybrid-x-y shape (Cell paper §3.3, §3.5): the number y of rdb leaders
 * from the options x and y (see coll_internal.c).  Errors name the option. */
int cs_coll_hybrid_shape(const cs_coll_args_t *a, int *y_out, cs_error_t *err);
/* First rank of hybrid group g (g in [0, y]): y consecutive groups. */
int cs_coll_hybrid_start(int P, int y, int g);
/* Binomial broadcast of [off, off+len) from base to ranks [base, base+s),
 * biggest subtree first, each after the previous transfer completed. */
void cs_coll_group_bcast(cs_coll_builder_t *b, int base, int s, int64_t off, int64_t len, int tag);
/* The hybrid-x-y all-gather of the blocks of bl with y leaders (tags
 * tag .. tag + 64). */
void cs_coll_hybrid_allgather(cs_coll_builder_t *b, const cs_coll_blocks_t *bl, int y, int tag);

/* ---- reduction trees and the visit (visit.c, Cerebras thesis Ch. 5-7) ----------
 * A forest over ranks with *ordered* children: a rank receives its children
 * one after the other and adds each, the last one streamed on to its parent
 * (the visit).  The thesis's reduce patterns differ only in the tree. */
typedef struct cs_coll_rtree {
    int P;
    int32_t *parent, *first, *last, *next; /* -1: none */
} cs_coll_rtree_t;

void cs_coll_rtree_init(cs_coll_rtree_t *t, int P);
void cs_coll_rtree_destroy(cs_coll_rtree_t *t);

/* The thesis's 1D base patterns and the whole-collective patterns built on
 * a base (§5.1-§6.3). */
typedef enum cs_coll_pattern {
    PAT_CHAIN, PAT_TREE, PAT_TWO_PHASE, PAT_SCALAR, PAT_PREORDER,
    PAT_LEFT_RIGHT, PAT_RING, PAT_JUMP
} cs_coll_pattern_t;

typedef struct cs_coll_pcfg {
    cs_coll_pattern_t base;
    int64_t S;       /* two-phase group size; 0 = ceil(sqrt k) of each list */
    int64_t B;       /* pre-order: vector length in 32-bit elements */
    int64_t TR;      /* pre-order: ramp latency in cycles */
} cs_coll_pcfg_t;

/* Adds base pattern c->base over the list L[0..k) reducing to L[0]. */
void cs_coll_pattern_apply(cs_coll_rtree_t *t, const int32_t *L, int k, const cs_coll_pcfg_t *c);
/* The tree of a whole 1D reduce to `root` (a base pattern relabelled
 * cyclically, or left-right / ring / jump over `base`).  Errors: a ring hint
 * that is not a permutation. */
int cs_coll_rtree_1d(cs_coll_rtree_t *t, const cs_coll_args_t *a, int root,
                     cs_coll_pattern_t pat, const cs_coll_pcfg_t *base, cs_error_t *err);
/* 2D (§6.4): every column to the root's row, then that row to the root. */
void cs_coll_rtree_2d(cs_coll_rtree_t *t, int rows, int cols, int root, const cs_coll_pcfg_t *base);
/* Emits the forest over [0, n) in pre-order; final[root] (if non-NULL)
 * receives each tree root's last calc (or -1). */
void cs_coll_emit_forest(cs_coll_builder_t *b, const cs_coll_rtree_t *t, int64_t n, int stream,
                         int tag, int32_t *final);
/* One multicast of [0, n) from root to group[0..k) (the thesis's broadcast),
 * streamed from after_calc where the thesis pipelines it (see visit.c). */
void cs_coll_emit_mcast(cs_coll_builder_t *b, const cs_coll_rtree_t *t, int root,
                        const int32_t *group, int k, int64_t n, int tag, int stream,
                        int32_t after_calc);

/* The options of the thesis's algorithms.  `what` says which keys apply:
 * VISIT_BASE base= over the base patterns, VISIT_ANY base= over every
 * pattern (and inner= for left-right / jump), VISIT_ROOT root=; S= and TR=
 * are read only when the base uses them, so that a key given where it means
 * nothing is reported, not ignored. */
enum { VISIT_BASE = 1, VISIT_ANY = 2, VISIT_ROOT = 4 };

typedef struct cs_coll_visit_cfg {
    int stream;
    cs_coll_pattern_t pat; /* the reduce pattern */
    cs_coll_pcfg_t c;      /* its base (itself for the base patterns) */
    int root;              /* allreduce: the reduce root */
} cs_coll_visit_cfg_t;

int cs_coll_visit_cfg(const cs_coll_args_t *a, unsigned what, cs_coll_pattern_t pat,
                      cs_coll_visit_cfg_t *o, cs_error_t *err);

/* ---- option texts of the registry, shared by several collectives ----- */
#define SEG_TEXT "seg=BYTES segment size (default: the machine's packet size)"
#define FOLD_TEXT                                                                                  \
    "fold=near|far (default near: extra rank 2i+1 folds onto 2i; far: rank Pp+i onto i, Pp the "  \
    "largest power of two <= P)"
#define K_TEXT   "k=N chains (default 2; more than P-1 act as P-1)"
#define STREAM_OPT "stream=0|1 (default 1: forward element by element; 0: store and forward)"
#define BASE_OPT                                                                                   \
    "base=chain|tree|two-phase|scalar|preorder (default chain); S=GROUP (two-phase, default "      \
    "ceil(sqrt k) of each reduced line); TR=CYCLES (preorder, default 2); "

/* ---- the tables of the registry (one per collective, listing order) ----- */
extern const cs_coll_algo_t *const cs_coll_algos_broadcast[];
extern const cs_coll_algo_t *const cs_coll_algos_reduce[];
extern const cs_coll_algo_t *const cs_coll_algos_allreduce[];
extern const cs_coll_algo_t *const cs_coll_algos_allgather[];
extern const cs_coll_algo_t *const cs_coll_algos_reduce_scatter[];
extern const cs_coll_algo_t *const cs_coll_algos_scatter_gather[];
extern const cs_coll_algo_t *const cs_coll_algos_barrier[];
extern const cs_coll_algo_t *const cs_coll_algos_alltoall[];

#endif
