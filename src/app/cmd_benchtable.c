/*
 * cmd_benchtable.c - `collsim bench-table`: one algorithm of a collective
 * on one machine over a range of sizes, printed in the exact table layout
 * of nccl-tests or of the OSU micro-benchmarks (io/benchtable.h), so that
 * simulated curves drop into the scripts people already have for measured
 * ones (docs/bandwidth.md).
 *
 * A command of its own rather than a format of `collsim sweep`: a table of
 * those tools is one collective, one algorithm and one communicator size
 * per run, with the tool's own columns and validation semantics (a wrong
 * result is a row with #wrong, and the run goes on), while a sweep crosses
 * algorithms and rank counts into CSV, JSON and plots.  The sizes take
 * sweep's syntax (8..128MiB:x2 is nccl-tests' -b 8 -e 128M -f 2).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/benchtable.h"
#include "api/sizes.h"
#include "api/sweep.h"
#include "app/app.h"
#include "coll/coll.h"
#include "io/algofile.h"
#include "io/benchtable.h"

typedef struct bt_args {
    cs_request_t req;      /* machine, collective, algorithm, order, root, mode, --opt */
    const char *bytes_text;
    const char *format;
    int64_t ranks;         /* 0: every node */
    int validate, full, single, looped; /* looped: a loop option was given */
    int64_t sizes[CS_SIZES_MAX];
    int nsizes;
} bt_args_t;

static void bt_help(void)
{
    printf("Usage: collsim bench-table --machine SPEC --coll NAME [--algo NAME] --bytes SIZES\n"
           "                           [--format nccl|osu] [OPTIONS]\n"
           "\n"
           "Runs one algorithm of a collective at every size and prints the table that\n"
           "nccl-tests (all_reduce_perf, ...) or the OSU micro-benchmarks (osu_allreduce,\n"
           "...) print, column for column, with simulated times (docs/bandwidth.md).\n"
           "\n"
           "  -m, --machine SPEC     machine, e.g. alphabeta:topo=ring,p=8\n"
           "      --coll NAME        the collective\n"
           "      --algo NAME        the algorithm (default: the collective's default)\n"
           "  -b, --bytes SIZES      sizes as 'collsim run --bytes' means them (per-rank block\n"
           "                         for allgather, reduce-scatter, alltoall, gather,\n"
           "                         scatter), in sweep's syntax: 8..128MiB:x2 is nccl-tests'\n"
           "                         -b 8 -e 128M -f 2; the table's size column is the tool's\n"
           "  -f, --format FORMAT    nccl (default): size count type redop root, then time\n"
           "                         algbw busbw #wrong out-of-place and in-place; osu:\n"
           "                         # Size  Avg Latency(us)\n"
           "      --full             osu: also Min Latency(us), Max Latency(us), Iterations\n"
           "                         (OSU's -f)\n"
           "      --validate         check each size's data on one call, as nccl-tests does\n"
           "                         after its loop: nccl's #wrong counts wrong float\n"
           "                         elements (N/A without), osu adds Validation (Pass/Fail,\n"
           "                         OSU's -c); a wrong row exits 4 at the end\n"
           "\n"
           "The loop (docs/loops.md): by default the tool's own, nccl-tests' 5 warm-up and\n"
           "20 timed iterations back to back, or OSU's 100 + 1,000 up to 8 KiB and 10 + 100\n"
           "above with a barrier between; 'collsim run' takes the same options:\n"
           "      --iterations N|default, --warmup W, --between none|barrier[:ALGO],\n"
           "      --loop nccl-tests|osu\n"
           "      --single           one call instead of a loop\n"
           "\n"
           "      --root R           root rank of rooted collectives (default 0)\n"
           "      --ranks P          ranks (default: every node)\n"
           "      --order ORDER      placement, as for 'collsim run'\n"
           "      --opt KEY=VALUE    an algorithm option (repeatable)\n"
           "  -M, --mode MODE        network fidelity: packet (default) or fluid\n"
           "      --force            run a packet-mode run above the work limit\n"
           "  -h, --help             show this help and exit\n"
           "\n"
           "nccl's time is the loop's average iteration (the timed loop / iterations, as\n"
           "nccl-tests); osu's Avg/Min/Max are over the timed iterations (with --single,\n"
           "over the ranks' finishes of the one call).  collsim has no buffers: the in-place\n"
           "columns repeat the out-of-place ones.\n"
           "Exit status: 0 ok, 2 usage or input error, 3 deadlock, 4 a wrong row.\n");
}

static void bt_parse_args(int argc, char **argv, bt_args_t *a)
{
    enum { OPT_FULL = 256, OPT_SINGLE };
    static const struct option longopts[] = {
        {"machine", required_argument, NULL, 'm'},
        {"coll", required_argument, NULL, CS_APP_OPT_COLL},
        {"algo", required_argument, NULL, CS_APP_OPT_ALGO},
        {"bytes", required_argument, NULL, 'b'},
        {"format", required_argument, NULL, 'f'},
        {"full", no_argument, NULL, OPT_FULL},
        {"single", no_argument, NULL, OPT_SINGLE},
        {"iterations", required_argument, NULL, CS_APP_OPT_ITERATIONS},
        {"warmup", required_argument, NULL, CS_APP_OPT_WARMUP},
        {"between", required_argument, NULL, CS_APP_OPT_BETWEEN},
        {"loop", required_argument, NULL, CS_APP_OPT_LOOP},
        {"validate", no_argument, NULL, CS_APP_OPT_VALIDATE},
        {"root", required_argument, NULL, CS_APP_OPT_ROOT},
        {"ranks", required_argument, NULL, CS_APP_OPT_RANKS},
        {"order", required_argument, NULL, CS_APP_OPT_ORDER},
        {"opt", required_argument, NULL, CS_APP_OPT_OPT},
        {"mode", required_argument, NULL, 'M'},
        {"force", no_argument, NULL, CS_APP_OPT_FORCE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    cs_error_t err = {0};
    const cs_benchtable_format_t *fmt;
    cs_coll_kind_t kind;
    int c;

    memset(a, 0, sizeof *a);
    cs_request_init(&a->req);
    a->format = "nccl";
    while ((c = getopt_long(argc, argv, ":m:b:f:M:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'b': a->bytes_text = optarg; break;
        case 'f': a->format = optarg; break;
        case OPT_FULL: a->full = 1; break;
        case OPT_SINGLE: a->single = 1; break;
        case CS_APP_OPT_ITERATIONS:
        case CS_APP_OPT_WARMUP:
        case CS_APP_OPT_BETWEEN:
        case CS_APP_OPT_LOOP:
            cs_app_option("bench-table", &a->req, c, argv, longopts);
            a->looped = 1;
            break;
        case 'h': bt_help(); exit(0);
        default: cs_app_option("bench-table", &a->req, c, argv, longopts);
        }
    }
    cs_app_no_operands("bench-table", argc, argv);
    a->validate = a->req.validate;
    a->ranks = a->req.ranks;
    if (!a->req.machine)
        cs_app_usage_error("bench-table", "missing --machine SPEC");
    if (!a->req.coll)
        cs_app_usage_error("bench-table", "missing --coll NAME");
    if (cs_coll_parse(a->req.coll, &kind, &err) != CS_OK)
        cs_app_usage_error("bench-table", "--coll: %s", err.msg);
    if (cs_benchtable_find(a->format, &fmt, &err) != CS_OK)
        cs_app_usage_error("bench-table", "--format: %s", err.msg);
    if (a->single && a->looped)
        cs_app_usage_error("bench-table", "--single runs one call: it excludes --iterations, "
                           "--warmup, --between and --loop");
    /* the tool's own loop unless told otherwise */
    if (!a->single && !a->looped) {
        int osu = !strcmp(a->format, "osu");
        cs_request_set(&a->req, "loop", osu ? "osu" : "nccl-tests", &err);
        if (osu)
            cs_request_set(&a->req, "between", "barrier", &err);
    }
    if (a->full && strcmp(a->format, "osu"))
        cs_app_usage_error("bench-table", "--full is OSU's -f; it needs --format osu");
    if (!a->bytes_text && kind != CS_COLL_BARRIER)
        cs_app_usage_error("bench-table", "missing --bytes SIZES (e.g. 8..1MiB:x2)");
    if (!a->bytes_text) {
        a->sizes[0] = 0;
        a->nsizes = 1;
    } else if (cs_sizes_parse(a->bytes_text, a->sizes, &a->nsizes, &err) != CS_OK) {
        cs_app_usage_error("bench-table", "--bytes '%s': %s", a->bytes_text, err.msg);
    } else if (a->nsizes == 0) {
        cs_app_usage_error("bench-table", "--bytes '%s': no sizes", a->bytes_text);
    }
}

int cs_app_cmd_benchtable(int argc, char **argv)
{
    bt_args_t a;
    cs_error_t err = {0};
    cs_machine_t *m = NULL;
    cs_request_coll_t coll;
    const cs_coll_algo_t *algo = NULL;
    cs_coll_algo_t *algo_file = NULL;
    const cs_benchtable_format_t *fmt = NULL;
    cs_benchtable_point_t *pts = NULL;
    cs_benchtable_info_t info;
    int rc, n = 0, wrong = 0;

    bt_parse_args(argc, argv, &a);
    memset(&coll, 0, sizeof coll);
    memset(&info, 0, sizeof info);
    cs_benchtable_find(a.format, &fmt, &err); /* checked by the parser */
    a.req.bytes_text = a.bytes_text; /* NULL for a barrier without --bytes */
    a.req.bytes = a.sizes[0];
    rc = cs_machine_new(a.req.machine, &m, &err);
    if (rc == CS_OK) {
        cs_coll_kind_t kind;
        cs_coll_parse(a.req.coll, &kind, &err);
        if ((rc = cs_request_find_algo(kind, a.req.algo, NULL, &algo, &algo_file, &err)))
            cs_error_prefix(&err, "--algo");
    }
    /* an option the algorithm does not take, named before any run */
    if (rc == CS_OK)
        rc = cs_sweep_check_opts(a.req.opts, a.req.nopts, &algo, 1, 0, &err);
    if (rc == CS_OK)
        rc = cs_sweep_prepare(&a.req, algo, a.ranks, m, &coll, &err);
    if (rc == CS_OK) {
        info = (cs_benchtable_info_t){.kind = coll.args.kind, .P = coll.args.P,
                                      .root = coll.args.root, .machine = m->spec,
                                      .algo = algo->name, .validate = a.validate,
                                      .full = a.full, .sizes = a.sizes, .nsizes = a.nsizes,
                                      .iterations = 1};
        rc = fmt->check(&info, &err);
    }
    if (rc == CS_OK)
        pts = cs_calloc((size_t)a.nsizes, sizeof *pts);
    for (int i = 0; rc == CS_OK && i < a.nsizes; i++) {
        const char *engine = NULL;
        if ((rc = cs_app_check_interrupt(&err)))
            break;
        rc = cs_benchtable_point_run(&a.req, m, &coll, a.sizes[i], a.validate,
                                     cs_app_cancel_flag(), &pts[i], &engine, &err);
        if (rc != CS_OK)
            break;
        if (i == 0) { /* the engine and the loop's counts are known after the first run */
            info.engine = engine;
            info.warmup = pts[0].warmup;
            info.iterations = pts[0].iterations;
            fmt->header(stdout, &info);
        }
        fmt->row(stdout, &info, &pts[i]);
        fflush(stdout); /* rows as they come, as the tools print them */
        wrong |= pts[i].wrong_bytes > 0;
        n++;
    }
    if (rc == CS_OK)
        fmt->footer(stdout, &info, pts, n);
    if (rc == CS_OK && fflush(stdout) != 0)
        rc = cs_error_set(&err, CS_ERR_IO, "error writing to standard output");
    if (rc == CS_OK && wrong)
        rc = cs_error_set(&err, CS_ERR_VALIDATE, "bench-table: %s/%s gave wrong data (rows "
                          "with #wrong > 0 or Fail); 'collsim run --validate' at that size "
                          "says where", cs_coll_name(coll.args.kind), algo->name);
    if (rc != CS_OK)
        cs_app_report(&err);
    free(pts);
    cs_request_coll_destroy(&coll);
    cs_algofile_free(algo_file);
    cs_machine_free(m);
    return rc;
}
