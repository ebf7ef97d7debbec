/*
 * test_chakra_write.c - `collsim export --format chakra` (src/io/chakra_write.c)
 * against collsim's Chakra reader (src/io/chakra.c) and against the wire
 * format ASTRA-sim's feeders read.
 *
 * Oracles:
 *  - the round trip compares two independent paths, the program a builder
 *    or trace reader made and the program the Chakra reader makes from the
 *    files: same ops under the same ids (rank, kind, peer, tag, bytes, calc
 *    ticks, data range and mode), the same dependencies in the same order
 *    with the same kinds, the same time unit; for every algorithm of
 *    allreduce, allgather and alltoall at P = 8 (the writer's refusals are
 *    the ones listed here, found by reading the algorithms: multicasts);
 *  - the wire: each message decoded here with protobuf-c's generic
 *    unpacking (not the writer's code) and checked field by field against
 *    the program, with the attribute types ASTRA-sim's v1 feeder reads
 *    (chakra src/feeder/et_feeder_node.cpp: int32_val for comm_src /
 *    comm_dst / comm_tag, int64_val for comm_size, bool_val for is_cpu_op);
 *  - calc durations against the rounding formula written here;
 *  - ASTRA-sim's view of a program (every dependency "after completion",
 *    what it runs when it ignores collsim_dep_kinds) finishes in collsim
 *    without a deadlock, for every exported algorithm that has other kinds.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coll/coll.h"
#include "engine/exec.h"
#include "io/chakra.h"
#include "io/chakra_write.h"
#include "io/goal.h"
#include "io/ti.h"
#include "machines/machine.h"

#if CS_HAVE_CHAKRA
#include "chakra_et.pb-c.h"

/* ---- helpers ------------------------------------------------------------------- */

static const cs_coll_hints_t no_hints; /* as `collsim export` without --machine */

typedef struct files {
    int P;
    char **data;
    size_t *len;
} files_t;

/* Every rank's stream of p in memory (the writer checked first). */
static int write_mem(const cs_program_t *p, files_t *fs, cs_error_t *err)
{
    int rc = cs_chakra_write_check(p, err);
    fs->P = cs_program_nranks(p);
    fs->data = calloc((size_t)fs->P, sizeof *fs->data);
    fs->len = calloc((size_t)fs->P, sizeof *fs->len);
    for (int r = 0; r < fs->P && rc == CS_OK; r++) {
        FILE *f = open_memstream(&fs->data[r], &fs->len[r]);
        cr_assert_not_null(f);
        rc = cs_chakra_write_rank(p, r, f, err);
        fclose(f);
    }
    return rc;
}

static void files_free(files_t *fs)
{
    for (int r = 0; r < fs->P; r++)
        free(fs->data[r]);
    free(fs->data);
    free(fs->len);
}

static int read_mem(const files_t *fs, cs_program_t **out, cs_error_t *err)
{
    cs_chakra_opts_t o;
    cs_chakra_opts_default(&o);
    return cs_chakra_read_buffers((const uint8_t *const *)fs->data, fs->len, fs->P, "export",
                                  &o, out, NULL, err);
}

/* Empty when p and q are the same program, else the first difference. */
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
    if (cs_program_time_unit(p) != cs_program_time_unit(q)) {
        snprintf(why, sizeof why, "time unit %g, read back %g", cs_program_time_unit(p),
                 cs_program_time_unit(q));
        return why;
    }
    for (int32_t i = 0; i < n && !why[0]; i++) {
        const cs_op_t *a = cs_program_op(p, i), *b = cs_program_op(q, i);
        const cs_data_t *da = cs_program_data(p, i), *db = cs_program_data(q, i);
        int same = a->kind == b->kind && a->rank == b->rank && a->bytes == b->bytes &&
                   (a->kind == CS_OP_CALC ? a->ticks == b->ticks
                                          : a->peer == b->peer && a->tag == b->tag) &&
                   !da == !db &&
                   (!da || (da->off == db->off && da->len == db->len && da->mode == db->mode));
        int na, nb;
        const cs_dep_t *pa = cs_program_preds(p, i, &na), *pb = cs_program_preds(q, i, &nb);
        same = same && na == nb && (na == 0 || !memcmp(pa, pb, (size_t)na * sizeof *pa));
        if (!same) {
            char x[128], y[128];
            cs_program_describe(p, i, x, sizeof x);
            cs_program_describe(q, i, y, sizeof y);
            snprintf(why, sizeof why, "op %d: %s (%d deps), read back %s (%d deps)", i, x, na,
                     y, nb);
        }
    }
    return why;
}

/* Runs p on spec (whole program); the finish tick, -1 with err. */
static cs_tick_t run_prog(const char *spec, const cs_program_t *p, cs_error_t *err)
{
    cs_machine_t *m = NULL;
    cs_exec_env_t env;
    cs_exec_opts_t o;
    cs_exec_result_t res;
    cs_tick_t t = -1;
    memset(&res, 0, sizeof res);
    if (cs_machine_new(spec, &m, err))
        return -1;
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    if (!cs_exec_run(&env, p, &o, &res, err))
        t = res.finish;
    cs_exec_result_destroy(&res);
    cs_machine_free(m);
    return t;
}

/* What ASTRA-sim runs: p with every dependency after completion. */
static cs_program_t *astra_view(const cs_program_t *p)
{
    cs_program_t *q = cs_program_new(cs_program_nranks(p));
    int32_t n = cs_program_nops(p);
    cs_program_set_time_unit(q, cs_program_time_unit(p));
    for (int32_t i = 0; i < n; i++) {
        const cs_op_t *op = cs_program_op(p, i);
        if (op->kind == CS_OP_SEND)
            cs_program_send(q, op->rank, op->peer, op->bytes, op->tag);
        else if (op->kind == CS_OP_RECV)
            cs_program_recv(q, op->rank, op->peer, op->bytes, op->tag);
        else
            cs_program_calc(q, op->rank, op->ticks, op->bytes);
    }
    for (int32_t i = 0; i < n; i++) {
        int np;
        const cs_dep_t *d = cs_program_preds(p, i, &np);
        for (int k = 0; k < np; k++)
            cs_program_dep(q, i, cs_dep_op(d[k]), CS_DEP_AFTER);
    }
    cr_assert_eq(cs_program_finalize(q, NULL), CS_OK);
    return q;
}

static int has_special_deps(const cs_program_t *p)
{
    for (int32_t i = 0; i < cs_program_nops(p); i++) {
        int np;
        const cs_dep_t *d = cs_program_preds(p, i, &np);
        for (int k = 0; k < np; k++)
            if (cs_dep_kind(d[k]) != CS_DEP_AFTER)
                return 1;
    }
    return 0;
}

/* ---- every suite algorithm of three collectives at P = 8 ------------------------ */

/* Refused by the writer, and why (read in src/coll/allreduce.c). */
static const char *const expected_refusals[][2] = {
    {"allreduce/naive", "a multicast"},    /* every rank multicasts its vector */
    {"allreduce/2d-naive", "a multicast"}, /* row and column multicasts */
};

static const char *refusal_for(const char *name)
{
    for (size_t i = 0; i < sizeof expected_refusals / sizeof expected_refusals[0]; i++)
        if (!strcmp(expected_refusals[i][0], name))
            return expected_refusals[i][1];
    return NULL;
}

Test(chakra_write, suite_round_trip_p8)
{
    static const cs_coll_kind_t kinds[] = {CS_COLL_ALLREDUCE, CS_COLL_ALLGATHER,
                                           CS_COLL_ALLTOALL};
    int count, tried = 0, refused = 0, special = 0;
    const cs_coll_algo_t *const *algos = cs_coll_algos(&count);
    for (int i = 0; i < count; i++) {
        const cs_coll_algo_t *al = algos[i];
        int want = 0;
        for (size_t k = 0; k < 3; k++)
            want |= al->kind == kinds[k];
        if (!want)
            continue;
        char name[128];
        snprintf(name, sizeof name, "%s/%s", cs_coll_name(al->kind), al->name);
        cs_coll_args_t a = {al->kind, 8, 65536, 0, 4096, &no_hints, NULL, 0};
        cs_program_t *p = NULL, *q = NULL;
        cs_error_t err = {0};
        if (cs_coll_build(al, &a, &p, &err) != CS_OK)
            continue; /* an algorithm that does not build at P = 8 is not exported */
        tried++;
        files_t fs;
        int rc = write_mem(p, &fs, &err);
        const char *why = refusal_for(name);
        if (why) {
            cr_assert_eq(rc, CS_ERR_RANGE, "%s: expected refused (%s)", name, why);
            cr_assert(strstr(err.msg, why), "%s: refused for '%s', expected '%s'", name,
                      err.msg, why);
            refused++;
        } else {
            cr_assert_eq(rc, CS_OK, "%s: %s", name, err.msg);
            rc = read_mem(&fs, &q, &err);
            cr_assert_eq(rc, CS_OK, "%s: read back: %s", name, err.msg);
            /* the file holds the program a program's joins stand for
             * (cs_program_without_joins: Chakra has no join; NCCL's rings
             * start each rank's chains after one) */
            cs_program_t *direct = NULL;
            cr_assert_eq(cs_program_without_joins(p, &direct, &err), CS_OK, "%s", err.msg);
            const char *diff = compare_programs(direct ? direct : p, q);
            cs_program_free(direct);
            cr_assert_str_empty(diff, "%s: %s", name, diff);
            /* the program ASTRA-sim runs (no after-start, no streaming) ends */
            if (has_special_deps(p)) {
                cs_program_t *v = astra_view(p);
                cs_tick_t t = run_prog("alphabeta:topo=ring,p=8", v, &err);
                cr_assert(t > 0, "%s: ASTRA-sim's ordering does not run: %s", name, err.msg);
                cs_program_free(v);
                special++;
            }
        }
        files_free(&fs);
        cs_program_free(p);
        cs_program_free(q);
    }
    cr_assert_geq(tried, 20, "only %d algorithms built", tried);
    cr_assert_eq(refused, 2);
    cr_log_info("%d algorithms, %d refused, %d with after-start or streaming deps", tried,
                refused, special);
}

/* ---- the wire, decoded independently ------------------------------------------ */

/* The next length-delimited message of buf at *off; NULL at the end. */
static const uint8_t *next_msg(const char *buf, size_t len, size_t *off, size_t *n)
{
    uint64_t v = 0;
    int shift = 0;
    if (*off >= len)
        return NULL;
    for (;;) {
        cr_assert_lt(*off, len, "truncated varint");
        uint8_t c = (uint8_t)buf[(*off)++];
        v |= (uint64_t)(c & 0x7f) << shift;
        shift += 7;
        if (!(c & 0x80))
            break;
        cr_assert_lt(shift, 35, "length prefix beyond varint32");
    }
    cr_assert_leq(*off + v, len);
    *n = (size_t)v;
    const uint8_t *m = (const uint8_t *)buf + *off;
    *off += v;
    return m;
}

static const ChakraProtoMsg__AttributeProto *attr(const ChakraProtoMsg__Node *nd, const char *name)
{
    for (size_t i = 0; i < nd->n_attr; i++)
        if (!strcmp(nd->attr[i]->name, name))
            return nd->attr[i];
    return NULL;
}

Test(chakra_write, wire_types_astra_sim_reads)
{
    const cs_coll_algo_t *al;
    cs_program_t *p = NULL;
    cs_error_t err = {0};
    cr_assert_eq(cs_coll_find(CS_COLL_ALLREDUCE, "ring", &al, &err), CS_OK);
    cs_coll_args_t a = {CS_COLL_ALLREDUCE, 4, 1 << 20, 0, 4096, &no_hints, NULL, 0};
    cr_assert_eq(cs_coll_build(al, &a, &p, &err), CS_OK, "%s", err.msg);
    files_t fs;
    cr_assert_eq(write_mem(p, &fs, &err), CS_OK, "%s", err.msg);
    int32_t seen = 0;
    for (int r = 0; r < fs.P; r++) {
        size_t off = 0, n;
        const uint8_t *m = next_msg(fs.data[r], fs.len[r], &off, &n);
        ChakraProtoMsg__GlobalMetadata *md = chakra_proto_msg__global_metadata__unpack(NULL, n, m);
        cr_assert_not_null(md);
        cr_assert_str_eq(md->version, "0.0.4"); /* ASTRA-sim's examples' version */
        chakra_proto_msg__global_metadata__free_unpacked(md, NULL);
        int64_t last = -1;
        while ((m = next_msg(fs.data[r], fs.len[r], &off, &n))) {
            ChakraProtoMsg__Node *nd = chakra_proto_msg__node__unpack(NULL, n, m);
            cr_assert_not_null(nd);
            cr_assert_lt(nd->id, (uint64_t)cs_program_nops(p));
            cr_assert_gt((int64_t)nd->id, last, "ids ascending, unique per file");
            last = (int64_t)nd->id;
            const cs_op_t *op = cs_program_op(p, (int32_t)nd->id);
            cr_assert_eq(op->rank, r);
            const ChakraProtoMsg__AttributeProto *cpu = attr(nd, "is_cpu_op");
            cr_assert(cpu && cpu->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL &&
                      !cpu->bool_val);
            if (op->kind == CS_OP_CALC) {
                cr_assert_eq(nd->type, CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE);
            } else {
                int send = op->kind == CS_OP_SEND;
                cr_assert_eq(nd->type, send ? CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE
                                            : CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE);
                const ChakraProtoMsg__AttributeProto *s = attr(nd, "comm_src"),
                                                     *d = attr(nd, "comm_dst"),
                                                     *z = attr(nd, "comm_size"),
                                                     *t = attr(nd, "comm_tag");
                cr_assert(s && d && z && t);
                cr_assert_eq(s->value_case, CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL);
                cr_assert_eq(d->value_case, CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL);
                cr_assert_eq(t->value_case, CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL);
                cr_assert_eq(z->value_case, CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL);
                cr_assert_eq(s->int32_val, send ? r : op->peer);
                cr_assert_eq(d->int32_val, send ? op->peer : r);
                cr_assert_eq(t->int32_val, op->tag);
                cr_assert_eq(z->int64_val, op->bytes);
            }
            int np;
            const cs_dep_t *dp = cs_program_preds(p, (int32_t)nd->id, &np);
            cr_assert_eq(nd->n_data_deps, (size_t)np);
            cr_assert_eq(nd->n_ctrl_deps, 0);
            for (int k = 0; k < np; k++)
                cr_assert_eq(nd->data_deps[k], (uint64_t)cs_dep_op(dp[k]));
            seen++;
            chakra_proto_msg__node__free_unpacked(nd, NULL);
        }
    }
    cr_assert_eq(seen, cs_program_nops(p), "every op once");
    files_free(&fs);
    cs_program_free(p);
}

/* ---- calc times and dependency kinds ------------------------------------------ */

Test(chakra_write, calc_micros_rounded_ticks_exact)
{
    /* nanoseconds (GOAL's unit) -> microseconds, nearest, half up */
    static const int64_t ns[] = {0, 1, 499, 500, 1499, 1500, 2000000, 123456789};
    const int N = (int)(sizeof ns / sizeof ns[0]);
    cs_program_t *p = cs_program_new(1), *q = NULL;
    cs_error_t err = {0};
    cs_program_set_time_unit(p, 1e-9);
    for (int i = 0; i < N; i++)
        cs_program_calc(p, 0, ns[i], i == 3 ? 4096 : 0);
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK);
    files_t fs;
    cr_assert_eq(write_mem(p, &fs, &err), CS_OK, "%s", err.msg);
    size_t off = 0, n;
    next_msg(fs.data[0], fs.len[0], &off, &n);
    for (int i = 0; i < N; i++) {
        const uint8_t *m = next_msg(fs.data[0], fs.len[0], &off, &n);
        ChakraProtoMsg__Node *nd = chakra_proto_msg__node__unpack(NULL, n, m);
        uint64_t want = (uint64_t)((ns[i] + 500) / 1000);
        cr_assert_eq(nd->duration_micros, want, "%lld ns: %llu us, expected %llu",
                     (long long)ns[i], (unsigned long long)nd->duration_micros,
                     (unsigned long long)want);
        const ChakraProtoMsg__AttributeProto *t = attr(nd, CS_CHAKRA_ATTR_CALC_TICKS);
        cr_assert(t && t->int64_val == ns[i]);
        chakra_proto_msg__node__free_unpacked(nd, NULL);
    }
    cr_assert_eq(read_mem(&fs, &q, &err), CS_OK, "%s", err.msg);
    cr_assert_str_empty(compare_programs(p, q), "%s", compare_programs(p, q));
    files_free(&fs);
    cs_program_free(p);
    cs_program_free(q);
}

Test(chakra_write, dependency_kinds_restored)
{
    /* rank 1 forwards rank 0's message as it streams in, and posts its recv
     * from 2 once its send to 2 has started */
    cs_program_t *p = cs_program_new(3), *q = NULL;
    cs_error_t err = {0};
    cs_program_send(p, 0, 1, 1 << 16, 5);                   /* 0 */
    int32_t r = cs_program_recv(p, 1, 0, 1 << 16, 5);       /* 1 */
    int32_t s = cs_program_send(p, 1, 2, 1 << 16, 6);       /* 2 */
    int32_t r2 = cs_program_recv(p, 1, 2, 8, 7);            /* 3 */
    int32_t c = cs_program_calc(p, 1, 0, 8);                /* 4 */
    cs_program_recv(p, 2, 1, 1 << 16, 6);                   /* 5 */
    cs_program_send(p, 2, 1, 8, 7);                         /* 6 */
    cs_program_dep(p, s, r, CS_DEP_STREAM);
    cs_program_dep(p, r2, s, CS_DEP_AFTER_START);
    cs_program_dep(p, c, r2, CS_DEP_AFTER);
    cs_program_dep(p, c, s, CS_DEP_AFTER);
    cs_program_set_data(p, s, 0, 1 << 16, CS_DATA_COPY);
    cs_program_set_data(p, r2, 64, 8, CS_DATA_REDUCE);
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK);
    files_t fs;
    cr_assert_eq(write_mem(p, &fs, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(read_mem(&fs, &q, &err), CS_OK, "%s", err.msg);
    cr_assert_str_empty(compare_programs(p, q), "%s", compare_programs(p, q));
    /* the streamed forward finishes earlier than ASTRA-sim's store-and-forward */
    cs_program_t *v = astra_view(p);
    cs_tick_t exact = run_prog("alphabeta:topo=line,p=3", q, &err);
    cs_tick_t conservative = run_prog("alphabeta:topo=line,p=3", v, &err);
    cr_assert(exact > 0 && conservative > exact, "exact %lld, after-completion %lld",
              (long long)exact, (long long)conservative);
    files_free(&fs);
    cs_program_free(p);
    cs_program_free(q);
    cs_program_free(v);
}

/* ---- refusals ------------------------------------------------------------------ */

static void expect_refused(cs_program_t *p, const char *what)
{
    cs_error_t err = {0};
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK);
    cr_assert_eq(cs_chakra_write_check(p, &err), CS_ERR_RANGE);
    cr_assert(strstr(err.msg, what) && strstr(err.msg, "op "), "message: %s", err.msg);
    cs_program_free(p);
}

Test(chakra_write, refusals_say_why)
{
    cs_program_t *p = cs_program_new(3);
    int32_t to[2] = {1, 2};
    cs_program_mcast(p, 0, to, 2, 64, 0);
    cs_program_recv(p, 1, 0, 64, 0);
    cs_program_recv(p, 2, 0, 64, 0);
    expect_refused(p, "multicast");

    p = cs_program_new(2);
    cs_program_send(p, 0, 1, 64, 0);
    cs_program_recv(p, 1, CS_ANY, 64, 0);
    expect_refused(p, "any source");

    p = cs_program_new(1); /* time unit 0: machine ticks */
    cs_program_calc(p, 0, 100, 0);
    expect_refused(p, "machine ticks");
}

/* ---- files: a whole set, stale ranks removed ------------------------------------ */

static int count_files(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.' || strstr(e->d_name, ".part") != NULL;
    closedir(d);
    return n;
}

static cs_program_t *ring_program(int P)
{
    const cs_coll_algo_t *al;
    cs_program_t *p = NULL;
    cr_assert_eq(cs_coll_find(CS_COLL_ALLREDUCE, "ring", &al, NULL), CS_OK);
    cs_coll_args_t a = {CS_COLL_ALLREDUCE, P, 4096 * P, 0, 4096, &no_hints, NULL, 0};
    cr_assert_eq(cs_coll_build(al, &a, &p, NULL), CS_OK);
    return p;
}

Test(chakra_write, set_whole_and_stale_ranks_removed)
{
    char dir[] = "/tmp/collsim-chakra-XXXXXX", prefix[64], path[96];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(prefix, sizeof prefix, "%s/ring", dir);
    cs_error_t err = {0};
    cs_program_t *p8 = ring_program(8), *p4 = ring_program(4), *q = NULL;
    cr_assert_eq(cs_chakra_write(p8, prefix, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(count_files(dir), 8);
    struct stat st0;
    snprintf(path, sizeof path, "%s.0.et", prefix);
    cr_assert_eq(stat(path, &st0), 0);

    /* a failure at rank 2 (its part cannot be written) changes nothing */
    snprintf(path, sizeof path, "%s.2.et.part", prefix);
    cr_assert_eq(mkdir(path, 0700), 0);
    cr_assert_neq(cs_chakra_write(p4, prefix, &err), CS_OK);
    cr_assert(strstr(err.msg, "ring.2.et.part"), "message: %s", err.msg);
    rmdir(path);
    cr_assert_eq(count_files(dir), 8, "no part left, no rank removed");
    cs_chakra_opts_t o;
    cs_chakra_opts_default(&o);
    cr_assert_eq(cs_chakra_read(prefix, &o, &q, NULL, &err), CS_OK, "%s", err.msg);
    cr_assert_str_empty(compare_programs(p8, q), "the old set is intact");
    cs_program_free(q);

    /* a smaller set replaces the larger one whole */
    cr_assert_eq(cs_chakra_write(p4, prefix, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(count_files(dir), 4);
    cr_assert_eq(cs_chakra_read(prefix, &o, &q, NULL, &err), CS_OK, "%s", err.msg);
    cr_assert_str_empty(compare_programs(p4, q), "%s", compare_programs(p4, q));
    cs_program_free(q);

    /* a folder that does not exist: an error naming the file, nothing made */
    snprintf(path, sizeof path, "%s/none/ring", dir);
    cr_assert_eq(cs_chakra_write(p4, path, &err), CS_ERR_IO);
    cr_assert(strstr(err.msg, "none/ring.0.et"), "message: %s", err.msg);

    for (int r = 0; r < 4; r++) {
        snprintf(path, sizeof path, "%s.%d.et", prefix, r);
        unlink(path);
    }
    cr_assert_eq(rmdir(dir), 0);
    cs_program_free(p8);
    cs_program_free(p4);
}

/* ---- traces: a GOAL program and a TI trace -------------------------------------- */

static const char *source_root(void)
{
    const char *s = getenv("COLLSIM_SOURCE_ROOT");
    return s ? s : ".";
}

/* Writes p as a set, reads it back, compares, and runs both on spec. */
static void trace_round_trip(cs_program_t *p, const char *spec)
{
    char dir[] = "/tmp/collsim-chakra-XXXXXX", prefix[64], path[96];
    cs_error_t err = {0};
    cs_program_t *q = NULL;
    cr_assert_not_null(mkdtemp(dir));
    snprintf(prefix, sizeof prefix, "%s/t", dir);
    cr_assert_eq(cs_chakra_write(p, prefix, &err), CS_OK, "%s", err.msg);
    cs_chakra_opts_t o;
    cs_chakra_opts_default(&o);
    cr_assert_eq(cs_chakra_read(prefix, &o, &q, NULL, &err), CS_OK, "%s", err.msg);
    cr_assert_str_empty(compare_programs(p, q), "%s", compare_programs(p, q));
    cs_tick_t a = run_prog(spec, p, &err), b = run_prog(spec, q, &err);
    cr_assert(a > 0 && a == b, "original %lld ticks, from Chakra %lld", (long long)a,
              (long long)b);
    for (int r = 0; r < cs_program_nranks(p); r++) {
        snprintf(path, sizeof path, "%s.%d.et", prefix, r);
        unlink(path);
    }
    rmdir(dir);
    cs_program_free(q);
}

Test(chakra_write, goal_program_round_trip)
{
    char path[512];
    cs_program_t *p = NULL;
    cs_error_t err = {0};
    snprintf(path, sizeof path, "%s/traces/pipeline.goal", source_root());
    cr_assert_eq(cs_goal_read_file(path, &p, &err), CS_OK, "%s", err.msg);
    trace_round_trip(p, "loggp:p=4");
    cs_program_free(p);
}

Test(chakra_write, ti_trace_round_trip)
{
    char path[512];
    cs_program_t *p = NULL;
    cs_error_t err = {0};
    cs_ti_opts_t o;
    cs_ti_opts_default(&o);
    snprintf(path, sizeof path, "%s/traces/stencil16.ti", source_root());
    cr_assert_eq(cs_ti_read_file(path, &o, &p, NULL, &err), CS_OK, "%s", err.msg);
    trace_round_trip(p, "alphabeta:topo=torus,rows=4,cols=4");
    cs_program_free(p);
}

/* ---- the command line: export, then replay ------------------------------------- */

/* The `finish` line of a command's output (static), or "" on failure. */
static const char *finish_of(const char *cmd)
{
    static char line[256];
    char buf[256];
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    line[0] = '\0';
    while (fgets(buf, sizeof buf, f))
        if (!strncmp(buf, "finish", 6))
            snprintf(line, sizeof line, "%s", buf);
    if (pclose(f) != 0)
        line[0] = '\0';
    return line;
}

/* `collsim replay` of the exported set takes the original's time. */
static void cli_same_time(const char *trace, const char *export_opts, const char *machine)
{
    const char *c = getenv("COLLSIM");
    char dir[] = "/tmp/collsim-chakra-XXXXXX", cmd[2048], want[256];
    cr_assert_not_null(c, "COLLSIM is set by meson");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "'%s' export --format chakra --trace '%s/%s' %s -o %s/x", c,
             source_root(), trace, export_opts, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    for (int fluid = 0; fluid < 2; fluid++) {
        const char *mode = fluid ? "--mode fluid" : "";
        snprintf(cmd, sizeof cmd, "'%s' replay '%s/%s' -m '%s' %s --no-timing", c,
                 source_root(), trace, machine, mode);
        snprintf(want, sizeof want, "%s", finish_of(cmd));
        cr_assert(want[0], "%s failed", cmd);
        snprintf(cmd, sizeof cmd, "'%s' replay %s/x --format chakra -m '%s' %s --no-timing", c,
                 dir, machine, mode);
        cr_assert_str_eq(finish_of(cmd), want, "%s", cmd);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(chakra_write, cli_goal_replays_to_same_time)
{
    cli_same_time("traces/pipeline.goal", "--ranks 4", "alphabeta:topo=ring,p=4");
}

Test(chakra_write, cli_ti_replays_to_same_time)
{
    cli_same_time("traces/stencil16.ti", "--machine alphabeta:topo=torus,rows=4,cols=4",
                  "alphabeta:topo=torus,rows=4,cols=4");
}

Test(chakra_write, cli_refusal_writes_nothing)
{
    const char *c = getenv("COLLSIM");
    char dir[] = "/tmp/collsim-chakra-XXXXXX", cmd[1024];
    cr_assert_not_null(c);
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "'%s' export --format chakra --coll allreduce --algo naive "
             "--ranks 8 --bytes 64KiB -o %s/x 2>%s/err", c, dir, dir);
    int st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "exit status %d", st);
    snprintf(cmd, sizeof cmd, "grep -q 'allreduce/naive: op .*multicast' %s/err", dir);
    cr_assert_eq(system(cmd), 0, "the message names the algorithm, the op and why");
    snprintf(cmd, sizeof cmd, "%s/err", dir);
    unlink(cmd);
    cr_assert_eq(count_files(dir), 0, "no file written");
    rmdir(dir);
}

#else /* !CS_HAVE_CHAKRA */

Test(chakra_write, refused_without_protobuf_c)
{
    cs_program_t *p = cs_program_new(1);
    cs_error_t err = {0};
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK);
    cr_assert_eq(cs_chakra_write(p, "/tmp/never", &err), CS_ERR_USAGE);
    cr_assert(strstr(err.msg, "protobuf-c"), "message: %s", err.msg);
    cs_program_free(p);
}

#endif
