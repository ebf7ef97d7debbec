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
    cr_assert_eq(d[0].op, a);
    cr_assert_eq(d[0].kind, CS_DEP_AFTER);
    cr_assert_eq(d[1].op, b);
    cr_assert_eq(d[1].kind, CS_DEP_AFTER_START);
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
