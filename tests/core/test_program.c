/* test_program.c - building, checking and freezing programs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "core/program.h"

Test(program, builder_errors_are_reported_by_finalize)
{
    cs_error_t err;
    cs_program_t *p = cs_program_new(4);
    cr_assert_eq(cs_program_send(p, 0, 4, 8, 0), -1);
    cr_assert_eq(cs_program_finalize(p, &err), CS_ERR_RANGE);
    cr_assert(strstr(err.msg, "destination 4 is out of range"), "%s", err.msg);
    cs_program_free(p);

    p = cs_program_new(2);
    cr_assert_eq(cs_program_recv(p, 1, 0, -5, 0), -1);
    cr_assert_eq(cs_program_finalize(p, &err), CS_ERR_RANGE);
    cr_assert(strstr(err.msg, "negative size"), "%s", err.msg);
    cs_program_free(p);

    p = cs_program_new(2);
    int32_t a = cs_program_calc(p, 0, 1, 0), b = cs_program_calc(p, 1, 1, 0);
    cr_assert_eq(cs_program_dep(p, a, b, CS_DEP_AFTER), CS_ERR_RANGE);
    cr_assert_eq(cs_program_finalize(p, &err), CS_ERR_RANGE);
    cr_assert(strstr(err.msg, "different ranks"), "%s", err.msg);
    cs_program_free(p);
}

Test(program, csr_preds_and_succs)
{
    cs_error_t err;
    cs_program_t *p = cs_program_new(1);
    int32_t a = cs_program_calc(p, 0, 1, 0), b = cs_program_calc(p, 0, 1, 0),
            c = cs_program_calc(p, 0, 1, 8);
    cs_program_dep(p, c, a, CS_DEP_AFTER);
    cs_program_dep(p, c, b, CS_DEP_AFTER_START);
    cs_program_dep(p, b, a, CS_DEP_AFTER);
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK, "%s", err.msg);
    int n;
    const cs_dep_t *d = cs_program_preds(p, c, &n);
    cr_assert_eq(n, 2);
    cr_assert_eq(cs_dep_op(d[0]), a);
    cr_assert_eq(cs_dep_kind(d[0]), CS_DEP_AFTER);
    cr_assert_eq(cs_dep_op(d[1]), b);
    cr_assert_eq(cs_dep_kind(d[1]), CS_DEP_AFTER_START);
    d = cs_program_succs(p, a, &n);
    cr_assert_eq(n, 2);
    cs_program_preds(p, a, &n);
    cr_assert_eq(n, 0);
    cs_program_free(p);
}

/* Labels survive growth of the op array (regression: > 64 labelled ops). */
Test(program, many_labels)
{
    cs_error_t err;
    cs_program_t *p = cs_program_new(1);
    char lab[32], d[128];
    for (int i = 0; i < 1000; i++) {
        int32_t op = cs_program_calc(p, 0, i, 0);
        snprintf(lab, sizeof lab, "l%d", i);
        cs_program_set_origin(p, op, i + 1, lab);
    }
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK);
    cr_assert_str_eq(cs_program_label(p, 777), "l777");
    cs_program_describe(p, 777, d, sizeof d);
    cr_assert_str_eq(d, "l777 (line 778): calc 777");
    cs_program_free(p);
}

Test(program, self_dependency_is_a_cycle)
{
    cs_error_t err;
    cs_program_t *p = cs_program_new(1);
    int32_t a = cs_program_calc(p, 0, 1, 0);
    cs_program_dep(p, a, a, CS_DEP_AFTER);
    cr_assert_eq(cs_program_finalize(p, &err), CS_ERR_DEADLOCK);
    cs_program_free(p);
}

Test(program, streaming_needs_bytes)
{
    cs_error_t err;
    cs_program_t *p = cs_program_new(2);
    int32_t a = cs_program_calc(p, 0, 5, 0), s = cs_program_send(p, 0, 1, 8, 0);
    cr_assert_eq(cs_program_dep(p, s, a, CS_DEP_STREAM), CS_ERR_RANGE);
    cr_assert_eq(cs_program_finalize(p, &err), CS_ERR_RANGE);
    cs_program_free(p);
}

/* Successors are listed in id order, whatever order the dependencies were
 * added in (the executor enables them in this order). */
Test(program, succs_in_id_order)
{
    cs_error_t err;
    cs_program_t *p = cs_program_new(1);
    int32_t a = cs_program_calc(p, 0, 1, 8), b = cs_program_calc(p, 0, 1, 0),
            c = cs_program_calc(p, 0, 1, 0), d = cs_program_calc(p, 0, 1, 0);
    cs_program_dep(p, d, a, CS_DEP_AFTER);
    cs_program_dep(p, b, a, CS_DEP_STREAM);
    cs_program_dep(p, c, a, CS_DEP_AFTER_START);
    cs_program_dep(p, b, a, CS_DEP_AFTER);
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK, "%s", err.msg);
    int n;
    const cs_dep_t *s = cs_program_succs(p, a, &n);
    cr_assert_eq(n, 4);
    /* b's own deps in their order */
    cr_assert(cs_dep_op(s[0]) == b && cs_dep_kind(s[0]) == CS_DEP_STREAM);
    cr_assert(cs_dep_op(s[1]) == b && cs_dep_kind(s[1]) == CS_DEP_AFTER);
    cr_assert(cs_dep_op(s[2]) == c && cs_dep_kind(s[2]) == CS_DEP_AFTER_START);
    cr_assert(cs_dep_op(s[3]) == d && cs_dep_kind(s[3]) == CS_DEP_AFTER);
    cs_program_free(p);
}

Test(program, renumber)
{
    cs_error_t err;
    cs_program_t *p = cs_program_new(2);
    int32_t dst[] = {0};
    int32_t a = cs_program_send(p, 0, 1, 8, 1);   /* -> 2 */
    int32_t b = cs_program_recv(p, 1, 0, 8, 1);   /* -> 0 */
    int32_t c = cs_program_mcast(p, 1, dst, 1, 4, 2); /* -> 3 */
    int32_t d = cs_program_calc(p, 0, 5, 0);      /* -> 1 */
    cs_program_dep(p, c, b, CS_DEP_AFTER);
    cs_program_dep(p, d, a, CS_DEP_AFTER_START);
    cs_program_set_origin(p, c, 7, "m");
    cs_program_set_data(p, b, 16, 8, CS_DATA_REDUCE);
    int32_t bad[] = {2, 0, 2, 1}, out[] = {2, 0, 4, 1}, ok[] = {2, 0, 3, 1};
    cr_assert_eq(cs_program_renumber(p, bad, &err), CS_ERR_RANGE);
    cr_assert(strstr(err.msg, "op 2 would become op 2, which is given twice"), "%s", err.msg);
    cr_assert_eq(cs_program_renumber(p, out, &err), CS_ERR_RANGE);
    cr_assert(strstr(err.msg, "out of range"), "%s", err.msg);
    cr_assert_eq(cs_program_op(p, 0)->kind, CS_OP_SEND); /* nothing changed */
    cr_assert_eq(cs_program_renumber(p, ok, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_program_op(p, 0)->kind, CS_OP_RECV);
    cr_assert_eq(cs_program_op(p, 1)->kind, CS_OP_CALC);
    cr_assert_eq(cs_program_op(p, 2)->kind, CS_OP_SEND);
    cr_assert_eq(cs_program_op(p, 3)->kind, CS_OP_MCAST);
    cr_assert_eq(cs_program_mcast_peers(p, cs_program_op(p, 3))[0], 0);
    cr_assert_str_eq(cs_program_label(p, 3), "m");
    cr_assert_eq(cs_program_line(p, 3), 7);
    cr_assert_null(cs_program_label(p, 0));
    cr_assert_eq(cs_program_data(p, 0)->off, 16);
    cr_assert_null(cs_program_data(p, 2));
    int n;
    const cs_dep_t *dp = cs_program_preds(p, 3, &n);
    cr_assert(n == 1 && cs_dep_op(dp[0]) == 0 && cs_dep_kind(dp[0]) == CS_DEP_AFTER);
    dp = cs_program_preds(p, 1, &n);
    cr_assert(n == 1 && cs_dep_op(dp[0]) == 2 && cs_dep_kind(dp[0]) == CS_DEP_AFTER_START);
    cr_assert_eq(cs_program_renumber(p, ok, &err), CS_ERR_INTERNAL); /* finalized */
    cs_program_free(p);
}

/* The limits refuse the op or dependency beyond them with a clear error;
 * cs_program_set_limits lowers them so that this needs no 2^30 ops. */
Test(program, limits_of_ops_and_dependencies)
{
    cs_error_t err;
    cs_program_t *p = cs_program_new(1);
    cs_program_set_limits(p, 3, -1);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(cs_program_calc(p, 0, 1, 0), i);
    cr_assert_eq(cs_program_calc(p, 0, 1, 0), -1);
    cr_assert_eq(cs_program_nops(p), 3);
    cr_assert_eq(cs_program_finalize(p, &err), CS_ERR_NOMEM);
    cr_assert(strstr(err.msg, "more than 3 ops"), "%s", err.msg);
    cs_program_free(p);

    p = cs_program_new(1);
    cs_program_set_limits(p, -1, 2);
    int32_t a = cs_program_calc(p, 0, 1, 0), b = cs_program_calc(p, 0, 1, 0);
    cr_assert_eq(cs_program_dep(p, b, a, CS_DEP_AFTER), CS_OK);
    cr_assert_eq(cs_program_dep(p, b, a, CS_DEP_AFTER_START), CS_OK);
    cr_assert_eq(cs_program_dep(p, b, a, CS_DEP_AFTER), CS_ERR_NOMEM);
    cr_assert_eq(cs_program_finalize(p, &err), CS_ERR_NOMEM);
    cr_assert(strstr(err.msg, "more than 2 dependencies"), "%s", err.msg);
    cs_program_free(p);

    /* the largest op id and every kind survive the packing */
    cr_assert_eq(CS_PROGRAM_MAX_OPS, (1 << 30) - 1);
    cs_dep_t d = ((cs_dep_t)CS_PROGRAM_MAX_OPS << 2) | CS_DEP_STREAM;
    cr_assert_eq(cs_dep_op(d), (1 << 30) - 1);
    cr_assert_eq(cs_dep_kind(d), CS_DEP_STREAM);
    d = (5u << 2) | CS_DEP_AFTER_START;
    cr_assert(cs_dep_op(d) == 5 && cs_dep_kind(d) == CS_DEP_AFTER_START);
}

/* A cycle through a dependency on a later op (the case the backward-only
 * shortcut must not skip) is named with its rank and ops. */
Test(program, cycle_through_forward_dependencies)
{
    cs_error_t err;
    cs_program_t *p = cs_program_new(2);
    cs_program_calc(p, 0, 1, 0);
    int32_t a = cs_program_calc(p, 1, 1, 0), b = cs_program_calc(p, 1, 1, 0),
            c = cs_program_calc(p, 1, 1, 0);
    cs_program_set_origin(p, a, 0, "A");
    cs_program_set_origin(p, b, 0, "B");
    cs_program_set_origin(p, c, 0, "C");
    cs_program_dep(p, b, a, CS_DEP_AFTER);
    cs_program_dep(p, c, b, CS_DEP_AFTER_START);
    cs_program_dep(p, a, c, CS_DEP_AFTER); /* forward: closes the cycle */
    cs_program_set_source(p, "t.goal");
    cr_assert_eq(cs_program_finalize(p, &err), CS_ERR_DEADLOCK);
    cr_assert(strstr(err.msg, "t.goal: dependency cycle on rank 1 (3 ops can never start)"), "%s",
              err.msg);
    /* one way round, whichever op it starts at */
    cr_assert(strstr(err.msg, "A <- C <- B <- A") || strstr(err.msg, "B <- A <- C <- B") ||
                  strstr(err.msg, "C <- B <- A <- C"),
              "%s", err.msg);
    cs_program_free(p);

    /* forward dependencies without a cycle are fine */
    p = cs_program_new(1);
    a = cs_program_calc(p, 0, 1, 0);
    b = cs_program_calc(p, 0, 1, 0);
    c = cs_program_calc(p, 0, 1, 0);
    cs_program_dep(p, a, c, CS_DEP_AFTER);
    cs_program_dep(p, b, c, CS_DEP_AFTER);
    cs_program_dep(p, a, b, CS_DEP_AFTER_START);
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK, "%s", err.msg);
    int n;
    const cs_dep_t *d = cs_program_preds(p, a, &n);
    cr_assert(n == 2 && cs_dep_op(d[0]) == c && cs_dep_op(d[1]) == b);
    cr_assert_eq(cs_dep_kind(d[1]), CS_DEP_AFTER_START);
    d = cs_program_succs(p, c, &n);
    cr_assert(n == 2 && cs_dep_op(d[0]) == a && cs_dep_op(d[1]) == b);
    cs_program_free(p);
}

/* Renumbering a random program, its dependencies added in no particular
 * order, against a reference kept beside it: every op's predecessors in the
 * order they were added, its successors in successor id order, its ticks
 * and line moved with it. */
Test(program, renumber_matches_a_reference)
{
    enum { N = 400, D = 1200, R = 3 };
    static int32_t rank[N], topo[N], new_id[N], old_of[N], dop[D], dpred[D];
    static cs_dep_kind_t dkind[D];
    cs_error_t err;
    unsigned seed = 17;
    int nd = 0;
    cs_program_t *p = cs_program_new(R);
    for (int i = 0; i < N; i++) {
        rank[i] = rand_r(&seed) % R;
        topo[i] = new_id[i] = i;
        cr_assert_eq(cs_program_calc(p, rank[i], i, 8), i);
        cs_program_set_origin(p, i, i + 1, NULL);
    }
    /* two independent shuffles: topo orders the dependencies (no cycle),
     * new_id renumbers, so dependencies point both ways afterwards */
    for (int i = N - 1; i > 0; i--) {
        int j = rand_r(&seed) % (i + 1), t = topo[i];
        topo[i] = topo[j];
        topo[j] = t;
        j = rand_r(&seed) % (i + 1);
        t = new_id[i];
        new_id[i] = new_id[j];
        new_id[j] = t;
    }
    while (nd < D) {
        int32_t o = rand_r(&seed) % N, q = rand_r(&seed) % N;
        if (rank[o] != rank[q] || topo[q] >= topo[o])
            continue;
        dop[nd] = o;
        dpred[nd] = q;
        dkind[nd] = (cs_dep_kind_t)(rand_r(&seed) % 3);
        cr_assert_eq(cs_program_dep(p, o, q, dkind[nd]), CS_OK);
        nd++;
    }
    cr_assert_eq(cs_program_renumber(p, new_id, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK, "%s", err.msg);
    for (int i = 0; i < N; i++)
        old_of[new_id[i]] = i;
    for (int i = 0; i < N; i++) {
        int32_t id = new_id[i];
        int n, m = 0;
        const cs_dep_t *d = cs_program_preds(p, id, &n);
        cr_assert_eq(cs_program_op(p, id)->ticks, i);
        cr_assert_eq(cs_program_op(p, id)->rank, rank[i]);
        cr_assert_eq(cs_program_line(p, id), i + 1);
        for (int k = 0; k < nd; k++)
            if (dop[k] == i) {
                cr_assert(m < n, "op %d has too few preds", i);
                cr_assert_eq(cs_dep_op(d[m]), new_id[dpred[k]], "op %d pred %d", i, m);
                cr_assert_eq(cs_dep_kind(d[m]), dkind[k], "op %d pred %d", i, m);
                m++;
            }
        cr_assert_eq(m, n, "op %d", i);
        /* successors of i: in new id order, each one's deps on i in order */
        d = cs_program_succs(p, id, &n);
        m = 0;
        for (int s = 0; s < N; s++)
            for (int k = 0; k < nd; k++)
                if (dpred[k] == i && dop[k] == old_of[s]) {
                    cr_assert(m < n, "op %d has too few succs", i);
                    cr_assert_eq(cs_dep_op(d[m]), s, "op %d succ %d", i, m);
                    cr_assert_eq(cs_dep_kind(d[m]), dkind[k], "op %d succ %d", i, m);
                    m++;
                }
        cr_assert_eq(m, n, "op %d", i);
    }
    cs_program_free(p);
}

/* An mcast keeps its destinations and their count; a calc has no peers. */
Test(program, mcast_peers_and_counts)
{
    cs_error_t err;
    cs_program_t *p = cs_program_new(5);
    int32_t d1[] = {1, 2, 3}, d2[] = {4};
    int32_t m1 = cs_program_mcast(p, 0, d1, 3, 8, 0), s = cs_program_send(p, 0, 1, 8, 0),
            m2 = cs_program_mcast(p, 0, d2, 1, 8, 0), c = cs_program_calc(p, 0, 1, 0);
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_program_npeers(p, cs_program_op(p, m1)), 3);
    cr_assert_eq(cs_program_npeers(p, cs_program_op(p, m2)), 1);
    cr_assert_eq(cs_program_npeers(p, cs_program_op(p, s)), 1);
    cr_assert_eq(cs_program_npeers(p, cs_program_op(p, c)), 0);
    const int32_t *q = cs_program_mcast_peers(p, cs_program_op(p, m1));
    cr_assert(q[0] == 1 && q[1] == 2 && q[2] == 3);
    cr_assert_eq(cs_program_mcast_peers(p, cs_program_op(p, m2))[0], 4);
    cr_assert_null(cs_program_mcast_peers(p, cs_program_op(p, s)));
    cs_program_free(p);
}

/* cs_program_place (issue 34): ops at the ids given, in any order; a
 * program with an id never placed is refused by finalize. */
Test(program, place_puts_ops_at_their_ids)
{
    cs_program_t *p = cs_program_new(2);
    cs_error_t e;
    cs_program_place(p, 2);
    cr_assert_eq(cs_program_send(p, 0, 1, 8, 0), 2);
    cr_assert_eq(cs_program_nops(p), 3);
    cs_program_place(p, 0);
    cr_assert_eq(cs_program_recv(p, 1, 0, 8, 0), 0);
    cr_assert_eq(cs_program_finalize(p, &e), CS_ERR_INTERNAL, "id 1 is a hole");
    cs_program_free(p);

    p = cs_program_new(2);
    cs_program_place(p, 1);
    cr_assert_eq(cs_program_calc(p, 0, 3, 0), 1);
    cs_program_place(p, 0);
    cr_assert_eq(cs_program_calc(p, 0, 4, 0), 0);
    cr_assert_eq(cs_program_send(p, 1, 0, 8, 0), 2, "unplaced ops come next");
    cr_assert_eq(cs_program_dep(p, 1, 0, CS_DEP_AFTER), CS_OK);
    cr_assert_eq(cs_program_finalize(p, &e), CS_OK, "%s", e.msg);
    cr_assert_eq(cs_program_op(p, 0)->ticks, 4);
    cr_assert_eq(cs_program_op(p, 1)->ticks, 3);
    cr_assert_eq(cs_program_op(p, 2)->kind, CS_OP_SEND);
    cs_program_free(p);
}

/* cs_program_without_joins (issue 34): every successor of a join depends
 * on the join's predecessors instead, with the kind of the edge into each
 * (a join starts and completes at once), joins of joins followed, each
 * (predecessor, kind) listed once per op; the other ops keep their order,
 * side tables and the program's source and time unit.  The expected lists
 * are written out by hand. */
Test(program, without_joins_expands_their_edges)
{
    cs_error_t e;
    cs_program_t *p = cs_program_new(2), *q = NULL;
    int32_t a = cs_program_send(p, 0, 1, 8, 3);       /* 0 -> 0 */
    int32_t b = cs_program_recv(p, 0, 1, 8, 4);       /* 1 -> 1 */
    int32_t j1 = cs_program_join(p, 0);               /* 2 */
    int32_t j2 = cs_program_join(p, 0);               /* 3 */
    int32_t c = cs_program_calc(p, 0, 5, 16);         /* 4 -> 2 */
    int32_t d = cs_program_send(p, 0, 1, 8, 4);       /* 5 -> 3 */
    int32_t r1 = cs_program_recv(p, 1, 0, 8, 3);      /* 6 -> 4 */
    int32_t s1 = cs_program_send(p, 1, 0, 8, 4);      /* 7 -> 5 */
    int32_t r2 = cs_program_recv(p, 1, 0, 8, 4);      /* 8 -> 6 */
    cs_program_dep(p, j1, a, CS_DEP_AFTER);
    cs_program_dep(p, j1, b, CS_DEP_AFTER_START);
    cs_program_dep(p, j2, j1, CS_DEP_AFTER);
    cs_program_dep(p, c, j2, CS_DEP_AFTER);
    cs_program_dep(p, c, a, CS_DEP_AFTER);            /* listed through j2 already */
    cs_program_dep(p, c, b, CS_DEP_AFTER);            /* another kind: kept */
    cs_program_dep(p, d, j1, CS_DEP_AFTER_START);
    cs_program_dep(p, r2, s1, CS_DEP_AFTER);
    cs_program_set_origin(p, c, 12, "sum");
    cs_program_set_data(p, d, 8, 8, CS_DATA_REDUCE);
    cs_program_set_source(p, "hand");
    cs_program_set_time_unit(p, 1e-9);
    cr_assert_eq(cs_program_finalize(p, &e), CS_OK, "%s", e.msg);
    cr_assert_eq(cs_program_njoins(p), 2);
    cr_assert_eq(cs_program_nops_visible(p), 7);
    (void)r1;

    cr_assert_eq(cs_program_without_joins(p, &q, &e), CS_OK, "%s", e.msg);
    cr_assert_not_null(q);
    cr_assert(cs_program_is_finalized(q));
    cr_assert_eq(cs_program_nops(q), 7);
    cr_assert_eq(cs_program_njoins(q), 0);
    const uint8_t kind[7] = {CS_OP_SEND, CS_OP_RECV, CS_OP_CALC, CS_OP_SEND,
                             CS_OP_RECV, CS_OP_SEND, CS_OP_RECV};
    const int rank[7] = {0, 0, 0, 0, 1, 1, 1};
    for (int32_t i = 0; i < 7; i++) {
        cr_expect_eq(cs_program_op(q, i)->kind, kind[i], "op %d", i);
        cr_expect_eq(cs_program_op(q, i)->rank, rank[i], "op %d", i);
        cr_expect_eq(cs_program_op(q, i)->join, 0, "op %d", i);
    }
    cr_expect_eq(cs_program_op(q, 0)->tag, 3);
    cr_expect_eq(cs_program_op(q, 2)->ticks, 5);
    cr_expect_eq(cs_program_op(q, 2)->bytes, 16);
    cr_expect_eq(cs_program_line(q, 2), 12);
    cr_expect_str_eq(cs_program_label(q, 2), "sum");
    cr_assert_not_null(cs_program_data(q, 3));
    cr_expect(cs_program_data(q, 3)->off == 8 && cs_program_data(q, 3)->len == 8 &&
              cs_program_data(q, 3)->mode == CS_DATA_REDUCE);
    cr_expect_null(cs_program_data(q, 0));
    cr_expect_str_eq(cs_program_source(q), "hand");
    cr_expect_eq(cs_program_time_unit(q), 1e-9);

    /* op -> its predecessors as (op, kind), in order */
    static const struct { int32_t op, n, pred[3], kind[3]; } want[] = {
        {2, 3, {0, 1, 1}, {CS_DEP_AFTER, CS_DEP_AFTER_START, CS_DEP_AFTER}},
        {3, 2, {0, 1}, {CS_DEP_AFTER, CS_DEP_AFTER_START}},
        {6, 1, {5}, {CS_DEP_AFTER}},
    };
    int total = 0;
    for (int32_t i = 0; i < 7; i++) {
        int n;
        cs_program_preds(q, i, &n);
        total += n;
    }
    cr_expect_eq(total, 6, "no other dependency");
    for (size_t w = 0; w < sizeof want / sizeof *want; w++) {
        int n;
        const cs_dep_t *dp = cs_program_preds(q, want[w].op, &n);
        cr_assert_eq(n, want[w].n, "op %d", want[w].op);
        for (int k = 0; k < n; k++) {
            cr_expect_eq(cs_dep_op(dp[k]), want[w].pred[k], "op %d dep %d", want[w].op, k);
            cr_expect_eq((int)cs_dep_kind(dp[k]), want[w].kind[k], "op %d dep %d", want[w].op, k);
        }
    }
    cs_program_free(q);
    cs_program_free(p);
}

/* Joins reached twice (a diamond) are walked once, and a long chain needs
 * no deep recursion; a program without joins gives NULL, an unfinalized one
 * an error. */
Test(program, without_joins_diamonds_chains_and_refusals)
{
    cs_error_t e;
    cs_program_t *p = cs_program_new(1), *q = (cs_program_t *)&e;
    int32_t a = cs_program_calc(p, 0, 1, 0), b = cs_program_calc(p, 0, 2, 0);
    int32_t j0 = cs_program_join(p, 0), ja = cs_program_join(p, 0), jb = cs_program_join(p, 0);
    cs_program_dep(p, j0, a, CS_DEP_AFTER);
    cs_program_dep(p, j0, b, CS_DEP_AFTER);
    cs_program_dep(p, ja, j0, CS_DEP_AFTER);
    cs_program_dep(p, jb, j0, CS_DEP_AFTER);
    int32_t prev = jb;
    for (int i = 0; i < 100000; i++) { /* a chain behind jb */
        int32_t j = cs_program_join(p, 0);
        cs_program_dep(p, j, prev, CS_DEP_AFTER);
        prev = j;
    }
    int32_t c = cs_program_calc(p, 0, 3, 0);
    cs_program_dep(p, c, ja, CS_DEP_AFTER);
    cs_program_dep(p, c, prev, CS_DEP_AFTER);
    cr_assert_eq(cs_program_without_joins(p, &q, &e), CS_ERR_INTERNAL, "not finalized");
    cr_assert_null(q);
    cr_assert_eq(cs_program_finalize(p, &e), CS_OK, "%s", e.msg);
    cr_assert_eq(cs_program_without_joins(p, &q, &e), CS_OK, "%s", e.msg);
    cr_assert_eq(cs_program_nops(q), 3);
    int n;
    const cs_dep_t *d = cs_program_preds(q, 2, &n);
    cr_assert_eq(n, 2, "a and b once each, got %d", n);
    cr_expect(cs_dep_op(d[0]) == 0 && cs_dep_op(d[1]) == 1);
    cs_program_free(q);
    cs_program_free(p);

    p = cs_program_new(1);
    cs_program_calc(p, 0, 1, 0);
    cr_assert_eq(cs_program_finalize(p, &e), CS_OK, "%s", e.msg);
    q = (cs_program_t *)&e;
    cr_assert_eq(cs_program_without_joins(p, &q, &e), CS_OK);
    cr_expect_null(q, "no join: the program itself is the one to use");
    cs_program_free(p);
}
