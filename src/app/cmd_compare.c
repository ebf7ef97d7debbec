/*
 * cmd_compare.c - `collsim compare`: one collective algorithm, written once,
 * on several machines, side by side (docs/figures.md).
 *
 * Every machine runs exactly what `collsim run --machine SPEC --coll C
 * --algo A --bytes N` would (the request path, api/request.h): the same
 * placement rules, the machine's hints in rank space, the same options.
 * The results go out as an aligned table (or CSV, or Markdown), a bar chart
 * of the times, and optionally a heatmap per machine.  A machine on which
 * the run fails is reported and left out; the others still run, and the
 * exit status is that of the first failure.
 *
 * Without --machines, one representative configuration of every machine
 * type (its table's `example`), in registry order.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/compare.h"
#include "app/app.h"
#include "coll/coll.h"
#include "core/units.h"
#include "io/algofile.h"
#include "io/heatmap.h"
#include "io/plot.h"
#include "io/result_json.h"

#define COMPARE_MAX_MACHINES 64

typedef struct compare_args {
    int quiet; /* --quiet: no progress line, no "wrote FILE" */
    cs_request_t req; /* the collective, mode; the machine is set per row */
    int with_timing, logy; /* logy: -1 auto */
    const char *specs[COMPARE_MAX_MACHINES];
    int nspecs;
    char *spec_buf;  /* --machines split in place (owned) */
    const char *csv, *markdown, *plot, *heatmaps, *title, *json;
    const char *heatmaps_tmp; /* where the heatmaps are written until the end */
    cs_heatmap_metric_t metric;
    int to_stdout;            /* one of --csv, --markdown, --json is '-' */
} compare_args_t;

/* One machine's outcome (api/compare.h), its heatmap and its run JSON. */
typedef struct compare_row {
    cs_compare_row_t r;
    char heatmap[4200];
    char *json;               /* --json: the run's JSON, or NULL */
    size_t json_len;
} compare_row_t;

static void compare_help(void)
{
    printf("Usage: collsim compare --coll NAME [--algo NAME] --bytes N\n"
           "                       [--machines SPEC;SPEC;...] [OPTIONS]\n"
           "\n"
           "Runs one collective algorithm on several machines and prints a table: time in\n"
           "ticks (cycles) and seconds, achieved bandwidth, the busiest link and its\n"
           "utilisation, events and wall time; optionally CSV, Markdown, a bar chart and\n"
           "a heatmap per machine.\n"
           "\n"
           "      --machines LIST    machine specs separated by ';' (default: one\n"
           "                         representative configuration of every machine type:\n");
    int ntypes;
    const cs_machine_type_t *const *types = cs_machine_types(&ntypes);
    for (int i = 0; i < ntypes; i++)
        if (types[i]->example)
            printf("                           %s\n", types[i]->example);
    printf("                         those registered in this build)\n"
           "      --coll NAME        the collective (see 'collsim list algorithms')\n"
           "      --algo NAME        the algorithm (default: the collective's first)\n"
           "      --bytes N          the size, as for 'collsim run'\n"
           "      --ranks P          ranks on every machine (default: all its nodes)\n"
           "      --root R, --order ORDER, --opt KEY=VALUE\n"
           "                         as for 'collsim run', the same on every machine\n"
           "      --validate         check every run's final data placement\n"
           "  -M, --mode MODE        packet (default) or fluid (channel engines)\n"
           "      --force            run a packet-mode run above the work limit (docs/limits.md)\n"
           "\n"
           "Output:\n"
           "      --csv FILE         CSV rows ('-': standard output instead of the table)\n"
           "      --markdown FILE    a Markdown table ('-': standard output)\n"
           "  -j, --json FILE        the runs as one JSON document ('-': standard output):\n"
           "                         {\"coll\", \"algo\", \"bytes\", \"runs\": [...]}, each run\n"
           "                         the JSON of 'collsim run --json' (docs/api.md)\n"
           "      --plot FILE        a bar chart of the times (.png, .svg, .pdf)\n"
           "      --log / --linear   the chart's y axis (default: log when the times span\n"
           "                         more than a factor 30)\n"
           "      --title TEXT       the chart's title\n"
           "      --heatmaps DIR     a heatmap per machine: DIR/1-TYPE.png, 2-TYPE.png, ...\n"
           "      --metric M         the heatmaps' metric: util (default), bytes, stall, k\n"
           "      --no-timing        write the wall time as 0 (deterministic CSV)\n"
           "      --quiet                no progress line, no \"wrote FILE\" on standard error\n"
           "  -h, --help             show this help and exit\n"
           "\n"
           "A machine whose run fails is reported and left out; the others still run and\n"
           "the exit status is that of the first failure.\n");
}

static void compare_parse_args(int argc, char **argv, compare_args_t *a)
{
    enum {
        OPT_MACHINES = 256, OPT_CSV, OPT_MARKDOWN, OPT_PLOT, OPT_LOG, OPT_LINEAR,
        OPT_TITLE, OPT_HEATMAPS, OPT_METRIC, OPT_NO_TIMING, OPT_QUIET
    };
    static const struct option longopts[] = {
        {"coll", required_argument, NULL, CS_APP_OPT_COLL},
        {"algo", required_argument, NULL, CS_APP_OPT_ALGO},
        {"bytes", required_argument, NULL, CS_APP_OPT_BYTES},
        {"machines", required_argument, NULL, OPT_MACHINES},
        {"ranks", required_argument, NULL, CS_APP_OPT_RANKS},
        {"root", required_argument, NULL, CS_APP_OPT_ROOT},
        {"order", required_argument, NULL, CS_APP_OPT_ORDER},
        {"opt", required_argument, NULL, CS_APP_OPT_OPT},
        {"validate", no_argument, NULL, CS_APP_OPT_VALIDATE},
        {"mode", required_argument, NULL, 'M'},
        {"force", no_argument, NULL, CS_APP_OPT_FORCE},
        {"csv", required_argument, NULL, OPT_CSV},
        {"markdown", required_argument, NULL, OPT_MARKDOWN},
        {"json", required_argument, NULL, 'j'},
        {"plot", required_argument, NULL, OPT_PLOT},
        {"log", no_argument, NULL, OPT_LOG},
        {"linear", no_argument, NULL, OPT_LINEAR},
        {"title", required_argument, NULL, OPT_TITLE},
        {"heatmaps", required_argument, NULL, OPT_HEATMAPS},
        {"metric", required_argument, NULL, OPT_METRIC},
        {"no-timing", no_argument, NULL, OPT_NO_TIMING},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    cs_error_t err = {0};
    const char *machines = NULL;
    int c;

    memset(a, 0, sizeof *a);
    cs_request_init(&a->req);
    a->with_timing = 1;
    a->logy = -1;
    while ((c = getopt_long(argc, argv, ":M:j:h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_MACHINES: machines = optarg; break;
        case OPT_CSV: a->csv = optarg; break;
        case OPT_MARKDOWN: a->markdown = optarg; break;
        case 'j': a->json = optarg; break;
        case OPT_PLOT: a->plot = optarg; break;
        case OPT_LOG: a->logy = 1; break;
        case OPT_LINEAR: a->logy = 0; break;
        case OPT_TITLE: a->title = optarg; break;
        case OPT_HEATMAPS: a->heatmaps = optarg; break;
        case OPT_NO_TIMING: a->with_timing = 0; break;
        case OPT_METRIC:
            if (cs_heatmap_parse_metric(optarg, &a->metric, &err) != CS_OK)
                cs_app_usage_error("compare", "--metric: %s", err.msg);
            break;
        case OPT_QUIET: a->quiet = 1; break;
        case 'h': compare_help(); exit(0);
        default: cs_app_option("compare", &a->req, c, argv, longopts);
        }
    }
    cs_app_no_operands("compare", argc, argv);
    if (!a->req.coll)
        cs_app_usage_error("compare", "missing --coll NAME");
    if (a->plot && cs_plot_check_path(a->plot, &err) != CS_OK)
        cs_app_usage_error("compare", "--plot: %s", err.msg);
    a->to_stdout = (a->csv && !strcmp(a->csv, "-")) + (a->markdown && !strcmp(a->markdown, "-")) +
                   (a->json && !strcmp(a->json, "-"));
    if (a->to_stdout > 1)
        cs_app_usage_error("compare", "only one of --csv, --markdown and --json can write to "
                                      "standard output");
    if (machines) {
        /* split on ';' (specs hold commas) */
        a->spec_buf = cs_strdup(machines);
        a->nspecs = cs_app_split_list(a->spec_buf, " ", a->specs, COMPARE_MAX_MACHINES);
        if (a->nspecs < 0) {
            free(a->spec_buf);
            cs_app_usage_error("compare", "--machines: at most %d machines",
                               COMPARE_MAX_MACHINES);
        }
        if (a->nspecs == 0) {
            free(a->spec_buf);
            cs_app_usage_error("compare", "--machines '%s': no machine spec", machines);
        }
    } else {
        int n;
        const cs_machine_type_t *const *types = cs_machine_types(&n);
        for (int t = 0; t < n; t++)
            if (types[t]->example)
                a->specs[a->nspecs++] = types[t]->example;
    }
}

/* ---- running ---------------------------------------------------------------- */

/* The progress bar on every machine's run (cs_compare_hooks_t.setup). */
static void compare_setup(void *ctx, const cs_machine_t *m, cs_exec_opts_t *opts)
{
    cs_app_progress_attach(ctx, m->tick_seconds, opts);
}

static int compare_one(const compare_args_t *a, int index, compare_row_t *row,
                       cs_app_progress_t *progress, cs_error_t *err)
{
    cs_request_run_t run;
    int rc;

    cs_request_run_init(&run);
    cs_compare_hooks_t hooks = {NULL, compare_setup, progress};
    rc = cs_compare_run(&a->req, row->r.spec, a->with_timing, &hooks, &row->r, &run, err);
    const cs_machine_t *m = run.machine;
    const cs_exec_result_t *res = &run.result;
    if (rc == CS_OK && a->json) {
        FILE *f = open_memstream(&row->json, &row->json_len);
        if (!f)
            return cs_error_set(err, CS_ERR_OOM, "--json: cannot open a memory stream");
        rc = cs_compare_json_run(f, 0, a->with_timing, &run, err);
        if (fclose(f) != 0 && rc == CS_OK)
            rc = cs_error_set(err, CS_ERR_OOM, "--json: cannot write to memory");
    }
    if (rc == CS_OK && a->heatmaps) {
        cs_heatmap_t *h = NULL;
        cs_heatmap_data_t d;
        char title[320], sub[320], path[sizeof row->heatmap + 64];
        memset(&d, 0, sizeof d);
        snprintf(row->heatmap, sizeof row->heatmap, "%s/%d-%s.png", a->heatmaps, index + 1,
                 m->type->name);
        snprintf(path, sizeof path, "%s/%d-%s.png", a->heatmaps_tmp, index + 1, m->type->name);
        cs_figures_run_title(m, &run.coll, NULL, run.coll.args.P, title, sizeof title);
        rc = cs_heatmap_new(m, &h, err);
        if (rc == CS_OK)
            rc = cs_heatmap_data_from_net(res->net, cs_topo_channels(m->topo), a->metric, 0,
                                          res->finish, 1, &d, err);
        if (rc == CS_OK) {
            cs_figures_heatmap_subtitle(m, res->net, &d, "whole run", sub, sizeof sub);
            rc = cs_heatmap_write(h, &d, title, sub, 0, path, err);
        }
        if (rc)
            cs_error_prefix(err, "--heatmaps");
        cs_heatmap_data_destroy(&d);
        cs_heatmap_free(h);
    }
    cs_request_run_destroy(&run);
    return rc;
}

/* ---- output ------------------------------------------------------------------- */

static void put_padded(FILE *f, const char *s, int width, int right)
{
    int pad = width - cs_app_text_width(s);
    if (right)
        fprintf(f, "%*s%s", pad > 0 ? pad : 0, "", s);
    else
        fprintf(f, "%s%*s", s, pad > 0 ? pad : 0, "");
}

#define NCOLS 9

/* The cells of a row as text (the table and Markdown share them). */
static void row_cells(const cs_compare_row_t *r, char cells[NCOLS][96])
{
    snprintf(cells[0], 96, "%s", r->name);
    snprintf(cells[1], 96, "%d", r->ranks);
    snprintf(cells[2], 96, "%lld", (long long)r->ticks);
    cs_units_format_seconds(r->seconds, cells[3], 96);
    if (r->bandwidth > 0)
        snprintf(cells[4], 96, "%.3g GB/s", r->bandwidth / 1e9);
    else
        snprintf(cells[4], 96, "-");
    snprintf(cells[5], 96, "%s", r->link);
    snprintf(cells[6], 96, "%.1f%%", 100 * r->link_util);
    snprintf(cells[7], 96, "%llu", (unsigned long long)r->events);
    snprintf(cells[8], 96, "%.3f", r->wall);
}

static const char *const col_names[NCOLS] = {"machine", "ranks",         "ticks",
                                              "time",    "bandwidth",     "busiest link",
                                              "util",    "events",        "wall s"};
static const int col_right[NCOLS] = {0, 1, 1, 1, 1, 0, 1, 1, 1};

static void print_table(FILE *f, const compare_row_t *rows, int n)
{
    int width[NCOLS];
    char cells[NCOLS][96];
    for (int k = 0; k < NCOLS; k++)
        width[k] = cs_app_text_width(col_names[k]);
    for (int i = 0; i < n; i++) {
        if (rows[i].r.rc)
            continue;
        row_cells(&rows[i].r, cells);
        for (int k = 0; k < NCOLS; k++)
            if (cs_app_text_width(cells[k]) > width[k])
                width[k] = cs_app_text_width(cells[k]);
    }
    for (int k = 0; k < NCOLS; k++) {
        put_padded(f, col_names[k], width[k], col_right[k]);
        fputs(k + 1 < NCOLS ? "  " : "\n", f);
    }
    for (int i = 0; i < n; i++) {
        if (rows[i].r.rc) {
            put_padded(f, rows[i].r.name, width[0], 0);
            fprintf(f, "  failed: %s\n", rows[i].r.err);
            continue;
        }
        row_cells(&rows[i].r, cells);
        for (int k = 0; k < NCOLS; k++) {
            put_padded(f, cells[k], width[k], col_right[k]);
            fputs(k + 1 < NCOLS ? "  " : "\n", f);
        }
    }
}

static void print_markdown(FILE *f, const compare_row_t *rows, int n)
{
    char cells[NCOLS][96];
    fputs("|", f);
    for (int k = 0; k < NCOLS; k++)
        fprintf(f, " %s |", col_names[k]);
    fputs("\n|", f);
    for (int k = 0; k < NCOLS; k++)
        fputs(col_right[k] ? " ---: |" : " --- |", f);
    fputs("\n", f);
    for (int i = 0; i < n; i++) {
        if (rows[i].r.rc) {
            fprintf(f, "| %s | failed: %s |", rows[i].r.name, rows[i].r.err);
            for (int k = 2; k < NCOLS; k++)
                fputs(" |", f);
            fputs("\n", f);
            continue;
        }
        row_cells(&rows[i].r, cells);
        fputs("|", f);
        for (int k = 0; k < NCOLS; k++)
            fprintf(f, " %s |", cells[k]);
        fputs("\n", f);
    }
}

static void print_csv(FILE *f, const compare_args_t *a, const compare_row_t *rows, int n,
                      const char *algo)
{
    fputs("machine,spec,coll,algo,bytes,ranks,ticks,seconds,bandwidth_bytes_per_s,"
          "busiest_link,busiest_util,events,wall_seconds\n", f);
    for (int i = 0; i < n; i++) {
        const cs_compare_row_t *r = &rows[i].r;
        if (r->rc)
            continue;
        cs_report_csv_field(f, r->name);
        fputc(',', f);
        cs_report_csv_field(f, r->norm);
        fprintf(f, ",%s,%s,%lld,%d,%lld,%.9g,%.9g,", a->req.coll, algo, (long long)a->req.bytes,
                r->ranks, (long long)r->ticks, r->seconds, r->bandwidth);
        cs_report_csv_field(f, r->link);
        fprintf(f, ",%.6f,%llu,%.6f\n", r->link_util, (unsigned long long)r->events, r->wall);
    }
}


static int write_plot(const compare_args_t *a, const compare_row_t *rows, int n,
                      const char *algo, cs_error_t *err)
{
    const char **labels = cs_calloc((size_t)n + 1, sizeof *labels);
    double *seconds = cs_calloc((size_t)n + 1, sizeof *seconds);
    char (*names)[128] = cs_calloc((size_t)n + 1, sizeof *names);
    int k = 0, rc, same_ranks = 1, first = -1;
    for (int i = 0; i < n; i++)
        if (!rows[i].r.rc) {
            if (first >= 0 && rows[i].r.ranks != rows[first].r.ranks)
                same_ranks = 0;
            if (first < 0)
                first = i;
        }
    for (int i = 0; i < n; i++) {
        if (rows[i].r.rc)
            continue;
        /* the ranks under each bar when they differ between machines */
        if (same_ranks)
            snprintf(names[k], sizeof names[k], "%s", rows[i].r.name);
        else
            snprintf(names[k], sizeof names[k], "%s (%d ranks)", rows[i].r.name, rows[i].r.ranks);
        labels[k] = names[k];
        seconds[k++] = rows[i].r.seconds;
    }
    rc = cs_compare_plot(a->plot, a->title, a->req.coll, algo, a->req.bytes, k, labels, seconds,
                         a->logy, err);
    if (rc)
        cs_error_prefix(err, "--plot");
    free(labels);
    free(names);
    free(seconds);
    return rc;
}

int cs_app_cmd_compare(int argc, char **argv)
{
    compare_args_t a;
    cs_error_t err = {0};
    int rc = CS_OK, first_rc = CS_OK;
    cs_app_progress_t progress;
    const char *algo = NULL;
    const cs_coll_algo_t *al;
    cs_coll_algo_t *al_file = NULL; /* owned: --algo FORMAT:FILE */
    cs_coll_kind_t kind;

    compare_parse_args(argc, argv, &a);
    /* the collective and algorithm hold for every machine: checked once */
    if ((rc = cs_coll_parse(a.req.coll, &kind, &err)) == CS_OK &&
        (rc = cs_request_find_algo(kind, a.req.algo, NULL, &al, &al_file, &err)) == CS_OK)
        algo = al->name;
    cs_outdir_t *hdir = NULL;
    if (rc == CS_OK && a.heatmaps && (rc = cs_outdir_open("--heatmaps", a.heatmaps, &hdir, &err)) == CS_OK)
        a.heatmaps_tmp = cs_outdir_path(hdir);
    if (rc) {
        free(a.spec_buf);
        cs_algofile_free(al_file);
        return cs_app_report(&err);
    }
    compare_row_t *rows = cs_calloc((size_t)a.nspecs, sizeof *rows);
    cs_app_progress_init(&progress, "compare");
    progress.quiet = a.quiet;
    for (int i = 0; i < a.nspecs; i++) {
        rows[i].r.spec = a.specs[i];
        rows[i].r.rc = CS_ERR_CANCELLED;
        snprintf(rows[i].r.err, sizeof rows[i].r.err, "not run: interrupted");
        if (cs_app_interrupted())
            continue;
        snprintf(progress.what, sizeof progress.what, "compare %d/%d: %.60s", i + 1, a.nspecs,
                 a.specs[i]);
        cs_app_progress_show(&progress, (double)i / a.nspecs, NULL);
        cs_error_t e = {0};
        rows[i].r.rc = compare_one(&a, i, &rows[i], &progress, &e);
        if (rows[i].r.rc) {
            snprintf(rows[i].r.err, sizeof rows[i].r.err, "%s", e.msg);
            cs_app_progress_done(&progress);
            /* name the machine, unless its error quotes the spec already
             * ("spec \"x\": ...": the spec twice helps no one) */
            if (!strstr(e.msg, a.specs[i]))
                cs_error_prefix(&e, "%s", a.specs[i]);
            cs_app_report(&e);
            if (first_rc == CS_OK)
                first_rc = rows[i].r.rc;
        }
    }
    cs_app_progress_done(&progress);

    if (!a.to_stdout) {
        print_table(stdout, rows, a.nspecs);
        if (a.req.validate)
            printf("validation: the final data placement of every run above was checked: ok\n");
    }
    /* interrupted: no output at all (whole or absent) */
    if ((rc = cs_app_check_interrupt(&err)) == CS_OK && a.csv) {
        cs_app_out_t out;
        if ((rc = cs_app_out_open("--csv", a.csv, &out, &err)) == CS_OK) {
            print_csv(out.f, &a, rows, a.nspecs, algo);
            rc = cs_app_out_close(&out, rc, &err);
        }
    }
    if (rc == CS_OK && a.markdown) {
        cs_app_out_t out;
        if ((rc = cs_app_out_open("--markdown", a.markdown, &out, &err)) == CS_OK) {
            print_markdown(out.f, rows, a.nspecs);
            rc = cs_app_out_close(&out, rc, &err);
        }
    }
    if (rc == CS_OK && a.json) {
        cs_app_out_t out;
        if ((rc = cs_app_out_open("--json", a.json, &out, &err)) == CS_OK) {
            int k = 0;
            cs_compare_json_begin(out.f, a.req.coll, algo, a.req.bytes);
            for (int i = 0; i < a.nspecs; i++)
                if (!rows[i].r.rc) /* a failed machine is left out, as in the table */
                    fprintf(out.f, "%s%s", k++ ? ",\n" : "", rows[i].json);
            cs_compare_json_end(out.f);
            rc = cs_app_out_close(&out, rc, &err);
        }
    }
    if (rc == CS_OK && a.plot)
        rc = write_plot(&a, rows, a.nspecs, algo, &err);
    if (rc == CS_OK)
        rc = cs_outdir_commit(hdir, &err);
    else
        cs_outdir_abort(hdir);
    if (rc == CS_OK && a.heatmaps && !a.to_stdout) {
        printf("heatmaps:\n");
        for (int i = 0; i < a.nspecs; i++)
            if (!rows[i].r.rc)
                printf("  %s\n", rows[i].heatmap);
    }
    if (a.plot || a.heatmaps)
        cs_plot_cleanup();
    if (rc)
        cs_app_report(&err);
    else
        rc = first_rc;
    for (int i = 0; i < a.nspecs; i++)
        free(rows[i].json);
    free(rows);
    free(a.spec_buf);
    cs_algofile_free(al_file);
    return rc;
}
