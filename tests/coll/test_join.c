/*
 * test_join.c - a join op (core/program.h) completes in place: a program
 * whose stages are joined runs exactly as the same program with direct
 * edges from every op of a stage to every op of the next (same finish,
 * events and op end times), while an ordinary calc(0, 0) in the join's
 * place does not (it completes through an event on the rank's CPU).
 *
 * The program is allreduce/gateway on the 8x8 alpha-beta torus at 1 KiB,
 * where the order is observable: the golden run at the time joins were
 * introduced (issue 34) finished at 43.672 us with direct edges and at
 * 40.672 us with calc joins.  The two other programs are derived from the
 * joined one here, independently of the executor.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

enum { AS_DIRECT, AS_CALC };

/* Adds op's dependencies on pred to q (ids through map); a join pred is
 * replaced by its own preds (AS_DIRECT), recursively. */
static void copy_deps(const cs_program_t *p, cs_program_t *q, const int32_t *map, int32_t op,
                      int32_t pred, cs_dep_kind_t kind, int how)
{
    if (how == AS_DIRECT && cs_program_op(p, pred)->join) {
        int n;
        const cs_dep_t *d = cs_program_preds(p, pred, &n);
        for (int k = 0; k < n; k++)
            copy_deps(p, q, map, op, cs_dep_op(d[k]), kind, how);
        return;
    }
    cr_assert_eq(cs_program_dep(q, map[op], map[pred], kind), CS_OK);
}

/* p without its joins (AS_DIRECT: their edges expanded, the other ops in
 * the same order), or with plain calcs of 0 in their place (AS_CALC). */
static cs_program_t *derive(const cs_program_t *p, int how, int32_t *map)
{
    cs_program_t *q = cs_program_new(cs_program_nranks(p));
    int32_t n = cs_program_nops(p);
    cs_error_t err;
    for (int32_t i = 0; i < n; i++) {
        const cs_op_t *o = cs_program_op(p, i);
        map[i] = -1;
        if (o->join && how == AS_DIRECT)
            continue;
        switch (o->kind) {
        case CS_OP_SEND: map[i] = cs_program_send(q, o->rank, o->peer, o->bytes, o->tag); break;
        case CS_OP_RECV: map[i] = cs_program_recv(q, o->rank, o->peer, o->bytes, o->tag); break;
        case CS_OP_MCAST:
            map[i] = cs_program_mcast(q, o->rank, cs_program_mcast_peers(p, o),
                                      cs_program_npeers(p, o), o->bytes, o->tag);
            break;
        default: map[i] = cs_program_calc(q, o->rank, o->ticks, o->bytes); break;
        }
        cr_assert_geq(map[i], 0);
    }
    for (int32_t i = 0; i < n; i++) {
        int nd;
        const cs_dep_t *d = cs_program_preds(p, i, &nd);
        if (map[i] < 0)
            continue;
        for (int k = 0; k < nd; k++)
            copy_deps(p, q, map, i, cs_dep_op(d[k]), cs_dep_kind(d[k]), how);
    }
    cr_assert_eq(cs_program_finalize(q, &err), CS_OK, "%s", err.msg);
    return q;
}

static void run(const cs_machine_t *m, const cs_program_t *p, cs_exec_result_t *res)
{
    cs_exec_env_t env;
    cs_exec_opts_t o;
    cs_error_t err;
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    o.record_op_times = 1;
    cr_assert_eq(cs_exec_run(&env, p, &o, res, &err), CS_OK, "%s", err.msg);
}

Test(join, completes_in_place_like_direct_edges)
{
    h_run_t r = h_run("alphabeta:topo=torus,rows=8,cols=8", "allreduce", "gateway", 0, 1024, 0,
                      NULL, CS_NET_PACKET, 1);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    int32_t n = cs_program_nops(r.prog), joins = 0;
    for (int32_t i = 0; i < n; i++)
        joins += cs_program_op(r.prog, i)->join;
    cr_assert_gt(joins, 0, "the gateway's stages are joined");
    int32_t *map = malloc((size_t)n * sizeof *map), *cmap = malloc((size_t)n * sizeof *cmap);
    cs_program_t *direct = derive(r.prog, AS_DIRECT, map);
    cs_program_t *calc = derive(r.prog, AS_CALC, cmap);
    cr_assert_eq(cs_program_nops(direct), n - joins);
    cr_assert_eq(cs_program_nops_visible(r.prog), n - joins, "reports count no join");
    /* the writers' copy (cs_program_without_joins) is this program, op for
     * op and edge for edge */
    cs_program_t *w = NULL;
    cs_error_t werr;
    cr_assert_eq(cs_program_without_joins(r.prog, &w, &werr), CS_OK, "%s", werr.msg);
    cr_assert_eq(cs_program_nops(w), cs_program_nops(direct));
    for (int32_t i = 0; i < cs_program_nops(w); i++) {
        int na, nb;
        const cs_dep_t *da = cs_program_preds(w, i, &na), *db = cs_program_preds(direct, i, &nb);
        cr_assert(!memcmp(cs_program_op(w, i), cs_program_op(direct, i), sizeof(cs_op_t)), "op %d", i);
        cr_assert_eq(na, nb, "op %d", i);
        cr_assert(!memcmp(da, db, (size_t)na * sizeof *da), "op %d's dependencies", i);
    }
    cs_program_free(w);
    cs_exec_result_t dres, cres;
    run(r.m, direct, &dres);
    run(r.m, calc, &cres);
    cr_expect_eq(r.res.finish, dres.finish, "joined %lld, direct %lld ticks",
                 (long long)r.res.finish, (long long)dres.finish);
    cr_expect_eq(r.res.events, dres.events);
    for (int32_t i = 0, bad = 0; i < n && bad < 5; i++)
        if (map[i] >= 0 && r.res.ops[i].end != dres.ops[map[i]].end) {
            cr_expect_fail("op %d ends at %lld joined, %lld direct", i,
                           (long long)r.res.ops[i].end, (long long)dres.ops[map[i]].end);
            bad++;
        }
    /* the order matters here: a join through the CPU changes the time */
    cr_expect_neq(cres.finish, dres.finish, "a calc join should change this run");
    cs_exec_result_destroy(&dres);
    cs_exec_result_destroy(&cres);
    cs_program_free(direct);
    cs_program_free(calc);
    free(map);
    free(cmap);
    h_done(&r);
}

/* A join ready at time 0 and a chain of joins complete at once, without
 * the CPU: a calc behind them starts at 0. */
Test(join, chains_and_time_zero)
{
    cs_program_t *p = cs_program_new(1);
    cs_exec_result_t res;
    cs_error_t err;
    int32_t j0 = cs_program_join(p, 0), j1 = cs_program_join(p, 0), j2 = cs_program_join(p, 0);
    int32_t c = cs_program_calc(p, 0, 7, 0);
    cs_program_dep(p, j1, j0, CS_DEP_AFTER);
    cs_program_dep(p, j2, j1, CS_DEP_AFTER);
    cs_program_dep(p, c, j2, CS_DEP_AFTER);
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK, "%s", err.msg);
    cs_machine_t *m;
    cr_assert_eq(cs_machine_new("alphabeta:topo=complete,p=2", &m, &err), CS_OK, "%s", err.msg);
    run(m, p, &res);
    cr_expect_eq(res.ops[j2].end, 0);
    cr_expect_eq(res.ops[c].start, 0);
    cr_expect_eq(res.finish, 7);
    cr_expect_eq(res.events, 1, "the calc's event only");
    char d[64];
    cs_program_describe(p, j1, d, sizeof d);
    cr_expect_str_eq(d, "join");
    cs_exec_result_destroy(&res);
    cs_machine_free(m);
    cs_program_free(p);
}

Test(join, cannot_stream)
{
    cs_program_t *p = cs_program_new(2);
    cs_error_t err;
    int32_t r = cs_program_recv(p, 0, 1, 8, 0), j = cs_program_join(p, 0);
    cs_program_send(p, 1, 0, 8, 0);
    cr_assert_eq(cs_program_dep(p, j, r, CS_DEP_STREAM), CS_ERR_RANGE);
    cr_assert_eq(cs_program_finalize(p, &err), CS_ERR_RANGE);
    cr_expect(strstr(err.msg, "join") && strstr(err.msg, "rank 0"), "%s", err.msg);
    cs_program_free(p);
}
