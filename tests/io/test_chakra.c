/*
 * test_chakra.c - the Chakra execution trace reader (io/chakra.h): ASTRA-sim's
 * own microbenchmark traces replayed to the suite's times (through the
 * collsim binary, against `collsim run` of the same collective), a ring
 * written as send/recv and compute nodes against its closed form on the
 * alpha-beta machine (alpha = 1 us, beta = 1 ns per byte, 1 ps ticks), a
 * process-group collective confined to its group, and each malformed
 * trace's message.  Small traces are written with protobuf-c's generated
 * packers (never hand-written bytes), broken ones by cutting or editing
 * those.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chakra_et.pb-c.h"
#include "engine/exec.h"
#include "io/chakra.h"
#include "machines/machine.h"

#define US 1000000LL /* ticks per microsecond */
#define EXT "/work/shared/external/chakra"

/* ---- writing traces --------------------------------------------------------- */

typedef struct buf {
    uint8_t *d;
    size_t n, cap;
} buf_t;

static void put(buf_t *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->d = realloc(b->d, b->cap);
    }
    memcpy(b->d + b->n, p, n);
    b->n += n;
}

static void put_len(buf_t *b, size_t len)
{
    uint8_t v[5];
    int k = 0;
    do {
        v[k] = (uint8_t)(len & 0x7f);
        len >>= 7;
        if (len)
            v[k] |= 0x80;
        k++;
    } while (len);
    put(b, v, (size_t)k);
}

static void put_meta(buf_t *b)
{
    ChakraProtoMsg__GlobalMetadata g = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    g.version = "0.0.4";
    size_t n = chakra_proto_msg__global_metadata__get_packed_size(&g);
    uint8_t *t = malloc(n + 1);
    chakra_proto_msg__global_metadata__pack(&g, t);
    put_len(b, n);
    put(b, t, n);
    free(t);
}

/* A node: id, type, duration, deps (-1 ends), attributes as name=int
 * pairs ("comm_size", 1024, ... NULL) and an optional pg_name. */
typedef struct nspec {
    uint64_t id;
    int type;
    uint64_t dur;
    uint64_t deps[4];
    int ndeps;
    const char *names[6];
    int64_t vals[6];
    const char *pg;
    const char *inputs;
} nspec_t;

static void put_node(buf_t *b, const nspec_t *s)
{
    ChakraProtoMsg__Node n = CHAKRA_PROTO_MSG__NODE__INIT;
    ChakraProtoMsg__AttributeProto a[8], *ap[8];
    ChakraProtoMsg__IOInfo io = CHAKRA_PROTO_MSG__IOINFO__INIT;
    int na = 0;
    n.id = s->id;
    n.type = (ChakraProtoMsg__NodeType)s->type;
    n.duration_micros = s->dur;
    n.n_data_deps = (size_t)s->ndeps;
    n.data_deps = (uint64_t *)s->deps;
    for (int i = 0; i < 6 && s->names[i]; i++) {
        chakra_proto_msg__attribute_proto__init(&a[na]);
        a[na].name = (char *)s->names[i];
        a[na].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
        a[na].int64_val = s->vals[i];
        ap[na] = &a[na];
        na++;
    }
    if (s->pg) {
        chakra_proto_msg__attribute_proto__init(&a[na]);
        a[na].name = "pg_name";
        a[na].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
        a[na].string_val = (char *)s->pg;
        ap[na] = &a[na];
        na++;
    }
    if (s->inputs) {
        io.values = (char *)s->inputs;
        n.inputs = &io;
    }
    n.n_attr = (size_t)na;
    n.attr = ap;
    size_t len = chakra_proto_msg__node__get_packed_size(&n);
    uint8_t *t = malloc(len + 1);
    chakra_proto_msg__node__pack(&n, t);
    put_len(b, len);
    put(b, t, len);
    free(t);
}

#define COMP 4
#define SEND 5
#define RECV 6
#define COLL 7
#define META 1

static cs_program_t *read_bufs(buf_t *b, int P, cs_chakra_opts_t *o, cs_chakra_info_t *info,
                               int expect, cs_error_t *err)
{
    const uint8_t *d[16];
    size_t n[16];
    cs_program_t *p = NULL;
    for (int i = 0; i < P; i++)
        d[i] = b[i].d, n[i] = b[i].n;
    int rc = cs_chakra_read_buffers(d, n, P, "t", o, &p, info, err);
    cr_assert_eq(rc, expect, "status %d, expected %d: %s", rc, expect, rc ? err->msg : "");
    if (rc)
        cr_assert_null(p);
    return p;
}

static cs_tick_t run(const char *spec, const cs_program_t *p)
{
    cs_machine_t *m;
    cs_error_t err;
    cs_exec_env_t env;
    cs_exec_opts_t o;
    cs_exec_result_t r;
    cr_assert_eq(cs_machine_new(spec, &m, &err), CS_OK, "%s", err.msg);
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    cr_assert_eq(cs_exec_run(&env, p, &o, &r, &err), CS_OK, "%s", err.msg);
    cs_tick_t t = r.finish;
    cs_exec_result_destroy(&r);
    cs_machine_free(m);
    return t;
}

static void free_bufs(buf_t *b, int P)
{
    for (int i = 0; i < P; i++)
        free(b[i].d);
}

/* ---- ASTRA-sim's traces against `collsim run` ------------------------------- */

static long long finish_of(const char *cmd)
{
    FILE *f = popen(cmd, "r");
    char line[512];
    long long t = -1;
    cr_assert_not_null(f);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "finish ", 7))
            t = atoll(line + 10);
    int st = pclose(f);
    cr_assert_eq(st, 0, "%s: exit %d", cmd, st);
    cr_assert_gt(t, 0, "%s: no finish line", cmd);
    return t;
}

Test(chakra, astra_sim_traces_replay_to_the_suites_times)
{
    const char *bin = getenv("COLLSIM");
    cr_assert_not_null(bin, "COLLSIM is not set (run the tests through meson test)");
    /* comm_size as ASTRA-sim's Ring reads it: all-reduce the whole vector,
     * all-gather each rank's block (the suite's --bytes in both cases) */
    const char *traces[][2] = {{EXT "/all_reduce_4npus_1MB/all_reduce", "allreduce"},
                               {EXT "/all_gather_4npus_1MB/all_gather", "allgather"}};
    const char *machines[] = {"alphabeta:topo=ring,p=4", "alphabeta:topo=mesh,rows=2,cols=2",
                              "alphabeta:topo=complete,p=4"};
    const char *modes[] = {"packet", "fluid"};
    for (int t = 0; t < 2; t++)
        for (int m = 0; m < 3; m++)
            for (int md = 0; md < 2; md++)
                for (int algo = 0; algo < 2; algo++) {
                    char a[1024], b[1024], af[64] = "", ar[64] = "";
                    if (algo) {
                        snprintf(af, sizeof af, "--algo-for %s=ring", traces[t][1]);
                        snprintf(ar, sizeof ar, "--algo ring");
                    }
                    snprintf(a, sizeof a, "%s replay %s --format chakra --machine %s -M %s %s "
                             "--no-timing", bin, traces[t][0], machines[m], modes[md], af);
                    snprintf(b, sizeof b, "%s run --coll %s --bytes 1MiB --machine %s -M %s %s "
                             "--no-timing", bin, traces[t][1], machines[m], modes[md], ar);
                    long long ta = finish_of(a), tb = finish_of(b);
                    cr_expect_eq(ta, tb, "%s: %lld ticks, run: %lld", a, ta, tb);
                }
}

Test(chakra, auto_format_from_a_rank_file_and_a_prefix)
{
    cs_chakra_opts_t o;
    cs_program_t *p;
    cs_chakra_info_t info;
    cs_error_t err;
    int yes;
    cs_chakra_opts_default(&o);
    cr_assert_eq(cs_chakra_sniff(EXT "/all_reduce_4npus_1MB/all_reduce", &yes, &err), CS_OK);
    cr_expect_eq(yes, 1);
    cr_assert_eq(cs_chakra_sniff(EXT "/all_reduce_4npus_1MB/all_reduce.2.et", &yes, &err), CS_OK);
    cr_expect_eq(yes, 1);
    cr_assert_eq(cs_chakra_read(EXT "/all_reduce_4npus_1MB/all_reduce.2.et", &o, &p, &info, &err),
                 CS_OK, "%s", err.msg);
    cr_expect_eq(cs_program_nranks(p), 4);
    cr_expect_eq(info.files, 4);
    cr_expect_eq(info.types[COLL], 4);
    cr_expect_eq(info.calls[CS_COLL_ALLREDUCE], 1);
    cs_program_free(p);
}

/* ---- a ring of send/recv and compute nodes ------------------------------------ */

Test(chakra, decomposed_ring_is_the_ring_plus_its_compute)
{
    enum { P = 4, M = 4096, D = 7 };
    buf_t b[P] = {{0}};
    for (int r = 0; r < P; r++) {
        put_meta(&b[r]);
        /* node 1: D us of compute; then P-1 steps: send (after the previous
         * step's recv, or the compute) and recv */
        put_node(&b[r], &(nspec_t){1, COMP, D, {0}, 0, {NULL}, {0}, NULL, NULL});
        uint64_t prev = 1;
        for (int s = 0; s < P - 1; s++) {
            uint64_t sid = 10 + 2 * (uint64_t)s, rid = sid + 1;
            put_node(&b[r], &(nspec_t){sid, SEND, 0, {prev}, 1,
                                       {"comm_dst", "comm_size", "comm_tag", NULL},
                                       {(r + 1) % P, M, s}, NULL, NULL});
            put_node(&b[r], &(nspec_t){rid, RECV, 0, {1}, 1,
                                       {"comm_src", "comm_size", "comm_tag", NULL},
                                       {(r + P - 1) % P, M, s}, NULL, NULL});
            prev = rid;
        }
    }
    cs_chakra_opts_t o;
    cs_chakra_info_t info;
    cs_error_t err;
    cs_chakra_opts_default(&o);
    cs_program_t *p = read_bufs(b, P, &o, &info, CS_OK, &err);
    cr_expect_eq(info.types[SEND], P * (P - 1));
    cr_expect_eq(info.types[COMP], P);
    /* (P-1) steps of alpha + beta m after D us, as the lecture's ring */
    cs_tick_t want = D * US + (P - 1) * (US + M * 1000LL);
    cr_expect_eq(run("alphabeta:topo=ring,p=4", p), want);
    cs_program_free(p);
    free_bufs(b, P);
}

/* ---- process groups ------------------------------------------------------------- */

static void group_trace(buf_t *b, int with_meta)
{
    for (int r = 0; r < 4; r++) {
        put_meta(&b[r]);
        if (with_meta)
            put_node(&b[r], &(nspec_t){100, META, 0, {0}, 0, {NULL}, {0}, NULL,
                                       "[\"[{\\\"pg_name\\\": \\\"7\\\", \\\"ranks\\\": [0, 1]}]\"]"});
        if (r < 2)
            put_node(&b[r], &(nspec_t){1, COLL, 0, {0}, 0, {"comm_type", "comm_size", NULL},
                                       {0, 1 << 20}, "7", NULL});
        else
            put_node(&b[r], &(nspec_t){1, COMP, 3, {0}, 0, {NULL}, {0}, NULL, NULL});
    }
}

static void check_group_program(cs_program_t *p, int idle_ops)
{
    int32_t per_rank[4] = {0};
    for (int32_t i = 0; i < cs_program_nops(p); i++) {
        const cs_op_t *op = cs_program_op(p, i);
        per_rank[op->rank]++;
        if (op->kind == CS_OP_SEND || op->kind == CS_OP_RECV)
            cr_expect(op->rank < 2 && op->peer < 2, "op %d touches rank %d/%d", i, op->rank,
                      op->peer);
    }
    /* ranks 2 and 3: their compute node (and the metadata node) only */
    cr_expect_eq(per_rank[2], idle_ops);
    cr_expect_eq(per_rank[3], idle_ops);
    cr_expect_gt(per_rank[0], 2);
    /* a ring allreduce of 1 MiB on 2 ranks: 2 steps of alpha + beta n/2 */
    cs_tick_t want = 2 * (US + (1 << 19) * 1000LL);
    cr_expect_eq(run("alphabeta:topo=ring,p=4", p), want);
}

Test(chakra, a_group_collective_runs_on_its_group_only)
{
    buf_t b[4] = {{0}};
    group_trace(b, 1);
    cs_chakra_opts_t o;
    cs_chakra_info_t info;
    cs_error_t err;
    cs_chakra_opts_default(&o);
    cs_program_t *p = read_bufs(b, 4, &o, &info, CS_OK, &err);
    cr_expect_eq(info.groups, 1);
    check_group_program(p, 2);
    cs_program_free(p);
    free_bufs(b, 4);
}

Test(chakra, groups_from_astra_sims_comm_group_file)
{
    buf_t b[4] = {{0}};
    group_trace(b, 0);
    cs_chakra_opts_t o;
    cs_chakra_info_t info;
    cs_error_t err;
    cs_chakra_opts_default(&o);
    /* without the file, group 7 is unknown */
    read_bufs(b, 4, &o, &info, CS_ERR_PARSE, &err);
    cr_expect(strstr(err.msg, "t.0.et: node 1: process group '7' is not defined"), "%s", err.msg);
    char path[] = "/tmp/cs_chakra_groupXXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    dprintf(fd, "{\"7\": [0, 1]}\n");
    close(fd);
    o.comm_group = path;
    cs_program_t *p = read_bufs(b, 4, &o, &info, CS_OK, &err);
    check_group_program(p, 1);
    cs_program_free(p);
    unlink(path);
    free_bufs(b, 4);
}

/* ---- malformed traces -------------------------------------------------------- */

/* Two ranks, each a compute node 1 and a node 2 after it. */
static void two_ranks(buf_t *b, const nspec_t *second)
{
    for (int r = 0; r < 2; r++) {
        put_meta(&b[r]);
        put_node(&b[r], &(nspec_t){1, COMP, 1, {0}, 0, {NULL}, {0}, NULL, NULL});
        if (second)
            put_node(&b[r], second);
    }
}

static const char *fails(buf_t *b, int P, int skip, int code)
{
    static cs_error_t err;
    cs_chakra_opts_t o;
    cs_chakra_info_t info;
    cs_chakra_opts_default(&o);
    o.skip_unknown = skip;
    read_bufs(b, P, &o, &info, code, &err);
    return err.msg;
}

Test(chakra, truncated_message_and_length_past_the_file)
{
    buf_t b[2] = {{0}};
    two_ranks(b, NULL);
    size_t full = b[1].n;
    b[1].n = full - 3; /* the last message cut: its prefix runs past the end */
    const char *m = fails(b, 2, 0, CS_ERR_PARSE);
    cr_expect(strstr(m, "t.1.et: byte ") && strstr(m, "node #0") &&
              strstr(m, "runs past the file's end"), "%s", m);
    /* a prefix cut in its middle: 0x80 promises another byte */
    b[1].n = full;
    uint8_t cont = 0x80;
    put(&b[1], &cont, 1);
    m = fails(b, 2, 0, CS_ERR_PARSE);
    cr_expect(strstr(m, "node #1") && strstr(m, "inside a length prefix"), "%s", m);
    /* a message that does not parse: a field of wire type 7 */
    b[1].n = full;
    uint8_t garbled[] = {2, 0x0f, 0x00};
    put(&b[1], garbled, sizeof garbled);
    m = fails(b, 2, 0, CS_ERR_PARSE);
    cr_expect(strstr(m, "do not parse as a Node message"), "%s", m);
    free_bufs(b, 2);
}

Test(chakra, dependency_on_a_missing_node_and_a_cycle)
{
    buf_t b[2] = {{0}};
    two_ranks(b, &(nspec_t){2, COMP, 1, {1, 9}, 2, {NULL}, {0}, NULL, NULL});
    const char *m = fails(b, 2, 0, CS_ERR_PARSE);
    cr_expect(strstr(m, "t.0.et: node 2: depends on node 9, which is not in the file"), "%s", m);
    free_bufs(b, 2);
    buf_t c[1] = {{0}};
    put_meta(&c[0]);
    put_node(&c[0], &(nspec_t){1, COMP, 1, {3}, 1, {NULL}, {0}, NULL, NULL});
    put_node(&c[0], &(nspec_t){2, COMP, 1, {1}, 1, {NULL}, {0}, NULL, NULL});
    put_node(&c[0], &(nspec_t){3, COMP, 1, {2}, 1, {NULL}, {0}, NULL, NULL});
    m = fails(c, 1, 0, CS_ERR_PARSE);
    cr_expect(strstr(m, "t.0.et: node ") && strstr(m, "dependency cycle") &&
              strstr(m, "1") && strstr(m, "2") && strstr(m, "3"), "%s", m);
    free_bufs(c, 1);
}

Test(chakra, peer_out_of_range_and_unmatched_messages)
{
    buf_t b[2] = {{0}};
    two_ranks(b, &(nspec_t){2, SEND, 0, {1}, 1, {"comm_dst", "comm_size", NULL}, {5, 8}, NULL,
                            NULL});
    const char *m = fails(b, 2, 0, CS_ERR_PARSE);
    cr_expect(strstr(m, "t.0.et: node 2: comm_dst 5 is outside the trace's ranks 0..1"), "%s", m);
    free_bufs(b, 2);
    buf_t c[2] = {{0}};
    two_ranks(c, &(nspec_t){2, SEND, 0, {1}, 1, {"comm_dst", "comm_size", NULL}, {0, 8}, NULL,
                            NULL});
    m = fails(c, 2, 0, CS_ERR_PARSE);
    cr_expect(strstr(m, "node 2: send to rank 0") && strstr(m, "never received"), "%s", m);
    free_bufs(c, 2);
}

/* The reader keeps an op's node id in its line, and ids from INT_MAX up
 * beside it: the pairing errors, made once the nodes are gone, still name
 * both nodes by their full ids. */
Test(chakra, pairing_errors_name_ids_past_int_max)
{
    buf_t b[2] = {{0}};
    for (int r = 0; r < 2; r++) {
        put_meta(&b[r]);
        put_node(&b[r], &(nspec_t){1, COMP, 1, {0}, 0, {NULL}, {0}, NULL, NULL});
    }
    put_node(&b[0], &(nspec_t){5000000000ULL, SEND, 0, {1}, 1, {"comm_dst", "comm_size", NULL},
                               {1, 8}, NULL, NULL});
    put_node(&b[1], &(nspec_t){9223372036854775815ULL, RECV, 0, {1}, 1,
                               {"comm_src", "comm_size", NULL}, {0, 4}, NULL, NULL});
    const char *m = fails(b, 2, 0, CS_ERR_PARSE);
    cr_expect(strstr(m, "t.1.et: node 9223372036854775815: recv of 4 bytes from rank 0") &&
              strstr(m, "8-byte message it takes (t.0.et: node 5000000000)"), "%s", m);
    free_bufs(b, 2);
}

Test(chakra, unknown_node_type_and_attribute_or_skipped_and_counted)
{
    buf_t b[2] = {{0}};
    two_ranks(b, &(nspec_t){2, 10, 1, {1}, 1, {NULL}, {0}, NULL, NULL});
    const char *m = fails(b, 2, 0, CS_ERR_PARSE);
    cr_expect(strstr(m, "t.0.et: node 2: node type 10 (CHECKPOINT_NODE) is not replayed"), "%s",
              m);
    cs_chakra_opts_t o;
    cs_chakra_info_t info;
    cs_error_t err;
    cs_chakra_opts_default(&o);
    o.skip_unknown = 1;
    cs_program_t *p = read_bufs(b, 2, &o, &info, CS_OK, &err);
    cr_expect_eq(info.skipped_nodes, 2);
    /* the skipped node keeps its place: 1 us, then 0 */
    cr_expect_eq(run("alphabeta:topo=ring,p=2", p), US);
    cs_program_free(p);
    free_bufs(b, 2);
    buf_t c[2] = {{0}};
    two_ranks(c, &(nspec_t){2, COMP, 1, {1}, 1, {"flux", NULL}, {1}, NULL, NULL});
    m = fails(c, 2, 0, CS_ERR_PARSE);
    cr_expect(strstr(m, "t.0.et: node 2: unknown attribute 'flux'"), "%s", m);
    p = read_bufs(c, 2, &o, &info, CS_OK, &err);
    cr_expect_eq(info.skipped_attrs, 2);
    cs_program_free(p);
    free_bufs(c, 2);
}

Test(chakra, missing_rank_file_and_too_many_ranks)
{
    char dir[] = "/tmp/cs_chakra_dirXXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    buf_t b[1] = {{0}};
    put_meta(&b[0]);
    put_node(&b[0], &(nspec_t){1, COMP, 1, {0}, 0, {NULL}, {0}, NULL, NULL});
    char path[256];
    for (int r = 0; r < 3; r += 2) { /* ranks 0 and 2: 1 is missing */
        snprintf(path, sizeof path, "%s/w.%d.et", dir, r);
        FILE *f = fopen(path, "wb");
        fwrite(b[0].d, 1, b[0].n, f);
        fclose(f);
    }
    cs_chakra_opts_t o;
    cs_program_t *p;
    cs_error_t err;
    cs_chakra_opts_default(&o);
    snprintf(path, sizeof path, "%s/w", dir);
    cr_assert_eq(cs_chakra_read(path, &o, &p, NULL, &err), CS_ERR_IO);
    cr_expect(strstr(err.msg, "/w.1.et: missing rank file") != NULL, "%s", err.msg);
    o.max_ranks = 2;
    cr_assert_eq(cs_chakra_read(path, &o, &p, NULL, &err), CS_ERR_RANGE);
    cr_expect(strstr(err.msg, "3 ranks but the machine has only 2 nodes") != NULL, "%s", err.msg);
    for (int r = 0; r < 3; r += 2) {
        snprintf(path, sizeof path, "%s/w.%d.et", dir, r);
        unlink(path);
    }
    rmdir(dir);
    free_bufs(b, 1);
}
