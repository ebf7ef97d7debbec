/*
 * test_complete.c - shell completion: `collsim complete` answers each kind
 * of prefix (commands, options, machine types, spec keys, collectives,
 * algorithms) from the registries, and completion/collsim.bash, run by a
 * real bash with COMP_WORDS set, and completion/_collsim, in a real
 * interactive zsh with compinit (tests/app/complete.zsh), offer the same
 * answers.  The expected
 * candidates are written out by hand from the documented names.
 */
#include "cli_util.h"

TestSuite(complete, .init = cli_setup, .fini = cli_teardown, .timeout = 60);

/* `collsim ARGS...` prints exactly `want` (the candidates, a line each). */
#define EXPECT_OUT(want, ...)                                                                  \
    do {                                                                                       \
        cli_out_t o_ = RUN(__VA_ARGS__);                                                       \
        cr_assert_str_eq(o_.out, want);                                                        \
        cli_out_free(&o_);                                                                     \
    } while (0)

/* Whether out holds line (a whole line). */
static int has_line(const char *out, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = out; (p = strstr(p, line)) != NULL; p++)
        if ((p == out || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
            return 1;
    return 0;
}

static int count_lines(const char *out)
{
    int n = 0;
    for (; *out; out++)
        n += *out == '\n';
    return n;
}

Test(complete, commands)
{
    cli_out_t o = RUN("complete", "r");
    cr_assert_eq(o.status, 0);
    cr_assert(has_line(o.out, "run") && has_line(o.out, "replay"), "%s", o.out);
    cr_assert_eq(count_lines(o.out), 2, "%s", o.out);
    cli_out_free(&o);
    o = RUN("complete", "comp"); /* not the hidden "complete" itself */
    cr_assert_str_eq(o.out, "compare\n");
    cli_out_free(&o);
}

Test(complete, options_from_the_command_table)
{
    EXPECT_OUT("--machine\n--graphml\n--dot\n--quiet\n--help\n", "complete", "topo", "--");
    EXPECT_OUT("--timeline\n--timeline-limit\n", "complete", "run", "--ti");
    EXPECT_OUT("--wide\n", "complete", "list", "--w");
    /* the benchmark loop's options and the heatmaps' (main's, merged with
     * completion): the same table answers */
    EXPECT_OUT("--iterations\n", "complete", "run", "--it");
    EXPECT_OUT("--scale\n--size\n--shard\n--shard-file\n", "complete", "compare", "--s");
    /* the options of par.h (--jobs, --shard, --mpi) are in the same table */
    EXPECT_OUT("--jobs\n", "complete", "sweep", "--jo");
    EXPECT_OUT("--mpi\n", "complete", "replay", "--mp");
    EXPECT_OUT("--markdown\n", "complete", "merge", "--m");
    EXPECT_OUT("--machine\n--machines\n", "complete", "sweep", "--machine");
}

/* bench-table is a command like the others: its name, its options. */
Test(complete, bench_table)
{
    cli_out_t o = RUN("complete", "bench");
    cr_assert(has_line(o.out, "bench") && has_line(o.out, "bench-table"), "%s", o.out);
    cr_assert_eq(count_lines(o.out), 2, "%s", o.out);
    cli_out_free(&o);
    EXPECT_OUT("--format\n--full\n--force\n", "complete", "bench-table", "--f");
    EXPECT_OUT("allreduce\n", "complete", "bench-table", "--coll", "allr");
    EXPECT_OUT("nccl\nosu\n", "complete", "bench-table", "--format", "");
    EXPECT_OUT("nccl-tests\nosu\n", "complete", "run", "--loop", "");
    EXPECT_OUT("barrier\n", "complete", "run", "--between", "b");
    /* the plots' y quantity, the same on sweep and compare */
    EXPECT_OUT("time\nalgbw\nbusbw\n", "complete", "sweep", "--y", "");
    EXPECT_OUT("busbw\n", "complete", "compare", "--y", "b");
}

Test(complete, machines_and_keys)
{
    EXPECT_OUT("cerebras:\ncns1:\ncell:\n", "complete", "run", "--machine", "c");
    EXPECT_OUT("loggp:p=4,tick=\n", "complete", "topo", "--machine", "loggp:p=4,t");
    EXPECT_OUT("alphabeta:topo=\n", "complete", "compare", "--machines", "alphabeta:to");
}

Test(complete, collectives_and_algorithms)
{
    cli_out_t o = RUN("complete", "run", "--coll", "all");
    cr_assert_str_eq(o.out, "allreduce\nallgather\nalltoall\n");
    cli_out_free(&o);
    /* the algorithms of the --coll given, each once */
    EXPECT_OUT("rabenseifner\n", "complete", "run", "--coll", "allreduce", "--algo", "ra");
    o = RUN("complete", "run", "--coll", "allgather", "--algo", "cns");
    cr_assert(has_line(o.out, "cns-ring"), "%s", o.out);
    cli_out_free(&o);
    EXPECT_OUT("machines\n", "complete", "list", "m");
    o = RUN("complete", "run", "--json", "x"); /* a file: nothing */
    cr_assert_str_eq(o.out, "");
    cr_assert_eq(o.status, 0);
    cli_out_free(&o);
}

/* The bash script itself, in a real bash, with the words typed so far. */
Test(complete, bash_script)
{
    const char *src = getenv("COLLSIM_SOURCE_ROOT"), *bin = getenv("COLLSIM");
    cr_assert(src && bin);
    if (access("/bin/bash", X_OK) != 0)
        cr_skip_test("no bash");
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "bash -c 'source \"%s/completion/collsim.bash\"; "
             "COMP_WORDS=(\"%s\" run --machine alphabeta:topo=ring,pa); COMP_CWORD=3; _collsim; "
             "printf \"%%s\\n\" \"${COMPREPLY[@]}\"; "
             "COMP_WORDS=(\"%s\" swe); COMP_CWORD=1; _collsim; "
             "printf \"%%s\\n\" \"${COMPREPLY[@]}\"' 2>&1",
             src, bin, bin);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    char out[4096];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    cr_assert_eq(pclose(p), 0, "%s", out);
    cr_assert_str_eq(out, "alphabeta:topo=ring,packet=\nsweep\n");
}

/* The zsh script in zsh's completion system: TAB after a prefix completes a
 * command, a spec key (no space after '=') and a collective. */
Test(complete, zsh_script)
{
    const char *src = getenv("COLLSIM_SOURCE_ROOT"), *bin = getenv("COLLSIM");
    cr_assert(src && bin);
    if (system("command -v zsh >/dev/null 2>&1") != 0)
        cr_skip_test("no zsh");
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "timeout 30 zsh -f \"%s/tests/app/complete.zsh\" \"%s\" \"%s\" 2>&1",
             src, src, bin);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    char out[4096];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
        cr_skip_test("zsh without zsh/zpty");
    cr_assert_eq(st, 0, "%s", out);
    const char *name = strrchr(bin, '/') ? strrchr(bin, '/') + 1 : bin;
    char want[1024];
    snprintf(want, sizeof want,
             "BUF<%s sweep>\nBUF<%s run --machine alphabeta:topo=ring,packet=>\n"
             "BUF<%s list algorithms --coll allreduce>\n",
             name, name, name);
    cr_assert_str_eq(out, want);
}
