/*
 * test_ncclpick.c - a machine as NCCL's cost model sees it
 * (src/api/ncclpick.c) and the refusals of `--algo nccl` (request.c).
 * The expected inputs are worked out by hand from the generators' specs
 * (docs/networks.md: a two-tier pod has an NVLink-class link between every
 * two GPUs of a node and one NIC link per GPU); none is read back from the
 * code under test.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "api/ncclpick.h"
#include "api/report.h"
#include "api/sweep.h"
#include "api/request.h"
#include <stdio.h>
#include <stdlib.h>

TestSuite(ncclpick);

/* Prepares collective `coll` with algorithm `algo` (and options) on spec. */
static int prepare(const char *spec, const char *coll, const char *algo, const char *bytes,
                   const char *opt, cs_request_run_t *run, cs_error_t *err, const char *opt2)
{
    cs_request_t r;
    cs_request_init(&r);
    cr_assert_eq(cs_request_set(&r, "machine", spec, err), CS_OK);
    cr_assert_eq(cs_request_set(&r, "coll", coll, err), CS_OK);
    cr_assert_eq(cs_request_set(&r, "algo", algo, err), CS_OK);
    cr_assert_eq(cs_request_set(&r, "bytes", bytes, err), CS_OK);
    if (opt)
        cr_assert_eq(cs_request_set(&r, "opt", opt, err), CS_OK, "%s", err->msg);
    if (opt2)
        cr_assert_eq(cs_request_set(&r, "opt", opt2, err), CS_OK, "%s", err->msg);
    cs_request_run_init(run);
    return cs_request_prepare(&r, run, err);
}

/* Builds a prepared allreduce whole (--whole): no windowed build. */
static int build_whole(cs_request_run_t *run, cs_error_t *err)
{
    cs_request_t r;
    cs_request_init(&r);
    r.coll = "allreduce";
    r.windowed = -1;
    return cs_request_build(&r, run, err);
}

static void inputs_of(const char *spec, int nchannels, cs_nccl_model_in_t *in)
{
    cs_request_run_t run;
    cs_error_t err;
    cr_assert_eq(prepare(spec, "allreduce", "ring", "1MiB", NULL, &run, &err, NULL), CS_OK, "%s",
                 err.msg);
    cr_assert_eq(cs_ncclpick_inputs(run.machine, &run.coll.args, run.coll.rank_to_node,
                                    nchannels, 0, 0, in, &err), CS_OK, "%s", err.msg);
    cs_request_run_destroy(&run);
}

/* 4 nodes of 8 GPUs: nodes from the group hint; the node's way out is its
 * 8 NICs of 50 GB/s = 400 GB/s, under the 450 GB/s NVLink.  16 channels
 * share it: 25 GB/s a channel, inside and between (one speed, as NCCL's
 * graphs that leave a node).  4 channels would get 100 each, but a channel
 * leaves through one NIC: 50.  With NVLink at 300 GB/s the node is bound
 * by it: 300 / 16 = 18.75 a channel. */
Test(ncclpick, two_tier_pod)
{
    cs_nccl_model_in_t in;
    const char *pod = "net:gen=twotier,nodes=4,gpus=8,nvbw=450GB/s,bw=50GB/s,lat=1us";
    inputs_of(pod, 16, &in);
    cr_assert_eq(in.nranks, 32);
    cr_assert_eq(in.nnodes, 4);
    cr_assert_eq(in.nchannels, 16);
    cr_assert_eq(in.intra_hw, CS_NCCL_HW_NVLINK);
    cr_assert_float_eq(in.bw_inter, 25.0, 25e-6, "%.12g", in.bw_inter);
    cr_assert_float_eq(in.bw_intra, 25.0, 25e-6, "%.12g", in.bw_intra);
    cr_assert_eq(in.lat_inter, 0.0);
    inputs_of(pod, 4, &in);
    cr_assert_float_eq(in.bw_inter, 50.0, 50e-6, "%.12g", in.bw_inter);
    inputs_of("net:gen=twotier,nodes=4,gpus=8,nvbw=300GB/s,bw=50GB/s,lat=1us", 16, &in);
    cr_assert_float_eq(in.bw_inter, 18.75, 18.75e-6, "%.12g", in.bw_inter);
}

/* One GPU a node: no NVLink peer, the graph's speed is the NIC's: 50 GB/s
 * over 2 channels. */
Test(ncclpick, one_gpu_a_node)
{
    cs_nccl_model_in_t in;
    inputs_of("net:gen=twotier,nodes=8,gpus=1,radix=2,bw=50GB/s,lat=1us", 2, &in);
    cr_assert_eq(in.nnodes, 8);
    cr_assert_eq(in.nranks, 8);
    cr_assert_float_eq(in.bw_inter, 25.0, 25.0 * 1e-6);
}

/* A star without groups is one node: the host - switch - host route at
 * 10 GB/s over 2 channels. */
Test(ncclpick, one_node_without_groups)
{
    cs_nccl_model_in_t in;
    inputs_of("net:gen=star,hosts=8,bw=10GB/s,lat=1us", 2, &in);
    cr_assert_eq(in.nnodes, 1);
    cr_assert_float_eq(in.bw_intra, 5.0, 5.0 * 1e-6);
}

/* `--algo nccl` refuses what NCCL cannot do, saying why. */
Test(ncclpick, refusals)
{
    cs_request_run_t run;
    cs_error_t err;
    const char *pod = "net:gen=twotier,nodes=2,gpus=8,nvbw=450GB/s,bw=50GB/s,lat=1us";
    /* a collective NCCL has no algorithm for */
    cr_assert_eq(prepare(pod, "gather", "nccl", "1MiB", NULL, &run, &err, NULL), CS_ERR_USAGE);
    cr_assert(strstr(err.msg, "NCCL has no algorithm for gather"), "%s", err.msg);
    cs_request_run_destroy(&run);
    /* a machine whose links NCCL's model cannot read */
    cr_assert_eq(prepare("cerebras:rows=4,cols=4", "allreduce", "nccl", "1KiB", NULL, &run,
                         &err, NULL), CS_ERR_USAGE);
    cr_assert(strstr(err.msg, "runs its own engine"), "%s", err.msg);
    cs_request_run_destroy(&run);
    /* the protocol is the model's to choose */
    cr_assert_eq(prepare(pod, "allreduce", "nccl", "1MiB", "proto=ll", &run, &err, NULL),
                 CS_ERR_USAGE);
    cr_assert(strstr(err.msg, "--opt proto"), "%s", err.msg);
    cs_request_run_destroy(&run);
    /* a machine where the chosen algorithm cannot run: with NVLS asked for
     * on two nodes and 16 channels of 25 GB/s, NVLSTree's bus bandwidth
     * 16 x min(25 x .85 x 15/16 x 2, 2 x 25, 57.7) = 637.5 GB/s beats the
     * ring's 400 at 1 GiB; the pod has no NVSwitch that reduces, so the
     * suite's nccl-nvls (NVLSTree here) cannot run on it */
    int rc = prepare(pod, "allreduce", "nccl", "1GiB", "nvls=1", &run, &err, "nchannels=16");
    if (rc == CS_OK) {
        cr_assert_eq(run.coll.nccl.algo, CS_NCCL_NVLS_TREE);
        rc = build_whole(&run, &err);
    }
    cr_assert_neq(rc, CS_OK);
    cr_assert(strstr(err.msg, "nvls") || strstr(err.msg, "NVLS"), "%s", err.msg);
    cs_request_run_destroy(&run);
    /* likewise CollNet asked for where no switch reduces: at 256 MiB on
     * 4 nodes NCCL's model picks CollNetChain (bus 2 x 50, latency
     * 2 x 7 x 2.8 + 30 = 69.2 us) */
    rc = prepare("net:gen=twotier,nodes=4,gpus=8,nvbw=450GB/s,bw=50GB/s,lat=1us", "allreduce",
                 "nccl", "256MiB", "collnet=1", &run, &err, NULL);
    if (rc == CS_OK) {
        cr_assert_str_eq(run.coll.algo->name, "nccl-collnet-chain");
        rc = build_whole(&run, &err);
    }
    cr_assert_neq(rc, CS_OK);
    cr_assert(strstr(err.msg, "collnet"), "%s", err.msg);
    cs_request_run_destroy(&run);
}

/* `--algo nccl` end to end on a pod of 4 nodes of 8 GPUs, 2 channels of
 * min(400 / 2, 50) = 50 GB/s, an allreduce of 64 MiB: by hand, Ring/Simple
 * at (8.4 + 56 x 3.4 + 6 x 14) x 1.4 = 395.92 us of latency plus 2^26 bytes
 * at 100 x 32/62 GB/s, 1696.15 us, against the tree's 2450.6 (Simple at
 * 72 x .5 x .8 GB/s) and the ring's LL128, 144.4 + 2^26 / (73.4 x 32/62)
 * = 1915.8: the summary says so,
 * the JSON's "nccl" object too, and the ring it runs validates. */
Test(ncclpick, algo_nccl_runs_the_choice)
{
    cs_request_t r;
    cs_request_run_t run;
    cs_exec_opts_t opts;
    cs_error_t err;
    char *buf = NULL;
    size_t len = 0;
    cs_request_init(&r);
    const char *kv[] = {"machine", "net:gen=twotier,nodes=4,gpus=8,nvbw=450GB/s,bw=50GB/s,lat=1us",
                        "coll", "allreduce", "algo", "nccl", "bytes", "64MiB", "mode", "fluid",
                        "validate", "", NULL};
    for (int i = 0; kv[i]; i += 2)
        cr_assert_eq(cs_request_set(&r, kv[i], kv[i + 1], &err), CS_OK, "%s", err.msg);
    cs_request_run_init(&run);
    cr_assert_eq(cs_request_prepare(&r, &run, &err), CS_OK, "%s", err.msg);
    cr_assert_str_eq(run.coll.algo->name, "nccl-ring");
    cr_assert_eq(run.coll.nccl.proto, CS_PROTO_SIMPLE);
    cr_assert_eq(run.coll.nccl.nchannels, 2);
    cr_assert_float_eq(run.coll.nccl.estimate_us, 395.92 + 67108864 / (1000 * 100 * 32 / 62.0),
                       1e-6);
    cr_assert_eq(cs_request_build(&r, &run, &err), CS_OK, "%s", err.msg);
    cs_request_exec_opts(&r, &run, &opts);
    cr_assert_eq(cs_request_run(&run, &opts, &err), CS_OK, "%s", err.msg);
    cr_assert(run.validated);
    FILE *f = open_memstream(&buf, &len);
    cs_report_collective(f, &run.coll, run.validated);
    cr_assert_eq(cs_report_json(f, 0, run.machine, run.program, &run.result, 1, 1, &run.coll,
                                &err), CS_OK, "%s", err.msg);
    fclose(f);
    cr_assert(strstr(buf, "NCCL's choice: Ring/Simple on 2 channels"), "%s", buf);
    cr_assert(strstr(buf, "\"suite_algo\": \"nccl-ring\""), "%s", buf);
    cr_assert(strstr(buf, "\"chosen\": true"), "%s", buf);
    free(buf);
    cs_request_run_destroy(&run);
}

/* The crossovers of a sweep with NCCL's choice (api/sweep.h) on made-up
 * times: ring and tree cross between 4 KiB and 16 KiB, NCCL's pick is
 * slower than the fastest at 4 KiB only (13 against tree's 12). */
Test(ncclpick, sweep_crossovers)
{
    const char *algos[] = {"ring", "tree", "nccl"};
    const int64_t sizes[] = {1024, 4096, 16384, 65536};
    const int ranks[] = {8};
    const char *specs[] = {"m"}, *shorts[] = {"m"}, *engines[] = {"fluid"};
    const double tick_s[] = {1e-9};
    /* [machine][algo][ranks][size] */
    const double ticks[] = {20, 20, 15, 30, /* ring */
                            10, 12, 18, 40, /* tree */
                            10, 13, 15, 30 /* nccl */};
    cs_sweep_figure_t fig = {NULL, NULL, NULL, CS_COLL_ALLREDUCE, 1, specs, shorts, engines,
                             tick_s, 3, algos, 1, ranks, 4, sizes, 0, 0, CS_FIGURES_Y_TIME, 1};
    cs_sweep_cross_t x;
    cs_sweep_crossovers(&fig, ticks, 0, 0, &x);
    cr_assert_eq(x.nccl, 2);
    cr_assert_eq(x.best[0], 1);
    cr_assert_eq(x.best[1], 1);
    cr_assert_eq(x.best[2], 0);
    cr_assert_eq(x.best[3], 0);
    cr_assert_eq(x.nccl_slower[0], 0);
    cr_assert_eq(x.nccl_slower[1], 1);
    cr_assert_eq(x.nccl_slower[2], 0);
    cr_assert_eq(x.nccl_slower[3], 0);
    cs_sweep_cross_destroy(&x);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cs_sweep_crossovers_text(f, &fig, ticks);
    fclose(f);
    cr_assert(strstr(buf, "tree -> ring at 16 KiB"), "%s", buf);
    cr_assert(strstr(buf, "slower than the fastest at 4 KiB (tree, x1.08)"), "%s", buf);
    free(buf);
}

/* What --algo nccl on `spec` (with option `opt`, or NULL) takes for NVLS
 * and CollNet. */
static void expect_innet(const char *spec, const char *opt, int nvls, int collnet)
{
    cs_request_run_t run;
    cs_error_t err;
    cr_assert_eq(prepare(spec, "allreduce", "nccl", "1GiB", opt, &run, &err, NULL), CS_OK,
                 "%s: %s", spec, err.msg);
    cr_assert_eq(run.coll.nccl.in.nvls, nvls, "%s %s", spec, opt ? opt : "");
    cr_assert_eq(run.coll.nccl.in.collnet, collnet, "%s %s", spec, opt ? opt : "");
    cs_request_run_destroy(&run);
}

/* NVLS and CollNet by default from the machine's reducing switches: an
 * NVSwitch per node (its members one node's ranks) is NVLS; SHARP in the
 * leaf and spine switches (members of several nodes, or none) CollNet. */
Test(ncclpick, switches_set_nvls_and_collnet)
{
    const char *base = "net:gen=twotier,nodes=4,gpus=8,nvbw=450GB/s,bw=50GB/s,lat=1us";
    char spec[256];
    expect_innet(base, NULL, 0, 0);
    snprintf(spec, sizeof spec, "%s,nvswitch=1", base);
    expect_innet(spec, NULL, 1, 0);
    snprintf(spec, sizeof spec, "%s,nvswitch=1,sharp=all", base);
    expect_innet(spec, NULL, 1, 1);
    /* and the user's word over the machine's (NVLS stays the machine's) */
    expect_innet(spec, "collnet=0", 1, 0);
}
