/*
 * cmd_compare.c - `collsim compare`: one collective algorithm, written once,
 * on several machines, side by side (docs/figures.md).
 *
 * Every machine runs exactly what `collsim run --machine SPEC --coll C
 * --algo A --bytes N` would (the request path, api/request.h): the same
 * placement rules, the machine's hints in rank space, the same options.
 * The results go out as an aligned table (or CSV, or Markdown), a bar chart
 * of the times (a line plot, one line per machine, over a size range), and
 * optionally a heatmap per machine (and size), on one colour range shared by
 * the machines at each size unless --scale says otherwise (the runs are
 * kept until the range is known).  A machine on which the run fails is
 * reported and left out; the others still run, and the exit status is that
 * of the first failure.
 *
 * Like for like (issue 32): every machine runs the same number of ranks,
 * --ranks or the most that every machine can hold, said in the summary and
 * the title; `--ranks all` gives each machine all its nodes, and the
 * output then says, everywhere, that the counts differ.  Times are drawn in
 * seconds (machines' ticks differ), in ticks only with --unit ticks.
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
#include "api/figures.h"
#include "api/sizes.h"
#include "app/app.h"
#include "app/par.h"
#include "coll/coll.h"
#include "core/units.h"
#include "io/algofile.h"
#include "io/axis.h"
#include "io/csv.h"
#include "io/heatmap.h"
#include "io/plot.h"
#include "io/result_json.h"

#define COMPARE_MAX_MACHINES 64

typedef struct compare_args {
    int quiet; /* --quiet: no progress line, no "wrote FILE" */
    cs_request_t req; /* the collective, mode; the machine and size are set per row */
    int with_timing, logy; /* logy: -1 auto */
    int ranks_all;    /* --ranks all: each machine all its nodes (counts differ) */
    int ticks, elements4; /* --unit ticks, --unit elements4 */
    cs_figures_y_t y;     /* --y: the chart's time, algbw or busbw */
    const char *bytes_text;
    int64_t sizes[CS_SIZES_MAX]; /* --bytes, ascending; one 0 without --bytes */
    int nsizes;
    const char *specs[COMPARE_MAX_MACHINES];
    int nspecs;
    char *spec_buf;  /* --machines split in place (owned) */
    const char *csv, *markdown, *plot, *heatmaps, *title, *json, *scale, *size;
    cs_heatmap_style_t style; /* --scale, --size */
    int own_scale;            /* --scale each: every heatmap its own range */
    const char *heatmaps_tmp; /* where the heatmaps are written until the end */
    cs_heatmap_metric_t metric;
    int to_stdout;            /* one of --csv, --markdown, --json is '-' */
} compare_args_t;

/* One machine's outcome (api/compare.h), its heatmap and its run JSON. */
typedef struct compare_row {
    cs_compare_row_t r;
    char heatmap[4200];
    cs_request_run_t *run;    /* kept until the shared range is known, or NULL */
    double vmax;              /* its heatmap's largest value */
    char *json;               /* --json: the run's JSON, or NULL */
    size_t json_len;
} compare_row_t;

static void compare_help(void)
{
    printf("Usage: collsim compare --coll NAME [--algo NAME] --bytes SIZES\n"
           "                       [--machines SPEC;SPEC;...] [OPTIONS]\n"
           "\n"
           "Runs one collective algorithm on several machines, all with the same number of\n"
           "ranks, and prints a table: time in ticks (cycles) and seconds, nccl-tests'\n"
           "algorithm and bus bandwidths (algbw, busbw: docs/bandwidth.md), the busiest\n"
           "link and its utilisation, events and wall time; optionally CSV, Markdown, a\n"
           "chart (bars at one size, a line per machine over a size range) and a heatmap\n"
           "per machine.\n"
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
           "      --algo NAME        the algorithm (default: the collective's first);\n"
           "                         nccl: NCCL's choice on each machine (docs/nccl.md)\n"
           "      --bytes SIZES      the size, as for 'collsim run', or sizes and ranges\n"
           "                         as for 'collsim sweep' (8..1MiB:x4, 1KiB,1MiB): a row\n"
           "                         per machine and size, a line per machine in --plot\n"
           "      --ranks P|all      ranks on every machine (default: the most that every\n"
           "                         machine can hold); 'all': each machine all its nodes,\n"
           "                         flagged as mixed counts in the output\n"
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
           "      --plot FILE        a bar chart of the times (.png, .svg, .pdf; .csv: the\n"
           "                         plotted numbers); over several sizes, a log-log plot\n"
           "                         with one line per machine\n"
           "      --log / --linear   the bar chart's y axis (default: log when the times\n"
           "                         span more than a factor 30)\n"
           "      --unit UNIT        times in the chart: seconds (default, with SI prefixes)\n"
           "                         or ticks (each machine's own); sizes: bytes (default)\n"
           "                         or elements4 (4-byte elements); may be given twice\n"
           "      --y QUANTITY       what the chart shows: time (default), algbw or busbw\n"
           "                         (nccl-tests' algorithm and bus bandwidths, B/s with\n"
           "                         decimal prefixes: 1 GB/s = 1e9 B/s; docs/bandwidth.md)\n"
           "      --title TEXT       the chart's title\n"
           "      --heatmaps DIR     a heatmap per machine: DIR/1-TYPE.png, 2-TYPE.png, ...;\n"
           "                         over several sizes, per machine and size:\n"
           "                         DIR/1-TYPE-BYTES.png\n"
           "      --metric M         the heatmaps' metric: util (default), bytes, stall, k\n"
           "      --scale LO:HI|each the heatmaps' colour range in the metric's units (util\n"
           "                         0:50, bytes 0:4MiB, k 1:4); default: one range shared\n"
           "                         by every machine at each size (0 to the largest\n"
           "                         value of all);\n"
           "                         each: every heatmap its own range\n"
           "      --size SIZE        the heatmaps' size: column, page or WxH (3.5x3in)\n"
           "      --no-timing        no wall time: the table and Markdown leave the column\n"
           "                         out, the CSV writes it as 0 (deterministic outputs)\n"
           "      --quiet            no progress line, no \"wrote FILE\" on standard error\n"
           "  -h, --help             show this help and exit\n"
           "\n"
           "A machine whose run fails is reported and left out; the others still run and\n"
           "the exit status is that of the first failure.\n");
    cs_par_help(stdout, CS_PAR_SHARD);
}

static void compare_parse_args(int argc, char **argv, compare_args_t *a)
{
    enum {
        OPT_MACHINES = 256, OPT_CSV, OPT_MARKDOWN, OPT_PLOT, OPT_LOG, OPT_LINEAR,
        OPT_TITLE, OPT_HEATMAPS, OPT_METRIC, OPT_NO_TIMING, OPT_SCALE, OPT_SIZE, OPT_UNIT, OPT_QUIET,
        OPT_Y
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
        {"scale", required_argument, NULL, OPT_SCALE},
        {"size", required_argument, NULL, OPT_SIZE},
        {"no-timing", no_argument, NULL, OPT_NO_TIMING},
        {"unit", required_argument, NULL, OPT_UNIT},
        {"y", required_argument, NULL, OPT_Y},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"help", no_argument, NULL, 'h'},
        CS_PAR_LONGOPTS,
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
        case OPT_SCALE: a->scale = optarg; break;
        case OPT_SIZE: a->size = optarg; break;
        case CS_APP_OPT_BYTES: a->bytes_text = optarg; break;
        case CS_APP_OPT_RANKS:
            if (!strcmp(optarg, "all"))
                a->ranks_all = 1;
            else
                cs_app_option("compare", &a->req, c, argv, longopts);
            break;
        case OPT_UNIT:
            if (!strcmp(optarg, "seconds") || !strcmp(optarg, "s"))
                a->ticks = 0;
            else if (!strcmp(optarg, "ticks"))
                a->ticks = 1;
            else if (!strcmp(optarg, "bytes"))
                a->elements4 = 0;
            else if (!strcmp(optarg, "elements4"))
                a->elements4 = 1;
            else
                cs_app_usage_error("compare", "--unit: unknown unit '%s'; valid: seconds, "
                                   "ticks (times), bytes, elements4 (sizes)", optarg);
            break;
        case OPT_METRIC:
            if (cs_heatmap_parse_metric(optarg, &a->metric, &err) != CS_OK)
                cs_app_usage_error("compare", "--metric: %s", err.msg);
            break;
        case OPT_Y:
            if (cs_figures_parse_y(optarg, &a->y, &err) != CS_OK)
                cs_app_usage_error("compare", "%s", err.msg);
            break;
        case OPT_QUIET: a->quiet = 1; break;
        case 'h': compare_help(); exit(0);
        default: cs_app_option("compare", &a->req, c, argv, longopts);
        }
    }
    cs_app_no_operands("compare", argc, argv);
    if (!a->req.coll)
        cs_app_usage_error("compare", "missing --coll NAME");
    if (a->y != CS_FIGURES_Y_TIME && !a->plot)
        cs_app_usage_error("compare", "--y %s is what --plot draws; the table, CSV and JSON "
                           "have every quantity: add --plot FILE", cs_figures_y_name(a->y));
    if (a->y != CS_FIGURES_Y_TIME && a->ticks)
        cs_app_usage_error("compare", "--y %s and --unit ticks: a bandwidth is in bytes per "
                           "second, ticks are times; give one", cs_figures_y_name(a->y));
    if ((a->scale || a->size) && !a->heatmaps)
        cs_app_usage_error("compare", "%s needs --heatmaps DIR", a->scale ? "--scale" : "--size");
    a->own_scale = a->scale && !strcmp(a->scale, "each");
    if (cs_figures_parse_style(a->own_scale ? NULL : a->scale, a->size, a->metric, &a->style,
                               &err) != CS_OK)
        cs_app_usage_error("compare", "%s", err.msg);
    if (a->ranks_all && a->req.ranks)
        cs_app_usage_error("compare", "--ranks all and --ranks %lld: give one",
                           (long long)a->req.ranks);
    /* the sizes of a sweep (api/sizes.h); each row's request gets one */
    if (a->bytes_text) {
        if (cs_sizes_parse(a->bytes_text, a->sizes, &a->nsizes, &err) != CS_OK)
            cs_app_usage_error("compare", "--bytes '%s': %s", a->bytes_text, err.msg);
        if (a->nsizes == 0)
            cs_app_usage_error("compare", "--bytes '%s': no sizes", a->bytes_text);
    } else {
        a->nsizes = 1; /* a barrier needs none; any other collective says so */
    }
    a->req.bytes_text = a->bytes_text;
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

/* The file name of a heatmap of machine mi (0-based) at `bytes`:
 * "N-TYPE.png", or over several sizes "N-TYPE-BYTES.png", one per machine
 * and size. */
static void heatmap_name(const compare_args_t *a, int mi, const cs_machine_t *m, int64_t bytes,
                         char *buf, size_t len)
{
    if (a->nsizes > 1)
        snprintf(buf, len, "%d-%s-%lld.png", mi + 1, m->type->name, (long long)bytes);
    else
        snprintf(buf, len, "%d-%s.png", mi + 1, m->type->name);
}

/* Draws the heatmap of row (machine mi; run: its run) with style st into
 * the temporary folder (committed under --heatmaps at the end). */
static int compare_heatmap(const compare_args_t *a, int mi, const compare_row_t *row,
                           const cs_request_run_t *run, const cs_heatmap_style_t *st,
                           cs_error_t *err)
{
    const cs_machine_t *m = run->machine;
    const cs_exec_result_t *res = &run->result;
    cs_heatmap_t *h = NULL;
    cs_heatmap_data_t d;
    char title[320], sub[320], name[160], path[sizeof row->heatmap + 64];
    int rc;
    memset(&d, 0, sizeof d);
    heatmap_name(a, mi, m, row->r.bytes, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", a->heatmaps_tmp, name);
    cs_figures_run_title(m, &run->coll, NULL, run->coll.args.P, title, sizeof title);
    rc = cs_heatmap_new(m, &h, err);
    if (rc == CS_OK)
        rc = cs_heatmap_data_from_net(res->net, cs_topo_channels(m->topo), a->metric, 0,
                                      res->finish, 1, &d, err);
    if (rc == CS_OK) {
        cs_figures_heatmap_subtitle(m, res->net, &d, "whole run", sub, sizeof sub);
        rc = cs_heatmap_write(h, &d, title, sub, st, path, err);
    }
    if (rc)
        cs_error_prefix(err, "--heatmaps");
    cs_heatmap_data_destroy(&d);
    cs_heatmap_free(h);
    return rc;
}

/* Runs machine mi at row's size; row->r gets the outcome.  Its heatmap is
 * drawn now when its colour range is known (--scale), else the run is kept
 * in row->run for compare_shared_heatmaps. */
static int compare_one(const compare_args_t *a, int mi, compare_row_t *row,
                       cs_app_progress_t *progress, cs_error_t *err)
{
    cs_request_run_t run;
    cs_request_t req = a->req;
    int rc;

    cs_request_run_init(&run);
    req.bytes = row->r.bytes;
    cs_compare_hooks_t hooks = {NULL, compare_setup, progress};
    rc = cs_compare_run(&req, row->r.spec, a->with_timing, &hooks, &row->r, &run, err);
    const cs_machine_t *m = run.machine;
    const cs_exec_result_t *res = &run.result;
    if (rc == CS_OK && a->json) {
        FILE *f = open_memstream(&row->json, &row->json_len);
        if (!f) {
            cs_request_run_destroy(&run);
            return cs_error_set(err, CS_ERR_OOM, "--json: cannot open a memory stream");
        }
        rc = cs_compare_json_run(f, 0, a->with_timing, &run, err);
        if (fclose(f) != 0 && rc == CS_OK)
            rc = cs_error_set(err, CS_ERR_OOM, "--json: cannot write to memory");
    }
    if (rc == CS_OK && a->heatmaps) {
        char name[160];
        heatmap_name(a, mi, m, row->r.bytes, name, sizeof name);
        snprintf(row->heatmap, sizeof row->heatmap, "%s/%s", a->heatmaps, name);
        if (a->own_scale || a->style.hi > a->style.lo) {
            /* the range is known: drawn now, the run freed */
            rc = compare_heatmap(a, mi, row, &run, &a->style, err);
        } else {
            /* the shared range needs the largest value of every machine at
             * this size: the run is kept until all have run */
            cs_heatmap_data_t d;
            rc = cs_heatmap_data_from_net(res->net, cs_topo_channels(m->topo), a->metric, 0,
                                          res->finish, 1, &d, err);
            row->vmax = cs_heatmap_data_max(&d);
            cs_heatmap_data_destroy(&d);
            if (rc == CS_OK) {
                row->run = cs_malloc(sizeof *row->run);
                *row->run = run;
                return CS_OK;
            }
        }
    }
    cs_request_run_destroy(&run);
    return rc;
}

/* The heatmaps kept for the shared range (rows machine by machine, size
 * by size): at each size, drawn with 0 (k: 1) to the largest value of every
 * machine at that size, said in each caption.  Per size rather than one
 * range for all: the bytes a channel moves grow with the size, and one range
 * over a sweep would leave the small sizes blank; the comparison is between
 * machines (--scale LO:HI gives one range to every figure). */
static int compare_shared_heatmaps(const compare_args_t *a, compare_row_t *rows)
{
    int nm = a->nspecs, ns = a->nsizes, rc = CS_OK;
    for (int si = 0; si < ns; si++) {
        cs_heatmap_style_t st = a->style;
        char why[128], size[32] = "";
        int drawn = 0;
        for (int mi = 0; mi < nm; mi++) {
            const compare_row_t *r = &rows[mi * ns + si];
            if (r->run) {
                drawn++;
                if (r->vmax > st.hi)
                    st.hi = r->vmax;
            }
        }
        if (!drawn)
            continue;
        st.lo = a->metric == CS_HEATMAP_K ? 1 : 0;
        if (st.hi <= st.lo)
            st.hi = st.lo + 1; /* nothing moved anywhere: any range is the same */
        if (ns > 1)
            cs_units_format_bytes(a->sizes[si], size, sizeof size);
        snprintf(why, sizeof why, "colour range shared across the %d machine%s%s%s", drawn,
                 drawn != 1 ? "s" : "", ns > 1 ? " at " : "", size);
        st.range_why = why;
        for (int mi = 0; mi < nm; mi++) {
            compare_row_t *r = &rows[mi * ns + si];
            if (!r->run)
                continue;
            cs_error_t e = {0};
            int rc1 = compare_heatmap(a, mi, r, r->run, &st, &e);
            if (rc1) {
                /* the row fails, as when its heatmap is drawn right after its run */
                r->r.rc = rc1;
                snprintf(r->r.err, sizeof r->r.err, "%s", e.msg);
                if (!strstr(e.msg, r->r.spec))
                    cs_error_prefix(&e, "%s", r->r.spec);
                cs_app_report(&e);
                if (rc == CS_OK)
                    rc = rc1;
            }
            cs_request_run_destroy(r->run);
            free(r->run);
            r->run = NULL;
        }
    }
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

#define NCOLS 11
#define COL_SIZE 1  /* shown only over several sizes */
#define COL_WALL 10 /* shown only with timing: --no-timing would make it a column of 0.000 */

/* The cells of a row as text (the table and Markdown share them).  Times
 * and bandwidths as the charts write them (cs_axis_format): four
 * significant digits with the SI prefix of the value, "1.849 ms", "992.4
 * MB/s" (decimal, nccl-tests' GB/s), the same words as the bars above
 * which they stand.  The CSV and JSON keep full precision. */
static void row_cells(const cs_compare_row_t *r, char cells[NCOLS][96])
{
    snprintf(cells[0], 96, "%s", r->name);
    cs_units_format_bytes(r->bytes, cells[1], 96);
    snprintf(cells[2], 96, "%d", r->ranks);
    snprintf(cells[3], 96, "%lld", (long long)r->ticks);
    cs_axis_format(r->seconds, 4, CS_AXIS_SECONDS, cells[4], 96);
    /* nccl-tests' algbw and busbw (docs/bandwidth.md) */
    if (r->bandwidth > 0) {
        cs_axis_format(r->bandwidth, 4, CS_AXIS_BYTES_PER_S, cells[5], 96);
        cs_axis_format(r->busbw, 4, CS_AXIS_BYTES_PER_S, cells[6], 96);
    } else {
        snprintf(cells[5], 96, "-");
        snprintf(cells[6], 96, "-");
    }
    snprintf(cells[7], 96, "%s", r->link);
    snprintf(cells[8], 96, "%.1f%%", 100 * r->link_util);
    snprintf(cells[9], 96, "%llu", (unsigned long long)r->events);
    snprintf(cells[10], 96, "%.3f", r->wall);
}

static const char *const col_names[NCOLS] = {"machine", "size",  "ranks",        "ticks",
                                              "time",    "algbw", "busbw",        "busiest link",
                                              "util",    "events", "wall s"};
static const int col_right[NCOLS] = {0, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1};

/* Whether column k is printed (in the table and the Markdown; the CSV
 * keeps every column, so that its schema does not depend on options). */
static int col_shown(const compare_args_t *a, int k)
{
    return (k != COL_SIZE || a->nsizes > 1) && (k != COL_WALL || a->with_timing);
}

static void print_table(FILE *f, const compare_args_t *a, const compare_row_t *rows, int n)
{
    int width[NCOLS], last = NCOLS - 1;
    char cells[NCOLS][96];
    while (last > 0 && !col_shown(a, last))
        last--;
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
        if (!col_shown(a, k))
            continue;
        put_padded(f, col_names[k], width[k], col_right[k]);
        fputs(k < last ? "  " : "\n", f);
    }
    for (int i = 0; i < n; i++) {
        if (rows[i].r.rc) {
            put_padded(f, rows[i].r.name, width[0], 0);
            fprintf(f, "  failed: %s\n", rows[i].r.err);
            continue;
        }
        row_cells(&rows[i].r, cells);
        for (int k = 0; k < NCOLS; k++) {
            if (!col_shown(a, k))
                continue;
            put_padded(f, cells[k], width[k], col_right[k]);
            fputs(k < last ? "  " : "\n", f);
        }
    }
}

static void print_markdown(FILE *f, const compare_args_t *a, const compare_row_t *rows, int n)
{
    char cells[NCOLS][96];
    fputs("|", f);
    for (int k = 0; k < NCOLS; k++)
        if (col_shown(a, k))
            fprintf(f, " %s |", col_names[k]);
    fputs("\n|", f);
    for (int k = 0; k < NCOLS; k++)
        if (col_shown(a, k))
            fputs(col_right[k] ? " ---: |" : " --- |", f);
    fputs("\n", f);
    for (int i = 0; i < n; i++) {
        if (rows[i].r.rc) {
            fprintf(f, "| %s | failed: %s |", rows[i].r.name, rows[i].r.err);
            for (int k = 2; k < NCOLS; k++)
                if (col_shown(a, k))
                    fputs(" |", f);
            fputs("\n", f);
            continue;
        }
        row_cells(&rows[i].r, cells);
        fputs("|", f);
        for (int k = 0; k < NCOLS; k++)
            if (col_shown(a, k))
                fprintf(f, " %s |", cells[k]);
        fputs("\n", f);
    }
}

static void print_csv(FILE *f, const compare_args_t *a, const compare_row_t *rows, int n,
                      const char *algo)
{
    fputs("machine,spec,coll,algo,bytes,ranks,ticks,seconds,algbw_bytes_per_s,"
          "busbw_bytes_per_s,busiest_link,busiest_util,events,wall_seconds\n", f);
    for (int i = 0; i < n; i++) {
        const cs_compare_row_t *r = &rows[i].r;
        if (r->rc)
            continue;
        cs_csv_field(f, r->name);
        fputc(',', f);
        cs_csv_field(f, r->norm);
        fprintf(f, ",%s,%s,%lld,%d,%lld,%.9g,%.9g,%.9g,", a->req.coll, algo, (long long)r->bytes,
                r->ranks, (long long)r->ticks, r->seconds, r->bandwidth, r->busbw);
        cs_csv_field(f, r->link);
        fprintf(f, ",%.6f,%llu,%.6f\n", r->link_util, (unsigned long long)r->events, r->wall);
    }
}

/* The rank count every row that ran has, or -1 when they differ (0: none
 * ran). */
static int common_ranks(const compare_row_t *rows, int n)
{
    int P = 0;
    for (int i = 0; i < n; i++)
        if (!rows[i].r.rc) {
            if (P && rows[i].r.ranks != P)
                return -1;
            P = rows[i].r.ranks;
        }
    return P;
}

/* The chart: bars at one size, lines over several.  rows are machine by
 * machine, size by size. */
static int write_plot(const compare_args_t *a, const compare_row_t *rows, const char *algo,
                      cs_error_t *err)
{
    int nm = a->nspecs, ns = a->nsizes, k = 0, rc;
    const char **labels = cs_calloc((size_t)nm + 1, sizeof *labels);
    const char **engines = cs_calloc((size_t)nm * ns + 1, sizeof *engines);
    double *values = cs_calloc((size_t)nm * ns + 1, sizeof *values);
    char (*names)[128] = cs_calloc((size_t)nm + 1, sizeof *names);
    char engtext[160];
    int P = common_ranks(rows, nm * ns), ne = 0;
    for (int i = 0; i < nm * ns; i++)
        if (!rows[i].r.rc)
            engines[ne++] = rows[i].r.engine;
    cs_compare_engines_text(engines, ne, engtext, sizeof engtext);
    cs_compare_figure_t fig = {a->title, a->req.coll, algo, P, engtext, a->logy, a->ticks,
                               a->elements4, NULL, a->y};
    for (int m = 0; m < nm; m++) {
        const compare_row_t *r = &rows[m * ns];
        int any = 0, first = -1;
        for (int i = 0; i < ns; i++)
            if (!r[i].r.rc) {
                any = 1;
                if (first < 0)
                    first = i;
            }
        if (!any)
            continue; /* failed at every size: left out, as in the table */
        /* the ranks beside each name when they differ between machines */
        if (P >= 0)
            snprintf(names[k], sizeof names[k], "%s", r[first].r.name);
        else
            snprintf(names[k], sizeof names[k], "%s (%d ranks)", r[first].r.name,
                     r[first].r.ranks);
        labels[k] = names[k];
        for (int i = 0; i < ns; i++) {
            const cs_compare_row_t *ri = &r[i].r;
            double v = ri->rc ? NAN : a->ticks ? (double)ri->ticks : ri->seconds;
            /* --y: nccl-tests' bandwidths, which the rows hold (0: none) */
            if (!ri->rc && a->y != CS_FIGURES_Y_TIME) {
                v = a->y == CS_FIGURES_Y_ALGBW ? ri->bandwidth : ri->busbw;
                v = v > 0 ? v : NAN;
            }
            values[(size_t)k * ns + i] = v;
        }
        k++;
    }
    if (ns == 1) {
        rc = cs_compare_plot_bars(a->plot, &fig, a->sizes[0], k, labels, values, err);
    } else {
        char xlabel[96];
        cs_coll_kind_t kind = CS_COLL_ALLREDUCE;
        cs_error_t none;
        cs_coll_parse(a->req.coll, &kind, &none);
        snprintf(xlabel, sizeof xlabel, "%s (%s)", cs_figures_size_meaning(kind),
                 a->elements4 ? "4-byte elements" : "bytes");
        fig.xlabel = xlabel;
        rc = cs_compare_plot_lines(a->plot, &fig, ns, a->sizes, k, labels, values, err);
    }
    if (rc)
        cs_error_prefix(err, "--plot");
    free(labels);
    free(engines);
    free(names);
    free(values);
    return rc;
}

/* ---- the rows as points (par.h) ------------------------------------------------ */

typedef struct compare_ctx {
    compare_args_t *a;
    compare_row_t *rows;
    int nrows, first_rc;
    cs_app_progress_t *progress;
} compare_ctx_t;

/* Row i (machine i / nsizes at size i % nsizes): its outcome, its run's
 * JSON and its heatmap's path as fields. */
static cs_rec_t *compare_run(void *ctx, int i, int worker)
{
    compare_ctx_t *c = ctx;
    const compare_args_t *a = c->a;
    int mi = i / a->nsizes;
    compare_row_t row;
    cs_error_t e = {0};
    cs_rec_t *r = cs_rec_new();
    memset(&row, 0, sizeof row);
    row.r.spec = a->specs[mi];
    row.r.bytes = a->sizes[i % a->nsizes];
    snprintf(row.r.name, sizeof row.r.name, "%s", a->specs[mi]);
    if (cs_app_interrupted()) {
        cs_rec_put_int(r, "rc", CS_ERR_CANCELLED);
        cs_rec_put_str(r, "err", "not run: interrupted");
        cs_rec_put_int(r, "before", 1);
        return r;
    }
    cs_app_progress_t quiet, *p = c->progress;
    if (worker) { /* a worker draws no progress line; cancellation stays */
        cs_app_progress_init(&quiet, "compare");
        quiet.quiet = 1;
        p = &quiet;
    } else {
        snprintf(p->what, sizeof p->what, "compare %d/%d: %.60s", i + 1, c->nrows,
                 a->specs[mi]);
        cs_app_progress_show(p, (double)i / c->nrows, NULL);
    }
    row.r.rc = compare_one(a, mi, &row, p, &e);
    cs_rec_put_int(r, "rc", row.r.rc);
    cs_rec_put_str(r, "err", row.r.rc ? e.msg : "");
    cs_rec_put_str(r, "name", row.r.name);
    cs_rec_put_str(r, "norm", row.r.norm);
    cs_rec_put_int(r, "ranks", row.r.ranks);
    cs_rec_put_int(r, "ticks", (int64_t)row.r.ticks);
    cs_rec_put_real(r, "seconds", row.r.seconds);
    cs_rec_put_real(r, "bandwidth", row.r.bandwidth);
    cs_rec_put_real(r, "busbw", row.r.busbw);
    cs_rec_put_str(r, "link", row.r.link);
    cs_rec_put_real(r, "link_util", row.r.link_util);
    cs_rec_put_int(r, "events", (int64_t)row.r.events);
    cs_rec_put_real(r, "wall", row.r.wall);
    cs_rec_put_str(r, "engine", row.r.engine);
    cs_rec_put_str(r, "heatmap", row.heatmap);
    cs_rec_put_real(r, "vmax", row.vmax);
    if (row.json)
        cs_rec_put(r, "json", row.json, row.json_len);
    free(row.json);
    if (row.run) { /* kept for a shared heatmap range: in this process only */
        cs_request_run_destroy(row.run);
        free(row.run);
    }
    return r;
}

/* Row i failed: reported as the serial comparison reports it, naming the
 * machine (and size); the first failure is the exit status. */
static void compare_report(compare_ctx_t *c, int i)
{
    const compare_args_t *a = c->a;
    const compare_row_t *row = &c->rows[i];
    int mi = i / a->nsizes;
    cs_error_t e;
    cs_error_set(&e, row->r.rc, "%s", row->r.err);
    cs_app_progress_done(c->progress);
    /* name the machine, unless its error quotes the spec already
     * ("spec \"x\": ...": the spec twice helps no one) */
    if (!strstr(e.msg, a->specs[mi]))
        cs_error_prefix(&e, "%s", a->specs[mi]);
    if (a->nsizes > 1) {
        char size[32];
        cs_units_format_bytes(row->r.bytes, size, sizeof size);
        cs_error_prefix(&e, "at %s", size);
    }
    cs_app_report(&e);
    if (c->first_rc == CS_OK)
        c->first_rc = row->r.rc;
}

/* The largest sizes go to the workers first (par.h). */
static double compare_cost(void *ctx, int i)
{
    const compare_ctx_t *c = ctx;
    return (double)c->a->sizes[i % c->a->nsizes];
}

static int compare_take(void *ctx, int i, const cs_rec_t *r, cs_error_t *err)
{
    compare_ctx_t *c = ctx;
    compare_row_t *row = &c->rows[i];
    (void)err;
    row->r.rc = (int)cs_rec_int(r, "rc", CS_ERR_INTERNAL);
    cs_rec_copy(r, "err", row->r.err, sizeof row->r.err);
    if (cs_rec_int(r, "before", 0))
        return CS_OK; /* interrupted: the row says so, nothing reported */
    cs_rec_copy(r, "name", row->r.name, sizeof row->r.name);
    cs_rec_copy(r, "norm", row->r.norm, sizeof row->r.norm);
    row->r.ranks = (int)cs_rec_int(r, "ranks", 0);
    row->r.ticks = (cs_tick_t)cs_rec_int(r, "ticks", 0);
    row->r.seconds = cs_rec_real(r, "seconds", 0);
    row->r.bandwidth = cs_rec_real(r, "bandwidth", 0);
    row->r.busbw = cs_rec_real(r, "busbw", 0);
    cs_rec_copy(r, "link", row->r.link, sizeof row->r.link);
    row->r.link_util = cs_rec_real(r, "link_util", 0);
    row->r.events = (uint64_t)cs_rec_int(r, "events", 0);
    row->r.wall = cs_rec_real(r, "wall", 0);
    cs_rec_copy(r, "engine", row->r.engine, sizeof row->r.engine);
    cs_rec_copy(r, "heatmap", row->heatmap, sizeof row->heatmap);
    row->vmax = cs_rec_real(r, "vmax", 0);
    size_t len = 0;
    const char *js = cs_rec_get(r, "json", &len);
    if (js) {
        row->json = cs_malloc(len + 1);
        memcpy(row->json, js, len);
        row->json[len] = '\0';
        row->json_len = len;
    }
    if (row->r.rc)
        compare_report(c, i);
    return CS_OK;
}

int cs_app_cmd_compare(int argc, char **argv)
{
    return cs_app_compare_main(argc, argv, NULL);
}

int cs_app_compare_main(int argc, char **argv, const cs_shard_set_t *merged)
{
    compare_args_t a;
    cs_par_t par;
    cs_error_t err = {0};
    int rc = CS_OK, first_rc = CS_OK;
    cs_app_progress_t progress;
    const char *algo = NULL;
    const cs_coll_algo_t *al;
    cs_coll_algo_t *al_file = NULL; /* owned: --algo FORMAT:FILE */
    cs_coll_kind_t kind;
    int which = -1; /* the machine that sets the common rank count */

    cs_par_args("compare", &argc, argv, CS_PAR_SHARD, &par);
    cs_par_set_merged(&par, merged);
    compare_parse_args(argc, argv, &a);
    if (a.heatmaps && (par.jobs > 1 || par.mpi || par.nshards || par.merged))
        cs_app_usage_error("compare", "--heatmaps is drawn from the runs of this process: "
                           "give it without --jobs, --shard or --mpi");
    /* the collective and algorithm hold for every machine: checked once */
    if ((rc = cs_coll_parse(a.req.coll, &kind, &err)) == CS_OK &&
        (rc = cs_request_find_algo(kind, a.req.algo, NULL, &al, &al_file, &err)) == CS_OK)
        algo = al->name;
    if (rc == CS_OK)
        rc = cs_figures_check_y(a.y, kind, &err);
    if (rc == CS_OK && kind != CS_COLL_BARRIER && !a.bytes_text)
        rc = cs_error_set(&err, CS_ERR_USAGE, "missing --bytes N for %s", cs_coll_name(kind));
    if (rc == CS_OK) /* a merge: the shards are this run's, or nothing is printed */
        rc = cs_par_check(&par, a.nspecs * a.nsizes, &err);
    cs_outdir_t *hdir = NULL;
    if (rc == CS_OK && a.heatmaps && (rc = cs_outdir_open("--heatmaps", a.heatmaps, &hdir, &err)) == CS_OK)
        a.heatmaps_tmp = cs_outdir_path(hdir);
    if (rc) {
        free(a.spec_buf);
        cs_algofile_free(al_file);
        cs_par_destroy(&par);
        return cs_app_report(&err);
    }
    /* like for like: without --ranks, the most that every machine holds */
    if (!a.req.ranks && !a.ranks_all)
        a.req.ranks = cs_compare_common_ranks(a.specs, a.nspecs, NULL, &which);
    int nrows = a.nspecs * a.nsizes;
    compare_row_t *rows = cs_calloc((size_t)nrows, sizeof *rows);
    cs_app_progress_init(&progress, "compare");
    progress.quiet = a.quiet;
    for (int i = 0; i < nrows; i++) {
        int mi = i / a.nsizes;
        rows[i].r.spec = a.specs[mi];
        rows[i].r.bytes = a.sizes[i % a.nsizes];
        rows[i].r.rc = CS_ERR_CANCELLED;
        snprintf(rows[i].r.name, sizeof rows[i].r.name, "%s", a.specs[mi]);
        snprintf(rows[i].r.err, sizeof rows[i].r.err, "not run: interrupted");
    }
    compare_ctx_t ctx = {&a, rows, nrows, CS_OK, &progress};
    cs_par_ops_t ops = {.run = compare_run, .take = compare_take, .ctx = &ctx,
                        .cost = compare_cost};
    if (par.jobs == 1 && !par.mpi && !par.nshards && !par.merged) {
        /* here, one row after another (a shared heatmap range keeps the runs) */
        for (int i = 0; i < nrows; i++) {
            int mi = i / a.nsizes;
            if (cs_app_interrupted())
                continue;
            snprintf(progress.what, sizeof progress.what, "compare %d/%d: %.60s", i + 1, nrows,
                     a.specs[mi]);
            cs_app_progress_show(&progress, (double)i / nrows, NULL);
            cs_error_t e = {0};
            rows[i].r.rc = compare_one(&a, mi, &rows[i], &progress, &e);
            if (rows[i].r.rc) {
                snprintf(rows[i].r.err, sizeof rows[i].r.err, "%s", e.msg);
                compare_report(&ctx, i);
            }
        }
    } else {
        cs_error_t e = {0};
        rc = cs_par_run(&par, &ops, nrows, &progress, &e);
        if (!cs_par_writes(&par)) {
            cs_app_progress_done(&progress);
            if (rc)
                cs_app_report(&e);
            for (int i = 0; i < nrows; i++)
                free(rows[i].json);
            free(rows);
            free(a.spec_buf);
            cs_algofile_free(al_file);
            cs_outdir_abort(hdir);
            cs_par_destroy(&par);
            return rc;
        }
        if (rc && rc != CS_ERR_CANCELLED)
            cs_app_report(&e);
        if (rc && first_rc == CS_OK)
            first_rc = rc;
    }
    first_rc = first_rc ? first_rc : ctx.first_rc;
    cs_app_progress_done(&progress);
    if (a.heatmaps && (rc = compare_shared_heatmaps(&a, rows)) && first_rc == CS_OK)
        first_rc = rc;
    rc = CS_OK;

    /* the rank count, said before the table; mixed counts flagged here and
     * on standard error, whatever the output */
    int P = common_ranks(rows, nrows);
    if (P < 0)
        fprintf(stderr, "collsim: compare: note: the machines ran different rank counts "
                        "(--ranks all): their times are not like for like\n");
    if (!a.to_stdout) {
        if (P < 0) {
            printf("ranks: each machine all its nodes (--ranks all):");
            for (int i = 0; i < nrows; i += a.nsizes)
                if (!rows[i].r.rc)
                    printf(" %d", rows[i].r.ranks);
            printf("\n");
        } else if (P > 0 && which >= 0) {
            char mach[96] = "";
            for (int i = 0; i < a.nsizes; i++)
                if (!rows[which * a.nsizes + i].r.rc)
                    snprintf(mach, sizeof mach, "%s", rows[which * a.nsizes + i].r.name);
            printf("ranks: %d on every machine, the most that every machine holds (%s holds %d)\n",
                   P, mach[0] ? mach : a.specs[which], P);
        } else if (P > 0) {
            printf("ranks: %d on every machine (--ranks)\n", P);
        }
        print_table(stdout, &a, rows, nrows);
        if (a.req.validate)
            printf("validation: the final data placement of every run above was checked: ok\n");
    }
    /* interrupted: no output at all (whole or absent) */
    if ((rc = cs_app_check_interrupt(&err)) == CS_OK && a.csv) {
        cs_app_out_t out;
        if ((rc = cs_app_out_open("--csv", a.csv, &out, &err)) == CS_OK) {
            print_csv(out.f, &a, rows, nrows, algo);
            rc = cs_app_out_close(&out, rc, &err);
        }
    }
    if (rc == CS_OK && a.markdown) {
        cs_app_out_t out;
        if ((rc = cs_app_out_open("--markdown", a.markdown, &out, &err)) == CS_OK) {
            print_markdown(out.f, &a, rows, nrows);
            rc = cs_app_out_close(&out, rc, &err);
        }
    }
    if (rc == CS_OK && a.json) {
        cs_app_out_t out;
        if ((rc = cs_app_out_open("--json", a.json, &out, &err)) == CS_OK) {
            int k = 0;
            cs_compare_json_begin(out.f, a.req.coll, algo, a.sizes, a.nsizes);
            for (int i = 0; i < nrows; i++)
                if (!rows[i].r.rc) /* a failed machine is left out, as in the table */
                    fprintf(out.f, "%s%s", k++ ? ",\n" : "", rows[i].json);
            cs_compare_json_end(out.f);
            rc = cs_app_out_close(&out, rc, &err);
        }
    }
    if (rc == CS_OK && a.plot)
        rc = write_plot(&a, rows, algo, &err);
    if (rc == CS_OK)
        rc = cs_outdir_commit(hdir, &err);
    else
        cs_outdir_abort(hdir);
    if (rc == CS_OK) {
        /* every file written is named (docs/cli.md: "wrote FILE"); on
         * standard error, which carries no data, unless --quiet */
        cs_app_wrote(&progress, a.csv, "CSV");
        cs_app_wrote(&progress, a.markdown, "Markdown");
        cs_app_wrote(&progress, a.json, "JSON");
        cs_app_wrote(&progress, a.plot, "chart");
        for (int i = 0; a.heatmaps && i < nrows; i++)
            if (!rows[i].r.rc)
                cs_app_wrote(&progress, rows[i].heatmap, "heatmap");
    }
    if (a.plot || a.heatmaps)
        cs_plot_cleanup();
    if (rc)
        cs_app_report(&err);
    else
        rc = first_rc;
    for (int i = 0; i < nrows; i++)
        free(rows[i].json);
    free(rows);
    free(a.spec_buf);
    cs_algofile_free(al_file);
    cs_par_destroy(&par);
    return rc;
}
