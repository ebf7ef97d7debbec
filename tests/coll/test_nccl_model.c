/*
 * test_nccl_model.c - NCCL's cost model (src/coll/nccl_model.c) against
 * hand evaluations of NVIDIA/nccl v2.30.7-1's src/graph/tuning.cc on
 * made-up machines.  Every expected number below is written from the
 * source's tables by hand (base and hardware latencies, the Hopper and
 * Intel bandwidth caps, the tree's correction factors), term by term in
 * the comment beside it; none is computed by the code under test.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "coll/nccl_model.h"

TestSuite(nccl_model);

enum { LL = 0, LL128 = 1, SIMPLE = 2 };

static void expect_near(double got, double want, const char *what)
{
    cr_assert(fabs(got - want) <= 1e-9 * fmax(1.0, fabs(want)), "%s: %.12g, want %.12g", what,
              got, want);
}

/* 16 ranks on 4 nodes (4 a node), 10 GB/s a channel inside and between
 * nodes, 4 channels, NVLink inside, no NVLS or CollNet: an allreduce.
 * Ring: 2(P-1) = 30 steps, 6 of them between nodes (2 (nNodes - 1)).
 *   bus 4 x 10 = 40 GB/s; LL min(20.4 Intel N4 cap, 40 x .5) = 20;
 *   LL128 min(40 x .92, 4 x 36.7) = 36.8; Simple 40; each x 16/30.
 *   latency: base + 24 intra steps x max(hwLat NVLink Ring, net overhead
 *   1 us, 3 us for Simple) + 6 x hwLat NET Ring:
 *   LL 6.6 + 24 x 1.0 + 6 x 2.7 = 46.8; LL128 14 + 24 x 1.9 + 6 x 4 = 83.6;
 *   Simple 8.4 + 24 x 3.4 + 6 x 14 = 174, x 1.4 (plateau) from 4 KiB.
 * Tree: bus min(40 x .92, 4 x 36.0) = 36.8; LL min(36.8 / 3.8, 20.4);
 *   LL128 min(36.8 x 120/128, 4 x 29) = 34.5; Simple 36.8; each x .5.
 *   latency base + 2 ((ppn - 1) hwLat NVLink Tree + log2(4) hwLat NET Tree):
 *   LL 6.8 + 2 (3 x .6 + 2 x 5) = 30.4; LL128 14 + 2 (3 x 1.25 + 2 x 8.5)
 *   = 55.5; Simple 8.4 + 2 (3 x 4 + 2 x 14) = 88.4. */
static cs_nccl_model_in_t pod16(int64_t bytes)
{
    return (cs_nccl_model_in_t){.kind = CS_COLL_ALLREDUCE, .nranks = 16, .nnodes = 4,
                                .bytes = bytes, .bw_intra = 10, .bw_inter = 10,
                                .lat_inter = 0, .intra_hw = CS_NCCL_HW_NVLINK, .nchannels = 4};
}

#define RING_BW(x) (1000.0 * (x) * 16.0 / 30.0) /* bytes per us */
#define TREE_BW(x) (1000.0 * (x) * 0.5)

Test(nccl_model, allreduce_1KiB_picks_tree_ll)
{
    cs_nccl_model_out_t o;
    cs_error_t err;
    cs_nccl_model_in_t in = pod16(1024);
    cr_assert_eq(cs_nccl_model(&in, &o, &err), CS_OK, "%s", err.msg);
    /* log2(1024 / 64) = 4: tree factors LL .9, LL128 1.0, Simple .9;
     * 1024 / (4 x 16) = 16 < 64: no plateau */
    expect_near(o.time[CS_NCCL_RING][LL], 46.8 + 1024 / RING_BW(20), "ring LL");
    expect_near(o.time[CS_NCCL_RING][LL128], 83.6 + 1024 / RING_BW(36.8), "ring LL128");
    expect_near(o.time[CS_NCCL_RING][SIMPLE], 174 + 1024 / RING_BW(40), "ring Simple");
    expect_near(o.time[CS_NCCL_TREE][LL], 30.4 + 1024 / (TREE_BW(36.8 / 3.8) * .9), "tree LL");
    expect_near(o.time[CS_NCCL_TREE][LL128], 55.5 + 1024 / TREE_BW(34.5), "tree LL128");
    expect_near(o.time[CS_NCCL_TREE][SIMPLE], 88.4 + 1024 / (TREE_BW(36.8) * .9), "tree Simple");
    cr_assert_eq(o.algo, CS_NCCL_TREE);
    cr_assert_eq(o.proto, CS_PROTO_LL);
    expect_near(o.time_us, 30.4 + 1024 / (TREE_BW(36.8 / 3.8) * .9), "estimate");
    /* channels: 1024 < nc x 512 threads x 8 for every nc >= 2 */
    cr_assert_eq(o.nchannels, 1);
    /* PAT is not for allreduce, NVLS and CollNet are absent */
    cr_assert_lt(o.time[CS_NCCL_PAT][SIMPLE], 0);
    cr_assert_lt(o.time[CS_NCCL_NVLS][SIMPLE], 0);
    cr_assert_lt(o.time[CS_NCCL_COLLNET_DIRECT][SIMPLE], 0);
}

Test(nccl_model, allreduce_1MiB_picks_ring_ll128)
{
    cs_nccl_model_out_t o;
    cs_error_t err;
    cs_nccl_model_in_t in = pod16(1048576);
    cr_assert_eq(cs_nccl_model(&in, &o, &err), CS_OK, "%s", err.msg);
    /* log2(2^20 / 64) = 14: tree factors LL .5, LL128 .6, Simple .5 */
    expect_near(o.time[CS_NCCL_RING][LL], 46.8 + 1048576 / RING_BW(20), "ring LL");
    expect_near(o.time[CS_NCCL_RING][LL128], 83.6 + 1048576 / RING_BW(36.8), "ring LL128");
    expect_near(o.time[CS_NCCL_RING][SIMPLE], 174 * 1.4 + 1048576 / RING_BW(40), "ring Simple");
    expect_near(o.time[CS_NCCL_TREE][LL128], 55.5 + 1048576 / (TREE_BW(34.5) * .6),
                "tree LL128");
    expect_near(o.time[CS_NCCL_TREE][SIMPLE], 88.4 + 1048576 / (TREE_BW(36.8) * .5),
                "tree Simple");
    /* 137.03 (ring LL128) < 145.10 (ring LL) < 156.81 (tree LL128) */
    cr_assert_eq(o.algo, CS_NCCL_RING);
    cr_assert_eq(o.proto, CS_PROTO_LL128);
    cr_assert_eq(o.nchannels, 4); /* 2^20 >= 4 x 640 x 8 */
}

Test(nccl_model, allreduce_256MiB_picks_ring_simple)
{
    cs_nccl_model_out_t o;
    cs_error_t err;
    int64_t n = INT64_C(268435456);
    cs_nccl_model_in_t in = pod16(n);
    cr_assert_eq(cs_nccl_model(&in, &o, &err), CS_OK, "%s", err.msg);
    /* log2(2^28 / 64) = 22: tree Simple .9 */
    expect_near(o.time[CS_NCCL_RING][SIMPLE], 243.6 + n / RING_BW(40), "ring Simple");
    expect_near(o.time[CS_NCCL_TREE][SIMPLE], 88.4 + n / (TREE_BW(36.8) * .9), "tree Simple");
    cr_assert_eq(o.algo, CS_NCCL_RING);
    cr_assert_eq(o.proto, CS_PROTO_SIMPLE);
    expect_near(o.time_us, 243.6 + n / RING_BW(40), "estimate");
    cr_assert_eq(o.nchannels, 4);
}

/* One node of 8 GPUs, 20 GB/s a channel, 2 channels: an allgather of 4 KiB
 * a rank (nBytes 32 KiB).  Only the ring (PAT wants one GPU a node):
 * 7 steps, all inside; LL cap one node Hopper 141; bus 40.
 * LL 6.6 + 7 x .6 = 10.8 at min(141, 20) x 8/7; LL128 14 + 7 x 1.9 = 27.3
 * at 36.8 x 8/7; Simple 8.4 + 7 x 3.4 = 32.2 at 40 x 8/7. */
Test(nccl_model, one_node_allgather_picks_ring_ll)
{
    cs_nccl_model_out_t o;
    cs_error_t err;
    cs_nccl_model_in_t in = {.kind = CS_COLL_ALLGATHER, .nranks = 8, .nnodes = 1,
                             .bytes = 4096, .bw_intra = 20, .bw_inter = 20,
                             .intra_hw = CS_NCCL_HW_NVLINK, .nchannels = 2};
    cr_assert_eq(cs_nccl_model(&in, &o, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(o.nbytes, 32768);
    expect_near(o.time[CS_NCCL_RING][LL], 10.8 + 32768 / (1000 * 20 * 8 / 7.0), "ring LL");
    expect_near(o.time[CS_NCCL_RING][LL128], 27.3 + 32768 / (1000 * 36.8 * 8 / 7.0),
                "ring LL128");
    expect_near(o.time[CS_NCCL_RING][SIMPLE], 32.2 + 32768 / (1000 * 40 * 8 / 7.0),
                "ring Simple");
    cr_assert_lt(o.time[CS_NCCL_PAT][SIMPLE], 0);
    cr_assert_lt(o.time[CS_NCCL_TREE][SIMPLE], 0); /* no tree for allgather */
    cr_assert_eq(o.algo, CS_NCCL_RING);
    cr_assert_eq(o.proto, CS_PROTO_LL);
    /* the ring's LL threshold is 8 x nRanks: 32768 < 2 x 512 x 64 */
    cr_assert_eq(o.nchannels, 1);
}

/* 8 nodes of one GPU, 10 GB/s, 2 channels: an allgather, where PAT runs.
 * PAT: bus 20 x .75 = 15 (kept as the algorithm's), latency
 * 8 + log2(8) x 14 / 3.5 + 8 x 2.8 = 42.4.  Ring with one GPU a node: every
 * step between nodes at the tree's NET latency: LL 6.6 + 7 x 5 = 41.6,
 * LL128 14 + 7 x 8.5 = 73.5, Simple 8.4 + 7 x 14 = 106.4; bandwidths
 * min(20.4, 10), min(18.4, 73.4), 20, each x 8/7. */
Test(nccl_model, one_gpu_a_node_allgather_pat_against_ring)
{
    cs_nccl_model_out_t o;
    cs_error_t err;
    cs_nccl_model_in_t in = {.kind = CS_COLL_ALLGATHER, .nranks = 8, .nnodes = 8,
                             .bytes = 1024, .bw_intra = 10, .bw_inter = 10,
                             .intra_hw = CS_NCCL_HW_NVLINK, .nchannels = 2};
    cr_assert_eq(cs_nccl_model(&in, &o, &err), CS_OK, "%s", err.msg);
    expect_near(o.time[CS_NCCL_PAT][SIMPLE], 42.4 + 8192 / 15000.0, "PAT 1 KiB");
    expect_near(o.time[CS_NCCL_RING][LL], 41.6 + 8192 / (1000 * 10 * 8 / 7.0), "ring LL 1 KiB");
    cr_assert_eq(o.algo, CS_NCCL_RING); /* 42.32 against PAT's 42.95 */
    cr_assert_eq(o.proto, CS_PROTO_LL);
    in.bytes = 1048576;
    cr_assert_eq(cs_nccl_model(&in, &o, &err), CS_OK, "%s", err.msg);
    expect_near(o.time[CS_NCCL_RING][LL128], 73.5 + 8388608 / (1000 * 18.4 * 8 / 7.0),
                "ring LL128 1 MiB");
    expect_near(o.time[CS_NCCL_RING][SIMPLE], 106.4 + 8388608 / (1000 * 20 * 8 / 7.0),
                "ring Simple 1 MiB");
    expect_near(o.time[CS_NCCL_PAT][SIMPLE], 42.4 + 8388608 / 15000.0, "PAT 1 MiB");
    /* 472.41 (LL128) against 473.40 (Simple) and 601.64 (PAT) */
    cr_assert_eq(o.algo, CS_NCCL_RING);
    cr_assert_eq(o.proto, CS_PROTO_LL128);
}

/* NVLS inside one node (8 GPUs, 20 GB/s, 4 channels), an allreduce:
 * bw min(20 x .85 x 3/4 x 2, 20) = 20 (the inter figure of a one-node
 * graph), bus 80 x 8/14; latency hwLat NVLink NVLS Simple = 25 us. */
Test(nccl_model, nvls_inside_a_node)
{
    cs_nccl_model_out_t o;
    cs_error_t err;
    cs_nccl_model_in_t in = {.kind = CS_COLL_ALLREDUCE, .nranks = 8, .nnodes = 1,
                             .bytes = INT64_C(1) << 30, .bw_intra = 20, .bw_inter = 20,
                             .intra_hw = CS_NCCL_HW_NVLINK, .nchannels = 4, .nvls = 1};
    cr_assert_eq(cs_nccl_model(&in, &o, &err), CS_OK, "%s", err.msg);
    expect_near(o.time[CS_NCCL_NVLS][SIMPLE], 25 + 1073741824 / (1000 * 80 * 8 / 14.0), "NVLS");
    cr_assert_lt(o.time[CS_NCCL_NVLS][LL], 0); /* Simple only */
    cr_assert_lt(o.time[CS_NCCL_NVLS_TREE][SIMPLE], 0); /* one node: no NVLSTree */
}

/* NCCL has no algorithm for gather and the like, and odd inputs are
 * refused, each with a message that names them. */
Test(nccl_model, refusals)
{
    cs_nccl_model_out_t o;
    cs_error_t err;
    cs_nccl_model_in_t in = pod16(1024);
    in.kind = CS_COLL_GATHER;
    cr_assert_eq(cs_nccl_model(&in, &o, &err), CS_ERR_USAGE);
    cr_assert(strstr(err.msg, "gather"), "%s", err.msg);
    in = pod16(1024);
    in.nnodes = 17;
    cr_assert_eq(cs_nccl_model(&in, &o, &err), CS_ERR_RANGE);
    cr_assert(strstr(err.msg, "17 nodes"), "%s", err.msg);
    in = pod16(1024);
    in.nchannels = 0;
    cr_assert_eq(cs_nccl_model(&in, &o, &err), CS_ERR_RANGE);
    in = pod16(1024);
    in.bw_inter = 0;
    cr_assert_eq(cs_nccl_model(&in, &o, &err), CS_ERR_RANGE);
}
