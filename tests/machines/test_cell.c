/*
 * test_cell.c - the Cell blade against the paper's numbers and structure
 * (Ali, Midkiff, Pai, ICS'09; reference/cell-blade.md §1.6, §1.7, §3, §6).
 *
 * Fitted parameters (docs/cell.md): issue + flight to the 150 ns round trip
 * and the 225 ns one-to-all barrier on 8 SPEs, bif_gap to the 525 ns rdb
 * barrier on 16 SPEs.  Everything else here follows from the mechanism.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../coll/harness.h"
#include "machines/cell_eib.h"
#include "predict.h"

#define NS_PER_TICK 0.3125 /* one 3.2 GHz core cycle */

/* A collective run on the Cell that must succeed; h_done() it. */
static h_run_t run_ok(const char *spec, const char *coll, const char *algo, int P, int64_t bytes,
                      const char *opts)
{
    h_run_t r = h_run(spec, coll, algo, P, bytes, 0, opts, CS_NET_PACKET, 1);
    cr_assert_eq(r.rc, CS_OK, "%s/%s on %s P=%d %lld B: %s", coll, algo, spec, P,
                 (long long)bytes, r.err.msg);
    return r;
}

static double run_ns(const char *spec, const char *coll, const char *algo, int P, int64_t bytes,
                     const char *opts)
{
    h_run_t r = run_ok(spec, coll, algo, P, bytes, opts);
    double t = (double)r.finish * NS_PER_TICK;
    h_done(&r);
    return t;
}

static double barrier_ns(int P, const char *algo)
{
    return run_ns(P > 8 ? "cell:chips=2" : "cell:chips=1", "barrier", algo, P, 0, NULL);
}

static cs_program_t *ping_pong(int64_t bytes, cs_error_t *err)
{
    cs_program_t *p = cs_program_new(2);
    int32_t s = cs_program_send(p, 0, 1, bytes, 0);
    int32_t r = cs_program_recv(p, 1, 0, bytes, 0);
    int32_t s2 = cs_program_send(p, 1, 0, bytes, 1);
    int32_t r2 = cs_program_recv(p, 0, 1, bytes, 1);
    cs_program_dep(p, s2, r, CS_DEP_AFTER);
    cs_program_dep(p, r2, s, CS_DEP_AFTER);
    cr_assert_eq(cs_program_finalize(p, err), CS_OK);
    return p;
}

Test(cell, notification_round_trip_is_150ns)
{
    /* a 32-bit notification there and back between two SPEs of one chip */
    cs_machine_t *m;
    cs_error_t err;
    cr_assert_eq(cs_machine_new("cell:chips=1", &m, &err), CS_OK, "%s", err.msg);
    cs_program_t *p = ping_pong(0, &err);
    cs_exec_env_t env;
    cs_exec_opts_t o;
    cs_exec_result_t res;
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    cr_assert_eq(cs_exec_run(&env, p, &o, &res, &err), CS_OK, "%s", err.msg);
    cr_expect_float_eq((double)res.finish * NS_PER_TICK, 150.0, 0.01);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
    cs_machine_free(m);
}

Test(cell, barriers)
{
    /* 8 SPEs: rdb, Bruck and one-to-all all at 225 ns (within 5%: eight
     * notifications in one round share the command bus) */
    cr_expect(fabs(barrier_ns(8, "rdb") - 225) <= 0.05 * 225, "rdb %g", barrier_ns(8, "rdb"));
    cr_expect(fabs(barrier_ns(8, "dissemination") - 225) <= 0.05 * 225);
    cr_expect(fabs(barrier_ns(8, "flat") - 225) <= 0.05 * 225);
    /* 16 SPEs: rdb 525 ns (the fit) and the fastest of the three */
    double rdb16 = barrier_ns(16, "rdb"), bruck16 = barrier_ns(16, "dissemination"),
           ota16 = barrier_ns(16, "flat");
    cr_expect(fabs(rdb16 - 525) <= 0.02 * 525, "rdb16 %g", rdb16);
    cr_expect_lt(rdb16, bruck16);
    cr_expect_lt(bruck16, ota16);
    /* one-to-all degrades beyond 8: every SPE more adds notifications into
     * and out of one SPE, and the far chip's cross the BIF */
    double prev = barrier_ns(8, "flat");
    for (int P = 9; P <= 16; P++) {
        double t = barrier_ns(P, "flat");
        cr_expect_gt(t, prev, "one-to-all %d: %g after %g", P, t, prev);
        prev = t;
    }
    /* fewer than 8: Bruck and one-to-all beat rdb's extra rounds */
    for (int P = 3; P <= 7; P++)
        if (P != 4) {
            cr_expect_lt(barrier_ns(P, "dissemination"), barrier_ns(P, "rdb"), "P=%d", P);
            cr_expect_lt(barrier_ns(P, "flat"), barrier_ns(P, "rdb"), "P=%d", P);
        }
}

static int crossings(const char *coll, const char *algo, const char *opts, int64_t bytes,
                     int *xor8)
{
    h_run_t r = run_ok("cell:chips=2", coll, algo, 16, bytes, opts);
    const cs_cell_crossing_t *x;
    int n = cs_cell_eib_crossings(r.res.net, &x);
    *xor8 = 1;
    for (int i = 0; i < n; i++)
        if ((x[i].src ^ x[i].dst) != 8)
            *xor8 = 0;
    h_done(&r);
    return n;
}

Test(cell, bif_data_messages_as_the_paper_counts_them)
{
    int xor8;
    /* rdb all-gather: 16 in the last round (partners r XOR 8) */
    cr_expect_eq(crossings("allgather", "rdb", NULL, 1024, &xor8), 16);
    cr_expect(xor8);
    cr_expect_eq(crossings("allgather", "hybrid", "x=2,y=8", 1024, &xor8), 8);
    cr_expect_eq(crossings("allgather", "hybrid", "x=3,y=4", 1024, &xor8), 4);
    cr_expect_eq(crossings("allgather", "hybrid", "x=4,y=2", 1024, &xor8), 2);
    /* HybridA-3-4: 4, in round 4 (0<->8, 4<->12) */
    cr_expect_eq(crossings("allreduce", "hybrid-a", "x=3,y=4", 1024, &xor8), 4);
    cr_expect(xor8);
    /* hybrid segmented binomial broadcast: 1 */
    cr_expect_eq(crossings("broadcast", "hybrid-segmented", NULL, 4096, &xor8), 1);
}

/* fold=near|far on 15 SPEs of cell:chips=2 (issue 33).  Ranks are SPEs:
 * chip 0 holds 0-7, chip 1 holds 8-14.  P = 15 = Pp + e with Pp = 8, e = 7.
 * Counted by hand:
 *   near: extra 2i+1 folds onto 2i: pairs 1-0, 3-2, 5-4, 7-6 on chip 0 and
 *     9-8, 11-10, 13-12 on chip 1, so fold-in and fold-out cross nothing.
 *     Virtual ranks 0..7 are SPEs 0, 2, 4, 6 | 8, 10, 12, 14: rounds 1 and 2
 *     (v XOR 1, v XOR 2) stay on a chip, round 3 (v XOR 4) pairs 0-8, 2-10,
 *     4-12, 6-14: 8 crossings, one each way per pair, all between even SPEs
 *     (never an extra rank).
 *   far: extra 8+i folds onto i (i < 7): 7 crossings from chip 1 at
 *     fold-in, 7 from chip 0 at fold-out; virtual ranks 0..7 all sit on
 *     chip 0, so the doubling rounds cross nothing: 14 crossings, every one
 *     between i and 8+i, the fold-ins all started before the fold-outs. */
typedef struct fold_count {
    int n, from0, from1, odd, not8, order_ok;
} fold_count_t;

static fold_count_t fold_crossings(const char *coll, const char *algo, const char *opts,
                                   int64_t bytes)
{
    h_run_t r = run_ok("cell:chips=2", coll, algo, 15, bytes, opts);
    const cs_cell_crossing_t *x;
    fold_count_t c = {0, 0, 0, 0, 0, 1};
    cs_tick_t last_in = 0, first_out = -1;
    c.n = cs_cell_eib_crossings(r.res.net, &x);
    for (int i = 0; i < c.n; i++) {
        int s = x[i].src, d = x[i].dst;
        if (s < 8) {
            c.from0++;
            if (first_out < 0 || x[i].start < first_out)
                first_out = x[i].start;
        } else {
            c.from1++;
            if (x[i].start > last_in)
                last_in = x[i].start;
        }
        c.odd += (s % 2) || (d % 2);
        c.not8 += abs(s - d) != 8;
    }
    c.order_ok = c.n == 0 || (c.from0 && c.from1 && last_in < first_out);
    h_done(&r);
    return c;
}

Test(cell, fold_near_stays_on_chip_fold_far_crosses_the_bif)
{
    static const struct {
        const char *coll, *algo;
        int64_t bytes;
    } A[] = {{"barrier", "rdb", 0}, {"allreduce", "rdb", 256}, {"allgather", "rdb", 128}};
    for (size_t i = 0; i < sizeof A / sizeof A[0]; i++) {
        fold_count_t c = fold_crossings(A[i].coll, A[i].algo, "fold=near", A[i].bytes);
        cr_expect_eq(c.n, 8, "%s/%s near: %d crossings", A[i].coll, A[i].algo, c.n);
        cr_expect_eq(c.from0, 4);
        cr_expect_eq(c.from1, 4);
        cr_expect_eq(c.odd, 0, "%s/%s near: an extra rank crossed", A[i].coll, A[i].algo);
        cr_expect_eq(c.not8, 0);
        c = fold_crossings(A[i].coll, A[i].algo, "fold=far", A[i].bytes);
        cr_expect_eq(c.n, 14, "%s/%s far: %d crossings", A[i].coll, A[i].algo, c.n);
        cr_expect_eq(c.from1, 7, "fold-in");
        cr_expect_eq(c.from0, 7, "fold-out");
        cr_expect_eq(c.not8, 0);
        cr_expect(c.order_ok, "%s/%s far: fold-out crossed before the fold-in ended", A[i].coll,
                  A[i].algo);
    }
    /* the default is near for the generic algorithms, far for the Cell
     * paper's Rdb-Barrier (its "extra round" to the excess nodes) */
    cr_expect_eq(fold_crossings("barrier", "rdb", NULL, 0).n, 8);
    cr_expect_eq(fold_crossings("allreduce", "rdb-barrier", NULL, 256).n, 14);
    /* near: round 3's 8 data messages, and the 8 tokens of the barrier
     * after round 2, an rdb barrier among the 8 virtual ranks whose last
     * round also pairs v with v XOR 4 (far: all of it on chip 0) */
    cr_expect_eq(fold_crossings("allreduce", "rdb-barrier", "fold=near", 256).n, 16);
}

/* Most DMA gets of data under way on one chip during the run. */
static int data_transfers(const char *spec, const char *coll, const char *algo, int P,
                          int64_t bytes)
{
    h_run_t r = run_ok(spec, coll, algo, P, bytes, NULL);
    int n = cs_cell_eib_peak_data_transfers(r.res.net);
    h_done(&r);
    return n;
}

Test(cell, data_transfers_under_way)
{
    /* rdb: every round's get carries what the previous one brought, so each
     * SPE has one message under way, barriers or not (row F12 does not
     * reproduce); one 16 KiB command per get up to 16 KiB, two at 32 KiB */
    for (int64_t s = 512; s <= 16384; s *= 4) {
        cr_expect_eq(data_transfers("cell:chips=1", "allreduce", "rdb", 8, s), 8, "%lld",
                     (long long)s);
        cr_expect_eq(data_transfers("cell:chips=1", "allreduce", "rdb-barrier", 8, s), 8);
    }
    cr_expect_eq(data_transfers("cell:chips=1", "allreduce", "rdb", 8, 32768), 16);
    /* a crossing counts on both chips: 8 own gets and the 8 from the
     * other chip in rdb's last round */
    cr_expect_eq(data_transfers("cell:chips=2", "allgather", "rdb", 16, 1024), 16);
    /* one-to-all: the 7 children get from the root at once */
    cr_expect_eq(data_transfers("cell:chips=1", "broadcast", "flat", 8, 4096), 7);
}

Test(cell, interleaved_chips_make_rdb_cross_every_round)
{
    /* ranks interleaved so that every rdb partner (r XOR 2^j) is on the
     * other chip: rank r on chip popcount(r) mod 2 */
    cs_machine_t *m;
    cs_error_t err;
    cr_assert_eq(cs_machine_new("cell:chips=2", &m, &err), CS_OK);
    int32_t node[16];
    int used[2] = {0, 0};
    for (int r = 0; r < 16; r++) {
        int chip = __builtin_popcount((unsigned)r) % 2;
        node[r] = chip * 8 + used[chip]++;
    }
    cs_coll_kind_t kind;
    const cs_coll_algo_t *a;
    cr_assert_eq(cs_coll_parse("allgather", &kind, &err), CS_OK);
    cr_assert_eq(cs_coll_find(kind, "rdb", &a, &err), CS_OK);
    cs_coll_hints_t hints = {0};
    cs_coll_args_t args = {kind, 16, 1024, 0, m->net.unit_bytes, &hints, NULL, 0};
    cs_program_t *p;
    cr_assert_eq(cs_coll_build(a, &args, &p, &err), CS_OK);
    cs_exec_env_t env;
    cs_exec_opts_t o;
    cs_exec_result_t res;
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    o.rank_to_node = node;
    cr_assert_eq(cs_exec_run(&env, p, &o, &res, &err), CS_OK, "%s", err.msg);
    const cs_cell_crossing_t *x;
    int n = cs_cell_eib_crossings(res.net, &x);
    double interleaved = (double)res.finish * NS_PER_TICK;
    /* every round crosses: 16 data messages in each of the 4 rounds */
    cr_expect_eq(n, 64, "crossings %d", n);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
    cs_machine_free(m);
    double natural = run_ns("cell:chips=2", "allgather", "rdb", 16, 1024, NULL);
    cr_expect_gt(interleaved, natural);
}

Test(cell, a_full_mailbox_loses_its_newest_entry)
{
    /* five SPEs send a token to SPE 0 before it reads any: the fifth write
     * finds the 4-entry inbound mailbox full */
    cs_machine_t *m;
    cs_error_t err;
    cr_assert_eq(cs_machine_new("cell:chips=1,notify=mailbox", &m, &err), CS_OK, "%s", err.msg);
    cs_program_t *p = cs_program_new(6);
    int32_t c = cs_program_calc(p, 0, 100000, 0); /* SPE 0 is busy */
    for (int s = 1; s <= 5; s++) {
        cs_program_send(p, s, 0, 1, 0);
        int32_t r = cs_program_recv(p, 0, s, 1, 0);
        cs_program_dep(p, r, c, CS_DEP_AFTER);
    }
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK);
    cs_exec_env_t env;
    cs_exec_opts_t o;
    cs_exec_result_t res;
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    int rc = cs_exec_run(&env, p, &o, &res, &err);
    cr_expect_eq(rc, CS_ERR_RUNTIME);
    cr_expect(strstr(err.msg, "mailbox is full") != NULL, "%s", err.msg);
    cr_expect(strstr(err.msg, "SPE 0") != NULL, "%s", err.msg);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
    /* four fit */
    p = cs_program_new(5);
    c = cs_program_calc(p, 0, 100000, 0);
    for (int s = 1; s <= 4; s++) {
        cs_program_send(p, s, 0, 1, 0);
        int32_t r = cs_program_recv(p, 0, s, 1, 0);
        cs_program_dep(p, r, c, CS_DEP_AFTER);
    }
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK);
    cr_expect_eq(cs_exec_run(&env, p, &o, &res, &err), CS_OK, "%s", err.msg);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
    cs_machine_free(m);
}

Test(cell, signal_registers_in_or_mode)
{
    /* the one-to-all barrier over signal registers: 400 ns on 8 SPEs (the
     * fit of signal_read), slower than over the local store (225 ns) */
    double sig = run_ns("cell:chips=1,notify=signal", "barrier", "flat", 8, 0, NULL);
    cr_expect(fabs(sig - 400) <= 0.01 * 400, "%g", sig);
    cr_expect_gt(sig, run_ns("cell:chips=1", "barrier", "flat", 8, 0, NULL));
    /* OR mode loses nothing: seven tokens into one SPE while it is busy */
    cs_machine_t *m;
    cs_error_t err;
    cr_assert_eq(cs_machine_new("cell:chips=1,notify=signal", &m, &err), CS_OK, "%s", err.msg);
    cs_program_t *p = cs_program_new(8);
    int32_t c = cs_program_calc(p, 0, 100000, 0);
    for (int s = 1; s < 8; s++) {
        cs_program_send(p, s, 0, 1, 0);
        cs_program_dep(p, cs_program_recv(p, 0, s, 1, 0), c, CS_DEP_AFTER);
    }
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK);
    cs_exec_env_t env;
    cs_exec_opts_t o;
    cs_exec_result_t res;
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    cr_expect_eq(cs_exec_run(&env, p, &o, &res, &err), CS_OK, "%s", err.msg);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
    cs_machine_free(m);
}

Test(cell, mailbox_notifications_cost_a_constant)
{
    /* the mailbox variant's extra message per address and barrier per round
     * cost the same at every size (paper §3.4) */
    double d1 = run_ns("cell:chips=1,notify=mailbox", "reduce", "mailbox", 8, 128, NULL) -
                run_ns("cell:chips=1", "reduce", "binomial", 8, 128, NULL);
    double d2 = run_ns("cell:chips=1,notify=mailbox", "reduce", "mailbox", 8, 32768, NULL) -
                run_ns("cell:chips=1", "reduce", "binomial", 8, 32768, NULL);
    cr_expect_gt(d1, 0);
    cr_expect(fabs(d2 - d1) <= 0.25 * d1, "%g ns at 128 B, %g ns at 32 KiB", d1, d2);
}

/* `best` is faster than every one of `others` (NULL-terminated). */
static void expect_best(int P, const char *coll, int64_t bytes, const char *best,
                        const char *const *others)
{
    const char *spec = P > 8 ? "cell:chips=2" : "cell:chips=1";
    double t = run_ns(spec, coll, best, P, bytes, NULL);
    for (; *others; others++)
        cr_expect_lt(t, run_ns(spec, coll, *others, P, bytes, NULL),
                     "%s/%s should beat %s at %lld B on %d SPEs", coll, best, *others,
                     (long long)bytes, P);
}

Test(cell, cold_call_orderings)
{
    static const char *const bcast_ota[] = {"two-to-all", "opt", NULL};
    static const char *const bcast_seg[] = {"opt", "two-to-all", "flat", NULL};
    static const char *const fig14_rdb[] = {"rabenseifner", "reduce-bcast", "rdb-barrier", NULL};
    static const char *const fig14_rab[] = {"rdb", "rdb-barrier", "reduce-bcast", NULL};
    /* Orderings of ONE cold call each, the machine's regression guard.  They
     * were the rows of docs/cell-results.md that reproduced while the table
     * timed cold calls (`tools/cell-table --cold` still does); since issue 33
     * the table times loops as the paper did and reads every range at every
     * grid size, where E1, E2, D5, F3 and F7 do not reproduce (the
     * back-to-back binomial reduce pipelines, binomial simple joins the
     * broadcast set, the ranges reach 2 KiB), so these are single-call
     * facts, not verdicts */
    /* C1: 8 SPEs, rdb all-gather beats gather + broadcast at every size */
    for (int64_t s = 16; s <= 32768; s *= 4)
        cr_expect_lt(run_ns("cell:chips=1", "allgather", "rdb", 8, s, NULL),
                     run_ns("cell:chips=1", "allgather", "gather-bcast", 8, s, NULL), "%lld",
                     (long long)s);
    /* C4, C5: hybrid-2-8 beats rdb at 4 KiB; hybrid-3-4 is best above */
    cr_expect_lt(run_ns("cell:chips=2", "allgather", "hybrid", 16, 4096, "x=2,y=8"),
                 run_ns("cell:chips=2", "allgather", "rdb", 16, 4096, NULL));
    double h34 = run_ns("cell:chips=2", "allgather", "hybrid", 16, 32768, "x=3,y=4");
    cr_expect_lt(h34, run_ns("cell:chips=2", "allgather", "hybrid", 16, 32768, "x=2,y=8"));
    cr_expect_lt(h34, run_ns("cell:chips=2", "allgather", "hybrid", 16, 32768, "x=4,y=2"));
    cr_expect_lt(h34, run_ns("cell:chips=2", "allgather", "rdb", 16, 32768, NULL));
    /* D2: 8 SPEs, one-to-all is the best broadcast up to 2 KiB */
    for (int64_t s = 16; s <= 2048; s *= 8)
        expect_best(8, "broadcast", s, "flat", bcast_ota);
    /* D4: 8 SPEs, above 4 KiB the two-phase segmented binomial is best */
    for (int64_t s = 8192; s <= 32768; s *= 4)
        expect_best(8, "broadcast", s, "two-phase", bcast_seg);
    /* D5: 16 SPEs, two-to-all is the best small broadcast */
    cr_expect_lt(run_ns("cell:chips=2", "broadcast", "two-to-all", 16, 64, NULL),
                 run_ns("cell:chips=2", "broadcast", "flat", 16, 64, NULL));
    /* E1, E2: Rabenseifner beats the binomial reduce above 1 KiB (8 SPEs)
     * and above 4 KiB (16 SPEs), not below */
    cr_expect_lt(run_ns("cell:chips=1", "reduce", "binomial", 8, 1024, NULL),
                 run_ns("cell:chips=1", "reduce", "rabenseifner", 8, 1024, NULL));
    cr_expect_lt(run_ns("cell:chips=1", "reduce", "rabenseifner", 8, 4096, NULL),
                 run_ns("cell:chips=1", "reduce", "binomial", 8, 4096, NULL));
    cr_expect_lt(run_ns("cell:chips=2", "reduce", "binomial", 16, 4096, NULL),
                 run_ns("cell:chips=2", "reduce", "rabenseifner", 16, 4096, NULL));
    cr_expect_lt(run_ns("cell:chips=2", "reduce", "rabenseifner", 16, 16384, NULL),
                 run_ns("cell:chips=2", "reduce", "binomial", 16, 16384, NULL));
    /* F1: below 512 B, rdb is the best all-reduce of the Fig. 14 set */
    expect_best(16, "allreduce", 128, "rdb", fig14_rdb);
    /* F3: 8 SPEs, above 1 KiB: reduce-scatter + rdb all-gather is best */
    for (int64_t s = 4096; s <= 32768; s *= 2)
        expect_best(8, "allreduce", s, "rabenseifner", fig14_rab);
    /* D7: 16 SPEs, the segmented binomial without the hybrid (its second
     * phase crosses the BIF) is slower than the binomial (opt) tree */
    for (int64_t s = 256; s <= 32768; s *= 8)
        cr_expect_lt(run_ns("cell:chips=2", "broadcast", "opt", 16, s, NULL),
                     run_ns("cell:chips=2", "broadcast", "two-phase", 16, s, NULL), "%lld",
                     (long long)s);
    /* F7: 16 SPEs, 256 B - 2 KiB: HybridA-2-8 beats rdb */
    cr_expect_lt(run_ns("cell:chips=2", "allreduce", "hybrid-a", 16, 1024, "x=2,y=8"),
                 run_ns("cell:chips=2", "allreduce", "rdb", 16, 1024, NULL));
}

Test(cell, hybrid_b_gains_up_to_15_percent_on_rabenseifner)
{
    /* F11: HybridB-3-4 is up to 15% faster than the better of the two
     * Rabenseifner all-reduces (RS + rdb all-gather, RS + gather-broadcast)
     * on 16 SPEs; one cold call per point, 10-20% counts (the table's
     * loops read it with its own rule, tools/cell_table.py up_to) */
    double best_gain = -1;
    for (int64_t s = 2048; s <= 32768; s *= 2) {
        double rab = run_ns("cell:chips=2", "allreduce", "rabenseifner", 16, s, NULL);
        double gb = run_ns("cell:chips=2", "allreduce", "hybrid-b", 16, s, "x=5,y=1");
        double hb = run_ns("cell:chips=2", "allreduce", "hybrid-b", 16, s, "x=3,y=4");
        double gain = 1 - hb / (rab < gb ? rab : gb);
        if (gain > best_gain)
            best_gain = gain;
    }
    cr_expect(best_gain >= 0.10 && best_gain <= 0.20, "up to %.1f%%", 100 * best_gain);
}

Test(cell, every_suite_algorithm_validates)
{
    h_expect_all_validate("cell:chips=2", 4096, 5, NULL);
}

Test(cell, spec_errors)
{
    cs_machine_t *m;
    cs_error_t err;
    cr_expect_neq(cs_machine_new("cell:chips=3", &m, &err), CS_OK);
    cr_expect(strstr(err.msg, "chips") != NULL, "%s", err.msg);
    cr_expect_neq(cs_machine_new("cell:chips=2,bif_bw=fast", &m, &err), CS_OK);
    cr_expect(strstr(err.msg, "bif_bw") != NULL, "%s", err.msg);
    /* issue 19: a rate below 1 MB/s or beyond int64 once rounded was read
     * as 1 MB/s, exit 0 */
    const char *bws[] = {"cell:chips=2,bif_bw=1000", "cell:chips=2,bif_bw=0.5MB/s",
                         "cell:chips=2,bif_bw=1e300GB/s", "cell:chips=2,bif_bw=2e6GB/s"};
    for (size_t i = 0; i < sizeof bws / sizeof bws[0]; i++) {
        cr_expect_neq(cs_machine_new(bws[i], &m, &err), CS_OK, "%s", bws[i]);
        cr_expect(strstr(err.msg, "key 'bif_bw'") && strstr(err.msg, "1 MB/s to 1 PB/s"), "%s: %s",
                  bws[i], err.msg);
    }
    cr_assert_eq(cs_machine_new("cell:chips=2,bif_bw=1MB/s", &m, &err), CS_OK, "%s", err.msg);
    cs_machine_free(m);
    cr_assert_eq(cs_machine_new("cell:chips=2", &m, &err), CS_OK);
    cr_expect_eq(cs_machine_nodes(m), 16); /* the SPEs; PPE, MIC, IOIF are not ranks */
    cr_expect_eq(cs_topo_nodes(m->topo), 24);
    cs_machine_free(m);
}

/* The Cell has no closed-form model: --predict says so. */
Test(cell, predict_says_no_model)
{
    p_expect_none("cell:chips=1", "broadcast", "binomial", 128, "cell has no closed-form model");
    p_expect_none("cell:chips=2", "allreduce", "hybrid-b", 256, "no closed-form model");
}
