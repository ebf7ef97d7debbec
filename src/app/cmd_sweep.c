/*
 * cmd_sweep.c - `collsim sweep`: one collective on one machine with several
 * algorithms over a range of sizes, the data of a "time against message
 * size" figure.
 *
 * Every point is exactly a `collsim run --coll C --algo A --bytes N`: the
 * collective is prepared by the same code (the request path, api/request.h),
 * once per algorithm, and each size only changes args.bytes before
 * cs_request_coll_build.  Results go out as CSV rows, written and flushed as they
 * come (a long sweep can be watched or cut short), and as a log-log plot
 * with one line per algorithm (src/io/plot.h) at the end.
 *
 * With --machines, the same sweep runs on each machine in turn and the
 * plot overlays them: times in seconds (one machine's ticks are not
 * another's; --unit ticks on request), the same rank count on every machine
 * (--ranks, or the most that every machine holds, as `collsim compare`),
 * the engines that ran named in the title.
 *
 * Everything a user can get wrong in the options (sizes, algorithm names,
 * option keys, the plot's file type) is checked before the first run, so
 * that a mistake never costs a half-finished sweep.
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
#include "api/sweep.h"
#include "app/app.h"
#include "app/par.h"
#include "coll/bandwidth.h"
#include "coll/coll.h"
#include "engine/net.h"
#include "core/units.h"
#include "io/algofile.h"
#include "io/csv.h"
#include "io/plot.h"
#include "machines/machine.h"

#define SWEEP_MAX_ALGOS 64
#define SWEEP_MAX_SIZES CS_SIZES_MAX
#define SWEEP_MAX_RANKS 64
#define SWEEP_MAX_MACHINES 16

/* Everything the command line says.  Fixed arrays rather than allocations,
 * so that option errors can exit at once without leaks. */
typedef struct sweep_args {
    int quiet; /* --quiet: no progress line, no "wrote FILE" */
    /* machine, collective, order, root, mode and the --opt texts as typed
     * ([ALGO:]KEY=VALUE); each algorithm's request is made from it */
    cs_request_t req;
    const char *bytes_text;
    const char *specs[SWEEP_MAX_MACHINES]; /* --machine, or --machines split */
    int nspecs;
    char spec_buf[4096];              /* --machines split in place */
    int ticks;                        /* --unit ticks: y in machine ticks */
    cs_figures_y_t y;                 /* --y: time, algbw or busbw */
    const char *csv, *plot, *title, *xlabel, *ylabel, *json;
    int64_t ranks[SWEEP_MAX_RANKS];   /* ascending, distinct; none: every node */
    int nranks;
    int elements4, keep_going, predict;
    cs_coll_kind_t kind;
    const cs_coll_algo_t *algos[SWEEP_MAX_ALGOS];
    cs_coll_algo_t *algo_files[SWEEP_MAX_ALGOS]; /* owned: read from FORMAT:FILE */
    int nalgos;
    int64_t sizes[SWEEP_MAX_SIZES];   /* ascending, distinct */
    int nsizes;
} sweep_args_t;

static void sweep_help(void)
{
    printf("Usage: collsim sweep (--machine SPEC | --machines SPEC;SPEC;...) --coll NAME\n"
           "                     --algos A,B,... --bytes SIZES [OPTIONS]\n"
           "\n"
           "Runs a collective with several algorithms over a range of sizes (and of rank\n"
           "counts); writes one CSV row per run (machine,coll,algo,bytes,ranks,ticks,\n"
           "seconds,events,algbw_bytes_per_s,busbw_bytes_per_s: nccl-tests' bandwidths,\n"
           "docs/bandwidth.md) and a log-log plot of time against size, one line per\n"
           "algorithm (and rank count, and machine), or against ranks when there is a\n"
           "single size.\n"
           "\n"
           "  -m, --machine SPEC     machine, e.g. alphabeta:topo=ring,p=8\n"
           "      --machines LIST    several machines, specs separated by ';' (at most %d):\n"
           "                         the same sweep on each, overlaid in one plot, all\n"
           "                         with the same rank count\n"
           "      --coll NAME        the collective (see 'collsim list algorithms')\n"
           "  -a, --algos LIST       algorithms, comma-separated, or 'all' (every algorithm\n"
           "                         of the collective but those that need switches that\n"
           "                         reduce in the network, which are named); nccl: NCCL's\n"
           "                         choice at each size (docs/nccl.md): the crossovers of\n"
           "                         the others and the sizes where NCCL's pick is not the\n"
           "                         fastest are printed on standard error and marked in\n"
           "                         the plot\n"
           "  -b, --bytes SIZES      sizes, as 'collsim run --bytes' means them: a list\n"
           "                         (4,64,1KiB) of sizes and ranges; LO..HI:xF multiplies\n"
           "                         by F from LO while <= HI (8..1MiB:x2), LO..HI:+S adds S\n"
           "                         (1KiB..8KiB:+1KiB); LO..HI alone is LO..HI:x2\n"
           "      --root R           root rank of rooted collectives (default 0)\n"
           "      --ranks LIST       ranks: one count, or a list and ranges as for --bytes\n"
           "                         (4,8,16 or 2..64:x2); default: every node (with\n"
           "                         --machines: the most that every machine holds)\n"
           "      --order ORDER      placement, as for 'collsim run'\n"
           "      --opt [ALGO:]KEY=VALUE\n"
           "                         an algorithm option (repeatable); with ALGO: only for\n"
           "                         that algorithm, otherwise for every one\n"
           "  -M, --mode MODE        network fidelity: packet (default) or fluid\n"
           "      --force            run a packet-mode run above the work limit (docs/limits.md)\n"
           "      --keep-going       a point that fails is reported and left out; the\n"
           "                         exit status is still that of the first failure\n"
           "      --predict          also the machine's closed-form model of every point:\n"
           "                         CSV columns model_ticks, model_seconds (empty where\n"
           "                         the machine has none) and a line 'ALGO (model)' per\n"
           "                         algorithm in the plot\n"
           "\n"
           "Output:\n"
           "      --csv FILE         write the CSV to FILE ('-' = stdout; the default\n"
           "                         unless --plot is given)\n"
           "  -j, --json FILE        the points as one JSON document ('-' = stdout):\n"
           "                         {\"machine\", \"coll\", \"points\": [...]}, each point the\n"
           "                         JSON of 'collsim run --json', timing written as 0\n"
           "                         (docs/api.md)\n"
           "      --plot FILE        draw the plot; the format follows the extension:\n"
           "                         .png, .svg or .pdf (.csv: the plotted numbers)\n"
           "      --title TEXT       plot title (default: collective, machine, ranks, mode;\n"
           "                         '' for none)\n"
           "      --xlabel TEXT      x axis label (default: what the size means)\n"
           "      --ylabel TEXT      y axis label (default: 'time', or 'time (ticks)', or\n"
           "                         the bandwidth's name)\n"
           "      --y QUANTITY       the plot's y axis: time (default), algbw or busbw\n"
           "                         (nccl-tests' algorithm and bus bandwidths of each\n"
           "                         point, B/s with decimal prefixes: 1 GB/s = 1e9 B/s;\n"
           "                         docs/bandwidth.md)\n"
           "      --unit UNIT        x axis unit: bytes (default) or elements4 (bytes/4,\n"
           "                         32-bit elements such as Cerebras wavelets); y axis\n"
           "                         unit: seconds (default, ns/µs/ms/s) or ticks (the\n"
           "                         machine's own, cycles on Cerebras and CNS-1); may be\n"
           "                         given twice (--unit elements4 --unit ticks)\n"
           "      --quiet            no progress line, no \"wrote FILE\" on standard error\n"
           "  -h, --help             show this help and exit\n"
           "\n"
           "A progress bar is shown on standard error when it is a terminal and the sweep\n"
           "takes more than a second.\n",
           SWEEP_MAX_MACHINES);
    cs_par_help(stdout, CS_PAR_SHARD);
    printf("\nExit status: 0 ok, 2 usage or input error, 3 deadlock, 5 model error.\n");
}

/* ---- algorithms and options ------------------------------------------------ */

/* --algos: names of the collective's algorithms, or "all". */
static void sweep_parse_algos(const char *text, sweep_args_t *a)
{
    cs_error_t err = {0};
    const char *p = text;
    if (!strcmp(text, "all")) {
        int n;
        const cs_coll_algo_t *const *all = cs_coll_algos(&n);
        /* the in-network algorithms need a machine with reducing switches
         * (docs/nccl.md): named, not by 'all' */
        for (int i = 0; i < n; i++)
            if (all[i]->kind == a->kind && a->nalgos < SWEEP_MAX_ALGOS &&
                !cs_coll_needs_switches(all[i]))
                a->algos[a->nalgos++] = all[i];
        if (a->nalgos == 0)
            cs_app_usage_error("sweep", "--algos all: no algorithm implements %s",
                               cs_coll_name(a->kind));
        return;
    }
    for (;;) {
        char name[128];
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof name)
            cs_app_usage_error("sweep", "--algos '%s': %s algorithm name", text,
                               len ? "overlong" : "empty");
        memcpy(name, p, len);
        name[len] = '\0';
        if (a->nalgos == SWEEP_MAX_ALGOS)
            cs_app_usage_error("sweep", "--algos: at most %d algorithms", SWEEP_MAX_ALGOS);
        if (cs_request_find_algo(a->kind, name, NULL, &a->algos[a->nalgos],
                                 &a->algo_files[a->nalgos], &err) != CS_OK)
            cs_app_usage_error("sweep", "--algos: %s", err.msg);
        for (int i = 0; i < a->nalgos; i++)
            if (a->algos[i] == a->algos[a->nalgos] || !strcmp(a->algos[i]->name, name))
                cs_app_usage_error("sweep", "--algos: '%s' is listed twice", name);
        a->nalgos++;
        if (!p[len])
            break;
        p += len + 1;
    }
}

/* Every --opt must name an algorithm of --algos when scoped, and a key that
 * each algorithm it applies to takes: checked here, before any run, rather
 * than by cs_coll_build at the first point of the algorithm concerned. */
static void sweep_check_opts(const sweep_args_t *a)
{
    cs_error_t err;
    if (cs_sweep_check_opts(a->req.opts, a->req.nopts, a->algos, a->nalgos, 1,
                            &err) != CS_OK)
        cs_app_usage_error("sweep", "%s", err.msg);
}

static void sweep_parse_args(int argc, char **argv, sweep_args_t *a)
{
    enum {
        OPT_RANKS = 256, OPT_OPT, OPT_CSV, OPT_PLOT, OPT_TITLE, OPT_XLABEL,
        OPT_YLABEL, OPT_UNIT, OPT_KEEP_GOING, OPT_PREDICT, OPT_MACHINES, OPT_QUIET, OPT_Y
    };
    static const struct option longopts[] = {
        {"machine", required_argument, NULL, 'm'},
        {"machines", required_argument, NULL, OPT_MACHINES},
        {"coll", required_argument, NULL, CS_APP_OPT_COLL},
        {"algos", required_argument, NULL, 'a'},
        {"bytes", required_argument, NULL, 'b'},
        {"root", required_argument, NULL, CS_APP_OPT_ROOT},
        {"ranks", required_argument, NULL, OPT_RANKS},
        {"order", required_argument, NULL, CS_APP_OPT_ORDER},
        {"opt", required_argument, NULL, OPT_OPT},
        {"mode", required_argument, NULL, 'M'},
        {"force", no_argument, NULL, CS_APP_OPT_FORCE},
        {"keep-going", no_argument, NULL, OPT_KEEP_GOING},
        {"predict", no_argument, NULL, OPT_PREDICT},
        {"csv", required_argument, NULL, OPT_CSV},
        {"plot", required_argument, NULL, OPT_PLOT},
        {"json", required_argument, NULL, 'j'},
        {"title", required_argument, NULL, OPT_TITLE},
        {"xlabel", required_argument, NULL, OPT_XLABEL},
        {"ylabel", required_argument, NULL, OPT_YLABEL},
        {"unit", required_argument, NULL, OPT_UNIT},
        {"y", required_argument, NULL, OPT_Y},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"help", no_argument, NULL, 'h'},
        CS_PAR_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    cs_error_t err = {0};
    const char *algos = NULL, *machines = NULL;
    int c;

    memset(a, 0, sizeof *a);
    cs_request_init(&a->req);
    while ((c = getopt_long(argc, argv, ":m:a:b:M:j:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'a': algos = optarg; break;
        case OPT_MACHINES: machines = optarg; break;
        case 'b': a->bytes_text = optarg; break;
        case OPT_KEEP_GOING: a->keep_going = 1; break;
        case OPT_PREDICT: a->predict = 1; break;
        case OPT_CSV: a->csv = optarg; break;
        case OPT_PLOT: a->plot = optarg; break;
        case 'j': a->json = optarg; break;
        case OPT_TITLE: a->title = optarg; break;
        case OPT_XLABEL: a->xlabel = optarg; break;
        case OPT_YLABEL: a->ylabel = optarg; break;
        case OPT_RANKS: {
            int64_t r[SWEEP_MAX_SIZES];
            int n = 0;
            if (cs_sizes_parse(optarg, r, &n, &err) != CS_OK)
                cs_app_usage_error("sweep", "--ranks '%s': %s", optarg, err.msg);
            if (n == 0 || r[0] < 1)
                cs_app_usage_error("sweep", "--ranks '%s': need at least 1 rank", optarg);
            if (n > SWEEP_MAX_RANKS)
                cs_app_usage_error("sweep", "--ranks '%s': %d rank counts, at most %d", optarg,
                                   n, SWEEP_MAX_RANKS);
            memcpy(a->ranks, r, (size_t)n * sizeof *r);
            a->nranks = n;
            break;
        }
        case OPT_OPT: cs_app_add_opt("sweep", &a->req, optarg); break;
        case OPT_UNIT:
            if (!strcmp(optarg, "bytes"))
                a->elements4 = 0;
            else if (!strcmp(optarg, "elements4"))
                a->elements4 = 1;
            else if (!strcmp(optarg, "seconds") || !strcmp(optarg, "s"))
                a->ticks = 0;
            else if (!strcmp(optarg, "ticks"))
                a->ticks = 1;
            else
                cs_app_usage_error("sweep", "--unit: unknown unit '%s'; valid: bytes, "
                                   "elements4 (sizes), seconds, ticks (times)", optarg);
            break;
        case OPT_Y:
            if (cs_figures_parse_y(optarg, &a->y, &err) != CS_OK)
                cs_app_usage_error("sweep", "%s", err.msg);
            break;
        case OPT_QUIET: a->quiet = 1; break;
        case 'h': sweep_help(); exit(0);
        default: cs_app_option("sweep", &a->req, c, argv, longopts);
        }
    }
    cs_app_no_operands("sweep", argc, argv);
    if (a->req.machine && machines)
        cs_app_usage_error("sweep", "--machine and --machines: give one");
    if (machines) {
        if (strlen(machines) >= sizeof a->spec_buf)
            cs_app_usage_error("sweep", "--machines: overlong list (at most %zu characters)",
                               sizeof a->spec_buf - 1);
        snprintf(a->spec_buf, sizeof a->spec_buf, "%s", machines);
        a->nspecs = cs_app_split_list(a->spec_buf, " ", a->specs, SWEEP_MAX_MACHINES);
        if (a->nspecs < 0)
            cs_app_usage_error("sweep", "--machines: at most %d machines", SWEEP_MAX_MACHINES);
        if (a->nspecs == 0)
            cs_app_usage_error("sweep", "--machines '%s': no machine spec", machines);
        a->req.machine = a->specs[0];
    } else if (a->req.machine) {
        a->specs[a->nspecs++] = a->req.machine;
    } else {
        cs_app_usage_error("sweep", "missing --machine SPEC (or --machines SPEC;SPEC;...)");
    }
    if (!a->req.coll)
        cs_app_usage_error("sweep", "missing --coll NAME");
    if (!algos)
        cs_app_usage_error("sweep", "missing --algos A,B,... (or --algos all)");
    if (!a->bytes_text)
        cs_app_usage_error("sweep", "missing --bytes SIZES (e.g. 8..1MiB:x2 or 4,64,1024)");
    if (cs_coll_parse(a->req.coll, &a->kind, &err) != CS_OK)
        cs_app_usage_error("sweep", "--coll: %s", err.msg);
    if (a->req.has_root && !cs_coll_rooted(a->kind))
        cs_app_usage_error("sweep", "--root: %s has no root (rooted collectives: broadcast, "
                           "reduce, gather, scatter)", cs_coll_name(a->kind));
    if (cs_figures_check_y(a->y, a->kind, &err) != CS_OK)
        cs_app_usage_error("sweep", "%s", err.msg);
    if (a->y != CS_FIGURES_Y_TIME && a->ticks)
        cs_app_usage_error("sweep", "--y %s and --unit ticks: a bandwidth is in bytes per "
                           "second, ticks are times; give one", cs_figures_y_name(a->y));
    if (a->y != CS_FIGURES_Y_TIME && !a->plot)
        cs_app_usage_error("sweep", "--y %s is what --plot draws; the CSV and JSON have "
                           "every quantity: add --plot FILE", cs_figures_y_name(a->y));
    sweep_parse_algos(algos, a);
    sweep_check_opts(a);
    if (a->plot && cs_plot_check_path(a->plot, &err) != CS_OK)
        cs_app_usage_error("sweep", "--plot: %s", err.msg);
    if (cs_sizes_parse(a->bytes_text, a->sizes, &a->nsizes, &err) != CS_OK)
        cs_app_usage_error("sweep", "--bytes '%s': %s", a->bytes_text, err.msg);
    if (a->nsizes == 0)
        cs_app_usage_error("sweep", "--bytes '%s': no sizes", a->bytes_text);
    if (!a->csv && !a->plot && !a->json)
        a->csv = "-";
    if (a->csv && a->json && !strcmp(a->csv, "-") && !strcmp(a->json, "-"))
        cs_app_usage_error("sweep", "--csv - and --json - both want standard output");
}

/* ---- running ----------------------------------------------------------------- */

/* The plot (cs_sweep_plot, with --plot) and, with NCCL's choice among the
 * algorithms, its crossovers as text (cs_sweep_crossovers_text): ticks is [machine][algo][ranks][size]; Ps[machine][ranks]
 * the rank counts the preparations gave; tick_s[machine] each machine's
 * clock; engines[machine] the engine that ran; shorts[machine] its short
 * name; model NULL without --predict. */
static int sweep_write_plot(const sweep_args_t *a, int nr, int (*Ps)[SWEEP_MAX_RANKS],
                            const double *tick_s, const char (*engines)[48],
                            const char (*shorts)[96], const double *ticks, const double *model,
                            cs_error_t *err)
{
    int nm = a->nspecs, rc;
    int *ranks = cs_malloc((size_t)nm * (size_t)nr * sizeof *ranks);
    const char *eng[SWEEP_MAX_MACHINES], *sh[SWEEP_MAX_MACHINES], *names[SWEEP_MAX_ALGOS];
    for (int mi = 0; mi < nm; mi++) {
        eng[mi] = engines[mi];
        sh[mi] = shorts[mi];
        for (int j = 0; j < nr; j++)
            ranks[mi * nr + j] = Ps[mi][j];
    }
    for (int k = 0; k < a->nalgos; k++)
        names[k] = a->algos[k]->name;
    int with_nccl = 0;
    for (int k = 0; k < a->nalgos; k++)
        with_nccl |= !strcmp(names[k], "nccl");
    cs_sweep_figure_t fig = {a->title, a->xlabel, a->ylabel, a->kind, nm, a->specs, sh, eng,
                             tick_s, a->nalgos, names, nr, ranks, a->nsizes, a->sizes,
                             a->ticks, a->elements4, a->y, with_nccl};
    /* NCCL's choice among the algorithms: where the fastest changes and
     * where NCCL's pick is not the fastest, on standard error (the CSV
     * is on standard output) */
    if (with_nccl && !a->quiet)
        cs_sweep_crossovers_text(stderr, &fig, ticks);
    rc = CS_OK;
    if (a->plot && (rc = cs_sweep_plot(a->plot, &fig, ticks, model, err)))
        cs_error_prefix(err, "--plot");
    cs_plot_cleanup(); /* the command ends here: no leak reports from font caches */
    free(ranks);
    return rc;
}

/* One CSV row of a point that ran. */
static void sweep_csv_row(FILE *f, const sweep_args_t *a, const cs_machine_t *m, int k, int P,
                          int64_t bytes, const cs_exec_result_t *res, const double *model,
                          const cs_model_t *mo)
{
    cs_bandwidth_t bw;
    double seconds = (double)res->finish * m->tick_seconds;
    cs_bandwidth_of(a->kind, P, bytes, seconds, &bw);
    cs_csv_field(f, m->spec); /* specs hold commas */
    fprintf(f, ",%s,%s,%lld,%d,%lld,%.9g,%llu", cs_coll_name(a->kind), a->algos[k]->name,
            (long long)bytes, P, (long long)res->finish, seconds,
            (unsigned long long)res->events);
    /* nccl-tests' algbw and busbw (docs/bandwidth.md); 0 for a barrier,
     * as compare's columns */
    fprintf(f, ",%.9g,%.9g", bw.algbw, bw.busbw);
    if (model && !isnan(*model))
        fprintf(f, ",%.15g,%.9g", *model, mo->form[0].seconds);
    else if (model)
        fputs(",,", f);
    fputc('\n', f);
}

/* ---- the points (par.h) --------------------------------------------------------- */

/* What the points need: the arguments, and on the side that runs them the
 * machine of the current point and its prepared collectives (made when the
 * point's machine changes: once per machine in the serial order), on the
 * side that writes the outputs and the figures' arrays. */
typedef struct sweep_ctx {
    sweep_args_t *a;
    int nr, ncombo, total;
    int cur_mi;                  /* the machine m is, -1: none */
    cs_machine_t *m;
    cs_request_coll_t *colls;    /* [ncombo] of machine cur_mi */
    cs_app_progress_t *progress;
    FILE *csv, *done_f, *json;   /* the outputs (NULL: not asked) */
    cs_app_out_t *out;
    int npoints_json, first_rc;
    double *ticks, *model;       /* [total] */
    char (*engines)[48];         /* [machine] */
} sweep_ctx_t;

static void sweep_drop_machine(sweep_ctx_t *c)
{
    for (int kj = 0; kj < c->ncombo; kj++)
        cs_request_coll_destroy(&c->colls[kj]);
    cs_machine_free(c->m);
    c->m = NULL;
    c->cur_mi = -1;
}

/* A record of a point that did not run: rc and the message; before: the
 * sweep stopped before it (the message names no point). */
static cs_rec_t *sweep_failed(int rc, const cs_error_t *err, int before)
{
    cs_rec_t *r = cs_rec_new();
    cs_rec_put_int(r, "rc", rc);
    cs_rec_put_str(r, "err", err->msg);
    if (before)
        cs_rec_put_int(r, "before", 1);
    return r;
}

/* Point `at` (machine, algorithm and rank count, size, in that nesting):
 * its CSV row, its run JSON (with --json), its finish, model and engine. */
static cs_rec_t *sweep_run(void *ctx, int at, int worker)
{
    sweep_ctx_t *c = ctx;
    sweep_args_t *a = c->a;
    cs_error_t err = {0};
    int rc, mi = at / (c->ncombo * a->nsizes), kj = at / a->nsizes % c->ncombo,
            i = at % a->nsizes, k = kj / c->nr;
    if ((rc = cs_app_check_interrupt(&err)))
        return sweep_failed(rc, &err, 1);
    if (c->cur_mi != mi) {
        sweep_drop_machine(c);
        if ((rc = cs_machine_new(a->specs[mi], &c->m, &err)))
            return sweep_failed(rc, &err, 1);
        c->cur_mi = mi;
        for (int j = 0; rc == CS_OK && j < c->ncombo; j++)
            rc = cs_sweep_prepare(&a->req, a->algos[j / c->nr],
                                  a->nranks ? a->ranks[j % c->nr] : 0, c->m, &c->colls[j],
                                  &err);
        if (rc) {
            sweep_drop_machine(c);
            return sweep_failed(rc, &err, 1);
        }
    }
    cs_request_coll_t *coll = &c->colls[kj];
    cs_exec_result_t res;
    int64_t bytes = a->sizes[i];
    char *json_buf = NULL, *row = NULL;
    size_t json_len = 0, row_len = 0;
    FILE *json = NULL;
    memset(&res, 0, sizeof res);
    if (!worker) {
        char detail[96], size[32];
        cs_units_format_bytes(bytes, size, sizeof size);
        snprintf(detail, sizeof detail, "%d/%d %s/%s %s, %d ranks", at + 1, c->total,
                 cs_coll_name(a->kind), a->algos[k]->name, size, coll->args.P);
        cs_app_progress_show(c->progress, (double)at / c->total, detail);
    }
    if (a->json && !(json = open_memstream(&json_buf, &json_len)))
        return sweep_failed(cs_error_set(&err, CS_ERR_OOM, "--json: cannot open a memory "
                                         "stream"), &err, 0);
    rc = cs_sweep_point(&a->req, c->m, coll, bytes, cs_app_cancel_flag(), json, 0, &res, &err);
    if (json)
        fclose(json);
    cs_rec_t *r = cs_rec_new();
    cs_rec_put_int(r, "rc", rc);
    cs_rec_put_int(r, "ranks", coll->args.P);
    if (rc)
        cs_rec_put_str(r, "err", err.msg);
    cs_model_t mo;
    cs_error_t none;
    double model = NAN;
    if (a->predict) { /* coll->args.bytes is this point's: sweep_point set it */
        model = cs_request_model(c->m, coll, &mo, &none) ? NAN : mo.form[0].ticks;
        cs_rec_put_real(r, "model", model);
    }
    if (rc == CS_OK) {
        cs_rec_put_int(r, "finish", (int64_t)res.finish);
        cs_rec_put_str(r, "engine", cs_net_engine_name(res.net));
        FILE *f = open_memstream(&row, &row_len);
        if (f) {
            sweep_csv_row(f, a, c->m, k, coll->args.P, bytes, &res, a->predict ? &model : NULL,
                          &mo);
            fclose(f);
            cs_rec_put(r, "csv", row, row_len);
        }
        if (json_buf)
            cs_rec_put(r, "json", json_buf, json_len);
    }
    free(row);
    free(json_buf);
    cs_exec_result_destroy(&res);
    return r;
}

/* Which points go to the workers first (par.h): machine by machine (a
 * worker keeps its machine while it can), within one the largest bytes
 * times ranks first. */
static double sweep_cost(void *ctx, int at)
{
    const sweep_ctx_t *c = ctx;
    const sweep_args_t *a = c->a;
    int mi = at / (c->ncombo * a->nsizes), kj = at / a->nsizes % c->ncombo;
    double P = a->nranks ? (double)a->ranks[kj % c->nr] : 1.0;
    /* bytes x ranks <= 2^74, about 2e22: machines apart by 1e25 */
    return (double)(a->nspecs - mi) * 1e25 + (double)a->sizes[at % a->nsizes] * P;
}

/* Point `at`'s record, in the serial order: its row to the CSV, its run
 * to the JSON, its numbers to the figure's arrays; a failure reported as
 * the serial sweep reports it. */
static int sweep_take(void *ctx, int at, const cs_rec_t *r, cs_error_t *err)
{
    sweep_ctx_t *c = ctx;
    sweep_args_t *a = c->a;
    int mi = at / (c->ncombo * a->nsizes), kj = at / a->nsizes % c->ncombo,
        i = at % a->nsizes, k = kj / c->nr;
    int rc = (int)cs_rec_int(r, "rc", CS_ERR_INTERNAL);
    size_t len = 0;
    const char *v;
    if (c->model)
        c->model[at] = cs_rec_real(r, "model", NAN);
    if (rc == CS_OK) {
        c->ticks[at] = (double)cs_rec_int(r, "finish", 0);
        if (!c->engines[mi][0]) /* the engine that ran, for the title */
            cs_rec_copy(r, "engine", c->engines[mi], sizeof c->engines[mi]);
        if (c->json && (v = cs_rec_get(r, "json", &len))) {
            if (c->npoints_json++)
                cs_sweep_json_next(c->json);
            fwrite(v, 1, len, c->json);
        }
        if (c->csv && (v = cs_rec_get(r, "csv", &len))) {
            fwrite(v, 1, len, c->csv);
            if (c->done_f)
                fwrite(v, 1, len, c->done_f);
            /* a full disk is found at the first row, not after the run; not
             * the point's fault: no --keep-going */
            if (c->out->o)
                return cs_outfile_check(c->out->o, err);
            if (fflush(c->csv) != 0 || ferror(c->csv))
                return cs_error_set(err, CS_ERR_IO, "--csv -: error writing to standard output");
        }
        return CS_OK;
    }
    char msg[CS_ERROR_MSG_MAX];
    cs_rec_copy(r, "err", msg, sizeof msg);
    cs_error_set(err, rc, "%s", msg);
    if (cs_rec_int(r, "before", 0))
        return rc;
    char size[32];
    cs_units_format_bytes(a->sizes[i], size, sizeof size);
    cs_error_prefix(err, "%s/%s at %s", cs_coll_name(a->kind), a->algos[k]->name, size);
    if (c->nr > 1)
        cs_error_prefix(err, "%d ranks", (int)cs_rec_int(r, "ranks", 0));
    if (a->nspecs > 1)
        cs_error_prefix(err, "%s", a->specs[mi]);
    if (!a->keep_going)
        return rc;
    cs_app_progress_done(c->progress);
    cs_app_report(err);
    if (c->first_rc == CS_OK)
        c->first_rc = rc;
    return CS_OK;
}

int cs_app_cmd_sweep(int argc, char **argv)
{
    return cs_app_sweep_main(argc, argv, NULL);
}

int cs_app_sweep_main(int argc, char **argv, const cs_shard_set_t *merged)
{
    sweep_args_t a;
    cs_error_t err = {0};
    cs_machine_t *m = NULL;
    cs_request_coll_t *colls = NULL;
    FILE *csv = NULL, *json = NULL;
    cs_app_out_t out = {0}, jout = {0};
    char *json_buf = NULL; /* the points' JSON, written whole at the end */
    size_t json_len = 0;
    /* the rows done, kept to print on stderr if a signal stops the sweep
     * (the CSV file itself is then not written: whole or absent) */
    char *done_rows = NULL;
    size_t done_len = 0;
    FILE *done_f = NULL;
    double *ticks = NULL; /* [machine][algo][ranks][size]; NaN for a point that failed */
    double *model = NULL; /* the same for --predict's model; NaN: none */
    int rc = CS_OK, total, nr, ncombo;
    int Ps[SWEEP_MAX_MACHINES][SWEEP_MAX_RANKS];
    double tick_s[SWEEP_MAX_MACHINES];
    char engines[SWEEP_MAX_MACHINES][48], shorts[SWEEP_MAX_MACHINES][96];
    cs_app_progress_t progress;
    cs_par_t par;

    cs_par_args("sweep", &argc, argv, CS_PAR_SHARD, &par);
    cs_par_set_merged(&par, merged);
    sweep_parse_args(argc, argv, &a);
    nr = a.nranks ? a.nranks : 1;
    ncombo = a.nalgos * nr;
    total = a.nspecs * ncombo * a.nsizes;
    colls = cs_calloc((size_t)ncombo, sizeof *colls);
    ticks = cs_malloc((size_t)total * sizeof *ticks);
    for (int i = 0; i < total; i++)
        ticks[i] = NAN;
    if (a.predict) {
        model = cs_malloc((size_t)total * sizeof *model);
        for (int i = 0; i < total; i++)
            model[i] = NAN;
    }
    memset(engines, 0, sizeof engines);
    memset(shorts, 0, sizeof shorts);

    /* the request's size is the first: each point sets its own */
    a.req.bytes_text = a.bytes_text;
    a.req.bytes = a.sizes[0];
    /* several machines, like for like: the most ranks that every one holds */
    if (a.nspecs > 1 && !a.nranks) {
        int64_t P = cs_compare_common_ranks(a.specs, a.nspecs, NULL, NULL);
        if (P > 0) {
            a.ranks[0] = P;
            a.nranks = 1;
        }
    }
    /* every machine is made and prepared before the first run: a wrong spec,
     * --ranks or --order on the last machine never costs a sweep */
    for (int mi = 0; rc == CS_OK && mi < a.nspecs; mi++) {
        rc = cs_machine_new(a.specs[mi], &m, &err);
        for (int kj = 0; rc == CS_OK && kj < ncombo; kj++) {
            rc = cs_sweep_prepare(&a.req, a.algos[kj / nr], a.nranks ? a.ranks[kj % nr] : 0, m,
                                  &colls[kj], &err);
            Ps[mi][kj % nr] = colls[kj].args.P;
        }
        if (rc == CS_OK) {
            tick_s[mi] = m->tick_seconds;
            cs_figures_machine_short(m, shorts[mi], sizeof shorts[mi]);
        }
        for (int kj = 0; kj < ncombo; kj++)
            cs_request_coll_destroy(&colls[kj]);
        cs_machine_free(m);
        m = NULL;
        if (rc && a.nspecs > 1 && !strstr(err.msg, a.specs[mi]))
            cs_error_prefix(&err, "%s", a.specs[mi]);
    }
    cs_app_progress_init(&progress, "sweep");
    progress.quiet = a.quiet;
    sweep_ctx_t ctx = {&a, nr, ncombo, total, -1, NULL, colls, &progress, NULL, NULL, NULL,
                       &out, 0, CS_OK, ticks, model, engines};
    cs_par_ops_t ops = {.run = sweep_run, .take = sweep_take, .ctx = &ctx, .cost = sweep_cost,
                        .stop_on_failure = !a.keep_going};
    /* a shard run or an MPI rank other than 0: the points, and no output */
    if (rc == CS_OK && !cs_par_writes(&par)) {
        rc = cs_par_run(&par, &ops, total, &progress, &err);
        cs_app_progress_done(&progress);
        goto done;
    }
    /* asked before the runs rather than found out after them; nothing is
     * created (a failed sweep leaves no empty figure behind) */
    if (rc == CS_OK && a.plot)
        rc = cs_app_check_writable("--plot", a.plot, &err);
    if (rc == CS_OK && a.csv) {
        if ((rc = cs_app_out_open("--csv", a.csv, &out, &err)) == CS_OK) {
            csv = out.f;
            done_f = open_memstream(&done_rows, &done_len);
        }
        if (csv)
            fprintf(csv, "machine,coll,algo,bytes,ranks,ticks,seconds,events,"
                    "algbw_bytes_per_s,busbw_bytes_per_s%s\n",
                    a.predict ? ",model_ticks,model_seconds" : "");
    }
    if (rc == CS_OK && a.json) {
        if ((rc = cs_app_check_writable("--json", a.json, &err)) == CS_OK &&
            !(json = open_memstream(&json_buf, &json_len)))
            rc = cs_error_set(&err, CS_ERR_OOM, "--json: cannot open a memory stream");
        if (json)
            cs_sweep_json_begin_machines(json, a.specs, a.nspecs, cs_coll_name(a.kind));
    }
    ctx.csv = csv;
    ctx.done_f = done_f;
    ctx.json = json;
    if (rc == CS_OK)
        rc = cs_par_run(&par, &ops, total, &progress, &err);
    sweep_drop_machine(&ctx);
    cs_app_progress_done(&progress);
    if (csv)
        rc = cs_app_out_close(&out, rc, &err);
    if (done_f) {
        fclose(done_f);
        if (rc == CS_ERR_CANCELLED && strcmp(a.csv, "-") != 0 && done_len > 0)
            fprintf(stderr, "collsim: sweep interrupted: --csv %s not written; the rows done:\n%s",
                    a.csv, done_rows);
        free(done_rows);
    }
    if (json) {
        cs_sweep_json_end(json);
        long end = ftell(json);
        fclose(json);
        if (rc == CS_OK && (rc = cs_app_out_open("--json", a.json, &jout, &err)) == CS_OK) {
            fwrite(json_buf, 1, end > 0 ? (size_t)end : 0, jout.f);
            rc = cs_app_out_close(&jout, rc, &err);
        }
        free(json_buf);
    }
    int nccl_listed = 0;
    for (int k = 0; k < a.nalgos; k++)
        nccl_listed |= !strcmp(a.algos[k]->name, "nccl");
    if (rc == CS_OK && (a.plot || nccl_listed))
        rc = sweep_write_plot(&a, nr, Ps, tick_s, (const char(*)[48])engines,
                              (const char(*)[96])shorts, ticks, model, &err);
    if (rc == CS_OK) {
        /* every file written is named (docs/cli.md: "wrote FILE"); on
         * standard error, which carries no data, unless --quiet */
        cs_app_wrote(&progress, a.csv, "CSV");
        cs_app_wrote(&progress, a.json, "JSON");
        cs_app_wrote(&progress, a.plot, "plot");
    }
done:
    sweep_drop_machine(&ctx);
    if (rc != CS_OK)
        cs_app_report(&err);
    else
        rc = ctx.first_rc;

    free(colls);
    free(ticks);
    free(model);
    cs_machine_free(m);
    for (int k = 0; k < a.nalgos; k++)
        cs_algofile_free(a.algo_files[k]);
    cs_par_destroy(&par);
    return rc;
}
