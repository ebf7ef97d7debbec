/*
 * test_loop.c - benchmark loops (src/api/loop.h, issue 32) through the one
 * request path: a loop without overlap averages exactly the single call
 * (alpha-beta formulas), a pipelined chain overlaps by the hand-computed
 * period, --validate fails on one broken iteration, and bad counts are
 * refused with the option named, before anything proportional to them is
 * allocated.
 *
 * Expected times come from the alpha-beta model's formulas (lecture:
 * alpha + n beta per message, one send and one receive per node at a
 * time), never from a run of the code under test.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/loop.h"
#include "api/report.h"
#include "api/request.h"
#include "coll/coll.h"

/* alphabeta's defaults: alpha = 1 us, beta = 1 ns/byte, tick 1 ps */
#define ALPHA 1000000
#define BETA 1000

static void request_of(cs_request_t *r, const char *const *kv)
{
    cs_error_t err = {0};
    cs_request_init(r);
    for (int i = 0; kv[i]; i += 2)
        cr_assert_eq(cs_request_set(r, kv[i], kv[i + 1], &err), CS_OK, "%s=%s: %s", kv[i],
                     kv[i + 1], err.msg);
}
#define REQUEST(r, ...) request_of((r), (const char *const[]){__VA_ARGS__, NULL})

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

/* Ring allreduce on a ring of P: 2(P-1) steps of n/P bytes, every rank
 * finishing at the same tick, so iteration i+1 starts everywhere when i
 * ends: no overlap, and the average is the single call's formula. */
Test(loop, no_overlap_average_is_the_single_call)
{
    cs_request_t r;
    cs_request_run_t run;
    cs_error_t err = {0};
    const int64_t P = 8, n = 65536, N = 20, W = 5;
    const int64_t single = 2 * (P - 1) * (ALPHA + n / P * BETA);
    REQUEST(&r, "machine", "alphabeta:topo=ring,p=8", "coll", "allreduce", "algo", "ring",
            "bytes", "64KiB", "iterations", "default", "validate", "");
    cr_assert_eq(request_go(&r, &run, &err), CS_OK, "%s", err.msg);
    const cs_result_loop_t *lp = run.coll.loop;
    cr_assert_not_null(lp);
    cr_assert_eq(lp->iterations, N); /* nccl-tests: -n 20 */
    cr_assert_eq(lp->warmup, W);     /* -w 5 */
    cr_assert_eq(lp->first_ticks, single);
    cr_assert_eq(lp->avg_ticks, (double)single);
    cr_assert_eq(lp->timed_ticks, N * single);
    cr_assert_eq(lp->iteration_min_ticks, single);
    cr_assert_eq(lp->iteration_max_ticks, single);
    cr_assert_eq(run.result.finish, (N + W) * single);
    cr_assert(run.validated);
    for (int64_t i = 0; i < N + W; i++) {
        cr_assert_eq(lp->start[i], i * single, "iteration %lld", (long long)i);
        cr_assert_eq(lp->end[i], (i + 1) * single, "iteration %lld", (long long)i);
    }
    cs_request_run_destroy(&run);
}

/* A barrier between iterations: each iteration is the single call again,
 * and the timed loop adds the barriers.  The dissemination barrier on 8
 * ranks: log2(8) = 3 rounds of 1-byte tokens, alpha + 1 beta each (every
 * rank sends and receives once a round, on a ring of 8 the round's
 * distance-2^k messages take distinct channels per direction... checked
 * here only through its own single run, whose exactness is the barrier
 * suite's test). */
Test(loop, barrier_between_keeps_each_iteration_the_single_call)
{
    cs_request_t r, rb;
    cs_request_run_t run, bar;
    cs_error_t err = {0};
    const int64_t P = 8, n = 65536, N = 4;
    const int64_t single = 2 * (P - 1) * (ALPHA + n / P * BETA);
    REQUEST(&r, "machine", "alphabeta:topo=ring,p=8", "coll", "allreduce", "algo", "ring",
            "bytes", "64KiB", "iterations", "4", "warmup", "0", "between",
            "barrier:dissemination");
    cr_assert_eq(request_go(&r, &run, &err), CS_OK, "%s", err.msg);
    REQUEST(&rb, "machine", "alphabeta:topo=ring,p=8", "coll", "barrier", "algo",
            "dissemination");
    cr_assert_eq(request_go(&rb, &bar, &err), CS_OK, "%s", err.msg);
    const cs_result_loop_t *lp = run.coll.loop;
    cr_assert_str_eq(lp->between, "barrier:dissemination");
    cr_assert_eq(lp->iteration_min_ticks, single);
    cr_assert_eq(lp->iteration_max_ticks, single);
    cr_assert_eq(lp->timed_ticks, N * single + (N - 1) * bar.result.finish);
    cr_assert_gt(lp->avg_ticks, (double)single); /* the barriers are in nccl-tests' average */
    cs_request_run_destroy(&run);
    cs_request_run_destroy(&bar);
}

/* A pipelined chain broadcast on a line of P = 4 in k = 4 segments of
 * s = 4 KiB: a segment takes t = alpha + s beta; one call takes
 * (k + P - 2) t (the last segment leaves the root at k t and needs P - 2
 * more hops).  In a loop the root starts iteration i+1 when its own k
 * sends are done, at k t, while the tail still receives iteration i: the
 * period is k t (the root's send port), so iteration i ends at
 * (k + P - 2) t + i k t and N timed iterations after W warm-up ones take
 * (N k + P - 2) t: the average is k t + (P - 2) t / N, lower than the
 * single call by (P - 2) t (N - 1) / N. */
Test(loop, pipelined_chain_overlaps_by_the_hand_computed_period)
{
    const int64_t P = 4, k = 4, s = 4096, t = ALPHA + s * BETA;
    const int64_t counts[][2] = {{0, 4}, {3, 4}, {2, 10}};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        cs_request_t r;
        cs_request_run_t run;
        cs_error_t err = {0};
        char w[16], n[16];
        int64_t W = counts[c][0], N = counts[c][1];
        snprintf(w, sizeof w, "%lld", (long long)W);
        snprintf(n, sizeof n, "%lld", (long long)N);
        REQUEST(&r, "machine", "alphabeta:topo=line,p=4", "coll", "broadcast", "algo", "chain",
                "bytes", "16KiB", "opt", "seg=4KiB", "iterations", n, "warmup", w, "validate",
                "");
        cr_assert_eq(request_go(&r, &run, &err), CS_OK, "%s", err.msg);
        const cs_result_loop_t *lp = run.coll.loop;
        cr_assert_eq(lp->first_ticks, (k + P - 2) * t);
        cr_assert_eq(lp->timed_ticks, (N * k + P - 2) * t, "W=%lld N=%lld", (long long)W,
                     (long long)N);
        cr_assert_eq(lp->avg_ticks * (double)N, (double)((N * k + P - 2) * t));
        /* each iteration still spans one whole call: the overlap is between them */
        cr_assert_eq(lp->iteration_min_ticks, (k + P - 2) * t);
        cr_assert_eq(lp->iteration_max_ticks, (k + P - 2) * t);
        for (int64_t i = 0; i < W + N; i++)
            cr_assert_eq(lp->start[i], i * k * t, "iteration %lld", (long long)i);
        cr_assert(run.validated);
        cs_request_run_destroy(&run);
    }
}

/* ---- --validate catches one broken iteration -------------------------------- */

/* A broken allreduce of 2 ranks: rank 0 sends to 1, which reduces; rank 1
 * sends the sum back and rank 0 reduces it again instead of copying, so
 * rank 0 ends with its own contribution twice. */
static cs_program_t *broken_allreduce(const cs_coll_args_t *a)
{
    cs_program_t *p = cs_program_new(2);
    cs_coll_builder_t *b = cs_coll_builder_new(p, a);
    cs_error_t err;
    cs_coll_send(b, 0, 1, 0, a->bytes, 0);
    cs_coll_recv_reduce(b, 1, 0, 0, a->bytes, 0);
    cs_coll_wait_all(b);
    cs_coll_send(b, 1, 0, 0, a->bytes, 1);
    cs_coll_recv_reduce(b, 0, 1, 0, a->bytes, 1);
    cs_coll_builder_free(b);
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK, "%s", err.msg);
    return p;
}

/* Runs 1 warm-up + 2 timed iterations of allreduce/ring on 2 ranks with
 * iteration `odd_at` broken (-1: none); returns the status of the check. */
static int run_with_broken(int64_t odd_at, cs_error_t *err)
{
    cs_machine_t *m = NULL;
    cs_coll_args_t a = {CS_COLL_ALLREDUCE, 2, 1024, 0, 4096, NULL, NULL, 0};
    cs_coll_hints_t hints = {0};
    const cs_coll_algo_t *algo;
    cs_loop_parts_t parts = {0};
    cs_loop_t *l = NULL;
    cs_exec_opts_t opts;
    cs_exec_result_t res;
    int rc;
    a.hints = &hints;
    cr_assert_eq(cs_machine_new_in("alphabeta:topo=ring,p=2", NULL, &m, err), CS_OK);
    cr_assert_eq(cs_coll_find(CS_COLL_ALLREDUCE, "ring", &algo, err), CS_OK);
    cr_assert_eq(cs_coll_build(algo, &a, &parts.body, err), CS_OK, "%s", err->msg);
    if (odd_at >= 0) {
        parts.odd = broken_allreduce(&a);
        parts.odd_at = odd_at;
    }
    parts.warmup = 1;
    parts.iterations = 2;
    parts.max_ops = CS_LOOP_MAX_OPS;
    cr_assert_eq(cs_loop_new(&parts, &l, err), CS_OK, "%s", err->msg);
    cs_loop_validate(l, &a, 42);
    cs_exec_opts_default(&opts);
    cs_loop_exec_opts(l, &opts);
    cr_assert_eq(cs_request_exec(m, cs_loop_program(l), &opts, &res, err), CS_OK, "%s",
                 err->msg);
    rc = cs_loop_finish(l, &res, err);
    cs_exec_result_destroy(&res);
    cs_loop_free(l);
    cs_machine_free(m);
    return rc;
}

Test(loop, validate_fails_on_the_one_broken_iteration)
{
    cs_error_t err = {0};
    cr_assert_eq(run_with_broken(-1, &err), CS_OK, "%s", err.msg); /* the control */
    cr_assert_eq(run_with_broken(1, &err), CS_ERR_VALIDATE);
    cr_assert(strstr(err.msg, "iteration 2 of 3 (timed 1 of 2)"), "%s", err.msg);
    cr_assert_eq(run_with_broken(2, &err), CS_ERR_VALIDATE);
    cr_assert(strstr(err.msg, "iteration 3 of 3 (timed 2 of 2)"), "%s", err.msg);
    cr_assert_eq(run_with_broken(0, &err), CS_ERR_VALIDATE);
    cr_assert(strstr(err.msg, "(warm-up 1 of 1)"), "%s", err.msg);
}

/* ---- counts and bad values -------------------------------------------------- */

Test(loop, counts_of_nccl_tests_and_osu)
{
    cs_loop_spec_t s;
    int64_t w, n;
    cs_error_t err;
    cs_loop_spec_init(&s);
    cr_assert_eq(cs_loop_set(&s, "iterations", "default", &err), CS_OK);
    cs_loop_counts(&s, 1 << 20, &w, &n);
    cr_assert(w == 5 && n == 20); /* nccl-tests src/common.cu: -w 5 -n 20 */
    cr_assert_eq(cs_loop_set(&s, "warmup", "0", &err), CS_OK);
    cs_loop_counts(&s, 1 << 20, &w, &n);
    cr_assert(w == 0 && n == 20);
    cs_loop_spec_init(&s);
    cr_assert_eq(cs_loop_set(&s, "loop", "osu", &err), CS_OK);
    cs_loop_counts(&s, 8192, &w, &n);
    cr_assert(w == 100 && n == 1000); /* OSU: up to LARGE_MESSAGE_SIZE (8 KiB) */
    cs_loop_counts(&s, 8193, &w, &n);
    cr_assert(w == 10 && n == 100);
    cr_assert_eq(cs_loop_set(&s, "iterations", "7", &err), CS_OK);
    cs_loop_counts(&s, 8193, &w, &n);
    cr_assert(w == 10 && n == 7);
}

Test(loop, bad_values_name_the_option)
{
    static const char *const bad[][3] = {
        {"iterations", "0", "--iterations"},       {"iterations", "-3", "--iterations"},
        {"iterations", "1000001", "--iterations"}, {"iterations", "abc", "--iterations"},
        {"iterations", "99999999999999999999999", "--iterations"},
        {"warmup", "-1", "--warmup"},              {"warmup", "5000000", "--warmup"},
        {"between", "fence", "--between"},         {"between", "barrier:", "--between"},
        {"loop", "mpi", "--loop"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cs_request_t r;
        cs_error_t err = {0};
        cs_request_init(&r);
        cr_assert_eq(cs_request_set(&r, bad[i][0], bad[i][1], &err), CS_ERR_USAGE, "%s=%s",
                     bad[i][0], bad[i][1]);
        cr_assert(strstr(err.msg, bad[i][2]), "%s", err.msg);
        cr_assert_eq(r.loop.style, CS_LOOP_STYLE_NONE); /* unchanged */
    }
}

/* A million iterations of a 280-op allreduce would be 2.8e8 ops: refused
 * from the counts, before the loop is built. */
Test(loop, a_huge_loop_is_refused_before_it_is_built)
{
    cs_request_t r;
    cs_request_run_t run;
    cs_error_t err = {0};
    REQUEST(&r, "machine", "alphabeta:topo=ring,p=8", "coll", "allreduce", "algo", "ring",
            "bytes", "64KiB", "iterations", "1000000", "warmup", "1000000");
    cr_assert_eq(request_go(&r, &run, &err), CS_ERR_RANGE);
    cr_assert(strstr(err.msg, "--iterations") && strstr(err.msg, "limit"), "%s", err.msg);
    cr_assert_null(run.loop);
    cs_request_run_destroy(&run);
}

Test(loop, what_a_loop_cannot_go_with)
{
    cs_request_t r;
    cs_request_run_t run;
    cs_error_t err = {0};
    REQUEST(&r, "machine", "alphabeta:topo=ring,p=8", "coll", "allreduce", "bytes", "1KiB",
            "iterations", "3", "windowed", "");
    cr_assert_eq(cs_request_check_keys(&r, 0, &err), CS_ERR_USAGE);
    cr_assert(strstr(err.msg, "--windowed"), "%s", err.msg);
    REQUEST(&r, "machine", "alphabeta:topo=ring,p=8", "program", "x.goal", "iterations", "3");
    cr_assert_eq(cs_request_check_keys(&r, 0, &err), CS_ERR_USAGE);
    cr_assert(strstr(err.msg, "needs --coll"), "%s", err.msg);
    REQUEST(&r, "machine", "alphabeta:topo=ring,p=8", "coll", "allreduce", "bytes", "1KiB",
            "between", "barrier:nosuch");
    cr_assert_eq(request_go(&r, &run, &err), CS_ERR_USAGE);
    cr_assert(strstr(err.msg, "--between") && strstr(err.msg, "nosuch"), "%s", err.msg);
    cs_request_run_destroy(&run);
}

/* The JSON result carries the loop object with nccl-tests' average. */
Test(loop, json_has_the_loop_object)
{
    cs_request_t r;
    cs_request_run_t run;
    cs_error_t err = {0};
    char *buf = NULL;
    size_t len = 0;
    REQUEST(&r, "machine", "alphabeta:topo=ring,p=8", "coll", "allreduce", "algo", "ring",
            "bytes", "64KiB", "iterations", "2", "warmup", "1");
    cr_assert_eq(request_go(&r, &run, &err), CS_OK, "%s", err.msg);
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(cs_report_json(f, 0, run.machine, run.program, &run.result, 0, 0, &run.coll,
                                &err), CS_OK);
    fclose(f);
    /* 2 (P-1) (alpha + n/P beta) = 14 x 9.192 us */
    cr_assert(strstr(buf, "\"avg_ticks\": 128688000,"), "%s", buf);
    cr_assert(strstr(buf, "\"avg_seconds\": 0.0001286879"), "%s", buf); /* ticks x 1e-12 in double */
    cr_assert(strstr(buf, "\"iterations\": 2,") && strstr(buf, "\"warmup\": 1,"), "%s", buf);
    cr_assert(strstr(buf, "{\"iteration\": 2, \"warmup\": false, \"start_ticks\": 257376000, "
                          "\"end_ticks\": 386064000}"), "%s", buf);
    free(buf);
    cs_request_run_destroy(&run);
}

/* A body with joins (allreduce/gateway, core/program.h) keeps them in the
 * loop program, one set per iteration: copied as calcs of 0 they would run
 * through the CPU, at other times (tests/coll/test_join.c). */
Test(loop, a_body_keeps_its_joins)
{
    cs_request_t r, rs;
    cs_request_run_t run, single;
    cs_error_t err = {0};
    REQUEST(&rs, "machine", "alphabeta:topo=torus,rows=8,cols=8", "coll", "allreduce", "algo",
            "gateway", "bytes", "1KiB");
    cr_assert_eq(request_go(&rs, &single, &err), CS_OK, "%s", err.msg);
    REQUEST(&r, "machine", "alphabeta:topo=torus,rows=8,cols=8", "coll", "allreduce", "algo",
            "gateway", "bytes", "1KiB", "iterations", "2", "warmup", "1");
    cr_assert_eq(request_go(&r, &run, &err), CS_OK, "%s", err.msg);
    cr_assert_not_null(run.coll.loop);
    int64_t body = cs_program_njoins(single.program);
    cr_assert_gt(body, 0);
    cr_expect_eq(cs_program_njoins(run.program), 3 * body, "%lld joins in the loop, %lld per call",
                 (long long)cs_program_njoins(run.program), (long long)body);
    cs_request_run_destroy(&run);
    cs_request_run_destroy(&single);
}

/* A loop's iterations are copies of the body (cs_program_copy_op): its
 * messages keep their protocol and the program's latency for it, so each
 * iteration of NCCL's ring under LL with a latency of its own takes what
 * the single call takes (the body lost them once: the loop ran plain). */
Test(loop, iterations_keep_the_protocol)
{
    cs_request_t r, rs;
    cs_request_run_t run, one;
    cs_error_t err = {0};
    REQUEST(&r, "machine", "alphabeta:topo=ring,p=8", "coll", "allreduce", "algo", "nccl-ring",
            "bytes", "64KiB", "opt", "proto=ll", "opt", "proto_lat=2us", "iterations", "3",
            "warmup", "0");
    cr_assert_eq(request_go(&r, &run, &err), CS_OK, "%s", err.msg);
    REQUEST(&rs, "machine", "alphabeta:topo=ring,p=8", "coll", "allreduce", "algo", "nccl-ring",
            "bytes", "64KiB", "opt", "proto=ll", "opt", "proto_lat=2us");
    cr_assert_eq(request_go(&rs, &one, &err), CS_OK, "%s", err.msg);
    const cs_result_loop_t *lp = run.coll.loop;
    cr_assert_eq(lp->iteration_min_ticks, one.result.finish);
    cr_assert_eq(lp->iteration_max_ticks, one.result.finish);
    cr_assert_eq(run.result.proto_messages[CS_PROTO_LL], 3 * one.result.proto_messages[CS_PROTO_LL]);
    cr_assert_eq(run.result.proto_messages[CS_PROTO_LL], run.result.messages);
    cr_assert_eq(run.result.proto_lat[CS_PROTO_LL], 2000000); /* 2 us in 1 ps ticks */
    cs_request_run_destroy(&run);
    cs_request_run_destroy(&one);
}
