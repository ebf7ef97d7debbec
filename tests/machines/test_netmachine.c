/*
 * test_netmachine.c - the generic network machine (issue 18) against closed
 * forms, in packet and fluid mode: messages over links of their own
 * bandwidth and latency, a full-bisection fat-tree (a shift permutation
 * under d-mod-k routing meets no contention: every message takes
 * alpha + n/B), 2:1 oversubscription (the cross-core half takes 2n/B), an
 * incast of k hosts (k n/B at the receiver's one port), K-port NICs, and a
 * dragonfly's group-to-group shift (minimal routing puts it on one global
 * link, k-way; Valiant spreads it).  Expected values come from the
 * formulas, never from a run.  Also the spec's errors.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/exec.h"
#include "api/request.h"
#include "machines/machine.h"
#include "topo/netdesc.h"
#include "topo/netfile.h"

#define NMAX 64

/* Runs messages src[i] -> dst[i] of n bytes at time 0 on `spec`; end[i] is
 * the time (ticks) recv i completed; returns the run's finish. */
static cs_tick_t run_msgs(const char *spec, int nf, const int *src, const int *dst, int64_t n,
                          cs_net_mode_t mode, cs_tick_t *end)
{
    cs_machine_t *m;
    cs_error_t err;
    cs_exec_result_t res;
    cs_exec_opts_t o;
    cs_exec_env_t env;
    int32_t r[NMAX];
    cr_assert_leq(nf, NMAX);
    cr_assert_eq(cs_machine_new(spec, &m, &err), CS_OK, "%s: %s", spec, err.msg);
    cs_program_t *p = cs_program_new(cs_machine_nodes(m));
    for (int i = 0; i < nf; i++) {
        cs_program_send(p, src[i], dst[i], n, i);
        r[i] = cs_program_recv(p, dst[i], src[i], n, i);
    }
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK, "%s", err.msg);
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    o.record_op_times = 1;
    o.mode = mode;
    cr_assert_eq(cs_exec_run(&env, p, &o, &res, &err), CS_OK, "%s: %s", spec, err.msg);
    for (int i = 0; end && i < nf; i++)
        end[i] = res.ops[r[i]].end;
    cs_tick_t fin = res.finish;
    cs_exec_result_destroy(&res);
    cs_program_free(p);
    cs_machine_free(m);
    return fin;
}

static const cs_net_mode_t modes[] = {CS_NET_PACKET, CS_NET_FLUID};

/* 1 GB/s is 1000 ticks of 1 ps per byte; alpha 1 us is 10^6 ticks. */
#define ALPHA 1000000
#define PER_BYTE 1000
#define N 65536

/* A line of three hosts with links of 1 GB/s and 2 GB/s and latencies
 * 100 ns and 300 ns, from an edge list: a message 0 -> 2 is limited by
 * the slower link and pays both latencies (fluid: alpha + n/min(B) +
 * sum(lat); packet: cut-through, the first packet's serialisation on the
 * second link is hidden behind the first's). */
Test(net, heterogeneous_links_in_an_edge_list)
{
    const char *path = "net-line.txt";
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("# three hosts in a line\nh0 h1 1GB/s 100ns\nh1 h2 2GB/s 300ns\n", f);
    fclose(f);
    char spec[256];
    snprintf(spec, sizeof spec, "net:file=%s,alpha=1us", path);
    int src[] = {0}, dst[] = {2};
    for (int i = 0; i < 2; i++) {
        cs_tick_t end[1];
        run_msgs(spec, 1, src, dst, N, modes[i], end);
        cs_tick_t lat = 400000, want = ALPHA + (cs_tick_t)N * PER_BYTE + lat;
        if (modes[i] == CS_NET_FLUID)
            cr_expect_eq(end[0], want, "fluid: %lld, formula %lld", (long long)end[0],
                         (long long)want);
        else /* packet mode: at least the fluid time, at most one packet more */
            cr_expect(end[0] >= want && end[0] <= want + 4096 * 500,
                      "packet: %lld, formula %lld", (long long)end[0], (long long)want);
    }
    remove(path);
}

/* k = 4, n = 2 fat-tree of 16 hosts at 1 GB/s: the shift i -> i + 4 (every
 * host sends to the same position under the next leaf) meets no
 * contention under d-mod-k up/down routing: all take alpha + n/B. */
Test(net, fat_tree_full_bisection_shift)
{
    int src[16], dst[16];
    for (int i = 0; i < 16; i++) {
        src[i] = i;
        dst[i] = (i + 4) % 16;
    }
    for (int mi = 0; mi < 2; mi++) {
        cs_tick_t end[16];
        run_msgs("net:gen=fattree,k=4,n=2,bw=1GB/s,alpha=1us", 16, src, dst, N, modes[mi], end);
        for (int i = 0; i < 16; i++)
            cr_expect_eq(end[i], ALPHA + (cs_tick_t)N * PER_BYTE, "%s: message %d ends at %lld",
                         cs_net_mode_name(modes[mi]), i, (long long)end[i]);
    }
}

/* 2:1 oversubscription (levels=2, down=4+4, up=2+1... see docs): the four
 * hosts of leaf 0 all send to leaf 1; two up links carry four flows, two
 * each, so every message takes alpha + 2n/B in fluid mode. */
Test(net, fat_tree_two_to_one)
{
    int src[4] = {0, 1, 2, 3}, dst[4] = {4, 5, 6, 7};
    cs_tick_t end[4];
    run_msgs("net:gen=fattree,levels=2,down=4+4,up=2+1,bw=1GB/s,alpha=1us", 4, src, dst, N,
             CS_NET_FLUID, end);
    for (int i = 0; i < 4; i++)
        cr_expect_eq(end[i], ALPHA + 2 * (cs_tick_t)N * PER_BYTE, "message %d ends at %lld", i,
                     (long long)end[i]);
}

/* Incast: k hosts send to host 0, which receives one message at a time
 * (the endpoint rule), each paying alpha once it has the ports: the last
 * ends at k (alpha + n/B), both modes. */
Test(net, incast_of_k_hosts)
{
    for (int k = 2; k <= 8; k *= 2) {
        int src[8], dst[8];
        for (int i = 0; i < k; i++) {
            src[i] = i + 1;
            dst[i] = 0;
        }
        for (int mi = 0; mi < 2; mi++) {
            cs_tick_t fin = run_msgs("net:gen=fattree,k=4,n=2,bw=1GB/s,alpha=1us", k, src, dst, N,
                                     modes[mi], NULL);
            cr_expect_eq(fin, k * (ALPHA + (cs_tick_t)N * PER_BYTE), "k=%d %s: %lld", k,
                         cs_net_mode_name(modes[mi]), (long long)fin);
        }
    }
}

/* ports=2: host 0 receives two messages at once, from hosts under other
 * leaves; they share its one link, so both end at alpha + 2n/B (fluid).
 * With ports=1 they come one after the other: alpha + n/B, then
 * 2 (alpha + n/B). */
Test(net, two_port_nic)
{
    int src[2] = {4, 8}, dst[2] = {0, 0};
    cs_tick_t end1[2], end2[2];
    run_msgs("net:gen=fattree,k=4,n=2,bw=1GB/s,alpha=1us", 2, src, dst, N, CS_NET_FLUID, end1);
    run_msgs("net:gen=fattree,k=4,n=2,bw=1GB/s,alpha=1us,ports=2", 2, src, dst, N, CS_NET_FLUID,
             end2);
    cs_tick_t one = ALPHA + (cs_tick_t)N * PER_BYTE, two = ALPHA + 2 * (cs_tick_t)N * PER_BYTE;
    cr_expect_eq(end1[0] < end1[1] ? end1[0] : end1[1], one);
    cr_expect_eq(end1[0] > end1[1] ? end1[0] : end1[1], 2 * one);
    cr_expect_eq(end2[0], two, "2 ports share the host link: %lld", (long long)end2[0]);
    cr_expect_eq(end2[1], two);
}

/* Dragonfly a=4, p=2, h=2, g=9: the 8 hosts of group 0 send to the 8 of
 * group 1.  Minimal routing takes the one global link 0-1 for all eight
 * (fluid: 8-way, alpha + 8n/B); Valiant sends each through an
 * intermediate group chosen per pair, so the slowest takes less. */
Test(net, dragonfly_minimal_one_global_link_valiant_spreads)
{
    int src[8], dst[8];
    for (int i = 0; i < 8; i++) {
        src[i] = i;
        dst[i] = 8 + i;
    }
    cs_tick_t fmin = run_msgs("net:gen=dragonfly,a=4,p=2,h=2,g=9,bw=1GB/s,alpha=1us", 8, src,
                              dst, N, CS_NET_FLUID, NULL);
    cs_tick_t fval = run_msgs("net:gen=dragonfly,a=4,p=2,h=2,g=9,bw=1GB/s,alpha=1us,"
                              "routing=valiant", 8, src, dst, N, CS_NET_FLUID, NULL);
    cr_expect_eq(fmin, ALPHA + 8 * (cs_tick_t)N * PER_BYTE, "minimal: %lld", (long long)fmin);
    cr_expect_lt(fval, fmin, "valiant %lld vs minimal %lld", (long long)fval, (long long)fmin);
}

Test(net, spec_errors_name_the_key)
{
    static const struct { const char *spec, *want; } cases[] = {
        {"net:gen=fattree,k=4,n=2,bw=0GB/s", "bw"},
        {"net:gen=fattree,k=4,n=2,bw=-1GB/s", "bw"},
        {"net:gen=nosuch", "gen=nosuch"},
        {"net:gen=fattree,file=x.txt", "exclude"},
        {"net:gen=fattree,k=4,n=2,a=3", "'a'"},
        {"net:gen=fattree,routing=nosuch", "routing=nosuch"},
        {"net:file=/nonexistent/net.txt", "/nonexistent/net.txt"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cs_machine_t *m = NULL;
        cs_error_t err;
        cr_expect_neq(cs_machine_new(cases[i].spec, &m, &err), CS_OK, "%s", cases[i].spec);
        cr_expect(strstr(err.msg, cases[i].want), "%s: \"%s\" lacks \"%s\"", cases[i].spec,
                  err.msg, cases[i].want);
        cs_machine_free(m);
    }
}

/* A file whose hosts cannot all reach each other, a self-loop, fewer hosts
 * than ranks: errors with the file and line or the two hosts. */
Test(net, file_errors)
{
    const char *path = "net-bad.txt";
    cs_machine_t *m = NULL;
    cs_error_t err;
    FILE *f = fopen(path, "w");
    fputs("a b\nc d\n", f);
    fclose(f);
    char spec[128];
    snprintf(spec, sizeof spec, "net:file=%s", path);
    cr_expect_neq(cs_machine_new(spec, &m, &err), CS_OK);
    cr_expect(strstr(err.msg, "cannot reach"), "%s", err.msg);
    f = fopen(path, "w");
    fputs("a b\nb b\n", f);
    fclose(f);
    cr_expect_neq(cs_machine_new(spec, &m, &err), CS_OK);
    cr_expect(strstr(err.msg, ":2:"), "%s", err.msg);
    remove(path);
}

/* allreduce/multidim on the machines it is for, against the step count:
 * per dimension of size s a ring reduce-scatter (or direct exchange, as
 * permutations) of s-1 steps, the all-gather back likewise, each step
 * alpha + (the piece) / (the dimension's bandwidth).  Also --validate. */
static cs_tick_t run_coll_algo(const char *spec, const char *coll, const char *opt, int64_t n,
                               cs_net_mode_t mode, int validate)
{
    cs_request_t r;
    cs_request_run_t run;
    cs_exec_opts_t o;
    cs_error_t err;
    cs_request_init(&r);
    cs_request_run_init(&run);
    char bytes[32];
    snprintf(bytes, sizeof bytes, "%lld", (long long)n);
    cr_assert_eq(cs_request_set(&r, "machine", spec, &err), CS_OK);
    cr_assert_eq(cs_request_set(&r, "coll", coll, &err), CS_OK);
    cr_assert_eq(cs_request_set(&r, "algo", "multidim", &err), CS_OK);
    cr_assert_eq(cs_request_set(&r, "bytes", bytes, &err), CS_OK);
    if (opt)
        cr_assert_eq(cs_request_set(&r, "opt", opt, &err), CS_OK);
    if (validate)
        cr_assert_eq(cs_request_set(&r, "validate", "", &err), CS_OK);
    r.mode = mode;
    cr_assert_eq(cs_request_prepare(&r, &run, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_request_build(&r, &run, &err), CS_OK, "%s", err.msg);
    cs_request_exec_opts(&r, &run, &o);
    cr_assert_eq(cs_request_run(&run, &o, &err), CS_OK, "%s: %s", spec, err.msg);
    cs_tick_t fin = run.result.finish;
    cs_request_run_destroy(&run);
    return fin;
}

static cs_tick_t run_coll(const char *spec, const char *opt, int64_t n, cs_net_mode_t mode,
                          int validate)
{
    return run_coll_algo(spec, "allreduce", opt, n, mode, validate);
}

Test(net, multidim_allreduce_closed_forms)
{
    /* one ring of 4 at 1 GB/s: 6 steps of alpha + n/4 bytes */
    cs_tick_t step1 = ALPHA + (cs_tick_t)(N / 4) * PER_BYTE;
    /* a ring of 4 at 2 GB/s inside, pairs through a switch at 1 GB/s: 3 + 1
     * + 1 + 3 steps; the pair exchanges n/8 at 1 GB/s over two links */
    cs_tick_t two = 8 * (cs_tick_t)ALPHA + 6 * (cs_tick_t)(N / 4) * (PER_BYTE / 2) +
                    2 * (cs_tick_t)(N / 8) * PER_BYTE;
    for (int mi = 0; mi < 2; mi++) {
        cr_expect_eq(run_coll("net:gen=multidim,dims=ring:4:1GB/s,alpha=1us", NULL, N, modes[mi],
                              1), 6 * step1);
        cr_expect_eq(run_coll("net:gen=multidim,dims=full:4:1GB/s,alpha=1us", "inner=direct", N,
                              modes[mi], 1), 6 * step1);
        cr_expect_eq(run_coll("net:gen=multidim,dims=ring:4:2GB/s+switch:2:1GB/s,alpha=1us", NULL,
                              N, modes[mi], 1), two);
        /* and validation across kinds and per-dimension algorithms */
        run_coll("net:gen=multidim,dims=ring:3+full:3+switch:2", "inner=direct+ring", 1000,
                 modes[mi], 1);
    }
}

/* GraphML round trip: every alpha-beta shape written as `collsim topo
 * --graphml` writes it (cs_machine_netdesc, cs_netfile_write_graphml) and
 * read back by net:file= runs the same: finish, events and messages of
 * several algorithms in both modes (the shape's routes and ring hint come
 * back with it). */
static void run_algo(const char *spec, const char *coll, const char *algo, cs_net_mode_t mode,
                     cs_exec_result_t *res)
{
    cs_machine_t *m;
    cs_error_t err;
    cs_coll_kind_t kind;
    const cs_coll_algo_t *a;
    cs_machine_hints_t h;
    cs_program_t *p;
    cs_exec_env_t env;
    cs_exec_opts_t o;
    cr_assert_eq(cs_machine_new(spec, &m, &err), CS_OK, "%s: %s", spec, err.msg);
    cr_assert_eq(cs_coll_parse(coll, &kind, &err), CS_OK);
    cr_assert_eq(cs_coll_find(kind, algo, &a, &err), CS_OK);
    int P = cs_machine_nodes(m);
    cs_machine_hints_init(&h, m, P, NULL);
    cs_coll_args_t args = {kind, P, 65536, 0, m->net.unit_bytes, &h.coll, NULL, 1};
    cr_assert_eq(cs_coll_build(a, &args, &p, &err), CS_OK, "%s", err.msg);
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    o.mode = mode;
    cr_assert_eq(cs_exec_run(&env, p, &o, res, &err), CS_OK, "%s", err.msg);
    cs_program_free(p);
    cs_machine_hints_destroy(&h);
    cs_machine_free(m);
}

Test(net, graphml_round_trip_of_every_alphabeta_shape)
{
    static const char *const shapes[] = {
        "topo=ring,p=16", "topo=line,p=16", "topo=mesh,rows=4,cols=4",
        "topo=torus,rows=4,cols=8", "topo=complete,p=16", "topo=hypercube,p=16",
        "topo=mesh,rows=3,cols=5"};
    static const char *const algos[][2] = {{"allreduce", "ring"}, {"allreduce", "rdb"},
                                           {"broadcast", "binomial"}, {"alltoall", "pairwise"},
                                           {"allgather", "ring"}};
    const char *path = "net-roundtrip.graphml";
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        char ab[128], net[160];
        cs_machine_t *m;
        cs_netdesc_t *d;
        cs_error_t err;
        snprintf(ab, sizeof ab, "alphabeta:%s,alpha=1us,beta=1ns", shapes[s]);
        cr_assert_eq(cs_machine_new(ab, &m, &err), CS_OK, "%s", err.msg);
        cr_assert_eq(cs_machine_netdesc(m, &d, &err), CS_OK, "%s", err.msg);
        FILE *f = fopen(path, "w");
        cr_assert(f);
        cr_assert_eq(cs_netfile_write_graphml(d, f, &err), CS_OK, "%s", err.msg);
        fclose(f);
        cs_netdesc_free(d);
        cs_machine_free(m);
        snprintf(net, sizeof net, "net:file=%s,alpha=1us", path);
        for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++)
            for (int mi = 0; mi < 2; mi++) {
                cs_exec_result_t x, y;
                run_algo(ab, algos[a][0], algos[a][1], modes[mi], &x);
                run_algo(net, algos[a][0], algos[a][1], modes[mi], &y);
                cr_expect(x.finish == y.finish && x.events == y.events &&
                              x.messages == y.messages,
                          "%s %s/%s %s: finish %lld/%lld events %llu/%llu", shapes[s],
                          algos[a][0], algos[a][1], cs_net_mode_name(modes[mi]),
                          (long long)x.finish, (long long)y.finish,
                          (unsigned long long)x.events, (unsigned long long)y.events);
                cs_exec_result_destroy(&x);
                cs_exec_result_destroy(&y);
            }
    }
    remove(path);
}

/* ECMP on a network read from a file: two leaf switches of 8 hosts joined
 * through 8 middle switches, every link 1 GB/s.  Shortest paths (lowest
 * channel id first) send all 8 left-to-right flows through one middle
 * switch: 8-way, alpha + 8n/B in fluid mode; ECMP hashes the flows over
 * the 8 equal paths, so the slowest shares its links with fewer. */
Test(net, ecmp_spreads_flows_of_a_file_network)
{
    const char *path = "net-ecmp.txt";
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("switch L\nswitch R\n", f);
    for (int i = 0; i < 8; i++)
        fprintf(f, "switch M%d\n", i);
    for (int i = 0; i < 8; i++)
        fprintf(f, "a%d L 1GB/s\n", i);
    for (int i = 0; i < 8; i++)
        fprintf(f, "b%d R 1GB/s\n", i);
    for (int i = 0; i < 8; i++)
        fprintf(f, "L M%d 1GB/s\nM%d R 1GB/s\n", i, i);
    fclose(f);
    int src[8], dst[8];
    for (int i = 0; i < 8; i++) {
        src[i] = i;
        dst[i] = 8 + i;
    }
    char s1[128], s2[128];
    snprintf(s1, sizeof s1, "net:file=%s,alpha=1us", path);
    snprintf(s2, sizeof s2, "net:file=%s,alpha=1us,routing=ecmp", path);
    cs_tick_t fs = run_msgs(s1, 8, src, dst, N, CS_NET_FLUID, NULL);
    cs_tick_t fe = run_msgs(s2, 8, src, dst, N, CS_NET_FLUID, NULL);
    cr_expect_eq(fs, ALPHA + 8 * (cs_tick_t)N * PER_BYTE, "shortest: %lld", (long long)fs);
    cr_expect_leq(fe, ALPHA + 4 * (cs_tick_t)N * PER_BYTE, "ecmp %lld vs shortest %lld",
                  (long long)fe, (long long)fs);
    /* deterministic: the same run twice */
    cr_expect_eq(run_msgs(s2, 8, src, dst, N, CS_NET_PACKET, NULL),
                 run_msgs(s2, 8, src, dst, N, CS_NET_PACKET, NULL));
    remove(path);
}

/* reduce-scatter/multidim (the last dimension first) and allgather/multidim
 * (the first first) of m-byte blocks on a ring of 4 at 2 GB/s and pairs
 * through a switch at 1 GB/s: the ring's 3 steps of alpha + m at 2 GB/s
 * and the pair's one step of alpha + 4m at 1 GB/s (over two links), in
 * either order.  Also --validate. */
Test(net, multidim_reduce_scatter_allgather_closed_forms)
{
    const char *spec = "net:gen=multidim,dims=ring:4:2GB/s+switch:2:1GB/s,alpha=1us";
    int64_t m = 16384;
    cs_tick_t want = 3 * (ALPHA + (cs_tick_t)m * (PER_BYTE / 2)) + ALPHA + 4 * m * PER_BYTE;
    for (int mi = 0; mi < 2; mi++) {
        cr_expect_eq(run_coll_algo(spec, "reduce-scatter", NULL, m, modes[mi], 1), want);
        cr_expect_eq(run_coll_algo(spec, "allgather", NULL, m, modes[mi], 1), want);
        run_coll_algo("net:gen=multidim,dims=ring:3+full:3+switch:2", "reduce-scatter",
                      "inner=direct+ring", 1000, modes[mi], 1);
        run_coll_algo("net:gen=multidim,dims=ring:3+full:3+switch:2", "allgather",
                      "inner=ring+direct", 1000, modes[mi], 1);
    }
}

/* A machine reports an unknown key before it reads the others: the fuzz
 * target's `net:vh=3,n=10` built a 4^10-host fat-tree for 12 s before
 * saying 'vh' is unknown; with a bad value for n the order shows. */
Test(netmachine, unknown_keys_refused_first)
{
    cs_machine_t *m = NULL;
    cs_error_t err = {0};
    cr_assert_neq(cs_machine_new("net:vh=3,n=abc", &m, &err), CS_OK);
    cr_assert(strstr(err.msg, "unknown key 'vh'"), "%s", err.msg);
}

/* ---- alpha on a SimGrid platform (issue 31) -------------------------------- */

/* Two hosts joined by one link of 1 GB/s, as a SimGrid platform and as an
 * edge list. */
static const char SG_TWO[] =
    "<?xml version='1.0'?>\n"
    "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<platform version=\"4.1\">\n"
    "<zone id=\"z\" routing=\"Full\">\n"
    "<host id=\"a\" speed=\"1Gf\"/>\n<host id=\"b\" speed=\"1Gf\"/>\n"
    "<link id=\"l\" bandwidth=\"1GBps\" latency=\"0\" sharing_policy=\"SPLITDUPLEX\"/>\n"
    "<route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route>\n"
    "</zone>\n</platform>\n";

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

/* The machine's report (what the run summary prints) as a string. */
static char *report_text(const char *spec)
{
    cs_machine_t *m;
    cs_error_t err;
    char *buf = NULL;
    size_t len = 0;
    cr_assert_eq(cs_machine_new(spec, &m, &err), CS_OK, "%s: %s", spec, err.msg);
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f);
    cs_machine_report(m, NULL, f);
    fclose(f);
    cs_machine_free(m);
    return buf;
}

/* An ASTRA-sim network file, too, runs with alpha = 0 unless alpha is
 * given (its network has no per-message host overhead; its endpoint delay
 * is in ASTRA-sim's system configuration): one message costs what it costs
 * with alpha=0 written, and alpha more with alpha given; CM02's fluid
 * model stays SimGrid's alone.  Skipped in a build without libyaml. */
Test(net, astra_network_alpha_defaults_to_zero)
{
    write_file("astra-two.yml", "topology: [ Ring ]\nnpus_count: [ 2 ]\n"
                                "bandwidth: [ 1.0 ]\nlatency: [ 500.0 ]\n");
    cs_machine_t *m;
    cs_error_t err;
    if (cs_machine_new("net:file=astra-two.yml", &m, &err) != CS_OK) {
        cr_expect(strstr(err.msg, "libyaml") != NULL, "%s", err.msg);
        return;
    }
    cs_machine_free(m);
    int src[] = {0}, dst[] = {1};
    for (int i = 0; i < 2; i++) {
        cs_tick_t dflt[1], zero[1], given[1];
        run_msgs("net:file=astra-two.yml", 1, src, dst, N, modes[i], dflt);
        run_msgs("net:file=astra-two.yml,alpha=0", 1, src, dst, N, modes[i], zero);
        run_msgs("net:file=astra-two.yml,alpha=1us", 1, src, dst, N, modes[i], given);
        cr_expect_eq(dflt[0], zero[0], "mode %d", i);
        cr_expect_eq(given[0], zero[0] + ALPHA, "mode %d", i);
    }
    char *t = report_text("net:file=astra-two.yml");
    cr_expect(strstr(t, "alpha     0s per message (the default on ASTRA-sim's files") != NULL,
              "%s", t);
    cr_expect(strstr(t, "fluid ") == NULL, "%s", t);
    free(t);
    cs_machine_field_t fl[CS_MACHINE_MAX_FIELDS];
    cr_assert_eq(cs_machine_new("net:file=astra-two.yml", &m, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(m->type->fields(m, fl, CS_MACHINE_MAX_FIELDS), 2);
    cr_expect_str_eq(fl[1].text, "astra-default");
    cs_machine_free(m);
}

/* A SimGrid platform runs with alpha = 0 unless alpha is given (SimGrid
 * adds no per-message host overhead): one n-byte message costs n/B, and
 * alpha + n/B with alpha given; an edge list keeps alpha = 1 us.  The
 * report and the result's fields say which alpha and where it came from. */
Test(net, simgrid_platform_alpha_defaults_to_zero)
{
    write_file("sg-two.xml", SG_TWO);
    write_file("sg-two.edges", "a b 1GB/s\n");
    int src[] = {0}, dst[] = {1};
    for (int i = 0; i < 2; i++) {
        cs_tick_t end[1];
        run_msgs("net:file=sg-two.xml", 1, src, dst, N, modes[i], end);
        cr_expect_eq(end[0], (cs_tick_t)N * PER_BYTE, "SimGrid default, mode %d", i);
        run_msgs("net:file=sg-two.xml,alpha=1us", 1, src, dst, N, modes[i], end);
        cr_expect_eq(end[0], ALPHA + (cs_tick_t)N * PER_BYTE, "SimGrid alpha given, mode %d", i);
        run_msgs("net:file=sg-two.edges", 1, src, dst, N, modes[i], end);
        cr_expect_eq(end[0], ALPHA + (cs_tick_t)N * PER_BYTE, "edge list default, mode %d", i);
    }
    /* format=simgrid on a file not named .xml is a SimGrid platform too */
    write_file("sg-two.platform", SG_TWO);
    cs_tick_t end[1];
    run_msgs("net:file=sg-two.platform,format=simgrid", 1, src, dst, N, CS_NET_FLUID, end);
    cr_expect_eq(end[0], (cs_tick_t)N * PER_BYTE);

    char *t = report_text("net:file=sg-two.xml");
    cr_expect(strstr(t, "alpha     0s per message (the default on SimGrid's files: its "
                        "network adds no per-message host overhead") != NULL, "%s", t);
    free(t);
    t = report_text("net:file=sg-two.xml,alpha=2us");
    cr_expect(strstr(t, "alpha     2us per message (given)") != NULL, "%s", t);
    free(t);
    t = report_text("net:file=sg-two.edges");
    cr_expect(strstr(t, "alpha") == NULL, "%s", t);
    free(t);

    cs_machine_t *m;
    cs_error_t err;
    cs_machine_field_t fl[CS_MACHINE_MAX_FIELDS];
    cr_assert_eq(cs_machine_new("net:file=sg-two.xml", &m, &err), CS_OK, "%s", err.msg);
    cr_expect(strstr(m->spec, ",alpha=0s") != NULL, "%s", m->spec);
    cr_assert_eq(m->type->fields(m, fl, CS_MACHINE_MAX_FIELDS), 5); /* and the fluid model's */
    cr_expect_str_eq(fl[0].key, "alpha_seconds");
    cr_expect_eq(fl[0].number, 0.0);
    cr_expect_str_eq(fl[1].text, "simgrid-default");
    cs_machine_free(m);
    cr_assert_eq(cs_machine_new("net:file=sg-two.xml,alpha=2us", &m, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(m->type->fields(m, fl, CS_MACHINE_MAX_FIELDS), 5);
    cr_expect_eq(fl[0].number, 2e-6);
    cr_expect_str_eq(fl[1].text, "given");
    cs_machine_free(m);
    cr_assert_eq(cs_machine_new("net:file=sg-two.edges", &m, &err), CS_OK, "%s", err.msg);
    cr_expect_eq(m->type->fields(m, fl, CS_MACHINE_MAX_FIELDS), 0);
    cs_machine_free(m);
    remove("sg-two.xml");
    remove("sg-two.edges");
    remove("sg-two.platform");
}

/* ---- the fluid model on a SimGrid platform (issue 31) ---------------------- */

/* Hosts a and b send to c over a shared link lc (1 GB/s, latency 0):
 * a's path has latency 100 ns (la), b's 400 ns (lb). */
static const char SG_THREE[] =
    "<?xml version='1.0'?>\n"
    "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<platform version=\"4.1\">\n"
    "<zone id=\"z\" routing=\"Full\">\n"
    "<host id=\"a\" speed=\"1Gf\"/>\n<host id=\"b\" speed=\"1Gf\"/>\n"
    "<host id=\"c\" speed=\"1Gf\"/>\n"
    "<link id=\"la\" bandwidth=\"1GBps\" latency=\"100ns\" sharing_policy=\"SPLITDUPLEX\"/>\n"
    "<link id=\"lb\" bandwidth=\"1GBps\" latency=\"400ns\" sharing_policy=\"SPLITDUPLEX\"/>\n"
    "<link id=\"lc\" bandwidth=\"1GBps\" latency=\"0\" sharing_policy=\"SPLITDUPLEX\"/>\n"
    "<router id=\"r\"/>\n"
    "<route src=\"a\" dst=\"r\"><link_ctn id=\"la\" direction=\"UP\"/></route>\n"
    "<route src=\"b\" dst=\"r\"><link_ctn id=\"lb\" direction=\"UP\"/></route>\n"
    "<route src=\"r\" dst=\"c\"><link_ctn id=\"lc\" direction=\"UP\"/></route>\n"
    "<route src=\"a\" dst=\"c\"><link_ctn id=\"la\" direction=\"UP\"/>"
    "<link_ctn id=\"lc\" direction=\"UP\"/></route>\n"
    "<route src=\"b\" dst=\"c\"><link_ctn id=\"lb\" direction=\"UP\"/>"
    "<link_ctn id=\"lc\" direction=\"UP\"/></route>\n"
    "<route src=\"a\" dst=\"b\"><link_ctn id=\"la\" direction=\"UP\"/>"
    "<link_ctn id=\"lb\" direction=\"DOWN\"/></route>\n"
    "</zone>\n</platform>\n";

/* A SimGrid platform runs CM02's fluid model by default: a (latency
 * l_a = 100 ns) has lc alone until b (l_b = 400 ns) joins, D = 300 ns =
 * 300 bytes at 1 GB/s; then a gets l_b / (l_a + l_b) = 4/5 of lc and b
 * 1/5, so a's N - D bytes take (N - D) * 5/4 ns and b, having moved
 * (N - D) / 4 meanwhile, finishes the rest alone.  Told fluid_latency=last
 * and fluid_share=equal, the engine's defaults: both at B/2 from 0,
 * 2N/B + l.  Expected ends computed here in ticks (1 ps). */
Test(net, simgrid_platform_fluid_model_defaults_to_cm02)
{
    write_file("sg-three.xml", SG_THREE);
    int src[] = {0, 1}, dst[] = {2, 2};
    cs_tick_t end[2];
    const int64_t la = 100000, lb = 400000, d = (lb - la) / PER_BYTE; /* ticks, bytes */
    run_msgs("net:file=sg-three.xml,ports=2", 2, src, dst, N, CS_NET_FLUID, end);
    cs_tick_t ea = lb + (N - d) * PER_BYTE * 5 / 4;
    cs_tick_t eb = ea + (N - (N - d) / 4) * PER_BYTE;
    cr_expect_eq(end[0], ea, "a: %lld, formula %lld", (long long)end[0], (long long)ea);
    cr_expect_eq(end[1], eb, "b: %lld, formula %lld", (long long)end[1], (long long)eb);
    run_msgs("net:file=sg-three.xml,ports=2,fluid_latency=last,fluid_share=equal", 2, src, dst,
             N, CS_NET_FLUID, end);
    cr_expect_eq(end[0], 2 * N * PER_BYTE + la);
    cr_expect_eq(end[1], 2 * N * PER_BYTE + lb);

    char *t = report_text("net:file=sg-three.xml");
    cr_expect(strstr(t, "fluid     latency paid first (before the flow shares), shares "
                        "weighted by 1/latency (a SimGrid platform's default") != NULL, "%s", t);
    free(t);
    t = report_text("net:file=sg-three.xml,fluid_latency=last");
    cr_expect(strstr(t, "latency paid last (after its bytes), shares weighted by 1/latency "
                        "(given") != NULL, "%s", t);
    free(t);

    cs_machine_t *m;
    cs_error_t err;
    cs_machine_field_t fl[CS_MACHINE_MAX_FIELDS];
    cr_assert_eq(cs_machine_new("net:file=sg-three.xml", &m, &err), CS_OK, "%s", err.msg);
    cr_expect(strstr(m->spec, ",fluid_latency=first,fluid_share=latency") != NULL, "%s", m->spec);
    cr_assert_eq(m->type->fields(m, fl, CS_MACHINE_MAX_FIELDS), 5);
    cr_expect_str_eq(fl[2].key, "fluid_latency");
    cr_expect_str_eq(fl[2].text, "first");
    cr_expect_str_eq(fl[3].text, "latency");
    cr_expect_str_eq(fl[4].text, "simgrid-default");
    cs_machine_free(m);
    /* a bad value names the key and the valid ones */
    cr_assert_neq(cs_machine_new("net:file=sg-three.xml,fluid_latency=early", &m, &err), CS_OK);
    cr_expect(strstr(err.msg, "fluid_latency") && strstr(err.msg, "first"), "%s", err.msg);
    remove("sg-three.xml");

    /* other networks: the engine's model, said nowhere unless given */
    write_file("two.edges", "a b 1GB/s\n");
    t = report_text("net:file=two.edges");
    cr_expect(strstr(t, "fluid") == NULL, "%s", t);
    free(t);
    cr_assert_eq(cs_machine_new("net:file=two.edges", &m, &err), CS_OK, "%s", err.msg);
    cr_expect_eq(m->type->fields(m, fl, CS_MACHINE_MAX_FIELDS), 0);
    cr_expect(strstr(m->spec, "fluid") == NULL, "%s", m->spec);
    cs_machine_free(m);
    cr_assert_eq(cs_machine_new("net:file=two.edges,fluid_latency=first", &m, &err), CS_OK);
    cr_expect_eq(m->type->fields(m, fl, CS_MACHINE_MAX_FIELDS), 3);
    cr_expect_str_eq(fl[2].text, "given");
    cs_machine_free(m);
    remove("two.edges");
}

static cs_tick_t run_ring_allreduce(const char *spec)
{
    cs_request_t r;
    cs_request_run_t run;
    cs_exec_opts_t o;
    cs_error_t err;
    cs_request_init(&r);
    cs_request_run_init(&run);
    cr_assert_eq(cs_request_set(&r, "machine", spec, &err), CS_OK);
    cr_assert_eq(cs_request_set(&r, "coll", "allreduce", &err), CS_OK);
    cr_assert_eq(cs_request_set(&r, "algo", "ring", &err), CS_OK);
    cr_assert_eq(cs_request_set(&r, "bytes", "1MiB", &err), CS_OK);
    r.mode = CS_NET_FLUID;
    cr_assert_eq(cs_request_prepare(&r, &run, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_request_build(&r, &run, &err), CS_OK, "%s", err.msg);
    cs_request_exec_opts(&r, &run, &o);
    cr_assert_eq(cs_request_run(&run, &o, &err), CS_OK, "%s: %s", spec, err.msg);
    cs_tick_t fin = run.result.finish;
    cs_request_run_destroy(&run);
    return fin;
}

/* A ring allreduce on one of the SimGrid check's platforms (16 hosts):
 * without alpha it runs 2 (P - 1) alpha = 30 us faster than with alpha=1us
 * (one message per rank and step on the critical path). */
Test(net, simgrid_platform_alpha_on_a_ring_allreduce)
{
    char spec[4200], given[4300];
    const char *root = getenv("COLLSIM_SOURCE_ROOT");
    snprintf(spec, sizeof spec, "net:file=%s/tests/data/net/simgrid/ft16.xml",
             root ? root : ".");
    snprintf(given, sizeof given, "%s,alpha=1us", spec);
    cs_tick_t a = run_ring_allreduce(spec), b = run_ring_allreduce(given);
    cr_expect_eq(b - a, 2 * 15 * (cs_tick_t)ALPHA, "%lld vs %lld", (long long)a, (long long)b);
}
