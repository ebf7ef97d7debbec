/*
 * test_nccl_tree.c - NCCL's tree algorithms (issue 36): allreduce/nccl-tree
 * (src/coll/nccl_tree.c: the double binary tree of NCCL 2.30.7's
 * src/graph/trees.cc, a chain per node) and allgather, reduce-scatter/
 * nccl-pat (src/coll/nccl_pat.c: parallel aggregated trees).
 *
 *   - the trees read back from the built program's messages (never from the
 *     builder's arrays): no rank inner in both trees, at powers of two and
 *     not; NCCL's own drawing of its 14-rank tree (trees.cc's comment); the
 *     chain in each node and the node tree between chain heads;
 *   - --validate on four machines (alphabeta, a net: fat-tree and a two-tier
 *     pod with their groups, Cerebras) at P = 8 and P = 6;
 *   - times against schedules worked out by hand on an alpha-beta complete
 *     graph (one chunk per channel), in both network modes: the tree's
 *     chains, PAT's aggregated messages (log2 P latencies at P = 8);
 *   - op counts against hand counts; option errors name their key.
 */

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

/* Alpha-beta machine of the timing tests: alpha = 1500 ns, beta = 2 ns a
 * byte, 1 ps ticks: an uncontended message of len bytes takes T(len). */
#define AB_SPEC(P) "alphabeta:topo=complete,p=" #P ",alpha=1500ns,beta=2ns"
static cs_tick_t T(int64_t len)
{
    return 1500000 + 2000 * len;
}

/* up[t][r]: the rank r sends its sum to in tree t, read from the program's
 * up messages (tags 2c, channel c running tree c / nchannels: with
 * nchannels=1 tag 0 is tree 0 and tag 2 tree 1); -1 when r sends none.
 * nin[t][r]: how many up messages r receives in tree t.  A rank is inner in
 * a tree when it both receives and sends there. */
typedef struct seen {
    int up[2][64], nin[2][64];
} seen_t;

static void read_trees(const cs_program_t *p, int P, seen_t *s)
{
    memset(s, 0, sizeof *s);
    for (int t = 0; t < 2; t++)
        for (int r = 0; r < P; r++)
            s->up[t][r] = -1;
    for (int32_t i = 0; i < cs_program_nops(p); i++) {
        const cs_op_t *op = cs_program_op(p, i);
        if (op->kind != CS_OP_SEND || (op->tag != 0 && op->tag != 2))
            continue;
        int t = op->tag / 2;
        cr_assert_eq(s->up[t][op->rank], -1, "rank %d sends up twice in tree %d", op->rank, t);
        s->up[t][op->rank] = op->peer;
        s->nin[t][op->peer]++;
    }
}

static h_run_t tree_program(const char *spec, int P, int64_t bytes)
{
    h_run_t r = h_run(spec, "allreduce", "nccl-tree", P, bytes, 0,
                      "nchannels=1,chunk=1099511627776", CS_NET_PACKET, 0);
    cr_assert_eq(r.rc, CS_OK, "%s P=%d: %s", spec, P, r.err.msg);
    return r;
}

Test(nccl_tree, no_rank_inner_in_both_trees)
{
    static const int Ps[] = {2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14, 16, 17, 31, 32, 33, 48, 63};
    for (size_t k = 0; k < sizeof Ps / sizeof *Ps; k++) {
        int P = Ps[k];
        char spec[96];
        snprintf(spec, sizeof spec, "alphabeta:topo=complete,p=%d", P);
        h_run_t r = tree_program(spec, P, 1 << 16);
        seen_t s;
        read_trees(r.prog, P, &s);
        for (int t = 0; t < 2; t++) {
            int roots = 0;
            for (int q = 0; q < P; q++) {
                roots += s.up[t][q] < 0;
                cr_expect_leq(s.nin[t][q], 2, "P=%d tree %d: rank %d has %d children", P, t, q,
                              s.nin[t][q]);
            }
            cr_expect_eq(roots, 1, "P=%d tree %d: %d ranks send nothing up", P, t, roots);
        }
        int differ = 0;
        for (int q = 0; q < P; q++) {
            int inner0 = s.nin[0][q] > 0 && s.up[0][q] >= 0;
            int inner1 = s.nin[1][q] > 0 && s.up[1][q] >= 0;
            cr_expect(!(inner0 && inner1), "P=%d: rank %d inner in both trees", P, q);
            differ |= s.up[0][q] != s.up[1][q];
        }
        cr_expect(differ, "P=%d: the two trees are the same", P);
        h_done(&r);
    }
}

/* NCCL draws its 14-rank trees in src/graph/trees.cc: tree 0 is
 * 0 - 8, 8 - {4, 12}, 4 - {2, 6}, 12 - {10, 13}, 2 - {1, 3}, 6 - {5, 7},
 * 10 - {9, 11}; tree 1 its mirror (r -> 13 - r).  For 13 ranks tree 1 is
 * tree 0 shifted by one (the drawing: 1 - 9, 9 - {5, 0}, 5 - {3, 7},
 * 0 - 11, 3 - {2, 4}, 7 - {6, 8}, 11 - {10, 12}). */
Test(nccl_tree, nccl_drawings)
{
    static const int up14[14] = {-1, 2, 4, 2, 8, 6, 4, 6, 0, 10, 12, 10, 8, 12};
    static const int up13_1[13] = {9, -1, 3, 5, 3, 9, 7, 5, 7, 1, 11, 0, 11};
    h_run_t r = tree_program("alphabeta:topo=complete,p=14", 14, 1 << 16);
    seen_t s;
    read_trees(r.prog, 14, &s);
    for (int q = 0; q < 14; q++) {
        cr_expect_eq(s.up[0][q], up14[q], "P=14 tree 0: parent of %d", q);
        int m = up14[13 - q];
        cr_expect_eq(s.up[1][q], m < 0 ? -1 : 13 - m, "P=14 tree 1: parent of %d", q);
    }
    h_done(&r);
    r = tree_program("alphabeta:topo=complete,p=13", 13, 1 << 16);
    read_trees(r.prog, 13, &s);
    for (int q = 0; q < 13; q++)
        cr_expect_eq(s.up[1][q], up13_1[q], "P=13 tree 1: parent of %d", q);
    h_done(&r);
}

/* With the machine's groups (a two-tier pod: 3 nodes of 4 GPUs): a chain
 * through each node's ranks (rank i of a node sends up to rank i-1) and the
 * double binary tree over the 3 nodes between the chains' first ranks
 * (nodes: tree 0 = 0 - 2 - 1, tree 1 shifted = 1 - 0 - 2, i.e. ranks
 * 8 -> 0, 4 -> 8 and 0 -> 4, 8 -> 0). */
Test(nccl_tree, chain_per_node)
{
    static const int node_up[2][3] = {{-1, 2, 0}, {1, -1, 0}};
    h_run_t r = tree_program("net:gen=twotier,nodes=3,gpus=4,radix=16", 12, 1 << 16);
    seen_t s;
    read_trees(r.prog, 12, &s);
    for (int t = 0; t < 2; t++)
        for (int q = 0; q < 12; q++) {
            int node = q / 4, want;
            if (q % 4)
                want = q - 1;
            else
                want = node_up[t][node] < 0 ? -1 : 4 * node_up[t][node];
            cr_expect_eq(s.up[t][q], want, "tree %d: parent of %d", t, q);
        }
    h_done(&r);
}

/* ---- --validate on four machines, P = 8 and P = 6 ------------------------- */

static void validate_on(const char *spec, int P, int64_t bytes, const char *opts)
{
    static const char *const algos[][2] = {
        {"allreduce", "nccl-tree"}, {"allgather", "nccl-pat"}, {"reduce-scatter", "nccl-pat"}};
    for (int i = 0; i < 3; i++) {
        h_run_t r = h_run(spec, algos[i][0], algos[i][1], P, bytes, 0, opts, CS_NET_PACKET, 1);
        cr_expect_eq(r.rc, CS_OK, "%s/%s on %s P=%d (%s): %s", algos[i][0], algos[i][1], spec, P,
                     opts ? opts : "defaults", r.err.msg);
        h_done(&r);
    }
}

Test(nccl_tree, validates_alphabeta)
{
    validate_on("alphabeta:topo=complete,p=8", 8, 100000, NULL);
    validate_on("alphabeta:topo=ring,p=6", 6, 100003, "nchannels=3,chunk=4096");
    validate_on("alphabeta:topo=complete,p=8", 8, 5, "nchannels=4"); /* empty channels */
}

Test(nccl_tree, validates_net)
{
    /* groups: the 4 hosts of each leaf switch; the nodes of the pod */
    validate_on("net:gen=fattree,k=4,n=2", 8, 65536, "chunk=8192");
    validate_on("net:gen=fattree,k=4,n=2", 6, 65537, "chunk=8192");
    validate_on("net:gen=twotier,nodes=2,gpus=4,radix=16", 8, 65536, "nchannels=1,chunk=4096");
    validate_on("net:gen=twotier,nodes=3,gpus=2,radix=16", 6, 65536, NULL);
}

Test(nccl_tree, validates_cerebras)
{
    validate_on("cerebras:rows=2,cols=4", 8, 96, "chunk=16");
    validate_on("cerebras:rows=2,cols=3", 6, 100, NULL);
}

/* ---- times on an alpha-beta complete graph, worked out by hand ------------- */

static cs_tick_t run_time(const char *spec, const char *coll, const char *algo, int P,
                          int64_t bytes, const char *opts, cs_net_mode_t mode)
{
    h_run_t r = h_run(spec, coll, algo, P, bytes, 0, opts, mode, 1);
    cr_assert_eq(r.rc, CS_OK, "%s/%s P=%d: %s", coll, algo, P, r.err.msg);
    cs_tick_t t = r.finish;
    h_done(&r);
    return t;
}

/* One channel pair, one chunk each (n/2 bytes a tree).  P = 2: each rank
 * sends its tree's half up and the other tree's half down, full duplex:
 * 2 T(n/2).  P = 3: tree 0 is the chain 1 -> 2 -> 0, tree 1 (shifted)
 * 2 -> 0 -> 1; at every step the two trees' messages have distinct senders
 * and receivers (1->2 | 2->0, then 2->0 | 0->1, then 0->2 | 1->0, then
 * 2->1 | 0->2), so up (2 hops) and down (2 hops) take 4 T(n/2). */
Test(nccl_tree, allreduce_times)
{
    const int64_t n = 1 << 20;
    for (int m = 0; m < 2; m++) {
        cs_net_mode_t mode = m ? CS_NET_FLUID : CS_NET_PACKET;
        cr_expect_eq(run_time(AB_SPEC(2), "allreduce", "nccl-tree", 2, n,
                              "nchannels=1,chunk=1048576,proto_lat=0", mode),
                     2 * T(n / 2));
        cr_expect_eq(run_time(AB_SPEC(3), "allreduce", "nccl-tree", 3, n,
                              "nchannels=1,chunk=1048576,proto_lat=0", mode),
                     4 * T(n / 2));
    }
}

/* PAT, one channel and one chunk, blocks of m bytes.  NCCL's aggregation
 * factor A (blocks a message may carry) is the largest power of two below
 * P / 2 after at most 3 + 1 doublings here: 1 at P = 2, 2 at P = 4, 4 at
 * P = 6 and 8; D = 2^ceil(log2 P) / A.
 *   P = 2: one block each way: T(m).
 *   P = 4 (A = 2, D = 2), all-gather: its block to r-2 (T(m)), then the
 *     two blocks it holds (its own, r+2's) to r-1: T(m) + T(2m).  The
 *     reduce-scatter mirrors it: the partial sums of blocks r+1 and r+3 to
 *     r+1 (T(2m)), then block r+2's sum to r+2 (T(m)).
 *   P = 8 (A = 4, D = 2): 1, 2 then 4 blocks to r-4, r-2, r-1 (each step
 *     forwarding what the last brought): T(m) + T(2m) + T(4m), log2 8
 *     latencies where the ring pays 7; the reduce-scatter the same.
 *   P = 6 (A = 4, D = 2): offsets 6 and 7 do not exist.  Its block to r-4
 *     and to r-2 (the second message would also carry offset 4, which
 *     would land at the missing offset 6): T(m) then T(m) on the one send
 *     port; then offsets 0, 4, 2 to r-1 in one message once offset 2 is in:
 *     2 T(m) + T(3m).  Reduce-scatter: offsets 1, 5, 3 to r+1 (T(3m)), then
 *     offset 2 to r+2 and offset 4 to r+4, both complete then, one after
 *     the other: T(3m) + 2 T(m). */
Test(nccl_tree, pat_times)
{
    const int64_t m = 100000;
    const char *opt = "nchannels=1,chunk=1048576,proto_lat=0";
    for (int k = 0; k < 2; k++) {
        cs_net_mode_t mode = k ? CS_NET_FLUID : CS_NET_PACKET;
        cr_expect_eq(run_time(AB_SPEC(2), "allgather", "nccl-pat", 2, m, opt, mode), T(m));
        cr_expect_eq(run_time(AB_SPEC(2), "reduce-scatter", "nccl-pat", 2, m, opt, mode), T(m));
        cr_expect_eq(run_time(AB_SPEC(4), "allgather", "nccl-pat", 4, m, opt, mode),
                     T(m) + T(2 * m));
        cr_expect_eq(run_time(AB_SPEC(4), "reduce-scatter", "nccl-pat", 4, m, opt, mode),
                     T(m) + T(2 * m));
        cr_expect_eq(run_time(AB_SPEC(8), "allgather", "nccl-pat", 8, m, opt, mode),
                     T(m) + T(2 * m) + T(4 * m));
        cr_expect_eq(run_time(AB_SPEC(8), "reduce-scatter", "nccl-pat", 8, m, opt, mode),
                     T(m) + T(2 * m) + T(4 * m));
        cr_expect_eq(run_time(AB_SPEC(6), "allgather", "nccl-pat", 6, m, opt, mode),
                     2 * T(m) + T(3 * m));
        cr_expect_eq(run_time(AB_SPEC(6), "reduce-scatter", "nccl-pat", 6, m, opt, mode),
                     2 * T(m) + T(3 * m));
    }
}

/* The protocol's latency (proto_lat, paid by every message before it
 * enters the network) on the same schedules: each message on the critical
 * path adds L = 1 us.  The tree at P = 3: 4 (L + T(n/2)).  PAT at P = 8:
 * 3 L on top (its local copies, inside the GPU in NCCL, pay none); at P = 4
 * 2 L. */
Test(nccl_tree, protocol_latency)
{
    const int64_t n = 1 << 20, m = 100000, L = 1000000;
    const char *opt = "nchannels=1,chunk=1048576,proto_lat=1us";
    cr_expect_eq(run_time(AB_SPEC(3), "allreduce", "nccl-tree", 3, n, opt, CS_NET_PACKET),
                 4 * (L + T(n / 2)));
    cr_expect_eq(run_time(AB_SPEC(8), "allgather", "nccl-pat", 8, m, opt, CS_NET_FLUID),
                 3 * L + T(m) + T(2 * m) + T(4 * m));
    cr_expect_eq(run_time(AB_SPEC(4), "reduce-scatter", "nccl-pat", 4, m, opt, CS_NET_PACKET),
                 2 * L + T(m) + T(2 * m));
}

/* ---- op counts and options ------------------------------------------------ */

static void expect_ops(const char *coll, const char *algo, int P, int64_t bytes, const char *opts,
                       int64_t want)
{
    char spec[96];
    snprintf(spec, sizeof spec, "alphabeta:topo=complete,p=%d", P);
    h_run_t r = h_run(spec, coll, algo, P, bytes, 0, opts, CS_NET_PACKET, 0);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    cr_expect_eq(cs_program_nops_visible(r.prog), want, "%s/%s: ops", coll, algo);
    cs_coll_kind_t kind;
    const cs_coll_algo_t *a;
    cs_spec_t os;
    cs_error_t e;
    char text[128];
    snprintf(text, sizeof text, "opts:%s", opts);
    cr_assert_eq(cs_coll_parse(coll, &kind, &e), CS_OK);
    cr_assert_eq(cs_coll_find(kind, algo, &a, &e), CS_OK);
    cr_assert_eq(cs_spec_parse(text, &os, &e), CS_OK);
    cs_coll_args_t args = {kind, P, bytes, 0, 4096, NULL, &os, 0};
    cr_expect_eq(cs_coll_max_ops(a, &args), want, "%s/%s: max_ops", coll, algo);
    cs_spec_destroy(&os);
    h_done(&r);
}

/* Tree: 2 channels of 512 KiB in chunks of 128 KiB = 8 chunks, each moving
 * up (send, recv, add) and down (send, recv) over the P-1 = 4 edges: 160.
 * PAT at P = 5: 2 channels of 500 bytes of each block in chunks of 300 =
 * 4 chunks; A = 2 (the largest power of two below P / 2 = 2 after doubling),
 * 2^3 = 8 staging places, D = 4: one message to r-4 (offset 4), then for
 * s = 1, 2, 3 one to r-2^(lowest bit of s) of the offsets s and s+4 that
 * exist (1, 2, 3 only): 4 messages a rank.  All-gather: 2 ops a message
 * (its send, and the recv of the one it gets), a copy in and 4 out (2 ops
 * each): 8 + 10 = 18 a rank, 90 a chunk, 360.  Reduce-scatter: 3 ops a
 * message (the add), 5 copies in and 1 out: 12 + 12 = 24, 120 a chunk,
 * 480. */
Test(nccl_tree, op_counts)
{
    expect_ops("allreduce", "nccl-tree", 5, 1 << 20, "nchannels=1,chunk=131072", 160);
    expect_ops("allgather", "nccl-pat", 5, 1000, "nchannels=2,chunk=300", 360);
    expect_ops("reduce-scatter", "nccl-pat", 5, 1000, "nchannels=2,chunk=300", 480);
}

static void expect_error(const char *coll, const char *algo, const char *opts, const char *key)
{
    h_run_t r =
        h_run("alphabeta:topo=complete,p=4", coll, algo, 4, 4096, 0, opts, CS_NET_PACKET, 0);
    cr_expect_neq(r.rc, CS_OK, "%s/%s %s accepted", coll, algo, opts);
    cr_expect(strstr(r.err.msg, key) != NULL, "%s/%s %s: message '%s' does not name '%s'", coll,
              algo, opts, r.err.msg, key);
    h_done(&r);
}

Test(nccl_tree, option_errors)
{
    expect_error("allreduce", "nccl-tree", "proto=ll256", "proto");
    expect_error("allreduce", "nccl-tree", "nchannels=0", "nchannels");
    expect_error("allreduce", "nccl-tree", "chunk=-5", "chunk");
    expect_error("allreduce", "nccl-tree", "trees=1", "trees");
    expect_error("allgather", "nccl-pat", "proto=ll", "proto");
    expect_error("reduce-scatter", "nccl-pat", "proto=ll128", "proto");
    expect_error("reduce-scatter", "nccl-pat", "nchannels=65", "nchannels");
}

/* A chunk of one byte on a big vector: refused before anything is built,
 * by the op count bound. */
Test(nccl_tree, too_many_chunks_refused)
{
    h_run_t r = h_run("alphabeta:topo=complete,p=8", "allreduce", "nccl-tree", 8, INT64_C(1) << 34,
                      0, "chunk=1", CS_NET_PACKET, 0);
    cr_expect_eq(r.rc, CS_ERR_NOMEM, "%s", r.err.msg);
    cr_expect(strstr(r.err.msg, "nccl-tree") != NULL, "%s", r.err.msg);
    h_done(&r);
}
