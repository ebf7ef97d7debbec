/*
 * test_opcount.c - the op count bounds of the suite (cs_coll_algo_t.max_ops,
 * issue 34): checked before a program is built, so that a program longer
 * than a run can hold is refused at once rather than after minutes of
 * building (a ring allreduce at P = 16,384 has 5 P (P - 1) = 1.34 * 10^9
 * ops: beyond a whole program's 2^30 - 1).
 *
 * Each bound is checked against the op counts of the programs the
 * algorithm builds (an independent count: cs_program_nops of the built
 * program) and against its closed form written here, at P from 1 to 100
 * including non-powers of two, several sizes and roots, with and without a
 * permuted ring: never below the built count, and equal to it when no
 * piece is empty (n >= P).  The refusal: a bound above a lowered limit
 * fails with a message naming the algorithm once, and the real limits
 * refuse P = 16,384 whole and P = 32,768 windowed before anything is built.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "coll/coll.h"
#include "core/units.h"

/* The closed forms, as the algorithms' comments state them, each a sum of
 * terms: k ops per ordered pair of ranks, per rank but one, per rank and
 * round of ceil(log2 P) rounds, per virtual rank and round of the
 * power-of-two part (P = Pp + e, log2 Pp rounds of Pp ranks), per extra
 * rank e, and a constant when P > 1 (the flat barrier's one multicast). */
static int64_t closed_form(const cs_coll_algo_t *a, int64_t P)
{
    static const struct {
        cs_coll_kind_t kind;
        const char *name;
        int64_t per_pair, per_rank_but_one, per_rank_round, per_virt_round, per_extra, plus;
    } forms[] = {
        {CS_COLL_ALLREDUCE, "ring", 5, 0, 0, 0, 0, 0},
        {CS_COLL_ALLREDUCE, "reduce-bcast", 0, 5, 0, 0, 0, 0},
        /* fold in: send + recv + calc; rounds: send + recv + calc; out: send + recv */
        {CS_COLL_ALLREDUCE, "rdb", 0, 0, 0, 3, 5, 0},
        {CS_COLL_ALLGATHER, "ring", 2, 0, 0, 0, 0, 0},
        {CS_COLL_ALLGATHER, "cns-ring", 2, 0, 0, 0, 0, 0},
        /* near fold: one range each way per round; in and out: send + recv */
        {CS_COLL_ALLGATHER, "rdb", 0, 0, 0, 2, 4, 0},
        /* rounds of send + recv; the final local copy on ranks 1..P-1 */
        {CS_COLL_ALLGATHER, "bruck", 0, 2, 2, 0, 0, 0},
        /* binomial gather up, broadcast down: send + recv per non-root each way */
        {CS_COLL_ALLGATHER, "gather-bcast", 0, 4, 0, 0, 0, 0},
        {CS_COLL_REDUCE_SCATTER, "ring", 3, 0, 0, 0, 0, 0},
        {CS_COLL_REDUCE_SCATTER, "pairwise", 3, 0, 0, 0, 0, 0},
        /* near fold: in: send + recv + calc; rounds: send + recv + calc of one
         * range; out: send + recv of the extra rank's block */
        {CS_COLL_REDUCE_SCATTER, "recursive-halving", 0, 0, 0, 3, 5, 0},
        {CS_COLL_ALLTOALL, "pairwise", 2, 0, 0, 0, 0, 0},
        {CS_COLL_ALLTOALL, "flat", 2, 0, 0, 0, 0, 0},
        {CS_COLL_BARRIER, "dissemination", 0, 0, 2, 0, 0, 0},
        /* token exchange per round; in and out: send + recv per extra rank */
        {CS_COLL_BARRIER, "rdb", 0, 0, 0, 2, 4, 0},
        /* P-1 signals (send + recv), one multicast, P-1 recvs of it */
        {CS_COLL_BARRIER, "flat", 0, 3, 0, 0, 0, 1},
        {CS_COLL_BARRIER, "tree", 0, 4, 0, 0, 0, 0},
        /* up: send + recv + calc per non-root; down: send + recv */
        {CS_COLL_BARRIER, "mailbox", 0, 5, 0, 0, 0, 0},
        {CS_COLL_BROADCAST, "binomial", 0, 2, 0, 0, 0, 0},
        {CS_COLL_BROADCAST, "flat", 0, 2, 0, 0, 0, 0},
        {CS_COLL_BROADCAST, "scatter-allgather", 2, 2, 0, 0, 0, 0},
        {CS_COLL_REDUCE, "binomial", 0, 3, 0, 0, 0, 0},
        {CS_COLL_REDUCE, "flat", 0, 3, 0, 0, 0, 0},
        {CS_COLL_GATHER, "binomial", 0, 2, 0, 0, 0, 0},
        {CS_COLL_GATHER, "flat", 0, 2, 0, 0, 0, 0},
        {CS_COLL_SCATTER, "binomial", 0, 2, 0, 0, 0, 0},
        {CS_COLL_SCATTER, "flat", 0, 2, 0, 0, 0, 0},
    };
    if (a->kind == CS_COLL_ALLTOALL && !strcmp(a->name, "bruck")) {
        /* every local copy is a send and a recv to itself.  Rotation: rank
         * r copies blocks r..P-1 and (r > 0) 0..r-1 into the slots.  Round
         * d: a pack and an unpack copy per run of consecutive slots i in
         * [1, P) with bit d set (counted here slot by slot), one send, one
         * recv.  Home: one copy per slot 1..P-1. */
        int64_t n = 0;
        if (P == 1)
            return 0;
        for (int64_t r = 0; r < P; r++)
            n += r > 0 ? 4 : 2;
        for (int64_t d = 1; d < P; d *= 2) {
            int64_t runs = 0;
            for (int64_t i = 1; i < P; i++)
                runs += (i & d) && !((i - 1) & d);
            n += P * (2 * 2 * runs + 2);
        }
        return n + P * 2 * (P - 1);
    }
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++)
        if (forms[i].kind == a->kind && !strcmp(forms[i].name, a->name)) {
            int64_t lg = 0, Pp = 1, lgp = 0;
            while (((int64_t)1 << lg) < P)
                lg++;
            while (Pp * 2 <= P) {
                Pp *= 2;
                lgp++;
            }
            return forms[i].per_pair * P * (P - 1) + forms[i].per_rank_but_one * (P - 1) +
                   forms[i].per_rank_round * P * lg + forms[i].per_virt_round * Pp * lgp +
                   forms[i].per_extra * (P - Pp) + (P > 1 ? forms[i].plus : 0);
        }
    return -2;
}

Test(opcount, bounds_match_the_built_programs)
{
    static const int Ps[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 64, 100};
    int n, with = 0, checked = 0;
    const cs_coll_algo_t *const *all = cs_coll_algos(&n);
    int32_t ring[100];
    cs_coll_hints_t none, permuted;
    memset(&none, 0, sizeof none);
    memset(&permuted, 0, sizeof permuted);
    for (int i = 0; i < n; i++) {
        const cs_coll_algo_t *a = all[i];
        if (!a->max_ops)
            continue;
        /* NCCL's algorithms' bounds depend on the size, the protocol and
         * the channels, not on P alone: their own tests check them
         * (tests/coll/test_nccl_*.c) */
        if (!strncmp(a->name, "nccl", 4))
            continue;
        with++;
        for (size_t pi = 0; pi < sizeof Ps / sizeof *Ps; pi++) {
            int P = Ps[pi];
            int64_t sizes[4] = {1, 1000, 7 * (int64_t)P + 1, (int64_t)P - 1};
            for (int j = 0; j < P; j++)
                ring[j] = (int32_t)((int64_t)j * (P % 3 ? 3 : 7) % P);
            permuted.ring = ring;
            for (int si = 0; si < 4; si++)
                for (int hi = 0; hi < 2; hi++)
                    for (int ri = 0; ri < 2; ri++) {
                        int64_t bytes = a->kind == CS_COLL_BARRIER ? 0 : sizes[si];
                        cs_coll_args_t args = {a->kind, P, bytes, ri ? P - 1 : 0, 4096,
                                               hi ? &permuted : &none, NULL, 1};
                        cs_program_t *p;
                        cs_error_t err;
                        int64_t bound = cs_coll_max_ops(a, &args);
                        if (bytes == 0 && a->kind != CS_COLL_BARRIER)
                            continue;
                        cr_assert_eq(cs_coll_build(a, &args, &p, &err), CS_OK, "%s/%s P=%d: %s",
                                     cs_coll_name(a->kind), a->name, P, err.msg);
                        cr_expect_eq(bound, closed_form(a, P), "%s/%s P=%d: bound %lld",
                                     cs_coll_name(a->kind), a->name, P, (long long)bound);
                        cr_expect_geq(bound, cs_program_nops(p), "%s/%s P=%d n=%lld: %d ops",
                                      cs_coll_name(a->kind), a->name, P, (long long)bytes,
                                      cs_program_nops(p));
                        if (bytes >= P || a->kind == CS_COLL_BARRIER ||
                            a->kind == CS_COLL_ALLGATHER || a->kind == CS_COLL_ALLTOALL ||
                            a->kind == CS_COLL_GATHER || a->kind == CS_COLL_SCATTER ||
                            a->kind == CS_COLL_REDUCE_SCATTER)
                            cr_expect_eq(bound, cs_program_nops(p), "%s/%s P=%d n=%lld: %d ops",
                                         cs_coll_name(a->kind), a->name, P, (long long)bytes,
                                         cs_program_nops(p));
                        checked++;
                        cs_program_free(p);
                    }
        }
    }
    printf("opcount: %d algorithms state a bound, %d programs checked\n", with, checked);
    cr_expect_geq(with, 28);
}

/* A bound holds for every value of the algorithm's options, not only the
 * defaults above: the fold rules of the rdb family, the mailbox barrier's
 * fanin.  Equal to the built count where stated (every piece here is
 * non-empty); the far fold of the rdb allgather sends a second range for
 * some groups and states no bound (-1), nor does an option value the build
 * refuses. */
Test(opcount, bounds_hold_for_every_option)
{
    static const struct {
        cs_coll_kind_t kind;
        const char *name, *opts;
        int stated;
    } cases[] = {
        {CS_COLL_BARRIER, "rdb", "opts:fold=near", 1},
        {CS_COLL_BARRIER, "rdb", "opts:fold=far", 1},
        {CS_COLL_ALLREDUCE, "rdb", "opts:fold=far", 1},
        {CS_COLL_ALLGATHER, "rdb", "opts:fold=near", 1},
        {CS_COLL_ALLGATHER, "rdb", "opts:fold=far", 0},
        {CS_COLL_ALLGATHER, "rdb", "opts:fold=sideways", 0},
        {CS_COLL_REDUCE_SCATTER, "recursive-halving", "opts:fold=near", 1},
        {CS_COLL_REDUCE_SCATTER, "recursive-halving", "opts:fold=far", 0},
        {CS_COLL_BARRIER, "mailbox", "opts:fanin=2", 1},
        {CS_COLL_BARRIER, "mailbox", "opts:fanin=3", 1},
        {CS_COLL_BARRIER, "mailbox", "opts:fanin=1000", 1},
    };
    static const int Ps[] = {1, 2, 3, 5, 6, 7, 8, 9, 13, 31, 64, 100};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const cs_coll_algo_t *a;
        cs_spec_t opts;
        cs_error_t err;
        cr_assert_eq(cs_coll_find(cases[c].kind, cases[c].name, &a, &err), CS_OK);
        cr_assert_eq(cs_spec_parse(cases[c].opts, &opts, &err), CS_OK, "%s", err.msg);
        for (size_t pi = 0; pi < sizeof Ps / sizeof *Ps; pi++) {
            int P = Ps[pi];
            cs_coll_args_t args = {a->kind, P, a->kind == CS_COLL_BARRIER ? 0 : 3 * P, 0,
                                   4096, NULL, &opts, 1};
            cs_program_t *p;
            int64_t bound = cs_coll_max_ops(a, &args);
            if (!cases[c].stated) {
                cr_expect_eq(bound, -1, "%s/%s %s P=%d: %lld", cs_coll_name(a->kind), a->name,
                             cases[c].opts, P, (long long)bound);
                continue;
            }
            cr_assert_eq(cs_coll_build(a, &args, &p, &err), CS_OK, "%s", err.msg);
            cr_expect_eq(bound, closed_form(a, P), "%s/%s %s P=%d: bound %lld",
                         cs_coll_name(a->kind), a->name, cases[c].opts, P, (long long)bound);
            cr_expect_eq(bound, cs_program_nops(p), "%s/%s %s P=%d: %d ops",
                         cs_coll_name(a->kind), a->name, cases[c].opts, P, cs_program_nops(p));
            cs_program_free(p);
        }
        cs_spec_destroy(&opts);
    }
}

/* A whole program over the limit is refused before anything is built, with
 * the algorithm named once and the windowed run suggested; at the limit it
 * passes. */
Test(opcount, refused_before_building)
{
    const cs_coll_algo_t *a;
    cs_error_t err;
    cs_program_t *p = NULL;
    cs_progen_t *g = NULL;
    cr_assert_eq(cs_coll_find(CS_COLL_ALLREDUCE, "ring", &a, &err), CS_OK);
    cs_coll_args_t args = {CS_COLL_ALLREDUCE, 64, 1 << 20, 0, 4096, NULL, NULL, 1};
    cr_expect_eq(cs_coll_check_count(a, &args, 5 * 64 * 63, 0, &err), CS_OK);
    cr_assert_eq(cs_coll_check_count(a, &args, 5 * 64 * 63 - 1, 0, &err), CS_ERR_NOMEM);
    cr_expect(strstr(err.msg, "allreduce/ring: 20160 ops at P = 64") == err.msg, "%s", err.msg);
    cr_expect(strstr(err.msg + 1, "allreduce/ring") == NULL, "named twice: %s", err.msg);
    cr_expect(strstr(err.msg, "windowed"), "%s", err.msg);
    cr_assert_eq(cs_coll_check_count(a, &args, 5 * 64 * 63 - 1, 1, &err), CS_ERR_NOMEM);
    cr_expect(strstr(err.msg, "31 bits"), "%s", err.msg);
    /* the real limits: P = 16,384 has 1,342,095,360 ops, beyond a whole
     * program (2^30 - 1) but not a window (2^31 - 2); P = 32,768 is beyond
     * both.  Nothing is built: these return at once. */
    args.P = 16384;
    cr_assert_eq(cs_coll_build(a, &args, &p, &err), CS_ERR_NOMEM);
    cr_expect_null(p);
    cr_expect(strstr(err.msg, "allreduce/ring: 1342095360 ops at P = 16384") == err.msg, "%s",
              err.msg);
    cr_assert_eq(cs_coll_generate(a, &args, 0, &g, &err), CS_OK, "%s", err.msg);
    cs_progen_free(g);
    args.P = 32768;
    cr_assert_eq(cs_coll_generate(a, &args, 0, &g, &err), CS_ERR_NOMEM);
    cr_expect_null(g);
    cr_expect(strstr(err.msg, "allreduce/ring: 5368545280 ops at P = 32768") == err.msg, "%s",
              err.msg);
    /* saturated, never wrapped: the largest P a program names */
    args.P = INT32_MAX;
    cr_expect_eq(cs_coll_max_ops(a, &args), INT64_MAX);
    cr_assert_eq(cs_coll_find(CS_COLL_ALLTOALL, "bruck", &a, &err), CS_OK);
    args.kind = CS_COLL_ALLTOALL;
    cr_expect_eq(cs_coll_max_ops(a, &args), INT64_MAX);
}
