/*
 * test_scatter_gather.c - the scatter and gather algorithms
 * (src/coll/scatter_gather.c) of the lecture (Criterion suite "rooted") on
 * alphabeta:topo=complete in both network modes, over sweeps of P, sizes,
 * alpha/beta and roots: the naive scatter and the flat gather, (P-1)(alpha +
 * beta m); the divide-and-conquer scatter and gather, alpha log2 P +
 * beta m (P-1) (shared/reference/alpha-beta.md §8, with ceil for any P as
 * derived in docs/algorithms.md); --validate over the P, sizes and
 * roots.
 *
 * The formulas are in formulas.h.
 */

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "formulas.h"
#include "harness.h"

Test(rooted, naive_scatter_is_P_minus_1_times_alpha_plus_beta_m)
{
    flat_sweep("scatter");
}

Test(rooted, flat_gather_is_P_minus_1_times_alpha_plus_beta_m)
{
    flat_sweep("gather");
}

/* ---- divide and conquer: alpha log2 P + beta m (P-1) ---------------------- */

/* The lecture states the formula for P a power of two.  With uneven halves
 * where the holder keeps the larger half, the root's own path has
 * ceil(log2 P) steps moving P-1 blocks and no other path is longer, so the
 * same formula with ceil holds for any P (docs/algorithms.md). */
static void dc_sweep(const char *coll, int powers_only)
{
    static const int64_t MS[] = {1, 100, 1024, 5000};
    for (int pi = 0; pi < NPS; pi++) {
        int P = PS[pi];
        if (powers_only && (P & (P - 1)))
            continue;
        for (int xi = 0; xi < (int)(sizeof MS / sizeof *MS); xi++)
            for (int k = 0; k < NABS; k++)
                for (int mi = 0; mi < 2; mi++) {
                    int roots[3], nr = f_roots_of(P, roots);
                    int64_t m = MS[xi];
                    cs_tick_t want = ABS[k].a * f_ceil_log2(P) + ABS[k].b * m * (P - 1);
                    for (int ri = 0; ri < nr; ri++) {
                        cs_tick_t got = ab_timed_on("complete", P, &ABS[k], coll, "binomial", m,
                                                    roots[ri], NULL, MODES[mi]);
                        cr_assert_eq(got, want,
                                     "%s/binomial P=%d m=%lld root=%d %s/%s %s: %lld vs %lld", coll,
                                     P, (long long)m, roots[ri], ABS[k].alpha, ABS[k].beta,
                                     cs_net_mode_name(MODES[mi]), (long long)got, (long long)want);
                    }
                }
    }
}

Test(rooted, dc_scatter_is_alpha_log2_P_plus_beta_m_P_minus_1_for_powers_of_two)
{
    dc_sweep("scatter", 1);
}

Test(rooted, dc_scatter_formula_with_ceil_holds_for_any_P)
{
    dc_sweep("scatter", 0);
}

Test(rooted, dc_gather_is_the_dual_of_dc_scatter_for_any_P)
{
    dc_sweep("gather", 0);
}

Test(rooted, validate_scatter_and_gather_algorithms)
{
    rooted_validate_range(18, NROOTED_ALGOS);
}
