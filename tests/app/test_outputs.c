/*
 * test_outputs.c - issue 19 at the command line: outputs whole or absent
 * (/dev/full and signals for run, sweep, compare, replay and export), the
 * regression commands of D1, D2, D4-D7, and out of memory under
 * `ulimit -v` ending with a documented status (71 or 2), never 134.
 * Expected statuses and messages come from docs/cli.md.
 */
#include "cli_util.h"

#include <signal.h>
#include <time.h>

TestSuite(outputs, .init = cli_setup, .fini = cli_teardown);

/* Entries of the test's folder other than ., .. and run_cli's captures. */
static int user_entries(void)
{
    DIR *d = opendir(cli_tmpdir);
    struct dirent *e;
    int n = 0;
    cr_assert_not_null(d);
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
             strcmp(e->d_name, ".stdout") && strcmp(e->d_name, ".stderr") &&
             strcmp(e->d_name, "sig.err");
    closedir(d);
    return n;
}

static void expect(cli_out_t *o, int status, const char *needle)
{
    cr_assert_eq(o->status, status, "status %d (expected %d); stderr:\n%s", o->status, status,
                 o->err);
    if (needle)
        ASSERT_HAS(o->err, needle);
    cli_out_free(o);
}

#define SWEEP "sweep", "--machine", "alphabeta:topo=ring,p=8", "--coll", "allreduce", \
    "--algos", "ring", "--bytes", "4..64"

/* ---- D1 ---- */

Test(outputs, d1_clock_message_not_garbled)
{
    cli_out_t o = RUN("topo", "--machine", "cerebras:rows=2,cols=2,clock=0");
    cr_assert_null(strstr(o.err, "key 'clock': key 'clock'"), "%s", o.err);
    expect(&o, 2, "key 'clock': a frequency must be positive");
}

/* ---- D5, D6, D7 and the other writers on a full disk ---- */

Test(outputs, dev_full_every_writer)
{
    if (access("/dev/full", W_OK) != 0)
        cr_skip_test("no /dev/full");
    cli_out_t o = RUN(SWEEP, "--csv", "/dev/full"); /* D5 */
    expect(&o, 2, "--csv /dev/full");
    o = RUN("run", "--machine", "groq:dump=/dev/full", "--coll", "allreduce", "--bytes", "1KiB");
    expect(&o, 2, "key 'dump' /dev/full"); /* D7 */
    o = RUN("topo", "--machine", "loggp:p=4", "--graphml", "/dev/full"); /* D6 */
    expect(&o, 2, "/dev/full");
    o = RUN("run", "--machine", "loggp:p=4", "--coll", "allreduce", "--bytes", "1KiB", "--json",
            "/dev/full");
    expect(&o, 2, "--json /dev/full");
    o = RUN("compare", "--machines", "loggp:p=4;alphabeta:topo=ring,p=4", "--coll", "allreduce",
            "--bytes", "1KiB", "--csv", "/dev/full");
    expect(&o, 2, "--csv /dev/full");
    o = RUN("export", "--coll", "allreduce", "--bytes", "1KiB", "--ranks", "4", "-o",
            "/dev/full");
    expect(&o, 2, "/dev/full");
    char *ti = cli_write("t.ti", "0 init\n1 init\n0 send 1 0 64\n1 recv 0 0 64\n");
    o = RUN("replay", ti, "--machine", "loggp:p=4", "--json", "/dev/full");
    expect(&o, 2, "/dev/full");
    free(ti);
}

Test(outputs, failed_run_leaves_no_file)
{
    /* a deadlocked program: no JSON, no temporary */
    char *g = cli_write("d.goal", "num_ranks 2\nrank 0 {\nl1: recv 8b from 1\n}\nrank 1 {\n}\n");
    cli_out_t o = RUN("run", "--machine", "loggp:p=2", "--program", g, "--json", "r.json");
    cr_assert_eq(o.status, 3, "%s", o.err);
    cli_out_free(&o);
    free(g);
    cr_assert_eq(user_entries(), 1, "something besides d.goal was left");
}

/* ---- signals ---- */

/* Starts `collsim args` in the test folder with stdin and stdout on
 * /dev/null and stderr to sig.err; returns its pid. */
static pid_t spawn_in_folder(const char *const *args)
{
    const char *bin = getenv("COLLSIM");
    const char *argv[64];
    int argc = 0;
    cr_assert_not_null(bin);
    argv[argc++] = bin;
    for (int i = 0; args[i]; i++)
        argv[argc++] = args[i];
    argv[argc] = NULL;
    char *err_path = cli_path("sig.err");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char cwd[PATH_MAX];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(cli_tmpdir), 0);
    pid_t pid;
    cr_assert_eq(posix_spawn(&pid, bin, &fa, NULL, (char *const *)argv, environ), 0);
    cr_assert_eq(chdir(cwd), 0);
    posix_spawn_file_actions_destroy(&fa);
    free(err_path);
    return pid;
}

/* The exit status of pid (128 + signal if killed). */
static int wait_status(pid_t pid)
{
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0)
        cr_assert_eq(errno, EINTR);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* Starts `collsim args` (spawn_in_folder), waits until `wait_for` names a
 * file there (a temporary being written) or 1 s, then sends sig; returns
 * the exit status (128 + signal if killed). */
static int run_and_signal(const char *const *args, const char *wait_prefix, int sig)
{
    pid_t pid = spawn_in_folder(args);
    /* up to 20 s for the temporary to appear (a loaded machine), then a
     * little more so that the simulation is running; a command that writes
     * its output only at the end ("never") gets 2 s to start its run, far
     * less than the runs given here take */
    int polls = strcmp(wait_prefix, "never") ? 2000 : 200;
    for (int i = 0; i < polls; i++) {
        DIR *d = opendir(cli_tmpdir);
        struct dirent *e;
        int seen = 0;
        while (d && (e = readdir(d)))
            seen |= strncmp(e->d_name, wait_prefix, strlen(wait_prefix)) == 0;
        if (d)
            closedir(d);
        if (seen)
            break;
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    nanosleep(&(struct timespec){0, 300000000}, NULL);
    kill(pid, sig);
    return wait_status(pid);
}

#define LONG_SWEEP "sweep", "--machine", "alphabeta:topo=ring,p=64", "--coll", "allreduce", \
    "--algos", "ring", "--bytes", "1MiB..1TiB:x2"

Test(outputs, sigint_during_sweep, .timeout = 120)
{
    int st = run_and_signal((const char *const[]){LONG_SWEEP, "--csv", "s.csv", NULL},
                            ".s.csv.tmp.", SIGINT);
    char *err_path = cli_path("sig.err"), *err = cli_read(err_path, NULL);
    cr_assert_eq(st, 130, "status %d; stderr:\n%s", st, err);
    ASSERT_HAS(err, "interrupted");
    ASSERT_HAS(err, "the rows done");
    cr_assert_eq(user_entries(), 0, "the CSV or its temporary was left");
    free(err);
    free(err_path);
}

Test(outputs, sigterm_during_sweep, .timeout = 120)
{
    int st = run_and_signal((const char *const[]){LONG_SWEEP, "--csv", "s.csv", NULL},
                            ".s.csv.tmp.", SIGTERM);
    cr_assert_eq(st, 143);
    cr_assert_eq(user_entries(), 0, "the CSV or its temporary was left");
}

Test(outputs, sigint_during_run_reports_progress, .timeout = 120)
{
    /* the JSON is opened after the run: wait on nothing, the run is long */
    int st = run_and_signal((const char *const[]){"run", "--machine", "alphabeta:topo=ring,p=64",
                                                  "--coll", "allreduce", "--algo", "ring",
                                                  "--bytes", "64GiB", "--force", "--json", "r.json",
                                                  NULL},
                            "never", SIGINT);
    char *err_path = cli_path("sig.err"), *err = cli_read(err_path, NULL);
    cr_assert_eq(st, 130, "status %d; stderr:\n%s", st, err);
    ASSERT_HAS(err, "interrupted at t=");
    ASSERT_HAS(err, "ops done");
    cr_assert_eq(user_entries(), 0, "r.json or a temporary was left");
    free(err);
    free(err_path);
}

Test(outputs, sigint_during_compare_and_replay, .timeout = 120)
{
    int st = run_and_signal(
        (const char *const[]){"compare", "--machines",
                              "alphabeta:topo=ring,p=64;loggp:p=64", "--coll", "allreduce",
                              "--algo", "ring", "--bytes", "64GiB", "--force", "--csv", "c.csv",
                              "--heatmaps", "h", NULL},
        "never", SIGINT);
    cr_assert_eq(st, 130);
    cr_assert_eq(user_entries(), 0, "c.csv, h/ or a temporary was left");
    char *ti = cli_write("big.ti", "");
    FILE *f = fopen(ti, "w");
    for (int i = 0; i < 64; i++)
        fprintf(f, "%d init\n", i);
    for (int i = 0; i < 64; i++)
        fprintf(f, "%d allreduce 68719476736 0\n", i);
    fclose(f);
    st = run_and_signal((const char *const[]){"replay", "big.ti", "--machine",
                                              "alphabeta:topo=ring,p=64", "--force", "--json",
                                              "r.json", NULL},
                        "never", SIGTERM);
    cr_assert_eq(st, 143);
    cr_assert_eq(user_entries(), 1, "r.json or a temporary was left");
    free(ti);
}

/* `collsim export` has no long phase: it builds the program and writes it
 * (an all-to-all of 128 ranks is 1.9 MB of GOAL in a tenth of a second),
 * so a signal sent after a delay may come after it ended.  A FIFO as the
 * output makes the timing certain: export writes to it directly (it is not
 * a regular file) and cannot finish before the test has read all but the
 * pipe's 64 KiB.  The test reads the first bytes (export is writing), sends
 * the signal, then drains the FIFO so that export can end: 130 or 143,
 * nothing else left in the folder (no temporary, no other file). */
static void export_signalled_mid_write(int sig, int want)
{
    char *fifo = cli_path("e.goal");
    cr_assert_eq(mkfifo(fifo, 0600), 0, "mkfifo: %s", strerror(errno));
    pid_t pid = spawn_in_folder((const char *const[]){"export", "--coll", "alltoall", "--ranks",
                                                      "128", "--bytes", "1KiB", "-o", "e.goal",
                                                      NULL});
    int fd = open(fifo, O_RDONLY); /* waits for export to open it */
    cr_assert_geq(fd, 0, "open: %s", strerror(errno));
    char buf[65536];
    ssize_t n, got = 0;
    while (got < 32 && (n = read(fd, buf + got, 32 - (size_t)got)) > 0)
        got += n;
    cr_assert_geq(got, 32, "export wrote nothing");
    cr_assert(!strncmp(buf, "// collsim export: alltoall", 27), "%.32s", buf);
    cr_assert_eq(kill(pid, sig), 0);
    int64_t total = got;
    while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        total += n > 0 ? n : 0;
    close(fd);
    int st = wait_status(pid);
    char *err_path = cli_path("sig.err"), *err = cli_read(err_path, NULL);
    cr_assert_eq(st, want, "status %d; stderr:\n%s", st, err);
    /* the signal came mid-write: more than a pipe's worth was still due */
    cr_assert_gt(total, 4 * 65536, "export wrote only %lld bytes", (long long)total);
    cr_assert_eq(user_entries(), 1, "a temporary or another file was left beside the FIFO");
    free(err);
    free(err_path);
    free(fifo);
}

Test(outputs, sigint_during_export, .timeout = 60) { export_signalled_mid_write(SIGINT, 130); }

Test(outputs, sigterm_during_export, .timeout = 60) { export_signalled_mid_write(SIGTERM, 143); }

/* D10 at the largest size CNS-1 accepts with --force: (2^31 - 1) NI
 * messages of 128 bytes less a byte, per message.  Accepted (--force lifts
 * the work limit, not the unit limit) and run: 31 such messages are about
 * 5 * 10^11 events, half a day at 10 M events/s, in 10 MB of memory; the
 * test stops it after 2 s with SIGINT. */
Test(outputs, cns1_largest_forced_size_runs_until_interrupted, .timeout = 120)
{
    int st = run_and_signal((const char *const[]){"run", "--machine", "cns1:rings=1", "--coll",
                                                  "broadcast", "--bytes", "274877906815",
                                                  "--force", "--json", "r.json", NULL},
                            "never", SIGINT);
    char *err_path = cli_path("sig.err"), *err = cli_read(err_path, NULL);
    cr_assert_eq(st, 130, "status %d; stderr:\n%s", st, err);
    ASSERT_HAS(err, "interrupted at t=");
    cr_assert_eq(user_entries(), 0, "r.json or a temporary was left");
    free(err);
    free(err_path);
}

/* ---- D2, D4: limits and out of memory under ulimit -v ---- */

/* `sh -c line` in the test folder, its output captured as run_cli's. */
static cli_out_t run_sh(const char *line)
{
    char cmd[PATH_MAX + 2048];
    cli_out_t o;
    snprintf(cmd, sizeof cmd, "cd '%s' && /bin/sh -c '%s' >.stdout 2>.stderr </dev/null",
             cli_tmpdir, line);
    int ws = system(cmd);
    o.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    char *p = cli_path(".stdout");
    o.out = cli_read(p, NULL);
    free(p);
    p = cli_path(".stderr");
    o.err = cli_read(p, NULL);
    free(p);
    return o;
}

/* `collsim cmd` under `ulimit -v kb`. */
static cli_out_t run_limited_to(int kb, const char *cmd)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("ulimit -v and AddressSanitizer do not mix");
#endif
    char line[1024];
    snprintf(line, sizeof line, "ulimit -v %d; exec \"$COLLSIM\" %s", kb, cmd);
    return run_sh(line);
}

/* 1 GB: enough for collsim's own arrays of the machines below, so that
 * loggp:p=67108863 still runs out inside igraph (the error handler's path);
 * the time each command takes is the time it needs to fill the limit (2 GB
 * took 17 s for the three of D4, 1 GB 10 s). */
static cli_out_t run_limited(const char *cmd) { return run_limited_to(1000000, cmd); }

Test(outputs, d2_ti_rank_count_refused_at_once, .timeout = 60)
{
    char *ti = cli_write("r.ti", "67108863 init\n");
    cli_out_t o = run_limited("replay r.ti --machine loggp:p=4");
    ASSERT_HAS(o.err, "67108864 ranks");
    expect(&o, 2, "only 4 nodes");
    free(ti);
}

Test(outputs, d4_out_of_memory_is_status_71, .timeout = 300)
{
    static const char *const cmds[] = {
        "topo --machine alphabeta:topo=torus,rows=8192,cols=8192",
        "topo --machine loggp:p=67108863",
        "run --machine alphabeta:topo=ring,p=67108864 --coll barrier",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        cli_out_t o = run_limited(cmds[i]);
        cr_assert_neq(o.status, 134, "%s aborted:\n%s", cmds[i], o.err);
        cr_assert(o.status == 71 || o.status == 2, "%s: status %d\n%s", cmds[i], o.status,
                  o.err);
        ASSERT_HAS(o.err, "out of memory");
        /* names what was too big: a byte count or the graph's size */
        cr_assert(strstr(o.err, "bytes for ") || strstr(o.err, "nodes"), "%s", o.err);
        if (strstr(cmds[i], "loggp")) /* through igraph's error handler */
            ASSERT_HAS(o.err, "(igraph ");
        cli_out_free(&o);
    }
}

/* D10 at the largest size the Cell accepts with --force: (2^31 - 1) DMA
 * commands of 16 KiB less a byte.  Its engine makes every command of a
 * message when the receiver's get starts (48 bytes each: about 100 GB for
 * this one), so the run ends out of memory: status 71 with the bytes it
 * asked for, never 134.  600 MB of address space is reached in about a
 * second. */
Test(outputs, cell_largest_forced_size_is_out_of_memory_71, .timeout = 120)
{
    cli_out_t o = run_limited_to(600000, "run --machine cell:chips=1 --coll broadcast --bytes "
                                         "35184372072447 --force");
    expect(&o, 71, "out of memory (");
}
