/*
 * test_request.c - the request path (src/api/request.h, report.h) called
 * directly, as a library would: a valid request runs and reports what the
 * command line prints; every invalid field is an error code whose message
 * names the field; requests share no state (two in a row, the same result).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../app/cli_util.h"
#include "api/report.h"
#include "api/request.h"

TestSuite(request, .init = cli_setup, .fini = cli_teardown);

#define AB8 "alphabeta:topo=ring,p=8"

/* A request from key/value pairs (NULL-terminated); every set must work. */
static void request_of(cs_request_t *r, const char *const *kv)
{
    cs_error_t err = {0};
    cs_request_init(r);
    for (int i = 0; kv[i]; i += 2)
        cr_assert_eq(cs_request_set(r, kv[i], kv[i + 1], &err), CS_OK, "%s=%s: %s", kv[i],
                     kv[i + 1], err.msg);
}
#define REQUEST(r, ...) request_of((r), (const char *const[]){__VA_ARGS__, NULL})

/* prepare -> build -> run; returns the status, err filled on failure. */
static int request_go(const cs_request_t *r, cs_request_run_t *run, cs_error_t *err)
{
    cs_exec_opts_t opts;
    int rc;
    cs_request_run_init(run);
    if ((rc = cs_request_prepare(r, run, err)) || (rc = cs_request_build(r, run, err)))
        return rc;
    cs_request_exec_opts(r, run, &opts);
    return cs_request_run(run, &opts, err);
}

/* The summary of `collsim run --no-timing` written by the report module
 * into memory (the lines cmd_run.c prints, in its order). */
static char *request_summary(const cs_request_t *r, const cs_request_run_t *run)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    cs_report_machine(f, run->machine, &run->result, r->mode, r->queue);
    cs_report_program(f, cs_program_source(run->program), run->program);
    cs_report_collective(f, &run->coll, run->validated);
    cs_report_result(f, run->machine, &run->result);
    cs_report_bandwidth(f, run->machine, &run->coll, &run->result);
    cs_report_wall(f, &run->result, 0);
    cs_report_channels(f, run->machine, &run->result);
    fclose(f);
    return buf;
}

static char *request_json(const cs_request_run_t *run)
{
    char *buf = NULL;
    size_t len = 0;
    cs_error_t err = {0};
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    cr_assert_eq(cs_report_json(f, 0, run->machine, run->program, &run->result, run->validated,
                                0, run->is_coll ? &run->coll : NULL, &err),
                 CS_OK, "%s", err.msg);
    fclose(f);
    return buf;
}

Test(request, valid_request_matches_the_command_line)
{
    cs_request_t r;
    cs_request_run_t run;
    cs_error_t err = {0};
    REQUEST(&r, "machine", AB8, "coll", "allreduce", "algo", "ring", "bytes", "1KiB",
            "validate", "1");
    cr_assert_eq(request_go(&r, &run, &err), CS_OK, "%s", err.msg);
    cr_assert(run.validated);

    cli_out_t o = RUN("run", "--machine", AB8, "--coll", "allreduce", "--algo", "ring", "--bytes",
                      "1KiB", "--validate", "--no-timing");
    cr_assert_eq(o.status, 0, "%s", o.err);
    char line[96];
    char buf[64];
    cs_units_format_seconds((double)run.result.finish * run.machine->tick_seconds, buf,
                            sizeof buf);
    snprintf(line, sizeof line, "finish    %lld ticks = %s\n", (long long)run.result.finish, buf);
    ASSERT_HAS(o.out, line);
    /* the whole summary, line for line */
    char *mine = request_summary(&r, &run);
    cr_assert_str_eq(mine, o.out);
    free(mine);
    cli_out_free(&o);

    /* and the JSON, byte for byte */
    char *json = request_json(&run);
    o = RUN("run", "--machine", AB8, "--coll", "allreduce", "--algo", "ring", "--bytes", "1KiB",
            "--validate", "--no-timing", "--json", "-");
    cr_assert_eq(o.status, 0, "%s", o.err);
    cr_assert_str_eq(json, o.out);
    free(json);
    cli_out_free(&o);
    cs_request_run_destroy(&run);
}

/* A field's value that is none: the code and the option named. */
static void expect_bad_field(const char *key, const char *value, int code, const char *named)
{
    cs_request_t r;
    cs_error_t err = {0};
    cs_request_init(&r);
    cs_request_t before = r;
    cr_assert_eq(cs_request_set(&r, key, value, &err), code, "%s=%s", key, value);
    cr_assert_not_null(strstr(err.msg, named), "%s=%s: \"%s\" does not name %s", key, value,
                       err.msg, named);
    cr_assert_eq(memcmp(&r, &before, sizeof r), 0, "%s=%s changed the request", key, value);
}

Test(request, each_invalid_field_is_named)
{
    expect_bad_field("bytes", "lots", CS_ERR_USAGE, "--bytes");
    expect_bad_field("bytes", "-4", CS_ERR_USAGE, "--bytes");
    expect_bad_field("root", "first", CS_ERR_USAGE, "--root");
    expect_bad_field("ranks", "0", CS_ERR_USAGE, "--ranks: need at least 1 rank, got 0");
    expect_bad_field("ranks", "many", CS_ERR_USAGE, "--ranks");
    expect_bad_field("opt", "seg", CS_ERR_USAGE, "--opt 'seg': expected KEY=VALUE");
    expect_bad_field("opt", "a=1,b=2", CS_ERR_USAGE, "--opt 'a=1,b=2'");
    expect_bad_field("mode", "warp", CS_ERR_USAGE, "--mode");
    expect_bad_field("queue", "nope", CS_ERR_USAGE, "--queue");
    expect_bad_field("colour", "blue", CS_ERR_USAGE, "'colour'");
}

/* A request whose fields parse but do not fit the machine: prepare fails
 * with the option named, and the machine stays for the caller to name. */
static void expect_bad_prepare(const char *const *kv, int code, const char *named)
{
    cs_request_t r;
    cs_request_run_t run;
    cs_error_t err = {0};
    request_of(&r, kv);
    cs_request_run_init(&run);
    int rc = cs_request_prepare(&r, &run, &err);
    if (rc == CS_OK)
        rc = cs_request_build(&r, &run, &err);
    cr_assert_eq(rc, code, "%s: got %d (%s)", named, rc, err.msg);
    cr_assert_not_null(strstr(err.msg, named), "\"%s\" does not name %s", err.msg, named);
    cs_request_run_destroy(&run);
}
#define BAD_PREPARE(code, named, ...)                                                          \
    expect_bad_prepare((const char *const[]){__VA_ARGS__, NULL}, (code), (named))

Test(request, invalid_requests_name_the_option)
{
    BAD_PREPARE(CS_ERR_RANGE, "--root 8 is outside ranks 0..7", "machine", AB8, "coll",
                "broadcast", "bytes", "10", "root", "8");
    BAD_PREPARE(CS_ERR_RANGE, "--ranks 9", "machine", AB8, "coll", "broadcast", "bytes", "10",
                "ranks", "9");
    BAD_PREPARE(CS_ERR_USAGE, "--root: allreduce has no root", "machine", AB8, "coll",
                "allreduce", "bytes", "10", "root", "0");
    BAD_PREPARE(CS_ERR_USAGE, "missing --bytes N for broadcast", "machine", AB8, "coll",
                "broadcast");
    BAD_PREPARE(CS_ERR_USAGE, "--order snake", "machine", AB8, "coll", "broadcast", "bytes",
                "10", "order", "snake");
    BAD_PREPARE(CS_ERR_IO, "--order 'no-such-file'", "machine", AB8, "coll", "broadcast", "bytes",
                "10", "order", "no-such-file");
    BAD_PREPARE(CS_ERR_USAGE, "--machine", "coll", "broadcast", "bytes", "10");
}

Test(request, two_requests_in_a_row_give_the_same_result)
{
    cs_request_t r;
    cs_request_run_t a, b;
    cs_error_t err = {0};
    REQUEST(&r, "machine", "alphabeta:topo=torus,rows=4,cols=4", "coll", "allgather", "bytes",
            "4KiB", "order", "snake", "mode", "fluid");
    cr_assert_eq(request_go(&r, &a, &err), CS_OK, "%s", err.msg);
    /* another request in between: nothing of it may leak into the next */
    cs_request_t other;
    cs_request_run_t c;
    REQUEST(&other, "machine", "cerebras:rows=4,cols=4", "coll", "reduce", "bytes", "64",
            "root", "3", "validate", "1");
    cr_assert_eq(request_go(&other, &c, &err), CS_OK, "%s", err.msg);
    cs_request_run_destroy(&c);
    cr_assert_eq(request_go(&r, &b, &err), CS_OK, "%s", err.msg);

    cr_assert_eq(a.result.finish, b.result.finish);
    cr_assert_eq(a.result.events, b.result.events);
    cr_assert_eq(a.result.messages, b.result.messages);
    char *ja = request_json(&a), *jb = request_json(&b);
    cr_assert_str_eq(ja, jb);
    free(ja);
    free(jb);
    cs_request_run_destroy(&a);
    cs_request_run_destroy(&b);
}

Test(request, a_program_request_runs_a_goal_file)
{
    char *prog = cli_write("p.goal", "num_ranks 2\nrank 0 {\nl1: send 100b to 1\n}\n"
                                     "rank 1 {\nl1: recv 100b from 0\n}\n");
    cs_request_t r;
    cs_request_run_t run;
    cs_error_t err = {0};
    REQUEST(&r, "machine", AB8, "program", prog);
    cr_assert_eq(request_go(&r, &run, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(run.is_coll, 0);
    cr_assert_gt(run.result.finish, 0);
    cs_request_run_destroy(&run);

    REQUEST(&r, "machine", "alphabeta:topo=ring,p=1", "program", prog);
    cr_assert_eq(request_go(&r, &run, &err), CS_ERR_RANGE);
    cr_assert_not_null(strstr(err.msg, "program has 2 ranks"), "%s", err.msg);
    cs_request_run_destroy(&run);
    free(prog);
}

/* Issue 34: --validate runs windowed by default (the run's generator is
 * kept, and the summary and JSON are the whole run's), falls back to the
 * whole program where the window cannot go (a dependency on a later op),
 * and --windowed --validate is accepted. */
Test(request, validate_runs_windowed)
{
    cs_request_t r;
    cs_request_run_t w, h;
    cs_error_t err = {0};
    REQUEST(&r, "machine", "alphabeta:topo=ring,p=12", "coll", "allreduce", "algo", "ring",
            "bytes", "1000", "validate", "1");
    cr_assert_eq(request_go(&r, &w, &err), CS_OK, "%s", err.msg);
    cr_expect_not_null(w.gen, "validated without a window");
    cr_expect(w.validated);
    cr_assert_eq(cs_request_set(&r, "whole", "1", &err), CS_OK);
    cr_assert_eq(request_go(&r, &h, &err), CS_OK, "%s", err.msg);
    cr_expect_null(h.gen);
    cr_expect(h.validated);
    char *sw = request_summary(&r, &w), *sh = request_summary(&r, &h);
    char *jw = request_json(&w), *jh = request_json(&h);
    cr_expect_str_eq(sw, sh);
    cr_expect_str_eq(jw, jh);
    free(sw);
    free(sh);
    free(jw);
    free(jh);
    cs_request_run_destroy(&w);
    cs_request_run_destroy(&h);

    REQUEST(&r, "machine", "alphabeta:topo=ring,p=8", "coll", "allgather", "algo",
            "cns-two-way", "bytes", "100", "validate", "1");
    cr_assert_eq(request_go(&r, &w, &err), CS_OK, "%s", err.msg);
    cr_expect_null(w.gen, "cns-two-way depends on later ops: whole");
    cr_expect(w.validated);
    cs_request_run_destroy(&w);
    cr_assert_eq(cs_request_set(&r, "windowed", "1", &err), CS_OK);
    cr_expect_eq(request_go(&r, &w, &err), CS_ERR_USAGE);
    cr_expect(strstr(err.msg, "--whole"), "%s", err.msg);
    cs_request_run_destroy(&w);
}

/* Issue 34: a whole program longer than the limit is refused before it is
 * built, the algorithm named once. */
Test(request, op_count_refused_before_building)
{
    cs_request_t r;
    cs_request_run_t run;
    cs_error_t err = {0};
    REQUEST(&r, "machine", "alphabeta:topo=ring,p=16384", "coll", "allreduce", "algo", "ring",
            "bytes", "1MiB", "whole", "1");
    cr_assert_eq(request_go(&r, &run, &err), CS_ERR_NOMEM);
    cr_expect(strstr(err.msg, "allreduce/ring: 1342095360 ops") == err.msg, "%s", err.msg);
    cr_expect_null(strstr(err.msg + 1, "allreduce/ring"), "named twice: %s", err.msg);
    cr_expect(strstr(err.msg, "windowed"), "%s", err.msg);
    cs_request_run_destroy(&run);
}

/* Issue 34: a program whose ops are all ready at time 0 is whole after the
 * probe's first step; above REQUEST_WINDOW_MIN_REBUILD (2^16) ops the
 * default rebuilds it whole (the window would hold every op and its lists
 * besides: the full wafer's reduce took 1,181 MB windowed, 1,005 MB whole),
 * below it keeps the window; both give the forced window's result. */
Test(request, all_ready_at_zero_runs_whole)
{
    static const char *const shapes[] = {"cerebras:rows=150,cols=150", /* 67,497 ops */
                                         "cerebras:rows=20,cols=20"};  /* 1,197 ops */
    for (int i = 0; i < 2; i++) {
        cs_request_t r;
        cs_request_run_t d, w;
        cs_error_t err = {0};
        REQUEST(&r, "machine", shapes[i], "coll", "reduce", "algo", "2d-two-phase", "bytes",
                "4096");
        cr_assert_eq(request_go(&r, &d, &err), CS_OK, "%s", err.msg);
        if (i == 0)
            cr_expect_null(d.gen, "%s: every op ready at 0 and 67,497 ops, kept windowed",
                           shapes[i]);
        else
            cr_expect_not_null(d.gen, "%s: a small program rebuilt whole", shapes[i]);
        cr_assert_eq(cs_request_set(&r, "windowed", "1", &err), CS_OK);
        cr_assert_eq(request_go(&r, &w, &err), CS_OK, "%s", err.msg);
        cr_expect_not_null(w.gen);
        char *jd = request_json(&d), *jw = request_json(&w);
        cr_expect_str_eq(jd, jw);
        free(jd);
        free(jw);
        cs_request_run_destroy(&d);
        cs_request_run_destroy(&w);
    }
}
