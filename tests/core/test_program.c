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
