/*
 * test_goal.c - the GOAL reader and writer (src/io/goal.c).
 *
 * Oracles: the example of reference/trace-formats.md with its ops and
 * dependencies spelled out by hand; round trips (program -> text -> program
 * compared op by op and dependency by dependency, and text -> program ->
 * text as a fixed point); and one malformed input per rule of the grammar,
 * each checked for CS_ERR_PARSE and the exact "name:line:col:" of the
 * offending token.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lines.h"
#include "io/goal.h"

static const char EXAMPLE[] = "num_ranks 4\n"
                              "\n"
                              "rank 0 {\n"
                              "l1: send 8b to 1 tag 0\n"
                              "l2: send 8b to 2 tag 0\n"
                              "}\n"
                              "\n"
                              "rank 1 {\n"
                              "l1: recv 8b from 0 tag 0\n"
                              "l2: send 8b to 3 tag 0\n"
                              "l2 requires l1\n"
                              "}\n"
                              "\n"
                              "rank 2 {\n"
                              "l1: recv 8b from 0 tag 0\n"
                              "}\n"
                              "\n"
                              "rank 3 {\n"
                              "l1: recv 8b from 1 tag 0\n"
                              "}\n";

static cs_program_t *read_ok(const char *text)
{
    cs_program_t *p = NULL;
    cs_error_t e = {0, ""};
    int rc = cs_goal_read_string(text, "t.goal", &p, &e);
    cr_assert_eq(rc, CS_OK, "read failed (%d): %s", rc, e.msg);
    cr_assert_not_null(p);
    return p;
}

/* Reads `len` bytes that must fail with CS_ERR_PARSE at `where` ("t.goal:L:C:"),
 * with `what` (if non-NULL) somewhere in the message. */
static void expect_error_bytes(const char *bytes, size_t len, const char *where, const char *what)
{
    cs_program_t *p = (cs_program_t *)&p; /* must be reset to NULL */
    cs_error_t e = {0, ""};
    FILE *f = len ? fmemopen((void *)bytes, len, "r") : fopen("/dev/null", "r");
    int rc;
    cr_assert_not_null(f);
    rc = cs_goal_read_stream(f, "t.goal", &p, &e);
    fclose(f);
    cr_assert_eq(rc, CS_ERR_PARSE, "expected a parse error at %s, got %d: %s", where, rc, e.msg);
    cr_assert_eq(e.code, CS_ERR_PARSE);
    cr_assert_null(p);
    cr_assert(strncmp(e.msg, where, strlen(where)) == 0, "expected '%s...', got '%s'", where,
              e.msg);
    if (what)
        cr_assert(strstr(e.msg, what), "expected '%s' in '%s'", what, e.msg);
}

static void expect_error(const char *text, const char *where, const char *what)
{
    expect_error_bytes(text, strlen(text), where, what);
}

static void check_op(const cs_program_t *p, int32_t id, cs_op_kind_t kind, int rank, int peer,
                     int64_t bytes, int tag, int line, const char *label)
{
    const cs_op_t *op = cs_program_op(p, id);
    cr_assert_eq(op->kind, kind, "op %d kind", id);
    cr_assert_eq(op->rank, rank, "op %d rank", id);
    if (kind != CS_OP_CALC) { /* a calc has no peer and no tag */
        cr_assert_eq(op->peer, peer, "op %d peer", id);
        cr_assert_eq(op->tag, tag, "op %d tag", id);
    }
    cr_assert_eq(op->bytes, bytes, "op %d bytes", id);
    cr_assert_eq(cs_program_line(p, id), line, "op %d line", id);
    if (label)
        cr_assert_str_eq(cs_program_label(p, id), label, "op %d label", id);
    else
        cr_assert_null(cs_program_label(p, id), "op %d label", id);
}

static int npreds(const cs_program_t *p, int32_t id)
{
    int n;
    cs_program_preds(p, id, &n);
    return n;
}

static int nsuccs(const cs_program_t *p, int32_t id)
{
    int n;
    cs_program_succs(p, id, &n);
    return n;
}

static char *write_text(const cs_program_t *p)
{
    char *buf = NULL;
    size_t len = 0;
    cs_error_t e = {0, ""};
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    cr_assert_eq(cs_goal_write(p, f, &e), CS_OK, "write failed: %s", e.msg);
    fclose(f);
    return buf;
}

/* ---- the reference example -------------------------------------------- */

Test(goal, reads_the_reference_example)
{
    cs_program_t *p = read_ok(EXAMPLE);
    int n;
    const cs_dep_t *d;

    cr_assert_eq(cs_program_nranks(p), 4);
    cr_assert_eq(cs_program_nops(p), 6);
    cr_assert_str_eq(cs_program_source(p), "t.goal");
    cr_assert_float_eq(cs_program_time_unit(p), 1e-9, 1e-21);
    check_op(p, 0, CS_OP_SEND, 0, 1, 8, 0, 4, "l1");
    check_op(p, 1, CS_OP_SEND, 0, 2, 8, 0, 5, "l2");
    check_op(p, 2, CS_OP_RECV, 1, 0, 8, 0, 9, "l1");
    check_op(p, 3, CS_OP_SEND, 1, 3, 8, 0, 10, "l2");
    check_op(p, 4, CS_OP_RECV, 2, 0, 8, 0, 15, "l1");
    check_op(p, 5, CS_OP_RECV, 3, 1, 8, 0, 19, "l1");

    d = cs_program_preds(p, 3, &n);
    cr_assert_eq(n, 1);
    cr_assert_eq(cs_dep_op(d[0]), 2);
    cr_assert_eq(cs_dep_kind(d[0]), CS_DEP_AFTER);
    d = cs_program_succs(p, 2, &n);
    cr_assert_eq(n, 1);
    cr_assert_eq(cs_dep_op(d[0]), 3);
    cr_assert_eq(cs_dep_kind(d[0]), CS_DEP_AFTER);
    for (int32_t i = 0; i < 6; i++) {
        if (i != 3)
            cr_assert_eq(npreds(p, i), 0, "op %d has no predecessor", i);
        if (i != 2)
            cr_assert_eq(nsuccs(p, i), 0, "op %d has no successor", i);
    }
    cs_program_free(p);
}

Test(goal, example_written_back_is_the_same_text)
{
    cs_program_t *p = read_ok(EXAMPLE);
    char *text = write_text(p);
    cr_assert_str_eq(text, EXAMPLE);
    free(text);
    cs_program_free(p);
}

Test(goal, reads_a_file_and_reports_a_missing_one)
{
    char path[] = "/tmp/test_goal_XXXXXX";
    int fd = mkstemp(path);
    cs_program_t *p = NULL;
    cs_error_t e = {0, ""};
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, EXAMPLE, strlen(EXAMPLE)), (ssize_t)strlen(EXAMPLE));
    close(fd);
    cr_assert_eq(cs_goal_read_file(path, &p, &e), CS_OK, "%s", e.msg);
    cr_assert_eq(cs_program_nops(p), 6);
    cr_assert_str_eq(cs_program_source(p), path);
    cs_program_free(p);
    unlink(path);

    p = (cs_program_t *)&p;
    cr_assert_eq(cs_goal_read_file(path, &p, &e), CS_ERR_IO);
    cr_assert_null(p);
    cr_assert(strncmp(e.msg, path, strlen(path)) == 0, "%s", e.msg);
}

/* ---- lexical details and extensions ------------------------------------ */

Test(goal, comments_spaces_crlf_wildcards_and_cpu0)
{
    cs_program_t *p = read_ok("// a schedule\r\n"
                              "/* a block\n"
                              "   comment */ num_ranks 2 // trailing\n"
                              "\n"
                              "rank 0 {\r\n"
                              "\ta :\trecv 4b from -1 tag -1 cpu 0 nic 0\r\n"
                              "  /* x */ b: calc 250 cpu 0 /* opens\n"
                              "  closes */ b requires a\n"
                              "send: send 0b to 1 tag 7\n"
                              "send irequires b\n"
                              "}\n"
                              "rank 1 {\n"
                              "recv 0b from 0 tag 7 nic 0\n"
                              "}\n");
    const cs_dep_t *d;
    int n;
    cr_assert_eq(cs_program_nops(p), 4);
    check_op(p, 0, CS_OP_RECV, 0, CS_ANY, 4, CS_ANY, 6, "a");
    check_op(p, 1, CS_OP_CALC, 0, -1, 0, 0, 7, "b");
    cr_assert_eq(cs_program_op(p, 1)->ticks, 250);
    check_op(p, 2, CS_OP_SEND, 0, 1, 0, 7, 9, "send");
    check_op(p, 3, CS_OP_RECV, 1, 0, 0, 7, 13, NULL);
    d = cs_program_preds(p, 1, &n);
    cr_assert_eq(n, 1);
    cr_assert_eq(cs_dep_op(d[0]), 0);
    cr_assert_eq(cs_dep_kind(d[0]), CS_DEP_AFTER);
    d = cs_program_preds(p, 2, &n);
    cr_assert_eq(n, 1);
    cr_assert_eq(cs_dep_op(d[0]), 1);
    cr_assert_eq(cs_dep_kind(d[0]), CS_DEP_AFTER_START);
    cs_program_free(p);
}

Test(goal, extensions_mcast_reduce_streams)
{
    cs_program_t *p = read_ok("num_ranks 4\n"
                              "rank 0 {\n"
                              "m: mcast 64b to 1, 3,2 tag 5\n"
                              "}\n"
                              "rank 1 {\n"
                              "r: recv 64b from 0 tag 5\n"
                              "a: reduce 64b\n"
                              "c: reduce 32b calc 100 cpu 0\n"
                              "s: send 64b to 2\n"
                              "a streams r\n"
                              "s streams a\n"
                              "c requires a\n"
                              "}\n"
                              "rank 2 {\n"
                              "recv 64b from 0 tag 5\n"
                              "recv 64b from 1\n"
                              "}\n"
                              "rank 3 {\n"
                              "recv 64b from 0 tag 5\n"
                              "}\n");
    const cs_op_t *op;
    const int32_t *peers;
    const cs_dep_t *d;
    int n;

    op = cs_program_op(p, 0);
    cr_assert_eq(op->kind, CS_OP_MCAST);
    cr_assert_eq(cs_program_npeers(p, op), 3);
    cr_assert_eq(op->bytes, 64);
    cr_assert_eq(op->tag, 5);
    peers = cs_program_mcast_peers(p, op);
    cr_assert_eq(peers[0], 1);
    cr_assert_eq(peers[1], 3);
    cr_assert_eq(peers[2], 2);

    op = cs_program_op(p, 2);
    cr_assert_eq(op->kind, CS_OP_CALC);
    cr_assert_eq(op->bytes, 64);
    cr_assert_eq(op->ticks, 0);
    op = cs_program_op(p, 3);
    cr_assert_eq(op->kind, CS_OP_CALC);
    cr_assert_eq(op->bytes, 32);
    cr_assert_eq(op->ticks, 100);

    d = cs_program_preds(p, 2, &n);
    cr_assert_eq(n, 1);
    cr_assert_eq(cs_dep_op(d[0]), 1);
    cr_assert_eq(cs_dep_kind(d[0]), CS_DEP_STREAM);
    d = cs_program_preds(p, 4, &n);
    cr_assert_eq(n, 1);
    cr_assert_eq(cs_dep_op(d[0]), 2);
    cr_assert_eq(cs_dep_kind(d[0]), CS_DEP_STREAM);
    d = cs_program_preds(p, 3, &n);
    cr_assert_eq(n, 1);
    cr_assert_eq(cs_dep_kind(d[0]), CS_DEP_AFTER);
    check_op(p, 6, CS_OP_RECV, 2, 1, 64, 0, 16, NULL);
    cs_program_free(p);
}

/* ---- round trips ------------------------------------------------------- */

/* Checks that q is p: the same ops under the same ids (the writer keeps
 * the op order), the same dependencies in the same order. */
static void assert_same_program(const cs_program_t *p, const cs_program_t *q)
{
    int32_t n = cs_program_nops(p);
    int32_t *map = malloc(((size_t)n + 1) * sizeof *map);
    cr_assert_eq(cs_program_nranks(q), cs_program_nranks(p));
    cr_assert_eq(cs_program_nops(q), n);
    for (int32_t i = 0; i < n; i++)
        map[i] = i;
    for (int32_t i = 0; i < n; i++) {
        const cs_op_t *a = cs_program_op(p, i), *b = cs_program_op(q, map[i]);
        int na, nb;
        const cs_dep_t *da, *db;
        cr_assert_eq(b->kind, a->kind, "op %d", i);
        cr_assert_eq(b->rank, a->rank, "op %d", i);
        cr_assert_eq(b->bytes, a->bytes, "op %d", i);
        if (a->kind == CS_OP_CALC) /* ticks share their place with peer and tag */
            cr_assert_eq(b->ticks, a->ticks, "op %d", i);
        else
            cr_assert_eq(b->tag, a->tag, "op %d", i);
        cr_assert_eq(cs_program_npeers(q, b), cs_program_npeers(p, a), "op %d", i);
        if (a->kind == CS_OP_MCAST) {
            const int32_t *pa = cs_program_mcast_peers(p, a), *pb = cs_program_mcast_peers(q, b);
            for (int32_t j = 0; j < cs_program_npeers(p, a); j++)
                cr_assert_eq(pb[j], pa[j], "op %d peer %d", i, j);
        } else {
            cr_assert_eq(b->peer, a->peer, "op %d", i);
        }
        da = cs_program_preds(p, i, &na);
        db = cs_program_preds(q, map[i], &nb);
        cr_assert_eq(nb, na, "op %d preds", i);
        for (int j = 0; j < na; j++) {
            cr_assert_eq(cs_dep_op(db[j]), map[cs_dep_op(da[j])], "op %d pred %d", i, j);
            cr_assert_eq(cs_dep_kind(db[j]), cs_dep_kind(da[j]), "op %d pred %d", i, j);
        }
        da = cs_program_succs(p, i, &na);
        db = cs_program_succs(q, map[i], &nb);
        cr_assert_eq(nb, na, "op %d succs", i);
        for (int j = 0; j < na; j++) {
            cr_assert_eq(cs_dep_op(db[j]), map[cs_dep_op(da[j])], "op %d succ %d", i, j);
            cr_assert_eq(cs_dep_kind(db[j]), cs_dep_kind(da[j]), "op %d succ %d", i, j);
        }
    }
    free(map);
}

static cs_program_t *reread(const cs_program_t *p, char **text)
{
    cs_program_t *q;
    *text = write_text(p);
    q = read_ok(*text);
    return q;
}

Test(goal, round_trip_of_a_built_program)
{
    cs_program_t *p = cs_program_new(3), *q, *q2;
    cs_error_t e = {0, ""};
    int32_t dsts[] = {2, 0};
    char *t1, *t2;

    /* Ranks interleaved in id order, every op kind and dependency kind,
     * labels that collide with generated names or are keywords or invalid. */
    int32_t a = cs_program_recv(p, 1, CS_ANY, 16, CS_ANY);
    int32_t b = cs_program_send(p, 0, 1, 16, 3);
    int32_t c = cs_program_calc(p, 1, 0, 16);
    int32_t d = cs_program_mcast(p, 1, dsts, 2, 16, 9);
    int32_t e0 = cs_program_recv(p, 0, 1, 16, 9);
    int32_t f = cs_program_calc(p, 1, 42, 0);
    int32_t g = cs_program_calc(p, 1, 7, 8);
    int32_t h = cs_program_recv(p, 2, 1, 16, 9);
    int32_t i = cs_program_calc(p, 0, 0, 0);
    cs_program_set_origin(p, a, 0, "o3");     /* the name op 3 (d) would get */
    cs_program_set_origin(p, f, 0, "send");   /* a keyword */
    cs_program_set_origin(p, g, 0, "not-ok"); /* not a GOAL label */
    cs_program_dep(p, c, a, CS_DEP_STREAM);
    cs_program_dep(p, d, c, CS_DEP_STREAM);
    cs_program_dep(p, f, d, CS_DEP_AFTER_START);
    cs_program_dep(p, g, a, CS_DEP_AFTER);
    cs_program_dep(p, g, f, CS_DEP_AFTER);
    cs_program_dep(p, i, e0, CS_DEP_AFTER);
    cs_program_dep(p, i, b, CS_DEP_AFTER_START);
    cs_program_set_time_unit(p, 1e-9);
    cr_assert_eq(cs_program_finalize(p, &e), CS_OK, "%s", e.msg);

    q = reread(p, &t1);
    assert_same_program(p, q);
    /* the blocks hold rank 0 = b e0 i, rank 1 = a c d f g, rank 2 = h; the
     * order line gives the ops back their ids */
    cr_assert(strstr(t1, "num_ranks 3\n// collsim order: 1-0:1 1:2 0:1 1:2 2:1 0:1\n\nrank 0 {"),
              "%s", t1);
    cr_assert_str_eq(cs_program_label(q, a), "o3");    /* a keeps its label */
    cr_assert_str_eq(cs_program_label(q, c), "o2");    /* c: generated from its id */
    cr_assert_str_eq(cs_program_label(q, d), "o3_2");  /* d steers clear of a's */
    cr_assert_str_eq(cs_program_label(q, f), "send");  /* f */
    cr_assert_str_eq(cs_program_label(q, g), "o6");    /* g: "not-ok" replaced */
    cr_assert_null(cs_program_label(q, h));            /* h: no dependency, no label */
    /* and the text is a fixed point */
    q2 = reread(q, &t2);
    cr_assert_str_eq(t2, t1);
    assert_same_program(q, q2);
    free(t1);
    free(t2);
    cs_program_free(q2);
    cs_program_free(q);
    cs_program_free(p);
}

Test(goal, round_trip_of_a_large_program)
{
    /* Many labelled ops per block: grows the label table and the program's
     * label pool well past their initial sizes. */
    const int P = 5, N = 700;
    cs_program_t *p = cs_program_new(P), *q;
    cs_error_t e = {0, ""};
    char *text;
    for (int r = 0; r < P; r++) {
        int32_t prev = -1;
        for (int k = 0; k < N; k++) {
            int32_t s = cs_program_send(p, r, (r + 1) % P, k, k);
            int32_t v = cs_program_recv(p, r, (r + P - 1) % P, k, k);
            cs_program_dep(p, s, v, CS_DEP_AFTER);
            if (prev >= 0)
                cs_program_dep(p, v, prev, CS_DEP_AFTER);
            prev = s;
        }
    }
    cs_program_set_time_unit(p, 1e-9);
    cr_assert_eq(cs_program_finalize(p, &e), CS_OK, "%s", e.msg);
    q = reread(p, &text);
    assert_same_program(p, q);
    free(text);
    cs_program_free(q);
    cs_program_free(p);
}

Test(goal, writer_converts_or_refuses_calc_times)
{
    cs_program_t *p = cs_program_new(1), *q;
    cs_error_t e = {0, ""};
    char *text;
    cs_program_calc(p, 0, 3, 0);
    cs_program_set_time_unit(p, 1e-6); /* microseconds: written as 3000 ns */
    cr_assert_eq(cs_program_finalize(p, &e), CS_OK);
    q = reread(p, &text);
    cr_assert_eq(cs_program_op(q, 0)->ticks, 3000);
    free(text);
    cs_program_free(q);

    /* machine ticks cannot become nanoseconds without a machine */
    cs_program_set_time_unit(p, 0);
    FILE *f = open_memstream(&text, &(size_t){0});
    cr_assert_eq(cs_goal_write(p, f, &e), CS_ERR_RANGE);
    cr_assert(strstr(e.msg, "nanoseconds"), "%s", e.msg);
    fclose(f);
    free(text);
    cs_program_free(p);
}

/* ---- malformed inputs -------------------------------------------------- */

Test(goal, error_truncated_inside_a_rank_block)
{
    expect_error("num_ranks 2\nrank 0 {\nl1: calc 5\n", "t.goal:4:1:", "expected '}'");
    /* no final newline: the end of the file is after the last byte */
    expect_error("num_ranks 2\nrank 0 {\nl1: calc 5", "t.goal:3:11:", "end of file");
    expect_error("num_ranks 2\nrank 0 {\n}\nrank 1 {\nl1: send 8b",
                 "t.goal:5:12:", "expected 'to'");
}

Test(goal, error_missing_rank_blocks)
{
    expect_error("num_ranks 3\nrank 0 {\n}\n", "t.goal:4:1:", "expected 'rank 1 {'");
    expect_error("num_ranks 1\n", "t.goal:2:1:", "expected 'rank 0 {'");
}

Test(goal, error_unknown_op_and_keywords)
{
    expect_error("num_ranks 1\nrank 0 {\n  l1: sned 8b to 0\n}\n",
                 "t.goal:3:7:", "unknown operation 'sned'");
    expect_error("num_ranks 1\nrank 0 {\nwait 8\n}\n", "t.goal:3:1:", "unknown operation");
    expect_error("num_ranks 2\nrank 0 {\nsend 8b at 1\n}\n", "t.goal:3:9:", "expected 'to'");
    expect_error("num_ranks 2\nrank 0 {\nsend 8b to 1 tga 3\n}\n",
                 "t.goal:3:14:", "expected 'tag', 'cpu', 'nic' or end of line");
    /* fields in GOAL's order only, each once */
    expect_error("num_ranks 2\nrank 0 {\nsend 8b to 1 cpu 0 tag 3\n}\n",
                 "t.goal:3:20:", "got 'tag'");
    expect_error("num_ranks 1\nrank 0 {\ncalc 5 nic 0\n}\n", "t.goal:3:8:", "got 'nic'");
    expect_error("num_ranks 1\nrank 0 {\nl1: calc 5 l2: calc 6\n}\n",
                 "t.goal:3:12:", "expected 'cpu' or end of line");
    expect_error("num_ranks 1\nrank 0 {\nl1:\n}\n", "t.goal:3:4:", "expected an operation");
    expect_error("num_ranks 1\nrank 0 {\na-b: calc 1\n}\n", "t.goal:3:1:", "expected a label");
    expect_error("num_ranks 1\nrank 0 {\n@ calc 1\n}\n", "t.goal:3:1:", "got '@'");
    expect_error("num_ranks 1\nrank 0 {\ncalc 1\nrank 1 {\n",
                 "t.goal:4:1:", "expected '}' to close");
}

Test(goal, error_bad_numbers)
{
    const char *head = "num_ranks 2\nrank 0 {\n";
    char buf[256];
#define LINE3(s) (snprintf(buf, sizeof buf, "%s%s\n}\nrank 1 {\n}\n", head, s), buf)
    expect_error(LINE3("send 8x to 1"), "t.goal:3:7:", "expected 'b' after the size 8, got 'x'");
    expect_error(LINE3("send -3b to 1"), "t.goal:3:6:", "non-negative");
    expect_error(LINE3("send 99999999999999999999b to 1"),
                 "t.goal:3:6:", "does not fit in 64 bits");
    expect_error(LINE3("send 8 to 1"), "t.goal:3:7:", "expected 'b' after the size 8");
    expect_error(LINE3("send 8bb to 1"), "t.goal:3:8:", "expected a space");
    expect_error(LINE3("send b to 1"), "t.goal:3:6:", "expected a size");
    expect_error(LINE3("send 8.5b to 1"), "t.goal:3:7:", "expected 'b'");
    expect_error(LINE3("send 8b to 1x"), "t.goal:3:12:", "got '1x'");
    expect_error(LINE3("calc 12a"), "t.goal:3:6:", "got '12a'");
    expect_error(LINE3("calc -5"), "t.goal:3:6:", "negative");
    expect_error(LINE3("calc 9223372036854775808"), "t.goal:3:6:", "does not fit");
    expect_error(LINE3("send 8b to 1 tag 2147483648"), "t.goal:3:18:", "tag 2147483648");
    expect_error(LINE3("send 8b to 1 tag -1"), "t.goal:3:18:", "negative");
    expect_error(LINE3("recv 8b from -2"), "t.goal:3:14:", "negative");
    expect_error(LINE3("send 8b to 1 cpu 1"), "t.goal:3:18:", "one CPU per rank");
    expect_error(LINE3("recv 8b from 1 tag 0 cpu 0 nic 2"), "t.goal:3:32:", "one NIC per rank");
    expect_error("num_ranks 0\n", "t.goal:1:11:", "expected 1..");
    expect_error("num_ranks -4\n", "t.goal:1:11:", "negative");
    expect_error("num_ranks 4x\n", "t.goal:1:11:", "got '4x'");
    expect_error("num_ranks 4 5\n", "t.goal:1:13:", "expected end of line");
#undef LINE3
}

/* Dependency lines as Schedgen writes them (`b requires a`, which a fast
 * path reads) and in every other spelling the grammar allows (left to the
 * general parser): the same single dependency of op 1 on op 0, whichever
 * path read it. */
Test(goal, dependency_lines_in_every_spelling)
{
    static const char *const deps[] = {
        "b requires a", "b\trequires\ta", "  b requires a  \r", "b requires a // why",
        "b requires /* x */ a", "b  requires   a\t",
    };
    for (size_t k = 0; k < sizeof deps / sizeof deps[0]; k++) {
        char text[200];
        int n;
        snprintf(text, sizeof text, "num_ranks 2\nrank 0 {\na: send 4b to 1\nb: calc 5\n%s\n}\n"
                 "rank 1 {\nrecv 4b from 0\n}\n", deps[k]);
        cs_program_t *p = read_ok(text);
        const cs_dep_t *d = cs_program_preds(p, 1, &n);
        cr_assert_eq(n, 1, "'%s': one dependency, got %d", deps[k], n);
        cr_assert_eq(cs_dep_op(d[0]), 0, "'%s'", deps[k]);
        cr_assert_eq(cs_dep_kind(d[0]), CS_DEP_AFTER, "'%s'", deps[k]);
        cr_assert_eq(npreds(p, 0), 0, "'%s'", deps[k]);
        cs_program_free(p);
    }
    /* what the fast path leaves alone is reported as before */
    expect_error("num_ranks 1\nrank 0 {\na: calc 1\nb: calc 2\nb requires a x\n}\n", "t.goal:5:14:",
                 "expected end of line after the dependency");
    expect_error("num_ranks 1\nrank 0 {\na: calc 1\nb requires a\n}\n", "t.goal:4:1:",
                 "label 'b' is not defined");
    expect_error("num_ranks 1\nrank 0 {\na: calc 1\na requires 1a\n}\n", "t.goal:4:12:",
                 "expected a label after 'requires'");
}

Test(goal, error_label_used_before_definition)
{
    expect_error("num_ranks 1\nrank 0 {\nl2: calc 1\nl2 requires l1\nl1: calc 2\n}\n",
                 "t.goal:4:13:", "label 'l1' is not defined");
    expect_error("num_ranks 1\nrank 0 {\nl2: calc 1\nl1 irequires l2\n}\n",
                 "t.goal:4:1:", "label 'l1' is not defined");
    /* labels are local to their block */
    expect_error("num_ranks 2\nrank 0 {\nl1: calc 1\n}\nrank 1 {\nl2: calc 1\nl2 requires l1\n}\n",
                 "t.goal:7:13:", "not defined in the block of rank 1");
    expect_error("num_ranks 1\nrank 0 {\nl1: calc 1\nl1 requires\n}\n",
                 "t.goal:4:12:", "expected a label after 'requires'");
}

Test(goal, error_rank_out_of_range)
{
    expect_error("num_ranks 4\nrank 0 {\nl1: send 8b to 4\n}\n", "t.goal:3:16:", "out of range");
    expect_error("num_ranks 4\nrank 0 {\nl1: recv 8b from 7 tag 0\n}\n",
                 "t.goal:3:18:", "expected a rank in 0..3");
    expect_error("num_ranks 4\nrank 0 {\nmcast 8b to 1,2,9\n}\n", "t.goal:3:17:", "out of range");
    expect_error("num_ranks 4\nrank 5 {\n}\n", "t.goal:2:6:", "rank 5 is out of range");
    expect_error("num_ranks 4\nrank 0 {\n}\nrank 1 {\n}\nrank 2 {\n}\nrank 3 {\n}\nrank 4 {\n}\n",
                 "t.goal:10:6:", "out of range");
}

Test(goal, error_duplicate_label)
{
    expect_error("num_ranks 1\nrank 0 {\nl1: calc 1\nl1: calc 2\n}\n",
                 "t.goal:4:1:", "label 'l1' is already defined in the block of rank 0 (line 3)");
}

Test(goal, error_misordered_or_repeated_rank_block)
{
    expect_error("num_ranks 2\nrank 1 {\n}\nrank 0 {\n}\n", "t.goal:2:6:", "expected 'rank 0 {'");
    expect_error("num_ranks 2\nrank 0 {\n}\nrank 0 {\n}\n", "t.goal:4:6:", "already given");
    expect_error("num_ranks 1\nrank 0 {\n}\nrank 0 {\n}\n", "t.goal:4:6:", "expected end of file");
    expect_error("num_ranks 1\nrank 0 {\n}\ncalc 5\n", "t.goal:4:1:", "expected end of file");
    expect_error("num_ranks 1\nrank 0\n}\n", "t.goal:2:7:", "expected '{'");
    expect_error("num_ranks 1\nrank 0 { }\n", "t.goal:2:10:", "expected end of line");
    expect_error("num_ranks 1\nrank 0 {\n} x\n", "t.goal:3:3:", "expected end of line");
}

Test(goal, error_empty_file)
{
    expect_error("", "t.goal:1:1:", "empty file");
    expect_error("\n\n  // nothing\n", "t.goal:4:1:", "expected 'num_ranks N'");
}

Test(goal, error_binary_garbage)
{
    static const char elf[] = "\x7f"
                              "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0>\0";
    static const char nul[] = "num_ranks 1\nra\0nk 0 {\n}\n";
    static const char ctl[] = "num_ranks 1\nrank 0 {\n// \x01 in a comment\n}\n";
    static const char hi[] = "num_ranks 1\nrank 0 {\ncalc 1\xff\n}\n";
    expect_error_bytes(elf, sizeof elf - 1, "t.goal:1:1:", "0x7f");
    expect_error_bytes(nul, sizeof nul - 1, "t.goal:2:3:", "NUL byte");
    expect_error_bytes(ctl, sizeof ctl - 1, "t.goal:3:4:", "0x01");
    expect_error_bytes(hi, sizeof hi - 1, "t.goal:3:7:", "\\xff");
}

Test(goal, error_missing_num_ranks)
{
    expect_error("rank 0 {\n}\n", "t.goal:1:1:", "expected 'num_ranks N'");
    expect_error("// header\nnum_rank 2\n", "t.goal:2:1:", "got 'num_rank'");
}

Test(goal, error_dependency_cycle)
{
    /* reported at the dependency that closes the cycle (the last written) */
    expect_error("num_ranks 1\nrank 0 {\na: calc 1\nb: calc 2\nc: calc 3\n"
                 "a requires b\nb requires c\n  c irequires a\n}\n",
                 "t.goal:8:3:", "dependency cycle in the block of rank 0");
    expect_error("num_ranks 2\nrank 0 {\n}\nrank 1 {\nx: calc 1\ny: calc 1\nz: calc 1\n"
                 "z requires x\ny requires x\nx requires y\n}\n",
                 "t.goal:10:1:", "'x requires y'");
    expect_error("num_ranks 1\nrank 0 {\na: calc 1\na requires a\n}\n",
                 "t.goal:4:1:", "wait for itself");
}

Test(goal, error_other_rules)
{
    expect_error("num_ranks 1\nrank 0 {\n/* never closed\ncalc 1\n}\n",
                 "t.goal:3:1:", "never closed");
    expect_error("num_ranks 3\nrank 0 {\nmcast 8b to 1,2,1\n}\n", "t.goal:3:17:", "twice");
    expect_error("num_ranks 3\nrank 0 {\nmcast 8b to 1,\n}\n",
                 "t.goal:3:15:", "expected a destination rank");
    expect_error("num_ranks 1\nrank 0 {\na: calc 5\nb: reduce 8b\nb streams a\n}\n",
                 "t.goal:5:11:", "calc without bytes");
    expect_error("num_ranks 1\nrank 0 {\na: calc 5\nb: calc 5\na requires b c\n}\n",
                 "t.goal:5:14:", "expected end of line");
}

Test(goal, error_messages_use_the_given_name)
{
    cs_program_t *p;
    cs_error_t e = {0, ""};
    cr_assert_eq(cs_goal_read_string("num_ranks 1\nrank 0 {\n", NULL, &p, &e), CS_ERR_PARSE);
    cr_assert(strncmp(e.msg, "<string>:3:1:", 13) == 0, "%s", e.msg);
    cr_assert_eq(cs_goal_read_string("num_ranks 1\nrank 0 {\n", "bcast.goal", &p, &e),
                 CS_ERR_PARSE);
    cr_assert(strncmp(e.msg, "bcast.goal:3:1:", 15) == 0, "%s", e.msg);
}

/* ---- the op order (`// collsim order:`) ---------------------------------- */

/* Ops get the ids the order lines give, wherever outside the blocks they
 * stand (tabs, CR and several lines allowed); labels, lines and
 * dependencies follow their ops. */
Test(goal, op_order_lines_give_the_ids)
{
    static const char text[] = "num_ranks 2\n"
                               "  // collsim order: 1:1\t0:2 \r\n"
                               "\n"
                               "rank 0 {\n"
                               "a: send 8b to 1 tag 0\n"
                               "b: recv 8b from 1 tag 0\n"
                               "b requires a\n"
                               "}\n"
                               "// collsim order: 1:1\n"
                               "rank 1 {\n"
                               "x: recv 8b from 0 tag 0\n"
                               "y: send 8b to 0 tag 0\n"
                               "y requires x\n"
                               "}\n";
    cs_program_t *p = read_ok(text);
    int n;
    const cs_dep_t *d;
    check_op(p, 0, CS_OP_RECV, 1, 0, 8, 0, 11, "x");
    check_op(p, 1, CS_OP_SEND, 0, 1, 8, 0, 5, "a");
    check_op(p, 2, CS_OP_RECV, 0, 1, 8, 0, 6, "b");
    check_op(p, 3, CS_OP_SEND, 1, 0, 8, 0, 12, "y");
    d = cs_program_preds(p, 2, &n);
    cr_assert(n == 1 && cs_dep_op(d[0]) == 1 && cs_dep_kind(d[0]) == CS_DEP_AFTER);
    d = cs_program_preds(p, 3, &n);
    cr_assert(n == 1 && cs_dep_op(d[0]) == 0);
    d = cs_program_succs(p, 0, &n);
    cr_assert(n == 1 && cs_dep_op(d[0]) == 3);
    /* written back: the same ops, one order line */
    char *t = write_text(p);
    cr_assert(strstr(t, "num_ranks 2\n// collsim order: 1:1 0:2 1:1\n\nrank 0 {\n"), "%s", t);
    cs_program_t *q = read_ok(t);
    assert_same_program(p, q);
    free(t);
    cs_program_free(q);
    cs_program_free(p);
}

/* Order lines before the first block: the ops are placed at their ids as
 * they are read (issue 34), runs up and down, and a rank in several runs.
 * By the runs: 2-0:1 gives ids 0 1 2 to the first op of ranks 2 1 0;
 * 0:2 gives 3 4 to rank 0's second and third; 1-2:1 gives 5 to rank 1's
 * second, 6 to rank 2's second. */
Test(goal, op_order_before_the_blocks_places_the_ops)
{
    static const char text[] = "num_ranks 3\n"
                               "// collsim order: 2-0:1 0:2 1-2:1\n"
                               "rank 0 {\n"
                               "a: send 8b to 1 tag 0\n"
                               "b: calc 5\n"
                               "c: recv 4b from 2 tag 1\n"
                               "c requires a\n"
                               "}\n"
                               "rank 1 {\n"
                               "d: recv 8b from 0 tag 0\n"
                               "e: send 2b to 2 tag 0\n"
                               "e requires d\n"
                               "}\n"
                               "rank 2 {\n"
                               "f: send 4b to 0 tag 1\n"
                               "g: recv 2b from 1 tag 0\n"
                               "}\n";
    cs_program_t *p = read_ok(text);
    int n;
    const cs_dep_t *d;
    cr_assert_eq(cs_program_nops(p), 7);
    check_op(p, 0, CS_OP_SEND, 2, 0, 4, 1, 15, "f");
    check_op(p, 1, CS_OP_RECV, 1, 0, 8, 0, 10, "d");
    check_op(p, 2, CS_OP_SEND, 0, 1, 8, 0, 4, "a");
    cr_assert_eq(cs_program_op(p, 3)->kind, CS_OP_CALC);
    cr_assert_str_eq(cs_program_label(p, 3), "b");
    check_op(p, 4, CS_OP_RECV, 0, 2, 4, 1, 6, "c");
    check_op(p, 5, CS_OP_SEND, 1, 2, 2, 0, 11, "e");
    check_op(p, 6, CS_OP_RECV, 2, 1, 2, 0, 16, "g");
    d = cs_program_preds(p, 4, &n);
    cr_assert(n == 1 && cs_dep_op(d[0]) == 2);
    d = cs_program_preds(p, 5, &n);
    cr_assert(n == 1 && cs_dep_op(d[0]) == 1);
    cs_program_free(p);
}

/* A block with more ops than the order gives its rank, with placement:
 * the same message as without (the check at the end of the file). */
Test(goal, op_order_before_the_blocks_with_an_op_too_many)
{
    static const char text[] = "num_ranks 2\n"
                               "// collsim order: 0-1:1\n"
                               "rank 0 {\n"
                               "a: send 8b to 1 tag 0\n"
                               "b: calc 5\n"
                               "}\n"
                               "rank 1 {\n"
                               "d: recv 8b from 0 tag 0\n"
                               "}\n";
    cs_program_t *p = NULL;
    cs_error_t e;
    cr_assert_eq(cs_goal_read_string(text, "o.goal", &p, &e), CS_ERR_PARSE);
    cr_assert_null(p);
    cr_assert_str_eq(e.msg, "o.goal:2:1: the op order gives rank 0 1 of the 2 ops of its block; "
                            "expected every op of every block exactly once (without '"
                            "// collsim order:' lines, ops are numbered in file order)");
}

#define ORDER "// collsim order:"

/* Rank by rank needs no order line; steps over consecutive ranks are
 * ranges; a long order wraps over lines of at most 100 characters; all
 * read back. */
Test(goal, op_order_written_only_when_needed_and_wrapped)
{
    const int P = 40;
    cs_program_t *p = cs_program_new(P), *q;
    cs_error_t e = {0, ""};
    char *t, *line;
    for (int r = 0; r < P; r++)
        cs_program_calc(p, r, r, 0);
    cs_program_set_time_unit(p, 1e-9);
    cr_assert_eq(cs_program_finalize(p, &e), CS_OK, "%s", e.msg);
    t = write_text(p);
    cr_assert_null(strstr(t, "collsim order"), "%s", t);
    free(t);
    cs_program_free(p);

    p = cs_program_new(P);
    for (int k = 0; k < 3; k++) /* step-major, as the suite builds */
        for (int r = 0; r < P; r++)
            cs_program_calc(p, k == 1 ? P - 1 - r : r, 10 * k + r, 0);
    cs_program_set_time_unit(p, 1e-9);
    cr_assert_eq(cs_program_finalize(p, &e), CS_OK, "%s", e.msg);
    t = write_text(p);
    cr_assert(strstr(t, "\n// collsim order: 0-38:1 39:2 38-1:1 0:2 1-39:1\n"), "%s", t);
    q = read_ok(t);
    assert_same_program(p, q);
    for (int32_t i = 0; i < 3 * P; i++)
        cr_assert_eq(cs_program_op(q, i)->ticks, 10 * (i / P) + i % P, "op %d", i);
    free(t);
    cs_program_free(q);
    cs_program_free(p);

    p = cs_program_new(P);
    for (int k = 0; k < 3; k++) /* ranks in a scattered order: no ranges */
        for (int r = 0; r < P; r++)
            cs_program_calc(p, (7 * r) % P, 10 * k + r, 0);
    cs_program_set_time_unit(p, 1e-9);
    cr_assert_eq(cs_program_finalize(p, &e), CS_OK, "%s", e.msg);
    t = write_text(p);
    int lines = 0;
    for (line = strstr(t, ORDER); line; line = strstr(line + 1, ORDER)) {
        size_t len = strcspn(line, "\n");
        cr_assert_leq(len, 100, "%.*s", (int)len, line);
        lines++;
    }
    cr_assert_geq(lines, 7, "%s", t);
    q = read_ok(t);
    assert_same_program(p, q);
    for (int32_t i = 0; i < 3 * P; i++)
        cr_assert_eq(cs_program_op(q, i)->ticks, 10 * (i / P) + i % P, "op %d", i);
    char *t2 = write_text(q);
    cr_assert_str_eq(t2, t);
    free(t2);
    free(t);
    cs_program_free(q);
    cs_program_free(p);
}

#define TWO_BLOCKS "rank 0 {\ncalc 1\n}\nrank 1 {\ncalc 2\n}\n"

Test(goal, error_op_order)
{
    expect_error("// collsim order: 0:1\nnum_ranks 1\nrank 0 {\ncalc 1\n}\n", "t.goal:1:1:",
                 "before 'num_ranks N'");
    expect_error("num_ranks 1\nrank 0 {\ncalc 1\n  // collsim order: 0:1\n}\n", "t.goal:4:3:",
                 "inside the block of rank 0 opened at line 2");
    expect_error("num_ranks 2\n// collsim order: 0:1 1-2\n" TWO_BLOCKS, "t.goal:2:23:",
                 "expected RANK:COUNT");
    expect_error("num_ranks 2\n// collsim order: 0:\n" TWO_BLOCKS, "t.goal:2:19:", "got '0:'");
    expect_error("num_ranks 2\n// collsim order: :1\n" TWO_BLOCKS, "t.goal:2:19:", "RANK:COUNT");
    expect_error("num_ranks 2\n// collsim order: 0:1:1\n" TWO_BLOCKS, "t.goal:2:19:", "RANK:COUNT");
    expect_error("num_ranks 2\n// collsim order: 0:99999999999\n" TWO_BLOCKS, "t.goal:2:19:",
                 "RANK:COUNT");
    expect_error("num_ranks 2\n// collsim order: 2:1\n" TWO_BLOCKS, "t.goal:2:19:",
                 "rank 2 in the op order is out of range; expected a rank in 0..1");
    expect_error("num_ranks 2\n// collsim order: 0:0\n" TWO_BLOCKS, "t.goal:2:21:",
                 "count 0 in the op order is out of range");
    /* checked against the blocks at the end */
    expect_error("num_ranks 2\n// collsim order: 1:1\n// collsim order: 0:2\n" TWO_BLOCKS,
                 "t.goal:3:19:", "rank 0 2 ops up to here, but its block has 1");
    expect_error("num_ranks 2\n\n// collsim order: 0:1\n" TWO_BLOCKS, "t.goal:3:1:",
                 "rank 1 0 of the 1 ops of its block");
    expect_error("num_ranks 2\n// collsim order: 0:1 1:1\nrank 0 {\ncalc 1\n}\nrank 1 {\n}\n",
                 "t.goal:2:23:", "rank 1, whose block has none");
    expect_error("num_ranks 2\n// collsim order:\n" TWO_BLOCKS, "t.goal:2:1:",
                 "rank 0 0 of the 1 ops");
    /* ranges */
    expect_error("num_ranks 2\n// collsim order: 0-2:1\n" TWO_BLOCKS, "t.goal:2:21:",
                 "rank 2 in the op order is out of range");
    expect_error("num_ranks 2\n// collsim order: 0-:1\n" TWO_BLOCKS, "t.goal:2:19:",
                 "FIRST-LAST:COUNT");
    expect_error("num_ranks 2\n// collsim order: 0-1:1 1:1\n" TWO_BLOCKS, "t.goal:2:25:",
                 "rank 1 2 ops up to here, but its block has 1");
    expect_error("num_ranks 3\n// collsim order: 2-0:1\n" TWO_BLOCKS "rank 2 {\n}\n",
                 "t.goal:2:19:", "rank 2, whose block has none");
    cs_program_t *p = read_ok("num_ranks 3\n// collsim order: 2-1:1 0:1\n" TWO_BLOCKS
                              "rank 2 {\ncalc 3\n}\n");
    for (int32_t i = 0; i < 3; i++)
        cr_assert_eq(cs_program_op(p, i)->ticks, 3 - i, "op %d", i);
    cs_program_free(p);
}

/* Random interleavings (runs, ranges up and down, repeats) survive writing
 * and reading: every op keeps its id. */
Test(goal, op_order_random_round_trips)
{
    uint64_t x = 88172645463325252ULL;
    for (int trial = 0; trial < 300; trial++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int P = 1 + (int)(x % 6), n = (int)((x >> 8) % 80), rank = 0;
        cs_program_t *p = cs_program_new(P), *q;
        cs_error_t e = {0, ""};
        char *t;
        for (int i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            switch (x % 4) { /* stay, step up, step down, jump */
            case 1: rank = (rank + 1) % P; break;
            case 2: rank = (rank + P - 1) % P; break;
            case 3: rank = (int)((x >> 20) % (uint64_t)P); break;
            default: break;
            }
            cs_program_calc(p, rank, i, 0);
        }
        cs_program_set_time_unit(p, 1e-9);
        cr_assert_eq(cs_program_finalize(p, &e), CS_OK, "%s", e.msg);
        q = reread(p, &t);
        for (int32_t i = 0; i < n; i++) {
            cr_assert_eq(cs_program_op(q, i)->rank, cs_program_op(p, i)->rank, "trial %d op %d\n%s",
                         trial, i, t);
            cr_assert_eq(cs_program_op(q, i)->ticks, i, "trial %d op %d\n%s", trial, i, t);
        }
        free(t);
        cs_program_free(q);
        cs_program_free(p);
    }
}

/* ---- reading speed: the fast path and the line sources ------------------ */

/* Same ops, dependencies, labels and lines. */
static void assert_same_origins(const cs_program_t *p, const cs_program_t *q)
{
    assert_same_program(p, q);
    for (int32_t i = 0; i < cs_program_nops(p); i++) {
        const char *a = cs_program_label(p, i), *b = cs_program_label(q, i);
        cr_assert_eq(cs_program_line(q, i), cs_program_line(p, i), "op %d line", i);
        cr_assert_eq(a == NULL, b == NULL, "op %d label", i);
        if (a)
            cr_assert_str_eq(b, a, "op %d label", i);
    }
}

Test(goal, fast_path_and_general_parser_read_the_same_program)
{
    /* Schedgen's form, which the fast path takes, against the same
     * statements in forms it leaves to the general parser (space before
     * ':', a comment, cpu/nic fields, no tag, a wildcard-free recv with
     * fields in a second line of the same shape), line for line. */
    static const char fast[] = "num_ranks 3\n"
                               "rank 0 {\n"
                               "l1: send 8b to 1 tag 0\n"
                               "l2: recv 16b from 2 tag 7\n"
                               "l3: send 1b to 2\n"
                               "l3 requires l2\n"
                               "calc 5\n"
                               "}\n"
                               "rank 1 {\n"
                               "a_1:\tsend 0b\tto 2\ttag 2147483647  \r\n"
                               "b: recv 8b from 0 tag 0\n"
                               "}\n"
                               "rank 2 {\n"
                               "x: recv 1b from 0 tag 0\n"
                               "y: send 16b to 0 tag 7\n"
                               "z: recv 0b from 1 tag 2147483647\n"
                               "}\n";
    static const char general[] = "num_ranks 3\n"
                                  "rank 0 {\n"
                                  "l1 : send 8b to 1 tag 0\n"
                                  "l2: recv 16b from 2 tag 7 cpu 0\n"
                                  "l3: send 1b to 2 tag 0 // a comment\n"
                                  "l3 requires l2\n"
                                  "calc 5\n"
                                  "}\n"
                                  "rank 1 {\n"
                                  "a_1: /* c */ send 0b to 2 tag 2147483647 nic 0\n"
                                  "b: recv 8b from 0 tag 0 cpu 0 nic 0\n"
                                  "}\n"
                                  "rank 2 {\n"
                                  "x : recv 1b from 0\n"
                                  "y: send 16b to 0 tag 7 /**/\n"
                                  "z :recv 0b from 1 tag 2147483647\n"
                                  "}\n";
    cs_program_t *p = read_ok(fast), *q = read_ok(general);
    cr_assert_eq(cs_program_nops(p), 9);
    check_op(p, 0, CS_OP_SEND, 0, 1, 8, 0, 3, "l1");
    check_op(p, 1, CS_OP_RECV, 0, 2, 16, 7, 4, "l2");
    check_op(p, 2, CS_OP_SEND, 0, 2, 1, 0, 5, "l3");
    check_op(p, 4, CS_OP_SEND, 1, 2, 0, 2147483647, 10, "a_1");
    check_op(p, 8, CS_OP_RECV, 2, 1, 0, 2147483647, 16, "z");
    cr_assert_eq(npreds(p, 2), 1);
    assert_same_origins(p, q);
    cs_program_free(p);
    cs_program_free(q);
}

Test(goal, fast_path_leaves_errors_to_the_general_parser)
{
    /* Lines of Schedgen's shape with one thing wrong: each error is the
     * general parser's, at the offending token. */
    static const char head[] = "num_ranks 2\nrank 0 {\n";
    static const struct {
        const char *line, *where, *what;
    } cases[] = {
        {"l1: send 8b to 2 tag 0\n", "t.goal:3:16:", "out of range"},
        {"l1: send 8b to 1 tag 2147483648\n", "t.goal:3:22:", "out of range"},
        {"l1: recv 8b from 1x tag 0\n", "t.goal:3:18:", "'1x'"},
        {"l1: send 8bx to 1 tag 0\n", "t.goal:3:12:", "'x'"},
        {"l1: send 8b to 1 tag 0 x\n", "t.goal:3:24:", "'x'"},
        {"l1: send 8b to 1 tag 0\nl1: recv 8b from 1 tag 0\n", "t.goal:4:1:", "already defined"},
        {"l1: send 8b to 1 tag -1\n", "t.goal:3:22:", "'-1'"},
        {"l1: send 9999999999999999999b to 1\n", "t.goal:3:10:", "does not fit in 64 bits"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char text[256];
        snprintf(text, sizeof text, "%s%s}\nrank 1 {\n}\n", head, cases[k].line);
        expect_error(text, cases[k].where, cases[k].what);
    }
}

/* Writes text to a temporary file; returns its path (to free and unlink). */
static char *temp_file(const char *text, size_t n)
{
    char *path = strdup("/tmp/test_goal_XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    for (size_t done = 0; done < n;) {
        ssize_t w = write(fd, text + done, n - done);
        cr_assert(w > 0);
        done += (size_t)w;
    }
    close(fd);
    return path;
}

Test(goal, file_stream_and_string_read_the_same_past_long_lines)
{
    /* Comment lines as long as a line may be (CS_LINES_MAX: the stream
     * buffer's first 1 MiB does not hold one with its '\n') and together
     * past the mapped file's release step (16 MiB), then ops: the mapped
     * file, a stream read in chunks and the string in place give one
     * program. */
    enum { K = 17 };
    const size_t big = K * (CS_LINES_MAX + 1);
    const char *head = "num_ranks 2\n", *tail = "rank 0 {\nl1: send 8b to 1 tag 0\n"
                                                 "l2: recv 8b from 1 tag 0\nl2 requires l1\n}\n"
                                                 "rank 1 {\nrecv 8b from 0 tag 0\n"
                                                 "send 8b to 0 tag 0\n}";
    size_t nh = strlen(head), nt = strlen(tail), n = nh + big + nt;
    char *text = malloc(n + 1);
    memcpy(text, head, nh);
    for (int k = 0; k < K; k++) {
        char *line = text + nh + k * (CS_LINES_MAX + 1);
        memcpy(line, "//", 2);
        memset(line + 2, 'c', CS_LINES_MAX - 2);
        line[CS_LINES_MAX] = '\n';
    }
    memcpy(text + nh + big, tail, nt + 1);
    char *path = temp_file(text, n);
    cs_program_t *a = read_ok(text), *b = NULL, *c = NULL;
    cs_error_t e = {0, ""};
    cr_assert_eq(cs_goal_read_file(path, &b, &e), CS_OK, "%s", e.msg);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    cr_assert_eq(cs_goal_read_stream(f, "t.goal", &c, &e), CS_OK, "%s", e.msg);
    fclose(f);
    cr_assert_eq(cs_program_nops(a), 4);
    check_op(a, 1, CS_OP_RECV, 0, 1, 8, 0, 2 + K + 2, "l2");
    cr_assert_eq(npreds(a, 1), 1);
    assert_same_origins(a, b);
    assert_same_origins(a, c);
    /* the last line has no '\n': an error there names the column after it */
    text[n - 1] = 'x'; /* "...}" -> "...x" inside the block of rank 1 */
    expect_error_bytes(text, n, "t.goal:27:1:", NULL);
    unlink(path);
    free(path);
    free(text);
    cs_program_free(a);
    cs_program_free(b);
    cs_program_free(c);
}
