/*
 * test_determinism.c - determinism as a test (issue 19): the same inputs
 * give byte-identical results, run twice in one process and once more in
 * another.
 *
 * For every registered machine type (its example configuration,
 * cs_machine_type_t.example) x mode (packet; fluid too where the machine
 * uses the generic channel engine, net_new == NULL, since a machine with an
 * engine of its own has one mode) x three algorithms (allreduce/ring, the
 * binomial broadcast tree, alltoall's default): the request API
 * (src/api/request.h) runs it twice in this process, with another request
 * in between, and the JSON of both (cs_report_json without timing) must be
 * byte-identical to each other and to `collsim run --json - --no-timing`'s
 * in a child process.  Wall-clock fields are the only non-deterministic
 * ones; --no-timing writes them as 0 (docs/json.md).  Also a heatmap SVG
 * and a sweep CSV written twice by two processes, byte for byte.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/report.h"
#include "api/request.h"
#include "cli_util.h"

TestSuite(determinism, .init = cli_setup, .fini = cli_teardown, .timeout = 600);

/* The collectives run on every machine: a ring, a tree and all-to-all,
 * with sizes that keep the 64-node examples well under a second each. */
static const struct {
    const char *coll, *algo, *bytes;
} colls[] = {
    {"allreduce", "ring", "4KiB"},
    {"broadcast", "binomial", "1KiB"},
    {"alltoall", NULL, "256"},
};

/* prepare -> build -> run in this process; the JSON as `run --json
 * --no-timing` writes it. */
static char *json_in_process(const char *spec, const char *mode, int c)
{
    cs_request_t r;
    cs_request_run_t run;
    cs_error_t err = {0};
    cs_exec_opts_t opts;
    cs_request_init(&r);
    cr_assert_eq(cs_request_set(&r, "machine", spec, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_request_set(&r, "coll", colls[c].coll, &err), CS_OK, "%s", err.msg);
    if (colls[c].algo)
        cr_assert_eq(cs_request_set(&r, "algo", colls[c].algo, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_request_set(&r, "bytes", colls[c].bytes, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_request_set(&r, "mode", mode, &err), CS_OK, "%s", err.msg);
    cs_request_run_init(&run);
    int rc = cs_request_prepare(&r, &run, &err);
    if (!rc)
        rc = cs_request_build(&r, &run, &err);
    if (!rc) {
        cs_request_exec_opts(&r, &run, &opts);
        rc = cs_request_run(&run, &opts, &err);
    }
    cr_assert_eq(rc, CS_OK, "%s %s/%s %s: %s", spec, colls[c].coll,
                 colls[c].algo ? colls[c].algo : "default", mode, err.msg);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    cr_assert_eq(cs_report_json(f, 0, run.machine, run.program, &run.result, run.validated, 0,
                                run.is_coll ? &run.coll : NULL, &err),
                 CS_OK, "%s", err.msg);
    fclose(f);
    cs_request_run_destroy(&run);
    return buf;
}

static char *json_by_cli(const char *spec, const char *mode, int c)
{
    const char *argv[20];
    int n = 0;
    argv[n++] = "run";
    argv[n++] = "--machine";
    argv[n++] = spec;
    argv[n++] = "--coll";
    argv[n++] = colls[c].coll;
    if (colls[c].algo) {
        argv[n++] = "--algo";
        argv[n++] = colls[c].algo;
    }
    argv[n++] = "--bytes";
    argv[n++] = colls[c].bytes;
    argv[n++] = "--mode";
    argv[n++] = mode;
    argv[n++] = "--no-timing";
    argv[n++] = "--json";
    argv[n++] = "-";
    argv[n] = NULL;
    cli_out_t o = run_cli(argv);
    cr_assert_eq(o.status, 0, "%s %s %s: exit %d: %s", spec, colls[c].coll, mode, o.status, o.err);
    free(o.err);
    return o.out;
}

/* A field of the JSON that must be there and zero under --no-timing. */
static void expect_zero_timing(const char *json, const char *what)
{
    const char *keys[] = {"\"wall_seconds\": ", "\"events_per_second\": "};
    for (int i = 0; i < 2; i++) {
        const char *p = strstr(json, keys[i]);
        cr_assert_not_null(p, "%s: no %s in the JSON", what, keys[i]);
        p += strlen(keys[i]);
        cr_expect(p[0] == '0' && (p[1] == ',' || p[1] == '\n' || p[1] == '}' || p[1] == ' '),
                  "%s: %s is not 0 with --no-timing: %.20s", what, keys[i], p);
    }
}

Test(determinism, every_machine_mode_and_algorithm)
{
    int ntypes = 0, runs = 0;
    const cs_machine_type_t *const *types = cs_machine_types(&ntypes);
    cr_assert_gt(ntypes, 0);
    for (int t = 0; t < ntypes; t++) {
        const char *spec = types[t]->example;
        int nmodes = types[t]->net_new ? 1 : 2;
        for (int md = 0; md < nmodes; md++) {
            const char *mode = md ? "fluid" : "packet";
            for (int c = 0; c < (int)(sizeof colls / sizeof colls[0]); c++) {
                char what[256];
                snprintf(what, sizeof what, "%s %s/%s %s", spec, colls[c].coll,
                         colls[c].algo ? colls[c].algo : "default", mode);
                char *a = json_in_process(spec, mode, c);
                /* another run in between: no state may carry over */
                char *other = json_in_process(spec, mode, (c + 1) % 3);
                char *b = json_in_process(spec, mode, c);
                char *cli = json_by_cli(spec, mode, c);
                cr_expect_str_eq(a, b, "%s: two runs in one process differ", what);
                cr_expect_str_eq(a, cli, "%s: the command line's JSON differs from the API's",
                                 what);
                expect_zero_timing(cli, what);
                free(a);
                free(other);
                free(b);
                free(cli);
                runs++;
            }
        }
    }
    /* every type, and at least the generic engine's two modes once */
    cr_assert_geq(runs, 3 * ntypes + 3);
}

/* Two processes writing the same file: byte-identical. */
static void expect_same_file(const char *a, const char *b, const char *what)
{
    size_t la, lb;
    char *pa = cli_path(a), *pb = cli_path(b);
    char *da = cli_read(pa, &la), *db = cli_read(pb, &lb);
    cr_assert_gt(la, 0, "%s: %s is empty", what, a);
    cr_expect(la == lb && memcmp(da, db, la) == 0, "%s: %s (%zu bytes) and %s (%zu bytes) differ",
              what, a, la, b, lb);
    free(pa);
    free(pb);
    free(da);
    free(db);
}

Test(determinism, heatmap_svg_and_sweep_csv)
{
    const char *const names[2][2] = {{"h1.svg", "s1.csv"}, {"h2.svg", "s2.csv"}};
    for (int i = 0; i < 2; i++) {
        cli_out_t o = RUN("run", "--machine", "alphabeta:topo=torus,rows=4,cols=4", "--coll",
                          "allreduce", "--algo", "ring", "--bytes", "64KiB", "--no-timing",
                          "--heatmap", names[i][0]);
        cr_assert_eq(o.status, 0, "run --heatmap: %s", o.err);
        cli_out_free(&o);
        o = RUN("sweep", "--machine", "loggp:p=16", "--coll", "allreduce", "--algos",
                "ring,rdb", "--bytes", "8..64KiB:x8", "--ranks", "4,16", "--csv", names[i][1]);
        cr_assert_eq(o.status, 0, "sweep --csv: %s", o.err);
        cli_out_free(&o);
    }
    expect_same_file("h1.svg", "h2.svg", "heatmap");
    expect_same_file("s1.csv", "s2.csv", "sweep");
}
