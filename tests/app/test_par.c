/*
 * test_par.c - sweeps, comparisons and replay tables whose points run
 * elsewhere (docs/cluster.md): --jobs N worker processes, --shard I/N
 * joined by `collsim merge`, and `mpirun -n 2 ... --mpi`.  The oracle is
 * the serial run of the same command: every output file (CSV, JSON, SVG
 * plot) and the standard output must be the same bytes.  And the merge's
 * refusals: a missing, a duplicated, a foreign, a cut-short shard, and an
 * input file changed between the shards and the merge.
 */
#include "cli_util.h"

TestSuite(par, .init = cli_setup, .fini = cli_teardown, .timeout = 600);

/* A sweep of 3 algorithms x 5 sizes on an 8x8 torus: 15 points of unequal
 * cost, enough for workers to finish out of order. */
#define SWEEP_ARGS                                                                               \
    "sweep", "--machine", "alphabeta:topo=torus,rows=8,cols=8", "--coll", "allreduce",         \
        "--algos", "ring,rdb,rabenseifner", "--bytes", "8..128KiB:x8", "--predict", "--quiet"

static void same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *pa = cli_path(a), *pb = cli_path(b);
    char *x = cli_read(pa, &la), *y = cli_read(pb, &lb);
    cr_assert_not_null(x, "%s missing", a);
    cr_assert_not_null(y, "%s missing", b);
    cr_assert_gt(la, 0, "%s is empty", a);
    cr_assert(la == lb && memcmp(x, y, la) == 0, "%s (%zu bytes) and %s (%zu bytes) differ", a,
              la, b, lb);
    free(x), free(y), free(pa), free(pb);
}

static int file_exists(const char *name)
{
    char *p = cli_path(name);
    int ok = access(p, F_OK) == 0;
    free(p);
    return ok;
}

/* The serial sweep's outputs as s.csv, s.json, s.svg. */
static void serial_sweep(void)
{
    const char *args[] = {SWEEP_ARGS, "--csv", "s.csv", "--json", "s.json", "--plot", "s.svg",
                          NULL};
    cli_out_t o = run_cli(args);
    cr_assert_eq(o.status, 0, "serial sweep: %s", o.err);
    cli_out_free(&o);
}

Test(par, sweep_jobs_2_is_byte_identical)
{
    serial_sweep();
    const char *args[] = {SWEEP_ARGS, "--csv", "j.csv", "--json", "j.json", "--plot", "j.svg",
                          "--jobs", "2", NULL};
    cli_out_t o = run_cli(args);
    cr_assert_eq(o.status, 0, "--jobs 2: %s", o.err);
    same_file("s.csv", "j.csv");
    same_file("s.json", "j.json");
    same_file("s.svg", "j.svg");
    cli_out_free(&o);
    /* --jobs 0 (one per core) and more workers than points: the same */
    const char *more[] = {SWEEP_ARGS, "--csv", "k.csv", "--jobs=40", NULL};
    o = run_cli(more);
    cr_assert_eq(o.status, 0, "--jobs=40: %s", o.err);
    same_file("s.csv", "k.csv");
    cli_out_free(&o);
}

/* Shards 1/3, 2/3, 3/3 written and merged (in another order than 1, 2, 3). */
static void make_shards(void)
{
    for (int i = 1; i <= 3; i++) {
        char shard[24], file[48];
        snprintf(shard, sizeof shard, "%d/3", i);
        snprintf(file, sizeof file, "p%d.shard", i);
        const char *args[] = {SWEEP_ARGS, "--csv", "m.csv", "--json", "m.json", "--plot",
                              "m.svg", "--shard", shard, "--shard-file", file, NULL};
        cli_out_t o = run_cli(args);
        cr_assert_eq(o.status, 0, "--shard %s: %s", shard, o.err);
        cr_assert(file_exists(file), "--shard %s wrote no %s", shard, file);
        /* a shard run writes its shard only */
        cr_assert(!file_exists("m.csv") && !file_exists("m.json") && !file_exists("m.svg"));
        cli_out_free(&o);
    }
}

Test(par, shards_merged_are_byte_identical)
{
    serial_sweep();
    make_shards();
    const char *merge[] = {"merge", "p3.shard", "p1.shard", "p2.shard", NULL};
    cli_out_t o = run_cli(merge);
    cr_assert_eq(o.status, 0, "merge: %s", o.err);
    same_file("s.csv", "m.csv");
    same_file("s.json", "m.json");
    same_file("s.svg", "m.svg");
    cli_out_free(&o);
    /* merge's own --csv replaces the command's */
    const char *other[] = {"merge", "--csv", "o.csv", "--quiet", "p1.shard", "p2.shard",
                           "p3.shard", NULL};
    o = run_cli(other);
    cr_assert_eq(o.status, 0, "merge --csv: %s", o.err);
    same_file("s.csv", "o.csv");
    cli_out_free(&o);
}

/* A merge that must refuse: status 2, the message naming the file. */
static void merge_refuses(const char *const *args, const char *says, const char *names)
{
    cli_out_t o = run_cli(args);
    cr_assert_eq(o.status, 2, "merge accepted (status %d): %s", o.status, o.err);
    cr_assert_not_null(strstr(o.err, says), "'%s' not in: %s", says, o.err);
    cr_assert_not_null(strstr(o.err, names), "'%s' not named in: %s", names, o.err);
    cr_assert(!file_exists("m.csv") && !file_exists("m.json"), "a refused merge wrote output");
    cli_out_free(&o);
}

Test(par, merge_refuses_missing_duplicated_foreign_and_cut_shards)
{
    make_shards();
    const char *missing[] = {"merge", "p1.shard", "p3.shard", NULL};
    merge_refuses(missing, "missing: 2/3", "p1.shard");
    const char *dup[] = {"merge", "p1.shard", "p2.shard", "p2.shard", "p3.shard", NULL};
    merge_refuses(dup, "both shard 2/3", "p2.shard");
    /* a shard of another sweep (one size less) */
    const char *foreign_args[] = {
        "sweep", "--machine", "alphabeta:topo=torus,rows=8,cols=8", "--coll", "allreduce",
        "--algos", "ring,rdb,rabenseifner", "--bytes", "8..16KiB:x8", "--predict", "--quiet",
        "--csv", "m.csv", "--shard", "2/3", "--shard-file", "f2.shard", NULL};
    cli_out_t o = run_cli(foreign_args);
    cr_assert_eq(o.status, 0, "%s", o.err);
    cli_out_free(&o);
    const char *foreign[] = {"merge", "p1.shard", "f2.shard", "p3.shard", NULL};
    merge_refuses(foreign, "a shard of another run", "f2.shard");
    /* cut short: the first half of shard 3 */
    size_t len;
    char *p3 = cli_path("p3.shard"), *text = cli_read(p3, &len);
    char *cut = cli_path("c3.shard");
    FILE *f = fopen(cut, "wb");
    cr_assert_not_null(f);
    fwrite(text, 1, len / 2, f);
    fclose(f);
    free(text), free(p3), free(cut);
    const char *cutargs[] = {"merge", "p1.shard", "p2.shard", "c3.shard", NULL};
    merge_refuses(cutargs, "cut short", "c3.shard");
    /* not a shard at all */
    cli_write("x.shard", "machine,coll\n");
    const char *junk[] = {"merge", "x.shard", NULL};
    merge_refuses(junk, "not a collsim shard file", "x.shard");
}

Test(par, merge_refuses_changed_input_file)
{
    /* a replay table over a trace: the trace changes after the shards ran */
    cli_write("t.goal", "num_ranks 2\nrank 0 {\nl1: send 64b to 1 tag 0\n}\n"
                        "rank 1 {\nl1: recv 64b from 0 tag 0\n}\n");
    for (int i = 1; i <= 2; i++) {
        char shard[24], file[48];
        snprintf(shard, sizeof shard, "%d/2", i);
        snprintf(file, sizeof file, "r%d.shard", i);
        const char *args[] = {"replay", "t.goal", "--machines",
                              "alphabeta:topo=ring,p=4;loggp:p=2", "--no-timing", "--quiet",
                              "--shard", shard, "--shard-file", file, NULL};
        cli_out_t o = run_cli(args);
        cr_assert_eq(o.status, 0, "replay --shard %s: %s", shard, o.err);
        cli_out_free(&o);
    }
    cli_write("t.goal", "num_ranks 2\nrank 0 {\nl1: send 128b to 1 tag 0\n}\n"
                        "rank 1 {\nl1: recv 128b from 0 tag 0\n}\n");
    const char *merge[] = {"merge", "r1.shard", "r2.shard", NULL};
    cli_out_t o = run_cli(merge);
    cr_assert_eq(o.status, 2, "merge after the trace changed: status %d", o.status);
    cr_assert_not_null(strstr(o.err, "changed since the shards ran"), "%s", o.err);
    cr_assert_eq(o.out[0], '\0', "a refused merge printed: %s", o.out);
    cli_out_free(&o);
}

Test(par, compare_and_replay_jobs_same_output)
{
    const char *specs = "alphabeta:topo=ring,p=16;alphabeta:topo=torus,rows=4,cols=4;"
                        "loggp:p=16;alphabeta:topo=ring,p=4";
    /* compare: table on standard output, CSV and JSON; the 4-node ring
     * fails (16 ranks asked) and is reported the same way */
    const char *serial[] = {"compare", "--machines", specs, "--coll", "allreduce", "--bytes",
                            "1KiB,64KiB", "--ranks", "16", "--no-timing", "--quiet", "--csv",
                            "c1.csv", "--json", "c1.json", NULL};
    const char *jobs[] = {"compare", "--machines", specs, "--coll", "allreduce", "--bytes",
                          "1KiB,64KiB", "--ranks", "16", "--no-timing", "--quiet", "--csv",
                          "c2.csv", "--json", "c2.json", "--jobs", "3", NULL};
    cli_out_t a = run_cli(serial), b = run_cli(jobs);
    cr_assert_neq(a.status, 0, "the 4-node ring should fail");
    cr_assert_eq(a.status, b.status);
    cr_assert_str_eq(a.out, b.out);
    cr_assert_str_eq(a.err, b.err);
    same_file("c1.csv", "c2.csv");
    same_file("c1.json", "c2.json");
    cli_out_free(&a), cli_out_free(&b);
    /* replay over the machines: the table */
    char *trace = malloc(PATH_MAX);
    snprintf(trace, PATH_MAX, "%s/traces/stencil16.ti", getenv("COLLSIM_SOURCE_ROOT"));
    const char *r1[] = {"replay", trace, "--machines", specs, "--no-timing", "--quiet", NULL};
    const char *r2[] = {"replay", trace, "--machines", specs, "--no-timing", "--quiet",
                        "--jobs", "2", NULL};
    a = run_cli(r1), b = run_cli(r2);
    cr_assert_eq(a.status, b.status);
    cr_assert_str_eq(a.out, b.out);
    cr_assert_not_null(strstr(a.out, "loggp"), "%s", a.out);
    cli_out_free(&a), cli_out_free(&b);
    free(trace);
}

Test(par, keep_going_failures_reported_as_serial)
{
    /* 64 GiB in 1-byte packets: more than 2^32 units, refused at the run */
    const char *s[] = {"sweep", "--machine", "alphabeta:topo=ring,p=4,packet=1", "--coll",
                       "allreduce", "--algos", "ring,rdb", "--bytes", "64,64GiB,128",
                       "--keep-going", "--quiet", "--csv", "k1.csv", NULL};
    const char *j[] = {"sweep", "--machine", "alphabeta:topo=ring,p=4,packet=1", "--coll",
                       "allreduce", "--algos", "ring,rdb", "--bytes", "64,64GiB,128",
                       "--keep-going", "--quiet", "--csv", "k2.csv", "--jobs", "2", NULL};
    cli_out_t a = run_cli(s), b = run_cli(j);
    cr_assert_eq(a.status, 2, "%s", a.err);
    cr_assert_eq(a.status, b.status);
    cr_assert_not_null(strstr(a.err, "allreduce/rdb at 64 GiB"), "%s", a.err);
    cr_assert_str_eq(a.err, b.err);
    same_file("k1.csv", "k2.csv");
    cli_out_free(&a), cli_out_free(&b);
    /* without --keep-going: the first failure stops both, nothing written */
    s[9] = j[9] = "--quiet"; /* in place of --keep-going */
    s[12] = "n1.csv";
    j[12] = "n2.csv";
    a = run_cli(s), b = run_cli(j);
    cr_assert_eq(a.status, 2);
    cr_assert_eq(b.status, 2);
    cr_assert_str_eq(a.err, b.err);
    cr_assert(!file_exists("n1.csv") && !file_exists("n2.csv"), "a failed sweep wrote its CSV");
    cli_out_free(&a), cli_out_free(&b);
}

Test(par, option_errors)
{
    static const char *const cases[][3] = {
        {"--jobs", "x", "--jobs 'x'"},
        {"--jobs", "-1", "--jobs '-1'"},
        {"--shard", "0/3", "--shard I '0'"},
        {"--shard", "4/3", "--shard I '4'"},
        {"--shard", "3", "give I/N"},
        {"--shard-file", "a.shard", "add --shard I/N"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *args[] = {SWEEP_ARGS, cases[i][0], cases[i][1], NULL};
        cli_out_t o = run_cli(args);
        cr_assert_eq(o.status, 2, "%s %s: status %d", cases[i][0], cases[i][1], o.status);
        cr_assert_not_null(strstr(o.err, cases[i][2]), "%s %s: %s", cases[i][0], cases[i][1],
                           o.err);
        cli_out_free(&o);
    }
    const char *mj[] = {SWEEP_ARGS, "--mpi", "--jobs", "2", NULL};
    cli_out_t o = run_cli(mj);
    cr_assert_eq(o.status, 2);
    cli_out_free(&o);
}

/* Whether this collsim has --mpi and mpirun is on PATH. */
static int mpi_usable(void)
{
    const char *help[] = {"sweep", "--help", NULL};
    cli_out_t o = run_cli(help);
    int built = strstr(o.out, "(not in this build)") == NULL;
    cli_out_free(&o);
    return built && system("command -v mpirun >/dev/null 2>&1") == 0;
}

Test(par, mpirun_2_ranks_is_byte_identical)
{
    if (!mpi_usable())
        cr_skip_test("collsim built without MPI, or no mpirun");
    serial_sweep();
    char cmd[3 * PATH_MAX];
    /* loopback only; root needs OpenMPI's explicit consent; no
     * cross-memory attach (a container may forbid ptrace, and the JSON
     * records pass OpenMPI's eager size).  Under ASan,
     * no leak check in this one run: OpenMPI's own libraries (libopen-pal
     * and the MCA components it unloads, frames LSan cannot name) leave
     * about 70 KB at MPI_Finalize; collsim's side of --mpi is the records
     * and par.c, leak-checked by the --jobs and --shard tests above. */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" "
             "OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo "
             "OMPI_MCA_btl_vader_single_copy_mechanism=none "
             "mpirun -n 2 --oversubscribe %s '%s' sweep --machine "
             "alphabeta:topo=torus,rows=8,cols=8 --coll allreduce --algos "
             "ring,rdb,rabenseifner --bytes 8..128KiB:x8 --predict --quiet --csv p.csv "
             "--json p.json --plot p.svg --mpi >mpi.out 2>&1",
             cli_tmpdir, geteuid() == 0 ? "--allow-run-as-root" : "", getenv("COLLSIM"));
    int st = system(cmd);
    char *log = cli_path("mpi.out");
    char *text = cli_read(log, NULL);
    cr_assert_eq(st, 0, "mpirun: status %d: %s", st, text ? text : "");
    free(text), free(log);
    same_file("s.csv", "p.csv");
    same_file("s.json", "p.json");
    same_file("s.svg", "p.svg");
}

Test(par, mpirun_rank_0_failing_before_the_points_ends_the_job)
{
    if (!mpi_usable())
        cr_skip_test("collsim built without MPI, or no mpirun");
    char cmd[3 * PATH_MAX];
    /* rank 0 cannot write its plot: the other rank, waiting for work, must
     * be told to stop (else both wait in MPI_Finalize: timeout's 124) */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" "
             "OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo "
             "OMPI_MCA_btl_vader_single_copy_mechanism=none "
             "timeout 120 mpirun -n 2 --oversubscribe %s '%s' sweep --machine loggp:p=4 "
             "--coll allreduce --algos ring --bytes 8,16 --plot no/such/dir/p.svg --mpi "
             ">mpi.out 2>&1",
             cli_tmpdir, geteuid() == 0 ? "--allow-run-as-root" : "", getenv("COLLSIM"));
    int st = system(cmd);
    char *log = cli_path("mpi.out"), *text = cli_read(log, NULL);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 124,
              "mpirun: status %d: %s", st, text);
    cr_assert_not_null(strstr(text, "--plot no/such/dir/p.svg"), "%s", text);
    free(text), free(log);
}

Test(par, interrupt_stops_workers_and_writes_nothing)
{
    const char *bin = getenv("COLLSIM");
    char out[PATH_MAX + 16];
    snprintf(out, sizeof out, "%s/i.csv", cli_tmpdir);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        /* a process group of its own, which its workers join: after it
         * exits, a worker left alive would still be found in the group */
        setpgid(0, 0);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 2);
        execl(bin, bin, "sweep", "--machine", "alphabeta:topo=torus,rows=32,cols=32", "--coll",
              "allreduce", "--algos", "ring,rdb,rabenseifner", "--bytes", "1MiB..64MiB:x2",
              "--csv", out, "--jobs", "2", (char *)NULL);
        _exit(127);
    }
    usleep(1500 * 1000);
    kill(pid, SIGINT); /* the parent alone: it must stop its workers itself */
    int ws;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 130, "status %d", ws);
    cr_assert(access(out, F_OK) != 0, "an interrupted sweep left %s", out);
    /* the workers were its children: none is left in its process group */
    cr_assert_neq(kill(-pid, 0), 0, "processes of the sweep are still alive");
}
