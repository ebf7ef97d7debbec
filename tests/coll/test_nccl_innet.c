/*
 * test_nccl_innet.c - switches that reduce in the network (issue 36) and
 * NCCL's CollNet Direct, CollNet Chain and NVLS allreduce on them
 * (src/coll/nccl_innet.c), run through the request path as `collsim run`
 * runs them (the switch ranks' placement is the request's).
 *
 * Times are checked against closed forms written here by hand (a star of P
 * hosts on one switch: per chunk up, reduce, multicast down, pipelined or
 * held back by the switch's buffer); every algorithm validates on three
 * machines at P = 8 and at P = 6; the switch hints are checked against
 * the generators' structure; bad keys and file attributes are refused
 * naming the key or the file and line.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/request.h"
#include "machines/machine.h"
#include "topo/netdesc.h"
#include "topo/netfile.h"
#include "topo/netgen.h"

/* One run: fields as key/value pairs (NULL-terminated). */
typedef struct run {
    int rc;
    cs_error_t err;
    int64_t finish;
    int nranks; /* the program's */
} run_t;

static run_t run_kv(const char *const *kv)
{
    cs_request_t r;
    cs_request_run_t run;
    cs_exec_opts_t opts;
    run_t out;
    memset(&out, 0, sizeof out);
    cs_request_init(&r);
    for (int i = 0; kv[i]; i += 2)
        cr_assert_eq(cs_request_set(&r, kv[i], kv[i + 1], &out.err), CS_OK, "%s=%s: %s", kv[i],
                     kv[i + 1], out.err.msg);
    cs_request_run_init(&run);
    if (!(out.rc = cs_request_prepare(&r, &run, &out.err)) &&
        !(out.rc = cs_request_build(&r, &run, &out.err))) {
        cs_request_exec_opts(&r, &run, &opts);
        out.rc = cs_request_run(&run, &opts, &out.err);
        out.finish = run.result.finish;
        if (run.program)
            out.nranks = cs_program_nranks(run.program);
        if (!out.rc && r.validate)
            cr_assert(run.validated, "the run was not validated");
    }
    cs_request_run_destroy(&run);
    return out;
}
#define RUN(...) run_kv((const char *const[]){__VA_ARGS__, NULL})

/* A run refused with `code` and a message that says `needle` (NULL: any). */
static void run_refused(run_t r, int code, const char *needle)
{
    cr_expect_eq(r.rc, code, "%d: %s", r.rc, r.err.msg);
    if (needle)
        cr_expect(strstr(r.err.msg, needle), "'%s' lacks '%s'", r.err.msg, needle);
}

/* ---- closed forms on a star ----------------------------------------------------
 *
 * P hosts on one switch that reduces, links of B = 1 GB/s (1000 ticks of
 * 1 ps per byte) and latency 500 ns, a host's send overhead alpha = 1 us,
 * the switch reducing at R.  CollNet Chain with every rank a node of its
 * own is the switch alone: per chunk of c bytes each host sends it up, the
 * switch reduces the chunk in c/R and multicasts it down.  A message holds
 * its ports until it is delivered, so one message costs
 *     D = alpha + c/B + lat
 * and a host's messages follow each other D apart (its one send and one
 * receive port); the switch takes all inputs and sends on all its ports at
 * once, and reduces one chunk at a time.  With m chunks and r = c/R:
 *   buffer for all chunks, r <= D:  T = (m + 1) D + r
 *     (chunk i is up at (i+1) D, reduced r later, down D later; the last
 *      one decides)
 *   buffer for all chunks, r > D:   T = D + m r + D
 *     (the switch is the bottleneck: reductions back to back)
 *   buffer of one chunk:            T = m (2 D + r)
 *     (a host sends chunk i+1 only when chunk i came back) */

#define ALPHA 1000000LL /* ticks: 1 us */
#define LAT 500000LL    /* 500 ns */
#define PS_PER_BYTE 1000LL

static int64_t chunk_d(int64_t c) { return ALPHA + c * PS_PER_BYTE + LAT; }

static void star_spec(char *buf, size_t len, int P, const char *rate, const char *sbuf)
{
    snprintf(buf, len, "net:gen=star,hosts=%d,bw=1GB/s,lat=500ns,alpha=1us,sharp=all,"
             "sharp_rate=%s,sharp_buf=%s", P, rate, sbuf);
}

static int64_t star_time_pl(const char *algo, int P, const char *rate, const char *sbuf,
                            int64_t bytes, int64_t chunk, const char *mode, const char *pl)
{
    char spec[256], b[32], c[48], lat[48];
    star_spec(spec, sizeof spec, P, rate, sbuf);
    snprintf(b, sizeof b, "%lld", (long long)bytes);
    snprintf(c, sizeof c, "chunk=%lld", (long long)chunk);
    snprintf(lat, sizeof lat, "proto_lat=%s", pl);
    run_t r = RUN("machine", spec, "coll", "allreduce", "algo", algo, "bytes", b, "opt",
                  "nchannels=1", "opt", c, "opt", lat, "mode", mode, "validate", "1");
    cr_assert_eq(r.rc, CS_OK, "%s on %s: %s", algo, spec, r.err.msg);
    cr_assert_eq(r.nranks, P + 1, "the program has the %d hosts and the switch", P);
    return r.finish;
}

/* Without the protocol's latency (proto_lat=0): the network's alone. */
static int64_t star_time(const char *algo, int P, const char *rate, const char *sbuf,
                         int64_t bytes, int64_t chunk, const char *mode)
{
    return star_time_pl(algo, P, rate, sbuf, bytes, chunk, mode, "0");
}

Test(nccl_innet, star_pipelined_matches_closed_form)
{
    /* R = 2 GB/s: r = 500 ticks per byte, below D */
    int64_t c = 1024, D = chunk_d(c), r = c * 500;
    for (int P = 5; P <= 8; P += 3)
        for (int m = 1; m <= 4; m += 3)
            for (int f = 0; f < 2; f++) {
                int64_t t = star_time("nccl-collnet-chain", P, "2GB/s", "1MiB", m * c, c,
                                      f ? "fluid" : "packet");
                cr_expect_eq(t, (m + 1) * D + r, "P=%d m=%d %s: %lld, closed form %lld", P, m,
                             f ? "fluid" : "packet", (long long)t, (long long)((m + 1) * D + r));
            }
    /* CollNet Direct with one rank per node is the same exchange */
    int64_t t = star_time("nccl-collnet-direct", 8, "2GB/s", "1MiB", 4 * c, c, "packet");
    cr_expect_eq(t, 5 * D + r, "direct: %lld, closed form %lld", (long long)t,
                 (long long)(5 * D + r));
}

Test(nccl_innet, star_slow_switch_matches_closed_form)
{
    /* R = 100 MB/s: r = 10,000 ticks per byte, above D */
    int64_t c = 1024, D = chunk_d(c), r = c * 10000;
    int m = 4;
    cr_assert_gt(r, D);
    int64_t t = star_time("nccl-collnet-chain", 8, "100MB/s", "1MiB", m * c, c, "packet");
    cr_expect_eq(t, 2 * D + m * r, "%lld, closed form %lld", (long long)t,
                 (long long)(2 * D + m * r));
}

Test(nccl_innet, star_buffer_of_one_chunk_matches_closed_form)
{
    int64_t c = 1024, D = chunk_d(c), r = c * 500;
    for (int m = 1; m <= 5; m += 2) {
        int64_t t = star_time("nccl-collnet-chain", 6, "2GB/s", "1KiB", m * c, c, "fluid");
        cr_expect_eq(t, m * (2 * D + r), "m=%d: %lld, closed form %lld", m, (long long)t,
                     (long long)(m * (2 * D + r)));
    }
    /* two chunks of buffer: the window is 2, the time in between */
    int64_t t1 = star_time("nccl-collnet-chain", 6, "2GB/s", "1KiB", 4 * c, c, "fluid");
    int64_t t2 = star_time("nccl-collnet-chain", 6, "2GB/s", "2KiB", 4 * c, c, "fluid");
    int64_t tall = star_time("nccl-collnet-chain", 6, "2GB/s", "1MiB", 4 * c, c, "fluid");
    cr_expect(t1 > t2 && t2 > tall, "more buffer, less waiting: %lld %lld %lld",
              (long long)t1, (long long)t2, (long long)tall);
}

Test(nccl_innet, the_protocols_latency_is_paid_up_and_down)
{
    /* Simple's latency pl delays every message's start without holding
     * a port (core/proto.h): once on the way up and once on the way down
     * of each round trip */
    int64_t c = 1024, D = chunk_d(c), r = c * 500, pl = 2000000; /* 2 us */
    int m = 4;
    int64_t t = star_time_pl("nccl-collnet-chain", 5, "2GB/s", "1MiB", m * c, c, "packet", "2us");
    cr_expect_eq(t, (m + 1) * D + r + 2 * pl, "%lld", (long long)t);
    t = star_time_pl("nccl-collnet-chain", 5, "2GB/s", "1KiB", m * c, c, "fluid", "2us");
    cr_expect_eq(t, m * (2 * D + r + 2 * pl), "%lld", (long long)t);
}

Test(nccl_innet, chunk_beyond_the_buffer_is_refused)
{
    char spec[256];
    star_spec(spec, sizeof spec, 4, "2GB/s", "512");
    run_t r = RUN("machine", spec, "coll", "allreduce", "algo", "nccl-collnet-chain", "bytes",
                  "4096", "opt", "chunk=1024");
    cr_assert_eq(r.rc, CS_ERR_RANGE);
    cr_expect(strstr(r.err.msg, "chunk") && strstr(r.err.msg, "512"), "%s", r.err.msg);
}

/* ---- validation on three machines ------------------------------------------------ */

static void validates(const char *spec, const char *ranks, const char *algo, const char *bytes)
{
    const char *modes[] = {"packet", "fluid"};
    for (int i = 0; i < 2; i++) {
        run_t r = ranks ? RUN("machine", spec, "ranks", ranks, "coll", "allreduce", "algo", algo,
                              "bytes", bytes, "validate", "1", "mode", modes[i])
                        : RUN("machine", spec, "coll", "allreduce", "algo", algo, "bytes", bytes,
                              "validate", "1", "mode", modes[i]);
        cr_expect_eq(r.rc, CS_OK, "%s on %s (ranks %s, %s): %s", algo, spec,
                     ranks ? ranks : "all", modes[i], r.err.msg);
        cr_expect_gt(r.finish, 0);
    }
}

static const char *const innet_algos[] = {"nccl-collnet-direct", "nccl-collnet-chain",
                                          "nccl-nvls", NULL};

Test(nccl_innet, every_algorithm_validates_on_a_star)
{
    for (int i = 0; innet_algos[i]; i++) {
        validates("net:gen=star,hosts=8,sharp=all", NULL, innet_algos[i], "3MiB");
        validates("net:gen=star,hosts=6,sharp=all", NULL, innet_algos[i], "1000003");
    }
}

Test(nccl_innet, every_algorithm_validates_on_a_twotier_pod_with_nvswitches)
{
    /* NVSwitches and SHARP leaves/spines: nodes=2 x 4 GPUs, and 3 x 2 */
    for (int i = 0; innet_algos[i]; i++) {
        validates("net:gen=twotier,nodes=2,gpus=4,radix=4,nvswitch=1,sharp=all", NULL,
                  innet_algos[i], "3MiB");
        validates("net:gen=twotier,nodes=3,gpus=2,radix=2,nvswitch=1,sharp=all", NULL,
                  innet_algos[i], "1000003");
    }
    /* NVLS without SHARP: the heads' tree across nodes */
    validates("net:gen=twotier,nodes=2,gpus=4,nvswitch=1", NULL, "nccl-nvls", "3MiB");
    validates("net:gen=twotier,nodes=3,gpus=2,nvswitch=1", NULL, "nccl-nvls", "1000003");
}

Test(nccl_innet, every_algorithm_validates_on_a_fat_tree_with_sharp)
{
    /* k=4, n=2: 16 hosts, leaves of 4 (the groups), spines above */
    for (int i = 0; innet_algos[i]; i++) {
        validates("net:gen=fattree,k=4,n=2,sharp=all", "8", innet_algos[i], "3MiB");
        validates("net:gen=fattree,k=4,n=2,sharp=all", "12", innet_algos[i], "1000003");
    }
    /* several channels, LL's wire bytes, small chunks: still right */
    run_t r = RUN("machine", "net:gen=fattree,k=4,n=2,sharp=all", "ranks", "12", "coll",
                  "allreduce", "algo", "nccl-collnet-direct", "bytes", "100000", "opt",
                  "nchannels=3", "opt", "proto=ll", "opt", "chunk=4096", "validate", "1");
    cr_expect_eq(r.rc, CS_OK, "%s", r.err.msg);
}

Test(nccl_innet, reduction_in_the_switch_is_what_makes_it_fast)
{
    /* the same star, the switch 1000x slower: the time grows by the
     * reductions (4 chunks of 1 KiB at 1 MB/s = 4 ms), nothing else */
    int64_t fast = star_time("nccl-collnet-chain", 8, "1TB/s", "1MiB", 4096, 1024, "packet");
    int64_t slow = star_time("nccl-collnet-chain", 8, "1MB/s", "1MiB", 4096, 1024, "packet");
    int64_t D = chunk_d(1024);
    cr_expect_eq(fast, 5 * D + 1024, "%lld", (long long)fast); /* 1 ps per byte at 1 TB/s */
    cr_expect_eq(slow, 2 * D + 4 * 1024 * 1000000LL, "%lld", (long long)slow);
}

/* ---- refusals --------------------------------------------------------------------- */

Test(nccl_innet, a_machine_without_reducing_switch_is_refused_saying_how)
{
    for (int i = 0; innet_algos[i]; i++) {
        run_t r = RUN("machine", "net:gen=star,hosts=4", "coll", "allreduce", "algo",
                      innet_algos[i], "bytes", "1KiB");
        cr_expect_eq(r.rc, CS_ERR_USAGE, "%s", innet_algos[i]);
        cr_expect(strstr(r.err.msg, "sharp=") && strstr(r.err.msg, "nvswitch=1") &&
                      strstr(r.err.msg, "reduce="),
                  "%s", r.err.msg);
    }
    run_t r = RUN("machine", "alphabeta:topo=ring,p=4", "coll", "allreduce", "algo", "nccl-nvls",
                  "bytes", "1KiB");
    run_refused(r, CS_ERR_USAGE, NULL);
}

Test(nccl_innet, collnet_needs_a_network_and_equal_nodes)
{
    /* without a node hint (one node's GPUs, a star) every rank is a node
     * of its own for CollNet: the one switch is its network */
    run_t r = RUN("machine", "net:gen=twotier,nodes=1,gpus=4,nvswitch=1", "coll", "allreduce",
                  "algo", "nccl-collnet-chain", "bytes", "1KiB", "validate", "1");
    cr_expect_eq(r.rc, CS_OK, "%s", r.err.msg);
    /* 6 of 2 x 4 GPUs: nodes of 4 and 2, no head j in every node */
    r = RUN("machine", "net:gen=twotier,nodes=2,gpus=4,nvswitch=1,sharp=all", "ranks", "6", "coll",
            "allreduce", "algo", "nccl-collnet-direct", "bytes", "1KiB");
    run_refused(r, CS_ERR_USAGE, "same number of ranks");
    /* the chain does not mind */
    r = RUN("machine", "net:gen=twotier,nodes=2,gpus=4,nvswitch=1,sharp=all", "ranks", "6", "coll",
            "allreduce", "algo", "nccl-collnet-chain", "bytes", "1KiB", "validate", "1");
    cr_expect_eq(r.rc, CS_OK, "%s", r.err.msg);
    /* leaves without spines that reduce: no switch covers every node */
    r = RUN("machine", "net:gen=fattree,k=4,n=2,sharp=leaf", "coll", "allreduce", "algo",
            "nccl-collnet-chain", "bytes", "1KiB");
    run_refused(r, CS_ERR_USAGE, "sharp=all");
}

Test(nccl_innet, a_program_too_long_is_refused_before_it_is_built)
{
    /* 1 GiB in pieces of 1 byte: about 2^30 pieces of ~170 ops each */
    run_t r = RUN("machine", "net:gen=star,hosts=8,sharp=all", "coll", "allreduce", "algo",
                  "nccl-nvls", "bytes", "1GiB", "opt", "chunk=1");
    run_refused(r, CS_ERR_NOMEM, "chunk=");
}

Test(nccl_innet, a_loop_runs_but_not_with_a_barrier_of_the_ranks_only)
{
    run_t r = RUN("machine", "net:gen=star,hosts=8,sharp=all", "coll", "allreduce", "algo",
                  "nccl-nvls", "bytes", "64KiB", "iterations", "3", "validate", "1");
    cr_expect_eq(r.rc, CS_OK, "%s", r.err.msg);
    r = RUN("machine", "net:gen=star,hosts=8,sharp=all", "coll", "allreduce", "algo",
            "nccl-nvls", "bytes", "64KiB", "iterations", "3", "between", "barrier");
    run_refused(r, CS_ERR_USAGE, "--between none");
}

Test(nccl_innet, a_windowed_build_is_refused)
{
    run_t r = RUN("machine", "net:gen=star,hosts=4,sharp=all", "coll", "allreduce", "algo",
                  "nccl-nvls", "bytes", "1KiB", "windowed", "1");
    run_refused(r, CS_ERR_USAGE, "switches");
}

static void refused(const char *spec, int code, const char *needle)
{
    cs_machine_t *m = NULL;
    cs_error_t err = {0};
    int rc = cs_machine_new(spec, &m, &err);
    cr_expect_eq(rc, code, "%s: %d %s", spec, rc, err.msg);
    cr_expect(strstr(err.msg, needle), "%s: '%s' lacks '%s'", spec, err.msg, needle);
    cr_expect_null(m);
    cs_machine_free(m);
}

Test(nccl_innet, bad_keys_are_refused_naming_them)
{
    refused("net:gen=star,sharp=most", CS_ERR_USAGE, "sharp");
    refused("net:gen=star,sharp_rate=1GB/s", CS_ERR_USAGE, "sharp_rate");
    refused("net:gen=star,sharp_buf=1KiB", CS_ERR_USAGE, "sharp_buf");
    refused("net:gen=star,sharp=all,sharp_buf=0", CS_ERR_RANGE, "sharp_buf");
    refused("net:gen=star,sharp=all,sharp_rate=fast", CS_ERR_USAGE, "sharp_rate");
    refused("net:gen=twotier,nvls_rate=1GB/s", CS_ERR_USAGE, "nvls_rate");
    refused("net:gen=twotier,nvls_buf=1KiB", CS_ERR_USAGE, "nvls_buf");
    refused("net:gen=twotier,nvswitch=2", CS_ERR_RANGE, "nvswitch");
    refused("net:gen=twotier,nvswitch=1,nvls_buf=0", CS_ERR_RANGE, "nvls_buf");
}

/* A network file read as the `net:` machine reads it. */
static int read_text(const char *name, const char *text, cs_netdesc_t **d, cs_error_t *err)
{
    cs_source_t src = {name, text, strlen(text)};
    return cs_netfile_read(&src, CS_NETFILE_AUTO, 100e9, 0, d, err);
}

Test(nccl_innet, file_attributes_are_read_and_refused_naming_file_and_line)
{
    cs_netdesc_t *d = NULL;
    cs_error_t err = {0};
    int64_t buf;
    /* edge list: a reducing switch with and without a buffer */
    cr_assert_eq(read_text("s.edges", "switch sw reduce=2GB/s buf=64KiB\nswitch t reduce=1GB/s\n"
                           "a sw\nb sw\nsw t\n", &d, &err), CS_OK, "%s", err.msg);
    for (int32_t v = 0; v < cs_netdesc_nodes(d); v++) {
        const char *l = cs_netdesc_label(d, v);
        double rate = cs_netdesc_reduce(d, v, &buf);
        if (!strcmp(l, "sw"))
            cr_expect(rate == 2e9 && buf == 65536, "%g %lld", rate, (long long)buf);
        else if (!strcmp(l, "t"))
            cr_expect(rate == 1e9 && buf == 4 << 20, "%g %lld", rate, (long long)buf);
        else
            cr_expect(rate == 0 && buf == 0, "%s", l);
    }
    cs_netdesc_free(d);
    d = NULL;
    static const struct { const char *name, *text, *needle; } bad[] = {
        {"a.edges", "a sw\nswitch sw reduce=fast\n", "a.edges:2: switch sw: reduce"},
        {"b.edges", "switch sw reduce=0\na sw\n", "b.edges:1: switch sw: reduce"},
        {"c.edges", "switch sw reduce=1GB/s flag\na sw\n", "c.edges:1: unknown field \"flag\""},
        {"d.edges", "switch sw reduce=1GB/s buf=lots\na sw\nb sw\n", "d.edges:1: switch sw: buf"},
        {"e.edges", "switch h reduce=1GB/s\nhost h\nh sw\ng sw\n", "e.edges:1: h: a host does"},
        {"f.edges", "switch sw buf=1KiB\na sw\n", "f.edges:1: unknown field \"buf=1KiB\""},
        {"g.graphml",
         "<?xml version=\"1.0\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
         "<key id=\"k\" for=\"node\" attr.name=\"kind\" attr.type=\"string\"/>\n"
         "<key id=\"r\" for=\"node\" attr.name=\"reduce\" attr.type=\"string\"/>\n"
         "<graph edgedefault=\"undirected\">\n<node id=\"a\"/>\n<node id=\"b\"/>\n"
         "<node id=\"s\"><data key=\"k\">switch</data><data key=\"r\">-3GB/s</data></node>\n"
         "<edge source=\"a\" target=\"s\"/>\n<edge source=\"b\" target=\"s\"/>\n</graph>\n"
         "</graphml>\n", "g.graphml:8"},
        {"h.graphml",
         "<?xml version=\"1.0\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
         "<key id=\"r\" for=\"node\" attr.name=\"reduce\" attr.type=\"string\"/>\n"
         "<graph edgedefault=\"undirected\">\n<node id=\"a\"><data key=\"r\">1GB/s</data>"
         "</node>\n<node id=\"b\"/>\n<edge source=\"a\" target=\"b\"/>\n</graph>\n</graphml>\n",
         "h.graphml:5: a: a host does not reduce"},
        {"i.graphml",
         "<?xml version=\"1.0\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
         "<key id=\"k\" for=\"node\" attr.name=\"kind\" attr.type=\"string\"/>\n"
         "<key id=\"rb\" for=\"node\" attr.name=\"reduce_buf\" attr.type=\"string\"/>\n"
         "<graph edgedefault=\"undirected\">\n<node id=\"a\"/>\n<node id=\"b\"/>\n"
         "<node id=\"s\"><data key=\"k\">switch</data><data key=\"rb\">1KiB</data></node>\n"
         "<edge source=\"a\" target=\"s\"/>\n<edge source=\"b\" target=\"s\"/>\n</graph>\n"
         "</graphml>\n", "i.graphml:8: node s: reduce_buf without reduce"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        int rc = read_text(bad[i].name, bad[i].text, &d, &err);
        cr_expect_eq(rc, CS_ERR_PARSE, "%s: %d %s", bad[i].name, rc, err.msg);
        cr_expect(strstr(err.msg, bad[i].needle), "%s: '%s' lacks '%s'", bad[i].name, err.msg,
                  bad[i].needle);
        cr_expect_null(d);
        cs_netdesc_free(d);
        d = NULL;
    }
}

Test(nccl_innet, graphml_round_trip_keeps_the_reducing_switches)
{
    cs_machine_t *m = NULL;
    cs_netdesc_t *d = NULL, *back = NULL;
    cs_error_t err = {0};
    char *text = NULL;
    size_t len = 0;
    cr_assert_eq(cs_machine_new("net:gen=twotier,nodes=2,gpus=2,nvswitch=1,nvls_rate=400GB/s,"
                                "nvls_buf=1MiB,sharp=leaf,sharp_rate=50GB/s", &m, &err),
                 CS_OK, "%s", err.msg);
    cr_assert_eq(cs_machine_netdesc(m, &d, &err), CS_OK, "%s", err.msg);
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(cs_netfile_write_graphml(d, f, &err), CS_OK, "%s", err.msg);
    fclose(f);
    cr_assert_eq(read_text("rt.graphml", text, &back, &err), CS_OK, "%s", err.msg);
    int seen = 0;
    for (int32_t v = 0; v < cs_netdesc_nodes(back); v++) {
        int64_t b1, b2;
        double r1 = cs_netdesc_reduce(d, v, &b1), r2 = cs_netdesc_reduce(back, v, &b2);
        cr_expect(r1 > 0 ? fabs(r2 / r1 - 1) < 1e-9 : r2 == 0, "node %d: %g %g", v, r1, r2);
        cr_expect_eq(b1, b2, "node %d", v);
        seen += r2 > 0;
    }
    cr_expect_eq(seen, 3, "two NVSwitches and one leaf: %d", seen); /* 2 nodes on one leaf */
    free(text);
    cs_netdesc_free(d);
    cs_netdesc_free(back);
    cs_machine_free(m);
}

/* ---- the generator and the hints ---------------------------------------------------- */

Test(nccl_innet, twotier_nvswitch_replaces_the_pairwise_links)
{
    /* nodes=3, gpus=4, radix=8: leaves take 2 nodes each (2 leaves), 8
     * spines; NVSwitches: 3, one link per GPU instead of 4*3/2 per node */
    cs_netdesc_t *d = cs_netdesc_new("t");
    cs_netgen_nvswitch_t nvs = {600e9, 1 << 20};
    cs_error_t err = {0};
    cr_assert_eq(cs_netgen_twotier(d, 3, 4, 300e9, 0, 50e9, 0, 8, &nvs, NULL, &err), CS_OK, "%s",
                 err.msg);
    int hosts = 12, leaves = 2, spines = 8;
    cr_expect_eq(cs_netdesc_nodes(d), hosts + leaves + spines + 3);
    cr_expect_eq(cs_netdesc_nlinks(d), hosts /* to NVSwitch */ + hosts /* NIC */ +
                                           leaves * spines);
    for (int g = 0; g < 3; g++) {
        int32_t sw = hosts + leaves + spines + g;
        cr_expect_eq(cs_netdesc_kind(d, sw), CS_NETNODE_SWITCH);
        cr_expect_eq(cs_netdesc_group(d, sw), g);
        int64_t b;
        cr_expect(cs_netdesc_reduce(d, sw, &b) == 600e9 && b == 1 << 20);
        for (int h = 0; h < hosts; h++)
            cr_expect_eq(cs_netdesc_find_link(d, h, sw) >= 0, h / 4 == g, "host %d sw %d", h, g);
    }
    /* a route inside a node crosses its NVSwitch */
    int32_t path[8];
    uint8_t vc[8] = {0};
    cr_expect_eq(cs_netdesc_route(d, 1, 2, 0, path, vc, 8), 3);
    cr_expect_eq(path[1], hosts + leaves + spines + 0);
    cs_netdesc_free(d);
}

Test(nccl_innet, hints_give_members_and_parents_as_the_fat_tree_is_built)
{
    /* k=4, n=2: 16 hosts on 4 leaves of 4 (hosts 4l..4l+3), every leaf
     * linked to each of 4 spines; sharp=all makes all 8 reduce.  The
     * hints, for ranks on hosts in node order: leaf l's members are
     * 4l..4l+3 and its parent the lowest spine; spines have no member and
     * no parent. */
    cs_machine_t *m = NULL;
    cs_error_t err = {0};
    cs_machine_hints_t h;
    cr_assert_eq(cs_machine_new("net:gen=fattree,k=4,n=2,sharp=all", &m, &err), CS_OK, "%s",
                 err.msg);
    cr_assert_eq(m->nred, 8);
    cs_machine_hints_init(&h, m, 16, NULL);
    cr_assert_eq(h.coll.nswitches, 8);
    int leaves = 0, spines = 0, first_spine = -1;
    for (int s = 0; s < 8; s++)
        if (h.coll.sw_first[s + 1] == h.coll.sw_first[s] && first_spine < 0)
            first_spine = s;
    for (int s = 0; s < 8; s++) {
        int n = h.coll.sw_first[s + 1] - h.coll.sw_first[s];
        if (n == 4) {
            int l = h.coll.sw_member[h.coll.sw_first[s]] / 4;
            for (int i = 0; i < 4; i++)
                cr_expect_eq(h.coll.sw_member[h.coll.sw_first[s] + i], 4 * l + i);
            cr_expect_eq(h.coll.sw_parent[s], first_spine, "leaf %d", s);
            /* above it: the four spines, in order, the parent first */
            cr_expect_eq(h.coll.sw_up_first[s + 1] - h.coll.sw_up_first[s], 4, "leaf %d", s);
            for (int i = 0; i < 4; i++)
                cr_expect_eq(h.coll.sw_up[h.coll.sw_up_first[s] + i], first_spine + i);
            cr_expect_eq(h.sw_node[s], m->red_node[s]);
            cr_expect_geq(h.sw_node[s], 16, "a switch node, not a host");
            /* line rate on all ports by default: 4 host links and 4 up-links
             * of 12.5 GB/s (the default bw) = 100 GB/s, 10 ticks of 1 ps a byte */
            cr_expect_eq(h.coll.sw_num[s] * 1.0 / h.coll.sw_den[s], 10.0, "leaf %d", s);
            leaves++;
        } else {
            cr_expect_eq(n, 0);
            cr_expect_eq(h.coll.sw_parent[s], -1);
            cr_expect_eq(h.coll.sw_up_first[s + 1], h.coll.sw_up_first[s]);
            /* a spine: 4 leaf links, 50 GB/s */
            cr_expect_eq(h.coll.sw_num[s] * 1.0 / h.coll.sw_den[s], 20.0, "spine %d", s);
            spines++;
        }
    }
    cr_expect_eq(leaves, 4);
    cr_expect_eq(spines, 4);
    cs_machine_hints_destroy(&h);
    /* a machine without reducing switch gives none */
    cs_machine_free(m);
    cr_assert_eq(cs_machine_new("net:gen=fattree,k=4,n=2", &m, &err), CS_OK, "%s", err.msg);
    cs_machine_hints_init(&h, m, 16, NULL);
    cr_expect_eq(h.coll.nswitches, 0);
    cr_expect_null(h.coll.sw_first);
    cs_machine_hints_destroy(&h);
    cs_machine_free(m);
}
