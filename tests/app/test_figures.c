/*
 * test_figures.c - the figure options of `collsim run` (--heatmap, --metric,
 * --window, --frames, --timeline) and `collsim compare`, end to end: exit
 * statuses, messages, and the files they write (docs/figures.md); compare's
 * shared colour range is read back from the heatmaps' pixels against
 * utilisations computed from the alpha-beta rules.
 */
#include "cli_util.h"
#include "../coll/harness.h"
#include "api/figures.h"

#include <cairo.h>
#include <math.h>
#include <stdint.h>

#include "io/figure.h"
#include "io/heatmap.h"
#include "machines/machine.h"

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

/* The machine's count in its own words is said once and read the same in
 * the summary's machine line, topo's nodes line and compare's row (the
 * captions' words); on Groq a "node" is the 8 TSPs that nodes= counts. */
Test(figures, machine_words_agree)
{
    static const char *const cases[][3] = {
        {"loggp:p=8", "8 hosts + 1 switch", "loggp crossbar of "},
        {"groq:nodes=2", "16 TSPs in 2 nodes", "groq-dragonfly of "},
        {"cell:chips=2", "16 SPEs + 8 other ramps in 2 chips", "cell eib of "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *spec = cases[i][0], *count = cases[i][1];
        char want[160];
        cli_out_t o = RUN("run", "--machine", spec, "--coll", "allreduce", "--bytes", "1KiB",
                          "--no-timing");
        cr_assert_eq(o.status, 0, "%s: %s", spec, o.err);
        snprintf(want, sizeof want, " (%s, ", count);
        char *line = strstr(o.out, "machine   "), *eol = line ? strchr(line, '\n') : NULL;
        cr_assert(line && eol, "%s", o.out);
        *eol = '\0';
        ASSERT_HAS(line, want);
        cr_expect_null(strstr(line, "other,"), "no words of its own: %s", line);
        cli_out_free(&o);
        o = RUN("topo", "--machine", spec);
        cr_assert_eq(o.status, 0, "%s: %s", spec, o.err);
        snprintf(want, sizeof want, "(%s)\n", count);
        ASSERT_HAS(o.out, want);
        cli_out_free(&o);
        o = RUN("compare", "--coll", "allreduce", "--algo", "ring", "--bytes", "1KiB",
                "--machines", spec, "--no-timing");
        cr_assert_eq(o.status, 0, "%s: %s", spec, o.err);
        snprintf(want, sizeof want, "\n%s%s ", cases[i][2], count);
        ASSERT_HAS(o.out, want);
        cli_out_free(&o);
    }
    /* groq's keys in `list machines` count nodes of 8 TSPs, as the words
     * above; too many ranks are counted in TSPs */
    cli_out_t o = RUN("list", "machines");
    ASSERT_HAS(o.out, "groq:nodes=N (N <= 33 nodes of 8 TSPs)");
    ASSERT_HAS(o.out, "groq:racks=R (R <= 145 racks of 9 nodes)");
    cli_out_free(&o);
    o = RUN("run", "--machine", "groq:nodes=2", "--coll", "allreduce", "--bytes", "1KiB",
            "--ranks", "17");
    cr_expect_eq(o.status, 2, "%s", o.err);
    ASSERT_HAS(o.err, "has only 16 TSPs");
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
    /* each file written is named on standard error, once */
    ASSERT_HAS(o.err, "collsim: wrote hm/1-alphabeta.png (heatmap)\n");
    ASSERT_HAS(o.err, "collsim: wrote hm/2-alphabeta.png (heatmap)\n");
    ASSERT_HAS(o.err, "collsim: wrote c.csv (CSV)\n");
    ASSERT_HAS(o.err, "collsim: wrote c.md (Markdown)\n");
    ASSERT_HAS(o.err, "collsim: wrote c.svg (chart)\n");
    cr_expect_null(strstr(o.out, "wrote"), "no second 'wrote' line on stdout:\n%s", o.out);
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
    /* --no-timing: no column of 0.000 in the table or the Markdown; the
     * CSV keeps wall_seconds (written as 0) for a stable schema */
    ASSERT_HAS(md, "| util | events |\n");
    cr_expect_null(strstr(md, "wall"), "%s", md);
    cr_expect_null(strstr(o.out, "wall s"), "%s", o.out);
    ASSERT_HAS(o.out, "  events\n");
    free(md);
    free(p);
    cli_out_free(&o);
    /* with timing the column is there, in both */
    o = RUN("compare", "--coll", "allreduce", "--algo", "ring", "--bytes", "16KiB", "--machines",
            "alphabeta:topo=ring,p=8", "--markdown", "t.md");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "  wall s\n");
    p = cli_path("t.md");
    md = cli_read(p, NULL);
    ASSERT_HAS(md, "| events | wall s |\n");
    free(md);
    free(p);
    cli_out_free(&o);
    o = RUN("compare", "--coll", "allreduce", "--algo", "ring", "--bytes", "16KiB", "--machines",
            "alphabeta:topo=ring,p=8", "--csv", "-", "--no-timing");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, ",events,wall_seconds\n");
    size_t len = strlen(o.out), tail = strlen(",0.000000\n");
    cr_expect(len > tail && strcmp(o.out + len - tail, ",0.000000\n") == 0, "%s", o.out);
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

/* ---- like-for-like comparisons (issue 32) -------------------------------------------- */

/* The finish time in ticks of `collsim run` (its JSON's top-level key). */
static long long run_ticks(const char *spec, const char *bytes, const char *ranks)
{
    cli_out_t o = RUN("run", "--machine", spec, "--coll", "allreduce", "--algo", "ring", "--bytes",
                      bytes, "--ranks", ranks, "--json", "-", "--no-timing");
    cr_assert_eq(o.status, 0, "run %s %s: %s", spec, bytes, o.err);
    const char *p = strstr(o.out, "\n  \"finish_ticks\": ");
    cr_assert_not_null(p, "%s", o.out);
    long long t = strtoll(p + strlen("\n  \"finish_ticks\": "), NULL, 10);
    cli_out_free(&o);
    return t;
}

/* A comparison over a size range: one CSV row per (machine, size), machine
 * by machine, sizes rising; every row at the rank count of the smallest
 * machine (loggp:p=4 holds 4) and equal to the single `collsim run`. */
Test(figures, compare_sizes_equal_single_runs)
{
    const char *specs[3] = {"alphabeta:topo=ring,p=8", "loggp:p=4",
                            "alphabeta:topo=torus,rows=4,cols=4"};
    const char *sizes[3] = {"1024", "4096", "16384"};
    cli_out_t o = RUN("compare", "--coll", "allreduce", "--algo", "ring", "--bytes",
                      "1KiB..16KiB:x4", "--machines",
                      "alphabeta:topo=ring,p=8; loggp:p=4; alphabeta:topo=torus,rows=4,cols=4",
                      "--csv", "-", "--no-timing");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    int lines = 0;
    const char *line = strchr(o.out, '\n') + 1; /* after the header */
    for (int m = 0; m < 3; m++)
        for (int i = 0; i < 3; i++) {
            cr_assert(*line, "row %d missing:\n%s", 3 * m + i, o.out);
            char want[96];
            /* ...,coll,algo,bytes,ranks,ticks,... after the quoted spec */
            snprintf(want, sizeof want, ",allreduce,ring,%s,4,%lld,", sizes[i],
                     run_ticks(specs[m], sizes[i], "4"));
            const char *end = strchr(line, '\n');
            cr_expect(strstr(line, want) && strstr(line, want) < end, "row %d: want %s in %.*s",
                      3 * m + i, want, (int)(end - line), line);
            cr_expect(strstr(line, specs[m]) && strstr(line, specs[m]) < end, "row %d: %s",
                      3 * m + i, specs[m]);
            line = end + 1;
            lines++;
        }
    cr_expect_str_empty(line, "nothing after the 9 rows");
    cr_expect_eq(lines, 9);
    cli_out_free(&o);
    /* the table says the rank count and why */
    o = RUN("compare", "--coll", "allreduce", "--algo", "ring", "--bytes", "1KiB", "--machines",
            "alphabeta:topo=ring,p=8; loggp:p=4", "--no-timing");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "ranks: 4 on every machine, the most that every machine holds "
                      "(loggp crossbar of");
    cli_out_free(&o);
}

static char *pdf_text(const char *name);

/* --ranks all: each machine all its nodes, flagged on stderr, in the
 * summary, under each bar and in the title; --ranks beyond a machine fails
 * that machine only. */
Test(figures, compare_mixed_counts_are_flagged)
{
    cli_out_t o = RUN("compare", "--coll", "allreduce", "--algo", "ring", "--bytes", "1KiB",
                      "--machines", "alphabeta:topo=ring,p=8; loggp:p=4", "--ranks", "all",
                      "--plot", "mixed.pdf", "--no-timing");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.err, "different rank counts");
    ASSERT_HAS(o.out, "ranks: each machine all its nodes (--ranks all): 8 4");
    ASSERT_HAS(o.err, "collsim: wrote mixed.pdf (chart)");
    cr_expect(cli_file_starts("mixed.pdf", "%PDF-"));
    char *text = pdf_text("mixed.pdf"); /* NULL without pdftotext */
    if (text) {
        ASSERT_HAS(text, "on 2 machines with DIFFERENT rank counts");
        ASSERT_HAS(text, "loggp crossbar of 4 hosts + 1 switch (4 ranks)");
        free(text);
    }
    cli_out_free(&o);
    o = RUN("compare", "--coll", "allreduce", "--algo", "ring", "--bytes", "1KiB", "--machines",
            "alphabeta:topo=ring,p=8; loggp:p=4", "--ranks", "8", "--csv", "-", "--no-timing");
    cr_expect_eq(o.status, 2, "status %d: %s", o.status, o.err);
    ASSERT_HAS(o.err, "--ranks 8: machine 'loggp:p=4");
    ASSERT_HAS(o.out, ",allreduce,ring,1024,8,");
    cr_expect_null(strstr(o.out, "loggp:p=4,"), "the failed machine has no row:\n%s", o.out);
    cli_out_free(&o);
}

/* pdftotext (poppler-utils), an independent reader, or 0 when absent. */
static char *pdf_text(const char *name)
{
    if (system("command -v pdftotext >/dev/null 2>&1") != 0)
        return NULL;
    char *pdf = cli_path(name), *txt = cli_path("pdf.txt"), cmd[2 * PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "pdftotext -enc UTF-8 '%s' '%s'", pdf, txt);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    char *text = cli_read(txt, NULL);
    free(pdf);
    free(txt);
    return text;
}

/* The figures say what they show: seconds with SI prefixes on the axis and
 * four significant digits in the same units on the bars, the rank count
 * and the engines in the title; the files open in their format. */
Test(figures, compare_figures_read_back)
{
    cli_out_t o = RUN("compare", "--coll", "allreduce", "--algo", "ring", "--bytes", "1MiB",
                      "--machines", "alphabeta:topo=ring,p=8; loggp:p=8", "--plot", "bars.pdf",
                      "--log", "--no-timing");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    cli_out_free(&o);
    o = RUN("compare", "--coll", "allreduce", "--algo", "ring", "--bytes", "1KiB..1MiB:x32",
            "--machines", "alphabeta:topo=ring,p=8; loggp:p=8", "--plot", "lines.pdf",
            "--no-timing");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    cli_out_free(&o);
    const char *magic[3][2] = {{"l.png", "\x89PNG"}, {"l.svg", "<?xml"}, {"l.pdf", "%PDF-"}};
    for (int i = 0; i < 3; i++) {
        o = RUN("sweep", "--machines", "alphabeta:topo=ring,p=8;loggp:p=8", "--coll", "allreduce",
                "--algos", "ring", "--bytes", "1KiB,1MiB", "--plot", magic[i][0]);
        cr_assert_eq(o.status, 0, "stderr: %s", o.err);
        char want[64];
        snprintf(want, sizeof want, "collsim: wrote %s (plot)\n", magic[i][0]);
        cr_expect_str_empty(o.out);
        cr_expect_str_eq(o.err, want);
        cr_expect(cli_file_starts(magic[i][0], magic[i][1]), "%s", magic[i][0]);
        cli_out_free(&o);
    }
    char *bars = pdf_text("bars.pdf");
    if (!bars)
        cr_skip_test("pdftotext (poppler-utils) is not installed");
    /* 1 MiB ring allreduce on the alpha-beta ring of 8 (alpha 1 us, beta 1
     * ns/B): 2 (P - 1) (alpha + beta n / P) = 14 (1 us + 131.072 us) =
     * 1.849 ms; the axis has the decades 1 ms and 10 ms */
    ASSERT_HAS(bars, "1.849 ms");
    ASSERT_HAS(bars, "1 ms");
    ASSERT_HAS(bars, "10 ms");
    ASSERT_HAS(bars, "8 ranks on 2 machines (engines: packet, loggp)");
    cr_expect_null(strstr(bars, "us"), "no ASCII us:\n%s", bars);
    char *lines = pdf_text("lines.pdf");
    /* 1 KiB: 14 (1 us + 128 ns) = 15.79 us, up to 1.849 ms and loggp's
     * above: the decades 100 us, 1 ms and 10 ms */
    ASSERT_HAS(lines, "100 \xc2\xb5s");
    ASSERT_HAS(lines, "1 ms");
    ASSERT_HAS(lines, "10 ms");
    ASSERT_HAS(lines, "alphabeta ring of 8 nodes");
    ASSERT_HAS(lines, "allreduce/ring, 8 ranks on 2 machines");
    free(bars);
    free(lines);
}

/* sweep --machines: the same points on every machine, all at the rank count
 * every machine holds, rows machine by machine. */
Test(figures, sweep_overlays_machines)
{
    cli_out_t o = RUN("sweep", "--machines", "alphabeta:topo=ring,p=8;loggp:p=4", "--coll",
                      "allreduce", "--algos", "ring,rdb", "--bytes", "64,1KiB", "--csv", "-",
                      "--json", "s.json");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.err, "wrote s.json"); /* standard output carries the CSV */
    const char *p = strchr(o.out, '\n') + 1;
    int rows = 0;
    for (const char *q = p; *q; q = strchr(q, '\n') + 1, rows++)
        cr_expect(strstr(q, ",4,") && strstr(q, ",4,") < strchr(q, '\n'), "4 ranks: %s", q);
    cr_expect_eq(rows, 2 * 2 * 2, "machines x algorithms x sizes:\n%s", o.out);
    cr_expect_eq(strncmp(p, "\"alphabeta:topo=ring,p=8,", 25), 0, "%s", p);
    ASSERT_HAS(o.out, "\"loggp:p=4,");
    char *path = cli_path("s.json"), *doc = cli_read(path, NULL);
    ASSERT_HAS(doc, "{\"machines\": [\"alphabeta:topo=ring,p=8\", \"loggp:p=4\"], ");
    free(doc);
    free(path);
    cli_out_free(&o);
}

/* ---- compare's shared colour range over several sizes ------------------------------- */

/* The colour of heatmap `png` (default size: figure units are pixels) at
 * the lane of channel src -> dst of machine spec.  Where the lane lies is
 * known after a write (the caption lines move the map): a figure with as
 * many lines (title, subtitle, with range_line a range line) is drawn
 * first. */
static uint32_t lane_colour(const char *spec, int src, int dst, const char *png, int range_line)
{
    cs_machine_t *m = NULL;
    cs_heatmap_t *h = NULL;
    cs_heatmap_data_t d;
    cs_heatmap_style_t st = {0, 1, range_line ? "colour range" : NULL, {0, 0, 0}, 0};
    cs_error_t err = {0};
    double x, y;
    int c = -1;
    cr_assert_eq(cs_machine_new(spec, &m, &err), CS_OK, "%s", err.msg);
    for (int i = 0; i < cs_topo_channels(m->topo); i++)
        if (cs_topo_channel_src(m->topo, i) == src && cs_topo_channel_dst(m->topo, i) == dst)
            c = i;
    cr_assert_geq(c, 0, "no channel %d -> %d", src, dst);
    cr_assert_eq(cs_heatmap_new(m, &h, &err), CS_OK, "%s", err.msg);
    cs_heatmap_data_init(&d, cs_topo_channels(m->topo), CS_HEATMAP_UTIL, 0, 1000);
    char *probe = cli_path("probe.png");
    cr_assert_eq(cs_heatmap_write(h, &d, "t", "s", &st, probe, &err), CS_OK, "%s", err.msg);
    cs_heatmap_data_destroy(&d);
    free(probe);
    cr_assert(cs_heatmap_chan_point(h, c, &x, &y));
    char *path = cli_path(png);
    cairo_surface_t *s = cairo_image_surface_create_from_png(path);
    cr_assert_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS, "%s", path);
    const unsigned char *px = cairo_image_surface_get_data(s);
    uint32_t v = *(const uint32_t *)(px + (size_t)lround(y) * cairo_image_surface_get_stride(s) +
                                     4 * (size_t)lround(x)) & 0xffffff;
    cairo_surface_destroy(s);
    free(path);
    cs_heatmap_free(h);
    cs_machine_free(m);
    return v;
}

/* The largest difference of a channel of pixel px from viridis(t). */
static double viridis_dist(uint32_t px, double t)
{
    double rgb[3], d = 0;
    cs_fig_viridis(t, rgb);
    for (int k = 0; k < 3; k++)
        d = fmax(d, fabs(((px >> (16 - 8 * k)) & 0xff) / 255.0 - rgb[k]));
    return d;
}

/* compare --heatmaps over sizes: a heatmap per machine and size
 * (N-TYPE-BYTES.png), the colour range shared by the machines at each
 * size.  Ring allreduce on a ring of 4 (alpha-beta rules 4 and 5, beta 1
 * ns/B): each of the 2(P - 1) steps takes alpha + n/P ns and keeps every
 * clockwise channel busy n/P ns, so its utilisation is (n/4)/(alpha + n/4):
 * 256/1256 and 4096/5096 with alpha 1 us, 256/2256 and 4096/6096 with alpha
 * 2 us.  The slower machine's hottest lane then takes viridis(u2/u1) at each
 * size -- not 1 (a range per figure) nor u2/(the largest of all sizes) (one
 * range for the sweep). */
Test(figures, compare_shares_the_range_per_size)
{
    const char *fast = "alphabeta:topo=ring,p=4", *slow = "alphabeta:topo=ring,p=4,alpha=2us";
    cli_out_t o = RUN("compare", "--coll", "allreduce", "--algo", "ring", "--bytes", "1KiB,16KiB",
                      "--machines", "alphabeta:topo=ring,p=4; alphabeta:topo=ring,p=4,alpha=2us",
                      "--heatmaps", "hm", "--no-timing");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    const char *files[4] = {"hm/1-alphabeta-1024.png", "hm/1-alphabeta-16384.png",
                            "hm/2-alphabeta-1024.png", "hm/2-alphabeta-16384.png"};
    for (int i = 0; i < 4; i++) {
        ASSERT_HAS(o.err, files[i]); /* "collsim: wrote FILE (heatmap)" */
        cr_expect(cli_file_starts(files[i], "\x89PNG"), "%s", files[i]);
    }
    double n[2] = {256, 4096}, u_fast[2], u_slow[2];
    for (int i = 0; i < 2; i++) {
        u_fast[i] = n[i] / (1000 + n[i]);
        u_slow[i] = n[i] / (2000 + n[i]);
        uint32_t top = lane_colour(fast, 0, 1, files[i], 1);
        uint32_t px = lane_colour(slow, 0, 1, files[2 + i], 1);
        cr_expect_lt(viridis_dist(top, 1), 0.05, "size %d: the faster ring is the top: %06x", i,
                     top);
        cr_expect_lt(viridis_dist(px, u_slow[i] / u_fast[i]), 0.05,
                     "size %d: %.3f of the shared range: %06x", i, u_slow[i] / u_fast[i], px);
    }
    /* the controls are far from the expected colours: not a range per figure,
     * not one range for both sizes */
    cr_expect_gt(viridis_dist(lane_colour(slow, 0, 1, files[2], 1), 1), 0.2);
    cr_expect_gt(viridis_dist(lane_colour(slow, 0, 1, files[2], 1), u_slow[0] / u_fast[1]), 0.2);
    cli_out_free(&o);
    /* --scale each: each figure its own range, the hottest lane on top */
    o = RUN("compare", "--coll", "allreduce", "--algo", "ring", "--bytes", "1KiB,16KiB",
            "--machines", "alphabeta:topo=ring,p=4; alphabeta:topo=ring,p=4,alpha=2us",
            "--heatmaps", "each", "--scale", "each", "--no-timing");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    cr_expect_lt(viridis_dist(lane_colour(slow, 0, 1, "each/2-alphabeta-1024.png", 0), 1), 0.05);
    cli_out_free(&o);
}

/* Heatmap subtitles write times as the plots do: four significant digits
 * and "µs" (U+00B5), not the summary's six digits and ASCII "us".  The
 * expected text is computed here from the finish time with printf. */
Test(figures, heatmap_subtitle_times_as_the_plots)
{
    h_run_t r = h_run("alphabeta:topo=ring,p=4", "allreduce", "ring", 0, 1 << 18, 0, NULL,
                      CS_NET_PACKET, 0);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    int nchans = cs_topo_channels(r.m->topo);
    cs_heatmap_data_t d;
    cs_heatmap_data_init(&d, nchans, CS_HEATMAP_UTIL, 0, r.finish);
    d.active[0] = 1;
    d.val[0] = 0.5;
    char sub[512], want[64];
    cs_figures_heatmap_subtitle(r.m, r.res.net, &d, "whole run", sub, sizeof sub);
    double us = (double)r.finish * r.m->tick_seconds * 1e6;
    cr_assert(us >= 1 && us < 1000, "the case must end in microseconds (%g us)", us);
    int decimals = 3 - (int)floor(log10(us));
    snprintf(want, sizeof want, "\xe2\x80\x93 %.*f \xc2\xb5s", decimals, us);
    cr_expect(strstr(sub, want) != NULL, "subtitle \"%s\" lacks \"%s\"", sub, want);
    cr_expect(strstr(sub, " us") == NULL, "ASCII us in \"%s\"", sub);
    cs_heatmap_data_destroy(&d);
    h_done(&r);
}

/* ---- bandwidth as the plots' y axis (--y) ------------------------------------------ */

/* The y of point (series, x) in a plot's data (--plot FILE.csv:
 * "series,x,y"); NaN when absent. */
static double plot_data_y(const char *doc, const char *series, double x)
{
    for (const char *p = strchr(doc, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
        char name[64];
        double px, py;
        if (sscanf(p + 1, "%63[^,],%lf,%lf", name, &px, &py) == 3 && !strcmp(name, series) &&
            px == x)
            return py;
    }
    return NAN;
}

/* sweep --y busbw: every plotted point is nccl-tests' bus bandwidth of the
 * time in the sweep's own CSV, computed here by hand: allreduce S = bytes,
 * factor 2(P-1)/P; allgather S = bytes x P, factor (P-1)/P (over rank
 * counts, where P changes from point to point). */
Test(figures, sweep_plots_busbw_of_its_times)
{
    static const struct {
        const char *coll, *sizes, *ranks;
        int gather; /* S = bytes x P, factor (P-1)/P */
    } cases[] = {
        {"allreduce", "1KiB..1MiB:x8", "8", 0},
        {"allgather", "4KiB", "2,4,8", 1},
    };
    for (int c = 0; c < 2; c++) {
        cli_out_t o = RUN("sweep", "--machine", "alphabeta:topo=ring,p=8", "--coll",
                          cases[c].coll, "--algos", "ring,rdb", "--bytes", cases[c].sizes,
                          "--ranks", cases[c].ranks, "--csv", "-", "--y", "busbw", "--plot",
                          "bw.csv", "--quiet");
        cr_assert_eq(o.status, 0, "stderr: %s", o.err);
        char *path = cli_path("bw.csv"), *doc = cli_read(path, NULL);
        int rows = 0;
        for (const char *p = strchr(o.out, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
            char algo[32];
            long long bytes, ticks;
            int P;
            double s;
            const char *q = strstr(p + 1, "\",");
            cr_assert_not_null(q, "%s", p + 1);
            cr_assert_eq(sscanf(q + 2, "%*[^,],%31[^,],%lld,%d,%lld,%lf", algo, &bytes, &P,
                                &ticks, &s), 5, "%s", q);
            double S = cases[c].gather ? (double)bytes * P : (double)bytes;
            double factor = cases[c].gather ? (P - 1.0) / P : 2.0 * (P - 1) / P;
            double want = S / s * factor;
            /* over sizes the x is the size, over rank counts the count */
            double got = plot_data_y(doc, algo, cases[c].gather ? P : (double)bytes);
            cr_expect(fabs(got - want) <= 1e-8 * want, "%s %s %lld B, P=%d: plotted %.9g, "
                      "busbw of %.9g s = %.9g", cases[c].coll, algo, bytes, P, got, s, want);
            rows++;
        }
        cr_expect_eq(rows, c ? 2 * 3 : 2 * 4, "%s", o.out);
        free(doc);
        free(path);
        cli_out_free(&o);
    }
}

/* compare --y: the chart's bars are the rows' bandwidths; the table writes
 * times and bandwidths with four significant digits in the charts' units.
 * 1 MiB ring allreduce on the alpha-beta ring of 8 (alpha 1 us, beta 1
 * ns/B): 14 (1 us + 131.072 us) = 1.849008 ms; algbw = 2^20 B / t =
 * 567.1 MB/s, busbw x 14/8 = 992.4 MB/s. */
Test(figures, compare_bandwidth_chart_and_table)
{
    cli_out_t o = RUN("compare", "--coll", "allreduce", "--algo", "ring", "--bytes", "1MiB",
                      "--machines", "alphabeta:topo=ring,p=8", "--y", "busbw", "--plot",
                      "c.csv", "--no-timing", "--quiet");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    ASSERT_HAS(o.out, "  1.849 ms  567.1 MB/s  992.4 MB/s  ");
    cr_expect_null(strstr(o.out, " us"), "no ASCII us, no six digits:\n%s", o.out);
    cr_expect_null(strstr(o.out, "0.000"), "--no-timing: no wall column:\n%s", o.out);
    char *path = cli_path("c.csv"), *doc = cli_read(path, NULL);
    double v = NAN;
    const char *row = strchr(doc, '\n');
    cr_assert_not_null(row, "%s", doc);
    cr_assert_eq(sscanf(row + 1, "alphabeta ring of 8 nodes,%lf", &v), 1, "%s", doc);
    double want = 1048576 / 1.849008e-3 * 14 / 8;
    cr_expect(fabs(v - want) <= 1e-9 * want, "busbw bar %.9g, by hand %.9g", v, want);
    free(doc);
    free(path);
    cli_out_free(&o);
    /* --y algbw over sizes: one line per machine; the same figure in PDF
     * says its unit and the decimal prefixes */
    o = RUN("compare", "--coll", "allreduce", "--algo", "ring", "--bytes", "1KiB..1MiB:x32",
            "--machines", "alphabeta:topo=ring,p=8", "--y", "algbw", "--plot", "l.pdf",
            "--no-timing", "--quiet");
    cr_assert_eq(o.status, 0, "stderr: %s", o.err);
    cli_out_free(&o);
    char *lines = pdf_text("l.pdf");
    if (!lines)
        cr_skip_test("pdftotext (poppler-utils) is not installed");
    ASSERT_HAS(lines, "MB/s");
    ASSERT_HAS(lines, "algorithm bandwidth (algbw; 1 GB/s = 10");
    free(lines);
}
