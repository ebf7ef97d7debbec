/*
 * cerebras_model.c - the thesis's analytic cycle model of the Cerebras WSE
 * (papers/000, Ch. 3-7), for `--predict`: the number the thesis would print
 * beside a simulated time.  Formulas as rebuilt in
 * reference/cerebras-wse.md §2; where the printed text contradicts its own
 * proof (note §6) both readings are here, PRINTED (the default: it is the
 * thesis's model, and for tree the one a faithful cycle simulation
 * reproduces, note §8) and REDERIVED.  docs/cerebras-model.md lists every
 * formula with its lemma and the §7 table.
 *
 * The formula functions evaluate the lemmas' expressions literally for any
 * P >= 1 (so T_chain(1,B) = B, which Lemma 5.7 relies on; see
 * cs_cerebras_two_phase); "a line of one PE costs 0" is applied where a
 * pattern is composed (cs_cerebras_line) and by the look-up.
 */
#include "machines/cerebras_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"

/* ---- helpers --------------------------------------------------------------- */

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}
static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}
static int is_pow2(int64_t n)
{
    return n >= 1 && (n & (n - 1)) == 0;
}

/* ceil(log2 n) for n >= 1 (0 for n = 1). */
static int clog2(int64_t n)
{
    int k = 0;
    while (((int64_t)1 << k) < n)
        k++;
    return k;
}

int64_t cs_cerebras_isqrt_ceil(int64_t n)
{
    CS_ASSERT(n >= 1);
    int64_t s = (int64_t)sqrt((double)n);
    while (s * s < n)
        s++;
    while (s > 1 && (s - 1) * (s - 1) >= n)
        s--;
    return s;
}

/* ---- Ch. 3 -------------------------------------------------------------------- */

/* Cor. 3.4: a message is a visit with V = 0 (Lemma 3.3), 2TR + P + B; for
 * B = 1 Lemma 3.2's (Tsend + TR) + (P-1) + (TR + Tstore) = 2TR + 1 + P. */
int64_t cs_cerebras_message(int64_t P, int64_t B, int TR)
{
    CS_ASSERT(P >= 1 && B >= 1 && TR >= 0);
    return 2 * (int64_t)TR + P + B;
}

/* Lemma 3.3: every visited PE adds a down-ramp, an O-op and an up-ramp,
 * 2TR + 1; the stream's last wavelet leaves B - 1 cycles after the first. */
int64_t cs_cerebras_visit(int64_t P, int64_t B, int64_t V, int TR)
{
    CS_ASSERT(P >= 1 && B >= 1 && V >= 0 && TR >= 0);
    return P + (V + 1) * (2 * (int64_t)TR + 1) + B - 1;
}

/* ---- Ch. 4 -------------------------------------------------------------------- */

/* Lemma 4.1: multicast copies to the PEs on the path for free, so a
 * broadcast from one end costs one message across the row. */
int64_t cs_cerebras_broadcast(int64_t P, int64_t B, int TR)
{
    return cs_cerebras_message(P, B, TR);
}

/* §4.2: T_2Dbroadcast((M,N),B,(i,j)) = T_broadcast(M - i + N - j, B) for
 * i < M/2, j < N/2; the farthest PE bounds it, so other roots fold onto
 * that quadrant (i -> min(i, M-1-i)).  The printed third argument "0" is
 * read as "root 0".  PRINTED keeps M - i + N - j; REDERIVED takes the true
 * path, M + N - 2 - i - j hops, i.e. P_eff = M + N - 1 - i - j (note §6.6:
 * the printed value is one cycle more). */
int64_t cs_cerebras_broadcast_2d(int M, int N, int64_t B, int i, int j, int TR,
                                 cs_cerebras_form_t form)
{
    CS_ASSERT(M >= 1 && N >= 1 && i >= 0 && i < M && j >= 0 && j < N);
    int64_t fi = i < M - 1 - i ? i : M - 1 - i, fj = j < N - 1 - j ? j : N - 1 - j;
    int64_t peff = (int64_t)M - fi + N - fj;
    if (form == CS_CEREBRAS_REDERIVED)
        peff -= 1;
    return cs_cerebras_broadcast(peff, B, TR);
}

/* ---- Ch. 5 -------------------------------------------------------------------- */

/* Lemma 5.1: the first wavelet is stored after T_message(2,1), then one
 * arrives per cycle: T_message(2,1) + (P-1)B - 1 = 2TR + 2 + (P-1)B. */
int64_t cs_cerebras_scalar(int P, int64_t B, int TR)
{
    CS_ASSERT(P >= 1 && B >= 1 && TR >= 0);
    return 2 * (int64_t)TR + 2 + (int64_t)(P - 1) * B;
}

/* §5.1 remark: ceil(P/i) PEs i apart, 1 + TR + i + TR + (ceil(P/i) - 1)B. */
int64_t cs_cerebras_scalar_strided(int P, int64_t B, int stride, int TR)
{
    CS_ASSERT(P >= 1 && B >= 1 && stride >= 1 && TR >= 0);
    return 1 + 2 * (int64_t)TR + stride + (ceil_div(P, stride) - 1) * B;
}

/* Lemma 5.2: T_visit(P,B,P-2) = 2(P-1)(TR+1) + B (literal at P = 1: B). */
int64_t cs_cerebras_chain(int P, int64_t B, int TR)
{
    CS_ASSERT(P >= 1 && B >= 1 && TR >= 0);
    return 2 * (int64_t)(P - 1) * (TR + 1) + B;
}

/* Lemma 5.3: the rightmost PE's path visits ceil(log2 P) - 1 PEs. */
int64_t cs_cerebras_tree_nostall(int P, int64_t B, int TR)
{
    CS_ASSERT(P >= 1);
    int k = clog2(P);
    return cs_cerebras_visit(P, B, k > 0 ? k - 1 : 0, TR);
}

/* Lemma 5.4: for d = 2^i, PE i+3d's first wavelet reaches PE i after
 * T_visit(3d+1,1,1) while PE i+d's vector takes T_message(d+1,B), so PE i
 * stalls max(0, T_message(d+1,B) - T_visit(3d+1,1,1)).  The proof's own
 * expression is B - 2d - 2TR - 2 (REDERIVED, note §6.3); the printed result
 * is B - 2(d+TR) - 1 (PRINTED: the note's cycle prototype reproduces it
 * exactly, §8, so it is the default). */
int64_t cs_cerebras_tree_stall(int P, int64_t B, int TR, cs_cerebras_form_t form)
{
    CS_ASSERT(is_pow2(P) && B >= 1 && TR >= 0);
    int64_t c = form == CS_CEREBRAS_REDERIVED ? 2 : 1, sum = 0;
    for (int i = 0; i <= clog2(P) - 2; i++)
        sum += max64(0, B - 2 * (((int64_t)1 << i) + TR) - c);
    return sum;
}

/* Cor. 5.5: (2TR+1) ceil(log2 P) + P - 1 + B + T_stall. */
int64_t cs_cerebras_tree(int P, int64_t B, int TR, cs_cerebras_form_t form)
{
    CS_ASSERT(is_pow2(P));
    return (2 * (int64_t)TR + 1) * clog2(P) + P - 1 + B + cs_cerebras_tree_stall(P, B, TR, form);
}

/* Lemma 5.6 prints V = S + ceil(P/S) - 1 visits; counting along the
 * longest path (S - 1 in the last group, ceil(P/S) - 2 intermediate
 * leaders) gives S + ceil(P/S) - 3, which is also what makes S = P the
 * chain (note §6.4). */
int64_t cs_cerebras_two_phase_nostall(int P, int64_t B, int64_t S, int TR, cs_cerebras_form_t form)
{
    CS_ASSERT(S > 1 && S < P);
    int64_t v = S + ceil_div(P, S) - (form == CS_CEREBRAS_REDERIVED ? 3 : 1);
    return cs_cerebras_visit(P, B, v, TR);
}

/* Two-phase (§5.4), S in (1, P]; S = P (or more: one group) is the chain.
 *
 * PRINTED:
 *   2S >= P, Lemma 5.7:  max(T_chain(P-S,B) + B, T_visit(P,B,S))
 *   2S <  P, Lemma 5.8:  B + P - 1 + (S + ceil(P/S))(2TR+1) + max(0, B - (S + 2TR + 1))
 * (Lemma 5.8's final line, which drops the -1 of its own stall derivation.)
 *
 * REDERIVED (note §6.4, cerebras_model.py T_2phase_CAR):
 *   2 groups:  max(T_chain(P-S,B) + B, T_visit(P,B,S-1))
 *   more:      T_visit(P,B, S + ceil(P/S) - 3) + max(0, B - S - 2TR - 2)
 * The printed form is 2(2TR+1) above it when latency-bound and one more when
 * stalled; the note's prototype matches REDERIVED when latency-bound and
 * lies within about 1% of PRINTED when stalled.
 *
 * Both keep Lemma 5.7's literal T_chain(P-S,B), as the note does: at
 * S = P-1 the one-PE group then costs T_chain(1,B) + B = 2B (e.g. 8192 at
 * P = 512, B = 4096, against 7162 for the chain), an artefact of the lemma
 * that the note's §7 values include. */
int64_t cs_cerebras_two_phase(int P, int64_t B, int64_t S, int TR, cs_cerebras_form_t form)
{
    CS_ASSERT(P >= 1 && B >= 1 && TR >= 0 && (S == 0 || S >= 2));
    if (S == 0)
        S = cs_cerebras_isqrt_ceil(P);
    if (S >= P)
        return cs_cerebras_chain(P, B, TR);
    int64_t ng = ceil_div(P, S), r = 2 * (int64_t)TR + 1;
    if (form == CS_CEREBRAS_REDERIVED) {
        int64_t nost = cs_cerebras_two_phase_nostall(P, B, S, TR, form);
        if (ng == 2)
            return max64(cs_cerebras_chain((int)(P - S), B, TR) + B, nost);
        return nost + max64(0, B - S - 2 * (int64_t)TR - 2);
    }
    if (2 * S >= P)
        return max64(cs_cerebras_chain((int)(P - S), B, TR) + B, cs_cerebras_visit(P, B, S, TR));
    return B + P - 1 + (S + ng) * r + max64(0, B - (S + 2 * (int64_t)TR + 1));
}

int64_t cs_cerebras_two_phase_best(int P, int64_t B, int64_t smax, int TR, cs_cerebras_form_t form,
                                   int64_t *S_out)
{
    CS_ASSERT(smax >= 2 && smax <= P);
    int64_t best = -1, bs = 2;
    for (int64_t S = 2; S <= smax; S++) {
        int64_t t = cs_cerebras_two_phase(P, B, S, TR, form);
        if (best < 0 || t < best) {
            best = t;
            bs = S;
        }
    }
    if (S_out)
        *S_out = bs;
    return best;
}

/* Lemma 5.9: in the last step p0 (holding G1 = p0..p_{i-1}) receives G2 =
 * p_i..p_{P-1} from p_i:
 *   i = P-1:        max(T_OPT(P-1) + B, T_message(P,B))
 *   1 <= i < P-1:   max(T_OPT(i) + B, T_OPT(P-i) + i + 2TR + 1)
 * minimised over i, with T_OPT(1) = 0.  The printed condition is P > 2, but
 * the recursion also gives T_OPT(2,B) = T_message(2,B).  Ties keep the
 * first minimum (the value does not depend on it). */
void cs_cerebras_opt_table(int Pmax, int64_t B, int TR, int64_t *T)
{
    CS_ASSERT(Pmax >= 0 && B >= 1 && TR >= 0);
    T[0] = 0;
    if (Pmax >= 1)
        T[1] = 0;
    for (int P = 2; P <= Pmax; P++) {
        int64_t best = max64(T[P - 1] + B, cs_cerebras_message(P, B, TR));
        for (int i = 1; i < P - 1; i++) {
            int64_t v = max64(T[i] + B, T[P - i] + i + 2 * (int64_t)TR + 1);
            if (v < best)
                best = v;
        }
        T[P] = best;
    }
}

int64_t cs_cerebras_opt(int P, int64_t B, int TR)
{
    CS_ASSERT(P >= 1);
    int64_t *T = cs_malloc(((size_t)P + 1) * sizeof *T);
    cs_cerebras_opt_table(P, B, TR, T);
    int64_t v = T[P];
    free(T);
    return v;
}

int64_t cs_cerebras_line(cs_cerebras_base_t p, int n, int64_t B, int64_t S, int TR,
                         cs_cerebras_form_t form)
{
    CS_ASSERT(n >= 1);
    if (n == 1)
        return 0;
    switch (p) {
    case CS_CEREBRAS_CHAIN: return cs_cerebras_chain(n, B, TR);
    case CS_CEREBRAS_TREE: return cs_cerebras_tree(n, B, TR, form);
    case CS_CEREBRAS_TWO_PHASE: return cs_cerebras_two_phase(n, B, S, TR, form);
    case CS_CEREBRAS_SCALAR: return cs_cerebras_scalar(n, B, TR);
    case CS_CEREBRAS_PREORDER: return cs_cerebras_opt(n, B, TR);
    }
    CS_ASSERT(!"unknown base pattern");
    return 0;
}

/* ---- Ch. 6 -------------------------------------------------------------------- */

/* The root folded into the left half (the thesis's w.l.o.g.). */
static int fold_root(int P, int root)
{
    CS_ASSERT(root >= 0 && root < P);
    return root <= P - 1 - root ? root : P - 1 - root;
}

/* Lemma 6.1: the root's group (root+1 PEs) reduces to the root, the other
 * group (P-root-1) to its PE next to the root, which streams in: either the
 * root is done first and the other side bounds it (+2TR+2 for the last hop
 * and the root's add), or the waiting stream needs B more cycles.
 * A one-PE root group costs 0 (T_OPT(1) = 0, which makes root 0 the chain,
 * as Lemma 6.2 states).  A one-PE other group (P = 2, or P = 3 with the
 * root in the middle) has nothing to reduce but its vector still has to
 * stream: its term is T_message(2,B) = B + 2TR + 2, i.e. T_p(1) = B there
 * (the literal T_chain(1,B) = T_visit(1,B,-1)); with 0 there, P = 2 would
 * give max(B, 2TR + 2), below the message T_message(2,B) that it is. */
int64_t cs_cerebras_left_right(int P, int64_t B, int root, cs_cerebras_base_t p, int64_t S, int TR,
                               cs_cerebras_form_t form)
{
    CS_ASSERT(P >= 2);
    int r = fold_root(P, root);
    int64_t tl = cs_cerebras_line(p, r + 1, B, S, TR, form);
    int64_t tr = P - r - 1 == 1 ? B : cs_cerebras_line(p, P - r - 1, B, S, TR, form);
    return max64(tl + B, tr + 2 * (int64_t)TR + 2);
}

/* Lemma 6.2 (Lemma 6.1 with Lemma 5.2 on both sides). */
int64_t cs_cerebras_left_right_chain(int P, int64_t B, int root, int TR)
{
    CS_ASSERT(P >= 2);
    int r = fold_root(P, root);
    if (r == 0)
        return cs_cerebras_chain(P, B, TR);
    return max64(2 * (int64_t)r * (TR + 1) + 2 * B, 2 * (int64_t)(P - r - 1) * (TR + 1) + B);
}

/* Lemma 6.3.  The ring 0,2,4,...,(last even),(last odd),...,3,1 crosses
 * every unit segment of the line twice, 2(P-1) hops in all; the reduce is
 * a chain (P-2 visits) from the root's ring successor round to the root, so
 * it leaves out the root -> successor link of h hops and travels
 * 2(P-1) - h hops where the chain travels P-1: T_chain + P - 1 - h.
 * PRINTED assumes h = 2 ("+P-3") for every root.  REDERIVED counts h: 1
 * when the successor is a neighbour (root 1 -> 0, and the last even PE ->
 * the last odd one), else 2 (note §6.7 names root 1; the last even PE is the
 * same case at the other end).  P <= 2: the ring is the chain. */
int64_t cs_cerebras_ring_reduce(int P, int64_t B, int root, int TR, cs_cerebras_form_t form)
{
    CS_ASSERT(P >= 1 && root >= 0 && root < P);
    int64_t chain = cs_cerebras_chain(P, B, TR);
    if (P <= 2)
        return chain;
    if (form == CS_CEREBRAS_PRINTED)
        return chain + P - 3;
    int last_even = (P - 1) % 2 == 0 ? P - 1 : P - 2;
    int h = (root == 1 || root == last_even) ? 1 : 2;
    return chain + P - 1 - h;
}

/* Lemma 6.4 (an approximation in the thesis): the other P-1 PEs reduce to
 * the end nearer the root with p, which forwards each final element at
 * once: T_p(P-1) + (Tsend - Tstore) + T_message(root+1,1) - Tsend
 * = T_p(P-1,B) + 2TR + 1 + root, for root < P/2 (mirrored otherwise). */
int64_t cs_cerebras_jump(int P, int64_t B, int root, cs_cerebras_base_t p, int64_t S, int TR,
                         cs_cerebras_form_t form)
{
    CS_ASSERT(P >= 3);
    int r = fold_root(P, root);
    return cs_cerebras_line(p, P - 1, B, S, TR, form) + 2 * (int64_t)TR + 1 + r;
}

/* §6.4: every column to row 0, then row 0 to p00: T_p(M,B) + T_p(N,B). */
int64_t cs_cerebras_reduce_2d(int M, int N, int64_t B, cs_cerebras_base_t p, int64_t S, int TR,
                              cs_cerebras_form_t form)
{
    return cs_cerebras_line(p, M, B, S, TR, form) + cs_cerebras_line(p, N, B, S, TR, form);
}

/* ---- Ch. 7 -------------------------------------------------------------------- */

/* §7.1: P = 2 pipelines the broadcast straight back to the sender:
 * T_broadcast(2,B) + T_broadcast(2,1).  Lemma 7.1 (P > 2): reduce, then a
 * broadcast east and west at once, bounded by the far end:
 * T_p(P,B,root) + T_broadcast(P - root, B), root < P/2 (mirrored). */
int64_t cs_cerebras_naive_allreduce(int P, int64_t B, int root, int64_t t_reduce, int TR)
{
    CS_ASSERT(P >= 1 && B >= 1);
    if (P == 1)
        return 0;
    if (P == 2)
        return cs_cerebras_broadcast(2, B, TR) + cs_cerebras_broadcast(2, 1, TR);
    return t_reduce + cs_cerebras_broadcast(P - fold_root(P, root), B, TR);
}

/* Lemma 7.2: P-1 reduce-scatter and P-1 allgather rounds, each
 * B/P + TR + d + TR + 1 with d = 2 hops between ring neighbours. */
double cs_cerebras_ring_allreduce(int P, int64_t B, int d, int TR)
{
    CS_ASSERT(P >= 1 && B >= 1 && d >= 0 && TR >= 0);
    return 2.0 * (P - 1) * ((double)B / P + TR + d + TR + 1);
}

/* Lemma 7.3 prints sum_{i=1}^{log2(G)} T_ring(P,B,d_i); the sum runs over
 * the log_G(P) steps (note §6.8) and T_ring(P,B,d_i) is a ring allreduce
 * among the G group members at distance d_i <= 2 G^{i-1} (2^{i-1} for
 * G = 2), the note's executable reading. */
double cs_cerebras_butterfly(int P, int64_t B, int G, int TR)
{
    CS_ASSERT(G >= 2 && P >= 1);
    double sum = 0;
    int64_t gi = 1; /* G^{i-1} */
    for (int64_t p = P; p > 1; p /= G) {
        CS_ASSERT(p % G == 0);
        int64_t d = G == 2 ? gi : 2 * gi;
        sum += cs_cerebras_ring_allreduce(G, B, (int)d, TR);
        gi *= G;
    }
    return sum;
}

/* ---- look-up ------------------------------------------------------------------ */

typedef enum algo_kind {
    A_BCAST,
    A_SCALAR,
    A_CHAIN,
    A_TREE,
    A_TWO_PHASE,
    A_PREORDER,
    A_LEFT_RIGHT,
    A_RING,
    A_JUMP,
    A_2D_CHAIN,
    A_2D_TREE,
    A_2D_TWO_PHASE,
    A_NAIVE,
    A_2D_NAIVE,
    A_RING_ALLREDUCE,
    A_BUTTERFLY
} algo_kind_t;

static const char *const k_form[] = {"form", NULL};
static const char *const k_based[] = {"base", "form", NULL};
static const char *const k_naive[] = {"base", "inner", "form", NULL};
static const char *const k_bfly[] = {"g", "inner", "form", NULL};

typedef struct algo_entry {
    const char *coll, *name;
    algo_kind_t kind;
    int dim; /* 1 or 2 (0: either, broadcast) */
    const char *const *keys;
} algo_entry_t;

static const algo_entry_t algos[] = {
    {"broadcast", "thesis", A_BCAST, 0, k_form},
    {"reduce", "scalar", A_SCALAR, 1, k_form},
    {"reduce", "thesis-chain", A_CHAIN, 1, k_form},
    {"reduce", "tree", A_TREE, 1, k_form},
    {"reduce", "two-phase", A_TWO_PHASE, 1, k_form},
    {"reduce", "preorder", A_PREORDER, 1, k_form},
    {"reduce", "left-right", A_LEFT_RIGHT, 1, k_based},
    {"reduce", "ring", A_RING, 1, k_form},
    {"reduce", "jump", A_JUMP, 1, k_based},
    {"reduce", "2d-chain", A_2D_CHAIN, 2, k_form},
    {"reduce", "2d-tree", A_2D_TREE, 2, k_form},
    {"reduce", "2d-two-phase", A_2D_TWO_PHASE, 2, k_form},
    {"allreduce", "naive", A_NAIVE, 1, k_naive},
    {"allreduce", "2d-naive", A_2D_NAIVE, 2, k_based},
    {"allreduce", "ring", A_RING_ALLREDUCE, 1, k_form},
    {"allreduce", "butterfly", A_BUTTERFLY, 1, k_bfly},
};
#define NALGOS ((int)(sizeof algos / sizeof algos[0]))

/* base= values; the first five are cs_cerebras_base_t, in order. */
enum { B_LEFT_RIGHT = 5, B_RING = 6, B_JUMP = 7 };
static const char *const base_names[] = {"chain", "tree", "two-phase", "scalar", "preorder", NULL};
static const char *const naive_base_names[] = {
    "chain", "tree", "two-phase", "scalar", "preorder", "left-right", "ring", "jump", NULL};
static const char *const form_names[] = {"printed", "rederived", NULL};
static const char *const bfly_inner_names[] = {"direct", "ring", NULL};

/* Everything one look-up needs. */
typedef struct query {
    const algo_entry_t *a;
    int P, rows, cols, TR, root;
    int64_t B, S;
    cs_cerebras_form_t form;
    int base, inner, g, bfly_inner;
} query_t;

/* Can pattern p reduce a line of n PEs in the model? */
static int check_line(const query_t *q, cs_cerebras_base_t p, int n, const char *what,
                      cs_error_t *err)
{
    if (n <= 1)
        return CS_OK;
    if (p == CS_CEREBRAS_TREE && !is_pow2(n))
        return cs_error_set(err, CS_ERR_RANGE,
                            "%s: the tree model (Lemma 5.4, Cor. 5.5) needs a power-of-two "
                            "number of PEs, got %d; the thesis gives no formula otherwise",
                            what, n);
    if (p == CS_CEREBRAS_PREORDER && n > CS_CEREBRAS_MAX_P_OPT)
        return cs_error_set(err, CS_ERR_RANGE,
                            "%s: the pre-order programme (Lemma 5.9) is O(P^2); P = %d is "
                            "above the limit %d",
                            what, n, CS_CEREBRAS_MAX_P_OPT);
    if (p == CS_CEREBRAS_TWO_PHASE && q->S == 1)
        return cs_error_set(err, CS_ERR_RANGE,
                            "%s: S = 1; the thesis defines two-phase for S in (1, P] "
                            "(pass 0 for the default ceil(sqrt P))",
                            what);
    return CS_OK;
}

/* T_p to an end of a line of n PEs (the root must be an end). */
static int end_reduce(const query_t *q, cs_cerebras_base_t p, int n, int root, int64_t *out,
                      cs_error_t *err)
{
    int rc;
    if (n > 1 && root != 0 && root != n - 1)
        return cs_error_set(err, CS_ERR_RANGE,
                            "%s: the thesis models the %s pattern to an end PE only (root 0 or "
                            "%d), got root %d; reduce/left-right, reduce/jump and reduce/ring "
                            "are its patterns for other roots",
                            q->a->name, base_names[p], n - 1, root);
    if ((rc = check_line(q, p, n, q->a->name, err)))
        return rc;
    *out = cs_cerebras_line(p, n, q->B, q->S, q->TR, q->form);
    return CS_OK;
}

/* A 1D reduce to q->root with base pattern `base` (a base_names or
 * naive_base_names index) over `inner` where left-right / jump need one. */
static int reduce_1d(const query_t *q, int base, cs_cerebras_base_t inner, int64_t *out,
                     cs_error_t *err)
{
    int P = q->P, rc, r = fold_root(P, q->root);
    switch (base) {
    case B_LEFT_RIGHT:
        if ((rc = check_line(q, inner, r + 1, "left-right (the root's side)", err)) ||
            (rc = check_line(q, inner, P - r - 1, "left-right (the other side)", err)))
            return rc;
        *out = cs_cerebras_left_right(P, q->B, q->root, inner, q->S, q->TR, q->form);
        return CS_OK;
    case B_RING: *out = cs_cerebras_ring_reduce(P, q->B, q->root, q->TR, q->form); return CS_OK;
    case B_JUMP:
        if (P < 3)
            return cs_error_set(err, CS_ERR_RANGE,
                                "jump: Lemma 6.4 needs P >= 3 (the other P-1 PEs reduce before "
                                "the jump), got P = %d",
                                P);
        if ((rc = check_line(q, inner, P - 1, "jump (the P-1 other PEs)", err)))
            return rc;
        *out = cs_cerebras_jump(P, q->B, q->root, inner, q->S, q->TR, q->form);
        return CS_OK;
    default: return end_reduce(q, (cs_cerebras_base_t)base, P, q->root, out, err);
    }
}

static int corner_root(const query_t *q, cs_error_t *err)
{
    int ri = q->root / q->cols, cj = q->root % q->cols;
    if ((ri == 0 || ri == q->rows - 1) && (cj == 0 || cj == q->cols - 1))
        return CS_OK;
    return cs_error_set(err, CS_ERR_RANGE,
                        "%s: the thesis models 2D patterns to a corner PE only (§6.4, §7.4: "
                        "T_p(M,B) + T_p(N,B)); root %d is p(%d,%d) of the %dx%d grid",
                        q->a->name, q->root, ri, cj, q->rows, q->cols);
}

static int predict(query_t *q, double *cycles_out, cs_error_t *err)
{
    int rc, P = q->P;
    int64_t t = 0;
    const int M = q->rows, N = q->cols;
    if (P == 1) {
        *cycles_out = 0;
        return CS_OK;
    }
    switch (q->a->kind) {
    case A_BCAST:
        if (M > 1 && N > 1)
            t = cs_cerebras_broadcast_2d(M, N, q->B, q->root / N, q->root % N, q->TR, q->form);
        else /* Lemma 4.1 to the far end, as Lemma 7.1's proof reads it */
            t = cs_cerebras_broadcast(P - fold_root(P, q->root), q->B, q->TR);
        break;
    case A_SCALAR:
    case A_CHAIN:
    case A_TREE:
    case A_TWO_PHASE:
    case A_PREORDER: {
        static const cs_cerebras_base_t map[] = {[A_SCALAR] = CS_CEREBRAS_SCALAR,
                                                 [A_CHAIN] = CS_CEREBRAS_CHAIN,
                                                 [A_TREE] = CS_CEREBRAS_TREE,
                                                 [A_TWO_PHASE] = CS_CEREBRAS_TWO_PHASE,
                                                 [A_PREORDER] = CS_CEREBRAS_PREORDER};
        if ((rc = end_reduce(q, map[q->a->kind], P, q->root, &t, err)))
            return rc;
        break;
    }
    case A_LEFT_RIGHT:
        if ((rc = reduce_1d(q, B_LEFT_RIGHT, (cs_cerebras_base_t)q->base, &t, err)))
            return rc;
        break;
    case A_RING: t = cs_cerebras_ring_reduce(P, q->B, q->root, q->TR, q->form); break;
    case A_JUMP:
        if ((rc = reduce_1d(q, B_JUMP, (cs_cerebras_base_t)q->base, &t, err)))
            return rc;
        break;
    case A_2D_CHAIN:
    case A_2D_TREE:
    case A_2D_TWO_PHASE: {
        cs_cerebras_base_t p = q->a->kind == A_2D_CHAIN  ? CS_CEREBRAS_CHAIN
                               : q->a->kind == A_2D_TREE ? CS_CEREBRAS_TREE
                                                         : CS_CEREBRAS_TWO_PHASE;
        if ((rc = corner_root(q, err)) || (rc = check_line(q, p, M, "the column phase", err)) ||
            (rc = check_line(q, p, N, "the row phase", err)))
            return rc;
        t = cs_cerebras_reduce_2d(M, N, q->B, p, q->S, q->TR, q->form);
        break;
    }
    case A_NAIVE: {
        int64_t tr = 0;
        if (P > 2 && (rc = reduce_1d(q, q->base, (cs_cerebras_base_t)q->inner, &tr, err)))
            return rc;
        t = cs_cerebras_naive_allreduce(P, q->B, q->root, tr, q->TR);
        break;
    }
    case A_2D_NAIVE: {
        cs_cerebras_base_t p = (cs_cerebras_base_t)q->base;
        if ((rc = corner_root(q, err)) || (rc = check_line(q, p, M, "the column phase", err)) ||
            (rc = check_line(q, p, N, "the row phase", err)))
            return rc;
        /* §7.4: column allreduce then row allreduce, each Lemma 7.1 to the
         * line's end (root 0 after folding the corner). */
        for (int k = 0; k < 2; k++) {
            int n = k ? N : M;
            int64_t tr = n > 2 ? cs_cerebras_line(p, n, q->B, q->S, q->TR, q->form) : 0;
            t += cs_cerebras_naive_allreduce(n, q->B, 0, tr, q->TR);
        }
        break;
    }
    case A_RING_ALLREDUCE:
        *cycles_out = cs_cerebras_ring_allreduce(P, q->B, 2, q->TR);
        return CS_OK;
    case A_BUTTERFLY: {
        if (q->bfly_inner != 1)
            return cs_error_set(err, CS_ERR_RANGE,
                                "butterfly: the thesis models only the ring exchange inside a "
                                "group (Lemma 7.3); pass inner=ring (the suite's default is "
                                "inner=direct)");
        int64_t p = P;
        while (p > 1 && p % q->g == 0)
            p /= q->g;
        if (p != 1)
            return cs_error_set(err, CS_ERR_RANGE,
                                "butterfly: Lemma 7.3 needs P a power of G; P = %d, G = %d", P,
                                q->g);
        *cycles_out = cs_cerebras_butterfly(P, q->B, q->g, q->TR);
        return CS_OK;
    }
    }
    *cycles_out = (double)t;
    return CS_OK;
}

/* Reads the options of q->a from spec (all of them, so that none is left
 * "unused" because of another's value). */
static int read_options(cs_spec_t *spec, query_t *q, cs_error_t *err)
{
    int rc, f = 0;
    int64_t g = 2;
    const char *const *k = q->a->keys;
    for (int i = 0; k[i]; i++) {
        if (!strcmp(k[i], "form"))
            rc = cs_spec_get_choice(spec, "form", form_names, 0, &f, err);
        else if (!strcmp(k[i], "base"))
            rc = cs_spec_get_choice(spec, "base",
                                    q->a->kind == A_NAIVE ? naive_base_names : base_names, 0,
                                    &q->base, err);
        else if (!strcmp(k[i], "inner") && q->a->kind == A_BUTTERFLY)
            rc = cs_spec_get_choice(spec, "inner", bfly_inner_names, 0, &q->bfly_inner, err);
        else if (!strcmp(k[i], "inner"))
            rc = cs_spec_get_choice(spec, "inner", base_names, 0, &q->inner, err);
        else
            rc = cs_spec_get_int(spec, "g", 2, 2, CS_CEREBRAS_MAX_P, &g, err);
        if (rc)
            return rc;
    }
    q->form = f ? CS_CEREBRAS_REDERIVED : CS_CEREBRAS_PRINTED;
    q->g = (int)g;
    return cs_spec_check_unused(spec, k, err);
}

/* The modelled algorithms of one collective, for messages. */
static void list_algos(const char *coll, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < NALGOS && off < len; i++)
        if (!strcmp(algos[i].coll, coll))
            off += (size_t)snprintf(buf + off, len - off, "%s%s/%s", off ? ", " : "", coll,
                                    algos[i].name);
}

int cs_cerebras_predict(const char *coll, const char *algo, int P, int rows, int cols, int64_t B,
                        int TR, int64_t S_or_0, int root, double *cycles_out, cs_error_t *err)
{
    cs_spec_t spec;
    query_t q;
    int rc;
    char list[CS_ERROR_MSG_MAX / 2];

    if (!coll || (strcmp(coll, "broadcast") && strcmp(coll, "reduce") && strcmp(coll, "allreduce")))
        return cs_error_set(err, CS_ERR_RANGE,
                            "the Cerebras thesis models broadcast, reduce and allreduce only, "
                            "not \"%s\"",
                            coll ? coll : "(null)");
    if ((rc = cs_spec_parse(algo, &spec, err)))
        return rc;
    const char *name = spec.name;
    size_t cl = strlen(coll);
    if (!strncmp(name, coll, cl) && name[cl] == '/')
        name += cl + 1;
    memset(&q, 0, sizeof q);
    for (int i = 0; i < NALGOS; i++)
        if (!strcmp(algos[i].coll, coll) && !strcmp(algos[i].name, name))
            q.a = &algos[i];
    if (!q.a) {
        list_algos(coll, list, sizeof list);
        rc = cs_error_set(err, CS_ERR_RANGE, "no thesis model for %s/%s; modelled: %s", coll, name,
                          list);
        goto out;
    }
    if ((rc = read_options(&spec, &q, err)))
        goto out;

    rc = CS_ERR_RANGE;
    if (P < 1 || P > CS_CEREBRAS_MAX_P) {
        cs_error_set(err, rc, "%s/%s: P = %d; expected 1..%d", coll, name, P, CS_CEREBRAS_MAX_P);
        goto out;
    }
    if (B < 1 || B > CS_CEREBRAS_MAX_B) {
        cs_error_set(err, rc,
                     "%s/%s: B = %lld elements; expected 1..%lld (B counts 32-bit "
                     "wavelets, ceil(bytes/4))",
                     coll, name, (long long)B, (long long)CS_CEREBRAS_MAX_B);
        goto out;
    }
    if (TR < 0 || TR > CS_CEREBRAS_MAX_TR) {
        cs_error_set(err, rc, "%s/%s: TR = %d; expected 0..%d (the thesis uses %d)", coll, name, TR,
                     CS_CEREBRAS_MAX_TR, CS_CEREBRAS_TR_DEFAULT);
        goto out;
    }
    if (S_or_0 < 0 || S_or_0 > CS_CEREBRAS_MAX_P) {
        cs_error_set(err, rc, "%s/%s: S = %lld; expected 0 (default ceil(sqrt P)) or 2..%d", coll,
                     name, (long long)S_or_0, CS_CEREBRAS_MAX_P);
        goto out;
    }
    if (root < 0 || root >= P) {
        cs_error_set(err, rc, "%s/%s: root %d; expected a rank in 0..%d", coll, name, root, P - 1);
        goto out;
    }
    if (rows < 0 || cols < 0 || ((rows || cols) && (int64_t)rows * cols != P)) {
        cs_error_set(err, rc,
                     "%s/%s: a %dx%d grid does not hold the %d ranks; pass rows = "
                     "cols = 0 for a line",
                     coll, name, rows, cols, P);
        goto out;
    }
    if (q.a->dim == 1 && rows > 1 && cols > 1) {
        cs_error_set(err, rc,
                     "%s/%s: the 1D model needs the ranks on a line, not a %dx%d "
                     "grid; the 2D patterns are the 2d-* algorithms",
                     coll, name, rows, cols);
        goto out;
    }
    if (q.a->dim == 2 && rows == 0) {
        cs_error_set(err, rc, "%s/%s: a 2D pattern needs the grid (rows, cols)", coll, name);
        goto out;
    }
    q.P = P;
    q.rows = rows;
    q.cols = cols;
    q.B = B;
    q.TR = TR;
    q.S = S_or_0;
    q.root = root;
    rc = predict(&q, cycles_out, err);
out:
    cs_spec_destroy(&spec);
    return rc;
}
