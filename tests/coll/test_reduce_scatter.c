/*
 * test_reduce_scatter.c - the reduce-scatter algorithms
 * (src/coll/reduce_scatter.c) on alphabeta:topo=complete in both network
 * modes (Criterion suite "symmetric_time"): the ring, (P-1)(alpha +
 * beta m), the dual of the bucket allgather (lecture §8.7,
 * shared/reference/alpha-beta.md), also with a reduction cost per byte;
 * the pairwise exchange, P-1 steps (generic MPI; checked with the pairwise
 * alltoall, which has the same schedule).  Recursive halving is checked in
 * test_allreduce.c with recursive doubling (Thakur et al. 2005).
 *
 * The formulas are in formulas.h.
 */

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "formulas.h"
#include "harness.h"

Test(symmetric_time, ring_reduce_scatter_is_alpha_plus_beta_m_times_P_minus_1)
{
    static const int Ps[] = {1, 2, 3, 5, 8, 13, 16};
    static const int64_t ms[] = {1, 100, 4097, 10000};
    for (size_t a = 0; a < NSYM_ABS; a++)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
            for (size_t j = 0; j < sizeof ms / sizeof *ms; j++)
                sym_expect_time("reduce-scatter", "ring", NULL, Ps[i], ms[j], &SYM_ABS[a],
                                (sym_A(&SYM_ABS[a]) + sym_B(&SYM_ABS[a]) * ms[j]) * (Ps[i] - 1));
}

/* With reduce=R ps per byte, each of the P-1 steps also adds m bytes. */
Test(symmetric_time, ring_reduce_scatter_pays_the_reduction_per_step)
{
    static const int Ps[] = {2, 5, 8};
    for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++) {
        char spec[200];
        int P = Ps[i];
        int64_t m = 1000, expect = (1000000 + 1000 * m + 3 * m) * (P - 1);
        snprintf(spec, sizeof spec, "alphabeta:topo=complete,p=%d,alpha=1us,beta=1ns,reduce=3ps",
                 P);
        for (size_t mi = 0; mi < 2; mi++) {
            h_run_t r = h_run(spec, "reduce-scatter", "ring", P, m, 0, NULL, MODES[mi], 0);
            cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
            cr_expect_eq(r.finish, expect, "P=%d %s: %lld, formula %lld", P,
                         cs_net_mode_name(MODES[mi]), (long long)r.finish, (long long)expect);
            h_done(&r);
        }
    }
}

Test(symmetric_time, pairwise_reduce_scatter_and_alltoall)
{
    static const int Ps[] = {2, 3, 4, 5, 6, 7, 8, 12, 13, 16};
    static const int64_t ms[] = {1, 333, 4097};
    for (size_t a = 0; a < NSYM_ABS; a += 2)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
            for (size_t j = 0; j < sizeof ms / sizeof *ms; j++) {
                const sym_ab_t *p = &SYM_ABS[a];
                int P = Ps[i];
                int64_t m = ms[j], step = sym_A(p) + sym_B(p) * m;
                sym_expect_time("reduce-scatter", "pairwise", NULL, P, m, p, step * (P - 1));
                sym_expect_time("alltoall", "pairwise", NULL, P, m, p, step * (P - 1));
            }
}
