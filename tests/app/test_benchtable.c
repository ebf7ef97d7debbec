/*
 * test_benchtable.c - nccl-tests' bandwidths and the benchmark tables at
 * the command line (docs/bandwidth.md):
 *  - `collsim bench-table` read back as nccl-tests' and OSU's own result
 *    parsers read those tools: lines starting with '#' skipped, the rest
 *    split into the tools' fixed columns; the header's column names where
 *    the tools put them; times checked against the alpha-beta closed forms
 *    of the ring algorithms (the lecture's), bandwidths against S / t and
 *    nccl-tests' factors worked out here;
 *  - a sweep's CSV and a run's JSON carry algbw and busbw consistent with
 *    their own size and time;
 *  - #wrong and Validation from --validate on an algorithm that is wrong
 *    (tests/data/msccl/ring_allreduce_4_wrong.xml), and the refusals.
 */
#include "cli_util.h"

#include <math.h>

TestSuite(benchtable, .init = cli_setup, .fini = cli_teardown);

#define RING8 "alphabeta:topo=ring,p=8"
/* alphabeta's defaults (docs/machines.md): alpha = 1 us, beta = 1 ns/byte */
#define ALPHA 1e-6
#define BETA 1e-9

/* The data lines of a table: every line not starting with '#' and not
 * empty, as nccl-tests' and OSU's parsers take them. */
static int data_lines(char *text, char **lines, int max)
{
    int n = 0;
    for (char *s = strtok(text, "\n"); s; s = strtok(NULL, "\n"))
        if (s[0] != '#' && s[0] && n < max)
            lines[n++] = s;
    return n;
}

/* The text of columns [from, to) of a line (fixed-width fields). */
static void field(const char *line, int from, int to, char *out, size_t len)
{
    int n = (int)strlen(line);
    snprintf(out, len, "%.*s", from < n ? (to < n ? to : n) - from : 0, from < n ? line + from : "");
}

/* nccl-tests' row: "%12li  %12li  %8s  %6s  %6s" then twice
 * "  %7s  %6s  %6s  %6g": the fields end at these columns. */
static const int nccl_end[13] = {12, 26, 36, 44, 52, 61, 69, 77, 85, 94, 102, 110, 118};

typedef struct nccl_row {
    long long size, count;
    char type[16], redop[16];
    int root;
    double time[2], algbw[2], busbw[2];
    char wrong[2][16];
} nccl_row_t;

static void nccl_parse(const char *line, nccl_row_t *r)
{
    char f[13][32];
    int end[13];
    /* without validation nccl-tests prints "    N/A" (7 columns) where
     * "  %6g" takes 8: each placement's row is one column shorter */
    int na = (int)strlen(line) == nccl_end[12] - 2;
    cr_assert(na || (int)strlen(line) == nccl_end[12], "a row is 118 (or 116) columns: '%s'",
              line);
    for (int k = 0; k < 13; k++)
        end[k] = nccl_end[k] - (na ? (k >= 8) + (k >= 12) : 0);
    for (int k = 0; k < 13; k++) {
        field(line, k ? end[k - 1] : 0, end[k], f[k], sizeof f[k]);
        /* the fields are right-aligned and separated by blanks */
        if (k)
            cr_assert(f[k][0] == ' ' && f[k][1] == ' ', "field %d of '%s' runs into the last", k,
                      line);
        cr_assert_neq(f[k][strlen(f[k]) - 1], ' ', "field %d of '%s' is not right-aligned", k,
                      line);
    }
    r->size = atoll(f[0]);
    r->count = atoll(f[1]);
    sscanf(f[2], "%15s", r->type);
    sscanf(f[3], "%15s", r->redop);
    r->root = atoi(f[4]);
    for (int p = 0; p < 2; p++) {
        r->time[p] = atof(f[5 + 4 * p]);
        r->algbw[p] = atof(f[6 + 4 * p]);
        r->busbw[p] = atof(f[7 + 4 * p]);
        sscanf(f[8 + 4 * p], "%15s", r->wrong[p]);
    }
}

/* The header's column names are where nccl-tests puts them: each ends at
 * the column its field ends at (the '#' line is 2 characters in). */
static void nccl_check_header(const char *out)
{
    const char *names[13] = {"size",  "count", "type",   "redop", "root",  "time",  "algbw",
                             "busbw", "#wrong", "time",  "algbw", "busbw", "#wrong"};
    const char *h = strstr(out, "\n#       size ");
    cr_assert_not_null(h, "no column header in:\n%s", out);
    h++;
    for (int k = 0; k < 13; k++) {
        int end = nccl_end[k], len = (int)strlen(names[k]);
        cr_assert_eq(strncmp(h + end - len, names[k], (size_t)len), 0,
                     "column %s does not end at %d:\n%.130s", names[k], end, h);
    }
    ASSERT_HAS(out, "out-of-place");
    ASSERT_HAS(out, "in-place");
    ASSERT_HAS(out, "(elements)");
}

/* allreduce/ring on an alpha-beta ring: 2(P-1) steps of alpha + beta n/P
 * (the lecture); algbw = n / t, busbw = algbw x 2(P-1)/P. */
Test(benchtable, nccl_table_allreduce)
{
    cli_out_t o = RUN("bench-table", "--machine", RING8, "--coll", "allreduce", "--algo", "ring",
                      "--bytes", "1KiB..1MiB:x32", "--validate");
    cr_assert_eq(o.status, 0, "stderr:\n%s", o.err);
    nccl_check_header(o.out);
    ASSERT_HAS(o.out, "# Collective test starting: all_reduce_perf\n");
    ASSERT_HAS(o.out, "# Out of bounds values : 0 OK\n");
    char *lines[16];
    int n = data_lines(o.out, lines, 16);
    cr_assert_eq(n, 3, "3 sizes: 1 KiB, 32 KiB, 1 MiB");
    double sum_busbw = 0;
    for (int i = 0; i < n; i++) {
        nccl_row_t r;
        nccl_parse(lines[i], &r);
        double bytes = 1024.0 * pow(32, i), P = 8;
        double t = 2 * (P - 1) * (ALPHA + BETA * bytes / P);
        double algbw = bytes / t / 1e9, busbw = algbw * 2 * (P - 1) / P;
        cr_assert_eq(r.size, (long long)bytes);
        cr_assert_eq(r.count, (long long)bytes / 4, "float elements");
        cr_assert_str_eq(r.type, "float");
        cr_assert_str_eq(r.redop, "sum");
        cr_assert_eq(r.root, -1);
        for (int p = 0; p < 2; p++) { /* in-place repeats out-of-place */
            cr_assert_float_eq(r.time[p], t * 1e6, 0.006, "time %g us, formula %g", r.time[p],
                               t * 1e6);
            cr_assert_float_eq(r.algbw[p], algbw, 0.006);
            cr_assert_float_eq(r.busbw[p], busbw, 0.006);
            cr_assert_str_eq(r.wrong[p], "0");
        }
        sum_busbw += busbw;
    }
    cli_out_free(&o);
    /* the footer's average: nccl-tests averages the busbw of every row */
    o = RUN("bench-table", "--machine", RING8, "--coll", "allreduce", "--algo", "ring",
            "--bytes", "1KiB..1MiB:x32");
    const char *foot = strstr(o.out, "# Avg bus bandwidth    : ");
    cr_assert_not_null(foot);
    cr_assert_float_eq(atof(foot + 25), sum_busbw / 3, 1e-4);
    /* without --validate the #wrong column says N/A, as with nccl-tests -c 0 */
    n = data_lines(o.out, lines, 16);
    nccl_row_t r;
    nccl_parse(lines[0], &r);
    cr_assert_str_eq(r.wrong[0], "N/A");
    cli_out_free(&o);
}

/* allgather: size is the per-rank block x P, count the per-rank elements,
 * busbw's factor (P-1)/P; the ring takes P-1 steps of alpha + beta m. */
Test(benchtable, nccl_table_allgather)
{
    cli_out_t o = RUN("bench-table", "--machine", RING8, "--coll", "allgather", "--algo", "ring",
                      "--bytes", "64KiB");
    cr_assert_eq(o.status, 0, "stderr:\n%s", o.err);
    ASSERT_HAS(o.out, "all_gather_perf");
    char *lines[4];
    cr_assert_eq(data_lines(o.out, lines, 4), 1);
    nccl_row_t r;
    nccl_parse(lines[0], &r);
    double m = 65536, P = 8, t = (P - 1) * (ALPHA + BETA * m);
    cr_assert_eq(r.size, 8 * 65536);
    cr_assert_eq(r.count, 65536 / 4);
    cr_assert_str_eq(r.redop, "none");
    cr_assert_float_eq(r.time[0], t * 1e6, 0.006);
    cr_assert_float_eq(r.algbw[0], m * P / t / 1e9, 0.006);
    cr_assert_float_eq(r.busbw[0], m * P / t / 1e9 * (P - 1) / P, 0.006);
    cli_out_free(&o);
}

/* OSU's columns: "%-10d" then fields of 18 ("%18.2f"), 12 for the
 * iterations, 18 for Validation; Avg, Min and Max over the ranks. */
Test(benchtable, osu_table)
{
    cli_out_t o = RUN("bench-table", "--machine", RING8, "--coll", "allgather", "--algo", "ring",
                      "--bytes", "16,4KiB", "--format", "osu", "--full", "--validate",
                      "--single");
    cr_assert_eq(o.status, 0, "stderr:\n%s", o.err);
    ASSERT_HAS(o.out, "\n# OSU MPI Allgather Latency Test\n");
    ASSERT_HAS(o.out, "\n# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)"
                      "  Iterations        Validation\n");
    char *lines[8];
    cr_assert_eq(data_lines(o.out, lines, 8), 2);
    for (int i = 0; i < 2; i++) {
        char f[6][32];
        const int end[6] = {10, 28, 46, 64, 76, 94};
        cr_assert_eq((int)strlen(lines[i]), 94, "'%s'", lines[i]);
        for (int k = 0; k < 6; k++)
            field(lines[i], k ? end[k - 1] : 0, end[k], f[k], sizeof f[k]);
        double m = i ? 4096 : 16, t = 7 * (ALPHA + BETA * m) * 1e6;
        cr_assert_eq(atoll(f[0]), (long long)m, "OSU's size of allgather is the per-rank one");
        cr_assert(f[0][0] != ' ', "the size is left-aligned");
        for (int k = 1; k <= 3; k++) /* a ring allgather ends on every rank together */
            cr_assert_float_eq(atof(f[k]), t, 0.006, "column %d: %s, formula %g", k, f[k], t);
        cr_assert_eq(atoi(f[4]), 1, "one call (--single)");
        cr_assert_str_eq(f[5], "              Pass");
    }
    cli_out_free(&o);
    /* reduce-scatter: OSU's size is the whole send vector (block x P) */
    o = RUN("bench-table", "--machine", RING8, "--coll", "reduce-scatter", "--bytes", "128",
            "--format", "osu");
    cr_assert_eq(o.status, 0, "stderr:\n%s", o.err);
    ASSERT_HAS(o.out, "# OSU MPI Reduce_scatter Latency Test\n");
    ASSERT_HAS(o.out, "\n# Size       Avg Latency(us)\n1024      ");
    cli_out_free(&o);
}

/* The tools' loops by default: nccl-tests' 5 + 20 iterations, whose
 * average is the run's loop average (`collsim run --iterations default`),
 * and on a pipelined chain broadcast below the one call's time, since
 * iterations overlap; OSU's 1,000 iterations up to 8 KiB, 100 above. */
Test(benchtable, loops)
{
    cli_out_t o = RUN("bench-table", "--machine", RING8, "--coll", "broadcast", "--algo", "chain",
                      "--bytes", "64KiB");
    cr_assert_eq(o.status, 0, "stderr:\n%s", o.err);
    ASSERT_HAS(o.out, " warmup iters: 5 iters: 20 agg iters: 1 ");
    char *lines[4];
    cr_assert_eq(data_lines(o.out, lines, 4), 1);
    nccl_row_t loop, one;
    nccl_parse(lines[0], &loop);
    cli_out_t j = RUN("run", "--machine", RING8, "--coll", "broadcast", "--algo", "chain",
                      "--bytes", "64KiB", "--iterations", "default", "--json", "-",
                      "--no-timing");
    cr_assert_eq(j.status, 0, "stderr:\n%s", j.err);
    const char *avg = strstr(j.out, "\"avg_seconds\": ");
    cr_assert_not_null(avg);
    cr_assert_float_eq(loop.time[0], 1e6 * strtod(avg + 15, NULL), 0.006);
    cli_out_free(&j);
    cli_out_free(&o);
    o = RUN("bench-table", "--machine", RING8, "--coll", "broadcast", "--algo", "chain",
            "--bytes", "64KiB", "--single");
    cr_assert_eq(o.status, 0, "stderr:\n%s", o.err);
    ASSERT_HAS(o.out, " warmup iters: 0 iters: 1 agg iters: 1 ");
    cr_assert_eq(data_lines(o.out, lines, 4), 1);
    nccl_parse(lines[0], &one);
    cr_assert_lt(loop.time[0], one.time[0] - 1, "the loop overlaps: %g us, one call %g us",
                 loop.time[0], one.time[0]);
    cr_assert_gt(loop.busbw[0], one.busbw[0]);
    cli_out_free(&o);
    o = RUN("bench-table", "--machine", RING8, "--coll", "allreduce", "--bytes", "8KiB,16KiB",
            "--format", "osu", "--full");
    cr_assert_eq(o.status, 0, "stderr:\n%s", o.err);
    cr_assert_eq(data_lines(o.out, lines, 4), 2);
    cr_assert_eq(atoi(lines[0] + 64), 1000, "'%s'", lines[0]);
    cr_assert_eq(atoi(lines[1] + 64), 100, "'%s'", lines[1]);
    cli_out_free(&o);
    o = RUN("bench-table", "--machine", RING8, "--coll", "allreduce", "--bytes", "8",
            "--single", "--iterations", "3");
    cr_assert_eq(o.status, 2);
    ASSERT_HAS(o.err, "--single runs one call");
    cli_out_free(&o);
}

/* An algorithm that is wrong: rows, not an error, then exit 4. */
Test(benchtable, wrong_rows)
{
    char algo[PATH_MAX + 16];
    const char *root = getenv("COLLSIM_SOURCE_ROOT");
    cr_assert_not_null(root);
    snprintf(algo, sizeof algo, "msccl:%s/tests/data/msccl/ring_allreduce_4_wrong.xml", root);
    cli_out_t o = RUN("bench-table", "--machine", "alphabeta:topo=ring,p=4", "--coll",
                      "allreduce", "--algo", algo, "--bytes", "64,1024", "--validate");
    cr_assert_eq(o.status, 4, "stderr:\n%s", o.err);
    ASSERT_HAS(o.out, "# Out of bounds values : 4 FAILED\n"); /* 2 sizes x 2 placements */
    char *lines[4];
    cr_assert_eq(data_lines(o.out, lines, 4), 2);
    for (int i = 0; i < 2; i++) {
        nccl_row_t r;
        nccl_parse(lines[i], &r);
        cr_assert_gt(atoll(r.wrong[0]), 0, "#wrong of '%s'", lines[i]);
        cr_assert_leq(atoll(r.wrong[0]), 4 * r.count, "at most every element of 4 ranks");
    }
    ASSERT_HAS(o.err, "gave wrong data");
    cli_out_free(&o);
    o = RUN("bench-table", "--machine", "alphabeta:topo=ring,p=4", "--coll", "allreduce",
            "--algo", algo, "--bytes", "64", "--validate", "--format", "osu");
    cr_assert_eq(o.status, 4);
    ASSERT_HAS(o.out, "              Fail\n");
    cli_out_free(&o);
}

Test(benchtable, refusals)
{
    struct {
        const char *args[12];
        const char *msg;
    } cases[] = {
        {{"bench-table", "--machine", RING8, "--coll", "barrier"}, "nccl-tests has no barrier"},
        {{"bench-table", "--machine", RING8, "--coll", "allreduce", "--bytes", "6"},
         "--bytes 6 is not a whole number of float elements"},
        {{"bench-table", "--machine", RING8, "--coll", "allreduce", "--bytes", "8", "--full"},
         "--full is OSU's -f; it needs --format osu"},
        {{"bench-table", "--machine", RING8, "--coll", "allreduce", "--bytes", "8", "--format",
          "imb"},
         "unknown table format 'imb'; valid: nccl, osu"},
        {{"bench-table", "--machine", RING8, "--coll", "allreduce"}, "missing --bytes"},
        {{"bench-table", "--machine", RING8, "--coll", "barrier", "--format", "osu", "--bytes",
          "0,1"},
         "osu_barrier prints one row"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_out_t o = run_cli(cases[i].args);
        cr_assert_eq(o.status, 2, "case %zu: status %d, stderr:\n%s", i, o.status, o.err);
        ASSERT_HAS(o.err, cases[i].msg);
        cr_assert_eq(o.out[0], '\0', "case %zu printed a table before refusing", i);
        cli_out_free(&o);
    }
}

/* The CSV of a sweep: algbw = S / seconds and busbw = algbw x factor on
 * every row, S from the row's own bytes and ranks. */
Test(benchtable, sweep_csv)
{
    const char *colls[] = {"allreduce", "allgather", "broadcast"};
    for (int c = 0; c < 3; c++) {
        cli_out_t o = RUN("sweep", "--machine", RING8, "--coll", colls[c], "--algos", "all",
                          "--bytes", "64..64KiB:x32");
        cr_assert_eq(o.status, 0, "stderr:\n%s", o.err);
        char *lines[256];
        int n = 0;
        for (char *s = strtok(o.out, "\n"); s && n < 256; s = strtok(NULL, "\n"))
            lines[n++] = s;
        cr_assert_str_eq(lines[0], "machine,coll,algo,bytes,ranks,ticks,seconds,events,"
                                   "algbw_bytes_per_s,busbw_bytes_per_s");
        cr_assert_gt(n, 3);
        for (int i = 1; i < n; i++) {
            /* the spec is the first, quoted field: the rest follows its closing quote */
            const char *rest = strstr(lines[i] + 1, "\",");
            cr_assert_not_null(rest);
            char coll[32], algo[64];
            long long bytes, ticks, events;
            int P;
            double sec, algbw, busbw;
            cr_assert_eq(sscanf(rest + 2, "%31[^,],%63[^,],%lld,%d,%lld,%lf,%lld,%lf,%lf", coll,
                                algo, &bytes, &P, &ticks, &sec, &events, &algbw, &busbw),
                         9, "row '%s'", lines[i]);
            double S = c == 1 ? (double)bytes * P : (double)bytes;
            double factor = c == 0 ? 2.0 * (P - 1) / P : c == 1 ? (P - 1.0) / P : 1.0;
            cr_assert_float_eq(algbw, S / sec, 1e-6 * S / sec, "row '%s'", lines[i]);
            cr_assert_float_eq(busbw, algbw * factor, 1e-6 * algbw, "row '%s'", lines[i]);
        }
        cli_out_free(&o);
    }
}

static double json_number(const char *json, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\": ", key);
    const char *at = strstr(json, k);
    cr_assert_not_null(at, "no %s in:\n%s", key, json);
    return strtod(at + strlen(k), NULL);
}

/* The JSON's "bandwidth": S of an alltoall is the block x P; algbw is S
 * over the run's own finish_seconds; a barrier has no such object. */
Test(benchtable, json)
{
    cli_out_t o = RUN("run", "--machine", RING8, "--coll", "alltoall", "--bytes", "3000",
                      "--json", "-", "--no-timing");
    cr_assert_eq(o.status, 0, "stderr:\n%s", o.err);
    double S = json_number(o.out, "size_bytes"), t = json_number(o.out, "finish_seconds");
    cr_assert_eq(S, 24000.0);
    cr_assert_eq(json_number(o.out, "seconds"), t);
    cr_assert_float_eq(json_number(o.out, "algbw_bytes_per_second"), S / t, 1e-9 * S / t);
    cr_assert_float_eq(json_number(o.out, "busbw_bytes_per_second"), S / t * 7 / 8,
                       1e-9 * S / t);
    cr_assert_eq(json_number(o.out, "busbw_factor"), 0.875);
    ASSERT_HAS(o.out, "\"definition\": \"nccl-tests\"");
    cli_out_free(&o);
    o = RUN("run", "--machine", RING8, "--coll", "barrier", "--json", "-", "--no-timing");
    cr_assert_eq(o.status, 0);
    cr_assert_null(strstr(o.out, "\"bandwidth\""));
    cli_out_free(&o);
    /* a loop's bandwidths are of its average iteration */
    o = RUN("run", "--machine", RING8, "--coll", "broadcast", "--algo", "chain", "--bytes",
            "64KiB", "--iterations", "4", "--warmup", "1", "--json", "-", "--no-timing");
    cr_assert_eq(o.status, 0, "stderr:\n%s", o.err);
    t = json_number(o.out, "avg_seconds");
    cr_assert_lt(t, json_number(o.out, "first_ticks") * 1e-12, "the chain's iterations overlap");
    cr_assert_eq(json_number(o.out, "seconds"), t);
    cr_assert_float_eq(json_number(o.out, "algbw_bytes_per_second"), 65536 / t, 1e-9 * 65536 / t);
    cli_out_free(&o);
    /* the summary: algbw and busbw lines in GB/s */
    o = RUN("run", "--machine", RING8, "--coll", "allreduce", "--algo", "ring", "--bytes",
            "1MiB");
    ASSERT_HAS(o.out, "\nalgbw     0.5671 GB/s (S = 1 MiB in 1.84901 ms)\n");
    ASSERT_HAS(o.out, "\nbusbw     0.9924 GB/s (algbw x 2(n-1)/n = 1.75, n = 8 ranks;");
    cli_out_free(&o);
}
