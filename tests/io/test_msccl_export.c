/*
 * test_msccl_export.c - `collsim export --format msccl` (src/io/msccl_write.c)
 * against the MSCCL reader (src/io/msccl.c).
 *
 * Oracle: the round trip compares two independent paths, the suite's
 * builder (the program an algorithm emits) and the reader (the program a
 * file makes).  For every algorithm of allreduce, allgather, reduce-scatter,
 * alltoall, broadcast and reduce at P = 8 and P = 6 (where the algorithm
 * builds): the two programs have the same ops under the same ids (rank,
 * kind, peer, bytes, data range and mode), the same message matching
 * (computed here, per source, destination and tag in posting order) and
 * the same dependencies up to transitivity (ancestor sets computed here);
 * and both run to the same tick on two machines with --validate passing.
 * Tags are not compared: the reader tags a message with its thread block.
 * An algorithm the writer refuses must be one this file expects refused,
 * for the reason written beside it (found by reading the algorithms:
 * multicasts, streamed or after-start waits, 0-byte tokens, ...).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/check.h"
#include "coll/coll.h"
#include "engine/exec.h"
#include "io/algofile.h"
#include "io/msccl.h"
#include "io/msccl_write.h"
#include "machines/machine.h"

/* ---- building and running ------------------------------------------------------ */

static const cs_coll_hints_t no_hints; /* as `collsim export` without --machine */

static cs_coll_args_t args_for(cs_coll_kind_t kind, int P, int64_t bytes)
{
    return (cs_coll_args_t){kind, P, bytes, 0, 4096, &no_hints, NULL, 0};
}

/* Runs p on machine spec with --validate; the finish tick, or -1 with err. */
static cs_tick_t run_prog(const char *spec, const cs_coll_args_t *a, const cs_program_t *p,
                          cs_error_t *err)
{
    cs_machine_t *m = NULL;
    cs_exec_env_t env;
    cs_exec_opts_t o;
    cs_exec_result_t res;
    cs_coll_check_t *chk = NULL;
    cs_tick_t t = -1;
    memset(&res, 0, sizeof res);
    if (cs_machine_new(spec, &m, err))
        return -1;
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    if (!cs_coll_check_new(a, p, 12345, &chk, err)) {
        o.observer = cs_coll_check_observer(chk);
        if (!cs_exec_run(&env, p, &o, &res, err) && !cs_coll_check_verify(chk, err))
            t = res.finish;
    }
    cs_coll_check_free(chk);
    cs_exec_result_destroy(&res);
    cs_machine_free(m);
    return t;
}

/* Writes p as MSCCL XML into *text (caller frees); the writer's status. */
static int export_text(const cs_program_t *p, const cs_coll_args_t *a, const char *name,
                       int64_t chunks, char **text, cs_error_t *err)
{
    size_t len = 0;
    FILE *f = open_memstream(text, &len);
    cs_msccl_write_opts_t o = {name, chunks, NULL};
    cr_assert_not_null(f);
    int rc = cs_msccl_write(p, a, &o, f, err);
    fclose(f);
    return rc;
}

/* Reads text back with the reader and builds it for a. */
static int read_back(const char *text, const cs_coll_args_t *a, cs_program_t **out,
                     cs_error_t *err)
{
    cs_coll_algo_t *algo = NULL;
    cs_source_t src = {"export.xml", text, strlen(text)};
    int rc = cs_algofile_read("msccl", &src, a->kind, "msccl:export.xml", &algo, err);
    *out = NULL;
    if (!rc)
        rc = cs_coll_build(algo, a, out, err);
    cs_algofile_free(algo);
    return rc;
}

/* ---- comparing programs (written here, not the writer's code) ------------------- */

typedef struct msg {
    int32_t src, dst, tag, id;
} msg_t;

static int msg_order(const void *x, const void *y)
{
    const msg_t *a = x, *b = y;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst)
        return a->dst < b->dst ? -1 : 1;
    if (a->tag != b->tag)
        return a->tag < b->tag ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* match[i]: the recv a send i is matched with and the reverse (MPI order). */
static int32_t *matching(const cs_program_t *p)
{
    int32_t n = cs_program_nops(p), ns = 0, nr = 0;
    msg_t *s = calloc((size_t)n + 1, sizeof *s), *r = calloc((size_t)n + 1, sizeof *r);
    int32_t *m = malloc(((size_t)n + 1) * sizeof *m);
    for (int32_t i = 0; i < n; i++) {
        const cs_op_t *op = cs_program_op(p, i);
        m[i] = -1;
        if (op->kind == CS_OP_SEND)
            s[ns++] = (msg_t){op->rank, op->peer, op->tag, i};
        else if (op->kind == CS_OP_RECV)
            r[nr++] = (msg_t){op->peer, op->rank, op->tag, i};
    }
    qsort(s, (size_t)ns, sizeof *s, msg_order);
    qsort(r, (size_t)nr, sizeof *r, msg_order);
    cr_assert_eq(ns, nr);
    for (int32_t i = 0; i < ns; i++) {
        cr_assert(s[i].src == r[i].src && s[i].dst == r[i].dst && s[i].tag == r[i].tag,
                  "unmatched message at op %d", s[i].id);
        m[s[i].id] = r[i].id;
        m[r[i].id] = s[i].id;
    }
    free(s);
    free(r);
    return m;
}

/* anc[i]: bit j set when op j (same program) must complete before op i
 * starts, transitively.  n^2 bits: fine for the sizes below. */
static uint8_t *ancestors(const cs_program_t *p)
{
    int32_t n = cs_program_nops(p);
    size_t row = ((size_t)n + 7) / 8;
    uint8_t *a = calloc((size_t)n * row + 1, 1);
    /* ids are not a topological order in general: repeat until stable */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int32_t i = 0; i < n; i++) {
            int np;
            const cs_dep_t *d = cs_program_preds(p, i, &np);
            for (int k = 0; k < np; k++) {
                int32_t x = cs_dep_op(d[k]);
                uint8_t *ri = a + (size_t)i * row, *rx = a + (size_t)x * row;
                uint8_t bit = (uint8_t)(1u << (x & 7));
                if (!(ri[x >> 3] & bit)) {
                    ri[x >> 3] |= bit;
                    changed = 1;
                }
                for (size_t w = 0; w < row; w++)
                    if ((rx[w] | ri[w]) != ri[w]) {
                        ri[w] |= rx[w];
                        changed = 1;
                    }
            }
        }
    }
    return a;
}

/* Empty string when p and q are the same program (see the head of the
 * file), else what differs first. */
static const char *compare_programs(const cs_program_t *p, const cs_program_t *q)
{
    static char why[512];
    int32_t n = cs_program_nops(p);
    why[0] = '\0';
    if (cs_program_nranks(p) != cs_program_nranks(q) || n != cs_program_nops(q)) {
        snprintf(why, sizeof why, "%d ranks %d ops, read back %d ranks %d ops",
                 cs_program_nranks(p), n, cs_program_nranks(q), cs_program_nops(q));
        return why;
    }
    for (int32_t i = 0; i < n && !why[0]; i++) {
        const cs_op_t *a = cs_program_op(p, i), *b = cs_program_op(q, i);
        const cs_data_t *da = cs_program_data(p, i), *db = cs_program_data(q, i);
        int same = a->kind == b->kind && a->rank == b->rank && a->bytes == b->bytes &&
                   (a->kind == CS_OP_CALC ? a->ticks == b->ticks : a->peer == b->peer) &&
                   !da == !db &&
                   (!da || (da->off == db->off && da->len == db->len && da->mode == db->mode));
        if (!same) {
            char x[128], y[128];
            cs_program_describe(p, i, x, sizeof x);
            cs_program_describe(q, i, y, sizeof y);
            snprintf(why, sizeof why, "op %d: %s, read back %s", i, x, y);
        }
    }
    if (why[0])
        return why;
    int32_t *mp = matching(p), *mq = matching(q);
    for (int32_t i = 0; i < n && !why[0]; i++)
        if (mp[i] != mq[i])
            snprintf(why, sizeof why, "op %d is matched with op %d, read back with op %d", i,
                     mp[i], mq[i]);
    free(mp);
    free(mq);
    if (why[0])
        return why;
    uint8_t *ap = ancestors(p), *aq = ancestors(q);
    size_t row = ((size_t)n + 7) / 8;
    for (int32_t i = 0; i < n && !why[0]; i++)
        if (memcmp(ap + (size_t)i * row, aq + (size_t)i * row, row)) {
            int32_t j = 0;
            while (((ap[(size_t)i * row + (size_t)j / 8] ^ aq[(size_t)i * row + (size_t)j / 8]) >>
                    (j & 7) & 1) == 0)
                j++;
            snprintf(why, sizeof why, "op %d %s op %d, read back %s", i,
                     (ap[(size_t)i * row + (size_t)j / 8] >> (j & 7) & 1) ? "waits for"
                                                                          : "does not wait for",
                     j, (ap[(size_t)i * row + (size_t)j / 8] >> (j & 7) & 1) ? "not" : "it does");
        }
    free(ap);
    free(aq);
    return why;
}

/* ---- the refusals expected (from reading the algorithms) ------------------------ */

static const struct {
    const char *algo, *reason;
} expected_refusals[] = {
    {"broadcast/thesis", "multicast"},           /* one mcast to the group */
    {"reduce/scalar", "stream"},                 /* the thesis's visits stream (stream=1) */
    {"reduce/thesis-chain", "stream"},
    {"reduce/tree", "stream"},
    {"reduce/two-phase", "stream"},
    {"reduce/preorder", "stream"},
    {"reduce/left-right", "stream"},
    {"reduce/ring", "stream"},
    {"reduce/jump", "stream"},
    {"reduce/2d-chain", "stream"},
    {"reduce/2d-tree", "stream"},
    {"reduce/2d-two-phase", "stream"},
    {"reduce/mailbox", "0 bytes"},               /* the Cell's mailbox barrier tokens */
    {"allreduce/naive", "stream"},
    {"allreduce/2d-naive", "stream"},
    {"allreduce/rdb-barrier", "0 bytes"},        /* barrier tokens between rounds */
    {"allgather/bruck", "scratch"},              /* its rotation buffer runs past the buffer */
    {"allgather/cns-ring", "start"},             /* CNS-1 after-start injection */
    {"allgather/cns-two-way", "start"},
};

static const char *expected_reason(const char *name)
{
    for (size_t i = 0; i < sizeof expected_refusals / sizeof *expected_refusals; i++)
        if (!strcmp(expected_refusals[i].algo, name))
            return expected_refusals[i].reason;
    return NULL;
}

/* ---- the round trip over the suite ------------------------------------------------ */

static const cs_coll_kind_t six[] = {CS_COLL_ALLREDUCE, CS_COLL_ALLGATHER,
                                     CS_COLL_REDUCE_SCATTER, CS_COLL_ALLTOALL,
                                     CS_COLL_BROADCAST, CS_COLL_REDUCE};

static int is_six(cs_coll_kind_t k)
{
    for (size_t i = 0; i < sizeof six / sizeof *six; i++)
        if (six[i] == k)
            return 1;
    return 0;
}

/* Sizes every piece of which is a multiple of 4 KiB: the vector P x 128
 * KiB, blocks of 64 KiB. */
static int64_t bytes_for(cs_coll_kind_t k, int P)
{
    return k == CS_COLL_ALLREDUCE || k == CS_COLL_BROADCAST || k == CS_COLL_REDUCE
               ? (int64_t)P * 131072
               : 65536;
}

static void round_trip_all(int P)
{
    int count, exported = 0, refused = 0, skipped = 0;
    const cs_coll_algo_t *const *algos = cs_coll_algos(&count);
    char ring[64], fat[] = "net:gen=fattree,k=4,n=2";
    snprintf(ring, sizeof ring, "alphabeta:topo=ring,p=%d", P);
    const char *machines[] = {ring, fat};
    fprintf(stderr, "\nMSCCL export round trip, P = %d (ticks on %s / %s):\n", P, ring, fat);
    for (int i = 0; i < count; i++) {
        const cs_coll_algo_t *al = algos[i];
        char name[96];
        cs_error_t err = {0};
        cs_program_t *p = NULL, *q = NULL;
        char *text = NULL;
        if (!is_six(al->kind))
            continue;
        snprintf(name, sizeof name, "%s/%s", cs_coll_name(al->kind), al->name);
        cs_coll_args_t a = args_for(al->kind, P, bytes_for(al->kind, P));
        if (cs_coll_build(al, &a, &p, &err)) {
            /* the algorithm does not build at this P (a power of two, a grid) */
            cr_expect_neq(P, 8, "%s does not build at P = 8: %s", name, err.msg);
            fprintf(stderr, "  %-34s not at P = %d: %s\n", name, P, err.msg);
            skipped++;
            continue;
        }
        int rc = export_text(p, &a, name, 0, &text, &err);
        const char *want = expected_reason(name);
        if (rc) {
            refused++;
            cr_expect_eq(rc, CS_ERR_RANGE, "%s: %s", name, err.msg);
            cr_expect(strstr(err.msg, name) && strstr(err.msg, "cannot be written as MSCCL XML: "),
                      "%s: the refusal names neither it nor a reason: %s", name, err.msg);
            cr_expect(want && strstr(err.msg, want), "%s refused, not for '%s': %s", name,
                      want ? want : "(expected exported)", err.msg);
            fprintf(stderr, "  %-34s refused: %s\n", name,
                    strstr(err.msg, "XML: ") ? strstr(err.msg, "XML: ") + 5 : err.msg);
        } else {
            exported++;
            cr_expect(!want || P != 8, "%s exported, expected refused for '%s'", name, want);
            rc = read_back(text, &a, &q, &err);
            cr_expect_eq(rc, CS_OK, "%s: read back: %s", name, err.msg);
            if (!rc) {
                /* the file holds the program the joins stand for (the
                 * times below compare it with the joined one's run) */
                cs_program_t *direct = NULL;
                cr_assert_eq(cs_program_without_joins(p, &direct, &err), CS_OK, "%s", err.msg);
                const char *why = compare_programs(direct ? direct : p, q);
                cs_program_free(direct);
                cr_expect(!why[0], "%s: not the same program: %s", name, why);
                fprintf(stderr, "  %-34s exported:", name);
                /* NCCL's algorithms run their messages under a protocol
                 * (docs/nccl.md): the file names it in <algo proto>, and
                 * the reader reports it without modelling it (its bytes
                 * are the payload, Simple's wire bytes too), so the
                 * read-back runs as the suite's program without the
                 * protocol's latency */
                for (int32_t o = 0; o < cs_program_nops(p); o++) {
                    int pr = cs_program_op(p, o)->proto;
                    if (pr) {
                        char attr[64];
                        snprintf(attr, sizeof attr, "proto=\"%s\"", cs_proto_name((cs_proto_t)pr));
                        cr_expect(strstr(text, attr), "%s: no %s in the file", name, attr);
                        cr_expect_eq(pr, CS_PROTO_SIMPLE, "%s: the default protocol", name);
                        cs_program_set_proto_lat(p, (cs_proto_t)pr, 0);
                        break;
                    }
                }
                for (int k = 0; k < 2; k++) {
                    cs_error_t e1 = {0}, e2 = {0};
                    cs_tick_t t1 = run_prog(machines[k], &a, p, &e1);
                    cs_tick_t t2 = run_prog(machines[k], &a, q, &e2);
                    cr_expect(t1 >= 0, "%s on %s: suite: %s", name, machines[k], e1.msg);
                    cr_expect(t2 >= 0, "%s on %s: read back: %s", name, machines[k], e2.msg);
                    cr_expect_eq(t1, t2, "%s on %s: suite %lld ticks, read back %lld", name,
                                 machines[k], (long long)t1, (long long)t2);
                    fprintf(stderr, " %lld%s%lld", (long long)t1, t1 == t2 ? " = " : " != ",
                            (long long)t2);
                }
                fprintf(stderr, "%s\n", why[0] ? " (program differs)" : "");
            }
        }
        free(text);
        cs_program_free(p);
        cs_program_free(q);
    }
    fprintf(stderr, "P = %d: %d exported, %d refused, %d not built at this P\n", P, exported,
                    refused, skipped);
    cr_expect_gt(exported, 0);
}

Test(msccl_export, round_trip_every_algorithm_p8, .timeout = 600) { round_trip_all(8); }

Test(msccl_export, round_trip_every_algorithm_p6, .timeout = 600) { round_trip_all(6); }

/* ---- chunking ---------------------------------------------------------------------- */

static cs_program_t *suite_program(cs_coll_kind_t kind, const char *algo, int P, int64_t bytes)
{
    const cs_coll_algo_t *al;
    cs_program_t *p = NULL;
    cs_error_t err = {0};
    cs_coll_args_t a = args_for(kind, P, bytes);
    cr_assert_eq(cs_coll_find(kind, algo, &al, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_coll_build(al, &a, &p, &err), CS_OK, "%s", err.msg);
    return p;
}

/* The ring allreduce on 4 ranks moves quarters of the vector: 4 chunks by
 * default; 8 is allowed (each quarter is 2 chunks) and reads back to the
 * same program; 3 is refused naming what divides. */
Test(msccl_export, chunks_default_forced_and_refused)
{
    cs_coll_args_t a = args_for(CS_COLL_ALLREDUCE, 4, 1 << 20);
    cs_program_t *p = suite_program(CS_COLL_ALLREDUCE, "ring", 4, 1 << 20), *q = NULL;
    cs_error_t err = {0};
    char *text = NULL;
    cr_assert_eq(export_text(p, &a, "allreduce/ring", 0, &text, &err), CS_OK, "%s", err.msg);
    cr_expect(strstr(text, "nchunksperloop=\"4\""), "%.200s", text);
    cr_expect(strstr(text, "coll=\"allreduce\""));
    free(text);
    text = NULL;
    cr_assert_eq(export_text(p, &a, "allreduce/ring", 8, &text, &err), CS_OK, "%s", err.msg);
    cr_expect(strstr(text, "nchunksperloop=\"8\"") && strstr(text, "cnt=\"2\""));
    cr_assert_eq(read_back(text, &a, &q, &err), CS_OK, "%s", err.msg);
    cr_expect_str_empty(compare_programs(p, q));
    free(text);
    text = NULL;
    cr_expect_eq(export_text(p, &a, "allreduce/ring", 3, &text, &err), CS_ERR_RANGE);
    cr_expect(strstr(err.msg, "--chunks 3") && strstr(err.msg, "smallest count that works is 4"),
              "%s", err.msg);
    free(text);
    cs_program_free(p);
    cs_program_free(q);
}

/* A size whose pieces share only one byte needs as many chunks as bytes:
 * refused past the bound, saying so. */
Test(msccl_export, too_many_chunks_refused)
{
    int64_t n = 3 * 65536 + 1; /* 4 pieces of unequal, odd sizes */
    cs_coll_args_t a = args_for(CS_COLL_ALLREDUCE, 4, n);
    cs_program_t *p = suite_program(CS_COLL_ALLREDUCE, "ring", 4, n);
    cs_error_t err = {0};
    char *text = NULL;
    cr_expect_eq(export_text(p, &a, "allreduce/ring", 0, &text, &err), CS_ERR_RANGE);
    cr_expect(strstr(err.msg, "allreduce/ring cannot be written") &&
              strstr(err.msg, "chunks per loop"), "%s", err.msg);
    free(text);
    cs_program_free(p);
}

/* A program built without data descriptors (no_data) cannot be placed in
 * buffers. */
Test(msccl_export, no_data_refused)
{
    const cs_coll_algo_t *al;
    cs_program_t *p = NULL;
    cs_error_t err = {0};
    char *text = NULL;
    cs_coll_args_t a = args_for(CS_COLL_ALLGATHER, 4, 4096);
    a.no_data = 1;
    cr_assert_eq(cs_coll_find(CS_COLL_ALLGATHER, "ring", &al, &err), CS_OK);
    cr_assert_eq(cs_coll_build(al, &a, &p, &err), CS_OK, "%s", err.msg);
    cr_expect_eq(export_text(p, &a, "allgather/ring", 0, &text, &err), CS_ERR_RANGE);
    cr_expect(strstr(err.msg, "no data descriptor"), "%s", err.msg);
    free(text);
    cs_program_free(p);
}

/* The comparison can fail: two different allreduces, and the ring against
 * itself read back without the op order comment (the reader's own order). */
Test(msccl_export, comparison_can_fail)
{
    cs_coll_args_t a = args_for(CS_COLL_ALLREDUCE, 4, 1 << 20);
    cs_program_t *ring = suite_program(CS_COLL_ALLREDUCE, "ring", 4, 1 << 20);
    cs_program_t *rdb = suite_program(CS_COLL_ALLREDUCE, "rdb", 4, 1 << 20), *q = NULL;
    cs_error_t err = {0};
    char *text = NULL;
    cr_expect_str_not_empty(compare_programs(ring, rdb));
    cr_assert_eq(export_text(ring, &a, "allreduce/ring", 0, &text, &err), CS_OK, "%s", err.msg);
    char *c = strstr(text, "<!-- collsim order:");
    cr_assert_not_null(c);
    memcpy(c + 5, "xxxxxxx", 7); /* no longer the order comment */
    cr_assert_eq(read_back(text, &a, &q, &err), CS_OK, "%s", err.msg);
    cr_expect_str_not_empty(compare_programs(ring, q));
    free(text);
    cs_program_free(ring);
    cs_program_free(rdb);
    cs_program_free(q);
}
