/*
 * test_alltoall.c - the alltoall algorithms (src/coll/alltoall.c) on
 * alphabeta:topo=complete (Criterion suite "symmetric_time"): the flat
 * alltoall takes at least the P-1 steps of the staggered order; Bruck's
 * (Bruck et al. 1997) sends ceil(log2 P) network messages per rank and for
 * P = 2^L takes L (alpha + beta m P/2).  The pairwise alltoall is checked
 * in test_reduce_scatter.c with the pairwise reduce-scatter, which has the
 * same schedule.
 *
 * The formulas are in formulas.h.
 */

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "formulas.h"
#include "harness.h"

/* Flat alltoall posts everything at once; the ports then serve one message
 * per node at a time, so it takes at least the P-1 steps of the staggered
 * order, and the greedy port arbitration may need a few more. */
Test(symmetric_time, flat_alltoall_is_at_least_P_minus_1_steps)
{
    static const int Ps[] = {2, 3, 4, 5, 8, 13, 16, 32};
    for (size_t a = 0; a < NSYM_ABS; a += 2)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++) {
            char spec[200];
            int P = Ps[i];
            int64_t m = 1000, step = sym_A(&SYM_ABS[a]) + sym_B(&SYM_ABS[a]) * m;
            sym_spec(spec, sizeof spec, "complete", P, &SYM_ABS[a]);
            for (size_t mi = 0; mi < 2; mi++) {
                cs_tick_t t = h_time(spec, "alltoall", "flat", P, m, 0, NULL, MODES[mi]);
                cr_expect_geq(t, step * (P - 1), "P=%d: %lld", P, (long long)t);
                cr_expect_leq(t, step * 2 * (P - 1), "P=%d: %lld", P, (long long)t);
                if (P <= 3)
                    cr_expect_eq(t, step * (P - 1), "P=%d: %lld", P, (long long)t);
            }
        }
}

/* Bruck alltoall: ceil(log2 P) network messages per rank, round k carrying
 * the blocks whose slot index has bit k set; everything else it emits is a
 * local copy (a message to itself). */
Test(symmetric_time, bruck_alltoall_sends_ceil_log2_P_network_messages_per_rank)
{
    static const int Ps[] = {2, 3, 5, 8, 13, 16, 64, 100};
    for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++) {
        int P = Ps[i];
        int64_t m = 10, expect_bytes = 0;
        h_run_t r = h_run("alphabeta:topo=complete,p=100", "alltoall", "bruck", P, m, 0, NULL,
                          CS_NET_PACKET, 1);
        cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
        for (int d = 1; d < P; d *= 2)
            for (int s = 1; s < P; s++)
                expect_bytes += (s & d) ? m : 0;
        for (int rank = 0; rank < P; rank++) {
            int net = 0;
            int64_t bytes = 0;
            for (int32_t op = 0; op < cs_program_nops(r.prog); op++) {
                const cs_op_t *o = cs_program_op(r.prog, op);
                if (o->rank == rank && o->kind == CS_OP_SEND && o->peer != rank) {
                    net++;
                    bytes += o->bytes;
                }
            }
            cr_expect_eq(net, f_ceil_log2(P), "P=%d rank %d: %d network messages", P, rank, net);
            cr_expect_eq(bytes, expect_bytes, "P=%d rank %d", P, rank);
        }
        h_done(&r);
    }
}

/* Bruck alltoall for P = 2^L on alphabeta: L network rounds of P/2 blocks;
 * its local rotations and packing are messages to oneself, which are free
 * local copies: the textbook L (alpha + beta m P/2). */
Test(symmetric_time, bruck_alltoall_on_powers_of_two)
{
    static const int Ps[] = {4, 8, 16, 32, 64};
    static const int64_t ms[] = {1, 1000, 4097};
    for (size_t a = 0; a < NSYM_ABS; a += 2)
        for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
            for (size_t j = 0; j < sizeof ms / sizeof *ms; j++) {
                const sym_ab_t *p = &SYM_ABS[a];
                int P = Ps[i], L = f_ceil_log2(P);
                int64_t m = ms[j];
                sym_expect_time("alltoall", "bruck", NULL, P, m, p,
                                L * (sym_A(p) + sym_B(p) * m * (P / 2)));
            }
}
