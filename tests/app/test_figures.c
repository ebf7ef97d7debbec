/*
 * test_figures.c - the figure options of `collsim run` (--heatmap, --metric,
 * --window, --frames, --timeline) and `collsim compare`, end to end: exit
 * statuses, messages, and the files they write (docs/figures.md).
 */
#include "cli_util.h"

TestSuite(figures, .init = cli_setup, .fini = cli_teardown, .timeout = 300);

/* Messages 1 -> 6 and 4 -> 7 of 100000 bytes on a line of 8: 201 us. */
static const char *two_messages =
    "num_ranks 8\n"
    "rank 0 {\n}\n"
    "rank 1 {\ns: send 100000b to 6 tag 0\n}\n"
    "rank 2 {\n}\nrank 3 {\n}\n"
    "rank 4 {\ns: send 100000b to 7 tag 0\n}\n"
    "rank 5 {\n}\n"
    "rank 6 {\nr: recv 100000b from 1 tag 0\n}\n"
    "rank 7 {\nr: recv 100000b from 4 tag 0\n}\n";

#define LINE8 "--machine", "alphabeta:topo=line,p=8", "--mode", "fluid", "--program", "two.goal"

Test(figures, run_writes_a_heatmap)
{
    free(cli_write("two.goal", two_messages));
    cli_out_t o = RUN("run", LINE8, "--heatmap", "k.png", "--metric", "k");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "heatmap   k.png (k, grid layout)");
    cr_expect_eq(o.err[0], '\0', "nothing on stderr (no terminal): %s", o.err);
    cr_expect(cli_file_starts("k.png", "\x89PNG"));
    cli_out_free(&o);
    o = RUN("run", LINE8, "--heatmap", "u.svg", "--window", "100us:");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "(util, grid layout, window)");
    cr_expect(cli_file_starts("u.svg", "<?xml"));
    cli_out_free(&o);
    o = RUN("run", LINE8, "--heatmap", "b.pdf", "--metric", "bytes", "--json", "-",
            "--no-timing");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    cr_expect_null(strstr(o.out, "heatmap"), "JSON on stdout stays JSON");
    cr_expect(cli_file_starts("b.pdf", "%PDF-"));
    cli_out_free(&o);
}

Test(figures, run_option_errors)
{
    free(cli_write("two.goal", two_messages));
    struct {
        const char *opt, *val, *opt2, *val2, *msg;
    } cases[] = {
        {"--heatmap", "k.gif", NULL, NULL, "--heatmap: k.gif: unknown heatmap format '.gif'"},
        {"--metric", "k", NULL, NULL, "--metric needs --heatmap FILE or --frames DIR"},
        {"--heatmap", "k.png", "--metric", "heat", "unknown metric 'heat'; valid: util, bytes"},
        {"--heatmap", "k.png", "--window", "2us:1us", "the end must come after the start"},
        {"--heatmap", "k.png", "--window", "2us", "expected T0:T1"},
        {"--heatmap", "k.png", "--window", "1.5:", "a time needs a unit"},
        {"--heatmap", "k.png", "--window", "1ms:2ms", "before the window starts"},
        {"--frame-step", "1us", NULL, NULL, "--frame-step needs --frames DIR"},
        {"--timeline-limit", "1000", NULL, NULL, "--timeline-limit needs --timeline FILE"},
        {"--timeline", "t.json", "--timeline-limit", "10", "at least 100 events"},
        {"--heatmap", "nodir/k.png", NULL, NULL, "--heatmap nodir/k.png: cannot create it"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_out_t o = cases[i].opt2 ? RUN("run", LINE8, cases[i].opt, cases[i].val,
                                          cases[i].opt2, cases[i].val2)
                                    : RUN("run", LINE8, cases[i].opt, cases[i].val);
        cr_expect_eq(o.status, 2, "%s %s: status %d", cases[i].opt, cases[i].val, o.status);
        cr_expect_not_null(strstr(o.err, cases[i].msg), "%s %s: expected \"%s\" in:\n%s",
                           cases[i].opt, cases[i].val, cases[i].msg, o.err);
        cli_out_free(&o);
    }
}

Test(figures, frames_cover_the_run)
{
    free(cli_write("two.goal", two_messages));
    cli_out_t o = RUN("run", LINE8, "--frames", "fr", "--frame-step", "50us");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "frames    fr/frame-0001.png .. frame-0005.png");
    for (int i = 1; i <= 5; i++) {
        char name[32];
        snprintf(name, sizeof name, "fr/frame-%04d.png", i);
        cr_expect(cli_file_starts(name, "\x89PNG"), "%s missing", name);
    }
    cr_expect(!cli_file_starts("fr/frame-0006.png", "\x89PNG"));
    cli_out_free(&o);
    /* default: about 20 frames */
    o = RUN("run", LINE8, "--frames", "fr20", "--metric", "k");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    cr_expect(cli_file_starts("fr20/frame-0020.png", "\x89PNG") ||
                  cli_file_starts("fr20/frame-0019.png", "\x89PNG"),
              "%s", o.out);
    cli_out_free(&o);
}

Test(figures, run_writes_a_timeline)
{
    free(cli_write("two.goal", two_messages));
    cli_out_t o = RUN("run", LINE8, "--timeline", "t.json");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "timeline  t.json (");
    ASSERT_HAS(o.out, "4 of 4 ops, 2 messages");
    char *path = cli_path("t.json");
    char *doc = cli_read(path, NULL);
    ASSERT_HAS(doc, "\"traceEvents\":[");
    ASSERT_HAS(doc, "\"dur_ticks\":201000000");
    free(doc);
    free(path);
    cli_out_free(&o);
    o = RUN("run", "--machine", "alphabeta:topo=ring,p=32", "--coll", "allreduce", "--algo",
            "ring", "--bytes", "64KiB", "--timeline", "big.json", "--timeline-limit", "500");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "sampled: every");
    cli_out_free(&o);
}

/* ---- compare ---------------------------------------------------------------------- */

static int registered(const char *type)
{
    cli_out_t o = RUN("list", "machines");
    char line[64];
    snprintf(line, sizeof line, "\n%s\n", type);
    int yes = strstr(o.out, line) != NULL || !strncmp(o.out, line + 1, strlen(line + 1));
    cli_out_free(&o);
    return yes;
}

Test(figures, compare_default_machines)
{
    cli_out_t o = RUN("compare", "--coll", "allreduce", "--algo", "ring", "--bytes", "64KiB",
                      "--no-timing");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "machine");
    ASSERT_HAS(o.out, "busiest link");
    ASSERT_HAS(o.out, "alphabeta torus 8\xc3\x97" "8");
    ASSERT_HAS(o.out, "cerebras mesh 8\xc3\x97" "8");
    ASSERT_HAS(o.out, "cns1 cylinder 2\xc3\x97" "32");
    /* every registered type that has a default (its row starts with the type) */
    const char *more[] = {"groq", "cell", "loggp"};
    for (int i = 0; i < 3; i++)
        if (registered(more[i])) {
            char row[32];
            snprintf(row, sizeof row, "\n%s", more[i]);
            ASSERT_HAS(o.out, row);
        }
    cli_out_free(&o);
}

Test(figures, compare_outputs)
{
    cli_out_t o = RUN("compare", "--coll", "allreduce", "--algo", "ring", "--bytes", "16KiB",
                      "--machines", "alphabeta:topo=ring,p=8; alphabeta:topo=line,p=8",
                      "--csv", "c.csv", "--markdown", "c.md", "--plot", "c.svg", "--heatmaps",
                      "hm", "--no-timing", "--validate");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "alphabeta ring of 8 nodes");
    ASSERT_HAS(o.out, "hm/1-alphabeta.png");
    ASSERT_HAS(o.out, "hm/2-alphabeta.png");
    cr_expect(cli_file_starts("hm/1-alphabeta.png", "\x89PNG"));
    cr_expect(cli_file_starts("c.svg", "<?xml"));
    char *p = cli_path("c.csv"), *csv = cli_read(p, NULL);
    ASSERT_HAS(csv, "machine,spec,coll,algo,bytes,ranks,ticks,seconds,");
    ASSERT_HAS(csv, "alphabeta ring of 8 nodes,\"alphabeta:topo=ring,p=8,");
    free(csv);
    free(p);
    p = cli_path("c.md");
    char *md = cli_read(p, NULL);
    ASSERT_HAS(md, "| machine | ranks | ticks | time |");
    ASSERT_HAS(md, "| alphabeta line of 8 nodes | 8 |");
    free(md);
    free(p);
    cli_out_free(&o);
    /* --csv - : the CSV instead of the table */
    o = RUN("compare", "--coll", "barrier", "--machines", "alphabeta:topo=ring,p=4", "--csv",
            "-", "--no-timing");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    cr_expect_eq(strncmp(o.out, "machine,spec,", 13), 0, "%s", o.out);
    cli_out_free(&o);
}

Test(figures, compare_goes_on_after_a_failure)
{
    cli_out_t o = RUN("compare", "--coll", "allreduce", "--algo", "ring", "--bytes", "1KiB",
                      "--machines", "alphabeta:topo=ring,p=4;nosuch:x=1;alphabeta:topo=line,p=4");
    cr_expect_eq(o.status, 2, "status %d", o.status);
    /* the spec once: the machine's error quotes it (no "SPEC: ... spec \"SPEC\"") */
    ASSERT_HAS(o.err, "unknown machine \"nosuch\" in spec \"nosuch:x=1\"");
    ASSERT_HAS(o.out, "alphabeta ring of 4 nodes");
    ASSERT_HAS(o.out, "alphabeta line of 4 nodes");
    ASSERT_HAS(o.out, "failed: unknown machine");
    cli_out_free(&o);
    o = RUN("compare", "--coll", "nope", "--bytes", "1KiB");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "nope");
    cli_out_free(&o);
    o = RUN("compare", "--coll", "allreduce", "--bytes", "1KiB", "--plot", "x.gif");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "unknown plot format '.gif'");
    cli_out_free(&o);
    o = RUN("compare", "--bytes", "1KiB");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "missing --coll NAME");
    cli_out_free(&o);
}

/* ---- sweep over rank counts ----------------------------------------------------------- */

Test(figures, sweep_over_ranks)
{
    cli_out_t o = RUN("sweep", "--machine", "alphabeta:topo=ring,p=8", "--coll", "allreduce",
                      "--algos", "ring,rdb", "--bytes", "1KiB", "--ranks", "2,4..8", "--csv", "-",
                      "--plot", "r.png");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    for (int P = 2; P <= 8; P *= 2) {
        char row[64];
        snprintf(row, sizeof row, ",allreduce,rdb,1024,%d,", P);
        ASSERT_HAS(o.out, row);
    }
    cr_expect(cli_file_starts("r.png", "\x89PNG"));
    cli_out_free(&o);
    o = RUN("sweep", "--machine", "alphabeta:topo=ring,p=8", "--coll", "allreduce", "--algos",
            "ring", "--bytes", "1KiB", "--ranks", "0");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "--ranks '0': need at least 1 rank");
    cli_out_free(&o);
    o = RUN("sweep", "--machine", "alphabeta:topo=ring,p=8", "--coll", "allreduce", "--algos",
            "ring", "--bytes", "1KiB", "--ranks", "4,16");
    cr_expect_eq(o.status, 2);
    ASSERT_HAS(o.err, "--ranks 16: machine");
    cli_out_free(&o);
}
