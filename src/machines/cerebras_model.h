/*
 * cerebras_model.h - the analytic cycle model of the Cerebras thesis
 * (papers/000, "Reduce/Allreduce collectives on the Cerebras WSE", Ch. 3-7;
 * every formula rebuilt in reference/cerebras-wse.md §2, garbling fixed per
 * §6).  It is what `collsim run --predict` prints beside the simulated time.
 *
 * Units: cycles.  B is the vector length in 32-bit elements (= wavelets;
 * a caller with n bytes passes ceil(n/4)), P the number of PEs, TR the ramp
 * latency (the thesis predicts with TR = 2, CS_CEREBRAS_TR_DEFAULT).  1D
 * formulas reduce to the leftmost PE p0 (the rightmost one is the mirror
 * image) unless they take a root.  P = 1 costs 0 (nothing to reduce, the
 * thesis's T_OPT(1,B) = 0, which Lemma 6.1 needs for root 0).
 *
 * Where the printed thesis contradicts its own proof, both readings exist
 * (cs_cerebras_form_t): PRINTED is the formula as printed, REDERIVED the
 * careful re-derivation of the note (§6).  The look-up uses PRINTED unless
 * asked otherwise, because --predict shows *the thesis's* value.
 *
 * The formula functions return exact integers (int64) except the two with
 * a B/P or B/G segment (ring allreduce, butterfly: double).  Their
 * preconditions (documented per function) are programming errors and are
 * checked with CS_ASSERT; cs_cerebras_predict validates everything and
 * reports what has no formula as CS_ERR_RANGE.  No global state.
 */
#ifndef CS_CEREBRAS_MODEL_H
#define CS_CEREBRAS_MODEL_H

#include <stdint.h>
#include "core/error.h"

#define CS_CEREBRAS_TR_DEFAULT 2
/* Limits of cs_cerebras_predict (keep every int64 formula far from
 * overflow; the pre-order programme is O(P^2)). */
#define CS_CEREBRAS_MAX_P     (1 << 24)
#define CS_CEREBRAS_MAX_B     ((int64_t)1 << 36)
#define CS_CEREBRAS_MAX_TR    (1 << 20)
#define CS_CEREBRAS_MAX_P_OPT 16384

typedef enum cs_cerebras_form {
    CS_CEREBRAS_PRINTED = 0,  /* as printed in the thesis */
    CS_CEREBRAS_REDERIVED = 1 /* re-derived where the printed text contradicts its proof */
} cs_cerebras_form_t;

/* The 1D reduce-to-an-end patterns that left-right, jump and the naive
 * allreduces build on (names as the suite's base= option). */
typedef enum cs_cerebras_base {
    CS_CEREBRAS_CHAIN,
    CS_CEREBRAS_TREE,
    CS_CEREBRAS_TWO_PHASE,
    CS_CEREBRAS_SCALAR,
    CS_CEREBRAS_PREORDER
} cs_cerebras_base_t;

/* ---- Ch. 3: basic operations (P >= 1, B >= 1, TR >= 0) ------------------- */

/* Cor. 3.4 (Lemma 3.2 for B = 1): T_message(P,B) = 2TR + P + B. */
int64_t cs_cerebras_message(int64_t P, int64_t B, int TR);
/* Lemma 3.3: T_visit(P,B,V) = P + (V+1)(2TR+1) + B - 1, V in [0, P-2]. */
int64_t cs_cerebras_visit(int64_t P, int64_t B, int64_t V, int TR);

/* ---- Ch. 4: broadcast ------------------------------------------------------ */

/* Lemma 4.1: T_broadcast(P,B) = T_message(P,B), root at one end. */
int64_t cs_cerebras_broadcast(int64_t P, int64_t B, int TR);
/* §4.2, root p_{i,j} of an M x N grid: T_broadcast(M-i + N-j, B) for
 * i < M/2, j < N/2 (other roots by symmetry).  REDERIVED uses the true path
 * length, one cycle less (note §6.6). */
int64_t cs_cerebras_broadcast_2d(int M, int N, int64_t B, int i, int j, int TR,
                                 cs_cerebras_form_t form);

/* ---- Ch. 5: reduce to the leftmost PE ------------------------------------ */

/* Lemma 5.1: T_scalar = 2TR + 2 + (P-1)B. */
int64_t cs_cerebras_scalar(int P, int64_t B, int TR);
/* §5.1 remark, every stride-th PE taking part (stride >= 1):
 * 1 + TR + stride + TR + (ceil(P/stride) - 1) B.  Not a suite algorithm. */
int64_t cs_cerebras_scalar_strided(int P, int64_t B, int stride, int TR);
/* Lemma 5.2: T_chain = 2(P-1)(TR+1) + B. */
int64_t cs_cerebras_chain(int P, int64_t B, int TR);
/* Lemma 5.3: T_visit(P,B, ceil(log2 P) - 1), the tree without stalls (any P;
 * a lower bound when P is not a power of two). */
int64_t cs_cerebras_tree_nostall(int P, int64_t B, int TR);
/* Lemma 5.4 (P a power of two): sum_{i=0}^{log2 P - 2} max(0, B - 2(2^i+TR) - c)
 * with c = 1 PRINTED, c = 2 REDERIVED (the proof's own expression). */
int64_t cs_cerebras_tree_stall(int P, int64_t B, int TR, cs_cerebras_form_t form);
/* Cor. 5.5 (P a power of two): tree_nostall + tree_stall. */
int64_t cs_cerebras_tree(int P, int64_t B, int TR, cs_cerebras_form_t form);

/* ceil(sqrt(n)) exactly (the thesis's default S), n >= 1. */
int64_t cs_cerebras_isqrt_ceil(int64_t n);
/* Two-phase, groups of S (S = 0: ceil(sqrt P); S >= 2; S >= P is the chain).
 * PRINTED: Lemma 5.7 (2S >= P) and Lemma 5.8 (2S < P).  REDERIVED (note
 * §6.4): V = S + ceil(P/S) - 3 visits and stall max(0, B - S - 2TR - 2). */
int64_t cs_cerebras_two_phase(int P, int64_t B, int64_t S, int TR, cs_cerebras_form_t form);
/* Lemma 5.6, no stall: T_visit(P,B, S + ceil(P/S) - 1) PRINTED,
 * T_visit(P,B, S + ceil(P/S) - 3) REDERIVED.  1 < S < P. */
int64_t cs_cerebras_two_phase_nostall(int P, int64_t B, int64_t S, int TR, cs_cerebras_form_t form);
/* §5.4 "evaluate T_2phase for every viable S": the minimum over S in
 * [2, smax] (smax <= P), the smallest such S in *S_out (may be NULL).  O(smax). */
int64_t cs_cerebras_two_phase_best(int P, int64_t B, int64_t smax, int TR, cs_cerebras_form_t form,
                                   int64_t *S_out);

/* Lemma 5.9, the optimal pre-order reduce, by its dynamic programme:
 * T[0..Pmax] (caller's array of Pmax+1), T[0] = T[1] = 0.  O(Pmax^2) time. */
void cs_cerebras_opt_table(int Pmax, int64_t B, int TR, int64_t *T);
/* T_OPT(P,B); allocates O(P) and takes O(P^2) time. */
int64_t cs_cerebras_opt(int P, int64_t B, int TR);

/* T_p(n,B): pattern p reducing a line of n >= 1 PEs to one end (n = 1: 0).
 * S as in cs_cerebras_two_phase (0 = ceil(sqrt n)); TREE needs n a power of
 * two. */
int64_t cs_cerebras_line(cs_cerebras_base_t p, int n, int64_t B, int64_t S, int TR,
                         cs_cerebras_form_t form);

/* ---- Ch. 6: reduce to an arbitrary root ---------------------------------- */

/* Lemma 6.1 with p_l = p_r = p: max(T_p(root+1) + B, T_p(P-root-1) + 2TR + 2)
 * for the root in the left (smaller) group; roots in the right half are
 * mirrored.  S = 0: ceil(sqrt) of each side.  One-PE groups: T_p(1) = 0 for
 * the root's, B for the other (its vector still streams in, so P = 2 is
 * T_message(2,B)). */
int64_t cs_cerebras_left_right(int P, int64_t B, int root, cs_cerebras_base_t p, int64_t S, int TR,
                               cs_cerebras_form_t form);
/* Lemma 6.2, the chain closed form: max(2 root (TR+1) + 2B,
 * 2(P-root-1)(TR+1) + B), T_chain for root in {0, P-1}; mirrored. */
int64_t cs_cerebras_left_right_chain(int P, int64_t B, int root, int TR);
/* Lemma 6.3: PRINTED T_chain + P - 3 (any root; P <= 2 is the chain).
 * REDERIVED: T_chain + P - 1 - h, h = hops of the unused ring link from the
 * root to its successor on the ring 0,2,4,...,5,3,1 (h = 1 for root 1 and
 * for the last even PE, else 2; note §6.7). */
int64_t cs_cerebras_ring_reduce(int P, int64_t B, int root, int TR, cs_cerebras_form_t form);
/* Lemma 6.4: T_p(P-1,B) + 2TR + 1 + root for root < P/2 (mirrored), P >= 3. */
int64_t cs_cerebras_jump(int P, int64_t B, int root, cs_cerebras_base_t p, int64_t S, int TR,
                         cs_cerebras_form_t form);
/* §6.4 to the corner p_{0,0}: T_p(M,B) + T_p(N,B) (S = 0: per axis). */
int64_t cs_cerebras_reduce_2d(int M, int N, int64_t B, cs_cerebras_base_t p, int64_t S, int TR,
                              cs_cerebras_form_t form);

/* ---- Ch. 7: allreduce ----------------------------------------------------- */

/* Lemma 7.1 given the reduce time t_reduce = T_p(P,B,root):
 * t_reduce + T_broadcast(P - root, B) for root < P/2 (mirrored), P > 2;
 * P = 2: T_broadcast(2,B) + T_broadcast(2,1) (t_reduce unused); P = 1: 0. */
int64_t cs_cerebras_naive_allreduce(int P, int64_t B, int root, int64_t t_reduce, int TR);
/* Lemma 7.2 with neighbour distance d (the lemma: d = 2):
 * 2(P-1)(B/P + TR + d + TR + 1), B/P real (the lemma assumes P | B). */
double cs_cerebras_ring_allreduce(int P, int64_t B, int d, int TR);
/* Lemma 7.3, note's reading (§2.5, §6.8): log_G P steps, step i a ring
 * allreduce among G PEs at distance d_i = 2^{i-1} (G = 2) or 2 G^{i-1}.
 * P a power of G, G >= 2. */
double cs_cerebras_butterfly(int P, int64_t B, int G, int TR);

/* ---- look-up by the suite's algorithm names --------------------------------
 *
 * coll: "broadcast", "reduce" or "allreduce".  algo: the suite's name,
 * optionally prefixed "coll/" and followed by options "name:key=value,...":
 *   broadcast/thesis                      Lemma 4.1 (far end) or §4.2 on a grid
 *   reduce/scalar|thesis-chain|tree|two-phase|preorder   root 0 or P-1
 *   reduce/left-right|jump                base=chain|tree|two-phase|scalar|preorder
 *   reduce/ring
 *   reduce/2d-chain|2d-tree|2d-two-phase  corner roots
 *   allreduce/naive                       base=... as above or left-right|ring|jump,
 *                                         inner=... (base of left-right / jump)
 *   allreduce/2d-naive                    base=..., corner roots
 *   allreduce/ring                        Lemma 7.2 (d = 2)
 *   allreduce/butterfly                   g=G (default 2), inner=ring (required:
 *                                         the thesis models only the ring exchange)
 * and on every algorithm form=printed|rederived (default printed).
 * Defaults follow the suite (base=chain, inner=chain, g=2).
 *
 * P: ranks.  rows, cols: the grid the ranks form (rank = row*cols + col), as
 * the suite's grid hint: 0, 0 for a line; 1D algorithms need a line (0, 0,
 * or one row or column); 2D algorithms need rows*cols == P.  B >= 1
 * elements; TR >= 0; S_or_0: two-phase group size (0 = the suite's default,
 * ceil(sqrt) of each reduced line); root: a rank (allreduce: the reduce root
 * of naive / 2d-naive).
 *
 * Returns CS_OK and *cycles_out, or CS_ERR_RANGE when the thesis has no
 * formula for the case (unknown algorithm, tree on a non-power-of-two line,
 * a base pattern to a middle root, a non-corner 2D root, values beyond the
 * limits above), or CS_ERR_USAGE for a malformed or unknown option; err (if
 * non-NULL) then says why and what would be valid.  *cycles_out is untouched
 * on error.  Cost: O(1), except O(P^2) time and O(P) memory when a preorder
 * pattern is involved.
 */
int cs_cerebras_predict(const char *coll, const char *algo, int P, int rows, int cols, int64_t B,
                        int TR, int64_t S_or_0, int root, double *cycles_out, cs_error_t *err);

#endif
