/*
 * test_barrier.c - the barrier algorithms (src/coll/barrier.c) on
 * alphabeta:topo=complete: the dissemination barrier, ceil(log2 P) rounds
 * of one byte (Hensgen, Finkel, Manber 1988), and the flat barrier,
 * 2(P-1) messages at rank 0 (lecture §8.4 pattern) (Criterion suite
 * "symmetric_time"); the Cell paper's stepped mailbox barrier, twice the
 * sum of the level fan-ins (reference/cell-blade.md §3.2; suite "papers").
 * The rdb and tree barriers are checked in test_allreduce.c with the other
 * recursive-doubling and tree costs.
 *
 * The formulas are in formulas.h.
 */

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "formulas.h"
#include "harness.h"

Test(symmetric_time, dissemination_barrier_is_ceil_log2_P_rounds_of_one_byte)
{
    for (size_t a = 0; a < NSYM_ABS; a++)
        for (int P = 1; P <= 33; P++)
            sym_expect_time("barrier", "dissemination", NULL, P, 0, &SYM_ABS[a],
                            f_ceil_log2(P) * (sym_A(&SYM_ABS[a]) + sym_B(&SYM_ABS[a])));
}

Test(symmetric_time, flat_barrier_is_2_P_minus_1_messages_at_rank_0)
{
    for (size_t a = 0; a < NSYM_ABS; a++)
        for (int P = 1; P <= 17; P += 2)
            sym_expect_time("barrier", "flat", NULL, P, 0, &SYM_ABS[a],
                            2 * (P - 1) * (sym_A(&SYM_ABS[a]) + sym_B(&SYM_ABS[a])));
}

/* Stepped barrier: at level l the leaders collect from at most fanin-1
 * members, one receive at a time; the release mirrors it:
 *   T = 2 sum_l (min(f, ceil(P / f^l)) - 1)(alpha + beta t),  t the token. */
Test(papers, mailbox_barrier_is_twice_the_sum_of_level_fanins)
{
    for (int P = 1; P <= 70; P += (P < 20 ? 1 : 7))
        for (int f = 2; f <= 5; f++)
            for (int64_t tok = 0; tok <= 1; tok++)
                for (int k = 0; k < NABS; k++) {
                    char opts[32];
                    int64_t rounds = 0, span = 1;
                    for (int l = 0; span < P; l++, span *= f) {
                        int64_t g = f_cdiv(P, span);
                        rounds += (g < f ? g : f) - 1;
                    }
                    snprintf(opts, sizeof opts, "fanin=%d", f);
                    cs_tick_t want = 2 * rounds * ab_T(&ABS[k], tok);
                    cs_tick_t got = ab_timed(P, &ABS[k], "barrier", "mailbox", tok, 0, opts,
                                             MODES[(P + f) % 2]);
                    CHECK_TIME(got, want, "barrier/mailbox P=%d fanin=%d token=%lld", P, f,
                               (long long)tok);
                }
}
