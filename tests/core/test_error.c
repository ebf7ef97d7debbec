/*
 * test_error.c - the error module: messages formatted from their own buffer
 * (issue 19, D1: "key 'clock': key 'clock': ust be positive"), prefixes, and
 * the exit statuses the docs promise (docs/cli.md).
 */
#include "core/error.h"

#include <criterion/criterion.h>
#include <string.h>

Test(error, set_from_own_message)
{
    cs_error_t err;
    cs_error_set(&err, CS_ERR_RANGE, "must be positive");
    /* the argument is the destination: formatted into a temporary first */
    cs_error_set(&err, err.code, "key 'clock': %s", err.msg);
    cr_assert_str_eq(err.msg, "key 'clock': must be positive");
    cr_assert_eq(err.code, CS_ERR_RANGE);
}

Test(error, set_from_pointer_into_message)
{
    cs_error_t err;
    cs_error_set(&err, CS_ERR_PARSE, "abc: def");
    cs_error_set(&err, CS_ERR_PARSE, "[%s] [%s]", err.msg + 5, err.msg);
    cr_assert_str_eq(err.msg, "[def] [abc: def]");
}

Test(error, prefix_from_own_message)
{
    cs_error_t err;
    cs_error_set(&err, CS_ERR_IO, "x.csv: no space");
    cs_error_prefix(&err, "%.5s again", err.msg);
    cr_assert_str_eq(err.msg, "x.csv again: x.csv: no space");
}

Test(error, prefix_truncates_without_overflow)
{
    cs_error_t err;
    char big[CS_ERROR_MSG_MAX + 100];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    cs_error_set(&err, CS_ERR_IO, "%s", big);
    cr_assert_eq(strlen(err.msg), CS_ERROR_MSG_MAX - 1);
    cs_error_prefix(&err, "head");
    cr_assert_eq(strncmp(err.msg, "head: aaa", 9), 0);
    cr_assert_lt(strlen(err.msg), (size_t)CS_ERROR_MSG_MAX);
}

Test(error, exit_statuses_as_documented)
{
    /* docs/cli.md's table */
    cr_assert_eq(cs_status_exit_code(CS_OK), 0);
    cr_assert_eq(cs_status_exit_code(CS_ERR_NOMEM), 2);
    cr_assert_eq(cs_status_exit_code(CS_ERR_DEADLOCK), 3);
    cr_assert_eq(cs_status_exit_code(CS_ERR_INTERNAL), 70);
    cr_assert_eq(cs_status_exit_code(CS_ERR_OOM), 71);
    cr_assert_eq(cs_status_exit_code(CS_ERR_CANCELLED), 130);
}
