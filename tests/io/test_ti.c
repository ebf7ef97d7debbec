/*
 * test_ti.c - the SimGrid time-independent trace reader (io/ti.h): the ops
 * and dependencies each action becomes, timing of the MPI semantics on the
 * alpha-beta machine (alpha = 1 us, beta = 1 ns per byte, 1 ps ticks),
 * collective expansion and matching across ranks, and every error with its
 * FILE:LINE.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "coll/coll.h"
#include "engine/exec.h"
#include "io/ti.h"
#include "machines/machine.h"

#define US 1000000LL /* ticks per microsecond (1 ps ticks) */

static cs_program_t *read_ok(const char *text, cs_ti_info_t *info)
{
    cs_ti_opts_t o;
    cs_program_t *p;
    cs_error_t err;
    cs_ti_opts_default(&o);
    int rc = cs_ti_read_string(text, "t.ti", &o, &p, info, &err);
    cr_assert_eq(rc, CS_OK, "%s", err.msg);
    return p;
}

/* The error message of reading `text` (asserting it fails with `code`). */
static const char *read_err(const char *text, int code)
{
    static cs_error_t err;
    cs_ti_opts_t o;
    cs_program_t *p = (cs_program_t *)1;
    cs_ti_opts_default(&o);
    int rc = cs_ti_read_string(text, "t.ti", &o, &p, NULL, &err);
    cr_assert_eq(rc, code, "expected status %d, got %d: %s", code, rc, rc ? err.msg : "");
    cr_assert_null(p);
    return err.msg;
}

#define EXPECT_ERR(text, needle)                                                              \
    do {                                                                                      \
        const char *m_ = read_err(text, CS_ERR_PARSE);                                        \
        cr_expect(strstr(m_, needle) != NULL, "expected '%s' in: %s", needle, m_);            \
    } while (0)

/* Runs p on `spec`; returns the finish time and fills ends[] (op ends). */
static cs_tick_t run(const char *spec, cs_program_t *p, cs_tick_t *ends)
{
    cs_machine_t *m;
    cs_error_t err;
    cs_exec_env_t env;
    cs_exec_opts_t o;
    cs_exec_result_t r;
    cr_assert_eq(cs_machine_new(spec, &m, &err), CS_OK, "%s", err.msg);
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    o.record_op_times = 1;
    cr_assert_eq(cs_exec_run(&env, p, &o, &r, &err), CS_OK, "%s", err.msg);
    cs_tick_t t = r.finish;
    if (ends)
        for (int32_t i = 0; i < cs_program_nops(p); i++)
            ends[i] = r.ops[i].end;
    cs_exec_result_destroy(&r);
    cs_machine_free(m);
    return t;
}

#define AB "alphabeta:topo=line,p=4"

TestSuite(ti, .timeout = 120);

Test(ti, point_to_point_ops)
{
    cs_ti_info_t info;
    cs_program_t *p = read_ok("# a comment\n"
                              "0 init\n"
                              "1 init 1\n"
                              "\n"
                              "0 send 1 7 100\n"           /* bytes by default */
                              "1 recv 0 7 100 6\n"
                              "1 isend 0 3 10\n"          /* doubles after init 1 */
                              "0 Irecv 1 3 80 2\n"        /* chars; case-insensitive */
                              "0 wait 1 0 3\n"
                              "1 waitAll\n"
                              "0 finalize\n1 finalize\n",
                              &info);
    cr_expect_eq(cs_program_nranks(p), 2);
    cr_expect_eq(cs_program_nops(p), 4);
    cr_expect_eq(info.actions, 10);
    cr_expect_eq(info.files, 1);
    cr_expect_eq(cs_program_time_unit(p), 1e-9);
    /* ops in trace order per rank */
    const cs_op_t *s = cs_program_op(p, 0), *r = cs_program_op(p, 1);
    const cs_op_t *is = cs_program_op(p, 2), *ir = cs_program_op(p, 3);
    cr_expect_eq(s->kind, CS_OP_SEND);
    cr_expect_eq(s->bytes, 100);
    cr_expect_eq(s->tag, 7);
    cr_expect_eq(cs_program_line(p, 0), 5);
    cr_expect_eq(r->kind, CS_OP_RECV);
    cr_expect_eq(is->bytes, 80);
    cr_expect_eq(is->rank, 1);
    cr_expect_eq(ir->bytes, 80);
    cr_expect_eq(ir->peer, 1);
    /* the irecv follows the blocking send's completion */
    int n;
    const cs_dep_t *d = cs_program_preds(p, 3, &n);
    cr_assert_eq(n, 1);
    cr_expect_eq(cs_dep_op(d[0]), 0);
    cr_expect_eq(cs_dep_kind(d[0]), CS_DEP_AFTER);
    cs_program_free(p);
}

/* blocking: the compute waits for the send (alpha + 1000 beta); non-
 * blocking: it overlaps, and the wait makes the next action follow both. */
Test(ti, blocking_and_nonblocking_timing)
{
    cs_tick_t ends[16];
    cs_program_t *p = read_ok("0 send 1 0 1000\n0 compute 5000\n1 recv 0 0 1000\n", NULL);
    cr_expect_eq(run(AB, p, ends), 2 * US + 5 * US);
    cs_program_free(p);
    p = read_ok("0 isend 1 0 1000\n0 compute 5000\n0 wait 0 1 0\n0 compute 1000\n"
                "1 recv 0 0 1000\n", NULL);
    cr_expect_eq(run(AB, p, ends), 5 * US + 1 * US);
    cs_program_free(p);
    p = read_ok("0 isend 1 0 1000\n0 compute 500\n0 wait 0 1 0\n0 compute 1000\n"
                "1 recv 0 0 1000\n", NULL);
    cr_expect_eq(run(AB, p, ends), 2 * US + 1 * US); /* the wait outlasts the compute */
    cs_program_free(p);
    /* waitall covers every outstanding request */
    p = read_ok("0 isend 1 0 1000\n0 isend 2 0 1000\n0 waitall\n0 compute 1000\n"
                "1 recv 0 0 1000\n2 recv 0 0 1000\n", NULL);
    cr_expect_eq(run(AB, p, ends), 2 * 2 * US + 1 * US); /* one send port: in turn */
    cs_program_free(p);
    /* sleep is seconds; sendRecv both ways at once */
    p = read_ok("0 sleep 0.000003\n0 sendRecv 1000 1 1000 1\n"
                "1 sendRecv 1000 0 1000 0\n", NULL);
    cr_expect_eq(run(AB, p, ends), 3 * US + 2 * US);
    cs_program_free(p);
}

Test(ti, flops_rate)
{
    cs_ti_opts_t o;
    cs_program_t *p;
    cs_error_t err;
    cs_ti_opts_default(&o);
    o.flops_per_second = 2e9;
    cr_assert_eq(cs_ti_read_string("0 compute 4000\n", NULL, &o, &p, NULL, &err), CS_OK);
    cr_expect_eq(cs_program_op(p, 0)->ticks, 2000); /* ns */
    cr_expect_eq(run(AB, p, NULL), 2 * US);
    cs_program_free(p);
    o.flops_per_second = 0;
    cr_expect_eq(cs_ti_read_string("0 compute 4000\n", NULL, &o, &p, NULL, &err), CS_ERR_RANGE);
}

/* A collective is expanded with the chosen algorithm in its own tag space,
 * between what the rank did before and after it. */
Test(ti, collectives_expand)
{
    cs_ti_info_t info;
    const char *text = "0 compute 1000\n"
                       "0 allreduce 1000 0 6\n1 allreduce 1000 0 6\n"
                       "2 allreduce 1000 0 6\n3 allreduce 1000 0 6\n"
                       "0 bcast 10 2\n1 bcast 10 2\n2 bcast 10 2\n3 bcast 10 2\n"
                       "3 compute 1000\n";
    cs_program_t *p = read_ok(text, &info);
    cr_expect_eq(info.calls[CS_COLL_ALLREDUCE], 1);
    cr_expect_eq(info.calls[CS_COLL_BROADCAST], 1);
    cr_expect_gt(info.coll_ops, 0);
    int tagged = 0;
    for (int32_t i = 0; i < cs_program_nops(p); i++) {
        const cs_op_t *o = cs_program_op(p, i);
        if (o->kind == CS_OP_SEND || o->kind == CS_OP_RECV) {
            cr_expect_geq(o->tag, CS_TI_COLL_TAG_BASE);
            tagged++;
        }
    }
    cr_expect_gt(tagged, 0);
    /* the time: compute, then the suite's allreduce/ring of 1000 bytes on 4
     * ranks and binomial broadcast of 10 from rank 2, then a compute */
    cs_tick_t t = run(AB, p, NULL);
    cs_program_free(p);
    cs_ti_opts_t o;
    cs_ti_opts_default(&o);
    cr_assert_eq(cs_coll_find(CS_COLL_ALLREDUCE, "rdb", &o.algo[CS_COLL_ALLREDUCE], NULL), CS_OK);
    cs_error_t err;
    cr_assert_eq(cs_ti_read_string(text, NULL, &o, &p, NULL, &err), CS_OK, "%s", err.msg);
    cr_expect_neq(run(AB, p, NULL), t, "another algorithm, another time");
    cs_program_free(p);
    cr_expect_gt(t, 2 * US);
}

/* The reduce's flops run after the collective on every rank. */
Test(ti, reduce_flops_after_the_collective)
{
    cs_program_t *p = read_ok("0 reduce 0 3000\n1 reduce 0 3000\n", NULL);
    cr_expect_eq(run(AB, p, NULL), 3 * US);
    cs_program_free(p);
    /* a barrier on one rank is nothing but its place in the order */
    p = read_ok("0 compute 1000\n0 barrier\n0 compute 1000\n", NULL);
    cr_expect_eq(run(AB, p, NULL), 2 * US);
    cs_program_free(p);
}

static int cb_calls, cb_P;
static const int32_t cb_ring[3] = {2, 0, 1};
static int cb_prepare(void *ctx, int P, const cs_coll_hints_t **hints, cs_error_t *err)
{
    static cs_coll_hints_t h;
    (void)ctx, (void)err;
    cb_calls++;
    cb_P = P;
    memset(&h, 0, sizeof h);
    h.ring = cb_ring;
    *hints = &h;
    return CS_OK;
}

static int cb_fail(void *ctx, int P, const cs_coll_hints_t **hints, cs_error_t *err)
{
    (void)ctx, (void)hints;
    return cs_error_set(err, CS_ERR_RANGE, "no room for %d ranks", P);
}

/* The hints come from the caller once P is known, before any expansion. */
Test(ti, hints_callback)
{
    cs_ti_opts_t o;
    cs_program_t *p;
    cs_error_t err;
    cs_ti_opts_default(&o);
    o.prepare = cb_prepare;
    const char *text = "0 allgather 8 8\n1 allgather 8 8\n2 allgather 8 8\n";
    cr_assert_eq(cs_ti_read_string(text, NULL, &o, &p, NULL, &err), CS_OK, "%s", err.msg);
    cr_expect_eq(cb_calls, 1);
    cr_expect_eq(cb_P, 3);
    /* the ring algorithm follows the hint: rank 2 sends to 0 first */
    int found = 0;
    for (int32_t i = 0; i < cs_program_nops(p) && !found; i++) {
        const cs_op_t *op = cs_program_op(p, i);
        if (op->kind == CS_OP_SEND && op->rank == 2) {
            found = 1;
            cr_expect_eq(op->peer, 0);
        }
    }
    cr_expect(found);
    cs_program_free(p);
    o.prepare = cb_fail;
    cr_expect_eq(cs_ti_read_string(text, NULL, &o, &p, NULL, &err), CS_ERR_RANGE);
    cr_expect(strstr(err.msg, "no room for 3 ranks"), "%s", err.msg);
    cr_expect_null(p);
}

Test(ti, first_pass_words_as_the_tokenizer_splits_them)
{
    cs_program_t *p = NULL;
    cs_error_t err;
    cs_ti_opts_t o;
    cs_ti_opts_default(&o);
    /* tabs, CR, a comment and a blank line around the ranks: 3 ranks */
    cr_assert_eq(cs_ti_read_string("2\tinit\r\n # rank 9 init\n\n\t0 init\n1  init\r\n", "t.ti",
                                   &o, &p, NULL, &err),
                 CS_OK, "%s", err.msg);
    cr_expect_eq(cs_program_nranks(p), 3);
    cs_program_free(p);
}

Test(ti, errors)
{
    EXPECT_ERR("0 send 1\n", "t.ti:1: send takes 2 to 4 arguments");
    EXPECT_ERR("0 init\n0 send 1 7 12x\n1 init\n", "t.ti:2: count '12x' is not a count");
    EXPECT_ERR("0 send 1 7 -4\n1 init\n", "t.ti:1: count '-4' is negative");
    EXPECT_ERR("0 send 1 7 4 9\n1 init\n", "t.ti:1: datatype '9' is not one of");
    EXPECT_ERR("0 send 5 7 4\n1 recv 0 7 4\n", "t.ti:1: destination rank 5 is out of range; "
                                               "expected a rank in 0..1 (the trace has 2 ranks)");
    EXPECT_ERR("0 send 1 1073741824 40\n1 init\n", "tag 1073741824 is too large");
    EXPECT_ERR("x send 1 7 4\n", "t.ti:1: 'x' is not a rank");
    EXPECT_ERR("0\n", "t.ti:1: rank 0 without an action");
    EXPECT_ERR("0 init\n0 dance\n", "t.ti:2: unknown action 'dance'; valid actions: init,");
    EXPECT_ERR("0 gatherv 1 1 1\n", "action 'gatherv' is not supported");
    EXPECT_ERR("0 compute fast\n", "t.ti:1: flops 'fast' is not a number");
    EXPECT_ERR("0 compute -1\n", "flops '-1' is negative");
    EXPECT_ERR("0 init\n0 wait 0 1 3\n1 init\n", "t.ti:2: wait 0 1 3: rank 0 has no outstanding "
                                                 "isend with destination 1 and tag 3");
    EXPECT_ERR("0 wait 1 1 3\n1 init\n", "names neither it as source nor as destination");
    /* pairing */
    EXPECT_ERR("0 send 1 7 4\n1 recv 0 7 4\n1 recv 0 7 4\n",
               "t.ti:3: rank 1: recv from rank 0 (tag 7, 4 bytes) has no matching send");
    EXPECT_ERR("0 send 1 7 4\n0 send 1 8 4\n1 recv 0 7 4\n",
               "t.ti:2: rank 0: send to rank 1 (tag 8, 4 bytes) is never received");
    EXPECT_ERR("0 isend 1 7 40\n1 recv 0 7 4\n0 waitall\n",
               "t.ti:2: rank 1: recv of 4 bytes from rank 0 (tag 7) is smaller than the "
               "40-byte message it takes (t.ti:1)");
    /* collectives across ranks */
    EXPECT_ERR("0 barrier\n1 bcast 4\n", "t.ti:2: rank 1's collective call #1 is broadcast of "
                                         "4 bytes, root 0 but rank 0's (t.ti:1) is barrier");
    EXPECT_ERR("0 bcast 4 1\n1 bcast 4 0\n", "t.ti:2: rank 1's collective call #1 is broadcast "
                                             "of 4 bytes, root 0 but rank 0's (t.ti:1) is "
                                             "broadcast of 4 bytes, root 1");
    EXPECT_ERR("0 barrier\n1 barrier\n0 allreduce 8 0\n",
               "t.ti:3: rank 0's collective call #2 (allreduce of 8 bytes) is never matched on "
               "rank 1");
    EXPECT_ERR("0 bcast 4 7\n1 bcast 4 7\n", "t.ti:1: root 7 is out of range");
    EXPECT_ERR("0 reducescatter 4 5 0\n1 reducescatter 4 5 0\n", "unequal receive counts");
    EXPECT_ERR("0 reducescatter 4 0\n1 reducescatter 4 0\n", "needs 2 receive counts");
    /* binary and empty */
    const char bin[] = {'0', ' ', 'i', 'n', 'i', 't', '\n', 1, 2, 3, '\n', 0};
    EXPECT_ERR(bin, "t.ti:2: found the control byte 0x01");
    /* the first pass reads each line's rank in place: the word ends at a
     * space, tab or CR, and the bytes are checked on every line */
    EXPECT_ERR("0 init\n1x init\n", "t.ti:2: '1x' is not a rank");
    EXPECT_ERR("0 init\n 1x\tinit\n", "t.ti:2: '1x' is not a rank");
    EXPECT_ERR("0 init\n67108864 init\n", "t.ti:2: rank 67108864 is too large; at most 67108864");
    EXPECT_ERR("0 init\n1 init\n1 ini\x7f\n", "t.ti:3: found the control byte 0x7f at column 6");
    EXPECT_ERR("", "t.ti: empty file");
    EXPECT_ERR("# nothing\n\n", "no action in the file");
}

Test(ti, algorithm_errors_name_the_call)
{
    cs_ti_opts_t o;
    cs_program_t *p;
    cs_error_t err;
    cs_spec_t opts;
    cs_ti_opts_default(&o);
    cr_assert_eq(cs_coll_find(CS_COLL_BROADCAST, "chain", &o.algo[CS_COLL_BROADCAST], NULL),
                 CS_OK);
    cr_assert_eq(cs_spec_parse("opts:nosuchkey=3", &opts, &err), CS_OK);
    o.algo_opts[CS_COLL_BROADCAST] = &opts;
    int rc = cs_ti_read_string("0 init\n0 bcast 4\n1 bcast 4\n", NULL, &o, &p, NULL, &err);
    cr_expect_neq(rc, CS_OK);
    cr_expect(strstr(err.msg, "<string>:2: broadcast of 4 bytes, root 0 with broadcast/chain on "
                              "2 ranks") && strstr(err.msg, "nosuchkey"),
              "%s", err.msg);
    cs_spec_destroy(&opts);
}

/* A trace with a test: a later wait that finds nothing is accepted (the
 * test may have completed it, as SimGrid assumes). */
Test(ti, test_then_wait)
{
    cs_program_t *p = read_ok("0 isend 1 0 10\n0 test 0 1 0\n0 wait 0 1 0\n0 wait 0 1 0\n"
                              "1 recv 0 0 10\n", NULL);
    cs_program_free(p);
}

/* A pipe cannot be read twice. */
Test(ti, combined_needs_a_seekable_file)
{
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    cr_assert_eq(write(fd[1], "0 init\n", 7), 7);
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    cs_ti_opts_t o;
    cs_program_t *p;
    cs_error_t err;
    cs_ti_opts_default(&o);
    cr_expect_eq(cs_ti_read_stream(f, "pipe", &o, &p, NULL, &err), CS_ERR_IO);
    cr_expect(strstr(err.msg, "not a pipe"), "%s", err.msg);
    fclose(f);
}

Test(ti, sniff)
{
    char dir[] = "/tmp/collsim-ti-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128], idx[128], goal[128];
    snprintf(path, sizeof path, "%s/a.ti", dir);
    snprintf(idx, sizeof idx, "%s/idx", dir);
    snprintf(goal, sizeof goal, "%s/g.goal", dir);
    FILE *f = fopen(path, "w");
    fputs("# trace\n\n0 init\n", f);
    fclose(f);
    f = fopen(idx, "w");
    fputs("a.ti\n", f);
    fclose(f);
    f = fopen(goal, "w");
    fputs("// schedule\nnum_ranks 1\nrank 0 {\n}\n", f);
    fclose(f);
    int is_ti;
    cs_error_t err;
    cr_expect_eq(cs_ti_sniff(path, &is_ti, &err), CS_OK);
    cr_expect_eq(is_ti, 1);
    cr_expect_eq(cs_ti_sniff(idx, &is_ti, &err), CS_OK);
    cr_expect_eq(is_ti, 1);
    cr_expect_eq(cs_ti_sniff(goal, &is_ti, &err), CS_OK);
    cr_expect_eq(is_ti, 0);
    /* the index is read relative to its own folder */
    cs_ti_opts_t o;
    cs_program_t *p;
    cs_ti_info_t info;
    cs_ti_opts_default(&o);
    cr_expect_eq(cs_ti_read_file(idx, &o, &p, &info, &err), CS_OK, "%s", err.msg);
    cr_expect_eq(info.files, 1);
    cs_program_free(p);
    unlink(path);
    unlink(idx);
    unlink(goal);
    rmdir(dir);
}

/* ---- reading speed: line sources, fast paths -------------------------------- */

/* Same ops (kind, rank, peer, bytes, tag, ticks, line) and dependencies. */
static void expect_same(const cs_program_t *p, const cs_program_t *q)
{
    cr_assert_eq(cs_program_nops(q), cs_program_nops(p));
    for (int32_t i = 0; i < cs_program_nops(p); i++) {
        const cs_op_t *a = cs_program_op(p, i), *b = cs_program_op(q, i);
        int na, nb;
        cr_assert(a->kind == b->kind && a->rank == b->rank && a->peer == b->peer &&
                      a->bytes == b->bytes && a->tag == b->tag && a->ticks == b->ticks &&
                      cs_program_line(p, i) == cs_program_line(q, i),
                  "op %d differs", i);
        const cs_dep_t *da = cs_program_preds(p, i, &na), *db = cs_program_preds(q, i, &nb);
        cr_assert_eq(nb, na, "op %d preds", i);
        for (int j = 0; j < na; j++)
            cr_assert_eq(db[j], da[j], "op %d pred %d", i, j);
    }
}

static const char RING[] = "# a ring exchange\n"
                           "0 irecv 1 0 1024\n1 irecv 0 0 1024\n"
                           "0 isend 1 0 1024\n1 isend 0 0 1024\n"
                           "0 waitall\n1 waitall\n"
                           "0 compute 1000\n1 compute 2500\n";

Test(ti, file_stream_and_string_read_the_same)
{
    char path[] = "/tmp/test_ti_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, RING, strlen(RING)), (ssize_t)strlen(RING));
    close(fd);
    cs_ti_opts_t o;
    cs_program_t *a = read_ok(RING, NULL), *b = NULL, *c = NULL;
    cs_error_t err;
    cs_ti_opts_default(&o);
    cr_assert_eq(cs_ti_read_file(path, &o, &b, NULL, &err), CS_OK, "%s", err.msg);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    cr_assert_eq(cs_ti_read_stream(f, "t.ti", &o, &c, NULL, &err), CS_OK, "%s", err.msg);
    fclose(f);
    unlink(path);
    cr_assert_eq(cs_program_nops(a), 6);
    cr_assert_eq(cs_program_op(a, 5)->ticks, 2500);
    cr_assert_eq(cs_program_line(a, 5), 9);
    expect_same(a, b);
    expect_same(a, c);
    cs_program_free(a);
    cs_program_free(b);
    cs_program_free(c);
}

Test(ti, action_names_any_case_and_numbers_any_form)
{
    /* Exact lower-case names and whole numbers take the fast paths; other
     * spellings (case, decimals, exponents, tabs) must mean the same. */
    static const char other[] = "# a ring exchange\n"
                                "0 IRECV 1 0 1024\n1 iRecv 0 0 1024\n"
                                "0\tIsend\t1 0 1024\n1 isend 0 0 1024\n"
                                "0 WaitAll\n1 waitALL\n"
                                "0 compute 1e3\n1 Compute 2500.0\n";
    cs_program_t *a = read_ok(RING, NULL), *b = read_ok(other, NULL);
    expect_same(a, b);
    cs_program_free(a);
    cs_program_free(b);
    /* a whole number too large for a double to hold exactly rounds as strtod does */
    a = read_ok("0 compute 9007199254740993\n", NULL);
    b = read_ok("0 compute 9007199254740992\n", NULL);
    cr_expect_eq(cs_program_op(a, 0)->ticks, cs_program_op(b, 0)->ticks);
    cs_program_free(a);
    cs_program_free(b);
}

/* ---- SimGrid's older form (issue 31) --------------------------------------- */

/* tests/data/ti/simgrid-old/DIR/NAME under the source root. */
static const char *old_path(const char *dir, const char *name)
{
    static char buf[4096];
    const char *root = getenv("COLLSIM_SOURCE_ROOT");
    snprintf(buf, sizeof buf, "%s/tests/data/ti/simgrid-old/%s/%s", root ? root : ".", dir, name);
    return buf;
}

static cs_program_t *read_path_ok(const char *path)
{
    cs_ti_opts_t o;
    cs_program_t *p = NULL;
    cs_error_t err;
    cs_ti_opts_default(&o);
    cr_assert_eq(cs_ti_read_file(path, &o, &p, NULL, &err), CS_OK, "%s", err.msg);
    return p;
}

/* The same program but for the messages' tags (which the older form does
 * not have): kinds, ranks, peers, bytes, durations and dependencies. */
static void expect_same_but_tags(const cs_program_t *p, const cs_program_t *q, const char *what)
{
    cr_assert_eq(cs_program_nops(q), cs_program_nops(p), "%s: op counts", what);
    for (int32_t i = 0; i < cs_program_nops(p); i++) {
        const cs_op_t *a = cs_program_op(p, i), *b = cs_program_op(q, i);
        int na, nb;
        cr_assert(a->kind == b->kind && a->rank == b->rank && a->bytes == b->bytes,
                  "%s: op %d differs", what, i);
        if (a->kind == CS_OP_CALC)
            cr_assert_eq(a->ticks, b->ticks, "%s: op %d ticks", what, i);
        else
            cr_assert_eq(a->peer, b->peer, "%s: op %d peer", what, i);
        const cs_dep_t *da = cs_program_preds(p, i, &na), *db = cs_program_preds(q, i, &nb);
        cr_assert_eq(nb, na, "%s: op %d preds", what, i);
        for (int j = 0; j < na; j++)
            cr_assert_eq(db[j], da[j], "%s: op %d pred %d", what, i, j);
    }
}

/* SimGrid's replay examples as release 3.17 shipped them (untagged sends,
 * bare waits, camel-case names) and as SimGrid converted them in April
 * 2018 (its commit e12865649a, which left every simulated time of its
 * replay.tesh unchanged): the same programs, the same times on three
 * machines of different models. */
Test(ti, simgrid_older_examples_run_as_their_current_form)
{
    static const char *const pairs[][2] = {
        {"split_traces", "split_traces"},
        {"actions_with_isend.txt", "actions_with_isend.txt"},
        {"actions_waitall.txt", "actions_waitall.txt"},
        {"actions_barrier.txt", "actions_barrier.txt"},
        {"actions_allReduce.txt", "actions_allreduce.txt"},
        {"actions_alltoall.txt", "actions_alltoall.txt"},
    };
    static const char *const machines[] = {AB, "loggp:p=4", "net:gen=fattree,k=4,n=2"};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        cs_program_t *old = read_path_ok(old_path("older", pairs[i][0]));
        cs_program_t *cur = read_path_ok(old_path("current", pairs[i][1]));
        expect_same_but_tags(old, cur, pairs[i][0]);
        for (size_t m = 0; m < sizeof machines / sizeof machines[0]; m++) {
            cs_tick_t a = run(machines[m], old, NULL), b = run(machines[m], cur, NULL);
            cr_expect_eq(a, b, "%s on %s: older form %lld, current %lld", pairs[i][0],
                         machines[m], (long long)a, (long long)b);
        }
        cs_program_free(old);
        cs_program_free(cur);
    }
}

/* The split example against its formula on the alpha-beta line (alpha
 * 1 us, 1 ns a byte): rank 0 sends 1e6 bytes, rank 1 computes 1e9 flops
 * (1 s), then rank 0 receives 1e6 bytes and sends 1e6 more, which rank 1's
 * bare wait (on its Irecv) takes: 1 s + 3 (1 us + 1 ms). */
Test(ti, simgrid_older_split_example_time)
{
    cs_program_t *p = read_path_ok(old_path("older", "split_traces"));
    cr_expect_eq(run(AB, p, NULL), 1000000 * US + 3 * (US + 1000 * US));
    cs_program_free(p);
}

/* A line's form is told by its arity: 2 arguments (older, tag 0) or 4
 * (current); 3 by the values (a last one beyond 0..7 is a count, a middle
 * one that is no tag is a count); counts in exponent form as SimGrid
 * writes them. */
Test(ti, older_form_told_per_line)
{
    cs_program_t *p = read_ok("0 send 1 1e3\n"     /* older: 1000 bytes, tag 0 */
                              "0 send 1 4 100\n"   /* 3 args, 100 is no datatype: current */
                              "0 send 1 2e3 0\n"   /* 3 args, 2e3 is no tag: older, doubles */
                              "0 isend 1 9 10 1\n" /* current with datatype (int) */
                              "0 wait 0 1 9\n"
                              "1 recv 0 1000\n1 recv 0 4 100\n1 recv 0 16000\n"
                              "1 recv 0 9 40\n",
                              NULL);
    static const int64_t bytes[] = {1000, 100, 16000, 40};
    static const int32_t tags[] = {0, 4, 0, 9};
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(cs_program_op(p, i)->bytes, bytes[i], "op %d", i);
        cr_expect_eq(cs_program_op(p, i)->tag, tags[i], "op %d", i);
    }
    cs_program_free(p);
}

/* `send 1 5 3` reads both ways (5 shorts, or 3 bytes with tag 5): the
 * file's other lines decide; none: the current form; both: an error. */
Test(ti, ambiguous_line_takes_the_file_form)
{
    cs_program_t *p = read_ok("0 send 1 5 3\n0 isend 1 7\n0 wait\n1 recv 0 5 3\n1 recv 0 7\n",
                              NULL);
    cr_expect_eq(cs_program_op(p, 0)->bytes, 10); /* older: 5 shorts */
    cr_expect_eq(cs_program_op(p, 0)->tag, 0);
    cs_program_free(p);
    p = read_ok("0 send 1 5 3\n0 isend 1 0 70\n0 wait 0 1 0\n1 recv 0 5 3\n1 recv 0 0 70\n",
                NULL);
    cr_expect_eq(cs_program_op(p, 0)->bytes, 3); /* current: tag 5, 3 bytes */
    cr_expect_eq(cs_program_op(p, 0)->tag, 5);
    cs_program_free(p);
    p = read_ok("0 send 1 5 3\n1 recv 0 5 3\n", NULL);
    cr_expect_eq(cs_program_op(p, 0)->bytes, 3);
    cs_program_free(p);
    /* the telling line may come after the ambiguous one */
    p = read_ok("0 send 1 5 3\n1 recv 0 5 3\n1 irecv 0 7\n0 send 1 7\n1 wait\n", NULL);
    cr_expect_eq(cs_program_op(p, 0)->bytes, 10);
    cs_program_free(p);
    EXPECT_ERR("0 send 1 5 3\n0 isend 1 0 70\n0 wait\n1 recv 0 5 3\n",
               "t.ti:1: `send 1 5 3` reads as SimGrid's older form");
    EXPECT_ERR("0 send 1 5 3\n0 isend 1 0 70\n0 wait\n1 recv 0 5 3\n",
               "(older at line 3, current at line 2)");
}

/* A line that could be either, met before any line told a form, has the
 * rest of the file scanned, and reading goes on at the line after it: a
 * comment and a blank line before it, the telling (older) line after it.
 * The same ops whether the file is a string, a mapped file or a stream
 * that starts past a first line of its own (rewound to its start, not to
 * the file's). */
#define SCAN_TEXT                                                                             \
    "# a comment\n0 compute 10\n\n0 send 1 5 3\n1 recv 0 5 3\n0 compute 20\n1 irecv 0 7\n"    \
    "0 send 1 7\n1 wait\n0 compute 30\n"

static void expect_scan_ops(const cs_program_t *p, const char *what)
{
    /* older form: `send 1 5 3` is 5 shorts (10 bytes), `send 1 7` 7 bytes, tag 0 */
    static const int kinds[] = {CS_OP_CALC, CS_OP_SEND, CS_OP_RECV, CS_OP_CALC,
                                CS_OP_RECV, CS_OP_SEND, CS_OP_CALC};
    static const int64_t size[] = {10, 10, 10, 20, 7, 7, 30}; /* bytes, or ns of a calc */
    cr_assert_eq(cs_program_nops(p), 7, "%s: op count", what);
    for (int i = 0; i < 7; i++) {
        const cs_op_t *o = cs_program_op(p, i);
        cr_expect_eq(o->kind, kinds[i], "%s: op %d kind", what, i);
        if (o->kind == CS_OP_CALC)
            cr_expect_eq(o->ticks, size[i], "%s: op %d ns", what, i);
        else
            cr_expect(o->bytes == size[i] && o->tag == 0, "%s: op %d: %lld bytes, tag %d", what,
                      i, (long long)o->bytes, o->tag);
    }
}

Test(ti, ambiguous_line_scan_resumes_where_it_was)
{
    cs_program_t *p = read_ok(SCAN_TEXT, NULL);
    expect_scan_ops(p, "string");
    cs_program_free(p);
    char path[] = "/tmp/test_ti_scan_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w+");
    fputs(SCAN_TEXT, f);
    fflush(f);
    p = read_path_ok(path);
    expect_scan_ops(p, "file");
    cs_program_free(p);
    rewind(f);
    fputs("not a trace line\n" SCAN_TEXT, f);
    fflush(f);
    fseek(f, (long)strlen("not a trace line\n"), SEEK_SET);
    cs_ti_opts_t o;
    cs_error_t err;
    cs_ti_opts_default(&o);
    cr_assert_eq(cs_ti_read_stream(f, "t.ti", &o, &p, NULL, &err), CS_OK, "%s", err.msg);
    expect_scan_ops(p, "stream");
    cs_program_free(p);
    fclose(f);
    unlink(path);
}

/* Lines of both forms before or around a line that could be either: the
 * error names the first of each, whether they were parsed already or found
 * by the scan. */
Test(ti, ambiguous_line_in_a_file_of_both_forms)
{
    EXPECT_ERR("0 isend 1 0 70\n0 wait\n0 send 1 5 3\n1 recv 0 5 3\n",
               "t.ti:3: `send 1 5 3` reads as SimGrid's older form");
    EXPECT_ERR("0 isend 1 0 70\n0 wait\n0 send 1 5 3\n1 recv 0 5 3\n",
               "(older at line 2, current at line 1)");
    EXPECT_ERR("0 isend 1 0 70\n0 send 1 5 3\n0 wait\n0 isend 1 70\n1 init\n",
               "t.ti:2: `send 1 5 3` reads as SimGrid's older form (`send <peer> <count> "
               "<datatype>`) or as the current one (`send <peer> <tag> <count>`), and this file "
               "has lines of both (older at line 3, current at line 1)");
}

/* In an index the form is each rank file's own. */
Test(ti, ambiguous_line_in_an_index_takes_its_file_form)
{
    char dir[] = "/tmp/test_ti_old_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char idx[256], f0[256], f1[256];
    snprintf(idx, sizeof idx, "%s/index", dir);
    snprintf(f0, sizeof f0, "%s/r0.txt", dir);
    snprintf(f1, sizeof f1, "%s/r1.txt", dir);
    FILE *f = fopen(idx, "w");
    fputs("r0.txt\nr1.txt\n", f);
    fclose(f);
    f = fopen(f0, "w"); /* older: 5 shorts, then an untagged isend and a bare wait */
    fputs("0 send 1 5 3\n0 isend 1 7\n0 wait\n", f);
    fclose(f);
    f = fopen(f1, "w"); /* current: its `recv 0 0 7` is 7 bytes with tag 0, not 0 of dt 7 */
    fputs("1 recv 0 0 10\n1 recv 0 0 7\n", f);
    fclose(f);
    cs_program_t *p = read_path_ok(idx);
    cr_expect_eq(cs_program_op(p, 0)->bytes, 10);
    cr_expect_eq(cs_program_op(p, 0)->tag, 0);
    cr_expect_eq(cs_program_op(p, 3)->kind, CS_OP_RECV);
    cr_expect_eq(cs_program_op(p, 3)->bytes, 7);
    cs_program_free(p);
    unlink(idx);
    unlink(f0);
    unlink(f1);
    rmdir(dir);
}

/* An index's rank file is scanned from its ambiguous line on, and read
 * on from the line after it; a rank file of both forms is an error naming
 * it and its lines. */
Test(ti, ambiguous_line_in_an_index_mid_file)
{
    char dir[] = "/tmp/test_ti_mid_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char idx[256], f0[256], f1[256];
    snprintf(idx, sizeof idx, "%s/index", dir);
    snprintf(f0, sizeof f0, "%s/r0.txt", dir);
    snprintf(f1, sizeof f1, "%s/r1.txt", dir);
    FILE *f = fopen(idx, "w");
    fputs("r0.txt\nr1.txt\n", f);
    fclose(f);
    f = fopen(f0, "w"); /* older, told after the ambiguous line */
    fputs("0 compute 5\n0 send 1 5 3\n0 compute 6\n0 isend 1 7\n0 wait\n", f);
    fclose(f);
    f = fopen(f1, "w");
    fputs("1 recv 0 0 10\n1 recv 0 0 7\n", f);
    fclose(f);
    cs_program_t *p = read_path_ok(idx);
    static const int kinds[] = {CS_OP_CALC, CS_OP_SEND, CS_OP_CALC, CS_OP_SEND, CS_OP_RECV,
                                CS_OP_RECV};
    static const int64_t size[] = {5, 10, 6, 7, 10, 7};
    cr_assert_eq(cs_program_nops(p), 6);
    for (int i = 0; i < 6; i++) {
        const cs_op_t *o = cs_program_op(p, i);
        cr_expect_eq(o->kind, kinds[i], "op %d kind", i);
        cr_expect_eq(o->kind == CS_OP_CALC ? o->ticks : o->bytes, size[i], "op %d size", i);
    }
    cs_program_free(p);
    f = fopen(f0, "w");
    fputs("0 isend 1 0 10\n0 send 1 5 3\n0 wait\n", f);
    fclose(f);
    cs_ti_opts_t o;
    cs_error_t err;
    cs_ti_opts_default(&o);
    p = NULL;
    cr_assert_eq(cs_ti_read_file(idx, &o, &p, NULL, &err), CS_ERR_PARSE);
    cr_expect_null(p);
    char want[512];
    snprintf(want, sizeof want, "%s:2: `send 1 5 3` reads as SimGrid's older form", f0);
    cr_expect(strstr(err.msg, want) != NULL, "expected '%s' in: %s", want, err.msg);
    cr_expect(strstr(err.msg, "(older at line 3, current at line 1)") != NULL, "%s", err.msg);
    unlink(idx);
    unlink(f0);
    unlink(f1);
    rmdir(dir);
}

/* The bare wait completes the MOST RECENT request, as SimGrid's replay
 * popped the back of the rank's request list: rank 0's send after `Isend,
 * Irecv, wait` follows the Irecv, which rank 1 serves only after 1 ms of
 * compute, not the Isend that ends at 2 us.  A second bare wait takes the
 * Isend. */
Test(ti, bare_wait_takes_the_most_recent_request)
{
    cs_tick_t ends[16];
    cs_program_t *p = read_ok("0 Isend 1 1000\n0 Irecv 1 1000\n0 wait\n0 send 1 1000\n"
                              "0 wait\n0 compute 0\n"
                              "1 recv 0 1000\n1 compute 1000000\n1 send 0 1000\n1 recv 0 1000\n",
                              NULL);
    /* ops: 0 isend, 1 irecv, 2 send, 3 calc */
    int n;
    const cs_dep_t *d = cs_program_preds(p, 2, &n);
    int after_irecv = 0, after_isend = 0;
    for (int j = 0; j < n; j++) {
        after_irecv |= cs_dep_op(d[j]) == 1 && cs_dep_kind(d[j]) == CS_DEP_AFTER;
        after_isend |= cs_dep_op(d[j]) == 0 && cs_dep_kind(d[j]) == CS_DEP_AFTER;
    }
    cr_expect(after_irecv && !after_isend, "the send must follow the Irecv's end only");
    d = cs_program_preds(p, 3, &n);
    after_isend = 0;
    for (int j = 0; j < n; j++)
        after_isend |= cs_dep_op(d[j]) == 0 && cs_dep_kind(d[j]) == CS_DEP_AFTER;
    cr_expect(after_isend, "the second wait takes the Isend");
    /* isend 0->1: 0..2 us; rank 1 computes to 1002 us, sends to 1004 us;
     * rank 0's send then ends at 1006 us */
    run(AB, p, ends);
    cr_expect_eq(ends[1], 1004 * US);
    cr_expect_eq(ends[2], 1006 * US);
    cs_program_free(p);
}

Test(ti, older_form_errors)
{
    EXPECT_ERR("0 wait 1\n", "t.ti:1: wait takes 3 arguments (`wait <src> <dst> <tag>`) or "
                             "none (SimGrid's older `wait`), got 1");
    EXPECT_ERR("0 test 1 2\n", "t.ti:1: test takes 3 arguments");
    EXPECT_ERR("0 init\n0 wait\n", "t.ti:2: wait on rank 0 without an outstanding isend or "
                                   "irecv");
    EXPECT_ERR("0 isend 1 5\n0 waitall\n0 wait\n1 recv 0 5\n", "t.ti:3: wait on rank 0 without");
    EXPECT_ERR("0 send 1 2.5\n1 recv 0 2.5\n", "t.ti:1: count '2.5' is not a whole number");
    EXPECT_ERR("0 send 1 0x10\n1 recv 0 16\n", "t.ti:1: count '0x10' is not a count");
    EXPECT_ERR("0 send 1 inf\n1 recv 0 16\n", "t.ti:1: count 'inf' is not a count");
    EXPECT_ERR("0 send 1 1e300\n1 recv 0 16\n", "t.ti:1: count '1e300' is too large");
    EXPECT_ERR("0 send 1 10\n1 recv 0 5\n", "t.ti:2: rank 1: recv of 5 bytes from rank 0 "
                                            "(tag 0) is smaller than the 10-byte message");
    /* an untagged message has tag 0: it does not match a tagged recv */
    EXPECT_ERR("0 send 1 10\n1 recv 0 3 10\n", "t.ti:1: rank 0: send to rank 1 (tag 0, 10 "
                                               "bytes) is never received");
}
