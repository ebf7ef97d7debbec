/*
 * test_lines.c - the line length limit of every line reader (core/lines.h,
 * issue 19 D3): a line of CS_LINES_MAX bytes is read, one byte more is an
 * error "FILE:LINE: line longer than 1048576 bytes" from the string,
 * mapped-file and stream sources and from the GOAL and TI readers, and
 * `collsim run --program /dev/zero` / `collsim replay /dev/zero` (one
 * endless line) end with that error, exit 2, fast, under a 1 GB
 * address-space limit (not under ASan, whose shadow memory needs more).
 */
#include "../app/cli_util.h"

#include <sys/resource.h>
#include <time.h>

#include "core/lines.h"
#include "io/goal.h"
#include "io/ti.h"

TestSuite(lines, .init = cli_setup, .fini = cli_teardown, .timeout = 120);

/* `before`, then a line of n 'x', then `after`. */
static char *text_with_line(const char *before, size_t n, const char *after)
{
    size_t a = strlen(before), b = strlen(after);
    char *s = malloc(a + n + 1 + b + 1);
    cr_assert_not_null(s);
    memcpy(s, before, a);
    memset(s + a, 'x', n);
    s[a + n] = '\n';
    memcpy(s + a + n + 1, after, b + 1);
    return s;
}

/* The results of reading every line of l, in order, up to the first <= 0. */
static int lengths(cs_lines_t *l, size_t *len, int max)
{
    cs_line_t ln;
    int n = 0, got = 0; /* max <= 0 never reads a line */
    while (n < max && (got = cs_lines_next(l, &ln)) > 0)
        len[n++] = ln.len;
    cr_assert_lt(n, max);
    return got < 0 ? got : n;
}

Test(lines, string_at_the_limit_and_one_past)
{
    size_t len[4];
    char *ok = text_with_line("a\n", CS_LINES_MAX, "b");
    cs_lines_t *l = cs_lines_open_string(ok, strlen(ok));
    cr_assert_eq(lengths(l, len, 4), 3);
    cr_assert_eq(len[1], CS_LINES_MAX);
    cs_lines_free(l);
    char *bad = text_with_line("a\n", CS_LINES_MAX + 1, "b");
    l = cs_lines_open_string(bad, strlen(bad));
    cr_assert_eq(lengths(l, len, 4), CS_LINES_TOO_LONG);
    cs_lines_free(l);
    /* a last line without '\n' counts the same */
    bad[2 + CS_LINES_MAX + 1] = '\0';
    l = cs_lines_open_string(bad, strlen(bad));
    cr_assert_eq(lengths(l, len, 4), CS_LINES_TOO_LONG);
    cs_lines_free(l);
    free(ok);
    free(bad);
}

Test(lines, file_and_stream_one_past)
{
    size_t len[4];
    char *bad = text_with_line("a\nb\n", CS_LINES_MAX + 1, "c\n");
    char *path = cli_write("long.txt", bad);
    cs_lines_t *l;
    cr_assert_eq(cs_lines_open_file(path, &l), CS_OK);
    cr_assert_eq(lengths(l, len, 4), CS_LINES_TOO_LONG);
    cs_lines_free(l);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    l = cs_lines_open_stream(f);
    cr_assert_eq(lengths(l, len, 4), CS_LINES_TOO_LONG);
    cs_lines_free(l);
    fclose(f);
    cs_error_t err;
    cr_assert_eq(cs_lines_error(CS_LINES_TOO_LONG, "t.txt", 2, &err), CS_ERR_PARSE);
    cr_assert_str_eq(err.msg, "t.txt:3: line longer than 1048576 bytes");
    free(path);
    free(bad);
}

Test(lines, goal_and_ti_readers_name_the_line)
{
    cs_program_t *p = NULL;
    cs_error_t err;
    char *goal = text_with_line("num_ranks 1\nrank 0 {\n", CS_LINES_MAX + 1, "}\n");
    char *path = cli_write("long.goal", goal), want[512];
    cr_assert_eq(cs_goal_read_file(path, &p, &err), CS_ERR_PARSE);
    cr_assert_null(p);
    snprintf(want, sizeof want, "%s:3: line longer than 1048576 bytes", path);
    cr_assert_str_eq(err.msg, want);
    free(path);

    char *ti = text_with_line("0 init\n1 init\n0 compute 10\n", CS_LINES_MAX + 1, "");
    path = cli_write("long.ti", ti);
    cs_ti_opts_t o;
    cs_ti_opts_default(&o);
    cr_assert_eq(cs_ti_read_file(path, &o, &p, NULL, &err), CS_ERR_PARSE);
    snprintf(want, sizeof want, "%s:4: line longer than 1048576 bytes", path);
    cr_assert_str_eq(err.msg, want);
    free(path);
    free(goal);
    free(ti);
}

/* Runs the CLI with at most 1 GB of address space (when the build allows
 * it) and checks the /dev/zero error, exit 2, in under 10 s. */
static void dev_zero(const char *const *args, const char *want)
{
#if !defined(__SANITIZE_ADDRESS__)
    struct rlimit lim = {1000000000, 1000000000};
    cr_assert_eq(setrlimit(RLIMIT_AS, &lim), 0);
#endif
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cli_out_t o = run_cli(args);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_assert_eq(o.status, 2, "status %d: %s", o.status, o.err);
    cr_assert_not_null(strstr(o.err, want), "stderr: %s", o.err);
    cr_assert_lt(t1.tv_sec - t0.tv_sec, 10);
    cli_out_free(&o);
}

Test(lines, run_program_dev_zero)
{
    const char *args[] = {"run", "--machine", "loggp:p=4", "--program", "/dev/zero", NULL};
    dev_zero(args, "collsim: /dev/zero:1: line longer than 1048576 bytes");
}

Test(lines, replay_dev_zero)
{
    const char *args[] = {"replay", "/dev/zero", "--machine", "loggp:p=4", NULL};
    dev_zero(args, "collsim: /dev/zero:1: line longer than 1048576 bytes");
}

Test(lines, edge_list_and_groq_schedule_dev_zero)
{
    const char *net[] = {"topo", "--machine", "net:file=/dev/zero,format=edgelist", NULL};
    dev_zero(net, "/dev/zero:1: line longer than 1048576 bytes");
    const char *groq[] = {"topo", "--machine", "groq:nodes=2,schedule=/dev/zero", NULL};
    dev_zero(groq, "/dev/zero:1: line longer than 1048576 bytes");
}
