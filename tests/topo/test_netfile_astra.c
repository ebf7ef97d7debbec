/*
 * test_netfile_astra.c - Criterion tests of ASTRA-sim's analytical network
 * files (src/topo/netfile_astra.c, issue 31).  Expected counts, links and
 * routes are derived by hand from ASTRA-sim's construction (astra-network-
 * analytical: Ring.cpp, FullyConnected.cpp, Switch.cpp, MultiDimTopology's
 * address translation, dimension 0 fastest) and its units (GB/s of 2^30
 * bytes, ns), never from a run; the ring allreduce on a Ring of 8 is
 * checked against 2(P-1)(L + n/P * beta) with beta = 1 / (bw * 2^30) from
 * the file; every refusal the reader promises is checked with its
 * file:line text, from a path and from memory alike.
 *
 * Built with libyaml only (CS_HAVE_YAML); without it one test checks the
 * refusal that says the build lacks it.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/request.h"
#include "machines/machine.h"
#include "topo/netfile.h"
#include "topo/netgen.h"

#define GB 1073741824.0 /* ASTRA-sim's GB of GB/s: 2^30 bytes */

static char tmpdir[] = "/tmp/cs_astra_XXXXXX";

static void setup(void) { cr_assert_not_null(mkdtemp(tmpdir)); }
static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(astra, .init = setup, .fini = teardown);

/* Writes text to tmpdir/name; returns the path (static). */
static const char *write_file(const char *name, const char *text)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

#if CS_HAVE_YAML

static cs_netdesc_t *read_text(const char *name, const char *text)
{
    const char *path = write_file(name, text);
    cs_netdesc_t *d = NULL;
    cs_error_t err = {0};
    int rc = cs_netfile_read(&(cs_source_t){.name = path}, CS_NETFILE_AUTO, 1, 0, &d, &err);
    cr_assert_eq(rc, CS_OK, "%s: %s", name, err.msg);
    return d;
}

/* The link between nodes u and v: its bandwidth and latency. */
static void assert_link(const cs_netdesc_t *d, int32_t u, int32_t v, double gbps, double ns)
{
    int32_t l = cs_netdesc_find_link(d, u, v);
    cr_assert_geq(l, 0, "no link %d-%d", (int)u, (int)v);
    const cs_netlink_t *k = cs_netdesc_link(d, l);
    cr_expect_eq(k->bw, gbps * GB, "link %d-%d: %.17g B/s, want %.17g", (int)u, (int)v, k->bw,
                 gbps * GB);
    cr_expect_eq(k->lat, ns * 1e-9, "link %d-%d: %.17g s", (int)u, (int)v, k->lat);
    cr_expect_eq(k->mult, 1);
}

static int count_kind(const cs_netdesc_t *d, cs_netnode_kind_t kind)
{
    int n = 0;
    for (int32_t i = 0; i < cs_netdesc_nodes(d); i++)
        n += cs_netdesc_kind(d, i) == kind;
    return n;
}

/* The route src -> dst as "a b c". */
static const char *route(const cs_netdesc_t *d, int32_t src, int32_t dst)
{
    static char buf[512];
    int32_t path[64];
    uint8_t vc[64];
    int n = cs_netdesc_route(d, src, dst, 0, path, vc, 64), at = 0;
    cr_assert_gt(n, 1, "no route %d -> %d", (int)src, (int)dst);
    buf[0] = 0;
    for (int i = 0; i < n; i++)
        at += snprintf(buf + at, sizeof buf - at, "%s%d", i ? " " : "", (int)path[i]);
    return buf;
}

/* A bidirectional ring of 8 (Ring.cpp: i <-> i+1, 7 <-> 0), 8 links of the
 * file's 50 GB/s and 500 ns; the shorter way round, clockwise at a tie
 * (Ring::route goes anticlockwise only when strictly shorter). */
Test(astra, ring)
{
    cs_netdesc_t *d = read_text("ring.yml", "topology: [ Ring ]\nnpus_count: [ 8 ]\n"
                                            "bandwidth: [ 50.0 ]  # GB/s\n"
                                            "latency: [ 500.0 ]  # ns\n");
    cr_expect_eq(cs_netdesc_hosts(d), 8);
    cr_expect_eq(cs_netdesc_nodes(d), 8);
    cr_expect_eq(cs_netdesc_nlinks(d), 8);
    for (int i = 0; i < 8; i++)
        assert_link(d, i, (i + 1) % 8, 50.0, 500.0);
    cr_expect_str_eq(route(d, 0, 4), "0 1 2 3 4");
    cr_expect_str_eq(route(d, 0, 5), "0 7 6 5");
    cr_expect_str_eq(route(d, 6, 1), "6 7 0 1");
    cs_netdesc_free(d);
}

/* A ring of 2 is one link (ASTRA-sim's second connect of the pair is the
 * same link). */
Test(astra, ring_of_two)
{
    cs_netdesc_t *d = read_text("r2.yml", "topology: [ Ring ]\nnpus_count: [ 2 ]\n"
                                          "bandwidth: [ 12.5 ]\nlatency: [ 0 ]\n");
    cr_expect_eq(cs_netdesc_nlinks(d), 1);
    assert_link(d, 0, 1, 12.5, 0);
    cs_netdesc_free(d);
}

/* FullyConnected: one link per pair, C(5,2) = 10, each one hop. */
Test(astra, fully_connected)
{
    cs_netdesc_t *d = read_text("fc.yaml", "topology: [FullyConnected]\nnpus_count: [5]\n"
                                           "bandwidth: [25]\nlatency: [100.5]\n");
    cr_expect_eq(cs_netdesc_nodes(d), 5);
    cr_expect_eq(cs_netdesc_nlinks(d), 10);
    for (int a = 0; a < 5; a++)
        for (int b = a + 1; b < 5; b++) {
            assert_link(d, a, b, 25, 100.5);
            char want[32];
            snprintf(want, sizeof want, "%d %d", a, b);
            cr_expect_str_eq(route(d, a, b), want);
        }
    cs_netdesc_free(d);
}

/* Switch: the NPUs 0..3, then one switch (id 4) with a link to each; every
 * route crosses it. */
Test(astra, switch)
{
    cs_netdesc_t *d = read_text("sw.yml", "topology:\n  - Switch\nnpus_count:\n  - 4\n"
                                          "bandwidth:\n  - 400.0\nlatency:\n  - 936.25\n");
    cr_expect_eq(cs_netdesc_hosts(d), 4);
    cr_expect_eq(count_kind(d, CS_NETNODE_SWITCH), 1);
    cr_expect_eq(cs_netdesc_kind(d, 4), CS_NETNODE_SWITCH);
    cr_expect_eq(cs_netdesc_nlinks(d), 4);
    for (int i = 0; i < 4; i++)
        assert_link(d, i, 4, 400.0, 936.25);
    cr_expect_str_eq(route(d, 3, 1), "3 4 1");
    cs_netdesc_free(d);
}

/* ASTRA-sim's own 3-D example (input/Ring_FullyConnected_Switch.yml):
 * 2 x 8 x 4 = 64 NPUs, NPU id = c0 + 2 c1 + 16 c2; 32 rings of 2 (one link
 * each), 8 fully connected lines of 8 in each of 4 planes (8 * 4 * 28 =
 * 224 links), 16 switches of 4 NPUs (64 links): 80 nodes, 320 links.
 * Routes go dimension 0 first. */
Test(astra, three_dimensions)
{
    cs_netdesc_t *d = read_text("3d.yml",
                                "# 3D basic-topology, Ring_FullyConnected_Switch\n"
                                "topology: [ Ring, FullyConnected, Switch ]\n"
                                "npus_count: [ 2, 8, 4 ]  # number of NPUs\n"
                                "bandwidth: [ 200.0, 100.0, 50.0 ]  # GB/s\n"
                                "latency: [ 50.0, 500.0, 2000.0 ]  # ns\n");
    cr_expect_eq(cs_netdesc_hosts(d), 64);
    cr_expect_eq(count_kind(d, CS_NETNODE_SWITCH), 16);
    cr_expect_eq(cs_netdesc_nlinks(d), 32 + 224 + 64);
    assert_link(d, 0, 1, 200.0, 50.0);   /* (0,0,0)-(1,0,0): dimension 0 */
    assert_link(d, 0, 2, 100.0, 500.0);  /* (0,0,0)-(0,1,0): dimension 1 */
    assert_link(d, 3, 15, 100.0, 500.0); /* (1,1,0)-(1,7,0) */
    cr_expect_lt(cs_netdesc_find_link(d, 0, 16), 0); /* dimension 2 is a switch */
    cr_expect_lt(cs_netdesc_find_link(d, 0, 3), 0);  /* no diagonal */
    /* (0,0,0) -> (1,7,3) = 63: 0 -> 1 (dim 0), -> 15 (dim 1), through the
     * switch of the line (1,7,*) -> 63 (dim 2) */
    const char *r = route(d, 0, 63);
    int32_t sw = -1;
    cr_assert_eq(sscanf(r, "0 1 15 %d 63", &sw), 1, "route 0 -> 63: %s", r);
    cr_expect_eq(cs_netdesc_kind(d, sw), CS_NETNODE_SWITCH);
    for (int c2 = 0; c2 < 4; c2++)
        assert_link(d, 15 + 16 * c2, sw, 50.0, 2000.0);
    /* the dims hint allreduce/multidim reads: 2 x 8 x 4 */
    int dims[CS_NETGEN_MAX_DIMS];
    cr_expect_eq(cs_netdesc_dims(d, dims), 3);
    cr_expect(dims[0] == 2 && dims[1] == 8 && dims[2] == 4);
    cs_netdesc_free(d);
}

/* The machine reads it from net:file=, told from the suffix, or with
 * format=astra whatever the name. */
Test(astra, machine_and_format_name)
{
    cs_netfile_format_t f;
    cs_error_t err = {0};
    cs_machine_t *m = NULL;
    char spec[1200];
    cr_assert_eq(cs_netfile_parse_format("astra", &f, &err), CS_OK);
    cr_expect_eq(f, CS_NETFILE_ASTRA);
    const char *p = write_file("net.txt", "topology: [ Switch, Ring ]\nnpus_count: [ 4, 3 ]\n"
                                          "bandwidth: [ 1, 2 ]\nlatency: [ 1, 2 ]\n");
    snprintf(spec, sizeof spec, "net:file=%s,format=astra", p);
    cr_assert_eq(cs_machine_new(spec, &m, &err), CS_OK, "%s", err.msg);
    cr_expect_eq(cs_machine_nodes(m), 12);
    cs_machine_free(m);
    snprintf(spec, sizeof spec, "net:file=%s", p); /* as an edge list: refused */
    cr_expect_neq(cs_machine_new(spec, &m, &err), CS_OK);
}

/* Runs allreduce/ring on spec; the finish in ticks (1 ps). */
static int64_t ring_allreduce(const char *spec, int64_t n, cs_net_mode_t mode)
{
    cs_request_t r;
    cs_request_run_t run;
    cs_exec_opts_t o;
    cs_error_t err;
    char bytes[32];
    snprintf(bytes, sizeof bytes, "%lld", (long long)n);
    cs_request_init(&r);
    cs_request_run_init(&run);
    cr_assert_eq(cs_request_set(&r, "machine", spec, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_request_set(&r, "coll", "allreduce", &err), CS_OK);
    cr_assert_eq(cs_request_set(&r, "algo", "ring", &err), CS_OK);
    cr_assert_eq(cs_request_set(&r, "bytes", bytes, &err), CS_OK);
    cr_assert_eq(cs_request_set(&r, "validate", "", &err), CS_OK);
    r.mode = mode;
    cr_assert_eq(cs_request_prepare(&r, &run, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_request_build(&r, &run, &err), CS_OK, "%s", err.msg);
    cs_request_exec_opts(&r, &run, &o);
    cr_assert_eq(cs_request_run(&run, &o, &err), CS_OK, "%s: %s", spec, err.msg);
    int64_t fin = run.result.finish;
    cs_request_run_destroy(&run);
    return fin;
}

/* A ring allreduce on a Ring of 8 NPUs at 50 GB/s: 2(P-1) steps, each a
 * neighbour message of n/P bytes over one link, so T = 2(P-1)(alpha + L +
 * n/P * beta) with alpha = 0 (ASTRA-sim has no per-message host overhead
 * in its network), L the file's latency (one hop) and beta = 1 / (50 *
 * 2^30) s per byte.  The clock is 1 ps and a byte takes 0.0186 ps, so each
 * step may round by a tick (fluid) or a tick per 4 KiB packet (packet). */
Test(astra, ring_allreduce_closed_form)
{
    const int P = 8;
    const int64_t n = 8 << 20;
    const double beta = 1.0 / (50.0 * GB);
    static const cs_net_mode_t modes[] = {CS_NET_PACKET, CS_NET_FLUID};
    static const double lat_ns[] = {0, 500};
    for (int li = 0; li < 2; li++) {
        char text[256], spec[1200];
        snprintf(text, sizeof text, "topology: [ Ring ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]"
                 "\nlatency: [ %g ]\n", P, lat_ns[li]);
        const char *p = write_file(li ? "r8l.yml" : "r8.yml", text);
        snprintf(spec, sizeof spec, "net:file=%s,alpha=0", p);
        double want = 2.0 * (P - 1) * (lat_ns[li] * 1e-9 + (double)n / P * beta) * 1e12;
        for (int mi = 0; mi < 2; mi++) {
            double slack = 2.0 * (P - 1) * (mi == 0 ? (double)n / P / 4096 + 1 : 1);
            int64_t got = ring_allreduce(spec, n, modes[mi]);
            cr_expect_leq(fabs((double)got - want), slack,
                          "latency %g ns, %s: %lld ps, the closed form %.1f ps", lat_ns[li],
                          mi ? "fluid" : "packet", (long long)got, want);
        }
    }
}

/* Reading `text` as NAME fails with code and a message holding each of
 * parts ("@" stands for the name), from a path and from memory. */
static void fails(const char *name, const char *text, int code, const char *const *parts)
{
    const char *path = write_file(name, text);
    for (int mem = 0; mem < 2; mem++) {
        cs_netdesc_t *d = NULL;
        cs_error_t err = {0};
        cs_source_t src = {.name = path};
        if (mem) {
            src.data = text;
            src.len = strlen(text);
        }
        int rc = cs_netfile_read(&src, CS_NETFILE_AUTO, 1, 0, &d, &err);
        cr_expect_eq(rc, code, "%s (%s): code %d, want %d: %s", name, mem ? "memory" : "path",
                     rc, code, err.msg);
        cr_expect_null(d);
        for (int i = 0; parts[i]; i++) {
            const char *want = !strcmp(parts[i], "@") ? path : parts[i];
            cr_expect(strstr(err.msg, want), "%s: \"%s\" lacks \"%s\"", name, err.msg, want);
        }
    }
}

#define P(...) ((const char *const[]){__VA_ARGS__, NULL})
#define OK4 "npus_count: [ 4 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n"

Test(astra, errors)
{
    fails("a.yml", "topology: [ Ring ]\n" OK4 "links: [ 2 ]\n", CS_ERR_PARSE,
          P("@", ":5:", "unknown key \"links\"", "valid: topology"));
    fails("b.yml", "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50 ]\n"
                   "latency: [ 500, 500 ]\n", CS_ERR_PARSE,
          P("@", ":3:", "bandwidth has 1 items, topology 2 (line 1)"));
    fails("c.yml", "topology: [ Torus ]\n" OK4, CS_ERR_PARSE,
          P("@", ":1:", "topology \"Torus\"", "valid: Ring, FullyConnected, Switch"));
    fails("d.yml", "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 0 ]\nlatency: [ 5 ]\n",
          CS_ERR_PARSE, P("@", ":3:", "bandwidth \"0\"", "positive"));
    fails("e.yml", "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 5 ]\nlatency: [ -1 ]\n",
          CS_ERR_PARSE, P("@", ":4:", "latency \"-1\"", "non-negative"));
    fails("f.yml", "topology: [ Ring ]\nnpus_count: [ 0 ]\nbandwidth: [ 5 ]\nlatency: [ 1 ]\n",
          CS_ERR_PARSE, P("@", ":2:", "npus_count \"0\"", "2.."));
    fails("g.yml", "topology: [ Ring ]\nnpus_count: [ 1 ]\nbandwidth: [ 5 ]\nlatency: [ 1 ]\n",
          CS_ERR_PARSE, P("@", ":2:", "npus_count \"1\""));
    fails("h.yml", "topology: [ Ring ]\nnpus_count: [ 4.5 ]\nbandwidth: [ 5 ]\nlatency: [ 1 ]\n",
          CS_ERR_PARSE, P("@", ":2:", "whole number"));
    fails("i.yml", "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ fast ]\nlatency: [ 1 ]\n",
          CS_ERR_PARSE, P("@", ":3:", "bandwidth \"fast\""));
    /* 4096 x 4096 x 4096 NPUs: refused before anything is allocated */
    fails("j.yml", "topology: [ Ring, Ring, Ring ]\nnpus_count: [ 4096, 4096, 4096 ]\n"
                   "bandwidth: [ 1, 1, 1 ]\nlatency: [ 1, 1, 1 ]\n", CS_ERR_RANGE,
          P("@", ":2:", "npus_count", "4194304"));
    fails("k.yml", "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 5 ]\n", CS_ERR_PARSE,
          P("@", "no latency key"));
    fails("l.yml", "topology: Ring\n" OK4, CS_ERR_PARSE,
          P("@", ":1:", "topology is a single value; expected a list"));
    fails("m.yml", "topology: [ [ Ring ] ]\n" OK4, CS_ERR_PARSE,
          P("@", ":1:", "item 0 is a list"));
    fails("n.yml", "topology: [ Ring ]\n" OK4 "topology: [ Ring ]\n", CS_ERR_PARSE,
          P("@", ":5:", "topology given twice (first on line 1)"));
    fails("o.yml", "topology: [ Ring ]\nnpus_count: [ 4 }\nbandwidth: [ 5 ]\n", CS_ERR_PARSE,
          P("@", ":2:", "not YAML"));
    fails("p.yml", "", CS_ERR_PARSE, P("@", "empty"));
    fails("q.yml", "- Ring\n- 4\n", CS_ERR_PARSE, P("@", ":1:", "the file is a list"));
    fails("r.yml", "topology: &t [ Ring ]\nnpus_count: *t\nbandwidth: [ 5 ]\nlatency: [ 1 ]\n",
          CS_ERR_PARSE, P("@", ":2:", "npus_count is an alias"));
    fails("s.yml", "topology: [ Ring ]\n" OK4 "---\ntopology: [ Ring ]\n", CS_ERR_PARSE,
          P("@", ":5:", "a second YAML document"));
    fails("t.yml", "topology: [ Ring, Ring, Ring, Ring, Ring, Ring, Ring, Ring, Ring ]\n" OK4,
          CS_ERR_PARSE, P("@", ":1:", "more than 8 dimensions"));
    fails("u.yml", "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 1e300 ]\n"
                   "latency: [ 1 ]\n", CS_ERR_PARSE, P("@", ":3:", "bandwidth"));
    fails("v.yml", "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ .nan ]\n"
                   "latency: [ 1 ]\n", CS_ERR_PARSE, P("@", ":3:", "bandwidth \".nan\""));
    fails("w.yml", "topology: []\n" OK4, CS_ERR_PARSE, P("@", ":1:", "empty list"));
    fails("x.yml", "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 5 ]\nlatency: [ 1 ]\n"
                   "\tbad: 1\n", CS_ERR_PARSE, P("@", ":5:", "not YAML"));
}

/* A NUL byte in memory (a request's inline file) is refused, not cut. */
Test(astra, nul_byte_is_refused)
{
    static const char text[] = "topology: [ Ring ]\nnpus_count: [ 4 ]\0\nbandwidth: [ 5 ]\n";
    cs_netdesc_t *d = NULL;
    cs_error_t err = {0};
    cs_source_t src = {.name = "nul.yml", .data = text, .len = sizeof text - 1};
    cr_expect_eq(cs_netfile_read(&src, CS_NETFILE_AUTO, 1, 0, &d, &err), CS_ERR_PARSE, "%s",
                 err.msg);
    cr_expect(strstr(err.msg, "nul.yml: byte 36: "), "%s", err.msg);
}

#else /* !CS_HAVE_YAML */

Test(astra, refused_without_libyaml)
{
    const char *p = write_file("r.yml", "topology: [ Ring ]\n");
    cs_netdesc_t *d = NULL;
    cs_error_t err = {0};
    cr_expect_eq(cs_netfile_read(&(cs_source_t){.name = p}, CS_NETFILE_AUTO, 1, 0, &d, &err),
                 CS_ERR_USAGE);
    cr_expect(strstr(err.msg, "lacks it"), "%s", err.msg);
}

#endif
