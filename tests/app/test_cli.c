/*
 * test_cli.c - end-to-end tests of the `collsim` command line.
 *
 * Runs the built binary (path in $COLLSIM, set by meson) with posix_spawn,
 * capturing stdout and stderr into files of a per-test temporary directory,
 * and checks exit statuses, messages and outputs: what a user sees.  Input
 * GOAL files are written into the same directory.
 */
#include "coll/coll.h"
#include "core/queue.h"
#include "machines/machine.h"

#include "cli_util.h"

TestSuite(cli, .init = cli_setup, .fini = cli_teardown, .timeout = 120);

/* Value of the `key` line of `collsim topo` ("diameter      4"). */
static double topo_value(const char *out, const char *key)
{
    size_t klen = strlen(key);
    const char *line = out;
    while (*line) {
        if (strncmp(line, key, klen) == 0 && line[klen] == ' ') {
            char *end;
            double v = strtod(line + klen, &end);
            cr_assert_neq(end, line + klen, "no number on the %s line:\n%s", key, out);
            return v;
        }
        const char *nl = strchr(line, '\n');
        if (!nl)
            break;
        line = nl + 1;
    }
    cr_assert_fail("no \"%s\" line in:\n%s", key, out);
    return -1;
}

/* Keys of the top-level JSON object, in order, as "|k1|k2|...|": a tiny
 * scanner that tracks nesting depth and strings (enough for our writer's
 * output; it does not validate JSON). */
static char *json_top_keys(const char *json)
{
    size_t cap = 4096, len = 0;
    char *keys = calloc(1, cap);
    int depth = 0;
    cr_assert_not_null(keys);
    keys[len++] = '|';
    for (const char *p = json; *p; p++) {
        if (*p == '{' || *p == '[') {
            depth++;
        } else if (*p == '}' || *p == ']') {
            depth--;
        } else if (*p == '"') {
            const char *start = ++p;
            while (*p && *p != '"')
                p += (*p == '\\' && p[1]) ? 2 : 1;
            cr_assert_eq(*p, '"', "unterminated string in JSON");
            size_t n = (size_t)(p - start);
            const char *q = p + 1;
            while (*q == ' ' || *q == '\n' || *q == '\t' || *q == '\r')
                q++;
            if (depth == 1 && *q == ':') {
                cr_assert_lt(len + n + 2, cap);
                memcpy(keys + len, start, n);
                len += n;
                keys[len++] = '|';
            }
        }
    }
    cr_assert_eq(depth, 0, "unbalanced JSON");
    return keys;
}

static long long json_int(const char *json, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\n  \"%s\": ", key);
    const char *p = strstr(json, pat);
    cr_assert_not_null(p, "no top-level %s in:\n%s", key, json);
    return strtoll(p + strlen(pat), NULL, 10);
}

static const char *ring4_goal =
    "num_ranks 4\n"
    "\n"
    "rank 0 {\ns: send 1024b to 1 tag 0\nr: recv 1024b from 3 tag 0\n}\n"
    "rank 1 {\ns: send 1024b to 2 tag 0\nr: recv 1024b from 0 tag 0\n}\n"
    "rank 2 {\ns: send 1024b to 3 tag 0\nr: recv 1024b from 1 tag 0\n}\n"
    "rank 3 {\ns: send 1024b to 0 tag 0\nr: recv 1024b from 2 tag 0\n}\n";

/* ---- help, version, usage errors ---------------------------------------- */

Test(cli, help_exits_zero)
{
    cli_out_t o = RUN("--help");
    cr_expect_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "Usage: collsim");
    ASSERT_HAS(o.out, "run");
    ASSERT_HAS(o.out, "topo");
    cli_out_free(&o);
}

Test(cli, version_exits_zero)
{
    cli_out_t o = RUN("--version");
    cr_expect_eq(o.status, 0);
    ASSERT_HAS(o.out, "collsim ");
    cli_out_free(&o);
}

Test(cli, every_command_has_help)
{
    const char *cmds[] = {"run", "topo", "list", "bench", "sweep"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        cli_out_t o = RUN(cmds[i], "--help");
        char want[64];
        snprintf(want, sizeof want, "Usage: collsim %s", cmds[i]);
        cr_expect_eq(o.status, 0, "%s --help: %s", cmds[i], o.err);
        ASSERT_HAS(o.out, want);
        cli_out_free(&o);
    }
}

Test(cli, unknown_command_is_usage_error)
{
    cli_out_t o = RUN("frobnicate");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "collsim: ");
    ASSERT_HAS(o.err, "frobnicate");
    ASSERT_HAS(o.err, "run");
    cli_out_free(&o);
}

Test(cli, missing_command_is_usage_error)
{
    cli_out_t o = run_cli((const char *const[]){NULL});
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "collsim: ");
    cli_out_free(&o);
}

Test(cli, unknown_option_is_usage_error)
{
    cli_out_t o = RUN("run", "--bogus");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "--bogus");
    ASSERT_HAS(o.err, "collsim run --help");
    cli_out_free(&o);

    o = RUN("topo", "--machine");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "requires an argument");
    cli_out_free(&o);
}

Test(cli, run_requires_machine_and_program)
{
    cli_out_t o = RUN("run", "--program", "x.goal");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "--machine");
    cli_out_free(&o);

    o = RUN("run", "--machine", "alphabeta:topo=ring,p=4");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "--program");
    cli_out_free(&o);
}

Test(cli, bad_mode_and_queue_are_usage_errors)
{
    char *prog = cli_write("ring4.goal", ring4_goal);
    cli_out_t o =
        RUN("run", "--machine", "alphabeta:topo=ring,p=4", "--program", prog, "--mode", "warp");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "warp");
    cli_out_free(&o);

    o = RUN("run", "--machine", "alphabeta:topo=ring,p=4", "--program", prog, "--queue",
            "fibonacci");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "binary");
    ASSERT_HAS(o.err, "quad");
    cli_out_free(&o);
    free(prog);
}

/* ---- machine specs ----------------------------------------------------- */

Test(cli, unknown_spec_key_lists_valid_keys)
{
    cli_out_t o = RUN("topo", "--machine", "alphabeta:topo=ring,p=8,bogus=1");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "bogus");

    int n = 0;
    const cs_machine_type_t *const *types = cs_machine_types(&n);
    const cs_machine_type_t *ab = NULL;
    for (int i = 0; i < n; i++)
        if (strcmp(types[i]->name, "alphabeta") == 0)
            ab = types[i];
    cr_assert_not_null(ab, "no alphabeta machine registered");
    for (int k = 0; ab->keys[k]; k++)
        ASSERT_HAS(o.err, ab->keys[k]);
    cli_out_free(&o);
}

Test(cli, unknown_machine_lists_machines)
{
    cli_out_t o = RUN("topo", "--machine", "nosuchmachine:p=4");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "nosuchmachine");
    ASSERT_HAS(o.err, "alphabeta");
    cli_out_free(&o);
}

Test(cli, list_machines)
{
    cli_out_t o = RUN("list", "machines");
    cr_expect_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "alphabeta");
    ASSERT_HAS(o.out, "keys:");
    ASSERT_HAS(o.out, "usage:");
    cli_out_free(&o);
}

Test(cli, unknown_list_names_valid_lists)
{
    cli_out_t o = RUN("list", "widgets");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "unknown list 'widgets'");
    ASSERT_HAS(o.err, "machines");
    ASSERT_HAS(o.err, "algorithms");
    cli_out_free(&o);
}

/* ---- topo -------------------------------------------------------------- */

Test(cli, topo_ring_8)
{
    cli_out_t o = RUN("topo", "--machine", "alphabeta:topo=ring,p=8");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    cr_expect_eq(topo_value(o.out, "nodes"), 8);
    cr_expect_eq(topo_value(o.out, "links"), 8);
    cr_expect_eq(topo_value(o.out, "channels"), 16);
    cr_expect_eq(topo_value(o.out, "diameter"), 4);
    ASSERT_HAS(o.out, "degree        2..2");
    /* Ring of 8: distances 1,1,2,2,3,3,4 from each node: mean 16/7. */
    cr_expect_float_eq(topo_value(o.out, "avg distance"), 16.0 / 7.0, 1e-3);
    cli_out_free(&o);
}

Test(cli, topo_mesh_4x5)
{
    cli_out_t o = RUN("topo", "--machine", "alphabeta:topo=mesh,rows=4,cols=5");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    cr_expect_eq(topo_value(o.out, "nodes"), 20);
    cr_expect_eq(topo_value(o.out, "links"), 31);
    cr_expect_eq(topo_value(o.out, "diameter"), 7);
    ASSERT_HAS(o.out, "degree        2..4");
    cli_out_free(&o);
}

Test(cli, topo_hypercube_16)
{
    cli_out_t o = RUN("topo", "--machine", "alphabeta:topo=hypercube,p=16");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    cr_expect_eq(topo_value(o.out, "nodes"), 16);
    cr_expect_eq(topo_value(o.out, "links"), 32);
    cr_expect_eq(topo_value(o.out, "diameter"), 4);
    ASSERT_HAS(o.out, "degree        4..4");
    cli_out_free(&o);
}

Test(cli, topo_writes_graphml_and_dot)
{
    char *gml = cli_path("t.graphml"), *dot = cli_path("t.dot");
    cli_out_t o = RUN("topo", "--machine", "alphabeta:topo=torus,rows=3,cols=4", "--graphml", gml,
                      "--dot", dot);
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    char *g = cli_read(gml, NULL), *d = cli_read(dot, NULL);
    ASSERT_HAS(g, "<graphml");
    ASSERT_HAS(g, "<edge");
    ASSERT_HAS(d, "graph");
    ASSERT_HAS(d, "--");
    free(g);
    free(d);
    cli_out_free(&o);

    o = RUN("topo", "--machine", "alphabeta:topo=ring,p=4", "--dot", "/nonexistent/dir/t.dot");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "/nonexistent/dir/t.dot");
    cli_out_free(&o);
    free(gml);
    free(dot);
}

/* ---- run: errors --------------------------------------------------------- */

Test(cli, malformed_goal_gives_position)
{
    /* Line 4 lacks the `b` suffix of the size. */
    char *prog = cli_write("bad.goal", "num_ranks 2\n\nrank 0 {\nsend 8 to 1\n}\n"
                                       "rank 1 {\nrecv 8b from 0\n}\n");
    cli_out_t o = RUN("run", "--machine", "alphabeta:topo=ring,p=4", "--program", prog);
    cr_expect_eq(o.status, 2);
    char want[PATH_MAX + 16];
    snprintf(want, sizeof want, "%s:4:", prog);
    const char *at = strstr(o.err, want);
    cr_assert_not_null(at, "expected \"%s<col>:\" in:\n%s", want, o.err);
    at += strlen(want);
    cr_expect(at[0] >= '0' && at[0] <= '9', "no column after %s in:\n%s", want, o.err);
    cli_out_free(&o);
    free(prog);
}

Test(cli, missing_program_file)
{
    char *prog = cli_path("does-not-exist.goal");
    cli_out_t o = RUN("run", "--machine", "alphabeta:topo=ring,p=4", "--program", prog);
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "does-not-exist.goal");
    cli_out_free(&o);
    free(prog);
}

Test(cli, too_many_ranks_for_machine)
{
    char *prog = cli_write("ring4.goal", ring4_goal);
    cli_out_t o = RUN("run", "--machine", "alphabeta:topo=ring,p=2", "--program", prog);
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "4 ranks");
    ASSERT_HAS(o.err, "2 nodes");
    cli_out_free(&o);
    free(prog);
}

Test(cli, unmatched_recv_is_deadlock)
{
    char *prog = cli_write("dead.goal", "num_ranks 2\n"
                                        "rank 0 {\n}\n"
                                        "rank 1 {\nr: recv 8b from 0 tag 0\n}\n");
    cli_out_t o = RUN("run", "--machine", "alphabeta:topo=ring,p=2", "--program", prog);
    cr_expect_eq(o.status, 3, "stderr: %s", o.err);
    ASSERT_HAS(o.err, "deadlock");
    ASSERT_HAS(o.err, "rank 1");
    cli_out_free(&o);
    free(prog);
}

Test(cli, dependency_cycle_is_reported)
{
    char *prog = cli_write("cycle.goal", "num_ranks 2\n"
                                         "rank 0 {\n"
                                         "a: send 8b to 1 tag 0\n"
                                         "b: send 8b to 1 tag 1\n"
                                         "a requires b\n"
                                         "b requires a\n"
                                         "}\n"
                                         "rank 1 {\n"
                                         "recv 8b from 0 tag 0\n"
                                         "recv 8b from 0 tag 1\n"
                                         "}\n");
    cli_out_t o = RUN("run", "--machine", "alphabeta:topo=ring,p=2", "--program", prog);
    cr_expect_neq(o.status, 0);
    cr_expect_lt(o.status, 128, "crashed: %s", o.err);
    ASSERT_HAS(o.err, "cycle");
    cli_out_free(&o);
    free(prog);
}

/* ---- run: outputs -------------------------------------------------------- */

Test(cli, run_prints_summary)
{
    char *prog = cli_write("ring4.goal", ring4_goal);
    cli_out_t o = RUN("run", "--machine", "alphabeta:topo=ring,p=4", "--program", prog);
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "alphabeta");
    ASSERT_HAS(o.out, "packet");
    ASSERT_HAS(o.out, "4 ranks");
    ASSERT_HAS(o.out, "finish");
    ASSERT_HAS(o.out, "events");
    ASSERT_HAS(o.out, "busiest channels");
    cli_out_free(&o);
    free(prog);
}

Test(cli, json_has_required_keys)
{
    char *prog = cli_write("ring4.goal", ring4_goal);
    cli_out_t o =
        RUN("run", "--machine", "alphabeta:topo=ring,p=4", "--program", prog, "--json", "-");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    char *keys = json_top_keys(o.out);
    const char *required[] = {"schema_version", "collsim_version", "machine",        "mode",
                              "program",        "finish_ticks",    "finish_seconds", "events",
                              "wall_seconds",   "messages",        "ranks",          "channels"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "|%s|", required[i]);
        cr_expect_not_null(strstr(keys, want), "top-level key %s missing; keys: %s", required[i],
                           keys);
    }
    cr_expect_eq(json_int(o.out, "schema_version"), 1);
    cr_expect_eq(json_int(o.out, "messages"), 4);
    ASSERT_HAS(o.out, "{\"rank\": 3, \"finish_ticks\": ");
    ASSERT_HAS(o.out, "\"peak_k\": ");
    free(keys);
    cli_out_free(&o);
    free(prog);
}

Test(cli, json_is_deterministic_with_no_timing)
{
    char *prog = cli_write("ring4.goal", ring4_goal);
    char *j1 = cli_path("a.json"), *j2 = cli_path("b.json");
    const char *modes[] = {"packet", "fluid"};
    for (int m = 0; m < 2; m++) {
        cli_out_t o = RUN("run", "--machine", "alphabeta:topo=ring,p=4", "--program", prog,
                          "--mode", modes[m], "--json", j1, "--no-timing");
        cr_assert_eq(o.status, 0, "stderr: %s", o.err);
        cli_out_free(&o);
        char *a = cli_read(j1, NULL);
        ASSERT_HAS(a, "\"wall_seconds\": 0,");
        ASSERT_HAS(a, "\"events_per_second\": 0,");
        /* Same bytes again, and whatever the event queue: the (time, seq)
         * order is part of the queue's contract. */
        for (int k = 0; strcmp(cs_queue_kind_name((cs_queue_kind_t)k), "unknown") != 0; k++) {
            const char *queue = cs_queue_kind_name((cs_queue_kind_t)k);
            o = RUN("run", "--machine", "alphabeta:topo=ring,p=4", "--program", prog, "--mode",
                    modes[m], "--json", j2, "--no-timing", "--queue", queue);
            cr_assert_eq(o.status, 0, "stderr: %s", o.err);
            cli_out_free(&o);
            char *b = cli_read(j2, NULL);
            cr_expect_str_eq(a, b, "%s, queue %s: JSON of two runs differ", modes[m], queue);
            free(b);
        }
        free(a);
    }
    free(j1);
    free(j2);
    free(prog);
}

/* DESIGN.md: on the alpha-beta scenarios packet and fluid modes must give
 * the same times. */
Test(cli, packet_and_fluid_agree_on_ring_shift)
{
    char *prog = cli_write("ring4.goal", ring4_goal);
    cli_out_t p = RUN("run", "--machine", "alphabeta:topo=ring,p=4", "--program", prog, "--mode",
                      "packet", "--json", "-", "--no-timing");
    cli_out_t f = RUN("run", "--machine", "alphabeta:topo=ring,p=4", "--program", prog, "--mode",
                      "fluid", "--json", "-", "--no-timing");
    cr_assert_eq(p.status, 0, "stderr: %s", p.err);
    cr_assert_eq(f.status, 0, "stderr: %s", f.err);
    long long tp = json_int(p.out, "finish_ticks"), tf = json_int(f.out, "finish_ticks");
    cr_expect_gt(tp, 0);
    cr_expect_eq(tp, tf, "packet %lld ticks, fluid %lld ticks", tp, tf);
    ASSERT_HAS(f.out, "\"mode\": \"fluid\"");
    cli_out_free(&p);
    cli_out_free(&f);
    free(prog);
}

Test(cli, json_to_unwritable_path_fails)
{
    char *prog = cli_write("ring4.goal", ring4_goal);
    cli_out_t o = RUN("run", "--machine", "alphabeta:topo=ring,p=4", "--program", prog, "--json",
                      "/nonexistent/dir/r.json");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "/nonexistent/dir/r.json");
    cli_out_free(&o);
    free(prog);
}

Test(cli, bench_rejects_unknown_workload)
{
    cli_out_t o = RUN("bench", "--workload", "nope");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "ring-shift");
    ASSERT_HAS(o.err, "permutation");
    cli_out_free(&o);
}

/* ---- run: collectives (--coll) --------------------------------------------- */

#define AB8 "alphabeta:topo=complete,p=8"

/* The registered algorithms of one collective (the registry is filled by
 * several files; the tests use whatever is there). */
static int algos_of(cs_coll_kind_t k, const cs_coll_algo_t **out, int max)
{
    int n, count = 0;
    const cs_coll_algo_t *const *all = cs_coll_algos(&n);
    for (int i = 0; i < n && count < max; i++)
        if (all[i]->kind == k)
            out[count++] = all[i];
    return count;
}

Test(cli, run_collective_validates)
{
    const cs_coll_algo_t *al[64];
    int n = algos_of(CS_COLL_ALLREDUCE, al, 64);
    if (n == 0)
        cr_log_warn("no allreduce algorithm registered yet: only broadcast checked");
    for (int i = 0; i < n; i++) {
        if (cs_coll_needs_switches(al[i])) /* no reducing switch here: tests/coll/test_nccl_innet.c */
            continue;
        cli_out_t o = RUN("run", "--machine", AB8, "--coll", "allreduce", "--algo", al[i]->name,
                          "--bytes", "1000", "--validate");
        cr_expect_eq(o.status, 0, "allreduce/%s: stderr: %s", al[i]->name, o.err);
        ASSERT_HAS(o.out, "validation: ok");
        ASSERT_HAS(o.out, "collective allreduce/");
        cli_out_free(&o);
    }
    n = algos_of(CS_COLL_BROADCAST, al, 64);
    cr_assert_gt(n, 0, "no broadcast algorithm registered");
    /* the default algorithm, 5 of the 8 nodes, the last rank as root */
    cli_out_t o = RUN("run", "--machine", AB8, "--coll", "broadcast", "--bytes", "1KiB",
                      "--ranks", "5", "--root", "4", "--validate");
    cr_expect_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "validation: ok");
    ASSERT_HAS(o.out, ": 5 ranks");
    ASSERT_HAS(o.out, "root 4");
    ASSERT_HAS(o.out, al[0]->name);
    cli_out_free(&o);
}

Test(cli, json_says_whether_validated)
{
    cli_out_t o = RUN("run", "--machine", AB8, "--coll", "broadcast", "--bytes", "100",
                      "--validate", "--json", "-", "--no-timing");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "\"validated\": true,");
    ASSERT_HAS(o.out, "\"source\": \"broadcast/");
    cli_out_free(&o);
    o = RUN("run", "--machine", AB8, "--coll", "broadcast", "--bytes", "100", "--json", "-");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "\"validated\": false,");
    cli_out_free(&o);
}

Test(cli, bad_algo_lists_valid_names)
{
    const cs_coll_algo_t *al[64];
    int n = algos_of(CS_COLL_BROADCAST, al, 64);
    cr_assert_gt(n, 0, "no broadcast algorithm registered");
    cli_out_t o = RUN("run", "--machine", AB8, "--coll", "broadcast", "--algo", "no-such-algo",
                      "--bytes", "10");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "no-such-algo");
    for (int i = 0; i < n; i++)
        ASSERT_HAS(o.err, al[i]->name);
    cli_out_free(&o);

    o = RUN("run", "--machine", AB8, "--coll", "allgatherv", "--bytes", "10");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "allgatherv");
    ASSERT_HAS(o.err, "reduce-scatter");
    cli_out_free(&o);
}

Test(cli, collective_usage_errors)
{
    cli_out_t o = RUN("run", "--machine", AB8, "--program", "x.goal", "--coll", "broadcast");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "exclude each other");
    cli_out_free(&o);

    o = RUN("run", "--machine", AB8, "--program", "x.goal", "--validate");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "--validate needs --coll");
    cli_out_free(&o);

    o = RUN("run", "--machine", AB8, "--coll", "broadcast");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "missing --bytes");
    cli_out_free(&o);

    o = RUN("run", "--machine", AB8, "--coll", "broadcast", "--bytes", "10", "--ranks", "9");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "--ranks 9");
    ASSERT_HAS(o.err, "only 8 nodes");
    cli_out_free(&o);

    o = RUN("run", "--machine", AB8, "--coll", "broadcast", "--bytes", "10", "--root", "8");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "--root 8 is outside ranks 0..7");
    cli_out_free(&o);

    o = RUN("run", "--machine", AB8, "--coll", "broadcast", "--bytes", "10", "--opt", "seg");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "KEY=VALUE");
    cli_out_free(&o);

    o = RUN("run", "--machine", AB8, "--coll", "broadcast", "--bytes", "10", "--opt",
            "nosuchoption=1");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "nosuchoption");
    cli_out_free(&o);

    o = RUN("run", "--machine", AB8, "--coll", "broadcast", "--bytes", "10", "--order", "snake");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "snake needs a machine with a grid");
    cli_out_free(&o);
}

Test(cli, list_algorithms)
{
    int n;
    const cs_coll_algo_t *const *all = cs_coll_algos(&n);
    cli_out_t o = RUN("list", "algorithms", "--wide");
    cr_expect_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "ALGORITHM");
    ASSERT_HAS(o.out, "SOURCE");
    for (int i = 0; i < n; i++) {
        char want[200];
        snprintf(want, sizeof want, "%s/%s ", cs_coll_name(all[i]->kind), all[i]->name);
        ASSERT_HAS(o.out, want);
        ASSERT_HAS(o.out, all[i]->source);
        ASSERT_HAS(o.out, all[i]->summary);
    }
    cli_out_free(&o);
}

/* Off a terminal the list fits 80 columns (display columns: "§" is one),
 * or $COLUMNS; --coll keeps one collective's algorithms, every one of them. */
Test(cli, list_algorithms_fits_the_width)
{
    int n, want = 0;
    const cs_coll_algo_t *const *all = cs_coll_algos(&n);
    for (int i = 0; i < n; i++)
        want += all[i]->kind == CS_COLL_ALLREDUCE;
    cli_out_t o = RUN("list", "algorithms", "--coll", "allreduce");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    int names = 0, width = 0;
    for (char *l = o.out; *l; ) {
        char *e = strchr(l, '\n');
        int w = 0;
        for (char *c = l; c < (e ? e : l + strlen(l)); c++)
            w += ((unsigned char)*c & 0xc0) != 0x80;
        if (w > width)
            width = w;
        names += strncmp(l, "allreduce/", 10) == 0;
        cr_assert(l[0] == ' ' || l[0] == '\n' || l[0] == '*' || strncmp(l, "allreduce/", 10) == 0,
                  "a line of another collective: %.80s", l);
        if (!e)
            break;
        l = e + 1;
    }
    cr_expect_eq(names, want);
    cr_expect_leq(width, 80);
    cli_out_free(&o);
}

Test(cli, bad_order_file_names_file_and_line)
{
    char *dup = cli_write("dup.order", "0\n3\n# a comment\n\n5\n3\n");
    char *far = cli_write("far.order", "1\n2\n8\n");
    char *junk = cli_write("junk.order", "1\n2x\n");
    char *empty = cli_write("empty.order", "# nothing\n");
    char want[PATH_MAX + 64];
    cli_out_t o = RUN("run", "--machine", AB8, "--coll", "broadcast", "--bytes", "10",
                      "--order", dup);
    cr_expect_eq(o.status, 2);
    snprintf(want, sizeof want, "%s:6: node 3 is listed twice (first at line 2)", dup);
    ASSERT_HAS(o.err, want);
    cli_out_free(&o);

    o = RUN("run", "--machine", AB8, "--coll", "broadcast", "--bytes", "10", "--order", far);
    cr_expect_eq(o.status, 2);
    snprintf(want, sizeof want, "%s:3: node 8 is outside the machine's nodes 0..7", far);
    ASSERT_HAS(o.err, want);
    cli_out_free(&o);

    o = RUN("run", "--machine", AB8, "--coll", "broadcast", "--bytes", "10", "--order", junk);
    cr_expect_eq(o.status, 2);
    snprintf(want, sizeof want, "%s:2: '2x' is not a node id", junk);
    ASSERT_HAS(o.err, want);
    cli_out_free(&o);

    o = RUN("run", "--machine", AB8, "--coll", "broadcast", "--bytes", "10", "--order", empty);
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "lists no node ids");
    cli_out_free(&o);

    o = RUN("run", "--machine", AB8, "--coll", "broadcast", "--bytes", "10", "--order",
            "/nonexistent/order.txt");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "natural, ring or snake");
    cli_out_free(&o);
    free(dup);
    free(far);
    free(junk);
    free(empty);
}

/* Rank i runs on the order's i-th node: a flat broadcast from rank 0 placed
 * by the file "7 3 1" sends from node 7 to nodes 3 and 1, and only there. */
Test(cli, order_file_places_ranks)
{
    char *ord = cli_write("three.order", "7\n3\n1\n");
    cli_out_t o = RUN("run", "--machine", AB8, "--coll", "broadcast", "--algo", "flat",
                      "--bytes", "100", "--order", ord, "--validate", "--json", "-");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    cr_expect_eq(json_int(o.out, "channels_listed"), 2);
    ASSERT_HAS(o.out, "\"src\": 7, \"dst\": 3,");
    ASSERT_HAS(o.out, "\"src\": 7, \"dst\": 1,");
    ASSERT_HAS(o.out, "\"ranks\": 3,");
    cli_out_free(&o);
    free(ord);
}

/* --order snake on a 2x3 mesh: ranks 0..5 on nodes 0 1 2 5 4 3, so rank 2
 * -> rank 3 of a chain broadcast is the mesh link 2 -> 5; in natural order
 * it would be node 2 -> node 3, two rows apart (three hops). */
Test(cli, snake_order_follows_the_grid)
{
    const cs_coll_algo_t *al[64];
    int n = algos_of(CS_COLL_BROADCAST, al, 64), chain = 0;
    for (int i = 0; i < n; i++)
        chain |= strcmp(al[i]->name, "chain") == 0;
    if (!chain) {
        cr_log_warn("no broadcast/chain registered: snake placement not checked");
        return;
    }
    cli_out_t o = RUN("run", "--machine", "alphabeta:topo=mesh,rows=2,cols=3", "--coll",
                      "broadcast", "--algo", "chain", "--bytes", "100", "--order", "snake",
                      "--validate", "--json", "-");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "\"src\": 2, \"dst\": 5,");
    ASSERT_HAS(o.out, "\"src\": 5, \"dst\": 4,");
    ASSERT_HAS(o.out, "\"src\": 4, \"dst\": 3,");
    cr_expect_eq(json_int(o.out, "channels_listed"), 5, "a chain of 6 ranks on neighbours");
    cli_out_free(&o);
}

/* The machine's ring hint reaches the algorithm in rank space: a ring
 * allgather on a 16-node hypercube in natural placement follows the Gray
 * code, so it uses exactly 16 channels (one per ring edge), each once per
 * step and never shared; with --order ring the placement itself follows the
 * ring and the traffic is the same. */
Test(cli, ring_hint_reaches_the_algorithm)
{
    const char *orders[2] = {"natural", "ring"};
    for (int i = 0; i < 2; i++) {
        cli_out_t o = RUN("run", "--machine", "alphabeta:topo=hypercube,p=16", "--coll",
                          "allgather", "--algo", "ring", "--bytes", "1000", "--order", orders[i],
                          "--validate", "--json", "-", "--no-timing");
        cr_assert_eq(o.status, 0, "stderr: %s", o.err);
        cr_expect_eq(json_int(o.out, "channels_listed"), 16, "order %s", orders[i]);
        cr_expect(strstr(o.out, "\"peak_k\": 2") == NULL, "no channel shared (order %s)",
                  orders[i]);
        /* (alpha + beta m)(P-1) with alpha = 1 us, beta = 1 ns, m = 1000 */
        cr_expect_eq(json_int(o.out, "finish_ticks"), 15LL * (1000000 + 1000 * 1000));
        cli_out_free(&o);
    }
}

/* ---- sweep ------------------------------------------------------------------ */

#define SWEEP_MACHINE "alphabeta:topo=line,p=8"

/* One data row of the sweep CSV. */
typedef struct sweep_row {
    char machine[256], coll[32], algo[64];
    long long bytes, ticks, events;
    int ranks;
    double seconds;
} sweep_row_t;

/* Parses the CSV text: checks the header, fills up to `max` rows and
 * returns how many.  The machine field is quoted (RFC 4180: specs hold
 * commas); the others never are. */
static int sweep_rows(const char *csv, sweep_row_t *rows, int max)
{
    static const char header[] = "machine,coll,algo,bytes,ranks,ticks,seconds,events,"
                                 "algbw_bytes_per_s,busbw_bytes_per_s\n";
    const char *p = csv;
    int n = 0;
    cr_assert_eq(strncmp(csv, header, sizeof header - 1), 0, "CSV header:\n%s", csv);
    p += sizeof header - 1;
    while (*p) {
        sweep_row_t *r = &rows[n];
        size_t k = 0;
        cr_assert_lt(n, max, "more than %d rows:\n%s", max, csv);
        memset(r, 0, sizeof *r);
        cr_assert_eq(*p, '"', "machine field not quoted: %s", p);
        for (p++; *p && !(*p == '"' && p[1] != '"'); p++) {
            if (*p == '"')
                p++;
            cr_assert_lt(k, sizeof r->machine - 1);
            r->machine[k++] = *p;
        }
        cr_assert_eq(*p, '"');
        p++;
        int used = 0;
        int got = sscanf(p, ",%31[^,],%63[^,],%lld,%d,%lld,%lf,%lld,%*f,%*f\n%n", r->coll,
                         r->algo, &r->bytes, &r->ranks, &r->ticks, &r->seconds, &r->events,
                         &used);
        cr_assert_eq(got, 7, "bad CSV row: %s", p);
        cr_assert_gt(used, 0, "CSV row not ended by a newline: %s", p);
        p += used;
        n++;
    }
    return n;
}

/* The finish ticks and events of `collsim run` on the sweep's machine. */
static void sweep_run_point(const char *coll, const char *algo, const char *bytes,
                            const char *opt, long long *ticks, long long *events)
{
    cli_out_t o = opt ? RUN("run", "--machine", SWEEP_MACHINE, "--coll", coll, "--algo", algo,
                            "--bytes", bytes, "--opt", opt, "--json", "-", "--no-timing")
                      : RUN("run", "--machine", SWEEP_MACHINE, "--coll", coll, "--algo", algo,
                            "--bytes", bytes, "--json", "-", "--no-timing");
    cr_assert_eq(o.status, 0, "run %s/%s %s: %s", coll, algo, bytes, o.err);
    *ticks = json_int(o.out, "finish_ticks");
    *events = json_int(o.out, "events");
    cli_out_free(&o);
}

/* Every point of a sweep is the `collsim run` of the same collective: same
 * finish time, same events; rows come algorithm by algorithm, sizes rising. */
Test(cli, sweep_points_equal_runs)
{
    const char *algos[2] = {"ring", "rdb"};
    const long long sizes[4] = {8, 16, 32, 64};
    char *csv_path = cli_path("sweep.csv");
    cli_out_t o = RUN("sweep", "--machine", SWEEP_MACHINE, "--coll", "allreduce", "--algos",
                      "ring,rdb", "--bytes", "8..64:x2", "--csv", csv_path);
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    /* the CSV went to the file, which is named on standard error (issue
     * 32: "wrote FILE"), and nothing else is: no progress off a terminal */
    char wrote[PATH_MAX + 32];
    snprintf(wrote, sizeof wrote, "collsim: wrote %s (CSV)\n", csv_path);
    cr_expect_str_empty(o.out);
    cr_expect_str_eq(o.err, wrote);
    cli_out_free(&o);
    /* --quiet: not even that */
    o = RUN("sweep", "--machine", SWEEP_MACHINE, "--coll", "allreduce", "--algos", "ring,rdb",
            "--bytes", "8..64:x2", "--csv", csv_path, "--quiet");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    cr_expect_str_empty(o.out);
    cr_expect_str_empty(o.err, "--quiet");
    char *csv = cli_read(csv_path, NULL);
    sweep_row_t rows[16];
    int n = sweep_rows(csv, rows, 16);
    cr_assert_eq(n, 2 * 4, "2 algorithms x 4 sizes:\n%s", csv);
    for (int i = 0; i < n; i++) {
        const sweep_row_t *r = &rows[i];
        char bytes[32];
        long long ticks, events;
        cr_expect_str_eq(r->algo, algos[i / 4]);
        cr_expect_eq(r->bytes, sizes[i % 4]);
        cr_expect_str_eq(r->coll, "allreduce");
        cr_expect_eq(r->ranks, 8);
        ASSERT_HAS(r->machine, "alphabeta:topo=line,p=8,");
        snprintf(bytes, sizeof bytes, "%lld", r->bytes);
        sweep_run_point("allreduce", r->algo, bytes, NULL, &ticks, &events);
        cr_expect_eq(r->ticks, ticks, "%s at %s B: sweep %lld, run %lld", r->algo, bytes,
                     r->ticks, ticks);
        cr_expect_eq(r->events, events, "%s at %s B", r->algo, bytes);
        /* the machine's tick is 1 ps */
        cr_expect_float_eq(r->seconds, (double)r->ticks * 1e-12, 1e-9 * r->seconds + 1e-18);
    }
    free(csv);
    free(csv_path);
    cli_out_free(&o);
}

/* Without --csv or --plot the CSV goes to standard output; a list of sizes
 * is sorted and made distinct; --opt ALGO:KEY=VALUE reaches only ALGO. */
Test(cli, sweep_list_and_scoped_options)
{
    cli_out_t o = RUN("sweep", "--machine", SWEEP_MACHINE, "--coll", "allreduce", "--algos",
                      "ring,butterfly", "--bytes", "1KiB,4,64,4", "--opt", "butterfly:g=4");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    sweep_row_t rows[16];
    int n = sweep_rows(o.out, rows, 16);
    const long long sizes[3] = {4, 64, 1024};
    cr_assert_eq(n, 6, "2 algorithms x 3 sizes:\n%s", o.out);
    for (int i = 0; i < n; i++)
        cr_expect_eq(rows[i].bytes, sizes[i % 3], "row %d", i);
    long long ticks, events;
    sweep_run_point("allreduce", "butterfly", "64", "g=4", &ticks, &events);
    cr_expect_eq(rows[4].ticks, ticks, "butterfly with g=4 at 64 B");
    cli_out_free(&o);
}

/* The plot is written in the format of its extension; the CSV then only
 * goes where --csv says. */
Test(cli, sweep_writes_plots)
{
    const char *names[3] = {"sweep.svg", "sweep.png", "sweep.pdf"};
    const char *magic[3] = {"<?xml", "\x89PNG", "%PDF-"};
    for (int i = 0; i < 3; i++) {
        char *plot = cli_path(names[i]);
        cli_out_t o = RUN("sweep", "--machine", SWEEP_MACHINE, "--coll", "broadcast",
                          "--algos", "binomial,flat", "--bytes", "8..1MiB:x4", "--root", "3",
                          "--plot", plot, "--unit", "elements4", "--title", "bcast");
        cr_assert_eq(o.status, 0, "%s: %s", names[i], o.err);
        /* --plot without --csv writes no CSV, only the name of the plot */
        char wrote[PATH_MAX + 32];
        snprintf(wrote, sizeof wrote, "collsim: wrote %s (plot)\n", plot);
        cr_expect_str_empty(o.out);
        cr_expect_str_eq(o.err, wrote);
        char *data = cli_read(plot, NULL);
        cr_expect_eq(strncmp(data, magic[i], strlen(magic[i])), 0, "%s starts with %s",
                     names[i], magic[i]);
        if (i == 0)
            ASSERT_HAS(data, "</svg>");
        free(data);
        free(plot);
        cli_out_free(&o);
    }
}

/* Mistakes in the options are found before anything runs or is written:
 * usage status, the option named, the CSV file not created. */
Test(cli, sweep_usage_errors)
{
    static const struct {
        const char *opt, *value, *want;
    } cases[] = {
        {"--bytes", "64..8:x2", "--bytes '64..8:x2': range 64..8 is empty"},
        {"--bytes", "8..64:x1", "the factor must be a number above 1"},
        {"--bytes", "8..64:y2", "expected xF (multiply) or +S (add)"},
        {"--bytes", "1..1GiB:+1", "more than"},
        {"--bytes", "8,,64", "empty item"},
        {"--bytes", "lots", "--bytes 'lots'"},
        {"--algos", "ring,nosuch", "--algos: unknown allreduce algorithm \"nosuch\"; valid:"},
        {"--algos", "ring,ring", "'ring' is listed twice"},
        {"--plot", "fig.gif", "--plot: fig.gif: unknown plot format '.gif'"},
        {"--opt", "seg=4KiB", "--opt 'seg=4KiB': allreduce/ring takes no options"},
        {"--opt", "nosuch:g=2", "'nosuch' is not in --algos"},
        {"--unit", "words", "--unit: unknown unit 'words'"},
        {"--root", "1", "--root: allreduce has no root"},
    };
    char *csv = cli_path("never.csv");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *algos = strcmp(cases[i].opt, "--algos") ? "ring,rdb" : cases[i].value;
        const char *bytes = strcmp(cases[i].opt, "--bytes") ? "8..64" : cases[i].value;
        const char *extra = strcmp(cases[i].opt, "--algos") && strcmp(cases[i].opt, "--bytes")
                                ? cases[i].opt : "--mode";
        const char *extra_value = extra == cases[i].opt ? cases[i].value : "packet";
        cli_out_t o = RUN("sweep", "--machine", SWEEP_MACHINE, "--coll", "allreduce",
                          "--algos", algos, "--bytes", bytes, extra, extra_value, "--csv", csv);
        cr_expect_eq(o.status, 2, "%s %s: status %d", cases[i].opt, cases[i].value, o.status);
        ASSERT_HAS(o.err, cases[i].want);
        ASSERT_HAS(o.err, "Try 'collsim sweep --help'.");
        cr_expect_neq(access(csv, F_OK), 0, "%s %s: CSV created", cases[i].opt,
                      cases[i].value);
        cli_out_free(&o);
    }
    free(csv);
}

/* An unwritable plot is refused before the runs, naming --plot. */
Test(cli, sweep_unwritable_plot)
{
    char *csv = cli_path("never.csv");
    cli_out_t o = RUN("sweep", "--machine", SWEEP_MACHINE, "--coll", "allreduce", "--algos",
                      "ring", "--bytes", "8", "--plot", "/nonexistent-dir/fig.png", "--csv", csv);
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "--plot /nonexistent-dir/fig.png: cannot create it in /nonexistent-dir");
    cr_expect_neq(access(csv, F_OK), 0, "CSV created before the check");
    free(csv);
    cli_out_free(&o);
}

/* A point that fails stops the sweep, naming the algorithm and size; with
 * --keep-going the other points are still written, and the exit status is
 * still the failure's. */
Test(cli, sweep_failed_point)
{
    for (int keep = 0; keep < 2; keep++) {
        cli_out_t o = keep ? RUN("sweep", "--machine", SWEEP_MACHINE, "--coll", "allreduce",
                                 "--algos", "butterfly,ring", "--bytes", "8,16", "--opt",
                                 "butterfly:g=1", "--keep-going")
                           : RUN("sweep", "--machine", SWEEP_MACHINE, "--coll", "allreduce",
                                 "--algos", "butterfly,ring", "--bytes", "8,16", "--opt",
                                 "butterfly:g=1");
        sweep_row_t rows[8];
        cr_expect_eq(o.status, 2, "keep-going %d", keep);
        ASSERT_HAS(o.err, "allreduce/butterfly at 8 B: ");
        int n = sweep_rows(o.out, rows, 8);
        cr_expect_eq(n, keep ? 2 : 0, "keep-going %d: rows\n%s", keep, o.out);
        if (keep) {
            ASSERT_HAS(o.err, "allreduce/butterfly at 16 B: ");
            cr_expect_str_eq(rows[0].algo, "ring");
        }
        cli_out_free(&o);
    }
}

Test(cli, cerebras_predict_prints_the_thesis_model)
{
    /* tree on 512 PEs, B = 1: Corollary 5.5 gives (2T_R+1) log2 P + P - 1 + B = 45 + 512 = 557 */
    cli_out_t o = RUN("run", "--machine", "cerebras:rows=1,cols=512", "--coll", "reduce", "--algo",
                      "tree", "--bytes", "4", "--predict");
    cr_expect_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "finish    557 ticks");
    ASSERT_HAS(o.out, "model     557.00 cycles");
    ASSERT_HAS(o.out, "cerebras wavelet fabric");
    cli_out_free(&o);
    /* two-phase, B = 64: the re-derived form has two visits fewer (10 cycles) and the
     * stall term of Lemma 5.8 one smaller (note §6) */
    o = RUN("run", "--machine", "cerebras:rows=1,cols=512", "--coll", "reduce", "--algo",
            "two-phase", "--bytes", "256", "--predict");
    cr_expect_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "841.00 cycles (thesis, printed form)");
    ASSERT_HAS(o.out, "830.00 cycles (re-derived form)");
    cli_out_free(&o);
    /* an algorithm without a formula says so; another machine says why */
    o = RUN("run", "--machine", "cerebras:rows=1,cols=8", "--coll", "allgather", "--algo", "ring",
            "--bytes", "64", "--predict");
    cr_expect_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "model     none");
    cli_out_free(&o);
    o = RUN("run", "--machine", "alphabeta:topo=line,p=4", "--coll", "reduce", "--algo", "tree",
            "--bytes", "64", "--predict");
    ASSERT_HAS(o.out, "model     none: the lecture gives no closed form for reduce/tree");
    cli_out_free(&o);
    o = RUN("run", "--machine", "cell:chips=1", "--coll", "broadcast", "--bytes", "64",
            "--predict");
    ASSERT_HAS(o.out, "model     none: cell has no closed-form model");
    cli_out_free(&o);
}

/* --predict on the other machines with a model: the lecture's form on
 * alphabeta, the paper's 3-hop all-reduce on groq; with --json, a model
 * object (and none without --predict). */
Test(cli, predict_on_every_machine_with_a_model)
{
    cli_out_t o = RUN("run", "--machine", "alphabeta:topo=complete,p=8", "--coll", "broadcast",
                      "--algo", "binomial", "--bytes", "1000", "--predict", "--no-timing");
    cr_expect_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "model     6000000.00 ticks = 6 us (lecture 8.1: ceil(log2 P)(alpha + beta n)); "
                      "simulated - model = +0.00 (+0.00%)");
    cli_out_free(&o);
    o = RUN("run", "--machine", "groq:nodes=32", "--coll", "allreduce", "--algo", "gateway",
            "--bytes", "320", "--predict", "--json", "-", "--no-timing");
    cr_expect_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "\"model\": {");
    ASSERT_HAS(o.out, "\"form\": \"paper 5.6: 3 hops x 722 ns\"");
    ASSERT_HAS(o.out, "\"simulated_minus_model_ticks\": 0,");
    cli_out_free(&o);
    o = RUN("run", "--machine", "groq:nodes=32", "--coll", "allreduce", "--algo", "gateway",
            "--bytes", "320", "--json", "-", "--no-timing");
    cr_expect(!strstr(o.out, "\"model\""), "no model object without --predict");
    cli_out_free(&o);
}

/* sweep --predict: the model beside every point, equal to the simulation
 * where the lecture's form is exact (binomial on a complete graph: 3 rounds
 * of 1 us + n ns on 8 ranks), empty where the lecture has no form (chain),
 * and the CSV's columns unchanged without it. */
Test(cli, sweep_predict_columns)
{
    cli_out_t o = RUN("sweep", "--machine", "alphabeta:topo=complete,p=8", "--coll",
                      "broadcast", "--algos", "binomial,chain", "--bytes", "1000,8000",
                      "--predict", "--csv", "-");
    cr_expect_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "machine,coll,algo,bytes,ranks,ticks,seconds,events,algbw_bytes_per_s,"
                      "busbw_bytes_per_s,model_ticks,model_seconds\n");
    ASSERT_HAS(o.out, ",broadcast,binomial,1000,8,6000000,6e-06,");
    ASSERT_HAS(o.out, ",6000000,6e-06\n");
    ASSERT_HAS(o.out, ",broadcast,binomial,8000,8,27000000,2.7e-05,");
    ASSERT_HAS(o.out, ",27000000,2.7e-05\n");
    /* the chain has no closed form: both model fields empty */
    const char *chain = strstr(o.out, ",broadcast,chain,1000,");
    cr_assert_not_null(chain, "%s", o.out);
    const char *eol = strchr(chain, '\n');
    cr_assert_not_null(eol);
    cr_expect(eol - chain > 2 && !strncmp(eol - 2, ",,", 2), "%.*s", (int)(eol - chain), chain);
    cli_out_free(&o);
    o = RUN("sweep", "--machine", "alphabeta:topo=complete,p=8", "--coll", "broadcast",
            "--algos", "binomial", "--bytes", "1000", "--csv", "-");
    ASSERT_HAS(o.out, "machine,coll,algo,bytes,ranks,ticks,seconds,events,algbw_bytes_per_s,"
                      "busbw_bytes_per_s\n");
    cr_expect(!strstr(o.out, "model"), "%s", o.out);
    cli_out_free(&o);
}

Test(cli, cell_reports_bif_and_eib_traffic)
{
    /* the rdb all-gather on 16 SPEs: 16 data messages over the BIF, 8 each
     * way, 1 KiB blocks of which each carries 8 (reference §3.2) */
    cli_out_t o = RUN("run", "--machine", "cell:chips=2", "--coll", "allgather", "--algo", "rdb",
                      "--bytes", "1KiB");
    cr_assert_eq(o.status, 0, "%s", o.err);
    ASSERT_HAS(o.out, "bif       16 data messages crossed (128 KiB): 8 from chip 0, 8 from chip 1");
    ASSERT_HAS(o.out, "eib       at most 16 DMA gets of data under way on one chip");
    cr_expect_null(strstr(o.out, "late gets"), "%s", o.out);
    cli_out_free(&o);
    /* a program that posts its recvs after its sends complete */
    o = RUN("run", "--machine", "cell:chips=1", "--coll", "alltoall", "--algo", "pairwise",
            "--bytes", "1KiB");
    cr_assert_eq(o.status, 0, "%s", o.err);
    ASSERT_HAS(o.out, "late gets ");
    cr_expect_null(strstr(o.out, "bif "), "one chip has no BIF:\n%s", o.out);
    cli_out_free(&o);
}

Test(cli, cerebras_wafer_preset_and_errors)
{
    cli_out_t o = RUN("topo", "--machine", "cerebras:rows=3,cols=5");
    cr_expect_eq(o.status, 0, "stderr: %s", o.err);
    cli_out_free(&o);
    o = RUN("run", "--machine", "cerebras:rows=4", "--coll", "reduce", "--bytes", "4");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "cols=");
    cli_out_free(&o);
    o = RUN("run", "--machine", "cerebras:rows=2,cols=2,buf=0", "--coll", "reduce", "--bytes", "4");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "buf");
    cli_out_free(&o);
}

/* Issue 18: tests/data/net/simgrid/mz3z.xml without zone A's route h1 -> h3
 * used to abort in the channel engine mid-run; the reader refuses it, naming
 * the two hosts and zone A's line (5), and the run exits 2. */
Test(cli, net_file_with_missing_route_refused)
{
    const char *root = getenv("COLLSIM_SOURCE_ROOT");
    cr_assert_not_null(root);
    char src[PATH_MAX];
    snprintf(src, sizeof src, "%s/tests/data/net/simgrid/mz3z.xml", root);
    char *text = cli_read(src, NULL), *hole = strstr(text, "<route src=\"h1\" dst=\"h3\">");
    cr_assert_not_null(hole);
    char *eol = strchr(hole, '\n');
    memmove(hole, eol + 1, strlen(eol + 1) + 1); /* the whole line: later lines keep theirs */
    char *path = cli_write("mzbad.xml", text), machine[PATH_MAX + 32];
    snprintf(machine, sizeof machine, "net:file=%s", path);
    cli_out_t o = RUN("run", "--machine", machine, "--coll", "alltoall", "--bytes", "1K");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "mzbad.xml:5: <zone id=\"A\">: no route from h1 to h3");
    cr_expect_null(strstr(o.err, "invariant"));
    cli_out_free(&o);
    free(path);
    free(text);
}
