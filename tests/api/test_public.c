/*
 * test_public.c - the public C interface (include/collsim/collsim.h, issue
 * 20) through that header alone, as a user's program sees it: times against
 * the closed forms of the lecture and of LogGOPSim, the JSON against the
 * command line's for the same request (byte for byte), every error path,
 * a machine reused, and two simulations on two threads at once against the
 * same runs one after the other.
 *
 * The command line is $COLLSIM (set by meson), the traces under
 * $COLLSIM_SOURCE_ROOT.
 */
#include <collsim/collsim.h>

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[256];

static void setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/collsim-public-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void)
{
    char cmd[300];
    collsim_cleanup(); /* fontconfig's caches: no leak reports under ASan */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    (void)system(cmd);
}

TestSuite(public, .init = setup, .fini = teardown, .timeout = 600);

/* ---- helpers ------------------------------------------------------------------ */

/* A request from "key=value" pairs, NULL-terminated; every set must pass. */
/* Writes text to tmpdir/name; the path in path. */
static void write_tmp(const char *name, const char *text, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0, "%s", path);
}

static collsim_request *request(const char *const *kv)
{
    collsim_request *r = collsim_request_new();
    collsim_error e;
    cr_assert_not_null(r);
    for (int i = 0; kv[i]; i += 2) {
        int rc = collsim_request_set(r, kv[i], kv[i + 1], &e);
        cr_assert_eq(rc, COLLSIM_OK, "%s=%s: %s", kv[i], kv[i + 1], e.message);
    }
    return r;
}

/* Runs kv; the run must succeed. */
static collsim_result *run_ok(const char *const *kv)
{
    collsim_request *r = request(kv);
    collsim_result *res = NULL;
    collsim_error e;
    int rc = collsim_run(r, &res, &e);
    cr_assert_eq(rc, COLLSIM_OK, "run: %s", e.message);
    cr_assert_not_null(res);
    collsim_request_free(r);
    return res;
}

static char *json_of(const collsim_result *res)
{
    char *j = NULL;
    size_t n = 0;
    collsim_error e;
    cr_assert_eq(collsim_result_json(res, COLLSIM_NO_TIMING, &j, &n, &e), COLLSIM_OK, "%s",
                 e.message);
    cr_assert_eq(strlen(j), n);
    return j;
}

/* Everything the command `$COLLSIM args` writes on standard output. */
static char *cli_output(const char *args)
{
    const char *bin = getenv("COLLSIM");
    char cmd[2048], *buf = NULL;
    size_t n = 0;
    cr_assert_not_null(bin, "COLLSIM is not set (meson sets it)");
    snprintf(cmd, sizeof cmd, "'%s' %s", bin, args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    FILE *m = open_memstream(&buf, &n);
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, p)) > 0)
        fwrite(chunk, 1, got, m);
    cr_assert_eq(pclose(p), 0, "%s failed", cmd);
    fclose(m);
    return buf;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0;
    cr_assert_not_null(f, "%s", path);
    FILE *m = open_memstream(&buf, &n);
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, got, m);
    fclose(f);
    fclose(m);
    *len = n;
    return buf;
}

/* ---- versions, statuses ------------------------------------------------------- */

Test(public, version)
{
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", COLLSIM_VERSION_MAJOR, COLLSIM_VERSION_MINOR,
             COLLSIM_VERSION_PATCH);
    cr_assert_str_eq(collsim_version(), want);
    cr_assert_eq(collsim_version_number(), COLLSIM_VERSION_MAJOR * 10000 +
                                               COLLSIM_VERSION_MINOR * 100 +
                                               COLLSIM_VERSION_PATCH);
    cr_assert_str_eq(collsim_status_name(COLLSIM_OK), "ok");
    cr_assert_str_eq(collsim_status_name(COLLSIM_ERR_DEADLOCK), "deadlock");
    cr_assert_str_eq(collsim_status_name(COLLSIM_ERR_CANCELLED), "cancelled");
    cr_assert_str_eq(collsim_status_name(99), "unknown");
}

/* ---- times against closed forms ------------------------------------------------- */

/* The lecture's ring allreduce: 2(p-1) steps of alpha + beta n/p.  p = 8,
 * n = 8 KiB, alpha 1 us, beta 1 ns/B: 14 (1 us + 1024 ns) = 28.336 us. */
Test(public, alphabeta_ring_allreduce)
{
    const char *kv[] = {"machine", "alphabeta:topo=ring,p=8", "coll", "allreduce", "algo", "ring",
                        "bytes", "8KiB", "validate", "1", NULL};
    collsim_result *res = run_ok(kv);
    cr_assert_eq(collsim_result_ticks(res), 28336000); /* tick = 1 ps */
    cr_assert_float_eq(collsim_result_seconds(res), 28.336e-6, 1e-15);
    cr_assert_eq(collsim_result_validated(res), 1);
    cr_assert_eq(collsim_result_ranks(res), 8);
    int64_t t[16];
    cr_assert_eq(collsim_result_rank_ticks(res, t, 16), 8);
    for (int i = 0; i < 8; i++) /* every rank finishes with the last step */
        cr_assert_eq(t[i], 28336000);
    cr_assert_eq(collsim_result_rank_ticks(res, t, 3), 3);
    /* 14 steps, 8 messages each */
    cr_assert_eq(collsim_result_messages(res), 112);
    const collsim_machine *m = collsim_result_machine(res);
    cr_assert_str_eq(collsim_machine_type(m), "alphabeta");
    cr_assert_eq(collsim_machine_nodes(m), 8);
    cr_assert_eq(collsim_machine_channels(m), 16);
    cr_assert_float_eq(collsim_machine_tick_seconds(m), 1e-12, 1e-24);
    cr_assert(strstr(collsim_machine_spec(m), "alpha=1us"));

    /* every channel of the ring carries 14 blocks of 1 KiB one way: the ring
     * sends clockwise only, so half the channels carry all of it */
    collsim_channel ch[16];
    cr_assert_eq(collsim_result_channels(res), 16);
    cr_assert_eq(collsim_result_channel_records(res, ch, 16), 16);
    int64_t total = 0;
    int used = 0;
    for (int c = 0; c < 16; c++) {
        total += ch[c].bytes;
        if (ch[c].bytes) {
            used++;
            cr_assert_eq(ch[c].bytes, 14 * 1024);
            /* busy: 14 blocks of 1024 ns, of a run of 28.336 us */
            cr_assert_eq(ch[c].busy_ticks, 14 * 1024000);
            cr_assert_float_eq(ch[c].utilisation, 14 * 1024.0 / 28336.0, 1e-12);
        }
    }
    cr_assert_eq(used, 8);
    cr_assert_eq(total, 8 * 14 * 1024);
    collsim_result_free(res);
}

/* Binomial broadcast on a complete graph: log2 p rounds of alpha + beta n,
 * no link shared: 3 (1 us + 1000 ns) = 6 us. */
Test(public, alphabeta_binomial_broadcast)
{
    const char *kv[] = {"machine", "alphabeta:topo=complete,p=8", "coll", "broadcast", "algo",
                        "binomial", "bytes", "1000", NULL};
    collsim_result *res = run_ok(kv);
    cr_assert_eq(collsim_result_ticks(res), 6000000);
    cr_assert_eq(collsim_result_validated(res), 0); /* not asked */
    collsim_result_free(res);
}

/* LogGOPSim's point-to-point time of an s-byte eager message: o + L +
 * (s-1) G + o; defaults L 2500, o 1500, G 6 ns: 1500 + 2500 + 42 + 1500. */
Test(public, loggp_message_program)
{
    char path[300];
    write_tmp("p2p.goal", "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n}\nrank 1 {\n"
              "l1: recv 8b from 0 tag 0\n}\n", path, sizeof path);
    const char *kv[] = {"machine", "loggp:p=2", "program", path, NULL};
    collsim_result *res = run_ok(kv);
    cr_assert_eq(collsim_result_ticks(res), 5542);
    cr_assert_float_eq(collsim_result_seconds(res), 5.542e-6, 1e-15);
    collsim_result_free(res);
}

/* ---- the command line's JSON, byte for byte ------------------------------------------ */

typedef struct cli_case {
    const char *machine, *coll, *algo, *bytes, *mode;
} cli_case_t;

static void check_against_cli(const cli_case_t *c)
{
    char args[1024];
    snprintf(args, sizeof args, "run -m '%s' --coll %s --algo %s --bytes %s --validate "
             "--mode %s --json - --no-timing", c->machine, c->coll, c->algo, c->bytes, c->mode);
    const char *kv[] = {"machine", c->machine, "coll", c->coll, "algo", c->algo,
                        "bytes", c->bytes, "validate", "1", "mode", c->mode, NULL};
    collsim_result *res = run_ok(kv);
    char *mine = json_of(res), *cli = cli_output(args);
    cr_assert_str_eq(mine, cli, "%s", args);
    cr_assert_eq(collsim_result_validated(res), 1, "%s", args);
    free(cli);
    collsim_free(mine);
    collsim_result_free(res);
}

Test(public, json_equals_cli_on_every_machine)
{
    static const cli_case_t cases[] = {
        {"alphabeta:topo=torus,p=16", "allreduce", "rabenseifner", "64KiB", "packet"},
        {"alphabeta:topo=torus,p=16", "allreduce", "rabenseifner", "64KiB", "fluid"},
        {"cerebras:rows=4,cols=4", "reduce", "tree", "4096", "packet"},
        {"cns1:rings=1", "allgather", "ring", "128", "packet"},
        {"cell:chips=1", "broadcast", "binomial", "16KiB", "packet"},
        {"groq:nodes=2", "allreduce", "ring", "32KiB", "packet"},
        {"loggp:p=8", "alltoall", "pairwise", "1KiB", "packet"},
        {"net:gen=fattree,k=4", "allgather", "ring", "4KiB", "packet"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_against_cli(&cases[i]);
}

Test(public, json_file_equals_buffer)
{
    const char *kv[] = {"machine", "alphabeta:topo=ring,p=4", "coll", "barrier", NULL};
    collsim_result *res = run_ok(kv);
    char path[300];
    collsim_error e;
    size_t n;
    snprintf(path, sizeof path, "%s/r.json", tmpdir);
    cr_assert_eq(collsim_result_write_json(res, COLLSIM_NO_TIMING, path, &e), COLLSIM_OK, "%s",
                 e.message);
    char *file = read_file(path, &n), *mine = json_of(res);
    cr_assert_eq(n, strlen(mine));
    cr_assert_str_eq(file, mine);
    free(file);
    collsim_free(mine);
    /* a folder that does not exist: an I/O error naming the option */
    snprintf(path, sizeof path, "%s/no/such/r.json", tmpdir);
    cr_assert_eq(collsim_result_write_json(res, 0, path, &e), COLLSIM_ERR_IO);
    cr_assert(strstr(e.message, "--json"), "%s", e.message);
    collsim_result_free(res);
}

/* A GOAL trace replayed as `collsim replay` does, and a TI trace mapped in
 * a ring with an algorithm of our choice. */
Test(public, replay_equals_cli)
{
    const char *root = getenv("COLLSIM_SOURCE_ROOT");
    char goal[512], ti[512], args[2048];
    cr_assert_not_null(root);
    snprintf(goal, sizeof goal, "%s/traces/ring4.goal", root);
    snprintf(ti, sizeof ti, "%s/traces/stencil16.ti", root);

    const char *kv1[] = {"machine", "alphabeta:topo=ring,p=4", "trace", goal, NULL};
    collsim_result *res = run_ok(kv1);
    char *mine = json_of(res);
    snprintf(args, sizeof args, "replay '%s' -m alphabeta:topo=ring,p=4 --json - --no-timing",
             goal);
    char *cli = cli_output(args);
    cr_assert_str_eq(mine, cli);
    free(cli);
    collsim_free(mine);
    collsim_result_free(res);

    const char *kv2[] = {"machine", "alphabeta:topo=torus,p=16", "trace", ti, "map", "ring",
                         "algo-for", "allreduce=ring", "flops", "2G", NULL};
    res = run_ok(kv2);
    mine = json_of(res);
    snprintf(args, sizeof args, "replay '%s' -m alphabeta:topo=torus,p=16 --map ring "
             "--algo-for allreduce=ring --flops 2G --json - --no-timing", ti);
    cli = cli_output(args);
    cr_assert_str_eq(mine, cli);
    free(cli);
    collsim_free(mine);
    collsim_result_free(res);
}

/* ---- errors ------------------------------------------------------------------- */

/* The request is run; it must fail with `code` and a message holding `what`. */
static void run_fails(const char *const *kv, int code, const char *what)
{
    collsim_request *r = request(kv);
    collsim_result *res = (collsim_result *)&res; /* not NULL: must be cleared */
    collsim_error e;
    int rc = collsim_run(r, &res, &e);
    cr_assert_eq(rc, code, "got %d (%s), wanted %d", rc, e.message, code);
    cr_assert_eq(e.code, code);
    cr_assert(strstr(e.message, what), "'%s' does not say '%s'", e.message, what);
    cr_assert_null(res);
    collsim_request_free(r);
}

Test(public, bad_specs_name_the_key)
{
    collsim_machine *m = (collsim_machine *)&m;
    collsim_error e;
    cr_assert_eq(collsim_machine_open("alphabeta:topo=ring,p=4,alfa=1us", &m, &e),
                 COLLSIM_ERR_USAGE);
    cr_assert_null(m);
    cr_assert(strstr(e.message, "alfa"), "%s", e.message);
    cr_assert_eq(collsim_machine_open("nosuch:p=4", &m, &e), COLLSIM_ERR_USAGE);
    cr_assert(strstr(e.message, "nosuch"), "%s", e.message);
    cr_assert(strstr(e.message, "alphabeta"), "lists the valid types: %s", e.message);
    /* the same through a request, with the command line's message */
    const char *kv[] = {"machine", "alphabeta:topo=ring,p=-3", "coll", "barrier", NULL};
    collsim_request *r = request(kv);
    collsim_result *res;
    collsim_error e2;
    int rc = collsim_run(r, &res, &e2);
    cr_assert_neq(rc, COLLSIM_OK);
    cr_assert(strstr(e2.message, "p"), "%s", e2.message);
    char args[256], *cli;
    snprintf(args, sizeof args, "run -m alphabeta:topo=ring,p=-3 --coll barrier 2>&1; true");
    cli = cli_output(args);
    cr_assert(strstr(cli, e2.message), "the CLI says '%s', the library '%s'", cli, e2.message);
    free(cli);
    collsim_request_free(r);
}

Test(public, request_keys_and_values)
{
    collsim_request *r = collsim_request_new();
    collsim_error e;
    cr_assert_eq(collsim_request_set(r, "bogus", "1", &e), COLLSIM_ERR_USAGE);
    cr_assert(strstr(e.message, "'bogus'") && strstr(e.message, "machine"), "%s", e.message);
    /* a part of a key's name is no key */
    cr_assert_eq(collsim_request_set(r, "mach", "x", &e), COLLSIM_ERR_USAGE);
    cr_assert_eq(collsim_request_set(r, "bytes", "12 parsecs", &e), COLLSIM_ERR_USAGE);
    cr_assert(strstr(e.message, "--bytes"), "%s", e.message);
    cr_assert_eq(collsim_request_set(r, "mode", "liquid", &e), COLLSIM_ERR_USAGE);
    cr_assert(strstr(e.message, "--mode"), "%s", e.message);
    cr_assert_eq(collsim_request_set(r, "ranks", "0", &e), COLLSIM_ERR_USAGE);
    cr_assert_eq(collsim_request_set(r, "opt", "noequals", &e), COLLSIM_ERR_USAGE);
    cr_assert_eq(collsim_request_set(r, "record", "everything", &e), COLLSIM_ERR_USAGE);
    cr_assert(strstr(e.message, "record"), "%s", e.message);
    cr_assert_eq(collsim_request_set(r, "format", "xml", &e), COLLSIM_ERR_USAGE);
    cr_assert(strstr(e.message, "--format"), "%s", e.message);
    cr_assert_eq(collsim_request_set(r, "algo-for", "allreduce=nosuch", &e), COLLSIM_ERR_USAGE);
    cr_assert_eq(collsim_request_set(r, "flops", "-1", &e), COLLSIM_ERR_USAGE);
    cr_assert_eq(collsim_request_set(r, "coll", NULL, &e), COLLSIM_ERR_USAGE);
    cr_assert_eq(collsim_request_set(r, NULL, "x", &e), COLLSIM_ERR_USAGE);
    /* a refused value leaves the request as it was: still runnable */
    cr_assert_eq(collsim_request_set(r, "machine", "alphabeta:topo=ring,p=4", &e), COLLSIM_OK);
    cr_assert_eq(collsim_request_set(r, "coll", "allreduce", &e), COLLSIM_OK);
    cr_assert_eq(collsim_request_set(r, "bytes", "4KiB", &e), COLLSIM_OK);
    cr_assert_eq(collsim_request_set(r, "bytes", "four", &e), COLLSIM_ERR_USAGE);
    /* values are copied: the caller's buffer may change */
    char buf[32];
    strcpy(buf, "ring");
    cr_assert_eq(collsim_request_set(r, "algo", buf, &e), COLLSIM_OK);
    strcpy(buf, "nosuch");
    /* flags: "0" clears */
    cr_assert_eq(collsim_request_set(r, "validate", "yes", &e), COLLSIM_OK);
    cr_assert_eq(collsim_request_set(r, "validate", "0", &e), COLLSIM_OK);
    collsim_result *res;
    cr_assert_eq(collsim_run(r, &res, &e), COLLSIM_OK, "%s", e.message);
    cr_assert_eq(collsim_result_validated(res), 0);
    /* ring allreduce of 4 KiB on 4 ranks: 6 (1 us + 1024 ns) */
    cr_assert_eq(collsim_result_ticks(res), 6 * 2024000);
    collsim_result_free(res);
    collsim_request_free(r);
}

Test(public, which_keys_go_together)
{
    const char *no_coll[] = {"machine", "alphabeta:topo=ring,p=4", NULL};
    run_fails(no_coll, COLLSIM_ERR_USAGE, "missing --program FILE or --coll NAME");
    const char *no_machine[] = {"coll", "barrier", NULL};
    run_fails(no_machine, COLLSIM_ERR_USAGE, "--machine");
    const char *no_bytes[] = {"machine", "alphabeta:topo=ring,p=4", "coll", "allreduce", NULL};
    run_fails(no_bytes, COLLSIM_ERR_USAGE, "missing --bytes N for allreduce");
    const char *bad_algo[] = {"machine", "alphabeta:topo=ring,p=4", "coll", "allreduce", "algo",
                              "nosuch", "bytes", "8", NULL};
    run_fails(bad_algo, COLLSIM_ERR_USAGE, "\"nosuch\"");
    const char *root_out[] = {"machine", "alphabeta:topo=ring,p=4", "coll", "broadcast",
                              "bytes", "8", "root", "9", NULL};
    run_fails(root_out, COLLSIM_ERR_RANGE, "--root 9 is outside ranks 0..3");
    const char *only_coll[] = {"machine", "alphabeta:topo=ring,p=4", "program", "x.goal",
                               "algo", "ring", NULL};
    run_fails(only_coll, COLLSIM_ERR_USAGE, "--algo needs --coll");
    const char *both[] = {"machine", "alphabeta:topo=ring,p=4", "program", "x.goal", "coll",
                          "barrier", NULL};
    run_fails(both, COLLSIM_ERR_USAGE, "exclude each other");
    const char *map_alone[] = {"machine", "alphabeta:topo=ring,p=4", "coll", "barrier", "map",
                               "ring", NULL};
    run_fails(map_alone, COLLSIM_ERR_USAGE, "map needs a trace");
    const char *trace_coll[] = {"machine", "alphabeta:topo=ring,p=4", "trace", "t.goal",
                                "coll", "barrier", NULL};
    run_fails(trace_coll, COLLSIM_ERR_USAGE, "trace and coll exclude each other");
    const char *no_file[] = {"machine", "alphabeta:topo=ring,p=4", "program",
                             "/nonexistent/x.goal", NULL};
    run_fails(no_file, COLLSIM_ERR_IO, "/nonexistent/x.goal");
    const char *fluid[] = {"machine", "cerebras:rows=2,cols=2", "coll", "barrier", "mode",
                           "fluid", NULL};
    run_fails(fluid, COLLSIM_ERR_USAGE, "--mode fluid");
    const char *window[] = {"machine", "alphabeta:topo=ring,p=4", "coll", "barrier", "record",
                            "window:5us:1us", NULL};
    run_fails(window, COLLSIM_ERR_RANGE, "record");
}

/* `whole` (run --whole): the whole program built first, the same result as
 * the default window; both go with validate (issue 34), and "0" on either
 * flag goes back to the default. */
Test(public, whole_and_windowed)
{
    const char *dflt[] = {"machine", "alphabeta:topo=ring,p=8", "coll", "allreduce", "algo",
                          "ring", "bytes", "4KiB", NULL};
    const char *whole[] = {"machine", "alphabeta:topo=ring,p=8", "coll", "allreduce", "algo",
                           "ring", "bytes", "4KiB", "whole", "1", NULL};
    collsim_result *a = run_ok(dflt), *b = run_ok(whole);
    char *ja = json_of(a), *jb = json_of(b);
    cr_assert_str_eq(ja, jb);
    free(ja);
    free(jb);
    collsim_result_free(a);
    collsim_result_free(b);
    const char *whole_validate[] = {"machine", "alphabeta:topo=ring,p=8", "coll", "allreduce",
                                    "algo", "ring", "bytes", "4KiB", "whole", "1",
                                    "validate", "1", NULL};
    collsim_result_free(run_ok(whole_validate));
    const char *windowed_validate[] = {"machine", "alphabeta:topo=ring,p=8", "coll",
                                       "allreduce", "algo", "ring", "bytes", "4KiB",
                                       "windowed", "1", "validate", "1", NULL};
    /* validate windowed (issue 34): the same result as whole */
    a = run_ok(whole_validate);
    b = run_ok(windowed_validate);
    ja = json_of(a);
    jb = json_of(b);
    cr_assert_str_eq(ja, jb);
    cr_assert_eq(collsim_result_validated(b), 1);
    free(ja);
    free(jb);
    collsim_result_free(a);
    collsim_result_free(b);
    /* windowed, then whole "0": back to the default, which validates too */
    const char *cleared[] = {"machine", "alphabeta:topo=ring,p=8", "coll", "allreduce",
                             "algo", "ring", "bytes", "4KiB", "windowed", "1", "whole", "0",
                             "validate", "1", NULL};
    collsim_result_free(run_ok(cleared));
}

/* A program that can never finish: the status is a deadlock and the result
 * still says what happened until then. */
Test(public, deadlock_result_is_readable)
{
    char path[300];
    write_tmp("dead.goal", "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\nl2: recv 8b from 1 "
              "tag 0\n}\nrank 1 {\nl1: recv 8b from 0 tag 0\nl2: recv 8b from 0 tag 5\n}\n",
              path, sizeof path);
    const char *kv[] = {"machine", "alphabeta:topo=ring,p=2", "program", path, NULL};
    collsim_request *r = request(kv);
    collsim_result *res = NULL;
    collsim_error e;
    int rc = collsim_run(r, &res, &e);
    cr_assert_eq(rc, COLLSIM_ERR_DEADLOCK, "%d %s", rc, e.message);
    cr_assert(strstr(e.message, "deadlock"), "%s", e.message);
    cr_assert_not_null(res);
    /* the one message that could go: 1 us + 8 ns */
    cr_assert_eq(collsim_result_messages(res), 1);
    cr_assert_eq(collsim_result_ticks(res), 1008000);
    char *j = json_of(res);
    cr_assert(strstr(j, "\"finish_ticks\": 1008000"), "%s", j);
    collsim_free(j);
    collsim_result_free(res);
    collsim_request_free(r);
}

/* A cancel flag set before the run stops it at its first poll (2^16
 * events) with CANCELLED, and what ran can be read. */
Test(public, cancel_flag)
{
    volatile int flag = 1; /* set before the run: it stops at its first poll */
    const char *kv[] = {"machine", "alphabeta:topo=torus,p=64", "coll", "alltoall", "bytes",
                        "64KiB", NULL};
    collsim_request *r = request(kv);
    collsim_result *res = NULL;
    collsim_error e;
    collsim_request_set_cancel(r, &flag);
    int rc = collsim_run(r, &res, &e);
    cr_assert_eq(rc, COLLSIM_ERR_CANCELLED, "%d %s", rc, e.message);
    cr_assert(strstr(e.message, "interrupted"), "%s", e.message);
    /* what ran until then can be read; it is not the whole run */
    cr_assert_not_null(res);
    uint64_t partial = collsim_result_events(res);
    collsim_result_free(res);
    flag = 0;
    cr_assert_eq(collsim_run(r, &res, &e), COLLSIM_OK, "%s", e.message);
    cr_assert_gt(collsim_result_events(res), partial);
    collsim_result_free(res);
    collsim_request_set_cancel(r, NULL);
    collsim_request_free(r);
}

/* ---- a machine reused ------------------------------------------------------------ */

Test(public, run_on_reuses_a_machine)
{
    const char *kv[] = {"machine", "groq:nodes=2", "coll", "allreduce", "bytes", "64KiB", NULL};
    collsim_request *r = request(kv);
    collsim_machine *m;
    collsim_result *fresh, *a, *b;
    collsim_error e;
    cr_assert_eq(collsim_run(r, &fresh, &e), COLLSIM_OK, "%s", e.message);
    cr_assert_eq(collsim_machine_open("groq:nodes=2", &m, &e), COLLSIM_OK, "%s", e.message);
    /* the request's machine is ignored by run_on */
    cr_assert_eq(collsim_request_set(r, "machine", "alphabeta:topo=ring,p=2", &e), COLLSIM_OK);
    cr_assert_eq(collsim_run_on(m, r, &a, &e), COLLSIM_OK, "%s", e.message);
    cr_assert_eq(collsim_run_on(m, r, &b, &e), COLLSIM_OK, "%s", e.message);
    cr_assert_eq(collsim_result_machine(a), m);
    char *jf = json_of(fresh), *ja = json_of(a), *jb = json_of(b);
    cr_assert_str_eq(ja, jf);
    cr_assert_str_eq(jb, jf);
    /* another request on the same machine, then the first again */
    collsim_result *c;
    cr_assert_eq(collsim_request_set(r, "coll", "broadcast", &e), COLLSIM_OK);
    cr_assert_eq(collsim_run_on(m, r, &c, &e), COLLSIM_OK, "%s", e.message);
    collsim_result_free(c);
    cr_assert_eq(collsim_request_set(r, "coll", "allreduce", &e), COLLSIM_OK);
    cr_assert_eq(collsim_run_on(m, r, &c, &e), COLLSIM_OK, "%s", e.message);
    char *jc = json_of(c);
    cr_assert_str_eq(jc, jf);
    collsim_free(jf);
    collsim_free(ja);
    collsim_free(jb);
    collsim_free(jc);
    collsim_result_free(a);
    collsim_result_free(b);
    collsim_result_free(c);
    collsim_result_free(fresh);
    collsim_machine_close(m);
    collsim_request_free(r);
}

/* ---- figures ---------------------------------------------------------------------- */

Test(public, heatmap_and_timeline)
{
    const char *kv[] = {"machine", "alphabeta:topo=mesh,p=16", "coll", "allreduce", "bytes",
                        "16KiB", "record", "timeline", "record", "window::10us", NULL};
    collsim_result *res = run_ok(kv);
    char png[300], tl[300], bad[300];
    collsim_error e;
    size_t n;
    snprintf(png, sizeof png, "%s/h.png", tmpdir);
    snprintf(tl, sizeof tl, "%s/t.json", tmpdir);
    snprintf(bad, sizeof bad, "%s/h.gif", tmpdir);
    cr_assert_eq(collsim_result_heatmap(res, png, "bytes", &e), COLLSIM_OK, "%s", e.message);
    char *data = read_file(png, &n);
    cr_assert_gt(n, 8);
    cr_assert_eq(memcmp(data, "\x89PNG", 4), 0);
    free(data);
    cr_assert_eq(collsim_result_heatmap(res, bad, NULL, &e), COLLSIM_ERR_USAGE);
    cr_assert(strstr(e.message, "--heatmap"), "%s", e.message);
    cr_assert_eq(collsim_result_heatmap(res, png, "heat", &e), COLLSIM_ERR_USAGE);
    cr_assert(strstr(e.message, "--metric"), "%s", e.message);
    /* this figure's scale and size; NULL ones are the request's (none):
     * the same bytes as collsim_result_heatmap */
    char png2[300];
    size_t n2;
    snprintf(png2, sizeof png2, "%s/h2.png", tmpdir);
    cr_assert_eq(collsim_result_heatmap_style(res, png2, "bytes", NULL, NULL, &e), COLLSIM_OK,
                 "%s", e.message);
    data = read_file(png, &n);
    char *data2 = read_file(png2, &n2);
    cr_expect(n == n2 && !memcmp(data, data2, n), "NULL style: the request's (none)");
    free(data2);
    cr_assert_eq(collsim_result_heatmap_style(res, png2, "bytes", ":1KiB", "column", &e),
                 COLLSIM_OK, "%s", e.message);
    data2 = read_file(png2, &n2);
    cr_expect(n != n2 || memcmp(data, data2, n), "a scale and a size change the figure");
    free(data2);
    free(data);
    cr_assert_eq(collsim_result_heatmap_style(res, png2, "util", "50", NULL, &e),
                 COLLSIM_ERR_USAGE);
    cr_assert(strstr(e.message, "--scale '50'"), "%s", e.message);
    cr_assert_eq(collsim_result_heatmap_style(res, png2, "util", NULL, "huge", &e),
                 COLLSIM_ERR_USAGE);
    cr_assert(strstr(e.message, "huge"), "%s", e.message);
    cr_assert_eq(collsim_result_timeline(res, tl, &e), COLLSIM_OK, "%s", e.message);
    data = read_file(tl, &n);
    cr_assert(strstr(data, "traceEvents"));
    free(data);
    collsim_result_free(res);

    /* a timeline needs record=timeline */
    const char *kv2[] = {"machine", "alphabeta:topo=ring,p=4", "coll", "barrier", NULL};
    res = run_ok(kv2);
    cr_assert_eq(collsim_result_timeline(res, tl, &e), COLLSIM_ERR_USAGE);
    cr_assert(strstr(e.message, "record=timeline"), "%s", e.message);
    collsim_result_free(res);
}

/* ---- lists and sizes ------------------------------------------------------------------ */

Test(public, lists)
{
    char *s;
    collsim_error e;
    cr_assert_eq(collsim_list_machines(&s, &e), COLLSIM_OK);
    cr_assert_eq(s[0], '[');
    for (const char *t = "alphabeta\0cerebras\0cns1\0cell\0groq\0loggp\0net\0"; *t;
         t += strlen(t) + 1) {
        char want[64];
        snprintf(want, sizeof want, "{\"name\": \"%s\"", t);
        cr_assert(strstr(s, want), "no %s", t);
    }
    collsim_free(s);
    cr_assert_eq(collsim_list_algorithms(&s, &e), COLLSIM_OK);
    cr_assert(strstr(s, "{\"collective\": \"allreduce\", \"name\": \"ring\""), "%.200s", s);
    /* one object per algorithm of `collsim list algorithms`: its lines that
     * start with a collective's name (not the header, the options wrapped
     * under their column, nor the footnote) */
    char *cli = cli_output("list algorithms --wide");
    int want = 0, got = 0;
    for (char *l = strchr(cli, '\n'); l && l[1]; l = strchr(l + 1, '\n'))
        want += l[1] >= 'a' && l[1] <= 'z';
    for (char *p = strstr(s, "{\"collective\""); p; p = strstr(p + 1, "{\"collective\""))
        got++;
    cr_assert_eq(got, want);
    free(cli);
    collsim_free(s);
}

Test(public, sizes)
{
    int64_t *v;
    int n;
    collsim_error e;
    cr_assert_eq(collsim_parse_sizes("8..64:x2", &v, &n, &e), COLLSIM_OK);
    cr_assert_eq(n, 4);
    cr_assert(v[0] == 8 && v[1] == 16 && v[2] == 32 && v[3] == 64);
    collsim_free(v);
    cr_assert_eq(collsim_parse_sizes("1KiB..3KiB:+1KiB,4,4", &v, &n, &e), COLLSIM_OK);
    cr_assert_eq(n, 4);
    cr_assert(v[0] == 4 && v[1] == 1024 && v[2] == 2048 && v[3] == 3072);
    collsim_free(v);
    cr_assert_eq(collsim_parse_sizes("64..8", &v, &n, &e), COLLSIM_ERR_USAGE);
    cr_assert_null(v);
    cr_assert(strstr(e.message, "empty"), "%s", e.message);
    cr_assert_eq(collsim_parse_sizes("1..1G:+1", &v, &n, &e), COLLSIM_ERR_RANGE);
}

/* ---- two threads ------------------------------------------------------------------- */

typedef struct job {
    const char *const *kv;
    const char *png;   /* heatmap path */
    char *json;        /* out */
} job_t;

static void job_run(job_t *j)
{
    collsim_request *r = collsim_request_new();
    collsim_result *res = NULL;
    collsim_error e;
    int rc = COLLSIM_OK;
    j->json = NULL;
    for (int i = 0; j->kv[i] && rc == COLLSIM_OK; i += 2)
        rc = collsim_request_set(r, j->kv[i], j->kv[i + 1], &e);
    if (rc == COLLSIM_OK)
        rc = collsim_run(r, &res, &e);
    if (rc == COLLSIM_OK)
        rc = collsim_result_heatmap(res, j->png, NULL, &e);
    if (rc == COLLSIM_OK)
        rc = collsim_result_json(res, COLLSIM_NO_TIMING, &j->json, NULL, &e);
    if (rc != COLLSIM_OK) {
        /* reported by the main thread (Criterion asserts belong there) */
        j->json = strdup(e.message);
    }
    collsim_result_free(res);
    collsim_request_free(r);
}

static void *job_thread(void *arg)
{
    job_run(arg);
    return NULL;
}

/* Two simulations at once, on machines that differ (one built with igraph:
 * a Groq machine measures its diameters), both drawing heatmaps, give the
 * bytes of the same runs one after the other. */
Test(public, two_threads_at_once)
{
    static const char *const ka[] = {"machine", "groq:nodes=4", "coll", "allreduce", "bytes",
                                     "1MiB", "validate", "1", NULL};
    static const char *const kb[] = {"machine", "net:gen=fattree,k=4", "coll", "allreduce",
                                     "bytes", "256KiB", "record", "window:1us:", NULL};
    char pa1[300], pb1[300], pa2[300], pb2[300];
    snprintf(pa1, sizeof pa1, "%s/a1.png", tmpdir);
    snprintf(pb1, sizeof pb1, "%s/b1.png", tmpdir);
    snprintf(pa2, sizeof pa2, "%s/a2.png", tmpdir);
    snprintf(pb2, sizeof pb2, "%s/b2.png", tmpdir);
    job_t a1 = {ka, pa1, NULL}, b1 = {kb, pb1, NULL}, a2 = {ka, pa2, NULL}, b2 = {kb, pb2, NULL};

    /* one after the other */
    job_run(&a1);
    job_run(&b1);
    cr_assert(a1.json && strstr(a1.json, "\"validated\": true"), "%s", a1.json);
    cr_assert(b1.json && strstr(b1.json, "\"schema_version\""), "%s", b1.json);

    /* at once */
    pthread_t ta, tb;
    cr_assert_eq(pthread_create(&ta, NULL, job_thread, &a2), 0);
    cr_assert_eq(pthread_create(&tb, NULL, job_thread, &b2), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    cr_assert_str_eq(a2.json, a1.json);
    cr_assert_str_eq(b2.json, b1.json);

    const char *files[2][2] = {{pa1, pa2}, {pb1, pb2}};
    for (int k = 0; k < 2; k++) {
        size_t n1, n2;
        char *d1 = read_file(files[k][0], &n1), *d2 = read_file(files[k][1], &n2);
        cr_assert_eq(n1, n2, "%s and %s differ in size", files[k][0], files[k][1]);
        cr_assert_eq(memcmp(d1, d2, n1), 0, "%s and %s differ", files[k][0], files[k][1]);
        free(d1);
        free(d2);
    }
    free(a1.json);
    free(b1.json);
    free(a2.json);
    free(b2.json);
}

/* ---- reuse on every machine type ----------------------------------------------------- */

/* The JSON of collective coll of `bytes` on spec: on m when given, else on a
 * machine of its own. */
static char *coll_json(collsim_machine *m, const char *spec, const char *coll,
                            const char *bytes)
{
    const char *kv[] = {"machine", spec, "coll", coll, "bytes", bytes, NULL};
    collsim_request *r = request(kv);
    collsim_result *res;
    collsim_error e;
    int rc = m ? collsim_run_on(m, r, &res, &e) : collsim_run(r, &res, &e);
    cr_assert_eq(rc, COLLSIM_OK, "%s: %s", spec, e.message);
    char *j = json_of(res);
    collsim_result_free(res);
    collsim_request_free(r);
    return j;
}

/* A machine keeps no state of a run: after other collectives on it, a run
 * gives the bytes of a fresh machine, on every type. */
Test(public, run_on_every_machine_type)
{
    static const char *const specs[] = {"alphabeta:topo=ring,p=8", "cerebras:rows=4,cols=4",
                                        "cns1:rings=1", "cell:chips=2", "groq:nodes=2",
                                        "loggp:p=8", "net:gen=fattree,k=4"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        collsim_machine *m;
        collsim_error e;
        cr_assert_eq(collsim_machine_open(specs[i], &m, &e), COLLSIM_OK, "%s", e.message);
        char *fresh = coll_json(NULL, specs[i], "allreduce", "4KiB");
        collsim_free(coll_json(m, specs[i], "alltoall", "1KiB"));
        collsim_free(coll_json(m, specs[i], "broadcast", "64KiB"));
        char *again = coll_json(m, specs[i], "allreduce", "4KiB");
        cr_assert_str_eq(again, fresh, "%s", specs[i]);
        collsim_free(fresh);
        collsim_free(again);
        collsim_machine_close(m);
    }
}
